# Damaris-style use of Dask: the script connects to the scheduler named in the XML and
# assembles field with damaris4py's return_dask_array, as Damaris's examples do; rank 0 of the
# servers saves the assembled array.
import os

import numpy as np
from dask.distributed import Client
from damaris4py.server import getservercomm
from damaris4py.dask import damaris_dask


def main(DD):
    scheduler_file = damaris_dask.return_scheduler_filename(DD)
    if not scheduler_file:
        raise RuntimeError("no scheduler file")
    client = Client(scheduler_file=scheduler_file, timeout="10s")
    it = damaris_dask.return_iteration(DD)
    array = damaris_dask.return_dask_array(DD, client, "field", getservercomm())
    if array is not None:
        np.save(f"{os.environ['PYSCRIPT_OUT']}/dd_dask_field_it{it}.npy", array.compute())
    client.close()


if __name__ == "__main__":
    main(DamarisData)  # noqa: F821
