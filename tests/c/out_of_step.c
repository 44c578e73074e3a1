/* Clients out of step: one client (0, or the one --stopper names) stops after `stop_at`
 * iterations (0: right after damaris_start) while the others write `iterations` iterations. Nothing
 * may hang, whatever the mode, and every block written must be stored (checked by run_c_test.py
 * --check out_of_step); iterations the stopping client left out are marked incomplete. With --sync
 * the others call damaris_sync after every iteration: a client that stopped must not hold their
 * data back, so each sync returns DAMARIS_OK, and sooner than the buffer's timeout
 * (--sync-bound seconds). With --thread-multiple MPI is initialized with MPI_THREAD_MULTIPLE (the
 * background I/O threads then store together, as mpi4py programs run them). With
 * --no-finalize no process calls damaris_stop or damaris_finalize: MPI_Finalize must finalize
 * Sidecore, storing every iteration.
 * Usage: out_of_step <xml> <iterations> [--stop-at N] [--stopper C] [--sync] [--sync-bound S]
 *                    [--thread-multiple] [--no-finalize] */
#include <Damaris.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "values.h"

int main(int argc, char** argv) {
  int stop_at = 0, stopper = 0, sync = 0, thread_multiple = 0, finalize = 1;
  double sync_bound = 2.0;
  for (int a = 3; a < argc; ++a) {
    if (strcmp(argv[a], "--stop-at") == 0 && a + 1 < argc)
      stop_at = atoi(argv[++a]);
    else if (strcmp(argv[a], "--stopper") == 0 && a + 1 < argc)
      stopper = atoi(argv[++a]);
    else if (strcmp(argv[a], "--sync") == 0)
      sync = 1;
    else if (strcmp(argv[a], "--sync-bound") == 0 && a + 1 < argc)
      sync_bound = atof(argv[++a]);
    else if (strcmp(argv[a], "--thread-multiple") == 0)
      thread_multiple = 1;
    else if (strcmp(argv[a], "--no-finalize") == 0)
      finalize = 0;
    else {
      fprintf(stderr, "out_of_step: unknown argument %s\n", argv[a]);
      return 2;
    }
  }
  if (thread_multiple) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided != MPI_THREAD_MULTIPLE) {
      fprintf(stderr, "out_of_step: MPI does not provide MPI_THREAD_MULTIPLE\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  } else {
    MPI_Init(&argc, &argv);
  }
  check_begin();
  if (argc < 3) {
    fprintf(stderr,
            "usage: out_of_step <xml> <iterations> [--stop-at N] [--stopper C] [--sync] "
            "[--sync-bound S] [--thread-multiple] [--no-finalize]\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int iterations = atoi(argv[2]);
  if (!EXPECT_OK(damaris_initialize(argv[1], MPI_COMM_WORLD))) MPI_Abort(MPI_COMM_WORLD, 2);
  int is_client = -1;
  EXPECT_STARTED(damaris_start(&is_client));
  if (is_client) {
    MPI_Comm comm;
    int source = -1;
    EXPECT_OK(damaris_client_comm_get(&comm));
    MPI_Comm_rank(comm, &source);
    const int last = source == stopper ? stop_at : iterations;
    double field[VALUES_NX * VALUES_NY];
    const int64_t position[2] = {0, (int64_t)source * VALUES_NX};
    double slowest = 0.0;
    int syncing = sync && source != stopper;
    for (int it = 0; it < last; ++it) {
      values_field(field, it, source, 0);
      EXPECT_OK(damaris_set_position("field", position));
      EXPECT_OK(damaris_write("field", field));
      EXPECT_OK(damaris_end_iteration());
      if (!syncing) continue;
      const double begin = check_now();
      const int rc = damaris_sync();
      const double took = check_now() - begin;
      if (took > slowest) slowest = took;
      /* One late or failed sync is enough to tell: the next would wait as long. */
      if (!EXPECT_OK(rc) || !EXPECT(took < sync_bound)) {
        fprintf(stderr, "[rank %d] damaris_sync after iteration %d took %.3f s (bound %.3f s)\n",
                check_rank, it, took, sync_bound);
        syncing = 0;
      }
    }
    if (sync && source != stopper)
      printf("[rank %d] slowest damaris_sync: %.3f s\n", check_rank, slowest);
    if (finalize) EXPECT_STARTED(damaris_stop());
  }
  if (!finalize) {
    /* No collective here: the dedicated resources still serve until the clients' MPI_Finalize
     * stops them. Each rank answers for itself (mpirun reports a non-zero status). */
    const int failures = check_failures;
    MPI_Finalize();
    if (failures) fprintf(stderr, "out_of_step: %d failed expectation(s)\n", failures);
    return failures ? 1 : 0;
  }
  EXPECT_OK(damaris_finalize());
  const int status = check_finish("out_of_step");
  MPI_Finalize();
  return status;
}
