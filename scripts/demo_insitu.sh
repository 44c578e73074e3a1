#!/usr/bin/env bash
# The in situ demo: a 3D heat diffusion on 3 simulation ranks; its dedicated core stores the
# temperature in HDF5 and, every 10 iterations, draws the middle plane to PNG with a Python
# script (examples/python/render_slice.py) while the simulation goes on.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SIDECORE_BUILD_DIR:-$root/build}
"$root/scripts/python_env.sh" "$build"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${SIDECORE_DEMO_OUT:-$build/demo-insitu-output}
rm -rf "$out" && mkdir -p "$out"
cd "$out"
sed -e "s|@OUTPUT@|$out/|" -e "s|@SCRIPTS@|$root/examples/python/|" \
  "$root/examples/heat_insitu.xml" > heat.xml
SIDECORE_IMAGES="$out/images" mpirun --oversubscribe -np 4 "$build/examples/sidecore_heat_insitu" \
  heat.xml 60
echo
echo "Images drawn by the dedicated core while the simulation ran:"
ls -l "$out"/images/*.png
echo "HDF5 files: $(ls "$out"/*.h5 | wc -l) in $out"
