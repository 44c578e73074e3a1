// sidecore/stats.h: copies counters that are already there (the client's own, its writer's
// published ones); nothing here waits, allocates on success, or talks to another process.
#include "sidecore/stats.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "Damaris.h"
#include "common/c_boundary.hpp"
#include "common/error.hpp"
#include "current_runtime.hpp"
#include "protocol/live_stats.hpp"
#include "runtime/runtime.hpp"

static_assert(offsetof(sidecore_stats_t, bytes_received) == SIDECORE_STATS_MIN_SIZE,
              "SIDECORE_STATS_MIN_SIZE ends where the client's fields end");

namespace {

double seconds_of(std::uint64_t ns) { return static_cast<double>(ns) * 1e-9; }

void fill(const sidecore::client::client& client, sidecore_stats_t& s) {
  const sidecore::client::client_counters& c = client.counters();
  s.client_iterations = static_cast<std::uint64_t>(client.iteration());
  s.client_blocks_written = c.blocks_written;
  s.client_bytes_written = c.bytes_written;
  s.client_blocks_dropped = c.blocks_dropped;
  s.client_bytes_dropped = c.bytes_dropped;
  s.client_iterations_skipped = c.iterations_skipped;
  if (client.times_calls()) {
    s.flags |= SIDECORE_STATS_WRITE_TIMES;
    s.client_write_seconds = c.seconds_in_calls;
  }
  const sidecore::protocol::live_stats* published = client.engine().writer_stats();
  if (!published) return;
  sidecore::protocol::live_values v;
  if (!published->read(v)) return;  // nothing published yet
  s.flags |= SIDECORE_STATS_WRITER;
  s.bytes_received = v.bytes_received;
  s.blocks_received = v.blocks_received;
  s.bytes_buffered = v.bytes_buffered;
  s.buffer_peak = v.buffer_peak;
  s.buffer_capacity = v.buffer_capacity;
  s.bytes_spilled = v.bytes_spilled;
  s.bytes_in_server_memory = v.bytes_in_server_memory;
  s.bytes_written = v.bytes_written;
  s.bytes_dropped = v.bytes_dropped;
  s.bytes_skipped = v.bytes_skipped;
  s.bytes_failed = v.bytes_failed;
  s.bytes_pending = v.bytes_pending;
  s.iterations_complete = v.iterations_complete;
  s.iterations_stored = v.iterations_stored;
  s.iterations_incomplete = v.iterations_incomplete;
  s.store_failures = v.store_failures;
  s.latency_count = v.latency_count;
  if (v.latency_count) {
    s.latency_min = seconds_of(v.latency_min_ns);
    s.latency_mean = seconds_of(v.latency_sum_ns) / static_cast<double>(v.latency_count);
    s.latency_max = seconds_of(v.latency_max_ns);
    s.latency_last = seconds_of(v.latency_last_ns);
  }
  s.store_seconds = seconds_of(v.store_ns);
  s.throughput_bytes_per_second = static_cast<double>(v.throughput_bps);
  s.io_debt_seconds = seconds_of(v.debt_ns);
}

}  // namespace

SIDECORE_API int sidecore_stats(sidecore_stats_t* out) {
  return sidecore::c_boundary::guarded_call("sidecore_stats", [&] {
    if (!out) throw sidecore::argument_error("out is NULL");
    if (out->size < SIDECORE_STATS_MIN_SIZE)
      throw sidecore::argument_error(
          "out->size is " + std::to_string(out->size) + ", less than SIDECORE_STATS_MIN_SIZE (" +
          std::to_string(SIDECORE_STATS_MIN_SIZE) +
          "); set it to sizeof(sidecore_stats_t), or start from SIDECORE_STATS_INIT");
    sidecore::runtime* rt = sidecore::current_runtime();
    if (!rt)
      throw sidecore::error(DAMARIS_NOT_INITIALIZED,
                            "called before damaris_initialize or after damaris_finalize");
    const sidecore::client::client& client = rt->as_client("sidecore_stats");
    sidecore_stats_t s{};
    s.version = SIDECORE_STATS_VERSION;
    fill(client, s);
    // Only what the caller's struct holds: an older, shorter one keeps its bytes beyond.
    const std::uint32_t filled =
        std::min<std::uint32_t>(out->size, static_cast<std::uint32_t>(sizeof s));
    s.size = filled;
    std::memcpy(out, &s, filled);
  });
}

// An alias of damaris_last_error_message(): one error slot per thread (common/c_boundary.hpp).
SIDECORE_API const char* sidecore_stats_last_error(void) {
  return sidecore::c_boundary::last_error();
}
