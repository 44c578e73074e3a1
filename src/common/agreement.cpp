#include "common/agreement.hpp"

#include <exception>

#include "common/error.hpp"
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

// Completes request (a non-blocking collective call) with naps between MPI_Test calls.
void complete_quietly(MPI_Request& request) {
  waiter wait(paces::collective_arrival);
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    wait.nap();
  }
}

}  // namespace

void wait_for_everyone(MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm, &request), "MPI_Ibarrier");
  complete_quietly(request);
}

void max_everywhere_quietly(int* values, int count, MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, values, count, MPI_INT, MPI_MAX, comm, &request),
            "MPI_Iallreduce");
  complete_quietly(request);
}

void agree(MPI_Comm comm, int code, const std::string& message) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = code != DAMARIS_OK ? rank : size;
  int first = size;
  check_mpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
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
  wait_for_everyone(comm);
  agree(comm, code, message);
}

}  // namespace sidecore
