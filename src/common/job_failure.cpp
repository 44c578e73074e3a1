// The one place where Sidecore ends the job: a peer is known dead, and any further MPI call
// with it could wait for ever.
#include "common/job_failure.hpp"

#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "common/log.hpp"

namespace sidecore::job_failure {
namespace {
std::atomic<const char*> g_doing{nullptr};
std::atomic<bool> g_ending{false};
std::mutex g_describe_mutex;
std::function<std::string()> g_describe;
}  // namespace

const char* note_doing(const char* what) noexcept {
  return g_doing.exchange(what, std::memory_order_relaxed);
}

void describe_with(std::function<std::string()> describe) {
  std::lock_guard<std::mutex> lock(g_describe_mutex);
  g_describe = std::move(describe);
}

void end_job(const std::string& cause) noexcept {
  if (g_ending.exchange(true)) {
    // Another thread of this process is ending the job: its MPI_Abort ends this one too.
    for (;;) ::pause();
  }
  std::string message;
  try {
    message = "the job cannot complete: " + cause + ". ";
    const char* doing = g_doing.load(std::memory_order_relaxed);
    message += doing ? std::string("This process was ") + doing + "."
                     : std::string("This process was in the simulation's own code.");
    std::lock_guard<std::mutex> lock(g_describe_mutex);
    if (g_describe) {
      const std::string state = g_describe();
      if (!state.empty()) message += " " + state;
    }
    message += " Ending the job (MPI_Abort).";
    log::error(message);
  } catch (...) {
    // Out of memory while composing: the cause alone, written without allocating more.
    std::fputs("[sidecore] the job cannot complete: a process of the job died; ending it\n",
               stderr);
  }
  std::fflush(stderr);
  // Open MPI's MPI_Abort ends the process with exit(): the destructors of Sidecore's objects
  // would then wait for the dead peer (and the launcher, killing the process meanwhile, would
  // lose the status). Registered last, this handler runs first and leaves at once.
  std::atexit([] {
    std::fflush(nullptr);
    ::_exit(exit_code);
  });
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  // MPI_Abort does not return; should an MPI ignore it, the process must not go on.
  ::_exit(exit_code);
}

}  // namespace sidecore::job_failure
