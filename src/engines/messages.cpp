// Control and signal notifications of the message-passing engines.
#include "engines/messages.hpp"

#include <cstring>
#include <string>

#include "common/error.hpp"

namespace sidecore::engines {

transport::message control_message(transport::message_kind kind, int iteration, int source,
                                   std::uint32_t flags) {
  transport::message m{};
  m.kind = kind;
  m.iteration = iteration;
  m.source = source;
  m.flags = flags;
  return m;
}

transport::message signal_message(const config::event& event, std::size_t index, int iteration,
                                  int source) {
  if (event.name.size() >= static_cast<std::size_t>(transport::max_signal_name))
    throw argument_error("event name '" + event.name + "' is longer than " +
                         std::to_string(transport::max_signal_name - 1) + " characters");
  transport::message m = control_message(transport::message_kind::signal, iteration, source);
  m.variable = static_cast<std::int32_t>(index);
  std::memcpy(m.name, event.name.data(), event.name.size());
  return m;
}

}  // namespace sidecore::engines
