#!/usr/bin/env bash
# Builds Sidecore and runs the demo: 3 simulation ranks and 1 dedicated core writing HDF5.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SIDECORE_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh" "$build"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${SIDECORE_DEMO_OUT:-$build/demo-output}
rm -rf "$out" && mkdir -p "$out"
cd "$out"
sed "s|@OUTPUT@|$out/|" "$root/examples/demo.xml" > demo.xml
mpirun --oversubscribe -np 4 "$build/examples/sidecore_demo" demo.xml
echo
echo "Files written by the dedicated core:"
ls -l "$out"/*.h5
echo "Inspect one with: h5ls -r $(ls "$out"/*.h5 | head -n 1)"
