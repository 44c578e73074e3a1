#!/usr/bin/env bash
# Builds Sidecore against MPICH (-DSIDECORE_MPI=mpich: mpicc.mpich, mpiexec.mpich, hdf5-mpich)
# and runs the C, C++ and Fortran tests under mpiexec.mpich. The MPI of the default build is
# left as it was: installing MPICH does not change the system's mpicc, mpirun or hdf5.pc.
# Usage: scripts/test_mpich.sh [ctest arguments...]   (build directory: $SIDECORE_MPICH_BUILD_DIR,
# default build-mpich)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SIDECORE_MPICH_BUILD_DIR:-$root/build-mpich}

# shellcheck source=lib/mpich.sh
. "$root/scripts/lib/mpich.sh"
install_mpich "sidecore test_mpich"

# No Python module or script runner: the mpi4py they need is built against the default MPI.
# No benchmarks: nothing tests them. setup.sh installs the rest of what the build needs.
"$root/scripts/setup.sh" "$build" -DSIDECORE_MPI=mpich -DSIDECORE_BUILD_PYTHON=OFF \
  -DSIDECORE_BUILD_BENCH=OFF
# The drivers read the files back with h5py and VTK (from pip: no MPI inside). A Python that
# has them is reused (SIDECORE_TEST_PYTHON, or the venv of scripts/test.sh); otherwise a venv
# of the MPICH build gets them.
python=""
for candidate in "${SIDECORE_TEST_PYTHON:-}" "$root/build/venv/bin/python"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ] &&
     "$candidate" -c "import h5py, numpy, vtkmodules.vtkIOXdmf2" 2>/dev/null; then
    python=$candidate
    break
  fi
done
if [ -z "$python" ]; then
  [ -x "$build/venv/bin/python" ] || python3 -m venv "$build/venv"
  python="$build/venv/bin/python"
  "$python" -c "import h5py, numpy, vtkmodules.vtkIOXdmf2" 2>/dev/null ||
    "$build/venv/bin/pip" install --quiet --disable-pip-version-check h5py numpy vtk
fi

export SIDECORE_TEST_PYTHON="$python"
# shellcheck source=lib/ompi_session.sh
. "$root/scripts/lib/ompi_session.sh"
one_blas_thread
no_io_device_discovery
# The launcher is the build's (mpiexec.mpich), whatever the caller's environment says.
unset SIDECORE_TEST_MPIEXEC
cd "$build"
# Three test slots per core (scripts/test.sh takes four; these tests were not measured at four).
ctest --output-on-failure --timeout 600 -j "${SIDECORE_TEST_JOBS:-$(($(nproc) * 3))}" "$@"
