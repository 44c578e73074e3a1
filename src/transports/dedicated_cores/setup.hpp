// Dedicated cores: the last ranks of each node serve the others through one shared-memory
// segment per core (channel): blocks are written into its heap, notifications into its rings.
#pragma once

#include "transports/transport.hpp"

namespace sidecore::transports::dedicated_cores {

extern const transports::mode mode_entry;

}  // namespace sidecore::transports::dedicated_cores
