"""An iteration's blocks as VTK datasets, from the meshes of the configuration
(docs/python_scripts.md, "Meshes as VTK datasets").

    import sidecore_vtk

    def on_iteration(it):
        data = sidecore_vtk.dataset(it)   # a vtkMultiBlockDataSet, one block per mesh

The mesh's coordinates and the variables on it must reach the script (script="..." on each of
them). Time-invariant coordinates (time-varying="false"), which arrive once, are kept from the
iteration they arrive in. Needs VTK's Python modules (`pip install vtk`, or ParaView's).

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
    if blocks:
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
    for name, block in blocks.items():
        info = variables[name]
        vector = info["kind"] == "vector"
        components = block.dims[0] if vector else 1
        dims = block.dims[1:] if vector else block.dims
        before = block.before[1:] if vector else block.before
        after = block.after[1:] if vector else block.after
        node = info["centering"] == "nodal"
        expected = grid.GetNumberOfPoints() if node else grid.GetNumberOfCells()
        if block.memory.size != expected * components:
            raise MeshError(f"block {block.dims} of '{name}' ({info['centering']}) does not fit "
                            f"mesh '{mesh['name']}' ({expected} {'points' if node else 'cells'}"
                            f"{f' x {components} components' if vector else ''})")
        attributes = grid.GetPointData() if node else grid.GetCellData()
        attributes.AddArray(_array(numpy_support, block.memory, name, components))
        if any(before) or any(after):
            vtk_dims = [dims[d] for d in order]
            mask = _ghost_mask(vtk_dims, [before[d] for d in order], [after[d] for d in order])
            ghost_name = data_model.vtkDataSetAttributes.GhostArrayName()
            if attributes.GetArray(ghost_name) is None:
                attributes.AddArray(_array(numpy_support, mask, ghost_name))
    return grid


def dataset(iteration, mesh=None):
    """The iteration's blocks on the configuration's meshes as VTK data: a vtkMultiBlockDataSet
    with one block per mesh (named by it, in the configuration's order), each a
    vtkMultiPieceDataSet with one piece per block this writer holds, ordered by client and
    block id: a vtkRectilinearGrid or vtkStructuredGrid whose extent is the block's place in
    the global grid, with one array per variable on the mesh (point data for nodal variables,
    cell data for zonal ones; a vector variable's first dimension is its components) and
    vtkGhostType marking the ghost zones. With mesh="name", that mesh's vtkMultiPieceDataSet.
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
        if m["type"] not in ("rectilinear", "curvilinear"):
            raise MeshError(f"mesh '{m['name']}' is {m['type']}: sidecore_vtk makes rectilinear "
                            "and curvilinear meshes")
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
            multipiece.SetPiece(p, _piece(iteration, m, on_mesh, source, block_id,
                                          pieces[(source, block_id)]))
        if mesh is not None:
            return multipiece
        result.SetBlock(index, multipiece)
        result.GetMetaData(index).Set(data_model.vtkCompositeDataSet.NAME(), m["name"])
    return result
