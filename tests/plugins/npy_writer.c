/* Writes variables of four element types (two domains of a 2D field placed in a global array,
 * a vector without global extents, a 1D layout with ghost zones, a basic-type scalar) for a
 * few iterations, through whatever store the XML names. check_npy.py recomputes every value
 * from the formulas below. Usage: npy_writer <xml> <iterations> */
#include <Damaris.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "../initialize_or_leave.h"

/* Shapes of npy.xml.in. */
enum { NX = 4, NY = 3, N = 5, H = 6 };

/* DAMARIS_NO_SERVER is not a failure: it says there is no dedicated core. */
static void check(int rc, const char* call) {
  if (rc != DAMARIS_OK && rc != DAMARIS_NO_SERVER) {
    fprintf(stderr, "npy_writer: %s returned %d (%s): %s\n", call, rc, damaris_error_string(rc),
            damaris_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 3) {
    fprintf(stderr, "usage: npy_writer <xml> <iterations>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int iterations = atoi(argv[2]);
  initialize_or_leave("npy_writer", argv[1]);
  int is_client = 0;
  check(damaris_start(&is_client), "damaris_start");
  if (is_client) {
    MPI_Comm comm;
    check(damaris_client_comm_get(&comm), "damaris_client_comm_get");
    int source = 0;
    MPI_Comm_rank(comm, &source);
    for (int it = 0; it < iterations; ++it) {
      for (int block = 0; block < 2; ++block) {
        double field[NY][NX];
        for (int y = 0; y < NY; ++y)
          for (int x = 0; x < NX; ++x)
            field[y][x] = it * 10000.0 + source * 1000.0 + block * 100.0 + y * NX + x;
        const int64_t position[2] = {block * NY, source * NX};
        check(damaris_set_block_position("fields/temperature", block, position),
              "damaris_set_block_position");
        check(damaris_write_block("fields/temperature", block, field), "damaris_write_block");
      }
      int counts[N];
      for (int i = 0; i < N; ++i) counts[i] = it * 1000 + source * 100 + i;
      check(damaris_write("counts", counts), "damaris_write counts");
      float halo[H];
      for (int i = 0; i < H; ++i) halo[i] = (float)(it * 10 + source) + 0.5f * (float)i;
      check(damaris_write("halo", halo), "damaris_write halo");
      const long step = (long)it * 100 + source;
      check(damaris_write("step", &step), "damaris_write step");
      check(damaris_end_iteration(), "damaris_end_iteration");
    }
    check(damaris_stop(), "damaris_stop");
  }
  check(damaris_finalize(), "damaris_finalize");
  MPI_Finalize();
  return 0;
}
