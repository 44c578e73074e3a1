#!/usr/bin/env python3
"""Opens one stored iteration of a scaling run and checks its data (bench/scale/run_scale.py).

  read_back.py h5py <master file> <variables> <iteration> <global elements>
  read_back.py api  <prefix>      <variables> <iteration> <global elements>

Each reader runs in a process of its own, so that h5py's HDF5 and the one the read API links
never meet, and so that what one reader cached cannot help the other. Prints one JSON object:
the time to open the iteration (h5py: the file and its first dataset; the read API:
read_output, which lists every variable and block), the time to read v0 whole, and how many
values were checked: every value of v0 and the first and last value of every other variable,
against the formula of bench/scale/scale_write.c.
"""
import json
import sys
import time

import numpy as np


def expected(iteration, variable, index):
    return iteration * 1e13 + variable * 1e9 + index


def check(name, values, iteration, variable, count):
    if values.shape != (count,):
        sys.exit(f"read_back.py: {name} has shape {values.shape}, written ({count},)")
    want = expected(iteration, variable, np.arange(count, dtype=np.float64))
    bad = np.flatnonzero(values != want)
    if bad.size:
        i = int(bad[0])
        sys.exit(f"read_back.py: {name}[{i}] is {values[i]!r}, written {want[i]!r} "
                 f"({bad.size} values differ)")
    return count


def with_h5py(path, variables, iteration, count):
    import h5py
    t0 = time.perf_counter()
    f = h5py.File(path, "r")
    first = f["v0"]
    shape = first.shape
    opened = time.perf_counter() - t0
    t1 = time.perf_counter()
    values = first[...]
    read = time.perf_counter() - t1
    checked = check("v0", values, iteration, 0, count)
    for v in range(1, variables):
        d = f[f"v{v}"]
        ends = d[[0, count - 1]]
        if ends[0] != expected(iteration, v, 0) or ends[1] != expected(iteration, v, count - 1):
            sys.exit(f"read_back.py: v{v} ends are {ends}, written "
                     f"{[expected(iteration, v, 0), expected(iteration, v, count - 1)]}")
        checked += 2
    f.close()
    return {"open_s": opened, "read_v0_s": read, "checked": checked, "shape": list(shape)}


def with_api(prefix, variables, iteration, count):
    import sidecore
    t0 = time.perf_counter()
    out = sidecore.read_output(prefix, iteration)
    listed = out.variables
    opened = time.perf_counter() - t0
    if len(listed) != variables or not out.complete:
        sys.exit(f"read_back.py: {len(listed)} variables (complete: {out.complete}), "
                 f"written {variables}")
    t1 = time.perf_counter()
    values = out.read("v0")
    read = time.perf_counter() - t1
    checked = check("v0", values, iteration, 0, count)
    for v in range(1, variables):
        ends = [out.read_region(f"v{v}", [i], [1])[0] for i in (0, count - 1)]
        if ends != [expected(iteration, v, 0), expected(iteration, v, count - 1)]:
            sys.exit(f"read_back.py: v{v} ends are {ends}")
        checked += 2
    out.close()
    return {"open_s": opened, "read_v0_s": read, "checked": checked,
            "blocks_v0": listed["v0"][2]}


def main():
    if len(sys.argv) != 6 or sys.argv[1] not in ("h5py", "api"):
        sys.exit(__doc__)
    kind, path = sys.argv[1], sys.argv[2]
    variables, iteration, count = (int(a) for a in sys.argv[3:6])
    reader = with_h5py if kind == "h5py" else with_api
    print(json.dumps(reader(path, variables, iteration, count)))


if __name__ == "__main__":
    main()
