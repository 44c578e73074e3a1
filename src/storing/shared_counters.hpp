// Integers the writers of a job share, held in an MPI window on the first of them and changed
// with atomic operations only: nobody has to answer requests, so no writer has to poll on
// behalf of the others. <schedule> counts its turns (rate writers=K) and the writers' progress
// (ordered) with them.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>

namespace sidecore::storing {

class shared_counters {
 public:
  // Collective over comm: allocates `count` integers on its rank 0, all set to `initial`,
  // and returns once every rank can use them. Throws mpi_error.
  // When every rank of comm shares memory with rank 0 (and SIDECORE_RANKS_PER_NODE does not
  // make virtual nodes), the window is in shared memory and the counters change with the
  // processor's atomics: no operation then waits for rank 0 to enter MPI. Otherwise they are
  // changed with MPI_Fetch_and_op, which some MPIs (MPICH over UCX without asynchronous
  // progress) complete only when rank 0 calls MPI.
  shared_counters(MPI_Comm comm, int count, std::int64_t initial);
  // Ends this process's access epoch unless close() freed the window. Makes no operation on
  // another process: it may already be in MPI_Finalize.
  ~shared_counters();
  shared_counters(const shared_counters&) = delete;
  shared_counters& operator=(const shared_counters&) = delete;

  // Adds delta to counter `index` and returns its value before. Throws mpi_error.
  std::int64_t fetch_add(int index, std::int64_t delta);
  // The current value of counter `index`. Throws mpi_error.
  std::int64_t read(int index);
  // Sets counter `index` to value. Throws mpi_error.
  void store(int index, std::int64_t value);
  // As store(), for destructors and error paths: the MPI error code, never throws.
  int try_store(int index, std::int64_t value) noexcept;
  int try_fetch_add(int index, std::int64_t delta) noexcept;

  // Every rank of comm calls it once, after its last other use; it never throws and never
  // waits past `deadline`. The ranks agree, through the window, whether each of them came here
  // with ended true (its normal end); if so, they free the window together (MPI_Win_free).
  // Otherwise (a rank failed, or was not here by the deadline) nobody frees it: a collective
  // call would wait for the missing rank, so the window is left to MPI_Finalize. Rank 0 leaves
  // only once every rank has its answer (or at the deadline), since their operations need it.
  // Returns true when the window was freed.
  bool close(bool ended, std::chrono::steady_clock::time_point deadline) noexcept;

 private:
  int apply(int index, const std::int64_t* operand, std::int64_t* result, MPI_Op op) noexcept;

  MPI_Win m_window = MPI_WIN_NULL;
  std::int64_t* m_base = nullptr;  // the counters: rank 0's, or everybody's in shared memory
  bool m_shared_memory = false;
  bool m_locked = false;  // in the access epoch of MPI_Win_lock_all
  int m_count = 0;        // the caller's counters; close()'s follow them
  int m_rank = 0;
  int m_size = 1;
};

}  // namespace sidecore::storing
