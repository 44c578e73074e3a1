// Splits the user's communicator into clients and dedicated servers, node by node.
#pragma once

#include <mpi.h>

#include <vector>

#include "common/mpi_handles.hpp"

namespace sidecore::topology {

// Who this process is and whom it talks to. Built collectively by build().
struct layout {
  communicator world;  // duplicate of the user's communicator
  int world_rank = 0;
  int world_size = 1;

  int node_index = 0;  // (virtual) node this rank belongs to
  int node_count = 1;
  int node_rank = 0;  // rank within the node
  int node_size = 1;

  bool is_server = false;
  bool has_servers = false;     // false: no dedicated resource (synchronous mode)
  bool remote_servers = false;  // dedicated nodes: data travels over MPI (world)

  communicator clients;   // all clients (MPI_COMM_NULL on servers); damaris_client_comm_get
  communicator servers;   // all servers (MPI_COMM_NULL on clients)
  int client_index = -1;  // rank in clients
  int client_count = 0;
  int server_index = -1;  // rank in servers; on a client: the index of its server
  int server_count = 0;

  // One server and the clients it serves, all on one node: they share one segment.
  // The server is the last rank of group.
  communicator group;
  int group_rank = 0;
  int group_size = 1;
  std::vector<int> group_client_indices;  // client_index of each client of the group, in order

  // Dedicated nodes only.
  int server_world_rank = -1;            // client: rank of its server in world
  std::vector<int> served_client_ranks;  // server: world ranks of its clients, in client order
};

// Which node a rank is on: SIDECORE_RANKS_PER_NODE=N makes virtual nodes of N consecutive
// ranks; otherwise ranks that share memory form a node.
// dedicated_cores servers per node are the last ranks of each node; with dedicated_nodes, every
// rank of the last dedicated_nodes nodes is a server. Throws config_error (on every rank alike)
// when no rank would be left for clients.
layout build(MPI_Comm comm, int dedicated_cores, int dedicated_nodes);

// Client c of n served by s servers goes to server c * s / n: consecutive clients per server,
// counts differing by at most one whatever n and s.
int server_of_client(int client, int clients, int servers) noexcept;

// The client indices whose blocks this process stores: a dedicated core's or node's clients,
// in order; a client without dedicated resources stores its own; empty for the other clients.
std::vector<int> clients_stored_by(const layout& topo);

}  // namespace sidecore::topology
