"""Python scripts on the writers (<pyscript>), under mpirun: script_writer (C) or an mpi4py
simulation writes known values; the scripts of scripts/ save what they receive and what they
compute across the writers; every array is compared, value by value, with the formulas of
script_writer.c, and every global sum with NumPy's over the whole field."""
import glob
import json
import os
import sys
import time

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from mpi_job import expect_array, expect_no_leaked_segments, job_segments, mpi_env, run_job  # noqa: E402

NX, NY, NZ = 5, 4, 3
SCRIPTS = os.path.join(HERE, "scripts")


def field(it, c):
    z, y, x = np.meshgrid(np.arange(NZ), np.arange(NY), np.arange(NX), indexing="ij")
    return it * 1e6 + z * 1e4 + y * 1e2 + (c * NX + x).astype(np.float64)


def global_field_sum(it, clients):
    return float(sum(field(it, c).sum() for c in range(clients)))


def halo_interior(it, c):
    y, x = np.meshgrid(np.arange(NY), np.arange(NX), indexing="ij")
    return (it * 1000 + c * 100 + y * 10 + x).astype(np.int32)


def halo_full(it, c):
    full = np.full((NY + 2, NX + 3), -1, dtype=np.int32)
    full[1:1 + NY, 2:2 + NX] = halo_interior(it, c)
    return full


def column(it, c):
    """C order [y][x], as stored."""
    y, x = np.meshgrid(np.arange(NY), np.arange(NX), indexing="ij")
    return (it + c * 0.5 + x * 0.25 + y * 4).astype(np.float32)


def pyscript(name, file, **attributes):
    extra = "".join(f' {key.replace("_", "-")}="{value}"' for key, value in attributes.items())
    return f'<pyscript name="{name}" file="{os.path.join(SCRIPTS, file)}" language="python"{extra}/>'


def configure(tmp_path, clients, cores=0, nodes=0, threads=0, field_scripts="rec,dd",
              other_scripts="rec dd", scripts=None):
    out = tmp_path / "out"
    (out / "h5").mkdir(parents=True)
    if scripts is None:
        scripts = [pyscript("rec", "record.py"), pyscript("dd", "dd_record.py", frequency=2)]
    with open(os.path.join(HERE, "scripts.xml.in")) as f:
        text = f.read()
    for key, value in {"CORES": cores, "NODES": nodes, "THREADS": threads, "CLIENTS": clients,
                       "FIELD_SCRIPTS": field_scripts, "OTHER_SCRIPTS": other_scripts,
                       "OUT": out, "PYSCRIPTS": "\n".join(scripts)}.items():
        text = text.replace(f"@{key}@", str(value))
    xml = tmp_path / "scripts.xml"
    xml.write_text(text)
    return str(xml), str(out)


def run(argv, np_, out, ranks_per_node=0, expect_status=0, **env):
    before = job_segments()
    status, output = run_job(np_, argv, mpi_env(ranks_per_node, PYSCRIPT_OUT=out, **env), 240)
    assert status == expect_status, f"exit status {status}, expected {expect_status}"
    if expect_status == 0:
        for rank in range(np_):
            assert f"rank {rank}: done" in output, f"rank {rank} did not finish"
        expect_no_leaked_segments(before)
    return output


def run_c(xml, np_, out, iterations, **kwargs):
    return run([os.environ["SCRIPT_WRITER"], xml, str(iterations)], np_, out, **kwargs)


def load(path):
    assert os.path.exists(path), f"the script did not write {os.path.basename(path)}"
    return np.load(path)


def check_sidecore_style(out, clients, iterations, servers):
    for it in range(iterations):
        for c in range(clients):
            stem = f"{out}/sc_field_P{c}_B0_it{it}"
            expect_array(f"field P{c} it{it} data", load(stem + "_data.npy"), field(it, c))
            expect_array(f"field P{c} it{it} full", load(stem + "_full.npy"), field(it, c))
            with open(stem + ".json") as f:
                meta = json.load(f)
            assert meta["position"] == [0, 0, c * NX], meta
            assert meta["global_shape"] == [NZ, NY, NX * clients], meta
            assert meta["ghosts"] is None and meta["writeable"] is False, meta
            assert meta["servers"] == servers and not meta["incomplete"], meta
            stem = f"{out}/sc_halo_P{c}_B0_it{it}"
            expect_array(f"halo P{c} it{it} interior", load(stem + "_data.npy"),
                         halo_interior(it, c))
            expect_array(f"halo P{c} it{it} whole", load(stem + "_full.npy"), halo_full(it, c))
            with open(stem + ".json") as f:
                assert json.load(f)["ghosts"] == [[1, 2], [1, 1]]
            expect_array(f"column P{c} it{it}", load(f"{out}/sc_column_P{c}_B0_it{it}_data.npy"),
                         column(it, c))
        with open(f"{out}/sc_sum_it{it}.txt") as f:
            assert float(f.read()) == global_field_sum(it, clients), f"sum at iteration {it}"
    seen = []
    for name in glob.glob(f"{out}/sc_finish_S*.json"):
        with open(name) as f:
            finish = json.load(f)
        assert finish["calls"] == list(range(iterations)), finish
        seen += finish["known_clients"]
    assert len(glob.glob(f"{out}/sc_finish_S*.json")) == servers
    assert sorted(seen) == list(range(clients)), "every client is known to one writer"


def check_damaris_style(out, clients, iterations, servers, frequency=2):
    for it in range(iterations):
        ran = it % frequency == 0
        assert os.path.exists(f"{out}/dd_sum_it{it}.txt") == ran, f"frequency at iteration {it}"
        if not ran:
            continue
        with open(f"{out}/dd_sum_it{it}.txt") as f:
            assert float(f.read()) == global_field_sum(it, clients)
        listed = {}
        for s in range(servers):
            with open(f"{out}/dd_S{s}_it{it}.json") as f:
                info = json.load(f)
            assert info["calls"] == it // frequency + 1, "top-level names persist"
            assert info["env"]["simulation_name"] == "scripted"
            variables = info["variables"]
            assert variables["field"]["type_string"] == "_double"
            assert variables["halo"]["type_string"] == "_int"
            assert variables["column"]["type_string"] == "_float"
            assert all(v["sort_data_is_sort_list"] for v in variables.values())
            magic = info["env"]["simulation_magic_number"]
            for entry in variables["field"]["sort_list"]:
                assert entry[0] == f"S{s}_I{it}_{magic}", entry
                listed[entry[1]] = entry[2]
        assert listed == {f"P{c}_B0": [0, 0, c * NX] for c in range(clients)}, listed
        for c in range(clients):
            expect_array(f"DD field P{c} it{it}", load(f"{out}/dd_field_P{c}_B0_it{it}.npy"),
                         field(it, c))
            # Damaris hands the whole block, ghost zones included.
            expect_array(f"DD halo P{c} it{it}", load(f"{out}/dd_halo_P{c}_B0_it{it}.npy"),
                         halo_full(it, c))
            # A Fortran layout keeps the order its dimensions are listed in: (NX, NY).
            expect_array(f"DD column P{c} it{it}", load(f"{out}/dd_column_P{c}_B0_it{it}.npy"),
                         column(it, c).T)


def check_stored(out, clients, iterations):
    """The stores ran as well: every field block read back from the HDF5 files."""
    for it in range(iterations):
        found = {}
        for name in glob.glob(f"{out}/h5/scripted_It{it}_*.h5"):
            with h5py.File(name, "r") as h5:
                if "field" in h5:
                    for key in h5["field"]:
                        found[int(key[1:])] = h5["field"][key][()]
        assert sorted(found) == list(range(clients)), f"iteration {it}: {sorted(found)}"
        for c, got in found.items():
            expect_array(f"stored field P{c} it{it}", got, field(it, c))


def python_loaded(output, rank):
    for line in output.splitlines():
        if line.startswith(f"rank {rank}: done"):
            return line.endswith("python loaded")
    raise AssertionError(f"rank {rank} said nothing")


def test_dedicated_cores(tmp_path):
    """3 clients and 1 dedicated core: both styles of script, the stores, and Python only in
    the dedicated core."""
    xml, out = configure(tmp_path, clients=3, cores=1)
    output = run_c(xml, 4, out, 4)
    check_sidecore_style(out, 3, 4, servers=1)
    check_damaris_style(out, 3, 4, servers=1)
    check_stored(out, 3, 4)
    assert [python_loaded(output, r) for r in range(4)] == [False, False, False, True]
    with open(f"{out}/dd_S0_it0.json") as f:
        info = json.load(f)
    assert info["env"]["is_dedicated_core"] and not info["env"]["is_dedicated_node"]
    assert info["env"]["servers_per_node"] == 1 and info["env"]["clients_per_node"] == 3
    assert info["known_clients"] == [0, 1, 2]


def test_dedicated_cores_two_nodes(tmp_path):
    """Two virtual nodes of 3 ranks, a dedicated core each: every script sees its own clients'
    blocks and the global sum goes through both servers."""
    xml, out = configure(tmp_path, clients=4, cores=1)
    run_c(xml, 6, out, 3, ranks_per_node=3)
    check_sidecore_style(out, 4, 3, servers=2)
    check_damaris_style(out, 4, 3, servers=2)
    check_stored(out, 4, 3)


def test_dedicated_nodes(tmp_path):
    """Two client nodes and one dedicated node of 2 ranks: two node servers run the scripts."""
    xml, out = configure(tmp_path, clients=4, nodes=1)
    output = run_c(xml, 6, out, 3, ranks_per_node=2)
    check_sidecore_style(out, 4, 3, servers=2)
    check_damaris_style(out, 4, 3, servers=2)
    check_stored(out, 4, 3)
    assert [python_loaded(output, r) for r in range(6)] == [False] * 4 + [True] * 2
    with open(f"{out}/dd_S0_it0.json") as f:
        assert json.load(f)["env"]["is_dedicated_node"]


def test_background_thread(tmp_path):
    """No dedicated resource, an I/O thread per process: the scripts run on those threads."""
    xml, out = configure(tmp_path, clients=2, threads=1)
    run_c(xml, 2, out, 4)
    check_sidecore_style(out, 2, 4, servers=2)
    check_damaris_style(out, 2, 4, servers=2)
    check_stored(out, 2, 4)


def test_synchronous(tmp_path):
    """Synchronous output: the scripts run inside damaris_end_iteration on every process."""
    xml, out = configure(tmp_path, clients=2)
    run_c(xml, 2, out, 4)
    check_sidecore_style(out, 2, 4, servers=2)
    check_damaris_style(out, 2, 4, servers=2)
    check_stored(out, 2, 4)


def test_python_simulation(tmp_path):
    """An mpi4py simulation: its dedicated core is a Python process, whose interpreter the
    scripts share."""
    xml, out = configure(tmp_path, clients=3, cores=1)
    run([sys.executable, os.path.join(HERE, "py_writer.py"), xml, "4"], 4, out)
    check_sidecore_style(out, 3, 4, servers=1)
    check_damaris_style(out, 3, 4, servers=1)
    check_stored(out, 3, 4)


def test_failures_are_logged_and_counted(tmp_path):
    """A script that raises is logged with its traceback and counted; the server, the stores,
    the other scripts and the script's later iterations go on."""
    scripts = [pyscript("rec", "record.py"), pyscript("fails", "fails.py"),
               pyscript("dd", "dd_record.py", frequency=2)]
    xml, out = configure(tmp_path, clients=3, cores=1, field_scripts="rec,fails,dd",
                         scripts=scripts)
    output = run_c(xml, 4, out, 4)
    check_sidecore_style(out, 3, 4, servers=1)
    check_damaris_style(out, 3, 4, servers=1)
    check_stored(out, 3, 4)
    # It raised at iterations 1 and 3: the first traceback in full, the second in a line.
    assert "script 'fails' (" in output and "raised at iteration 1" in output, output
    assert "Traceback (most recent call last)" in output
    assert 'fails.py", line' in output and "ZeroDivisionError: division by zero" in output
    assert "script 'fails' raised at iteration 3: ValueError: odd iteration 3" in output
    assert "raised in 2 of 4 call(s)" in output
    assert sorted(os.listdir(out + "/fails")) == ["it0", "it1", "it2", "it3"]
    # Not a store failure: nothing is reported to the clients.
    assert "store call(s) failed" not in output


def test_time_limit_stops_a_spinning_script(tmp_path):
    """A call that outlives time-limit= is stopped by a TimeoutError raised inside it: logged as
    a failure of that iteration, and the run, the stores and the script's later calls go on."""
    xml, out = configure(tmp_path, clients=3, cores=1, field_scripts="rec,over",
                         scripts=[pyscript("rec", "record.py"),
                                  pyscript("over", "overruns.py", time_limit=1)])
    started = time.monotonic()
    output = run_c(xml, 4, out, 4, OVERRUN="spin")
    assert time.monotonic() - started < 120
    check_sidecore_style(out, 3, 4, servers=1)
    check_stored(out, 3, 4)
    assert "outlived the script's time-limit of 1 s" in output, output
    assert "TimeoutError" in output
    assert sorted(os.listdir(out + "/overruns")) == ["it0", "it1", "it2", "it3"]


def test_time_limit_ends_a_blocked_script(tmp_path):
    """A call blocked outside Python (a sleep) past time-limit= and its grace ends the job with a
    message naming the script and the writer, instead of never letting the run finish."""
    xml, out = configure(tmp_path, clients=3, cores=1, field_scripts="over",
                         scripts=[pyscript("over", "overruns.py", time_limit=1)])
    started = time.monotonic()
    output = run_c(xml, 4, out, 4, expect_status=70, OVERRUN="block")
    assert time.monotonic() - started < 120
    assert '<pyscript name="over"> on writer 0, iteration 1' in output, output
    assert "beyond its time-limit of 1 s" in output and "the job is ended" in output


def test_c_only_configuration_loads_no_python(tmp_path):
    """Without scripts, no process loads libpython, with a dedicated core or without."""
    for cores in (1, 0):
        xml, out = configure(tmp_path / f"c{cores}", clients=3 if cores else 4, cores=cores,
                             field_scripts="#", other_scripts="#", scripts=[])
        output = run_c(xml, 4, out, 2)
        assert not any(python_loaded(output, r) for r in range(4)), output
        check_stored(out, 3 if cores else 4, 2)


def test_bad_scripts_fail_initialize(tmp_path):
    """A missing script file or a syntax error fails damaris_initialize on every rank, naming
    the XML line and the script's file and line."""
    xml, out = configure(tmp_path / "missing", clients=3, cores=1, field_scripts="gone",
                         other_scripts="#", scripts=[pyscript("gone", "no_such_script.py")])
    output = run_c(xml, 4, out, 2, expect_status=2)
    assert "scripts.xml:" in output and '<pyscript name="gone">' in output, output
    assert "cannot read the script file" in output and "no_such_script.py" in output
    bad = tmp_path / "bad.py"
    bad.write_text("def on_iteration(it):\n    return (\n")
    xml, out = configure(tmp_path / "syntax", clients=3, cores=1, field_scripts="bad",
                         other_scripts="#",
                         scripts=[f'<pyscript name="bad" file="{bad}" language="python"/>'])
    output = run_c(xml, 4, out, 2, expect_status=2)
    assert "SyntaxError" in output and f'File "{bad}", line 2' in output, output


def test_views_kept_after_the_call_are_reported(tmp_path):
    """A script that keeps NumPy views past its call is warned once (the memory is reused);
    a Block kept past its call makes no view any more."""
    xml, out = configure(tmp_path, clients=3, cores=1, field_scripts="keeps",
                         other_scripts="keeps", scripts=[pyscript("keeps", "keeps_views.py")])
    output = run_c(xml, 4, out, 3)
    assert output.count("kept NumPy views of 3 block(s) of iteration 0") == 1, output
    assert output.count("kept NumPy views") == 1, output
    for it in (1, 2):
        with open(f"{out}/late_{it}.txt") as f:
            assert f.read().startswith(f"the data of a block of iteration {it - 1} was lent for "
                                       "that iteration's call only")
    check_stored(out, 3, 3)


def test_blocks_are_made_when_asked_for(tmp_path):
    """A Sidecore-style script's blocks are made when it first asks for them, during its call:
    one that reads them on odd iterations only gets every value then, and an Iteration kept
    unread past its call refuses to make them."""
    xml, out = configure(tmp_path, clients=3, cores=1, field_scripts="lazy", other_scripts="#",
                         scripts=[pyscript("lazy", "lazy_blocks.py")])
    run_c(xml, 4, out, 4)
    for it in (1, 3):
        with open(f"{out}/lazy_sum_{it}.txt") as f:
            assert float(f.read()) == global_field_sum(it, 3), it
        with open(f"{out}/lazy_{it}.txt") as f:
            assert f.read().startswith(f"the blocks of iteration {it - 1} were lent for that "
                                       "iteration's call only")
    assert not os.path.exists(f"{out}/lazy_sum_0.txt")
    check_stored(out, 3, 4)


def test_damaris_dask_helpers(tmp_path):
    """damaris4py.dask.damaris_dask's readers of DamarisData, and the block grid that
    return_dask_array assembles, checked inside a script against the formulas."""
    xml, out = configure(tmp_path, clients=3, cores=1, field_scripts="helpers",
                         other_scripts="#", scripts=[pyscript("helpers", "dd_helpers.py")])
    run_c(xml, 4, out, 2)
    for it in range(2):
        with open(f"{out}/helpers_it{it}.json") as f:
            got = json.load(f)
        assert got["iteration"] == it
        assert got["scalar"] == field(it, 1)[2, 3, 4]
        assert got["missing"] is None and got["out_of_range"] is None
        expect_array("assembled", load(f"{out}/helpers_grid_it{it}.npy"),
                     np.concatenate([field(it, c) for c in range(3)], axis=2))


EXAMPLES = os.path.join(HERE, "..", "..", "examples", "python")


class DaskCluster:
    """A scheduler and one worker, started as a job script would start them."""

    def __init__(self, tmp_path):
        import subprocess
        import time
        self.file = str(tmp_path / "scheduler.json")
        self.processes = [subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--scheduler-file",
             self.file, "--host", "127.0.0.1", "--port", "0", "--no-dashboard"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        deadline = time.time() + 60
        while not os.path.exists(self.file):
            assert time.time() < deadline, "the Dask scheduler did not start"
            time.sleep(0.1)
        self.processes.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", self.file,
             "--nthreads", "1", "--no-dashboard"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with self.client() as client:
            client.wait_for_workers(1, timeout=60)

    def client(self):
        from distributed import Client
        return Client(scheduler_file=self.file, timeout="30s")

    def stop(self):
        for p in self.processes:
            p.kill()
            p.wait()


def test_dask(tmp_path):
    """Two dedicated cores publish every iteration to a Dask cluster: the example script's
    global statistics equal NumPy's over the whole field, the published datasets hold the whole
    field (the last dask-keep iterations), a Damaris-style script assembles the same array
    with damaris4py's return_dask_array, and another folds it into damaris_stats.DaskStats,
    whose mean and variance over the iterations equal NumPy's. Variables without global
    extents whose blocks all lie at the origin (one per client) arrive as one entry per
    client, in client order, and do not stop the others."""
    cluster = DaskCluster(tmp_path)
    try:
        stats_out = tmp_path / "stats.jsonl"
        scripts = [pyscript("stats", os.path.join(EXAMPLES, "dask_global_stats.py"),
                            scheduler_file=cluster.file, dask_keep=2),
                   pyscript("dd", "dd_dask.py", scheduler_file=cluster.file),
                   pyscript("dd_stats", "dd_stats.py", scheduler_file=cluster.file)]
        xml, out = configure(tmp_path, clients=4, cores=1, field_scripts="stats,dd,dd_stats",
                             other_scripts="stats", scripts=scripts)
        run_c(xml, 6, out, 4, ranks_per_node=3, SIDECORE_STATS_OUT=stats_out)
        whole = {it: np.concatenate([field(it, c) for c in range(4)], axis=2) for it in range(4)}
        stacked = {"halo": {it: np.stack([halo_interior(it, c) for c in range(4)])
                            for it in range(4)},
                   "column": {it: np.stack([column(it, c) for c in range(4)])
                              for it in range(4)}}
        with open(stats_out) as f:
            stats = [json.loads(line) for line in f]
        for name in ("halo", "column"):
            mine = [s for s in stats if s["variable"] == name]
            assert [s["iteration"] for s in mine] == [0, 1, 2, 3], stats
            for s in mine:
                expected = stacked[name][s["iteration"]]
                assert s["shape"] == [4, NY, NX], s
                assert np.isclose(s["sum"], expected.sum(dtype=np.float64), rtol=1e-6), s
                assert s["min"] == expected.min() and s["max"] == expected.max(), s
        stats = [s for s in stats if s["variable"] == "field"]
        assert [s["iteration"] for s in stats] == [0, 1, 2, 3], stats
        for s in stats:
            expected = whole[s["iteration"]]
            assert s["shape"] == list(expected.shape)
            assert np.isclose(s["sum"], expected.sum(), rtol=1e-13, atol=0), s
            assert np.isclose(s["mean"], expected.mean(), rtol=1e-13, atol=0), s
            assert s["min"] == expected.min() and s["max"] == expected.max(), s
        for it in range(4):
            expect_array(f"return_dask_array it{it}", load(f"{out}/dd_dask_field_it{it}.npy"),
                         whole[it])
        with cluster.client() as client:
            names = set(client.list_datasets())
            assert {"scripted/field/2", "scripted/field/3"} <= names, names
            assert not {"scripted/field/0", "scripted/field/1"} & names, names
            for it in (2, 3):
                expect_array(f"published it{it}",
                             client.get_dataset(f"scripted/field/{it}").compute(), whole[it])
                expect_array(f"published halo it{it}",
                             client.get_dataset(f"scripted/halo/{it}").compute(),
                             stacked["halo"][it])
            sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "plugins", "python",
                                            "sidecore-pyscript"))
            from damaris4py.dask.damaris_stats import DaskStats
            stats = DaskStats("scripted_field_stats", "scripted_field_lock")
            series = np.stack([whole[it] for it in range(4)])
            assert stats.return_count(client) == 4
            mean, variance = stats.return_mean_var_tuple(client)
            assert np.allclose(mean.compute(), series.mean(axis=0), rtol=1e-12, atol=0)
            assert np.allclose(variance.compute(), series.var(axis=0, ddof=1), rtol=1e-9,
                               atol=1e-6)
    finally:
        cluster.stop()


def test_dask_blocks_placed_within_global_extents():
    """The published array is the global box: blocks at their positions, zeros elsewhere;
    overlapping blocks and blocks outside the box are refused."""
    import dask.array as da
    sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "plugins", "python",
                                    "sidecore-pyscript"))
    import sidecore_dask
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    b = np.arange(4, dtype=np.float64).reshape(2, 2) + 100
    pieces = [((0, 0), da.from_array(a)), ((1, 5), da.from_array(b))]
    got = sidecore_dask.place_blocks(pieces, (4, 7), np.float64).compute()
    expected = np.zeros((4, 7))
    expected[0:2, 0:3] = a
    expected[1:3, 5:7] = b
    expect_array("placed", got, expected)
    for bad in ([((0, 0), da.from_array(a)), ((1, 2), da.from_array(b))],
                [((3, 6), da.from_array(b))]):
        try:
            sidecore_dask.place_blocks(bad, (4, 7), np.float64)
        except ValueError:
            continue
        raise AssertionError(f"{bad} was accepted")


def test_insitu_images_example(tmp_path):
    """The in situ demo: the dedicated core draws the middle plane every 10 iterations; each
    plane it assembled from the clients' blocks equals that plane of the stored field, and each
    image is a PNG matplotlib reads back, in colour, not uniform."""
    import matplotlib.image
    program = os.environ.get("HEAT_INSITU")
    if not program:
        import pytest
        pytest.skip("the examples are not built")
    out = tmp_path / "heat"
    out.mkdir()
    with open(os.path.join(HERE, "..", "..", "examples", "heat_insitu.xml")) as f:
        text = f.read().replace("@OUTPUT@", f"{out}/").replace("@SCRIPTS@", EXAMPLES + "/")
    xml = tmp_path / "heat.xml"
    xml.write_text(text)
    before = job_segments()
    status, output = run_job(4, [program, str(xml), "30"],
                             mpi_env(SIDECORE_IMAGES=out / "images", SIDECORE_IMAGES_DATA=1), 240)
    assert status == 0, output
    expect_no_leaked_segments(before)
    for it in (0, 10, 20):
        stored = []
        for c in range(3):
            with h5py.File(f"{out}/heat_It{it}_Pr0.h5", "r") as h5:
                stored.append(h5[f"temperature/P{c}"][()])
        whole = np.concatenate(stored, axis=2)
        expect_array(f"plane of iteration {it}", load(f"{out}/images/temperature_{it:06d}.npy"),
                     whole[whole.shape[0] // 2])
        image = matplotlib.image.imread(f"{out}/images/temperature_{it:06d}.png")
        assert image.ndim == 3 and image.shape[2] in (3, 4), image.shape
        assert image.shape[1] > 300 and np.ptp(image[..., :3]) > 0.5
    assert sorted(os.listdir(out / "images")) == [
        f"temperature_{it:06d}.{ext}" for it in (0, 10, 20) for ext in ("npy", "png")]


def test_insitu_python_simulation(tmp_path):
    """The in situ demo's simulation written with mpi4py (examples/python/heat_insitu.py, what
    scripts/demo_insitu.sh runs) stores, at every iteration and for every client, exactly the
    temperature the C simulation (examples/heat_insitu.c) stores, and its dedicated core draws
    the same planes."""
    program = os.environ.get("HEAT_INSITU")
    if not program:
        import pytest
        pytest.skip("the examples are not built")
    with open(os.path.join(HERE, "..", "..", "examples", "heat_insitu.xml")) as f:
        template = f.read()
    iterations = 12
    outputs = {}
    for name, argv in (("python", [sys.executable, os.path.join(EXAMPLES, "heat_insitu.py")]),
                       ("c", [program])):
        out = tmp_path / name
        out.mkdir()
        xml = tmp_path / f"{name}.xml"
        xml.write_text(template.replace("@OUTPUT@", f"{out}/").replace("@SCRIPTS@", EXAMPLES + "/"))
        status, output = run_job(4, argv + [str(xml), str(iterations)],
                                 mpi_env(SIDECORE_IMAGES=out / "images", SIDECORE_IMAGES_DATA=1),
                                 240)
        assert status == 0, output
        outputs[name] = out
    for it in range(iterations):
        for c in range(3):
            name = f"heat_It{it}_Pr0.h5"
            with h5py.File(outputs["python"] / name, "r") as py, \
                    h5py.File(outputs["c"] / name, "r") as c_file:
                stored = py[f"temperature/P{c}"][()]
                assert stored.shape == (32, 32, 24), stored.shape
                expect_array(f"iteration {it}, client {c}", stored, c_file[f"temperature/P{c}"][()])
    assert np.ptp(stored) > 1.0, "the field is uniform"
    for it in (0, 10):
        expect_array(f"plane of iteration {it}",
                     load(f"{outputs['python']}/images/temperature_{it:06d}.npy"),
                     load(f"{outputs['c']}/images/temperature_{it:06d}.npy"))


def test_dask_without_a_scheduler_goes_on(tmp_path):
    """A scheduler file that does not exist, or names a scheduler nobody answers at, is a
    warning: the script runs without Dask (it.dask is empty) and nothing else changes."""
    dead = tmp_path / "dead.json"
    dead.write_text(json.dumps({"type": "Scheduler", "id": "none",
                                "address": "tcp://127.0.0.1:9", "services": {}, "workers": {}}))
    for name, scheduler_file in (("missing", tmp_path / "missing.json"), ("dead", dead)):
        xml, out = configure(tmp_path / name, clients=3, cores=1, field_scripts="rec",
                             other_scripts="rec",
                             scripts=[pyscript("rec", "record.py", scheduler_file=scheduler_file,
                                               timeout=1)])
        output = run_c(xml, 4, out, 2)
        expected = ("the file does not exist; no Dask worker is started, iterations are not "
                    "published" if name == "missing" else "no scheduler answered within 1 s")
        assert expected in output, output
        check_sidecore_style(out, 3, 2, servers=1)


def test_dask_skips_what_cannot_be_placed(tmp_path, capsys):
    """A variable whose blocks can be neither placed (no global extents, overlapping
    positions) nor stacked (their shapes differ) is left out of the iteration with one warning
    naming it and why, said once for that cause; the other variables are published intact.
    The writers' publisher (sidecore_dask.Publisher) runs here on one writer (COMM_SELF)
    against a real scheduler and worker."""
    from mpi4py import MPI
    sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "plugins", "python",
                                    "sidecore-pyscript"))
    import sidecore_dask

    class Block:
        def __init__(self, data, position, global_shape, source):
            self.data, self.position, self.global_shape = data, position, global_shape
            self.source, self.id = source, 0

    cluster = DaskCluster(tmp_path)
    publisher = sidecore_dask.Publisher(cluster.file, 30, "skip", 2, MPI.COMM_SELF, 0)
    try:
        publisher.start()
        assert publisher.connected
        for it in range(2):
            good = [Block(np.full((2, 3), it * 10.0 + c), (2 * c, 0), (4, 3), c)
                    for c in range(2)]
            ragged = [Block(np.arange(3 + c, dtype=np.int32) + it, (0,), None, c)
                      for c in range(2)]
            arrays = publisher.publish(it, {"good": good, "ragged": ragged})
            assert sorted(arrays) == ["good"], sorted(arrays)
            expect_array(f"good it{it}", publisher.client.compute(arrays["good"]).result(),
                         np.concatenate([np.full((2, 3), it * 10.0 + c) for c in range(2)]))
        said = capsys.readouterr().err
        assert said.count("variable 'ragged' is not handed to Dask") == 1, said
        assert "their shapes differ" in said and "[(3,), (4,)]" in said, said
        with cluster.client() as client:
            expect_array("published good", client.get_dataset("skip/good/1").compute(),
                         np.concatenate([np.full((2, 3), 10.0 + c) for c in range(2)]))
            assert not any("ragged" in name for name in client.list_datasets())
    finally:
        publisher.close()
        cluster.stop()
