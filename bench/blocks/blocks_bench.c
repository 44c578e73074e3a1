/* Many irregular blocks against one block of the same bytes (docs/blocks.md).
 *
 *   blocks_bench write <config.xml> <iterations> <blocks>
 *     Each client writes, per iteration, `blocks` segments of 1-64 KiB (sizes drawn from a
 *     fixed seed) of one 1-D variable, each with its own extents and position
 *     (sidecore_set_block_extents, damaris_set_block_position, damaris_write_block); with
 *     blocks == 1 it writes one segment of the bytes the 1,000-block case writes. It times the
 *     writes and, side by side, a memcpy of the same segments, then the damaris_sync that
 *     waits for the store. Client 0 prints: bytes, per-block cost beyond the copy, store time.
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

static int write_run(const char* config, int iterations, int blocks) {
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
    double write_time = 0, copy_time = 0, store_time = 0;
    for (int it = 0; it < iterations; ++it) {
      /* The copy alone, the same segments in the same order. */
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
        copy_time += t1 - t0;
        write_time += t2 - t1;
        store_time += t4 - t3;
      }
    }
    const int measured = iterations - 1;
    if (rank == 0)
      printf("blocks=%d bytes=%lld write_us=%.1f copy_us=%.1f beyond_copy_us_per_block=%.3f "
             "store_ms=%.2f store_MiBps=%.1f\n",
             blocks, (long long)(total * 8), 1e6 * write_time / measured,
             1e6 * copy_time / measured, 1e6 * (write_time - copy_time) / measured / blocks,
             1e3 * store_time / measured, total * 8.0 / 1048576.0 / (store_time / measured));
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
    fprintf(stderr, "usage: %s write <xml> <iterations> <blocks> | read <prefix> <iteration>\n", argv[0]);
  MPI_Finalize();
  return rc;
}
