// What a client hands over, and to whom: one engine per transport (dedicated cores over shared
// memory, dedicated nodes over MPI, a background thread, inline stores). The client keeps what
// every mode shares (variables, parameters, positions, checks) and talks to its engine only.
#pragma once

#include <cstdint>
#include <cstring>

#include "common/hot_path.hpp"
#include "config/model.hpp"
#include "memory/buffer_pool.hpp"
#include "protocol/client_phase.hpp"
#include "protocol/live_stats.hpp"
#include "protocol/message.hpp"

namespace sidecore::storing {
class iteration_processor;
}

namespace sidecore::transports {

// Memory for one block: where to put its bytes, and how the engine will know them again.
struct reservation {
  void* address = nullptr;   // nullptr: dropped by policy="skip" (the buffer is full)
  std::uint64_t offset = 0;  // offset in the shared buffer (dedicated cores)
  block_buffer owned;        // process memory (every other engine)
  explicit operator bool() const noexcept { return address != nullptr; }
};

// Calls come from the client's thread, in program order. Every wait has the buffer's timeout
// as deadline and throws (DAMARIS_ALLOCATION_ERROR or DAMARIS_CHANNEL_ERROR) when it passes.
class engine {
 public:
  virtual ~engine() = default;

  // Largest block the engine's buffer could ever hold, and the buffer's name for messages.
  virtual std::uint64_t capacity() const noexcept = 0;
  virtual const char* buffer_name() const noexcept = 0;

  // Memory for a block of `bytes`; waits under policy="wait", returns an empty reservation
  // under policy="skip" when the buffer is full.
  virtual reservation reserve(std::uint64_t bytes) = 0;
  // As reserve, filled with the `bytes` at `data`, for a block the caller commits next with
  // no other call in between (damaris_write): engines may pack such blocks together, or copy
  // into the part of their memory that is ready while the rest is being prepared.
  SIDECORE_HOT_PATH virtual reservation copy_in(const void* data, std::uint64_t bytes) {
    reservation r = reserve(bytes);
    if (r) std::memcpy(r.address, data, bytes);
    return r;
  }
  // Hands a block over: m describes it (its offset, for shared memory); owned is its memory
  // when the engine gave process memory.
  virtual void commit(const protocol::message& m, block_buffer owned) = 0;
  // An event whose action runs where the data is (execution="remote"); index in model::events.
  virtual void signal(const config::event& event, std::size_t index, int iteration) = 0;
  // The client ended `iteration` (skipped: some of its blocks were dropped, dropped_bytes of
  // them, which the writer counts).
  virtual void end_iteration(int iteration, bool skipped, std::uint64_t dropped_bytes) = 0;
  // After the client moved on to iteration `started`: may wait (dedicated cores bound how far
  // a client runs ahead) or report the failure of a store that ran inline.
  virtual void iteration_started(int started) { (void)started; }
  // Returns once the first `iterations` iterations are stored.
  virtual void sync(int iterations) = 0;
  // No more data (damaris_stop), and data again (a second damaris_start); iteration is the
  // client's current one.
  virtual void stop(int iteration) = 0;
  // The client enters a phase (sidecore_compute_begin/end): engines whose writer schedules by
  // phase (<schedule policy="phase">) publish it there; the others ignore it.
  virtual void phase(protocol::client_phase::state now) { (void)now; }
  virtual void resume(int iteration) = 0;
  // The live counters of this client's writer, readable at any time from the client's thread
  // without waiting for the writer; nullptr when the writer is out of reach (dedicated nodes).
  virtual const protocol::live_stats* writer_stats() const noexcept { return nullptr; }
  // The writer when it runs in this process (background thread, synchronous stores): its
  // records, for the run report once the client stopped; nullptr otherwise.
  virtual const storing::iteration_processor* local_writer() const noexcept { return nullptr; }
};

}  // namespace sidecore::transports
