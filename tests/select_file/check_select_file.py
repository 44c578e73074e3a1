#!/usr/bin/env python3
"""Runs tests/select_file/select_file_writer under mpirun and reads every file back with h5py.
Collective files must hold each field in global-cell order (the value at position g is the
value the simulation computed for its cell numbered g, whichever client held it), the index
variable as the Damaris fork OPM uses stores it (placed by itself), and the rank-ordered copy
in rank order; FilePerCore files hold every block as written (select-file does not apply)."""
import argparse
import glob
import math
import os
import shutil
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpi_job import expect_array, fail, job_segments, expect_no_leaked_segments, mpi_env, run_job  # noqa: E402


SCALE = 1
DOMAINS = 1  # blocks per client


def cells_of(rank):
    return SCALE * (5 + 3 * rank)


def global_numbers(total, permuted):
    """Global number of each cell in rank order (select_file_writer.c: global_number)."""
    k = np.arange(total, dtype=np.int64)
    if not permuted:
        return k
    a = 1 + total // 3
    while math.gcd(a, total) != 1:
        a += 1
    return (a * k + total // 2) % total


def fields(it, g):
    """The values of cells numbered g in iteration it."""
    return {
        "fields/pressure": 1000.0 * it + g + 0.25,
        "fields/saturation": (it + (g % 97) / 128.0).astype(np.float32),
        "fields/region": (7 * g + it).astype(np.int32),
    }


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def check_collective(outdir, it, total, numbers, index_stored):
    path = os.path.join(outdir, f"sel_It{it}.h5")
    g = np.arange(total, dtype=np.int64)
    with h5py.File(path, "r") as h5:
        for name, want in fields(it, g).items():
            expect_array(f"{path}:{name}", h5[name][...], want)
            if text(h5[name].attrs["select_file"]) != "cell_index":
                fail(f"{path}:{name}: select_file attribute {h5[name].attrs['select_file']!r}")
        # Two dimensions (1, n): placed as points in C order.
        expect_array(f"{path}:fields/pressure_2d", h5["fields/pressure_2d"][...],
                     (1000.0 * it + g + 0.25).reshape(1, total))
        # Written once (time-varying="false"), linked from the later files.
        expect_array(f"{path}:fields/porosity", h5["fields/porosity"][...], 0.5 + g / 1024.0)
        # Rank order: the value of the k-th cell of the clients taken in turn.
        expect_array(f"{path}:fields/pressure_plain", h5["fields/pressure_plain"][...],
                     1000.0 * it + numbers + 0.25)
        if not index_stored:
            if "cell_index" in h5:
                fail(f"{path}: cell_index is stored though its store is \"#\"")
        else:
            # The index is placed by itself, as the fork does: a permutation reads 0, 1, 2...
            expect_array(f"{path}:cell_index", h5["cell_index"][...], g.astype(np.int32))
        if not np.array_equal(numbers, g):
            return
        # Contiguous numbering: index-mapped output is the plain output.
        expect_array(f"{path}: pressure against pressure_plain", h5["fields/pressure"][...],
                     h5["fields/pressure_plain"][...])


def block_name(name, source, block):
    return f"{name}/P{source}" + (f"/B{block}" if DOMAINS > 1 else "")


def check_file_per_core(outdir, it, clients, numbers, index_stored):
    paths = sorted(glob.glob(os.path.join(outdir, f"sel_It{it}_Pr*.h5")))
    if not paths:
        fail(f"no file-per-core files for iteration {it} in {outdir}: {os.listdir(outdir)}")
    found = {}
    for path in paths:
        with h5py.File(path, "r") as h5:
            def visit(name, obj):
                if isinstance(obj, h5py.Dataset) and "/P" in name:
                    found[name] = obj[...]
            h5.visititems(visit)
    offset = 0
    for source, block in [(s, b) for s in range(clients) for b in range(DOMAINS)]:
        n = cells_of(source)
        g = numbers[offset:offset + n]
        want = dict(fields(it, g))
        want["fields/pressure_plain"] = want["fields/pressure"]
        want["fields/pressure_2d"] = want["fields/pressure"].reshape(1, n)
        if it == 0 and index_stored:
            want["cell_index"] = g.astype(np.int32)
            want["fields/porosity"] = 0.5 + g / 1024.0
        for name, values in want.items():
            key = block_name(name, source, block)
            if key not in found:
                fail(f"iteration {it}: no dataset {key}; found {sorted(found)}")
            # Blocks as written: select-file does not reorder file-per-core output.
            expect_array(f"iteration {it}: {key}", found[key], values)
        offset += n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--writer", required=True)
    parser.add_argument("--xml", required=True)
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("--cores", type=int, default=0)
    parser.add_argument("--filemode", default="Collective")
    parser.add_argument("--numbering", default="permuted", choices=["permuted", "contiguous"])
    parser.add_argument("--iterations", type=int, default=3)
    # Larger blocks: thousands of scattered positions exchanged among the writers.
    parser.add_argument("--scale", type=int, default=1)
    # A spoilt index (select_file_writer.c) and what the refusal must say.
    parser.add_argument("--fault", default="none")
    # "#": the index variable is not stored; the store still receives its blocks.
    parser.add_argument("--index-store", default="main")
    parser.add_argument("--expect", action="append", default=[])
    parser.add_argument("--domains", type=int, default=1)
    # Compression=deflate:4 on the store: placed blocks go through the filter too.
    parser.add_argument("--deflate", action="store_true")
    args = parser.parse_args()
    global SCALE, DOMAINS
    SCALE = args.scale
    DOMAINS = args.domains

    clients = args.np - args.cores
    total = sum(args.domains * cells_of(r) for r in range(clients))
    numbers = global_numbers(total, args.numbering == "permuted")
    workdir = tempfile.mkdtemp(prefix="sidecore-select-file-")
    try:
        outdir = os.path.join(workdir, "out")
        with open(args.xml) as f:
            xml = f.read()
        xml = (xml.replace("@CORES@", str(args.cores)).replace("@FILEMODE@", args.filemode)
               .replace("@OUTDIR@", outdir).replace("@INDEXSTORE@", args.index_store)
               .replace("@DOMAINS@", str(args.domains)))
        if args.deflate:
            xml = xml.replace('<option key="XDMFMode">NoIteration</option>',
                              '<option key="XDMFMode">NoIteration</option>\n'
                              '      <option key="Compression">deflate:4</option>')
        config = os.path.join(workdir, "select_file.xml")
        with open(config, "w") as f:
            f.write(xml)
        before = job_segments()
        status, output = run_job(args.np, [args.writer, config, str(args.iterations), args.numbering,
                                          str(args.scale), args.fault, str(args.domains)],
                            mpi_env(), timeout=240, cwd=workdir)
        if status != 0:
            fail(f"select_file_writer exited with status {status}")
        expect_no_leaked_segments(before)
        if args.fault != "none":
            for part in args.expect:
                if part not in output:
                    fail(f"fault {args.fault}: the output does not say {part!r}")
            # Refused, not written wrong: no file of the spoilt iteration.
            if os.path.exists(os.path.join(outdir, "sel_It0.h5")):
                fail(f"fault {args.fault}: sel_It0.h5 was written")
            print(f"PASS: fault {args.fault} refused with {args.expect}")
            return
        for it in range(args.iterations):
            if args.filemode == "Collective":
                check_collective(outdir, it, total, numbers, args.index_store != "#")
                if args.deflate:
                    with h5py.File(os.path.join(outdir, f"sel_It{it}.h5"), "r") as h5:
                        if h5["fields/pressure"].compression != "gzip":
                            fail(f"iteration {it}: fields/pressure is not compressed")
            else:
                check_file_per_core(outdir, it, clients, numbers, args.index_store != "#")
        print(f"PASS: {args.filemode}, {args.cores} dedicated core(s), {clients} clients, "
              f"{args.numbering} numbering of {total} cells, {args.iterations} iterations")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
