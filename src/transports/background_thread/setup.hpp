// Background thread (<dedicated cores="0"> with I/O threads): each client hands its blocks to
// an I/O thread of its own process, which stores them while the simulation computes.
#pragma once

#include "transports/transport.hpp"

namespace sidecore::transports::background_thread {

extern const transports::mode mode_entry;

}  // namespace sidecore::transports::background_thread
