// Rank 0 reads the configuration for everyone, as Damaris does: the other ranks never open
// the file, so a program whose rank 0 writes it just before damaris_initialize works, and so
// does a job whose other nodes cannot see it at all.
#include "runtime/load_configuration.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/agreement.hpp"
#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/mpi_handles.hpp"

namespace sidecore {
namespace {

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

// Damaris 1.12 also takes the configuration itself where a path is expected: PDI's Damaris
// plugin hands damaris_initialize the text ModifyModel filled in. A path never starts with '<'.
bool is_configuration_text(const std::string& file_or_text) {
  const std::size_t first = file_or_text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && file_or_text[first] == '<';
}

}  // namespace

config::model load_configuration(const std::string& file_or_text, MPI_Comm comm) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  const bool given_text = is_configuration_text(file_or_text);
  // What messages call the configuration.
  const std::string file = given_text ? configuration_text_name : file_or_text;
  // Only rank 0 reads (see above); text given in the file's place is rank 0's too.
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
  text = broadcast(text, 0, comm);
  // Every rank parses the same text with rank 0's options.
  int strict = rank == 0 ? (environment::strict() ? 1 : 0) : 0;
  check_mpi(MPI_Bcast(&strict, 1, MPI_INT, 0, comm), "MPI_Bcast");
  config::parse_options options;
  options.strict = strict != 0;
  // Every rank parses the same text, but a store plugin named by its type alone is looked up
  // on each rank's own file system: agree, so that no rank goes on alone into a collective.
  config::model model;
  agree_on(comm, [&] { model = config::parse_model(text, file, options); });
  return model;
}

}  // namespace sidecore
