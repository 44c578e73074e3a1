# Which MPI the build uses, chosen by one option, and a check that parallel HDF5 was built for
# the same MPI (a library linked with two MPIs fails at run time, far from the cause).
#
#   SIDECORE_MPI=auto     the system's default wrappers (mpicc, mpicxx, mpif90, mpiexec)
#   SIDECORE_MPI=openmpi  Debian's mpicc.openmpi ... mpiexec.openmpi and hdf5-openmpi
#   SIDECORE_MPI=mpich    Debian's mpicc.mpich ... mpiexec.mpich and hdf5-mpich
#
# Included before find_package(MPI). Defines SIDECORE_MPI_FLAVOUR (openmpi, mpich or other,
# from the library FindMPI found) through sidecore_mpi_flavour(), and
# sidecore_check_hdf5_mpi(<hdf5 libraries>).
set(SIDECORE_MPI "auto" CACHE STRING "MPI to build with: auto, openmpi or mpich")
set_property(CACHE SIDECORE_MPI PROPERTY STRINGS auto openmpi mpich)
if(NOT SIDECORE_MPI MATCHES "^(auto|openmpi|mpich)$")
  message(FATAL_ERROR "SIDECORE_MPI='${SIDECORE_MPI}': expected auto, openmpi or mpich")
endif()
# FindMPI caches what it finds: another MPI in a configured build directory would mix both.
if(DEFINED CACHE{SIDECORE_MPI_CONFIGURED} AND NOT SIDECORE_MPI_CONFIGURED STREQUAL SIDECORE_MPI)
  message(FATAL_ERROR "This build directory was configured with "
    "SIDECORE_MPI=${SIDECORE_MPI_CONFIGURED}; configure SIDECORE_MPI=${SIDECORE_MPI} in a new "
    "build directory")
endif()
set(SIDECORE_MPI_CONFIGURED "${SIDECORE_MPI}" CACHE INTERNAL "SIDECORE_MPI of this build directory")

if(NOT SIDECORE_MPI STREQUAL "auto")
  # Debian installs each MPI's wrappers and launcher under a suffixed name; the plain names
  # follow update-alternatives. A wrapper given on the command line is kept.
  foreach(_sidecore_tool IN ITEMS C:mpicc CXX:mpicxx Fortran:mpif90)
    string(REPLACE ":" ";" _sidecore_tool "${_sidecore_tool}")
    list(GET _sidecore_tool 0 _sidecore_lang)
    list(GET _sidecore_tool 1 _sidecore_name)
    if(NOT MPI_${_sidecore_lang}_COMPILER)
      find_program(_sidecore_wrapper_${_sidecore_lang} NAMES ${_sidecore_name}.${SIDECORE_MPI})
      if(_sidecore_wrapper_${_sidecore_lang})
        set(MPI_${_sidecore_lang}_COMPILER "${_sidecore_wrapper_${_sidecore_lang}}"
          CACHE FILEPATH "MPI ${_sidecore_lang} compiler wrapper (${SIDECORE_MPI})")
      endif()
    endif()
  endforeach()
  if(NOT MPIEXEC_EXECUTABLE)
    find_program(_sidecore_mpiexec NAMES mpiexec.${SIDECORE_MPI} mpirun.${SIDECORE_MPI})
    if(_sidecore_mpiexec)
      set(MPIEXEC_EXECUTABLE "${_sidecore_mpiexec}" CACHE FILEPATH "MPI launcher (${SIDECORE_MPI})")
    endif()
  endif()
  if(NOT MPI_C_COMPILER)
    message(STATUS "Sidecore: no mpicc.${SIDECORE_MPI}; using the MPI found in PATH")
  endif()
endif()

# FindMPI then runs MPI_Get_library_version, which names the implementation.
set(MPI_DETERMINE_LIBRARY_VERSION TRUE)

# The flavour of the MPI library FindMPI found: openmpi, mpich (MPICH and its derivatives,
# whose launchers take the same options) or other. Fails when SIDECORE_MPI names another.
function(sidecore_mpi_flavour out)
  set(_version "${MPI_C_LIBRARY_VERSION_STRING}")
  if(_version MATCHES "Open MPI")
    set(_flavour openmpi)
  elseif(_version MATCHES "MPICH|Intel\\(R\\) MPI|MVAPICH")
    set(_flavour mpich)
  else()
    set(_flavour other)
  endif()
  if(NOT SIDECORE_MPI STREQUAL "auto" AND NOT _flavour STREQUAL SIDECORE_MPI)
    string(REGEX REPLACE "[\n,].*" "" _first_line "${_version}")
    message(FATAL_ERROR "SIDECORE_MPI=${SIDECORE_MPI} but the MPI found (${MPI_C_COMPILER}: "
      "${_first_line}) is not ${SIDECORE_MPI}. Install its packages (Debian: mpich libmpich-dev "
      "libhdf5-mpich-dev, or libopenmpi-dev openmpi-bin libhdf5-openmpi-dev) or name its "
      "wrappers with -DMPI_C_COMPILER=... -DMPI_CXX_COMPILER=..., in a new build directory")
  endif()
  set(${out} ${_flavour} PARENT_SCOPE)
endfunction()

# The shared-library names (sonames) an ELF file depends on, or its own with SONAME.
function(_sidecore_elf_names file kind out)
  set(_names "")
  if(CMAKE_READELF AND EXISTS "${file}")
    get_filename_component(_real "${file}" REALPATH)
    execute_process(COMMAND "${CMAKE_READELF}" -d "${_real}" OUTPUT_VARIABLE _dynamic
      ERROR_QUIET RESULT_VARIABLE _status)
    if(_status EQUAL 0)
      string(REGEX MATCHALL "\\(${kind}\\)[^\n]*\\[[^]\n]+\\]" _lines "${_dynamic}")
      foreach(_line IN LISTS _lines)
        string(REGEX REPLACE ".*\\[([^]]+)\\]$" "\\1" _name "${_line}")
        list(APPEND _names "${_name}")
      endforeach()
    endif()
  endif()
  set(${out} "${_names}" PARENT_SCOPE)
endfunction()

# Refuses an HDF5 linked against an MPI library other than the one found: the HDF5 library
# (the first of `libraries` named *hdf5*) must depend on the soname of one of MPI_C_LIBRARIES.
function(sidecore_check_hdf5_mpi module libraries)
  set(_hdf5 "")
  foreach(_lib IN LISTS libraries)
    get_filename_component(_base "${_lib}" NAME)
    if(_base MATCHES "hdf5" AND EXISTS "${_lib}")
      set(_hdf5 "${_lib}")
      break()
    endif()
  endforeach()
  set(_mpi_sonames "")
  foreach(_lib IN LISTS MPI_C_LIBRARIES)
    _sidecore_elf_names("${_lib}" SONAME _soname)
    list(APPEND _mpi_sonames ${_soname})
  endforeach()
  if(NOT _hdf5 OR NOT _mpi_sonames)
    message(STATUS "Sidecore: cannot tell which MPI HDF5 (${module}) was built with; not checked")
    return()
  endif()
  _sidecore_elf_names("${_hdf5}" NEEDED _needed)
  set(_hdf5_mpi "")
  foreach(_name IN LISTS _needed)
    if(_name MATCHES "^lib(mpi|mpich|mpi_[a-z0-9]+|mpicxx|pmpi)\\.so")
      list(APPEND _hdf5_mpi "${_name}")
    endif()
  endforeach()
  if(NOT _hdf5_mpi)
    message(WARNING "Sidecore: ${_hdf5} (pkg-config '${module}') depends on no MPI library: "
      "Sidecore needs a parallel HDF5 built for ${MPI_C_LIBRARIES}")
    return()
  endif()
  foreach(_name IN LISTS _hdf5_mpi)
    if(_name IN_LIST _mpi_sonames)
      return()
    endif()
  endforeach()
  string(REPLACE ";" ", " _hdf5_mpi "${_hdf5_mpi}")
  string(REPLACE ";" ", " _mpi_sonames "${_mpi_sonames}")
  message(FATAL_ERROR "Parallel HDF5 and MPI do not match: ${_hdf5} (pkg-config '${module}') "
    "is built for ${_hdf5_mpi}, but the MPI found (${MPI_C_COMPILER}) is ${_mpi_sonames}. "
    "Choose the MPI with -DSIDECORE_MPI=openmpi or -DSIDECORE_MPI=mpich (which also picks "
    "hdf5-openmpi or hdf5-mpich), or name the HDF5 with -DSIDECORE_HDF5_PKG=..., in a new "
    "build directory")
endfunction()
