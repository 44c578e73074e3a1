#!/usr/bin/env bash
# Start-up time, peak memory and first-write cost of a short run, for one or more builds side
# by side, beside the same loop without Sidecore (bench/startup.c says what is
# measured).
#
# Usage: bench/run_startup.sh [--runs N] [--iterations N] [--compute-ms MS]
#                             [--first-compute-ms MS] [--bytes B] [--buffer B] [--declared N]
#                             [--mode cores|nodes|thread|sync] [--out DIR]
#                             label=path/to/sidecore_startup...
#
# Each label names a sidecore_startup binary (build it per tree: the target sidecore_startup,
# or compile bench/startup.c against another tree's libsidecore). Runs alternate between the
# labels run by run so that a noisy moment hits all alike; DIR (default bench/results/startup)
# receives every run's JSON lines (runs.jsonl) and the table (startup.md), also printed.
# --first-compute-ms MS sets the first compute phase alone (between damaris_start and the first
# write; the others stay --compute-ms): how soon after start-up the first write is fast.
# --mode: one client and one dedicated core (cores, the default), one client and one dedicated
# node (nodes: 2 ranks as two virtual nodes, SIDECORE_RANKS_PER_NODE=1), one client with a
# background I/O thread (thread) or without (sync).
# --declared N adds N more variables to the configuration (declared and stored, never written):
# what a large configuration costs at initialization.
# Environment: MPIRUN (mpirun), MPIRUN_FLAGS (--oversubscribe).
set -euo pipefail
# Benchmarks leave no run report behind (docs/observability.md).
export SIDECORE_REPORT=${SIDECORE_REPORT:-off}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runs=5 iterations=12 compute_ms=250 first_compute_ms= bytes=$((64 << 20)) buffer=$((512 << 20)) declared=0
mode=cores
out=$here/results/startup
builds=()
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --compute-ms) compute_ms=$2; shift 2 ;;
    --first-compute-ms) first_compute_ms=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    --buffer) buffer=$2; shift 2 ;;
    --declared) declared=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *=*) builds+=("$1"); shift ;;
    *) echo "run_startup.sh: unknown argument '$1' (see the header of this script)" >&2; exit 2 ;;
  esac
done
((${#builds[@]})) || { echo "run_startup.sh: give at least one label=binary" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
case $mode in
  cores) dedicated='cores="1" nodes="0"' ranks=2 ;;
  nodes) dedicated='cores="0" nodes="1"' ranks=2; export SIDECORE_RANKS_PER_NODE=1 ;;
  thread) dedicated='cores="0" nodes="0" threads="1"' ranks=1 ;;
  sync) dedicated='cores="0" nodes="0"' ranks=1 ;;
  *) echo "run_startup.sh: --mode is cores, nodes, thread or sync, not '$mode'" >&2; exit 2 ;;
esac
mpirun_cmd=${MPIRUN:-mpirun}
read -r -a mpirun_flags <<< "${MPIRUN_FLAGS:---oversubscribe}"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$here/startup_dedicated.xml" "$bytes" "$buffer" "$declared" "$dedicated" \
  > "$work/startup.xml" <<'EOF'
import sys
template, nbytes, buffer, declared, dedicated = sys.argv[1:]
extra = "\n    ".join(f'<variable name="declared{i}" layout="raw" store="discard"/>'
                      for i in range(int(declared)))
text = open(template).read()
text = text.replace('cores="1" nodes="0"', dedicated)
print(text.replace("@BYTES@", nbytes).replace("@BUFFER@", buffer).replace("@DECLARED@", extra), end="")
EOF
: > "$out/runs.jsonl"
first_compute_ms=${first_compute_ms:-$compute_ms}
loop=(--iterations "$iterations" --compute-ms "$compute_ms" --first-compute-ms "$first_compute_ms"
      --bytes "$bytes")
first=${builds[0]#*=}
for ((r = 1; r <= runs; ++r)); do
  for b in "${builds[@]}"; do
    label=${b%%=*} binary=${b#*=}
    (cd "$work" && "$mpirun_cmd" "${mpirun_flags[@]}" -np "$ranks" "$binary" startup.xml "${loop[@]}") |
      sed "s/^{/{\"label\": \"$label\", \"run\": $r, /" >> "$out/runs.jsonl"
  done
  (cd "$work" &&
    "$mpirun_cmd" "${mpirun_flags[@]}" -np 1 "$first" --without-sidecore "${loop[@]}") |
    sed "s/^{/{\"label\": \"without Sidecore\", \"run\": $r, /" >> "$out/runs.jsonl"
done

python3 - "$out" "$runs" "$iterations" "$compute_ms" "$first_compute_ms" "$bytes" "$buffer" \
  "$declared" "$(uptime)" "$mode" <<'EOF'
import json, statistics, sys
out, runs, iterations, compute_ms, first_ms, nbytes, buffer, declared, load, mode = sys.argv[1:]
setup = {
    "cores": "One client and one dedicated core (`mpirun -np 2`)",
    "nodes": "One client and one dedicated node (`mpirun -np 2`, two virtual nodes)",
    "thread": "One client with a background I/O thread (`mpirun -np 1`)",
    "sync": "One client, synchronous (`mpirun -np 1`)",
}[mode]
rows = [json.loads(l) for l in open(f"{out}/runs.jsonl")]
labels = list(dict.fromkeys(r["label"] for r in rows))
def cell(values, scale=1.0, fmt="{:.2f}"):
    values = sorted(v * scale for v in values)
    med = statistics.median(values)
    return f"{fmt.format(med)} ({fmt.format(values[0])}-{fmt.format(values[-1])})"
lines = [
    "# Start-up and memory of a short run",
    "",
    f"{setup}, {iterations} iterations of a "
    f"{int(nbytes) >> 20} MiB `damaris_write` + `damaris_end_iteration` after {compute_ms} ms of "
    f"computation each{f' (the first after {first_ms} ms)' if first_ms != compute_ms else ''}, a shared buffer of {int(buffer) >> 20} MiB, a store that discards the "
    f"data{', ' + declared + ' more variables declared' if declared != '0' else ''}. "
    f"Median (min-max) of {runs} runs per row, alternated; peak resident memory is VmHWM. "
    f"\"without Sidecore\": the same loop in one process, copying into its own array.",
    "",
    "| build | wall (s) | initialize+start (s) | first write (ms) | faults in first write | "
    "later writes, mean (ms) | slowest later write (ms) | client peak RSS (MiB) | "
    "core/node peak RSS (MiB) |",
    "|---|---|---|---|---|---|---|---|---|",
]
for label in labels:
    mine = [r for r in rows if r["label"] == label]
    clients = [r for r in mine if r["role"] in ("client", "alone")]
    servers = [r for r in mine if r["role"] == "server"]
    wall = [max(r["wall_s"] for r in mine if r["run"] == run) for run in sorted({r["run"] for r in mine})]
    lines.append("| " + " | ".join([
        label,
        cell(wall),
        cell([r["init_s"] for r in clients], fmt="{:.3f}"),
        cell([r["first_write_s"] for r in clients], 1e3, "{:.1f}"),
        cell([r["first_write_faults"] for r in clients], fmt="{:.0f}"),
        cell([r.get("mean_later_write_s", float("nan")) for r in clients], 1e3, "{:.1f}"),
        cell([r["worst_write_s"] for r in clients], 1e3, "{:.1f}"),
        cell([r["peak_rss_kib"] for r in clients], 1 / 1024, "{:.0f}"),
        cell([r["peak_rss_kib"] for r in servers], 1 / 1024, "{:.0f}") if servers else "-",
    ]) + " |")
lines += ["", f"Load at the end: `{load.strip()}`", ""]
open(f"{out}/startup.md", "w").write("\n".join(lines))
print("\n".join(lines))
EOF
