# Damaris-style Dask script run with only a scheduler started beforehand, as Damaris's
# 3dmesh_dask README says: the workers are Sidecore's. Every iteration, server 0 saves who the
# workers are (name, threads, process id), whether the scheduler imports damaris4py, the
# assembled field's sum computed on the cluster, and folds the field into a DaskStats, whose
# mean and variance it saves at the last iteration (the workers leave with the run).
import importlib.util
import json
import os

import numpy as np
from dask.distributed import Client
from damaris4py.dask import damaris_dask, damaris_stats
from damaris4py.server import getservercomm


def scheduler_imports_damaris4py():
    return importlib.util.find_spec("damaris4py") is not None


def main(DD):
    out = os.environ["PYSCRIPT_OUT"]
    last = int(os.environ["DD_LAST_ITERATION"])
    comm = getservercomm()
    scheduler_file = damaris_dask.return_scheduler_filename(DD)
    it = damaris_dask.return_iteration(DD)
    client = Client(scheduler_file=scheduler_file, timeout="60s")
    array = damaris_dask.return_dask_array(DD, client, "field", comm)
    if array is not None:
        workers = client.scheduler_info(n_workers=-1)["workers"]
        pids = client.run(os.getpid)
        record = {
            "dask_env": DD["dask_env"],
            "magic": DD["damaris_env"]["simulation_magic_number"],
            "workers": {w["name"]: {"nthreads": w["nthreads"], "pid": pids.get(address)}
                        for address, w in workers.items()},
            "scheduler_imports_damaris4py": client.run_on_scheduler(
                scheduler_imports_damaris4py),
            "sum": float(array.sum().compute()),
        }
        stats = damaris_stats.DaskStats("dw_field_stats", "dw_field_lock")
        stats.update(array, client, lock_timeout=120)
        if it == last:
            mean, variance = stats.return_mean_var_tuple(client)
            np.save(f"{out}/dw_mean.npy", mean.compute())
            np.save(f"{out}/dw_variance.npy", variance.compute())
        with open(f"{out}/dw_it{it}.json", "w") as f:
            json.dump(record, f)
    # Every server records its own view of dask_env (the worker name differs).
    with open(f"{out}/dw_env_S{comm.Get_rank()}_it{it}.json", "w") as f:
        json.dump(DD["dask_env"], f)
    comm.Barrier()
    client.close()


if __name__ == "__main__":
    main(DamarisData)  # noqa: F821 (given by the runner)
