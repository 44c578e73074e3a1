// select-file in the configuration: the index variable is found as Damaris finds layouts
// (from the variable's group outwards), must hold integers with one position per element, and
// every mistake names the file and line; select-mem and select-subset, which Sidecore does not
// implement, are never ignored in silence.
#include <gtest/gtest.h>
#include <mpi.h>

#include <filesystem>
#include <string>

#include "common/error.hpp"
#include "config/model.hpp"
#include "plugins/store.hpp"
#include "unit_support.hpp"

namespace {

namespace cfg = sidecore::config;
using sidecore::testing_support::contains;
using sidecore::testing_support::start_mpi;

// <data> body starting on line 3.
std::string select_file_configuration(const std::string& body) {
  return "<simulation name=\"t\">\n<data>\n" + body + "</data>\n</simulation>\n";
}

const std::string cells =
    "<parameter name=\"n\" type=\"int\" value=\"4\"/>\n"            // line 3
    "<layout name=\"ints\" type=\"int\" dimensions=\"n\"/>\n"       // line 4
    "<layout name=\"reals\" type=\"double\" dimensions=\"n\"/>\n";  // line 5

std::string refusal(const std::string& xml) {
  try {
    cfg::parse_model(xml, "sel.xml");
  } catch (const sidecore::config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted:\n" << xml;
  return {};
}

std::size_t index_of(const cfg::model& m, const std::string& name) {
  const std::size_t i = m.find_variable(name);
  EXPECT_NE(i, cfg::model::npos) << name;
  return i;
}

TEST(select_file, index_is_found_from_the_group_outwards) {
  const cfg::model m = cfg::parse_model(
      select_file_configuration(cells +
                                "<variable name=\"idx\" layout=\"ints\"/>\n"
                                "<group name=\"a\">\n"
                                "  <variable name=\"idx\" layout=\"ints\"/>\n"
                                "  <group name=\"b\">\n"
                                "    <variable name=\"p\" layout=\"reals\" select-file=\"idx\"/>\n"
                                "  </group>\n"
                                "</group>\n"
                                "<variable name=\"q\" layout=\"reals\" select-file=\"idx\"/>\n"
                                "<variable name=\"r\" layout=\"reals\" select-file=\"a/idx\"/>\n"
                                "<variable name=\"s\" layout=\"reals\" select-file=\"#\"/>\n"
                                "<variable name=\"t\" layout=\"reals\"/>\n"),
      "sel.xml");
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  // a/b/p: not in a/b, found in a; q: the top level; r: a full name.
  EXPECT_EQ(m.variables[index_of(m, "a/b/p")].select_file, index_of(m, "a/idx"));
  EXPECT_EQ(m.variables[index_of(m, "q")].select_file, index_of(m, "idx"));
  EXPECT_EQ(m.variables[index_of(m, "r")].select_file, index_of(m, "a/idx"));
  // "#" is Damaris's "none", like an absent attribute.
  EXPECT_EQ(m.variables[index_of(m, "s")].select_file, cfg::variable::npos);
  EXPECT_EQ(m.variables[index_of(m, "t")].select_file, cfg::variable::npos);
}

TEST(select_file, an_undeclared_index_is_an_error_naming_the_line_and_nearest_name) {
  const std::string message =
      refusal(select_file_configuration(
          cells + "<variable name=\"cell_index\" layout=\"ints\"/>\n"
                  "<variable name=\"p\" layout=\"reals\" select-file=\"cel_index\"/>\n"));
  EXPECT_EQ(message.rfind("sel.xml:7: select-file=\"cel_index\" of variable 'p' names no "
                          "declared variable; ",
                          0),
            0u)
      << message;
  EXPECT_TRUE(contains(message, "did you mean 'cell_index'?")) << message;
}

TEST(select_file, an_index_of_a_real_type_is_an_error) {
  const std::string message =
      refusal(select_file_configuration(
          cells + "<variable name=\"idx\" layout=\"reals\"/>\n"
                  "<variable name=\"p\" layout=\"reals\" select-file=\"idx\"/>\n"));
  EXPECT_EQ(message.rfind("sel.xml:7: select-file=\"idx\" of variable 'p' names variable 'idx' "
                          "(line 6) of layout 'reals', type 'double'; ",
                          0),
            0u)
      << message;
  EXPECT_TRUE(contains(message, "integer type")) << message;
}

TEST(select_file, an_index_of_another_size_is_an_error) {
  const std::string message =
      refusal(select_file_configuration(
          cells + "<layout name=\"more\" type=\"long\" dimensions=\"n+1\"/>\n"
                  "<variable name=\"idx\" layout=\"more\"/>\n"
                  "<variable name=\"p\" layout=\"reals\" select-file=\"idx\"/>\n"));
  EXPECT_EQ(message.rfind("sel.xml:8: select-file=\"idx\" of variable 'p': a block of 'p' has 4 "
                          "elements (layout 'reals') but a block of 'idx' gives 5 positions",
                          0),
            0u)
      << message;
  EXPECT_TRUE(contains(message, "; the index variable gives one global position per element"))
      << message;
}

TEST(select_file, layouts_written_differently_with_the_same_count_are_accepted) {
  const cfg::model m = cfg::parse_model(
      select_file_configuration(cells +
                                "<layout name=\"grid\" type=\"float\" dimensions=\"2,n/2\"/>\n"
                                "<layout name=\"index\" type=\"short\" dimensions=\"n\"/>\n"
                                "<variable name=\"idx\" layout=\"index\"/>\n"
                                "<variable name=\"p\" layout=\"grid\" select-file=\"idx\"/>\n"),
      "sel.xml");
  EXPECT_EQ(m.variables[index_of(m, "p")].select_file, index_of(m, "idx"));
}

TEST(select_file, ghost_zones_and_chained_indexes_are_errors) {
  const std::string ghosts =
      refusal(select_file_configuration(
          cells + "<layout name=\"g\" type=\"double\" dimensions=\"n\" ghosts=\"1:1\"/>\n"
                  "<variable name=\"idx\" layout=\"ints\"/>\n"
                  "<variable name=\"p\" layout=\"g\" select-file=\"idx\"/>\n"));
  EXPECT_EQ(ghosts.rfind("sel.xml:8: select-file=\"idx\" of variable 'p': layout 'g' has ghost "
                         "zones; ",
                         0),
            0u)
      << ghosts;
  const std::string chained =
      refusal(select_file_configuration(
          cells + "<variable name=\"first\" layout=\"ints\"/>\n"
                  "<variable name=\"second\" layout=\"ints\" select-file=\"first\"/>\n"
                  "<variable name=\"p\" layout=\"reals\" select-file=\"second\"/>\n"));
  EXPECT_EQ(chained.rfind("sel.xml:8: select-file=\"second\" of variable 'p' names variable "
                          "'second' (line 7), which has a select-file of its own; ",
                          0),
            0u)
      << chained;
}

TEST(select_file, a_disabled_index_is_an_error) {
  const std::string message =
      refusal(select_file_configuration(
          cells + "<variable name=\"idx\" layout=\"ints\" enabled=\"false\"/>\n"
                  "<variable name=\"p\" layout=\"reals\" select-file=\"idx\"/>\n"));
  EXPECT_EQ(message.rfind("sel.xml:7: select-file=\"idx\" of variable 'p' names variable 'idx' "
                          "(line 6), which is disabled; ",
                          0),
            0u)
      << message;
}

// Sidecore does not implement select-mem or select-subset: ignoring them would store what the
// user did not ask for without a word, so each is a warning naming the line, an error when
// checking is strict.
TEST(select_file, select_mem_and_select_subset_warn_and_are_refused_when_strict) {
  const std::string xml = select_file_configuration(
      cells +
      "<variable name=\"idx\" layout=\"ints\"/>\n"
      "<variable name=\"p\" layout=\"reals\" select-mem=\"idx\"/>\n"
      "<variable name=\"q\" layout=\"reals\"\n"
      "          select-subset=\"0,2\"/>\n"
      "<variable name=\"r\" layout=\"reals\" select-mem=\"#\" select-subset=\"\"/>\n");
  const cfg::model m = cfg::parse_model(xml, "sel.xml");
  ASSERT_EQ(m.warnings.size(), 2u);
  EXPECT_EQ(m.warnings[0].rfind("sel.xml:7: select-mem=\"idx\" of variable 'p' is not "
                                "implemented: the variable is stored whole",
                                0),
            0u)
      << m.warnings[0];
  EXPECT_EQ(m.warnings[1].rfind("sel.xml:8: select-subset=\"0,2\" of variable 'q' is not "
                                "implemented",
                                0),
            0u)
      << m.warnings[1];
  cfg::parse_options strict;
  strict.strict = true;
  try {
    cfg::parse_model(xml, "sel.xml", strict);
    ADD_FAILURE() << "strict checking accepted select-mem";
  } catch (const sidecore::config_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("sel.xml:7: select-mem=\"idx\"", 0), 0u) << message;
    EXPECT_TRUE(contains(message, "strict checking is on")) << message;
  }
}

// A Collective file places select-file variables in a global dataset: a layout without global
// dimensions cannot be stored so, and opening the store says which variable and layout.
TEST(select_file, collective_store_needs_global_dimensions_of_selected_variables) {
  start_mpi();
  const std::string directory =
      (std::filesystem::temp_directory_path() / "sidecore-select-file-unit").string();
  const cfg::model m = cfg::parse_model(
      "<simulation name=\"t\">\n<data>\n" + cells +
          "<variable name=\"idx\" layout=\"ints\" store=\"s\"/>\n"
          "<variable name=\"p\" layout=\"reals\" select-file=\"idx\" store=\"s\"/>\n"
          "</data>\n<storage>\n"
          "<store name=\"s\" type=\"HDF5\"><option key=\"FileMode\">Collective</option>"
          "<option key=\"FilesPath\">" +
          directory +
          "/</option></store>\n"
          "</storage>\n</simulation>\n",
      "sel.xml");
  sidecore::plugins::store_context context;
  context.model = &m;
  context.settings = &m.stores[0];
  context.comm = MPI_COMM_SELF;
  std::string message;
  try {
    sidecore::plugins::make_store(context);
  } catch (const sidecore::config_error& e) {
    message = e.what();
  }
  std::filesystem::remove_all(directory);
  EXPECT_EQ(message.rfind("sel.xml:10: store \"s\": FileMode Collective: variable \"p\" (line 7) "
                          "has select-file",
                          0),
            0u)
      << message;
  EXPECT_TRUE(contains(message, "layout \"reals\" (line 5) has no global dimensions")) << message;
}

}  // namespace
