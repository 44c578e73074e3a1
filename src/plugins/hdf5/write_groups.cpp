// Packing cuts every block into its rows (runs along the last dimension, contiguous both in the
// block and in the dataset), orders the rows by their offset in the dataset and copies each to
// its place in the union of all rows.
#include "plugins/hdf5/write_groups.hpp"

#include <algorithm>
#include <cstring>

#include "plugins/hdf5/store_internals.hpp"

namespace sidecore::plugins::hdf5 {

std::vector<write_group> group_blocks(const std::vector<prepared_block>& blocks,
                                      std::uint64_t max_bytes, std::size_t max_blocks) {
  std::vector<write_group> groups;
  for (const prepared_block& block : blocks) {
    if (element_total(block.dims) == 0) continue;
    if (groups.empty() || groups.back().blocks.size() >= max_blocks ||
        (!groups.back().blocks.empty() && groups.back().bytes + block.bytes > max_bytes))
      groups.emplace_back();
    groups.back().blocks.push_back(&block);
    groups.back().bytes += block.bytes;
  }
  return groups;
}

std::vector<unsigned char> pack_in_dataset_order(const write_group& group,
                                                 const std::vector<std::uint64_t>& global,
                                                 std::size_t element_size) {
  const std::size_t ndims = global.size();
  if (ndims == 0) {  // one element per block: no order to find
    std::vector<unsigned char> packed;
    for (const prepared_block* block : group.blocks) {
      const auto* data = static_cast<const unsigned char*>(block->data);
      packed.insert(packed.end(), data, data + element_size);
    }
    return packed;
  }
  // Elements between consecutive indices of each dimension, in the dataset.
  std::vector<std::uint64_t> stride(ndims, 1);
  for (std::size_t d = ndims; d-- > 1;) stride[d - 1] = stride[d] * global[d];
  struct row {
    std::uint64_t offset;  // in the dataset, in elements
    const unsigned char* source;
    std::uint64_t length;  // elements
  };
  std::vector<row> rows;
  for (const prepared_block* block : group.blocks) {
    const auto length = static_cast<std::uint64_t>(block->dims.back());
    const std::uint64_t count = element_total(block->dims) / std::max<std::uint64_t>(length, 1);
    const auto* data = static_cast<const unsigned char*>(block->data);
    std::vector<std::int64_t> index(ndims, 0);  // of the row's first element, in the block
    for (std::uint64_t r = 0; r < count; ++r) {
      std::uint64_t offset = 0;
      for (std::size_t d = 0; d < ndims; ++d)
        offset += static_cast<std::uint64_t>(block->position[d] + index[d]) * stride[d];
      rows.push_back({offset, data + r * length * element_size, length});
      // The next row: the last dimension stays at 0, the others count in row-major order.
      for (std::size_t d = ndims - 1; d-- > 0;) {
        if (++index[d] < block->dims[d]) break;
        index[d] = 0;
      }
    }
  }
  // The union of the rows as intervals of the dataset, in order, each with its place in the
  // buffer: overlapping blocks (a mistake, but one HDF5 would store) take one place, and the
  // later block's values win, as if the blocks were written one after the other.
  std::vector<std::size_t> order(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) order[r] = r;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return rows[a].offset < rows[b].offset; });
  struct interval {
    std::uint64_t offset, length, place;
  };
  std::vector<interval> merged;
  for (const std::size_t r : order) {
    const row& next = rows[r];
    if (!merged.empty() && next.offset <= merged.back().offset + merged.back().length) {
      interval& last = merged.back();
      last.length = std::max(last.length, next.offset + next.length - last.offset);
    } else {
      merged.push_back({next.offset, next.length, 0});
    }
  }
  std::uint64_t place = 0;
  for (interval& i : merged) {
    i.place = place;
    place += i.length;
  }
  std::vector<unsigned char> packed(place * element_size);
  for (const row& r : rows) {  // in block order
    const auto after =
        std::upper_bound(merged.begin(), merged.end(), r.offset,
                         [](std::uint64_t offset, const interval& i) { return offset < i.offset; });
    const interval& in = *(after - 1);
    std::memcpy(packed.data() + (in.place + r.offset - in.offset) * element_size, r.source,
                r.length * element_size);
  }
  return packed;
}

}  // namespace sidecore::plugins::hdf5
