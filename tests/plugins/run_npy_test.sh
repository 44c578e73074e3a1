#!/usr/bin/env bash
# Installs Sidecore into a fresh prefix, builds the npy example plugin against it from outside
# the source tree (with find_package(Sidecore), and with mpicc + pkg-config as docs/plugins.md
# shows), then stores what npy_writer writes through it and reads every .npy file back:
# with one dedicated core and the plugin named by library="<path>", and without dedicated
# cores and the plugin found by its type alone (libsidecore_npy.so on LD_LIBRARY_PATH), and
# from a background I/O thread of each process.
# Usage: run_npy_test.sh <source dir> <build dir> <npy_writer>
set -euo pipefail
source_dir=$1
build_dir=$2
writer=$3
python=${SIDECORE_TEST_PYTHON:-python3}
work=$(mktemp -d /tmp/sidecore-plugin-XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
test -f "$prefix/include/sidecore/plugin.h"

cmake -S "$source_dir/examples/plugins/npy_store" -B "$work/cmake" \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake" >/dev/null
test -f "$work/cmake/libsidecore_npy.so"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig:$prefix/lib/$(gcc -print-multiarch 2>/dev/null)/pkgconfig:${PKG_CONFIG_PATH:-}"
mkdir -p "$work/pkg-config"
mpicc -std=c99 -shared -fPIC -fvisibility=hidden -Wall -Wextra -pedantic -Werror \
  -o "$work/pkg-config/libsidecore_npy.so" "$source_dir/examples/plugins/npy_store/npy_store.c" \
  $(pkg-config --cflags sidecore)

check=$source_dir/tests/plugins/check_npy.py
xml=$source_dir/tests/plugins/npy.xml.in
"$python" "$check" --writer "$writer" --xml "$xml" --np 3 --cores 1 \
  --library "$work/cmake/libsidecore_npy.so" --out "$work/dedicated"
LD_LIBRARY_PATH="$work/pkg-config${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$python" "$check" --writer "$writer" --xml "$xml" --np 2 --cores 0 --out "$work/synchronous"
"$python" "$check" --writer "$writer" --xml "$xml" --np 2 --cores 0 --threads 1 \
  --library "$work/pkg-config/libsidecore_npy.so" --out "$work/thread"
