// Client side of dedicated nodes: blocks wait in process memory until their server pulls
// them. A block is announced with a small message; its data is sent with a non-blocking send
// that completes when the server, having room, posts the matching receive (server-directed
// transfer). The client only blocks when its own buffer is full.
// Small blocks written whole (damaris_write) are packed: each its notification followed by its
// data in one buffer, sent as one block of kind packed_blocks when the buffer is full or
// before any other message (the server sees everything in the order it was written), so that
// a block costs a copy instead of two messages.
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
// The most bytes of packed blocks sent at once (a quarter of the buffer when that is less).
inline constexpr std::uint64_t most_packed_bytes = 256 * 1024;

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

  // Whether a block of `bytes` written whole travels packed (reserve_packed).
  bool packs(std::uint64_t bytes) const noexcept { return bytes <= m_packed_block_limit; }
  // Room for such a block in the packed buffer, to be filled at once and handed over by
  // commit_packed before any other call. Only when has_packed_room(bytes): it never waits.
  void* reserve_packed(std::uint64_t bytes);
  // Whether a block reserve_packed made room for awaits its commit_packed.
  bool packed_block_open() const noexcept { return m_packed_open; }
  // Hands over that block (m.bytes its size).
  void commit_packed(const protocol::message& m);
  // Whether the packed buffer has room for a block of `bytes`, or a new one fits the budget.
  bool has_packed_room(std::uint64_t bytes);
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
  // std::deque keeps its elements in place: the header is sent from here.
  struct pending {
    protocol::message header;
    block_buffer data;
    std::uint64_t bytes = 0;  // of the budget, returned at completion
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  };
  // Posts the header and, if data, `length` bytes of it; `budgeted` returns to the budget once
  // both sends complete.
  void post(const protocol::message& m, block_buffer data, std::uint64_t length,
            std::uint64_t budgeted);
  // Sends the packed blocks, if any (before any other message).
  void send_packed();
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

  // Packed blocks (sizes from the buffer's budget: a quarter of it at most, 256 KiB at most).
  std::uint64_t m_packed_capacity = 0;
  std::uint64_t m_packed_block_limit = 0;  // larger blocks travel alone; 0: none packed
  block_buffer m_packed;                   // holds m_packed_capacity of the budget
  std::uint64_t m_packed_used = 0;
  std::uint32_t m_packed_blocks = 0;
  std::int32_t m_packed_iteration = 0;
  std::int32_t m_packed_source = 0;
  std::uint64_t m_packed_reserved = 0;  // where the reserved block's notification goes
  bool m_packed_open = false;           // a reserve_packed awaits its commit_packed
};

}  // namespace sidecore::transports
