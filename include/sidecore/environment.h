/* Sidecore extension: where this process stands in the run, the answers Damaris gives through
 * its Environment class and damaris4py (is it a client, a dedicated core or node, how many
 * clients, cores and servers per node, how many nodes, the run's magic number, which clients a
 * server receives blocks from).
 *
 * Copyright (c) 2026, the Sidecore developers. SPDX-License-Identifier: BSD-3-Clause
 *
 * Every call works on clients and servers between damaris_initialize() and damaris_finalize()
 * (DAMARIS_NOT_INITIALIZED otherwise), never waits and never talks to another process. The
 * answers do not change during a run. Any thread may call them. A failure returns a code from
 * Damaris.h and leaves a message for sidecore_environment_last_error(). */
#ifndef SIDECORE_ENVIRONMENT_H
#define SIDECORE_ENVIRONMENT_H

#include <Damaris.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIDECORE_MAGIC_NUMBER_CAPACITY 64

typedef struct sidecore_environment_t {
  int32_t is_client;          /* 1 on a simulation process, 0 on a dedicated core or node */
  int32_t has_servers;        /* 1 with dedicated cores or nodes */
  int32_t is_dedicated_core;  /* 1 on a dedicated core */
  int32_t is_dedicated_node;  /* 1 on a process of a dedicated node */
  int32_t clients_per_node;   /* simulation processes per node */
  int32_t cores_per_node;     /* processes per node, clients and servers */
  int32_t servers_per_node;   /* dedicated cores per node (on a dedicated node: its processes) */
  int32_t number_of_nodes;    /* nodes of the job, dedicated nodes included */
  int32_t known_client_count; /* entries sidecore_environment_known_clients() gives */
  /* The run's name, the same on every process ("1764136123456": rank 0's clock in ms at
   * damaris_initialize, as Damaris makes it), NUL-terminated. */
  char magic_number[SIDECORE_MAGIC_NUMBER_CAPACITY];
} sidecore_environment_t;

/* Fills *out. Returns DAMARIS_OK, DAMARIS_ARGUMENT_ERROR (NULL out), DAMARIS_NOT_INITIALIZED. */
int sidecore_environment_get(sidecore_environment_t* out);

/* The client indices (ranks in the clients' communicator) whose blocks this process receives:
 * on a server the clients it serves; on a client without dedicated resources itself; none on a
 * client with dedicated resources (Damaris's listknownclients()). Copies at most capacity of
 * them into clients (which may be NULL when capacity is 0) and the full count into *count.
 * Returns DAMARIS_OK, DAMARIS_ARGUMENT_ERROR (NULL count, negative capacity, NULL clients with a
 * capacity), DAMARIS_NOT_INITIALIZED. */
int sidecore_environment_known_clients(int32_t* clients, int32_t capacity, int32_t* count);

/* The servers' communicator (Damaris's getservercomm() on a dedicated core or node). It belongs
 * to Sidecore: do not free it. Returns DAMARIS_OK, DAMARIS_NO_SERVER (this process is not a
 * server: *comm is MPI_COMM_NULL), DAMARIS_ARGUMENT_ERROR, DAMARIS_NOT_INITIALIZED. */
int sidecore_server_comm_get(MPI_Comm* comm);

/* Sidecore's duplicate of the communicator given to damaris_initialize(), clients and servers
 * alike (Damaris's getglobalcomm()). It belongs to Sidecore: do not free it. Returns DAMARIS_OK,
 * DAMARIS_ARGUMENT_ERROR, DAMARIS_NOT_INITIALIZED. */
int sidecore_global_comm_get(MPI_Comm* comm);

/* The message of the last failed call on this thread ("" if none): an alias of
 * damaris_last_error_message(). */
const char* sidecore_environment_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* SIDECORE_ENVIRONMENT_H */
