// Decides when a writer may run the stores of an iteration (<architecture><schedule>,
// docs/scheduling.md): at once (drain), or after the waits of the stacked policies, in this
// order: each writer's bandwidth (rate), its slot of the iteration time (slots), a moment
// when every one of its clients computes (phase), then one of the turns shared by the writers
// of the job (rate), then the writers before it in the job's order (ordered). The iteration
// processor of every mode asks it before and after the stores of each iteration.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/model.hpp"
#include "protocol/client_phase.hpp"
#include "storing/shared_counters.hpp"

namespace sidecore::storing {

struct scheduler_counters {
  std::uint64_t stores = 0;
  double seconds_throttled = 0.0;      // slept to keep under the bandwidth
  double seconds_waiting_turn = 0.0;   // waited for one of the `writers` turns
  std::uint64_t turns_forced = 0;      // stores run without a turn after the deadline
  double seconds_waiting_slot = 0.0;   // waited for this writer's slot
  std::uint64_t slots_missed = 0;      // stores ready only after their slot had passed
  double seconds_waiting_phase = 0.0;  // waited for the clients to compute
  std::uint64_t phases_forced = 0;     // stores run outside a compute phase after the deadline
  double seconds_waiting_order = 0.0;  // waited for the writers before (ordered)
  std::uint64_t order_forced = 0;      // stores run out of order after the deadline
  std::uint64_t self_changes = 0;      // times self changed what it does
};

class scheduler {
 public:
  // writers: the communicator of the processes that store; writer_index and writer_count as
  // in iteration_processor. independent: no store makes MPI calls among the writers inside an
  // iteration (a writer that waits for a turn could otherwise keep the holder of a turn from
  // finishing); when false, a limit on writers is not applied (the writers of such a store
  // move together, as one), and writer 0 says so in the log.
  // Collective over writers when the policy limits writers, writers spans more than one
  // process and independent is true: it then creates a window for the count of turns taken
  // (and one for the progress under ordered). The destructor is then collective too, but
  // bounded: it waits for the other writers' destructors at most the buffer's timeout.
  // Thread safety: one thread at a time calls before_store/after_store.
  scheduler(const config::model& model, MPI_Comm writers, int writer_index, int writer_count,
            bool independent);
  ~scheduler();
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  // Returns when the stores of `iteration` (bytes handed to them) may run: after sleeping to
  // keep under the bandwidth, then after taking a turn. Every wait ends by the buffer's
  // timeout (300 s when it is 0); the stores then run anyway, with a warning: data is never
  // held back for ever. Throws mpi_error when the window fails.
  // completed: when the iteration became complete (the slots are measured from it); held:
  // the bytes the writer holds, received and not yet stored, this iteration's included (for
  // the trace).
  void before_store(int iteration, std::uint64_t bytes,
                    std::chrono::steady_clock::time_point completed, std::uint64_t held = 0);
  // The stores of the iteration have returned: gives the turn back, publishes the progress
  // and records the interval.
  void after_store() noexcept;
  // This writer stores nothing more (ordered: the writers after it stop waiting for it): the
  // normal end of a run. The destructor frees the windows together with the other writers
  // when every one of them ended so (the last run ended with finish()); a writer that failed
  // leaves them to MPI_Finalize, and the others do too, at the latest by the buffer's timeout.
  void finish() noexcept;

  // The clients whose phases policy="phase" follows (each written by its client; they must
  // outlive the scheduler). Without them (synchronous mode) the policy is not applied, with a
  // warning. refresh, when given, brings the phases up to date: a wait for the clients to
  // compute calls it before each look (a dedicated node learns its clients' phases from their
  // messages, which nothing else reads while a store waits; shared or process memory needs
  // none). It runs on the thread that calls before_store, and may throw.
  void watch_phases(std::vector<const protocol::client_phase*> phases,
                    std::function<void()> refresh = {}) {
    m_phases = std::move(phases);
    m_refresh_phases = std::move(refresh);
  }

  const scheduler_counters& counters() const noexcept { return m_counters; }
  // True when turns are counted across writers (rate with writers, slots or self, coordinated).
  bool limits_writers() const noexcept { return m_turns != nullptr; }
  // True when the writers' progress is shared (policy ordered, coordinated).
  bool orders_writers() const noexcept { return m_progress != nullptr; }

 private:
  using clock = std::chrono::steady_clock;
  void throttle(std::uint64_t bytes);
  void note_completion(clock::time_point completed);
  double period() const noexcept;  // between complete iterations; 0 until measured
  void wait_for_slot(clock::time_point completed, int slot, int count);
  // self: what to wait for, and why (logged when it changes).
  struct self_choice {
    enum kind_t { at_once, phase, slotted } kind = at_once;
    int slots = 0;
    bool pressed = false;  // at once because the buffer filled
    std::string why;
  };
  self_choice choose(std::uint64_t held);
  void apply_self(int iteration, clock::time_point completed, std::uint64_t bytes,
                  std::uint64_t held);
  // Whether every client computes, with time left in its phase for a store of `expected`
  // seconds; why: what the last answer was (a protocol::client_phase::state, or computing).
  bool clients_compute(double expected, std::uint32_t& why) const noexcept;
  void wait_for_phase(std::uint64_t bytes);
  void wait_for_order(int iteration);
  static constexpr std::int64_t finished_all = INT64_MAX;
  std::int64_t concurrency_limit() const noexcept;
  bool take_turn(std::int64_t limit);
  void give_turn_back();
  void publish_end() noexcept;  // ordered: progress past every iteration
  double deadline_seconds() const noexcept;

  const config::schedule_settings& m_settings;
  std::string m_file;  // of the configuration, for messages
  double m_timeout;    // the buffer's timeout; 0 for ever
  int m_writer_index;
  int m_writer_count;
  double m_buffer_bytes;                        // the buffer's size (self watches its fill)
  std::unique_ptr<shared_counters> m_turns;     // rate writers=K, slots, self: turns taken
  std::unique_ptr<shared_counters> m_progress;  // ordered: the last iteration each stored
  std::vector<std::int64_t> m_seen;             // ordered: progress read so far
  bool m_ended = false;                         // finish() came after the last store
  clock::time_point m_created;
  // Token bucket for the bandwidth: bytes that may be stored now, as of m_filled.
  double m_allowance = 0.0;
  clock::time_point m_filled;
  // The store in progress.
  bool m_holding = false;
  int m_iteration = -1;
  std::uint64_t m_bytes = 0;
  std::uint64_t m_held = 0;
  clock::time_point m_completed, m_ready, m_begin;
  // slots: the last completion seen and the recent intervals between completions.
  clock::time_point m_last_completed;
  std::vector<double> m_periods;
  clock::time_point m_slot_begin{}, m_slot_end{};
  // phase: the clients watched, the seconds a byte took to store (0 until measured).
  std::vector<const protocol::client_phase*> m_phases;
  std::function<void()> m_refresh_phases;
  double m_seconds_per_byte = 0.0;
  double m_store_seconds = 0.0;  // what a store takes, smoothed
  bool m_marks_seen = false;     // a client has marked a phase
  self_choice m_choice;
  bool m_warned_phase = false;
  std::uint32_t m_phase_reason = 0;
  clock::time_point m_phase_seen_from{}, m_phase_seen_to{};
  std::FILE* m_trace = nullptr;
  scheduler_counters m_counters;
};

}  // namespace sidecore::storing
