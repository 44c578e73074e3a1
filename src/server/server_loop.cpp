// Dedicated-core loop. A server spins briefly after activity (a burst of writes usually
// follows another) and then sleeps on the channel's futex so that its core is free.
#include "server/server_loop.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#include "common/log.hpp"
#include "server/actions.hpp"

namespace sidecore::server {
namespace {
constexpr int bcast_tag = 7301;
constexpr int idle_rounds_before_sleep = 2000;
}  // namespace

server_loop::server_loop(const config::model& model, const topology::layout& topo,
                         transport::channel& channel)
    : m_model(model),
      m_topo(topo),
      m_channel(channel),
      m_processor(model, topo.servers.get(), static_cast<int>(channel.client_count()),
                  [&channel](const std::vector<transport::heap_extent>& ranges) {
                    channel.heap().release(ranges);
                  }),
      m_stopped(channel.client_count(), 0) {
  m_has_bcast = std::any_of(model.events.begin(), model.events.end(), [](const config::event& e) {
    return e.scope == config::scope::bcast;
  });
  m_bcast_sent.assign(static_cast<std::size_t>(topo.server_count), 0);
}

std::uint64_t server_loop::heap_high_water() const { return m_channel.heap().high_water(); }

void server_loop::run() {
  int idle = 0;
  while (m_stopped_count < m_channel.client_count()) {
    bool progress = drain();
    if (m_has_bcast) progress = poll_bcast() || progress;
    if (progress) {
      idle = 0;
      continue;
    }
    if (++idle < idle_rounds_before_sleep) {
      sched_yield();
      continue;
    }
    std::uint32_t token = m_channel.prepare_sleep();
    if (!drain()) m_channel.sleep(token, m_has_bcast ? 2 : 200);
    m_channel.end_sleep();
  }
  drain();
  if (m_has_bcast) finish_bcast();
  m_processor.finish();
  m_channel.publish_stored(static_cast<std::uint32_t>(m_processor.stored_iterations()));
}

bool server_loop::drain() {
  bool any = false;
  transport::message m;
  for (std::uint32_t slot = 0; slot < m_channel.client_count(); ++slot) {
    // A bounded batch per client keeps the others served.
    for (int n = 0; n < 256 && m_channel.try_pop(slot, m); ++n) {
      handle(slot, m);
      any = true;
    }
  }
  return any;
}

void server_loop::handle(std::uint32_t slot, const transport::message& m) {
  switch (m.kind) {
    case transport::message_kind::block: {
      stored_block b;
      b.variable = m.variable;
      b.view.source = m.source;
      b.view.block_id = m.block;
      b.view.iteration = m.iteration;
      b.view.data = m_channel.address(m.offset);
      b.view.bytes = m.bytes;
      b.view.dims.assign(m.dims, m.dims + m.ndims);
      if (m.has_global) b.view.global_dims.assign(m.global_dims, m.global_dims + m.ndims);
      b.view.position.assign(m.position, m.position + m.ndims);
      b.shared = {m.offset, m.bytes};
      m_processor.add_block(std::move(b));
      break;
    }
    case transport::message_kind::end_iteration:
      m_processor.end_iteration(static_cast<int>(slot), m.iteration,
                                (m.flags & transport::iteration_skipped) != 0);
      m_channel.publish_stored(static_cast<std::uint32_t>(m_processor.stored_iterations()));
      break;
    case transport::message_kind::signal:
      handle_signal(m);
      break;
    case transport::message_kind::stop:
      if (!m_stopped[slot]) {
        m_stopped[slot] = 1;
        ++m_stopped_count;
        log::debug("client ", m.source, " stopped at iteration ", m.iteration);
      }
      break;
    default:
      log::error("unknown message kind ", static_cast<unsigned>(m.kind), " from slot ", slot, " (ignored)");
  }
}

void server_loop::handle_signal(const transport::message& m) {
  if (m.variable < 0 || static_cast<std::size_t>(m.variable) >= m_model.events.size()) return;
  const config::event& event = m_model.events[m.variable];
  action_registry& actions = action_registry::instance();
  switch (event.scope) {
    case config::scope::core:
      actions.run(event, m_model.file, m.source, m.iteration);
      break;
    case config::scope::group: {
      // Once per iteration, when every client of this server has sent it.
      int& count = m_group_signals[{m.variable, m.iteration}];
      if (++count == static_cast<int>(m_channel.client_count())) {
        m_group_signals.erase({m.variable, m.iteration});
        actions.run(event, m_model.file, m.source, m.iteration);
      }
      break;
    }
    case config::scope::bcast:
      actions.run(event, m_model.file, m.source, m.iteration);
      forward_bcast(m);
      break;
  }
}

void server_loop::forward_bcast(const transport::message& m) {
  std::int32_t payload[3] = {m.variable, m.source, m.iteration};
  for (int s = 0; s < m_topo.server_count; ++s) {
    if (s == m_topo.server_index) continue;
    check_mpi(MPI_Send(payload, 3, MPI_INT32_T, s, bcast_tag, m_topo.servers.get()), "MPI_Send");
    ++m_bcast_sent[s];
  }
}

bool server_loop::poll_bcast() {
  bool any = false;
  for (;;) {
    int flag = 0;
    MPI_Status status;
    check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, bcast_tag, m_topo.servers.get(), &flag, &status), "MPI_Iprobe");
    if (!flag) return any;
    std::int32_t payload[3];
    check_mpi(MPI_Recv(payload, 3, MPI_INT32_T, status.MPI_SOURCE, bcast_tag, m_topo.servers.get(),
                       MPI_STATUS_IGNORE),
              "MPI_Recv");
    ++m_bcast_received;
    any = true;
    if (payload[0] >= 0 && static_cast<std::size_t>(payload[0]) < m_model.events.size())
      action_registry::instance().run(m_model.events[payload[0]], m_model.file, payload[1], payload[2]);
  }
}

void server_loop::finish_bcast() {
  // Every server learns how many broadcasts were sent to it, and waits for all of them.
  int expected = 0;
  std::vector<int> ones(m_bcast_sent.size(), 1);
  check_mpi(MPI_Reduce_scatter(m_bcast_sent.data(), &expected, ones.data(), MPI_INT, MPI_SUM,
                               m_topo.servers.get()),
            "MPI_Reduce_scatter");
  while (m_bcast_received < expected) {
    if (!poll_bcast()) sched_yield();
  }
}

}  // namespace sidecore::server
