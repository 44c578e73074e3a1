#!/usr/bin/env bash
# Remote shell for the hosts of scripts/lib/hosts.sh, called as MPI launchers call ssh:
#
#   host_agent.sh <state dir> [ssh options] <host> <command...>
#
# Runs <command...> inside <host> (its UTS, IPC and mount namespaces, entered through the host's
# keeper process) the way sshd runs a remote command: the words are joined with spaces and
# given to /bin/sh -c, in the home directory, with a login-like environment (HOME, USER,
# LOGNAME, SHELL, PATH; nothing else of the launcher's environment unless HOSTS_KEEP_ENV=1).
# Exit status: the command's, or 255 (as ssh) when the host is unknown or not running.
# hosts_start writes <state dir>/agent, a wrapper that passes <state dir>, for the launchers.
set -u

state=${1:?usage: host_agent.sh <state dir> [ssh options] <host> <command...>}
shift

# Options that ssh takes with a value (Open MPI passes none, Hydra passes -x).
while (($#)) && [[ $1 == -* ]]; do
  case $1 in
    -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;
    --) shift; break ;;
    *) shift ;;
  esac
done
host=${1:-}
if [ -z "$host" ]; then
  echo "host_agent: no host given" >&2
  exit 255
fi
shift

pidfile=$state/$host.pid
if [ ! -r "$pidfile" ]; then
  echo "host_agent: $host: unknown host (no $pidfile)" >&2
  exit 255
fi
pid=$(<"$pidfile")
if ! kill -0 "$pid" 2>/dev/null; then
  echo "host_agent: $host: its keeper process $pid is gone" >&2
  exit 255
fi

if [ "${HOSTS_KEEP_ENV:-0}" = 1 ]; then
  env_cmd=(env)
else
  env_cmd=(env -i "HOME=${HOME:-/root}" "USER=$(id -un)" "LOGNAME=$(id -un)" SHELL=/bin/sh
    "PATH=${HOSTS_PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}")
fi
# No command: ssh would open a login shell; a plain shell is enough here.
command=${*:-exec /bin/sh}
exec nsenter --target "$pid" --uts --ipc --mount -- "${env_cmd[@]}" /bin/sh -c "cd; $command"
