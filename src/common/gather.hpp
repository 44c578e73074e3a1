// Gathering one part per process on rank 0 whatever the parts' total size. MPI's counts and
// displacements are int: one MPI_Gatherv cannot carry 2 GiB or more, which the run report of a
// long run on many writers, or the block records of a master file at scale, can reach.
#pragma once

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sidecore {

// Collective over comm: every rank's bytes, on rank 0 in rank order (empty parts included); an
// empty vector on the other ranks. The parts travel in rounds of consecutive ranks, each round
// at most round_bytes (one MPI_Gatherv per round: a single round unless the total passes it).
// Throws mpi_error on every rank when a part alone is larger than round_bytes,
// naming the rank and its size.
std::vector<std::string> gather_parts(MPI_Comm comm, std::string_view mine,
                                      std::size_t round_bytes = INT_MAX);

}  // namespace sidecore
