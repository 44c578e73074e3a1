// The live counters of one writer (a dedicated core or node, a background I/O thread, the
// synchronous stores of a client), published where its clients can read them without asking:
// in the shared segment for dedicated cores, in process memory otherwise. One writer publishes,
// any number of readers copy; a sequence number (even when stable) lets a reader tell a torn
// copy and try again, so that neither side ever waits for the other.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace sidecore::protocol {

// Plain values, all 64-bit so that they can be copied word by word. Bytes are payload bytes
// (the blocks' sizes); times are in nanoseconds. Cumulative unless said otherwise.
struct live_values {
  std::uint64_t bytes_received = 0;  // blocks handed to the writer
  std::uint64_t blocks_received = 0;
  std::uint64_t bytes_buffered = 0;   // now: the writer's buffer in use (shared buffer, or budget)
  std::uint64_t buffer_peak = 0;      // most of the buffer ever in use at once
  std::uint64_t buffer_capacity = 0;  // the buffer's size
  std::uint64_t bytes_spilled = 0;    // moved into spill files (active buffering)
  std::uint64_t bytes_in_server_memory = 0;  // now: moved out of the shared buffer, not stored
  std::uint64_t bytes_written = 0;           // of iterations every store accepted
  std::uint64_t bytes_dropped = 0;        // skipped by clients (policy="skip") plus failed stores
  std::uint64_t bytes_skipped = 0;        // of which skipped by clients
  std::uint64_t bytes_failed = 0;         // of which in iterations a store failed on
  std::uint64_t bytes_pending = 0;        // now: received, not yet stored
  std::uint64_t iterations_complete = 0;  // ended by every client of the writer
  std::uint64_t iterations_stored = 0;
  std::uint64_t iterations_incomplete = 0;  // stored with data missing
  std::uint64_t store_failures = 0;
  std::uint64_t latency_count = 0;  // iterations timed (ended by all, then stored)
  std::uint64_t latency_min_ns = 0;
  std::uint64_t latency_max_ns = 0;
  std::uint64_t latency_sum_ns = 0;
  std::uint64_t latency_last_ns = 0;
  std::uint64_t store_ns = 0;        // time in the stores
  std::uint64_t throughput_bps = 0;  // recent store throughput, bytes per second (0: unknown)
  std::uint64_t debt_ns = 0;         // now: bytes_pending at throughput_bps
};
static_assert(std::is_trivially_copyable_v<live_values> &&
                  sizeof(live_values) % sizeof(std::uint64_t) == 0,
              "live values are copied as 64-bit words");

// Lives in shared memory (channel's header) or in process memory: atomics only, no pointer.
class live_stats {
 public:
  static constexpr std::size_t words = sizeof(live_values) / sizeof(std::uint64_t);

  // The one writer: readers that copy meanwhile see an odd sequence, or a changed one.
  void publish(const live_values& v) noexcept {
    std::uint64_t raw[words];
    std::memcpy(raw, &v, sizeof raw);
    const std::uint64_t s = m_sequence.load(std::memory_order_relaxed);
    m_sequence.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    for (std::size_t i = 0; i < words; ++i) m_words[i].store(raw[i], std::memory_order_relaxed);
    m_sequence.store(s + 2, std::memory_order_release);
  }

  // Any reader: a consistent copy, unless the writer kept publishing during every one of
  // `attempts` tries, or was descheduled in the middle of a publication meanwhile (a writer
  // publishes once per iteration or store, so this takes one try but for a rare collision);
  // then the last copy, each value valid but not all of the same moment, and *whole (when
  // given) is false. False when nothing was published yet.
  static constexpr int attempts = 1024;
  bool read(live_values& out, bool* whole = nullptr) const noexcept {
    std::uint64_t raw[words];
    std::uint64_t before = 0;
    bool consistent = false;
    for (int attempt = 0; attempt < attempts && !consistent; ++attempt) {
      before = m_sequence.load(std::memory_order_acquire);
      for (std::size_t i = 0; i < words; ++i) raw[i] = m_words[i].load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      consistent = before % 2 == 0 && m_sequence.load(std::memory_order_relaxed) == before;
    }
    std::memcpy(&out, raw, sizeof raw);
    if (whole) *whole = consistent;
    return before != 0;
  }

 private:
  alignas(64) std::atomic<std::uint64_t> m_sequence{0};
  std::atomic<std::uint64_t> m_words[words] = {};
};

}  // namespace sidecore::protocol
