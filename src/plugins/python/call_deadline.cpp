// Python.h before any standard header, as CPython asks.
#include "plugins/python/python_support.hpp"

#include "plugins/python/call_deadline.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace sidecore::pyscript {

call_deadline::call_deadline(double time_limit, const std::string& who, int iteration) {
  if (!(time_limit > 0)) return;
  m_state = std::make_shared<state>();
  m_state->thread = PyThread_get_thread_ident();
  const double limit = time_limit;
  const double grace = std::clamp(limit, 1.0, 10.0);
  std::string what =
      who + (iteration >= 0 ? ", iteration " + std::to_string(iteration) : std::string(", finish"));
  m_watcher = std::thread([st = m_state, limit, grace, what = std::move(what)] {
    std::unique_lock<std::mutex> lock(st->mutex);
    const auto start = std::chrono::steady_clock::now();
    const auto seconds = [](double x) {
      return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(x));
    };
    if (st->done_cv.wait_until(lock, start + seconds(limit), [&] { return st->done; })) return;
    st->expired = true;
    // The GIL is taken by another thread, which may wait while the script holds it in C
    // code; it raises only if the call is still running when it gets it.
    std::thread([st] {
      PyGILState_STATE g = PyGILState_Ensure();
      {
        std::lock_guard<std::mutex> inner(st->mutex);
        if (!st->done) PyThreadState_SetAsyncExc(st->thread, PyExc_TimeoutError);
      }
      PyGILState_Release(g);
    }).detach();
    if (st->done_cv.wait_until(lock, start + seconds(limit + grace), [&] { return st->done; }))
      return;
    std::fprintf(stderr,
                 "[sidecore] %s: the script has run for %.0f s, beyond its time-limit of %g s, "
                 "and did not stop at the TimeoutError raised in it (it is blocked outside "
                 "Python: a sleep, a C library or a collective); the run cannot finish, so the "
                 "job is ended\n",
                 what.c_str(), limit + grace, limit);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 70);
    std::abort();  // MPI_Abort does not return; if it did, the job must still end
  });
}

bool call_deadline::finish() {
  if (!m_state || m_finished) return m_state && m_state->expired;
  m_finished = true;
  {
    std::lock_guard<std::mutex> lock(m_state->mutex);
    m_state->done = true;
  }
  m_state->done_cv.notify_all();
  m_watcher.join();
  if (m_state->expired) PyThreadState_SetAsyncExc(m_state->thread, nullptr);
  return m_state->expired;
}

}  // namespace sidecore::pyscript
