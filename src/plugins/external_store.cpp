// Plugin stores: dlopen the library, check the descriptor, and hand the plugin each iteration as
// the C structs of <sidecore/plugin.h>, pointing at the blocks where they are (no copy).
#include "plugins/external_store.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "sidecore/plugin.h"

namespace sidecore::plugins {

namespace {

// Room for a plugin's error message; plugin.h promises at least 256 bytes.
constexpr std::size_t message_capacity = 1024;

struct library_closer {
  void operator()(void* handle) const noexcept { ::dlclose(handle); }
};
// A dlopen handle, closed with its last store. The library is opened with RTLD_NODELETE, so
// closing it never unmaps code that threads or atexit handlers it left behind still run.
using library_handle = std::unique_ptr<void, library_closer>;

std::string dl_error(const char* fallback) {
  const char* why = ::dlerror();
  return why != nullptr ? why : fallback;
}

int32_t c_type(config::element_type type) {
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

// Ghost widths of a layout, with the parameters' initial values (as the HDF5 store takes them:
// blocks do not carry the values in force when they were written).
class external_store final : public store {
 public:
  external_store(library_handle library, const sidecore_store_descriptor* descriptor,
                 std::string label, const store_context& context)
      : m_library(std::move(library)),
        m_descriptor(descriptor),
        m_label(std::move(label)),
        m_context(context),
        m_ghosts(config::evaluate_ghosts(*context.model)) {}

  ~external_store() override {
    if (m_created) m_descriptor->destroy(m_handle);
  }
  external_store(const external_store&) = delete;
  external_store& operator=(const external_store&) = delete;

  // Runs the plugin's create(); separate from the constructor so that a failure leaves nothing
  // to destroy.
  void create() {
    const config::store& settings = *m_context.settings;
    std::vector<const char*> keys, values;
    for (const auto& [key, value] : settings.options) {
      keys.push_back(key.c_str());
      values.push_back(value.c_str());
    }
    sidecore_store_config config{};
    config.simulation = m_context.model->simulation_name.c_str();
    config.store_name = settings.name.c_str();
    config.store_type = settings.type.c_str();
    config.library = settings.library.c_str();
    config.option_count = keys.size();
    config.option_keys = keys.data();
    config.option_values = values.data();
    config.writer_index = m_context.writer_index;
    config.writer_count = m_context.writer_count;
    config.comm = m_context.comm;
    config.finish_comm = m_context.finish_comm;
    char message[message_capacity] = "";
    void* handle = nullptr;
    const int code = m_descriptor->create(&config, &handle, message, sizeof message);
    // The server names the store in messages about iterations, not in those of
    // damaris_initialize: say where it is declared.
    const std::string where = store_location(m_context) + ": store \"" + settings.name + "\": ";
    if (code == SIDECORE_PLUGIN_CONFIG_ERROR)
      throw config_error(where + failure("create", code, message));
    if (code != SIDECORE_PLUGIN_OK) throw storage_error(where + failure("create", code, message));
    m_handle = handle;
    m_created = true;
  }

  void write_iteration(const iteration_data& data) override {
    const int frequency = m_context.settings->frequency;
    if (frequency > 1 && data.iteration % frequency != 0) return;
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
      for (const block_view* block : entry.blocks) m_blocks.push_back(describe(entry, *block));
    }
    sidecore_iteration iteration{};
    iteration.iteration = data.iteration;
    iteration.incomplete = data.incomplete ? 1 : 0;
    iteration.block_count = m_blocks.size();
    iteration.blocks = m_blocks.data();
    iteration.variable_count = m_variables.size();
    iteration.variables = m_variables.data();
    char message[message_capacity] = "";
    const int code = m_descriptor->write_iteration(m_handle, &iteration, message, sizeof message);
    if (code != SIDECORE_PLUGIN_OK) throw storage_error(failure("write_iteration", code, message));
  }

  void finish() override {
    if (m_descriptor->finish == nullptr) return;
    char message[message_capacity] = "";
    const int code = m_descriptor->finish(m_handle, message, sizeof message);
    if (code != SIDECORE_PLUGIN_OK) throw storage_error(failure("finish", code, message));
  }

 private:
  // The C view of one block: pointers into the block_view and the model, which outlive the
  // call. Blocks the plugin could not read safely are refused here, so plugins may trust
  // ndims, dims and bytes.
  sidecore_block describe(const variable_blocks& entry, const block_view& block) const {
    const std::size_t ndims = block.dims.size();
    const std::size_t element = config::element_size(entry.layout->type);
    std::uint64_t needed = element;
    for (std::int64_t d : block.dims) needed *= d > 0 ? static_cast<std::uint64_t>(d) : 0;
    const std::string what = "variable \"" + entry.var->name + "\", source " +
                             std::to_string(block.source) + ", block " +
                             std::to_string(block.block_id);
    if (ndims < 1 || ndims > SIDECORE_PLUGIN_MAX_DIMS) {
      throw storage_error(m_label + ": " + what + " has " + std::to_string(ndims) +
                          " dimensions; a plugin takes 1 to " +
                          std::to_string(SIDECORE_PLUGIN_MAX_DIMS));
    }
    if (block.bytes < needed || (needed > 0 && block.data == nullptr)) {
      throw storage_error(m_label + ": " + what + " holds " + std::to_string(block.bytes) +
                          " bytes where its dimensions need " + std::to_string(needed));
    }
    sidecore_block c{};
    c.variable = entry.var->name.c_str();
    c.type = c_type(entry.layout->type);
    c.ndims = static_cast<std::int32_t>(ndims);
    c.dims = block.dims.data();
    c.global_dims = block.global_dims.size() == ndims ? block.global_dims.data() : nullptr;
    c.position = block.position.size() == ndims ? block.position.data() : m_zeros.data();
    const auto layout = static_cast<std::size_t>(entry.layout - m_context.model->layouts.data());
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

  std::string failure(const char* function, int code, char* message) const {
    message[message_capacity - 1] = '\0';  // in case the plugin filled the buffer to its end
    std::string text = m_label + ": " + function + "() failed with code " + std::to_string(code);
    text += message[0] != '\0' ? std::string(": ") + message : " and no message";
    return text;
  }

  library_handle m_library;  // first: closed after the plugin's store is destroyed
  const sidecore_store_descriptor* m_descriptor;
  std::string m_label;  // "plugin 'npy' (/path/libsidecore_npy.so)"
  store_context m_context;
  std::vector<config::ghost_widths> m_ghosts;  // per layout of the model
  void* m_handle = nullptr;
  bool m_created = false;
  // Rebuilt for every iteration; members only to reuse their memory.
  std::vector<const char*> m_variables;
  std::vector<sidecore_block> m_blocks;
  std::vector<std::int64_t> m_zeros;  // the position of blocks that carry none
};

// Where the loader found the library: the path it was opened from, which says more than the
// name given to dlopen when that was searched for.
std::string library_path(void* symbol, const std::string& fallback) {
  Dl_info info{};
  if (::dladdr(symbol, &info) != 0 && info.dli_fname != nullptr && info.dli_fname[0] != '\0')
    return info.dli_fname;
  return fallback;
}

}  // namespace

std::unique_ptr<store> make_external_store(const store_context& context) {
  const config::store& settings = *context.settings;
  const std::string prefix = store_location(context) + ": store \"" + settings.name + "\": ";
  const std::string& library = settings.library;
  ::dlerror();
  library_handle handle(::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE));
  if (!handle) {
    throw config_error(prefix + "cannot load the plugin library '" + library +
                       "': " + dl_error("unknown error"));
  }
  ::dlerror();
  void* symbol = ::dlsym(handle.get(), SIDECORE_STORE_PLUGIN_SYMBOL);
  if (symbol == nullptr) {
    throw config_error(prefix + "'" + library + "' is not a Sidecore store plugin: " +
                       dl_error("symbol not found") + " (a plugin defines " +
                       SIDECORE_STORE_PLUGIN_SYMBOL + "(), see <sidecore/plugin.h>)");
  }
  const std::string path = library_path(symbol, library);
  const std::string named =
      path == library ? "'" + library + "'" : "'" + library + "' (" + path + ")";
  using entry_point = const sidecore_store_descriptor* (*)();
  const sidecore_store_descriptor* descriptor = reinterpret_cast<entry_point>(symbol)();
  if (descriptor == nullptr) {
    throw config_error(prefix + "the plugin library " + named + " returned no descriptor from " +
                       SIDECORE_STORE_PLUGIN_SYMBOL + "()");
  }
  if (descriptor->abi_version != SIDECORE_PLUGIN_ABI_VERSION) {
    throw config_error(prefix + "the plugin library " + named + " has store plugin ABI version " +
                       std::to_string(descriptor->abi_version) + ", this Sidecore expects " +
                       std::to_string(SIDECORE_PLUGIN_ABI_VERSION) +
                       "; rebuild the plugin against this Sidecore's <sidecore/plugin.h>");
  }
  std::string missing;
  if (descriptor->create == nullptr) missing += " create";
  if (descriptor->write_iteration == nullptr) missing += " write_iteration";
  if (descriptor->destroy == nullptr) missing += " destroy";
  if (!missing.empty()) {
    throw config_error(prefix + "the descriptor of the plugin library " + named +
                       " lacks the required function(s)" + missing);
  }
  const std::string plugin_name =
      descriptor->name != nullptr && descriptor->name[0] != '\0' ? descriptor->name : settings.type;
  auto result = std::make_unique<external_store>(
      std::move(handle), descriptor, "plugin '" + plugin_name + "' (" + path + ")", context);
  result->create();
  return result;
}

}  // namespace sidecore::plugins
