// RAII owners of MPI communicators and info objects, so that none outlives finalize or leaks on
// error.
#pragma once

#include <mpi.h>

#include <string>
#include <utility>

#include "common/error.hpp"
#include "common/unique_handle.hpp"

namespace sidecore {

// Frees a communicator unless MPI is finalized already (then there is nothing left to free).
struct communicator_traits {
  using value_type = MPI_Comm;
  static MPI_Comm empty() noexcept { return MPI_COMM_NULL; }
  static bool is_open(MPI_Comm comm) noexcept { return comm != MPI_COMM_NULL; }
  static int close(MPI_Comm& comm) noexcept {
    int finalized = 0;
    MPI_Finalized(&finalized);
    return finalized ? MPI_SUCCESS : MPI_Comm_free(&comm);
  }
};

class communicator : public unique_handle<communicator_traits> {
 public:
  communicator() = default;
  // Takes ownership of comm and makes its errors return codes (MPI_ERRORS_RETURN): every
  // communicator Sidecore creates goes through here, so that an MPI failure becomes an error
  // code of the call that met it instead of ending the job.
  explicit communicator(MPI_Comm comm) noexcept : unique_handle(comm) {
    if (comm != MPI_COMM_NULL) MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  }
  int rank() const;
  int size() const;
};

// Frees an info object unless MPI is finalized already.
struct info_traits {
  using value_type = MPI_Info;
  static MPI_Info empty() noexcept { return MPI_INFO_NULL; }
  static bool is_open(MPI_Info info) noexcept { return info != MPI_INFO_NULL; }
  static int close(MPI_Info& info) noexcept {
    int finalized = 0;
    MPI_Finalized(&finalized);
    return finalized ? MPI_SUCCESS : MPI_Info_free(&info);
  }
};
using info_handle = unique_handle<info_traits>;

// Throws mpi_error naming the call when an MPI function does not return MPI_SUCCESS.
void check_mpi(int rc, const char* call);

inline int communicator::rank() const {
  int r = 0;
  check_mpi(MPI_Comm_rank(get(), &r), "MPI_Comm_rank");
  return r;
}
inline int communicator::size() const {
  int s = 0;
  check_mpi(MPI_Comm_size(get(), &s), "MPI_Comm_size");
  return s;
}

}  // namespace sidecore
