# A legacy (Catalyst 1) coprocessing script, as Damaris's ParaView examples are written: the
# temperature of the heat diffusion on the middle of z layer 16, as a picture (slice_<step>.png) and
# as a VTK extract (slice_<step>.pvtp), at every step Sidecore hands over
# (<paraview update-frequency="10">). The dedicated cores render it together.
from paraview.simple import *
from paraview import coprocessing


def CreateCoProcessor():
    def _CreatePipeline(coprocessor, datadescription):
        class Pipeline:
            box = coprocessor.CreateProducer(datadescription, 'input')
            merged = MergeBlocks(Input=box)
            plane = Slice(Input=merged)
            plane.SliceType = 'Plane'
            plane.SliceType.Origin = [36.0, 16.0, 16.5]  # through the middle of cell layer 16
            plane.SliceType.Normal = [0.0, 0.0, 1.0]
            writer = servermanager.writers.XMLPPolyDataWriter(Input=plane)
            coprocessor.RegisterWriter(writer, filename='slice_%t.pvtp', freq=1)
            view = CreateView('RenderView')
            view.ViewSize = [640, 360]
            view.OrientationAxesVisibility = 0
            view.UseColorPaletteForBackground = 0
            view.Background = [1.0, 1.0, 1.0]
            view.CameraPosition = [36.0, 12.0, 100.0]
            view.CameraFocalPoint = [36.0, 16.0, 16.0]
            view.CameraViewUp = [0.0, 1.0, 0.0]
            shown = Show(plane, view)
            ColorBy(shown, ('CELLS', 'temperature'))
            shown.LookupTable = GetColorTransferFunction('temperature')
            shown.LookupTable.ApplyPreset('Inferno (matplotlib)', True)
            shown.LookupTable.RescaleTransferFunction(0.0, 60.0)
            bar = GetScalarBar(shown.LookupTable, view)
            bar.Title = 'temperature (K)'
            bar.ComponentTitle = ''
            bar.TitleColor = bar.LabelColor = [0.1, 0.1, 0.1]
            bar.Orientation = 'Horizontal'
            bar.WindowLocation = 'Lower Center'
            bar.RangeLabelFormat = '%.0f'
            shown.SetScalarBarVisibility(view, True)
            coprocessor.RegisterView(view, filename='slice_%t.png', freq=1, fittoscreen=0,
                                     magnification=1, width=640, height=360)
        return Pipeline()

    class CoProcessor(coprocessing.CoProcessor):
        def CreatePipeline(self, datadescription):
            self.Pipeline = _CreatePipeline(self, datadescription)

    coprocessor = CoProcessor()
    coprocessor.SetUpdateFrequencies({'input': [1]})
    return coprocessor


coprocessor = CreateCoProcessor()
coprocessor.EnableLiveVisualization(False, 1)


def RequestDataDescription(datadescription):
    coprocessor.LoadRequestedData(datadescription)


def DoCoProcessing(datadescription):
    coprocessor.UpdateProducers(datadescription)
    coprocessor.WriteData(datadescription)
    coprocessor.WriteImages(datadescription, rescale_lookuptable=False)
