// Best-fit reuse among kept buffers, with bounded waste; the pool is immortal so that buffers
// released during static destruction still find it. The arena is a private mapping managed by
// the same allocator as the shared heap.
#include "transport/buffer_pool.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "common/units.hpp"
#include "transport/shared_heap.hpp"

namespace sidecore {
namespace {

struct pool_state {
  std::mutex mutex;
  std::multimap<std::size_t, std::byte*> kept;  // by capacity
  std::uint64_t kept_bytes = 0;
  std::uint64_t limit = 0;
  // Arena: [heap state][heap], one mapping.
  std::byte* arena = nullptr;
  std::size_t arena_bytes = 0;
  std::optional<transport::shared_heap> arena_heap;
};

constexpr std::uint32_t arena_extents = 4096;

pool_state& state() {
  static pool_state* s = new pool_state;  // never destroyed: see the file comment
  return *s;
}

}  // namespace

void pooled_deleter::operator()(std::byte* p) const noexcept {
  if (!p) return;
  pool_state& s = state();
  if (in_arena) {
    try {
      s.arena_heap->release(static_cast<std::uint64_t>(p - s.arena), capacity);
    } catch (...) {
    }
    return;
  }
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.kept_bytes + capacity <= s.limit) {
      try {
        s.kept.emplace(capacity, p);
        s.kept_bytes += capacity;
        return;
      } catch (...) {
      }
    }
  }
  delete[] p;
}

namespace buffer_pool {

block_buffer acquire(std::uint64_t bytes) {
  const std::size_t wanted = bytes ? static_cast<std::size_t>(bytes) : 1;
  pool_state& s = state();
  if (s.arena_heap && wanted <= s.arena_heap->capacity()) {
    if (auto offset = s.arena_heap->try_allocate(wanted))
      return block_buffer(s.arena + *offset, pooled_deleter{wanted, true});
  }
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.kept.lower_bound(wanted);
    // Reuse only when little is wasted; a much larger buffer stays for a larger block.
    if (it != s.kept.end() && it->first <= wanted + wanted / 4 + 4096) {
      const std::size_t capacity = it->first;
      std::byte* p = it->second;
      s.kept.erase(it);
      s.kept_bytes -= capacity;
      return block_buffer(p, pooled_deleter{capacity});
    }
  }
  return block_buffer(new std::byte[wanted], pooled_deleter{wanted});
}

void set_capacity(std::uint64_t bytes) {
  pool_state& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.limit = bytes;
}

std::uint64_t kept_bytes() {
  pool_state& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.kept_bytes;
}

void reserve_arena(std::uint64_t bytes) {
  pool_state& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.arena || bytes == 0) return;
  const std::size_t page = 4096;
  const std::size_t state_bytes =
      (transport::shared_heap::state_bytes(arena_extents) + page - 1) / page * page;
  const std::size_t heap_bytes = (bytes + page - 1) / page * page;
  void* p = ::mmap(nullptr, state_bytes + heap_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED)
    throw allocation_error("cannot map " + readable_bytes(heap_bytes) + " of process memory for the buffer: " +
                           std::strerror(errno) + "; lower <buffer size=...>");
  s.arena = static_cast<std::byte*>(p);
  s.arena_bytes = state_bytes + heap_bytes;
  transport::shared_heap::initialize(s.arena, state_bytes, heap_bytes, arena_extents);
  s.arena_heap.emplace(s.arena);
}

void trim() noexcept {
  pool_state& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (auto& [capacity, p] : s.kept) delete[] p;
  s.kept.clear();
  s.kept_bytes = 0;
  if (s.arena && s.arena_heap->used() == 0) {
    s.arena_heap.reset();
    ::munmap(s.arena, s.arena_bytes);
    s.arena = nullptr;
    s.arena_bytes = 0;
  }
}

}  // namespace buffer_pool
}  // namespace sidecore
