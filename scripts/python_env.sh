#!/usr/bin/env bash
# The Python build: a private venv (<build>/venv) with what the Python module, the server-side
# scripts and the tests need, then the build configured with the Python module and the script
# runner (SIDECORE_BUILD_PYTHON=ON, the venv's Python) and built by scripts/setup.sh, once.
# Usage: python_env.sh <build> [cmake-arguments...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$1"
build=$(cd "$1" && pwd)  # absolute: CMake takes the venv's python by its path
shift
# The venv needs python3-venv, and mpi4py the MPI compiler wrappers.
# shellcheck source=lib/debian_packages.sh
. "$root/scripts/lib/debian_packages.sh"
install_packages "sidecore setup" "${build_packages[@]}"
# h5py and numpy read the files back, VTK reads the XDMF as ParaView would, mpi4py and pytest
# run the Python client's tests (mpi4py built from source against the system MPI), nanobind
# builds the Python module, Dask and matplotlib serve the server-side scripts; a private venv
# keeps the system Python untouched.
venv="$build/venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
pip=("$venv/bin/pip" install --quiet --disable-pip-version-check)
# What configuring the Python module needs comes first; the rest installs while the library
# compiles (unpacking wheels overlaps the compiler's work).
"$venv/bin/python" -c "import numpy, nanobind" 2>/dev/null || "${pip[@]}" numpy nanobind
# With SIDECORE_WITH_ADIOS2=1 (scripts/test.sh), the ADIOS2 wheel as well, before configuring:
# the proxy benchmark's ADIOS2 back-ends build against the CMake package it ships
# (bench.proxy_matrix compares Sidecore with them).
adios2_args=()
if [ "${SIDECORE_WITH_ADIOS2:-0}" = 1 ]; then
  "$venv/bin/python" -c "import adios2" 2>/dev/null || "${pip[@]}" adios2
  adios2_dir=$("$venv/bin/python" -c "import adios2, os; print(os.path.dirname(adios2.__file__))")
  adios2_args=("-DADIOS2_DIR=$adios2_dir/cmake/adios2")
fi
rest_log="$build/venv-packages.log"
# Dask through its `distributed` extra, which pins distributed to dask's own release: asked for
# apart, pip paired a new dask with a years-older distributed that cannot import it.
(
  "$venv/bin/python" -c "import h5py, vtk, pytest, dask.array, distributed, matplotlib" \
    2>/dev/null || "${pip[@]}" h5py vtk pytest "dask[array,distributed]" matplotlib
  "$venv/bin/python" -c "import mpi4py" 2>/dev/null || "${pip[@]}" --no-binary mpi4py mpi4py
) > "$rest_log" 2>&1 &
rest=$!
# Configured with the Python module from the start: turning it on later changes
# sidecore/version.h (HAVE_PYTHON_ENABLED), which every source includes.
status=0
"$root/scripts/setup.sh" "$build" -DSIDECORE_BUILD_PYTHON=ON -DPython_EXECUTABLE="$venv/bin/python" \
  "${adios2_args[@]}" "$@" || status=$?
if ! wait "$rest"; then
  cat "$rest_log" >&2
  echo "python_env.sh: installing the venv's packages into $venv failed (above)" >&2
  exit 1
fi
rm -f "$rest_log"
exit "$status"
