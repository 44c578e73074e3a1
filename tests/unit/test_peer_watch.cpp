// peer_watch: whether another process of the job still runs, told from the operating system
// with real child processes (alive, exited but not reaped, reaped, a pid reused by another
// process, a process of another machine), and the watching thread, which ends the job with a
// message naming the dead rank.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common/peer_watch.hpp"
#include "unit_support.hpp"

namespace sidecore {
namespace {

using testing_support::spawn;
using testing_support::start_mpi;
using testing_support::wait_for;

// A child that waits until its pipe is closed, then exits.
struct child_process {
  pid_t pid = -1;
  int keep = -1;  // write end: closing it ends the child
  child_process() {
    std::array<int, 2> fds{};
    if (::pipe(fds.data()) != 0) return;
    pid = spawn([&] {
      ::close(fds[1]);
      char byte = 0;
      while (::read(fds[0], &byte, 1) > 0) {
      }
      return 0;
    });
    ::close(fds[0]);
    keep = fds[1];
  }
  // Ends the child without reaping it (it stays a zombie until wait_for).
  void end() {
    if (keep >= 0) ::close(keep);
    keep = -1;
    // Until the kernel has made it a zombie: waitid with WNOWAIT leaves it unreaped.
    siginfo_t info{};
    ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT);
  }
  ~child_process() {
    if (keep >= 0) ::close(keep);
    if (pid > 0) ::waitpid(pid, nullptr, 0);
  }
};

std::vector<peer_watch::identity> self_and(const peer_watch::identity& other) {
  return {peer_watch::identity_of(::getpid(), peer_watch::role::client), other};
}

TEST(peer_watch, a_job_of_one_process_sees_itself_alive_and_other_ranks_as_unknown) {
  start_mpi();
  peer_watch watch(MPI_COMM_WORLD, peer_watch::role::dedicated_core, 0);
  EXPECT_EQ(peer_watch::current(), &watch);
  EXPECT_EQ(watch.state_of(0), peer_watch::state::alive);
  EXPECT_FALSE(watch.gone(0));
  // A rank the job does not have is not declared dead.
  EXPECT_EQ(watch.state_of(7), peer_watch::state::elsewhere);
  EXPECT_EQ(watch.state_of(-1), peer_watch::state::elsewhere);
  EXPECT_FALSE(watch.gone(7));
  EXPECT_EQ(watch.name_of(0), "rank 0 (pid " + std::to_string(::getpid()) + ", a dedicated core)");
}

TEST(peer_watch, a_process_is_alive_until_it_exits_then_dead_as_a_zombie_and_once_reaped) {
  start_mpi();
  child_process child;
  ASSERT_GT(child.pid, 0);
  peer_watch watch(self_and(peer_watch::identity_of(child.pid, peer_watch::role::dedicated_node)),
                   0, 0);
  EXPECT_EQ(watch.state_of(1), peer_watch::state::alive);
  EXPECT_FALSE(watch.gone(1));

  child.end();
  // Exited, not reaped: kill() still finds the pid, /proc says Z.
  EXPECT_EQ(watch.state_of(1), peer_watch::state::dead);
  EXPECT_FALSE(watch.gone(1));  // the cheap check sees only a pid that no longer exists

  EXPECT_EQ(wait_for(child.pid), 0);
  const pid_t reaped = child.pid;
  child.pid = -1;
  EXPECT_EQ(watch.state_of(1), peer_watch::state::dead);
  EXPECT_TRUE(watch.gone(1));
  EXPECT_EQ(watch.death_of(1), "rank 1 (pid " + std::to_string(reaped) +
                                   ", a dedicated node's server) has died (killed, crashed, or "
                                   "ended without damaris_finalize)");
}

TEST(peer_watch, a_pid_now_held_by_another_process_is_a_dead_peer) {
  start_mpi();
  // The peer's identity as it was, with another start time: the pid runs, but not the peer.
  peer_watch::identity before = peer_watch::identity_of(::getppid(), peer_watch::role::client);
  ASSERT_NE(before.started, 0u) << "no start time in /proc/<pid>/stat";
  peer_watch::identity reused = before;
  reused.started = before.started + 1;
  peer_watch watch(self_and(reused), 0, 0);
  EXPECT_EQ(watch.state_of(1), peer_watch::state::dead);
  EXPECT_FALSE(watch.gone(1));
  peer_watch same(self_and(before), 0, 0);
  EXPECT_EQ(same.state_of(1), peer_watch::state::alive);
}

TEST(peer_watch, a_process_of_another_machine_is_never_declared_dead_from_here) {
  start_mpi();
  peer_watch::identity remote = peer_watch::identity_of(999999999, peer_watch::role::client);
  remote.host ^= 1;  // another host name or boot
  peer_watch watch(self_and(remote), 0, 0);
  EXPECT_EQ(watch.state_of(1), peer_watch::state::elsewhere);
  EXPECT_FALSE(watch.gone(1));
  // Its identity is not kept (a process holds its machine's ranks only).
  EXPECT_EQ(watch.name_of(1), "rank 1 (on another machine)");
}

TEST(peer_watch, the_rank_watched_is_the_next_one_of_this_machine) {
  start_mpi();
  child_process child;
  ASSERT_GT(child.pid, 0);
  peer_watch::identity remote = peer_watch::identity_of(999999999, peer_watch::role::client);
  remote.host ^= 1;
  // Rank 1 runs elsewhere, rank 2 here (unit.peer_watch.ends_the_job checks that the watching
  // thread watches rank 2).
  std::vector<peer_watch::identity> peers = {
      peer_watch::identity_of(::getpid(), peer_watch::role::client), remote,
      peer_watch::identity_of(child.pid, peer_watch::role::dedicated_core)};
  peer_watch watch(peers, 0, 0);
  EXPECT_EQ(watch.state_of(2), peer_watch::state::alive);
  EXPECT_EQ(watch.state_of(1), peer_watch::state::elsewhere);
  EXPECT_EQ(watch.name_of(2), "rank 2 (pid " + std::to_string(child.pid) + ", a dedicated core)");
}

TEST(peer_watch, stop_ends_the_watching_thread_at_once_and_a_live_peer_ends_nothing) {
  start_mpi();
  child_process child;
  ASSERT_GT(child.pid, 0);
  const auto start = std::chrono::steady_clock::now();
  {
    // Period 10 ms: checked about 20 times against a live child.
    peer_watch watch(self_and(peer_watch::identity_of(child.pid, peer_watch::role::client)), 0,
                     0.01);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    watch.stop();
    watch.stop();  // idempotent
  }
  EXPECT_EQ(peer_watch::current(), nullptr);
  // A period of 60 s would still end at once: stop() wakes the thread.
  {
    peer_watch watch(self_and(peer_watch::identity_of(child.pid, peer_watch::role::client)), 0, 60);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_LT(testing_support::seconds_since(start), 30.0);
}

// Ends this process (MPI_Abort): run alone by ctest as unit.peer_watch.ends_the_job, which
// checks the exit code and the message (an MPI_Abort in a forked child would wait for ever for
// the launcher of its parent). Skipped elsewhere.
TEST(peer_watch_ends_the_job, the_watching_thread_ends_the_job_naming_the_dead_rank) {
  if (!std::getenv("SIDECORE_TEST_END_JOB")) GTEST_SKIP() << "run by unit.peer_watch.ends_the_job";
  start_mpi();
  child_process peer;
  ASSERT_GT(peer.pid, 0);
  // Between this process and its dead peer, a rank of another machine: the thread watches the
  // next rank of this machine, rank 2, not rank 1 (whose death it could not see).
  peer_watch::identity remote = peer_watch::identity_of(999999999, peer_watch::role::client);
  remote.host ^= 1;
  peer_watch watch({peer_watch::identity_of(::getpid(), peer_watch::role::client), remote,
                    peer_watch::identity_of(peer.pid, peer_watch::role::dedicated_core)},
                   0, 0.01);
  peer.end();
  // The thread notices within its period and never returns from end_job.
  std::this_thread::sleep_for(std::chrono::seconds(20));
  ADD_FAILURE() << "the job was not ended 20 s after its peer died";
}

}  // namespace
}  // namespace sidecore
