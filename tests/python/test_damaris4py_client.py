"""damaris4py.client (Damaris's module for Python simulations) under mpirun: the program checks
every answer against the job's shape, then writes through Sidecore; the files are read back
here with h5py, value by value."""
import glob
import os
import re
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from mpi_job import expect_array, mpi_env, run_job  # noqa: E402


def run_client_program(tmp_path, name, np_, cores, per_node):
    out = tmp_path / (name + "_out")
    out.mkdir()
    with open(os.path.join(HERE, "sim.xml.in")) as f:
        text = f.read()
    for key, value in (("@CORES@", cores), ("@THREADS@", 0), ("@NODES@", 0), ("@OUT@", out)):
        text = text.replace(key, str(value))
    xml = tmp_path / (name + ".xml")
    xml.write_text(text)
    argv = [sys.executable, os.path.join(HERE, "programs", "damaris_client.py"), str(xml),
            str(cores), str(per_node)]
    status, output = run_job(np_, argv, mpi_env(per_node), 240)
    assert status == 0, f"damaris_client.py exited with {status}"
    for rank in range(np_):
        assert f"rank {rank}: done" in output, f"rank {rank} did not finish"
    return str(out)


def stored_resizable(out):
    """{client rank: array} of `resizable` at iteration 0, from every file."""
    found = {}
    files = sorted(glob.glob(os.path.join(out, "py_It0_Pr*.h5")))
    assert files, f"no file in {out}"
    for name in files:
        with h5py.File(name, "r") as h5:
            def visit(path, obj):
                # FilePerCore names a block variable/P<source>/B<block> (2 domains here).
                m = re.fullmatch(r"resizable/P(\d+)(?:/B(\d+))?", path)
                if m and isinstance(obj, h5py.Dataset):
                    assert int(m.group(2) or 0) == 0, f"{path}: only block 0 was written"
                    source = int(m.group(1))
                    assert source not in found, f"client {source} stored twice"
                    found[source] = obj[()]
            h5.visititems(visit)
    return found


def expect_written_by(out, clients):
    found = stored_resizable(out)
    assert sorted(found) == list(range(clients)), sorted(found)
    for source, got in found.items():
        expect_array(f"resizable P{source}", got, np.full(3, 10 * source + 7, dtype=np.int32))


def test_damaris4py_client_dedicated_cores(tmp_path):
    """6 ranks on 2 virtual nodes of 3, 1 dedicated core each: 4 clients, 2 servers."""
    out = run_client_program(tmp_path, "cores", 6, cores=1, per_node=3)
    expect_written_by(out, clients=4)


def test_damaris4py_client_synchronous(tmp_path):
    """No dedicated resource: every rank a client that stores its own blocks."""
    out = run_client_program(tmp_path, "sync", 4, cores=0, per_node=2)
    expect_written_by(out, clients=4)
