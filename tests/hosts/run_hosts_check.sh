#!/usr/bin/env bash
# Runs MPI jobs across 3 emulated hosts (scripts/lib/hosts.sh: own host name, /dev/shm, /tmp
# and IPC objects each) and checks the results value by value:
#   1. hosts_probe (2 ranks per host): host and processor names, MPI_COMM_TYPE_SHARED sizes,
#      and that a file a rank creates in /dev/shm is seen by the ranks of its host only;
#   2. Sidecore with one dedicated core per host (3 ranks per host: 2 clients + 1 server),
#      SIDECORE_RANKS_PER_NODE unset: every value of the HDF5 files (check_hosts_output.py);
#   3. the same with one dedicated node (the 3 ranks of the last host are servers);
#   4. with HOSTS_CHECK_MPICH=1, hosts_probe under MPICH's mpiexec (Hydra) too, on hosts
#      started again with HOSTS_SHARE_IPC=1.
# Then stops the hosts and checks that no process is left in them and that the machine's
# mounts, /etc/hosts and /dev/shm are as they were. Exit status: 0 passed, 1 failed, 77 skipped (not root, no namespaces, no build).
# Usage: tests/hosts/run_hosts_check.sh   (SIDECORE_BUILD_DIR: default build/; HOSTS_CHECK_KEEP=1
# keeps the work directory)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${SIDECORE_BUILD_DIR:-$root/build}
# shellcheck source=../../scripts/lib/hosts.sh
. "$root/scripts/lib/hosts.sh"

skip() {
  echo "run_hosts_check: skipped: $*"
  exit 77
}
fail() {
  echo "run_hosts_check: FAILED: $*" >&2
  exit 1
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
seconds_since() { printf '%d.%03d' $((($(now_ms) - $1) / 1000)) $((($(now_ms) - $1) % 1000)); }

hosts_available || skip "needs root and UTS, IPC and mount namespaces (unshare, nsenter)"
command -v mpicc >/dev/null && command -v mpirun >/dev/null || skip "no mpicc or mpirun"
[ -e "$build/libsidecore.so" ] || skip "no $build/libsidecore.so (build Sidecore first)"
python=""
for candidate in "${SIDECORE_TEST_PYTHON:-}" "$build/venv/bin/python" python3; do
  if [ -n "$candidate" ] && "$candidate" -c "import h5py, numpy" 2>/dev/null; then
    python=$candidate
    break
  fi
done
[ -n "$python" ] || skip "no Python with h5py and numpy"

# What must be as it was after the hosts are gone (other jobs may use /dev/shm meanwhile: only
# the files of this script are looked for there).
machine_state() {
  findmnt -rn -o TARGET,SOURCE,FSTYPE | sort
  md5sum /etc/hosts
  ls -A /dev/shm | grep -E "^(hosts_probe_|hosts_check_marker_)" || true
}
before=$(machine_state)

# The work directory must be seen by every host: not under /tmp or /dev/shm. Those of runs
# that were killed (their process is gone) are removed.
for old in /var/tmp/sidecore-hosts-check.*; do
  [ -d "$old" ] && ! kill -0 "${old##*.}" 2>/dev/null && rm -rf "$old"
done
work=/var/tmp/sidecore-hosts-check.$$
rm -rf "$work"
mkdir -p "$work"
cleanup() {
  hosts_stop
  if [ "${HOSTS_CHECK_KEEP:-0}" = 1 ]; then echo "run_hosts_check: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$work"

mpicc -O1 -o hosts_probe "$here/hosts_probe.c"
mpicc -O1 -I"$root/include" -I"$build/include" -o hosts_writer "$here/hosts_writer.c" \
  -L"$build" -lsidecore -Wl,-rpath,"$build"

t0=$(now_ms)
hosts_start 3
echo "run_hosts_check: 3 hosts started in $(seconds_since "$t0") s"
mapfile -t names < <(hosts_names)

# Isolation, seen from outside MPI: a file in one host's /dev/shm is in no other, nor on the
# machine; and each host has its own name.
marker=hosts_check_marker_$$
hosts_exec "${names[0]}" touch "/dev/shm/$marker"
hosts_exec "${names[0]}" test -e "/dev/shm/$marker" || fail "marker not in ${names[0]}'s /dev/shm"
for name in "${names[@]:1}"; do
  hosts_exec "$name" test ! -e "/dev/shm/$marker" || fail "${names[0]}'s /dev/shm seen in $name"
done
[ ! -e "/dev/shm/$marker" ] || fail "${names[0]}'s /dev/shm seen on the machine"
for name in "${names[@]}"; do
  [ "$(hosts_exec "$name" hostname)" = "$name" ] || fail "$name has host name $(hosts_exec "$name" hostname)"
done

# 1. The probe, 2 ranks per host.
t0=$(now_ms)
hosts_mpirun --timeout 120 -H "$(hosts_list 2)" -np 6 ./hosts_probe >probe.out 2>probe.err ||
  fail "probe job: $(cat probe.err)"
echo "run_hosts_check: probe job (6 ranks) took $(seconds_since "$t0") s"
check_probe() {  # <output file>
  local lines=0 rank host proc shared seen line
  while read -r line; do
    [[ $line == rank=* ]] || continue
    read -r rank host proc shared seen < <(sed -E 's/(rank|host|proc|shared|seen)=//g' <<<"$line")
    local want=${names[rank / 2]}
    [ "$host" = "$want" ] && [ "$proc" = "$want" ] && [ "$shared" = 2 ] && [ "$seen" = 2 ] ||
      fail "$1: '$line', expected host=proc=$want shared=2 seen=2"
    lines=$((lines + 1))
  done <"$1"
  [ "$lines" -eq 6 ] || fail "$1: $lines rank lines, expected 6"
}
check_probe probe.out
echo "run_hosts_check: probe: 6 ranks on 3 hosts, shared communicators of 2, /dev/shm per host"

# 2 and 3. Sidecore: 3 ranks per host, dedicated cores, then a dedicated node.
unset SIDECORE_RANKS_PER_NODE
run_sidecore() {  # <mode: cores|nodes> <cores> <nodes>
  local out=$work/out_$1
  mkdir -p "$out"
  sed -e "s|@CORES@|$2|; s|@NODES@|$3|; s|@OUT@|$out|" "$here/hosts.xml.in" >"$1.xml"
  local t0
  t0=$(now_ms)
  hosts_mpirun --timeout 120 -H "$(hosts_list 3)" -np 9 ./hosts_writer "$work/$1.xml" 3 \
    >"$1.out" 2>&1 || fail "Sidecore job ($1): $(cat "$1.out")"
  echo "run_hosts_check: Sidecore job ($1, 9 ranks, 3 iterations) took $(seconds_since "$t0") s"
  grep -q "6 clients, 3 writers (dedicated $1), 3 node(s)" "$1.out" ||
    fail "Sidecore ($1) did not report 6 clients, 3 writers, 3 nodes: $(cat "$1.out")"
  "$python" "$here/check_hosts_output.py" --out "$out" --mode "$1" --hosts 3 \
    --ranks-per-host 3 --iterations 3 || fail "Sidecore output ($1)"
}
run_sidecore cores 1 0
run_sidecore nodes 0 1

# Stopping leaves no process in the hosts' namespaces and no state directory.
stop_and_check() {
  local namespaces dir=$HOSTS_DIR ns t0
  namespaces=$(cat "$HOSTS_DIR"/*.ns)
  t0=$(now_ms)
  hosts_stop
  echo "run_hosts_check: hosts stopped in $(seconds_since "$t0") s"
  [ ! -e "$dir" ] || fail "$dir left behind"
  while read -r ns; do
    [ -z "$(hosts_members "$ns")" ] || fail "processes left in $ns: $(hosts_members "$ns")"
  done <<<"$namespaces"
}
stop_and_check

# 4. MPICH, on demand, on hosts that share the machine's IPC namespace (see hosts.sh).
if [ "${HOSTS_CHECK_MPICH:-0}" = 1 ]; then
  command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null ||
    fail "HOSTS_CHECK_MPICH=1 but no mpicc.mpich or mpiexec.mpich"
  mpicc.mpich -O1 -o hosts_probe_mpich "$here/hosts_probe.c"
  HOSTS_SHARE_IPC=1 hosts_start 3
  MPIEXEC_TIMEOUT=120 hosts_mpiexec_mpich -hosts "$(hosts_list 2)" -n 6 ./hosts_probe_mpich \
    >probe_mpich.out 2>probe_mpich.err || fail "MPICH probe job: $(cat probe_mpich.err)"
  check_probe probe_mpich.out
  echo "run_hosts_check: MPICH probe: 6 ranks on 3 hosts, shared communicators of 2"
  stop_and_check
fi

after=$(machine_state)
[ "$before" = "$after" ] || fail "the machine changed: $(diff <(echo "$before") <(echo "$after"))"
echo "run_hosts_check: passed"
