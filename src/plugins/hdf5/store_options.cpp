// The HDF5 store's XML options, validated: every error names the file, the store's line and
// what would be valid.
#include <hdf5.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/mpi_handles.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "plugins/hdf5/hdf5_attributes.hpp"
#include "plugins/hdf5/hdf5_handle.hpp"
#include "plugins/hdf5/mesh_description.hpp"
#include "plugins/hdf5/store_internals.hpp"

namespace sidecore::plugins::hdf5 {

namespace {

bool parse_bool(const std::string& value, const std::string& key, const store_context& context) {
  if (equals_ignoring_case(value, "true") || equals_ignoring_case(value, "yes") || value == "1") {
    return true;
  }
  if (equals_ignoring_case(value, "false") || equals_ignoring_case(value, "no") || value == "0") {
    return false;
  }
  throw config_error(store_where(context) + ": " + key + " \"" + value +
                     "\" is not a boolean; valid values are true, false");
}

precision parse_precision(const std::string& value, const std::string& key,
                          const store_context& context) {
  if (equals_ignoring_case(value, "full")) return precision::full;
  if (equals_ignoring_case(value, "single") || equals_ignoring_case(value, "float")) {
    return precision::single;
  }
  if (equals_ignoring_case(value, "half") || equals_ignoring_case(value, "16")) {
    return precision::half;
  }
  throw config_error(store_where(context) + ": " + key + " \"" + value +
                     "\" is not supported; valid values are full, single, half");
}

// "Compression.temperature" -> ("Compression", "temperature"); no dot gives an empty name.
std::pair<std::string, std::string> split_variable_key(const std::string& key) {
  const std::size_t dot = key.find('.');
  if (dot == std::string::npos) return {key, {}};
  return {key.substr(0, dot), key.substr(dot + 1)};
}

block_layout parse_block_layout(const std::string& value, const std::string& key,
                                const store_context& context) {
  if (equals_ignoring_case(value, "Auto")) return block_layout::automatic;
  if (equals_ignoring_case(value, "Datasets")) return block_layout::datasets;
  if (equals_ignoring_case(value, "Packed")) return block_layout::packed;
  throw config_error(store_where(context) + ": " + key + " \"" + value +
                     "\" is not supported; valid values are Auto (the default: Packed when a "
                     "client writes more blocks than <domains count>, Datasets otherwise), "
                     "Datasets (one dataset per block, as Damaris names them) and Packed (one "
                     "dataset and an index per variable and file)");
}

}  // namespace

store_options parse_options(const store_context& context) {
  store_options options;
  bool xdmf_given = false;
  bool block_layout_given = false;
  // Per-variable settings start from the store's, whatever the order of the options.
  std::vector<std::pair<std::string, std::string>> per_variable;
  for (const auto& [raw_key, raw_value] : context.settings->options) {
    const std::string key = trimmed(raw_key);
    const std::string value = trimmed(raw_value);
    const auto [base, variable] = split_variable_key(key);
    if (!variable.empty() &&
        (equals_ignoring_case(base, "Compression") || equals_ignoring_case(base, "Precision") ||
         equals_ignoring_case(base, "BlockLayout"))) {
      per_variable.emplace_back(key, value);
    } else if (equals_ignoring_case(key, "FileMode")) {
      if (equals_ignoring_case(value, "FilePerCore")) {
        options.mode = file_mode::file_per_core;
      } else if (equals_ignoring_case(value, "Collective")) {
        options.mode = file_mode::collective;
      } else {
        throw config_error(store_where(context) + ": FileMode \"" + value +
                           "\" is not supported; valid values are " + valid_file_modes);
      }
    } else if (equals_ignoring_case(key, "FilesPath")) {
      options.files_path = value;
      if (!value.empty() && value.back() != '/') options.files_path += '/';
    } else if (equals_ignoring_case(key, "XDMFMode")) {
      options.xdmf_mode = value;
    } else if (equals_ignoring_case(key, "VirtualView")) {
      options.virtual_view = parse_bool(value, key, context);
    } else if (equals_ignoring_case(key, "XDMF")) {
      options.xdmf = parse_bool(value, key, context);
      xdmf_given = true;
    } else if (equals_ignoring_case(key, "Durable")) {
      options.durable = parse_bool(value, key, context);
    } else if (equals_ignoring_case(key, "Permissions")) {
      const std::string digits = trimmed(value);
      char* end = nullptr;
      const unsigned long bits = std::strtoul(digits.c_str(), &end, 8);
      if (digits.empty() || *end != '\0' || digits.size() > 4 || bits == 0 || bits > 0777)
        throw config_error(store_where(context) + ": Permissions \"" + value +
                           "\" is not valid; give octal mode bits from 0001 to 0777, e.g. 0600 "
                           "(only the owner reads and writes) or 0640");
      options.permissions = static_cast<unsigned>(bits);
    } else if (equals_ignoring_case(key, "Compression")) {
      options.defaults.compression.filter = parse_compression(value, store_where(context)).filter;
      options.defaults.compression.level = parse_compression(value, store_where(context)).level;
    } else if (equals_ignoring_case(key, "Checksum")) {
      options.defaults.compression.checksum = parse_bool(value, key, context);
    } else if (equals_ignoring_case(key, "Shuffle")) {
      options.defaults.compression.shuffle = parse_bool(value, key, context);
    } else if (equals_ignoring_case(key, "Precision")) {
      options.defaults.precision = parse_precision(value, key, context);
    } else if (equals_ignoring_case(key, "BlockLayout")) {
      options.defaults.blocks = parse_block_layout(value, key, context);
      block_layout_given = true;
    } else {
      const std::vector<std::string> keys = {"FileMode", "FilesPath",   "VirtualView", "XDMF",
                                             "XDMFMode", "Compression", "Shuffle",     "Precision",
                                             "Durable",  "BlockLayout", "Permissions", "Checksum"};
      throw config_error(
          store_where(context) + ": unknown option \"" + key + "\"; " +
          config::detail::suggest(key, keys, "options") +
          " (and Compression.<variable>, Precision.<variable>, BlockLayout.<variable>)");
    }
  }
  for (const auto& [key, value] : per_variable) {
    const auto [base, name] = split_variable_key(key);
    const std::size_t variable = context.model->find_variable(name);
    if (variable == config::model::npos) {
      std::vector<std::string> names;
      for (const config::variable& v : context.model->variables) names.push_back(v.name);
      throw config_error(store_where(context) + ": option \"" + key + "\" names no variable; " +
                         config::detail::suggest(name, names, "variables"));
    }
    auto [entry, inserted] = options.per_variable.emplace(variable, options.defaults);
    if (equals_ignoring_case(base, "Compression")) {
      const compression parsed = parse_compression(value, store_where(context) + ": " + key);
      entry->second.compression.filter = parsed.filter;
      entry->second.compression.level = parsed.level;
    } else if (equals_ignoring_case(base, "BlockLayout")) {
      entry->second.blocks = parse_block_layout(value, key, context);
      block_layout_given = true;
    } else {
      entry->second.precision = parse_precision(value, key, context);
    }
  }
  if (options.mode == file_mode::collective && block_layout_given && context.writer_index == 0)
    log::warning_once(
        store_where(context),
        ": BlockLayout applies to FilePerCore files; in Collective mode the blocks of a "
        "variable with global extents are merged into one global dataset anyway, so it "
        "is ignored");
  if (options.mode == file_mode::collective && context.writer_index == 0) {
    // A variable without global extents (a per-client scalar, say) has no place in a global
    // dataset: its blocks are stored one dataset each, named as in FilePerCore files. Damaris
    // accepts such files (and writes every block over the others), so this is a warning.
    for (const config::variable& v : context.model->variables) {
      if (v.store_index !=
          static_cast<std::size_t>(context.settings - context.model->stores.data()))
        continue;
      const config::layout& l = context.model->layouts[v.layout_index];
      if (l.global_dimensions.empty())
        log::warning_once(
            store_where(context), ": FileMode Collective: variable \"", v.name, "\" (line ", v.line,
            ") has layout \"", l.name,
            "\" without global dimensions, so each of its blocks is stored as its own "
            "dataset \"",
            v.name, "/P<source>", context.model->arch.domains != 1 ? "/B<block>" : "[/B<block>]",
            "\" in the collective file; add global=\"...\" to the layout (line ", l.line,
            ") for one global dataset");
    }
  }
  // Two HDF5 stores writing the same file names would overwrite each other's files, however
  // their FilesPath is spelled ("out/", "./out", "out//", an absolute path).
  const auto directory_of = [](const std::string& files_path) {
    return (std::filesystem::absolute(files_path.empty() ? "." : files_path) / "")
        .lexically_normal();
  };
  const std::filesystem::path mine = directory_of(options.files_path);
  for (const config::store& other : context.model->stores) {
    if (&other == context.settings || !equals_ignoring_case(other.type, "HDF5")) continue;
    std::string path;
    for (const auto& [key, value] : other.options)
      if (equals_ignoring_case(trimmed(key), "FilesPath")) path = trimmed(value);
    if (directory_of(path) == mine)
      throw config_error(store_where(context) + " and store \"" + other.name + "\" (line " +
                         std::to_string(other.line) + ") write the same files (FilesPath \"" +
                         options.files_path + "\", simulation \"" + context.model->simulation_name +
                         "\"): give each HDF5 store its own FilesPath");
  }
  if (options.mode == file_mode::file_per_core && !options.virtual_view) {
    // The XDMF file points at global datasets, which file-per-core output only has through
    // the master file.
    if (xdmf_given && options.xdmf) {
      throw config_error(store_where(context) +
                         ": XDMF needs VirtualView in FilePerCore mode (the XDMF file points at "
                         "the master file's global datasets)");
    }
    options.xdmf = false;
  }
  return options;
}

store_needs hdf5_store_needs(const store_context& context) {
  store_needs needs;
  const store_options options = parse_options(context);
  needs.collective_writes = options.mode == file_mode::collective;
  needs.writers_exchange = options.virtual_view || options.xdmf;
  return needs;
}

}  // namespace sidecore::plugins::hdf5
