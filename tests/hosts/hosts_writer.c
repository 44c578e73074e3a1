/* Sidecore client for tests/hosts/run_hosts_check.sh. Every client writes, for each of
 * <iterations> iterations:
 *   field  double[NY][NX], block of the global NY x (NX * clients) array at column
 *          client * NX, value it * 100000 + client * 1000 + y * NX + x + 0.5
 *   host   char[HOSTLEN], the client's host name, NUL padded
 *   wrank  int, the client's rank in MPI_COMM_WORLD
 * where client is the rank in damaris_client_comm_get. Usage: hosts_writer <xml> <iterations> */
#include <Damaris.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NX 6
#define NY 4
#define HOSTLEN 32

static void check(int rc, const char* call) {
  if (rc != DAMARIS_OK && rc != DAMARIS_NO_SERVER) {
    fprintf(stderr, "hosts_writer: %s returned %d (%s): %s\n", call, rc, damaris_error_string(rc),
            damaris_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 3) {
    fprintf(stderr, "usage: hosts_writer <xml> <iterations>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int iterations = atoi(argv[2]);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  char host[HOSTLEN];
  memset(host, 0, sizeof host);
  gethostname(host, sizeof host - 1);

  check(damaris_initialize(argv[1], MPI_COMM_WORLD), "damaris_initialize");
  int is_client = 0;
  check(damaris_start(&is_client), "damaris_start");
  if (is_client) {
    MPI_Comm comm;
    check(damaris_client_comm_get(&comm), "damaris_client_comm_get");
    int client = 0, clients = 1;
    MPI_Comm_rank(comm, &client);
    MPI_Comm_size(comm, &clients);
    check(damaris_parameter_set("clients", &clients, sizeof clients), "damaris_parameter_set");
    int64_t position[2] = {0, (int64_t)client * NX};
    check(damaris_set_position("field", position), "damaris_set_position");
    double field[NY][NX];
    for (int it = 0; it < iterations; ++it) {
      for (int y = 0; y < NY; ++y)
        for (int x = 0; x < NX; ++x)
          field[y][x] = it * 100000.0 + client * 1000.0 + y * NX + x + 0.5;
      check(damaris_write("field", field), "damaris_write");
      check(damaris_write("host", host), "damaris_write");
      check(damaris_write("wrank", &world_rank), "damaris_write");
      check(damaris_end_iteration(), "damaris_end_iteration");
    }
    check(damaris_stop(), "damaris_stop");
    printf("hosts_writer: client %d of %d is world rank %d on %s\n", client, clients, world_rank,
           host);
  } else {
    printf("hosts_writer: server is world rank %d on %s\n", world_rank, host);
  }
  fflush(stdout);
  check(damaris_finalize(), "damaris_finalize");
  MPI_Finalize();
  return 0;
}
