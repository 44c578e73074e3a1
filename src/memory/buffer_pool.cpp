// Best-fit reuse among kept buffers, with bounded waste; the pool is immortal so that buffers
// released during static destruction still find it. The arena is a private mapping managed by
// the same allocator as the shared heap; the write path reaches it without the pool's mutex.
#include "memory/buffer_pool.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/error.hpp"
#include "common/hot_path.hpp"
#include "common/quiet_thread.hpp"
#include "common/units.hpp"
#include "common/waiting.hpp"
#include "memory/shared_heap.hpp"

namespace sidecore {
namespace {

struct pool_state {
  std::mutex mutex;
  std::multimap<std::size_t, std::byte*> kept;  // by capacity
  std::uint64_t kept_bytes = 0;
  std::uint64_t limit = 0;
  // Arena: [heap state][heap], one mapping, published once its heap is initialized.
  // Acquisitions read it without the mutex: each counts itself in arena_users before loading
  // the pointer, and trim() unpublishes the arena, waits for the count to drop, and only then
  // decides whether to unmap it (both sides sequentially consistent: either an acquisition
  // sees no arena, or trim sees it and waits for it).
  std::atomic<std::byte*> arena{nullptr};
  std::atomic<std::uint32_t> arena_users{0};
  std::size_t arena_bytes = 0;  // under mutex
  // Maps the arena's warm part once warm_arena is called (see there); stopped and joined
  // before the arena is unmapped. Under mutex, as warm_bytes: what it is to map, not started yet.
  std::thread warmer;
  std::size_t warm_bytes = 0;
  std::atomic<bool> stop_warming{false};
};

constexpr std::uint32_t arena_extents = 4096;

// Bytes of the arena's allocator state, before its heap: whole pages.
std::size_t arena_state_bytes() {
  constexpr std::size_t page = 4096;
  return (memory::shared_heap::state_bytes(arena_extents) + page - 1) / page * page;
}

// Maps [p, p + bytes) of a private anonymous mapping, writable, without changing its content.
void populate(std::byte* p, std::size_t bytes) noexcept {
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
  if (bytes == 0 || ::madvise(p, bytes, MADV_POPULATE_WRITE) == 0) return;
  // Kernels before 5.14: an atomic add of zero writes each page without changing it, even
  // when a block is being written there at the same time.
  for (std::size_t at = 0; at < bytes; at += 4096)
    reinterpret_cast<std::atomic<unsigned char>*>(p + at)->fetch_add(0, std::memory_order_relaxed);
}

SIDECORE_HOT_PATH pool_state& state() {
  static pool_state* s = new pool_state;  // never destroyed: see the file comment
  return *s;
}

// Counts an acquisition as a user of the arena for its lifetime.
class arena_use {
 public:
  explicit arena_use(pool_state& s) noexcept : m_state(s) {
    m_state.arena_users.fetch_add(1, std::memory_order_seq_cst);
  }
  ~arena_use() { m_state.arena_users.fetch_sub(1, std::memory_order_release); }
  arena_use(const arena_use&) = delete;
  arena_use& operator=(const arena_use&) = delete;

 private:
  pool_state& m_state;
};

}  // namespace

void pooled_deleter::operator()(std::byte* p) const noexcept {
  if (!p) return;
  if (arena) {
    try {
      memory::shared_heap(arena).release(static_cast<std::uint64_t>(p - arena), capacity);
    } catch (...) {
    }
    return;
  }
  pool_state& s = state();
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

SIDECORE_HOT_PATH block_buffer acquire(std::uint64_t bytes) {
  const std::size_t wanted = bytes ? static_cast<std::size_t>(bytes) : 1;
  pool_state& s = state();
  if (s.arena.load(std::memory_order_relaxed)) {  // without an arena, nothing more to pay
    arena_use use(s);
    if (std::byte* base = s.arena.load(std::memory_order_seq_cst)) {
      memory::shared_heap heap(base);
      if (wanted <= heap.capacity()) {
        if (auto offset = heap.try_allocate(wanted))
          return block_buffer(base + *offset, pooled_deleter{wanted, base});
      }
    }
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

void reserve_arena(std::uint64_t bytes, std::uint64_t warm_bytes) {
  pool_state& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.arena.load(std::memory_order_relaxed) || bytes == 0) return;
  const std::size_t page = 4096;
  const std::size_t state_bytes = arena_state_bytes();
  const std::size_t heap_bytes = (bytes + page - 1) / page * page;
  void* p = ::mmap(nullptr, state_bytes + heap_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw allocation_error("cannot map " + readable_bytes(heap_bytes) +
                           " of process memory for the buffer: " + std::strerror(errno) +
                           "; lower <buffer size=...>");
  auto* base = static_cast<std::byte*>(p);
  populate(base, state_bytes);  // the allocator's state, written at once
  try {
    memory::shared_heap::initialize(base, state_bytes, heap_bytes, arena_extents);
  } catch (...) {
    ::munmap(p, state_bytes + heap_bytes);
    throw;
  }
  s.arena_bytes = state_bytes + heap_bytes;
  s.arena.store(base, std::memory_order_seq_cst);
  // The first blocks' pages are mapped on a background thread once start-up is done
  // (warm_arena).
  s.warm_bytes = std::min<std::uint64_t>(heap_bytes, warm_bytes);
}

void warm_arena() {
  pool_state& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::byte* base = s.arena.load(std::memory_order_relaxed);
  if (!base || s.warm_bytes == 0 || s.warmer.joinable()) return;
  const std::size_t warm = s.warm_bytes;
  s.warm_bytes = 0;
  // Populating changes no byte: a block written meanwhile is safe, and its own faults map the
  // pages the thread has not reached yet.
  s.stop_warming.store(false, std::memory_order_relaxed);
  // It goes from the warm part's end back: a first write that comes before it is done faults
  // its pages from the start and meets it halfway, instead of racing it over the same pages.
  s.warmer = start_quiet_thread([&s, heap = base + arena_state_bytes(), warm] {
    // Small steps: populating holds the process's memory-map lock (for reading), which the
    // application's own mmap and munmap (a large malloc) wait for; 256 KiB takes about 0.1 ms.
    constexpr std::size_t step = 256u << 10;
    for (std::size_t end = warm; end > 0 && !s.stop_warming.load(std::memory_order_relaxed);) {
      const std::size_t n = std::min(step, end);
      end -= n;
      populate(heap + end, n);
    }
  });
}

void trim() noexcept {
  pool_state& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (auto& [capacity, p] : s.kept) delete[] p;
  s.kept.clear();
  s.kept_bytes = 0;
  std::byte* base = s.arena.load(std::memory_order_relaxed);
  if (!base) return;
  try {
    if (memory::shared_heap(base).used() != 0) return;
    // Unpublished first, so that no acquisition starts using it; then those under way end.
    s.arena.store(nullptr, std::memory_order_seq_cst);
    waiter leaving(paces::arena_users);
    while (s.arena_users.load(std::memory_order_seq_cst) != 0) leaving.nap();
    if (memory::shared_heap(base).used() != 0) {
      s.arena.store(base, std::memory_order_seq_cst);  // one got a buffer meanwhile
      return;
    }
  } catch (...) {
    return;  // the arena's lock failed: leave it mapped
  }
  s.stop_warming.store(true, std::memory_order_relaxed);
  if (s.warmer.joinable()) s.warmer.join();
  s.warm_bytes = 0;
  ::munmap(base, s.arena_bytes);
  s.arena_bytes = 0;
}

}  // namespace buffer_pool
}  // namespace sidecore
