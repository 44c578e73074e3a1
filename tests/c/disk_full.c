/* Storage that fills up: each client writes a 64x64 field for `iterations` iterations into a
 * FilesPath too small to hold them all. Nothing may crash or hang (the dedicated core
 * segfaulted in MPI_Finalize), the failures are reported, and every file left behind is
 * complete (run_disk_full.sh reads them back).
 * Usage: disk_full <xml> <iterations>
 * SIDECORE_DISK_FULL_PAUSE_MS: a pause after each end of iteration (none unless set), for the
 * tests that stop a job while it writes and need not fill the disk meanwhile. */
#include <Damaris.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../initialize_or_leave.h"
#include "check.h"

/* Field side (64 unless SIDECORE_DISK_FULL_N says otherwise: the killed-writer test uses it). */
static int field_side(void) {
  const char* env = getenv("SIDECORE_DISK_FULL_N");
  return env ? atoi(env) : 64;
}

/* Stands for a compute phase that leaves the processor to others (SIDECORE_DISK_FULL_PAUSE_MS). */
static void pause_between_iterations(void) {
  const char* env = getenv("SIDECORE_DISK_FULL_PAUSE_MS");
  const long ms = env ? atol(env) : 0;
  if (ms <= 0) return;
  const struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  check_begin();
  if (argc < 3) {
    fprintf(stderr, "usage: disk_full <xml> <iterations>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int iterations = atoi(argv[2]);
  initialize_or_leave("disk_full", argv[1]);
  int is_client = -1;
  const int started = damaris_start(&is_client);
  if (is_client) {
    EXPECT_STARTED(started);
    MPI_Comm comm;
    int source = 0;
    EXPECT_OK(damaris_client_comm_get(&comm));
    MPI_Comm_rank(comm, &source);
    const int n = field_side();
    double* field = malloc(sizeof(double) * (size_t)n * (size_t)n);
    int reported = 0;
    for (int it = 0; it < iterations; ++it) {
      for (int i = 0; i < n * n; ++i) field[i] = it * 1e6 + source * 1e5 + i;
      EXPECT_OK(damaris_write("field", field));
      /* A store failure reaches the program at the next end of iteration (or sync). */
      const int rc = damaris_end_iteration();
      if (rc != DAMARIS_OK) {
        EXPECT(rc == DAMARIS_ERROR_UNKNOWN);
        ++reported;
      }
      pause_between_iterations();
    }
    const int synced = damaris_sync();
    if (synced != DAMARIS_OK) ++reported;
    if (n == 64 && !EXPECT(reported > 0))
      fprintf(stderr, "no call told the program its data was lost\n");
    free(field);
    damaris_stop();
  } else {
    /* The dedicated core reports that its stores failed. */
    EXPECT(started == DAMARIS_ERROR_UNKNOWN);
  }
  damaris_finalize();
  const int status = check_finish("disk_full");
  MPI_Finalize();
  return status;
}
