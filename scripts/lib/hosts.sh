# Sourced (bash). Emulated cluster nodes ("hosts") on one Linux machine, to run one MPI job
# across several nodes: each host has its own host name (UTS namespace), its own System V IPC
# objects (IPC namespace) and, in its own mount namespace, its own /dev/shm and /tmp (fresh
# tmpfs) and an /etc/hosts that names every host.
# Everything else is shared with the machine: the file systems (so binaries and output
# directories outside /tmp and /dev/shm are seen by all hosts), the process table and the
# network (Open MPI's traffic between hosts goes over TCP on the loopback interface). Needs
# root.
#
#   hosts_available        0 when namespaces can be made here (root, unshare, nsenter)
#   hosts_start N          starts hosts ${HOSTS_PREFIX}1..N (default prefix sc-host)
#   hosts_names            the host names, one per line
#   hosts_list SLOTS       "sc-host1:SLOTS,sc-host2:SLOTS,...", for mpirun -H or mpiexec -hosts
#   hosts_exec HOST CMD... runs CMD inside HOST (caller's environment and directory)
#   hosts_mpirun ARGS...   Open MPI's mpirun across the hosts (the caller gives -np, -H, ...)
#   hosts_mpiexec_mpich ARGS...  MPICH's mpiexec (Hydra) across the hosts
#   hosts_stop             kills every process inside the hosts; their mounts go with their
#                          namespaces; removes the state directory. Safe to call twice.
#
# Usage:
#   . scripts/lib/hosts.sh
#   hosts_start 3
#   trap hosts_stop EXIT
#   hosts_mpirun -H "$(hosts_list 2)" -np 6 ./program
#
# The launcher (mpirun, mpiexec) runs in the caller's namespaces, outside every host, as on a
# login node; it starts its daemons on the hosts through host_agent.sh, an ssh stand-in. Like
# ssh, the agent gives remote commands a login environment, not the caller's: pass variables
# with mpirun -x VAR (mpiexec.mpich forwards the environment itself), or set HOSTS_KEEP_ENV=1.
# Run jobs from, and write output to, directories outside /tmp and /dev/shm: those are private
# to each host.
#
# Settings (environment): HOSTS_PREFIX (host name prefix), HOSTS_SHM_SIZE (size of each
# host's /dev/shm, tmpfs syntax, default half the memory), HOSTS_RUN_DIR (where state
# directories go, default /run), HOSTS_SHARE_IPC=1 (hosts share the machine's IPC namespace:
# see hosts_mpiexec_mpich). Each host's keeper exits by itself when the shell that called
# hosts_start exits (HOSTS_OWNER_PID overrides which process that is), so that a caller killed
# before hosts_stop leaves no namespace behind.

hosts_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HOSTS_DIR=${HOSTS_DIR:-}

hosts_available() {
  [ "$(id -u)" -eq 0 ] || return 1
  command -v unshare >/dev/null && command -v nsenter >/dev/null || return 1
  unshare --uts --ipc --mount --propagation private -- true 2>/dev/null
}

hosts_names() {
  if [ -n "$HOSTS_DIR" ] && [ -r "$HOSTS_DIR/names" ]; then cat "$HOSTS_DIR/names"; fi
}

hosts_list() {
  local slots=${1:-1} list="" name
  for name in $(hosts_names); do list+="${list:+,}$name:$slots"; done
  echo "$list"
}

# Removes state directories left by owners that are gone (a caller killed by SIGKILL): their
# keepers have exited by then, see the header.
hosts_remove_stale() {
  local dir owner
  for dir in "${HOSTS_RUN_DIR:-/run}"/sidecore-hosts.*; do
    [ -d "$dir" ] || continue
    owner=${dir##*.}
    [[ $owner =~ ^[0-9]+$ ]] || continue
    kill -0 "$owner" 2>/dev/null && continue
    HOSTS_DIR=$dir hosts_stop
  done
  return 0
}

hosts_start() {
  local count=${1:?usage: hosts_start N}
  if [ -n "$HOSTS_DIR" ] && [ -d "$HOSTS_DIR" ]; then
    echo "hosts_start: hosts already started ($HOSTS_DIR); call hosts_stop first" >&2
    return 1
  fi
  hosts_remove_stale
  local owner=${HOSTS_OWNER_PID:-$$} prefix=${HOSTS_PREFIX:-sc-host}
  local dir=${HOSTS_RUN_DIR:-/run}/sidecore-hosts.$owner
  if [ -e "$dir" ]; then
    echo "hosts_start: $dir exists (hosts of this shell); HOSTS_DIR=$dir hosts_stop removes them" >&2
    return 1
  fi
  HOSTS_DIR=$dir
  mkdir -p "$HOSTS_DIR" || return 1

  # /etc/hosts of the hosts: the machine's (MPICH's proxies look up the launcher's name), plus
  # one loopback address per host, 127.1.0.N: an address that no interface holds. A host name
  # that resolves to an address of the machine (127.0.0.1, ...) makes mpirun start that host's
  # ranks itself, on the machine, instead of through the agent.
  local i name
  {
    cat /etc/hosts
    echo "# hosts of $hosts_lib_dir/hosts.sh"
    for ((i = 1; i <= count; i++)); do echo "127.1.$((i / 256)).$((i % 256)) $prefix$i"; done
  } >"$HOSTS_DIR/hosts"
  for ((i = 1; i <= count; i++)); do echo "$prefix$i"; done >"$HOSTS_DIR/names"
  printf '#!/bin/sh\nexec bash %q %q "$@"\n' "$hosts_lib_dir/host_agent.sh" "$HOSTS_DIR" \
    >"$HOSTS_DIR/agent"
  chmod +x "$HOSTS_DIR/agent"

  # One keeper per host: it makes the namespaces, sets them up, writes its pid (the host is
  # ready) and waits for its owner to exit. Propagation is private so that no mount leaks out.
  local -a ipc=(--ipc)
  [ "${HOSTS_SHARE_IPC:-0}" = 1 ] && ipc=()
  local shm_options=mode=1777,nosuid,nodev
  [ -n "${HOSTS_SHM_SIZE:-}" ] && shm_options+=,size=$HOSTS_SHM_SIZE
  # shellcheck disable=SC2016 # expanded by the keeper's shell
  local setup='set -e
    hostname "$1"
    mount -t tmpfs -o "$3" tmpfs /dev/shm
    mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
    mount --bind "$2/hosts" /etc/hosts
    echo $$ >"$2/$1.pid.new"
    mv "$2/$1.pid.new" "$2/$1.pid"
    exec tail --pid="$4" -f /dev/null'
  for ((i = 1; i <= count; i++)); do
    name=$prefix$i
    unshare --uts "${ipc[@]}" --mount --propagation private -- /bin/sh -c "$setup" keeper "$name" \
      "$HOSTS_DIR" "$shm_options" "$owner" </dev/null >/dev/null 2>"$HOSTS_DIR/$name.err" &
    disown
  done

  local waited=0
  for name in $(hosts_names); do
    while [ ! -s "$HOSTS_DIR/$name.pid" ]; do
      if ((waited >= 200)) || [ -s "$HOSTS_DIR/$name.err" ]; then
        echo "hosts_start: $name did not start: $(cat "$HOSTS_DIR/$name.err" 2>/dev/null)" >&2
        hosts_stop
        return 1
      fi
      sleep 0.05
      waited=$((waited + 1))
    done
    # The host's namespaces, by which hosts_stop finds its processes.
    hosts_namespaces "$(<"$HOSTS_DIR/$name.pid")" >"$HOSTS_DIR/$name.ns" || true
  done
}

hosts_exec() {
  local host=${1:?usage: hosts_exec HOST COMMAND...}
  shift
  local pidfile=$HOSTS_DIR/$host.pid
  if [ -z "$HOSTS_DIR" ] || [ ! -r "$pidfile" ]; then
    echo "hosts_exec: $host: no such host" >&2
    return 255
  fi
  nsenter --target "$(<"$pidfile")" --uts --ipc --mount --wd="$PWD" -- "$@"
}

# Defaults go through the environment (OMPI_MCA_*), so that the caller's command-line options
# override them:
#   plm_rsh_agent            the ssh stand-in that starts orted inside a host (it also works
#                            from inside a host, when orteds start other orteds: tree spawn)
#   btl tcp,vader,self       vader (shared memory) within a host, TCP between hosts
#   btl/oob_tcp_if_include   loopback only, whatever interfaces the machine has
#   hwloc_base_binding_policy none: all hosts share the machine's cores; per-host binding
#                            would pile the ranks of every host onto the same cores
#   mpi_yield_when_idle      ranks waiting in MPI give the cores up (hosts oversubscribe them)
#   osc pt2pt                one-sided communication over point-to-point messages: Open MPI's
#                            default component needs an RDMA network and fails over TCP
#                            (MPI_Win_allocate: invalid window), as on a cluster without one
# mpirun itself keeps its session directory under the state directory (TMPDIR): in the
# machine's /tmp it could collide with other jobs' mpirun (Open MPI issue 8510).
hosts_mpirun() {
  if [ -z "$HOSTS_DIR" ] || [ ! -x "$HOSTS_DIR/agent" ]; then
    echo "hosts_mpirun: no hosts started" >&2
    return 1
  fi
  local -a settings=(
    "OMPI_MCA_plm_rsh_agent=$HOSTS_DIR/agent"
    OMPI_MCA_btl=tcp,vader,self
    OMPI_MCA_btl_tcp_if_include=lo
    OMPI_MCA_oob_tcp_if_include=lo
    OMPI_MCA_hwloc_base_binding_policy=none
    OMPI_MCA_mpi_yield_when_idle=1
    OMPI_MCA_osc=pt2pt
  )
  [ "$(id -u)" -eq 0 ] && settings+=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
  mkdir -p "$HOSTS_DIR/launcher" && settings+=("TMPDIR=$HOSTS_DIR/launcher")
  # mpirun looks the host names up some 24 times per job: in a mount namespace of its own
  # it reads them from the hosts' /etc/hosts instead of asking the machine's DNS, whose
  # occasional lost answer cost a 5 s resolver timeout.
  unshare --mount --propagation private -- sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' \
    "$HOSTS_DIR/hosts" env "${settings[@]}" "${HOSTS_MPIRUN:-mpirun}" "$@"
}

# MPICH's Hydra starts its proxies through the agent (as "ssh -x HOST command") and forwards
# the caller's environment itself. Debian's MPICH (ch4:ucx) finds hosts in distinct IPC
# namespaces unreachable by shared memory and talks TCP between them, and UCX's TCP transport
# can hang in MPI_Finalize (openucx/ucx#8738), also on one plain machine. Hosts started with
# HOSTS_SHARE_IPC=1 avoid it: UCX then uses shared memory between the hosts too (host names,
# /dev/shm and MPI's node boundaries stay per host).
hosts_mpiexec_mpich() {
  if [ -z "$HOSTS_DIR" ] || [ ! -x "$HOSTS_DIR/agent" ]; then
    echo "hosts_mpiexec_mpich: no hosts started" >&2
    return 1
  fi
  "${HOSTS_MPIEXEC_MPICH:-mpiexec.mpich}" -launcher ssh -launcher-exec "$HOSTS_DIR/agent" "$@"
}

# The mount and UTS namespaces of process $1, as "mnt:[inode] uts:[inode]".
hosts_namespaces() {
  local mnt uts
  mnt=$(readlink "/proc/$1/ns/mnt" 2>/dev/null) && uts=$(readlink "/proc/$1/ns/uts" 2>/dev/null) &&
    echo "$mnt $uts"
}

# The processes that are in the namespaces $1 (as hosts_namespaces prints them). The inode
# number of a /proc/<pid>/ns file is the namespace's id.
hosts_members() {
  local mnt=${1%% *} uts=${1##* }
  mnt=${mnt//[^0-9]/}
  uts=${uts//[^0-9]/}
  { stat -L -c '%n %i' /proc/[0-9]*/ns/mnt /proc/[0-9]*/ns/uts 2>/dev/null || true; } |
    awk -v m="$mnt" -v u="$uts" '{ split($1, f, "/") }
      f[5] == "mnt" && $2 == m { M[f[3]] = 1 }
      f[5] == "uts" && $2 == u { U[f[3]] = 1 }
      END { for (p in M) if (p in U) print p }'
}

hosts_stop() {
  local dir=$HOSTS_DIR
  [ -n "$dir" ] && [ -d "$dir" ] || { HOSTS_DIR=; return 0; }
  local nsfile ns mine round members
  mine=$(hosts_namespaces $$)
  # Every process of every host, the keepers included: TERM, then KILL after about a second.
  # When a namespace has no process left it is gone, and its tmpfs mounts with it.
  for round in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    members=""
    for nsfile in "$dir"/*.ns; do
      [ -r "$nsfile" ] || continue
      ns=$(<"$nsfile")
      [ -n "$ns" ] && [ "$ns" != "$mine" ] || continue
      members+=" $(hosts_members "$ns")"
    done
    [ -z "${members// /}" ] && break
    # shellcheck disable=SC2086 # a list of pids
    if ((round <= 10)); then kill -TERM $members 2>/dev/null; else kill -KILL $members 2>/dev/null; fi
    sleep 0.1
  done
  rm -rf "$dir"
  [ "$dir" = "$HOSTS_DIR" ] && HOSTS_DIR=
  return 0
}
