/* A process of the job dies (the driver sends SIGKILL) while the launcher keeps the job alive
 * (mpirun --enable-recovery): the survivors must learn it within the buffer's timeout and the
 * job end with one message naming the dead rank. Clients write a field per iteration and
 * exchange a value among themselves after each (as a halo exchange would), so that a survivor
 * also sits in an MPI call of its own when its peer dies.
 * Each process first writes <dir>/pid.<rank> holding its process id, for the driver.
 * Usage: peer_death <xml> <dir> <iterations> <milliseconds per iteration> */
#include <Damaris.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../initialize_or_leave.h"

enum { N = 64 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 5) {
    fprintf(stderr, "usage: peer_death <xml> <dir> <iterations> <milliseconds>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int iterations = atoi(argv[3]);
  const long pause_ms = atol(argv[4]);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char path[4096];
  snprintf(path, sizeof path, "%s/pid.%d", argv[2], rank);
  FILE* f = fopen(path, "w");
  if (!f) MPI_Abort(MPI_COMM_WORLD, 1);
  fprintf(f, "%ld\n", (long)getpid());
  fclose(f);
  initialize_or_leave("peer_death", argv[1]);
  int is_client = -1;
  damaris_start(&is_client);
  if (is_client) {
    MPI_Comm comm;
    int source = 0;
    damaris_client_comm_get(&comm);
    MPI_Comm_rank(comm, &source);
    static double field[N * N];
    const struct timespec pause = {pause_ms / 1000, (pause_ms % 1000) * 1000000L};
    for (int it = 0; it < iterations; ++it) {
      for (int i = 0; i < N * N; ++i) field[i] = it * 1e6 + source * 1e5 + i;
      damaris_write("field", field);
      damaris_end_iteration();
      double mine = it, sum = 0;
      MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
      nanosleep(&pause, NULL);
    }
    damaris_stop();
  }
  damaris_finalize();
  MPI_Finalize();
  return 0;
}
