// name_index: every name of the list is found at its position, and nothing else is.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/fnv1a.hpp"
#include "common/name_index.hpp"

namespace {

using sidecore::name_index;

TEST(name_index, finds_every_name_at_its_position_and_nothing_else) {
  // Enough names that slots collide and probes wrap around the table.
  std::vector<std::string> owned;
  for (int i = 0; i < 300; ++i)
    owned.push_back("group" + std::to_string(i % 7) + "/field" + std::to_string(i));
  owned.push_back("");  // an empty name is a name like any other
  const std::vector<std::string_view> names(owned.begin(), owned.end());
  const name_index index(names);
  for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(index.find(names[i]), i) << names[i];
  EXPECT_EQ(index.find("group0/field1"), name_index::npos);  // field1 is in group1
  EXPECT_EQ(index.find("group1/field1 "), name_index::npos);
  EXPECT_EQ(index.find("group1/field"), name_index::npos);
  EXPECT_EQ(index.find(std::string_view("group1/field1\0", 14)), name_index::npos);
}

TEST(name_index, a_name_given_twice_is_found_at_its_first_position) {
  const name_index index({"a", "b", "a", "c"});
  EXPECT_EQ(index.find("a"), 0u);
  EXPECT_EQ(index.find("b"), 1u);
  EXPECT_EQ(index.find("c"), 3u);
}

TEST(name_index, an_empty_list_finds_nothing) {
  const name_index index({});
  EXPECT_EQ(index.find("temperature"), name_index::npos);
  EXPECT_EQ(index.find(""), name_index::npos);
}

TEST(name_index, hashes_as_fnv1a_64) {
  // The published FNV-1a 64-bit values of "" and "a".
  EXPECT_EQ(sidecore::fnv1a(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(sidecore::fnv1a("a"), 0xaf63dc4c8601ec8cull);
}

}  // namespace
