// Work to do when MPI_Finalize begins. MPI_Finalize first deletes the attributes of
// MPI_COMM_SELF, while every MPI call still works (MPI 4.1, section 11.2.4), so a callback
// registered here can still communicate, as every process of the job is in MPI_Finalize too.
// For a program that calls MPI_Finalize before damaris_finalize, or whose MPI is finalized at
// exit (mpi4py): threads Sidecore started must stop, and what was written should be stored.
// The callbacks run before HDF5 closes itself in MPI_Finalize.
#pragma once

namespace sidecore {

// Calls `callback` at the start of MPI_Finalize. Call once per callback per process (a static
// flag beside the call does it); MPI must be initialized. False when MPI refused the
// attribute (the callback will then not run).
bool call_at_mpi_finalize(void (*callback)()) noexcept;

}  // namespace sidecore
