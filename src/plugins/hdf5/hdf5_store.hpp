// The HDF5 store: Damaris-compatible file-per-core and collective output.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>

#include "plugins/hdf5/block_data.hpp"
#include "plugins/hdf5/compression.hpp"
#include "plugins/store.hpp"

namespace sidecore::plugins::hdf5 {

enum class file_mode { file_per_core, collective };

// BlockLayout, FilePerCore files only: one dataset per block (Damaris's names), every block
// of a variable packed into one dataset with an index (plugins/hdf5/packed_blocks.hpp), or
// Auto: packed when the blocks could not have come from Damaris (below).
enum class block_layout { automatic, datasets, packed };

// How one variable is written: lossless filter, precision reduction, block layout.
struct output_settings {
  hdf5::compression compression;
  hdf5::precision precision = hdf5::precision::full;
  hdf5::block_layout blocks = hdf5::block_layout::automatic;
};

// The store's XML options, validated.
struct store_options {
  file_mode mode = file_mode::file_per_core;
  std::string files_path;    // "" (current directory) or a prefix ending in '/'
  std::string xdmf_mode;     // accepted for compatibility, not used
  bool virtual_view = true;  // FilePerCore: per-iteration master file of virtual datasets
  bool xdmf = true;          // <FilesPath><simulation>.xmf
  // Durable: every file is flushed to stable storage (fsync, then its directory) before its
  // iteration counts as stored, so that damaris_sync returns only once it is.
  bool durable = false;
  // Permissions="0600": mode bits of every file written (0: the umask's).
  unsigned permissions = 0;
  output_settings defaults;                             // Compression, Precision, Shuffle
  std::map<std::size_t, output_settings> per_variable;  // Compression.<var>, Precision.<var>
};

// Validates the options of context.settings. Throws config_error naming the file, the line
// of the store and the valid keys or values.
store_options parse_options(const store_context& context);

// What the store's options imply for the processes that run it (Collective: collective writes).
store_needs hdf5_store_needs(const store_context& context);

// Builds the store and creates FilesPath (recursively) when missing. Throws config_error for
// invalid options and storage_error when the directory cannot be created.
std::unique_ptr<store> make_hdf5_store(const store_context& context);

}  // namespace sidecore::plugins::hdf5
