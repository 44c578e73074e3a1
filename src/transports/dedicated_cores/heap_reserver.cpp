#include "transports/dedicated_cores/heap_reserver.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "common/hot_path.hpp"
#include "common/log.hpp"
#include "common/quiet_thread.hpp"
#include "common/thread_policy.hpp"

namespace sidecore::transports {

heap_reserver::heap_reserver(channel& c)
    : m_thread(start_quiet_thread([this, &c] {
        const std::string failure = c.reserve_heap_rest(m_stop);
        if (!failure.empty()) log::error(failure);
      })) {}

heap_reserver::~heap_reserver() {
  m_stop.store(true, std::memory_order_relaxed);
  if (m_thread.joinable()) m_thread.join();
}

window_mapper::window_mapper(channel& c, std::uint64_t offset, std::uint64_t bytes)
    : m_window_end(offset + bytes),
      m_from(offset),
      m_to(offset + bytes),
      m_skip_to(offset),
      m_mapped_to(offset),
      m_thread(start_quiet_thread([this, &c] { run(c); })) {}

window_mapper::~window_mapper() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop.store(true, std::memory_order_relaxed);
  }
  m_asked.notify_one();
  if (m_thread.joinable()) m_thread.join();
}

namespace {

// Raises `value` to at least `wanted`; true when it did.
bool raise_to(std::atomic<std::uint64_t>& value, std::uint64_t wanted) noexcept {
  std::uint64_t now = value.load(std::memory_order_relaxed);
  while (now < wanted)
    if (value.compare_exchange_weak(now, wanted, std::memory_order_acq_rel)) return true;
  return false;
}

}  // namespace

SIDECORE_HOT_PATH void window_mapper::map_ahead(std::uint64_t from, std::uint64_t to) {
  if (to <= m_to.load(std::memory_order_acquire)) return;
  raise_to(m_skip_to, from);  // before the end: the thread never maps the gap before `from`
  if (raise_to(m_to, to)) m_asked.notify_one();
}

SIDECORE_HOT_PATH void window_mapper::skip_to(std::uint64_t offset) noexcept {
  raise_to(m_skip_to, offset);
}

void window_mapper::run(channel& c) {
  // Steps of the core's reservation size: each is mapped as soon as it is ready.
  constexpr std::uint64_t step = channel::reserve_step;
  constexpr double poll_seconds = 0.005;  // how soon a stop is seen while waiting
  const std::uint64_t heap_end = c.heap().end_offset();
  bool idle_priority = false;
  for (;;) {
    std::uint64_t to = 0;
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      if (!idle_priority && m_from >= m_to.load(std::memory_order_acquire)) {
        // The window is mapped, before the first writes if their compute phase was long
        // enough. Mapping ahead of later writes must never take the processor from the
        // simulation (it did, for a millisecond at a time, on a busy node): from now on this
        // thread runs only when the processor would otherwise be idle. Where it never runs,
        // the writes map their pages themselves, as without it (as where the system refuses
        // the change, which leaves the thread as it was).
        run_only_when_idle();
        idle_priority = true;
      }
      // map_ahead notifies without the lock: a request made just before this wait may find
      // nobody waiting, and is then seen within a tenth of a second.
      m_asked.wait_for(lock, std::chrono::milliseconds(100), [this, heap_end] {
        return m_stop.load(std::memory_order_relaxed) ||
               m_from < std::min(m_to.load(std::memory_order_acquire), heap_end);
      });
      if (m_stop.load(std::memory_order_relaxed)) return;
      to = std::min(m_to.load(std::memory_order_acquire), heap_end);
      m_from = std::max(m_from, m_skip_to.load(std::memory_order_acquire));
    }
    if (m_from >= to) continue;  // nothing new asked (the wait timed out), or the heap's end
    const std::uint64_t n = std::min(step, to - m_from);
    if (c.heap_reserved(m_from, n, poll_seconds)) {
      // In pieces: populating holds the process's memory-map lock (for reading), which the
      // application's own mmap and munmap (a large malloc) wait for.
      constexpr std::uint64_t piece = 1u << 20;
      for (std::uint64_t p = m_from; p < m_from + n; p += piece) {
        if (m_stop.load(std::memory_order_relaxed)) return;
        const std::uint64_t end = std::min(p + piece, m_from + n);
        // A write that got there first mapped them (on this thread's processor).
        const std::uint64_t from = std::max(p, m_skip_to.load(std::memory_order_acquire));
        if (from < end) c.prefault(from, end - from);
        m_mapped_to.store(end, std::memory_order_release);
      }
      m_from += n;
    } else if (c.heap_reservation_stopped()) {
      return;  // the writes that need these pages report why
    } else if (m_stop.load(std::memory_order_relaxed)) {
      return;
    }
  }
}

}  // namespace sidecore::transports
