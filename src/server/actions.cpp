// Symbol resolution for events, with a cache so dlopen/dlsym run once per event.
#include "server/actions.hpp"

#include <dlfcn.h>

#include "common/error.hpp"
#include "common/log.hpp"

namespace sidecore::server {

action_registry& action_registry::instance() {
  static action_registry registry;
  return registry;
}

void action_registry::bind(const std::string& event_name, signal_t function) {
  if (!function) throw error(DAMARIS_BIND_ERROR, "damaris_bind(\"" + event_name + "\"): null function");
  std::lock_guard<std::mutex> lock(m_mutex);
  m_bound[event_name] = function;
  m_resolved.erase(event_name);
}

signal_t action_registry::resolve(const config::event& event, const std::string& config_file) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (auto it = m_bound.find(event.name); it != m_bound.end()) return it->second;
  if (auto it = m_resolved.find(event.name); it != m_resolved.end()) return it->second;
  const std::string where = config_file + ":" + std::to_string(event.line);
  void* handle = nullptr;
  if (event.library.empty()) {
    handle = ::dlopen(nullptr, RTLD_NOW);
  } else {
    handle = ::dlopen(event.library.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle) {
      const char* why = ::dlerror();
      throw error(DAMARIS_BIND_ERROR, where + ": event '" + event.name + "': cannot load library '" +
                                          event.library + "': " + (why ? why : "unknown error"));
    }
  }
  ::dlerror();
  void* symbol = ::dlsym(handle, event.action.c_str());
  if (!symbol) {
    throw error(DAMARIS_BIND_ERROR,
                where + ": event '" + event.name + "': function '" + event.action + "' not found in " +
                    (event.library.empty() ? std::string("the executable (link it with -rdynamic, "
                                                         "or call damaris_bind)")
                                           : "'" + event.library + "'"));
  }
  auto function = reinterpret_cast<signal_t>(symbol);
  m_resolved[event.name] = function;
  return function;
}

void action_registry::run(const config::event& event, const std::string& config_file, int source,
                          int iteration) noexcept {
  try {
    signal_t function = resolve(event, config_file);
    log::debug("event '", event.name, "' from client ", source, " at iteration ", iteration);
    function(event.name.c_str(), source, iteration, "");
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(m_mutex);
    ++m_failures;
    if (!m_reported[event.name]) {
      m_reported[event.name] = true;
      log::error(e.what(), " (reported once per event)");
    }
  }
}

}  // namespace sidecore::server
