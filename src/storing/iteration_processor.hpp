// Indexes blocks by (variable, iteration, source, block), decides when an iteration is
// complete, hands it to the stores and the action plugins and frees its memory; runs the
// events routed to its action plugins. Shared by every mode's writer (a dedicated core or
// node, a background I/O thread, a synchronous client).
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/model.hpp"
#include "memory/buffer_pool.hpp"
#include "memory/shared_heap.hpp"
#include "plugins/action_plugin.hpp"
#include "plugins/store.hpp"
#include "protocol/live_stats.hpp"
#include "protocol/message.hpp"
#include "storing/scheduler.hpp"

namespace sidecore::storing {

// A block and the memory it lives in: a range of the shared heap, or owned process memory.
struct stored_block {
  plugins::block_view view;
  std::int32_t variable = 0;
  memory::heap_extent shared{0, 0};  // bytes == 0 when the memory is owned
  block_buffer owned;
  // Keeps alive the memory the view points into when it is shared: a spill file's mapping,
  // a packed group of blocks (dedicated nodes).
  std::shared_ptr<const void> keep_alive;
};

// The block a notification describes, its bytes at data (the memory stays the caller's to
// attach: shared range or owned buffer).
stored_block stored_block_from(const protocol::message& m, const void* data);

class active_buffer;

struct processor_counters {
  std::uint64_t iterations_stored = 0;
  std::uint64_t iterations_incomplete = 0;  // some client skipped or never ended it
  std::uint64_t blocks_stored = 0;
  std::uint64_t bytes_stored = 0;
  double seconds_in_stores = 0.0;
  // Store and action plugin calls that failed (write_iteration, finish, on_iteration,
  // on_event): reported to the clients alike.
  std::uint64_t store_failures = 0;
  // Calls of Python scripts that raised: logged and counted, not reported to the clients.
  std::uint64_t script_failures = 0;
};

// One action plugin or script of this writer over the run, for the run report.
struct action_summary {
  std::string name;            // as configured ("<paraview>" for the ParaView pipelines)
  const char* kind;            // "plugin", "script" or "paraview"
  std::uint64_t calls = 0;     // at the end of iterations
  std::uint64_t failures = 0;  // of any call (a Catalyst pipeline that failed, for "paraview")
  double seconds = 0.0;        // in the calls at the end of iterations
};

// What the writer's buffer holds, as its owner sees it (live counters, run report).
struct buffer_use {
  std::uint64_t used = 0;
  std::uint64_t peak = 0;
  std::uint64_t capacity = 0;
  std::uint64_t spilled = 0;           // cumulative
  std::uint64_t in_server_memory = 0;  // now
};

// One stored iteration, for the run report. Times are seconds on the run clock
// (common/run_clock.hpp).
struct iteration_record {
  std::int32_t iteration = 0;
  std::uint32_t blocks = 0;
  std::uint64_t bytes = 0;
  double completed = 0.0;      // ended by every client of the writer
  double store_begin = 0.0;    // its stores began (after any wait for a turn)
  double stored = 0.0;         // its stores returned
  std::uint64_t buffered = 0;  // the writer's buffer in use when its stores began
  bool incomplete = false;
  bool failed = false;  // a store call failed on it
};

class iteration_processor {
 public:
  using release_function = std::function<void(const std::vector<memory::heap_extent>&)>;

  // sources: how many clients feed this processor; each must end every iteration.
  // writer_index/writer_count default to the rank/size in writers; they differ when writers is
  // MPI_COMM_SELF but the process is one of several (background threads without
  // MPI_THREAD_MULTIPLE).
  // finish_comm: see plugins::store_context::finish_comm.
  // The action plugins are created after the stores, with the same communicators, and the
  // events routed to them are routed (action_registry::route) to this processor until it is
  // destroyed: keep at most one processor of a model alive per process.
  iteration_processor(const config::model& model, MPI_Comm writers, int sources,
                      release_function release, int writer_index = -1, int writer_count = -1,
                      MPI_Comm finish_comm = MPI_COMM_NULL);
  ~iteration_processor();

  // The client index of each source (identity when not named): what the stores are told of
  // the clients that left an iteration out (plugins::iteration_data::clients_left_out).
  void name_clients(std::vector<int> clients);

  void add_block(stored_block block);
  // A source ended an iteration. Complete iterations are stored, in order, before returning,
  // unless storing is deferred (then they wait for store_next()).
  // dropped_bytes: what the source dropped of it (policy="skip"), counted in the live values.
  void end_iteration(int source, int iteration, bool skipped, std::uint64_t dropped_bytes = 0);
  // Writers that store in step: a client of another writer left `iteration` out, so it is
  // stored as incomplete here too (before this writer's source ends it).
  void note_incomplete_elsewhere(int iteration);
  // A source stopped (damaris_stop) before ending `iteration`: it ends nothing more in this
  // run, so that iteration and every later one complete without it, marked incomplete, as
  // soon as the other sources end them; complete iterations are stored as by end_iteration.
  // Until finish(), which makes every source a running one again (a next run).
  void source_stopped(int source, int iteration);
  // Dedicated cores defer storing, to drain their clients and move data out of the shared
  // buffer between two stores.
  void defer_storing(bool defer) noexcept { m_defer = defer; }
  // Stores the oldest complete iteration; false when none is waiting.
  bool store_next();
  std::size_t waiting() const noexcept { return m_ready.size(); }
  // Moves blocks of complete iterations out of the shared buffer (newest first) until `wanted`
  // bytes are freed or nothing more can move.
  std::uint64_t evacuate(active_buffer& target, std::uint64_t wanted);
  // When writers wait for space that only the oldest open iteration's completion would free,
  // and that iteration still lacks blocks, moves the blocks of younger iterations out of the
  // shared buffer (into server memory) so that the lagging clients can write; when none is
  // left there, the open iteration's own blocks (the free space is then in pieces too small).
  // Returns bytes freed.
  std::uint64_t rescue(active_buffer& target);
  // No more input: stores what is left (iterations not ended by every source), marked
  // incomplete in the log, then lets every store finish. Collective over writers when a
  // collective store is used (and over finish_comm when it is set).
  void finish();

  const processor_counters& counters() const noexcept { return m_counters; }
  // Live values (transport/live_stats.hpp), as of the last completed iteration or store; the
  // buffer's fields from the function given to watch_buffer (else the bytes held here).
  const protocol::live_values& live() const noexcept { return m_live; }
  // Where live values go after each completed iteration and store (nullptr: nowhere).
  // Publishes at once, so that readers see the buffer's size before anything completes: give
  // watch_buffer first.
  void publish_to(protocol::live_stats* target) {
    m_publish_to = target;
    if (target) refresh_live();
  }
  // How to learn the state of the buffer the blocks come from (called on the writer's thread,
  // once per completed iteration and per store).
  void watch_buffer(std::function<buffer_use()> use) { m_buffer_use = std::move(use); }
  // Brings the live values up to date and publishes them; logs them every
  // SIDECORE_STATS_INTERVAL seconds. Called by the processor itself; owners call it when the
  // buffer changed without an iteration completing (blocks moved, say).
  // now: the time if the caller just read the clock (else it is read when needed).
  void refresh_live(std::chrono::steady_clock::time_point now = {});
  // One record per stored iteration, in order (the first run_record_limit).
  const std::vector<iteration_record>& records() const noexcept { return m_records; }
  // Every action plugin and script this writer runs, with its calls, failures and time.
  std::vector<action_summary> action_summaries() const;
  static constexpr std::size_t run_record_limit = 1000000;
  // When the stores of each iteration may run (<architecture><schedule>).
  const scheduler& store_scheduler() const noexcept { return *m_scheduler; }
  // The phases of this processor's clients, for <schedule policy="phase">, and how to bring
  // them up to date while a store waits (see scheduler::watch_phases).
  void watch_phases(std::vector<const protocol::client_phase*> phases,
                    std::function<void()> refresh = {}) {
    m_scheduler->watch_phases(std::move(phases), std::move(refresh));
  }
  // True when the writers call each other at every iteration (a collective store, block
  // metadata exchanged, time-invariant variables agreed, action plugins): they must then
  // store the same iterations, each one together, a writer whose clients stopped included.
  bool stores_together() const noexcept { return m_together; }
  // Writers that store together and whose clients may stop at different times (dedicated
  // cores and nodes): before each store the writers agree on it (collective over writers),
  // and take_part_until_all_stopped() lets a writer whose clients all stopped store, without
  // data, each iteration the others still store. No effect unless stores_together().
  void agree_before_storing(bool on) noexcept { m_agree = on && m_together; }
  // Every client of this writer stopped and its complete iterations are stored: until every
  // writer is here, stores each iteration the others store, with no data and marked
  // incomplete. Then stops agreeing (finish() stores what is left without it). Collective over
  // writers when agreeing.
  void take_part_until_all_stopped();
  // Iterations stored so far (they are stored in order, from 0).
  int stored_iterations() const noexcept { return m_stored_iterations; }
  // The oldest iteration not yet complete.
  int open_iteration() const noexcept { return m_next_iteration; }
  // The first store failure since the last call ("" if none), and forgets it.
  std::string take_failure();
  // The same, without forgetting it.
  const std::string& pending_failure() const noexcept { return m_failure; }

 private:
  struct pending_iteration {
    std::vector<stored_block> blocks;
    std::vector<char> ended;     // per source
    std::vector<char> left_out;  // per source: dropped data, stopped before ending it, or never
                                 // ended it
    int ended_count = 0;
    bool skipped = false;  // some source left it out, here or (in step) at another writer
    std::chrono::steady_clock::time_point completed{};  // when the last source ended it
  };
  void store_iteration(int iteration, pending_iteration& pending);
  // Gives `pending` (of `iteration`) its per-source ends, the stopped sources' already there.
  void open_ends(int iteration, pending_iteration& pending);
  // Every source that has not ended `pending` (the run is over for it) left it out.
  void leave_out_unended(int iteration, pending_iteration& pending);
  // The client indices of the sources that left `pending` out, in increasing order.
  std::vector<std::int32_t> clients_left_out(const pending_iteration& pending) const;
  // Moves the iterations that every source ended, in order, to m_ready; true if any.
  bool complete_in_order();
  void log_live() const;
  // The blocks of the given variables (model indices, in model order) in an iteration.
  plugins::iteration_data select(int iteration, const pending_iteration& pending,
                                 const std::vector<std::size_t>& variables) const;
  void run_actions(int iteration, const pending_iteration& pending);
  // An event routed to one of the action plugins fired here.
  void run_event(const config::event& event, int source, int iteration) noexcept;
  void note_failure(const std::string& message);
  // A failure of action `a`: a script's is logged (its first traceback in full, later ones in
  // a line) and counted apart; a plugin's as note_failure.
  void note_action_failure(std::size_t a, const std::string& when, const std::string& what);

  const config::model& m_model;
  int m_sources;
  std::vector<int> m_client_of_source;
  release_function m_release;
  std::vector<std::unique_ptr<plugins::store>> m_stores;  // indexed like model.stores (may be null)
  std::vector<std::unique_ptr<plugins::action>> m_actions;  // indexed like model.action_plugins
  struct action_tally {
    std::uint64_t calls = 0;     // of on_iteration
    std::uint64_t failures = 0;  // of any call
    double seconds = 0.0;        // in on_iteration
    double first = 0.0;          // of which the first call (imports, page faults...)
  };
  std::vector<action_tally> m_tallies;  // indexed like m_actions
  std::unique_ptr<scheduler> m_scheduler;
  std::vector<const config::event*> m_routed;  // events routed here (unrouted when destroyed)
  std::map<int, pending_iteration> m_pending;
  std::deque<std::pair<int, pending_iteration>> m_ready;  // complete, not yet stored
  std::uint64_t m_held_bytes = 0;  // of the blocks received and not yet stored
  // Per source: the iteration before which it stopped (INT_MAX while it runs).
  std::vector<int> m_stopped_from;
  bool m_together = false;  // see stores_together()
  bool m_agree = false;     // see agree_before_storing()
  MPI_Comm m_writers;
  int m_next_iteration = 0;
  int m_stored_iterations = 0;
  bool m_defer = false;
  processor_counters m_counters;
  std::string m_failure;
  protocol::live_values m_live;
  protocol::live_stats* m_publish_to = nullptr;
  std::function<buffer_use()> m_buffer_use;
  // store_iteration's scratch: each variable's blocks among the iteration's, sorted.
  std::vector<std::pair<std::size_t, std::size_t>> m_variable_ranges;
  std::uint64_t m_peak_held = 0;
  double m_recent_bytes = 0.0, m_recent_seconds = 0.0;  // moving averages over stores
  std::vector<iteration_record> m_records;
  double m_log_interval = 0.0;  // seconds between live log lines (0: none)
  std::chrono::steady_clock::time_point m_next_log{};
  std::chrono::steady_clock::time_point m_last_store_end{};
};

}  // namespace sidecore::storing
