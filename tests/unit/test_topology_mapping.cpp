// Client-to-server mapping: every server gets a balanced, consecutive run of clients.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "topology/topology.hpp"

namespace {

using sidecore::topology::server_of_client;

TEST(topology, server_of_client_is_balanced_for_every_split) {
  for (int clients = 1; clients <= 64; ++clients) {
    for (int servers = 1; servers <= clients; ++servers) {
      SCOPED_TRACE(std::to_string(clients) + " clients, " + std::to_string(servers) + " servers");
      std::vector<int> served(servers, 0);
      for (int c = 0; c < clients; ++c) {
        const int s = server_of_client(c, clients, servers);
        ASSERT_GE(s, 0) << "client " << c;
        ASSERT_LT(s, servers) << "client " << c;
        ++served[s];
      }
      int fewest = clients;
      int most = 0;
      for (int count : served) {
        fewest = std::min(fewest, count);
        most = std::max(most, count);
      }
      EXPECT_GE(fewest, 1) << "a server has no client";
      EXPECT_LE(most - fewest, 1);
    }
  }
}

TEST(topology, server_of_client_gives_each_server_consecutive_clients) {
  for (int clients = 1; clients <= 64; ++clients) {
    for (int servers = 1; servers <= clients; ++servers) {
      SCOPED_TRACE(std::to_string(clients) + " clients, " + std::to_string(servers) + " servers");
      EXPECT_EQ(server_of_client(0, clients, servers), 0);
      EXPECT_EQ(server_of_client(clients - 1, clients, servers), servers - 1);
      for (int c = 1; c < clients; ++c) {
        // Never goes back and never skips a server: each server's clients form one run.
        const int step =
            server_of_client(c, clients, servers) - server_of_client(c - 1, clients, servers);
        ASSERT_TRUE(step == 0 || step == 1) << "client " << c << " steps by " << step;
      }
    }
  }
}

TEST(topology, server_of_client_does_not_overflow_for_large_counts) {
  const int clients = INT_MAX;
  const int servers = 1000;
  EXPECT_EQ(server_of_client(clients - 1, clients, servers), servers - 1);
  EXPECT_EQ(server_of_client(clients / 2, clients, servers), servers / 2 - 1);
}

}  // namespace

namespace {

TEST(topology, ranks_per_virtual_node_is_read_whole_and_in_range) {
  const auto with = [](const char* value) {
    ::setenv("SIDECORE_RANKS_PER_NODE", value, 1);
    return sidecore::environment::ranks_per_node();
  };
  EXPECT_EQ(with(""), 0);
  EXPECT_EQ(with("4"), 4);
  EXPECT_EQ(with("1048576"), 1048576);
  // 4294967298 once wrapped to 2; values beyond long, signs and trailing text are refused.
  for (const char* bad : {"4294967298", "99999999999999999999999", "0", "-2", "4x", "1048577"}) {
    SCOPED_TRACE(bad);
    try {
      with(bad);
      ADD_FAILURE() << "accepted";
    } catch (const sidecore::config_error& e) {
      EXPECT_NE(std::string(e.what()).find("is not an integer from 1 to 1048576"),
                std::string::npos)
          << e.what();
    }
  }
  ::unsetenv("SIDECORE_RANKS_PER_NODE");
}

}  // namespace
