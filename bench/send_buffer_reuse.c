/* Probe for the dedicated-node write path: what a memcpy into a buffer that MPI has just sent to
 * another process costs, beside a memcpy into a buffer only this process touches, and what the
 * two MPI_Isend calls of a block (announcement + data) plus one MPI_Testall cost.
 *
 * Usage: mpirun -np 2 sidecore_send_buffer_reuse [BYTES] [ITERATIONS]
 * Rank 0 copies into its send buffer, sends it to rank 1, copies into a private buffer, waits for
 * the send, then busy-waits like the benchmark's compute phase; rank 1 receives. Prints medians.
 */
#define _DEFAULT_SOURCE

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Minor page faults of this process so far. */
static long minor_faults(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

static int compare_i64(const void* a, const void* b) {
  const int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

static int64_t median(int64_t* samples, int count) {
  qsort(samples, (size_t)count, sizeof *samples, compare_i64);
  return samples[count / 2];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const size_t bytes = argc > 1 ? (size_t)atol(argv[1]) : (size_t)1 << 20;
  const int iterations = argc > 2 ? atoi(argv[2]) : 100;
  if (size != 2 || bytes < 1 || bytes > 1u << 30 || iterations < 1) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 %s [BYTES] [ITERATIONS]\n", argv[0]);
    MPI_Finalize();
    return 1;
  }
  unsigned char* source = malloc(bytes);
  unsigned char* sent = malloc(bytes);
  unsigned char* private_copy = malloc(bytes);
  int64_t* into_sent = malloc(iterations * sizeof(int64_t));
  int64_t* into_private = malloc(iterations * sizeof(int64_t));
  int64_t* mpi_calls = malloc(iterations * sizeof(int64_t));
  if (!source || !sent || !private_copy || !into_sent || !into_private || !mpi_calls) {
    fprintf(stderr, "send_buffer_reuse: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  memset(source, 3, bytes);
  memset(sent, 1, bytes);
  memset(private_copy, 2, bytes);
  char announcement[320] = {0};
  long faults_into_sent = 0;
  for (int it = 0; it < iterations; ++it) {
    if (rank == 0) {
      const long faults = minor_faults();
      const int64_t t0 = now_ns();
      memcpy(sent, source, bytes);
      const int64_t t1 = now_ns();
      faults_into_sent += minor_faults() - faults;
      MPI_Request requests[2];
      MPI_Isend(announcement, sizeof announcement, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &requests[0]);
      MPI_Isend(sent, (int)bytes, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &requests[1]);
      int done = 0;
      MPI_Testall(2, requests, &done, MPI_STATUSES_IGNORE);
      const int64_t t2 = now_ns();
      memcpy(private_copy, source, bytes);
      const int64_t t3 = now_ns();
      if (!done) MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
      into_sent[it] = t1 - t0;
      mpi_calls[it] = t2 - t1;
      into_private[it] = t3 - t2;
      const int64_t end = now_ns() + 200000 + (int64_t)bytes / 8192 * 1000;
      while (now_ns() < end) {
      }
    } else {
      MPI_Recv(announcement, sizeof announcement, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      MPI_Recv(sent, (int)bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  if (rank == 0) {
    const int64_t a = median(into_sent, iterations), b = median(into_private, iterations);
    printf(
        "%zu bytes, %d iterations (medians): memcpy into the buffer MPI just sent %lld ns, "
        "into a private buffer %lld ns (%.2fx), %.1f page faults per copy into the sent "
        "buffer; MPI_Isend x2 + MPI_Testall %lld ns\n",
        bytes, iterations, (long long)a, (long long)b, (double)a / (double)b,
        (double)faults_into_sent / iterations, (long long)median(mpi_calls, iterations));
  }
  free(mpi_calls);
  free(into_private);
  free(into_sent);
  free(private_copy);
  free(sent);
  free(source);
  MPI_Finalize();
  return 0;
}
