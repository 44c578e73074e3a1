"""When a rank of a Python simulation fails: an exception (or a KeyboardInterrupt) leaving
`with sidecore.initialize(...)` on one rank, while the others wait for it in their halo exchange,
ends the whole job within a bound, with the traceback and the rank named, a non-zero exit, the
iterations stored before it intact and no shared memory left. on_exception="finalize" (or
SIDECORE_PYTHON_ON_EXCEPTION) keeps the collective finish for exceptions on every rank."""
import glob
import os
import re
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from mpi_job import (expect_array, expect_no_leaked_segments, job_segments, mpi_env,  # noqa: E402
                     run_job)
from test_client import configure, stored_blocks  # noqa: E402
import values  # noqa: E402

FAIL_AT = 10  # the iteration at which a client fails (halo.py)
SYNCED = 5  # the iteration after which every client synced (halo.py)
BOUND = 60  # seconds the job may take, however it ends: a hang fails the test


def halo_job(tmp_path, name, np_, how, *options, ranks_per_node=0, env=None, **mode):
    """Runs programs/halo.py with a 5 s buffer timeout; returns (status, output, out dir,
    seconds)."""
    xml, out = configure(tmp_path, name, **mode)
    with open(xml) as f:
        text = f.read()
    with open(xml, "w") as f:
        f.write(text.replace('timeout="60"', 'timeout="5"'))
    before = job_segments()
    argv = [sys.executable, os.path.join(HERE, "programs", "halo.py"), xml, 30, FAIL_AT, how]
    began = time.monotonic()
    status, output = run_job(np_, [str(a) for a in argv + list(options)],
                             mpi_env(ranks_per_node, **(env or {})), BOUND)
    seconds = time.monotonic() - began
    expect_no_leaked_segments(before)
    return status, output, out, seconds


def stored_iterations(out):
    """The iterations with a file under its final name."""
    names = glob.glob(os.path.join(out, "py_It*_Pr*.h5"))
    return sorted({int(re.search(r"_It(\d+)_", os.path.basename(n)).group(1)) for n in names})


def check_stored(out, clients, at_least, below, failed=None):
    """Iterations 0..at_least are stored whole, none from `below` on (client `failed`: none from
    FAIL_AT on), and every block stored holds exactly what its client wrote. Between them a
    file per writer may be missing (each client's own in thread and synchronous modes): the
    job ended while they were stored."""
    stored = stored_iterations(out)
    missing = [it for it in range(at_least + 1) if it not in stored]
    assert not missing, f"iterations {missing} not stored (stored: {stored})"
    assert all(it < below for it in stored), f"stored beyond iteration {below - 1}: {stored}"
    for it in stored:
        blocks = stored_blocks(out, it)
        expected = {("field", s, b) for s in range(clients) for b in range(2)}
        assert set(blocks) <= expected, f"iteration {it}: {sorted(set(blocks) - expected)}"
        if it >= FAIL_AT:
            assert not any(s == failed for _, s, _ in blocks), f"client {failed} at it{it}"
        if it <= at_least:
            assert set(blocks) == expected, f"iteration {it}: {sorted(expected - set(blocks))}"
        for (_, source, block), got in blocks.items():
            expect_array(f"field P{source} B{block} it{it}", got,
                         values.field(source, it, block))
    return stored


def failing_world_rank(output):
    """The MPI_COMM_WORLD rank of client 1, as halo.py printed it."""
    m = re.search(r"rank (\d+): client 1(?!\d)", output)  # lines of ranks may run together
    assert m, "client 1 did not say its rank"
    return int(m.group(1))


def expect_aborted(status, output, np_, exception_line):
    """A non-zero exit, the traceback of client 1 with its exception, the rank named before
    and after it, and no rank finished."""
    assert status != 0, "the job exited with 0"
    rank = failing_world_rank(output)
    where = f"sidecore: rank {rank} of {np_} (pid "
    assert where in output, f"the rank is not named ({where!r})"
    head = output.index(where)
    assert "left `with sidecore.initialize(...)`; its traceback:" in output[head:]
    assert "Traceback (most recent call last):" in output[head:]
    assert 'halo.py", line' in output[head:], "the traceback does not reach the program"
    assert exception_line in output[head:], f"{exception_line!r} not printed"
    assert re.search(rf"sidecore: rank {rank} of {np_} .*: ending the job with "
                     r"MPI_Abort\(MPI_COMM_WORLD, 1\) instead of finalizing", output)
    assert f"this client was in iteration {FAIL_AT}" in output
    assert ": done" not in output, "a rank finished although the job was ended"


@pytest.mark.parametrize("mode", ["cores", "nodes", "thread", "sync"])
def test_one_rank_raises(tmp_path, mode):
    """One client of three raises at iteration 10 while the others wait for its halo: in every
    mode, the job ends with its traceback and rank, exit != 0, iterations 0..5 (synced) and
    any later one stored read back exact."""
    layout = {"cores": dict(np_=4, cores=1), "nodes": dict(np_=4, nodes=1, ranks_per_node=1),
              "thread": dict(np_=3, threads=1), "sync": dict(np_=3)}[mode]
    status, output, out, seconds = halo_job(tmp_path, mode, how="raise", **layout)
    expect_aborted(status, output, layout["np_"],
                   f"RuntimeError: client 1 diverged at iteration {FAIL_AT}")
    # The neighbours of client 1 may finish iteration 10 (their halos from it were sent).
    stored = check_stored(out, 3, SYNCED, FAIL_AT + 1, failed=1)
    print(f"ended after {seconds:.1f} s; stored {stored}")


@pytest.mark.parametrize("mode", ["cores", "nodes", "thread"])
def test_one_rank_interrupted(tmp_path, mode):
    """A real SIGINT to one client (KeyboardInterrupt inside `with`): as an exception."""
    layout = {"cores": dict(np_=4, cores=1), "nodes": dict(np_=4, nodes=1, ranks_per_node=1),
              "thread": dict(np_=3, threads=1)}[mode]
    status, output, out, _ = halo_job(tmp_path, "int_" + mode, how="interrupt", **layout)
    expect_aborted(status, output, layout["np_"], "KeyboardInterrupt")
    check_stored(out, 3, SYNCED, FAIL_AT + 1, failed=1)


def test_one_rank_write_fails(tmp_path):
    """A misspelt variable name in one client's write (sidecore.Error inside `with`), the
    others in their halo exchange: the job ends with the C API's message and the rank."""
    status, output, out, _ = halo_job(tmp_path, "badwrite", 4, "badwrite", cores=1)
    expect_aborted(status, output, 4, "sidecore._errors.Error: DAMARIS_UNDEFINED_VARIABLE")
    assert "'feild'" in output, "the message does not name the variable"
    check_stored(out, 3, SYNCED, FAIL_AT + 1, failed=1)


def test_dedicated_core_raising_after_serving_finalizes(tmp_path):
    """A dedicated core that raises after start() returned (every client stopped, as when it
    reports a store failure) finalizes with the others instead of ending the job: the clients
    finish, everything is stored, the exit status is the exception's (1)."""
    status, output, out, _ = halo_job(tmp_path, "server", 4, "server", cores=1)
    assert status != 0, "the job exited with 0"
    # Python prints an uncaught exception in pieces: another rank's line may come between.
    assert "rank 3: the analysis after serving failed" in output
    assert "MPI_Abort" not in output and "MPI_ABORT" not in output, "the job was aborted"
    for rank in range(3):
        assert f"rank {rank}: done" in output, f"rank {rank} did not finish"
    assert check_stored(out, 3, 29, 30) == list(range(30))


@pytest.mark.parametrize("how_chosen", ["keyword", "environment"])
def test_every_rank_raises_and_finalizes(tmp_path, how_chosen):
    """on_exception="finalize" (or SIDECORE_PYTHON_ON_EXCEPTION=finalize, which overrides the
    keyword): every client raises at iteration 10; they stop and finalize together, the
    dedicated core stores everything, and each rank's exception ends it with Python's exit
    code 1 (no MPI_Abort)."""
    options, env = ((["finalize"], None) if how_chosen == "keyword" else
                    (["abort"], {"SIDECORE_PYTHON_ON_EXCEPTION": "finalize"}))
    status, output, out, _ = halo_job(tmp_path, "fin_" + how_chosen, 4, "everywhere", *options,
                                      env=env, cores=1)
    assert status != 0, "the job exited with 0"
    for source in range(3):  # (lines of different ranks may run into each other)
        assert f"every client diverged, {source} at iteration {FAIL_AT}" in output, source
    assert "MPI_Abort" not in output and "MPI_ABORT" not in output, "the job was aborted"
    stored = check_stored(out, 3, FAIL_AT - 1, FAIL_AT)
    assert stored == list(range(FAIL_AT)), stored


def test_normal_exit_inside_with_finalizes(tmp_path):
    """sys.exit(0) inside `with` on every client is a normal end: finalized, exit 0, stored."""
    status, output, out, _ = halo_job(tmp_path, "exit0", 4, "exit0", cores=1)
    assert status == 0, f"exit status {status}"
    assert "MPI_Abort" not in output and "MPI_ABORT" not in output
    assert check_stored(out, 3, FAIL_AT - 1, FAIL_AT) == list(range(FAIL_AT))


def test_configuration_error_is_printed_once(tmp_path):
    """A configuration error, which every rank raises alike, left uncaught on 3 ranks: rank 0
    prints the traceback with the error (file, line, what is valid); the other ranks say one
    line each that points to it, not the traceback again."""
    xml = tmp_path / "bad.xml"
    xml.write_text('<?xml version="1.0"?>\n<simulation name="bad">\n<architecture>'
                   '<domains count="1"/><dedicated cores="0" nodes="0"/>'
                   '<buffer name="b" size="1048576"/></architecture>\n'
                   '<data><layout name="l" type="dubble" dimensions="4"/>'
                   '<variable name="v" layout="l"/></data>\n</simulation>\n')
    program = tmp_path / "sim.py"
    program.write_text("from mpi4py import MPI\nimport sidecore\n"
                       f"with sidecore.initialize({str(xml)!r}, MPI.COMM_WORLD):\n    pass\n")
    status, output = run_job(3, [sys.executable, str(program)], mpi_env(), BOUND)
    assert status != 0, "the job ended with status 0"
    assert output.count("Traceback (most recent call last)") == 1, output
    # Not anchored to the "Error: " before it: the ranks' stderr reach mpirun in pieces, and
    # another rank's line may come between the exception's name and its message.
    said = re.findall(r"DAMARIS_CONFIG_ERROR: sidecore.initialize: (\S*)bad.xml:4: "
                      r"invalid value 'dubble'", output)
    assert said == [f"{tmp_path}/"], output
    for rank in (1, 2):
        assert (f"sidecore: rank {rank}: DAMARIS_CONFIG_ERROR, the same as rank 0's" in output), \
            output


def test_invalid_policy_is_refused_before_mpi(monkeypatch):
    """A value that is neither "abort" nor "finalize" is refused, naming where it came from and
    what is valid, before anything collective (no MPI needed)."""
    import sidecore

    monkeypatch.delenv("SIDECORE_PYTHON_ON_EXCEPTION", raising=False)
    with pytest.raises(sidecore.Error) as error:
        sidecore.initialize("unused.xml", on_exception="ignore")
    assert "initialize(on_exception='ignore'): valid values are 'abort'" in str(error.value)
    assert "'finalize'" in str(error.value)
    monkeypatch.setenv("SIDECORE_PYTHON_ON_EXCEPTION", "Abort")
    with pytest.raises(sidecore.Error) as error:
        sidecore.initialize("unused.xml", on_exception="finalize")
    assert "SIDECORE_PYTHON_ON_EXCEPTION='Abort': valid values" in str(error.value)


def scripted_job(tmp_path, name, script):
    """halo.py on 2 virtual nodes of 2 ranks (1 client, 1 dedicated core each: 2 writers), no
    client failing, with the <pyscript> `script` of scripts/ on the field."""
    xml, out = configure(tmp_path, name, cores=1)
    with open(xml) as f:
        text = f.read()
    path = os.path.join(HERE, "scripts", script)
    text = text.replace('timeout="60"', 'timeout="5"')
    text = text.replace('<variable name="field" layout="plane" store="out"/>',
                        '<variable name="field" layout="plane" store="out" script="s"/>')
    text = text.replace("</storage>", f'</storage><scripts><pyscript name="s" file="{path}" '
                                      'language="python"/></scripts>')
    with open(xml, "w") as f:
        f.write(text)
    before = job_segments()
    argv = [sys.executable, os.path.join(HERE, "programs", "halo.py"), xml, 30, FAIL_AT, "none"]
    status, output = run_job(4, [str(a) for a in argv], mpi_env(2), BOUND)
    expect_no_leaked_segments(before)
    return status, output, out


def test_script_raising_between_collectives_ends_the_job(tmp_path):
    """A <pyscript> that uses the writers' communicator raises on one of two writers at
    iteration 3, before the allreduce the other waits in: the job ends with the traceback and
    the writer named (not a hang), exit != 0, iterations 0..2 stored exact."""
    status, output, out = scripted_job(tmp_path, "collective", "sums_then_raises.py")
    assert status != 0, "the job exited with 0"
    m = re.search(r"sidecore: writer 0 of 2 \(rank (\d+) of MPI_COMM_WORLD, pid \d+\): script 's' "
                  r"\(.*sums_then_raises\.py\) raised at iteration 3 after using the writers' "
                  r"communicator; its traceback:", output)
    assert m, "the failing writer is not named"
    tail = output[m.start():]
    assert 'sums_then_raises.py", line' in tail
    assert "ValueError: writer 0 cannot sum iteration 3" in tail
    assert "so the job is ended (MPI_Abort(MPI_COMM_WORLD, 1))" in tail
    check_stored(out, 2, 2, 30)


def test_script_raising_alone_lets_the_run_go_on(tmp_path):
    """A <pyscript> that uses no communicator raises on one writer: logged with its traceback,
    counted, and the run goes on to the end (exit 0, every iteration stored exact)."""
    status, output, out = scripted_job(tmp_path, "alone", "raises_alone.py")
    assert status == 0, f"exit status {status}"
    assert "raised at iteration 3; the run goes on" in output
    assert "ValueError: writer 0 cannot analyse iteration 3" in output
    assert "MPI_Abort" not in output and "MPI_ABORT" not in output
    assert check_stored(out, 2, 29, 30) == list(range(30))
    # The run report counts the failed call, on the writer that raised.
    import glob
    import json
    reports = glob.glob(os.path.join(out, "*_report.json"))
    assert len(reports) == 1, reports
    with open(reports[0]) as f:
        report = json.load(f)
    scripts = {w["index"]: [(a["name"], a["kind"], a["calls"], a["failures"]) for a in w["actions"]]
               for w in report["writers"]}
    assert scripts == {0: [("s", "script", 30, 1)], 1: [("s", "script", 30, 0)]}, scripts
    assert report["totals"]["action_failures"] == 1
