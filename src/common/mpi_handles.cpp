// MPI error translation.
#include "common/mpi_handles.hpp"

namespace sidecore {

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw mpi_error(std::string(call) + " failed: " + std::string(text, length));
}

}  // namespace sidecore
