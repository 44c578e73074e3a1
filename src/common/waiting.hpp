// Every wait that looks again and again at something another process or thread will change
// goes through a `waiter`, so that searching for it audits "no polling": a deadline, naps that
// start short and double up to a ceiling, a restart when something moved, and the pace of every
// such wait in the one table below.
//
// Waits that sleep until they are woken are not polls and do not use it: the dedicated core's
// and its clients' futexes (transports/dedicated_cores/channel.cpp), the I/O thread's condition
// variables, the peer watch's period. Nor do fixed delays (the bandwidth schedule's computed
// sleep, the grace before a failed job's message).
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

namespace sidecore {

// How a wait looks: free looks first (each only yields the processor, so that a change due
// now costs no sleep), then naps from `first`, doubling up to `longest`.
struct pace {
  int free_looks;
  std::chrono::microseconds first;
  std::chrono::microseconds longest;
};

// The paces of every polling wait.
namespace paces {
using std::chrono::microseconds;
// A dedicated core with nothing to do: 2000 looks, then it sleeps on its futex until a client
// wakes it, or, with SIDECORE_IDLE_POLL_US set, naps up to that instead.
inline constexpr pace core_idle{2000, microseconds(20), microseconds(1000)};
// A dedicated node's server with nothing to do (MPI gives it nothing to sleep on): at most 1 ms
// late, so that the node's cores are left to other work.
inline constexpr pace node_idle{0, microseconds(5), microseconds(1000)};
// A client waiting for the sends of its blocks to complete (dedicated nodes).
inline constexpr pace send_completion{16, microseconds(10), microseconds(1000)};
// A client making sure a dedicated core that stalled moves again (1 ms apart).
inline constexpr pace core_heartbeat{0, microseconds(1000), microseconds(1000)};
// Broadcast events in flight between servers: sent before the servers met, so due soon.
inline constexpr pace event_arrival{0, microseconds(50), microseconds(10000)};
// Counters the writers share in an MPI window (<schedule> turns and order, the decision at
// finalize).
inline constexpr pace shared_counter{0, microseconds(20), microseconds(1000)};
// A store waiting for every client to be in a compute phase (<schedule policy="phase">).
inline constexpr pace client_phase{0, microseconds(20), microseconds(500)};
// Every process of a communicator reaching a point that some reach much later than others
// (damaris_initialize while dedicated cores open their stores, damaris_finalize while they
// store the last iterations): a waiting process leaves its core to them instead of spinning in
// MPI, at most 1 ms late.
inline constexpr pace collective_arrival{64, microseconds(20), microseconds(1000)};
// The same, for the first collective_close_ms of the wait at the steps of initialization and
// finalization (agreement.cpp): ranks that arrive close together (a step they all do). A
// non-blocking collective moves only while each rank calls MPI_Test, so every exchange of its
// rounds waits for the other side's nap: with naps grown to a millisecond, the agreement after
// parsing the configuration took 2.8 ms on a client whose core had parsed as fast; 1.2-1.3 ms
// with naps of at most 50 us.
inline constexpr pace collective_close{64, microseconds(10), microseconds(50)};
inline constexpr int collective_close_ms = 20;
// Threads leaving the process buffer pool's arena before it is unmapped (a few instructions).
inline constexpr pace arena_users{1000, microseconds(10), microseconds(1000)};
}  // namespace paces

class waiter {
 public:
  using clock = std::chrono::steady_clock;

  // timeout_seconds <= 0: no deadline.
  explicit waiter(const pace& p, double timeout_seconds = 0)
      : m_pace(p), m_length(p.first), m_started(clock::now()) {
    restart(timeout_seconds);
  }

  // Ends at `deadline` (which may have passed already).
  waiter(const pace& p, clock::time_point deadline)
      : m_pace(p), m_length(p.first), m_started(clock::now()) {
    restart_until(deadline);
  }

  // One free look (a yield) or one nap (never past the deadline), after which the naps double.
  // Returns false, at once, when the deadline has passed.
  bool nap() {
    // The clock is read only by a wait with a deadline.
    const clock::time_point now = m_has_deadline ? clock::now() : clock::time_point{};
    if (m_has_deadline && now >= m_deadline) return false;
    if (m_looks < m_pace.free_looks) {
      ++m_looks;
      std::this_thread::yield();
      return true;
    }
    clock::duration length = std::chrono::duration_cast<clock::duration>(m_length);
    if (m_has_deadline) length = std::min<clock::duration>(length, m_deadline - now);
    std::this_thread::sleep_for(length);
    m_length = std::min(m_length * 2, m_pace.longest);
    return true;
  }

  // Something moved: the next looks are free and the naps short again.
  void moved() noexcept {
    m_looks = 0;
    m_length = m_pace.first;
  }
  // Something moved, and the wait now ends timeout_seconds from now (<= 0: never): a wait that
  // gives up only when nothing moved for that long.
  void restart(double timeout_seconds) {
    moved();
    m_has_deadline = timeout_seconds > 0;
    if (m_has_deadline)
      m_deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                      std::chrono::duration<double>(timeout_seconds));
  }
  // Something moved, and the wait now ends at `deadline`.
  void restart_until(clock::time_point deadline) noexcept {
    moved();
    m_has_deadline = true;
    m_deadline = deadline;
  }
  // Whether the free looks are used up (the next nap sleeps).
  bool sleeping() const noexcept { return m_looks >= m_pace.free_looks; }
  // Looks since the last move.
  int looks() const noexcept { return m_looks; }
  bool expired() const { return m_has_deadline && clock::now() >= m_deadline; }
  // Seconds since the waiter was made.
  double seconds() const { return std::chrono::duration<double>(clock::now() - m_started).count(); }

 private:
  pace m_pace;
  std::chrono::microseconds m_length;
  int m_looks = 0;
  bool m_has_deadline = false;
  clock::time_point m_deadline{};
  clock::time_point m_started;
};

}  // namespace sidecore
