"""The mpi4py simulation of test_vtk.py: every variable of test_vtk.VARIABLES, written at every
iteration, the time-invariant coordinates at the first only, each block placed with
set_position. Usage: vtk_writer.py <xml> <iterations>"""
import os
import sys

from mpi4py import MPI

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sidecore  # noqa: E402
import test_vtk as spec  # noqa: E402

xml, iterations = sys.argv[1], int(sys.argv[2])
rank = MPI.COMM_WORLD.Get_rank()
with sidecore.initialize(xml, MPI.COMM_WORLD) as sc:
    if sc.start():
        c = sc.client_comm.Get_rank()
        for it in range(iterations):
            for name, (array, position) in spec.written(it, c).items():
                if position is not None:
                    sc.set_position(name, position)
                sc.write(name, array)
            sc.end_iteration()
print(f"rank {rank}: done", flush=True)
