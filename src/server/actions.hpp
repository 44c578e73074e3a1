// Event actions: functions bound with damaris_bind() or found by symbol name in a shared
// library or in the executable itself.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "Damaris.h"
#include "config/model.hpp"

namespace sidecore::server {

class action_registry {
 public:
  // One registry per process: damaris_bind() may be called before damaris_initialize().
  static action_registry& instance();

  void bind(const std::string& event_name, signal_t function);
  // The function for an event: the bound one, else dlsym(action) in event.library (or the
  // executable when empty). Throws error(DAMARIS_BIND_ERROR) naming what was searched.
  signal_t resolve(const config::event& event, const std::string& config_file);
  // Runs an event's action; failures are logged (once per event) and counted, never thrown:
  // a remote action has nobody to return an error to.
  void run(const config::event& event, const std::string& config_file, int source,
           int iteration) noexcept;
  long failures() const noexcept { return m_failures; }

 private:
  std::mutex m_mutex;
  std::map<std::string, signal_t> m_bound;
  std::map<std::string, signal_t> m_resolved;
  std::map<std::string, bool> m_reported;
  long m_failures = 0;
};

}  // namespace sidecore::server
