// What a configuration means for one job: who writes, how many bytes each iteration moves,
// how many iterations the buffer holds, which files the stores write. Computed from the model
// alone, without MPI, for `sidecore validate`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config/model.hpp"

namespace sidecore::cli {

// The four deployments <dedicated .../> selects (docs/design.md).
enum class deployment_mode { dedicated_cores, dedicated_nodes, thread, synchronous };
const char* mode_name(deployment_mode mode) noexcept;  // "dedicated cores", ...

// Ranks of the job and how they land on nodes and roles, as src/topology splits them: servers
// are the last cores of each node or every rank of the last nodes, clients are spread over
// them with topology::server_of_client.
struct deployment {
  deployment_mode mode = deployment_mode::synchronous;
  int ranks = 1;
  int ranks_per_node = 1;
  int nodes = 1;
  int clients = 1;
  int servers = 0;  // dedicated processes; 0 in thread and synchronous modes
  int writers = 1;  // processes that run the stores: the servers, else every client
  // Clients of the busiest and of the least busy writer (1 and 1 without servers).
  int most_clients_per_writer = 1;
  int fewest_clients_per_writer = 1;
};

// Throws config_error, naming the file, when the job cannot run this configuration (a node too
// small for its dedicated cores, no node left for the simulation, more servers than clients),
// as damaris_initialize would on such a job.
deployment plan_deployment(const config::model& model, int ranks, int ranks_per_node);

// One enabled variable as a client writes it, with the parameters' initial values.
struct variable_plan {
  std::size_t index = 0;                        // into model.variables
  std::vector<std::int64_t> dimensions;         // C order, ghosts included
  std::vector<std::int64_t> global_dimensions;  // empty when the layout gives none
  config::ghost_widths ghosts;
  std::uint64_t block_bytes = 0;   // what damaris_write copies: every element, ghosts included
  std::uint64_t stored_bytes = 0;  // the interior, in the layout's type (raw_bytes of the files)
  // The block's room in a dedicated core's shared buffer: whole 64-byte lines.
  std::uint64_t shared_buffer_bytes = 0;
  int blocks_per_client = 1;         // <domains count>
  std::vector<std::string> stores;   // names
  std::vector<std::string> actions;  // <pyscript> and action plugin names
};

// A buffer and what one iteration puts in it.
struct buffer_use {
  std::string holder;  // "each dedicated core", "each client process", ...
  std::uint64_t capacity = 0;
  std::uint64_t bytes_per_iteration = 0;  // in the fullest such buffer
  // capacity / bytes_per_iteration; negative when nothing is written.
  double headroom() const noexcept;
};

struct buffer_plan {
  std::string name;
  std::uint64_t size = 0;  // as written in <buffer size>
  // Empty in synchronous mode: blocks then live in the client's memory until the end of the
  // iteration and the buffer only bounds the size of one block.
  std::vector<buffer_use> uses;
  std::uint64_t memory_per_node = 0;  // set aside for buffers on a (full) node
  // The smallest headroom over uses; negative when there is none to speak of.
  double headroom() const noexcept;
};

// The files one store writes.
struct store_plan {
  std::size_t index = 0;  // into model.stores
  std::string kind;       // "HDF5", "null", or "plugin"
  std::string file_mode;  // HDF5: "FilePerCore" or "Collective"
  std::string files_path;
  int writers = 0;
  std::vector<std::string> variables;  // enabled variables stored, full names
  // Per stored iteration, with "<i>" for the iteration: one entry per file pattern.
  std::vector<std::string> iteration_files;
  std::string master_file;  // FilePerCore with VirtualView and global data; "" otherwise
  std::string xdmf_file;    // "" without
  std::vector<std::string> first_files;          // every file of the first stored iteration (0)
  std::vector<std::string> datasets;             // one pattern per variable
  std::uint64_t bytes_per_stored_iteration = 0;  // data of every writer (raw, before filters)
  std::uint64_t bytes_per_writer = 0;            // of the busiest writer
  std::vector<std::string> notes;
};

struct plan {
  deployment job;
  std::vector<variable_plan> variables;  // enabled variables, in model order
  std::uint64_t bytes_per_client = 0;    // per iteration, every variable and domain
  std::uint64_t bytes_per_writer = 0;    // per iteration, the busiest writer's clients
  std::uint64_t bytes_per_job = 0;
  buffer_plan buffer;
  std::vector<store_plan> stores;
  // Findings beyond the parser's, "file:line: message" when a line applies.
  std::vector<std::string> warnings;
};

// Headroom below this many iterations is a warning: a writer that falls one iteration
// behind then stops its clients.
inline constexpr double low_headroom = 2.0;

// Everything above. Store options are checked by the stores' own code (config_error as
// damaris_initialize reports it); nothing is created on disk.
plan make_plan(const config::model& model, const deployment& job);

}  // namespace sidecore::cli
