// The storage plugin interface: a store receives every block of a completed iteration.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/model.hpp"

namespace sidecore::plugins {

// One block as handed to a store. The data stays valid for the duration of write_iteration.
struct block_view {
  std::int32_t source = 0;    // client index (rank in the clients' communicator)
  std::int32_t block_id = 0;  // domain index within the client
  std::int32_t iteration = 0;
  const void* data = nullptr;
  std::uint64_t bytes = 0;
  std::vector<std::int64_t> dims;         // local extents, slowest first (C order)
  std::vector<std::int64_t> global_dims;  // empty when the layout gives none
  std::vector<std::int64_t> position;     // global offset of element (0,..,0); zeros by default
};

// Every block of one variable in one iteration that this writer holds, ordered by
// (source, block_id). A variable assigned to the store appears even with no local block,
// so that collective stores can take part in every collective call.
struct variable_blocks {
  const config::variable* var = nullptr;
  const config::layout* layout = nullptr;
  std::vector<const block_view*> blocks;
};

struct iteration_data {
  std::int32_t iteration = 0;
  std::vector<variable_blocks> variables;  // in model order
  // Some client dropped data of this iteration (policy="skip") or stopped before ending it:
  // what is here is all there is, and the output says so.
  bool incomplete = false;
  // The client indices, in increasing order, of this writer's clients that left it out
  // (dropped data, stopped before ending it, or never ended it). Empty while incomplete when
  // the clients that left it out are another writer's.
  std::vector<std::int32_t> clients_left_out;
  // The variables this store's variables name in select-file without being stored by it:
  // their blocks (of this iteration, when written in it) place the selecting variables'
  // elements. In model order; never written as variables of the store.
  std::vector<variable_blocks> index_variables;
};

// Where and with whom a store writes.
struct store_context {
  const config::model* model = nullptr;
  const config::store* settings = nullptr;
  // Communicator of every process that writes for this store (the dedicated cores, or the
  // clients when there is no dedicated core). Collective stores use it; it outlives the store.
  MPI_Comm comm = MPI_COMM_NULL;
  int writer_index = 0;  // rank in comm; the "Pr" number of file-per-core output
  int writer_count = 1;
  // When writers store on threads that may not call MPI (background I/O threads without
  // MPI_THREAD_MULTIPLE), comm is MPI_COMM_SELF and this is the communicator of all writers,
  // usable only from finish(); MPI_COMM_NULL otherwise.
  MPI_Comm finish_comm = MPI_COMM_NULL;
  // The writers must store each iteration without calling each other (<schedule> takes turns
  // or orders them): a store that exchanges metadata among them (store_needs::
  // writers_exchange) does so in finish() instead, over comm (or finish_comm when set).
  bool defer_exchange = false;
};

class store {
 public:
  virtual ~store() = default;
  // Called once per iteration, in iteration order, on every writer of comm (also when the
  // writer holds no block). Throws storage_error on failure.
  virtual void write_iteration(const iteration_data& data) = 0;
  // Called once after the last iteration, on every writer, from the thread that created the
  // store (collective over finish_comm when it is set). Throws storage_error on failure.
  virtual void finish() {}
};

// Builds the store named by settings->type ("HDF5", "null"), or the plugin store of
// settings->library (plugins/external_store.hpp). Throws config_error for an unknown type or
// option, naming the valid ones.
std::unique_ptr<store> make_store(const store_context& context);

// What a store needs from the processes that run it, known from its configuration alone, so
// that the runtime chooses how to run it before building it. Nothing outside a store reads
// its options: this is how the rest of Sidecore learns what they imply.
struct store_needs {
  // write_iteration makes MPI calls collective over all writers (parallel HDF5): every writer
  // runs the store at the same iteration, from a thread allowed to call MPI.
  bool collective_writes = false;
  // write_iteration exchanges metadata among the writers when their communicator spans them
  // (a master file of the whole run); the store does without when it does not.
  bool writers_exchange = false;
};

// Throws config_error, as make_store would, for an unknown type or invalid options.
store_needs needs_of(const config::model& model, const config::store& settings);

// "file:line" of the <store> element, the start of every message about it.
std::string store_location(const store_context& context);

}  // namespace sidecore::plugins
