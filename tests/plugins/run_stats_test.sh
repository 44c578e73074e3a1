#!/usr/bin/env bash
# Installs Sidecore into a fresh prefix, builds the stats action plugin example against it from
# outside the source tree (find_package(Sidecore)), then runs stats_writer through it in every
# mode and checks the statistics and events it recorded (check_stats.py).
# Then the errors a bad plugin gives at damaris_initialize: a library without
# sidecore_action_plugin(), and one of another action ABI version.
# Usage: run_stats_test.sh <source dir> <build dir> <stats_writer> <library without the entry
#        point> <library of another ABI version>
set -euo pipefail
source_dir=$1
build_dir=$2
writer=$3
no_symbol=$4
old_abi=$5
python=${SIDECORE_TEST_PYTHON:-python3}
work=$(mktemp -d /tmp/sidecore-stats-XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
cmake -S "$source_dir/examples/plugins/stats_action" -B "$work/cmake" \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake" >/dev/null
library=$work/cmake/libsidecore_stats.so
test -f "$library"

check() { "$python" "$source_dir/tests/plugins/check_stats.py" --writer "$writer" \
  --xml "$source_dir/tests/plugins/stats.xml.in" --library "$library" "$@"; }
# Dedicated cores: one server of three clients; two servers of two clients each (virtual
# nodes), whose statistics combine both.
check --np 4 --cores 1 --servers 1 --out "$work/core"
check --np 6 --cores 1 --servers 2 --ranks-per-node 3 --out "$work/two_cores"
# Dedicated nodes: the last node's two ranks serve four clients, two each.
check --np 6 --nodes 1 --servers 2 --ranks-per-node 4 --out "$work/node"
# Synchronous and background thread: every client is a writer.
check --np 3 --out "$work/synchronous"
check --np 2 --threads 1 --out "$work/thread"
# Client 0 stops after 3 of 5 iterations: the plugin's collectives go on without its data
# (synchronously, it takes part in the others' iterations with none).
check --np 3 --short 3 --out "$work/synchronous_short"
check --np 4 --cores 1 --servers 1 --short 3 --out "$work/core_short"
# A bad library fails damaris_initialize with DAMARIS_CONFIG_ERROR, naming the XML's line.
check --np 2 --cores 1 --servers 1 --library "$no_symbol" --out "$work/no_symbol" \
  --expect-error "is not a Sidecore action plugin"
check --np 2 --library "$old_abi" --out "$work/old_abi" \
  --expect-error "has action plugin ABI version 2, this Sidecore expects 1"
