// What the buffers of a mode may take of a node's memory, and how much of a buffer is mapped
// ahead of the first write. Shared by the setups of every mode.
#pragma once

#include <cstdint>

#include "config/model.hpp"
#include "topology/topology.hpp"

namespace sidecore::transports {

// Buffers are mapped and touched at initialization: with dedicated cores one segment per node
// of <buffer size> bytes (per_process false); with a background thread or dedicated nodes one
// buffer per process of that size (per_process true), so a size chosen for dedicated cores
// counts once per process. Throws config_error for a total the node cannot hold (processes
// would be killed while the pages are touched); warns (node rank 0) above half of its memory.
// mode names the mode in the message.
void check_node_memory(const config::model& model, const topology::layout& topo, const char* mode,
                       bool per_process);

// What a client's buffer maps ahead of the first write: the bytes one client writes in an
// iteration when it writes every variable of every domain, as the parameters stand at
// start-up, and at least 4 MiB.
std::uint64_t first_iteration_window(const config::model& model);

}  // namespace sidecore::transports
