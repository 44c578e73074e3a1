#!/usr/bin/env python3
"""Runs opm_flow_writer (OPM Flow's Damaris calls) with a configuration in the shape of OPM's
and reads every field back with h5py. Collective files, as the Damaris fork OPM uses writes
them: every field in global-cell order through GLOBAL_CELL_INDEX, the index itself placed by
itself, MPI_RANK and the mesh not stored (their store is "#" unless the mesh is saved).
FilePerCore files, as OPM writes them when it saves the mesh: every block as written, the mesh
pieces and MPI_RANK included."""
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
from mpi_job import expect_array, expect_no_leaked_segments, fail, job_segments, mpi_env, run_job  # noqa: E402

SIM = "opm-flow-test"
FIELDS = """PRESSURE FIPGAS FIPOIL FIPWAT KRNSW_GO KRNSW_OW PCSWM_GO PCSWM_OW PPCW RS RV SOMAX
1OVERBG 1OVERBO 1OVERBW GASKR GAS_DEN GAS_VISC OILKR OIL_DEN OIL_VISC WATKR WAT_DEN WAT_VISC
2FBF 4FBF DFBF GCDI GCDM GIP GIPG GIPL GIPR GKDI GKDM GKMO GKTR GMDS GMGP GMIP GMMO GMTR HTOF
OIP OIPG OIPL OIPR RPV S36F SEAF SGAS SIP SWAT TFBF WCD WIP WIPG WIPL WIPR""".split()
MESH = ["coordset/coords/values/x", "coordset/coords/values/y", "coordset/coords/values/z",
        "topologies/topo/elements/connectivity", "topologies/topo/elements/offsets",
        "topologies/topo/elements/types"]


def cells_of(rank):
    return 7 + 2 * rank


def global_numbers(total):
    """opm_flow_writer.cpp: global_number, for every cell in rank order."""
    a = 1 + total // 3
    while math.gcd(a, total) != 1:
        a += 1
    return (a * np.arange(total, dtype=np.int64) + total // 2) % total


def field_values(f, step, g):
    return 1.0e6 * f + 1000.0 * step + g + 0.5


def datasets_of(h5):
    names = []
    h5.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
    return set(names)


def check_collective(outdir, step, total):
    path = os.path.join(outdir, f"{SIM}_It{step}.h5")
    g = np.arange(total, dtype=np.int64)
    with h5py.File(path, "r") as h5:
        for f, name in enumerate(FIELDS):
            if name not in h5:
                fail(f"{path}: no dataset {name}")
            expect_array(f"{path}:{name}", h5[name][...], field_values(f, step, g))
        # Written at the first step (time-varying="false"), linked from the later files.
        expect_array(f"{path}:GLOBAL_CELL_INDEX", h5["GLOBAL_CELL_INDEX"][...], g.astype(np.int32))
        stored = datasets_of(h5) | set(k for k in h5.keys() if k == "GLOBAL_CELL_INDEX")
        extra = stored - set(FIELDS) - {"GLOBAL_CELL_INDEX"}
        if extra:
            fail(f"{path}: datasets whose store is \"#\" were stored: {sorted(extra)}")


def check_file_per_core(outdir, step, clients, numbers):
    found = {}
    paths = sorted(glob.glob(os.path.join(outdir, f"{SIM}_It{step}_Pr*.h5")))
    if not paths:
        fail(f"no file-per-core files of step {step} in {outdir}: {sorted(os.listdir(outdir))}")
    for path in paths:
        with h5py.File(path, "r") as h5:
            for name in datasets_of(h5):
                found[name] = h5[name][...]
    offset = 0
    for s in range(clients):
        n = cells_of(s)
        local = numbers[offset:offset + n]
        want = {name: field_values(f, step, local) for f, name in enumerate(FIELDS)}
        if step == 0:
            want["GLOBAL_CELL_INDEX"] = local.astype(np.int32)
            want["MPI_RANK"] = np.full(n, s, dtype=np.int32)
            i = np.arange(2 * n)
            want[MESH[0]] = 1000.0 * s + i
            want[MESH[1]] = 2000.0 * s + i
            want[MESH[2]] = -1.0 * i
            want[MESH[3]] = i.astype(np.int32)
            want[MESH[4]] = (2 * np.arange(n + 1)).astype(np.int32)
            want[MESH[5]] = np.full(n, 3, dtype=np.int8)
        for name, values in want.items():
            key = f"{name}/P{s}"
            if key not in found:
                fail(f"step {step}: no dataset {key}")
            expect_array(f"step {step}: {key}", found[key], values)
        offset += n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--writer", required=True)
    parser.add_argument("--xml", required=True)
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("--cores", type=int, default=1)
    parser.add_argument("--filemode", default="Collective")
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()

    clients = args.np - args.cores
    total = sum(cells_of(r) for r in range(clients))
    numbers = global_numbers(total)
    workdir = tempfile.mkdtemp(prefix="sidecore-opm-flow-")
    try:
        outdir = os.path.join(workdir, "output")
        os.makedirs(os.path.join(outdir, "damaris_log"))
        with open(args.xml) as f:
            xml = f.read()
        # As OPM's keywords fill its template: the mesh (and MPI_RANK) go to the store only
        # when the mesh is saved, which makes OPM choose FilePerCore.
        mesh_store = "MyStore" if args.filemode == "FilePerCore" else "#"
        for key, value in {"@CORES@": args.cores, "@FILEMODE@": args.filemode,
                           "@OUTDIR@": outdir, "@SIMNAME@": SIM, "@STORE@": "MyStore",
                           "@MESHSTORE@": mesh_store,
                           "@SHMEM@": f"opm-damaris-{os.getpid()}"}.items():
            xml = xml.replace(key, str(value))
        config = os.path.join(outdir, "damaris_config.xml")
        with open(config, "w") as f:
            f.write(xml)
        before = job_segments()
        # Strict checking: the configuration must load without a single warning.
        status, _ = run_job(args.np, [args.writer, config, str(args.steps)],
                            mpi_env(SIDECORE_STRICT=1), timeout=240, cwd=workdir)
        if status != 0:
            fail(f"opm_flow_writer exited with status {status}")
        expect_no_leaked_segments(before)
        for step in range(args.steps):
            if args.filemode == "Collective":
                check_collective(outdir, step, total)
            else:
                check_file_per_core(outdir, step, clients, numbers)
        print(f"PASS: {args.filemode}, {args.cores} dedicated core(s), {clients} clients, "
              f"{len(FIELDS)} fields of {total} cells, {args.steps} steps")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
