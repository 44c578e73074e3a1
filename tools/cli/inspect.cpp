// `sidecore inspect <dir-or-prefix>`: finds the runs an HDF5 store wrote (one per simulation
// name), reads every file's root attributes (complete, raw_bytes, stored_bytes) and one
// iteration through src/reader, and prints what is there, for people or as JSON.
#include "tools/cli/inspect.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/json_writer.hpp"
#include "plugins/hdf5/hdf5_handle.hpp"
#include "tools/cli/inspect_report.hpp"

namespace sidecore::cli {
namespace {

constexpr const char* inspect_description =
    "Shows what an HDF5 store wrote: the iterations stored and which are complete, the file mode\n"
    "and writer files, the compression ratio, the size on disk, and for one iteration every\n"
    "variable (type, global extents, blocks, sources, elements, bytes).\n"
    "\n"
    "A directory is searched for files named <simulation>_It<iteration>[_Pr<writer>].h5, and\n"
    "every simulation found in it is shown; a prefix is <FilesPath><simulation> (\"out/sim\"); a\n"
    "file of a run (\"out/sim_It3.h5\") shows its run at its iteration.";

constexpr const char* inspect_exit_status =
    "exit status: 0 output found and read (incomplete iterations are reported, not errors), 1 no\n"
    "Sidecore output at the path, or a file that cannot be read, 2 usage error\n";

struct inspect_arguments {
  std::string path;
  std::optional<std::int32_t> iteration;
  std::int32_t iteration_number = 0;  // --iteration as parsed
  bool blocks = false;
  bool json = false;
};

using namespace inspect;

int run_inspect(const inspect_arguments& args) {
  const plugins::hdf5::error_print_guard quiet;  // failures are reported by message
  std::string failure;
  std::vector<run> runs;
  std::vector<run_report> reports;
  try {
    std::optional<std::int32_t> file_iteration;
    runs = find_runs(args.path, file_iteration);
    const std::optional<std::int32_t> wanted = args.iteration ? args.iteration : file_iteration;
    for (const run& r : runs) reports.push_back(inspect_run(r, wanted));
  } catch (const inspect_error& e) {
    failure = e.message;
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (!failure.empty()) {
    std::cerr << "sidecore inspect: error: " << failure << "\n";
    if (args.json) {
      json_writer j(2);
      j.begin_object();
      j.key("path").value(args.path);
      j.key("error").value(failure);
      j.end_object();
      std::cout << j.text() << "\n";
    }
    return 1;
  }
  int status = 0;
  for (const run_report& report : reports)
    if (!report.error.empty()) {
      std::cerr << "sidecore inspect: error: " << report.error << "\n";
      status = 1;
    }
  if (args.json) {
    json_writer j(2);
    j.begin_object();
    j.key("path").value(args.path);
    j.key("runs").begin_array();
    for (const run_report& report : reports) print_json(j, report, args.blocks);
    j.end_array();
    j.end_object();
    std::cout << j.text() << "\n";
    return status;
  }
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (i) std::cout << "\n";
    print_text(std::cout, reports[i], args.blocks);
  }
  return status;
}

}  // namespace

void add_inspect(CLI::App& app, int& status) {
  CLI::App* command = app.add_subcommand(
      "inspect", "show what an HDF5 store wrote: iterations, completeness, variables, blocks");
  command->footer(std::string(inspect_description) + "\n\n" + inspect_exit_status);
  auto args = std::make_shared<inspect_arguments>();
  command->add_option("path", args->path, "a directory, a prefix or a file of a run")->required();
  CLI::Option* iteration =
      command
          ->add_option("--iteration", args->iteration_number,
                       "the iteration whose variables are shown (default: the last stored)")
          ->check(CLI::Range(0, INT32_MAX));
  command->add_flag("--blocks", args->blocks,
                    "list every block: source, id, writer, extents, position");
  command->add_flag("--json", args->json, "print the result as JSON on stdout");
  command->callback([args, iteration, &status] {
    if (iteration->count()) args->iteration = args->iteration_number;
    status = run_inspect(*args);
  });
}

}  // namespace sidecore::cli
