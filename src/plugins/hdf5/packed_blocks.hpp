// The packed block layout (store option BlockLayout="Packed"): in a file-per-core file, all the
// blocks of one variable in one 1-D dataset, "<variable>/packed", one after the other in
// (source, block) order, each in C order; and their index, "<variable>/packed_index", a 2-D
// int64 dataset with one row per block:
//   source, block, offset, count, extents[ndims], position[ndims]
// (offset and count in elements of "packed"). A variable with thousands of small blocks is
// then two datasets instead of thousands, which is what makes it cheap to store and to open.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "config/model.hpp"
#include "plugins/hdf5/block_data.hpp"
#include "plugins/hdf5/compression.hpp"
#include "plugins/hdf5/hdf5_store.hpp"

namespace sidecore::plugins::hdf5 {

inline constexpr const char* packed_data_suffix = "/packed";
inline constexpr const char* packed_index_suffix = "/packed_index";
// Index columns before the extents and the position.
inline constexpr std::size_t packed_index_fixed_columns = 4;

inline std::string packed_data_name(const std::string& variable) {
  return variable + packed_data_suffix;
}
inline std::string packed_index_name(const std::string& variable) {
  return variable + packed_index_suffix;
}

// Whether one variable's blocks in one file are packed. Auto packs them when some block id is
// at or above <domains count>, past what a Damaris client can write: Damaris codes keep
// Damaris's dataset names, and many small blocks are not paid one HDF5 object each.
bool packs_blocks(block_layout layout, const std::vector<prepared_block>& blocks,
                  std::int32_t domains);

// Each block's offset in "packed", in elements: the blocks one after the other.
std::vector<std::int64_t> packed_offsets(const std::vector<prepared_block>& blocks);

// Writes the blocks of one variable (ordered by source and block) packed into the open file.
// The bytes HDF5 stored are added to stored_bytes.
void write_packed_variable(hid_t file, hid_t lcpl, const config::variable& var,
                           const config::layout& layout, const std::vector<prepared_block>& blocks,
                           stored_type type, const compression& settings,
                           const ghost_widths& ghosts, std::int32_t iteration,
                           const std::string& path, std::uint64_t& stored_bytes);

}  // namespace sidecore::plugins::hdf5
