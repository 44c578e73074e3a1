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


def alloc_loop(sc, count, fill, pause_us):
    """micro_write.c's alloc_loop: alloc, fill `fill` bytes (not counted), commit, release,
    end_iteration, then the compute phase. Returns the four series of times."""
    total, alloc, commit, clear = [], [], [], []
    for it in range(count):
        t0 = time.perf_counter_ns()
        a = sc.alloc("field")
        t1 = time.perf_counter_ns()
        a.reshape(-1).view(np.uint8)[:fill] = it & 0xFF  # the application's work
        # The clock is read twice: the first read brings the timer's own code back into the
        # caches the fill swept, so that commit's interval measures commit (before alloc the
        # compute loop keeps it warm), as clock_gettime in micro_write.c costs next to nothing.
        t2 = time.perf_counter_ns()
        t2 = time.perf_counter_ns()
        sc.commit("field")
        t3 = time.perf_counter_ns()
        sc.release("field")
        t4 = time.perf_counter_ns()
        del a
        sc.end_iteration()
        alloc.append(t1 - t0)
        commit.append(t3 - t2)
        clear.append(t4 - t3)
        total.append((t1 - t0) + (t4 - t2))
        busy_wait(pause_us)
    return total, alloc, commit, clear


def phase_alloc(sc, args, bytes_):
    # As micro_write.c: 1 + N iterations filling the whole block after the compute phase
    # ("steady", the first left out), then at least 100 writing one cache line after 200 us
    # ("calls": the calls' own cost).
    steady = alloc_loop(sc, args.iterations + 1, bytes_, args.pause_us)
    calls = alloc_loop(sc, max(100, args.iterations), min(bytes_, 64), 200)
    names = ("alloc_commit_clear", "alloc", "commit", "clear")
    print("MICRO " + json.dumps({
        "label": "python", "phase": "alloc", "bytes": bytes_, "iterations": args.iterations,
        "steady": {n: stats(series[1:]) for n, series in zip(names, steady)},
        "calls": {n: stats(series) for n, series in zip(names, calls)}}), flush=True)


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
