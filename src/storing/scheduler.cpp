// Slots follow seed 000: each writer measures the time between two complete iterations, cuts
// it into as many slots as there are writers and begins its stores in its own. Phases follow
// seed 003's phase-aware scheduler: a store begins only while every client of the writer
// computes, and (once stores have been timed) only with time left in the clients' compute
// phase for it, judged from the length of their previous one.
// Turns are counted in one 64-bit integer in an MPI window on writer 0: a writer takes one by
// an atomic increment, kept when fewer than `writers` were taken before, and gives it back
// with an atomic decrement (MPI_Compare_and_swap is avoided: Open MPI 4.1's emulated one over
// shared memory crashes). Nobody answers requests, so no writer has to poll for the others; a
// writer that finds every turn taken naps (20 us doubling to 1 ms) and looks again, until its
// deadline.
#include "storing/scheduler.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <sstream>
#include <thread>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/mpi_handles.hpp"
#include "common/units.hpp"
#include "common/waiting.hpp"

namespace sidecore::storing {

namespace {
// A deadline that passes once tends to pass at every iteration: each kind is said the first
// time in this process (log::first_time); the schedule's summary at the end sums the waits.
constexpr const char* said_once = " (said once; the schedule summary at the end sums the waits)";

double seconds_since_epoch(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace

scheduler::scheduler(const config::model& model, MPI_Comm writers, int writer_index,
                     int writer_count, bool independent)
    : m_settings(model.arch.schedule),
      m_file(model.file),
      m_timeout(model.arch.wait_timeout_seconds),
      m_writer_index(writer_index),
      m_writer_count(writer_count),
      // With K dedicated cores per node, each serves its clients from 1/K of the buffer.
      m_buffer_bytes(static_cast<double>(model.arch.buffer_size) /
                     std::max(1, model.arch.dedicated_cores)),
      m_created(clock::now()),
      m_filled(m_created) {
  int size = 1;
  check_mpi(MPI_Comm_size(writers, &size), "MPI_Comm_size");
  const bool rate = m_settings.uses(config::schedule_policy::rate);
  const bool limited = rate && m_settings.writers > 0 && m_settings.writers < writer_count;
  const bool ordered = m_settings.uses(config::schedule_policy::ordered) && writer_count > 1;
  // What the writers share (turns, progress) lives in windows over `writers`, which then must
  // span them all, and which a writer waiting for the others must not hold inside a call that
  // needs them (a collective store).
  auto shared = [&](const std::string& what) {
    if (!independent) {
      if (writer_index == 0)
        log::warning(model.file, ":", m_settings.line, ": <schedule ", what,
                     "> is not applied: a store makes MPI calls among all the writers at each "
                     "iteration (collective output, a master file or XDMF, or time-invariant "
                     "variables), so they store together, as one writer");
      return false;
    }
    if (size < writer_count) {
      if (writer_index == 0)
        log::warning(model.file, ":", m_settings.line, ": <schedule ", what,
                     "> is not applied: the background I/O threads can only coordinate over MPI "
                     "when MPI is initialized with MPI_THREAD_MULTIPLE");
      return false;
    }
    return true;
  };
  // slots (and self's slots) also bound how many writers store at once: one per slot.
  const bool slotted = (m_settings.uses(config::schedule_policy::slots) ||
                        m_settings.uses(config::schedule_policy::self)) &&
                       writer_count > 1;
  if ((limited || slotted) &&
      shared(limited ? "writers=\"" + std::to_string(m_settings.writers) + "\""
                     : std::string("policy=\"") +
                           (m_settings.uses(config::schedule_policy::slots) ? "slots" : "self") +
                           "\"'s bound on concurrent writers"))
    m_turns = std::make_unique<shared_counters>(writers, 1, 0);
  if (ordered && shared("policy=\"ordered\""))
    m_progress = std::make_unique<shared_counters>(writers, writer_count, -1);
  m_seen.assign(static_cast<std::size_t>(writer_count), -1);
  if (!m_settings.trace.empty()) {
    const std::string path = m_settings.trace + "." + std::to_string(writer_index) + ".csv";
    m_trace = std::fopen(path.c_str(), "w");
    if (!m_trace) {
      log::warning(model.file, ":", m_settings.line, ": cannot write the schedule trace \"", path,
                   "\"; storing without it");
    } else {
      std::fprintf(m_trace,
                   "# writer=%d of=%d writers=%d bandwidth=%.17g limited=%d policies=%u "
                   "created=%.6f\n"
                   "iteration,bytes,completed,ready,begin,end,turn,slot_begin,slot_end,phase,held,"
                   "phase_seen_from,phase_seen_to\n",
                   writer_index, writer_count, m_settings.writers, m_settings.bandwidth,
                   m_turns ? 1 : 0, m_settings.policies, seconds_since_epoch(m_created));
      std::fflush(m_trace);
    }
  }
}

// Past finish(), a writer makes no operation on the others' windows but close()'s, which keeps
// writer 0 (where the counters are) until every writer has its answer: with MPICH, an
// operation on writer 0 once it is in MPI_Finalize never completes.
scheduler::~scheduler() {
  if (m_holding) give_turn_back();
  if (m_trace) std::fclose(m_trace);
  // A writer that stops early (an error) must not keep the others waiting for its progress.
  if (!m_ended) publish_end();
  // Freed together when every writer ended normally; otherwise left to MPI_Finalize.
  const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                           std::chrono::duration<double>(deadline_seconds()));
  if (m_progress) m_progress->close(m_ended, deadline);
  if (m_turns) m_turns->close(m_ended, deadline);
  if (!m_settings.drains() && m_counters.stores > 0) {
    try {
      const scheduler_counters& c = m_counters;
      log::info("schedule: ", c.stores, " stores; ", c.seconds_throttled,
                " s slept for the bandwidth, ", c.seconds_waiting_slot, " s waiting for a slot (",
                c.slots_missed, " ready after their slot), ", c.seconds_waiting_phase,
                " s waiting for the clients to compute (", c.phases_forced,
                " stores begun outside a compute phase at the deadline), ", c.seconds_waiting_turn,
                " s waiting for a turn (", c.turns_forced,
                " stores run without one at the deadline), ", c.seconds_waiting_order,
                " s waiting for the writers before (", c.order_forced, " out of order), ",
                c.self_changes, " choice(s) of self");
    } catch (...) {
    }
  }
}

double scheduler::deadline_seconds() const noexcept { return m_timeout > 0 ? m_timeout : 300.0; }

void scheduler::before_store(int iteration, std::uint64_t bytes, clock::time_point completed,
                             std::uint64_t held) {
  m_ended = false;
  m_iteration = iteration;
  m_bytes = bytes;
  m_held = held;
  m_completed = completed;
  m_ready = clock::now();
  m_phase_reason = static_cast<std::uint32_t>(-1);
  m_phase_seen_from = m_phase_seen_to = clock::time_point{};
  m_slot_begin = m_slot_end = clock::time_point{};
  if (m_settings.uses(config::schedule_policy::rate) && m_settings.bandwidth > 0) throttle(bytes);
  note_completion(completed);
  if (m_settings.uses(config::schedule_policy::slots))
    wait_for_slot(completed, m_writer_index, m_writer_count);
  if (m_settings.uses(config::schedule_policy::self)) apply_self(iteration, completed, bytes, held);
  if (m_settings.uses(config::schedule_policy::phase)) wait_for_phase(bytes);
  if (m_progress) wait_for_order(iteration);
  const std::int64_t limit = concurrency_limit();
  if (m_turns && limit < m_writer_count) {
    const auto start = clock::now();
    m_holding = take_turn(limit);
    m_counters.seconds_waiting_turn += std::chrono::duration<double>(clock::now() - start).count();
    if (!m_holding) ++m_counters.turns_forced;
  }
  m_begin = clock::now();
}

void scheduler::after_store() noexcept {
  const auto end = clock::now();
  const bool held = m_holding;
  if (m_holding) give_turn_back();
  if (m_progress && m_progress->try_store(m_writer_index, m_iteration) != MPI_SUCCESS) {
    try {
      log::error(
          "publishing this writer's progress failed: writers after it in <schedule "
          "policy=\"ordered\"> wait for their deadline");
    } catch (...) {
    }
  }
  ++m_counters.stores;
  if (m_bytes > 0) {
    // What a byte costs the stores, smoothed: phase judges from it whether a store fits.
    const double per_byte =
        std::chrono::duration<double>(end - m_begin).count() / static_cast<double>(m_bytes);
    m_seconds_per_byte =
        m_seconds_per_byte == 0.0 ? per_byte : 0.5 * m_seconds_per_byte + 0.5 * per_byte;
  }
  const double took = std::chrono::duration<double>(end - m_begin).count();
  m_store_seconds = m_store_seconds == 0.0 ? took : 0.5 * m_store_seconds + 0.5 * took;
  if (m_trace) {
    const bool slot = m_slot_end != clock::time_point{};
    const bool seen = m_phase_seen_to != clock::time_point{};
    std::fprintf(
        m_trace, "%d,%" PRIu64 ",%.6f,%.6f,%.6f,%.6f,%d,%.6f,%.6f,%d,%" PRIu64 ",%.6f,%.6f\n",
        m_iteration, m_bytes, seconds_since_epoch(m_completed), seconds_since_epoch(m_ready),
        seconds_since_epoch(m_begin), seconds_since_epoch(end), held ? 1 : 0,
        slot ? seconds_since_epoch(m_slot_begin) : 0.0,
        slot ? seconds_since_epoch(m_slot_end) : 0.0, static_cast<int>(m_phase_reason), m_held,
        seen ? seconds_since_epoch(m_phase_seen_from) : 0.0,
        seen ? seconds_since_epoch(m_phase_seen_to) : 0.0);
    std::fflush(m_trace);
  }
}

// A token bucket that starts empty and fills at `bandwidth` bytes per second, up to one
// second's worth or the store at hand: from the scheduler's creation on, the bytes of the
// stores begun by any time t never exceed bandwidth * (t - creation).
void scheduler::throttle(std::uint64_t bytes) {
  const double rate = m_settings.bandwidth;
  const double wanted = static_cast<double>(bytes);
  const double capacity = std::max(rate, wanted);
  auto refill = [&] {
    const auto now = clock::now();
    m_allowance = std::min(
        capacity, m_allowance + rate * std::chrono::duration<double>(now - m_filled).count());
    m_filled = now;
  };
  refill();
  const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                           std::chrono::duration<double>(deadline_seconds()));
  const auto start = clock::now();
  while (m_allowance < wanted) {
    const auto now = clock::now();
    if (now >= deadline) {
      if (log::first_time("schedule: bandwidth deadline"))
        log::warning("iteration ", m_iteration, ": storing ", readable_bytes(bytes),
                     " now, after waiting ", deadline_seconds(),
                     " s for the <schedule bandwidth> (", m_settings.bandwidth,
                     " bytes/s) to allow it", said_once);
      break;
    }
    const auto need = std::chrono::duration<double>((wanted - m_allowance) / rate);
    std::this_thread::sleep_for(
        std::min(std::chrono::duration_cast<clock::duration>(need) + std::chrono::microseconds(1),
                 deadline - now));
    refill();
  }
  m_allowance -= wanted;
  m_counters.seconds_throttled += std::chrono::duration<double>(clock::now() - start).count();
}

// The interval between complete iterations, averaged over the last four (0 until two have
// completed: the time since the start would count the set-up).
void scheduler::note_completion(clock::time_point completed) {
  const clock::time_point since = m_last_completed;
  if (since != clock::time_point{} && completed > since) {
    m_periods.push_back(std::chrono::duration<double>(completed - since).count());
    if (m_periods.size() > 4) m_periods.erase(m_periods.begin());
  }
  m_last_completed = std::max(m_last_completed, completed);
}

double scheduler::period() const noexcept {
  if (m_periods.empty()) return 0.0;
  double sum = 0.0;
  for (double p : m_periods) sum += p;
  return sum / static_cast<double>(m_periods.size());
}

// Slot `slot` of `count` starts slot/count of the period after the iteration completed and
// lasts 1/count of it.
void scheduler::wait_for_slot(clock::time_point completed, int slot, int count) {
  const double width = period() / count;
  if (width <= 0.0 || count < 2) return;
  const auto offset = [](double seconds) {
    return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
  };
  m_slot_begin = completed + offset(width * slot);
  m_slot_end = m_slot_begin + offset(width);
  const auto start = clock::now();
  if (start >= m_slot_end) {
    ++m_counters.slots_missed;
    return;
  }
  // A slot is at most one period away, and a period is what the clients took: no deadline
  // is needed beyond the one every wait has.
  const auto deadline = start + offset(deadline_seconds());
  std::this_thread::sleep_until(std::min(m_slot_begin, deadline));
  m_counters.seconds_waiting_slot += std::chrono::duration<double>(clock::now() - start).count();
}

// self: from the buffer's fill, the clients' phases, the iteration period and the time a
// store takes, in this order of precedence.
scheduler::self_choice scheduler::choose(std::uint64_t held) {
  self_choice c;
  const double fill = m_buffer_bytes > 0 ? static_cast<double>(held) / m_buffer_bytes : 0.0;
  const bool pressed =
      fill > 0.5 || (m_choice.kind == self_choice::at_once && m_choice.pressed && fill > 0.25);
  if (!m_marks_seen) {
    for (const protocol::client_phase* p : m_phases) {
      const std::uint32_t state = p->current.load(std::memory_order_relaxed);
      if (state == protocol::client_phase::computing || state == protocol::client_phase::other)
        m_marks_seen = true;
    }
  }
  const double t = period(), s = m_store_seconds;
  std::ostringstream why;
  why.precision(3);
  if (pressed) {
    c.kind = self_choice::at_once;
    c.pressed = true;
    why << "the buffer is " << static_cast<int>(100 * fill)
        << "% full: storing at once until it is under 25%";
  } else if (m_marks_seen) {
    c.kind = self_choice::phase;
    why << "the clients mark their compute phases: storing only while they compute";
  } else if (m_writer_count < 2) {
    c.kind = self_choice::at_once;
    why << "one writer, no compute phases marked: storing at once";
  } else if (t <= 0.0 || s <= 0.0) {
    c.kind = self_choice::at_once;
    why << "nothing measured yet: storing at once";
  } else {
    const int fit = static_cast<int>(std::min<double>(m_writer_count, std::floor(t / s)));
    if (fit < 2) {
      c.kind = self_choice::at_once;
      why << "a store takes " << 1e3 * s << " ms of the " << 1e3 * t
          << " ms between iterations: no room for slots, storing at once";
    } else {
      c.kind = self_choice::slotted;
      c.slots = fit;
      why << "iterations every " << 1e3 * t << " ms, a store takes " << 1e3 * s << " ms, "
          << m_writer_count << " writers: " << fit << " slots of " << 1e3 * t / fit
          << " ms, at most " << (m_writer_count + fit - 1) / fit << " writer(s) storing at once";
    }
  }
  c.why = why.str();
  return c;
}

void scheduler::apply_self(int iteration, clock::time_point completed, std::uint64_t bytes,
                           std::uint64_t held) {
  const self_choice c = choose(held);
  if (c.kind != m_choice.kind || c.slots != m_choice.slots || m_choice.why.empty()) {
    // Writer 0 speaks for all at info level (they measure the same rhythm); the others say
    // it at debug level.
    if (m_writer_index == 0)
      log::info("schedule self, from iteration ", iteration, ": ", c.why);
    else
      log::debug("schedule self (writer ", m_writer_index, "), from iteration ", iteration, ": ",
                 c.why);
    ++m_counters.self_changes;
  }
  m_choice = c;
  if (c.kind == self_choice::slotted) wait_for_slot(completed, m_writer_index % c.slots, c.slots);
  if (c.kind == self_choice::phase) wait_for_phase(bytes);
}

bool scheduler::clients_compute(double expected, std::uint32_t& why) const noexcept {
  const std::uint64_t now = protocol::client_phase::now_ns();
  bool marked = false, all = true;
  why = protocol::client_phase::computing;
  for (const protocol::client_phase* p : m_phases) {
    const std::uint32_t state = p->current.load(std::memory_order_acquire);
    switch (state) {
      case protocol::client_phase::computing: {
        marked = true;
        // Time left in this phase, judged from the length of the previous one; a store that
        // could never fit in a phase begins in any.
        const double last =
            1e-9 * static_cast<double>(p->last_compute_ns.load(std::memory_order_relaxed));
        const std::uint64_t since = p->since_ns.load(std::memory_order_relaxed);
        const double elapsed = now > since ? 1e-9 * static_cast<double>(now - since) : 0.0;
        if (last > 0.0 && expected > 0.0 && expected < last && elapsed + expected > last)
          all = false;
        break;
      }
      case protocol::client_phase::other:
        marked = true;
        all = false;
        break;
      case protocol::client_phase::unmarked:
        break;
      default:  // stopped or blocked on this writer: holding back only delays it
        why = state;
        return true;
    }
  }
  if (!marked) why = protocol::client_phase::unmarked;
  return all;
}

void scheduler::wait_for_phase(std::uint64_t bytes) {
  if (m_phases.empty()) {
    if (!m_warned_phase && m_writer_index == 0)
      log::warning(m_file, ":", m_settings.line,
                   ": <schedule policy=\"phase\"> is not applied: "
                   "in synchronous mode the stores run inside damaris_end_iteration, where "
                   "the client does not compute");
    m_warned_phase = true;
    return;
  }
  const double expected = m_seconds_per_byte * static_cast<double>(bytes);
  std::uint32_t why = 0;
  // The moments around the look that let the store begin, for the trace: every client was in
  // the state it reported at some instant between the two.
  auto look = [&] {
    if (m_refresh_phases) m_refresh_phases();
    const auto from = clock::now();
    const bool ok = clients_compute(expected, why);
    if (ok) {
      m_phase_seen_from = from;
      m_phase_seen_to = clock::now();
    }
    return ok;
  };
  if (look()) {
    m_phase_reason = why;
    if (why == protocol::client_phase::unmarked && !m_warned_phase) {
      m_warned_phase = true;
      log::warning(m_file, ":", m_settings.line,
                   ": <schedule policy=\"phase\">: no client of "
                   "writer ",
                   m_writer_index,
                   " has marked a compute phase yet, so its stores "
                   "run at once; the clients mark them with sidecore_compute_begin() and "
                   "sidecore_compute_end() (sidecore/schedule.h)");
    }
    return;
  }
  waiter pause(paces::client_phase, deadline_seconds());
  while (!look()) {
    if (!pause.nap()) {
      if (log::first_time("schedule: phase deadline"))
        log::warning("iteration ", m_iteration, ": storing now, after waiting ", deadline_seconds(),
                     " s for every client to be in a compute phase (<schedule "
                     "policy=\"phase\">: do the clients call sidecore_compute_begin and "
                     "sidecore_compute_end?)",
                     said_once);
      ++m_counters.phases_forced;
      why = 9;
      break;
    }
  }
  m_phase_reason = why;
  m_counters.seconds_waiting_phase += pause.seconds();
}

// How many writers may store at once: rate's writers; one per slot under slots (one slot
// per writer: one at a time) and under self's slots (ceil(W / slots)); no limit otherwise.
std::int64_t scheduler::concurrency_limit() const noexcept {
  std::int64_t limit = m_writer_count;
  if (m_settings.uses(config::schedule_policy::rate) && m_settings.writers > 0)
    limit = std::min<std::int64_t>(limit, m_settings.writers);
  if (m_settings.uses(config::schedule_policy::slots)) limit = 1;
  if (m_settings.uses(config::schedule_policy::self) && m_choice.kind == self_choice::slotted &&
      m_choice.slots > 0)
    limit = std::min<std::int64_t>(limit, (m_writer_count + m_choice.slots - 1) / m_choice.slots);
  return limit;
}

bool scheduler::take_turn(std::int64_t limit) {
  waiter pause(paces::shared_counter, deadline_seconds());
  for (;;) {
    // Take one, then give it back if there were not one to take. The count may exceed the
    // limit for a moment by those about to give back, which only makes others look again:
    // a writer holds a turn only when fewer than `writers` were counted before its own.
    const std::int64_t taken = m_turns->fetch_add(0, 1);
    if (taken < limit) return true;
    m_turns->fetch_add(0, -1);
    if (!pause.nap()) {
      if (log::first_time("schedule: turn deadline"))
        log::warning("iteration ", m_iteration, ": storing now without a turn, after waiting ",
                     deadline_seconds(), " s while ", taken, " of ", limit,
                     " turn(s) of the <schedule> were taken (a writer that holds one may be "
                     "stuck)",
                     said_once);
      return false;
    }
  }
}

void scheduler::give_turn_back() {
  m_holding = false;
  const int rc = m_turns->try_fetch_add(0, -1);
  if (rc != MPI_SUCCESS) {
    try {
      log::error("giving a <schedule> turn back failed (MPI error ", rc,
                 "): the other writers will store without it after their deadline");
    } catch (...) {
    }
  }
}

// ordered: the writers' progress (the last iteration each stored) is shared. By iteration, a
// writer begins iteration k once every writer has stored k - 1; by writer, also once the
// writers before it have stored k. A writer that has finished counts as past every iteration.
void scheduler::wait_for_order(int iteration) {
  const bool by_writer = m_settings.order == config::schedule_order::writer;
  auto allowed = [&] {
    for (int w = 0; w < m_writer_count; ++w) {
      if (w == m_writer_index) continue;
      const std::int64_t needed = by_writer && w < m_writer_index ? iteration : iteration - 1;
      if (m_seen[static_cast<std::size_t>(w)] >= needed) continue;  // progress only grows
      m_seen[static_cast<std::size_t>(w)] = m_progress->read(w);
      if (m_seen[static_cast<std::size_t>(w)] < needed) return false;
    }
    return true;
  };
  if (allowed()) return;
  waiter pause(paces::shared_counter, deadline_seconds());
  while (!allowed()) {
    if (!pause.nap()) {
      if (log::first_time("schedule: order deadline"))
        log::warning("iteration ", iteration,
                     ": storing now, out of <schedule policy=\"ordered\"> "
                     "order, after waiting ",
                     deadline_seconds(),
                     " s for the writers before (one may be stuck or have stopped early)",
                     said_once);
      ++m_counters.order_forced;
      break;
    }
  }
  m_counters.seconds_waiting_order += pause.seconds();
}

void scheduler::finish() noexcept {
  m_ended = true;
  publish_end();
}

void scheduler::publish_end() noexcept {
  if (!m_progress) return;
  const int rc = m_progress->try_store(m_writer_index, finished_all);
  if (rc != MPI_SUCCESS) {
    try {
      log::error("publishing the end of this writer's stores failed (MPI error ", rc,
                 "): writers after it in <schedule policy=\"ordered\"> wait for their deadline");
    } catch (...) {
    }
  }
}

}  // namespace sidecore::storing
