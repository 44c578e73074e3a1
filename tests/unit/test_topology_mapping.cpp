// Client-to-server mapping: every server gets a balanced, consecutive run of clients.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

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
        const int step = server_of_client(c, clients, servers) -
                         server_of_client(c - 1, clients, servers);
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
