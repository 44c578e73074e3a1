// Control and signal notifications of the message-passing engines, and their checks on the
// receiving side.
#include "protocol/notifications.hpp"

#include "protocol/client_phase.hpp"

#include <cstring>
#include <string>

#include "common/error.hpp"
#include "common/hot_path.hpp"
#include "memory/shared_heap.hpp"

namespace sidecore::protocol {
namespace {

std::string range_text(std::int64_t low, std::int64_t high) {
  return low > high ? std::string("none") : std::to_string(low) + ".." + std::to_string(high);
}

std::string block_problem(const message& m, const message_limits& limits) {
  const config::model& model = *limits.model;
  if (m.variable < 0 || static_cast<std::size_t>(m.variable) >= model.variables.size())
    return "variable index " + std::to_string(m.variable) + " is not a variable (valid: " +
           range_text(0, static_cast<std::int64_t>(model.variables.size()) - 1) + ")";
  const config::variable& variable = model.variables[m.variable];
  const config::layout& layout = model.layouts[variable.layout_index];
  if (m.block < 0)
    return "block " + std::to_string(m.block) + " is out of range (valid: 0 or more)";
  const std::size_t rank = layout.dimensions.size();
  if (m.ndims == 0 || m.ndims > static_cast<std::uint32_t>(max_dimensions) || m.ndims != rank)
    return "ndims is " + std::to_string(m.ndims) + ", layout '" + layout.name + "' has " +
           std::to_string(rank) + " (at most " + std::to_string(max_dimensions) + ")";
  if (m.has_global > 1 || (m.has_global != 0) != !layout.global_dimensions.empty())
    return "has_global is " + std::to_string(m.has_global) + ", layout '" + layout.name +
           (layout.global_dimensions.empty() ? "' has no global extents (valid: 0)"
                                             : "' has global extents (valid: 1)");
  if (m.flags != 0) return "flags are " + std::to_string(m.flags) + " (valid for a block: 0)";
  std::vector<std::int64_t> dims(m.dims, m.dims + m.ndims);
  for (std::size_t d = 0; d < rank; ++d)
    if (dims[d] < 1)
      return "extent " + std::to_string(d) + " is " + std::to_string(dims[d]) +
             " (valid: 1 or more)";
  const std::optional<std::uint64_t> bytes =
      config::array_bytes(dims, config::element_size(layout.type));
  if (!bytes || *bytes != m.bytes)
    return "bytes is " + std::to_string(m.bytes) + ", its extents of " +
           config::element_type_name(layout.type) + " make " +
           (bytes ? std::to_string(*bytes) : std::string("more than 2^64")) + " bytes";
  const config::ghost_widths* ghosts =
      limits.ghosts && variable.layout_index < limits.ghosts->size()
          ? &(*limits.ghosts)[variable.layout_index]
          : nullptr;
  for (std::size_t d = 0; d < rank; ++d) {
    std::int64_t interior = dims[d];
    if (ghosts && d < ghosts->before.size()) interior -= ghosts->before[d] + ghosts->after[d];
    if (interior < 1)
      return "extent " + std::to_string(d) + " is " + std::to_string(dims[d]) +
             ", which leaves no interior inside the ghost zones of layout '" + layout.name + "'";
    if (!m.has_global) continue;
    const std::int64_t global = m.global_dims[d], at = m.position[d];
    if (global < 1)
      return "global extent " + std::to_string(d) + " is " + std::to_string(global) +
             " (valid: 1 or more)";
    if (at < 0 || at > global - interior)
      return "position " + std::to_string(d) + " is " + std::to_string(at) +
             " (valid: " + range_text(0, global - interior) + " for an interior of " +
             std::to_string(interior) + " in a global extent of " + std::to_string(global) + ")";
  }
  if (limits.heap_end > limits.heap_begin) {
    const std::uint64_t begin = limits.heap_begin, end = limits.heap_end;
    // Overflow-safe: bytes is compared with what is left after offset, never added to it.
    if (m.offset < begin || m.offset >= end || m.offset % memory::heap_alignment != 0 ||
        m.bytes > end - m.offset || memory::shared_heap::rounded(m.bytes) > end - m.offset)
      return "data at offset " + std::to_string(m.offset) + " of " + std::to_string(m.bytes) +
             " bytes is not inside the shared heap (valid: offsets " + std::to_string(begin) +
             ".." + std::to_string(end) + ", aligned to " + std::to_string(memory::heap_alignment) +
             " bytes)";
  }
  if (m.iteration < limits.closed)
    return "iteration " + std::to_string(m.iteration) +
           " is complete already (the server "
           "completed iterations 0.." +
           std::to_string(limits.closed - 1) + ")";
  return {};
}

}  // namespace

SIDECORE_HOT_PATH message control_message(message_kind kind, int iteration, int source,
                                          std::uint32_t flags) {
  message m{};
  m.kind = kind;
  m.iteration = iteration;
  m.source = source;
  m.flags = flags;
  return m;
}

message signal_message(const config::event& event, std::size_t index, int iteration, int source) {
  if (event.name.size() >= static_cast<std::size_t>(max_signal_name))
    throw argument_error("event name '" + event.name + "' is longer than " +
                         std::to_string(max_signal_name - 1) + " characters");
  message m = control_message(message_kind::signal, iteration, source);
  m.variable = static_cast<std::int32_t>(index);
  std::memcpy(m.name, event.name.data(), event.name.size());
  return m;
}

std::string kind_name(message_kind kind) {
  switch (kind) {
    case message_kind::block:
      return "block";
    case message_kind::end_iteration:
      return "end of iteration";
    case message_kind::signal:
      return "signal";
    case message_kind::stop:
      return "stop";
    case message_kind::sync:
      return "sync";
    case message_kind::phase:
      return "phase";
    case message_kind::batch:
      return "batch";
    case message_kind::packed_blocks:
      return "packed blocks";
  }
  return "kind " + std::to_string(static_cast<std::uint32_t>(kind));
}

std::string message_problem(const message& m, const message_limits& limits) {
  switch (m.kind) {
    case message_kind::block:
    case message_kind::end_iteration:
    case message_kind::signal:
    case message_kind::stop:
      break;
    case message_kind::packed_blocks:
      // Each block inside is checked as a block where the group is unpacked
      // (transports/dedicated_nodes/remote_server_loop.cpp).
      if (limits.packed_limit == 0)
        return "kind is packed blocks, which this transport never sends (valid: block, end of "
               "iteration, signal, stop)";
      if (m.flags == 0 || m.bytes < next_packed_entry(0, 0) * m.flags ||
          m.bytes > limits.packed_limit)
        return std::to_string(m.flags) + " packed block(s) in " + std::to_string(m.bytes) +
               " bytes (valid: at least 1 block, " + std::to_string(next_packed_entry(0, 0)) +
               " bytes or more per block, at most " + std::to_string(limits.packed_limit) +
               " bytes in all)";
      break;
    case message_kind::sync:
      if (limits.sync_allowed) break;
      return "kind is sync, which this transport never sends (valid: block, end of iteration, "
             "signal, stop)";
    case message_kind::phase:
      if (!limits.sync_allowed)
        return "kind is phase, which this transport never sends (valid: block, end of "
               "iteration, signal, stop)";
      if (m.flags < client_phase::computing || m.flags > client_phase::blocked)
        return "phase " + std::to_string(m.flags) + " is not a phase (valid: 1..4)";
      if (m.source != limits.source)
        return "source is " + std::to_string(m.source) + " in the queue of client " +
               std::to_string(limits.source);
      return {};
    case message_kind::batch:
      // Its chain is checked where it is read (transports/dedicated_cores/overflow.cpp).
      if (limits.heap_begin == limits.heap_end)
        return "kind is batch, which this transport never sends (valid: block, end of "
               "iteration, signal, stop, sync, phase)";
      if (m.source != limits.source)
        return "source is " + std::to_string(m.source) + " in the queue of client " +
               std::to_string(limits.source);
      if (m.bytes == 0 || m.offset < limits.heap_begin || m.offset >= limits.heap_end)
        return "a batch of " + std::to_string(m.bytes) + " notification(s) at offset " +
               std::to_string(m.offset) + " (valid: at least 1, inside the shared buffer [" +
               std::to_string(limits.heap_begin) + ", " + std::to_string(limits.heap_end) + "))";
      return {};
    default:
      return "kind is " + std::to_string(static_cast<std::uint32_t>(m.kind)) +
             ", not a notification (valid: 1..8)";
  }
  if (m.source != limits.source)
    return "source is " + std::to_string(m.source) + " in the queue of client " +
           std::to_string(limits.source) + " (valid: " + std::to_string(limits.source) + ")";
  // Iterations: never negative; blocks and ends not for an iteration this client ended
  // already; none far past the last one it ended.
  const std::int64_t it = m.iteration;
  const std::int64_t lowest = m.kind == message_kind::block ||
                                      m.kind == message_kind::packed_blocks ||
                                      m.kind == message_kind::end_iteration
                                  ? limits.ended
                                  : 0;
  const std::int64_t highest = limits.ended + max_iterations_unended;
  if (m.kind != message_kind::sync && (it < lowest || it > highest))
    return "iteration " + std::to_string(it) +
           " is out of range (valid: " + range_text(lowest, highest) + "; the client ended " +
           std::to_string(limits.ended) + " iteration(s) so far)";
  switch (m.kind) {
    case message_kind::block:
      return block_problem(m, limits);
    case message_kind::end_iteration:
      if (m.flags & ~iteration_skipped)
        return "flags are " + std::to_string(m.flags) + " (valid for an end of iteration: 0 or " +
               std::to_string(iteration_skipped) + ")";
      return {};
    case message_kind::signal: {
      const std::vector<config::event>& events = limits.model->events;
      if (m.variable < 0 || static_cast<std::size_t>(m.variable) >= events.size())
        return "event index " + std::to_string(m.variable) + " is not an event (valid: " +
               range_text(0, static_cast<std::int64_t>(events.size()) - 1) + ")";
      const std::string& expected = events[m.variable].name;
      if (::strnlen(m.name, sizeof m.name) == sizeof m.name ||
          expected.compare(0, std::string::npos, m.name) != 0)
        return "event name does not match event " + std::to_string(m.variable) + " ('" + expected +
               "')";
      return {};
    }
    default:
      return {};
  }
}

}  // namespace sidecore::protocol
