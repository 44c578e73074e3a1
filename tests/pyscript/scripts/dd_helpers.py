# damaris4py.dask.damaris_dask's readers of DamarisData, and return_block_grid (what
# return_dask_array hands to dask.array.block), saved for test_scripts.py to check.
import json
import os

import numpy as np
from damaris4py.dask import damaris_dask

out = os.environ["PYSCRIPT_OUT"]
DD = DamarisData  # noqa: F821 (given by the runner)
it = damaris_dask.return_iteration(DD)
result = {
    "iteration": it,
    "scalar": float(damaris_dask.return_scalar_from_position(DD, "field", (2, 3, 4), 1, 0)),
    "missing": damaris_dask.return_numpy_array(DD, "field", 7, 0),
    "out_of_range": damaris_dask.return_scalar_from_position(DD, "field", (9, 9, 9), 0, 0),
}
with open(f"{out}/helpers_it{it}.json", "w") as f:
    json.dump(result, f)
entries = [(tuple(start), DD["iteration_data"]["field"]["numpy_data"][key])
           for _, key, start in DD["iteration_data"]["field"]["sort_list"]]
grid = damaris_dask.return_block_grid(entries)
np.save(f"{out}/helpers_grid_it{it}.npy", np.block(grid))
