// The JSON run report written at damaris_finalize (docs/observability.md has its schema): each
// process describes its writer and its client, rank 0 gathers the parts and writes the file.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "client/client.hpp"
#include "config/model.hpp"
#include "protocol/live_stats.hpp"
#include "storing/iteration_processor.hpp"

namespace sidecore::run_report {

// Where the report goes: SIDECORE_REPORT (a file, or a directory: <simulation>_report.json in
// it); by default <simulation>_<job id or start time>_report.json, a new name for every run, in
// the directory of the HDF5 stores (their one FilesPath) or else the working directory; ""
// when SIDECORE_REPORT turns it off.
std::string path_for(const config::model& model);

struct writer_part {
  const char* kind = "";  // "dedicated core", "dedicated node", "background thread", "synchronous"
  int index = 0;          // server index, or the client index of a writer inside a client
  int world_rank = 0;
  std::vector<int> clients;  // client indices it serves
  protocol::live_values live;
  const std::vector<storing::iteration_record>* records = nullptr;  // may be null
  std::uint64_t rejected = 0;                    // malformed notifications dropped
  std::vector<storing::action_summary> actions;  // empty until the writer has finished
};

struct client_part {
  int index = 0;
  int world_rank = 0;
  int writer = 0;  // index of its writer (a server index, or its own client index)
  int iterations = 0;
  client::client_counters counters;
  const std::vector<client::iteration_time>* times = nullptr;  // null: not timed
};

std::string writer_json(const writer_part& w);
std::string client_json(const client_part& c);

struct run_facts {
  std::string simulation;
  std::string configuration;
  std::string mode;
  int processes = 0;
  int clients = 0;
  int writers = 0;
};

// Collective over comm (every rank calls it, with "" for a part it does not have): rank 0
// gathers and writes the report to path. Returns, on rank 0, "" or why the file could not be
// written; never throws for a file problem (MPI failures throw mpi_error).
std::string gather_and_write(MPI_Comm comm, const std::string& path, const run_facts& facts,
                             const std::string& writer, const std::string& client,
                             const writer_part* writer_values, const client_part* client_values);

}  // namespace sidecore::run_report
