// `sidecore validate config.xml [--ranks N]`: the library's own parser (as damaris_initialize
// runs it), then the plan of tools/cli/plan.hpp, printed for people or as JSON.
#include "tools/cli/validate.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/json_writer.hpp"
#include "common/log.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "config/model.hpp"
#include "plugins/python_scripts.hpp"
#include "tools/cli/plan.hpp"
#include "tools/cli/script_check.hpp"

namespace sidecore::cli {
namespace {

constexpr const char* validate_description =
    "Reads the configuration as damaris_initialize does (same errors, same warnings) and shows\n"
    "what a job running it would do: every variable's layout resolved with the parameters'\n"
    "initial values, the bytes each client and each writer handle per iteration, how many\n"
    "iterations the buffer holds, and the files each store writes.";

constexpr const char* validate_exit_status =
    "exit status: 0 valid (warnings are printed), 1 configuration error, 2 usage error\n";

struct validate_arguments {
  std::string file;
  int ranks = 0;           // 0: not given
  int ranks_per_node = 0;  // 0: not given
  bool json = false;
  bool strict = false;
};

// Ranks per node when --ranks-per-node is not given, and where the number comes from.
std::pair<int, std::string> default_ranks_per_node(const config::model& model) {
  if (const int per_node = environment::ranks_per_node(); per_node > 0)
    return {per_node, "SIDECORE_RANKS_PER_NODE"};
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int needed = 2 * model.arch.dedicated_cores;
  if (cores < needed)
    return {needed, "twice the dedicated cores: this machine has " + std::to_string(cores)};
  return {cores, "the cores of this machine"};
}

std::string bytes_text(std::uint64_t bytes) {
  std::string text = std::to_string(bytes) + " bytes";
  if (bytes >= (std::uint64_t{1} << 20)) text += " (" + readable_bytes(bytes) + ")";
  return text;
}

std::string extents_text(const std::vector<std::int64_t>& extents) {
  std::string text;
  for (const std::int64_t e : extents) text += (text.empty() ? "" : " x ") + std::to_string(e);
  return text;
}

std::string list_text(const std::vector<std::string>& items) {
  if (items.empty()) return "none";
  std::string text;
  for (const std::string& s : items) text += (text.empty() ? "" : ", ") + s;
  return text;
}

std::string ratio_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

std::string frequency_text(int frequency) {
  if (frequency <= 1) return "every iteration";
  const std::string f = std::to_string(frequency);
  return "iterations 0, " + f + ", " + std::to_string(2 * frequency) + ", ... (frequency " + f +
         ")";
}

std::string parameter_value(const config::parameter& p) {
  if (config::is_integer(p.type)) return std::to_string(p.int_value);
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", p.real_value);
  return text;
}

const char* policy_name(config::full_buffer_policy policy) {
  return policy == config::full_buffer_policy::skip ? "skip" : "wait";
}

struct context {
  const validate_arguments& args;
  const config::model& model;
  const plan& result;
  std::vector<std::string> warnings;  // the parser's, then the plan's
  std::string ranks_source;           // "--ranks" or why the default
  std::string per_node_source;
};

std::string mode_text(const config::model& model, const deployment& job) {
  switch (job.mode) {
    case deployment_mode::dedicated_cores:
      return "dedicated cores, " + std::to_string(model.arch.dedicated_cores) + " per node";
    case deployment_mode::dedicated_nodes:
      return "dedicated nodes, the last " + std::to_string(model.arch.dedicated_nodes);
    case deployment_mode::thread:
      return "thread: a background I/O thread in each process";
    default:
      return "synchronous: each process stores inside damaris_end_iteration";
  }
}

void print_text(const context& c) {
  const config::model& m = c.model;
  const plan& p = c.result;
  const deployment& job = p.job;
  std::string out;
  const auto line = [&out](const std::string& text) { out += text + "\n"; };
  const auto field = [&line](const std::string& indent, const std::string& name,
                             const std::string& value) {
    std::string label = name;
    if (label.size() < 14) label.resize(14, ' ');
    line(indent + label + " " + value);
  };

  line(m.file + ": valid, " + std::to_string(c.warnings.size()) +
       (c.warnings.size() == 1 ? " warning" : " warnings"));
  if (!c.warnings.empty()) {
    line("");
    line("warnings");
    for (const std::string& w : c.warnings) line("  " + w);
  }

  line("");
  line("simulation \"" + m.simulation_name + "\"");
  field("  ", "mode", mode_text(m, job));
  field("  ", "ranks",
        std::to_string(job.ranks) + " (" + c.ranks_source + "), " +
            std::to_string(job.ranks_per_node) + " per node (" + c.per_node_source +
            "): " + std::to_string(job.nodes) + (job.nodes == 1 ? " node" : " nodes"));
  field("  ", "clients", std::to_string(job.clients));
  std::string writers = std::to_string(job.writers);
  if (job.servers > 0) {
    writers += job.mode == deployment_mode::dedicated_cores
                   ? (job.writers == 1 ? " dedicated core" : " dedicated cores")
                   : (job.writers == 1 ? " server rank" : " server ranks");
    writers += ", ";
    if (job.fewest_clients_per_writer != job.most_clients_per_writer)
      writers += std::to_string(job.most_clients_per_writer) + " or " +
                 counted(job.fewest_clients_per_writer, "client", "clients");
    else
      writers += counted(job.most_clients_per_writer, "client");
    writers += " each";
  } else {
    writers += " (every client stores its own blocks)";
  }
  field("  ", "writers", writers);
  field("  ", "domains", counted(m.arch.domains, "block") + " per variable per client");

  if (!m.parameters.empty()) {
    line("");
    line("parameters (initial values)");
    for (const config::parameter& prm : m.parameters)
      line("  " + prm.name + " = " + parameter_value(prm) + " (" +
           config::element_type_name(prm.type) + ")");
  }

  line("");
  line("variables");
  if (p.variables.empty()) line("  none enabled");
  for (const variable_plan& v : p.variables) {
    const config::variable& var = m.variables[v.index];
    const config::layout& l = m.layouts[var.layout_index];
    line("  " + var.name + " (line " + std::to_string(var.line) + ")");
    std::string layout = l.name + ": " + l.type_name + ", " + extents_text(v.dimensions);
    if (!v.global_dimensions.empty()) layout += ", global " + extents_text(v.global_dimensions);
    if (!v.ghosts.empty()) {
      std::string g;
      for (std::size_t d = 0; d < v.ghosts.before.size(); ++d)
        g += (g.empty() ? "" : ",") + std::to_string(v.ghosts.before[d]) + ":" +
             std::to_string(v.ghosts.after[d]);
      layout += ", ghosts " + g;
    }
    if (l.fortran_order) layout += " (C order: the XML lists them the other way)";
    field("    ", "layout", layout);
    field("    ", "block",
          bytes_text(v.block_bytes) + ", " + std::to_string(v.blocks_per_client) + " per client");
    if (v.stored_bytes != v.block_bytes)
      field("    ", "stored", bytes_text(v.stored_bytes) + " per block (without ghosts)");
    field("    ", "time-varying",
          var.time_varying ? "yes" : "no (stored once, in the first stored iteration)");
    field("    ", "store", list_text(v.stores));
    field("    ", "actions", list_text(v.actions));
  }

  line("");
  line("per iteration (every client writes every enabled variable)");
  field("  ", "each client", bytes_text(p.bytes_per_client));
  if (job.servers > 0)
    field("  ", "each writer",
          bytes_text(p.bytes_per_writer) + ", from its " +
              counted(job.most_clients_per_writer, "client"));
  field("  ", "whole job", bytes_text(p.bytes_per_job));

  line("");
  line("buffer \"" + p.buffer.name + "\": " + bytes_text(p.buffer.size) + ", policy " +
       policy_name(m.arch.policy));
  if (p.buffer.uses.empty())
    line(
        "  synchronous mode: blocks stay in the client's memory until the end of the iteration; "
        "the buffer size bounds one block");
  for (const buffer_use& u : p.buffer.uses) {
    std::string capacity = std::to_string(u.capacity) + " bytes";
    std::string from = "";
    if (job.mode == deployment_mode::dedicated_cores) {
      capacity += " (the node's " + std::to_string(p.buffer.size) + " / " +
                  std::to_string(m.arch.dedicated_cores) +
                  (m.arch.dedicated_cores == 1 ? " core)" : " cores)");
      from = " (the blocks of its " + counted(job.most_clients_per_writer, "client") +
             ", in 64-byte lines)";
    } else if (u.holder == "each server process") {
      from = " (the blocks of its " + counted(job.most_clients_per_writer, "client") + ")";
    }
    line("  " + u.holder + ": " + capacity);
    if (u.bytes_per_iteration == 0)
      line("    nothing written per iteration");
    else
      line("    " + std::to_string(u.bytes_per_iteration) + " bytes per iteration" + from + ": " +
           ratio_text(u.headroom()) + " iterations");
  }
  if (p.buffer.memory_per_node > 0)
    field("  ", "per node", bytes_text(p.buffer.memory_per_node) + " of memory set aside");
  if (p.buffer.headroom() >= 0)
    field("  ", "headroom",
          ratio_text(p.buffer.headroom()) + " iterations" +
              (p.buffer.headroom() < low_headroom ? " (low)" : ""));

  line("");
  line("stores");
  if (p.stores.empty()) line("  none");
  for (const store_plan& s : p.stores) {
    const config::store& st = m.stores[s.index];
    std::string head = "  " + st.name + " (" + s.kind;
    if (!s.file_mode.empty()) head += ", " + s.file_mode;
    head += ", line " + std::to_string(st.line) + "): " + std::to_string(s.writers) +
            (s.writers == 1 ? " writer, " : " writers, ") + frequency_text(st.frequency);
    line(head);
    field("    ", "variables", list_text(s.variables));
    for (const std::string& f : s.iteration_files) {
      std::string text = f;
      if (f.find("<w>") != std::string::npos)
        text += s.writers == 1 ? std::string(", <w> = 0 (1 per iteration)")
                               : ", <w> = 0.." + std::to_string(s.writers - 1) + " (" +
                                     std::to_string(s.writers) + " per iteration)";
      field("    ", "files", text);
    }
    if (!s.master_file.empty()) field("    ", "master file", s.master_file);
    if (!s.xdmf_file.empty()) field("    ", "XDMF", s.xdmf_file);
    if (!s.first_files.empty()) field("    ", "iteration 0", list_text(s.first_files));
    if (!s.datasets.empty()) field("    ", "datasets", list_text(s.datasets));
    if (s.kind != "null")
      field("    ", "data",
            bytes_text(s.bytes_per_stored_iteration) + " per stored iteration, " +
                bytes_text(s.bytes_per_writer) + " from the busiest writer (before filters)");
    for (const std::string& n : s.notes) field("    ", "note", n);
  }
  std::cout << out;
}

void print_json(const context& c) {
  const config::model& m = c.model;
  const plan& p = c.result;
  const deployment& job = p.job;
  json_writer j(2);
  j.begin_object();
  j.key("file").value(m.file);
  j.key("valid").value(true);
  j.key("simulation").value(m.simulation_name);
  j.key("warnings").array(c.warnings);
  j.key("job").begin_object();
  j.key("mode").value(mode_name(job.mode));
  j.key("ranks").value(job.ranks);
  j.key("ranks_source").value(c.ranks_source);
  j.key("ranks_per_node").value(job.ranks_per_node);
  j.key("ranks_per_node_source").value(c.per_node_source);
  j.key("nodes").value(job.nodes);
  j.key("clients").value(job.clients);
  j.key("servers").value(job.servers);
  j.key("writers").value(job.writers);
  j.key("most_clients_per_writer").value(job.most_clients_per_writer);
  j.key("fewest_clients_per_writer").value(job.fewest_clients_per_writer);
  j.key("domains").value(m.arch.domains);
  j.end_object();
  j.key("parameters").begin_array();
  for (const config::parameter& prm : m.parameters) {
    j.begin_object();
    j.key("name").value(prm.name);
    j.key("type").value(config::element_type_name(prm.type));
    if (config::is_integer(prm.type))
      j.key("value").value(prm.int_value);
    else
      j.key("value").value(prm.real_value);
    j.end_object();
  }
  j.end_array();
  j.key("variables").begin_array();
  for (const variable_plan& v : p.variables) {
    const config::variable& var = m.variables[v.index];
    const config::layout& l = m.layouts[var.layout_index];
    j.begin_object();
    j.key("name").value(var.name);
    j.key("line").value(var.line);
    j.key("layout").value(l.name);
    j.key("type").value(l.type_name);
    j.key("dimensions").array(v.dimensions);
    j.key("global_dimensions").array(v.global_dimensions);
    j.key("ghosts_before").array(v.ghosts.before);
    j.key("ghosts_after").array(v.ghosts.after);
    j.key("block_bytes").value(v.block_bytes);
    j.key("stored_bytes").value(v.stored_bytes);
    j.key("shared_buffer_bytes").value(v.shared_buffer_bytes);
    j.key("blocks_per_client").value(v.blocks_per_client);
    j.key("time_varying").value(var.time_varying);
    j.key("stores").array(v.stores);
    j.key("actions").array(v.actions);
    j.end_object();
  }
  j.end_array();
  j.key("per_iteration").begin_object();
  j.key("bytes_per_client").value(p.bytes_per_client);
  j.key("bytes_per_writer").value(p.bytes_per_writer);
  j.key("bytes_per_job").value(p.bytes_per_job);
  j.end_object();
  j.key("buffer").begin_object();
  j.key("name").value(p.buffer.name);
  j.key("size").value(p.buffer.size);
  j.key("policy").value(policy_name(m.arch.policy));
  j.key("memory_per_node").value(p.buffer.memory_per_node);
  j.key("uses").begin_array();
  for (const buffer_use& u : p.buffer.uses) {
    j.begin_object();
    j.key("holder").value(u.holder);
    j.key("capacity").value(u.capacity);
    j.key("bytes_per_iteration").value(u.bytes_per_iteration);
    if (u.headroom() >= 0)
      j.key("headroom").value(u.headroom());
    else
      j.key("headroom").null();
    j.end_object();
  }
  j.end_array();
  if (p.buffer.headroom() >= 0)
    j.key("headroom").value(p.buffer.headroom());
  else
    j.key("headroom").null();
  j.end_object();
  j.key("stores").begin_array();
  for (const store_plan& s : p.stores) {
    const config::store& st = m.stores[s.index];
    j.begin_object();
    j.key("name").value(st.name);
    j.key("line").value(st.line);
    j.key("kind").value(s.kind);
    j.key("file_mode").value(s.file_mode);
    j.key("files_path").value(s.files_path);
    j.key("frequency").value(st.frequency);
    j.key("writers").value(s.writers);
    j.key("variables").array(s.variables);
    j.key("iteration_files").array(s.iteration_files);
    j.key("master_file").value(s.master_file);
    j.key("xdmf_file").value(s.xdmf_file);
    j.key("first_iteration_files").array(s.first_files);
    j.key("datasets").array(s.datasets);
    j.key("bytes_per_stored_iteration").value(s.bytes_per_stored_iteration);
    j.key("bytes_per_writer").value(s.bytes_per_writer);
    j.key("notes").array(s.notes);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  std::cout << j.text() << "\n";
}

void print_failure(const validate_arguments& args, const std::string& message) {
  std::cerr << "sidecore validate: error: " << message << "\n";
  if (!args.json) return;
  json_writer j(2);
  j.begin_object();
  j.key("file").value(args.file);
  j.key("valid").value(false);
  j.key("error").value(message);
  j.end_object();
  std::cout << j.text() << "\n";
}

int run_validate(const validate_arguments& args) {
  // The stores' option checks log through the library's logger; nothing of it is wanted here.
  log::configure(log::level::off, "");
  try {
    config::parse_options options;
    options.strict = args.strict || environment::strict();
    const std::string text = config::read_configuration_file(args.file);
    const config::model model = config::parse_model(text, args.file, options);
    // The scripts' files, which damaris_initialize reads and compiles.
    std::string script_note;
    if (const std::string problems = script_problems(model, script_note); !problems.empty())
      throw config_error(problems);

    // Inside a batch job, the job's own task counts (srun starts that many, that many per
    // node), unless the options say otherwise.
    const environment::batch_layout batch = environment::batch_job_layout();
    std::string ranks_source = "--ranks";
    int ranks = args.ranks;
    if (ranks == 0 && batch.ranks > 0) {
      ranks = batch.ranks;
      ranks_source = "default: " + batch.ranks_from + " of this batch job";
    }
    std::string per_node_source = "--ranks-per-node";
    int per_node = args.ranks_per_node;
    if (per_node == 0 && environment::ranks_per_node() == 0 && batch.ranks_per_node > 0) {
      per_node = batch.ranks_per_node;
      per_node_source = "default: " + batch.per_node_from + " of this batch job";
      if (batch.uneven)
        per_node_source +=
            " (its largest count: this plan fills nodes in order, while the job has nodes with "
            "fewer tasks before its last)";
    } else if (per_node == 0 && ranks > 0 && model.arch.dedicated_nodes == 0 &&
               environment::ranks_per_node() == 0) {
      // What `mpirun -np N` does on one machine: every rank on it.
      per_node = ranks;
      per_node_source =
          "default: every rank on this machine, as mpirun starts them here; give "
          "--ranks-per-node (or SIDECORE_RANKS_PER_NODE) for the nodes of a cluster";
    } else if (per_node == 0) {
      auto [value, source] = default_ranks_per_node(model);
      per_node = value;
      per_node_source = "default: " + source;
    }
    if (ranks == 0) {
      if (model.arch.dedicated_nodes > 0) {
        ranks = per_node * 2 * model.arch.dedicated_nodes;
        ranks_source = "default: as many nodes for the simulation as dedicated ones, " +
                       std::to_string(model.arch.dedicated_nodes) + " each";
      } else {
        ranks = per_node;
        ranks_source = "default: one node";
      }
    }
    const deployment job = plan_deployment(model, ranks, per_node);
    const plan result = make_plan(model, job);
    context c{args, model, result, model.warnings, ranks_source, per_node_source};
    if (!batch.problems.empty()) c.warnings.push_back("batch job environment: " + batch.problems);
    c.warnings.insert(c.warnings.end(), result.warnings.begin(), result.warnings.end());
    if (!script_note.empty()) c.warnings.push_back(script_note);
    if (model.paraview && !model.paraview->scripts.empty() && plugins::paraview_python().empty())
      c.warnings.push_back(model.file + ":" + std::to_string(model.paraview->line) +
                           ": <paraview>: this Sidecore found no Python that imports ParaView's "
                           "Catalyst modules when it was built: the pipelines fail unless "
                           "SIDECORE_PYTHON and SIDECORE_PYTHON_LIBRARY name one "
                           "(docs/paraview.md)");
    if (args.json)
      print_json(c);
    else
      print_text(c);
    return 0;
  } catch (const std::exception& e) {
    print_failure(args, e.what());
    return 1;
  }
}

}  // namespace

void add_validate(CLI::App& app, int& status) {
  CLI::App* command =
      app.add_subcommand("validate", "check a configuration and show what a job would do with it");
  command->footer(std::string(validate_description) + "\n\n" + validate_exit_status);
  auto args = std::make_shared<validate_arguments>();
  command->add_option("config", args->file, "the configuration (XML)")->required();
  command
      ->add_option("--ranks", args->ranks,
                   "MPI ranks of the whole job (default: inside a Slurm job, its task count; "
                   "else one node; with K dedicated nodes, K nodes for the simulation and the K "
                   "dedicated ones)")
      ->check(CLI::Range(1, 1 << 30));
  command
      ->add_option("--ranks-per-node", args->ranks_per_node,
                   "ranks on each node (default: SIDECORE_RANKS_PER_NODE when set; inside a "
                   "Slurm job, its tasks per node; else every rank on one node with --ranks, "
                   "the cores of this machine without)")
      ->check(CLI::Range(1, 1 << 30));
  command->add_flag("--json", args->json, "print the result as JSON on stdout");
  command->add_flag("--strict", args->strict,
                    "every configuration warning is an error (as SIDECORE_STRICT=1)");
  command->callback([args, &status] { status = run_validate(*args); });
}

}  // namespace sidecore::cli
