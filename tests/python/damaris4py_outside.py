"""damaris4py outside the scripts, as pip installs it: a plain process of the environment and
a Dask worker started from it import the package (a Damaris post-processing script such as
stats_get_results.py reads DaskStats's results this way, and the worker runs its map_blocks
helpers). Run by test_pip_install.sh with the venv's Python, from outside the source tree;
the statistics read back are compared with NumPy's."""
import os
import subprocess
import sys
import tempfile
import time

import dask.array as da
import numpy as np
from distributed import Client

import damaris4py
from damaris4py.damaris4py import getservercomm  # as Damaris's post-processing scripts do
from damaris4py.dask.damaris_stats import DaskStats

if not damaris4py.__file__.startswith(sys.prefix + os.sep):
    sys.exit(f"FAIL: damaris4py imported from {damaris4py.__file__}, not from {sys.prefix}")
import sidecore  # noqa: E402
beside_runner = os.path.join(os.path.dirname(sidecore.__file__), "sidecore-pyscript", "damaris4py")
if os.path.exists(beside_runner):
    sys.exit(f"FAIL: a second damaris4py in {beside_runner}: the wheel ships one")
try:
    getservercomm()
    sys.exit("FAIL: getservercomm() answered outside a script")
except RuntimeError as error:
    if "<pyscript>" not in str(error):
        sys.exit(f"FAIL: getservercomm() outside a script: {error}")

work = tempfile.mkdtemp()
scheduler_file = os.path.join(work, "scheduler.json")
env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
processes = [subprocess.Popen(
    [sys.executable, "-m", "distributed.cli.dask_scheduler", "--scheduler-file", scheduler_file,
     "--host", "127.0.0.1", "--port", "0", "--no-dashboard"],
    cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
try:
    deadline = time.time() + 60
    while not os.path.exists(scheduler_file):
        if time.time() > deadline:
            sys.exit("FAIL: the Dask scheduler did not start within 60 s")
        time.sleep(0.1)
    processes.append(subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", scheduler_file,
         "--nthreads", "1", "--no-dashboard"],
        cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    with Client(scheduler_file=scheduler_file, timeout="30s") as client:
        client.wait_for_workers(1, timeout=60)
        series = (np.arange(3 * 4 * 6, dtype=np.float64).reshape(3, 4, 6) ** 1.5) % 17.0
        stats = DaskStats("outside_field", "outside_lock")
        for value in series:
            stats.update(da.from_array(value, chunks=(2, 3)), client, lock_timeout=60)
        if stats.return_count(client) != 3:
            sys.exit(f"FAIL: {stats.return_count(client)} updates counted, 3 made")
        mean, variance = stats.return_mean_var_tuple(client)
        chunks = stats.get_chunks(client)
        # As stats_get_results.py: the worker unpickles DaskStats's method, importing damaris4py.
        block_means = mean.map_blocks(stats.compute_block_average, chunks=chunks).compute()
        block_variances = variance.map_blocks(stats.compute_block_average, chunks=chunks).compute()

    def per_block(a):
        return a.reshape(2, 2, 2, 3).mean(axis=(1, 3))

    for name, got, expected in (("mean", block_means, per_block(series.mean(axis=0))),
                                ("variance", block_variances,
                                 per_block(series.var(axis=0, ddof=1)))):
        if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-12, atol=0):
            sys.exit(f"FAIL: block {name}s {got.tolist()}, expected {expected.tolist()}")
    print("damaris4py outside the scripts: OK")
finally:
    for p in processes:
        p.kill()
        p.wait()
