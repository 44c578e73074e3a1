// Where the writers of synchronous and background-thread modes stand at one iteration, agreed
// in one all-reduce before their stores run: their collective stores must all run together,
// or all skip, and a writer whose client stopped must still take part.
#pragma once

#include <mpi.h>

#include "config/model.hpp"

namespace sidecore::storing {

struct writers_step {
  bool all_stopped = false;     // every client has stopped
  bool in_step = true;          // the running clients end the same iteration
  int iteration = 0;            // the iteration the running clients end
  bool any_incomplete = false;  // some client dropped data of it, or has stopped
};

// Collective over writers: each gives the iteration its client ends (ignored when stopped),
// whether its client has stopped, and whether it dropped data of that iteration.
writers_step agree_on_step(MPI_Comm writers, int iteration, bool stopped, bool incomplete);

// Whether the writers must take every iteration together (agree_on_step): a store calls them
// together (collective writes, or an exchange of metadata among writers), or an action plugin
// may call collectives on their communicator.
bool writers_in_step(const config::model& model);

// The first store that writes collectively (all writers in each call), or nullptr.
const config::store* first_collective_store(const config::model& model);

}  // namespace sidecore::storing
