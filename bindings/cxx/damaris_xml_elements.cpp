// The text of the Damaris*XML generator classes of damaris/util/DamarisVar.hpp.
#include "damaris/util/DamarisVar.hpp"

#include <sstream>
#include <string>

#include "common/text.hpp"

namespace damaris {
namespace model {
namespace {

const char* boolean(bool value) { return value ? "true" : "false"; }

// Builds one start tag: attributes are appended in call order; optional ones are skipped when
// empty so that the reader's default applies.
class tag {
 public:
  explicit tag(const char* element) : m_text(std::string("<") + element) {}

  tag& always(const char* name, const std::string& value) {
    m_text += std::string(" ") + name + "=\"" + sidecore::xml_escaped(value) + "\"";
    return *this;
  }
  tag& optional(const char* name, const std::string& value) {
    return value.empty() ? *this : always(name, value);
  }
  std::string empty_element() const { return m_text + " />"; }
  std::string opened() const { return m_text + ">"; }

 private:
  std::string m_text;
};

std::string option(const char* key, const std::string& value) {
  return "<option key=\"" + std::string(key) + "\">" + sidecore::xml_escaped(value) + "</option>";
}

}  // namespace

std::string DamarisParameterXML::ReturnXMLForParameter() const {
  return tag("parameter")
      .always("name", param_name_)
      .always("type", param_datatype_)
      .always("value", param_value_)
      .empty_element();
}

std::string DamarisLayoutXML::ReturnXMLForLayout() const {
  return tag("layout")
      .always("name", layout_name_)
      .always("type", layout_datatype_)
      .always("dimensions", layout_dimensions_)
      .optional("global", layout_dims_global_)
      .optional("ghosts", layout_ghosts_)
      .optional("language", layout_language_)
      .always("visualizable", boolean(layout_visualizable_))
      .optional("comment", layout_comment_)
      .empty_element();
}

std::string DamarisVarXML::ReturnXMLForVariable() const {
  tag t("variable");
  t.always("name", var_name_)
      .always("layout", layout_name_)
      .optional("mesh", mesh_)
      .optional("type", type_)
      .always("visualizable", boolean(visualizable_))
      .optional("unit", unit_)
      .always("time-varying", boolean(time_varying_))
      .optional("centering", centering_)
      .optional("store", store_)
      .optional("script", script_)
      .optional("select-mem", select_mem_)
      .optional("select-file", select_file_)
      .optional("select-subset", select_subset_)
      .optional("ref", ref_);
  if (!enabled_) t.always("enabled", "false");
  return t.optional("comment", comment_).empty_element();
}

void DamarisMeshXML::add_coord(const std::string& name, const std::string& unit,
                               const std::string& label, const std::string& comment) {
  m_coords.push_back(coord{name, unit, label, comment});
}

std::string DamarisMeshXML::ReturnXMLForMesh() const {
  std::string text = tag("mesh")
                         .always("name", m_name)
                         .always("type", m_type)
                         .always("topology", std::to_string(m_topology))
                         .opened();
  for (const coord& c : m_coords) {
    text += "\n  " + tag("coord")
                         .always("name", c.name)
                         .optional("unit", c.unit)
                         .optional("label", c.label)
                         .optional("comment", c.comment)
                         .empty_element();
  }
  return text + "\n</mesh>";
}

std::string DamarisStoreXML::ReturnXMLForStore() const {
  std::string text = tag("store").always("name", store_name_).always("type", store_type_).opened();
  if (!store_opt_FileMode_.empty()) text += "\n  " + option("FileMode", store_opt_FileMode_);
  if (!store_opt_FilesPath_.empty()) text += "\n  " + option("FilesPath", store_opt_FilesPath_);
  return text + "\n</store>";
}

std::string DamarisGroupXML::ReturnXMLForGroup() const {
  std::string text = tag("group").always("name", m_name).opened();
  // Children are indented by two more spaces per level, which keeps nested groups readable.
  const auto add = [&text](const std::string& child) {
    std::string indented = "\n  ";
    for (char c : child) {
      indented += c;
      if (c == '\n') indented += "  ";
    }
    text += indented;
  };
  for (const auto& layout : m_layouts) add(layout.ReturnXMLForLayout());
  for (const auto& variable : m_variables) add(variable.ReturnXMLForVariable());
  for (const auto& mesh : m_meshes) add(mesh.ReturnXMLForMesh());
  for (const auto& group : m_sub_groups) add(group.ReturnXMLForGroup());
  return text + "\n</group>";
}

std::string DamarisParaviewXML::ReturnXMLForParaview() const {
  std::ostringstream timestep;
  timestep << m_realtime_timestep;
  std::string text = tag("paraview")
                         .always("update-frequency", std::to_string(m_update_frequency))
                         .always("realtime-timestep", timestep.str())
                         .always("end-iteration", std::to_string(m_end_iteration))
                         .always("write-vtk", std::to_string(m_write_vtk))
                         .always("write-vtk-binary", boolean(m_write_vtk_binary))
                         .optional("comment", m_comment)
                         .opened();
  for (const std::string& script : m_scripts)
    text += "\n  <script>" + sidecore::xml_escaped(script) + "</script>";
  return text + "\n</paraview>";
}

std::string DamarisPyScriptXML::ReturnXMLForPyScript() const {
  return tag("pyscript")
      .always("name", pyscript_name_)
      .always("file", pyscript_file_)
      .optional("language", language_)
      .optional("scope", scope_)
      .always("external", boolean(external_))
      .optional("execution", execution_)
      .always("frequency", std::to_string(frequency_))
      .optional("scheduler-file", scheduler_file_)
      .always("nthreads", std::to_string(nthreads_))
      .optional("keep-workers", keep_workers_)
      .always("timeout", std::to_string(timeout_))
      .optional("comment", comment_)
      .empty_element();
}

}  // namespace model
}  // namespace damaris
