// Draws a run's id on writer 0 and writes it, with the writer count, into the run's files.
#include "plugins/hdf5/run_marker.hpp"

#include <unistd.h>

#include <chrono>
#include <random>

#include "common/mpi_handles.hpp"
#include "plugins/hdf5/hdf5_attributes.hpp"

namespace sidecore::plugins::hdf5 {

run_marker choose_run_marker(MPI_Comm comm, std::int32_t writers) {
  run_marker marker;
  marker.writers = writers;
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  if (rank == 0) {
    // Two runs must not draw the same id: the device's randomness, mixed with the time and the
    // process id in case it gives little.
    std::random_device device;
    const auto now = std::chrono::system_clock::now().time_since_epoch().count();
    std::uint64_t id = (static_cast<std::uint64_t>(device()) << 32) ^ device();
    id ^= static_cast<std::uint64_t>(now) * 0x9E3779B97F4A7C15ull;
    id ^= static_cast<std::uint64_t>(::getpid()) << 17;
    marker.id = static_cast<std::int64_t>(id & 0x7FFFFFFFFFFFFFFFull);  // positive: 0 = none
    if (marker.id == 0) marker.id = 1;
  }
  check_mpi(MPI_Bcast(&marker.id, 1, MPI_INT64_T, 0, comm), "MPI_Bcast");
  return marker;
}

void write_run_marker(hid_t file, const run_marker& marker, bool with_writers,
                      const std::string& path) {
  write_attribute(file, "/", run_id_attribute, H5T_NATIVE_INT64, {}, &marker.id, path);
  if (with_writers) write_int_attribute(file, "/", writers_attribute, marker.writers, path);
}

}  // namespace sidecore::plugins::hdf5
