"""The <paraview> pipelines (docs/paraview.md): run by the script runner on every writer like a
Sidecore-style <pyscript>, with the blocks of every variable that has a mesh and of the
variables the meshes are made of.

At the first iteration the writers set ParaView up on their own communicator (not
MPI_COMM_WORLD, which also holds the simulation), after checking together that the X display
ParaView renders through can be opened: ParaView ends the process at its first render without
one. Then, at every iteration the runner passes, each Catalyst script is asked whether it has
work at this time step; only then are the meshes built (sidecore_vtk) and handed over as the
channel "input": a vtkMultiBlockDataSet with one block per mesh. The time is iteration x
realtime-timestep; at end-iteration every pipeline is made to write.

The runner gives the element's settings in sidecore_options.
"""
import ctypes
import ctypes.util
import os
import signal
import sys
import threading

import sidecore_script
import sidecore_vtk

_options = globals().get("sidecore_options", {})
_SCRIPTS = [s for s in _options.get("catalyst-scripts", "").split("\n") if s]
_TIMESTEP = float(_options.get("realtime-timestep") or 0.1)
_END_ITERATION = int(_options.get("end-iteration") or 0)

_state = {"processor": None, "keep": None, "failed": False}


def _display_problem():
    """"" when the X display ParaView renders through can be opened, else why not."""
    display = os.environ.get("DISPLAY", "")
    if not display:
        return "DISPLAY is not set"
    try:
        x11 = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
    except OSError as e:
        return f"libX11 cannot be loaded ({e})"
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    handle = x11.XOpenDisplay(display.encode())
    if not handle:
        return f"the X display {display} cannot be opened"
    x11.XCloseDisplay(handle)
    return ""


def _script_version(path):
    """1 for a legacy coprocessing script, 2 for a Catalyst 2 one. ParaView marks those it
    generates ("# script-version: 2") and takes an unmarked script for a legacy one: a script
    that defines no RequestDataDescription but uses paraview.catalyst is a Catalyst 2 one."""
    with open(path, errors="replace") as f:
        text = f.read()
    if "script-version: 2" in text:
        return 2
    if "def RequestDataDescription" in text or "coprocessing" in text:
        return 1
    return 2 if "catalyst" in text else 1


class _interrupt_actions_kept:
    """Around ParaView's initialization: its logger (loguru) installs handlers for SIGINT and
    SIGTERM that print a stack trace of every writer when the job is interrupted (Ctrl-C, a
    batch system's time limit), burying Sidecore's one notice. The actions in place before
    (Sidecore's, or the default) are put back; ParaView keeps its handlers for crashes."""

    def __enter__(self):
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._saved = {}
        for number in (signal.SIGINT, signal.SIGTERM):
            action = ctypes.create_string_buffer(512)  # larger than any struct sigaction
            if self._libc.sigaction(int(number), None, action) == 0:
                self._saved[int(number)] = action
        return self

    def __exit__(self, *failure):
        for number, action in self._saved.items():
            self._libc.sigaction(number, action, None)
        return False


# ParaView's compiled modules (a second or more to load) are loaded on a thread of their own
# from the moment the writer creates its pipelines, while the simulation computes its first
# iteration, rather than when that iteration arrives. Only loaded: ParaView is set up (which
# communicates) at the first iteration, on the writer's own thread. A module that fails to
# load fails again there, where the failure is reported.
_PRELOADED = ("vtkmodules.vtkParallelCore", "vtkmodules.vtkParallelMPI",
              "paraview.modules.vtkPVVTKExtensionsCore", "paraview.modules.vtkRemotingApplication",
              "paraview.modules.vtkRemotingCore", "paraview.modules.vtkPVCatalyst",
              "paraview.modules.vtkPVPythonCatalyst")


def _preload():
    with _interrupt_actions_kept():
        for name in _PRELOADED:
            try:
                __import__(name)
            except Exception:  # noqa: BLE001 - said at the first iteration, on the writer
                return


_preloading = threading.Thread(target=_preload, name="sidecore-paraview-load")
_preloading.start()


def _start():
    _preloading.join()
    with _interrupt_actions_kept():
        _start_paraview()


def _start_paraview():
    env = sidecore_script.environment
    problems = [p for p in env.comm.allgather(_display_problem()) if p]
    if problems:
        raise RuntimeError(
            f"the ParaView pipelines do not run: ParaView renders through X, and {problems[0]} "
            "on a writer; start an X server for the processes that run them before the job "
            "(e.g. `Xvfb :99 -noreset &` then `export DISPLAY=:99`; docs/paraview.md)")
    missing = [s for s in _SCRIPTS if not os.path.isfile(s)]
    if missing:
        raise RuntimeError(f"the Catalyst script {missing[0]} named in <paraview> cannot be "
                           f"read (relative paths are taken from {os.getcwd()})")
    try:
        from vtkmodules.vtkParallelMPI4Py import vtkMPI4PyCommunicator
    except ImportError as e:
        raise RuntimeError(f"ParaView's Python modules are not importable ({e}): the "
                           "pipelines need the Python ParaView was built for (Debian: "
                           "python3-paraview and /usr/bin/python3; docs/paraview.md)") from None
    from vtkmodules.vtkParallelCore import vtkMultiProcessController
    from vtkmodules.vtkParallelMPI import vtkMPIController
    from paraview.modules.vtkPVVTKExtensionsCore import vtkStringList
    from paraview.modules.vtkRemotingApplication import vtkInitializationHelper
    from paraview.modules.vtkRemotingCore import vtkProcessModule
    import paraview

    # The writers' communicator, before ParaView starts: it would take MPI_COMM_WORLD.
    communicator = vtkMPI4PyCommunicator.ConvertToVTK(env.comm)
    controller = vtkMPIController()
    controller.SetCommunicator(communicator)
    vtkMultiProcessController.SetGlobalController(controller)
    arguments = vtkStringList()
    for argument in ("sidecore", "--symmetric"):
        arguments.AddString(argument)
    if not vtkInitializationHelper.Initialize(arguments, vtkProcessModule.PROCESS_BATCH):
        raise RuntimeError("ParaView could not be initialized")
    paraview.options.batch = True
    paraview.options.symmetric = True
    from paraview.modules.vtkPVCatalyst import vtkCPProcessor
    from paraview.modules.vtkPVPythonCatalyst import (vtkCPPythonScriptPipeline,
                                                       vtkCPPythonScriptV2Pipeline)
    processor = vtkCPProcessor()
    if not processor.Initialize():
        raise RuntimeError("ParaView's Catalyst could not be initialized")
    for script in _SCRIPTS:
        version = _script_version(script)
        pipeline = (vtkCPPythonScriptV2Pipeline if version == 2 else vtkCPPythonScriptPipeline)()
        if not pipeline.Initialize(script):
            raise RuntimeError(f"the Catalyst script {script} could not be loaded (version "
                               f"{version}: {'Catalyst 2' if version == 2 else 'legacy'}); "
                               "ParaView printed why above")
        processor.AddPipeline(pipeline)
    _state["processor"] = processor
    _state["keep"] = (controller, communicator)


def on_iteration(it):
    if _state["failed"]:
        return  # said once, at the first iteration
    if _state["processor"] is None:
        _state["failed"] = True
        _start()
        _state["failed"] = False
    from paraview.modules.vtkPVCatalyst import vtkCPDataDescription
    description = vtkCPDataDescription()
    description.AddInput("input")
    description.SetTimeData(it.number * _TIMESTEP, it.number)
    if _END_ITERATION and it.number == _END_ITERATION:
        description.SetForceOutput(True)
    processor = _state["processor"]
    if not processor.RequestDataDescription(description):
        return  # no pipeline has work at this step: the meshes are not built
    description.GetInputDescriptionByName("input").SetGrid(sidecore_vtk.dataset(it))
    # A legacy pipeline's exception does not reach the return value: ParaView prints it
    # (PyErr_Print), which leaves it in sys.last_value.
    sys.last_type = sys.last_value = sys.last_traceback = None
    done = processor.CoProcess(description)
    raised = sys.last_value
    # Nothing of this iteration's blocks may outlive the call (their memory is reused): not the
    # description's grid, nor the frames of the traceback ParaView printed.
    sys.last_type = sys.last_value = sys.last_traceback = None
    description.GetInputDescriptionByName("input").SetGrid(None)
    if raised is not None or not done:
        what = f" ({type(raised).__name__}: {raised})" if raised is not None else ""
        raise RuntimeError(f"a Catalyst pipeline failed at iteration {it.number}{what}; "
                           "ParaView printed its traceback above")


def on_finish():
    """Ends the pipelines and ParaView before MPI is finalized (its communicator with it)."""
    _preloading.join()  # nothing loads while the process ends
    if _state["processor"] is None:
        return
    from paraview.modules.vtkRemotingApplication import vtkInitializationHelper
    _state["processor"].Finalize()
    _state["processor"] = None
    vtkInitializationHelper.Finalize()
    _state["keep"] = None
