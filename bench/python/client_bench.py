"""The Python client's side of bench/python/run_python.sh: the costs micro_write.c measures for
C (steady damaris_write + end_iteration beside a memcpy, and alloc + commit + clear), measured
through `import sidecore` on the same configuration; prints one MICRO JSON line per phase.

Usage: client_bench.py CONFIG.xml [--phases write,alloc] [--iterations N] [--pause-us US]
                       [--blocks K] [--c-cycle LIBRARY]
The configuration defines the variable "field" (its layout gives dtype and shape); with
--blocks K each iteration writes blocks 0..K-1 (the script runs)."""
import argparse
import ctypes
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


def python_cycle(sc, fill, value):
    """alloc, fill `fill` bytes (not counted), commit, release: (alloc, commit, release) ns."""
    t0 = time.perf_counter_ns()
    a = sc.alloc("field")
    t1 = time.perf_counter_ns()
    a.reshape(-1).view(np.uint8)[:fill] = value  # the application's work
    # The clock is read twice: the first read brings the timer's own code back into the
    # caches the fill swept, so that commit's interval measures commit (before alloc the
    # compute loop keeps it warm), as clock_gettime in C costs next to nothing.
    t2 = time.perf_counter_ns()
    t2 = time.perf_counter_ns()
    sc.commit("field")
    t3 = time.perf_counter_ns()
    sc.release("field")
    t4 = time.perf_counter_ns()
    return t1 - t0, t3 - t2, t4 - t3


def c_cycle_of(library):
    """The same cycle through the C calls, timed in C (c_alloc_cycle.c, in this process)."""
    cycle = library.sidecore_bench_alloc_cycle
    cycle.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.POINTER(ctypes.c_int64)]
    times = (ctypes.c_int64 * 3)()

    def run(sc, fill, value):
        code = cycle(b"field", fill, value, times)
        if code != 0:
            raise RuntimeError(f"C alloc cycle failed with code {code}")
        return tuple(times)
    return run


def alloc_loop(sc, count, fill, pause_us, cycles):
    """micro_write.c's alloc_loop: alloc, fill `fill` bytes (not counted), commit, release,
    end_iteration, then the compute phase; the cycles (Python's, and C's when paired)
    alternate from one iteration to the next. Returns, per cycle, the four series of times
    (alloc+commit+release, alloc, commit, release)."""
    series = [([], [], [], []) for _ in cycles]
    for it in range(count * len(cycles)):
        k = it % len(cycles)
        alloc, commit, clear = cycles[k](sc, fill, it & 0xFF)
        sc.end_iteration()
        for s, v in zip(series[k], (alloc + commit + clear, alloc, commit, clear)):
            s.append(v)
        busy_wait(pause_us)
    return series


def phase_alloc(sc, args, bytes_):
    # As micro_write.c: 1 + N iterations filling the whole block after the compute phase
    # ("steady", the first left out), then at least 100 writing one cache line after 200 us
    # ("calls": the calls' own cost). With --c-cycle, C cycles alternate with the Python ones
    # in this process ("paired_c").
    cycles = [python_cycle]
    if args.c_cycle:
        cycles.append(c_cycle_of(ctypes.CDLL(args.c_cycle)))
    steady = alloc_loop(sc, args.iterations + 1, bytes_, args.pause_us, cycles)
    calls = alloc_loop(sc, max(100, args.iterations), min(bytes_, 64), 200, cycles)
    names = ("alloc_commit_clear", "alloc", "commit", "clear")
    line = {"label": "python", "phase": "alloc", "bytes": bytes_, "iterations": args.iterations}
    for key, k in (("", 0), ("paired_c_", 1))[:len(cycles)]:
        line[key + "steady"] = {n: stats(s[1:]) for n, s in zip(names, steady[k])}
        line[key + "calls"] = {n: stats(s) for n, s in zip(names, calls[k])}
    print("MICRO " + json.dumps(line), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    parser.add_argument("--phases", default="write,alloc")
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--pause-us", type=int, default=1000)
    parser.add_argument("--blocks", type=int, default=1)
    parser.add_argument("--c-cycle", help="c_alloc_cycle.c's library: pairs the alloc phase "
                        "with the C calls in this process")
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
