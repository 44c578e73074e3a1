#include "common/mpi_finalize_hook.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <new>

namespace sidecore {
namespace {

struct hook {
  void (*callback)();
};

int run_hook(MPI_Comm, int, void* value, void*) {
  const hook* h = static_cast<hook*>(value);
  h->callback();
  delete h;
  return MPI_SUCCESS;
}

}  // namespace

bool call_at_mpi_finalize(void (*callback)()) noexcept {
  // Parallel HDF5 closes itself at MPI_Finalize by the same means. MPI deletes the attributes in
  // the reverse order of their setting: HDF5's, set when HDF5 opens, must be set first, so
  // that the callbacks registered here still find HDF5 working.
  if (H5open() < 0) return false;
  int keyval = MPI_KEYVAL_INVALID;
  if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, run_hook, &keyval, nullptr) != MPI_SUCCESS)
    return false;
  hook* h = new (std::nothrow) hook{callback};
  if (!h || MPI_Comm_set_attr(MPI_COMM_SELF, keyval, h) != MPI_SUCCESS) {
    delete h;
    MPI_Comm_free_keyval(&keyval);
    return false;
  }
  // The keyval stays allocated with its attribute; MPI_Finalize frees both.
  return true;
}

}  // namespace sidecore
