/* Sidecore extension: the live counters of this client and of its writer, read from the
 * simulation (docs/observability.md).
 *
 * Copyright (c) 2026, the Sidecore developers. SPDX-License-Identifier: BSD-3-Clause
 *
 *     sidecore_stats_t s = SIDECORE_STATS_INIT;
 *     if (sidecore_stats(&s) == DAMARIS_OK && (s.flags & SIDECORE_STATS_WRITER))
 *       printf("%llu bytes written, I/O debt %.2f s\n",
 *              (unsigned long long)s.bytes_written, s.io_debt_seconds);
 *
 * The writer is where this client's data goes: its dedicated core, its background I/O thread,
 * or its own synchronous stores. Each client has exactly one writer, so the writer's fields
 * are that writer's counters, not a sum over the job: a dedicated core's clients all see the
 * same values, those of every client of that core together. The run report written at
 * damaris_finalize has every writer and the totals.
 *
 * Cost: the call copies counters the writer publishes (shared memory for a dedicated core,
 * process memory otherwise); it never waits for the writer, sends no message and makes no
 * system call. The writer publishes after each iteration it completes and after each store,
 * so its values are as of then. On dedicated nodes the writer is out of reach without a
 * message: the writer's fields stay zero and SIDECORE_STATS_WRITER is not set (the periodic
 * log lines and the run report have them).
 *
 * Versioning: set `size` to sizeof(sidecore_stats_t) (SIDECORE_STATS_INIT does) before the
 * call. The library fills at most `size` bytes, never more, and sets `size` to what it
 * filled and `version` to its SIDECORE_STATS_VERSION: a program built against an older,
 * shorter struct keeps working with a newer library, and a newer program learns from `size`
 * which fields an older library left untouched. Fields are only ever added at the end.
 *
 * Returns DAMARIS_OK; DAMARIS_ARGUMENT_ERROR when out is NULL or out->size is smaller than
 * SIDECORE_STATS_MIN_SIZE; DAMARIS_NOT_INITIALIZED before damaris_initialize() or after
 * damaris_finalize(); DAMARIS_CORE_IS_SERVER on a dedicated core or node. The message of a
 * failure is returned by sidecore_stats_last_error(). Call it from the thread that
 * initialized Sidecore; it never throws or terminates. */
#ifndef SIDECORE_STATS_H
#define SIDECORE_STATS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIDECORE_STATS_VERSION 1

/* flags */
#define SIDECORE_STATS_WRITER 1u /* the writer's fields are filled */
#define SIDECORE_STATS_WRITE_TIMES \
  2u /* client_write_seconds is measured (SIDECORE_WRITE_TIMES=1) */

typedef struct sidecore_stats {
  uint32_t size;    /* in: bytes the caller's struct has; out: bytes filled */
  uint32_t version; /* out: SIDECORE_STATS_VERSION of the library */
  uint32_t flags;   /* out: SIDECORE_STATS_* */
  uint32_t reserved;

  /* This client (bytes are payload bytes, as the layouts give them). */
  uint64_t client_iterations;     /* iterations ended */
  uint64_t client_blocks_written; /* blocks handed over (write, or alloc + commit) */
  uint64_t client_bytes_written;
  uint64_t client_blocks_dropped; /* dropped under policy="skip" (buffer full) */
  uint64_t client_bytes_dropped;
  uint64_t client_iterations_skipped; /* iterations of which something was dropped */
  double client_write_seconds;        /* time in write calls (SIDECORE_STATS_WRITE_TIMES), else 0 */

  /* Its writer (SIDECORE_STATS_WRITER). Cumulative unless "now". */
  uint64_t bytes_received; /* blocks that reached the writer */
  uint64_t blocks_received;
  uint64_t bytes_buffered;         /* now: the writer's buffer in use */
  uint64_t buffer_peak;            /* most of the buffer ever in use */
  uint64_t buffer_capacity;        /* the buffer's size */
  uint64_t bytes_spilled;          /* moved into spill files (active buffering) */
  uint64_t bytes_in_server_memory; /* now: moved out of the shared buffer, not yet stored */
  uint64_t bytes_written;          /* stored: in iterations every store accepted */
  uint64_t bytes_dropped;          /* bytes_skipped + bytes_failed */
  uint64_t bytes_skipped;          /* dropped by its clients under policy="skip" */
  uint64_t bytes_failed;           /* in iterations a store failed on */
  uint64_t bytes_pending;          /* now: received, not yet stored */
  uint64_t iterations_complete;    /* ended by every client of the writer */
  uint64_t iterations_stored;
  uint64_t iterations_incomplete; /* stored with data missing */
  uint64_t store_failures;        /* store calls that failed */
  uint64_t latency_count;         /* iterations timed below */
  double latency_min;             /* seconds from an iteration's end (by its last client) */
  double latency_mean;            /*   reaching the writer, to its stores' return */
  double latency_max;
  double latency_last;
  double store_seconds;               /* time in the stores */
  double throughput_bytes_per_second; /* recent store throughput (0: not known yet) */
  double io_debt_seconds;             /* now: bytes_pending at that throughput */
} sidecore_stats_t;

/* The fields up to client_write_seconds: the smallest size accepted. */
#define SIDECORE_STATS_MIN_SIZE 72u

#define SIDECORE_STATS_INIT                                                                        \
  {                                                                                                \
    (uint32_t)sizeof(sidecore_stats_t), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, \
        0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0                                  \
  }

/* Fills *out (see above). */
int sidecore_stats(sidecore_stats_t* out);

/* The message of the last failed call of this thread ("" if none): an alias of
 * damaris_last_error_message(). Valid until the next call on the thread. */
const char* sidecore_stats_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* SIDECORE_STATS_H */
