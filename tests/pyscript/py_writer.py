"""script_writer.c as an mpi4py simulation (the same variables and values; halo through
alloc/commit): its dedicated core is a Python process, whose interpreter the scripts join.
Usage: py_writer.py <xml> <iterations>"""
import os
import sys

from mpi4py import MPI

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sidecore  # noqa: E402
import test_scripts as formulas  # noqa: E402

xml, iterations = sys.argv[1], int(sys.argv[2])
rank = MPI.COMM_WORLD.Get_rank()
with sidecore.initialize(xml, MPI.COMM_WORLD) as sc:
    if sc.start():
        c = sc.client_comm.Get_rank()
        sc.set_position("field", (0, 0, c * formulas.NX))
        for it in range(iterations):
            sc.write("field", formulas.field(it, c))
            halo = sc.alloc("halo")
            halo[...] = formulas.halo_full(it, c)
            sc.commit("halo")
            sc.release("halo")
            sc.write("column", formulas.column(it, c))
            sc.end_iteration()
print(f"rank {rank}: done", flush=True)
