// The fixed-size notification a client posts to its server for every block, iteration end,
// signal and stop. Plain data: it lives in shared memory.
#pragma once

#include <cstdint>
#include <type_traits>

#include "Damaris.h"

namespace sidecore::protocol {

inline constexpr int max_dimensions = SIDECORE_MAX_DIMENSIONS;
inline constexpr int max_signal_name = 64;

// phase: the client entered a phase (flags: a client_phase::state), for a writer that
// schedules by phase (dedicated nodes; dedicated cores read it from the shared segment).
// batch: notifications kept in the shared heap while the ring was full (dedicated cores):
// offset names the first chunk of their chain, bytes counts them.
// packed_blocks: small blocks of one iteration sent as one message (dedicated nodes), each its
// block notification followed by its data, padded to packed_alignment; bytes is the packed
// size, flags the number of blocks.
enum class message_kind : std::uint32_t {
  block = 1,
  end_iteration,
  signal,
  stop,
  sync,
  phase,
  batch,
  packed_blocks
};

inline constexpr std::uint64_t packed_alignment = 16;
// Where the next block notification of a packed group begins, after one at `at` whose data
// has `bytes` bytes.
constexpr std::uint64_t next_packed_entry(std::uint64_t at, std::uint64_t bytes) noexcept;

// flags of an end_iteration message
inline constexpr std::uint32_t iteration_skipped = 1u;

struct message {
  message_kind kind;
  std::int32_t variable;   // index in model::variables (block)
  std::int32_t iteration;  // sync: iterations the client has ended
  std::int32_t block;      // domain id (block)
  std::int32_t source;     // client index
  std::uint32_t ndims;
  std::uint32_t flags;
  std::uint32_t has_global;
  std::uint64_t offset;  // of the data, from the segment base (block)
  std::uint64_t bytes;
  std::int64_t dims[max_dimensions];
  std::int64_t global_dims[max_dimensions];
  std::int64_t position[max_dimensions];
  char name[max_signal_name];  // event name (signal), NUL terminated
};

// The layout of a notification is part of the shared segment's format (channel's
// layout_version): pin it, so that a change is a deliberate one.
static_assert(sizeof(message) == 304, "the message layout changed: bump the channel layout");
static_assert(std::is_trivially_copyable_v<message>, "messages are copied as bytes");

constexpr std::uint64_t next_packed_entry(std::uint64_t at, std::uint64_t bytes) noexcept {
  const std::uint64_t end = at + sizeof(message) + bytes;
  return (end + packed_alignment - 1) / packed_alignment * packed_alignment;
}

}  // namespace sidecore::protocol
