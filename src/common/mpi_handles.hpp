// RAII owner of an MPI communicator, so that no communicator outlives finalize or leaks on error.
#pragma once

#include <mpi.h>

#include <string>
#include <utility>

#include "common/error.hpp"

namespace sidecore {

class communicator {
 public:
  communicator() = default;
  // Takes ownership of comm and makes its errors return codes (MPI_ERRORS_RETURN): every
  // communicator Sidecore creates goes through here, so that an MPI failure becomes an error
  // code of the call that met it instead of ending the job.
  explicit communicator(MPI_Comm comm) noexcept : m_comm(comm) {
    if (m_comm != MPI_COMM_NULL) MPI_Comm_set_errhandler(m_comm, MPI_ERRORS_RETURN);
  }
  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;
  communicator(communicator&& other) noexcept : m_comm(std::exchange(other.m_comm, MPI_COMM_NULL)) {}
  communicator& operator=(communicator&& other) noexcept {
    if (this != &other) {
      reset();
      m_comm = std::exchange(other.m_comm, MPI_COMM_NULL);
    }
    return *this;
  }
  ~communicator() { reset(); }

  MPI_Comm get() const noexcept { return m_comm; }
  explicit operator bool() const noexcept { return m_comm != MPI_COMM_NULL; }
  int rank() const;
  int size() const;

  void reset() noexcept {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (m_comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&m_comm);
    m_comm = MPI_COMM_NULL;
  }

 private:
  MPI_Comm m_comm = MPI_COMM_NULL;
};

// Throws mpi_error naming the call when an MPI function does not return MPI_SUCCESS.
void check_mpi(int rc, const char* call);

inline int communicator::rank() const {
  int r = 0;
  check_mpi(MPI_Comm_rank(m_comm, &r), "MPI_Comm_rank");
  return r;
}
inline int communicator::size() const {
  int s = 0;
  check_mpi(MPI_Comm_size(m_comm, &s), "MPI_Comm_size");
  return s;
}

}  // namespace sidecore
