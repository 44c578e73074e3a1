// Client side of dedicated nodes: blocks wait in process memory until their server pulls
// them. A block is announced with a small message; its data is sent with a non-blocking send
// that completes when the server, having room, posts the matching receive (server-directed
// transfer). The client only blocks when its own buffer is full.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "config/model.hpp"
#include "memory/buffer_pool.hpp"
#include "protocol/message.hpp"

namespace sidecore::transports {

inline constexpr int announce_tag = 7401;
inline constexpr int data_tag = 7402;
inline constexpr int sync_tag = 7403;
inline constexpr int failure_tag = 7404;

// What a dedicated node tells its clients when its stores fail (as the shared segment does for
// dedicated cores): the failures so far and the first one's protocol::message, sent when the count
// grows.
struct failure_report {
  std::uint32_t failures = 0;
  char first[1020] = {};
};
static_assert(sizeof(failure_report) == 1024, "a failure report travels as 1024 bytes");

class mpi_sender {
 public:
  mpi_sender(MPI_Comm link, int server_rank, const config::architecture& arch);
  ~mpi_sender();
  mpi_sender(const mpi_sender&) = delete;
  mpi_sender& operator=(const mpi_sender&) = delete;

  // Memory for a block within the buffer budget; nullptr under policy="skip" when full.
  // Waits (progressing sends) under policy="wait"; allocation_error after the timeout or at
  // once when bytes exceed the whole buffer.
  block_buffer reserve(std::uint64_t bytes);
  // Whether reserve(bytes) would return without waiting for the server.
  bool has_room(std::uint64_t bytes) {
    progress();
    return m_in_use + bytes <= m_budget;
  }
  // Sends a protocol::message, with its data for a block (data must come from reserve()).
  void send(const protocol::message& m, block_buffer data);
  // Frees the memory of completed sends.
  void progress();
  // Waits until the server has stored `iterations` iterations (damaris_sync); source: this
  // client's index, which the request carries.
  void wait_stored(std::int32_t iterations, std::int32_t source);
  // Waits until every send has completed (the server pulled everything), however long that
  // takes, saying so at each timeout without progress. (The destructor, on error paths, waits
  // one timeout at most and reports what was not delivered.)
  void flush();
  // The store failures the server reported since the last call, as one message ("" if none).
  std::string take_store_failures();
  // Ends the job (job_failure::end_job) when the server's process has died; `thorough` reads
  // /proc (after a wait timed out), otherwise one system call. call: what noticed it.
  void end_job_if_server_died(bool thorough, const char* call) const;

  // MPI has no wait with a deadline: waits test their requests and nap between tests
  // (paces::send_completion), so that a completion is noticed within a millisecond while the
  // core is left to others.
  // Once a wait ran out without the server taking anything, later waits give it this long to
  // show life (a completed send) before failing, until it moves again.
  static constexpr double stalled_grace_seconds = 0.05;

 private:
  struct pending {
    std::unique_ptr<protocol::message> header;
    block_buffer data;
    std::uint64_t bytes = 0;
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  };
  // Progresses sends (and what `ready` tests) until ready() holds: true. False when the server
  // takes nothing for the timeout (the grace once stalled), after which it counts as stalled.
  template <typename Ready>
  bool wait_until(Ready ready);
  std::string stalled_message(const std::string& waiting_for) const;

  MPI_Comm m_link;
  int m_server;
  std::uint64_t m_budget;
  std::uint64_t m_in_use = 0;
  config::full_buffer_policy m_policy;
  double m_timeout;
  std::deque<pending> m_pending;
  std::uint64_t m_completed = 0;  // sends completed so far: the server's sign of life
  bool m_stalled = false;         // a wait ran out and the server has taken nothing since
  // Posted for the server's next failure report.
  failure_report m_report;
  MPI_Request m_report_request = MPI_REQUEST_NULL;
  std::uint32_t m_failures_seen = 0;
};

}  // namespace sidecore::transports
