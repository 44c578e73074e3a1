// Reading the XML configuration once for the whole job.
#pragma once

#include <mpi.h>

#include <string>

#include "config/model.hpp"

namespace sidecore {

// The name messages give a configuration passed as text.
inline constexpr const char* configuration_text_name = "<configuration text>";

// Collective over comm: rank 0 reads file_or_text (a path, or the XML itself when its first
// non-blank character is '<'), every rank parses the same text with rank 0's options
// (SIDECORE_STRICT). Throws config_error, the same on every rank, for a bad file.
config::model load_configuration(const std::string& file_or_text, MPI_Comm comm);

}  // namespace sidecore
