# A legacy Catalyst script whose pipeline raises at time step 2 (and works at every other):
# the failure is ParaView's to print, Sidecore's to count in the run report.
def RequestDataDescription(datadescription):
    for i in range(datadescription.GetNumberOfInputDescriptions()):
        datadescription.GetInputDescription(i).AllFieldsOn()
        datadescription.GetInputDescription(i).GenerateMeshOn()


def DoCoProcessing(datadescription):
    if datadescription.GetTimeStep() == 2:
        raise ValueError("this pipeline fails at time step 2")
