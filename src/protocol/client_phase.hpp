// What a client is doing, as its writer sees it (<schedule policy="phase">): the client marks
// its compute phases (sidecore_compute_begin/end), its writer begins stores only while every
// one of its clients computes. One per client, written by the client only, read by its writer:
// in the shared segment of a dedicated core, in process memory for a background I/O thread.
// Times are nanoseconds of the node's monotonic clock (comparable between its processes).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace sidecore::protocol {

struct client_phase {
  enum state : std::uint32_t {
    unmarked = 0,   // the client never marked a phase
    computing = 1,  // between sidecore_compute_begin and sidecore_compute_end
    other = 2,      // after sidecore_compute_end: communicating, writing...
    stopped = 3,    // the client sends nothing more (damaris_stop, finalize)
    blocked = 4,    // the client waits for its writer (damaris_sync, a full buffer)
  };

  static std::uint64_t now_ns() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
  }

  // Client side: a few atomic stores, no system call.
  void enter(state next) noexcept {
    const std::uint64_t now = now_ns();
    const std::uint64_t since = since_ns.load(std::memory_order_relaxed);
    if (current.load(std::memory_order_relaxed) == computing && next != computing && now > since)
      last_compute_ns.store(now - since, std::memory_order_relaxed);
    since_ns.store(now, std::memory_order_relaxed);
    current.store(next, std::memory_order_release);
  }

  std::atomic<std::uint32_t> current{unmarked};
  std::atomic<std::uint64_t> since_ns{0};         // when `current` was entered
  std::atomic<std::uint64_t> last_compute_ns{0};  // length of the last complete compute phase
};

// Client side, around a wait for its writer (damaris_sync, a full buffer): the writer must
// not hold its stores back for a client that waits for them.
class blocked_on_writer {
 public:
  explicit blocked_on_writer(client_phase& phase) noexcept
      : m_phase(phase), m_was(phase.current.load(std::memory_order_relaxed)) {
    m_phase.current.store(client_phase::blocked, std::memory_order_release);
  }
  ~blocked_on_writer() { m_phase.current.store(m_was, std::memory_order_release); }
  blocked_on_writer(const blocked_on_writer&) = delete;
  blocked_on_writer& operator=(const blocked_on_writer&) = delete;

 private:
  client_phase& m_phase;
  std::uint32_t m_was;
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "client_phase lives in shared memory: its atomics must be lock-free");

}  // namespace sidecore::protocol
