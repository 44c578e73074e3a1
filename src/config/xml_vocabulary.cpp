// The element rules and attribute values of Damaris-format configurations (xml_vocabulary.hpp).
#include "config/xml_vocabulary.hpp"

#include <algorithm>

namespace sidecore::config::detail {

const rule_map& all_rules() {
  static const rule_map rules = [] {
    rule_map r = {
        {"simulation",
         {{"name", "language", "strict"},
          {"name"},
          {"architecture", "data", "storage", "actions", "scripts", "log", "python", "visit",
           "paraview", "plugins"}}},
        {"architecture",
         {{"name"}, {}, {"domains", "dedicated", "placement", "buffer", "queue", "schedule"}}},
        {"schedule", {{"policy", "writers", "bandwidth", "order", "trace"}, {}, {}}},
        {"domains", {{"count"}, {}, {}}},
        {"dedicated", {{"cores", "nodes", "threads"}, {}, {}}},
        {"placement", {{}, {}, {}, true, true}},
        {"buffer",
         {{"name", "size", "type", "blocks", "enabled", "policy", "timeout", "server-memory",
           "spill-directory"},
          {"name", "size"},
          {}}},
        {"queue", {{"name", "size"}, {"name", "size"}, {}}},
        {"data", {{}, {}, {"parameter", "layout", "variable", "group", "mesh", "curve"}}},
        {"parameter", {{"name", "type", "value", "comment"}, {"name", "type", "value"}, {}}},
        {"layout",
         {{"name", "type", "dimensions", "global", "ghosts", "language", "visualizable", "comment"},
          {"name", "type", "dimensions"},
          {}}},
        {"variable",
         {{"name", "layout", "type", "unit", "enabled", "mesh", "centering", "visualizable",
           "time-varying", "store", "script", "comment", "select-mem", "select-file",
           "select-subset", "vectorlength"},
          {"name", "layout"},
          {}}},
        {"group",
         {{"name", "enabled", "store", "comment"},
          {"name"},
          {"layout", "variable", "group", "mesh", "curve"}}},
        // Unstructured meshes name the variables holding their pieces in extra children
        // (mesh_part in the model); <polyhedral_*> children are accepted whatever follows the
        // prefix, since Damaris versions name them differently.
        {"mesh",
         {{"name", "type", "topology", "time-varying", "comment"},
          {"name", "type"},
          {"coord", "vertex_global_id", "section_types", "section_sizes", "section_connectivity",
           "element_offsets"}}},
        {"coord", {{"name", "unit", "label", "comment"}, {"name"}, {}}},
        {"vertex_global_id", {{"name", "offset"}, {"name"}, {}}},
        {"section_types", {{"name"}, {"name"}, {}}},
        {"section_sizes", {{"name"}, {"name"}, {}}},
        {"section_connectivity", {{"name"}, {"name"}, {}}},
        {"element_offsets", {{"name"}, {"name"}, {}}},
        {"polyhedral_*", {{"name", "offset"}, {"name"}, {}}},
        {"curve", {{}, {}, {}, true, true}},
        {"storage", {{"basename"}, {}, {"store"}}},
        {"store",
         {{"name", "type", "library", "frequency", "comment"}, {"name", "type"}, {"option"}}},
        {"option", {{"key"}, {"key"}, {}, false, false, true}},
        {"actions", {{}, {}, {"event", "script", "error", "plugin"}}},
        // action="..." names a function; plugin="..." routes the event to an action plugin
        // instead: one of the two is required (checked by the reader of <actions>).
        {"event",
         {{"name", "action", "library", "scope", "execution", "external", "comment", "plugin"},
          {"name"},
          {}}},
        {"plugin",
         {{"name", "library", "frequency", "variables", "comment"},
          {"name", "library"},
          {"option"}}},
        {"script",
         {{"name", "file", "language", "scope", "execution", "frequency", "external", "comment",
           "time-limit"},
          {"name", "file"},
          {}}},
        {"pyscript",
         {{"name", "file", "language", "scope", "execution", "frequency", "external", "comment",
           "scheduler-file", "nthreads", "keep-workers", "timeout", "dask-keep", "time-limit"},
          {"name", "file"},
          {}}},
        {"error", {{}, {}, {}, true, false}},
        // ParaView Catalyst (docs/paraview.md). write-vtk and write-vtk-binary are read by the
        // Damaris that OPM Flow uses; Sidecore writes no VTK files of its own (warned).
        {"paraview",
         {{"update-frequency", "realtime-timestep", "end-iteration", "write-vtk",
           "write-vtk-binary"},
          {},
          {"script"}}},
        // A child's rules under a given parent are keyed "parent/child" (rules_for).
        {"paraview/script", {{}, {}, {}, false, false, true}},
        {"visit", {{"update-frequency"}, {}, {"path", "options"}}},
        {"visit/path", {{}, {}, {}, false, false, true}},
        {"visit/options", {{}, {}, {}, false, false, true}},
        {"scripts", {{}, {}, {"script", "pyscript"}}},
        // Damaris 1.12's own C++ server plugins: their content is Damaris's (read_damaris_plugins).
        {"plugins", {{}, {}, {}, false, true}},
        {"log", {{"FileName", "RotationSize", "LogFormat", "LogLevel", "Flush"}, {}, {}}},
    };
    // Damaris's own examples annotate elements with comment="..." (even <architecture>).
    for (auto& [name, rule] : r) {
      if (!rule.any_attribute && std::find(rule.attributes.begin(), rule.attributes.end(),
                                           "comment") == rule.attributes.end()) {
        rule.attributes.emplace_back("comment");
      }
    }
    return r;
  }();
  return rules;
}

bool is_polyhedral_part(std::string_view element) {
  return element.size() > 11 && element.rfind("polyhedral_", 0) == 0;
}

bool is_known_element(std::string_view element) {
  return all_rules().count(element) > 0 || is_polyhedral_part(element);
}

const element_rules& rules_for(std::string_view element, std::string_view parent) {
  static const element_rules anything{{}, {}, {}, true, true, true};
  if (is_polyhedral_part(element)) return all_rules().find("polyhedral_*")->second;
  if (!parent.empty()) {
    std::string qualified(parent);
    qualified += '/';
    qualified += element;
    const auto found = all_rules().find(qualified);
    if (found != all_rules().end()) return found->second;
  }
  const auto found = all_rules().find(element);
  return found == all_rules().end() ? anything : found->second;
}

std::string_view local_name(const char* qualified) {
  std::string_view name(qualified);
  const auto colon = name.find(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

bool is_xml_plumbing(std::string_view attribute) {
  return attribute == "xmlns" || attribute.rfind("xmlns:", 0) == 0 ||
         attribute.rfind("xsi:", 0) == 0;
}

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

bool is_none(const std::string& value) { return value.empty() || value == "#"; }

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const auto end = text.find(separator, start);
    parts.push_back(trim(text.substr(start, end - start)));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

const std::vector<choice<element_type>> type_choices = {
    {"short", element_type::int16},    {"int", element_type::int32},
    {"integer", element_type::int32},  {"long", element_type::int64},
    {"float", element_type::float32},  {"real", element_type::float32},
    {"double", element_type::float64}, {"char", element_type::int8},
    {"character", element_type::int8}, {"string", element_type::int8},
    {"label", element_type::int8}};

const std::vector<choice<language>> language_choices = {
    {"unknown", language::unknown}, {"c", language::c},
    {"cpp", language::cpp},         {"c++", language::cpp, false},
    {"fortran", language::fortran}, {"python", language::python}};

const std::vector<choice<enum scope>> scope_choices = {
    {"core", scope::core}, {"group", scope::group}, {"bcast", scope::bcast}};

const std::vector<choice<enum execution>> execution_choices = {
    {"local", execution::local}, {"remote", execution::remote}, {"coupled", execution::coupled}};

const std::vector<choice<centering>> centering_choices = {{"zonal", centering::zonal},
                                                          {"nodal", centering::nodal}};

const std::vector<choice<full_buffer_policy>> policy_choices = {{"wait", full_buffer_policy::wait},
                                                                {"skip", full_buffer_policy::skip}};

const std::vector<choice<log_level>> log_level_choices = {
    {"trace", log_level::trace},     {"debug", log_level::debug}, {"info", log_level::info},
    {"warning", log_level::warning}, {"error", log_level::error}, {"fatal", log_level::fatal}};

const std::vector<choice<bool>> bool_choices = {{"true", true},       {"false", false},
                                                {"1", true, false},   {"0", false, false},
                                                {"yes", true, false}, {"no", false, false}};

const std::vector<choice<std::string>> variable_kind_choices = {
    {"scalar", "scalar"},     {"vector", "vector"},
    {"tensor", "tensor"},     {"symmetric-tensor", "symmetric-tensor"},
    {"material", "material"}, {"matspecies", "matspecies"},
    {"label", "label"},       {"array", "array"},
    {"mesh", "mesh"},         {"curve", "curve"}};

const std::vector<choice<std::string>> mesh_type_choices = {{"unknown", "unknown"},
                                                            {"rectilinear", "rectilinear"},
                                                            {"curvilinear", "curvilinear"},
                                                            {"unstructured", "unstructured"},
                                                            {"point", "point"},
                                                            {"csg", "csg"},
                                                            {"amr", "amr"}};

const std::vector<choice<std::string>> store_type_choices = {{"HDF5", "HDF5"}, {"null", "null"}};

const std::vector<choice<std::string>> shm_type_choices = {{"posix", "posix"}, {"sysv", "sysv"}};

const std::vector<choice<language>> script_language_choices = {{"python", language::python}};

const std::vector<choice<schedule_policy>> schedule_policy_choices = {
    {"drain", schedule_policy::drain},     {"rate", schedule_policy::rate},
    {"slots", schedule_policy::slots},     {"phase", schedule_policy::phase},
    {"ordered", schedule_policy::ordered}, {"self", schedule_policy::self}};

}  // namespace sidecore::config::detail
