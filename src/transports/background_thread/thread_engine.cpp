// Background thread: the client's calls become tasks of the I/O thread.
#include "transports/background_thread/thread_engine.hpp"

#include "common/hot_path.hpp"
#include "storing/iteration_processor.hpp"

namespace sidecore::transports {

thread_engine::thread_engine(const config::model& model, MPI_Comm writers, MPI_Comm finish_comm,
                             int writer_index, int writer_count, int source)
    : m_model(model),
      m_source(source),
      m_writer(model, writers, finish_comm, writer_index, writer_count, source) {}

SIDECORE_HOT_PATH reservation thread_engine::reserve(std::uint64_t bytes) {
  reservation r;
  r.owned = m_writer.reserve(bytes);
  r.address = r.owned.get();
  return r;
}

SIDECORE_HOT_PATH void thread_engine::commit(const protocol::message& m, block_buffer owned) {
  storing::stored_block b = storing::stored_block_from(m, owned.get());
  b.owned = std::move(owned);
  m_writer.submit_block(std::move(b));
}

void thread_engine::signal(const config::event& event, std::size_t, int iteration) {
  m_writer.submit_signal(event, m_source, iteration);
}

SIDECORE_HOT_PATH void thread_engine::end_iteration(int iteration, bool skipped,
                                                    std::uint64_t dropped_bytes) {
  // The I/O thread's processor has one source: this process.
  m_writer.submit_end_iteration(0, iteration, skipped, dropped_bytes);
}

// A store failure of an earlier iteration reaches the program at the next end of iteration.
SIDECORE_HOT_PATH void thread_engine::iteration_started(int) { m_writer.report_failure(); }

void thread_engine::sync(int) { m_writer.sync(m_model.arch.wait_timeout_seconds); }

void thread_engine::stop(int) {
  m_writer.client_phase().enter(protocol::client_phase::stopped);
  m_writer.finish();
}

void thread_engine::resume(int) {
  m_writer.client_phase().enter(protocol::client_phase::unmarked);
  m_writer.resume();
}

}  // namespace sidecore::transports
