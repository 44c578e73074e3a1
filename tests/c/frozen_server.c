/* A dedicated core or node frozen (SIGSTOP) while its client writes: the first write that needs it
 * waits its timeout and fails; the next ones fail at once instead of waiting again (the core
 * has not moved since); once it runs again (SIGCONT) writes succeed and nothing is lost.
 * Usage: frozen_server <xml> [before-reservation]
 * (2 ranks: client 0, dedicated core or node 1; buffer of 3 blocks). With before-reservation,
 * the dedicated core stops itself just before it reserves the shared buffer's pages (the
 * first moments of a run, where the client waits for those pages, not for room). */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <Damaris.h>
#include <dlfcn.h>
#include <mpi.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <sidecore/stats.h>

#include "check.h"

/* On the dedicated core in before-reservation mode: its first write to a file in /dev/shm (the
 * reservation of the shared buffer's pages, which writes zeros, on a thread of the core) waits
 * until damaris_initialize has returned, then stops the process. (A process stopped inside
 * damaris_initialize would stop the job's start-up collective itself.) This program's pwrite
 * takes the place of the C library's for libsidecore. */
static atomic_int stop_before_reserving = 0; /* 1: armed; 2: initialize returned */

static int in_dev_shm(int fd) {
  char link[64], target[256];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return 0;
  target[n] = '\0';
  return strncmp(target, "/dev/shm/", 9) == 0;
}

ssize_t pwrite(int fd, const void* buffer, size_t count, off_t offset) {
  typedef ssize_t (*pwrite_fn)(int, const void*, size_t, off_t);
  static pwrite_fn real = NULL;
  if (!real) *(void**)&real = dlsym(RTLD_NEXT, "pwrite");
  if (atomic_load(&stop_before_reserving) != 0 && in_dev_shm(fd)) {
    while (atomic_load(&stop_before_reserving) != 2) {
      struct timespec nap = {0, 1000 * 1000};
      nanosleep(&nap, NULL);
    }
    atomic_store(&stop_before_reserving, 0);
    kill(getpid(), SIGSTOP);
    /* Another thread may take the signal: this one stops on its way back from a system call. */
    struct timespec nap = {0, 1000 * 1000};
    nanosleep(&nap, NULL);
  }
  return real(fd, buffer, count, offset);
}

/* Waits until process pid is stopped (state T in /proc/<pid>/stat); 0 after 30 s. */
static int wait_until_stopped(int pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  const double start = check_now();
  while (check_now() - start < 30) {
    FILE* f = fopen(path, "r");
    char state = '?';
    if (f) {
      /* pid (comm) state ...: the state follows the last ')' */
      char line[512];
      if (fgets(line, sizeof line, f)) {
        const char* close = strrchr(line, ')');
        if (close && close[1] == ' ') state = close[2];
      }
      fclose(f);
    }
    if (state == 'T') return 1;
    struct timespec nap = {0, 1000 * 1000};
    nanosleep(&nap, NULL);
  }
  return 0;
}

enum { N = 8192 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  check_begin();
  if (argc < 2) {
    fprintf(stderr, "usage: frozen_server <xml>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* The dedicated core (last rank) tells the client who it is. */
  int size = 1, server_pid = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int mine = (int)getpid();
  MPI_Bcast(check_rank == size - 1 ? &mine : &server_pid, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
  const int before_reservation = argc > 2 && strcmp(argv[2], "before-reservation") == 0;
  if (before_reservation && check_rank == size - 1) atomic_store(&stop_before_reserving, 1);
  if (!EXPECT_OK(damaris_initialize(argv[1], MPI_COMM_WORLD))) MPI_Abort(MPI_COMM_WORLD, 2);
  if (before_reservation && check_rank == size - 1) atomic_store(&stop_before_reserving, 2);
  int is_client = -1;
  EXPECT_STARTED(damaris_start(&is_client));
  if (is_client) {
    static double data[N];
    for (int i = 0; i < N; ++i) data[i] = i;
    int it = 0, written = 0; /* iterations ended, blocks written */
    const char* first_needle = NULL;
    if (before_reservation) {
      /* The core stopped itself before reserving a page: the first write waits for them. */
      if (!EXPECT(wait_until_stopped(server_pid)))
        fprintf(stderr, "the dedicated core did not stop before reserving the buffer\n");
      first_needle = "not reserved this part of the shared buffer yet";
    } else {
      /* One iteration stored first: the core has reserved the buffer (one step of it). */
      written += EXPECT_OK(damaris_write("data", data));
      EXPECT_OK(damaris_end_iteration());
      EXPECT_OK(damaris_sync());
      ++it;
      EXPECT(kill((pid_t)server_pid, SIGSTOP) == 0);
      /* The buffer holds three blocks: then a write needs the frozen core to free one. */
      for (int k = 0; k < 3; ++k, ++it) {
        written += EXPECT_OK(damaris_write("data", data));
        EXPECT_OK(damaris_end_iteration());
      }
    }
    double start = check_now();
    EXPECT_RC(damaris_write("data", data), DAMARIS_ALLOCATION_ERROR, "damaris_write", first_needle);
    const double first = check_now() - start;
    EXPECT(first >= 0.9); /* it waited its timeout (1 s) */
    start = check_now();
    for (int k = 0; k < 5; ++k)
      EXPECT_RC(damaris_write("data", data), DAMARIS_ALLOCATION_ERROR, "damaris_write",
                "has not moved");
    const double next = check_now() - start;
    if (!EXPECT(next < 0.9)) fprintf(stderr, "five writes took %.3f s: they waited again\n", next);
    EXPECT(kill((pid_t)server_pid, SIGCONT) == 0);
    /* Running again: the iteration the failed writes belonged to ends, and the next ones go.
     * Until the core has been given a processor and moved, a write still fails at once saying
     * so (on a loaded machine that can take a while): the first write is retried for that
     * reason alone, then every write waits again and succeeds. */
    EXPECT_OK(damaris_end_iteration());
    ++it;
    int rc = DAMARIS_ALLOCATION_ERROR;
    const double resumed = check_now();
    while ((rc = damaris_write("data", data)) == DAMARIS_ALLOCATION_ERROR &&
           strstr(damaris_last_error_message(), "has not moved") != NULL &&
           check_now() - resumed < 60) {
      struct timespec nap = {0, 10 * 1000 * 1000};
      nanosleep(&nap, NULL);
    }
    if (EXPECT(rc == DAMARIS_OK))
      ++written;
    else
      fprintf(stderr, "the first write after SIGCONT: %s\n", damaris_last_error_message());
    EXPECT_OK(damaris_end_iteration());
    ++it;
    for (int k = 1; k < 3; ++k, ++it) {
      written += EXPECT_OK(damaris_write("data", data));
      EXPECT_OK(damaris_end_iteration());
    }
    EXPECT_OK(damaris_sync());
    /* Nothing accepted was lost: the core received every block and stored every iteration
     * (a dedicated node's counters are out of the client's reach). */
    sidecore_stats_t stats = SIDECORE_STATS_INIT;
    if (EXPECT_OK(sidecore_stats(&stats)) && (stats.flags & SIDECORE_STATS_WRITER)) {
      if (!EXPECT(stats.blocks_received == (uint64_t)written) ||
          !EXPECT(stats.iterations_stored == (uint64_t)it))
        fprintf(stderr, "the core received %llu block(s) of %d, stored %llu iteration(s) of %d\n",
                (unsigned long long)stats.blocks_received, written,
                (unsigned long long)stats.iterations_stored, it);
    }
    EXPECT_STARTED(damaris_stop());
  }
  EXPECT_OK(damaris_finalize());
  const int status = check_finish("frozen_server");
  MPI_Finalize();
  return status;
}
