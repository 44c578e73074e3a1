// Process memory for blocks, recycled: a released buffer is kept and serves the next block of a
// similar size, so that a write copies into pages that are already mapped (a fresh allocation of
// a large block costs a page fault per 4 KiB, several times the copy itself).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace sidecore {

struct pooled_deleter {
  std::size_t capacity = 0;
  // Base of the pre-faulted arena the buffer came from (see reserve_arena), or null: the
  // buffer frees itself without reading the pool's state, and the arena stays mapped while
  // it is in use.
  std::byte* arena = nullptr;
  void operator()(std::byte* p) const noexcept;
};

// Owned block memory; releasing it returns it to the pool.
using block_buffer = std::unique_ptr<std::byte[], pooled_deleter>;

namespace buffer_pool {

// Memory for at least `bytes` bytes (never null; throws std::bad_alloc). Thread-safe, also
// against reserve_arena and trim.
block_buffer acquire(std::uint64_t bytes);
// How many bytes of released buffers the pool may keep (0 keeps none). Thread-safe.
void set_capacity(std::uint64_t bytes);
// Maps `bytes` of process memory that later acquisitions are served from first (lowest
// addresses first); warm_arena then pre-faults its first `warm_bytes` on a background thread,
// so that the first blocks copy into mapped pages (as the shared segment of the dedicated cores
// does) while the rest only becomes resident if used. Used where the XML buffer bounds what a
// process holds (background thread, dedicated nodes). Throws allocation_error when the memory
// cannot be mapped. Thread-safe; does nothing when an arena is already reserved.
void reserve_arena(std::uint64_t bytes, std::uint64_t warm_bytes = UINT64_MAX);
// Starts pre-faulting the arena's warm part on a background thread (start-up does not wait for
// it), once: at the end of damaris_initialize, so that the thread does not share the process's
// core with start-up's collective steps (a rank that waits in one yields its core, and the
// warm-up took it for 25-30 ms). Does nothing without an arena. Thread-safe.
void warm_arena();
// Frees every kept buffer, and the arena once nothing in it is in use. Thread-safe.
void trim() noexcept;
// Bytes of released buffers kept for reuse.
std::uint64_t kept_bytes();

}  // namespace buffer_pool
}  // namespace sidecore
