// `sidecore validate`: reads a configuration as damaris_initialize does and says what a job
// running it would do (roles, bytes per iteration, buffer headroom, files written).
#pragma once

namespace sidecore::cli {

// argv[0] is "validate". Returns the process exit status: 0 for a valid configuration
// (warnings included), 1 for a configuration error, 2 for a usage error.
int run_validate(int argc, char** argv);

}  // namespace sidecore::cli
