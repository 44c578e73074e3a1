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
#include "memory/buffer_pool.hpp"
#include "protocol/client_phase.hpp"
#include "protocol/live_stats.hpp"
#include "protocol/message.hpp"
#include "storing/event_dispatcher.hpp"
#include "storing/iteration_processor.hpp"
#include "topology/topology.hpp"
#include "transports/dedicated_nodes/mpi_sender.hpp"
#include "transports/transport.hpp"

namespace sidecore::transports {

class remote_server_loop : public server {
 public:
  remote_server_loop(const config::model& model, const topology::layout& topo, MPI_Comm link);
  ~remote_server_loop() override;
  remote_server_loop(const remote_server_loop&) = delete;
  remote_server_loop& operator=(const remote_server_loop&) = delete;
  void run() override;
  std::string take_failure() override { return m_processor.take_failure(); }
  const storing::iteration_processor& processor() const noexcept override { return m_processor; }
  const protocol::live_stats& stats() const noexcept override { return m_stats; }
  std::uint64_t buffer_high_water() const noexcept override { return m_high_water; }
  std::uint64_t messages_rejected() const noexcept override { return m_rejected_total; }

 private:
  struct client_state {
    int rank = -1;                        // in the link communicator
    std::deque<protocol::message> queue;  // announced, not yet handled, in order
    block_buffer buffer;                  // data being received for queue.front()
    MPI_Request request = MPI_REQUEST_NULL;
    bool stopped = false;
    std::int64_t ended = 0;          // iterations it has ended
    std::uint64_t rejected = 0;      // malformed notifications dropped
    std::set<std::int32_t> tainted;  // iterations it lost a notification of
  };
  // "" when a notification from this client can be used; otherwise what is wrong with it.
  std::string problem_of(std::uint32_t slot, const protocol::message& m) const;
  void reject(std::uint32_t slot, const protocol::message& m, const std::string& problem);
  bool receive_announcements();
  bool advance(std::uint32_t slot);
  // Hands the blocks of a packed group (received into `group`) to the processor, each checked
  // as a block; the first malformed one ends the group (its size cannot be trusted).
  void unpack(std::uint32_t slot, const protocol::message& m, block_buffer group);
  void handle_control(std::uint32_t slot, const protocol::message& m);
  void account_stored(std::uint64_t stored_before);
  void answer_syncs();
  // Sends each client still running the store failures so far (and the first one's message)
  // when their count grew: their next end of iteration or sync reports it, as with dedicated
  // cores.
  void publish_failures();
  bool finished() const;
  // Whether the schedule lets this client's next block be pulled now (phase).
  bool may_pull(std::uint32_t slot) const noexcept;
  void trace_pull(std::uint32_t slot, const protocol::message& m);

  const config::model& m_model;
  MPI_Comm m_link;
  storing::iteration_processor m_processor;
  storing::event_dispatcher m_events;
  std::vector<client_state> m_clients;
  std::map<int, std::uint32_t> m_slot_of_rank;
  std::uint64_t m_budget;
  std::uint64_t m_in_use = 0;
  std::uint64_t m_high_water = 0;
  std::vector<std::pair<int, std::int32_t>> m_sync_requests;  // (rank, iterations)
  std::vector<config::ghost_widths> m_ghosts;  // per layout, to check blocks' interiors
  std::uint64_t m_rejected_total = 0;
  // What each client does, from its phase messages (<schedule policy="phase"> or self).
  std::unique_ptr<protocol::client_phase[]> m_phases;
  bool m_pull_by_phase = false;
  std::FILE* m_pull_trace = nullptr;  // <trace>.<writer>.pulls.csv
  protocol::live_stats m_stats;
  // Failure reports: the count last sent, the first failure's protocol::message, reports in flight.
  std::uint64_t m_published_failures = 0;
  std::string m_first_failure;
  std::deque<std::pair<std::unique_ptr<failure_report>, MPI_Request>> m_reports;
};

}  // namespace sidecore::transports
