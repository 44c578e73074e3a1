# A legacy (Catalyst 1) coprocessing script, as Damaris's examples are written: the whole
# input written as a multiblock extract and a picture of the pressure, every second time step
# (and whenever Sidecore forces the output: <paraview end-iteration=...>).
from paraview.simple import *
from paraview import coprocessing


def CreateCoProcessor():
    def _CreatePipeline(coprocessor, datadescription):
        class Pipeline:
            grid = coprocessor.CreateProducer(datadescription, 'input')
            writer = servermanager.writers.XMLMultiBlockDataWriter(Input=grid)
            coprocessor.RegisterWriter(writer, filename='legacy_input_%t.vtm', freq=2)
            view = CreateView('RenderView')
            view.ViewSize = [320, 240]
            view.OrientationAxesVisibility = 0
            view.CameraPosition = [60, -50, 70]
            view.CameraFocalPoint = [8, 6, 12]
            view.CameraViewUp = [0, 0, 1]
            merged = MergeBlocks(Input=grid)
            shown = Show(merged, view)
            ColorBy(shown, ('CELLS', 'pressure'))
            shown.LookupTable = GetColorTransferFunction('pressure')
            shown.LookupTable.RescaleTransferFunction(0.0, 2500.0)
            coprocessor.RegisterView(view, filename='legacy_%t.png', freq=2, fittoscreen=0,
                                     magnification=1, width=320, height=240)
        return Pipeline()

    class CoProcessor(coprocessing.CoProcessor):
        def CreatePipeline(self, datadescription):
            self.Pipeline = _CreatePipeline(self, datadescription)

    coprocessor = CoProcessor()
    coprocessor.SetUpdateFrequencies({'input': [2]})
    return coprocessor


coprocessor = CreateCoProcessor()
coprocessor.EnableLiveVisualization(False, 1)


def RequestDataDescription(datadescription):
    if datadescription.GetForceOutput():
        for i in range(datadescription.GetNumberOfInputDescriptions()):
            datadescription.GetInputDescription(i).AllFieldsOn()
            datadescription.GetInputDescription(i).GenerateMeshOn()
        return
    coprocessor.LoadRequestedData(datadescription)


def DoCoProcessing(datadescription):
    coprocessor.UpdateProducers(datadescription)
    coprocessor.WriteData(datadescription)
    coprocessor.WriteImages(datadescription, rescale_lookuptable=False)
