"""Dask as Damaris runs it, and DamarisData as Damaris builds it, under mpirun.

Workers: only a Dask scheduler is started beforehand (Damaris's 3dmesh_dask README), from the
build's Python with no PYTHONPATH anywhere; the dedicated cores start one worker each, named
<simulation>_<magic>_<server>, with nthreads threads, that import damaris4py (as the scheduler
does); a Damaris-style script's Dask results are compared with NumPy's on the same field; after
the run the workers are gone (processes ended, scheduler empty), or still serving when
keep-workers="yes".

DamarisData: the keys at every level are Damaris's PyAction's (plus Sidecore's listed extras),
a time-varying="false" variable is there at iteration 0 only, a variable a server received no
block of is there, empty, with its type string."""
import glob
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
from mpi_job import expect_array, mpi_env  # noqa: E402
from test_scripts import SCRIPTS, configure, field, pyscript, run_c  # noqa: E402

# Damaris's PyAction (include/damaris/scripts/PyAction.hpp, src/scripts/PyAction.cpp).
DAMARIS_ENV_KEYS = {"is_dedicated_node", "is_dedicated_core", "servers_per_node",
                    "clients_per_node", "ranks_per_node", "cores_per_node", "number_of_nodes",
                    "simulation_name", "simulation_magic_number"}
DASK_ENV_KEYS = {"dask_scheduler_file", "dask_workers_name", "dask_nworkers",
                 "dask_threads_per_worker"}
VARIABLE_KEYS = {"numpy_data", "sort_list", "type_string"}
# Sidecore's extra keys, documented in docs/python_scripts.md.
EXTRA_DASK_ENV_KEYS = {"dask_timeout", "dask_keep_workers"}
EXTRA_VARIABLE_KEYS = {"sort_data", "block_source", "block_domains"}

WAIT = 120  # seconds: bounds every wait on the loaded test machine (never a timing assertion)


def no_pythonpath(env):
    env = dict(env)
    env.pop("PYTHONPATH", None)
    return env


class Scheduler:
    """A Dask scheduler alone, started from the build's Python with no PYTHONPATH."""

    def __init__(self, tmp_path):
        self.file = str(tmp_path / "scheduler.json")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--scheduler-file",
             self.file, "--host", "127.0.0.1", "--port", "0", "--no-dashboard"],
            env=no_pythonpath(os.environ), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + WAIT
        while not os.path.exists(self.file):
            assert self.process.poll() is None, "the Dask scheduler ended"
            assert time.monotonic() < deadline, "the Dask scheduler did not start"
            time.sleep(0.1)

    def client(self):
        from distributed import Client
        return Client(scheduler_file=self.file, timeout="60s")

    def worker_names(self):
        with self.client() as client:
            return sorted(w["name"] for w in client.scheduler_info(n_workers=-1)["workers"]
                          .values())

    def stop(self):
        self.process.kill()
        self.process.wait()


def alive(pid):
    """Whether process pid runs (a zombie has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_until(condition, what):
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def run_workers_job(tmp_path, scheduler, iterations, nodes=0, **attributes):
    """4 clients and 2 dedicated cores (two virtual nodes of 3 ranks), or a dedicated node of 2
    ranks (nodes=1), running dd_workers.py; no PYTHONPATH in the job. Returns the output
    directory."""
    script = pyscript("dw", "dd_workers.py", scheduler_file=scheduler.file, timeout=60,
                      **attributes)
    xml, out = configure(tmp_path, clients=4, cores=0 if nodes else 1, nodes=nodes,
                         field_scripts="dw", other_scripts="#", scripts=[script])
    run_c(xml, 6, out, iterations, ranks_per_node=2 if nodes else 3, PYTHONPATH="",
          DD_LAST_ITERATION=iterations - 1)
    return out


def load_json(path):
    assert os.path.exists(path), f"the script did not write {os.path.basename(path)}"
    with open(path) as f:
        return json.load(f)


def test_workers_started_and_stopped(tmp_path):
    """keep-workers="no" (the default): each dedicated core starts a worker of nthreads
    threads that computes the script's Dask work (checked against NumPy), and no worker
    process outlives the run."""
    scheduler = Scheduler(tmp_path)
    try:
        iterations = 3
        out = run_workers_job(tmp_path, scheduler, iterations, nthreads=2)
        whole = {it: np.concatenate([field(it, c) for c in range(4)], axis=2)
                 for it in range(iterations)}
        pids = set()
        for it in range(iterations):
            record = load_json(f"{out}/dw_it{it}.json")
            magic = record["magic"]
            names = {f"scripted_{magic}_{s}" for s in range(2)}
            assert set(record["workers"]) == names, record["workers"]
            assert all(w["nthreads"] == 2 for w in record["workers"].values()), record
            assert record["scheduler_imports_damaris4py"] is True
            assert np.isclose(record["sum"], whole[it].sum(), rtol=1e-13, atol=0), record
            pids |= {w["pid"] for w in record["workers"].values()}
            for s in range(2):
                env = load_json(f"{out}/dw_env_S{s}_it{it}.json")
                assert set(env) == DASK_ENV_KEYS | EXTRA_DASK_ENV_KEYS, env
                assert env["dask_scheduler_file"] == scheduler.file
                assert env["dask_workers_name"] == f"scripted_{magic}_{s}"
                assert env["dask_nworkers"] == 1 and env["dask_threads_per_worker"] == 2
                assert env["dask_keep_workers"] is False
        assert len(pids) == 2, pids  # the same two workers served every iteration
        series = np.stack([whole[it] for it in range(iterations)])
        expect_array("DaskStats mean", np.load(f"{out}/dw_mean.npy"), series.mean(axis=0))
        variance = np.load(f"{out}/dw_variance.npy")
        assert np.allclose(variance, series.var(axis=0, ddof=1), rtol=1e-9, atol=1e-6)
        # Stopped at the end of the run: retired from the scheduler, processes ended.
        assert not any(alive(pid) for pid in pids), pids
        wait_until(lambda: scheduler.worker_names() == [], "workers stayed on the scheduler")
    finally:
        scheduler.stop()


def test_dedicated_nodes_start_workers(tmp_path):
    """A dedicated node of 2 ranks: each of its servers starts and stops a worker too."""
    scheduler = Scheduler(tmp_path)
    try:
        out = run_workers_job(tmp_path, scheduler, 2, nodes=1)
        pids = set()
        for it in range(2):
            record = load_json(f"{out}/dw_it{it}.json")
            assert sorted(record["workers"]) == [f"scripted_{record['magic']}_{s}"
                                                 for s in range(2)], record["workers"]
            assert np.isclose(record["sum"], sum(field(it, c).sum() for c in range(4)),
                              rtol=1e-13, atol=0), record
            pids |= {w["pid"] for w in record["workers"].values()}
        assert not any(alive(pid) for pid in pids), pids
        wait_until(lambda: scheduler.worker_names() == [], "workers stayed on the scheduler")
    finally:
        scheduler.stop()


def test_kept_workers_outlive_the_run(tmp_path):
    """keep-workers="yes": the workers still serve the scheduler after the run; the scheduler's
    shutdown ends them, as Damaris's README stops a cluster. nthreads="0", as OPM Flow's
    template says, is passed on to Dask, which gives each worker its own default."""
    from dask.system import CPU_COUNT  # what dask-worker gives for nthreads 0
    scheduler = Scheduler(tmp_path)
    pids = set()
    try:
        out = run_workers_job(tmp_path, scheduler, 2, keep_workers="yes", nthreads=0)
        record = load_json(f"{out}/dw_it1.json")
        magic = record["magic"]
        names = [f"scripted_{magic}_{s}" for s in range(2)]
        assert sorted(record["workers"]) == names, record["workers"]
        assert all(w["nthreads"] == CPU_COUNT for w in record["workers"].values()), record
        pids = {w["pid"] for w in record["workers"].values()}
        env = load_json(f"{out}/dw_env_S0_it1.json")
        assert env["dask_keep_workers"] is True
        assert env["dask_threads_per_worker"] == 0, env
        assert all(alive(pid) for pid in pids), "a kept worker ended with the run"
        assert scheduler.worker_names() == names
        with scheduler.client() as client:
            assert client.submit(np.add, 1, 2).result(WAIT) == 3, "a kept worker computes"
            client.shutdown()
        wait_until(lambda: not any(alive(pid) for pid in pids), "kept workers outlived the "
                   "scheduler's shutdown")
    finally:
        for pid in pids:
            if alive(pid):
                os.kill(pid, 9)
        scheduler.stop()


def test_job_worker_keeps_what_the_run_computed(tmp_path):
    """Damaris's statistics workflow: the job script starts a scheduler and a worker of its own
    (no PYTHONPATH: damaris4py reaches it through the run), two simulations fold their fields
    into one DaskStats; the run's workers hand their data over when they retire, so that the
    job's worker serves the mean and variance of both runs afterwards."""
    scheduler = Scheduler(tmp_path)
    worker = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", scheduler.file,
         "--nthreads", "1", "--no-nanny", "--no-dashboard", "--name", "job-worker"],
        env=no_pythonpath(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: scheduler.worker_names() == ["job-worker"], "no job worker")
        fields = []
        for run in range(2):
            out = run_workers_job(tmp_path / f"run{run}", scheduler, 2)
            fields += [np.concatenate([field(it, c) for c in range(4)], axis=2)
                       for it in range(2)]
            record = load_json(f"{out}/dw_it1.json")
            assert "job-worker" in record["workers"] and len(record["workers"]) == 3, record
            wait_until(lambda: scheduler.worker_names() == ["job-worker"],
                       "the run's workers stayed")
        series = np.stack(fields)
        sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "plugins", "python",
                                        "sidecore-pyscript"))
        from damaris4py.dask.damaris_stats import DaskStats
        with scheduler.client() as client:
            # The run put damaris4py on the job worker's path (eval: nothing of this module
            # is importable there).
            importable = client.run(eval, "__import__('importlib.util').util.find_spec("
                                    "'damaris4py') is not None")
            assert list(importable.values()) == [True], importable
            stats = DaskStats("dw_field_stats", "dw_field_lock")
            assert stats.return_count(client) == 4
            mean, variance = stats.return_mean_var_tuple(client)
            expect_array("mean of both runs", mean.compute(), series.mean(axis=0))
            assert np.allclose(variance.compute(), series.var(axis=0, ddof=1), rtol=1e-9,
                               atol=1e-6)
    finally:
        worker.kill()
        worker.wait()
        scheduler.stop()


def test_unreachable_scheduler_starts_no_worker(tmp_path):
    """A scheduler file naming a scheduler nobody answers at: a warning, no worker process,
    dask_scheduler_file '' in DamarisData, and the run ends normally."""
    dead = tmp_path / "dead.json"
    dead.write_text(json.dumps({"type": "Scheduler", "id": "none",
                                "address": "tcp://127.0.0.1:9", "services": {}, "workers": {}}))
    xml, out = configure(tmp_path, clients=3, cores=1, field_scripts="keys", other_scripts="#",
                         scripts=[pyscript("keys", "dd_keys.py", scheduler_file=dead,
                                           timeout=1)])
    output = run_c(xml, 4, out, 1)
    assert "no scheduler answered within 1 s" in output, output
    assert "starting Dask worker" not in output, output
    assert load_json(f"{out}/keys_S0_it0.json")["dask_env"]["dask_scheduler_file"] == ""


def run_damaris_data(tmp_path, iterations):
    with open(os.path.join(HERE, "damaris_data.xml.in")) as f:
        text = f.read()
    xml = tmp_path / "damaris_data.xml"
    xml.write_text(text.replace("@CLIENTS@", "4").replace(
        "@SCRIPT@", os.path.join(SCRIPTS, "dd_keys.py")))
    out = tmp_path / "out"
    out.mkdir()
    from mpi_job import run_job
    status, output = run_job(
        6, [sys.executable, os.path.join(HERE, "dd_writer.py"), str(xml), str(iterations)],
        mpi_env(3, PYSCRIPT_OUT=out), 240)
    assert status == 0, output
    return str(out)


def test_damaris_data_keys(tmp_path):
    """DamarisData of a Damaris-style script on 2 dedicated cores (clients 0, 1 and 2, 3):
    Damaris's keys at every level; coords (time-varying="false", written at iteration 0) at
    iteration 0 only; probe (written by client 0 only) on server 1 with no block but its type
    string; every array and sort_list entry as the formulas of dd_writer.py give."""
    iterations = 3
    out = run_damaris_data(tmp_path, iterations)
    for it in range(iterations):
        for s in range(2):
            dd = load_json(f"{out}/keys_S{s}_it{it}.json")
            assert set(dd) == {"damaris_env", "dask_env", "iteration_data"}, set(dd)
            assert set(dd["damaris_env"]) == DAMARIS_ENV_KEYS, dd["damaris_env"]
            assert set(dd["dask_env"]) == DASK_ENV_KEYS | EXTRA_DASK_ENV_KEYS, dd["dask_env"]
            assert dd["dask_env"]["dask_scheduler_file"] == ""
            data = dd["iteration_data"]
            expected = {"iteration", "field", "probe"} | ({"coords"} if it == 0 else set())
            assert set(data) == expected, (it, s, set(data))
            assert data["iteration"] == it
            for name, var in data.items():
                if name != "iteration":
                    assert set(var) == VARIABLE_KEYS | EXTRA_VARIABLE_KEYS, (name, set(var))
            magic = dd["damaris_env"]["simulation_magic_number"]
            clients = (2 * s, 2 * s + 1)
            types = {"field": "_double", "coords": "_int", "probe": "_short"}
            for name in set(data) - {"iteration"}:
                var = data[name]
                assert var["type_string"] == types[name], (name, var)
                writers = clients if name != "probe" else [c for c in clients if c == 0]
                keys = [f"P{c}_B0" for c in writers]
                assert sorted(var["numpy_data"]) == keys, (name, var["numpy_data"])
                starts = {"field": lambda c: [0, 3 * c], "coords": lambda c: [0],
                          "probe": lambda c: [0]}[name]
                assert var["sort_list"] == [[f"S{s}_I{it}_{magic}", f"P{c}_B0", starts(c)]
                                            for c in writers], (name, var["sort_list"])
                assert var["block_source"] == list(writers)
                assert var["block_domains"] == [0] * len(writers)
                for c in writers:
                    got = np.load(f"{out}/keys_{name}_P{c}_B0_S{s}_it{it}.npy")
                    y, x = np.meshgrid(np.arange(2), np.arange(3), indexing="ij")
                    want = {"field": (it * 100 + y * 10 + 3 * c + x).astype(np.float64),
                            "coords": (7 * c + np.arange(3)).astype(np.int32),
                            "probe": (it + np.arange(2)).astype(np.int16)}[name]
                    expect_array(f"{name} P{c} S{s} it{it}", got, want)
            if it > 0:
                assert not glob.glob(f"{out}/keys_coords_*_it{it}.npy")
