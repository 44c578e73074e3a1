// Writes completed iterations to HDF5 files laid out as Damaris writes them, so that existing
// readers keep working: one file per writer and iteration, or one shared file per iteration.
#include "plugins/hdf5/hdf5_store.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "common/log.hpp"
#include "plugins/hdf5/hdf5_handle.hpp"

namespace sidecore::plugins::hdf5 {

namespace {

constexpr const char* valid_option_keys = "FileMode, FilesPath, XDMFMode";
constexpr const char* valid_file_modes = "FilePerCore, Collective";

bool equals_ignoring_case(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string trimmed(std::string_view text) {
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return std::string(text);
}

std::string config_file(const config::model* model) {
  return model != nullptr && !model->file.empty() ? model->file : "<configuration>";
}

// "file:line: store "name"" for messages about the store's XML element.
std::string store_where(const store_context& context) {
  return config_file(context.model) + ':' + std::to_string(context.settings->line) +
         ": store \"" + context.settings->name + '"';
}

// Sizes are spelled out here rather than taken from the config module so that the on-disk
// type and the byte count checked against a block always come from the same table.
struct type_info {
  hid_t native;
  std::size_t bytes;
};

type_info element_type_info(config::element_type type) {
  switch (type) {
    case config::element_type::int8:
      return {H5T_NATIVE_INT8, 1};
    case config::element_type::int16:
      return {H5T_NATIVE_INT16, 2};
    case config::element_type::int32:
      return {H5T_NATIVE_INT32, 4};
    case config::element_type::int64:
      return {H5T_NATIVE_INT64, 8};
    case config::element_type::float32:
      return {H5T_NATIVE_FLOAT, 4};
    case config::element_type::float64:
      return {H5T_NATIVE_DOUBLE, 8};
  }
  throw storage_error("HDF5 store: unknown element type " +
                      std::to_string(static_cast<int>(type)));
}

std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::string text = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) text += ',';
    text += std::to_string(dims[i]);
  }
  return text + ')';
}

std::string block_name(const config::variable& var, const block_view& block) {
  return "variable \"" + var.name + "\" source " + std::to_string(block.source) + " block " +
         std::to_string(block.block_id);
}

std::int64_t element_count(const std::vector<std::int64_t>& dims) {
  std::int64_t count = 1;
  for (const std::int64_t d : dims) count *= d;
  return count;
}

std::vector<hsize_t> to_hsize(const std::vector<std::int64_t>& values) {
  return std::vector<hsize_t>(values.begin(), values.end());
}

// What makes a block unwritable in any mode, or "" when it is fine.
std::string block_problem(const config::variable& var, const block_view& block,
                          std::size_t element_bytes) {
  const std::string name = block_name(var, block);
  for (const std::int64_t d : block.dims) {
    if (d < 0) return name + " has negative dimensions " + dims_text(block.dims);
  }
  if (!block.position.empty() && block.position.size() != block.dims.size()) {
    return name + " has position " + dims_text(block.position) + " but dimensions " +
           dims_text(block.dims);
  }
  if (!block.global_dims.empty() && block.global_dims.size() != block.dims.size()) {
    return name + " has global dimensions " + dims_text(block.global_dims) +
           " but dimensions " + dims_text(block.dims);
  }
  const auto needed = static_cast<std::uint64_t>(element_count(block.dims)) * element_bytes;
  // More bytes than needed is allowed (allocations may be rounded up); fewer would make
  // HDF5 read past the block.
  if (block.bytes < needed) {
    return name + " holds " + std::to_string(block.bytes) + " bytes but dimensions " +
           dims_text(block.dims) + " need " + std::to_string(needed);
  }
  if (needed > 0 && block.data == nullptr) return name + " has no data";
  return {};
}

dataspace_handle make_simple_space(const std::vector<hsize_t>& dims, const call_site& site) {
  if (dims.empty()) {
    return dataspace_handle(check_id(H5Screate(H5S_SCALAR), "H5Screate", site));
  }
  return dataspace_handle(check_id(
      H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), "H5Screate_simple",
      site));
}

// Writes one attribute; shape empty means a scalar.
void write_attribute(hid_t object, const std::string& object_path, const char* name,
                     hid_t type, const std::vector<hsize_t>& shape, const void* value,
                     const std::string& file) {
  const std::string label = object_path + " (attribute \"" + name + "\")";
  const call_site site{file, label};
  dataspace_handle space = make_simple_space(shape, site);
  attribute_handle attribute(check_id(
      H5Acreate2(object, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), "H5Acreate2", site));
  check_status(H5Awrite(attribute.get(), type, value), "H5Awrite", site);
  check_status(attribute.close(), "H5Aclose", site);
}

void write_int_attribute(hid_t object, const std::string& object_path, const char* name,
                         std::int32_t value, const std::string& file) {
  write_attribute(object, object_path, name, H5T_NATIVE_INT32, {}, &value, file);
}

void write_int64_array_attribute(hid_t object, const std::string& object_path, const char* name,
                                 const std::vector<std::int64_t>& values,
                                 const std::string& file) {
  write_attribute(object, object_path, name, H5T_NATIVE_INT64, {values.size()}, values.data(),
                  file);
}

void write_string_attribute(hid_t object, const std::string& object_path, const char* name,
                            const std::string& value, const std::string& file) {
  const std::string label = object_path + " (attribute \"" + name + "\")";
  const call_site site{file, label};
  datatype_handle type(check_id(H5Tcopy(H5T_C_S1), "H5Tcopy", site));
  // Fixed-length, null-terminated: the form h5py and Damaris-era readers decode directly.
  check_status(H5Tset_size(type.get(), value.size() + 1), "H5Tset_size", site);
  check_status(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), "H5Tset_strpad", site);
  write_attribute(object, object_path, name, type.get(), {}, value.c_str(), file);
}

// Link creation properties that create the groups of names like "coordinates/x2d".
property_list_handle make_intermediate_group_lcpl(const call_site& site) {
  property_list_handle lcpl(check_id(H5Pcreate(H5P_LINK_CREATE), "H5Pcreate", site));
  check_status(H5Pset_create_intermediate_group(lcpl.get(), 1),
               "H5Pset_create_intermediate_group", site);
  return lcpl;
}

void check_mpi(int status, const char* call) {
  if (status != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(status, text, &length);
    throw mpi_error(std::string("HDF5 store: ") + call + " failed: " + text);
  }
}

class hdf5_store final : public store {
 public:
  hdf5_store(const store_context& context, store_options options)
      : m_context(context), m_options(std::move(options)) {}

  void write_iteration(const iteration_data& data) override {
    const error_print_guard quiet;
    if (m_options.mode == file_mode::collective) {
      write_collective(data);
    } else {
      write_file_per_core(data);
    }
  }

 private:
  std::string file_prefix(std::int32_t iteration) const {
    return m_options.files_path + m_context.model->simulation_name + "_It" +
           std::to_string(iteration);
  }

  void write_file_per_core(const iteration_data& data) const;
  void write_file_per_core_contents(const iteration_data& data, const std::string& path) const;
  void write_collective(const iteration_data& data) const;

  store_context m_context;
  store_options m_options;
};

void hdf5_store::write_file_per_core(const iteration_data& data) const {
  // Validate everything first so that a bad block does not leave a half-written file.
  for (const variable_blocks& vb : data.variables) {
    const std::size_t bytes = element_type_info(vb.layout->type).bytes;
    const block_view* previous = nullptr;
    for (const block_view* block : vb.blocks) {
      const std::string problem = block_problem(*vb.var, *block, bytes);
      if (!problem.empty()) throw storage_error("HDF5 store: " + problem);
      if (previous != nullptr && previous->source == block->source &&
          previous->block_id == block->block_id) {
        throw storage_error("HDF5 store: " + block_name(*vb.var, *block) +
                            " appears twice in iteration " + std::to_string(data.iteration));
      }
      previous = block;
    }
  }

  // Readers expect one file per writer and iteration, so the file exists even when empty.
  const std::string path =
      file_prefix(data.iteration) + "_Pr" + std::to_string(m_context.writer_index) + ".h5";
  try {
    write_file_per_core_contents(data, path);
  } catch (...) {
    // A partial file would look like valid output to a reader.
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    throw;
  }
  log::debug("HDF5 store: wrote ", path);
}

void hdf5_store::write_file_per_core_contents(const iteration_data& data,
                                              const std::string& path) const {
  const call_site file_site{path, {}};
  file_handle file(check_id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                            "H5Fcreate", file_site));
  write_int_attribute(file.get(), "/", "iteration", data.iteration, path);
  const property_list_handle lcpl = make_intermediate_group_lcpl(file_site);

  for (const variable_blocks& vb : data.variables) {
    const hid_t type = element_type_info(vb.layout->type).native;
    for (const block_view* block : vb.blocks) {
      const std::string name = vb.var->name + "/P" + std::to_string(block->source) + "/B" +
                               std::to_string(block->block_id);
      const call_site site{path, name};
      const dataspace_handle space = make_simple_space(to_hsize(block->dims), site);
      dataset_handle dataset(check_id(H5Dcreate2(file.get(), name.c_str(), type, space.get(),
                                                 lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
                                      "H5Dcreate2", site));
      if (element_count(block->dims) > 0) {
        check_status(H5Dwrite(dataset.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, block->data),
                     "H5Dwrite", site);
      }
      write_int_attribute(dataset.get(), name, "iteration", block->iteration, path);
      write_int_attribute(dataset.get(), name, "source", block->source, path);
      write_int_attribute(dataset.get(), name, "block", block->block_id, path);
      if (!block->dims.empty()) {
        const std::vector<std::int64_t> position =
            block->position.empty() ? std::vector<std::int64_t>(block->dims.size(), 0)
                                    : block->position;
        write_int64_array_attribute(dataset.get(), name, "position", position, path);
      }
      if (!block->global_dims.empty()) {
        write_int64_array_attribute(dataset.get(), name, "global_dimensions", block->global_dims,
                                    path);
      }
      if (!vb.var->unit.empty()) {
        write_string_attribute(dataset.get(), name, "unit", vb.var->unit, path);
      }
      check_status(dataset.close(), "H5Dclose", site);
    }
  }
  // Closing flushes the data: a failure here means the file is not complete.
  check_status(file.close(), "H5Fclose", file_site);
}

void hdf5_store::write_collective(const iteration_data& data) const {
  const std::size_t variable_count = data.variables.size();

  // One reduction agrees, per variable, on its global extents (some writers may hold no
  // block of it), on whether any block gives them, and on the largest local block count:
  // every writer must issue the same number of collective H5Dwrite calls.
  // Entries per variable: ndims extents, then "has global", then "block count".
  std::vector<std::size_t> offsets(variable_count + 1, 0);
  for (std::size_t i = 0; i < variable_count; ++i) {
    offsets[i + 1] = offsets[i] + data.variables[i].layout->dimensions.size() + 2;
  }
  std::vector<std::int64_t> agreed(offsets.back(), 0);
  for (std::size_t i = 0; i < variable_count; ++i) {
    const variable_blocks& vb = data.variables[i];
    const std::size_t ndims = vb.layout->dimensions.size();
    std::int64_t* entry = agreed.data() + offsets[i];
    for (const block_view* block : vb.blocks) {
      if (block->global_dims.empty() || block->global_dims.size() != ndims) continue;
      for (std::size_t d = 0; d < ndims; ++d) {
        entry[d] = std::max(entry[d], block->global_dims[d]);
      }
      entry[ndims] = 1;
    }
    entry[ndims + 1] = static_cast<std::int64_t>(vb.blocks.size());
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, agreed.data(), static_cast<int>(agreed.size()),
                          MPI_INT64_T, MPI_MAX, m_context.comm),
            "MPI_Allreduce");

  // Errors seen by every writer alike are thrown at once; errors in local blocks are agreed
  // on first so that no writer is left waiting in a collective call.
  for (std::size_t i = 0; i < variable_count; ++i) {
    const variable_blocks& vb = data.variables[i];
    const std::size_t ndims = vb.layout->dimensions.size();
    const std::int64_t* entry = agreed.data() + offsets[i];
    if (entry[ndims + 1] != 0 && entry[ndims] == 0) {
      throw storage_error("HDF5 store: Collective mode needs the global dimensions of variable \"" +
                          vb.var->name + "\": add global=\"...\" to layout \"" +
                          vb.layout->name + "\" (" + config_file(m_context.model) + ':' +
                          std::to_string(vb.layout->line) + ')');
    }
  }
  std::string problem;
  for (std::size_t i = 0; i < variable_count && problem.empty(); ++i) {
    const variable_blocks& vb = data.variables[i];
    const std::size_t ndims = vb.layout->dimensions.size();
    const std::int64_t* entry = agreed.data() + offsets[i];
    if (entry[ndims + 1] == 0) continue;
    const std::vector<std::int64_t> global(entry, entry + ndims);
    const std::size_t bytes = element_type_info(vb.layout->type).bytes;
    for (const block_view* block : vb.blocks) {
      problem = block_problem(*vb.var, *block, bytes);
      if (!problem.empty()) break;
      if (block->dims.size() != ndims) {
        problem = block_name(*vb.var, *block) + " has dimensions " + dims_text(block->dims) +
                  " but layout \"" + vb.layout->name + "\" has " + std::to_string(ndims);
        break;
      }
      for (std::size_t d = 0; d < ndims; ++d) {
        const std::int64_t start = block->position.empty() ? 0 : block->position[d];
        if (start < 0 || start + block->dims[d] > global[d]) {
          problem = block_name(*vb.var, *block) + " at position " +
                    dims_text(block->position.empty() ? std::vector<std::int64_t>(ndims, 0)
                                                      : block->position) +
                    " with dimensions " + dims_text(block->dims) +
                    " does not fit in the global dimensions " + dims_text(global);
          break;
        }
      }
      if (!problem.empty()) break;
    }
  }
  int failed = problem.empty() ? 0 : 1;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, m_context.comm),
            "MPI_Allreduce");
  if (failed != 0) {
    if (!problem.empty()) throw storage_error("HDF5 store: " + problem);
    throw storage_error("HDF5 store: another writer holds an invalid block in iteration " +
                        std::to_string(data.iteration) + "; nothing was written");
  }

  const std::string path = file_prefix(data.iteration) + ".h5";
  const call_site file_site{path, {}};
  file_handle file;
  {
    property_list_handle fapl(check_id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate", file_site));
    check_status(H5Pset_fapl_mpio(fapl.get(), m_context.comm, MPI_INFO_NULL), "H5Pset_fapl_mpio",
                 file_site);
    // Metadata is then written by a few ranks in one collective operation, not by rank 0
    // alone at close time.
    check_status(H5Pset_coll_metadata_write(fapl.get(), 1), "H5Pset_coll_metadata_write",
                 file_site);
    file = file_handle(check_id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                                "H5Fcreate", file_site));
  }
  write_int_attribute(file.get(), "/", "iteration", data.iteration, path);
  const property_list_handle lcpl = make_intermediate_group_lcpl(file_site);
  property_list_handle dxpl(check_id(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate", file_site));
  check_status(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio",
               file_site);

  for (std::size_t i = 0; i < variable_count; ++i) {
    const variable_blocks& vb = data.variables[i];
    const std::size_t ndims = vb.layout->dimensions.size();
    const std::int64_t* entry = agreed.data() + offsets[i];
    const std::int64_t write_count = entry[ndims + 1];
    // Nobody holds a block: a dataset of fill values would pass for real data.
    if (write_count == 0) continue;

    const std::string& name = vb.var->name;
    const call_site site{path, name};
    const hid_t type = element_type_info(vb.layout->type).native;
    const std::vector<hsize_t> global(entry, entry + ndims);
    const dataspace_handle global_space = make_simple_space(global, site);
    dataset_handle dataset(check_id(H5Dcreate2(file.get(), name.c_str(), type, global_space.get(),
                                               lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
                                    "H5Dcreate2", site));
    if (!vb.var->unit.empty()) {
      write_string_attribute(dataset.get(), name, "unit", vb.var->unit, path);
    }

    // Writers with fewer blocks still take part, with empty selections; HDF5 wants a
    // non-null buffer even then.
    static const char no_data = 0;
    for (std::int64_t k = 0; k < write_count; ++k) {
      const block_view* block =
          k < static_cast<std::int64_t>(vb.blocks.size()) ? vb.blocks[static_cast<std::size_t>(k)]
                                                          : nullptr;
      dataspace_handle file_space(check_id(H5Scopy(global_space.get()), "H5Scopy", site));
      dataspace_handle memory_space;
      const void* buffer = nullptr;
      if (block != nullptr && element_count(block->dims) > 0) {
        const std::vector<hsize_t> count = to_hsize(block->dims);
        const std::vector<hsize_t> start =
            block->position.empty() ? std::vector<hsize_t>(ndims, 0) : to_hsize(block->position);
        memory_space = make_simple_space(count, site);
        check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                         count.data(), nullptr),
                     "H5Sselect_hyperslab", site);
        buffer = block->data;
      } else {
        memory_space = dataspace_handle(check_id(H5Scopy(global_space.get()), "H5Scopy", site));
        check_status(H5Sselect_none(memory_space.get()), "H5Sselect_none", site);
        check_status(H5Sselect_none(file_space.get()), "H5Sselect_none", site);
        buffer = &no_data;
      }
      check_status(H5Dwrite(dataset.get(), type, memory_space.get(), file_space.get(), dxpl.get(),
                            buffer),
                   "H5Dwrite", site);
    }
    check_status(dataset.close(), "H5Dclose", site);
  }
  check_status(file.close(), "H5Fclose", file_site);
  log::debug("HDF5 store: wrote ", path);
}

void create_directories(const std::string& path, const store_context& context) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  // create_directories reports no error when another writer created it first.
  if (error || !std::filesystem::is_directory(path)) {
    throw storage_error("HDF5 store: cannot create directory \"" + path + "\" (FilesPath of " +
                        store_where(context) + ")" +
                        (error ? ": " + error.message() : std::string()));
  }
}

}  // namespace

store_options parse_options(const store_context& context) {
  store_options options;
  for (const auto& [raw_key, raw_value] : context.settings->options) {
    const std::string key = trimmed(raw_key);
    const std::string value = trimmed(raw_value);
    if (equals_ignoring_case(key, "FileMode")) {
      if (equals_ignoring_case(value, "FilePerCore")) {
        options.mode = file_mode::file_per_core;
      } else if (equals_ignoring_case(value, "Collective")) {
        options.mode = file_mode::collective;
      } else {
        throw config_error(store_where(context) + ": FileMode \"" + value +
                           "\" is not supported; valid values are " + valid_file_modes);
      }
    } else if (equals_ignoring_case(key, "FilesPath")) {
      options.files_path = value;
      if (!value.empty() && value.back() != '/') options.files_path += '/';
    } else if (equals_ignoring_case(key, "XDMFMode")) {
      options.xdmf_mode = value;
    } else {
      throw config_error(store_where(context) + ": unknown option \"" + key +
                         "\"; valid options are " + valid_option_keys);
    }
  }
  return options;
}

std::unique_ptr<store> make_hdf5_store(const store_context& context) {
  if (context.settings == nullptr || context.model == nullptr) {
    throw argument_error("HDF5 store: the store context needs a model and store settings");
  }
  store_options options = parse_options(context);
  if (options.mode == file_mode::collective && context.comm == MPI_COMM_NULL) {
    throw argument_error("HDF5 store: " + store_where(context) +
                         " uses FileMode Collective but was given no communicator");
  }
  if (!options.files_path.empty()) create_directories(options.files_path, context);
  return std::make_unique<hdf5_store>(context, std::move(options));
}

}  // namespace sidecore::plugins::hdf5
