// Dedicated-core loop. A server spins briefly after activity (a burst of writes usually
// follows another) and then sleeps on the channel's futex so that its core is free.
#include "server/server_loop.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#include "common/log.hpp"

namespace sidecore::server {
namespace {
constexpr int idle_rounds_before_sleep = 2000;
}  // namespace

server_loop::server_loop(const config::model& model, const topology::layout& topo,
                         transport::channel& channel)
    : m_model(model),
      m_topo(topo),
      m_channel(channel),
      m_buffer(model.arch, std::to_string(::getpid()) + "-" + std::to_string(topo.server_index),
               [&channel](const std::vector<transport::heap_extent>& ranges) {
                 channel.heap().release(ranges);
               }),
      m_processor(model, topo.servers.get(), static_cast<int>(channel.client_count()),
                  [&channel](const std::vector<transport::heap_extent>& ranges) {
                    channel.heap().release(ranges);
                  }),
      m_events(model, topo.servers.get(), static_cast<int>(channel.client_count())),
      m_stopped(channel.client_count(), 0) {
  m_processor.defer_storing(true);
}

std::uint64_t server_loop::heap_high_water() const { return m_channel.heap().high_water(); }

void server_loop::run() {
  // A second run (damaris_start again after the clients stopped) waits for them to stop again.
  std::fill(m_stopped.begin(), m_stopped.end(), 0);
  m_stopped_count = 0;
  int idle = 0;
  while (m_stopped_count < m_channel.client_count()) {
    bool progress = drain();
    if (m_events.has_bcast()) progress = m_events.poll() || progress;
    if (m_processor.waiting()) {
      store_one();
      progress = true;
    }
    if (progress) {
      idle = 0;
      continue;
    }
    if (idle == 0 || idle % 256 == 0) rescue_waiting_writers();
    if (++idle < idle_rounds_before_sleep) {
      sched_yield();
      continue;
    }
    std::uint32_t token = m_channel.prepare_sleep();
    if (!drain()) m_channel.sleep(token, m_events.has_bcast() ? 2 : 200);
    m_channel.end_sleep();
  }
  drain();
  while (m_processor.waiting()) store_one();
  m_events.finish();
  m_processor.finish();
  m_channel.publish_stored(static_cast<std::uint32_t>(m_processor.stored_iterations()));
}

void server_loop::rescue_waiting_writers() {
  // Nothing to store and writers wait: they may be clients behind the others, unable to
  // complete the oldest iteration because younger ones fill the buffer.
  if (m_channel.heap().waiters() == 0) return;
  std::uint64_t freed = m_processor.rescue(m_buffer);
  if (freed)
    log::info("moved ", freed, " bytes of iterations from ", m_processor.open_iteration(),
              " on into server memory so that clients still writing iteration ",
              m_processor.open_iteration(), " get space");
}

void server_loop::store_one() {
  transport::shared_heap& heap = m_channel.heap();
  // A store may take long (a slow file system): before it starts, a crowded buffer is
  // relieved so that clients keep writing meanwhile.
  if (m_buffer.enabled()) {
    const std::uint64_t used = heap.used(), half = heap.capacity() / 2;
    if (used > half) m_processor.evacuate(m_buffer, used - half);
  }
  rescue_waiting_writers();
  m_processor.store_next();
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
      stored_block b = stored_block_from(m, m_channel.address(m.offset));
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
      m_events.signal(m.variable, m.source, m.iteration);
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

}  // namespace sidecore::server
