#!/usr/bin/env bash
# Builds Sidecore and runs every test (unit, MPI end-to-end with HDF5 read-back, C, install).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SIDECORE_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh" "$build"
# h5py and numpy read the files back, VTK reads the XDMF as ParaView would; a private venv
# keeps the system Python untouched.
venv="$build/venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -c "import h5py, numpy, vtk" 2>/dev/null ||
  "$venv/bin/pip" install --quiet --disable-pip-version-check h5py numpy vtk
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export SIDECORE_TEST_PYTHON="$venv/bin/python"
cd "$build"
ctest --output-on-failure --timeout 600 "$@"
