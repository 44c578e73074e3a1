#!/usr/bin/env bash
# Builds Sidecore (installing what it needs on Debian/Ubuntu, as scripts/setup.sh does) and
# installs it into PREFIX: Damaris.h and sidecore/*.h, libsidecore, the CMake package
# (find_package(Sidecore)), sidecore.pc and, with a Fortran compiler, the damaris module and
# sidecore-fortran.pc. Tests, examples and benchmarks are not built.
# Usage: scripts/install.sh PREFIX [cmake-arguments...]
#   e.g. scripts/install.sh $HOME/sidecore -DSIDECORE_MPI=mpich
# Build directory: $SIDECORE_BUILD_DIR, default build-install (build-install-<mpi> when
# SIDECORE_MPI is given, since one build directory holds one MPI).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ $# -lt 1 ] || [ -z "$1" ] || [[ "$1" == -* ]]; then
  echo "usage: $0 PREFIX [cmake-arguments...]" >&2
  exit 2
fi
prefix=$(realpath -m "$1")
shift
build=${SIDECORE_BUILD_DIR:-}
if [ -z "$build" ]; then
  build=$root/build-install
  for arg in "$@"; do
    case $arg in -DSIDECORE_MPI=*) build=$root/build-install-${arg#-DSIDECORE_MPI=} ;; esac
  done
fi
"$root/scripts/setup.sh" "$build" -DSIDECORE_BUILD_TESTS=OFF -DSIDECORE_BUILD_EXAMPLES=OFF \
  -DSIDECORE_BUILD_BENCH=OFF "$@"
cmake --install "$build" --prefix "$prefix"
echo "sidecore: installed into $prefix"
