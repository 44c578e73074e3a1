#include "common/agreement.hpp"

#include <exception>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/job_failure.hpp"
#include "common/log.hpp"
#include "common/mpi_handles.hpp"
#include "common/waiting.hpp"

namespace sidecore {

std::string broadcast(std::string text, int root, MPI_Comm comm) {
  unsigned long long length = text.size();
  check_mpi(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, root, comm), "MPI_Bcast");
  text.resize(length);
  if (length)
    check_mpi(MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, root, comm), "MPI_Bcast");
  return text;
}

namespace {

// Logs that this rank still waits for the others of comm, after `waited` seconds.
void note_still_waiting(MPI_Comm comm, double waited) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const char* call = job_failure::current_call();
  const std::string in = call ? call : "a collective step of Sidecore";
  log::warning(in, ": still waiting after ", static_cast<long>(waited), " s for the other ",
               size - 1, " rank(s) of the communicator to reach the same step. Every rank must ",
               "make the call; is one stopped, stuck, dead without the launcher noticing, or ",
               "still busy (a dedicated core storing its last iterations)? "
               "(SIDECORE_COLLECTIVE_NOTICE sets when this is said)");
}

// Completes request (a non-blocking collective call over comm) with naps between MPI_Test
// calls, saying so when it takes long. close_first: the first naps stay short
// (paces::collective_close), for the steps whose ranks mostly arrive together; otherwise they
// grow to a millisecond at once (a writer's thread that shares the simulation's core).
void complete_quietly(MPI_Request& request, MPI_Comm comm, bool close_first) {
  auto done = [&request] {
    int flag = 0;
    check_mpi(MPI_Test(&request, &flag, MPI_STATUS_IGNORE), "MPI_Test");
    return flag != 0;
  };
  if (close_first) {
    waiter close(paces::collective_close, paces::collective_close_ms / 1000.0);
    for (;;) {
      if (done()) return;
      if (!close.nap()) break;
    }
  }
  waiter wait(paces::collective_arrival);
  double notice = -1;  // seconds: read once the wait is no longer short
  while (!done()) {
    wait.nap();
    const double waited = wait.seconds();
    if (waited < 1.0) continue;
    if (notice < 0) notice = environment::collective_notice_seconds();
    if (notice > 0 && waited >= notice) {
      note_still_waiting(comm, waited);
      notice *= 2;
    }
  }
}

}  // namespace

void wait_for_everyone(MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm, &request), "MPI_Ibarrier");
  complete_quietly(request, comm, true);
}

void max_everywhere_quietly(int* values, int count, MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, values, count, MPI_INT, MPI_MAX, comm, &request),
            "MPI_Iallreduce");
  complete_quietly(request, comm, false);
}

void agree(MPI_Comm comm, int code, const std::string& message) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = code != DAMARIS_OK ? rank : size;
  int first = size;
  // Quietly: ranks may arrive far apart (a rank still starting, a writer still storing).
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm, &request), "MPI_Iallreduce");
  complete_quietly(request, comm, true);
  if (first == size) return;
  int failed_code = code;
  check_mpi(MPI_Bcast(&failed_code, 1, MPI_INT, first, comm), "MPI_Bcast");
  std::string text = broadcast(message, first, comm);
  if (rank != first) text = "rank " + std::to_string(first) + ": " + text;
  throw error(failed_code, text);
}

void agree_on(MPI_Comm comm, const std::function<void()>& step) {
  int code = DAMARIS_OK;
  std::string message;
  try {
    step();
  } catch (const error& e) {
    code = e.code();
    message = e.what();
  } catch (const std::exception& e) {
    code = DAMARIS_INIT_ERROR;
    message = e.what();
  }
  agree(comm, code, message);
}

}  // namespace sidecore
