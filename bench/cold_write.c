/* Where a small write after a compute phase spends its time: the pages it touches, and a
 * pointer chase touching as many pages (and lines) in plain memory after the same compute phase,
 * in the same process. Prints one JSON line per run for bench/run_cold_write.sh.
 *
 * Usage: sidecore_cold_write CONFIG.xml [--api write|alloc] [--iterations N] [--pause-us US]
 *                            [--label TEXT] [--name-pages]
 *
 * The configuration is one of bench/micro_<mode>.xml with bytes = 8: one client, a store that
 * discards the data, and a dedicated core, a dedicated node, a background thread or nothing
 * (synchronous). On the client:
 *   pages    after a compute phase, /proc/self/clear_refs clears the accessed bits of every
 *            page of the process, the hand-over runs (--api write: damaris_write("field") +
 *            damaris_end_iteration; --api alloc: damaris_alloc, the 8 bytes copied into the
 *            block, damaris_commit, damaris_clear, damaris_end_iteration: the zero-copy path,
 *            whose calls do the same work whatever the block's size), and
 *            /proc/self/smaps tells which pages were accessed since, mapping by mapping (code of
 *            libsidecore, of the C and C++ runtimes, the shared segment, the heap, the stack...).
 *            The same with nothing between the two (what reading smaps itself touches) is given
 *            as the baseline. Three rounds; the median count is the chase's size.
 *   timed    --iterations rounds, each made of the measurements below in a rotating order, each
 *            after its own compute phase of --pause-us (a busy loop, as a simulation's):
 *              write        the hand-over (damaris_write of 8 bytes + damaris_end_iteration,
 *                           or the five calls of --api alloc);
 *              chase_pages  a pointer chain through one cache line in each of P pages of plain
 *                           memory (P = the pages the write touched), last followed one round
 *                           earlier, as the library's tables were last used one round earlier;
 *              chase_lines  a chain through the same number of lines, 64 per page (P / 64 pages);
 *            and back to back, without a compute phase: write_hot, the same write again (the
 *            second after the measured one: the library may leave some of its cold work, a
 *            system call it makes only now and then, to the first).
 *   named    with --name-pages, one more hand-over after a compute phase with the heap and
 *            libsidecore's mappings made inaccessible: each page's first access faults and is
 *            recorded with the instruction that made it (first_touches), then allowed.
 *   lines    with --trace-lines FILE, nothing timed: a few hand-overs, then one between two
 *            stores to a marker page at trace_marker_address, for a memory tracer to cut out
 *            of the whole run's accesses (run_cold_write.py --lines runs valgrind's lackey);
 *            FILE gets /proc/self/maps just before, to name the mappings.
 * If the write after a compute phase costs what chase_pages costs and chase_lines far less, the
 * time goes to address translation (TLB misses and page walks, which a virtual machine makes
 * two-dimensional), not to the library's work (write_hot).
 */
#define _GNU_SOURCE

#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define BENCH_PROGRAM "cold_write"
#include "bench_calls.h"

enum { page_bytes = 4096, line_bytes = 64, count_rounds = 3, max_mappings = 96 };

struct options {
  const char* config;
  const char* label;
  int zero_copy; /* --api alloc */
  int iterations;
  long pause_us;
  int name_pages;          /* --name-pages */
  const char* trace_lines; /* --trace-lines FILE */
};

static int64_t median(int64_t* v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare_i64);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- Pages accessed, from /proc/self/smaps ---------------------------------------------- */

/* The buffer smaps is read into: a mapping of its own, left out of the counts (the kernel
 * writes it while it reports). */
static char* g_smaps;
static size_t g_smaps_size = 8u << 20;

struct mapping_count {
  char name[64];
  long pages;
};

struct page_count {
  long total;
  int mappings;
  struct mapping_count by[max_mappings];
};

/* Clearing the accessed bits does not flush the TLB on every kernel (Linux 6.18 flushes only
 * when soft-dirty bits are cleared): a page whose translation is still cached is then used
 * without its bit being set again, and goes uncounted. Changing the protection of more pages
 * than the kernel invalidates one by one (tlb_single_page_flush_ceiling, 33) flushes the whole
 * TLB of the process. */
enum { flush_pages = 128 };
static char* g_flush_region;

static void flush_tlb(void) {
  const size_t bytes = (size_t)flush_pages * page_bytes;
  if (!g_flush_region) {
    g_flush_region = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g_flush_region == MAP_FAILED) {
      perror("cold_write: mmap");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(g_flush_region, 1, bytes); /* present pages: changing them needs a flush */
  }
  if (mprotect(g_flush_region, bytes, PROT_READ) != 0 ||
      mprotect(g_flush_region, bytes, PROT_READ | PROT_WRITE) != 0) {
    perror("cold_write: mprotect");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

static void clear_accessed_bits(void) {
  const int fd = open("/proc/self/clear_refs", O_WRONLY);
  if (fd < 0 || write(fd, "1", 1) != 1) {
    perror("cold_write: /proc/self/clear_refs");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  close(fd);
  flush_tlb();
}

/* What a mapping is, from its smaps header line ("low-high perms offset dev inode path"): the
 * file's base name, [heap], [stack] or "anonymous", with " code" for an executable mapping. */
static void mapping_name(const char* header, char* name, size_t size) {
  const char* perms = strchr(header, ' ');
  const int code = perms && strlen(perms) > 4 && perms[3] == 'x';
  const char* path = header;
  for (int field = 0; field < 5 && path; ++field) {
    path = strchr(path, ' ');
    while (path && *path == ' ') ++path;
  }
  const char* base = "anonymous";
  size_t n = strlen(base);
  if (path && *path) {
    base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    n = strlen(base);
    const char* so = strstr(base, ".so"); /* libfoo.so.1.2.3 -> libfoo.so */
    if (so) n = (size_t)(so - base) + 3;
  }
  snprintf(name, size, "%.*s%s", (int)n, base, code ? " code" : "");
}

static void add_pages(struct page_count* c, const char* name, long pages) {
  c->total += pages;
  int i = 0;
  while (i < c->mappings && strcmp(c->by[i].name, name) != 0) ++i;
  if (i == c->mappings) {
    /* The last slot gathers the rest: an Open MPI process maps about 40 libraries and plugins,
     * so it only takes what a larger program adds. */
    if (c->mappings >= max_mappings - 1) {
      i = max_mappings - 1;
      if (c->mappings < max_mappings) {
        snprintf(c->by[i].name, sizeof c->by[i].name, "other");
        c->by[i].pages = 0;
        c->mappings = max_mappings;
      }
    } else {
      snprintf(c->by[i].name, sizeof c->by[i].name, "%s", name);
      c->by[i].pages = 0;
      ++c->mappings;
    }
  }
  c->by[i].pages += pages;
}

/* A mapping's header line starts with its address range in lower-case hexadecimal; the lines
 * of its fields with a capitalized name ("Referenced:", "VmFlags:"). */
static int is_mapping_header(const char* line, unsigned long* low, unsigned long* high) {
  return (line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f')
             ? sscanf(line, "%lx-%lx", low, high) == 2
             : 0;
}

/* Pages accessed since the last clear_accessed_bits, by mapping. */
static struct page_count accessed_pages(void) {
  struct page_count c;
  memset(&c, 0, sizeof c);
  const int fd = open("/proc/self/smaps", O_RDONLY);
  size_t used = 0;
  while (fd >= 0 && used + 1 < g_smaps_size) {
    const ssize_t got = read(fd, g_smaps + used, g_smaps_size - 1 - used);
    if (got <= 0) break;
    used += (size_t)got;
  }
  if (fd >= 0) close(fd);
  g_smaps[used] = '\0';
  const uintptr_t own = (uintptr_t)g_smaps;
  char name[64] = "anonymous";
  int skipping = 0;
  for (char* line = g_smaps; line && *line;) {
    char* next = strchr(line, '\n');
    if (next) *next++ = '\0';
    unsigned long low = 0, high = 0;
    if (is_mapping_header(line, &low, &high)) {
      mapping_name(line, name, sizeof name);
      skipping = own >= low && own < high;
    } else if (!skipping && !strncmp(line, "Referenced:", 11)) {
      const long kib = atol(line + 11);
      if (kib > 0) add_pages(&c, name, kib / 4);
    }
    line = next;
  }
  return c;
}

static int64_t write_and_end(const char* field);

/* ---- First touches, named -------------------------------------------------------------- */

/* Which pages of the heap and of libsidecore one hand-over touches, and from where: after a
 * compute phase those mappings are made inaccessible, each first access faults, and the
 * handler records the page and the instruction that touched it, then gives the page its
 * access back. Only the first access to each page is seen; the program's own frames and
 * libc are left accessible (the handler runs on them). */
enum { max_traced = 32, max_touches = 256 };

struct traced_range {
  uintptr_t low, high, base; /* base: the load address of the file (its lowest mapping) */
  int prot;
  char name[64];
};

struct touch {
  uintptr_t page, ip;
  int range, write, other_thread;
};

static struct traced_range g_traced[max_traced];
static int g_traced_count;
static struct touch g_touches[max_touches];
static int g_touch_count;
static pid_t g_tracing_thread;
static char g_library_path[256];

/* Set while the traced mappings are inaccessible. A thread of the library that faulted then may
 * take its signal only after the window closed (it was descheduled in between on a busy
 * machine): the handler stays installed, and such a fault returns to an accessible page. */
static volatile sig_atomic_t g_tracing;

static void on_first_touch(int sig, siginfo_t* info, void* context) {
  const uintptr_t address = (uintptr_t)info->si_addr;
  const ucontext_t* uc = context;
  for (int i = 0; i < g_traced_count; ++i) {
    if (address < g_traced[i].low || address >= g_traced[i].high) continue;
    if (!g_tracing) { /* restored meanwhile: a real fault faults again, and crashes */
      signal(sig, SIG_DFL);
      return;
    }
    const uintptr_t page = address & ~(uintptr_t)(page_bytes - 1);
    if (g_touch_count < max_touches) {
      struct touch* t = &g_touches[g_touch_count++];
      t->page = page;
      t->ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
      t->range = i;
      t->write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
      t->other_thread = (pid_t)syscall(SYS_gettid) != g_tracing_thread;
    }
    mprotect((void*)page, page_bytes, g_traced[i].prot);
    return;
  }
  signal(sig, SIG_DFL); /* a fault of the program itself: crash as it would have */
}

/* The heap and libsidecore's mappings, from /proc/self/maps. */
static void find_traced_ranges(void) {
  g_traced_count = 0;
  FILE* maps = fopen("/proc/self/maps", "r");
  char line[512];
  uintptr_t library_base = 0;
  while (maps && fgets(line, sizeof line, maps) && g_traced_count < max_traced) {
    unsigned long low = 0, high = 0;
    char perms[8] = "", path[256] = "";
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255[^\n]", &low, &high, perms, path) < 3) continue;
    const int heap = strstr(path, "[heap]") != NULL;
    if (!heap && !strstr(path, "libsidecore.so")) continue;
    if (!heap && !library_base) {
      library_base = low;
      snprintf(g_library_path, sizeof g_library_path, "%s", path);
    }
    struct traced_range* r = &g_traced[g_traced_count++];
    r->low = low;
    r->high = high;
    r->base = heap ? low : library_base;
    r->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
              (perms[2] == 'x' ? PROT_EXEC : 0);
    snprintf(r->name, sizeof r->name, "%s%s", heap ? "[heap]" : "libsidecore.so",
             heap ? "" : (perms[2] == 'x' ? " code" : (perms[1] == 'w' ? " data" : " rodata")));
  }
  if (maps) fclose(maps);
}

/* The first touches of one hand-over after a compute phase, as JSON: mapping, page offset in
 * it, read or write, and where the instruction was (libsidecore.so+offset, or "other"). */
static void print_first_touches(const char* field, long pause_us) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_first_touch;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, NULL); /* kept: see g_tracing */
  g_tracing_thread = (pid_t)syscall(SYS_gettid);
  find_traced_ranges();
  g_touch_count = 0;
  compute_for(pause_us);
  g_tracing = 1;
  for (int i = 0; i < g_traced_count; ++i)
    mprotect((void*)g_traced[i].low, g_traced[i].high - g_traced[i].low, PROT_NONE);
  write_and_end(field);
  for (int i = 0; i < g_traced_count; ++i)
    mprotect((void*)g_traced[i].low, g_traced[i].high - g_traced[i].low, g_traced[i].prot);
  g_tracing = 0;
  printf("\"library\":\"%s\",\"first_touches\":[", g_library_path);
  for (int k = 0; k < g_touch_count; ++k) {
    const struct touch* t = &g_touches[k];
    const struct traced_range* r = &g_traced[t->range];
    char where[64] = "other";
    for (int i = 0; i < g_traced_count; ++i)
      if (t->ip >= g_traced[i].low && t->ip < g_traced[i].high && strstr(g_traced[i].name, "lib"))
        snprintf(where, sizeof where, "libsidecore.so+0x%lx",
                 (unsigned long)(t->ip - g_traced[i].base));
    printf("%s{\"mapping\":\"%s\",\"page\":%lu,\"write\":%d,\"ip\":\"%s\",\"other_thread\":%d}",
           k ? "," : "", r->name, (unsigned long)((t->page - r->base) / page_bytes), t->write,
           where, t->other_thread);
  }
  printf("],");
}

/* ---- The chase ------------------------------------------------------------------------- */

static volatile uintptr_t g_sink;

/* A cyclic chain through `count` lines, `per_page` lines in each page, the pages picked at
 * random from `pool` pages of memory and the order of the nodes random too. */
static void** make_chain(char* memory, size_t pool, long count, int per_page, unsigned* seed) {
  const long pages = (count + per_page - 1) / per_page;
  long* page = checked_malloc((size_t)pool * sizeof(long));
  for (size_t i = 0; i < pool; ++i) page[i] = (long)i;
  for (long i = 0; i < pages; ++i) { /* the first `pages` of a random permutation */
    const long j = i + (long)(rand_r(seed) % (unsigned)(pool - (size_t)i));
    const long t = page[i];
    page[i] = page[j];
    page[j] = t;
  }
  void*** node = checked_malloc((size_t)count * sizeof(void**));
  for (long i = 0; i < count; ++i) {
    const long line = per_page == 1 ? rand_r(seed) % (page_bytes / line_bytes) : i % per_page;
    node[i] =
        (void**)(memory + (size_t)page[i / per_page] * page_bytes + (size_t)line * line_bytes);
  }
  for (long i = count - 1; i > 0; --i) { /* visit the nodes in a random order */
    const long j = rand_r(seed) % (unsigned)(i + 1);
    void** t = node[i];
    node[i] = node[j];
    node[j] = t;
  }
  for (long i = 0; i < count; ++i) *node[i] = node[(i + 1) % count];
  void** start = node[0];
  free(node);
  free(page);
  return start;
}

static int64_t chase(void** start, long count) {
  const int64_t t0 = now_ns();
  void** p = start;
  for (long i = 0; i < count; ++i) p = (void**)*p;
  const int64_t t1 = now_ns();
  g_sink ^= (uintptr_t)p;
  return t1 - t0;
}

/* ---- The runs ------------------------------------------------------------------------- */

/* The hand-over timed and counted: the 8 bytes through damaris_write, or through a block of
 * the shared buffer (damaris_alloc, filled, committed and cleared), then the end of the
 * iteration. */
static int g_zero_copy;

__attribute__((noinline)) static int64_t write_and_end(const char* field) {
  const int64_t t0 = now_ns();
  if (g_zero_copy) {
    void* block = NULL;
    check(damaris_alloc("field", &block), "damaris_alloc");
    memcpy(block, field, 8);
    check(damaris_commit("field"), "damaris_commit");
    check(damaris_clear("field"), "damaris_clear");
  } else {
    check(damaris_write("field", field), "damaris_write");
  }
  check(damaris_end_iteration(), "damaris_end_iteration");
  return now_ns() - t0;
}

/* ---- Lines, for a tracer ---------------------------------------------------------------- */

/* A page at a fixed address: its stores stand out in a trace of every access, whatever the
 * load addresses of the program and its libraries. */
static const uintptr_t trace_marker_address = 0x3c0000000;

static int copy_file(const char* from, const char* to) {
  FILE* in = fopen(from, "r");
  FILE* out = in ? fopen(to, "w") : NULL;
  char buffer[4096];
  size_t got = 0;
  int ok = in && out;
  while (ok && (got = fread(buffer, 1, sizeof buffer, in)) > 0)
    ok = fwrite(buffer, 1, got, out) == got;
  if (out && fclose(out) != 0) ok = 0;
  if (in) fclose(in);
  return ok;
}

static void trace_lines(const struct options* o) {
  char field[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  g_zero_copy = o->zero_copy;
  volatile uint64_t* marker = mmap((void*)trace_marker_address, page_bytes, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (marker != (volatile uint64_t*)trace_marker_address) {
    perror("cold_write: mmap of the trace marker");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int i = 0; i < 4; ++i) write_and_end(field); /* the first hand-overs' one-time work */
  if (!copy_file("/proc/self/maps", o->trace_lines)) {
    fprintf(stderr, "cold_write: cannot write %s\n", o->trace_lines);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  *marker = 1;
  write_and_end(field);
  *marker = 2;
  munmap((void*)marker, page_bytes);
  printf("COLD {\"lines_traced\":1}\n");
}

static void print_count(const char* key, const struct page_count* c) {
  printf("\"%s\":{\"total\":%ld,\"by_mapping\":{", key, c->total);
  for (int i = 0; i < c->mappings; ++i)
    printf("%s\"%s\":%ld", i ? "," : "", c->by[i].name, c->by[i].pages);
  printf("}}");
}

static void run(const struct options* o) {
  char field[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  g_zero_copy = o->zero_copy;
  g_smaps = mmap(NULL, g_smaps_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (g_smaps == MAP_FAILED) {
    perror("cold_write: mmap");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  memset(g_smaps, 0, g_smaps_size);
  for (int i = 0; i < 3; ++i) write_and_end(field); /* past the first iteration's set-up */

  /* Pages: the write's after a compute phase, and what counting alone touches. */
  struct page_count baseline[count_rounds], counted[count_rounds];
  int64_t counted_total[count_rounds];
  for (int r = 0; r < count_rounds; ++r) {
    compute_for(o->pause_us);
    clear_accessed_bits();
    baseline[r] = accessed_pages();
    compute_for(o->pause_us);
    clear_accessed_bits();
    write_and_end(field);
    counted[r] = accessed_pages();
    counted_total[r] = counted[r].total;
  }
  int64_t sorted[count_rounds];
  memcpy(sorted, counted_total, sizeof sorted);
  const long pages = (long)median(sorted, count_rounds);
  int typical = 0;
  for (int r = 0; r < count_rounds; ++r)
    if (counted_total[r] == pages) typical = r;

  /* Chains of that many pages (one line each) and lines (64 per page), in a pool of memory
   * large enough that the chosen pages are far apart, touched now. */
  const size_t pool = 16384; /* 64 MiB */
  char* memory =
      mmap(NULL, pool * page_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    perror("cold_write: mmap");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  memset(memory, 0, pool * page_bytes);
  unsigned seed = 12345;
  const long count = pages > 0 ? pages : 1;
  void** pages_chain = make_chain(memory, pool / 2, count, 1, &seed);
  void** lines_chain =
      make_chain(memory + pool / 2 * page_bytes, pool / 2, count, page_bytes / line_bytes, &seed);
  chase(pages_chain, count);
  chase(lines_chain, count);

  const int n = o->iterations;
  int64_t* write_ns = checked_malloc((size_t)n * sizeof(int64_t));
  int64_t* hot_ns = checked_malloc((size_t)n * sizeof(int64_t));
  int64_t* pages_ns = checked_malloc((size_t)n * sizeof(int64_t));
  int64_t* lines_ns = checked_malloc((size_t)n * sizeof(int64_t));
  for (int it = 0; it < n; ++it) {
    for (int k = 0; k < 3; ++k) {
      compute_for(o->pause_us);
      switch ((it + k) % 3) {
        case 0:
          write_ns[it] = write_and_end(field);
          write_and_end(field); /* the first call after the phase may leave some of its */
          hot_ns[it] = write_and_end(field); /* cold work to the next (a system call) */
          break;
        case 1:
          pages_ns[it] = chase(pages_chain, count);
          break;
        default:
          lines_ns[it] = chase(lines_chain, count);
          break;
      }
    }
  }
  printf(
      "COLD {\"label\":\"%s\",\"api\":\"%s\",\"pause_us\":%ld,\"iterations\":%d,"
      "\"pages\":%ld,",
      o->label, o->zero_copy ? "alloc" : "write", o->pause_us, n, pages);
  print_count("counted", &counted[typical]);
  printf(",");
  print_count("baseline", &baseline[typical]);
  printf(",");
  if (o->name_pages) print_first_touches(field, o->pause_us);
  printf("\"ns\":{\"write\":%lld,\"write_hot\":%lld,\"chase_pages\":%lld,\"chase_lines\":%lld}}\n",
         (long long)median(write_ns, n), (long long)median(hot_ns, n),
         (long long)median(pages_ns, n), (long long)median(lines_ns, n));
  fflush(stdout);
  free(lines_ns);
  free(pages_ns);
  free(hot_ns);
  free(write_ns);
  munmap(memory, pool * page_bytes);
  munmap(g_smaps, g_smaps_size);
}

static int parse_options(int argc, char** argv, struct options* o) {
  o->config = NULL;
  o->label = "run";
  o->iterations = 10;
  o->pause_us = 100000;
  o->zero_copy = 0;
  o->name_pages = 0;
  o->trace_lines = NULL;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (a[0] != '-') {
      o->config = a;
      continue;
    }
    if (!strcmp(a, "--name-pages")) {
      o->name_pages = 1;
      continue;
    }
    if (i + 1 >= argc) return -1;
    const char* v = argv[++i];
    if (!strcmp(a, "--iterations"))
      o->iterations = atoi(v);
    else if (!strcmp(a, "--pause-us"))
      o->pause_us = atol(v);
    else if (!strcmp(a, "--trace-lines"))
      o->trace_lines = v;
    else if (!strcmp(a, "--label"))
      o->label = v;
    else if (!strcmp(a, "--api") && (!strcmp(v, "write") || !strcmp(v, "alloc")))
      o->zero_copy = !strcmp(v, "alloc");
    else
      return -1;
  }
  return o->config && o->iterations >= 1 && o->pause_us >= 0 ? 0 : -1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  struct options o;
  if (parse_options(argc, argv, &o) != 0) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
      fprintf(stderr,
              "usage: %s CONFIG.xml [--api write|alloc] [--iterations N] [--pause-us US] "
              "[--label TEXT] [--name-pages] [--trace-lines MAPS_FILE]\n",
              argv[0]);
    MPI_Finalize();
    return 1;
  }
  check(damaris_initialize(o.config, MPI_COMM_WORLD), "damaris_initialize");
  int is_client = 0;
  check(damaris_start(&is_client), "damaris_start");
  if (is_client) {
    if (o.trace_lines)
      trace_lines(&o);
    else
      run(&o);
    check(damaris_stop(), "damaris_stop");
  }
  check(damaris_finalize(), "damaris_finalize");
  MPI_Finalize();
  return 0;
}
