# Damaris-style script that saves the shape of DamarisData as it receives it: every key at every
# level (the NumPy arrays saved apart), on each server and iteration.
import json
import os

import numpy as np
from damaris4py.server import getservercomm


def describe(value):
    if isinstance(value, dict):
        return {str(k): describe(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return {"ndarray": list(value.shape), "dtype": value.dtype.str}
    return value


def main(DD):
    out = os.environ["PYSCRIPT_OUT"]
    server = getservercomm().Get_rank()
    it = DD["iteration_data"]["iteration"]
    for name, var in DD["iteration_data"].items():
        if name != "iteration":
            for key, array in var["numpy_data"].items():
                np.save(f"{out}/keys_{name}_{key}_S{server}_it{it}.npy", array)
    with open(f"{out}/keys_S{server}_it{it}.json", "w") as f:
        json.dump(describe(DD), f)


if __name__ == "__main__":
    main(DamarisData)  # noqa: F821 (given by the runner)
