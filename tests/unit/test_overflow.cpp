// Notifications kept in the shared heap while a ring is full (transports/dedicated_cores/
// overflow.hpp): the chain a client builds, and what the core accepts of one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "transports/dedicated_cores/channel.hpp"
#include "transports/dedicated_cores/overflow.hpp"

namespace {

using sidecore::protocol::message;
using sidecore::protocol::message_kind;
using sidecore::transports::channel;
using sidecore::transports::channel_sizes;
using sidecore::transports::overflow_chain;
using sidecore::transports::overflow_chunk;
using sidecore::transports::overflow_chunk_messages;
using sidecore::transports::read_overflow;

class overflow_test : public testing::Test {
 protected:
  overflow_test()
      : m_channel(channel::create("/sidecore-test-" + std::to_string(::getpid()) + "-overflow",
                                  sizes())) {
    m_channel.unlink();
  }
  static channel_sizes sizes() {
    channel_sizes s;
    s.heap_bytes = 4 << 20;
    s.clients = 1;
    s.ring_capacity = 4;
    return s;
  }
  // A chain of `count` signals numbered by their iteration field.
  message chain_of(overflow_chain& chain, int count) {
    for (int i = 0; i < count; ++i) {
      message m{};
      m.kind = message_kind::signal;
      m.iteration = i;
      EXPECT_TRUE(chain.append(m));
    }
    const message batch = chain.batch(0);
    chain.posted();  // the "core" owns the chunks now
    return batch;
  }
  overflow_chunk* chunk_at(std::uint64_t offset) {
    return reinterpret_cast<overflow_chunk*>(m_channel.address(offset));
  }
  // Reads a batch as the core does, every chunk taken for unclaimed; the iterations read.
  std::string read(const message& batch, std::vector<int>& got) {
    return read_overflow(
        m_channel, batch, [](std::uint64_t, std::uint64_t) { return true; },
        [&](const message& m) { got.push_back(m.iteration); });
  }
  channel m_channel;
};

std::uint64_t chunk_bytes() {
  return sidecore::memory::shared_heap::rounded(sizeof(overflow_chunk));
}

TEST_F(overflow_test, a_chain_is_read_in_order_and_its_chunks_go_back) {
  overflow_chain chain(m_channel, m_channel.heap().begin_offset());
  const int count = 3 * static_cast<int>(overflow_chunk_messages) + 5;
  const message batch = chain_of(chain, count);
  EXPECT_EQ(batch.kind, message_kind::batch);
  EXPECT_EQ(batch.bytes, static_cast<std::uint64_t>(count));
  EXPECT_EQ(m_channel.heap().used(), 4 * chunk_bytes());
  std::vector<int> got;
  EXPECT_EQ(read(batch, got), "");
  ASSERT_EQ(got.size(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) EXPECT_EQ(got[i], i);
  EXPECT_EQ(m_channel.heap().used(), 0u);
}

TEST_F(overflow_test, a_chain_never_handed_over_gives_its_chunks_back) {
  {
    overflow_chain chain(m_channel, m_channel.heap().begin_offset());
    message m{};
    m.kind = message_kind::signal;
    for (std::uint32_t i = 0; i < overflow_chunk_messages + 1; ++i) ASSERT_TRUE(chain.append(m));
    EXPECT_EQ(m_channel.heap().used(), 2 * chunk_bytes());
  }
  EXPECT_EQ(m_channel.heap().used(), 0u);
}

// A chain is memory the client shares: whatever it holds, the core reads nothing outside the
// chunks the client allocated, never loops, and hands nothing on from a chain it refuses.
TEST_F(overflow_test, a_broken_chain_is_refused_whole) {
  const auto refused = [&](const message& batch, const std::string& expected,
                           bool unclaimed = true) {
    std::vector<int> got;
    const std::string problem = read_overflow(
        m_channel, batch, [&](std::uint64_t, std::uint64_t) { return unclaimed; },
        [&](const message& m) { got.push_back(m.iteration); });
    EXPECT_NE(problem.find(expected), std::string::npos) << problem;
    EXPECT_TRUE(got.empty()) << "a refused chain handed " << got.size() << " notification(s) on";
  };
  overflow_chain chain(m_channel, m_channel.heap().begin_offset());
  const int count = 2 * static_cast<int>(overflow_chunk_messages);
  {
    message batch = chain_of(chain, count);
    batch.bytes = count + 1;
    refused(batch, "holds 256 notification(s), not the 257");
  }
  {
    const message batch = chain_of(chain, count);
    const std::uint64_t second = chunk_at(batch.offset)->next;
    chunk_at(batch.offset)->next = batch.offset;  // a loop
    refused(batch, "more chunks than its 256 notification(s) need");
    m_channel.heap().release(second, sizeof(overflow_chunk));
  }
  {
    message batch = chain_of(chain, count);
    chunk_at(batch.offset)->next = m_channel.heap().end_offset() - 8;
    refused(batch, "not memory the client allocated");
  }
  {
    message batch = chain_of(chain, count);
    chunk_at(batch.offset)->count = overflow_chunk_messages + 1;
    refused(batch, "holds 129 notifications (valid: 1..128)");
  }
  {
    const message batch = chain_of(chain, count);
    refused(batch, "not memory the client allocated", false);  // held by a block, say
  }
}

}  // namespace
