// damaris::Environment (include/damaris/env/Environment.hpp): Damaris's answers, read from the
// runtime damaris_initialize() built; before it and after damaris_finalize() the answers
// Damaris gives uninitialized.
#include "damaris/env/Environment.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

#include "../c/current_runtime.hpp"
#include "Damaris.h"
#include "common/mpi_handles.hpp"
#include "runtime/runtime.hpp"

namespace damaris {

namespace {

const sidecore::runtime* current() noexcept { return sidecore::current_runtime(); }

// With dedicated cores; with dedicated nodes (remote servers); or neither.
bool dedicated_nodes(const sidecore::runtime& rt) noexcept {
  return rt.topo().has_servers && rt.topo().remote_servers;
}

}  // namespace

bool Environment::Initialized() { return current() != nullptr; }

bool Environment::IsClient() {
  const sidecore::runtime* rt = current();
  return rt ? !rt->is_server() : true;
}

bool Environment::IsServer() {
  const sidecore::runtime* rt = current();
  return rt ? rt->is_server() || !rt->has_dedicated_resources() : false;
}

bool Environment::IsDedicatedCore() {
  const sidecore::runtime* rt = current();
  return rt && rt->is_server() && !dedicated_nodes(*rt);
}

bool Environment::IsDedicatedNode() {
  const sidecore::runtime* rt = current();
  return rt && rt->is_server() && dedicated_nodes(*rt);
}

bool Environment::HasServer() {
  const sidecore::runtime* rt = current();
  return rt && rt->has_dedicated_resources();
}

std::string Environment::GetSimulationName() {
  const sidecore::runtime* rt = current();
  return rt ? rt->model().simulation_name : std::string();
}

int Environment::GetGlobalProcessID() {
  const sidecore::runtime* rt = current();
  return rt ? rt->topo().world_rank : -1;
}

int Environment::GetEntityProcessID() {
  const sidecore::runtime* rt = current();
  if (!rt) return -1;
  return rt->is_server() ? rt->topo().server_index : rt->topo().client_index;
}

int Environment::ClientsPerNode() {
  const sidecore::runtime* rt = current();
  if (!rt) return -1;
  const sidecore::topology::layout& t = rt->topo();
  // Damaris: the number of client nodes with dedicated nodes.
  if (dedicated_nodes(*rt)) return t.node_count - rt->model().arch.dedicated_nodes;
  if (t.has_servers) return t.node_size - rt->model().arch.dedicated_cores;
  return t.node_size;
}

int Environment::CoresPerNode() {
  const sidecore::runtime* rt = current();
  return rt ? rt->topo().node_size : -1;
}

int Environment::ServersPerNode() {
  const sidecore::runtime* rt = current();
  if (!rt) return -1;
  if (!rt->has_dedicated_resources()) return 1;
  // Damaris: the number of dedicated nodes with dedicated nodes.
  return dedicated_nodes(*rt) ? rt->model().arch.dedicated_nodes : rt->model().arch.dedicated_cores;
}

int Environment::CountTotalClients() {
  const sidecore::runtime* rt = current();
  return rt ? rt->topo().client_count : -1;
}

int Environment::CountTotalServers() {
  const sidecore::runtime* rt = current();
  return rt ? rt->topo().server_count : -1;
}

int Environment::NumDomainsPerClient() {
  const sidecore::runtime* rt = current();
  return rt ? rt->model().arch.domains : -1;
}

int Environment::GetLastIteration() {
  const sidecore::runtime* rt = current();
  if (!rt || rt->is_server()) return -1;
  int iteration = -1;
  return damaris_get_iteration(&iteration) == DAMARIS_OK ? iteration : -1;
}

MPI_Comm Environment::GetEntityComm() {
  const sidecore::runtime* rt = current();
  if (!rt) return MPI_COMM_NULL;
  return rt->is_server() ? rt->server_comm() : rt->client_comm();
}

MPI_Comm Environment::GetGlobalComm() {
  const sidecore::runtime* rt = current();
  return rt ? rt->world_comm() : MPI_COMM_NULL;
}

const std::list<int>& Environment::GetKnownLocalClients() {
  static std::list<int> known;
  known.clear();
  const sidecore::runtime* rt = current();
  // A client with dedicated resources receives nobody's blocks.
  if (rt && (rt->is_server() || !rt->has_dedicated_resources()))
    known.assign(rt->environment().known_clients.begin(), rt->environment().known_clients.end());
  return known;
}

const std::string& Environment::GetMagicNumber() {
  static std::string magic;
  const sidecore::runtime* rt = current();
  magic = rt ? rt->environment().magic : std::string();
  return magic;
}

std::string Environment::GetMagicNumber(MPI_Comm comm) {
  int rank = 0;
  sidecore::check_mpi(MPI_Comm_rank(comm, &rank),
                      "damaris::Environment::GetMagicNumber: MPI_Comm_rank");
  long long value = 0;
  if (rank == 0) {
    const std::string& own = GetMagicNumber();
    value = own.empty() ? std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count()
                        : std::stoll(own);
  }
  sidecore::check_mpi(MPI_Bcast(&value, 1, MPI_LONG_LONG, 0, comm),
                      "damaris::Environment::GetMagicNumber: MPI_Bcast");
  return std::to_string(value);
}

}  // namespace damaris
