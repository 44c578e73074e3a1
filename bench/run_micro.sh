#!/usr/bin/env bash
# Runs the write-path micro-benchmark (sidecore_micro_write) under mpirun in three setups and
# writes the results table: bench/results/micro.md and micro.json. Builds nothing.
#
# usage: bench/run_micro.sh BUILD_DIR [--reps N] [--out DIR] [--quick] [--no-hdf5]
#   BUILD_DIR   a build of this project with the target sidecore_micro_write
#   --reps N    separate runs (processes) per measurement; medians are taken over them (5)
#   --out DIR   where micro.md and micro.json go (bench/results)
#   --quick     two sizes and few iterations: checks the harness, not the numbers
#   --no-hdf5   skip the run with the HDF5 store
# Environment: MPIRUN (mpirun), MPIRUN_FLAGS (--oversubscribe), TMPDIR (for HDF5 output).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command_line="bench/run_micro.sh $*"

usage() { sed -n '4,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }

[ $# -ge 1 ] || usage
case "$1" in -h|--help) usage 0 ;; esac
build=$(cd "$1" && pwd)
shift
reps=5
out="$here/results"
quick=0
with_hdf5=1
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --no-hdf5) with_hdf5=0; shift ;;
    -h|--help) usage 0 ;;
    *) echo "run_micro.sh: unknown option '$1'" >&2; usage ;;
  esac
done

exe="$build/bench/sidecore_micro_write"
if [ ! -x "$exe" ]; then
  echo "run_micro.sh: $exe not found; build it first:" >&2
  echo "  cmake --build $build --target sidecore_micro_write" >&2
  exit 1
fi
mpirun_cmd=${MPIRUN:-mpirun}
read -r -a mpirun_flags <<< "${MPIRUN_FLAGS:---oversubscribe}"
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sidecore-micro.XXXXXX")
trap 'rm -rf "$work"' EXIT
raw="$work/raw.jsonl"
: > "$raw"

# Sizes of "field" and iterations after the first, per size: enough samples for a stable
# median without letting the 256 MiB runs dominate the time.
if [ "$quick" = 1 ]; then
  sizes=(4096 1048576)
  declare -A steady=([4096]=20 [1048576]=10)
  declare -A steady_hdf5=([4096]=5 [1048576]=5)
  small_writes=10000
  empty_iterations=1000
else
  sizes=(4096 65536 1048576 16777216 67108864 268435456)
  declare -A steady=([4096]=200 [65536]=200 [1048576]=100 [16777216]=30 [67108864]=15
                     [268435456]=8)
  declare -A steady_hdf5=([4096]=40 [65536]=40 [1048576]=20 [16777216]=8 [67108864]=5
                          [268435456]=4)
  small_writes=100000
  empty_iterations=10000
fi

# Runs one process group; keeps its result lines. Arguments: label np template bytes args...
run() {
  local label=$1 np=$2 template=$3 bytes=$4
  shift 4
  local config="$work/$label.xml" output="$work/hdf5-output"
  rm -rf "$output" && mkdir -p "$output"
  sed -e "s|@BYTES@|$bytes|g" -e "s|@OUTPUT@|$output|g" "$here/$template" > "$config"
  if ! "$mpirun_cmd" "${mpirun_flags[@]}" -np "$np" "$exe" "$config" --label "$label" "$@" \
      > "$work/stdout" 2> "$work/stderr"; then
    echo "run_micro.sh: failed: $mpirun_cmd ${mpirun_flags[*]} -np $np $exe $config $*" >&2
    cat "$work/stderr" "$work/stdout" >&2
    exit 1
  fi
  sed -n 's/^MICRO //p' "$work/stdout" >> "$raw"
  rm -rf "$output"
}

# The client's compute phase between two iterations: long enough for the dedicated core to
# have released the previous block (null store), or to have stored it (HDF5, ~5 ns/byte).
pause_null() { echo $((200 + $1 / 8192)); }
pause_hdf5() { echo $((2000 + $1 * 5 / 1000)); }

started=$(date +%s)
# Repetitions are the outer loop and the setups alternate inside it, so that a noisy moment
# of the machine hits every setup alike.
for ((rep = 1; rep <= reps; ++rep)); do
  echo "run_micro.sh: repetition $rep of $reps" >&2
  for bytes in "${sizes[@]}"; do
    n=${steady[$bytes]}
    run dedicated 2 micro_dedicated.xml "$bytes" --phases write,alloc --iterations "$n" \
      --pause-us "$(pause_null "$bytes")"
    run sync 1 micro_sync.xml "$bytes" --phases write,alloc --iterations "$n" \
      --pause-us "$(pause_null "$bytes")"
    if [ "$with_hdf5" = 1 ] && [ "$rep" -le 3 ]; then
      run hdf5 2 micro_hdf5.xml "$bytes" --phases write --iterations "${steady_hdf5[$bytes]}" \
        --pause-us "$(pause_hdf5 "$bytes")"
    fi
  done
  for setup in dedicated:2 sync:1; do
    run "${setup%:*}" "${setup#*:}" "micro_${setup%:*}.xml" 4096 --phases small,empty \
      --small-writes "$small_writes" --small-per-iteration 100 --empty "$empty_iterations"
  done
done
elapsed=$(($(date +%s) - started))

mkdir -p "$out"
mpi_version=$("$mpirun_cmd" --version 2>/dev/null | head -n 1 || true)
cpu_model=$(grep -m 1 'model name' /proc/cpuinfo | sed 's/.*: //')
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)

RAW="$raw" OUT="$out" COMMAND="$command_line" REPS="$reps" ELAPSED="$elapsed" \
CPU_MODEL="$cpu_model" NPROC="$(nproc)" KERNEL="$(uname -r)" MPI_VERSION="$mpi_version" \
BUILD_TYPE="$build_type" QUICK="$quick" python3 - <<'PY'
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
}

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
    for key in ("write", "end_iteration", "memcpy_warm", "memcpy_cold"):
        row["first_" + key] = median([r["first"][key] for r in runs])
        row["steady_" + key] = median([r["steady"][key]["median"] for r in runs])
    # Ratios are taken inside each run (same process, same minutes), then the median over runs.
    # The first write is compared with the steady memcpy medians of its own run: a single
    # memcpy sample is as noisy as the write it would judge.
    for base in ("warm", "cold"):
        row["steady_ratio_" + base] = median(
            [r["steady"]["write"]["median"] / r["steady"]["memcpy_" + base]["median"] for r in runs])
        row["first_ratio_" + base] = median(
            [r["first"]["write"] / r["steady"]["memcpy_" + base]["median"] for r in runs])
    return row

def alloc_row(label, size):
    runs = group(label, "alloc", size)
    row = {"setup": label, "bytes": size, "runs": len(runs), "iterations": runs[0]["iterations"]}
    for key in ("alloc_commit_clear", "alloc", "commit", "clear", "end_iteration"):
        row["first_" + key] = median([r["first"][key] for r in runs])
        row["steady_" + key] = median([r["steady"][key]["median"] for r in runs])
        row["hot_" + key] = median([r["hot"][key]["median"] for r in runs])
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

labels = ("dedicated", "sync", "hdf5")
results = {
    "write": [write_row(l, s) for l in labels for s in sizes_of(l, "write")],
    "alloc": [alloc_row(l, s) for l in labels for s in sizes_of(l, "alloc")],
    "small": [x for x in (plain_row(l, "small", ("write", "end_iteration")) for l in labels) if x],
    "empty": [x for x in (plain_row(l, "empty", ("end_iteration",)) for l in labels) if x],
}

def find(rows, setup, size=None):
    for row in rows:
        if row["setup"] == setup and (size is None or row["bytes"] == size):
            return row
    return None

# Targets, judged on the dedicated-core setup (the one they are written for).
MiB = 1 << 20
big = [r for r in results["write"] if r["setup"] == "dedicated" and r["bytes"] >= MiB]
worst_write = max((max(r["steady_ratio_warm"], r["first_ratio_warm"]) for r in big), default=None)
allocs = [r for r in results["alloc"] if r["setup"] == "dedicated"]
worst_alloc = max((r["steady_alloc_commit_clear"] for r in allocs), default=None)
worst_alloc_first = max((r["first_alloc_commit_clear"] for r in allocs), default=None)
worst_alloc_hot = max((r["hot_alloc_commit_clear"] for r in allocs), default=None)
small = find(results["small"], "dedicated")
empty = find(results["empty"], "dedicated")
targets = [
    {"name": "damaris_write >= 1 MiB, first and steady, / memcpy (warm)",
     "target": 1.1, "unit": "x", "measured": worst_write,
     "damaris": "steady ~0.9x (64 MiB), first ~9x"},
    {"name": "damaris_alloc + commit + clear, any size, after a compute phase (steady median)",
     "target": 2000, "unit": "ns", "measured": worst_alloc, "damaris": "-"},
    {"name": "damaris_alloc + commit + clear, any size, back to back (median)",
     "target": 2000, "unit": "ns", "measured": worst_alloc_hot, "damaris": "-"},
    {"name": "damaris_write of one int (median per call)",
     "target": 1000, "unit": "ns", "measured": small and small["write"], "damaris": "~80 us"},
    {"name": "empty damaris_end_iteration (median)",
     "target": 5000, "unit": "ns", "measured": empty and empty["end_iteration"],
     "damaris": "~50 us"},
]
for t in targets:
    t["met"] = t["measured"] is not None and t["measured"] <= t["target"]

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
add(f"- Each number is the median over {meta['repetitions']} separate runs (3 for HDF5) of the "
    "per-run value (first iteration) or per-run median (steady state). Ratios are computed "
    "inside each run, side by side in the same process, then the median is taken.")
if meta["quick"]:
    add("- **Quick mode: harness check only, not representative.**")
add("- Damaris 1.7 figures are reference numbers from the project issue, measured on this kind "
    "of machine, not by this harness.")
add("")
add("## Targets (dedicated core, null store)")
add("")
add("| what | Damaris 1.7 | target | Sidecore | met? |")
add("|---|---|---|---|---|")
for target in targets:
    measured, goal = shown(target)
    add(f"| {target['name']} | {target['damaris']} | {goal} | {measured} | "
        f"{'yes' if target['met'] else '**NO**'} |")
add("")
add(f"First-iteration alloc+commit+clear (largest over sizes): {t(worst_alloc_first)}; "
    "the target above is judged on the steady state.")
add("")

titles = {
    "dedicated": "one client + one dedicated core (np 2), null store",
    "sync": "synchronous mode, no dedicated core (np 1), null store",
    "hdf5": "one client + one dedicated core (np 2), HDF5 FilePerCore store in a temp dir",
}
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
        "back to back | alloc | commit | clear | end_iteration steady |")
    add("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        add(f"| {size(r['bytes'])} | {t(r['first_alloc_commit_clear'])} | "
            f"{t(r['steady_alloc_commit_clear'])} | {t(r['steady_alloc'])} | "
            f"{t(r['steady_commit'])} | {t(r['steady_clear'])} | "
            f"{t(r['hot_alloc_commit_clear'])} | {t(r['hot_alloc'])} | "
            f"{t(r['hot_commit'])} | {t(r['hot_clear'])} | {t(r['steady_end_iteration'])} |")
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
