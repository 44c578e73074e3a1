// The build's answers for python_build_info.hpp, given as definitions to this source alone.
#include "plugins/python_build_info.hpp"

namespace sidecore::plugins::python_build {

#ifdef SIDECORE_PYSCRIPT_RUNNER
const bool has_runner = true;
const char* const runner_name = SIDECORE_PYSCRIPT_RUNNER;
const char* const directory = SIDECORE_PYSCRIPT_BUILD_DIR;
const char* const python = SIDECORE_PYTHON_EXECUTABLE;
const char* const python_library = SIDECORE_PYTHON_LIBRARY;
#else
const bool has_runner = false;
const char* const runner_name = "";
const char* const directory = "";
const char* const python = "";
const char* const python_library = "";
#endif
#ifdef SIDECORE_PARAVIEW_PYTHON
const char* const paraview_python = SIDECORE_PARAVIEW_PYTHON;
const char* const paraview_python_library = SIDECORE_PARAVIEW_PYTHON_LIBRARY;
#else
const char* const paraview_python = "";
const char* const paraview_python_library = "";
#endif

}  // namespace sidecore::plugins::python_build
