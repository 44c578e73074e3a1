// Communicator construction for the dedicated-core deployment.
#include "topology/topology.hpp"

#include <cerrno>
#include <cstdlib>
#include <string>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/text.hpp"

namespace sidecore::topology {
namespace {

communicator split(MPI_Comm comm, int color, int key) {
  MPI_Comm out = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(comm, color, key, &out), "MPI_Comm_split");
  return communicator(out);
}

// Same decision on every rank: if any rank found an error, all throw it.
void agree_or_throw(MPI_Comm comm, bool local_failure, const std::string& message) {
  int failure = local_failure ? 1 : 0;
  int any = 0;
  check_mpi(MPI_Allreduce(&failure, &any, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  if (any) throw config_error(message);
}

}  // namespace

// Dedicated nodes: the last `nodes` nodes (by node index) hold only servers; every other rank
// is a client. Clients are spread over all servers in balanced consecutive groups.
static layout build_dedicated_nodes(layout t, int nodes) {
  agree_or_throw(t.world.get(), t.node_count <= nodes,
                 "<dedicated nodes=\"" + std::to_string(nodes) +
                     "\"/> leaves no node for the "
                     "simulation: the job has " +
                     std::to_string(t.node_count) +
                     " node(s); start more nodes (or set SIDECORE_RANKS_PER_NODE to make virtual "
                     "nodes) or lower nodes=");
  t.has_servers = true;
  t.remote_servers = true;
  t.is_server = t.node_index >= t.node_count - nodes;
  t.clients = split(t.world.get(), t.is_server ? MPI_UNDEFINED : 0, t.world_rank);
  t.servers = split(t.world.get(), t.is_server ? 0 : MPI_UNDEFINED, t.world_rank);
  if (t.clients) t.client_index = t.clients.rank();
  if (t.servers) t.server_index = t.servers.rank();
  // Roles of every rank, in world order: servers and clients are numbered in that order too.
  std::vector<int> roles(static_cast<std::size_t>(t.world_size), 0);
  int mine = t.is_server ? 1 : 0;
  check_mpi(MPI_Allgather(&mine, 1, MPI_INT, roles.data(), 1, MPI_INT, t.world.get()),
            "MPI_Allgather");
  std::vector<int> server_ranks, client_ranks;
  for (int r = 0; r < t.world_size; ++r) (roles[r] ? server_ranks : client_ranks).push_back(r);
  t.server_count = static_cast<int>(server_ranks.size());
  t.client_count = static_cast<int>(client_ranks.size());
  // Every rank of a server node is a server, and each must serve at least one client (a
  // server without one would miss the collective steps of the others).
  if (t.server_count > t.client_count)
    throw config_error("<dedicated nodes=\"" + std::to_string(nodes) + "\"/> makes " +
                       std::to_string(t.server_count) + " server ranks for " +
                       std::to_string(t.client_count) +
                       " simulation ranks; each server rank needs at least one client: use fewer "
                       "dedicated nodes, or more simulation ranks");
  if (!t.is_server) {
    t.server_index = server_of_client(t.client_index, t.client_count, t.server_count);
    t.server_world_rank = server_ranks[t.server_index];
  } else {
    for (int c = 0; c < t.client_count; ++c) {
      if (server_of_client(c, t.client_count, t.server_count) == t.server_index) {
        t.group_client_indices.push_back(c);
        t.served_client_ranks.push_back(client_ranks[c]);
      }
    }
  }
  return t;
}

int server_of_client(int client, int clients, int servers) noexcept {
  return static_cast<int>(static_cast<long long>(client) * servers / clients);
}

layout build(MPI_Comm comm, int dedicated_cores, int dedicated_nodes) {
  layout t;
  MPI_Comm dup = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm, &dup), "MPI_Comm_dup");
  t.world = communicator(dup);
  t.world_rank = t.world.rank();
  t.world_size = t.world.size();

  int per_node = environment::ranks_per_node();
  communicator node;
  if (per_node > 0) {
    node = split(t.world.get(), t.world_rank / per_node, t.world_rank);
  } else {
    MPI_Comm shared = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split_type(t.world.get(), MPI_COMM_TYPE_SHARED, t.world_rank, MPI_INFO_NULL,
                                  &shared),
              "MPI_Comm_split_type");
    node = communicator(shared);
  }
  t.node_rank = node.rank();
  t.node_size = node.size();
  // Node index: rank of the node's first process among all first processes.
  {
    communicator leaders = split(t.world.get(), t.node_rank == 0 ? 0 : MPI_UNDEFINED, t.world_rank);
    int index = 0, count = 0;
    if (leaders) {
      index = leaders.rank();
      count = leaders.size();
    }
    check_mpi(MPI_Bcast(&index, 1, MPI_INT, 0, node.get()), "MPI_Bcast");
    check_mpi(MPI_Bcast(&count, 1, MPI_INT, 0, node.get()), "MPI_Bcast");
    t.node_index = index;
    t.node_count = count;
  }

  if (dedicated_nodes > 0) return build_dedicated_nodes(std::move(t), dedicated_nodes);
  if (dedicated_cores < 0) dedicated_cores = 0;
  // Each dedicated core serves at least one client of its node: a node needs at least twice
  // as many ranks as dedicated cores.
  int smallest = t.node_size;
  check_mpi(MPI_Allreduce(&t.node_size, &smallest, 1, MPI_INT, MPI_MIN, t.world.get()),
            "MPI_Allreduce");
  if (dedicated_cores > 0 && smallest < 2 * dedicated_cores)
    throw config_error("<dedicated cores=\"" + std::to_string(dedicated_cores) +
                       "\"/> on a node of " + counted(smallest, "rank") + " leaves " +
                       (smallest > dedicated_cores
                            ? counted(smallest - dedicated_cores, "client") + " for " +
                                  counted(dedicated_cores, "dedicated core")
                            : std::string("no client")) +
                       "; each dedicated core needs at least one client of its node, so every "
                       "node needs at least " +
                       counted(2 * dedicated_cores, "rank") +
                       " (set SIDECORE_RANKS_PER_NODE, start more ranks per node, or lower "
                       "cores=)");

  t.has_servers = dedicated_cores > 0;
  int clients_on_node = t.node_size - dedicated_cores;
  t.is_server = t.has_servers && t.node_rank >= clients_on_node;

  t.clients = split(t.world.get(), t.is_server ? MPI_UNDEFINED : 0, t.world_rank);
  t.servers = split(t.world.get(), t.is_server ? 0 : MPI_UNDEFINED, t.world_rank);
  if (t.clients) t.client_index = t.clients.rank();
  if (t.servers) t.server_index = t.servers.rank();
  // Everyone learns the totals (the server/client counts are the same on every rank).
  int counts[2] = {t.is_server ? 0 : 1, t.is_server ? 1 : 0};
  int totals[2] = {0, 0};
  check_mpi(MPI_Allreduce(counts, totals, 2, MPI_INT, MPI_SUM, t.world.get()), "MPI_Allreduce");
  t.client_count = totals[0];
  t.server_count = totals[1];

  if (!t.has_servers) return t;

  // Group: server s of this node (0..cores-1) with the clients mapped to it.
  int local_group = t.is_server ? t.node_rank - clients_on_node
                                : server_of_client(t.node_rank, clients_on_node, dedicated_cores);
  // Clients first (by node rank), then the server: the server is the group's last rank.
  int key = t.is_server ? t.node_size + t.node_rank : t.node_rank;
  t.group = split(node.get(), local_group, key);
  t.group_rank = t.group.rank();
  t.group_size = t.group.size();

  // Server index of the group, and the client indices it serves, known to all members.
  int server_index = t.is_server ? t.server_index : -1;
  int group_server = -1;
  check_mpi(MPI_Allreduce(&server_index, &group_server, 1, MPI_INT, MPI_MAX, t.group.get()),
            "MPI_Allreduce");
  if (!t.is_server) t.server_index = group_server;
  std::vector<int> indices(t.group_size, -1);
  int mine = t.is_server ? -1 : t.client_index;
  check_mpi(MPI_Allgather(&mine, 1, MPI_INT, indices.data(), 1, MPI_INT, t.group.get()),
            "MPI_Allgather");
  indices.pop_back();  // the server's entry
  t.group_client_indices = std::move(indices);
  return t;
}

std::vector<int> clients_stored_by(const layout& topo) {
  if (!topo.has_servers) return {topo.client_index};
  if (!topo.is_server) return {};
  if (!topo.remote_servers) return topo.group_client_indices;
  std::vector<int> served;
  for (int c = 0; c < topo.client_count; ++c)
    if (server_of_client(c, topo.client_count, topo.server_count) == topo.server_index)
      served.push_back(c);
  return served;
}

}  // namespace sidecore::topology
