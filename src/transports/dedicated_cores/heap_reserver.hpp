// Reserves the rest of a channel's shared heap on a background thread of its dedicated core,
// while the clients already write into the windows reserved at start-up (channel::reserve_heap).
#pragma once

#include <atomic>
#include <thread>

#include "transports/dedicated_cores/channel.hpp"

namespace sidecore::transports {

class heap_reserver {
 public:
  // Starts at once; a failure is logged (and the clients are refused the pages not reserved).
  explicit heap_reserver(channel& c);
  // Stops between two steps and waits for the thread.
  ~heap_reserver();
  heap_reserver(const heap_reserver&) = delete;
  heap_reserver& operator=(const heap_reserver&) = delete;

 private:
  std::atomic<bool> m_stop{false};
  std::thread m_thread;
};

}  // namespace sidecore::transports
