"""The Python client's side of bench/python/run_python.sh: the costs micro_write.c measures for
C (steady damaris_write + end_iteration beside a memcpy, and alloc + commit + clear), measured
through `import sidecore` on the same configuration; prints one MICRO JSON line per phase.

Usage: client_bench.py CONFIG.xml [--phases write,alloc] [--iterations N] [--pause-us US]
                       [--blocks K]
The configuration defines the variable "field" (its layout gives dtype and shape); with
--blocks K each iteration writes blocks 0..K-1 (the script runs)."""
import argparse
import json
import time

import numpy as np
from mpi4py import MPI

import sidecore


def busy_wait(microseconds):
    end = time.perf_counter_ns() + microseconds * 1000
    while time.perf_counter_ns() < end:
        pass


def stats(samples):
    s = sorted(samples)
    return {"median": s[len(s) // 2], "min": s[0], "p90": s[min(len(s) - 1, len(s) * 9 // 10)]}


def phase_write(sc, args, bytes_):
    dtype, shape = sc.layout("field")
    source = np.full(shape, 1, dtype=dtype)
    target = np.empty_like(source)
    write, end, copy = [], [], []
    for it in range(args.iterations + 1):
        source.flat[0] = it
        t0 = time.perf_counter_ns()
        for block in range(args.blocks):
            sc.write("field", source, block=block)
        t1 = time.perf_counter_ns()
        sc.end_iteration()
        t2 = time.perf_counter_ns()
        np.copyto(target, source)
        t3 = time.perf_counter_ns()
        if it > 0:  # the first iteration is reported by the C benchmark's own first-write rows
            write.append(t1 - t0)
            end.append(t2 - t1)
            copy.append(t3 - t2)
        busy_wait(args.pause_us)
    print("MICRO " + json.dumps({"label": "python", "phase": "write", "bytes": bytes_,
                                 "blocks": args.blocks, "iterations": args.iterations,
                                 "steady": {"write": stats(write), "end_iteration": stats(end),
                                            "memcpy_warm": stats(copy)}}), flush=True)


def phase_alloc(sc, args, bytes_):
    total, alloc, commit, clear = [], [], [], []
    for it in range(args.iterations + 1):
        t0 = time.perf_counter_ns()
        a = sc.alloc("field")
        t1 = time.perf_counter_ns()
        a.flat[0] = it  # filling the block is the application's time, not counted
        t2 = time.perf_counter_ns()
        sc.commit("field")
        t3 = time.perf_counter_ns()
        sc.release("field")
        t4 = time.perf_counter_ns()
        del a
        sc.end_iteration()
        if it > 0:
            alloc.append(t1 - t0)
            commit.append(t3 - t2)
            clear.append(t4 - t3)
            total.append((t1 - t0) + (t4 - t2))
        busy_wait(args.pause_us)
    print("MICRO " + json.dumps({"label": "python", "phase": "alloc", "bytes": bytes_,
                                 "iterations": args.iterations,
                                 "steady": {"alloc_commit_clear": stats(total),
                                            "alloc": stats(alloc), "commit": stats(commit),
                                            "clear": stats(clear)}}), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    parser.add_argument("--phases", default="write,alloc")
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--pause-us", type=int, default=1000)
    parser.add_argument("--blocks", type=int, default=1)
    args = parser.parse_args()
    with sidecore.initialize(args.config, MPI.COMM_WORLD) as sc:
        if sc.start():
            dtype, shape = sc.layout("field")
            bytes_ = int(np.prod(shape)) * np.dtype(dtype).itemsize
            for phase in args.phases.split(","):
                {"write": phase_write, "alloc": phase_alloc}[phase](sc, args, bytes_)
            sc.sync()


if __name__ == "__main__":
    main()
