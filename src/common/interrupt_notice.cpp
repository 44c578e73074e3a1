// SIGINT/SIGTERM notice. The handler may only use async-signal-safe calls, so everything it
// prints is either prepared by install() in fixed buffers or an atomic read here; it formats
// with its own integer conversion and writes with write(2).
#include "common/interrupt_notice.hpp"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "common/hot_path.hpp"
#include "common/job_failure.hpp"

namespace sidecore::interrupt_notice {
namespace {

constexpr int handled[] = {SIGINT, SIGTERM};

struct saved_action {
  int signal = 0;
  struct sigaction previous {};
  bool replaced = false;
};
saved_action g_saved[2];

// Prepared by install(): read only by the handler, which runs after install() stored them
// (g_installed is released after the buffers are written).
char g_where[128];
char g_mode[64];
char g_outputs[1024];
bool g_speaks = false;
std::atomic<bool> g_installed{false};
std::atomic<bool> g_spoken{false};

std::atomic<int> g_iteration{-1};

void copy_bounded(char* to, std::size_t capacity, const std::string& from) {
  const std::size_t n = from.size() < capacity - 1 ? from.size() : capacity - 1;
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

// Appends to a fixed buffer, silently cutting at its end (a cut message beats none).
class line {
 public:
  line& text(const char* s) {
    while (s && *s && m_size < sizeof m_buffer) m_buffer[m_size++] = *s++;
    return *this;
  }
  line& number(long value) {
    char digits[24];
    int n = 0;
    const bool negative = value < 0;
    unsigned long magnitude =
        negative ? 0UL - static_cast<unsigned long>(value) : static_cast<unsigned long>(value);
    do {
      digits[n++] = static_cast<char>('0' + magnitude % 10);
      magnitude /= 10;
    } while (magnitude != 0);
    if (negative) text("-");
    while (n > 0 && m_size < sizeof m_buffer) m_buffer[m_size++] = digits[--n];
    return *this;
  }
  void write_to(int fd) const {
    std::size_t done = 0;
    while (done < m_size) {
      const ssize_t n = ::write(fd, m_buffer + done, m_size - done);
      if (n <= 0) return;
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  char m_buffer[2048];
  std::size_t m_size = 0;
};

void speak(int signal_number) {
  line out;
  out.text("[sidecore ")
      .text(g_where)
      .text("] the job is ending on ")
      .text(signal_number == SIGINT ? "SIGINT (Ctrl-C" : "SIGTERM (Ctrl-C on the launcher")
      .text(", the batch system, or MPI ending the job after another process failed); ")
      .text(g_mode)
      .text(": ");
  // What the job failure messages also say (job_failure.hpp: atomics, safe here).
  const char* doing = job_failure::current_doing();
  const char* call = job_failure::current_call();
  const int iteration = g_iteration.load(std::memory_order_relaxed);
  if (doing)
    out.text("this process was ").text(doing);
  else if (call)
    out.text("this process was in ").text(call);
  else
    out.text("the simulation was computing");
  if (iteration >= 0) out.text(" at iteration ").number(iteration);
  out.text(".\n[sidecore ").text(g_where).text("] Stored iterations are complete: ");
  if (g_outputs[0])
    out.text("in ").text(g_outputs).text(", every");
  else
    out.text("every");
  out.text(" file under its final name is whole. Iterations not yet stored");
  if (iteration >= 0) out.text(" (at most up to ").number(iteration).text(")");
  out.text(
      " have no file or a *.part file only, and 'sidecore inspect' and the read API count "
      "them as incomplete. No shared memory is left behind.\n");
  out.write_to(STDERR_FILENO);
}

// How long a process that does not speak waits before it ends. A launcher ends the whole job
// (SIGKILL) as soon as one process dies of a signal, as MPICH's does: without this pause, on a
// loaded node the speaking process could be killed before its handler ran, and the job would
// end without a word.
constexpr long silent_pause_ns = 500L * 1000 * 1000;

void on_signal(int signal_number) {
  const int saved_errno = errno;
  if (g_speaks) {
    if (!g_spoken.exchange(true)) speak(signal_number);
  } else {
    struct timespec pause {
      0, silent_pause_ns
    };
    while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
    }
  }
  // End the process as the signal would have without us (or run what was there before).
  for (const saved_action& s : g_saved)
    if (s.signal == signal_number && s.replaced) sigaction(signal_number, &s.previous, nullptr);
  errno = saved_errno;
  raise(signal_number);
}

}  // namespace

void install(bool speaks, const std::string& where, const std::string& mode,
             const std::string& outputs) noexcept {
  if (g_installed.load()) return;
  copy_bounded(g_where, sizeof g_where, where);
  copy_bounded(g_mode, sizeof g_mode, mode);
  copy_bounded(g_outputs, sizeof g_outputs, outputs);
  g_speaks = speaks;
  g_spoken.store(false);
  for (int i = 0; i < 2; ++i) {
    saved_action& s = g_saved[i];
    s.signal = handled[i];
    s.replaced = false;
    if (sigaction(s.signal, nullptr, &s.previous) != 0) continue;
    const bool left_default =
        !(s.previous.sa_flags & SA_SIGINFO) && s.previous.sa_handler == SIG_DFL;
    if (!left_default) continue;
    struct sigaction mine {};
    mine.sa_handler = on_signal;
    sigemptyset(&mine.sa_mask);
    mine.sa_flags = SA_RESTART;
    s.replaced = sigaction(s.signal, &mine, nullptr) == 0;
  }
  g_installed.store(true);
}

void uninstall() noexcept {
  if (!g_installed.exchange(false)) return;
  for (saved_action& s : g_saved) {
    if (!s.replaced) continue;
    struct sigaction current {};
    // Only give back what is still ours: the program may have installed its own since.
    if (sigaction(s.signal, nullptr, &current) == 0 && !(current.sa_flags & SA_SIGINFO) &&
        current.sa_handler == on_signal)
      sigaction(s.signal, &s.previous, nullptr);
    s.replaced = false;
  }
  g_iteration.store(-1, std::memory_order_relaxed);
}

SIDECORE_HOT_PATH void note_iteration(int iteration) noexcept {
  g_iteration.store(iteration, std::memory_order_relaxed);
}

}  // namespace sidecore::interrupt_notice
