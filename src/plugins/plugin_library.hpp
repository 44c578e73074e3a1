// What store and action plugins share: opening a library of <sidecore/plugin.h> and checking its
// descriptor's version, and the C view of an iteration's blocks that both receive.
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/model.hpp"
#include "plugins/store.hpp"
#include "sidecore/plugin.h"

namespace sidecore::plugins {

struct library_closer {
  void operator()(void* handle) const noexcept { ::dlclose(handle); }
};
// A dlopen handle. The library is opened with RTLD_NODELETE, so closing it never unmaps code
// that threads or atexit handlers it left behind still run.
using library_handle = std::unique_ptr<void, library_closer>;

// Room for a plugin's error message; plugin.h promises at least 256 bytes.
inline constexpr std::size_t plugin_message_capacity = 8192;  // room for a traceback

// Which kind of plugin a library must be.
struct plugin_kind {
  const char* noun;       // "store", "action": in messages
  const char* symbol;     // the entry point
  std::uint32_t version;  // the ABI version this Sidecore expects
};
inline constexpr plugin_kind store_plugin_kind{"store", SIDECORE_STORE_PLUGIN_SYMBOL,
                                               SIDECORE_PLUGIN_ABI_VERSION};
inline constexpr plugin_kind action_plugin_kind{"action", SIDECORE_ACTION_PLUGIN_SYMBOL,
                                                SIDECORE_ACTION_ABI_VERSION};

struct loaded_plugin {
  library_handle library;
  const void* descriptor = nullptr;  // its first field is a uint32_t equal to kind.version
  std::string path;                  // where the loader found the library
  std::string named;                 // "'lib.so' (/path/lib.so)", or "'/path/lib.so'", for messages
};

// Opens `library` (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE), calls its entry point and checks
// the version its descriptor starts with. Throws config_error starting with `prefix`
// ("file:line: store \"s\": ") naming the library, and both versions when they differ. A
// library given by path that does not define the entry point is refused before it is opened.
loaded_plugin load_plugin(const std::string& library, const std::string& prefix,
                          const plugin_kind& kind);

// Throws config_error starting with `prefix` when a descriptor lacks functions the plugin kind
// requires: each entry is a function's name and whether the descriptor has it.
void require_functions(const std::string& prefix, const std::string& named,
                       std::initializer_list<std::pair<const char*, bool>> functions);

// The options of a plugin's XML element as the two parallel arrays its C configuration takes;
// valid while the options are.
struct c_options {
  explicit c_options(const std::vector<std::pair<std::string, std::string>>& options);
  std::vector<const char*> keys, values;
};

// One created instance of a plugin: its library kept open, its descriptor, and the handle its
// create() returned, given back to its destroy() before the library closes. Move-less: the
// plugin's handle may point back at it.
template <typename Descriptor>
class plugin_instance {
 public:
  plugin_instance(library_handle library, const Descriptor* descriptor) noexcept
      : m_library(std::move(library)), m_descriptor(descriptor) {}
  ~plugin_instance() {
    if (m_created) m_descriptor->destroy(m_handle);
  }
  plugin_instance(const plugin_instance&) = delete;
  plugin_instance& operator=(const plugin_instance&) = delete;

  // Calls the plugin's create(); its code, with its message in `message` when it failed.
  template <typename Config>
  int create(const Config& config, char* message, std::size_t size) {
    void* handle = nullptr;
    const int code = m_descriptor->create(&config, &handle, message, size);
    if (code == SIDECORE_PLUGIN_OK) {
      m_handle = handle;
      m_created = true;
    }
    return code;
  }

  const Descriptor& descriptor() const noexcept { return *m_descriptor; }
  void* handle() const noexcept { return m_handle; }

 private:
  library_handle m_library;  // first: closed after the plugin's handle is destroyed
  const Descriptor* m_descriptor;
  void* m_handle = nullptr;
  bool m_created = false;
};

// "<label>: <function>() failed with code <code>: <message>"; the message is the plugin's
// buffer of plugin_message_capacity bytes (NUL-terminated here, in case it filled it).
std::string plugin_failure(const std::string& label, const char* function, int code, char* message);

// The C view (sidecore_iteration) of an iteration_data: pointers into the blocks and the model,
// valid while both are. Blocks a plugin could not read safely are refused here (storage_error
// starting with the label), so plugins may trust ndims, dims and bytes.
class c_iteration_view {
 public:
  explicit c_iteration_view(const config::model& model);
  const sidecore_iteration& build(const iteration_data& data, const std::string& label);

 private:
  sidecore_block describe(const variable_blocks& entry, const block_view& block,
                          const std::string& label) const;

  const config::model& m_model;
  std::vector<config::ghost_widths> m_ghosts;  // per layout of the model
  // Rebuilt for every iteration; members only to reuse their memory.
  sidecore_iteration m_iteration{};
  std::vector<const char*> m_variables;
  std::vector<sidecore_block> m_blocks;
  std::vector<std::int64_t> m_zeros;  // the position of blocks that carry none
};

}  // namespace sidecore::plugins
