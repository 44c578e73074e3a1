// sidecore_version_number(), sidecore_damaris_api_version_number() and
// sidecore_paraview_python() (sidecore/version.h).
// The numbers are given to this file by CMake directly, not through the generated header, so
// that a program comparing them with the header's macros finds out when the two disagree.
#include "sidecore/version.h"

#include <string>

#include "common/c_boundary.hpp"
#include "plugins/python_scripts.hpp"

#if !defined(SIDECORE_LIBRARY_VERSION_NUMBER) || \
    !defined(SIDECORE_LIBRARY_DAMARIS_API_VERSION_NUMBER)
#error "CMake gives this file the library's version numbers (bindings/c/CMakeLists.txt)"
#endif

SIDECORE_API unsigned sidecore_version_number(void) { return SIDECORE_LIBRARY_VERSION_NUMBER; }

SIDECORE_API unsigned sidecore_damaris_api_version_number(void) {
  return SIDECORE_LIBRARY_DAMARIS_API_VERSION_NUMBER;
}

SIDECORE_API const char* sidecore_paraview_python(void) {
  static const std::string python = [] {
    try {
      return sidecore::plugins::paraview_python();
    } catch (...) {
      return std::string();  // no exception crosses the C boundary
    }
  }();
  return python.c_str();
}
