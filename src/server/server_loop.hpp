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
#include "server/active_buffer.hpp"
#include "server/event_dispatcher.hpp"
#include "server/iteration_processor.hpp"
#include "topology/topology.hpp"
#include "transport/channel.hpp"

namespace sidecore::server {

class server_loop {
 public:
  server_loop(const config::model& model, const topology::layout& topo,
              transport::channel& channel);
  // Runs until every client of this server has stopped, then stores what is left.
  void run();
  const processor_counters& counters() const noexcept { return m_processor.counters(); }
  // Live values and per-iteration records (run report).
  const iteration_processor& processor() const noexcept { return m_processor; }
  // The first store failure not yet reported ("" if none), and forgets it.
  std::string take_failure() { return m_processor.take_failure(); }
  std::uint64_t heap_high_water() const;
  const active_buffer_counters& buffer_counters() const noexcept { return m_buffer.counters(); }
  // Notifications refused so far: malformed ones, from a buggy or dying client. Each is
  // counted as a store failure reported to the clients, and its iteration stored incomplete.
  std::uint64_t messages_rejected() const noexcept { return m_rejected_total; }
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
  void handle(std::uint32_t slot, const transport::message& m);
  // "" when the notification read from slot's ring can be used; otherwise what is wrong.
  std::string problem_of(std::uint32_t slot, const transport::message& m) const;
  // Drops a bad notification: logged (once per client), counted, its iteration marked
  // incomplete, its memory given back when it is a range the client really holds.
  void reject(std::uint32_t slot, const transport::message& m, const std::string& problem);
  // A shared range no block of the server holds and no free range covers.
  bool unclaimed(std::uint64_t offset, std::uint64_t bytes) const;
  // Gives shared ranges of stored or moved blocks back to the heap.
  void release(const std::vector<transport::heap_extent>& ranges);

  const config::model& m_model;
  const topology::layout& m_topo;
  transport::channel& m_channel;
  // Before m_buffer and m_processor, whose releases (until their destructors) update it:
  // offset -> end of each shared range held by a block of this server.
  std::map<std::uint64_t, std::uint64_t> m_held;
  std::uint64_t m_shared_held = 0;  // bytes of the ranges in m_held (live counters)
  std::uint64_t m_shared_peak = 0;
  active_buffer m_buffer;  // before m_processor: buffered blocks point into it
  iteration_processor m_processor;
  event_dispatcher m_events;
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

}  // namespace sidecore::server
