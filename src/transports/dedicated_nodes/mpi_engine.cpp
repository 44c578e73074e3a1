// Dedicated nodes: every call becomes a message (and, for a block, a pull-driven send).
#include "transports/dedicated_nodes/mpi_engine.hpp"

#include <cstring>

#include "common/error.hpp"
#include "protocol/notifications.hpp"

namespace sidecore::transports {

mpi_engine::mpi_engine(const config::model& model, MPI_Comm link, int server_rank, int source)
    : m_model(model),
      m_source(source),
      m_server_rank(server_rank),
      m_sender(link, server_rank, model.arch),
      m_phases_wanted(model.arch.schedule.uses(config::schedule_policy::phase) ||
                      model.arch.schedule.uses(config::schedule_policy::self)) {}

void mpi_engine::send_phase(std::uint32_t state) {
  m_sender.send(protocol::control_message(protocol::message_kind::phase, 0, m_source, state),
                nullptr);
}

void mpi_engine::phase(protocol::client_phase::state now) {
  if (!m_phases_wanted || m_phase == now) return;
  m_phase = now;
  send_phase(now);
}

reservation mpi_engine::reserve(std::uint64_t bytes) {
  reservation r;
  // Waiting for room: the server must pull whatever this client's phase.
  const bool blocked =
      m_phases_wanted && m_phase != protocol::client_phase::unmarked && !m_sender.has_room(bytes);
  if (blocked) send_phase(protocol::client_phase::blocked);
  r.owned = m_sender.reserve(bytes);
  if (blocked) send_phase(m_phase);
  r.address = r.owned.get();
  return r;
}

reservation mpi_engine::copy_in(const void* data, std::uint64_t bytes) {
  // Packing never waits: without room for a group at once, the block travels alone, and the
  // buffer's policy applies to its own bytes as for any block.
  if (!m_sender.packs(bytes) || !m_sender.has_packed_room(bytes))
    return engine::copy_in(data, bytes);
  reservation r;
  r.address = m_sender.reserve_packed(bytes);
  std::memcpy(r.address, data, bytes);
  return r;
}

void mpi_engine::commit(const protocol::message& m, block_buffer owned) {
  if (m_sender.packed_block_open())
    m_sender.commit_packed(m);
  else
    m_sender.send(m, std::move(owned));
}

void mpi_engine::signal(const config::event& event, std::size_t index, int iteration) {
  m_sender.send(protocol::signal_message(event, index, iteration, m_source), nullptr);
}

void mpi_engine::report_store_failures() {
  const std::string failures = m_sender.take_store_failures();
  if (!failures.empty())
    throw storage_error("the dedicated node (rank " + std::to_string(m_server_rank) +
                        "): " + failures);
}

void mpi_engine::iteration_started(int) { report_store_failures(); }

void mpi_engine::end_iteration(int iteration, bool skipped, std::uint64_t dropped_bytes) {
  m_sender.end_job_if_server_died(false, "damaris_end_iteration");
  protocol::message m =
      protocol::control_message(protocol::message_kind::end_iteration, iteration, m_source,
                                skipped ? protocol::iteration_skipped : 0);
  m.bytes = dropped_bytes;  // no data travels with an end of iteration
  m_sender.send(m, nullptr);
}

void mpi_engine::sync(int iterations) {
  // The server takes a sync request as "blocked on the writer"; the client's phase after it
  // is the one it had.
  m_sender.end_job_if_server_died(false, "damaris_sync");
  m_sender.wait_stored(iterations, m_source);
  if (m_phases_wanted && m_phase != protocol::client_phase::unmarked) send_phase(m_phase);
  report_store_failures();
}

void mpi_engine::stop(int iteration) {
  m_sender.end_job_if_server_died(false, "damaris_stop");
  m_sender.send(protocol::control_message(protocol::message_kind::stop, iteration, m_source),
                nullptr);
  m_sender.flush();
}

}  // namespace sidecore::transports
