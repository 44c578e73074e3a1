/* Checkpoint and restart through Sidecore (docs/blocks.md).
 *
 *   heat_restart <config.xml> <iterations>
 *   heat_restart <config.xml> <iterations> <checkpoint prefix> <checkpoint iteration>
 *
 * A 2-D heat equation on NY x NX points (explicit scheme, fixed zero boundary), cut into
 * stripes of rows, one per client. Every iteration makes one time step and writes the
 * client's stripe (its own extents and position: the stripes' heights depend on the number
 * of clients). The last iteration is the checkpoint: damaris_sync, then a barrier of the
 * clients, and it is on stable storage (the store is Durable).
 *
 * Given a checkpoint, the job starts from it instead of the initial condition: each client
 * reads its own stripe, in this job's decomposition, from whatever numbers of clients and
 * writers wrote it (sidecore_read_region), then continues. The values are those of a run that
 * was never interrupted: the scheme computes every point the same way whatever the stripes. */
#include <Damaris.h>
#include <mpi.h>
#include <sidecore/blocks.h>
#include <sidecore/read.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parameter(const char* name) {
  int value = 0;
  damaris_parameter_get(name, &value, sizeof value);
  return value;
}

static double initial(int64_t y, int64_t x, int ny, int nx) {
  const double dy = (double)y / ny - 0.3, dx = (double)x / nx - 0.6;
  return (dy * dy + dx * dx < 0.04) ? 100.0 : 0.0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 3 && argc != 5) {
    fprintf(stderr, "usage: %s <config.xml> <iterations> [<checkpoint prefix> <iteration>]\n",
            argv[0]);
    MPI_Finalize();
    return 2;
  }
  const int iterations = atoi(argv[2]);
  if (damaris_initialize(argv[1], MPI_COMM_WORLD) != DAMARIS_OK) {
    fprintf(stderr, "damaris_initialize: %s\n", damaris_last_error_message());
    MPI_Finalize();
    return 1;
  }
  int rc = 0, is_client = 0;
  damaris_start(&is_client);
  if (is_client) {
    MPI_Comm comm;
    damaris_client_comm_get(&comm);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const int ny = parameter("NY"), nx = parameter("NX");
    const int64_t row0 = (int64_t)ny * rank / size, rows = (int64_t)ny * (rank + 1) / size - row0;
    /* The stripe with one halo row above and below. */
    double* u = calloc((size_t)(rows + 2) * nx, sizeof *u);
    double* next = calloc((size_t)(rows + 2) * nx, sizeof *next);
    if (argc == 5) {
      sidecore_reader* checkpoint = NULL;
      const int64_t start[2] = {row0, 0}, count[2] = {rows, nx};
      if (sidecore_read_open(argv[3], atoi(argv[4]), &checkpoint) != DAMARIS_OK ||
          sidecore_read_region(checkpoint, "u", start, count, DAMARIS_TYPE_DOUBLE, u + nx,
                               (uint64_t)(rows * nx) * sizeof *u) != DAMARIS_OK) {
        fprintf(stderr, "restart: %s\n", sidecore_read_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      sidecore_read_close(checkpoint);
    } else {
      for (int64_t y = 0; y < rows; ++y)
        for (int64_t x = 0; x < nx; ++x) u[(y + 1) * nx + x] = initial(row0 + y, x, ny, nx);
    }
    const int64_t extents[2] = {rows, nx}, position[2] = {row0, 0};
    sidecore_set_block_extents("u", 0, extents);
    damaris_set_position("u", position);
    const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    const int down = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    for (int it = 0; it < iterations; ++it) {
      MPI_Sendrecv(u + nx, nx, MPI_DOUBLE, up, 0, u + (rows + 1) * nx, nx, MPI_DOUBLE, down, 0,
                   comm, MPI_STATUS_IGNORE);
      MPI_Sendrecv(u + rows * nx, nx, MPI_DOUBLE, down, 1, u, nx, MPI_DOUBLE, up, 1, comm,
                   MPI_STATUS_IGNORE);
      for (int64_t y = 1; y <= rows; ++y) {
        const int64_t global_y = row0 + y - 1;
        for (int64_t x = 0; x < nx; ++x) {
          const double c = u[y * nx + x];
          if (global_y == 0 || global_y == ny - 1 || x == 0 || x == nx - 1) {
            next[y * nx + x] = 0.0;
            continue;
          }
          next[y * nx + x] = c + 0.2 * (u[(y - 1) * nx + x] + u[(y + 1) * nx + x] +
                                        u[y * nx + x - 1] + u[y * nx + x + 1] - 4.0 * c);
        }
      }
      double* swap = u;
      u = next;
      next = swap;
      if (damaris_write("u", u + nx) != DAMARIS_OK) {
        fprintf(stderr, "damaris_write: %s\n", damaris_last_error_message());
        rc = 1;
        break;
      }
      damaris_end_iteration();
    }
    /* The checkpoint is trusted once every client's writer has stored (and flushed) it. */
    if (rc == 0 && damaris_sync() != DAMARIS_OK) {
      fprintf(stderr, "damaris_sync: %s\n", damaris_last_error_message());
      rc = 1;
    }
    MPI_Barrier(comm);
    if (rank == 0 && rc == 0)
      printf("checkpoint: iteration %d of %d clients is on stable storage\n", iterations - 1, size);
    free(u);
    free(next);
    damaris_stop();
  }
  if (damaris_finalize() != DAMARIS_OK) rc = 1;
  MPI_Finalize();
  return rc;
}
