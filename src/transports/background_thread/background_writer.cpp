// The I/O thread loop: tasks are handled in submission order, so a signal runs after the data
// written before it, and an iteration is stored once this process has ended it.
#include "transports/background_thread/background_writer.hpp"

#include <algorithm>
#include <chrono>
#include <climits>

#include "common/error.hpp"
#include "common/hot_path.hpp"
#include "common/log.hpp"
#include "common/mpi_handles.hpp"
#include "common/thread_policy.hpp"
#include "common/units.hpp"
#include "storing/actions.hpp"

namespace sidecore::transports {

background_writer::background_writer(const config::model& model, MPI_Comm writers,
                                     MPI_Comm finish_comm, int writer_index, int writer_count,
                                     int client)
    : m_model(model),
      m_writers(writers),
      m_processor(std::make_unique<storing::iteration_processor>(
          model, writers, 1, nullptr, writer_index, writer_count, finish_comm)),
      m_budget(model.arch.buffer_size),
      m_together(m_processor->stores_together()) {
  m_processor->name_clients({client});
  m_processor->watch_phases({&m_phase});
  // On the I/O thread, without the lock held there.
  m_processor->watch_buffer([this] {
    storing::buffer_use use;
    std::lock_guard<std::mutex> lock(m_mutex);
    use.used = m_reserved;
    use.peak = m_reserved_peak;
    use.capacity = m_budget;
    return use;
  });
  m_processor->publish_to(&m_stats);
  m_thread = std::thread([this] { run(); });
}

background_writer::~background_writer() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stopping = true;
  }
  m_work.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

SIDECORE_HOT_PATH block_buffer background_writer::reserve(std::uint64_t bytes) {
  if (bytes > m_budget) throw block_never_fits(bytes, m_budget, "this process's buffer");
  std::unique_lock<std::mutex> lock(m_mutex);
  if (m_reserved + bytes > m_budget) {
    if (m_model.arch.policy == config::full_buffer_policy::skip) return nullptr;
    const protocol::blocked_on_writer waiting(m_phase);
    m_work.notify_one();  // blocks may be queued without the I/O thread knowing yet
    auto fits = [&] { return m_reserved + bytes <= m_budget || !m_failure.empty(); };
    const double timeout = m_model.arch.wait_timeout_seconds;
    if (timeout > 0) {
      if (!m_progress.wait_for(lock, std::chrono::duration<double>(timeout), fits))
        throw allocation_error("waited " + std::to_string(timeout) + " s for " +
                               readable_bytes(bytes) + " of buffer (" + readable_bytes(m_reserved) +
                               " of " + readable_bytes(m_budget) +
                               " in use): the I/O thread does not keep up; raise <buffer "
                               "size=...>, raise timeout=..., or choose policy=\"skip\"");
    } else {
      m_progress.wait(lock, fits);
    }
  }
  m_reserved += bytes;
  m_reserved_peak = std::max(m_reserved_peak, m_reserved);
  lock.unlock();
  return buffer_pool::acquire(bytes);
}

void background_writer::unreserve(std::uint64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_reserved -= bytes;
  }
  m_progress.notify_all();
}

SIDECORE_HOT_PATH void background_writer::push(task t, bool wake) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_tasks.push_back(std::move(t));
    ++m_submitted;
  }
  if (wake) m_work.notify_one();
}

SIDECORE_HOT_PATH void background_writer::submit_block(storing::stored_block block) {
  task t;
  t.what = task::kind::block;
  t.block = std::move(block);
  push(std::move(t), false);
}

SIDECORE_HOT_PATH void background_writer::submit_end_iteration(int source, int iteration,
                                                               bool skipped,
                                                               std::uint64_t dropped_bytes) {
  m_client_iteration = iteration + 1;
  task t;
  t.what = task::kind::end_iteration;
  t.source = source;
  t.iteration = iteration;
  t.skipped = skipped;
  t.dropped_bytes = dropped_bytes;
  push(std::move(t), true);
}

void background_writer::submit_signal(const config::event& event, int source, int iteration) {
  task t;
  t.what = task::kind::signal;
  t.event = &event;
  t.source = source;
  t.iteration = iteration;
  push(std::move(t), true);
}

void background_writer::run() noexcept {
  // This thread shares the simulation's processors: woken by damaris_end_iteration, it must
  // not take the processor from the thread that woke it (under load that call took 3.3-3.8 ms
  // instead of 0.8-0.9 in the proxy benchmark's thread mode).
  give_wake_ups_to_the_application();
  std::unique_lock<std::mutex> lock(m_mutex);
  for (;;) {
    m_work.wait(lock, [&] { return !m_tasks.empty() || m_stopping; });
    if (m_tasks.empty()) return;
    task t = std::move(m_tasks.front());
    m_tasks.pop_front();
    lock.unlock();
    std::uint64_t stored_before = m_processor->counters().bytes_stored;
    std::string failure;
    try {
      switch (t.what) {
        case task::kind::block:
          m_processor->add_block(std::move(t.block));
          break;
        case task::kind::end_iteration: {
          bool skipped = t.skipped;
          if (m_together) {
            const step agreed = storing::agree_on_step(m_writers, t.iteration, false, skipped);
            if (!agreed.in_step)
              throw error(DAMARIS_CHANNEL_ERROR,
                          "the clients ended different iterations together (" +
                              std::to_string(t.iteration) + " here, up to " +
                              std::to_string(agreed.iteration) +
                              " elsewhere): with a store that writes collectively, every client "
                              "must end every iteration; iteration " +
                              std::to_string(t.iteration) + " is not stored");
            if (agreed.any_incomplete && !skipped)
              m_processor->note_incomplete_elsewhere(t.iteration);
          }
          m_processor->end_iteration(t.source, t.iteration, skipped, t.dropped_bytes);
          break;
        }
        case task::kind::signal:
          storing::action_registry::instance().run(*t.event, m_model.file, t.source, t.iteration);
          break;
      }
      failure = m_processor->take_failure();
    } catch (const std::exception& e) {
      failure = e.what();
    }
    std::uint64_t freed = m_processor->counters().bytes_stored - stored_before;
    lock.lock();
    m_reserved -= freed;
    ++m_handled;
    if (!failure.empty() && m_failure.empty()) m_failure = failure;
    m_progress.notify_all();
  }
}

// On the client's thread, once the I/O thread has ended: the writers' communicator is then
// this thread's alone.
void background_writer::take_part_until_all_stopped() {
  int next = m_client_iteration;
  for (;;) {
    const step agreed = storing::agree_on_step(m_writers, next - 1, true, true);
    if (agreed.all_stopped) return;
    if (!agreed.in_step || agreed.iteration < next) continue;
    // Blocks the client committed for this iteration before it stopped are stored with it.
    m_processor->end_iteration(0, agreed.iteration, true);
    next = agreed.iteration + 1;
    if (std::string failure = m_processor->take_failure(); !failure.empty()) {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (m_failure.empty()) m_failure = std::move(failure);
    }
  }
}

SIDECORE_HOT_PATH void background_writer::rethrow_failure() {
  std::string failure;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    failure.swap(m_failure);
  }
  if (!failure.empty()) throw storage_error(failure);
}

void background_writer::sync(double timeout_seconds) {
  {
    const protocol::blocked_on_writer waiting(m_phase);
    std::unique_lock<std::mutex> lock(m_mutex);
    const std::uint64_t target = m_submitted;
    m_work.notify_one();
    const auto done = [&] { return m_handled >= target; };
    if (timeout_seconds <= 0) {
      m_progress.wait(lock, done);
    } else if (!m_progress.wait_for(lock, std::chrono::duration<double>(timeout_seconds), done)) {
      throw error(DAMARIS_CHANNEL_ERROR,
                  "the I/O thread did not store what was handed over within " +
                      std::to_string(timeout_seconds) + " s (<buffer timeout=...>)");
    }
  }
  rethrow_failure();
}

void background_writer::resume() {
  if (m_thread.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stopping = false;
  }
  m_thread = std::thread([this] { run(); });
}

void background_writer::finish() {
  sync(0);
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stopping = true;
  }
  m_work.notify_all();
  if (m_thread.joinable()) m_thread.join();
  if (m_together) take_part_until_all_stopped();
  m_processor->finish();
  rethrow_failure();
  if (std::string failure = m_processor->take_failure(); !failure.empty())
    throw storage_error(failure);
}

}  // namespace sidecore::transports
