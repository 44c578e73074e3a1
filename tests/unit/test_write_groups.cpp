// Collective output's write groups: blocks cut into bounded groups, and a group's elements packed
// in the order HDF5 visits the union of their hyperslabs (row-major in the global dataset),
// checked against the dataset each block would fill when written alone.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "plugins/hdf5/write_groups.hpp"

namespace {

using sidecore::plugins::hdf5::group_blocks;
using sidecore::plugins::hdf5::pack_in_dataset_order;
using sidecore::plugins::hdf5::prepared_block;
using sidecore::plugins::hdf5::write_group;

// A block of int32 values at `position` with extents `dims`; each value is its global row-major
// index times 10 plus `tag`, so that a value says where it belongs and which block wrote it.
struct test_block {
  prepared_block block;
  std::vector<std::int32_t> values;
  test_block(std::vector<std::int64_t> dims, std::vector<std::int64_t> position,
             const std::vector<std::uint64_t>& global, std::int32_t tag) {
    std::uint64_t count = 1;
    for (std::int64_t d : dims) count *= static_cast<std::uint64_t>(d);
    values.resize(count);
    std::vector<std::int64_t> index(dims.size(), 0);
    for (std::uint64_t e = 0; e < count; ++e) {
      std::uint64_t linear = 0;
      for (std::size_t d = 0; d < dims.size(); ++d)
        linear = linear * global[d] + static_cast<std::uint64_t>(position[d] + index[d]);
      values[e] = static_cast<std::int32_t>(linear * 10 + static_cast<std::uint64_t>(tag));
      for (std::size_t d = dims.size(); d-- > 0;) {
        if (++index[d] < dims[d]) break;
        index[d] = 0;
      }
    }
    block.dims = std::move(dims);
    block.position = std::move(position);
    block.data = values.data();
    block.bytes = count * sizeof(std::int32_t);
  }
};

std::vector<std::int32_t> packed_values(const write_group& group,
                                        const std::vector<std::uint64_t>& global) {
  const std::vector<unsigned char> bytes = pack_in_dataset_order(group, global, 4);
  std::vector<std::int32_t> values(bytes.size() / 4);
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

TEST(write_groups, blocks_side_by_side_are_packed_row_by_row_in_dataset_order) {
  // A 4 x 6 dataset tiled by three blocks given out of order: their rows interleave.
  const std::vector<std::uint64_t> global{4, 6};
  test_block right({4, 2}, {0, 4}, global, 1);
  test_block left({4, 3}, {0, 0}, global, 2);
  test_block middle({4, 1}, {0, 3}, global, 3);
  write_group group;
  group.blocks = {&right.block, &left.block, &middle.block};
  const std::vector<std::int32_t> values = packed_values(group, global);
  ASSERT_EQ(values.size(), 24u);
  for (std::size_t e = 0; e < values.size(); ++e) {
    // Each element in place: its global index (the tag says which block it came from).
    EXPECT_EQ(values[e] / 10, static_cast<std::int32_t>(e)) << "element " << e;
    const std::size_t column = e % 6;
    EXPECT_EQ(values[e] % 10, column >= 4 ? 1 : column == 3 ? 3 : 2) << "element " << e;
  }
}

TEST(write_groups, blocks_of_three_dimensions_with_gaps_between_them_keep_only_their_elements) {
  const std::vector<std::uint64_t> global{3, 4, 5};
  test_block a({1, 2, 5}, {2, 2, 0}, global, 1);
  test_block b({2, 1, 2}, {0, 0, 3}, global, 2);
  write_group group;
  group.blocks = {&a.block, &b.block};
  const std::vector<std::int32_t> values = packed_values(group, global);
  ASSERT_EQ(values.size(), 10u + 4u);
  for (std::size_t e = 1; e < values.size(); ++e)
    EXPECT_LT(values[e - 1] / 10, values[e] / 10) << "not in dataset order at " << e;
  // b's elements (at layers 0 and 1) come before a's (layer 2).
  EXPECT_EQ(values.front(), (0 * 20 + 0 * 5 + 3) * 10 + 2);
  EXPECT_EQ(values.back(), (2 * 20 + 3 * 5 + 4) * 10 + 1);
}

TEST(write_groups, where_blocks_overlap_the_later_block_wins_and_the_union_is_packed_once) {
  const std::vector<std::uint64_t> global{1, 10};
  test_block first({1, 6}, {0, 0}, global, 1);
  test_block second({1, 6}, {0, 3}, global, 2);
  write_group group;
  group.blocks = {&first.block, &second.block};
  const std::vector<std::int32_t> values = packed_values(group, global);
  ASSERT_EQ(values.size(), 9u);  // elements 0..8, the overlap 3..5 once
  for (std::size_t e = 0; e < values.size(); ++e) {
    EXPECT_EQ(values[e] / 10, static_cast<std::int32_t>(e));
    EXPECT_EQ(values[e] % 10, e < 3 ? 1 : 2) << "element " << e;
  }
}

TEST(write_groups, groups_are_bounded_in_bytes_and_blocks_and_skip_empty_blocks) {
  const std::vector<std::uint64_t> global{100};
  std::vector<test_block> made;
  made.reserve(8);
  for (std::int64_t b = 0; b < 7; ++b)
    made.emplace_back(std::vector<std::int64_t>{10}, std::vector<std::int64_t>{b * 10}, global, 0);
  made.emplace_back(std::vector<std::int64_t>{0}, std::vector<std::int64_t>{70}, global, 0);
  std::vector<prepared_block> blocks;
  for (const test_block& t : made) blocks.push_back(t.block);
  // 40 bytes per block: at most 100 bytes (two blocks) per group.
  const std::vector<write_group> by_bytes = group_blocks(blocks, 100, 1000);
  ASSERT_EQ(by_bytes.size(), 4u);
  EXPECT_EQ(by_bytes[0].blocks.size(), 2u);
  EXPECT_EQ(by_bytes[3].blocks.size(), 1u);
  EXPECT_EQ(by_bytes[0].bytes, 80u);
  // At most three blocks per group.
  const std::vector<write_group> by_count = group_blocks(blocks, 1u << 20, 3);
  ASSERT_EQ(by_count.size(), 3u);
  EXPECT_EQ(by_count[2].blocks.size(), 1u);
  // A block larger than the bound forms a group alone; the empty block is in none.
  const std::vector<write_group> tiny = group_blocks(blocks, 10, 1000);
  EXPECT_EQ(tiny.size(), 7u);
  EXPECT_TRUE(group_blocks({blocks.back()}).empty());
}

}  // namespace
