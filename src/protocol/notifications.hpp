// The notifications the message-passing engines (shared memory, MPI) send, built in one place,
// and the checks a server makes on every notification it receives before using it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config/model.hpp"
#include "protocol/message.hpp"

namespace sidecore::protocol {

// End of iteration, stop: kind, the client's iteration and index, flags.
message control_message(message_kind kind, int iteration, int source, std::uint32_t flags = 0);
// A remote event raised by client `source`; index in model::events. Throws argument_error for
// a name a message cannot carry (the configuration refuses such names already).
message signal_message(const config::event& event, std::size_t index, int iteration, int source);

// A notification may name an iteration at most this far past the last one its client ended.
inline constexpr std::int64_t max_iterations_unended = 1024;

// What a server knows about the client a notification came from, to check it against: a
// notification is read from memory the client shares (or from the network), and a buggy or
// dying client may leave anything there.
struct message_limits {
  const config::model* model = nullptr;
  // Ghost widths of each layout (config::evaluate_ghosts); empty: interiors are not checked.
  const std::vector<config::ghost_widths>* ghosts = nullptr;
  std::int32_t source = 0;  // the client this ring (or link) belongs to
  std::int64_t ended = 0;   // iterations this client has ended so far
  // Iterations 0..closed-1 are complete at the server (stored, or about to be): a block for
  // one of them comes too late.
  std::int64_t closed = 0;
  // Where block data may lie (offsets from the segment base); both 0 when blocks do not
  // travel through a shared heap.
  std::uint64_t heap_begin = 0;
  std::uint64_t heap_end = 0;
  bool sync_allowed = false;  // whether a sync request is a notification of this transport
  // Whether blocks may come packed (message_kind::packed_blocks), at most this many bytes at
  // once; 0: they never do.
  std::uint64_t packed_limit = 0;
};

// "" when the notification can be used; otherwise what is wrong: the field, the value found
// and the valid range. Never reads outside the message and the model. Does not check whether
// the block's memory is the client's (the server knows which ranges it already holds).
std::string message_problem(const message& m, const message_limits& limits);

// "block", "end of iteration", ... ("kind 77" for an unknown one), for messages.
std::string kind_name(message_kind kind);

}  // namespace sidecore::protocol
