// Python scripts (<pyscript>) as actions: what the runtime adds to each script's settings (the
// runner library, the interpreter, where it runs), and opening the interpreter's symbols
// before the runner. Nothing here links Python: a process whose configuration has no script
// never loads it.
#pragma once

#include <string>
#include <vector>

#include "config/model.hpp"

namespace sidecore::plugins {

// Where the scripts of this process run: Damaris's DamarisData['damaris_env'] and what
// damaris4py's functions answer.
struct script_environment {
  std::string mode;  // "dedicated cores", "dedicated nodes", "thread", "synchronous"
  bool is_dedicated_core = false;
  bool is_dedicated_node = false;
  int servers_per_node = 0;
  int clients_per_node = 0;
  int cores_per_node = 0;  // ranks per node
  int number_of_nodes = 1;
  std::string magic;               // the same on every rank of the job
  std::vector<int> known_clients;  // client indices whose blocks this writer receives
};

// Whether this Sidecore can run Python scripts (built with SIDECORE_BUILD_PYTHON=ON).
bool python_scripts_supported() noexcept;

// The Python <paraview> pipelines run with, found when Sidecore was built (one that imports
// ParaView's Catalyst modules; docs/paraview.md); "" when none was, or without Python support.
std::string paraview_python();

// Completes the settings of every script action of the model: the runner library and its
// options (the script file, the interpreter, the Dask attributes, the environment). Without
// Python support the scripts are removed with a warning (logged when `report` is set), so
// that a Damaris configuration still runs.
void prepare_scripts(config::model& model, const script_environment& environment, bool report);

// Makes the interpreter's symbols visible before the runner is opened: nothing to do in a
// Python process; otherwise libpython is opened with RTLD_GLOBAL. Throws config_error starting
// with `prefix` saying which library could not be opened and how to name another.
void open_python_symbols(const std::string& prefix);

}  // namespace sidecore::plugins
