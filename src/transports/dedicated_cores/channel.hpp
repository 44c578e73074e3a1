// The shared segment of one server and its clients: a header, the shared heap, and one
// single-producer/single-consumer ring of messages per client, plus a futex to wake the
// server when it sleeps.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "memory/shared_heap.hpp"
#include "protocol/client_phase.hpp"
#include "protocol/live_stats.hpp"
#include "protocol/message.hpp"
#include "transports/dedicated_cores/shared_segment.hpp"

namespace sidecore::transports {

struct channel_sizes {
  std::uint64_t heap_bytes = 64ull << 20;
  std::uint32_t clients = 1;
  std::uint32_t ring_capacity = 1024;  // messages per client
};

class channel {
 public:
  // The core reserves the windows in steps of this much, publishing its progress after each: a
  // client writing into its window while it is reserved copies each step as soon as it is
  // ready, and is left with one step to copy once the last is (a millisecond's copy when steps
  // were 8 MiB, here). Each client's window mapper maps them in the same steps.
  static constexpr std::uint64_t reserve_step = 2u << 20;

  // Server side: creates the segment. Client side: opens it (after the server created it).
  static channel create(const std::string& name, const channel_sizes& sizes);
  static channel open(const std::string& name);

  channel(channel&&) noexcept = default;
  channel& operator=(channel&&) noexcept = default;

  void unlink() noexcept { m_segment.unlink(); }
  // Creator, after unlink(): reserves the data heap's pages, in two calls. reserve_heap()
  // checks that /dev/shm can hold the heap (throws allocation_error otherwise) and sets the
  // order: the first `window` bytes of every client's stretch (what the first iterations
  // write; a few MiB of each window in turn), then the rest. reserve_heap_rest(), on a background
  // thread of the core, reserves them in that order, publishing its progress, and returns once done
  // (or when `stop` becomes true): start-up does not wait for the pages, and a client waits only
  // for those it writes.
  void reserve_heap(std::uint64_t window);
  // The longest the reservation of the rest waits for one copy (a block of a few hundred MiB,
  // or a copy that never ends: its client died, or threw between the two calls).
  static constexpr std::chrono::milliseconds copy_patience{50};
  // Returns "" when done (or stopped), else what failed (the clients are told too). Beyond the
  // windows, it waits while a client copies a block (begin_copy), unless a client waits for
  // pages, and for at most `patience` per copy.
  std::string reserve_heap_rest(const std::atomic<bool>& stop,
                                std::chrono::milliseconds patience = copy_patience) noexcept;
  // Client `client` copies a block into the heap, from its reservation to its commit: while
  // the core reserves pages beside it, writing zeros takes the memory bandwidth the copy needs
  // (on a node of few cores). Two stores on the line of the ring's tail, which commit writes.
  void begin_copy(std::uint32_t client) noexcept;
  void end_copy(std::uint32_t client) noexcept;
  // Client, after allocating [offset, offset + bytes) of the heap: true once those pages are
  // reserved (at once once the whole heap is); waits for the creator's progress otherwise.
  // False when the reservation stopped before reaching them, or on timeout (<= 0: no timeout,
  // it waits as long as it takes); heap_reservation_error() then says why.
  bool heap_reserved(std::uint64_t offset, std::uint64_t bytes, double timeout_seconds) noexcept {
    if (reserved_fully()) return true;
    return wait_heap_reserved(offset, bytes, timeout_seconds);
  }
  // The same without waiting: true when those pages are reserved now.
  bool heap_ready(std::uint64_t offset, std::uint64_t bytes) const noexcept {
    return reserved_fully() || heap_ready(reservation_needed(offset, bytes));
  }
  // How many of the first bytes of [offset, offset + bytes) are reserved now (all of them once
  // the whole heap is): the part of a block a client can write without waiting.
  std::uint64_t ready_bytes(std::uint64_t offset, std::uint64_t bytes) const noexcept;
  // The reservation's progress at which [offset, offset + bytes) is ready: the order in which
  // reserve_heap_rest() goes (a smaller value is ready sooner).
  std::uint32_t reservation_needed(std::uint64_t offset, std::uint64_t bytes) const noexcept;
  // True once every page of the heap is reserved.
  bool reserved_fully() const noexcept;
  // True when the reservation stopped short (failed, or the core shut down first).
  bool heap_reservation_stopped() const noexcept;
  std::string heap_reservation_error() const;
  // Maps [offset, offset + bytes) of the segment into this process, so that the first write
  // there takes no page fault (see shared_segment::prefault).
  void prefault(std::uint64_t offset, std::uint64_t bytes) noexcept {
    m_segment.prefault(static_cast<std::size_t>(offset), static_cast<std::size_t>(bytes));
  }

  memory::shared_heap& heap() noexcept { return m_heap; }
  std::byte* address(std::uint64_t offset) const noexcept { return m_segment.base() + offset; }
  std::uint32_t client_count() const noexcept;
  // The server's live counters: it publishes, its clients read (never waiting).
  protocol::live_stats& stats() noexcept;
  std::uint32_t ring_capacity() const noexcept;

  // Producer (client slot `client`): false when the ring is full, or would keep fewer than
  // `keep_free` slots free.
  bool try_push(std::uint32_t client, const protocol::message& m,
                std::uint32_t keep_free = 0) noexcept;
  // Messages waiting in a ring, from both ends' indices (the write path uses half_full, which
  // reads the consumer's line only when it must).
  std::uint64_t pending(std::uint32_t client) const noexcept;
  // Producer: true when at least half of its ring's slots hold messages the consumer has not
  // taken. Reads the consumer's progress only when what the producer last read of it says so.
  bool half_full(std::uint32_t client) noexcept;
  // Consumer (server): false when the ring is empty.
  bool try_pop(std::uint32_t client, protocol::message& out) noexcept;

  // Client: wakes the server if it sleeps (cheap when it does not).
  void wake_server() noexcept;
  // Server: sleeps until woken or timeout; call prepare_sleep() first, then check the rings
  // again, then sleep(token, ...). This ordering makes a lost wake-up impossible.
  std::uint32_t prepare_sleep() noexcept;
  void sleep(std::uint32_t token, int timeout_ms) noexcept;
  void end_sleep() noexcept;

  // Server: proof of life, raised at every pass of its loop (not while a store runs).
  void beat() noexcept;
  std::uint64_t heartbeat() const noexcept;

  // Server: iterations stored so far; wakes clients waiting in damaris_sync.
  void publish_stored(std::uint32_t iterations) noexcept;
  // Client: waits until at least `iterations` are stored; false on timeout (<= 0: forever).
  bool wait_stored(std::uint32_t iterations, double timeout_seconds) noexcept;
  // Client: how many iterations it has ended (UINT32_MAX once it has stopped).
  void publish_ended(std::uint32_t client, std::uint32_t iterations) noexcept;
  // What client `client` does (<schedule policy="phase">): it writes, the server reads.
  protocol::client_phase& phase_of(std::uint32_t client) noexcept;
  // The fewest iterations any client of this channel has ended.
  std::uint32_t slowest_ended() const noexcept;

  // Server: its stores have failed `failures` times so far; message: the first failure, kept
  // for the clients (the first published protocol::message stays).
  void publish_store_failures(std::uint32_t failures, const std::string& message) noexcept;
  // Client: store failures published so far, and the first one's message.
  std::uint32_t store_failures() const noexcept;
  std::string first_store_failure() const;

  // Client waits, on a futex (no polling): until its ring has room, or until every client has
  // ended at least `iterations`. False when timeout_seconds (> 0; otherwise none) passes first.
  // The server's pops and the clients' publish_ended() wake them; a pop costs the server one
  // fence and a load while nobody waits.
  bool wait_for_room(std::uint32_t client, double timeout_seconds) noexcept;
  bool wait_for_slowest(std::uint32_t iterations, double timeout_seconds) noexcept;

 private:
  struct published_count;
  struct header;
  struct ring;
  channel(shared_segment segment);
  std::uint64_t window_steps() const noexcept;
  bool heap_ready(std::uint32_t need) const noexcept;
  bool wait_heap_reserved(std::uint64_t offset, std::uint64_t bytes,
                          double timeout_seconds) noexcept;
  header* head() const noexcept { return reinterpret_cast<header*>(m_segment.base()); }
  ring* ring_of(std::uint32_t client) const noexcept;
  protocol::message* slots_of(ring* r) const noexcept;
  // Something a client may wait for happened (a pop, an iteration ended): wake the waiters.
  void note_progress() noexcept;
  template <typename Ready>
  bool wait_for_progress(Ready ready, double timeout_seconds) noexcept;

  shared_segment m_segment;
  memory::shared_heap m_heap;
};

}  // namespace sidecore::transports
