/* Demo: a toy simulation that computes a 2D field and hands it to a dedicated core every
 * iteration, then reports how long it waited for I/O compared with a plain memcpy. */
#include <Damaris.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* DAMARIS_NO_SERVER is what damaris_start and damaris_stop return, as in Damaris, when the
 * configuration has no dedicated cores or nodes: every process is then a client. */
static void check(int rc, const char* call) {
  if (rc != DAMARIS_OK && rc != DAMARIS_NO_SERVER) {
    fprintf(stderr, "%s failed: %s\n  %s\n", call, damaris_error_string(rc),
            damaris_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int main(int argc, char** argv) {
  const char* xml = argc > 1 ? argv[1] : "demo.xml";
  const int iterations = 10;
  MPI_Init(&argc, &argv);
  check(damaris_initialize(xml, MPI_COMM_WORLD), "damaris_initialize");
  int is_client = 0;
  check(damaris_start(&is_client), "damaris_start");
  if (is_client) {
    MPI_Comm comm;
    check(damaris_client_comm_get(&comm), "damaris_client_comm_get");
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    check(damaris_parameter_set("clients", &size, sizeof size), "damaris_parameter_set");
    int nx = 0, ny = 0;
    check(damaris_parameter_get("NX", &nx, sizeof nx), "damaris_parameter_get");
    check(damaris_parameter_get("NY", &ny, sizeof ny), "damaris_parameter_get");
    int64_t position[2] = {0, (int64_t)rank * nx};
    check(damaris_set_position("temperature", position), "damaris_set_position");

    size_t count = (size_t)nx * ny;
    double* field = malloc(count * sizeof *field);
    double* scratch = malloc(count * sizeof *scratch);
    memset(scratch, 0, count * sizeof *scratch); /* compare with a warm memcpy, not page faults */
    double io_seconds = 0.0, memcpy_seconds = 0.0;
    for (int it = 0; it < iterations; ++it) {
      for (size_t i = 0; i < count; ++i) field[i] = 300.0 + it + (double)(i % nx) / nx + rank;
      double t0 = MPI_Wtime();
      check(damaris_write("temperature", field), "damaris_write");
      check(damaris_end_iteration(), "damaris_end_iteration");
      double t1 = MPI_Wtime();
      memcpy(scratch, field, count * sizeof *field);
      double t2 = MPI_Wtime();
      io_seconds += t1 - t0;
      memcpy_seconds += t2 - t1;
    }
    double worst_io = 0.0, worst_copy = 0.0;
    MPI_Reduce(&io_seconds, &worst_io, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(&memcpy_seconds, &worst_copy, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (rank == 0) {
      printf("demo: %d clients wrote %d iterations of %.1f MiB each\n", size, iterations,
             count * sizeof(double) / 1048576.0);
      printf(
          "demo: the simulation waited %.3f ms for I/O in all (%.3f ms per iteration); "
          "a plain memcpy of the same bytes took %.3f ms\n",
          worst_io * 1e3, worst_io * 1e3 / iterations, worst_copy * 1e3);
    }
    free(field);
    free(scratch);
    check(damaris_stop(), "damaris_stop");
  }
  check(damaris_finalize(), "damaris_finalize");
  MPI_Finalize();
  return 0;
}
