// Synchronous mode: no dedicated resource; each client stores its own blocks inside
// damaris_end_iteration (inline_engine).
#pragma once

#include "transports/transport.hpp"

namespace sidecore::transports::synchronous {

extern const transports::mode mode_entry;

}  // namespace sidecore::transports::synchronous
