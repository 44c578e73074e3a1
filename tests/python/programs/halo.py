"""A simulation whose clients exchange halos with their ring neighbours (Sendrecv) every
iteration and write the field, where one client (or every one) fails at a given iteration.
Every client syncs after iteration `synced`, so that the iterations up to it are stored before
the failure whatever the machine's load.
Usage: halo.py <xml> <iterations> <fail at> <how> [on_exception]
  how: raise        client 1 raises RuntimeError
       interrupt    client 1 receives SIGINT (a real one: KeyboardInterrupt)
       everywhere   every client raises RuntimeError
       exit0        every client calls sys.exit(0) (a normal end)
       none         no client fails, nor syncs (the writers' scripts may fail)
       server       the dedicated cores raise once they served (every client stopped)
       badwrite     client 1 writes a variable the XML does not define (sidecore.Error)
  on_exception: given to initialize() when present"""
import os
import signal
import sys

import numpy as np
from mpi4py import MPI

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import sidecore  # noqa: E402
import values  # noqa: E402

xml, iterations, fail_at, how = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
options = {"on_exception": sys.argv[5]} if len(sys.argv) > 5 else {}
synced = 5
world = MPI.COMM_WORLD.Get_rank()

with sidecore.initialize(xml, MPI.COMM_WORLD, **options) as sc:
    if sc.start():
        comm = sc.client_comm
        source, clients = comm.Get_rank(), comm.Get_size()
        print(f"rank {world}: client {source}", flush=True)
        right, left = (source + 1) % clients, (source - 1) % clients
        halo = np.empty(values.NX, dtype=np.float64)
        for it in range(iterations):
            if it == fail_at:
                if how == "raise" and source == 1:
                    raise RuntimeError(f"client {source} diverged at iteration {it}")
                if how == "interrupt" and source == 1:
                    os.kill(os.getpid(), signal.SIGINT)  # delivered at the next bytecode
                if how == "everywhere":
                    raise RuntimeError(f"every client diverged, {source} at iteration {it}")
                if how == "exit0":
                    sys.exit(0)
                if how == "badwrite" and source == 1:
                    sc.write("feild", values.field(source, it, 0))
            field = values.field(source, it, 0)
            # The halo exchange: this client's last row to the right, the left one's into halo.
            comm.Sendrecv(np.ascontiguousarray(field[-1]), dest=right, recvbuf=halo, source=left)
            expected = values.field(left, it, 0)[-1]
            assert np.array_equal(halo, expected), (it, halo, expected)
            sc.write("field", field)
            sc.write("field", values.field(source, it, 1), block=1)
            sc.end_iteration()
            if it == synced and how != "none":
                sc.sync()
    elif how == "server":
        raise RuntimeError(f"rank {world}: the analysis after serving failed")
print(f"rank {world}: done", flush=True)
