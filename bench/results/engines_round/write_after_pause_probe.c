/* Probe used for bench/results/engines_round.md (not built by CMake):
 *   mpicc -O2 -o probe write_after_pause_probe.c -I<tree>/include -L<tree>/build-bench -lsidecore \
 *     -Wl,-rpath,<tree>/build-bench
 *   mpirun -np 2 ./probe <micro_dedicated.xml with @BYTES@=8> PAUSE_US ITERATIONS
 * What one damaris_write of 8 bytes costs after a compute phase, and why. Iterations alternate:
 * A: pause, write(field), write_block(tiny,0), write_block(tiny,1), get_iteration, end_iteration
 * B: pause, get_iteration, chase 64 lines on 64 pages, write(field), end_iteration
 * C: pause, chase 64 lines, chase the same 64 lines again, write(field), end_iteration */
#define _DEFAULT_SOURCE
#include <Damaris.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}
static void compute_for(long us) {
  const int64_t e = now_ns() + us * 1000;
  while (now_ns() < e) {
  }
}
static int cmp(const void* a, const void* b) {
  int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return (x > y) - (x < y);
}
static double med(int64_t* s, int n) {
  qsort(s, n, 8, cmp);
  return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
}
enum { pages = 64, stride = 17 * 4096 };
static char* chain;
static volatile uintptr_t sink;
static int64_t chase(void) {
  char* q = chain;
  int64_t t0 = now_ns();
  for (int p = 0; p < pages; ++p) q = *(char* volatile*)q;
  int64_t t1 = now_ns();
  sink ^= (uintptr_t)q;
  return t1 - t0;
}
#define N 200
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  long pause = atol(argv[2]);
  int iters = atoi(argv[3]);
  if (damaris_initialize(argv[1], MPI_COMM_WORLD)) {
    fprintf(stderr, "init\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int is_client = 0;
  damaris_start(&is_client);
  if (is_client) {
    chain = malloc((size_t)pages * stride);
    for (int p = 0; p < pages; ++p)
      *(char**)(chain + (size_t)p * stride) = chain + (size_t)((p + 1) % pages) * stride;
    char src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int v = 0, it;
    int64_t a_w[N], a_t0[N], a_t1[N], a_gi[N], a_e[N], b_gi[N], b_ch[N], b_w[N], b_e[N], c_ch1[N],
        c_ch2[N], c_w[N];
    int na = 0, nb = 0, nc = 0;
    damaris_write("field", src);
    damaris_end_iteration(); /* first iteration apart */
    for (int i = 0; i < iters; ++i) {
      compute_for(pause);
      int64_t t0, t1, t2, t3, t4, t5;
      if (i % 3 == 0) {
        t0 = now_ns();
        damaris_write("field", src);
        t1 = now_ns();
        damaris_write_block("tiny", 0, &v);
        t2 = now_ns();
        damaris_write_block("tiny", 1, &v);
        t3 = now_ns();
        damaris_get_iteration(&it);
        t4 = now_ns();
        damaris_end_iteration();
        t5 = now_ns();
        a_w[na] = t1 - t0;
        a_t0[na] = t2 - t1;
        a_t1[na] = t3 - t2;
        a_gi[na] = t4 - t3;
        a_e[na] = t5 - t4;
        ++na;
      } else if (i % 3 == 1) {
        t0 = now_ns();
        damaris_get_iteration(&it);
        t1 = now_ns();
        int64_t ch = chase();
        t2 = now_ns();
        damaris_write("field", src);
        t3 = now_ns();
        damaris_end_iteration();
        t4 = now_ns();
        b_gi[nb] = t1 - t0;
        b_ch[nb] = ch;
        b_w[nb] = t3 - t2;
        b_e[nb] = t4 - t3;
        ++nb;
      } else {
        int64_t ch1 = chase(), ch2 = chase();
        t0 = now_ns();
        damaris_write("field", src);
        t1 = now_ns();
        damaris_end_iteration();
        c_ch1[nc] = ch1;
        c_ch2[nc] = ch2;
        c_w[nc] = t1 - t0;
        ++nc;
      }
    }
    printf("pause %ld us, %d/%d/%d samples (medians, ns)\n", pause, na, nb, nc);
    printf(
        "A: write(field) %.0f | write_block(tiny,0) %.0f | write_block(tiny,1) %.0f | "
        "get_iteration %.0f | end_iteration %.0f\n",
        med(a_w, na), med(a_t0, na), med(a_t1, na), med(a_gi, na), med(a_e, na));
    printf(
        "B: get_iteration first %.0f | chase 64 lines/64 pages %.0f | write(field) after %.0f | "
        "end %.0f\n",
        med(b_gi, nb), med(b_ch, nb), med(b_w, nb), med(b_e, nb));
    printf("C: chase %.0f | chase again %.0f | write(field) after %.0f\n", med(c_ch1, nc),
           med(c_ch2, nc), med(c_w, nc));
    damaris_stop();
  }
  damaris_finalize();
  MPI_Finalize();
  return 0;
}
