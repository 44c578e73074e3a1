// Non-blocking sends kept in submission order; memory returns to the budget as sends complete.
#include "transport/mpi_sender.hpp"

#include <climits>
#include <string>
#include <thread>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/units.hpp"
#include "common/mpi_handles.hpp"

namespace sidecore::transport {

mpi_sender::mpi_sender(MPI_Comm link, int server_rank, const config::architecture& arch)
    : m_link(link),
      m_server(server_rank),
      m_budget(arch.buffer_size),
      m_policy(arch.policy),
      m_timeout(arch.wait_timeout_seconds) {}

mpi_sender::~mpi_sender() {
  // Normally flushed by stop(); if not (error path), give the server a chance, then let go.
  try {
    if (!m_pending.empty()) flush();
  } catch (...) {
  }
}

bool mpi_sender::deadline_passed(double started) const {
  return m_timeout > 0 && MPI_Wtime() - started > m_timeout;
}

void mpi_sender::progress() {
  while (!m_pending.empty()) {
    int done = 0;
    check_mpi(MPI_Testall(2, m_pending.front().requests, &done, MPI_STATUSES_IGNORE), "MPI_Testall");
    if (!done) return;
    m_in_use -= m_pending.front().bytes;
    m_pending.pop_front();
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
    const double started = MPI_Wtime();
    int rounds = 0;
    while (m_in_use + bytes > m_budget) {
      if (deadline_passed(started))
        throw allocation_error("waited " + std::to_string(m_timeout) + " s for " + readable_bytes(bytes) +
                               " of buffer (" + readable_bytes(m_in_use) + " of " + readable_bytes(m_budget) +
                               " waiting for the dedicated node): the server does not keep up; "
                               "raise <buffer size=...>, raise timeout=..., or choose "
                               "policy=\"skip\"");
      if (++rounds > 100) std::this_thread::sleep_for(std::chrono::microseconds(20));
      progress();
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

void mpi_sender::wait_stored(std::int32_t iterations) {
  message request{};
  request.kind = message_kind::sync;
  request.iteration = iterations;
  send(request, nullptr);
  std::int32_t reply = -1;
  MPI_Request receive = MPI_REQUEST_NULL;
  check_mpi(MPI_Irecv(&reply, 1, MPI_INT32_T, m_server, sync_tag, m_link, &receive), "MPI_Irecv");
  const double started = MPI_Wtime();
  for (int rounds = 0;; ++rounds) {
    int done = 0;
    check_mpi(MPI_Test(&receive, &done, MPI_STATUS_IGNORE), "MPI_Test");
    // A reply carries the iterations stored when it was sent: one that answers an earlier
    // sync that timed out may say fewer than this one waits for; wait for the next.
    if (done && reply >= iterations) break;
    if (done)
      check_mpi(MPI_Irecv(&reply, 1, MPI_INT32_T, m_server, sync_tag, m_link, &receive),
                "MPI_Irecv");
    progress();
    if (deadline_passed(started)) {
      MPI_Cancel(&receive);
      MPI_Request_free(&receive);
      throw error(DAMARIS_CHANNEL_ERROR, "the dedicated node did not store iteration " +
                                             std::to_string(iterations - 1) + " within " +
                                             std::to_string(m_timeout) + " s");
    }
    if (rounds > 100) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void mpi_sender::flush() {
  // Everything handed over must reach the server, however long its stores take: past the
  // buffer's timeout this says so once and keeps waiting (a server that died ends the job
  // through MPI).
  const double started = MPI_Wtime();
  bool warned = false;
  for (int rounds = 0; !m_pending.empty(); ++rounds) {
    progress();
    if (m_pending.empty()) break;
    if (!warned && deadline_passed(started)) {
      warned = true;
      log::warning("the dedicated node has not taken ", m_pending.size(), " message(s) after ",
                   m_timeout, " s (a slow store?); still waiting, so that nothing is lost");
    }
    if (rounds > 100) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace sidecore::transport
