# The generated header sidecore/version.h (include/sidecore/version.h.in): Sidecore's version
# (from project(VERSION)), the Damaris API version it matches and the build's HAVE_*_ENABLED
# macros, in <build>/include so that in-tree code and installed programs read the same file.

# The Damaris release whose API Sidecore matches: DAMARIS_VERSION in Damaris.h, the version of
# the installed CMake package Damaris and of damaris.pc. The one place it is written.
set(SIDECORE_DAMARIS_API_VERSION 1.9.0)

string(REPLACE "." ";" _sidecore_damaris_parts "${SIDECORE_DAMARIS_API_VERSION}")
list(GET _sidecore_damaris_parts 0 SIDECORE_DAMARIS_API_VERSION_MAJOR)
list(GET _sidecore_damaris_parts 1 SIDECORE_DAMARIS_API_VERSION_MINOR)
list(GET _sidecore_damaris_parts 2 SIDECORE_DAMARIS_API_VERSION_PATCH)

# HAVE_PYTHON_ENABLED exactly when the <pyscript> runner is built (src/plugins/python, added by
# bindings/python), which is when damaris_has_plugin(DAMARIS_PLUGIN_PYTHON) answers 1.
set(HAVE_PYTHON_ENABLED ${SIDECORE_BUILD_PYTHON})
# No ParaView (Catalyst) or VisIt plugin exists: never defined.
set(HAVE_PARAVIEW_ENABLED OFF)
set(HAVE_VISIT_ENABLED OFF)

set(SIDECORE_GENERATED_INCLUDE_DIR ${PROJECT_BINARY_DIR}/include)
configure_file(${CMAKE_CURRENT_LIST_DIR}/../include/sidecore/version.h.in
  ${SIDECORE_GENERATED_INCLUDE_DIR}/sidecore/version.h @ONLY)
