// The simulation's side: layouts evaluated with this process's parameters, the write paths
// (copy and zero-copy), iterations and signals, and every check a call needs whatever the mode.
// What is handed over goes to the client's one engine (engines/engine.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <memory_resource>
#include <string>
#include <string_view>
#include <vector>

#include "client/allocation_slots.hpp"
#include "client/block_registry.hpp"
#include "client/parameters.hpp"
#include "config/model.hpp"
#include "protocol/message.hpp"
#include "transports/engine.hpp"

namespace sidecore::client {

// Plain counters of the client's own thread: raising one costs an add, nothing more.
struct client_counters {
  std::uint64_t blocks_written = 0;  // handed over to the engine
  std::uint64_t bytes_written = 0;
  std::uint64_t iterations_skipped = 0;  // buffer full under policy="skip"
  std::uint64_t blocks_dropped = 0;
  std::uint64_t bytes_dropped = 0;
  double seconds_in_calls = 0.0;  // with SIDECORE_WRITE_TIMES only (see call_timer)
};

// With SIDECORE_WRITE_TIMES=1, one per ended iteration: the time this client spent in its
// write calls (write, alloc, commit, clear, end_iteration), and when the iteration ended (run
// clock). Off by default: two clock reads per call are a measurable share of a small write.
struct iteration_time {
  float write_seconds = 0.0f;
  double ended = 0.0;
};

// One per process, aligned so that the fields every call reads (the first kilobyte) lie on one
// page: after a compute phase each page is a miss of its own.
class alignas(1024) client {
 public:
  // client_index: this process among all clients; engine: where its data goes.
  client(const config::model& model, int client_index, std::unique_ptr<transports::engine> engine);
  ~client();

  void write(std::string_view variable, int block, const void* data);
  // A block reserved by alloc_shaped: its memory, element type and extents (C order, ghost
  // zones included; the extents are valid until the client's next call).
  struct allocated_block {
    void* address = nullptr;
    config::element_type type = config::element_type::int8;
    const extent_list* extents = nullptr;
  };
  allocated_block alloc_shaped(std::string_view variable, int block);
  void* alloc(std::string_view variable, int block) {
    return alloc_shaped(variable, block).address;
  }
  void commit(std::string_view variable, int block, int iteration);
  void clear(std::string_view variable, int block, int iteration);
  void signal(std::string_view event_name);
  void end_iteration();
  int iteration() const noexcept { return m_iteration; }

  sidecore::client::parameters& parameter_table() noexcept { return m_parameters; }
  void set_position(std::string_view variable, int block, const std::int64_t* position);
  // The block's own extents (program order, as many as the layout has dimensions) for its
  // writes and allocations from now on; nullptr goes back to the layout's.
  void set_extents(std::string_view variable, int block, const std::int64_t* extents);

  // No more data: tells the server (dedicated) or stores what is left (synchronous).
  void stop();
  // A second damaris_start after damaris_stop: accepts data again, iterations carrying on.
  void resume();
  bool stopped() const noexcept { return m_stopped; }
  // The client enters (true) or leaves its compute phase (sidecore_compute_begin/end); after
  // damaris_stop it changes nothing.
  void compute_phase(bool computing);
  // Returns once every iteration this client has ended is stored (damaris_sync).
  void sync();
  const client_counters& counters() const noexcept { return m_counters; }
  // This client's engine: its writer's live counters (sidecore_stats).
  const transports::engine& engine() const noexcept { return *m_engine; }
  // Empty unless SIDECORE_WRITE_TIMES=1.
  const std::vector<iteration_time>& iteration_times() const noexcept { return m_times; }
  bool times_calls() const noexcept { return m_time_calls; }

 private:
  // The allocation of (variable, block, iteration), or nullptr.
  allocation* find_allocation(std::size_t variable, int block, int iteration);
  // The block's allocation (if any) is cleared: its slot is freed for the next one.
  void forget_allocation(std::size_t variable, int block) noexcept;

  std::size_t variable_index(std::string_view name) const;
  void check_block(std::size_t variable, int block) const;
  void check_running(const char* call) const;
  // Throws DAMARIS_INVALID_DIMENSIONS when the block's interior is empty or, for a variable
  // with global extents, lies outside them at the block's position.
  void check_placement(std::size_t variable, int block, const evaluated_layout& shape,
                       const extent_list& position) const;
  [[noreturn]] void throw_misplaced(std::size_t variable, int block, const evaluated_layout& shape,
                                    const extent_list& position) const;
  // Throws DAMARIS_ALLOCATION_ERROR when no buffer of this mode could ever hold the block.
  void check_fits(std::size_t variable, std::uint64_t bytes) const;
  // The variable's layout as evaluated now; throws DAMARIS_INVALID_DIMENSIONS when unusable
  // and DAMARIS_ALLOCATION_ERROR when too large for the buffer.
  const evaluated_layout& checked_shape(std::size_t variable) const;
  // Throws DAMARIS_INVALID_DIMENSIONS for a shape checked_shape found unusable.
  [[noreturn]] void throw_unusable_shape(std::size_t variable, const evaluated_layout& shape) const;
  // The shape of one block: checked_shape, or the layout with the block's own extents (then
  // valid until the next call).
  const evaluated_layout& block_shape(std::size_t variable, const block_settings& settings);
  // Each block is handed over once per iteration (written, or allocated): a second time
  // would make two blocks with the same (variable, iteration, source, block) key.
  void check_not_handed_over(std::size_t variable, int block, const block_settings& settings) const;
  // Memory for a block from the engine; empty when policy="skip" drops it (the rest of the
  // iteration is then dropped too). data: the block's bytes, copied in by the engine and
  // handed over next, with no other engine call in between (damaris_write), which lets an
  // engine pack it with others.
  transports::reservation reserve(std::size_t variable, std::uint64_t bytes,
                                  const void* data = nullptr);
  protocol::message block_message(std::size_t variable, int block, int iteration,
                                  std::uint64_t offset, const evaluated_layout& shape,
                                  const extent_list& position) const;
  // Hands a block described by m over to the engine; owned is its process memory (empty for
  // shared memory).
  void hand_over(const protocol::message& m, block_buffer owned);
  void note_dropped(std::uint64_t bytes);
  // Commits a block allocated at or before this iteration and never committed, with a warning
  // (once per variable); out of end_iteration's code, which runs it rarely.
  void commit_left_over(const allocation& a);
  void mark_skipped(std::size_t variable);

  // Adds the time of one call to the iteration's write time, when SIDECORE_WRITE_TIMES asks.
  class call_timer;
  void close_iteration_time(double seconds) noexcept;

  const config::model& m_model;
  int m_client_index;
  std::unique_ptr<transports::engine> m_engine;

  // The tables every call reads (names, layouts, block settings, allocations) are allocated
  // one after the other, the small ones first, from one allocation sized for them: after a
  // compute phase a call finds them on two or three pages, not on a page per table wherever
  // the heap put it (bench/run_cold_write.py counts those pages).
  std::pmr::monotonic_buffer_resource m_arena;
  config::name_index m_names;                // variable name -> index in the model
  std::pmr::vector<std::uint32_t> m_layout;  // variable -> index of its layout
  sidecore::client::parameters m_parameters;
  // Allocated blocks until cleared, each found from its block's settings.
  allocation_slots m_allocations;
  block_registry m_blocks;  // after the smaller tables: it holds every declared block
  int m_iteration = 0;
  bool m_iteration_skipped = false;
  bool m_stopped = false;
  bool m_skip_reported = false;
  client_counters m_counters;
  std::uint64_t m_dropped_this_iteration = 0;  // bytes, told to the writer at its end
  bool m_time_calls = false;
  bool m_in_call = false;       // a call_timer runs
  double m_call_seconds = 0.0;  // in calls of the current iteration
  std::vector<iteration_time> m_times;
  // Last: only a block with its own extents reads it.
  evaluated_layout m_block_shape;  // block_shape's result for a block with its own extents
};

}  // namespace sidecore::client
