#!/usr/bin/env bash
# Builds Sidecore and runs every test (unit, MPI end-to-end with HDF5 read-back, C, install).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SIDECORE_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh" "$build"
# The venv (h5py, numpy, VTK, mpi4py, pytest, nanobind, Dask, matplotlib) and the Python module.
"$root/scripts/python_env.sh" "$build"
venv="$build/venv"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export SIDECORE_TEST_PYTHON="$venv/bin/python"
cd "$build"
ctest --output-on-failure --timeout 600 "$@"
