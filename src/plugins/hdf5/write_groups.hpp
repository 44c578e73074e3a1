// Collective output writes the blocks of one variable a writer holds with as few collective
// H5Dwrite calls as it can: each call writes a group of blocks (the union of their hyperslabs),
// from one buffer holding their elements in the order HDF5 pairs them with the file selection.
// Groups are bounded in bytes and in blocks, so that the copy stays small and HDF5's selection
// of the union stays cheap; a group of one block is written from the block's own memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "plugins/hdf5/block_data.hpp"

namespace sidecore::plugins::hdf5 {

struct write_group {
  std::vector<const prepared_block*> blocks;  // each with at least one element
  std::uint64_t bytes = 0;
};

// The most a group holds: bytes (a single larger block forms a group alone) and blocks.
inline constexpr std::uint64_t write_group_bytes = 64ull << 20;
inline constexpr std::size_t write_group_blocks = 1024;

// The blocks with elements, in order, cut into groups of at most max_bytes (unless a block alone
// is larger) and max_blocks each.
std::vector<write_group> group_blocks(const std::vector<prepared_block>& blocks,
                                      std::uint64_t max_bytes = write_group_bytes,
                                      std::size_t max_blocks = write_group_blocks);

// The elements of the union of a group's blocks in the global dataset's row-major order (the
// order in which HDF5 visits a union of hyperslabs), element_size bytes each. Where blocks
// overlap, the later block's values are kept. The blocks must lie inside `global`.
std::vector<unsigned char> pack_in_dataset_order(const write_group& group,
                                                 const std::vector<std::uint64_t>& global,
                                                 std::size_t element_size);

}  // namespace sidecore::plugins::hdf5
