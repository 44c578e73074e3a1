// Plugin stores: the XML's library attribute, the loader's errors (missing library, missing
// symbol, another ABI version) and what a plugin receives, through the plugins of tests/plugins.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/elf_symbols.hpp"
#include "common/error.hpp"
#include "common/library_search.hpp"
#include "config/model.hpp"
#include "plugins/plugin_library.hpp"
#include "plugins/store.hpp"
#include "unit_support.hpp"

namespace {

using namespace sidecore;
using plugins::block_view;
using plugins::iteration_data;
using plugins::variable_blocks;
using testing_support::contains;

// A configuration whose <store> is on line 12, with the given attributes and options.
std::string plugin_configuration(const std::string& store_attributes,
                                 const std::string& options = {}) {
  return "<simulation name=\"sim\">\n"                                                  // 1
         "<data>\n"                                                                     // 2
         "<parameter name=\"G\" type=\"int\" value=\"2\"/>\n"                           // 3
         "<layout name=\"grid\" type=\"double\" dimensions=\"2,3\" global=\"4,6\"/>\n"  // 4
         "<layout name=\"halo\" type=\"int\" dimensions=\"6\" ghosts=\"G:1\"/>\n"       // 5
         "<group name=\"fluid\">\n"                                                     // 6
         "<variable name=\"pressure\" layout=\"grid\" store=\"s\"/>\n"                  // 7
         "</group>\n"                                                                   // 8
         "<variable name=\"edge\" layout=\"halo\" store=\"s\"/>\n"                      // 9
         "</data>\n"                                                                    // 10
         "<storage>\n"                                                                  // 11
         "<store name=\"s\" " +
         store_attributes + ">" + options +  // 12
         "</store>\n"
         "</storage>\n"
         "</simulation>\n";
}

std::string plugin_parse_error(const std::string& xml) {
  try {
    config::parse_model(xml, "plugins.xml");
  } catch (const config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no configuration error for\n" << xml;
  return {};
}

// The probe plugin's record of the calls it received (it is loaded once per process).
class probe_log {
 public:
  probe_log() : m_handle(::dlopen(SIDECORE_TEST_PROBE_PLUGIN, RTLD_NOW | RTLD_LOCAL)) {
    if (m_handle == nullptr) throw std::runtime_error(::dlerror());
    m_text = reinterpret_cast<const char* (*)()>(::dlsym(m_handle, "sidecore_test_probe_log"));
    m_clear = reinterpret_cast<void (*)()>(::dlsym(m_handle, "sidecore_test_probe_clear"));
    if (m_text == nullptr || m_clear == nullptr) throw std::runtime_error("probe: no log symbols");
    m_clear();
  }
  ~probe_log() { ::dlclose(m_handle); }
  probe_log(const probe_log&) = delete;
  probe_log& operator=(const probe_log&) = delete;
  std::string text() const { return m_text(); }

 private:
  void* m_handle;
  const char* (*m_text)() = nullptr;
  void (*m_clear)() = nullptr;
};

// A parsed configuration and a store made from it, as a single writer.
struct store_fixture {
  explicit store_fixture(const std::string& xml) : model(config::parse_model(xml, "plugins.xml")) {
    context.model = &model;
    context.settings = &model.stores.at(0);
    context.comm = MPI_COMM_SELF;
    context.writer_index = 0;
    context.writer_count = 1;
  }
  std::unique_ptr<plugins::store> make() { return plugins::make_store(context); }
  std::string make_error() {
    try {
      make();
    } catch (const config_error& e) {
      return e.what();
    }
    ADD_FAILURE() << "no configuration error";
    return {};
  }

  config::model model;
  plugins::store_context context;
};

std::string library_attribute(const char* path) {
  return "type=\"x\" library=\"" + std::string(path) + "\"";
}

TEST(plugins, library_attribute_makes_any_type_a_plugin_store) {
  const config::model m = config::parse_model(
      plugin_configuration("type=\"npy\" library=\"/somewhere/libnpy.so\" frequency=\"2\""),
      "plugins.xml");
  ASSERT_EQ(m.stores.size(), 1u);
  EXPECT_EQ(m.stores[0].type, "npy");
  EXPECT_EQ(m.stores[0].library, "/somewhere/libnpy.so");
  EXPECT_EQ(m.stores[0].frequency, 2);
  const config::model builtin =
      config::parse_model(plugin_configuration("type=\"hdf5\""), "plugins.xml");
  EXPECT_EQ(builtin.stores[0].type, "HDF5");
  EXPECT_EQ(builtin.stores[0].library, "");
}

TEST(plugins, unknown_type_without_library_names_builtins_and_library_attribute) {
  const std::string message = plugin_parse_error(plugin_configuration("type=\"hdf6\""));
  EXPECT_EQ(message.rfind("plugins.xml:12: ", 0), 0u) << message;
  EXPECT_TRUE(contains(message, "invalid value 'hdf6' for attribute 'type' of <store 's'>"))
      << message;
  EXPECT_TRUE(contains(message, "did you mean 'HDF5'? valid values: HDF5, null")) << message;
  EXPECT_TRUE(contains(message, "library=")) << message;
  EXPECT_TRUE(contains(message, "libsidecore_hdf6.so")) << message;
}

TEST(plugins, builtin_type_with_library_is_an_error) {
  const std::string message =
      plugin_parse_error(plugin_configuration("type=\"HDF5\" library=\"libx.so\""));
  EXPECT_EQ(message.rfind("plugins.xml:12: ", 0), 0u) << message;
  EXPECT_TRUE(contains(message, "built-in type 'HDF5'")) << message;
}

TEST(plugins, type_with_a_slash_needs_library) {
  const std::string message = plugin_parse_error(plugin_configuration("type=\"../probe\""));
  EXPECT_TRUE(contains(message, "plugins.xml:12: the type '../probe'")) << message;
}

TEST(plugins, type_is_found_as_libsidecore_type_on_the_search_path) {
  // The unit tests' runpath holds tests/plugins, where libsidecore_test_probe.so is.
  probe_log log;
  store_fixture f(plugin_configuration("type=\"test_probe\""));
  EXPECT_EQ(f.model.stores[0].library, "libsidecore_test_probe.so");
  auto store = f.make();
  EXPECT_TRUE(contains(log.text(),
                       "create sim=sim store=s type=test_probe "
                       "library=libsidecore_test_probe.so writer=0/1 options=\n"))
      << log.text();
}

TEST(plugins, missing_library_is_a_config_error_naming_file_line_and_library) {
  store_fixture f(plugin_configuration("type=\"npy\" library=\"/nonexistent/libsidecore_npy.so\""));
  const std::string message = f.make_error();
  EXPECT_EQ(message.rfind("plugins.xml:12: store \"s\": ", 0), 0u) << message;
  EXPECT_TRUE(contains(message, "cannot load the plugin library '/nonexistent/libsidecore_npy.so'"))
      << message;
  EXPECT_TRUE(contains(message, "No such file or directory")) << message;  // dlerror()
}

TEST(plugins, library_without_entry_point_is_a_config_error) {
  store_fixture f(plugin_configuration(library_attribute(SIDECORE_TEST_NO_SYMBOL_PLUGIN)));
  const std::string message = f.make_error();
  EXPECT_EQ(message.rfind("plugins.xml:12: store \"s\": ", 0), 0u) << message;
  EXPECT_TRUE(contains(message, std::string("'") + SIDECORE_TEST_NO_SYMBOL_PLUGIN +
                                    "' is not a Sidecore store plugin"))
      << message;
  EXPECT_TRUE(contains(message, "it defines no sidecore_store_plugin()")) << message;
  // Refused from its file: its constructor never ran in this process.
  EXPECT_EQ(std::getenv("SIDECORE_TEST_NO_SYMBOL_PLUGIN_LOADED"), nullptr);
}

// Named by its file name alone, a library is found as the loader would find it (here through the
// unit tests' runpath), read, and refused before it is loaded.
TEST(plugins, library_named_without_a_directory_is_read_before_it_is_loaded) {
  const std::string path = SIDECORE_TEST_NO_SYMBOL_PLUGIN;
  const std::string name = path.substr(path.rfind('/') + 1);
  store_fixture f(plugin_configuration(library_attribute(name.c_str())));
  const std::string message = f.make_error();
  EXPECT_TRUE(contains(message, "'" + name + "' (" + path + ") is not a Sidecore store plugin"))
      << message;
  EXPECT_TRUE(contains(message, "it was not loaded")) << message;
  EXPECT_EQ(std::getenv("SIDECORE_TEST_NO_SYMBOL_PLUGIN_LOADED"), nullptr);
  EXPECT_EQ(find_library_file(name), path);
  // The same library found by its type alone: the configuration is read without loading it.
  store_fixture by_type(plugin_configuration("type=\"test_no_symbol\""));
  ASSERT_EQ(by_type.model.stores[0].library, name);
  EXPECT_EQ(std::getenv("SIDECORE_TEST_NO_SYMBOL_PLUGIN_LOADED"), nullptr);
  EXPECT_TRUE(contains(by_type.make_error(), "it was not loaded"));
  EXPECT_EQ(std::getenv("SIDECORE_TEST_NO_SYMBOL_PLUGIN_LOADED"), nullptr);
  EXPECT_EQ(find_library_file("libsidecore_no_such_library.so"), std::nullopt);
}

// The loader's order for dlopen: LD_LIBRARY_PATH before the caller's runpath, then the
// directories of /etc/ld.so.conf, then /lib and /usr/lib.
TEST(plugins, libraries_are_searched_for_in_the_loaders_order) {
  const std::string path = SIDECORE_TEST_NO_SYMBOL_PLUGIN;
  const std::string runpath_directory = path.substr(0, path.rfind('/'));
  const char* before = std::getenv("LD_LIBRARY_PATH");
  const std::string saved = before ? before : "";
  ::setenv("LD_LIBRARY_PATH", "/sidecore/first:/sidecore/second", 1);
  const std::vector<std::string> directories =
      loader_search_directories("/proc/self/exe", "/proc/self/exe");
  if (before) {
    ::setenv("LD_LIBRARY_PATH", saved.c_str(), 1);
  } else {
    ::unsetenv("LD_LIBRARY_PATH");
  }
  const auto position = [&](const std::string& directory) {
    for (std::size_t i = 0; i < directories.size(); ++i)
      if (directories[i] == directory) return static_cast<long>(i);
    return -1L;
  };
  ASSERT_EQ(position("/sidecore/first"), 0);
  EXPECT_EQ(position("/sidecore/second"), 1);
  EXPECT_GT(position(runpath_directory), 1);
  EXPECT_EQ(directories.back(), "/usr/lib");
  EXPECT_GT(position("/lib"), position(runpath_directory));
}

// The file check behind it: a plugin's entry point is found, another library's is not, and a
// file that is not a whole ELF library (truncated, random, a text file) is left to dlopen.
TEST(plugins, entry_points_are_read_from_the_library_file) {
  using sidecore::elf_defines_function;
  EXPECT_EQ(elf_defines_function(SIDECORE_TEST_PROBE_PLUGIN, "sidecore_store_plugin"), true);
  EXPECT_EQ(elf_defines_function(SIDECORE_TEST_PROBE_PLUGIN, "sidecore_action_plugin"), false);
  EXPECT_EQ(elf_defines_function(SIDECORE_TEST_NO_SYMBOL_PLUGIN, "sidecore_store_plugin"), false);
  EXPECT_EQ(elf_defines_function(SIDECORE_TEST_NO_SYMBOL_PLUGIN, "sidecore_test_something_else"),
            true);
  EXPECT_EQ(elf_defines_function("/nonexistent/lib.so", "sidecore_store_plugin"), std::nullopt);
  const std::string whole = [] {
    std::ifstream in(SIDECORE_TEST_PROBE_PLUGIN, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  ASSERT_GT(whole.size(), 4096u);
  const std::string path = ::testing::TempDir() + "sidecore_elf_check.so";
  const auto check = [&](const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return elf_defines_function(path, "sidecore_store_plugin");
  };
  EXPECT_EQ(check(whole.substr(0, 64)), std::nullopt);  // the header alone: no sections
  EXPECT_EQ(check("not a library"), std::nullopt);
  std::string scrambled = whole;
  for (std::size_t i = 64; i < scrambled.size(); i += 7) scrambled[i] = static_cast<char>(i * 31);
  // Any answer will do: what is checked is that reading it neither crashes nor reads outside
  // the file (the sanitizer builds run this test).
  static_cast<void>(check(scrambled));
  for (std::size_t cut : {whole.size() / 2, whole.size() - 100}) {
    const auto truncated = check(whole.substr(0, cut));
    EXPECT_NE(truncated, std::optional<bool>(false)) << "cut at " << cut;
  }
  std::remove(path.c_str());
}

TEST(plugins, other_abi_version_is_a_config_error_naming_both_versions) {
  store_fixture f(plugin_configuration(library_attribute(SIDECORE_TEST_OLD_ABI_PLUGIN)));
  const std::string message = f.make_error();
  EXPECT_EQ(message.rfind("plugins.xml:12: store \"s\": ", 0), 0u) << message;
  EXPECT_TRUE(contains(message, SIDECORE_TEST_OLD_ABI_PLUGIN)) << message;
  EXPECT_TRUE(contains(message, "has store plugin ABI version 2, this Sidecore expects 1"))
      << message;
}

TEST(plugins, options_refused_by_the_plugin_are_a_config_error) {
  probe_log log;
  store_fixture f(plugin_configuration(library_attribute(SIDECORE_TEST_PROBE_PLUGIN),
                                       "<option key=\"FailCreate\">config</option>"));
  const std::string message = f.make_error();
  EXPECT_EQ(message.rfind("plugins.xml:12: store \"s\": plugin 'probe' (", 0), 0u) << message;
  EXPECT_TRUE(contains(message,
                       "create() failed with code 2: option FailCreate asks for a "
                       "configuration error"))
      << message;
  EXPECT_FALSE(contains(log.text(), "destroy")) << log.text();  // nothing was created
}

TEST(plugins, other_create_failures_are_storage_errors) {
  probe_log log;
  store_fixture f(plugin_configuration(library_attribute(SIDECORE_TEST_PROBE_PLUGIN),
                                       "<option key=\"FailCreate\">storage</option>"));
  try {
    f.make();
    FAIL() << "no storage error";
  } catch (const storage_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("plugins.xml:12: store \"s\": plugin 'probe' (", 0), 0u)
        << e.what();
    EXPECT_TRUE(contains(e.what(),
                         "create() failed with code 1: option FailCreate asks for a "
                         "storage error"))
        << e.what();
  }
  EXPECT_FALSE(contains(log.text(), "destroy")) << log.text();
}

// A block of `dims` whose position is 0 in every dimension.
block_view block_at_origin(std::int32_t source, std::int32_t block_id, std::int32_t iteration,
                           const std::vector<std::int64_t>& dims, const void* data,
                           std::uint64_t bytes) {
  block_view b;
  b.source = source;
  b.block_id = block_id;
  b.iteration = iteration;
  b.dims = dims;
  b.position.assign(dims.size(), 0);
  b.data = data;
  b.bytes = bytes;
  return b;
}

TEST(plugins, plugin_receives_every_block_in_c_order_without_copies) {
  probe_log log;
  store_fixture f(
      plugin_configuration(library_attribute(SIDECORE_TEST_PROBE_PLUGIN) + " frequency=\"2\"",
                           "<option key=\"A\">1</option><option key=\"B\"> two </option>"));
  auto store = f.make();
  EXPECT_TRUE(contains(log.text(), "create sim=sim store=s type=x library=" +
                                       std::string(SIDECORE_TEST_PROBE_PLUGIN) +
                                       " writer=0/1 options=A:1,B:two\n"))
      << log.text();

  const std::vector<double> field = {1.5, 2, 3, 4, 5, 6};
  const std::vector<std::int32_t> edge = {7, 8, 9, 10, 11, 12};
  block_view p0 = block_at_origin(0, 0, 2, {2, 3}, field.data(), 48);
  p0.global_dims = {4, 6};
  p0.position = {2, 3};
  block_view p1 = block_at_origin(1, 0, 2, {2, 3}, field.data(), 48);
  p1.global_dims = {4, 6};
  block_view e0 = block_at_origin(0, 1, 2, {6}, edge.data(), 24);
  iteration_data data;
  data.iteration = 2;
  data.incomplete = true;
  data.variables.push_back(variable_blocks{&f.model.variables[0], &f.model.layouts[0], {&p0, &p1}});
  data.variables.push_back(variable_blocks{&f.model.variables[1], &f.model.layouts[1], {&e0}});
  store->write_iteration(data);

  const std::string expected =
      "iteration 2 incomplete=1 variables=fluid/pressure,edge\n"
      "  block fluid/pressure type=6 size=8 P0 B0 it=2 bytes=48 dims=2,3 global=4,6 "
      "position=2,3 ghosts_before=none ghosts_after=none first=1.5\n"
      "  block fluid/pressure type=6 size=8 P1 B0 it=2 bytes=48 dims=2,3 global=4,6 "
      "position=0,0 ghosts_before=none ghosts_after=none first=1.5\n"
      "  block edge type=3 size=4 P0 B1 it=2 bytes=24 dims=6 global=none position=0 "
      "ghosts_before=2 ghosts_after=1 first=7\n";
  EXPECT_TRUE(contains(log.text(), expected)) << log.text();

  // frequency="2": iteration 3 is not passed; an iteration without blocks is.
  data.iteration = 3;
  store->write_iteration(data);
  EXPECT_FALSE(contains(log.text(), "iteration 3")) << log.text();
  iteration_data empty;
  empty.iteration = 4;
  empty.variables.push_back(variable_blocks{&f.model.variables[0], &f.model.layouts[0], {}});
  store->write_iteration(empty);
  EXPECT_TRUE(contains(log.text(), "iteration 4 incomplete=0 variables=fluid/pressure\n"))
      << log.text();

  store->finish();
  store.reset();
  EXPECT_TRUE(contains(log.text(), "finish\ndestroy\n")) << log.text();
}

TEST(plugins, write_and_finish_failures_are_storage_errors_with_the_plugins_message) {
  probe_log log;
  store_fixture f(plugin_configuration(library_attribute(SIDECORE_TEST_PROBE_PLUGIN),
                                       "<option key=\"FailWrite\">1</option>"
                                       "<option key=\"FailFinish\">yes</option>"));
  auto store = f.make();
  const std::vector<double> field(6, 0.0);
  block_view b = block_at_origin(0, 0, 1, {2, 3}, field.data(), 48);
  iteration_data data;
  data.iteration = 1;
  data.variables.push_back(variable_blocks{&f.model.variables[0], &f.model.layouts[0], {&b}});
  try {
    store->write_iteration(data);
    FAIL() << "no storage error";
  } catch (const storage_error& e) {
    EXPECT_TRUE(contains(e.what(), "plugin 'probe' (" + std::string(SIDECORE_TEST_PROBE_PLUGIN) +
                                       "): write_iteration() failed with code 1: FailWrite: "
                                       "iteration 1 refused"))
        << e.what();
  }
  // The next iteration goes through.
  data.iteration = 2;
  b.iteration = 2;
  EXPECT_NO_THROW(store->write_iteration(data));
  // A message without its NUL is cut at the buffer's end.
  try {
    store->finish();
    FAIL() << "no storage error";
  } catch (const storage_error& e) {
    const std::string message = e.what();
    EXPECT_TRUE(contains(message, "finish() failed with code 7: xxxx")) << message;
    EXPECT_LT(message.size(), plugins::plugin_message_capacity + 200);
  }
  store.reset();
  EXPECT_TRUE(contains(log.text(), "destroy\n")) << log.text();
}

TEST(plugins, blocks_smaller_than_their_dimensions_never_reach_the_plugin) {
  probe_log log;
  store_fixture f(plugin_configuration(library_attribute(SIDECORE_TEST_PROBE_PLUGIN)));
  auto store = f.make();
  const std::vector<double> field(6, 0.0);
  block_view b = block_at_origin(3, 0, 0, {2, 3}, field.data(), 40);
  iteration_data data;
  data.variables.push_back(variable_blocks{&f.model.variables[0], &f.model.layouts[0], {&b}});
  try {
    store->write_iteration(data);
    FAIL() << "no storage error";
  } catch (const storage_error& e) {
    EXPECT_TRUE(contains(e.what(),
                         "variable \"fluid/pressure\", source 3, block 0 holds 40 "
                         "bytes where its dimensions need 48"))
        << e.what();
  }
  EXPECT_FALSE(contains(log.text(), "iteration 0")) << log.text();
}

}  // namespace
