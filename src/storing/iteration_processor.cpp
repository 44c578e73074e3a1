// Stores run in the order of <storage>, each receiving every variable assigned to it; memory
// of an iteration is released as soon as the last store has returned.
#include "storing/iteration_processor.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <numeric>
#include <string>
#include <utility>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/hot_path.hpp"
#include "common/log.hpp"
#include "common/run_clock.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "storing/actions.hpp"
#include "storing/active_buffer.hpp"
#include "storing/writers_step.hpp"

namespace sidecore::storing {
namespace {

std::uint64_t nanoseconds(double seconds) {
  return seconds > 0.0 ? static_cast<std::uint64_t>(seconds * 1e9) : 0;
}

std::string milliseconds(std::uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", static_cast<double>(ns) * 1e-6);
  return text;
}

}  // namespace

SIDECORE_HOT_PATH stored_block stored_block_from(const protocol::message& m, const void* data) {
  stored_block b;
  b.variable = m.variable;
  b.view.source = m.source;
  b.view.block_id = m.block;
  b.view.iteration = m.iteration;
  b.view.data = data;
  b.view.bytes = m.bytes;
  b.view.dims.assign(m.dims, m.dims + m.ndims);
  if (m.has_global) b.view.global_dims.assign(m.global_dims, m.global_dims + m.ndims);
  b.view.position.assign(m.position, m.position + m.ndims);
  return b;
}

iteration_processor::iteration_processor(const config::model& model, MPI_Comm writers, int sources,
                                         release_function release, int writer_index,
                                         int writer_count, MPI_Comm finish_comm)
    : m_model(model),
      m_sources(sources),
      m_client_of_source(static_cast<std::size_t>(std::max(sources, 0))),
      m_release(std::move(release)),
      m_stopped_from(static_cast<std::size_t>(std::max(sources, 0)), INT_MAX),
      m_writers(writers) {
  int rank = 0, size = 1;
  MPI_Comm_rank(writers, &rank);
  MPI_Comm_size(writers, &size);
  std::iota(m_client_of_source.begin(), m_client_of_source.end(), 0);
  const int writers_size = size;  // those the stores can call (writer_count may say more)
  if (writer_index >= 0) rank = writer_index;
  if (writer_count > 0) size = writer_count;
  // A schedule that has the writers take turns (rate writers=K, slots, self) or follow an
  // order needs them to store each iteration without calling each other: stores that only
  // exchange metadata among writers (a master file, the XDMF) do it at the end instead.
  // Collective writes and time-invariant variables (on which the writers agree) cannot wait.
  const config::schedule_settings& schedule = model.arch.schedule;
  const bool coordinated = size > 1 && ((schedule.uses(config::schedule_policy::rate) &&
                                         schedule.writers > 0 && schedule.writers < size) ||
                                        schedule.uses(config::schedule_policy::ordered) ||
                                        schedule.uses(config::schedule_policy::slots) ||
                                        schedule.uses(config::schedule_policy::self));
  auto deferrable = [&](std::size_t s) {
    const plugins::store_needs needs = plugins::needs_of(model, model.stores[s]);
    if (!coordinated || needs.collective_writes || !needs.writers_exchange) return false;
    return std::none_of(model.variables.begin(), model.variables.end(),
                        [s](const config::variable& v) {
                          return v.store_index == s && v.enabled && !v.time_varying;
                        });
  };
  m_stores.resize(model.stores.size());
  for (std::size_t s = 0; s < model.stores.size(); ++s) {
    bool used =
        std::any_of(model.variables.begin(), model.variables.end(),
                    [s](const config::variable& v) { return v.store_index == s && v.enabled; });
    if (!used) continue;
    plugins::store_context context;
    context.model = &model;
    context.settings = &model.stores[s];
    context.comm = writers;
    context.writer_index = rank;
    context.writer_count = size;
    context.finish_comm = finish_comm;
    context.defer_exchange = deferrable(s);
    m_stores[s] = plugins::make_store(context);
  }
  m_actions.reserve(model.action_plugins.size());
  for (const config::action_plugin& settings : model.action_plugins) {
    plugins::action_context context;
    context.model = &model;
    context.settings = &settings;
    context.comm = writers;
    context.writer_index = rank;
    context.writer_count = size;
    context.finish_comm = finish_comm;
    m_actions.push_back(plugins::make_action(context));
  }
  m_tallies.resize(m_actions.size());
  // Turns among writers are only safe when no store calls the writers together inside an
  // iteration. The HDF5 store also agrees with the other writers on time-invariant variables.
  bool independent = true;
  for (std::size_t s = 0; s < m_stores.size(); ++s) {
    if (!m_stores[s]) continue;
    const plugins::store_needs needs = plugins::needs_of(model, model.stores[s]);
    independent =
        independent && !needs.collective_writes && (!needs.writers_exchange || deferrable(s));
    for (const config::variable& v : model.variables)
      if (v.store_index == s && v.enabled && !v.time_varying) independent = false;
  }
  m_together = writers_size > 1 && (!independent || !m_actions.empty());
  m_scheduler = std::make_unique<scheduler>(model, writers, rank, size, independent);
  m_live.buffer_capacity = model.arch.buffer_size;
  m_log_interval = environment::stats_interval_seconds();
  if (m_log_interval > 0)
    m_next_log = std::chrono::steady_clock::now() +
                 std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                     std::chrono::duration<double>(m_log_interval));
  // Last, once nothing can throw: the events of the plugins come here.
  for (const config::event& event : model.events) {
    if (event.plugin == config::event::no_plugin) continue;
    action_registry::instance().route(&event, this,
                                      [this](const config::event& e, int source, int iteration) {
                                        run_event(e, source, iteration);
                                      });
    m_routed.push_back(&event);
  }
}

iteration_processor::~iteration_processor() {
  for (const config::event* event : m_routed) action_registry::instance().unroute(event, this);
  // Memory of anything never stored goes back to the heap so that clients do not wait on it.
  std::vector<memory::heap_extent> ranges;
  auto collect = [&ranges](const pending_iteration& pending) {
    for (const auto& b : pending.blocks)
      if (b.shared.bytes) ranges.push_back(b.shared);
  };
  for (const auto& entry : m_pending) collect(entry.second);
  for (const auto& entry : m_ready) collect(entry.second);
  if (!ranges.empty() && m_release) {
    try {
      m_release(ranges);
    } catch (...) {
    }
  }
}

void iteration_processor::add_block(stored_block block) {
  pending_iteration& pending = m_pending[block.view.iteration];
  m_held_bytes += block.view.bytes;
  m_live.bytes_received += block.view.bytes;
  ++m_live.blocks_received;
  pending.blocks.push_back(std::move(block));
}

void iteration_processor::name_clients(std::vector<int> clients) {
  if (clients.size() == m_client_of_source.size()) m_client_of_source = std::move(clients);
}

std::vector<std::int32_t> iteration_processor::clients_left_out(
    const pending_iteration& pending) const {
  std::vector<std::int32_t> clients;
  for (std::size_t s = 0; s < pending.left_out.size() && s < m_client_of_source.size(); ++s)
    if (pending.left_out[s]) clients.push_back(m_client_of_source[s]);
  std::sort(clients.begin(), clients.end());
  return clients;
}

void iteration_processor::leave_out_unended(int iteration, pending_iteration& pending) {
  open_ends(iteration, pending);
  for (std::size_t s = 0; s < pending.ended.size(); ++s)
    if (!pending.ended[s]) pending.left_out[s] = 1;
}

void iteration_processor::note_incomplete_elsewhere(int iteration) {
  pending_iteration& pending = m_pending[iteration];
  open_ends(iteration, pending);
  pending.skipped = true;
}

void iteration_processor::end_iteration(int source, int iteration, bool skipped,
                                        std::uint64_t dropped_bytes) {
  m_live.bytes_skipped += dropped_bytes;
  // Before this end may store: what the iteration held at its most (synchronous mode).
  m_peak_held = std::max(m_peak_held, m_held_bytes);
  pending_iteration& pending = m_pending[iteration];
  open_ends(iteration, pending);
  if (source < 0 || source >= m_sources || pending.ended[source]) {
    log::error("unexpected end of iteration ", iteration, " from source ", source, " (ignored)");
    return;
  }
  pending.ended[source] = 1;
  ++pending.ended_count;
  pending.skipped = pending.skipped || skipped;
  if (skipped) pending.left_out[static_cast<std::size_t>(source)] = 1;
  const bool completed = complete_in_order();
  bool stored = false;
  if (!m_defer)
    while (store_next()) stored = true;
  // Published when an iteration completes (and after each store, which did it already), not
  // at every client's end.
  if (!stored && (completed || dropped_bytes)) refresh_live();
}

void iteration_processor::open_ends(int iteration, pending_iteration& pending) {
  if (!pending.ended.empty()) return;
  pending.ended.assign(static_cast<std::size_t>(m_sources), 0);
  pending.left_out.assign(static_cast<std::size_t>(m_sources), 0);
  for (int s = 0; s < m_sources; ++s) {
    if (m_stopped_from[static_cast<std::size_t>(s)] > iteration) continue;
    pending.ended[static_cast<std::size_t>(s)] = 1;
    pending.left_out[static_cast<std::size_t>(s)] = 1;
    ++pending.ended_count;
    pending.skipped = true;
  }
}

bool iteration_processor::complete_in_order() {
  bool completed = false;
  // Iterations complete in order: each source ends its iterations in order.
  for (;;) {
    auto it = m_pending.find(m_next_iteration);
    if (it == m_pending.end() || it->second.ended_count < m_sources) break;
    it->second.completed = std::chrono::steady_clock::now();
    m_ready.emplace_back(it->first, std::move(it->second));
    m_pending.erase(it);
    ++m_next_iteration;
    ++m_live.iterations_complete;
    completed = true;
  }
  return completed;
}

void iteration_processor::source_stopped(int source, int iteration) {
  if (source < 0 || source >= m_sources) return;
  int& from = m_stopped_from[static_cast<std::size_t>(source)];
  if (from <= iteration) return;
  from = iteration;
  for (auto& [number, pending] : m_pending) {
    if (number < iteration) continue;
    if (pending.ended.empty()) {
      open_ends(number, pending);  // marks this source too
      continue;
    }
    if (pending.ended[static_cast<std::size_t>(source)]) continue;
    pending.ended[static_cast<std::size_t>(source)] = 1;
    pending.left_out[static_cast<std::size_t>(source)] = 1;
    ++pending.ended_count;
    pending.skipped = true;
  }
  const bool completed = complete_in_order();
  bool stored = false;
  if (!m_defer)
    while (store_next()) stored = true;
  if (completed && !stored) refresh_live();
}

void iteration_processor::take_part_until_all_stopped() {
  if (!m_agree) return;
  for (;;) {
    const writers_step step = agree_on_step(m_writers, 0, true, true);
    if (step.all_stopped) break;
    if (!step.in_step || step.iteration < m_next_iteration)
      continue;  // disagreeing writers store nothing
    // The others store step.iteration: so does this writer, with what it has of it (blocks
    // a client committed before it stopped), marked incomplete.
    pending_iteration pending;
    auto it = m_pending.find(step.iteration);
    if (it != m_pending.end()) {
      pending = std::move(it->second);
      m_pending.erase(it);
    }
    // Every source of this writer stopped: those that had not ended it left it out.
    leave_out_unended(step.iteration, pending);
    pending.skipped = true;
    pending.completed = std::chrono::steady_clock::now();
    m_agree = false;  // agreed already
    store_iteration(step.iteration, pending);
    m_agree = true;
    m_next_iteration = step.iteration + 1;
    m_stored_iterations = m_next_iteration;
  }
  m_agree = false;
}

void iteration_processor::refresh_live(std::chrono::steady_clock::time_point now) {
  m_peak_held = std::max(m_peak_held, m_held_bytes);
  m_live.bytes_pending = m_held_bytes;
  if (m_buffer_use) {
    const buffer_use use = m_buffer_use();
    m_live.bytes_buffered = use.used;
    m_live.buffer_peak = std::max(use.peak, use.used);
    m_live.buffer_capacity = use.capacity;
    m_live.bytes_spilled = use.spilled;
    m_live.bytes_in_server_memory = use.in_server_memory;
  } else {
    m_live.bytes_buffered = m_held_bytes;
    m_live.buffer_peak = m_peak_held;
  }
  m_live.bytes_dropped = m_live.bytes_skipped + m_live.bytes_failed;
  m_live.store_failures = m_counters.store_failures;
  m_live.debt_ns =
      m_live.throughput_bps
          ? static_cast<std::uint64_t>(static_cast<double>(m_live.bytes_pending) /
                                       static_cast<double>(m_live.throughput_bps) * 1e9)
          : 0;
  if (m_publish_to) m_publish_to->publish(m_live);
  if (m_log_interval > 0) {
    if (now == std::chrono::steady_clock::time_point{}) now = std::chrono::steady_clock::now();
    if (now >= m_next_log) {
      m_next_log = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(m_log_interval));
      log_live();
    }
  }
}

void iteration_processor::log_live() const {
  const protocol::live_values& v = m_live;
  const std::uint64_t mean = v.latency_count ? v.latency_sum_ns / v.latency_count : 0;
  log::info("stats: received ", readable_bytes(v.bytes_received), " (", v.blocks_received,
            " blocks), written ", readable_bytes(v.bytes_written), ", dropped ",
            readable_bytes(v.bytes_dropped), ", spilled ", readable_bytes(v.bytes_spilled),
            "; buffer ", readable_bytes(v.bytes_buffered), " now, peak ",
            readable_bytes(v.buffer_peak), " of ", readable_bytes(v.buffer_capacity), "; ",
            v.iterations_stored, " iterations stored, latency ms min/mean/max/last ",
            milliseconds(v.latency_min_ns), "/", milliseconds(mean), "/",
            milliseconds(v.latency_max_ns), "/", milliseconds(v.latency_last_ns), "; pending ",
            readable_bytes(v.bytes_pending), ", I/O debt ", milliseconds(v.debt_ns), " ms at ",
            readable_bytes(v.throughput_bps), "/s");
}

bool iteration_processor::store_next() {
  if (m_ready.empty()) return false;
  auto [iteration, pending] = std::move(m_ready.front());
  m_ready.pop_front();
  store_iteration(iteration, pending);
  m_stored_iterations = iteration + 1;
  refresh_live(m_last_store_end);
  return true;
}

std::uint64_t iteration_processor::evacuate(active_buffer& target, std::uint64_t wanted) {
  std::uint64_t freed = 0;
  // Newest first; the oldest too, since it is about to be stored and a store may be slow.
  for (auto it = m_ready.rbegin(); it != m_ready.rend() && freed < wanted; ++it)
    freed += target.take(it->first, it->second.blocks);
  return freed;
}

std::uint64_t iteration_processor::rescue(active_buffer& target) {
  std::uint64_t freed = 0;
  for (auto it = m_pending.rbegin(); it != m_pending.rend(); ++it) {
    if (it->first <= m_next_iteration) break;
    freed += target.take(it->first, it->second.blocks, true);
  }
  if (freed == 0) {
    // Nothing younger is left in the shared buffer and writers still wait: the free space is
    // there, but in pieces too small for their blocks, between the blocks of the open
    // iteration. Moving those out too leaves the buffer in one piece.
    auto open = m_pending.find(m_next_iteration);
    if (open != m_pending.end()) freed += target.take(open->first, open->second.blocks, true);
  }
  return freed;
}

void iteration_processor::finish() {
  while (store_next()) {
  }
  while (!m_pending.empty()) {
    auto it = m_pending.begin();
    if (it->second.ended_count < m_sources) {
      log::warning("iteration ", it->first, " was ended by ", it->second.ended_count, " of ",
                   counted(m_sources, "client"), " before they stopped; storing the ",
                   counted(static_cast<long long>(it->second.blocks.size()), "block"), " received");
      it->second.skipped = true;
      leave_out_unended(it->first, it->second);
    }
    it->second.completed = std::chrono::steady_clock::now();
    store_iteration(it->first, it->second);
    m_next_iteration = std::max(m_next_iteration, it->first + 1);
    m_stored_iterations = m_next_iteration;
    m_pending.erase(it);
  }
  // The run is over: a next one (damaris_start again) begins with every source running.
  std::fill(m_stopped_from.begin(), m_stopped_from.end(), INT_MAX);
  refresh_live();
  m_scheduler->finish();
  for (std::size_t s = 0; s < m_stores.size(); ++s) {
    if (!m_stores[s]) continue;
    try {
      m_stores[s]->finish();
    } catch (const std::exception& e) {
      ++m_counters.store_failures;
      std::string message =
          "store '" + m_model.stores[s].name + "' at the end of the run: " + e.what();
      log::error(message);
      if (m_failure.empty()) m_failure = message;
    }
  }
  refresh_live();
  for (std::size_t a = 0; a < m_actions.size(); ++a) {
    try {
      m_actions[a]->finish();
    } catch (const std::exception& e) {
      note_action_failure(a, "at the end of the run", e.what());
    }
    const config::action_plugin& settings = m_model.action_plugins[a];
    const action_tally& t = m_tallies[a];
    if (t.calls > 1) {
      // The first call pays for imports and first touches: the others say what a call costs.
      log::info(settings.is_script() ? "script '" : "action plugin '", settings.name,
                "': ", t.calls, " call(s), ", t.seconds, " s in them (the first ", t.first * 1e6,
                " us, the others ", (t.seconds - t.first) * 1e6 / static_cast<double>(t.calls - 1),
                " us each)");
    }
    if (settings.is_script() && t.failures > 0) {
      log::error("script '", settings.name, "' (", m_model.scripts[settings.script].file,
                 ") raised in ", t.failures, " of ", t.calls,
                 " call(s); the first traceback is above");
    }
  }
}

std::vector<action_summary> iteration_processor::action_summaries() const {
  std::vector<action_summary> summaries;
  for (std::size_t a = 0; a < m_actions.size(); ++a) {
    const config::action_plugin& settings = m_model.action_plugins[a];
    const char* kind = !settings.is_script()                       ? "plugin"
                       : m_model.scripts[settings.script].paraview ? "paraview"
                                                                   : "script";
    const action_tally& t = m_tallies[a];
    summaries.push_back({settings.name, kind, t.calls, t.failures, t.seconds});
  }
  return summaries;
}

void iteration_processor::note_action_failure(std::size_t a, const std::string& when,
                                              const std::string& what) {
  const config::action_plugin& settings = m_model.action_plugins[a];
  if (!settings.is_script()) {
    note_failure(when + ", action plugin '" + settings.name + "': " + what);
    return;
  }
  ++m_counters.script_failures;
  if (m_tallies[a].failures++ == 0) {
    log::error("script '", settings.name, "' (", m_model.scripts[settings.script].file, ") raised ",
               when,
               "; the run goes on, later failures of this script are "
               "logged in one line:\n",
               what);
    return;
  }
  // The exception itself is the last line of a traceback.
  std::string last = what;
  while (!last.empty() && last.back() == '\n') last.pop_back();
  const std::size_t newline = last.rfind('\n');
  if (newline != std::string::npos) last = last.substr(newline + 1);
  log::warning("script '", settings.name, "' raised ", when, ": ", last);
}

void iteration_processor::note_failure(const std::string& message) {
  ++m_counters.store_failures;
  log::error(message);
  if (m_failure.empty()) m_failure = message;
}

plugins::iteration_data iteration_processor::select(
    int iteration, const pending_iteration& pending,
    const std::vector<std::size_t>& variables) const {
  plugins::iteration_data data;
  data.iteration = iteration;
  data.incomplete = pending.skipped;
  data.clients_left_out = clients_left_out(pending);
  for (std::size_t v : variables) {
    const config::variable& var = m_model.variables[v];
    plugins::variable_blocks entry;
    entry.var = &var;
    entry.layout = &m_model.layouts[var.layout_index];
    // Blocks are sorted by variable: the variable's blocks are one run.
    const auto first = std::lower_bound(
        pending.blocks.begin(), pending.blocks.end(), static_cast<std::int32_t>(v),
        [](const stored_block& b, std::int32_t variable) { return b.variable < variable; });
    for (auto b = first; b != pending.blocks.end() && b->variable == static_cast<std::int32_t>(v);
         ++b)
      entry.blocks.push_back(&b->view);
    data.variables.push_back(std::move(entry));
  }
  return data;
}

// After the stores, while the iteration's memory is still held: the plugins see the same
// blocks, where they lie.
void iteration_processor::run_actions(int iteration, const pending_iteration& pending) {
  for (std::size_t a = 0; a < m_actions.size(); ++a) {
    if (!m_actions[a]->wants(iteration)) continue;
    action_tally& tally = m_tallies[a];
    ++tally.calls;
    const auto start = std::chrono::steady_clock::now();
    try {
      m_actions[a]->on_iteration(select(iteration, pending, m_model.action_plugins[a].variables));
    } catch (const std::exception& e) {
      note_action_failure(a, "at iteration " + std::to_string(iteration), e.what());
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    tally.seconds += seconds;
    if (tally.calls == 1) tally.first = seconds;
  }
}

void iteration_processor::run_event(const config::event& event, int source,
                                    int iteration) noexcept {
  if (event.plugin >= m_actions.size()) return;
  try {
    m_actions[event.plugin]->on_event(event, source, iteration);
  } catch (const std::exception& e) {
    try {
      note_action_failure(event.plugin,
                          "on event '" + event.name + "' (client " + std::to_string(source) +
                              ", iteration " + std::to_string(iteration) + ")",
                          e.what());
    } catch (...) {
    }
  }
}

void iteration_processor::store_iteration(int iteration, pending_iteration& pending) {
  if (m_agree) {
    const writers_step step = agree_on_step(m_writers, iteration, false, false);
    if (!step.in_step || step.iteration != iteration)
      log::error("the writers store different iterations together (", iteration,
                 " here): their collective calls may not match");
  }
  auto start = std::chrono::steady_clock::now();
  std::sort(pending.blocks.begin(), pending.blocks.end(),
            [](const stored_block& a, const stored_block& b) {
              return std::tie(a.variable, a.view.source, a.view.block_id) <
                     std::tie(b.variable, b.view.source, b.view.block_id);
            });
  std::vector<memory::heap_extent> ranges;
  ranges.reserve(pending.blocks.size());
  std::uint64_t bytes = 0;
  for (const stored_block& b : pending.blocks) {
    if (b.shared.bytes) ranges.push_back(b.shared);
    bytes += b.view.bytes;
  }
  // Memory returns to the heap whatever the stores do.
  struct releaser {
    iteration_processor& self;
    std::vector<memory::heap_extent>& ranges;
    ~releaser() {
      if (self.m_release && !ranges.empty()) {
        try {
          self.m_release(ranges);
        } catch (const std::exception& e) {
          log::error("releasing shared memory failed: ", e.what());
        }
      }
    }
  } release_at_exit{*this, ranges};

  // The stores wait for their turn (<schedule>); the action plugins after them do not.
  const bool scheduled =
      std::any_of(m_stores.begin(), m_stores.end(), [](const auto& s) { return s != nullptr; });
  if (scheduled) m_scheduler->before_store(iteration, bytes, pending.completed, m_held_bytes);
  // A schedule that drains never waits for a turn: the stores begin with this function.
  const auto store_begin =
      m_model.arch.schedule.drains() ? start : std::chrono::steady_clock::now();
  const std::uint64_t buffered_at_begin = m_buffer_use ? m_buffer_use().used : m_held_bytes;
  const std::uint64_t failures_before = m_counters.store_failures;
  struct turn {
    scheduler* held;
    ~turn() {
      if (held) held->after_store();
    }
  } turn_at_exit{scheduled ? m_scheduler.get() : nullptr};
  // Each variable's blocks, which the sort above put next to each other: [first, end).
  m_variable_ranges.assign(m_model.variables.size(), {0, 0});
  for (std::size_t i = 0; i < pending.blocks.size();) {
    const std::size_t first = i;
    const std::int32_t v = pending.blocks[i].variable;
    while (i < pending.blocks.size() && pending.blocks[i].variable == v) ++i;
    if (v >= 0 && static_cast<std::size_t>(v) < m_variable_ranges.size())
      m_variable_ranges[static_cast<std::size_t>(v)] = {first, i};
  }
  for (std::size_t s = 0; s < m_stores.size(); ++s) {
    if (!m_stores[s]) continue;
    plugins::iteration_data data;
    data.iteration = iteration;
    data.incomplete = pending.skipped;
    data.clients_left_out = clients_left_out(pending);
    data.variables.reserve(m_model.variables.size());
    for (std::size_t v = 0; v < m_model.variables.size(); ++v) {
      const config::variable& var = m_model.variables[v];
      if (var.store_index != s || !var.enabled) continue;
      plugins::variable_blocks entry;
      entry.var = &var;
      entry.layout = &m_model.layouts[var.layout_index];
      const auto [first, end] = m_variable_ranges[v];
      entry.blocks.reserve(end - first);
      for (std::size_t i = first; i < end; ++i) entry.blocks.push_back(&pending.blocks[i].view);
      data.variables.push_back(std::move(entry));
    }
    for (std::size_t v = 0; v < m_model.variables.size(); ++v) {
      const config::variable& index = m_model.variables[v];
      if (index.store_index == s) continue;
      const bool names_it = std::any_of(
          m_model.variables.begin(), m_model.variables.end(), [&](const config::variable& var) {
            return var.store_index == s && var.enabled && var.select_file == v;
          });
      if (!names_it) continue;
      plugins::variable_blocks entry;
      entry.var = &index;
      entry.layout = &m_model.layouts[index.layout_index];
      const auto [first, end] = m_variable_ranges[v];
      for (std::size_t i = first; i < end; ++i) entry.blocks.push_back(&pending.blocks[i].view);
      data.index_variables.push_back(std::move(entry));
    }
    try {
      m_stores[s]->write_iteration(data);
    } catch (const std::exception& e) {
      // The other stores and the following iterations still run; the failure is counted,
      // logged and reported (returned to the caller in synchronous mode).
      ++m_counters.store_failures;
      std::string message = "iteration " + std::to_string(iteration) + ", store '" +
                            m_model.stores[s].name + "': " + e.what();
      log::error(message);
      if (m_failure.empty()) m_failure = message;
    }
  }
  if (turn_at_exit.held) std::exchange(turn_at_exit.held, nullptr)->after_store();
  // The stores' end; without action plugins, the end of the whole (one clock read less).
  const bool actions = !m_actions.empty();
  auto store_end = actions ? std::chrono::steady_clock::now() : start;
  run_actions(iteration, pending);
  m_held_bytes -= std::min(m_held_bytes, bytes);
  ++m_counters.iterations_stored;
  if (pending.skipped) ++m_counters.iterations_incomplete;
  m_counters.blocks_stored += pending.blocks.size();
  m_counters.bytes_stored += bytes;
  const auto end = std::chrono::steady_clock::now();
  if (!actions) store_end = end;
  m_last_store_end = end;
  double seconds = std::chrono::duration<double>(end - start).count();
  m_counters.seconds_in_stores += seconds;
  // Live values: what the stores took, and the iteration's path from complete to stored.
  const bool failed = m_counters.store_failures != failures_before;
  (failed ? m_live.bytes_failed : m_live.bytes_written) += bytes;
  ++m_live.iterations_stored;
  m_live.iterations_incomplete = m_counters.iterations_incomplete;
  const double store_seconds = std::chrono::duration<double>(store_end - store_begin).count();
  m_live.store_ns += nanoseconds(store_seconds);
  if (bytes > 0 && store_seconds > 0) {
    // Recent throughput: moving averages of bytes and seconds per store, so that one tiny
    // iteration does not swing it.
    m_recent_bytes = m_recent_bytes * 0.75 + static_cast<double>(bytes) * 0.25;
    m_recent_seconds = m_recent_seconds * 0.75 + store_seconds * 0.25;
    m_live.throughput_bps = static_cast<std::uint64_t>(m_recent_bytes / m_recent_seconds);
  }
  if (pending.completed != std::chrono::steady_clock::time_point{}) {
    const std::uint64_t latency =
        nanoseconds(std::chrono::duration<double>(store_end - pending.completed).count());
    m_live.latency_min_ns =
        m_live.latency_count ? std::min(m_live.latency_min_ns, latency) : latency;
    m_live.latency_max_ns = std::max(m_live.latency_max_ns, latency);
    m_live.latency_sum_ns += latency;
    m_live.latency_last_ns = latency;
    ++m_live.latency_count;
  }
  if (m_records.size() < run_record_limit) {
    iteration_record r;
    r.iteration = iteration;
    r.blocks = static_cast<std::uint32_t>(pending.blocks.size());
    r.bytes = bytes;
    r.completed = run_clock::seconds(pending.completed);
    r.store_begin = run_clock::seconds(store_begin);
    r.stored = run_clock::seconds(store_end);
    r.buffered = buffered_at_begin;
    r.incomplete = pending.skipped;
    r.failed = failed;
    m_records.push_back(r);
  }
  log::debug("iteration ", iteration, " stored: ", pending.blocks.size(), " blocks, ", bytes,
             " bytes in ", seconds, " s", pending.skipped ? " (incomplete)" : "");
}

}  // namespace sidecore::storing

namespace sidecore::storing {

std::string iteration_processor::take_failure() { return std::exchange(m_failure, std::string()); }

}  // namespace sidecore::storing
