#!/usr/bin/env bash
# One command for the proxy benchmarks on a fresh Debian/Ubuntu machine: installs what is
# missing (Sidecore's packages, FUSE 3 for the throttled write target, a Python venv with
# ADIOS2, h5py, numpy, matplotlib and nanobind), builds Sidecore, its Python module (whose read
# API reads the output back) and the proxy in Release with the ADIOS2 back-ends, then runs the
# matrix on both write targets, draws the tiles and runs the scaling curves. Results go to
# bench/proxy/results/.
#
# Usage: bench/proxy/run.sh [--matrix-only | --quick] [run_matrix.py options...]
#   --matrix-only   skip the scaling curves
#   --quick         a seconds-long matrix that checks the harness (no scaling curves)
# Environment: SIDECORE_BENCH_BUILD (build folder, default build-bench at the project root),
# SIDECORE_BENCH_VENV (Python venv, default <build folder>/venv).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${SIDECORE_BENCH_BUILD:-$root/build-bench}
venv=${SIDECORE_BENCH_VENV:-$build/venv}

scaling=1
quick=0
matrix_args=()
for arg in "$@"; do
  case $arg in
    --matrix-only) scaling=0 ;;
    --quick) scaling=0; quick=1; matrix_args+=(--quick) ;;
    *) matrix_args+=("$arg") ;;
  esac
done

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
missing=()
for p in fuse3 libfuse3-dev pkg-config python3-venv; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "proxy bench: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

mkdir -p "$build"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
python=$(cd "$venv/bin" && pwd)/python  # absolute: CMake takes the module's Python by its path
# nanobind builds the sidecore Python module, whose read API reads the output back.
"$python" -c "import adios2, h5py, numpy, matplotlib, nanobind" 2>/dev/null ||
  "$venv/bin/pip" install --quiet --disable-pip-version-check adios2 h5py numpy matplotlib nanobind
adios2_dir=$("$python" -c "import adios2, os; print(os.path.dirname(adios2.__file__))")/cmake/adios2
[ -f "$adios2_dir/adios2-config.cmake" ] || {
  echo "proxy bench: the adios2 wheel has no CMake package under $adios2_dir" >&2
  exit 1
}

# Installs Sidecore's own packages when missing, configures and builds everything.
"$root/scripts/setup.sh" "$build" -DCMAKE_BUILD_TYPE=Release "-DADIOS2_DIR=$adios2_dir" \
  -DSIDECORE_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$python"

"$python" "$here/run_matrix.py" --build "$build/bench/proxy" "${matrix_args[@]}"
if ((quick)); then
  # The quick matrix writes to a temporary folder (printed above) and leaves the committed
  # results alone.
  exit 0
fi
"$python" "$here/plot_tiles.py"
if ((scaling)); then
  "$python" "$here/run_scaling.py" --build "$build/bench/proxy"
  # 64 MiB per phase takes half a second to store on the throttled target: smaller sizes and
  # buffer there.
  "$python" "$here/run_scaling.py" --build "$build/bench/proxy" --target throttled \
    --buffer-mib 64 --sizes 1,2,4,8,16,32,48
fi
echo "proxy bench: results in $here/results/ (matrix.md first)"
