/* What the C benchmarks of one client and its dedicated core share: checked Damaris calls and
 * allocations, a monotonic clock, a compute phase. Define BENCH_PROGRAM (the program's name,
 * for its messages) before including. */
#ifndef SIDECORE_BENCH_CALLS_H
#define SIDECORE_BENCH_CALLS_H

#include <Damaris.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef BENCH_PROGRAM
#error "define BENCH_PROGRAM before including bench_calls.h"
#endif

/* DAMARIS_NO_SERVER is what damaris_start and damaris_stop return, as in Damaris, when the
 * configuration has no dedicated cores or nodes: every process is then a client. */
static inline void check(int rc, const char* call) {
  if (rc != DAMARIS_OK && rc != DAMARIS_NO_SERVER) {
    fprintf(stderr, BENCH_PROGRAM ": %s failed: %s\n  %s\n", call, damaris_error_string(rc),
            damaris_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

static inline void* checked_malloc(size_t bytes) {
  void* p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, BENCH_PROGRAM ": out of memory (%zu bytes)\n", bytes);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}

static inline int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Stands for the simulation's compute phase: keeps the core busy, as a simulation would. */
static inline void compute_for(long microseconds) {
  const int64_t end = now_ns() + (int64_t)microseconds * 1000;
  while (now_ns() < end) {
  }
}

static inline int compare_i64(const void* a, const void* b) {
  const int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

#endif
