#!/usr/bin/env python3
"""Perturbation experiment (seed 003, Figure 5 style): how much each <schedule> policy slows
the simulation's own communication, side by side in one run.

The proxy simulation (bench/proxy) opens every iteration with an MPI_Alltoall (the global
exchange that background I/O perturbs), then computes (stencil sweeps, marked with
sidecore_compute_begin/end), and every W iterations hands a field to one dedicated core. Each
configuration runs the same simulation; repetitions are interleaved in a new random order each
time, so that the machine's drift is shared:

- idle: Sidecore with a null store (the dedicated core receives and drops): the reference;
- drain: store at once (the default);
- rate: a bandwidth cap per writer, spreading each store over the write period;
- phase: stores begin only while the clients compute;
- phase+rate: both;
- self: chosen by the writer from what it measures (here the clients mark phases).

For each run it records the simulation's communication time (the all-to-all, summed over
iterations, mean of the ranks), its compute and total time, the writer's buffer high-water mark
and store throughput (from the schedule trace), and checks that nothing was lost: every
iteration's blocks are stored, with the same bytes as under drain (digests of every dataset).

    build/venv/bin/python bench/schedule/run_perturbation.py            # ~10 min on 2 cores
    build/venv/bin/python bench/schedule/run_perturbation.py --quick    # a minute: the chain

Writes bench/results/perturbation.{md,json} and, with matplotlib, perturbation.png.
"""
import argparse
import csv
import datetime
import glob
import hashlib
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
THROTTLE_SCRIPT = os.path.join(ROOT, "bench", "throttle", "throttle.sh")
RESULTS = os.path.join(ROOT, "bench", "results")

POLICIES = [
    # name, store type, <schedule> attributes (the trace is added)
    ("idle", "null", 'policy="drain"'),
    ("drain", "HDF5", 'policy="drain"'),
    ("rate", "HDF5", 'policy="rate" bandwidth="@BANDWIDTH@"'),
    ("phase", "HDF5", 'policy="phase"'),
    ("phase+rate", "HDF5", 'policy="phase rate" bandwidth="@BANDWIDTH@"'),
    ("self", "HDF5", 'policy="self"'),
]

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
  <log FileName="" LogFormat="%Message%" LogLevel="warning"/>
</simulation>
"""

HDF5_OPTIONS = """
      <option key="FileMode">FilePerCore</option>
      <option key="XDMF">false</option>
      <option key="VirtualView">false</option>
      <option key="FilesPath">{out}/</option>
    """


def log(*args):
    print(*args, flush=True)


def read_trace(out):
    path = os.path.join(out, "schedule.0.csv")
    with open(path) as f:
        f.readline()
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def digests(out):
    """Every stored dataset's bytes, digested: (iteration, dataset) -> hex."""
    import h5py
    import numpy as np
    found = {}
    for path in glob.glob(os.path.join(out, "proxy_It*_Pr*.h5")):
        iteration = int(os.path.basename(path).split("_It")[1].split("_")[0])
        with h5py.File(path, "r") as f:
            def visit(name, obj):
                if isinstance(obj, h5py.Dataset):
                    found[(iteration, name)] = hashlib.sha1(
                        np.ascontiguousarray(obj[()]).tobytes()).hexdigest()
            f.visititems(visit)
    return found


def run_one(args, policy, workdir, bandwidth, rep):
    name, store, schedule = policy
    out = tempfile.mkdtemp(prefix=f"{name.replace('+', '_')}_", dir=workdir)
    n = args.grid
    xml = XML.format(buffer=args.buffer, schedule=schedule.replace("@BANDWIDTH@", str(int(bandwidth))),
                     out=out, n=n, store=store,
                     options=HDF5_OPTIONS.format(out=out) if store == "HDF5" else "")
    xml_path = os.path.join(out, "perturbation.xml")
    with open(xml_path, "w") as f:
        f.write(xml)
    json_path = os.path.join(out, "proxy.json")
    cmd = [args.mpirun] + args.mpirun_flags.split() + [
        "-np", str(args.clients + 1), args.proxy, "--backend", "sidecore", "--xml", xml_path,
        "--grid", str(n), "--vars", "1", "--iterations", str(args.iterations),
        "--write-period", str(args.write_period), "--sweeps", str(args.sweeps),
        "--alltoall", str(args.alltoall), "--json", json_path]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # Benchmarks leave no run report behind (docs/observability.md).
    env.setdefault("SIDECORE_REPORT", "off")
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        sys.exit(f"{name}: the proxy failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    with open(json_path) as f:
        meta = json.load(f)
    rows = read_trace(out)
    phases = args.iterations // args.write_period
    stored = sorted(int(r["iteration"]) for r in rows)
    if stored != list(range(phases)):
        sys.exit(f"{name}: the trace lists iterations {stored}, expected 0..{phases - 1}")
    store_seconds = sum(r["end"] - r["begin"] for r in rows)
    result = {
        "policy": name, "rep": rep,
        "comm_time": statistics.mean(meta["comm_time"]),
        "comm_max": max(meta["comm_max"]),
        "compute_time": statistics.mean(meta["compute_time"]),
        "total_time": max(meta["total_time"]),
        "held_max": max(r["held"] for r in rows),
        "bytes": sum(r["bytes"] for r in rows),
        "store_seconds": store_seconds,
        "wait_seconds": sum(r["begin"] - r["ready"] for r in rows),
        "in_phase": sum(1 for r in rows if r["phase"] == 1),
    }
    if store == "HDF5":
        d = digests(out)
        expected = {(it, f"temperature/P{src}") for it in range(phases) for src in range(args.clients)}
        missing = expected - set(d)
        if missing:
            sys.exit(f"{name}: datasets missing: {sorted(missing)[:5]}")
        result["digests"] = {f"{it}:{ds}": h for (it, ds), h in d.items()}
    shutil.rmtree(out, ignore_errors=True)
    return result


def throttle_mounted(mount):
    with open("/proc/mounts") as f:
        return any(line.split()[1] == mount and line.split()[2] == "fuse.throttlefs" for line in f)


def summarize(runs):
    by = {}
    for r in runs:
        by.setdefault(r["policy"], []).append(r)
    # Slowdowns are paired: each run against the idle run of its own repetition (the machine
    # drifts between repetitions more than within one), then the median over repetitions.
    idle_comm = {r["rep"]: r["comm_time"] for r in by["idle"]}
    idle_total = {r["rep"]: r["total_time"] for r in by["idle"]}
    summary = {}
    for name in [p[0] for p in POLICIES if p[0] in by]:
        rs = by[name]
        comm = statistics.median(r["comm_time"] for r in rs)
        total = statistics.median(r["total_time"] for r in rs)
        seconds = sum(r["store_seconds"] for r in rs)
        summary[name] = {
            "runs": len(rs),
            "comm_time": comm,
            "comm_slowdown": statistics.median(r["comm_time"] / idle_comm[r["rep"]] - 1.0
                                               for r in rs),
            "comm_slowdowns": [r["comm_time"] / idle_comm[r["rep"]] - 1.0 for r in rs],
            "total_time": total,
            "total_slowdown": statistics.median(r["total_time"] / idle_total[r["rep"]] - 1.0
                                                for r in rs),
            "compute_time": statistics.median(r["compute_time"] for r in rs),
            "held_max": max(r["held_max"] for r in rs),
            "throughput": sum(r["bytes"] for r in rs) / seconds
            if seconds > 0 and name != "idle" else None,
            "in_phase": statistics.median(r["in_phase"] for r in rs),
        }
    return summary


def check_same_data(runs):
    """Every policy stored exactly the bytes drain stored, in every repetition."""
    reference = next(r["digests"] for r in runs if r["policy"] == "drain")
    for r in runs:
        if "digests" in r and r["digests"] != reference:
            differ = [k for k in reference if r["digests"].get(k) != reference[k]]
            sys.exit(f"{r['policy']} rep {r['rep']}: stored data differs from drain's "
                     f"({len(differ)} datasets, e.g. {differ[:3]})")
        r.pop("digests", None)


def write_markdown(path, doc):
    lines = [
        "# Perturbation of the simulation's communication by each schedule",
        "",
        f"`{doc['command']}`, {doc['date']}, {doc['machine']}.",
        "",
        "The proxy (bench/proxy) with {clients} simulation ranks and one dedicated core: each "
        "iteration an MPI_Alltoall of {alltoall} bytes per rank pair (the communication), then "
        "{sweeps} stencil sweeps on {grid}^3 cells per rank (the compute phase, marked with "
        "sidecore_compute_begin/end), and every {period} iterations the temperature "
        "({mib:.1f} MiB per rank) handed to the dedicated core; {iterations} iterations, "
        "{reps} interleaved repetitions per policy, medians shown. *Slowdown* compares each "
        "run's all-to-all time (and total time) with the idle run of the same repetition (a null "
        "store: the dedicated core receives and drops), then takes the median over the "
        "repetitions. Every policy stored the same bytes as drain "
        "(digests of every dataset compared).".format(mib=doc["setup"]["grid"] ** 3 * 8 / 2**20,
                                                      **doc["setup"]),
        "",
    ]
    for target, entry in doc["targets"].items():
        lines += [f"## Target: {target}", "", entry["description"], "",
                  "| policy | communication (s) | slowdown | total (s) | vs idle | buffer high water | store throughput | stores begun in a compute phase |",
                  "|---|---|---|---|---|---|---|---|"]
        for name, s in entry["summary"].items():
            thr = f"{s['throughput'] / 1e6:.0f} MB/s" if s["throughput"] else "-"
            lines.append(
                f"| {name} | {s['comm_time']:.3f} | {100 * s['comm_slowdown']:+.1f}% | "
                f"{s['total_time']:.2f} | {100 * s['total_slowdown']:+.1f}% | "
                f"{s['held_max'] / 2**20:.1f} MiB | {thr} | {s['in_phase']:.0f} |")
        lines.append("")
        best = min((n for n in entry["summary"] if n != "idle"),
                   key=lambda n: entry["summary"][n]["comm_slowdown"])
        drain = entry["summary"]["drain"]["comm_slowdown"]
        b = entry["summary"][best]["comm_slowdown"]
        lines += [f"Best policy for the communication: **{best}** ({100 * b:+.1f}%, target at "
                  f"most +2%: {'met' if b <= 0.02 else 'missed'}); drain: {100 * drain:+.1f}%.",
                  ""]
    lines += ["## Reading", "", doc.get("reading", ""), ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def plot(path, doc):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing: no plot")
        return
    targets = list(doc["targets"])
    fig, axes = plt.subplots(1, len(targets), figsize=(6 * len(targets), 4), squeeze=False)
    for ax, target in zip(axes[0], targets):
        summary = doc["targets"][target]["summary"]
        names = list(summary)
        for i, name in enumerate(names):
            values = [100 * v for v in summary[name]["comm_slowdowns"]]
            ax.scatter([i] * len(values), values, color="grey", s=12, zorder=2)
            ax.bar(i, 100 * summary[name]["comm_slowdown"], color="tab:blue", alpha=0.6, zorder=1)
        ax.axhline(2, color="tab:red", linestyle="--", linewidth=1, label="+2% (seed 003)")
        ax.axhline(0, color="black", linewidth=0.5)
        ax.set_xticks(range(len(names)), names)
        ax.set_ylabel("all-to-all time vs idle (%)")
        ax.set_title(f"{target}: all-to-all time vs idle, paired by repetition")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    log(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--grid", type=int, default=96)
    ap.add_argument("--sweeps", type=int, default=30)
    ap.add_argument("--iterations", type=int, default=80)
    ap.add_argument("--write-period", type=int, default=4)
    ap.add_argument("--alltoall", type=int, default=4000000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--buffer", type=int, default=256 << 20)
    ap.add_argument("--bandwidth", default="auto",
                    help="the rate policies' cap, bytes/s; auto: a write's bytes over half the "
                         "time between writes, measured in the first idle run")
    ap.add_argument("--targets", default="disk,throttled")
    ap.add_argument("--throttle-mount", default=os.environ.get("THROTTLE_MOUNT", "/tmp/throttled"))
    ap.add_argument("--quick", action="store_true", help="one short repetition: checks the chain")
    ap.add_argument("--output", default=RESULTS)
    ap.add_argument("--report-only", metavar="JSON",
                    help="write the table and plot again from an earlier run's JSON (its "
                         "'reading' included), measuring nothing")
    args = ap.parse_args()
    if args.report_only:
        with open(args.report_only) as f:
            doc = json.load(f)
        for entry in doc["targets"].values():  # the statistics as this version computes them
            entry["summary"] = summarize(entry["runs"])
        base = os.path.splitext(args.report_only)[0]
        write_markdown(base + ".md", doc)
        plot(base + ".png", doc)
        return
    if args.quick:
        args.reps, args.iterations = 1, 16
    args.proxy = os.path.join(args.build, "bench", "proxy", "proxy")
    if not os.path.exists(args.proxy):
        sys.exit(f"no proxy at {args.proxy}: build Sidecore first (scripts/test.sh, or cmake "
                 "--build build --target sidecore_proxy)")
    args.mpirun = os.environ.get("MPIRUN", "mpirun")
    args.mpirun_flags = os.environ.get("MPIRUN_FLAGS", "--oversubscribe")

    doc = {"command": " ".join(["bench/schedule/run_perturbation.py"] + sys.argv[1:]),
           "date": datetime.datetime.now().isoformat(timespec="seconds"),
           "machine": f"{platform.node()}, {os.cpu_count()} cores, {platform.platform()}",
           "setup": {"clients": args.clients, "grid": args.grid, "sweeps": args.sweeps,
                     "iterations": args.iterations, "period": args.write_period,
                     "alltoall": args.alltoall, "reps": args.reps},
           "targets": {}}
    mounted_here = False
    try:
        for target in args.targets.split(","):
            if target == "disk":
                workdir = tempfile.mkdtemp(prefix="perturbation_")
                description = "A folder on the local disk, behind the page cache."
            elif target == "throttled":
                if not throttle_mounted(args.throttle_mount):
                    subprocess.run(["bash", THROTTLE_SCRIPT, "mount"], check=True,
                                   env=dict(os.environ, THROTTLE_MOUNT=args.throttle_mount))
                    mounted_here = True
                workdir = tempfile.mkdtemp(prefix="perturbation_", dir=args.throttle_mount)
                description = ("throttlefs (bench/throttle): every write waits for a shared, "
                               "jittered 125 MB/s server, with stalls.")
            else:
                sys.exit(f"unknown target {target!r} (disk, throttled)")
            runs = []
            bandwidth = None
            rng = random.Random(3)
            try:
                for rep in range(args.reps):
                    order = list(POLICIES)
                    rng.shuffle(order)
                    if bandwidth is None:
                        order.remove(POLICIES[0])
                        order.insert(0, POLICIES[0])
                    for policy in order:
                        if bandwidth is None:
                            if args.bandwidth == "auto":
                                first = run_one(args, POLICIES[0], workdir, 1, rep)
                                period = first["total_time"] / (args.iterations // args.write_period)
                                bandwidth = first["bytes"] / (args.iterations // args.write_period) \
                                    / (0.5 * period)
                                runs.append(first)
                                log(f"{target}: rate cap {bandwidth / 1e6:.0f} MB/s (a write over "
                                    f"half of {period * 1e3:.0f} ms between writes)")
                                continue
                            bandwidth = float(args.bandwidth)
                        r = run_one(args, policy, workdir, bandwidth, rep)
                        runs.append(r)
                        log(f"{target} rep {rep} {r['policy']:<11} comm {r['comm_time']:.3f} s "
                            f"total {r['total_time']:.2f} s held {r['held_max'] / 2**20:.0f} MiB "
                            f"in-phase {r['in_phase']}")
            finally:
                shutil.rmtree(workdir, ignore_errors=True)
            check_same_data(runs)
            doc["targets"][target] = {"description": description, "bandwidth_cap": bandwidth,
                                      "summary": summarize(runs), "runs": runs}
    finally:
        if mounted_here:
            subprocess.run(["bash", THROTTLE_SCRIPT, "umount"],
                           env=dict(os.environ, THROTTLE_MOUNT=args.throttle_mount))
    os.makedirs(args.output, exist_ok=True)
    base = os.path.join(args.output, "perturbation" + ("_quick" if args.quick else ""))
    previous = base + ".json"
    if os.path.exists(previous):
        with open(previous) as f:
            doc["reading"] = json.load(f).get("reading", "")
    with open(base + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    write_markdown(base + ".md", doc)
    plot(base + ".png", doc)
    log(f"wrote {base}.md and .json")


if __name__ == "__main__":
    main()
