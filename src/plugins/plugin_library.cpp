// Plugin libraries: dlopen, the entry point, the version check, and the C views of blocks.
#include "plugins/plugin_library.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "common/elf_symbols.hpp"
#include "common/error.hpp"
#include "common/library_search.hpp"

namespace sidecore::plugins {

static_assert(SIDECORE_PLUGIN_MAX_DIMS == SIDECORE_MAX_DIMENSIONS,
              "plugin.h and Damaris.h must give blocks the same most dimensions");

namespace {

std::string dl_error(const char* fallback) {
  const char* why = ::dlerror();
  return why != nullptr ? why : fallback;
}

// Where the loader found the library: the path it was opened from, which says more than the
// name given to dlopen when that was searched for.
std::string library_path(void* symbol, const std::string& fallback) {
  Dl_info info{};
  if (::dladdr(symbol, &info) != 0 && info.dli_fname != nullptr && info.dli_fname[0] != '\0')
    return info.dli_fname;
  return fallback;
}

std::int32_t c_type(config::element_type type) {
  switch (type) {
    case config::element_type::int8:
      return SIDECORE_TYPE_INT8;
    case config::element_type::int16:
      return SIDECORE_TYPE_INT16;
    case config::element_type::int32:
      return SIDECORE_TYPE_INT32;
    case config::element_type::int64:
      return SIDECORE_TYPE_INT64;
    case config::element_type::float32:
      return SIDECORE_TYPE_FLOAT32;
    case config::element_type::float64:
      return SIDECORE_TYPE_FLOAT64;
  }
  return 0;
}

}  // namespace

loaded_plugin load_plugin(const std::string& library, const std::string& prefix,
                          const plugin_kind& kind) {
  // The file is read before it is loaded: a library that is not a plugin is refused without its
  // constructors running in every process. A name without a directory is searched for as the
  // loader would, then loaded by the path found, so that the file checked is the file loaded;
  // one found nowhere is left to dlopen, which says what is missing.
  std::string file = library;
  if (library.find('/') == std::string::npos) {
    if (std::optional<std::string> found = find_library_file(library)) file = std::move(*found);
  }
  if (file.find('/') != std::string::npos) {
    const std::optional<bool> defines = elf_defines_function(file, kind.symbol);
    if (defines && !*defines) {
      const std::string named =
          file == library ? "'" + library + "'" : "'" + library + "' (" + file + ")";
      throw config_error(prefix + named + " is not a Sidecore " + kind.noun +
                         " plugin: it defines no " + kind.symbol +
                         "() (a plugin does, see <sidecore/plugin.h>); it was not loaded");
    }
  }
  loaded_plugin result;
  ::dlerror();
  result.library.reset(::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE));
  if (!result.library) {
    throw config_error(prefix + "cannot load the plugin library '" + library +
                       "': " + dl_error("unknown error"));
  }
  ::dlerror();
  void* symbol = ::dlsym(result.library.get(), kind.symbol);
  if (symbol == nullptr) {
    throw config_error(prefix + "'" + library + "' is not a Sidecore " + kind.noun +
                       " plugin: " + dl_error("symbol not found") + " (a plugin defines " +
                       kind.symbol + "(), see <sidecore/plugin.h>)");
  }
  result.path = library_path(symbol, library);
  result.named =
      result.path == library ? "'" + library + "'" : "'" + library + "' (" + result.path + ")";
  using entry_point = const void* (*)();
  result.descriptor = reinterpret_cast<entry_point>(symbol)();
  if (result.descriptor == nullptr) {
    throw config_error(prefix + "the plugin library " + result.named +
                       " returned no descriptor from " + kind.symbol + "()");
  }
  // Every descriptor, of every version, starts with its ABI version.
  const std::uint32_t version = *static_cast<const std::uint32_t*>(result.descriptor);
  if (version != kind.version) {
    throw config_error(prefix + "the plugin library " + result.named + " has " + kind.noun +
                       " plugin ABI version " + std::to_string(version) +
                       ", this Sidecore expects " + std::to_string(kind.version) +
                       "; rebuild the plugin against this Sidecore's <sidecore/plugin.h>");
  }
  return result;
}

void require_functions(const std::string& prefix, const std::string& named,
                       std::initializer_list<std::pair<const char*, bool>> functions) {
  std::string missing;
  for (const auto& [function, present] : functions)
    if (!present) missing += std::string(" ") + function;
  if (!missing.empty()) {
    throw config_error(prefix + "the descriptor of the plugin library " + named +
                       " lacks the required function(s)" + missing);
  }
}

c_options::c_options(const std::vector<std::pair<std::string, std::string>>& options) {
  keys.reserve(options.size());
  values.reserve(options.size());
  for (const auto& [key, value] : options) {
    keys.push_back(key.c_str());
    values.push_back(value.c_str());
  }
}

std::string plugin_failure(const std::string& label, const char* function, int code,
                           char* message) {
  message[plugin_message_capacity - 1] = '\0';
  std::string text = label + ": " + function + "() failed with code " + std::to_string(code);
  text += message[0] != '\0' ? std::string(": ") + message : " and no message";
  return text;
}

c_iteration_view::c_iteration_view(const config::model& model)
    : m_model(model), m_ghosts(config::evaluate_ghosts(model)) {}

const sidecore_iteration& c_iteration_view::build(const iteration_data& data,
                                                  const std::string& label) {
  m_variables.clear();
  m_blocks.clear();
  std::size_t most_dims = 0;
  for (const variable_blocks& entry : data.variables) {
    m_variables.push_back(entry.var->name.c_str());
    for (const block_view* block : entry.blocks)
      most_dims = std::max(most_dims, block->dims.size());
  }
  m_zeros.assign(most_dims, 0);  // not resized below: blocks point into it
  for (const variable_blocks& entry : data.variables) {
    for (const block_view* block : entry.blocks) m_blocks.push_back(describe(entry, *block, label));
  }
  m_iteration = sidecore_iteration{};
  m_iteration.iteration = data.iteration;
  m_iteration.incomplete = data.incomplete ? 1 : 0;
  m_iteration.block_count = m_blocks.size();
  m_iteration.blocks = m_blocks.data();
  m_iteration.variable_count = m_variables.size();
  m_iteration.variables = m_variables.data();
  return m_iteration;
}

sidecore_block c_iteration_view::describe(const variable_blocks& entry, const block_view& block,
                                          const std::string& label) const {
  const std::size_t ndims = block.dims.size();
  const std::size_t element = config::element_size(entry.layout->type);
  std::uint64_t needed = element;
  for (std::int64_t d : block.dims) needed *= d > 0 ? static_cast<std::uint64_t>(d) : 0;
  const std::string what = "variable \"" + entry.var->name + "\", source " +
                           std::to_string(block.source) + ", block " +
                           std::to_string(block.block_id);
  if (ndims < 1 || ndims > SIDECORE_PLUGIN_MAX_DIMS) {
    throw storage_error(label + ": " + what + " has " + std::to_string(ndims) +
                        " dimensions; a plugin takes 1 to " +
                        std::to_string(SIDECORE_PLUGIN_MAX_DIMS));
  }
  if (block.bytes < needed || (needed > 0 && block.data == nullptr)) {
    throw storage_error(label + ": " + what + " holds " + std::to_string(block.bytes) +
                        " bytes where its dimensions need " + std::to_string(needed));
  }
  sidecore_block c{};
  c.variable = entry.var->name.c_str();
  c.type = c_type(entry.layout->type);
  c.ndims = static_cast<std::int32_t>(ndims);
  c.dims = block.dims.data();
  c.global_dims = block.global_dims.size() == ndims ? block.global_dims.data() : nullptr;
  c.position = block.position.size() == ndims ? block.position.data() : m_zeros.data();
  const auto layout = static_cast<std::size_t>(entry.layout - m_model.layouts.data());
  if (layout < m_ghosts.size() && m_ghosts[layout].before.size() == ndims) {
    c.ghosts_before = m_ghosts[layout].before.data();
    c.ghosts_after = m_ghosts[layout].after.data();
  }
  c.source = block.source;
  c.block = block.block_id;
  c.iteration = block.iteration;
  c.data = block.data;
  c.bytes = block.bytes;
  return c;
}

}  // namespace sidecore::plugins
