#!/usr/bin/env python3
"""Runs one Fortran test program under mpirun and checks every value it stored.

The programs (implicit_calls.f90, module_calls.f90) check return codes themselves and abort
on the first surprise; this driver checks what only the output shows: that the Fortran arrays
arrived column-major end to end (a(i,j) of a Fortran layout "NX,NY" is value[j-1, i-1] of a
dataset of shape (NY, NX)), with the dimensions in force when each block was written, at the
positions given to damaris_set_position_f (per block and in the master file's global view),
under the dataset names of Damaris's rule, and that the event's action ran once per client and
iteration. The expected values are recomputed from the programs' formulas.

    run_fortran_test.py --np 3 --cores 1 --domains 2 --iterations 3 --xml fields.xml.in -- \
        ./fortran_module_calls @XML@ 3
"""
import argparse
import glob
import os
import re
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpi_job import block_dataset, expect_array, expect_no_leaked_segments, fail, job_segments, mpi_env, run_job  # noqa: E402

# fields.xml.in and the programs.
SIMULATION = "fortran"
NX0, NY, NZ, GX, GY = 4, 3, 2, 64, 8



def nx_of(iteration, source):
    """NX is 4 (the XML) in iteration 0; each client sets it to 5 + its rank from iteration 1."""
    return NX0 if iteration == 0 else 5 + source


def x_position(iteration, source):
    return source * 16 + iteration


def temperature(iteration, source, block):
    """temperature(i, j) = it*10000 + src*1000 + b*100 + i*10 + j, with 1-based i, j."""
    j, i = np.mgrid[1:NY + 1, 1:nx_of(iteration, source) + 1]
    return (iteration * 10000 + source * 1000 + block * 100 + i * 10 + j).astype(np.float64)


def density(iteration, source, block):
    """density(i, j, k) = it*10000 + src*1000 + b*500 + k*100 + i*10 + j, 1-based."""
    k, j, i = np.mgrid[1:NZ + 1, 1:NY + 1, 1:nx_of(iteration, source) + 1]
    return (iteration * 10000 + source * 1000 + block * 500 + k * 100 + i * 10 + j).astype(
        np.float32)


def step(iteration, source):
    return np.array([iteration * 100 + source], dtype=np.int32)


def check_iteration(out, it, clients, cores, domains):
    files = sorted(glob.glob(os.path.join(out, f"{SIMULATION}_It{it}_Pr*.h5")))
    writers = 1 if cores else clients
    if len(files) != writers:
        fail(f"iteration {it}: {len(files)} file(s) per core, expected {writers}: {files}")
    expected = {}
    for src in range(clients):
        writer = f"{SIMULATION}_It{it}_Pr{0 if cores else src}.h5"
        for b in range(domains):
            expected[block_dataset("temperature", src, b, domains)] = (
                writer, temperature(it, src, b), [b * NY, x_position(it, src)])
            expected[block_dataset("fluid/density", src, b, domains)] = (
                writer, density(it, src, b), [0, b * NY, x_position(it, src)])
        expected[block_dataset("step", src, 0, domains)] = (writer, step(it, src), None)

    found = set()
    for filename in files:
        with h5py.File(filename, "r") as h5:
            datasets = []
            h5.visititems(lambda path, obj: datasets.append(path)
                          if isinstance(obj, h5py.Dataset) else None)
            for path in datasets:
                if path not in expected:
                    fail(f"{filename}: unexpected dataset {path}; expected {sorted(expected)}")
                writer, values, position = expected[path]
                if os.path.basename(filename) != writer:
                    fail(f"iteration {it}: {path} is in {filename}, expected in {writer}")
                expect_array(f"It{it} {path}", h5[path][...], values)
                if position is not None:
                    got = [int(v) for v in h5[path].attrs["position"]]
                    if got != position:
                        fail(f"It{it} {path}: position {got} (C order), expected {position}")
                found.add(path)
    missing = sorted(set(expected) - found)
    if missing:
        fail(f"iteration {it}: not stored: {missing}")

    # The master file maps every block at its position in the global array.
    master = os.path.join(out, f"{SIMULATION}_It{it}.h5")
    if not os.path.exists(master):
        fail(f"iteration {it}: no master file {master}")
    plane = np.zeros((GY, GX), np.float64)
    box = np.zeros((NZ, GY, GX), np.float32)
    for src in range(clients):
        x, nx = x_position(it, src), nx_of(it, src)
        for b in range(domains):
            plane[b * NY:(b + 1) * NY, x:x + nx] = temperature(it, src, b)
            box[:, b * NY:(b + 1) * NY, x:x + nx] = density(it, src, b)
    with h5py.File(master, "r") as h5:
        expect_array(f"It{it} master temperature", h5["temperature"][...], plane)
        expect_array(f"It{it} master fluid/density", h5["fluid/density"][...], box)


def check_ticks(out, iterations, clients):
    seen = set()
    for name in glob.glob(os.path.join(out, "tick_*")):
        m = re.fullmatch(r"tick_(\d+)_(\d+)", os.path.basename(name))
        if not m:
            fail(f"unexpected file {name}")
        src, it = int(m.group(1)), int(m.group(2))
        if src >= clients or it >= iterations:
            fail(f"the action ran for client {src}, iteration {it}, which never signalled")
        runs = open(name).read().split()
        if runs != ["ran"]:
            fail(f"the action ran {len(runs)} times for client {src} at iteration {it}")
        seen.add((src, it))
    missing = sorted({(s, i) for s in range(clients) for i in range(iterations)} - seen)
    if missing:
        fail(f"the action of 'tick' did not run for (client, iteration) {missing}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--cores", type=int, default=0, help="dedicated cores (one node)")
    ap.add_argument("--domains", type=int, required=True)
    ap.add_argument("--iterations", type=int, required=True)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--xml", required=True, help="template: @OUT@, @CORES@, @DOMAINS@ replaced")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        fail("no program given")
    clients = args.np - args.cores

    shm_before = job_segments()
    with tempfile.TemporaryDirectory(prefix="sidecore-fortran-") as out:
        text = open(args.xml).read()
        for key, value in (("OUT", out), ("CORES", str(args.cores)),
                           ("DOMAINS", str(args.domains))):
            text = text.replace(f"@{key}@", value)
        if re.search(r"@[A-Z_]+@", text):
            fail(f"{args.xml}: unreplaced {re.search(r'@[A-Z_]+@', text).group(0)}")
        xml = os.path.join(out, os.path.basename(args.xml).removesuffix(".in"))
        with open(xml, "w") as f:
            f.write(text)
        argv = [word.replace("@XML@", xml) for word in command]

        returncode, output = run_job(args.np, argv, mpi_env(), args.timeout, cwd=out)
        if returncode != 0:
            fail(f"mpirun exited with {returncode}")
        done = len(re.findall(r"_calls: client \d+ .*done", output))
        if done != clients:
            fail(f"{done} client(s) reported the end of their loop, expected {clients}")

        for it in range(args.iterations):
            check_iteration(out, it, clients, args.cores, args.domains)
        check_ticks(out, args.iterations, clients)
        print(f"stored values checked: {args.iterations} iteration(s), {clients} client(s), "
              f"{args.domains} block(s) each")

    expect_no_leaked_segments(shm_before)
    print("OK")


if __name__ == "__main__":
    main()
