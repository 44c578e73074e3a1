// HDF5 store: files, dataset names, values and attributes read back with the HDF5 C API.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "config/model.hpp"
#include "plugins/hdf5/block_data.hpp"
#include "plugins/hdf5/compression.hpp"
#include "plugins/hdf5/hdf5_handle.hpp"
#include "plugins/store.hpp"

namespace {

namespace fs = std::filesystem;
using namespace sidecore;
using plugins::block_view;
using plugins::iteration_data;
using plugins::variable_blocks;

// Parallel HDF5 needs MPI even in a single process; gtest_main owns main(), so MPI is started
// by a global environment, which finalizes it only if it was the one to start it.
class mpi_environment : public ::testing::Environment {
 public:
  void SetUp() override {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized == 0) {
      MPI_Init(nullptr, nullptr);
      m_owner = true;
    }
  }
  void TearDown() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (m_owner && finalized == 0) MPI_Finalize();
  }

 private:
  bool m_owner = false;
};

[[maybe_unused]] ::testing::Environment* const registered_mpi_environment =
    ::testing::AddGlobalTestEnvironment(new mpi_environment);

// Outside this namespace the tests spell it plugins::hdf5::file_handle: there, in a unity build,
// `file_handle` also names the struct of <fcntl.h>.
using file_handle = plugins::hdf5::file_handle;
using property_list_handle = plugins::hdf5::property_list_handle;
using dataset_handle = plugins::hdf5::dataset_handle;
using dataspace_handle = plugins::hdf5::dataspace_handle;
using attribute_handle = plugins::hdf5::attribute_handle;
using datatype_handle = plugins::hdf5::datatype_handle;
using group_handle = plugins::hdf5::group_handle;

file_handle open_file(const std::string& path) {
  file_handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  EXPECT_TRUE(file.valid()) << path;
  return file;
}

std::vector<hsize_t> dataset_dims(hid_t file, const std::string& name) {
  dataset_handle dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT));
  EXPECT_TRUE(dataset.valid()) << name;
  dataspace_handle space(H5Dget_space(dataset.get()));
  std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space.get())));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return dims;
}

// Reads a whole dataset; also checks that it is stored with the expected type.
template <typename T>
std::vector<T> read_dataset(hid_t file, const std::string& name, hid_t native_type) {
  std::size_t count = 1;
  for (const hsize_t d : dataset_dims(file, name)) count *= d;
  std::vector<T> values(count);
  dataset_handle dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT));
  datatype_handle stored_type(H5Dget_type(dataset.get()));
  EXPECT_GT(H5Tequal(stored_type.get(), native_type), 0) << name;
  EXPECT_GE(H5Dread(dataset.get(), native_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0)
      << name;
  return values;
}

std::int32_t read_int_attribute(hid_t object, const char* name) {
  std::int32_t value = -1;
  attribute_handle attribute(H5Aopen(object, name, H5P_DEFAULT));
  EXPECT_TRUE(attribute.valid()) << name;
  EXPECT_GE(H5Aread(attribute.get(), H5T_NATIVE_INT32, &value), 0) << name;
  return value;
}

std::vector<std::int64_t> read_int64_array_attribute(hid_t object, const char* name) {
  attribute_handle attribute(H5Aopen(object, name, H5P_DEFAULT));
  EXPECT_TRUE(attribute.valid()) << name;
  dataspace_handle space(H5Aget_space(attribute.get()));
  std::vector<std::int64_t> values(
      static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get())));
  EXPECT_GE(H5Aread(attribute.get(), H5T_NATIVE_INT64, values.data()), 0) << name;
  return values;
}

std::string read_string_attribute(hid_t object, const char* name) {
  attribute_handle attribute(H5Aopen(object, name, H5P_DEFAULT));
  EXPECT_TRUE(attribute.valid()) << name;
  datatype_handle type(H5Aget_type(attribute.get()));
  std::string value(H5Tget_size(type.get()), '\0');
  EXPECT_GE(H5Aread(attribute.get(), type.get(), value.data()), 0) << name;
  return value.c_str();
}

bool attribute_exists(hid_t object, const char* name) { return H5Aexists(object, name) > 0; }

block_view make_block(std::int32_t source, std::int32_t block_id, std::int32_t iteration,
                      const void* data, std::uint64_t bytes, std::vector<std::int64_t> dims,
                      std::vector<std::int64_t> position = {},
                      std::vector<std::int64_t> global_dims = {}) {
  block_view block;
  block.source = source;
  block.block_id = block_id;
  block.iteration = iteration;
  block.data = data;
  block.bytes = bytes;
  block.dims = std::move(dims);
  block.position = std::move(position);
  block.global_dims = std::move(global_dims);
  return block;
}

// A fresh directory per test, a small model and a store built from it.
class hdf5_store : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "sidecore_hdf5_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    m_directory = pattern;
    m_model.file = "test.xml";
    m_model.simulation_name = "sim";
    config::store settings;
    settings.name = "out";
    settings.type = "HDF5";
    settings.line = 12;
    settings.options = {{"FilesPath", m_directory}};
    m_model.stores.push_back(settings);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(m_directory, ignored);
  }

  // Adds a layout and a variable using it; returns the variable index. Call before taking
  // pointers into the model (see blocks_of).
  std::size_t add_variable(const std::string& name, config::element_type type, std::size_t ndims,
                           const std::string& unit = {}, bool global = false) {
    config::layout layout;
    layout.name = name + "_layout";
    layout.type = type;
    layout.dimensions.resize(ndims);
    if (global) layout.global_dimensions.resize(ndims);  // the blocks carry the values
    layout.line = 7;
    m_model.layouts.push_back(layout);
    config::variable var;
    var.name = name;
    var.layout_index = m_model.layouts.size() - 1;
    var.store_index = 0;
    var.unit = unit;
    m_model.variables.push_back(var);
    return m_model.variables.size() - 1;
  }

  variable_blocks blocks_of(std::size_t variable, const std::vector<block_view>& blocks) const {
    variable_blocks vb;
    vb.var = &m_model.variables[variable];
    vb.layout = &m_model.layouts[vb.var->layout_index];
    for (const block_view& block : blocks) vb.blocks.push_back(&block);
    return vb;
  }

  std::unique_ptr<plugins::store> make_store() const {
    plugins::store_context context;
    context.model = &m_model;
    context.settings = &m_model.stores[0];
    context.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(MPI_COMM_WORLD, &context.writer_index);
    MPI_Comm_size(MPI_COMM_WORLD, &context.writer_count);
    return plugins::make_store(context);
  }

  // The message of the config_error that opening the store raises ("" and a failure if none).
  std::string open_error() const {
    try {
      make_store();
    } catch (const config_error& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected config_error";
    return {};
  }

  void set_option(const std::string& key, const std::string& value) {
    m_model.stores[0].options.emplace_back(key, value);
  }

  std::string path(const std::string& name) const {
    return (fs::path(m_directory) / name).string();
  }

  std::string m_directory;
  config::model m_model;
};

TEST_F(hdf5_store, file_per_core_writes_every_value_and_attribute) {
  m_model.arch.domains = 3;  // several domains per client: blocks are named .../P<source>/B<block>
  const std::size_t temperature = add_variable("temperature", config::element_type::int32, 2);
  const std::size_t pressure = add_variable("pressure", config::element_type::float64, 1, "Pa");
  const std::vector<std::int32_t> t0 = {1, 2, 3, 4, 5, 6};
  const std::vector<std::int32_t> t1 = {-7, 8, -9, 10, -11, 12};
  const std::vector<double> p0 = {0.5, -1.25, 3.0e10, 4.0};
  const std::vector<block_view> temperature_blocks = {
      make_block(0, 0, 3, t0.data(), 24, {2, 3}, {0, 0}, {4, 3}),
      make_block(1, 0, 3, t1.data(), 24, {2, 3}, {2, 0}, {4, 3})};
  const std::vector<block_view> pressure_blocks = {make_block(1, 2, 3, p0.data(), 32, {4})};
  iteration_data data;
  data.iteration = 3;
  data.variables = {blocks_of(temperature, temperature_blocks),
                    blocks_of(pressure, pressure_blocks)};

  make_store()->write_iteration(data);

  const file_handle file = open_file(path("sim_It3_Pr0.h5"));
  ASSERT_TRUE(file.valid());
  EXPECT_EQ(read_int_attribute(file.get(), "iteration"), 3);
  EXPECT_EQ(dataset_dims(file.get(), "temperature/P0/B0"), (std::vector<hsize_t>{2, 3}));
  EXPECT_EQ(read_dataset<std::int32_t>(file.get(), "temperature/P0/B0", H5T_NATIVE_INT32), t0);
  EXPECT_EQ(read_dataset<std::int32_t>(file.get(), "temperature/P1/B0", H5T_NATIVE_INT32), t1);
  EXPECT_EQ(dataset_dims(file.get(), "pressure/P1/B2"), (std::vector<hsize_t>{4}));
  EXPECT_EQ(read_dataset<double>(file.get(), "pressure/P1/B2", H5T_NATIVE_DOUBLE), p0);

  dataset_handle t1_set(H5Dopen2(file.get(), "temperature/P1/B0", H5P_DEFAULT));
  EXPECT_EQ(read_int_attribute(t1_set.get(), "iteration"), 3);
  EXPECT_EQ(read_int_attribute(t1_set.get(), "source"), 1);
  EXPECT_EQ(read_int_attribute(t1_set.get(), "block"), 0);
  EXPECT_EQ(read_int64_array_attribute(t1_set.get(), "position"),
            (std::vector<std::int64_t>{2, 0}));
  EXPECT_EQ(read_int64_array_attribute(t1_set.get(), "global_dimensions"),
            (std::vector<std::int64_t>{4, 3}));
  EXPECT_FALSE(attribute_exists(t1_set.get(), "unit"));

  dataset_handle p_set(H5Dopen2(file.get(), "pressure/P1/B2", H5P_DEFAULT));
  EXPECT_EQ(read_int_attribute(p_set.get(), "source"), 1);
  EXPECT_EQ(read_int_attribute(p_set.get(), "block"), 2);
  EXPECT_EQ(read_int64_array_attribute(p_set.get(), "position"), (std::vector<std::int64_t>{0}));
  EXPECT_FALSE(attribute_exists(p_set.get(), "global_dimensions"));
  EXPECT_EQ(read_string_attribute(p_set.get(), "unit"), "Pa");
}

// Damaris's rule: with one domain per client a block is <variable>/P<source>, with no B level.
TEST_F(hdf5_store, file_per_core_names_blocks_by_source_only_with_one_domain) {
  const std::size_t t = add_variable("t", config::element_type::int32, 1);
  const std::vector<std::int32_t> a = {1, 2}, b = {3, 4};
  const std::vector<block_view> blocks = {make_block(0, 0, 0, a.data(), 8, {2}),
                                          make_block(5, 0, 0, b.data(), 8, {2})};
  iteration_data data;
  data.variables = {blocks_of(t, blocks)};

  make_store()->write_iteration(data);

  const file_handle file = open_file(path("sim_It0_Pr0.h5"));
  ASSERT_TRUE(file.valid());
  EXPECT_EQ(read_dataset<std::int32_t>(file.get(), "t/P0", H5T_NATIVE_INT32), a);
  EXPECT_EQ(read_dataset<std::int32_t>(file.get(), "t/P5", H5T_NATIVE_INT32), b);
  // A dataset, not a group holding B0.
  EXPECT_EQ(dataset_dims(file.get(), "t/P0"), (std::vector<hsize_t>{2}));
}

TEST_F(hdf5_store, file_per_core_variable_groups_become_nested_groups) {
  const std::size_t x = add_variable("coordinates/mesh/x", config::element_type::float32, 1);
  const std::vector<float> values = {1.5f, 2.5f, 3.5f};
  const std::vector<block_view> blocks = {make_block(0, 0, 0, values.data(), 12, {3})};
  iteration_data data;
  data.variables = {blocks_of(x, blocks)};

  make_store()->write_iteration(data);

  const file_handle file = open_file(path("sim_It0_Pr0.h5"));
  ASSERT_TRUE(file.valid());
  group_handle group(H5Gopen2(file.get(), "coordinates/mesh", H5P_DEFAULT));
  EXPECT_TRUE(group.valid());
  EXPECT_EQ(read_dataset<float>(file.get(), "coordinates/mesh/x/P0", H5T_NATIVE_FLOAT), values);
}

TEST_F(hdf5_store, file_per_core_creates_the_file_of_a_writer_without_blocks) {
  const std::size_t v = add_variable("v", config::element_type::int8, 1);
  iteration_data data;
  data.iteration = 9;
  data.variables = {blocks_of(v, {})};

  make_store()->write_iteration(data);

  const file_handle file = open_file(path("sim_It9_Pr0.h5"));
  ASSERT_TRUE(file.valid());
  EXPECT_EQ(read_int_attribute(file.get(), "iteration"), 9);
}

TEST_F(hdf5_store, collective_assembles_blocks_at_their_positions) {
  set_option("FileMode", "Collective");
  const std::size_t u = add_variable("field/u", config::element_type::int64, 2, "m/s", true);
  // Global 4x5; two 2x2 blocks, one at the origin and one at (2,3); the rest is fill (0).
  const std::vector<std::int64_t> a = {1, 2, 3, 4};
  const std::vector<std::int64_t> b = {5, 6, 7, 8};
  const std::vector<block_view> blocks = {
      make_block(0, 0, 5, a.data(), 32, {2, 2}, {0, 0}, {4, 5}),
      make_block(0, 1, 5, b.data(), 32, {2, 2}, {2, 3}, {4, 5})};
  iteration_data data;
  data.iteration = 5;
  data.variables = {blocks_of(u, blocks)};

  make_store()->write_iteration(data);

  const file_handle file = open_file(path("sim_It5.h5"));
  ASSERT_TRUE(file.valid());
  EXPECT_EQ(read_int_attribute(file.get(), "iteration"), 5);
  EXPECT_EQ(dataset_dims(file.get(), "field/u"), (std::vector<hsize_t>{4, 5}));
  const std::vector<std::int64_t> expected = {1, 2, 0, 0, 0,  //
                                              3, 4, 0, 0, 0,  //
                                              0, 0, 0, 5, 6,  //
                                              0, 0, 0, 7, 8};
  EXPECT_EQ(read_dataset<std::int64_t>(file.get(), "field/u", H5T_NATIVE_INT64), expected);
  dataset_handle dataset(H5Dopen2(file.get(), "field/u", H5P_DEFAULT));
  EXPECT_EQ(read_string_attribute(dataset.get(), "unit"), "m/s");
}

TEST_F(hdf5_store, collective_rejects_a_block_outside_the_global_dimensions) {
  set_option("FileMode", "Collective");
  const std::size_t u = add_variable("u", config::element_type::float64, 2, {}, true);
  const std::vector<double> values(4, 1.0);
  const std::vector<block_view> blocks = {
      make_block(3, 1, 0, values.data(), 32, {2, 2}, {1, 3}, {4, 4})};
  iteration_data data;
  data.variables = {blocks_of(u, blocks)};

  const auto store = make_store();
  try {
    store->write_iteration(data);
    FAIL() << "expected storage_error";
  } catch (const storage_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("\"u\""), std::string::npos) << message;
    EXPECT_NE(message.find("source 3 block 1"), std::string::npos) << message;
    EXPECT_NE(message.find("(1,3)"), std::string::npos) << message;
    EXPECT_NE(message.find("(2,2)"), std::string::npos) << message;
    EXPECT_NE(message.find("(4,4)"), std::string::npos) << message;
  }
  EXPECT_FALSE(fs::exists(path("sim_It0.h5")));
}

// A global extent far larger than the blocks (a typo's extra digits) would make the store
// write zeros until the disk is full: refused before any file is made, naming the dataset.
TEST_F(hdf5_store, collective_refuses_a_global_dataset_larger_than_the_free_space) {
  set_option("FileMode", "Collective");
  const std::size_t u = add_variable("u", config::element_type::float64, 1, {}, true);
  const std::vector<double> values(4, 1.0);
  const std::int64_t huge = 1'000'000'000'000'000;  // 8 PB of doubles
  const std::vector<block_view> blocks = {make_block(0, 0, 0, values.data(), 32, {4}, {0}, {huge})};
  iteration_data data;
  data.variables = {blocks_of(u, blocks)};
  const auto store = make_store();
  try {
    store->write_iteration(data);
    FAIL() << "expected storage_error";
  } catch (const storage_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("not enough space"), std::string::npos) << message;
    EXPECT_NE(message.find("\"u\" with global dimensions (1000000000000000)"), std::string::npos)
        << message;
    EXPECT_NE(message.find("check the layout's global="), std::string::npos) << message;
  }
  EXPECT_FALSE(fs::exists(path("sim_It0.h5")));
  EXPECT_FALSE(fs::exists(path("sim_It0.h5.part")));
}

// Damaris accepts a Collective store holding a variable without global extents (a per-client
// scalar): each of its blocks is its own dataset, named as in file-per-core files, beside the
// global datasets of the other variables.
TEST_F(hdf5_store, collective_stores_variables_without_global_dimensions_per_block) {
  set_option("FileMode", "Collective");
  const std::size_t n = add_variable("stats/n", config::element_type::int32, 1);
  const std::size_t u = add_variable("u", config::element_type::int32, 1, {}, true);
  const std::vector<std::int32_t> n0 = {7, 8}, n2 = {9, 10};
  const std::vector<std::int32_t> u0 = {1, 2};
  const std::vector<block_view> n_blocks = {make_block(2, 0, 4, n2.data(), 8, {2}),
                                            make_block(0, 0, 4, n0.data(), 8, {2})};
  const std::vector<block_view> u_blocks = {make_block(0, 0, 4, u0.data(), 8, {2}, {0}, {2})};
  iteration_data data;
  data.iteration = 4;
  data.variables = {blocks_of(n, n_blocks), blocks_of(u, u_blocks)};

  make_store()->write_iteration(data);

  const file_handle file = open_file(path("sim_It4.h5"));
  ASSERT_TRUE(file.valid());
  EXPECT_EQ(read_dataset<std::int32_t>(file.get(), "stats/n/P0", H5T_NATIVE_INT32), n0);
  EXPECT_EQ(read_dataset<std::int32_t>(file.get(), "stats/n/P2", H5T_NATIVE_INT32), n2);
  dataset_handle p2(H5Dopen2(file.get(), "stats/n/P2", H5P_DEFAULT));
  EXPECT_EQ(read_int_attribute(p2.get(), "source"), 2);
  EXPECT_EQ(read_int_attribute(p2.get(), "iteration"), 4);
  EXPECT_EQ(read_dataset<std::int32_t>(file.get(), "u", H5T_NATIVE_INT32), u0);
}

TEST_F(hdf5_store, two_stores_with_the_same_files_path_are_refused) {
  config::store other = m_model.stores[0];
  other.name = "twin";
  other.line = 20;
  other.options = {{"FilesPath", m_directory + "//./"}};  // the same directory, spelled otherwise
  m_model.stores.push_back(other);
  add_variable("u", config::element_type::int32, 1);
  const std::string message = open_error();
  EXPECT_NE(message.find("\"twin\" (line 20)"), std::string::npos) << message;
  EXPECT_NE(message.find("same files"), std::string::npos) << message;
}

TEST_F(hdf5_store, block_smaller_than_its_dimensions_is_rejected) {
  const std::size_t v = add_variable("v", config::element_type::int32, 1);
  const std::vector<std::int32_t> values = {1, 2};
  const std::vector<block_view> blocks = {make_block(0, 0, 0, values.data(), 8, {3})};
  iteration_data data;
  data.variables = {blocks_of(v, blocks)};

  EXPECT_THROW(make_store()->write_iteration(data), storage_error);
  EXPECT_FALSE(fs::exists(path("sim_It0_Pr0.h5")));
}

TEST_F(hdf5_store, unknown_option_names_the_valid_keys) {
  set_option("Compresion", "gzip");
  const std::string message = open_error();
  EXPECT_NE(message.find("test.xml:12"), std::string::npos) << message;
  EXPECT_NE(message.find("Compresion"), std::string::npos) << message;
  EXPECT_NE(message.find("FileMode, FilesPath, VirtualView, XDMF"), std::string::npos) << message;
  EXPECT_NE(message.find("did you mean 'Compression'"), std::string::npos) << message;
}

TEST_F(hdf5_store, unknown_file_mode_names_the_valid_modes) {
  set_option("FileMode", "FilePerNode");
  const std::string message = open_error();
  EXPECT_NE(message.find("FilePerCore, Collective"), std::string::npos) << message;
}

TEST_F(hdf5_store, files_path_directories_are_created) {
  const std::string nested = path("a/b/c");  // no trailing '/': the store adds it
  m_model.stores[0].options = {{"FilesPath", nested}, {"XDMFMode", "NoIteration"}};
  const std::size_t v = add_variable("v", config::element_type::int16, 1);
  const std::vector<std::int16_t> values = {4, 5};
  const std::vector<block_view> blocks = {make_block(0, 0, 1, values.data(), 4, {2})};
  iteration_data data;
  data.iteration = 1;
  data.variables = {blocks_of(v, blocks)};

  const auto store = make_store();
  EXPECT_TRUE(fs::is_directory(nested));
  store->write_iteration(data);

  const file_handle file = open_file(nested + "/sim_It1_Pr0.h5");
  ASSERT_TRUE(file.valid());
  EXPECT_EQ(read_dataset<std::int16_t>(file.get(), "v/P0", H5T_NATIVE_INT16), values);
}

TEST_F(hdf5_store, files_path_that_cannot_be_created_is_a_storage_error) {
  std::ofstream(path("plain_file")) << "not a directory";
  m_model.stores[0].options = {{"FilesPath", path("plain_file/sub")}};
  EXPECT_THROW(make_store(), storage_error);
}

TEST_F(hdf5_store, unknown_store_type_names_the_valid_types) {
  m_model.stores[0].type = "netcdf";
  const std::string message = open_error();
  EXPECT_NE(message.find("netcdf"), std::string::npos) << message;
  EXPECT_NE(message.find("HDF5, null"), std::string::npos) << message;
}

TEST_F(hdf5_store, null_store_type_is_case_insensitive_and_writes_nothing) {
  m_model.stores[0].type = "NULL";
  const std::size_t v = add_variable("v", config::element_type::int32, 1);
  const std::vector<std::int32_t> values = {1};
  const std::vector<block_view> blocks = {make_block(0, 0, 0, values.data(), 4, {1})};
  iteration_data data;
  data.variables = {blocks_of(v, blocks)};

  make_store()->write_iteration(data);
  EXPECT_TRUE(fs::is_empty(m_directory));
}

TEST_F(hdf5_store, file_per_core_master_file_shows_the_global_array) {
  const std::size_t t = add_variable("t", config::element_type::int32, 2, "K");
  const std::size_t local = add_variable("local", config::element_type::int32, 1);
  const std::vector<std::int32_t> a = {1, 2, 3, 4, 5, 6};
  const std::vector<std::int32_t> b = {7, 8, 9, 10, 11, 12};
  const std::vector<block_view> blocks = {
      make_block(0, 0, 2, a.data(), 24, {2, 3}, {0, 0}, {2, 6}),
      make_block(1, 0, 2, b.data(), 24, {2, 3}, {0, 3}, {2, 6})};
  const std::vector<block_view> local_blocks = {make_block(0, 0, 2, a.data(), 8, {2})};
  iteration_data data;
  data.iteration = 2;
  data.variables = {blocks_of(t, blocks), blocks_of(local, local_blocks)};

  make_store()->write_iteration(data);

  const plugins::hdf5::file_handle master = open_file(path("sim_It2.h5"));
  ASSERT_TRUE(master.valid());
  EXPECT_EQ(read_int_attribute(master.get(), "complete"), 1);
  EXPECT_EQ(read_dataset<std::int32_t>(master.get(), "t", H5T_NATIVE_INT32),
            (std::vector<std::int32_t>{1, 2, 3, 7, 8, 9, 4, 5, 6, 10, 11, 12}));
  // Without global dimensions: one row per client (docs/hdf5_store.md).
  EXPECT_EQ(dataset_dims(master.get(), "local"), (std::vector<hsize_t>{1, 2}));
  EXPECT_EQ(read_dataset<std::int32_t>(master.get(), "local", H5T_NATIVE_INT32),
            (std::vector<std::int32_t>{1, 2}));
  dataset_handle dataset(H5Dopen2(master.get(), "t", H5P_DEFAULT));
  EXPECT_EQ(read_string_attribute(dataset.get(), "unit"), "K");
  EXPECT_EQ(read_int64_array_attribute(dataset.get(), "block_positions"),
            (std::vector<std::int64_t>{0, 0, 0, 3}));
  EXPECT_TRUE(fs::exists(path("sim.xmf")));
}

// FilePerCore files do not use the global dimensions (nor does Damaris in that mode): a block
// placed outside them is stored as written in its writer's file and left out of the master
// file's global dataset, with one warning per variable that says where the block is.
TEST_F(hdf5_store, file_per_core_block_outside_the_global_dimensions_is_kept_and_said_once) {
  const std::size_t t = add_variable("t", config::element_type::int32, 2);
  const std::vector<std::int32_t> a = {1, 2, 3, 4, 5, 6};
  const std::vector<std::int32_t> b = {7, 8, 9, 10, 11, 12};
  const auto store = make_store();
  std::string warnings;
  for (const std::int32_t iteration : {2, 3}) {
    // Block 1 of source 1 starts at row 1 of a 2-row global array: one row too low.
    const std::vector<block_view> blocks = {
        make_block(0, 0, iteration, a.data(), 24, {2, 3}, {0, 0}, {2, 6}),
        make_block(1, 1, iteration, b.data(), 24, {2, 3}, {1, 3}, {2, 6})};
    iteration_data data;
    data.iteration = iteration;
    data.variables = {blocks_of(t, blocks)};
    testing::internal::CaptureStderr();
    store->write_iteration(data);
    warnings += testing::internal::GetCapturedStderr();
  }

  const std::string said =
      "block 1 of source 1 at position (1,3) with dimensions (2,3) lies "
      "outside the global dimensions (2,6) (iteration 2)";
  const std::size_t at = warnings.find(said);
  EXPECT_NE(at, std::string::npos) << warnings;
  // The blocks are packed (BlockLayout's default), the second after the first's 6 elements.
  EXPECT_NE(warnings.find("elements [6, 12) of \"t/packed\" in sim_It2_Pr0.h5"), std::string::npos)
      << warnings;
  EXPECT_EQ(warnings.find("lies outside", at + said.size()), std::string::npos)
      << "said more than once: " << warnings;
  const file_handle writer = open_file(path("sim_It3_Pr0.h5"));
  ASSERT_TRUE(writer.valid());
  std::vector<std::int32_t> both = a;
  both.insert(both.end(), b.begin(), b.end());
  EXPECT_EQ(read_dataset<std::int32_t>(writer.get(), "t/packed", H5T_NATIVE_INT32), both);
  const file_handle master = open_file(path("sim_It3.h5"));
  ASSERT_TRUE(master.valid());
  EXPECT_EQ(read_dataset<std::int32_t>(master.get(), "t", H5T_NATIVE_INT32),
            (std::vector<std::int32_t>{1, 2, 3, 0, 0, 0, 4, 5, 6, 0, 0, 0}));
}

// Variables without global dimensions (per-client scalars, small per-client arrays) are one
// dataset of the master file indexed by client; a client that wrote none reads as zeros, and
// blocks of differing extents have no such dataset.
TEST_F(hdf5_store, master_file_holds_per_client_variables_indexed_by_client) {
  const std::size_t t = add_variable("t", config::element_type::int32, 2);
  const std::size_t step = add_variable("step", config::element_type::int32, 1);
  const std::size_t pair = add_variable("pair", config::element_type::float64, 1, "m");
  const std::size_t ragged = add_variable("ragged", config::element_type::int32, 1);
  const std::vector<std::int32_t> a = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9, 10, 11, 12};
  const std::vector<std::int32_t> step0 = {10}, step2 = {12};
  const std::vector<double> pair0 = {1.5, 2.5}, pair2 = {3.5, 4.5};
  const std::vector<std::int32_t> ragged0 = {5}, ragged2 = {6, 7};
  // Clients 0 and 2 write; client 1 writes nothing this iteration.
  const std::vector<block_view> t_blocks = {
      make_block(0, 0, 4, a.data(), 24, {2, 3}, {0, 0}, {2, 6}),
      make_block(2, 0, 4, b.data(), 24, {2, 3}, {0, 3}, {2, 6})};
  const std::vector<block_view> step_blocks = {make_block(0, 0, 4, step0.data(), 4, {1}),
                                               make_block(2, 0, 4, step2.data(), 4, {1})};
  const std::vector<block_view> pair_blocks = {make_block(0, 0, 4, pair0.data(), 16, {2}),
                                               make_block(2, 0, 4, pair2.data(), 16, {2})};
  const std::vector<block_view> ragged_blocks = {make_block(0, 0, 4, ragged0.data(), 4, {1}),
                                                 make_block(2, 0, 4, ragged2.data(), 8, {2})};
  iteration_data data;
  data.iteration = 4;
  data.variables = {blocks_of(t, t_blocks), blocks_of(step, step_blocks),
                    blocks_of(pair, pair_blocks), blocks_of(ragged, ragged_blocks)};
  make_store()->write_iteration(data);

  const file_handle master = open_file(path("sim_It4.h5"));
  ASSERT_TRUE(master.valid());
  EXPECT_EQ(dataset_dims(master.get(), "step"), (std::vector<hsize_t>{3}));
  EXPECT_EQ(read_dataset<std::int32_t>(master.get(), "step", H5T_NATIVE_INT32),
            (std::vector<std::int32_t>{10, 0, 12}));
  dataset_handle step_set(H5Dopen2(master.get(), "step", H5P_DEFAULT));
  EXPECT_EQ(read_string_attribute(step_set.get(), "indexed_by"), "client");
  EXPECT_EQ(dataset_dims(master.get(), "pair"), (std::vector<hsize_t>{3, 2}));
  EXPECT_EQ(read_dataset<double>(master.get(), "pair", H5T_NATIVE_DOUBLE),
            (std::vector<double>{1.5, 2.5, 0, 0, 3.5, 4.5}));
  dataset_handle pair_set(H5Dopen2(master.get(), "pair", H5P_DEFAULT));
  EXPECT_EQ(read_string_attribute(pair_set.get(), "unit"), "m");
  EXPECT_LE(H5Lexists(master.get(), "ragged", H5P_DEFAULT), 0);
  EXPECT_EQ(read_dataset<std::int32_t>(master.get(), "t", H5T_NATIVE_INT32),
            (std::vector<std::int32_t>{1, 2, 3, 7, 8, 9, 4, 5, 6, 10, 11, 12}));
}

TEST_F(hdf5_store, master_file_maps_names_holding_a_percent_sign) {
  // HDF5 reads "%b" in a virtual dataset's source names as a block number.
  m_model.simulation_name = "r%b";
  const std::size_t t = add_variable("t%b", config::element_type::int32, 2);
  const std::vector<std::int32_t> a = {1, 2, 3, 4, 5, 6};
  const std::vector<std::int32_t> b = {7, 8, 9, 10, 11, 12};
  const std::vector<block_view> blocks = {
      make_block(0, 0, 2, a.data(), 24, {2, 3}, {0, 0}, {2, 6}),
      make_block(1, 0, 2, b.data(), 24, {2, 3}, {0, 3}, {2, 6})};
  iteration_data data;
  data.iteration = 2;
  data.variables = {blocks_of(t, blocks)};
  make_store()->write_iteration(data);
  const plugins::hdf5::file_handle master = open_file(path("r%b_It2.h5"));
  ASSERT_TRUE(master.valid());
  EXPECT_EQ(read_dataset<std::int32_t>(master.get(), "t%b", H5T_NATIVE_INT32),
            (std::vector<std::int32_t>{1, 2, 3, 7, 8, 9, 4, 5, 6, 10, 11, 12}));
}

TEST_F(hdf5_store, planted_symlinks_are_not_followed) {
  // In a FilesPath others can write to, a symlink under a temporary name must not make the
  // store write through it.
  const std::size_t t = add_variable("t", config::element_type::int32, 2);
  const std::vector<std::int32_t> a = {1, 2, 3, 4, 5, 6};
  const std::vector<std::int32_t> b = {7, 8, 9, 10, 11, 12};
  const std::vector<block_view> blocks = {
      make_block(0, 0, 2, a.data(), 24, {2, 3}, {0, 0}, {2, 6}),
      make_block(1, 0, 2, b.data(), 24, {2, 3}, {0, 3}, {2, 6})};
  const std::string victim = path("victim.txt");
  std::ofstream(victim) << "precious";
  for (const char* planted : {"sim_It2_Pr0.h5.part", "sim_It2.h5.part", "sim.xmf.tmp"})
    ASSERT_EQ(::symlink(victim.c_str(), path(planted).c_str()), 0) << planted;
  iteration_data data;
  data.iteration = 2;
  data.variables = {blocks_of(t, blocks)};
  make_store()->write_iteration(data);
  std::ifstream in(victim);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "precious");
  const plugins::hdf5::file_handle master = open_file(path("sim_It2.h5"));
  ASSERT_TRUE(master.valid());
  EXPECT_EQ(read_dataset<std::int32_t>(master.get(), "t", H5T_NATIVE_INT32),
            (std::vector<std::int32_t>{1, 2, 3, 7, 8, 9, 4, 5, 6, 10, 11, 12}));
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(path("sim.xmf"))));
}

// Collective output is created by every writer at once through MPI-IO, after writer 0 removed
// whatever held the temporary name. A symlink planted in between must fail the exclusive
// create, not be followed: what the store relies on, checked against this MPI and HDF5 (the
// MPICH run of the suite checks ROMIO too). A truncating create writes through it.
TEST_F(hdf5_store, collective_exclusive_create_never_follows_a_symlink) {
  const std::string victim = path("victim.txt");
  std::ofstream(victim) << "precious";
  const std::string planted = path("sim_It5.h5.part");
  ASSERT_EQ(::symlink(victim.c_str(), planted.c_str()), 0);
  property_list_handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  ASSERT_GE(H5Pset_fapl_mpio(fapl.get(), MPI_COMM_WORLD, MPI_INFO_NULL), 0);
  H5E_BEGIN_TRY {
    const hid_t file = H5Fcreate(planted.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get());
    EXPECT_LT(file, 0) << "the exclusive create went through the symlink";
    if (file >= 0) H5Fclose(file);
  }
  H5E_END_TRY;
  std::ifstream in(victim);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "precious");
}

TEST_F(hdf5_store, permissions_option_makes_private_output) {
  m_model.stores[0].options.emplace_back("Permissions", "0600");
  const std::size_t t = add_variable("t", config::element_type::int32, 2);
  const std::vector<std::int32_t> a = {1, 2, 3, 4, 5, 6};
  const std::vector<block_view> blocks = {
      make_block(0, 0, 2, a.data(), 24, {2, 3}, {0, 0}, {2, 3})};
  iteration_data data;
  data.iteration = 1;
  data.variables = {blocks_of(t, blocks)};
  const mode_t old_umask = ::umask(022);
  make_store()->write_iteration(data);
  ::umask(old_umask);
  for (const char* name : {"sim_It1_Pr0.h5", "sim_It1.h5", "sim.xmf"}) {
    struct stat status {};
    ASSERT_EQ(::stat(path(name).c_str(), &status), 0) << name;
    EXPECT_EQ(status.st_mode & 0777, 0600u) << name;
  }
  m_model.stores[0].options.back().second = "0999";
  EXPECT_NE(open_error().find("Permissions \"0999\" is not valid"), std::string::npos)
      << open_error();
}

TEST_F(hdf5_store, checksum_option_detects_flipped_bytes) {
  m_model.stores[0].options.emplace_back("Checksum", "true");
  const std::size_t t = add_variable("t", config::element_type::float64, 1);
  std::vector<double> values(1000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.5 * static_cast<double>(i);
  const std::vector<block_view> blocks = {make_block(0, 0, 1, values.data(), 8000, {1000})};
  iteration_data data;
  data.iteration = 1;
  data.variables = {blocks_of(t, blocks)};
  make_store()->write_iteration(data);
  const std::string file_name = path("sim_It1_Pr0.h5");
  haddr_t offset = HADDR_UNDEF;
  {
    const plugins::hdf5::file_handle file = open_file(file_name);
    ASSERT_TRUE(file.valid());
    EXPECT_EQ(read_dataset<double>(file.get(), "t/P0", H5T_NATIVE_DOUBLE), values);
    dataset_handle dataset(H5Dopen2(file.get(), "t/P0", H5P_DEFAULT));
    sidecore::plugins::hdf5::property_list_handle dcpl(H5Dget_create_plist(dataset.get()));
    ASSERT_EQ(H5Pget_nfilters(dcpl.get()), 1);
    unsigned flags = 0;
    std::size_t count = 0;
    EXPECT_EQ(H5Pget_filter2(dcpl.get(), 0, &flags, &count, nullptr, 0, nullptr, nullptr),
              H5Z_FILTER_FLETCHER32);
    hsize_t chunk_offset[1] = {0};
    hsize_t size = 0;
    unsigned mask = 0;
    ASSERT_GE(H5Dget_chunk_info_by_coord(dataset.get(), chunk_offset, &mask, &offset, &size), 0);
  }
  ASSERT_NE(offset, HADDR_UNDEF);
  {
    // One flipped byte in the middle of the stored values.
    std::fstream raw(file_name, std::ios::in | std::ios::out | std::ios::binary);
    raw.seekg(static_cast<std::streamoff>(offset + 4000));
    char byte = 0;
    raw.read(&byte, 1);
    byte = static_cast<char>(byte ^ 0x10);
    raw.seekp(static_cast<std::streamoff>(offset + 4000));
    raw.write(&byte, 1);
  }
  const plugins::hdf5::file_handle file = open_file(file_name);
  ASSERT_TRUE(file.valid());
  dataset_handle dataset(H5Dopen2(file.get(), "t/P0", H5P_DEFAULT));
  std::vector<double> read_back(values.size());
  H5E_BEGIN_TRY {
    EXPECT_LT(
        H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, read_back.data()),
        0)
        << "a flipped byte was read back without an error";
  }
  H5E_END_TRY;
}

TEST_F(hdf5_store, master_file_of_an_incomplete_iteration_says_so) {
  const std::size_t t = add_variable("t", config::element_type::int32, 1);
  const std::vector<std::int32_t> a = {1, 2};
  const std::vector<block_view> blocks = {make_block(0, 0, 0, a.data(), 8, {2}, {0}, {4})};
  iteration_data data;
  data.variables = {blocks_of(t, blocks)};
  data.incomplete = true;  // a client dropped its block under policy="skip"

  make_store()->write_iteration(data);

  const plugins::hdf5::file_handle per_core = open_file(path("sim_It0_Pr0.h5"));
  EXPECT_EQ(read_int_attribute(per_core.get(), "complete"), 0);
  const plugins::hdf5::file_handle master = open_file(path("sim_It0.h5"));
  EXPECT_EQ(read_int_attribute(master.get(), "complete"), 0);
}

TEST_F(hdf5_store, virtual_view_and_xdmf_can_be_turned_off) {
  set_option("VirtualView", "false");
  const std::size_t t = add_variable("t", config::element_type::int32, 1);
  const std::vector<std::int32_t> a = {1, 2};
  const std::vector<block_view> blocks = {make_block(0, 0, 0, a.data(), 8, {2}, {0}, {2})};
  iteration_data data;
  data.variables = {blocks_of(t, blocks)};

  make_store()->write_iteration(data);

  EXPECT_TRUE(fs::exists(path("sim_It0_Pr0.h5")));
  EXPECT_FALSE(fs::exists(path("sim_It0.h5")));
  EXPECT_FALSE(fs::exists(path("sim.xmf")));
}

TEST_F(hdf5_store, ghost_zones_are_not_stored) {
  const std::size_t t = add_variable("t", config::element_type::float64, 2);
  const std::map<std::string, std::size_t, std::less<>> no_parameters;
  const auto one = config::parse_expression("1", no_parameters, "test.xml:7");
  const auto zero = config::parse_expression("0", no_parameters, "test.xml:7");
  m_model.layouts[0].ghosts = {{one, one}, {zero, one}};
  // 4x3 in memory: rows 0 and 3 and column 2 are ghosts; the interior is 2x2.
  const std::vector<double> memory = {-1, -1, -1,  //
                                      1,  2,  -1,  //
                                      3,  4,  -1,  //
                                      -1, -1, -1};
  const std::vector<block_view> blocks = {
      make_block(0, 0, 0, memory.data(), 96, {4, 3}, {0, 0}, {2, 2})};
  iteration_data data;
  data.variables = {blocks_of(t, blocks)};

  make_store()->write_iteration(data);

  const plugins::hdf5::file_handle file = open_file(path("sim_It0_Pr0.h5"));
  EXPECT_EQ(read_dataset<double>(file.get(), "t/P0", H5T_NATIVE_DOUBLE),
            (std::vector<double>{1, 2, 3, 4}));
  const plugins::hdf5::file_handle master = open_file(path("sim_It0.h5"));
  EXPECT_EQ(read_dataset<double>(master.get(), "t", H5T_NATIVE_DOUBLE),
            (std::vector<double>{1, 2, 3, 4}));
}

TEST_F(hdf5_store, store_frequency_skips_iterations) {
  m_model.stores[0].frequency = 2;
  const std::size_t t = add_variable("t", config::element_type::int32, 1);
  const std::vector<std::int32_t> a = {1, 2};
  const std::vector<block_view> blocks = {make_block(0, 0, 0, a.data(), 8, {2}, {0}, {2})};
  const auto store = make_store();
  for (std::int32_t it = 0; it < 4; ++it) {
    iteration_data data;
    data.iteration = it;
    data.variables = {blocks_of(t, blocks)};
    store->write_iteration(data);
  }
  EXPECT_TRUE(fs::exists(path("sim_It0_Pr0.h5")));
  EXPECT_FALSE(fs::exists(path("sim_It1_Pr0.h5")));
  EXPECT_TRUE(fs::exists(path("sim_It2_Pr0.h5")));
  EXPECT_FALSE(fs::exists(path("sim_It3_Pr0.h5")));
}

TEST_F(hdf5_store, time_invariant_variable_is_written_once_and_mapped_later) {
  const std::size_t x = add_variable("x", config::element_type::float64, 1);
  m_model.variables[x].time_varying = false;
  const std::vector<double> values = {0.5, 1.5};
  const std::vector<block_view> blocks = {make_block(0, 0, 0, values.data(), 16, {2}, {0}, {2})};
  const auto store = make_store();
  for (std::int32_t it = 0; it < 2; ++it) {
    iteration_data data;
    data.iteration = it;
    data.variables = {blocks_of(x, blocks)};
    store->write_iteration(data);
  }
  const plugins::hdf5::file_handle second = open_file(path("sim_It1_Pr0.h5"));
  EXPECT_LE(H5Lexists(second.get(), "x", H5P_DEFAULT), 0);
  const plugins::hdf5::file_handle master = open_file(path("sim_It1.h5"));
  EXPECT_EQ(read_dataset<double>(master.get(), "x", H5T_NATIVE_DOUBLE), values);
}

TEST_F(hdf5_store, compression_is_lossless_and_reports_its_ratio) {
  set_option("Compression", "deflate:6");
  const std::size_t t = add_variable("t", config::element_type::float64, 1);
  std::vector<double> values(4096);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i % 7) * 0.25;
  const std::vector<block_view> blocks = {
      make_block(0, 0, 0, values.data(), values.size() * 8, {4096}, {0}, {4096})};
  iteration_data data;
  data.variables = {blocks_of(t, blocks)};

  make_store()->write_iteration(data);

  const plugins::hdf5::file_handle file = open_file(path("sim_It0_Pr0.h5"));
  EXPECT_EQ(read_dataset<double>(file.get(), "t/P0", H5T_NATIVE_DOUBLE), values);
  attribute_handle ratio(H5Aopen(file.get(), "compression_ratio", H5P_DEFAULT));
  double value = 0;
  ASSERT_GE(H5Aread(ratio.get(), H5T_NATIVE_DOUBLE, &value), 0);
  EXPECT_GT(value, 4.0);
}

TEST_F(hdf5_store, half_precision_is_read_back_within_its_precision) {
  set_option("Precision.t", "half");
  const std::size_t t = add_variable("t", config::element_type::float32, 1);
  const std::vector<float> values = {1.0f, -2.5f, 0.1f, 1000.3f, 3.0e-6f};
  const std::vector<block_view> blocks = {make_block(0, 0, 0, values.data(), 20, {5})};
  iteration_data data;
  data.variables = {blocks_of(t, blocks)};

  make_store()->write_iteration(data);

  const plugins::hdf5::file_handle file = open_file(path("sim_It0_Pr0.h5"));
  dataset_handle dataset(H5Dopen2(file.get(), "t/P0", H5P_DEFAULT));
  datatype_handle type(H5Dget_type(dataset.get()));
  EXPECT_EQ(H5Tget_size(type.get()), 2u);
  std::vector<float> back(values.size());
  ASSERT_GE(H5Dread(dataset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()),
            0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    // binary16 keeps 11 significant bits; 3e-6 is subnormal there (step 2^-24).
    EXPECT_NEAR(back[i], values[i], std::abs(values[i]) / 2048.0f + 6.0e-8f) << i;
  }
}

TEST(hdf5_half, to_half_rounds_to_nearest_even) {
  const auto float_to_half = [](float f) { return plugins::hdf5::to_half(f); };
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(0.1f), 0x2e66);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);               // halfway past the largest: infinity
  EXPECT_EQ(float_to_half(5.9604645e-8f), 0x0001);          // 2^-24, the smallest subnormal
  EXPECT_EQ(float_to_half(2.9802322e-8f), 0x0000);          // 2^-25: tie, rounds to even 0
  EXPECT_EQ(float_to_half(1.0f + 1.0f / 2048.0f), 0x3c00);  // tie, rounds to even
  EXPECT_EQ(float_to_half(1.0f + 3.0f / 2048.0f), 0x3c02);  // tie, rounds to even (up)
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::quiet_NaN()) & 0x7e00, 0x7e00);
}

TEST(hdf5_half, a_double_is_rounded_once) {
  using plugins::hdf5::to_half;
  // Just past a halfway point by less than a float can hold: through a float it would be a
  // tie (rounded to even, down); rounded once it goes up.
  EXPECT_EQ(to_half(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 0x3c01);
  EXPECT_EQ(to_half(1.0 + std::ldexp(1.0, -11)), 0x3c00);  // an exact tie still goes to even
  // Just past 2^-25 (half the smallest subnormal): rounds up to 2^-24.
  EXPECT_EQ(to_half(std::ldexp(1.0, -25) + std::ldexp(1.0, -52)), 0x0001);
  EXPECT_EQ(to_half(std::ldexp(1.0, -25)), 0x0000);
  EXPECT_EQ(to_half(-std::ldexp(1.0, -26)), 0x8000);
  EXPECT_EQ(to_half(std::ldexp(1.0, -14)), 0x0400);  // the smallest normal
  EXPECT_EQ(to_half(65519.99), 0x7bff);
  EXPECT_EQ(to_half(1e300), 0x7c00);
}

TEST_F(hdf5_store, compression_option_names_the_valid_forms) {
  set_option("Compression", "lzma:3");
  const std::string message = open_error();
  EXPECT_NE(message.find("test.xml:12"), std::string::npos) << message;
  EXPECT_NE(message.find("deflate[:0-9]"), std::string::npos) << message;
}

TEST_F(hdf5_store, per_variable_option_for_an_unknown_variable_suggests_one) {
  add_variable("temperature", config::element_type::float64, 1);
  set_option("Precision.temperatur", "half");
  const std::string message = open_error();
  EXPECT_NE(message.find("temperature"), std::string::npos) << message;
}

// Meshes travel with the data: a reader rebuilds an unstructured mesh from the "meshes" JSON
// attribute of the file's root and the datasets it names.
TEST_F(hdf5_store, files_describe_the_meshes_of_the_configuration) {
  const std::size_t x = add_variable("g/xyz", config::element_type::float64, 1);
  config::mesh mesh;
  mesh.name = "umesh";
  mesh.type = "unstructured";
  mesh.topology = 3;
  mesh.coordinates.push_back({"g/xyz", "m", ""});
  mesh.parts.push_back({"vertex_global_id", "g/gid", -1, 0});
  mesh.parts.push_back({"section_types", "g/\"t\"", 0, 0});
  m_model.meshes.push_back(mesh);
  const std::vector<double> values = {1, 2, 3};
  const std::vector<block_view> blocks = {make_block(0, 0, 0, values.data(), 24, {3})};
  iteration_data data;
  data.variables = {blocks_of(x, blocks)};

  make_store()->write_iteration(data);

  const plugins::hdf5::file_handle file = open_file(path("sim_It0_Pr0.h5"));
  ASSERT_TRUE(file.valid());
  EXPECT_EQ(read_string_attribute(file.get(), "meshes"),
            "{\"umesh\": {\"type\": \"unstructured\", \"topology\": 3, \"coordinates\": "
            "[\"g/xyz\"], \"vertex_global_id\": {\"variable\": \"g/gid\", \"offset\": -1}, "
            "\"section_types\": {\"variable\": \"g/\\\"t\\\"\", \"offset\": 0}}}");
}

// The XDMF file is rewritten at most once a second during the run (it grows with every step),
// and completely at the end: after finish() it lists every step.
TEST_F(hdf5_store, the_xdmf_file_lists_every_step_after_finish) {
  set_option("FileMode", "Collective");
  const std::size_t u = add_variable("u", config::element_type::int32, 1, {}, true);
  const std::vector<std::int32_t> values = {1, 2};
  const std::vector<block_view> blocks = {make_block(0, 0, 0, values.data(), 8, {2}, {0}, {2})};
  const auto store = make_store();
  for (int it = 0; it < 200; ++it) {
    iteration_data data;
    data.iteration = it;
    data.variables = {blocks_of(u, blocks)};
    store->write_iteration(data);
  }
  store->finish();
  std::ifstream xmf(path("sim.xmf"));
  const std::string text((std::istreambuf_iterator<char>(xmf)), std::istreambuf_iterator<char>());
  std::size_t steps = 0;
  for (std::size_t at = text.find("<Time Value="); at != std::string::npos;
       at = text.find("<Time Value=", at + 1))
    ++steps;
  EXPECT_EQ(steps, 200u);
  EXPECT_NE(text.find("<Time Value=\"199\"/>"), std::string::npos);
}

}  // namespace
