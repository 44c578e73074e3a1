// MPI_Compare_and_swap is avoided: Open MPI 4.1's emulated one over shared memory crashes.
// Every operation is flushed at once: a counter's new value is visible to the next reader.
#include "server/shared_counters.hpp"

#include "common/mpi_handles.hpp"

namespace sidecore::server {

shared_counters::shared_counters(MPI_Comm comm, int count, std::int64_t initial) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  const MPI_Aint bytes =
      rank == 0 ? static_cast<MPI_Aint>(sizeof(std::int64_t)) * static_cast<MPI_Aint>(count) : 0;
  check_mpi(MPI_Win_allocate(bytes, sizeof(std::int64_t), MPI_INFO_NULL, comm, &m_base, &m_window),
            "MPI_Win_allocate");
  check_mpi(MPI_Win_set_errhandler(m_window, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
  if (rank == 0) {
    check_mpi(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, m_window), "MPI_Win_lock");
    for (int i = 0; i < count; ++i) m_base[i] = initial;
    check_mpi(MPI_Win_unlock(0, m_window), "MPI_Win_unlock");
  }
  // Nobody reads a counter before it is set.
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, m_window), "MPI_Win_lock_all");
}

shared_counters::~shared_counters() { MPI_Win_unlock_all(m_window); }

int shared_counters::apply(int index, const std::int64_t* operand, std::int64_t* result,
                           MPI_Op op) noexcept {
  const int rc = MPI_Fetch_and_op(operand, result, MPI_INT64_T, 0, index, op, m_window);
  if (rc != MPI_SUCCESS) return rc;
  return MPI_Win_flush(0, m_window);
}

std::int64_t shared_counters::fetch_add(int index, std::int64_t delta) {
  std::int64_t before = 0;
  check_mpi(apply(index, &delta, &before, MPI_SUM), "MPI_Fetch_and_op");
  return before;
}

std::int64_t shared_counters::read(int index) {
  std::int64_t value = 0;
  const std::int64_t unused = 0;
  check_mpi(apply(index, &unused, &value, MPI_NO_OP), "MPI_Fetch_and_op");
  return value;
}

void shared_counters::store(int index, std::int64_t value) {
  check_mpi(try_store(index, value), "MPI_Fetch_and_op");
}

int shared_counters::try_store(int index, std::int64_t value) noexcept {
  std::int64_t ignored = 0;
  return apply(index, &value, &ignored, MPI_REPLACE);
}

int shared_counters::try_fetch_add(int index, std::int64_t delta) noexcept {
  std::int64_t ignored = 0;
  return apply(index, &delta, &ignored, MPI_SUM);
}

}  // namespace sidecore::server
