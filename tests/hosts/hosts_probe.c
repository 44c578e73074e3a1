/* Prints, for every rank: its host name, MPI_Get_processor_name, the size of its
 * MPI_COMM_TYPE_SHARED communicator and how many of the job's probe files it sees in
 * /dev/shm. Each rank creates /dev/shm/<prefix>_<rank>; after a barrier it counts the
 * probe files of all ranks that are visible. Output, one line per rank:
 *   rank=<r> host=<h> proc=<p> shared=<n> seen=<k>
 * Usage: hosts_probe [prefix]   (default prefix: hosts_probe_<pid of rank 0>) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* A prefix common to all ranks: given, or derived from rank 0's pid. */
  char prefix[128];
  if (argc > 1) {
    snprintf(prefix, sizeof prefix, "%s", argv[1]);
  } else {
    long id = (long)getpid();
    MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(prefix, sizeof prefix, "hosts_probe_%ld", id);
  }

  char host[256] = "";
  gethostname(host, sizeof host - 1);
  char proc[MPI_MAX_PROCESSOR_NAME] = "";
  int len = 0;
  MPI_Get_processor_name(proc, &len);

  MPI_Comm shared;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
  int shared_size = 0;
  MPI_Comm_size(shared, &shared_size);

  char path[512];
  snprintf(path, sizeof path, "/dev/shm/%s_%d", prefix, rank);
  FILE* f = fopen(path, "w");
  if (!f) {
    perror(path);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  fprintf(f, "%d\n", rank);
  fclose(f);
  MPI_Barrier(MPI_COMM_WORLD);

  int seen = 0;
  for (int r = 0; r < size; ++r) {
    snprintf(path, sizeof path, "/dev/shm/%s_%d", prefix, r);
    if (access(path, F_OK) == 0) ++seen;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  snprintf(path, sizeof path, "/dev/shm/%s_%d", prefix, rank);
  unlink(path);

  /* Lines are gathered to rank 0 so that they come out in rank order. */
  char line[768];
  snprintf(line, sizeof line, "rank=%d host=%s proc=%s shared=%d seen=%d", rank, host, proc,
           shared_size, seen);
  char* all = NULL;
  if (rank == 0) all = malloc((size_t)size * sizeof line);
  MPI_Gather(line, (int)sizeof line, MPI_CHAR, all, (int)sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < size; ++r) printf("%s\n", all + (size_t)r * sizeof line);
    fflush(stdout);
    free(all);
  }
  MPI_Comm_free(&shared);
  MPI_Finalize();
  return 0;
}
