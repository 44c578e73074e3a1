#!/usr/bin/env bash
# Runs MPI jobs across 3 emulated hosts (scripts/lib/hosts.sh: own host name, /dev/shm, /tmp
# and IPC objects each) and checks the results value by value:
#   1. hosts_probe (2 ranks per host): host and processor names, MPI_COMM_TYPE_SHARED sizes,
#      and that a file a rank creates in /dev/shm is seen by the ranks of its host only;
#   2. Sidecore, SIDECORE_RANKS_PER_NODE unset, 3 iterations each, every value of the HDF5
#      files and where each client and server ran (check_hosts_output.py):
#      a. one dedicated core per host (3 ranks per host: 2 clients + 1 server), FilePerCore;
#      b. two dedicated cores per host (4 ranks per host: 2 clients + 2 servers, each server
#         stores one client of its host), FilePerCore;
#      c. one dedicated node (the 3 ranks of the last host are servers), FilePerCore;
#      d. one dedicated core per host, Collective: the servers of the 3 hosts write one file
#         per iteration together, through MPI-IO over TCP;
#      e. one dedicated node, Collective (the 3 servers share the last host);
#   3. with HOSTS_CHECK_MPICH=1, hosts_probe under MPICH's mpiexec (Hydra) too, on hosts
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
  ls -A /dev/shm | grep -E "^(hosts_probe_|hosts_check_marker_|sem\.OMPIO_hosts_It)" || true
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
# The library goes with the program into the work directory: a build under /tmp (a fresh clone
# there) is not seen from inside the hosts, whose /tmp is their own.
mkdir -p lib
cp -P "$build"/libsidecore.so* lib/
mpicc -O1 -I"$root/include" -I"$build/include" -o hosts_writer "$here/hosts_writer.c" \
  -L"$work/lib" -lsidecore -Wl,-rpath,"$work/lib"

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

# 2. Sidecore: dedicated cores and nodes, file per writer and collective, on the same hosts.
# Open MPI's named semaphores of collective files (sem.OMPIO_<file>) go to the writers' /dev/shm,
# inside the hosts: machine_state checks that none reaches the machine's.
unset SIDECORE_RANKS_PER_NODE
run_sidecore() {  # <case> <mode: cores|nodes> <cores> <nodes> <ranks per host> <FileMode> [<schedule>]
  local case=$1 mode=$2 cores=$3 nodes=$4 per_host=$5 file_mode=$6 schedule=${7:-}
  local out=$work/out_$case hosts=${#names[@]}
  local ranks=$((hosts * per_host)) servers=$((nodes * per_host)) clients
  [ "$mode" = cores ] && servers=$((hosts * cores))
  clients=$((ranks - servers))
  mkdir -p "$out"
  sed -e "s|@CORES@|$cores|; s|@NODES@|$nodes|; s|@FILEMODE@|$file_mode|; s|@OUT@|$out|" \
    -e "s|@SCHEDULE@|$schedule|" \
    "$here/hosts.xml.in" >"$case.xml"
  local t0
  t0=$(now_ms)
  hosts_mpirun --timeout 120 -H "$(hosts_list "$per_host")" -np "$ranks" ./hosts_writer \
    "$work/$case.xml" 3 >"$case.out" 2>&1 || fail "Sidecore job ($case): $(cat "$case.out")"
  echo "run_hosts_check: Sidecore job ($case, $file_mode, $ranks ranks, 3 iterations) took" \
    "$(seconds_since "$t0") s"
  local writers_text="$servers writers" nodes_text="$hosts nodes"
  [ "$servers" -eq 1 ] && writers_text="1 writer"
  [ "$hosts" -eq 1 ] && nodes_text="1 node"
  grep -q "$clients clients, $writers_text (dedicated $mode), $nodes_text" "$case.out" ||
    fail "Sidecore ($case) did not report $clients clients, $servers writers, $hosts nodes:" \
      "$(cat "$case.out")"
  "$python" "$here/check_hosts_output.py" --out "$out" --mode "$mode" --hosts "$hosts" \
    --ranks-per-host "$per_host" --cores "$cores" --nodes "$nodes" --file-mode "$file_mode" \
    --iterations 3 --job-output "$case.out" || fail "Sidecore output ($case)"
}
run_sidecore cores cores 1 0 3 FilePerCore
run_sidecore cores2 cores 2 0 4 FilePerCore
run_sidecore nodes nodes 0 1 3 FilePerCore
run_sidecore collective_cores cores 1 0 3 Collective
run_sidecore collective_nodes nodes 0 1 3 Collective
# One writer stores at a time: the writers of three hosts count their turns in an MPI window
# (one-sided operations between machines, as on a cluster).
run_sidecore cores_one_at_a_time cores 1 0 3 FilePerCore '<schedule policy="rate" writers="1"/>'

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

# 3. MPICH, on demand, on hosts that share the machine's IPC namespace (see hosts.sh).
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
