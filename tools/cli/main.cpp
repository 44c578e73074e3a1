// The `sidecore` command: subcommands parsed with CLI11, each in its own file of tools/cli.
#include <hdf5.h>
#include <mpi.h>

#include <CLI/CLI.hpp>

#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "Damaris.h"
#include "sidecore/version.h"
#include "tools/cli/inspect.hpp"
#include "tools/cli/report.hpp"
#include "tools/cli/validate.hpp"

namespace {

// MPI_Get_library_version may be called before MPI_Init: the tool never starts MPI.
std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) return "unknown";
  std::string version(text, static_cast<std::size_t>(length));
  version.resize(std::strlen(version.c_str()));
  const std::size_t end = version.find_first_of("\r\n");
  if (end != std::string::npos) version.resize(end);
  while (!version.empty() && (version.back() == ' ' || version.back() == ',')) version.pop_back();
  return version;
}

std::string version_text() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  std::ostringstream out;
  out << "sidecore " << SIDECORE_VERSION_STRING << " (Damaris API " << DAMARIS_VERSION << ")\n"
      << "MPI: " << mpi_library() << " (MPI " << MPI_VERSION << "." << MPI_SUBVERSION
      << " headers)\n"
      << "HDF5: " << major << "." << minor << "." << release << " (built against " << H5_VERS_MAJOR
      << "." << H5_VERS_MINOR << "." << H5_VERS_RELEASE
#ifdef H5_HAVE_PARALLEL
      << ", parallel"
#endif
      << ")\n";
  const std::string paraview = sidecore_paraview_python();
  out << "ParaView pipelines (<paraview>): "
      << (paraview.empty() ? "not available (no Python that imports ParaView's Catalyst modules "
                             "was found when Sidecore was built; docs/paraview.md)"
                           : "run with " + paraview);
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Sidecore's command-line tool.", "sidecore");
  app.set_version_flag("-V,--version", version_text);
  app.require_subcommand(1);
  app.footer("'sidecore <command> --help' describes a command.");
  // A new subcommand is one more line here and its own source file.
  int status = 0;
  sidecore::cli::add_validate(app, status);
  sidecore::cli::add_inspect(app, status);
  sidecore::cli::add_report(app, status);
  // Errors name the command they are about and where its options are described.
  app.failure_message([](const CLI::App* top, const CLI::Error& e) {
    const std::vector<CLI::App*> chosen = top->get_subcommands();
    const std::string command =
        "sidecore" + (chosen.empty() ? std::string() : " " + chosen.front()->get_name());
    return command + ": " + e.what() + "\nRun '" + command + " --help' for the options.\n";
  });
  if (argc > 1 && argv[1][0] != '-') {
    try {
      app.get_subcommand(argv[1]);
    } catch (const CLI::OptionNotFound&) {
      std::cerr << "sidecore: unknown command '" << argv[1] << "'\n\n" << app.help();
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version: 0. A usage error: its message, then 2.
    return app.exit(e) == 0 ? 0 : 2;
  }
  return status;
}
