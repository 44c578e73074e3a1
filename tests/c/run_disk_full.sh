#!/usr/bin/env bash
# Runs disk_full in a private mount namespace whose FilesPath is a 2 MiB tmpfs, then checks that
# the job ended (no crash, no hang), reported the full disk, and left only complete files.
# Needs root and unshare -m; skipped (exit 77) otherwise.
# usage: run_disk_full.sh <disk_full program> <xml template> <dedicated cores> <ranks> [file mode]
#        [dedicated nodes] [I/O threads]  (with dedicated nodes, each rank is a virtual node of
#        its own; with I/O threads, the stores run on a thread of each client)
set -euo pipefail
program=$1 template=$2 cores=$3 ranks=$4 filemode=${5:-FilePerCore} nodes=${6:-0} threads=${7:-0}
if [ "$nodes" -gt 0 ]; then export SIDECORE_RANKS_PER_NODE=1; else unset SIDECORE_RANKS_PER_NODE; fi
python=${SIDECORE_TEST_PYTHON:-python3}
if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
  echo "SKIP: needs root and unshare -m to mount a small file system"
  exit 77
fi
work=$(mktemp -d /tmp/sidecore-disk-full-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/full"
sed "s#@CORES@#$cores#; s#@OUT@#$work/full#; s#@FILEMODE@#$filemode#; s#nodes=\"0\"#nodes=\"$nodes\" threads=\"$threads\"#" \
  "$template" > "$work/full.xml"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# The launcher of the build's MPI (set by ctest, tests/CMakeLists.txt).
launcher=${SIDECORE_TEST_MPIEXEC:-mpirun --oversubscribe}
set +e
unshare -m bash -c "mount -t tmpfs -o size=2m tmpfs '$work/full' &&
  timeout 120 $launcher -np $ranks '$program' '$work/full.xml' 100 > '$work/out.txt' 2>&1;
  echo \$? > '$work/status';
  ls -A '$work/full' > '$work/listing';
  for f in '$work/full'/*.h5; do cp \"\$f\" '$work/' 2>/dev/null || true; done"
set -e
status=$(cat "$work/status")
cat "$work/out.txt" | grep -v 'error: iteration' | tail -20
[ "$status" -eq 0 ] || { echo "FAIL: the job ended with status $status (124: hang; 139: crash)"; exit 1; }
if grep -q "infinite loop closing library\|Segmentation fault\|signal 11" "$work/out.txt"; then
  echo "FAIL: HDF5 or the process did not shut down cleanly"
  exit 1
fi
grep -q "No space left on device" "$work/out.txt" ||
  { echo "FAIL: the full disk was not reported"; exit 1; }
grep -q "\.tmp\|\.part" "$work/listing" && { echo "FAIL: temporary files left"; exit 1; }
"$python" - "$work" <<'PY'
import glob, os, re, sys
import h5py, numpy as np
work = sys.argv[1]
files = sorted(f for f in glob.glob(os.path.join(work, "full_It*.h5"))
               if "_Pr" in f or not glob.glob(os.path.join(work, "full_It*_Pr*.h5")))
if not files:
    sys.exit("FAIL: no file was stored before the disk filled up")
for name in files:
    it = int(re.search(r"_It(\d+)(_Pr\d+)?\.h5$", name).group(1))
    try:
        with h5py.File(name, "r") as h5:
            for path, ds in h5["field"].items():
                src = int(path[1:])
                want = it * 1e6 + src * 1e5 + np.arange(64 * 64, dtype=np.float64).reshape(64, 64)
                if not np.array_equal(ds[...], want):
                    sys.exit(f"FAIL: {name}: field/{path} holds wrong values")
    except OSError as e:
        sys.exit(f"FAIL: {name} is left behind unreadable: {e}")
print(f"{len(files)} complete files left behind, every value checked; the rest was reported")
PY
