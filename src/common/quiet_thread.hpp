// Background threads that take no signal: the application's handlers (and Sidecore's interrupt
// notice) keep running on the application's own threads, as before Sidecore started any.
#pragma once

#include <signal.h>

#include <thread>
#include <utility>

namespace sidecore {

// Starts `body` on a new thread with every signal blocked (the mask is inherited at creation,
// so no signal can reach it before it runs).
template <typename Body>
std::thread start_quiet_thread(Body body) {
  sigset_t all, previous;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  std::thread t(std::move(body));
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return t;
}

}  // namespace sidecore
