#!/usr/bin/env python3
"""Runs the proxy simulation over every output back-end and Sidecore mode, checks that they all
stored the same values, and writes results/matrix.md and results/matrix.json."""
import argparse
import datetime
import functools
import json
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

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# name, proxy back-end, Sidecore <dedicated> attributes, FileMode, extra processes, notes
CONFIGS = [
    ("none", "none", None, None, 0, "no output: the reference run"),
    ("hdf5-fpp", "hdf5-fpp", None, None, 0, "HDF5 sec2 driver, one file per rank and phase"),
    ("phdf5", "phdf5", None, None, 0, "parallel HDF5, one file per phase, collective"),
    ("adios2", "adios2", None, None, 0, "ADIOS2 BP5, one engine per rank, deferred puts"),
    ("adios2-async", "adios2-async", None, None, 0, "the same with AsyncWrite=true"),
    ("sc-core-fpc", "sidecore", 'cores="1" nodes="0"', "FilePerCore", 1,
     "Sidecore, 1 dedicated core, file per core"),
    ("sc-core-coll", "sidecore", 'cores="1" nodes="0"', "Collective", 1,
     "Sidecore, 1 dedicated core, collective"),
    ("sc-node-fpc", "sidecore", 'cores="0" nodes="1"', "FilePerCore", 1,
     "Sidecore, 1 dedicated node (SIDECORE_RANKS_PER_NODE), file per core"),
    ("sc-thread-fpc", "sidecore", 'cores="0" nodes="0" threads="1"', "FilePerCore", 0,
     "Sidecore, background I/O thread, file per process"),
    ("sc-sync-fpc", "sidecore", 'cores="0" nodes="0"', "FilePerCore", 0,
     "Sidecore synchronous, file per process"),
    ("sc-sync-coll", "sidecore", 'cores="0" nodes="0"', "Collective", 0,
     "Sidecore synchronous, collective"),
]
SYNC_BASELINES = ["hdf5-fpp", "phdf5", "adios2", "adios2-async"]


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def ghosted_phase_bytes(n):
    interior = n[0] * n[1] * n[2]
    return (n[0] + 2) * (n[1] + 2) * (n[2] + 2) * 8 + interior * 4 + interior * 8


def rank_grid(size):
    """MPI_Dims_create for 3 dimensions: as balanced as possible, non-increasing."""
    best = None
    for a in range(1, size + 1):
        for b in range(1, size + 1):
            if size % (a * b) == 0:
                dims = sorted([a, b, size // (a * b)], reverse=True)
                key = (max(dims) - min(dims), dims)
                if best is None or key < best:
                    best = key
    return best[1]


def write_xml(path, dedicated, file_mode, output, buffer_bytes, local, global_):
    with open(os.path.join(HERE, "proxy.xml.in")) as f:
        text = f.read()
    values = {"DEDICATED": dedicated, "FILEMODE": file_mode, "OUTPUT": output + "/",
              "BUFFER": str(buffer_bytes), "NX": local[2], "NY": local[1], "NZ": local[0],
              "GX": global_[2], "GY": global_[1], "GZ": global_[0]}
    for key, value in values.items():
        text = text.replace("@%s@" % key, str(value))
    with open(path, "w") as f:
        f.write(text)


def tree_size(path):
    files, size = 0, 0
    for root, _, names in os.walk(path):
        for name in names:
            files += 1
            size += os.stat(os.path.join(root, name)).st_blocks * 512
    return files, size


@functools.lru_cache(maxsize=4)
def expected_temperature(global_, steps, alpha):
    """The proxy's field after `steps` sweeps, recomputed in the same order of operations."""
    gz, gy, gx = np.meshgrid(np.arange(global_[0]), np.arange(global_[1]),
                             np.arange(global_[2]), indexing="ij")
    t = np.zeros([g + 2 for g in global_])
    t[1:-1, 1:-1, 1:-1] = 300.0 + ((gx * 7 + gy * 13 + gz * 29) % 101)
    for _ in range(steps):
        c = t[1:-1, 1:-1, 1:-1]
        s = t[1:-1, 1:-1, :-2] + t[1:-1, 1:-1, 2:]
        s = s + t[1:-1, :-2, 1:-1]
        s = s + t[1:-1, 2:, 1:-1]
        s = s + t[:-2, 1:-1, 1:-1]
        s = s + t[2:, 1:-1, 1:-1]
        nxt = np.zeros_like(t)
        nxt[1:-1, 1:-1, 1:-1] = c + alpha * (s - 6.0 * c)
        t = nxt
    return t[1:-1, 1:-1, 1:-1]


def read_back(config, out, meta, phase, name, master=False):
    """One variable of one phase as the back-end stored it, as a global array."""
    import h5py
    backend = config[1]
    local, global_, grid = meta["local"], meta["global"], meta["rank_grid"]
    if backend == "phdf5":
        with h5py.File(os.path.join(out, "coll_p%04d.h5" % phase), "r") as f:
            return f[name][...]
    if backend == "sidecore" and config[3] == "FilePerCore" and not master:
        # The blocks as each writer stored them, placed at their position attribute.
        data = np.full(global_, np.nan)
        prefix = "proxy_It%d_Pr" % phase
        for fname in sorted(os.listdir(out)):
            if not fname.startswith(prefix):
                continue
            with h5py.File(os.path.join(out, fname), "r") as f:
                if name not in f:
                    continue
                for source in f[name].values():
                    for block in source.values():
                        pos = [int(v) for v in block.attrs["position"]]
                        data[tuple(slice(o, o + n) for o, n in zip(pos, block.shape))] = block[...]
        return data
    if backend == "sidecore":
        # The collective file, or the master file of virtual datasets in FilePerCore mode.
        with h5py.File(os.path.join(out, "proxy_It%d.h5" % phase), "r") as f:
            return f[name][...]
    data = np.full(global_, np.nan)
    for rank in range(meta["ranks"]):
        coords = np.unravel_index(rank, grid)
        off = [int(c) * n for c, n in zip(coords, local)]
        sl = tuple(slice(o, o + n) for o, n in zip(off, local))
        if backend == "hdf5-fpp":
            with h5py.File(os.path.join(out, "fpp_p%04d_r%05d.h5" % (phase, rank)), "r") as f:
                assert list(f.attrs["position"]) == off
                data[sl] = f[name][...]
        else:
            import adios2
            with adios2.FileReader(os.path.join(out, "bp5_r%05d.bp" % rank)) as f:
                data[sl] = f.read(name, start=off, count=list(local), step_selection=[phase, 1])
    return data


def verify(config, out, meta):
    if config[1] == "none" or meta["phases"] == 0:
        return None
    phase = meta["phases"] - 1
    steps = (phase + 1) * meta["write_period"] * meta["sweeps"]
    expected = expected_temperature(tuple(meta["global"]), steps, meta["alpha"])
    result = {"phase": phase}
    got = read_back(config, out, meta, phase, "temperature")
    result["temperature_equal"] = bool(np.array_equal(got, expected))
    result["temperature_max_abs_diff"] = float(np.nanmax(np.abs(got - expected)))
    if "pressure" in meta["variables"]:
        got = read_back(config, out, meta, phase, "pressure")
        result["pressure_equal"] = bool(
            np.array_equal(got, (100000.0 + 350.0 * expected).astype(np.float32)))
    if config[1] == "sidecore" and config[3] == "FilePerCore":
        # The per-iteration master file must show the same array.
        got = read_back(config, out, meta, phase, "temperature", master=True)
        result["master_view_equal"] = bool(np.array_equal(got, expected))
    return result


def run_one(config, args, rep, workdir):
    name, backend, dedicated, file_mode, extra, _ = config
    out = os.path.join(workdir, "%s_rep%d" % (name, rep))
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    json_path = os.path.join(workdir, "%s_rep%d.json" % (name, rep))
    local = args.grid
    global_ = [g * n for g, n in zip(rank_grid(args.clients), local)]
    cmd = [args.mpirun] + args.mpirun_flags.split() + ["-np", str(args.clients + extra)]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if "nodes=\"1\"" in (dedicated or ""):
        cmd += ["-x", "SIDECORE_RANKS_PER_NODE=%d" % args.clients]
    cmd += [args.proxy, "--grid", ",".join(str(v) for v in reversed(local)),
            "--iterations", str(args.iterations), "--write-period", str(args.write_period),
            "--sweeps", str(args.sweeps), "--backend", backend, "--output", out,
            "--json", json_path]
    if backend == "sidecore":
        xml = os.path.join(workdir, "%s.xml" % name)
        buffer_bytes = args.buffer_phases * args.clients * ghosted_phase_bytes(local) + (16 << 20)
        write_xml(xml, dedicated, file_mode, out, buffer_bytes, local, global_)
        cmd += ["--xml", xml]
    started = time.time()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    wall = time.time() - started
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s\n%s" % (" ".join(cmd), proc.returncode,
                                                         proc.stdout, proc.stderr))
    with open(json_path) as f:
        meta = json.load(f)
    meta["config"] = name
    meta["rep"] = rep
    meta["command"] = " ".join(cmd)
    meta["wall_time"] = wall
    meta["files"], meta["bytes_on_disk"] = tree_size(out)
    if rep == 0 or args.verify_all:
        meta["check"] = verify(config, out, meta)
    if not args.keep_output:
        shutil.rmtree(out, ignore_errors=True)
    return meta


def memcpy_bandwidth(nbytes=256 << 20, repeats=5):
    src = np.ones(nbytes // 8)
    dst = np.zeros_like(src)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    return nbytes / best


def dd_bandwidth(workdir, mib, sync):
    path = os.path.join(workdir, "dd.bin")
    cmd = ["dd", "if=/dev/zero", "of=" + path, "bs=1M", "count=%d" % mib]
    if sync:
        cmd.append("conv=fdatasync")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    os.unlink(path)
    match = re.search(r"copied, ([0-9.e+-]+) s", proc.stderr)
    return mib * 1048576 / float(match.group(1)) if match else None


def summarize(runs, clients):
    by_config = {}
    for run in runs:
        by_config.setdefault(run["config"], []).append(run)
    reference = {r["rep"]: max(r["total_time"]) for r in by_config.get("none", [])}
    summary = {}
    for name, group in by_config.items():
        per_run = []
        for r in group:
            w = np.array(r["write_time"])
            m = np.array(r["memcpy_time"])
            total = max(r["total_time"])
            per_run.append({
                "write_mean": float(w.mean()) if w.size else 0.0,
                "write_max": float(w.max()) if w.size else 0.0,
                "memcpy_mean": float(m.mean()) if m.size else 0.0,
                "total": total,
                "loop": max(r["loop_time"]),
                "flush": max(r["flush_time"]),
                "ratio_to_none": total / reference[r["rep"]] if r["rep"] in reference else None,
                "files": r["files"],
                "bytes": r["bytes_on_disk"],
            })
        med = lambda key: statistics.median(p[key] for p in per_run if p[key] is not None)
        s = {key: med(key) for key in per_run[0] if any(p[key] is not None for p in per_run)}
        s["write_max_all"] = max(p["write_max"] for p in per_run)
        s["runs"] = len(per_run)
        s["write_over_memcpy"] = s["write_mean"] / s["memcpy_mean"] if s["memcpy_mean"] else None
        phase_bytes = group[0]["bytes_per_rank_per_phase"] * clients
        s["bytes_per_phase"] = phase_bytes
        s["visible_throughput"] = phase_bytes / s["write_mean"] if s["write_mean"] > 0 else None
        checks = [r["check"] for r in group if r.get("check")]
        s["check"] = checks[0] if checks else None
        summary[name] = s
    return summary


def targets(summary):
    """The ratios issue 5 asks for, taken from this run of the harness."""
    out = []
    best_sync = min(((summary[b]["total"], b) for b in SYNC_BASELINES if b in summary),
                    default=None)
    for sc in ("sc-core-fpc", "sc-core-coll", "sc-node-fpc", "sc-thread-fpc"):
        if sc not in summary:
            continue
        w = summary[sc]["write_mean"]
        for base, need in (("hdf5-fpp", 20.0), ("phdf5", 20.0), ("adios2-async", 1.0)):
            if base in summary:
                ratio = summary[base]["write_mean"] / w
                out.append({"sidecore": sc, "target": "visible write: %s / sidecore >= %g" %
                            (base, need), "value": ratio, "met": ratio >= need})
        ratio = summary[sc]["write_over_memcpy"]
        out.append({"sidecore": sc, "target": "visible write / memcpy of same bytes <= 1.2",
                    "value": ratio, "met": ratio is not None and ratio <= 1.2})
        if best_sync is None:
            continue
        ratio = summary[sc]["total"] / best_sync[0]
        out.append({"sidecore": sc, "target": "total run time / best synchronous baseline "
                    "(%s) <= 1" % best_sync[1], "value": ratio, "met": ratio <= 1.0})
    return out


def fmt_ms(seconds):
    return "%.2f" % (seconds * 1e3)


def write_markdown(path, doc):
    s, cfg = doc["summary"], doc["setup"]
    lines = ["# Proxy simulation: back-ends side by side", "",
             "Generated by `%s` on %s (host `%s`, %d cores)." % (
                 doc["command"], doc["date"], doc["machine"]["host"], doc["machine"]["cores"]),
             "",
             "Setup: %d simulation ranks, %s interior cells per rank (z,y,x), %d iterations, "
             "a write phase every %d, %d variables (%.1f MiB per phase in all), %d repetitions; "
             "Sidecore modes with a dedicated core or node add one process (the machine is "
             "oversubscribed). Write target: `%s`." % (
                 cfg["clients"], "x".join(map(str, cfg["grid"])), cfg["iterations"],
                 cfg["write_period"], 3, next(iter(s.values()))["bytes_per_phase"] / 2**20,
                 cfg["reps"], cfg["workdir"]), "",
             "Physical limits measured in this run: memcpy %.2f GB/s; dd to the write target "
             "%.2f GB/s through the page cache, %.2f GB/s with fdatasync." % (
                 doc["machine"]["memcpy_Bps"] / 1e9, (doc["machine"]["dd_cached_Bps"] or 0) / 1e9,
                 (doc["machine"]["dd_fdatasync_Bps"] or 0) / 1e9), "",
             "Medians over repetitions. *visible write*: time the simulation spends in the "
             "back-end's calls of one write phase, per rank (mean over ranks and phases; max: "
             "worst rank and phase of all runs). *memcpy*: the same bytes copied in the same "
             "process right after the phase. *total*: loop plus flush (data stored) of the "
             "slowest rank; ratio against the no-output run of the same repetition.", "",
             "| configuration | visible write mean (ms) | max (ms) | write / memcpy | "
             "total (s) | total / none | flush (s) | files | MiB on disk | values |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, *_ in CONFIGS:
        if name not in s:
            continue
        r = s[name]
        check = r.get("check")
        if check is None:
            verdict = "-"
        else:
            ok = check["temperature_equal"] and check.get("pressure_equal", True)
            verdict = "identical" if ok else "DIFFER (%.3g)" % check["temperature_max_abs_diff"]
            if not check.get("master_view_equal", True):
                verdict += "; master file wrong"
        lines.append("| %s | %s | %s | %s | %.3f | %s | %.3f | %d | %.1f | %s |" % (
            name, fmt_ms(r["write_mean"]), fmt_ms(r["write_max_all"]),
            "%.2f" % r["write_over_memcpy"] if r["write_over_memcpy"] else "-", r["total"],
            "%.3f" % r["ratio_to_none"] if r.get("ratio_to_none") else "-", r["flush"],
            r["files"], r["bytes"] / 2**20, verdict))
    lines += ["", "Configurations:", ""]
    lines += ["- `%s`: %s" % (c[0], c[5]) for c in CONFIGS if c[0] in s]
    lines += ["", "## Targets of issue 5", "", "| Sidecore mode | target | value | met |",
              "|---|---|---|---|"]
    for t in doc["targets"]:
        lines.append("| %s | %s | %s | %s |" % (
            t["sidecore"], t["target"], "%.2f" % t["value"] if t["value"] is not None else "-",
            "yes" if t["met"] else "**no**"))
    lines += ["", "Values: the temperature (and pressure) of the last phase read back from each "
              "back-end's files (h5py, adios2) and compared element by element with the field "
              "recomputed by numpy from the proxy's deterministic start. For Sidecore FilePerCore "
              "the blocks of the per-core files are placed at their `position` attribute; the "
              "master file of virtual datasets is checked separately.", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--build", default="/work/build-proxy", help="folder holding the proxy")
    p.add_argument("--clients", type=int, default=2, help="simulation ranks")
    p.add_argument("--grid", default="96,96,96", help="interior cells per rank, x,y,z")
    p.add_argument("--iterations", type=int, default=200)
    p.add_argument("--write-period", type=int, default=20)
    p.add_argument("--sweeps", type=int, default=1)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--buffer-phases", type=int, default=4,
                   help="Sidecore buffer: this many write phases of every client")
    p.add_argument("--workdir", default=None,
                   help="where output goes (default: a fresh folder under /tmp); point it at a "
                        "throttled mount to emulate a busy parallel file system")
    p.add_argument("--out", default=None,
                   help="results folder (default bench/proxy/results; with --quick, the workdir)")
    p.add_argument("--only", default=None, help="comma-separated configuration names")
    p.add_argument("--quick", action="store_true", help="tiny sizes: checks the harness only")
    p.add_argument("--verify-all", action="store_true", help="check values on every run")
    p.add_argument("--keep-output", action="store_true", help="keep every run's files")
    p.add_argument("--timeout", type=int, default=900)
    args = p.parse_args()
    args.mpirun = os.environ.get("MPIRUN", "mpirun")
    args.mpirun_flags = os.environ.get("MPIRUN_FLAGS", "--oversubscribe")
    if args.quick:
        args.grid, args.iterations, args.write_period, args.reps = "16,16,16", 6, 3, 1
    x, y, z = (int(v) for v in args.grid.split(","))
    args.grid = [z, y, x]
    args.proxy = os.path.join(args.build, "proxy")
    if not os.access(args.proxy, os.X_OK):
        sys.exit("no proxy executable in %s: build bench/proxy first (see README.md)" % args.build)
    configs = CONFIGS
    if args.only:
        wanted = args.only.split(",")
        configs = [c for c in CONFIGS if c[0] in wanted or c[0] == "none"]
    workdir = args.workdir or tempfile.mkdtemp(prefix="proxy_matrix_")
    os.makedirs(workdir, exist_ok=True)

    probe_mib = 16 if args.quick else 512
    machine = {"host": platform.node(), "cores": os.cpu_count(),
               "memcpy_Bps": memcpy_bandwidth(probe_mib << 20),
               "dd_cached_Bps": dd_bandwidth(workdir, probe_mib, False),
               "dd_fdatasync_Bps": dd_bandwidth(workdir, probe_mib, True)}
    log("memcpy %.2f GB/s, dd %.2f GB/s (cached) %.2f GB/s (fdatasync)" % (
        machine["memcpy_Bps"] / 1e9, (machine["dd_cached_Bps"] or 0) / 1e9,
        (machine["dd_fdatasync_Bps"] or 0) / 1e9))

    runs = []
    rng = random.Random(5)
    for rep in range(args.reps):
        # A new order each repetition, so that no configuration always follows the same one.
        order = list(configs)
        rng.shuffle(order)
        for config in order:
            meta = run_one(config, args, rep, workdir)
            w = np.array(meta["write_time"])
            log("rep %d %-14s write %.2f ms (max %.2f)  total %.3f s  files %d" % (
                rep, config[0], w.mean() * 1e3 if w.size else 0, w.max() * 1e3 if w.size else 0,
                max(meta["total_time"]), meta["files"]))
            if meta.get("check"):
                log("    check: %s" % meta["check"])
            runs.append(meta)

    summary = summarize(runs, args.clients)
    doc = {
        "command": " ".join(["bench/proxy/run_matrix.py"] + sys.argv[1:]),
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": machine,
        "setup": {"clients": args.clients, "grid": args.grid, "iterations": args.iterations,
                  "write_period": args.write_period, "sweeps": args.sweeps, "reps": args.reps,
                  "workdir": workdir, "mpirun": args.mpirun, "mpirun_flags": args.mpirun_flags},
        "summary": summary,
        "targets": targets(summary) if "none" in summary else [],
        "runs": runs,
    }
    if args.out is None:
        args.out = os.path.join(workdir, "results") if args.quick else os.path.join(HERE, "results")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "matrix.json"), "w") as f:
        json.dump(doc, f, indent=1)
    write_markdown(os.path.join(args.out, "matrix.md"), doc)
    if not args.workdir and not args.quick:
        shutil.rmtree(workdir, ignore_errors=True)
    bad = [n for n, s in summary.items() if s.get("check") and not (
        s["check"]["temperature_equal"] and s["check"].get("pressure_equal", True)
        and s["check"].get("master_view_equal", True))]
    log("wrote %s/matrix.md and matrix.json" % args.out)
    if bad:
        log("values differ for: %s" % ", ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
