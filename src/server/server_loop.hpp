// The event loop of a dedicated core: drains its clients' rings, indexes blocks, stores
// complete iterations, runs events; sleeps on a futex when there is nothing to do.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "config/model.hpp"
#include "server/active_buffer.hpp"
#include "server/event_dispatcher.hpp"
#include "server/iteration_processor.hpp"
#include "topology/topology.hpp"
#include "transport/channel.hpp"

namespace sidecore::server {

class server_loop {
 public:
  server_loop(const config::model& model, const topology::layout& topo, transport::channel& channel);
  // Runs until every client of this server has stopped, then stores what is left.
  void run();
  const processor_counters& counters() const noexcept { return m_processor.counters(); }
  // The first store failure not yet reported ("" if none), and forgets it.
  std::string take_failure() { return m_processor.take_failure(); }
  std::uint64_t heap_high_water() const;
  const active_buffer_counters& buffer_counters() const noexcept { return m_buffer.counters(); }

 private:
  bool drain();  // true when at least one message was handled
  // Stores the oldest complete iteration, first moving younger ones out of a crowded buffer.
  void store_one();
  void rescue_waiting_writers();
  // Tells the clients, through the segment, that stores failed (their next end of iteration
  // or sync reports it).
  void publish_failures();
  void handle(std::uint32_t slot, const transport::message& m);

  const config::model& m_model;
  const topology::layout& m_topo;
  transport::channel& m_channel;
  active_buffer m_buffer;  // before m_processor: buffered blocks point into it
  iteration_processor m_processor;
  event_dispatcher m_events;
  std::vector<char> m_stopped;
  std::uint32_t m_stopped_count = 0;
  std::uint64_t m_published_failures = 0;
};

}  // namespace sidecore::server
