/* Expectations shared by the C API tests: a failed expectation is printed and counted, and the
 * program goes on, so that one run reports every broken error path; the verdict is then
 * agreed over all ranks. Plain C99: the tests are also a check that Damaris.h is valid C. */
#ifndef SIDECORE_TESTS_C_CHECK_H
#define SIDECORE_TESTS_C_CHECK_H

#include <Damaris.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int check_failures = 0;
static int check_rank = -1; /* world rank, set by check_begin() */

static inline void check_begin(void) { MPI_Comm_rank(MPI_COMM_WORLD, &check_rank); }

static inline double check_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Checks the code of a call and, when a failure is expected, that the message mentions each
 * needle (NULL needles are ignored). Returns 1 when everything matched. */
static inline int check_rc_at(const char* file, int line, const char* call, int rc, int want,
                              const char* needle1, const char* needle2) {
  /* Copy at once: the message is only valid until the next call into the API. */
  char message[4096];
  const char* last = damaris_last_error_message();
  snprintf(message, sizeof message, "%s", last ? last : "(NULL)");
  int ok = 1;
  if (rc != want) {
    fprintf(stderr, "[rank %d] %s:%d: FAIL %s\n    returned %d (%s)\n    expected %d (%s)\n",
            check_rank, file, line, call, rc, damaris_error_string(rc), want,
            damaris_error_string(want));
    if (rc != DAMARIS_OK) fprintf(stderr, "    message: %s\n", message);
    ok = 0;
  } else if (want != DAMARIS_OK) {
    const char* needles[2] = {needle1, needle2};
    if (!last || message[0] == '\0') {
      fprintf(stderr, "[rank %d] %s:%d: FAIL %s returned %d but left no message\n", check_rank,
              file, line, call, rc);
      ok = 0;
    }
    for (int i = 0; i < 2; ++i) {
      if (needles[i] && !strstr(message, needles[i])) {
        fprintf(stderr,
                "[rank %d] %s:%d: FAIL %s\n    message \"%s\"\n    does not mention \"%s\"\n",
                check_rank, file, line, call, message, needles[i]);
        ok = 0;
      }
    }
  }
  if (!ok) ++check_failures;
  return ok;
}

/* damaris_start and damaris_stop on a client: DAMARIS_OK with dedicated cores or nodes,
 * DAMARIS_NO_SERVER (as in Damaris) without them. */
static inline int check_started_at(const char* file, int line, const char* call, int rc) {
  if (rc == DAMARIS_NO_SERVER) return 1;
  return check_rc_at(file, line, call, rc, DAMARIS_OK, NULL, NULL);
}
#define EXPECT_STARTED(call) check_started_at(__FILE__, __LINE__, #call, (call))

static inline int check_true_at(const char* file, int line, const char* condition, int value) {
  if (value) return 1;
  fprintf(stderr, "[rank %d] %s:%d: FAIL %s\n", check_rank, file, line, condition);
  ++check_failures;
  return 0;
}

#define EXPECT_RC(call, want, needle1, needle2) \
  check_rc_at(__FILE__, __LINE__, #call, (call), (want), (needle1), (needle2))
#define EXPECT_OK(call) check_rc_at(__FILE__, __LINE__, #call, (call), DAMARIS_OK, NULL, NULL)
#define EXPECT(condition) check_true_at(__FILE__, __LINE__, #condition, (condition) ? 1 : 0)

/* Collective over MPI_COMM_WORLD: every rank reports its own count, rank 0 the total.
 * Returns the exit status of the program (0 when no rank failed). */
static inline int check_finish(const char* program) {
  int total = 0;
  MPI_Allreduce(&check_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (check_failures)
    fprintf(stderr, "[rank %d] %s: %d failed expectation(s)\n", check_rank, program,
            check_failures);
  if (check_rank == 0) {
    if (total)
      fprintf(stderr, "%s: FAILED (%d failed expectation(s) over all ranks)\n", program, total);
    else
      printf("%s: every expectation held on every rank\n", program);
    fflush(stdout);
  }
  return total ? 1 : 0;
}

#endif /* SIDECORE_TESTS_C_CHECK_H */
