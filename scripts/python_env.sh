#!/usr/bin/env bash
# The Python environment of a build: a private venv (<build>/venv) with what the Python module,
# the server-side scripts and the tests need, then the build reconfigured with the Python module
# and the script runner (SIDECORE_BUILD_PYTHON=ON) and built. Usage: python_env.sh <build>
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$1"
build=$(cd "$1" && pwd)  # absolute: CMake takes the venv's python by its path
# h5py and numpy read the files back, VTK reads the XDMF as ParaView would, mpi4py and pytest
# run the Python client's tests (mpi4py built from source against the system MPI), nanobind
# builds the Python module, Dask and matplotlib serve the server-side scripts; a private venv
# keeps the system Python untouched.
venv="$build/venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
pip=("$venv/bin/pip" install --quiet --disable-pip-version-check)
"$venv/bin/python" -c "import h5py, numpy, vtk, nanobind, pytest, dask.array, distributed, matplotlib" \
  2>/dev/null || "${pip[@]}" h5py numpy vtk nanobind pytest "dask[array]" distributed matplotlib
"$venv/bin/python" -c "import mpi4py" 2>/dev/null || "${pip[@]}" --no-binary mpi4py mpi4py
# The Python module and the script runner, built with the venv's Python (incremental after the
# first time).
cmake -S "$root" -B "$build" -DSIDECORE_BUILD_PYTHON=ON -DPython_EXECUTABLE="$venv/bin/python" \
  >/dev/null
cmake --build "$build" --parallel "$(nproc)"
