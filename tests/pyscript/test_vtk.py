"""sidecore_vtk.dataset() turns what the clients wrote into VTK datasets on the configuration's
meshes: an mpi4py simulation (vtk_writer.py) writes three meshes, a script (scripts/vtk_dump.py)
saves each writer's dataset as a .vtm, read back here with VTK and compared value by value with
what was written:

* grid: a 3-D rectilinear mesh laid out as Damaris's examples do (the first dimension listed is
  x, memory x-fastest), a zonal and a nodal variable, split along z between the clients;
* plate: a 2-D rectilinear mesh in C order (x the last dimension), with one ghost cell around
  each block, marked in vtkGhostType;
* sector: a 2-D curvilinear mesh (nodal coordinate arrays);
* fluid: an unstructured mesh as Damaris describes one (interleaved coordinates, 1-based vertex
  ids and connectivity, a section of quads and one of triangles), zonal and nodal variables;
* particles: a point mesh whose coordinates change at every iteration.

The coordinates are time-invariant: written at the first iteration only, they are kept."""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from mpi_job import expect_array  # noqa: E402
from test_scripts import pyscript, run  # noqa: E402

NX, NY, NZ = 4, 3, 2  # cells of one client's block, before ghosts
ITERATIONS = 2


def x_fastest(values_kji):
    """An array given as [k, j, i] (x fastest in memory), shaped as its layout lists the
    dimensions (x first), as Damaris's C examples fill theirs."""
    return values_kji.reshape(-1).reshape(tuple(reversed(values_kji.shape)))


def grid_values(it, c, nodal):
    n = (NZ + 1, NY + 1, NX + 1) if nodal else (NZ, NY, NX)
    k, j, i = np.meshgrid(*(np.arange(m) for m in n), indexing="ij")
    return it * 1000.0 + i + 10 * j + 100 * (k + c * NZ) + (0.5 if nodal else 0.0)


def plate_values(it, c):
    """[y, x] of the whole block, ghost cells -1."""
    y, x = np.meshgrid(np.arange(NY + 2), np.arange(NX + 2), indexing="ij")
    t = (it * 1000 + x + 100 * (y + c * NY)).astype(np.int32)
    ghost = (y == 0) | (y == NY + 1) | (x == 0) | (x == NX + 1)
    t[ghost] = -1
    return t, ghost


def sector_points(c):
    j, i = np.meshgrid(np.arange(NY + 1), np.arange(NX + 1), indexing="ij")
    angle = 0.1 * (j + c * NY)
    return (i + 1.0) * np.cos(angle), (i + 1.0) * np.sin(angle)  # [j, i]


def sector_values(it, c):
    j, i = np.meshgrid(np.arange(NY), np.arange(NX), indexing="ij")
    return (it + i + 10 * (j + c * NY)).astype(np.float32)


# fluid: two quads and two triangles on 6 vertices per client, 1-based as Fortran codes give
# them (offset="-1"); particles: 5 points moving with the iterations.
FLUID_XY = np.array([[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [2, 1]], dtype=np.float64)
FLUID_CONNECTIVITY = np.array([1, 2, 5, 4, 2, 3, 6, 5, 4, 5, 1, 5, 6, 2], dtype=np.int64)
FLUID_CELLS = [(9, [0, 1, 4, 3]), (9, [1, 2, 5, 4]), (5, [3, 4, 0]), (5, [4, 5, 1])]


def fluid_xy(c):
    return FLUID_XY + [3.0 * c, 0.0]


def flow(it, c):
    return it * 10.0 + np.arange(4) + 100 * c


def potential(it, c):
    return (it + np.arange(6) * 0.5 + 100 * c).astype(np.float32)


def particles(it, c):
    n = np.arange(5, dtype=np.float64)
    return n + c * 10, n * 0 + it, n * 2.0, n + 1000 * c + it  # x, y, z, mass


def written(it, c):
    """{variable: (array as written, position or None)}."""
    w = {"pressure": (x_fastest(grid_values(it, c, False)), (0, 0, c * NZ)),
         "height": (x_fastest(grid_values(it, c, True)), (0, 0, c * NZ)),
         "temperature": (plate_values(it, c)[0], (c * NY, 0)),
         "density": (x_fastest(sector_values(it, c)), (0, c * NY)),
         "flow": (flow(it, c), None), "potential": (potential(it, c), None)}
    px, py, pz, mass = particles(it, c)
    w.update({"particles/x": (px, None), "particles/y": (py, None), "particles/z": (pz, None),
              "mass": (mass, None)})
    if it == 0:
        sx, sy = sector_points(c)
        w.update({"grid/x": (np.arange(NX + 1) * 2.0, None),
                  "grid/y": (np.arange(NY + 1) * 3.0, None),
                  "grid/z": ((np.arange(NZ + 1) + c * NZ).astype(np.float64), None),
                  "plate/px": ((np.arange(NX + 3) - 1) * 0.5, None),
                  "plate/py": ((np.arange(NY + 3) - 1 + c * NY) * 0.5, None),
                  "sector/cx": (x_fastest(sx), None), "sector/cy": (x_fastest(sy), None),
                  "fluid/xy": (fluid_xy(c).reshape(-1), None),
                  "fluid/gid": (np.arange(1, 7, dtype=np.int64) + 6 * c, None),
                  "fluid/types": (np.array([9, 5], dtype=np.int32), None),
                  "fluid/sizes": (np.array([2, 2], dtype=np.int32), None),
                  "fluid/conn": (FLUID_CONNECTIVITY, None)})
    return w


def configure(tmp_path, clients, cores):
    out = tmp_path / "out"
    out.mkdir()
    constant = 'time-varying="false" visualizable="false" script="vtk"'
    xml = tmp_path / "vtk.xml"
    xml.write_text(f"""<?xml version="1.0"?>
<simulation name="meshes" xmlns="http://damaris.gforge.inria.fr/damaris/model">
  <architecture>
    <domains count="1"/>
    <dedicated cores="{cores}" nodes="0"/>
    <buffer name="buffer" size="8388608" policy="wait" timeout="60"/>
    <queue name="queue" size="64"/>
  </architecture>
  <data>
    <layout name="cells" type="double" dimensions="{NX},{NY},{NZ}" global="{NX},{NY},{NZ * clients}"/>
    <layout name="nodes" type="double" dimensions="{NX + 1},{NY + 1},{NZ + 1}"/>
    <layout name="plate_cells" type="int" dimensions="{NY + 2},{NX + 2}" ghosts="1:1,1:1"
            global="{NY * clients},{NX}"/>
    <layout name="sector_cells" type="float" dimensions="{NX},{NY}"/>
    <layout name="sector_nodes" type="double" dimensions="{NX + 1},{NY + 1}"/>
    <layout name="nx1" type="double" dimensions="{NX + 1}"/>
    <layout name="ny1" type="double" dimensions="{NY + 1}"/>
    <layout name="nz1" type="double" dimensions="{NZ + 1}"/>
    <layout name="px" type="double" dimensions="{NX + 3}"/>
    <layout name="py" type="double" dimensions="{NY + 3}"/>
    <group name="grid">
      <variable name="x" layout="nx1" {constant}/>
      <variable name="y" layout="ny1" {constant}/>
      <variable name="z" layout="nz1" {constant}/>
    </group>
    <group name="plate">
      <variable name="px" layout="px" {constant}/>
      <variable name="py" layout="py" {constant}/>
    </group>
    <group name="sector">
      <variable name="cx" layout="sector_nodes" {constant}/>
      <variable name="cy" layout="sector_nodes" {constant}/>
    </group>
    <layout name="xy" type="double" dimensions="12"/>
    <layout name="gids" type="long" dimensions="6"/>
    <layout name="two" type="int" dimensions="2"/>
    <layout name="conn" type="long" dimensions="14"/>
    <layout name="four" type="double" dimensions="4"/>
    <layout name="six" type="float" dimensions="6"/>
    <layout name="five" type="double" dimensions="5"/>
    <group name="fluid">
      <variable name="xy" layout="xy" {constant}/>
      <variable name="gid" layout="gids" {constant}/>
      <variable name="types" layout="two" {constant}/>
      <variable name="sizes" layout="two" {constant}/>
      <variable name="conn" layout="conn" {constant}/>
    </group>
    <group name="particles">
      <variable name="x" layout="five" visualizable="false" script="vtk"/>
      <variable name="y" layout="five" visualizable="false" script="vtk"/>
      <variable name="z" layout="five" visualizable="false" script="vtk"/>
    </group>
    <mesh name="grid" type="rectilinear" topology="3">
      <coord name="grid/x"/><coord name="grid/y"/><coord name="grid/z"/>
    </mesh>
    <mesh name="plate" type="rectilinear" topology="2">
      <coord name="plate/px"/><coord name="plate/py"/>
    </mesh>
    <mesh name="sector" type="curvilinear" topology="2">
      <coord name="sector/cx"/><coord name="sector/cy"/>
    </mesh>
    <mesh name="fluid" type="unstructured" topology="2">
      <coord name="fluid/xy"/>
      <vertex_global_id name="fluid/gid" offset="-1"/>
      <section_types name="fluid/types"/>
      <section_sizes name="fluid/sizes"/>
      <section_connectivity name="fluid/conn"/>
    </mesh>
    <mesh name="particles" type="point" topology="3">
      <coord name="particles/x"/><coord name="particles/y"/><coord name="particles/z"/>
    </mesh>
    <variable name="flow" layout="four" mesh="fluid" script="vtk"/>
    <variable name="potential" layout="six" mesh="fluid" centering="nodal" script="vtk"/>
    <variable name="mass" layout="five" mesh="particles" script="vtk"/>
    <variable name="pressure" layout="cells" mesh="grid" centering="zonal" script="vtk"/>
    <variable name="height" layout="nodes" mesh="grid" centering="nodal" script="vtk"/>
    <variable name="temperature" layout="plate_cells" mesh="plate" script="vtk"/>
    <variable name="density" layout="sector_cells" mesh="sector" script="vtk"/>
  </data>
  <scripts>
    {pyscript("vtk", "vtk_dump.py")}
  </scripts>
</simulation>
""")
    return str(xml), str(out)


def read_pieces(out, it):
    """{mesh: {client: piece}} from every writer's .vtm of iteration it."""
    from vtkmodules.vtkCommonDataModel import vtkCompositeDataSet
    from vtkmodules.vtkIOXML import vtkXMLMultiBlockDataReader
    pieces = {}
    files = sorted(f for f in os.listdir(out) if f.endswith(f"_it{it}.vtm"))
    assert files, f"no .vtm of iteration {it} in {out}"
    for name in files:
        reader = vtkXMLMultiBlockDataReader()
        reader.SetFileName(os.path.join(out, name))
        reader.Update()
        data = reader.GetOutput()
        assert data.GetNumberOfBlocks() == 5, (name, data.GetNumberOfBlocks())
        for b in range(5):
            mesh = data.GetMetaData(b).Get(vtkCompositeDataSet.NAME())
            multipiece = data.GetBlock(b)
            for p in range(multipiece.GetNumberOfPieces()):
                piece = multipiece.GetPiece(p)
                if mesh == "fluid":  # by its vertices' global ids
                    client = int(values(piece.GetPointData().GetGlobalIds())[0]) // 6
                elif mesh == "particles":  # by its x coordinates
                    client = int(values(piece.GetPoints().GetData())[0, 0]) // 10
                else:  # by its place in the global grid
                    extent = piece.GetExtent()
                    axis = {"grid": 4, "plate": 2, "sector": 2}[mesh]
                    step = {"grid": NZ, "plate": NY, "sector": NY}[mesh]
                    client = (extent[axis] + (1 if mesh == "plate" else 0)) // step
                assert client not in pieces.setdefault(mesh, {}), (mesh, client, name)
                pieces[mesh][client] = piece
    return pieces


def values(vtk_array):
    from vtkmodules.util import numpy_support
    assert vtk_array is not None
    return numpy_support.vtk_to_numpy(vtk_array)


def check(out, clients):
    for it in range(ITERATIONS):
        pieces = read_pieces(out, it)
        assert sorted(pieces) == ["fluid", "grid", "particles", "plate", "sector"], \
            sorted(pieces)
        for mesh in pieces:
            assert sorted(pieces[mesh]) == list(range(clients)), (mesh, sorted(pieces[mesh]))
        for c in range(clients):
            what = f"client {c} iteration {it}"
            grid = pieces["grid"][c]
            assert grid.GetClassName() == "vtkRectilinearGrid"
            assert grid.GetExtent() == (0, NX, 0, NY, c * NZ, c * NZ + NZ), grid.GetExtent()
            expect_array("grid x " + what, values(grid.GetXCoordinates()), np.arange(NX + 1) * 2.0)
            expect_array("grid z " + what, values(grid.GetZCoordinates()),
                         (np.arange(NZ + 1) + c * NZ).astype(np.float64))
            expect_array("pressure " + what, values(grid.GetCellData().GetArray("pressure")),
                         grid_values(it, c, False).reshape(-1))
            expect_array("height " + what, values(grid.GetPointData().GetArray("height")),
                         grid_values(it, c, True).reshape(-1))
            assert grid.GetCellData().GetArray("vtkGhostType") is None, "grid has no ghosts"

            plate = pieces["plate"][c]
            assert plate.GetExtent() == (-1, NX + 1, c * NY - 1, c * NY + NY + 1, 0, 0), \
                plate.GetExtent()
            expect_array("plate py " + what, values(plate.GetYCoordinates()),
                         (np.arange(NY + 3) - 1 + c * NY) * 0.5)
            t, ghost = plate_values(it, c)
            expect_array("temperature " + what,
                         values(plate.GetCellData().GetArray("temperature")), t.reshape(-1))
            expect_array("plate vtkGhostType " + what,
                         values(plate.GetCellData().GetArray("vtkGhostType")),
                         ghost.astype(np.uint8).reshape(-1))

            sector = pieces["sector"][c]
            assert sector.GetClassName() == "vtkStructuredGrid"
            assert sector.GetExtent() == (0, NX, c * NY, c * NY + NY, 0, 0), sector.GetExtent()
            sx, sy = sector_points(c)
            points = values(sector.GetPoints().GetData())
            expect_array("sector x " + what, points[:, 0], sx.reshape(-1))
            expect_array("sector y " + what, points[:, 1], sy.reshape(-1))
            expect_array("density " + what, values(sector.GetCellData().GetArray("density")),
                         sector_values(it, c).reshape(-1))

            fluid = pieces["fluid"][c]
            assert fluid.GetClassName() == "vtkUnstructuredGrid"
            points = values(fluid.GetPoints().GetData())
            expect_array("fluid xy " + what, points[:, :2], fluid_xy(c))
            expect_array("fluid z " + what, points[:, 2], np.zeros(6))
            expect_array("fluid ids " + what, values(fluid.GetPointData().GetGlobalIds()),
                         (np.arange(6) + 6 * c).astype(values(
                             fluid.GetPointData().GetGlobalIds()).dtype))
            assert fluid.GetNumberOfCells() == len(FLUID_CELLS), fluid.GetNumberOfCells()
            for index, (kind, vertices) in enumerate(FLUID_CELLS):
                cell = fluid.GetCell(index)
                got = [cell.GetPointId(v) for v in range(cell.GetNumberOfPoints())]
                assert (cell.GetCellType(), got) == (kind, vertices), (what, index, got)
            expect_array("flow " + what, values(fluid.GetCellData().GetArray("flow")),
                         flow(it, c))
            expect_array("potential " + what, values(fluid.GetPointData().GetArray("potential")),
                         potential(it, c))

            cloud = pieces["particles"][c]
            assert cloud.GetClassName() == "vtkPolyData" and cloud.GetNumberOfVerts() == 5
            px, py, pz, mass = particles(it, c)
            expect_array("particles " + what, values(cloud.GetPoints().GetData()),
                         np.stack([px, py, pz], axis=1))
            expect_array("mass " + what, values(cloud.GetPointData().GetArray("mass")), mass)
    for name in os.listdir(out):
        if name.startswith("vtk_error_"):
            with open(os.path.join(out, name)) as f:
                said = json.load(f)
            assert "no mesh 'nowhere'" in said and "grid, plate, sector, fluid" in said, said


def test_dedicated_cores(tmp_path):
    xml, out = configure(tmp_path, clients=3, cores=1)
    run([sys.executable, os.path.join(HERE, "vtk_writer.py"), xml, str(ITERATIONS)], 4, out)
    check(out, 3)


def test_synchronous(tmp_path):
    xml, out = configure(tmp_path, clients=2, cores=0)
    run([sys.executable, os.path.join(HERE, "vtk_writer.py"), xml, str(ITERATIONS)], 2, out)
    check(out, 2)
