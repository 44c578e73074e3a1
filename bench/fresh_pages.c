/* What preparing shared memory never touched costs on this machine, by every way there is to
 * do it, alone and two at a time: the floor under a first write that lands on a buffer still
 * being prepared (bench/README.md, "The cold paths").
 *
 * Usage: sidecore_fresh_pages [--mib N] [--rounds R] [--out DIR]
 *
 * Each round creates, for each method, an unlinked /dev/shm file of N MiB (64 by default),
 * prepares it and times that; the methods alternate round by round so that a noisy moment
 * hits all alike. DIR (default .) receives fresh_pages.json (every time) and fresh_pages.md
 * (median, min-max, GB/s and the ratio over a copy into prepared pages).
 *
 * Methods (the dedicated core's reservation is "pwrite zeros"):
 *   copy into prepared pages   memcpy into pages already allocated and mapped (the reference)
 *   pwrite zeros               pwrite of a MiB of zeros at a time (allocates and clears)
 *   fallocate                  posix_fallocate alone (allocates, clears nothing)
 *   fallocate + populate       then MADV_POPULATE_WRITE (the first fault clears)
 *   populate write             MADV_POPULATE_WRITE alone
 *   copy by page faults        memcpy into the fresh mapping (a fault per page)
 *   pwrite data                pwrite of the data itself into fresh pages (no clearing)
 *   two threads, pwrite both   pwrite zeros from the front, pwrite data from the back, each
 *                              claiming 2 MiB steps until they meet (the file's lock orders them)
 *   two threads, faults back   the same with memcpy by page faults from the back
 *   pwrite zeros beside memset pwrite zeros while another thread, on another processor,
 *                              rewrites a private array of the same size (a simulation's
 *                              compute phase beside its dedicated core)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { method_count = 10, step_bytes = 2 << 20, chunk_bytes = 1 << 20 };
static const char* const method_names[method_count] = {"copy into prepared pages",
                                                       "pwrite zeros",
                                                       "fallocate",
                                                       "fallocate + populate",
                                                       "populate write",
                                                       "copy by page faults",
                                                       "pwrite data",
                                                       "two threads, pwrite both",
                                                       "two threads, faults back",
                                                       "pwrite zeros beside memset"};

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void die(const char* what) {
  fprintf(stderr, "sidecore_fresh_pages: %s: %s\n", what, strerror(errno));
  exit(1);
}

/* A fresh file of `bytes` in /dev/shm, already unlinked, and its mapping. */
struct region {
  int fd;
  char* base;
  size_t bytes;
};

static struct region fresh_region(size_t bytes) {
  char name[64];
  snprintf(name, sizeof name, "/sidecore-fresh-pages-%d", (int)getpid());
  struct region r = {shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600), NULL, bytes};
  if (r.fd < 0) die("shm_open");
  shm_unlink(name);
  if (ftruncate(r.fd, (off_t)bytes) != 0) die("ftruncate");
  r.base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
  if (r.base == MAP_FAILED) die("mmap");
  return r;
}

static void drop_region(struct region* r) {
  munmap(r->base, r->bytes);
  close(r->fd);
}

static const char zeros[chunk_bytes];

static void pwrite_all(int fd, const char* from, size_t bytes, size_t offset, size_t chunk) {
  for (size_t done = 0; done < bytes;) {
    const size_t n = bytes - done < chunk ? bytes - done : chunk;
    const ssize_t w = pwrite(fd, from ? from + done : zeros, n, (off_t)(offset + done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) die("pwrite");
    done += (size_t)w;
  }
}

/* Two preparers meeting in the middle: the front one (pwrite zeros) and the back one, each
 * claiming 2 MiB steps (0 free, 1 front, 2 back). */
struct meeting {
  struct region* r;
  const char* data;
  _Atomic int* steps;
  size_t count;
  int back_by_faults;
  double front_ms;
};

static void* front_preparer(void* arg) {
  struct meeting* m = arg;
  const double start = now_ms();
  for (size_t k = 0; k < m->count; ++k) {
    int expected = 0;
    if (!atomic_compare_exchange_strong(&m->steps[k], &expected, 1)) break;
    pwrite_all(m->r->fd, NULL, step_bytes, k * step_bytes, chunk_bytes);
  }
  m->front_ms = now_ms() - start;
  return NULL;
}

static void back_preparer(struct meeting* m) {
  for (size_t k = m->count; k-- > 0;) {
    int expected = 0;
    if (!atomic_compare_exchange_strong(&m->steps[k], &expected, 2)) break;
    if (m->back_by_faults)
      memcpy(m->r->base + k * step_bytes, m->data + k * step_bytes, step_bytes);
    else
      pwrite_all(m->r->fd, m->data + k * step_bytes, step_bytes, k * step_bytes, step_bytes);
  }
}

struct compute {
  char* array;
  size_t bytes;
  atomic_int stop;
};

static void* compute_phase(void* arg) {
  struct compute* c = arg;
  for (int pass = 0; !atomic_load(&c->stop); ++pass)
    for (size_t at = 0; at < c->bytes && !atomic_load(&c->stop); at += 65536)
      memset(c->array + at, pass & 0xff, 65536);
  return NULL;
}

static double run_method(int method, size_t bytes, char* data, char* private_array) {
  struct region r = fresh_region(bytes);
  double start = 0, elapsed = 0;
  switch (method) {
    case 0: /* prepared and mapped first; only the copy is timed */
      pwrite_all(r.fd, NULL, bytes, 0, chunk_bytes);
      memset(r.base, 0, bytes);
      /* fall through */
    case 5:
      start = now_ms();
      memcpy(r.base, data, bytes);
      elapsed = now_ms() - start;
      break;
    case 1:
    case 6:
      start = now_ms();
      pwrite_all(r.fd, method == 6 ? data : NULL, bytes, 0, chunk_bytes);
      elapsed = now_ms() - start;
      break;
    case 2:
    case 3:
      start = now_ms();
      if (posix_fallocate(r.fd, 0, (off_t)bytes) != 0) die("posix_fallocate");
      if (method == 3 && madvise(r.base, bytes, MADV_POPULATE_WRITE) != 0) die("madvise");
      elapsed = now_ms() - start;
      break;
    case 4:
      start = now_ms();
      if (madvise(r.base, bytes, MADV_POPULATE_WRITE) != 0) die("madvise");
      elapsed = now_ms() - start;
      break;
    case 7:
    case 8: {
      const size_t count = bytes / step_bytes;
      _Atomic int* steps = calloc(count ? count : 1, sizeof *steps);
      if (!steps) die("calloc");
      struct meeting m = {&r, data, steps, count, method == 8, 0};
      pthread_t front;
      start = now_ms();
      if (pthread_create(&front, NULL, front_preparer, &m) != 0) die("pthread_create");
      back_preparer(&m);
      pthread_join(front, NULL);
      elapsed = now_ms() - start;
      free(steps);
      break;
    }
    case 9: {
      struct compute c = {private_array, bytes, 0};
      pthread_t other;
      if (pthread_create(&other, NULL, compute_phase, &c) != 0) die("pthread_create");
      /* Each on a processor of its own, as a client and its dedicated core (where this
       * process may use two). */
      cpu_set_t allowed, mine, theirs;
      const int pinned =
          sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) >= 2;
      if (pinned) {
        CPU_ZERO(&mine);
        CPU_ZERO(&theirs);
        for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE && seen < 2; ++cpu)
          if (CPU_ISSET(cpu, &allowed)) CPU_SET(cpu, seen++ ? &mine : &theirs);
        pthread_setaffinity_np(other, sizeof theirs, &theirs);
        pthread_setaffinity_np(pthread_self(), sizeof mine, &mine);
      }
      usleep(2000); /* the compute phase is running */
      start = now_ms();
      pwrite_all(r.fd, NULL, bytes, 0, chunk_bytes);
      elapsed = now_ms() - start;
      atomic_store(&c.stop, 1);
      pthread_join(other, NULL);
      if (pinned) pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed);
      break;
    }
  }
  /* Every method leaves the data or zeros where they belong. */
  if (method == 5 || method == 6 || method == 0) {
    if (memcmp(r.base, data, bytes) != 0) {
      fprintf(stderr, "sidecore_fresh_pages: %s left other bytes\n", method_names[method]);
      exit(1);
    }
  }
  drop_region(&r);
  return elapsed;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  size_t mib = 64;
  int rounds = 5;
  const char* out = ".";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--mib") && i + 1 < argc) {
      mib = strtoul(argv[++i], NULL, 10);
    } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
      rounds = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
      out = argv[++i];
    } else {
      fprintf(stderr, "usage: %s [--mib N] [--rounds R] [--out DIR]\n", argv[0]);
      return 2;
    }
  }
  if (mib < 2 || mib % 2 || rounds < 1) {
    fprintf(stderr, "sidecore_fresh_pages: --mib is an even number of MiB (>= 2), --rounds >= 1\n");
    return 2;
  }
  const size_t bytes = mib << 20;
  char* data = malloc(bytes);
  char* private_array = malloc(bytes);
  double* times = calloc((size_t)rounds * method_count, sizeof *times);
  if (!data || !private_array || !times) die("malloc");
  memset(data, 0x5a, bytes);
  memset(private_array, 1, bytes);
  for (int round = 0; round < rounds; ++round)
    for (int method = 0; method < method_count; ++method)
      times[method * rounds + round] = run_method(method, bytes, data, private_array);

  char path[4096];
  snprintf(path, sizeof path, "%s/fresh_pages.json", out);
  FILE* json = fopen(path, "w");
  snprintf(path, sizeof path, "%s/fresh_pages.md", out);
  FILE* md = fopen(path, "w");
  if (!json || !md) die("cannot write the results");
  fprintf(json, "{\"mib\": %zu, \"rounds\": %d, \"methods\": [", mib, rounds);
  fprintf(md,
          "# Preparing %zu MiB of shared memory never touched\n\n"
          "Median (min-max) of %d rounds, methods alternated (bench/fresh_pages.c says what each "
          "does).\n\n| method | ms | GB/s | over a copy into prepared pages |\n|---|---|---|---|\n",
          mib, rounds);
  double reference = 0;
  for (int method = 0; method < method_count; ++method) {
    double* t = times + method * rounds;
    fprintf(json, "%s{\"method\": \"%s\", \"ms\": [", method ? ", " : "", method_names[method]);
    for (int round = 0; round < rounds; ++round)
      fprintf(json, "%s%.3f", round ? ", " : "", t[round]);
    fprintf(json, "]}");
    qsort(t, (size_t)rounds, sizeof *t, by_value);
    const double median = rounds % 2 ? t[rounds / 2] : (t[rounds / 2 - 1] + t[rounds / 2]) / 2;
    if (method == 0) reference = median;
    fprintf(md, "| %s | %.1f (%.1f-%.1f) | %.1f | %.2fx |\n", method_names[method], median, t[0],
            t[rounds - 1], (double)bytes / (median * 1e6), median / reference);
  }
  fprintf(json, "]}\n");
  fclose(json);
  fclose(md);
  snprintf(path, sizeof path, "%s/fresh_pages.md", out);
  FILE* again = fopen(path, "r");
  for (int c; again && (c = fgetc(again)) != EOF;) putchar(c);
  if (again) fclose(again);
  free(times);
  free(private_array);
  free(data);
  return 0;
}
