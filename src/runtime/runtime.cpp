// Initialization order: read the XML once and broadcast it, split the communicator, set up the
// mode's transport (transports/modes.cpp), then build this process's client or server.
#include "runtime/runtime.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "common/agreement.hpp"
#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/hot_path.hpp"
#include "common/interrupt_notice.hpp"
#include "common/job_failure.hpp"
#include "common/log.hpp"
#include "common/run_clock.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "memory/buffer_pool.hpp"
#include "plugins/python_scripts.hpp"
#include "runtime/load_configuration.hpp"
#include "runtime/run_report.hpp"

namespace sidecore {
namespace {

log::level to_log_level(config::log_level level) {
  switch (level) {
    case config::log_level::trace:
      return log::level::trace;
    case config::log_level::debug:
      return log::level::debug;
    case config::log_level::info:
      return log::level::info;
    case config::log_level::warning:
      return log::level::warning;
    default:
      return log::level::error;
  }
}

// <log FileName="log/sim"/>: each process appends to log/sim_P<rank>_0.log, the name Damaris
// gives the first file of its log (rank in the communicator given to damaris_initialize; the
// directory is
// created); without FileName, lines go to stderr.
std::string log_file_of(const config::model& model, int world_rank) {
  if (model.log.file_name.empty()) return {};
  const std::string path = model.log.file_name + "_P" + std::to_string(world_rank) + "_0.log";
  std::error_code ignored;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ignored);
  return path;
}

// The topology the XML asks for; its errors name the file they come from.
topology::layout build_topology(const config::model& model, MPI_Comm comm) {
  try {
    return topology::build(comm, model.arch.dedicated_cores, model.arch.dedicated_nodes);
  } catch (const config_error& e) {
    throw config_error(model.file + ": " + e.what());
  }
}

// What a <pyscript> learns of where it runs (collective over the world: the job's magic
// number is rank 0's clock, as Damaris's).
plugins::script_environment script_environment_of(const config::model& model,
                                                  const topology::layout& topo,
                                                  const transports::mode& mode) {
  plugins::script_environment env;
  long long magic = 0;
  if (topo.world_rank == 0)
    magic = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  check_mpi(MPI_Bcast(&magic, 1, MPI_LONG_LONG, 0, topo.world.get()), "MPI_Bcast");
  env.magic = std::to_string(magic);
  env.cores_per_node = topo.node_size;
  env.number_of_nodes = topo.node_count;
  env.known_clients = topology::clients_stored_by(topo);
  mode.describe(model, topo, env);
  return env;
}

// The directories the HDF5 stores write to, absolute, for messages ("a/, b/").
std::string output_directories(const config::model& model) {
  std::string joined;
  for (const config::store& store : model.stores) {
    if (!equals_ignoring_case(store.type, "HDF5")) continue;
    std::string path = trimmed(store.option("FilesPath"));
    std::error_code ignored;
    const std::filesystem::path absolute =
        std::filesystem::absolute(path.empty() ? "." : path, ignored).lexically_normal();
    if (!joined.empty()) joined += ", ";
    joined += absolute.string();
  }
  return joined;
}

}  // namespace

runtime::runtime(const std::string& config_file, MPI_Comm comm)
    : m_model(load_configuration(config_file, comm)), m_topo(build_topology(m_model, comm)) {
  log::configure(to_log_level(m_model.log.level), log_file_of(m_model, m_topo.world_rank));
  // Blocks held in process memory (no dedicated core, dedicated nodes, active buffering) reuse
  // released buffers up to what the XML lets this process hold.
  buffer_pool::set_capacity(m_model.arch.buffer_size + m_model.arch.server_memory);
  log::set_identity(m_topo.world_rank, m_topo.is_server ? "server" : "client");
  // Always, not only for scripts: programs ask for it too (damaris4py.client); collective.
  const transports::mode& mode = transports::mode_of(m_model, m_topo);
  m_environment = script_environment_of(m_model, m_topo, mode);
  if (!m_model.scripts.empty())
    plugins::prepare_scripts(m_model, m_environment, m_topo.world_rank == 0);
  if (m_topo.world_rank == 0) {
    for (const std::string& w : m_model.warnings) log::warning(w);
    const bool active_buffering =
        m_model.arch.server_memory > 0 || !m_model.arch.spill_directory.empty();
    if (active_buffering && (!m_topo.has_servers || m_topo.remote_servers))
      log::warning(m_model.file,
                   ": <buffer server-memory=... spill-directory=...> (active buffering) "
                   "applies to dedicated cores only; ignored in this mode");
  }
  m_transport = mode.set_up(m_model, m_topo);
  // Stores are opened now (output directories created, options checked), on every writer, so
  // that a store that cannot work fails damaris_initialize on every rank instead of leaving
  // clients waiting for a server that gave up.
  agree_on(m_topo.world.get(), [&] {
    if (!m_topo.is_server) {
      m_client = std::make_unique<client::client>(m_model, m_topo.client_index,
                                                  m_transport->make_engine());
    } else {
      m_server_parameters = std::make_unique<client::parameters>(m_model);
      m_server = m_transport->make_server();
    }
  });
  // Every process leaves the agreement above together: the run report's times start here.
  run_clock::set_origin();
  interrupt_notice::install(
      m_topo.world_rank == 0,
      "rank " + std::to_string(m_topo.world_rank) + (m_topo.is_server ? " server" : " client"),
      mode_name(), output_directories(m_model));
  if (m_client) interrupt_notice::note_iteration(m_client->iteration());
  watch_peers();
  // Only now: the warm-up of the buffer's first pages would share this process's core with the
  // collective steps above.
  buffer_pool::warm_arena();
  if (m_topo.world_rank == 0)
    log::info("initialized from ", m_model.file, ": ", counted(m_topo.client_count, "client"), ", ",
              counted(m_topo.has_servers ? m_topo.server_count : m_topo.client_count, "writer"),
              " (", mode_name(), "), ", counted(m_topo.node_count, "node"));
}

runtime::~runtime() {
  m_peers.reset();
  job_failure::describe_with(nullptr);
  interrupt_notice::uninstall();
  m_client.reset();
  m_server.reset();
  m_transport.reset();
  buffer_pool::set_capacity(0);
  buffer_pool::trim();
}

void runtime::watch_peers() {
  const peer_watch::role role = !m_topo.is_server       ? peer_watch::role::client
                                : m_topo.remote_servers ? peer_watch::role::dedicated_node
                                                        : peer_watch::role::dedicated_core;
  // Checked a few times per buffer timeout, so that a death is noticed well within it, and at
  // least every second (the default timeout is 300 s).
  const double timeout = m_model.arch.wait_timeout_seconds;
  const double period = timeout > 0 ? std::clamp(timeout / 4, 0.05, 1.0) : 1.0;
  m_peers = std::make_unique<peer_watch>(m_topo.world.get(), role, period);
  job_failure::describe_with([this] { return failure_context(); });
}

std::string runtime::failure_context() {
  // Only values safe to read from another thread: the live counters and the model.
  std::string where = "rank " + std::to_string(m_topo.world_rank) + ", ";
  const protocol::live_stats* stats = nullptr;
  if (m_server) {
    where += m_topo.remote_servers
                 ? "server " + std::to_string(m_topo.server_index) + " of a dedicated node"
                 : "dedicated core " + std::to_string(m_topo.server_index);
    stats = &m_server->stats();
  } else if (m_client) {
    where += "client " + std::to_string(m_topo.client_index);
    stats = m_client->engine().writer_stats();
  }
  std::string text = "(This process: " + where + ", " + mode_name() + ".)";
  protocol::live_values v;
  if (stats && stats->read(v))
    text += " Stored so far by " +
            std::string(m_client ? (m_topo.has_servers ? "its dedicated core" : "its writer")
                                 : "this process") +
            ": " + std::to_string(v.iterations_stored) + " iteration(s), " +
            std::to_string(v.iterations_incomplete) + " of them incomplete.";
  const std::string outputs = output_directories(m_model);
  if (!outputs.empty())
    text += " In " + outputs +
            ", every file under its final name is complete; the others end in .part.";
  return text;
}

SIDECORE_HOT_PATH client::client& runtime::as_client(const char* call) {
  if (!m_client)
    throw error(DAMARIS_CORE_IS_SERVER,
                std::string(call) + " is a client call, made on a dedicated core");
  return *m_client;
}

bool runtime::start() {
  if (m_started) {
    // Damaris lets a program stop its servers and start them again (its C++ example does);
    // like Damaris's, that second damaris_start is collective over every process.
    const bool stopped = m_client ? m_client->stopped() : m_server_runs_done;
    if (!stopped)
      throw error(DAMARIS_ALREADY_INITIALIZED,
                  m_client ? "damaris_start called again before damaris_stop; to start again, "
                             "call damaris_stop first (then damaris_start on every process)"
                           : "damaris_start called again while this dedicated core serves");
    check_mpi(MPI_Barrier(m_topo.world.get()), "MPI_Barrier");
    if (m_client) {
      m_client->resume();
      log::debug("damaris_start again: accepting data from iteration ", m_client->iteration());
    }
  }
  m_started = true;
  if (!m_topo.is_server) return true;
  m_server_runs_done = false;
  const job_failure::doing serving("serving its clients (damaris_start)");
  m_server->run();
  m_server_runs_done = true;
  // Stores never stop the server (later iterations are still stored), but the simulation's
  // launcher should learn that some output is missing.
  const std::string failure = m_server->take_failure();
  if (!failure.empty()) {
    const std::uint64_t failures = m_server->counters().store_failures;
    throw storage_error("server " + std::to_string(m_topo.server_index) + ": " +
                        std::to_string(failures) + " store call(s) failed; the first: " + failure);
  }
  return false;
}

void runtime::stop() { as_client("damaris_stop").stop(); }

void runtime::finalize() {
  if (m_finalized) return;
  m_finalized = true;
  const job_failure::doing finalizing("in damaris_finalize");
  // A store failure met here is reported after the barrier: every rank must reach it.
  std::string failure;
  try {
    if (m_client && !m_client->stopped()) {
      if (m_topo.has_servers && m_started)
        log::warning("damaris_finalize called without damaris_stop; stopping now");
      m_client->stop();
    }
    if (m_topo.is_server && !m_started) {
      // The simulation never ran this server; serve its clients now so that nothing is lost.
      log::warning(
          "damaris_finalize on a dedicated core that never called damaris_start; "
          "running the server now");
      start();
    }
  } catch (const std::exception& e) {
    // Whatever it was (out of memory too), every rank must still reach the barrier.
    failure = e.what();
  } catch (...) {
    failure = "unknown exception while stopping";
  }
  try {
    report();
  } catch (...) {
    // The counters are a courtesy; the barrier is not.
  }
  // Clients arrive long before dedicated cores that still store their last iterations: they
  // wait here without spinning, so that the collective calls below find everyone.
  try {
    wait_for_everyone(m_topo.world.get());
  } catch (const std::exception& e) {
    if (failure.empty()) failure = e.what();
  }
  write_run_report();
  // Past this barrier processes leave the job normally: no longer a sign of failure. (A peer
  // that dies while the others wait here is MPI's to notice.)
  if (m_peers) m_peers->stop();
  check_mpi(MPI_Barrier(m_topo.world.get()), "MPI_Barrier");
  if (!failure.empty()) throw error(DAMARIS_FINALIZE_ERROR, failure);
}

void runtime::report() {
  if (m_server) {
    const storing::processor_counters& c = m_server->counters();
    // The blocks of every variable, also those no store keeps (store="#"): what went through.
    log::info("server ", m_topo.server_index, ": ", counted(c.iterations_stored, "iteration"), ", ",
              counted(c.blocks_stored, "block"), ", ", counted(c.bytes_stored, "byte"),
              " processed, ", c.seconds_in_stores, " s in stores; buffer high water ",
              m_server->buffer_high_water(), " bytes");
    m_server->report_more(m_topo.server_index);
    if (c.store_failures)
      log::error("server ", m_topo.server_index, ": ", c.store_failures,
                 " store call(s) failed; see the errors above for the iterations concerned");
    if (c.script_failures)
      log::error("server ", m_topo.server_index, ": ", c.script_failures,
                 " Python script call(s) raised; see the tracebacks above");
    if (c.iterations_incomplete)
      log::warning("server ", m_topo.server_index, ": ", c.iterations_incomplete,
                   " iteration(s) stored incomplete (a client skipped data or never ended them)");
    const std::uint64_t rejected = m_server->messages_rejected();
    if (rejected)
      log::error("server ", m_topo.server_index, ": dropped ", rejected,
                 " malformed notification(s) from its clients; see the first one above");
  }
  if (m_client) {
    const client::client_counters& c = m_client->counters();
    if (c.iterations_skipped)
      log::warning("buffer full: ", c.iterations_skipped,
                   " iteration(s) skipped under policy=\"skip\"; ", c.blocks_dropped, " blocks (",
                   c.bytes_dropped, " bytes) were not stored");
  }
}

const char* runtime::mode_name() const noexcept {
  return m_transport ? m_transport->mode_name() : transports::mode_of(m_model, m_topo).name;
}

// Collective over the world: every process takes part, with what it has (nothing on failure).
void runtime::write_run_report() noexcept {
  try {
    MPI_Comm world = m_topo.world.get();
    std::string path = m_topo.world_rank == 0 ? run_report::path_for(m_model) : std::string();
    // By default every run has a report of its own; a path SIDECORE_REPORT gives is replaced,
    // and the log says so.
    if (!path.empty() && ::access(path.c_str(), F_OK) == 0)
      log::warning("the run report replaces '", path,
                   "' (SIDECORE_REPORT names it); leave SIDECORE_REPORT unset for a report "
                   "per run");
    int wanted = path.empty() ? 0 : 1;
    check_mpi(MPI_Bcast(&wanted, 1, MPI_INT, 0, world), "MPI_Bcast");
    if (!wanted) return;
    std::optional<run_report::writer_part> writer;
    std::optional<run_report::client_part> client;
    std::string writer_text, client_text;
    try {
      const storing::iteration_processor* processor = nullptr;
      if (m_server) {
        processor = &m_server->processor();
        writer.emplace();
        writer->kind = m_topo.remote_servers ? "dedicated node" : "dedicated core";
        writer->index = m_topo.server_index;
        writer->clients = topology::clients_stored_by(m_topo);
        writer->rejected = m_server->messages_rejected();
        writer->live = processor->live();
      } else if (m_client && m_client->engine().local_writer() &&
                 m_client->engine().writer_stats()) {
        // A writer inside this process: its records only once its thread is done.
        writer.emplace();
        writer->kind = mode_name();
        writer->index = m_topo.client_index;
        writer->clients.push_back(m_topo.client_index);
        m_client->engine().writer_stats()->read(writer->live);
        if (m_client->stopped()) processor = m_client->engine().local_writer();
      }
      if (writer) {
        writer->world_rank = m_topo.world_rank;
        writer->records = processor ? &processor->records() : nullptr;
        if (processor) writer->actions = processor->action_summaries();
        writer_text = run_report::writer_json(*writer);
      }
      if (m_client) {
        client.emplace();
        client->index = m_topo.client_index;
        client->world_rank = m_topo.world_rank;
        client->writer = m_topo.has_servers ? m_topo.server_index : m_topo.client_index;
        client->iterations = m_client->iteration();
        client->counters = m_client->counters();
        if (m_client->times_calls()) client->times = &m_client->iteration_times();
        client_text = run_report::client_json(*client);
      }
    } catch (const std::exception& e) {
      log::warning("the run report leaves this process out: ", e.what());
      writer.reset();
      client.reset();
      writer_text.clear();
      client_text.clear();
    }
    run_report::run_facts facts;
    facts.simulation = m_model.simulation_name;
    facts.configuration = m_model.file;
    facts.mode = mode_name();
    facts.processes = m_topo.world_size;
    facts.clients = m_topo.client_count;
    facts.writers = m_topo.has_servers ? m_topo.server_count : m_topo.client_count;
    const std::string problem =
        run_report::gather_and_write(world, path, facts, writer_text, client_text,
                                     writer ? &*writer : nullptr, client ? &*client : nullptr);
    if (m_topo.world_rank == 0) {
      if (problem.empty())
        log::info("run report written to ", path);
      else
        log::warning("no run report: ", problem);
    }
  } catch (const std::exception& e) {
    log::warning("no run report: ", e.what());
  } catch (...) {
  }
}

}  // namespace sidecore
