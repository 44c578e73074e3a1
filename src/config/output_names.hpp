// Names of the files the HDF5 store writes, from the configuration alone: the store names its
// files with these, and `sidecore validate` lists them, so that the two cannot disagree.
// The string overloads take any text for the numbers ("<i>" makes a pattern). The reader and
// `sidecore inspect` read names back with parse_output_file_name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sidecore::config {

// "<simulation>_It<iteration>": what every file of one iteration starts with.
inline std::string iteration_file_stem(const std::string& simulation,
                                       const std::string& iteration) {
  return simulation + "_It" + iteration;
}

// FilePerCore: the file of writer `writer` (its rank among the store's writers).
inline std::string per_writer_file_name(const std::string& simulation, const std::string& iteration,
                                        const std::string& writer) {
  return iteration_file_stem(simulation, iteration) + "_Pr" + writer + ".h5";
}
inline std::string per_writer_file_name(const std::string& simulation, std::int32_t iteration,
                                        std::int32_t writer) {
  return per_writer_file_name(simulation, std::to_string(iteration), std::to_string(writer));
}

// Collective: the one file of an iteration; FilePerCore: its master file.
inline std::string iteration_file_name(const std::string& simulation,
                                       const std::string& iteration) {
  return iteration_file_stem(simulation, iteration) + ".h5";
}
inline std::string iteration_file_name(const std::string& simulation, std::int32_t iteration) {
  return iteration_file_name(simulation, std::to_string(iteration));
}

// What a name written by the functions above says: <simulation>_It<iteration>[_Pr<writer>].h5,
// with ".part" after it while the file is being written (or when its writer died).
struct output_name_parts {
  std::string simulation;
  std::int32_t iteration = -1;
  std::int32_t writer = -1;  // -1: a collective or master file
  bool part = false;
};

// The parts of an output file's name (its last path component); nullopt for any other name.
// Numbers are decimal digits only, within int32.
std::optional<output_name_parts> parse_output_file_name(std::string_view name);

// The XDMF file describing every stored iteration.
inline std::string xdmf_file_name(const std::string& simulation) { return simulation + ".xmf"; }

}  // namespace sidecore::config
