// First-fit allocation with coalescing over a sorted array of free ranges. Blocks are freed
// roughly in allocation order (iteration by iteration), so the array stays short.
#include "memory/shared_heap.hpp"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <new>
#include <string>

#include "common/error.hpp"
#include "common/hot_path.hpp"
#include "common/log.hpp"
#include "common/units.hpp"

namespace sidecore::memory {
namespace {

std::atomic<shared_heap::update_probe> probe{nullptr};

void probe_point(int point) noexcept {
  if (shared_heap::update_probe p = probe.load(std::memory_order_relaxed)) p(point);
}

// A process may die at any instruction: the compiler must not move a change of the free
// ranges across the marker, so each marker write is fenced for the compiler (the dying
// process's own stores all reach memory; only their program order matters).
void mark_updating(heap_state* state, std::uint32_t value) noexcept {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  state->updating.store(value, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

}  // namespace

// Locks the robust mutex. When its owner died, the next owner checks the state before using
// it (recover), then marks the mutex consistent.
class shared_heap::lock {
 public:
  SIDECORE_HOT_PATH explicit lock(const shared_heap& heap) : m_heap(heap) {
    const int rc = pthread_mutex_lock(&m_heap.m_state->mutex);
    if (rc == EOWNERDEAD) {
      m_heap.recover();
    } else if (rc != 0) {
      throw allocation_error(std::string("shared heap lock failed: ") + std::strerror(rc));
    }
  }
  ~lock() { pthread_mutex_unlock(&m_heap.m_state->mutex); }
  lock(const lock&) = delete;
  lock& operator=(const lock&) = delete;

 private:
  const shared_heap& m_heap;
};

void shared_heap::set_update_probe(update_probe p) noexcept {
  probe.store(p, std::memory_order_relaxed);
}

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

SIDECORE_HOT_PATH void shared_heap::check_fits(std::uint64_t bytes) const {
  if (bytes > m_state->heap_size || rounded(bytes) > m_state->heap_size)
    throw block_never_fits(bytes, m_state->heap_size, "a dedicated core's shared buffer");
}

std::string shared_heap::invariant_problem_locked() const {
  const heap_extent* list = extents();
  const std::uint32_t count = m_state->extent_count;
  const std::uint64_t begin = m_state->heap_offset, end = begin + m_state->heap_size;
  if (count > m_state->extent_capacity)
    return std::to_string(count) + " free ranges recorded, room for " +
           std::to_string(m_state->extent_capacity);
  std::uint64_t free_bytes = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    const heap_extent& e = list[i];
    const std::string which = "free range " + std::to_string(i) + " [" + std::to_string(e.offset) +
                              ", +" + std::to_string(e.bytes) + ")";
    if (e.bytes == 0 || e.offset % heap_alignment != 0 || e.bytes % heap_alignment != 0)
      return which + " is empty or not aligned to " + std::to_string(heap_alignment) + " bytes";
    if (e.offset < begin || e.offset > end || e.bytes > end - e.offset)
      return which + " is outside the heap [" + std::to_string(begin) + ", " + std::to_string(end) +
             ")";
    if (i > 0 && list[i - 1].offset + list[i - 1].bytes > e.offset)
      return which + " overlaps or precedes the range before it";
    free_bytes += e.bytes;
  }
  if (free_bytes + m_state->used != m_state->heap_size)
    return readable_bytes(free_bytes) + " free plus " + readable_bytes(m_state->used) +
           " used is not the heap's " + readable_bytes(m_state->heap_size);
  return {};
}

void shared_heap::poison_locked(const char* reason) const noexcept {
  if (m_state->poisoned) return;
  const std::size_t n = std::min(std::strlen(reason), heap_poison_text - 1);
  std::memcpy(m_state->poison_reason, reason, n);
  m_state->poison_reason[n] = '\0';
  m_state->poisoned = 1;
  // Writers waiting for space would otherwise wait for frees that are now ignored.
  pthread_cond_broadcast(&m_state->space_freed);
}

void shared_heap::recover() const noexcept {
  // Called with the lock held, its previous owner dead.
  if (!m_state->poisoned) {
    try {
      std::string problem;
      if (m_state->updating.load(std::memory_order_relaxed) != 0) {
        problem =
            "a process died while it was allocating or freeing shared memory (in the "
            "middle of an update of the free ranges)";
      } else {
        problem = invariant_problem_locked();
        if (!problem.empty())
          problem =
              "a process died holding the lock of the shared buffer, which it left "
              "inconsistent: " +
              problem;
      }
      if (!problem.empty()) {
        poison_locked((problem + "; the shared buffer cannot be trusted and takes no more "
                                 "blocks (what was handed over before is still stored)")
                          .c_str());
        log::error("shared buffer poisoned: ", problem);
      } else {
        log::warning(
            "a process died holding the lock of the shared buffer; its free ranges "
            "are consistent, going on");
      }
    } catch (...) {
      poison_locked(
          "a process died holding the lock of the shared buffer, whose state could "
          "not be checked; it takes no more blocks");
    }
  }
  pthread_mutex_consistent(&m_state->mutex);
}

SIDECORE_HOT_PATH void shared_heap::throw_if_poisoned_locked() const {
  if (m_state->poisoned) throw allocation_error(m_state->poison_reason);
}

SIDECORE_HOT_PATH std::optional<std::uint64_t> shared_heap::take_locked(
    std::uint64_t bytes, std::uint64_t hint) noexcept {
  heap_extent* list = extents();
  const std::uint32_t count = m_state->extent_count;
  if (count == 0) return std::nullopt;
  // First free range that ends after the hint; the search wraps around to the start.
  const std::uint32_t first =
      static_cast<std::uint32_t>(std::upper_bound(list, list + count, hint,
                                                  [](std::uint64_t h, const heap_extent& e) {
                                                    return h < e.offset + e.bytes;
                                                  }) -
                                 list);
  for (std::uint32_t k = 0; k < count; ++k) {
    const std::uint32_t i = (first + k) % count;
    heap_extent& e = list[i];
    if (e.bytes < bytes) continue;
    std::uint64_t offset = e.offset;
    const std::uint64_t end = e.offset + e.bytes;
    mark_updating(m_state, 1);
    probe_point(1);
    if (k == 0 && hint > e.offset && hint < end && end - hint >= bytes &&
        m_state->extent_count < m_state->extent_capacity) {
      // Carve at the hint: [e.offset, hint) stays free, and so does what follows the block.
      offset = hint;
      const heap_extent after{hint + bytes, end - hint - bytes};
      e.bytes = hint - e.offset;
      probe_point(2);
      if (after.bytes) {
        std::memmove(list + i + 2, list + i + 1, (count - i - 1) * sizeof(heap_extent));
        list[i + 1] = after;
        ++m_state->extent_count;
      }
    } else if (e.bytes == bytes) {
      std::memmove(list + i, list + i + 1, (count - i - 1) * sizeof(heap_extent));
      probe_point(2);
      --m_state->extent_count;
    } else {
      e.offset += bytes;
      probe_point(2);
      e.bytes -= bytes;
    }
    probe_point(3);
    m_state->used += bytes;
    m_state->high_water = std::max(m_state->high_water, m_state->used);
    mark_updating(m_state, 0);
    return offset;
  }
  return std::nullopt;
}

std::uint64_t shared_heap::stretch_of(std::uint32_t slot, std::uint32_t clients) const noexcept {
  if (clients == 0) return m_state->heap_offset;
  const std::uint64_t share = m_state->heap_size / clients / heap_alignment * heap_alignment;
  return m_state->heap_offset + share * slot;
}

SIDECORE_HOT_PATH std::optional<std::uint64_t> shared_heap::try_allocate(std::uint64_t bytes,
                                                                         std::uint64_t hint) {
  check_fits(bytes);
  lock held(*this);
  throw_if_poisoned_locked();
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
  lock held(*this);
  for (;;) {
    throw_if_poisoned_locked();
    if (auto offset = take_locked(size, hint)) return *offset;
    ++m_state->waiters;
    int rc = timeout_seconds > 0
                 ? pthread_cond_timedwait(&m_state->space_freed, &m_state->mutex, &deadline)
                 : pthread_cond_wait(&m_state->space_freed, &m_state->mutex);
    --m_state->waiters;
    if (rc == EOWNERDEAD) recover();
    if (rc == ETIMEDOUT) {
      throw_if_poisoned_locked();
      if (auto offset = take_locked(size, hint)) return *offset;
      throw allocation_error("waited " + std::to_string(timeout_seconds) + " s for " +
                             readable_bytes(bytes) + " of shared buffer (" +
                             readable_bytes(m_state->used) + " of " +
                             readable_bytes(m_state->heap_size) +
                             " in use): the dedicated core does not keep up; raise <buffer "
                             "size=...>, raise timeout=..., or choose policy=\"skip\"");
    }
  }
}

std::string shared_heap::give_back_locked(std::uint64_t offset, std::uint64_t bytes) {
  heap_extent* list = extents();
  const std::uint32_t count = m_state->extent_count;
  const std::uint64_t begin = m_state->heap_offset, end = begin + m_state->heap_size;
  const auto what = [&] {
    return "[" + std::to_string(offset) + ", +" + std::to_string(bytes) + ")";
  };
  // Checked before anything changes: a range given back twice, or one nobody allocated,
  // would otherwise corrupt the free ranges of every process.
  if (offset < begin || offset % heap_alignment != 0 || offset > end || bytes > end - offset)
    return "range " + what() + " is not an allocation of the heap [" + std::to_string(begin) +
           ", " + std::to_string(end) + ")";
  if (bytes > m_state->used)
    return "range " + what() + " is larger than what is in use (" + std::to_string(m_state->used) +
           " bytes)";
  // First free range after the released one.
  const std::uint32_t i = static_cast<std::uint32_t>(
      std::lower_bound(list, list + count, offset,
                       [](const heap_extent& e, std::uint64_t o) { return e.offset < o; }) -
      list);
  if ((i > 0 && list[i - 1].offset + list[i - 1].bytes > offset) ||
      (i < count && offset + bytes > list[i].offset))
    return "range " + what() + " is (partly) free already: given back twice?";
  const bool joins_previous = i > 0 && list[i - 1].offset + list[i - 1].bytes == offset;
  const bool joins_next = i < count && offset + bytes == list[i].offset;
  if (!joins_previous && !joins_next && count == m_state->extent_capacity)
    throw allocation_error("shared buffer too fragmented (" + std::to_string(count) +
                           " free ranges); this is a bug, please report it");
  mark_updating(m_state, 1);
  probe_point(1);
  if (joins_previous && joins_next) {
    list[i - 1].bytes += bytes + list[i].bytes;
    probe_point(2);
    std::memmove(list + i, list + i + 1, (count - i - 1) * sizeof(heap_extent));
    --m_state->extent_count;
  } else if (joins_previous) {
    list[i - 1].bytes += bytes;
  } else if (joins_next) {
    list[i].offset = offset;
    probe_point(2);
    list[i].bytes += bytes;
  } else {
    std::memmove(list + i + 1, list + i, (count - i) * sizeof(heap_extent));
    probe_point(2);
    list[i] = {offset, bytes};
    ++m_state->extent_count;
  }
  probe_point(3);
  m_state->used -= bytes;
  mark_updating(m_state, 0);
  return {};
}

void shared_heap::release(const std::vector<heap_extent>& ranges) {
  if (ranges.empty()) return;
  std::string refused;
  std::size_t refused_count = 0;
  {
    lock held(*this);
    if (m_state->poisoned) return;
    for (const heap_extent& r : ranges) {
      if (r.bytes > m_state->heap_size) {
        if (refused.empty())
          refused = "range [" + std::to_string(r.offset) + ", +" + std::to_string(r.bytes) +
                    ") is larger than the heap";
        ++refused_count;
        continue;
      }
      std::string problem = give_back_locked(r.offset, rounded(r.bytes));
      if (!problem.empty()) {
        if (refused.empty()) refused = std::move(problem);
        ++refused_count;
      }
    }
    if (m_state->waiters > 0) pthread_cond_broadcast(&m_state->space_freed);
  }
  if (!refused.empty())
    throw allocation_error("shared buffer: " + std::to_string(refused_count) + " of " +
                           std::to_string(ranges.size()) +
                           " range(s) not given back (the others were): " + refused);
}

bool shared_heap::is_allocated(std::uint64_t offset, std::uint64_t bytes) const {
  const std::uint64_t begin = m_state->heap_offset, end = begin + m_state->heap_size;
  if (offset < begin || offset > end || offset % heap_alignment != 0 || bytes > end - offset ||
      rounded(bytes) > end - offset)
    return false;
  const std::uint64_t last = offset + rounded(bytes);
  lock held(*this);
  if (m_state->poisoned) return true;  // nothing is freed any more: the bytes stay as they are
  const heap_extent* list = extents();
  const std::uint32_t count = m_state->extent_count;
  // The free range that starts last before `last`, if any, must end before `offset`; the ones
  // before it end earlier still.
  const heap_extent* after = std::lower_bound(
      list, list + count, last, [](const heap_extent& e, std::uint64_t o) { return e.offset < o; });
  return after == list || (after - 1)->offset + (after - 1)->bytes <= offset;
}

std::uint64_t shared_heap::used() const {
  lock held(*this);
  return m_state->used;
}

std::uint32_t shared_heap::waiters() const {
  lock held(*this);
  return m_state->waiters;
}

std::uint64_t shared_heap::high_water() const {
  lock held(*this);
  return m_state->high_water;
}

std::string shared_heap::poisoned() const {
  lock held(*this);
  return m_state->poisoned ? std::string(m_state->poison_reason) : std::string();
}

std::string shared_heap::check() const {
  lock held(*this);
  return invariant_problem_locked();
}

}  // namespace sidecore::memory
