#include "transports/background_thread/setup.hpp"

#include <string>

#include "common/log.hpp"
#include "common/mpi_handles.hpp"
#include "memory/buffer_pool.hpp"
#include "storing/writers_step.hpp"
#include "transports/background_thread/thread_engine.hpp"
#include "transports/memory_budget.hpp"
#include "transports/synchronous/inline_engine.hpp"

namespace sidecore::transports::background_thread {
namespace {

constexpr const char* name = "background thread";

class thread_setup : public setup {
 public:
  using setup::setup;
  std::unique_ptr<engine> make_engine() override;
  const char* mode_name() const noexcept override { return m_name; }

 private:
  const char* m_name = name;
  communicator m_thread_comm;  // the stores' communicator on the I/O thread
};

std::unique_ptr<engine> thread_setup::make_engine() {
  const MPI_Comm clients = m_topo.clients.get();
  const int source = m_topo.client_index;
  // Stores run on a background thread. Their MPI calls are only safe there with
  // MPI_THREAD_MULTIPLE; otherwise each process writes alone (file per process), and what needs
  // every writer at once (collective output, ParaView pipelines rendering together) is done
  // synchronously instead.
  int provided = MPI_THREAD_SINGLE;
  check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread");
  if (provided != MPI_THREAD_MULTIPLE) {
    std::string together;  // what needs every writer at once, with its place in the file
    if (const config::store* collective = storing::first_collective_store(m_model))
      together = m_model.file + ":" + std::to_string(collective->line) + ": store '" +
                 collective->name + "' writes collectively (all writers together)";
    else if (m_model.paraview && m_topo.client_count > 1)
      together = m_model.file + ":" + std::to_string(m_model.paraview->line) +
                 ": the <paraview> pipelines render with all writers together";
    if (!together.empty()) {
      if (source == 0)
        log::warning(together,
                     ", which a background thread can only do when MPI is initialized with "
                     "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...); this run stores "
                     "synchronously, inside damaris_end_iteration, instead (same output)");
      m_name = "synchronous";
      return std::make_unique<inline_engine>(m_model, clients, source,
                                             storing::writers_in_step(m_model));
    }
  }
  check_node_memory(m_model, m_topo, name, true);
  buffer_pool::reserve_arena(m_model.arch.buffer_size, first_iteration_window(m_model));
  if (provided == MPI_THREAD_MULTIPLE) {
    MPI_Comm dup = MPI_COMM_NULL;
    check_mpi(MPI_Comm_dup(clients, &dup), "MPI_Comm_dup");
    m_thread_comm = communicator(dup);
    return std::make_unique<thread_engine>(m_model, m_thread_comm.get(), MPI_COMM_NULL, -1, -1,
                                           source);
  }
  return std::make_unique<thread_engine>(m_model, MPI_COMM_SELF, clients, m_topo.client_index,
                                         m_topo.client_count, source);
}

void describe(const config::model&, const topology::layout& topo,
              plugins::script_environment& env) {
  // What Damaris's scripts are told of this mode.
  env.mode = "thread";
  env.clients_per_node = topo.node_size;
}

}  // namespace

const transports::mode mode_entry = {
    name,
    [](const config::model& model, const topology::layout&) { return model.arch.io_threads > 0; },
    describe,
    [](const config::model& model, const topology::layout& topo) -> std::unique_ptr<setup> {
      return std::make_unique<thread_setup>(model, topo);
    },
};

}  // namespace sidecore::transports::background_thread
