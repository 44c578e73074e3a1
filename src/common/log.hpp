// The one logger: levels from the XML, overridden by SIDECORE_LOG_LEVEL; lines tagged with
// rank and role so that a cluster-wide stderr stays readable.
#pragma once

#include <sstream>
#include <string>

namespace sidecore::log {

enum class level { trace = 0, debug, info, warning, error, off };

// Configured once after the XML is read; the environment variable wins over the XML.
void configure(level xml_level, const std::string& file_name);
// Sets the tag printed on every line, e.g. "rank 3 server".
void set_identity(int world_rank, const char* role);
bool enabled(level lvl) noexcept;
void write(level lvl, const std::string& message);
// Parses "trace", "debug", "info", "warning", "error", "off" (false when unknown).
bool parse_level(const std::string& text, level& out);

template <typename... Args>
void emit(level lvl, const Args&... args) {
  if (!enabled(lvl)) return;
  std::ostringstream out;
  (out << ... << args);
  write(lvl, out.str());
}
template <typename... Args>
void trace(const Args&... a) {
  emit(level::trace, a...);
}
template <typename... Args>
void debug(const Args&... a) {
  emit(level::debug, a...);
}
template <typename... Args>
void info(const Args&... a) {
  emit(level::info, a...);
}
template <typename... Args>
void warning(const Args&... a) {
  emit(level::warning, a...);
}
template <typename... Args>
void error(const Args&... a) {
  emit(level::error, a...);
}

// Whether this process has not yet been given `message` by warning_once (and notes it).
bool first_time(const std::string& message);
// A warning the process gives once, however many times its cause is met (a store's options
// checked at start-up and again by each writer of the process, say).
template <typename... Args>
void warning_once(const Args&... args) {
  if (!enabled(level::warning)) return;
  std::ostringstream out;
  (out << ... << args);
  if (first_time(out.str())) write(level::warning, out.str());
}

}  // namespace sidecore::log
