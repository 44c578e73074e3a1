#include "plugins/hdf5/packed_blocks.hpp"

#include <algorithm>

#include "plugins/hdf5/hdf5_attributes.hpp"
#include "plugins/hdf5/hdf5_handle.hpp"
#include "plugins/hdf5/store_internals.hpp"

namespace sidecore::plugins::hdf5 {
namespace {

// Chunks of a compressed packed dataset: 256 Ki elements, or the whole dataset when smaller.
constexpr hsize_t packed_chunk_elements = hsize_t{1} << 18;

}  // namespace

bool packs_blocks(block_layout layout, const std::vector<prepared_block>& blocks,
                  std::int32_t domains) {
  switch (layout) {
    case block_layout::datasets:
      return false;
    case block_layout::packed:
      return true;
    case block_layout::automatic:
      break;
  }
  return std::any_of(blocks.begin(), blocks.end(),
                     [domains](const prepared_block& p) { return p.view->block_id >= domains; });
}

std::vector<std::int64_t> packed_offsets(const std::vector<prepared_block>& blocks) {
  std::vector<std::int64_t> offsets(blocks.size());
  std::int64_t total = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    offsets[b] = total;
    total += element_count(blocks[b].dims);
  }
  return offsets;
}

void write_packed_variable(hid_t file, hid_t lcpl, const config::variable& var,
                           const config::layout& layout, const std::vector<prepared_block>& blocks,
                           stored_type type, const compression& settings,
                           const ghost_widths& ghosts, std::int32_t iteration,
                           const std::string& path, std::uint64_t& stored_bytes) {
  const std::string data_name = packed_data_name(var.name);
  const std::string index_name = packed_index_name(var.name);
  const call_site site{path, data_name};
  const std::size_t ndims = blocks.empty() ? 0 : blocks.front().dims.size();
  const std::size_t columns = packed_index_fixed_columns + 2 * ndims;

  const std::vector<std::int64_t> offsets = packed_offsets(blocks);
  std::vector<std::int64_t> index(blocks.size() * columns);
  std::vector<std::int64_t> global;
  std::int64_t total = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const prepared_block& p = blocks[b];
    const std::int64_t count = element_count(p.dims);
    std::int64_t* row = index.data() + b * columns;
    row[0] = p.view->source;
    row[1] = p.view->block_id;
    row[2] = offsets[b];
    row[3] = count;
    std::copy(p.dims.begin(), p.dims.end(), row + packed_index_fixed_columns);
    std::copy(p.position.begin(), p.position.end(), row + packed_index_fixed_columns + ndims);
    total += count;
    // The global extents the blocks were written with: the largest of each (as the master's).
    if (global.size() < p.view->global_dims.size()) global.resize(p.view->global_dims.size(), 0);
    for (std::size_t d = 0; d < p.view->global_dims.size(); ++d)
      global[d] = std::max(global[d], p.view->global_dims[d]);
  }

  const stored_hdf5_type file_type(type);
  const std::vector<hsize_t> extent{static_cast<hsize_t>(total)};
  const dataspace_handle space = make_simple_space(extent, site);
  const property_list_handle dcpl = make_dataset_properties(
      settings,
      total > 0 ? std::vector<hsize_t>{std::min(extent[0], packed_chunk_elements)}
                : std::vector<hsize_t>{},
      stored_size(type), site);
  dataset_handle dataset(check_id(H5Dcreate2(file, data_name.c_str(), file_type.get(), space.get(),
                                             lcpl, dcpl.get(), H5P_DEFAULT),
                                  "H5Dcreate2", site));
  // Blocks that follow each other in memory (as a client's consecutive writes usually do in
  // the shared buffer) are written in one call.
  std::size_t b = 0;
  while (b < blocks.size()) {
    const unsigned char* start = static_cast<const unsigned char*>(blocks[b].data);
    std::uint64_t bytes = blocks[b].bytes;
    std::size_t next = b + 1;
    while (next < blocks.size() && start != nullptr &&
           static_cast<const unsigned char*>(blocks[next].data) == start + bytes) {
      bytes += blocks[next].bytes;
      ++next;
    }
    const hsize_t count = bytes / stored_size(type);
    if (count > 0) {
      const hsize_t offset = static_cast<hsize_t>(offsets[b]);
      check_status(
          H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &offset, nullptr, &count, nullptr),
          "H5Sselect_hyperslab", site);
      const dataspace_handle memory = make_simple_space({count}, site);
      check_status(
          H5Dwrite(dataset.get(), file_type.get(), memory.get(), space.get(), H5P_DEFAULT, start),
          "H5Dwrite", site);
    }
    b = next;
  }
  write_int_attribute(dataset.get(), data_name, "iteration", iteration, path);
  write_string_attribute(dataset.get(), data_name, "layout", layout.name, path);
  write_int_attribute(dataset.get(), data_name, "ndims", static_cast<std::int32_t>(ndims), path);
  if (!global.empty())
    write_int64_array_attribute(dataset.get(), data_name, "global_dimensions", global, path);
  if (!ghosts.empty()) {
    write_int64_array_attribute(dataset.get(), data_name, "ghosts_before", ghosts.before, path);
    write_int64_array_attribute(dataset.get(), data_name, "ghosts_after", ghosts.after, path);
  }
  if (!var.unit.empty()) write_string_attribute(dataset.get(), data_name, "unit", var.unit, path);
  stored_bytes += H5Dget_storage_size(dataset.get());
  check_status(dataset.close(), "H5Dclose", site);

  const call_site index_site{path, index_name};
  const std::vector<hsize_t> table{static_cast<hsize_t>(blocks.size()),
                                   static_cast<hsize_t>(columns)};
  const dataspace_handle index_space = make_simple_space(table, index_site);
  dataset_handle index_set(check_id(H5Dcreate2(file, index_name.c_str(), H5T_STD_I64LE,
                                               index_space.get(), lcpl, H5P_DEFAULT, H5P_DEFAULT),
                                    "H5Dcreate2", index_site));
  if (!index.empty())
    check_status(
        H5Dwrite(index_set.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, index.data()),
        "H5Dwrite", index_site);
  write_string_attribute(index_set.get(), index_name, "columns",
                         "source block offset count extents[ndims] position[ndims]", path);
  check_status(index_set.close(), "H5Dclose", index_site);
}

}  // namespace sidecore::plugins::hdf5
