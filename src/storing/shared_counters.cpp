// MPI_Compare_and_swap is avoided: Open MPI 4.1's emulated one over shared memory crashes.
// Every operation is flushed at once: a counter's new value is visible to the next reader.
// Passive-target progress: MPICH over UCX (without MPIR_CVAR_ASYNC_PROGRESS) runs the
// MPI_Fetch_and_op of other ranks on rank 0's window only while rank 0 is inside MPI, so a
// rank's operation waits while rank 0 stores, sleeps, or has gone into MPI_Finalize (where it
// never comes back). Hence shared memory when every rank is on rank 0's node, and close(),
// which keeps rank 0 until nobody needs it.
#include "storing/shared_counters.hpp"

#include <cstdlib>
#include <string>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/mpi_handles.hpp"
#include "common/waiting.hpp"

namespace sidecore::storing {
namespace {

// The slots close() uses, after the caller's counters.
enum close_slot { arrived = 0, decided = 1, outcome = 2, answered = 3, close_slots = 4 };
// The values of the outcome slot.
constexpr std::int64_t undecided = 0, free_together = 1, left_to_finalize = 2;

bool same_node(MPI_Comm comm, int size) {
  // Virtual nodes stand for separate machines: their counters are reached as there.
  if (environment::ranks_per_node() > 0) return false;
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  int node_size = 0;
  const int rc = MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  check_mpi(rc, "MPI_Comm_size");
  // The same answer on every rank: all of them are on one node, or none sees all the others.
  return node_size == size;
}

}  // namespace

shared_counters::shared_counters(MPI_Comm comm, int count, std::int64_t initial) : m_count(count) {
  check_mpi(MPI_Comm_rank(comm, &m_rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &m_size), "MPI_Comm_size");
  const int total = count + close_slots;
  const MPI_Aint bytes =
      m_rank == 0 ? static_cast<MPI_Aint>(sizeof(std::int64_t)) * static_cast<MPI_Aint>(total) : 0;
  m_shared_memory = same_node(comm, m_size);
  if (m_shared_memory) {
    check_mpi(MPI_Win_allocate_shared(bytes, sizeof(std::int64_t), MPI_INFO_NULL, comm, &m_base,
                                      &m_window),
              "MPI_Win_allocate_shared");
    MPI_Aint size = 0;
    int unit = 0;
    check_mpi(MPI_Win_shared_query(m_window, 0, &size, &unit, &m_base), "MPI_Win_shared_query");
    if (m_rank == 0)
      for (int i = 0; i < total; ++i)
        __atomic_store_n(&m_base[i], i < count ? initial : 0, __ATOMIC_SEQ_CST);
  } else {
    const int rc =
        MPI_Win_allocate(bytes, sizeof(std::int64_t), MPI_INFO_NULL, comm, &m_base, &m_window);
    if (rc != MPI_SUCCESS) {
      // Open MPI's default one-sided component needs an RDMA network: over TCP alone it fails
      // here with a bare "invalid window".
      char text[MPI_MAX_ERROR_STRING] = {};
      int length = 0;
      MPI_Error_string(rc, text, &length);
      throw mpi_error(
          std::string("MPI_Win_allocate failed (") + text +
          "): the writers of different nodes share counters through MPI one-sided "
          "communication, which this MPI could not set up between them; with Open MPI on a "
          "network without RDMA (TCP), start the job with `mpirun --mca osc pt2pt` (or "
          "OMPI_MCA_osc=pt2pt in its environment)");
    }
    check_mpi(MPI_Win_set_errhandler(m_window, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
    if (m_rank == 0) {
      check_mpi(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, m_window), "MPI_Win_lock");
      for (int i = 0; i < total; ++i) m_base[i] = i < count ? initial : 0;
      check_mpi(MPI_Win_unlock(0, m_window), "MPI_Win_unlock");
    }
  }
  // Nobody reads a counter before it is set.
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");
  if (!m_shared_memory) {
    check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, m_window), "MPI_Win_lock_all");
    m_locked = true;
  }
}

shared_counters::~shared_counters() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (m_locked && !finalized) MPI_Win_unlock_all(m_window);
}

int shared_counters::apply(int index, const std::int64_t* operand, std::int64_t* result,
                           MPI_Op op) noexcept {
  if (m_shared_memory) {
    std::int64_t* counter = m_base + index;
    if (op == MPI_SUM)
      *result = __atomic_fetch_add(counter, *operand, __ATOMIC_SEQ_CST);
    else if (op == MPI_REPLACE)
      *result = __atomic_exchange_n(counter, *operand, __ATOMIC_SEQ_CST);
    else
      *result = __atomic_load_n(counter, __ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
  }
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

// The decision is taken once, by whoever adds to `decided` first: the last rank to arrive
// (free together), or a rank that failed or gave up at its deadline (leave it). Sums and
// exchanges suffice; each slot sees one kind of operation besides reads.
bool shared_counters::close(bool ended, std::chrono::steady_clock::time_point deadline) noexcept {
  using clock = std::chrono::steady_clock;
  if (m_window == MPI_WIN_NULL) return false;
  int finalized = 0;
  if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return false;
  const int base = m_count;
  const std::int64_t one = 1, nothing = 0;
  std::int64_t answer = undecided;
  auto decide = [&](std::int64_t what) {
    std::int64_t first = 0, ignored = 0;
    if (apply(base + decided, &one, &first, MPI_SUM) != MPI_SUCCESS) return false;
    if (first == 0) {
      answer = what;
      if (apply(base + outcome, &what, &ignored, MPI_REPLACE) != MPI_SUCCESS) return false;
    }
    return true;
  };
  bool ok = true;
  if (ended) {
    std::int64_t before = 0;
    ok = apply(base + arrived, &one, &before, MPI_SUM) == MPI_SUCCESS;
    if (ok && before == m_size - 1) ok = decide(free_together);
  } else {
    ok = decide(left_to_finalize);
  }
  // A rank that took the decision publishes it at once: past the deadline, a second is left
  // for that.
  const auto last_look = deadline + std::chrono::seconds(1);
  bool gave_up = false;
  waiter pause(paces::shared_counter, deadline);
  while (ok && answer == undecided) {
    std::int64_t seen = undecided;
    if (apply(base + outcome, &nothing, &seen, MPI_NO_OP) != MPI_SUCCESS) {
      ok = false;
      break;
    }
    if (seen != undecided) {
      answer = seen;
      break;
    }
    if (pause.nap()) continue;
    if (gave_up || clock::now() >= last_look) break;
    gave_up = true;
    ok = decide(left_to_finalize);
    pause.restart_until(last_look);
  }
  if (ok) {
    std::int64_t ignored = 0;
    ok = apply(base + answered, &one, &ignored, MPI_SUM) == MPI_SUCCESS;
  }
  if (answer == free_together) {
    // Every rank arrived and learns this answer: each of them calls MPI_Win_free.
    if (m_locked) MPI_Win_unlock_all(m_window);
    m_locked = false;
    const int rc = MPI_Win_free(&m_window);
    m_window = MPI_WIN_NULL;
    return rc == MPI_SUCCESS;
  }
  // Left to MPI_Finalize. The other ranks' operations complete at rank 0, which waits for
  // their answers before it goes on (towards MPI_Finalize, where MPICH would not serve them).
  if (m_rank == 0 && ok) {
    pause.restart_until(last_look);
    for (;;) {
      std::int64_t count = 0;
      if (apply(base + answered, &nothing, &count, MPI_NO_OP) != MPI_SUCCESS) break;
      if (count >= m_size || !pause.nap()) break;
    }
  }
  return false;
}

}  // namespace sidecore::storing
