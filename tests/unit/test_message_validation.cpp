// The checks a server makes on every notification it reads from a client before using it:
// each field out of its valid range is refused with a message naming it, and no change of the
// bytes of a valid notification gets through unless the result is valid too.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "config/model.hpp"
#include "memory/shared_heap.hpp"
#include "protocol/message.hpp"
#include "protocol/notifications.hpp"

using namespace sidecore;
using protocol::message;
using protocol::message_kind;

namespace {

constexpr std::uint64_t heap_begin = 4096;
constexpr std::uint64_t heap_end = heap_begin + 65536;

const config::model& the_model() {
  // grid: 6x5 doubles with ghosts 1:1 and 0:1, so a 4x4 interior, in a 10x8 global array.
  static const config::model model = config::parse_model(
      "<simulation name=\"v\">\n<architecture><domains count=\"2\"/><buffer name=\"b\" "
      "size=\"65536\"/></architecture>\n<data>\n"
      "<layout name=\"grid\" type=\"double\" dimensions=\"6,5\" global=\"10,8\" "
      "ghosts=\"1:1,0:1\"/>\n"
      "<layout name=\"flat\" type=\"int\" dimensions=\"4\"/>\n"
      "<variable name=\"g\" layout=\"grid\"/>\n<variable name=\"f\" layout=\"flat\"/>\n"
      "</data>\n<actions><event name=\"e\" action=\"f\"/></actions>\n</simulation>\n",
      "validation.xml");
  return model;
}

const std::vector<config::ghost_widths>& the_ghosts() {
  static const std::vector<config::ghost_widths> ghosts = config::evaluate_ghosts(the_model());
  return ghosts;
}

protocol::message_limits limits() {
  protocol::message_limits l;
  l.model = &the_model();
  l.ghosts = &the_ghosts();
  l.source = 7;
  l.ended = 3;
  l.closed = 2;
  l.heap_begin = heap_begin;
  l.heap_end = heap_end;
  return l;
}

// Block 1 of g at iteration 3 from client 7: its interior in the last valid position.
message good_block() {
  message m{};
  m.kind = message_kind::block;
  m.variable = 0;
  m.iteration = 3;
  m.block = 1;
  m.source = 7;
  m.ndims = 2;
  m.has_global = 1;
  m.dims[0] = 6;
  m.dims[1] = 5;
  m.global_dims[0] = 10;
  m.global_dims[1] = 8;
  m.position[0] = 6;
  m.position[1] = 4;
  m.offset = heap_begin + 128;
  m.bytes = 6 * 5 * 8;
  return m;
}

message good_signal() {
  message m{};
  m.kind = message_kind::signal;
  m.variable = 0;
  m.iteration = 3;
  m.source = 7;
  std::strcpy(m.name, "e");
  return m;
}

struct bad_case {
  const char* what;
  std::function<void(message&)> change;
  const char* expected;  // in the problem's text
};

void expect_refused(const message& original, const std::vector<bad_case>& cases,
                    const protocol::message_limits& l = limits()) {
  ASSERT_EQ(protocol::message_problem(original, l), "");
  for (const bad_case& c : cases) {
    message m = original;
    c.change(m);
    const std::string problem = protocol::message_problem(m, l);
    EXPECT_NE(problem.find(c.expected), std::string::npos)
        << c.what << ": expected \"" << c.expected << "\" in \"" << problem << "\"";
  }
}

}  // namespace

TEST(message_validation, a_well_formed_block_is_accepted) {
  EXPECT_EQ(protocol::message_problem(good_block(), limits()), "");
  message first = good_block();
  first.position[0] = 0;
  first.position[1] = 0;
  first.block = 0;
  EXPECT_EQ(protocol::message_problem(first, limits()), "");
  // Any number of blocks per client: ids beyond <domains count> are valid.
  message beyond = good_block();
  beyond.block = 1 << 30;
  EXPECT_EQ(protocol::message_problem(beyond, limits()), "");
  message flat{};
  flat.kind = message_kind::block;
  flat.variable = 1;
  flat.iteration = 3 + protocol::max_iterations_unended;
  flat.source = 7;
  flat.ndims = 1;
  flat.dims[0] = 4;
  flat.offset = heap_end - 64;
  flat.bytes = 16;
  EXPECT_EQ(protocol::message_problem(flat, limits()), "");
}

TEST(message_validation, every_field_of_a_block_out_of_range_is_refused_and_named) {
  constexpr std::int64_t big = std::int64_t{1} << 40;
  expect_refused(
      good_block(),
      {
          {"kind 0", [](message& m) { m.kind = message_kind{0}; }, "kind is 0"},
          {"kind 77", [](message& m) { m.kind = message_kind{77}; }, "kind is 77"},
          {"sync", [](message& m) { m.kind = message_kind::sync; }, "kind is sync"},
          {"source", [](message& m) { m.source = 8; }, "source is 8 in the queue of client 7"},
          {"ended iteration", [](message& m) { m.iteration = 2; },
           "iteration 2 is out of range (valid: 3..1027"},
          {"negative iteration", [](message& m) { m.iteration = -1; }, "iteration -1 is out"},
          {"far iteration", [](message& m) { m.iteration = 1028; }, "iteration 1028 is out"},
          {"lowest iteration",
           [](message& m) { m.iteration = std::numeric_limits<std::int32_t>::min(); },
           "is out of range"},
          {"negative variable", [](message& m) { m.variable = -1; },
           "variable index -1 is not a variable (valid: 0..1)"},
          {"variable past the end", [](message& m) { m.variable = 2; }, "variable index 2"},
          {"negative block", [](message& m) { m.block = -1; },
           "block -1 is out of range (valid: 0 or more)"},
          {"ndims 0", [](message& m) { m.ndims = 0; }, "ndims is 0"},
          {"ndims of another layout", [](message& m) { m.ndims = 1; },
           "ndims is 1, layout 'grid' has 2"},
          {"ndims past the maximum", [](message& m) { m.ndims = 9; }, "ndims is 9"},
          {"ndims huge", [](message& m) { m.ndims = UINT32_MAX; }, "ndims is 4294967295"},
          {"no global", [](message& m) { m.has_global = 0; }, "has_global is 0"},
          {"has_global 2", [](message& m) { m.has_global = 2; }, "has_global is 2"},
          {"flags", [](message& m) { m.flags = 1; }, "flags are 1"},
          {"zero extent", [](message& m) { m.dims[0] = 0; }, "extent 0 is 0"},
          {"negative extent", [](message& m) { m.dims[1] = -5; }, "extent 1 is -5"},
          {"extents and bytes disagree", [](message& m) { m.dims[1] = 4; }, "bytes is 240"},
          {"bytes", [](message& m) { m.bytes = 239; }, "bytes is 239"},
          {"bytes beyond 2^64",
           [](message& m) {
             m.dims[0] = big;
             m.dims[1] = big;
           },
           "more than 2^64"},
          {"no interior",
           [](message& m) {
             m.dims[0] = 2;
             m.bytes = 2 * 5 * 8;
           },
           "leaves no interior"},
          {"zero global extent", [](message& m) { m.global_dims[0] = 0; }, "global extent 0 is 0"},
          {"interior past the global end", [](message& m) { m.position[0] = 7; },
           "position 0 is 7 (valid: 0..6"},
          {"negative position", [](message& m) { m.position[1] = -1; }, "position 1 is -1"},
          {"position near the limit",
           [](message& m) { m.position[1] = std::numeric_limits<std::int64_t>::max(); },
           "position 1 is"},
          {"offset before the heap", [](message& m) { m.offset = 0; }, "offset 0"},
          {"offset at the end", [](message& m) { m.offset = heap_end; }, "not inside the shared"},
          {"offset misaligned", [](message& m) { m.offset += 8; }, "aligned to 64"},
          {"data running past the end", [](message& m) { m.offset = heap_end - 128; },
           "not inside the shared heap"},
          {"offset that wraps around", [](message& m) { m.offset = ~std::uint64_t{63}; },
           "not inside the shared heap"},
      });
}

TEST(message_validation, bytes_that_would_wrap_past_the_heap_end_are_refused) {
  // Extents consistent with a byte count of 2^63: offset + bytes wraps around 2^64.
  message m = good_block();
  m.dims[0] = std::int64_t{1} << 30;
  m.dims[1] = std::int64_t{1} << 30;
  m.global_dims[0] = std::int64_t{1} << 40;
  m.global_dims[1] = std::int64_t{1} << 40;
  m.position[0] = 0;
  m.position[1] = 0;
  m.bytes = std::uint64_t{1} << 63;
  m.offset = heap_end - 64;
  EXPECT_NE(protocol::message_problem(m, limits()).find("not inside the shared heap"),
            std::string::npos);
}

TEST(message_validation, a_block_of_an_iteration_already_complete_is_refused) {
  protocol::message_limits l = limits();
  l.ended = 1;   // this client ended iteration 0 only...
  l.closed = 2;  // ...yet the server completed iteration 1 (stored at the end of a run)
  message m = good_block();
  m.iteration = 1;
  EXPECT_NE(protocol::message_problem(m, l).find("iteration 1 is complete already"),
            std::string::npos);
  m.iteration = 2;
  EXPECT_EQ(protocol::message_problem(m, l), "");
}

TEST(message_validation, ends_of_iteration_stops_and_signals_are_checked) {
  message end{};
  end.kind = message_kind::end_iteration;
  end.iteration = 3;
  end.source = 7;
  end.flags = protocol::iteration_skipped;
  expect_refused(end,
                 {
                     {"flags", [](message& m) { m.flags = 2; }, "flags are 2"},
                     {"ended twice", [](message& m) { m.iteration = 2; }, "iteration 2"},
                     {"far ahead", [](message& m) { m.iteration = 3 + 1025; }, "iteration 1028"},
                     {"source", [](message& m) { m.source = 0; }, "source is 0"},
                 });
  expect_refused(
      good_signal(),
      {
          {"event index", [](message& m) { m.variable = 1; },
           "event index 1 is not an event (valid: 0..0)"},
          {"negative event", [](message& m) { m.variable = -3; }, "event index -3"},
          {"other name", [](message& m) { std::strcpy(m.name, "x"); },
           "does not match event 0 ('e')"},
          {"name without its end", [](message& m) { std::memset(m.name, 'e', sizeof m.name); },
           "does not match"},
          {"negative iteration", [](message& m) { m.iteration = -2; }, "iteration -2"},
      });
  message stop{};
  stop.kind = message_kind::stop;
  stop.source = 7;
  stop.iteration = 0;  // a stop may come before anything else
  expect_refused(stop,
                 {{"negative iteration", [](message& m) { m.iteration = -1; }, "iteration -1"},
                  {"source", [](message& m) { m.source = -7; }, "source is -7"}});
}

TEST(message_validation, packed_blocks_come_only_where_the_transport_packs_them) {
  message packed{};
  packed.kind = message_kind::packed_blocks;
  packed.iteration = 3;
  packed.source = 7;
  packed.flags = 2;
  packed.bytes = protocol::next_packed_entry(protocol::next_packed_entry(0, 240), 8);
  protocol::message_limits l = limits();
  l.packed_limit = 4096;
  expect_refused(packed,
                 {
                     {"no block", [](message& m) { m.flags = 0; }, "0 packed block(s)"},
                     {"less than a notification per block",
                      [](message& m) { m.bytes = sizeof(message); }, "bytes or more per block"},
                     {"past the limit", [](message& m) { m.bytes = 4097; }, "at most 4096 bytes"},
                     {"iteration ended", [](message& m) { m.iteration = 2; }, "iteration 2"},
                     {"source", [](message& m) { m.source = 6; }, "source is 6"},
                 },
                 l);
  // Where the transport never packs (shared memory), the kind itself is refused.
  EXPECT_NE(protocol::message_problem(packed, limits()).find("never sends"), std::string::npos);
  // Entries begin aligned, after the notification and the data of the one before.
  EXPECT_EQ(protocol::next_packed_entry(0, 0) % protocol::packed_alignment, 0u);
  EXPECT_EQ(protocol::next_packed_entry(0, 1),
            (sizeof(message) + 1 + protocol::packed_alignment - 1) / protocol::packed_alignment *
                protocol::packed_alignment);
  EXPECT_EQ(protocol::next_packed_entry(32, 16), 32 + sizeof(message) + 16);
}

TEST(message_validation, no_corruption_of_a_valid_block_gets_through_as_an_invalid_one) {
  // Bytes of a valid block changed at random: whatever is accepted must still be a block of
  // this client, inside the heap, consistent with its layout.
  std::mt19937_64 random(2024);
  const protocol::message_limits l = limits();
  int accepted = 0;
  for (int round = 0; round < 200000; ++round) {
    message m = good_block();
    auto* bytes = reinterpret_cast<unsigned char*>(&m);
    const int changes = 1 + static_cast<int>(random() % 4);
    for (int c = 0; c < changes; ++c)
      bytes[random() % sizeof m] = static_cast<unsigned char>(random());
    if (!protocol::message_problem(m, l).empty()) continue;
    ++accepted;
    ASSERT_EQ(m.source, 7);
    if (m.kind != message_kind::block) continue;
    ASSERT_GE(m.variable, 0);
    ASSERT_LT(m.variable, 2);
    ASSERT_GE(m.iteration, 3);
    ASSERT_GE(m.offset, heap_begin);
    ASSERT_LE(m.offset + memory::shared_heap::rounded(m.bytes), heap_end);
    ASSERT_LE(m.ndims, static_cast<std::uint32_t>(protocol::max_dimensions));
    std::uint64_t product = m.variable == 0 ? 8 : 4;
    for (std::uint32_t d = 0; d < m.ndims; ++d) product *= static_cast<std::uint64_t>(m.dims[d]);
    ASSERT_EQ(product, m.bytes);
  }
  EXPECT_GT(accepted, 0);  // changes of unused bytes (names, unused dimensions) do get through
}
