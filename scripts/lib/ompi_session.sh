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

# no_io_device_discovery   at start-up, MPI (mpirun, its daemons and each process started
#                   alone) asks hwloc for the machine's topology, with its I/O devices: hwloc
#                   then reads every PCI device's configuration space from sysfs. In a virtual
#                   machine each of those reads traps to the hypervisor: here they took about 5%
#                   of the suite's processor time (perf record -a), 60 ms of the 220 ms that a
#                   3-rank job spends starting. The tests place nothing by network card or GPU,
#                   so hwloc's PCI and Linux I/O components are left out unless the caller set
#                   HWLOC_COMPONENTS.
no_io_device_discovery() {
  export HWLOC_COMPONENTS="${HWLOC_COMPONENTS:--pci,-linuxio}"
}

# ob1_for_every_job   at every start, Open MPI first tries its cm layer, which initializes
#                   libfabric's providers (0.2 s per mpirun here), and then takes ob1 on one
#                   machine anyway. The tests' launcher names ob1 (SIDECORE_TEST_MPIEXEC); the
#                   benchmark scripts, the hosts harness and the processes that start MPI alone
#                   get it from the environment unless the caller chose a layer. The unit tests'
#                   processes keep Open MPI's own choice (tests/unit/CMakeLists.txt).
ob1_for_every_job() {
  export OMPI_MCA_pml="${OMPI_MCA_pml:-ob1}"
}
