// The call sequence of Damaris's C++ example, compiled as C++ against Damaris.h: parameters
// read before damaris_start, servers started, stopped and started again, then five iterations
// of damaris_write and five of alloc/commit/clear, each raising events (one of them broadcast
// by rank 0 to every server). run_compat.py checks the files and the events.
//
// Usage: damaris_example <xml> <out dir>
#include <Damaris.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

std::string g_out = ".";
int g_failures = 0;

void expect(bool ok, const char* what, int code) {
  if (ok) return;
  ++g_failures;
  std::fprintf(stderr, "damaris_example: FAIL %s (code %d: %s): %s\n", what, code,
               damaris_error_string(code), damaris_last_error_message());
}

void mark(const char* kind, int32_t source, int32_t iteration) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::ofstream(g_out + "/" + kind + "_it" + std::to_string(iteration) + "_src" +
                    std::to_string(source) + "_rank" + std::to_string(rank),
                std::ios::app)
      << "ran\n";
}

}  // namespace

// Event actions, found by name in the executable (its symbols are exported).
extern "C" void life_event(const char*, int32_t source, int32_t iteration, const char*) {
  mark("event", source, iteration);
}
extern "C" void life_local_event(const char*, int32_t source, int32_t iteration, const char*) {
  mark("local", source, iteration);
}
extern "C" void life_bcast_event(const char*, int32_t source, int32_t iteration, const char*) {
  mark("bcast", source, iteration);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 3) {
    std::fprintf(stderr, "usage: damaris_example <xml> <out dir>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  g_out = argv[2];
  int err = damaris_initialize(argv[1], MPI_COMM_WORLD);
  expect(err == DAMARIS_OK, "damaris_initialize", err);

  int nrow = 0, ncol = 0;
  err = damaris_parameter_get("NROW", &nrow, sizeof(int));
  expect(err == DAMARIS_OK && nrow == 6, "damaris_parameter_get(NROW)", err);
  err = damaris_parameter_get("NCOL", &ncol, sizeof(int));
  expect(err == DAMARIS_OK && ncol == 5, "damaris_parameter_get(NCOL)", err);

  int is_client = 0;
  err = damaris_start(&is_client);
  if ((err == DAMARIS_OK || err == DAMARIS_NO_SERVER) && is_client) {
    err = damaris_stop();
    expect(err == DAMARIS_OK || err == DAMARIS_NO_SERVER, "damaris_stop", err);
  } else {
    expect(err == DAMARIS_OK && !is_client, "damaris_start on a server", err);
  }

  // The servers are started again.
  err = damaris_start(&is_client);
  if ((err == DAMARIS_OK || err == DAMARIS_NO_SERVER) && is_client) {
    MPI_Comm comm;
    int rank = 0;
    expect(damaris_client_comm_get(&comm) == DAMARIS_OK, "damaris_client_comm_get", 0);
    MPI_Comm_rank(comm, &rank);
    std::vector<int> data(static_cast<std::size_t>(nrow * ncol));
    for (int i = 0; i < 5; ++i) {
      for (int k = 0; k < nrow * ncol; ++k) data[k] = i * 1000 + rank * 100 + k;
      err = damaris_write("life/cells", data.data());
      expect(err == DAMARIS_OK, "damaris_write", err);
      err = damaris_signal("test_event");
      expect(err == DAMARIS_OK, "damaris_signal(test_event)", err);
      err = damaris_end_iteration();
      expect(err == DAMARIS_OK, "damaris_end_iteration", err);
    }
    for (int i = 5; i < 10; ++i) {
      int* p = nullptr;
      err = damaris_alloc("life/cells", reinterpret_cast<void**>(&p));
      expect(err == DAMARIS_OK && p != nullptr, "damaris_alloc", err);
      if (p)
        for (int k = 0; k < nrow * ncol; ++k) p[k] = i * 1000 + rank * 100 + k;
      expect(damaris_commit("life/cells") == DAMARIS_OK, "damaris_commit", 0);
      expect(damaris_signal("test_event") == DAMARIS_OK, "damaris_signal(test_event)", 0);
      expect(damaris_signal("test_local_event") == DAMARIS_OK, "damaris_signal(local)", 0);
      if (rank == 0)
        expect(damaris_signal("test_bcast_event") == DAMARIS_OK, "damaris_signal(bcast)", 0);
      expect(damaris_clear("life/cells") == DAMARIS_OK, "damaris_clear", 0);
      expect(damaris_end_iteration() == DAMARIS_OK, "damaris_end_iteration", 0);
    }
    err = damaris_stop();
    expect(err == DAMARIS_OK || err == DAMARIS_NO_SERVER, "damaris_stop", err);
  }
  err = damaris_finalize();
  expect(err == DAMARIS_OK, "damaris_finalize", err);
  int total = 0;
  MPI_Allreduce(&g_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
