// The mark every file of one run carries (root attributes "run_id" and, for file-per-core output,
// "writers"), so that readers never take files another run left under the same names for this
// run's: see src/reader/iteration_files.hpp.
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <string>

namespace sidecore::plugins::hdf5 {

// Root attribute names, shared with the reader.
constexpr const char* run_id_attribute = "run_id";
constexpr const char* writers_attribute = "writers";

struct run_marker {
  std::int64_t id = 0;       // chosen by writer 0, the same in every file of the run
  std::int32_t writers = 1;  // writers of the run: the file-per-core files of each iteration
};

// Writer 0 draws the run's id and sends it to the other writers (collective over comm: every
// writer builds its stores at start-up, in the same order).
run_marker choose_run_marker(MPI_Comm comm, std::int32_t writers);

// Writes "run_id" and, when with_writers, "writers" on the root group of an open file.
void write_run_marker(hid_t file, const run_marker& marker, bool with_writers,
                      const std::string& path);

}  // namespace sidecore::plugins::hdf5
