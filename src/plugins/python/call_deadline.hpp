// A time limit on one call of a <pyscript> (its time-limit attribute).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace sidecore::pyscript {

// One call of a script held to its time-limit. When the call outlives it, a TimeoutError is
// raised inside the script: a Python loop stops there, and the failure is reported as any
// other. A call still running a grace period later is blocked outside Python (a sleep, a C
// library, a collective); the run could then never finish, so the job is ended with a message.
// Built and destroyed on the script's thread with the GIL held.
class call_deadline {
 public:
  // Watches the call for time_limit seconds (none when not > 0); who and iteration (-1: the
  // script's finish) name the call in the message that ends the job.
  call_deadline(double time_limit, const std::string& who, int iteration);
  ~call_deadline() { finish(); }
  call_deadline(const call_deadline&) = delete;
  call_deadline& operator=(const call_deadline&) = delete;
  // Ends the watch (the call returned); returns whether the time limit had passed. A
  // TimeoutError raised as the call returned would strike the next Python code run here: it is
  // withdrawn.
  bool finish();

 private:
  struct state {
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
    bool expired = false;
    unsigned long thread = 0;
  };
  std::shared_ptr<state> m_state;
  std::thread m_watcher;
  bool m_finished = false;
};

}  // namespace sidecore::pyscript
