/* The in situ demo: a 3D heat diffusion whose temperature the dedicated cores store in HDF5
 * and draw, every 10 iterations, as an image of its middle plane (a <pyscript>,
 * examples/python/render_slice.py). The domain is split along x among the clients; each holds
 * one ghost layer on both x faces, exchanged with its neighbours at every step, and declared
 * in the layout so that neither the store nor the script sees it. The coordinates of the
 * cells' corners (ghosts included), written once, make it a rectilinear mesh for ParaView
 * (examples/heat_paraview.xml, scripts/demo_paraview.sh).
 * Usage: sidecore_heat_insitu <xml> [iterations] [steps per iteration]
 * (scripts/demo_insitu.sh runs it; each iteration computes that many diffusion steps, 1 by
 * default, then hands the temperature over) */
#include <Damaris.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define NX 24 /* per client, interior */
#define NY 32
#define NZ 32
#define AT(t, z, y, x) (t)[((size_t)(z)*NY + (y)) * (NX + 2) + (x)]

static void check(int rc, const char* call) {
  if (rc != DAMARIS_OK && rc != DAMARIS_NO_SERVER) {
    fprintf(stderr, "heat_insitu: %s failed: %s\n", call, damaris_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 2) {
    fprintf(stderr, "usage: sidecore_heat_insitu <xml> [iterations] [steps per iteration]\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int iterations = argc > 2 ? atoi(argv[2]) : 60;
  const int steps = argc > 3 ? atoi(argv[3]) : 1;
  check(damaris_initialize(argv[1], MPI_COMM_WORLD), "damaris_initialize");
  int is_client = 0;
  check(damaris_start(&is_client), "damaris_start");
  if (is_client) {
    MPI_Comm comm;
    check(damaris_client_comm_get(&comm), "damaris_client_comm_get");
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int clients = size;
    check(damaris_parameter_set("CLIENTS", &clients, sizeof clients), "damaris_parameter_set");
    const int64_t position[3] = {0, 0, (int64_t)rank * NX};
    check(damaris_set_position("temperature", position), "damaris_set_position");
    /* The mesh: one unit per cell, this client's x from its first ghost to its last. */
    float cx[NX + 3], cy[NY + 1], cz[NZ + 1];
    for (int i = 0; i < NX + 3; ++i) cx[i] = (float)(rank * NX - 1 + i);
    for (int i = 0; i <= NY; ++i) cy[i] = (float)i;
    for (int i = 0; i <= NZ; ++i) cz[i] = (float)i;
    check(damaris_write("coord/x", cx), "damaris_write");
    check(damaris_write("coord/y", cy), "damaris_write");
    check(damaris_write("coord/z", cz), "damaris_write");
    const size_t cells = (size_t)NZ * NY * (NX + 2);
    double* t = calloc(cells, sizeof *t);
    double* next = calloc(cells, sizeof *next);
    /* Two hot spheres of the global domain, at 100 degrees; the outer faces stay at 0. */
    const double gx = (double)NX * size;
    for (int z = 0; z < NZ; ++z)
      for (int y = 0; y < NY; ++y)
        for (int x = 1; x <= NX; ++x) {
          const double X = rank * NX + x - 1;
          const double d1 = (X - gx * 0.3) * (X - gx * 0.3) + (y - NY * 0.4) * (y - NY * 0.4) +
                            (z - NZ * 0.5) * (z - NZ * 0.5);
          const double d2 = (X - gx * 0.7) * (X - gx * 0.7) + (y - NY * 0.65) * (y - NY * 0.65) +
                            (z - NZ * 0.5) * (z - NZ * 0.5);
          AT(t, z, y, x) = (d1 < 36.0 || d2 < 16.0) ? 100.0 : 0.0;
        }
    const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    const int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    MPI_Datatype face; /* one x column of every (z, y): a strided plane */
    MPI_Type_vector(NZ * NY, 1, NX + 2, MPI_DOUBLE, &face);
    MPI_Type_commit(&face);
    for (int it = 0; it < iterations * steps; ++it) {
      MPI_Sendrecv(&AT(t, 0, 0, NX), 1, face, right, 0, &AT(t, 0, 0, 0), 1, face, left, 0, comm,
                   MPI_STATUS_IGNORE);
      MPI_Sendrecv(&AT(t, 0, 0, 1), 1, face, left, 1, &AT(t, 0, 0, NX + 1), 1, face, right, 1, comm,
                   MPI_STATUS_IGNORE);
      for (int z = 0; z < NZ; ++z)
        for (int y = 0; y < NY; ++y)
          for (int x = 1; x <= NX; ++x) {
            const int outer = z == 0 || z == NZ - 1 || y == 0 || y == NY - 1 ||
                              (left == MPI_PROC_NULL && x == 1) ||
                              (right == MPI_PROC_NULL && x == NX);
            AT(next, z, y, x) =
                outer ? 0.0
                      : AT(t, z, y, x) +
                            0.12 * (AT(t, z - 1, y, x) + AT(t, z + 1, y, x) + AT(t, z, y - 1, x) +
                                    AT(t, z, y + 1, x) + AT(t, z, y, x - 1) + AT(t, z, y, x + 1) -
                                    6.0 * AT(t, z, y, x));
          }
      double* swap = t;
      t = next;
      next = swap;
      if ((it + 1) % steps != 0) continue;
      check(damaris_write("temperature", t), "damaris_write");
      check(damaris_end_iteration(), "damaris_end_iteration");
    }
    MPI_Type_free(&face);
    free(t);
    free(next);
    check(damaris_stop(), "damaris_stop");
  }
  check(damaris_finalize(), "damaris_finalize");
  MPI_Finalize();
  return 0;
}
