/* A bad configuration seen by every rank: damaris_initialize() must return
 * DAMARIS_CONFIG_ERROR on each of them (no rank may hang in a collective or get another code),
 * with a message naming what is wrong; nothing is left initialized, and a good configuration
 * then initializes and runs in the same job.
 * Usage: config_errors <bad xml> <good xml, or -> <text the message must contain>...
 * A "%d" in <bad xml> is replaced by the rank: each rank may be given its own path. */
#include <Damaris.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  check_begin();
  if (argc < 3) {
    fprintf(stderr, "usage: config_errors <bad xml> <good xml|-> <needle>...\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  char bad[4096];
  snprintf(bad, sizeof bad, argv[1], check_rank); /* a "%d" in the path becomes the rank */
  const char* good = strcmp(argv[2], "-") == 0 ? NULL : argv[2];

  const double start = check_now();
  const int rc = damaris_initialize(bad, MPI_COMM_WORLD);
  const double seconds = check_now() - start;
  char message[4096];
  snprintf(message, sizeof message, "%s", damaris_last_error_message());
  fprintf(stderr, "[rank %d] damaris_initialize(\"%s\") = %d (%s) in %.3f s: %s\n", check_rank, bad,
          rc, damaris_error_string(rc), seconds, message);
  EXPECT(rc == DAMARIS_CONFIG_ERROR);
  for (int i = 3; i < argc; ++i) {
    if (!EXPECT(strstr(message, argv[i]) != NULL))
      fprintf(stderr, "    the message does not mention \"%s\"\n", argv[i]);
  }

  /* Nothing half-built survives the failure. */
  double data[16] = {0};
  int is_client = -1;
  EXPECT_RC(damaris_write("field", data), DAMARIS_NOT_INITIALIZED, "damaris_write", NULL);
  EXPECT_RC(damaris_start(&is_client), DAMARIS_NOT_INITIALIZED, "damaris_start", NULL);
  EXPECT_RC(damaris_finalize(), DAMARIS_NOT_INITIALIZED, "damaris_finalize", NULL);

  if (good) {
    /* The job can recover: fix the file and initialize again. */
    if (EXPECT_OK(damaris_initialize(good, MPI_COMM_WORLD))) {
      EXPECT_STARTED(damaris_start(&is_client));
      if (is_client == 1) {
        EXPECT_OK(damaris_end_iteration());
        EXPECT_STARTED(damaris_stop());
      }
      EXPECT_OK(damaris_finalize());
    }
  }
  int status = check_finish("config_errors");
  MPI_Finalize();
  return status;
}
