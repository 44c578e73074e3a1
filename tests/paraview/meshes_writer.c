/* The simulation of test_paraview.py's mesh tests: a 3-D curvilinear mesh shaped as Damaris's
 * ParaView "sector" example (an annular sector split along z between the clients, coordinates
 * and zonal pressure laid out x first, x varying fastest in memory) and a 2-D unstructured mesh
 * as Damaris describes one (interleaved coordinates, 1-based vertex ids and connectivity, a
 * section of quads and one of triangles) with a zonal and a nodal variable. Coordinates and
 * connectivity are written at the first iteration only (time-invariant).
 * Usage: meshes_writer <xml> <iterations> */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "Damaris.h"

enum { NI = 6, NJ = 5, NK = 3 }; /* sector cells of one client */

static void check(int rc, const char* call) {
  if (rc != DAMARIS_OK && rc != DAMARIS_NO_SERVER) {
    fprintf(stderr, "meshes_writer: %s failed: %s\n", call, damaris_last_error_message());
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
    static double sx[(NI + 1) * (NJ + 1) * (NK + 1)], sy[(NI + 1) * (NJ + 1) * (NK + 1)],
        sz[(NI + 1) * (NJ + 1) * (NK + 1)], pressure[NI * NJ * NK];
    for (int k = 0; k <= NK; ++k)
      for (int j = 0; j <= NJ; ++j)
        for (int i = 0; i <= NI; ++i) {
          const size_t n = (size_t)i + (NI + 1) * ((size_t)j + (NJ + 1) * (size_t)k);
          const double angle = (10.0 + 70.0 * j / NJ) * 3.14159265358979323846 / 180.0;
          sx[n] = (i + 10) * cos(angle);
          sy[n] = (i + 10) * sin(angle);
          sz[n] = k + c * NK;
        }
    /* fluid: 6 vertices, two quads and two triangles, 1-based as Fortran codes give them. */
    double xy[12];
    const double corners[12] = {0, 0, 1, 0, 2, 0, 0, 1, 1, 1, 2, 1};
    for (int n = 0; n < 12; ++n) xy[n] = corners[n] + (n % 2 == 0 ? 3.0 * c : 0.0);
    int64_t gid[6];
    for (int n = 0; n < 6; ++n) gid[n] = n + 1 + 6 * c;
    const int types[2] = {9, 5}; /* VTK_QUAD, VTK_TRIANGLE */
    const int sizes[2] = {2, 2};
    const int64_t conn[14] = {1, 2, 5, 4, 2, 3, 6, 5, 4, 5, 1, 5, 6, 2};
    double flow[4];
    float potential[6];
    const int64_t position[3] = {0, 0, (int64_t)c * NK};
    for (int it = 0; it < iterations; ++it) {
      if (it == 0) {
        check(damaris_write("sector/x", sx), "damaris_write");
        check(damaris_write("sector/y", sy), "damaris_write");
        check(damaris_write("sector/z", sz), "damaris_write");
        check(damaris_write("fluid/xy", xy), "damaris_write");
        check(damaris_write("fluid/gid", gid), "damaris_write");
        check(damaris_write("fluid/types", types), "damaris_write");
        check(damaris_write("fluid/sizes", sizes), "damaris_write");
        check(damaris_write("fluid/conn", conn), "damaris_write");
      }
      for (int k = 0; k < NK; ++k)
        for (int j = 0; j < NJ; ++j)
          for (int i = 0; i < NI; ++i)
            pressure[i + NI * (j + NJ * k)] = it * 1000.0 + i + 10 * j + 100 * (k + c * NK);
      for (int n = 0; n < 4; ++n) flow[n] = it * 10.0 + n + 100 * c;
      for (int n = 0; n < 6; ++n) potential[n] = (float)(it + n * 0.5 + 100 * c);
      check(damaris_set_position("pressure", position), "damaris_set_position");
      check(damaris_write("pressure", pressure), "damaris_write");
      check(damaris_write("flow", flow), "damaris_write");
      check(damaris_write("potential", potential), "damaris_write");
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
