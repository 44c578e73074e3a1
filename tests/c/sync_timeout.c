/* damaris_sync waits at most the buffer's timeout, in every mode that has something to wait
 * for: a store that takes 2 s and a timeout of 0.5 s make it fail with DAMARIS_CHANNEL_ERROR
 * (the data is still stored: finalize waits for it). Usage: sync_timeout <xml> */
#include <Damaris.h>
#include <mpi.h>
#include <stdio.h>

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
    EXPECT_STARTED(damaris_stop());
  }
  EXPECT_OK(damaris_finalize());
  int status = check_finish("sync_timeout");
  MPI_Finalize();
  return status;
}
