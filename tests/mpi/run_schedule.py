#!/usr/bin/env python3
"""Runs e2e_writer under <schedule> and checks what the schedule promises, from the trace
every writer keeps (<out>/schedule.<writer>.csv: one row per iteration stored, with the
monotonic times at which it completed, its stores were ready, began and ended, the writer's
slot and what the clients' phases were):

- writers=K: at no moment are more than K writers' store intervals open, every store took a
  turn (none ran past its deadline without one);
- bandwidth=B: for each writer, the bytes of the stores begun by any time t are at most
  B * (t - the writer's start);
- slots: writer w of W begins in its slot, w/W of the measured iteration time after the
  iteration completed, the writers' slots of an iteration do not overlap, and no two writers
  ever store at once;
- phase: with the clients marking compute phases (E2E_PHASES; each logs them), every store
  begins inside a compute phase of every client of its writer, and some had to wait for one;
- ordered: no writer begins iteration k before every writer has stored k - 1 (order
  "iteration"), nor, with order "writer", before the writers ahead of it stored k;
- and every value written is stored (read back with h5py).

    run_schedule.py --writer ./e2e_writer --xml schedule.xml.in --np 6 --cores 1 \
        --ranks-per-node 2 --writers 1
"""
import argparse
import csv
import glob
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpi_job import expect_array, expect_no_leaked_segments, fail, job_segments, mpi_env, run_job  # noqa: E402
from run_e2e import (NX, blocks_by_name, expected_ids, expected_pressure,  # noqa: E402
                     expected_temperature, read)

import h5py  # noqa: E402
import numpy as np  # noqa: E402


def read_traces(out, writers):
    traces = {}
    for w in range(writers):
        path = os.path.join(out, f"schedule.{w}.csv")
        if not os.path.exists(path):
            fail(f"missing trace {path}; have {sorted(os.listdir(out))}")
        with open(path) as f:
            header = f.readline()
            if not header.startswith("#") or "created=" not in header:
                fail(f"{path}: unexpected first line {header!r}")
            created = float(header.split("created=")[1].split()[0])
            rows = list(csv.DictReader(f))
        traces[w] = (created, [{k: float(v) for k, v in r.items()} for r in rows])
    return traces


def check_writers(traces, limit):
    events = []
    for w, (_, rows) in traces.items():
        for r in rows:
            if r["turn"] != 1:
                fail(f"writer {w} stored iteration {int(r['iteration'])} without a turn")
            events.append((r["begin"], 1, w))
            events.append((r["end"], -1, w))
    # At equal times an end comes first: the trace rounds to microseconds, and a turn handed
    # over within one microsecond is not an overlap.
    events.sort(key=lambda e: (e[0], e[1]))
    open_now, most = 0, 0
    for t, step, w in events:
        open_now += step
        if open_now > limit:
            fail(f"{open_now} writers stored at once at t={t:.6f} (writer {w} began), "
                 f"more than writers={limit}")
        most = max(most, open_now)
    print(f"writers: at most {most} of {len(traces)} stored at once (limit {limit}) "
          f"over {len(events) // 2} stores")


def check_bandwidth(traces, rate):
    for w, (created, rows) in traces.items():
        begun = 0
        for r in sorted(rows, key=lambda r: r["begin"]):
            begun += r["bytes"]
            allowed = rate * (r["begin"] - created + 1e-6)
            if begun > allowed:
                fail(f"writer {w}: {begun:.0f} bytes begun by t={r['begin']:.6f}, more than "
                     f"bandwidth * elapsed = {allowed:.0f}")
        total_time = max(r["end"] for r in rows) - created
        print(f"writer {w}: {begun:.0f} bytes in {total_time:.3f} s "
              f"({begun / total_time:.0f} B/s, cap {rate:.0f})")


def check_slots(traces, chosen=False):
    """Each writer begins in its own slot, placed w/W of its measured period after the
    iteration completed. chosen: self picked slots (their count is its own; the first stores
    may go at once). How many stores were late for their slot (an earlier store ran long) and
    how far the writers' measured periods differ depend on the machine's load: printed, not
    judged (the bound on concurrent writers is checked apart, with check_writers)."""
    count = len(traces)
    late = 0
    drift = 0.0
    slots = {}
    for w, (_, rows) in traces.items():
        for r in rows:
            it = int(r["iteration"])
            if r["slot_end"] <= 0:
                if it == 0 or chosen:
                    continue  # nothing measured yet, or self chose otherwise (it says why)
                fail(f"writer {w}, iteration {it}: no slot")
            width = r["slot_end"] - r["slot_begin"]
            # The trace keeps microseconds: three roundings meet here.
            if not chosen and abs(r["slot_begin"] - r["completed"] - w * width) > 2e-6 + 2e-6 * w:
                fail(f"writer {w}, iteration {it}: slot starts {r['slot_begin'] - r['completed']:.6f}"
                     f" s after completion, expected {w} x {width:.6f}")
            if r["begin"] + 2e-6 < r["slot_begin"]:
                fail(f"writer {w}, iteration {it}: began {r['slot_begin'] - r['begin']:.6f} s "
                     "before its slot")
            if r["begin"] >= r["slot_end"]:
                late += 1
            slots.setdefault(it, []).append((r["slot_begin"], r["slot_end"], w))
    for windows in slots.values():
        windows.sort()
        for (b0, e0, _), (b1, _, _) in zip(windows, windows[1:]):
            drift = max(drift, e0 - b1)
    slotted = sum(len(windows) for windows in slots.values())
    if chosen and slotted == 0:
        return 0
    print(f"slots: {count} writers, every store began in or after its own slot ({late} late; "
          f"neighbouring slots overlap by at most {max(drift, 0.0) * 1e3:.1f} ms)")
    return slotted


def check_order(traces, by_writer):
    ends = {}
    for w, (_, rows) in traces.items():
        for r in rows:
            ends[(int(r["iteration"]), w)] = r["end"]
    checked = 0
    for w, (_, rows) in traces.items():
        for r in rows:
            it = int(r["iteration"])
            for v in traces:
                if v == w:
                    continue
                before = it if by_writer and v < w else it - 1
                if before < 0:
                    continue
                end = ends.get((before, v))
                if end is None:
                    fail(f"writer {v} has no store of iteration {before}")
                if r["begin"] + 2e-6 < end:
                    fail(f"writer {w} began iteration {it} at {r['begin']:.6f}, before writer {v} "
                         f"ended iteration {before} at {end:.6f}")
                checked += 1
    print(f"ordered ({'writer' if by_writer else 'iteration'}): {checked} pairs of stores in order")


def read_phases(out):
    phases = {}
    for path in glob.glob(os.path.join(out, "phases.*.csv")):
        rank = int(path.rsplit(".", 2)[1])
        with open(path) as f:
            phases[rank] = [tuple(float(v) for v in line.split(",")) for line in f if line.strip()]
    if not phases:
        fail("no client logged its phases (E2E_PHASES)")
    return phases


def check_phase(traces, out, group_of, require_wait=True, lag=0.0, min_inside=None):
    """require_wait: some store must have been ready outside a compute phase (not on dedicated
    nodes, where the pulls already wait for the phase, so iterations complete inside one).
    lag: how late the writer may learn that a phase ended (dedicated nodes learn it from a
    message); the latest it learned one is printed.
    min_inside: how many stores must have begun in a compute phase (default: one per writer)."""
    phases = read_phases(out)
    latest = 0.0
    clients_of = {}
    for rank in phases:
        clients_of.setdefault(group_of(rank), []).append(rank)
    inside, waited = 0, 0
    for w, (_, rows) in traces.items():
        clients = clients_of.get(w)
        if not clients:
            fail(f"writer {w}: no client logged phases (have {sorted(phases)})")
        for r in rows:
            it = int(r["iteration"])
            if r["phase"] == 9:
                fail(f"writer {w}, iteration {it}: began outside a compute phase at the deadline")
            if r["phase"] != 1:
                continue  # a client stopped or waited for the writer
            inside += 1
            # The writer saw every client computing at some instant between phase_seen_from
            # and phase_seen_to: that span meets a compute phase of each (as the client logged
            # it, from before its mark to after its end mark).
            seen = (r["phase_seen_from"], r["phase_seen_to"])
            if not seen[0] <= seen[1] <= r["begin"] + 2e-6:
                fail(f"writer {w}, iteration {it}: saw the phases at {seen}, after it began "
                     f"({r['begin']:.6f})")
            for c in clients:
                if any(b - 2e-6 <= seen[1] and seen[0] <= e + 2e-6 for b, e in phases[c]):
                    continue
                if not any(b - 2e-6 <= seen[1] for b, _ in phases[c]):
                    # It had not marked its first phase yet (a slow start): a client that has
                    # never marked one does not hold the stores back (docs/scheduling.md).
                    continue
                late = min((seen[0] - e for b, e in phases[c] if b - 2e-6 <= seen[1]),
                           default=float("inf"))
                if late > lag:
                    fail(f"writer {w}, iteration {it}: let the store begin on phases seen at "
                         f"[{seen[0]:.6f}, {seen[1]:.6f}], outside every compute phase of "
                         f"client {c}" + (f" ({late * 1e3:.3f} ms after one ended)"
                                          if late < float("inf") else ""))
                latest = max(latest, late)
            if not any(b <= r["ready"] <= e for c in clients for b, e in phases[c]):
                waited += 1
    if inside < (len(traces) if min_inside is None else min_inside):
        fail(f"only {inside} stores began in a compute phase")
    if waited == 0 and require_wait:
        fail("no store was ready outside a compute phase: the test shows nothing")
    print(f"phase: {inside} stores began inside every client's compute phase, "
          f"{waited} of them after waiting for one"
          + (f"; the latest learned a phase's end {latest * 1e3:.3f} ms after it" if lag else ""))


def group_of(args):
    """The writer of each client rank: its node's dedicated core, the one node server (these
    tests use one), or itself (threads)."""
    if args.cores:
        per_node = args.ranks_per_node or args.np
        return lambda rank: rank // per_node
    if args.nodes:
        return lambda rank: 0
    return lambda rank: rank


def check_pulls(out, writers, min_inside=None):
    """Dedicated nodes under phase: every block was pulled while its client computed (or
    waited for the server, or had stopped), never while it was outside a compute phase.
    min_inside: how many pulls must have happened in a compute phase (default one; with
    phases of a few ms, a loaded machine may pull everything only after the clients stopped,
    as --min-in-phase says of the stores)."""
    phases = read_phases(out)
    pulled, in_phase, close = 0, 0, 0
    for w in range(writers):
        path = os.path.join(out, f"schedule.{w}.pulls.csv")
        if not os.path.exists(path):
            fail(f"missing pull trace {path}")
        with open(path) as f:
            rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
        for r in rows:
            pulled += 1
            client, state = int(r["client"]), int(r["phase"])
            if state == 2:
                fail(f"client {client}'s block of iteration {int(r['iteration'])} was pulled while "
                     "the client was outside a compute phase")
            if state != 1:
                continue
            in_phase += 1
            # The server learns a phase's end by a message, a moment later: how close the
            # pulls came to the phases the client logged is printed, not judged (it depends
            # on the machine's load).
            if any(b - 2e-6 <= r["posted"] <= e + 0.005 for b, e in phases[client]):
                close += 1
    if in_phase < (1 if min_inside is None else min_inside):
        fail(f"{in_phase} of {pulled} pulls happened in a compute phase")
    print(f"pulls: {in_phase} of {pulled} blocks pulled while the server knew their client "
          f"computed ({close} of them within 5 ms of a phase the client logged), none while "
          "it knew the client was outside one")


def check_values(out, clients, writers, iterations):
    for it in range(iterations):
        files = sorted(glob.glob(os.path.join(out, f"e2e_It{it}_Pr*.h5")))
        if len(files) != writers:
            fail(f"iteration {it}: {len(files)} files, expected one per writer ({writers})")
        found = blocks_by_name(files)
        for src in range(clients):
            for b in range(2):
                col = slice((src * 2 + b) * NX, (src * 2 + b + 1) * NX)
                for var, want in (("temperature", expected_temperature(it, clients)[:, col]),
                                  ("fluid/pressure", expected_pressure(it, clients)[:, :, col]),
                                  ("ids", expected_ids(it, clients)[col])):
                    path = f"{var}/P{src}/B{b}"
                    if path not in found:
                        fail(f"iteration {it}: dataset {path} missing")
                    expect_array(f"It{it} {path}", read(found[path], path), want)
        pfiles = sorted(glob.glob(os.path.join(out, "particles", f"e2e_It{it}_Pr*.h5")))
        found = blocks_by_name(pfiles)
        for src in range(clients):
            path = f"particles/P{src}/B0"
            if path not in found:
                fail(f"iteration {it}: {path} missing")
            want = (it * 1000000 + src * 1000 + np.arange(3 + it + src)).astype(np.int64)
            expect_array(f"It{it} {path}", read(found[path], path), want)
    print(f"every value of {iterations} iterations from {clients} clients is stored")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--writer", required=True)
    ap.add_argument("--xml", required=True)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--cores", type=int, default=0)
    ap.add_argument("--nodes", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--thread-multiple", action="store_true")
    ap.add_argument("--ranks-per-node", type=int, default=0)
    ap.add_argument("--iterations", type=int, default=6)
    ap.add_argument("--store-delay", type=float, default=0.05,
                    help="seconds each iteration's null store takes, so that stores last")
    ap.add_argument("--policy", default="rate", help="the <schedule policy=...>")
    ap.add_argument("--phases", default="",
                    help="other_ms,compute_ms: clients mark compute phases (E2E_PHASES), "
                         "run ahead of their writers (E2E_NO_SYNC) and log the phases")
    ap.add_argument("--lag-ms", type=int, default=0,
                    help="the last client sleeps this long per iteration and clients run ahead "
                         "of their writers (E2E_LAG_MS, E2E_NO_SYNC): its writer falls behind")
    ap.add_argument("--compute-ms", type=int, default=0,
                    help="clients sleep this long after each iteration, without phase marks, "
                         "and run ahead of their writers (E2E_COMPUTE_MS, E2E_NO_SYNC)")
    ap.add_argument("--overrun", action="store_true",
                    help="slots: stores longer than a slot; only the bound on concurrent writers "
                         "is checked (the writers wait for each other, their slots drift)")
    ap.add_argument("--expect-self", default="", choices=["", "slots", "phase"],
                    help="what self must choose (checked as that policy is)")
    ap.add_argument("--order", default="", help="the <schedule order=...> of ordered")
    ap.add_argument("--check-order", action="store_true",
                    help="check the order of ordered even when the policy does not ask for it "
                         "(to see that the check fails without it)")
    ap.add_argument("--writers", type=int, default=0)
    ap.add_argument("--bandwidth", type=float, default=0.0)
    ap.add_argument("--master-file", action="store_true",
                    help="VirtualView on: the writers exchange block metadata at the end of the "
                         "run instead of at every iteration, and the master files read back "
                         "every value")
    ap.add_argument("--timeout", type=float, default=60,
                    help="the buffer's timeout: how long a store waits at most for its turn, "
                         "slot, order or the clients' compute phases")
    ap.add_argument("--phase-lag", type=float, default=0.0,
                    help="phase on dedicated nodes: seconds a writer may take to learn that a "
                         "compute phase ended (the client's message is on its way meanwhile)")
    ap.add_argument("--min-in-phase", type=int, default=None,
                    help="phase: stores (and, on dedicated nodes, pulls) that must begin in a "
                         "compute phase (default one per "
                         "writer; with phases of a few ms, a loaded machine may store every "
                         "iteration only after the clients stopped)")
    ap.add_argument("--max-seconds", type=float, default=0,
                    help="the job must end within this many seconds (0: no bound but the "
                         "driver's); with a short --timeout and many iterations, a bound below "
                         "timeout x iterations shows that no store waited for its deadline")
    ap.add_argument("--expect-not-applied", default="",
                    help="the policy is not applied in this mode: this warning must be logged, "
                         "and its check is skipped")
    args = ap.parse_args()

    nodes = 1
    if args.ranks_per_node:
        nodes = (args.np + args.ranks_per_node - 1) // args.ranks_per_node
    servers = nodes * args.cores
    if args.nodes:
        servers = args.np - (nodes - args.nodes) * args.ranks_per_node
    clients = args.np - servers
    writers = servers if (args.cores or args.nodes) else clients

    limits = []
    if args.writers:
        limits.append(f'writers="{args.writers}"')
    if args.bandwidth:
        limits.append(f'bandwidth="{args.bandwidth:.0f}"')
    if args.order:
        limits.append(f'order="{args.order}"')
    shm_before = job_segments()
    with tempfile.TemporaryDirectory(prefix="sidecore-schedule-") as out:
        xml = open(args.xml).read()
        for key, value in {"@CORES@": args.cores, "@NODES@": args.nodes,
                           "@THREADS@": args.threads, "@OUT@": out, "@BUFFER@": 16 << 20,
                           "@POLICY@": "wait", "@DELAY@": args.store_delay,
                           "@SCHEDULE@": args.policy,
                           "@LIMITS@": " ".join(limits),
                           "@VIEW@": "true" if args.master_file else "false",
                           "@TIMEOUT@": f"{args.timeout:g}"}.items():
            xml = xml.replace(key, str(value))
        xml_path = os.path.join(out, "schedule.xml")
        with open(xml_path, "w") as f:
            f.write(xml)
        extra = {"E2E_OUT": out}
        if args.thread_multiple:
            extra["E2E_THREAD_MULTIPLE"] = "1"
        if args.phases:
            extra["E2E_PHASES"] = args.phases
            extra["E2E_NO_SYNC"] = "1"
        if "self" in args.policy:
            extra["SIDECORE_LOG_LEVEL"] = "info"  # self says what it chose
        if args.compute_ms:
            extra["E2E_COMPUTE_MS"] = str(args.compute_ms)
            extra["E2E_NO_SYNC"] = "1"
        if args.lag_ms:
            extra["E2E_LAG_MS"] = str(args.lag_ms)
            extra["E2E_NO_SYNC"] = "1"
        env = mpi_env(args.ranks_per_node, **extra)
        began = time.monotonic()
        returncode, output = run_job(args.np, [args.writer, xml_path, str(args.iterations)], env,
                                     timeout=300, cwd=out)
        took = time.monotonic() - began
        if returncode != 0:
            fail(f"{args.writer} exited with {returncode}")
        if args.max_seconds:
            if took > args.max_seconds:
                fail(f"the job took {took:.1f} s, more than {args.max_seconds:g} s (a store that "
                     f"waits for its {args.timeout:g} s deadline takes that long)")
            print(f"the job took {took:.1f} s (bound {args.max_seconds:g} s, "
                  f"{args.iterations} iterations, timeout {args.timeout:g} s)")
        if args.master_file:
            # The writers exchange block metadata for the master files at the end instead.
            if "is not applied" in output:
                fail("the schedule was not applied to file-per-core output with a master file")
            for it in range(args.iterations):
                master = os.path.join(out, f"e2e_It{it}.h5")
                if not os.path.exists(master):
                    fail(f"no master file {master}")
                with h5py.File(master, "r") as f:
                    got = f["temperature"][()]
                expect_array(f"master It{it} temperature", got, expected_temperature(it, clients))
        if args.expect_not_applied:
            if args.expect_not_applied not in output:
                fail(f"expected the warning {args.expect_not_applied!r}")
        elif "is not applied" in output:
            fail("the schedule was not applied")
        traces = read_traces(out, writers)
        for w, (_, rows) in traces.items():
            stored = sorted(int(r["iteration"]) for r in rows)
            if stored != list(range(args.iterations)):
                fail(f"writer {w} traced iterations {stored}, expected 0..{args.iterations - 1}")
            for r in rows:
                if not r["ready"] <= r["begin"] <= r["end"]:
                    fail(f"writer {w}, iteration {int(r['iteration'])}: times out of order")
                if r["bytes"] <= 0:
                    fail(f"writer {w}, iteration {int(r['iteration'])}: no bytes")
        if args.writers and not args.master_file:
            check_writers(traces, args.writers)
        if args.bandwidth:
            check_bandwidth(traces, args.bandwidth)
        policies = args.policy.replace(",", " ").split()
        if "slots" in policies:
            if not args.overrun:
                check_slots(traces)
            check_writers(traces, 1)  # one writer per slot: never two at once
        if "self" in policies:
            if "schedule self, from iteration" not in output:
                fail("self did not say what it chose")
            if args.expect_self:
                if args.expect_self == "slots" and check_slots(traces, chosen=True) == 0:
                    # A slow machine (a sanitizer build): the stores took too much of the
                    # period for slots, and self must have said so.
                    if "no room for slots" not in output:
                        fail("self chose no slots and did not say why")
                    print("self: no slots (the stores take too much of the period), as it said")
                if args.expect_self == "phase":
                    check_phase(traces, out, group_of(args), require_wait=not args.nodes,
                                lag=args.phase_lag, min_inside=args.min_in_phase)
        if ("ordered" in policies or args.check_order) and not args.expect_not_applied:
            check_order(traces, args.order == "writer")
        if "phase" in policies and args.nodes and not args.expect_not_applied:
            check_pulls(out, writers, args.min_in_phase)
        if "phase" in policies and not args.expect_not_applied:
            check_phase(traces, out, group_of(args), require_wait=not args.nodes,
                        lag=args.phase_lag, min_inside=args.min_in_phase)
        check_values(out, clients, writers, args.iterations)
    expect_no_leaked_segments(shm_before)
    print("OK")


if __name__ == "__main__":
    main()
