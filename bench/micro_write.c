/* Micro-benchmark of the client-visible cost of the Damaris write paths, beside a plain memcpy
 * of the same bytes timed in the same process; prints one JSON line per phase for
 * bench/run_micro.sh to aggregate.
 *
 * Usage: sidecore_micro_write CONFIG.xml [--phases write,alloc,small,empty,stream]
 *          [--iterations N] [--pause-us US] [--small-writes N] [--small-per-iteration N]
 *          [--empty N] [--stream-api write|alloc] [--label TEXT]
 *
 * The configuration defines the parameter "bytes", the variable "field" (a char array of
 * "bytes" elements) and the variable "tiny" (one int, written as blocks 0..domains-1).
 *
 * Phases, each on the one client (every other rank is a dedicated core, or there is none):
 *   write  1 + N iterations of damaris_write("field") + damaris_end_iteration, each beside a
 *          memcpy into a warm buffer and a memcpy into freshly mapped memory (first touch);
 *          in the first iteration also a memcpy into memory touched before the loop and not
 *          since (mapped but no longer hot in the cache, as the write's destination is), from
 *          a copy of the source in the same cache state as the source.
 *   alloc  1 + N iterations of damaris_alloc + damaris_commit + damaris_clear; the time the
 *          application spends filling the block is not counted. Then N more back to back, and
 *          max(N, 100) more writing only the block's first cache line, each after 200 us.
 *   small  damaris_write_block of one int, `per-iteration` blocks per iteration.
 *   empty  damaris_end_iteration with nothing written.
 *   stream N iterations back to back with no compute phase (a client that never pauses):
 *          damaris_write (or damaris_alloc + memcpy + commit + clear with --stream-api alloc,
 *          which separates the wait for buffer space, inside alloc, from the copy) and
 *          damaris_end_iteration, then damaris_sync. The first 8 bytes of each iteration's
 *          block hold the iteration number, so that the stored files can be checked.
 * Between two iterations of write and alloc the client busy-waits --pause-us microseconds,
 * standing for the simulation's compute phase, so that the dedicated core can store and free
 * the previous iteration as it would in a real run.
 */
#define _DEFAULT_SOURCE

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#define BENCH_PROGRAM "micro_write"
#include "bench_calls.h"

enum { phase_write = 1, phase_alloc = 2, phase_small = 4, phase_empty = 8, phase_stream = 16 };

struct options {
  const char* config;
  const char* label;
  int phases;
  int iterations;
  long pause_us;
  long small_writes;
  int small_per_iteration;
  long empty_iterations;
  int stream_alloc; /* 1: the stream phase uses alloc/commit/clear instead of damaris_write */
};

/* Written through so that no copy under test can be optimized away. */
static volatile unsigned char g_sink;

/* Minor page faults of this process so far: tells whether a write touched unmapped memory. */
static long minor_faults(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

struct summary {
  int64_t median, min, p90;
};

/* Sorts the samples in place. */
static struct summary summarize(int64_t* samples, size_t count) {
  struct summary s = {0, 0, 0};
  if (count == 0) return s;
  qsort(samples, count, sizeof *samples, compare_i64);
  s.min = samples[0];
  s.median = count % 2 ? samples[count / 2] : (samples[count / 2 - 1] + samples[count / 2]) / 2;
  s.p90 = samples[(count * 9) / 10 < count ? (count * 9) / 10 : count - 1];
  return s;
}

static void print_summary(const char* name, int64_t* samples, size_t count, int last) {
  struct summary s = summarize(samples, count);
  printf("\"%s\":{\"median\":%lld,\"min\":%lld,\"p90\":%lld}%s", name, (long long)s.median,
         (long long)s.min, (long long)s.p90, last ? "" : ",");
}

/* A copy into memory never touched before: fresh anonymous pages, as malloc returns for large
 * blocks. mmap is used directly because glibc may recycle a freed (already touched) block. */
static int64_t memcpy_cold(const unsigned char* source, size_t bytes) {
  void* target = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (target == MAP_FAILED) {
    perror("micro_write: mmap");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int64_t t0 = now_ns();
  memcpy(target, source, bytes);
  const int64_t t1 = now_ns();
  g_sink ^= ((volatile unsigned char*)target)[bytes - 1];
  munmap(target, bytes);
  return t1 - t0;
}

/* Keeps the compiler from dropping stores into `p` that a later memcpy overwrites. */
static void keep_stores(void* p) { __asm__ __volatile__("" : : "r"(p) : "memory"); }

static int64_t memcpy_warm(unsigned char* target, const unsigned char* source, size_t bytes) {
  const int64_t t0 = now_ns();
  memcpy(target, source, bytes);
  const int64_t t1 = now_ns();
  g_sink ^= ((volatile unsigned char*)target)[bytes - 1];
  return t1 - t0;
}

static void print_header(const struct options* o, const char* phase, long bytes) {
  printf("MICRO {\"label\":\"%s\",\"phase\":\"%s\",\"bytes\":%ld,", o->label, phase, bytes);
}

static void run_write(const struct options* o, size_t bytes) {
  const int n = o->iterations + 1;
  /* Touched now and not again before the first iteration, like the memory a write lands in
   * (Sidecore maps and touches it at initialization): mapped, but no longer hot in the cache. */
  unsigned char* prefaulted = checked_malloc(bytes);
  memset(prefaulted, 2, bytes);
  keep_stores(prefaulted);
  unsigned char* source = checked_malloc(bytes);
  /* The same bytes again, written page by page alongside the source, so that both are in the
   * same cache state at the first iteration: the first copy of a buffer pulls it into the
   * cache, and the same-state memcpy must not ride on the write's reads of `source`. */
  unsigned char* source_twin = checked_malloc(bytes);
  unsigned char* warm = checked_malloc(bytes);
  for (size_t page = 0; page < bytes; page += 4096) {
    const size_t end = page + 4096 < bytes ? page + 4096 : bytes;
    for (size_t i = page; i < end; ++i) source[i] = (unsigned char)(i * 131u + 7u);
    memcpy(source_twin + page, source + page, end - page);
  }
  keep_stores(source_twin);
  memset(warm, 1, bytes);
  keep_stores(warm);
  int64_t first_prefaulted_ns = 0;
  int64_t* write_ns = checked_malloc(n * sizeof(int64_t));
  int64_t* end_ns = checked_malloc(n * sizeof(int64_t));
  int64_t* warm_ns = checked_malloc(n * sizeof(int64_t));
  int64_t* cold_ns = checked_malloc(n * sizeof(int64_t));
  int64_t* both_ns = checked_malloc(n * sizeof(int64_t));
  long first_faults = 0, steady_faults = 0;
  for (int it = 0; it < n; ++it) {
    /* The first iteration writes first, as a simulation's would. Later ones rotate the order
     * so that no contender always finds the caches as the previous one left them. */
    for (int k = 0; k < 3; ++k) {
      switch ((it + k) % 3) {
        case 0: {
          const long faults = minor_faults();
          const int64_t t0 = now_ns();
          check(damaris_write("field", source), "damaris_write");
          const int64_t t1 = now_ns();
          *(it == 0 ? &first_faults : &steady_faults) += minor_faults() - faults;
          check(damaris_end_iteration(), "damaris_end_iteration");
          const int64_t t2 = now_ns();
          write_ns[it] = t1 - t0;
          end_ns[it] = t2 - t1;
          both_ns[it] = t2 - t0;
          /* The same copy into memory in the same state as the write's destination. */
          if (it == 0) first_prefaulted_ns = memcpy_warm(prefaulted, source_twin, bytes);
          break;
        }
        case 1:
          warm_ns[it] = memcpy_warm(warm, source, bytes);
          break;
        default:
          cold_ns[it] = memcpy_cold(source, bytes);
          break;
      }
    }
    compute_for(o->pause_us);
  }
  print_header(o, "write", (long)bytes);
  printf("\"iterations\":%d,\"pause_us\":%ld,", o->iterations, o->pause_us);
  printf("\"write_page_faults\":{\"first\":%ld,\"steady_mean\":%.1f},", first_faults,
         (double)steady_faults / o->iterations);
  printf(
      "\"first\":{\"write\":%lld,\"end_iteration\":%lld,\"write_end\":%lld,"
      "\"memcpy_warm\":%lld,\"memcpy_cold\":%lld,\"memcpy_prefaulted\":%lld},\"steady\":{",
      (long long)write_ns[0], (long long)end_ns[0], (long long)both_ns[0], (long long)warm_ns[0],
      (long long)cold_ns[0], (long long)first_prefaulted_ns);
  print_summary("write", write_ns + 1, (size_t)o->iterations, 0);
  print_summary("write_end", both_ns + 1, (size_t)o->iterations, 0);
  print_summary("end_iteration", end_ns + 1, (size_t)o->iterations, 0);
  print_summary("memcpy_warm", warm_ns + 1, (size_t)o->iterations, 0);
  print_summary("memcpy_cold", cold_ns + 1, (size_t)o->iterations, 1);
  printf("}}\n");
  fflush(stdout);
  free(both_ns);
  free(cold_ns);
  free(warm_ns);
  free(end_ns);
  free(write_ns);
  free(warm);
  free(source);
  free(prefaulted);
  free(source_twin);
}

struct alloc_samples {
  int64_t *total, *alloc, *commit, *clear, *end;
};

/* One damaris_alloc + commit + clear per iteration, `count` iterations from `first`; `fill`
 * bytes of each block are written between damaris_alloc and damaris_commit (the application's
 * work, not counted). */
static void alloc_loop(struct alloc_samples* s, int first, int count, size_t fill, long pause_us) {
  for (int it = first; it < first + count; ++it) {
    void* block = NULL;
    const int64_t t0 = now_ns();
    check(damaris_alloc("field", &block), "damaris_alloc");
    const int64_t t1 = now_ns();
    memset(block, it & 0xff, fill);
    const int64_t t2 = now_ns();
    check(damaris_commit("field"), "damaris_commit");
    const int64_t t3 = now_ns();
    check(damaris_clear("field"), "damaris_clear");
    const int64_t t4 = now_ns();
    check(damaris_end_iteration(), "damaris_end_iteration");
    const int64_t t5 = now_ns();
    s->alloc[it] = t1 - t0;
    s->commit[it] = t3 - t2;
    s->clear[it] = t4 - t3;
    s->total[it] = (t1 - t0) + (t4 - t2);
    s->end[it] = t5 - t4;
    compute_for(pause_us);
  }
}

static void print_alloc_summaries(struct alloc_samples* s, int first, size_t count) {
  print_summary("alloc_commit_clear", s->total + first, count, 0);
  print_summary("alloc", s->alloc + first, count, 0);
  print_summary("commit", s->commit + first, count, 0);
  print_summary("clear", s->clear + first, count, 0);
  print_summary("end_iteration", s->end + first, count, 1);
}

/* The machine's own price of touching memory after such a fill: a chain of pointers, one per
 * page, 17 pages apart, set up beforehand; after each fill of `bytes` (as the application
 * fills its block) the chain is followed for `pages` dependent reads. Returns the median cost
 * of one read: what one cache line on a page not touched since the fill costs. */
static int64_t cold_read_ns(size_t bytes, int repetitions) {
  enum { pages = 16, stride = 17 * 4096 };
  char* chain = checked_malloc((size_t)pages * stride);
  for (int p = 0; p < pages; ++p)
    *(char**)(chain + (size_t)p * stride) = chain + (size_t)((p + 1) % pages) * stride;
  unsigned char* fill = checked_malloc(bytes);
  int64_t* samples = checked_malloc((size_t)repetitions * sizeof(int64_t));
  for (int r = 0; r < repetitions; ++r) {
    memset(fill, r & 0xff, bytes);
    keep_stores(fill);
    char* q = chain;
    const int64_t t0 = now_ns();
    for (int p = 0; p < pages; ++p) q = *(char* volatile*)q;
    const int64_t t1 = now_ns();
    g_sink ^= (unsigned char)(uintptr_t)q;
    samples[r] = (t1 - t0) / pages;
  }
  const int64_t result = summarize(samples, (size_t)repetitions).median;
  free(samples);
  free(fill);
  free(chain);
  return result;
}

/* Compute phase of the "calls" loop below: long enough for the dedicated core to release the
 * previous block (null store), short enough that the caches stay warm. */
enum { calls_pause_us = 200 };

/* The first iteration and N more each after a compute phase (--pause-us), then N back to back
 * ("hot"), each filling the whole block: on a shared machine a pause of a few milliseconds
 * leaves the caches cold, and so does a fill larger than the caches; the calls' cost is then
 * mostly the cache lines they touch. Then at least 100 writing one cache line of the block,
 * each after a short compute phase ("calls"): the calls' own cost, which shows whether it depends
 * on the size. */
static void run_alloc(const struct options* o, size_t bytes) {
  /* The calls loop fills nothing: it affords more samples than the ones that fill the block. */
  const int calls = o->iterations < 100 ? 100 : o->iterations;
  const int n = 2 * o->iterations + 1 + calls;
  struct alloc_samples s;
  s.total = checked_malloc(n * sizeof(int64_t));
  s.alloc = checked_malloc(n * sizeof(int64_t));
  s.commit = checked_malloc(n * sizeof(int64_t));
  s.clear = checked_malloc(n * sizeof(int64_t));
  s.end = checked_malloc(n * sizeof(int64_t));
  alloc_loop(&s, 0, o->iterations + 1, bytes, o->pause_us);
  alloc_loop(&s, o->iterations + 1, o->iterations, bytes, 0);
  alloc_loop(&s, 2 * o->iterations + 1, calls, bytes < 64 ? bytes : 64, calls_pause_us);
  print_header(o, "alloc", (long)bytes);
  printf("\"iterations\":%d,\"pause_us\":%ld,", o->iterations, o->pause_us);
  printf(
      "\"first\":{\"alloc_commit_clear\":%lld,\"alloc\":%lld,\"commit\":%lld,\"clear\":%lld,"
      "\"end_iteration\":%lld},\"steady\":{",
      (long long)s.total[0], (long long)s.alloc[0], (long long)s.commit[0], (long long)s.clear[0],
      (long long)s.end[0]);
  print_alloc_summaries(&s, 1, (size_t)o->iterations);
  printf("},\"hot\":{");
  print_alloc_summaries(&s, o->iterations + 1, (size_t)o->iterations);
  printf("},\"calls\":{");
  print_alloc_summaries(&s, 2 * o->iterations + 1, (size_t)calls);
  printf("},\"cold_read_ns\":%lld}\n", (long long)cold_read_ns(bytes, o->iterations));
  fflush(stdout);
  free(s.end);
  free(s.clear);
  free(s.commit);
  free(s.alloc);
  free(s.total);
}

static void run_small(const struct options* o) {
  const int per = o->small_per_iteration;
  const long n = o->small_writes / per;
  int64_t* per_call_ns = checked_malloc(n * sizeof(int64_t));
  int64_t* end_ns = checked_malloc(n * sizeof(int64_t));
  int value = 0;
  for (long it = 0; it < n; ++it) {
    /* Timing the batch and dividing keeps the clock's own ~20 ns out of a sub-microsecond
     * call; the median is then taken over iterations. */
    const int64_t t0 = now_ns();
    for (int b = 0; b < per; ++b) {
      value = (int)it * per + b;
      check(damaris_write_block("tiny", b, &value), "damaris_write_block");
    }
    const int64_t t1 = now_ns();
    check(damaris_end_iteration(), "damaris_end_iteration");
    const int64_t t2 = now_ns();
    per_call_ns[it] = (t1 - t0) / per;
    end_ns[it] = t2 - t1;
  }
  print_header(o, "small", (long)sizeof value);
  printf("\"writes\":%ld,\"per_iteration\":%d,\"steady\":{", n * per, per);
  print_summary("write", per_call_ns, (size_t)n, 0);
  print_summary("end_iteration", end_ns, (size_t)n, 1);
  printf("}}\n");
  fflush(stdout);
  free(end_ns);
  free(per_call_ns);
}

static void run_empty(const struct options* o) {
  const long n = o->empty_iterations;
  int64_t* end_ns = checked_malloc(n * sizeof(int64_t));
  for (long it = 0; it < n; ++it) {
    const int64_t t0 = now_ns();
    check(damaris_end_iteration(), "damaris_end_iteration");
    end_ns[it] = now_ns() - t0;
  }
  print_header(o, "empty", 0);
  printf("\"iterations\":%ld,\"steady\":{", n);
  print_summary("end_iteration", end_ns, (size_t)n, 1);
  printf("}}\n");
  fflush(stdout);
  free(end_ns);
}

static int64_t sum_i64(const int64_t* samples, size_t count) {
  int64_t total = 0;
  for (size_t i = 0; i < count; ++i) total += samples[i];
  return total;
}

/* A client that never pauses: N iterations of one block each, back to back. With
 * --stream-api alloc the wait for buffer space (inside damaris_alloc) and the copy (a memcpy
 * into the block) are timed apart; with damaris_write only their sum is visible, and the copy
 * is estimated by a memcpy of the same bytes measured just before the stream. */
static void run_stream(const struct options* o, size_t bytes) {
  const int n = o->iterations;
  unsigned char* source = checked_malloc(bytes);
  unsigned char* warm = checked_malloc(bytes);
  for (size_t i = 0; i < bytes; ++i) source[i] = (unsigned char)(i * 131u + 7u);
  memset(warm, 1, bytes);
  int64_t calibration[7];
  for (int i = 0; i < 7; ++i) calibration[i] = memcpy_warm(warm, source, bytes);
  const int64_t copy_ns = summarize(calibration, 7).median;
  free(warm);

  int64_t* put_ns = checked_malloc(n * sizeof(int64_t));  /* write, or alloc+copy+commit+clear */
  int64_t* wait_ns = checked_malloc(n * sizeof(int64_t)); /* alloc only (alloc API) */
  int64_t* copy_in_ns = checked_malloc(n * sizeof(int64_t));
  int64_t* end_ns = checked_malloc(n * sizeof(int64_t));
  int slow = 0;
  const int64_t started = now_ns();
  for (int it = 0; it < n; ++it) {
    const int64_t stamp = it;
    memcpy(source, &stamp, sizeof stamp < bytes ? sizeof stamp : bytes);
    const int64_t t0 = now_ns();
    if (o->stream_alloc) {
      void* block = NULL;
      check(damaris_alloc("field", &block), "damaris_alloc");
      const int64_t t1 = now_ns();
      memcpy(block, source, bytes);
      const int64_t t2 = now_ns();
      check(damaris_commit("field"), "damaris_commit");
      check(damaris_clear("field"), "damaris_clear");
      wait_ns[it] = t1 - t0;
      copy_in_ns[it] = t2 - t1;
    } else {
      check(damaris_write("field", source), "damaris_write");
      wait_ns[it] = 0;
      copy_in_ns[it] = 0;
    }
    const int64_t t3 = now_ns();
    check(damaris_end_iteration(), "damaris_end_iteration");
    const int64_t t4 = now_ns();
    put_ns[it] = t3 - t0;
    end_ns[it] = t4 - t3;
    if (put_ns[it] > 2 * copy_ns) ++slow;
  }
  const int64_t loop_ns = now_ns() - started;
  check(damaris_sync(), "damaris_sync");
  const int64_t sync_ns = now_ns() - started - loop_ns;

  print_header(o, "stream", (long)bytes);
  printf(
      "\"api\":\"%s\",\"iterations\":%d,\"copy_calibration\":%lld,\"total\":%lld,"
      "\"sync\":%lld,\"put_sum\":%lld,\"end_sum\":%lld,\"alloc_sum\":%lld,\"copy_sum\":%lld,"
      "\"slow_puts\":%d,",
      o->stream_alloc ? "alloc" : "write", n, (long long)copy_ns, (long long)loop_ns,
      (long long)sync_ns, (long long)sum_i64(put_ns, n), (long long)sum_i64(end_ns, n),
      (long long)sum_i64(wait_ns, n), (long long)sum_i64(copy_in_ns, n), slow);
  printf("\"first\":{\"put\":%lld,\"end_iteration\":%lld},\"steady\":{", (long long)put_ns[0],
         (long long)end_ns[0]);
  print_summary("put", put_ns + 1, (size_t)(n - 1), 0);
  print_summary("end_iteration", end_ns + 1, (size_t)(n - 1), 1);
  printf("}}\n");
  fflush(stdout);
  free(end_ns);
  free(copy_in_ns);
  free(wait_ns);
  free(put_ns);
  free(source);
}

static int parse_phases(const char* text) {
  int phases = 0;
  char copy[128];
  snprintf(copy, sizeof copy, "%s", text);
  for (char *save = NULL, *word = strtok_r(copy, ",", &save); word;
       word = strtok_r(NULL, ",", &save)) {
    if (!strcmp(word, "write"))
      phases |= phase_write;
    else if (!strcmp(word, "alloc"))
      phases |= phase_alloc;
    else if (!strcmp(word, "small"))
      phases |= phase_small;
    else if (!strcmp(word, "empty"))
      phases |= phase_empty;
    else if (!strcmp(word, "stream"))
      phases |= phase_stream;
    else
      return -1;
  }
  return phases;
}

static int parse_options(int argc, char** argv, struct options* o) {
  o->config = NULL;
  o->label = "run";
  o->phases = phase_write | phase_alloc;
  o->iterations = 20;
  o->pause_us = 1000;
  o->small_writes = 100000;
  o->small_per_iteration = 100;
  o->empty_iterations = 10000;
  o->stream_alloc = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (a[0] != '-') {
      o->config = a;
      continue;
    }
    if (!v) return -1;
    ++i;
    if (!strcmp(a, "--phases"))
      o->phases = parse_phases(v);
    else if (!strcmp(a, "--iterations"))
      o->iterations = atoi(v);
    else if (!strcmp(a, "--pause-us"))
      o->pause_us = atol(v);
    else if (!strcmp(a, "--small-writes"))
      o->small_writes = atol(v);
    else if (!strcmp(a, "--small-per-iteration"))
      o->small_per_iteration = atoi(v);
    else if (!strcmp(a, "--empty"))
      o->empty_iterations = atol(v);
    else if (!strcmp(a, "--label"))
      o->label = v;
    else if (!strcmp(a, "--stream-api")) {
      if (!strcmp(v, "alloc"))
        o->stream_alloc = 1;
      else if (strcmp(v, "write") != 0)
        return -1;
    } else
      return -1;
  }
  if (!o->config || o->phases <= 0 || o->iterations < 1 || o->pause_us < 0 ||
      o->small_per_iteration < 1 || o->small_writes < o->small_per_iteration ||
      o->empty_iterations < 1)
    return -1;
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  struct options o;
  if (parse_options(argc, argv, &o) != 0) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
      fprintf(stderr,
              "usage: %s CONFIG.xml [--phases write,alloc,small,empty,stream] [--iterations N] "
              "[--pause-us US] [--small-writes N] [--small-per-iteration N] [--empty N] "
              "[--stream-api write|alloc] [--label TEXT]\n",
              argv[0]);
    MPI_Finalize();
    return 1;
  }
  check(damaris_initialize(o.config, MPI_COMM_WORLD), "damaris_initialize");
  int is_client = 0;
  check(damaris_start(&is_client), "damaris_start");
  if (is_client) {
    MPI_Comm clients;
    check(damaris_client_comm_get(&clients), "damaris_client_comm_get");
    int count = 0;
    MPI_Comm_size(clients, &count);
    if (count != 1) {
      fprintf(stderr, "micro_write: expects exactly one client, found %d\n", count);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int bytes = 0;
    check(damaris_parameter_get("bytes", &bytes, sizeof bytes), "damaris_parameter_get");
    if (bytes < 1) {
      fprintf(stderr, "micro_write: parameter 'bytes' must be positive\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (o.phases & phase_write) run_write(&o, (size_t)bytes);
    if (o.phases & phase_alloc) run_alloc(&o, (size_t)bytes);
    if (o.phases & phase_small) run_small(&o);
    if (o.phases & phase_empty) run_empty(&o);
    if (o.phases & phase_stream) run_stream(&o, (size_t)bytes);
    check(damaris_stop(), "damaris_stop");
  }
  check(damaris_finalize(), "damaris_finalize");
  MPI_Finalize();
  return 0;
}
