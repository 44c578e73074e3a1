// `sidecore report`: finds tools/report/sidecore_report.py (installed, or in the source tree
// of a build-tree binary) and runs it with python3. The drawing is in Python because its
// optional PNG output needs matplotlib; without matplotlib the script still writes every
// picture as SVG.
#include "tools/cli/report.hpp"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "common/environment.hpp"

namespace sidecore::cli {
namespace {

constexpr const char* script_name = "sidecore_report.py";

// The directory of the running executable, symbolic links resolved, or "" when unknown.
std::string executable_directory() {
  std::vector<char> path(4096);
  const ssize_t length = ::readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (length <= 0) return {};
  std::string full(path.data(), static_cast<std::size_t>(length));
  const std::size_t slash = full.rfind('/');
  return slash == std::string::npos ? std::string() : full.substr(0, slash);
}

bool readable(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

// Where the script may be, in order: next to an installed binary (<bin>/../share/sidecore,
// as cmake/install.cmake puts it), then the source tree this binary was built from.
std::vector<std::string> script_candidates() {
  std::vector<std::string> found;
  const std::string bin = executable_directory();
  if (!bin.empty()) found.push_back(bin + "/" SIDECORE_REPORT_SCRIPT_FROM_BINDIR "/" + script_name);
  found.push_back(SIDECORE_REPORT_SCRIPT_SOURCE);
  return found;
}

int run_report_script(const std::vector<std::string>& arguments) {
  const std::vector<std::string> candidates = script_candidates();
  std::string script;
  for (const std::string& c : candidates)
    if (readable(c)) {
      script = c;
      break;
    }
  if (script.empty()) {
    std::cerr << "sidecore report: the drawing script " << script_name
              << " is not installed; looked for:\n";
    for (const std::string& c : candidates) std::cerr << "  " << c << "\n";
    return 1;
  }
  const std::string chosen = environment::text("SIDECORE_PYTHON");
  const std::string python = !chosen.empty() ? chosen : "python3";

  std::vector<char*> args;
  args.push_back(const_cast<char*>(python.c_str()));
  args.push_back(const_cast<char*>(script.c_str()));
  for (const std::string& a : arguments) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::setenv("SIDECORE_REPORT_PROG", "sidecore report", 1);
  std::cout.flush();
  ::execvp(python.c_str(), args.data());
  // Only reached when the interpreter could not be started.
  const int err = errno;
  std::cerr << "sidecore report: cannot run '" << python << "': " << std::strerror(err) << "\n"
            << "  the report is drawn by a Python 3 script (" << script << "); install python3"
            << (!chosen.empty() ? ", or correct SIDECORE_PYTHON"
                                : ", or set SIDECORE_PYTHON to an interpreter")
            << "\n";
  return 1;
}

}  // namespace

void add_report(CLI::App& app, int& status) {
  CLI::App* command = app.add_subcommand(
      "report", "draw a run report: jitter tiles, buffer, timeline, HTML summary (python3)");
  // Everything after `report`, --help included, is the script's.
  command->set_help_flag();
  command->allow_extras();
  command->prefix_command();
  command->callback([command, &status] { status = run_report_script(command->remaining()); });
}

}  // namespace sidecore::cli
