#!/usr/bin/env bash
# The client's cost per block as blocks per iteration grow (bench/blocks/many_blocks.c), with the
# default queue, in every mode: for each mode and block count, one client (and one dedicated
# core or node where the mode has one) writes the same bytes as one block and as that many
# blocks of ELEMENTS doubles, alternating; the last iteration is read back and every value
# checked. Writes bench/results/blocks_scale.md (or RESULTS).
#   bench/blocks/run_many_blocks.sh [BUILD | NAME=BUILD...] [RESULTS file]
# With several NAME=BUILD pairs (build directories holding bench/sidecore_many_blocks), each
# run of one build is followed by the same run of the next (in the reverse order at every
# second repetition): side by side in one table.
# Environment: BLOCK_COUNTS ("1000 3000 10000 30000 100000"), MODES ("cores nodes thread
# sync"), ELEMENTS (64), ITERATIONS (6; the first is not timed), REPS (1), MPIRUN (mpirun),
# FILE_MODE (FilePerCore; Collective measures the collective writes: in mode sync the store runs
# inside damaris_end_iteration, whose time is then the store's).
set -euo pipefail
export SIDECORE_REPORT=${SIDECORE_REPORT:-off}
here=$(cd "$(dirname "$0")" && pwd)
builds=()
while [ $# -gt 0 ] && [[ $1 == *=* ]]; do
  builds+=("$1")
  shift
done
if [ ${#builds[@]} -eq 0 ]; then
  builds=("now=${1:-$here/../../build-bench}")
  [ $# -gt 0 ] && shift
fi
results_file=${1:-$here/../results/blocks_scale.md}
for b in "${builds[@]}"; do
  program=${b#*=}/bench/sidecore_many_blocks
  [ -x "$program" ] || { echo "build the benchmarks first ($program is missing)" >&2; exit 1; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
counts=${BLOCK_COUNTS:-1000 3000 10000 30000 100000}
modes=${MODES:-cores nodes thread sync}
elements=${ELEMENTS:-64}
iterations=${ITERATIONS:-6}
reps=${REPS:-1}
file_mode=${FILE_MODE:-FilePerCore}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results=$work/results.txt
for r in $(seq 1 "$reps"); do
  for blocks in $counts; do
    for mode in $modes; do
      unset SIDECORE_RANKS_PER_NODE
      case $mode in
        cores) dedicated='<dedicated cores="1" nodes="0"/>' ranks=2 ;;
        nodes) dedicated='<dedicated cores="0" nodes="1"/>' ranks=2
          export SIDECORE_RANKS_PER_NODE=1 ;;
        thread) dedicated='<dedicated cores="0" nodes="0" threads="1"/>' ranks=1 ;;
        sync) dedicated='<dedicated cores="0" nodes="0"/>' ranks=1 ;;
        *) echo "run_many_blocks.sh: unknown mode '$mode'" >&2; exit 2 ;;
      esac
      total=$((blocks * elements))
      # Room for the two variables of a few iterations, at least 256 MiB.
      buffer=$((total * 8 * 2 * 4))
      [ "$buffer" -lt 268435456 ] && buffer=268435456
      out=$work/out
      sed -e "s|@OUT@|$out|" -e "s|@TOTAL@|$total|" -e "s|@GLOBAL@|$total|" \
        -e "s|@BUFFER@|$buffer|" -e "s|@DEDICATED@|$dedicated|" -e "s|@FILE_MODE@|$file_mode|" \
        "$here/many_blocks.xml" > "$work/m.xml"
      # The order of the builds alternates from one repetition to the next.
      order=("${builds[@]}")
      if [ $((r % 2)) -eq 0 ]; then
        order=()
        for ((i = ${#builds[@]} - 1; i >= 0; i--)); do order+=("${builds[i]}"); done
      fi
      for b in "${order[@]}"; do
        name=${b%%=*} program=${b#*=}/bench/sidecore_many_blocks
        rm -rf "$out"
        "${MPIRUN:-mpirun}" ${MPIRUN_FLAGS:-} -np "$ranks" "$program" write "$work/m.xml" \
          "$iterations" "$blocks" "$elements" | grep '^blocks=' |
          sed "s/^/rep=$r build=$name mode=$mode /" >> "$results"
        "$program" check "$out/many" $((iterations - 1)) 1 "$blocks" "$elements" >&2
      done
    done
  done
done
cat "$results"
python3 - "$results" "$results_file" "$elements" "$iterations" "$(uptime)" "$file_mode" <<'PY'
import statistics, sys
from collections import defaultdict
rows = [dict(kv.split("=", 1) for kv in line.split()) for line in open(sys.argv[1])]
elements, iterations, load, file_mode = sys.argv[3], sys.argv[4], sys.argv[5].strip(), sys.argv[6]
per = defaultdict(list)
for r in rows:
    per[(r["mode"], r["build"], int(r["blocks"]))].append(r)
modes = list(dict.fromkeys(r["mode"] for r in rows))
builds = list(dict.fromkeys(r["build"] for r in rows))
columns = [(m, b) for m in modes for b in builds]
header = "| blocks | " + " | ".join(m if len(builds) == 1 else f"{m} ({b})" for m, b in columns) + " |"
rule = "|---|" + "---|" * len(columns)
counts = sorted({int(r["blocks"]) for r in rows})
def cell(rs, key):
    v = sorted(float(r[key]) for r in rs)
    return f"{v[0]:.3f}" if len(v) == 1 else f"{v[0]:.3f} – {statistics.median(v):.3f} – {v[-1]:.3f}"
lines = [
    "# Cost per block as blocks per iteration grow",
    "",
    f"`bench/blocks/run_many_blocks.sh`: one client writes, per iteration, {elements} doubles per "
    "block as that many blocks (`sidecore_set_block_extents`, `damaris_set_block_position`, "
    "`damaris_write_block`) and the same bytes as one block, alternating; the default queue; "
    f"HDF5 file mode {file_mode}. "
    f"Medians of {int(iterations) - 1} iterations per run (the first left out); with several "
    "runs, min – median – max over them. The last iteration is read back and checked.",
    "",
    f"Load when it ended: `{load}`." + ("" if len(builds) == 1 else
        " Builds, each run followed by the same run of the other(s), the order reversed at every "
        "second repetition: " +
        ", ".join(f"`{b}`" for b in builds) + "."),
    "",
    "Cost per block beyond the copy (µs): (time of the blocks − time of one block of the same "
    "bytes) / blocks.",
    "",
    header,
    rule,
]
for n in counts:
    lines.append(f"| {n} | " + " | ".join(cell(per[(m, b, n)], "per_block_us") for m, b in columns) + " |")
lines += ["", "`damaris_end_iteration` after the blocks (µs)" +
          ("; in mode sync it stores the iteration, so its time is the store's" if "sync" in modes
           else "") + ":", "", header, rule]
for n in counts:
    lines.append(f"| {n} | " + " | ".join(cell(per[(m, b, n)], "end_us") for m, b in columns) + " |")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
