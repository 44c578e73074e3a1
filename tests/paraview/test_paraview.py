"""<paraview> runs Catalyst scripts on the writers: image_writer (a C simulation shaped as
Damaris's ParaView "image" example) with a legacy coprocessing script and a Catalyst 2 script,
on dedicated cores, on a dedicated node, in background threads and in synchronous mode, under
an X server of the test's own (Xvfb
-noreset). Checked: the extracts the scripts write hold, piece by piece, the pressure each
client wrote (read back with VTK); the pictures are 320 x 240 and show the coloured field;
both scripts write at every second time step, and the legacy one also at iteration 3, forced
by end-iteration (Catalyst 2 extractors follow their own triggers)."""
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "lib"))
from xvfb import start_xvfb  # noqa: E402
from mpi_job import (expect_array, expect_no_leaked_segments, exported, job_segments,  # noqa: E402
                     mpi_env, mpiexec, run_job)

W, H, D = 16, 12, 8  # image_writer.c
ITERATIONS = 5
END_ITERATION = 3


@pytest.fixture(scope="module")
def display():
    """An X server for the job (scripts/lib/xvfb.py)."""
    xvfb = shutil.which("Xvfb")
    assert xvfb, "Xvfb is not installed (Debian: xvfb): ParaView renders through X"
    server, name = start_xvfb(xvfb)
    yield name
    os.killpg(server.pid, signal.SIGTERM)
    server.wait()


def configure(tmp_path, clients, cores, nodes=0, threads=0,
              scripts=("legacy_pipeline.py", "catalyst2_pipeline.py")):
    out = tmp_path / "out"
    out.mkdir()
    xml = tmp_path / "image.xml"
    xml.write_text(f"""<?xml version="1.0"?>
<simulation name="image" xmlns="http://damaris.gforge.inria.fr/damaris/model">
  <architecture>
    <domains count="1"/>
    <dedicated cores="{cores}" nodes="{nodes}" threads="{threads}"/>
    <buffer name="buffer" size="16777216" policy="wait" timeout="120"/>
    <queue name="queue" size="64"/>
  </architecture>
  <data>
    <layout name="zonal" type="double" dimensions="{W},{H},{D}" global="{W},{H},{D * clients}"/>
    <layout name="mx" type="float" dimensions="{W + 1}"/>
    <layout name="my" type="float" dimensions="{H + 1}"/>
    <layout name="mz" type="float" dimensions="{D + 1}"/>
    <group name="coord">
      <variable name="x" layout="mx" visualizable="false" time-varying="false"/>
      <variable name="y" layout="my" visualizable="false" time-varying="false"/>
      <variable name="z" layout="mz" visualizable="false" time-varying="false"/>
    </group>
    <mesh name="mesh" type="rectilinear" topology="3">
      <coord name="coord/x" label="x"/><coord name="coord/y" label="y"/>
      <coord name="coord/z" label="z"/>
    </mesh>
    <variable name="pressure" type="scalar" layout="zonal" mesh="mesh" centering="zonal"/>
  </data>
  <paraview end-iteration="{END_ITERATION}">
    {"".join(f"<script>{HERE}/{s}</script>" for s in scripts)}
  </paraview>
</simulation>
""")
    return str(xml), str(out)


def pressure(it, c):
    k, j, i = np.meshgrid(np.arange(D), np.arange(H), np.arange(W), indexing="ij")
    return (i + 10.0 * j + 100.0 * (k + c * D) + it).reshape(-1)


def extract_pieces(path):
    """The non-empty datasets of a multiblock extract, however the parallel writer nested them
    (the pieces of each rank under its own block)."""
    from vtkmodules.vtkIOXML import vtkXMLMultiBlockDataReader
    assert os.path.exists(path), f"no extract {path}"
    reader = vtkXMLMultiBlockDataReader()
    reader.SetFileName(str(path))
    reader.Update()
    pieces = []
    leaves = reader.GetOutput().NewIterator()
    leaves.InitTraversal()
    while not leaves.IsDoneWithTraversal():
        piece = leaves.GetCurrentDataObject()
        leaves.GoToNextItem()
        if piece is not None and piece.GetNumberOfCells() > 0:
            pieces.append(piece)
    return pieces


def check_extract(path, it, clients):
    """The multiblock extract of one time step: one block (the mesh), one piece per client,
    each at its place with the pressure it wrote."""
    from vtkmodules.util import numpy_support
    found = {}
    for piece in extract_pieces(path):
        c = piece.GetExtent()[4] // D
        assert piece.GetExtent() == (0, W, 0, H, c * D, c * D + D), piece.GetExtent()
        found[c] = numpy_support.vtk_to_numpy(piece.GetCellData().GetArray("pressure"))
    assert sorted(found) == list(range(clients)), (path, sorted(found))
    for c, values in found.items():
        expect_array(f"{os.path.basename(path)} client {c}", values, pressure(it, c))


def run_report(out):
    """The run report the job left in its output directory."""
    import glob
    import json
    found = glob.glob(os.path.join(out, "image_*_report.json"))
    assert len(found) == 1, found
    with open(found[0]) as f:
        return json.load(f)


def pipeline_calls(report):
    """(calls, failures) of the <paraview> entry of each writer's actions."""
    counts = []
    for writer in report["writers"]:
        entries = [a for a in writer["actions"] if a["kind"] == "paraview"]
        assert len(entries) == 1 and entries[0]["name"] == "<paraview>", writer["actions"]
        counts.append((entries[0]["calls"], entries[0]["failures"]))
    return counts


def check_picture(path, size=(320, 240), coloured=0.3):
    """A picture of that size that shows the coloured field: many colours, much of it not the
    background, and at least the share `coloured` of that in strong colours."""
    from vtkmodules.util import numpy_support
    from vtkmodules.vtkIOImage import vtkPNGReader
    assert os.path.exists(path), f"no picture {path}"
    reader = vtkPNGReader()
    reader.SetFileName(path)
    reader.Update()
    image = reader.GetOutput()
    assert image.GetDimensions()[:2] == size, image.GetDimensions()
    pixels = numpy_support.vtk_to_numpy(image.GetPointData().GetScalars())[:, :3].astype(int)
    background = np.bincount(pixels @ [65536, 256, 1]).argmax()
    drawn = (pixels @ [65536, 256, 1]) != background
    colours = len(np.unique(pixels[drawn] @ [65536, 256, 1]))
    assert drawn.mean() > 0.1 and colours > 20, (path, drawn.mean(), colours)
    # Coloured, not grey: the pressure's colour map.
    spread = pixels[drawn].max(axis=1) - pixels[drawn].min(axis=1)
    assert (spread > 60).mean() > coloured, (path, (spread > 60).mean())


def run_and_check(tmp_path, display, clients, cores, nodes=0, threads=0, program_options=(),
                  warning=None):
    """clients simulation ranks; with dedicated nodes, one rank per (virtual) node. warning:
    text the job must print once (the only warning allowed)."""
    xml, out = configure(tmp_path, clients, cores, nodes, threads)
    before = job_segments()
    per_node = 1 if nodes else 0
    env = mpi_env(per_node, DISPLAY=display)
    launch = exported("DISPLAY", *(["SIDECORE_RANKS_PER_NODE"] if per_node else []))
    status, output = run_job(clients + cores + nodes,
                             launch + [os.environ["IMAGE_WRITER"], xml, str(ITERATIONS),
                                       *program_options],
                             env, 300, cwd=out)
    assert status == 0, f"image_writer exited with {status}"
    assert "error" not in output.lower(), "the job logged an error"
    warnings = [line for line in output.splitlines() if "] warning: " in line]
    if warning:
        assert len(warnings) == 1 and warning in warnings[0], warnings
    else:
        assert not warnings, warnings
    expect_no_leaked_segments(before)
    # Every writer ran the pipelines at every iteration, none failed.
    report = run_report(out)
    assert pipeline_calls(report) == [(ITERATIONS, 0)] * len(report["writers"]), report["writers"]
    assert report["totals"]["action_failures"] == 0
    # The legacy script writes every second step, and at end-iteration, forced.
    written = sorted(f for f in os.listdir(out) if f.startswith("legacy_input_"))
    assert written == [f"legacy_input_{s}{e}" for s in (0, 2, 3, 4) for e in ("", ".vtm")], \
        written
    for it in (0, 2, END_ITERATION, 4):
        check_extract(os.path.join(out, f"legacy_input_{it}.vtm"), it, clients)
        check_picture(os.path.join(out, f"legacy_{it}.png"))
    # The Catalyst 2 script's extractors follow their own trigger: every second step.
    written = sorted(f for f in os.listdir(os.path.join(out, "extracts"))
                     if f.startswith("v2_input_") and f.endswith(".vtm"))
    steps = [0, 2, 4]
    assert written == [f"v2_input_{s:06d}.vtm" for s in steps], written
    for s in steps:
        check_extract(os.path.join(out, "extracts", f"v2_input_{s:06d}.vtm"), s, clients)
        check_picture(os.path.join(out, "extracts", f"v2_{s:06d}.png"))


def test_dedicated_cores(tmp_path, display):
    run_and_check(tmp_path, display, clients=3, cores=1)


def test_dedicated_nodes(tmp_path, display):
    run_and_check(tmp_path, display, clients=2, cores=0, nodes=1)


def test_thread(tmp_path, display):
    """Background threads under MPI_THREAD_MULTIPLE render together."""
    run_and_check(tmp_path, display, clients=2, cores=0, threads=1,
                  program_options=["--thread-multiple"])


def test_thread_without_thread_multiple(tmp_path, display):
    """Without MPI_THREAD_MULTIPLE the threads cannot render together: the run says so and
    renders synchronously, with the same output (before, each writer rendered its piece alone,
    over the other's files)."""
    run_and_check(tmp_path, display, clients=2, cores=0, threads=1,
                  warning="the <paraview> pipelines render with all writers together, which a "
                          "background thread can only do when MPI is initialized with")


def test_synchronous(tmp_path, display):
    run_and_check(tmp_path, display, clients=2, cores=0)


def test_failing_pipeline(tmp_path, display):
    """A Catalyst pipeline that raises at one time step: ParaView prints the traceback, the
    writers log the failure and go on (later steps run), and the run report counts it."""
    xml, out = configure(tmp_path, clients=2, cores=1, scripts=["failing_pipeline.py"])
    status, output = run_job(3, exported("DISPLAY") + [os.environ["IMAGE_WRITER"], xml,
                                                       str(ITERATIONS)],
                             mpi_env(DISPLAY=display), 300, cwd=out)
    assert status == 0, f"image_writer exited with {status}"
    assert "this pipeline fails at time step 2" in output, output
    assert "a Catalyst pipeline failed at iteration 2 (ValueError: this pipeline fails" in output
    report = run_report(out)
    assert pipeline_calls(report) == [(ITERATIONS, 1)], report["writers"]
    assert report["totals"]["action_failures"] == 1
    for rank in range(3):
        assert f"rank {rank}: done" in output, f"rank {rank} did not finish"


def hot_spots(path):
    """Of the picture's plane (rows above the colour bar): the share of hot pixels (bright:
    red above 180, not the white background) and, per half of the width, their centroid."""
    from vtkmodules.util import numpy_support
    from vtkmodules.vtkIOImage import vtkPNGReader
    reader = vtkPNGReader()
    reader.SetFileName(path)
    reader.Update()
    width, height, _ = reader.GetOutput().GetDimensions()
    rgb = numpy_support.vtk_to_numpy(reader.GetOutput().GetPointData().GetScalars())[:, :3]
    rgb = rgb.reshape(height, width, 3)[::-1].astype(int)  # row 0 at the top
    plane = rgb[:int(height * 0.85)]
    hot = (plane[..., 0] > 180) & ~(plane.min(axis=2) > 240)
    rows, cols = np.nonzero(hot)
    halves = []
    for side in (cols < width // 2, cols >= width // 2):
        assert side.any(), f"{path}: no hot pixel in one half of the picture"
        halves.append((cols[side].mean() / width, rows[side].mean() / height))
    return hot.mean(), halves


def compare_hot_spots(picture, oracle):
    share, spots = hot_spots(picture)
    want_share, want_spots = hot_spots(oracle)
    assert abs(share - want_share) <= 0.3 * want_share, (picture, share, want_share)
    for (x, y), (want_x, want_y) in zip(spots, want_spots):
        assert abs(x - want_x) < 0.03 and abs(y - want_y) < 0.03, (picture, spots, want_spots)


def heat_demo_configuration(tmp_path):
    """scripts/demo_paraview.sh's configuration (examples/heat_paraview.xml) writing to
    tmp_path/out: (xml path, output directory)."""
    assert os.environ.get("HEAT_INSITU"), "the examples were not built (SIDECORE_BUILD_EXAMPLES)"
    examples = os.path.join(HERE, "..", "..", "examples")
    out = tmp_path / "out"
    out.mkdir()
    xml = tmp_path / "heat.xml"
    with open(os.path.join(examples, "heat_paraview.xml")) as f:
        xml.write_text(f.read().replace("@OUTPUT@", f"{out}/")
                       .replace("@SCRIPTS@", os.path.join(examples, "paraview") + "/"))
    return xml, out


def test_heat_demo(tmp_path, display):
    """scripts/demo_paraview.sh's run: the heat diffusion of examples/heat_insitu.c with
    examples/heat_paraview.xml. The slice ParaView extracted at steps 0, 10 and 20 holds,
    cell by cell (ghost cells left out), the temperature the HDF5 store wrote for layer 16:
    the rendering path and the storage path agree."""
    import h5py
    from vtkmodules.util import numpy_support
    from vtkmodules.vtkIOXML import vtkXMLPPolyDataReader
    try:
        from vtkmodules.vtkFiltersCore import vtkCellCenters
    except ImportError:  # older VTK
        from vtkmodules.vtkFiltersGeneral import vtkCellCenters
    xml, out = heat_demo_configuration(tmp_path)
    status, output = run_job(4, exported("DISPLAY") + [os.environ["HEAT_INSITU"], str(xml), "21"],
                             mpi_env(DISPLAY=display), 300, cwd=str(out))
    assert status == 0, f"sidecore_heat_insitu exited with {status}"
    assert "error" not in output.lower(), "the job logged an error"
    NX, NY, CLIENTS, LAYER = 24, 32, 3, 16  # examples/heat_insitu.c, the script's plane
    for step in (0, 10, 20):
        # Mostly cold (black) with two hot spots.
        check_picture(str(out / f"slice_{step}.png"), (640, 360), coloured=0.05)
        with h5py.File(out / f"heat_It{step}_Pr0.h5", "r") as h5:
            stored = np.concatenate([h5["temperature"][f"P{c}"][LAYER] for c in range(CLIENTS)],
                                    axis=1)  # [y, x] of the whole domain
        assert stored.shape == (NY, NX * CLIENTS), stored.shape
        reader = vtkXMLPPolyDataReader()
        reader.SetFileName(str(out / f"slice_{step}.pvtp"))
        centers = vtkCellCenters()
        centers.SetInputConnection(reader.GetOutputPort())
        centers.Update()
        plane = reader.GetOutput()
        where = numpy_support.vtk_to_numpy(centers.GetOutput().GetPoints().GetData())
        got = numpy_support.vtk_to_numpy(plane.GetCellData().GetArray("temperature"))
        ghost = numpy_support.vtk_to_numpy(plane.GetCellData().GetArray("vtkGhostType"))
        real = ghost == 0
        x = np.floor(where[real, 0]).astype(int)
        y = np.floor(where[real, 1]).astype(int)
        assert np.allclose(where[real, 2], LAYER + 0.5), "the slice is not in layer 16"
        # Every cell of the layer (the slice is triangulated: two triangles per cell), from
        # the pieces of 3 clients, their ghosts left out.
        assert sorted(set(zip(y, x))) == [(j, i) for j in range(NY) for i in range(NX * CLIENTS)]
        assert len(x) == 2 * NY * NX * CLIENTS, len(x)
        expect_array(f"slice {step} against the stored temperature", got[real], stored[y, x])
    assert stored.max() > 1.0, "the stored temperature is all cold: the check proves nothing"
    # The independent oracle: ParaView, after the run, renders the stored HDF5 (through the
    # XDMF file) with the script's camera and colours; the pictures must agree in their
    # statistics (the stored cells are drawn as points there, so not pixel for pixel).
    for step in (10, 20):
        oracle = str(tmp_path / f"oracle_{step}.png")
        rendered = subprocess.run(
            [os.environ["PARAVIEW_PYTHON"], os.path.join(HERE, "render_stored.py"),
             str(out / "heat.xmf"), str(step), oracle],
            env=dict(os.environ, DISPLAY=display), capture_output=True, text=True, timeout=300)
        assert rendered.returncode == 0, rendered.stdout + rendered.stderr
        compare_hot_spots(str(out / f"slice_{step}.png"), oracle)


# meshes_writer.c: a curvilinear sector split along z and an unstructured 2-D mesh per client.
NI, NJ, NK = 6, 5, 3
FLUID_CELLS = [(9, [0, 1, 4, 3]), (9, [1, 2, 5, 4]), (5, [3, 4, 0]), (5, [4, 5, 1])]


def meshes_configuration(tmp_path, clients, cores):
    out = tmp_path / "out"
    out.mkdir()
    constant = 'time-varying="false" visualizable="false"'
    xml = tmp_path / "meshes.xml"
    xml.write_text(f"""<?xml version="1.0"?>
<simulation name="meshes" xmlns="http://damaris.gforge.inria.fr/damaris/model">
  <architecture>
    <domains count="1"/>
    <dedicated cores="{cores}" nodes="0"/>
    <buffer name="buffer" size="16777216" policy="wait" timeout="120"/>
  </architecture>
  <data>
    <layout name="cells" type="double" dimensions="{NI},{NJ},{NK}" global="{NI},{NJ},{NK * clients}"/>
    <layout name="cmesh" type="double" dimensions="{NI + 1},{NJ + 1},{NK + 1}"/>
    <group name="sector">
      <variable name="x" layout="cmesh" {constant}/>
      <variable name="y" layout="cmesh" {constant}/>
      <variable name="z" layout="cmesh" {constant}/>
    </group>
    <layout name="xy" type="double" dimensions="12"/>
    <layout name="gids" type="long" dimensions="6"/>
    <layout name="two" type="int" dimensions="2"/>
    <layout name="conn" type="long" dimensions="14"/>
    <layout name="four" type="double" dimensions="4"/>
    <layout name="six" type="float" dimensions="6"/>
    <group name="fluid">
      <variable name="xy" layout="xy" {constant}/>
      <variable name="gid" layout="gids" {constant}/>
      <variable name="types" layout="two" {constant}/>
      <variable name="sizes" layout="two" {constant}/>
      <variable name="conn" layout="conn" {constant}/>
    </group>
    <mesh name="sector" type="curvilinear" topology="3">
      <coord name="sector/x"/><coord name="sector/y"/><coord name="sector/z"/>
    </mesh>
    <mesh name="fluid" type="unstructured" topology="2">
      <coord name="fluid/xy"/>
      <vertex_global_id name="fluid/gid" offset="-1"/>
      <section_types name="fluid/types"/>
      <section_sizes name="fluid/sizes"/>
      <section_connectivity name="fluid/conn"/>
    </mesh>
    <variable name="pressure" layout="cells" mesh="sector" centering="zonal"/>
    <variable name="flow" layout="four" mesh="fluid"/>
    <variable name="potential" layout="six" mesh="fluid" centering="nodal"/>
  </data>
  <paraview><script>{HERE}/extract_pipeline.py</script></paraview>
</simulation>
""")
    return str(xml), str(out)


def check_meshes(out, it, clients):
    """The extract of step it: per client, a curvilinear piece of the sector at its place
    with its pressure, and an unstructured piece with its cells, ids and both variables."""
    from vtkmodules.util import numpy_support
    path = os.path.join(out, f"meshes_{it}.vtm")
    values = numpy_support.vtk_to_numpy
    sectors, fluids = {}, {}
    for piece in extract_pieces(path):
        if piece.GetClassName() == "vtkStructuredGrid":
            sectors[piece.GetExtent()[4] // NK] = piece
        else:
            assert piece.GetClassName() == "vtkUnstructuredGrid", piece.GetClassName()
            fluids[int(values(piece.GetPointData().GetGlobalIds())[0]) // 6] = piece
    assert sorted(sectors) == list(range(clients)), (path, sorted(sectors))
    assert sorted(fluids) == list(range(clients)), (path, sorted(fluids))
    for c in range(clients):
        what = f"step {it} client {c}"
        sector = sectors[c]
        assert sector.GetExtent() == (0, NI, 0, NJ, c * NK, c * NK + NK), sector.GetExtent()
        k, j, i = np.meshgrid(np.arange(NK + 1), np.arange(NJ + 1), np.arange(NI + 1),
                              indexing="ij")
        angle = np.radians(10.0 + 70.0 * j / NJ)
        want = np.stack([((i + 10) * np.cos(angle)).ravel(), ((i + 10) * np.sin(angle)).ravel(),
                         (k + c * NK).ravel().astype(float)], axis=1)
        # C's and NumPy's cosines may differ in the last bit: the points within 1e-12.
        got = values(sector.GetPoints().GetData())
        assert got.shape == want.shape and np.allclose(got, want, rtol=1e-12, atol=0), \
            ("sector points " + what, np.abs(got - want).max())
        k, j, i = np.meshgrid(np.arange(NK), np.arange(NJ), np.arange(NI), indexing="ij")
        expect_array("pressure " + what, values(sector.GetCellData().GetArray("pressure")),
                     (it * 1000.0 + i + 10 * j + 100 * (k + c * NK)).ravel())
        fluid = fluids[c]
        points = values(fluid.GetPoints().GetData())
        corners = np.array([[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [2, 1]], dtype=float)
        expect_array("fluid points " + what, points[:, :2], corners + [3.0 * c, 0.0])
        expect_array("fluid ids " + what, values(fluid.GetPointData().GetGlobalIds()),
                     np.arange(6) + 6 * c)
        assert fluid.GetNumberOfCells() == len(FLUID_CELLS), fluid.GetNumberOfCells()
        for index, (kind, vertices) in enumerate(FLUID_CELLS):
            cell = fluid.GetCell(index)
            got = [cell.GetPointId(v) for v in range(cell.GetNumberOfPoints())]
            assert (cell.GetCellType(), got) == (kind, vertices), (what, index, got)
        expect_array("flow " + what, values(fluid.GetCellData().GetArray("flow")),
                     it * 10.0 + np.arange(4) + 100 * c)
        expect_array("potential " + what, values(fluid.GetPointData().GetArray("potential")),
                     (it + np.arange(6) * 0.5 + 100 * c).astype(np.float32))


def run_meshes(tmp_path, display, clients, cores):
    xml, out = meshes_configuration(tmp_path, clients, cores)
    status, output = run_job(clients + cores, exported("DISPLAY") + [
        os.environ["MESHES_WRITER"], xml, "3"], mpi_env(DISPLAY=display), 300, cwd=out)
    assert status == 0, f"meshes_writer exited with {status}"
    assert "error" not in output.lower() and "] warning: " not in output, output
    for it in range(3):
        check_meshes(out, it, clients)


def test_meshes_dedicated_cores(tmp_path, display):
    """A curvilinear and an unstructured mesh through Catalyst, two clients, one writer."""
    run_meshes(tmp_path, display, clients=2, cores=1)


def test_meshes_synchronous(tmp_path, display):
    """The same with each client its own writer: the pieces of two writers in one extract."""
    run_meshes(tmp_path, display, clients=2, cores=0)


def test_plate(tmp_path, display):
    """Damaris's "plate" shape: a 2-D rectilinear mesh of int cells, three blocks per client
    (damaris_write_block, damaris_set_block_position), two clients on two dedicated cores:
    every block is a piece of its own at its place, with its values."""
    from vtkmodules.util import numpy_support
    W, H, DOMAINS, CLIENTS = 8, 3, 3, 2  # plate_writer.c
    out = tmp_path / "out"
    out.mkdir()
    xml = tmp_path / "plate.xml"
    xml.write_text(f"""<?xml version="1.0"?>
<simulation name="plate" xmlns="http://damaris.gforge.inria.fr/damaris/model">
  <architecture>
    <domains count="{DOMAINS}"/>
    <dedicated cores="2" nodes="0"/>
    <buffer name="buffer" size="16777216" policy="wait" timeout="120"/>
  </architecture>
  <data>
    <layout name="cells" type="int" dimensions="{W},{H}" global="{W * CLIENTS},{H * DOMAINS}"/>
    <layout name="xLayout" type="float" dimensions="{W + 1}"/>
    <layout name="yLayout" type="float" dimensions="{H + 1}"/>
    <group name="coord">
      <variable name="x" layout="xLayout" visualizable="false" time-varying="false"/>
      <variable name="y" layout="yLayout" visualizable="false" time-varying="false"/>
    </group>
    <mesh name="mesh" type="rectilinear" topology="2">
      <coord name="coord/x" unit="cm" label="Width"/><coord name="coord/y" unit="cm" label="Height"/>
    </mesh>
    <variable name="space" type="scalar" layout="cells" mesh="mesh" centering="zonal"/>
  </data>
  <paraview><script>{HERE}/extract_pipeline.py</script></paraview>
</simulation>
""")
    status, output = run_job(4, exported("DISPLAY") + [os.environ["PLATE_WRITER"], str(xml), "2"],
                             mpi_env(DISPLAY=display), 300, cwd=str(out))
    assert status == 0, f"plate_writer exited with {status}"
    assert "error" not in output.lower() and "] warning: " not in output, output
    for it in range(2):
        pieces = {}
        for piece in extract_pieces(out / f"meshes_{it}.vtm"):
            assert piece.GetClassName() == "vtkRectilinearGrid", piece.GetClassName()
            e = piece.GetExtent()
            assert e[1] - e[0] == W and e[3] - e[2] == H and e[4:] == (0, 0), e
            block = (e[0] // W, e[2] // H)
            assert block not in pieces, f"two pieces at {block}"
            pieces[block] = piece
        assert sorted(pieces) == [(c, d) for c in range(CLIENTS) for d in range(DOMAINS)], \
            sorted(pieces)
        for (c, d), piece in pieces.items():
            values = numpy_support.vtk_to_numpy
            expect_array(f"step {it} client {c} block {d} x",
                         values(piece.GetXCoordinates()), np.arange(W + 1.0) + c * W)
            expect_array(f"step {it} client {c} block {d} y",
                         values(piece.GetYCoordinates()), np.arange(H + 1.0) + d * H)
            j, i = np.meshgrid(np.arange(H), np.arange(W), indexing="ij")
            expect_array(f"step {it} client {c} block {d} space",
                         values(piece.GetCellData().GetArray("space")),
                         (it * 1000 + i + 10 * (j + d * H) + 100 * c).ravel().astype(np.int32))


def test_without_a_display(tmp_path):
    """Without an X server ParaView would end the process at its first picture: the pipelines
    are not started, the writers say why once, and the simulation runs to its end."""
    xml, out = configure(tmp_path, clients=2, cores=1)
    env = mpi_env()
    env.pop("DISPLAY", None)
    status, output = run_job(3, [os.environ["IMAGE_WRITER"], xml, str(ITERATIONS)], env, 300,
                             cwd=out)
    assert status == 0, f"image_writer exited with {status}"
    for rank in range(3):
        assert f"rank {rank}: done" in output, f"rank {rank} did not finish"
    assert output.count("ParaView renders through X, and DISPLAY is not set") == 1, output
    assert not [f for f in os.listdir(out) if f.endswith((".png", ".vtm"))], os.listdir(out)


def test_interrupted_job_says_it_once(tmp_path, display):
    """A job whose writers run ParaView, ended by SIGTERM (a batch system's time limit, Ctrl-C):
    Sidecore's notice says what the job was doing; ParaView's logger, which installs its own
    handlers for SIGINT and SIGTERM when it starts, prints no stack trace of the writers."""
    xml, out = heat_demo_configuration(tmp_path)
    # Far more iterations than it will run: the job is stopped once ParaView has drawn.
    command = mpiexec(4) + exported("DISPLAY") + [os.environ["HEAT_INSITU"], str(xml), "1000000"]
    job = subprocess.Popen(command, env=mpi_env(DISPLAY=display), cwd=str(out),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    try:
        deadline = time.time() + 240
        while not (out / "slice_10.png").exists():
            assert job.poll() is None, job.communicate()[0]
            assert time.time() < deadline, "ParaView drew nothing in 240 s"
            time.sleep(0.2)
        job.send_signal(signal.SIGTERM)  # to the launcher, which passes it on to every rank
        output, _ = job.communicate(timeout=120)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
    print(output)
    assert job.returncode != 0, "the job was not interrupted"
    assert output.count("the job is ending on SIGTERM") == 1, output
    assert "Stored iterations are complete" in output, output
    assert "Loguru caught a signal" not in output, output
    assert "Stack trace" not in output, output
