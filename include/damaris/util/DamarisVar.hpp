// damaris::model::Damaris*XML: small value classes that each write one element of a Damaris XML
// configuration (<parameter>, <layout>, <variable>, <group>, <mesh>, <store>, <paraview>,
// <pyscript>) as text, to be put into a template with ModifyModel::RepalceWithRegEx.
//
// Copyright (c) 2026, the Sidecore developers. SPDX-License-Identifier: BSD-3-Clause
//
// These are the generator classes of Damaris's damaris/util/DamarisVar.hpp with the members
// PDI's Damaris plugin (plugins/damaris/damaris_cfg.cxx) reads and writes: public data members
// ending in '_', a few setters, and one ReturnXMLFor<Element>() each. The plugin's use:
//
//   damaris::model::DamarisVarXML v{};
//   v.var_name_ = "temperature";
//   v.layout_name_ = "field";
//   v.store_ = "out";
//   model.RepalceWithRegEx({{"_DATASET_ELEMENT_REGEX_",
//                            v.ReturnXMLForVariable() + "\n_DATASET_ELEMENT_REGEX_"}});
//   ...
//   damaris_initialize(model.GetConfigString().c_str(), comm);   // the text itself
//
// What every ReturnXMLFor*() writes:
// - one complete element, on one line, except <group>, <mesh>, <store> and <paraview> whose
//   children follow on lines of their own; no trailing newline;
// - the attributes in a fixed order (given below for each class), with Damaris's spelling
//   (time-varying, select-file, scheduler-file...); a string attribute whose member is empty is
//   left out, so the configuration's reader applies Damaris's default;
// - attribute values and element text escaped for XML (& < > " '), so any string may be given.
// Values are not checked here: the configuration's reader checks them when damaris_initialize
// reads the text, and names the line and what would be valid (a wrong type="..." is reported
// there, with its line in <configuration text>).
//
// Not provided: the DamarisVar<T> template of Damaris (OPM Flow brings its own), and
// DamarisPluginXML and damaris/interoperability/pdi/*, used only by unreleased versions of the
// plugin whose shape is not settled.
//
// The classes are plain values: copyable, default-constructible (DamarisGroupXML from a name),
// no shared state; one object may be used by one thread at a time. No member throws except
// by std::bad_alloc.
#ifndef SIDECORE_DAMARIS_UTIL_DAMARISVAR_HPP
#define SIDECORE_DAMARIS_UTIL_DAMARISVAR_HPP

#include <string>
#include <vector>

namespace damaris {
namespace model {

// <parameter name type value/>. The plugin sets all three.
class __attribute__((visibility("default"))) DamarisParameterXML {
 public:
  std::string param_name_;
  std::string param_datatype_ = "int";  // short, int, integer, long, float, real, double...
  std::string param_value_ = "0";

  std::string ReturnXMLForParameter() const;
};

// <layout name type dimensions global ghosts language visualizable comment/>.
// layout_dimensions_ is a comma-separated list of expressions of parameters ("nx,ny+1");
// layout_dims_global_ and layout_ghosts_ use the same form ("2:2,0:0" for ghosts).
// visualizable is always written ("true" by default, as in Damaris).
class __attribute__((visibility("default"))) DamarisLayoutXML {
 public:
  std::string layout_name_;
  std::string layout_datatype_ = "double";
  std::string layout_dimensions_;
  std::string layout_dims_global_;
  std::string layout_ghosts_;
  std::string layout_language_;  // empty: the <simulation>'s language
  bool layout_visualizable_ = true;
  std::string layout_comment_;

  // Sets type="...".
  void set_datatype(const std::string& datatype) { layout_datatype_ = datatype; }
  // Sets language="..." (c, cpp, fortran, python, unknown).
  void set_language(const std::string& language) { layout_language_ = language; }

  std::string ReturnXMLForLayout() const;
};

// <variable name layout mesh type visualizable unit time-varying centering store script
//  select-mem select-file select-subset ref enabled comment/>.
// visualizable and time-varying are always written; enabled only when false (the reader's
// default is true). type is "scalar" and centering "zonal" unless set.
class __attribute__((visibility("default"))) DamarisVarXML {
 public:
  std::string var_name_;
  std::string layout_name_;
  std::string mesh_;
  std::string type_ = "scalar";  // scalar, vector, tensor, symmetric-tensor...
  bool visualizable_ = false;
  std::string unit_;
  bool time_varying_ = true;
  std::string centering_ = "zonal";  // zonal or nodal
  std::string store_;
  std::string script_;
  std::string select_mem_;
  std::string select_file_;
  std::string select_subset_;
  std::string ref_;
  bool enabled_ = true;
  std::string comment_;

  void set_type(const std::string& type) { type_ = type; }
  void set_centering(const std::string& centering) { centering_ = centering; }

  std::string ReturnXMLForVariable() const;
};

// <mesh name type topology> with one <coord name unit label comment/> per add_coord() call, in
// call order.
class __attribute__((visibility("default"))) DamarisMeshXML {
 public:
  void set_name(const std::string& name) { m_name = name; }
  const std::string& get_name() const { return m_name; }
  // rectilinear, curvilinear, unstructured, point...
  void set_type(const std::string& type) { m_type = type; }
  void set_topology(int topology) { m_topology = topology; }
  // unit, label and comment are left out when empty.
  void add_coord(const std::string& name, const std::string& unit, const std::string& label,
                 const std::string& comment);

  std::string ReturnXMLForMesh() const;

 private:
  struct coord {
    std::string name, unit, label, comment;
  };
  std::string m_name;
  std::string m_type = "rectilinear";
  int m_topology = 2;
  std::vector<coord> m_coords;
};

// <store name type> with <option key="FileMode"> and <option key="FilesPath"> children when
// those members are not empty (FileMode: FilePerCore, FilePerNode, Collective...).
class __attribute__((visibility("default"))) DamarisStoreXML {
 public:
  std::string store_name_;
  std::string store_type_ = "HDF5";
  std::string store_opt_FileMode_;
  std::string store_opt_FilesPath_;

  std::string ReturnXMLForStore() const;
};

// <group name> holding, in this order, its layouts, variables and meshes (each in the order
// added) and then its sub-groups. Sub-groups are copied in when added: changing a group after
// add_sub_group() does not change the copy.
class __attribute__((visibility("default"))) DamarisGroupXML {
 public:
  explicit DamarisGroupXML(const std::string& name) : m_name(name) {}

  const std::string& get_name() const { return m_name; }

  void add_ds_element(const DamarisVarXML& variable) { m_variables.push_back(variable); }
  void add_ds_element(const DamarisLayoutXML& layout) { m_layouts.push_back(layout); }
  void add_ds_element(const DamarisMeshXML& mesh) { m_meshes.push_back(mesh); }
  void add_sub_group(const DamarisGroupXML& group) { m_sub_groups.push_back(group); }
  const std::vector<DamarisGroupXML>& get_sub_groups() const { return m_sub_groups; }

  std::string ReturnXMLForGroup() const;

 private:
  std::string m_name;
  std::vector<DamarisLayoutXML> m_layouts;
  std::vector<DamarisVarXML> m_variables;
  std::vector<DamarisMeshXML> m_meshes;
  std::vector<DamarisGroupXML> m_sub_groups;
};

// <paraview update-frequency realtime-timestep end-iteration write-vtk write-vtk-binary
//  comment> with one <script>path</script> per add_script(). Damaris's in-situ ParaView
// section: Sidecore's reader accepts it and warns that it is ignored.
class __attribute__((visibility("default"))) DamarisParaviewXML {
 public:
  void set_update_frequency(int frequency) { m_update_frequency = frequency; }
  void set_realtime_timestep(float seconds) { m_realtime_timestep = seconds; }
  void set_end_iteration(int iteration) { m_end_iteration = iteration; }
  void set_write_vtk(int frequency) { m_write_vtk = frequency; }
  void set_write_vtk_binary(bool binary) { m_write_vtk_binary = binary; }
  void set_comment(const std::string& comment) { m_comment = comment; }
  void add_script(const std::string& path) { m_scripts.push_back(path); }

  std::string ReturnXMLForParaview() const;

 private:
  int m_update_frequency = 1;
  float m_realtime_timestep = 0.1f;
  int m_end_iteration = 0;
  int m_write_vtk = 0;
  bool m_write_vtk_binary = true;
  std::string m_comment;
  std::vector<std::string> m_scripts;
};

// <pyscript name file language scope external execution frequency scheduler-file nthreads
//  keep-workers timeout comment/>, for the <scripts> section. The numbers are always written.
class __attribute__((visibility("default"))) DamarisPyScriptXML {
 public:
  std::string pyscript_name_;
  std::string pyscript_file_;
  std::string language_ = "python";
  std::string scope_ = "core";  // core, group, bcast
  bool external_ = false;
  std::string execution_ = "remote";  // local, remote, coupled
  int frequency_ = 1;
  std::string scheduler_file_;  // a Dask scheduler's file; empty: no Dask
  int nthreads_ = 1;
  std::string keep_workers_ = "no";  // yes or no
  int timeout_ = 4;
  std::string comment_;

  std::string ReturnXMLForPyScript() const;
};

}  // namespace model
}  // namespace damaris

#endif  // SIDECORE_DAMARIS_UTIL_DAMARISVAR_HPP
