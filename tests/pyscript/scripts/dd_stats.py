# Damaris-style running statistics, as Damaris's stats examples compute them: every iteration,
# field is assembled with return_dask_array and folded into a DaskStats on the cluster.
from dask.distributed import Client
from damaris4py.dask import damaris_dask, damaris_stats
from damaris4py.server import getservercomm


def main(DD):
    client = Client(scheduler_file=damaris_dask.return_scheduler_filename(DD), timeout="10s")
    stats = damaris_stats.DaskStats("scripted_field_stats", "scripted_field_lock")
    array = damaris_dask.return_dask_array(DD, client, "field", getservercomm())
    if array is not None:
        stats.update(array, client, lock_timeout=60)
    client.close()


if __name__ == "__main__":
    main(DamarisData)  # noqa: F821
