// The one wait primitive (common/waiting.hpp): deadlines end a wait and never come early,
// free looks do not sleep, a move makes the next look free again, restarts move the deadline.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/waiting.hpp"

using namespace sidecore;
using std::chrono::microseconds;

namespace {

constexpr pace quick{3, microseconds(100), microseconds(400)};

TEST(waiting, a_deadline_ends_the_wait_and_never_before_it_passed) {
  // How many naps fit in the 20 ms depends on the machine's load (a yield alone may last
  // longer than that on a busy processor): when the wait ends is checked, and that every look
  // after the free ones sleeps its length or to the deadline (lower bounds, which load only
  // lengthens).
  const auto deadline = waiter::clock::now() + std::chrono::milliseconds(20);
  waiter w(quick, 0.02);
  int looks = 0;
  for (;;) {
    const auto before = waiter::clock::now();
    if (!w.nap()) break;
    if (++looks > quick.free_looks && deadline - before > quick.first)
      EXPECT_GE(waiter::clock::now() - before, quick.first) << "look " << looks;
  }
  EXPECT_GE(w.seconds(), 0.02);
  EXPECT_TRUE(w.expired());
  EXPECT_FALSE(w.nap());  // stays over
}

TEST(waiting, free_looks_come_first_and_a_move_gives_them_back) {
  waiter w(quick);
  for (int i = 0; i < quick.free_looks; ++i) {
    EXPECT_FALSE(w.sleeping());
    EXPECT_TRUE(w.nap());
  }
  EXPECT_TRUE(w.sleeping());
  EXPECT_EQ(w.looks(), quick.free_looks);
  EXPECT_TRUE(w.nap());  // a real nap: no deadline, so never over
  w.moved();
  EXPECT_FALSE(w.sleeping());
  EXPECT_EQ(w.looks(), 0);
}

TEST(waiting, without_a_deadline_it_never_expires) {
  waiter w(quick, 0);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(w.nap());
  EXPECT_FALSE(w.expired());
}

TEST(waiting, restart_moves_the_deadline_and_restart_until_may_end_it_at_once) {
  waiter w(quick, 0.005);
  while (w.nap()) {
  }
  w.restart(0.01);
  EXPECT_FALSE(w.expired());
  EXPECT_TRUE(w.nap());
  w.restart_until(waiter::clock::now() - microseconds(1));
  EXPECT_TRUE(w.expired());
  EXPECT_FALSE(w.nap());
  waiter past(quick, waiter::clock::now() - microseconds(1));
  EXPECT_FALSE(past.nap());
}

TEST(waiting, a_wait_sees_what_another_thread_changes) {
  std::atomic<bool> flag{false};
  std::thread other([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    flag = true;
  });
  waiter w(paces::shared_counter, 60);
  while (!flag && w.nap()) {
  }
  other.join();
  EXPECT_TRUE(flag);
  EXPECT_FALSE(w.expired());
}

TEST(waiting, every_pace_of_the_table_naps_at_most_its_longest) {
  for (const pace& p :
       {paces::core_idle, paces::node_idle, paces::send_completion, paces::core_heartbeat,
        paces::event_arrival, paces::shared_counter, paces::client_phase, paces::arena_users}) {
    EXPECT_GT(p.first.count(), 0);
    EXPECT_LE(p.first, p.longest);
    EXPECT_LE(p.longest, microseconds(10000));  // a wait notices a change within 10 ms
    EXPECT_GE(p.free_looks, 0);
  }
}

}  // namespace
