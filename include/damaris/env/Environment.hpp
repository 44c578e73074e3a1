// damaris::Environment: where this process stands in the run, asked as Damaris's C++ programs
// ask it (static members, the names and answers of Damaris's Environment class).
//
// Copyright (c) 2026, the Sidecore developers. SPDX-License-Identifier: BSD-3-Clause
//
// Sidecore keeps the state in the runtime damaris_initialize() builds; Environment only reads
// it, so the run is still started and ended with the C API of Damaris.h (Damaris's own
// Environment::Init/Finalize are not offered). Every member may be called at any time:
//
// - before damaris_initialize() and after damaris_finalize(), each gives the answer Damaris
//   gives then: IsClient() true, IsServer()/IsDedicatedCore()/IsDedicatedNode()/HasServer()
//   false, counts and process ids -1, communicators MPI_COMM_NULL, names and the magic number
//   "", no known clients;
// - in between, the answers below, which do not change during the run.
//
// Roles, as Damaris names them: a client is a simulation process; a server is a dedicated core
// or a process of a dedicated node. Without dedicated resources (synchronous or thread mode)
// every process is a client and also its own server: IsClient() and IsServer() are both true
// and HasServer() is false, as in Damaris's standalone mode.
//
// Counts per node, with dedicated cores: CoresPerNode() processes per node (the ranks sharing
// memory, or SIDECORE_RANKS_PER_NODE), ServersPerNode() the dedicated cores of each node,
// ClientsPerNode() the rest. With dedicated nodes Damaris gives ClientsPerNode() = the number
// of client nodes and ServersPerNode() = the number of dedicated nodes; Sidecore gives the
// same. Without dedicated resources ClientsPerNode() = CoresPerNode() and ServersPerNode() = 1.
//
// Thread safety: call from the thread that called damaris_initialize(). Members returning a
// reference return one to storage that the next call of the same member overwrites.
#ifndef SIDECORE_DAMARIS_ENV_ENVIRONMENT_HPP
#define SIDECORE_DAMARIS_ENV_ENVIRONMENT_HPP

#include <mpi.h>

#include <list>
#include <string>

namespace damaris {

class __attribute__((visibility("default"))) Environment {
 public:
  Environment() = delete;

  // damaris_initialize() succeeded and damaris_finalize() has not been called.
  static bool Initialized();

  // A simulation process (true before initialization, as in Damaris).
  static bool IsClient();
  // A dedicated core or node, or any process when there is no dedicated resource.
  static bool IsServer();
  static bool IsDedicatedCore();
  static bool IsDedicatedNode();
  // Dedicated cores or nodes exist in this run.
  static bool HasServer();

  // The name attribute of <simulation>.
  static std::string GetSimulationName();

  // Rank in the communicator given to damaris_initialize().
  static int GetGlobalProcessID();
  // Rank among the processes of the same kind: clients, or servers.
  static int GetEntityProcessID();

  static int ClientsPerNode();
  static int CoresPerNode();
  static int ServersPerNode();
  // Clients of the whole run; servers of the whole run (0 without dedicated resources; Damaris
  // answers the size of the caller's own kind there).
  static int CountTotalClients();
  static int CountTotalServers();
  // <domains count=...> (the number of blocks each client may write per variable).
  static int NumDomainsPerClient();
  // The current iteration of this client (damaris_get_iteration()); -1 on a dedicated core or
  // node, where iterations complete per client.
  static int GetLastIteration();

  // The communicator of the caller's kind: clients among themselves (damaris_client_comm_get()),
  // servers among themselves. Sidecore owns it: do not free it.
  static MPI_Comm GetEntityComm();
  // Sidecore's duplicate of the communicator given to damaris_initialize(). Do not free it.
  static MPI_Comm GetGlobalComm();

  // The client ids (ranks among the clients) whose blocks this process receives: on a dedicated
  // core or node the clients it serves, without dedicated resources the caller itself, on a
  // client with dedicated resources none.
  static const std::list<int>& GetKnownLocalClients();

  // The run's magic number: the same decimal string on every process (rank 0's clock at
  // damaris_initialize(), in milliseconds since the epoch); "" before initialization.
  static const std::string& GetMagicNumber();
  // Collective over comm (every rank of comm must call it): the first rank of comm's answer,
  // on every rank. After damaris_initialize() that is GetMagicNumber(); before, the first rank
  // makes one from its clock. Throws std::runtime_error when an MPI call fails.
  static std::string GetMagicNumber(MPI_Comm comm);
};

}  // namespace damaris

#endif  // SIDECORE_DAMARIS_ENV_ENVIRONMENT_HPP
