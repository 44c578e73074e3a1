#!/usr/bin/env python3
"""A process of the job killed (SIGKILL) while the launcher keeps the job alive
(mpirun --enable-recovery): the job must end within the buffer's timeout plus a margin, through
MPI_Abort with Sidecore's error code 70, and with a message naming the dead rank and its
process id; every file stored under its final name before the end must read back exact.

    run_peer_death.py <peer_death program> <mode> <victim>
        mode: dedicated_cores | dedicated_nodes | thread | synchronous
        victim: client (rank 0) | server (the dedicated core or node, rank 2)
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
from mpi_job import (describe_hang, expect_no_leaked_segments, fail, job_segments,  # noqa: E402
                     mpi_env, mpiexec)

TIMEOUT = 3  # the buffer's timeout, seconds
MARGIN = 15  # for the launcher to take the job down on a loaded machine
N = 64

XML = """<?xml version="1.0"?>
<simulation name="peer" language="c" xmlns="http://damaris.gforge.inria.fr/damaris/model">
  <architecture>
    <domains count="1"/>
    <dedicated cores="{cores}" nodes="{nodes}" threads="{threads}"/>
    <buffer name="peer-buffer" size="4194304" timeout="{timeout}"/>
  </architecture>
  <data>
    <layout name="grid" type="double" dimensions="{n},{n}"/>
    <variable name="field" layout="grid" store="out"/>
  </data>
  <storage>
    <store name="out" type="HDF5">
      <option key="FileMode">FilePerCore</option>
      <option key="FilesPath">{out}/</option>
    </store>
  </storage>
</simulation>
"""

# mode: (dedicated cores, dedicated nodes, threads, ranks, ranks per virtual node)
MODES = {
    "dedicated_cores": (1, 0, 0, 3, 0),
    "dedicated_nodes": (0, 1, 0, 3, 1),
    "thread": (0, 0, 1, 2, 0),
    "synchronous": (0, 0, 0, 2, 0),
}


def check_files(out):
    """Every file under its final name holds exactly what the clients wrote."""
    files = sorted(glob.glob(os.path.join(out, "peer_It*.h5")))
    for name in files:
        it = int(re.search(r"_It(\d+)(_Pr\d+)?\.h5$", name).group(1))
        try:
            with h5py.File(name, "r") as h5:
                blocks = list(h5["field"].items())
                if not blocks:
                    fail(f"{name}: no block of 'field'")
                for path, ds in blocks:
                    src = int(path[1:])
                    want = it * 1e6 + src * 1e5 + np.arange(N * N, dtype=np.float64).reshape(N, N)
                    if not np.array_equal(ds[...], want):
                        fail(f"{name}: field/{path} holds wrong values")
        except OSError as e:
            fail(f"{name} is under its final name but unreadable: {e}")
    return files


def main():
    program, mode, victim = sys.argv[1], sys.argv[2], sys.argv[3]
    if os.environ.get("SIDECORE_TEST_MPI", "openmpi") != "openmpi":
        print("SKIP: --enable-recovery is an Open MPI launcher option")
        sys.exit(77)
    cores, nodes, threads, ranks, per_node = MODES[mode]
    victim_rank = 0 if victim == "client" else ranks - 1
    segments_before = job_segments()
    with tempfile.TemporaryDirectory(prefix="sidecore-peer-") as out:
        xml = os.path.join(out, "peer.xml")
        with open(xml, "w") as f:
            f.write(XML.format(cores=cores, nodes=nodes, threads=threads, timeout=TIMEOUT, n=N,
                               out=out))
        env = mpi_env(per_node)
        cmd = mpiexec(ranks)
        cmd[1:1] = ["--enable-recovery"]
        cmd += [program, xml, out, "100000", "20"]
        print("running: " + " ".join(cmd), flush=True)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)
        try:
            # A few iterations stored first: they must survive the end of the job.
            deadline = time.time() + 60
            while time.time() < deadline and len(glob.glob(os.path.join(out, "peer_It*.h5"))) < 3:
                if proc.poll() is not None:
                    fail("the job ended before the kill:\n" + proc.stdout.read())
                time.sleep(0.05)
            if len(glob.glob(os.path.join(out, "peer_It*.h5"))) < 3:
                fail("nothing was stored within 60 s")
            with open(os.path.join(out, f"pid.{victim_rank}")) as f:
                pid = int(f.read())
            os.kill(pid, signal.SIGKILL)
            killed = time.time()
            try:
                output, _ = proc.communicate(timeout=TIMEOUT + MARGIN)
            except subprocess.TimeoutExpired:
                describe_hang(proc.pid)
                os.killpg(proc.pid, signal.SIGKILL)
                output, _ = proc.communicate()
                sys.stdout.write(output)
                fail(f"the job was still running {TIMEOUT + MARGIN} s after rank {victim_rank} "
                     f"was killed (buffer timeout {TIMEOUT} s)")
            took = time.time() - killed
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        sys.stdout.write(output)
        # Open MPI 4.1's mpirun --enable-recovery exits with status 0 even after MPI_Abort (a
        # plain MPI program calling MPI_Abort does the same), and its own banner is sometimes
        # lost ("ORTE_ERROR_LOG: Out of resource ... show_help.c"): what is checked is that the
        # job ended, in time, after Sidecore's message saying it ends it.
        if proc.returncode == 0 and "Ending the job (MPI_Abort)" not in output:
            fail("the job ended with status 0 and no process said it ended the job")
        named = f"rank {victim_rank} (pid {pid}"
        if named not in output or "has died" not in output:
            fail(f"no message names the dead process ('{named}, ...) has died')")
        if "the job cannot complete" not in output:
            fail("the message does not say that the job cannot complete")
        files = check_files(out)
        print(f"{mode}, {victim} killed: the job ended {took:.1f} s later with status "
              f"{proc.returncode}, naming {named}); {len(files)} stored file(s) read back exact")
    expect_no_leaked_segments(segments_before)


if __name__ == "__main__":
    main()
