/* The C half of client_bench.py's paired alloc timing: loaded with ctypes into the Python
 * client's own process, it runs micro_write.c's alloc cycle (damaris_alloc, fill, commit,
 * clear) on the runtime the Python module initialized, timed in C. Python and C cycles then
 * alternate in one process, so that both see the same caches, the same memory placement and
 * the same moment of a noisy machine.
 *
 * Copyright (c) 2026, the Sidecore developers. SPDX-License-Identifier: BSD-3-Clause */
#include <Damaris.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* One cycle on block 0 of `variable`: times[0] = damaris_alloc, times[1] = damaris_commit,
 * times[2] = damaris_clear (ns); the fill of `fill` bytes with `value` between alloc and
 * commit is not timed. Returns the first failing call's code, or DAMARIS_OK. */
int sidecore_bench_alloc_cycle(const char* variable, size_t fill, int value, int64_t* times) {
  void* block = NULL;
  const int64_t t0 = now_ns();
  int rc = damaris_alloc(variable, &block);
  const int64_t t1 = now_ns();
  if (rc != DAMARIS_OK) return rc;
  memset(block, value & 0xff, fill);
  const int64_t t2 = now_ns();
  rc = damaris_commit(variable);
  const int64_t t3 = now_ns();
  if (rc != DAMARIS_OK) return rc;
  rc = damaris_clear(variable);
  const int64_t t4 = now_ns();
  times[0] = t1 - t0;
  times[1] = t3 - t2;
  times[2] = t4 - t3;
  return rc;
}
