// `sidecore inspect`: what an HDF5 store wrote, read back from the files alone (iterations,
// completeness, variables, blocks, compression ratio, sizes on disk).
#pragma once

namespace CLI {
class App;
}

namespace sidecore::cli {

// Adds the subcommand to app. Once app has parsed a command line naming it, status is the
// process exit status: 0 when output was found and read (incomplete iterations included: they
// are reported), 1 when there is no Sidecore output at the path or a file cannot be read.
void add_inspect(CLI::App& app, int& status);

}  // namespace sidecore::cli
