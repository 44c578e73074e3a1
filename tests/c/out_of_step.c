/* Clients out of step: client 0 stops right after damaris_start while the others write
 * `iterations` iterations. Nothing may hang, whatever the mode, and every block the others
 * wrote must be stored (checked by run_c_test.py --check out_of_step); iterations client 0
 * left out are marked incomplete.
 * Usage: out_of_step <xml> <iterations> */
#include <Damaris.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "values.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  check_begin();
  if (argc < 3) {
    fprintf(stderr, "usage: out_of_step <xml> <iterations>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int iterations = atoi(argv[2]);
  if (!EXPECT_OK(damaris_initialize(argv[1], MPI_COMM_WORLD))) MPI_Abort(MPI_COMM_WORLD, 2);
  int is_client = -1;
  EXPECT_STARTED(damaris_start(&is_client));
  if (is_client) {
    MPI_Comm comm;
    int source = -1;
    EXPECT_OK(damaris_client_comm_get(&comm));
    MPI_Comm_rank(comm, &source);
    if (source != 0) {
      double field[VALUES_NX * VALUES_NY];
      const int64_t position[2] = {0, (int64_t)source * VALUES_NX};
      for (int it = 0; it < iterations; ++it) {
        values_field(field, it, source, 0);
        EXPECT_OK(damaris_set_position("field", position));
        EXPECT_OK(damaris_write("field", field));
        EXPECT_OK(damaris_end_iteration());
      }
    }
    EXPECT_STARTED(damaris_stop());
  }
  EXPECT_OK(damaris_finalize());
  const int status = check_finish("out_of_step");
  MPI_Finalize();
  return status;
}
