// Parameters of one process and the layouts they size: a value that makes a layout's byte
// count overflow is seen as such (the write then fails), never wrapped around.
#include <gtest/gtest.h>

#include <cstdint>

#include "client/parameters.hpp"
#include "config/model.hpp"

using namespace sidecore;

TEST(parameters, a_layout_whose_size_overflows_is_marked_too_large) {
  const config::model m = config::parse_model(
      "<simulation name=\"t\"><data>\n"
      "<parameter name=\"N\" type=\"long\" value=\"4\"/>\n"
      "<layout name=\"l\" type=\"double\" dimensions=\"N,N,N,N\"/>\n"
      "</data></simulation>\n",
      "t.xml");
  client::parameters p(m);
  EXPECT_FALSE(p.layout(0).too_large);
  EXPECT_EQ(p.layout(0).bytes, 4u * 4 * 4 * 4 * 8);
  const std::int64_t big = 65536;
  p.set("N", &big, sizeof big);
  EXPECT_TRUE(p.layout(0).too_large);
  const std::int64_t fine = 1024;
  p.set("N", &fine, sizeof fine);
  EXPECT_FALSE(p.layout(0).too_large);
  EXPECT_EQ(p.layout(0).bytes, 1024ull * 1024 * 1024 * 1024 * 8);
}
