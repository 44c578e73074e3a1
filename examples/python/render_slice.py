"""In situ images: the middle plane of every 3D variable of the script, drawn to PNG on the
dedicated cores while the simulation runs (seed 001's in situ visualization).

    <variable name="temperature" layout="box" store="h5" script="images"/>
    <pyscript name="images" file="render_slice.py" language="python" frequency="10"/>

Every writer cuts the plane z = (global extent)/2 out of its blocks; the first writer
assembles the plane from every writer's pieces, by their positions, and draws it with
matplotlib. Images go to $SIDECORE_IMAGES (default images/) as <variable>_<iteration>.png;
SIDECORE_IMAGES_DATA=1 also saves each assembled plane as .npy beside its image."""
import os

import numpy as np


def on_iteration(it):
    directory = os.environ.get("SIDECORE_IMAGES", "images")
    for name in it.variables:
        blocks = [b for b in it[name] if b.data.ndim == 3]
        # The global box, from every writer's blocks (the same answer everywhere).
        extents = [tuple(p + s for p, s in zip(b.position, b.data.shape)) for b in blocks]
        every = [e for listing in it.comm.allgather(extents) for e in listing]
        if not every:
            continue
        shape = tuple(max(e[d] for e in every) for d in range(3))
        z = shape[0] // 2
        pieces = [(b.position[1:], b.data[z - b.position[0]].copy()) for b in blocks
                  if b.position[0] <= z < b.position[0] + b.data.shape[0]]
        gathered = it.comm.gather(pieces, root=0)
        if it.server != 0:
            continue
        plane = np.zeros(shape[1:], dtype=blocks[0].dtype if blocks else np.float64)
        for (y, x), piece in (p for listing in gathered for p in listing):
            plane[y:y + piece.shape[0], x:x + piece.shape[1]] = piece
        os.makedirs(directory, exist_ok=True)
        stem = os.path.join(directory, f"{name.replace('/', '_')}_{it.number:06d}")
        draw(plane, f"{name}, iteration {it.number}, plane z = {z}", stem + ".png")
        if os.environ.get("SIDECORE_IMAGES_DATA") == "1":
            np.save(stem + ".npy", plane)


def draw(plane, title, path):
    # The object-oriented API: no pyplot state, no display needed.
    from matplotlib.figure import Figure

    rows, columns = plane.shape
    width = 7.0
    figure = Figure(figsize=(width, max(2.5, width * rows / columns * 0.85) + 0.9), dpi=100,
                    layout="constrained")
    axes = figure.subplots()
    image = axes.imshow(plane, origin="lower", cmap="inferno", interpolation="nearest")
    figure.colorbar(image, ax=axes)
    axes.set_title(title)
    axes.set_xlabel("x")
    axes.set_ylabel("y")
    figure.savefig(path)
