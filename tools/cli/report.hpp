// `sidecore report`: pictures and an HTML summary of a JSON run report, drawn by the Python
// script tools/report/sidecore_report.py, which this command runs.
#pragma once

namespace sidecore::cli {

// argv[0] is "report". Replaces the process with python3 running the script, the other
// arguments passed on; the script's exit status is the command's (0 drawn, 1 not a run report
// or nothing to draw, 2 usage error). Returns 1 without running anything when the script or
// the interpreter cannot be found, after saying which.
int run_report(int argc, char** argv);

}  // namespace sidecore::cli
