/* End-to-end writer: several variables and types, two domains per client, block positions,
 * a parameter set at run time, a layout whose size changes every iteration, write and
 * alloc/commit/clear, and an event resolved in the executable. Values follow formulas that
 * tests/mpi/check_output.py recomputes. Usage: e2e_writer <xml> <iterations> */
#include <Damaris.h>
#include <dirent.h>
#include <mpi.h>
#include <sidecore/schedule.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../initialize_or_leave.h"

#define NX 8
#define NY 6

/* DAMARIS_NO_SERVER is what damaris_start and damaris_stop return, as in Damaris, when the
 * configuration has no dedicated cores or nodes: every process is then a client. */
static void check(int rc, const char* call) {
  if (rc != DAMARIS_OK && rc != DAMARIS_NO_SERVER) {
    fprintf(stderr, "e2e_writer: %s returned %d (%s): %s\n", call, rc, damaris_error_string(rc),
            damaris_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

/* Event action found by name in the executable: records that it ran. */
void e2e_mark(const char* name, int32_t source, int32_t iteration, const char* args) {
  (void)args;
  /* E2E_SLOW_MS makes whoever runs the event (the server, or the I/O thread) slower than the
   * clients, so that buffers fill up and back-pressure is exercised. */
  const char* slow = getenv("E2E_SLOW_MS");
  if (slow) usleep((useconds_t)atoi(slow) * 1000u);
  const char* dir = getenv("E2E_OUT");
  if (!dir) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/event_%s_it%d_src%d", dir, name, iteration, source);
  FILE* f = fopen(path, "w");
  if (f) fclose(f);
}

/* E2E_PHASES="other_ms,compute_ms": after each iteration the client spends other_ms outside
 * a compute phase (as if communicating), then computes compute_ms between
 * sidecore_compute_begin and sidecore_compute_end, and appends the compute interval (seconds
 * of the node's monotonic clock) to E2E_OUT/phases.<rank>.csv. */
static double monotonic_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void run_phases(const char* spec, int rank) {
  int other_ms = 0, compute_ms = 0;
  if (sscanf(spec, "%d,%d", &other_ms, &compute_ms) != 2) return;
  usleep((useconds_t)other_ms * 1000u);
  /* The interval written covers the whole phase as the writer can see it. */
  const double begin = monotonic_seconds();
  check(sidecore_compute_begin(), "sidecore_compute_begin");
  usleep((useconds_t)compute_ms * 1000u);
  check(sidecore_compute_end(), "sidecore_compute_end");
  const double end = monotonic_seconds();
  const char* dir = getenv("E2E_OUT");
  char path[4096];
  snprintf(path, sizeof path, "%s/phases.%d.csv", dir ? dir : ".", rank);
  FILE* f = fopen(path, "a");
  if (f) {
    fprintf(f, "%.6f,%.6f\n", begin, end);
    fclose(f);
  }
}

/* Files in E2E_OUT (or its particles/ folder) whose name starts with prefix. */
static int count_files(const char* sub, const char* prefix) {
  const char* dir = getenv("E2E_OUT");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", sub);
  DIR* d = opendir(path);
  if (!d) return 0;
  int n = 0;
  for (struct dirent* e; (e = readdir(d));)
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) ++n;
  closedir(d);
  return n;
}

int main(int argc, char** argv) {
  /* E2E_THREAD_MULTIPLE=1 asks MPI for full thread support (needed by Collective output from
   * a background I/O thread). */
  if (getenv("E2E_THREAD_MULTIPLE")) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided != MPI_THREAD_MULTIPLE) {
      fprintf(stderr, "e2e_writer: MPI does not provide MPI_THREAD_MULTIPLE\n");
      MPI_Abort(MPI_COMM_WORLD, 4);
    }
  } else {
    MPI_Init(&argc, &argv);
  }
  if (argc < 3) {
    fprintf(stderr, "usage: e2e_writer <xml> <iterations>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int iterations = atoi(argv[2]);
  initialize_or_leave("e2e_writer", argv[1]);
  int is_client = -1;
  check(damaris_start(&is_client), "damaris_start");
  if (is_client) {
    MPI_Comm comm;
    check(damaris_client_comm_get(&comm), "damaris_client_comm_get");
    int rank, size, world_rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(comm, &size);
    check(damaris_parameter_set("clients", &size, sizeof size), "damaris_parameter_set");
    int got = 0;
    check(damaris_parameter_get("clients", &got, sizeof got), "damaris_parameter_get");
    if (got != size) {
      fprintf(stderr, "parameter_get returned %d, expected %d\n", got, size);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (int b = 0; b < 2; ++b) {
      int64_t column = (int64_t)(rank * 2 + b) * NX;
      int64_t pos2[2] = {0, column};
      int64_t pos3[3] = {0, 0, column};
      int64_t pos1[1] = {column};
      check(damaris_set_block_position("temperature", b, pos2), "damaris_set_block_position");
      check(damaris_set_block_position("fluid/pressure", b, pos3), "damaris_set_block_position");
      check(damaris_set_block_position("ids", b, pos1), "damaris_set_block_position");
    }
    double temperature[NY][NX];
    int ids[NX];
    /* E2E_LAG_MS makes the last client slower than the others, so that clients of one server
     * are out of step (the others fill the buffer with later iterations). */
    const char* lag = getenv("E2E_LAG_MS");
    for (int it = 0; it < iterations; ++it) {
      if (lag && rank == size - 1) usleep((useconds_t)atoi(lag) * 1000u);
      for (int b = 0; b < 2; ++b) {
        int gx0 = (rank * 2 + b) * NX;
        for (int y = 0; y < NY; ++y)
          for (int x = 0; x < NX; ++x) temperature[y][x] = it * 1000.0 + y * 100.0 + gx0 + x + 0.5;
        check(damaris_write_block("temperature", b, temperature), "damaris_write_block");
        for (int x = 0; x < NX; ++x) ids[x] = it * 100000 + gx0 + x;
        check(damaris_write_block("ids", b, ids), "damaris_write_block");
        /* zero copy */
        float* p = NULL;
        check(damaris_alloc_block("fluid/pressure", b, (void**)&p), "damaris_alloc_block");
        for (int a = 0; a < 2; ++a)
          for (int c = 0; c < 3; ++c)
            for (int x = 0; x < NX; ++x)
              p[(a * 3 + c) * NX + x] = it * 10000.0f + a * 1000 + c * 100 + gx0 + x;
        if (b == 0) {
          check(damaris_commit_block("fluid/pressure", b), "damaris_commit_block");
          check(damaris_clear_block("fluid/pressure", b), "damaris_clear_block");
        } else {
          check(damaris_commit_block_iteration("fluid/pressure", b, it),
                "damaris_commit_block_iteration");
          check(damaris_clear_block_iteration("fluid/pressure", b, it),
                "damaris_clear_block_iteration");
        }
      }
      /* A block whose size changes every iteration: NP = 3 + it + rank. */
      int np = 3 + it + rank;
      check(damaris_parameter_set("NP", &np, sizeof np), "damaris_parameter_set");
      long long* particles = malloc(sizeof *particles * np);
      for (int i = 0; i < np; ++i) particles[i] = (long long)it * 1000000 + rank * 1000 + i;
      check(damaris_write("particles", particles), "damaris_write");
      free(particles);
      check(damaris_write("heartbeat", &it), "damaris_write");
      check(damaris_signal("mark"), "damaris_signal");
      check(damaris_end_iteration(), "damaris_end_iteration");
      if (getenv("E2E_PHASES")) run_phases(getenv("E2E_PHASES"), world_rank);
      /* E2E_COMPUTE_MS: time between iterations, without phase marks. */
      if (getenv("E2E_COMPUTE_MS")) usleep((useconds_t)atoi(getenv("E2E_COMPUTE_MS")) * 1000u);
      /* damaris_sync: once it returns, this iteration's files exist, whatever the mode.
       * E2E_NO_SYNC lets the clients run ahead of their servers instead. */
      if (!getenv("E2E_NO_SYNC")) {
        check(damaris_sync(), "damaris_sync");
        char prefix[64];
        snprintf(prefix, sizeof prefix, "e2e_It%d", it);
        if (count_files("", prefix) == 0 || count_files("particles", prefix) == 0) {
          fprintf(stderr, "after damaris_sync, no file of iteration %d in E2E_OUT\n", it);
          MPI_Abort(MPI_COMM_WORLD, 5);
        }
      }
      int current = -1;
      check(damaris_get_iteration(&current), "damaris_get_iteration");
      if (current != it + 1) {
        fprintf(stderr, "get_iteration returned %d, expected %d\n", current, it + 1);
        MPI_Abort(MPI_COMM_WORLD, 3);
      }
    }
    check(damaris_stop(), "damaris_stop");
  }
  check(damaris_finalize(), "damaris_finalize");
  MPI_Finalize();
  return 0;
}
