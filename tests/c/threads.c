/* Four threads of one client call damaris_write_block at once (Damaris.h says one thread).
 * Calls that meet another thread inside the API are refused with a message saying so; those
 * that return DAMARIS_OK are stored exact. The program lists, in <out>/accepted.txt, every
 * (iteration, block) accepted; run_threads.py reads the files back against it.
 * Usage: threads <xml> <out directory> <iterations> */
#include <Damaris.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../initialize_or_leave.h"

enum { THREADS = 4, SIDE = 256 };

struct job {
  int block;
  int iteration;
  int accepted;
  int refused;
  int wrong; /* a failure other than the refusal */
  double* field;
  pthread_barrier_t* start; /* every thread calls at the same moment */
};

static void* write_one(void* argument) {
  struct job* j = argument;
  for (int i = 0; i < SIDE * SIDE; ++i) j->field[i] = j->iteration * 1e6 + j->block * 1e5 + i;
  pthread_barrier_wait(j->start);
  const int rc = damaris_write_block("field", j->block, j->field);
  if (rc == DAMARIS_OK) {
    j->accepted = 1;
  } else if (strstr(damaris_last_error_message(), "another thread") != NULL) {
    j->refused = 1;
  } else {
    fprintf(stderr, "block %d: unexpected failure %d: %s\n", j->block, rc,
            damaris_last_error_message());
    j->wrong = 1;
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  if (argc < 4) {
    fprintf(stderr, "usage: threads <xml> <out directory> <iterations>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int iterations = atoi(argv[3]);
  initialize_or_leave("threads", argv[1]);
  int is_client = 0;
  damaris_start(&is_client);
  int status = 0;
  if (is_client) {
    char path[4096];
    snprintf(path, sizeof path, "%s/accepted.txt", argv[2]);
    FILE* list = fopen(path, "w");
    if (!list) {
      perror(path);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int accepted = 0, refused = 0, wrong = 0;
    struct job jobs[THREADS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, THREADS);
    for (int t = 0; t < THREADS; ++t) jobs[t].field = malloc(sizeof(double) * SIDE * SIDE);
    for (int it = 0; it < iterations; ++it) {
      pthread_t threads[THREADS];
      for (int t = 0; t < THREADS; ++t) {
        jobs[t].block = t;
        jobs[t].iteration = it;
        jobs[t].accepted = jobs[t].refused = jobs[t].wrong = 0;
        jobs[t].start = &start;
        pthread_create(&threads[t], NULL, write_one, &jobs[t]);
      }
      for (int t = 0; t < THREADS; ++t) {
        pthread_join(threads[t], NULL);
        if (jobs[t].accepted) fprintf(list, "%d %d\n", it, t);
        accepted += jobs[t].accepted;
        refused += jobs[t].refused;
        wrong += jobs[t].wrong;
      }
      if (damaris_end_iteration() != DAMARIS_OK) {
        fprintf(stderr, "damaris_end_iteration: %s\n", damaris_last_error_message());
        ++wrong;
      }
    }
    fclose(list);
    pthread_barrier_destroy(&start);
    for (int t = 0; t < THREADS; ++t) free(jobs[t].field);
    printf("threads: %d writes accepted, %d refused as concurrent, %d other failures\n", accepted,
           refused, wrong);
    if (wrong > 0 || accepted == 0) status = 1;
    damaris_stop();
  }
  damaris_finalize();
  MPI_Finalize();
  return status;
}
