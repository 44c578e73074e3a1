// Event scopes on a server: core runs each signal, group runs once per iteration when every
// client of the server (distinct sources, not signals) sent it, bcast runs everywhere; the end
// of the run waits for broadcasts a bounded time and names the servers whose did not arrive.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config/model.hpp"
#include "storing/actions.hpp"
#include "storing/event_dispatcher.hpp"
#include "unit_support.hpp"

namespace sidecore {
namespace {

using testing_support::start_mpi;

// What the bound functions saw: (event, source, iteration), in order.
struct call {
  std::string event;
  int source;
  int iteration;
  bool operator==(const call& other) const {
    return event == other.event && source == other.source && iteration == other.iteration;
  }
};
std::vector<call>& calls() {
  static std::vector<call> seen;
  return seen;
}
void record(const char* name, int32_t source, int32_t iteration, const char*) {
  calls().push_back({name, source, iteration});
}

// A model whose events (name, scope) run bound functions; each test uses names of its own,
// since bindings last as long as the process.
config::model model_with(const std::vector<std::pair<std::string, config::scope>>& events,
                         double timeout = 300) {
  config::model model;
  model.file = "events.xml";
  model.arch.wait_timeout_seconds = timeout;
  int line = 10;
  for (const auto& [name, scope] : events) {
    config::event e;
    e.name = name;
    e.action = "not_a_symbol_anywhere";
    e.scope = scope;
    e.line = line++;
    model.events.push_back(e);
    storing::action_registry::instance().bind(name, record);
  }
  return model;
}

class event_dispatcher_test : public ::testing::Test {
 protected:
  void SetUp() override {
    start_mpi();
    calls().clear();
  }
};

TEST_F(event_dispatcher_test, core_scope_runs_every_signal) {
  const config::model model = model_with({{"core_each", config::scope::core}});
  storing::event_dispatcher events(model, MPI_COMM_SELF, 2);
  events.signal(0, 1, 4);
  events.signal(0, 1, 4);
  events.signal(0, 0, 5);
  EXPECT_EQ(calls(),
            (std::vector<call>{{"core_each", 1, 4}, {"core_each", 1, 4}, {"core_each", 0, 5}}));
}

TEST_F(event_dispatcher_test, group_scope_counts_clients_not_signals) {
  const config::model model = model_with({{"group_distinct", config::scope::group}});
  storing::event_dispatcher events(model, MPI_COMM_SELF, 3);
  // Client 0 signals twice and client 1 once: two clients of three, whatever the count.
  events.signal(0, 0, 0);
  events.signal(0, 0, 0);
  events.signal(0, 1, 0);
  EXPECT_TRUE(calls().empty()) << "the group ran before every client signalled";
  EXPECT_EQ(events.open_groups(), 1u);
  events.signal(0, 2, 0);  // the third client completes the group: runs once, as client 2
  EXPECT_EQ(calls(), (std::vector<call>{{"group_distinct", 2, 0}}));
  EXPECT_EQ(events.open_groups(), 0u);
  // A late repeat of the same iteration does not run it again.
  events.signal(0, 0, 0);
  events.signal(0, 1, 0);
  events.signal(0, 2, 0);
  EXPECT_EQ(calls().size(), 1u);
}

TEST_F(event_dispatcher_test, group_scope_runs_once_per_iteration_and_event) {
  const config::model model =
      model_with({{"group_a", config::scope::group}, {"group_b", config::scope::group}});
  storing::event_dispatcher events(model, MPI_COMM_SELF, 2);
  // Iterations and events are counted apart: client 0 at iteration 1 and client 1 at
  // iteration 2 complete nothing, nor do clients 0 and 1 on two different events.
  events.signal(0, 0, 1);
  events.signal(0, 1, 2);
  events.signal(1, 1, 1);
  EXPECT_TRUE(calls().empty());
  events.signal(0, 1, 1);
  events.signal(0, 0, 2);
  events.signal(1, 0, 1);
  EXPECT_EQ(calls(), (std::vector<call>{{"group_a", 1, 1}, {"group_a", 0, 2}, {"group_b", 0, 1}}));
}

TEST_F(event_dispatcher_test, groups_never_completed_are_forgotten_after_a_while) {
  const config::model model = model_with({{"group_stale", config::scope::group}});
  storing::event_dispatcher events(model, MPI_COMM_SELF, 2);
  for (int it = 0; it < 10; ++it) events.signal(0, 0, it);  // client 1 never signals
  EXPECT_EQ(events.open_groups(), 10u);
  events.signal(0, 0, 9 + storing::event_dispatcher::group_memory);
  // Iterations more than group_memory behind the newest are gone (with a warning).
  EXPECT_EQ(events.open_groups(), 2u);
  EXPECT_TRUE(calls().empty());
}

TEST_F(event_dispatcher_test, bcast_alone_runs_here_and_finish_returns_at_once) {
  const config::model model = model_with({{"bcast_alone", config::scope::bcast}});
  storing::event_dispatcher events(model, MPI_COMM_SELF, 1);
  EXPECT_TRUE(events.has_bcast());
  events.signal(0, 0, 3);
  EXPECT_EQ(calls(), (std::vector<call>{{"bcast_alone", 0, 3}}));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(events.finish(), "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST_F(event_dispatcher_test, finish_waits_at_most_the_buffer_timeout_or_a_default) {
  config::model model;
  model.arch.wait_timeout_seconds = 7;
  EXPECT_EQ(storing::event_dispatcher::finish_timeout_seconds(model), 7.0);
  model.arch.wait_timeout_seconds = 0;  // "wait for ever" for buffer space: not here
  EXPECT_EQ(storing::event_dispatcher::finish_timeout_seconds(model),
            storing::event_dispatcher::default_finish_timeout_seconds);
}

// Two servers (run under mpirun -np 2, see CMakeLists.txt; skipped otherwise). Server 0
// broadcasts twice; server 1 loses one of them (taken off the wire before the dispatcher sees
// it): its finish gives up after the model's timeout and names server 0, 1 of 2 received.
TEST(event_dispatcher_two_servers, finish_is_bounded_and_names_the_missing_sender) {
  start_mpi();
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (size != 2) GTEST_SKIP() << "needs 2 MPI processes";
  calls().clear();
  const config::model model = model_with({{"bcast_lost", config::scope::bcast}}, 1.0);
  storing::event_dispatcher events(model, MPI_COMM_WORLD, 1);
  if (rank == 0) {
    events.signal(0, 0, 0);
    events.signal(0, 0, 1);
  } else {
    std::int32_t payload[3];
    MPI_Recv(payload, 3, MPI_INT32_T, 0, storing::event_dispatcher::bcast_tag, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    EXPECT_EQ(payload[2], 0);  // the first broadcast is lost
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string report = events.finish();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (rank == 0) {
    EXPECT_EQ(report, "");
    EXPECT_EQ(calls().size(), 2u);
  } else {
    EXPECT_NE(report.find("server 0 (1 of 2)"), std::string::npos) << report;
    EXPECT_NE(report.find("within 1 s"), std::string::npos) << report;
    EXPECT_EQ(calls(), (std::vector<call>{{"bcast_lost", 0, 1}}));  // the one that arrived
    EXPECT_GE(seconds, 0.9);
    EXPECT_LT(seconds, 10.0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
}  // namespace sidecore
