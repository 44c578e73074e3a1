#!/usr/bin/env bash
# Runs one benchmark script of bench/ in a quick mode against this build tree, its outputs in
# WORK_DIR (never in bench/results), then checks what it wrote (check_results.py). The numbers
# mean nothing: the test fails when the harness breaks (a script exits non-zero, a read-back
# finds wrong or missing data, a result file lacks what the script should have put in it).
#
# usage: run_bench.sh NAME SOURCE_DIR BUILD_DIR WORK_DIR      (ctest: bench.NAME)
# Environment: SIDECORE_TEST_PYTHON (a python3 with numpy and h5py: BUILD_DIR/venv/bin/python
# when unset and present, else python3), SIDECORE_TEST_MPIEXEC (the launcher and its flags, set
# by ctest: tests/CMakeLists.txt), BENCH_INSTRUCTIONS=0 (small_calls_versus: no callgrind).
set -euo pipefail
[ $# = 4 ] || { sed -n '7p' "$0" >&2; exit 2; }
name=$1 source=$(cd "$2" && pwd) build=$(cd "$3" && pwd) work=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench=$source/bench

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
# Files of bench/ newer than this one at the end were written by the benchmark: see below.
marker=$work/started
touch "$marker"
# Anything a job writes to its working directory lands in WORK_DIR.
cd "$work"

python=${SIDECORE_TEST_PYTHON:-}
if [ -z "$python" ]; then
  if [ -x "$build/venv/bin/python" ]; then python=$build/venv/bin/python; else python=python3; fi
fi
export PYTHON=$python
# The scripts start their jobs with MPIRUN and MPIRUN_FLAGS: the build's launcher.
if [ -n "${SIDECORE_TEST_MPIEXEC:-}" ]; then
  read -r -a launcher <<< "$SIDECORE_TEST_MPIEXEC"
  export MPIRUN=${launcher[0]} MPIRUN_FLAGS="${launcher[*]:1}"
fi

case $name in
  micro)
    "$bench/run_micro.sh" "$build" --quick --reps 1 --out "$work/micro" --stream-dir "$work"
    ;;
  compare_micro)
    # --versus runs both builds side by side and calls compare_micro.py on their micro.json;
    # then compare_micro.py again with two pairs (one column pair per run).
    "$bench/run_micro.sh" "$build" --quick --reps 1 --no-hdf5 --no-modes --no-experiments \
      --versus "$build" --out "$work/new" --versus-out "$work/base"
    "$python" "$bench/compare_micro.py" "$work/base/micro.json" "$work/new/micro.json" \
      "$work/base/micro.json" "$work/new/micro.json" > "$work/two_pairs.md"
    ;;
  startup)
    "$bench/run_startup.sh" --runs 1 --iterations 2 --compute-ms 5 --first-compute-ms 2 \
      --bytes 1048576 --buffer 16777216 --declared 3 --out "$work/startup" \
      "now=$build/bench/sidecore_startup"
    ;;
  fresh_pages)
    mkdir -p "$work/fresh"
    "$build/bench/sidecore_fresh_pages" --mib 8 --rounds 1 --out "$work/fresh"
    ;;
  compute_phase)
    # The configuration's environment variable is the default value: the -x path, no change.
    "$bench/run_compute_phase.sh" --quick --idle-cpu --out "$work/phase" \
      "now=$build,SIDECORE_IDLE_POLL_US=1000"
    ;;
  cold_write)
    "$python" "$bench/run_cold_write.py" --quick --lines --out "$work/cold" "now=$build"
    ;;
  blocks)
    BLOCKS_ITERATIONS=3 "$bench/blocks/run_blocks_bench.sh" "$build" 1 "$work/blocks.md"
    ;;
  blocks_scale)
    # Past the ring's 1,024 notifications, in every mode; each run read back and checked.
    BLOCK_COUNTS=3000 ELEMENTS=8 ITERATIONS=3 "$bench/blocks/run_many_blocks.sh" "$build" \
      "$work/blocks_scale.md"
    ;;
  output)
    "$python" "$bench/output/run_output.py" --build "$build" --quick --workdir "$work" \
      --out "$work/output"
    ;;
  python)
    "$python" "$bench/python/run_python.py" "$build" --quick --python "$python" \
      --out "$work/python"
    ;;
  perturbation)
    # Both targets: the local disk and throttlefs (bench/throttle), mounted in this folder.
    THROTTLE_BUILD="$work/throttlefs-build" THROTTLE_BACKING="$work/throttled.backing" \
      "$python" "$bench/schedule/run_perturbation.py" --build "$build" --quick \
      --targets disk,throttled --throttle-mount "$work/throttled" --grid 32 --sweeps 10 \
      --output "$work/perturbation"
    ;;
  scale)
    # Two small points per dimension, with and without the master file, each read back.
    "$python" "$bench/scale/run_scale.py" --build "$build" --quick --workdir "$work/runs" \
      --out "$work/scale"
    ;;
  paraview_cost)
    "$python" "$bench/paraview/run_cost.py" "$build" --runs 1 --iterations 10 --steps 100 \
      --out "$work/paraview"
    ;;
  paraview_first_iteration)
    "$python" "$bench/paraview/run_first_iteration.py" "this build=$build" --runs 1 \
      --compute-ms 200 --out "$work/paraview"
    ;;
  small_calls_versus)
    instructions=()
    if [ "${BENCH_INSTRUCTIONS:-1}" != 0 ] && command -v valgrind > /dev/null &&
        command -v callgrind_annotate > /dev/null; then
      instructions=(--instructions)
    fi
    "$python" "$bench/small_calls_versus.py" "$build" "$build" --rounds 1 \
      "${instructions[@]}" --out "$work/small_calls.md"
    ;;
  proxy_matrix)
    # Every configuration, the ADIOS2 ones included (scripts/test.sh builds the proxy with the
    # ADIOS2 wheel), on both targets: the local disk and throttlefs, mounted for the run.
    # (grep reads all of ldd's output: with -q it would stop early, and pipefail fail on ldd.)
    if ! ldd "$build/bench/proxy/proxy" | grep libadios2 > /dev/null; then
      echo "run_bench.sh: the proxy of $build was built without ADIOS2; scripts/test.sh builds" \
        "it with the ADIOS2 wheel (SIDECORE_WITH_ADIOS2=1 scripts/python_env.sh $build)" >&2
      exit 1
    fi
    configs=hdf5-fpp,phdf5,adios2,adios2-async,sc-core-fpc,sc-core-alloc,sc-core-coll,sc-node-fpc
    THROTTLE_BUILD="$work/throttlefs-build" THROTTLE_BACKING="$work/throttled.backing" \
      "$python" "$bench/proxy/run_matrix.py" --build "$build/bench/proxy" --quick \
      --targets disk,throttled --throttle-mount "$work/throttled" \
      --only "$configs,sc-thread-fpc,sc-sync-fpc,sc-sync-coll" --workdir "$work/matrix" \
      --out "$work/matrix-results"
    # The tiles of that matrix, and the scaling curve at two sizes (both read back).
    "$python" "$bench/proxy/plot_tiles.py" --results "$work/matrix-results"
    "$python" "$bench/proxy/run_scaling.py" --build "$build/bench/proxy" --sizes 0.25,1 \
      --phases 2 --reps 1 --buffer-mib 32 --out "$work/scaling"
    ;;
  *)
    echo "run_bench.sh: unknown benchmark '$name'" >&2
    exit 2
    ;;
esac

# The committed results stay as they are.
written=$(find "$bench" -path '*/results/*' -type f -newer "$marker" -print)
if [ -n "$written" ]; then
  echo "run_bench.sh: bench.$name wrote into the committed results:" >&2
  echo "$written" >&2
  exit 1
fi
if [ "$name" = scale ]; then
  # The scaling benchmark checks its own outputs (the same rules as check_results.py).
  "$python" "$bench/scale/run_scale.py" --check "$work/scale"
else
  "$python" "$here/check_results.py" "$name" "$work"
fi
