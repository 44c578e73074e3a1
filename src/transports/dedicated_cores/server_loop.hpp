// The event loop of a dedicated core: drains its clients' rings, indexes blocks, stores
// complete iterations, runs events; sleeps on a futex when there is nothing to do.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "config/model.hpp"
#include "storing/active_buffer.hpp"
#include "storing/event_dispatcher.hpp"
#include "storing/iteration_processor.hpp"
#include "topology/topology.hpp"
#include "transports/dedicated_cores/channel.hpp"
#include "transports/transport.hpp"

namespace sidecore::transports {

class server_loop : public server {
 public:
  server_loop(const config::model& model, const topology::layout& topo, channel& channel);
  void run() override;
  std::string take_failure() override { return m_processor.take_failure(); }
  const storing::iteration_processor& processor() const noexcept override { return m_processor; }
  const protocol::live_stats& stats() const noexcept override { return m_channel.stats(); }
  std::uint64_t buffer_high_water() const override;
  std::uint64_t messages_rejected() const noexcept override { return m_rejected_total; }
  // What active buffering moved out of the shared buffer, when it did.
  void report_more(int server_index) const override;
  const storing::active_buffer_counters& buffer_counters() const noexcept {
    return m_buffer.counters();
  }
  // Bytes of the shared buffer still in use when the last run ended, all clients stopped and
  // the server holding none: clients allocated them and never announced them (a client
  // killed between the two, or one that stopped with blocks allocated but not committed).
  std::uint64_t unannounced_bytes() const noexcept { return m_unannounced; }

 private:
  bool drain();  // true when at least one message was handled
  // Stores the oldest complete iteration, first moving younger ones out of a crowded buffer.
  void store_one();
  void rescue_waiting_writers();
  // Tells the clients, through the segment, that stores failed (their next end of iteration
  // or sync reports it).
  void publish_failures();
  void handle(std::uint32_t slot, const protocol::message& m);
  // The notifications a client kept in the shared heap while its ring was full, in order.
  void handle_batch(std::uint32_t slot, const protocol::message& batch);
  // "" when the notification read from slot's ring can be used; otherwise what is wrong.
  std::string problem_of(std::uint32_t slot, const protocol::message& m) const;
  // Drops a bad notification: logged (once per client), counted, its iteration marked
  // incomplete, its memory given back when it is a range the client really holds.
  void reject(std::uint32_t slot, const protocol::message& m, const std::string& problem);
  // A shared range no block of the server holds and no free range covers.
  bool unclaimed(std::uint64_t offset, std::uint64_t bytes) const;
  // Gives shared ranges of stored or moved blocks back to the heap.
  void release(const std::vector<memory::heap_extent>& ranges);

  const config::model& m_model;
  const topology::layout& m_topo;
  channel& m_channel;
  // Before m_buffer and m_processor, whose releases (until their destructors) update it:
  // offset -> end of each shared range held by a block of this server.
  std::map<std::uint64_t, std::uint64_t> m_held;
  std::uint64_t m_shared_held = 0;  // bytes of the ranges in m_held (live counters)
  std::uint64_t m_shared_peak = 0;
  storing::active_buffer m_buffer;  // before m_processor: buffered blocks point into it
  storing::iteration_processor m_processor;
  storing::event_dispatcher m_events;
  std::vector<char> m_stopped;
  std::uint32_t m_stopped_count = 0;
  std::uint64_t m_published_failures = 0;
  std::vector<config::ghost_widths> m_ghosts;  // of each layout, to check blocks' interiors
  std::vector<std::int32_t> m_sources;         // the client index of each slot
  std::vector<std::int64_t> m_ended;           // iterations each slot has ended
  std::vector<std::uint64_t> m_rejected;       // notifications refused, per slot
  std::set<std::pair<std::uint32_t, std::int64_t>> m_tainted;  // (slot, iteration) with drops
  // (iteration, variable, block, slot) of the blocks of iterations not yet complete.
  std::set<std::tuple<std::int64_t, std::int32_t, std::int32_t, std::uint32_t>> m_announced;
  std::uint64_t m_rejected_total = 0;
  std::string m_first_rejection;
  std::uint64_t m_unannounced = 0;
};

}  // namespace sidecore::transports
