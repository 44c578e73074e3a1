/* Start-up, memory and first-write cost of a short run: what a job pays for Sidecore before
 * and around its first iterations, beside the same loop without Sidecore.
 *
 * Usage: sidecore_startup CONFIG.xml [--iterations N] [--compute-ms MS] [--first-compute-ms MS]
 *                         [--bytes B]
 *        sidecore_startup --without-sidecore [same options]
 *
 * Each client fills its own array of B bytes (64 MiB by default; the parameter "bytes" of the
 * configuration must agree) before damaris_initialize, then runs N iterations (12 by default)
 * of: compute for MS milliseconds (250 by default; the first iteration --first-compute-ms, by
 * default the same; a busy loop that also rewrites the array), damaris_write("field"),
 * damaris_end_iteration. With --without-sidecore the write is a memcpy into a second array of
 * the program's own, which is what a simulation writing its output itself would hold.
 *
 * Every process prints one JSON line at the end: its role, the time spent in
 * damaris_initialize + damaris_start (clients) or serving (servers), the first write and the
 * slowest later write, the minor page faults the calling thread took inside the first write
 * (not those of Sidecore's own threads, mapping ahead meanwhile), damaris_finalize,
 * the wall time from MPI_Init to the end of finalize, and its peak resident set (VmHWM) with
 * the shared-memory part of the current one (RssShmem), from /proc/self/status.
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */

#include <Damaris.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static long minor_faults(void) {
  struct rusage usage;
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

/* A field of /proc/self/status in KiB ("VmHWM", "RssShmem"); -1 when absent. */
static long status_kib(const char* field) {
  FILE* f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long value = -1;
  const size_t n = strlen(field);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0 && line[n] == ':') {
      value = strtol(line + n + 1, NULL, 10);
      break;
    }
  fclose(f);
  return value;
}

/* The compute phase: rewrites the array (as a solver updates its state) until `seconds` pass. */
static void compute(unsigned char* field, size_t bytes, int iteration, double seconds) {
  const double end = now_s() + seconds;
  size_t at = 0;
  do {
    const size_t chunk = bytes - at < 65536 ? bytes - at : 65536;
    memset(field + at, (iteration + (int)(at >> 16)) & 0xff, chunk);
    at = at + chunk == bytes ? 0 : at + chunk;
  } while (now_s() < end);
}

int main(int argc, char** argv) {
  const double start = now_s();
  MPI_Init(&argc, &argv);
  const char* config = NULL;
  int iterations = 12;
  double compute_s = 0.25, first_compute_s = -1;
  long long bytes = 64ll << 20;
  int without = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--iterations") && i + 1 < argc) {
      iterations = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--compute-ms") && i + 1 < argc) {
      compute_s = atof(argv[++i]) / 1000.0;
    } else if (!strcmp(argv[i], "--first-compute-ms") && i + 1 < argc) {
      first_compute_s = atof(argv[++i]) / 1000.0;
    } else if (!strcmp(argv[i], "--bytes") && i + 1 < argc) {
      bytes = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--without-sidecore")) {
      without = 1;
    } else if (argv[i][0] != '-' && !config) {
      config = argv[i];
    } else {
      fprintf(stderr,
              "usage: %s CONFIG.xml|--without-sidecore [--iterations N] [--compute-ms MS] "
              "[--first-compute-ms MS] [--bytes B]\n",
              argv[0]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (!config && !without) {
    fprintf(stderr, "%s: give a configuration or --without-sidecore\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  if (first_compute_s < 0) first_compute_s = compute_s;
  double init_s = 0, first_write_s = 0, worst_write_s = 0, later_writes_s = 0, finalize_s = 0,
         serve_s = 0;
  /* The application's array exists, written, before Sidecore starts, so that the first compute
   * phase is all that runs between damaris_start and the first write. Only on the clients: in
   * this benchmark's configurations the dedicated core or node, when there is one, is the last
   * of several ranks, whose peak memory must not count an array it never uses. */
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  unsigned char* field = NULL;
  if (without || size == 1 || rank < size - 1) {
    field = malloc((size_t)bytes);
    if (!field) MPI_Abort(MPI_COMM_WORLD, 3);
    memset(field, 1, (size_t)bytes);
  }
  long first_write_faults = 0;
  int is_client = 1;
  const double t0 = now_s();
  if (!without) {
    if (damaris_initialize(config, MPI_COMM_WORLD) != DAMARIS_OK) MPI_Abort(MPI_COMM_WORLD, 1);
    const int started = damaris_start(&is_client);
    if (started != DAMARIS_OK && started != DAMARIS_NO_SERVER) MPI_Abort(MPI_COMM_WORLD, 1);
  }
  init_s = now_s() - t0;
  if (!is_client) serve_s = init_s;  // damaris_start returns once the clients have stopped

  if (is_client) {
    if (!without) {
      int b = 0;
      damaris_parameter_get("bytes", &b, sizeof b);
      if (b != bytes) {
        fprintf(stderr, "the configuration's parameter bytes (%d) is not --bytes (%lld)\n", b,
                bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    }
    if (!field) {
      field = malloc((size_t)bytes);
      if (!field) MPI_Abort(MPI_COMM_WORLD, 3);
      memset(field, 1, (size_t)bytes);
    }
    unsigned char* copy = without ? malloc((size_t)bytes) : NULL;
    if (without && !copy) MPI_Abort(MPI_COMM_WORLD, 3);
    for (int it = 0; it < iterations; ++it) {
      compute(field, (size_t)bytes, it, it == 0 ? first_compute_s : compute_s);
      const long faults = minor_faults();
      const double w0 = now_s();
      if (without) {
        memcpy(copy, field, (size_t)bytes);
      } else if (damaris_write("field", field) != DAMARIS_OK ||
                 damaris_end_iteration() != DAMARIS_OK) {
        MPI_Abort(MPI_COMM_WORLD, 4);
      }
      const double w = now_s() - w0;
      if (it == 0) {
        first_write_s = w;
        first_write_faults = minor_faults() - faults;
      } else {
        later_writes_s += w;
        if (w > worst_write_s) worst_write_s = w;
      }
    }
    if (copy) {
      volatile unsigned char sink = copy[bytes - 1];
      (void)sink;
    }
    free(copy);
    if (!without) damaris_stop();
  }
  free(field);
  const double f0 = now_s();
  if (!without) damaris_finalize();
  finalize_s = now_s() - f0;
  const long hwm = status_kib("VmHWM");
  const long shmem = status_kib("RssShmem");
  MPI_Finalize();
  printf(
      "{\"rank\": %d, \"role\": \"%s\", \"init_s\": %.4f, \"serve_s\": %.4f, "
      "\"first_write_s\": %.6f, \"worst_write_s\": %.6f, \"mean_later_write_s\": %.6f, "
      "\"first_write_faults\": %ld, "
      "\"finalize_s\": %.4f, \"wall_s\": %.4f, \"peak_rss_kib\": %ld, "
      "\"rss_shmem_kib\": %ld}\n",
      rank, without ? "alone" : (is_client ? "client" : "server"), is_client ? init_s : 0.0,
      serve_s, first_write_s, worst_write_s,
      iterations > 1 && is_client ? later_writes_s / (iterations - 1) : 0.0, first_write_faults,
      finalize_s, now_s() - start, hwm, shmem);
  return 0;
}
