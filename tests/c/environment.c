/* sidecore/environment.h, the answers Damaris gives through its Environment and damaris4py,
 * checked against the job's shape recomputed here from MPI_COMM_WORLD (servers are the last
 * <cores> ranks of each node of <ranks per node> ranks), on clients and servers, before and
 * after a run, with every argument error. Usage: environment <xml> <cores> <ranks per node> */
#include <Damaris.h>
#include <mpi.h>
#include <sidecore/environment.h>
#include <sidecore/stats.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  check_begin();
  if (argc != 4) {
    fprintf(stderr, "usage: environment <xml> <cores> <ranks per node>\n");
    MPI_Finalize();
    return 2;
  }
  const int cores = atoi(argv[2]);
  const int per_node = atoi(argv[3]);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int nodes = size / per_node, node = rank / per_node, node_rank = rank % per_node;
  const int server = cores > 0 && node_rank >= per_node - cores;
  const int clients_per_node = per_node - cores;

  sidecore_environment_t e;
  MPI_Comm comm = MPI_COMM_NULL;
  int32_t count = -1;
  /* No run yet: nothing to answer. */
  EXPECT(sidecore_environment_get(&e) == DAMARIS_NOT_INITIALIZED);
  EXPECT(strstr(sidecore_environment_last_error(), "before damaris_initialize") != NULL);
  EXPECT(sidecore_global_comm_get(&comm) == DAMARIS_NOT_INITIALIZED);

  if (EXPECT_OK(damaris_initialize(argv[1], MPI_COMM_WORLD))) {
    EXPECT(sidecore_environment_get(NULL) == DAMARIS_ARGUMENT_ERROR);
    EXPECT(strstr(sidecore_environment_last_error(), "out is NULL") != NULL);
    /* One error slot per thread: every *_last_error function returns the latest failure. */
    EXPECT(strcmp(damaris_last_error_message(), "sidecore_environment_get: out is NULL") == 0);
    EXPECT(strcmp(sidecore_stats_last_error(), damaris_last_error_message()) == 0);
    EXPECT(sidecore_environment_known_clients(NULL, 0, NULL) == DAMARIS_ARGUMENT_ERROR);
    EXPECT(sidecore_environment_known_clients(NULL, 2, &count) == DAMARIS_ARGUMENT_ERROR);
    EXPECT(sidecore_environment_known_clients(NULL, -1, &count) == DAMARIS_ARGUMENT_ERROR);
    EXPECT(sidecore_server_comm_get(NULL) == DAMARIS_ARGUMENT_ERROR);

    memset(&e, 0x5a, sizeof e);
    EXPECT_OK(sidecore_environment_get(&e));
    EXPECT(e.is_client == !server);
    EXPECT(e.has_servers == (cores > 0));
    EXPECT(e.is_dedicated_core == server);
    EXPECT(e.is_dedicated_node == 0);
    EXPECT(e.clients_per_node == clients_per_node);
    EXPECT(e.cores_per_node == per_node);
    EXPECT(e.servers_per_node == cores);
    EXPECT(e.number_of_nodes == nodes);
    EXPECT(memchr(e.magic_number, '\0', sizeof e.magic_number) != NULL);
    EXPECT(strlen(e.magic_number) > 0 &&
           strspn(e.magic_number, "0123456789") == strlen(e.magic_number));
    /* The same magic number on every rank: rank 0's, broadcast, must equal each rank's. */
    char magic0[SIDECORE_MAGIC_NUMBER_CAPACITY];
    memcpy(magic0, e.magic_number, sizeof magic0);
    MPI_Bcast(magic0, (int)sizeof magic0, MPI_CHAR, 0, MPI_COMM_WORLD);
    EXPECT(strcmp(magic0, e.magic_number) == 0);

    /* Which clients' blocks this process receives. */
    int32_t known[16];
    EXPECT_OK(sidecore_environment_known_clients(known, 16, &count));
    EXPECT(count == e.known_client_count);
    if (server) {
      EXPECT(count == clients_per_node);
      for (int32_t i = 0; i < count && i < 16; ++i) EXPECT(known[i] == node * clients_per_node + i);
      /* A short array gets what fits, and the full count. */
      int32_t first = -1;
      EXPECT_OK(sidecore_environment_known_clients(&first, 1, &count));
      EXPECT(first == node * clients_per_node && count == clients_per_node);
    } else if (cores > 0) {
      EXPECT(count == 0);
    } else {
      EXPECT(count == 1 && known[0] == rank);
    }

    /* Communicators: the servers' on a server (DAMARIS_NO_SERVER and MPI_COMM_NULL on a
     * client), the whole job's everywhere. */
    const int server_rc = sidecore_server_comm_get(&comm);
    if (server) {
      EXPECT(server_rc == DAMARIS_OK);
      int n = 0, r = -1, before = 0;
      MPI_Comm_size(comm, &n);
      MPI_Comm_rank(comm, &r);
      EXPECT(n == nodes * cores);
      before = node * cores + (node_rank - clients_per_node);
      EXPECT(r == before);
    } else {
      EXPECT(server_rc == DAMARIS_NO_SERVER && comm == MPI_COMM_NULL);
    }
    EXPECT_OK(sidecore_global_comm_get(&comm));
    int same = MPI_UNEQUAL;
    MPI_Comm_compare(comm, MPI_COMM_WORLD, &same);
    EXPECT(same == MPI_CONGRUENT);

    int is_client = -1;
    EXPECT_STARTED(damaris_start(&is_client));
    EXPECT(is_client == !server);
    if (is_client) EXPECT_STARTED(damaris_stop());
    EXPECT_OK(damaris_finalize());
    /* After the run: nothing to answer again. */
    EXPECT(sidecore_environment_get(&e) == DAMARIS_NOT_INITIALIZED);
  }
  const int status = check_finish("environment");
  MPI_Finalize();
  return status;
}
