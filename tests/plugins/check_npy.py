#!/usr/bin/env python3
"""Runs npy_writer.c under mpirun with the npy plugin as its store, then reads every .npy file
back with numpy and compares it, value by value, with the formulas npy_writer.c writes; also
checks the files' headers (format 1.0, data aligned on 64 bytes) and that no other file was
written.

    check_npy.py --writer ./npy_writer --xml npy.xml.in --np 3 --cores 1 [--threads 1] \
        [--library /path/libsidecore_npy.so] --out /tmp/run
"""
import argparse
import os
import re
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpi_job import expect_array, expect_no_leaked_segments, exported, fail, job_segments, mpi_env, run_job  # noqa: E402

NX, NY, N, H = 4, 3, 5, 6  # npy_writer.c


def expected_files(simulation, iterations, clients):
    """File name -> the array npy_writer.c wrote into that block."""
    files = {}
    y, x = np.mgrid[0:NY, 0:NX]
    for it in range(iterations):
        for src in range(clients):
            def name(variable, block):
                return f"{simulation}_It{it}_{variable}_P{src}_B{block}.npy"
            for block in (0, 1):
                files[name("fields.temperature", block)] = (
                    it * 10000.0 + src * 1000.0 + block * 100.0 + y * NX + x).astype(np.float64)
            files[name("counts", 0)] = (it * 1000 + src * 100 + np.arange(N)).astype(np.int32)
            files[name("halo", 0)] = (np.float32(it * 10 + src)
                                      + np.float32(0.5) * np.arange(H, dtype=np.float32))
            files[name("step", 0)] = np.array([it * 100 + src], dtype=np.int64)
    return files


def check_header(path):
    """Format version 1.0 as the plugin promises: magic, version, a header ending in a newline
    that puts the data at a multiple of 64 bytes."""
    with open(path, "rb") as f:
        start = f.read(10)
        if start[:6] != b"\x93NUMPY" or start[6:8] != b"\x01\x00":
            fail(f"{path}: not an .npy file of format 1.0: {start!r}")
        (length,) = struct.unpack("<H", start[8:10])
        header = f.read(length)
    if (10 + length) % 64 != 0 or not header.endswith(b"\n"):
        fail(f"{path}: header of {length} bytes is not padded to 64 bytes with a final newline")
    if b"'fortran_order': False" not in header:
        fail(f"{path}: header {header!r} does not say fortran_order False")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writer", required=True)
    parser.add_argument("--xml", required=True)
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("--cores", type=int, required=True)
    parser.add_argument("--threads", type=int, default=0, help="background I/O threads (0 or 1)")
    parser.add_argument("--library", default="", help="library=... (default: found by type)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()

    clients = args.np - args.cores
    os.makedirs(args.out, exist_ok=True)
    with open(args.xml) as f:
        text = f.read()
    library = f'library="{args.library}"' if args.library else ""
    values = {"CORES": args.cores, "THREADS": args.threads, "CLIENTS": clients, "OUT": args.out,
              "LIBRARY": library}
    for key, value in values.items():
        text = text.replace(f"@{key}@", str(value))
    xml = os.path.join(args.out, "npy.xml")
    with open(xml, "w") as f:
        f.write(text)

    before = job_segments()
    # The plugin found by name needs the same LD_LIBRARY_PATH in every process.
    argv = exported("LD_LIBRARY_PATH") + [args.writer, xml, str(args.iterations)]
    env = mpi_env()
    env.setdefault("LD_LIBRARY_PATH", "")
    status, output = run_job(args.np, argv, env, args.timeout, cwd=args.out)
    if status != 0:
        fail(f"npy_writer exited with status {status}")
    if re.search(r"\] (error|fatal):", output):
        fail("the run logged an error")
    expect_no_leaked_segments(before)

    directory = os.path.join(args.out, "npy")
    want = expected_files("npysim", args.iterations, clients)
    found = set(os.listdir(directory))
    if found != set(want):
        fail(f"missing files {sorted(set(want) - found)}, "
             f"unexpected files {sorted(found - set(want))}")
    for name, values in sorted(want.items()):
        path = os.path.join(directory, name)
        check_header(path)
        expect_array(name, np.load(path, allow_pickle=False), values)
    print(f"OK: {len(want)} .npy files from {clients} clients, {args.cores} dedicated cores and "
          f"{args.threads} I/O threads, every value as written")


if __name__ == "__main__":
    main()
