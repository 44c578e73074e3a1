// Runs the events clients signal to a server, by scope: core (each signal), group (once all
// of the server's clients sent it for an iteration), bcast (on every server, over MPI).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "config/model.hpp"

namespace sidecore::server {

class event_dispatcher {
 public:
  // servers: communicator of all servers (bcast forwarding); clients: how many clients this
  // server has (group scope).
  event_dispatcher(const config::model& model, MPI_Comm servers, int clients);

  void signal(std::int32_t event, std::int32_t source, std::int32_t iteration);
  // Runs broadcasts received from other servers; true if any.
  bool poll();
  bool has_bcast() const noexcept { return m_has_bcast; }
  // Collective over servers: waits for every broadcast sent to this server.
  void finish();

 private:
  const config::model& m_model;
  MPI_Comm m_servers;
  int m_rank = 0;
  int m_size = 1;
  int m_clients;
  bool m_has_bcast = false;
  std::map<std::pair<std::int32_t, std::int32_t>, int> m_group_counts;  // (event, iteration)
  std::vector<int> m_sent;  // broadcasts sent per server
  int m_received = 0;
};

}  // namespace sidecore::server
