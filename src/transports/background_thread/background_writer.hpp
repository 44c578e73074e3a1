// Thread mode: a persistent I/O thread per process runs the stores and remote events of
// completed iterations while the simulation computes. Blocks are copied into process memory
// (bounded by the XML buffer size) so the caller may reuse its buffer at once.
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "config/model.hpp"
#include "memory/buffer_pool.hpp"
#include "protocol/client_phase.hpp"
#include "storing/iteration_processor.hpp"
#include "storing/writers_step.hpp"

namespace sidecore::transports {

class background_writer {
 public:
  // writers: communicator the stores use from the I/O thread (MPI_COMM_SELF unless MPI
  // provides MPI_THREAD_MULTIPLE); finish_comm: all writers, for the stores' finish() on the
  // calling thread when writers is MPI_COMM_SELF (else MPI_COMM_NULL); writer_index/count:
  // this process among all writers.
  // client: the index of the one client whose blocks it stores.
  background_writer(const config::model& model, MPI_Comm writers, MPI_Comm finish_comm,
                    int writer_index, int writer_count, int client);
  ~background_writer();
  background_writer(const background_writer&) = delete;
  background_writer& operator=(const background_writer&) = delete;

  // Memory for a block within the buffer budget. Under policy="wait" waits for the I/O thread
  // to free memory (allocation_error after the timeout); under "skip" returns nullptr when
  // the budget is exhausted. Requests larger than the whole budget throw at once.
  block_buffer reserve(std::uint64_t bytes);
  // Returns budget reserved for a block that will not be submitted (dropped).
  void unreserve(std::uint64_t bytes);

  void submit_block(storing::stored_block block);
  void submit_end_iteration(int source, int iteration, bool skipped, std::uint64_t dropped_bytes);
  void submit_signal(const config::event& event, int source, int iteration);

  // Waits until everything submitted so far has been handled (stored iterations are on disk).
  // Rethrows the first store failure, if any.
  // timeout_seconds <= 0 waits as long as it takes; otherwise DAMARIS_CHANNEL_ERROR after it.
  void sync(double timeout_seconds);
  // Stores what is left and joins the thread. Rethrows the first store failure.
  void finish();
  // Throws, once, the first store failure since the last report; returns at once otherwise.
  void report_failure() { rethrow_failure(); }
  // What the client of this process does (<schedule policy="phase">): it writes, the I/O
  // thread's scheduler reads.
  protocol::client_phase& client_phase() noexcept { return m_phase; }
  // The I/O thread's live counters (published after each completed iteration and store).
  const protocol::live_stats& stats() const noexcept { return m_stats; }
  // Read only while the I/O thread is stopped (after finish()).
  const storing::iteration_processor& processor() const noexcept { return *m_processor; }
  // After finish(): starts the I/O thread again (a second damaris_start after damaris_stop).
  void resume();

 private:
  struct task {
    enum class kind { block, end_iteration, signal } what = kind::block;
    storing::stored_block block;           // block
    int source = 0;                        // end_iteration, signal
    int iteration = 0;                     // end_iteration, signal
    bool skipped = false;                  // end_iteration
    std::uint64_t dropped_bytes = 0;       // end_iteration
    const config::event* event = nullptr;  // signal
  };

  // Writers that store together (storing::iteration_processor::stores_together) agree on each
  // iteration before storing it, as synchronous clients do (writers_step.hpp).
  using step = storing::writers_step;
  // The client stopped: until every writer's client has, this one stores, without data, each
  // iteration the others store, so that their collective stores are not left waiting for it.
  void take_part_until_all_stopped();
  void run() noexcept;
  // wake: whether the I/O thread must look now. Blocks do not wake it (one futex call per block
  // would cost more than a small copy): it takes them with the iteration's end.
  void push(task t, bool wake);
  void rethrow_failure();

  const config::model& m_model;
  MPI_Comm m_writers;
  protocol::client_phase m_phase;
  protocol::live_stats m_stats;  // before m_processor, which publishes into it
  std::unique_ptr<storing::iteration_processor> m_processor;
  std::mutex m_mutex;
  std::condition_variable m_work;      // the I/O thread waits for tasks
  std::condition_variable m_progress;  // writers wait for memory or for sync
  std::deque<task> m_tasks;
  std::uint64_t m_budget = 0;
  std::uint64_t m_reserved = 0;  // bytes held by blocks not yet stored
  std::uint64_t m_reserved_peak = 0;
  std::uint64_t m_submitted = 0;
  std::uint64_t m_handled = 0;
  bool m_stopping = false;
  bool m_together = false;     // the writers store each iteration together
  int m_client_iteration = 0;  // the first iteration the client has not ended (its thread's)
  std::string m_failure;
  std::thread m_thread;
};

}  // namespace sidecore::transports
