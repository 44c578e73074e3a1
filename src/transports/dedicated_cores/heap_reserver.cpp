#include "transports/dedicated_cores/heap_reserver.hpp"

#include <string>

#include "common/log.hpp"

namespace sidecore::transports {

heap_reserver::heap_reserver(channel& c)
    : m_thread([this, &c] {
        const std::string failure = c.reserve_heap_rest(m_stop);
        if (!failure.empty()) log::error(failure);
      }) {}

heap_reserver::~heap_reserver() {
  m_stop.store(true, std::memory_order_relaxed);
  if (m_thread.joinable()) m_thread.join();
}

}  // namespace sidecore::transports
