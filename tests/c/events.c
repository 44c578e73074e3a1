/* Where and how often event actions run. Every action appends one line to a log file of the
 * process that ran it (role, rank, pid, event, source, iteration, and whether the bound
 * function or the executable's symbol ran); run_c_test.py counts the lines against the
 * topology. Usage: events <xml> <output dir> <iterations> */
#include <Damaris.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static const char* g_out = ".";
static const char* g_role = "unknown";
static int g_rank = -1;

static void record(const char* event, const char* via, int source, int iteration) {
  char path[4096];
  snprintf(path, sizeof path, "%s/events_rank%d.log", g_out, g_rank);
  FILE* f = fopen(path, "a");
  if (!f) {
    fprintf(stderr, "events: cannot open %s\n", path);
    return;
  }
  fprintf(f, "event=%s via=%s role=%s rank=%d pid=%ld source=%d iteration=%d\n", event, via, g_role,
          g_rank, (long)getpid(), source, iteration);
  fclose(f);
}

/* Found by name in the executable (the library links it with --export-dynamic). */
void events_symbol(const char* name, int32_t source, int32_t iteration, const char* args) {
  (void)args;
  record(name, "symbol", (int)source, (int)iteration);
}

/* The executable's function for "bound_ev" and "local_bound_ev": damaris_bind() must win. */
void events_overridden(const char* name, int32_t source, int32_t iteration, const char* args) {
  (void)args;
  record(name, "symbol", (int)source, (int)iteration);
}

static void events_bound(const char* name, int32_t source, int32_t iteration, const char* args) {
  (void)args;
  record(name, "bound", (int)source, (int)iteration);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  check_begin();
  if (argc < 4) {
    fprintf(stderr, "usage: events <xml> <output dir> <iterations>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  g_out = argv[2];
  const int iterations = atoi(argv[3]);
  g_rank = check_rank;

  EXPECT_OK(damaris_bind("bound_ev", events_bound));
  if (!EXPECT_OK(damaris_initialize(argv[1], MPI_COMM_WORLD))) MPI_Abort(MPI_COMM_WORLD, 2);
  /* Bound after initialize, before start: also in time. */
  EXPECT_OK(damaris_bind("local_bound_ev", events_bound));

  MPI_Comm comm = MPI_COMM_NULL;
  const int rc = damaris_client_comm_get(&comm);
  EXPECT(rc == DAMARIS_OK || rc == DAMARIS_CORE_IS_SERVER);
  g_role = rc == DAMARIS_OK ? "client" : "server";
  record("hello", "none", -1, -1);

  int is_client = -1;
  EXPECT_STARTED(damaris_start(&is_client));
  if (is_client == 1) {
    int source = -1, clients = 1;
    MPI_Comm_rank(comm, &source);
    MPI_Comm_size(comm, &clients);
    for (int it = 0; it < iterations; ++it) {
      EXPECT_OK(damaris_signal("core_ev"));
      EXPECT_OK(damaris_signal("core_ev"));
      EXPECT_OK(damaris_signal("group_ev"));
      EXPECT_OK(damaris_signal("local_ev"));
      EXPECT_OK(damaris_signal("bound_ev"));
      EXPECT_OK(damaris_signal("local_bound_ev"));
      /* One client per iteration broadcasts, in turn. */
      if (it % clients == source) EXPECT_OK(damaris_signal("bcast_ev"));
      EXPECT_OK(damaris_end_iteration());
    }
    EXPECT_STARTED(damaris_stop());
  }
  EXPECT_OK(damaris_finalize());
  int status = check_finish("events");
  MPI_Finalize();
  return status;
}
