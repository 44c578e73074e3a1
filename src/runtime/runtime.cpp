// Initialization order: read the XML once and broadcast it, split the communicator, create
// the shared segment on each server, map it on its clients, then remove its name.
#include "runtime/runtime.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/interrupt_notice.hpp"
#include "common/job_failure.hpp"
#include "common/log.hpp"
#include "common/run_clock.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "engines/inline_engine.hpp"
#include "engines/mpi_engine.hpp"
#include "engines/shm_engine.hpp"
#include "engines/thread_engine.hpp"
#include "plugins/python_scripts.hpp"
#include "plugins/store.hpp"
#include "runtime/run_report.hpp"
#include "transport/buffer_pool.hpp"
#include "transport/heap_reserver.hpp"
#include "transport/shared_heap.hpp"
#include "transport/shared_segment.hpp"

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

// Broadcasts a string from rank 0.
std::string broadcast_string(std::string text, MPI_Comm comm) {
  unsigned long long length = text.size();
  check_mpi(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, 0, comm), "MPI_Bcast");
  text.resize(length);
  if (length)
    check_mpi(MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, comm), "MPI_Bcast");
  return text;
}

// Memory this machine lets the job use: physical memory, or a smaller cgroup (v2) limit.
std::uint64_t usable_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  std::uint64_t bytes = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * page : 0;
  std::ifstream limit("/sys/fs/cgroup/memory.max");
  std::uint64_t cgroup = 0;
  if (limit >> cgroup && cgroup > 0 && (bytes == 0 || cgroup < bytes)) bytes = cgroup;
  return bytes;
}

// Buffers are mapped and touched at initialization: with dedicated cores one segment per
// node of <buffer size> bytes; with a background thread or dedicated nodes one buffer per
// process of that size, so a size chosen for dedicated cores counts once per process. A total
// the node cannot hold would get processes killed while the pages are touched: refuse it with
// a clear error, and warn when it takes more than half of the memory.
void check_node_memory(const config::model& model, const topology::layout& topo, const char* mode,
                       bool per_process) {
  const std::uint64_t memory = usable_memory();
  const std::uint64_t size = model.arch.buffer_size;
  const std::uint64_t processes =
      per_process ? static_cast<std::uint64_t>(std::max(1, topo.node_size)) : 1;
  if (memory == 0 || size == 0) return;
  const std::uint64_t total = size * processes;
  const std::string what =
      per_process ? "<buffer size> of " + readable_bytes(size) + " per process (" + mode +
                        ": each process holds its own buffer) x " + std::to_string(processes) +
                        " processes on this node = " + readable_bytes(total) + ", of " +
                        readable_bytes(memory) + " of memory"
                  : "<buffer size> of " + readable_bytes(size) + " of shared memory per node (" +
                        mode + "), of " + readable_bytes(memory) + " of memory";
  if (total > memory / 10 * 9)
    throw config_error(what + " in " + model.file +
                       ": lower <buffer size=...> (it is per "
                       "node with dedicated cores, per process with a background thread or "
                       "dedicated nodes)");
  if (total > memory / 2 && topo.node_rank == 0)
    log::warning(what, ": more than half of the node's memory is set aside for buffers");
}

// Bytes one client writes in an iteration when it writes every variable of every domain, as the
// parameters stand at start-up, in the heap's allocation granularity; 0 when a layout cannot be
// evaluated yet. Sizes the part of the shared buffer mapped ahead of the first write.
std::uint64_t bytes_per_iteration(const config::model& model) {
  std::vector<std::int64_t> values;
  values.reserve(model.parameters.size());
  for (const config::parameter& p : model.parameters)
    values.push_back(config::is_integer(p.type) ? p.int_value
                                                : static_cast<std::int64_t>(p.real_value));
  std::uint64_t total = 0;
  for (const config::variable& v : model.variables) {
    if (!v.enabled) continue;
    const config::layout& layout = model.layouts[v.layout_index];
    std::vector<std::int64_t> extents;
    try {
      for (const config::expression& d : layout.dimensions) extents.push_back(d.evaluate(values));
    } catch (const error&) {
      return 0;
    }
    const std::optional<std::uint64_t> bytes =
        config::array_bytes(extents, config::element_size(layout.type));
    if (!bytes) return 0;
    const std::uint64_t block = transport::shared_heap::rounded(*bytes);
    const std::uint64_t domains = static_cast<std::uint64_t>(std::max(1, model.arch.domains));
    if (block > (UINT64_MAX - total) / domains) return UINT64_MAX;
    total += block * domains;
  }
  return total;
}

// What a client's buffer maps ahead of the first write: one iteration, at least 4 MiB.
std::uint64_t first_iteration_window(const config::model& model) {
  return std::max<std::uint64_t>(bytes_per_iteration(model), 4u << 20);
}

// Raises the same error on every rank if any rank failed (message from the lowest such rank).
void agree(MPI_Comm comm, int code, const std::string& message) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = code != DAMARIS_OK ? rank : size;
  int first = size;
  check_mpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (first == size) return;
  int failed_code = code;
  check_mpi(MPI_Bcast(&failed_code, 1, MPI_INT, first, comm), "MPI_Bcast");
  std::string text = message;
  unsigned long long length = text.size();
  check_mpi(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, first, comm), "MPI_Bcast");
  text.resize(length);
  if (length)
    check_mpi(MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, first, comm), "MPI_Bcast");
  if (rank != first) text = "rank " + std::to_string(first) + ": " + text;
  throw error(failed_code, text);
}

std::string job_token(MPI_Comm comm) {
  unsigned long long token = 0;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    std::random_device device;
    token = (static_cast<unsigned long long>(device()) << 32) ^ device() ^
            static_cast<unsigned long long>(::getpid());
  }
  check_mpi(MPI_Bcast(&token, 1, MPI_UNSIGNED_LONG_LONG, 0, comm), "MPI_Bcast");
  char text[32];
  std::snprintf(text, sizeof text, "%016llx", token);
  return text;
}

// Why this process cannot read the configuration file at `file` ("" when it can).
std::string unreadable(const std::string& file) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0)
    return "cannot read configuration file '" + file + "': " + std::strerror(errno);
  if (S_ISDIR(info.st_mode))
    return "cannot read configuration file '" + file +
           "': it is a directory; pass the path of the XML file itself";
  if (::access(file.c_str(), R_OK) != 0)
    return "cannot read configuration file '" + file + "': " + std::strerror(errno);
  return {};
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
                                                  const topology::layout& topo) {
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
  if (topo.remote_servers) {
    env.mode = "dedicated nodes";
    env.is_dedicated_node = topo.is_server;
    env.servers_per_node = topo.is_server ? topo.node_size : 0;
    const int client_nodes = std::max(1, topo.node_count - model.arch.dedicated_nodes);
    env.clients_per_node = topo.client_count / client_nodes;
    if (topo.is_server) {
      for (int c = 0; c < topo.client_count; ++c)
        if (topology::server_of_client(c, topo.client_count, topo.server_count) ==
            topo.server_index)
          env.known_clients.push_back(c);
    }
  } else if (topo.has_servers) {
    env.mode = "dedicated cores";
    env.is_dedicated_core = topo.is_server;
    env.servers_per_node = model.arch.dedicated_cores;
    env.clients_per_node = topo.node_size - model.arch.dedicated_cores;
    if (topo.is_server) env.known_clients = topo.group_client_indices;
  } else {
    env.mode = model.arch.io_threads > 0 ? "thread" : "synchronous";
    env.clients_per_node = topo.node_size;
    env.known_clients.push_back(topo.client_index);
  }
  return env;
}

// Damaris 1.12 also takes the configuration itself where a path is expected: PDI's Damaris
// plugin hands damaris_initialize the text ModifyModel filled in. A path never starts with '<'.
bool is_configuration_text(const std::string& file_or_text) {
  const std::size_t first = file_or_text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && file_or_text[first] == '<';
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

config::model runtime::load_everywhere(const std::string& file_or_text, MPI_Comm comm) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  const bool given_text = is_configuration_text(file_or_text);
  // What messages call the configuration.
  const std::string file = given_text ? configuration_text_name : file_or_text;
  // Rank 0 reads the file for everyone, as Damaris does: the other ranks never open it, so a
  // program whose rank 0 writes the file just before damaris_initialize works, and so does a
  // job whose other nodes cannot see the file at all. Text given in its place is rank 0's too.
  std::string text;
  std::string failure;
  if (rank == 0 && given_text) {
    if (file_or_text.size() > config::max_configuration_bytes)
      failure = std::string(file) + ": " + std::to_string(file_or_text.size()) +
                " bytes; a configuration may hold at most " +
                std::to_string(config::max_configuration_bytes) + " bytes";
    else
      text = file_or_text;
  } else if (rank == 0) {
    failure = unreadable(file);
    if (failure.empty()) {
      try {
        text = config::read_configuration_file(file);
      } catch (const config_error& e) {
        failure = e.what();
      }
    }
  }
  agree(comm, failure.empty() ? DAMARIS_OK : DAMARIS_CONFIG_ERROR, failure);
  text = broadcast_string(text, comm);
  // Every rank parses the same text with rank 0's options.
  int strict = rank == 0 ? (environment::strict() ? 1 : 0) : 0;
  check_mpi(MPI_Bcast(&strict, 1, MPI_INT, 0, comm), "MPI_Bcast");
  config::parse_options options;
  options.strict = strict != 0;
  // Every rank parses the same text, but a store plugin named by its type alone is looked up
  // on each rank's own file system: agree, so that no rank goes on alone into a collective.
  config::model model;
  int code = DAMARIS_OK;
  std::string message;
  try {
    model = config::parse_model(text, file, options);
  } catch (const error& e) {
    code = e.code();
    message = e.what();
  }
  agree(comm, code, message);
  return model;
}

runtime::runtime(const std::string& config_file, MPI_Comm comm)
    : m_model(load_everywhere(config_file, comm)), m_topo(build_topology(m_model, comm)) {
  log::configure(to_log_level(m_model.log.level), log_file_of(m_model, m_topo.world_rank));
  // Blocks held in process memory (no dedicated core, dedicated nodes, active buffering) reuse
  // released buffers up to what the XML lets this process hold.
  buffer_pool::set_capacity(m_model.arch.buffer_size + m_model.arch.server_memory);
  log::set_identity(m_topo.world_rank, m_topo.is_server ? "server" : "client");
  // Always, not only for scripts: programs ask for it too (damaris4py.client); collective.
  m_environment = script_environment_of(m_model, m_topo);
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
  connect_channel();
  // Stores are opened now (output directories created, options checked), on every writer, so
  // that a store that cannot work fails damaris_initialize on every rank instead of leaving
  // clients waiting for a server that gave up.
  int code = DAMARIS_OK;
  std::string message;
  try {
    if (!m_topo.is_server) {
      m_client = std::make_unique<client::client>(m_model, m_topo.client_index, make_engine());
    } else {
      m_server_parameters = std::make_unique<client::parameters>(m_model);
      if (m_topo.remote_servers) {
        check_node_memory(m_model, m_topo, "dedicated nodes", true);
        // Mapped ahead: one iteration of every client it serves.
        const std::uint64_t clients = std::max<std::size_t>(1, m_topo.served_client_ranks.size());
        const std::uint64_t window = first_iteration_window(m_model);
        buffer_pool::reserve_arena(m_model.arch.buffer_size,
                                   window > UINT64_MAX / clients ? UINT64_MAX : window * clients);
      }
      if (m_topo.remote_servers)
        m_remote_server =
            std::make_unique<server::remote_server_loop>(m_model, m_topo, m_link.get());
      else
        m_server = std::make_unique<server::server_loop>(m_model, m_topo, *m_channel);
    }
  } catch (const error& e) {
    code = e.code();
    message = e.what();
  } catch (const std::exception& e) {
    code = DAMARIS_INIT_ERROR;
    message = e.what();
  }
  agree(m_topo.world.get(), code, message);
  // Every process leaves the agreement above together: the run report's times start here.
  run_clock::set_origin();
  interrupt_notice::install(
      m_topo.world_rank == 0,
      "rank " + std::to_string(m_topo.world_rank) + (m_topo.is_server ? " server" : " client"),
      mode_name(), output_directories(m_model));
  if (m_client) interrupt_notice::note_iteration(m_client->iteration());
  watch_peers();
  if (m_topo.world_rank == 0)
    log::info("initialized from ", m_model.file, ": ", m_topo.client_count, " clients, ",
              m_topo.server_count,
              m_topo.remote_servers         ? " servers on dedicated nodes"
              : m_topo.has_servers          ? " dedicated cores"
              : m_model.arch.io_threads > 0 ? " dedicated cores (an I/O thread per client)"
                                            : " dedicated cores (synchronous output)",
              ", ", m_topo.node_count, " node(s)");
}

runtime::~runtime() {
  m_peers.reset();
  job_failure::describe_with(nullptr);
  interrupt_notice::uninstall();
  m_heap_reserver.reset();
  m_client.reset();
  m_server.reset();
  m_remote_server.reset();
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
  const transport::live_stats* stats = nullptr;
  if (m_server) {
    where += "dedicated core " + std::to_string(m_topo.server_index);
    stats = &m_channel->stats();
  } else if (m_remote_server) {
    where += "server " + std::to_string(m_topo.server_index) + " of a dedicated node";
    stats = &m_remote_server->stats();
  } else if (m_client) {
    where += "client " + std::to_string(m_topo.client_index);
    stats = m_client->engine().writer_stats();
  }
  std::string text = "(This process: " + where + ", " + mode_name() + ".)";
  transport::live_values v;
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

void runtime::connect_channel() {
  if (m_topo.remote_servers) {
    MPI_Comm dup = MPI_COMM_NULL;
    check_mpi(MPI_Comm_dup(m_topo.world.get(), &dup), "MPI_Comm_dup");
    m_link = communicator(dup);
    return;
  }
  if (!m_topo.has_servers) return;
  {
    // Agreed before any segment is created: every rank reaches the same verdict.
    int code = DAMARIS_OK;
    std::string message;
    try {
      check_node_memory(m_model, m_topo, "dedicated cores", false);
    } catch (const error& e) {
      code = e.code();
      message = e.what();
    }
    agree(m_topo.world.get(), code, message);
  }
  // The name carries the creating server's process id, so that a later job on the node can tell
  // a segment left by a job that was killed (in the moment it had a name) and remove it.
  const std::string token = job_token(m_topo.world.get());
  int creator = static_cast<int>(::getpid());
  check_mpi(MPI_Bcast(&creator, 1, MPI_INT, m_topo.group_size - 1, m_topo.group.get()),
            "MPI_Bcast");
  const std::string name = "/sidecore-" + std::to_string(creator) + "-" + token + "-" +
                           std::to_string(m_topo.server_index);
  MPI_Comm world = m_topo.world.get();
  // 1. Servers create their segment (its data heap neither reserved nor touched yet).
  int code = DAMARIS_OK;
  std::string message;
  if (m_topo.is_server) {
    if (const int removed = transport::remove_stale_segments(); removed > 0)
      log::info("removed ", removed,
                " shared memory segment(s) of jobs that ended without "
                "removing them");
    try {
      transport::channel_sizes sizes;
      sizes.heap_bytes =
          m_model.arch.buffer_size / static_cast<std::uint64_t>(m_model.arch.dedicated_cores);
      sizes.clients = static_cast<std::uint32_t>(m_topo.group_size - 1);
      // A ring holds notifications only (304 bytes each): keep at least 1024 per client so that a
      // server busy storing one iteration never stops its clients from writing the next ones
      // while the buffer has room (Damaris files often say size="100").
      sizes.ring_capacity = static_cast<std::uint32_t>(std::min<std::uint64_t>(
          std::max<std::uint64_t>(m_model.arch.queue_size, 1024), 1u << 20));
      // Say so when the XML's sizes are not taken as written.
      if (m_topo.server_index == 0) {
        if (m_model.arch.queue_size > sizes.ring_capacity)
          log::warning(m_model.file, ": <queue size=\"", m_model.arch.queue_size,
                       "\"> is more than the ", sizes.ring_capacity,
                       " notifications a client's ring holds at most; using ", sizes.ring_capacity);
        const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
        const std::uint64_t heap = (sizes.heap_bytes + page - 1) / page * page;
        if (heap > sizes.heap_bytes + sizes.heap_bytes / 100)
          log::warning(m_model.file, ": <buffer size=\"", m_model.arch.buffer_size, "\"> gives ",
                       sizes.heap_bytes, " bytes per dedicated core, rounded up to ", heap,
                       " (whole pages of ", page, " bytes)");
      }
      m_channel.emplace(transport::channel::create(name, sizes));
    } catch (const error& e) {
      code = e.code();
      message = e.what();
    }
  }
  agree(world, code, message);
  // 2. Clients map it.
  if (!m_topo.is_server) {
    try {
      m_channel.emplace(transport::channel::open(name));
    } catch (const error& e) {
      code = e.code();
      message = e.what();
    }
  }
  agree(world, code, message);
  // 3. Everyone has it mapped: remove the name so nothing outlives the job, even a crash.
  if (m_channel) m_channel->unlink();
  // 4. Only now are the data heap's pages reserved: a job killed meanwhile leaves nothing
  // behind. What the first iteration needs (a window at the start of each client's stretch of
  // the heap, where its blocks go first) is reserved now, the rest by the core in the
  // background (a client reaching pages not yet reserved waits for them), so that start-up
  // does not grow with the buffer's size.
  const std::uint32_t clients = std::max(1u, m_channel->client_count());
  const std::uint64_t share = m_channel->heap().capacity() / clients;
  const std::uint64_t window = std::min(share, first_iteration_window(m_model));
  if (m_topo.is_server) {
    try {
      m_channel->reserve_heap(window);
    } catch (const error& e) {
      code = e.code();
      message = e.what();
    }
    // The writer's counters can be read from here on (sidecore_stats), before the core has
    // completed anything: nothing received yet, in a buffer of this size.
    transport::live_values initial;
    initial.buffer_capacity = m_channel->heap().capacity();
    m_channel->stats().publish(initial);
  }
  agree(world, code, message);
  // 5. Map, in each process, what the first iteration touches: the segment's header, allocator
  // state and rings, then each client its window, the core every client's. The rest is mapped
  // on first use, so that resident memory follows what the run uses, not the buffer's size.
  m_channel->prefault(0, m_channel->heap().stretch_of(0, 1));  // header, allocator, rings
  for (std::uint32_t slot = 0; slot < clients; ++slot)
    if (m_topo.is_server || slot == static_cast<std::uint32_t>(m_topo.group_rank))
      m_channel->prefault(m_channel->heap().stretch_of(slot, clients), window);
  if (m_topo.is_server) m_heap_reserver = std::make_unique<transport::heap_reserver>(*m_channel);
}

std::unique_ptr<engines::engine> runtime::make_engine() {
  const int source = m_topo.client_index;
  if (m_topo.remote_servers) {
    check_node_memory(m_model, m_topo, "dedicated nodes", true);
    buffer_pool::reserve_arena(m_model.arch.buffer_size, first_iteration_window(m_model));
    return std::make_unique<engines::mpi_engine>(m_model, m_link.get(), m_topo.server_world_rank,
                                                 source);
  }
  if (m_channel) {
    // The dedicated core is the group's last rank: its rank in the job, to tell when it died.
    MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
    int core = m_topo.group_size - 1, core_in_world = -1;
    check_mpi(MPI_Comm_group(m_topo.group.get(), &group), "MPI_Comm_group");
    check_mpi(MPI_Comm_group(m_topo.world.get(), &world), "MPI_Comm_group");
    MPI_Group_translate_ranks(group, 1, &core, world, &core_in_world);
    MPI_Group_free(&group);
    MPI_Group_free(&world);
    return std::make_unique<engines::shm_engine>(
        m_model, *m_channel, static_cast<std::uint32_t>(m_topo.group_rank), source, core_in_world);
  }
  const MPI_Comm clients = m_topo.clients.get();
  // Stores that call the clients together need every client at every iteration; the first
  // that writes collectively decides how a background thread can run them.
  bool in_step = false;
  const config::store* collective = nullptr;
  for (const config::store& st : m_model.stores) {
    const plugins::store_needs needs = plugins::needs_of(m_model, st);
    in_step = in_step || needs.collective_writes || needs.writers_exchange;
    if (needs.collective_writes && !collective) collective = &st;
  }
  // Action plugins may call collectives on the writers' communicator at every iteration.
  in_step = in_step || !m_model.action_plugins.empty();
  if (m_model.arch.io_threads == 0)
    return std::make_unique<engines::inline_engine>(m_model, clients, source, in_step);
  // Thread mode: stores run on a background thread. Their MPI calls are only safe there with
  // MPI_THREAD_MULTIPLE; otherwise each process writes alone (file per process), and
  // collective output, which needs every process, is written synchronously instead.
  int provided = MPI_THREAD_SINGLE;
  check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread");
  if (provided != MPI_THREAD_MULTIPLE && collective) {
    if (m_topo.client_index == 0)
      log::warning(m_model.file, ":", collective->line, ": store '", collective->name,
                   "' writes collectively (all writers together), which a background thread "
                   "can only do when MPI is initialized with MPI_Init_thread(..., "
                   "MPI_THREAD_MULTIPLE, ...); this run stores synchronously, inside "
                   "damaris_end_iteration, instead (same files)");
    return std::make_unique<engines::inline_engine>(m_model, clients, source, in_step);
  }
  check_node_memory(m_model, m_topo, "background thread", true);
  buffer_pool::reserve_arena(m_model.arch.buffer_size, first_iteration_window(m_model));
  if (provided == MPI_THREAD_MULTIPLE) {
    MPI_Comm dup = MPI_COMM_NULL;
    check_mpi(MPI_Comm_dup(clients, &dup), "MPI_Comm_dup");
    m_thread_comm = communicator(dup);
    return std::make_unique<engines::thread_engine>(m_model, m_thread_comm.get(), MPI_COMM_NULL, -1,
                                                    -1, source);
  }
  return std::make_unique<engines::thread_engine>(m_model, MPI_COMM_SELF, clients,
                                                  m_topo.client_index, m_topo.client_count, source);
}

client::client& runtime::as_client(const char* call) {
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
  if (m_remote_server)
    m_remote_server->run();
  else
    m_server->run();
  m_server_runs_done = true;
  // Stores never stop the server (later iterations are still stored), but the simulation's
  // launcher should learn that some output is missing.
  std::string failure =
      m_remote_server ? m_remote_server->take_failure() : m_server->take_failure();
  if (!failure.empty()) {
    const std::uint64_t failures = m_remote_server ? m_remote_server->counters().store_failures
                                                   : m_server->counters().store_failures;
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
  write_run_report();
  // Past this barrier processes leave the job normally: no longer a sign of failure. (A peer
  // that dies while the others wait here is MPI's to notice.)
  if (m_peers) m_peers->stop();
  check_mpi(MPI_Barrier(m_topo.world.get()), "MPI_Barrier");
  if (!failure.empty()) throw error(DAMARIS_FINALIZE_ERROR, failure);
}

void runtime::report() {
  if (m_server || m_remote_server) {
    const server::processor_counters& c =
        m_server ? m_server->counters() : m_remote_server->counters();
    // The blocks of every variable, also those no store keeps (store="#"): what went through.
    log::info("server ", m_topo.server_index, ": ", c.iterations_stored, " iterations, ",
              c.blocks_stored, " blocks, ", c.bytes_stored, " bytes processed, ",
              c.seconds_in_stores, " s in stores; buffer high water ",
              m_server ? m_server->heap_high_water() : m_remote_server->high_water(), " bytes");
    if (m_server) {
      const server::active_buffer_counters& b = m_server->buffer_counters();
      if (b.bytes_buffered || b.bytes_spilled)
        log::info("server ", m_topo.server_index, ": moved ", b.bytes_buffered,
                  " bytes into server memory (at most ", b.memory_high_water,
                  " bytes at once) and ", b.bytes_spilled, " bytes into ", b.spill_files,
                  " spill file(s) to relieve the shared buffer (active buffering, and iterations "
                  "set aside so that clients out of step could write)");
    }
    if (c.store_failures)
      log::error("server ", m_topo.server_index, ": ", c.store_failures,
                 " store call(s) failed; see the errors above for the iterations concerned");
    if (c.script_failures)
      log::error("server ", m_topo.server_index, ": ", c.script_failures,
                 " Python script call(s) raised; see the tracebacks above");
    if (c.iterations_incomplete)
      log::warning("server ", m_topo.server_index, ": ", c.iterations_incomplete,
                   " iteration(s) stored incomplete (a client skipped data or never ended them)");
    const std::uint64_t rejected =
        m_server ? m_server->messages_rejected() : m_remote_server->messages_rejected();
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
  if (m_topo.remote_servers) return "dedicated nodes";
  if (m_topo.has_servers) return "dedicated cores";
  if (m_client && m_client->engine().local_writer() &&
      dynamic_cast<const engines::thread_engine*>(&m_client->engine()))
    return "background thread";
  return "synchronous";
}

// Collective over the world: every process takes part, with what it has (nothing on failure).
void runtime::write_run_report() noexcept {
  try {
    MPI_Comm world = m_topo.world.get();
    std::string path = m_topo.world_rank == 0 ? run_report::path_for(m_model) : std::string();
    int wanted = path.empty() ? 0 : 1;
    check_mpi(MPI_Bcast(&wanted, 1, MPI_INT, 0, world), "MPI_Bcast");
    if (!wanted) return;
    std::optional<run_report::writer_part> writer;
    std::optional<run_report::client_part> client;
    std::string writer_text, client_text;
    try {
      const server::iteration_processor* processor = nullptr;
      if (m_server || m_remote_server) {
        processor = m_server ? &m_server->processor() : &m_remote_server->processor();
        writer.emplace();
        writer->kind = m_server ? "dedicated core" : "dedicated node";
        writer->index = m_topo.server_index;
        if (m_server) {
          writer->clients = m_topo.group_client_indices;
          writer->rejected = m_server->messages_rejected();
        } else {
          writer->rejected = m_remote_server->messages_rejected();
          for (int c = 0; c < m_topo.client_count; ++c)
            if (topology::server_of_client(c, m_topo.client_count, m_topo.server_count) ==
                m_topo.server_index)
              writer->clients.push_back(c);
        }
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
