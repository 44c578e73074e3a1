"""Times a NumPy sum over every block it receives (zero-copy views of the shared buffer) and
appends the time and the sum to $SIDECORE_BENCH_OUT, one JSON line per iteration. Then, as the
paired reference, copies the blocks into arrays of its own (NumPy's, on transparent huge pages
as in a plain process) and times the same sum over them, in the same process at the same
moment ("own_ns")."""
import json
import os
import time

import numpy as np

_own = {}


def on_iteration(it):
    blocks = it["field"]
    t0 = time.perf_counter_ns()
    total = sum(float(b.data.sum()) for b in blocks)
    t1 = time.perf_counter_ns()
    own = [_own.setdefault(i, np.empty_like(b.data)) for i, b in enumerate(blocks)]
    for target, b in zip(own, blocks):
        np.copyto(target, b.data)  # written just before, by this core
    t2 = time.perf_counter_ns()
    own_total = sum(float(a.sum()) for a in own)
    t3 = time.perf_counter_ns()
    assert own_total == total, (own_total, total)
    with open(os.environ["SIDECORE_BENCH_OUT"], "a") as f:
        f.write(json.dumps({"iteration": it.number, "ns": t1 - t0, "own_ns": t3 - t2,
                            "sum": total, "bytes": sum(b.data.nbytes for b in blocks)}) + "\n")
