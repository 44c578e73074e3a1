"""With on_exception="finalize", the context manager stops and finalizes on an exception:
every client raises during iteration 1 after storing iteration 0; the dedicated core returns
from start, everyone is finalized, and a second run (second XML) works in the same processes.
Usage: exception.py <xml> <second xml>"""
import os
import sys

from mpi4py import MPI

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import sidecore  # noqa: E402
import values  # noqa: E402


class Boom(Exception):
    pass


first, second = sys.argv[1], sys.argv[2]
caught = False
try:
    with sidecore.initialize(first, on_exception="finalize") as sc:
        if sc.start():
            source = sc.client_comm.Get_rank()
            sc.write("field", values.field(source, 0, 0))
            sc.end_iteration()
            sc.write("field", values.field(source, 1, 0))
            raise Boom("the simulation failed")
except Boom:
    caught = True
assert caught == sc.is_client, (caught, sc.is_client)
assert not sidecore._ext.initialized()

with sidecore.initialize(second) as sc:
    if sc.start():
        source = sc.client_comm.Get_rank()
        sc.write("field", values.field(source, 7, 1), block=1)
        sc.end_iteration()
print(f"rank {MPI.COMM_WORLD.Get_rank()}: done", flush=True)
