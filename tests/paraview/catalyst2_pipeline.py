# A Catalyst 2 script (as ParaView 5.9+ generates them): a picture of the pressure and the
# input as a multiblock extract, every second time step, into the directory given below.
from paraview.simple import *
from paraview import catalyst

grid = TrivialProducer(registrationName='input')
view = CreateView('RenderView')
view.ViewSize = [320, 240]
view.OrientationAxesVisibility = 0
view.CameraPosition = [60, -50, 70]
view.CameraFocalPoint = [8, 6, 12]
view.CameraViewUp = [0, 0, 1]
# A filter's output, not the producer's: its type is known before the first data arrives.
merged = MergeBlocks(registrationName='merged', Input=grid)
shown = Show(merged, view)
ColorBy(shown, ('CELLS', 'pressure'))
GetColorTransferFunction('pressure').RescaleTransferFunction(0.0, 2500.0)

png = CreateExtractor('PNG', view, registrationName='png')
png.Trigger = 'TimeStep'
png.Trigger.Frequency = 2
png.Writer.FileName = 'v2_{timestep:06d}.png'
png.Writer.ImageResolution = [320, 240]
vtm = CreateExtractor('VTM', grid, registrationName='vtm')
vtm.Trigger = 'TimeStep'
vtm.Trigger.Frequency = 2
vtm.Writer.FileName = 'v2_input_{timestep:06d}.vtm'

options = catalyst.Options()
options.GlobalTrigger = 'TimeStep'
options.ExtractsOutputDirectory = 'extracts'
