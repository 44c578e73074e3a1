// When a process of the job has died, the job cannot complete: the process that learns it says
// so once (who died, what this process was doing, what is stored) and ends the whole job, so
// that no survivor waits for the dead one in an MPI call (with a launcher that keeps the job
// alive, such as mpirun --enable-recovery, it would wait for ever).
#pragma once

#include <functional>
#include <string>

namespace sidecore::job_failure {

// The exit code the job ends with (MPI_Abort's; some launchers report their own instead).
inline constexpr int exit_code = 70;

// What this process is doing in Sidecore, for the messages of this file and of
// interrupt_notice (a literal completing "this process was ...", e.g. "serving its clients
// (damaris_start)"; nullptr: nothing beyond the call below). One relaxed atomic store.
// Returns what was noted before.
const char* note_doing(const char* what) noexcept;
// The API call this process is in (its name, a literal; nullptr: back in the simulation's own
// code). The C boundary notes every call. One relaxed atomic store; returns the previous one.
const char* note_call(const char* function) noexcept;
// What was noted; safe to read from a signal handler or another thread.
const char* current_doing() noexcept;
const char* current_call() noexcept;
// Notes `what` for the lifetime of the object, then restores what was noted before.
class doing {
 public:
  explicit doing(const char* what) noexcept : m_before(note_doing(what)) {}
  ~doing() { note_doing(m_before); }
  doing(const doing&) = delete;
  doing& operator=(const doing&) = delete;

 private:
  const char* m_before;
};
// Sets what the message says about this process and its output (its role, what its writer has
// stored, where); called from any thread when the job fails, so it must only read values that
// are safe to read concurrently (live counters, the immutable model). Empty: nothing said.
void describe_with(std::function<std::string()> describe);

// Names this job (the same text on every process of it, unique among jobs on a machine): of
// several processes of one machine that would end the job at once, only the first speaks.
void set_job_key(const std::string& key);

// Prints "<cause>", what this process was doing and what is stored, once per process, then
// MPI_Abort(MPI_COMM_WORLD, exit_code). Never returns. A second caller (another thread) waits
// for the first one's abort to end the process. Another process of the job on this machine
// that ends the job at the same moment does so without a message: one message per machine.
[[noreturn]] void end_job(const std::string& cause) noexcept;

}  // namespace sidecore::job_failure
