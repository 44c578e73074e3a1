#!/usr/bin/env python3
"""Runs tests/mpi/e2e_writer under mpirun in one deployment mode and checks every stored value.

The expected values are recomputed here from the formulas in e2e_writer.c, so a block that is
missing, misplaced, duplicated or corrupted fails the test."""
import argparse
import glob
import re
import os
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpi_job import expect_array, expect_no_leaked_segments, fail, job_segments, run_job  # noqa: E402

NX, NY = 8, 6


def expected_temperature(it, clients):
    gx = np.arange(NX * 2 * clients)
    y = np.arange(NY)[:, None]
    return it * 1000.0 + y * 100.0 + gx[None, :] + 0.5


def expected_pressure(it, clients):
    gx = np.arange(NX * 2 * clients)
    a = np.arange(2)[:, None, None]
    c = np.arange(3)[None, :, None]
    return (it * 10000.0 + a * 1000 + c * 100 + gx[None, None, :]).astype(np.float32)


def expected_ids(it, clients):
    return (it * 100000 + np.arange(NX * 2 * clients)).astype(np.int32)


def blocks_by_name(files):
    """Maps dataset path -> (file, count) over FilePerCore files, rejecting duplicates."""
    found = {}

    def visit(path, obj, filename):
        if isinstance(obj, h5py.Dataset):
            if path in found:
                fail(f"dataset {path} stored twice ({found[path]} and {filename})")
            found[path] = filename

    for f in files:
        with h5py.File(f, "r") as h5:
            h5.visititems(lambda p, o, fn=f: visit(p, o, fn))
    return found


def read(filename, path):
    with h5py.File(filename, "r") as h5:
        return h5[path][...]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--writer", required=True)
    ap.add_argument("--xml", required=True)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--cores", type=int, default=0)
    ap.add_argument("--ranks-per-node", type=int, default=0)
    ap.add_argument("--filemode", default="FilePerCore")
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--buffer", type=int, default=16 << 20)
    ap.add_argument("--policy", default="wait")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--slow-ms", type=int, default=0, help="make the event action this slow")
    ap.add_argument("--store-delay", type=float, default=0.0,
                    help="seconds a null store sleeps per iteration (a slow file system)")
    ap.add_argument("--server-memory", type=int, default=0, help="active buffering in server memory")
    ap.add_argument("--spill", action="store_true", help="active buffering into spill files")
    ap.add_argument("--lag-ms", type=int, default=0, help="the last client sleeps this long per iteration")
    ap.add_argument("--no-sync", action="store_true",
                    help="clients do not call damaris_sync, so they run ahead of their servers")
    ap.add_argument("--expect-log", default=None, help="regular expression the run's log must match")
    ap.add_argument("--max-server-memory", type=int, default=0,
                    help="most bytes a server may hold in its own memory at once")
    ap.add_argument("--nodes", type=int, default=0, help="dedicated nodes (needs --ranks-per-node)")
    ap.add_argument("--thread-multiple", action="store_true")
    ap.add_argument("--expect-error", default=None,
                    help="the run must fail at initialization with this text in its output")
    args = ap.parse_args()

    nodes = 1
    if args.ranks_per_node:
        nodes = (args.np + args.ranks_per_node - 1) // args.ranks_per_node
    servers = nodes * args.cores
    if args.nodes:
        # Every rank of the last `nodes` nodes is a server.
        first_server_node = nodes - args.nodes
        servers = args.np - first_server_node * args.ranks_per_node
    clients = args.np - servers
    writers = servers if (args.cores or args.nodes) else clients

    shm_before = job_segments()
    with tempfile.TemporaryDirectory(prefix="sidecore-e2e-") as out:
        xml = open(args.xml).read()
        for key, value in {"@CORES@": args.cores, "@FILEMODE@": args.filemode, "@OUT@": out,
                           "@BUFFER@": args.buffer, "@POLICY@": args.policy,
                           "@THREADS@": args.threads, "@NODES@": args.nodes,
                           "@DELAY@": args.store_delay, "@SERVER_MEMORY@": args.server_memory,
                           "@SPILL@": os.path.join(out, "spill") if args.spill else ""}.items():
            xml = xml.replace(key, str(value))
        xml_path = os.path.join(out, "e2e.xml")
        with open(xml_path, "w") as f:
            f.write(xml)
        env = dict(os.environ, E2E_OUT=out, OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
        if args.lag_ms:
            env["E2E_LAG_MS"] = str(args.lag_ms)
        if args.no_sync:
            env["E2E_NO_SYNC"] = "1"
        if args.spill:
            os.makedirs(os.path.join(out, "spill"))
        if args.expect_log:
            env["SIDECORE_LOG_LEVEL"] = "info"
        if args.slow_ms:
            env["E2E_SLOW_MS"] = str(args.slow_ms)
        if args.thread_multiple:
            env["E2E_THREAD_MULTIPLE"] = "1"
        if args.ranks_per_node:
            env["SIDECORE_RANKS_PER_NODE"] = str(args.ranks_per_node)
        returncode, output = run_job(args.np, [args.writer, xml_path, str(args.iterations)], env,
                                     timeout=300, cwd=out)
        if args.expect_error is not None:
            if returncode == 0:
                fail("the run succeeded, but it should have failed with: " + args.expect_error)
            if args.expect_error not in output:
                fail("the run failed without the expected message: " + args.expect_error)
            print("OK: failed as expected with: " + args.expect_error)
            return
        if returncode != 0:
            fail(f"{args.writer} exited with {returncode}")
        if args.expect_log and not re.search(args.expect_log, output):
            fail("the log does not match: " + args.expect_log)
        if args.max_server_memory:
            held = [int(x) for x in re.findall(r"at most (\d+) bytes at once", output)]
            if held and max(held) > args.max_server_memory:
                fail(f"a server held {max(held)} bytes in its memory at once, "
                     f"more than {args.max_server_memory}")
        if args.spill and os.listdir(os.path.join(out, "spill")):
            fail("spill files left behind: " + str(os.listdir(os.path.join(out, "spill"))))

        # The XDMF file lists every iteration, in every mode.
        xmf = os.path.join(out, "e2e.xmf")
        if not os.path.exists(xmf):
            fail(f"missing {xmf}")
        times = set(int(t) for t in re.findall(r'<Time Value="(\d+)"', open(xmf).read()))
        if times != set(range(args.iterations)):
            fail(f"{xmf} lists iterations {sorted(times)}, expected 0..{args.iterations - 1}")
        for it in range(args.iterations):
            # The global view: the collective file, or the master file of virtual datasets
            # over the per-core files (every mode writes one, the same name either way).
            name = os.path.join(out, f"e2e_It{it}.h5")
            if not os.path.exists(name):
                fail(f"missing {name}; have {sorted(os.listdir(out))}")
            expect_array(f"It{it} temperature", read(name, "temperature"),
                        expected_temperature(it, clients))
            expect_array(f"It{it} fluid/pressure", read(name, "fluid/pressure"),
                        expected_pressure(it, clients))
            expect_array(f"It{it} ids", read(name, "ids"), expected_ids(it, clients))
            if args.filemode != "Collective":
                files = sorted(glob.glob(os.path.join(out, f"e2e_It{it}_Pr*.h5")))
                if len(files) != writers:
                    fail(f"iteration {it}: {len(files)} files, expected one per writer ({writers})")
                found = blocks_by_name(files)
                for src in range(clients):
                    for b in range(2):
                        col = slice((src * 2 + b) * NX, (src * 2 + b + 1) * NX)
                        for var, want in (("temperature", expected_temperature(it, clients)[:, col]),
                                          ("fluid/pressure", expected_pressure(it, clients)[:, :, col]),
                                          ("ids", expected_ids(it, clients)[col])):
                            path = f"{var}/P{src}/B{b}"
                            if path not in found:
                                fail(f"iteration {it}: dataset {path} missing")
                            expect_array(f"It{it} {path}", read(found[path], path), want)
                expected_count = clients * 2 * 3
                if len(found) != expected_count:
                    fail(f"iteration {it}: {len(found)} datasets, expected {expected_count}")
            # The variable whose size changes every iteration (always file per core).
            pfiles = sorted(glob.glob(os.path.join(out, "particles", f"e2e_It{it}_Pr*.h5")))
            found = blocks_by_name(pfiles)
            for src in range(clients):
                path = f"particles/P{src}/B0"
                if path not in found:
                    fail(f"iteration {it}: {path} missing")
                np_ = 3 + it + src
                want = (it * 1000000 + src * 1000 + np.arange(np_)).astype(np.int64)
                expect_array(f"It{it} {path}", read(found[path], path), want)
            for src in range(clients):
                marker = os.path.join(out, f"event_mark_it{it}_src{src}")
                if not os.path.exists(marker):
                    fail(f"event 'mark' of client {src} at iteration {it} did not run")

    expect_no_leaked_segments(shm_before)
    print(f"OK: {args.iterations} iterations, {clients} clients, {servers} dedicated cores, "
          f"{args.threads} I/O threads, {args.nodes} dedicated nodes, "
          f"{args.filemode}: every value matches")


if __name__ == "__main__":
    main()
