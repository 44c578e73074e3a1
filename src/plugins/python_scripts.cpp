// Python scripts as actions: the runner library (src/plugins/python/script_runner.cpp) is an
// action plugin; this file names it, fills its options and opens libpython for it.
#include "plugins/python_scripts.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/json_writer.hpp"
#include "common/log.hpp"
#include "plugins/python_build_info.hpp"

namespace sidecore::plugins {

namespace {

// The libpython prepare_scripts chose instead of the built one (ParaView's), or "".
std::string g_chosen_python_library;

// The runner's Python half (sidecore_script.py, damaris4py...) lies in this directory next to
// the runner, in the build tree, an installed prefix and a wheel alike.
constexpr const char* host_directory_name = "sidecore-pyscript";

bool exists(const std::string& path) { return !path.empty() && ::access(path.c_str(), R_OK) == 0; }

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// The directory of the library holding this function: libsidecore.so, wherever it was loaded
// from (a unit test links the objects into its executable instead).
std::string own_directory() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&python_scripts_supported), &info) != 0 &&
      info.dli_fname != nullptr)
    return directory_of(info.dli_fname);
  return {};
}

// SIDECORE_PYSCRIPT_RUNNER, else next to libsidecore, else where it was built.
std::string find_runner(std::string& searched) {
  std::string overridden = environment::text("SIDECORE_PYSCRIPT_RUNNER");
  if (!overridden.empty()) {
    searched = overridden + " (SIDECORE_PYSCRIPT_RUNNER)";
    return exists(overridden) ? overridden : std::string();
  }
  for (const std::string& directory : {own_directory(), std::string(python_build::directory)}) {
    if (directory.empty()) continue;
    const std::string path = directory + "/" + python_build::runner_name;
    searched += (searched.empty() ? "" : ", ") + path;
    if (exists(path)) return path;
  }
  return {};
}

// The interpreter scripts run with, when the program is not Python itself: SIDECORE_PYTHON,
// else the active virtual environment's, else the one Sidecore was built with; "" lets Python
// find itself on PATH. Its path decides the prefix, so a virtual environment's packages are
// found.
std::string python_executable() {
  std::string chosen = environment::text("SIDECORE_PYTHON");
  if (!chosen.empty()) return chosen;
  const std::string venv = environment::text("VIRTUAL_ENV");
  if (!venv.empty() && exists(venv + "/bin/python")) return venv + "/bin/python";
  return exists(python_build::python) ? std::string(python_build::python) : std::string();
}

// DamarisData's "type_string" of a layout type as the XML names it, as Damaris's PyAction
// spells it ("" for the types it makes no array of: string, label).
std::string damaris_type_string(const std::string& type_name) {
  if (type_name == "int" || type_name == "integer") return "_int";
  if (type_name == "float" || type_name == "real") return "_float";
  if (type_name == "char" || type_name == "character") return "_char";
  if (type_name == "long") return "_longint";
  if (type_name == "short" || type_name == "double") return "_" + type_name;
  return "";
}

std::string joined(const std::vector<int>& values) {
  std::string text;
  for (int v : values) text += (text.empty() ? "" : ",") + std::to_string(v);
  return text;
}

// The meshes and the variables on them, for sidecore_vtk (docs/python_scripts.md): JSON
// {"meshes": [{"name", "type", "topology", "coords": [...], "parts": {role: [variable,
// offset]}}], "variables": {name: {"mesh", "centering", "kind", "vector_length"}}}.
std::string visualization_json(const config::model& model) {
  json_writer j;
  j.begin_object().key("meshes").begin_array();
  for (const config::mesh& m : model.meshes) {
    j.begin_object().field("name", m.name).field("type", m.type).field("topology", m.topology);
    j.key("coords").begin_array();
    for (const config::coordinate& c : m.coordinates) j.value(c.name);
    j.end_array().key("parts").begin_object();
    for (const config::mesh_part& part : m.parts) {
      j.key(part.role).begin_array().value(part.variable).value(part.offset).end_array();
    }
    j.end_object().end_object();
  }
  j.end_array().key("variables").begin_object();
  for (const config::variable& v : model.variables) {
    if (v.mesh.empty()) continue;
    j.key(v.name).begin_object().field("mesh", v.mesh);
    j.field("centering", v.center == config::centering::nodal ? "nodal" : "zonal");
    j.field("kind", v.kind).field("vector_length", v.vector_length).end_object();
  }
  j.end_object().end_object();
  return j.text();
}

}  // namespace

bool python_scripts_supported() noexcept { return python_build::has_runner; }

std::string paraview_python() {
  return python_build::has_runner ? python_build::paraview_python : "";
}

void prepare_scripts(config::model& model, const script_environment& env, bool report) {
  if (model.scripts.empty()) return;
  if (!python_build::has_runner) {
    if (report) {
      for (const config::script& s : model.scripts) {
        log::warning(model.file, ":", s.line, ": ",
                     s.paraview ? std::string("<paraview>") : "<pyscript name=\"" + s.name + "\">",
                     " is not run: this Sidecore was built without Python (configure it with "
                     "-DSIDECORE_BUILD_PYTHON=ON, or install it with pip)");
      }
    }
    // Scripts' actions come after every action plugin: events never point at them.
    std::size_t first = model.action_plugins.size();
    for (const config::script& s : model.scripts) first = std::min(first, s.action);
    model.action_plugins.resize(first);
    for (config::script& s : model.scripts) s.action = static_cast<std::size_t>(-1);
    return;
  }
  std::string searched;
  const std::string runner = find_runner(searched);
  std::string python = python_executable();
  // <paraview> pipelines need ParaView's Python modules: unless SIDECORE_PYTHON names an
  // interpreter, the scripts of this process run in the Python ParaView was found with.
  const bool with_paraview = std::any_of(model.scripts.begin(), model.scripts.end(),
                                         [](const config::script& s) { return s.paraview; });
  if (with_paraview && environment::text("SIDECORE_PYTHON").empty()) {
    if (*python_build::paraview_python != '\0') {
      python = python_build::paraview_python;
      if (environment::text("SIDECORE_PYTHON_LIBRARY").empty())
        g_chosen_python_library = python_build::paraview_python_library;
    } else if (report) {
      log::warning(model.file, ":", model.paraview->line,
                   ": <paraview>: this Sidecore was built where no Python could import ParaView "
                   "(paraview.catalyst); the pipelines run with ",
                   python.empty() ? "python3" : python,
                   ", and fail if it cannot (install python3-paraview and rebuild, or set "
                   "SIDECORE_PYTHON and SIDECORE_PYTHON_LIBRARY to ParaView's Python)");
    }
  }
  // Per variable, for DamarisData: Fortran order, time-invariant ones (Damaris hands them at
  // iteration 0 only) and the type string (given even for a variable with no block).
  std::string fortran_variables, constant_variables, type_strings;
  for (const config::variable& v : model.variables) {
    const config::layout& l = model.layouts[v.layout_index];
    if (l.fortran_order) fortran_variables += (fortran_variables.empty() ? "" : ",") + v.name;
    if (!v.time_varying) constant_variables += (constant_variables.empty() ? "" : ",") + v.name;
    type_strings +=
        (type_strings.empty() ? "" : ",") + v.name + "=" + damaris_type_string(l.type_name);
  }
  const std::string visualization = visualization_json(model);
  for (config::script& s : model.scripts) {
    // What the log names when the pipelines fail: their Catalyst scripts.
    if (s.paraview) {
      s.file.clear();
      for (const std::string& file : model.paraview->scripts)
        s.file += (s.file.empty() ? "" : ", ") + file;
    }
  }
  for (const config::script& s : model.scripts) {
    config::action_plugin& action = model.action_plugins.at(s.action);
    // An empty library makes make_action say where the runner was looked for.
    action.library = runner.empty() ? std::string() : runner;
    auto& o = action.options;
    o.clear();
    o.emplace_back("file",
                   s.paraview && !runner.empty()
                       ? directory_of(runner) + "/" + host_directory_name + "/sidecore_paraview.py"
                       : s.file);
    if (s.paraview) {
      const config::paraview_settings& p = *model.paraview;
      std::string scripts;
      for (const std::string& file : p.scripts) scripts += (scripts.empty() ? "" : "\n") + file;
      o.emplace_back("catalyst-scripts", scripts);
      o.emplace_back("realtime-timestep", std::to_string(p.realtime_timestep));
      o.emplace_back("end-iteration", std::to_string(p.end_iteration));
    }
    o.emplace_back("python", python);
    o.emplace_back(
        "host", runner.empty() ? std::string() : directory_of(runner) + "/" + host_directory_name);
    o.emplace_back("runner-search", searched);
    o.emplace_back("scheduler-file", s.scheduler_file);
    o.emplace_back("timeout", std::to_string(s.timeout_seconds));
    o.emplace_back("nthreads", s.nthreads);
    o.emplace_back("keep-workers", s.keep_workers ? "yes" : "no");
    o.emplace_back("dask-keep", std::to_string(s.dask_keep));
    o.emplace_back("time-limit", std::to_string(s.time_limit_seconds));
    o.emplace_back("fortran-variables", fortran_variables);
    o.emplace_back("constant-variables", constant_variables);
    o.emplace_back("type-strings", type_strings);
    o.emplace_back("visualization", visualization);
    o.emplace_back("mode", env.mode);
    o.emplace_back("is_dedicated_core", env.is_dedicated_core ? "1" : "0");
    o.emplace_back("is_dedicated_node", env.is_dedicated_node ? "1" : "0");
    o.emplace_back("servers_per_node", std::to_string(env.servers_per_node));
    o.emplace_back("clients_per_node", std::to_string(env.clients_per_node));
    o.emplace_back("cores_per_node", std::to_string(env.cores_per_node));
    o.emplace_back("number_of_nodes", std::to_string(env.number_of_nodes));
    o.emplace_back("magic", env.magic);
    o.emplace_back("known_clients", joined(env.known_clients));
  }
}

void open_python_symbols(const std::string& prefix) {
  // In a Python process (an mpi4py simulation) the interpreter is there: use it.
  if (::dlsym(RTLD_DEFAULT, "Py_IsInitialized") != nullptr) return;
  std::string library = environment::text("SIDECORE_PYTHON_LIBRARY");
  const bool overridden = !library.empty();
  if (!overridden)
    library =
        g_chosen_python_library.empty() ? python_build::python_library : g_chosen_python_library;
  if (library.empty()) {
    throw config_error(prefix +
                       "Python scripts need a shared libpython, and the Python this Sidecore "
                       "was built with has none (a static build): set SIDECORE_PYTHON_LIBRARY "
                       "to a libpython3.X.so of the same version, or rebuild Sidecore with a "
                       "Python configured with --enable-shared (Debian's python3-dev)");
  }
  ::dlerror();
  if (::dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE) == nullptr) {
    const char* why = ::dlerror();
    throw config_error(prefix + "cannot open the Python library '" + library + "'" +
                       (overridden ? " (SIDECORE_PYTHON_LIBRARY)" : "") + ": " +
                       (why != nullptr ? why : "unknown error") +
                       "; set SIDECORE_PYTHON_LIBRARY to the libpython of the Python Sidecore "
                       "was built with");
  }
}

}  // namespace sidecore::plugins
