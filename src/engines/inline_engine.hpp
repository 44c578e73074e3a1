// No dedicated resource: the stores run inside damaris_end_iteration, on the calling thread,
// collectively over the clients when a store is collective.
#pragma once

#include <mpi.h>

#include "engines/engine.hpp"
#include "server/iteration_processor.hpp"

namespace sidecore::engines {

class inline_engine final : public engine {
 public:
  // writers: the clients' communicator, which the stores use.
  inline_engine(const config::model& model, MPI_Comm writers, int source);

  std::uint64_t capacity() const noexcept override { return m_model.arch.buffer_size; }
  const char* buffer_name() const noexcept override { return "the buffer"; }
  reservation reserve(std::uint64_t bytes) override;
  void commit(const transport::message& m, block_buffer owned) override;
  void signal(const config::event& event, std::size_t index, int iteration) override;
  void end_iteration(int iteration, bool skipped) override;
  void iteration_started(int started) override;
  void sync(int) override {}
  void stop(int iteration) override;
  void resume(int) override {}

 private:
  void rethrow_store_failure();

  const config::model& m_model;
  int m_source;
  server::iteration_processor m_processor;
};

}  // namespace sidecore::engines
