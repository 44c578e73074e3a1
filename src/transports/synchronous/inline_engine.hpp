// No dedicated resource: the stores run inside damaris_end_iteration, on the calling thread,
// collectively over the clients when a store is collective.
#pragma once

#include <mpi.h>

#include "storing/iteration_processor.hpp"
#include "storing/writers_step.hpp"
#include "transports/engine.hpp"

namespace sidecore::transports {

// When a store makes calls collective over the clients, the clients store each iteration in
// step: ending an iteration first agrees (one small allreduce) on the iteration, on whether
// any client dropped data, and on which clients have stopped. A client that stopped keeps
// taking part, with no data, in the iterations the others still end, until every client has
// stopped: a client that stops early never leaves the others waiting in a collective.
class inline_engine final : public engine {
 public:
  // writers: the clients' communicator, which the stores use; in_step: the stores need every
  // client at every iteration (store_needs).
  inline_engine(const config::model& model, MPI_Comm writers, int source, bool in_step);

  std::uint64_t capacity() const noexcept override { return m_model.arch.buffer_size; }
  const char* buffer_name() const noexcept override { return "the buffer"; }
  reservation reserve(std::uint64_t bytes) override;
  void commit(const protocol::message& m, block_buffer owned) override;
  void signal(const config::event& event, std::size_t index, int iteration) override;
  void end_iteration(int iteration, bool skipped, std::uint64_t dropped_bytes) override;
  void iteration_started(int started) override;
  void sync(int) override {}
  void stop(int iteration) override;
  void resume(int) override {}
  const protocol::live_stats* writer_stats() const noexcept override { return &m_stats; }
  const storing::iteration_processor* local_writer() const noexcept override {
    return &m_processor;
  }

 private:
  void rethrow_store_failure();
  using step = storing::writers_step;

  const config::model& m_model;
  MPI_Comm m_writers;
  int m_source;
  bool m_in_step;
  protocol::live_stats m_stats;  // before m_processor, which publishes into it
  storing::iteration_processor m_processor;
};

}  // namespace sidecore::transports
