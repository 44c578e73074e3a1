#!/usr/bin/env bash
# The ParaView demo: the heat diffusion of the in situ demo (3 simulation ranks, 1 dedicated
# core), whose dedicated core stores the temperature in HDF5 and runs a ParaView Catalyst
# script (examples/paraview/heat_slice.py) every 10 iterations: a picture of the middle plane
# and a VTK extract of it. Installs ParaView and Xvfb when missing (Debian/Ubuntu); renders on
# the X display of DISPLAY, or on an Xvfb of its own when there is none.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SIDECORE_BUILD_DIR:-$root/build}
# shellcheck source=lib/paraview_build.sh
. "$root/scripts/lib/paraview_build.sh"
paraview_build demo_paraview.sh "$root" "$build"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${SIDECORE_DEMO_OUT:-$build/demo-paraview-output}
rm -rf "$out" && mkdir -p "$out"
cd "$out"
sed -e "s|@OUTPUT@|$out/|" -e "s|@SCRIPTS@|$root/examples/paraview/|" \
  "$root/examples/heat_paraview.xml" > heat.xml
if [ -z "${DISPLAY:-}" ]; then
  # ParaView renders through X. -displayfd: Xvfb picks a free display and says which;
  # -noreset: no server reset while a rank connects.
  exec {ready}<> <(:)
  Xvfb -displayfd 3 -noreset -nolisten tcp -screen 0 1024x768x24 3>&"$ready" 2>/dev/null &
  xvfb=$!
  trap 'kill "$xvfb" 2>/dev/null || true' EXIT
  read -r -t 30 number <&"$ready" || { echo "demo_paraview.sh: Xvfb did not start" >&2; exit 1; }
  export DISPLAY=":$number"
fi
mpirun --oversubscribe -np 4 -x DISPLAY "$build/examples/sidecore_heat_insitu" heat.xml 60
echo
echo "Pictures rendered by ParaView on the dedicated core while the simulation ran:"
ls -l "$out"/slice_*.png
echo "VTK extracts: $(ls "$out"/slice_*.pvtp | wc -l); HDF5 files: $(ls "$out"/*.h5 | wc -l) in $out"
