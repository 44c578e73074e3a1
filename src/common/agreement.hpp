// Collective error agreement: a step that may fail on some ranks only must not leave the others
// going on alone into the next collective call. Each rank runs the step, then all learn whether
// any failed, and all throw the same error (the lowest failed rank's) if one did.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>

namespace sidecore {

// Collective over comm: root's text, on every rank.
std::string broadcast(std::string text, int root, MPI_Comm comm);

// Collective over comm. code is this rank's outcome (DAMARIS_OK when it succeeded) and message
// what went wrong. Throws error(code of the lowest failed rank, its message, prefixed with
// "rank R: " on the other ranks) on every rank when any rank failed.
void agree(MPI_Comm comm, int code, const std::string& message);

// Collective over comm: runs step, catching what it throws (a sidecore error keeps its code,
// another exception is DAMARIS_INIT_ERROR), then agrees as above.
void agree_on(MPI_Comm comm, const std::function<void()>& step);

}  // namespace sidecore
