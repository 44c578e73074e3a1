// parse_model and the builder's core: the document, positions, messages, generic checks.
// Strict where a mistake would change stored data, tolerant (warnings) where Damaris's own
// examples are loose. The parser (builder.hpp, parse*.cpp) is the only user of pugixml.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include "common/error.hpp"
#include "config/builder.hpp"

namespace sidecore::config {
namespace detail {

builder::builder(std::string_view text, const std::string& file, const parse_options& options)
    : m_text(text), m_file(file), m_options(options) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') m_newlines.push_back(i);
  }
}

model builder::build() {
  m_model.file = m_file;
  const pugi::xml_parse_result result = m_document.load_buffer(
      m_text.data(), m_text.size(), pugi::parse_default, pugi::encoding_utf8);
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
  if (roots.size() > 1)
    fail(roots[1], "second root element <" + name_of(roots[1]) + ">",
         "a configuration has exactly one <simulation> element");
  const xml root = roots.front();
  if (name_of(root) != "simulation") {
    fail(root, "root element is <" + name_of(root) + ">", "expected <simulation>");
  }
  check_depth(root);
  check_attributes_once(root);
  check_text(root);
  check_element(root);
  m_model.simulation_name = simulation_name(root);
  m_model.lang = pick(root, "language", language_choices, language::unknown);

  const auto& section_names = rules_for("simulation").children;
  std::vector<std::vector<xml>> sections(section_names.size());
  for (xml child : elements(root)) {
    const auto index = std::find(section_names.begin(), section_names.end(), name_of(child)) -
                       section_names.begin();
    sections[index].push_back(child);
  }
  for (const char* single : {"architecture", "log"}) {
    const auto index =
        std::find(section_names.begin(), section_names.end(), single) - section_names.begin();
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
  for (xml n : section("architecture")) read_schedule(n, m_text, m_file, m_model.arch);
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
  for (xml n : section("plugins")) read_damaris_plugins(n);
  for (xml n : section("python")) {
    warn(n,
         "<python> is not supported and is ignored; for in-situ analysis in Python use "
         "<scripts><pyscript> (docs/python_scripts.md)");
  }
  for (xml n : section("visit")) {
    check_element(n);
    warn(n,
         "<visit> is not supported (VisIt's libsim is not available) and is ignored; for in "
         "situ visualization use <paraview> with ParaView Catalyst scripts (docs/paraview.md)");
  }
  if (section("paraview").size() > 1)
    fail(section("paraview")[1], "second <paraview> element",
         "give at most one <paraview>, with one <script> per Catalyst pipeline");
  for (xml n : section("paraview")) read_paraview(n);
  check_references();
  resolve_selections();
  resolve_scripts();
  resolve_paraview();
  check_layout_values();
  evaluate_architecture_sizes();
  if (m_options.strict || flag(root, "strict", false)) refuse_warnings(root);
  m_model.index_names();
  return std::move(m_model);
}

int builder::line_at(std::ptrdiff_t offset) const {
  if (offset < 0) return 0;
  return static_cast<int>(std::lower_bound(m_newlines.begin(), m_newlines.end(),
                                           static_cast<std::size_t>(offset)) -
                          m_newlines.begin()) +
         1;
}

int builder::line_of(xml n) const { return line_at(n.offset_debug()); }

std::string builder::where(xml n) const { return m_file + ":" + std::to_string(line_of(n)); }

// Strict checking: every warning of the file is an error, reported with the first of them.
void builder::refuse_warnings(xml root) const {
  if (m_model.warnings.empty()) return;
  std::string message =
      m_model.warnings.front() + " [an error: strict checking is on (" +
      (m_options.strict ? "SIDECORE_STRICT" : "strict=\"true\" on " + describe(root)) +
      "), which makes every configuration warning an error]";
  const std::size_t shown = std::min<std::size_t>(m_model.warnings.size(), 11);
  for (std::size_t i = 1; i < shown; ++i) message += "\n  also: " + m_model.warnings[i];
  if (m_model.warnings.size() > shown)
    message += "\n  and " + std::to_string(m_model.warnings.size() - shown) + " more";
  throw config_error(message);
}

[[noreturn]] void builder::fail(xml n, const std::string& what, const std::string& hint) const {
  throw config_error(where(n) + ": " + what + "; " + hint);
}

void builder::warn(xml n, const std::string& message) {
  m_model.warnings.push_back(where(n) + ": " + message);
}

void builder::warn_at(int line, const std::string& message) {
  m_model.warnings.push_back(m_file + ":" + std::to_string(line) + ": " + message);
}

std::string builder::name_of(xml n) { return std::string(local_name(n.name())); }

std::vector<xml> builder::elements(xml parent) {
  std::vector<xml> out;
  for (xml n : parent.children()) {
    if (n.type() == pugi::node_element) out.push_back(n);
  }
  return out;
}

// Description of an element for messages: <variable 'cube'>.
std::string builder::describe(xml n) {
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
int builder::attribute_line(xml n, std::string_view qualified, int occurrence) const {
  const std::ptrdiff_t offset = n.offset_debug();
  const std::string_view tag_name(n.name());
  if (offset < 0 || m_text.substr(static_cast<std::size_t>(offset), tag_name.size()) != tag_name) {
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
void builder::check_attributes_once(xml n) const {
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
void builder::check_text(xml n) {
  const element_rules& rules = rules_for(name_of(n), name_of(n.parent()));
  if (!is_known_element(name_of(n)) || rules.any_children || rules.any_attribute) return;
  for (xml child : n.children()) {
    if (child.type() == pugi::node_element) {
      check_text(child);
    } else if (!rules.text &&
               (child.type() == pugi::node_pcdata || child.type() == pugi::node_cdata)) {
      std::string text = trim(child.value());
      if (text.empty()) continue;
      if (text.size() > 40) text = text.substr(0, 37) + "...";
      m_model.warnings.push_back(m_file + ":" + std::to_string(line_of(child)) + ": text '" + text +
                                 "' inside " + describe(n) + " is ignored; <" + name_of(n) +
                                 "> takes no text, its settings are attributes");
    }
  }
}

// Unknown attributes (a warning: Damaris ignores them, and its own example files carry some),
// unknown children and missing required attributes (errors).
void builder::check_element(xml n) {
  const element_rules& rules = rules_for(name_of(n), name_of(n.parent()));
  std::set<std::string, std::less<>> seen;
  for (pugi::xml_attribute a : n.attributes()) {
    if (is_xml_plumbing(a.name())) continue;
    const std::string_view name = local_name(a.name());
    seen.emplace(name);
    if (rules.any_attribute) continue;
    if (std::find(rules.attributes.begin(), rules.attributes.end(), name) ==
        rules.attributes.end()) {
      warn_at(
          attribute_line(n, a.name(), 1),
          "unknown attribute '" + std::string(name) + "' on " + describe(n) +
              " is ignored, as Damaris ignores it; " +
              (rules.attributes.empty() ? std::string("<" + name_of(n) + "> takes no attributes")
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

bool builder::has(xml n, std::string_view attribute_name) {
  for (pugi::xml_attribute a : n.attributes()) {
    if (!is_xml_plumbing(a.name()) && local_name(a.name()) == attribute_name) return true;
  }
  return false;
}

std::string builder::attribute(xml n, std::string_view attribute_name,
                               const std::string& fallback) {
  for (pugi::xml_attribute a : n.attributes()) {
    if (!is_xml_plumbing(a.name()) && local_name(a.name()) == attribute_name) return a.value();
  }
  return fallback;
}

// A required name: present (checked by check_element) and not blank.
namespace {

// A long value as messages show it: its beginning and its size, never megabytes of it.
std::string shown(const std::string& value) {
  constexpr std::size_t keep = 60;
  if (value.size() <= keep) return value;
  return value.substr(0, keep) + "... (" + std::to_string(value.size()) + " bytes)";
}

bool has_control_character(const std::string& value) {
  return std::any_of(value.begin(), value.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 || byte == 0x7f;
  });
}

}  // namespace

std::string builder::name_attribute(xml n, std::string_view attribute_name) const {
  std::string value = trim(attribute(n, attribute_name));
  if (value.empty()) {
    fail(n, "empty '" + std::string(attribute_name) + "' on <" + name_of(n) + ">",
         "give a non-empty " + std::string(attribute_name));
  }
  // Names end up in HDF5 paths, XDMF (XML) and messages; paths in open().
  if (value.size() > max_name_bytes)
    fail(n,
         "'" + std::string(attribute_name) + "' on <" + name_of(n) + "> is too long: '" +
             shown(value) + "'",
         "at most " + std::to_string(max_name_bytes) + " bytes");
  if (has_control_character(value))
    fail(n,
         "'" + std::string(attribute_name) + "' on <" + name_of(n) +
             "> holds a control character (a byte below 0x20, or 0x7f)",
         "use printable characters only");
  return value;
}

std::string builder::simulation_name(xml root) const {
  const std::string value = attribute(root, "name");
  // Every output file name starts with it: "<name>_It<iteration>_Pr<writer>.h5.part" must fit
  // in a file name (255 bytes on Linux file systems).
  if (value.size() > max_simulation_name_bytes)
    fail(root, "the simulation name is too long: '" + shown(value) + "'",
         "at most " + std::to_string(max_simulation_name_bytes) +
             " bytes, as output file names start with it");
  if (has_control_character(value) || value.find('/') != std::string::npos)
    fail(root, "the simulation name '" + shown(value) + "' holds '/' or a control character",
         "output file names start with it: use printable characters other than '/'");
  return value;
}

bool builder::flag(xml n, std::string_view attribute_name, bool fallback) const {
  return pick(n, attribute_name, bool_choices, fallback);
}

std::int64_t builder::integer(xml n, std::string_view attribute_name, std::int64_t fallback,
                              std::int64_t minimum, std::int64_t maximum) const {
  if (!has(n, attribute_name)) return fallback;
  const std::string raw = attribute(n, attribute_name);
  const std::string text = trim(raw);
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  const bool ok =
      !text.empty() && *end == '\0' && errno == 0 && value >= minimum && value <= maximum;
  if (!ok) {
    std::string range = "an integer >= " + std::to_string(minimum);
    if (maximum != std::numeric_limits<std::int64_t>::max()) {
      range = "an integer from " + std::to_string(minimum) + " to " + std::to_string(maximum);
    }
    fail(n,
         "invalid value '" + raw + "' for attribute '" + std::string(attribute_name) + "' of " +
             describe(n),
         "expected " + range);
  }
  return value;
}

std::optional<double> builder::real(const std::string& raw) const {
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
std::string builder::place(xml n, std::string_view attribute_name, std::size_t entry,
                           std::string_view part) const {
  std::string text = where(n) + ": <" + name_of(n);
  if (has(n, "name")) text += " name=\"" + attribute(n, "name") + "\"";
  text += "> " + std::string(attribute_name);
  if (entry > 0) text += ", entry " + std::to_string(entry);
  if (!part.empty()) text += ", " + std::string(part);
  return text;
}

// Expressions that size data may only read integer parameters.
expression builder::integer_expression(xml n, const std::string& text, const name_map& names,
                                       const std::string& context, const std::string& at,
                                       const unusable_name_reason& why_unusable) const {
  expression e = parse_expression(text, names, at, why_unusable);
  for (std::size_t index : e.parameters()) {
    const parameter& p = m_model.parameters[index];
    if (!is_integer(p.type)) {
      fail(n, context + " uses parameter '" + p.name + "' of type " + element_type_name(p.type),
           "integer expressions may only use parameters of an integer type (short, int, " +
               std::string("long, char)"));
    }
  }
  return e;
}

void builder::check_depth(xml root) const {
  // Walks the tree without recursion: down, then along, then back up.
  int depth = 1;
  xml n = root;
  for (;;) {
    xml child = n.first_child();
    while (child && child.type() != pugi::node_element) child = child.next_sibling();
    if (child) {
      if (++depth > max_xml_depth)
        fail(child, "elements nested " + std::to_string(depth) + " levels deep",
             "at most " + std::to_string(max_xml_depth) + " levels are supported");
      n = child;
      continue;
    }
    for (;;) {
      if (n == root) return;
      xml next = n.next_sibling();
      while (next && next.type() != pugi::node_element) next = next.next_sibling();
      if (next) {
        n = next;
        break;
      }
      n = n.parent();
      --depth;
    }
  }
}

}  // namespace detail

model parse_model(std::string_view xml_text, const std::string& file_name,
                  const parse_options& options) {
  return detail::builder(xml_text, file_name, options).build();
}

}  // namespace sidecore::config
