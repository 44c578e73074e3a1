# A legacy Catalyst script that writes the whole input (every mesh) as a multiblock extract at
# every time step, for test_paraview.py to read back.
from paraview.simple import *
from paraview import coprocessing


def CreateCoProcessor():
    def _CreatePipeline(coprocessor, datadescription):
        class Pipeline:
            grid = coprocessor.CreateProducer(datadescription, 'input')
            writer = servermanager.writers.XMLMultiBlockDataWriter(Input=grid)
            coprocessor.RegisterWriter(writer, filename='meshes_%t.vtm', freq=1)
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
