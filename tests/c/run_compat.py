#!/usr/bin/env python3
"""Runs a program written the way Damaris programs are, and checks its files against the names
and values Damaris's rules give (recomputed here from those rules, not copied from a run).

    run_compat.py style --exe ./damaris_style --np 3 --mode cores --domains 1 --filemode FilePerCore
    run_compat.py example --exe ./damaris_example --np 3 --cores 1 --xml life.xml.in

Damaris's rules, as its HDF5 store applies them:
- FilePerCore: one file per writer and iteration, <FilesPath><simulation>_It<i>_Pr<writer>.h5;
  a block is the dataset <variable>/P<source> with one domain per client, and
  <variable>/P<source>/B<block> with several; <variable> is the full name, groups included.
- Collective: one file per iteration, <FilesPath><simulation>_It<i>.h5, one dataset per variable
  with the global extents (Sidecore stores a variable without global extents one dataset per
  block, named as in FilePerCore).
- Logs: each rank writes <FileName>_P<rank>_0.log.
"""
import argparse
import glob
import json
import os
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpi_job import block_dataset, expect_array, expect_no_leaked_segments, fail, job_segments, mpi_env, run_job  # noqa: E402

NX, NY, ITERATIONS = 4, 3, 3          # tests/c/damaris_style.c
NROW, NCOL, LIFE_ITERATIONS = 6, 5, 10  # tests/c/damaris_example.cpp, xml/life.xml.in


def run(np_, argv, env, timeout):
    status, _ = run_job(np_, argv, env, timeout)
    if status != 0:
        fail(f"the program exited with status {status}")


def datasets(filename):
    names = {}
    with h5py.File(filename, "r") as h5:
        def visit(path, obj):
            if isinstance(obj, h5py.Dataset):
                names[path] = obj[...]
        h5.visititems(visit)
    return names


MESHES = {"fluid_mesh": {"type": "unstructured", "topology": 3, "coordinates": ["umesh_vars/xyz"],
                         "vertex_global_id": {"variable": "umesh_vars/gid", "offset": -1},
                         "section_connectivity": {"variable": "step", "offset": 0}}}


def expect_meshes(filename):
    """The unstructured mesh of damaris_style.c, described in the file's "meshes" attribute."""
    with h5py.File(filename, "r") as h5:
        text = h5.attrs.get("meshes")
    if text is None:
        fail(f"{filename}: no 'meshes' attribute")
    got = json.loads(text.decode() if isinstance(text, bytes) else text)
    if got != MESHES:
        fail(f"{filename}: meshes {got}, expected {MESHES}")


def expect_logs(prefix, ranks):
    for rank in range(ranks):
        name = f"{prefix}_P{rank}_0.log"
        if not os.path.exists(name):
            fail(f"missing log file {name}; have {sorted(glob.glob(prefix + '*'))}")


def cells(it, src, block, domains):
    y, x = np.mgrid[0:NY, 0:NX]
    return (it * 100000.0 + (src * domains + block) * 1000.0 + y * NX + x).astype(np.float64)


def check_style(out, args, clients, writers):
    d = args.domains
    for it in range(ITERATIONS):
        if args.filemode == "FilePerCore":
            files = sorted(glob.glob(os.path.join(out, f"compat_It{it}_Pr*.h5")))
            want_files = [os.path.join(out, f"compat_It{it}_Pr{w}.h5") for w in range(writers)]
            if files != want_files:
                fail(f"iteration {it}: files {files}, expected {want_files}")
            found = {}
            for name in files:
                expect_meshes(name)
                for path, value in datasets(name).items():
                    if path in found:
                        fail(f"iteration {it}: {path} stored twice")
                    found[path] = value
            want = {}
            for src in range(clients):
                for b in range(d):
                    want[block_dataset("fluid/cells/p", src, b, d)] = cells(it, src, b, d)
                want[block_dataset("step", src, 0, d)] = np.array([it * 10 + src], dtype=np.int32)
                want[block_dataset("dt", src, 0, d)] = np.array([0.5 * it + src])
        else:
            name = os.path.join(out, f"compat_It{it}.h5")
            if not os.path.exists(name):
                fail(f"missing {name}; have {sorted(os.listdir(out))}")
            found = datasets(name)
            expect_meshes(name)
            glob_cells = np.concatenate(
                [cells(it, src, b, d) for src in range(clients) for b in range(d)], axis=1)
            want = {"fluid/cells/p": glob_cells}
            for src in range(clients):
                # Without global extents: one dataset per block, named as in FilePerCore.
                want[block_dataset("step", src, 0, d)] = np.array([it * 10 + src], dtype=np.int32)
                want[block_dataset("dt", src, 0, d)] = np.array([0.5 * it + src])
            # And Sidecore's view of them indexed by client, outside Damaris's groups.
            want["by_client/step"] = np.array([it * 10 + s for s in range(clients)], dtype=np.int32)
            want["by_client/dt"] = np.array([0.5 * it + s for s in range(clients)])
        if sorted(found) != sorted(want):
            fail(f"iteration {it}: datasets {sorted(found)}, expected {sorted(want)}")
        for path, value in want.items():
            expect_array(f"It{it} {path}", found[path], value)
        for src in range(clients):
            marker = os.path.join(out, f"mark_it{it}_src{src}")
            if not os.path.exists(marker) or open(marker).read().count("ran") != 1:
                fail(f"event 'mark' did not run once for client {src} at iteration {it}")
    expect_logs(os.path.join(out, "log", "compat"), args.np)
    print(f"compat: {ITERATIONS} iterations, {clients} clients, {writers} writers, "
          f"{args.domains} domain(s), {args.filemode}, mode {args.mode}: every name and value "
          "as Damaris's rules give them")


def check_example(out, args, clients, writers, servers):
    for it in range(LIFE_ITERATIONS):
        files = sorted(glob.glob(os.path.join(out, f"life_It{it}_Pr*.h5")))
        want_files = [os.path.join(out, f"life_It{it}_Pr{w}.h5") for w in range(writers)]
        if files != want_files:
            fail(f"iteration {it}: files {files}, expected {want_files}")
        found = {}
        for name in files:
            found.update(datasets(name))
        want = {f"life/cells/P{src}":
                np.arange(NROW * NCOL, dtype=np.int32).reshape(NROW, NCOL) + it * 1000 + src * 100
                for src in range(clients)}
        if sorted(found) != sorted(want):
            fail(f"iteration {it}: datasets {sorted(found)}, expected {sorted(want)}")
        for path, value in want.items():
            expect_array(f"It{it} {path}", found[path], value)
        for src in range(clients):
            runs = glob.glob(os.path.join(out, f"event_it{it}_src{src}_rank*"))
            if len(runs) != 1:
                fail(f"test_event ran {len(runs)} times for client {src} at iteration {it}")
            local = glob.glob(os.path.join(out, f"local_it{it}_src{src}_rank*"))
            if len(local) != (1 if it >= 5 else 0):
                fail(f"test_local_event ran {len(local)} times for client {src} at iteration {it}")
        bcast = glob.glob(os.path.join(out, f"bcast_it{it}_src0_rank*"))
        if len(bcast) != (max(servers, 1) if it >= 5 else 0):
            fail(f"test_bcast_event ran on {len(bcast)} processes at iteration {it}")
    expect_logs(os.path.join(out, "life"), args.np)
    print(f"example: {LIFE_ITERATIONS} iterations after a restart, {clients} clients, "
          f"{writers} writers: every name, value and event as expected")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("program", choices=["style", "example"])
    ap.add_argument("--exe", required=True)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--ranks-per-node", type=int, default=0)
    ap.add_argument("--mode", default="cores", choices=["cores", "nodes", "thread", "sync"])
    ap.add_argument("--domains", type=int, default=1)
    ap.add_argument("--filemode", default="FilePerCore")
    ap.add_argument("--xml", help="example: the configuration template (@OUT@, @CORES@)")
    ap.add_argument("--timeout", type=float, default=120)
    args = ap.parse_args()

    per_node = args.ranks_per_node or args.np
    nodes = (args.np + per_node - 1) // per_node
    if args.mode == "cores":
        servers = nodes
    elif args.mode == "nodes":
        servers = per_node
    else:
        servers = 0
    clients = args.np - servers
    writers = servers or clients

    shm_before = job_segments()
    with tempfile.TemporaryDirectory(prefix="sidecore-compat-") as out:
        env = mpi_env(args.ranks_per_node)
        if args.program == "style":
            env["COMPAT_CLIENTS"] = str(clients)
            run(args.np, [args.exe, out, args.mode, str(args.domains), args.filemode], env,
                args.timeout)
            check_style(out, args, clients, writers)
        else:
            text = open(args.xml).read().replace("@OUT@", out)
            text = text.replace("@CORES@", "1" if args.mode == "cores" else "0")
            xml = os.path.join(out, "life.xml")
            with open(xml, "w") as f:
                f.write(text)
            run(args.np, [args.exe, xml, out], env, args.timeout)
            check_example(out, args, clients, writers, servers)
    expect_no_leaked_segments(shm_before)


if __name__ == "__main__":
    main()
