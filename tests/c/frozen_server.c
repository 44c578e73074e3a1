/* A dedicated core or node frozen (SIGSTOP) while its client writes: the first write that needs it
 * waits its timeout and fails; the next ones fail at once instead of waiting again (the core
 * has not moved since); once it runs again (SIGCONT) writes succeed and nothing is lost.
 * Usage: frozen_server <xml> (2 ranks: client 0, dedicated core or node 1; buffer of 3 blocks) */
#include <Damaris.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

enum { N = 8192 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  check_begin();
  if (argc < 2) {
    fprintf(stderr, "usage: frozen_server <xml>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* The dedicated core (last rank) tells the client who it is. */
  int size = 1, server_pid = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int mine = (int)getpid();
  MPI_Bcast(check_rank == size - 1 ? &mine : &server_pid, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
  if (!EXPECT_OK(damaris_initialize(argv[1], MPI_COMM_WORLD))) MPI_Abort(MPI_COMM_WORLD, 2);
  int is_client = -1;
  EXPECT_STARTED(damaris_start(&is_client));
  if (is_client) {
    static double data[N];
    for (int i = 0; i < N; ++i) data[i] = i;
    EXPECT(kill((pid_t)server_pid, SIGSTOP) == 0);
    /* The buffer holds three blocks: then a write needs the frozen core to free one. */
    int it = 0;
    for (; it < 3; ++it) {
      EXPECT_OK(damaris_write("data", data));
      EXPECT_OK(damaris_end_iteration());
    }
    double start = check_now();
    EXPECT_RC(damaris_write("data", data), DAMARIS_ALLOCATION_ERROR, "damaris_write", NULL);
    const double first = check_now() - start;
    EXPECT(first >= 0.9); /* it waited its timeout (1 s) */
    start = check_now();
    for (int k = 0; k < 5; ++k)
      EXPECT_RC(damaris_write("data", data), DAMARIS_ALLOCATION_ERROR, "damaris_write",
                "has not moved");
    const double next = check_now() - start;
    if (!EXPECT(next < 0.9)) fprintf(stderr, "five writes took %.3f s: they waited again\n", next);
    EXPECT(kill((pid_t)server_pid, SIGCONT) == 0);
    /* Running again: the iteration the failed writes belonged to ends, and the next ones go.
     * Until the core has been given a processor and moved, a write still fails at once saying
     * so (on a loaded machine that can take a while): the first write is retried for that
     * reason alone, then every write waits again and succeeds. */
    EXPECT_OK(damaris_end_iteration());
    ++it;
    int rc = DAMARIS_ALLOCATION_ERROR;
    const double resumed = check_now();
    while ((rc = damaris_write("data", data)) == DAMARIS_ALLOCATION_ERROR &&
           strstr(damaris_last_error_message(), "has not moved") != NULL &&
           check_now() - resumed < 60) {
      struct timespec nap = {0, 10 * 1000 * 1000};
      nanosleep(&nap, NULL);
    }
    if (!EXPECT(rc == DAMARIS_OK))
      fprintf(stderr, "the first write after SIGCONT: %s\n", damaris_last_error_message());
    EXPECT_OK(damaris_end_iteration());
    ++it;
    for (int k = 1; k < 3; ++k, ++it) {
      EXPECT_OK(damaris_write("data", data));
      EXPECT_OK(damaris_end_iteration());
    }
    EXPECT_OK(damaris_sync());
    EXPECT_STARTED(damaris_stop());
  }
  EXPECT_OK(damaris_finalize());
  const int status = check_finish("frozen_server");
  MPI_Finalize();
  return status;
}
