#!/usr/bin/env bash
# Builds Sidecore and runs every test (unit, MPI end-to-end with HDF5 read-back, C, install).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SIDECORE_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh" "$build"
# h5py and numpy read the files back, VTK reads the XDMF as ParaView would, mpi4py and pytest
# run the Python client's tests (mpi4py built from source against the system MPI), nanobind
# builds the Python module, Dask and matplotlib serve the server-side scripts' tests; a private
# venv keeps the system Python untouched.
venv="$build/venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
pip=("$venv/bin/pip" install --quiet --disable-pip-version-check)
"$venv/bin/python" -c "import h5py, numpy, vtk, nanobind, pytest, dask.array, distributed, matplotlib" \
  2>/dev/null || "${pip[@]}" h5py numpy vtk nanobind pytest "dask[array]" distributed matplotlib
"$venv/bin/python" -c "import mpi4py" 2>/dev/null || "${pip[@]}" --no-binary mpi4py mpi4py
# The Python module, built with the venv's Python (incremental after the first time).
cmake -S "$root" -B "$build" -DSIDECORE_BUILD_PYTHON=ON -DPython_EXECUTABLE="$venv/bin/python" \
  >/dev/null
cmake --build "$build" --parallel "$(nproc)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export SIDECORE_TEST_PYTHON="$venv/bin/python"
cd "$build"
ctest --output-on-failure --timeout 600 "$@"
