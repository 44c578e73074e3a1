"""`sidecore inspect` on real output: tests/output/output_writer runs under MPI with the HDF5
store (FilePerCore with deflate, Collective without a filter), then every number inspect
prints is compared with what h5py reads from the same files (blocks, extents, positions,
root attributes, sizes) and with the writer's formulas (blocks and extents per client).

usage: test_inspect.py <sidecore> <output_writer> <repository root> <case>
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np

TOOL, WRITER, ROOT, CASE = sys.argv[1:5]
sys.path.insert(0, os.path.join(ROOT, "tests"))
from mpi_job import fail, mpi_env, run_job  # noqa: E402

TEMPLATE = os.path.join(ROOT, "tests", "cli", "xml", "inspect.xml.in")
NX, NY, NZ = 8, 5, 3  # tests/output/output_writer.c
ITERATIONS = 3
NAME = re.compile(r"^(.+)_It(\d+)(?:_Pr(\d+))?\.h5$")


def expect(actual, wanted, what):
    if actual != wanted:
        fail(f"{what}: got {actual!r}, expected {wanted!r}")


def write_run(tmp, out, name, np_, cores, filemode, compression):
    """Runs output_writer on np_ ranks; returns the number of clients."""
    text = open(TEMPLATE).read()
    for key, value in {"NAME": name, "CORES": cores, "FILEMODE": filemode, "OUT": out,
                       "COMPRESSION": compression}.items():
        text = text.replace(f"@{key}@", str(value))
    xml = os.path.join(tmp, name + ".xml")
    open(xml, "w").write(text)
    rc, _ = run_job(np_, [WRITER, xml, str(ITERATIONS)], mpi_env(), timeout=240, cwd=tmp)
    if rc != 0:
        fail(f"the writing job of {name} exited with {rc}")
    return np_ - cores


def inspect(*args, status=0):
    done = subprocess.run([TOOL, "inspect", *args], capture_output=True, text=True, timeout=120)
    if done.returncode != status:
        fail(f"sidecore inspect {' '.join(args)}: exit {done.returncode}, expected {status}\n"
             f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}")
    return done


def inspect_json(*args, status=0):
    return json.loads(inspect("--json", *args, status=status).stdout)


def files_of(out, name):
    """{iteration: {"writers": {w: path}, "shared": path}} from the names in the directory."""
    found = {}
    for f in os.listdir(out):
        m = NAME.match(f)
        if not m or m.group(1) != name:
            continue
        entry = found.setdefault(int(m.group(2)), {"writers": {}, "shared": None})
        if m.group(3) is None:
            entry["shared"] = os.path.join(out, f)
        else:
            entry["writers"][int(m.group(3))] = os.path.join(out, f)
    return found


def strip_block(name, source, block):
    for suffix in (f"/P{source}/B{block}", f"/P{source}"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def blocks_in(path, collective):
    """{variable: {"global": [...], "type": kind+size, "blocks": {(source, id): (writer, extents,
    position)}}} as h5py reads them from one file (per-block datasets, global datasets with
    their block table); links to other files are not followed."""
    found = {}

    def visit(f, group, prefix):
        for key in group:
            link = group.get(key, getlink=True)
            if not isinstance(link, h5py.HardLink):
                continue
            obj = group[key]
            full = prefix + key
            if isinstance(obj, h5py.Group):
                visit(f, obj, full + "/")
                continue
            a = obj.attrs
            if "indexed_by" in a:  # by_client/<variable>: a view of blocks listed elsewhere
                continue
            if "source" in a:
                source, block = int(a["source"]), int(a.get("block", 0))
                var = found.setdefault(strip_block(full, source, block), {"global": [], "blocks": {}})
                var["type"] = (obj.dtype.kind, obj.dtype.itemsize)
                if "global_dimensions" in a:
                    var["global"] = [int(x) for x in a["global_dimensions"]]
                position = [int(x) for x in a["position"]] if "position" in a else [0] * obj.ndim
                var["blocks"][(source, block)] = (-1 if collective else None, list(obj.shape), position)
            elif collective:
                var = found.setdefault(full, {"global": list(obj.shape), "blocks": {}})
                var["type"] = (obj.dtype.kind, obj.dtype.itemsize)
                for origin, dims, pos in zip(a["block_origins"], a["block_dimensions"], a["block_positions"]):
                    var["blocks"][(int(origin[1]), int(origin[2]))] = (
                        int(origin[0]), [int(x) for x in dims], [int(x) for x in pos])

    with h5py.File(path, "r") as f:
        visit(f, f, "")
    return found


def stored_view(out, name, iteration, collective):
    """What h5py finds for one iteration: the blocks of every writer's file (or the collective
    file) merged, each block's writer filled in."""
    files = files_of(out, name)[iteration]
    if collective:
        return blocks_in(files["shared"], True)
    merged = {}
    for writer, path in sorted(files["writers"].items()):
        for var, info in blocks_in(path, False).items():
            m = merged.setdefault(var, {"global": info["global"], "blocks": {}, "type": info["type"]})
            for key, (_, extents, position) in info["blocks"].items():
                m["blocks"][key] = (writer, extents, position)
    return merged


TYPE_NAMES = {("i", 1): "int8", ("i", 2): "int16", ("i", 4): "int32", ("i", 8): "int64",
              ("f", 2): "float32", ("f", 4): "float32", ("f", 8): "float64"}


def check_variable(v, stored, what):
    expect(v["type"], TYPE_NAMES[stored["type"]], f"{what}: type")
    expect(v["global_extents"], stored["global"], f"{what}: global extents")
    expect(v["blocks"], len(stored["blocks"]), f"{what}: blocks")
    expect(v["sources"], len({s for s, _ in stored["blocks"]}), f"{what}: sources")
    elements = sum(math.prod(e) for _, e, _ in stored["blocks"].values())
    expect(v["elements"], elements, f"{what}: elements")
    expect(v["bytes"], elements * stored["type"][1], f"{what}: bytes")
    listed = {(b["source"], b["block"]): (b["writer"], b["extents"], b["position"]) for b in v["block_list"]}
    expect(listed, stored["blocks"], f"{what}: block list")


def check_run(report, out, name, clients, writers, collective):
    """Checks the JSON report of one run against h5py and the writer's formulas."""
    files = files_of(out, name)
    expect(report["prefix"], os.path.join(out, name), "prefix")
    expect(report["file_mode"], "Collective" if collective else "FilePerCore", "file mode")
    expect(report["writer_files_per_iteration"], 0 if collective else writers, "writer files")
    expect(report["master_files"], 0 if collective else ITERATIONS, "master files")
    expect(report["xdmf"], os.path.join(out, name + ".xmf"), "XDMF file")
    expect(report["iterations"], sorted(files), "iterations")
    expect(report["iterations"], list(range(ITERATIONS)), "iterations written")
    expect(report["iteration_ranges"], f"0-{ITERATIONS - 1}", "ranges")

    # Files and bytes on disk.
    paths = [p for e in files.values() for p in list(e["writers"].values()) + [e["shared"]] if p]
    paths.append(os.path.join(out, name + ".xmf"))
    expect(report["files"], len(paths), "files")
    expect(report["bytes_on_disk"], sum(os.path.getsize(p) for p in paths), "bytes on disk")

    # Ratios: the sums of the data files' root attributes, per iteration and overall.
    raw_total = stored_total = 0
    for entry in report["per_iteration"]:
        e = files[entry["iteration"]]
        data = [e["shared"]] if collective else [e["writers"][w] for w in sorted(e["writers"])]
        raw = stored = 0
        for path in data:
            with h5py.File(path, "r") as f:
                raw += int(f.attrs["raw_bytes"])
                stored += int(f.attrs["stored_bytes"])
                if not math.isclose(float(f.attrs["compression_ratio"]),
                                    int(f.attrs["raw_bytes"]) / int(f.attrs["stored_bytes"]), rel_tol=1e-12):
                    fail(f"{path}: compression_ratio is not raw_bytes / stored_bytes")
        expect((entry["raw_bytes"], entry["stored_bytes"]), (raw, stored), f"iteration {entry['iteration']} bytes")
        if not math.isclose(entry["compression_ratio"], raw / stored, rel_tol=1e-9):
            fail(f"iteration {entry['iteration']}: ratio {entry['compression_ratio']}, expected {raw / stored}")
        expect(entry["files"], len(e["writers"]) + (1 if e["shared"] else 0), "files of an iteration")
        raw_total += raw
        stored_total += stored
    expect((report["raw_bytes"], report["stored_bytes"]), (raw_total, stored_total), "bytes overall")
    if not math.isclose(report["compression_ratio"], raw_total / stored_total, rel_tol=1e-9):
        fail(f"overall ratio {report['compression_ratio']}, expected {raw_total / stored_total}")

    # The inspected iteration (the last): every variable against h5py, block by block.
    inspected = report["inspected"]
    last = ITERATIONS - 1
    expect(inspected["iteration"], last, "inspected iteration")
    variables = {v["name"]: v for v in inspected["variables"]}
    expect(sorted(variables), sorted(["temperature", "pressure", "fpressure", "ids", "coords/x",
                                      "coords/y", "coords/z", "local"]), "variables")
    view = stored_view(out, name, last, collective)
    first = stored_view(out, name, 0, collective)
    for var, v in variables.items():
        if var.startswith("coords/"):
            # Time-invariant: stored with iteration 0, referenced from the later files.
            expect(v["time_invariant_from"], 0, f"{var}: time-invariant")
            check_variable(v, first[var], f"{var} (iteration 0)")
        else:
            expect(v["time_invariant_from"], None, f"{var}: time-invariant")
            check_variable(v, view[var], var)

    # And against the writer's formulas.
    t = variables["temperature"]
    expect((t["blocks"], t["sources"], t["global_extents"], t["elements"]),
           (2 * clients, clients, [2 * NZ, NY, NX * clients], 2 * clients * NZ * NY * NX), "temperature")
    positions = sorted(tuple(b["position"]) for b in t["block_list"])
    expect(positions, sorted((b * NZ, 0, r * NX) for r in range(clients) for b in range(2)), "temperature positions")
    expect((variables["coords/x"]["blocks"], variables["coords/y"]["blocks"]), (clients, 1), "coordinates")
    expect((variables["local"]["global_extents"], variables["local"]["blocks"], variables["local"]["type"]),
           ([], clients, "int32"), "local")
    return variables


def case_per_core_deflate():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        clients = write_run(tmp, out, "alpha", 4, 2, "FilePerCore", "deflate:4")
        report = inspect_json("--blocks", os.path.join(out, "alpha"))["runs"]
        expect(len(report), 1, "runs under a prefix")
        r = report[0]
        check_run(r, out, "alpha", clients, 2, collective=False)
        expect((r["complete_iterations"], r["incomplete_iterations"]), (list(range(ITERATIONS)), []), "complete")
        if not r["compression_ratio"] > 1.1:
            fail(f"deflate gave a ratio of {r['compression_ratio']}")
        expect(r["inspected"]["writers"], 2, "writers")

        # The text output shows the same numbers.
        text = inspect(os.path.join(out, "alpha")).stdout
        for wanted in (f"{out}/alpha: FilePerCore, 2 writer files per iteration, 3 master files, XDMF {out}/alpha.xmf",
                       "iterations   0-2 (3)", "incomplete   none",
                       f"on disk      {r['files']} files, {r['bytes_on_disk']} bytes",
                       f"ratio {r['compression_ratio']:.3f} overall: {r['raw_bytes']} bytes of data stored in {r['stored_bytes']}",
                       "iteration 2: complete, 8 variables"):
            if wanted not in text:
                fail(f"{wanted!r} not in:\n{text}")
        t = next(v for v in r["inspected"]["variables"] if v["name"] == "temperature")
        row = re.search(r"^  temperature +float64 +6 x 5 x 16 +(\d+) +(\d+) +(\d+) +(\d+)$", text, re.M)
        if not row or [int(x) for x in row.groups()] != [t["blocks"], t["sources"], t["elements"], t["bytes"]]:
            fail(f"temperature's row does not match the JSON:\n{text}")
        if not re.search(r"^  coords/x +float64 +16 .*time-invariant, stored in iteration 0$", text, re.M):
            fail(f"coords/x is not shown as time-invariant:\n{text}")

        # --iteration, and an iteration that is not stored.
        r0 = inspect_json("--iteration", "0", os.path.join(out, "alpha"))["runs"][0]
        expect(r0["inspected"]["iteration"], 0, "--iteration 0")
        expect([v["time_invariant_from"] for v in r0["inspected"]["variables"]], [None] * 8,
               "iteration 0 holds its time-invariant data")
        done = inspect("--iteration", "7", os.path.join(out, "alpha"), status=1)
        if "iteration 7" not in done.stderr or "stored: 0, 1, 2" not in done.stderr:
            fail(f"the error names neither the iteration nor the stored ones:\n{done.stderr}")
        # A file named directly shows its own iteration.
        r1 = inspect_json(os.path.join(out, "alpha_It1_Pr0.h5"))["runs"][0]
        expect(r1["inspected"]["iteration"], 1, "a file's iteration")

        # A writer file deleted: that iteration is incomplete, and says which file is missing.
        os.remove(os.path.join(out, "alpha_It1_Pr1.h5"))
        os.remove(os.path.join(out, "alpha_It2_Pr1.h5"))
        r = inspect_json(os.path.join(out, "alpha"))["runs"][0]
        expect((r["complete_iterations"], r["incomplete_iterations"]), ([0], [1, 2]), "after deletion")
        expect([e["missing_writer_files"] for e in r["per_iteration"]], [[], [1], [1]], "missing files")
        expect(r["inspected"]["complete"], False, "inspected iteration complete")
        expect(r["writer_files_per_iteration"], 2, "writer files (from iteration 0)")
        text = inspect(os.path.join(out, "alpha")).stdout
        for wanted in ("complete     0\n", f"incomplete   1: missing writer file 1 ({out}/alpha_It1_Pr1.h5)",
                       "iteration 2: incomplete"):
            if wanted not in text:
                fail(f"{wanted!r} not in:\n{text}")
    print("PASS")


def case_collective():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        clients = write_run(tmp, out, "beta", 3, 1, "Collective", "none")
        r = inspect_json("--blocks", os.path.join(out, "beta"))["runs"][0]
        check_run(r, out, "beta", clients, 1, collective=True)
        expect(r["incomplete_iterations"], [], "incomplete")
        expect(r["inspected"]["writers"], 1, "writers")
        # No filter: HDF5 stores each byte once (contiguous datasets).
        for entry in r["per_iteration"]:
            expect(entry["compression_ratio"], 1.0, f"iteration {entry['iteration']} ratio without a filter")
        text = inspect(os.path.join(out, "beta")).stdout
        for wanted in (f"{out}/beta: Collective, 1 file per iteration, XDMF {out}/beta.xmf",
                       "ratio 1.000 overall", "iteration 2: complete, 8 variables, blocks from 1 writer"):
            if wanted not in text:
                fail(f"{wanted!r} not in:\n{text}")
        # A collective file whose `complete` attribute says 0 makes its iteration incomplete.
        path = os.path.join(out, "beta_It1.h5")
        with h5py.File(path, "r+") as f:
            f.attrs.modify("complete", 0)
        r = inspect_json(os.path.join(out, "beta"))["runs"][0]
        expect(r["incomplete_iterations"], [1], "after complete = 0")
        expect(r["per_iteration"][1]["incomplete_files"], [path], "the file that says so")
        expect(r["per_iteration"][1]["clients_left_out"], [], "no client named")
        # The clients the writers name as having left it out (the store writes them) are said.
        with h5py.File(path, "r+") as f:
            f.attrs.create("clients_left_out", np.array([2, 5], dtype=np.int32))
        r = inspect_json(os.path.join(out, "beta"))["runs"][0]
        expect(r["per_iteration"][1]["clients_left_out"], [2, 5], "clients named")
        text = inspect(os.path.join(out, "beta")).stdout
        wanted = (f"1: {path} says complete = 0; clients 2, 5 left it out (dropped data of it, "
                  "stopped before ending it, or never ended it)")
        if wanted not in text:
            fail(f"{wanted!r} not in:\n{text}")
    print("PASS")


def case_directory():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        alpha = write_run(tmp, out, "alpha", 3, 1, "FilePerCore", "none")
        beta = write_run(tmp, out, "beta", 3, 1, "Collective", "deflate:6")
        runs = inspect_json("--blocks", out)["runs"]
        expect([r["simulation"] for r in runs], ["alpha", "beta"], "simulations in the directory")
        check_run(runs[0], out, "alpha", alpha, 1, collective=False)
        check_run(runs[1], out, "beta", beta, 1, collective=True)
        text = inspect(out + "/").stdout
        if f"{out}/alpha: FilePerCore" not in text or f"{out}/beta: Collective" not in text:
            fail(f"both runs are not listed:\n{text}")

        # Errors: exit status 1, naming what was looked for.
        empty = os.path.join(tmp, "empty")
        os.mkdir(empty)
        err = inspect(empty, status=1).stderr
        if f'no Sidecore output in the directory "{empty}"' not in err or "_It<iteration>" not in err:
            fail(f"unclear error for an empty directory:\n{err}")
        err = inspect(os.path.join(out, "gamma"), status=1).stderr
        if f"{out}/gamma_It<iteration>.h5" not in err or "alpha, beta" not in err:
            fail(f"unclear error for a prefix without output:\n{err}")
        err = inspect(os.path.join(tmp, "nowhere", "sim"), status=1).stderr
        if "does not exist" not in err:
            fail(f"unclear error for a missing directory:\n{err}")
        r = inspect_json(empty, status=1)
        if "error" not in r:
            fail(f"--json gives no error member: {r}")
        expect(inspect(status=2).returncode, 2, "no path")
        expect(inspect("--iteration", "x", out, status=2).returncode, 2, "bad iteration")
    print("PASS")


CASES = {name[len("case_"):]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    CASES[CASE]()
