"""The oracle of paraview.heat_demo: ParaView, after the run and outside Sidecore, renders the
temperature the HDF5 store wrote (read through its XDMF file) on the middle plane, with the
camera and colours of examples/paraview/heat_slice.py. The XDMF gives the stored cells as the
points of a grid with unit spacing (cell x at point x), so the plane is z = 16 here where the
Catalyst script cuts z = 16.5 through cell layer 16.

    <ParaView's Python> render_stored.py <file.xmf> <step> <picture.png>
"""
import sys

from paraview.simple import (ColorBy, CreateView, GetColorTransferFunction, Render, SaveScreenshot,
                             Show, Slice, XDMFReader)

xmf, step, picture = sys.argv[1], float(sys.argv[2]), sys.argv[3]
stored = XDMFReader(FileNames=[xmf])
stored.UpdatePipeline(step)
plane = Slice(Input=stored)
plane.SliceType = "Plane"
plane.SliceType.Origin = [36.0, 16.0, 16.0]
plane.SliceType.Normal = [0.0, 0.0, 1.0]
view = CreateView("RenderView")
view.ViewSize = [640, 360]
view.ViewTime = step
view.OrientationAxesVisibility = 0
view.UseColorPaletteForBackground = 0
view.Background = [1.0, 1.0, 1.0]
shown = Show(plane, view)
ColorBy(shown, ("POINTS", "temperature"))
shown.LookupTable = GetColorTransferFunction("temperature")
shown.LookupTable.ApplyPreset("Inferno (matplotlib)", True)
shown.LookupTable.RescaleTransferFunction(0.0, 60.0)
Render(view)  # the first render places the camera itself: the script's camera comes after
view.CameraPosition = [36.0, 12.0, 100.0]
view.CameraFocalPoint = [36.0, 16.0, 16.0]
view.CameraViewUp = [0.0, 1.0, 0.0]
Render(view)
SaveScreenshot(picture, view, ImageResolution=[640, 360])
