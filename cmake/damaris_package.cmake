# What a program written for Damaris looks for, installed beside Sidecore's own package: the
# CMake package Damaris (find_package(Damaris 1.9): target damaris, Damaris_* variables),
# damaris.pc (pkg-config --cflags --libs damaris), libdamaris.so (-ldamaris, find_library) and
# Damaris's C++ helper headers. Included by install.cmake, after SIDECORE_PC_PREFIX is set.
set(SIDECORE_DAMARIS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Damaris)

install(FILES ${SIDECORE_GENERATED_INCLUDE_DIR}/sidecore/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sidecore)
install(FILES ${PROJECT_SOURCE_DIR}/include/damaris/model/ModifyModel.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/damaris/model)
install(FILES ${PROJECT_SOURCE_DIR}/include/damaris/env/Environment.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/damaris/env)
install(FILES ${PROJECT_SOURCE_DIR}/include/damaris/util/DamarisVar.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/damaris/util)

if(HAVE_PYTHON_ENABLED)
  set(Damaris_HAS_PYTHON TRUE)
else()
  set(Damaris_HAS_PYTHON FALSE)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/DamarisConfig.cmake.in
  ${PROJECT_BINARY_DIR}/DamarisConfig.cmake INSTALL_DESTINATION ${SIDECORE_DAMARIS_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
# A request for 1.x up to the matched API version succeeds; a newer one (1.12) does not.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/DamarisConfigVersion.cmake
  VERSION ${SIDECORE_DAMARIS_API_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/DamarisConfig.cmake
  ${PROJECT_BINARY_DIR}/DamarisConfigVersion.cmake DESTINATION ${SIDECORE_DAMARIS_CMAKE_DIR})

configure_file(${PROJECT_SOURCE_DIR}/cmake/damaris.pc.in ${PROJECT_BINARY_DIR}/damaris.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/damaris.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# libdamaris.so -> libsidecore.so: makefiles saying -ldamaris, and find modules looking for a
# library named damaris (PDI's FindDamaris.cmake), link libsidecore (its soname is recorded).
install(CODE "
  set(_link \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libdamaris.so\")
  message(STATUS \"Installing: \${_link} -> $<TARGET_LINKER_FILE_NAME:sidecore>\")
  file(CREATE_LINK $<TARGET_LINKER_FILE_NAME:sidecore> \${_link} SYMBOLIC)")
