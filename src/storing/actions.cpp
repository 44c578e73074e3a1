// Symbol resolution for events, with a cache so dlopen/dlsym run once per event.
#include "storing/actions.hpp"

#include <dlfcn.h>

#include "common/error.hpp"
#include "common/log.hpp"

namespace sidecore::storing {

action_registry& action_registry::instance() {
  static action_registry registry;
  return registry;
}

void action_registry::bind(const std::string& event_name, signal_t function) {
  if (!function)
    throw error(DAMARIS_BIND_ERROR, "damaris_bind(\"" + event_name + "\"): null function");
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
      throw error(DAMARIS_BIND_ERROR, where + ": event '" + event.name +
                                          "': cannot load library '" + event.library +
                                          "': " + (why ? why : "unknown error"));
    }
  }
  ::dlerror();
  void* symbol = ::dlsym(handle, event.action.c_str());
  if (!symbol) {
    throw error(DAMARIS_BIND_ERROR,
                where + ": event '" + event.name + "': function '" + event.action +
                    "' not found in " +
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
    if (event.plugin != config::event::no_plugin) {
      event_handler handler;
      {
        std::lock_guard<std::mutex> lock(m_mutex);
        auto it = m_routes.find(&event);
        if (it != m_routes.end() && !it->second.empty()) handler = it->second.back().handler;
      }
      if (!handler) {
        throw error(DAMARIS_UNDEFINED_ACTION,
                    config_file + ":" + std::to_string(event.line) + ": event '" + event.name +
                        "' is routed to an action plugin, which does not run in this process "
                        "(action plugins run where the stores run)");
      }
      log::debug("event '", event.name, "' from client ", source, " at iteration ", iteration,
                 " to its action plugin");
      handler(event, source, iteration);
      return;
    }
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

long action_registry::failures() const noexcept {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_failures;
}

void action_registry::route(const config::event* event, const void* owner, event_handler handler) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_routes[event].push_back({owner, std::move(handler)});
}

void action_registry::unroute(const config::event* event, const void* owner) noexcept {
  std::lock_guard<std::mutex> lock(m_mutex);
  auto it = m_routes.find(event);
  if (it == m_routes.end()) return;
  auto& entries = it->second;
  for (auto e = entries.end(); e != entries.begin();) {
    --e;
    if (e->owner == owner) {
      entries.erase(e);
      break;
    }
  }
  if (entries.empty()) m_routes.erase(it);
}

}  // namespace sidecore::storing
