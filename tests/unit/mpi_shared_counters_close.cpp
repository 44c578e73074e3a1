// shared_counters::close() on 3 or more ranks, one case per job (its own main(), so outside the
// GoogleTest program): all ranks ended, one rank failed, one rank never came. Exits 0 only when
// every check passed on every rank and MPI_Finalize returned.
// Usage: mpiexec -n N mpi_shared_counters_close <all_ended|one_failed|one_missing> <shm|rma>
// The path is chosen by SIDECORE_RANKS_PER_NODE (unset: shared memory; set: MPI one-sided);
// the second argument says which one the test expects, and every rank checks that it sees it.
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "storing/shared_counters.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
using sidecore::storing::shared_counters;

// The caller's counters and their first value: close() adds its own slots after them.
constexpr int counter_count = 3;
constexpr std::int64_t initial = 7;
// The rank that fails (one_failed) or never calls close() (one_missing). Not rank 0: the
// other ranks' one-sided operations complete at rank 0.
constexpr int odd_rank = 1;

int g_rank = 0;
int g_failures = 0;

void check(bool condition, const std::string& what) {
  if (condition) return;
  ++g_failures;
  std::fprintf(stderr, "FAIL rank %d: %s\n", g_rank, what.c_str());
  std::fflush(stderr);
}

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// Uses the counters as the writers of a job would before their end, and checks every value:
// concurrent sums, a store seen by everybody, the fetched values distinct.
void use_counters(shared_counters& counters, int size) {
  // Counter 0: every rank adds rank + 1 with try_fetch_add.
  check(counters.try_fetch_add(0, g_rank + 1) == MPI_SUCCESS, "try_fetch_add(0) failed");
  // Counter 1: every rank takes a ticket; the tickets are initial, initial + 1, ...
  const std::int64_t ticket = counters.fetch_add(1, 1);
  // Counter 2: the last rank stores a value everybody reads after the barrier.
  if (g_rank == size - 1)
    check(counters.try_store(2, 1000 + size) == MPI_SUCCESS, "try_store(2) failed");
  MPI_Barrier(MPI_COMM_WORLD);

  const std::int64_t sum = initial + static_cast<std::int64_t>(size) * (size + 1) / 2;
  const std::int64_t seen_sum = counters.read(0);
  check(seen_sum == sum,
        "counter 0 is " + std::to_string(seen_sum) + ", expected " + std::to_string(sum));
  const std::int64_t seen_tickets = counters.read(1);
  check(seen_tickets == initial + size, "counter 1 is " + std::to_string(seen_tickets) +
                                            ", expected " + std::to_string(initial + size));
  const std::int64_t seen_store = counters.read(2);
  check(seen_store == 1000 + size,
        "counter 2 is " + std::to_string(seen_store) + ", expected " + std::to_string(1000 + size));
  std::vector<std::int64_t> tickets(static_cast<std::size_t>(size));
  MPI_Allgather(&ticket, 1, MPI_INT64_T, tickets.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
  std::vector<bool> taken(static_cast<std::size_t>(size), false);
  for (const std::int64_t t : tickets) {
    const bool in_range = t >= initial && t < initial + size;
    check(in_range && !taken[static_cast<std::size_t>(t - initial)],
          "ticket " + std::to_string(t) + " out of range or taken twice");
    if (in_range) taken[static_cast<std::size_t>(t - initial)] = true;
  }
  // Nobody's reads above race with close()'s first operations.
  MPI_Barrier(MPI_COMM_WORLD);
}

struct close_result {
  bool called = false;
  bool freed = false;
  double seconds = 0;
};

close_result run_close(shared_counters& counters, bool ended, std::chrono::seconds deadline) {
  close_result result;
  result.called = true;
  const auto start = clock_type::now();
  result.freed = counters.close(ended, start + deadline);
  result.seconds = seconds_since(start);
  std::printf("rank %d: close(ended=%s, deadline %llds) returned %s after %.3f s\n", g_rank,
              ended ? "true" : "false", static_cast<long long>(deadline.count()),
              result.freed ? "true" : "false", result.seconds);
  std::fflush(stdout);
  return result;
}

// Every rank came with ended=true, at different times: all free the window together.
void all_ended(int size) {
  shared_counters counters(MPI_COMM_WORLD, counter_count, initial);
  use_counters(counters, size);
  // The early ranks wait for the later ones inside close().
  std::this_thread::sleep_for(std::chrono::milliseconds(100 * g_rank));
  const close_result r = run_close(counters, true, std::chrono::seconds(20));
  check(r.freed, "close() returned false although every rank ended");
}

// odd_rank came with ended=false (after rank 0, before the others): nobody frees, nobody
// waits for the deadline.
void one_failed(int size) {
  shared_counters counters(MPI_COMM_WORLD, counter_count, initial);
  use_counters(counters, size);
  std::this_thread::sleep_for(std::chrono::milliseconds(100 * g_rank));
  const bool ended = g_rank != odd_rank;
  const close_result r = run_close(counters, ended, std::chrono::seconds(5));
  check(!r.freed, "close() returned true although rank " + std::to_string(odd_rank) +
                      " came with ended=false");
  // A hang check, not a performance one: the answer is known as soon as odd_rank came.
  check(r.seconds < 3.0,
        "close() took " + std::to_string(r.seconds) + " s, expected well under its 5 s deadline");
  // Rank 0 came first and must stay until the last rank (300 ms later) has its answer: over
  // MPI one-sided operations that need rank 0 in MPI (MPICH over UCX), a later rank would
  // otherwise wait inside close() while rank 0 is away from MPI, here for 4 s.
  if (g_rank == 0) std::this_thread::sleep_for(std::chrono::seconds(4));
}

// odd_rank never calls close() and goes on to MPI_Finalize: the others give up at the
// deadline (rank 0 at most a second later) and leave the window to MPI_Finalize.
void one_missing(int size) {
  shared_counters counters(MPI_COMM_WORLD, counter_count, initial);
  use_counters(counters, size);
  if (g_rank == odd_rank) {
    std::printf("rank %d: skips close()\n", g_rank);
    std::fflush(stdout);
    return;
  }
  const close_result r = run_close(counters, true, std::chrono::seconds(2));
  check(!r.freed,
        "close() returned true although rank " + std::to_string(odd_rank) + " never came");
  check(r.seconds >= 1.9,
        "close() returned after " + std::to_string(r.seconds) + " s, before its 2 s deadline");
  check(r.seconds <= 5.0, "close() returned after " + std::to_string(r.seconds) +
                              " s, expected at most its 2 s deadline + 3 s");
}

// Every rank must see the variable that chooses the path the test expects, and for the
// shared memory path all ranks must share a node.
void check_path(const std::string& path, int size) {
  const char* rpn = std::getenv("SIDECORE_RANKS_PER_NODE");
  const bool virtual_nodes = rpn && *rpn;
  if (path == "rma") {
    check(virtual_nodes,
          "SIDECORE_RANKS_PER_NODE did not reach this rank (one-sided path "
          "expected)");
  } else {
    check(!virtual_nodes, std::string("SIDECORE_RANKS_PER_NODE='") + (rpn ? rpn : "") +
                              "' is set (shared memory path expected)");
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_size = 0;
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    check(node_size == size, "only " + std::to_string(node_size) + " of " + std::to_string(size) +
                                 " ranks on this node");
  }
  std::printf("rank %d: SIDECORE_RANKS_PER_NODE=%s -> %s path\n", g_rank, rpn ? rpn : "(unset)",
              virtual_nodes ? "one-sided (MPI_Fetch_and_op)" : "shared memory");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string which = argc > 1 ? argv[1] : "";
  const std::string path = argc > 2 ? argv[2] : "";
  const bool known_case = which == "all_ended" || which == "one_failed" || which == "one_missing";
  if (!known_case || (path != "shm" && path != "rma") || size < 3) {
    if (g_rank == 0)
      std::fprintf(stderr,
                   "usage: mpiexec -n N(>=3) %s <all_ended|one_failed|one_missing> <shm|rma>\n",
                   argv[0]);
    MPI_Finalize();
    return 2;
  }
  check_path(path, size);
  try {
    if (which == "all_ended")
      all_ended(size);
    else if (which == "one_failed")
      one_failed(size);
    else
      one_missing(size);
  } catch (const std::exception& e) {
    check(false, std::string("exception: ") + e.what());
  }
  // The shared_counters is gone (destructor run); every rank reports, then finalizes. A window
  // all_ended left unfreed would make MPICH's MPI_Finalize abort: the exit code tells.
  int failures = 0;
  MPI_Allreduce(&g_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0)
    std::printf("%s %s on %d ranks: %s (%d failed checks)\n", which.c_str(), path.c_str(), size,
                failures == 0 ? "PASS" : "FAIL", failures);
  std::fflush(stdout);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
