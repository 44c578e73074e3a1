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
  void operator()(std::byte* p) const noexcept;
};

// Owned block memory; releasing it returns it to the pool.
using block_buffer = std::unique_ptr<std::byte[], pooled_deleter>;

namespace buffer_pool {

// Memory for at least `bytes` bytes (never null; throws std::bad_alloc).
block_buffer acquire(std::uint64_t bytes);
// How many bytes of released buffers the pool may keep (0 keeps none). Thread-safe.
void set_capacity(std::uint64_t bytes);
// Frees every kept buffer.
void trim() noexcept;
// Bytes of released buffers kept for reuse.
std::uint64_t kept_bytes();

}  // namespace buffer_pool
}  // namespace sidecore
