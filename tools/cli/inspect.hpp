// `sidecore inspect`: what an HDF5 store wrote, read back from the files alone (iterations,
// completeness, variables, blocks, compression ratio, sizes on disk).
#pragma once

namespace sidecore::cli {

// argv[0] is "inspect". Returns the process exit status: 0 when output was found and read
// (incomplete iterations included: they are reported), 1 when there is no Sidecore output at
// the path or a file cannot be read, 2 for a usage error.
int run_inspect(int argc, char** argv);

}  // namespace sidecore::cli
