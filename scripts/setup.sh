#!/usr/bin/env bash
# Installs what Sidecore needs on Debian/Ubuntu (when missing), then configures and builds it.
# Usage: scripts/setup.sh [build-dir [cmake-arguments...]]   (default: build)
# Extra arguments go to CMake after the defaults, so they may override them
# (for example -DCMAKE_BUILD_TYPE=Release).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
shift $(($# > 0 ? 1 : 0))

# shellcheck source=lib/debian_packages.sh
. "$root/scripts/lib/debian_packages.sh"
install_packages "sidecore setup" "${build_packages[@]}"

# Running as root under OpenMPI needs these (harmless otherwise).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# compile_commands.json serves clang-tidy (scripts/check_tidy.sh) and editors; ccache
# (<build>/ccache) serves rebuilds and the wheel build of the pip test (cmake/compiler_cache.cmake).
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DSIDECORE_COMPILER_CACHE=ON "$@" >/dev/null
cmake --build "$build" --parallel "$(nproc)"
