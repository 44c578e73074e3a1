/* Writes a global 2-D field, N x (N * clients), one N x N block per client placed side by side,
 * with values that name the run, the iteration, the client and the element, so that a reader
 * can tell every value's origin: field = base + it * 1e4 + client * 1e3 + i (i the element's
 * index in the block). run_marker.py runs it several times into one directory, kills a
 * dedicated core under it, and reads the output back through the read API.
 * With "tolerate", store failures reported by end_iteration or sync are counted and printed
 * ("runs_writer: client C: N store failures") instead of ending the job.
 * Usage: runs_writer <xml> <iterations> <base> [pause ms per iteration] [tolerate] */
#include <Damaris.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../initialize_or_leave.h"

#define N 16

static int tolerate = 0;
static int failures = 0;

static void check(int rc, const char* call) {
  if (tolerate && rc == DAMARIS_ERROR_UNKNOWN) {
    fprintf(stderr, "runs_writer: %s: %s\n", call, damaris_last_error_message());
    ++failures;
    return;
  }
  if (rc != DAMARIS_OK && rc != DAMARIS_NO_SERVER) {
    fprintf(stderr, "runs_writer: %s returned %d: %s\n", call, rc, damaris_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 4) {
    fprintf(stderr, "usage: runs_writer <xml> <iterations> <base> [pause ms]\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int iterations = atoi(argv[2]);
  const double base = atof(argv[3]);
  const long pause_ms = argc > 4 ? atol(argv[4]) : 0;
  tolerate = argc > 5 && strcmp(argv[5], "tolerate") == 0;
  initialize_or_leave("runs_writer", argv[1]);
  int is_client = -1;
  check(damaris_start(&is_client), "damaris_start");
  if (is_client) {
    MPI_Comm comm;
    int client = 0, clients = 1;
    check(damaris_client_comm_get(&comm), "damaris_client_comm_get");
    MPI_Comm_rank(comm, &client);
    MPI_Comm_size(comm, &clients);
    check(damaris_parameter_set("clients", &clients, sizeof clients), "damaris_parameter_set");
    const int64_t position[2] = {0, (int64_t)client * N};
    check(damaris_set_position("field", position), "damaris_set_position");
    static double field[N * N];
    for (int it = 0; it < iterations; ++it) {
      for (int i = 0; i < N * N; ++i) field[i] = base + it * 1e4 + client * 1e3 + i;
      check(damaris_write("field", field), "damaris_write");
      check(damaris_end_iteration(), "damaris_end_iteration");
      if (pause_ms > 0) {
        const struct timespec pause = {pause_ms / 1000, (pause_ms % 1000) * 1000000L};
        nanosleep(&pause, NULL);
      }
    }
    check(damaris_sync(), "damaris_sync");
    check(damaris_stop(), "damaris_stop");
    if (tolerate) printf("runs_writer: client %d: %d store failures\n", client, failures);
  }
  damaris_finalize();
  MPI_Finalize();
  return 0;
}
