// Which files make up one stored iteration and whether they are all there and whole: the files
// the run that wrote the iteration left (told apart, by the run id every file carries, from
// files another run left under the same names), the writers' files missing, the files HDF5
// cannot open (torn), and the files that say they miss data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sidecore::reader {

// The parts of a file name under a prefix: <base>_It<iteration>[_Pr<writer>].h5.
struct output_name {
  std::int32_t iteration = -1;
  std::int32_t writer = -1;  // -1: a collective or master file
};

// Every output file under prefix (a FilesPath followed by the simulation's name), by name.
std::vector<std::pair<output_name, std::string>> list_outputs(const std::string& prefix);

struct iteration_files {
  std::int32_t iteration = 0;
  // The id of the run that wrote the iteration (from its newest file that has one); none for
  // output written before files carried it: every file is then taken as this run's. A torn
  // file more than 10 s newer than every readable one is a later run's: the readable ones are
  // then listed in other_run, none is read, and the iteration is incomplete.
  std::optional<std::int64_t> run_id;
  bool per_core = false;     // file-per-core output (else one collective file)
  std::int32_t writers = 0;  // per_core: the writer files the run wrote for the iteration
  std::vector<std::pair<std::int32_t, std::string>> writer_files;  // present, readable, by writer
  std::string shared;  // the run's master (per_core) or collective file, readable; "" if none
  std::vector<std::int32_t> missing_writers;   // per_core: no readable file of this run
  std::vector<std::string> unreadable;         // under a final name, but HDF5 cannot open it
  std::vector<std::string> other_run;          // another run's files under this iteration's names
  std::vector<std::string> incomplete;         // this run's files that say complete = 0
  std::vector<std::int32_t> clients_left_out;  // the clients those files name, in order

  // Every file the data needs is there, whole, and says it holds all its clients' data. A
  // torn master file alone leaves the data complete (it is read from the writers' files).
  bool complete() const;
  // Why not, in one line naming the files ("" when complete).
  std::string problems() const;
  // The files holding this iteration's data that are missing or unreadable, for messages.
  std::string missing_data_files(const std::string& prefix) const;
};

// "client 3 left it out (...)" or "clients 2, 5 left it out (...)": what the files' attribute
// clients_left_out says, for messages ("" when it names none).
std::string describe_clients_left_out(const std::vector<std::int32_t>& clients);

// Surveys the files of one iteration under prefix; opens each file once.
iteration_files survey_iteration(const std::string& prefix, std::int32_t iteration);

}  // namespace sidecore::reader
