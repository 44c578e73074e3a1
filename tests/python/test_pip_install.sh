#!/usr/bin/env bash
# pip packaging smoke test: builds a wheel from the source tree with pip (pyproject.toml,
# scikit-build-core, against the system MPI and parallel HDF5), installs it in a fresh venv, and
# runs the installed module from outside the tree: python -m sidecore --version, the
# `sidecore` command-line tool it carries, the
# synchronous and dedicated-core jobs of test_client.py (their files read back with h5py), and
# an mpi4py simulation whose dedicated core runs Python scripts with the installed runner, and
# damaris4py imported outside the scripts (a plain process and a Dask worker).
# Usage: test_pip_install.sh [python [--objects-of BUILD]]   (python3 by default; needs PyPI)
# --objects-of BUILD: when BUILD compiles through ccache (SIDECORE_COMPILER_CACHE=ON,
# cmake/compiler_cache.cmake), the wheel is built beside it (BUILD-pip-wheel, removed after) with
# its compilers, build type and compiler cache, so that the library's objects are not compiled a
# second time; the wheel is still made, installed and run as `pip install .` makes it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
python=${1:-python3}
work=$(mktemp -d)
wheel_build=
trap 'rm -rf "$work" ${wheel_build:+"$wheel_build"}' EXIT

reuse=()
objects_of=${3:-}
if [ "${2:-}" = --objects-of ] && [ -f "$objects_of/CMakeCache.txt" ]; then
  cached() { sed -n "s/^$1:[A-Z]*=//p" "$objects_of/CMakeCache.txt"; }
  if [ "$(cached SIDECORE_COMPILER_CACHE)" = ON ]; then
    # At the build tree's depth: the cache hashes paths relative to the compiling directory.
    wheel_build="$objects_of-pip-wheel"
    objects=$(cached SIDECORE_COMPILER_CACHE_DIR)
    reuse=(-C "build-dir=$wheel_build" -C "cmake.build-type=$(cached CMAKE_BUILD_TYPE)"
      -C "cmake.define.CMAKE_C_COMPILER=$(cached CMAKE_C_COMPILER)"
      -C "cmake.define.CMAKE_CXX_COMPILER=$(cached CMAKE_CXX_COMPILER)"
      -C cmake.define.SIDECORE_COMPILER_CACHE=ON
      -C "cmake.define.SIDECORE_COMPILER_CACHE_DIR=$objects")
    # nanobind and NumPy's headers from the build's environment too: pip's isolated one lies
    # at a new path each time, which every object including them would hash. The wheel is
    # still built in pip's environment (scikit-build-core, CMake); pyproject.toml's
    # requirements are checked below.
    numpy_headers=$(cached Python_NumPy_INCLUDE_DIR)
    for hint in "nanobind_DIR=$(cached nanobind_DIR)" \
      "Python_NumPy_INCLUDE_DIR=${numpy_headers:-$(cached _Python_NumPy_INCLUDE_DIR)}"; do
      [ -d "${hint#*=}" ] && reuse+=(-C "cmake.define.$hint")
    done
    CCACHE_DIR=$objects ccache --zero-stats > /dev/null
  fi
fi

# The fresh venv gets no pip of its own (ensurepip took 6 s of processor time here): the pip of
# $python installs into it (--python, pip 22.3 and later), as the venv's own pip would. Without
# one new enough, the venv gets its own.
if "$python" -m pip --python "$python" --version > /dev/null 2>&1; then
  "$python" -m venv --without-pip "$work/venv"
  pip=("$python" -m pip --python "$work/venv/bin/python" --disable-pip-version-check -q)
else
  "$python" -m venv "$work/venv"
  pip=("$work/venv/bin/python" -m pip --disable-pip-version-check -q)
fi
venv_python="$work/venv/bin/python"
"${pip[@]}" wheel --no-deps -w "$work/wheels" "${reuse[@]}" "$root"
if ((${#reuse[@]})); then
  echo "objects of $objects_of reused by the wheel's build (ccache):"
  CCACHE_DIR=$objects ccache --show-stats | grep -E "^ *(Hits|Misses):"
fi
wheel=$(ls "$work"/wheels/sidecore-*.whl)
# What pip's isolated build needs is declared (the reusing build above took the headers from
# elsewhere, so it would not notice one missing).
"$python" - "$root/pyproject.toml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
section = re.search(r"^\[build-system\]$(.*?)(^\[|\Z)", text, re.M | re.S).group(1)
requires = re.findall(r'"([^"]+)"', re.search(r"^requires *= *\[(.*?)\]", section, re.M | re.S).group(1))
names = {re.split(r"[<>=!~; \[]", r, maxsplit=1)[0].strip().lower() for r in requires}
missing = {"scikit-build-core", "nanobind", "numpy"} - names
assert not missing, f"FAIL: pyproject.toml's build-system does not require {sorted(missing)}"
PY
echo "built $(basename "$wheel")"
# What the checks below use besides the wheel (pytest, h5py, Dask, and the wheel's own numpy and
# mpi4py) comes from $python's environment when it has them, through a .pth file: installing
# them again from PyPI took most of this test's time. pip still installs the wheel as
# `pip install` does, resolving what it requires against them; the requirements it declares are
# checked in its metadata.
check_imports="import pytest, h5py, numpy, mpi4py, dask.array, distributed"
if "$python" -c "$check_imports" 2>/dev/null; then
  "$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' > \
    "$("$venv_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/test_packages.pth"
  "${pip[@]}" install "$wheel"
else
  "${pip[@]}" install "$wheel" pytest h5py "dask[array,distributed]"
fi
"$venv_python" - <<'PY'
from importlib.metadata import requires
names = {r.split(";")[0].split(">")[0].split("=")[0].split("<")[0].strip() for r in requires("sidecore")}
missing = {"numpy", "mpi4py"} - names
assert not missing, f"FAIL: the wheel does not require {sorted(missing)} (it requires {sorted(names)})"
print("the wheel requires", ", ".join(sorted(names)))
PY

# Outside the source and build trees, with no PYTHONPATH: only the installed module can load
# (the environment the .pth file names holds no sidecore module: checked below).
cd "$work"
unset PYTHONPATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
location=$("$venv_python" -c "import sidecore; print(sidecore.__file__)")
case "$location" in
  "$work"/venv/*) echo "imported from $location" ;;
  *) echo "FAIL: sidecore imported from $location, not from the venv"; exit 1 ;;
esac
"$venv_python" -m sidecore --version
# The command-line tool comes with the wheel: the venv's `sidecore`, and python -m sidecore.
tool="$work/venv/bin/sidecore"
"$tool" --version | grep "^sidecore " || { echo "FAIL: $tool --version"; exit 1; }
"$tool" validate --ranks 4 "$root/examples/demo.xml" | grep "valid, 0 warnings" ||
  { echo "FAIL: $tool validate"; exit 1; }
"$venv_python" -m sidecore inspect --help | grep "Usage: sidecore inspect" ||
  { echo "FAIL: python -m sidecore inspect"; exit 1; }
"$venv_python" -m pytest -q -p no:cacheprovider \
  "$here/test_client.py::test_version" "$here/test_client.py::test_synchronous" \
  "$here/test_client.py::test_dedicated_cores" \
  "$here/../pyscript/test_scripts.py::test_python_simulation"
"$venv_python" "$here/damaris4py_outside.py"
echo "pip install: OK"
