#!/usr/bin/env python3
"""The scaling benchmark: grows one dimension at a time and measures what every item costs.

Dimensions, each swept around a base point with the others held (bench/scale/README.md):
blocks per client, clients per writer, writers (virtual nodes of SIDECORE_RANKS_PER_NODE ranks,
one dedicated core each), variables, iterations. Each point runs bench/scale/scale_write.c in
mode dedicated cores, HDF5 FilePerCore, twice: with the master file and the XDMF (the
defaults) and without them (VirtualView and XDMF false); the order of the two alternates,
and the order of the points is reversed at every second repetition.

Per run: the client's time in the write calls per block (client 0 and the slowest client),
damaris_end_iteration, start-up (initialize + start, slowest client), stop + finalize; per
writer, from the run report (docs/observability.md), the time its stores took per iteration
divided by its blocks; writer 0's extra time per iteration with the master file and XDMF on
(median of its store time per iteration, views on minus views off); the sizes of the last
iteration's master file and per-core files and of the XDMF file; the time to open that
iteration with h5py (the master file) and with the read API (sidecore.read_output), each in a
fresh process (read_back.py), and `sidecore inspect` on the run. Every run is read back: every
value of every variable with the C read API (sampled to at most 200,000 per variable), every
value of v0 again with h5py and with the Python read API.

Writes <out>/scale.json (every run, and min/median/max per point), scale.csv, scale.md and
one log-log plot per dimension (scale_<dimension>.png).

Usage: run_scale.py --build DIR [--quick] [--reps N] [--only DIM,...] [--out DIR]
                    [--workdir DIR] [--python PY]
       run_scale.py --check DIR     (what the ctest bench.scale checks of a quick run)
       run_scale.py --replot DIR    (the plots again from DIR/scale.json)
--out defaults to bench/results/scale; --quick (a few seconds: two small points per
dimension, one repetition) requires --out, so that it never replaces the committed results.
Environment: MPIRUN (mpirun), MPIRUN_FLAGS (--oversubscribe). Needs numpy and h5py; matplotlib
for the plots (left out with a note when missing).
"""
import argparse
import csv
import datetime
import json
import math
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
RESULTS = os.path.join(SOURCE, "bench", "results", "scale")

# Eight doubles per block: small enough that the copy is a small part of a block's cost, so the
# per-block costs are Sidecore's, not memcpy's.
ELEMENTS = 8
BASE = {"blocks": 1000, "clients": 1, "writers": 1, "variables": 1, "iterations": 6}
# dimension -> (sizes, what the base point changes for this sweep)
FULL = {
    "blocks": ([10, 100, 1000, 10000, 100000], {}),
    "clients": ([1, 2, 4, 8], {}),
    "writers": ([1, 2, 4, 8], {}),
    "variables": ([1, 4, 16, 64, 256], {"blocks": 100}),
    "iterations": ([4, 16, 64, 256], {"blocks": 100}),
}
QUICK = {
    "blocks": ([10, 100], {}),
    "clients": ([1, 2], {}),
    "writers": ([1, 2], {}),
    "variables": ([1, 3], {}),
    "iterations": ([3, 5], {}),
}
QUICK_BASE = {"blocks": 50, "clients": 1, "writers": 1, "variables": 1, "iterations": 3}
DIMENSIONS = list(FULL)
# What a plot and the table show per dimension: (key, label, kind). "per item" costs should be
# flat; "total" costs are expected to grow at most linearly with the dimension.
METRICS = [
    ("client_block_us", "client: write calls per block (µs, slowest client)", "per item"),
    ("end_iteration_us", "client: damaris_end_iteration (µs)", "total"),
    ("writer_block_us", "writer: store time per block (µs, median writer)", "per item"),
    ("writer0_store_ms", "writer 0: store time per iteration (ms)", "total"),
    ("views_ms", "writer 0: master file + XDMF per iteration (ms)", "total"),
    ("master_bytes", "master file (bytes)", "total"),
    ("xdmf_bytes", "XDMF file (bytes)", "total"),
    ("report_bytes", "run report (bytes)", "total"),
    ("h5py_open_ms", "open with h5py (ms)", "total"),
    ("h5py_read_ms", "read v0 whole with h5py (ms)", "total"),
    ("api_open_ms", "open with the read API (ms)", "total"),
    ("api_read_ms", "read v0 whole with the read API (ms)", "total"),
    ("inspect_ms", "sidecore inspect (ms)", "total"),
    ("startup_ms", "start-up: initialize + start (ms, slowest client)", "total"),
    ("finalize_ms", "stop + finalize (ms, client 0)", "total"),
]


def log(*args):
    print("run_scale.py:", *args, file=sys.stderr, flush=True)


def configuration(point, views, out_dir):
    """The XML of one run: `variables` variables of one 1-D layout of ELEMENTS doubles per
    block, global extents covering every client's blocks."""
    total = point["writers"] * point["clients"] * point["blocks"] * ELEMENTS
    per_iteration = point["clients"] * point["variables"] * point["blocks"] * ELEMENTS * 8
    # Room for a few iterations of the node's clients (the writer stores each iteration long
    # before the clients are that far ahead), never less than 64 MiB.
    buffer = max(64 << 20, 4 * per_iteration + (16 << 20))
    variables = "\n".join(f'    <variable name="v{v}" layout="piece" store="out"/>'
                          for v in range(point["variables"]))
    flag = "true" if views else "false"
    return f"""<?xml version="1.0"?>
<!-- bench/scale/run_scale.py: one point of the scaling benchmark. -->
<simulation name="scale" language="c" xmlns="http://damaris.gforge.inria.fr/damaris/model">
  <architecture>
    <domains count="1"/>
    <dedicated cores="1" nodes="0"/>
    <buffer name="buffer" size="{buffer}" policy="wait" timeout="300"/>
  </architecture>
  <data>
    <parameter name="E" type="long" value="{ELEMENTS}"/>
    <parameter name="G" type="long" value="{total}"/>
    <layout name="piece" type="double" dimensions="E" global="G"/>
{variables}
  </data>
  <storage>
    <store name="out" type="HDF5">
      <option key="FileMode">FilePerCore</option>
      <option key="FilesPath">{out_dir}/</option>
      <option key="VirtualView">{flag}</option>
      <option key="XDMF">{flag}</option>
    </store>
  </storage>
</simulation>
"""


def parse_line(text, prefix):
    for line in text.splitlines():
        if line.startswith(prefix + " "):
            return {k: float(v) for k, v in (kv.split("=", 1) for kv in line.split()[1:])}
    return None


def median_of_iterations(writer):
    """Median over the iterations after the first of (stored - store_begin), and of that
    divided by the iteration's blocks."""
    it = writer["iterations"]
    times = [s - b for s, b in zip(it["stored"], it["store_begin"])][1:]
    per_block = [t / n for t, n in zip(times, it["blocks"][1:]) if n > 0]
    return statistics.median(times), statistics.median(per_block)


def run(cmd, env=None, timeout=600):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    took = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p.stdout, took


def run_point(args, point, views, work):
    """One run of one point; returns what it measured. Raises when a check fails."""
    run_dir = os.path.join(work, "run")
    shutil.rmtree(run_dir, ignore_errors=True)
    out_dir = os.path.join(run_dir, "out")
    os.makedirs(out_dir)
    xml = os.path.join(run_dir, "scale.xml")
    with open(xml, "w") as f:
        f.write(configuration(point, views, out_dir))
    report = os.path.join(run_dir, "report.json")
    ranks_per_node = point["clients"] + 1
    env = dict(os.environ, SIDECORE_RANKS_PER_NODE=str(ranks_per_node),
               SIDECORE_REPORT=report)
    program = os.path.join(args.build, "bench", "sidecore_scale_write")
    mpirun = [os.environ.get("MPIRUN", "mpirun")] + shlex.split(
        os.environ.get("MPIRUN_FLAGS", "--oversubscribe"))
    cmd = mpirun + ["-np", str(point["writers"] * ranks_per_node), program, "write", xml,
                    str(point["iterations"]), str(point["variables"]), str(point["blocks"]),
                    str(ELEMENTS)]
    stdout, wall = run(cmd, env=env)
    line = parse_line(stdout, "scale")
    if line is None:
        raise RuntimeError(f"no result line from {shlex.join(cmd)}:\n{stdout}")
    items = point["variables"] * point["blocks"]
    r = {
        "views": views,
        "wall_s": wall,
        "client0_block_us": line["write_us"] / items,
        "client_block_us": line["write_max_us"] / items,
        "end_iteration_us": line["end_us"],
        "startup_ms": 1e3 * line["startup_max_s"],
        "finalize_ms": 1e3 * line["finalize_s"],
        "sync_ms": 1e3 * line["sync_s"],
    }
    r["report_bytes"] = os.path.getsize(report)
    with open(report) as f:
        rep = json.load(f)
    writers = rep["writers"]
    if len(writers) != point["writers"] or rep["client_count"] != point["writers"] * point[
            "clients"]:
        raise RuntimeError(f"the report lists {len(writers)} writers and {rep['client_count']} "
                           f"clients, the run has {point['writers']} and "
                           f"{point['writers'] * point['clients']}")
    store_ms, block_us = zip(*(median_of_iterations(w) for w in writers))
    r["writer0_store_ms"] = 1e3 * store_ms[0]
    r["writer_block_us"] = 1e6 * statistics.median(block_us)
    r["writer_block_max_us"] = 1e6 * max(block_us)
    blocks_per_writer = point["clients"] * items * point["iterations"]
    for w in writers:
        if w["blocks_received"] != blocks_per_writer or w["iterations_stored"] != point[
                "iterations"]:
            raise RuntimeError(f"writer {w['index']} received {w['blocks_received']} blocks, "
                               f"{w['iterations_stored']} iterations; sent {blocks_per_writer}")

    last = point["iterations"] - 1
    master = os.path.join(out_dir, f"scale_It{last}.h5")
    xdmf = os.path.join(out_dir, "scale.xmf")
    r["percore_bytes"] = sum(os.path.getsize(os.path.join(out_dir, f"scale_It{last}_Pr{w}.h5"))
                             for w in range(point["writers"]))
    count = point["writers"] * point["clients"] * point["blocks"] * ELEMENTS
    prefix = os.path.join(out_dir, "scale")
    # The C read API, every variable: every value up to 200,000 per variable, else a sample.
    stride = max(1, count // 200000)
    checked, _ = run([program, "check", prefix, str(last), str(point["variables"]), str(count),
                      str(stride)])
    r["checked_c"] = int(checked.split("values=")[1].split(":")[0])
    reader_env = dict(os.environ, PYTHONPATH=os.path.join(args.build, "python"))
    back = os.path.join(HERE, "read_back.py")
    api, _ = run([args.python, back, "api", prefix, str(point["variables"]), str(last),
                  str(count)], env=reader_env)
    api = json.loads(api)
    if api["blocks_v0"] != point["writers"] * point["clients"] * point["blocks"]:
        raise RuntimeError(f"the read API lists {api['blocks_v0']} blocks of v0")
    r["api_open_ms"] = 1e3 * api["open_s"]
    r["api_read_ms"] = 1e3 * api["read_v0_s"]
    r["checked_api"] = api["checked"]
    if views:
        r["master_bytes"] = os.path.getsize(master)
        r["xdmf_bytes"] = os.path.getsize(xdmf)
        h5, _ = run([args.python, back, "h5py", master, str(point["variables"]), str(last),
                     str(count)], env=reader_env)
        h5 = json.loads(h5)
        r["h5py_open_ms"] = 1e3 * h5["open_s"]
        r["h5py_read_ms"] = 1e3 * h5["read_v0_s"]
        r["checked_h5py"] = h5["checked"]
        cli = os.path.join(args.build, "tools", "cli", "sidecore")
        _, took = run([cli, "inspect", "--iteration", str(last), prefix])
        r["inspect_ms"] = 1e3 * took
    else:
        if os.path.exists(master) or os.path.exists(xdmf):
            raise RuntimeError("VirtualView and XDMF false, yet a master file or XDMF is there")
    shutil.rmtree(run_dir, ignore_errors=True)
    return r


def points_of(plan, base):
    """(dimension, size, point) for every sweep; the same point appears once per sweep."""
    for dim, (sizes, change) in plan.items():
        for size in sizes:
            point = dict(base, **change)
            point[dim] = size
            yield dim, size, point


def key_of(point):
    return tuple(point[k] for k in DIMENSIONS)


def spread(values):
    v = sorted(values)
    return {"min": v[0], "median": statistics.median(v), "max": v[-1], "n": len(v)}


def summarise(sweeps, runs):
    """Per (dimension, size): min/median/max over repetitions of each metric. The master file
    + XDMF time is paired: writer 0's store time with views minus without, within each
    repetition."""
    table = []
    for dim, size, point in sweeps:
        mine = runs[key_of(point)]
        row = {"dimension": dim, "size": size, "point": point, "metrics": {}}
        on = [r for r in mine if r["views"]]
        off = [r for r in mine if not r["views"]]
        for key, _, _ in METRICS:
            if key == "views_ms":
                values = [a["writer0_store_ms"] - b["writer0_store_ms"]
                          for a, b in zip(on, off)]
            else:
                values = [r[key] for r in on if key in r]
            if values:
                row["metrics"][key] = spread(values)
        row["metrics"]["writer_block_us_no_views"] = spread(
            [r["writer_block_us"] for r in off])
        row["metrics"]["client_block_us_no_views"] = spread(
            [r["client_block_us"] for r in off])
        table.append(row)
    return table


def slope(xs, ys):
    """Least-squares exponent of y = a x^k over the points with y > 0 (None if fewer than 2)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    den = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / den if den else None


def exponents(table):
    """dimension -> metric -> fitted exponent of the median against the size."""
    out = {}
    for dim in DIMENSIONS:
        rows = [r for r in table if r["dimension"] == dim]
        out[dim] = {}
        for key, _, _ in METRICS:
            xs = [r["size"] for r in rows if key in r["metrics"]]
            ys = [r["metrics"][key]["median"] for r in rows if key in r["metrics"]]
            k = slope(xs, ys)
            if k is not None:
                out[dim][key] = k
    return out


def fmt(s):
    if s is None:
        return "–"
    def one(x):
        return f"{x:.3g}" if abs(x) < 1e4 else f"{x:.0f}"
    if s["n"] == 1 or s["min"] == s["max"]:
        return one(s["median"])
    return f"{one(s['min'])} / **{one(s['median'])}** / {one(s['max'])}"


def write_markdown(path, meta, table, slopes):
    lines = [
        "# Scaling: what every item costs as one dimension grows",
        "",
        "`bench/scale/run_scale.py`" + (" --quick" if meta["quick"] else "") +
        f": {meta['reps']} repetition(s), run {meta['date']} on {meta['machine']}. "
        f"Load before: `{meta['load_before']}`; after: `{meta['load_after']}`. "
        f"Total {meta['seconds']:.0f} s.",
        "",
        "Mode dedicated cores (one per virtual node of clients + 1 ranks, "
        "`SIDECORE_RANKS_PER_NODE`), HDF5 FilePerCore, "
        f"{ELEMENTS} doubles per block, every process on the same 2 cores (oversubscribed beyond "
        "2 ranks: times then include waiting for a core). Each cell: min / **median** / max "
        "over repetitions (one value when there was one). Every run was read back and checked "
        "(C read API on every variable, h5py and the Python read API on v0, every value).",
        "",
        "Base point: " + ", ".join(f"{k} {v}" for k, v in meta["base"].items()) +
        "".join(f"; the {d} sweep with {change}" for d, change in meta["changes"].items())
        + ".",
        "",
    ]
    for dim in DIMENSIONS:
        rows = [r for r in table if r["dimension"] == dim]
        if not rows:
            continue
        lines += [f"## {dim}", "", f"![{dim}](scale_{dim}.png)", "",
                  "| metric | " + " | ".join(str(r["size"]) for r in rows) + " | exponent |",
                  "|---|" + "---|" * (len(rows) + 1)]
        for key, label, kind in METRICS:
            if not any(key in r["metrics"] for r in rows):
                continue
            k = slopes[dim].get(key)
            lines.append(f"| {label} | " + " | ".join(fmt(r["metrics"].get(key)) for r in rows)
                         + f" | {'–' if k is None else f'{k:+.2f}'} |")
        lines.append("")
    lines += [
        "Exponent: the least-squares slope of log(median) against log(size). A flat per-item "
        "cost has exponent 0; a total that grows with the data has exponent 1 at most.",
        "",
    ]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def write_csv(path, table):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["dimension", "size", "metric", "min", "median", "max", "n"] + DIMENSIONS)
        for r in table:
            for key, s in r["metrics"].items():
                w.writerow([r["dimension"], r["size"], key, s["min"], s["median"], s["max"],
                            s["n"]] + [r["point"][k] for k in DIMENSIONS])


def plot(out, table):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing: no plots")
        return []
    written = []
    groups = [
        ("per-item cost (µs)", ["client_block_us", "writer_block_us"]),
        ("per iteration (ms, µs)", ["writer0_store_ms", "views_ms", "end_iteration_us"]),
        ("files (bytes)", ["master_bytes", "xdmf_bytes", "report_bytes"]),
        ("reading (ms)", ["h5py_open_ms", "h5py_read_ms", "api_open_ms", "api_read_ms",
                          "inspect_ms"]),
        ("start-up and finalize (ms)", ["startup_ms", "finalize_ms"]),
    ]
    labels = {k: label for k, label, _ in METRICS}
    for dim in DIMENSIONS:
        rows = [r for r in table if r["dimension"] == dim]
        if not rows:
            continue
        fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.8))
        for ax, (title, keys) in zip(axes, groups):
            for key in keys:
                pts = [(r["size"], r["metrics"][key]) for r in rows if key in r["metrics"]
                       and r["metrics"][key]["median"] > 0]
                if not pts:
                    continue
                xs = [p[0] for p in pts]
                med = [p[1]["median"] for p in pts]
                # A paired difference can be negative (noise): its bar stops a decade down.
                lo = [p[1]["median"] - max(p[1]["min"], p[1]["median"] / 10) for p in pts]
                hi = [p[1]["max"] - p[1]["median"] for p in pts]
                ax.errorbar(xs, med, yerr=[lo, hi], marker="o", capsize=3, label=labels[key])
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(title, fontsize=9)
            ax.set_xlabel(dim)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=6)
        fig.suptitle(f"Sidecore cost as {dim} grow (median, min-max bars)", fontsize=10)
        fig.tight_layout()
        name = os.path.join(out, f"scale_{dim}.png")
        fig.savefig(name, dpi=90)
        plt.close(fig)
        written.append(name)
    return written


def check_output(out):
    """The checks of the ctest bench.scale: every file there, every run read back."""
    with open(os.path.join(out, "scale.json")) as f:
        d = json.load(f)
    problems = []
    dims = {r["dimension"] for r in d["table"]}
    if dims != set(DIMENSIONS):
        problems.append(f"dimensions {sorted(dims)}")
    for r in d["table"]:
        for key in ("client_block_us", "writer_block_us", "master_bytes", "h5py_open_ms",
                    "api_open_ms", "inspect_ms", "startup_ms", "finalize_ms", "views_ms"):
            if key not in r["metrics"]:
                problems.append(f"{r['dimension']}={r['size']}: no {key}")
    for runs in d["runs"].values():
        for r in runs:
            if r["checked_c"] <= 0 or r["checked_api"] <= 0 or (r["views"] and
                                                                 r["checked_h5py"] <= 0):
                problems.append(f"a run was not read back: {r}")
    for name in ["scale.md", "scale.csv"] + (
            [f"scale_{dim}.png" for dim in DIMENSIONS] if d["plots"] else []):
        if not os.path.getsize(os.path.join(out, name)):
            problems.append(f"{name} is empty")
    if problems:
        sys.exit("run_scale.py --check: " + "; ".join(problems))
    print(f"run_scale.py --check: {len(d['table'])} points, "
          f"{sum(len(v) for v in d['runs'].values())} runs, all read back")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int)
    ap.add_argument("--only", help="comma-separated dimensions")
    ap.add_argument("--out")
    ap.add_argument("--workdir")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--check", metavar="DIR")
    ap.add_argument("--replot", metavar="DIR", help="redraw the plots from DIR/scale.json")
    args = ap.parse_args()
    if args.check:
        check_output(args.check)
        return
    if args.replot:
        with open(os.path.join(args.replot, "scale.json")) as f:
            plot(args.replot, json.load(f)["table"])
        return
    if not args.build:
        ap.error("--build is required")
    args.build = os.path.abspath(args.build)
    if args.quick and not args.out:
        ap.error("--quick needs --out: a quick run never replaces the committed results")
    out = os.path.abspath(args.out or RESULTS)
    os.makedirs(out, exist_ok=True)
    if os.geteuid() == 0:
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    plan, base = (QUICK, QUICK_BASE) if args.quick else (FULL, BASE)
    if args.only:
        plan = {d: plan[d] for d in args.only.split(",")}
    reps = args.reps or (1 if args.quick else 5)
    sweeps = list(points_of(plan, base))
    unique = list({key_of(p): p for _, _, p in sweeps}.values())
    work = args.workdir or tempfile.mkdtemp(prefix="sidecore-scale-")
    os.makedirs(work, exist_ok=True)
    load_before = " ".join(open("/proc/loadavg").read().split()[:3])
    started = time.perf_counter()
    runs = {key_of(p): [] for p in unique}
    for rep in range(reps):
        order = unique if rep % 2 == 0 else unique[::-1]
        for i, point in enumerate(order):
            # With and without the master file and XDMF, in alternating order.
            for views in ((True, False) if (rep + i) % 2 == 0 else (False, True)):
                log(f"rep {rep + 1}/{reps} point {i + 1}/{len(order)} {point} views={views}")
                runs[key_of(point)].append(run_point(args, point, views, work))
    seconds = time.perf_counter() - started
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    table = summarise(sweeps, runs)
    slopes = exponents(table)
    meta = {
        "quick": args.quick, "reps": reps, "date": datetime.datetime.now().isoformat(
            timespec="seconds"),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}",
        "load_before": load_before,
        "load_after": " ".join(open("/proc/loadavg").read().split()[:3]),
        "seconds": seconds, "elements_per_block": ELEMENTS, "base": base,
        "changes": {d: ", ".join(f"{k} {v}" for k, v in c.items())
                    for d, (_, c) in plan.items() if c},
    }
    plots = plot(out, table)
    with open(os.path.join(out, "scale.json"), "w") as f:
        json.dump({"meta": meta, "table": table, "exponents": slopes, "plots": bool(plots),
                   "runs": {",".join(map(str, k)): v for k, v in runs.items()},
                   "run_keys": DIMENSIONS}, f, indent=1)
    write_csv(os.path.join(out, "scale.csv"), table)
    write_markdown(os.path.join(out, "scale.md"), meta, table, slopes)
    log(f"{sum(len(v) for v in runs.values())} runs in {seconds:.0f} s; wrote {out}")


if __name__ == "__main__":
    main()
