/* One point of the scaling benchmark (bench/scale/run_scale.py): what Sidecore costs a client
 * as blocks, variables, iterations, clients and writers grow.
 *
 *   scale_write write <config.xml> <iterations> <variables> <blocks> <elements>
 *
 * Each client writes, per iteration, every variable v0, v1, ... as `blocks` blocks of
 * `elements` doubles (damaris_set_block_position, damaris_write_block), at consecutive positions
 * of the variable's 1-D global array: client c's block b starts at (c * blocks + b) * elements.
 * The first iteration (first touch of the buffer) is left out of the medians. Client 0 prints
 * one line of key=value pairs: start-up (initialize + start), the medians of the time in the
 * write calls and in damaris_end_iteration, sync, and stop + finalize; the write time is also
 * reduced over clients (largest median), since the slowest client is what a simulation waits
 * for.
 *
 *   scale_write check <prefix> <iteration> <variables> <global elements> <stride>
 *     Reads every variable of that iteration back with the read API (sidecore/read.h) and
 *     checks every stride-th value (stride 1: all of them) against the formula it was written
 *     with. */
#include <Damaris.h>
#include <mpi.h>
#include <sidecore/read.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ITERATIONS 1024
#define MAX_VARIABLES 4096

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* values, int n) {
  qsort(values, (size_t)n, sizeof *values, compare_doubles);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/* The value at global index i of variable v in iteration it: distinct for every element of the
 * run and exact in a double (it < 1024, v < 4096, i < 1e9 keep it below 2^53). */
static double value_of(int it, int v, int64_t i) { return it * 1e13 + v * 1e9 + (double)i; }

static int fail(const char* what) {
  fprintf(stderr, "scale_write: %s: %s\n", what, damaris_last_error_message());
  return 1;
}

static int write_run(const char* config, int iterations, int variables, int blocks,
                     int64_t elements) {
  if (iterations < 2 || iterations > MAX_ITERATIONS || variables < 1 || variables > MAX_VARIABLES ||
      blocks < 1 || elements < 1) {
    fprintf(stderr,
            "scale_write: iterations must be 2-%d, variables 1-%d, blocks and elements "
            "at least 1\n",
            MAX_ITERATIONS, MAX_VARIABLES);
    return 1;
  }
  const double t_init = now();
  if (damaris_initialize(config, MPI_COMM_WORLD) != DAMARIS_OK) return fail("initialize");
  int is_client = 0;
  if (damaris_start(&is_client) != DAMARIS_OK) return fail("start");
  const double startup = now() - t_init;
  if (!is_client) return damaris_finalize() == DAMARIS_OK ? 0 : 1;

  MPI_Comm comm;
  damaris_client_comm_get(&comm);
  int rank, clients;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &clients);
  const int64_t per_client = (int64_t)blocks * elements;
  double* data = malloc((size_t)per_client * sizeof *data);
  double* write_times = malloc((size_t)iterations * sizeof *write_times);
  double* end_times = malloc((size_t)iterations * sizeof *end_times);
  if (!data || !write_times || !end_times) {
    fprintf(stderr, "scale_write: out of memory\n");
    return 1;
  }
  char names[MAX_VARIABLES][16];
  for (int v = 0; v < variables; ++v) snprintf(names[v], sizeof names[v], "v%d", v);
  int measured = 0;
  for (int it = 0; it < iterations; ++it) {
    double in_writes = 0;
    for (int v = 0; v < variables; ++v) {
      /* Filling the data is the simulation's work, not Sidecore's: outside the timing. */
      const int64_t first = rank * per_client;
      for (int64_t i = 0; i < per_client; ++i) data[i] = value_of(it, v, first + i);
      const double t0 = now();
      for (int b = 0; b < blocks; ++b) {
        const int64_t position = first + (int64_t)b * elements;
        if (damaris_set_block_position(names[v], b, &position) != DAMARIS_OK ||
            damaris_write_block(names[v], b, data + (int64_t)b * elements) != DAMARIS_OK)
          return fail("write");
      }
      in_writes += now() - t0;
    }
    const double t1 = now();
    if (damaris_end_iteration() != DAMARIS_OK) return fail("end_iteration");
    const double t2 = now();
    if (it > 0) {
      write_times[measured] = in_writes;
      end_times[measured] = t2 - t1;
      ++measured;
    }
  }
  const double t3 = now();
  if (damaris_sync() != DAMARIS_OK) return fail("sync");
  const double sync = now() - t3;
  double write_median = median(write_times, measured), slowest = 0, startup_max = 0;
  MPI_Reduce(&write_median, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  MPI_Reduce((void*)&startup, &startup_max, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  const double end_median = median(end_times, measured);
  free(data);
  free(write_times);
  free(end_times);
  const double t4 = now();
  if (damaris_stop() != DAMARIS_OK) return fail("stop");
  const int finalized = damaris_finalize();
  const double finalize = now() - t4;
  if (finalized != DAMARIS_OK) return fail("finalize");
  if (rank == 0)
    printf(
        "scale clients=%d variables=%d blocks=%d elements=%lld startup_s=%.6f "
        "startup_max_s=%.6f write_us=%.3f write_max_us=%.3f end_us=%.3f sync_s=%.6f "
        "finalize_s=%.6f\n",
        clients, variables, blocks, (long long)elements, startup, startup_max, 1e6 * write_median,
        1e6 * slowest, 1e6 * end_median, sync, finalize);
  return 0;
}

static int check_run(const char* prefix, int iteration, int variables, int64_t count,
                     int64_t stride) {
  sidecore_reader* r = NULL;
  if (sidecore_read_open(prefix, iteration, &r) != DAMARIS_OK) {
    fprintf(stderr, "scale_write check: %s\n", sidecore_read_last_error());
    return 1;
  }
  double* out = malloc((size_t)count * sizeof *out);
  int rc = out ? 0 : 1;
  int64_t checked = 0;
  for (int v = 0; v < variables && rc == 0; ++v) {
    char name[16];
    snprintf(name, sizeof name, "v%d", v);
    const int64_t start = 0;
    if (sidecore_read_region(r, name, &start, &count, DAMARIS_TYPE_DOUBLE, out,
                             (uint64_t)count * sizeof *out) != DAMARIS_OK) {
      fprintf(stderr, "scale_write check: %s: %s\n", name, sidecore_read_last_error());
      rc = 1;
      break;
    }
    /* Every stride-th element, and the last one, so that a short array cannot pass. */
    for (int64_t i = 0; i < count && rc == 0; i += stride) {
      const int64_t k = i + stride < count ? i : count - 1;
      if (out[k] != value_of(iteration, v, k)) {
        fprintf(stderr, "scale_write check: %s element %lld is %.17g, written %.17g\n", name,
                (long long)k, out[k], value_of(iteration, v, k));
        rc = 1;
      }
      ++checked;
    }
  }
  if (rc == 0)
    printf("checked iteration=%d variables=%d values=%lld: every one as written\n", iteration,
           variables, (long long)checked);
  sidecore_read_close(r);
  free(out);
  return rc;
}

int main(int argc, char** argv) {
  if (argc == 7 && strcmp(argv[1], "write") == 0) {
    MPI_Init(&argc, &argv);
    const int rc = write_run(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoll(argv[6]));
    MPI_Finalize();
    return rc;
  }
  if (argc == 7 && strcmp(argv[1], "check") == 0)
    return check_run(argv[2], atoi(argv[3]), atoi(argv[4]), atoll(argv[5]), atoll(argv[6]));
  fprintf(stderr,
          "usage: scale_write write <config.xml> <iterations> <variables> <blocks> <elements>\n"
          "       scale_write check <prefix> <iteration> <variables> <global elements> "
          "<stride>\n");
  return 2;
}
