#!/usr/bin/env python3
"""Runs stats_writer.c under mpirun with the stats action plugin, then checks the CSV it wrote
(count, minimum, maximum and mean of each variable over all clients, interior elements only,
at every second iteration) against the same numbers computed here from the writer's formulas,
and the events the plugin received against the signals the writer sent.

    check_stats.py --writer ./stats_writer --xml stats.xml.in --library libsidecore_stats.so \
        --np 4 --cores 1 --servers 1 [--nodes 1] [--threads 1] [--ranks-per-node 2] --out /tmp/run
"""
import argparse
import collections
import csv
import glob
import math
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpi_job import expect_no_leaked_segments, fail, job_segments, mpi_env, run_job  # noqa: E402

NY, NX, N = 4, 5, 6  # stats_writer.c
FREQUENCY = 2  # stats.xml.in


def expected_rows(iterations, clients, short):
    """(iteration, variable) -> (count, min, max, mean), from stats_writer.c's formulas; client 0
    ends only `short` iterations."""
    rows = {}
    y, x = np.mgrid[1:NY - 1, 1:NX - 1]  # the interior: one ghost cell on each side
    i = np.arange(N)
    for it in range(0, iterations, FREQUENCY):
        field = np.concatenate([(it * 1000.0 + src * 100.0 + y * 10.0 + x + 0.25).ravel()
                                for src in range(clients) if src > 0 or it < short])
        counts = np.concatenate([((i - 3) * (src + 1) + it).astype(np.float64)
                                 for src in range(clients) if src > 0 or it < short])
        for name, values in (("field", field), ("counts", counts)):
            rows[(it, name)] = (values.size, values.min(), values.max(), values.mean())
    return rows


def check_csv(path, want):
    with open(path) as f:
        lines = list(csv.reader(f))
    if not lines or lines[0] != ["iteration", "variable", "count", "min", "max", "mean"]:
        fail(f"{path}: header {lines[:1]}")
    got = {}
    for line in lines[1:]:
        key = (int(line[0]), line[1])
        if key in got:
            fail(f"{path}: {key} written twice")
        got[key] = (int(line[2]), float(line[3]), float(line[4]), float(line[5]))
    if set(got) != set(want):
        fail(f"{path}: rows {sorted(got)}, expected {sorted(want)}")
    for key, (count, low, high, mean) in sorted(want.items()):
        g = got[key]
        if g[0] != count or g[1] != low or g[2] != high or not math.isclose(g[3], mean,
                                                                            rel_tol=1e-12):
            fail(f"{path}: {key}: got count,min,max,mean {g}, expected {(count, low, high, mean)}")
    return len(got)


def check_events(out, iterations, clients, servers, dedicated, short):
    lines = []
    for path in glob.glob(os.path.join(out, "stats.csv.events.*")):
        with open(path) as f:
            lines += [tuple(line.strip().split(",")) for line in f if line.strip()]
    events = [(name, int(source), int(it), int(scope)) for name, source, it, scope in lines]
    marks = collections.Counter(e for e in events if e[0] == "mark")
    want_marks = collections.Counter(("mark", c, it, 0) for c in range(clients)
                                     for it in range(1, iterations if c else short, 2))
    if marks != want_marks:
        fail(f"events 'mark': got {sorted(marks.items())}, expected {sorted(want_marks.items())}")
    groups = [e for e in events if e[0] == "group_mark"]
    if dedicated:
        # Once per server at iteration 1 (each client signalled twice: still once); never at
        # iteration 2, where one client signalled twice.
        at = collections.Counter((e[2], e[3]) for e in groups)
        if at != collections.Counter({(1, 1): servers}):
            fail(f"events 'group_mark': got {groups}, expected one per server ({servers}) at "
                 "iteration 1 and none at iteration 2")
        if any(not 0 <= e[1] < clients for e in groups):
            fail(f"events 'group_mark': a source is not a client: {groups}")
    else:
        # Without dedicated resources every signal runs, in its client's writer.
        want = collections.Counter([("group_mark", c, 1, 1) for c in range(clients)] * 2 +
                                   [("group_mark", 0, 2, 1)] * 2)
        if collections.Counter(groups) != want:
            fail(f"events 'group_mark': got {sorted(groups)}, expected {sorted(want.elements())}")
    return len(events)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writer", required=True)
    parser.add_argument("--xml", required=True)
    parser.add_argument("--library", required=True)
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("--cores", type=int, default=0)
    parser.add_argument("--nodes", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--servers", type=int, default=0, help="dedicated servers in the job")
    parser.add_argument("--ranks-per-node", type=int, default=0)
    parser.add_argument("--out", required=True)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--short", type=int, default=0,
                        help="client 0 stops after this many iterations (at least 3)")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--expect-error", default="",
                        help="the run must fail in damaris_initialize with this in its message")
    args = parser.parse_args()

    clients = args.np - args.servers
    os.makedirs(args.out, exist_ok=True)
    with open(args.xml) as f:
        text = f.read()
    values = {"CORES": args.cores, "NODES": args.nodes, "THREADS": args.threads,
              "OUT": args.out, "LIBRARY": args.library}
    for key, value in values.items():
        text = text.replace(f"@{key}@", str(value))
    xml = os.path.join(args.out, "stats.xml")
    with open(xml, "w") as f:
        f.write(text)

    before = job_segments()
    short = args.short or args.iterations
    status, output = run_job(args.np, [args.writer, xml, str(args.iterations), str(short)],
                             mpi_env(args.ranks_per_node), args.timeout, cwd=args.out)
    if args.expect_error:
        # stats_writer prints the code and the message on every rank, then leaves.
        # (every rank reports the first failure, which may be another rank's: "rank 1: ...")
        pattern = (r"damaris_initialize returned \d+ \(DAMARIS_CONFIG_ERROR[^)]*\): .*" +
                   re.escape(os.path.join(args.out, "stats.xml")) +
                   r":18: action plugin \"stats\": .*" + re.escape(args.expect_error))
        if status == 0 or not re.search(pattern, output):
            fail(f"expected the job to fail in damaris_initialize with {pattern!r}")
        expect_no_leaked_segments(before)
        print(f"OK: the job failed as expected: {args.expect_error}")
        return
    if status != 0:
        fail(f"stats_writer exited with status {status}")
    if re.search(r"\] (error|fatal):", output):
        fail("the run logged an error")
    expect_no_leaked_segments(before)

    rows = check_csv(os.path.join(args.out, "stats.csv"),
                     expected_rows(args.iterations, clients, short))
    events = check_events(args.out, args.iterations, clients, args.servers, args.servers > 0,
                          short)
    print(f"OK: {rows} statistics rows from {clients} clients (client 0 stopping after {short} "
          f"iterations) and {args.servers} servers "
          f"(cores={args.cores} nodes={args.nodes} threads={args.threads}), {events} events, "
          "every number as computed here")


if __name__ == "__main__":
    main()
