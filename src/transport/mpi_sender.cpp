// Non-blocking sends kept in submission order; memory returns to the budget as sends complete.
#include "transport/mpi_sender.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <string>
#include <thread>

#include "common/backoff.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/mpi_handles.hpp"
#include "common/units.hpp"

namespace sidecore::transport {

mpi_sender::mpi_sender(MPI_Comm link, int server_rank, const config::architecture& arch)
    : m_link(link),
      m_server(server_rank),
      m_budget(arch.buffer_size),
      m_policy(arch.policy),
      m_timeout(arch.wait_timeout_seconds) {}

mpi_sender::~mpi_sender() {
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
  // Sends still in flight read their buffers until they complete: let them go, keep the memory.
  for (pending& p : m_pending) {
    for (MPI_Request& r : p.requests)
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    static_cast<void>(p.header.release());
    static_cast<void>(p.data.release());
  }
}

template <typename Ready>
bool mpi_sender::wait_until(Ready ready) {
  double started = MPI_Wtime();
  // Sixteen tests before the first nap: a completion due right now costs no sleep.
  backoff pause(std::chrono::microseconds(10),
                std::chrono::microseconds(static_cast<long>(longest_nap_seconds * 1e6)), 16);
  for (;;) {
    const std::uint64_t completed = m_completed;
    progress();
    if (m_completed != completed) {  // the server took something: it is alive
      m_stalled = false;
      started = MPI_Wtime();
    }
    if (ready()) return true;
    const double limit = m_stalled ? stalled_grace_seconds : m_timeout;
    if (limit > 0 && MPI_Wtime() - started > limit) {
      m_stalled = true;
      return false;
    }
    pause.nap();
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
    check_mpi(MPI_Testall(2, m_pending.front().requests, &done, MPI_STATUSES_IGNORE), "MPI_Testall");
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

void mpi_sender::send(const message& m, block_buffer data) {
  pending p;
  p.header = std::make_unique<message>(m);
  check_mpi(MPI_Isend(p.header.get(), sizeof(message), MPI_BYTE, m_server, announce_tag, m_link,
                      &p.requests[0]),
            "MPI_Isend");
  if (data) {
    p.bytes = m.bytes;
    p.data = std::move(data);
    check_mpi(MPI_Isend(p.data.get(), static_cast<int>(m.bytes), MPI_BYTE, m_server, data_tag,
                        m_link, &p.requests[1]),
              "MPI_Isend");
  }
  m_pending.push_back(std::move(p));
  progress();
}

void mpi_sender::wait_stored(std::int32_t iterations, std::int32_t source) {
  message request{};
  request.kind = message_kind::sync;
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
    log::warning("the dedicated node has taken nothing for ", m_timeout, " s (", m_pending.size(),
                 " message(s) waiting: a slow store?); still waiting, so that "
                 "nothing is lost");
    m_stalled = false;
  }
}

}  // namespace sidecore::transport
