// The XML configuration: Damaris files parse to the right model; every mistake is reported with
// file, line and a hint; harmless looseness only warns.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>

#include "common/error.hpp"
#include "config/model.hpp"
#include "protocol/message.hpp"
#include "unit_support.hpp"

// The limits the parser enforces are those of the notifications that carry blocks and signals.
static_assert(sidecore::config::max_dimensions == sidecore::protocol::max_dimensions);
static_assert(sidecore::config::max_signal_name_length + 1 ==
              static_cast<std::size_t>(sidecore::protocol::max_signal_name));

namespace {

namespace cfg = sidecore::config;
using sidecore::testing_support::contains;

const std::string data_dir = std::string(SIDECORE_TEST_DATA_DIR) + "/config/";

std::string error_of(const std::string& xml) {
  try {
    cfg::parse_model(xml, "bad.xml");
  } catch (const sidecore::config_error& e) {
    EXPECT_EQ(e.code(), DAMARIS_CONFIG_ERROR);
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << xml;
  return {};
}

// Every message reads "<file>:<line>: <what is wrong>; <what would be valid>".
void expect_error(const std::string& xml, int line, std::initializer_list<std::string> parts) {
  const std::string message = error_of(xml);
  const std::string place = "bad.xml:" + std::to_string(line) + ": ";
  EXPECT_EQ(message.rfind(place, 0), 0u) << "expected to start with '" << place << "': " << message;
  EXPECT_TRUE(contains(message, "; ")) << message;
  for (const auto& part : parts) EXPECT_TRUE(contains(message, part)) << message;
}

// A minimal configuration around the given <data> body; the body starts on line 3.
std::string with_data(const std::string& body) {
  return "<simulation name=\"t\">\n<data>\n" + body + "</data>\n</simulation>\n";
}

std::vector<std::int64_t> values_of(const cfg::model& m) {
  std::vector<std::int64_t> v;
  for (const auto& p : m.parameters) v.push_back(p.int_value);
  return v;
}

std::vector<std::int64_t> evaluate_all(const std::vector<cfg::expression>& list,
                                       const cfg::model& m) {
  std::vector<std::int64_t> out;
  for (const auto& e : list) out.push_back(e.evaluate(values_of(m)));
  return out;
}

using ints = std::vector<std::int64_t>;

TEST(config, damaris_example_parses_with_expected_values) {
  const cfg::model m = cfg::load_model_file(data_dir + "damaris_3dmesh.xml");
  EXPECT_EQ(m.file, data_dir + "damaris_3dmesh.xml");
  EXPECT_EQ(m.simulation_name, "3dmesh");
  EXPECT_EQ(m.lang, cfg::language::c);

  EXPECT_EQ(m.arch.domains, 1);
  EXPECT_EQ(m.arch.dedicated_cores, 1);
  EXPECT_EQ(m.arch.dedicated_nodes, 0);
  EXPECT_EQ(m.arch.buffer_name, "damaris-buffer");
  EXPECT_EQ(m.arch.buffer_size, 536870912u);
  EXPECT_EQ(m.arch.policy, cfg::full_buffer_policy::wait);
  EXPECT_EQ(m.arch.wait_timeout_seconds, 300.0);
  EXPECT_EQ(m.arch.queue_name, "damaris-queue");
  EXPECT_EQ(m.arch.queue_size, 100u);

  ASSERT_EQ(m.parameters.size(), 4u);
  EXPECT_EQ(m.parameters[0].name, "WIDTH");
  EXPECT_EQ(m.parameters[0].type, cfg::element_type::int32);
  EXPECT_EQ(values_of(m), (ints{16, 8, 4, 4}));
  EXPECT_EQ(m.parameters[3].line, 14);

  ASSERT_EQ(m.layouts.size(), 1u);
  const cfg::layout& l = m.layouts[0];
  EXPECT_EQ(l.name, "cells_whd_wf");
  EXPECT_EQ(l.type, cfg::element_type::int32);
  EXPECT_EQ(l.line, 15);
  ASSERT_EQ(l.dimensions.size(), 3u);
  EXPECT_EQ(l.dimensions[0].text(), "WIDTH/size");
  EXPECT_EQ(evaluate_all(l.dimensions, m), (ints{4, 8, 4}));
  EXPECT_EQ(evaluate_all(l.global_dimensions, m), (ints{16, 8, 4}));
  ASSERT_EQ(l.ghosts.size(), 3u);
  EXPECT_EQ(l.ghosts[2].second.evaluate(values_of(m)), 0);

  ASSERT_EQ(m.variables.size(), 1u);
  const cfg::variable& v = m.variables[0];
  EXPECT_EQ(v.name, "cube");
  EXPECT_EQ(v.layout_index, 0u);
  EXPECT_EQ(v.store_index, 0u);
  EXPECT_EQ(v.center, cfg::centering::nodal);
  EXPECT_EQ(v.mesh, "mesh");
  EXPECT_EQ(v.kind, "scalar");
  EXPECT_TRUE(v.enabled);
  EXPECT_TRUE(v.time_varying);
  EXPECT_EQ(v.line, 16);

  ASSERT_EQ(m.stores.size(), 1u);
  const cfg::store& s = m.stores[0];
  EXPECT_EQ(s.name, "MyStore");
  EXPECT_EQ(s.type, "HDF5");
  EXPECT_EQ(s.frequency, 1);
  ASSERT_EQ(s.options.size(), 3u);
  EXPECT_EQ(s.options[0], (std::pair<std::string, std::string>{"FileMode", "Collective"}));
  EXPECT_EQ(s.option("XDMFMode"), "NoIteration");
  EXPECT_EQ(s.option("FilesPath", "fallback"), "");
  EXPECT_EQ(s.option("Compression", "none"), "none");

  ASSERT_EQ(m.events.size(), 1u);
  EXPECT_EQ(m.events[0].name, "test_event");
  EXPECT_EQ(m.events[0].action, "my_function");
  EXPECT_EQ(m.events[0].library, "");
  EXPECT_EQ(m.events[0].scope, cfg::scope::core);
  EXPECT_EQ(m.events[0].execution, cfg::execution::remote);

  EXPECT_EQ(m.log.file_name, "log/3dmesh");
  EXPECT_EQ(m.log.level, cfg::log_level::info);
  EXPECT_EQ(m.log.format, "[%TimeStamp%]: %Message%");
  EXPECT_FALSE(m.log.flush);

  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_TRUE(contains(m.warnings[0], data_dir + "damaris_3dmesh.xml:16: ")) << m.warnings[0];
  EXPECT_TRUE(contains(m.warnings[0], "undeclared mesh 'mesh'")) << m.warnings[0];
}

TEST(config, lookups_by_name) {
  const cfg::model m = cfg::load_model_file(data_dir + "damaris_3dmesh.xml");
  EXPECT_EQ(m.find_parameter("size"), 3u);
  EXPECT_EQ(m.find_parameter("SIZE"), cfg::model::npos);
  EXPECT_EQ(m.find_layout("cells_whd_wf"), 0u);
  EXPECT_EQ(m.find_variable("cube"), 0u);
  EXPECT_EQ(m.find_variable("cub"), cfg::model::npos);
  EXPECT_EQ(m.find_event("test_event"), 0u);
  EXPECT_EQ(m.find_event(""), cfg::model::npos);
}

// The index behind the lookups: items added after the last index_names() are still found (in
// order), a duplicate name finds its first item, a list replaced by a shorter one is reindexed.
TEST(config, lookups_by_name_follow_the_lists) {
  cfg::model m;
  const auto named = [](const std::string& name) {
    cfg::variable v;
    v.name = name;
    return v;
  };
  m.variables = {named("a"), named("b")};
  m.index_names();
  EXPECT_EQ(m.find_variable("b"), 1u);
  m.variables.push_back(named("c"));
  m.variables.push_back(named("a"));
  EXPECT_EQ(m.find_variable("c"), 2u);  // not indexed yet
  EXPECT_EQ(m.find_variable("a"), 0u);
  m.index_names();
  EXPECT_EQ(m.find_variable("c"), 2u);
  EXPECT_EQ(m.find_variable("a"), 0u);  // the first of two
  EXPECT_EQ(m.find_variable("d"), cfg::model::npos);
  m.variables = {named("z")};
  m.index_names();
  EXPECT_EQ(m.find_variable("z"), 0u);
  EXPECT_EQ(m.find_variable("a"), cfg::model::npos);
}

// A configuration of many variables: every one is found where the parser put it, and a
// duplicate among them is still refused with both lines (its check was a linear scan per
// variable, quadratic over the file: 50,000 variables took over a minute).
TEST(config, many_variables_are_indexed) {
  std::string xml =
      "<simulation name=\"many\"><architecture><domains count=\"1\"/><dedicated cores=\"0\" "
      "nodes=\"0\"/><buffer name=\"b\" size=\"1048576\"/></architecture><data>"
      "<layout name=\"l\" type=\"double\" dimensions=\"4\"/>\n";
  constexpr int count = 20000;
  for (int i = 0; i < count; ++i)
    xml += "<variable name=\"v" + std::to_string(i) + "\" layout=\"l\"/>\n";
  const cfg::model m = cfg::parse_model(xml + "</data></simulation>", "many.xml");
  ASSERT_EQ(m.variables.size(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; i += 997)
    EXPECT_EQ(m.find_variable("v" + std::to_string(i)), static_cast<std::size_t>(i));
  const std::string error =
      error_of(xml + "<variable name=\"v12345\" layout=\"l\"/>\n</data></simulation>");
  EXPECT_TRUE(contains(error, "bad.xml:20002: variable 'v12345' is already defined at line 12347"))
      << error;
}

TEST(config, prefixed_namespace_groups_and_extensions) {
  const cfg::model m = cfg::load_model_file(data_dir + "groups_and_meshes.xml");
  EXPECT_EQ(m.simulation_name, "groups");
  EXPECT_EQ(m.lang, cfg::language::fortran);
  EXPECT_EQ(m.arch.domains, 2);
  EXPECT_EQ(m.arch.dedicated_cores, 0);
  EXPECT_EQ(m.arch.dedicated_nodes, 1);
  EXPECT_EQ(m.arch.buffer_name, "buf");
  EXPECT_EQ(m.arch.buffer_size, 64u << 20);
  EXPECT_EQ(m.arch.policy, cfg::full_buffer_policy::skip);
  EXPECT_EQ(m.arch.wait_timeout_seconds, 2.5);
  EXPECT_EQ(m.arch.queue_size, 20u);

  ASSERT_EQ(m.parameters.size(), 3u);
  EXPECT_EQ(m.parameters[1].type, cfg::element_type::int16);
  EXPECT_EQ(m.parameters[1].int_value, 12);
  EXPECT_EQ(m.parameters[2].type, cfg::element_type::float32);
  EXPECT_EQ(m.parameters[2].real_value, 0.25);

  ASSERT_EQ(m.variables.size(), 3u);
  const cfg::variable& x = m.variables[m.find_variable("coordinates/x")];
  EXPECT_TRUE(x.enabled);
  EXPECT_EQ(x.unit, "m");
  EXPECT_EQ(x.store_index, 0u);  // inherited from the group
  const cfg::variable& y = m.variables[m.find_variable("coordinates/inner/y")];
  EXPECT_FALSE(y.enabled);  // the enclosing group is disabled
  EXPECT_FALSE(y.time_varying);
  EXPECT_EQ(y.store_index, cfg::variable::npos);  // "#" overrides the group's store
  const cfg::variable& t = m.variables[m.find_variable("temperature")];
  EXPECT_EQ(t.center, cfg::centering::zonal);
  EXPECT_EQ(t.mesh, "mesh2d");
  EXPECT_EQ(t.scripts, std::vector<std::string>{"analyse"});
  EXPECT_EQ(t.store_index, cfg::variable::npos);

  ASSERT_EQ(m.meshes.size(), 1u);
  EXPECT_EQ(m.meshes[0].type, "rectilinear");
  EXPECT_EQ(m.meshes[0].topology, 2);
  ASSERT_EQ(m.meshes[0].coordinates.size(), 2u);
  EXPECT_EQ(m.meshes[0].coordinates[0].label, "x");
  EXPECT_EQ(m.meshes[0].coordinates[1].name, "coordinates/inner/y");
  EXPECT_EQ(m.meshes[0].coordinates[1].unit, "");

  ASSERT_EQ(m.stores.size(), 2u);
  EXPECT_EQ(m.stores[0].type, "HDF5");
  EXPECT_EQ(m.stores[0].frequency, 3);
  EXPECT_EQ(m.stores[0].option("FileMode"), "FilePerCore");
  EXPECT_EQ(m.stores[1].type, "null");

  ASSERT_EQ(m.events.size(), 1u);
  EXPECT_EQ(m.events[0].library, "libplot.so");
  EXPECT_EQ(m.events[0].scope, cfg::scope::group);
  EXPECT_EQ(m.events[0].execution, cfg::execution::local);
  ASSERT_EQ(m.scripts.size(), 2u);
  EXPECT_EQ(m.scripts[0].file, "analyse.py");
  EXPECT_EQ(m.scripts[0].frequency, 5);
  EXPECT_EQ(m.scripts[0].scope, cfg::scope::bcast);
  EXPECT_EQ(m.scripts[1].name, "dask");
  EXPECT_EQ(m.scripts[1].lang, cfg::language::python);
  EXPECT_EQ(m.scripts[1].scheduler_file, "s.json");
  EXPECT_EQ(m.scripts[1].nthreads, "2");
  EXPECT_FALSE(m.scripts[1].keep_workers);
  EXPECT_DOUBLE_EQ(m.scripts[1].timeout_seconds, 4.0);
  // Each script is an action: 'analyse' receives temperature every 5th iteration.
  ASSERT_EQ(m.action_plugins.size(), 2u);
  const cfg::action_plugin& analyse = m.action_plugins[m.scripts[0].action];
  EXPECT_TRUE(analyse.is_script());
  EXPECT_EQ(analyse.name, "analyse");
  EXPECT_EQ(analyse.frequency, 5);
  EXPECT_EQ(analyse.variables, std::vector<std::size_t>{m.find_variable("temperature")});
  EXPECT_TRUE(m.action_plugins[m.scripts[1].action].variables.empty());

  // <python> is ignored; the pyscript no variable names runs without data.
  ASSERT_EQ(m.warnings.size(), 2u);
  EXPECT_TRUE(contains(m.warnings[0], "groups_and_meshes.xml:46: <python> is not supported"))
      << m.warnings[0];
  EXPECT_TRUE(contains(m.warnings[1],
                       "groups_and_meshes.xml:44: <pyscript 'dask'> is named by no enabled "
                       "variable's script=: it runs with the iteration number only"))
      << m.warnings[1];
  EXPECT_EQ(m.variables[m.find_variable("temperature")].vector_length, 1);
}

TEST(config, fortran_layouts_are_stored_in_c_order) {
  const cfg::model m = cfg::load_model_file(data_dir + "groups_and_meshes.xml");
  // Simulation language fortran, layout without language: reversed.
  const cfg::layout& grid = m.layouts[m.find_layout("grid")];
  EXPECT_EQ(grid.lang, cfg::language::unknown);
  EXPECT_EQ(evaluate_all(grid.dimensions, m), (ints{12, 10}));
  EXPECT_EQ(evaluate_all(grid.global_dimensions, m), (ints{12, 20}));
  ASSERT_EQ(grid.ghosts.size(), 2u);
  EXPECT_EQ(grid.ghosts[0].first.evaluate(values_of(m)), 3);
  EXPECT_EQ(grid.ghosts[0].second.evaluate(values_of(m)), 4);
  EXPECT_EQ(grid.ghosts[1].first.evaluate(values_of(m)), 1);
  EXPECT_EQ(grid.ghosts[1].second.evaluate(values_of(m)), 2);
  // An explicit C layout in a Fortran simulation keeps its order.
  const cfg::layout& grid_c = m.layouts[m.find_layout("grid_c")];
  EXPECT_EQ(grid_c.lang, cfg::language::c);
  EXPECT_EQ(evaluate_all(grid_c.dimensions, m), (ints{10, 12}));
}

TEST(config, fortran_layout_in_c_simulation_is_reversed) {
  const cfg::model m = cfg::parse_model(
      with_data("<parameter name=\"N\" type=\"int\" value=\"3\"/>\n"
                "<layout name=\"f\" type=\"real\" dimensions=\"N,N+1,N+2\" language=\"fortran\"/>\n"
                "<layout name=\"c\" type=\"real\" dimensions=\"N,N+1,N+2\"/>\n"),
      "inline.xml");
  EXPECT_EQ(evaluate_all(m.layouts[0].dimensions, m), (ints{5, 4, 3}));
  EXPECT_EQ(evaluate_all(m.layouts[1].dimensions, m), (ints{3, 4, 5}));
  EXPECT_EQ(m.layouts[0].type, cfg::element_type::float32);
}

TEST(config, defaults_without_architecture) {
  const cfg::model m = cfg::parse_model("<simulation name=\"empty\"/>", "inline.xml");
  EXPECT_EQ(m.lang, cfg::language::unknown);
  EXPECT_EQ(m.arch.dedicated_cores, 0);
  EXPECT_EQ(m.arch.buffer_size, 64u << 20);
  EXPECT_EQ(m.arch.policy, cfg::full_buffer_policy::wait);
  EXPECT_EQ(m.log.level, cfg::log_level::warning);
  EXPECT_TRUE(m.warnings.empty());
}

TEST(config, element_types_map_to_sizes) {
  const cfg::model m =
      cfg::parse_model(with_data("<parameter name=\"a\" type=\"short\" value=\"1\"/>\n"
                                 "<parameter name=\"b\" type=\"INTEGER\" value=\"1\"/>\n"
                                 "<parameter name=\"c\" type=\"long\" value=\"1\"/>\n"
                                 "<parameter name=\"d\" type=\"float\" value=\"1\"/>\n"
                                 "<parameter name=\"e\" type=\"double\" value=\"1e3\"/>\n"
                                 "<parameter name=\"f\" type=\"character\" value=\"1\"/>\n"
                                 "<parameter name=\"g\" type=\"label\" value=\"1\"/>\n"),
                       "inline.xml");
  const std::vector<std::size_t> sizes = {2, 4, 8, 4, 8, 1, 1};
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(cfg::element_size(m.parameters[i].type), sizes[i]) << i;
  }
  EXPECT_EQ(m.parameters[4].real_value, 1000.0);
  EXPECT_STREQ(cfg::element_type_name(cfg::element_type::float64), "double");
  EXPECT_STREQ(cfg::element_type_name(cfg::element_type::int32), "int");
  EXPECT_TRUE(cfg::is_integer(cfg::element_type::int8));
  EXPECT_FALSE(cfg::is_integer(cfg::element_type::float32));
}

// The one warning a configuration gives (and a failure when it gives none or several).
std::string single_warning_of(const std::string& xml) {
  const cfg::model m = cfg::parse_model(xml, "bad.xml");
  EXPECT_EQ(m.warnings.size(), 1u);
  return m.warnings.empty() ? std::string() : m.warnings.front();
}

// Damaris ignores attributes it does not know (its own examples carry some): so does Sidecore,
// with a warning that names the line and the nearest valid name.
TEST(config, unknown_attribute_is_ignored_with_a_warning_and_the_nearest_name) {
  const std::string warning = single_warning_of(
      with_data("<layout name=\"l\" type=\"int\" dimensions=\"4\"\n        dimension=\"5\"/>\n"
                "<variable name=\"v\" layout=\"l\"/>\n"));
  EXPECT_EQ(warning.rfind("bad.xml:4: unknown attribute 'dimension' on <layout 'l'> is ignored", 0),
            0u)
      << warning;
  EXPECT_TRUE(contains(warning, "did you mean 'dimensions'?")) << warning;
  EXPECT_TRUE(contains(warning, "valid attributes: name, type, dimensions, global")) << warning;
  // Ignored: the layout is what the valid attributes say.
  const cfg::model m = cfg::parse_model(
      with_data("<layout name=\"l\" type=\"int\" dimensions=\"4\" dimension=\"5\"/>\n"), "t.xml");
  ASSERT_EQ(m.layouts.size(), 1u);
  ASSERT_EQ(m.layouts[0].dimensions.size(), 1u);
  EXPECT_EQ(m.layouts[0].dimensions[0].text(), "4");
}

// ghost= (for ghosts=) is in Damaris's own example files: it loads, without ghost zones.
TEST(config, damaris_ghost_typo_loads_without_ghosts) {
  const std::string xml =
      with_data("<layout name=\"l\" type=\"int\" dimensions=\"4\" ghost=\"1:1\"/>\n");
  const std::string warning = single_warning_of(xml);
  EXPECT_TRUE(contains(warning, "unknown attribute 'ghost' on <layout 'l'> is ignored")) << warning;
  EXPECT_TRUE(contains(warning, "did you mean 'ghosts'?")) << warning;
  EXPECT_TRUE(cfg::parse_model(xml, "t.xml").layouts[0].ghosts.empty());
}

// Strict checking turns every warning into an error that names the first warning's line.
TEST(config, strict_checking_makes_warnings_errors) {
  const std::string typo =
      with_data("<layout name=\"l\" type=\"int\" dimensions=\"4\" ghost=\"1:1\"/>\n");
  cfg::parse_options strict;
  strict.strict = true;
  try {
    cfg::parse_model(typo, "bad.xml", strict);
    ADD_FAILURE() << "strict checking accepted an unknown attribute";
  } catch (const sidecore::config_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("bad.xml:3: unknown attribute 'ghost'", 0), 0u) << message;
    EXPECT_TRUE(contains(message, "strict checking is on (SIDECORE_STRICT)")) << message;
  }
  // The same switch in the XML.
  const std::string in_xml =
      "<simulation name=\"t\" strict=\"true\">\n<data>\n"
      "<layout name=\"l\" type=\"int\" dimensions=\"4\"/>\n"
      "<variable name=\"v\" layout=\"l\" mesh=\"nowhere\"/>\n</data>\n</simulation>\n";
  const std::string message = error_of(in_xml);
  EXPECT_EQ(message.rfind("bad.xml:4: variable 'v' names undeclared mesh 'nowhere'", 0), 0u)
      << message;
  EXPECT_TRUE(contains(message, "strict=\"true\" on <simulation 't'>")) << message;
  // A configuration without warnings loads either way.
  const std::string clean = with_data("<layout name=\"l\" type=\"int\" dimensions=\"4\"/>\n");
  EXPECT_NO_THROW(cfg::parse_model(clean, "ok.xml", strict));
}

// dimension= for dimensions=: the typo is ignored, so the layout lacks its dimensions, an error
// naming the file and the line.
TEST(config, misspelt_required_attribute_in_a_file_names_the_file) {
  const std::string path = data_dir + "bad_unknown_attribute.xml";
  try {
    cfg::load_model_file(path);
    FAIL() << "no error";
  } catch (const sidecore::config_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(
                  path + ":5: <layout 'row'> is missing the required attribute 'dimensions'", 0),
              0u)
        << e.what();
  }
}

TEST(config, unknown_element_suggests_nearest_name) {
  expect_error(with_data("<layuot name=\"l\" type=\"int\" dimensions=\"4\"/>\n"), 3,
               {"unknown element <layuot> in <data>", "did you mean 'layout'?",
                "valid elements: parameter, layout, variable, group, mesh, curve"});
  expect_error(
      "<simulation name=\"t\">\n<architecture>\n<buffers name=\"b\" size=\"1\"/>\n"
      "</architecture>\n</simulation>",
      3, {"unknown element <buffers>", "did you mean 'buffer'?"});
  expect_error("<simulation name=\"t\">\n\n<strage/>\n</simulation>", 3,
               {"<strage> in <simulation>", "did you mean 'storage'?"});
}

TEST(config, far_fetched_names_get_the_list_without_a_guess) {
  const std::string message = error_of(with_data("<zzzzzzzz/>\n"));
  EXPECT_FALSE(contains(message, "did you mean")) << message;
  EXPECT_TRUE(contains(message, "valid elements: parameter")) << message;
}

TEST(config, wrong_enum_values_list_the_valid_ones) {
  expect_error(with_data("<parameter name=\"p\" type=\"integr\" value=\"1\"/>\n"), 3,
               {"invalid value 'integr' for attribute 'type' of <parameter 'p'>",
                "did you mean 'integer'?", "valid values: short, int, integer, long"});
  expect_error(with_data("<parameter name=\"N\" type=\"int\" value=\"1\"/>\n"
                         "<layout name=\"l\" type=\"int\" dimensions=\"N\"/>\n"
                         "<variable name=\"v\" layout=\"l\" centering=\"cell\"/>\n"),
               5, {"'centering'", "valid values: zonal, nodal"});
  expect_error(
      "<simulation name=\"t\">\n<actions>\n"
      "<event name=\"e\" action=\"f\" scope=\"node\"/>\n</actions>\n</simulation>",
      3, {"invalid value 'node' for attribute 'scope'", "valid values: core, group, bcast"});
  expect_error(
      "<simulation name=\"t\">\n<actions>\n"
      "<event name=\"e\" action=\"f\" execution=\"far\"/>\n</actions>\n</simulation>",
      3, {"'execution'", "valid values: local, remote, coupled"});
  expect_error("<simulation name=\"t\" language=\"rust\">\n</simulation>", 1,
               {"'language'", "valid values: unknown, c, cpp, fortran, python"});
}

TEST(config, buffer_policy_and_timeout_are_checked) {
  expect_error(
      "<simulation name=\"t\">\n<architecture>\n"
      "<buffer name=\"b\" size=\"1024\" policy=\"drop\"/>\n</architecture>\n</simulation>",
      3, {"invalid value 'drop' for attribute 'policy'", "valid values: wait, skip"});
  expect_error(
      "<simulation name=\"t\">\n<architecture>\n"
      "<buffer name=\"b\" size=\"1024\" timeout=\"-1\"/>\n</architecture>\n</simulation>",
      3, {"'timeout'", "seconds >= 0"});
  expect_error(
      "<simulation name=\"t\">\n<architecture>\n"
      "<buffer name=\"b\" size=\"1024\" type=\"mmap\"/>\n</architecture>\n</simulation>",
      3, {"'type'", "valid values: posix, sysv"});
  expect_error(
      "<simulation name=\"t\">\n<architecture>\n"
      "<buffer name=\"b\" size=\"1024-1024\"/>\n</architecture>\n</simulation>",
      3, {"buffer size '1024-1024' is 0", "at least 1"});
}

TEST(config, sizes_with_a_unit_suggest_the_expression_in_bytes) {
  expect_error(
      "<simulation name=\"t\">\n<architecture>\n"
      "<buffer name=\"b\" size=\"64MB\"/>\n</architecture>\n</simulation>",
      3, {"<buffer name=\"b\"> size: the buffer size '64MB' has a unit", "e.g. 64*1024*1024"});
  expect_error(
      "<simulation name=\"t\">\n<architecture>\n"
      "<buffer name=\"b\" size=\"2 GiB\"/>\n</architecture>\n</simulation>",
      3, {"e.g. 2*1024*1024*1024"});
  expect_error(
      "<simulation name=\"t\">\n<architecture>\n"
      "<buffer name=\"b\" size=\"1\" server-memory=\"512k\"/>\n</architecture>\n"
      "</simulation>",
      3,
      {"<buffer name=\"b\"> server-memory: the server-memory size '512k' has a unit",
       "e.g. 512*1024"});
  // Other mistakes in a size say which size it is.
  expect_error(
      "<simulation name=\"t\">\n<architecture>\n"
      "<buffer name=\"b\" size=\"SIZE*2\"/>\n</architecture>\n</simulation>",
      3, {"bad.xml:3: <buffer name=\"b\"> size: unknown parameter 'SIZE'"});
  expect_error(
      "<simulation name=\"t\">\n<architecture>\n"
      "<queue name=\"q\" size=\"10*\"/>\n</architecture>\n</simulation>",
      3, {"bad.xml:3: <queue name=\"q\"> size: syntax error in expression '10*'"});
}

TEST(config, repeated_architecture_element_is_an_error) {
  expect_error(
      "<simulation name=\"t\">\n<architecture>\n<buffer name=\"a\" size=\"1\"/>\n"
      "<buffer name=\"b\" size=\"2\"/>\n</architecture>\n</simulation>",
      4, {"second <buffer> in <architecture>", "at most once"});
  expect_error("<simulation name=\"t\">\n<architecture/>\n<architecture/>\n</simulation>", 3,
               {"second <architecture>", "at most one"});
}

TEST(config, buffer_timeout_zero_means_forever) {
  const cfg::model m = cfg::parse_model(
      "<simulation name=\"t\"><architecture><buffer name=\"b\" size=\"4096\" timeout=\"0\"/>"
      "</architecture></simulation>",
      "inline.xml");
  EXPECT_EQ(m.arch.wait_timeout_seconds, 0.0);
  EXPECT_EQ(m.arch.buffer_size, 4096u);
}

TEST(config, store_types_are_hdf5_or_null) {
  expect_error(
      "<simulation name=\"t\">\n<storage>\n<store name=\"s\" type=\"netcdf\"/>\n"
      "</storage>\n</simulation>",
      3,
      {"invalid value 'netcdf' for attribute 'type' of <store 's'>", "valid values: HDF5, null"});
}

TEST(config, log_levels_are_checked) {
  expect_error("<simulation name=\"t\">\n<log LogLevel=\"verbose\"/>\n</simulation>", 2,
               {"'LogLevel'", "valid values: trace, debug, info, warning, error, fatal"});
  const std::string warning =
      single_warning_of("<simulation name=\"t\">\n<log Filename=\"x\"/>\n</simulation>");
  EXPECT_TRUE(contains(warning, "bad.xml:2: unknown attribute 'Filename'")) << warning;
  EXPECT_TRUE(contains(warning, "did you mean 'FileName'?")) << warning;
}

TEST(config, missing_required_attribute_is_reported) {
  expect_error(with_data("<layout name=\"l\" type=\"int\"/>\n"), 3,
               {"<layout 'l'> is missing the required attribute 'dimensions'",
                "required attributes of <layout>: name, type, dimensions"});
  expect_error(with_data("<parameter name=\"p\" type=\"int\"/>\n"), 3,
               {"missing the required attribute 'value'"});
  expect_error("<simulation>\n</simulation>", 1, {"missing the required attribute 'name'"});
  expect_error("<simulation name=\"t\">\n<actions>\n<event name=\"e\"/>\n</actions>\n</simulation>",
               3, {"missing the required attribute 'action'"});
}

TEST(config, duplicate_names_are_errors) {
  expect_error(with_data("<parameter name=\"N\" type=\"int\" value=\"1\"/>\n"
                         "<parameter name=\"N\" type=\"int\" value=\"2\"/>\n"),
               4, {"parameter 'N' is already defined at line 3", "unique name"});
  expect_error(with_data("<layout name=\"l\" type=\"int\" dimensions=\"1\"/>\n"
                         "<layout name=\"l\" type=\"int\" dimensions=\"2\"/>\n"),
               4, {"layout 'l' is already defined at line 3", "unique name"});
  expect_error(with_data("<layout name=\"l\" type=\"int\" dimensions=\"1\"/>\n"
                         "<group name=\"g\"><variable name=\"v\" layout=\"l\"/></group>\n"
                         "<group name=\"g\">\n<variable name=\"v\" layout=\"l\"/></group>\n"),
               6, {"variable 'g/v' is already defined at line 4", "unique name"});
  expect_error(
      "<simulation name=\"t\">\n<storage>\n<store name=\"s\" type=\"null\"/>\n"
      "<store name=\"s\" type=\"HDF5\"/>\n</storage>\n</simulation>",
      4, {"store 's' is already defined at line 3", "unique name"});
  expect_error(
      "<simulation name=\"t\">\n<actions>\n<event name=\"e\" action=\"f\"/>\n"
      "<event name=\"e\" action=\"g\"/>\n</actions>\n</simulation>",
      4, {"action 'e' is already defined at line 3", "unique name"});
}

TEST(config, same_variable_name_in_different_groups_is_fine) {
  const cfg::model m = cfg::parse_model(
      with_data("<layout name=\"l\" type=\"int\" dimensions=\"1\"/>\n"
                "<variable name=\"v\" layout=\"l\"/>\n"
                "<group name=\"a\"><variable name=\"v\" layout=\"l\"/></group>\n"
                "<group name=\"b\"><group name=\"c\"><variable name=\"v\" layout=\"l\"/></group>"
                "</group>\n"),
      "inline.xml");
  ASSERT_EQ(m.variables.size(), 3u);
  EXPECT_EQ(m.variables[2].name, "b/c/v");
  EXPECT_EQ(m.variables[2].line, 6);
}

TEST(config, variable_with_undefined_layout_is_an_error) {
  expect_error(with_data("<layout name=\"cells\" type=\"int\" dimensions=\"1\"/>\n"
                         "<variable name=\"v\" layout=\"cels\"/>\n"),
               4,
               {"variable 'v' refers to undefined layout 'cels'", "did you mean 'cells'?",
                "valid layouts (declared, or a basic type for a scalar): cells, short, int"});
  expect_error(with_data("<variable name=\"v\" layout=\"dobule\"/>\n"), 3,
               {"undefined layout 'dobule'", "did you mean 'double'?"});
}

// Damaris predefines a one-element layout per basic type, named after the type.
TEST(config, basic_type_names_are_scalar_layouts) {
  const cfg::model m = cfg::parse_model(
      with_data(
          "<variable name=\"n\" layout=\"int\"/>\n"
          "<variable name=\"dt\" layout=\"double\"/>\n"
          "<variable name=\"m\" layout=\"int\"/>\n"
          "<variable name=\"s\" layout=\"short\"/>\n<variable name=\"r\" layout=\"real\"/>\n"
          "<variable name=\"i\" layout=\"integer\"/>\n<variable name=\"l\" layout=\"long\"/>\n"
          "<variable name=\"c\" layout=\"char\"/>\n<variable name=\"f\" layout=\"float\"/>\n"
          "<variable name=\"k\" layout=\"character\"/>\n<variable name=\"b\" layout=\"label\"/>\n"
          "<variable name=\"t\" layout=\"string\"/>\n"),
      "t.xml");
  EXPECT_TRUE(m.warnings.empty()) << m.warnings[0];
  const std::pair<const char*, cfg::element_type> expected[] = {
      {"n", cfg::element_type::int32},   {"dt", cfg::element_type::float64},
      {"m", cfg::element_type::int32},   {"s", cfg::element_type::int16},
      {"r", cfg::element_type::float32}, {"i", cfg::element_type::int32},
      {"l", cfg::element_type::int64},   {"c", cfg::element_type::int8},
      {"f", cfg::element_type::float32}, {"k", cfg::element_type::int8},
      {"b", cfg::element_type::int8},    {"t", cfg::element_type::int8}};
  for (const auto& [name, type] : expected) {
    const cfg::variable& v = m.variables[m.find_variable(name)];
    const cfg::layout& l = m.layouts[v.layout_index];
    EXPECT_EQ(l.type, type) << name;
    ASSERT_EQ(l.dimensions.size(), 1u) << name;
    EXPECT_EQ(l.dimensions[0].evaluate({}), 1) << name;
    EXPECT_TRUE(l.global_dimensions.empty()) << name;
  }
  // One layout per type used, shared by its variables.
  EXPECT_EQ(m.variables[m.find_variable("n")].layout_index,
            m.variables[m.find_variable("m")].layout_index);
  EXPECT_EQ(m.layouts.size(), 11u);
  // A layout the file declares under a type's name is the file's.
  const cfg::model own =
      cfg::parse_model(with_data("<layout name=\"int\" type=\"int\" dimensions=\"3\"/>\n"
                                 "<variable name=\"n\" layout=\"int\"/>\n"),
                       "t.xml");
  EXPECT_EQ(own.layouts[own.variables[0].layout_index].dimensions[0].evaluate({}), 3);
}

TEST(config, variable_with_undefined_store_is_an_error) {
  expect_error(
      "<simulation name=\"t\">\n<data>\n"
      "<layout name=\"l\" type=\"int\" dimensions=\"1\"/>\n"
      "<variable name=\"v\" layout=\"l\" store=\"MyStor\"/>\n</data>\n<storage>\n"
      "<store name=\"MyStore\" type=\"HDF5\"/>\n</storage>\n</simulation>",
      4, {"variable 'v' refers to undefined store 'MyStor'", "did you mean 'MyStore'?"});
  expect_error(with_data("<layout name=\"l\" type=\"int\" dimensions=\"1\"/>\n"
                         "<variable name=\"v\" layout=\"l\" store=\"S\"/>\n"),
               4, {"undefined store 'S'", "no store is defined"});
}

TEST(config, expression_with_undefined_parameter_is_an_error) {
  expect_error(with_data("<parameter name=\"WIDTH\" type=\"int\" value=\"4\"/>\n"
                         "<layout name=\"l\" type=\"int\" dimensions=\"WIDHT,2\"/>\n"),
               4, {"unknown parameter 'WIDHT'", "did you mean 'WIDTH'?"});
}

TEST(config, parameter_read_before_its_declaration_says_so) {
  expect_error(with_data("<parameter name=\"A\" type=\"int\" value=\"B*2\"/>\n"
                         "<parameter name=\"B\" type=\"int\" value=\"4\"/>\n"),
               3,
               {"bad.xml:3: <parameter name=\"A\"> value: parameter 'B' is declared later, "
                "at line 4; a value may only use parameters declared before it"});
  expect_error(with_data("<parameter name=\"A\" type=\"int\" value=\"1\"/>\n"
                         "<parameter name=\"B\" type=\"int\" value=\"B+A\"/>\n"),
               4, {"parameter 'B' refers to itself; a value may only use parameters declared"});
  // Names declared nowhere are still unknown, with a suggestion.
  expect_error(with_data("<parameter name=\"WIDTH\" type=\"int\" value=\"4\"/>\n"
                         "<parameter name=\"B\" type=\"int\" value=\"WIDHT\"/>\n"),
               4, {"unknown parameter 'WIDHT'", "did you mean 'WIDTH'?"});
}

TEST(config, expression_errors_name_element_attribute_and_entry) {
  expect_error(with_data("<layout name=\"grid\" type=\"int\" dimensions=\"4, ,2\"/>\n"), 3,
               {"bad.xml:3: <layout name=\"grid\"> dimensions, entry 2: empty expression"});
  expect_error(with_data("<layout name=\"grid\" type=\"int\" dimensions=\"4,4\" "
                         "global=\"8,N\"/>\n"),
               3, {"bad.xml:3: <layout name=\"grid\"> global, entry 2: unknown parameter 'N'"});
  expect_error(with_data("<layout name=\"grid\" type=\"int\" dimensions=\"4,4\" "
                         "ghosts=\"0:0,1:(\"/>\n"),
               3, {"bad.xml:3: <layout name=\"grid\"> ghosts, entry 2, after: syntax error"});
  // The place is kept for errors met when parameters change after load.
  const cfg::model m =
      cfg::parse_model(with_data("<parameter name=\"N\" type=\"int\" value=\"2\"/>\n"
                                 "<layout name=\"grid\" type=\"int\" dimensions=\"4,8/N\"/>\n"),
                       "sim.xml");
  try {
    m.layouts[0].dimensions[1].evaluate({0});
    ADD_FAILURE() << "no error";
  } catch (const sidecore::config_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("sim.xml:4: <layout name=\"grid\"> dimensions, entry 2: "
                                          "division by zero in expression '8/N'",
                                          0),
              0u)
        << e.what();
  }
}

TEST(config, parameter_values_may_be_expressions_over_earlier_parameters) {
  const cfg::model m =
      cfg::parse_model(with_data("<parameter name=\"A\" type=\"int\" value=\"6\"/>\n"
                                 "<parameter name=\"B\" type=\"long\" value=\"A*A-(A%4)\"/>\n"),
                       "inline.xml");
  EXPECT_EQ(m.parameters[1].int_value, 34);
}

TEST(config, bad_numbers_are_errors) {
  expect_error(with_data("<parameter name=\"N\" type=\"int\" value=\"1.5\"/>\n"), 3,
               {"syntax error in expression '1.5'"});
  expect_error(with_data("<parameter name=\"x\" type=\"double\" value=\"1.5.2\"/>\n"), 3,
               {"invalid value '1.5.2' for parameter 'x'", "floating-point number"});
  expect_error(with_data("<parameter name=\"s\" type=\"short\" value=\"70000\"/>\n"), 3,
               {"does not fit its type short", "from -32768 to 32767"});
  expect_error(
      "<simulation name=\"t\">\n<architecture>\n<domains count=\"two\"/>\n"
      "</architecture>\n</simulation>",
      3, {"invalid value 'two' for attribute 'count' of <domains>", "integer"});
  expect_error(
      "<simulation name=\"t\">\n<architecture>\n<dedicated cores=\"-1\"/>\n"
      "</architecture>\n</simulation>",
      3, {"'cores'", "an integer from 0"});
  expect_error(
      "<simulation name=\"t\">\n<actions>\n"
      "<script name=\"s\" file=\"s.py\" language=\"python\" frequency=\"0\"/>\n"
      "</actions>\n</simulation>",
      3, {"'frequency'", "from 1"});
}

TEST(config, dedicated_cores_and_nodes_are_exclusive) {
  expect_error(
      "<simulation name=\"t\">\n<architecture>\n<dedicated cores=\"1\" nodes=\"1\"/>\n"
      "</architecture>\n</simulation>",
      3, {"both dedicated cores and dedicated nodes", "either cores or nodes"});
}

TEST(config, global_and_ghost_counts_must_match_dimensions) {
  expect_error(with_data("<layout name=\"l\" type=\"int\" dimensions=\"2,3\" global=\"4\"/>\n"), 3,
               {"layout 'l' has 2 dimensions but global='4' has 1", "one global extent per"});
  expect_error(with_data("<layout name=\"l\" type=\"int\" dimensions=\"2,3\" ghosts=\"0:0\"/>\n"),
               3,
               {"layout 'l' has 2 dimensions but ghosts='0:0' has 1 pairs", "one 'before:after'"});
  expect_error(with_data("<layout name=\"l\" type=\"int\" dimensions=\"2,3\" ghosts=\"0,1\"/>\n"),
               3, {"malformed ghost zone '0'", "'before:after'"});
}

TEST(config, dimensions_may_only_use_integer_parameters) {
  expect_error(with_data("<parameter name=\"dx\" type=\"double\" value=\"0.5\"/>\n"
                         "<layout name=\"l\" type=\"int\" dimensions=\"dx*4\"/>\n"),
               4, {"layout 'l' uses parameter 'dx' of type double", "integer type"});
}

TEST(config, dimensions_below_one_name_the_layout) {
  expect_error(with_data("<parameter name=\"N\" type=\"int\" value=\"0\"/>\n"
                         "<layout name=\"empty\" type=\"int\" dimensions=\"4,N\"/>\n"),
               4, {"layout 'empty' has dimension 'N' = 0", "at least 1"});
  expect_error(with_data("<parameter name=\"N\" type=\"int\" value=\"0\"/>\n\n"
                         "<layout name=\"div\" type=\"int\" dimensions=\"4/N\"/>\n"),
               5, {"division by zero in expression '4/N'"});
}

TEST(config, duplicate_store_option_is_an_error) {
  expect_error(
      "<simulation name=\"t\">\n<storage>\n<store name=\"s\" type=\"HDF5\">\n"
      "<option key=\"FileMode\">A</option>\n<option key=\"FileMode\">B</option>\n"
      "</store>\n</storage>\n</simulation>",
      5, {"option 'FileMode' is given twice", "once"});
}

TEST(config, xml_syntax_error_names_file_and_line) {
  const std::string path = data_dir + "bad_syntax.xml";
  try {
    cfg::load_model_file(path);
    FAIL() << "no error";
  } catch (const sidecore::config_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path + ":6: XML syntax error", 0), 0u) << message;
    EXPECT_TRUE(contains(message, "; ")) << message;
  }
  expect_error("<simulation name=\"t\">\n<data>\n</dat>\n</simulation>", 3, {"XML syntax error"});
  expect_error("", 1, {"no root element", "<simulation>"});
}

TEST(config, wrong_root_element_is_an_error) {
  expect_error("<?xml version=\"1.0\"?>\n<damaris name=\"t\"/>", 2,
               {"root element is <damaris>", "expected <simulation>"});
}

TEST(config, missing_file_is_a_config_error) {
  try {
    cfg::load_model_file(data_dir + "does_not_exist.xml");
    FAIL() << "no error";
  } catch (const sidecore::config_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read configuration file '" + data_dir +
                                         "does_not_exist.xml': No such file or directory");
  }
}

TEST(config, directory_given_as_the_file_says_so) {
  // Reading a directory as a file returns nothing on some systems: the reader must not parse
  // that as an empty document ("no root element").
  for (const auto& read : {+[](const std::string& p) { cfg::read_configuration_file(p); },
                           +[](const std::string& p) { cfg::load_model_file(p); }}) {
    try {
      read(data_dir);
      ADD_FAILURE() << "no error";
    } catch (const sidecore::config_error& e) {
      EXPECT_EQ(std::string(e.what()), "cannot read configuration file '" + data_dir +
                                           "': it is a directory; pass the path of the XML "
                                           "file itself");
    }
  }
}

TEST(config, only_regular_files_of_bounded_size_are_read) {
  // /dev/zero never ends and a FIFO nobody writes to never answers: both are refused at once.
  const auto message_of = [](const std::string& path) -> std::string {
    try {
      cfg::read_configuration_file(path);
    } catch (const sidecore::config_error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_TRUE(contains(message_of("/dev/zero"), "it is not a regular file"))
      << message_of("/dev/zero");
  char fifo_dir[] = "/tmp/sidecore-config-fifo-XXXXXX";
  ASSERT_NE(::mkdtemp(fifo_dir), nullptr);
  const std::string fifo = std::string(fifo_dir) + "/sim.xml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string fifo_message = message_of(fifo);
  EXPECT_EQ(fifo_message, "cannot read configuration file '" + fifo +
                              "': it is not a regular file (a FIFO, device or socket); pass an "
                              "XML file, or the XML text itself to damaris_initialize");
  // A file beyond the limit is refused from its size, before it is read.
  const std::string large = std::string(fifo_dir) + "/large.xml";
  {
    std::FILE* f = std::fopen(large.c_str(), "w");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(::ftruncate(::fileno(f), static_cast<off_t>(cfg::max_configuration_bytes + 1)), 0);
    std::fclose(f);
  }
  EXPECT_TRUE(contains(message_of(large), "a configuration may hold at most 67108864 bytes"))
      << message_of(large);
  ::unlink(large.c_str());
  ::unlink(fifo.c_str());
  ::rmdir(fifo_dir);
}

TEST(config, names_are_bounded_and_printable) {
  const std::string huge(5000, 'v');
  const std::string message =
      error_of(with_data("<layout name=\"l\" type=\"int\" dimensions=\"1\"/>\n<variable name=\"" +
                         huge + "\" layout=\"l\"/>\n"));
  EXPECT_TRUE(contains(message, "bad.xml:4: 'name' on <variable> is too long")) << message;
  EXPECT_TRUE(contains(message, "(5000 bytes)")) << message;
  EXPECT_TRUE(contains(message, "at most 4096 bytes")) << message;
  EXPECT_LT(message.size(), 400u) << "the message repeats the whole name";
  expect_error(with_data("<layout name=\"l\" type=\"int\" dimensions=\"1\"/>\n"
                         "<variable name=\"a&#10;b\" layout=\"l\"/>\n"),
               4, {"'name' on <variable> holds a control character", "printable characters"});
  expect_error(with_data("<parameter name=\"p&#1;\" type=\"int\" value=\"1\"/>\n"), 3,
               {"control character"});
  // The simulation name starts every file name.
  expect_error("<simulation name=\"" + std::string(201, 's') + "\">\n</simulation>\n", 1,
               {"the simulation name is too long", "at most 200 bytes"});
  expect_error("<simulation name=\"a/b\">\n</simulation>\n", 1,
               {"the simulation name 'a/b' holds '/' or a control character"});
  EXPECT_EQ(cfg::parse_model("<simulation name=\"" + std::string(200, 's') + "\">\n</simulation>\n",
                             "ok.xml")
                .simulation_name.size(),
            200u);
}

TEST(config, relative_library_paths_are_taken_from_the_configuration_directory) {
  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() / ("sidecore-beside-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "conf" / "lib");
  std::ofstream(root / "conf" / "lib" / "libstore.so") << "";
  const auto xml_with = [&](const std::string& library) {
    const fs::path file = root / "conf" / "sim.xml";
    std::ofstream(file) << "<simulation name=\"t\">\n<storage>\n<store name=\"s\" type=\"mine\" "
                           "library=\""
                        << library << "\"/>\n</storage>\n</simulation>\n";
    return file.string();
  };
  // Beside the XML, whatever the working directory.
  cfg::model m = cfg::load_model_file(xml_with("lib/libstore.so"));
  ASSERT_EQ(m.stores.size(), 1u);
  EXPECT_EQ(m.stores[0].library, (root / "conf" / "lib" / "libstore.so").string());
  EXPECT_TRUE(m.warnings.empty());
  // Only in the working directory: used from there, with a warning naming both places.
  const fs::path here = fs::current_path();
  fs::create_directories(root / "run" / "cwdlib");
  std::ofstream(root / "run" / "cwdlib" / "libstore.so") << "";
  fs::current_path(root / "run");
  m = cfg::load_model_file(xml_with("cwdlib/libstore.so"));
  fs::current_path(here);
  EXPECT_EQ(m.stores[0].library, "cwdlib/libstore.so");
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_TRUE(contains(m.warnings[0],
                       "sim.xml:3: library=\"cwdlib/libstore.so\" is not beside "
                       "the configuration"))
      << m.warnings[0];
  // Bare names are left to the loader's search, absolute paths kept.
  EXPECT_EQ(cfg::load_model_file(xml_with("libstore.so")).stores[0].library, "libstore.so");
  EXPECT_EQ(cfg::load_model_file(xml_with("/opt/x/libstore.so")).stores[0].library,
            "/opt/x/libstore.so");
  fs::remove_all(root);
}

TEST(config, script_time_limit_is_read_and_checked) {
  const auto xml = [](const std::string& limit) {
    return "<simulation name=\"t\">\n<scripts>\n<pyscript name=\"s\" file=\"s.py\" "
           "time-limit=\"" +
           limit + "\"/>\n</scripts>\n</simulation>\n";
  };
  EXPECT_EQ(cfg::parse_model(xml("2.5"), "ok.xml").scripts.at(0).time_limit_seconds, 2.5);
  expect_error(xml("-1"), 3, {"invalid value '-1' for attribute 'time-limit'", "0: no limit"});
  expect_error(xml("soon"), 3, {"attribute 'time-limit'"});
}

TEST(config, configuration_file_is_read_whole) {
  const std::string text = cfg::read_configuration_file(data_dir + "bad_syntax.xml");
  EXPECT_EQ(text.rfind("<?xml version=\"1.0\"?>\n<simulation name=\"broken\">", 0), 0u);
  EXPECT_EQ(text.back(), '\n');
}

TEST(config, harmless_dangling_references_only_warn) {
  const cfg::model m = cfg::parse_model(
      with_data("<layout name=\"l\" type=\"int\" dimensions=\"1\"/>\n"
                "<variable name=\"v\" layout=\"l\" mesh=\"nowhere\" script=\"nothing\"/>\n"
                "<mesh name=\"m\" type=\"point\">\n<coord name=\"v\"/>\n<coord name=\"w\"/>\n"
                "</mesh>\n") +
          "",
      "warn.xml");
  ASSERT_EQ(m.warnings.size(), 3u);
  EXPECT_TRUE(contains(m.warnings[0], "warn.xml:4: variable 'v' names undeclared mesh 'nowhere'"))
      << m.warnings[0];
  EXPECT_TRUE(contains(m.warnings[1],
                       "warn.xml:4: variable 'v' names undeclared script 'nothing'; it is ignored "
                       "(declare it in <scripts> with <pyscript name=\"nothing\" file=\"...\"/>)"))
      << m.warnings[1];
  EXPECT_TRUE(contains(m.warnings[2], "warn.xml:7: mesh coordinate 'w'")) << m.warnings[2];
  EXPECT_EQ(m.variables[0].mesh, "nowhere");
}

TEST(config, visit_warns_and_points_to_paraview) {
  const cfg::model m = cfg::parse_model(
      "<simulation name=\"t\">\n<visit update-frequency=\"2\"><path>/opt</path></visit>\n"
      "</simulation>",
      "warn.xml");
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_TRUE(contains(m.warnings[0], "warn.xml:2: <visit> is not supported")) << m.warnings[0];
  EXPECT_TRUE(contains(m.warnings[0], "<paraview>")) << m.warnings[0];
  EXPECT_FALSE(m.paraview.has_value());
}

TEST(config, paraview_element_as_damaris_reads_it) {
  // <script> inside <paraview> holds a path as text: not the <script> of <actions>.
  const cfg::model m = cfg::parse_model(
      "<simulation name=\"t\">\n"
      "<paraview update-frequency=\"3\" realtime-timestep=\"0.5\" end-iteration=\"12\"\n"
      "          write-vtk=\"0\" write-vtk-binary=\"false\">\n"
      "  <script> /opt/pipelines/image.py </script>\n"
      "  <script>slice.py</script>\n"
      "</paraview>\n</simulation>",
      "pv.xml");
  // No variable has a mesh: the pipelines would receive nothing, which a warning says.
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_TRUE(contains(m.warnings[0], "pv.xml:2: <paraview>: no enabled variable names a"))
      << m.warnings[0];
  ASSERT_TRUE(m.paraview.has_value());
  const cfg::paraview_settings& p = *m.paraview;
  EXPECT_EQ(p.line, 2);
  EXPECT_EQ(p.frequency, 3);
  EXPECT_DOUBLE_EQ(p.realtime_timestep, 0.5);
  EXPECT_EQ(p.end_iteration, 12);
  ASSERT_EQ(p.scripts.size(), 2u);
  EXPECT_EQ(p.scripts[0], "/opt/pipelines/image.py");
  EXPECT_EQ(p.scripts[1], "slice.py");
  EXPECT_EQ(p.script_lines, (std::vector<int>{4, 5}));

  // The pipelines run as one more script action, after the <pyscript>s, on the variables with
  // a mesh and on the variables the meshes are made of.
  const cfg::model v = cfg::parse_model(
      "<simulation name=\"t\"><data>\n"
      "<layout name=\"c\" type=\"float\" dimensions=\"5\"/>\n"
      "<layout name=\"f\" type=\"double\" dimensions=\"4,4\"/>\n"
      "<variable name=\"x\" layout=\"c\"/><variable name=\"y\" layout=\"c\"/>\n"
      "<variable name=\"other\" layout=\"c\"/>\n"
      "<mesh name=\"m\" type=\"rectilinear\"><coord name=\"x\"/><coord name=\"y\"/></mesh>\n"
      "<variable name=\"p\" layout=\"f\" mesh=\"m\"/>\n"
      "</data><paraview update-frequency=\"2\"><script>a.py</script></paraview></simulation>",
      "v.xml");
  EXPECT_TRUE(v.warnings.empty()) << v.warnings.front();
  ASSERT_EQ(v.scripts.size(), 1u);
  EXPECT_TRUE(v.scripts[0].paraview);
  const cfg::action_plugin& action = v.action_plugins.at(v.scripts[0].action);
  EXPECT_EQ(action.frequency, 2);
  std::vector<std::string> names;
  for (std::size_t i : action.variables) names.push_back(v.variables[i].name);
  EXPECT_EQ(names, (std::vector<std::string>{"x", "y", "p"}));

  // Damaris's defaults: every iteration, time = iteration x 0.1, no forced output.
  const cfg::model d = cfg::parse_model(
      "<simulation name=\"t\"><paraview><script>a.py</script></paraview></simulation>", "d.xml");
  ASSERT_TRUE(d.paraview.has_value());
  EXPECT_EQ(d.paraview->frequency, 1);
  EXPECT_DOUBLE_EQ(d.paraview->realtime_timestep, 0.1);
  EXPECT_EQ(d.paraview->end_iteration, 0);
}

TEST(config, paraview_mistakes) {
  const std::string head = "<simulation name=\"t\">\n";
  expect_error(head +
                   "<paraview realtime-timestep=\"0\"><script>a.py</script></paraview>\n"
                   "</simulation>",
               2, {"'realtime-timestep'", "a number > 0"});
  expect_error(head + "<paraview update-frequency=\"0\"/>\n</simulation>", 2,
               {"'update-frequency'"});
  expect_error(head + "<paraview>\n<script>  </script>\n</paraview>\n</simulation>", 3,
               {"empty <script> in <paraview>", "<script>pipeline.py</script>"});
  expect_error(head + "<paraview/>\n<paraview/>\n</simulation>", 3, {"second <paraview> element"});
  expect_error(head + "<paraview>\n<pipeline>a.py</pipeline>\n</paraview>\n</simulation>", 3,
               {"unknown element <pipeline> in <paraview>", "valid elements: script"});
  const cfg::model m = cfg::parse_model(
      head + "<paraview write-vtk=\"1\" frequency=\"2\"/>\n</simulation>", "w.xml");
  ASSERT_EQ(m.warnings.size(), 3u);
  EXPECT_TRUE(contains(m.warnings[0], "w.xml:2: unknown attribute 'frequency' on <paraview>"))
      << m.warnings[0];
  EXPECT_TRUE(contains(m.warnings[1], "write-vtk=\"1\" is ignored")) << m.warnings[1];
  EXPECT_TRUE(contains(m.warnings[2], "names no <script>")) << m.warnings[2];
}

TEST(config, accepted_damaris_attributes_produce_no_warning) {
  const cfg::model m = cfg::parse_model(
      "<simulation name=\"t\" xmlns=\"http://damaris.gforge.inria.fr/damaris/model\" "
      "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"x y\">\n"
      "<architecture><placement start=\"0\" step=\"2\" blocksize=\"1\" mask=\"0x3\"/>"
      "</architecture>\n<data>\n"
      "<layout name=\"l\" type=\"int\" dimensions=\"1\" visualizable=\"false\" comment=\"c\"/>\n"
      "<variable name=\"v\" layout=\"l\" visualizable=\"false\" comment=\"c\" select-mem=\"#\" "
      "select-file=\"v\" select-subset=\"#\" unit=\"K\" type=\"vector\" time-varying=\"0\"/>\n"
      "<curve name=\"c\"><coord name=\"v\"/><coord name=\"v\"/></curve>\n"
      "</data>\n<storage basename=\".\"/>\n"
      "<actions><error event=\"e\" script=\"s\"/></actions>\n</simulation>",
      "inline.xml");
  EXPECT_TRUE(m.warnings.empty()) << m.warnings[0];
  EXPECT_EQ(m.variables[0].kind, "vector");
  EXPECT_FALSE(m.variables[0].time_varying);
}

TEST(config, ghosts_must_leave_an_interior) {
  // Widths adding up to the dimension leave no data to store.
  expect_error(with_data("<parameter name=\"N\" type=\"int\" value=\"6\"/>\n"
                         "<layout name=\"l\" type=\"int\" dimensions=\"4,N\" "
                         "ghosts=\"1:1,N/2:3\"/>\n"),
               4,
               {"layout 'l' has ghosts 3:3 (entry 2 of ghosts: 'N/2:3') on dimension 'N' = 6",
                "leaves no interior", "add up to less than the dimension"});
  expect_error(with_data("<layout name=\"l\" type=\"int\" dimensions=\"4,5\" "
                         "ghosts=\"0:5,0:0\"/>\n"),
               3, {"ghosts 0:5 (entry 1 of ghosts", "leaves no interior"});
  // Fortran layouts are stored reversed; the message counts entries as written.
  expect_error(with_data("<layout name=\"f\" type=\"int\" dimensions=\"8,2\" ghosts=\"1:1,1:1\" "
                         "language=\"fortran\"/>\n"),
               3, {"ghosts 1:1 (entry 2 of ghosts: '1:1') on dimension '2' = 2"});
  const cfg::model m = cfg::parse_model(
      with_data("<layout name=\"l\" type=\"int\" dimensions=\"4,6\" ghosts=\"1:2,0:5\"/>\n"),
      "inline.xml");
  EXPECT_EQ(m.layouts[0].ghosts.size(), 2u);
}

TEST(config, global_extents_must_hold_the_local_interior) {
  expect_error(with_data("<layout name=\"l\" type=\"int\" dimensions=\"10,10\" "
                         "global=\"20,5\"/>\n"),
               3,
               {"layout 'l' has global extent '5' = 5 (entry 2 of global) smaller than its "
                "local dimension '10' = 10",
                "global >= dimensions minus ghosts"});
  expect_error(with_data("<layout name=\"l\" type=\"int\" dimensions=\"10,10\" global=\"7,8\" "
                         "ghosts=\"1:1,1:1\"/>\n"),
               3, {"global extent '7' = 7 (entry 1 of global) smaller than its local interior 8"});
  // Ghost cells need not fit in the global extent, only the interior.
  const cfg::model m = cfg::parse_model(
      with_data("<layout name=\"l\" type=\"int\" dimensions=\"10,10\" global=\"8,8\" "
                "ghosts=\"1:1,1:1\"/>\n"),
      "inline.xml");
  EXPECT_EQ(m.layouts[0].global_dimensions.size(), 2u);
  // A global with another number of dimensions is refused before any value is checked.
  expect_error(with_data("<layout name=\"l\" type=\"int\" dimensions=\"4,4,4\" global=\"1,1\"/>\n"),
               3, {"layout 'l' has 3 dimensions but global='1,1' has 2"});
}

TEST(config, at_most_eight_dimensions) {
  expect_error(with_data("<layout name=\"l\" type=\"int\" dimensions=\"1,2,1,2,1,2,1,2,1\"/>\n"), 3,
               {"layout 'l' has 9 dimensions", "at most 8 dimensions"});
  const cfg::model m = cfg::parse_model(
      with_data("<layout name=\"l\" type=\"int\" dimensions=\"1,2,1,2,1,2,1,2\"/>\n"),
      "inline.xml");
  EXPECT_EQ(m.layouts[0].dimensions.size(), cfg::max_dimensions);
}

TEST(config, attribute_given_twice_is_an_xml_error) {
  expect_error(with_data("<layout name=\"l\" type=\"int\"\n"
                         "        dimensions=\"A\"\n        dimensions=\"B\"/>\n"),
               5,
               {"XML error: attribute 'dimensions' is given twice on <layout 'l'> (first at "
                "line 4)",
                "give each attribute once"});
  // Anywhere in the document, even in sections that are otherwise ignored.
  expect_error(
      "<simulation name=\"t\">\n<visit>\n<path a='1' b=\"2\" a=\"3\"/>\n</visit>\n"
      "</simulation>",
      3, {"attribute 'a' is given twice on <path>"});
}

TEST(config, comment_is_accepted_on_every_element) {
  const cfg::model m = cfg::parse_model(
      "<simulation name=\"t\" comment=\"c\">\n"
      "<architecture comment=\"c\"><domains count=\"1\" comment=\"c\"/>"
      "<dedicated cores=\"0\" comment=\"c\"/><placement comment=\"c\"/>"
      "<buffer name=\"b\" size=\"4096\" comment=\"c\"/><queue name=\"q\" size=\"8\" comment=\"c\"/>"
      "</architecture>\n"
      "<data comment=\"c\"><parameter name=\"N\" type=\"int\" value=\"1\" comment=\"c\"/>"
      "<layout name=\"l\" type=\"int\" dimensions=\"N\" comment=\"c\"/>"
      "<group name=\"g\" comment=\"c\"><variable name=\"v\" layout=\"l\" comment=\"c\"/></group>"
      "<mesh name=\"m\" type=\"point\" comment=\"c\"><coord name=\"g/v\" comment=\"c\"/></mesh>"
      "</data>\n"
      "<storage comment=\"c\"><store name=\"s\" type=\"null\" comment=\"c\">"
      "<option key=\"Delay\" comment=\"c\">0</option></store></storage>\n"
      "<actions comment=\"c\"><event name=\"e\" action=\"f\" comment=\"c\"/></actions>\n"
      "<log LogLevel=\"info\" comment=\"c\"/>\n</simulation>",
      "inline.xml");
  EXPECT_TRUE(m.warnings.empty()) << m.warnings[0];
  EXPECT_EQ(m.arch.buffer_size, 4096u);
}

TEST(config, vectorlength_is_read_and_checked) {
  const cfg::model m = cfg::parse_model(
      with_data("<layout name=\"l\" type=\"double\" dimensions=\"10,3\"/>\n"
                "<variable name=\"velocity\" type=\"vector\" vectorlength=\"3\" layout=\"l\"/>\n"
                "<variable name=\"p\" layout=\"l\"/>\n"),
      "inline.xml");
  EXPECT_EQ(m.variables[0].vector_length, 3);
  EXPECT_EQ(m.variables[1].vector_length, 1);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings[0];
  expect_error(with_data("<layout name=\"l\" type=\"int\" dimensions=\"1\"/>\n"
                         "<variable name=\"v\" layout=\"l\" vectorlength=\"0\"/>\n"),
               4, {"invalid value '0' for attribute 'vectorlength'", "an integer from 1"});
}

TEST(config, text_inside_elements_that_take_none_warns) {
  const cfg::model m = cfg::parse_model(
      "<simulation name=\"t\">\n<architecture>\n<domains count=\"1\">2</domains>\n"
      "</architecture>\n<data>\n<layout name=\"l\" type=\"int\" dimensions=\"1\">\n"
      "  4, 4\n</layout>\n</data>\n<storage><store name=\"s\" type=\"null\">"
      "<option key=\"Delay\">0</option></store></storage>\n"
      "<visit><path>/opt/visit</path></visit>\n</simulation>",
      "text.xml");
  ASSERT_EQ(m.warnings.size(), 3u);  // not the option's value nor <visit>'s content
  EXPECT_EQ(m.warnings[0],
            "text.xml:3: text '2' inside <domains> is ignored; <domains> takes no "
            "text, its settings are attributes");
  EXPECT_TRUE(contains(m.warnings[1], "text.xml:6: text '4, 4' inside <layout 'l'> is ignored"))
      << m.warnings[1];
  EXPECT_TRUE(contains(m.warnings[2], "<visit> is not supported")) << m.warnings[2];
  EXPECT_EQ(m.arch.domains, 1);
}

TEST(config, variable_names_are_single_path_components_group_names_may_be_paths) {
  const std::string layout = "<layout name=\"l\" type=\"int\" dimensions=\"1\"/>\n";
  expect_error(with_data(layout + "<variable name=\"a/b\" layout=\"l\"/>\n"), 4,
               {"variable name 'a/b' contains '/'", "put the variable in a <group>"});
  expect_error(with_data(layout + "<group name=\"g//h\">\n</group>\n"), 4,
               {"group name 'g//h' has an empty part"});
  expect_error(with_data(layout + "<group name=\"/g\">\n</group>\n"), 4,
               {"group name '/g' has an empty part"});
  expect_error(
      with_data(layout + "<group name=\"g\"><variable name=\"..\" layout=\"l\"/></group>\n"), 4,
      {"variable name '..' uses the reserved name '..'"});
  expect_error(with_data(layout + "<group name=\".\"/>\n"), 4,
               {"group name '.' uses the reserved"});
  expect_error(with_data(layout + "<group name=\"a/../b\"/>\n"), 4,
               {"group name 'a/../b' uses the reserved name '..'"});
  // name="a/b" is <group name="a"><group name="b">, as in Damaris.
  const cfg::model m = cfg::parse_model(
      with_data(layout + "<group name=\"fluid/cells\">\n<variable name=\"p\" layout=\"l\"/>\n"
                         "</group>\n<group name=\"fluid\">\n<variable name=\"t\" layout=\"l\"/>\n"
                         "</group>\n"),
      "t.xml");
  EXPECT_NE(m.find_variable("fluid/cells/p"), cfg::model::npos);
  EXPECT_NE(m.find_variable("fluid/t"), cfg::model::npos);
  // Its parts are groups: a variable may not take the name of one.
  expect_error(with_data(layout + "<variable name=\"a\" layout=\"l\"/>\n"
                                  "<group name=\"a/b\">\n<variable name=\"x\" layout=\"l\"/>\n"
                                  "</group>\n"),
               5, {"variable 'a' (line 4) has the full name of group 'a' (line 5)"});
  expect_error(with_data(layout + "<variable name=\" \" layout=\"l\"/>\n"), 4,
               {"empty 'name' on <variable>"});
  expect_error(with_data(layout + "<group name=\"\"/>\n"), 4, {"empty 'name' on <group>"});
}

TEST(config, variable_named_like_a_group_of_variables_is_an_error) {
  const std::string layout = "<layout name=\"l\" type=\"int\" dimensions=\"1\"/>\n";
  // Variable first, then the group: the message names both lines.
  expect_error(with_data(layout + "<variable name=\"coord\" layout=\"l\"/>\n"
                                  "<group name=\"coord\">\n<variable name=\"x\" layout=\"l\"/>\n"
                                  "</group>\n"),
               5,
               {"variable 'coord' (line 4) has the full name of group 'coord' (line 5)",
                "holds variable 'coord/x' (line 6)", "rename the variable or the group"});
  // Nested, group first.
  expect_error(with_data(layout + "<group name=\"a\">\n<group name=\"b\">\n"
                                  "<group name=\"c\"><variable name=\"x\" layout=\"l\"/></group>\n"
                                  "</group>\n<variable name=\"b\" layout=\"l\"/>\n</group>\n"),
               8,
               {"variable 'a/b' (line 8) has the full name of group 'a/b' (line 5)",
                "holds variable 'a/b/c/x' (line 6)"});
  // A group holding no variable becomes no HDF5 group: no clash.
  const cfg::model m = cfg::parse_model(
      with_data(layout + "<variable name=\"coord\" layout=\"l\"/>\n"
                         "<group name=\"coord\"><layout name=\"m\" type=\"int\" dimensions=\"2\"/>"
                         "</group>\n"),
      "inline.xml");
  EXPECT_EQ(m.variables.size(), 1u);
}

TEST(config, event_and_script_names_fit_in_a_signal) {
  const std::string longest(cfg::max_signal_name_length, 'e');
  expect_error("<simulation name=\"t\">\n<actions>\n<event name=\"" + longest +
                   "x\" action=\"f\"/>\n</actions>\n</simulation>",
               3, {"has a name of 64 characters", "at most 63 characters"});
  expect_error("<simulation name=\"t\">\n<scripts>\n<pyscript name=\"" + longest +
                   "x\" file=\"a.py\"/>\n</scripts>\n</simulation>",
               3, {"<pyscript '" + longest + "x'> has a name of 64 characters"});
  const cfg::model m = cfg::parse_model("<simulation name=\"t\"><actions><event name=\"" + longest +
                                            "\" action=\"f\"/></actions></simulation>",
                                        "inline.xml");
  EXPECT_EQ(m.events[0].name.size(), 63u);
}

TEST(config, python_scripts_receive_the_variables_that_name_them) {
  // Damaris separates script names with commas, semicolons or spaces; "#" is none.
  const cfg::model m = cfg::parse_model(
      "<simulation name=\"t\">\n<data>\n<layout name=\"l\" type=\"int\" dimensions=\"1\"/>\n"
      "<variable name=\"a\" layout=\"l\" script=\"s1\"/>\n"
      "<variable name=\"b\" layout=\"l\" script=\"s1; s2 s1\"/>\n"
      "<variable name=\"c\" layout=\"l\" script=\"#\"/>\n"
      "<variable name=\"d\" layout=\"l\" script=\"s2,s3\"/>\n"
      "<variable name=\"e\" layout=\"l\" script=\"s2\" enabled=\"false\"/>\n</data>\n"
      "<actions>\n<plugin name=\"p\" library=\"libp.so\"/>\n"
      "<script name=\"s1\" file=\"a.py\" frequency=\"3\"/>\n</actions>\n"
      "<scripts>\n<pyscript name=\"s2\" file=\"d.py\" keep-workers=\"yes\"/>\n"
      "</scripts>\n</simulation>",
      "py.xml");
  EXPECT_EQ(m.variables[1].scripts, (std::vector<std::string>{"s1", "s2"}));
  EXPECT_TRUE(m.variables[2].scripts.empty());
  ASSERT_EQ(m.scripts.size(), 2u);
  // Action plugins first (events are routed to them by index), then one action per script.
  ASSERT_EQ(m.action_plugins.size(), 3u);
  EXPECT_FALSE(m.action_plugins[0].is_script());
  const cfg::action_plugin& s1 = m.action_plugins[m.scripts[0].action];
  const cfg::action_plugin& s2 = m.action_plugins[m.scripts[1].action];
  EXPECT_EQ(m.scripts[0].action, 1u);
  EXPECT_EQ(s1.script, 0u);
  EXPECT_EQ(s1.frequency, 3);
  EXPECT_EQ(s1.library, "");  // named by the runtime
  EXPECT_EQ(s1.variables, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(s2.variables, (std::vector<std::size_t>{1, 3}));  // e is disabled
  EXPECT_TRUE(m.scripts[1].keep_workers);
  EXPECT_DOUBLE_EQ(m.scripts[1].timeout_seconds, 2.0);
  EXPECT_EQ(m.scripts[1].nthreads, "");  // Damaris's default: one thread per worker
  // An undeclared script is a warning.
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_TRUE(contains(m.warnings[0],
                       "py.xml:7: variable 'd' names undeclared script 's3'; it is ignored "
                       "(did you mean 's1'? valid scripts: s1, s2)") ||
              contains(m.warnings[0], "py.xml:7: variable 'd' names undeclared script 's3'"))
      << m.warnings[0];
}

TEST(config, dask_attributes_of_a_pyscript_are_checked) {
  // Damaris's names and defaults; what Damaris would silently replace by its default is an
  // error naming the line.
  const auto script = [](const std::string& attributes) {
    return "<simulation name=\"t\">\n<scripts>\n<pyscript name=\"s\" file=\"s.py\" " + attributes +
           "/>\n</scripts>\n</simulation>\n";
  };
  const cfg::model m =
      cfg::parse_model(script("scheduler-file=\" s.json \" nthreads=\"OpenMP\" keep-workers=\"No\" "
                              "timeout=\"4.5\""),
                       "py.xml");
  EXPECT_EQ(m.scripts[0].scheduler_file, "s.json");
  EXPECT_EQ(m.scripts[0].nthreads, "openmp");
  EXPECT_FALSE(m.scripts[0].keep_workers);
  EXPECT_DOUBLE_EQ(m.scripts[0].timeout_seconds, 4.5);
  EXPECT_EQ(cfg::parse_model(script("nthreads=\" 3\" keep-workers=\"true\""), "py.xml")
                .scripts[0]
                .nthreads,
            "3");
  expect_error(script("nthreads=\"many\""), 3, {"'nthreads'", "'many'", "integer"});
  expect_error(script("nthreads=\"-1\""), 3, {"'nthreads'", "'-1'"});
  // OPM Flow's template says nthreads="0": Dask's own default, passed on as Damaris does.
  EXPECT_EQ(cfg::parse_model(script("nthreads=\"0\""), "py.xml").scripts[0].nthreads, "0");
  expect_error(script("keep-workers=\"maybe\""), 3, {"'keep-workers'", "yes", "no"});
  expect_error(script("timeout=\"soon\""), 3, {"'timeout'", "'soon'", "a number > 0"});
  expect_error(script("timeout=\"0\""), 3, {"'timeout'", "'0'"});
}

TEST(config, unsupported_sections_point_at_what_does_the_job) {
  const cfg::model m = cfg::parse_model(
      "<simulation name=\"t\">\n<python><path>/usr</path><home>/usr</home></python>\n"
      "<visit/>\n</simulation>",
      "warn.xml");
  ASSERT_EQ(m.warnings.size(), 2u);
  EXPECT_TRUE(contains(m.warnings[0], "warn.xml:2: <python> is not supported")) << m.warnings[0];
  EXPECT_TRUE(contains(m.warnings[0], "<scripts><pyscript>")) << m.warnings[0];
  EXPECT_TRUE(contains(m.warnings[1], "warn.xml:3: <visit> is not supported")) << m.warnings[1];
  EXPECT_TRUE(contains(m.warnings[1], "use <paraview>")) << m.warnings[1];
}

}  // namespace

// Unstructured meshes (Damaris's code_saturne example has this shape): the pieces are variables
// named relative to the mesh's group, then each group outwards; polyhedral_* parts are kept too.
TEST(config, unstructured_mesh_parts_name_variables_from_the_mesh_group_outwards) {
  const cfg::model m =
      cfg::parse_model(with_data("<layout name=\"xyz\" type=\"double\" dimensions=\"3,8\"/>\n"
                                 "<variable name=\"conn\" layout=\"long\"/>\n"
                                 "<group name=\"umesh_vars\">\n"
                                 "  <variable name=\"xyz\" layout=\"xyz\"/>\n"
                                 "  <variable name=\"gid\" layout=\"long\"/>\n"
                                 "  <variable name=\"types\" layout=\"int\"/>\n"
                                 "  <variable name=\"sizes\" layout=\"int\"/>\n"
                                 "  <mesh name=\"umesh\" type=\"unstructured\" topology=\"3\">\n"
                                 "    <coord name=\"umesh_vars/xyz\" unit=\"m\"/>\n"
                                 "    <vertex_global_id name=\"gid\" offset=\"-1\"/>\n"
                                 "    <section_types name=\"types\"/>\n"
                                 "    <section_sizes name=\"umesh_vars/sizes\"/>\n"
                                 "    <section_connectivity name=\"conn\"/>\n"
                                 "    <element_offsets name=\"sizes\"/>\n"
                                 "    <polyhedral_face_offsets name=\"types\" offset=\"2\"/>\n"
                                 "  </mesh>\n"
                                 "</group>\n"),
                       "t.xml");
  ASSERT_EQ(m.meshes.size(), 1u);
  const cfg::mesh& mesh = m.meshes[0];
  EXPECT_EQ(mesh.name, "umesh");
  EXPECT_EQ(mesh.type, "unstructured");
  EXPECT_EQ(mesh.topology, 3);
  ASSERT_EQ(mesh.coordinates.size(), 1u);
  EXPECT_EQ(mesh.coordinates[0].name, "umesh_vars/xyz");
  const std::vector<std::tuple<std::string, std::string, std::int64_t>> expected = {
      {"vertex_global_id", "umesh_vars/gid", -1},
      {"section_types", "umesh_vars/types", 0},
      {"section_sizes", "umesh_vars/sizes", 0},
      {"section_connectivity", "conn", 0},
      {"element_offsets", "umesh_vars/sizes", 0},
      {"polyhedral_face_offsets", "umesh_vars/types", 2}};
  ASSERT_EQ(mesh.parts.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(mesh.parts[i].role, std::get<0>(expected[i]));
    EXPECT_EQ(mesh.parts[i].variable, std::get<1>(expected[i]));
    EXPECT_EQ(mesh.parts[i].offset, std::get<2>(expected[i]));
  }
  // An unknown child is refused (a mesh piece left out would be misread), with the valid names;
  // a piece naming no variable is a warning and is left out.
  expect_error(with_data("<mesh name=\"u\" type=\"unstructured\">\n<coord name=\"x\"/>\n"
                         "<section_vertices name=\"x\"/>\n</mesh>\n"),
               5, {"unknown element <section_vertices> in <mesh>", "element_offsets"});
  const cfg::model dangling =
      cfg::parse_model(with_data("<variable name=\"x\" layout=\"double\"/>\n"
                                 "<mesh name=\"u\" type=\"unstructured\">\n<coord name=\"x\"/>\n"
                                 "<section_types name=\"nowhere\"/>\n</mesh>\n"),
                       "t.xml");
  EXPECT_TRUE(dangling.meshes[0].parts.empty());
  ASSERT_EQ(dangling.warnings.size(), 1u);
  EXPECT_TRUE(contains(dangling.warnings[0],
                       "t.xml:6: <section_types> of mesh 'u' names "
                       "'nowhere', which is not a declared variable"))
      << dangling.warnings[0];
}

// Layouts declared in a group are named by their path, as in Damaris; a variable finds its
// layout by full name, or from its own group outwards (Damaris's example.xml does both).
TEST(config, layouts_in_groups_are_found_from_the_variable_group_outwards) {
  const cfg::model m = cfg::parse_model(
      with_data("<layout name=\"row\" type=\"float\" dimensions=\"4\"/>\n"
                "<group name=\"coordinates\">\n"
                "  <layout name=\"row\" type=\"double\" dimensions=\"2\"/>\n"
                "  <layout name=\"rmeshX\" type=\"int\" dimensions=\"3\"/>\n"
                "  <variable name=\"x2d\" layout=\"coordinates/rmeshX\"/>\n"
                "  <variable name=\"y2d\" layout=\"row\"/>\n"
                "  <group name=\"inner\"><variable name=\"z\" layout=\"rmeshX\"/></group>\n"
                "</group>\n"
                "<variable name=\"top\" layout=\"row\"/>\n"
                "<variable name=\"legacy\" layout=\"rmeshX\"/>\n"),
      "t.xml");
  const auto layout_of = [&](const char* variable) {
    return m.layouts[m.variables[m.find_variable(variable)].layout_index].name;
  };
  EXPECT_EQ(layout_of("coordinates/x2d"), "coordinates/rmeshX");
  EXPECT_EQ(layout_of("coordinates/y2d"), "coordinates/row");         // the group's own first
  EXPECT_EQ(layout_of("coordinates/inner/z"), "coordinates/rmeshX");  // then outwards
  EXPECT_EQ(layout_of("top"), "row");
  EXPECT_EQ(layout_of("legacy"), "coordinates/rmeshX");  // by its own name, from anywhere
  expect_error(with_data("<layout name=\"a/b\" type=\"int\" dimensions=\"1\"/>\n"), 3,
               {"layout name 'a/b' contains '/'", "inside a <group>"});
}

// The shape of a production reservoir simulator's configuration: every piece its mesh model has
// listed, the unused ones named "#", polyhedral pieces, group names that are paths, a parameter
// declared after the layouts that use it, multi-line comments and commented-out sections.
TEST(config, production_style_unstructured_mesh_with_unused_pieces_loads) {
  const cfg::model m = cfg::parse_model(
      "<simulation name=\"res\" language=\"c\">\n"
      "<architecture><domains count=\"1\"/><dedicated cores=\"1\" nodes=\"0\"/>\n"
      "<buffer name=\"b\" size=\"1048576\"/><placement /><queue name=\"q\" size=\"300\"/>\n"
      "</architecture>\n<data>\n"
      "<layout name=\"coords\" type=\"double\" dimensions=\"n_coords\"/>\n"
      "<layout name=\"offs\" type=\"int\" dimensions=\"n_cells + 1\"/>\n"
      "<layout name=\"kinds\" type=\"char\" dimensions=\"n_cells\"/>\n"
      "<parameter name=\"n_coords\" type=\"int\" value=\"1\"/>\n"
      "<parameter name=\"n_cells\" type=\"int\" value=\"1\"/>\n"
      "<group name=\"coordset/coords/values\">\n"
      "  <variable name=\"x\" layout=\"coords\" time-varying=\"false\" script=\"#\"/>\n"
      "  <variable name=\"y\" layout=\"coords\" time-varying=\"false\"/>\n"
      "</group>\n"
      "<group name=\"topologies/topo/elements\">\n"
      "  <variable name=\"connectivity\" layout=\"int\"/>\n"
      "  <variable name=\"offsets\" layout=\"offs\"/>\n"
      "  <variable name=\"types\" layout=\"kinds\"/>\n"
      "</group>\n"
      "<mesh name=\"us_mesh\" type=\"unstructured\" topology=\"3\" time-varying=\"false\"\n"
      "      comment=\"spans\n two lines\">\n"
      "  <coord name=\"coordset/coords/values/x\" unit=\"m\"/>\n"
      "  <coord name=\"coordset/coords/values/y\" unit=\"m\"/>\n"
      "  <vertex_global_id name=\"#\" offset=\"0\"/>\n"
      "  <element_offsets name=\"topologies/topo/elements/offsets\"/>\n"
      "  <section_types name=\"topologies/topo/elements/types\"/>\n"
      "  <section_sizes name=\"#\"/>\n"
      "  <section_connectivity name=\"topologies/topo/elements/connectivity\"/>\n"
      "  <polyhedral_cell_faces_connectivity name=\"#\"/>\n"
      "  <polyhedral_n_faces_per_cell name=\"#\"/>\n"
      "</mesh>\n</data>\n"
      "<scripts>\n<!--pyscript name=\"PythonScript\" file=\"x.py\" language=\"python\" /-->\n"
      "</scripts>\n<actions>\n</actions>\n"
      "<log FileName=\"out/log/res\" RotationSize=\"5\" LogFormat=\"[%TimeStamp%]: %Message%\" "
      "Flush=\"false\" LogLevel=\"info\"/>\n</simulation>\n",
      "res.xml");
  EXPECT_TRUE(m.warnings.empty()) << m.warnings[0];
  ASSERT_EQ(m.meshes.size(), 1u);
  const cfg::mesh& mesh = m.meshes[0];
  EXPECT_EQ(mesh.coordinates.size(), 2u);
  ASSERT_EQ(mesh.parts.size(), 3u);
  EXPECT_EQ(mesh.parts[0].role, "element_offsets");
  EXPECT_EQ(mesh.parts[0].variable, "topologies/topo/elements/offsets");
  EXPECT_EQ(mesh.parts[2].variable, "topologies/topo/elements/connectivity");
  const cfg::layout& offs = m.layouts[m.find_layout("offs")];
  EXPECT_EQ(offs.dimensions[0].evaluate({1, 7}), 8);
}

// Sizes are checked with overflow-safe arithmetic when the file is read.
TEST(config, sizes_that_do_not_fit_in_64_bits_are_refused_with_the_line) {
  expect_error(with_data("<parameter name=\"N\" type=\"int\" value=\"65536\"/>\n"
                         "<layout name=\"l\" type=\"double\" dimensions=\"N,N,N,N\"/>\n"),
               4, {"layout 'l' holds more than 2^64 bytes", "4 dimensions of double"});
  expect_error(
      with_data("<parameter name=\"N\" type=\"long\" value=\"2147483648\"/>\n"
                "<layout name=\"l\" type=\"double\" dimensions=\"2,2\" global=\"N,N*4\"/>\n"),
      4, {"global extents of more than 2^64 bytes"});
  expect_error(
      "<simulation name=\"t\">\n<architecture>\n<domains count=\"100000000\"/>\n"
      "</architecture>\n</simulation>",
      3, {"'count' of <domains>", "from 1 to 1048576"});
  EXPECT_EQ(cfg::array_bytes({65536, 65536, 65536}, 8), std::optional<std::uint64_t>(1ull << 51));
  EXPECT_FALSE(cfg::array_bytes({65536, 65536, 65536, 65536}, 8));
}

// Hostile nesting (thousands of <group> levels) is refused with the line, not a stack overflow.
TEST(config, deeply_nested_elements_are_refused_without_overflowing_the_stack) {
  std::string xml = "<simulation name=\"t\">\n<data>\n";
  for (int i = 0; i < 20000; ++i) xml += "<group name=\"g\">";
  for (int i = 0; i < 20000; ++i) xml += "</group>";
  xml += "\n</data>\n</simulation>\n";
  expect_error(xml, 3, {"elements nested 101 levels deep", "at most 100 levels"});
  // 98 levels of groups (with <simulation> and <data>) are fine.
  std::string fine = "<simulation name=\"t\">\n<data>\n";
  for (int i = 0; i < 97; ++i) fine += "<group name=\"g\">";
  fine += "<variable name=\"v\" layout=\"int\"/>";
  for (int i = 0; i < 97; ++i) fine += "</group>";
  fine += "\n</data>\n</simulation>\n";
  const cfg::model m = cfg::parse_model(fine, "fine.xml");
  EXPECT_EQ(m.variables.size(), 1u);
}

// PDI's Damaris plugin (for Damaris 1.11/1.12) generates configurations with a top-level
// <plugins> section after <scripts>, left empty when nothing goes in it: that loads cleanly.
TEST(config, empty_damaris_plugins_section_loads_without_a_warning) {
  const std::string xml =
      "<simulation name=\"t\" language=\"c\">\n<data>\n"
      "<layout name=\"l\" type=\"int\" dimensions=\"4\"/>\n"
      "<variable name=\"v\" layout=\"l\"/>\n</data>\n<storage>\n</storage>\n"
      "<actions>\n</actions>\n<scripts>\n</scripts>\n<plugins>\n     \n</plugins>\n"
      "<log FileName=\"log/t\" RotationSize=\"5\" LogFormat=\"[%TimeStamp%]: %Message%\" "
      "Flush=\"true\" LogLevel=\"info\"/>\n</simulation>\n";
  cfg::parse_options strict;
  strict.strict = true;
  const cfg::model m = cfg::parse_model(xml, "ok.xml", strict);
  EXPECT_TRUE(m.warnings.empty());
  ASSERT_EQ(m.variables.size(), 1u);
  EXPECT_TRUE(m.log.flush);
}

// A Damaris C++ plugin named in <plugins> cannot run in Sidecore: never dropped silently (a
// warning naming the line and the plugin), an error under strict checking.
TEST(config, plugin_in_damaris_plugins_section_warns_and_is_refused_when_strict) {
  const std::string xml =
      "<simulation name=\"t\">\n<data>\n</data>\n<plugins>\n"
      "  <plugin name=\"pdi\" library=\"libdamaris_pdi.so\">\n"
      "    <forwarding_mode value=\"batched\"/>\n  </plugin>\n</plugins>\n</simulation>\n";
  const std::string warning = single_warning_of(xml);
  EXPECT_EQ(warning.rfind("bad.xml:5: <plugin> 'pdi' in <plugins> is a Damaris C++ server "
                          "plugin, which Sidecore cannot load: it is ignored; ",
                          0),
            0u)
      << warning;
  cfg::parse_options strict;
  strict.strict = true;
  try {
    cfg::parse_model(xml, "bad.xml", strict);
    ADD_FAILURE() << "strict checking accepted a Damaris plugin it cannot load";
  } catch (const sidecore::config_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("bad.xml:5: <plugin> 'pdi' in <plugins>", 0), 0u) << message;
    EXPECT_TRUE(contains(message, "strict checking is on")) << message;
  }
  // Attributes on the section itself are not Damaris's: the usual unknown-attribute warning.
  const std::string attributed = single_warning_of(
      "<simulation name=\"t\">\n<data>\n</data>\n<plugins mode=\"x\"/>\n</simulation>\n");
  EXPECT_EQ(attributed.rfind("bad.xml:4: unknown attribute 'mode' on <plugins>", 0), 0u)
      << attributed;
}
