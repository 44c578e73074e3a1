/* A store that fails at run time: after initialization (the stores checked their directory)
 * the output directory is replaced by a plain file, so every later file creation fails. The
 * failure must reach the program: damaris_end_iteration() in synchronous mode, damaris_start()
 * on the dedicated core otherwise; nothing hangs and finalize still succeeds everywhere. The
 * XML sends the log to one file per process (<log FileName=".../log/fail"/>): each rank's
 * file must exist, and the failure must be in the file of the process that met it.
 * Usage: store_failure <xml> <dedicated cores: 0 or 1> <output directory named in the XML> */
#include <Damaris.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  check_begin();
  if (argc < 4) {
    fprintf(stderr, "usage: store_failure <xml> <dedicated cores> <output dir>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int cores = atoi(argv[2]);
  const char* dir = argv[3];
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) mkdir(dir, 0755);
  MPI_Barrier(MPI_COMM_WORLD);
  if (!EXPECT_OK(damaris_initialize(argv[1], MPI_COMM_WORLD))) MPI_Abort(MPI_COMM_WORLD, 2);
  /* Every store has opened; now the directory becomes a file. */
  if (rank == 0) {
    if (rmdir(dir) != 0) perror("rmdir");
    FILE* f = fopen(dir, "w");
    if (f) fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  int is_client = -1;
  int rc = damaris_start(&is_client);
  if (is_client == 1) {
    EXPECT_STARTED(rc);
    double field[12];
    for (int i = 0; i < 12; ++i) field[i] = i;
    EXPECT_OK(damaris_write("field", field));
    if (cores == 0)
      EXPECT_RC(damaris_end_iteration(), DAMARIS_ERROR_UNKNOWN, "H5Fcreate", NULL);
    else {
      /* The dedicated core stores later: the failure may already be known (and reported
       * here) or not yet. */
      const int rc = damaris_end_iteration();
      EXPECT(rc == DAMARIS_OK || rc == DAMARIS_ERROR_UNKNOWN);
    }
    EXPECT_STARTED(damaris_stop());
  } else {
    EXPECT(is_client == 0);
    EXPECT_RC(rc, DAMARIS_ERROR_UNKNOWN, "store call(s) failed", "H5Fcreate");
  }
  EXPECT_OK(damaris_finalize());

  char path[4096], text[65536] = "", tag[64];
  /* The log folder is a sibling of the output directory (now a file: no path goes through it). */
  const char* slash = strrchr(dir, '/');
  const int parent = slash ? (int)(slash - dir) : 0;
  snprintf(path, sizeof path, "%.*s/log/fail_P%d_0.log", parent, dir, rank);
  FILE* log = fopen(path, "r");
  if (EXPECT(log != NULL)) {
    size_t n = fread(text, 1, sizeof text - 1, log);
    text[n] = '\0';
    fclose(log);
  }
  snprintf(tag, sizeof tag, "sidecore rank %d ", rank);
  if (!EXPECT(strstr(text, tag) != NULL)) fprintf(stderr, "    %s lacks \"%s\"\n", path, tag);
  if (is_client == 0 || cores == 0)
    if (!EXPECT(strstr(text, "H5Fcreate") != NULL))
      fprintf(stderr, "    %s lacks the failure\n", path);
  int status = check_finish("store_failure");
  MPI_Finalize();
  return status;
}
