#!/usr/bin/env python3
"""Runs the proxy simulation over every output back-end and Sidecore mode, checks that they all
stored the same values, and writes results/matrix.md and results/matrix.json."""
import argparse
import collections
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
# Where bench/proxy/run.sh builds the proxy.
DEFAULT_BUILD = os.path.join(os.path.dirname(os.path.dirname(HERE)), "build-bench", "bench", "proxy")

THROTTLE_SCRIPT = os.path.join(os.path.dirname(HERE), "throttle", "throttle.sh")


class Config(collections.namedtuple(
        "Config", "name backend dedicated file_mode extra notes group clients proxy_args",
        defaults=((),))):
    """One column of the matrix. `extra`: Sidecore processes added to the clients; `group`:
    "main" (args.clients ranks, --grid cells each) or "equal" (the same global domain on a
    fixed total number of processes, --global); `clients`: ranks of an "equal" run;
    `proxy_args`: options of the proxy itself (--alloc-derived)."""


def _main(name, backend, dedicated, file_mode, extra, notes, proxy_args=()):
    return Config(name, backend, dedicated, file_mode, extra, notes, "main", None, proxy_args)


CONFIGS = [
    _main("none", "none", None, None, 0, "no output: the reference run"),
    _main("hdf5-fpp", "hdf5-fpp", None, None, 0, "HDF5 sec2 driver, one file per rank and phase"),
    _main("phdf5", "phdf5", None, None, 0, "parallel HDF5, one file per phase, collective"),
    _main("adios2", "adios2", None, None, 0, "ADIOS2 BP5, one engine per rank, deferred puts"),
    _main("adios2-async", "adios2-async", None, None, 0, "the same with AsyncWrite=true"),
    _main("sc-core-fpc", "sidecore", 'cores="1" nodes="0"', "FilePerCore", 1,
          "Sidecore, 1 dedicated core, file per core"),
    _main("sc-core-alloc", "sidecore", 'cores="1" nodes="0"', "FilePerCore", 1,
          "Sidecore, 1 dedicated core, file per core, pressure and density computed into "
          "damaris_alloc blocks (zero-copy; the temperature is written)", ("--alloc-derived",)),
    _main("sc-core-coll", "sidecore", 'cores="1" nodes="0"', "Collective", 1,
          "Sidecore, 1 dedicated core, collective"),
    _main("sc-node-fpc", "sidecore", 'cores="0" nodes="1"', "FilePerCore", 1,
          "Sidecore, 1 dedicated node (SIDECORE_RANKS_PER_NODE), file per core"),
    _main("sc-thread-fpc", "sidecore", 'cores="0" nodes="0" threads="1"', "FilePerCore", 0,
          "Sidecore, background I/O thread, file per process"),
    _main("sc-sync-fpc", "sidecore", 'cores="0" nodes="0"', "FilePerCore", 0,
          "Sidecore synchronous, file per process"),
    _main("sc-sync-coll", "sidecore", 'cores="0" nodes="0"', "Collective", 0,
          "Sidecore synchronous, collective"),
]
# Every baseline, and the synchronous ones the run-time target is judged against (BP5 with
# AsyncWrite overlaps its writes with computation, as Sidecore does: it is compared too, beside
# the target).
BASELINES = ["hdf5-fpp", "phdf5", "adios2", "adios2-async"]
SYNCHRONOUS_BASELINES = ["hdf5-fpp", "phdf5", "adios2"]
# Modes whose stores run beside the simulation, where an idle fraction means something.
OVERLAPPED = ("sc-core-fpc", "sc-core-alloc", "sc-core-coll", "sc-node-fpc", "sc-thread-fpc")
# The server's closing line at finalize: "... X bytes processed, T s in stores; ..." (before
# 5747e4b: "... X bytes stored in T s; ...").
SERVER_LINE = re.compile(r"server (\d+): (\d+) iterations, (\d+) blocks, (\d+) bytes "
                         r"(?:processed, ([0-9.eE+-]+) s in stores|stored in ([0-9.eE+-]+) s); "
                         r"buffer high water (\d+) bytes")


def equal_configs(procs, clients):
    """The same global domain on `procs` processes in all: dedicated cores take theirs from the
    simulation. When `procs` equals the main matrix's clients, its baselines, synchronous and
    thread modes already are that comparison and are not run twice."""
    if procs < 2:
        return []
    out = []
    if procs != clients:
        for c in CONFIGS:
            if c.extra == 0:
                out.append(c._replace(name="np%d-%s" % (procs, c.name), group="equal",
                                      clients=procs))
    for c in CONFIGS:
        if c.name in ("sc-core-fpc", "sc-core-coll"):
            out.append(c._replace(name="np%d-%s" % (procs, c.name), group="equal",
                                  clients=procs - 1,
                                  notes="%s; %d simulation rank%s + 1 core = %d processes" % (
                                      c.notes, procs - 1, "s" if procs > 2 else "", procs)))
    return out


def equal_name(procs, clients, base):
    """The configuration that runs `base` on `procs` processes in the equal comparison."""
    if base.startswith("sc-core"):
        return "np%d-%s" % (procs, base)
    return base if procs == clients else "np%d-%s" % (procs, base)


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


# The folder of the sidecore Python module built beside the proxy (<build>/python), set by main().
SIDECORE_MODULE_DIR = None


@functools.lru_cache(maxsize=None)
def sidecore_module():
    """The sidecore Python module of the build under test: its read API reads Sidecore's output
    back, whichever file mode wrote it."""
    if SIDECORE_MODULE_DIR and SIDECORE_MODULE_DIR not in sys.path:
        sys.path.insert(0, SIDECORE_MODULE_DIR)
    try:
        import sidecore
    except ImportError as e:
        sys.exit("reading Sidecore's output back needs the sidecore Python module of the build "
                 "(%s): configure it with -DSIDECORE_BUILD_PYTHON=ON (bench/proxy/run.sh and "
                 "scripts/python_env.sh do); import failed: %s" % (SIDECORE_MODULE_DIR, e))
    return sidecore


def read_back(config, out, meta, phase, name, master=False):
    """One variable of one phase as the back-end stored it, as a global array."""
    import h5py
    backend = config.backend
    local, global_, grid = meta["local"], meta["global"], meta["rank_grid"]
    if backend == "phdf5":
        with h5py.File(os.path.join(out, "coll_p%04d.h5" % phase), "r") as f:
            return f[name][...]
    if backend == "sidecore" and not master:
        # Sidecore's own reader (the read API, docs/blocks.md): one reader of every file mode.
        with sidecore_module().read_output(os.path.join(out, "proxy"), phase) as o:
            assert o.complete, "iteration %d of %s is incomplete" % (phase, out)
            return o.read(name, dtype=o.variables[name][0])
    if backend == "sidecore":
        # The master file of virtual datasets (FilePerCore), read as any HDF5 program would.
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
    if config.backend == "none" or meta["phases"] == 0:
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
    if "density" in meta["variables"]:
        got = read_back(config, out, meta, phase, "density")
        result["density_equal"] = bool(np.array_equal(got, 1.0 / (1.0 + 0.01 * expected)))
    if config.backend == "sidecore" and config.file_mode == "FilePerCore":
        # The per-iteration master file must show the same array, where there is one.
        if os.path.exists(os.path.join(out, "proxy_It%d.h5" % phase)):
            got = read_back(config, out, meta, phase, "temperature", master=True)
            result["master_view_equal"] = bool(np.array_equal(got, expected))
        else:
            result["master_file"] = "absent"
    return result


def run_shape(config, args):
    """Simulation ranks, cells per rank and global cells (z, y, x) of one configuration."""
    if config.group == "main":
        clients = args.clients
        local = list(args.grid)
        global_ = [g * n for g, n in zip(rank_grid(clients), local)]
        return clients, local, global_
    clients = config.clients
    global_ = list(args.equal_global)
    dims = rank_grid(clients)
    if any(g % d for g, d in zip(global_, dims)):
        raise SystemExit("the global domain %s does not split over %d ranks" % (global_, clients))
    return clients, [g // d for g, d in zip(global_, dims)], global_


def parse_servers(text):
    return [{"server": int(m[0]), "iterations": int(m[1]), "blocks": int(m[2]),
             "bytes": int(m[3]), "store_seconds": float(m[4] or m[5]),
             "buffer_high_water": int(m[6])}
            for m in SERVER_LINE.findall(text)]


# Timers of ADIOS2's BP5 profile (`<file>.bp/profiling.json`, on by default) that tell where a
# phase's visible time goes: BS_WaitOnAsync, the wait in begin_step for the previous step's
# asynchronous write; ES, the whole end_step (with AsyncWrite, the copy of the deferred puts
# into a new buffer, ES_CloseTS, and the start of the write thread); DC_WaitOnAsync1, the wait in
# close for the last step's write.
BP5_TIMERS = ("BS", "BS_WaitOnAsync", "ES", "ES_CloseTS", "ES_WriteData", "DC_WaitOnAsync1")


def bp5_profile(out, ranks):
    """Per rank, the BP5 timers above in seconds (summed over the run), where present."""
    found = []
    for rank in range(ranks):
        path = os.path.join(out, "bp5_r%05d.bp" % rank, "profiling.json")
        try:
            with open(path) as f:
                entries = json.load(f)
        except (OSError, ValueError):
            return None
        entry = entries[0] if isinstance(entries, list) and entries else {}
        found.append({k: entry[k + "_mus"] * 1e-6 for k in BP5_TIMERS if k + "_mus" in entry})
    return found


def run_one(config, args, rep, workdir, target):
    out = os.path.join(workdir, "%s_rep%d" % (config.name, rep))
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    json_path = os.path.join(workdir, "%s_rep%d.json" % (config.name, rep))
    clients, local, global_ = run_shape(config, args)
    cmd = [args.mpirun] + args.mpirun_flags.split() + ["-np", str(clients + config.extra)]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # Benchmarks leave no run report behind (docs/observability.md).
    env.setdefault("SIDECORE_REPORT", "off")
    if "nodes=\"1\"" in (config.dedicated or ""):
        cmd += ["-x", "SIDECORE_RANKS_PER_NODE=%d" % clients]
    if config.group == "main":
        extents = ["--grid", ",".join(str(v) for v in reversed(local))]
    else:
        extents = ["--global", ",".join(str(v) for v in reversed(global_))]
    cmd += [args.proxy] + extents + [
        "--iterations", str(args.iterations), "--write-period", str(args.write_period),
        "--sweeps", str(args.sweeps), "--backend", config.backend, "--output", out,
        "--json", json_path] + list(config.proxy_args)
    if config.backend == "sidecore":
        # The servers' store counters are printed at finalize, at level info.
        env["SIDECORE_LOG_LEVEL"] = "info"
        xml = os.path.join(workdir, "%s.xml" % config.name)
        buffer_bytes = args.buffer_phases * clients * ghosted_phase_bytes(local) + (16 << 20)
        write_xml(xml, config.dedicated, config.file_mode, out, buffer_bytes, local, global_)
        cmd += ["--xml", xml]
    load = os.getloadavg()[0]
    started = time.time()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    wall = time.time() - started
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s\n%s" % (" ".join(cmd), proc.returncode,
                                                         proc.stdout, proc.stderr))
    with open(json_path) as f:
        meta = json.load(f)
    meta["config"] = config.name
    meta["group"] = config.group
    meta["processes"] = clients + config.extra
    meta["target"] = target
    meta["rep"] = rep
    meta["command"] = " ".join(cmd)
    meta["wall_time"] = wall
    meta["load_average"] = load
    meta["servers"] = parse_servers(proc.stdout + proc.stderr)
    meta["files"], meta["bytes_on_disk"] = tree_size(out)
    if config.backend.startswith("adios2"):
        meta["bp5_profile"] = bp5_profile(out, clients)
    if config.backend == "sidecore":
        meta["buffer_bytes"] = buffer_bytes
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


def memcpy_cold_bandwidth(nbytes, repeats=5):
    """A copy into memory never touched before (a fresh mapping each time: every page is
    faulted in and zeroed by the kernel during the copy), as into a newly allocated buffer."""
    import mmap
    src = np.ones(nbytes // 8)
    best = float("inf")
    for _ in range(repeats):
        fresh = mmap.mmap(-1, src.nbytes)
        dst = np.frombuffer(fresh, dtype=src.dtype)
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
        del dst
        fresh.close()
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


def base_name(name):
    """The main matrix's name of a configuration of the same-process-count comparison."""
    return re.sub(r"^np\d+-", "", name)


def reference_of(name, names):
    """The no-output run a configuration's run time is compared with."""
    if name.startswith("np"):
        own = name.split("-", 1)[0] + "-none"
        if own in names:
            return own
    return "none"


def summarize(runs):
    by_config = {}
    for run in runs:
        by_config.setdefault(run["config"], []).append(run)
    references = {}
    for name, group in by_config.items():
        if name == "none" or name.endswith("-none"):
            references[name] = {r["rep"]: max(r["total_time"]) for r in group}
    summary = {}
    for name, group in by_config.items():
        reference = references.get(reference_of(name, by_config), {})
        per_run = []
        for r in group:
            w = np.array(r["write_time"])
            m = np.array(r["memcpy_time"])
            total = max(r["total_time"])
            servers = r.get("servers") or []
            store_s = sum(sv["store_seconds"] for sv in servers)
            store_b = sum(sv["bytes"] for sv in servers)
            idle = None
            if servers and base_name(name) in OVERLAPPED:
                busy = statistics.mean(sv["store_seconds"] for sv in servers)
                idle = max(0.0, 1.0 - busy / total)
            phases = w.shape[-1] if w.size else 0
            profile = r.get("bp5_profile") or []
            waits = [p["BS_WaitOnAsync"] for p in profile if "BS_WaitOnAsync" in p]
            ends = [p["ES"] for p in profile if "ES" in p]
            peak = max((sv["buffer_high_water"] for sv in servers), default=None)
            per_run.append({
                "write_mean": float(w.mean()) if w.size else 0.0,
                # Computation between two write phases (the slowest rank's), and what a writer
                # keeping pace with it has to store per second.
                "compute_per_phase": max(r["compute_time"]) / phases if phases else None,
                # Minor page faults the simulation's thread took inside the back-end's calls.
                "faults_per_phase": float(np.mean(r["write_faults"]))
                if r.get("write_faults") else None,
                # Sidecore: the part of the visible write spent in damaris_end_iteration.
                "end_iteration_mean": float(np.mean(r["end_iteration_time"]))
                if r.get("end_iteration_time") else None,
                "bp5_wait": statistics.mean(waits) / phases if waits and phases else None,
                "bp5_end_step": statistics.mean(ends) / phases if ends and phases else None,
                "buffer_peak_fraction": peak / r["buffer_bytes"]
                if peak is not None and r.get("buffer_bytes") else None,
                # The first phase also pays for cold pages (the back-end's buffer, the file's
                # first blocks): shown apart from the steady phases that follow it.
                "write_first": float(w[:, 0].mean()) if w.size else 0.0,
                "write_steady": float(w[:, 1:].mean()) if w.shape[-1] > 1 else None,
                "write_max": float(w.max()) if w.size else 0.0,
                "memcpy_mean": float(m.mean()) if m.size else 0.0,
                "total": total,
                "loop": max(r["loop_time"]),
                "flush": max(r["flush_time"]),
                "ratio_to_none": total / reference[r["rep"]] if r["rep"] in reference else None,
                "files": r["files"],
                "bytes": r["bytes_on_disk"],
                "server_store_Bps": store_b / store_s if store_s > 0 else None,
                "server_idle_fraction": idle,
            })
        med = lambda key: statistics.median(p[key] for p in per_run if p[key] is not None)
        s = {key: med(key) for key in per_run[0] if any(p[key] is not None for p in per_run)}
        s["write_max_all"] = max(p["write_max"] for p in per_run)
        # min, median and max over repetitions of the per-run mean visible write.
        s["write_spread"] = [min(p["write_mean"] for p in per_run), s["write_mean"],
                             max(p["write_mean"] for p in per_run)]
        s["runs"] = len(per_run)
        s["processes"] = group[0]["processes"]
        s["group"] = group[0]["group"]
        s["write_over_memcpy"] = s["write_mean"] / s["memcpy_mean"] if s["memcpy_mean"] else None
        phase_bytes = group[0]["bytes_per_rank_per_phase"] * group[0]["ranks"]
        s["bytes_per_phase"] = phase_bytes
        s["visible_throughput"] = phase_bytes / s["write_mean"] if s["write_mean"] > 0 else None
        checks = [r["check"] for r in group if r.get("check")]
        s["check"] = checks[0] if checks else None
        summary[name] = s
    return summary


def peer_ratios(runs):
    """For each overlapped Sidecore mode and each baseline: the baseline's visible write over
    Sidecore's, within each repetition (one shuffled round of every configuration), as
    [min, median, max] over repetitions."""
    by_config = {}
    for r in runs:
        w = np.array(r["write_time"])
        by_config.setdefault(r["config"], {})[r["rep"]] = float(w.mean()) if w.size else 0.0
    out = {}
    for sc in OVERLAPPED:
        for peer in BASELINES:
            if sc not in by_config or peer not in by_config:
                continue
            values = [by_config[peer][rep] / by_config[sc][rep]
                      for rep in sorted(set(by_config[sc]) & set(by_config[peer]))
                      if by_config[sc][rep] > 0]
            if values:
                out.setdefault(sc, {})[peer] = [min(values), statistics.median(values),
                                                max(values)]
    return out


def goals(summary, procs, clients, ratios=None):
    """The targets, evaluated on one write target of this run: visible write at least 20 times
    below every baseline's (median of the per-repetition ratios when `ratios` is given, else
    the ratio of the medians), the copy near a memcpy, and the run times."""
    out = []
    best_sync = min(((summary[b]["total"], b) for b in SYNCHRONOUS_BASELINES if b in summary),
                    default=None)
    best_any = min(((summary[b]["total"], b) for b in BASELINES if b in summary), default=None)
    for sc in OVERLAPPED:
        if sc not in summary:
            continue
        w = summary[sc]["write_mean"]
        for base in BASELINES:
            need = 20.0
            if base in summary:
                ratio = summary[base]["write_mean"] / w
                if ratios and base in ratios.get(sc, {}):
                    ratio = ratios[sc][base][1]
                out.append({"sidecore": sc, "target": "visible write: %s / sidecore >= %g" %
                            (base, need), "value": ratio, "met": ratio >= need})
        ratio = summary[sc]["write_over_memcpy"]
        out.append({"sidecore": sc, "target": "visible write / memcpy of same bytes <= 1.2",
                    "value": ratio, "met": ratio is not None and ratio <= 1.2})
        if best_sync is None:
            continue
        for best, kind in ((best_sync, "synchronous baseline"),
                           (best_any, "of all baselines, asynchronous BP5 included")):
            more = summary[sc]["processes"] - summary[best[1]]["processes"]
            ratio = summary[sc]["total"] / best[0]
            label = "same number of processes" if more == 0 else "Sidecore uses %d more" % more
            out.append({"sidecore": sc, "target": "total run time / best %s (%s; %s) "
                        "<= 1" % (kind, best[1], label), "value": ratio, "met": ratio <= 1.0})
    # The run-time target proper: a dedicated core taken from the same processes.
    for pool, kind in ((SYNCHRONOUS_BASELINES, "synchronous baseline"),
                       (BASELINES, "of all baselines, asynchronous BP5 included")):
        bases = [(summary[n]["total"], n) for n in
                 (equal_name(procs, clients, b) for b in pool) if n in summary]
        if not bases:
            continue
        best = min(bases)
        for sc in ("sc-core-fpc", "sc-core-coll"):
            name = equal_name(procs, clients, sc)
            if name in summary:
                ratio = summary[name]["total"] / best[0]
                out.append({"sidecore": name, "target": "total run time / best %s "
                            "(%s) at %d processes <= 1" % (kind, best[1], procs), "value": ratio,
                            "met": ratio <= 1.0})
    return out


def fmt_ms(seconds):
    return "%.2f" % (seconds * 1e3)


def fmt(value, pattern):
    return pattern % value if value is not None else "-"


def fmt_mbps(rate):
    return "%.0f" % (rate / 1e6) if rate else "-"


def fmt_pct(fraction):
    return "%.0f%%" % (100 * fraction) if fraction is not None else "-"


def verdict_of(check):
    if check is None:
        return "-"
    ok = (check["temperature_equal"] and check.get("pressure_equal", True)
          and check.get("density_equal", True))
    verdict = "identical" if ok else "DIFFER (%.3g)" % check["temperature_max_abs_diff"]
    if check.get("master_view_equal") is False:
        verdict += "; master file wrong"
    if check.get("master_file") == "absent":
        verdict += "; no master file"
    return verdict


def ordered(summary, configs):
    return [c for c in configs if c.name in summary]


def fmt_spread(values, pattern):
    return " – ".join(pattern % v for v in values)


def peer_section(doc, configs):
    """The headline: visible write per phase of Sidecore and of every baseline, and their
    ratios within each repetition, as min – median – max."""
    cfg, wts = doc["setup"], doc["write_targets"]
    memcpy_Bps = doc["machine"]["memcpy_Bps"]
    lines = ["## Visible write per phase: Sidecore against the baselines", "",
             "Each repetition runs every configuration once in a new random order, so the "
             "configurations alternate and share the machine's load alike. Visible write: mean "
             "over ranks and phases of one run, then min – median – max over the %d "
             "repetitions; *first* and *steady*: the first phase and the mean of the others "
             "(medians). *memcpy*: the same bytes copied in the same process after the phase, "
             "into a buffer already touched. *page faults*: minor faults the simulation's "
             "thread took inside the back-end's calls, per rank and phase (median of the "
             "means; one per 4 KiB page of memory the back-end mapped and touched for the "
             "first time)." %
             cfg["reps"], ""]
    for t in wts:
        s = wts[t]["summary"]
        ratios = wts[t].get("ratios") or {}
        rank_bytes = None
        for c in ordered(s, configs):
            if s[c.name].get("bytes_per_phase") and c.group == "main":
                rank_bytes = s[c.name]["bytes_per_phase"] / cfg["clients"]
                break
        lines += ["### `%s`" % t, ""]
        if rank_bytes:
            lines += ["%.1f MiB per rank and phase: %.2f ms at the memcpy rate of this run." % (
                rank_bytes / 2**20, rank_bytes / memcpy_Bps * 1e3), ""]
        lines += ["| configuration | visible write (ms) min – median – max | first (ms) | "
                  "steady (ms) | memcpy (ms) | write / memcpy | page faults in the write |",
                  "|---|---|---|---|---|---|---|"]
        for c in ordered(s, configs):
            if c.group != "main" or c.name == "none" or c.name.startswith("sc-sync"):
                continue
            r = s[c.name]
            lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                c.name, fmt_spread([v * 1e3 for v in r["write_spread"]], "%.2f")
                if r.get("write_spread") else fmt_ms(r["write_mean"]),
                fmt_ms(r["write_first"]) if r.get("write_first") is not None else "-",
                fmt_ms(r["write_steady"]) if r.get("write_steady") is not None else "-",
                fmt_ms(r["memcpy_mean"]), fmt(r.get("write_over_memcpy"), "%.2f"),
                fmt(r.get("faults_per_phase"), "%.0f")))
        lines.append("")
        if ratios:
            peers = [b for b in BASELINES if any(b in v for v in ratios.values())]
            lines += ["Baseline's visible write over Sidecore's, within each repetition "
                      "(min – median – max; the target is 20 or more):", "",
                      "| Sidecore mode | " + " | ".join("vs %s" % b for b in peers) + " |",
                      "|---|" + "---|" * len(peers)]
            for sc in OVERLAPPED:
                if sc in ratios:
                    lines.append("| %s | %s |" % (sc, " | ".join(
                        fmt_spread(ratios[sc][b], "%.1f") if b in ratios[sc] else "-"
                        for b in peers)))
            lines.append("")
        # Where the time goes: the storage rate a writer needs to keep pace, BP5's own wait for
        # its previous step, and how full the Sidecore buffer got.
        phase_bytes = rank_bytes * cfg["clients"] if rank_bytes else None
        computes = [s[n]["compute_per_phase"] for n in ("none", "adios2-async")
                    if s.get(n, {}).get("compute_per_phase")]
        if phase_bytes and computes:
            lines += ["A write phase is %.1f MiB from all ranks after %.3f s of computation "
                      "(no-output run): a writer that keeps pace with one phase of buffering "
                      "has to store %.0f MB/s; `dd` with fdatasync reached %.0f MB/s on this "
                      "target." % (phase_bytes / 2**20, computes[0],
                                   phase_bytes / computes[0] / 1e6,
                                   (wts[t].get("dd_fdatasync_Bps") or 0) / 1e6), ""]
        rows = []
        for c in ordered(s, configs):
            r = s[c.name]
            if c.group != "main" or not (r.get("bp5_wait") is not None
                                         or r.get("buffer_peak_fraction") is not None
                                         or r.get("end_iteration_mean") is not None):
                continue
            rows.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                c.name, fmt_ms(r["write_mean"]),
                fmt_ms(r["bp5_wait"]) if r.get("bp5_wait") is not None else "-",
                fmt_ms(r["bp5_end_step"]) if r.get("bp5_end_step") is not None else "-",
                fmt_ms(r["end_iteration_mean"]) if r.get("end_iteration_mean") is not None
                else "-",
                fmt_pct(r.get("buffer_peak_fraction")), fmt_mbps(r.get("server_store_Bps"))))
        if rows:
            lines += ["Where the visible time goes (medians per phase): *begin_step wait*, "
                      "BP5's wait for the previous step's write (`BS_WaitOnAsync` of its "
                      "profile); *end_step*, BP5's `ES` timer (with AsyncWrite: the copy of the "
                      "deferred puts into a new buffer and the start of the write thread); "
                      "*damaris_end_iteration*, the part of Sidecore's visible write spent in "
                      "that call (the rest is in `damaris_write`); *buffer peak*, the Sidecore "
                      "shared buffer's high-water mark over its size (below 100%, no write "
                      "waited for room).", "",
                      "| configuration | visible write (ms) | begin_step wait (ms) | "
                      "end_step (ms) | damaris_end_iteration (ms) | buffer peak | store MB/s |",
                      "|---|---|---|---|---|---|---|"]
            lines += rows + [""]
    return lines


def write_markdown(path, doc, configs):
    cfg, wts = doc["setup"], doc["write_targets"]
    names = list(wts)
    first = wts[names[0]]["summary"]
    lines = ["# Proxy simulation: back-ends side by side", "",
             "Generated by `%s` on %s (host `%s`, %d cores)." % (
                 doc["command"], doc["date"], doc["machine"]["host"], doc["machine"]["cores"]) +
             (" Targets and tables re-evaluated from the same measurements by `%s`." %
              doc["reported_by"] if doc.get("reported_by") else ""),
             "",
             "Setup: %d simulation ranks, %s interior cells per rank (z,y,x), %d iterations "
             "of %d stencil sweeps, a write phase every %d, 3 variables (%.1f MiB per phase in "
             "all), %d repetitions; "
             "Sidecore modes with a dedicated core or node add one process (the machine is "
             "oversubscribed), except in the comparison at the same number of processes." % (
                 cfg["clients"], "x".join(map(str, cfg["grid"])), cfg["iterations"],
                 cfg["sweeps"], cfg["write_period"],
                 first[next(iter(first))]["bytes_per_phase"] / 2**20,
                 cfg["reps"]), "",
             "Physical limits measured in this run: memcpy %.2f GB/s%s." % (
                 doc["machine"]["memcpy_Bps"] / 1e9,
                 ", %.2f GB/s into pages never touched before (a new buffer)" %
                 (doc["machine"]["memcpy_cold_Bps"] / 1e9)
                 if doc["machine"].get("memcpy_cold_Bps") else "")]
    loads = [r["load_average"] for r in doc.get("runs", []) if "load_average" in r]
    if loads:
        lines[-1] += " Load average (1 minute) at the start of the runs: %.1f – %.1f – %.1f " \
                     "(min – median – max) on %d cores: the machine was shared." % (
                         min(loads), statistics.median(loads), max(loads),
                         doc["machine"]["cores"])
    lines.append("")
    for t in names:
        w = wts[t]
        lines.append("- Write target `%s`: %s. dd %.0f MB/s through the page cache, %.0f MB/s "
                     "with fdatasync." % (t, w["description"], (w["dd_cached_Bps"] or 0) / 1e6,
                                          (w["dd_fdatasync_Bps"] or 0) / 1e6))
    lines += ["", "Medians over repetitions. *visible write*: time the simulation spends in the "
              "back-end's calls of one write phase, per rank (mean over ranks and phases; max: "
              "worst rank and phase of all runs). *memcpy*: the same bytes copied in the same "
              "process right after the phase. *total*: loop plus flush (data stored) of the "
              "slowest rank; ratio against the no-output run of the same repetition and target. "
              "*store MB/s*: bytes the Sidecore servers stored over the time they spent in store "
              "calls. *idle*: share of the run a dedicated core, node or I/O thread spent outside "
              "store calls.", ""]

    lines += peer_section(doc, configs)

    if len(names) > 1:
        head = "| configuration | processes |"
        rule = "|---|---|"
        for key in ("visible write (ms)", "total / none", "store MB/s"):
            for t in names:
                head += " %s %s |" % (key, t)
                rule += "---|"
        lines += ["## Side by side: %s" % " and ".join("`%s`" % t for t in names), "", head, rule]
        for c in ordered(first, configs):
            row = "| %s | %d |" % (c.name, first[c.name]["processes"])
            for key, pattern, scale in (("write_mean", "%.2f", 1e3), ("ratio_to_none", "%.3f", 1),
                                        ("server_store_Bps", "%.0f", 1e-6)):
                for t in names:
                    r = wts[t]["summary"].get(c.name, {})
                    v = r.get(key)
                    row += " %s |" % (pattern % (v * scale) if v is not None else "-")
            lines.append(row)
        lines.append("")

    procs = cfg["equal_procs"]
    if procs:
        lines += ["## The same number of processes: %d" % procs, "",
                  "The same global domain (%s cells, z,y,x) on %d processes in all: the baselines "
                  "and synchronous or threaded Sidecore with %d simulation ranks, the dedicated "
                  "core with %d simulation rank(s) and 1 core. *vs best synchronous*: total run "
                  "time over the best of %s on the same target (the run-time target); *vs best "
                  "of all*: over the best of %s." % (
                      "x".join(map(str, cfg["equal_global"])), procs, procs, procs - 1,
                      ", ".join(SYNCHRONOUS_BASELINES), ", ".join(BASELINES)), "",
                  "| target | configuration | ranks + servers | visible write (ms) | total (s) | "
                  "vs best synchronous | vs best of all | idle |",
                  "|---|---|---|---|---|---|---|---|"]
        for t in names:
            s = wts[t]["summary"]
            members = [equal_name(procs, cfg["clients"], b) for b in
                       ["none"] + BASELINES + ["sc-sync-fpc", "sc-sync-coll", "sc-thread-fpc",
                                               "sc-core-fpc", "sc-core-coll"]]

            def best_of(pool):
                bases = [s[n]["total"] for n in
                         (equal_name(procs, cfg["clients"], b) for b in pool) if n in s]
                return min(bases) if bases else None
            best, best_all = best_of(SYNCHRONOUS_BASELINES), best_of(BASELINES)
            for n in members:
                if n not in s or s[n]["processes"] != procs:
                    continue
                r = s[n]
                ranks = "%d + %d" % (r["processes"] - (1 if "core" in n else 0),
                                     1 if "core" in n else 0)
                lines.append("| %s | %s | %s | %s | %.3f | %s | %s | %s |" % (
                    t, n, ranks, fmt_ms(r["write_mean"]), r["total"],
                    fmt(r["total"] / best if best else None, "%.3f"),
                    fmt(r["total"] / best_all if best_all else None, "%.3f"),
                    fmt_pct(r.get("server_idle_fraction"))))
        lines.append("")

    lines += ["## Targets", "",
              "| write target | Sidecore mode | target | value | met |",
              "|---|---|---|---|---|"]
    for t in names:
        for g in wts[t]["goals"]:
            lines.append("| %s | %s | %s | %s | %s |" % (
                t, g["sidecore"], g["target"], fmt(g["value"], "%.2f"),
                "yes" if g["met"] else "**no**"))
    lines.append("")

    for t in names:
        w, s = wts[t], wts[t]["summary"]
        lines += ["## Write target `%s`" % t, "", "Output in `%s`: %s." % (
                      w["workdir"], w["description"]), "",
                  "| configuration | procs | visible write mean (ms) | max (ms) | write / memcpy | "
                  "total (s) | total / none | flush (s) | store MB/s | idle | files | MiB on disk "
                  "| values |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for c in ordered(s, configs):
            r = s[c.name]
            lines.append("| %s | %d | %s | %s | %s | %.3f | %s | %.3f | %s | %s | %d | %.1f | %s |"
                         % (c.name, r["processes"], fmt_ms(r["write_mean"]),
                            fmt_ms(r["write_max_all"]), fmt(r["write_over_memcpy"], "%.2f"),
                            r["total"], fmt(r.get("ratio_to_none"), "%.3f"), r["flush"],
                            fmt_mbps(r.get("server_store_Bps")),
                            fmt_pct(r.get("server_idle_fraction")),
                            r["files"], r["bytes"] / 2**20, verdict_of(r.get("check"))))
        lines.append("")
    lines += ["Configurations:", ""]
    lines += ["- `%s`: %s" % (c.name, c.notes) for c in ordered(first, configs)]
    lines += ["", "Values: the temperature (and pressure) of the last phase read back from each "
              "back-end's files (h5py, adios2) and compared element by element with the field "
              "recomputed by numpy from the proxy's deterministic start. For Sidecore FilePerCore "
              "the blocks of the per-core files are placed at their `position` attribute; the "
              "master file of virtual datasets is checked separately where the mode writes one.",
              ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def throttle_mounted(mount):
    with open("/proc/mounts") as f:
        return any(line.split()[1] == mount and line.split()[2] == "fuse.throttlefs"
                   for line in f)


def throttle_description(mounted_here):
    keys = ("THROTTLE_BW", "THROTTLE_JITTER", "THROTTLE_STALLS_PER_GIB", "THROTTLE_STALL_MS",
            "THROTTLE_META_MS")
    defaults = ("125M", "0.5", "4", "50", "0")
    values = ", ".join("%s=%s" % (k[9:].lower(), os.environ.get(k, d))
                       for k, d in zip(keys, defaults))
    if not mounted_here:
        return "throttlefs mounted beforehand (bench/throttle/README.md; its parameters are " \
               "the mount's own)"
    return "throttlefs, a FUSE passthrough that delays every write by its size at a shared, " \
           "jittered bandwidth (bench/throttle/README.md; %s)" % values


def report_only(args):
    """Targets and tables again from the measurements of an earlier run, unchanged."""
    with open(args.report_only) as f:
        doc = json.load(f)
    cfg = doc["setup"]
    for target, entry in doc["write_targets"].items():
        # Summaries again from the runs, so that columns added since are filled in too.
        mine = [r for r in doc["runs"] if r["target"] == target]
        entry["summary"] = summarize(mine)
        entry["ratios"] = peer_ratios(mine)
        entry["goals"] = goals(entry["summary"], cfg["equal_procs"], cfg["clients"],
                               entry["ratios"]) if "none" in entry["summary"] else []
    doc["reported_by"] = " ".join(["bench/proxy/run_matrix.py"] + sys.argv[1:])
    out = args.out or os.path.dirname(os.path.abspath(args.report_only))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "matrix.json"), "w") as f:
        json.dump(doc, f, indent=1)
    configs = CONFIGS + equal_configs(cfg["equal_procs"], cfg["clients"])
    write_markdown(os.path.join(out, "matrix.md"), doc, configs)
    log("wrote %s/matrix.md and matrix.json from the measurements of %s" % (out, doc["date"]))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--build", default=DEFAULT_BUILD,
                   help="folder holding the proxy (default: %s, where run.sh builds it)"
                        % DEFAULT_BUILD)
    p.add_argument("--clients", type=int, default=2, help="simulation ranks")
    p.add_argument("--grid", default="96,96,96", help="interior cells per rank, x,y,z")
    p.add_argument("--iterations", type=int, default=200)
    p.add_argument("--write-period", type=int, default=20)
    p.add_argument("--sweeps", type=int, default=6,
                   help="stencil sweeps per iteration: compute per write phase (see README)")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--buffer-phases", type=int, default=8,
                   help="Sidecore buffer: this many write phases of every client")
    p.add_argument("--targets", default="disk,throttled",
                   help="write targets, in order: disk (a folder under /tmp), throttled "
                        "(throttlefs, mounted for the run unless it already is)")
    p.add_argument("--throttle-mount", default=os.environ.get("THROTTLE_MOUNT", "/tmp/throttled"),
                   help="where throttlefs is (or gets) mounted")
    p.add_argument("--equal-procs", type=int, default=None,
                   help="total processes of the same-process-count comparison (default: "
                        "--clients; 0 leaves it out)")
    p.add_argument("--workdir", default=None,
                   help="where the disk target's output goes (default: a fresh folder under "
                        "/tmp)")
    p.add_argument("--out", default=None,
                   help="results folder (default bench/proxy/results; with --quick, the workdir)")
    p.add_argument("--only", default=None, help="comma-separated configuration names")
    p.add_argument("--quick", action="store_true", help="tiny sizes: checks the harness only")
    p.add_argument("--verify-all", action="store_true", help="check values on every run")
    p.add_argument("--keep-output", action="store_true", help="keep every run's files")
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--report-only", metavar="JSON", default=None,
                   help="run nothing: re-evaluate the targets and rewrite the tables of an "
                        "earlier run's matrix.json (next to it, or in --out)")
    args = p.parse_args()
    if args.report_only:
        return report_only(args)
    args.mpirun = os.environ.get("MPIRUN", "mpirun")
    args.mpirun_flags = os.environ.get("MPIRUN_FLAGS", "--oversubscribe")
    if args.quick:
        args.grid, args.iterations, args.write_period, args.reps = "16,16,16", 6, 3, 1
    x, y, z = (int(v) for v in args.grid.split(","))
    args.grid = [z, y, x]
    args.equal_global = [g * n for g, n in zip(rank_grid(args.clients), args.grid)]
    if args.equal_procs is None:
        args.equal_procs = args.clients
    args.proxy = os.path.join(args.build, "proxy")
    global SIDECORE_MODULE_DIR
    SIDECORE_MODULE_DIR = os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(args.build))), "python")
    if not os.access(args.proxy, os.X_OK):
        sys.exit("no proxy executable in %s: build bench/proxy first (see README.md)" % args.build)
    configs = CONFIGS + equal_configs(args.equal_procs, args.clients)
    if args.only:
        wanted = args.only.split(",")
        configs = [c for c in configs if c.name in wanted or c.name == "none"
                   or c.name.endswith("-none")]
    targets = args.targets.split(",")
    for t in targets:
        if t not in ("disk", "throttled"):
            sys.exit("unknown write target %r (disk, throttled)" % t)

    probe_mib = 16 if args.quick else 512
    machine = {"host": platform.node(), "cores": os.cpu_count(),
               "memcpy_Bps": memcpy_bandwidth(probe_mib << 20)}
    # The same into fresh pages, at the size of one rank's phase.
    machine["memcpy_cold_Bps"] = memcpy_cold_bandwidth(ghosted_phase_bytes(args.grid))
    machine["load_average"] = os.getloadavg()
    log("memcpy %.2f GB/s, into fresh pages %.2f GB/s; load average %.2f %.2f %.2f" % (
        machine["memcpy_Bps"] / 1e9, machine["memcpy_cold_Bps"] / 1e9, *machine["load_average"]))

    mounted_here = False
    runs, write_targets, scratch = [], {}, []
    try:
        for target in targets:
            if target == "disk":
                workdir = args.workdir or tempfile.mkdtemp(prefix="proxy_matrix_")
                if not args.workdir:
                    scratch.append(workdir)
                description = "a folder on the local disk, behind the page cache"
            else:
                if not throttle_mounted(args.throttle_mount):
                    env = dict(os.environ, THROTTLE_MOUNT=args.throttle_mount)
                    subprocess.run(["bash", THROTTLE_SCRIPT, "mount"], env=env, check=True)
                    mounted_here = True
                workdir = tempfile.mkdtemp(prefix="proxy_matrix_", dir=args.throttle_mount)
                scratch.append(workdir)
                description = throttle_description(mounted_here)
            os.makedirs(workdir, exist_ok=True)
            entry = {"workdir": workdir, "description": description,
                     "dd_cached_Bps": dd_bandwidth(workdir, probe_mib, False),
                     "dd_fdatasync_Bps": dd_bandwidth(workdir, probe_mib, True)}
            log("target %s (%s): dd %.0f MB/s (cached) %.0f MB/s (fdatasync)" % (
                target, workdir, (entry["dd_cached_Bps"] or 0) / 1e6,
                (entry["dd_fdatasync_Bps"] or 0) / 1e6))
            mine = []
            rng = random.Random(5)
            for rep in range(args.reps):
                # A new order each repetition, so that no configuration always follows the
                # same one.
                order = list(configs)
                rng.shuffle(order)
                for config in order:
                    meta = run_one(config, args, rep, workdir, target)
                    w = np.array(meta["write_time"])
                    log("%s rep %d %-18s write %.2f ms (max %.2f)  total %.3f s  files %d%s" % (
                        target, rep, config.name, w.mean() * 1e3 if w.size else 0,
                        w.max() * 1e3 if w.size else 0, max(meta["total_time"]), meta["files"],
                        "  stored %.0f MB/s" % (sum(s["bytes"] for s in meta["servers"]) /
                                                sum(s["store_seconds"] for s in meta["servers"])
                                                / 1e6)
                        if meta["servers"] and sum(s["store_seconds"] for s in meta["servers"])
                        else ""))
                    if meta.get("check"):
                        log("    check: %s" % meta["check"])
                    mine.append(meta)
            runs += mine
            entry["summary"] = summarize(mine)
            entry["ratios"] = peer_ratios(mine)
            entry["goals"] = goals(entry["summary"], args.equal_procs, args.clients,
                                   entry["ratios"]) if "none" in entry["summary"] else []
            write_targets[target] = entry
    finally:
        if not args.keep_output and not args.quick:
            for d in scratch:
                shutil.rmtree(d, ignore_errors=True)
        if mounted_here:
            subprocess.run(["bash", THROTTLE_SCRIPT, "umount"],
                           env=dict(os.environ, THROTTLE_MOUNT=args.throttle_mount))

    doc = {
        "command": " ".join(["bench/proxy/run_matrix.py"] + sys.argv[1:]),
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": machine,
        "setup": {"clients": args.clients, "grid": args.grid, "iterations": args.iterations,
                  "write_period": args.write_period, "sweeps": args.sweeps, "reps": args.reps,
                  "buffer_phases": args.buffer_phases, "equal_procs": args.equal_procs,
                  "equal_global": args.equal_global, "targets": targets,
                  "mpirun": args.mpirun, "mpirun_flags": args.mpirun_flags},
        "write_targets": write_targets,
        "runs": runs,
    }
    if args.out is None:
        args.out = os.path.join(scratch[0] if scratch else tempfile.mkdtemp(), "results") \
            if args.quick else os.path.join(HERE, "results")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "matrix.json"), "w") as f:
        json.dump(doc, f, indent=1)
    write_markdown(os.path.join(args.out, "matrix.md"), doc, configs)
    bad = ["%s/%s" % (t, n) for t, w in write_targets.items() for n, s in w["summary"].items()
           if s.get("check") and not (s["check"]["temperature_equal"]
                                      and s["check"].get("pressure_equal", True)
                                      and s["check"].get("density_equal", True)
                                      and s["check"].get("master_view_equal", True))]
    log("wrote %s/matrix.md and matrix.json" % args.out)
    if bad:
        log("values differ for: %s" % ", ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
