// Action plugins: the loader and the adapter from the C descriptor to plugins::action.
#include "plugins/action_plugin.hpp"

#include <utility>
#include <vector>

#include "common/error.hpp"
#include "plugins/plugin_library.hpp"
#include "plugins/python_scripts.hpp"
#include "sidecore/plugin.h"

namespace sidecore::plugins {

namespace {

std::int32_t c_scope(config::scope scope) {
  switch (scope) {
    case config::scope::core:
      return SIDECORE_EVENT_SCOPE_CORE;
    case config::scope::group:
      return SIDECORE_EVENT_SCOPE_GROUP;
    case config::scope::bcast:
      return SIDECORE_EVENT_SCOPE_BCAST;
  }
  return SIDECORE_EVENT_SCOPE_CORE;
}

class external_action final : public action {
 public:
  external_action(library_handle library, const sidecore_action_descriptor* descriptor,
                  std::string label, const action_context& context)
      : m_plugin(std::move(library), descriptor),
        m_label(std::move(label)),
        m_context(context),
        m_view(*context.model) {}

  void create() {
    const config::action_plugin& settings = *m_context.settings;
    const c_options options(settings.options);
    std::vector<const char*> variables;
    for (std::size_t v : settings.variables)
      variables.push_back(m_context.model->variables[v].name.c_str());
    sidecore_action_config config{};
    config.simulation = m_context.model->simulation_name.c_str();
    config.action_name = settings.name.c_str();
    config.library = settings.library.c_str();
    config.option_count = options.keys.size();
    config.option_keys = options.keys.data();
    config.option_values = options.values.data();
    config.variable_count = variables.size();
    config.variables = variables.data();
    config.frequency = settings.frequency;
    config.writer_index = m_context.writer_index;
    config.writer_count = m_context.writer_count;
    config.comm = m_context.comm;
    config.finish_comm = m_context.finish_comm;
    char message[plugin_message_capacity] = "";
    const int code = m_plugin.create(config, message, sizeof message);
    const std::string where = action_prefix(m_context);
    if (code == SIDECORE_PLUGIN_CONFIG_ERROR)
      throw config_error(where + failure("create", code, message));
    if (code != SIDECORE_PLUGIN_OK) {
      throw storage_error(where + (settings.is_script() ? "its set-up raised:\n" : "") +
                          failure("create", code, message));
    }
  }

  bool wants(int iteration) const noexcept override {
    const int frequency = m_context.settings->frequency;
    return m_plugin.descriptor().on_iteration != nullptr && frequency > 0 &&
           iteration % frequency == 0;
  }

  void on_iteration(const iteration_data& data) override {
    const sidecore_iteration& iteration = m_view.build(data, m_label);
    char message[plugin_message_capacity] = "";
    const int code =
        m_plugin.descriptor().on_iteration(m_plugin.handle(), &iteration, message, sizeof message);
    if (code != SIDECORE_PLUGIN_OK) throw storage_error(failure("on_iteration", code, message));
  }

  void on_event(const config::event& event, int source, int iteration) override {
    if (m_plugin.descriptor().on_event == nullptr) {
      throw storage_error(m_label + ": event '" + event.name + "' (" + m_context.model->file + ":" +
                          std::to_string(event.line) +
                          ") is routed to it, but it defines no on_event()");
    }
    sidecore_event c{};
    c.name = event.name.c_str();
    c.source = source;
    c.iteration = iteration;
    c.scope = c_scope(event.scope);
    char message[plugin_message_capacity] = "";
    const int code = m_plugin.descriptor().on_event(m_plugin.handle(), &c, message, sizeof message);
    if (code != SIDECORE_PLUGIN_OK)
      throw storage_error(plugin_failure(m_label, "on_event", code, message));
  }

  void finish() override {
    if (m_plugin.descriptor().finish == nullptr) return;
    char message[plugin_message_capacity] = "";
    const int code = m_plugin.descriptor().finish(m_plugin.handle(), message, sizeof message);
    if (code != SIDECORE_PLUGIN_OK) throw storage_error(failure("finish", code, message));
  }

 private:
  // What a failed call says: a script's message is all there is to say (its traceback, or
  // what is wrong with its file; the processor names the script), a plugin's is framed.
  std::string failure(const char* function, int code, char* message) const {
    if (!m_context.settings->is_script()) return plugin_failure(m_label, function, code, message);
    message[plugin_message_capacity - 1] = '\0';
    return message;
  }

  plugin_instance<sidecore_action_descriptor> m_plugin;
  std::string m_label;  // "plugin 'stats' (/path/libstats.so)"
  action_context m_context;
  c_iteration_view m_view;
};

}  // namespace

std::string action_prefix(const action_context& context) {
  const std::string file = context.model != nullptr && !context.model->file.empty()
                               ? context.model->file
                               : "<configuration>";
  const std::string& name = context.settings->name;
  return file + ':' + std::to_string(context.settings->line) +
         (context.settings->is_script() ? ": <pyscript name=\"" + name + "\">: "
                                        : ": action plugin \"" + name + "\": ");
}

std::unique_ptr<action> make_action(const action_context& context) {
  if (context.settings == nullptr || context.model == nullptr)
    throw argument_error("make_action: no plugin settings given");
  const config::action_plugin& settings = *context.settings;
  const std::string prefix = action_prefix(context);
  if (settings.is_script()) {
    if (settings.library.empty()) {
      std::string searched;
      for (const auto& [key, value] : settings.options)
        if (key == "runner-search") searched = value;
      throw config_error(prefix + "the Python script runner was not found (looked for " + searched +
                         "); it is built with SIDECORE_BUILD_PYTHON=ON and installed next to "
                         "libsidecore, or named by SIDECORE_PYSCRIPT_RUNNER");
    }
    open_python_symbols(prefix);
  }
  loaded_plugin plugin = load_plugin(settings.library, prefix, action_plugin_kind);
  const auto* descriptor = static_cast<const sidecore_action_descriptor*>(plugin.descriptor);
  require_functions(
      prefix, plugin.named,
      {{"create", descriptor->create != nullptr}, {"destroy", descriptor->destroy != nullptr}});
  const std::string name =
      descriptor->name != nullptr && descriptor->name[0] != '\0' ? descriptor->name : settings.name;
  std::string label = settings.is_script() ? "script '" + settings.name + "'"
                                           : "plugin '" + name + "' (" + plugin.path + ")";
  auto result = std::make_unique<external_action>(std::move(plugin.library), descriptor,
                                                  std::move(label), context);
  result->create();
  return result;
}

}  // namespace sidecore::plugins
