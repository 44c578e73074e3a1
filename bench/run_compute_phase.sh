#!/usr/bin/env bash
# What a client pays after a long compute phase, and what an idle dedicated core costs, for
# one or more builds (or one build under several environments) side by side, run by run.
#
# usage: bench/run_compute_phase.sh [options] NAME=BUILD_DIR[,VAR=VALUE...] ...
#   NAME=BUILD_DIR   a configuration: a build with the target sidecore_micro_write, and the
#                    environment variables given to its processes (e.g.
#                    after-poll0=build-bench,SIDECORE_IDLE_POLL_US=0)
#   --runs N         separate runs (processes) per configuration and row (3)
#   --iterations N   iterations after the first, per run (10)
#   --pauses "US.."  compute phases (busy-wait, --pause-us of the micro-benchmark) before
#                    each iteration ("100000 250000")
#   --alloc-bytes B  size of the field of the alloc rows (64 MiB)
#   --idle-cpu       also measure the server's CPU time while its client computes
#   --idle-seconds S length of that measurement window (3)
#   --no-phase       skip the compute-phase rows (only with --idle-cpu)
#   --out DIR        where compute_phase.md and compute_phase.json go (bench/results)
#   --quick          1 run, 3 iterations, 20 ms and 50 ms pauses, 1 s idle window: checks the
#                    harness only
# Environment: MPIRUN (mpirun), MPIRUN_FLAGS (--oversubscribe).
#
# Compute-phase rows: the dedicated-core setup (micro_dedicated.xml, null store, mpirun -np 2)
# with an 8-byte field, phase write (damaris_write + damaris_end_iteration), and with a field of
# --alloc-bytes, phase alloc (damaris_alloc, the block filled, damaris_commit, damaris_clear,
# damaris_end_iteration), each after --pause-us of busy-waiting. Per run: the median over the
# steady iterations; reported: the median over runs and the range.
# Idle CPU: the same setup with an 8-byte field and one compute phase of S + 2 s; from 1.5 s
# after the processes appear, the server's utime+stime (/proc/PID/stat, clock ticks) and
# sum_exec_runtime (/proc/PID/task/*/schedstat, ns) over S seconds, and its voluntary context
# switches (naps and wake-ups). The client is the process whose CPU time grows with the wall
# clock (it busy-waits); the check that it did is in the table.
set -euo pipefail
# Benchmarks leave no run report behind (docs/observability.md).
export SIDECORE_REPORT=${SIDECORE_REPORT:-off}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command_line="bench/run_compute_phase.sh $*"
usage() { sed -n '5,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }

runs=3
iterations=10
pauses="100000 250000"
alloc_bytes=$((64 << 20))
idle_cpu=0
idle_seconds=3
with_phase=1
out="$here/results"
configs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --pauses) pauses=$2; shift 2 ;;
    --alloc-bytes) alloc_bytes=$2; shift 2 ;;
    --idle-cpu) idle_cpu=1; shift ;;
    --idle-seconds) idle_seconds=$2; shift 2 ;;
    --no-phase) with_phase=0; shift ;;
    --out) out=$2; shift 2 ;;
    --quick) runs=1; iterations=3; pauses="20000 50000"; idle_seconds=1; shift ;;
    -h|--help) usage 0 ;;
    -*) echo "run_compute_phase.sh: unknown option '$1'" >&2; usage ;;
    *=*) configs+=("$1"); shift ;;
    *) echo "run_compute_phase.sh: '$1' is not NAME=BUILD_DIR" >&2; usage ;;
  esac
done
[ ${#configs[@]} -ge 1 ] || usage

declare -A config_build config_env
names=()
for spec in "${configs[@]}"; do
  name=${spec%%=*}
  rest=${spec#*=}
  IFS=, read -r -a parts <<< "$rest"
  config_build[$name]=$(cd "${parts[0]}" && pwd)
  config_env[$name]="${parts[*]:1}"
  names+=("$name")
  if [ ! -x "${config_build[$name]}/bench/sidecore_micro_write" ]; then
    echo "run_compute_phase.sh: ${config_build[$name]}/bench/sidecore_micro_write not found" >&2
    exit 1
  fi
done

mpirun_cmd=${MPIRUN:-mpirun}
read -r -a mpirun_flags <<< "${MPIRUN_FLAGS:---oversubscribe}"
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sidecore-phase.XXXXXX")
trap 'rm -rf "$work"' EXIT
raw="$work/raw.jsonl"
: > "$raw"
loads="$work/loads.txt"
echo "start $(cut -d ' ' -f 1-3 /proc/loadavg)" > "$loads"

# The mpirun command line of one configuration: environment flags, then the benchmark.
# Arguments: name bytes args... ; sets the array `cmd`.
command_of() {
  local name=$1 bytes=$2
  shift 2
  local config="$work/$name-$bytes.xml" kv
  sed -e "s|@BYTES@|$bytes|g" -e "s|@OUTPUT@|$work/output|g" "$here/micro_dedicated.xml" \
    > "$config"
  cmd=("$mpirun_cmd" "${mpirun_flags[@]}")
  for kv in ${config_env[$name]}; do cmd+=(-x "$kv"); done
  cmd+=(-np 2 "${config_build[$name]}/bench/sidecore_micro_write" "$config" "$@")
}

# One compute-phase run; appends its MICRO line, tagged, to the raw results.
# Arguments: name row pause bytes phase
phase_run() {
  local name=$1 row=$2 pause=$3 bytes=$4 phase=$5
  command_of "$name" "$bytes" --phases "$phase" --iterations "$iterations" --pause-us "$pause" \
    --label "$name"
  # shellcheck disable=SC2086
  if ! env ${config_env[$name]} "${cmd[@]}" > "$work/stdout" 2> "$work/stderr"; then
    echo "run_compute_phase.sh: failed: ${cmd[*]}" >&2
    cat "$work/stderr" "$work/stdout" >&2
    exit 1
  fi
  sed -n 's/^MICRO //p' "$work/stdout" |
    python3 -c 'import json, sys
for line in sys.stdin:
    r = json.loads(line)
    r.update(kind="phase", config=sys.argv[1], row=sys.argv[2], pause=int(sys.argv[3]))
    print(json.dumps(r))' "$name" "$row" "$pause" >> "$raw"
}

# Utime+stime (ticks), sum_exec_runtime over threads (ns) and voluntary context switches over
# threads of a process, on one line.
cpu_of() {
  local pid=$1 ticks ns=0 switches=0 task v
  ticks=$(sed 's/.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')
  for task in /proc/"$pid"/task/*; do
    v=$(cut -d ' ' -f 1 "$task/schedstat" 2>/dev/null || echo 0)
    ns=$((ns + v))
    v=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "$task/status" 2>/dev/null || echo 0)
    switches=$((switches + ${v:-0}))
  done
  echo "$ticks $ns $switches"
}

# One idle-CPU run. Argument: name
idle_run() {
  local name=$1 pause_us=$(((idle_seconds + 2) * 1000000))
  command_of "$name" 8 --phases write --iterations 1 --pause-us "$pause_us" --label "$name"
  # shellcheck disable=SC2086
  env ${config_env[$name]} "${cmd[@]}" > "$work/stdout" 2> "$work/stderr" &
  local launcher=$! pids=() deadline=$((SECONDS + 20))
  while [ ${#pids[@]} -lt 2 ]; do
    [ $SECONDS -lt $deadline ] || { echo "run_compute_phase.sh: ranks not found" >&2; exit 1; }
    sleep 0.05
    mapfile -t pids < <(pgrep -P "$launcher" -f sidecore_micro_write || true)
  done
  sleep 1.5
  local t0 t1 a0 b0 a1 b1
  t0=$(date +%s%N); a0=$(cpu_of "${pids[0]}"); b0=$(cpu_of "${pids[1]}")
  sleep "$idle_seconds"
  t1=$(date +%s%N); a1=$(cpu_of "${pids[0]}"); b1=$(cpu_of "${pids[1]}")
  if ! wait "$launcher"; then
    echo "run_compute_phase.sh: failed: ${cmd[*]}" >&2
    cat "$work/stderr" "$work/stdout" >&2
    exit 1
  fi
  echo "{\"kind\":\"idle\",\"config\":\"$name\",\"wall_ns\":$((t1 - t0)),\"ticks_per_s\":$(getconf CLK_TCK),\"a0\":[${a0// /,}],\"a1\":[${a1// /,}],\"b0\":[${b0// /,}],\"b1\":[${b1// /,}]}" >> "$raw"
}

# The configurations' names, starting from the one at offset K (argument), wrapping around.
rotated() {
  local i
  for ((i = 0; i < ${#names[@]}; ++i)); do echo "${names[(i + $1) % ${#names[@]}]}"; done
}

started=$(date +%s)
for ((r = 1; r <= runs; ++r)); do
  echo "run_compute_phase.sh: run $r of $runs" >&2
  echo "run$r $(cut -d ' ' -f 1-3 /proc/loadavg)" >> "$loads"
  # The configurations take turns; which one goes first rotates from row to row and run to run.
  k=$r
  if [ "$with_phase" = 1 ]; then
    for pause in $pauses; do
      for name in $(rotated $((k++))); do phase_run "$name" write "$pause" 8 write; done
      for name in $(rotated $((k++))); do
        phase_run "$name" alloc "$pause" "$alloc_bytes" alloc
      done
    done
  fi
  if [ "$idle_cpu" = 1 ]; then
    for name in $(rotated "$r"); do idle_run "$name"; done
  fi
done
echo "end $(cut -d ' ' -f 1-3 /proc/loadavg)" >> "$loads"
elapsed=$(($(date +%s) - started))

mkdir -p "$out"
describe=""
for name in "${names[@]}"; do
  build=${config_build[$name]}
  source_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
  commit=$(git -C "${source_dir:-$here}" rev-parse --short HEAD 2>/dev/null || echo unknown)
  describe+="$name|$commit|${config_env[$name]}"$'\n'
done

RAW="$raw" OUT="$out" COMMAND="$command_line" ELAPSED="$elapsed" LOADS="$loads" \
DESCRIBE="$describe" RUNS="$runs" ITERATIONS="$iterations" ALLOC_BYTES="$alloc_bytes" \
IDLE_SECONDS="$idle_seconds" CPU_MODEL="$(grep -m 1 'model name' /proc/cpuinfo | sed 's/.*: //')" \
NPROC="$(nproc)" python3 - <<'PY'
"""Medians over runs of per-run medians, with ranges; idle CPU per configuration."""
import datetime
import json
import os
import statistics

env = os.environ
raw = [json.loads(line) for line in open(env["RAW"]) if line.strip()]
configs = []
for line in env["DESCRIBE"].splitlines():
    name, commit, variables = line.split("|")
    configs.append({"name": name, "commit": commit, "env": variables})
loads = {}
for line in open(env["LOADS"]):
    when, *values = line.split()
    loads[when] = [float(v) for v in values]
meta = {"command": env["COMMAND"], "seconds": int(env["ELAPSED"]), "runs": int(env["RUNS"]),
        "iterations": int(env["ITERATIONS"]), "alloc_bytes": int(env["ALLOC_BYTES"]),
        "idle_seconds": float(env["IDLE_SECONDS"]), "cpu_model": env["CPU_MODEL"],
        "nproc": int(env["NPROC"]), "configs": configs, "load": loads,
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}

def us(ns):
    return "-" if ns is None else f"{ns / 1e3:.2f}"

def summary(values):
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "runs": len(values)}

def shown(s):
    if s is None:
        return "-"
    return f"{us(s['median'])} ({us(s['min'])}-{us(s['max'])})"

# Figures of a run: (name, value of one MICRO line).
figures = {
    "write": [("write", lambda r: r["steady"]["write"]["median"]),
              ("end_iteration", lambda r: r["steady"]["end_iteration"]["median"]),
              ("write+end", lambda r: r["steady"]["write_end"]["median"]),
              ("first write+end", lambda r: r["first"]["write_end"])],
    "alloc": [("alloc+commit+clear", lambda r: r["steady"]["alloc_commit_clear"]["median"]),
              ("end_iteration", lambda r: r["steady"]["end_iteration"]["median"]),
              # The benchmark prints per-call medians only: the sum of the two medians.
              ("alloc+commit+clear+end", lambda r: r["steady"]["alloc_commit_clear"]["median"]
               + r["steady"]["end_iteration"]["median"]),
              ("alloc", lambda r: r["steady"]["alloc"]["median"]),
              ("commit", lambda r: r["steady"]["commit"]["median"]),
              ("clear", lambda r: r["steady"]["clear"]["median"])],
}
phase_rows = []
for row in ("write", "alloc"):
    for pause in sorted({r["pause"] for r in raw if r["kind"] == "phase" and r["row"] == row}):
        for c in configs:
            runs = [r for r in raw if r["kind"] == "phase" and r["row"] == row
                    and r["pause"] == pause and r["config"] == c["name"]]
            if not runs:
                continue
            entry = {"row": row, "pause_us": pause, "config": c["name"],
                     "bytes": runs[0]["bytes"], "runs": len(runs)}
            for name, fn in figures[row]:
                entry[name] = summary([fn(r) for r in runs])
            entry["page_faults_steady"] = summary(
                [r["write_page_faults"]["steady_mean"] for r in runs if "write_page_faults" in r])
            phase_rows.append(entry)

idle_rows = []
for c in configs:
    runs = [r for r in raw if r["kind"] == "idle" and r["config"] == c["name"]]
    if not runs:
        continue
    per_run = []
    for r in runs:
        wall = r["wall_ns"] / 1e9
        tick = 1.0 / r["ticks_per_s"]
        procs = []
        for a, b in (("a0", "a1"), ("b0", "b1")):
            procs.append({"ticks_s": (r[b][0] - r[a][0]) * tick,
                          "exec_s": (r[b][1] - r[a][1]) / 1e9,
                          "switches": r[b][2] - r[a][2]})
        # The client busy-waits: its CPU time grows with the wall clock.
        client, server = sorted(procs, key=lambda p: p["exec_s"], reverse=True)
        per_run.append({"wall_s": wall,
                        "client_busy": client["exec_s"] / wall,
                        "server_ticks_ms": server["ticks_s"] * 1e3,
                        "server_exec_ms": server["exec_s"] * 1e3,
                        "server_share": server["exec_s"] / wall,
                        "server_switches_per_s": server["switches"] / wall})
    entry = {"config": c["name"], "runs": len(per_run), "per_run": per_run}
    for key in ("server_ticks_ms", "server_exec_ms", "server_share", "server_switches_per_s",
                "client_busy", "wall_s"):
        values = [p[key] for p in per_run]
        entry[key] = {"median": statistics.median(values), "min": min(values),
                      "max": max(values)}
    idle_rows.append(entry)

with open(os.path.join(env["OUT"], "compute_phase.json"), "w") as f:
    json.dump({"meta": meta, "phase": phase_rows, "idle": idle_rows, "raw": raw}, f, indent=1)
    f.write("\n")

lines = []
add = lines.append
add("# Sidecore: client cost after a compute phase, idle dedicated core")
add("")
add(f"- Command: `{meta['command']}` ({meta['seconds']} s), {meta['date']}")
add(f"- Machine: nproc={meta['nproc']}, CPU \"{meta['cpu_model']}\"; 1-min load average: " +
    ", ".join(f"{k} {v[0]:.2f}" for k, v in loads.items()))
add("- Configurations: " + "; ".join(
    f"`{c['name']}` = commit {c['commit']}" + (f" with {c['env']}" if c["env"] else "")
    for c in configs))
add("")
if phase_rows:
    add(f"## After a compute phase (dedicated core, null store, {meta['iterations']} steady "
        f"iterations per run)")
    add("")
    add("Microseconds: median over runs of each run's median over its steady iterations, "
        "(range over runs). *write* rows: an 8-byte field, damaris_write then "
        "damaris_end_iteration; the iterations rotate the order of the write and two "
        "memcpys, so the write directly follows the compute phase in one iteration out of "
        "three. *alloc* rows: damaris_alloc, the block filled (not timed), damaris_commit, "
        "damaris_clear, damaris_end_iteration; alloc+commit+clear+end is the sum of the two "
        "medians (the benchmark prints no per-iteration sum).")
    add("")
    add("| row | size | pause | config | runs | write | end_iteration | write+end | "
        "first write+end |")
    add("|---|---|---|---|---|---|---|---|---|")
    for e in phase_rows:
        if e["row"] != "write":
            continue
        add(f"| write | {e['bytes']} B | {e['pause_us'] / 1000:g} ms | {e['config']} | "
            f"{e['runs']} | {shown(e['write'])} | {shown(e['end_iteration'])} | "
            f"{shown(e['write+end'])} | {shown(e['first write+end'])} |")
    add("")
    add("| row | size | pause | config | runs | alloc+commit+clear | end_iteration | "
        "alloc+commit+clear+end | alloc | commit | clear |")
    add("|---|---|---|---|---|---|---|---|---|---|---|")
    for e in phase_rows:
        if e["row"] != "alloc":
            continue
        add(f"| alloc | {e['bytes'] >> 20} MiB | {e['pause_us'] / 1000:g} ms | {e['config']} | "
            f"{e['runs']} | {shown(e['alloc+commit+clear'])} | {shown(e['end_iteration'])} | "
            f"{shown(e['alloc+commit+clear+end'])} | {shown(e['alloc'])} | "
            f"{shown(e['commit'])} | {shown(e['clear'])} |")
    add("")
if idle_rows:
    add(f"## Idle dedicated core: server CPU while its client computes for "
        f"{meta['idle_seconds']:g} s")
    add("")
    add("Median over runs (range). utime+stime from /proc/PID/stat (clock ticks of 10 ms); "
        "exec: sum_exec_runtime of all the server's threads (/proc/PID/task/*/schedstat, ns); "
        "share: exec / wall time; switches: voluntary context switches per second (each nap "
        "or futex sleep is one). Client busy: the client's CPU share in the window (about 1: "
        "it was computing).")
    add("")
    add("| config | runs | utime+stime (ms) | exec (ms) | share of a core | "
        "switches/s | client busy |")
    add("|---|---|---|---|---|---|---|")
    for e in idle_rows:
        def f(key, fmt):
            s = e[key]
            return f"{fmt(s['median'])} ({fmt(s['min'])}-{fmt(s['max'])})"
        add(f"| {e['config']} | {e['runs']} | {f('server_ticks_ms', lambda v: f'{v:.0f}')} | "
            f"{f('server_exec_ms', lambda v: f'{v:.1f}')} | "
            f"{f('server_share', lambda v: f'{100 * v:.2f}%')} | "
            f"{f('server_switches_per_s', lambda v: f'{v:.0f}')} | "
            f"{f('client_busy', lambda v: f'{v:.2f}')} |")
    add("")
with open(os.path.join(env["OUT"], "compute_phase.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
