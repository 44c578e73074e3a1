// Dedicated cores. The hot path is one allocation under the shared heap's lock and one
// notification into this client's own ring; the server is woken only at the end of an
// iteration, for a signal, or when the ring fills up.
#include "transports/dedicated_cores/shm_engine.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "common/hot_path.hpp"
#include "common/job_failure.hpp"
#include "common/peer_watch.hpp"
#include "common/waiting.hpp"
#include "protocol/notifications.hpp"

namespace sidecore::transports {

shm_engine::shm_engine(const config::model& model, channel& channel, std::uint32_t slot, int source,
                       int server_rank, window_mapper* mapper)
    : m_waits(model.arch.policy == config::full_buffer_policy::wait),
      m_timeout(model.arch.wait_timeout_seconds),
      m_channel(channel),
      m_slot(slot),
      m_source(source),
      m_server_rank(server_rank),
      // This client's own stretch of the shared buffer: its blocks go there first.
      m_stretch(channel.heap().stretch_of(slot, channel.client_count())),
      m_keep_free(std::min(ring_slots_for_batches, channel.ring_capacity() / 8)),
      m_overflow(channel, m_stretch),
      m_mapper(mapper),
      m_map_ahead_from(mapper ? mapper->window_end() : 0) {
  // Touch the first pages of the stretch now (where the first small blocks go), so that the
  // first write finds them mapped, cached and in the TLB. Not more: the core reserves the
  // window's pages in the background meanwhile, and 4 MiB touched here prepared the same pages
  // a second time, on the client's processor, in start-up (2 ms of it here).
  const std::uint64_t share = m_channel.heap().capacity() / std::max(1u, m_channel.client_count());
  std::memset(m_channel.address(m_stretch), 0, std::min<std::uint64_t>(share, 64u << 10));
}

SIDECORE_HOT_PATH std::uint64_t shm_engine::capacity() const noexcept {
  return m_channel.heap().capacity();
}

SIDECORE_HOT_PATH void shm_engine::end_job_if_server_died(bool thorough, const char* call) const {
  const peer_watch* peers = peer_watch::current();
  if (!peers) return;
  const bool dead = thorough ? peers->state_of(m_server_rank) == peer_watch::state::dead
                             : peers->gone(m_server_rank);
  if (!dead) return;
  protocol::live_values stored;
  m_channel.stats().read(stored);
  job_failure::end_job(peers->death_of(m_server_rank) + ": it was the dedicated core of client " +
                       std::to_string(m_source) + ", which noticed it in " + call +
                       " (the core had stored " + std::to_string(stored.iterations_stored) +
                       " iteration(s) of its clients)");
}

void shm_engine::check_server_alive(const char* waiting_for, int code) {
  if (!m_server_stalled) return;
  end_job_if_server_died(true, waiting_for);
  // A live core passes through its loop within a few milliseconds of being woken: give it a
  // twentieth of a second (it may just have been resumed) before giving up.
  m_channel.wake_server();
  waiter look(paces::core_heartbeat, 0.05);
  do {
    if (m_channel.heartbeat() != m_stalled_at) {
      m_server_stalled = false;  // it moved again
      return;
    }
  } while (look.nap());
  throw error(code, std::string("not waiting for ") + waiting_for +
                        ": the dedicated core has not moved since an earlier wait for it timed out "
                        "(stopped, stuck in a store, or dead?); calls wait again once it moves");
}

void shm_engine::note_server_stalled() {
  // A wait for the core ran out: dead rather than slow or stopped?
  end_job_if_server_died(true, "a wait for it that timed out");
  m_server_stalled = true;
  m_stalled_at = m_channel.heartbeat();
}

void shm_engine::wait_reserved(std::uint64_t offset, std::uint64_t bytes, std::uint64_t needed) {
  // The block is allocated: give it back if it cannot be written.
  auto refuse = [&](const std::string& why) {
    m_channel.heap().release(offset, bytes);
    throw allocation_error("cannot place a block of " + std::to_string(bytes) +
                           " bytes in the shared buffer: " + why);
  };
  if (m_channel.heap_reservation_stopped()) refuse(m_channel.heap_reservation_error());
  // The core reserves the pages on a thread of its own: a core that has not moved since an
  // earlier wait timed out will not reserve them either.
  try {
    check_server_alive("the shared buffer's pages", DAMARIS_ALLOCATION_ERROR);
  } catch (const error& e) {
    refuse(e.what());
  }
  if (m_channel.heap_reserved(offset, needed, m_timeout)) return;
  const std::string why = m_channel.heap_reservation_error();
  if (!m_channel.heap_reservation_stopped()) note_server_stalled();
  refuse(why);
}

std::optional<std::uint64_t> shm_engine::allocate_waiting(std::uint64_t bytes) {
  if (!m_waits) return std::nullopt;
  check_server_alive("room in the shared buffer", DAMARIS_ALLOCATION_ERROR);
  const protocol::blocked_on_writer waiting(m_channel.phase_of(m_slot));
  try {
    return m_channel.heap().allocate(bytes, m_timeout, m_stretch);
  } catch (const allocation_error&) {
    note_server_stalled();
    throw;
  }
}

SIDECORE_HOT_PATH reservation shm_engine::reserve(std::uint64_t bytes) {
  const std::optional<std::uint64_t> offset = allocate(bytes);
  if (!offset) return {};
  // Beyond the start of its stretch, a block may land on pages the core is still reserving in
  // the background (the first moments of a run with a large buffer): wait for them.
  if (!m_channel.heap_ready(*offset, bytes)) wait_reserved(*offset, bytes, bytes);
  map_block(*offset, bytes);
  return placed(*offset, bytes);
}

SIDECORE_HOT_PATH reservation shm_engine::copy_in(const void* data, std::uint64_t bytes) {
  const std::optional<std::uint64_t> offset = allocate(bytes);
  if (!offset) return {};
  if (m_channel.reserved_fully()) {
    map_block(*offset, bytes);
    std::memcpy(m_channel.address(*offset), data, bytes);
  } else {
    copy_beside_reservation(*offset, data, bytes);
  }
  return placed(*offset, bytes);
}

void shm_engine::copy_beside_reservation(std::uint64_t offset, const void* data,
                                         std::uint64_t bytes) {
  // The zeros the core writes into the rest of the heap take the memory bandwidth this copy
  // needs: it is told that a copy runs, and waits, unless this client waits for pages.
  struct copy_mark {
    channel& c;
    std::uint32_t slot;
    copy_mark(channel& c, std::uint32_t slot) : c(c), slot(slot) { c.begin_copy(slot); }
    ~copy_mark() { c.end_copy(slot); }
    copy_mark(const copy_mark&) = delete;
    copy_mark& operator=(const copy_mark&) = delete;
  } mark(m_channel, m_slot);
  // Part of the block may not be reserved yet (a first write soon after start-up): each part
  // is copied as soon as it is, rather than all of it once the last part is.
  const auto* from = static_cast<const std::byte*>(data);
  for (std::uint64_t done = 0; done < bytes;) {
    const std::uint64_t ready = m_channel.ready_bytes(offset, bytes);
    if (ready <= done) {
      wait_reserved(offset, bytes, done + 1);
      continue;
    }
    map_block(offset + done, ready - done);
    std::memcpy(m_channel.address(offset + done), from + done, ready - done);
    done = ready;
  }
}

SIDECORE_HOT_PATH void shm_engine::send(const protocol::message& m, bool wake) {
  if (m_overflow.empty() && m_channel.try_push(m_slot, m, m_keep_free)) {
    if (wake || m_channel.half_full(m_slot)) m_channel.wake_server();
    return;
  }
  // The ring is full: the core is busy (storing). The notification waits in the shared heap,
  // after those already there, instead of this client waiting for the core.
  if (m_overflow.append(m)) {
    if (wake)
      post_overflow(true);
    else if (m_overflow.chunk_full())
      post_overflow(false);  // the core may have made room meanwhile
    return;
  }
  // No room in the heap for the chain either: what waits goes first, then this one, each
  // waiting for a slot.
  if (!m_overflow.empty()) post_overflow(true);
  push_waiting(m);
}

void shm_engine::post_overflow(bool must) {
  const protocol::message batch = m_overflow.batch(m_source);
  if (m_channel.try_push(m_slot, batch, must ? 0 : m_keep_free)) {
    m_overflow.posted();
    m_channel.wake_server();
    return;
  }
  if (!must) return;
  // The slots kept for batches are taken too (several ends of iteration while the core was
  // busy): the chain stays, and is handed over by a later call if this one times out.
  push_waiting(batch);
  m_overflow.posted();
}

void shm_engine::push_waiting(const protocol::message& m) {
  // One producer per ring: the room found stays.
  m_channel.wake_server();
  check_server_alive("room in the message queue", DAMARIS_CHANNEL_ERROR);
  const protocol::blocked_on_writer waiting(m_channel.phase_of(m_slot));
  if (!m_channel.wait_for_room(m_slot, m_timeout)) {
    note_server_stalled();
    throw error(DAMARIS_CHANNEL_ERROR,
                "message queue to the dedicated core stayed full for " + std::to_string(m_timeout) +
                    " s: the server is not consuming (did it call damaris_start?)");
  }
  m_channel.try_push(m_slot, m);
  m_channel.wake_server();
}

SIDECORE_HOT_PATH void shm_engine::commit(const protocol::message& m, block_buffer) {
  try {
    send(m, false);
  } catch (...) {
    // The server will never hear of this block: give its memory back.
    m_channel.heap().release(m.offset, m.bytes);
    throw;
  }
}

void shm_engine::signal(const config::event& event, std::size_t index, int iteration) {
  send(protocol::signal_message(event, index, iteration, m_source), true);
}

SIDECORE_HOT_PATH void shm_engine::end_iteration(int iteration, bool skipped,
                                                 std::uint64_t dropped_bytes) {
  // The core beats at every turn of its loop (about every millisecond when idle, between two
  // stores when busy): a beat since the last end of iteration says it lived since then, and the
  // system call that asks whether it is gone (1-2 us after a compute phase here) is left out. A
  // core that dies is noticed at the next end of iteration, or by any wait for it.
  const std::uint64_t beat = m_channel.heartbeat();
  if (beat == m_beat_at_last_end) end_job_if_server_died(false, "damaris_end_iteration");
  m_beat_at_last_end = beat;
  protocol::message m =
      protocol::control_message(protocol::message_kind::end_iteration, iteration, m_source,
                                skipped ? protocol::iteration_skipped : 0);
  m.bytes = dropped_bytes;
  send(m, true);
}

SIDECORE_HOT_PATH void shm_engine::report_store_failures() {
  const std::uint32_t failures = m_channel.store_failures();
  if (failures == m_failures_seen) return;
  const std::uint32_t fresh = failures - m_failures_seen;
  m_failures_seen = failures;
  throw storage_error(std::to_string(fresh) + " store call(s) failed since the last report (" +
                      std::to_string(failures) +
                      " in all); the first: " + m_channel.first_store_failure());
}

SIDECORE_HOT_PATH void shm_engine::iteration_started(int started) {
  // This client's progress is published before anything can throw: a store failure reported
  // below must not hide it from the other clients, which would wait for it (with every
  // iteration's store failing, a client that reported at each end of iteration once seemed
  // stuck at the first failed one).
  if (m_waits) m_channel.publish_ended(m_slot, static_cast<std::uint32_t>(started));
  report_store_failures();
  if (!m_waits) return;
  // The iteration this client now starts may be at most max_iterations_ahead past the one the
  // slowest client of its dedicated core is in. Without this bound, clients out of step would
  // fill the shared buffer with younger iterations, and the dedicated core would have to keep
  // moving them into its own memory (without limit) so that the slowest client can write.
  // The others' progress is read from the rings only when the last value seen is too old.
  const std::int64_t needed = static_cast<std::int64_t>(started) - max_iterations_ahead;
  if (needed <= m_slowest_seen) return;
  m_slowest_seen = m_channel.slowest_ended();
  if (needed <= m_slowest_seen) return;
  if (!m_channel.wait_for_slowest(static_cast<std::uint32_t>(needed), m_timeout))
    throw error(DAMARIS_CHANNEL_ERROR,
                "iteration " + std::to_string(started) + " would be more than " +
                    std::to_string(max_iterations_ahead) +
                    " iterations ahead of the slowest client of this dedicated core, which "
                    "did not end iteration " +
                    std::to_string(needed - 1) + " within " + std::to_string(m_timeout) +
                    " s (<buffer timeout=...>): is a client stuck?");
  m_slowest_seen = m_channel.slowest_ended();
}

void shm_engine::sync(int iterations) {
  end_job_if_server_died(false, "damaris_sync");
  check_server_alive("iterations to be stored", DAMARIS_CHANNEL_ERROR);
  const protocol::blocked_on_writer waiting(m_channel.phase_of(m_slot));
  if (!m_channel.wait_stored(static_cast<std::uint32_t>(iterations), m_timeout)) {
    note_server_stalled();
    throw error(DAMARIS_CHANNEL_ERROR, "the dedicated core did not store iteration " +
                                           std::to_string(iterations - 1) + " within " +
                                           std::to_string(m_timeout) + " s");
  }
  report_store_failures();
}

void shm_engine::stop(int iteration) {
  end_job_if_server_died(false, "damaris_stop");
  m_channel.publish_ended(m_slot, UINT32_MAX);  // nobody waits for this client
  m_channel.phase_of(m_slot).enter(protocol::client_phase::stopped);  // nor schedules by it
  send(protocol::control_message(protocol::message_kind::stop, iteration, m_source), true);
}

void shm_engine::resume(int iteration) {
  m_channel.publish_ended(m_slot, static_cast<std::uint32_t>(iteration));
  m_channel.phase_of(m_slot).enter(protocol::client_phase::unmarked);
}

}  // namespace sidecore::transports
