// What the build found for the Python script runner: its library's name, the build tree, the
// Python it was built for and ParaView's Python. src/plugins/python/CMakeLists.txt gives these
// to python_build_info.cpp alone, so that no other source depends on where the build tree or
// its Python lie: two build trees (build/ and a wheel's) compile everything else alike and
// share those objects through the compiler cache.
#pragma once

namespace sidecore::plugins::python_build {

extern const bool has_runner;                      // false: built without Python
extern const char* const runner_name;              // libsidecore_pyscript.so
extern const char* const directory;                // the build tree holding the runner
extern const char* const python;                   // the executable it was built for
extern const char* const python_library;           // its libpython ("" for a static one)
extern const char* const paraview_python;          // a Python with ParaView's modules, or ""
extern const char* const paraview_python_library;  // its libpython

}  // namespace sidecore::plugins::python_build
