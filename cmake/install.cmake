# Installation: Damaris.h, libsidecore, the sidecore tool, a CMake package
# (find_package(Sidecore)), sidecore.pc, what Damaris programs look for (damaris_package.cmake)
# and, with SIDECORE_BUILD_FORTRAN, the damaris Fortran module and sidecore-fortran.pc.
include(CMakePackageConfigHelpers)

install(TARGETS sidecore EXPORT SidecoreTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The command-line tool (docs/cli.md); it carries the library's objects, so it is not part of
# the exported targets.
if(SIDECORE_BUILD_CLI)
  install(TARGETS sidecore_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# `sidecore report` runs this script, found at <bin>/../share/sidecore (tools/cli/report.cpp).
install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/report/sidecore_report.py
  DESTINATION ${CMAKE_INSTALL_DATADIR}/sidecore)
install(FILES ${PROJECT_SOURCE_DIR}/include/Damaris.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/sidecore/plugin.h
              ${PROJECT_SOURCE_DIR}/include/sidecore/codes.h
              ${PROJECT_SOURCE_DIR}/include/sidecore/introspection.h
              ${PROJECT_SOURCE_DIR}/include/sidecore/schedule.h
              ${PROJECT_SOURCE_DIR}/include/sidecore/blocks.h
              ${PROJECT_SOURCE_DIR}/include/sidecore/read.h
              ${PROJECT_SOURCE_DIR}/include/sidecore/stats.h
              ${PROJECT_SOURCE_DIR}/include/sidecore/environment.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sidecore)

set(SIDECORE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Sidecore)
install(EXPORT SidecoreTargets NAMESPACE sidecore:: DESTINATION ${SIDECORE_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/SidecoreConfig.cmake.in
  ${PROJECT_BINARY_DIR}/SidecoreConfig.cmake INSTALL_DESTINATION ${SIDECORE_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/SidecoreConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/SidecoreConfig.cmake
  ${PROJECT_BINARY_DIR}/SidecoreConfigVersion.cmake DESTINATION ${SIDECORE_CMAKE_DIR})

# pkg-config: mpicc sim.c $(pkg-config --cflags --libs sidecore)
# The prefix is found relative to the .pc file, so the installation can be moved.
file(RELATIVE_PATH _sidecore_pc_up "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
set(SIDECORE_PC_PREFIX "\${pcfiledir}/${_sidecore_pc_up}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/sidecore.pc.in ${PROJECT_BINARY_DIR}/sidecore.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/sidecore.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The Damaris package, damaris.pc, libdamaris.so, sidecore/version.h and damaris/*.hpp.
include(${PROJECT_SOURCE_DIR}/cmake/damaris_package.cmake)

# Fortran: the damaris module (its .mod, usable by the compiler that built it), the interface
# target sidecore::fortran and sidecore-fortran.pc:
#   mpif90 sim.f90 $(pkg-config --cflags --libs sidecore-fortran)
if(SIDECORE_BUILD_FORTRAN)
  install(TARGETS sidecore_fortran EXPORT SidecoreTargets)
  get_target_property(_sidecore_module_dir sidecore_fortran_module Fortran_MODULE_DIRECTORY)
  install(FILES ${_sidecore_module_dir}/damaris.mod
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sidecore/fortran)
  # Also where Damaris puts it, so that `mpif90 -I<prefix>/include` finds `use damaris`.
  install(FILES ${_sidecore_module_dir}/damaris.mod DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  configure_file(${PROJECT_SOURCE_DIR}/bindings/fortran/sidecore-fortran.pc.in
    ${PROJECT_BINARY_DIR}/sidecore-fortran.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/sidecore-fortran.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
