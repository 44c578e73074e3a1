// A first-fit allocator whose whole state lives in shared memory, so that the clients of a
// node allocate concurrently and their server frees. Offsets, never pointers, are stored.
//
// Crash safety: the state is guarded by a robust process-shared mutex. Every change of the
// free ranges raises `updating` first and lowers it once the ranges are consistent again, so
// that the next owner of a lock whose owner died knows whether it died in the middle of one.
// If it did (or if the free ranges break an invariant), the heap is poisoned: every later
// allocation fails at once naming the cause, releases are ignored, and memory already handed
// over stays readable, so that what was committed before the death is still stored.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sidecore::memory {

// Granularity and alignment of every allocation: one cache line.
inline constexpr std::uint64_t heap_alignment = 64;
inline constexpr std::size_t heap_poison_text = 256;

struct heap_extent {
  std::uint64_t offset;
  std::uint64_t bytes;
};

// The shared state; extents (free ranges sorted by offset) follow it in memory.
struct heap_state {
  pthread_mutex_t mutex;
  pthread_cond_t space_freed;
  std::uint64_t heap_offset;  // from the segment base
  std::uint64_t heap_size;
  std::uint64_t used;
  std::uint64_t high_water;
  std::uint32_t waiters;
  std::uint32_t extent_count;
  std::uint32_t extent_capacity;
  // 1 while the free ranges, extent_count or used are being changed (under the mutex).
  std::atomic<std::uint32_t> updating;
  // 1 once the state cannot be trusted; poison_reason says why (NUL terminated).
  std::uint32_t poisoned;
  char poison_reason[heap_poison_text];
};

class shared_heap {
 public:
  // Bytes needed for the state with room for `extents` free ranges.
  static std::size_t state_bytes(std::uint32_t extents) noexcept;
  // Initializes the state in place (process-shared, robust mutex). Called once by the creator.
  static void initialize(void* state, std::uint64_t heap_offset, std::uint64_t heap_size,
                         std::uint32_t extents);

  explicit shared_heap(void* state) noexcept : m_state(static_cast<heap_state*>(state)) {}

  // An offset (from the segment base) of at least `bytes`, or nothing when no free range
  // is large enough now. The search starts at `hint` (an offset in the heap; each client
  // passes the start of its own stretch), so that a client keeps reusing the same memory,
  // warm in its caches and TLB, while several clients rarely contend for the same range.
  // Throws allocation_error when bytes exceed the whole heap or the heap is poisoned.
  std::optional<std::uint64_t> try_allocate(std::uint64_t bytes, std::uint64_t hint = 0);
  // Waits until space is freed; timeout_seconds <= 0 waits forever. Throws allocation_error
  // on timeout, or at once when bytes exceed the whole heap or the heap is (or becomes)
  // poisoned.
  std::uint64_t allocate(std::uint64_t bytes, double timeout_seconds, std::uint64_t hint = 0);
  // Start of the stretch of client `slot` of `clients`: where its searches begin.
  std::uint64_t stretch_of(std::uint32_t slot, std::uint32_t clients) const noexcept;
  // Gives ranges back and wakes waiting writers. Every valid range is given back; a range
  // outside the heap, misaligned, or (partly) free already is refused, and allocation_error
  // then names the first one after the others were released. Does nothing once poisoned.
  void release(const std::vector<heap_extent>& ranges);
  void release(std::uint64_t offset, std::uint64_t bytes) { release({{offset, bytes}}); }
  // True when [offset, offset + bytes) lies inside the heap, starts on the allocation
  // granularity and no part of it is free: a range someone allocated and not yet released.
  bool is_allocated(std::uint64_t offset, std::uint64_t bytes) const;

  std::uint64_t capacity() const noexcept { return m_state->heap_size; }
  // First and one-past-last offsets of the heap (from the segment base).
  std::uint64_t begin_offset() const noexcept { return m_state->heap_offset; }
  std::uint64_t end_offset() const noexcept { return m_state->heap_offset + m_state->heap_size; }
  std::uint64_t used() const;
  std::uint64_t high_water() const;
  // Writers currently waiting for space.
  std::uint32_t waiters() const;
  // Why the heap was poisoned, "" while it can be trusted.
  std::string poisoned() const;
  // What breaks the free ranges' invariants (sorted, disjoint, inside the heap, aligned, free
  // plus used equal to the size), "" when they hold.
  std::string check() const;
  static std::uint64_t rounded(std::uint64_t bytes) noexcept {
    return bytes == 0 ? heap_alignment
                      : (bytes + heap_alignment - 1) / heap_alignment * heap_alignment;
  }

  // Tests only: when set, called with 1, 2, 3 at points inside every change of the free
  // ranges (after `updating` is raised, midway, before `used` is updated), so that a test can
  // end the process there. Process-wide; never set outside tests.
  using update_probe = void (*)(int point);
  static void set_update_probe(update_probe probe) noexcept;

 private:
  class lock;
  heap_extent* extents() const noexcept { return reinterpret_cast<heap_extent*>(m_state + 1); }
  std::optional<std::uint64_t> take_locked(std::uint64_t bytes, std::uint64_t hint) noexcept;
  // "" when given back; otherwise why the range was refused (nothing changed then).
  std::string give_back_locked(std::uint64_t offset, std::uint64_t bytes);
  std::string invariant_problem_locked() const;
  // With the lock held after its owner died: poisons the state when it cannot be trusted,
  // then marks the mutex consistent.
  void recover() const noexcept;
  void poison_locked(const char* reason) const noexcept;
  void throw_if_poisoned_locked() const;
  void check_fits(std::uint64_t bytes) const;

  heap_state* m_state;
};

}  // namespace sidecore::memory
