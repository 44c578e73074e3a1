#!/usr/bin/env python3
"""Runs the output benchmark (issue 4 targets) and writes results/output.md and output.json.

Part A, compression: one client writing a smooth 3D field (three double variables) and one
dedicated core storing it with HDF5 FilePerCore, with no compression, lossless deflate +
shuffle, and precision reduction (half, single) + deflate, plus the null store as a reference.
Per run: client-visible write time per iteration (damaris_write + damaris_end_iteration), the
compression ratio from the files' attributes and from their sizes, and for the lossy variants
the largest error against the uncompressed run of the same repetition (read with h5py).

Part B, throughput: bytes the server stored per second spent in stores (its log line at
finalize, uncompressed HDF5), beside dd to the same directory, page cache and fdatasync, in the
same run, interleaved, several repetitions.

Usage: run_output.py [--build DIR | --exe PATH] [--reps N] [--iterations N] [--compute-ms MS]
                     [--dims NZ,NY,NX] [--throughput-reps N] [--workdir DIR] [--out DIR]
                     [--quick] [--no-wait]
Environment: MPIRUN (mpirun), MPIRUN_FLAGS (--oversubscribe). As root it sets
OMPI_ALLOW_RUN_AS_ROOT for its own runs. Needs h5py and numpy (build-bench/venv/bin/python, made
by bench/proxy/run.sh).
"""
import argparse
import datetime
import json
import os
import platform
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
MIB = 1 << 20
VARIABLES = ("temperature", "pressure", "velocity")
OTHER_BENCHMARKS = ("run_micro.sh", "run_matrix.py")

# name -> (store type, options other than FileMode and FilesPath, description)
VARIANTS = {
    "null": ("null", {}, "null store (discards): client cost without any storage"),
    "none": ("HDF5", {"Compression": "none"}, "HDF5, no compression"),
    "deflate": ("HDF5", {"Compression": "deflate:4", "Shuffle": "true"},
                "HDF5, shuffle + deflate:4 (lossless)"),
    "single": ("HDF5", {"Compression": "deflate:4", "Shuffle": "true", "Precision": "single"},
               "HDF5, 32-bit floats + shuffle + deflate:4"),
    "half": ("HDF5", {"Compression": "deflate:4", "Shuffle": "true", "Precision": "half"},
             "HDF5, 16-bit floats + shuffle + deflate:4"),
}

# The server's closing line at finalize: "... X bytes processed, T s in stores; ..." (before
# 5747e4b: "... X bytes stored in T s; ..."; both are read, for --exe of an older build).
SUMMARY = re.compile(r"server (\d+): (\d+) iterations, (\d+) blocks, (\d+) bytes "
                     r"(?:processed, ([0-9.eE+-]+) s in stores|stored in ([0-9.eE+-]+) s); "
                     r"buffer high water (\d+) bytes")
ITERATION = re.compile(r"iteration (\d+) stored: (\d+) blocks, (\d+) bytes in ([0-9.eE+-]+) s")
# "HDF5 store: wrote F: 786432 bytes of data stored in 1.52 MiB (compression ratio ...)": each
# size in bytes below 1 MiB, else in MiB or TiB with two decimals.
SIZE = r"(\d+ bytes|[0-9.]+ [MT]iB)"
FILE_RATIO = re.compile(r"HDF5 store: wrote (\S+_Pr\d+\.h5): " + SIZE + " of data stored in "
                        + SIZE)
DD_TIME = re.compile(r"(\d+) bytes .* copied, ([0-9.]+) s")


def seconds_in_stores(summary):
    """T of a SUMMARY match, in either wording."""
    return float(summary.group(5) or summary.group(6))


def size_of(text):
    """Bytes of a size as the HDF5 store logs it: "786432 bytes", "1.52 MiB", "1.00 TiB"."""
    number, unit = text.split()
    return int(number) if unit == "bytes" else float(number) * (1 << (20 if unit == "MiB" else 40))


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def quartiles(values):
    q = statistics.quantiles(values, n=4) if len(values) >= 2 else [values[0]] * 3
    return q[0], q[2]


def others_running():
    found = []
    for name in OTHER_BENCHMARKS:
        r = subprocess.run(["pgrep", "-f", name], capture_output=True, text=True)
        pids = [p for p in r.stdout.split() if int(p) != os.getpid()]
        if pids:
            found.append(name)
    return found


def wait_for_quiet_machine(enabled):
    """Other people's timing benchmarks share the two cores: do not run beside them."""
    if not enabled:
        return
    announced = False
    while True:
        busy = others_running()
        if not busy:
            return
        if not announced:
            print(f"run_output: waiting for {', '.join(busy)} to finish...", flush=True)
            announced = True
        time.sleep(30)


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(v) for v in f.read().split()[:3]]


def sync_disk():
    subprocess.run(["sync"], check=True)


class Runner:
    def __init__(self, args):
        self.args = args
        self.exe = args.exe or os.path.join(args.build, "bench", "output", "sidecore_output_write")
        if not os.access(self.exe, os.X_OK):
            sys.exit(f"run_output: {self.exe} not found; build the target sidecore_output_write")
        with open(os.path.join(HERE, "output.xml.in")) as f:
            self.template = f.read()
        self.mpirun = [os.environ.get("MPIRUN", "mpirun")] + shlex.split(
            os.environ.get("MPIRUN_FLAGS", "--oversubscribe"))
        self.env = dict(os.environ)
        if os.geteuid() == 0:
            self.env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        self.env["SIDECORE_LOG_LEVEL"] = "debug"  # per-iteration store times and ratios
        # Benchmarks leave no run report behind (docs/observability.md).
        self.env.setdefault("SIDECORE_REPORT", "off")
        nz, ny, nx = args.dims
        self.bytes_per_iteration = 8 * len(VARIABLES) * nx * ny * nz
        # The buffer holds 2.5 iterations (at least 2, as the issue asks) plus slack.
        self.buffer = self.bytes_per_iteration * 5 // 2 + 16 * MIB
        # dd writes 16 MiB blocks (bs=16M) when an iteration is a whole number of them, else
        # blocks of one variable's size (small --dims, --quick).
        self.dd_block = (16 * MIB if self.bytes_per_iteration % (16 * MIB) == 0
                         else self.bytes_per_iteration // len(VARIABLES))

    def xml(self, path, variant, output):
        store, options, _ = VARIANTS[variant]
        lines = []
        if store == "HDF5":
            options = dict({"FileMode": "FilePerCore", "FilesPath": output + "/"}, **options)
            lines = [f'      <option key="{k}">{v}</option>' for k, v in options.items()]
        nz, ny, nx = self.args.dims
        text = (self.template.replace("@NX@", str(nx)).replace("@NY@", str(ny))
                .replace("@NZ@", str(nz)).replace("@BUFFER@", str(self.buffer))
                .replace("@STORE@", store).replace("@OPTIONS@", "\n".join(lines)))
        with open(path, "w") as f:
            f.write(text)

    def run(self, variant, directory, iterations, compute_ms, compute_mode):
        """One mpirun: 1 client + 1 dedicated core. Returns the client's JSON and the log."""
        os.makedirs(directory, exist_ok=True)
        output = os.path.join(directory, "out")
        xml = os.path.join(directory, "output.xml")
        result = os.path.join(directory, "client.json")
        self.xml(xml, variant, output)
        command = self.mpirun + ["-np", "2", self.exe, xml, "--iterations", str(iterations),
                                 "--compute-ms", str(compute_ms), "--compute", compute_mode,
                                 "--json", result, "--label", variant]
        sync_disk()  # no run pays for the previous run's writeback
        p = subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=1800)
        if p.returncode != 0:
            sys.exit(f"run_output: {' '.join(command)} failed ({p.returncode}):\n"
                     f"{p.stdout}\n{p.stderr}")
        with open(result) as f:
            client = json.load(f)
        log = p.stderr + p.stdout
        summary = SUMMARY.search(log)
        if not summary:
            sys.exit(f"run_output: no server summary in the log of {variant}:\n{log}")
        client["server"] = {
            "iterations": int(summary.group(2)), "blocks": int(summary.group(3)),
            "bytes_stored": int(summary.group(4)), "seconds_in_stores": seconds_in_stores(summary),
            "buffer_high_water": int(summary.group(7)),
            "store_seconds_per_iteration": [float(m.group(4)) for m in ITERATION.finditer(log)],
        }
        client["log_ratios"] = [(size_of(m.group(2)), size_of(m.group(3)))
                                for m in FILE_RATIO.finditer(log)]
        client["output"] = output
        client["variant"] = variant
        return client

    @staticmethod
    def file_facts(output, iterations):
        """Compression ratio from the per-core files' attributes and from their sizes."""
        raw = stored = size = 0
        attribute_ratios = []
        for it in range(iterations):
            for name in sorted(os.listdir(output)):
                if not re.fullmatch(rf"output_It{it}_Pr\d+\.h5", name):
                    continue
                path = os.path.join(output, name)
                with h5py.File(path, "r") as f:
                    raw += int(f.attrs["raw_bytes"])
                    stored += int(f.attrs["stored_bytes"])
                    attribute_ratios.append(float(f.attrs["compression_ratio"]))
                size += os.path.getsize(path)
        return {"raw_bytes": raw, "stored_bytes": stored, "file_bytes": size,
                "ratio_attributes": raw / stored if stored else None,
                "ratio_file_sizes": raw / size if size else None,
                "ratio_attribute_min": min(attribute_ratios) if attribute_ratios else None,
                "ratio_attribute_max": max(attribute_ratios) if attribute_ratios else None}

    @staticmethod
    def global_array(output, iteration, variable):
        """The global array assembled from every block of every per-core file (positions from
        the blocks' attributes), so the check does not depend on the master file."""
        pieces = []
        for name in os.listdir(output):
            if not re.fullmatch(rf"output_It{iteration}_Pr\d+\.h5", name):
                continue
            with h5py.File(os.path.join(output, name), "r") as f:
                # <variable>/P<source> with one block per client, <variable>/P<source>/B<block>
                # with several (docs/hdf5_store.md).
                for source in f[variable].values():
                    blocks = [source] if isinstance(source, h5py.Dataset) else source.values()
                    for d in blocks:
                        pieces.append((tuple(d.attrs["position"]), d[...],
                                       tuple(d.attrs["global_dimensions"])))
        shape = pieces[0][2]
        out = np.zeros(shape, dtype=np.float64)
        for position, data, _ in pieces:
            index = tuple(slice(p, p + n) for p, n in zip(position, data.shape))
            out[index] = data
        return out, pieces[0][1].dtype

    def errors(self, reference, output, iterations):
        """Largest absolute and relative error of every variable over every iteration."""
        result = {}
        for variable in VARIABLES:
            worst_abs = worst_rel = worst_rel_normal = 0.0
            stored_type = None
            for it in range(iterations):
                expected, _ = self.global_array(reference, it, variable)
                got, stored_type = self.global_array(output, it, variable)
                diff = np.abs(got - expected)
                worst_abs = max(worst_abs, float(diff.max()))
                scale = np.maximum(np.abs(expected), np.finfo(np.float64).tiny)
                relative = diff / scale
                worst_rel = max(worst_rel, float(relative.max()))
                # 16-bit floats keep a relative error of 2^-11 only down to 2^-14 (their
                # smallest normal number); below, the spacing is fixed (2^-24) and the relative
                # error of values crossing zero grows.
                normal = np.abs(expected) >= 2.0 ** -14
                if normal.any():
                    worst_rel_normal = max(worst_rel_normal, float(relative[normal].max()))
            result[variable] = {"max_abs": worst_abs, "max_rel": worst_rel,
                                "max_rel_normal": worst_rel_normal,
                                "stored_type": str(stored_type)}
        return result


def dd(directory, block, count, fdatasync):
    target = os.path.join(directory, "f")
    command = ["dd", "if=/dev/zero", f"of={target}", f"bs={block}", f"count={count}"]
    if fdatasync:
        command.append("conv=fdatasync")
    sync_disk()
    p = subprocess.run(command, capture_output=True, text=True, check=True)
    m = DD_TIME.search(p.stderr)
    os.remove(target)
    sync_disk()
    return {"bytes": int(m.group(1)), "seconds": float(m.group(2)),
            "bytes_per_second": int(m.group(1)) / float(m.group(2))}


def dd_paced(directory, block, files, blocks_per_file, pause_s):
    """dd with the server's pattern: one file of one iteration's bytes at a time, with the
    client's compute phase between them (diagnostic: separates pacing from HDF5)."""
    sync_disk()
    total_bytes = 0
    seconds = 0.0
    names = []
    for i in range(files):
        target = os.path.join(directory, f"paced_{i}")
        names.append(target)
        p = subprocess.run(["dd", "if=/dev/zero", f"of={target}", f"bs={block}",
                            f"count={blocks_per_file}"], capture_output=True, text=True,
                           check=True)
        m = DD_TIME.search(p.stderr)
        total_bytes += int(m.group(1))
        seconds += float(m.group(2))
        time.sleep(pause_s)
    for name in names:
        os.remove(name)
    sync_disk()
    return {"bytes": total_bytes, "seconds": seconds, "bytes_per_second": total_bytes / seconds}


def fsync_calls(runner, directory):
    """Counts fsync-like system calls of a short uncompressed run (strace -f over mpirun)."""
    if not shutil.which("strace"):
        return None
    os.makedirs(directory, exist_ok=True)
    xml = os.path.join(directory, "output.xml")
    runner.xml(xml, "none", os.path.join(directory, "out"))
    trace = os.path.join(directory, "strace.txt")
    command = (["strace", "-f", "-qq", "-e",
                "trace=fsync,fdatasync,sync,syncfs,sync_file_range,msync",
                "-o", trace] + runner.mpirun +
               ["-np", "2", runner.exe, xml, "--iterations", "2", "--compute-ms", "50",
                "--json", os.path.join(directory, "client.json")])
    p = subprocess.run(command, env=runner.env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        return None
    with open(trace) as f:
        pattern = re.compile(r"\b(fsync|fdatasync|syncfs|sync_file_range|msync|sync)\(")
        calls = [line for line in f if pattern.search(line)]
    return {"calls": len(calls), "examples": [c.strip() for c in calls[:5]]}


STRACE_LINE = re.compile(r"^(\w+)\((.*)\)\s+=\s+(-?\d+)(?:\s.*?)?\s<([0-9.]+)>$")


def file_kind(path):
    # The store writes each HDF5 file under a temporary name (<file>.part), renamed when done.
    name = re.sub(r"\.part$", "", os.path.basename(path))
    if re.search(r"_It\d+_Pr\d+\.h5$", name):
        return "per-core files"
    if re.search(r"_It\d+\.h5$", name):
        return "master files"
    if ".xmf" in name:
        return "XDMF"
    return None


def time_breakdown(runner, directory, iterations):
    """Where the dedicated core's time in stores goes: one uncompressed stream run under
    `strace -ff -T`, the time of every system call on the output files summed per kind of file
    (write and pwrite64: the copy into the page cache; the rest: openat, close, ftruncate,
    rename...), beside the time in stores from the log. strace slows each call by a few
    microseconds; the big writes are what matters."""
    if not shutil.which("strace"):
        return None
    os.makedirs(directory, exist_ok=True)
    output = os.path.join(directory, "out")
    xml = os.path.join(directory, "output.xml")
    runner.xml(xml, "none", output)
    prefix = os.path.join(directory, "trace")
    command = (["strace", "-ff", "-T", "-qq", "-e",
                "trace=openat,write,writev,pwrite64,pwritev,close,ftruncate,fallocate,rename,"
                "unlink,lseek",
                "-o", prefix] + runner.mpirun +
               ["-np", "2", runner.exe, xml, "--iterations", str(iterations), "--compute-ms", "0",
                "--compute", "sleep", "--json", os.path.join(directory, "client.json")])
    sync_disk()
    p = subprocess.run(command, env=runner.env, capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        return None
    summary = SUMMARY.search(p.stderr + p.stdout)
    totals = {}
    for name in os.listdir(directory):
        if not name.startswith("trace."):
            continue
        files = {}
        with open(os.path.join(directory, name), errors="replace") as f:
            for line in f:
                m = STRACE_LINE.match(line.strip())
                if not m:
                    continue
                call, arguments = m.group(1), m.group(2)
                result, seconds = int(m.group(3)), float(m.group(4))
                if call == "openat":
                    path = re.search(r'"([^"]*)"', arguments)
                    kind = file_kind(path.group(1)) if path else None
                    if kind and result >= 0:
                        files[result] = kind
                elif call in ("rename", "unlink"):
                    kind = file_kind(arguments)
                else:
                    fd = re.match(r"(\d+)", arguments)
                    kind = files.get(int(fd.group(1))) if fd else None
                    if call == "close" and fd:
                        files.pop(int(fd.group(1)), None)
                if not kind:
                    continue
                data = call in ("write", "writev", "pwrite64", "pwritev")
                entry = totals.setdefault(kind, {"write_s": 0.0, "write_bytes": 0, "writes": 0,
                                                 "other_s": 0.0, "other_calls": 0})
                if data:
                    entry["write_s"] += seconds
                    entry["write_bytes"] += max(result, 0)
                    entry["writes"] += 1
                else:
                    entry["other_s"] += seconds
                    entry["other_calls"] += 1
    shutil.rmtree(directory, ignore_errors=True)
    return {"iterations": iterations,
            "seconds_in_stores": seconds_in_stores(summary) if summary else None,
            "bytes_stored": int(summary.group(4)) if summary else None,
            "by_file_kind": totals}


def machine():
    cpu = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mpi = subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout
    git = lambda *a: subprocess.run(["git", "-C", SOURCE, *a], capture_output=True,
                                    text=True).stdout.strip()
    modified = [line[3:] for line in git("status", "--porcelain", "--", "src", "include",
                                         "bindings").splitlines()]
    return {"nproc": os.cpu_count(), "cpu_model": cpu, "kernel": platform.release(),
            "mpi": mpi.splitlines()[0] if mpi else "",
            "commit": git("rev-parse", "--short", "HEAD"),
            "library_files_modified": modified, "h5py": h5py.__version__,
            "h5py_hdf5": h5py.version.hdf5_version,
            "memory_gib": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30}


def filesystem_of(path):
    p = subprocess.run(["df", "--output=source,fstype,target", path], capture_output=True,
                       text=True)
    return " ".join(p.stdout.splitlines()[-1].split())


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(SOURCE, "build-bench"),
                        help="a Release build of this project (default: build-bench, where "
                             "bench/proxy/run.sh builds)")
    parser.add_argument("--exe", help="the sidecore_output_write binary (default: in --build)")
    parser.add_argument("--reps", type=int, default=3, help="repetitions of part A")
    parser.add_argument("--iterations", type=int, default=8, help="iterations per run (A)")
    parser.add_argument("--compute-ms", type=float, default=2500.0,
                        help="compute phase between writes, longer than the server's "
                             "compression time (A)")
    parser.add_argument("--dims", default="128,128,128", help="NZ,NY,NX of each variable")
    parser.add_argument("--throughput-reps", type=int, default=11)
    parser.add_argument("--throughput-iterations", type=int, default=20)
    parser.add_argument("--paced-ms", type=float, default=400.0,
                        help="sleeping compute phase of the paced throughput runs (B)")
    parser.add_argument("--workdir", default=os.environ.get("TMPDIR", "/tmp"),
                        help="local-disk directory for the runs (not tmpfs)")
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    parser.add_argument("--quick", action="store_true", help="harness check, seconds")
    parser.add_argument("--no-wait", action="store_true",
                        help="do not wait for other benchmarks (run_micro.sh, run_matrix.py)")
    args = parser.parse_args()
    args.dims = [int(v) for v in args.dims.split(",")]
    if args.quick:
        args.dims, args.iterations, args.reps, args.compute_ms = [32, 32, 32], 3, 1, 100.0
        args.throughput_reps, args.throughput_iterations, args.paced_ms = 1, 3, 50.0
    command_line = "bench/output/run_output.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    started = time.time()
    runner = Runner(args)
    work = tempfile.mkdtemp(prefix="sidecore-output.", dir=args.workdir)
    fs = filesystem_of(work)
    if " tmpfs " in f" {fs} ":
        sys.exit(f"run_output: {work} is on tmpfs; pass --workdir on a local disk")
    loads = {"start": loadavg()}
    wait_for_quiet_machine(not args.no_wait and not args.quick)
    print(f"run_output: work directory {work} ({fs}); {runner.bytes_per_iteration / MIB:.0f} MiB "
          f"per iteration, buffer {runner.buffer / MIB:.0f} MiB", flush=True)
    try:
        runs = part_a(runner, work, loads)
        throughput = part_b(runner, work, loads)
        fsync = fsync_calls(runner, os.path.join(work, "strace"))
        breakdown = time_breakdown(runner, os.path.join(work, "breakdown"),
                                   args.throughput_iterations)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    meta = machine()
    meta.update(command=command_line, date=datetime.datetime.now().astimezone().isoformat(
        timespec="seconds"), seconds=round(time.time() - started), quick=args.quick,
        workdir_filesystem=fs, dims=args.dims, iterations=args.iterations, reps=args.reps,
        compute_ms=args.compute_ms, bytes_per_iteration=runner.bytes_per_iteration,
        buffer_bytes=runner.buffer, dd_block=runner.dd_block, throughput_reps=args.throughput_reps,
        throughput_iterations=args.throughput_iterations, paced_ms=args.paced_ms, load=loads,
        dirty_background_ratio=open("/proc/sys/vm/dirty_background_ratio").read().strip(),
        dirty_ratio=open("/proc/sys/vm/dirty_ratio").read().strip())
    report(meta, runs, throughput, fsync, breakdown, args.out)


def part_a(runner, work, loads):
    args = runner.args
    runs = []
    for rep in range(args.reps):
        wait_for_quiet_machine(not args.no_wait and not args.quick)
        loads[f"A{rep}"] = loadavg()
        order = list(VARIANTS)
        random.Random(rep).shuffle(order)
        rep_runs = {}
        for variant in order:
            print(f"run_output: A rep {rep + 1}/{args.reps}: {variant}", flush=True)
            r = runner.run(variant, os.path.join(work, f"a{rep}_{variant}"), args.iterations,
                           args.compute_ms, "spin")
            r["rep"] = rep
            rep_runs[variant] = r
        for variant, r in rep_runs.items():
            if VARIANTS[variant][0] == "HDF5":
                r["files"] = runner.file_facts(r["output"], args.iterations)
                if variant != "none":
                    r["errors"] = runner.errors(rep_runs["none"]["output"], r["output"],
                                                args.iterations)
        for r in rep_runs.values():
            shutil.rmtree(os.path.dirname(r["output"]), ignore_errors=True)
            runs.append(r)
    return runs


def part_b(runner, work, loads):
    args = runner.args
    n = args.throughput_iterations
    block = runner.dd_block
    blocks_per_iteration = runner.bytes_per_iteration // block
    rows = []
    for rep in range(args.throughput_reps):
        wait_for_quiet_machine(not args.no_wait and not args.quick)
        loads[f"B{rep}"] = loadavg()
        order = ["hdf5-stream", "dd", "dd-fdatasync", "hdf5-paced", "dd-paced"]
        random.Random(100 + rep).shuffle(order)
        for kind in order:
            print(f"run_output: B rep {rep + 1}/{args.throughput_reps}: {kind}", flush=True)
            directory = os.path.join(work, f"b{rep}_{kind}")
            os.makedirs(directory, exist_ok=True)
            row = {"rep": rep, "kind": kind}
            if kind.startswith("hdf5"):
                # stream: the client hands over iterations back to back (buffer of 2.5), so
                # the server writes without pause, as dd does; paced: sleeping compute phases.
                compute_ms = 0.0 if kind == "hdf5-stream" else args.paced_ms
                r = runner.run("none", directory, n, compute_ms, "sleep")
                s = r["server"]
                t0 = time.perf_counter()
                sync_disk()
                row.update(bytes=s["bytes_stored"], seconds=s["seconds_in_stores"],
                           bytes_per_second=s["bytes_stored"] / s["seconds_in_stores"],
                           sync_after_s=time.perf_counter() - t0,
                           store_seconds_per_iteration=s["store_seconds_per_iteration"],
                           client_loop_s=r["loop_s"])
                row["bytes_per_second_with_sync"] = row["bytes"] / (row["seconds"] +
                                                                    row["sync_after_s"])
            elif kind == "dd-paced":
                row.update(dd_paced(directory, block, n, blocks_per_iteration, args.paced_ms / 1e3))
            else:
                row.update(dd(directory, block, n * blocks_per_iteration, kind == "dd-fdatasync"))
            shutil.rmtree(directory, ignore_errors=True)
            rows.append(row)
    return rows


def summarise_a(runs, meta):
    by_variant = {}
    for r in runs:
        by_variant.setdefault(r["variant"], []).append(r)
    none_by_rep = {r["rep"]: r for r in by_variant.get("none", [])}
    summary = {}
    pooled_none = [w + e for r in by_variant.get("none", [])
                   for w, e in zip(r["write_s"][1:], r["end_s"][1:])]
    for variant, rs in by_variant.items():
        visible = [[w + e for w, e in zip(r["write_s"], r["end_s"])] for r in rs]
        steady = [median(v[1:]) for v in visible]
        memcpy = [median(r["memcpy_s"][1:]) for r in rs]
        def none_steady(rep):
            n = none_by_rep[rep]
            return median([w + e for w, e in zip(n["write_s"][1:], n["end_s"][1:])])
        ratios = [median(v[1:]) / none_steady(r["rep"])
                  for v, r in zip(visible, rs) if r["rep"] in none_by_rep]
        store = [t for r in rs for t in r["server"]["store_seconds_per_iteration"]]
        s = {
            "description": VARIANTS[variant][2],
            "visible_steady_median_s": median(steady),
            "visible_steady_per_rep_s": steady,
            "visible_first_median_s": median([v[0] for v in visible]),
            "visible_over_none_per_rep": ratios,
            "visible_over_none": median(ratios),
            "write_over_memcpy": median([st / m for st, m in zip(steady, memcpy)]),
            "memcpy_steady_median_s": median(memcpy),
            "store_s_median": median(store) if store else None,
            "store_s_max": max(store) if store else None,
            "compute_s_min": min(min(r["compute_s"]) for r in rs),
            "buffer_high_water_max": max(r["server"]["buffer_high_water"] for r in rs),
            "drain_s_median": median([r["sync_s"] for r in rs]),
        }
        s["server_kept_up"] = (s["store_s_max"] is None or
                               s["store_s_max"] < s["compute_s_min"])
        if "files" in rs[0]:
            for key in ("ratio_attributes", "ratio_file_sizes"):
                s[key] = median([r["files"][key] for r in rs])
            s["ratio_attribute_min"] = min(r["files"]["ratio_attribute_min"] for r in rs)
            s["raw_bytes_per_run"] = rs[0]["files"]["raw_bytes"]
            s["stored_bytes_median"] = median([r["files"]["stored_bytes"] for r in rs])
            s["file_bytes_median"] = median([r["files"]["file_bytes"] for r in rs])
            log_raw = sum(a for r in rs for a, _ in r["log_ratios"])
            log_stored = sum(b for r in rs for _, b in r["log_ratios"])
            s["ratio_log"] = log_raw / log_stored if log_stored else None
        if "errors" in rs[0]:
            s["errors"] = {v: {"max_abs": max(r["errors"][v]["max_abs"] for r in rs),
                               "max_rel": max(r["errors"][v]["max_rel"] for r in rs),
                               "max_rel_normal": max(r["errors"][v]["max_rel_normal"] for r in rs),
                               "stored_type": rs[0]["errors"][v]["stored_type"]}
                           for v in VARIABLES}
        summary[variant] = s
    noise = None
    if len(pooled_none) >= 2:
        q1, q3 = quartiles(pooled_none)
        noise = (q3 - q1) / median(pooled_none)
    return summary, noise


def summarise_b(rows):
    kinds = {}
    for r in rows:
        kinds.setdefault(r["kind"], []).append(r)
    out = {k: {"bytes_per_second_median": median([r["bytes_per_second"] for r in v]),
               "bytes_per_second": [r["bytes_per_second"] for r in v],
               "bytes": v[0]["bytes"], "seconds_median": median([r["seconds"] for r in v])}
           for k, v in kinds.items()}
    for k in ("hdf5-stream", "hdf5-paced"):
        if k in kinds:
            out[k]["with_sync_bytes_per_second_median"] = median(
                [r["bytes_per_second_with_sync"] for r in kinds[k]])
            out[k]["store_s_per_iteration_median"] = median(
                [t for r in kinds[k] for t in r["store_seconds_per_iteration"]])
    # Ratios inside each repetition, then the median.
    def per_rep(a, b):
        values = []
        for rep in sorted({r["rep"] for r in rows}):
            x = [r for r in kinds.get(a, []) if r["rep"] == rep]
            y = [r for r in kinds.get(b, []) if r["rep"] == rep]
            if x and y:
                values.append(x[0]["bytes_per_second"] / y[0]["bytes_per_second"])
        return values
    ratios = {"stream_over_dd": per_rep("hdf5-stream", "dd"),
              "paced_over_dd": per_rep("hdf5-paced", "dd"),
              "paced_over_dd_paced": per_rep("hdf5-paced", "dd-paced"),
              "stream_over_dd_fdatasync": per_rep("hdf5-stream", "dd-fdatasync")}
    return out, {k: {"per_rep": v, "median": median(v)} for k, v in ratios.items()}


def report(meta, runs, throughput_rows, fsync, breakdown, out_dir):
    a, noise = summarise_a(runs, meta)
    b, b_ratios = summarise_b(throughput_rows)
    tolerance = max(0.05, noise or 0.0)
    targets = []
    half = a.get("half")
    if half:
        ratio = half["ratio_attributes"]
        targets.append({
            "name": "compression ratio, 16-bit precision + shuffle + deflate, smooth 3D field "
                    "(raw / stored, files' attributes; worst file)",
            "target": ">= 4x",
            "measured": f"{ratio:.1f}x (worst file {half['ratio_attribute_min']:.1f}x, "
                                             f"by file sizes {half['ratio_file_sizes']:.1f}x)",
            "met": half["ratio_attribute_min"] >= 4.0 and half["ratio_file_sizes"] >= 4.0})
        slower = half["visible_over_none"]
        targets.append({
            "name": "client-visible write time (damaris_write x3 + damaris_end_iteration, steady "
                    "median), 16-bit + deflate / no compression",
            "target": f"unchanged within noise: <= {1 + tolerance:.2f}x (noise = max(5%, "
                      f"IQR/median of the uncompressed samples = {100 * (noise or 0):.0f}%))",
            "measured": f"{slower:.2f}x (per repetition: "
                        f"{', '.join(f'{v:.2f}' for v in half['visible_over_none_per_rep'])})",
            "met": slower <= 1 + tolerance and half["server_kept_up"]})
    stream = b_ratios["stream_over_dd"]["median"]
    if stream is not None:
        of_medians = (b["hdf5-stream"]["bytes_per_second_median"] /
                      b["dd"]["bytes_per_second_median"])
    if stream is not None:
        targets.append({
            "name": "server HDF5 write throughput (uncompressed, bytes stored / s in stores, "
                    "server busy without pause) / dd to the same directory, both through "
                    "the page cache",
            "target": ">= 0.80",
            "measured": f"{stream:.2f} (median of the per-repetition ratios, which range from "
                        f"{min(b_ratios['stream_over_dd']['per_rep']):.2f} to "
                        f"{max(b_ratios['stream_over_dd']['per_rep']):.2f}; ratio of the medians "
                        f"{of_medians:.2f}: "
                        f"{b['hdf5-stream']['bytes_per_second_median'] / MIB:.0f} vs "
                        f"{b['dd']['bytes_per_second_median'] / MIB:.0f} MiB/s)",
            "met": stream >= 0.8})
    document = {"meta": meta, "targets": targets, "compression": a, "noise": noise,
                "throughput": b, "throughput_ratios": b_ratios, "fsync_check": fsync,
                "time_breakdown": breakdown,
                "runs": runs, "throughput_runs": throughput_rows}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "output.json"), "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")
    write_markdown(document, os.path.join(out_dir, "output.md"))


def ms(seconds):
    return "-" if seconds is None else f"{seconds * 1e3:.2f} ms"


def write_markdown(d, path):
    meta, a, b, br = d["meta"], d["compression"], d["throughput"], d["throughput_ratios"]
    lines = []
    add = lines.append
    add("# Output benchmark: compression on the dedicated core, HDF5 throughput against dd")
    add("")
    add(f"- Command: `{meta['command']}` ({meta['seconds']} s)")
    add(f"- Date: {meta['date']}")
    add(f"- Machine: nproc={meta['nproc']}, CPU \"{meta['cpu_model']}\", "
        f"{meta['memory_gib']:.0f} GiB, "
        f"Linux {meta['kernel']}; {meta['mpi']}; h5py {meta['h5py']} (HDF5 {meta['h5py_hdf5']}) "
        "for reading back")
    modified = meta["library_files_modified"]
    add(f"- Library: commit {meta['commit']}" +
        (f", with uncommitted changes in {', '.join(modified)}" if modified else ", clean"))
    add(f"- Output directory: a fresh directory on `{meta['workdir_filesystem']}` (local disk), "
        f"removed afterwards; vm.dirty_background_ratio={meta['dirty_background_ratio']}, "
        f"vm.dirty_ratio={meta['dirty_ratio']}.")
    load = meta["load"]
    add(f"- 1-min load average before the run: {load['start'][0]:.2f}; before each repetition: "
        + ", ".join(f"{k} {v[0]:.2f}" for k, v in load.items() if k != "start") + ".")
    if meta["quick"]:
        add("- **Quick mode: harness check only, the numbers mean nothing.**")
    add("")
    add("## Targets (issue 4)")
    add("")
    add("| target | goal | measured | met? |")
    add("|---|---|---|---|")
    for t in d["targets"]:
        met = "yes" if t["met"] else "**NOT met**"
        add(f"| {t['name']} | {t['target']} | {t['measured']} | {met} |")
    add("")
    nz, ny, nx = meta["dims"]
    add("## A. Compression: one client + one dedicated core, HDF5 FilePerCore")
    add("")
    add(f"Three double variables of {nz} x {ny} x {nx} per client "
        f"({meta['bytes_per_iteration'] / MIB:.0f} MiB per iteration): sums of low-frequency sines "
        "with incommensurate phases plus a slow drift in time (see `output_write.c`). Buffer "
        f"{meta['buffer_bytes'] / MIB:.0f} MiB (2.5 iterations). {meta['iterations']} iterations "
        f"per run, a busy compute phase of {meta['compute_ms']:.0f} ms before each write, "
        f"{meta['reps']} repetitions, variants in a new random order in each. *Visible* is "
        "damaris_write of the three variables + damaris_end_iteration, median of the iterations "
        "after the first, then the median over repetitions; the ratio to *none* is taken inside "
        f"each repetition. *memcpy* is a copy of the same {meta['bytes_per_iteration'] / MIB:.0f} "
        "MiB timed right after, in the same process. The ratio from attributes is "
        "sum(raw_bytes) / sum(stored_bytes) over the "
        "per-core files; from file sizes, sum(raw_bytes) / sum(file sizes) (HDF5 metadata "
        "included). Errors: largest over all iterations and repetitions, against the "
        "uncompressed run of the same repetition, read back with h5py.")
    add("")
    add("| variant | visible first | visible steady | / none | / memcpy | memcpy | "
        "ratio (attributes) | ratio (file sizes) | worst file | "
        "server time per iteration (median / max) | server kept up | drain |")
    add("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for variant in ("null", "none", "deflate", "single", "half"):
        s = a.get(variant)
        if not s:
            continue
        ratio = lambda k: "-" if s.get(k) is None else f"{s[k]:.2f}x"
        kept = "yes" if s["server_kept_up"] else "**no**"
        store = ("-" if s["store_s_median"] is None
                 else f"{ms(s['store_s_median'])} / {ms(s['store_s_max'])}")
        over = "-" if s["visible_over_none"] is None else f"{s['visible_over_none']:.2f}x"
        add(f"| {s['description']} | {ms(s['visible_first_median_s'])} | "
            f"{ms(s['visible_steady_median_s'])} | {over} | {s['write_over_memcpy']:.2f}x | "
            f"{ms(s['memcpy_steady_median_s'])} | {ratio('ratio_attributes')} | "
            f"{ratio('ratio_file_sizes')} | {ratio('ratio_attribute_min')} | {store} | {kept} | "
            f"{ms(s['drain_s_median'])} |")
    add("")
    add(f"Noise of the uncompressed runs: interquartile range / median of the steady samples = "
        f"{100 * (d['noise'] or 0):.1f}%. *Server kept up*: the longest store of an iteration was "
        "shorter than the shortest compute phase, so every write found the server idle.")
    add("")
    add("Relative errors are also given over the values of magnitude >= 2^-14 (6.1e-5, the "
        "smallest normal 16-bit float): below it 16-bit floats have a fixed spacing of 2^-24, "
        "so values near zero (velocity changes sign) carry a larger relative error and an "
        "absolute one of at most 2^-25.")
    add("")
    add("| variant | variable | stored as | max abs error | max rel error | max rel error, "
        "abs(value) >= 2^-14 |")
    add("|---|---|---|---|---|---|")
    for variant in ("deflate", "single", "half"):
        s = a.get(variant)
        if not s or "errors" not in s:
            continue
        for v, e in s["errors"].items():
            add(f"| {variant} | {v} | {e['stored_type']} | {e['max_abs']:.3g} | {e['max_rel']:.3g} "
                f"| {e['max_rel_normal']:.3g} |")
    add("")
    add("## B. Server HDF5 throughput against dd (same directory, same run)")
    add("")
    n = meta["throughput_iterations"]
    add(f"Uncompressed HDF5 FilePerCore, {n} iterations of {meta['bytes_per_iteration'] / MIB:.0f} "
        f"MiB; throughput = bytes stored / seconds in stores, from the server's line at finalize "
        f"(`server 0: ... bytes processed, T s in stores`). *stream*: the client hands "
        f"iterations over back to back (no compute phase; the 2.5-iteration buffer keeps the "
        f"server busy without "
        f"pause, like dd). *paced*: a sleeping compute phase of {meta['paced_ms']:.0f} ms between "
        f"iterations. dd: `dd if=/dev/zero of=<dir>/f bs={meta['dd_block']} "
        f"count={n * meta['bytes_per_iteration'] // meta['dd_block']}` "
        "(the same bytes), without and with `conv=fdatasync`; *dd paced*: one dd per iteration "
        f"(bs={meta['dd_block']}, one iteration's bytes, a new file each) with the same "
        f"{meta['paced_ms']:.0f} ms "
        "pause, dd's own times summed. `sync` before every measurement. "
        f"{meta['throughput_reps']} repetitions, in a new random order each; medians.")
    add("")
    fs = d["fsync_check"]
    if fs is not None:
        add(f"Durability: the HDF5 store does not call fsync (strace -f of a 2-iteration run: "
            f"{fs['calls']} fsync/fdatasync/sync_file_range/msync calls). Its writes, like dd "
            "without fdatasync, end in the page cache: those two are the like-for-like pair. "
            "*+ sync* divides by the time in stores plus a `sync` run right after the job "
            "(approximate: it flushes the run's master and XDMF files too), to set beside dd "
            "with fdatasync.")
    add("")
    add("| measurement | MiB/s (median) | per repetition | + sync (median) |")
    add("|---|---|---|---|")
    names = {"hdf5-stream": "HDF5 store, stream", "hdf5-paced": "HDF5 store, paced",
             "dd": "dd (page cache)", "dd-fdatasync": "dd conv=fdatasync",
             "dd-paced": "dd paced (page cache)"}
    for k in ("hdf5-stream", "dd", "dd-fdatasync", "hdf5-paced", "dd-paced"):
        if k not in b:
            continue
        s = b[k]
        ws = s.get("with_sync_bytes_per_second_median")
        add(f"| {names[k]} | {s['bytes_per_second_median'] / MIB:.0f} | "
            f"{', '.join(f'{v / MIB:.0f}' for v in s['bytes_per_second'])} | "
            f"{'-' if ws is None else f'{ws / MIB:.0f}'} |")
    add("")
    add("| ratio (inside each repetition, then median) | median | per repetition |")
    add("|---|---|---|")
    labels = {"stream_over_dd": "HDF5 stream / dd (page cache): **the target**",
              "paced_over_dd": "HDF5 paced / dd (page cache)",
              "paced_over_dd_paced": "HDF5 paced / dd paced",
              "stream_over_dd_fdatasync": "HDF5 stream / dd conv=fdatasync (not like for like)"}
    for k, label in labels.items():
        r = br[k]
        if r["median"] is None:
            continue
        add(f"| {label} | {r['median']:.2f} | {', '.join(f'{v:.2f}' for v in r['per_rep'])} |")
    add("")
    t = d.get("time_breakdown")
    if t and t["seconds_in_stores"]:
        add("## Where the server's time in stores goes (strace)")
        add("")
        add(f"One uncompressed stream run of {t['iterations']} iterations under `strace -ff -T` "
            f"(which slows every system call a little): {t['bytes_stored'] / MIB:.0f} MiB stored "
            f"in {t['seconds_in_stores']:.3f} s in stores "
            f"({t['bytes_stored'] / MIB / t['seconds_in_stores']:.0f} MiB/s). "
            "System-call time on the output files, per kind of file:")
        add("")
        add("| files | write calls | MiB written | time in write calls | MiB/s inside write calls "
            "| other calls (open, close, ...) | their time | share of the time in stores |")
        add("|---|---|---|---|---|---|---|---|")
        for kind, e in sorted(t["by_file_kind"].items()):
            rate = "-" if not e["write_s"] else f"{e['write_bytes'] / MIB / e['write_s']:.0f}"
            share = 100 * (e["write_s"] + e["other_s"]) / t["seconds_in_stores"]
            add(f"| {kind} | {e['writes']} | {e['write_bytes'] / MIB:.1f} | {e['write_s']:.3f} s | "
                f"{rate} | {e['other_calls']} | {e['other_s']:.3f} s | {share:.0f}% |")
        add("")
    add("See bench/output/README.md for how to read this and what the last run found.")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
