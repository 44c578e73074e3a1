/* The simulation of test_paraview.py, shaped as Damaris's ParaView "image" example: a 3-D
 * rectilinear mesh split along z between the clients, a zonal pressure laid out x first
 * (x varying fastest in memory), coordinates written once (time-invariant).
 * Usage: image_writer <xml> <iterations> [--thread-multiple] [--first-compute-ms MS]
 * --first-compute-ms: the clients wait MS milliseconds before their first iteration, as a
 * simulation computes its first step (bench/paraview/run_first_iteration.py). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "Damaris.h"

enum { W = 16, H = 12, D = 8 }; /* cells of one client's block */

int main(int argc, char** argv) {
  int thread_multiple = 0;
  long first_compute_ms = 0;
  int usage = argc < 3;
  for (int a = 3; a < argc && !usage; ++a) {
    if (strcmp(argv[a], "--thread-multiple") == 0)
      thread_multiple = 1;
    else if (strcmp(argv[a], "--first-compute-ms") == 0 && a + 1 < argc)
      first_compute_ms = atol(argv[++a]);
    else
      usage = 1;
  }
  if (usage) {
    fprintf(stderr, "usage: %s <xml> <iterations> [--thread-multiple] [--first-compute-ms MS]\n",
            argv[0]);
    return 2;
  }
  if (thread_multiple) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided != MPI_THREAD_MULTIPLE) {
      fprintf(stderr, "image_writer: MPI does not provide MPI_THREAD_MULTIPLE\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  } else {
    MPI_Init(&argc, &argv);
  }
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  const int iterations = atoi(argv[2]);
  if (damaris_initialize(argv[1], MPI_COMM_WORLD) != DAMARIS_OK) MPI_Abort(MPI_COMM_WORLD, 1);
  int is_client = 0;
  damaris_start(&is_client); /* DAMARIS_NO_SERVER without dedicated resources */
  if (is_client) {
    MPI_Comm clients;
    damaris_client_comm_get(&clients);
    int rank = 0;
    MPI_Comm_rank(clients, &rank);
    float x[W + 1], y[H + 1], z[D + 1];
    for (int i = 0; i <= W; ++i) x[i] = (float)i;
    for (int j = 0; j <= H; ++j) y[j] = (float)j;
    for (int k = 0; k <= D; ++k) z[k] = (float)(k + rank * D);
    static double pressure[D][H][W]; /* [k][j][i]: x fastest */
    int64_t position[3] = {0, 0, (int64_t)rank * D};
    const struct timespec first = {first_compute_ms / 1000, (first_compute_ms % 1000) * 1000000L};
    if (first_compute_ms > 0) nanosleep(&first, NULL);
    for (int it = 0; it < iterations; ++it) {
      for (int k = 0; k < D; ++k)
        for (int j = 0; j < H; ++j)
          for (int i = 0; i < W; ++i)
            pressure[k][j][i] = i + 10.0 * j + 100.0 * (k + rank * D) + it;
      if (it == 0) {
        damaris_write("coord/x", x);
        damaris_write("coord/y", y);
        damaris_write("coord/z", z);
      }
      damaris_set_position("pressure", position);
      damaris_write("pressure", pressure);
      damaris_end_iteration();
    }
    damaris_stop();
  }
  damaris_finalize();
  MPI_Finalize();
  printf("rank %d: done\n", world);
  return 0;
}
