#!/usr/bin/env bash
# Installs Sidecore into a fresh prefix and builds from outside what a Damaris user builds:
# - version_check.c (header and library agree, HAVE_*_ENABLED vs damaris_has_plugin) with
#   pkg-config damaris and with a Damaris makefile's flags (-I<prefix>/include -ldamaris);
# - damaris_cxx_consumer.cpp (ModifyModel and Environment as OPM Flow uses them) through CMake's
#   find_package(Damaris 1.9 REQUIRED) + target damaris, and through pkg-config damaris;
# - a CMake project checking the Damaris package's variables and version answers, and one that
#   finds Damaris.h and a library named damaris by themselves, as PDI's plugin does.
# Each consumer runs on 4 ranks with one dedicated core per node, on one node of 4 and on two
# (virtual) nodes of 2, with one dedicated node of two, and without dedicated resources; the
# Collective HDF5 files are read back value by value.
# Usage: run_damaris_package_test.sh <source dir> <build dir>
set -euo pipefail
source_dir=$1
build_dir=$2
mpicc=${SIDECORE_TEST_MPICC:-mpicc}
mpicxx=${SIDECORE_TEST_MPICXX:-mpicxx}
launcher=${SIDECORE_TEST_MPIEXEC:-mpirun --oversubscribe}
work=$(mktemp -d /tmp/sidecore-damaris-package-XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

fail() { echo "run_damaris_package_test: $*" >&2; exit 1; }

# Where Damaris puts things.
for f in include/Damaris.h include/sidecore/version.h include/damaris/model/ModifyModel.hpp \
         include/damaris/env/Environment.hpp lib/cmake/Damaris/DamarisConfig.cmake \
         lib/cmake/Damaris/DamarisConfigVersion.cmake lib/pkgconfig/damaris.pc; do
  [ -f "$prefix/$f" ] || fail "$f is not installed"
done
[ -e "$prefix/lib/libdamaris.so" ] || fail "lib/libdamaris.so is not installed"

cd "$work"
cp "$source_dir/tests/install/version_check.c" "$source_dir/tests/install/damaris_cxx_consumer.cpp" .
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig:${PKG_CONFIG_PATH:-}"
pkg-config --exists 'damaris >= 1.9' || fail "pkg-config finds no damaris >= 1.9"

# The version check, built two ways.
"$mpicc" -std=c99 -Wall -Wextra -pedantic -Werror -o version_check_pc version_check.c \
  $(pkg-config --cflags --libs damaris)
"$mpicc" -std=c99 -o version_check_flags version_check.c -I"$prefix/include" -L"$prefix/lib" \
  -Wl,-rpath,"$prefix/lib" -ldamaris
./version_check_pc
./version_check_flags

# The C++ consumer through pkg-config.
"$mpicxx" -std=c++17 -Wall -Wextra -Wno-cast-function-type -o consumer_pc damaris_cxx_consumer.cpp \
  $(pkg-config --cflags --libs damaris)

# The C++ consumer through CMake, as OPM Flow finds Damaris; and the package's answers.
mkdir -p project
cp damaris_cxx_consumer.cpp project/
cat > project/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.25)
project(damaris_consumer C CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(MPI REQUIRED COMPONENTS C CXX)
# OPM Flow's request (opm-simulators-prereqs.cmake), then the required form.
find_package(Damaris 1.9)
if(NOT Damaris_FOUND)
  message(FATAL_ERROR "find_package(Damaris 1.9) failed")
endif()
find_package(Damaris 1.9 REQUIRED)
# What OPM's UseDamaris.cmake and PDI read.
if(NOT Damaris_VERSION VERSION_GREATER_EQUAL 1.9 OR NOT Damaris_HAS_HDF5 OR Damaris_HAS_VISIT
   OR Damaris_HAS_CATALYST OR NOT TARGET damaris OR NOT EXISTS "${Damaris_INCLUDE_DIRS}/Damaris.h"
   OR NOT EXISTS "${Damaris_LIBRARIES_PATH}/libdamaris.so" OR NOT Damaris_LIBRARIES STREQUAL "damaris")
  message(FATAL_ERROR "Damaris package: version ${Damaris_VERSION}, HDF5 ${Damaris_HAS_HDF5}, "
    "VisIt ${Damaris_HAS_VISIT}, Catalyst ${Damaris_HAS_CATALYST}, include ${Damaris_INCLUDE_DIRS}, "
    "libraries ${Damaris_LIBRARIES} in ${Damaris_LIBRARIES_PATH}")
endif()
message(STATUS "DAMARIS_PACKAGE_VERSION=${Damaris_VERSION}")
add_executable(consumer_cmake damaris_cxx_consumer.cpp)
# OPM Flow: target_link_libraries(opmsimulators PUBLIC damaris)
target_link_libraries(consumer_cmake PUBLIC damaris)
CM
cmake -S project -B project/build -DCMAKE_PREFIX_PATH="$prefix" \
  -DMPI_CXX_COMPILER="$(command -v "$mpicxx")" -DMPI_C_COMPILER="$(command -v "$mpicc")" \
  > project/configure.log || { cat project/configure.log; fail "the CMake consumer does not configure"; }
grep -q "DAMARIS_PACKAGE_VERSION=1\.9" project/configure.log ||
  fail "Damaris_VERSION is not 1.9.x: $(grep DAMARIS_PACKAGE_VERSION project/configure.log)"
cmake --build project/build >/dev/null

# As PDI's Damaris plugin finds Damaris, with a find module of its own: a header Damaris.h and a
# library named damaris, linked by name from its directory.
mkdir -p by_name
cp version_check.c damaris_cxx_consumer.cpp by_name/
cat > by_name/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.25)
project(by_name C CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(MPI REQUIRED COMPONENTS C CXX)
find_path(Damaris_INCLUDE_DIRS Damaris.h HINTS ${Damaris_ROOT} PATH_SUFFIXES include
  NO_DEFAULT_PATH)
find_library(Damaris_LIBRARIES damaris HINTS ${Damaris_ROOT} PATH_SUFFIXES lib NO_DEFAULT_PATH)
if(NOT Damaris_INCLUDE_DIRS OR NOT Damaris_LIBRARIES)
  message(FATAL_ERROR "no Damaris.h or library damaris under ${Damaris_ROOT}")
endif()
get_filename_component(Damaris_LIBRARIES_PATH ${Damaris_LIBRARIES} DIRECTORY)
include_directories(${Damaris_INCLUDE_DIRS} ${Damaris_INCLUDE_DIRS}/damaris)
link_directories(${Damaris_LIBRARIES_PATH})
set(CMAKE_BUILD_RPATH ${Damaris_LIBRARIES_PATH})
add_executable(version_check_by_name version_check.c)
target_link_libraries(version_check_by_name PUBLIC MPI::MPI_C damaris)
add_executable(consumer_by_name damaris_cxx_consumer.cpp)
target_link_libraries(consumer_by_name PUBLIC MPI::MPI_CXX damaris)
CM
cmake -S by_name -B by_name/build -DDamaris_ROOT="$prefix" \
  -DMPI_CXX_COMPILER="$(command -v "$mpicxx")" -DMPI_C_COMPILER="$(command -v "$mpicc")" \
  >/dev/null || fail "a project looking for a library named damaris does not configure"
cmake --build by_name/build >/dev/null
./by_name/build/version_check_by_name

# A C++-only project (project(<name> CXX), no C): the package brings MPI through its C++ target.
mkdir -p cxx_only
cp damaris_cxx_consumer.cpp cxx_only/
cat > cxx_only/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.25)
project(cxx_only CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(Damaris 1.9 REQUIRED)
add_executable(consumer_cxx_only damaris_cxx_consumer.cpp)
target_link_libraries(consumer_cxx_only PUBLIC damaris)
CM
cmake -S cxx_only -B cxx_only/build -DCMAKE_PREFIX_PATH="$prefix" \
  -DMPI_CXX_COMPILER="$(command -v "$mpicxx")" > cxx_only/configure.log ||
  { cat cxx_only/configure.log; fail "a C++-only project does not find Damaris"; }
cmake --build cxx_only/build >/dev/null || fail "a C++-only project does not build against Damaris"

# A request newer than the API Sidecore matches is refused, not silently accepted.
mkdir -p newer
cat > newer/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.25)
project(newer C CXX)
find_package(Damaris 1.12 QUIET)
if(Damaris_FOUND)
  message(FATAL_ERROR "find_package(Damaris 1.12) accepted Damaris ${Damaris_VERSION}")
endif()
CM
cmake -S newer -B newer/build -DCMAKE_PREFIX_PATH="$prefix" >/dev/null ||
  fail "find_package(Damaris 1.12) was not refused"

# The values of one Collective file as one line, "v0 v1 ...".
values() {
  h5dump -d "$2" -y -w 0 -o "$work/values.txt" "$1" >/dev/null || return 1
  tr -s ', \n' '  ' < "$work/values.txt" | sed 's/^ *//; s/ *$//'
}

check_output() {  # <output dir> <client count>
  local out=$1 clients=$2 iteration file expected_p expected_r c i n cell
  for iteration in 0 1; do
    file=$(ls "$out"/opm-like-*_It${iteration}.h5 2>/dev/null) ||
      fail "no Collective file for iteration $iteration in $out: $(ls "$out")"
    [ "$(echo "$file" | wc -l)" -eq 1 ] || fail "several files for iteration $iteration: $file"
    expected_p=""
    expected_r=""
    cell=0
    for ((c = 0; c < clients; ++c)); do
      n=$((3 + 2 * c))
      for ((i = 0; i < n; ++i)); do
        expected_p+="$((1000 * iteration + cell)).5 "
        expected_r+="$c "
        cell=$((cell + 1))
      done
    done
    [ "$(values "$file" /PRESSURE)" = "${expected_p% }" ] ||
      fail "PRESSURE at iteration $iteration in $file: $(values "$file" /PRESSURE), expected ${expected_p% }"
    [ "$(values "$file" /MPI_RANK)" = "${expected_r% }" ] ||
      fail "MPI_RANK at iteration $iteration in $file: $(values "$file" /MPI_RANK), expected ${expected_r% }"
  done
}

# Linked by name (-ldamaris), the configuration given as text as PDI gives it: one run with a
# dedicated core.
out=$work/out-by-name
mkdir -p "$out"
env -u SIDECORE_RANKS_PER_NODE CONSUMER_CONFIGURATION_AS_TEXT=1 \
  $launcher -np 4 ./by_name/build/consumer_by_name "$out" 4 1
[ ! -e "$out/damaris_config.xml" ] || fail "the configuration given as text was written to a file"
check_output "$out" 3

# Built by a C++-only project: one run with a dedicated core.
out=$work/out-cxx-only
mkdir -p "$out"
env -u SIDECORE_RANKS_PER_NODE $launcher -np 4 ./cxx_only/build/consumer_cxx_only "$out" 4 1
check_output "$out" 3

for exe in ./consumer_pc ./project/build/consumer_cmake; do
  # One node of 4 ranks: 3 clients and a dedicated core.
  out=$work/out-$(basename "$exe")-1node
  mkdir -p "$out"
  env -u SIDECORE_RANKS_PER_NODE $launcher -np 4 "$exe" "$out" 4 1
  check_output "$out" 3
  # Two nodes of 2 ranks: a client and a dedicated core on each.
  out=$work/out-$(basename "$exe")-2nodes
  mkdir -p "$out"
  SIDECORE_RANKS_PER_NODE=2 $launcher -np 4 "$exe" "$out" 2 1
  check_output "$out" 2
  # Two nodes of 2 ranks, the second a dedicated node: Damaris's per-node answers count nodes.
  out=$work/out-$(basename "$exe")-dedicated-node
  mkdir -p "$out"
  SIDECORE_RANKS_PER_NODE=2 $launcher -np 4 "$exe" "$out" 2 0 1
  check_output "$out" 2
  # No dedicated resource: four clients, each its own server.
  out=$work/out-$(basename "$exe")-synchronous
  mkdir -p "$out"
  env -u SIDECORE_RANKS_PER_NODE $launcher -np 4 "$exe" "$out" 4 0
  check_output "$out" 4
  echo "$exe: OK"
done
