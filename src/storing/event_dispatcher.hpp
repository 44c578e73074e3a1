// Runs the events clients signal to a server, by scope: core (each signal), group (once per
// iteration, when every client of the server sent it), bcast (on every server, over MPI).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "config/model.hpp"

namespace sidecore::storing {

class event_dispatcher {
 public:
  // servers: communicator of all servers (bcast forwarding); clients: how many clients this
  // server has (group scope).
  event_dispatcher(const config::model& model, MPI_Comm servers, int clients);

  // A client signalled an event (its index in model.events) at an iteration.
  void signal(std::int32_t event, std::int32_t source, std::int32_t iteration);
  // Runs broadcasts received from other servers; true if any.
  bool poll();
  bool has_bcast() const noexcept { return m_has_bcast; }
  // Collective over servers: waits for every broadcast sent to this server, at most
  // finish_timeout_seconds(model). Returns "" when all arrived, else (also logged as an error)
  // which servers' broadcasts did not, and how many; those events are not run.
  std::string finish();

  // The longest finish() waits: the buffer's timeout when it has one, else
  // default_finish_timeout_seconds.
  static double finish_timeout_seconds(const config::model& model) noexcept;
  static constexpr double default_finish_timeout_seconds = 300.0;

  // Group events waiting for more clients: (event, iteration) pairs not yet fired.
  std::size_t open_groups() const noexcept;
  // A group keeps its state this many iterations behind the newest signalled one; older ones,
  // fired or not, are forgotten (an unfired one with a warning: some client never sent it).
  static constexpr std::int32_t group_memory = 64;
  // The tag of broadcast messages among servers (on the servers' communicator).
  static constexpr int bcast_tag = 7301;

 private:
  struct group_state {
    std::set<std::int32_t> sources;  // clients that signalled it
    bool fired = false;              // kept so that a late repeat does not fire it again
  };
  void forget_old_groups(std::int32_t event, std::int32_t newest);

  const config::model& m_model;
  MPI_Comm m_servers;
  int m_rank = 0;
  int m_size = 1;
  int m_clients;
  bool m_has_bcast = false;
  std::map<std::pair<std::int32_t, std::int32_t>, group_state> m_groups;  // (event, iteration)
  std::set<std::int32_t> m_warned;  // events whose unfired groups were forgotten
  std::vector<int> m_sent;          // broadcasts sent to each server
  std::vector<int> m_received;      // broadcasts received from each server
};

}  // namespace sidecore::storing
