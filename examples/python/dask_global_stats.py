"""Global statistics of every variable of the script, computed by a Dask cluster from the whole
distributed field (examples/python/README.md):

    <variable name="temperature" layout="box" store="h5" script="stats"/>
    <pyscript name="stats" file="dask_global_stats.py" language="python"
              scheduler-file="scheduler.json"/>

With scheduler-file="...", Sidecore publishes every iteration passed to the cluster as one dask
array per variable, assembled from the blocks of every dedicated core (placed by their
positions within the global extents): it.dask["temperature"]. The first writer asks the
cluster for the statistics and prints them; SIDECORE_STATS_OUT=<file> also appends them there,
one JSON object per line."""
import json
import os

import dask


def on_iteration(it):
    if it.server != 0:
        return
    for name, array in it.dask.items():
        total, mean, low, high = dask.compute(array.sum(), array.mean(), array.min(),
                                              array.max())
        print(f"iteration {it.number}: {name} {array.shape}: sum {total:.6g} mean {mean:.6g} "
              f"min {low:.6g} max {high:.6g}", flush=True)
        out = os.environ.get("SIDECORE_STATS_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"iteration": it.number, "variable": name,
                                    "shape": list(array.shape), "sum": float(total),
                                    "mean": float(mean), "min": float(low),
                                    "max": float(high)}) + "\n")
