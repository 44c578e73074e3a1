// Event actions: functions bound with damaris_bind() or found by symbol name in a shared
// library or in the executable itself, and events routed to action plugins.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "Damaris.h"
#include "config/model.hpp"

namespace sidecore::storing {

class action_registry {
 public:
  // One registry per process: damaris_bind() may be called before damaris_initialize().
  static action_registry& instance();

  void bind(const std::string& event_name, signal_t function);
  // The function for an event: the bound one, else dlsym(action) in event.library (or the
  // executable when empty). Throws error(DAMARIS_BIND_ERROR) naming what was searched.
  signal_t resolve(const config::event& event, const std::string& config_file);
  // Runs an event's action; failures are logged (once per event) and counted, never thrown:
  // a remote action has nobody to return an error to. An event routed to an action plugin
  // (event.plugin) goes to the handler route() gave for it.
  void run(const config::event& event, const std::string& config_file, int source,
           int iteration) noexcept;
  long failures() const noexcept;

  // Called by run() for an event routed to an action plugin; reports its own failures (it must
  // not throw).
  using event_handler = std::function<void(const config::event&, int source, int iteration)>;
  // Routes an event of a model to the handler of the object that holds its plugin (the
  // writer's iteration processor), until unroute(event, owner). The event is identified by
  // its address: run() must be given the model's own element, not a copy. A later route of
  // the same event replaces the earlier one until it is unrouted.
  void route(const config::event* event, const void* owner, event_handler handler);
  void unroute(const config::event* event, const void* owner) noexcept;

 private:
  mutable std::mutex m_mutex;
  std::map<std::string, signal_t> m_bound;
  std::map<std::string, signal_t> m_resolved;
  std::map<std::string, bool> m_reported;
  struct route_entry {
    const void* owner;
    event_handler handler;
  };
  // Per event, the routes in the order they were made; the last one is in force.
  std::map<const config::event*, std::vector<route_entry>> m_routes;
  long m_failures = 0;
};

}  // namespace sidecore::storing
