// `sidecore validate`: reads a configuration as damaris_initialize does and says what a job
// running it would do (roles, bytes per iteration, buffer headroom, files written).
#pragma once

namespace CLI {
class App;
}

namespace sidecore::cli {

// Adds the subcommand to app. Once app has parsed a command line naming it, status is the
// process exit status: 0 for a valid configuration (warnings included), 1 for a configuration
// error.
void add_validate(CLI::App& app, int& status);

}  // namespace sidecore::cli
