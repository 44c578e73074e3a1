// The one place where Sidecore ends the job: a peer is known dead, and any further MPI call
// with it could wait for ever.
#include "common/job_failure.hpp"

#include <mpi.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "common/hot_path.hpp"
#include "common/log.hpp"

namespace sidecore::job_failure {
namespace {
std::atomic<const char*> g_doing{nullptr};
std::atomic<const char*> g_call{nullptr};
std::atomic<bool> g_ending{false};
std::mutex g_describe_mutex;
std::function<std::string()> g_describe;
char g_job_key[96] = {};

// The right to speak for this job on this machine: an abstract Unix socket name, which only
// one process can bind and which disappears with it (nothing is left behind). True when this
// process got it, or when it cannot tell (no key, no socket): better two messages than none.
bool claim_the_message() noexcept {
  if (!g_job_key[0]) return true;
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return true;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const int n = std::snprintf(address.sun_path + 1, sizeof address.sun_path - 1,
                              "sidecore-%s-ending", g_job_key);
  const socklen_t length =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + static_cast<std::size_t>(n));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), length) == 0) return true;  // kept open
  const bool taken = errno == EADDRINUSE;
  ::close(fd);
  return !taken;
}
}  // namespace

void set_job_key(const std::string& key) {
  std::snprintf(g_job_key, sizeof g_job_key, "%s", key.c_str());
}

const char* note_doing(const char* what) noexcept {
  return g_doing.exchange(what, std::memory_order_relaxed);
}

SIDECORE_HOT_PATH const char* note_call(const char* function) noexcept {
  // Every API call passes here twice: a plain load and store, no read-modify-write (only
  // messages read it, and a stale value there is harmless).
  const char* before = g_call.load(std::memory_order_relaxed);
  g_call.store(function, std::memory_order_relaxed);
  return before;
}

const char* current_doing() noexcept { return g_doing.load(std::memory_order_relaxed); }
const char* current_call() noexcept { return g_call.load(std::memory_order_relaxed); }

void describe_with(std::function<std::string()> describe) {
  std::lock_guard<std::mutex> lock(g_describe_mutex);
  g_describe = std::move(describe);
}

void end_job(const std::string& cause) noexcept {
  if (g_ending.exchange(true)) {
    // Another thread of this process is ending the job: its MPI_Abort ends this one too.
    for (;;) ::pause();
  }
  // A process that MPI is taking down after another one ended the job sees its peers vanish
  // first: it waits a moment, in which the launcher usually ends it, rather than report their
  // end as a new failure.
  const timespec grace{1, 500000000L};
  ::nanosleep(&grace, nullptr);
  if (claim_the_message()) {
    try {
      std::string message = "the job cannot complete: " + cause + ". ";
      const char* doing = current_doing();
      const char* call = current_call();
      message += doing  ? std::string("This process was ") + doing + "."
                 : call ? std::string("This process was in ") + call + "."
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
  }
  std::fflush(stderr);
  // Open MPI's MPI_Abort ends the process with exit(): the destructors of Sidecore's objects
  // would then wait for the dead peer (and the launcher, killing the process meanwhile, would
  // lose the status). Registered last, this handler runs first and leaves without them.
  std::atexit([] {
    std::fflush(nullptr);
    ::_exit(exit_code);
  });
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  // MPI_Abort does not return; should an MPI ignore it, the process must not go on.
  ::_exit(exit_code);
}

}  // namespace sidecore::job_failure
