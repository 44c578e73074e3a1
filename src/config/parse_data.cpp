// Reading <data>: parameters, layouts, groups, variables, meshes, curves, and their checks.
#include <algorithm>
#include <cstdint>
#include <set>

#include "common/error.hpp"
#include "config/builder.hpp"

namespace sidecore::config::detail {
namespace {

std::pair<std::int64_t, std::int64_t> integer_range(element_type type) {
  switch (type) {
    case element_type::int8:
      return {INT8_MIN, INT8_MAX};
    case element_type::int16:
      return {INT16_MIN, INT16_MAX};
    case element_type::int32:
      return {INT32_MIN, INT32_MAX};
    default:
      return {INT64_MIN, INT64_MAX};
  }
}

}  // namespace

void builder::read_parameters(xml data) {
  check_element(data);
  for (xml n : elements(data)) {
    if (name_of(n) != "parameter") continue;
    check_element(n);
    parameter p;
    p.name = name_attribute(n);
    p.line = line_of(n);
    p.type = pick(n, "type", type_choices, element_type::int32);
    if (m_parameter_names.count(p.name)) {
      fail(n,
           "parameter '" + p.name + "' is already defined at line " +
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
      const expression e =
          integer_expression(n, value, m_parameter_names, "the value of parameter '" + p.name + "'",
                             place(n, "value"), why_unusable);
      p.int_value = e.evaluate(parameter_values());
      const auto [low, high] = integer_range(p.type);
      if (p.int_value < low || p.int_value > high) {
        fail(n,
             "value " + std::to_string(p.int_value) + " of parameter '" + p.name +
                 "' does not fit its type " + element_type_name(p.type),
             "expected a value from " + std::to_string(low) + " to " + std::to_string(high));
      }
    } else {
      const auto parsed = real(value);
      if (!parsed) {
        fail(n,
             "invalid value '" + value + "' for parameter '" + p.name + "' of type " +
                 element_type_name(p.type),
             "expected a floating-point number such as 0.5 or 1e-3");
      }
      p.real_value = *parsed;
    }
    m_parameter_names.emplace(p.name, m_model.parameters.size());
    m_parameter_values.push_back(p.int_value);
    m_model.parameters.push_back(std::move(p));
    m_model.index_names();
  }
}

// Layouts declared in a group are named by their full path ("coordinates/rmeshX"), as in
// Damaris; group names are checked when variables are read.
void builder::read_layouts(xml parent, const std::string& path) {
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

void builder::read_layout(xml n, const std::string& path) {
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
    fail(n,
         "layout '" + l.name + "' is already defined at line " +
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
      l.global_dimensions.push_back(
          integer_expression(n, extents[d], m_parameter_names, context, place(n, "global", d + 1)));
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
      fail(n,
           context + " has " + std::to_string(l.dimensions.size()) + " dimensions but ghosts='" +
               ghosts + "' has " + std::to_string(l.ghosts.size()) + " pairs",
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
  m_model.index_names();
}

// Every layout must describe real data with the parameters' initial values: extents of at
// least 1, ghost zones that leave an interior, global extents that hold the interior.
void builder::check_layout_values() {
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
    if (!array_bytes(extents, element_size(l.type)))
      fail(n,
           context + " holds more than 2^64 bytes with the initial parameter values (" +
               std::to_string(count) + " dimensions of " + element_type_name(l.type) + ")",
           "no block can be that large: check the dimensions");
    std::vector<std::int64_t> interior = extents;
    for (std::size_t d = 0; d < l.ghosts.size(); ++d) {
      const auto& [before, after] = l.ghosts[d];
      std::int64_t widths[2] = {0, 0};
      for (int side = 0; side < 2; ++side) {
        const expression& e = side == 0 ? before : after;
        widths[side] = e.evaluate(values);
        if (widths[side] < 0) {
          fail(n, context + " has ghost width '" + e.text() + "' = " + std::to_string(widths[side]),
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
             context + " has global extent '" + g.text() + "' = " + std::to_string(extent) + " (" +
                 entry(d) + " of global) smaller than its local " + local +
                 " with the initial parameter values",
             "a global extent must hold at least one block: give global >= dimensions "
             "minus ghosts in every dimension");
      }
    }
    if (!l.global_dimensions.empty()) {
      std::vector<std::int64_t> global;
      for (const expression& g : l.global_dimensions) global.push_back(g.evaluate(values));
      if (!array_bytes(global, element_size(l.type)))
        fail(n,
             context +
                 " has global extents of more than 2^64 bytes with the initial parameter "
                 "values",
             "no dataset can be that large: check global=");
    }
  }
}

// Variables, meshes and curves, walking groups; layouts were read before.
void builder::read_data_objects(xml parent, const std::string& path, bool enabled,
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
void builder::check_path_component(xml n, const char* what, const std::string& name,
                                   const std::string& whole) const {
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
void builder::check_variable_group_clashes() const {
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

void builder::read_variable(xml n, const std::string& path, bool enabled,
                            const std::string& group_store) {
  check_element(n);
  variable v;
  const std::string own_name = name_attribute(n);
  check_path_component(n, "variable", own_name);
  v.name = path + own_name;
  v.line = line_of(n);
  if (const auto previous = m_model.find_variable(v.name); previous != model::npos) {
    fail(n,
         "variable '" + v.name + "' is already defined at line " +
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
  // Damaris lists scripts separated by commas, semicolons or spaces.
  std::string script_names = attribute(n, "script");
  std::replace_if(
      script_names.begin(), script_names.end(), [](char c) { return c == ';' || c == ' '; }, ',');
  for (const std::string& name : split(script_names, ',')) {
    const std::string script = trim(name);
    if (script.empty() || is_none(script)) continue;
    if (std::find(v.scripts.begin(), v.scripts.end(), script) == v.scripts.end())
      v.scripts.push_back(script);
  }
  const std::string selection = trim(attribute(n, "select-file"));
  m_variable_selections.push_back(is_none(selection) ? std::string() : selection);
  // Damaris's schema has these too; Sidecore does not implement them, and ignoring them
  // silently would store data the user did not ask for.
  for (const char* unsupported : {"select-mem", "select-subset"}) {
    const std::string value = trim(attribute(n, unsupported));
    if (value.empty() || is_none(value)) continue;
    warn(n, std::string(unsupported) + "=\"" + value + "\" of variable '" + v.name +
                "' is not implemented: the variable is stored whole, as if the attribute were "
                "absent (remove it; select-file is the selection Sidecore implements)");
  }
  const std::string store_name = trim(attribute(n, "store", group_store));
  m_variable_stores.push_back(is_none(store_name) ? std::string() : store_name);
  m_variable_nodes.push_back(n);
  m_model.variables.push_back(std::move(v));
  m_model.index_names();
}

// A variable's layout, looked up as Damaris does: a name with '/' is a full name; otherwise
// the variable's group, then each enclosing group, then the top level. Files written for
// earlier Sidecore versions name a layout declared in a group by its own name from anywhere:
// that still works when no other lookup succeeds. npos when nothing matches.
std::size_t builder::resolve_layout(std::string group, const std::string& name) const {
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
std::size_t builder::basic_type_layout(xml variable_node, const std::string& name) {
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
  m_model.index_names();
  return m_model.layouts.size() - 1;
}

void builder::read_mesh(xml n, const std::string& path) {
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

// References that change nothing stored: Damaris's own examples leave them dangling.
void builder::check_references() {
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
    for (const std::string& script : v.scripts) {
      if (scripts.count(script)) continue;
      std::vector<std::string> known(scripts.begin(), scripts.end());
      warn(m_variable_nodes[i],
           "variable '" + v.name + "' names undeclared script '" + script + "'; it is ignored (" +
               (known.empty() ? std::string("declare it in <scripts> with <pyscript name=\"") +
                                    script + "\" file=\"...\"/>"
                              : detail::suggest(script, known, "scripts")) +
               ")");
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

// select-file names the variable whose values place each element of a block in Collective
// files. It is looked up as layouts are: a name with '/' is a full name; otherwise the
// variable's group, then each enclosing group, then the top level.
void builder::resolve_selections() {
  for (std::size_t i = 0; i < m_model.variables.size(); ++i) {
    const std::string& name = m_variable_selections[i];
    if (name.empty()) continue;
    xml n = m_variable_nodes[i];
    const variable& v = m_model.variables[i];
    std::size_t found = model::npos;
    if (name.find('/') != std::string::npos) {
      found = m_model.find_variable(name);
    } else {
      std::string group = v.name.substr(0, v.name.rfind('/') + 1);  // "" at the top level
      for (;;) {
        found = m_model.find_variable(group + name);
        if (found != model::npos || group.empty()) break;
        group.pop_back();
        const auto slash = group.rfind('/');
        group = slash == std::string::npos ? std::string() : group.substr(0, slash + 1);
      }
    }
    const std::string what = "select-file=\"" + name + "\" of variable '" + v.name + "'";
    if (found == model::npos) {
      std::vector<std::string> integers;
      for (const variable& other : m_model.variables)
        if (is_integer(m_model.layouts[other.layout_index].type)) integers.push_back(other.name);
      fail(n, what + " names no declared variable",
           detail::suggest(name, integers,
                           "index variables (variables of an integer layout, looked up from the "
                           "variable's group outwards)"));
    }
    const variable& index = m_model.variables[found];
    const layout& index_layout = m_model.layouts[index.layout_index];
    const layout& own_layout = m_model.layouts[v.layout_index];
    const std::string index_text =
        "variable '" + index.name + "' (line " + std::to_string(index.line) + ")";
    if (!is_integer(index_layout.type)) {
      fail(n,
           what + " names " + index_text + " of layout '" + index_layout.name + "', type '" +
               index_layout.type_name + "'",
           "the index variable holds global positions: give it a layout of an integer type "
           "(short, int, integer, long)");
    }
    if (found != i && !m_variable_selections[found].empty()) {
      fail(n, what + " names " + index_text + ", which has a select-file of its own",
           "an index variable is stored as written: remove select-file from '" + index.name +
               "' or select with another variable");
    }
    if (!index_layout.ghosts.empty() || !own_layout.ghosts.empty()) {
      fail(n,
           what + ": layout '" + (own_layout.ghosts.empty() ? index_layout.name : own_layout.name) +
               "' has ghost zones",
           "select-file places every element of a block, so neither layout may have ghosts");
    }
    if (v.enabled && !index.enabled) {
      fail(n, what + " names " + index_text + ", which is disabled",
           "enable '" + index.name + "' (its values are needed to store '" + v.name + "')");
    }
    // The same count of elements per block; where the layouts' dimensions are written
    // differently, they are compared with the parameters' initial values (and again for every
    // block when it is stored).
    const auto texts = [](const layout& l) {
      std::vector<std::string> t;
      for (const expression& e : l.dimensions) t.push_back(e.text());
      return t;
    };
    if (texts(index_layout) != texts(own_layout)) {
      const auto count = [this](const layout& l) {
        std::int64_t product = 1;
        for (const expression& e : l.dimensions) product *= e.evaluate(m_parameter_values);
        return product;
      };
      const std::int64_t own = count(own_layout);
      const std::int64_t positions = count(index_layout);
      if (own != positions) {
        fail(n,
             what + ": a block of '" + v.name + "' has " + std::to_string(own) +
                 " elements (layout '" + own_layout.name + "') but a block of '" + index.name +
                 "' gives " + std::to_string(positions) + " positions (layout '" +
                 index_layout.name + "'), with the parameters' initial values",
             "the index variable gives one global position per element: give both layouts the "
             "same element count");
      }
    }
    m_model.variables[i].select_file = found;
  }
}

}  // namespace sidecore::config::detail
