// Dedicated nodes: every rank of the last nodes serves clients of other nodes; blocks travel
// over MPI on a duplicate of the job's communicator (the link).
#pragma once

#include "transports/transport.hpp"

namespace sidecore::transports::dedicated_nodes {

extern const transports::mode mode_entry;

}  // namespace sidecore::transports::dedicated_nodes
