#!/usr/bin/env python3
"""The scaling benchmark: grows one dimension at a time and measures what every item costs.

Dimensions, each swept around a base point with the others held (bench/scale/README.md):
blocks per client, clients per writer, writers (virtual nodes of SIDECORE_RANKS_PER_NODE ranks,
one dedicated core each), writers again on emulated hosts (sweep writers_hosts: one host per
node, scripts/lib/hosts.sh, SIDECORE_RANKS_PER_NODE unset so that Sidecore finds the nodes from
the host names), variables, iterations. Each point runs bench/scale/scale_write.c in
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
one log-log plot per dimension (scale_<dimension>.png; the writers plot carries both writers
sweeps, the hosts' dashed).

Usage: run_scale.py --build DIR [--quick] [--reps N] [--only SWEEP,...] [--merge] [--out DIR]
                    [--workdir DIR] [--python PY]
       run_scale.py --check DIR     (what the ctest bench.scale checks of a quick run)
       run_scale.py --replot DIR    (the plots again from DIR/scale.json)
--out defaults to bench/results/scale; --quick (under a minute: two small points per
dimension, one on 2 hosts, one repetition) requires --out, so that it never replaces the committed results.
--merge (with --only) keeps the other sweeps of <out>/scale.json as they were and replaces the
ones run now, e.g. --only writers,writers_hosts --merge.
The writers_hosts sweep needs root, unshare and nsenter (scripts/lib/hosts.sh); without them the
script says so and exits 77 before running anything (the ctest shows it skipped): --only
without writers_hosts leaves it out. Its runs work in --workdir when that is outside /tmp and
/dev/shm (private to each host), else in a directory under /var/tmp.
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
# sweep -> (sizes, what the base point changes for this sweep). A sweep grows the point's
# parameter of its name, except those of GROWS.
FULL = {
    "blocks": ([10, 100, 1000, 10000, 100000], {}),
    "clients": ([1, 2, 4, 8], {}),
    "writers": ([1, 2, 4, 8], {}),
    "writers_hosts": ([1, 2, 4], {}),
    "variables": ([1, 4, 16, 64, 256], {"blocks": 100}),
    "iterations": ([4, 16, 64, 256], {"blocks": 100}),
}
QUICK = {
    "blocks": ([10, 100], {}),
    "clients": ([1, 2], {}),
    "writers": ([1, 2], {}),
    "writers_hosts": ([2], {}),
    "variables": ([1, 3], {}),
    "iterations": ([3, 5], {}),
}
QUICK_BASE = {"blocks": 50, "clients": 1, "writers": 1, "variables": 1, "iterations": 3}
# The parameters of a point; a run's key adds "hosts" (1: one emulated host per node, 0: virtual
# nodes on this machine).
DIMENSIONS = list(BASE)
RUN_KEYS = DIMENSIONS + ["hosts"]
SWEEPS = list(FULL)
GROWS = {"writers_hosts": "writers"}
# Sweeps run across emulated hosts, and the sweep whose plot also shows them.
HOSTED = {"writers_hosts"}
PLOTTED_WITH = {"writers_hosts": "writers"}
HOSTS_LIB = os.path.join(SOURCE, "scripts", "lib", "hosts.sh")
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


class Hosts:
    """Emulated hosts for the hosted sweeps (scripts/lib/hosts.sh, sourced by bash for each
    call), started once for the whole benchmark. Their keepers exit when this process does
    (HOSTS_OWNER_PID), so that an interrupted run leaves no namespace behind."""

    def __init__(self, count, work, build):
        done = subprocess.run(
            ["bash", "-c", '. "$0" && hosts_available || exit 77; HOSTS_OWNER_PID=$1 '
             'HOSTS_PREFIX=sc-scale hosts_start "$2" && echo "$HOSTS_DIR"', HOSTS_LIB,
             str(os.getpid()), str(count)], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"cannot start {count} emulated hosts: {done.stderr.strip()}")
        self.dir = done.stdout.strip().splitlines()[-1]
        self.work = work
        with open(os.path.join(self.dir, "names")) as f:
            self.names = f.read().split()
        # The program and the library where every host sees them: a build tree under /tmp
        # would not be (each host's /tmp is its own). LD_LIBRARY_PATH comes before the
        # program's RUNPATH.
        self.bin = os.path.join(work, "bin")
        os.makedirs(self.bin, exist_ok=True)
        self.program = os.path.join(self.bin, "sidecore_scale_write")
        shutil.copy2(os.path.join(build, "bench", "sidecore_scale_write"), self.program)
        for name in os.listdir(build):
            if name.startswith("libsidecore.so"):
                dst = os.path.join(self.bin, name)
                if os.path.lexists(dst):
                    os.remove(dst)
                src = os.path.join(build, name)
                if os.path.islink(src):
                    os.symlink(os.readlink(src), dst)
                else:
                    shutil.copy2(src, dst)
        log(f"started {len(self.names)} emulated hosts: {' '.join(self.names)} ({self.dir})")

    def mpirun_command(self, count, slots, flags, args):
        """mpirun across the first `count` hosts, `slots` ranks on each (filled in rank order:
        ranks 0..slots-1 on the first host, ...)."""
        hosts = ",".join(f"{h}:{slots}" for h in self.names[:count])
        return ["bash", "-c", '. "$0" && hosts_mpirun "$@"', HOSTS_LIB] + flags + [
            "-x", "SIDECORE_REPORT", "-x", "LD_LIBRARY_PATH", "-H", hosts,
            "-np", str(count * slots)] + args

    def stop(self):
        if self.dir:
            subprocess.run(["bash", "-c", '. "$0" && hosts_stop', HOSTS_LIB],
                           env=dict(os.environ, HOSTS_DIR=self.dir), capture_output=True)
            self.dir = None


def hosts_available():
    return subprocess.run(["bash", "-c", '. "$0" && hosts_available', HOSTS_LIB],
                          capture_output=True).returncode == 0


def outside_host_private(path):
    """True when `path` is seen alike from every emulated host (not under /tmp or /dev/shm)."""
    real = os.path.realpath(path)
    return not any(real == d or real.startswith(d + "/") for d in ("/tmp", "/dev/shm"))


def run_point(args, point, views, work, hosts=None):
    """One run of one point (across emulated hosts when point["hosts"]); returns what it
    measured. Raises when a check fails."""
    hosted = bool(point.get("hosts"))
    run_dir = os.path.join(hosts.work if hosted else work, "run")
    shutil.rmtree(run_dir, ignore_errors=True)
    out_dir = os.path.join(run_dir, "out")
    os.makedirs(out_dir)
    xml = os.path.join(run_dir, "scale.xml")
    with open(xml, "w") as f:
        f.write(configuration(point, views, out_dir))
    report = os.path.join(run_dir, "report.json")
    ranks_per_node = point["clients"] + 1
    program = os.path.join(args.build, "bench", "sidecore_scale_write")
    mpirun = os.environ.get("MPIRUN", "mpirun")
    flags = shlex.split(os.environ.get("MPIRUN_FLAGS", "--oversubscribe"))
    write_args = ["write", xml, str(point["iterations"]), str(point["variables"]),
                  str(point["blocks"]), str(ELEMENTS)]
    if hosted:
        # One host per node: Sidecore finds the nodes from the host names, as on a cluster.
        env = dict(os.environ, SIDECORE_REPORT=report, HOSTS_DIR=hosts.dir,
                   HOSTS_MPIRUN=mpirun, LD_LIBRARY_PATH=hosts.bin)
        env.pop("SIDECORE_RANKS_PER_NODE", None)
        cmd = hosts.mpirun_command(point["writers"], ranks_per_node, flags,
                                   [hosts.program] + write_args)
    else:
        env = dict(os.environ, SIDECORE_RANKS_PER_NODE=str(ranks_per_node),
                   SIDECORE_REPORT=report)
        cmd = [mpirun] + flags + ["-np", str(point["writers"] * ranks_per_node), program] + \
            write_args
    stdout, wall = run(cmd, env=env)
    line = parse_line(stdout, "scale")
    if line is None:
        raise RuntimeError(f"no result line from {shlex.join(cmd)}:\n{stdout}")
    items = point["variables"] * point["blocks"]
    r = {
        "views": views,
        "hosts": point["writers"] if hosted else 0,
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
    # One node per host (or virtual node): each writer serves the clients of its own node,
    # the ranks mpirun placed beside it.
    for w in writers:
        node = w["rank"] // ranks_per_node
        mates = {c["index"] for c in rep["clients"]
                 if c["rank"] // ranks_per_node == node}
        if w["kind"] != "dedicated core" or set(w["clients"]) != mates or len(
                mates) != point["clients"]:
            raise RuntimeError(f"writer {w['index']} (rank {w['rank']}, {w['kind']}) serves "
                               f"clients {w['clients']}, not its node's {sorted(mates)}")
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
    """(sweep, size, point) for every sweep; the same point appears once per sweep."""
    for dim, (sizes, change) in plan.items():
        for size in sizes:
            point = dict(base, **change)
            point[GROWS.get(dim, dim)] = size
            if dim in HOSTED:
                point["hosts"] = 1
            yield dim, size, point


def key_of(point):
    return tuple(point.get(k, 0) for k in RUN_KEYS)


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
    for dim in SWEEPS:
        rows = [r for r in table if r["dimension"] == dim]
        if not rows:
            continue
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


def findings_of(path):
    """The hand-written findings at the end of an existing scale.md (from "## Findings" on),
    kept when the tables above them are written again."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return ""
    at = text.find("\n## Findings")
    return text[at + 1:] if at >= 0 else ""


def write_markdown(path, meta, table, slopes):
    findings = findings_of(path)
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
        "The writers_hosts sweep runs the writers points on emulated hosts "
        "(`scripts/lib/hosts.sh`: one host per node, each with its own host name, /dev/shm and "
        "IPC namespace; `SIDECORE_RANKS_PER_NODE` unset, every run's report checked for one "
        "writer serving the clients of its own host): Open MPI over TCP on the loopback "
        "interface between hosts, one-sided communication over point-to-point (`osc pt2pt`), "
        "ranks yielding the cores when idle; the same 2 cores.",
        "",
        "Base point: " + ", ".join(f"{k} {v}" for k, v in meta["base"].items()) +
        "".join(f"; the {d} sweep with {change}" for d, change in meta["changes"].items())
        + ".",
        "",
    ]
    merged = {d: m for m in meta.get("merged", []) for d in m["sweeps"]}
    if merged:
        lines[4:4] = [
            "Sweeps run again later, merged into these results (`--only ... --merge`): " +
            "; ".join(f"{', '.join(m['sweeps'])} on {m['date']}" for m in meta["merged"]) +
            ". Their sections say how.", ""]
    for dim in SWEEPS:
        rows = [r for r in table if r["dimension"] == dim]
        if not rows:
            continue
        image = PLOTTED_WITH.get(dim, dim)
        lines += [f"## {dim}", ""]
        if dim in merged:
            m = merged[dim]
            lines += [f"Run {m['date']}, {m['reps']} repetition(s) of the sweeps "
                      f"{', '.join(m['sweeps'])}, their points alternated. Load before: "
                      f"`{m['load_before']}`; after: `{m['load_after']}`. "
                      f"Total {m['seconds']:.0f} s.", ""]
        lines += [f"![{image}](scale_{image}.png)", "",
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
        f.write("\n".join(lines) + ("\n" + findings if findings else ""))


def write_csv(path, table):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["dimension", "size", "metric", "min", "median", "max", "n"] + RUN_KEYS)
        for r in table:
            for key, s in r["metrics"].items():
                w.writerow([r["dimension"], r["size"], key, s["min"], s["median"], s["max"],
                            s["n"]] + [r["point"].get(k, 0) for k in RUN_KEYS])


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
    colours = [f"C{i}" for i in range(10)]
    for dim in SWEEPS:
        if dim in PLOTTED_WITH:
            continue
        # A sweep's plot also carries the sweeps drawn with it (the writers on hosts, dashed).
        series = [(dim, "-", "o", "")] + [(other, "--", "s", " (hosts)")
                                          for other, into in PLOTTED_WITH.items() if into == dim]
        series = [(d, style, marker, tag) for d, style, marker, tag in series
                  if any(r["dimension"] == d for r in table)]
        if not series:
            continue
        if len(series) > 1:
            series[0] = series[0][:3] + (" (virtual nodes)",)
        fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.8))
        for ax, (title, keys) in zip(axes, groups):
            for colour, key in zip(colours, keys):
                for d, style, marker, tag in series:
                    rows = [r for r in table if r["dimension"] == d]
                    pts = [(r["size"], r["metrics"][key]) for r in rows if key in r["metrics"]
                           and r["metrics"][key]["median"] > 0]
                    if not pts:
                        continue
                    xs = [p[0] for p in pts]
                    med = [p[1]["median"] for p in pts]
                    # A paired difference can be negative (noise): its bar stops a decade down.
                    lo = [p[1]["median"] - max(p[1]["min"], p[1]["median"] / 10) for p in pts]
                    hi = [p[1]["max"] - p[1]["median"] for p in pts]
                    ax.errorbar(xs, med, yerr=[lo, hi], marker=marker, linestyle=style,
                                color=colour, capsize=3, label=labels[key] + tag)
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
    if dims != set(SWEEPS):
        problems.append(f"dimensions {sorted(dims)}")
    for r in d["table"]:
        for key in ("client_block_us", "writer_block_us", "master_bytes", "h5py_open_ms",
                    "api_open_ms", "inspect_ms", "startup_ms", "finalize_ms", "views_ms"):
            if key not in r["metrics"]:
                problems.append(f"{r['dimension']}={r['size']}: no {key}")
    keys = d.get("run_keys", DIMENSIONS)
    for k, runs in d["runs"].items():
        if "hosts" in keys and int(k.split(",")[keys.index("hosts")]) and not all(
                r.get("hosts") for r in runs):
            problems.append(f"the runs of {k} were not on emulated hosts")
        for r in runs:
            if r["checked_c"] <= 0 or r["checked_api"] <= 0 or (r["views"] and
                                                                 r["checked_h5py"] <= 0):
                problems.append(f"a run was not read back: {r}")
    for name in ["scale.md", "scale.csv"] + (
            [f"scale_{dim}.png" for dim in SWEEPS if dim not in PLOTTED_WITH]
            if d["plots"] else []):
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
    ap.add_argument("--only", help="comma-separated sweeps (" + ",".join(SWEEPS) + ")")
    ap.add_argument("--merge", action="store_true",
                    help="keep the other sweeps of <out>/scale.json, replace those run now")
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
        unknown = [d for d in args.only.split(",") if d not in plan]
        if unknown:
            ap.error(f"no sweep {', '.join(unknown)} (sweeps: {', '.join(SWEEPS)})")
        plan = {d: plan[d] for d in args.only.split(",")}
    if args.merge and not args.only:
        ap.error("--merge needs --only: the sweeps to run again")
    previous = None
    if args.merge:
        with open(os.path.join(out, "scale.json")) as f:
            previous = json.load(f)
        if previous["meta"]["quick"] != args.quick:
            ap.error(f"--merge: {out}/scale.json is {'not ' * (not args.quick)}a quick run")
    hosted = [d for d in plan if d in HOSTED]
    if hosted and not hosts_available():
        # Said clearly and exit 77: the ctest bench.scale reports it skipped, not passed.
        print(f"run_scale.py: the sweep {', '.join(hosted)} needs emulated hosts "
              "(scripts/lib/hosts.sh: root, unshare and nsenter, UTS/IPC/mount namespaces), "
              "not available here; --only without it leaves it out", file=sys.stderr)
        sys.exit(77)
    reps = args.reps or (1 if args.quick else 5)
    sweeps = list(points_of(plan, base))
    unique = list({key_of(p): p for _, _, p in sweeps}.values())
    work = args.workdir or tempfile.mkdtemp(prefix="sidecore-scale-")
    os.makedirs(work, exist_ok=True)
    hosts = None
    hosts_work = None
    if hosted:
        # The hosted runs' files must be seen from every host: not under /tmp or /dev/shm.
        if args.workdir and outside_host_private(work):
            hosts_work = os.path.join(work, "hosts")
            os.makedirs(hosts_work, exist_ok=True)
        else:
            hosts_work = tempfile.mkdtemp(prefix="sidecore-scale-hosts-", dir="/var/tmp")
        hosts = Hosts(max(size for d in hosted for size in plan[d][0]), hosts_work, args.build)
    load_before = " ".join(open("/proc/loadavg").read().split()[:3])
    date = datetime.datetime.now().isoformat(timespec="seconds")
    started = time.perf_counter()
    runs = {key_of(p): [] for p in unique}
    try:
        for rep in range(reps):
            order = unique if rep % 2 == 0 else unique[::-1]
            for i, point in enumerate(order):
                # With and without the master file and XDMF, in alternating order.
                for views in ((True, False) if (rep + i) % 2 == 0 else (False, True)):
                    log(f"rep {rep + 1}/{reps} point {i + 1}/{len(order)} {point} "
                        f"views={views}")
                    r = run_point(args, point, views, work, hosts)
                    if args.merge:
                        r["sweeps"] = ",".join(plan)
                    runs[key_of(point)].append(r)
    finally:
        if hosts:
            hosts.stop()
        if hosts_work and not hosts_work.startswith(os.path.abspath(work) + "/"):
            shutil.rmtree(hosts_work, ignore_errors=True)
    seconds = time.perf_counter() - started
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    table = summarise(sweeps, runs)
    load_after = " ".join(open("/proc/loadavg").read().split()[:3])
    if previous:
        table, runs, meta = merge(previous, plan, table, runs, {
            "sweeps": list(plan), "date": date, "reps": reps, "load_before": load_before,
            "load_after": load_after, "seconds": seconds})
        finish(out, meta, table, runs, plot(out, table))
        log(f"{sum(len(v) for v in runs.values())} runs now, in {seconds:.0f} s; merged into "
            f"{out}")
        return
    meta = {
        "quick": args.quick, "reps": reps, "date": date,
        "machine": f"{os.cpu_count()} cores, {platform.machine()}",
        "load_before": load_before, "load_after": load_after,
        "seconds": seconds, "elements_per_block": ELEMENTS, "base": base,
        "changes": {d: ", ".join(f"{k} {v}" for k, v in c.items())
                    for d, (_, c) in plan.items() if c},
    }
    finish(out, meta, table, runs, plot(out, table))
    log(f"{sum(len(v) for v in runs.values())} runs in {seconds:.0f} s; wrote {out}")


def merge(previous, plan, table, runs, measured):
    """The previous results with the sweeps of `plan` replaced by those just measured. The
    previous rows of the other sweeps stay as they were; a point they share with the new
    sweeps (the base point) keeps its previous runs beside the new ones, which carry the
    sweeps they were measured for."""
    width = len(previous.get("run_keys", DIMENSIONS))
    old_runs = {}
    for k, v in previous["runs"].items():
        key = tuple(int(x) for x in k.split(",")) + (0,) * (len(RUN_KEYS) - width)
        old_runs[key] = [r for r in v if r.get("sweeps") != ",".join(plan)]
    kept = [r for r in previous["table"] if r["dimension"] not in plan]
    merged_table = sorted(kept + table, key=lambda r: SWEEPS.index(r["dimension"]))
    used = {key_of(r["point"]) for r in kept}
    merged_runs = {k: v for k, v in old_runs.items() if k in used}
    for k, v in runs.items():
        merged_runs[k] = merged_runs.get(k, []) + v
    meta = dict(previous["meta"])
    history = [dict(m, sweeps=[d for d in m["sweeps"] if d not in plan])
               for m in meta.get("merged", [])]
    meta["merged"] = [m for m in history if m["sweeps"]] + [measured]
    return merged_table, merged_runs, meta


def finish(out, meta, table, runs, plots):
    slopes = exponents(table)
    with open(os.path.join(out, "scale.json"), "w") as f:
        json.dump({"meta": meta, "table": table, "exponents": slopes, "plots": bool(plots),
                   "runs": {",".join(map(str, k)): v for k, v in runs.items()},
                   "run_keys": RUN_KEYS}, f, indent=1)
    write_csv(os.path.join(out, "scale.csv"), table)
    write_markdown(os.path.join(out, "scale.md"), meta, table, slopes)


if __name__ == "__main__":
    main()
