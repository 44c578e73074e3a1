// Rank 0 learns every part's length, places consecutive ranks in rounds that each fit in one
// MPI_Gatherv, and tells the others their round (nothing more when one round carries all).
#include "common/gather.hpp"

#include <cstdint>

#include "common/error.hpp"
#include "common/mpi_handles.hpp"

namespace sidecore {

std::vector<std::string> gather_parts(MPI_Comm comm, std::string_view mine,
                                      std::size_t round_bytes) {
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const auto ranks = static_cast<std::size_t>(size);
  if (round_bytes == 0 || round_bytes > INT_MAX) round_bytes = INT_MAX;
  const std::uint64_t length = mine.size();
  std::vector<std::uint64_t> lengths(rank == 0 ? ranks : 0);
  check_mpi(MPI_Gather(&length, 1, MPI_UINT64_T, lengths.data(), 1, MPI_UINT64_T, 0, comm),
            "MPI_Gather");
  // rounds, then the first rank whose part alone exceeds a round (-1: none) and that part's size.
  std::int64_t plan[3] = {1, -1, 0};
  std::vector<int> round_of(lengths.size(), 0);
  if (rank == 0) {
    std::uint64_t filled = 0;
    int round = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
      if (lengths[r] > round_bytes) {
        plan[1] = static_cast<std::int64_t>(r);
        plan[2] = static_cast<std::int64_t>(lengths[r]);
        break;
      }
      if (filled + lengths[r] > round_bytes) {
        ++round;
        filled = 0;
      }
      filled += lengths[r];
      round_of[r] = round;
    }
    plan[0] = round + 1;
  }
  check_mpi(MPI_Bcast(plan, 3, MPI_INT64_T, 0, comm), "MPI_Bcast");
  if (plan[1] >= 0)
    throw mpi_error("rank " + std::to_string(plan[1]) + "'s part of " + std::to_string(plan[2]) +
                    " bytes is larger than one MPI message carries (" +
                    std::to_string(round_bytes) + " bytes)");
  int my_round = 0;
  if (plan[0] > 1)
    check_mpi(MPI_Scatter(round_of.data(), 1, MPI_INT, &my_round, 1, MPI_INT, 0, comm),
              "MPI_Scatter");
  std::vector<std::string> parts(lengths.size());
  std::vector<int> counts(lengths.size()), displacements(lengths.size());
  std::string received;
  for (int round = 0; round < plan[0]; ++round) {
    if (rank == 0) {
      std::size_t total = 0;
      for (std::size_t r = 0; r < ranks; ++r) {
        const bool in_round = round_of[r] == round;
        counts[r] = in_round ? static_cast<int>(lengths[r]) : 0;
        displacements[r] = in_round ? static_cast<int>(total) : 0;
        if (in_round) total += lengths[r];
      }
      received.assign(total, '\0');
    }
    const int sending = my_round == round ? static_cast<int>(length) : 0;
    check_mpi(MPI_Gatherv(mine.data(), sending, MPI_BYTE, received.data(), counts.data(),
                          displacements.data(), MPI_BYTE, 0, comm),
              "MPI_Gatherv");
    if (rank == 0) {
      for (std::size_t r = 0; r < ranks; ++r)
        if (round_of[r] == round) parts[r].assign(received, displacements[r], counts[r]);
    }
  }
  return parts;
}

}  // namespace sidecore
