#!/usr/bin/env bash
# Runs clang-tidy with the checked-in .clang-tidy over every C++ source of the library, its
# bindings and tools (their headers included), as the build compiles them; any finding fails.
# Installs clang-tidy on Debian/Ubuntu if missing. Follows the configuration of the build
# directory of test.sh (configured first by setup.sh when it is not there yet).
# Usage: scripts/check_tidy.sh [build-dir]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
# shellcheck source=lib/debian_packages.sh
. "$root/scripts/lib/debian_packages.sh"
command -v run-clang-tidy >/dev/null || install_packages check_tidy.sh clang-tidy
if [ ! -f "$build/CMakeCache.txt" ]; then
  "$root/scripts/setup.sh" "$build" >/dev/null
fi
# clang-tidy reads each source's own compile command: a tree configured as $build (its options,
# build type and Python) but without the unity build, configured only (the configured headers
# are all it needs; nothing is compiled). GCC's -fno-var-tracking-assignments (CMakeLists.txt)
# is an argument clang does not know: the tree keeps the variable tracking.
tidy_build="$build/tidy"
mapfile -t options < <(sed -n -E \
  's/^(SIDECORE_[A-Z_]+|Python_EXECUTABLE|CMAKE_BUILD_TYPE):(BOOL|STRING|FILEPATH|PATH|UNINITIALIZED)=(.*)$/-D\1=\3/p' \
  "$build/CMakeCache.txt")
cmake -S "$root" -B "$tidy_build" -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DCMAKE_UNITY_BUILD=OFF "${options[@]}" -DSIDECORE_TRACK_OPTIMIZED_LOCALS=ON >/dev/null
start=$SECONDS
# Headers of this tree only (not those of nanobind or MPI, wherever they are installed).
if ! run-clang-tidy -quiet -p "$tidy_build" -j "$(nproc)" -header-filter="^$root/(src|bindings|tools|include)/" \
    "^$root/(src|bindings|tools)/.*\.cpp$" \
    >"$build/clang-tidy.log" 2>&1; then
  grep -E "(warning|error):" "$build/clang-tidy.log" | sort -u >&2 || cat "$build/clang-tidy.log" >&2
  echo "check_tidy.sh: clang-tidy found the problems above (.clang-tidy lists the checks)" >&2
  exit 1
fi
files=$(grep -c '^clang-tidy' "$build/clang-tidy.log" || true)
echo "check_tidy.sh: $files file(s) clean ($((SECONDS - start)) s)"
