// A first-fit allocator whose whole state lives in shared memory, so that the clients of a
// node allocate concurrently and their server frees. Offsets, never pointers, are stored.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace sidecore::transport {

// Granularity and alignment of every allocation: one cache line.
inline constexpr std::uint64_t heap_alignment = 64;

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
  std::optional<std::uint64_t> try_allocate(std::uint64_t bytes, std::uint64_t hint = 0);
  // Waits until space is freed; timeout_seconds <= 0 waits forever. Throws allocation_error
  // on timeout, or at once when bytes exceed the whole heap.
  std::uint64_t allocate(std::uint64_t bytes, double timeout_seconds, std::uint64_t hint = 0);
  // Start of the stretch of client `slot` of `clients`: where its searches begin.
  std::uint64_t stretch_of(std::uint32_t slot, std::uint32_t clients) const noexcept;
  // Gives ranges back and wakes waiting writers.
  void release(const std::vector<heap_extent>& ranges);
  void release(std::uint64_t offset, std::uint64_t bytes) { release({{offset, bytes}}); }

  std::uint64_t capacity() const noexcept { return m_state->heap_size; }
  std::uint64_t used() const;
  std::uint64_t high_water() const;
  // Writers currently waiting for space.
  std::uint32_t waiters() const;
  static std::uint64_t rounded(std::uint64_t bytes) noexcept {
    return bytes == 0 ? heap_alignment : (bytes + heap_alignment - 1) / heap_alignment * heap_alignment;
  }

 private:
  heap_extent* extents() const noexcept { return reinterpret_cast<heap_extent*>(m_state + 1); }
  std::optional<std::uint64_t> take_locked(std::uint64_t bytes, std::uint64_t hint) noexcept;
  void give_back_locked(std::uint64_t offset, std::uint64_t bytes);
  void check_fits(std::uint64_t bytes) const;

  heap_state* m_state;
};

}  // namespace sidecore::transport
