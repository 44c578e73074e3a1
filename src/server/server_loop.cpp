// Dedicated-core loop. A server spins briefly after activity (a burst of writes usually
// follows another), then naps: it looks at the rings again after a short sleep (at most
// SIDECORE_IDLE_POLL_US microseconds, 1000 by default) without telling the clients it sleeps,
// so that ending an iteration never costs a client a wake-up system call (on a virtual
// machine, waking a halted core costs the waker 20 us and more). With SIDECORE_IDLE_POLL_US=0
// it sleeps on the channel's futex instead, and clients wake it.
#include "server/server_loop.hpp"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/error.hpp"
#include "common/log.hpp"

namespace sidecore::server {
namespace {
constexpr int idle_rounds_before_sleep = 2000;
constexpr long default_idle_poll_us = 1000;

// The longest nap of an idle server, in microseconds (0: sleep until woken).
long idle_poll_us() {
  const char* env = std::getenv("SIDECORE_IDLE_POLL_US");
  if (!env || !*env) return default_idle_poll_us;
  char* end = nullptr;
  const long value = std::strtol(env, &end, 10);
  if (*end != '\0' || value < 0 || value > 1000000) {
    log::warning("SIDECORE_IDLE_POLL_US='", env,
                 "' is not a number of microseconds from 0 to 1000000; using ",
                 default_idle_poll_us);
    return default_idle_poll_us;
  }
  return value;
}
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
  const long poll_us = idle_poll_us();
  long nap_us = 0;
  int idle = 0;
  while (m_stopped_count < m_channel.client_count()) {
    m_channel.beat();
    bool progress = drain();
    if (m_events.has_bcast()) progress = m_events.poll() || progress;
    if (m_processor.waiting()) {
      store_one();
      progress = true;
    }
    if (progress) {
      idle = 0;
      nap_us = 0;
      continue;
    }
    if (idle == 0 || idle % 256 == 0) rescue_waiting_writers();
    if (++idle < idle_rounds_before_sleep) {
      sched_yield();
      continue;
    }
    if (poll_us > 0) {
      // Naps grow from 20 us to the limit: a server that just went idle answers quickly.
      nap_us = std::min(poll_us, nap_us == 0 ? 20 : nap_us * 2);
      const timespec nap{nap_us / 1000000, (nap_us % 1000000) * 1000};
      nanosleep(&nap, nullptr);
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
  publish_failures();
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
  publish_failures();
  m_channel.publish_stored(static_cast<std::uint32_t>(m_processor.stored_iterations()));
}

void server_loop::publish_failures() {
  const std::uint64_t failures = m_processor.counters().store_failures;
  if (failures == m_published_failures) return;
  m_published_failures = failures;
  m_channel.publish_store_failures(static_cast<std::uint32_t>(failures),
                                   "the dedicated core (rank " + std::to_string(m_topo.world_rank) +
                                       ") could not store: " + m_processor.pending_failure());
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
