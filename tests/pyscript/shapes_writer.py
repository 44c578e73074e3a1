"""The mpi4py simulation of test_shapes.py: every variable of test_shapes.VARIABLES, written
with the Python client at every iteration (write() checks each array against the layout).
Usage: shapes_writer.py <xml> <iterations>"""
import os
import sys

from mpi4py import MPI

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sidecore  # noqa: E402
import test_shapes as spec  # noqa: E402

xml, iterations = sys.argv[1], int(sys.argv[2])
rank = MPI.COMM_WORLD.Get_rank()
with sidecore.initialize(xml, MPI.COMM_WORLD) as sc:
    if sc.start():
        c = sc.client_comm.Get_rank()
        for it in range(iterations):
            for v in spec.VARIABLES:
                sc.write(v.name, v.full(it, c))
            sc.end_iteration()
print(f"rank {rank}: done", flush=True)
