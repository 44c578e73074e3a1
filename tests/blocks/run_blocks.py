#!/usr/bin/env python3
"""Irregular blocks end to end: tests/blocks/irregular_blocks writes with N clients and M
writers in one mode, then reads everything back through sidecore/read.h with another number
of ranks; the master file (FilePerCore) or the collective file must also give the whole field
to h5py, value by value."""
import argparse
import os
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpi_job import expect_array, expect_no_leaked_segments, fail, job_segments, mpi_env, run_job  # noqa: E402

NY, NX = 60, 50


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--program", required=True)
    p.add_argument("--xml", required=True)
    p.add_argument("--np", type=int, required=True, help="ranks of the writing job")
    p.add_argument("--cores", type=int, default=0)
    p.add_argument("--nodes", type=int, default=0)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--ranks-per-node", type=int, default=0)
    p.add_argument("--filemode", default="FilePerCore")
    p.add_argument("--expect-mixed", action="store_true",
                   help="field must be packed in some files and not in others (Auto)")
    p.add_argument("--domains", type=int, default=1, help="<domains count> (Auto's threshold)")
    p.add_argument("--iterations", type=int, default=4)
    p.add_argument("--readers", type=int, nargs="+", default=[1, 3])
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="another option of the HDF5 store (e.g. BlockLayout=Packed)")
    a = p.parse_args()
    options = dict(o.split("=", 1) for o in a.option)
    # Each variable's block layout (BlockLayout, BlockLayout.<variable>; Auto by default).
    layouts = {v: options.get(f"BlockLayout.{v}", options.get("BlockLayout", "Auto"))
               for v in ("field", "tracers")}

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        text = open(a.xml).read()
        for key, value in {"CORES": a.cores, "NODES": a.nodes, "THREADS": a.threads,
                           "FILEMODE": a.filemode, "OUT": out, "DOMAINS": a.domains,
                           "OPTIONS": "".join(f'<option key="{k}">{v}</option>'
                                              for k, v in options.items())}.items():
            text = text.replace(f"@{key}@", str(value))
        xml = os.path.join(tmp, "blocks.xml")
        open(xml, "w").write(text)
        before = job_segments()
        rc, _ = run_job(a.np, [a.program, "write", xml, str(a.iterations)],
                        mpi_env(a.ranks_per_node), timeout=240, cwd=tmp)
        if rc != 0:
            fail(f"the writing job exited with {rc}")
        expect_no_leaked_segments(before)
        node_count = -(-a.np // a.ranks_per_node) if a.ranks_per_node else 1
        servers = node_count * a.cores
        if a.nodes:  # every rank of the last `nodes` nodes is a server
            servers = a.np - (node_count - a.nodes) * a.ranks_per_node
        clients = a.np - servers

        for readers in a.readers:
            rc, output = run_job(readers, [a.program, "check", os.path.join(out, "blocks"),
                                           str(a.iterations), str(clients)],
                                 mpi_env(), timeout=240, cwd=tmp)
            if rc != 0 or "ok" not in output:
                fail(f"reading back with {readers} ranks failed (exit {rc})")

        # The global view: master file of virtual datasets, or the collective file.
        y = np.arange(NY)[:, None]
        x = np.arange(NX)[None, :]
        layouts_seen = set()
        for it in range(a.iterations):
            path = os.path.join(out, f"blocks_It{it}.h5")
            if not os.path.exists(path):
                fail(f"{path} is missing")
            with h5py.File(path, "r") as f:
                expect_array(f"field of iteration {it} in {os.path.basename(path)}",
                             f["field"][...], it * 100000.0 + y * 1000.0 + x + 0.25)
                origins = f["field"].attrs["block_origins"]
                if len(origins) != len({(int(o[1]), int(o[2])) for o in origins}):
                    fail(f"iteration {it}: a block is listed twice in the block table")
            if a.filemode == "FilePerCore":
                seen = expect_block_layouts(out, it, layouts, a.domains, len(origins))
                layouts_seen |= seen
                if ("field", True) in seen:
                    # Each client's first two bands are whole rows, packed one after the other:
                    # the master maps them as one box.
                    with h5py.File(path, "r") as f:
                        mappings = len(f["field"].virtual_sources())
                    if mappings >= len(origins):
                        fail(f"iteration {it}: {mappings} mappings for {len(origins)} blocks; "
                             "packed neighbours were not joined")
        if a.expect_mixed and not {("field", True), ("field", False)} <= layouts_seen:
            fail(f"field was expected both packed and not packed; seen: {sorted(layouts_seen)}")
    print("PASS")


def expect_block_layouts(out, it, layouts, domains, field_blocks):
    """Each writer's file holds a variable as <var>/packed and <var>/packed_index only (Packed,
    or Auto when some block id is at or above <domains count>) or as one dataset per
    block (Datasets, or Auto when every id is below it); the writers' files hold as many
    blocks of field as the master file maps."""
    listed = 0
    seen = set()
    files = sorted(f for f in os.listdir(out) if f.startswith(f"blocks_It{it}_Pr") and f.endswith(".h5"))
    if not files:
        fail(f"iteration {it}: no file-per-core file")
    for name in files:
        with h5py.File(os.path.join(out, name), "r") as f:
            for variable, layout in layouts.items():
                if variable not in f:
                    continue  # this writer's clients wrote no block of it
                members = sorted(f[variable].keys())
                if "packed" in members:
                    if members != ["packed", "packed_index"]:
                        fail(f"{name}: {variable} holds {members}, expected packed and packed_index")
                    index = f[variable]["packed_index"][...]
                    if int(index[:, 3].sum()) != f[variable]["packed"].shape[0]:
                        fail(f"{name}: the index of {variable} does not cover its packed dataset")
                    ids = [int(b) for b in index[:, 1]]
                else:
                    ids = []
                    f[variable].visititems(lambda path, obj: ids.append(
                        int(obj.attrs["block"])) if isinstance(obj, h5py.Dataset) else None)
                expected = {"Packed": True, "Datasets": False}.get(layout, max(ids) >= domains)
                if ("packed" in members) != expected:
                    fail(f"{name}: {variable} (BlockLayout {layout}, block ids {sorted(ids)}) is "
                         f"{'' if 'packed' in members else 'not '}packed")
                seen.add((variable, "packed" in members))
                if variable == "field":
                    listed += len(ids)
    if listed != field_blocks:
        fail(f"iteration {it}: the writers' files hold {listed} blocks of field, the master maps "
             f"{field_blocks}")
    return seen


if __name__ == "__main__":
    main()
