#!/usr/bin/env python3
"""Perturbation experiment (seed 003, Figure 5 style): how much each <schedule> policy slows
the simulation's own communication, measured as paired differences on a shared machine.

The proxy simulation (bench/proxy) opens every iteration with an MPI_Alltoall (the global
exchange that background I/O perturbs), then computes (stencil sweeps, marked with
sidecore_compute_begin/end), and every W iterations hands a field to the dedicated cores.
Every repetition runs every configuration once:

- idle: Sidecore with a null store (the dedicated core receives and drops): the baseline;
- idle-again: the same as idle, a second time: the A/A control, whose difference from idle is
  the measurement's own noise;
- drain: store at once (the default);
- rate: a bandwidth cap per writer, spreading each store over the write period;
- phase: stores begin only while the clients compute;
- phase+rate: both;
- self: chosen by the writer from what it measures (here the clients mark phases).

The order within a repetition rotates: repetition r runs row r of a Williams design (a Latin
square in which every configuration runs once in every position and follows every other
configuration equally often), so that neither the position in the repetition nor the
configuration run just before favours one policy. Each policy's run is compared with the idle
run of its own repetition: the paired difference is comm(policy) / comm(idle) - 1 (and the same
for the total run time). Reported for each policy: the median, minimum and maximum of the
paired differences, their mean with a 95% Student-t interval, the median with a 95% bootstrap
(percentile) interval, the standard deviation s, and the repetitions a +-2% claim needs: the
smallest n with t(0.975, n-1) * s / sqrt(n) <= 2%, i.e. n ~ (t * s / 0.02)^2.

Nothing may be lost: every iteration is in every writer's trace, every stored dataset has the
bytes drain stored (digests), and drain's first stored iteration (all of them in quick mode) is
read back and compared value by value with the field recomputed from the proxy's formula.

With --hosts N the job runs across N emulated hosts (scripts/lib/hosts.sh: own host name,
/dev/shm and IPC per host), each with --clients simulation ranks and one dedicated core, so N
writers; SIDECORE_RANKS_PER_NODE is unset and the run checks that Sidecore found N nodes and
that each writer stored the clients of its own host only.

    build/venv/bin/python bench/schedule/run_perturbation.py --targets disk --minutes 20
    build/venv/bin/python bench/schedule/run_perturbation.py --hosts 3 --grid 64 --minutes 20
    build/venv/bin/python bench/schedule/run_perturbation.py --quick    # seconds: the chain

Writes <output>/perturbation[_hosts<N>][_quick].{md,json,png}.
"""
import argparse
import bisect
import csv
import datetime
import glob
import hashlib
import json
import math
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
THROTTLE_SCRIPT = os.path.join(ROOT, "bench", "throttle", "throttle.sh")
HOSTS_LIB = os.path.join(ROOT, "scripts", "lib", "hosts.sh")
RESULTS = os.path.join(ROOT, "bench", "results")

BASELINE = "idle"
CONTROL = "idle-again"
POLICIES = [
    # name, store type, <schedule> attributes (the trace is added)
    (BASELINE, "null", 'policy="drain"'),
    (CONTROL, "null", 'policy="drain"'),
    ("drain", "HDF5", 'policy="drain"'),
    ("rate", "HDF5", 'policy="rate" bandwidth="@BANDWIDTH@"'),
    ("phase", "HDF5", 'policy="phase"'),
    ("phase+rate", "HDF5", 'policy="phase rate" bandwidth="@BANDWIDTH@"'),
    ("self", "HDF5", 'policy="self"'),
]
POLICY_NAMES = [p[0] for p in POLICIES]
CLAIM = 0.02  # seed 003: a well-scheduled writer slows the simulation's communication < 2%

XML = """<?xml version="1.0"?>
<simulation name="proxy" language="c" xmlns="http://damaris.gforge.inria.fr/damaris/model">
  <architecture>
    <domains count="1"/>
    <dedicated cores="1" nodes="0"/>
    <buffer name="perturbation-buffer" size="{buffer}" policy="wait" timeout="600"/>
    <queue name="perturbation-queue" size="256"/>
    <schedule {schedule} trace="{out}/schedule"/>
  </architecture>
  <data>
    <parameter name="NX" type="int" value="{n}"/>
    <parameter name="NY" type="int" value="{n}"/>
    <parameter name="NZ" type="int" value="{n}"/>
    <parameter name="GX" type="int" value="{n}"/>
    <parameter name="GY" type="int" value="{n}"/>
    <parameter name="GZ" type="int" value="{n}"/>
    <layout name="ghosted" type="double" dimensions="NZ+2,NY+2,NX+2" global="GZ,GY,GX"
            ghosts="1:1,1:1,1:1"/>
    <variable name="temperature" layout="ghosted" store="out" unit="K"/>
  </data>
  <storage>
    <store name="out" type="{store}">{options}</store>
  </storage>
  <log FileName="" LogFormat="%Message%" LogLevel="info"/>
</simulation>
"""

HDF5_OPTIONS = """
      <option key="FileMode">FilePerCore</option>
      <option key="XDMF">false</option>
      <option key="VirtualView">false</option>
      <option key="FilesPath">{out}/</option>
    """

# Student's t, 97.5% quantile, by degrees of freedom; linear in 1/df between the rows past 30.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120,
        17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064,
        25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000,
        120: 1.980}


def log(*args):
    print(*args, flush=True)


def t975(df):
    if df < 1:
        return math.inf
    if df in T975:
        return T975[df]
    if df > 120:
        return 1.960 + (1.980 - 1.960) * 120 / df
    rows = sorted(T975)
    i = bisect.bisect_left(rows, df)
    lo, hi = rows[i - 1], rows[i]
    w = (1 / df - 1 / hi) / (1 / lo - 1 / hi)
    return T975[hi] + w * (T975[lo] - T975[hi])


def repetitions_needed(s, half_width=CLAIM):
    """The smallest n whose 95% t interval of a mean has half-width <= half_width, for a spread
    s: t(0.975, n-1) * s / sqrt(n) <= half_width, i.e. n ~ (t * s / half_width)^2."""
    if s == 0:
        return 2
    n = max(2, math.ceil((1.96 * s / half_width) ** 2))
    while t975(n - 1) * s / math.sqrt(n) > half_width:
        n += 1
    return n


def williams_orders(k):
    """Rows of a Williams design for k treatments: every treatment once per row, in every
    position once over the rows, and after every other treatment equally often (2k rows when
    k is odd, k when even)."""
    base, lo, hi = [0], 1, k - 1
    while len(base) < k:
        base.append(lo)
        lo += 1
        if len(base) < k:
            base.append(hi)
            hi -= 1
    rows = [[(b + r) % k for b in base] for r in range(k)]
    if k % 2:
        rows += [list(reversed(row)) for row in rows]
    return rows


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def stored_blocks(out):
    """Every stored temperature block: (iteration, writer, source) -> (position, array)."""
    import h5py
    blocks = {}
    for path in glob.glob(os.path.join(out, "proxy_It*_Pr*.h5")):
        m = re.match(r"proxy_It(\d+)_Pr(\d+)\.h5$", os.path.basename(path))
        if not m:
            continue
        iteration, writer = int(m.group(1)), int(m.group(2))
        with h5py.File(path, "r") as f:
            for name, obj in f["temperature"].items():
                blocks[(iteration, writer, int(name.lstrip("P")))] = (
                    [int(v) for v in obj.attrs["position"]], obj[()])
    return blocks


def check_values(blocks, meta, iterations):
    """Places the blocks of each iteration at their positions and compares the global array
    element by element with the recomputed field. Returns the largest difference."""
    import numpy as np
    # The proxy's field as its own harness recomputes it (bench/proxy/run_matrix.py).
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "proxy"))
    import run_matrix as proxy_matrix
    worst = 0.0
    for it in iterations:
        field = np.full(meta["global"], np.nan)
        for (i, _, _), (pos, data) in blocks.items():
            if i == it:
                field[tuple(slice(o, o + n) for o, n in zip(pos, data.shape))] = data
        steps = (it + 1) * meta["write_period"] * meta["sweeps"]
        expected = proxy_matrix.expected_temperature(tuple(meta["global"]), steps, meta["alpha"])
        if not np.array_equal(field, expected):
            diff = float(np.nanmax(np.abs(field - expected))) if not np.isnan(field).all() else math.inf
            sys.exit(f"drain: iteration {it}: stored temperature differs from the recomputed field "
                     f"({int(np.isnan(field).sum())} cells missing, largest difference {diff:g})")
        worst = max(worst, float(np.max(np.abs(field - expected))))
    return worst


class Launcher:
    """Starts the proxy: mpirun on this machine, or across emulated hosts (scripts/lib/hosts.sh,
    sourced by bash for each job, the hosts started once for the whole experiment)."""

    def __init__(self, args):
        self.args = args
        self.hosts_dir = None
        if args.hosts:
            # The keepers of the hosts exit when this process does (HOSTS_OWNER_PID), so that
            # an interrupted experiment leaves no namespace behind.
            done = subprocess.run(
                ["bash", "-c", '. "$0" && hosts_available || { echo "no namespaces here (root, '
                 'unshare, nsenter)" >&2; exit 77; }; HOSTS_OWNER_PID=$1 hosts_start "$2" && '
                 'echo "$HOSTS_DIR"', HOSTS_LIB, str(os.getpid()), str(args.hosts)],
                capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"cannot start {args.hosts} hosts: {done.stderr.strip()}")
            self.hosts_dir = done.stdout.strip().splitlines()[-1]
            names = self.hosts_bash("hosts_names").split()
            log(f"started {len(names)} hosts: {' '.join(names)} ({self.hosts_dir})")

    def hosts_bash(self, script, *words):
        """Runs `script` in bash with hosts.sh sourced and this experiment's hosts selected."""
        env = dict(os.environ, HOSTS_DIR=self.hosts_dir)
        done = subprocess.run(["bash", "-c", '. "$0" && ' + script, HOSTS_LIB, *words], env=env,
                              capture_output=True, text=True)
        return done.stdout

    def run(self, program_args):
        a = self.args
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        # Benchmarks leave no run report behind (docs/observability.md).
        env.setdefault("SIDECORE_REPORT", "off")
        if not self.hosts_dir:
            cmd = [a.mpirun] + a.mpirun_flags.split() + ["-np", str(a.ranks)] + program_args
            return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
        # Nodes are found from the host names, as on a cluster: no emulation variable. The
        # ranks get a login environment (host_agent.sh) plus what -x passes.
        env.pop("SIDECORE_RANKS_PER_NODE", None)
        env.update(HOSTS_DIR=self.hosts_dir, HOSTS_MPIRUN=a.mpirun)
        slots = a.clients + 1
        hosts = ",".join(f"{h}:{slots}" for h in self.host_names())
        # hosts_mpirun names Open MPI's pt2pt one-sided component: the writers' shared
        # counters (self's and slots' turns) are an MPI window across the hosts, which the
        # default component cannot make over TCP.
        flags = a.mpirun_flags.split()
        cmd = ["bash", "-c", '. "$0" && hosts_mpirun "$@"', HOSTS_LIB] + flags + [
            "-x", "SIDECORE_REPORT", "-H", hosts, "-np", str(a.ranks)] + program_args
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)

    def host_names(self):
        with open(os.path.join(self.hosts_dir, "names")) as f:
            return f.read().split()

    def stop(self):
        if self.hosts_dir:
            self.hosts_bash("hosts_stop")
            self.hosts_dir = None


def run_one(args, launcher, policy, workdir, bandwidth, rep, check_iterations=()):
    name, store, schedule = policy
    out = tempfile.mkdtemp(prefix=f"{name.replace('+', '_')}_", dir=workdir)
    os.chmod(out, 0o755)
    n = args.grid
    xml = XML.format(buffer=args.buffer,
                     schedule=schedule.replace("@BANDWIDTH@", str(int(bandwidth))),
                     out=out, n=n, store=store,
                     options=HDF5_OPTIONS.format(out=out) if store == "HDF5" else "")
    xml_path = os.path.join(out, "perturbation.xml")
    with open(xml_path, "w") as f:
        f.write(xml)
    json_path = os.path.join(out, "proxy.json")
    load_before = load_average()
    done = launcher.run([
        args.proxy, "--backend", "sidecore", "--xml", xml_path,
        "--grid", str(n), "--vars", "1", "--iterations", str(args.iterations),
        "--write-period", str(args.write_period), "--sweeps", str(args.sweeps),
        "--alltoall", str(args.alltoall), "--json", json_path])
    load_after = load_average()
    if done.returncode != 0:
        sys.exit(f"{name}: the proxy failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    # What Sidecore found, as its first rank logs it (src/runtime/runtime.cpp).
    found = re.search(r"(\d+) clients?, (\d+) writers? \(dedicated cores\), (\d+) nodes?",
                      done.stdout + done.stderr)
    if not found:
        sys.exit(f"{name}: no 'initialized' line in the job's output:\n{done.stdout}\n{done.stderr}")
    placement = tuple(int(v) for v in found.groups())
    if placement != (args.total_clients, args.writers, args.nodes):
        sys.exit(f"{name}: Sidecore found {placement[0]} clients, {placement[1]} writers, "
                 f"{placement[2]} nodes; expected {args.total_clients}, {args.writers}, "
                 f"{args.nodes}")
    with open(json_path) as f:
        meta = json.load(f)
    phases = args.iterations // args.write_period
    rows = []
    for writer in range(args.writers):
        path = os.path.join(out, f"schedule.{writer}.csv")
        with open(path) as f:
            header = f.readline()
            writer_rows = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]
        if f"of={args.writers} " not in header:
            sys.exit(f"{name}: {path}: '{header.strip()}', expected of={args.writers} writers")
        stored = sorted(int(r["iteration"]) for r in writer_rows)
        if stored != list(range(phases)):
            sys.exit(f"{name}: writer {writer} lists iterations {stored}, expected 0..{phases - 1}")
        rows += writer_rows
    result = {
        "policy": name, "rep": rep,
        "comm_time": statistics.mean(meta["comm_time"]),
        "comm_max": max(meta["comm_max"]),
        "compute_time": statistics.mean(meta["compute_time"]),
        "total_time": max(meta["total_time"]),
        "held_max": max(r["held"] for r in rows),
        "bytes": sum(r["bytes"] for r in rows),
        "store_seconds": sum(r["end"] - r["begin"] for r in rows),
        "wait_seconds": sum(r["begin"] - r["ready"] for r in rows),
        "in_phase": sum(1 for r in rows if r["phase"] == 1),
        "load_before": load_before, "load_after": load_after,
    }
    if store == "HDF5":
        blocks = stored_blocks(out)
        expected = {(it, src // args.clients, src)
                    for it in range(phases) for src in range(args.total_clients)}
        if set(blocks) != expected:
            # With one writer per host, writer w stores clients w*C .. w*C+C-1: its own host's.
            sys.exit(f"{name}: stored (iteration, writer, source) differ from the expected: "
                     f"missing {sorted(expected - set(blocks))[:5]}, "
                     f"unexpected {sorted(set(blocks) - expected)[:5]}")
        result["digests"] = {f"{it}:P{src}": hashlib.sha1(data.tobytes()).hexdigest()
                             for (it, _, src), (_, data) in blocks.items()}
        if check_iterations:
            result["values_checked"] = sorted(check_iterations)
            result["values_max_diff"] = check_values(blocks, meta, check_iterations)
    shutil.rmtree(out, ignore_errors=True)
    return result


def throttle_mounted(mount):
    with open("/proc/mounts") as f:
        return any(line.split()[1] == mount and line.split()[2] == "fuse.throttlefs" for line in f)


def bootstrap_median(values, rounds=10000, seed=11):
    rng = random.Random(seed)
    n = len(values)
    medians = sorted(statistics.median(rng.choices(values, k=n)) for _ in range(rounds))
    return medians[int(0.025 * rounds)], medians[int(0.975 * rounds) - 1]


def paired_statistics(diffs):
    n = len(diffs)
    out = {"n": n, "median": statistics.median(diffs), "min": min(diffs), "max": max(diffs),
           "mean": statistics.mean(diffs)}
    if n >= 2:
        s = statistics.stdev(diffs)
        half = t975(n - 1) * s / math.sqrt(n)
        out.update(sd=s, t_low=out["mean"] - half, t_high=out["mean"] + half,
                   reps_for_2pct=repetitions_needed(s))
        out["boot_low"], out["boot_high"] = bootstrap_median(diffs)
    return out


def summarize(runs):
    """Per policy: the paired differences against the idle run of the same repetition (only
    repetitions that ran both), and the medians of the plain measurements."""
    by_rep = {}
    for r in runs:
        by_rep.setdefault(r["rep"], {})[r["policy"]] = r
    summary = {}
    for name in POLICY_NAMES:
        rs = [rep[name] for rep in by_rep.values() if name in rep]
        if not rs:
            continue
        pairs = [(rep[name], rep[BASELINE]) for rep in by_rep.values()
                 if name in rep and BASELINE in rep]
        seconds = sum(r["store_seconds"] for r in rs)
        entry = {
            "runs": len(rs),
            "comm_time": statistics.median(r["comm_time"] for r in rs),
            "comm_range": [min(r["comm_time"] for r in rs), max(r["comm_time"] for r in rs)],
            "total_time": statistics.median(r["total_time"] for r in rs),
            "total_range": [min(r["total_time"] for r in rs), max(r["total_time"] for r in rs)],
            "compute_time": statistics.median(r["compute_time"] for r in rs),
            "held_max": max(r["held_max"] for r in rs),
            "throughput": sum(r["bytes"] for r in rs) / seconds
            if seconds > 0 and name not in (BASELINE, CONTROL) else None,
            "in_phase": statistics.median(r["in_phase"] for r in rs),
        }
        if name != BASELINE:
            entry["comm_diffs"] = [p["comm_time"] / b["comm_time"] - 1.0 for p, b in pairs]
            entry["total_diffs"] = [p["total_time"] / b["total_time"] - 1.0 for p, b in pairs]
            entry["comm"] = paired_statistics(entry["comm_diffs"])
            entry["total"] = paired_statistics(entry["total_diffs"])
        summary[name] = entry
    return summary


def check_same_data(runs):
    """Every policy stored exactly the bytes the first drain run stored, in every repetition."""
    reference = next(r["digests"] for r in runs if r["policy"] == "drain")
    for r in runs:
        if "digests" in r and r["digests"] != reference:
            differ = [k for k in reference if r["digests"].get(k) != reference[k]]
            sys.exit(f"{r['policy']} rep {r['rep']}: stored data differs from drain's "
                     f"({len(differ)} datasets, e.g. {differ[:3]})")
    for r in runs:
        r.pop("digests", None)


def pct(v):
    return f"{100 * v:+.1f}%"


def verdict(stats):
    """What the interval says about the +-2% claim."""
    if "t_low" not in stats:
        return "one repetition: no interval"
    lo, hi = stats["t_low"], stats["t_high"]
    if -CLAIM <= lo and hi <= CLAIM:
        return "within +-2% (shown)"
    if lo > CLAIM:
        return "above +2% (shown)"
    if hi < -CLAIM:
        return "below -2% (shown)"
    return "not resolved"


def stats_table(summary, key):
    lines = ["| policy | pairs | median | min .. max | mean [95% t interval] | "
             "median [95% bootstrap] | s | +-2% claim | repetitions for +-2% |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, s in summary.items():
        if name == BASELINE:
            continue
        st = s[key]
        if "sd" not in st:
            lines.append(f"| {name} | {st['n']} | {pct(st['median'])} | - | - | - | - | - | - |")
            continue
        lines.append(
            f"| {name} | {st['n']} | {pct(st['median'])} | {pct(st['min'])} .. {pct(st['max'])} "
            f"| {pct(st['mean'])} [{pct(st['t_low'])}, {pct(st['t_high'])}] "
            f"| {pct(st['median'])} [{pct(st['boot_low'])}, {pct(st['boot_high'])}] "
            f"| {100 * st['sd']:.1f}% | {verdict(st)} | {st['reps_for_2pct']} |")
    return lines


def write_markdown(path, doc):
    setup = doc["setup"]
    hosts = setup.get("hosts", 0)
    if hosts:
        where = (f"across {hosts} emulated hosts (scripts/lib/hosts.sh: own host name, /dev/shm "
                 f"and IPC per host; SIDECORE_RANKS_PER_NODE unset, Sidecore found {hosts} nodes), "
                 f"each with {setup['clients']} simulation ranks and one dedicated core "
                 f"({hosts} writers, {hosts * setup['clients']} simulation ranks)")
    else:
        where = f"with {setup['clients']} simulation ranks and one dedicated core"
    load = doc.get("load", {})
    checked = doc.get("values_checked", [])
    lines = [
        "# Perturbation of the simulation's communication by each schedule"
        + (f": {hosts} hosts" if hosts else ""),
        "",
        f"`{doc['command']}`, {doc['date']}, {doc['machine']}; {doc.get('library', 'library unknown')}.",
        "",
        f"Load average (1 min, /proc/loadavg) at the start of the runs: median "
        f"{load.get('median', 0):.2f}, {load.get('min', 0):.2f} .. {load.get('max', 0):.2f}; "
        f"{doc.get('minutes', 0):.0f} minutes in all." if load else "",
        "",
        f"The proxy (bench/proxy) {where}: each iteration an MPI_Alltoall of {setup['alltoall']} "
        f"bytes per rank pair (the communication), then {setup['sweeps']} stencil sweeps on "
        f"{setup['grid']}^3 cells per rank (the compute phase, marked with "
        f"sidecore_compute_begin/end), and every {setup['period']} iterations the temperature "
        f"({setup['grid'] ** 3 * 8 / 2**20:.1f} MiB per rank) handed to the dedicated cores; "
        f"{setup['iterations']} iterations. {doc.get('reps_done', setup['reps'])} repetitions; "
        "each runs every configuration once, in the order of one row of a Williams design "
        "(rotating: every configuration in every position, after every other, equally often). "
        f"A *paired difference* is a run's time over the {BASELINE} run of the same repetition "
        f"(null store: the dedicated core receives and drops), minus 1; {CONTROL} is a second "
        f"{BASELINE} run, so its differences are the noise of the measurement itself. The 95% "
        "t interval is that of the mean paired difference (Student's t, n-1 degrees of "
        "freedom); the bootstrap interval is that of the median (10,000 resamples, percentile). "
        "*Repetitions for +-2%*: the smallest n with t(0.975, n-1) * s / sqrt(n) <= 2%, i.e. "
        "n ~ (t * s / 0.02)^2, the repetitions for the mean's interval to be +-2% wide with the "
        "spread s observed here. Every policy stored the same bytes as drain (digests of every "
        "dataset, every repetition), and drain's stored temperature was read back and equal, "
        "element by element, to the field recomputed from the proxy's formula (stored "
        f"iteration{'s' if len(checked) > 1 else ''} {', '.join(str(i) for i in checked)}).",
        "",
    ]
    for target, entry in doc["targets"].items():
        summary = entry["summary"]
        lines += [f"## Target: {target}", "", entry["description"], "",
                  "### All-to-all time: paired differences against idle", ""]
        lines += stats_table(summary, "comm")
        lines += ["", "### Total run time: paired differences against idle", ""]
        lines += stats_table(summary, "total")
        lines += ["", "### Medians of the runs", "",
                  "| policy | communication (s) | min .. max | total (s) | min .. max | "
                  "buffer high water | store throughput | stores begun in a compute phase |",
                  "|---|---|---|---|---|---|---|---|"]
        for name, s in summary.items():
            thr = f"{s['throughput'] / 1e6:.0f} MB/s" if s["throughput"] else "-"
            lines.append(
                f"| {name} | {s['comm_time']:.3f} | {s['comm_range'][0]:.3f} .. "
                f"{s['comm_range'][1]:.3f} | {s['total_time']:.2f} | {s['total_range'][0]:.2f} .. "
                f"{s['total_range'][1]:.2f} | {s['held_max'] / 2**20:.1f} MiB | {thr} | "
                f"{s['in_phase']:.0f} |")
        lines.append("")
        noise = summary.get(CONTROL, {}).get("comm", {})
        for name in ("phase", "self"):
            st = summary.get(name, {}).get("comm", {})
            if "sd" in st:
                lines.append(
                    f"**{name}** against idle, all-to-all: median {pct(st['median'])}, mean "
                    f"{pct(st['mean'])}, 95% interval [{pct(st['t_low'])}, {pct(st['t_high'])}] "
                    f"over {st['n']} repetitions: {verdict(st)}; a +-2% interval would need "
                    f"about {st['reps_for_2pct']} repetitions at this spread (s = "
                    f"{100 * st['sd']:.1f}%).")
        if "sd" in noise:
            lines.append(
                f"The A/A control ({CONTROL} against {BASELINE}) spreads by s = "
                f"{100 * noise['sd']:.1f}% ({pct(noise['min'])} .. {pct(noise['max'])}): no "
                f"difference smaller than about {100 * 2 * noise['sd']:.0f}% shows in a single "
                "pair on this machine.")
        lines.append("")
    if doc.get("reading"):
        lines += ["## Reading", "", doc["reading"], ""]
    with open(path, "w") as f:
        f.write("\n".join(line for line in lines if line is not None))


def plot(path, doc):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing: no plot")
        return
    targets = list(doc["targets"])
    fig, axes = plt.subplots(1, len(targets), figsize=(7 * len(targets), 4.2), squeeze=False)
    for ax, target in zip(axes[0], targets):
        summary = doc["targets"][target]["summary"]
        names = [n for n in summary if n != BASELINE]
        for i, name in enumerate(names):
            st = summary[name]["comm"]
            values = [100 * v for v in summary[name]["comm_diffs"]]
            ax.scatter([i] * len(values), values, color="grey", s=10, zorder=2)
            if "t_low" in st:
                ax.errorbar(i + 0.15, 100 * st["mean"],
                            yerr=[[100 * (st["mean"] - st["t_low"])],
                                  [100 * (st["t_high"] - st["mean"])]],
                            fmt="o", color="tab:blue", capsize=4, zorder=3)
            ax.plot([i - 0.25, i + 0.25], [100 * st["median"]] * 2, color="black", zorder=3)
        ax.axhspan(-100 * CLAIM, 100 * CLAIM, color="tab:green", alpha=0.15, label="+-2%")
        ax.axhline(0, color="black", linewidth=0.5)
        ax.set_xticks(range(len(names)), names)
        ax.set_ylabel("all-to-all time vs idle, same repetition (%)")
        ax.set_title(f"{target}: paired differences (grey), median (bar), mean and 95% t interval")
        ax.title.set_fontsize(9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    log(f"wrote {path}")


def library_state(build):
    """When the library was built, and the sources as they are now (commit and changed files):
    what the run measured is the former, as close as the tree can say."""
    built = "?"
    lib = os.path.join(os.path.abspath(build), "libsidecore.so")
    if os.path.exists(lib):
        built = datetime.datetime.fromtimestamp(os.path.getmtime(os.path.realpath(lib))) \
            .isoformat(timespec="minutes")
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "src",
                                "include", "bench/proxy/proxy.c"],
                               capture_output=True, text=True, check=True).stdout.split("\n")
        changed = [line[3:] for line in dirty if line.strip()]
        sources = head + (f" with local changes to {', '.join(changed)}" if changed else "")
    except (OSError, subprocess.CalledProcessError):
        sources = "unknown"
    return f"libsidecore built {built}; sources at run time {sources}"


def run_target(args, launcher, target, workdir, description, deadline):
    rows = williams_orders(len(POLICIES))
    runs = []
    # A first idle run warms the machine up (page cache, shared memory) and measures the
    # rate cap; it is not counted.
    bandwidth = float(args.bandwidth) if args.bandwidth != "auto" else 1.0
    first = run_one(args, launcher, POLICIES[0], workdir, bandwidth, -1)
    if args.bandwidth == "auto":
        writes = args.iterations // args.write_period
        period = first["total_time"] / writes
        bandwidth = first["bytes"] / args.writers / writes / (0.5 * period)
        log(f"{target}: rate cap {bandwidth / 1e6:.0f} MB/s per writer (a write over half of "
            f"{period * 1e3:.0f} ms between writes)")
    started = time.monotonic()
    checked = False
    for rep in range(args.reps):
        if deadline and rep > 0:
            per_rep = (time.monotonic() - started) / rep
            if time.monotonic() + per_rep > deadline:
                log(f"{target}: time is up after {rep} repetitions")
                break
        order = [POLICIES[i] for i in rows[rep % len(rows)]]
        for policy in order:
            check = ()
            if policy[0] == "drain" and not checked:
                phases = args.iterations // args.write_period
                check = range(phases) if args.quick else [0]
                checked = True
            r = run_one(args, launcher, policy, workdir, bandwidth, rep, check)
            runs.append(r)
            log(f"{target} rep {rep} {r['policy']:<11} comm {r['comm_time']:.3f} s "
                f"total {r['total_time']:.2f} s held {r['held_max'] / 2**20:.0f} MiB "
                f"in-phase {r['in_phase']} load {r['load_before']:.1f}")
    check_same_data(runs)
    values = next(r for r in runs if "values_checked" in r)
    return {"description": description, "bandwidth_cap": bandwidth,
            "values_checked": values["values_checked"], "summary": summarize(runs),
            "runs": runs, "warm_up": first}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--clients", type=int, default=2, help="simulation ranks (per host)")
    ap.add_argument("--hosts", type=int, default=0,
                    help="run across this many emulated hosts (scripts/lib/hosts.sh), each "
                         "with --clients simulation ranks and one dedicated core; 0: this machine")
    ap.add_argument("--grid", type=int, default=96)
    ap.add_argument("--sweeps", type=int, default=30)
    ap.add_argument("--iterations", type=int, default=80)
    ap.add_argument("--write-period", type=int, default=4)
    ap.add_argument("--alltoall", type=int, default=4000000)
    ap.add_argument("--reps", type=int, default=7, help="repetitions (at most)")
    ap.add_argument("--minutes", type=float, default=0,
                    help="start no repetition that would end past this many minutes (per target)")
    ap.add_argument("--buffer", type=int, default=256 << 20)
    ap.add_argument("--bandwidth", default="auto",
                    help="the rate policies' cap per writer, bytes/s; auto: a write's bytes over "
                         "half the time between writes, measured in the warm-up idle run")
    ap.add_argument("--targets", default="disk,throttled")
    ap.add_argument("--throttle-mount", default=os.environ.get("THROTTLE_MOUNT", "/tmp/throttled"))
    ap.add_argument("--quick", action="store_true",
                    help="two short repetitions, every stored iteration read back: the chain")
    ap.add_argument("--output", default=RESULTS)
    ap.add_argument("--report-only", metavar="JSON",
                    help="write the table and plot again from an earlier run's JSON, measuring "
                         "nothing")
    ap.add_argument("--reading", metavar="FILE",
                    help="with --report-only: the text of the 'Reading' section (markdown)")
    args = ap.parse_args()
    if args.report_only:
        with open(args.report_only) as f:
            doc = json.load(f)
        for entry in doc["targets"].values():  # the statistics as this version computes them
            entry["summary"] = summarize(entry["runs"])
        if args.reading:
            with open(args.reading) as f:
                doc["reading"] = f.read().strip()
        with open(args.report_only, "w") as f:
            json.dump(doc, f, indent=1)
        base = os.path.splitext(args.report_only)[0]
        write_markdown(base + ".md", doc)
        plot(base + ".png", doc)
        return
    if args.quick:
        args.reps, args.iterations = 2, 16
    args.proxy = os.path.join(os.path.abspath(args.build), "bench", "proxy", "proxy")
    if not os.path.exists(args.proxy):
        sys.exit(f"no proxy at {args.proxy}: build Sidecore first (scripts/test.sh, or cmake "
                 "--build build --target sidecore_proxy)")
    args.mpirun = os.environ.get("MPIRUN", "mpirun")
    args.mpirun_flags = os.environ.get("MPIRUN_FLAGS", "--oversubscribe")
    args.writers = args.hosts or 1
    args.nodes = args.hosts or 1
    args.total_clients = args.clients * args.writers
    args.ranks = args.total_clients + args.writers

    doc = {"command": " ".join(["bench/schedule/run_perturbation.py"] + sys.argv[1:]),
           "date": datetime.datetime.now().isoformat(timespec="seconds"),
           "machine": f"{platform.node()}, {os.cpu_count()} vCPU, {platform.platform()}",
           "library": library_state(args.build),
           "setup": {"clients": args.clients, "hosts": args.hosts, "grid": args.grid,
                     "sweeps": args.sweeps, "iterations": args.iterations,
                     "period": args.write_period, "alltoall": args.alltoall, "reps": args.reps},
           "targets": {}}
    started = time.monotonic()
    launcher = Launcher(args)
    mounted_here = False
    # Output every host sees: not /tmp nor /dev/shm (private to each host).
    scratch = "/var/tmp" if args.hosts else None
    try:
        for target in args.targets.split(","):
            if target == "disk":
                workdir = tempfile.mkdtemp(prefix="perturbation_", dir=scratch)
                description = "A folder on the local disk, behind the page cache."
            elif target == "throttled":
                if args.hosts:
                    sys.exit("--hosts runs on the local disk only (the throttle's mount is "
                             "outside the hosts' view of /tmp)")
                if not throttle_mounted(args.throttle_mount):
                    subprocess.run(["bash", THROTTLE_SCRIPT, "mount"], check=True,
                                   env=dict(os.environ, THROTTLE_MOUNT=args.throttle_mount))
                    mounted_here = True
                workdir = tempfile.mkdtemp(prefix="perturbation_", dir=args.throttle_mount)
                description = ("throttlefs (bench/throttle): every write waits for a shared, "
                               "jittered 125 MB/s server, with stalls.")
            else:
                sys.exit(f"unknown target {target!r} (disk, throttled)")
            os.chmod(workdir, 0o755)
            deadline = time.monotonic() + 60 * args.minutes if args.minutes else None
            try:
                doc["targets"][target] = run_target(args, launcher, target, workdir, description,
                                                    deadline)
            finally:
                shutil.rmtree(workdir, ignore_errors=True)
    finally:
        launcher.stop()
        if mounted_here:
            subprocess.run(["bash", THROTTLE_SCRIPT, "umount"],
                           env=dict(os.environ, THROTTLE_MOUNT=args.throttle_mount))
    loads = [r["load_before"] for e in doc["targets"].values() for r in e["runs"]]
    doc["load"] = {"median": statistics.median(loads), "min": min(loads), "max": max(loads)}
    doc["minutes"] = (time.monotonic() - started) / 60
    doc["reps_done"] = min(max(r["rep"] for r in e["runs"]) + 1 for e in doc["targets"].values())
    doc["values_checked"] = next(iter(doc["targets"].values()))["values_checked"]
    os.makedirs(args.output, exist_ok=True)
    name = "perturbation" + (f"_hosts{args.hosts}" if args.hosts else "") + \
        ("_quick" if args.quick else "")
    base = os.path.join(args.output, name)
    with open(base + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    write_markdown(base + ".md", doc)
    plot(base + ".png", doc)
    log(f"wrote {base}.md and .json")


if __name__ == "__main__":
    main()
