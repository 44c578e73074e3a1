"""Running statistics of a field over iterations, kept on a Dask cluster (Damaris's
damaris4py.dask.damaris_stats.DaskStats, with the same methods and dataset names).

Each update() folds a new dask array into a per-element count, mean and sum of squared
deviations (Welford's method), under a named distributed Lock so that several processes (or
simulations) may contribute. The results are computed on the cluster at each update (persist),
so that their task graphs do not grow with the number of updates, and published as the
datasets <name>_count, <name>_chunks_tup, <name>_mean and <name>_M2, readable by any client of
the cluster."""
import numpy as np

__all__ = ["DaskStats"]


class DaskStats:
    def __init__(self, unique_name_str, lock_name_str):
        """unique_name_str: the prefix of the published datasets; lock_name_str: the name of the
        distributed Lock that serialises updates and reads."""
        self.unique_name_str = unique_name_str
        self.lock_name_str = lock_name_str

    def _names(self):
        prefix = self.unique_name_str
        return (prefix + "_count", prefix + "_chunks_tup", prefix + "_mean", prefix + "_M2")

    def _locked(self, client, lock_timeout):
        from distributed import Lock

        with client.as_current():  # the lock talks to this client's scheduler
            lock = Lock(name=self.lock_name_str)
            acquired = lock.acquire(timeout=lock_timeout)
        if not acquired:
            raise TimeoutError(f"damaris_stats: the Dask lock '{self.lock_name_str}' was not "
                               f"acquired within {lock_timeout} s")
        return lock

    def _load(self, client):
        """(count, chunks, mean, M2) as published, or None before the first update."""
        count_name, chunks_name, mean_name, m2_name = self._names()
        if count_name not in client.list_datasets():
            return None
        return (client.datasets[count_name], client.datasets[chunks_name],
                client.datasets[mean_name], client.datasets[m2_name])

    def update(self, newValue, client, lock_timeout=60):
        """Folds the dask array newValue (same shape at every update) into the statistics."""
        import dask.array as da

        lock = self._locked(client, lock_timeout)
        try:
            state = self._load(client)
            if state is None:
                count, chunks = 0, self.set_chunks(newValue.shape)
                mean = da.zeros(newValue.shape, dtype=np.float64, chunks=newValue.chunks)
                m2 = da.zeros(newValue.shape, dtype=np.float64, chunks=newValue.chunks)
            else:
                count, chunks, mean, m2 = state
            if tuple(newValue.shape) != tuple(mean.shape):
                raise ValueError(f"damaris_stats: a value of shape {tuple(newValue.shape)} "
                                 f"cannot update statistics of shape {tuple(mean.shape)}")
            count += 1
            delta = newValue - mean
            mean = mean + delta / count
            m2 = m2 + delta * (newValue - mean)
            mean, m2 = client.persist([mean, m2])
            self.save_on_dask(client, count, chunks, mean, m2)
        finally:
            with client.as_current():
                lock.release()

    def save_on_dask(self, client, count, chunks_tup, mean, M2):
        """Publishes the four datasets, replacing earlier ones."""
        for name, value in zip(self._names(), (count, chunks_tup, mean, M2)):
            if name in client.list_datasets():
                client.unpublish_dataset(name)
            client.datasets[name] = value

    def _read(self, client, lock_timeout):
        """The published state under the lock, or None before the first update."""
        lock = self._locked(client, lock_timeout)
        try:
            return self._load(client)
        finally:
            with client.as_current():
                lock.release()

    def return_count(self, client, lock_timeout=60):
        """Updates so far (0 before the first)."""
        state = self._read(client, lock_timeout)
        return 0 if state is None else state[0]

    def _mean_and_m2(self, client, lock_timeout):
        state = self._read(client, lock_timeout)
        if state is None:
            raise KeyError(f"damaris_stats: no statistics named '{self.unique_name_str}' on "
                           "the cluster yet (update() publishes them)")
        return state[0], state[2], state[3]

    def return_mean(self, client, lock_timeout=60):
        """The mean of every element over the updates (NaN before the second, as Damaris's)."""
        import dask.array as da

        count, mean, _ = self._mean_and_m2(client, lock_timeout)
        return da.full_like(mean, np.nan) if count < 2 else mean.persist()

    def return_variance(self, client, lock_timeout=60):
        """The sample variance of every element, M2 / (count - 1) (NaN before the second
        update)."""
        import dask.array as da

        count, mean, m2 = self._mean_and_m2(client, lock_timeout)
        return da.full_like(mean, np.nan) if count < 2 else (m2 / (count - 1)).persist()

    def return_mean_var_tuple(self, client, lock_timeout=60):
        return (self.return_mean(client, lock_timeout=lock_timeout),
                self.return_variance(client, lock_timeout=lock_timeout))

    @staticmethod
    def compute_block_add_rand(block, mean=0.0, std=0.1):
        """For map_blocks: the block plus normal noise of the given mean and deviation."""
        return block + np.random.normal(mean, std, np.shape(block))

    def compute_block_average(self, block):
        """For map_blocks(..., chunks=(1,)*ndim): the block's average as a 1x...x1 array."""
        return np.full((1,) * np.ndim(block), np.average(block))

    def compute_block_average_of_sqrt(self, block):
        """For map_blocks(..., chunks=(1,)*ndim): the average of the block's square roots."""
        return np.full((1,) * np.ndim(block), np.average(np.sqrt(block)))

    @staticmethod
    def get_array_as_string(shape_len):
        """'[: , None, None]' for 3 dimensions: the indexing that turns a 1-element vector into
        a 1x1x1 array."""
        return "[: " + ", None" * (shape_len - 1) + "]"

    def set_chunks(self, shape):
        """(1, 1, ...) with one entry per dimension of shape: chunks= for map_blocks."""
        return (1,) * len(shape)

    def get_chunks(self, client):
        """The chunks tuple published by update()."""
        return client.datasets[self.unique_name_str + "_chunks_tup"]
