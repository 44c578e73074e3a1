// What the runtime adds to each <pyscript>'s action (plugins/python_scripts.hpp): the runner
// library and its options in a build with Python, the scripts removed otherwise.
#include <gtest/gtest.h>

#include <string>

#include "config/model.hpp"
#include "plugins/python_scripts.hpp"

namespace sidecore {
namespace {

namespace cfg = config;

std::string option(const cfg::action_plugin& action, const std::string& key) {
  for (const auto& [k, v] : action.options)
    if (k == key) return v;
  return "<absent>";
}

cfg::model scripted_model() {
  return cfg::parse_model(
      "<simulation name=\"sim\">\n<data>\n"
      "<layout name=\"c\" type=\"int\" dimensions=\"2,3\"/>\n"
      "<layout name=\"f\" type=\"float\" dimensions=\"3,2\" language=\"fortran\"/>\n"
      "<variable name=\"a\" layout=\"c\" script=\"s1\"/>\n"
      "<variable name=\"b\" layout=\"f\" script=\"s1,s2\"/>\n</data>\n"
      "<actions>\n<plugin name=\"p\" library=\"libp.so\"/>\n</actions>\n"
      "<scripts>\n<pyscript name=\"s1\" file=\"one.py\" language=\"python\" frequency=\"2\"/>\n"
      "<pyscript name=\"s2\" file=\"two.py\" scheduler-file=\"dask.json\" timeout=\"5\" "
      "dask-keep=\"7\"/>\n</scripts>\n</simulation>",
      "scripts.xml");
}

plugins::script_environment cores_environment() {
  plugins::script_environment env;
  env.mode = "dedicated cores";
  env.is_dedicated_core = true;
  env.servers_per_node = 1;
  env.clients_per_node = 3;
  env.cores_per_node = 4;
  env.number_of_nodes = 2;
  env.magic = "1234";
  env.known_clients = {3, 4, 5};
  return env;
}

TEST(python_scripts, the_runtime_names_the_runner_and_passes_where_the_script_runs) {
  cfg::model m = scripted_model();
  ASSERT_EQ(m.action_plugins.size(), 3u);
  plugins::prepare_scripts(m, cores_environment(), false);
  if (!plugins::python_scripts_supported()) {
    // Without Python the scripts' actions go (they come after every plugin's) and the
    // configuration still runs.
    ASSERT_EQ(m.action_plugins.size(), 1u);
    EXPECT_EQ(m.action_plugins[0].name, "p");
    EXPECT_EQ(m.scripts.size(), 2u);
    return;
  }
  ASSERT_EQ(m.action_plugins.size(), 3u);
  const cfg::action_plugin& one = m.action_plugins[m.scripts[0].action];
  const cfg::action_plugin& two = m.action_plugins[m.scripts[1].action];
  // Found next to libsidecore, or in the build tree for a program linking the objects.
  const std::string suffix = "/libsidecore_pyscript.so";
  ASSERT_GE(one.library.size(), suffix.size()) << option(one, "runner-search");
  EXPECT_EQ(one.library.substr(one.library.size() - suffix.size()), suffix);
  EXPECT_EQ(option(one, "host"),
            one.library.substr(0, one.library.size() - suffix.size()) + "/sidecore-pyscript");
  EXPECT_EQ(option(one, "file"), "one.py");
  EXPECT_EQ(one.frequency, 2);
  EXPECT_EQ(option(one, "mode"), "dedicated cores");
  EXPECT_EQ(option(one, "is_dedicated_core"), "1");
  EXPECT_EQ(option(one, "is_dedicated_node"), "0");
  EXPECT_EQ(option(one, "clients_per_node"), "3");
  EXPECT_EQ(option(one, "number_of_nodes"), "2");
  EXPECT_EQ(option(one, "magic"), "1234");
  EXPECT_EQ(option(one, "known_clients"), "3,4,5");
  EXPECT_EQ(option(one, "fortran-variables"), "b");
  // DamarisData's type strings (Damaris's spelling) and its time-invariant variables.
  EXPECT_EQ(option(one, "type-strings"), "a=_int,b=_float");
  EXPECT_EQ(option(one, "constant-variables"), "");
  EXPECT_EQ(option(one, "scheduler-file"), "");
  EXPECT_EQ(option(two, "scheduler-file"), "dask.json");
  EXPECT_EQ(option(two, "dask-keep"), "7");
  EXPECT_EQ(std::stod(option(two, "timeout")), 5.0);
  // The plugin of <actions> is left as it was.
  EXPECT_EQ(m.action_plugins[0].library, "libp.so");
  EXPECT_TRUE(m.action_plugins[0].options.empty());
  // libpython opens (or the process has it already).
  EXPECT_NO_THROW(plugins::open_python_symbols("scripts.xml:12: "));
}

}  // namespace
}  // namespace sidecore
