// The event loop of a server on a dedicated node: receives its clients' announcements over MPI
// and pulls each block only when it has room for it (or when the block belongs to the oldest
// iteration not yet stored, so that progress is always possible), and, under a schedule that
// follows phases, only while its client computes (seed 003's server-directed extraction).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/model.hpp"
#include "server/event_dispatcher.hpp"
#include "server/iteration_processor.hpp"
#include "topology/topology.hpp"
#include "transport/buffer_pool.hpp"
#include "transport/client_phase.hpp"
#include "transport/live_stats.hpp"
#include "transport/message.hpp"
#include "transport/mpi_sender.hpp"

namespace sidecore::server {

class remote_server_loop {
 public:
  remote_server_loop(const config::model& model, const topology::layout& topo, MPI_Comm link);
  ~remote_server_loop();
  remote_server_loop(const remote_server_loop&) = delete;
  remote_server_loop& operator=(const remote_server_loop&) = delete;
  void run();
  const processor_counters& counters() const noexcept { return m_processor.counters(); }
  // Live values and per-iteration records (run report).
  const iteration_processor& processor() const noexcept { return m_processor; }
  // The first store failure not yet reported ("" if none), and forgets it.
  std::string take_failure() { return m_processor.take_failure(); }
  std::uint64_t high_water() const noexcept { return m_high_water; }
  // Malformed notifications dropped (see server_loop::messages_rejected).
  std::uint64_t messages_rejected() const noexcept { return m_rejected_total; }
  // The live counters, readable from any thread (what a failed job's message says is stored).
  const transport::live_stats& stats() const noexcept { return m_stats; }

 private:
  struct client_state {
    int rank = -1;                         // in the link communicator
    std::deque<transport::message> queue;  // announced, not yet handled, in order
    block_buffer buffer;                   // data being received for queue.front()
    MPI_Request request = MPI_REQUEST_NULL;
    bool stopped = false;
    std::int64_t ended = 0;          // iterations it has ended
    std::uint64_t rejected = 0;      // malformed notifications dropped
    std::set<std::int32_t> tainted;  // iterations it lost a notification of
  };
  // "" when a notification from this client can be used; otherwise what is wrong with it.
  std::string problem_of(std::uint32_t slot, const transport::message& m) const;
  void reject(std::uint32_t slot, const transport::message& m, const std::string& problem);
  bool receive_announcements();
  bool advance(std::uint32_t slot);
  void handle_control(std::uint32_t slot, const transport::message& m);
  void account_stored(std::uint64_t stored_before);
  void answer_syncs();
  // Sends each client still running the store failures so far (and the first one's message)
  // when their count grew: their next end of iteration or sync reports it, as with dedicated
  // cores.
  void publish_failures();
  bool finished() const;
  // Whether the schedule lets this client's next block be pulled now (phase).
  bool may_pull(std::uint32_t slot) const noexcept;
  void trace_pull(std::uint32_t slot, const transport::message& m);

  const config::model& m_model;
  MPI_Comm m_link;
  iteration_processor m_processor;
  event_dispatcher m_events;
  std::vector<client_state> m_clients;
  std::map<int, std::uint32_t> m_slot_of_rank;
  std::uint64_t m_budget;
  std::uint64_t m_in_use = 0;
  std::uint64_t m_high_water = 0;
  std::vector<std::pair<int, std::int32_t>> m_sync_requests;  // (rank, iterations)
  std::vector<config::ghost_widths> m_ghosts;  // per layout, to check blocks' interiors
  std::uint64_t m_rejected_total = 0;
  // What each client does, from its phase messages (<schedule policy="phase"> or self).
  std::unique_ptr<transport::client_phase[]> m_phases;
  bool m_pull_by_phase = false;
  std::FILE* m_pull_trace = nullptr;  // <trace>.<writer>.pulls.csv
  transport::live_stats m_stats;
  // Failure reports: the count last sent, the first failure's message, reports in flight.
  std::uint64_t m_published_failures = 0;
  std::string m_first_failure;
  std::deque<std::pair<std::unique_ptr<transport::failure_report>, MPI_Request>> m_reports;
};

}  // namespace sidecore::server
