# Sourced by the scripts that run the tests in parallel under Open MPI.
#
# keep_ompi_session_dir   keeps Open MPI's top session directory (<tmp>/ompi.<host>.<uid>)
#                         from being removed while tests run. Each mpirun removes that
#                         directory at its end when it is empty, and a second mpirun creating
#                         its own directory inside it at that moment fails at start-up ("A call
#                         to mkdir was unable to create the desired directory ... File
#                         exists", Open MPI issue 8510). A directory of ours inside keeps it
#                         non-empty; it is removed when the calling script exits.

keep_ompi_session_dir() {
  local host
  host=$(hostname)
  local top="${TMPDIR:-/tmp}/ompi.${host%%.*}.$(id -u)"
  ompi_session_keeper="$top/sidecore-tests-$$"
  mkdir -p "$ompi_session_keeper"
  trap 'rmdir "$ompi_session_keeper" 2>/dev/null || true' EXIT
}

# one_blas_thread   numpy's OpenBLAS starts a thread per core in every Python process of the
#                   tests (drivers, h5py read-backs, the dedicated cores' scripts), and those
#                   threads spin after each call: on a small machine running tests side by side
#                   they took about 4% of the processor time for nothing. Unless the caller
#                   chose otherwise, one thread each.
one_blas_thread() {
  export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
}

# ob1_on_one_machine  Open MPI chooses its point-to-point layer at every job start, and trying
#                     the "cm" layer first initializes libfabric's providers: 0.2 s of every
#                     mpirun here (a job of 3 ranks that does nothing: 0.35 s, 0.15 s with
#                     ob1 named). On one machine it then takes ob1 (shared memory, TCP between
#                     the emulated hosts) anyway; naming it skips the probe. Unless the caller
#                     chose otherwise.
ob1_on_one_machine() {
  export OMPI_MCA_pml="${OMPI_MCA_pml:-ob1}"
}
