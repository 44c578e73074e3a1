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
#include "plugins/plugin_library.hpp"
#include "sidecore/plugin.h"

namespace sidecore::plugins {

namespace {

// A plugin's store: its descriptor, and the C view of each iteration passed to it.
class external_store final : public store {
 public:
  external_store(library_handle library, const sidecore_store_descriptor* descriptor,
                 std::string label, const store_context& context)
      : m_library(std::move(library)),
        m_descriptor(descriptor),
        m_label(std::move(label)),
        m_context(context),
        m_view(*context.model) {}

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
    char message[plugin_message_capacity] = "";
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
    const sidecore_iteration& iteration = m_view.build(data, m_label);
    char message[plugin_message_capacity] = "";
    const int code = m_descriptor->write_iteration(m_handle, &iteration, message, sizeof message);
    if (code != SIDECORE_PLUGIN_OK) throw storage_error(failure("write_iteration", code, message));
  }

  void finish() override {
    if (m_descriptor->finish == nullptr) return;
    char message[plugin_message_capacity] = "";
    const int code = m_descriptor->finish(m_handle, message, sizeof message);
    if (code != SIDECORE_PLUGIN_OK) throw storage_error(failure("finish", code, message));
  }

 private:
  std::string failure(const char* function, int code, char* message) const {
    return plugin_failure(m_label, function, code, message);
  }

  library_handle m_library;  // first: closed after the plugin's store is destroyed
  const sidecore_store_descriptor* m_descriptor;
  std::string m_label;  // "plugin 'npy' (/path/libsidecore_npy.so)"
  store_context m_context;
  c_iteration_view m_view;
  void* m_handle = nullptr;
  bool m_created = false;
};

}  // namespace

std::unique_ptr<store> make_external_store(const store_context& context) {
  const config::store& settings = *context.settings;
  const std::string prefix = store_location(context) + ": store \"" + settings.name + "\": ";
  loaded_plugin plugin = load_plugin(settings.library, prefix, store_plugin_kind);
  const auto* descriptor = static_cast<const sidecore_store_descriptor*>(plugin.descriptor);
  const std::string& named = plugin.named;
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
      std::move(plugin.library), descriptor, "plugin '" + plugin_name + "' (" + plugin.path + ")",
      context);
  result->create();
  return result;
}

}  // namespace sidecore::plugins
