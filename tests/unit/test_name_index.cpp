// config::name_index: every name of the list is found at its position and nothing else is,
// whether the list was indexed at once or as it grew, and a list it has not seen is searched.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory_resource>
#include <string>
#include <string_view>
#include <vector>

#include "common/fnv1a.hpp"
#include "config/name_index.hpp"

namespace {

using sidecore::config::name_index;

struct item {
  std::string name;
};

std::vector<item> fields(int count) {
  std::vector<item> items;
  for (int i = 0; i < count; ++i)
    items.push_back({"group" + std::to_string(i % 7) + "/field" + std::to_string(i)});
  return items;
}

void expect_exact(const name_index& index, const std::vector<item>& items) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    EXPECT_EQ(index.find(items, items[i].name), i) << items[i].name;
    EXPECT_EQ(index.find(items[i].name), i) << items[i].name;
  }
}

TEST(name_index, finds_every_name_at_its_position_and_nothing_else) {
  // Enough names that slots collide and probes wrap around the table.
  std::vector<item> items = fields(300);
  items.push_back({""});  // an empty name is a name like any other
  name_index index;
  index.extend(items);
  expect_exact(index, items);
  EXPECT_EQ(index.find(items, "group0/field1"), name_index::npos);  // field1 is in group1
  EXPECT_EQ(index.find(items, "group1/field1 "), name_index::npos);
  EXPECT_EQ(index.find(items, "group1/field"), name_index::npos);
  EXPECT_EQ(index.find(items, std::string_view("group1/field1\0", 14)), name_index::npos);
}

TEST(name_index, a_list_indexed_as_it_grows_is_found_as_one_indexed_at_once) {
  // The parser extends the index after each item: the table grows and rehashes many times.
  const std::vector<item> all = fields(1000);
  std::vector<item> items;
  name_index index;
  for (const item& i : all) {
    items.push_back(i);
    index.extend(items);
  }
  expect_exact(index, items);
  EXPECT_EQ(index.find(items, "group0/field1000"), name_index::npos);
}

TEST(name_index, bytes_for_bounds_what_indexing_allocates) {
  // The client sizes its arena with bytes_for: indexing must fit in it (beyond, the upstream
  // refuses with bad_alloc).
  for (int count : {0, 1, 3, 4, 5, 100, 1000}) {
    const std::vector<item> items = fields(count);
    std::vector<std::byte> buffer(name_index::bytes_for(items) + 64);  // 64: alignment
    std::pmr::monotonic_buffer_resource memory(buffer.data(), buffer.size(),
                                               std::pmr::null_memory_resource());
    name_index index(items, &memory);
    expect_exact(index, items);
  }
}

TEST(name_index, a_name_given_twice_is_found_at_its_first_position) {
  const std::vector<item> items = {{"a"}, {"b"}, {"a"}, {"c"}};
  name_index index;
  index.extend(items);
  EXPECT_EQ(index.find(items, "a"), 0u);
  EXPECT_EQ(index.find(items, "b"), 1u);
  EXPECT_EQ(index.find(items, "c"), 3u);
}

TEST(name_index, items_added_since_the_last_extend_are_found_by_search) {
  std::vector<item> items = {{"pressure"}, {"temperature"}};
  name_index index;
  index.extend(items);
  items.push_back({"density"});
  EXPECT_EQ(index.find(items, "density"), 2u);
  EXPECT_EQ(index.find(items, "temperature"), 1u);
  EXPECT_EQ(index.find("density"), name_index::npos);  // not indexed yet
  index.extend(items);
  EXPECT_EQ(index.find("density"), 2u);
}

TEST(name_index, a_list_replaced_by_a_shorter_one_is_indexed_anew) {
  std::vector<item> items = fields(20);
  name_index index;
  index.extend(items);
  items = {{"velocity"}, {"group0/field0"}};
  index.extend(items);
  EXPECT_EQ(index.find(items, "velocity"), 0u);
  EXPECT_EQ(index.find(items, "group0/field0"), 1u);
  EXPECT_EQ(index.find(items, "group1/field1"), name_index::npos);
}

TEST(name_index, an_empty_list_finds_nothing) {
  const std::vector<item> items;
  name_index unextended;
  EXPECT_EQ(unextended.find(items, "temperature"), name_index::npos);
  EXPECT_EQ(unextended.find(""), name_index::npos);
  name_index index;
  index.extend(items);
  EXPECT_EQ(index.find(items, ""), name_index::npos);
}

TEST(name_index, hashes_as_fnv1a_64) {
  // The published FNV-1a 64-bit values of "" and "a".
  EXPECT_EQ(sidecore::fnv1a(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(sidecore::fnv1a("a"), 0xaf63dc4c8601ec8cull);
}

}  // namespace
