#!/usr/bin/env bash
# Builds Sidecore with each sanitizer configuration (CMakePresets.json) in its own build directory
# and runs the test suite under it. See docs/testing.md.
# Usage: scripts/test_sanitizers.sh [asan-ubsan] [tsan]   (default: both)
#        extra ctest arguments after --, e.g. scripts/test_sanitizers.sh tsan -- -R unit
# Build directories: build-san-asan and build-san-tsan (the presets' binaryDir).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
configs=()
while (($#)) && [ "$1" != "--" ]; do
  case "$1" in
    asan-ubsan | tsan) configs+=("$1") ;;
    *) echo "test_sanitizers.sh: unknown configuration '$1'; valid: asan-ubsan, tsan" >&2; exit 2 ;;
  esac
  shift
done
[ "${1:-}" != "--" ] || shift
((${#configs[@]})) || configs=(asan-ubsan tsan)

# The test drivers read HDF5 files back with h5py: the venv of scripts/test.sh (build/venv), made
# here if that script has not run.
venv="$root/build/venv"
if [ ! -x "$venv/bin/python" ]; then
  "$root/scripts/setup.sh" "$root/build" >/dev/null
  python3 -m venv "$venv"
fi
"$venv/bin/python" -c "import h5py, numpy, vtk" 2>/dev/null ||
  "$venv/bin/pip" install --quiet --disable-pip-version-check h5py numpy vtk

status=0
for config in "${configs[@]}"; do
  start=$SECONDS
  case "$config" in
    asan-ubsan)
      build="$root/build-san-asan"
      cache=(-DSIDECORE_SANITIZE=address,undefined)
      # Every test runs under AddressSanitizer and UndefinedBehaviorSanitizer.
      ;;
    tsan)
      build="$root/build-san-tsan"
      cache=(-DSIDECORE_SANITIZE=thread)
      # The test preset leaves out the label install: those tests build a program outside the
      # project, without -fsanitize=thread, and ThreadSanitizer's runtime cannot start as a mere
      # dependency of libsidecore.so (pthread_cond_init fails with EINVAL). Everything else runs.
      ;;
  esac
  echo "== $config: building in $build"
  # setup.sh installs what is missing and builds; same cache as the preset of that name.
  "$root/scripts/setup.sh" "$build" "${cache[@]}" -DSIDECORE_BUILD_BENCH=OFF
  echo "== $config: testing"
  if ! (cd "$root" && ctest --preset "$config" -j2 "$@"); then
    echo "== $config: FAILED" >&2
    status=1
  fi
  echo "== $config: $((SECONDS - start)) s"
done
exit $status
