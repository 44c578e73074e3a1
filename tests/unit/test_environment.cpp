// Environment variables: each parsed by common/environment.cpp alone; malformed tuning values
// fall back to their defaults, malformed layout values are configuration errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "common/environment.hpp"
#include "common/error.hpp"

namespace {

namespace env = sidecore::environment;

// Sets a variable for one test and puts back what was there.
class scoped_variable {
 public:
  scoped_variable(const char* name, const char* value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old, m_had = true;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~scoped_variable() {
    if (m_had)
      ::setenv(m_name, m_old.c_str(), 1);
    else
      ::unsetenv(m_name);
  }
  scoped_variable(const scoped_variable&) = delete;
  scoped_variable& operator=(const scoped_variable&) = delete;

 private:
  const char* m_name;
  std::string m_old;
  bool m_had = false;
};

TEST(environment_variables, strict_takes_the_usual_booleans_and_nothing_else) {
  for (const char* on : {"1", "true", "YES", "On"}) {
    scoped_variable v("SIDECORE_STRICT", on);
    EXPECT_TRUE(env::strict()) << on;
  }
  for (const char* off :
       {static_cast<const char*>(nullptr), "", "0", "false", "No", "OFF", "2", "strict"}) {
    scoped_variable v("SIDECORE_STRICT", off);
    EXPECT_FALSE(env::strict()) << (off ? off : "(unset)");
  }
}

TEST(environment_variables, tuning_values_out_of_range_give_the_default) {
  {
    scoped_variable v("SIDECORE_IDLE_POLL_US", "250");
    EXPECT_EQ(env::idle_poll_us(), 250);
  }
  for (const char* bad : {"-1", "1000001", "10us", "", "9999999999999999999999"}) {
    scoped_variable v("SIDECORE_IDLE_POLL_US", bad);
    EXPECT_EQ(env::idle_poll_us(), 1000) << bad;
  }
  {
    scoped_variable v("SIDECORE_STATS_INTERVAL", "0.5");
    EXPECT_DOUBLE_EQ(env::stats_interval_seconds(), 0.5);
  }
  for (const char* bad : {"-3", "nan", "30s", "1e10"}) {
    scoped_variable v("SIDECORE_STATS_INTERVAL", bad);
    EXPECT_DOUBLE_EQ(env::stats_interval_seconds(), 30.0) << bad;
  }
  {
    scoped_variable v("SIDECORE_COLLECTIVE_NOTICE", "0");
    EXPECT_DOUBLE_EQ(env::collective_notice_seconds(), 0.0);
  }
  for (const char* bad : {"-1", "nan", "60s", "1e10"}) {
    scoped_variable v("SIDECORE_COLLECTIVE_NOTICE", bad);
    EXPECT_DOUBLE_EQ(env::collective_notice_seconds(), 60.0) << bad;
  }
  scoped_variable unset("SIDECORE_COLLECTIVE_NOTICE", nullptr);
  EXPECT_DOUBLE_EQ(env::collective_notice_seconds(), 60.0);
}

TEST(environment_variables, write_times_is_on_when_set_and_not_zero) {
  {
    scoped_variable v("SIDECORE_WRITE_TIMES", "1");
    EXPECT_TRUE(env::write_times());
  }
  for (const char* off : {static_cast<const char*>(nullptr), "", "0"}) {
    scoped_variable v("SIDECORE_WRITE_TIMES", off);
    EXPECT_FALSE(env::write_times());
  }
}

TEST(environment_variables, report_is_default_off_or_a_path) {
  {
    scoped_variable v("SIDECORE_REPORT", nullptr);
    EXPECT_EQ(env::report().where, env::report_choice::kind::default_place);
  }
  for (const char* off : {"off", "NONE", "0", "false", "no"}) {
    scoped_variable v("SIDECORE_REPORT", off);
    EXPECT_EQ(env::report().where, env::report_choice::kind::off) << off;
  }
  scoped_variable v("SIDECORE_REPORT", "reports/");
  const env::report_choice choice = env::report();
  EXPECT_EQ(choice.where, env::report_choice::kind::path);
  EXPECT_EQ(choice.path, "reports/");
}

TEST(environment_variables, a_malformed_ranks_per_node_is_a_configuration_error) {
  {
    scoped_variable v("SIDECORE_RANKS_PER_NODE", nullptr);
    EXPECT_EQ(env::ranks_per_node(), 0);
  }
  scoped_variable v("SIDECORE_RANKS_PER_NODE", "two");
  EXPECT_THROW(env::ranks_per_node(), sidecore::config_error);
}

}  // namespace
