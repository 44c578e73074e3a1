// `sidecore report`: pictures and an HTML summary of a JSON run report, drawn by the Python
// script tools/report/sidecore_report.py, which this command runs.
#pragma once

namespace CLI {
class App;
}

namespace sidecore::cli {

// Adds the subcommand to app; every argument after its name goes to the script. Once app has
// parsed a command line naming it, the process is replaced with python3 running the script
// (whose exit status is the command's: 0 drawn, 1 not a run report or nothing to draw, 2
// usage error); status is 1 when the script or the interpreter cannot be found, after saying
// which.
void add_report(CLI::App& app, int& status);

}  // namespace sidecore::cli
