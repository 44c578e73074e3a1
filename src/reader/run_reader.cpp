#include "reader/run_reader.hpp"

#include <hdf5.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <set>
#include <tuple>
#include <utility>

#include "common/error.hpp"
#include "config/model.hpp"
#include "plugins/hdf5/hdf5_attributes.hpp"
#include "plugins/hdf5/hdf5_handle.hpp"
#include "plugins/hdf5/packed_blocks.hpp"
#include "reader/iteration_files.hpp"

namespace sidecore::reader {
namespace {

using plugins::hdf5::attribute_handle;
using plugins::hdf5::call_site;
using plugins::hdf5::check_id;
using plugins::hdf5::check_status;
using plugins::hdf5::dataset_handle;
using plugins::hdf5::dataspace_handle;
using plugins::hdf5::datatype_handle;
using plugins::hdf5::file_handle;
using plugins::hdf5::read_int_array_attribute;

element element_of(hid_t type, const call_site& site) {
  const H5T_class_t kind = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  if (kind == H5T_INTEGER) {
    switch (size) {
      case 1:
        return element::int8;
      case 2:
        return element::int16;
      case 4:
        return element::int32;
      case 8:
        return element::int64;
      default:
        break;
    }
  } else if (kind == H5T_FLOAT) {
    return size <= 4 ? element::float32 : element::float64;
  }
  throw storage_error("dataset \"" + std::string(site.object) + "\" of \"" + site.file +
                      "\" holds elements of a type Sidecore does not write (HDF5 class " +
                      std::to_string(static_cast<int>(kind)) + ", " + std::to_string(size) +
                      " bytes)");
}

hid_t memory_type(element type) {
  switch (type) {
    case element::int8:
      return H5T_NATIVE_SCHAR;
    case element::int16:
      return H5T_NATIVE_SHORT;
    case element::int32:
      return H5T_NATIVE_INT32;
    case element::int64:
      return H5T_NATIVE_INT64;
    case element::float32:
      return H5T_NATIVE_FLOAT;
    case element::float64:
      return H5T_NATIVE_DOUBLE;
  }
  return H5T_NATIVE_DOUBLE;
}

std::vector<std::int64_t> extents_of(hid_t dataset, const call_site& site) {
  const dataspace_handle space(check_id(H5Dget_space(dataset), "H5Dget_space", site));
  const int n = H5Sget_simple_extent_ndims(space.get());
  if (n < 0) check_status(n, "H5Sget_simple_extent_ndims", site);
  std::vector<hsize_t> dims(static_cast<std::size_t>(n));
  check_status(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr),
               "H5Sget_simple_extent_dims", site);
  return {dims.begin(), dims.end()};
}

std::uint64_t product(const std::vector<std::int64_t>& extents) {
  std::uint64_t n = 1;
  for (std::int64_t e : extents) n *= static_cast<std::uint64_t>(e);
  return n;
}

std::string text_of(const std::vector<std::int64_t>& v) {
  std::string t = "(";
  for (std::size_t i = 0; i < v.size(); ++i) t += (i ? "," : "") + std::to_string(v[i]);
  return t + ")";
}

// Copies the box [lo, lo + part) of a C-order array of extents `from_extents` at `from` into
// the C-order array of extents `to_extents` at `to`, at to_lo. Rows (the last dimension) are
// contiguous on both sides.
void copy_box(const unsigned char* from, const std::vector<std::int64_t>& from_extents,
              const std::vector<std::int64_t>& from_lo, unsigned char* to,
              const std::vector<std::int64_t>& to_extents, const std::vector<std::int64_t>& to_lo,
              const std::vector<std::int64_t>& part, std::size_t element) {
  const std::size_t n = part.size();
  const auto linear = [n](const std::vector<std::int64_t>& extents,
                          const std::vector<std::int64_t>& at) {
    std::uint64_t index = 0;
    for (std::size_t d = 0; d < n; ++d)
      index = index * static_cast<std::uint64_t>(extents[d]) + static_cast<std::uint64_t>(at[d]);
    return index;
  };
  const std::size_t row = static_cast<std::size_t>(part[n - 1]) * element;
  std::vector<std::int64_t> step(n, 0), src(n), dst(n);  // step: position inside the box
  while (true) {
    for (std::size_t d = 0; d < n; ++d) {
      src[d] = from_lo[d] + step[d];
      dst[d] = to_lo[d] + step[d];
    }
    std::memcpy(to + linear(to_extents, dst) * element, from + linear(from_extents, src) * element,
                row);
    // Next row: the odometer over every dimension but the last.
    std::size_t d = n - 1;
    while (d > 0) {
      --d;
      if (++step[d] < part[d]) break;
      step[d] = 0;
      if (d == 0) return;
    }
    if (n == 1) return;
  }
}

void check_room(std::uint64_t needed, std::uint64_t bytes, const std::string& what) {
  if (bytes < needed)
    throw argument_error(what + " needs " + std::to_string(needed) + " bytes; the buffer has " +
                         std::to_string(bytes));
}

// H5Lvisit callback: the names of the datasets of a file, through hard links and through
// external links (a collective file links time-invariant data stored in an earlier iteration's
// file; HDF5 looks for that file beside the one linking to it).
herr_t collect_datasets(hid_t group, const char* name, const H5L_info_t* info, void* data) {
  if (info->type != H5L_TYPE_HARD && info->type != H5L_TYPE_EXTERNAL) return 0;
  const hid_t object = H5Oopen(group, name, H5P_DEFAULT);
  if (object < 0) return info->type == H5L_TYPE_EXTERNAL ? 0 : -1;  // a dangling link
  const bool dataset = H5Iget_type(object) == H5I_DATASET;
  H5Oclose(object);
  if (dataset) static_cast<std::vector<std::string>*>(data)->push_back(name);
  return 0;
}

}  // namespace

std::size_t element_bytes(element type) noexcept {
  switch (type) {
    case element::int8:
      return 1;
    case element::int16:
      return 2;
    case element::int32:
    case element::float32:
      return 4;
    case element::int64:
    case element::float64:
      return 8;
  }
  return 0;
}

std::vector<std::int32_t> stored_iterations(const std::string& prefix) {
  std::set<std::int32_t> iterations;
  for (const auto& [name, path] : list_outputs(prefix)) iterations.insert(name.iteration);
  return {iterations.begin(), iterations.end()};
}

struct run_reader::location {
  std::size_t file = 0;
  std::string dataset;
  std::vector<std::int64_t> offset;  // of the block's first element in the dataset
  // BlockLayout Packed: the block is elements [packed_offset, + its element count) of the
  // 1-D dataset, in C order.
  bool packed = false;
  std::int64_t packed_offset = 0;
};

struct run_reader::opened {
  std::vector<std::string> paths;
  std::vector<file_handle> files;
  std::vector<std::int32_t> writers;  // per file: its writer (file-per-core), or -1
  // Per variable: the dataset that holds its whole global array (collective files), if any.
  std::map<std::string, location> global;
};

run_reader::run_reader(const std::string& prefix, std::int32_t iteration)
    : m_iteration(iteration), m_prefix(prefix), m_files(std::make_unique<opened>()) {
  const plugins::hdf5::error_print_guard quiet;  // failures are reported as exceptions
  m_survey = survey_iteration(prefix, iteration);
  const iteration_files& s = m_survey;
  if (s.writer_files.empty() && s.shared.empty() && s.unreadable.empty() && s.other_run.empty()) {
    const std::vector<std::int32_t> stored = stored_iterations(prefix);
    std::string list;
    for (std::size_t i = 0; i < stored.size() && i < 20; ++i)
      list += (i ? ", " : "") + std::to_string(stored[i]);
    if (stored.size() > 20) list += ", ...";
    throw argument_error("no output of iteration " + std::to_string(iteration) + " under \"" +
                         prefix + "\": neither " + prefix + "_It" + std::to_string(iteration) +
                         "_Pr<writer>.h5 nor " + prefix + "_It" + std::to_string(iteration) +
                         ".h5 exists (stored iterations: " + (list.empty() ? "none" : list) + ")");
  }
  // File-per-core output is read from the writers' files of the run that wrote the iteration
  // (a master file, when there is one, only maps them); a collective file holds everything.
  const bool per_core = s.per_core;
  if (per_core) {
    for (const auto& [writer, path] : s.writer_files) {
      m_files->paths.push_back(path);
      m_files->writers.push_back(writer);
    }
  } else if (!s.shared.empty()) {
    m_files->paths.push_back(s.shared);
    m_files->writers.push_back(-1);
  }
  if (m_files->paths.empty())
    throw storage_error("iteration " + std::to_string(iteration) + " under \"" + prefix +
                        "\" cannot be read: " + s.problems());
  m_complete = s.complete();
  for (std::size_t f = 0; f < m_files->paths.size(); ++f) {
    const call_site site{m_files->paths[f], {}};
    m_files->files.emplace_back(
        check_id(H5Fopen(m_files->paths[f].c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen", site));
    scan_file(f, per_core, nullptr);
  }
  // Time-invariant variables stored in an earlier iteration: the master file names that
  // iteration (collective files link to the data instead, and were followed above).
  if (per_core && !s.shared.empty()) add_earlier_variables(prefix, s.shared);
  for (std::size_t v = 0; v < m_variables.size(); ++v) {
    std::vector<std::size_t> order(m_variables[v].blocks.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    const auto& blocks = m_variables[v].blocks;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return std::tie(blocks[a].source, blocks[a].block) <
             std::tie(blocks[b].source, blocks[b].block);
    });
    std::vector<block_info> sorted_blocks;
    std::vector<location> sorted_locations;
    for (std::size_t i : order) {
      sorted_blocks.push_back(std::move(m_variables[v].blocks[i]));
      sorted_locations.push_back(std::move(m_locations[v][i]));
    }
    m_variables[v].blocks = std::move(sorted_blocks);
    m_locations[v] = std::move(sorted_locations);
  }
}

run_reader::~run_reader() = default;

void run_reader::add_earlier_variables(const std::string& prefix, const std::string& master_path) {
  const call_site master_site{master_path, {}};
  const file_handle master(
      check_id(H5Fopen(master_path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen", master_site));
  std::vector<std::string> datasets;
  check_status(H5Lvisit(master.get(), H5_INDEX_NAME, H5_ITER_NATIVE, collect_datasets, &datasets),
               "H5Lvisit", master_site);
  std::map<std::int32_t, std::set<std::string>> earlier;  // stored iteration -> variables
  for (const std::string& name : datasets) {
    if (m_index.count(name) != 0) continue;
    const call_site site{master_path, name};
    const dataset_handle dataset(
        check_id(H5Dopen2(master.get(), name.c_str(), H5P_DEFAULT), "H5Dopen2", site));
    const std::vector<std::int32_t> stored =
        read_int_array_attribute<std::int32_t>(dataset.get(), "stored_iteration", site);
    if (!stored.empty() && stored[0] != m_iteration) earlier[stored[0]].insert(name);
  }
  for (const auto& [stored, names] : earlier) {
    // The earlier iteration's files, when the same run wrote them.
    const iteration_files earlier_files = survey_iteration(prefix, stored);
    if (earlier_files.run_id != m_survey.run_id) continue;
    if (!earlier_files.complete()) m_complete = false;
    for (const auto& [writer, path] : earlier_files.writer_files) {
      const std::size_t f = m_files->paths.size();
      m_files->paths.push_back(path);
      m_files->writers.push_back(writer);
      m_files->files.emplace_back(check_id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT),
                                           "H5Fopen", call_site{path, {}}));
      scan_file(f, true, &names);
    }
  }
}

void run_reader::scan_file(std::size_t file, bool per_core, const std::set<std::string>* only) {
  const std::string& path = m_files->paths[file];
  const hid_t handle = m_files->files[file].get();
  std::vector<std::string> datasets;
  check_status(H5Lvisit(handle, H5_INDEX_NAME, H5_ITER_NATIVE, collect_datasets, &datasets),
               "H5Lvisit", call_site{path, {}});

  const auto variable_slot = [this](const std::string& name, element type,
                                    const std::vector<std::int64_t>& global) -> std::size_t {
    auto [it, added] = m_index.emplace(name, m_variables.size());
    if (added) {
      variable_info info;
      info.name = name;
      info.type = type;
      m_variables.push_back(std::move(info));
      m_locations.emplace_back();
    }
    variable_info& v = m_variables[it->second];
    if (v.global_extents.size() < global.size()) v.global_extents.assign(global.size(), 0);
    for (std::size_t d = 0; d < global.size(); ++d)
      v.global_extents[d] = std::max(v.global_extents[d], global[d]);
    return it->second;
  };

  const auto ends_with = [](const std::string& text, const std::string& suffix) {
    return text.size() > suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  const std::string index_suffix = plugins::hdf5::packed_index_suffix;
  for (const std::string& name : datasets) {
    if (per_core && ends_with(name, index_suffix)) {
      const std::string variable = name.substr(0, name.size() - index_suffix.size());
      if (only == nullptr || only->count(variable) != 0) scan_packed(file, variable, variable_slot);
      continue;
    }
    const call_site site{path, name};
    const dataset_handle dataset(
        check_id(H5Dopen2(handle, name.c_str(), H5P_DEFAULT), "H5Dopen2", site));
    const datatype_handle type(check_id(H5Dget_type(dataset.get()), "H5Dget_type", site));
    const std::vector<std::int32_t> source =
        read_int_array_attribute<std::int32_t>(dataset.get(), "source", site);
    if (!source.empty()) {
      // One block in its own dataset: <variable>/P<source>[/B<block>].
      const std::vector<std::int32_t> id =
          read_int_array_attribute<std::int32_t>(dataset.get(), "block", site);
      const std::int32_t block = id.empty() ? 0 : id[0];
      std::string variable = name;
      const std::string with_block =
          "/P" + std::to_string(source[0]) + "/B" + std::to_string(block);
      const std::string without = "/P" + std::to_string(source[0]);
      if (ends_with(variable, with_block))
        variable.resize(variable.size() - with_block.size());
      else if (ends_with(variable, without))
        variable.resize(variable.size() - without.size());
      if (only != nullptr && only->count(variable) == 0) continue;
      block_info info;
      info.writer = m_files->writers[file];
      info.source = source[0];
      info.block = block;
      info.extents = extents_of(dataset.get(), site);
      info.position = read_int_array_attribute<std::int64_t>(dataset.get(), "position", site);
      info.position.resize(info.extents.size(), 0);
      const std::size_t v = variable_slot(
          variable, element_of(type.get(), site),
          read_int_array_attribute<std::int64_t>(dataset.get(), "global_dimensions", site));
      m_variables[v].blocks.push_back(std::move(info));
      m_locations[v].push_back(
          {file, name, std::vector<std::int64_t>(m_variables[v].blocks.back().extents.size(), 0)});
      continue;
    }
    if (per_core) continue;  // not a block of a file-per-core file
    // A view of blocks listed above (by_client/<variable>, indexed by client), not a variable.
    if (H5Aexists(dataset.get(), "indexed_by") > 0) continue;
    // A global dataset of a collective file, and the table of the blocks merged into it.
    const std::vector<std::int64_t> global = extents_of(dataset.get(), site);
    const std::size_t v = variable_slot(name, element_of(type.get(), site), global);
    m_files->global[name] = {file, name, std::vector<std::int64_t>(global.size(), 0)};
    const std::vector<std::int32_t> origins =
        read_int_array_attribute<std::int32_t>(dataset.get(), "block_origins", site);
    const std::vector<std::int64_t> extents =
        read_int_array_attribute<std::int64_t>(dataset.get(), "block_dimensions", site);
    const std::vector<std::int64_t> positions =
        read_int_array_attribute<std::int64_t>(dataset.get(), "block_positions", site);
    const std::size_t n = global.size(), rows = origins.size() / 3;
    if (extents.size() != rows * n || positions.size() != rows * n) continue;
    for (std::size_t r = 0; r < rows; ++r) {
      block_info info;
      info.writer = origins[3 * r];
      info.source = origins[3 * r + 1];
      info.block = origins[3 * r + 2];
      info.extents.assign(extents.begin() + static_cast<std::ptrdiff_t>(r * n),
                          extents.begin() + static_cast<std::ptrdiff_t>((r + 1) * n));
      info.position.assign(positions.begin() + static_cast<std::ptrdiff_t>(r * n),
                           positions.begin() + static_cast<std::ptrdiff_t>((r + 1) * n));
      m_locations[v].push_back({file, name, info.position});
      m_variables[v].blocks.push_back(std::move(info));
    }
  }
}

void run_reader::scan_packed(
    std::size_t file, const std::string& variable,
    const std::function<std::size_t(const std::string&, element, const std::vector<std::int64_t>&)>&
        variable_slot) {
  const std::string& path = m_files->paths[file];
  const hid_t handle = m_files->files[file].get();
  const std::string data_name = plugins::hdf5::packed_data_name(variable);
  const std::string index_name = plugins::hdf5::packed_index_name(variable);
  const call_site site{path, data_name}, index_site{path, index_name};
  const dataset_handle data(
      check_id(H5Dopen2(handle, data_name.c_str(), H5P_DEFAULT), "H5Dopen2", site));
  const datatype_handle type(check_id(H5Dget_type(data.get()), "H5Dget_type", site));
  const std::vector<std::int32_t> ndims_attribute =
      read_int_array_attribute<std::int32_t>(data.get(), "ndims", site);
  const std::int64_t packed_elements = extents_of(data.get(), site).at(0);
  const dataset_handle index(
      check_id(H5Dopen2(handle, index_name.c_str(), H5P_DEFAULT), "H5Dopen2", index_site));
  const std::vector<std::int64_t> shape = extents_of(index.get(), index_site);
  const std::size_t ndims =
      ndims_attribute.empty() ? 0 : static_cast<std::size_t>(ndims_attribute[0]);
  const std::size_t columns = plugins::hdf5::packed_index_fixed_columns + 2 * ndims;
  if (shape.size() != 2 || static_cast<std::size_t>(shape[1]) != columns)
    throw storage_error("\"" + index_name + "\" in \"" + path +
                        "\" is not a packed block index of " + std::to_string(ndims) +
                        " dimensions (expected " + std::to_string(columns) + " columns)");
  std::vector<std::int64_t> rows(static_cast<std::size_t>(shape[0]) * columns);
  if (!rows.empty())
    check_status(H5Dread(index.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()),
                 "H5Dread", index_site);
  const std::size_t v =
      variable_slot(variable, element_of(type.get(), site),
                    read_int_array_attribute<std::int64_t>(data.get(), "global_dimensions", site));
  for (std::size_t r = 0; r < static_cast<std::size_t>(shape[0]); ++r) {
    const std::int64_t* row = rows.data() + r * columns;
    block_info info;
    info.writer = m_files->writers[file];
    info.source = static_cast<std::int32_t>(row[0]);
    info.block = static_cast<std::int32_t>(row[1]);
    const std::int64_t* extents = row + plugins::hdf5::packed_index_fixed_columns;
    info.extents.assign(extents, extents + ndims);
    info.position.assign(extents + ndims, extents + 2 * ndims);
    if (row[2] < 0 || row[3] != static_cast<std::int64_t>(product(info.extents)) ||
        row[2] + row[3] > packed_elements)
      throw storage_error("\"" + index_name + "\" in \"" + path + "\": row " + std::to_string(r) +
                          " does not describe a block inside \"" + data_name + "\"");
    location at;
    at.file = file;
    at.dataset = data_name;
    at.packed = true;
    at.packed_offset = row[2];
    m_variables[v].blocks.push_back(std::move(info));
    m_locations[v].push_back(std::move(at));
  }
}

const variable_info& run_reader::variable(const std::string& name) const {
  auto it = m_index.find(name);
  if (it != m_index.end()) return m_variables[it->second];
  std::vector<std::string> names;
  std::string list;
  for (const variable_info& v : m_variables) {
    names.push_back(v.name);
    list += (list.empty() ? "" : ", ") + v.name;
  }
  std::string text = "no variable '" + name + "' in iteration " + std::to_string(m_iteration);
  if (const std::string* nearest = config::detail::closest(name, names))
    text += "; did you mean '" + *nearest + "'?";
  throw error(DAMARIS_UNDEFINED_VARIABLE,
              text + " (stored: " + (list.empty() ? "none" : list) + ")");
}

void run_reader::read_block(const std::string& name, std::int32_t source, std::int32_t block,
                            element type, void* out, std::uint64_t bytes) {
  const plugins::hdf5::error_print_guard quiet;
  const variable_info& v = variable(name);
  const std::size_t index = m_index.at(name);
  const auto it =
      std::lower_bound(v.blocks.begin(), v.blocks.end(), std::make_pair(source, block),
                       [](const block_info& b, const std::pair<std::int32_t, std::int32_t>& key) {
                         return std::tie(b.source, b.block) < std::tie(key.first, key.second);
                       });
  if (it == v.blocks.end() || it->source != source || it->block != block) {
    // The block may lie in a writer's file that is missing or torn: say which.
    const std::string gone = m_survey.missing_data_files(m_prefix);
    throw error(DAMARIS_BLOCK_NOT_FOUND,
                "variable '" + name + "' has no block " + std::to_string(block) + " of source " +
                    std::to_string(source) + " in iteration " + std::to_string(m_iteration) +
                    (gone.empty() ? std::string() : " (not stored, or in " + gone + ")"));
  }
  if (!out) throw argument_error("the buffer is NULL");
  const std::uint64_t elements = product(it->extents);
  check_room(elements * element_bytes(type), bytes,
             "block " + std::to_string(block) + " of source " + std::to_string(source) + " of '" +
                 name + "'");
  if (elements == 0) return;
  const location& at = m_locations[index][static_cast<std::size_t>(it - v.blocks.begin())];
  const call_site site{m_files->paths[at.file], at.dataset};
  const dataset_handle dataset(check_id(
      H5Dopen2(m_files->files[at.file].get(), at.dataset.c_str(), H5P_DEFAULT), "H5Dopen2", site));
  const dataspace_handle file_space(check_id(H5Dget_space(dataset.get()), "H5Dget_space", site));
  if (at.packed) {
    const hsize_t start_1d = static_cast<hsize_t>(at.packed_offset), count_1d = elements;
    check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start_1d, nullptr,
                                     &count_1d, nullptr),
                 "H5Sselect_hyperslab", site);
    const dataspace_handle memory_space(
        check_id(H5Screate_simple(1, &count_1d, nullptr), "H5Screate_simple", site));
    check_status(H5Dread(dataset.get(), memory_type(type), memory_space.get(), file_space.get(),
                         H5P_DEFAULT, out),
                 "H5Dread", site);
    return;
  }
  const std::vector<hsize_t> start(at.offset.begin(), at.offset.end()),
      count(it->extents.begin(), it->extents.end());
  if (!count.empty())
    check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                     count.data(), nullptr),
                 "H5Sselect_hyperslab", site);
  const dataspace_handle memory_space(check_id(
      count.empty() ? H5Screate(H5S_SCALAR)
                    : H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr),
      "H5Screate_simple", site));
  check_status(H5Dread(dataset.get(), memory_type(type), memory_space.get(), file_space.get(),
                       H5P_DEFAULT, out),
               "H5Dread", site);
}

void run_reader::read_region(const std::string& name, const std::vector<std::int64_t>& start,
                             const std::vector<std::int64_t>& count, element type, void* out,
                             std::uint64_t bytes) {
  const plugins::hdf5::error_print_guard quiet;
  const variable_info& v = variable(name);
  const std::size_t index = m_index.at(name);
  const std::size_t n = v.global_extents.size();
  if (n == 0)
    throw argument_error(
        "variable '" + name +
        "' has no global extents (its layout gives none): read its blocks one by one");
  if (start.size() != n || count.size() != n)
    throw error(DAMARIS_INVALID_DIMENSIONS, "variable '" + name + "' has " + std::to_string(n) +
                                                " dimensions; the region gives " +
                                                std::to_string(start.size()));
  for (std::size_t d = 0; d < n; ++d)
    if (start[d] < 0 || count[d] < 0 || start[d] + count[d] > v.global_extents[d])
      throw error(DAMARIS_INVALID_DIMENSIONS, "region start " + text_of(start) + " count " +
                                                  text_of(count) +
                                                  " is outside the global extents " +
                                                  text_of(v.global_extents) + " of '" + name + "'");
  if (!out) throw argument_error("the buffer is NULL");
  const std::uint64_t elements = product(count);
  check_room(elements * element_bytes(type), bytes, "the region of '" + name + "'");
  if (elements == 0) return;
  std::vector<std::int64_t> hi(n);
  for (std::size_t d = 0; d < n; ++d) hi[d] = start[d] + count[d];
  if (!m_survey.missing_writers.empty() && m_files->global.count(name) == 0) {
    // A writer's file is missing or torn: elements no present block covers may be its data,
    // which must not read as zeros. (Blocks do not overlap: their interiors tile the array.)
    std::uint64_t covered = 0;
    for (const block_info& block : v.blocks) {
      if (block.extents.size() != n) continue;
      std::uint64_t overlap = 1;
      for (std::size_t d = 0; d < n && overlap > 0; ++d) {
        const std::int64_t lo = std::max(start[d], block.position[d]);
        const std::int64_t up = std::min(hi[d], block.position[d] + block.extents[d]);
        overlap = lo < up ? overlap * static_cast<std::uint64_t>(up - lo) : 0;
      }
      covered += overlap;
    }
    if (covered < elements)
      throw storage_error(
          "variable '" + name + "', region start " + text_of(start) + " count " + text_of(count) +
          " of iteration " + std::to_string(m_iteration) + ": " +
          std::to_string(elements - covered) + " of its " + std::to_string(elements) +
          " elements are in no file that can be read; "
          "the data of " +
          m_survey.missing_data_files(m_prefix) + " is lost (" + m_survey.problems() + ")");
  }
  std::memset(out, 0, elements * element_bytes(type));
  const std::vector<hsize_t> memory_extents(count.begin(), count.end());

  std::vector<unsigned char> staging;  // a packed block partly inside the region
  dataset_handle open_dataset;
  std::size_t open_file = 0;
  std::string open_name;
  const auto read_part = [&](const location& at, const std::vector<std::int64_t>& lo,
                             const std::vector<std::int64_t>& hi,
                             const std::vector<std::int64_t>& origin,
                             const std::vector<std::int64_t>& block_extents) {
    // [lo, hi) in global coordinates; origin: the global position of the dataset's at.offset.
    const call_site site{m_files->paths[at.file], at.dataset};
    // Consecutive blocks often share a dataset (a packed one, a collective file's): opened once.
    if (!open_dataset.valid() || open_file != at.file || open_name != at.dataset) {
      open_dataset = dataset_handle(
          check_id(H5Dopen2(m_files->files[at.file].get(), at.dataset.c_str(), H5P_DEFAULT),
                   "H5Dopen2", site));
      open_file = at.file;
      open_name = at.dataset;
    }
    const dataset_handle& dataset = open_dataset;
    const dataspace_handle file_space(check_id(H5Dget_space(dataset.get()), "H5Dget_space", site));
    if (at.packed) {
      // The block's run of the 1-D dataset, read into its place when the region holds all of
      // it, else staged and the overlap copied.
      const hsize_t start_1d = static_cast<hsize_t>(at.packed_offset),
                    count_1d = product(block_extents);
      check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start_1d, nullptr,
                                       &count_1d, nullptr),
                   "H5Sselect_hyperslab", site);
      bool whole = true;
      std::vector<hsize_t> memory_start(n), part(n);
      std::vector<std::int64_t> part_extents(n), in_block(n), in_region(n);
      for (std::size_t d = 0; d < n; ++d) {
        part_extents[d] = hi[d] - lo[d];
        whole = whole && part_extents[d] == block_extents[d];
        part[d] = static_cast<hsize_t>(part_extents[d]);
        in_region[d] = lo[d] - start[d];
        memory_start[d] = static_cast<hsize_t>(in_region[d]);
        in_block[d] = lo[d] - origin[d];
      }
      if (whole) {
        const dataspace_handle memory_space(
            check_id(H5Screate_simple(static_cast<int>(n), memory_extents.data(), nullptr),
                     "H5Screate_simple", site));
        check_status(H5Sselect_hyperslab(memory_space.get(), H5S_SELECT_SET, memory_start.data(),
                                         nullptr, part.data(), nullptr),
                     "H5Sselect_hyperslab", site);
        check_status(H5Dread(dataset.get(), memory_type(type), memory_space.get(), file_space.get(),
                             H5P_DEFAULT, out),
                     "H5Dread", site);
        return;
      }
      const std::size_t element = element_bytes(type);
      staging.resize(count_1d * element);
      const dataspace_handle memory_space(
          check_id(H5Screate_simple(1, &count_1d, nullptr), "H5Screate_simple", site));
      check_status(H5Dread(dataset.get(), memory_type(type), memory_space.get(), file_space.get(),
                           H5P_DEFAULT, staging.data()),
                   "H5Dread", site);
      copy_box(staging.data(), block_extents, in_block, static_cast<unsigned char*>(out), count,
               in_region, part_extents, element);
      return;
    }
    std::vector<hsize_t> file_start(n), part(n), memory_start(n);
    for (std::size_t d = 0; d < n; ++d) {
      file_start[d] = static_cast<hsize_t>(at.offset[d] + lo[d] - origin[d]);
      part[d] = static_cast<hsize_t>(hi[d] - lo[d]);
      memory_start[d] = static_cast<hsize_t>(lo[d] - start[d]);
    }
    check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, file_start.data(), nullptr,
                                     part.data(), nullptr),
                 "H5Sselect_hyperslab", site);
    const dataspace_handle memory_space(
        check_id(H5Screate_simple(static_cast<int>(n), memory_extents.data(), nullptr),
                 "H5Screate_simple", site));
    check_status(H5Sselect_hyperslab(memory_space.get(), H5S_SELECT_SET, memory_start.data(),
                                     nullptr, part.data(), nullptr),
                 "H5Sselect_hyperslab", site);
    check_status(H5Dread(dataset.get(), memory_type(type), memory_space.get(), file_space.get(),
                         H5P_DEFAULT, out),
                 "H5Dread", site);
  };

  // A collective file holds the whole array in one dataset: one read.
  if (auto g = m_files->global.find(name); g != m_files->global.end()) {
    read_part(g->second, start, hi, std::vector<std::int64_t>(n, 0), v.global_extents);
    return;
  }
  std::vector<std::int64_t> lo_part(n), hi_part(n);
  for (std::size_t b = 0; b < v.blocks.size(); ++b) {
    const block_info& block = v.blocks[b];
    if (block.extents.size() != n) continue;
    bool overlaps = true;
    for (std::size_t d = 0; d < n && overlaps; ++d) {
      lo_part[d] = std::max(start[d], block.position[d]);
      hi_part[d] = std::min(hi[d], block.position[d] + block.extents[d]);
      overlaps = lo_part[d] < hi_part[d];
    }
    if (overlaps) read_part(m_locations[index][b], lo_part, hi_part, block.position, block.extents);
  }
}

}  // namespace sidecore::reader
