// First-fit allocation with coalescing over a sorted array of free ranges. Blocks are freed
// roughly in allocation order (iteration by iteration), so the array stays short.
#include "transport/shared_heap.hpp"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <new>
#include <string>

#include "common/error.hpp"
#include "common/units.hpp"

namespace sidecore::transport {
namespace {

// Locks the robust mutex; if a process died holding it, the state is still consistent at
// every point where a lock can be lost (no multi-step invariant is left half done across a
// crash other than a leaked range), so mark it consistent and go on.
class heap_lock {
 public:
  explicit heap_lock(pthread_mutex_t* m) : m_mutex(m) {
    int rc = pthread_mutex_lock(m_mutex);
    if (rc == EOWNERDEAD) pthread_mutex_consistent(m_mutex);
    else if (rc != 0) throw allocation_error(std::string("shared heap lock failed: ") + std::strerror(rc));
  }
  ~heap_lock() { pthread_mutex_unlock(m_mutex); }
  heap_lock(const heap_lock&) = delete;
  heap_lock& operator=(const heap_lock&) = delete;

 private:
  pthread_mutex_t* m_mutex;
};

}  // namespace

std::size_t shared_heap::state_bytes(std::uint32_t extents) noexcept {
  return sizeof(heap_state) + static_cast<std::size_t>(extents) * sizeof(heap_extent);
}

void shared_heap::initialize(void* memory, std::uint64_t heap_offset, std::uint64_t heap_size,
                             std::uint32_t extents) {
  auto* state = new (memory) heap_state{};
  pthread_mutexattr_t mattr;
  pthread_mutexattr_init(&mattr);
  pthread_mutexattr_setpshared(&mattr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&mattr, PTHREAD_MUTEX_ROBUST);
  int rc = pthread_mutex_init(&state->mutex, &mattr);
  pthread_mutexattr_destroy(&mattr);
  if (rc != 0) throw allocation_error(std::string("pthread_mutex_init: ") + std::strerror(rc));
  pthread_condattr_t cattr;
  pthread_condattr_init(&cattr);
  pthread_condattr_setpshared(&cattr, PTHREAD_PROCESS_SHARED);
  pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
  rc = pthread_cond_init(&state->space_freed, &cattr);
  pthread_condattr_destroy(&cattr);
  if (rc != 0) throw allocation_error(std::string("pthread_cond_init: ") + std::strerror(rc));
  state->heap_offset = heap_offset;
  state->heap_size = heap_size / heap_alignment * heap_alignment;
  state->extent_capacity = extents;
  state->extent_count = 1;
  auto* list = reinterpret_cast<heap_extent*>(state + 1);
  list[0] = {heap_offset, state->heap_size};
}

void shared_heap::check_fits(std::uint64_t bytes) const {
  if (rounded(bytes) > m_state->heap_size)
    throw block_never_fits(bytes, m_state->heap_size, "a dedicated core's shared buffer");
}

std::optional<std::uint64_t> shared_heap::take_locked(std::uint64_t bytes,
                                                      std::uint64_t hint) noexcept {
  heap_extent* list = extents();
  const std::uint32_t count = m_state->extent_count;
  if (count == 0) return std::nullopt;
  // First free range that ends after the hint; the search wraps around to the start.
  const std::uint32_t first = static_cast<std::uint32_t>(
      std::upper_bound(list, list + count, hint,
                       [](std::uint64_t h, const heap_extent& e) { return h < e.offset + e.bytes; }) -
      list);
  for (std::uint32_t k = 0; k < count; ++k) {
    const std::uint32_t i = (first + k) % count;
    heap_extent& e = list[i];
    if (e.bytes < bytes) continue;
    std::uint64_t offset = e.offset;
    const std::uint64_t end = e.offset + e.bytes;
    if (k == 0 && hint > e.offset && hint < end && end - hint >= bytes &&
        m_state->extent_count < m_state->extent_capacity) {
      // Carve at the hint: [e.offset, hint) stays free, and so does what follows the block.
      offset = hint;
      const heap_extent after{hint + bytes, end - hint - bytes};
      e.bytes = hint - e.offset;
      if (after.bytes) {
        std::memmove(list + i + 2, list + i + 1, (count - i - 1) * sizeof(heap_extent));
        list[i + 1] = after;
        ++m_state->extent_count;
      }
    } else if (e.bytes == bytes) {
      std::memmove(list + i, list + i + 1, (count - i - 1) * sizeof(heap_extent));
      --m_state->extent_count;
    } else {
      e.offset += bytes;
      e.bytes -= bytes;
    }
    m_state->used += bytes;
    m_state->high_water = std::max(m_state->high_water, m_state->used);
    return offset;
  }
  return std::nullopt;
}

std::uint64_t shared_heap::stretch_of(std::uint32_t slot, std::uint32_t clients) const noexcept {
  if (clients == 0) return m_state->heap_offset;
  const std::uint64_t share = m_state->heap_size / clients / heap_alignment * heap_alignment;
  return m_state->heap_offset + share * slot;
}

std::optional<std::uint64_t> shared_heap::try_allocate(std::uint64_t bytes, std::uint64_t hint) {
  check_fits(bytes);
  heap_lock lock(&m_state->mutex);
  return take_locked(rounded(bytes), hint);
}

std::uint64_t shared_heap::allocate(std::uint64_t bytes, double timeout_seconds,
                                    std::uint64_t hint) {
  check_fits(bytes);
  const std::uint64_t size = rounded(bytes);
  timespec deadline{};
  if (timeout_seconds > 0) {
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    double whole = std::floor(timeout_seconds);
    deadline.tv_sec += static_cast<time_t>(whole);
    deadline.tv_nsec += static_cast<long>((timeout_seconds - whole) * 1e9);
    if (deadline.tv_nsec >= 1000000000L) {
      deadline.tv_sec += 1;
      deadline.tv_nsec -= 1000000000L;
    }
  }
  heap_lock lock(&m_state->mutex);
  for (;;) {
    if (auto offset = take_locked(size, hint)) return *offset;
    ++m_state->waiters;
    int rc = timeout_seconds > 0
                 ? pthread_cond_timedwait(&m_state->space_freed, &m_state->mutex, &deadline)
                 : pthread_cond_wait(&m_state->space_freed, &m_state->mutex);
    --m_state->waiters;
    if (rc == EOWNERDEAD) pthread_mutex_consistent(&m_state->mutex);
    if (rc == ETIMEDOUT) {
      if (auto offset = take_locked(size, hint)) return *offset;
      throw allocation_error("waited " + std::to_string(timeout_seconds) + " s for " + readable_bytes(bytes) +
                             " of shared buffer (" + readable_bytes(m_state->used) + " of " +
                             readable_bytes(m_state->heap_size) +
                             " in use): the dedicated core does not keep up; raise <buffer "
                             "size=...>, raise timeout=..., or choose policy=\"skip\"");
    }
  }
}

void shared_heap::give_back_locked(std::uint64_t offset, std::uint64_t bytes) {
  heap_extent* list = extents();
  std::uint32_t count = m_state->extent_count;
  // First free range after the released one.
  std::uint32_t i = static_cast<std::uint32_t>(
      std::lower_bound(list, list + count, offset,
                       [](const heap_extent& e, std::uint64_t o) { return e.offset < o; }) -
      list);
  bool joins_previous = i > 0 && list[i - 1].offset + list[i - 1].bytes == offset;
  bool joins_next = i < count && offset + bytes == list[i].offset;
  if (joins_previous && joins_next) {
    list[i - 1].bytes += bytes + list[i].bytes;
    std::memmove(list + i, list + i + 1, (count - i - 1) * sizeof(heap_extent));
    --m_state->extent_count;
  } else if (joins_previous) {
    list[i - 1].bytes += bytes;
  } else if (joins_next) {
    list[i].offset = offset;
    list[i].bytes += bytes;
  } else {
    if (count == m_state->extent_capacity)
      throw allocation_error("shared buffer too fragmented (" + std::to_string(count) +
                             " free ranges); this is a bug, please report it");
    std::memmove(list + i + 1, list + i, (count - i) * sizeof(heap_extent));
    list[i] = {offset, bytes};
    ++m_state->extent_count;
  }
  m_state->used -= bytes;
}

void shared_heap::release(const std::vector<heap_extent>& ranges) {
  if (ranges.empty()) return;
  heap_lock lock(&m_state->mutex);
  for (const heap_extent& r : ranges) give_back_locked(r.offset, rounded(r.bytes));
  if (m_state->waiters > 0) pthread_cond_broadcast(&m_state->space_freed);
}

std::uint64_t shared_heap::used() const {
  heap_lock lock(&m_state->mutex);
  return m_state->used;
}

std::uint32_t shared_heap::waiters() const {
  heap_lock lock(&m_state->mutex);
  return m_state->waiters;
}

std::uint64_t shared_heap::high_water() const {
  heap_lock lock(&m_state->mutex);
  return m_state->high_water;
}

}  // namespace sidecore::transport
