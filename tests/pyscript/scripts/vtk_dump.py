"""test_vtk.py: writes the iteration's meshes as sidecore_vtk makes them, one .vtm per writer
and iteration, and what dataset() says of a mesh that does not exist."""
import json
import os

import sidecore_vtk
from vtkmodules.vtkIOXML import vtkXMLMultiBlockDataWriter


def on_iteration(it):
    out = os.environ["PYSCRIPT_OUT"]
    writer = vtkXMLMultiBlockDataWriter()
    writer.SetFileName(os.path.join(out, f"vtk_S{it.server}_it{it.number}.vtm"))
    writer.SetInputData(sidecore_vtk.dataset(it))
    writer.SetDataModeToAscii()
    if not writer.Write():
        raise RuntimeError("the .vtm could not be written")
    if it.number == 0:
        try:
            sidecore_vtk.dataset(it, mesh="nowhere")
            said = "no error"
        except sidecore_vtk.MeshError as e:
            said = str(e)
        with open(os.path.join(out, f"vtk_error_S{it.server}.json"), "w") as f:
            json.dump(said, f)
