// The simulation's side: layouts evaluated with this process's parameters, the write paths
// (copy and zero-copy), iterations and signals. Sends to a dedicated core through a channel,
// or, without one, stores synchronously in damaris_end_iteration().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "client/background_writer.hpp"
#include "client/parameters.hpp"
#include "config/model.hpp"
#include "server/iteration_processor.hpp"
#include "transport/channel.hpp"
#include "transport/mpi_sender.hpp"

namespace sidecore::client {

struct client_counters {
  std::uint64_t blocks_written = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t iterations_skipped = 0;  // buffer full under policy="skip"
  std::uint64_t blocks_dropped = 0;
  std::uint64_t bytes_dropped = 0;
};

class client {
 public:
  // With dedicated cores and policy="wait", how many iterations a client may run ahead of
  // the slowest client of its dedicated core before damaris_end_iteration waits for it.
  static constexpr int max_iterations_ahead = 4;

  // Where the blocks go: a dedicated core's channel (slot: this client's ring), or, without
  // one, stores run in this process, synchronously or on a background thread, with writers
  // as their communicator.
  struct sink {
    transport::channel* channel = nullptr;
    std::uint32_t slot = 0;
    MPI_Comm writers = MPI_COMM_NULL;
    bool background = false;
    int writer_index = -1;  // background thread only, when writers is MPI_COMM_SELF
    int writer_count = -1;
    MPI_Comm finish_comm = MPI_COMM_NULL;  // then: all writers, for the stores' last step
    MPI_Comm link = MPI_COMM_NULL;  // dedicated nodes: messages go to server_rank in link
    int server_rank = -1;
  };
  client(const config::model& model, int client_index, const sink& where);
  ~client();

  void write(std::string_view variable, int block, const void* data);
  void* alloc(std::string_view variable, int block);
  void commit(std::string_view variable, int block, int iteration);
  void clear(std::string_view variable, int block, int iteration);
  void signal(std::string_view event_name);
  void end_iteration();
  int iteration() const noexcept { return m_iteration; }

  sidecore::client::parameters& parameter_table() noexcept { return m_parameters; }
  void set_position(std::string_view variable, int block, const std::int64_t* position);

  // No more data: tells the server (dedicated) or stores what is left (synchronous).
  void stop();
  // A second damaris_start after damaris_stop: accepts data again, iterations carrying on.
  void resume();
  bool stopped() const noexcept { return m_stopped; }
  // Returns once every iteration this client has ended is stored (damaris_sync).
  void sync();
  const client_counters& counters() const noexcept { return m_counters; }

 private:
  // A block from damaris_alloc, until it is cleared. Its notification (shape and position as
  // at alloc time) is prepared at once, so that commit only hands it over.
  struct allocation {
    transport::message block;  // variable, block, iteration, offset, shape, position
    block_buffer owned;  // process memory (no dedicated core), or a dropped (skipped) block
    void* address = nullptr;
    bool committed = false;
    bool dropped = false;
  };
  // The allocation of (variable, block, iteration), or nullptr.
  allocation* find_allocation(std::size_t variable, int block, int iteration);

  std::size_t variable_index(std::string_view name) const;
  void check_block(std::size_t variable, int block) const;
  void check_running(const char* call) const;
  // Throws DAMARIS_INVALID_DIMENSIONS when the block's interior is empty or, for a variable
  // with global extents, lies outside them at the block's position.
  void check_placement(std::size_t variable, int block, const evaluated_layout& shape) const;
  // Throws DAMARIS_ALLOCATION_ERROR when no buffer of this mode could ever hold the block.
  void check_fits(std::size_t variable, std::uint64_t bytes) const;
  // The variable's layout as evaluated now; throws DAMARIS_INVALID_DIMENSIONS when unusable
  // and DAMARIS_ALLOCATION_ERROR when too large for the buffer.
  const evaluated_layout& checked_shape(std::size_t variable) const;
  const std::vector<std::int64_t>& position_of(std::size_t variable, int block) const;
  // Each block is handed over once per iteration (written, or allocated): a second time
  // would make two blocks with the same (variable, iteration, source, block) key.
  void check_not_handed_over(std::size_t variable, int block) const;
  void mark_handed_over(std::size_t variable, int block);
  // Shared memory for a block, or nullptr when policy="skip" drops it.
  void* reserve(std::size_t variable, std::uint64_t bytes, std::uint64_t& offset);
  void send(const transport::message& m, bool wake);
  transport::message block_message(std::size_t variable, int block, int iteration,
                                    std::uint64_t offset, const evaluated_layout& shape,
                                    const std::vector<std::int64_t>& position) const;
  // A control message (end of iteration, signal, stop) to the server, wherever it is.
  void post(const transport::message& m, bool wake);
  // Hands a block described by m over to wherever blocks go; owned is its process memory
  // (empty for shared memory).
  void hand_over(const transport::message& m, block_buffer owned);
  void note_dropped(std::uint64_t bytes);
  // Bounds how far this client runs ahead of the others of its dedicated core.
  void wait_for_slower_clients();
  void mark_skipped(std::size_t variable);
  // Process memory for a block (synchronous or background mode); nullptr when dropped.
  block_buffer reserve_private(std::size_t variable, std::uint64_t bytes);

  const config::model& m_model;
  int m_client_index;
  transport::channel* m_channel;
  std::uint32_t m_slot;
  std::uint64_t m_stretch = 0;  // where this client's searches of the shared heap start
  std::unique_ptr<server::iteration_processor> m_local;  // synchronous mode only
  std::unique_ptr<background_writer> m_background;       // thread mode only
  std::unique_ptr<transport::mpi_sender> m_remote;       // dedicated nodes only

  std::unordered_map<std::string_view, std::size_t> m_variables;
  sidecore::client::parameters m_parameters;
  std::vector<std::vector<std::int64_t>> m_positions;  // variable * domains + block
  std::vector<int> m_handed_over;  // variable * domains + block: last iteration written, or -1
  // Few at a time (variables x domains): a flat vector beats a tree here.
  std::vector<allocation> m_allocations;
  int m_iteration = 0;
  std::int64_t m_slowest_seen = 0;  // iterations the slowest client of the core had ended
  bool m_iteration_skipped = false;
  bool m_stopped = false;
  bool m_skip_reported = false;
  client_counters m_counters;
};

}  // namespace sidecore::client
