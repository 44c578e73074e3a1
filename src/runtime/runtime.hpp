// Everything damaris_initialize() builds and damaris_finalize() tears down: the model, the
// topology, the shared channel, and the client or server role of this process.
#pragma once

#include <mpi.h>

#include <memory>
#include <optional>
#include <string>

#include "client/client.hpp"
#include "common/peer_watch.hpp"
#include "config/model.hpp"
#include "plugins/python_scripts.hpp"
#include "topology/topology.hpp"
#include "transports/transport.hpp"

namespace sidecore {

class runtime {
 public:
  // Collective over comm. Throws config_error (the same on every rank) for a bad file.
  // config_file may also be the configuration's text itself (it then starts with '<').
  runtime(const std::string& config_file, MPI_Comm comm);
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  bool is_server() const noexcept { return m_topo.is_server; }
  // Dedicated cores or nodes (false in synchronous and background-thread modes).
  bool has_dedicated_resources() const noexcept { return m_topo.has_servers; }
  const config::model& model() const noexcept { return m_model; }
  // Throws error(DAMARIS_CORE_IS_SERVER) on a server.
  client::client& as_client(const char* call);
  client::client* client_if_any() noexcept { return m_client.get(); }
  MPI_Comm client_comm() const noexcept { return m_topo.clients.get(); }
  // The servers' communicator (MPI_COMM_NULL on clients and without dedicated resources), and
  // Sidecore's duplicate of the communicator given to damaris_initialize().
  MPI_Comm server_comm() const noexcept { return m_topo.servers.get(); }
  MPI_Comm world_comm() const noexcept { return m_topo.world.get(); }
  // Where this process stands in the run (what Damaris's Environment and damaris4py answer),
  // the same that scripts receive; computed once by the constructor.
  const plugins::script_environment& environment() const noexcept { return m_environment; }
  // Who this process is and whom it talks to (ranks, counts, communicators).
  const topology::layout& topo() const noexcept { return m_topo; }
  // Parameters of this process: a server keeps its own copy, so that code calling
  // damaris_parameter_get/set on every rank works.
  client::parameters& parameter_table() noexcept {
    return m_client ? m_client->parameter_table() : *m_server_parameters;
  }

  // Client: returns true at once. Server: runs the loop until all clients stop, returns false.
  bool start();
  void stop();
  // Collective over the initial comm: stops a client that forgot, reports counters.
  void finalize();

 private:
  void report();
  // The JSON run report (collective over the world; docs/observability.md).
  void write_run_report() noexcept;
  // "dedicated cores", "dedicated nodes", "background thread" or "synchronous".
  const char* mode_name() const noexcept;
  // Starts watching the job's other processes (collective; last step of initialization).
  void watch_peers();
  // What a failed job's message says of this process: its role and what is stored.
  std::string failure_context();

  config::model m_model;
  topology::layout m_topo;
  plugins::script_environment m_environment;
  // The mode's shared segments and communicators (destroyed after the client or server).
  std::unique_ptr<transports::setup> m_transport;
  std::unique_ptr<client::client> m_client;
  std::unique_ptr<transports::server> m_server;  // a dedicated core's or node's
  std::unique_ptr<client::parameters> m_server_parameters;
  bool m_started = false;
  bool m_server_runs_done = false;  // a server: its loop returned (all clients stopped)
  bool m_finalized = false;
  // Notices a dead process of the job and ends the job (destroyed first).
  std::unique_ptr<peer_watch> m_peers;
};

}  // namespace sidecore
