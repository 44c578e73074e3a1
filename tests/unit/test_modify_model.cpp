// damaris::model::ModifyModel as OPM Flow and PDI's Damaris plugin use it: construction from a
// template, RepalceWithRegEx with Damaris's rules, the config string, saving to a file and
// reading one back on every rank.
#include "damaris/model/ModifyModel.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <system_error>

#include "unit_support.hpp"

namespace {

using damaris::model::ModifyModel;
using replacements = std::map<std::string, std::string>;

std::string replaced(const std::string& text, const replacements& map) {
  ModifyModel model(text);
  model.RepalceWithRegEx(map);
  return model.GetConfigString();
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST(modify_model, keeps_the_template_it_is_built_from) {
  std::string text = "<simulation name=\"_SIM_NAME_\"/>";
  // OPM Flow's form: copy-initialised from a temporary built from an lvalue string.
  damaris::model::ModifyModel from_template = damaris::model::ModifyModel(text);
  EXPECT_EQ(from_template.GetConfigString(), text);
  // PDI's form: a default-constructed member assigned later.
  ModifyModel member;
  EXPECT_EQ(member.GetConfigString(), "");
  member = ModifyModel(text);
  EXPECT_EQ(member.GetConfigString(), text);
  member.SetXMLstring("<other/>");
  EXPECT_EQ(member.GetConfigString(), "<other/>");
  // The non-const reference edits the text in place, as Damaris's does.
  member.GetConfigString() += "\n";
  EXPECT_EQ(member.GetConfigString(), "<other/>\n");
  const ModifyModel& constant = member;
  EXPECT_EQ(constant.GetConfigString(), "<other/>\n");
}

TEST(modify_model, fills_in_opm_flow_placeholders) {
  const std::string text =
      "<simulation name=\"_SIM_NAME_\">\n"
      "  <dedicated cores=\"_DC_REGEX_\" nodes=\"_DN_REGEX_\"/>\n"
      "  <buffer name=\"_SHMEM_NAME_\" size=\"_SHMEM_BUFFER_BYTES_REGEX_\" />\n"
      "  <variable name=\"PRESSURE\" unit=\"_PRESSURE_UNIT_\"\n"
      "    store=\"_MYSTORE_OR_EMPTY_REGEX_\" />\n"
      "  <option key=\"FileMode\">_File_Mode</option>\n"
      "  <option key=\"FilesPath\">_PATH_REGEX_/</option>\n"
      "  <log FileName=\"_PATH_REGEX_/damaris_log/_SIM_NAME_\" LogLevel=\"_LOG_LEVEL_\" />\n"
      "</simulation>\n";
  const replacements map = {{"_SIM_NAME_", "opm-flow-42"},
                            {"_DC_REGEX_", "1"},
                            {"_DN_REGEX_", "0"},
                            {"_SHMEM_NAME_", "opm-damaris-42"},
                            {"_SHMEM_BUFFER_BYTES_REGEX_", "536870912"},
                            {"_PRESSURE_UNIT_", "Pa"},
                            {"_MYSTORE_OR_EMPTY_REGEX_", "MyStore"},
                            {"_File_Mode", "Collective"},
                            {"_PATH_REGEX_", "/scratch/run"},
                            {"_LOG_LEVEL_", "info"},
                            {"_MORE_VARIABLES_REGEX_", ""}};
  EXPECT_EQ(replaced(text, map),
            "<simulation name=\"opm-flow-42\">\n"
            "  <dedicated cores=\"1\" nodes=\"0\"/>\n"
            "  <buffer name=\"opm-damaris-42\" size=\"536870912\" />\n"
            "  <variable name=\"PRESSURE\" unit=\"Pa\"\n"
            "    store=\"MyStore\" />\n"
            "  <option key=\"FileMode\">Collective</option>\n"
            "  <option key=\"FilesPath\">/scratch/run/</option>\n"
            "  <log FileName=\"/scratch/run/damaris_log/opm-flow-42\" LogLevel=\"info\" />\n"
            "</simulation>\n");
}

TEST(modify_model, comments_out_elements_as_opm_flow_does) {
  // OPM Flow disables <pyscript> by making it a comment, or enables it with empty strings.
  const std::string text =
      "<_DISABLEPYTHONSTART_pyscript name=\"PythonScript\" file=\"_PYTHON_SCRIPT_\" "
      "/_DISABLEPYTHONFIN_>\n<script>_PARAVIEW_PYTHON_SCRIPT_</script>";
  EXPECT_EQ(replaced(text, {{"_DISABLEPYTHONSTART_", "!--"},
                            {"_DISABLEPYTHONFIN_", "--"},
                            {"_PYTHON_SCRIPT_", ""},
                            {"_PARAVIEW_PYTHON_SCRIPT_", ""}}),
            "<!--pyscript name=\"PythonScript\" file=\"\" /-->\n<script></script>");
  // _PYTHON_SCRIPT_ is not replaced inside _PARAVIEW_PYTHON_SCRIPT_ (no word boundary there).
  EXPECT_EQ(replaced(text, {{"_DISABLEPYTHONSTART_", ""},
                            {"_DISABLEPYTHONFIN_", ""},
                            {"_PYTHON_SCRIPT_", "a.py"},
                            {"_PARAVIEW_PYTHON_SCRIPT_", "pv.py"}}),
            "<pyscript name=\"PythonScript\" file=\"a.py\" />\n<script>pv.py</script>");
}

TEST(modify_model, applies_keys_in_the_order_of_the_map) {
  // std::map visits _A_ before _B_: what _A_ writes is replaced by _B_ afterwards...
  EXPECT_EQ(replaced("_A_", {{"_A_", "_B_"}, {"_B_", "x"}}), "x");
  // ...while what _B_ writes is not seen by _A_, which ran before it.
  EXPECT_EQ(replaced("_B_", {{"_B_", "_A_"}, {"_A_", "y"}}), "_A_");
  // PDI re-inserts the key after each group it adds, then removes it with a second call.
  ModifyModel pdi("<data>\n  _DATASET_ELEMENT_REGEX_\n</data>");
  const std::string key = "_DATASET_ELEMENT_REGEX_";
  pdi.RepalceWithRegEx({{key, "<group name=\"g1\"/>\n" + key}});
  pdi.RepalceWithRegEx({{key, "<group name=\"g2\"/>\n" + key}});
  pdi.RepalceWithRegEx({{key, ""}});
  EXPECT_EQ(pdi.GetConfigString(),
            "<data>\n  <group name=\"g1\"/>\n<group name=\"g2\"/>\n\n</data>");
}

TEST(modify_model, keys_are_regular_expressions) {
  EXPECT_EQ(replaced("_N1_ _N2_ _NX_", {{"_N[0-9]_", "n"}}), "n n _NX_");
  // An unescaped '.' matches any character; escaped, only a dot.
  EXPECT_EQ(replaced("a.b axb", {{"a.b", "Y"}}), "Y Y");
  EXPECT_EQ(replaced("a.b axb", {{"a\\.b", "Y"}}), "Y axb");
  EXPECT_EQ(replaced("size=(1+2) size=12", {{"size=\\(1\\+2\\)", "size=3"}}), "size=3 size=12");
  // Alternatives inside the key, with groups of their own, keep the text after the key.
  EXPECT_EQ(replaced("_A_/x _B_/y _C_", {{"(_A_|_B_)", "z"}}), "z/x z/y _C_");
}

TEST(modify_model, matches_only_at_a_word_boundary) {
  EXPECT_EQ(replaced("x_DC_ \"_DC_\" /_DC_ _DC_", {{"_DC_", "1"}}), "x_DC_ \"1\" /1 1");
  EXPECT_EQ(replaced("rank_DC_", {{"_DC_", "1"}}), "rank_DC_");
}

TEST(modify_model, replaces_a_key_once_per_run_between_spaces) {
  // Damaris matches the key with everything up to the next space and puts that back.
  EXPECT_EQ(replaced("_P_/a/_P_ _P_", {{"_P_", "V"}}), "V/a/_P_ V");
  EXPECT_EQ(replaced("_P_\n_P_", {{"_P_", "V"}}), "V\n_P_");
  EXPECT_EQ(replaced("_P_\n  _P_", {{"_P_", "V"}}), "V\n  V");
}

TEST(modify_model, leaves_missing_keys_and_placeholders_alone) {
  const std::string text = "<dedicated cores=\"_DC_REGEX_\" nodes=\"_DN_REGEX_\"/>";
  EXPECT_EQ(replaced(text, {{"_DC_REGEX_", "2"}}), "<dedicated cores=\"2\" nodes=\"_DN_REGEX_\"/>");
  EXPECT_EQ(replaced(text, {{"_ABSENT_", "z"}}), text);
  EXPECT_EQ(replaced(text, {}), text);
  EXPECT_EQ(replaced("", {{"_DC_REGEX_", "2"}}), "");
}

TEST(modify_model, values_are_replacement_formats) {
  EXPECT_EQ(replaced("cost=_PRICE_", {{"_PRICE_", "$$5"}}), "cost=$5");
  EXPECT_EQ(replaced("<_K_>", {{"_K_", "[$1]"}}), "<[_K_]>");
  EXPECT_EQ(replaced("path=\"_PATH_\"", {{"_PATH_", "/a b/c&d"}}), "path=\"/a b/c&d\"");
}

TEST(modify_model, a_bad_key_is_refused_and_the_text_kept) {
  ModifyModel model("_A_ _Z_");
  try {
    // _A_ is valid and comes first: the text must still be left as it was.
    model.RepalceWithRegEx({{"_A_", "a"}, {"_Z_(", "z"}});
    FAIL() << "an unbalanced parenthesis was accepted as a key";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"_Z_(\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("escape"), std::string::npos) << e.what();
  }
  EXPECT_EQ(model.GetConfigString(), "_A_ _Z_");
  // The correctly spelt name does the same.
  model.ReplaceWithRegEx({{"_A_", "a"}});
  EXPECT_EQ(model.GetConfigString(), "a _Z_");
}

class modify_model_files : public sidecore::testing_support::output_directory_test {
 protected:
  modify_model_files() : output_directory_test("modify-model") {}
};

TEST_F(modify_model_files, saves_the_text_and_reads_it_back) {
  std::filesystem::create_directories(m_directory);
  const std::string path = m_directory + "damaris_config.xml";
  std::string text = "<simulation name=\"_SIM_NAME_\"/>\n";
  ModifyModel model(text);
  model.RepalceWithRegEx({{"_SIM_NAME_", "run"}});
  model.SaveXMLStringToFile(path);
  EXPECT_EQ(file_text(path), "<simulation name=\"run\"/>\n");
  // Saving again replaces the file.
  model.SetXMLstring("<short/>");
  model.SaveXMLStringToFile(path);
  EXPECT_EQ(file_text(path), "<short/>");

  ModifyModel reader;
  ASSERT_TRUE(reader.ReadAndBroadcastXMLFromFile(MPI_COMM_WORLD, path));
  EXPECT_EQ(reader.GetConfigString(), "<short/>");
  EXPECT_FALSE(reader.ReadAndBroadcastXMLFromFile(MPI_COMM_WORLD, m_directory + "absent.xml"));
  EXPECT_EQ(reader.GetConfigString(), "<short/>");
}

TEST_F(modify_model_files, saving_where_it_cannot_says_where_and_why) {
  std::filesystem::create_directories(m_directory);
  const ModifyModel model("<simulation/>");
  const std::string missing = m_directory + "no/such/dir/damaris_config.xml";
  try {
    model.SaveXMLStringToFile(missing);
    FAIL() << "saving into a missing directory succeeded";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::errc::no_such_file_or_directory);
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  // A regular file where a directory should be.
  { std::ofstream(m_directory + "plain") << "x"; }
  const std::string under_file = m_directory + "plain/damaris_config.xml";
  try {
    model.SaveXMLStringToFile(under_file);
    FAIL() << "saving under a regular file succeeded";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::errc::not_a_directory);
    EXPECT_NE(std::string(e.what()).find(under_file), std::string::npos) << e.what();
  }
  // A full device: a short text is buffered, so the failure shows only when it is flushed.
  ASSERT_TRUE(std::filesystem::exists("/dev/full"));
  try {
    model.SaveXMLStringToFile("/dev/full");
    FAIL() << "saving to a full device succeeded";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::errc::no_space_on_device);
    EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos) << e.what();
  }
}
