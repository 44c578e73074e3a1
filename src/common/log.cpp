// Implementation of the logger: one mutex-protected sink (stderr or a per-rank file; errors
// always reach stderr too). The threshold is read on every log call, from any thread, without
// the mutex: it is atomic.
#include "common/log.hpp"

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <unordered_set>

namespace sidecore::log {
namespace {

struct sink_state {
  std::mutex mutex;
  // Written under the mutex, read without it by enabled().
  std::atomic<level> threshold{level::warning};
  // Whether SIDECORE_LOG_LEVEL was applied (set under the mutex, after threshold).
  std::atomic<bool> env_checked{false};
  std::FILE* file = nullptr;  // nullptr means stderr
  std::string identity = "sidecore";
  std::unordered_set<std::string> said_once;  // messages of write_once, under the mutex
};

sink_state& state() {
  static sink_state s;
  return s;
}

const char* level_name(level lvl) {
  switch (lvl) {
    case level::trace:
      return "trace";
    case level::debug:
      return "debug";
    case level::info:
      return "info";
    case level::warning:
      return "warning";
    case level::error:
      return "error";
    default:
      return "off";
  }
}

// With the mutex held.
void apply_environment(sink_state& s) {
  if (s.env_checked.load(std::memory_order_relaxed)) return;
  if (const char* env = std::getenv("SIDECORE_LOG_LEVEL")) {
    level lvl;
    if (parse_level(env, lvl))
      s.threshold.store(lvl, std::memory_order_relaxed);
    else
      std::fprintf(stderr,
                   "[sidecore] SIDECORE_LOG_LEVEL='%s' is not a level (trace, debug, info, "
                   "warning, error, off); ignored\n",
                   env);
  }
  s.env_checked.store(true, std::memory_order_release);
}

}  // namespace

bool parse_level(const std::string& text, level& out) {
  static const std::pair<const char*, level> names[] = {
      {"trace", level::trace},     {"debug", level::debug},  {"info", level::info},
      {"warning", level::warning}, {"warn", level::warning}, {"error", level::error},
      {"fatal", level::error},     {"off", level::off}};
  std::string lower = text;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [name, lvl] : names) {
    if (lower == name) {
      out = lvl;
      return true;
    }
  }
  return false;
}

void configure(level xml_level, const std::string& file_name) {
  sink_state& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.threshold.store(xml_level, std::memory_order_relaxed);
  s.env_checked.store(false, std::memory_order_relaxed);
  apply_environment(s);
  if (s.file) {
    std::fclose(s.file);
    s.file = nullptr;
  }
  if (!file_name.empty()) {
    s.file = std::fopen(file_name.c_str(), "a");
    if (!s.file)
      std::fprintf(stderr, "[sidecore] cannot open log file '%s'; logging to stderr\n",
                   file_name.c_str());
  }
}

void set_identity(int world_rank, const char* role) {
  sink_state& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.identity = "sidecore rank " + std::to_string(world_rank) + " " + role;
}

bool enabled(level lvl) noexcept {
  sink_state& s = state();
  if (!s.env_checked.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(s.mutex);
    apply_environment(s);
  }
  return lvl >= s.threshold.load(std::memory_order_relaxed) && lvl != level::off;
}

void write(level lvl, const std::string& message) {
  sink_state& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::FILE* out = s.file ? s.file : stderr;
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  char stamp[32] = "--:--:--";
  // localtime_r: localtime's static result is shared with any other thread calling it.
  if (localtime_r(&now, &local)) std::strftime(stamp, sizeof stamp, "%H:%M:%S", &local);
  std::fprintf(out, "[%s %s] %s: %s\n", stamp, s.identity.c_str(), level_name(lvl),
               message.c_str());
  std::fflush(out);
  // With a log file, errors still reach stderr, where a batch job's failure is looked for.
  if (out != stderr && lvl >= level::error) {
    std::fprintf(stderr, "[%s %s] %s: %s\n", stamp, s.identity.c_str(), level_name(lvl),
                 message.c_str());
    std::fflush(stderr);
  }
}

bool first_time(const std::string& message) {
  sink_state& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  try {
    return s.said_once.insert(message).second;
  } catch (...) {
    return true;  // out of memory: said again rather than never
  }
}

}  // namespace sidecore::log
