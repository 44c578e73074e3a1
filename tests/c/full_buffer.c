/* The full-buffer policy seen from a simulation. The dedicated core is made slow by the event
 * "slow", whose action sleeps; each mode checks one promise:
 *   oversize  a block larger than the whole buffer fails at once, whatever the policy;
 *   wait      policy="wait": writes block until the server frees space, and nothing is lost;
 *   timeout   policy="wait" with a timeout: a write gives up with DAMARIS_ALLOCATION_ERROR
 *             when the server stays stuck, and the run goes on once it recovers;
 *   skip      policy="skip": writes return at once, whole iterations are dropped and counted.
 * run_c_test.py reads the stored iterations back.
 * Usage: full_buffer <xml> <mode> <iterations> <sleep ms> <buffer bytes> <timeout s> */
#include <Damaris.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "values.h"

enum { DATA_N = 8192, HUGE_N = 262144 };

static int g_sleep_ms = 0;

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

/* Runs on the dedicated core: while it sleeps, the server neither stores nor frees. */
void full_slow(const char* name, int32_t source, int32_t iteration, const char* args) {
  (void)name;
  (void)args;
  fprintf(stderr, "full_buffer: server sleeps %d ms for client %d, iteration %d\n", g_sleep_ms,
          (int)source, (int)iteration);
  sleep_ms(g_sleep_ms);
}

static double data[DATA_N];

static int write_data(int iteration, int source) {
  values_data(data, DATA_N, iteration, source);
  return damaris_write("data", data);
}

/* A request that can never be satisfied must not wait, even under policy="wait". */
static void oversize(int source, int iterations, double buffer_bytes, double timeout) {
  static double huge[HUGE_N];
  char size[64];
  snprintf(size, sizeof size, "%.2f MiB", buffer_bytes / (1024.0 * 1024.0));
  const double start = check_now();
  EXPECT_RC(damaris_write("huge", huge), DAMARIS_ALLOCATION_ERROR, size, "buffer");
  double seconds = check_now() - start;
  fprintf(stderr, "full_buffer: oversize write returned after %.3f s (timeout %g s)\n", seconds,
          timeout);
  EXPECT(seconds < timeout);
  void* ptr = NULL;
  const double alloc_start = check_now();
  EXPECT_RC(damaris_alloc("huge", &ptr), DAMARIS_ALLOCATION_ERROR, size, "buffer");
  seconds = check_now() - alloc_start;
  EXPECT(seconds < timeout);
  EXPECT(ptr == NULL);
  /* The failure belongs to that block only: the rest of the iteration is stored. */
  for (int it = 0; it < iterations; ++it) {
    EXPECT_OK(write_data(it, source));
    EXPECT_OK(damaris_end_iteration());
  }
}

static void wait_for_space(MPI_Comm clients, int source, int iterations) {
  double longest = 0;
  for (int it = 0; it < iterations; ++it) {
    /* Clients of a simulation move in step (they exchange halos). Without that, one client
     * could fill the shared buffer with later iterations while another still owes a block of
     * the current one, and nothing could ever be freed. */
    MPI_Barrier(clients);
    const double start = check_now();
    EXPECT_OK(write_data(it, source));
    const double seconds = check_now() - start;
    if (seconds > longest) longest = seconds;
    EXPECT_OK(damaris_signal("slow"));
    EXPECT_OK(damaris_end_iteration());
  }
  fprintf(stderr, "full_buffer: client %d waited at most %.3f s in one write\n", source, longest);
  /* The buffer holds 3 blocks and the server sleeps on every signal: if no write of any client
   * ever waited, the scenario did not fill the buffer and proves nothing. (Which client waits
   * depends on which one leaves the barrier first.) */
  double longest_anywhere = 0;
  MPI_Allreduce(&longest, &longest_anywhere, 1, MPI_DOUBLE, MPI_MAX, clients);
  EXPECT(longest_anywhere > 0.05);
}

static void give_up_after_timeout(int source, double timeout) {
  const double stuck = g_sleep_ms / 1000.0;
  /* Iterations 0 and 1 fill the buffer (2 blocks); the server is stuck in "slow". */
  EXPECT_OK(write_data(0, source));
  EXPECT_OK(damaris_signal("slow"));
  EXPECT_OK(damaris_end_iteration());
  EXPECT_OK(write_data(1, source));
  EXPECT_OK(damaris_end_iteration());

  double start = check_now();
  EXPECT_RC(write_data(2, source), DAMARIS_ALLOCATION_ERROR, "timeout", "waited");
  double seconds = check_now() - start;
  fprintf(stderr, "full_buffer: write gave up after %.3f s (timeout %g s)\n", seconds, timeout);
  EXPECT(seconds >= timeout * 0.9);
  EXPECT(seconds < stuck);
  /* The server has not moved since: the next wait for it gives up at once (after a short
   * grace) instead of waiting its whole timeout again. */
  void* ptr = NULL;
  start = check_now();
  EXPECT_RC(damaris_alloc("data", &ptr), DAMARIS_ALLOCATION_ERROR, "has not moved", NULL);
  seconds = check_now() - start;
  fprintf(stderr, "full_buffer: alloc gave up after %.3f s\n", seconds);
  EXPECT(seconds < timeout * 0.9);
  EXPECT(ptr == NULL);
  EXPECT_OK(damaris_end_iteration());

  /* What a simulation would do: try again. The server recovers after `stuck` seconds. */
  int rc = DAMARIS_ALLOCATION_ERROR, attempts = 0;
  const double retry_start = check_now();
  while (rc == DAMARIS_ALLOCATION_ERROR && check_now() - retry_start < stuck + 30 * timeout) {
    rc = write_data(3, source);
    ++attempts;
  }
  EXPECT_RC(rc, DAMARIS_OK, NULL, NULL);
  fprintf(stderr, "full_buffer: iteration 3 written after %d attempt(s)\n", attempts);
  EXPECT_OK(damaris_end_iteration());
  EXPECT_OK(write_data(4, source));
  EXPECT_OK(damaris_end_iteration());
}

static void skip_when_full(int source, int iterations) {
  for (int it = 0; it < iterations; ++it) {
    const double start = check_now();
    if (it % 2 == 0) {
      EXPECT_OK(write_data(it, source));
    } else {
      /* Zero copy: a dropped block still gets memory to fill, so the code does not change. */
      double* p = NULL;
      EXPECT_OK(damaris_alloc("data", (void**)&p));
      if (EXPECT(p != NULL)) values_data(p, DATA_N, it, source);
      EXPECT_OK(damaris_commit("data"));
      EXPECT_OK(damaris_clear("data"));
    }
    /* Skipping never waits for the server (the drops checked by the driver prove it better;
     * this bound only has to be far below a wait for the timeout). */
    EXPECT(check_now() - start < 5.0);
    EXPECT_OK(damaris_signal("slow"));
    EXPECT_OK(damaris_end_iteration());
    sleep_ms(50);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  check_begin();
  if (argc < 7) {
    fprintf(stderr,
            "usage: full_buffer <xml> <oversize|wait|timeout|skip> <iterations> <sleep ms> "
            "<buffer bytes> <timeout s>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const char* mode = argv[2];
  const int iterations = atoi(argv[3]);
  g_sleep_ms = atoi(argv[4]);
  const double buffer_bytes = atof(argv[5]);
  const double timeout = atof(argv[6]);

  /* Bound on every rank: the action runs on the dedicated core. */
  EXPECT_OK(damaris_bind("slow", full_slow));
  if (!EXPECT_OK(damaris_initialize(argv[1], MPI_COMM_WORLD))) MPI_Abort(MPI_COMM_WORLD, 2);
  int is_client = -1;
  EXPECT_STARTED(damaris_start(&is_client));
  if (is_client == 1) {
    MPI_Comm comm;
    int source = -1;
    EXPECT_OK(damaris_client_comm_get(&comm));
    MPI_Comm_rank(comm, &source);
    if (strcmp(mode, "oversize") == 0)
      oversize(source, iterations, buffer_bytes, timeout);
    else if (strcmp(mode, "wait") == 0)
      wait_for_space(comm, source, iterations);
    else if (strcmp(mode, "timeout") == 0)
      give_up_after_timeout(source, timeout);
    else if (strcmp(mode, "skip") == 0)
      skip_when_full(source, iterations);
    else
      EXPECT(!"known mode");
    EXPECT_STARTED(damaris_stop());
    /* The driver looks for the counters' report after this line. */
    fprintf(stderr, "full_buffer: rank %d calls damaris_finalize\n", check_rank);
  }
  EXPECT_OK(damaris_finalize());
  int status = check_finish("full_buffer");
  MPI_Finalize();
  return status;
}
