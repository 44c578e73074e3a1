// Notices that a process of the job has died. Every process learns at start-up the process id
// of every rank on its machine (one all-gather among the ranks that share its memory: no
// process holds a table of the whole job, 32 bytes a rank); a thread then checks, a few times per
// buffer timeout, that the next rank on the machine is still there, and ends the job with one
// message when it is not. Waits for a particular peer (a dedicated core, a dedicated node) ask here
// too before they wait again. Peers on other machines cannot be checked this way: their waits
// declare them dead when they owe a reply for longer than the timeout.
#pragma once

#include <mpi.h>
#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sidecore {

class peer_watch {
 public:
  // What a process is, for messages.
  enum class role : std::int32_t { client = 0, dedicated_core = 1, dedicated_node = 2 };
  enum class state { alive, dead, elsewhere };

  // Who a process is: enough to tell, later, whether it still runs.
  struct identity {
    std::uint64_t host = 0;  // machine identity (host name and boot)
    std::int64_t pid = 0;
    std::uint64_t started = 0;  // start time in clock ticks since boot: tells a reused pid
    std::int32_t role = 0;
    std::int32_t unused = 0;
  };
  // Process pid of this machine, as it is now (started = 0 when /proc does not say).
  static identity identity_of(std::int64_t pid, role its_role);
  // A rank of the job and who it is.
  struct peer {
    std::int32_t rank = 0;
    std::int32_t unused = 0;
    identity who;
  };

  // Collective over comm (every rank of the job). period_seconds: how often the watching thread
  // checks its neighbour (<= 0: no thread; checks on demand only).
  peer_watch(MPI_Comm comm, role mine, double period_seconds);
  // The same from an identity per rank already gathered (peers[rank] is this process; those of
  // other machines are left out); not collective.
  peer_watch(const std::vector<identity>& peers, int rank, double period_seconds);
  ~peer_watch();
  peer_watch(const peer_watch&) = delete;
  peer_watch& operator=(const peer_watch&) = delete;

  // Ends the watching thread (before the last collective of damaris_finalize: past it, peers
  // leave the job normally). Idempotent; also run by MPI_Finalize.
  void stop() noexcept;

  // Whether rank (of comm) still runs: alive, dead, or on another machine or not in the job
  // (unknown). Reads /proc: a few microseconds.
  state state_of(int rank) const noexcept;
  // The cheap check for hot paths (one system call): true once rank's process is gone.
  bool gone(int rank) const noexcept;
  // "rank 2 (pid 1234, a dedicated core)" for messages ("rank 9 (on another machine)").
  std::string name_of(int rank) const;
  // The cause end_job() is given when rank is dead.
  std::string death_of(int rank) const;

  // The watch of this process (nullptr outside damaris_initialize .. damaris_finalize).
  static peer_watch* current() noexcept;

 private:
  void run();
  // Keeps the peers of this process's machine, names the job, chooses the rank to watch.
  void set_up(std::vector<peer> candidates, int rank, const identity& first);
  // rank's identity when it runs on this machine, else nullptr.
  const identity* on_this_machine(int rank) const noexcept;

  std::vector<peer> m_machine;  // the ranks of this machine, by rank
  int m_watched = -1;           // the next rank on this machine, or -1 (alone here)
  double m_period;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stopping = false;
  std::thread m_thread;
};

}  // namespace sidecore
