// Dedicated nodes: blocks wait in this process's memory until the server node pulls them
// over MPI (server-directed transfers); control messages follow the same path.
#pragma once

#include <mpi.h>

#include "transports/dedicated_nodes/mpi_sender.hpp"
#include "transports/engine.hpp"

namespace sidecore::transports {

class mpi_engine final : public engine {
 public:
  // link: the communicator shared with the server; server_rank: its rank there; source: this
  // client's index among all clients.
  mpi_engine(const config::model& model, MPI_Comm link, int server_rank, int source);

  std::uint64_t capacity() const noexcept override { return m_model.arch.buffer_size; }
  const char* buffer_name() const noexcept override { return "the buffer"; }
  reservation reserve(std::uint64_t bytes) override;
  reservation copy_in(const void* data, std::uint64_t bytes) override;
  void commit(const protocol::message& m, block_buffer owned) override;
  void signal(const config::event& event, std::size_t index, int iteration) override;
  void end_iteration(int iteration, bool skipped, std::uint64_t dropped_bytes) override;
  // Reports the store failures the server sent since the last report (storage_error).
  void iteration_started(int started) override;
  void sync(int iterations) override;
  void stop(int iteration) override;
  void resume(int) override {}
  // Sent to the node server when its schedule follows phases (phase, self); else nothing.
  void phase(protocol::client_phase::state now) override;

 private:
  void send_phase(std::uint32_t state);
  // Throws storage_error once for the store failures the server reported since the last time.
  void report_store_failures();

  const config::model& m_model;
  int m_source;
  int m_server_rank;
  mpi_sender m_sender;
  // The server pulls blocks and stores by this client's phases: marks are sent.
  bool m_phases_wanted;
  std::uint32_t m_phase = protocol::client_phase::unmarked;  // the last marked
};

}  // namespace sidecore::transports
