#include "transports/dedicated_nodes/setup.hpp"

#include <algorithm>
#include <cstdint>

#include "common/mpi_handles.hpp"
#include "memory/buffer_pool.hpp"
#include "transports/dedicated_nodes/mpi_engine.hpp"
#include "transports/dedicated_nodes/remote_server_loop.hpp"
#include "transports/memory_budget.hpp"

namespace sidecore::transports::dedicated_nodes {
namespace {

constexpr const char* name = "dedicated nodes";

class nodes_setup : public setup {
 public:
  nodes_setup(const config::model& model, const topology::layout& topo) : setup(model, topo) {
    MPI_Comm dup = MPI_COMM_NULL;
    check_mpi(MPI_Comm_dup(m_topo.world.get(), &dup), "MPI_Comm_dup");
    m_link = communicator(dup);
  }

  std::unique_ptr<engine> make_engine() override {
    check_node_memory(m_model, m_topo, name, true);
    buffer_pool::reserve_arena(m_model.arch.buffer_size, first_iteration_window(m_model));
    return std::make_unique<mpi_engine>(m_model, m_link.get(), m_topo.server_world_rank,
                                        m_topo.client_index);
  }

  std::unique_ptr<server> make_server() override {
    check_node_memory(m_model, m_topo, name, true);
    // Mapped ahead: one iteration of every client it serves.
    const std::uint64_t clients = std::max<std::size_t>(1, m_topo.served_client_ranks.size());
    const std::uint64_t window = first_iteration_window(m_model);
    buffer_pool::reserve_arena(m_model.arch.buffer_size,
                               window > UINT64_MAX / clients ? UINT64_MAX : window * clients);
    return std::make_unique<remote_server_loop>(m_model, m_topo, m_link.get());
  }

  const char* mode_name() const noexcept override { return name; }

 private:
  communicator m_link;  // clients and servers exchange blocks on it
};

void describe(const config::model& model, const topology::layout& topo,
              plugins::script_environment& env) {
  env.mode = name;
  env.is_dedicated_node = topo.is_server;
  env.servers_per_node = topo.is_server ? topo.node_size : 0;
  const int client_nodes = std::max(1, topo.node_count - model.arch.dedicated_nodes);
  env.clients_per_node = topo.client_count / client_nodes;
}

}  // namespace

const transports::mode mode_entry = {
    name,
    [](const config::model&, const topology::layout& topo) { return topo.remote_servers; },
    describe,
    [](const config::model& model, const topology::layout& topo) -> std::unique_ptr<setup> {
      return std::make_unique<nodes_setup>(model, topo);
    },
};

}  // namespace sidecore::transports::dedicated_nodes
