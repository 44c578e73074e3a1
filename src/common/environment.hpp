// Every environment variable Sidecore reads, each parsed here and nowhere else (the library and
// the `sidecore` command agree on every rule); docs/environment.md lists them. A malformed value
// that only tunes behaviour is warned about and its default used; one that would lay the job out
// differently (SIDECORE_RANKS_PER_NODE) is a configuration error.
#pragma once

#include <string>

namespace sidecore::environment {

// SIDECORE_STRICT: 1, true, yes, on (any case) make every configuration warning an error;
// 0, false, no, off or unset leave them warnings; anything else warns and counts as off.
bool strict();

// SIDECORE_RANKS_PER_NODE: ranks per virtual node (1 to 1048576), 0 when unset or empty (the
// nodes are the machines MPI reports). Throws config_error when malformed.
int ranks_per_node();

// SIDECORE_IDLE_POLL_US: the longest nap of an idle dedicated core, 0 to 1000000 microseconds
// (0: sleep until woken); default 1000.
long idle_poll_us();

// SIDECORE_STATS_INTERVAL: seconds between two log lines of live counters (0: none); default 30.
double stats_interval_seconds();

// SIDECORE_COLLECTIVE_NOTICE: seconds a rank waits for the others in one of Sidecore's
// collective steps before it logs that it still waits (then again at each doubling; 0: never);
// default 60.
double collective_notice_seconds();

// SIDECORE_WRITE_TIMES: set and not "0", every API call of a client is timed (sidecore_stats).
bool write_times();

// SIDECORE_REPORT: where the run report goes.
struct report_choice {
  enum class kind { default_place, off, path } where = kind::default_place;
  std::string path;  // kind::path: a file, or a directory when it ends with '/' or is one
};
report_choice report();

// The batch system's id of this job (SLURM_JOB_ID, PBS_JOBID, LSB_JOBID, FLUX_JOB_ID,
// COBALT_JOBID: the first set), kept to letters, digits, '.', '-' and '_' for a file name; ""
// outside a batch job.
std::string batch_job_id();

// What the batch system says of the job's tasks, for `sidecore validate` run inside a job
// (salloc, sbatch): Slurm's SLURM_NTASKS (else SLURM_NPROCS) and SLURM_NTASKS_PER_NODE (else the
// largest count of SLURM_TASKS_PER_NODE, "4(x2),3" giving 4). 0 where unknown or malformed (a
// malformed value is said in `problems`); each *_from names the variable the number came from.
struct batch_layout {
  int ranks = 0;
  int ranks_per_node = 0;
  std::string ranks_from, per_node_from;
  // SLURM_TASKS_PER_NODE has a node other than the last with fewer tasks than the largest
  // count: nodes filled in order, the last one partly, do not show the job as it is.
  bool uneven = false;
  std::string problems;  // the malformed values, "" when none
};
batch_layout batch_job_layout();

// Variables taken as they are (a path or a program): the value, "" when unset.
// SIDECORE_PYSCRIPT_RUNNER, SIDECORE_PYTHON, SIDECORE_PYTHON_LIBRARY, VIRTUAL_ENV.
std::string text(const char* name);

// SIDECORE_LOG_LEVEL is the one variable read elsewhere: by common/log.cpp, which this module
// logs through.

}  // namespace sidecore::environment
