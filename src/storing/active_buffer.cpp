// Blocks are copied out of the shared heap and their ranges released in one call. A spill file
// is written, mapped read-only and unlinked at once: it disappears with the process whatever
// happens, and the store reads it through the mapping like any other block.
#include "storing/active_buffer.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.hpp"
#include "common/log.hpp"

namespace sidecore::storing {

active_buffer::active_buffer(const config::architecture& arch, std::string tag,
                             release_function release)
    : m_limit(arch.server_memory),
      m_spill_directory(arch.spill_directory),
      m_tag(std::move(tag)),
      m_release(std::move(release)) {}

std::uint64_t active_buffer::take(int iteration, std::vector<stored_block>& blocks, bool rescue) {
  std::vector<stored_block*> shared;
  std::uint64_t bytes = 0;
  for (stored_block& b : blocks) {
    if (!b.shared.bytes) continue;
    shared.push_back(&b);
    bytes += b.view.bytes;
  }
  if (shared.empty()) return 0;
  std::uint64_t freed = 0;
  if (rescue || *m_in_memory + bytes <= m_limit) {
    freed = to_memory(shared);
  } else if (!m_spill_directory.empty()) {
    freed = to_spill_file(iteration, shared);
  }
  return freed;
}

std::uint64_t active_buffer::to_memory(std::vector<stored_block*>& blocks) {
  std::vector<memory::heap_extent> ranges;
  std::uint64_t freed = 0;
  for (stored_block* b : blocks) {
    const std::uint64_t bytes = b->view.bytes;
    std::shared_ptr<std::uint64_t> in_memory = m_in_memory;
    block_buffer buffer = buffer_pool::acquire(bytes);
    std::byte* copy = buffer.get();
    std::memcpy(copy, b->view.data, bytes);
    *in_memory += bytes;
    b->keep_alive = std::shared_ptr<const void>(
        buffer.release(), [give_back = buffer.get_deleter(), in_memory, bytes](const void* p) {
          give_back(static_cast<std::byte*>(const_cast<void*>(p)));
          *in_memory -= bytes;
        });
    b->view.data = copy;
    ranges.push_back(b->shared);
    freed += b->shared.bytes;
    b->shared = {0, 0};
    m_counters.bytes_buffered += bytes;
    m_counters.memory_high_water = std::max(m_counters.memory_high_water, *m_in_memory);
  }
  m_release(ranges);
  return freed;
}

std::uint64_t active_buffer::to_spill_file(int iteration, std::vector<stored_block*>& blocks) {
  std::string path = m_spill_directory + "/sidecore-spill-" + m_tag + "-it" +
                     std::to_string(iteration) + "-XXXXXX";
  int fd = ::mkstemp(path.data());
  if (fd < 0) {
    // A full or unwritable directory stays so: said once per cause.
    log::warning_once("cannot create a spill file in '", m_spill_directory,
                      "': ", std::strerror(errno),
                      "; iterations that cannot be spilled stay in the shared buffer");
    return 0;
  }
  ::unlink(path.c_str());
  std::uint64_t total = 0;
  std::vector<std::uint64_t> offsets;
  bool ok = true;
  for (stored_block* b : blocks) {
    offsets.push_back(total);
    const auto* data = static_cast<const char*>(b->view.data);
    std::uint64_t done = 0;
    while (ok && done < b->view.bytes) {
      ssize_t n = ::pwrite(fd, data + done, b->view.bytes - done, static_cast<off_t>(total + done));
      if (n <= 0)
        ok = false;
      else
        done += static_cast<std::uint64_t>(n);
    }
    total += b->view.bytes;
  }
  void* map = ok && total ? ::mmap(nullptr, total, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
  int err = errno;
  ::close(fd);
  if (map == MAP_FAILED) {
    log::warning_once("spilling to '", m_spill_directory, "' failed (", std::strerror(err),
                      "); iterations that cannot be spilled stay in the shared buffer");
    return 0;
  }
  std::shared_ptr<const void> mapping(
      map, [total](const void* p) { ::munmap(const_cast<void*>(p), total); });
  std::vector<memory::heap_extent> ranges;
  std::uint64_t freed = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    stored_block* b = blocks[i];
    b->view.data = static_cast<const std::byte*>(map) + offsets[i];
    b->keep_alive = mapping;
    ranges.push_back(b->shared);
    freed += b->shared.bytes;
    b->shared = {0, 0};
  }
  m_release(ranges);
  m_counters.bytes_spilled += total;
  ++m_counters.spill_files;
  log::debug("iteration ", iteration, ": ", total, " bytes spilled to ", m_spill_directory);
  return freed;
}

}  // namespace sidecore::storing
