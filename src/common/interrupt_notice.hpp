// What the job says when SIGINT or SIGTERM ends it (Ctrl-C on mpirun, a batch system's time
// limit): one process of the job prints what Sidecore was doing, that the iterations already
// stored are complete and where they are; then the signal ends the process as it would have.
#pragma once

#include <string>

namespace sidecore::interrupt_notice {

// Installs the handlers for SIGINT and SIGTERM wherever the program left their default action
// (a program's own handler, or an ignored signal, is left alone). Only the process with
// `speaks` true prints (world rank 0: once per job, as every process receives the signal); the
// others wait half a second before ending, so that the launcher does not kill the speaking
// process before it has spoken.
// `where` names the process ("rank 0 client"), `mode` the deployment ("dedicated cores"),
// `outputs` the directories the stores write to (may be empty).
void install(bool speaks, const std::string& where, const std::string& mode,
             const std::string& outputs) noexcept;
// Gives back the actions install() replaced (damaris_finalize).
void uninstall() noexcept;

// The iteration the simulation is computing (the client's, after each end of iteration).
void note_iteration(int iteration) noexcept;

}  // namespace sidecore::interrupt_notice
