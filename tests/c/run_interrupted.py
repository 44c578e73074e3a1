#!/usr/bin/env python3
"""SIGINT to the launcher (Ctrl-C on mpirun) while the job writes: the job ends promptly, one
process says once what Sidecore was doing and where the stored iterations are, every file under
its final name is whole and exact, and no shared memory is left.

    run_interrupted.py <disk_full program> <xml template> <mode>

mode: dedicated-cores, dedicated-nodes, thread or synchronous.
"""
import glob
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpi_job import (describe_hang, exported, expect_array,  # noqa: E402
                     expect_no_leaked_segments, fail, job_segments, mpi_env, mpiexec)

# mode: (ranks, ranks per node, cores, nodes, threads)
MODES = {
    "dedicated-cores": (3, 0, 1, 0, 0),
    "dedicated-nodes": (2, 1, 0, 1, 0),
    "thread": (2, 0, 0, 0, 1),
    "synchronous": (2, 0, 0, 0, 0),
}
SIDE = 1024
PAUSE_MS = 50


def main():
    program, template, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    ranks, per_node, cores, nodes, threads = MODES[mode]
    before = job_segments()
    with tempfile.TemporaryDirectory(prefix="sidecore-interrupted-") as out:
        xml = os.path.join(out, "interrupted.xml")
        text = open(template).read()
        for key, value in (("@OUT@", out), ("@CORES@", cores), ("@NODES@", nodes),
                           ("@THREADS@", threads)):
            text = text.replace(key, str(value))
        with open(xml, "w") as f:
            f.write(text)
        # Open MPI's launcher, told to end the job, sends SIGCONT, waits this many seconds,
        # sends SIGTERM, waits as long again, then sends SIGKILL. Its default (1 s) may not let
        # a process of a loaded machine run its handler before SIGKILL; 3 s do, without the job
        # writing (and this test reading back) 10 s more of output first, as 10 s did.
        # A pause of 50 ms after each iteration: the job still writes when interrupted (a block
        # of 8 MiB takes its dedicated core or thread about a third of that to store), without
        # writing, and this test reading back, gigabytes in the seconds the launcher waits.
        env = mpi_env(per_node, SIDECORE_DISK_FULL_N=SIDE, SIDECORE_DISK_FULL_PAUSE_MS=PAUSE_MS,
                      OMPI_MCA_odls_base_sigkill_timeout=3)
        exports = ["SIDECORE_DISK_FULL_N", "SIDECORE_DISK_FULL_PAUSE_MS"] + (
            ["SIDECORE_RANKS_PER_NODE"] if per_node else [])
        argv = mpiexec(ranks) + exported(*exports) + [
            program, xml, "100000"]
        print("running: " + " ".join(argv), flush=True)
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)
        stored = lambda: glob.glob(os.path.join(out, "interrupted_It*.h5"))  # noqa: E731
        deadline = time.time() + 90
        while time.time() < deadline and len(stored()) < 3 and proc.poll() is None:
            time.sleep(0.05)
        if len(stored()) < 3:
            os.killpg(proc.pid, signal.SIGKILL)
            fail(f"nothing stored within 90 s:\n{proc.communicate()[0]}")
        interrupted_at = time.time()
        proc.send_signal(signal.SIGINT)  # to the launcher only, as Ctrl-C on mpirun does
        try:
            output, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            describe_hang(proc.pid)
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
            sys.stdout.write(output)
            fail("the job was still running 60 s after SIGINT")
        took = time.time() - interrupted_at
        sys.stdout.write(output)
        print(f"the job ended {took:.1f} s after SIGINT with status {proc.returncode}")
        # MPICH's mpiexec ends with status 0 after forwarding Ctrl-C; Open MPI's does not.
        if proc.returncode == 0 and os.environ.get("SIDECORE_TEST_MPI", "openmpi") != "mpich":
            fail("an interrupted job must not end with status 0")

        notices = re.findall(r"\[sidecore rank \d+ \w+\] the job is ending on (SIGINT|SIGTERM)",
                             output)
        if len(notices) != 1:
            fail(f"expected the notice once for the job, found it {len(notices)} times")
        said = re.search(r"at iteration (\d+)\.\n.*Stored iterations are complete: in (\S+),",
                         output)
        if not said:
            fail("the notice does not say the iteration and where the stored iterations are")
        if os.path.realpath(said.group(2).rstrip(",")) != os.path.realpath(out):
            fail(f"the notice names {said.group(2)}, the output is in {out}")
        reached = int(said.group(1))

        finals = sorted(stored())
        for name in finals:
            found = re.search(r"_It(\d+)_Pr(\d+)\.h5$", name)
            if not found:
                continue  # a master file: it only maps the per-core files read here
            it = int(found.group(1))
            # The notice gives rank 0's iteration; writer 0 stores rank 0's blocks (the other
            # client may be ahead of it in thread and synchronous modes).
            if found.group(2) == "0" and it > reached:
                fail(f"{name}: iteration {it} stored beyond the {reached} the notice names")
            try:
                with h5py.File(name, "r") as h5:
                    blocks = {int(key[1:]): h5["field"][key][...] for key in h5["field"]}
            except (OSError, KeyError) as e:
                fail(f"{name} is under its final name but unreadable: {e}")
            if not blocks:
                fail(f"{name} holds no block")
            for source, got in blocks.items():
                want = (it * 1e6 + source * 1e5 +
                        np.arange(SIDE * SIDE, dtype=np.float64).reshape(SIDE, SIDE))
                expect_array(f"{name}: field/P{source}", got, want)
        print(f"{len(finals)} files under their final names, all exact; "
              f"{len(glob.glob(os.path.join(out, '*.part')))} *.part")
    expect_no_leaked_segments(before)


if __name__ == "__main__":
    main()
