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

// Collective over comm: returns once every rank has called it, as MPI_Barrier, but waits with
// naps (paces::collective_arrival) instead of spinning in MPI's progress loop, so that ranks
// that arrive early leave the processor to those still working (oversubscribed nodes, a
// writer thread sharing the core). For the points where ranks arrive far apart; one
// collective call's latency is added (up to a nap per round of the barrier). A rank that waits
// long says so (SIDECORE_COLLECTIVE_NOTICE), naming the call it is in.
void wait_for_everyone(MPI_Comm comm);

// MPI_Allreduce in place of count ints with MPI_MAX over comm, completed quietly: for writers
// agreeing on an iteration while one of them still stores or runs a script. Its naps grow to a
// millisecond at once (a writer's thread may share the simulation's core); wait_for_everyone
// and agree first nap at most 50 us for 20 ms (paces::collective_close).
void max_everywhere_quietly(int* values, int count, MPI_Comm comm);

// Collective over comm, waiting for the others as wait_for_everyone does. code is this rank's
// outcome (DAMARIS_OK when it succeeded) and message what went wrong. Throws error(code of the
// lowest failed rank, its message, prefixed with "rank R: " on the other ranks) on every rank when
// any rank failed.
void agree(MPI_Comm comm, int code, const std::string& message);

// Collective over comm: runs step, catching what it throws (a sidecore error keeps its code,
// another exception is DAMARIS_INIT_ERROR), then agrees.
void agree_on(MPI_Comm comm, const std::function<void()>& step);

}  // namespace sidecore
