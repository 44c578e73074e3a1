"""An mpi4py simulation writing every variable of sim.xml.in through the Python API: field and
ids with write (ids from a transposed, non-contiguous view), cube and counts with alloc/commit/
release, two blocks each, for several iterations. Usage: writer.py <xml> <iterations>"""
import os
import sys
import time

import numpy as np
from mpi4py import MPI

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import sidecore  # noqa: E402
import values  # noqa: E402

xml, iterations = sys.argv[1], int(sys.argv[2])

with sidecore.initialize(xml, MPI.COMM_WORLD) as sc:
    if sc.start():
        source = sc.client_comm.Get_rank()
        for it in range(iterations):
            assert sc.iteration == it
            for block in range(values.DOMAINS):
                sc.write("field", values.field(source, it, block), block=block)
                # A transposed copy's transpose: same values, not C-contiguous.
                view = np.ascontiguousarray(values.ids(source, it, block).T).T
                assert not view.flags.c_contiguous
                sc.write("ids", view, block=block)

                a = sc.alloc("cube", block=block)
                assert a.flags.writeable and a.dtype == np.float64
                assert a.shape == (values.NZ, values.NY, values.NX)
                a[...] = values.cube(source, it, block)
                sc.commit("cube", block=block)
                assert not a.flags.writeable  # committed: stored as it is now
                sc.release("cube", block=block)

                c = sc.alloc("counts", block=block)
                assert c.dtype == np.int32 and c.shape == (values.NY, values.NX)
                c[...] = values.counts(source, it, block)
                sc.commit("counts", block=block)
                sc.clear("counts", block=block)
            sc.signal("tick")
            sc.end_iteration()
            if os.environ.get("PY_PHASES"):
                # 150 ms outside a compute phase (as if communicating), then 100 ms inside one.
                time.sleep(0.15)
                with sc.computing():
                    time.sleep(0.1)
        sc.sync()
        # Live counters: this client's exact, its writer's once every iteration is stored.
        stats = sc.stats()
        per_iteration = sum(f(source, 0, block).nbytes for block in range(values.DOMAINS)
                            for f in (values.field, values.ids, values.cube, values.counts))
        assert stats["client_iterations"] == iterations, stats
        assert stats["client_blocks_written"] == iterations * values.DOMAINS * 4, stats
        assert stats["client_bytes_written"] == iterations * per_iteration, stats
        assert stats["client_bytes_dropped"] == 0 and stats["client_write_seconds"] is None
        if os.environ.get("PY_EXPECT_WRITER") == "0":
            assert stats["bytes_received"] is None, stats  # dedicated nodes
        else:
            assert stats["bytes_received"] >= stats["client_bytes_written"], stats
            assert stats["iterations_stored"] >= iterations, stats
            assert stats["bytes_written"] >= stats["client_bytes_written"], stats
        sc.stop()
    else:
        assert not sc.is_client and sc.has_servers
assert not sidecore._ext.initialized()
if sc.is_client:
    # An array alloc() lent, kept past finalize(): Sidecore's memory is gone. The array
    # refuses to be used; a plain view of it, which NumPy lets through, reads zeros rather
    # than crashing the program, and everything stays read-only.
    assert not a.flags.writeable
    try:
        a.sum()
        raise AssertionError("an array of finalized memory was used")
    except sidecore.ReleasedArrayError as e:
        assert "release()" in str(e), e  # the last one it was lent for gave it back
    plain = np.asarray(a)
    assert type(plain) is np.ndarray and not plain.flags.writeable
    assert np.isfinite(float(plain.sum()))
    try:
        a.flags.writeable = True
        raise AssertionError("an array of finalized memory was made writable again")
    except ValueError:
        pass
print(f"rank {MPI.COMM_WORLD.Get_rank()}: done", flush=True)
