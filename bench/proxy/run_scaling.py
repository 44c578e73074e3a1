#!/usr/bin/env python3
"""Scaling curve: the simulation-visible write time per phase against the data one
rank writes per phase, for Sidecore with one dedicated core and a buffer of fixed size, and for
direct HDF5 file-per-process. Writes results/scaling.md, scaling.json and scaling.png."""
import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import run_matrix
from run_matrix import THROTTLE_SCRIPT, ghosted_phase_bytes, throttle_mounted, write_xml

HERE = os.path.dirname(os.path.abspath(__file__))
# Where bench/proxy/run.sh builds the proxy.
DEFAULT_BUILD = os.path.join(os.path.dirname(os.path.dirname(HERE)), "build-bench", "bench", "proxy")
# Bytes one cell costs per write phase: temperature (double), pressure (float), density.
CELL_BYTES = 8 + 4 + 8


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def extents_for(mib):
    """Interior cells (z, y, x) of one rank whose write phase is about `mib` MiB."""
    cells = mib * 2**20 / CELL_BYTES
    edge = max(4, int(round(cells ** (1.0 / 3.0))))
    z = max(1, int(round(cells / (edge * edge))))
    return [z, edge, edge]


def run(args, kind, mib, rep, workdir):
    local = extents_for(mib)
    out = os.path.join(workdir, "%s_%g_rep%d" % (kind, mib, rep))
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    json_path = out + ".json"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               SIDECORE_LOG_LEVEL="warning")
    procs = 2 if kind == "sidecore" else 1
    cmd = [args.mpirun] + args.mpirun_flags.split() + ["-np", str(procs), args.proxy,
           "--grid", ",".join(str(v) for v in reversed(local)),
           "--iterations", str(args.phases * args.write_period),
           "--write-period", str(args.write_period), "--output", out, "--json", json_path]
    if kind == "sidecore":
        xml = out + ".xml"
        write_xml(xml, 'cores="1" nodes="0"', "FilePerCore", out, args.buffer_mib << 20, local,
                  local)
        cmd += ["--backend", "sidecore", "--xml", xml]
    else:
        cmd += ["--backend", kind]
    started = time.time()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s\n%s" % (" ".join(cmd), proc.returncode,
                                                         proc.stdout, proc.stderr))
    with open(json_path) as f:
        meta = json.load(f)
    # The stored values, read back as the matrix reads them (Sidecore's through its read API).
    config = next(c for c in run_matrix.CONFIGS
                  if c.name == ("sc-core-fpc" if kind == "sidecore" else kind))
    check = run_matrix.verify(config, out, meta) or {}
    if not all(v for k, v in check.items() if k.endswith("_equal")):
        raise RuntimeError("%s stored other values than the proxy computed: %s" % (
            " ".join(cmd), check))
    shutil.rmtree(out, ignore_errors=True)
    w = np.array(meta["write_time"][0])
    m = np.array(meta["memcpy_time"][0])
    return {"kind": kind, "mib": mib, "rep": rep, "local": local,
            "bytes_per_phase": meta["bytes_per_rank_per_phase"],
            "write_time": w.tolist(), "memcpy_time": m.tolist(),
            "write_mean": float(w.mean()), "write_max": float(w.max()),
            "memcpy_mean": float(m.mean()), "total": max(meta["total_time"]),
            "flush": max(meta["flush_time"]), "wall": time.time() - started,
            "check": check, "command": " ".join(cmd)}


def fits(args, mib):
    """A phase must fit the buffer whole: with policy="wait" a larger one can never be placed."""
    return ghosted_phase_bytes(extents_for(mib)) + (1 << 20) <= args.buffer_mib << 20


def plot(doc, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    points = doc["points"]
    buffer_mib = doc["setup"]["buffer_mib"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    styles = {"sidecore": ("Sidecore, 1 dedicated core", "C0", "o"),
              "hdf5-fpp": ("direct HDF5, file per process", "C3", "s")}
    for kind, (label, colour, marker) in styles.items():
        mine = sorted((p for p in points if p["kind"] == kind), key=lambda p: p["mib"])
        if not mine:
            continue
        x = [p["mib"] for p in mine]
        mean = np.array([p["write_mean"] for p in mine])
        worst = np.array([p["write_max"] for p in mine])
        left.plot(x, mean * 1e3, marker=marker, color=colour, label=label + " (mean)")
        left.plot(x, worst * 1e3, marker=marker, color=colour, linestyle=":", alpha=0.6,
                  label=label + " (worst phase)")
        right.plot(x, [p["bytes_per_phase"] / p["write_mean"] / 1e9 for p in mine],
                   marker=marker, color=colour, label=label)
    ref = sorted((p for p in points if p["kind"] == "hdf5-fpp"), key=lambda p: p["mib"]) or \
        sorted(points, key=lambda p: p["mib"])
    left.plot([p["mib"] for p in ref], [p["memcpy_mean"] * 1e3 for p in ref], color="grey",
              linestyle="--", label="memcpy of the same bytes")
    right.plot([p["mib"] for p in ref], [p["bytes_per_phase"] / p["memcpy_mean"] / 1e9
                                         for p in ref], color="grey", linestyle="--",
               label="memcpy")
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: "%g" % v))
        ax.axvline(buffer_mib / 2, color="k", linewidth=0.8, linestyle="-.")
        ax.axvline(buffer_mib, color="k", linewidth=0.8)
        ax.set_xlabel("data per write phase and rank (MiB)")
        ax.grid(True, which="both", alpha=0.3)
    left.set_yscale("log")
    left.set_ylabel("visible write time per phase (ms)")
    right.set_yscale("log")
    right.set_ylabel("data / visible write time (GB/s)")
    ymax = left.get_ylim()[1]
    left.text(buffer_mib / 2, ymax, " buffer/2", fontsize=7, va="top", ha="right", rotation=90)
    left.text(buffer_mib, ymax, " buffer %d MiB" % buffer_mib, fontsize=7, va="top",
              ha="right", rotation=90)
    left.legend(fontsize=7, loc="upper left")
    right.legend(fontsize=7, loc="lower left")
    fig.suptitle("Visible write time against data per phase (%s target, %d phases, policy "
                 "\"wait\"; Sidecore points stop where a phase no longer fits the buffer)" % (
                     doc["setup"]["target"], doc["setup"]["phases"]), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_markdown(doc, path, image):
    s = doc["setup"]
    lines = ["# Scaling curve: visible write time against data per phase", "",
             "Generated by `%s` on %s (host `%s`)." % (doc["command"], doc["date"],
                                                      doc["machine"]["host"]), "",
             "One simulation rank writes %d phases (one every %d iterations) to the %s target "
             "(`%s`). Sidecore: 1 simulation rank + 1 dedicated core, FilePerCore, a buffer of "
             "%d MiB with policy `wait`: a phase is a plain copy while the buffer holds it and "
             "the one the dedicated core is still storing (up to buffer/2, less when the core "
             "stores more slowly than phases arrive: the buffer then fills over the phases), "
             "then the writer waits for the store; a phase larger than the buffer cannot be written with this "
             "policy (not run). Direct HDF5: the same rank alone, one file per phase. Medians "
             "over %d repetition(s) of the mean over phases; *worst*: the slowest phase." % (
                 s["phases"], s["write_period"], s["target"], s["workdir"], s["buffer_mib"],
                 s["reps"]), "",
             "![scaling](%s)" % image, "",
             "| MiB per phase | Sidecore mean (ms) | worst (ms) | Sidecore / memcpy "
             "| HDF5 mean (ms) | worst (ms) | HDF5 / Sidecore | memcpy (ms) |",
             "|---|---|---|---|---|---|---|---|"]
    by = {}
    for p in doc["points"]:
        by.setdefault(p["mib"], {})[p["kind"]] = p
    for mib in sorted(by):
        sc, h5 = by[mib].get("sidecore"), by[mib].get("hdf5-fpp")
        memcpy = (h5 or sc)["memcpy_mean"]
        lines.append("| %g | %s | %s | %s | %s | %s | %s | %.2f |" % (
            mib, "%.2f" % (sc["write_mean"] * 1e3) if sc else "does not fit",
            "%.2f" % (sc["write_max"] * 1e3) if sc else "-",
            "%.2f" % (sc["write_mean"] / sc["memcpy_mean"]) if sc else "-",
            "%.2f" % (h5["write_mean"] * 1e3) if h5 else "-",
            "%.2f" % (h5["write_max"] * 1e3) if h5 else "-",
            "%.1f" % (h5["write_mean"] / sc["write_mean"]) if sc and h5 else "-",
            memcpy * 1e3))
    lines.append("")
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--build", default=DEFAULT_BUILD,
                   help="folder holding the proxy (default: %s, where run.sh builds it)"
                        % DEFAULT_BUILD)
    p.add_argument("--sizes", default="1,2,4,8,16,32,64,96,128,192,224,512,1024",
                   help="MiB per write phase and rank")
    p.add_argument("--buffer-mib", type=int, default=256, help="Sidecore buffer, fixed")
    p.add_argument("--phases", type=int, default=6)
    p.add_argument("--write-period", type=int, default=2)
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("--target", default="disk", choices=("disk", "throttled"))
    p.add_argument("--throttle-mount", default=os.environ.get("THROTTLE_MOUNT", "/tmp/throttled"))
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--timeout", type=int, default=1800)
    args = p.parse_args()
    args.mpirun = os.environ.get("MPIRUN", "mpirun")
    args.mpirun_flags = os.environ.get("MPIRUN_FLAGS", "--oversubscribe")
    args.proxy = os.path.join(args.build, "proxy")
    if not os.access(args.proxy, os.X_OK):
        sys.exit("no proxy executable in %s: build bench/proxy first (see README.md)" % args.build)
    run_matrix.SIDECORE_MODULE_DIR = os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(args.build))), "python")
    sizes = [float(v) for v in args.sizes.split(",")]

    mounted_here = False
    if args.target == "throttled":
        if not throttle_mounted(args.throttle_mount):
            subprocess.run(["bash", THROTTLE_SCRIPT, "mount"], check=True,
                           env=dict(os.environ, THROTTLE_MOUNT=args.throttle_mount))
            mounted_here = True
        workdir = tempfile.mkdtemp(prefix="proxy_scaling_", dir=args.throttle_mount)
    else:
        workdir = tempfile.mkdtemp(prefix="proxy_scaling_")
    points = []
    try:
        for mib in sizes:
            for kind in ("sidecore", "hdf5-fpp"):
                if kind == "sidecore" and not fits(args, mib):
                    log("%-9s %7g MiB: does not fit a %d MiB buffer, left out" % (
                        kind, mib, args.buffer_mib))
                    continue
                reps = [run(args, kind, mib, rep, workdir) for rep in range(args.reps)]
                reps.sort(key=lambda r: r["write_mean"])
                point = reps[len(reps) // 2]
                log("%-9s %7g MiB: write %.2f ms (worst %.2f), memcpy %.2f ms, total %.2f s" % (
                    kind, mib, point["write_mean"] * 1e3, point["write_max"] * 1e3,
                    point["memcpy_mean"] * 1e3, point["total"]))
                points.append(point)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if mounted_here:
            subprocess.run(["bash", THROTTLE_SCRIPT, "umount"],
                           env=dict(os.environ, THROTTLE_MOUNT=args.throttle_mount))
    doc = {"command": " ".join(["bench/proxy/run_scaling.py"] + sys.argv[1:]),
           "date": datetime.datetime.now().isoformat(timespec="seconds"),
           "machine": {"host": platform.node(), "cores": os.cpu_count()},
           "setup": {"buffer_mib": args.buffer_mib, "phases": args.phases,
                     "write_period": args.write_period, "reps": args.reps,
                     "target": args.target, "workdir": workdir, "sizes_mib": sizes},
           "points": points}
    os.makedirs(args.out, exist_ok=True)
    suffix = "" if args.target == "disk" else "_" + args.target
    with open(os.path.join(args.out, "scaling%s.json" % suffix), "w") as f:
        json.dump(doc, f, indent=1)
    plot(doc, os.path.join(args.out, "scaling%s.png" % suffix))
    write_markdown(doc, os.path.join(args.out, "scaling%s.md" % suffix), "scaling%s.png" % suffix)
    log("wrote %s/scaling%s.md, .json and .png" % (args.out, suffix))
    return 0


if __name__ == "__main__":
    sys.exit(main())
