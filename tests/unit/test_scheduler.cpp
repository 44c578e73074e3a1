// <architecture><schedule>: what the XML may say, and what the scheduler of one writer does
// with it (the limit on writers across processes is tested under mpirun, tests/c).
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "config/model.hpp"
#include "server/scheduler.hpp"
#include "unit_support.hpp"

namespace {

namespace cfg = sidecore::config;

// A configuration whose line 4 is the given <schedule> element.
std::string with_schedule(const std::string& element) {
  return "<simulation name=\"s\">\n"
         "<architecture>\n"
         "  <buffer name=\"b\" size=\"1048576\"/>\n"
         "  " +
         element +
         "\n"
         "</architecture>\n"
         "<data><layout name=\"l\" type=\"int\" dimensions=\"4\"/>\n"
         "<variable name=\"v\" layout=\"l\"/></data>\n"
         "</simulation>\n";
}

std::string error_of(const std::string& element) {
  try {
    cfg::parse_model(with_schedule(element), "bad.xml");
  } catch (const sidecore::config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for " << element;
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(schedule_config, absent_means_drain) {
  const cfg::model m = cfg::parse_model(with_schedule(""), "good.xml");
  EXPECT_EQ(m.arch.schedule.policy, cfg::schedule_policy::drain);
  EXPECT_EQ(m.arch.schedule.writers, 0);
  EXPECT_EQ(m.arch.schedule.bandwidth, 0.0);
  EXPECT_EQ(m.arch.schedule.line, 0);
}

TEST(schedule_config, rate_with_writers_bandwidth_and_units) {
  const cfg::model m = cfg::parse_model(
      with_schedule(
          "<schedule policy=\"Rate\" writers=\"2\" bandwidth=\"1.5 MiB/s\" trace=\"out/t\"/>"),
      "good.xml");
  EXPECT_EQ(m.arch.schedule.policy, cfg::schedule_policy::rate);
  EXPECT_EQ(m.arch.schedule.writers, 2);
  EXPECT_DOUBLE_EQ(m.arch.schedule.bandwidth, 1.5 * 1024 * 1024);
  EXPECT_EQ(m.arch.schedule.trace, "out/t");
  EXPECT_EQ(m.arch.schedule.line, 4);
  const struct {
    const char* text;
    double bytes;
  } cases[] = {{"1000", 1000},
               {"2.5e6", 2.5e6},
               {"512k", 512 * 1024.0},
               {"64MB", 64 * 1048576.0},
               {"1 GiB/s", 1073741824.0},
               {"3B/s", 3},
               {"2T", 2 * 1099511627776.0}};
  for (const auto& c : cases) {
    const cfg::model r = cfg::parse_model(
        with_schedule(std::string("<schedule policy=\"rate\" bandwidth=\"") + c.text + "\"/>"),
        "good.xml");
    EXPECT_DOUBLE_EQ(r.arch.schedule.bandwidth, c.bytes) << c.text;
    EXPECT_EQ(r.arch.schedule.writers, 0);
  }
}

TEST(schedule_config, bad_values_name_file_line_and_valid_values) {
  std::string e = error_of("<schedule policy=\"fast\"/>");
  EXPECT_TRUE(contains(e, "bad.xml:4: ")) << e;
  EXPECT_TRUE(contains(e, "'fast'") && contains(e, "drain") && contains(e, "rate")) << e;
  e = error_of("<schedule policy=\"slots\"/>");
  EXPECT_TRUE(contains(e, "not available yet")) << e;
  for (const char* writers : {"0", "-1", "two", "1.5", "99999999999"}) {
    e = error_of(std::string("<schedule policy=\"rate\" writers=\"") + writers + "\"/>");
    EXPECT_TRUE(contains(e, "bad.xml:4: ") && contains(e, "'writers'") &&
                contains(e, "an integer from 1"))
        << e;
  }
  for (const char* bandwidth : {"0", "-5", "fast", "10 parsecs", "1e999", "0.5", "10MB/h"}) {
    e = error_of(std::string("<schedule policy=\"rate\" bandwidth=\"") + bandwidth + "\"/>");
    EXPECT_TRUE(contains(e, "bad.xml:4: ") && contains(e, "'bandwidth'") &&
                contains(e, "bytes per second"))
        << bandwidth << ": " << e;
  }
  e = error_of("<schedule policy=\"rate\"/>");
  EXPECT_TRUE(contains(e, "bad.xml:4: ") && contains(e, "without a limit")) << e;
  e = error_of("<schedule writers=\"2\"/>");
  EXPECT_TRUE(contains(e, "bad.xml:4: ") && contains(e, "policy=\"drain\"")) << e;
  e = error_of("<schedule policy=\"drain\" bandwidth=\"1M\"/>");
  EXPECT_TRUE(contains(e, "'bandwidth'") && contains(e, "policy=\"rate\"")) << e;
  e = error_of("<schedule policy=\"rate\" writers=\"1\" trace=\" \"/>");
  EXPECT_TRUE(contains(e, "bad.xml:4: ") && contains(e, "trace")) << e;
  e = error_of("<schedule policy=\"rate\" writers=\"1\"/><schedule/>");
  EXPECT_TRUE(contains(e, "second <schedule>")) << e;
}

TEST(schedule_config, unknown_attribute_warns) {
  const cfg::model m = cfg::parse_model(
      with_schedule("<schedule policy=\"rate\" writers=\"1\" writer=\"2\"/>"), "w.xml");
  ASSERT_FALSE(m.warnings.empty());
  EXPECT_TRUE(contains(m.warnings.front(), "w.xml:4:") && contains(m.warnings.front(), "'writer'"));
}

class scheduler_test : public sidecore::testing_support::output_directory_test {
 protected:
  scheduler_test() : output_directory_test("scheduler") {}
};

struct interval {
  int iteration;
  std::uint64_t bytes;
  double ready, begin, end;
  int turn;
};

// The rows of a trace file, and its creation time from the header.
std::vector<interval> read_trace(const std::string& path, double& created) {
  std::ifstream in(path);
  std::string line;
  std::vector<interval> rows;
  created = -1;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) {
      created = std::stod(line.substr(line.find("created=") + 8));
      continue;
    }
    if (line.rfind("iteration", 0) == 0) continue;
    interval r{};
    char comma = 0;
    std::istringstream fields(line);
    fields >> r.iteration >> comma >> r.bytes >> comma >> r.ready >> comma >> r.begin >> comma >>
        r.end >> comma >> r.turn;
    rows.push_back(r);
  }
  return rows;
}

// The bytes of the stores begun by any time never exceed bandwidth * (time - creation).
TEST_F(scheduler_test, bandwidth_keeps_each_writer_under_the_cap) {
  std::filesystem::create_directories(m_directory);
  cfg::model m =
      cfg::parse_model(with_schedule("<schedule policy=\"rate\" bandwidth=\"4MB\" trace=\"" +
                                     m_directory + "trace\"/>"),
                       "good.xml");
  const double rate = 4.0 * 1048576;
  const std::uint64_t bytes = 1 << 20;  // each store: a quarter of a second's worth
  {
    sidecore::server::scheduler s(m, MPI_COMM_SELF, 0, 1, true);
    EXPECT_FALSE(s.limits_writers());
    for (int i = 0; i < 8; ++i) {
      s.before_store(i, bytes);
      s.after_store();
    }
    EXPECT_EQ(s.counters().stores, 8u);
    EXPECT_GT(s.counters().seconds_throttled, 0.0);
  }
  double created = 0;
  const std::vector<interval> rows = read_trace(m_directory + "trace.0.csv", created);
  ASSERT_EQ(rows.size(), 8u);
  ASSERT_GT(created, 0);
  std::uint64_t begun = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].iteration, static_cast<int>(i));
    EXPECT_EQ(rows[i].bytes, bytes);
    begun += rows[i].bytes;
    // The trace keeps microseconds: a microsecond of slack.
    EXPECT_LE(static_cast<double>(begun), rate * (rows[i].begin - created + 1e-6))
        << "store " << i << " began too early";
    EXPECT_LE(rows[i].ready, rows[i].begin);
    EXPECT_LE(rows[i].begin, rows[i].end);
  }
}

// drain never waits, and a store that exceeds the bucket still runs (after its wait).
TEST_F(scheduler_test, drain_records_without_waiting) {
  std::filesystem::create_directories(m_directory);
  cfg::model m =
      cfg::parse_model(with_schedule("<schedule trace=\"" + m_directory + "trace\"/>"), "good.xml");
  {
    sidecore::server::scheduler s(m, MPI_COMM_SELF, 3, 4, true);
    for (int i = 0; i < 3; ++i) {
      s.before_store(i, 1ull << 40);
      s.after_store();
    }
    EXPECT_EQ(s.counters().seconds_throttled, 0.0);
    EXPECT_EQ(s.counters().seconds_waiting_turn, 0.0);
  }
  double created = 0;
  EXPECT_EQ(read_trace(m_directory + "trace.3.csv", created).size(), 3u);
}

// A limit on writers needs a communicator spanning them; with MPI_COMM_SELF for one of
// several writers (I/O threads without MPI_THREAD_MULTIPLE) it is not applied, nor does it
// block.
TEST_F(scheduler_test, writers_without_a_shared_communicator_is_not_applied) {
  cfg::model m =
      cfg::parse_model(with_schedule("<schedule policy=\"rate\" writers=\"1\"/>"), "good.xml");
  sidecore::server::scheduler s(m, MPI_COMM_SELF, 0, 4, true);
  EXPECT_FALSE(s.limits_writers());
  s.before_store(0, 10);
  s.after_store();
  EXPECT_EQ(s.counters().turns_forced, 0u);
}

// One writer with writers="1" of one: nothing to limit.
TEST_F(scheduler_test, as_many_turns_as_writers_needs_no_window) {
  cfg::model m =
      cfg::parse_model(with_schedule("<schedule policy=\"rate\" writers=\"1\"/>"), "good.xml");
  sidecore::server::scheduler s(m, MPI_COMM_SELF, 0, 1, true);
  EXPECT_FALSE(s.limits_writers());
}

}  // namespace
