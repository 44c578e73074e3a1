// The `sidecore` command: subcommands dispatched by name, each in its own file of tools/cli.
#include <hdf5.h>
#include <mpi.h>

#include <cstring>
#include <iostream>
#include <string>

#include "Damaris.h"
#include "tools/cli/inspect.hpp"
#include "tools/cli/report.hpp"
#include "tools/cli/validate.hpp"

namespace {

struct command {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);  // argv[0] is the subcommand's name
};

// A new subcommand is one more line here and its own source file.
constexpr command commands[] = {
    {"validate", "check a configuration and show what a job would do with it",
     sidecore::cli::run_validate},
    {"inspect", "show what an HDF5 store wrote: iterations, completeness, variables, blocks",
     sidecore::cli::run_inspect},
    {"report", "draw a run report: jitter tiles, buffer, timeline, HTML summary (python3)",
     sidecore::cli::run_report},
};

void print_usage(std::ostream& out) {
  out << "usage: sidecore <command> [options]\n"
         "       sidecore --version\n\ncommands:\n";
  for (const command& c : commands) {
    std::string name = c.name;
    name.resize(12, ' ');
    out << "  " << name << c.summary << "\n";
  }
  out << "\n'sidecore <command> --help' describes a command.\n";
}

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

void print_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  std::cout << "sidecore " << SIDECORE_VERSION_STRING << " (Damaris API " << DAMARIS_VERSION
            << ")\n"
            << "MPI: " << mpi_library() << " (MPI " << MPI_VERSION << "." << MPI_SUBVERSION
            << " headers)\n"
            << "HDF5: " << major << "." << minor << "." << release << " (built against "
            << H5_VERS_MAJOR << "." << H5_VERS_MINOR << "." << H5_VERS_RELEASE
#ifdef H5_HAVE_PARALLEL
            << ", parallel"
#endif
            << ")\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(std::cerr);
    return 2;
  }
  const std::string first = argv[1];
  if (first == "--version" || first == "-V") {
    print_version();
    return 0;
  }
  if (first == "-h" || first == "--help" || first == "help") {
    print_usage(std::cout);
    return 0;
  }
  for (const command& c : commands)
    if (first == c.name) return c.run(argc - 1, argv + 1);
  std::cerr << "sidecore: unknown command '" << first << "'\n\n";
  print_usage(std::cerr);
  return 2;
}
