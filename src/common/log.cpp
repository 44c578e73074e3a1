// Implementation of the logger: one mutex-protected sink (stderr or a per-rank file; errors
// always reach stderr too).
#include "common/log.hpp"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>

namespace sidecore::log {
namespace {

struct sink_state {
  std::mutex mutex;
  level threshold = level::warning;
  std::FILE* file = nullptr;  // nullptr means stderr
  std::string identity = "sidecore";
  bool env_checked = false;
};

sink_state& state() {
  static sink_state s;
  return s;
}

const char* level_name(level lvl) {
  switch (lvl) {
    case level::trace: return "trace";
    case level::debug: return "debug";
    case level::info: return "info";
    case level::warning: return "warning";
    case level::error: return "error";
    default: return "off";
  }
}

void apply_environment(sink_state& s) {
  if (s.env_checked) return;
  s.env_checked = true;
  if (const char* env = std::getenv("SIDECORE_LOG_LEVEL")) {
    level lvl;
    if (parse_level(env, lvl))
      s.threshold = lvl;
    else
      std::fprintf(stderr,
                   "[sidecore] SIDECORE_LOG_LEVEL='%s' is not a level (trace, debug, info, "
                   "warning, error, off); ignored\n",
                   env);
  }
}

}  // namespace

bool parse_level(const std::string& text, level& out) {
  static const std::pair<const char*, level> names[] = {
      {"trace", level::trace}, {"debug", level::debug},     {"info", level::info},
      {"warning", level::warning}, {"warn", level::warning}, {"error", level::error},
      {"fatal", level::error}, {"off", level::off}};
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
  s.threshold = xml_level;
  s.env_checked = false;
  apply_environment(s);
  if (s.file) {
    std::fclose(s.file);
    s.file = nullptr;
  }
  if (!file_name.empty()) {
    s.file = std::fopen(file_name.c_str(), "a");
    if (!s.file) std::fprintf(stderr, "[sidecore] cannot open log file '%s'; logging to stderr\n",
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
  if (!s.env_checked) {
    std::lock_guard<std::mutex> lock(s.mutex);
    apply_environment(s);
  }
  return lvl >= s.threshold && lvl != level::off;
}

void write(level lvl, const std::string& message) {
  sink_state& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::FILE* out = s.file ? s.file : stderr;
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::localtime(&now));
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

}  // namespace sidecore::log
