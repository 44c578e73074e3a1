"""Irregular blocks from Python: every client tiles its stripe of the NY x NX field of
tests/blocks/blocks.xml.in with blocks of random shapes and sparse ids that change every
iteration (set_block_extents, set_position, write), and writes tracer lists of random lengths
with alloc/commit. Lists the blocks it wrote in written_<client>.txt beside the XML, for the test
to compare with what it reads back. Usage: blocks.py <xml> <iterations>"""
import os
import sys

import numpy as np
from mpi4py import MPI

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import sidecore  # noqa: E402

NY, NX = 60, 50
xml, iterations = sys.argv[1], int(sys.argv[2])


def field_value(it, y, x):
    return it * 100000.0 + y * 1000.0 + x + 0.25


with sidecore.initialize(xml, MPI.COMM_WORLD) as sc:
    if sc.start():
        comm = sc.client_comm
        source, clients = comm.Get_rank(), comm.Get_size()
        row0, row1 = NY * source // clients, NY * (source + 1) // clients
        listing = open(os.path.join(os.path.dirname(xml), f"written_{source}.txt"), "w")
        for it in range(iterations):
            rng = np.random.default_rng(1000 * it + source)
            y, block = row0, 0
            while y < row1:
                h = min(int(rng.integers(1, 8)), row1 - y)
                x = 0
                while x < NX:
                    w = min(int(rng.integers(1, 14)), NX - x)
                    ident = 3 * block + it
                    yy, xx = np.mgrid[y:y + h, x:x + w]
                    sc.set_block_extents("field", (h, w), block=ident)
                    sc.set_position("field", (y, x), block=ident)
                    sc.write("field", field_value(it, yy, xx), block=ident)
                    listing.write(f"{it} {source} {ident} {h} {w} {y} {x}\n")
                    block += 1
                    x += w
                y += h
            n = int(rng.integers(1, 300))
            sc.set_block_extents("tracers", (n,), block=50 + it)
            a = sc.alloc("tracers", block=50 + it)
            assert a.shape == (n,)
            a[...] = np.arange(n) * 0.5 + source + it
            sc.commit("tracers", block=50 + it)
            sc.end_iteration()
        listing.close()
    print(f"rank {MPI.COMM_WORLD.Get_rank()}: done", flush=True)
