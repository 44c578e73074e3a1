// Reading <storage> (built-in and plugin stores), <actions> and <scripts>, and <log>.
#include <dlfcn.h>

#include <algorithm>
#include <filesystem>

#include "common/error.hpp"
#include "common/library_search.hpp"
#include "config/builder.hpp"

namespace sidecore::config::detail {
namespace {

// Whether the loader can find the plugin library `library` (a file name). It is looked for as
// the loader would, without loading it (its constructors run only when the store opens it, after
// its file is checked); only a library that search misses is tried with dlopen, which knows the
// loader's cache.
bool library_found(const std::string& library, std::string& why) {
  if (find_library_file(library)) return true;
  void* handle = ::dlopen(library.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    why = error != nullptr ? error : library + ": not found";
    return false;
  }
  ::dlclose(handle);
  return true;
}

// keep-workers: Damaris writes "yes" or "no"; true and false are accepted too.
const std::vector<choice<bool>> keep_workers_choices = {
    {"yes", true}, {"no", false}, {"true", true, false}, {"false", false, false}};

}  // namespace

void builder::read_storage(xml storage) {
  check_element(storage);
  for (xml n : elements(storage)) {
    check_element(n);
    store s;
    s.name = name_attribute(n);
    s.line = line_of(n);
    for (const auto& other : m_model.stores) {
      if (other.name == s.name) {
        fail(n, "store '" + s.name + "' is already defined at line " + std::to_string(other.line),
             "give each store a unique name");
      }
    }
    read_store_type(n, s);
    s.frequency = static_cast<int>(integer(n, "frequency", 1, 1, std::numeric_limits<int>::max()));
    for (xml option : elements(n)) {
      check_element(option);
      const std::string key = name_attribute(option, "key");
      for (const auto& [k, v] : s.options) {
        if (k == key) {
          fail(option, "option '" + key + "' is given twice in store '" + s.name + "'",
               "give each option once");
        }
      }
      s.options.emplace_back(key, trim(option.text().get()));
    }
    m_model.stores.push_back(std::move(s));
  }
}

// A built-in type (any case), else a plugin: named by library="...", or found as
// libsidecore_<type>.so on the loader's search path. Whether the library is a valid plugin is
// checked when the store opens it.
void builder::read_store_type(xml n, store& s) {
  const std::string library = trim(attribute(n, "library"));
  const std::string type = trim(attribute(n, "type"));
  for (const auto& c : store_type_choices) {
    if (lowercase(c.name) != lowercase(type)) continue;
    if (!library.empty()) {
      fail(n, describe(n) + " has the built-in type '" + c.name + "' and library='" + library + "'",
           "library=\"...\" names a plugin store's library; remove it, or give the type the "
           "plugin is known by");
    }
    s.type = c.value;
    return;
  }
  if (type.empty()) {
    fail(n, "empty 'type' on " + describe(n),
         "give a built-in type (HDF5, null) or a plugin's type");
  }
  s.type = type;
  if (!library.empty()) {
    s.library = beside_configuration(n, library, "library");
    return;
  }
  if (type.find('/') != std::string::npos) {
    fail(n, "the type '" + type + "' of " + describe(n) + " contains '/'",
         "a plugin's type names its library libsidecore_<type>.so; give a path with "
         "library=\"...\" instead");
  }
  s.library = "libsidecore_" + type + ".so";
  std::string why;
  if (!library_found(s.library, why)) {
    std::vector<std::string> listed;
    for (const auto& c : store_type_choices) listed.push_back(c.name);
    fail(n, "invalid value '" + attribute(n, "type") + "' for attribute 'type' of " + describe(n),
         detail::suggest(lowercase(type), listed, "values") +
             "; a plugin store is found as libsidecore_<type>.so on the library search path, or "
             "named with library=\"path/to/library.so\" (" +
             why + ")");
  }
}

void builder::resolve_variable_stores() {
  std::vector<std::string> known;
  for (const auto& s : m_model.stores) known.push_back(s.name);
  for (std::size_t i = 0; i < m_model.variables.size(); ++i) {
    const std::string& name = m_variable_stores[i];
    if (name.empty()) continue;
    variable& v = m_model.variables[i];
    for (std::size_t s = 0; s < m_model.stores.size(); ++s) {
      if (m_model.stores[s].name == name) v.store_index = s;
    }
    if (v.store_index == variable::npos) {
      fail(m_variable_nodes[i],
           "variable '" + v.name + "' refers to undefined store '" + name + "'",
           known.empty() ? std::string("no store is defined; declare one in <storage>")
                         : detail::suggest(name, known, "stores"));
    }
  }
}

void builder::check_unique_action(xml n, const std::string& name) {
  if (name.size() > max_signal_name_length) {
    fail(n, describe(n) + " has a name of " + std::to_string(name.size()) + " characters",
         "event and script names are at most " + std::to_string(max_signal_name_length) +
             " characters, the most a signal carries");
  }
  const auto found = m_action_lines.find(name);
  if (found != m_action_lines.end()) {
    fail(n, "action '" + name + "' is already defined at line " + std::to_string(found->second),
         "events and scripts share one namespace: give each a unique name");
  }
  m_action_lines.emplace(name, line_of(n));
}

void builder::read_actions(xml actions) {
  check_element(actions);
  // variables="a,b": the variables whose blocks a plugin receives; all enabled ones without it.
  const auto read_plugin_variables = [this](xml n, action_plugin& p) {
    if (!has(n, "variables")) {
      for (std::size_t v = 0; v < m_model.variables.size(); ++v)
        if (m_model.variables[v].enabled) p.variables.push_back(v);
      return;
    }
    std::vector<std::string> known;
    for (const auto& v : m_model.variables) known.push_back(v.name);
    for (const std::string& name : split(attribute(n, "variables"), ',')) {
      if (name.empty()) {
        fail(n,
             "empty variable name in variables=\"" + attribute(n, "variables") + "\" of " +
                 describe(n),
             "list full variable names separated by commas (groups joined with '/'), or omit "
             "variables=\"...\" to pass every enabled variable");
      }
      const std::size_t v = m_model.find_variable(name);
      if (v == model::npos) {
        fail(n, describe(n) + " names the undefined variable '" + name + "' in variables=",
             known.empty() ? std::string("no variable is defined in <data>")
                           : detail::suggest(name, known, "variables"));
      }
      if (!m_model.variables[v].enabled) {
        fail(n,
             describe(n) + " names the variable '" + name + "', which is disabled (line " +
                 std::to_string(m_model.variables[v].line) + ")",
             "a disabled variable is never written; enable it or remove it from variables=");
      }
      if (std::find(p.variables.begin(), p.variables.end(), v) != p.variables.end()) {
        fail(n, describe(n) + " names the variable '" + name + "' twice in variables=",
             "name each variable once");
      }
      p.variables.push_back(v);
    }
    std::sort(p.variables.begin(), p.variables.end());
  };
  // plugin="x": the event fires by its scope, and calls the plugin's on_event instead of a
  // function.
  const auto route_event_to_plugin = [this](xml n, event& e) {
    const std::string name = trim(attribute(n, "plugin"));
    if (has(n, "action")) {
      fail(n,
           describe(n) + " has both action=\"" + attribute(n, "action") + "\" and plugin=\"" +
               name + "\"",
           "an event runs a function (action=) or is routed to an action plugin (plugin=), "
           "not both");
    }
    if (!e.library.empty()) {
      fail(n, describe(n) + " has plugin=\"" + name + "\" and library=\"" + e.library + "\"",
           "the <plugin> element names the plugin's library; remove library= from the event");
    }
    if (e.execution == execution::local) {
      fail(n,
           describe(n) + " is routed to the action plugin '" + name + "' with execution=\"local\"",
           "an action plugin runs where the stores run, not in the signalling client; remove "
           "execution=\"local\"");
    }
    std::vector<std::string> known;
    for (std::size_t i = 0; i < m_model.action_plugins.size(); ++i) {
      known.push_back(m_model.action_plugins[i].name);
      if (m_model.action_plugins[i].name == name) e.plugin = i;
    }
    if (e.plugin == event::no_plugin) {
      fail(n, describe(n) + " is routed to the undefined action plugin '" + name + "'",
           known.empty() ? std::string("declare it in <actions> with <plugin name=\"") + name +
                               "\" library=\"...\"/>"
                         : detail::suggest(name, known, "action plugins"));
    }
  };
  // Action plugins first: an event may name a plugin declared after it.
  for (xml n : elements(actions)) {
    if (name_of(n) != "plugin") continue;
    check_element(n);
    action_plugin p;
    p.name = name_attribute(n);
    p.line = line_of(n);
    for (const auto& other : m_model.action_plugins) {
      if (other.name == p.name) {
        fail(n,
             "action plugin '" + p.name + "' is already defined at line " +
                 std::to_string(other.line),
             "give each <plugin> a unique name");
      }
    }
    p.library = beside_configuration(n, name_attribute(n, "library"), "library");
    p.frequency = static_cast<int>(integer(n, "frequency", 1, 0, std::numeric_limits<int>::max()));
    read_plugin_variables(n, p);
    for (xml option : elements(n)) {
      check_element(option);
      const std::string key = name_attribute(option, "key");
      for (const auto& [k, v] : p.options) {
        if (k == key) {
          fail(option, "option '" + key + "' is given twice in action plugin '" + p.name + "'",
               "give each option once");
        }
      }
      p.options.emplace_back(key, trim(option.text().get()));
    }
    m_model.action_plugins.push_back(std::move(p));
  }
  for (xml n : elements(actions)) {
    const std::string kind = name_of(n);
    if (kind == "plugin") continue;
    check_element(n);
    if (kind == "event") {
      event e;
      e.name = name_attribute(n);
      e.line = line_of(n);
      check_unique_action(n, e.name);
      e.library = beside_configuration(n, trim(attribute(n, "library")), "library");
      e.scope = pick(n, "scope", scope_choices, scope::core);
      e.execution = pick(n, "execution", execution_choices, execution::remote);
      flag(n, "external", false);
      if (has(n, "plugin")) {
        route_event_to_plugin(n, e);
      } else if (!has(n, "action")) {
        fail(n, describe(n) + " is missing the required attribute 'action'",
             "an event names the function it runs (action=\"...\") or the action plugin it is "
             "routed to (plugin=\"...\")");
      } else {
        e.action = name_attribute(n, "action");
      }
      m_model.events.push_back(std::move(e));
      m_model.index_names();
    } else if (kind == "script" || kind == "pyscript") {
      read_script(n, kind);
    }
  }
}

void builder::read_script(xml n, const std::string& kind) {
  script s;
  s.name = name_attribute(n);
  s.line = line_of(n);
  check_unique_action(n, s.name);
  s.file = beside_configuration(n, name_attribute(n, "file"), "file");
  s.lang = pick(n, "language", script_language_choices, language::python);
  s.scope = pick(n, "scope", scope_choices, scope::core);
  s.execution = pick(n, "execution", execution_choices, execution::remote);
  s.frequency = static_cast<int>(integer(n, "frequency", 1, 1, std::numeric_limits<int>::max()));
  flag(n, "external", false);
  if (has(n, "time-limit")) {
    const std::optional<double> seconds = real(attribute(n, "time-limit"));
    if (!seconds || !(*seconds >= 0) || *seconds > 1e9)
      fail(n,
           "invalid value '" + attribute(n, "time-limit") + "' for attribute 'time-limit' of " +
               describe(n),
           "expected the seconds one call of the script may take, a number >= 0 (0: no limit, "
           "the default)");
    s.time_limit_seconds = *seconds;
  }
  if (kind == "pyscript") {
    // Damaris's Dask attributes, with its defaults: no scheduler, 1 thread per worker
    // ("openmp": as many as OpenMP would use), workers stopped at the end, 2 s to reach the
    // scheduler. Damaris turns a bad value into its default with a line on stderr; here it is
    // an error, since the run would not do what the file asks.
    s.scheduler_file = trim(attribute(n, "scheduler-file"));
    s.nthreads = lowercase(trim(attribute(n, "nthreads")));
    if (s.nthreads != "" && s.nthreads != "openmp") {
      // 0 is what OPM Flow's template gives: Dask then picks its own default (the cores).
      s.nthreads = std::to_string(integer(n, "nthreads", 1, 0, 1 << 20));
    }
    s.keep_workers = pick(n, "keep-workers", keep_workers_choices, false);
    s.dask_keep = static_cast<int>(integer(n, "dask-keep", 4, 1, std::numeric_limits<int>::max()));
    if (has(n, "timeout")) {
      const std::optional<double> seconds = real(attribute(n, "timeout"));
      if (!seconds || !(*seconds > 0)) {
        fail(n,
             "invalid value '" + attribute(n, "timeout") + "' for attribute 'timeout' of " +
                 describe(n),
             "expected the seconds to wait for the Dask scheduler, a number > 0 (default 2)");
      }
      s.timeout_seconds = *seconds;
    }
  }
  m_script_nodes.push_back(n);
  m_model.scripts.push_back(std::move(s));
}

// Each script becomes an action receiving the variables that name it in script=.
void builder::resolve_scripts() {
  for (std::size_t i = 0; i < m_model.scripts.size(); ++i) {
    script& s = m_model.scripts[i];
    action_plugin a;
    a.name = s.name;
    a.frequency = s.frequency;
    a.line = s.line;
    a.script = i;
    for (std::size_t v = 0; v < m_model.variables.size(); ++v) {
      const variable& var = m_model.variables[v];
      if (!var.enabled) continue;
      if (std::find(var.scripts.begin(), var.scripts.end(), s.name) != var.scripts.end())
        a.variables.push_back(v);
    }
    if (a.variables.empty()) {
      warn(m_script_nodes[i], describe(m_script_nodes[i]) +
                                  " is named by no enabled variable's script=: it runs with the "
                                  "iteration number only (add script=\"" +
                                  s.name + "\" to the variables it should receive)");
    }
    s.action = m_model.action_plugins.size();
    m_model.action_plugins.push_back(std::move(a));
  }
}

void builder::read_log(xml n) {
  check_element(n);
  log_settings& s = m_model.log;
  s.file_name = trim(attribute(n, "FileName"));
  integer(n, "RotationSize", 0, 0);
  s.format = attribute(n, "LogFormat");
  s.level = pick(n, "LogLevel", log_level_choices, log_level::warning);
  s.flush = flag(n, "Flush", false);
}

// <paraview> as Damaris reads it (docs/paraview.md): one Catalyst pipeline per <script>,
// Catalyst's time = iteration x realtime-timestep, every pipeline made to write at
// end-iteration. Damaris ignores update-frequency (its scripts choose their own); here the
// pipelines run at every update-frequency-th iteration, 1 by default, which is the same.
void builder::read_paraview(xml n) {
  check_element(n);
  paraview_settings p;
  p.line = line_of(n);
  p.frequency =
      static_cast<int>(integer(n, "update-frequency", 1, 1, std::numeric_limits<int>::max()));
  if (has(n, "realtime-timestep")) {
    const std::optional<double> step = real(attribute(n, "realtime-timestep"));
    if (!step || !(*step > 0))
      fail(n,
           "invalid value '" + attribute(n, "realtime-timestep") +
               "' for attribute 'realtime-timestep' of " + describe(n),
           "expected the simulated time of one iteration, a number > 0 (Catalyst's time is "
           "iteration x realtime-timestep; default 0.1)");
    p.realtime_timestep = *step;
  }
  p.end_iteration = integer(n, "end-iteration", 0, 0, std::numeric_limits<std::int32_t>::max());
  // OPM Flow's template gives write-vtk="0" write-vtk-binary="false": only a request is noted.
  for (const char* vtk : {"write-vtk", "write-vtk-binary"}) {
    const std::string value = lowercase(trim(attribute(n, vtk)));
    if (!value.empty() && value != "0" && value != "false")
      warn(n, std::string(vtk) + "=\"" + attribute(n, vtk) +
                  "\" is ignored: Sidecore writes no VTK files of its own; a Catalyst script "
                  "writes extracts (docs/paraview.md), and the HDF5 store's XDMF opens in "
                  "ParaView");
  }
  for (xml script : elements(n)) {
    check_element(script);
    const std::string path = trim(script.child_value());
    if (path.empty())
      fail(script, "empty <script> in <paraview>",
           "give the path of a Catalyst Python script: <script>pipeline.py</script>");
    p.scripts.push_back(beside_configuration(script, path, "<script>"));
    p.script_lines.push_back(line_of(script));
  }
  if (p.scripts.empty()) warn(n, "<paraview> names no <script>: no Catalyst pipeline runs");
  m_model.paraview = std::move(p);
}

// The pipelines run as one more script action (after every <pyscript>'s), on every enabled
// variable with a declared mesh and on the variables the meshes are made of.
void builder::resolve_paraview() {
  if (!m_model.paraview || m_model.paraview->scripts.empty()) return;
  const paraview_settings& p = *m_model.paraview;
  script s;
  s.name = "<paraview>";
  s.paraview = true;
  s.frequency = p.frequency;
  s.line = p.line;
  action_plugin a;
  a.name = s.name;
  a.frequency = p.frequency;
  a.line = p.line;
  a.script = m_model.scripts.size();
  std::vector<bool> taken(m_model.variables.size(), false);
  const auto take = [&](std::size_t v) {
    if (v != model::npos && m_model.variables[v].enabled && !taken[v]) taken[v] = true;
  };
  for (const mesh& m : m_model.meshes) {
    bool used = false;
    for (std::size_t v = 0; v < m_model.variables.size(); ++v) {
      if (m_model.variables[v].mesh != m.name) continue;
      take(v);
      used = true;
    }
    if (!used) continue;
    for (const coordinate& c : m.coordinates) take(m_model.find_variable(c.name));
    for (const mesh_part& part : m.parts) take(m_model.find_variable(part.variable));
  }
  for (std::size_t v = 0; v < taken.size(); ++v)
    if (taken[v]) a.variables.push_back(v);
  if (a.variables.empty())
    warn_at(p.line,
            "<paraview>: no enabled variable names a declared <mesh>: the pipelines "
            "receive no data (give the variables to show mesh=\"...\")");
  s.action = m_model.action_plugins.size();
  m_model.action_plugins.push_back(std::move(a));
  m_model.scripts.push_back(std::move(s));
}

// Damaris 1.12 loads C++ server plugins of its own (PDI's PdiPlugin...) named in a top-level
// <plugins> section, which PDI's generated configurations always carry, usually empty. Sidecore
// cannot load a Damaris plugin: an empty section is accepted, and a plugin in it is never
// dropped without a word (an error under strict checking, like every warning).
void builder::read_damaris_plugins(xml n) {
  check_element(n);
  for (xml plugin : elements(n)) {
    const std::string name = trim(attribute(plugin, "name"));
    warn(plugin, "<" + name_of(plugin) + ">" + (name.empty() ? "" : " '" + name + "'") +
                     " in <plugins> is a Damaris C++ server plugin, which Sidecore cannot "
                     "load: it is ignored; do its work in an <event> action (a function of a "
                     "shared library) or a <pyscript>, or leave <plugins> empty");
  }
}

std::string builder::beside_configuration(xml n, const std::string& path, const char* what) {
  namespace fs = std::filesystem;
  if (path.empty() || path.find('/') == std::string::npos || path.front() == '/') return path;
  std::error_code ignored;
  const fs::path directory = fs::path(m_file).parent_path();
  if (!fs::is_regular_file(m_file, ignored)) return path;  // configuration given as text
  const fs::path beside = (directory / path).lexically_normal();
  if (fs::exists(beside, ignored)) return beside.string();
  if (fs::exists(path, ignored)) {
    warn(n, std::string(what) + "=\"" + path + "\" is not beside the configuration (no " +
                beside.string() + "); the one in the working directory (" +
                fs::current_path(ignored).string() +
                ") is used: write a path from the configuration's directory, or an absolute one");
    return path;
  }
  return beside.string();
}

}  // namespace sidecore::config::detail
