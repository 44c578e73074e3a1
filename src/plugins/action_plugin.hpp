// Action plugins (<actions><plugin>): a library of <sidecore/plugin.h> that receives the blocks
// of some variables at every frequency-th iteration and the events routed to it, where the
// stores run.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "config/model.hpp"
#include "plugins/store.hpp"

namespace sidecore::plugins {

// Where and with whom an action plugin runs: as for a store (store_context).
struct action_context {
  const config::model* model = nullptr;
  const config::action_plugin* settings = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;
  int writer_index = 0;
  int writer_count = 1;
  MPI_Comm finish_comm = MPI_COMM_NULL;
};

class action {
 public:
  virtual ~action() = default;
  // Whether on_iteration wants this iteration (its frequency, and whether it takes any).
  virtual bool wants(int iteration) const noexcept = 0;
  // One iteration: the blocks of the plugin's variables. Throws storage_error on failure.
  virtual void on_iteration(const iteration_data& data) = 0;
  // One event routed to the plugin fired. Throws storage_error on failure.
  virtual void on_event(const config::event& event, int source, int iteration) = 0;
  // After the last iteration. Throws storage_error on failure.
  virtual void finish() = 0;
};

// Loads context.settings->library, checks that it is an action plugin of this ABI version and
// creates its action. Throws config_error naming the <plugin>'s file and line and the library
// (cannot be loaded, no sidecore_action_plugin(), another ABI version, an incomplete
// descriptor, options the plugin refuses) and storage_error when create() fails otherwise.
std::unique_ptr<action> make_action(const action_context& context);

// "file:line: action plugin \"name\": ", the start of every message about it.
std::string action_prefix(const action_context& context);

}  // namespace sidecore::plugins
