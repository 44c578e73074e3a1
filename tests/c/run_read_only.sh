#!/usr/bin/env bash
# FilesPath on a read-only file system (a tmpfs mounted read-only inside unshare -m; skipped
# without root): damaris_initialize fails on every rank, naming the directory, at once.
# usage: run_read_only.sh <program> <xml template> <dedicated cores> <ranks>
set -euo pipefail
program=$1 template=$2 cores=$3 ranks=$4
if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
  echo "SKIP: needs root and unshare -m to mount a read-only file system"
  exit 77
fi
work=$(mktemp -d /tmp/sidecore-read-only-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ro"
sed "s#@CORES@#$cores#; s#@OUT@#$work/ro#; s#@FILEMODE@#FilePerCore#" "$template" > "$work/ro.xml"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# The launcher of the build's MPI (set by ctest, tests/CMakeLists.txt).
launcher=${SIDECORE_TEST_MPIEXEC:-mpirun --oversubscribe}
set +e
unshare -m bash -c "mount -t tmpfs -o ro,size=1m tmpfs '$work/ro' &&
  timeout 60 $launcher -np $ranks '$program' '$work/ro.xml' 3 > '$work/out.txt' 2>&1;
  echo \$? > '$work/status'"
set -e
status=$(cat "$work/status")
tail -5 "$work/out.txt"
[ "$status" -ne 124 ] || { echo "FAIL: the job hung"; exit 1; }
count=$(grep -c "cannot write into directory \"$work/ro/\".*Read-only file system" "$work/out.txt" || true)
[ "$count" -ge "$ranks" ] ||
  { echo "FAIL: $count of $ranks ranks reported the read-only FilesPath at initialization"; exit 1; }
echo "every rank refused the read-only FilesPath at damaris_initialize"
