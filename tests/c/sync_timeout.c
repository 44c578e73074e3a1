/* damaris_sync waits at most the buffer's timeout, in every mode that has something to wait
 * for: a store that takes 2 s and a timeout of 0.5 s make it fail with DAMARIS_CHANNEL_ERROR
 * (the data is still stored: finalize waits for it); a later sync does not take the late
 * answer to that one for its own. Usage: sync_timeout <xml> */
#include <Damaris.h>
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  check_begin();
  if (argc < 2) {
    fprintf(stderr, "usage: sync_timeout <xml>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (!EXPECT_OK(damaris_initialize(argv[1], MPI_COMM_WORLD))) MPI_Abort(MPI_COMM_WORLD, 2);
  int is_client = -1;
  EXPECT_STARTED(damaris_start(&is_client));
  if (is_client == 1) {
    double field[12] = {0};
    EXPECT_OK(damaris_write("field", field));
    EXPECT_OK(damaris_end_iteration());
    const double start = check_now();
    EXPECT_RC(damaris_sync(), DAMARIS_CHANNEL_ERROR, "within", NULL);
    const double waited = check_now() - start;
    if (!EXPECT(waited < 1.5)) fprintf(stderr, "    damaris_sync waited %.2f s\n", waited);
    /* A second iteration, and a sync once the first one is stored (its late answer to the
     * first sync arrives meanwhile): the second is not stored yet, so this sync must time out
     * too, not take that stale answer for its own. */
    EXPECT_OK(damaris_write("field", field));
    EXPECT_OK(damaris_end_iteration());
    const struct timespec pause = {2, 500000000L};
    nanosleep(&pause, NULL);
    EXPECT_RC(damaris_sync(), DAMARIS_CHANNEL_ERROR, NULL, NULL);
    EXPECT_STARTED(damaris_stop());
  }
  EXPECT_OK(damaris_finalize());
  int status = check_finish("sync_timeout");
  MPI_Finalize();
  return status;
}
