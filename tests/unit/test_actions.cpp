// Action plugins and the action registry: the XML (<actions><plugin>, <event plugin>), the
// loader's errors, what a plugin receives (blocks of its variables at its frequency, after the
// stores; events routed to it) and how its failures are reported, through the plugins of
// tests/plugins.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "config/model.hpp"
#include "plugins/action_plugin.hpp"
#include "storing/actions.hpp"
#include "storing/iteration_processor.hpp"
#include "unit_support.hpp"

namespace sidecore {
namespace {

using testing_support::contains;
using testing_support::start_mpi;

// A configuration whose <plugin> is on line 11 and whose events follow it, one a line.
std::string configuration(const std::string& plugin_attributes, const std::string& options = {},
                          const std::string& events = {}) {
  return "<simulation name=\"sim\">\n"                                   // 1
         "<data>\n"                                                      // 2
         "<layout name=\"grid\" type=\"double\" dimensions=\"2,3\"/>\n"  // 3
         "<layout name=\"count\" type=\"int\" dimensions=\"4\"/>\n"      // 4
         "<group name=\"fluid\">\n"                                      // 5
         "<variable name=\"pressure\" layout=\"grid\"/>\n"               // 6
         "</group>\n"                                                    // 7
         "<variable name=\"cells\" layout=\"count\"/>\n"                 // 8
         "</data>\n"                                                     // 9
         "<actions>\n"                                                   // 10
         "<plugin name=\"p\" " +
         plugin_attributes + ">" + options + "</plugin>\n" +  // 11
         events +                                             // 12...
         "</actions>\n"
         "</simulation>\n";
}

std::string library(const char* path) { return "library=\"" + std::string(path) + "\""; }

std::string parse_error(const std::string& xml) {
  try {
    config::parse_model(xml, "actions.xml");
  } catch (const config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no configuration error for\n" << xml;
  return {};
}

// The probe action plugin's record of the calls it received (loaded once per process).
class action_log {
 public:
  action_log() : m_handle(::dlopen(SIDECORE_TEST_PROBE_ACTION_PLUGIN, RTLD_NOW | RTLD_LOCAL)) {
    if (m_handle == nullptr) throw std::runtime_error("cannot open the probe action plugin");
    m_text = reinterpret_cast<const char* (*)()>(::dlsym(m_handle, "sidecore_test_action_log"));
    m_clear = reinterpret_cast<void (*)()>(::dlsym(m_handle, "sidecore_test_action_clear"));
    if (m_text == nullptr || m_clear == nullptr) throw std::runtime_error("no log symbols");
    m_clear();
  }
  ~action_log() { ::dlclose(m_handle); }
  action_log(const action_log&) = delete;
  action_log& operator=(const action_log&) = delete;
  std::string text() const { return m_text(); }

 private:
  void* m_handle;
  const char* (*m_text)() = nullptr;
  void (*m_clear)() = nullptr;
};

std::string load_error(const std::string& xml) {
  start_mpi();
  const config::model model = config::parse_model(xml, "actions.xml");
  plugins::action_context context;
  context.model = &model;
  context.settings = &model.action_plugins.at(0);
  context.comm = MPI_COMM_SELF;
  try {
    plugins::make_action(context);
  } catch (const config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no configuration error when loading the plugin of\n" << xml;
  return {};
}

TEST(action_config, plugin_element_gives_library_frequency_variables_and_options) {
  const config::model model = config::parse_model(
      configuration("library=\"libx.so\" frequency=\"3\" variables=\" cells , fluid/pressure\"",
                    "<option key=\"Out\"> a.csv </option><option key=\"N\">2</option>",
                    "<event name=\"e\" plugin=\"p\" scope=\"group\"/>\n"),
      "actions.xml");
  ASSERT_EQ(model.action_plugins.size(), 1u);
  const config::action_plugin& p = model.action_plugins[0];
  EXPECT_EQ(p.name, "p");
  EXPECT_EQ(p.library, "libx.so");
  EXPECT_EQ(p.frequency, 3);
  EXPECT_EQ(p.line, 11);
  // In model order (pressure is declared first), whatever the order of the list.
  EXPECT_EQ(p.variables, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(p.options,
            (std::vector<std::pair<std::string, std::string>>{{"Out", "a.csv"}, {"N", "2"}}));
  ASSERT_EQ(model.events.size(), 1u);
  EXPECT_EQ(model.events[0].plugin, 0u);
  EXPECT_EQ(model.events[0].action, "");
  EXPECT_EQ(model.events[0].scope, config::scope::group);
}

TEST(action_config, defaults_every_enabled_variable_and_events_may_come_first) {
  const std::string xml =
      "<simulation name=\"sim\"><data>"
      "<variable name=\"a\" layout=\"int\"/><variable name=\"off\" layout=\"int\" "
      "enabled=\"false\"/><variable name=\"b\" layout=\"int\"/></data>"
      "<actions><event name=\"first\" plugin=\"late\"/><event name=\"f\" action=\"fn\"/>"
      "<plugin name=\"late\" library=\"libx.so\" frequency=\"0\"/></actions></simulation>";
  const config::model model = config::parse_model(xml, "actions.xml");
  ASSERT_EQ(model.action_plugins.size(), 1u);
  EXPECT_EQ(model.action_plugins[0].variables, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(model.action_plugins[0].frequency, 0);
  EXPECT_EQ(model.events[0].plugin, 0u);
  EXPECT_EQ(model.events[1].plugin, config::event::no_plugin);  // Damaris events as before
  EXPECT_EQ(model.events[1].action, "fn");
}

TEST(action_config, mistakes_name_file_line_and_what_is_valid) {
  std::string m = parse_error(configuration("library=\"libx.so\" variables=\"fluid/presure\""));
  EXPECT_EQ(m.rfind("actions.xml:11: ", 0), 0u) << m;
  EXPECT_TRUE(contains(m, "undefined variable 'fluid/presure'")) << m;
  EXPECT_TRUE(contains(m, "fluid/pressure")) << m;  // the suggestion

  m = parse_error(configuration("library=\"libx.so\" variables=\"cells,cells\""));
  EXPECT_TRUE(contains(m, "names the variable 'cells' twice")) << m;

  m = parse_error(configuration("library=\"libx.so\" frequency=\"-1\""));
  EXPECT_EQ(m.rfind("actions.xml:11: ", 0), 0u) << m;

  m = parse_error(configuration(""));
  EXPECT_TRUE(contains(m, "missing the required attribute 'library'")) << m;

  m = parse_error(configuration("library=\"libx.so\"", "", "<event name=\"e\" plugin=\"q\"/>\n"));
  EXPECT_EQ(m.rfind("actions.xml:12: ", 0), 0u) << m;
  EXPECT_TRUE(contains(m, "undefined action plugin 'q'")) << m;

  m = parse_error(
      configuration("library=\"libx.so\"", "", "<event name=\"e\" plugin=\"p\" action=\"f\"/>\n"));
  EXPECT_TRUE(contains(m, "not both")) << m;

  m = parse_error(configuration("library=\"libx.so\"", "",
                                "<event name=\"e\" plugin=\"p\" execution=\"local\"/>\n"));
  EXPECT_TRUE(contains(m, "execution=\"local\"")) << m;

  m = parse_error(configuration("library=\"libx.so\"", "", "<event name=\"e\"/>\n"));
  EXPECT_EQ(m.rfind("actions.xml:12: ", 0), 0u) << m;
  EXPECT_TRUE(contains(m, "missing the required attribute 'action'")) << m;
  EXPECT_TRUE(contains(m, "plugin=")) << m;

  m = parse_error(
      configuration("library=\"libx.so\"", "", "<plugin name=\"p\" library=\"liby.so\"/>\n"));
  EXPECT_TRUE(contains(m, "action plugin 'p' is already defined at line 11")) << m;
}

TEST(action_loader, missing_library_is_a_config_error_naming_file_line_and_library) {
  const std::string m = load_error(configuration("library=\"/nonexistent/libstats.so\""));
  EXPECT_EQ(m.rfind("actions.xml:11: action plugin \"p\": ", 0), 0u) << m;
  EXPECT_TRUE(contains(m, "cannot load the plugin library '/nonexistent/libstats.so'")) << m;
}

TEST(action_loader, store_plugin_or_other_library_is_not_an_action_plugin) {
  for (const char* path : {SIDECORE_TEST_NO_SYMBOL_PLUGIN, SIDECORE_TEST_PROBE_PLUGIN}) {
    const std::string m = load_error(configuration(library(path)));
    EXPECT_EQ(m.rfind("actions.xml:11: action plugin \"p\": ", 0), 0u) << m;
    EXPECT_TRUE(contains(m, "is not a Sidecore action plugin")) << m;
    EXPECT_TRUE(contains(m, "it defines no sidecore_action_plugin()")) << m;
  }
}

TEST(action_loader, other_abi_version_is_a_config_error_naming_both_versions) {
  const std::string m = load_error(configuration(library(SIDECORE_TEST_OLD_ABI_ACTION_PLUGIN)));
  EXPECT_EQ(m.rfind("actions.xml:11: action plugin \"p\": ", 0), 0u) << m;
  EXPECT_TRUE(contains(m, "has action plugin ABI version 2, this Sidecore expects 1")) << m;
  EXPECT_TRUE(contains(m, SIDECORE_TEST_OLD_ABI_ACTION_PLUGIN)) << m;
}

TEST(action_loader, options_refused_by_the_plugin_are_a_config_error) {
  action_log log;
  const std::string m = load_error(configuration(library(SIDECORE_TEST_PROBE_ACTION_PLUGIN),
                                                 "<option key=\"FailCreate\">config</option>"));
  EXPECT_EQ(m.rfind("actions.xml:11: action plugin \"p\": plugin 'probe' (", 0), 0u) << m;
  EXPECT_TRUE(contains(m, "create() failed with code 2: option FailCreate asks")) << m;
  EXPECT_FALSE(contains(log.text(), "destroy")) << log.text();  // nothing was created
}

// A processor of one writer with two clients, and the probe action plugin.
class action_processor : public ::testing::Test {
 protected:
  void SetUp() override { start_mpi(); }

  storing::stored_block block(int variable, int source, int iteration, const void* data,
                              std::uint64_t bytes, std::vector<std::int64_t> dims) {
    storing::stored_block b;
    b.variable = variable;
    b.view.source = source;
    b.view.iteration = iteration;
    b.view.data = data;
    b.view.bytes = bytes;
    b.view.dims = std::move(dims);
    return b;
  }

  // Both clients write both variables and end the iteration.
  void write_iteration(storing::iteration_processor& processor, int it) {
    for (int source = 1; source >= 0; --source) {
      processor.add_block(block(1, source, it, &m_cells[source], 16, {4}));
      processor.add_block(block(0, source, it, &m_pressure[source], 48, {2, 3}));
      processor.end_iteration(source, it, false);
    }
  }

  double m_pressure[2][6] = {{10, 11, 12, 13, 14, 15}, {20, 21, 22, 23, 24, 25}};
  std::int32_t m_cells[2][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}};
};

TEST_F(action_processor, blocks_of_its_variables_at_its_frequency_and_routed_events) {
  action_log log;
  const config::model model =
      config::parse_model(configuration(library(SIDECORE_TEST_PROBE_ACTION_PLUGIN) +
                                            " frequency=\"2\" variables=\"fluid/pressure\"",
                                        "<option key=\"K\">v</option>",
                                        "<event name=\"mark\" plugin=\"p\" scope=\"bcast\"/>\n"),
                          "actions.xml");
  {
    storing::iteration_processor processor(model, MPI_COMM_SELF, 2, nullptr);
    for (int it = 0; it < 3; ++it) write_iteration(processor, it);
    storing::action_registry::instance().run(model.events[0], model.file, 1, 2);
    processor.finish();
    EXPECT_EQ(processor.counters().store_failures, 0u);
  }
  EXPECT_EQ(log.text(),
            "create sim=sim name=p frequency=2 writer=0/1 variables=fluid/pressure options=K:v\n"
            "iteration 0 incomplete=0 variables=fluid/pressure\n"
            "  block fluid/pressure P0 B0 it=0 first=10\n"
            "  block fluid/pressure P1 B0 it=0 first=20\n"
            "iteration 2 incomplete=0 variables=fluid/pressure\n"
            "  block fluid/pressure P0 B0 it=2 first=10\n"
            "  block fluid/pressure P1 B0 it=2 first=20\n"
            "event mark source=1 iteration=2 scope=2\n"
            "finish\n"
            "destroy\n");
}

TEST_F(action_processor, failures_are_counted_and_reported_like_store_failures) {
  action_log log;
  const config::model model =
      config::parse_model(configuration(library(SIDECORE_TEST_PROBE_ACTION_PLUGIN),
                                        "<option key=\"FailIteration\">1</option>"
                                        "<option key=\"FailEvent\">bad</option>",
                                        "<event name=\"bad\" plugin=\"p\"/>\n"),
                          "actions.xml");
  const long registry_failures = storing::action_registry::instance().failures();
  storing::iteration_processor processor(model, MPI_COMM_SELF, 2, nullptr);
  for (int it = 0; it < 3; ++it) write_iteration(processor, it);
  EXPECT_EQ(processor.counters().store_failures, 1u);
  std::string failure = processor.take_failure();
  EXPECT_TRUE(contains(failure, "iteration 1, action plugin 'p': plugin 'probe' (")) << failure;
  EXPECT_TRUE(contains(failure, "on_iteration() failed with code 1: FailIteration")) << failure;
  EXPECT_EQ(processor.stored_iterations(), 3);  // the next iterations still ran
  EXPECT_TRUE(contains(log.text(), "iteration 2 incomplete=0")) << log.text();

  storing::action_registry::instance().run(model.events[0], model.file, 0, 2);
  EXPECT_EQ(processor.counters().store_failures, 2u);
  failure = processor.take_failure();
  EXPECT_TRUE(contains(failure, "event 'bad' (client 0, iteration 2), action plugin 'p'"))
      << failure;
  EXPECT_TRUE(contains(failure, "on_event() failed with code 1: FailEvent")) << failure;
  // The plugin's own failures are its processor's, not the registry's.
  EXPECT_EQ(storing::action_registry::instance().failures(), registry_failures);
}

TEST_F(action_processor, events_of_a_plugin_that_does_not_run_here_are_registry_failures) {
  action_log log;
  const config::model model =
      config::parse_model(configuration(library(SIDECORE_TEST_PROBE_ACTION_PLUGIN), "",
                                        "<event name=\"orphan\" plugin=\"p\"/>\n"),
                          "actions.xml");
  { storing::iteration_processor processor(model, MPI_COMM_SELF, 1, nullptr); }
  // The processor is gone: so is the route (a client process never had one).
  const long before = storing::action_registry::instance().failures();
  storing::action_registry::instance().run(model.events[0], model.file, 0, 0);
  EXPECT_EQ(storing::action_registry::instance().failures(), before + 1);
  EXPECT_FALSE(contains(log.text(), "event orphan")) << log.text();
}

TEST(action_registry, the_latest_route_is_in_force_until_unrouted) {
  config::event e;
  e.name = "routed";
  e.plugin = 0;
  std::vector<int> seen;
  auto& registry = storing::action_registry::instance();
  int first = 0, second = 0;
  registry.route(&e, &first, [&](const config::event&, int, int) { seen.push_back(1); });
  registry.route(&e, &second, [&](const config::event&, int, int) { seen.push_back(2); });
  registry.run(e, "x.xml", 0, 0);
  registry.unroute(&e, &first);  // not the one in force: nothing changes
  registry.run(e, "x.xml", 0, 0);
  registry.unroute(&e, &second);
  const long before = registry.failures();
  registry.run(e, "x.xml", 0, 0);  // nobody: a failure, counted
  EXPECT_EQ(seen, (std::vector<int>{2, 2}));
  EXPECT_EQ(registry.failures(), before + 1);
}

}  // namespace
}  // namespace sidecore
