#include "common/environment.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <vector>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/text.hpp"

namespace sidecore::environment {
namespace {

constexpr long default_idle_poll_us = 1000;
constexpr double default_stats_interval = 30.0;
constexpr double default_collective_notice = 60.0;

// The value of name, or nullptr when unset or empty.
const char* value_of(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

// A whole decimal integer in [low, high], or false.
bool whole_integer(const char* text, long low, long high, long& out) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno == ERANGE || end == text || *end != '\0' || value < low || value > high) return false;
  out = value;
  return true;
}

// A number of seconds from 0 to 1e9 in variable `name`, else `fallback` (warned about when
// malformed); `zero` says what 0 does.
double seconds_of(const char* name, double fallback, const char* zero) {
  const char* env = value_of(name);
  if (env == nullptr) return fallback;
  char* end = nullptr;
  const double value = std::strtod(env, &end);
  if (*end != '\0' || !(value >= 0.0) || value > 1e9) {
    log::warning(name, "='", env, "' is not a number of seconds (0 ", zero, "); using ", fallback);
    return fallback;
  }
  return value;
}

}  // namespace

bool strict() {
  const char* env = value_of("SIDECORE_STRICT");
  if (env == nullptr) return false;
  const std::string value = lowercase(env);
  if (value == "1" || value == "true" || value == "yes" || value == "on") return true;
  if (!(value == "0" || value == "false" || value == "no" || value == "off"))
    log::warning("SIDECORE_STRICT='", env,
                 "' is not a boolean (1, true, yes, on or 0, false, no, off); strict checking "
                 "stays off");
  return false;
}

int ranks_per_node() {
  const char* env = value_of("SIDECORE_RANKS_PER_NODE");
  if (env == nullptr) return 0;
  long value = 0;
  if (!whole_integer(env, 1, 1048576, value))
    throw config_error(std::string("SIDECORE_RANKS_PER_NODE='") + env +
                       "' is not an integer from 1 to 1048576 (ranks per virtual node); unset "
                       "it to use real nodes");
  return static_cast<int>(value);
}

long idle_poll_us() {
  const char* env = value_of("SIDECORE_IDLE_POLL_US");
  if (env == nullptr) return default_idle_poll_us;
  long value = 0;
  if (!whole_integer(env, 0, 1000000, value)) {
    log::warning("SIDECORE_IDLE_POLL_US='", env,
                 "' is not a number of microseconds from 0 to 1000000; using ",
                 default_idle_poll_us);
    return default_idle_poll_us;
  }
  return value;
}

double stats_interval_seconds() {
  return seconds_of("SIDECORE_STATS_INTERVAL", default_stats_interval, "turns the lines off");
}

double collective_notice_seconds() {
  return seconds_of("SIDECORE_COLLECTIVE_NOTICE", default_collective_notice,
                    "turns the notices off");
}

bool write_times() {
  const char* env = value_of("SIDECORE_WRITE_TIMES");
  return env != nullptr && std::string_view(env) != "0";
}

report_choice report() {
  report_choice choice;
  const char* env = value_of("SIDECORE_REPORT");
  if (env == nullptr) return choice;
  const std::string lower = lowercase(env);
  if (lower == "off" || lower == "0" || lower == "none" || lower == "false" || lower == "no") {
    choice.where = report_choice::kind::off;
  } else {
    choice.where = report_choice::kind::path;
    choice.path = env;
  }
  return choice;
}

std::string batch_job_id() {
  for (const char* name :
       {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "COBALT_JOBID"}) {
    const char* value = value_of(name);
    if (value == nullptr) continue;
    std::string id;
    for (const char* c = value; *c != '\0' && id.size() < 64; ++c) {
      const bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                         (*c >= '0' && *c <= '9') || *c == '.' || *c == '-' || *c == '_';
      id += plain ? *c : '_';
    }
    return id;
  }
  return {};
}

namespace {

// A task count of a batch system's variable, or 0 (said in `problems` when malformed).
int task_count(const char* name, const std::string& text, std::string& problems) {
  long value = 0;
  if (whole_integer(text.c_str(), 1, 1L << 30, value)) return static_cast<int>(value);
  problems += std::string(problems.empty() ? "" : "; ") + name + "='" + text +
              "' is not a task count (left out)";
  return 0;
}

}  // namespace

batch_layout batch_job_layout() {
  batch_layout layout;
  for (const char* name : {"SLURM_NTASKS", "SLURM_NPROCS"}) {
    if (const char* value = value_of(name)) {
      layout.ranks = task_count(name, value, layout.problems);
      if (layout.ranks > 0) layout.ranks_from = name;
      break;
    }
  }
  if (const char* value = value_of("SLURM_NTASKS_PER_NODE")) {
    layout.ranks_per_node = task_count("SLURM_NTASKS_PER_NODE", value, layout.problems);
    if (layout.ranks_per_node > 0) layout.per_node_from = "SLURM_NTASKS_PER_NODE";
  } else if (const char* list = value_of("SLURM_TASKS_PER_NODE")) {
    // Counts per node, run-length coded: "4(x2),3" is 4, 4, 3.
    const std::string text = list;
    std::vector<int> counts;
    std::string problems;
    for (std::size_t at = 0;;) {
      const std::size_t end = std::min(text.find_first_of("(,", at), text.size());
      const int tasks = task_count("SLURM_TASKS_PER_NODE", text.substr(at, end - at), problems);
      if (tasks == 0) {
        counts.clear();
        break;
      }
      counts.push_back(tasks);
      const std::size_t comma = text.find(',', end);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    if (!problems.empty())
      layout.problems += std::string(layout.problems.empty() ? "" : "; ") +
                         "SLURM_TASKS_PER_NODE='" + text +
                         "' is not a list of task counts such as "
                         "4(x2),3 (left out)";
    if (!counts.empty()) {
      layout.ranks_per_node = *std::max_element(counts.begin(), counts.end());
      layout.per_node_from = "SLURM_TASKS_PER_NODE";
      // Nodes filled in order, the last one partly: what a plan of one count per node shows.
      layout.uneven = std::any_of(counts.begin(), counts.end() - 1,
                                  [&](int c) { return c != layout.ranks_per_node; });
    }
  }
  return layout;
}

std::string text(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

}  // namespace sidecore::environment
