# Damaris-style script: the whole file runs at every iteration with DamarisData, as Damaris's
# examples are written; it saves every NumPy array and sort_list it receives and the sum of
# field over every server (damaris4py's server communicator).
import json
import os

import numpy as np
from damaris4py.server import getservercomm, listknownclients
from damaris4py.dask import damaris_dask


def main(DD):
    out = os.environ["PYSCRIPT_OUT"]
    iteration = damaris_dask.return_iteration(DD)
    comm = getservercomm()
    rank = comm.Get_rank()
    local = 0.0
    listing = {}
    for name, var in DD["iteration_data"].items():
        if name == "iteration":
            continue
        for key, array in var["numpy_data"].items():
            np.save(f"{out}/dd_{name}_{key}_it{iteration}.npy", array)
            if name == "field":
                local += float(array.sum())
        listing[name] = {"sort_list": var["sort_list"], "type_string": var["type_string"],
                         "sort_data_is_sort_list": var["sort_data"] is var["sort_list"]}
    with open(f"{out}/dd_S{rank}_it{iteration}.json", "w") as f:
        json.dump({"variables": listing, "env": DD["damaris_env"], "dask_env": DD["dask_env"],
                   "known_clients": listknownclients(), "calls": CALLS}, f)
    total = comm.allreduce(local)
    if rank == 0:
        with open(f"{out}/dd_sum_it{iteration}.txt", "w") as f:
            f.write(repr(total))


# Top-level names persist from one iteration to the next, as in Damaris.
CALLS = globals().get("CALLS", 0) + 1
if __name__ == "__main__":
    main(DamarisData)  # noqa: F821 (given by the runner)
