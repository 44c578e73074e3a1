// The numbers behind `sidecore validate`: roles from the ranks as src/topology assigns them,
// bytes from the layouts as damaris_write copies them, files as the HDF5 store names them.
#include "tools/cli/plan.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>

#include "common/error.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "config/output_names.hpp"
#include "memory/shared_heap.hpp"
#include "plugins/hdf5/hdf5_store.hpp"
#include "plugins/store.hpp"
#include "topology/topology.hpp"

namespace sidecore::cli {
namespace {

constexpr std::uint64_t saturated = std::numeric_limits<std::uint64_t>::max();

std::uint64_t times(std::uint64_t a, std::uint64_t b) noexcept {
  if (a != 0 && b > saturated / a) return saturated;
  return a * b;
}

std::uint64_t plus(std::uint64_t a, std::uint64_t b) noexcept {
  return b > saturated - a ? saturated : a + b;
}

std::string at_line(const config::model& model, int line) {
  return model.file + ":" + std::to_string(line);
}

std::vector<std::int64_t> evaluate_all(const std::vector<config::expression>& list,
                                       const std::vector<std::int64_t>& values) {
  std::vector<std::int64_t> out;
  out.reserve(list.size());
  for (const config::expression& e : list) out.push_back(e.evaluate(values));
  return out;
}

// Parameter values at start-up, as the runtime sizes its first iteration with them.
std::vector<std::int64_t> initial_values(const config::model& model) {
  std::vector<std::int64_t> values;
  values.reserve(model.parameters.size());
  for (const config::parameter& p : model.parameters)
    values.push_back(config::is_integer(p.type) ? p.int_value
                                                : static_cast<std::int64_t>(p.real_value));
  return values;
}

// Consecutive clients per writer, counted with the mapping the topology uses.
void count_clients(const std::vector<int>& per_writer, deployment& d) {
  if (per_writer.empty()) return;
  d.most_clients_per_writer = *std::max_element(per_writer.begin(), per_writer.end());
  d.fewest_clients_per_writer = *std::min_element(per_writer.begin(), per_writer.end());
}

variable_plan plan_variable(const config::model& model, std::size_t index,
                            const std::vector<std::int64_t>& values,
                            const std::vector<config::ghost_widths>& ghosts) {
  const config::variable& v = model.variables[index];
  const config::layout& l = model.layouts[v.layout_index];
  variable_plan p;
  p.index = index;
  p.dimensions = evaluate_all(l.dimensions, values);
  p.global_dimensions = evaluate_all(l.global_dimensions, values);
  p.ghosts = ghosts[v.layout_index];
  p.blocks_per_client = std::max(1, model.arch.domains);
  const std::size_t element = config::element_size(l.type);
  const std::optional<std::uint64_t> bytes = config::array_bytes(p.dimensions, element);
  if (!bytes)
    throw config_error(at_line(model, v.line) + ": variable '" + v.name +
                       "': its blocks hold more than 2^64 bytes; lower the dimensions of layout '" +
                       l.name + "'");
  p.block_bytes = *bytes;
  std::vector<std::int64_t> interior = p.dimensions;
  if (!p.ghosts.empty())
    for (std::size_t d = 0; d < interior.size(); ++d)
      interior[d] -= p.ghosts.before[d] + p.ghosts.after[d];
  p.stored_bytes = config::array_bytes(interior, element).value_or(saturated);
  p.shared_buffer_bytes = memory::shared_heap::rounded(p.block_bytes);
  if (v.store_index != config::variable::npos) p.stores.push_back(model.stores[v.store_index].name);
  for (const config::action_plugin& a : model.action_plugins)
    if (std::find(a.variables.begin(), a.variables.end(), index) != a.variables.end())
      p.actions.push_back(a.name);
  return p;
}

// The buffers each mode fills, and what one iteration puts in the fullest of each kind.
buffer_plan plan_buffer(const config::model& model, const deployment& job, std::uint64_t per_client,
                        std::uint64_t per_client_shared) {
  buffer_plan b;
  b.name = model.arch.buffer_name;
  b.size = model.arch.buffer_size;
  const std::uint64_t busiest = static_cast<std::uint64_t>(job.most_clients_per_writer);
  const std::uint64_t per_node = static_cast<std::uint64_t>(job.ranks_per_node);
  switch (job.mode) {
    case deployment_mode::dedicated_cores:
      b.uses.push_back({"each dedicated core",
                        b.size / static_cast<std::uint64_t>(model.arch.dedicated_cores),
                        times(per_client_shared, busiest)});
      b.memory_per_node = b.size;
      break;
    case deployment_mode::dedicated_nodes:
      b.uses.push_back({"each client process", b.size, per_client});
      b.uses.push_back({"each server process", b.size, times(per_client, busiest)});
      b.memory_per_node = times(b.size, per_node);
      break;
    case deployment_mode::thread:
      b.uses.push_back({"each process (its I/O thread's queue)", b.size, per_client});
      b.memory_per_node = times(b.size, per_node);
      break;
    case deployment_mode::synchronous:
      break;
  }
  return b;
}

std::string dataset_pattern(const config::model& model, const variable_plan& v, bool collective) {
  const std::string& name = model.variables[v.index].name;
  if (collective && !v.global_dimensions.empty()) return name;
  return name + "/P<source>" + (model.arch.domains > 1 ? "/B<block>" : "");
}

store_plan plan_store(const config::model& model, std::size_t s, const deployment& job,
                      const std::vector<variable_plan>& variables,
                      std::vector<std::string>& warnings) {
  const config::store& settings = model.stores[s];
  store_plan p;
  p.index = s;
  p.writers = job.writers;
  plugins::store_context context;
  context.model = &model;
  context.settings = &settings;
  // Not writer 0: the store's own start-up warnings are written by the plan, not the log.
  context.writer_index = 1;
  context.writer_count = std::max(2, job.writers);
  std::vector<const variable_plan*> stored;
  for (const variable_plan& v : variables)
    if (model.variables[v.index].store_index == s) {
      stored.push_back(&v);
      p.variables.push_back(model.variables[v.index].name);
    }
  if (stored.empty())
    warnings.push_back(at_line(model, settings.line) + ": store '" + settings.name +
                       "' stores no enabled variable, so it is never opened and writes nothing");

  const std::uint64_t clients = static_cast<std::uint64_t>(job.clients);
  const std::uint64_t busiest = static_cast<std::uint64_t>(job.most_clients_per_writer);
  std::uint64_t per_client = 0, once = 0;
  for (const variable_plan* v : stored) {
    const std::uint64_t bytes =
        times(v->stored_bytes, static_cast<std::uint64_t>(v->blocks_per_client));
    if (model.variables[v->index].time_varying)
      per_client = plus(per_client, bytes);
    else
      once = plus(once, bytes);
  }
  p.bytes_per_stored_iteration = times(per_client, clients);
  p.bytes_per_writer = times(per_client, busiest);
  if (once > 0)
    p.notes.push_back("time-invariant variables add " + std::to_string(times(once, clients)) +
                      " bytes once, to the first stored iteration that holds them");

  if (!settings.library.empty()) {
    p.kind = "plugin";
    p.notes.push_back("plugin store of library '" + settings.library +
                      "': what it writes is up to the plugin");
    return p;
  }
  if (equals_ignoring_case(settings.type, "null")) {
    p.kind = "null";
    (void)plugins::make_store(context);  // checks Delay as the run does
    for (const auto& option : settings.options)
      if (option.first != "Delay")
        warnings.push_back(at_line(model, settings.line) + ": store \"" + settings.name +
                           "\": option \"" + option.first +
                           "\" means nothing to a null store (its only option is Delay); ignored");
    p.notes.push_back("discards every block: no files");
    return p;
  }
  p.kind = "HDF5";
  const plugins::hdf5::store_options options = plugins::hdf5::parse_options(context);
  const bool collective = options.mode == plugins::hdf5::file_mode::collective;
  p.file_mode = collective ? "Collective" : "FilePerCore";
  p.files_path = options.files_path;
  const std::string& sim = model.simulation_name;
  const bool any_global = std::any_of(stored.begin(), stored.end(), [](const variable_plan* v) {
    return !v->global_dimensions.empty();
  });
  if (collective) {
    p.iteration_files.push_back(options.files_path + config::iteration_file_name(sim, "<i>"));
    p.first_files.push_back(options.files_path + config::iteration_file_name(sim, 0));
  } else {
    p.iteration_files.push_back(options.files_path +
                                config::per_writer_file_name(sim, "<i>", "<w>"));
    for (int w = 0; w < job.writers; ++w) {
      if (job.writers > 8 && w == 3) {
        p.first_files.push_back("...");
        w = job.writers - 2;
        continue;
      }
      p.first_files.push_back(options.files_path + config::per_writer_file_name(sim, 0, w));
    }
    if (options.virtual_view && any_global) {
      p.master_file = options.files_path + config::iteration_file_name(sim, "<i>");
      p.first_files.push_back(options.files_path + config::iteration_file_name(sim, 0));
    } else if (options.virtual_view) {
      p.notes.push_back("no master file: none of its variables has global dimensions");
    }
  }
  if (options.xdmf) p.xdmf_file = options.files_path + config::xdmf_file_name(sim);
  if (!p.xdmf_file.empty()) p.first_files.push_back(p.xdmf_file);
  for (const variable_plan* v : stored)
    p.datasets.push_back(dataset_pattern(model, *v, collective));

  if (collective)
    for (const variable_plan* v : stored)
      if (v->global_dimensions.empty()) {
        const config::variable& var = model.variables[v->index];
        const config::layout& l = model.layouts[var.layout_index];
        warnings.push_back(at_line(model, settings.line) + ": store '" + settings.name +
                           "', FileMode Collective: variable \"" + var.name + "\" (line " +
                           std::to_string(var.line) + ") has layout \"" + l.name +
                           "\" without global dimensions, so each of its blocks is stored as its "
                           "own dataset \"" +
                           dataset_pattern(model, *v, true) +
                           "\"; add global=\"...\" to the layout (line " + std::to_string(l.line) +
                           ") for one global dataset");
      }
  const bool exchange = options.virtual_view || options.xdmf;
  if (job.mode == deployment_mode::thread && collective)
    p.notes.push_back(
        "thread mode: collective writes run on the I/O threads only when MPI "
        "provides MPI_THREAD_MULTIPLE; otherwise inside damaris_end_iteration");
  else if (job.mode == deployment_mode::thread && exchange && job.writers > 1)
    p.notes.push_back(
        "thread mode without MPI_THREAD_MULTIPLE: the master files and the XDMF "
        "are written at damaris_finalize");
  const config::schedule_settings& schedule = model.arch.schedule;
  const bool coordinated =
      job.writers > 1 && ((schedule.uses(config::schedule_policy::rate) && schedule.writers > 0 &&
                           schedule.writers < job.writers) ||
                          schedule.uses(config::schedule_policy::ordered) ||
                          schedule.uses(config::schedule_policy::slots) ||
                          schedule.uses(config::schedule_policy::self));
  const bool invariant = std::any_of(stored.begin(), stored.end(), [&](const variable_plan* v) {
    return !model.variables[v->index].time_varying;
  });
  if (coordinated && !collective && exchange && !invariant)
    p.notes.push_back(
        "the <schedule> has the writers take turns: the master files and the XDMF "
        "are written at the end of the run");
  if (options.durable) p.notes.push_back("Durable: every file is flushed to stable storage");
  return p;
}

}  // namespace

const char* mode_name(deployment_mode mode) noexcept {
  switch (mode) {
    case deployment_mode::dedicated_cores:
      return "dedicated cores";
    case deployment_mode::dedicated_nodes:
      return "dedicated nodes";
    case deployment_mode::thread:
      return "thread";
    default:
      return "synchronous";
  }
}

double buffer_use::headroom() const noexcept {
  if (bytes_per_iteration == 0) return -1.0;
  return static_cast<double>(capacity) / static_cast<double>(bytes_per_iteration);
}

double buffer_plan::headroom() const noexcept {
  double smallest = -1.0;
  for (const buffer_use& u : uses) {
    const double h = u.headroom();
    if (h >= 0 && (smallest < 0 || h < smallest)) smallest = h;
  }
  return smallest;
}

deployment plan_deployment(const config::model& model, int ranks, int ranks_per_node) {
  deployment d;
  d.ranks = ranks;
  d.ranks_per_node = ranks_per_node;
  d.nodes = (ranks + ranks_per_node - 1) / ranks_per_node;
  const auto node_size = [&](int node) {
    return node < d.nodes - 1 ? ranks_per_node : ranks - (d.nodes - 1) * ranks_per_node;
  };
  const std::string job_text = counted(ranks, "rank") + " at " + std::to_string(ranks_per_node) +
                               " per node make " + counted(d.nodes, "node");
  const config::architecture& a = model.arch;
  if (a.dedicated_nodes > 0) {
    d.mode = deployment_mode::dedicated_nodes;
    if (d.nodes <= a.dedicated_nodes)
      throw config_error(model.file + ": <dedicated nodes=\"" + std::to_string(a.dedicated_nodes) +
                         "\"/> leaves no node for the simulation: " + job_text +
                         "; give more ranks (--ranks) or lower nodes=");
    d.servers = 0;
    for (int n = d.nodes - a.dedicated_nodes; n < d.nodes; ++n) d.servers += node_size(n);
    d.clients = ranks - d.servers;
    if (d.servers > d.clients)
      throw config_error(model.file + ": <dedicated nodes=\"" + std::to_string(a.dedicated_nodes) +
                         "\"/> makes " + std::to_string(d.servers) + " server ranks for " +
                         std::to_string(d.clients) + " simulation ranks (" + job_text +
                         "); each server rank needs at least one client: use fewer dedicated "
                         "nodes, or more simulation ranks");
    d.writers = d.servers;
    std::vector<int> per_server(static_cast<std::size_t>(d.servers), 0);
    for (int c = 0; c < d.clients; ++c)
      ++per_server[static_cast<std::size_t>(topology::server_of_client(c, d.clients, d.servers))];
    count_clients(per_server, d);
    return d;
  }
  if (a.dedicated_cores > 0) {
    d.mode = deployment_mode::dedicated_cores;
    const int cores = a.dedicated_cores;
    const int smallest = node_size(d.nodes - 1);
    if (smallest < 2 * cores)
      throw config_error(
          model.file + ": <dedicated cores=\"" + std::to_string(cores) + "\"/> on a node of " +
          counted(smallest, "rank") + " (" + job_text + ") leaves " +
          (smallest > cores
               ? counted(smallest - cores, "client") + " for " + counted(cores, "dedicated core")
               : std::string("no client")) +
          "; each dedicated core needs at least one client of its node, so every "
          "node needs at least " +
          counted(2 * cores, "rank"));
    d.servers = d.nodes * cores;
    d.clients = ranks - d.servers;
    d.writers = d.servers;
    std::vector<int> per_server;
    for (int n = 0; n < d.nodes; ++n) {
      const int clients_on_node = node_size(n) - cores;
      std::vector<int> local(static_cast<std::size_t>(cores), 0);
      for (int r = 0; r < clients_on_node; ++r)
        ++local[static_cast<std::size_t>(topology::server_of_client(r, clients_on_node, cores))];
      per_server.insert(per_server.end(), local.begin(), local.end());
    }
    count_clients(per_server, d);
    return d;
  }
  d.mode = a.io_threads > 0 ? deployment_mode::thread : deployment_mode::synchronous;
  d.clients = ranks;
  d.servers = 0;
  d.writers = ranks;
  return d;
}

plan make_plan(const config::model& model, const deployment& job) {
  plan p;
  p.job = job;
  const std::vector<std::int64_t> values = initial_values(model);
  const std::vector<config::ghost_widths> ghosts = config::evaluate_ghosts(model);
  std::uint64_t per_client_shared = 0;
  for (std::size_t i = 0; i < model.variables.size(); ++i) {
    if (!model.variables[i].enabled) continue;
    variable_plan v = plan_variable(model, i, values, ghosts);
    const std::uint64_t blocks = static_cast<std::uint64_t>(v.blocks_per_client);
    p.bytes_per_client = plus(p.bytes_per_client, times(v.block_bytes, blocks));
    per_client_shared = plus(per_client_shared, times(v.shared_buffer_bytes, blocks));
    p.variables.push_back(std::move(v));
  }
  p.bytes_per_writer =
      times(p.bytes_per_client, static_cast<std::uint64_t>(job.most_clients_per_writer));
  p.bytes_per_job = times(p.bytes_per_client, static_cast<std::uint64_t>(job.clients));
  p.buffer = plan_buffer(model, job, p.bytes_per_client, per_client_shared);

  // What the runtime would say at start-up about the buffer and queue.
  const config::architecture& a = model.arch;
  const std::string buffer_text =
      "<buffer name=\"" + a.buffer_name + "\" size=\"" + std::to_string(a.buffer_size) + "\">";
  if ((a.server_memory > 0 || !a.spill_directory.empty()) &&
      job.mode != deployment_mode::dedicated_cores)
    p.warnings.push_back(model.file +
                         ": <buffer server-memory=... spill-directory=...> (active buffering) "
                         "applies to dedicated cores only; ignored in this mode");
  if (job.mode == deployment_mode::dedicated_cores) {
    const std::uint64_t ring_limit = 1u << 20;
    if (a.queue_size > ring_limit)
      p.warnings.push_back(model.file + ": <queue size=\"" + std::to_string(a.queue_size) +
                           "\"> is more than the " + std::to_string(ring_limit) +
                           " notifications a client's ring holds at most; using " +
                           std::to_string(ring_limit));
    const long page_size = ::sysconf(_SC_PAGESIZE);
    const std::uint64_t page = page_size > 0 ? static_cast<std::uint64_t>(page_size) : 4096;
    const std::uint64_t heap = a.buffer_size / static_cast<std::uint64_t>(a.dedicated_cores);
    const std::uint64_t rounded = (heap + page - 1) / page * page;
    if (rounded > heap + heap / 100)
      p.warnings.push_back(model.file + ": " + buffer_text + " gives " + std::to_string(heap) +
                           " bytes per dedicated core, rounded up to " + std::to_string(rounded) +
                           " (whole pages of " + std::to_string(page) + " bytes)");
  }
  // Blocks that can never be written, and too little room for the iterations in flight.
  for (const variable_plan& v : p.variables) {
    const config::variable& var = model.variables[v.index];
    std::uint64_t limit = a.buffer_size;
    std::string where = "the buffer";
    std::uint64_t need = v.block_bytes;
    if (job.mode == deployment_mode::dedicated_cores) {
      limit = p.buffer.uses.front().capacity;
      where = "a dedicated core's share of the buffer";
      need = v.shared_buffer_bytes;
    }
    if (need > limit)
      p.warnings.push_back(at_line(model, var.line) + ": every write of variable '" + var.name +
                           "' fails (DAMARIS_ALLOCATION_ERROR): its block of " +
                           std::to_string(need) + " bytes is larger than " + where + " (" +
                           std::to_string(limit) + " bytes); raise " + buffer_text);
  }
  for (const buffer_use& use : p.buffer.uses) {
    const double h = use.headroom();
    if (h < 0 || h >= low_headroom) continue;
    const std::uint64_t factor = job.mode == deployment_mode::dedicated_cores
                                     ? static_cast<std::uint64_t>(a.dedicated_cores)
                                     : 1;
    const std::uint64_t wanted = times(times(use.bytes_per_iteration, 2), factor);
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2f", h);
    // What a run does then: a dedicated core moves the blocks already in its share into its
    // own memory so that the last ones find room (a copy each); the other buffers are
    // process memory that only a stored iteration frees.
    std::string consequence;
    if (h >= 1)
      consequence = "a writer that falls one iteration behind stops its clients";
    else if (job.mode == deployment_mode::dedicated_cores)
      consequence =
          "less than one iteration: the last blocks of each iteration find no room until the "
          "dedicated core has moved earlier ones into its own memory (one more copy of "
          "those, while the clients wait)";
    else
      consequence =
          "less than one iteration: the last blocks of an iteration find no room, and wait until "
          "the buffer's timeout fails them (policy wait) or are dropped (policy skip)";
    const std::string where =
        a.buffer_line > 0 ? at_line(model, a.buffer_line) : model.file + " (no <buffer>)";
    p.warnings.push_back(where + ": " + buffer_text + " holds " + ratio + " iterations of " +
                         use.holder + " (" + std::to_string(use.capacity) + " bytes for " +
                         std::to_string(use.bytes_per_iteration) + " bytes per iteration); " +
                         consequence + "; size=\"" + std::to_string(wanted) +
                         "\" holds 2 iterations");
  }
  for (std::size_t s = 0; s < model.stores.size(); ++s)
    p.stores.push_back(plan_store(model, s, job, p.variables, p.warnings));
  return p;
}

}  // namespace sidecore::cli
