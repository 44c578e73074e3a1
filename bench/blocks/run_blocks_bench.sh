#!/bin/sh
# Irregular blocks benchmark (docs/blocks.md): 2 clients and 1 dedicated core; per iteration
# each client writes 1,000 blocks of 1-64 KiB, or one block of the same bytes, alternately,
# REPS times; then the last iteration of each run is read back whole with sidecore_read_region,
# beside dd reading the same files. Writes bench/results/blocks.md.
#   bench/blocks/run_blocks_bench.sh [build directory] [repetitions]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build-bench}
reps=${2:-3}
program=$build/bench/sidecore_blocks_bench
[ -x "$program" ] || { echo "build the benchmarks first ($program is missing)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# The elements one client writes per iteration (blocks_bench.c's segment_sizes), times 2 clients.
global=$(python3 -c '
s, t = 12345, 0
for i in range(1000):
    s = (s * 6364136223846793005 + 1442695040888963407) % 2**64
    t += (1 + (s >> 33) % 64) * 1024 // 8
print(2 * t)')
iterations=6
results=$work/results.txt
for r in $(seq 1 "$reps"); do
  for blocks in 1000 1; do
    out=$work/out_$blocks
    rm -rf "$out"
    sed -e "s|@OUT@|$out|" -e "s|@GLOBAL@|$global|" "$here/blocks_bench.xml" > "$work/b.xml"
    mpirun -np 3 "$program" write "$work/b.xml" $iterations $blocks | grep '^blocks=' | sed "s/^/rep=$r /" >> "$results"
    last=$((iterations - 1))
    start=$(date +%s.%N)
    cat "$out"/blocks_It${last}_Pr*.h5 | dd of=/dev/null bs=4M 2>/dev/null
    end=$(date +%s.%N)
    bytes=$(cat "$out"/blocks_It${last}_Pr*.h5 | wc -c)
    dd_mibps=$(python3 -c "print(f'{$bytes / 1048576 / ($end - $start):.1f}')")
    "$program" read "$out/blocks" $last | sed "s/^/rep=$r dd_MiBps=$dd_mibps /" >> "$results"
  done
done
cat "$results"
python3 - "$results" "$here/../results/blocks.md" "$reps" <<'PY'
import re, statistics, sys
rows = [dict(kv.split("=") for kv in line.split() if "=" in kv) for line in open(sys.argv[1])]
def med(key, **match):
    vals = [float(r[key]) for r in rows if key in r and all(r.get(k) == v for k, v in match.items())]
    return statistics.median(vals)
w1000 = [r for r in rows if r.get("blocks") == "1000" and "store_MiBps" in r]
ratio = statistics.median(float(a["store_MiBps"]) / float(b["store_MiBps"])
                          for a, b in zip(w1000, [r for r in rows if r.get("blocks") == "1" and "store_MiBps" in r]))
reads = [r for r in rows if r.get("read") is not None or "read_MiBps" in r]
read_ratio = statistics.median(float(r["read_MiBps"]) / float(r["dd_MiBps"]) for r in reads)
with open(sys.argv[2], "w") as f:
    f.write(f"""# Irregular blocks (bench/blocks/run_blocks_bench.sh)

2 clients and 1 dedicated core on this machine (2 cores, noisy VM); each client writes, per
iteration, 1,000 blocks of 1-64 KiB (about {float(w1000[0]['bytes'])/1048576:.1f} MiB) or one
block of the same bytes, each with its own extents and position; medians of {sys.argv[3]}
repetitions, the two cases alternating. Files land in the page cache (tmp directory).

| measure | 1,000 blocks | 1 block | target |
|---|---|---|---|
| client cost beyond the copy, per block (us) | {med('beyond_copy_us_per_block', blocks='1000'):.3f} | (one block: within the noise of a 32 MiB copy) | at most 1 us |
| store time per iteration (ms) | {med('store_ms', blocks='1000'):.1f} | {med('store_ms', blocks='1'):.1f} | |
| store throughput (MiB/s) | {med('store_MiBps', blocks='1000'):.0f} | {med('store_MiBps', blocks='1'):.0f} | 1,000 blocks at least half of 1 block |
| paired ratio 1,000 / 1 block | {ratio:.2f} | | at least 0.5 |
| read back whole (MiB/s, sidecore_read_region) | {statistics.median(float(r['read_MiBps']) for r in reads[0::2]):.0f} | {statistics.median(float(r['read_MiBps']) for r in reads[1::2]):.0f} | |
| dd of the same files (MiB/s) | {statistics.median(float(r['dd_MiBps']) for r in reads[0::2]):.0f} | {statistics.median(float(r['dd_MiBps']) for r in reads[1::2]):.0f} | |
| paired ratio read / dd (all runs) | {read_ratio:.2f} | | at least 0.5 |
""")
print(open(sys.argv[2]).read())
PY
