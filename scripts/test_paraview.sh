#!/usr/bin/env bash
# Installs ParaView (Debian: paraview, python3-paraview, and Xvfb to render without a display),
# configures the build of scripts/test.sh again so that it finds ParaView's Python, and runs the
# <paraview> tests (label paraview; docs/paraview.md). Fails when ParaView is installed but its
# tests are not registered: they are never skipped silently.
# Usage: scripts/test_paraview.sh [ctest arguments...]   (build directory: $SIDECORE_BUILD_DIR,
# default build; made by scripts/test.sh when missing)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SIDECORE_BUILD_DIR:-$root/build}
# The same build as scripts/test.sh (venv and Python module), configured again.
# shellcheck source=lib/paraview_build.sh
. "$root/scripts/lib/paraview_build.sh"
paraview_build test_paraview.sh "$root" "$build"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export SIDECORE_TEST_PYTHON="$build/venv/bin/python"
# shellcheck source=lib/ompi_session.sh
. "$root/scripts/lib/ompi_session.sh"
keep_ompi_session_dir
one_blas_thread
no_io_device_discovery
ob1_for_every_job
cd "$build"
count=$(ctest -N -L paraview | sed -n 's/^Total Tests: //p')
if [ "${count:-0}" -eq 0 ]; then
  echo "test_paraview.sh: no paraview test is registered in $build" >&2
  exit 1
fi
ctest --output-on-failure --timeout 600 -L paraview -j "${SIDECORE_TEST_JOBS:-$(nproc)}" "$@"
