/* sidecore_stats from a simulation, against numbers the test knows: every client writes one
 * block of 8192 doubles per iteration, so that after damaris_sync every counter of the client
 * and of its writer is known exactly.
 *   exact  nothing is dropped: bytes handed over, received and written, iterations stored;
 *   skip   policy="skip" with a buffer of two blocks and a writer kept busy at first: some
 *          blocks are dropped, and the writer's count of skipped bytes is the client's.
 * On dedicated nodes the writer's fields are out of reach (zero, flag not set).
 * Usage: stats <xml> <exact|skip> <iterations> <clients per writer> */
#include <Damaris.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sidecore/stats.h>

#include "check.h"

enum { N = 8192 };
static const uint64_t block_bytes = N * sizeof(double);

/* Runs on the writer: while it sleeps, nothing is stored or freed. */
void stats_slow(const char* name, int32_t source, int32_t iteration, const char* args) {
  (void)name;
  (void)source;
  (void)iteration;
  (void)args;
  struct timespec t = {0, 600 * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

static double field[N];

static void print_stats(const sidecore_stats_t* s) {
  fprintf(stderr,
          "[rank %d] stats: v%u size %u flags %u; client: %llu iterations, %llu bytes written, "
          "%llu dropped; writer: received %llu, written %llu, dropped %llu (skipped %llu), "
          "stored %llu iterations, latency n=%llu mean %.6f s, buffer %llu peak %llu of %llu\n",
          check_rank, s->version, s->size, s->flags, (unsigned long long)s->client_iterations,
          (unsigned long long)s->client_bytes_written, (unsigned long long)s->client_bytes_dropped,
          (unsigned long long)s->bytes_received, (unsigned long long)s->bytes_written,
          (unsigned long long)s->bytes_dropped, (unsigned long long)s->bytes_skipped,
          (unsigned long long)s->iterations_stored, (unsigned long long)s->latency_count,
          s->latency_mean, (unsigned long long)s->bytes_buffered,
          (unsigned long long)s->buffer_peak, (unsigned long long)s->buffer_capacity);
}

/* The writer's counters after damaris_sync: every iteration stored. */
static void check_writer(const sidecore_stats_t* st, int skip, int iterations,
                         uint64_t clients_per_writer) {
  const uint64_t all = (uint64_t)iterations * block_bytes;
  EXPECT(st->iterations_stored == (uint64_t)iterations);
  EXPECT(st->iterations_complete == (uint64_t)iterations);
  EXPECT(st->latency_count == (uint64_t)iterations);
  EXPECT(st->latency_min <= st->latency_mean && st->latency_mean <= st->latency_max);
  EXPECT(st->buffer_capacity > 0 && st->buffer_peak > 0 && st->buffer_peak <= st->buffer_capacity);
  EXPECT(st->bytes_pending == 0);
  EXPECT(st->bytes_failed == 0 && st->store_failures == 0);
  if (!skip) {
    EXPECT(st->client_bytes_written == all);
    EXPECT(st->client_bytes_dropped == 0 && st->client_iterations_skipped == 0);
    EXPECT(st->bytes_received == clients_per_writer * all);
    EXPECT(st->blocks_received == clients_per_writer * (uint64_t)iterations);
    EXPECT(st->bytes_written == clients_per_writer * all);
    EXPECT(st->bytes_dropped == 0);
    EXPECT(st->iterations_incomplete == 0);
  } else {
    /* One client per writer: its drops are the writer's skipped bytes. */
    EXPECT(st->client_bytes_dropped > 0);
    EXPECT(st->client_iterations_skipped > 0);
    EXPECT(st->bytes_skipped == st->client_bytes_dropped);
    EXPECT(st->bytes_dropped == st->bytes_skipped);
    EXPECT(st->bytes_received == st->client_bytes_written);
    EXPECT(st->bytes_written == st->client_bytes_written);
    EXPECT(st->iterations_incomplete == st->client_iterations_skipped);
  }
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: stats <xml> <exact|skip> <iterations> <clients per writer>\n");
    return 2;
  }
  const int skip = strcmp(argv[2], "skip") == 0;
  const int iterations = atoi(argv[3]);
  const uint64_t clients_per_writer = (uint64_t)atoi(argv[4]);
  MPI_Init(&argc, &argv);
  check_begin();

  /* Before initialize: refused, with a message, nothing written. */
  sidecore_stats_t s = SIDECORE_STATS_INIT;
  EXPECT(sidecore_stats(&s) == DAMARIS_NOT_INITIALIZED);
  EXPECT(strstr(sidecore_stats_last_error(), "damaris_initialize") != NULL);

  EXPECT_OK(damaris_initialize(argv[1], MPI_COMM_WORLD));
  int is_client = 0;
  EXPECT_STARTED(damaris_start(&is_client));
  if (is_client) {
    EXPECT(sidecore_stats(NULL) == DAMARIS_ARGUMENT_ERROR);
    sidecore_stats_t small = SIDECORE_STATS_INIT;
    small.size = 8;
    EXPECT(sidecore_stats(&small) == DAMARIS_ARGUMENT_ERROR);
    /* An older, shorter struct: only its bytes are filled. */
    unsigned char older[SIDECORE_STATS_MIN_SIZE + 16];
    memset(older, 0xab, sizeof older);
    uint32_t older_size = SIDECORE_STATS_MIN_SIZE;
    memcpy(older, &older_size, sizeof older_size);
    EXPECT_OK(sidecore_stats((sidecore_stats_t*)(void*)older));
    EXPECT(older[SIDECORE_STATS_MIN_SIZE] == 0xab && older[sizeof older - 1] == 0xab);

    for (int it = 0; it < iterations; ++it) {
      for (int i = 0; i < N; ++i) field[i] = it * 1000.0 + i;
      if (skip && it == 0) EXPECT_OK(damaris_signal("slow"));
      EXPECT_OK(damaris_write("field", field));
      EXPECT_OK(damaris_end_iteration());
    }
    EXPECT_OK(damaris_sync());
    sidecore_stats_t st = SIDECORE_STATS_INIT;
    EXPECT_OK(sidecore_stats(&st));
    print_stats(&st);
    const uint64_t all = (uint64_t)iterations * block_bytes;
    EXPECT(st.version == SIDECORE_STATS_VERSION);
    EXPECT(st.size == sizeof(sidecore_stats_t));
    EXPECT(st.client_iterations == (uint64_t)iterations);
    EXPECT(st.client_bytes_written + st.client_bytes_dropped == all);
    EXPECT(st.client_blocks_written * block_bytes == st.client_bytes_written);
    if (st.flags & SIDECORE_STATS_WRITER)
      check_writer(&st, skip, iterations, clients_per_writer);
    else /* dedicated nodes: the writer is out of reach, its fields stay zero */
      EXPECT(st.bytes_received == 0 && st.iterations_stored == 0 && st.latency_count == 0);
    EXPECT_STARTED(damaris_stop());
  } else {
    /* A dedicated core: the call is a client's. */
    sidecore_stats_t st = SIDECORE_STATS_INIT;
    EXPECT(sidecore_stats(&st) == DAMARIS_CORE_IS_SERVER);
  }
  EXPECT_OK(damaris_finalize());
  EXPECT(sidecore_stats(&s) == DAMARIS_NOT_INITIALIZED);
  const int status = check_finish("stats");
  MPI_Finalize();
  return status;
}
