// The notifications the message-passing engines (shared memory, MPI) send, built in one place.
#pragma once

#include <cstddef>

#include "config/model.hpp"
#include "transport/message.hpp"

namespace sidecore::engines {

// End of iteration, stop: kind, the client's iteration and index, flags.
transport::message control_message(transport::message_kind kind, int iteration, int source,
                                   std::uint32_t flags = 0);
// A remote event raised by client `source`; index in model::events. Throws argument_error for
// a name a message cannot carry (the configuration refuses such names already).
transport::message signal_message(const config::event& event, std::size_t index, int iteration,
                                  int source);

}  // namespace sidecore::engines
