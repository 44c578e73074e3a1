/* damaris_initialize for the test programs. Sidecore refuses a configuration on every rank
 * together; each rank then prints the code and the message and leaves through MPI_Finalize with
 * exit status 2. An MPI_Abort from the first rank to fail could, under MPICH, cut the other
 * ranks' messages, which the tests look for. */
#ifndef SIDECORE_TESTS_INITIALIZE_OR_LEAVE_H
#define SIDECORE_TESTS_INITIALIZE_OR_LEAVE_H

#include <Damaris.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static inline void initialize_or_leave(const char* program, const char* xml) {
  const int rc = damaris_initialize(xml, MPI_COMM_WORLD);
  if (rc == DAMARIS_OK) return;
  fprintf(stderr, "%s: damaris_initialize returned %d (%s): %s\n", program, rc,
          damaris_error_string(rc), damaris_last_error_message());
  MPI_Finalize();
  exit(2);
}

#endif
