#!/usr/bin/env bash
# Runs clang-tidy with the checked-in .clang-tidy over every C++ source of the library, its
# bindings and tools (their headers included), as the build compiles them; any finding fails.
# Installs clang-tidy on Debian/Ubuntu if missing. Uses the build directory of test.sh (built
# first by setup.sh when it is not there yet).
# Usage: scripts/check_tidy.sh [build-dir]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
# shellcheck source=lib/debian_packages.sh
. "$root/scripts/lib/debian_packages.sh"
command -v run-clang-tidy >/dev/null || install_packages check_tidy.sh clang-tidy
if [ ! -f "$build/compile_commands.json" ]; then
  "$root/scripts/setup.sh" "$build" >/dev/null
fi
# Generated sources (configured headers) must exist: the build made them.
cmake --build "$build" --target sidecore_objects >/dev/null
start=$SECONDS
# Headers of this tree only (not those of nanobind or MPI, wherever they are installed).
if ! run-clang-tidy -quiet -p "$build" -j "$(nproc)" -header-filter="^$root/(src|bindings|tools|include)/" \
    "^$root/(src|bindings|tools)/.*\.cpp$" \
    >"$build/clang-tidy.log" 2>&1; then
  grep -E "(warning|error):" "$build/clang-tidy.log" | sort -u >&2 || cat "$build/clang-tidy.log" >&2
  echo "check_tidy.sh: clang-tidy found the problems above (.clang-tidy lists the checks)" >&2
  exit 1
fi
files=$(grep -c '^clang-tidy' "$build/clang-tidy.log" || true)
echo "check_tidy.sh: $files file(s) clean ($((SECONDS - start)) s)"
