// A background I/O thread per process: blocks are copied into process memory and stored by
// the thread while the simulation computes.
#pragma once

#include <mpi.h>

#include "common/hot_path.hpp"
#include "transports/background_thread/background_writer.hpp"
#include "transports/engine.hpp"

namespace sidecore::transports {

class thread_engine final : public engine {
 public:
  // writers, finish_comm, writer_index, writer_count: as background_writer takes them;
  // source: this client's index among all clients (events name it).
  thread_engine(const config::model& model, MPI_Comm writers, MPI_Comm finish_comm,
                int writer_index, int writer_count, int source);

  SIDECORE_HOT_PATH std::uint64_t capacity() const noexcept override {
    return m_model.arch.buffer_size;
  }
  const char* buffer_name() const noexcept override { return "the buffer"; }
  reservation reserve(std::uint64_t bytes) override;
  void commit(const protocol::message& m, block_buffer owned) override;
  void signal(const config::event& event, std::size_t index, int iteration) override;
  void end_iteration(int iteration, bool skipped, std::uint64_t dropped_bytes) override;
  void iteration_started(int started) override;
  void sync(int iterations) override;
  void stop(int iteration) override;
  void resume(int iteration) override;
  void phase(protocol::client_phase::state now) override { m_writer.client_phase().enter(now); }
  const protocol::live_stats* writer_stats() const noexcept override { return &m_writer.stats(); }
  const storing::iteration_processor* local_writer() const noexcept override {
    return &m_writer.processor();
  }

 private:
  const config::model& m_model;
  int m_source;
  background_writer m_writer;
};

}  // namespace sidecore::transports
