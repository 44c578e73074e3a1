#!/usr/bin/env bash
# Builds Sidecore and runs every test (unit, MPI end-to-end with HDF5 read-back, C, install).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SIDECORE_BUILD_DIR:-$root/build}
# The venv (h5py, numpy, VTK, mpi4py, pytest, nanobind, Dask, matplotlib), then one build with
# the Python module (scripts/setup.sh installs what is missing).
# shellcheck source=lib/debian_packages.sh
. "$root/scripts/lib/debian_packages.sh"
install_packages "sidecore test" "${test_packages[@]}"
# The proxy benchmark built with its ADIOS2 back-ends (the wheel's), for bench.proxy_matrix.
SIDECORE_WITH_ADIOS2=1 "$root/scripts/python_env.sh" "$build"
venv="$build/venv"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export SIDECORE_TEST_PYTHON="$venv/bin/python"
# shellcheck source=lib/ompi_session.sh
. "$root/scripts/lib/ompi_session.sh"
keep_ompi_session_dir
one_blas_thread
no_io_device_discovery
ob1_for_every_job
cd "$build"
# Most tests wait (process start-up, MPI's launcher, their jobs' naps) more than they compute:
# alone, a test keeps a processor busy about half of its time. Four test slots per core (a test
# declares the cores it takes with its PROCESSORS property, most take 2) keep the processors busy
# (docs/testing.md).
jobs=${SIDECORE_TEST_JOBS:-$(($(nproc) * 4))}
ctest --output-on-failure --timeout 600 -j "$jobs" "$@"
