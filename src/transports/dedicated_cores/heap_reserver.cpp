#include "transports/dedicated_cores/heap_reserver.hpp"

#include <algorithm>
#include <string>

#include "common/log.hpp"
#include "common/quiet_thread.hpp"

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
    : m_thread(start_quiet_thread([this, &c, offset, bytes] {
        // Steps of the core's reservation size: each is mapped as soon as it is ready.
        constexpr std::uint64_t step = 8u << 20;
        constexpr double poll_seconds = 0.005;  // how soon a stop is seen while waiting
        for (std::uint64_t at = offset; at < offset + bytes;) {
          if (m_stop.load(std::memory_order_relaxed)) return;
          const std::uint64_t n = std::min(step, offset + bytes - at);
          if (c.heap_reserved(at, n, poll_seconds)) {
            // In pieces: populating holds the process's memory-map lock (for reading), which
            // the application's own mmap and munmap (a large malloc) wait for.
            constexpr std::uint64_t piece = 1u << 20;
            for (std::uint64_t p = at; p < at + n && !m_stop.load(std::memory_order_relaxed);
                 p += piece)
              c.prefault(p, std::min(piece, at + n - p));
            at += n;
          } else if (c.heap_reservation_stopped()) {
            return;  // the writes that need these pages report why
          }
        }
      })) {}

window_mapper::~window_mapper() {
  m_stop.store(true, std::memory_order_relaxed);
  if (m_thread.joinable()) m_thread.join();
}

}  // namespace sidecore::transports
