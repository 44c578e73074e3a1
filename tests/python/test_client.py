"""The Python client API under mpirun: each test runs an mpi4py program (programs/) as a job
with a deadline, then reads the HDF5 files back with h5py and compares them, value by value,
with what values.py says was written."""
import glob
import os
import re
import subprocess
import sys

import h5py
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from mpi_job import expect_array, expect_no_leaked_segments, job_segments, mpi_env, run_job  # noqa: E402
import values  # noqa: E402


def configure(tmp_path, name, cores=0, threads=0, nodes=0, architecture=""):
    """sim.xml.in with its mode and output directory (and more of <architecture>, where
    @OUT@ is the output directory too); returns (xml path, output directory)."""
    out = tmp_path / (name + "_out")
    out.mkdir()
    with open(os.path.join(HERE, "sim.xml.in")) as f:
        text = f.read()
    text = text.replace("@CORES@", str(cores)).replace("@THREADS@", str(threads))
    text = text.replace("@NODES@", str(nodes))
    text = text.replace("</architecture>", architecture + "</architecture>")
    text = text.replace("@OUT@", str(out))
    xml = tmp_path / (name + ".xml")
    xml.write_text(text)
    return str(xml), str(out)


def run(program, np_, *args, timeout=240, ranks_per_node=0):
    """Runs programs/<program> on np_ ranks (virtual nodes of ranks_per_node ranks when not 0);
    every rank must finish and say so."""
    before = job_segments()
    argv = [sys.executable, os.path.join(HERE, "programs", program)] + [str(a) for a in args]
    status, output = run_job(np_, argv, mpi_env(ranks_per_node), timeout)
    assert status == 0, f"{program} exited with {status}"
    for rank in range(np_):
        assert f"rank {rank}: done" in output, f"rank {rank} did not finish"
    expect_no_leaked_segments(before)
    return output


def stored_blocks(out, it):
    """{(variable, source, block): array} of every file of iteration it."""
    blocks = {}
    files = sorted(glob.glob(os.path.join(out, f"py_It{it}_Pr*.h5")))
    assert files, f"no file for iteration {it} in {out}"
    for name in files:
        with h5py.File(name, "r") as h5:
            def visit(path, obj):
                m = re.fullmatch(r"(\w+)/P(\d+)(?:/B(\d+))?", path)
                if m and isinstance(obj, h5py.Dataset):
                    key = (m.group(1), int(m.group(2)), int(m.group(3) or 0))
                    assert key not in blocks, f"{key} stored twice"
                    blocks[key] = obj[()]
            h5.visititems(visit)
    return blocks


def check_every_block(out, clients, iterations):
    for it in range(iterations):
        blocks = stored_blocks(out, it)
        expected = {(v, s, b) for v in values.VARIABLES for s in range(clients)
                    for b in range(values.DOMAINS)}
        assert set(blocks) == expected, f"iteration {it}: {sorted(set(blocks) ^ expected)}"
        for (variable, source, block), got in blocks.items():
            expect_array(f"{variable} P{source} B{block} it{it}", got,
                         values.VARIABLES[variable](source, it, block))


def test_dedicated_cores(tmp_path):
    """4 ranks on one node, 1 dedicated core: 3 clients write every variable, 3 iterations."""
    xml, out = configure(tmp_path, "cores", cores=1)
    run("writer.py", 4, xml, 3)
    check_every_block(out, clients=3, iterations=3)


def test_compute_phases(tmp_path):
    """<schedule policy="phase">: the clients mark compute phases with `with sc.computing()`
    after each iteration, 150 ms later; the dedicated core waits for them before storing."""
    xml, out = configure(tmp_path, "phase", cores=1,
                         architecture='<schedule policy="phase" trace="@OUT@/schedule"/>')
    env_before = os.environ.get("PY_PHASES")
    os.environ["PY_PHASES"] = "1"
    try:
        run("writer.py", 3, xml, 4)
    finally:
        if env_before is None:
            del os.environ["PY_PHASES"]
    check_every_block(out, clients=2, iterations=4)
    with open(os.path.join(out, "schedule.0.csv")) as f:
        f.readline()
        import csv
        rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
    assert len(rows) == 4
    in_phase = [r for r in rows if r["phase"] == 1]
    assert in_phase, f"no store began in a compute phase: {rows}"
    assert all(r["phase"] != 9 for r in rows), rows
    for r in in_phase:
        # Ready at the end of the iteration, while the clients spent 150 ms outside a phase: a
        # store that did not wait for the phase begins at once. The margin is for a core that
        # sees the end of the iteration late on a loaded machine (14 ms once in CI).
        assert r["begin"] - r["completed"] >= 0.05, r


def test_dedicated_nodes(tmp_path, monkeypatch):
    """3 virtual nodes of 1 rank, the last one dedicated: 2 clients send their blocks over MPI.
    Their writer's counters are out of their reach (stats() gives None for them)."""
    monkeypatch.setenv("PY_EXPECT_WRITER", "0")
    xml, out = configure(tmp_path, "nodes", nodes=1)
    run("writer.py", 3, xml, 2, ranks_per_node=1)
    check_every_block(out, clients=2, iterations=2)


def test_synchronous(tmp_path):
    """No dedicated resource: 2 clients store in end_iteration."""
    xml, out = configure(tmp_path, "sync")
    run("writer.py", 2, xml, 3)
    check_every_block(out, clients=2, iterations=3)


def test_background_thread(tmp_path):
    """One I/O thread per process."""
    xml, out = configure(tmp_path, "thread", threads=1)
    run("writer.py", 2, xml, 2)
    check_every_block(out, clients=2, iterations=2)


def test_errors_parameters_positions(tmp_path):
    """dtype/shape errors, parameters get/set, positions, zero-copy rules (checked in the
    program on every rank), and what it stored."""
    xml, out = configure(tmp_path, "api")
    output = run("api.py", 2, xml, tmp_path / "missing.xml")
    assert "missing.xml" in output
    blocks = stored_blocks(out, 0)
    for source in range(2):
        expect_array(f"field P{source}", blocks[("field", source, 0)], values.field(source, 0, 0))
        expect_array(f"resizable P{source}", blocks[("resizable", source, 0)],
                     np.arange(5, dtype=np.int32) + 10 * source)
        expect_array(f"placed P{source}", blocks[("placed", source, 0)], values.field(source, 0, 0))
        expect_array(f"counts P{source}", blocks[("counts", source, 0)],
                     values.counts(source, 0, 0))
        assert ("counts", source, 1) in blocks  # committed by end_iteration
        expect_array(f"fortran_counts P{source}", blocks[("fortran_counts", source, 0)],
                     values.counts(source, 0, 3))
        expect_array(f"resizable P{source} B1", blocks[("resizable", source, 1)],
                     np.arange(5, dtype=np.int32) * 7 + source)


def test_context_manager_on_exception(tmp_path):
    """With on_exception="finalize" (tests/python/test_faults.py checks the default, which ends
    the job), an exception inside `with` stops and finalizes (the dedicated core returns), the data of
    the iteration ended before it is stored, and Sidecore can be initialized again."""
    first, out1 = configure(tmp_path, "first", cores=1)
    second, out2 = configure(tmp_path, "second", cores=1)
    run("exception.py", 3, first, second)
    for it in range(2):  # iteration 1 was written, not ended: stored at stop, as incomplete
        blocks = stored_blocks(out1, it)
        for source in range(2):
            expect_array(f"first P{source} it{it}", blocks[("field", source, 0)],
                         values.field(source, it, 0))
    blocks = stored_blocks(out2, 0)
    for source in range(2):
        expect_array(f"second P{source}", blocks[("field", source, 1)], values.field(source, 7, 1))


def test_version():
    """python -m sidecore --version: Sidecore's version, the MPI library's first line (as
    mpi4py, linked to the same library, says it) and HDF5's (as h5dump says it, when there)."""
    result = subprocess.run([sys.executable, "-m", "sidecore", "--version"], capture_output=True,
                            text=True, timeout=60, env=mpi_env())
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 5, result.stdout
    assert lines[3] == ("Python scripts (<pyscript>): yes, Python "
                        f"{sys.version.split()[0]}"), lines[3]
    # The same ParaView line as the command-line tool's (found at configure time, or not;
    # the tool is built when CLI11 is there).
    assert lines[4].startswith("ParaView pipelines (<paraview>): "), lines[4]
    if os.environ.get("SIDECORE_CLI"):
        tool = subprocess.run([os.environ["SIDECORE_CLI"], "--version"], capture_output=True,
                              text=True, timeout=60, env=mpi_env())
        assert lines[4] in tool.stdout.splitlines(), (lines[4], tool.stdout)
    with open(os.path.join(HERE, "..", "..", "CMakeLists.txt")) as f:
        version = re.search(r"project\(Sidecore VERSION ([0-9.]+)", f.read()).group(1)
    assert lines[0] == f"sidecore {version}"
    probe = subprocess.run(
        [sys.executable, "-c",
         "from mpi4py import MPI; print(MPI.Get_library_version().splitlines()[0].rstrip(\" \\x00\"))"],
        capture_output=True, text=True, timeout=60, env=mpi_env())
    assert probe.returncode == 0, probe.stderr
    assert lines[1] == "MPI: " + probe.stdout.strip()
    assert re.fullmatch(r"HDF5: \d+\.\d+\.\d+", lines[2]), lines[2]
    try:
        h5dump = subprocess.run(["h5dump", "--version"], capture_output=True, text=True, timeout=60)
        hdf5 = re.search(r"(\d+\.\d+\.\d+)", h5dump.stdout).group(1)
        assert lines[2] == "HDF5: " + hdf5
    except FileNotFoundError:
        pass


def test_irregular_blocks_read_back(tmp_path):
    """Irregular, changing blocks written from Python by 3 clients and 1 dedicated core, read
    back with sidecore.read_output: the block list, each block, regions and the whole field."""
    import sidecore

    out = tmp_path / "blocks_out"
    text = open(os.path.join(HERE, "..", "blocks", "blocks.xml.in")).read()
    for key, value in {"CORES": 1, "NODES": 0, "THREADS": 0, "FILEMODE": "FilePerCore", "DOMAINS": 1,
                       "OUT": out, "OPTIONS": ""}.items():
        text = text.replace(f"@{key}@", str(value))
    xml = tmp_path / "blocks.xml"
    xml.write_text(text)
    iterations = 3
    run("blocks.py", 4, xml, iterations)
    written = {}
    for source in range(3):
        for line in open(tmp_path / f"written_{source}.txt"):
            it, src, ident, h, w, y, x = map(int, line.split())
            written.setdefault(it, set()).add((src, ident, (h, w), (y, x)))

    prefix = str(out / "blocks")
    assert sidecore.stored_iterations(prefix) == list(range(iterations))
    for it in range(iterations):
        with sidecore.read_output(prefix, it) as o:
            assert o.complete
            assert o.variables["field"] == (np.dtype(np.float64), (60, 50), len(written[it]))
            listed = {(b["source"], b["block"], b["shape"], b["position"])
                      for b in o.blocks("field")}
            assert listed == written[it]
            y, x = np.mgrid[0:60, 0:50]
            want = it * 100000.0 + y * 1000.0 + x + 0.25
            expect_array(f"field {it}", o.read("field"), want)
            expect_array(f"region {it}", o.read_region("field", (7, 3), (20, 41), np.float32),
                         want[7:27, 3:44].astype(np.float32))
            for source, ident, (h, w), (by, bx) in sorted(written[it])[:40]:
                expect_array(f"block {ident} of {source}", o.read_block("field", source, ident),
                             want[by:by + h, bx:bx + w])
            for source in range(3):
                got = o.read_block("tracers", source, 50 + it)
                expect_array("tracers", got, np.arange(len(got)) * 0.5 + source + it)
            with pytest.raises(sidecore.Error) as e:
                o.read_block("field", 0, -4)
            assert e.value.code == 19  # BLOCK_NOT_FOUND
            assert e.value.message.startswith("sidecore.Output.read_block: "), e.value.message
            # A variable without global extents has no whole array: the message says what to do.
            with pytest.raises(sidecore.Error) as e:
                o.read("tracers")
            assert e.value.code == 7 and "read_block('tracers', source, block)" in str(e.value)
            with pytest.raises(sidecore.Error) as e:
                o.read("tracer")
            assert e.value.code == 16, str(e.value)
            assert e.value.message.startswith("sidecore.Output.read: no variable 'tracer'")
            assert "did you mean 'tracers'?" in e.value.message, e.value.message
    with pytest.raises(sidecore.Error) as e:
        sidecore.read_output(prefix, 99)
    assert "stored iterations: 0, 1, 2" in str(e.value)
