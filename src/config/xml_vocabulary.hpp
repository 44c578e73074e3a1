// What a Damaris-format configuration may contain: elements, attribute values, text helpers.
// Private to src/config.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "config/model.hpp"

namespace pugi {
class xml_node;
}

namespace sidecore::config::detail {

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

// Every element of the vocabulary by name; "polyhedral_*" stands for all <polyhedral_...>.
const rule_map& all_rules();

// <polyhedral_...> pieces of an unstructured mesh, whatever follows the prefix.
bool is_polyhedral_part(std::string_view element);

// Elements outside the vocabulary (the content of <visit>, <python>...) accept anything.
bool is_known_element(std::string_view element);

// The rules of an element (those of "parent/element" when the vocabulary has them: <script>
// in <paraview> is not the <script> of <actions>); anything goes for an element outside the
// vocabulary.
const element_rules& rules_for(std::string_view element, std::string_view parent = {});

// Name without its namespace prefix ("xsi:type" -> "type").
std::string_view local_name(const char* qualified);

// Namespace declarations and schema hints are XML plumbing, not configuration.
bool is_xml_plumbing(std::string_view attribute);

// Without the XML white space (space, tab, CR, LF) at either end. Not sidecore::trimmed, which
// also strips '\v' and '\f' (std::isspace): values keep exactly what they kept before.
std::string trim(std::string_view text);

// Damaris writes "#" for "none" in mesh, store, script, global and ghosts.
bool is_none(const std::string& value);

// Parts of text between separators, each trimmed; one part (maybe empty) when there is none.
std::vector<std::string> split(std::string_view text, char separator);

// One value an attribute may take, matched ignoring case.
template <typename T>
struct choice {
  const char* name;
  T value;
  bool listed = true;  // aliases are accepted but not advertised
};

extern const std::vector<choice<element_type>> type_choices;
extern const std::vector<choice<language>> language_choices;
extern const std::vector<choice<enum scope>> scope_choices;
extern const std::vector<choice<enum execution>> execution_choices;
extern const std::vector<choice<centering>> centering_choices;
extern const std::vector<choice<full_buffer_policy>> policy_choices;
extern const std::vector<choice<log_level>> log_level_choices;
extern const std::vector<choice<bool>> bool_choices;
extern const std::vector<choice<std::string>> variable_kind_choices;
extern const std::vector<choice<std::string>> mesh_type_choices;
extern const std::vector<choice<std::string>> store_type_choices;  // built-in stores
extern const std::vector<choice<std::string>> shm_type_choices;
extern const std::vector<choice<language>> script_language_choices;
extern const std::vector<choice<schedule_policy>> schedule_policy_choices;

// parse_schedule.cpp: reads the <schedule> child of an <architecture> element (if any; its
// attributes were checked against the rules already) into arch.schedule. text is the whole
// configuration (for line numbers), file names it in messages. Throws config_error.
void read_schedule(const pugi::xml_node& architecture_node, std::string_view text,
                   const std::string& file, architecture& arch);

}  // namespace sidecore::config::detail
