# SIDECORE_COMPILER_CACHE=ON compiles C and C++ through ccache (scripts/setup.sh turns it on when
# ccache is installed). The cache lives in SIDECORE_COMPILER_CACHE_DIR (<build>/ccache unless
# set) and paths under the source tree are hashed relative to the compiling directory, so two
# build trees side by side in the source tree (build/ and the wheel build of `pip install .`,
# tests/python/test_pip_install.sh) share the objects they compile alike.
option(SIDECORE_COMPILER_CACHE "Compile C and C++ through ccache" OFF)
set(SIDECORE_COMPILER_CACHE_DIR "${PROJECT_BINARY_DIR}/ccache" CACHE PATH
  "Where SIDECORE_COMPILER_CACHE keeps its objects")
if(SIDECORE_COMPILER_CACHE)
  find_program(SIDECORE_CCACHE ccache)
  if(NOT SIDECORE_CCACHE)
    message(FATAL_ERROR "SIDECORE_COMPILER_CACHE is ON but ccache is not installed "
      "(apt-get install ccache), or configure with -DSIDECORE_COMPILER_CACHE=OFF")
  endif()
  # hash_dir=false: objects with debug information do not depend on the directory they were
  # compiled in (their DW_AT_comp_dir is the first build's).
  set(_sidecore_ccache ${CMAKE_COMMAND} -E env "CCACHE_DIR=${SIDECORE_COMPILER_CACHE_DIR}"
    "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}" CCACHE_NOHASHDIR=1 ${SIDECORE_CCACHE})
  set(CMAKE_C_COMPILER_LAUNCHER ${_sidecore_ccache})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${_sidecore_ccache})
endif()
