// <architecture><schedule>: what the XML may say, and what the scheduler of one writer does
// with it (the limit on writers across processes is tested under mpirun, tests/c).
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "config/model.hpp"
#include "storing/scheduler.hpp"
#include "unit_support.hpp"

namespace {

namespace cfg = sidecore::config;
using sidecore::testing_support::contains;

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

std::string scheduler_error(const std::string& element) {
  try {
    cfg::parse_model(with_schedule(element), "bad.xml");
  } catch (const sidecore::config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for " << element;
  return {};
}

TEST(schedule_config, absent_means_drain) {
  const cfg::model m = cfg::parse_model(with_schedule(""), "good.xml");
  EXPECT_TRUE(m.arch.schedule.drains());
  EXPECT_EQ(m.arch.schedule.writers, 0);
  EXPECT_EQ(m.arch.schedule.bandwidth, 0.0);
  EXPECT_EQ(m.arch.schedule.line, 0);
}

TEST(schedule_config, rate_with_writers_bandwidth_and_units) {
  const cfg::model m = cfg::parse_model(
      with_schedule(
          "<schedule policy=\"Rate\" writers=\"2\" bandwidth=\"1.5 MiB/s\" trace=\"out/t\"/>"),
      "good.xml");
  EXPECT_TRUE(m.arch.schedule.uses(cfg::schedule_policy::rate));
  EXPECT_FALSE(m.arch.schedule.uses(cfg::schedule_policy::phase));
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
  std::string e = scheduler_error("<schedule policy=\"fast\"/>");
  EXPECT_TRUE(contains(e, "bad.xml:4: ")) << e;
  EXPECT_TRUE(contains(e, "'fast'") && contains(e, "drain") && contains(e, "rate")) << e;
  e = scheduler_error("<schedule policy=\"self slots\"/>");
  EXPECT_TRUE(contains(e, "stacks self")) << e;
  e = scheduler_error("<schedule policy=\"phase fast\"/>");
  EXPECT_TRUE(contains(e, "bad.xml:4: ") && contains(e, "'fast'") && contains(e, "stacked")) << e;
  e = scheduler_error("<schedule policy=\"drain,rate\" writers=\"1\"/>");
  EXPECT_TRUE(contains(e, "cannot be stacked")) << e;
  e = scheduler_error("<schedule policy=\" , \"/>");
  EXPECT_TRUE(contains(e, "'policy'")) << e;
  e = scheduler_error("<schedule policy=\"phase\" writers=\"2\"/>");
  EXPECT_TRUE(contains(e, "'writers'") && contains(e, "add rate")) << e;
  for (const char* writers : {"0", "-1", "two", "1.5", "99999999999"}) {
    e = scheduler_error(std::string("<schedule policy=\"rate\" writers=\"") + writers + "\"/>");
    EXPECT_TRUE(contains(e, "bad.xml:4: ") && contains(e, "'writers'") &&
                contains(e, "an integer from 1"))
        << e;
  }
  for (const char* bandwidth : {"0", "-5", "fast", "10 parsecs", "1e999", "0.5", "10MB/h"}) {
    e = scheduler_error(std::string("<schedule policy=\"rate\" bandwidth=\"") + bandwidth + "\"/>");
    EXPECT_TRUE(contains(e, "bad.xml:4: ") && contains(e, "'bandwidth'") &&
                contains(e, "bytes per second"))
        << bandwidth << ": " << e;
  }
  e = scheduler_error("<schedule policy=\"rate\"/>");
  EXPECT_TRUE(contains(e, "bad.xml:4: ") && contains(e, "without a limit")) << e;
  e = scheduler_error("<schedule writers=\"2\"/>");
  EXPECT_TRUE(contains(e, "bad.xml:4: ") && contains(e, "policy=\"drain\"")) << e;
  e = scheduler_error("<schedule policy=\"drain\" bandwidth=\"1M\"/>");
  EXPECT_TRUE(contains(e, "'bandwidth'") && contains(e, "policy=\"rate\"")) << e;
  e = scheduler_error("<schedule policy=\"rate\" writers=\"1\" trace=\" \"/>");
  EXPECT_TRUE(contains(e, "bad.xml:4: ") && contains(e, "trace")) << e;
  e = scheduler_error("<schedule policy=\"rate\" writers=\"1\"/><schedule/>");
  EXPECT_TRUE(contains(e, "second <schedule>")) << e;
}

TEST(schedule_config, policies_stack) {
  const struct {
    const char* text;
    unsigned policies;
  } cases[] = {
      {"phase", unsigned(cfg::schedule_policy::phase)},
      {"Slots", unsigned(cfg::schedule_policy::slots)},
      {"phase rate", unsigned(cfg::schedule_policy::phase) | unsigned(cfg::schedule_policy::rate)},
      {"slots,phase;rate", unsigned(cfg::schedule_policy::slots) |
                               unsigned(cfg::schedule_policy::phase) |
                               unsigned(cfg::schedule_policy::rate)},
      {"phase+phase", unsigned(cfg::schedule_policy::phase)},
      {"drain", 0u},
      {"ordered rate",
       unsigned(cfg::schedule_policy::ordered) | unsigned(cfg::schedule_policy::rate)},
  };
  for (const auto& c : cases) {
    const std::string limit =
        (c.policies & unsigned(cfg::schedule_policy::rate)) ? " writers=\"2\"" : "";
    const cfg::model m = cfg::parse_model(
        with_schedule(std::string("<schedule policy=\"") + c.text + "\"" + limit + "/>"),
        "good.xml");
    EXPECT_EQ(m.arch.schedule.policies, c.policies) << c.text;
  }
}

TEST(schedule_config, order_of_ordered) {
  cfg::model m = cfg::parse_model(with_schedule("<schedule policy=\"ordered\"/>"), "good.xml");
  EXPECT_EQ(m.arch.schedule.order, cfg::schedule_order::iteration);
  m = cfg::parse_model(with_schedule("<schedule policy=\"ordered\" order=\"Writer\"/>"),
                       "good.xml");
  EXPECT_EQ(m.arch.schedule.order, cfg::schedule_order::writer);
  std::string e = scheduler_error("<schedule policy=\"ordered\" order=\"source\"/>");
  EXPECT_TRUE(contains(e, "bad.xml:4: ") && contains(e, "'order'") && contains(e, "iteration") &&
              contains(e, "writer"))
      << e;
  e = scheduler_error("<schedule policy=\"phase\" order=\"writer\"/>");
  EXPECT_TRUE(contains(e, "without the ordered policy")) << e;
}

// One writer, or writers without a communicator spanning them: nothing to order, no wait.
TEST(schedule_ordered, alone_or_uncoordinated_does_not_wait) {
  using steady = std::chrono::steady_clock;
  cfg::model m = cfg::parse_model(with_schedule("<schedule policy=\"ordered\"/>"), "good.xml");
  m.arch.wait_timeout_seconds = 5;
  for (int count : {1, 3}) {
    sidecore::storing::scheduler s(m, MPI_COMM_SELF, 0, count, true);
    EXPECT_FALSE(s.orders_writers());
    const auto start = steady::now();
    s.before_store(0, 10, start);
    s.after_store();
    s.before_store(1, 10, start);
    s.after_store();
    s.finish();
    EXPECT_LT(std::chrono::duration<double>(steady::now() - start).count(), 1.0);
  }
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
  double completed, ready, begin, end;
  int turn;
  double slot_begin, slot_end;
  int phase;
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
    if (line.rfind("iteration", 0) == 0) {
      EXPECT_EQ(line,
                "iteration,bytes,completed,ready,begin,end,turn,slot_begin,slot_end,phase,held,"
                "phase_seen_from,phase_seen_to");
      continue;
    }
    interval r{};
    char comma = 0;
    std::istringstream fields(line);
    fields >> r.iteration >> comma >> r.bytes >> comma >> r.completed >> comma >> r.ready >>
        comma >> r.begin >> comma >> r.end >> comma >> r.turn >> comma >> r.slot_begin >> comma >>
        r.slot_end >> comma >> r.phase;
    rows.push_back(r);
  }
  return rows;
}

using steady = std::chrono::steady_clock;

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
    sidecore::storing::scheduler s(m, MPI_COMM_SELF, 0, 1, true);
    EXPECT_FALSE(s.limits_writers());
    for (int i = 0; i < 8; ++i) {
      s.before_store(i, bytes, steady::now());
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
    sidecore::storing::scheduler s(m, MPI_COMM_SELF, 3, 4, true);
    for (int i = 0; i < 3; ++i) {
      s.before_store(i, 1ull << 40, steady::now());
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
  sidecore::storing::scheduler s(m, MPI_COMM_SELF, 0, 4, true);
  EXPECT_FALSE(s.limits_writers());
  s.before_store(0, 10, steady::now());
  s.after_store();
  EXPECT_EQ(s.counters().turns_forced, 0u);
}

// One writer with writers="1" of one: nothing to limit.
TEST_F(scheduler_test, as_many_turns_as_writers_needs_no_window) {
  cfg::model m =
      cfg::parse_model(with_schedule("<schedule policy=\"rate\" writers=\"1\"/>"), "good.xml");
  sidecore::storing::scheduler s(m, MPI_COMM_SELF, 0, 1, true);
  EXPECT_FALSE(s.limits_writers());
}

// slots: writer w of W begins w/W of the measured iteration time after the iteration
// completed; writer 0 at once; a writer ready after its slot has passed goes at once.
TEST_F(scheduler_test, slots_divide_the_measured_iteration_time) {
  std::filesystem::create_directories(m_directory);
  cfg::model m = cfg::parse_model(
      with_schedule("<schedule policy=\"slots\" trace=\"" + m_directory + "trace\"/>"), "good.xml");
  {
    sidecore::storing::scheduler first(m, MPI_COMM_SELF, 0, 2, true);
    sidecore::storing::scheduler second(m, MPI_COMM_SELF, 1, 2, true);
    for (int i = 0; i < 4; ++i) {
      const auto completed = steady::now();
      first.before_store(i, 10, completed);
      first.after_store();
      second.before_store(i, 10, completed);
      second.after_store();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_GT(second.counters().seconds_waiting_slot, 0.1);
    // Ready long after its slot: no wait.
    const double waited = second.counters().seconds_waiting_slot;
    second.before_store(4, 10, steady::now() - std::chrono::seconds(1));
    second.after_store();
    EXPECT_EQ(second.counters().slots_missed, 1u);
    EXPECT_EQ(second.counters().seconds_waiting_slot, waited);
  }
  double created = 0;
  const std::vector<interval> zero = read_trace(m_directory + "trace.0.csv", created);
  const std::vector<interval> one = read_trace(m_directory + "trace.1.csv", created);
  ASSERT_EQ(zero.size(), 4u);
  ASSERT_EQ(one.size(), 5u);
  // Nothing measured before the first: stored at once, no slot.
  EXPECT_EQ(one[0].slot_end, 0.0);
  for (int i = 1; i < 4; ++i) {
    // Iterations complete 0.1 s apart, plus writer 1's wait for its slot (half a period), plus
    // whatever a loaded machine adds to the sleeps: writer 1's slot is half the mean of the
    // periods measured so far, as completed.
    const double width = one[i].slot_end - one[i].slot_begin;
    double periods = 0;
    for (int j = 1; j <= i; ++j) periods += one[j].completed - one[j - 1].completed;
    EXPECT_NEAR(width, periods / i / 2, 1e-4) << i;
    EXPECT_GT(width, 0.04) << i;
    EXPECT_NEAR(one[i].slot_begin - one[i].completed, width, 1e-5) << i;
    EXPECT_GE(one[i].begin + 1e-6, one[i].slot_begin) << i;
    // Begins in its slot; a loaded machine may wake the writer up to 50 ms late.
    EXPECT_LT(one[i].begin, one[i].slot_end + 0.05) << i;
    EXPECT_NEAR(zero[i].slot_begin, zero[i].completed, 1e-5) << i;
    EXPECT_LE(zero[i].begin, zero[i].slot_end) << i;
    EXPECT_EQ(one[i].phase, -1);
  }
}

// phase: a store begins only while the client computes; a client stopped or waiting for its
// writer lets it begin; every wait ends at the buffer's timeout.
TEST_F(scheduler_test, phase_waits_for_the_clients_to_compute) {
  namespace tr = sidecore::protocol;
  std::filesystem::create_directories(m_directory);
  cfg::model m = cfg::parse_model(
      with_schedule("<schedule policy=\"phase\" trace=\"" + m_directory + "trace\"/>"), "good.xml");
  // A timeout well above the 80 ms wait below, so that a loaded machine's late wake-up is not
  // taken for the timeout.
  m.arch.wait_timeout_seconds = 1.0;
  tr::client_phase a, b;
  {
    sidecore::storing::scheduler s(m, MPI_COMM_SELF, 0, 1, true);
    s.watch_phases({&a, &b});
    // Unmarked clients: at once (with a warning).
    s.before_store(0, 10, steady::now());
    s.after_store();
    // a computes, b does not yet: the store waits until b computes too.
    a.enter(tr::client_phase::computing);
    b.enter(tr::client_phase::other);
    std::thread later([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(80));
      b.enter(tr::client_phase::computing);
    });
    const auto start = steady::now();
    s.before_store(1, 10, start);
    const double waited = std::chrono::duration<double>(steady::now() - start).count();
    s.after_store();
    later.join();
    EXPECT_GE(waited, 0.07);
    EXPECT_LT(waited, 0.95);
    // b waits for the writer (damaris_sync): no wait.
    b.enter(tr::client_phase::other);
    {
      const tr::blocked_on_writer waiting(b);
      s.before_store(2, 10, steady::now());
      s.after_store();
    }
    EXPECT_EQ(b.current.load(), tr::client_phase::other);
    // b stopped: no wait.
    b.enter(tr::client_phase::stopped);
    s.before_store(3, 10, steady::now());
    s.after_store();
    // a never computes again: the deadline.
    a.enter(tr::client_phase::other);
    s.before_store(4, 10, steady::now());
    s.after_store();
    EXPECT_EQ(s.counters().phases_forced, 0u);  // b stopped lets it go
    b.enter(tr::client_phase::other);
    s.before_store(5, 10, steady::now());
    s.after_store();
    EXPECT_EQ(s.counters().phases_forced, 1u);
  }
  double created = 0;
  const std::vector<interval> rows = read_trace(m_directory + "trace.0.csv", created);
  ASSERT_EQ(rows.size(), 6u);
  const int expected[] = {0, 1, 4, 3, 3, 9};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(rows[i].phase, expected[i]) << i;
  EXPECT_GE(rows[5].begin - rows[5].ready, 0.99);
}

// phase, once stores are timed: a store that would outlast what is left of the clients'
// compute phase (judged from their previous one) waits for the next phase.
TEST_F(scheduler_test, phase_begins_a_store_only_when_it_fits) {
  namespace tr = sidecore::protocol;
  cfg::model m = cfg::parse_model(with_schedule("<schedule policy=\"phase\"/>"), "good.xml");
  tr::client_phase a;
  sidecore::storing::scheduler s(m, MPI_COMM_SELF, 0, 1, true);
  s.watch_phases({&a});
  // A store of 1000 bytes that takes 80 ms: 80 us a byte.
  a.enter(tr::client_phase::computing);
  s.before_store(0, 1000, steady::now());
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  s.after_store();
  // Compute phases of 150 ms; 140 ms into one, an 80 ms store does not fit. Each way of being
  // wrong needs one sleep to overrun by 70 ms more than the others on a loaded machine: the
  // phase (then the store would fit) or the first store (then it would seem longer than any
  // phase, and begin in any).
  a.enter(tr::client_phase::other);
  a.enter(tr::client_phase::computing);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  a.enter(tr::client_phase::other);
  a.enter(tr::client_phase::computing);
  std::this_thread::sleep_for(std::chrono::milliseconds(140));
  std::thread next([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    a.enter(tr::client_phase::other);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    a.enter(tr::client_phase::computing);
  });
  const auto start = steady::now();
  s.before_store(1, 1000, start);
  const double waited = std::chrono::duration<double>(steady::now() - start).count();
  s.after_store();
  next.join();
  EXPECT_GE(waited, 0.075);  // until the next phase began
  // A store longer than any phase begins in any.
  s.before_store(2, 100000, steady::now());
  s.after_store();
  EXPECT_LT(s.counters().seconds_waiting_phase, waited + 0.05);
}

// Without the clients' phases (synchronous mode, dedicated nodes) phase is not applied.
TEST_F(scheduler_test, phase_without_clients_is_not_applied) {
  cfg::model m = cfg::parse_model(with_schedule("<schedule policy=\"phase\"/>"), "good.xml");
  m.arch.wait_timeout_seconds = 5;
  sidecore::storing::scheduler s(m, MPI_COMM_SELF, 0, 1, true);
  const auto start = steady::now();
  s.before_store(0, 10, start);
  s.after_store();
  EXPECT_LT(std::chrono::duration<double>(steady::now() - start).count(), 1.0);
}

// self: at once until something is measured; slots sized by the period and the store time;
// at once while the buffer is more than half full (until under a quarter); phase once the
// clients mark phases.
TEST_F(scheduler_test, self_chooses_from_what_it_measures) {
  namespace tr = sidecore::protocol;
  std::filesystem::create_directories(m_directory);
  cfg::model m = cfg::parse_model(
      with_schedule("<schedule policy=\"self\" trace=\"" + m_directory + "trace\"/>"), "good.xml");
  const std::uint64_t buffer = m.arch.buffer_size;  // 1 MiB
  tr::client_phase client;
  {
    sidecore::storing::scheduler s(m, MPI_COMM_SELF, 2, 4, true);
    s.watch_phases({&client});
    const auto base = steady::now();
    const std::uint64_t held[] = {1000,        1000, 1000, 1000, buffer * 9 / 10, buffer * 3 / 10,
                                  buffer / 10, 1000};
    for (int i = 0; i < 8; ++i) {
      if (i == 7) {  // the client marks a phase from now on
        client.enter(tr::client_phase::other);
        client.enter(tr::client_phase::computing);
      }
      const auto completed = base + std::chrono::milliseconds(100 * i);
      std::this_thread::sleep_until(completed);
      s.before_store(i, 10, completed, held[i]);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      s.after_store();
    }
    // nothing measured, slots, at once (pressed), slots, phase
    EXPECT_EQ(s.counters().self_changes, 5u);
  }
  double created = 0;
  const std::vector<interval> rows = read_trace(m_directory + "trace.2.csv", created);
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows[0].slot_end, 0.0);  // nothing measured yet
  for (int i : {2, 3, 6}) {
    // Stores of 10 ms every 100 ms: 4 slots of 25 ms, and writer 2 begins 50 ms in. The slots
    // come from the measured store time, which a loaded machine stretches (3 slots of 33 ms
    // were seen): writer 2 takes slot 2 modulo their count, whatever their width.
    const double width = rows[i].slot_end - rows[i].slot_begin;
    ASSERT_GT(width, 0.0) << i;
    const int slots = static_cast<int>(std::lround(0.1 / width));  // of the 100 ms period
    EXPECT_NEAR(width * slots, 0.1, 1e-3) << i;
    EXPECT_GE(slots, 2) << i;
    EXPECT_NEAR(rows[i].slot_begin - rows[i].completed, (2 % slots) * width, 1e-3) << i;
    EXPECT_GE(rows[i].begin + 1e-6, rows[i].slot_begin) << i;
  }
  for (int i : {4, 5}) {
    EXPECT_EQ(rows[i].slot_end, 0.0) << i;  // the buffer is filling: at once
    // Not at writer 2's slot, 50 ms in: a late wake-up of the loop on a loaded machine may
    // add tens of ms, so the bound sits just below the slot.
    EXPECT_LT(rows[i].begin - rows[i].completed, 0.045) << i;
  }
  EXPECT_EQ(rows[7].phase, 1);
  EXPECT_EQ(rows[7].slot_end, 0.0);
}

}  // namespace
