#!/usr/bin/env bash
# Irregular blocks benchmark (docs/blocks.md): 1 client and 1 dedicated core; per iteration
# the client writes 1,000 blocks of 1-64 KiB stored one dataset per block (BlockLayout
# Datasets), the same 1,000 blocks with the default layout (BlockLayout Auto, which packs them:
# one dataset and an index per variable and file), or one block of the same bytes; the three
# cases alternate, REPS times. The last iteration of each run is then read
# back whole with sidecore_read_region (and every value checked), beside dd reading the same
# files. Writes bench/results/blocks.md (or RESULTS).
#   bench/blocks/run_blocks_bench.sh [build directory] [repetitions] [RESULTS file]
# Environment: BLOCKS_ITERATIONS, iterations per run (16; at least 3: the first is not timed);
# MPIRUN (mpirun).
set -euo pipefail
# Benchmarks leave no run report behind (docs/observability.md).
export SIDECORE_REPORT=${SIDECORE_REPORT:-off}
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build-bench}
reps=${2:-3}
results_file=${3:-$here/../results/blocks.md}
program=$build/bench/sidecore_blocks_bench
[ -x "$program" ] || { echo "build the benchmarks first ($program is missing)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# The elements the client writes per iteration (blocks_bench.c's segment_sizes).
global=$(python3 -c '
s, t = 12345, 0
for i in range(1000):
    s = (s * 6364136223846793005 + 1442695040888963407) % 2**64
    t += (1 + (s >> 33) % 64) * 1024 // 8
print(t)')
iterations=${BLOCKS_ITERATIONS:-16}
results=$work/results.txt
for r in $(seq 1 "$reps"); do
  for case in datasets auto one; do
    case $case in
      datasets) blocks=1000 layout=Datasets ;;
      auto) blocks=1000 layout=Auto ;;
      one) blocks=1 layout=Auto ;;
    esac
    out=$work/out_$case
    rm -rf "$out"
    sed -e "s|@OUT@|$out|" -e "s|@GLOBAL@|$global|" -e "s|@LAYOUT@|$layout|" \
      "$here/blocks_bench.xml" > "$work/b.xml"
    "${MPIRUN:-mpirun}" -np 2 "$program" write "$work/b.xml" $iterations $blocks | grep '^blocks=' |
      sed "s/^/rep=$r case=$case /" >> "$results"
    last=$((iterations - 1))
    start=$(date +%s.%N)
    cat "$out"/blocks_It${last}_Pr*.h5 | dd of=/dev/null bs=4M 2>/dev/null
    end=$(date +%s.%N)
    bytes=$(cat "$out"/blocks_It${last}_Pr*.h5 | wc -c)
    dd_mibps=$(python3 -c "print(f'{$bytes / 1048576 / ($end - $start):.1f}')")
    "$program" read "$out/blocks" $last | sed "s/^/rep=$r case=$case dd_MiBps=$dd_mibps /" >> "$results"
  done
done
cat "$results"
python3 - "$results" "$results_file" "$reps" "$((iterations - 1))" <<'PY'
import statistics, sys
rows = [dict(kv.split("=", 1) for kv in line.split() if "=" in kv) for line in open(sys.argv[1])]
writes = [r for r in rows if "store_MiBps" in r]
reads = [r for r in rows if "read_MiBps" in r]
def med(table, key, case):
    return statistics.median(float(r[key]) for r in table if r["case"] == case)
def paired(table, key, case, base):
    """Median over repetitions of case/base, each pair from the same repetition."""
    by = {(r["rep"], r["case"]): float(r[key]) for r in table}
    return statistics.median(by[(rep, case)] / by[(rep, base)]
                             for rep, c in by if c == case and (rep, base) in by)
read_ratio = statistics.median(float(r["read_MiBps"]) / float(r["dd_MiBps"]) for r in reads)
mib = float(writes[0]["bytes"]) / 1048576
cases = ("datasets", "auto", "one")
def beyond_copy(case):
    """Median over repetitions of (write time of 1,000 blocks - write time of the same bytes
    as one block) / 1,000, each pair from the same repetition: the copy into shared memory
    cancels out."""
    by = {(r["rep"], r["case"]): r for r in writes}
    return statistics.median(
        (float(by[(rep, case)]["write_us"]) - float(by[(rep, "one")]["write_us"])) /
        float(by[(rep, case)]["blocks"])
        for rep, c in by if c == case and (rep, "one") in by)
def row(label, values, target=""):
    return f"| {label} | " + " | ".join(values) + f" | {target} |\n"
table = "| measure | 1,000 blocks, Datasets | 1,000 blocks, Auto (packed) | 1 block | target |\n"
table += "|---|---|---|---|---|\n"
table += row("client write time per iteration (ms)",
             [f"{med(writes, 'write_us', c) / 1000:.2f}" for c in cases])
table += row("memcpy of the same bytes, private memory (ms)",
             [f"{med(writes, 'copy_us', c) / 1000:.2f}" for c in cases])
table += row("client cost beyond the copy, per block (us; paired with 1 block)",
             [f"{beyond_copy(c):.3f}" for c in cases[:2]] + [""], "at most 1 us")
table += row("store time per iteration (ms)", [f"{med(writes, 'store_ms', c):.1f}" for c in cases])
table += row("store throughput (MiB/s)", [f"{med(writes, 'store_MiBps', c):.0f}" for c in cases])
table += row("paired store ratio to 1 block",
             [f"{paired(writes, 'store_MiBps', c, 'one'):.2f}" for c in cases[:2]] + [""],
             "at least 0.5")
table += row("open the iteration (ms, sidecore_read_open)",
             [f"{med(reads, 'open_ms', c):.1f}" for c in cases])
table += row("read back whole (MiB/s, sidecore_read_region)",
             [f"{med(reads, 'read_MiBps', c):.0f}" for c in cases])
table += row("dd of the same files (MiB/s)", [f"{med(reads, 'dd_MiBps', c):.0f}" for c in cases])
table += row("paired read / dd", [f"{paired_rd:.2f}" for paired_rd in
             [statistics.median(float(r['read_MiBps']) / float(r['dd_MiBps'])
                                for r in reads if r['case'] == c) for c in cases]],
             f"at least 0.5 (all runs: {read_ratio:.2f})")
with open(sys.argv[2], "w") as f:
    f.write(f"""# Irregular blocks (bench/blocks/run_blocks_bench.sh)

1 client and 1 dedicated core on this machine (2 cores, noisy VM: a second client would share
a core with the dedicated core, whose work would then count in the client's time); the client
writes, per iteration, 1,000 blocks of 1-64 KiB (about {mib:.1f} MiB) or one block of the same bytes,
each with its own extents and position (sidecore_set_block_extents,
damaris_set_block_position, damaris_write_block). The 1,000 blocks are stored one dataset per
block (BlockLayout Datasets, Damaris's names) or with the default layout (BlockLayout Auto,
which packs blocks past <domains count>: one dataset and an index per variable and file).
Each run times {sys.argv[4]} iterations and reports medians; the table gives medians of
{sys.argv[3]} repetitions, the three cases alternating, ratios paired within a repetition. The
client's cost beyond the copy compares the 1,000-block write with the one-block write of the
same bytes, which makes the same copy into shared memory. Files land in the page cache (tmp
directory).

{table}""")
print(open(sys.argv[2]).read())
PY
