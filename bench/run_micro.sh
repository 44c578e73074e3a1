#!/usr/bin/env bash
# Runs the write-path micro-benchmark (sidecore_micro_write) under mpirun: the client-visible
# cost of each write path per deployment mode, and a client that never pauses against a small
# buffer and an HDF5 store. Writes bench/results/micro.md and micro.json. Builds nothing.
#
# usage: bench/run_micro.sh BUILD_DIR [--reps N] [--out DIR] [--quick] [--no-hdf5]
#                           [--no-modes] [--no-stream] [--stream-dir DIR] [--server-memory BYTES]
#                           [--versus BASELINE_BUILD_DIR [--versus-out DIR]]
#   BUILD_DIR   a build of this project with the target sidecore_micro_write
#   --reps N    separate runs (processes) per measurement; medians are taken over them (5)
#   --out DIR   where micro.md and micro.json go (bench/results)
#   --versus B  also run the build B (another commit, say), run by run: every measurement
#               runs both binaries back to back, the order swapped from one to the next; B's
#               micro.md/json go to --versus-out (OUT/versus), and OUT/versus.md sets both
#               side by side (bench/compare_micro.py: medians and ranges over runs)
#   --quick     few sizes and iterations: checks the harness, not the numbers
#   --no-hdf5   skip the runs with the HDF5 store (the stream runs included)
#   --no-modes  skip the thread and dedicated-node runs
#   --no-stream skip the client-that-never-pauses runs
#   --no-experiments skip the thread, node and synchronous runs with malloc tuned to keep
#               freed memory (they show what the fresh private copy of each write costs)
#   --stream-dir DIR      local-disk directory for the stream runs' HDF5 files (TMPDIR or /tmp)
#   --server-memory BYTES active buffering limit of the stream runs that use it (256 MiB)
# Environment: MPIRUN (mpirun), MPIRUN_FLAGS (--oversubscribe), TMPDIR (for HDF5 output),
# PYTHON (a python3 with h5py, to check the stream runs' files: BUILD_DIR/venv/bin/python, as
# bench/proxy/run.sh makes it, if it exists, else python3).
set -euo pipefail
# Benchmarks leave no run report behind (docs/observability.md).
export SIDECORE_REPORT=${SIDECORE_REPORT:-off}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command_line="bench/run_micro.sh $*"

usage() { sed -n '6,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }

[ $# -ge 1 ] || usage
case "$1" in -h|--help) usage 0 ;; esac
build=$(cd "$1" && pwd)
shift
reps=5
out="$here/results"
quick=0
with_hdf5=1
with_modes=1
with_stream=1
with_experiments=1
stream_dir=${TMPDIR:-/tmp}
server_memory=$((256 << 20))
versus=""
versus_out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --no-hdf5) with_hdf5=0; with_stream=0; shift ;;
    --no-modes) with_modes=0; shift ;;
    --no-stream) with_stream=0; shift ;;
    --no-experiments) with_experiments=0; shift ;;
    --stream-dir) stream_dir=$2; shift 2 ;;
    --server-memory) server_memory=$2; shift 2 ;;
    --versus) versus=$(cd "$2" && pwd); shift 2 ;;
    --versus-out) versus_out=$2; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "run_micro.sh: unknown option '$1'" >&2; usage ;;
  esac
done

# The builds measured: BUILD_DIR, then the --versus baseline if any; each has its own raw
# results and its own output directory.
builds=("$build")
outs=("$out")
if [ -n "$versus" ]; then
  builds+=("$versus")
  outs+=("${versus_out:-$out/versus}")
fi
for b in "${builds[@]}"; do
  if [ ! -x "$b/bench/sidecore_micro_write" ]; then
    echo "run_micro.sh: $b/bench/sidecore_micro_write not found; build it first:" >&2
    echo "  cmake --build $b --target sidecore_micro_write" >&2
    exit 1
  fi
done
mpirun_cmd=${MPIRUN:-mpirun}
read -r -a mpirun_flags <<< "${MPIRUN_FLAGS:---oversubscribe}"
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
python=${PYTHON:-}
if [ -z "$python" ]; then
  if [ -x "$build/venv/bin/python" ]; then python=$build/venv/bin/python; else python=python3; fi
fi
if [ "$with_stream" = 1 ] && ! "$python" -c 'import h5py' 2>/dev/null; then
  echo "run_micro.sh: $python cannot import h5py (needed to count stored iterations); set" \
       "PYTHON or pass --no-stream" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sidecore-micro.XXXXXX")
stream_output=$(mktemp -d "$stream_dir/sidecore-stream.XXXXXX")
trap 'rm -rf "$work" "$stream_output"' EXIT
for ((b = 0; b < ${#builds[@]}; ++b)); do : > "$work/raw$b.jsonl"; done
runs_started=0
loads="$work/loads.txt"
# The machine's load before anything of ours runs, then before each repetition (those include
# the previous run's own processes).
echo "start $(cut -d ' ' -f 1-3 /proc/loadavg)" > "$loads"

# Sizes of "field" and iterations after the first, per size: enough samples for a stable
# median without letting the 256 MiB runs dominate the time. Mode sizes: the sizes at which
# the thread and dedicated-node setups run beside the others.
if [ "$quick" = 1 ]; then
  sizes=(4096 1048576)
  mode_sizes=(1048576)
  declare -A steady=([4096]=20 [1048576]=10)
  declare -A steady_hdf5=([4096]=5 [1048576]=5)
  small_writes=10000
  empty_iterations=1000
  stream_bytes=$((1 << 20))
  stream_iterations=20
  stream_reps=1
else
  sizes=(4096 65536 1048576 16777216 67108864 268435456)
  mode_sizes=(1048576 16777216 67108864)
  declare -A steady=([4096]=200 [65536]=200 [1048576]=100 [16777216]=30 [67108864]=15
                     [268435456]=8)
  declare -A steady_hdf5=([4096]=40 [65536]=40 [1048576]=20 [16777216]=8 [67108864]=5
                          [268435456]=4)
  small_writes=100000
  empty_iterations=10000
  stream_bytes=$((16 << 20))
  stream_iterations=50
  stream_reps=3
fi

# Per-run settings, set by the caller just before run(): environment of the MPI processes
# (VAR=VALUE words), extra @KEY@=value substitutions into the XML, and for stream runs the
# directory to check for stored iterations.
run_env=()
run_subst=()
run_check=""

# Runs one process group per build (with --versus, both builds back to back, the first one
# alternating from call to call); keeps the result lines of each in its own file.
# Arguments: label np template bytes args...
run() {
  local -a order=()
  local b
  for ((b = 0; b < ${#builds[@]}; ++b)); do order+=("$b"); done
  if [ ${#builds[@]} = 2 ] && [ $((runs_started % 2)) = 1 ]; then order=(1 0); fi
  runs_started=$((runs_started + 1))
  for b in "${order[@]}"; do
    run_one "${builds[$b]}/bench/sidecore_micro_write" "$work/raw$b.jsonl" "$@"
  done
}

# One process group of one build. Arguments: executable raw-file label np template bytes args...
run_one() {
  local exe=$1 raw=$2
  shift 2
  local label=$1 np=$2 template=$3 bytes=$4
  shift 4
  local config="$work/$label.xml" output="${run_check:-$work/hdf5-output}"
  rm -rf "$output" && mkdir -p "$output"
  local -a seds=(-e "s|@BYTES@|$bytes|g" -e "s|@OUTPUT@|$output|g") env_flags=()
  local kv
  for kv in "${run_subst[@]}"; do seds+=(-e "s|@${kv%%=*}@|${kv#*=}|g"); done
  for kv in "${run_env[@]}"; do env_flags+=(-x "$kv"); done
  sed "${seds[@]}" "$here/$template" > "$config"
  if ! env "${run_env[@]}" "$mpirun_cmd" "${mpirun_flags[@]}" "${env_flags[@]}" -np "$np" \
      "$exe" "$config" --label "$label" "$@" > "$work/stdout" 2> "$work/stderr"; then
    echo "run_micro.sh: failed: ${run_env[*]} $mpirun_cmd ${mpirun_flags[*]} -np $np $exe" \
         "$config $*" >&2
    cat "$work/stderr" "$work/stdout" >&2
    exit 1
  fi
  if [ -n "$run_check" ]; then
    local line
    line=$(sed -n 's/^MICRO //p' "$work/stdout")
    "$python" "$here/count_stored.py" "$output" micro_stream "$bytes" "$stream_iterations" \
      "$line" "$work/stderr" >> "$raw"
  else
    sed -n 's/^MICRO //p' "$work/stdout" >> "$raw"
  fi
  rm -rf "$output"
}

# The client's compute phase between two iterations: long enough for the dedicated core to
# have released the previous block (null store), or to have stored it (HDF5, ~5 ns/byte).
pause_null() { echo $((200 + $1 / 8192)); }
pause_hdf5() { echo $((2000 + $1 * 5 / 1000)); }

keep_memory="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967296"

# A client that never pauses, one dedicated core, HDF5 store, a buffer of 2.5 iterations (or
# the number of halves given as 4th argument: 9 for 4.5 iterations).
# Variant label: stream-<policy>[-active]-<api>[-buffer<halves>].
stream_run() {
  local policy=$1 active=$2 api=$3 halves=${4:-5} label="stream-$1"
  run_subst=("POLICY=$policy" "ACTIVE=" "HALVES=$halves")
  if [ "$active" = 1 ]; then
    run_subst=("POLICY=$policy" "ACTIVE=server-memory=\"$server_memory\"" "HALVES=$halves")
    label+="-active"
  fi
  label+="-$api"
  [ "$halves" = 5 ] || label+="-buffer$halves"
  run_check="$stream_output/run"
  # Flush the previous runs' dirty pages first, so that no run pays for another's writeback.
  sync
  run "$label" 2 micro_stream.xml "$stream_bytes" --phases stream \
    --iterations "$stream_iterations" --stream-api "$api"
  run_subst=()
  run_check=""
}

started=$(date +%s)
# Repetitions are the outer loop and the setups alternate inside it, so that a noisy moment
# of the machine hits every setup alike.
for ((rep = 1; rep <= reps; ++rep)); do
  echo "run_micro.sh: repetition $rep of $reps" >&2
  echo "rep$rep $(cut -d ' ' -f 1-3 /proc/loadavg)" >> "$loads"
  # With --versus, which build runs first alternates from one measurement to the next and,
  # for the same measurement, from one repetition to the next.
  runs_started=$rep
  for bytes in "${sizes[@]}"; do
    n=${steady[$bytes]}
    run dedicated 2 micro_dedicated.xml "$bytes" --phases write,alloc --iterations "$n" \
      --pause-us "$(pause_null "$bytes")"
    run sync 1 micro_sync.xml "$bytes" --phases write,alloc --iterations "$n" \
      --pause-us "$(pause_null "$bytes")"
    if [ "$with_modes" = 1 ] && [[ " ${mode_sizes[*]} " == *" $bytes "* ]]; then
      run thread 1 micro_thread.xml "$bytes" --phases write --iterations "$n" \
        --pause-us "$(pause_null "$bytes")"
      # One rank per virtual node: rank 0 is the client, rank 1 (the last node) the server.
      run_env=(SIDECORE_RANKS_PER_NODE=1)
      run nodes 2 micro_nodes.xml "$bytes" --phases write --iterations "$n" \
        --pause-us "$(pause_null "$bytes")"
      run_env=()
    fi
    if [ "$with_experiments" = 1 ] && [[ " 4096 ${mode_sizes[*]} " == *" $bytes "* ]]; then
      # The same runs with malloc never giving memory back to the kernel (no mmap for large
      # blocks, no trimming): each write's private copy then lands in memory already touched.
      run_env=("GLIBC_TUNABLES=$keep_memory")
      run thread-heap 1 micro_thread.xml "$bytes" --phases write --iterations "$n" \
        --pause-us "$(pause_null "$bytes")"
      run sync-heap 1 micro_sync.xml "$bytes" --phases write --iterations "$n" \
        --pause-us "$(pause_null "$bytes")"
      if [ "$bytes" != 4096 ]; then
        run_env=(SIDECORE_RANKS_PER_NODE=1 "GLIBC_TUNABLES=$keep_memory")
        run nodes-heap 2 micro_nodes.xml "$bytes" --phases write --iterations "$n" \
          --pause-us "$(pause_null "$bytes")"
      fi
      run_env=()
    fi
    if [ "$with_hdf5" = 1 ] && [ "$rep" -le 3 ]; then
      run hdf5 2 micro_hdf5.xml "$bytes" --phases write --iterations "${steady_hdf5[$bytes]}" \
        --pause-us "$(pause_hdf5 "$bytes")"
    fi
  done
  for setup in dedicated:2 sync:1; do
    run "${setup%:*}" "${setup#*:}" "micro_${setup%:*}.xml" 4096 --phases small,empty \
      --small-writes "$small_writes" --small-per-iteration 100 --empty "$empty_iterations"
  done
  if [ "$with_stream" = 1 ] && [ "$rep" -le "$stream_reps" ]; then
    for active in 0 1; do
      stream_run wait "$active" write
      stream_run wait "$active" alloc
      stream_run skip "$active" write
    done
    if [ "$with_experiments" = 1 ]; then
      # Active buffering with room for 4.5 iterations in the shared buffer, for comparison.
      stream_run wait 0 write 9
      stream_run wait 1 write 9
    fi
  fi
done
echo "end $(cut -d ' ' -f 1-3 /proc/loadavg)" >> "$loads"
elapsed=$(($(date +%s) - started))

mpi_version=$("$mpirun_cmd" --version 2>/dev/null | head -n 1 || true)
cpu_model=$(grep -m 1 'model name' /proc/cpuinfo | sed 's/.*: //')
# One set of tables per build (two with --versus), then the side-by-side comparison.
for ((b = 0; b < ${#builds[@]}; ++b)); do
build=${builds[$b]}
out=${outs[$b]}
raw="$work/raw$b.jsonl"
mkdir -p "$out"
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
# Which library was measured: the commit, and the library files changed since it (if any).
source_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
git_head=$(git -C "${source_dir:-$here}" rev-parse --short HEAD 2>/dev/null || echo unknown)
git_dirty=$(git -C "${source_dir:-$here}" status --porcelain -- src include bindings 2>/dev/null |
            awk '{print $2}' | tr '\n' ' ' || true)

RAW="$raw" OUT="$out" COMMAND="$command_line" REPS="$reps" ELAPSED="$elapsed" \
CPU_MODEL="$cpu_model" NPROC="$(nproc)" KERNEL="$(uname -r)" MPI_VERSION="$mpi_version" \
BUILD_TYPE="$build_type" QUICK="$quick" LOADS="$loads" STREAM_DIR="$stream_dir" \
SERVER_MEMORY="$server_memory" GIT_HEAD="$git_head" GIT_DIRTY="$git_dirty" \
KEEP_MEMORY="$keep_memory" python3 - <<'PY'
"""Aggregates the per-run lines: medians over repetitions of per-run medians and ratios."""
import datetime
import json
import os
import statistics

raw = [json.loads(line) for line in open(os.environ["RAW"]) if line.strip()]
env = os.environ
meta = {
    "command": env["COMMAND"],
    "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    "nproc": int(env["NPROC"]),
    "cpu_model": env["CPU_MODEL"],
    "kernel": env["KERNEL"],
    "mpi": env["MPI_VERSION"],
    "build_type": env["BUILD_TYPE"],
    "repetitions": int(env["REPS"]),
    "quick": env["QUICK"] == "1",
    "seconds": int(env["ELAPSED"]),
    "stream_dir": env["STREAM_DIR"],
    "server_memory": int(env["SERVER_MEMORY"]),
    "commit": env["GIT_HEAD"],
    "library_files_modified": env["GIT_DIRTY"].split(),
    "experiment_tunables": env["KEEP_MEMORY"],
}
# Load averages (1, 5, 15 min) before the run and before each repetition.
meta["load"] = {}
for line in open(env["LOADS"]):
    when, *values = line.split()
    meta["load"][when] = [float(v) for v in values]

def median(values):
    return statistics.median(values) if values else None

def group(label, phase, size=None):
    return [r for r in raw if r["label"] == label and r["phase"] == phase
            and (size is None or r["bytes"] == size)]

def sizes_of(label, phase):
    return sorted({r["bytes"] for r in group(label, phase)})

def write_row(label, size):
    runs = group(label, "write", size)
    row = {"setup": label, "bytes": size, "runs": len(runs),
           "iterations": runs[0]["iterations"], "pause_us": runs[0]["pause_us"]}
    for key in ("write", "end_iteration", "write_end", "memcpy_warm", "memcpy_cold",
                "memcpy_prefaulted"):
        row["first_" + key] = median([r["first"][key] for r in runs if key in r["first"]])
        row["steady_" + key] = median([r["steady"][key]["median"] for r in runs
                                       if key in r["steady"]])
    row["page_faults_first"] = median([r["write_page_faults"]["first"] for r in runs])
    row["page_faults_steady"] = median([r["write_page_faults"]["steady_mean"] for r in runs])
    # Ratios are taken inside each run (same process, same minutes), then the median over runs.
    # The first write is compared with the steady memcpy medians of its own run: a single
    # memcpy sample is as noisy as the write it would judge.
    for base in ("warm", "cold"):
        row["steady_ratio_" + base] = median(
            [r["steady"]["write"]["median"] / r["steady"]["memcpy_" + base]["median"] for r in runs])
        row["first_ratio_" + base] = median(
            [r["first"]["write"] / r["steady"]["memcpy_" + base]["median"] for r in runs])
    # The first write against a memcpy, in the same iteration, into memory in the same state
    # as its destination: touched before the loop, not since.
    pre = [r for r in runs if r["first"].get("memcpy_prefaulted")]
    row["first_ratio_prefaulted"] = median(
        [r["first"]["write"] / r["first"]["memcpy_prefaulted"] for r in pre])
    row["first_ratio_write_end_prefaulted"] = median(
        [r["first"]["write_end"] / r["first"]["memcpy_prefaulted"] for r in pre])
    # write + end_iteration of the same iteration, against the same memcpy.
    both = [r for r in runs if "write_end" in r["steady"]]
    row["steady_ratio_write_end"] = median(
        [r["steady"]["write_end"]["median"] / r["steady"]["memcpy_warm"]["median"] for r in both])
    row["first_ratio_write_end"] = median(
        [r["first"]["write_end"] / r["steady"]["memcpy_warm"]["median"] for r in both])
    return row

def alloc_row(label, size):
    runs = group(label, "alloc", size)
    row = {"setup": label, "bytes": size, "runs": len(runs), "iterations": runs[0]["iterations"]}
    for key in ("alloc_commit_clear", "alloc", "commit", "clear", "end_iteration"):
        row["first_" + key] = median([r["first"][key] for r in runs])
        row["steady_" + key] = median([r["steady"][key]["median"] for r in runs])
        row["hot_" + key] = median([r["hot"][key]["median"] for r in runs])
        row["calls_" + key] = median([r["calls"][key]["median"] for r in runs if "calls" in r])
    row["cold_read"] = median([r["cold_read_ns"] for r in runs if "cold_read_ns" in r])
    return row

def plain_row(label, phase, keys):
    runs = group(label, phase)
    if not runs:
        return None
    row = {"setup": label, "runs": len(runs)}
    for key in keys:
        row[key] = median([r["steady"][key]["median"] for r in runs])
        row[key + "_p90"] = median([r["steady"][key]["p90"] for r in runs])
    return row

def stream_row(label):
    runs = group(label, "stream")
    if not runs:
        return None
    n = runs[0]["iterations"]
    row = {"setup": label, "api": runs[0]["api"], "bytes": runs[0]["bytes"], "runs": len(runs),
           "iterations_written": n,
           "stored_per_run": [r["stored"]["iterations"] for r in runs],
           "skipped_per_run": [r["stored"]["client_iterations_skipped"] for r in runs],
           "wrong_per_run": [len(r["stored"]["wrong"]) for r in runs]}
    for key in ("total", "sync", "put_sum", "end_sum", "alloc_sum", "copy_sum",
                "copy_calibration", "slow_puts"):
        row[key] = median([r[key] for r in runs])
    # The copy: measured inside the stream (alloc API), or estimated from a memcpy of the same
    # bytes timed just before it (write API); the wait is the rest of the write calls.
    if row["api"] == "alloc":
        row["wait"] = row["alloc_sum"]
        row["copy"] = row["copy_sum"]
        row["copy_measured"] = True
    else:
        row["copy"] = median([r["copy_calibration"] * n for r in runs])
        row["wait"] = median([max(0, r["put_sum"] - r["copy_calibration"] * n) for r in runs])
        row["copy_measured"] = False
    row["first_put"] = median([r["first"]["put"] for r in runs])
    row["steady_put"] = median([r["steady"]["put"]["median"] for r in runs])
    for key in ("server_seconds_in_stores", "server_high_water", "bytes_to_server_memory",
                "server_iterations_incomplete", "files", "files_without_block"):
        values = [r["stored"].get(key) for r in runs if r["stored"].get(key) is not None]
        row[key] = median(values)
    return row

stream_labels = [f"stream-{policy}{active}-{api}" for active in ("", "-active")
                 for policy, api in (("wait", "write"), ("wait", "alloc"), ("skip", "write"))]
stream_labels += ["stream-wait-write-buffer9", "stream-wait-active-write-buffer9"]
labels = ("dedicated", "sync", "thread", "nodes", "hdf5", "thread-heap", "sync-heap",
          "nodes-heap")
results = {
    "write": [write_row(l, s) for l in labels for s in sizes_of(l, "write")],
    "alloc": [alloc_row(l, s) for l in labels for s in sizes_of(l, "alloc")],
    "small": [x for x in (plain_row(l, "small", ("write", "end_iteration")) for l in labels) if x],
    "empty": [x for x in (plain_row(l, "empty", ("end_iteration",)) for l in labels) if x],
    "stream": [x for x in (stream_row(l) for l in stream_labels) if x],
}

def find(rows, setup, size=None):
    for row in rows:
        if row["setup"] == setup and (size is None or row["bytes"] == size):
            return row
    return None

# Targets, judged on the dedicated-core setup (the one they are written for).
MiB = 1 << 20
big = [r for r in results["write"] if r["setup"] == "dedicated" and r["bytes"] >= MiB]
def worst_of(rows, key):
    values = [r[key] for r in rows if r.get(key) is not None]
    return max(values) if values else None
worst_steady = worst_of(big, "steady_ratio_warm")
worst_first = worst_of(big, "first_ratio_prefaulted")
worst_first_strict = worst_of(big, "first_ratio_warm")
allocs = [r for r in results["alloc"] if r["setup"] == "dedicated"]
worst_alloc = max((r["steady_alloc_commit_clear"] for r in allocs), default=None)
worst_alloc_first = max((r["first_alloc_commit_clear"] for r in allocs), default=None)
worst_alloc_hot = max((r["hot_alloc_commit_clear"] for r in allocs), default=None)
worst_alloc_calls = max((r["calls_alloc_commit_clear"] for r in allocs
                         if r.get("calls_alloc_commit_clear") is not None), default=None)
small = find(results["small"], "dedicated")
empty = find(results["empty"], "dedicated")
targets = [
    {"name": "damaris_write >= 1 MiB, steady, / memcpy (warm)",
     "target": 1.1, "unit": "x", "measured": worst_steady, "damaris": "~0.9x (64 MiB)"},
    {"name": "damaris_write >= 1 MiB, first iteration, / memcpy of the same iteration into "
     "memory in the destination's state (touched before the loop, not since)",
     "target": 1.1, "unit": "x", "measured": worst_first, "damaris": "~9x"},
    {"name": "damaris_write >= 1 MiB, first iteration, / steady memcpy into a buffer hot in "
     "the cache (strict reading)",
     "target": 1.1, "unit": "x", "measured": worst_first_strict, "damaris": "~9x"},
    {"name": "damaris_alloc + commit + clear, any size: the calls' own cost, one cache line of "
     "the block written between them, 200 us of compute between iterations (median)",
     "target": 2000, "unit": "ns", "measured": worst_alloc_calls, "damaris": "-"},
    {"name": "(reported beside the target) damaris_alloc + commit + clear, any size, the "
     "application filling the whole block between them, after a compute phase (steady median)",
     "target": 2000, "unit": "ns", "measured": worst_alloc, "damaris": "-"},
    {"name": "(reported beside the target) damaris_alloc + commit + clear, any size, the "
     "application filling the whole block between them, back to back (median)",
     "target": 2000, "unit": "ns", "measured": worst_alloc_hot, "damaris": "-"},
    {"name": "damaris_write of one int (median per call)",
     "target": 1000, "unit": "ns", "measured": small and small["write"], "damaris": "~80 us"},
    {"name": "empty damaris_end_iteration (median)",
     "target": 5000, "unit": "ns", "measured": empty and empty["end_iteration"],
     "damaris": "~50 us"},
]
for t in targets:
    t["met"] = t["measured"] is not None and t["measured"] <= t["target"]

# Issue 3 (per mode, 1 MiB and more, null store) and the stream target of issue 2.
def worst(label, keys):
    rows = [r for r in results["write"] if r["setup"] == label and r["bytes"] >= MiB]
    values = [r[k] for r in rows for k in keys if r.get(k) is not None]
    return max(values) if values else None

mode_targets = [
    {"name": "thread mode: damaris_write >= 1 MiB, steady, / memcpy (warm)",
     "target": 1.2, "unit": "x", "measured": worst("thread", ("steady_ratio_warm",))},
    {"name": "(reported beside the issue-3 target) thread mode: damaris_write >= 1 MiB, first "
     "iteration, / memcpy into memory in "
     "the destination's state",
     "target": 1.2, "unit": "x", "measured": worst("thread", ("first_ratio_prefaulted",))},
    {"name": "(reported beside the issue-3 target) thread mode: damaris_write >= 1 MiB, first "
     "iteration, / steady memcpy (warm), "
     "strict reading",
     "target": 1.2, "unit": "x", "measured": worst("thread", ("first_ratio_warm",))},
    {"name": "dedicated node: damaris_write + damaris_end_iteration >= 1 MiB, steady, "
     "/ memcpy (warm), server with room",
     "target": 2.0, "unit": "x", "measured": worst("nodes", ("steady_ratio_write_end",))},
    {"name": "(reported beside the issue-3 target) dedicated node: damaris_write + "
     "damaris_end_iteration >= 1 MiB, first iteration, "
     "/ memcpy into memory in the destination's state",
     "target": 2.0, "unit": "x",
     "measured": worst("nodes", ("first_ratio_write_end_prefaulted",))},
    {"name": "(reported beside the issue-3 target) dedicated node: damaris_write + "
     "damaris_end_iteration >= 1 MiB, first iteration, "
     "/ steady memcpy (warm), strict reading",
     "target": 2.0, "unit": "x", "measured": worst("nodes", ("first_ratio_write_end",))},
]
for t in mode_targets:
    t["met"] = t["measured"] is not None and t["measured"] <= t["target"]
stream_wait = [r for r in results["stream"] if r["setup"].startswith("stream-wait-")
               and "-buffer" not in r["setup"]]
if stream_wait:
    fewest = min(min(r["stored_per_run"]) for r in stream_wait)
    written = stream_wait[0]["iterations_written"]
    mode_targets.append(
        {"name": f"buffer of 2.5 iterations, client never pauses, policy wait, HDF5: iterations "
         f"stored of {written} (fewest over runs)",
         "target": written, "unit": "iterations", "measured": fewest, "met": fewest == written})
targets += mode_targets

document = {"meta": meta, "targets": targets, "results": results, "raw": raw}
with open(os.path.join(env["OUT"], "micro.json"), "w") as f:
    json.dump(document, f, indent=1)
    f.write("\n")

def t(ns):
    if ns is None:
        return "-"
    if ns < 10_000:
        return f"{ns / 1e3:.2f} us" if ns >= 1000 else f"{ns:.0f} ns"
    if ns < 10_000_000:
        return f"{ns / 1e3:.0f} us"
    return f"{ns / 1e6:.1f} ms"

def x(ratio):
    return "-" if ratio is None else f"{ratio:.2f}x"

def size(n):
    return f"{n >> 20} MiB" if n >= MiB else f"{n >> 10} KiB"

def shown(target):
    if target["unit"] == "iterations":
        return str(target["measured"]), f"= {target['target']}"
    if target["unit"] == "x":
        return x(target["measured"]), f"<= {target['target']}x"
    return t(target["measured"]), f"<= {t(target['target'])}"

lines = []
add = lines.append
add("# Sidecore micro-benchmark: client-visible cost of the write path")
add("")
add(f"- Command: `{meta['command']}` ({meta['seconds']} s)")
add(f"- Date: {meta['date']}")
add(f"- Machine: nproc={meta['nproc']}, CPU \"{meta['cpu_model']}\", Linux {meta['kernel']}")
add(f"- MPI: {meta['mpi']}; build type: {meta['build_type'] or 'default'}")
modified = meta["library_files_modified"]
add(f"- Library: commit {meta['commit']}" +
    (f", with uncommitted changes in {', '.join(modified)}" if modified else ", clean"))
add(f"- Each number is the median over {meta['repetitions']} separate runs (3 for HDF5) of the "
    "per-run value (first iteration) or per-run median (steady state). Ratios are computed "
    "inside each run, side by side in the same process, then the median is taken.")
load = meta["load"]
during = [v[0] for k, v in load.items() if k.startswith("rep")]
add(f"- Machine load (1-min load average) before the run: {load['start'][0]:.2f}; before each "
    f"repetition (includes this benchmark's own previous run): "
    f"{', '.join(f'{v:.2f}' for v in during) or '-'}.")
if meta["quick"]:
    add("- **Quick mode: harness check only, not representative.**")
add("- Damaris 1.7 figures are reference numbers from the project issue, measured on this kind "
    "of machine, not by this harness.")
add("")
add("## Targets")
add("")
add("Issue 2 targets on the dedicated core with the null store; issue 3 targets per mode; the "
    "stream target with the HDF5 store (sections below).")
add("")
add("| what | Damaris 1.7 | target | Sidecore | met? |")
add("|---|---|---|---|---|")
for target in targets:
    target.setdefault("damaris", "-")
    measured, goal = shown(target)
    add(f"| {target['name']} | {target['damaris']} | {goal} | {measured} | "
        f"{'yes' if target['met'] else '**NO**'} |")
add("")
add(f"First-iteration alloc+commit+clear (largest over sizes): {t(worst_alloc_first)}; "
    "the target above is judged on the steady state.")
add("")
add("*alloc + commit + clear: what the target is judged on.* The calls do the same work "
    "whatever the size (a lookup, a reservation in the shared buffer, a message into the ring; "
    "no page is touched, zeroed or copied), which the *calls only* column shows: the three "
    "calls with one cache line of the block written between them, and 200 us of compute "
    "between iterations (enough for the dedicated core to release the previous block, so that "
    "no call waits for space; short enough for the caches to stay warm). The rows *reported "
    "beside the target* time the same calls when the application fills the whole block "
    "between alloc and commit, or after a compute phase of milliseconds: they measure the "
    "cache state that the fill or a long phase on this shared virtual machine leaves, as the "
    "next paragraph explains.")
cold = [r for r in allocs if r.get("cold_read") is not None]
if cold:
    hottest = min(cold, key=lambda r: r["bytes"])
    coldest = max(cold, key=lambda r: r["bytes"])
    add("")
    add(f"*alloc + commit + clear after the application fills its block.* Once the block "
        f"outgrows the caches and the TLB, filling it evicts everything the next call touches: "
        f"after filling {size(coldest['bytes'])}, one dependent read of a cache line on a page "
        f"not touched since costs {t(coldest['cold_read'])} on this machine (against "
        f"{t(hottest['cold_read'])} after filling {size(hottest['bytes'])}; column *one cold "
        f"read* below), so the 2 us budget is about {2000 / max(coldest['cold_read'], 1):.0f} "
        f"such reads, code pages included.")
add("")
add("*First iteration.* The first write's destination is mapped (no page fault: see the faults "
    "column below) but was last touched at initialization, so it is no longer in the core's "
    "cache; the *strict* rows divide by a memcpy into a buffer the same process copied into "
    "one iteration earlier, which is hot in the cache. The like-for-like rows divide by a "
    "memcpy, in the same first iteration, into memory touched before the loop and not since: "
    "what any first copy into a buffer not in use a moment ago costs on this machine.")
add("")

titles = {
    "dedicated": "one client + one dedicated core (np 2), null store",
    "sync": "synchronous mode, no dedicated core (np 1), null store",
    "thread": "thread mode: one client with a background I/O thread (np 1), null store",
    "nodes": "one client + one dedicated node (np 2, SIDECORE_RANKS_PER_NODE=1), null store",
    "thread-heap": "experiment: thread mode with malloc keeping freed memory, null store",
    "sync-heap": "experiment: synchronous mode with malloc keeping freed memory, null store",
    "nodes-heap": "experiment: dedicated node with malloc keeping freed memory, null store",
    "hdf5": "one client + one dedicated core (np 2), HDF5 FilePerCore store in a temp dir",
}
mode_names = {"dedicated": "dedicated core (np 2)", "nodes": "dedicated node (np 2)",
              "thread": "background thread (np 1)", "sync": "synchronous (np 1)",
              "nodes-heap": "*experiment:* dedicated node, malloc keeps memory",
              "thread-heap": "*experiment:* background thread, malloc keeps memory",
              "sync-heap": "*experiment:* synchronous, malloc keeps memory"}
mode_rows = [r for r in results["write"] if r["setup"] in mode_names and
             any(m["setup"] == "thread" and m["bytes"] == r["bytes"] for m in results["write"])]
if mode_rows:
    add("## Per deployment mode: damaris_write and damaris_end_iteration vs memcpy (null store)")
    add("")
    add("Same client, same sizes, same compute phase between iterations; the memcpy (warm) is "
        "timed in the same process, in the same iterations. `w+e` is damaris_write + "
        "damaris_end_iteration of one iteration. Faults: minor page faults inside damaris_write "
        "(first iteration / mean of the steady ones). *Experiment* rows: the same run with "
        f"`GLIBC_TUNABLES={meta['experiment_tunables']}` (malloc never returns freed memory "
        "to the kernel; an environment setting, no code change): they isolate the cost of the "
        "private copy landing in freshly mapped pages (see bench/README.md).")
    add("")
    add("| size | mode | write first | write steady | end_iter. first | end_iter. steady | "
        "memcpy warm | write/memcpy first | steady | w+e/memcpy first | steady | "
        "write/memcpy same state, first | w+e/memcpy same state, first | "
        "write/memcpy cold steady | faults first / steady |")
    add("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for size_value in sorted({r["bytes"] for r in mode_rows}):
        for label in ("dedicated", "nodes", "thread", "sync", "nodes-heap", "thread-heap",
                      "sync-heap"):
            r = find(mode_rows, label, size_value)
            if not r:
                continue
            add(f"| {size(size_value)} | {mode_names[label]} | {t(r['first_write'])} | "
                f"{t(r['steady_write'])} | {t(r['first_end_iteration'])} | "
                f"{t(r['steady_end_iteration'])} | {t(r['steady_memcpy_warm'])} | "
                f"{x(r['first_ratio_warm'])} | {x(r['steady_ratio_warm'])} | "
                f"{x(r['first_ratio_write_end'])} | {x(r['steady_ratio_write_end'])} | "
                f"{x(r['first_ratio_prefaulted'])} | {x(r['first_ratio_write_end_prefaulted'])} | "
                f"{x(r['steady_ratio_cold'])} | "
                f"{r['page_faults_first']:.0f} / {r['page_faults_steady']:.0f} |")
    add("")

def seconds_as_time(seconds):
    return "-" if seconds is None else t(seconds * 1e9)

def mib_of(n):
    return "-" if n is None else f"{n / MiB:.0f} MiB"

stream_rows = results["stream"]
if stream_rows:
    sr = stream_rows[0]
    add(f"## A client that never pauses: buffer of 2.5 iterations, HDF5 FilePerCore "
        f"(dedicated core, np 2)")
    add("")
    add(f"{sr['iterations_written']} iterations of {size(sr['bytes'])} written back to back (no "
        f"compute phase), shared buffer `bytes*5/2` (2.5 iterations), HDF5 FilePerCore into "
        f"`{meta['stream_dir']}` (local disk). Stored = iterations whose file holds "
        f"`field/P0` with the right size and the iteration's stamp (checked with h5py). "
        f"Active buffering: `server-memory=\"{meta['server_memory']}\"` "
        f"({meta['server_memory'] >> 20} MiB). Times are medians over {sr['runs']} runs. "
        "`client total` is the loop (writes + end_iteration); `drain` is the damaris_sync after "
        "it (until everything is stored). Wait and copy: with the alloc API, the time inside "
        "damaris_alloc (waiting for space) and the memcpy into the block, measured; with "
        "damaris_write, the copy is estimated as N x a memcpy of the same bytes timed before "
        "the stream, and the wait is the rest.")
    add("")
    add("| policy | active buffering | API | buffer (iterations) | stored / written (per run) | "
        "dropped (per run) | "
        "client total | per iteration | writes | wait | copy | end_iteration | drain | "
        "server time in stores | moved to server memory | buffer high water |")
    add("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in stream_rows:
        halves = int(r["setup"].split("-buffer")[1]) if "-buffer" in r["setup"] else 5
        policy = r["setup"].split("-")[1]
        active = "yes" if "-active-" in r["setup"] else "no"
        stored = ", ".join(str(v) for v in r["stored_per_run"])
        dropped = ", ".join(str(v) for v in r["skipped_per_run"])
        n = r["iterations_written"]
        moved = r["bytes_to_server_memory"]
        add(f"| {policy} | {active} | {r['api']} | {halves / 2:g} | {stored} / {n} | {dropped} | "
            f"{t(r['total'])} | {t(r['total'] / n)} | {t(r['put_sum'])} | "
            f"{t(r['wait'])}{'' if r['copy_measured'] else ' (est.)'} | "
            f"{t(r['copy'])}{'' if r['copy_measured'] else ' (est.)'} | {t(r['end_sum'])} | "
            f"{t(r['sync'])} | "
            f"{seconds_as_time(r['server_seconds_in_stores'])} | {mib_of(moved)} | "
            f"{mib_of(r['server_high_water'])} |")
    add("")

for label in labels:
    rows = [r for r in results["write"] if r["setup"] == label]
    if not rows:
        continue
    add(f"## damaris_write vs memcpy: {titles[label]}")
    add("")
    add("| size | write first | write steady | memcpy warm | memcpy cold | "
        "first/warm | first/cold | steady/warm | steady/cold | end_iteration steady | iters x runs |")
    add("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        add(f"| {size(r['bytes'])} | {t(r['first_write'])} | {t(r['steady_write'])} | "
            f"{t(r['steady_memcpy_warm'])} | {t(r['steady_memcpy_cold'])} | "
            f"{x(r['first_ratio_warm'])} | {x(r['first_ratio_cold'])} | "
            f"{x(r['steady_ratio_warm'])} | {x(r['steady_ratio_cold'])} | "
            f"{t(r['steady_end_iteration'])} | {r['iterations']} x {r['runs']} |")
    add("")

for label in labels:
    rows = [r for r in results["alloc"] if r["setup"] == label]
    if not rows:
        continue
    add(f"## damaris_alloc + commit + clear: {titles[label]}")
    add("")
    add("| size | first | steady (after compute) | alloc | commit | clear | "
        "back to back | alloc | commit | clear | end_iteration steady | "
        "one cold read after the fill | calls only | alloc | commit | clear |")
    add("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        add(f"| {size(r['bytes'])} | {t(r['first_alloc_commit_clear'])} | "
            f"{t(r['steady_alloc_commit_clear'])} | {t(r['steady_alloc'])} | "
            f"{t(r['steady_commit'])} | {t(r['steady_clear'])} | "
            f"{t(r['hot_alloc_commit_clear'])} | {t(r['hot_alloc'])} | "
            f"{t(r['hot_commit'])} | {t(r['hot_clear'])} | {t(r['steady_end_iteration'])} | "
            f"{t(r['cold_read'])} | {t(r.get('calls_alloc_commit_clear'))} | "
            f"{t(r.get('calls_alloc'))} | {t(r.get('calls_commit'))} | "
            f"{t(r.get('calls_clear'))} |")
    add("")

add("## Small writes and empty iterations")
add("")
add("| setup | write of 1 int (median per call) | p90 | end_iteration after 100 writes | "
    "empty end_iteration (median) | p90 |")
add("|---|---|---|---|---|---|")
add("| Damaris 1.7 (reference) | ~80 us | - | - | ~50 us | - |")
for label in labels:
    s = find(results["small"], label)
    e = find(results["empty"], label)
    if not s and not e:
        continue
    add(f"| {titles[label]} | {t(s and s['write'])} | {t(s and s['write_p90'])} | "
        f"{t(s and s['end_iteration'])} | {t(e and e['end_iteration'])} | "
        f"{t(e and e['end_iteration_p90'])} |")
add("")
add("How to read this: see bench/README.md.")
with open(os.path.join(env["OUT"], "micro.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
done
if [ -n "$versus" ]; then
  python3 "$here/compare_micro.py" "${outs[1]}/micro.json" "${outs[0]}/micro.json" \
    > "${outs[0]}/versus.md"
  echo "run_micro.sh: side by side in ${outs[0]}/versus.md" >&2
fi
