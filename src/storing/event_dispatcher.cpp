// Event scopes. Broadcasts are point-to-point messages among servers, counted per sender so
// that every server can wait, for a bounded time, for all of those sent to it before it stops.
#include "storing/event_dispatcher.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <sstream>
#include <thread>

#include "common/log.hpp"
#include "common/mpi_handles.hpp"
#include "common/text.hpp"
#include "common/waiting.hpp"
#include "storing/actions.hpp"

namespace sidecore::storing {

event_dispatcher::event_dispatcher(const config::model& model, MPI_Comm servers, int clients)
    : m_model(model), m_servers(servers), m_clients(clients) {
  m_has_bcast = std::any_of(model.events.begin(), model.events.end(),
                            [](const config::event& e) { return e.scope == config::scope::bcast; });
  if (servers != MPI_COMM_NULL) {
    MPI_Comm_rank(servers, &m_rank);
    MPI_Comm_size(servers, &m_size);
  }
  m_sent.assign(static_cast<std::size_t>(m_size), 0);
  m_received.assign(static_cast<std::size_t>(m_size), 0);
}

void event_dispatcher::signal(std::int32_t index, std::int32_t source, std::int32_t iteration) {
  if (index < 0 || static_cast<std::size_t>(index) >= m_model.events.size()) return;
  const config::event& event = m_model.events[index];
  action_registry& actions = action_registry::instance();
  switch (event.scope) {
    case config::scope::core:
      actions.run(event, m_model.file, source, iteration);
      break;
    case config::scope::group: {
      // Distinct clients count, not signals: a client that signals twice in an iteration
      // completes nothing by itself.
      group_state& group = m_groups[{index, iteration}];
      if (group.fired) {
        log::debug("event '", event.name, "' (group) from client ", source, " at iteration ",
                   iteration, ": already run for this iteration");
        break;
      }
      group.sources.insert(source);
      if (static_cast<int>(group.sources.size()) >= m_clients) {
        group.fired = true;
        group.sources.clear();
        actions.run(event, m_model.file, source, iteration);
      }
      forget_old_groups(index, iteration);
      break;
    }
    case config::scope::bcast: {
      actions.run(event, m_model.file, source, iteration);
      std::int32_t payload[3] = {index, source, iteration};
      for (int s = 0; s < m_size; ++s) {
        if (s == m_rank) continue;
        check_mpi(MPI_Send(payload, 3, MPI_INT32_T, s, bcast_tag, m_servers), "MPI_Send");
        ++m_sent[s];
      }
      break;
    }
  }
}

void event_dispatcher::forget_old_groups(std::int32_t event, std::int32_t newest) {
  const std::int64_t oldest_kept = static_cast<std::int64_t>(newest) - group_memory;
  if (oldest_kept <= std::numeric_limits<std::int32_t>::min()) return;
  auto first = m_groups.lower_bound({event, std::numeric_limits<std::int32_t>::min()});
  const auto last = m_groups.lower_bound({event, static_cast<std::int32_t>(oldest_kept)});
  while (first != last) {
    // Said once per event: a client that never signals it would repeat it every iteration.
    if (!first->second.fired && m_warned.insert(event).second) {
      log::warning("event '", m_model.events[event].name, "' (scope group) at iteration ",
                   first->first.second, " was signalled by ", first->second.sources.size(),
                   " of the ", counted(m_clients, "client"),
                   " of this server and never ran; forgotten now that clients signal "
                   "iteration ",
                   newest, " (said once per event)");
    }
    first = m_groups.erase(first);
  }
}

std::size_t event_dispatcher::open_groups() const noexcept {
  return static_cast<std::size_t>(std::count_if(
      m_groups.begin(), m_groups.end(), [](const auto& entry) { return !entry.second.fired; }));
}

bool event_dispatcher::poll() {
  if (m_servers == MPI_COMM_NULL) return false;
  bool any = false;
  for (;;) {
    int flag = 0;
    MPI_Status status;
    check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, bcast_tag, m_servers, &flag, &status), "MPI_Iprobe");
    if (!flag) return any;
    std::int32_t payload[3];
    check_mpi(MPI_Recv(payload, 3, MPI_INT32_T, status.MPI_SOURCE, bcast_tag, m_servers,
                       MPI_STATUS_IGNORE),
              "MPI_Recv");
    if (status.MPI_SOURCE >= 0 && status.MPI_SOURCE < m_size) ++m_received[status.MPI_SOURCE];
    any = true;
    if (payload[0] >= 0 && static_cast<std::size_t>(payload[0]) < m_model.events.size())
      action_registry::instance().run(m_model.events[payload[0]], m_model.file, payload[1],
                                      payload[2]);
  }
}

double event_dispatcher::finish_timeout_seconds(const config::model& model) noexcept {
  const double timeout = model.arch.wait_timeout_seconds;
  return timeout > 0 ? timeout : default_finish_timeout_seconds;
}

std::string event_dispatcher::finish() {
  if (!m_has_bcast || m_servers == MPI_COMM_NULL) return {};
  // What each server sent to each other one: from server s, expected[s].
  std::vector<int> expected(m_sent.size(), 0);
  check_mpi(MPI_Alltoall(m_sent.data(), 1, MPI_INT, expected.data(), 1, MPI_INT, m_servers),
            "MPI_Alltoall");
  const auto complete = [&] {
    for (std::size_t s = 0; s < expected.size(); ++s)
      if (m_received[s] < expected[s]) return false;
    return true;
  };
  // The messages were sent before the servers met in MPI_Alltoall: they are in flight or
  // already here.
  const double timeout = finish_timeout_seconds(m_model);
  waiter pause(paces::event_arrival, timeout);
  while (!complete()) {
    if (poll())
      pause.moved();
    else if (!pause.nap())
      break;
  }
  if (complete()) return {};
  std::string missing;
  for (std::size_t s = 0; s < expected.size(); ++s) {
    if (m_received[s] >= expected[s]) continue;
    if (!missing.empty()) missing += ", ";
    missing += "server " + std::to_string(s) + " (" + std::to_string(m_received[s]) + " of " +
               std::to_string(expected[s]) + ")";
  }
  std::ostringstream seconds;
  seconds << timeout;
  std::string report = "broadcast events sent to server " + std::to_string(m_rank) +
                       " did not all arrive within " + seconds.str() +
                       " s; received of sent, by sender: " + missing +
                       "; the missing ones are not run";
  log::error(report);
  return report;
}

}  // namespace sidecore::storing
