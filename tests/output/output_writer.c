/* Output-mode writer: a smooth 3D field with ghost zones, two domains per client placed in a
 * 2D decomposition, rectilinear coordinates declared time-invariant (written every iteration
 * anyway: the store must keep the first), a 1D variable without mesh, a variable without
 * global dimensions, and the pressure again through a Fortran layout (positions fastest first).
 * tests/output/check_output.py recomputes every value. Usage: output_writer <xml> <iterations> */
#include <Damaris.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "../initialize_or_leave.h"

#define NX 8
#define NY 5
#define NZ 3
#define G 1 /* ghost width on every side */

/* DAMARIS_NO_SERVER is what damaris_start and damaris_stop return, as in Damaris, when the
 * configuration has no dedicated cores or nodes: every process is then a client. */
static void check(int rc, const char* call) {
  if (rc != DAMARIS_OK && rc != DAMARIS_NO_SERVER) {
    fprintf(stderr, "output_writer: %s returned %d (%s): %s\n", call, rc, damaris_error_string(rc),
            damaris_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

/* The field at global interior index (z, y, x) in iteration it. */
static double field(int it, int z, int y, int x) {
  return 100.0 * it + sin(0.3 * x) + cos(0.2 * y) + 0.1 * z;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 3) {
    fprintf(stderr, "usage: output_writer <xml> <iterations>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int iterations = atoi(argv[2]);
  initialize_or_leave("output_writer", argv[1]);
  int is_client = -1;
  check(damaris_start(&is_client), "damaris_start");
  if (is_client) {
    MPI_Comm comm;
    check(damaris_client_comm_get(&comm), "damaris_client_comm_get");
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    check(damaris_parameter_set("clients", &size, sizeof size), "damaris_parameter_set");
    for (int b = 0; b < 2; ++b) {
      int64_t pos3[3] = {b * NZ, 0, rank * NX};
      int64_t pos1[1] = {(rank * 2 + b) * NX};
      check(damaris_set_block_position("temperature", b, pos3), "damaris_set_block_position");
      check(damaris_set_block_position("pressure", b, pos3), "damaris_set_block_position");
      int64_t fortran_pos3[3] = {pos3[2], pos3[1], pos3[0]}; /* x, y, z */
      check(damaris_set_block_position("fpressure", b, fortran_pos3), "damaris_set_block_position");
      check(damaris_set_block_position("ids", b, pos1), "damaris_set_block_position");
    }
    int64_t xpos[1] = {rank * NX};
    check(damaris_set_position("coords/x", xpos), "damaris_set_position");

    static double t[NZ + 2 * G][NY + 2 * G][NX + 2 * G];
    static float p[NZ][NY][NX];
    int ids[NX];
    double xs[NX], ys[NY], zs[2 * NZ];
    for (int i = 0; i < NX; ++i) xs[i] = 0.5 * (rank * NX + i);
    for (int j = 0; j < NY; ++j) ys[j] = 10.0 + j;
    for (int k = 0; k < 2 * NZ; ++k) zs[k] = 2.0 * k;
    for (int it = 0; it < iterations; ++it) {
      for (int b = 0; b < 2; ++b) {
        for (int z = 0; z < NZ + 2 * G; ++z)
          for (int y = 0; y < NY + 2 * G; ++y)
            for (int x = 0; x < NX + 2 * G; ++x) {
              int ghost = z < G || z >= NZ + G || y < G || y >= NY + G || x < G || x >= NX + G;
              t[z][y][x] = ghost ? -999.0 : field(it, b * NZ + z - G, y - G, rank * NX + x - G);
            }
        check(damaris_write_block("temperature", b, t), "damaris_write_block");
        for (int z = 0; z < NZ; ++z)
          for (int y = 0; y < NY; ++y)
            for (int x = 0; x < NX; ++x)
              p[z][y][x] = (float)(2.0 * field(it, b * NZ + z, y, rank * NX + x));
        check(damaris_write_block("pressure", b, p), "damaris_write_block");
        /* p[z][y][x] in C is p(x,y,z) in Fortran: the same bytes. */
        check(damaris_write_block("fpressure", b, p), "damaris_write_block");
        for (int x = 0; x < NX; ++x) ids[x] = it * 1000 + (rank * 2 + b) * NX + x;
        check(damaris_write_block("ids", b, ids), "damaris_write_block");
      }
      /* Time-invariant: written every iteration, stored once. */
      check(damaris_write("coords/x", xs), "damaris_write");
      if (rank == 0) {
        check(damaris_write("coords/y", ys), "damaris_write");
        check(damaris_write("coords/z", zs), "damaris_write");
      }
      int local[2] = {rank, it};
      check(damaris_write("local", local), "damaris_write");
      check(damaris_end_iteration(), "damaris_end_iteration");
    }
    check(damaris_stop(), "damaris_stop");
  }
  check(damaris_finalize(), "damaris_finalize");
  MPI_Finalize();
  return 0;
}
