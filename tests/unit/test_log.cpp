// The logger: levels from the configuration and the environment, and its use from several
// threads while it is reconfigured (a thread sanitizer reports any unordered access).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "common/log.hpp"

using namespace sidecore;

namespace {

// Restores the default configuration (warning, stderr) at the end of a test.
struct log_guard {
  ~log_guard() { log::configure(log::level::warning, ""); }
};

}  // namespace

TEST(log, parse_level_knows_every_name_in_any_case) {
  log::level lvl = log::level::off;
  EXPECT_TRUE(log::parse_level("DEBUG", lvl));
  EXPECT_EQ(lvl, log::level::debug);
  EXPECT_TRUE(log::parse_level("warn", lvl));
  EXPECT_EQ(lvl, log::level::warning);
  EXPECT_TRUE(log::parse_level("fatal", lvl));
  EXPECT_EQ(lvl, log::level::error);
  EXPECT_FALSE(log::parse_level("loud", lvl));
}

TEST(log, the_threshold_follows_the_configuration_unless_the_environment_sets_it) {
  log_guard guard;
  const char* saved = std::getenv("SIDECORE_LOG_LEVEL");
  const std::string previous = saved ? saved : "";
  ::unsetenv("SIDECORE_LOG_LEVEL");
  log::configure(log::level::error, "");
  EXPECT_FALSE(log::enabled(log::level::warning));
  EXPECT_TRUE(log::enabled(log::level::error));
  ::setenv("SIDECORE_LOG_LEVEL", "debug", 1);
  log::configure(log::level::error, "");
  EXPECT_TRUE(log::enabled(log::level::debug));
  EXPECT_FALSE(log::enabled(log::level::trace));
  if (saved)
    ::setenv("SIDECORE_LOG_LEVEL", previous.c_str(), 1);
  else
    ::unsetenv("SIDECORE_LOG_LEVEL");
}

TEST(log, threads_log_while_another_reconfigures_the_logger) {
  log_guard guard;
  const char* saved = std::getenv("SIDECORE_LOG_LEVEL");
  if (saved) GTEST_SKIP() << "SIDECORE_LOG_LEVEL is set: the threshold would not move";
  std::atomic<bool> done{false};
  std::atomic<long> seen_enabled{0}, seen_disabled{0};
  auto reader = [&] {
    // Only the threshold is read here: nothing is printed below level "off".
    while (!done.load()) {
      if (log::enabled(log::level::info))
        ++seen_enabled;
      else
        ++seen_disabled;
      log::trace("never printed: the threshold never goes below info in this test");
    }
  };
  std::thread a(reader), b(reader);
  for (int round = 0; round < 3000; ++round) {
    log::configure(round % 2 ? log::level::info : log::level::off, "");
    if (round % 100 == 0) std::this_thread::yield();
  }
  log::configure(log::level::off, "");
  done = true;
  a.join();
  b.join();
  EXPECT_GT(seen_enabled.load() + seen_disabled.load(), 0);
  EXPECT_FALSE(log::enabled(log::level::error));  // "off" holds once the writers are done
}
