#!/usr/bin/env bash
# The in situ demo: a 3D heat diffusion on 3 simulation ranks, written in Python with mpi4py
# (examples/python/heat_insitu.py); its dedicated core stores the temperature in HDF5 and, every
# 10 iterations, draws the middle plane to PNG with a Python script
# (examples/python/render_slice.py) while the simulation goes on. A build directory and venv
# made before (by this script, test.sh or python_env.sh) are reused: only what changed is built.
# SIDECORE_DEMO_C=1 runs the same simulation written in C (examples/heat_insitu.c) instead.
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
if [ "${SIDECORE_DEMO_C:-0}" = 1 ]; then
  simulation=("$build/examples/sidecore_heat_insitu")
else
  simulation=("$build/venv/bin/python" "$root/examples/python/heat_insitu.py")
fi
SIDECORE_IMAGES="$out/images" PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" \
  mpirun --oversubscribe -np 4 "${simulation[@]}" heat.xml 60
echo
echo "Images drawn by the dedicated core while the simulation ran:"
ls -l "$out"/images/*.png
echo "HDF5 files: $(ls "$out"/*.h5 | wc -l) in $out"
