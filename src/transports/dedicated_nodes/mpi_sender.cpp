// Non-blocking sends kept in submission order; memory returns to the budget as sends complete.
#include "transports/dedicated_nodes/mpi_sender.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/error.hpp"
#include "common/job_failure.hpp"
#include "common/log.hpp"
#include "common/mpi_handles.hpp"
#include "common/peer_watch.hpp"
#include "common/units.hpp"
#include "common/waiting.hpp"

namespace sidecore::transports {

mpi_sender::mpi_sender(MPI_Comm link, int server_rank, const config::architecture& arch)
    : m_link(link),
      m_server(server_rank),
      m_budget(arch.buffer_size),
      m_policy(arch.policy),
      m_timeout(arch.wait_timeout_seconds) {
  // Packed blocks take a quarter of the budget at most, and leave room for two blocks each.
  constexpr std::uint64_t largest_packed_block = 16 * 1024;
  m_packed_capacity = std::min(most_packed_bytes, m_budget / 4);
  const std::uint64_t entry = protocol::next_packed_entry(0, 0);
  if (m_packed_capacity >= 4 * entry)
    m_packed_block_limit = std::min(largest_packed_block, m_packed_capacity / 2 - entry);
  check_mpi(MPI_Irecv(&m_report, sizeof m_report, MPI_BYTE, m_server, failure_tag, m_link,
                      &m_report_request),
            "MPI_Irecv");
}

std::string mpi_sender::take_store_failures() {
  std::string text;
  for (;;) {
    int done = 0;
    if (m_report_request == MPI_REQUEST_NULL) return text;
    check_mpi(MPI_Test(&m_report_request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (!done) return text;
    // Reports only grow: the latest says how many in all; the first message stays the same.
    if (m_report.failures > m_failures_seen) {
      const std::uint32_t fresh = m_report.failures - m_failures_seen;
      m_failures_seen = m_report.failures;
      m_report.first[sizeof m_report.first - 1] = '\0';
      text = std::to_string(fresh) + " store call(s) failed since the last report (" +
             std::to_string(m_report.failures) + " in all); the first: " + m_report.first;
    }
    check_mpi(MPI_Irecv(&m_report, sizeof m_report, MPI_BYTE, m_server, failure_tag, m_link,
                        &m_report_request),
              "MPI_Irecv");
  }
}

void mpi_sender::end_job_if_server_died(bool thorough, const char* call) const {
  const peer_watch* peers = peer_watch::current();
  if (!peers) return;
  const bool dead =
      thorough ? peers->state_of(m_server) == peer_watch::state::dead : peers->gone(m_server);
  if (dead)
    job_failure::end_job(peers->death_of(m_server) +
                         ": it was the dedicated node's server of "
                         "this client, which noticed it in " +
                         call);
}

mpi_sender::~mpi_sender() {
  if (m_report_request != MPI_REQUEST_NULL) {
    // A report that arrived is read; one that never will be is given up.
    int done = 0;
    MPI_Test(&m_report_request, &done, MPI_STATUS_IGNORE);
    if (!done) {
      MPI_Cancel(&m_report_request);
      MPI_Request_free(&m_report_request);
    }
  }
  // Normally flushed by stop(); if not (an error path), give the server the timeout to take
  // what is pending, then let go.
  m_stalled = false;
  if (wait_until([&] { return m_pending.empty(); })) return;
  std::uint64_t bytes = 0;
  for (const pending& p : m_pending) bytes += p.bytes;
  log::error("the dedicated node took nothing for ", m_timeout, " s: ", m_pending.size(),
             " message(s) with ", readable_bytes(bytes),
             " of blocks were not delivered (stopped, stuck in a store, or dead?); their memory "
             "is kept until the process exits (MPI may still read it)");
  // Sends still in flight read their buffers until they complete: let them go, keep the memory
  // (the headers too: the deque's elements are not freed).
  for (pending& p : m_pending) {
    for (MPI_Request& r : p.requests)
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    static_cast<void>(p.data.release());
  }
  static_cast<void>(new std::deque<pending>(std::move(m_pending)));
}

template <typename Ready>
bool mpi_sender::wait_until(Ready ready) {
  // The deadline restarts whenever the server takes something: it is alive.
  waiter pause(paces::send_completion, m_stalled ? stalled_grace_seconds : m_timeout);
  for (;;) {
    const std::uint64_t completed = m_completed;
    progress();
    if (m_completed != completed) {
      m_stalled = false;
      pause.restart(m_timeout);
    }
    if (ready()) return true;
    if (!pause.nap()) {
      // The server took nothing for that long: dead rather than slow or stopped?
      end_job_if_server_died(true, "a wait for it that timed out");
      m_stalled = true;
      return false;
    }
  }
}

std::string mpi_sender::stalled_message(const std::string& waiting_for) const {
  return "not waiting for " + waiting_for +
         ": the dedicated node has not moved (taken nothing) since an earlier wait for it timed "
         "out "
         "(stopped, stuck in a store, or dead?); calls wait again once it moves";
}

void mpi_sender::progress() {
  while (!m_pending.empty()) {
    int done = 0;
    check_mpi(MPI_Testall(2, m_pending.front().requests, &done, MPI_STATUSES_IGNORE),
              "MPI_Testall");
    if (!done) return;
    m_in_use -= m_pending.front().bytes;
    m_pending.pop_front();
    ++m_completed;
  }
}

block_buffer mpi_sender::reserve(std::uint64_t bytes) {
  if (bytes > m_budget) throw block_never_fits(bytes, m_budget, "this process's buffer");
  if (bytes > static_cast<std::uint64_t>(INT_MAX))
    throw allocation_error("a block of " + readable_bytes(bytes) +
                           " is larger than 2 GiB, the largest block sent to dedicated nodes");
  progress();
  if (m_in_use + bytes > m_budget) {
    if (m_policy == config::full_buffer_policy::skip) return nullptr;
    const bool was_stalled = m_stalled;
    if (!wait_until([&] { return m_in_use + bytes <= m_budget; })) {
      if (was_stalled) throw allocation_error(stalled_message("room in the buffer"));
      throw allocation_error("waited " + std::to_string(m_timeout) + " s for " +
                             readable_bytes(bytes) + " of buffer (" + readable_bytes(m_in_use) +
                             " of " + readable_bytes(m_budget) +
                             " waiting for the dedicated node): the server does not keep up; "
                             "raise <buffer size=...>, raise timeout=..., or choose "
                             "policy=\"skip\"");
    }
  }
  m_in_use += bytes;
  return buffer_pool::acquire(bytes);
}

void mpi_sender::send(const protocol::message& m, block_buffer data) {
  send_packed();
  const std::uint64_t bytes = data ? m.bytes : 0;
  post(m, std::move(data), bytes, bytes);
  progress();
}

void mpi_sender::post(const protocol::message& m, block_buffer data, std::uint64_t length,
                      std::uint64_t budgeted) {
  pending& p = m_pending.emplace_back();
  p.header = m;
  p.bytes = budgeted;
  check_mpi(MPI_Isend(&p.header, sizeof(protocol::message), MPI_BYTE, m_server, announce_tag,
                      m_link, &p.requests[0]),
            "MPI_Isend");
  if (data) {
    p.data = std::move(data);
    check_mpi(MPI_Isend(p.data.get(), static_cast<int>(length), MPI_BYTE, m_server, data_tag,
                        m_link, &p.requests[1]),
              "MPI_Isend");
  }
}

bool mpi_sender::has_packed_room(std::uint64_t bytes) {
  if (m_packed && m_packed_used + protocol::next_packed_entry(0, bytes) <= m_packed_capacity)
    return true;
  return has_room(m_packed_capacity);
}

void* mpi_sender::reserve_packed(std::uint64_t bytes) {
  const std::uint64_t entry = protocol::next_packed_entry(0, bytes);
  if (m_packed && m_packed_used + entry > m_packed_capacity) send_packed();
  if (!m_packed) {
    m_packed = reserve(m_packed_capacity);  // has_packed_room: no wait
    if (!m_packed) throw std::logic_error("mpi_sender: packed blocks reserved without room");
    m_packed_used = 0;
    m_packed_blocks = 0;
  }
  m_packed_reserved = m_packed_used;
  m_packed_open = true;
  return m_packed.get() + m_packed_used + sizeof(protocol::message);
}

void mpi_sender::commit_packed(const protocol::message& m) {
  m_packed_open = false;
  std::memcpy(m_packed.get() + m_packed_reserved, &m, sizeof m);
  m_packed_used = protocol::next_packed_entry(m_packed_reserved, m.bytes);
  if (m_packed_blocks++ == 0) {
    m_packed_iteration = m.iteration;
    m_packed_source = m.source;
  }
}

void mpi_sender::send_packed() {
  if (!m_packed || m_packed_blocks == 0) return;
  if (m_packed_open)
    throw std::logic_error("mpi_sender: packed blocks sent while one of them is being written");
  protocol::message m{};
  m.kind = protocol::message_kind::packed_blocks;
  m.iteration = m_packed_iteration;
  m.source = m_packed_source;
  m.flags = m_packed_blocks;
  m.bytes = m_packed_used;
  m_packed_blocks = 0;
  m_packed_used = 0;
  post(m, std::move(m_packed), m.bytes, m_packed_capacity);
}

void mpi_sender::wait_stored(std::int32_t iterations, std::int32_t source) {
  protocol::message request{};
  request.kind = protocol::message_kind::sync;
  request.iteration = iterations;
  request.source = source;
  send(request, nullptr);
  std::int32_t reply = -1;
  MPI_Request receive = MPI_REQUEST_NULL;
  check_mpi(MPI_Irecv(&reply, 1, MPI_INT32_T, m_server, sync_tag, m_link, &receive), "MPI_Irecv");
  const bool was_stalled = m_stalled;
  const bool answered = wait_until([&] {
    int done = 0;
    check_mpi(MPI_Test(&receive, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (!done) return false;
    m_stalled = false;  // it answered: alive
    // A reply carries the iterations stored when it was sent: one that answers an earlier
    // sync that timed out may say fewer than this one waits for; wait for the next.
    if (reply >= iterations) return true;
    check_mpi(MPI_Irecv(&reply, 1, MPI_INT32_T, m_server, sync_tag, m_link, &receive), "MPI_Irecv");
    return false;
  });
  if (answered) return;
  MPI_Cancel(&receive);
  MPI_Request_free(&receive);
  if (was_stalled) throw error(DAMARIS_CHANNEL_ERROR, stalled_message("damaris_sync"));
  throw error(DAMARIS_CHANNEL_ERROR, "the dedicated node did not store iteration " +
                                         std::to_string(iterations - 1) + " within " +
                                         std::to_string(m_timeout) + " s");
}

void mpi_sender::flush() {
  // Everything handed over must reach the server, however long its stores take: each timeout
  // without progress is said once, and the wait goes on (a dead server ends the job through
  // MPI; a frozen one could not finish the job anyway).
  m_stalled = false;
  while (!wait_until([&] { return m_pending.empty(); })) {
    // Dead (end_job above) or alive and frozen on this machine: wait on. On another machine
    // nothing tells a dead server from a stuck one: silent for the whole timeout while it owes
    // this client its pulls, it is taken for dead, as waiting on could last for ever.
    const peer_watch* peers = peer_watch::current();
    if (peers && peers->state_of(m_server) == peer_watch::state::elsewhere)
      job_failure::end_job(peers->name_of(m_server) +
                           " (the dedicated node's server of this "
                           "client) took nothing for " +
                           std::to_string(m_timeout) + " s while " +
                           std::to_string(m_pending.size()) +
                           " message(s) waited for it in damaris_stop; it is taken for dead");
    log::warning("the dedicated node has taken nothing for ", m_timeout, " s (", m_pending.size(),
                 " message(s) waiting: a slow store?); still waiting, so that "
                 "nothing is lost");
    m_stalled = false;
  }
}

}  // namespace sidecore::transports
