"""The same NumPy sum as sum_script.py in a plain Python process: K arrays of N bytes, filled
then summed, per repetition; prints one JSON line per repetition.
Usage: plain_sum.py BYTES_PER_BLOCK BLOCKS REPETITIONS"""
import json
import sys
import time

import numpy as np

bytes_, blocks, repetitions = (int(a) for a in sys.argv[1:4])
arrays = [np.empty(bytes_ // 8) for _ in range(blocks)]
for rep in range(repetitions):
    for a in arrays:
        a[...] = rep + 1.0  # written just before, as the client writes its blocks
    t0 = time.perf_counter_ns()
    total = sum(float(a.sum()) for a in arrays)
    t1 = time.perf_counter_ns()
    print(json.dumps({"ns": t1 - t0, "sum": total, "bytes": bytes_ * blocks}), flush=True)
