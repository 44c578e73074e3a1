"""An iteration's blocks as VTK datasets, from the meshes of the configuration
(docs/python_scripts.md, "Meshes as VTK datasets").

    import sidecore_vtk

    def on_iteration(it):
        data = sidecore_vtk.dataset(it)   # a vtkMultiBlockDataSet, one block per mesh

The mesh's coordinates and the variables on it must reach the script (script="..." on each of
them). Time-invariant coordinates (time-varying="false"), which arrive once, are kept from the
iteration they arrive in. Needs VTK's Python modules (`pip install vtk`, or ParaView's).

Meshes: rectilinear and curvilinear (structured, placed by damaris_set_position), unstructured
(Damaris's <coord>, <vertex_global_id>, <section_types>, <section_sizes>,
<section_connectivity>) and point meshes.

Layout dimensions map to VTK's axes as in Damaris: the first dimension the XML lists is x, and
the memory is taken as it is, x varying fastest (the order of a Fortran layout; Damaris's C
examples fill their arrays so). A rectilinear mesh whose coordinate lengths fit the C order
instead (x the last dimension listed) is read that way.
"""
import numpy as np

import sidecore_script

__all__ = ["dataset", "MeshError"]

# vtkDataSetAttributes::DUPLICATECELL / DUPLICATEPOINT: what ParaView's filters skip.
_DUPLICATE = 1


class MeshError(ValueError):
    """A mesh cannot be made from what the script received; the message says why."""


# (variable, source, block id) -> (array in raw memory order, XML-order dims): coordinates
# kept from the iteration they arrived in.
_kept_coordinates = {}
# variable -> the iteration whose blocks _kept_coordinates holds (copied once per iteration,
# not once per piece that reads them).
_kept_iteration = {}


def _description():
    env = sidecore_script.environment
    if env is None:
        raise MeshError("sidecore_vtk works inside a <pyscript> (no Sidecore environment here)")
    return env.visualization, env.fortran_variables


class _Block:
    """A block in the XML's order of dimensions: dims, ghosts (before, after), start of the
    whole block (ghosts included) in the global index space, and its memory as one array."""

    def __init__(self, raw_block, fortran):
        full = raw_block.full
        order = (lambda seq: tuple(reversed(seq))) if fortran else tuple
        self.dims = order(full.shape)
        ghosts = raw_block.ghosts
        if ghosts is None:
            self.before = self.after = (0,) * len(self.dims)
        else:
            self.before, self.after = order(ghosts[0]), order(ghosts[1])
        self.start = tuple(p - g for p, g in zip(order(raw_block.position), self.before))
        self.memory = full.reshape(-1)  # C order of the view: the memory's own order
        self.source, self.id = raw_block.source, raw_block.id


def _vtk():
    try:
        from vtkmodules import vtkCommonDataModel
        from vtkmodules.util import numpy_support
    except ImportError as e:
        raise MeshError(f"VTK's Python modules are not importable ({e}): pip install vtk, or "
                        "run the scripts with ParaView's Python") from None
    return vtkCommonDataModel, numpy_support


def _array(numpy_support, values, name, components=1):
    array = numpy_support.numpy_to_vtk(np.ascontiguousarray(values).reshape(-1, components),
                                       deep=True)
    array.SetName(name)
    return array


def _ghost_mask(dims, before, after):
    """uint8 per element of a block of VTK-axis dims (x first), DUPLICATE in the ghost zones,
    in memory order (x fastest)."""
    mask = np.full(tuple(reversed(dims)), _DUPLICATE, dtype=np.uint8)
    interior = tuple(slice(b, n - a) for n, b, a in zip(reversed(dims), reversed(before),
                                                       reversed(after)))
    mask[interior] = 0
    return mask.reshape(-1)


def _coordinates(it, name, source, block_id):
    blocks = it.blocks.get(name)
    if blocks and _kept_iteration.get(name) != it.number:
        _kept_iteration[name] = it.number
        _, fortran = _description()
        for b in blocks:
            view = _Block(b, b.variable in fortran)
            _kept_coordinates[(name, b.source, b.id)] = (view.memory.copy(), view.dims)
    for key in ((name, source, block_id), (name, source, 0)):
        if key in _kept_coordinates:
            return _kept_coordinates[key]
    sources = sorted({s for (n, s, _) in _kept_coordinates if n == name})
    raise MeshError(f"no block of coordinate '{name}' from client {source} (block {block_id}); "
                    + (f"it came from clients {sources}" if sources else
                       "it never reached this script: add the script to its script= attribute"))


def _axis_order(counts, dims, zonal, mesh, variable):
    """VTK axis a <- XML dimension order[a]: Damaris's (x first), or the C order when only
    that one fits the coordinates' lengths."""
    extra = 1 if zonal else 0
    forward = tuple(range(len(dims)))
    for order in (forward, tuple(reversed(forward))):
        if all(counts[a] == dims[d] + extra for a, d in enumerate(order)):
            return order
    raise MeshError(f"the coordinates of mesh '{mesh}' ({' x '.join(map(str, counts))} points) "
                    f"do not fit block {dims} of '{variable}' ({'zonal' if zonal else 'nodal'}: "
                    f"{'one point more than cells' if zonal else 'one value per point'} on each "
                    "axis)")


def _piece(it, mesh, variables, source, block_id, blocks):
    """One vtkRectilinearGrid or vtkStructuredGrid: the given client's block of every variable
    on the mesh."""
    data_model, numpy_support = _vtk()
    first_variable, first = next(iter(blocks.items()))
    zonal = variables[first_variable]["centering"] == "zonal"
    spatial = first.dims[1:] if variables[first_variable]["kind"] == "vector" else first.dims
    coords = [_coordinates(it, c, source, block_id) for c in mesh["coords"]]
    if not 1 <= len(coords) <= 3:
        raise MeshError(f"mesh '{mesh['name']}' has {len(coords)} coordinates; 1 to 3 are needed")
    if mesh["type"] == "rectilinear":
        counts = [c[0].size for c in coords]
        order = _axis_order(counts, spatial, zonal, mesh["name"], first_variable)
        grid = data_model.vtkRectilinearGrid()
        points = counts + [1] * (3 - len(counts))
        setters = (grid.SetXCoordinates, grid.SetYCoordinates, grid.SetZCoordinates)
        for axis in range(3):
            values = coords[axis][0] if axis < len(coords) else np.zeros(1)
            setters[axis](_array(numpy_support, values.astype(np.float64), "xyz"[axis]))
    else:  # curvilinear: every coordinate is a nodal array of the grid's points
        counts = list(coords[0][1])
        if any(c[1] != coords[0][1] for c in coords):
            raise MeshError(f"the coordinates of curvilinear mesh '{mesh['name']}' differ in "
                            f"shape: {[c[1] for c in coords]}")
        order = _axis_order(counts, spatial, zonal, mesh["name"], first_variable)
        grid = data_model.vtkStructuredGrid()
        xyz = np.zeros((coords[0][0].size, 3))
        for axis, c in enumerate(coords):
            xyz[:, axis] = c[0]
        from vtkmodules.vtkCommonCore import vtkPoints
        vtk_points = vtkPoints()
        vtk_points.SetData(_array(numpy_support, xyz, "points", 3))
        grid.SetPoints(vtk_points)
        points = counts + [1] * (3 - len(counts))
    start = [first.start[d + (1 if variables[first_variable]["kind"] == "vector" else 0)]
             for d in order] + [0] * (3 - len(order))
    extent = []
    for axis in range(3):
        extent += [start[axis], start[axis] + points[axis] - 1]
    grid.SetExtent(*extent)
    _add_arrays(grid, mesh, variables, blocks)
    for name, block in blocks.items():
        info = variables[name]
        vector = info["kind"] == "vector"
        dims = block.dims[1:] if vector else block.dims
        before = block.before[1:] if vector else block.before
        after = block.after[1:] if vector else block.after
        attributes = grid.GetPointData() if info["centering"] == "nodal" else grid.GetCellData()
        if any(before) or any(after):
            vtk_dims = [dims[d] for d in order]
            mask = _ghost_mask(vtk_dims, [before[d] for d in order], [after[d] for d in order])
            ghost_name = data_model.vtkDataSetAttributes.GhostArrayName()
            if attributes.GetArray(ghost_name) is None:
                attributes.AddArray(_array(numpy_support, mask, ghost_name))
    return grid


# Vertices per cell of the VTK cell types an unstructured mesh's sections may hold.
_CELL_VERTICES = {1: 1, 3: 2, 5: 3, 9: 4, 10: 4, 12: 8, 13: 6, 14: 5}
_CELL_NAMES = {1: "VERTEX", 3: "LINE", 5: "TRIANGLE", 9: "QUAD", 10: "TETRA", 12: "HEXAHEDRON",
               13: "WEDGE", 14: "PYRAMID"}


def _id_type():
    """NumPy's type of vtkIdType (64 bits unless VTK was built otherwise)."""
    from vtkmodules.vtkCommonCore import vtkIdTypeArray
    return np.int64 if vtkIdTypeArray().GetDataTypeSize() == 8 else np.int32


def _part(it, mesh, role, source, block_id, required=True):
    """(values, offset) of the mesh piece a <role> child names, from the given client."""
    entry = mesh["parts"].get(role)
    if entry is None:
        if required:
            raise MeshError(f"unstructured mesh '{mesh['name']}' has no <{role}>: it needs "
                            "<section_types>, <section_sizes> and <section_connectivity>")
        return None, 0
    values, _ = _coordinates(it, entry[0], source, block_id)
    return values, int(entry[1])


def _add_arrays(grid, mesh, variables, blocks):
    """Every variable's block as point data (nodal) or cell data (zonal), checked in size."""
    _, numpy_support = _vtk()
    for name, block in blocks.items():
        info = variables[name]
        node = info["centering"] == "nodal"
        vector = info["kind"] == "vector"
        components = block.dims[0] if vector else 1
        expected = grid.GetNumberOfPoints() if node else grid.GetNumberOfCells()
        if block.memory.size != expected * components:
            raise MeshError(f"block {block.dims} of '{name}' ({info['centering']}) does not fit "
                            f"mesh '{mesh['name']}' ({expected} {'points' if node else 'cells'}"
                            f"{f' x {components} components' if vector else ''})")
        attributes = grid.GetPointData() if node else grid.GetCellData()
        attributes.AddArray(_array(numpy_support, block.memory, name, components))


def _points(mesh, coords):
    """vtkPoints of an unstructured or point mesh: one coordinate variable of interleaved
    x,y[,z] (topology values per point), or one variable per axis."""
    from vtkmodules.vtkCommonCore import vtkPoints
    _, numpy_support = _vtk()
    if len(coords) == 1:
        per_point = max(1, min(3, int(mesh["topology"])))
        values = coords[0][0].astype(np.float64)
        if values.size % per_point:
            raise MeshError(f"coordinate of mesh '{mesh['name']}' holds {values.size} values, "
                            f"not a multiple of its topology ({per_point} per point)")
        columns = values.reshape(-1, per_point)
    else:
        sizes = {c[0].size for c in coords}
        if len(sizes) != 1:
            raise MeshError(f"the coordinates of mesh '{mesh['name']}' differ in length: "
                            f"{[c[0].size for c in coords]}")
        columns = np.stack([c[0].astype(np.float64) for c in coords], axis=1)
    xyz = np.zeros((columns.shape[0], 3))
    xyz[:, :columns.shape[1]] = columns
    points = vtkPoints()
    points.SetData(_array(numpy_support, xyz, "points", 3))
    return points


def _vertices(it, mesh, source, block_id):
    """The vtkPoints of an unstructured or point mesh, from the given client's coordinates."""
    coords = [_coordinates(it, c, source, block_id) for c in mesh["coords"]]
    if not coords:
        raise MeshError(f"{mesh['type']} mesh '{mesh['name']}' has no <coord>")
    return _points(mesh, coords)


def _unstructured_piece(it, mesh, variables, source, block_id, blocks):
    """A vtkUnstructuredGrid as Damaris describes one: the vertices (<coord>), their global ids
    (<vertex_global_id>, offset added), and sections of cells of one VTK type each
    (<section_types>, <section_sizes>, <section_connectivity>: local vertex indices, the
    vertex_global_id offset added, so -1 reads 1-based indices)."""
    data_model, numpy_support = _vtk()
    grid = data_model.vtkUnstructuredGrid()
    grid.SetPoints(_vertices(it, mesh, source, block_id))
    vertices = grid.GetNumberOfPoints()
    global_ids, offset = _part(it, mesh, "vertex_global_id", source, block_id, required=False)
    if global_ids is not None:
        ids = numpy_support.numpy_to_vtkIdTypeArray(
            (global_ids.astype(np.int64) + offset).astype(_id_type()), deep=True)
        ids.SetName("GlobalNodeIds")
        grid.GetPointData().SetGlobalIds(ids)
    types, _ = _part(it, mesh, "section_types", source, block_id)
    sizes, _ = _part(it, mesh, "section_sizes", source, block_id)
    connectivity, _ = _part(it, mesh, "section_connectivity", source, block_id)
    if types.size != sizes.size:
        raise MeshError(f"mesh '{mesh['name']}': {types.size} section types for {sizes.size} "
                        "section sizes")
    cell_types, per_cell = [], []
    for t, n in zip(types.astype(int), sizes.astype(int)):
        if int(t) not in _CELL_VERTICES:
            known = ", ".join(f"{k} ({v})" for k, v in _CELL_NAMES.items())
            raise MeshError(f"mesh '{mesh['name']}': VTK cell type {int(t)} is not supported "
                            f"in a section; supported: {known}")
        cell_types += [int(t)] * int(n)
        per_cell += [_CELL_VERTICES[int(t)]] * int(n)
    cells = (connectivity.astype(np.int64) + offset)
    if cells.size != sum(per_cell):
        raise MeshError(f"mesh '{mesh['name']}': the sections need {sum(per_cell)} vertex "
                        f"indices, <section_connectivity> holds {cells.size}")
    if cells.size and (cells.min() < 0 or cells.max() >= vertices):
        raise MeshError(f"mesh '{mesh['name']}': vertex indices from {int(cells.min())} to "
                        f"{int(cells.max())} after the offset {offset}, for {vertices} vertices "
                        "(offset=\"-1\" on <vertex_global_id> reads 1-based indices)")
    offsets = np.concatenate([[0], np.cumsum(per_cell)]).astype(_id_type())
    cell_array = data_model.vtkCellArray()
    cell_array.SetData(numpy_support.numpy_to_vtkIdTypeArray(offsets, deep=True),
                       numpy_support.numpy_to_vtkIdTypeArray(
                           cells.astype(_id_type()), deep=True))
    kinds = numpy_support.numpy_to_vtk(np.array(cell_types, dtype=np.uint8), deep=True)
    grid.SetCells(kinds, cell_array)
    _add_arrays(grid, mesh, variables, blocks)
    return grid


def _point_piece(it, mesh, variables, source, block_id, blocks):
    """A vtkPolyData of one vertex cell per point: the mesh's coordinates (one array per
    axis, or interleaved per topology); every variable is point data."""
    data_model, numpy_support = _vtk()
    poly = data_model.vtkPolyData()
    poly.SetPoints(_vertices(it, mesh, source, block_id))
    n = poly.GetNumberOfPoints()
    verts = data_model.vtkCellArray()
    verts.SetData(numpy_support.numpy_to_vtkIdTypeArray(
                      np.arange(n + 1, dtype=_id_type()), deep=True),
                  numpy_support.numpy_to_vtkIdTypeArray(
                      np.arange(n, dtype=_id_type()), deep=True))
    poly.SetVerts(verts)
    as_points = {name: dict(info, centering="nodal") for name, info in variables.items()}
    _add_arrays(poly, mesh, as_points, blocks)
    return poly


_MAKERS = {"unstructured": _unstructured_piece, "point": _point_piece}


def dataset(iteration, mesh=None):
    """The iteration's blocks on the configuration's meshes as VTK data: a vtkMultiBlockDataSet
    with one block per mesh (named by it, in the configuration's order), each a
    vtkMultiPieceDataSet with one piece per block this writer holds, ordered by client and
    block id: a vtkRectilinearGrid or vtkStructuredGrid whose extent is the block's place in
    the global grid (vtkGhostType marking the ghost zones), a vtkUnstructuredGrid, or a
    vtkPolyData of vertices for a point mesh, with one array per variable on the mesh (point
    data for nodal variables, cell data for zonal ones; a vector variable's first dimension
    is its components). With mesh="name", that mesh's vtkMultiPieceDataSet.
    Raises MeshError when the mesh cannot be made from what the script received."""
    data_model, _ = _vtk()
    description, fortran = _description()
    meshes = description["meshes"]
    if mesh is not None:
        meshes = [m for m in meshes if m["name"] == mesh]
        if not meshes:
            names = ", ".join(m["name"] for m in description["meshes"]) or "none"
            raise MeshError(f"no mesh '{mesh}' in the configuration (declared: {names})")
    result = data_model.vtkMultiBlockDataSet()
    for index, m in enumerate(meshes):
        if m["type"] not in ("rectilinear", "curvilinear", "unstructured", "point"):
            raise MeshError(f"mesh '{m['name']}' is {m['type']}: sidecore_vtk makes "
                            "rectilinear, curvilinear, unstructured and point meshes")
        make = _MAKERS.get(m["type"], _piece)
        on_mesh = {name: info for name, info in description["variables"].items()
                   if info["mesh"] == m["name"]}
        pieces = {}  # (source, block id) -> {variable: _Block}
        for name in on_mesh:
            for b in iteration.blocks.get(name, ()):
                pieces.setdefault((b.source, b.id), {})[name] = _Block(b, name in fortran)
        multipiece = data_model.vtkMultiPieceDataSet()
        keys = sorted(pieces)
        multipiece.SetNumberOfPieces(len(keys))
        for p, (source, block_id) in enumerate(keys):
            multipiece.SetPiece(p, make(iteration, m, on_mesh, source, block_id,
                                        pieces[(source, block_id)]))
        if mesh is not None:
            return multipiece
        result.SetBlock(index, multipiece)
        result.GetMetaData(index).Set(data_model.vtkCompositeDataSet.NAME(), m["name"])
    return result
