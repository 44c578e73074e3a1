"""What every MPI test driver needs: run a job under mpirun with a deadline, compare arrays read
back from the files, and make sure no shared memory outlives the job.

Drivers import it with

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from mpi_job import ...
"""
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

import numpy as np


def fail(message):
    print("FAIL: " + message, flush=True)
    sys.exit(1)


def mpiexec(np_):
    """The command that starts np_ ranks: the launcher of the build's MPI, which ctest puts in
    SIDECORE_TEST_MPIEXEC (Open MPI's with --oversubscribe, to start more ranks than cores;
    MPICH's needs no option), then -np np_."""
    launcher = shlex.split(os.environ.get("SIDECORE_TEST_MPIEXEC", "mpirun --oversubscribe"))
    return launcher + ["-np", str(np_)]


def exported(*names):
    """Launcher options that pass the environment variables `names` to every rank: Open MPI's
    -x; MPICH's launcher passes the whole environment without being asked."""
    if os.environ.get("SIDECORE_TEST_MPI", "openmpi") == "mpich":
        return []
    return [option for name in names for option in ("-x", name)]


def mpi_env(ranks_per_node=0, **extra):
    """The environment of a test job: Open MPI as root, oversubscribed, virtual nodes of
    ranks_per_node ranks (none when 0), no strict checking unless asked, plus extra."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    env.pop("SIDECORE_RANKS_PER_NODE", None)
    env.pop("SIDECORE_STRICT", None)
    if ranks_per_node:
        env["SIDECORE_RANKS_PER_NODE"] = str(ranks_per_node)
    env.update({key: str(value) for key, value in extra.items()})
    return env


def run_job(np_, argv, env, timeout, cwd=None):
    """Runs argv on np_ ranks; prints and returns (exit status, output). A job still running
    after timeout seconds is killed as a whole (it has a session of its own) and fails."""
    cmd = mpiexec(np_) + list(argv)
    print("running: " + " ".join(cmd), flush=True)
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        describe_hang(proc.pid)
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        sys.stdout.write(output)
        fail(f"the job did not finish within {timeout:g} s (hang?)")
    sys.stdout.write(output)
    sys.stdout.flush()
    return proc.returncode, output


LAUNCHERS = {"mpirun", "mpiexec", "prterun", "prted", "orterun", "orted", "hydra_pmi_proxy",
             "mpiexec.hydra"}


def describe_hang(session):
    """Prints what every process of a job that does not finish (session `session`) is doing:
    each thread's state and kernel wait channel and, where gdb is installed (scripts/test.sh
    installs it), each thread's stack. A hang in CI is then read from the log. Stacks are asked
    for during 20 s at most: ctest's own limit on a test comes 30 s after the job's deadline."""
    stacks_until = time.monotonic() + 20
    for entry in sorted(os.listdir("/proc"), key=lambda e: (len(e), e)):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[3]) != session:
                continue
            with open(f"/proc/{entry}/comm") as f:
                name = f.read().strip()
            threads = []
            for tid in sorted(os.listdir(f"/proc/{entry}/task"), key=int):
                with open(f"/proc/{entry}/task/{tid}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
                with open(f"/proc/{entry}/task/{tid}/wchan") as f:
                    wchan = f.read().strip() or "-"
                with open(f"/proc/{entry}/task/{tid}/comm") as f:
                    threads.append(f"{tid} {f.read().strip()} {state} {wchan}")
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        print(f"--- hung job: process {entry} ({name}), threads (id, name, state, wait):",
              flush=True)
        for thread in threads:
            print("    " + thread)
        left = stacks_until - time.monotonic()
        if name in LAUNCHERS or not shutil.which("gdb") or left <= 1:
            continue
        try:
            stacks = subprocess.run(
                ["gdb", "-p", entry, "-batch", "-nx", "-ex", "thread apply all bt 30"],
                capture_output=True, text=True, timeout=left).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        for line in stacks.splitlines():
            if line.startswith("Thread "):
                print("    " + line.split(" (", 1)[0] + ":")
            elif line.startswith("#"):
                print("      " + compact_frame(line))
        sys.stdout.flush()


def compact_frame(line):
    """A gdb backtrace line without its address and arguments: '#3 function (file:line)'."""
    number, _, rest = line.partition(" ")
    rest = re.sub(r"^\s*0x[0-9a-f]+ in ", "", rest.strip())
    function = rest.split(" (", 1)[0]
    where = re.search(r" (?:at|from) (\S+)$", rest)
    return f"{number} {function}" + (f" ({where.group(1)})" if where else "")


def job_segments():
    """Shared-memory segments of Sidecore jobs (/dev/shm/sidecore-<pid>-<token>-<server>)."""
    pattern = re.compile(r"sidecore-[0-9]+-[0-9a-f]{16}-[0-9]+$")
    return {n for n in os.listdir("/dev/shm") if pattern.match(n)}


def job_processes(launcher_pid, program):
    """Process ids running `program` started by the launcher launcher_pid (its descendants, read
    from /proc): never a process of another test that runs the same program at the same time."""
    parents, argv0 = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv0[int(entry)] = f.read().split(b"\0", 1)[0].decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue

    def launched(pid):
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == launcher_pid:
                return True
        return False

    return [pid for pid, name in argv0.items() if name == program and launched(pid)]


def expect_no_leaked_segments(before):
    """Fails if a segment created since `before` stays. Jobs of other tests running at the same
    time own one for a moment (until every process mapped it): only one that stays is a leak."""
    leaked = job_segments() - before
    for _ in range(3):
        if not leaked:
            return
        time.sleep(1)
        leaked &= job_segments()
    if leaked:
        fail(f"shared memory left behind: {sorted(leaked)}")


def expect_array(what, got, want):
    """Same shape, same type, same values; the message names the first element that differs."""
    got = np.asarray(got)
    if got.shape != want.shape or got.dtype != want.dtype:
        fail(f"{what}: {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}")
    if not np.array_equal(got, want):
        bad = tuple(int(v) for v in np.argwhere(got != want)[0])
        fail(f"{what}: value at {bad} is {got[bad]}, expected {want[bad]}")


def block_dataset(variable, source, block, domains):
    """Damaris's name of a block in a file-per-core file: <variable>/P<source>, with
    /B<block> only when the configuration declares more than one domain per client."""
    name = f"{variable}/P{source}"
    return name + f"/B{block}" if domains > 1 else name
