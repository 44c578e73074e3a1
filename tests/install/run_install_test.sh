#!/usr/bin/env bash
# Installs Sidecore into a fresh prefix, then builds an outside program from a separate
# directory twice: with mpicc + pkg-config, and with find_package(Sidecore). Both are run
# with one dedicated core and their output is checked.
# With "fortran" as third argument the programs are Fortran: one written as for Damaris (no
# module, sidecore.pc alone) and one using the damaris module (sidecore-fortran.pc, and
# find_package(Sidecore COMPONENTS fortran)).
# The module program is also built as a Damaris makefile builds it: -I<prefix>/include -ldamaris.
# Usage: run_install_test.sh <source dir> <build dir> [c|fortran]
set -euo pipefail
source_dir=$1
build_dir=$2
language=${3:-c}
# The MPI of the build (set by its tests: SIDECORE_TEST_MPICC, SIDECORE_TEST_MPIF90,
# SIDECORE_TEST_MPIEXEC); the system's default otherwise.
mpicc=${SIDECORE_TEST_MPICC:-mpicc}
mpif90=${SIDECORE_TEST_MPIF90:-mpif90}
launcher=${SIDECORE_TEST_MPIEXEC:-mpirun --oversubscribe}
work=$(mktemp -d /tmp/sidecore-install-XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
test -f "$prefix/include/Damaris.h"

consumer=$work/consumer
mkdir -p "$consumer"
cp "$source_dir/tests/install/consumer.xml" "$consumer/"
cd "$consumer"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig:$prefix/lib/$(gcc -print-multiarch 2>/dev/null)/pkgconfig:${PKG_CONFIG_PATH:-}"

if [ "$language" = fortran ]; then
  test -f "$prefix/include/sidecore/fortran/damaris.mod"
  # Also where Damaris installs it: a Damaris makefile's -I<prefix>/include finds `use damaris`.
  test -f "$prefix/include/damaris.mod"
  cp "$source_dir/tests/install/consumer_implicit.f90" \
    "$source_dir/tests/install/consumer_module.f90" .
  "$mpif90" -o consumer_implicit_pc consumer_implicit.f90 $(pkg-config --cflags --libs sidecore)
  "$mpif90" -o consumer_module_pc consumer_module.f90 $(pkg-config --cflags --libs sidecore-fortran)
  "$mpif90" -o consumer_module_damaris_flags consumer_module.f90 -I"$prefix/include" \
    -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -ldamaris -Wl,--export-dynamic
  cat > CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.25)
project(consumer C Fortran)
find_package(MPI REQUIRED COMPONENTS Fortran)
find_package(Sidecore REQUIRED COMPONENTS fortran)
add_executable(consumer_module_cmake consumer_module.f90)
target_link_libraries(consumer_module_cmake PRIVATE sidecore::fortran MPI::MPI_Fortran)
CM
  executables=(./consumer_implicit_pc ./consumer_module_pc ./consumer_module_damaris_flags
               ./build/consumer_module_cmake)
else
  cp "$source_dir/tests/install/consumer.c" .
  "$mpicc" -o consumer_pc consumer.c $(pkg-config --cflags --libs sidecore)
  cat > CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.25)
project(consumer C)
find_package(Sidecore REQUIRED)
add_executable(consumer_cmake consumer.c)
target_link_libraries(consumer_cmake PRIVATE sidecore::sidecore)
CM
  executables=(./consumer_pc ./build/consumer_cmake)
fi
# Only the Fortran project names its wrapper: it finds MPI before Sidecore, whose package
# otherwise brings the MPI it was built with.
cmake_mpi=()
[ "$language" != fortran ] || cmake_mpi=(-DMPI_Fortran_COMPILER="$(command -v "$mpif90")")
cmake -S . -B build -DCMAKE_PREFIX_PATH="$prefix" "${cmake_mpi[@]}" >/dev/null
cmake --build build >/dev/null

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for exe in "${executables[@]}"; do
  rm -f consumer_It*.h5 event_ran_*
  $launcher -np 3 "$exe" consumer.xml
  n=$(ls consumer_It*_Pr*.h5 | wc -l)
  [ "$n" -eq 2 ] || { echo "expected 2 files from $exe, found $n"; exit 1; }
  h5dump -d /values/P1 -w 0 consumer_It1_Pr0.h5 | grep -q '1010, 1011, 1012, 1013' ||
    { echo "unexpected stored values from $exe:"; h5dump consumer_It1_Pr0.h5; exit 1; }
  ls event_ran_* >/dev/null || { echo "event from the executable did not run ($exe)"; exit 1; }
  echo "$exe: OK"
done
