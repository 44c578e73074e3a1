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
      : m_plugin(std::move(library), descriptor),
        m_label(std::move(label)),
        m_context(context),
        m_view(*context.model) {}

  // Runs the plugin's create(); separate from the constructor so that a failure leaves nothing
  // to destroy.
  void create() {
    const config::store& settings = *m_context.settings;
    const c_options options(settings.options);
    sidecore_store_config config{};
    config.simulation = m_context.model->simulation_name.c_str();
    config.store_name = settings.name.c_str();
    config.store_type = settings.type.c_str();
    config.library = settings.library.c_str();
    config.option_count = options.keys.size();
    config.option_keys = options.keys.data();
    config.option_values = options.values.data();
    config.writer_index = m_context.writer_index;
    config.writer_count = m_context.writer_count;
    config.comm = m_context.comm;
    config.finish_comm = m_context.finish_comm;
    char message[plugin_message_capacity] = "";
    const int code = m_plugin.create(config, message, sizeof message);
    // The server names the store in messages about iterations, not in those of
    // damaris_initialize: say where it is declared.
    const std::string where = store_location(m_context) + ": store \"" + settings.name + "\": ";
    if (code == SIDECORE_PLUGIN_CONFIG_ERROR)
      throw config_error(where + failure("create", code, message));
    if (code != SIDECORE_PLUGIN_OK) throw storage_error(where + failure("create", code, message));
  }

  void write_iteration(const iteration_data& data) override {
    const int frequency = m_context.settings->frequency;
    if (frequency > 1 && data.iteration % frequency != 0) return;
    const sidecore_iteration& iteration = m_view.build(data, m_label);
    char message[plugin_message_capacity] = "";
    const int code = m_plugin.descriptor().write_iteration(m_plugin.handle(), &iteration, message,
                                                           sizeof message);
    if (code != SIDECORE_PLUGIN_OK) throw storage_error(failure("write_iteration", code, message));
  }

  void finish() override {
    if (m_plugin.descriptor().finish == nullptr) return;
    char message[plugin_message_capacity] = "";
    const int code = m_plugin.descriptor().finish(m_plugin.handle(), message, sizeof message);
    if (code != SIDECORE_PLUGIN_OK) throw storage_error(failure("finish", code, message));
  }

 private:
  std::string failure(const char* function, int code, char* message) const {
    return plugin_failure(m_label, function, code, message);
  }

  plugin_instance<sidecore_store_descriptor> m_plugin;
  std::string m_label;  // "plugin 'npy' (/path/libsidecore_npy.so)"
  store_context m_context;
  c_iteration_view m_view;
};

}  // namespace

std::unique_ptr<store> make_external_store(const store_context& context) {
  const config::store& settings = *context.settings;
  const std::string prefix = store_location(context) + ": store \"" + settings.name + "\": ";
  loaded_plugin plugin = load_plugin(settings.library, prefix, store_plugin_kind);
  const auto* descriptor = static_cast<const sidecore_store_descriptor*>(plugin.descriptor);
  const std::string& named = plugin.named;
  require_functions(prefix, named,
                    {{"create", descriptor->create != nullptr},
                     {"write_iteration", descriptor->write_iteration != nullptr},
                     {"destroy", descriptor->destroy != nullptr}});
  const std::string plugin_name =
      descriptor->name != nullptr && descriptor->name[0] != '\0' ? descriptor->name : settings.type;
  auto result = std::make_unique<external_store>(
      std::move(plugin.library), descriptor, "plugin '" + plugin_name + "' (" + plugin.path + ")",
      context);
  result->create();
  return result;
}

}  // namespace sidecore::plugins
