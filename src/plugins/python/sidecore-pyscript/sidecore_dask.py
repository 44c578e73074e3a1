"""Publishing iterations to a Dask cluster (a <pyscript> with scheduler-file="...").

Every writer connects a distributed.Client to the scheduler. At each iteration passed, for each
variable of the script, every writer sends a copy of its blocks' interiors to the cluster
(scatter); the writers exchange what they sent (MPI allgather); each builds the same dask
array, placed by the blocks' positions within the layout's global extents (zeros where no block
lies), and writer 0 publishes it as the dataset "<simulation>/<variable>/<iteration>". The
cluster keeps the last `keep` published iterations of each variable.

Imported only when a script names a scheduler file: a run without Dask never imports dask."""
import sys

import numpy as np


def dataset_name(simulation, variable, iteration):
    """The name an iteration of a variable is published under."""
    return f"{simulation}/{variable}/{iteration}"


def place_blocks(pieces, shape, dtype):
    """A dask array of `shape` made of `pieces` [(start, dask array)]: each piece at its start,
    zeros where none lies. Pieces must not overlap (ValueError)."""
    import dask.array as da

    ndims = len(shape)
    # Cut every dimension at the edges of every piece: each cell of the grid is then inside one
    # piece or inside none.
    cuts = []
    for d in range(ndims):
        edges = {0, shape[d]}
        for start, array in pieces:
            edges.update((start[d], start[d] + array.shape[d]))
        cuts.append(sorted(e for e in edges if 0 <= e <= shape[d]))
    for start, array in pieces:
        for d in range(ndims):
            if start[d] < 0 or start[d] + array.shape[d] > shape[d]:
                raise ValueError(f"a block at {tuple(start)} of shape {array.shape} lies outside "
                                 f"the global extents {tuple(shape)}")

    def cell(index):
        low = tuple(cuts[d][index[d]] for d in range(ndims))
        high = tuple(cuts[d][index[d] + 1] for d in range(ndims))
        found = None
        for start, array in pieces:
            if all(start[d] <= low[d] and high[d] <= start[d] + array.shape[d]
                   for d in range(ndims)):
                if found is not None:
                    raise ValueError(f"two blocks overlap at {low}")
                found = array[tuple(slice(low[d] - start[d], high[d] - start[d])
                                    for d in range(ndims))]
        if found is None:
            found = da.zeros(tuple(h - l for l, h in zip(low, high)), dtype=dtype)
        return found

    def nest(d, index):
        if d == ndims:
            return cell(index)
        return [nest(d + 1, index + (i,)) for i in range(len(cuts[d]) - 1)]

    return da.block(nest(0, ()))


class Publisher:
    """One script's connection to the cluster, on one writer. Collective over comm: created
    and called at the same iterations on every writer."""

    def __init__(self, scheduler_file, timeout, simulation, keep, comm, server):
        self.scheduler_file = scheduler_file
        self.timeout = timeout
        self.simulation = simulation
        self.keep = keep
        self.comm = comm
        self.server = server
        self.client = None
        self.started = False
        self.published = {}  # variable: [iteration, ...] published by this writer
        self.said = set()  # (variable, reason) of the skips reported

    def start(self):
        """Connects, at the first iteration rather than when the script is created: the
        writers agree on it (a collective), and every writer is known to have started then."""
        self.started = True
        scheduler_file = self.scheduler_file
        failure = ""
        try:
            from distributed import Client
            self.client = Client(scheduler_file=scheduler_file, timeout=f"{self.timeout}s",
                                 set_as_default=False)
        except Exception as e:  # noqa: BLE001 (no Dask is a warning, not an error)
            failure = f"{type(e).__name__}: {e}"
        # Every writer publishes or none does: the exchange is collective.
        failures = self.comm.allgather(failure)
        if any(failures):
            if self.client is not None:
                self.client.close()
                self.client = None
            if self.server == 0:
                first = next(f for f in failures if f)
                print(f"sidecore: warning: the Dask scheduler of {scheduler_file} could not be "
                      f"reached from every writer ({first}): iterations are not published",
                      file=sys.stderr, flush=True)

    @property
    def connected(self):
        return self.client is not None

    def publish(self, iteration, blocks):
        """{variable: [Block]} of this writer -> {variable: dask array}, the same on every
        writer; writer 0 publishes each. A variable that cannot be made one array is left out
        (skip)."""
        arrays = {}
        for variable in sorted(blocks):
            mine = blocks[variable]
            futures = self.client.scatter([np.ascontiguousarray(b.data) for b in mine],
                                          hash=False) if mine else []
            described = [(f.key, tuple(b.position), b.data.shape, b.data.dtype.str,
                          b.global_shape, b.source, b.id) for f, b in zip(futures, mine)]
            everyone = [entry for listing in self.comm.allgather(described) for entry in listing]
            if not everyone:
                continue
            # Every writer has the same list: all place the variable alike, or all skip it.
            try:
                array = self.assemble(everyone)
            except ValueError as e:
                self.skip(variable, str(e))
                self.comm.Barrier()
                del futures
                continue
            arrays[variable] = array
            if self.server == 0:
                self.client.publish_dataset(
                    **{dataset_name(self.simulation, variable, iteration): array}, override=True)
                done = self.published.setdefault(variable, [])
                done.append(iteration)
                while len(done) > self.keep:
                    self.client.unpublish_dataset(
                        dataset_name(self.simulation, variable, done.pop(0)))
            # The published dataset holds the data now; this writer's futures may go.
            self.comm.Barrier()
            del futures
        return arrays

    def assemble(self, everyone):
        """One variable's dask array from every writer's blocks [(key, position, shape, dtype,
        global shape, source, block id)]: placed in the layout's global extents, else in the
        blocks' bounding box from the origin when their positions keep them apart, else (a
        per-rank scalar, blocks without positions) one entry per block along a new first
        axis, in the order of client and block id. ValueError says why none fits."""
        import dask
        import dask.array as da
        from distributed import Future

        dtype = np.dtype(everyone[0][3])
        pieces = [(position, da.from_delayed(dask.delayed(Future(key, client=self.client)),
                                             shape=shape, dtype=dtype))
                  for key, position, shape, *_ in everyone]
        global_shape = next((tuple(g) for *_, g, _, _ in everyone if g is not None), None)
        if global_shape is not None:
            return place_blocks(pieces, global_shape, dtype)
        ndims = len(everyone[0][2])
        box = tuple(max(p[d] + s[d] for _, p, s, *_ in everyone) for d in range(ndims))
        try:
            return place_blocks(pieces, box, dtype)
        except ValueError as overlap:
            shapes = {tuple(s) for _, _, s, *_ in everyone}
            if len(shapes) != 1:
                raise ValueError(f"it has no global extents, its blocks overlap ({overlap}) "
                                 f"and their shapes differ ({sorted(shapes)}), so they can "
                                 "neither be placed nor stacked") from None
            order = sorted(range(len(everyone)), key=lambda i: everyone[i][5:7])
            return da.stack([pieces[i][1] for i in order])

    def skip(self, variable, why):
        """Says once per variable and reason (writer 0) that it is not handed to Dask."""
        if self.server == 0 and (variable, why) not in self.said:
            self.said.add((variable, why))
            print(f"sidecore: warning: variable '{variable}' is not handed to Dask at this "
                  f"iteration (nor later for the same reason; the other variables are): {why}",
                  file=sys.stderr, flush=True)

    def close(self):
        if self.client is not None:
            self.client.close()
            self.client = None
