// Integers the writers of a job share, held in an MPI window on the first of them and changed
// with atomic operations only (MPI_Fetch_and_op): nobody has to answer requests, so no writer
// has to poll on behalf of the others. <schedule> counts its turns (rate writers=K) and the
// writers' progress (ordered) with them.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace sidecore::server {

class shared_counters {
 public:
  // Collective over comm: allocates `count` integers on its rank 0, all set to `initial`,
  // and returns once every rank can use them. Throws mpi_error.
  shared_counters(MPI_Comm comm, int count, std::int64_t initial);
  // Ends this process's access epoch. The window itself is left to MPI_Finalize: freeing it is
  // collective, and a writer whose loop ended on an error would leave the others waiting.
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

 private:
  int apply(int index, const std::int64_t* operand, std::int64_t* result, MPI_Op op) noexcept;

  MPI_Win m_window = MPI_WIN_NULL;
  std::int64_t* m_base = nullptr;  // on rank 0: the counters
};

}  // namespace sidecore::server
