#!/usr/bin/env python3
"""A dedicated core killed (SIGKILL) while it writes: every file under its final name must be
complete and readable; the partial one may only exist under its temporary name.

    run_killed_writer.py <disk_full program> <xml template>
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
from mpi_job import fail, job_processes, mpi_env, mpiexec  # noqa: E402


def main():
    program, template = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="sidecore-killed-") as out:
        xml = os.path.join(out, "killed.xml")
        with open(xml, "w") as f:
            f.write(open(template).read().replace("@OUT@", out))
        env = mpi_env()
        env["SIDECORE_DISK_FULL_N"] = "1024"
        proc = subprocess.Popen(mpiexec(2) + [program, xml, "1000"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
        # Wait until the dedicated core has stored a few files, then kill it mid-write.
        deadline = time.time() + 60
        while time.time() < deadline and len(glob.glob(os.path.join(out, "*_Pr0.h5"))) < 3:
            time.sleep(0.05)
        if len(glob.glob(os.path.join(out, "*_Pr0.h5"))) < 3:
            os.killpg(proc.pid, signal.SIGKILL)
            fail("the dedicated core stored nothing within 60 s")
        pids = sorted(job_processes(proc.pid, program))
        # The newest process of the program is the dedicated core (the last rank).
        if not pids:
            os.killpg(proc.pid, signal.SIGKILL)
            fail("no process of the job found")
        time.sleep(0.13)  # somewhere inside the next file
        os.kill(pids[-1], signal.SIGKILL)
        try:
            proc.wait(timeout=60)  # mpirun ends the job once a process died
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        finals = sorted(glob.glob(os.path.join(out, "killed_It*_Pr0.h5")))
        partial = glob.glob(os.path.join(out, "*.part"))
        for name in finals:
            it = int(re.search(r"_It(\d+)_Pr0\.h5$", name).group(1))
            try:
                with h5py.File(name, "r") as h5:
                    got = h5["field/P0"][...]
            except OSError as e:
                fail(f"{name} is under its final name but unreadable: {e}")
            want = it * 1e6 + np.arange(1024 * 1024, dtype=np.float64).reshape(1024, 1024)
            if not np.array_equal(got, want):
                fail(f"{name}: wrong values")
        print(f"{len(finals)} complete files under their final names; "
              f"{len(partial)} partial file(s) under a temporary name")


if __name__ == "__main__":
    main()
