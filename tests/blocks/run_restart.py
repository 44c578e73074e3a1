#!/usr/bin/env python3
"""Checkpoint and restart (examples/heat_restart.c): a job of N clients and M writers runs K
iterations and checkpoints; a new job of N' clients and M' writers restarts from that
checkpoint and runs K more. Every stored value of the restarted job must equal, bit for bit,
the same iteration of a job that ran 2K iterations without stopping."""
import argparse
import os
import re
import sys
import tempfile

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpi_job import expect_array, fail, mpi_env, run_job  # noqa: E402


def deployment(text):
    """"np=4,cores=1,rpn=0,nodes=0,threads=0,mode=FilePerCore" -> dict."""
    d = {"np": 2, "cores": 0, "rpn": 0, "nodes": 0, "threads": 0, "mode": "FilePerCore"}
    for item in text.split(","):
        key, value = item.split("=")
        d[key] = value if key == "mode" else int(value)
    return d


def run(program, example_xml, tmp, name, dep, iterations, restart=None):
    out = os.path.join(tmp, name)
    text = open(example_xml).read()
    text = re.sub(r'<dedicated [^>]*/>',
                  f'<dedicated cores="{dep["cores"]}" nodes="{dep["nodes"]}" threads="{dep["threads"]}"/>', text)
    text = text.replace('<option key="FilesPath">heat_out/</option>',
                        f'<option key="FilesPath">{out}/</option>')
    text = text.replace('<option key="FileMode">FilePerCore</option>',
                        f'<option key="FileMode">{dep["mode"]}</option>')
    xml = os.path.join(tmp, name + ".xml")
    open(xml, "w").write(text)
    argv = [program, xml, str(iterations)]
    if restart:
        argv += [restart[0], str(restart[1])]
    rc, output = run_job(dep["np"], argv, mpi_env(dep["rpn"], SIDECORE_LOG_LEVEL="debug"),
                         timeout=240, cwd=tmp)
    if rc != 0:
        fail(f"job {name} exited with {rc}")
    if "is on stable storage" not in output:
        fail(f"job {name} did not report its checkpoint")
    # Durable: every file was flushed before its iteration counted as stored.
    if "flushed" not in output or "to stable storage" not in output:
        fail(f"job {name}: no file was flushed to stable storage (Durable)")
    return os.path.join(out, "heat")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--program", required=True)
    p.add_argument("--xml", required=True, help="examples/heat_restart.xml")
    p.add_argument("--first", type=deployment, required=True)
    p.add_argument("--second", type=deployment, required=True)
    p.add_argument("--iterations", type=int, default=6)
    a = p.parse_args()
    k = a.iterations
    with tempfile.TemporaryDirectory() as tmp:
        whole = run(a.program, a.xml, tmp, "whole", a.first, 2 * k)
        first = run(a.program, a.xml, tmp, "first", a.first, k)
        second = run(a.program, a.xml, tmp, "second", a.second, k, restart=(first, k - 1))
        for j in range(k):
            with h5py.File(f"{whole}_It{k + j}.h5", "r") as w, h5py.File(f"{second}_It{j}.h5", "r") as s:
                want = w["u"][...]
                if not want.any():
                    fail(f"iteration {k + j} of the uninterrupted run is all zeros")
                expect_array(f"u at step {k + j + 1} after a restart", s["u"][...], want)
    print("PASS")


if __name__ == "__main__":
    main()
