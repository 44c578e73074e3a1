/* One rank calls damaris_initialize seconds after the others: they wait for it and say so
 * (SIDECORE_COLLECTIVE_NOTICE, here 1 s), then the run goes on as usual once it arrives.
 * Usage: late_rank <xml> (2 ranks: client 0, dedicated core 1, which arrives 2.5 s late) */
#include <Damaris.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <sidecore/stats.h>

#include "check.h"

enum { N = 8192 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  check_begin();
  if (argc < 2) {
    fprintf(stderr, "usage: late_rank <xml>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  setenv("SIDECORE_COLLECTIVE_NOTICE", "1", 1);
  if (check_rank == size - 1) {
    struct timespec late = {2, 500 * 1000 * 1000};
    nanosleep(&late, NULL);
  }
  const double start = check_now();
  if (!EXPECT_OK(damaris_initialize(argv[1], MPI_COMM_WORLD))) MPI_Abort(MPI_COMM_WORLD, 2);
  if (check_rank == 0) EXPECT(check_now() - start >= 2.0); /* it did wait for the late rank */
  int is_client = -1;
  EXPECT_STARTED(damaris_start(&is_client));
  if (is_client) {
    static double data[N];
    for (int i = 0; i < N; ++i) data[i] = i;
    for (int it = 0; it < 2; ++it) {
      EXPECT_OK(damaris_write("data", data));
      EXPECT_OK(damaris_end_iteration());
    }
    EXPECT_OK(damaris_sync());
    sidecore_stats_t stats = SIDECORE_STATS_INIT;
    if (EXPECT_OK(sidecore_stats(&stats))) {
      EXPECT(stats.flags & SIDECORE_STATS_WRITER);
      EXPECT(stats.blocks_received == 2);
      EXPECT(stats.iterations_stored == 2);
    }
    EXPECT_STARTED(damaris_stop());
  }
  EXPECT_OK(damaris_finalize());
  const int status = check_finish("late_rank");
  MPI_Finalize();
  return status;
}
