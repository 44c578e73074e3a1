// damaris/util/DamarisVar.hpp as PDI's Damaris plugin uses it: the exact text of each element,
// and a configuration built from them through ModifyModel that damaris_initialize accepts and
// that stores data which reads back value by value.
#include "damaris/util/DamarisVar.hpp"

#include <Damaris.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "damaris/model/ModifyModel.hpp"
#include "unit_support.hpp"

namespace {

using namespace damaris::model;

TEST(damaris_xml_elements, parameter_has_name_type_value) {
  DamarisParameterXML p{};
  p.param_name_ = "nx";
  p.param_datatype_ = "int";
  p.param_value_ = "4";
  EXPECT_EQ(p.ReturnXMLForParameter(), "<parameter name=\"nx\" type=\"int\" value=\"4\" />");
}

TEST(damaris_xml_elements, layout_leaves_out_empty_optional_attributes) {
  DamarisLayoutXML l{};
  l.layout_name_ = "field";
  std::string type = "int";  // the plugin passes lvalues
  l.set_datatype(type);
  l.layout_dimensions_ = "nx,ny+1";
  EXPECT_EQ(l.ReturnXMLForLayout(),
            "<layout name=\"field\" type=\"int\" dimensions=\"nx,ny+1\" visualizable=\"true\" />");
  l.layout_dims_global_ = "8,9";
  l.layout_ghosts_ = "1:1,0:0";
  std::string language = "fortran";
  l.set_language(language);
  l.layout_visualizable_ = false;
  l.layout_comment_ = "a \"2D\" <field> & more";
  EXPECT_EQ(l.ReturnXMLForLayout(),
            "<layout name=\"field\" type=\"int\" dimensions=\"nx,ny+1\" global=\"8,9\" "
            "ghosts=\"1:1,0:0\" language=\"fortran\" visualizable=\"false\" "
            "comment=\"a &quot;2D&quot; &lt;field&gt; &amp; more\" />");
}

TEST(damaris_xml_elements, variable_attributes_in_damaris_spelling_and_order) {
  DamarisVarXML v{};
  v.var_name_ = "temperature";
  v.layout_name_ = "field";
  EXPECT_EQ(v.ReturnXMLForVariable(),
            "<variable name=\"temperature\" layout=\"field\" type=\"scalar\" "
            "visualizable=\"false\" time-varying=\"true\" centering=\"zonal\" />");
  v.mesh_ = "m";
  std::string centering = "nodal";
  v.set_centering(centering);
  std::string type = "vector";
  v.set_type(type);
  v.visualizable_ = true;
  v.time_varying_ = false;
  v.unit_ = "K";
  v.store_ = "out";
  v.script_ = "s";
  v.select_mem_ = "a";
  v.select_file_ = "b";
  v.select_subset_ = "c";
  v.enabled_ = false;
  v.comment_ = "t";
  EXPECT_EQ(v.ReturnXMLForVariable(),
            "<variable name=\"temperature\" layout=\"field\" mesh=\"m\" type=\"vector\" "
            "visualizable=\"true\" unit=\"K\" time-varying=\"false\" centering=\"nodal\" "
            "store=\"out\" script=\"s\" select-mem=\"a\" select-file=\"b\" select-subset=\"c\" "
            "enabled=\"false\" comment=\"t\" />");
}

TEST(damaris_xml_elements, mesh_lists_its_coords_in_call_order) {
  DamarisMeshXML m{};
  m.set_name("grid");
  m.set_type("rectilinear");
  m.set_topology(2L);  // the plugin passes a long
  m.add_coord("x", "m", "X", "");
  m.add_coord("y", "", "", "");
  EXPECT_EQ(m.get_name(), "grid");
  EXPECT_EQ(m.ReturnXMLForMesh(),
            "<mesh name=\"grid\" type=\"rectilinear\" topology=\"2\">\n"
            "  <coord name=\"x\" unit=\"m\" label=\"X\" />\n"
            "  <coord name=\"y\" />\n"
            "</mesh>");
}

TEST(damaris_xml_elements, store_writes_only_the_options_given) {
  DamarisStoreXML s{};
  s.store_name_ = "out";
  EXPECT_EQ(s.ReturnXMLForStore(), "<store name=\"out\" type=\"HDF5\">\n</store>");
  s.store_opt_FileMode_ = "FilePerCore";
  s.store_opt_FilesPath_ = "/tmp/a&b/";
  EXPECT_EQ(s.ReturnXMLForStore(),
            "<store name=\"out\" type=\"HDF5\">\n"
            "  <option key=\"FileMode\">FilePerCore</option>\n"
            "  <option key=\"FilesPath\">/tmp/a&amp;b/</option>\n"
            "</store>");
}

TEST(damaris_xml_elements, group_nests_its_elements_and_copies_sub_groups) {
  DamarisGroupXML outer{"outer"};
  DamarisGroupXML inner{"inner"};
  DamarisVarXML v{};
  v.var_name_ = "v";
  v.layout_name_ = "l";
  inner.add_ds_element(v);
  DamarisLayoutXML l{};
  l.layout_name_ = "l";
  l.layout_dimensions_ = "2";
  outer.add_ds_element(l);
  outer.add_sub_group(inner);
  inner.add_ds_element(v);  // after the copy: not in outer
  ASSERT_EQ(outer.get_sub_groups().size(), 1u);
  EXPECT_EQ(outer.get_sub_groups()[0].get_name(), "inner");
  EXPECT_EQ(outer.ReturnXMLForGroup(),
            "<group name=\"outer\">\n"
            "  <layout name=\"l\" type=\"double\" dimensions=\"2\" visualizable=\"true\" />\n"
            "  <group name=\"inner\">\n"
            "    <variable name=\"v\" layout=\"l\" type=\"scalar\" visualizable=\"false\" "
            "time-varying=\"true\" centering=\"zonal\" />\n"
            "  </group>\n"
            "</group>");
}

TEST(damaris_xml_elements, paraview_and_pyscript) {
  DamarisParaviewXML p{};
  p.set_update_frequency(2);
  p.set_realtime_timestep(0.5f);
  p.set_end_iteration(10);
  p.set_write_vtk(1);
  p.set_write_vtk_binary(false);
  p.add_script("a.py");
  EXPECT_EQ(p.ReturnXMLForParaview(),
            "<paraview update-frequency=\"2\" realtime-timestep=\"0.5\" end-iteration=\"10\" "
            "write-vtk=\"1\" write-vtk-binary=\"false\">\n"
            "  <script>a.py</script>\n"
            "</paraview>");
  DamarisPyScriptXML s{};
  s.pyscript_name_ = "py";
  s.pyscript_file_ = "f.py";
  s.frequency_ = 3L;
  s.scheduler_file_ = "sched.json";
  s.keep_workers_ = "yes";
  EXPECT_EQ(s.ReturnXMLForPyScript(),
            "<pyscript name=\"py\" file=\"f.py\" language=\"python\" scope=\"core\" "
            "external=\"false\" execution=\"remote\" frequency=\"3\" "
            "scheduler-file=\"sched.json\" nthreads=\"1\" keep-workers=\"yes\" timeout=\"4\" />");
}

// The plugin's way: a template with placeholders, each element added before its placeholder,
// the placeholders removed, the text given to damaris_initialize.
class damaris_xml_configuration : public sidecore::testing_support::output_directory_test {
 protected:
  damaris_xml_configuration() : output_directory_test("damaris-xml") {}
};

TEST_F(damaris_xml_configuration, generated_text_initializes_and_stores_data) {
  std::filesystem::create_directories(m_directory);
  ModifyModel model(
      "<?xml version=\"1.0\"?>\n"
      "<simulation name=\"_SIM_NAME_\" language=\"c\" "
      "xmlns=\"http://damaris.gforge.inria.fr/damaris/model\">\n"
      "  <architecture>\n"
      "    <domains count=\"1\"/>\n"
      "    <dedicated cores=\"0\" nodes=\"0\"/>\n"
      "    <buffer name=\"_SIM_NAME__buffer\" size=\"1048576\" />\n"
      "    <placement />\n"
      "    <queue name=\"queue\" size=\"300\" />\n"
      "  </architecture>\n"
      "  <data>\n"
      "    _DATASET_ELEMENT_REGEX_\n"
      "  </data>\n"
      "  <storage>\n"
      "    _STORAGE_ELEMENT_REGEX_\n"
      "  </storage>\n"
      "  <actions>\n"
      "  </actions>\n"
      "</simulation>");
  const auto add = [&model](const std::string& key, const std::string& element) {
    model.RepalceWithRegEx({{key, element + "\n" + key}});
  };
  DamarisParameterXML nx{};
  nx.param_name_ = "nx";
  nx.param_value_ = "3";
  add("_DATASET_ELEMENT_REGEX_", nx.ReturnXMLForParameter());
  DamarisParameterXML ny{};
  ny.param_name_ = "ny";
  ny.param_value_ = "2";
  add("_DATASET_ELEMENT_REGEX_", ny.ReturnXMLForParameter());
  DamarisLayoutXML layout{};
  layout.layout_name_ = "field";
  layout.set_datatype("int");
  layout.layout_dimensions_ = "ny,nx";
  add("_DATASET_ELEMENT_REGEX_", layout.ReturnXMLForLayout());
  DamarisVarXML v{};
  v.var_name_ = "temperature";
  v.layout_name_ = "field";
  v.store_ = "out";
  DamarisGroupXML group{"fluid"};
  group.add_ds_element(v);
  add("_DATASET_ELEMENT_REGEX_", group.ReturnXMLForGroup());
  DamarisStoreXML store{};
  store.store_name_ = "out";
  store.store_opt_FileMode_ = "FilePerCore";
  store.store_opt_FilesPath_ = m_directory;
  add("_STORAGE_ELEMENT_REGEX_", store.ReturnXMLForStore());
  model.RepalceWithRegEx(
      {{"_SIM_NAME_", "pdi"}, {"_DATASET_ELEMENT_REGEX_", ""}, {"_STORAGE_ELEMENT_REGEX_", ""}});

  ASSERT_EQ(damaris_initialize(model.GetConfigString().c_str(), MPI_COMM_WORLD), DAMARIS_OK)
      << damaris_last_error_message() << "\n"
      << model.GetConfigString();
  // No dedicated core: every process is a client and stores its own data (no damaris_start).
  const std::vector<std::int32_t> values = {1, -2, 3, 40, 500, -6000};
  EXPECT_EQ(damaris_write("fluid/temperature", values.data()), DAMARIS_OK)
      << damaris_last_error_message();
  EXPECT_EQ(damaris_end_iteration(), DAMARIS_OK) << damaris_last_error_message();
  EXPECT_EQ(damaris_finalize(), DAMARIS_OK);

  EXPECT_EQ(sidecore::testing_support::read_int32_dataset(m_directory + "pdi_It0_Pr0.h5",
                                                          "fluid/temperature/P0"),
            values);
}

}  // namespace
