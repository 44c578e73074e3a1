#!/usr/bin/env python3
"""Runs tests/output/output_writer under mpirun in one output mode and reads everything back:
the global file of each iteration (master of virtual datasets, or collective file) with h5py,
the per-core files, and the XDMF file with VTK's XDMF reader (the one ParaView uses), comparing
every value with the global arrays the simulation held."""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpi_job import mpiexec  # noqa: E402

NX, NY, NZ = 8, 5, 3


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def expected(it, clients):
    z, y, x = np.meshgrid(np.arange(2 * NZ), np.arange(NY), np.arange(NX * clients), indexing="ij")
    field = 100.0 * it + np.sin(0.3 * x) + np.cos(0.2 * y) + 0.1 * z
    return {
        "temperature": field,
        "pressure": (2.0 * field).astype(np.float32),
        "fpressure": (2.0 * field).astype(np.float32),
        "ids": (it * 1000 + np.arange(NX * 2 * clients)).astype(np.int32),
        "coords/x": 0.5 * np.arange(NX * clients),
        "coords/y": 10.0 + np.arange(NY),
        "coords/z": 2.0 * np.arange(2 * NZ),
    }


def reduced(name, values, precision):
    """The values as stored with the precision options of the run."""
    p = precision.get(name, "full")
    if p == "half" and values.dtype.kind == "f":
        return values.astype(np.float16)  # rounded once, from the values' own type
    if p == "single" and values.dtype == np.float64:
        return values.astype(np.float32)
    return values


def check_equal(what, got, want):
    got = np.asarray(got)
    if got.shape != want.shape:
        fail(f"{what}: shape {got.shape}, expected {want.shape}")
    if got.dtype != want.dtype:
        fail(f"{what}: type {got.dtype}, expected {want.dtype}")
    if not np.array_equal(got, want):
        bad = tuple(np.argwhere(got != want)[0])
        fail(f"{what}: value at {bad} is {got[bad]}, expected {want[bad]}")


def check_global_file(path, it, clients, precision, first_iteration):
    want = expected(it, clients)
    with h5py.File(path, "r") as h5:
        for name, values in want.items():
            if name not in h5:
                fail(f"{path}: no dataset {name}; has {list(h5.keys())}")
            stored = reduced(name, values, precision)
            check_equal(f"{path}:{name}", h5[name][...], stored)
            if precision.get(name) == "half":
                # Within the stated precision of binary16: relative error below 2^-11.
                error = np.abs(h5[name][...].astype(np.float64) - values)
                if np.any(error > np.abs(values) * 2.0 ** -10 + 1e-7):
                    fail(f"{path}:{name}: half precision error {error.max()} too large")
        # Without global dimensions: one row per client ({client, iteration},
        # output_writer.c), in a master file's dataset "local" or, in a collective file whose
        # group "local" holds each block's dataset, in "by_client/local".
        if "local" not in h5:
            fail(f"{path}: no 'local'; has {list(h5.keys())}")
        view = h5["local"] if isinstance(h5["local"], h5py.Dataset) else h5.get("by_client/local")
        if view is None:
            fail(f"{path}: no per-client view of 'local' (by_client/local); has "
                 f"{list(h5['local'].keys())}")
        rows = np.array([[c, it] for c in range(clients)], dtype=np.int32)
        check_equal(f"{path}:{view.name} (per client)", view[...], rows)
        if view.attrs["indexed_by"] not in (b"client", "client"):
            fail(f"{path}:{view.name} indexed_by {view.attrs['indexed_by']}")
        if isinstance(h5["local"], h5py.Group):  # and each block in its own dataset
            for c in range(clients):
                block = h5[f"local/P{c}"]  # P<source>/B<block> with several domains per client
                block = block if isinstance(block, h5py.Dataset) else block["B0"]
                check_equal(f"{path}:{block.name}", block[...], rows[c])
        if int(h5.attrs["iteration"]) != it:
            fail(f"{path}: iteration attribute {h5.attrs['iteration']}, expected {it}")
        if h5["temperature"].attrs["layout"] != b"block3d" and h5["temperature"].attrs["layout"] != "block3d":
            fail(f"{path}: temperature layout attribute {h5['temperature'].attrs['layout']}")
        if it != first_iteration and "coords/x" in h5:
            link = h5.get("coords/x", getlink=True)
            kind = type(link).__name__
            if kind not in ("ExternalLink", "SoftLink", "HardLink"):
                fail(f"{path}: unexpected link {kind}")
        return h5.attrs.get("compression_ratio")


def check_per_core(out, it, writers, clients, first_iteration):
    files = sorted(glob.glob(os.path.join(out, f"out_It{it}_Pr*.h5")))
    if len(files) != writers:
        fail(f"iteration {it}: {len(files)} per-core files, expected {writers}")
    ratio = None
    blocks = 0
    for f in files:
        with h5py.File(f, "r") as h5:
            ratio = h5.attrs.get("compression_ratio", ratio)
            if "temperature" in h5:
                for src in h5["temperature"]:
                    for b in h5["temperature"][src]:
                        d = h5["temperature"][src][b]
                        blocks += 1
                        if d.shape != (NZ, NY, NX):
                            fail(f"{f}: block {src}/{b} has shape {d.shape}: ghosts not removed")
                        if d.attrs["layout"] not in (b"block3d", "block3d"):
                            fail(f"{f}: block layout attribute {d.attrs['layout']}")
                        if len(d.attrs["position"]) != 3:
                            fail(f"{f}: block without position")
            if "coords" in h5 and it != first_iteration:
                fail(f"{f}: time-invariant coordinates stored again in iteration {it}")
    if blocks != clients * 2:
        fail(f"iteration {it}: {blocks} temperature blocks, expected {clients * 2}")
    return ratio


def check_xdmf(path, iterations, clients, precision):
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkCommonDataModel import vtkCompositeDataSet
    from vtkmodules.vtkCommonExecutionModel import vtkStreamingDemandDrivenPipeline
    from vtkmodules.vtkIOXdmf2 import vtkXdmfReader

    reader = vtkXdmfReader()
    reader.SetFileName(path)
    reader.UpdateInformation()
    info = reader.GetOutputInformation(0)
    times = list(info.Get(vtkStreamingDemandDrivenPipeline.TIME_STEPS()) or [])
    if [int(t) for t in times] != list(iterations):
        fail(f"{path}: time steps {times}, expected {list(iterations)}")
    for it in iterations:
        reader.UpdateTimeStep(float(it))
        output = reader.GetOutputDataObject(0)
        grids = {}
        for i in range(output.GetNumberOfBlocks()):
            grids[output.GetMetaData(i).Get(vtkCompositeDataSet.NAME())] = output.GetBlock(i)
        if "grid3d" not in grids:
            fail(f"{path}: no grid3d in {list(grids)} at iteration {it}")
        grid = grids["grid3d"]
        if grid.GetClassName() != "vtkRectilinearGrid":
            fail(f"{path}: grid3d read as {grid.GetClassName()}")
        want = expected(it, clients)
        for axis, name in ((grid.GetXCoordinates(), "coords/x"), (grid.GetYCoordinates(), "coords/y"),
                           (grid.GetZCoordinates(), "coords/z")):
            check_equal(f"XDMF it {it} {name}", vtk_to_numpy(axis).astype(np.float64), want[name])
        for name in ("temperature", "pressure"):
            array = grid.GetPointData().GetArray(name)
            if array is None:
                fail(f"{path}: no point data {name} at iteration {it}")
            got = vtk_to_numpy(array).reshape(want[name].shape)
            stored = reduced(name, want[name], precision)
            check_equal(f"XDMF it {it} {name}", got.astype(stored.dtype), stored)
        regular = [g for n, g in grids.items() if n.startswith("grid_")]
        ids = [g.GetPointData().GetArray("ids") for g in regular if g.GetPointData().GetArray("ids")]
        if not ids:
            fail(f"{path}: no grid with ids at iteration {it} ({list(grids)})")
        check_equal(f"XDMF it {it} ids", vtk_to_numpy(ids[0]).astype(np.int32), want["ids"])
        # A variable without global dimensions, as the global file views it: one row per
        # client.
        local = [g.GetPointData().GetArray("local") for g in regular
                 if g.GetPointData().GetArray("local")]
        if not local:
            fail(f"{path}: 'local' missing from the grids at iteration {it} ({list(grids)})")
        rows = np.array([[c, it] for c in range(clients)], dtype=np.int32)
        check_equal(f"XDMF it {it} local", vtk_to_numpy(local[0]).astype(np.int32)
                    .reshape(rows.shape), rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--writer", required=True)
    ap.add_argument("--xml", required=True)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--cores", type=int, default=0)
    ap.add_argument("--filemode", default="FilePerCore")
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--frequency", type=int, default=1)
    ap.add_argument("--option", action="append", default=[], help="KEY=VALUE store option")
    ap.add_argument("--min-ratio", type=float, default=0.0)
    ap.add_argument("--no-xdmf-check", action="store_true")
    args = ap.parse_args()

    options = dict(o.split("=", 1) for o in args.option)
    precision = {k.split(".", 1)[1]: v for k, v in options.items() if k.startswith("Precision.")}
    if "Precision" in options:
        for name in ("temperature", "pressure", "fpressure", "coords/x", "coords/y", "coords/z"):
            precision.setdefault(name, options["Precision"])
    clients = args.np - args.cores
    writers = args.cores if args.cores else clients
    stored = [it for it in range(args.iterations) if it % args.frequency == 0]
    first = stored[0]

    work = tempfile.mkdtemp(prefix="sidecore-output-")
    try:
        out = os.path.join(work, "run")
        os.makedirs(out)
        xml = open(args.xml).read()
        option_lines = "\n".join(f'      <option key="{k}">{v}</option>' for k, v in options.items())
        for key, value in {"@CORES@": args.cores, "@FILEMODE@": args.filemode, "@OUT@": out,
                           "@FREQUENCY@": args.frequency, "@OPTIONS@": option_lines}.items():
            xml = xml.replace(key, str(value))
        xml_path = os.path.join(work, "output.xml")
        with open(xml_path, "w") as f:
            f.write(xml)
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1", SIDECORE_LOG_LEVEL="debug")
        cmd = mpiexec(args.np) + [args.writer, xml_path, str(args.iterations)]
        run = subprocess.run(cmd, env=env, cwd=work, timeout=300, capture_output=True, text=True)
        log = run.stdout + run.stderr
        if run.returncode != 0:
            sys.stdout.write(log)
            fail(f"{' '.join(cmd)} exited with {run.returncode}")
        if "compression ratio" not in log:
            sys.stdout.write(log)
            fail("no compression ratio in the debug log")

        for it in range(args.iterations):
            exists = os.path.exists(os.path.join(out, f"out_It{it}.h5"))
            if exists != (it in stored):
                fail(f"iteration {it}: global file {'present' if exists else 'missing'} with frequency {args.frequency}")
        ratios = []
        for it in stored:
            ratio = check_global_file(os.path.join(out, f"out_It{it}.h5"), it, clients, precision, first)
            if args.filemode == "FilePerCore":
                ratio = check_per_core(out, it, writers, clients, first)
            if ratio is None:
                fail(f"iteration {it}: no compression_ratio attribute")
            ratios.append(float(ratio))
            print(f"iteration {it}: compression ratio {float(ratio):.2f}")
        if min(ratios) < args.min_ratio:
            fail(f"compression ratio {min(ratios):.2f} below {args.min_ratio}")

        xmf = os.path.join(out, "out.xmf")
        if not os.path.exists(xmf):
            fail(f"missing {xmf}; have {sorted(os.listdir(out))}")
        if not args.no_xdmf_check:
            check_xdmf(xmf, stored, clients, precision)

        # The output directory can be moved: master files and XDMF use relative names.
        moved = os.path.join(work, "moved")
        shutil.move(out, moved)
        cwd = os.getcwd()
        os.chdir("/")
        try:
            check_global_file(os.path.join(moved, f"out_It{stored[-1]}.h5"), stored[-1], clients,
                              precision, first)
            if not args.no_xdmf_check:
                check_xdmf(os.path.join(moved, "out.xmf"), stored, clients, precision)
        finally:
            os.chdir(cwd)
    finally:
        (shutil.rmtree(work, ignore_errors=True) if not os.environ.get("SIDECORE_KEEP_OUTPUT") else print(work))
    print(f"OK: {args.filemode}, {clients} clients, {args.cores} dedicated cores, iterations "
          f"{stored}: every value matches")


if __name__ == "__main__":
    main()
