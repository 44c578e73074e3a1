/* sidecore/read.h stands alone: a program that only reads stored output includes it without
 * Damaris.h or MPI's headers, compiles as C99, and gets the codes, types and limits it needs. */
#include <sidecore/read.h>
#include <stdio.h>
#include <string.h>

#if defined(MPI_VERSION) || defined(SIDECORE_DAMARIS_H)
#error "sidecore/read.h pulled in mpi.h or Damaris.h"
#endif

int main(void) {
  sidecore_block_info info;
  int failures = 0;
  if (sizeof info.extents != 8 * sizeof(int64_t) || SIDECORE_MAX_DIMENSIONS != 8) {
    fprintf(stderr, "FAIL: SIDECORE_MAX_DIMENSIONS is %d\n", (int)SIDECORE_MAX_DIMENSIONS);
    ++failures;
  }
  int32_t count = -1;
  const int rc = sidecore_read_iterations("/nonexistent-sidecore-dir/run", NULL, 0, &count);
  if (rc != DAMARIS_ARGUMENT_ERROR || strstr(sidecore_read_last_error(), "sidecore_read") == NULL) {
    fprintf(stderr, "FAIL: a missing directory gave %d, '%s'\n", rc, sidecore_read_last_error());
    ++failures;
  }
  (void)DAMARIS_TYPE_DOUBLE;
  if (failures == 0) puts("read.h alone: OK");
  return failures == 0 ? 0 : 1;
}
