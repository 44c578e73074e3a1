#!/usr/bin/env python3
"""Sets two runs of bench/run_micro.sh side by side (run_micro.sh --versus calls it).

usage: compare_micro.py BASELINE/micro.json NEW/micro.json [BASELINE2/micro.json NEW2/micro.json ...]
         > versus.md

With several pairs (separate side-by-side runs), each figure gets one column pair per run.

Works from the per-run lines ("raw") of both files, so that every figure is given as the median
over runs of the per-run value with its range (min-max over runs): the same medians as in each
micro.md, plus the spread a reader needs to judge a difference. Ratios (write/memcpy...) are
taken inside each run, then the median over runs. `new/base` divides the medians.
"""
import json
import statistics
import sys

MiB = 1 << 20


def load(path):
    with open(path) as f:
        return json.load(f)


def size(n):
    if n >= MiB:
        return f"{n >> 20} MiB"
    if n >= 1024:
        return f"{n >> 10} KiB"
    return f"{n} B"


def t(ns):
    if ns is None:
        return "-"
    if ns < 1000:
        return f"{ns:.0f} ns"
    if ns < 10_000:
        return f"{ns / 1e3:.2f} us"
    if ns < 10_000_000:
        return f"{ns / 1e3:.0f} us"
    return f"{ns / 1e6:.1f} ms"


def x(r):
    return "-" if r is None else f"{r:.2f}x"


def steady(key):
    return lambda r: r["steady"][key]["median"] if key in r["steady"] else None


def section(key, sub):
    return lambda r: r[sub][key]["median"] if sub in r and key in r[sub] else None


def ratio(num, den):
    def f(r):
        a, b = num(r), den(r)
        return a / b if a is not None and b else None
    return f


# (name, value of one run, formatter): the figures of each phase.
WRITE = [
    ("write, first", lambda r: r["first"]["write"], t),
    ("write, steady", steady("write"), t),
    ("memcpy warm, steady", steady("memcpy_warm"), t),
    ("write / memcpy warm, steady", ratio(steady("write"), steady("memcpy_warm")), x),
    ("write / memcpy same state, first",
     ratio(lambda r: r["first"]["write"], lambda r: r["first"].get("memcpy_prefaulted")), x),
    ("end_iteration, steady", steady("end_iteration"), t),
    ("write+end / memcpy warm, steady", ratio(steady("write_end"), steady("memcpy_warm")), x),
]
ALLOC = [
    ("alloc+commit+clear, calls only (200 us compute)", section("alloc_commit_clear", "calls"),
     t),
    ("alloc+commit+clear, after compute, block filled", section("alloc_commit_clear", "steady"),
     t),
    ("alloc+commit+clear, back to back, block filled", section("alloc_commit_clear", "hot"), t),
    ("end_iteration after alloc, after compute", section("end_iteration", "steady"), t),
]
SMALL = [
    ("write of one int (per call, median)", steady("write"), t),
    ("end_iteration after 100 writes", steady("end_iteration"), t),
]
EMPTY = [
    ("empty end_iteration (median)", steady("end_iteration"), t),
    ("empty end_iteration (p90)", lambda r: r["steady"]["end_iteration"]["p90"], t),
]
PHASES = {"write": WRITE, "alloc": ALLOC, "small": SMALL, "empty": EMPTY}
SETUPS = ("dedicated", "sync", "thread", "nodes", "hdf5", "thread-heap", "sync-heap",
          "nodes-heap")


def values(raw, setup, phase, nbytes, fn):
    out = []
    for r in raw:
        if r["label"] == setup and r["phase"] == phase and (nbytes is None or r["bytes"] == nbytes):
            v = fn(r)
            if v is not None:
                out.append(v)
    return out


def cell(vals, fmt):
    if not vals:
        return "-", "-"
    m = statistics.median(vals)
    rng = f"{fmt(min(vals))} - {fmt(max(vals))}" if len(vals) > 1 else "-"
    return fmt(m), rng


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        sys.exit(__doc__)
    pairs = [(load(args[i]), load(args[i + 1])) for i in range(0, len(args), 2)]
    out = []
    add = out.append
    base0, new0 = pairs[0]
    add(f"# Micro-benchmark side by side: {base0['meta']['commit']} (base) vs "
        f"{new0['meta']['commit']} (new)")
    add("")
    for k, (base, new) in enumerate(pairs, 1):
        bm, nm = base["meta"], new["meta"]
        tag = f"Run {k}: " if len(pairs) > 1 else ""
        add(f"- {tag}base commit {bm['commit']}, {bm['repetitions']} runs; new commit "
            f"{nm['commit']}, {nm['repetitions']} runs; command `{nm['command']}`; {nm['date']}")
        loads = ", ".join(f"{w} {v[0]:.2f}" for w, v in nm["load"].items())
        add(f"  - 1-min load average: {loads}")
        if nm.get("quick"):
            add("  - **Quick mode: harness check only.**")
    nm = new0["meta"]
    add(f"- Machine: nproc={nm['nproc']}, CPU \"{nm['cpu_model']}\", Linux {nm['kernel']}; "
        f"{nm['mpi']}; build type {nm['build_type']}")
    add("- Each cell: median over runs of the per-run value (a run's median over its steady "
        "iterations, or its first iteration) [range over runs]. `new/base` divides the "
        "medians.")
    add("")
    multi = len(pairs) > 1
    for phase, metrics in PHASES.items():
        rows = []
        for setup in SETUPS:
            sizes = sorted({r["bytes"] for base, new in pairs for r in new["raw"] + base["raw"]
                            if r["label"] == setup and r["phase"] == phase})
            for nbytes in sizes:
                for name, fn, fmt in metrics:
                    cells, changes, any_value = [], [], False
                    for base, new in pairs:
                        bv = values(base["raw"], setup, phase, nbytes, fn)
                        nv = values(new["raw"], setup, phase, nbytes, fn)
                        any_value = any_value or bool(bv or nv)
                        for vals in (bv, nv):
                            med, rng = cell(vals, fmt)
                            cells.append(f"{med} [{rng}]" if multi else f"{med} | {rng}")
                        changes.append(f"{statistics.median(nv) / statistics.median(bv):.2f}"
                                       if bv and nv and statistics.median(bv) else "-")
                    if not any_value:
                        continue
                    shown = size(nbytes) if phase in ("write", "alloc") else "-"
                    rows.append(f"| {setup} | {shown} | {name} | {' | '.join(cells)} | "
                                f"{', '.join(changes)} |")
        if not rows:
            continue
        add(f"## Phase {phase}")
        add("")
        if multi:
            heads = " | ".join(f"run {k} base | run {k} new" for k in range(1, len(pairs) + 1))
            add(f"| setup | size | figure | {heads} | new/base (per run) |")
            add("|---|---|---|" + "---|" * (2 * len(pairs)) + "---|")
        else:
            add("| setup | size | figure | base | base range | new | new range | new/base |")
            add("|---|---|---|---|---|---|---|---|")
        out.extend(rows)
        add("")
    print("\n".join(out))


if __name__ == "__main__":
    main()
