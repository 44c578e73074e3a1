/* Many irregular blocks against one block of the same bytes (docs/blocks.md).
 *
 *   blocks_bench write <config.xml> <iterations> <blocks>
 *     Each client writes, per iteration, `blocks` segments of 1-64 KiB (sizes drawn from a
 *     fixed seed) of one 1-D variable, each with its own extents and position
 *     (sidecore_set_block_extents, damaris_set_block_position, damaris_write_block); with
 *     blocks == 1 it writes one segment of the bytes the 1,000-block case writes. It times the
 *     writes and, side by side, a memcpy of the same segments into private memory, then the
 *     damaris_sync that waits for the store. Client 0 prints the medians over the iterations
 *     (the first left out) of the write, copy and store times. The cost per block beyond the
 *     copy is the 1,000-block write time less the one-block write time of the same bytes (the
 *     same copy into shared memory), divided by 1,000: run_blocks_bench.sh pairs the runs.
 *
 *   blocks_bench read <prefix> <iteration>
 *     Reads the whole variable back with sidecore_read_region and prints the bytes and time. */
#include <Damaris.h>
#include <mpi.h>
#include <sidecore/blocks.h>
#include <sidecore/read.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { SEGMENTS = 1000 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Segment sizes in doubles, 1-64 KiB each, the same for every client and run. */
static int64_t segment_sizes(int64_t* sizes) {
  uint64_t state = 12345;
  int64_t total = 0;
  for (int i = 0; i < SEGMENTS; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    sizes[i] = (int64_t)(1 + (state >> 33) % 64) * 1024 / 8;
    total += sizes[i];
  }
  return total;
}

#define MAX_ITERATIONS 64

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* values, int n) {
  qsort(values, (size_t)n, sizeof *values, compare_doubles);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

static int write_run(const char* config, int iterations, int blocks) {
  if (iterations < 2 || iterations > MAX_ITERATIONS) {
    fprintf(stderr, "write: iterations must be 2-%d\n", MAX_ITERATIONS);
    return 1;
  }
  if (damaris_initialize(config, MPI_COMM_WORLD) != DAMARIS_OK) return 1;
  int is_client = 0;
  damaris_start(&is_client);
  if (is_client) {
    MPI_Comm comm;
    damaris_client_comm_get(&comm);
    int rank;
    MPI_Comm_rank(comm, &rank);
    static int64_t sizes[SEGMENTS];
    const int64_t total = segment_sizes(sizes);
    if (blocks == 1) sizes[0] = total;
    double* data = malloc((size_t)total * sizeof *data);
    double* scratch = malloc((size_t)total * sizeof *scratch);
    for (int64_t i = 0; i < total; ++i) data[i] = (double)i;
    double write_times[MAX_ITERATIONS], copy_times[MAX_ITERATIONS], store_times[MAX_ITERATIONS];
    int measured = 0;
    for (int it = 0; it < iterations; ++it) {
      /* The copy alone, the same segments in the same order, into private memory. */
      double t0 = now();
      for (int b = 0, off = 0; b < blocks; off += (int)sizes[b], ++b)
        memcpy(scratch + off, data + off, (size_t)sizes[b] * sizeof *data);
      double t1 = now();
      int64_t offset = 0;
      for (int b = 0; b < blocks; ++b) {
        const int64_t position = rank * total + offset;
        if (sidecore_set_block_extents("data", b, &sizes[b]) != DAMARIS_OK ||
            damaris_set_block_position("data", b, &position) != DAMARIS_OK ||
            damaris_write_block("data", b, data + offset) != DAMARIS_OK) {
          fprintf(stderr, "write: %s\n", damaris_last_error_message());
          return 1;
        }
        offset += sizes[b];
      }
      double t2 = now();
      damaris_end_iteration();
      double t3 = now();
      damaris_sync();
      double t4 = now();
      if (it > 0) { /* the first iteration maps memory: left out */
        copy_times[measured] = t1 - t0;
        write_times[measured] = t2 - t1;
        store_times[measured] = t4 - t3;
        ++measured;
      }
    }
    /* Medians over the iterations: one slow iteration (another process scheduled on the core)
     * does not move them. */
    if (rank == 0)
      printf("blocks=%d bytes=%lld write_us=%.1f copy_us=%.1f store_ms=%.2f store_MiBps=%.1f\n",
             blocks, (long long)(total * 8), 1e6 * median(write_times, measured),
             1e6 * median(copy_times, measured), 1e3 * median(store_times, measured),
             total * 8.0 / 1048576.0 / median(store_times, measured));
    free(data);
    free(scratch);
    damaris_stop();
  }
  return damaris_finalize() == DAMARIS_OK ? 0 : 1;
}

static int read_run(const char* prefix, int iteration) {
  sidecore_reader* r = NULL;
  double t0 = now();
  if (sidecore_read_open(prefix, iteration, &r) != DAMARIS_OK) {
    fprintf(stderr, "%s\n", sidecore_read_last_error());
    return 1;
  }
  int64_t global[SIDECORE_MAX_DIMENSIONS];
  int32_t blocks = 0;
  if (sidecore_read_variable(r, 0, NULL, NULL, NULL, global, &blocks) != DAMARIS_OK) return 1;
  double* out = malloc((size_t)global[0] * sizeof *out);
  const int64_t start = 0;
  double t1 = now();
  if (sidecore_read_region(r, "data", &start, global, DAMARIS_TYPE_DOUBLE, out,
                           (uint64_t)global[0] * sizeof *out) != DAMARIS_OK) {
    fprintf(stderr, "%s\n", sidecore_read_last_error());
    return 1;
  }
  double t2 = now();
  sidecore_read_close(r);
  /* Not timed: the values read back are those written (element i of each client's segment
   * holds i, and the clients' segments follow one another). */
  static int64_t sizes[SEGMENTS];
  const int64_t per_client = segment_sizes(sizes);
  for (int64_t i = 0; i < global[0]; ++i)
    if (out[i] != (double)(i % per_client)) {
      fprintf(stderr, "read: element %lld is %g, written %g\n", (long long)i, out[i],
              (double)(i % per_client));
      free(out);
      return 1;
    }
  printf("read blocks=%d bytes=%lld open_ms=%.2f read_ms=%.2f read_MiBps=%.1f\n", blocks,
         (long long)(global[0] * 8), 1e3 * (t1 - t0), 1e3 * (t2 - t1),
         global[0] * 8.0 / 1048576.0 / (t2 - t1));
  free(out);
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 2;
  if (argc == 5 && strcmp(argv[1], "write") == 0)
    rc = write_run(argv[2], atoi(argv[3]), atoi(argv[4]));
  else if (argc == 4 && strcmp(argv[1], "read") == 0)
    rc = read_run(argv[2], atoi(argv[3]));
  else
    fprintf(stderr, "usage: %s write <xml> <iterations> <blocks> | read <prefix> <iteration>\n",
            argv[0]);
  MPI_Finalize();
  return rc;
}
