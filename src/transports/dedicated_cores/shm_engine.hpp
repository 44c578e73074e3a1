// Dedicated cores: blocks go into the node's shared buffer and their notifications into this
// client's ring; the dedicated core stores them.
#pragma once

#include <algorithm>
#include <optional>

#include "transports/dedicated_cores/channel.hpp"
#include "transports/dedicated_cores/heap_reserver.hpp"
#include "transports/dedicated_cores/overflow.hpp"
#include "transports/engine.hpp"

namespace sidecore::transports {

class shm_engine final : public engine {
 public:
  // With policy="wait", how many iterations a client may run ahead of the slowest client of
  // its dedicated core before ending an iteration waits for it.
  static constexpr int max_iterations_ahead = 4;

  // slot: this client's ring in the channel; source: its index among all clients;
  // server_rank: the dedicated core's rank in the job (to tell when it has died; -1: unknown);
  // mapper: maps this process's pages of the buffer ahead of the blocks (none: first writes to
  // a page take its fault).
  shm_engine(const config::model& model, channel& channel, std::uint32_t slot, int source,
             int server_rank = -1, window_mapper* mapper = nullptr);

  // How far beyond the end of the furthest block pages are mapped ahead of the writes.
  static constexpr std::uint64_t map_ahead_bytes = 8u << 20;

  std::uint64_t capacity() const noexcept override;
  const char* buffer_name() const noexcept override { return "a dedicated core's shared buffer"; }
  reservation reserve(std::uint64_t bytes) override;
  // As reserve, with the block's bytes copied in; while the core still reserves the heap's
  // pages, see copy_beside_reservation.
  reservation copy_in(const void* data, std::uint64_t bytes) override;
  void commit(const protocol::message& m, block_buffer owned) override;
  void signal(const config::event& event, std::size_t index, int iteration) override;
  void end_iteration(int iteration, bool skipped, std::uint64_t dropped_bytes) override;
  void iteration_started(int started) override;
  void sync(int iterations) override;
  void stop(int iteration) override;
  void resume(int iteration) override;
  void phase(protocol::client_phase::state now) override { m_channel.phase_of(m_slot).enter(now); }
  const protocol::live_stats* writer_stats() const noexcept override { return &m_channel.stats(); }

 private:
  // Into this client's ring, or after the notifications waiting in the shared heap while the
  // ring is full (overflow.hpp); wakes the server when asked (and then hands over what waits)
  // or when the ring is half full. Once a block's notification is taken, it is delivered:
  // only a notification that throws was not taken.
  void send(const protocol::message& m, bool wake);
  // Hands the overflow chain over if a ring slot is free; when `must`, waits for one.
  void post_overflow(bool must);
  // Waits for a free ring slot (the core is behind), within the timeout, and pushes m.
  void push_waiting(const protocol::message& m);
  // Throws storage_error once for the store failures the server published since the last
  // report: the program learns that data it handed over was not stored.
  void report_store_failures();
  // A wait for the dedicated core timed out: until it shows a sign of life, the next waits
  // for it fail at once instead of waiting their whole timeout again.
  // Throws error(code), the code the wait would have ended with.
  void check_server_alive(const char* waiting_for, int code);
  void note_server_stalled();
  // A block's offset in the shared heap: under policy="wait" waits for room (throws when the
  // timeout passes), under policy="skip" none when the heap is full.
  std::optional<std::uint64_t> allocate(std::uint64_t bytes) {
    if (auto got = m_channel.heap().try_allocate(bytes, m_stretch)) return got;
    return allocate_waiting(bytes);
  }
  // allocate once the heap had no room at once.
  std::optional<std::uint64_t> allocate_waiting(std::uint64_t bytes);
  // The reservation of a block allocated, ready and mapped; asks the mapper for pages ahead.
  reservation placed(std::uint64_t offset, std::uint64_t bytes) {
    reservation r;
    r.offset = offset;
    r.address = m_channel.address(offset);
    map_ahead_of(offset + bytes);
    return r;
  }
  // Waits until the core has reserved the first `needed` bytes of the block of `bytes` at
  // `offset`, which this client has allocated; gives the block back and throws
  // allocation_error when they will not be.
  void wait_reserved(std::uint64_t offset, std::uint64_t bytes, std::uint64_t needed);
  // copy_in while the core reserves the heap's pages (the first moments of a run): the core is
  // told that a copy runs (channel::begin_copy) and leaves the pages beside it for later; a
  // block whose pages are not all reserved yet is copied part by part, each as soon as it is
  // (while this client waits for a part, the core goes on).
  void copy_beside_reservation(std::uint64_t offset, const void* data, std::uint64_t bytes);
  // Maps, before the program writes them, the pages of a block beyond every block this
  // process had and beyond the mapper's reach: reading them in, in one system call, maps them
  // writable for about a third of what the program's write faults would cost (the core has
  // allocated them). A block inside what was reached costs one comparison.
  void map_block(std::uint64_t offset, std::uint64_t bytes) {
    const std::uint64_t end = offset + bytes;
    if (end <= m_reached) return;
    const std::uint64_t mapped = std::max(m_reached, m_mapper ? m_mapper->mapped_to() : 0);
    if (end > mapped) {
      const std::uint64_t from = std::max(offset, mapped);
      m_channel.prefault(from, end - from);
      if (m_mapper) m_mapper->skip_to(end);  // its thread need not map them again
    }
    m_reached = end;
  }
  // Once a block ends beyond the first iteration's window (blocks held longer: a slow store or
  // a pipeline on the core), keeps the pages after the furthest block mapped ahead of the next
  // writes. Not before: a run whose blocks reuse its window needs no other pages, and mapping
  // them while the program copied its first iteration slowed that copy by a sixth.
  void map_ahead_of(std::uint64_t end) {
    if (m_mapper && end > m_map_ahead_from) {
      m_map_ahead_from = end + map_ahead_bytes;
      m_mapper->map_ahead(end, end + 2 * map_ahead_bytes);
    }
  }
  // Ends the job (job_failure::end_job) when the dedicated core has died: nothing this client
  // hands over would be stored, and every later call would wait for it. `thorough` also reads
  // /proc (after a wait timed out); otherwise one system call (every end of iteration).
  void end_job_if_server_died(bool thorough, const char* call) const;

  // From the model, kept here: the calls read them, and the model's pages stay cold.
  bool m_waits;      // <buffer policy="wait">: a full buffer blocks the client, for at most...
  double m_timeout;  // ...<buffer timeout=...> seconds, as every other wait for the core
  channel& m_channel;
  std::uint32_t m_slot;
  int m_source;
  int m_server_rank;
  std::uint64_t m_stretch;               // where this client's searches of the shared heap start
  std::uint32_t m_keep_free;             // ring slots plain notifications leave to batches
  overflow_chain m_overflow;             // notifications that found the ring full
  std::int64_t m_slowest_seen = 0;       // iterations the slowest client of the core had ended
  std::uint32_t m_failures_seen = 0;     // store failures of the server already reported here
  bool m_server_stalled = false;         // a wait for the server timed out...
  std::uint64_t m_stalled_at = 0;        // ...when its heartbeat was this
  std::uint64_t m_beat_at_last_end = 0;  // the core's heartbeat at the last end of iteration
  window_mapper* m_mapper;               // the setup's, which outlives the engine; may be null
  std::uint64_t m_map_ahead_from;        // a block ending beyond this asks the mapper for more
  std::uint64_t m_reached = 0;           // the end of the furthest block so far
};

}  // namespace sidecore::transports
