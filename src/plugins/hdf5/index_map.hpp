// select-file: the global positions an index variable gives to each element of a block, kept
// per (index variable, source, block), and the HDF5 selections that write a block there.
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "plugins/hdf5/hdf5_handle.hpp"
#include "plugins/store.hpp"

namespace sidecore::plugins::hdf5 {

// The positions one block of an index variable gives: element i of a selected block goes to
// global position values[i] (C order over the dataset's extents).
struct block_positions {
  std::vector<std::int64_t> values;
  // Element indices by increasing position: blocks are sent and written in file order.
  std::vector<std::size_t> order;
  std::int64_t smallest = 0;
  std::int64_t largest = -1;
  std::int64_t duplicate = -1;  // a position given twice, or -1
  std::int32_t iteration = 0;   // of the values
};

// The index variables' blocks, kept from the iteration that wrote them until a later one
// writes them again: a time-varying="false" index is written once and used for every
// iteration after.
class index_map {
 public:
  // Copies the blocks of index variable `variable` (its index in the model; integer layout).
  // Throws storage_error when a block is malformed.
  void update(std::size_t variable, const variable_blocks& index);
  // The positions of (index variable, source, block), or nullptr when never written.
  const block_positions* find(std::size_t variable, std::int32_t source, std::int32_t block) const;
  // Changes whenever update() is given blocks of the variable: what was checked against the
  // other writers (no position given twice) needs no second check until then.
  std::uint64_t generation(std::size_t variable) const;

 private:
  std::map<std::tuple<std::size_t, std::int32_t, std::int32_t>, block_positions> m_blocks;
  std::map<std::size_t, std::uint64_t> m_generations;
};

// Selects, in file_space (the dataset's extents global), the positions of p in increasing
// order, as points unravelled in C order (datasets of more than one dimension, whose shares
// would not be hyperslabs; 1-D datasets are written by write_by_shares).
void select_positions(hid_t file_space, const block_positions& p,
                      const std::vector<hsize_t>& global, const call_site& site);

// The block's elements (each element_bytes long) in the order select_positions lists them.
std::vector<unsigned char> gather_in_position_order(const void* data, std::size_t element_bytes,
                                                    const block_positions& p);

// One local block of a variable placed by select-file: its data (stored type) and positions.
struct mapped_block {
  const void* data = nullptr;
  const block_positions* positions = nullptr;
};

// Writes a 1-D dataset placed by select-file, collectively over comm: each writer sends every
// element to the writer whose share of the dataset (equal ranges, in writer order) holds its
// position, then writes its share as one hyperslab, positions no block gives as zeros (the
// fill value). MPI-IO then sees one contiguous piece per writer instead of scattered points,
// which parallel HDF5 writes slowly. Positions must have been checked (in range, unique).
void write_by_shares(hid_t dataset, hid_t file_type, hsize_t total,
                     const std::vector<mapped_block>& blocks, std::size_t element_bytes,
                     MPI_Comm comm, hid_t dxpl, const call_site& site);

}  // namespace sidecore::plugins::hdf5
