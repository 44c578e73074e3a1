/* What a block costs the client as the number of blocks per iteration grows (docs/blocks.md).
 *
 *   many_blocks write <config.xml> <iterations> <blocks> <elements>
 *
 * Each client writes, per iteration, the variable "one" as one block of blocks × elements
 * doubles, and the variable "many" as `blocks` blocks of `elements` doubles, each with its own
 * extents and position (sidecore_set_block_extents, damaris_set_block_position,
 * damaris_write_block): the same bytes, copied into the same shared buffer. Which of the two
 * goes first alternates from one iteration to the next. The cost per block beyond the copy is
 * (time of "many" - time of "one") / blocks. The first iteration (first touch of the buffer) is
 * left out; client 0 prints the medians.
 *
 *   many_blocks check <prefix> <iteration> <clients> <blocks> <elements>
 *     Reads "many" and "one" of that iteration back and checks every value. */
#include <Damaris.h>
#include <mpi.h>
#include <sidecore/blocks.h>
#include <sidecore/read.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ITERATIONS 64

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

/* The value stored at element i of client `rank`'s part of iteration `it`. */
static double value_of(int it, int rank, int64_t i) { return it * 1e9 + rank * 1e8 + (double)i; }

static int fail(const char* what) {
  fprintf(stderr, "many_blocks: %s: %s\n", what, damaris_last_error_message());
  return 1;
}

static int write_run(const char* config, int iterations, int blocks, int64_t elements) {
  if (iterations < 2 || iterations > MAX_ITERATIONS || blocks < 1 || elements < 1) {
    fprintf(stderr, "many_blocks: iterations must be 2-%d, blocks and elements at least 1\n",
            MAX_ITERATIONS);
    return 1;
  }
  if (damaris_initialize(config, MPI_COMM_WORLD) != DAMARIS_OK) return fail("initialize");
  int is_client = 0;
  damaris_start(&is_client);
  if (is_client) {
    MPI_Comm comm;
    damaris_client_comm_get(&comm);
    int rank;
    MPI_Comm_rank(comm, &rank);
    const int64_t total = (int64_t)blocks * elements;
    double* data = malloc((size_t)total * sizeof *data);
    double one_times[MAX_ITERATIONS], many_times[MAX_ITERATIONS], end_times[MAX_ITERATIONS];
    int measured = 0;
    for (int it = 0; it < iterations; ++it) {
      for (int64_t i = 0; i < total; ++i) data[i] = value_of(it, rank, i);
      double one = 0, many = 0;
      for (int pass = 0; pass < 2; ++pass) {
        const int many_now = (pass + it) % 2;
        const double t0 = now();
        if (many_now) {
          for (int b = 0; b < blocks; ++b) {
            const int64_t position = rank * total + (int64_t)b * elements;
            if (sidecore_set_block_extents("many", b, &elements) != DAMARIS_OK ||
                damaris_set_block_position("many", b, &position) != DAMARIS_OK ||
                damaris_write_block("many", b, data + (int64_t)b * elements) != DAMARIS_OK)
              return fail("write many");
          }
          many = now() - t0;
        } else {
          const int64_t position = rank * total;
          if (damaris_set_position("one", &position) != DAMARIS_OK ||
              damaris_write("one", data) != DAMARIS_OK)
            return fail("write one");
          one = now() - t0;
        }
      }
      const double t1 = now();
      if (damaris_end_iteration() != DAMARIS_OK) return fail("end_iteration");
      const double t2 = now();
      if (it > 0) {
        one_times[measured] = one;
        many_times[measured] = many;
        end_times[measured] = t2 - t1;
        ++measured;
      }
    }
    if (damaris_sync() != DAMARIS_OK) return fail("sync");
    const double one_us = 1e6 * median(one_times, measured);
    const double many_us = 1e6 * median(many_times, measured);
    if (rank == 0)
      printf("blocks=%d elements=%lld one_us=%.1f many_us=%.1f end_us=%.1f per_block_us=%.3f\n",
             blocks, (long long)elements, one_us, many_us, 1e6 * median(end_times, measured),
             (many_us - one_us) / blocks);
    free(data);
    damaris_stop();
  }
  return damaris_finalize() == DAMARIS_OK ? 0 : 1;
}

static int check_run(const char* prefix, int iteration, int clients, int blocks, int64_t elements) {
  sidecore_reader* r = NULL;
  if (sidecore_read_open(prefix, iteration, &r) != DAMARIS_OK) {
    fprintf(stderr, "many_blocks check: %s\n", sidecore_read_last_error());
    return 1;
  }
  const int64_t per_client = (int64_t)blocks * elements, count = clients * per_client;
  double* out = malloc((size_t)count * sizeof *out);
  const char* names[] = {"many", "one"};
  int rc = 0;
  for (int v = 0; v < 2 && rc == 0; ++v) {
    const int64_t start = 0;
    if (sidecore_read_region(r, names[v], &start, &count, DAMARIS_TYPE_DOUBLE, out,
                             (uint64_t)count * sizeof *out) != DAMARIS_OK) {
      fprintf(stderr, "many_blocks check: %s: %s\n", names[v], sidecore_read_last_error());
      rc = 1;
      break;
    }
    for (int64_t i = 0; i < count; ++i) {
      const double expected = value_of(iteration, (int)(i / per_client), i % per_client);
      if (out[i] != expected) {
        fprintf(stderr, "many_blocks check: %s element %lld is %.17g, written %.17g\n", names[v],
                (long long)i, out[i], expected);
        rc = 1;
        break;
      }
    }
  }
  if (rc == 0)
    printf("checked blocks=%d clients=%d elements=%lld: every value as written\n", blocks, clients,
           (long long)elements);
  sidecore_read_close(r);
  free(out);
  return rc;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 2;
  if (argc == 6 && strcmp(argv[1], "write") == 0)
    rc = write_run(argv[2], atoi(argv[3]), atoi(argv[4]), atoll(argv[5]));
  else if (argc == 7 && strcmp(argv[1], "check") == 0)
    rc = check_run(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoll(argv[6]));
  else
    fprintf(stderr,
            "usage: %s write <xml> <iterations> <blocks> <elements>\n"
            "       %s check <prefix> <iteration> <clients> <blocks> <elements>\n",
            argv[0], argv[0]);
  MPI_Finalize();
  return rc;
}
