// How Sidecore's background threads leave the processors to the application's threads. On
// Linux a scheduling policy belongs to a thread (sched_setscheduler with pid 0 changes the
// calling thread only). Where the system refuses a change, the thread runs as before.
#pragma once

#include <sched.h>

namespace sidecore {

// For a thread that works beside the application on its processors (the background I/O
// thread): it keeps its share of the processor but never preempts the thread that woke it
// (SCHED_BATCH). Woken by damaris_end_iteration, it would otherwise take the processor from the
// simulation inside that call.
inline void give_wake_ups_to_the_application() noexcept {
  sched_param none{};
  (void)::sched_setscheduler(0, SCHED_BATCH, &none);
}

// For a thread whose work only helps ahead of time (mapping pages before they are written): it
// runs only when a processor would otherwise be idle (SCHED_IDLE).
inline void run_only_when_idle() noexcept {
  sched_param none{};
  (void)::sched_setscheduler(0, SCHED_IDLE, &none);
}

}  // namespace sidecore
