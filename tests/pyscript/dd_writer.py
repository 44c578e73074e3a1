"""An mpi4py simulation for DamarisData's rules: every iteration each client writes "field"
(double[2][3], at position (0, 3*c)); "coords" (time-varying="false", int[3]) is written at
iteration 0 only; "probe" (short[2]) is written by client 0 only.
value formulas: field[y][x] = it*100 + y*10 + 3*c + x; coords[i] = 7*c + i;
probe[i] = it + i. Usage: dd_writer.py <xml> <iterations>"""
import sys

import numpy as np
from mpi4py import MPI

import sidecore

xml, iterations = sys.argv[1], int(sys.argv[2])
rank = MPI.COMM_WORLD.Get_rank()
with sidecore.initialize(xml, MPI.COMM_WORLD) as sc:
    if sc.start():
        c = sc.client_comm.Get_rank()
        sc.set_position("field", (0, 3 * c))
        y, x = np.meshgrid(np.arange(2), np.arange(3), indexing="ij")
        for it in range(iterations):
            sc.write("field", (it * 100 + y * 10 + 3 * c + x).astype(np.float64))
            if it == 0:
                sc.write("coords", (7 * c + np.arange(3)).astype(np.int32))
            if c == 0:
                sc.write("probe", (it + np.arange(2)).astype(np.int16))
            sc.end_iteration()
print(f"rank {rank}: done", flush=True)
