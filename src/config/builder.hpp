// The parser's state while it turns one XML text into a model; private to src/config.
// Its members are defined by element family in parser.cpp, parse_architecture.cpp,
// parse_data.cpp and parse_storage_actions.cpp; parse_model is the only entry point.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <pugixml.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/text.hpp"
#include "config/model.hpp"
#include "config/xml_vocabulary.hpp"

namespace sidecore::config::detail {

using name_map = std::map<std::string, std::size_t, std::less<>>;
using xml = pugi::xml_node;

class builder {
 public:
  builder(std::string_view text, const std::string& file, const parse_options& options);

  // Parses the text and checks it; throws config_error at the first error. Call once.
  model build();

 private:
  // parser.cpp: positions, messages, generic checks and attribute values.
  int line_at(std::ptrdiff_t offset) const;
  int line_of(xml n) const;
  std::string where(xml n) const;
  void refuse_warnings(xml root) const;
  [[noreturn]] void fail(xml n, const std::string& what, const std::string& hint) const;
  void warn(xml n, const std::string& message);
  void warn_at(int line, const std::string& message);

  static std::string name_of(xml n);
  static std::vector<xml> elements(xml parent);
  static std::string describe(xml n);
  int attribute_line(xml n, std::string_view qualified, int occurrence) const;
  void check_attributes_once(xml n) const;
  // Elements nested deeper than max_xml_depth are refused, before any recursive walk of the
  // tree (a hostile file of thousands of nested groups overflowed the stack).
  void check_depth(xml root) const;
  void check_text(xml n);
  void check_element(xml n);

  static bool has(xml n, std::string_view attribute_name);
  static std::string attribute(xml n, std::string_view attribute_name,
                               const std::string& fallback = {});
  // A non-empty name (or path) attribute, trimmed, at most max_name_bytes, printable.
  std::string name_attribute(xml n, std::string_view attribute_name = "name") const;
  // <simulation name>: it starts every output file name. Empty is allowed (Damaris's default).
  std::string simulation_name(xml root) const;
  static constexpr std::size_t max_simulation_name_bytes = 200;

  // The value of an enumerated attribute (any case), fallback when absent; an error naming the
  // listed choices when it is none of them.
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
    fail(n,
         "invalid value '" + raw + "' for attribute '" + std::string(attribute_name) + "' of " +
             describe(n),
         detail::suggest(value, listed, "values"));
  }

  bool flag(xml n, std::string_view attribute_name, bool fallback) const;
  std::int64_t integer(xml n, std::string_view attribute_name, std::int64_t fallback,
                       std::int64_t minimum,
                       std::int64_t maximum = std::numeric_limits<std::int64_t>::max()) const;
  std::optional<double> real(const std::string& raw) const;
  std::string place(xml n, std::string_view attribute_name, std::size_t entry = 0,
                    std::string_view part = {}) const;
  expression integer_expression(xml n, const std::string& text, const name_map& names,
                                const std::string& context, const std::string& at,
                                const unusable_name_reason& why_unusable = {}) const;
  // The values of the parameters read so far (kept as they are read: files with tens of
  // thousands of parameters are read in linear time).
  const std::vector<std::int64_t>& parameter_values() const noexcept { return m_parameter_values; }

  // parse_architecture.cpp: <architecture>; its sizes wait for the parameters.
  void read_architecture(xml arch);
  void evaluate_architecture_sizes();

  // parse_data.cpp: <data>: parameters, layouts, groups, variables, meshes, curves.
  void read_parameters(xml data);
  void read_layouts(xml parent, const std::string& path);
  void read_layout(xml n, const std::string& path);
  void check_layout_values();
  void read_data_objects(xml parent, const std::string& path, bool enabled,
                         const std::string& group_store);
  void check_path_component(xml n, const char* what, const std::string& name,
                            const std::string& whole = {}) const;
  void check_variable_group_clashes() const;
  void read_variable(xml n, const std::string& path, bool enabled, const std::string& group_store);
  std::size_t resolve_layout(std::string group, const std::string& name) const;
  std::size_t basic_type_layout(xml variable_node, const std::string& name);
  void read_mesh(xml n, const std::string& path);
  void check_references();
  void resolve_selections();

  // parse_storage_actions.cpp: <storage>, <actions>, <scripts>, <log>, <plugins>.
  void read_storage(xml storage);
  void read_store_type(xml n, store& s);
  // A file the configuration names (a plugin library, a script): a relative path with a '/'
  // is taken from the configuration file's directory (as includes are in most tools); when it
  // is only found from the working directory, that one is used with a warning. A bare name
  // (no '/') is left to the dynamic loader's search; absolute paths are kept.
  std::string beside_configuration(xml n, const std::string& path, const char* what);
  void resolve_variable_stores();
  void check_unique_action(xml n, const std::string& name);
  void read_actions(xml actions);
  void read_script(xml n, const std::string& kind);
  void resolve_scripts();
  void read_log(xml n);
  void read_paraview(xml n);
  void resolve_paraview();
  void read_damaris_plugins(xml n);

  std::string_view m_text;
  const std::string& m_file;
  parse_options m_options;
  std::vector<std::size_t> m_newlines;
  pugi::xml_document m_document;
  model m_model;
  name_map m_parameter_names;
  std::vector<std::int64_t> m_parameter_values;  // int_value of each parameter read
  // Every top-level parameter of the file with the line of its first declaration.
  std::map<std::string, int, std::less<>> m_declared_parameters;
  std::vector<xml> m_layout_nodes;
  std::vector<xml> m_variable_nodes;
  // Full path of every group ("a/b") with the line of its first element.
  std::map<std::string, int, std::less<>> m_group_lines;
  std::vector<std::string> m_variable_stores;
  std::vector<std::string> m_variable_selections;  // select-file of each variable, "" when none
  std::vector<std::pair<xml, std::string>> m_coordinate_nodes;
  std::vector<std::string> m_part_groups;  // group path of each mesh part, in reading order
  std::map<std::string, int, std::less<>> m_action_lines;
  std::vector<xml> m_script_nodes;  // of each model::scripts entry
  std::pair<xml, std::string> m_buffer_size;
  std::pair<xml, std::string> m_server_memory;
  std::pair<xml, std::string> m_queue_size;
};

}  // namespace sidecore::config::detail
