/* The simulation of test_paraview.py's plate test, shaped as Damaris's ParaView "plate"
 * example: a 2-D rectilinear mesh of int cells, each client writing `domains` blocks stacked
 * along y with damaris_write_block and damaris_set_block_position, and the coordinates of each
 * block as blocks too (x first in the layouts, x fastest in memory).
 * Usage: plate_writer <xml> <iterations> */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "Damaris.h"

enum { W = 8, H = 3, DOMAINS = 3 }; /* cells of one block; blocks per client */

static void check(int rc, const char* call) {
  if (rc != DAMARIS_OK && rc != DAMARIS_NO_SERVER) {
    fprintf(stderr, "plate_writer: %s failed: %s\n", call, damaris_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s <xml> <iterations>\n", argv[0]);
    return 2;
  }
  MPI_Init(&argc, &argv);
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  const int iterations = atoi(argv[2]);
  check(damaris_initialize(argv[1], MPI_COMM_WORLD), "damaris_initialize");
  int is_client = 0;
  check(damaris_start(&is_client), "damaris_start");
  if (is_client) {
    MPI_Comm clients;
    check(damaris_client_comm_get(&clients), "damaris_client_comm_get");
    int c = 0;
    MPI_Comm_rank(clients, &c);
    float x[W + 1], y[H + 1];
    int space[W * H];
    for (int it = 0; it < iterations; ++it) {
      for (int d = 0; d < DOMAINS; ++d) {
        if (it == 0) {
          for (int i = 0; i <= W; ++i) x[i] = (float)(c * W + i);
          for (int j = 0; j <= H; ++j) y[j] = (float)(d * H + j);
          check(damaris_write_block("coord/x", d, x), "damaris_write_block");
          check(damaris_write_block("coord/y", d, y), "damaris_write_block");
        }
        for (int j = 0; j < H; ++j)
          for (int i = 0; i < W; ++i) space[i + W * j] = it * 1000 + i + 10 * (j + d * H) + 100 * c;
        const int64_t position[2] = {(int64_t)c * W, (int64_t)d * H};
        check(damaris_set_block_position("space", d, position), "damaris_set_block_position");
        check(damaris_write_block("space", d, space), "damaris_write_block");
      }
      check(damaris_end_iteration(), "damaris_end_iteration");
    }
    check(damaris_stop(), "damaris_stop");
  }
  check(damaris_finalize(), "damaris_finalize");
  printf("rank %d: done\n", world);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
