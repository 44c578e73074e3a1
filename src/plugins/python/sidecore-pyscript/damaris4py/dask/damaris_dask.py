"""Reading DamarisData and assembling Dask arrays in scripts written for Damaris.

The functions keep the names, arguments and results of Damaris's damaris4py.dask.damaris_dask,
so that its example scripts run unchanged under Sidecore."""
import numpy as np

__all__ = ["return_scheduler_filename", "return_iteration", "return_magic_number",
           "return_scalar_from_position", "return_numpy_array", "return_dask_array",
           "return_block_grid"]


def return_scheduler_filename(DamarisData):
    """The Dask scheduler file of the <pyscript> (scheduler-file="..."), or "" when it names
    none or the file does not exist."""
    return DamarisData["dask_env"]["dask_scheduler_file"]


def return_iteration(DamarisData):
    """The iteration the script is called for (damaris_end_iteration calls before it)."""
    return DamarisData["iteration_data"]["iteration"]


def return_magic_number(DamarisData):
    """A string naming this run, the same on every process."""
    return DamarisData["damaris_env"]["simulation_magic_number"]


def _block(DamarisData, varname, client_rank, block_number):
    variable = DamarisData["iteration_data"].get(varname)
    if variable is None:
        return None
    return variable["numpy_data"].get(f"P{client_rank}_B{block_number}")


def return_numpy_array(DamarisData, varname, client_rank=0, block_number=0):
    """The block client_rank wrote of varname (block_number: the domain of
    damaris_write_block), or None when this process did not receive it."""
    return _block(DamarisData, varname, client_rank, block_number)


def return_scalar_from_position(DamarisData, varname, pos=(0), client_rank=0, block_number=0):
    """One element, array[pos], of the block return_numpy_array gives; None when there is no
    such block; an index outside it prints the error and gives None."""
    array = _block(DamarisData, varname, client_rank, block_number)
    if array is None:
        return None
    try:
        return array[pos]
    except IndexError as error:
        print("damaris4py: return_scalar_from_position:", error)
        return None


def return_block_grid(entries):
    """Arranges blocks known by their start offsets into the nested lists dask.array.block
    takes: entries are (start tuple, value); every combination of the distinct starts of each
    dimension must be present once (the blocks tile a box). Raises ValueError otherwise."""
    entries = sorted(entries, key=lambda e: tuple(e[0]))
    if not entries:
        raise ValueError("no block to arrange")
    ndims = len(entries[0][0])
    axes = [sorted({tuple(start)[d] for start, _ in entries}) for d in range(ndims)]
    index = [{v: i for i, v in enumerate(axis)} for axis in axes]
    expected = 1
    for axis in axes:
        expected *= len(axis)
    if expected != len(entries) or len({tuple(s) for s, _ in entries}) != len(entries):
        raise ValueError(f"{len(entries)} blocks do not tile a box ({' x '.join(str(len(a)) for a in axes)} "
                         "distinct starts per dimension): set every block's position with "
                         "damaris_set_position on a regular grid")

    def nest(dimension, prefix):
        if dimension == ndims:
            return cells[prefix]
        return [nest(dimension + 1, prefix + (i,)) for i in range(len(axes[dimension]))]

    cells = {tuple(index[d][start[d]] for d in range(ndims)): value for start, value in entries}
    return nest(0, ())


def return_dask_array(DamarisData, client, varname, server_comm, print_array_component=False):
    """Assembles varname's blocks from every process running the script into one dask array,
    returned on rank 0 of server_comm (None on the others). Collective over server_comm.

    Each process publishes a copy of its blocks to the Dask cluster of `client` (a
    dask.distributed Client) as the dataset S<rank>_I<iteration>_<magic>, a dict keyed
    P<client>_B<block>; rank 0 fetches them, removes the datasets and places every block by its
    position (damaris_set_position)."""
    import dask.array as da

    rank = server_comm.Get_rank()
    iteration = return_iteration(DamarisData)
    variable = DamarisData["iteration_data"][varname]
    gathered = server_comm.gather(variable["sort_list"], root=0)
    # Copies: the views are Sidecore's memory, reused once the script returns.
    name = f"S{rank}_I{iteration}_{return_magic_number(DamarisData)}"
    client.publish_dataset(**{name: {key: np.array(array) for key, array in
                                     variable["numpy_data"].items()}}, override=True)
    server_comm.Barrier()
    published = {}
    entries = []
    if rank == 0:
        try:
            for listing in gathered:
                for dataset, key, start in listing:
                    if dataset not in published:
                        published[dataset] = client.datasets[dataset]
                    entries.append((tuple(start), published[dataset][key]))
        finally:
            # The arrays are here now: the cluster need not keep the datasets of every
            # iteration, and another call in the same iteration may publish them again.
            for dataset in {d for listing in gathered for d, _, _ in listing}:
                if dataset in client.list_datasets():
                    client.unpublish_dataset(dataset)
    server_comm.Barrier()  # nobody publishes again before rank 0 has fetched
    if rank != 0:
        return None
    grid = return_block_grid(entries)
    if print_array_component:
        print("Damaris variable:", varname, "blocks:",
              [(start, getattr(array, "shape", None)) for start, array in sorted(
                  entries, key=lambda e: e[0])])
    return da.block(grid)
