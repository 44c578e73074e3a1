// Damaris-format XML to a validated model: strict where a mistake would change stored data,
// tolerant (warnings) where Damaris's own examples are loose. The only user of pugixml.
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>

#include <pugixml.hpp>

#include "common/error.hpp"
#include "config/model.hpp"

namespace sidecore::config {
namespace {

using name_map = std::map<std::string, std::size_t, std::less<>>;
using xml = pugi::xml_node;

// What an element may carry. Elements with any_attribute are accepted as written because
// Damaris versions disagree on their attributes and none of them changes what is stored.
struct element_rules {
  std::vector<std::string> attributes;
  std::vector<std::string> required;
  std::vector<std::string> children;
  bool any_attribute = false;
  bool any_children = false;
  bool text = false;  // takes text content (<option>); elsewhere text is ignored with a warning
};

using rule_map = std::map<std::string, element_rules, std::less<>>;

const rule_map& all_rules() {
  static const rule_map rules = [] {
    rule_map r = {
        {"simulation",
         {{"name", "language", "strict"},
          {"name"},
          {"architecture", "data", "storage", "actions", "scripts", "log", "python", "visit",
           "paraview"}}},
        {"architecture", {{"name"}, {}, {"domains", "dedicated", "placement", "buffer", "queue"}}},
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
        {"actions", {{}, {}, {"event", "script", "error"}}},
        {"event",
         {{"name", "action", "library", "scope", "execution", "external", "comment"},
          {"name", "action"},
          {}}},
        {"script",
         {{"name", "file", "language", "scope", "execution", "frequency", "external", "comment"},
          {"name", "file"},
          {}}},
        {"pyscript",
         {{"name", "file", "language", "scope", "execution", "frequency", "external", "comment",
           "scheduler-file", "nthreads", "keep-workers", "timeout"},
          {"name", "file"},
          {}}},
        {"error", {{}, {}, {}, true, false}},
        {"scripts", {{}, {}, {"script", "pyscript"}}},
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

// Elements outside the vocabulary (the content of <visit>, <python>...) accept anything.
bool is_known_element(std::string_view element) {
  return all_rules().count(element) > 0 || is_polyhedral_part(element);
}

const element_rules& rules_for(std::string_view element) {
  static const element_rules anything{{}, {}, {}, true, true, true};
  if (is_polyhedral_part(element)) return all_rules().find("polyhedral_*")->second;
  const auto found = all_rules().find(element);
  return found == all_rules().end() ? anything : found->second;
}

std::string_view local_name(const char* qualified) {
  std::string_view name(qualified);
  const auto colon = name.find(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

// Namespace declarations and schema hints are XML plumbing, not configuration.
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

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Damaris writes "#" for "none" in mesh, store, script, global and ghosts.
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

template <typename T>
struct choice {
  const char* name;
  T value;
  bool listed = true;  // aliases are accepted but not advertised
};

const std::vector<choice<element_type>> type_choices = {
    {"short", element_type::int16},  {"int", element_type::int32},
    {"integer", element_type::int32}, {"long", element_type::int64},
    {"float", element_type::float32}, {"real", element_type::float32},
    {"double", element_type::float64}, {"char", element_type::int8},
    {"character", element_type::int8}, {"string", element_type::int8},
    {"label", element_type::int8}};

const std::vector<choice<language>> language_choices = {{"unknown", language::unknown},
                                                        {"c", language::c},
                                                        {"cpp", language::cpp},
                                                        {"c++", language::cpp, false},
                                                        {"fortran", language::fortran},
                                                        {"python", language::python}};

const std::vector<choice<enum scope>> scope_choices = {
    {"core", scope::core}, {"group", scope::group}, {"bcast", scope::bcast}};

const std::vector<choice<enum execution>> execution_choices = {
    {"local", execution::local}, {"remote", execution::remote}, {"coupled", execution::coupled}};

const std::vector<choice<centering>> centering_choices = {{"zonal", centering::zonal},
                                                          {"nodal", centering::nodal}};

const std::vector<choice<full_buffer_policy>> policy_choices = {
    {"wait", full_buffer_policy::wait}, {"skip", full_buffer_policy::skip}};

const std::vector<choice<log_level>> log_level_choices = {
    {"trace", log_level::trace}, {"debug", log_level::debug},     {"info", log_level::info},
    {"warning", log_level::warning}, {"error", log_level::error}, {"fatal", log_level::fatal}};

const std::vector<choice<bool>> bool_choices = {
    {"true", true}, {"false", false}, {"1", true, false}, {"0", false, false},
    {"yes", true, false}, {"no", false, false}};

const std::vector<choice<std::string>> variable_kind_choices = {
    {"scalar", "scalar"}, {"vector", "vector"},     {"tensor", "tensor"},
    {"symmetric-tensor", "symmetric-tensor"},      {"material", "material"},
    {"matspecies", "matspecies"}, {"label", "label"}, {"array", "array"},
    {"mesh", "mesh"},     {"curve", "curve"}};

const std::vector<choice<std::string>> mesh_type_choices = {
    {"unknown", "unknown"},       {"rectilinear", "rectilinear"}, {"curvilinear", "curvilinear"},
    {"unstructured", "unstructured"}, {"point", "point"},      {"csg", "csg"},
    {"amr", "amr"}};

const std::vector<choice<std::string>> store_type_choices = {{"HDF5", "HDF5"}, {"null", "null"}};

const std::vector<choice<std::string>> shm_type_choices = {{"posix", "posix"}, {"sysv", "sysv"}};

const std::vector<choice<language>> script_language_choices = {{"python", language::python}};

class builder {
 public:
  builder(std::string_view text, const std::string& file, const parse_options& options)
      : m_text(text), m_file(file), m_options(options) {
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') m_newlines.push_back(i);
    }
  }

  model build() {
    m_model.file = m_file;
    const pugi::xml_parse_result result =
        m_document.load_buffer(m_text.data(), m_text.size(), pugi::parse_default,
                               pugi::encoding_utf8);
    if (result.status == pugi::status_no_document_element) {
      throw config_error(m_file + ":" + std::to_string(line_at(result.offset)) +
                         ": no root element; expected <simulation>");
    }
    if (!result) {
      throw config_error(m_file + ":" + std::to_string(line_at(result.offset)) +
                         ": XML syntax error: " + result.description() +
                         "; the file must be well-formed XML");
    }
    std::vector<xml> roots;
    for (xml n : m_document.children()) {
      if (n.type() == pugi::node_element) roots.push_back(n);
    }
    if (roots.empty()) {
      throw config_error(m_file + ":1: no root element; expected <simulation>");
    }
    if (roots.size() > 1) fail(roots[1], "second root element <" + name_of(roots[1]) + ">",
                               "a configuration has exactly one <simulation> element");
    const xml root = roots.front();
    if (name_of(root) != "simulation") {
      fail(root, "root element is <" + name_of(root) + ">", "expected <simulation>");
    }
    check_attributes_once(root);
    check_text(root);
    check_element(root);
    m_model.simulation_name = attribute(root, "name");
    m_model.lang = pick(root, "language", language_choices, language::unknown);

    std::vector<xml> sections[9];
    const auto& section_names = rules_for("simulation").children;
    for (xml child : elements(root)) {
      const auto index = std::find(section_names.begin(), section_names.end(), name_of(child)) -
                         section_names.begin();
      sections[index].push_back(child);
    }
    for (const char* single : {"architecture", "log"}) {
      const auto index = std::find(section_names.begin(), section_names.end(), single) -
                         section_names.begin();
      if (sections[index].size() > 1) {
        fail(sections[index][1], "second <" + std::string(single) + "> element",
             "give at most one <" + std::string(single) + "> per configuration");
      }
    }
    const auto section = [&](const char* name) -> const std::vector<xml>& {
      return sections[std::find(section_names.begin(), section_names.end(), name) -
                      section_names.begin()];
    };

    for (xml n : section("architecture")) read_architecture(n);
    for (xml data : section("data")) {
      for (xml n : elements(data)) {
        if (name_of(n) == "parameter") {
          m_declared_parameters.emplace(trim(attribute(n, "name")), line_of(n));
        }
      }
    }
    for (xml n : section("data")) read_parameters(n);
    for (xml n : section("data")) read_layouts(n, "");
    for (xml n : section("data")) read_data_objects(n, "", true, "");
    check_variable_group_clashes();
    for (xml n : section("storage")) read_storage(n);
    resolve_variable_stores();
    for (xml n : section("actions")) read_actions(n);
    for (xml n : section("scripts")) read_actions(n);
    for (xml n : section("log")) read_log(n);
    for (const char* unsupported : {"python", "visit", "paraview"}) {
      for (xml n : section(unsupported)) {
        warn(n, "<" + std::string(unsupported) + "> is not supported and is ignored; " +
                    "for in-situ analysis use an <event> action, a function of a shared " +
                    "library or of the executable");
      }
    }
    warn_python_not_run();
    check_references();
    check_layout_values();
    evaluate_architecture_sizes();
    if (m_options.strict || flag(root, "strict", false)) refuse_warnings(root);
    return std::move(m_model);
  }

 private:
  int line_at(std::ptrdiff_t offset) const {
    if (offset < 0) return 0;
    return static_cast<int>(std::lower_bound(m_newlines.begin(), m_newlines.end(),
                                             static_cast<std::size_t>(offset)) -
                            m_newlines.begin()) +
           1;
  }
  int line_of(xml n) const { return line_at(n.offset_debug()); }
  std::string where(xml n) const { return m_file + ":" + std::to_string(line_of(n)); }

  // Strict checking: every warning of the file is an error, reported with the first of them.
  void refuse_warnings(xml root) const {
    if (m_model.warnings.empty()) return;
    std::string message = m_model.warnings.front() +
                          " [an error: strict checking is on (" +
                          (m_options.strict ? "SIDECORE_STRICT" : "strict=\"true\" on " + describe(root)) +
                          "), which makes every configuration warning an error]";
    const std::size_t shown = std::min<std::size_t>(m_model.warnings.size(), 11);
    for (std::size_t i = 1; i < shown; ++i) message += "\n  also: " + m_model.warnings[i];
    if (m_model.warnings.size() > shown)
      message += "\n  and " + std::to_string(m_model.warnings.size() - shown) + " more";
    throw config_error(message);
  }

  [[noreturn]] void fail(xml n, const std::string& what, const std::string& hint) const {
    throw config_error(where(n) + ": " + what + "; " + hint);
  }
  void warn(xml n, const std::string& message) {
    m_model.warnings.push_back(where(n) + ": " + message);
  }
  void warn_at(int line, const std::string& message) {
    m_model.warnings.push_back(m_file + ":" + std::to_string(line) + ": " + message);
  }

  static std::string name_of(xml n) { return std::string(local_name(n.name())); }

  static std::vector<xml> elements(xml parent) {
    std::vector<xml> out;
    for (xml n : parent.children()) {
      if (n.type() == pugi::node_element) out.push_back(n);
    }
    return out;
  }

  // Description of an element for messages: <variable 'cube'>.
  static std::string describe(xml n) {
    std::string text = "<" + name_of(n);
    for (pugi::xml_attribute a : n.attributes()) {
      if (local_name(a.name()) == "name") {
        text += std::string(" '") + a.value() + "'";
        break;
      }
    }
    return text + ">";
  }

  // Line of the occurrence-th (1-based) attribute written `qualified` in the start tag of n.
  // pugixml keeps no position for attributes, so the tag is read again from the text; the
  // element's line is the answer whenever the text does not look as expected.
  int attribute_line(xml n, std::string_view qualified, int occurrence) const {
    const std::ptrdiff_t offset = n.offset_debug();
    const std::string_view tag_name(n.name());
    if (offset < 0 ||
        m_text.substr(static_cast<std::size_t>(offset), tag_name.size()) != tag_name) {
      return line_of(n);
    }
    const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
    std::size_t pos = static_cast<std::size_t>(offset) + tag_name.size();
    for (;;) {
      while (pos < m_text.size() && is_space(m_text[pos])) ++pos;
      if (pos >= m_text.size() || m_text[pos] == '>' || m_text[pos] == '/') break;
      const std::size_t start = pos;
      while (pos < m_text.size() && m_text[pos] != '=' && !is_space(m_text[pos])) ++pos;
      const std::string_view name = m_text.substr(start, pos - start);
      while (pos < m_text.size() && is_space(m_text[pos])) ++pos;
      if (pos >= m_text.size() || m_text[pos] != '=') break;
      ++pos;
      while (pos < m_text.size() && is_space(m_text[pos])) ++pos;
      if (pos >= m_text.size() || (m_text[pos] != '"' && m_text[pos] != '\'')) break;
      const auto close = m_text.find(m_text[pos], pos + 1);
      if (close == std::string_view::npos) break;
      pos = close + 1;
      if (name == qualified && --occurrence == 0) {
        return line_at(static_cast<std::ptrdiff_t>(start));
      }
    }
    return line_of(n);
  }

  // XML forbids an attribute twice on one element, but pugixml keeps both; which one would
  // count is anybody's guess, so the file is refused.
  void check_attributes_once(xml n) const {
    std::map<std::string_view, int> count;
    for (pugi::xml_attribute a : n.attributes()) {
      const std::string_view name(a.name());
      if (++count[name] != 2) continue;
      const int first = attribute_line(n, name, 1);
      throw config_error(m_file + ":" + std::to_string(attribute_line(n, name, 2)) +
                         ": XML error: attribute '" + std::string(name) + "' is given twice on " +
                         describe(n) + " (first at line " + std::to_string(first) +
                         "); give each attribute once");
    }
    for (xml child : elements(n)) check_attributes_once(child);
  }

  // Text inside an element of the vocabulary that takes none is ignored: say so, since it is
  // usually a setting written in the wrong place (<domains>2</domains>).
  void check_text(xml n) {
    const element_rules& rules = rules_for(name_of(n));
    if (!is_known_element(name_of(n)) || rules.any_children || rules.any_attribute) return;
    for (xml child : n.children()) {
      if (child.type() == pugi::node_element) {
        check_text(child);
      } else if (!rules.text &&
                 (child.type() == pugi::node_pcdata || child.type() == pugi::node_cdata)) {
        std::string text = trim(child.value());
        if (text.empty()) continue;
        if (text.size() > 40) text = text.substr(0, 37) + "...";
        m_model.warnings.push_back(m_file + ":" + std::to_string(line_of(child)) + ": text '" +
                                   text + "' inside " + describe(n) + " is ignored; <" +
                                   name_of(n) + "> takes no text, its settings are attributes");
      }
    }
  }

  // Unknown attributes (a warning: Damaris ignores them, and its own example files carry some),
  // unknown children and missing required attributes (errors).
  void check_element(xml n) {
    const element_rules& rules = rules_for(name_of(n));
    std::set<std::string, std::less<>> seen;
    for (pugi::xml_attribute a : n.attributes()) {
      if (is_xml_plumbing(a.name())) continue;
      const std::string_view name = local_name(a.name());
      seen.emplace(name);
      if (rules.any_attribute) continue;
      if (std::find(rules.attributes.begin(), rules.attributes.end(), name) ==
          rules.attributes.end()) {
        warn_at(attribute_line(n, a.name(), 1),
                "unknown attribute '" + std::string(name) + "' on " + describe(n) +
                    " is ignored, as Damaris ignores it; " +
                    (rules.attributes.empty()
                         ? std::string("<" + name_of(n) + "> takes no attributes")
                         : detail::suggest(name, rules.attributes, "attributes")));
      }
    }
    for (const auto& required : rules.required) {
      if (!seen.count(required)) {
        std::string list;
        for (const auto& r : rules.required) list += (list.empty() ? "" : ", ") + r;
        fail(n, describe(n) + " is missing the required attribute '" + required + "'",
             "required attributes of <" + name_of(n) + ">: " + list);
      }
    }
    if (rules.any_children) return;
    for (xml child : elements(n)) {
      const std::string child_name = name_of(child);
      if (name_of(n) == "mesh" && is_polyhedral_part(child_name)) continue;
      if (std::find(rules.children.begin(), rules.children.end(), child_name) ==
          rules.children.end()) {
        fail(child, "unknown element <" + child_name + "> in <" + name_of(n) + ">",
             rules.children.empty() ? "<" + name_of(n) + "> has no child elements"
                                    : detail::suggest(child_name, rules.children, "elements"));
      }
    }
  }

  static bool has(xml n, std::string_view attribute_name) {
    for (pugi::xml_attribute a : n.attributes()) {
      if (!is_xml_plumbing(a.name()) && local_name(a.name()) == attribute_name) return true;
    }
    return false;
  }

  static std::string attribute(xml n, std::string_view attribute_name,
                               const std::string& fallback = {}) {
    for (pugi::xml_attribute a : n.attributes()) {
      if (!is_xml_plumbing(a.name()) && local_name(a.name()) == attribute_name) return a.value();
    }
    return fallback;
  }

  // A required name: present (checked by check_element) and not blank.
  std::string name_attribute(xml n, std::string_view attribute_name = "name") const {
    std::string value = trim(attribute(n, attribute_name));
    if (value.empty()) {
      fail(n, "empty '" + std::string(attribute_name) + "' on <" + name_of(n) + ">",
           "give a non-empty " + std::string(attribute_name));
    }
    return value;
  }

  template <typename T>
  T pick(xml n, std::string_view attribute_name, const std::vector<choice<T>>& choices,
         T fallback) const {
    if (!has(n, attribute_name)) return fallback;
    const std::string raw = attribute(n, attribute_name);
    const std::string value = lowercase(trim(raw));
    std::vector<std::string> listed;
    for (const auto& c : choices) {
      if (lowercase(c.name) == value) return c.value;
      if (c.listed) listed.push_back(c.name);
    }
    fail(n, "invalid value '" + raw + "' for attribute '" + std::string(attribute_name) +
                "' of " + describe(n),
         detail::suggest(value, listed, "values"));
  }

  bool flag(xml n, std::string_view attribute_name, bool fallback) const {
    return pick(n, attribute_name, bool_choices, fallback);
  }

  std::int64_t integer(xml n, std::string_view attribute_name, std::int64_t fallback,
                       std::int64_t minimum,
                       std::int64_t maximum = std::numeric_limits<std::int64_t>::max()) const {
    if (!has(n, attribute_name)) return fallback;
    const std::string raw = attribute(n, attribute_name);
    const std::string text = trim(raw);
    errno = 0;
    char* end = nullptr;
    const long long value = std::strtoll(text.c_str(), &end, 10);
    const bool ok = !text.empty() && *end == '\0' && errno == 0 && value >= minimum &&
                    value <= maximum;
    if (!ok) {
      std::string range = "an integer >= " + std::to_string(minimum);
      if (maximum != std::numeric_limits<std::int64_t>::max()) {
        range = "an integer from " + std::to_string(minimum) + " to " + std::to_string(maximum);
      }
      fail(n, "invalid value '" + raw + "' for attribute '" + std::string(attribute_name) +
                  "' of " + describe(n),
           "expected " + range);
    }
    return value;
  }

  std::optional<double> real(const std::string& raw) const {
    const std::string text = trim(raw);
    errno = 0;
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(value)) {
      return std::nullopt;
    }
    return value;
  }

  // Where an expression was written, for its messages:
  // `file:12: <layout name="grid"> dimensions, entry 2`.
  std::string place(xml n, std::string_view attribute_name, std::size_t entry = 0,
                    std::string_view part = {}) const {
    std::string text = where(n) + ": <" + name_of(n);
    if (has(n, "name")) text += " name=\"" + attribute(n, "name") + "\"";
    text += "> " + std::string(attribute_name);
    if (entry > 0) text += ", entry " + std::to_string(entry);
    if (!part.empty()) text += ", " + std::string(part);
    return text;
  }

  // Expressions that size data may only read integer parameters.
  expression integer_expression(xml n, const std::string& text, const name_map& names,
                                const std::string& context, const std::string& at,
                                const unusable_name_reason& why_unusable = {}) const {
    expression e = parse_expression(text, names, at, why_unusable);
    for (std::size_t index : e.parameters()) {
      const parameter& p = m_model.parameters[index];
      if (!is_integer(p.type)) {
        fail(n, context + " uses parameter '" + p.name + "' of type " +
                    element_type_name(p.type),
             "integer expressions may only use parameters of an integer type (short, int, " +
                 std::string("long, char)"));
      }
    }
    return e;
  }

  std::vector<std::int64_t> parameter_values() const {
    std::vector<std::int64_t> values;
    for (const auto& p : m_model.parameters) values.push_back(p.int_value);
    return values;
  }

  void read_architecture(xml arch) {
    check_element(arch);
    architecture& a = m_model.arch;
    std::set<std::string> seen;
    for (xml n : elements(arch)) {
      check_element(n);
      const std::string name = name_of(n);
      if (!seen.insert(name).second) {
        fail(n, "second <" + name + "> in <architecture>",
             "give each architecture element at most once");
      }
      if (name == "domains") {
        a.domains = static_cast<int>(integer(n, "count", 1, 1, std::numeric_limits<int>::max()));
      } else if (name == "dedicated") {
        a.dedicated_cores =
            static_cast<int>(integer(n, "cores", 0, 0, std::numeric_limits<int>::max()));
        a.dedicated_nodes =
            static_cast<int>(integer(n, "nodes", 0, 0, std::numeric_limits<int>::max()));
        a.io_threads = static_cast<int>(integer(n, "threads", 0, 0, 1));
        if (a.dedicated_cores > 0 && a.dedicated_nodes > 0) {
          fail(n, "both dedicated cores and dedicated nodes are requested",
               "set either cores or nodes (the other to 0)");
        }
        if (a.io_threads > 0 && (a.dedicated_cores > 0 || a.dedicated_nodes > 0)) {
          fail(n, "threads=\"" + std::to_string(a.io_threads) +
                      "\" is requested together with dedicated cores or nodes",
               "a background I/O thread replaces dedicated resources: use threads=\"1\" with "
               "cores=\"0\" nodes=\"0\", or threads=\"0\"");
        }
      } else if (name == "buffer") {
        a.buffer_name = name_attribute(n);
        m_buffer_size = {n, attribute(n, "size")};
        if (has(n, "server-memory")) m_server_memory = {n, attribute(n, "server-memory")};
        if (has(n, "spill-directory")) a.spill_directory = attribute(n, "spill-directory");
        pick(n, "type", shm_type_choices, std::string("posix"));
        integer(n, "blocks", 0, 0);
        flag(n, "enabled", true);
        a.policy = pick(n, "policy", policy_choices, full_buffer_policy::wait);
        if (has(n, "timeout")) {
          const auto seconds = real(attribute(n, "timeout"));
          if (!seconds || *seconds < 0) {
            fail(n, "invalid value '" + attribute(n, "timeout") +
                        "' for attribute 'timeout' of <buffer>",
                 "expected a number of seconds >= 0 (0 waits forever)");
          }
          a.wait_timeout_seconds = *seconds;
        }
      } else if (name == "queue") {
        a.queue_name = name_attribute(n);
        m_queue_size = {n, attribute(n, "size")};
      }
    }
  }

  // "64MB", "2 GiB", "512k": a size written with a unit, which expressions do not know.
  // Returns the expression meant ("64*1024*1024"), or "" when text has no such form.
  static std::string size_with_unit(const std::string& text) {
    std::size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
      ++digits;
    }
    if (digits == 0) return {};
    std::string unit = lowercase(trim(text.substr(digits)));
    if (unit.size() > 1 && unit.back() == 'b') unit.pop_back();
    if (unit.size() > 1 && unit.back() == 'i') unit.pop_back();
    const std::string units = "kmgt";
    if (unit.size() != 1 || units.find(unit[0]) == std::string::npos) return {};
    std::string meant = text.substr(0, digits);
    for (std::size_t i = 0; i <= units.find(unit[0]); ++i) meant += "*1024";
    return meant;
  }

  // Sizes may be expressions ("64*1024*1024") over parameters, so they wait for <data>.
  void evaluate_architecture_sizes() {
    const auto size_of = [this](const std::pair<xml, std::string>& source,
                                const char* attribute_name, const char* what, std::int64_t minimum,
                                bool bytes) {
      const std::string at = place(source.first, attribute_name);
      const std::string text = trim(source.second);
      if (const std::string meant = size_with_unit(text); bytes && !meant.empty()) {
        throw config_error(at + ": the " + std::string(what) + " '" + text +
                           "' has a unit, which sizes do not take; write it in bytes as an " +
                           "integer expression, e.g. " + meant);
      }
      const expression e =
          integer_expression(source.first, source.second, m_parameter_names, what, at);
      const std::int64_t value = e.evaluate(parameter_values());
      if (value < minimum) {
        fail(source.first,
             std::string(what) + " '" + source.second + "' is " + std::to_string(value),
             "the " + std::string(what) + " must be at least " + std::to_string(minimum));
      }
      return static_cast<std::uint64_t>(value);
    };
    if (m_buffer_size.first) {
      m_model.arch.buffer_size = size_of(m_buffer_size, "size", "buffer size", 1, true);
    }
    if (m_queue_size.first) {
      m_model.arch.queue_size = size_of(m_queue_size, "size", "queue size", 1, false);
    }
    if (m_server_memory.first) {
      m_model.arch.server_memory =
          size_of(m_server_memory, "server-memory", "server-memory size", 0, true);
    }
  }

  void read_parameters(xml data) {
    check_element(data);
    for (xml n : elements(data)) {
      if (name_of(n) != "parameter") continue;
      check_element(n);
      parameter p;
      p.name = name_attribute(n);
      p.line = line_of(n);
      p.type = pick(n, "type", type_choices, element_type::int32);
      if (m_parameter_names.count(p.name)) {
        fail(n, "parameter '" + p.name + "' is already defined at line " +
                    std::to_string(m_model.parameters[m_parameter_names.find(p.name)->second].line),
             "give each parameter a unique name");
      }
      const std::string value = attribute(n, "value");
      if (is_integer(p.type)) {
        // A value may be computed from the parameters declared before it.
        const auto why_unusable = [this, &p](std::string_view name) -> std::string {
          const auto declared = m_declared_parameters.find(name);
          if (declared == m_declared_parameters.end()) return {};
          const std::string hint = "; a value may only use parameters declared before it";
          if (name == p.name) return "parameter '" + p.name + "' refers to itself" + hint;
          return "parameter '" + std::string(name) + "' is declared later, at line " +
                 std::to_string(declared->second) + hint;
        };
        const expression e = integer_expression(n, value, m_parameter_names,
                                                "the value of parameter '" + p.name + "'",
                                                place(n, "value"), why_unusable);
        p.int_value = e.evaluate(parameter_values());
        const auto [low, high] = integer_range(p.type);
        if (p.int_value < low || p.int_value > high) {
          fail(n, "value " + std::to_string(p.int_value) + " of parameter '" + p.name +
                      "' does not fit its type " + element_type_name(p.type),
               "expected a value from " + std::to_string(low) + " to " + std::to_string(high));
        }
      } else {
        const auto parsed = real(value);
        if (!parsed) {
          fail(n, "invalid value '" + value + "' for parameter '" + p.name + "' of type " +
                      element_type_name(p.type),
               "expected a floating-point number such as 0.5 or 1e-3");
        }
        p.real_value = *parsed;
      }
      m_parameter_names.emplace(p.name, m_model.parameters.size());
      m_model.parameters.push_back(std::move(p));
    }
  }

  static std::pair<std::int64_t, std::int64_t> integer_range(element_type type) {
    switch (type) {
      case element_type::int8: return {INT8_MIN, INT8_MAX};
      case element_type::int16: return {INT16_MIN, INT16_MAX};
      case element_type::int32: return {INT32_MIN, INT32_MAX};
      default: return {INT64_MIN, INT64_MAX};
    }
  }

  // Layouts declared in a group are named by their full path ("coordinates/rmeshX"), as in
  // Damaris; group names are checked when variables are read.
  void read_layouts(xml parent, const std::string& path) {
    for (xml n : elements(parent)) {
      const std::string name = name_of(n);
      if (name == "group") {
        std::string prefix = path;
        for (const std::string& part : split(trim(attribute(n, "name")), '/')) prefix += part + "/";
        read_layouts(n, prefix);
      } else if (name == "layout") {
        read_layout(n, path);
      }
    }
  }

  void read_layout(xml n, const std::string& path) {
    check_element(n);
    layout l;
    const std::string own_name = name_attribute(n);
    if (own_name.find('/') != std::string::npos) {
      fail(n, "layout name '" + own_name + "' contains '/'",
           "declare the layout inside a <group> to give it a path");
    }
    l.name = path + own_name;
    l.line = line_of(n);
    if (const auto previous = m_model.find_layout(l.name); previous != model::npos) {
      fail(n, "layout '" + l.name + "' is already defined at line " +
                  std::to_string(m_model.layouts[previous].line),
           "give each layout a unique name");
    }
    l.type = pick(n, "type", type_choices, element_type::int32);
    l.type_name = lowercase(trim(attribute(n, "type", "int")));
    l.lang = pick(n, "language", language_choices, language::unknown);
    const std::string context = "layout '" + l.name + "'";
    const auto dimensions = split(attribute(n, "dimensions"), ',');
    if (dimensions.size() > max_dimensions) {
      fail(n, context + " has " + std::to_string(dimensions.size()) + " dimensions",
           "a layout has at most " + std::to_string(max_dimensions) + " dimensions");
    }
    for (std::size_t d = 0; d < dimensions.size(); ++d) {
      l.dimensions.push_back(integer_expression(n, dimensions[d], m_parameter_names, context,
                                                place(n, "dimensions", d + 1)));
    }
    const std::string global = trim(attribute(n, "global"));
    if (!is_none(global)) {
      const auto extents = split(global, ',');
      if (extents.size() != l.dimensions.size()) {
        fail(n,
             context + " has " + std::to_string(l.dimensions.size()) + " dimensions but global='" +
                 global + "' has " + std::to_string(extents.size()),
             "give one global extent per dimension");
      }
      for (std::size_t d = 0; d < extents.size(); ++d) {
        l.global_dimensions.push_back(integer_expression(n, extents[d], m_parameter_names, context,
                                                         place(n, "global", d + 1)));
      }
    }
    const std::string ghosts = trim(attribute(n, "ghosts"));
    if (!is_none(ghosts)) {
      const auto pairs = split(ghosts, ',');
      for (std::size_t d = 0; d < pairs.size(); ++d) {
        const auto bounds = split(pairs[d], ':');
        if (bounds.size() != 2) {
          fail(n, context + " has a malformed ghost zone '" + pairs[d] + "'",
               "write one 'before:after' pair per dimension, e.g. ghosts=\"1:1,0:0\"");
        }
        l.ghosts.emplace_back(integer_expression(n, bounds[0], m_parameter_names, context,
                                                 place(n, "ghosts", d + 1, "before")),
                              integer_expression(n, bounds[1], m_parameter_names, context,
                                                 place(n, "ghosts", d + 1, "after")));
      }
      if (l.ghosts.size() != l.dimensions.size()) {
        fail(n, context + " has " + std::to_string(l.dimensions.size()) +
                    " dimensions but ghosts='" + ghosts + "' has " +
                    std::to_string(l.ghosts.size()) + " pairs",
             "give one 'before:after' pair per dimension");
      }
    }
    const bool fortran = l.lang == language::fortran ||
                         (l.lang == language::unknown && m_model.lang == language::fortran);
    l.fortran_order = fortran;
    if (fortran) {
      std::reverse(l.dimensions.begin(), l.dimensions.end());
      std::reverse(l.global_dimensions.begin(), l.global_dimensions.end());
      std::reverse(l.ghosts.begin(), l.ghosts.end());
    }
    m_layout_nodes.push_back(n);
    m_model.layouts.push_back(std::move(l));
  }

  // Every layout must describe real data with the parameters' initial values: extents of at
  // least 1, ghost zones that leave an interior, global extents that hold the interior.
  void check_layout_values() {
    const auto values = parameter_values();
    for (std::size_t i = 0; i < m_model.layouts.size(); ++i) {
      const layout& l = m_model.layouts[i];
      const xml n = m_layout_nodes[i];
      const std::size_t count = l.dimensions.size();
      // Messages count entries as written, whatever order the model keeps them in.
      const auto entry = [&](std::size_t d) {
        return "entry " + std::to_string(l.fortran_order ? count - d : d + 1);
      };
      const std::string context = "layout '" + l.name + "'";
      std::vector<std::int64_t> extents;
      for (std::size_t d = 0; d < count; ++d) {
        const std::int64_t extent = l.dimensions[d].evaluate(values);
        if (extent < 1) {
          fail(n,
               context + " has dimension '" + l.dimensions[d].text() +
                   "' = " + std::to_string(extent) + " with the initial parameter values",
               "every dimension must be at least 1");
        }
        extents.push_back(extent);
      }
      std::vector<std::int64_t> interior = extents;
      for (std::size_t d = 0; d < l.ghosts.size(); ++d) {
        const auto& [before, after] = l.ghosts[d];
        std::int64_t widths[2] = {0, 0};
        for (int side = 0; side < 2; ++side) {
          const expression& e = side == 0 ? before : after;
          widths[side] = e.evaluate(values);
          if (widths[side] < 0) {
            fail(n,
                 context + " has ghost width '" + e.text() + "' = " + std::to_string(widths[side]),
                 "ghost widths must be at least 0");
          }
        }
        interior[d] = extents[d] - widths[0] - widths[1];
        if (interior[d] < 1) {
          fail(n,
               context + " has ghosts " + std::to_string(widths[0]) + ":" +
                   std::to_string(widths[1]) + " (" + entry(d) + " of ghosts: '" + before.text() +
                   ":" + after.text() + "') on dimension '" + l.dimensions[d].text() +
                   "' = " + std::to_string(extents[d]) +
                   " with the initial parameter values, which leaves no interior",
               "the two ghost widths of a dimension must add up to less than the dimension");
        }
      }
      for (std::size_t d = 0; d < l.global_dimensions.size(); ++d) {
        const expression& g = l.global_dimensions[d];
        const std::int64_t extent = g.evaluate(values);
        if (extent < 1) {
          fail(n,
               context + " has global extent '" + g.text() + "' = " + std::to_string(extent) +
                   " with the initial parameter values",
               "every global extent must be at least 1");
        }
        if (extent < interior[d]) {
          const std::string local =
              l.ghosts.empty()
                  ? "dimension '" + l.dimensions[d].text() + "' = " + std::to_string(extents[d])
                  : "interior " + std::to_string(interior[d]) + " (dimension '" +
                        l.dimensions[d].text() + "' = " + std::to_string(extents[d]) +
                        " minus ghosts)";
          fail(n,
               context + " has global extent '" + g.text() + "' = " + std::to_string(extent) +
                   " (" + entry(d) + " of global) smaller than its local " + local +
                   " with the initial parameter values",
               "a global extent must hold at least one block: give global >= dimensions "
               "minus ghosts in every dimension");
        }
      }
    }
  }

  // Variables, meshes and curves, walking groups; layouts were read before.
  void read_data_objects(xml parent, const std::string& path, bool enabled,
                         const std::string& group_store) {
    for (xml n : elements(parent)) {
      const std::string name = name_of(n);
      if (name == "group") {
        check_element(n);
        // name="a/b" is the same as <group name="a"><group name="b">, as in Damaris.
        const std::string group_name = name_attribute(n);
        std::string prefix = path;
        for (const std::string& part : split(group_name, '/')) {
          check_path_component(n, "group", part, group_name);
          prefix += part;
          m_group_lines.emplace(prefix, line_of(n));
          prefix += '/';
        }
        const std::string store_name = trim(attribute(n, "store", group_store));
        read_data_objects(n, prefix, enabled && flag(n, "enabled", true),
                          is_none(store_name) ? std::string() : store_name);
      } else if (name == "variable") {
        read_variable(n, path, enabled, group_store);
      } else if (name == "mesh") {
        read_mesh(n, path);
      } else if (name == "curve") {
        check_element(n);
      }
    }
  }

  // Group and variable names become HDF5 path components: one name each, no separator (a
  // group name may hold several, split before this check; whole is the name as written).
  void check_path_component(xml n, const char* what, const std::string& name,
                            const std::string& whole = {}) const {
    const std::string written = whole.empty() ? name : whole;
    if (name.empty()) {
      fail(n, std::string(what) + " name '" + written + "' has an empty part",
           "separate group names with a single '/', without one at either end");
    }
    if (name.find('/') != std::string::npos) {
      fail(n, std::string(what) + " name '" + name + "' contains '/'",
           "put the variable in a <group> (whose name may be a path such as 'a/b'): a full "
           "name joins the group names with '/'");
    }
    if (name == "." || name == "..") {
      fail(n, std::string(what) + " name '" + written + "' uses the reserved name '" + name + "'",
           "'.' and '..' name the current and parent group in a path; choose another name");
    }
  }

  // HDF5 cannot hold a dataset and a group of the same name: a variable whose full name is
  // also the path of a group holding variables ("coord" beside "coord/x") cannot be stored.
  void check_variable_group_clashes() const {
    for (std::size_t i = 0; i < m_model.variables.size(); ++i) {
      const variable& v = m_model.variables[i];
      const auto group = m_group_lines.find(v.name);
      if (group == m_group_lines.end()) continue;
      const std::string prefix = v.name + "/";
      for (const variable& inner : m_model.variables) {
        if (inner.name.compare(0, prefix.size(), prefix) != 0) continue;
        throw config_error(m_file + ":" + std::to_string(std::max(v.line, group->second)) +
                           ": variable '" + v.name + "' (line " + std::to_string(v.line) +
                           ") has the full name of group '" + v.name + "' (line " +
                           std::to_string(group->second) + ") that holds variable '" + inner.name +
                           "' (line " + std::to_string(inner.line) +
                           "); an HDF5 file cannot hold a dataset and a group of one name: " +
                           "rename the variable or the group");
      }
    }
  }

  void read_variable(xml n, const std::string& path, bool enabled,
                     const std::string& group_store) {
    check_element(n);
    variable v;
    const std::string own_name = name_attribute(n);
    check_path_component(n, "variable", own_name);
    v.name = path + own_name;
    v.line = line_of(n);
    if (const auto previous = m_model.find_variable(v.name); previous != model::npos) {
      fail(n, "variable '" + v.name + "' is already defined at line " +
                  std::to_string(m_model.variables[previous].line),
           "give each variable a unique name within its group");
    }
    const std::string layout_name = trim(attribute(n, "layout"));
    v.layout_index = resolve_layout(path, layout_name);
    if (v.layout_index == model::npos) v.layout_index = basic_type_layout(n, layout_name);
    if (v.layout_index == model::npos) {
      std::vector<std::string> known;
      for (const auto& l : m_model.layouts) known.push_back(l.name);
      for (const auto& c : type_choices) {
        if (std::find(known.begin(), known.end(), c.name) == known.end()) known.push_back(c.name);
      }
      fail(n, "variable '" + v.name + "' refers to undefined layout '" + layout_name + "'",
           detail::suggest(layout_name, known, "layouts (declared, or a basic type for a scalar)"));
    }
    v.kind = pick(n, "type", variable_kind_choices, std::string("scalar"));
    v.center = pick(n, "centering", centering_choices, centering::zonal);
    v.enabled = enabled && flag(n, "enabled", true);
    v.time_varying = flag(n, "time-varying", true);
    v.vector_length =
        static_cast<int>(integer(n, "vectorlength", 1, 1, std::numeric_limits<int>::max()));
    flag(n, "visualizable", true);
    v.unit = attribute(n, "unit");
    const std::string mesh_name = trim(attribute(n, "mesh"));
    v.mesh = is_none(mesh_name) ? std::string() : mesh_name;
    const std::string script_name = trim(attribute(n, "script"));
    v.script = is_none(script_name) ? std::string() : script_name;
    if (!v.script.empty()) note_python(n, "variable");
    const std::string store_name = trim(attribute(n, "store", group_store));
    m_variable_stores.push_back(is_none(store_name) ? std::string() : store_name);
    m_variable_nodes.push_back(n);
    m_model.variables.push_back(std::move(v));
  }

  // A variable's layout, looked up as Damaris does: a name with '/' is a full name; otherwise
  // the variable's group, then each enclosing group, then the top level. Files written for
  // earlier Sidecore versions name a layout declared in a group by its own name from anywhere:
  // that still works when no other lookup succeeds. npos when nothing matches.
  std::size_t resolve_layout(std::string group, const std::string& name) const {
    if (name.find('/') != std::string::npos) return m_model.find_layout(name);
    for (;;) {
      if (const auto found = m_model.find_layout(group + name); found != model::npos) return found;
      if (group.empty()) break;
      group.pop_back();
      const auto slash = group.rfind('/');
      group = slash == std::string::npos ? std::string() : group.substr(0, slash + 1);
    }
    for (std::size_t i = 0; i < m_model.layouts.size(); ++i) {
      const std::string& full = m_model.layouts[i].name;
      const auto slash = full.rfind('/');
      if (slash != std::string::npos && full.compare(slash + 1, std::string::npos, name) == 0)
        return i;
    }
    return model::npos;
  }

  // Damaris predefines a scalar layout for each basic type, named after it: a variable may say
  // layout="int" without declaring it. Made on first use, unless the file declares a layout of
  // that name itself. Returns its index, or npos when name is no basic type.
  std::size_t basic_type_layout(xml variable_node, const std::string& name) {
    const auto found = std::find_if(type_choices.begin(), type_choices.end(),
                                    [&](const auto& c) { return name == c.name; });
    if (found == type_choices.end()) return model::npos;
    layout l;
    l.name = name;
    l.type = found->value;
    l.type_name = name;
    l.line = line_of(variable_node);
    l.dimensions.push_back(parse_expression("1", {}, place(variable_node, "layout")));
    m_layout_nodes.push_back(variable_node);
    m_model.layouts.push_back(std::move(l));
    return m_model.layouts.size() - 1;
  }

  void read_mesh(xml n, const std::string& path) {
    check_element(n);
    mesh m;
    m.name = name_attribute(n);
    m.line = line_of(n);
    for (const auto& other : m_model.meshes) {
      if (other.name == m.name) {
        fail(n, "mesh '" + m.name + "' is already defined at line " + std::to_string(other.line),
             "give each mesh a unique name");
      }
    }
    m.type = pick(n, "type", mesh_type_choices, std::string("unknown"));
    m.topology = static_cast<int>(integer(n, "topology", 2, 1, 3));
    flag(n, "time-varying", true);
    for (xml child : elements(n)) {
      check_element(child);
      if (name_of(child) != "coord") {
        // name="#": the mesh has no such piece (production configurations list every piece
        // their mesh model has and mark the unused ones so).
        if (is_none(name_attribute(child))) continue;
        mesh_part part;
        part.role = name_of(child);
        part.variable = name_attribute(child);
        part.offset = integer(child, "offset", 0, std::numeric_limits<std::int64_t>::min());
        part.line = line_of(child);
        m_part_groups.push_back(path);
        m.parts.push_back(std::move(part));
        continue;
      }
      coordinate c;
      c.name = name_attribute(child);
      const std::string unit = attribute(child, "unit");
      const std::string label = attribute(child, "label");
      c.unit = is_none(unit) ? std::string() : unit;
      c.label = is_none(label) ? std::string() : label;
      m_coordinate_nodes.emplace_back(child, c.name);
      m.coordinates.push_back(std::move(c));
    }
    m_model.meshes.push_back(std::move(m));
  }

  void read_storage(xml storage) {
    check_element(storage);
    for (xml n : elements(storage)) {
      check_element(n);
      store s;
      s.name = name_attribute(n);
      s.line = line_of(n);
      for (const auto& other : m_model.stores) {
        if (other.name == s.name) {
          fail(n, "store '" + s.name + "' is already defined at line " +
                      std::to_string(other.line),
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
  // libsidecore_<type>.so by the dynamic loader. Only the loader knows whether the library is a
  // valid plugin; that is checked when the store is opened.
  void read_store_type(xml n, store& s) const {
    const std::string library = trim(attribute(n, "library"));
    const std::string type = trim(attribute(n, "type"));
    for (const auto& c : store_type_choices) {
      if (lowercase(c.name) != lowercase(type)) continue;
      if (!library.empty()) {
        fail(n,
             describe(n) + " has the built-in type '" + c.name + "' and library='" + library + "'",
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
      s.library = library;
      return;
    }
    if (type.find('/') != std::string::npos) {
      fail(n, "the type '" + type + "' of " + describe(n) + " contains '/'",
           "a plugin's type names its library libsidecore_<type>.so; give a path with "
           "library=\"...\" instead");
    }
    s.library = "libsidecore_" + type + ".so";
    std::string why;
    if (!library_loads(s.library, why)) {
      std::vector<std::string> listed;
      for (const auto& c : store_type_choices) listed.push_back(c.name);
      fail(n, "invalid value '" + attribute(n, "type") + "' for attribute 'type' of " + describe(n),
           detail::suggest(lowercase(type), listed, "values") +
               "; a plugin store is found as libsidecore_<type>.so on the library search path, or "
               "named with library=\"path/to/library.so\" (" +
               why + ")");
    }
  }

  // Whether the dynamic loader finds and loads `library` (opened and closed at once); why not.
  static bool library_loads(const std::string& library, std::string& why) {
    void* handle = ::dlopen(library.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = ::dlerror();
      why = error != nullptr ? error : library + ": not found";
      return false;
    }
    ::dlclose(handle);
    return true;
  }

  void resolve_variable_stores() {
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

  void check_unique_action(xml n, const std::string& name) {
    if (name.size() > max_signal_name_length) {
      fail(n, describe(n) + " has a name of " + std::to_string(name.size()) + " characters",
           "event and script names are at most " + std::to_string(max_signal_name_length) +
               " characters, the most a signal carries");
    }
    const auto found = m_action_lines.find(name);
    if (found != m_action_lines.end()) {
      fail(n, "action '" + name + "' is already defined at line " +
                  std::to_string(found->second),
           "events and scripts share one namespace: give each a unique name");
    }
    m_action_lines.emplace(name, line_of(n));
  }

  void read_actions(xml actions) {
    check_element(actions);
    for (xml n : elements(actions)) {
      check_element(n);
      const std::string kind = name_of(n);
      if (kind == "event") {
        event e;
        e.name = name_attribute(n);
        e.line = line_of(n);
        check_unique_action(n, e.name);
        e.action = name_attribute(n, "action");
        e.library = trim(attribute(n, "library"));
        e.scope = pick(n, "scope", scope_choices, scope::core);
        e.execution = pick(n, "execution", execution_choices, execution::remote);
        flag(n, "external", false);
        m_model.events.push_back(std::move(e));
      } else if (kind == "script" || kind == "pyscript") {
        script s;
        s.name = name_attribute(n);
        s.line = line_of(n);
        check_unique_action(n, s.name);
        s.file = name_attribute(n, "file");
        s.lang = pick(n, "language", script_language_choices, language::python);
        s.scope = pick(n, "scope", scope_choices, scope::core);
        s.execution = pick(n, "execution", execution_choices, execution::remote);
        s.frequency =
            static_cast<int>(integer(n, "frequency", 1, 1, std::numeric_limits<int>::max()));
        flag(n, "external", false);
        note_python(n, kind);
        m_model.scripts.push_back(std::move(s));
      }
    }
  }

  // Python scripts are accepted so that Damaris files load, but nothing runs them: one
  // warning per kind of element, at the first of them, with the count.
  void note_python(xml n, const std::string& kind) {
    auto& [first, count] = m_python_uses[kind];
    if (count++ == 0) first = n;
  }

  void warn_python_not_run() {
    static const char* const why =
        " accepted but not run: Sidecore does not run Python scripts; use an <event> action "
        "from a shared library or the executable";
    std::vector<std::pair<int, std::string>> kinds;  // by line of their first element
    for (const auto& [kind, use] : m_python_uses) kinds.emplace_back(line_of(use.first), kind);
    std::sort(kinds.begin(), kinds.end());
    for (const auto& [line, kind] : kinds) {
      const auto& [n, count] = m_python_uses.at(kind);
      std::string what;
      if (kind == "variable") {
        what = "script=\"" + attribute(n, "script") + "\" on " + describe(n);
        if (count > 1) what += " (and on " + std::to_string(count - 1) + " other variables)";
        what += " is";
      } else {
        what = describe(n);
        if (count > 1) {
          what += " (and " + std::to_string(count - 1) + " other <" + kind + "> elements)";
        }
        what += std::string(" is");
      }
      warn(n, what + why);
    }
  }

  void read_log(xml n) {
    check_element(n);
    log_settings& s = m_model.log;
    s.file_name = trim(attribute(n, "FileName"));
    integer(n, "RotationSize", 0, 0);
    s.format = attribute(n, "LogFormat");
    s.level = pick(n, "LogLevel", log_level_choices, log_level::warning);
    s.flush = flag(n, "Flush", false);
  }

  // References that change nothing stored: Damaris's own examples leave them dangling.
  void check_references() {
    std::set<std::string, std::less<>> meshes;
    for (const auto& m : m_model.meshes) meshes.insert(m.name);
    std::set<std::string, std::less<>> scripts;
    for (const auto& s : m_model.scripts) scripts.insert(s.name);
    for (std::size_t i = 0; i < m_model.variables.size(); ++i) {
      const variable& v = m_model.variables[i];
      if (!v.mesh.empty() && !meshes.count(v.mesh)) {
        warn(m_variable_nodes[i], "variable '" + v.name + "' names undeclared mesh '" + v.mesh +
                                      "'; it is ignored (declare it with <mesh> to use it)");
      }
      if (!v.script.empty() && !scripts.count(v.script)) {
        warn(m_variable_nodes[i], "variable '" + v.name + "' names undeclared script '" +
                                      v.script + "'; it is ignored (declare it with <script>)");
      }
    }
    // Pieces of unstructured meshes name variables relative to the mesh's group, then each
    // group outwards, as Damaris looks them up; a name with '/' is a full name.
    std::size_t part_index = 0;
    for (mesh& m : m_model.meshes) {
      for (mesh_part& part : m.parts) {
        std::string group = m_part_groups[part_index++];
        std::string found;
        if (part.variable.find('/') == std::string::npos) {
          for (;;) {
            if (m_model.find_variable(group + part.variable) != model::npos) {
              found = group + part.variable;
              break;
            }
            if (group.empty()) break;
            group.pop_back();  // the trailing '/'
            const auto slash = group.rfind('/');
            group = slash == std::string::npos ? std::string() : group.substr(0, slash + 1);
          }
        } else if (m_model.find_variable(part.variable) != model::npos) {
          found = part.variable;
        }
        if (found.empty()) {
          m_model.warnings.push_back(m_file + ":" + std::to_string(part.line) + ": <" + part.role +
                                     "> of mesh '" + m.name + "' names '" + part.variable +
                                     "', which is not a declared variable; it is ignored");
        } else {
          part.variable = found;
        }
      }
      m.parts.erase(std::remove_if(m.parts.begin(), m.parts.end(),
                                   [&](const mesh_part& p) {
                                     return m_model.find_variable(p.variable) == model::npos;
                                   }),
                    m.parts.end());
    }
    for (const auto& [n, name] : m_coordinate_nodes) {
      if (m_model.find_variable(name) == model::npos) {
        warn(n, "mesh coordinate '" + name + "' is not a declared variable; coordinates " +
                    "name variables by their full name (group/name)");
      }
    }
  }

  std::string_view m_text;
  const std::string& m_file;
  parse_options m_options;
  std::vector<std::size_t> m_newlines;
  pugi::xml_document m_document;
  model m_model;
  name_map m_parameter_names;
  // Every top-level parameter of the file with the line of its first declaration.
  std::map<std::string, int, std::less<>> m_declared_parameters;
  std::vector<xml> m_layout_nodes;
  std::vector<xml> m_variable_nodes;
  // Full path of every group ("a/b") with the line of its first element.
  std::map<std::string, int, std::less<>> m_group_lines;
  std::vector<std::string> m_variable_stores;
  std::vector<std::pair<xml, std::string>> m_coordinate_nodes;
  std::vector<std::string> m_part_groups;  // group path of each mesh part, in reading order
  std::map<std::string, int, std::less<>> m_action_lines;
  // "script", "pyscript", "variable" (script=): the first element and how many there are.
  std::map<std::string, std::pair<xml, int>> m_python_uses;
  std::pair<xml, std::string> m_buffer_size;
  std::pair<xml, std::string> m_server_memory;
  std::pair<xml, std::string> m_queue_size;
};

}  // namespace

model parse_model(std::string_view xml_text, const std::string& file_name,
                  const parse_options& options) {
  return builder(xml_text, file_name, options).build();
}

}  // namespace sidecore::config
