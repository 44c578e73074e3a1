// Dedicated-core loop. A server spins briefly after activity (a burst of writes usually
// follows another), then naps: it looks at the rings again after a short sleep (at most
// SIDECORE_IDLE_POLL_US microseconds, 1000 by default) without telling the clients it sleeps,
// so that ending an iteration never costs a client a wake-up system call (on a virtual
// machine, waking a halted core costs the waker 20 us and more). With SIDECORE_IDLE_POLL_US=0
// it sleeps on the channel's futex instead, and clients wake it.
#include "transports/dedicated_cores/server_loop.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/units.hpp"
#include "common/waiting.hpp"
#include "protocol/notifications.hpp"
#include "transports/dedicated_cores/overflow.hpp"

namespace sidecore::transports {
server_loop::server_loop(const config::model& model, const topology::layout& topo, channel& channel)
    : m_model(model),
      m_topo(topo),
      m_channel(channel),
      m_buffer(model.arch, std::to_string(::getpid()) + "-" + std::to_string(topo.server_index),
               [this](const std::vector<memory::heap_extent>& ranges) { release(ranges); }),
      m_processor(model, topo.servers.get(), static_cast<int>(channel.client_count()),
                  [this](const std::vector<memory::heap_extent>& ranges) { release(ranges); }),
      m_events(model, topo.servers.get(), static_cast<int>(channel.client_count())),
      m_stopped(channel.client_count(), 0),
      m_sources(channel.client_count()),
      m_ended(channel.client_count(), 0),
      m_rejected(channel.client_count(), 0) {
  // Slot s of the channel is the group's client s.
  m_processor.name_clients(topo.group_client_indices);
  m_processor.defer_storing(true);
  m_processor.watch_buffer([this] {
    // The server's own account of the blocks it holds there: no lock of the heap, which the
    // clients' allocations take.
    storing::buffer_use use;
    use.used = m_shared_held;
    use.peak = m_shared_peak;
    use.capacity = m_channel.heap().capacity();
    use.spilled = m_buffer.counters().bytes_spilled;
    use.in_server_memory = m_buffer.in_memory();
    return use;
  });
  // Live counters go into the segment, where the clients read them (sidecore_stats).
  m_processor.publish_to(&m_channel.stats());
  std::vector<const protocol::client_phase*> phases;
  for (std::uint32_t slot = 0; slot < channel.client_count(); ++slot)
    phases.push_back(&channel.phase_of(slot));
  m_processor.watch_phases(std::move(phases));
  // Slot k is the k-th client of the group (its index among all clients); a channel built
  // without a topology (tests) numbers its clients by slot.
  for (std::uint32_t slot = 0; slot < channel.client_count(); ++slot)
    m_sources[slot] = slot < topo.group_client_indices.size() ? topo.group_client_indices[slot]
                                                              : static_cast<std::int32_t>(slot);
  try {
    m_ghosts = config::evaluate_ghosts(model);
  } catch (const std::exception& e) {
    log::warning("ghost zones cannot be evaluated (", e.what(),
                 "); blocks' interiors are not checked");
  }
}

void server_loop::release(const std::vector<memory::heap_extent>& ranges) {
  for (const memory::heap_extent& r : ranges) {
    const auto held = m_held.find(r.offset);
    if (held == m_held.end()) continue;
    m_shared_held -= held->second - held->first;
    m_held.erase(held);
  }
  m_channel.heap().release(ranges);
}

bool server_loop::unclaimed(std::uint64_t offset, std::uint64_t bytes) const {
  const std::uint64_t end = offset + memory::shared_heap::rounded(bytes);
  auto after = m_held.lower_bound(end);
  if (after != m_held.begin() && std::prev(after)->second > offset) return false;
  return m_channel.heap().is_allocated(offset, bytes);
}

std::uint64_t server_loop::buffer_high_water() const { return m_channel.heap().high_water(); }

void server_loop::report_more(int server_index) const {
  const storing::active_buffer_counters& b = m_buffer.counters();
  if (b.bytes_buffered || b.bytes_spilled)
    log::info("server ", server_index, ": moved ", b.bytes_buffered,
              " bytes into server memory (at most ", b.memory_high_water, " bytes at once) and ",
              b.bytes_spilled, " bytes into ", b.spill_files,
              " spill file(s) to relieve the shared buffer (active buffering, and iterations set "
              "aside so that clients out of step could write)");
}

void server_loop::run() {
  // A second run (damaris_start again after the clients stopped) waits for them to stop again.
  std::fill(m_stopped.begin(), m_stopped.end(), 0);
  m_stopped_count = 0;
  // Clients of different dedicated cores may stop at different times.
  m_processor.agree_before_storing(true);
  // Idle: free looks, then the futex until a client wakes the core, or, with
  // SIDECORE_IDLE_POLL_US set, naps that grow up to that instead.
  const long poll_us = environment::idle_poll_us();
  pace idle_pace = paces::core_idle;
  if (poll_us > 0) {
    idle_pace.longest = std::chrono::microseconds(poll_us);
    idle_pace.first = std::min(idle_pace.first, idle_pace.longest);
  }
  waiter idle(idle_pace);
  std::uint64_t idle_rounds = 0;
  while (m_stopped_count < m_channel.client_count()) {
    m_channel.beat();
    bool progress = drain();
    if (m_events.has_bcast()) progress = m_events.poll() || progress;
    if (m_processor.waiting()) {
      store_one();
      progress = true;
    }
    if (progress) {
      idle_rounds = 0;
      idle.moved();
      continue;
    }
    if (idle_rounds++ % 256 == 0) rescue_waiting_writers();
    if (!idle.sleeping() || poll_us > 0) {
      idle.nap();
      continue;
    }
    std::uint32_t token = m_channel.prepare_sleep();
    if (!drain()) m_channel.sleep(token, m_events.has_bcast() ? 2 : 200);
    m_channel.end_sleep();
  }
  drain();
  while (m_processor.waiting()) store_one();
  m_processor.take_part_until_all_stopped();
  m_events.finish();
  m_processor.finish();
  publish_failures();
  m_channel.publish_stored(static_cast<std::uint32_t>(m_processor.stored_iterations()));
  for (std::uint32_t slot = 0; slot < m_channel.client_count(); ++slot)
    if (m_rejected[slot] > 1)
      log::warning("client ", m_sources[slot], ": ", m_rejected[slot],
                   " notifications were malformed and dropped");
  // Every block is stored and its memory given back: what is still in use was allocated by
  // clients and never announced. Counted only while every client is still stopped (one that
  // started again may be allocating now; its resume is published before its allocations).
  // A poisoned heap gives nothing back: its use says nothing then.
  const std::string poisoned = m_channel.heap().poisoned();
  const std::uint64_t used = m_channel.heap().used();
  m_unannounced = 0;
  if (poisoned.empty() && used > 0 && m_held.empty() && m_channel.slowest_ended() == UINT32_MAX) {
    m_unannounced = used;
    log::warning(readable_bytes(used),
                 " of the shared buffer were allocated by clients but never announced (a client "
                 "killed while writing, or blocks allocated and not committed before "
                 "damaris_stop); they stay unusable until the end of the job");
  }
  if (!poisoned.empty()) log::error("the shared buffer could not be used to the end: ", poisoned);
}

void server_loop::rescue_waiting_writers() {
  // Nothing to store and writers wait: they may be clients behind the others, unable to
  // complete the oldest iteration because younger ones fill the buffer.
  if (m_channel.heap().waiters() == 0) return;
  std::uint64_t freed = m_processor.rescue(m_buffer);
  if (freed) m_processor.refresh_live();
  if (freed)
    log::info("moved ", freed, " bytes of iterations from ", m_processor.open_iteration(),
              " on into server memory so that clients still writing iteration ",
              m_processor.open_iteration(), " get space");
}

void server_loop::store_one() {
  memory::shared_heap& heap = m_channel.heap();
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
  const std::uint64_t failures = m_processor.counters().store_failures + m_rejected_total;
  if (failures == m_published_failures) return;
  m_published_failures = failures;
  // The channel keeps the first message it is given: the first failure of either kind.
  const std::string& store_failure = m_processor.pending_failure();
  m_channel.publish_store_failures(
      static_cast<std::uint32_t>(failures),
      "the dedicated core (rank " + std::to_string(m_topo.world_rank) + ") " +
          (store_failure.empty() ? "dropped a malformed notification: " + m_first_rejection
                                 : "could not store: " + store_failure));
}

bool server_loop::drain() {
  bool any = false;
  protocol::message m;
  for (std::uint32_t slot = 0; slot < m_channel.client_count(); ++slot) {
    // A bounded batch per client keeps the others served.
    for (int n = 0; n < 256 && m_channel.try_pop(slot, m); ++n) {
      if (m.kind == protocol::message_kind::batch)
        handle_batch(slot, m);
      else
        handle(slot, m);
      any = true;
    }
  }
  return any;
}

std::string server_loop::problem_of(std::uint32_t slot, const protocol::message& m) const {
  protocol::message_limits limits;
  limits.model = &m_model;
  limits.ghosts = &m_ghosts;
  limits.source = m_sources[slot];
  limits.ended = m_ended[slot];
  limits.closed = m_processor.open_iteration();
  limits.heap_begin = m_channel.heap().begin_offset();
  limits.heap_end = m_channel.heap().end_offset();
  std::string problem = protocol::message_problem(m, limits);
  if (problem.empty() && m.kind == protocol::message_kind::block &&
      m_announced.count({m.iteration, m.variable, m.block, slot}))
    problem = "block " + std::to_string(m.block) +
              " was announced already in this iteration "
              "(each block is handed over once per iteration)";
  if (problem.empty() && m.kind == protocol::message_kind::block && !unclaimed(m.offset, m.bytes))
    problem = "its data at offset " + std::to_string(m.offset) + " (" + std::to_string(m.bytes) +
              " bytes) is not memory the client allocated: free, or held by another block "
              "(announced twice?)";
  return problem;
}

void server_loop::reject(std::uint32_t slot, const protocol::message& m,
                         const std::string& problem) {
  ++m_rejected[slot];
  ++m_rejected_total;
  // Its iteration, when the message names a plausible one, or the one the client is in, is
  // stored as incomplete.
  const std::int64_t ended = m_ended[slot];
  const bool plausible =
      m.iteration >= ended && m.iteration <= ended + protocol::max_iterations_unended;
  m_tainted.emplace(slot, plausible ? std::int64_t{m.iteration} : ended);
  std::string what = "client " + std::to_string(m_sources[slot]) + " (queue " +
                     std::to_string(slot) + "), iteration " + std::to_string(m.iteration) + ", " +
                     protocol::kind_name(m.kind);
  if (m.kind == protocol::message_kind::block && m.variable >= 0 &&
      static_cast<std::size_t>(m.variable) < m_model.variables.size())
    what += " of variable '" + m_model.variables[m.variable].name + "'";
  what += ": " + problem;
  if (m_first_rejection.empty()) m_first_rejection = what;
  if (m_rejected[slot] == 1)
    log::error("dropped a malformed notification from ", what,
               "; the iteration will be stored as incomplete (further bad notifications from "
               "this client are counted, not logged)");
  // A block's memory goes back only when it is a range the client holds and no block of the
  // server does: anything else (outside the heap, free, someone else's) is left alone.
  if (m.kind == protocol::message_kind::block && m.offset >= m_channel.heap().begin_offset() &&
      m.offset < m_channel.heap().end_offset() && unclaimed(m.offset, m.bytes)) {
    try {
      m_channel.heap().release(m.offset, m.bytes);
    } catch (const std::exception& e) {
      log::error("could not give back the memory of a dropped block: ", e.what());
    }
  }
  publish_failures();
}

void server_loop::handle_batch(std::uint32_t slot, const protocol::message& batch) {
  std::string problem = problem_of(slot, batch);
  if (problem.empty())
    problem = read_overflow(
        m_channel, batch,
        [this](std::uint64_t offset, std::uint64_t bytes) { return unclaimed(offset, bytes); },
        [&](const protocol::message& m) {
          if (m.kind == protocol::message_kind::batch)
            reject(slot, m, "a batch inside a batch");
          else
            handle(slot, m);
        });
  if (!problem.empty()) reject(slot, batch, problem);
}

void server_loop::handle(std::uint32_t slot, const protocol::message& m) {
  const std::string problem = problem_of(slot, m);
  if (!problem.empty()) {
    reject(slot, m, problem);
    return;
  }
  switch (m.kind) {
    case protocol::message_kind::block: {
      storing::stored_block b = storing::stored_block_from(m, m_channel.address(m.offset));
      b.shared = {m.offset, m.bytes};
      if (m_held.emplace(m.offset, m.offset + memory::shared_heap::rounded(m.bytes)).second) {
        m_shared_held += memory::shared_heap::rounded(m.bytes);
        m_shared_peak = std::max(m_shared_peak, m_shared_held);
      }
      m_announced.insert({m.iteration, m.variable, m.block, slot});
      m_processor.add_block(std::move(b));
      break;
    }
    case protocol::message_kind::end_iteration: {
      const bool dropped = m_tainted.erase({slot, m.iteration}) > 0;
      m_ended[slot] = std::int64_t{m.iteration} + 1;
      m_processor.end_iteration(static_cast<int>(slot), m.iteration,
                                (m.flags & protocol::iteration_skipped) != 0 || dropped, m.bytes);
      m_channel.publish_stored(static_cast<std::uint32_t>(m_processor.stored_iterations()));
      // Blocks of complete iterations can no longer be announced (they would be late).
      m_announced.erase(m_announced.begin(), m_announced.lower_bound({m_processor.open_iteration(),
                                                                      INT32_MIN, INT32_MIN, 0u}));
      break;
    }
    case protocol::message_kind::signal:
      m_events.signal(m.variable, m.source, m.iteration);
      break;
    case protocol::message_kind::stop:
      if (!m_stopped[slot]) {
        m_stopped[slot] = 1;
        ++m_stopped_count;
        log::debug("client ", m.source, " stopped at iteration ", m.iteration);
        // It ends nothing more: the others' iterations complete without it (those it left
        // out marked incomplete), so that their data and syncs do not wait for it.
        m_processor.source_stopped(static_cast<int>(slot), static_cast<int>(m_ended[slot]));
        m_announced.erase(
            m_announced.begin(),
            m_announced.lower_bound({m_processor.open_iteration(), INT32_MIN, INT32_MIN, 0u}));
      }
      break;
    default:
      break;  // refused by problem_of
  }
}

}  // namespace sidecore::transports
