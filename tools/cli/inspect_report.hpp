// `sidecore inspect`, its model: the runs a path holds and what their files say, found and read
// by inspect_runs.cpp, printed by inspect_print.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/json_writer.hpp"
#include "reader/run_reader.hpp"

namespace sidecore::cli::inspect {

// What went wrong looking for or reading output: exit status 1.
struct inspect_error {
  std::string message;
};

struct file_info {
  std::string path;
  std::uint64_t bytes = 0;
};

// The files of one iteration of a run.
struct iteration_files {
  std::map<std::int32_t, file_info> writers;  // file-per-core files, by writer
  std::optional<file_info> shared;            // the master file, or the collective file
};

// One simulation's output in one directory.
struct run {
  std::string prefix;  // <FilesPath><simulation>, as run_reader opens it
  std::string simulation;
  std::map<std::int32_t, iteration_files> iterations;
  std::vector<file_info> part_files;
  std::optional<file_info> xdmf;
};

// What one iteration's files say about it.
struct iteration_report {
  std::int32_t iteration = 0;
  std::size_t files = 0;
  std::vector<std::int32_t> missing_writers;   // writer files not there
  std::vector<std::string> incomplete_files;   // files whose `complete` attribute is 0
  std::vector<std::int32_t> clients_left_out;  // what those files say left it out
  std::vector<std::string> unreadable_files;   // under a final name, but HDF5 cannot open them
  std::vector<std::string> other_run_files;    // left by another run under the same names
  bool bytes_known = false;                    // every data file has raw/stored_bytes
  std::uint64_t raw_bytes = 0, stored_bytes = 0;
  bool complete = true;
};

inline double ratio(std::uint64_t raw, std::uint64_t stored) {
  return stored == 0 ? 1.0 : static_cast<double>(raw) / static_cast<double>(stored);
}

// A variable of the inspected iteration, with what the files say beyond run_reader's list.
struct variable_report {
  std::string name;
  const reader::variable_info* info = nullptr;   // null: referenced, but its data is missing
  std::optional<std::int32_t> stored_iteration;  // time-invariant data of an earlier iteration
  // FilePerCore: the writers whose files the reader opened, in order (its block_info::writer
  // is an index into them: they differ when a writer's file is missing).
  std::vector<std::int32_t> writer_files;
  std::size_t sources = 0;
  std::uint64_t elements = 0, bytes = 0;
};

struct run_report {
  const run* r = nullptr;
  bool per_core = false;
  std::int32_t writer_files = 0;  // per iteration (FilePerCore)
  std::int32_t writers = 0;  // writers that hold blocks of the inspected iteration (Collective)
  std::size_t master_files = 0;
  std::vector<iteration_report> iterations;
  std::size_t files = 0;
  std::uint64_t disk_bytes = 0;
  bool bytes_known = true;
  std::uint64_t raw_bytes = 0, stored_bytes = 0;
  // The inspected iteration.
  std::int32_t iteration = 0;
  bool iteration_complete = true;
  std::unique_ptr<reader::run_reader> reader;
  std::vector<std::unique_ptr<reader::run_reader>> earlier;  // where time-invariant data lies
  std::vector<variable_report> variables;
  std::string error;  // the iteration asked for is not stored
};

// The runs a path names: a directory (every simulation in it), a prefix, or one output file.
// *file_iteration receives the iteration of a file named directly. Throws inspect_error.
std::vector<run> find_runs(const std::string& path, std::optional<std::int32_t>& file_iteration);

// What the files of a run say, and its iteration `wanted` (default: the last stored) read
// through src/reader.
run_report inspect_run(const run& r, std::optional<std::int32_t> wanted);

// The report as text for people, or as JSON; blocks: every block listed.
void print_text(std::ostream& out, const run_report& report, bool blocks);
void print_json(json_writer& j, const run_report& report, bool blocks);

}  // namespace sidecore::cli::inspect
