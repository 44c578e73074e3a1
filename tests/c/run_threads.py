#!/usr/bin/env python3
"""Concurrent API calls from four threads of one client: some are refused, every accepted block
is stored exact, no refused block is stored, and refusals did happen (the threads overlap).

    run_threads.py <threads program> <xml template> <mode>

mode: dedicated-cores or dedicated-nodes.
"""
import glob
import os
import re
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpi_job import expect_array, fail, mpi_env, run_job  # noqa: E402

SIDE = 256
# Four threads released together meet inside the API in most iterations, but on a loaded
# two-core machine an iteration's writes may also run one after the other: 40 iterations
# without a single meeting happened about once in eight runs; 160 make it rare (~1e-4).
ITERATIONS = 160


def main():
    program, template, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    cores, nodes, per_node = (1, 0, 0) if mode == "dedicated-cores" else (0, 1, 1)
    with tempfile.TemporaryDirectory(prefix="sidecore-threads-") as out:
        xml = os.path.join(out, "threads.xml")
        text = open(template).read()
        for key, value in (("@OUT@", out), ("@CORES@", cores), ("@NODES@", nodes)):
            text = text.replace(key, str(value))
        with open(xml, "w") as f:
            f.write(text)
        status, output = run_job(2, [program, xml, out, str(ITERATIONS)], mpi_env(per_node), 120)
        if status != 0:
            fail(f"the program exited with status {status}")
        counts = re.search(r"(\d+) writes accepted, (\d+) refused", output)
        if not counts or int(counts.group(2)) == 0:
            fail("no call was refused: the four threads never met inside the API")
        accepted = set()
        with open(os.path.join(out, "accepted.txt")) as f:
            for line in f:
                it, block = line.split()
                accepted.add((int(it), int(block)))
        stored = set()
        for name in glob.glob(os.path.join(out, "threads_It*_Pr0.h5")):
            it = int(re.search(r"_It(\d+)_Pr0\.h5$", name).group(1))
            with h5py.File(name, "r") as h5:
                for key in h5["field/P0"]:
                    block = int(key[1:])
                    want = (it * 1e6 + block * 1e5 +
                            np.arange(SIDE * SIDE, dtype=np.float64).reshape(SIDE, SIDE))
                    expect_array(f"{name}: field/P0/{key}", h5["field/P0"][key][...], want)
                    stored.add((it, block))
        if stored != accepted:
            fail(f"stored blocks differ from accepted ones: stored but refused "
                 f"{sorted(stored - accepted)[:5]}, accepted but missing "
                 f"{sorted(accepted - stored)[:5]}")
        print(f"{len(accepted)} accepted blocks stored exact, "
              f"{int(counts.group(2))} refused")


if __name__ == "__main__":
    main()
