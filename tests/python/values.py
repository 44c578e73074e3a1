"""The values the test programs write and the checks expect, computed from one formula each."""
import numpy as np

NX, NY, NZ = 6, 5, 4  # sim.xml.in
DOMAINS = 2


def field(source, it, block):
    """float64 (NY, NX), written with write."""
    i, j = np.indices((NY, NX))
    return (source * 10000 + it * 1000 + block * 100 + i * 10 + j + 0.5).astype(np.float64)


def cube(source, it, block):
    """float64 (NZ, NY, NX), filled in place after alloc."""
    k, i, j = np.indices((NZ, NY, NX))
    return (-(source * 10000.0) - it * 1000 - block * 100 - k * 0.25 - i * 10 - j).astype(np.float64)


def counts(source, it, block):
    """int32 (NY, NX), filled in place after alloc."""
    i, j = np.indices((NY, NX))
    return (source * 100000 + it * 1000 + block * 500 + i * NX + j).astype(np.int32)


def ids(source, it, block):
    """int32 (NZ, NY, NX), written from a non-contiguous array (a transposed view)."""
    k, i, j = np.indices((NZ, NY, NX))
    return (-(source * 100000) - it * 1000 - block * 500 - k * 100 - i * 10 - j).astype(np.int32)


VARIABLES = {"field": field, "cube": cube, "counts": counts, "ids": ids}
