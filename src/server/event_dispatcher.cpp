// Event scopes. Broadcasts are point-to-point messages among servers, counted so that every
// server can wait for all of those sent to it before it stops.
#include "server/event_dispatcher.hpp"

#include <sched.h>

#include <algorithm>

#include "common/mpi_handles.hpp"
#include "server/actions.hpp"

namespace sidecore::server {
namespace {
constexpr int bcast_tag = 7301;
}

event_dispatcher::event_dispatcher(const config::model& model, MPI_Comm servers, int clients)
    : m_model(model), m_servers(servers), m_clients(clients) {
  m_has_bcast = std::any_of(model.events.begin(), model.events.end(), [](const config::event& e) {
    return e.scope == config::scope::bcast;
  });
  if (servers != MPI_COMM_NULL) {
    MPI_Comm_rank(servers, &m_rank);
    MPI_Comm_size(servers, &m_size);
  }
  m_sent.assign(static_cast<std::size_t>(m_size), 0);
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
      int& count = m_group_counts[{index, iteration}];
      if (++count == m_clients) {
        m_group_counts.erase({index, iteration});
        actions.run(event, m_model.file, source, iteration);
      }
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

bool event_dispatcher::poll() {
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
    ++m_received;
    any = true;
    if (payload[0] >= 0 && static_cast<std::size_t>(payload[0]) < m_model.events.size())
      action_registry::instance().run(m_model.events[payload[0]], m_model.file, payload[1], payload[2]);
  }
}

void event_dispatcher::finish() {
  if (!m_has_bcast) return;
  int expected = 0;
  std::vector<int> ones(m_sent.size(), 1);
  check_mpi(MPI_Reduce_scatter(m_sent.data(), &expected, ones.data(), MPI_INT, MPI_SUM, m_servers),
            "MPI_Reduce_scatter");
  while (m_received < expected)
    if (!poll()) sched_yield();
}

}  // namespace sidecore::server
