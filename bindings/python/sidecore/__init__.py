"""Sidecore for Python simulations: hand arrays to dedicated I/O cores, nodes or a background
thread, described once in the XML configuration (docs/python.md).

    from mpi4py import MPI
    import numpy as np
    import sidecore

    with sidecore.initialize("sim.xml", MPI.COMM_WORLD) as sc:
        if sc.start():                      # False on a dedicated core, once it has served
            for it in range(steps):
                sc.write("temperature", field)
                sc.end_iteration()

Every call maps to one call of the C API (Damaris.h). A failing call raises sidecore.Error with
the DAMARIS_* code; an array that does not match its variable's layout raises DtypeError (a
TypeError) or ShapeError (a ValueError), both sidecore.Error too.

An exception that leaves the `with` block ends the whole job by default: the traceback is
printed, then MPI_Abort, because finalizing is collective and the other ranks may be waiting for
this one elsewhere. initialize(..., on_exception="finalize") (or SIDECORE_PYTHON_ON_EXCEPTION=
finalize) finalizes instead, for codes that raise on every rank together.
"""
import contextlib
import numbers
import os
import socket
import sys
import traceback

import numpy as np

from . import _errors
from ._errors import CODE_NAMES, DtypeError, Error, ReleasedArrayError, ShapeError  # noqa: F401
from . import _sidecore as _ext
from ._lent import LentArray  # noqa: F401

__all__ = ["initialize", "Session", "Error", "DtypeError", "ShapeError", "ReleasedArrayError",
           "LentArray", "version", "mpi_library_version", "hdf5_version", "read_output",
           "stored_iterations", "Output"]

__version__ = _ext.version()


def version():
    """Sidecore's version ("0.1.0")."""
    return _ext.version()


def mpi_library_version():
    """The first line of MPI_Get_library_version() of the MPI library Sidecore uses."""
    return _ext.mpi_library_version()


def hdf5_version():
    """The version of the HDF5 library Sidecore stores with ("1.10.8")."""
    return _ext.hdf5_version()


# What leaving the `with` block by an exception does (docs/python.md, "When a rank fails"):
# the keyword of initialize(), overridden by this environment variable when it is set.
ON_EXCEPTION_VARIABLE = "SIDECORE_PYTHON_ON_EXCEPTION"
_ON_EXCEPTION_CHOICES = ("abort", "finalize")


def _on_exception_policy(keyword):
    """The policy in force: the environment variable when set (not empty), else the keyword,
    else "abort". Raises Error (ARGUMENT_ERROR) naming the valid values."""
    from_environment = os.environ.get(ON_EXCEPTION_VARIABLE, "")
    value, origin = ((from_environment, f"{ON_EXCEPTION_VARIABLE}={from_environment!r}")
                     if from_environment else
                     (keyword, f"initialize(on_exception={keyword!r})"))
    if value is None:
        return "abort"
    if value not in _ON_EXCEPTION_CHOICES:
        raise Error(_errors.ARGUMENT_ERROR,
                    f"{origin}: valid values are 'abort' (the default: print the traceback and "
                    f"end the job) and 'finalize' (stop and finalize collectively)")
    return value


def initialize(config, comm=None, on_exception=None):
    """Reads the XML configuration (on the first rank of comm only), splits comm into clients
    and servers and maps the shared memory: damaris_initialize(). Collective over comm, an
    mpi4py communicator (MPI.COMM_WORLD by default; MPI is initialized by importing mpi4py).
    Returns the Session, which is also a context manager that stops and finalizes.
    on_exception says what an exception leaving its `with` block does: "abort" (the default)
    prints the traceback and ends the job with MPI_Abort, "finalize" stops and finalizes, which
    is collective; SIDECORE_PYTHON_ON_EXCEPTION overrides it. Raises Error (CONFIG_ERROR for a
    bad file, the same on every rank; ALREADY_INITIALIZED; ARGUMENT_ERROR for an on_exception
    that is neither, before anything collective)."""
    policy = _on_exception_policy(on_exception)
    from mpi4py import MPI  # imported here so that `python -m sidecore` never starts MPI

    if comm is None:
        comm = MPI.COMM_WORLD
    try:
        _ext.initialize(os.fspath(config), comm.py2f())
    except Error as error:
        # A configuration error is agreed on: every rank raises the same one. Rank 0's
        # traceback is enough; the others, left uncaught, say one line (_excepthook).
        if error.code == _errors.CONFIG_ERROR and comm.Get_rank() != 0:
            error.reported_by_rank_0 = comm.Get_rank()
        raise
    return Session(on_exception=policy)


def _excepthook(kind, value, tb, previous=sys.excepthook):
    """An uncaught Error that rank 0 reports too is printed in one line on the other ranks, so
    that a job of many ranks prints its configuration error once, not once per rank."""
    if isinstance(value, Error) and value.reported_by_rank_0:
        print(f"sidecore: rank {value.reported_by_rank_0}: {value.name}, the same as rank 0's, "
              "which rank 0 prints with its traceback", file=sys.stderr, flush=True)
        return
    previous(kind, value, tb)


sys.excepthook = _excepthook


def _is_failure(exc):
    """Whether an exception leaving the `with` block is a failure: anything but a normal exit
    (SystemExit with no code or code 0)."""
    if isinstance(exc, SystemExit):
        return not (exc.code is None or exc.code == 0)
    return True


def _abort_code(exc):
    """MPI_Abort's error code: a SystemExit's own integer status, else 1."""
    if isinstance(exc, SystemExit) and isinstance(exc.code, int) and 0 < exc.code < 256:
        return exc.code
    return 1


def _end_job(session, exc_type, exc, tb):
    """Prints the traceback, with a line before and after it naming this rank, to stderr in one
    write, then ends the whole job with MPI_Abort, also when printing fails or is interrupted.
    Calls nothing collective: the other ranks may be waiting for this one in their own
    communication. Returns only if MPI cannot abort."""
    code = _abort_code(exc)
    try:
        from mpi4py import MPI

        where = (f"sidecore: rank {MPI.COMM_WORLD.Get_rank()} of {MPI.COMM_WORLD.Get_size()} "
                 f"(pid {os.getpid()} on {socket.gethostname()})")
        state = ""
        if session._is_client and not session._stopped:
            try:
                state = (f"; this client was in iteration {_ext.iteration()}: the iterations "
                         f"before it were handed over, and those whose files reached their "
                         f"final names are complete")
            except Error:
                pass
        text = (f"{where}: {exc_type.__name__} left `with sidecore.initialize(...)`; its "
                f"traceback:\n"
                + "".join(traceback.format_exception(exc_type, exc, tb))
                + f"{where}: ending the job with MPI_Abort(MPI_COMM_WORLD, {code}) instead of "
                  f"finalizing, which would wait for the other ranks{state}. "
                  f"initialize(on_exception=\"finalize\") or {ON_EXCEPTION_VARIABLE}=finalize "
                  f"finalizes instead, when every rank raises together.\n")
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is sys.stderr:
                    stream.write(text)
                stream.flush()
            except Exception:  # a closed or broken stream must not keep the job alive
                pass
    finally:
        _ext.abort_job(code)


_INTEGER_RANGES = {name: np.iinfo(name) for name in ("int8", "int16", "int32", "int64")}


class Session:
    """This process's part of a Sidecore run, from initialize() to finalize(). There is one per
    process at a time (the C API has one runtime per process); calls must come from the thread
    that called initialize(), as in C."""

    def __init__(self, on_exception=None):
        self._on_exception = _on_exception_policy(on_exception)
        self._started = False
        self._stopped = False
        self._is_client = None
        self._has_servers = None
        self._served = False  # a dedicated core or node that returned from start()

    # Life cycle.

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        """Stops a client that started and did not stop, then finalizes. An exception (other
        than SystemExit(0)) ends the whole job instead, once its traceback is printed, unless
        on_exception is "finalize": then it finishes too, and an error while finishing is
        raised, unless an exception is already on its way: that one propagates, with the
        finishing error added as a note."""
        # A dedicated core or node that served returns from start() only once every client
        # has stopped: everyone is on the way to finalize, which is then safe.
        if (exc_type is not None and self._on_exception == "abort" and _is_failure(exc)
                and not self._served and _ext.initialized()):
            _end_job(self, exc_type, exc, tb)  # returns only when MPI cannot abort
            return False
        try:
            self.close()
        except Error as finishing:
            if exc is None:
                raise
            if hasattr(exc, "add_note"):
                exc.add_note(f"while finalizing Sidecore after it: {finishing}")
        return False

    def close(self):
        """stop() if this client started and has not stopped, then finalize(); nothing when
        finalized already."""
        if not _ext.initialized():
            return
        try:
            if self._started and self._is_client and not self._stopped:
                self.stop()
        finally:
            self.finalize()

    def start(self):
        """damaris_start(): True on a client (at once). On a dedicated core or node, serves until
        every client has stopped (the GIL is released meanwhile), then returns False. Without
        dedicated resources every process is a client (True)."""
        try:
            self._is_client, self._has_servers = _ext.start()
        except Error:
            # A server's start() fails after serving (a store failure): like a return.
            try:
                self._served = not _ext.environment()["is_client"]
            except Error:
                pass
            raise
        self._served = not self._is_client
        self._started = True
        self._stopped = False
        return self._is_client

    def stop(self):
        """Client: tells the servers this client sends nothing more (damaris_stop()). Without
        dedicated resources it stores what is left. Further calls are harmless."""
        _ext.stop()
        self._stopped = True

    def finalize(self):
        """Releases everything initialize() acquired (damaris_finalize()); collective over the
        communicator given to initialize(). A client that did not stop is stopped (with a
        warning in the log). Arrays from alloc() must not be used afterwards: their memory is
        unmapped or freed."""
        _ext.finalize()

    @property
    def is_client(self):
        """True on a simulation process, False on a dedicated core or node (known after
        start(); None before)."""
        return self._is_client

    @property
    def has_servers(self):
        """True with dedicated cores or nodes, False in synchronous and background-thread modes
        (known after start(); None before)."""
        return self._has_servers

    @property
    def client_comm(self):
        """Client: the mpi4py communicator of all clients (damaris_client_comm_get()), to use
        instead of the one given to initialize(). It belongs to Sidecore: do not free it."""
        from mpi4py import MPI

        return MPI.Comm.f2py(_ext.client_comm())

    @property
    def iteration(self):
        """Client: the current iteration (0 before the first end_iteration())."""
        return _ext.iteration()

    # Parameters and layouts.

    def parameter_get(self, name):
        """The current value of a parameter on this process: an int for an integer parameter, a
        float for a float or double one. Raises Error (UNDEFINED_PARAMETER)."""
        return _ext.parameter_get(name)

    def parameter_set(self, name, value):
        """Sets a parameter on this process (damaris_parameter_set()); the layouts that read it
        are evaluated again for the next writes. value must be an integer within the range of an
        integer parameter's type (an int, or a float with no fractional part), a real number for
        a float or double one. Raises DtypeError or ShapeError for a value of the wrong kind,
        Error otherwise (UNDEFINED_PARAMETER, CONFIG_ERROR when a layout that reads it cannot be
        evaluated with the new value: nothing changes then)."""
        kind = _ext.parameter_type(name)
        if kind in _INTEGER_RANGES:
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise DtypeError(_errors.ARGUMENT_ERROR,
                                 f"parameter_set('{name}'): {value!r} given, the parameter is "
                                 f"an integer ({kind})")
            if not isinstance(value, numbers.Integral):
                if not float(value).is_integer():
                    raise DtypeError(_errors.ARGUMENT_ERROR,
                                     f"parameter_set('{name}'): {value!r} given, the parameter "
                                     f"is an integer ({kind})")
            value = int(value)
            limits = _INTEGER_RANGES[kind]
            if not limits.min <= value <= limits.max:
                raise ShapeError(_errors.ARGUMENT_ERROR,
                                 f"parameter_set('{name}'): {value} is outside the range of its "
                                 f"type {kind} ({limits.min} .. {limits.max})")
        else:
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise DtypeError(_errors.ARGUMENT_ERROR,
                                 f"parameter_set('{name}'): {value!r} given, the parameter is "
                                 f"a real number ({kind})")
            value = float(value)
        _ext.parameter_set(name, value)

    def parameter_type(self, name):
        """A parameter's declared type as a NumPy type name ("int32", "float64"...)."""
        return _ext.parameter_type(name)

    def layout(self, name):
        """(dtype, shape) a variable's arrays must have now: its layout's element type and its
        extents with the current parameter values, in C order (slowest-varying first; for a
        layout written for Fortran, the XML's dimensions reversed), ghost zones included."""
        dtype, shape = _ext.layout(name)
        return np.dtype(dtype), tuple(shape)

    def set_position(self, name, position, block=0):
        """Sets the global position of the block's first interior element, one integer per
        dimension of its layout, in the layout's order (damaris_set_block_position()); used by
        the writes that follow."""
        _ext.set_position(name, block, [int(p) for p in position])

    def set_block_extents(self, name, shape, block=0):
        """Gives block `block` of variable `name` its own extents: the shape (C order, ghost
        zones included) its arrays have in write() and alloc() from now on, instead of the
        layout's (sidecore_set_block_extents(); docs/blocks.md). Any number of blocks may be
        written per iteration, each with its own shape and position. shape=None goes back to the
        layout's extents. Raises ShapeError for a wrong number of extents, Error
        (INVALID_DIMENSIONS) for an extent below 1."""
        _ext.set_block_extents(name, block, [] if shape is None else [int(e) for e in shape])

    # Data.

    def write(self, name, array, block=0):
        """Copies an array into Sidecore as block `block` of variable `name` for the current
        iteration (damaris_write_block()); the array may be reused at once. Its dtype and shape
        must be those of layout(name) exactly (no conversion: DtypeError, ShapeError). A
        C-contiguous array is copied once, directly; any other (a slice, a transposed or
        Fortran-ordered array) is first copied into a C-ordered one by NumPy, so element [i, j]
        is stored as element [i, j]. Anything else array-like is converted with numpy.asarray
        (a list of Python ints becomes int64, of floats float64). Raises Error for the C API's
        failures (UNDEFINED_VARIABLE, INVALID_BLOCK, ALLOCATION_ERROR...). The GIL is released
        during the copy, which may wait for room in the buffer."""
        a = array if isinstance(array, np.ndarray) else np.asarray(array)
        if a.dtype.kind not in "biufc":  # objects, strings...: no layout holds them
            raise DtypeError(_errors.ARGUMENT_ERROR,
                             f"write('{name}'): the array's dtype is {a.dtype}, the variable's "
                             f"layout holds {self.layout(name)[0]}")
        if not a.dtype.isnative:
            raise DtypeError(_errors.ARGUMENT_ERROR,
                             f"write('{name}'): the array's dtype {a.dtype.str} is not in this "
                             f"machine's byte order (convert with array.astype(array.dtype."
                             f"newbyteorder('=')))")
        if not a.flags.c_contiguous:
            a = np.ascontiguousarray(a)
        _ext.write(name, block, a)

    # The zero-copy calls are the extension's functions themselves, documented there: no
    # Python frame between the simulation and the C API (bench/python/README.md).
    alloc = staticmethod(_ext.alloc)
    commit = staticmethod(_ext.commit)
    release = staticmethod(_ext.release)
    clear = release  # the C API's name

    def signal(self, event):
        """Triggers the event named in the XML (damaris_signal()). Raises Error
        (UNDEFINED_ACTION)."""
        _ext.signal(event)

    end_iteration = staticmethod(_ext.end_iteration)

    def sync(self):
        """Returns once every iteration this client has ended is stored (damaris_sync()). The
        GIL is released while it waits."""
        _ext.sync()

    def stats(self):
        """The live counters of this client and of its writer (sidecore_stats(), see
        docs/observability.md), as a dict named as the C struct's fields: client_iterations,
        client_bytes_written, ... and the writer's bytes_received, bytes_written,
        bytes_pending, latency_mean (seconds), io_debt_seconds, ... The writer's are None on
        dedicated nodes (out of reach without a message); client_write_seconds is None unless
        SIDECORE_WRITE_TIMES=1. Copies published values: never waits for the writer."""
        return _ext.stats()

    def compute_begin(self):
        """This client enters a compute phase (sidecore_compute_begin()): under
        <schedule policy="phase"> its writer moves data out only while its clients compute.
        A few atomic stores; harmless under any other policy."""
        _ext.compute_begin()

    def compute_end(self):
        """This client leaves its compute phase (sidecore_compute_end())."""
        _ext.compute_end()

    @contextlib.contextmanager
    def computing(self):
        """`with client.computing(): ...` marks the block as a compute phase (compute_begin,
        then compute_end even when the block raises)."""
        self.compute_begin()
        try:
            yield self
        finally:
            self.compute_end()


# Reading stored output back (sidecore/read.h, docs/blocks.md).

_READ_TYPES = {np.dtype(np.int8): 6, np.dtype(np.int16): 1, np.dtype(np.int32): 2,
               np.dtype(np.int64): 3, np.dtype(np.float32): 4, np.dtype(np.float64): 5}


def stored_iterations(prefix):
    """The iterations stored under prefix (<FilesPath><simulation>, e.g. "out/sim"), ascending."""
    return list(_ext.stored_iterations(os.fspath(prefix)))


def read_output(prefix, iteration):
    """Opens the output of one iteration, whichever file mode and however many clients and
    writers wrote it. Returns an Output (also a context manager). Needs neither MPI nor
    initialize(). Raises Error (ARGUMENT_ERROR when the iteration was not stored: the message
    lists those that were)."""
    return Output(_ext.OutputReader(os.fspath(prefix), int(iteration)))


class Output:
    """One iteration of a run's output: its variables, their blocks, and reads by block or by
    region of the global array (elements no block covers read as 0, unless a writer's file of
    the iteration is missing or torn: the read then raises, naming the file)."""

    def __init__(self, reader):
        self._reader = reader
        self._variables = {name: (np.dtype(dtype), tuple(shape), count)
                           for name, dtype, shape, count in reader.variables()}
        self._shapes = {}  # variable -> {(source, block): shape}, listed once

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return False

    def close(self):
        """Closes the files; the Output cannot be read any more."""
        self._reader.close()

    @property
    def complete(self):
        """False when a writer's file is missing or says that a client's data is missing."""
        return self._reader.complete()

    @property
    def variables(self):
        """{name: (dtype as stored, global shape or () when the layout has none, blocks)}."""
        return dict(self._variables)

    def blocks(self, variable):
        """The blocks of a variable, ordered by (source, block): a list of dicts with keys
        writer, source, block, shape and position (C order)."""
        return [{"writer": w, "source": s, "block": b, "shape": tuple(shape),
                 "position": tuple(position)}
                for w, s, b, shape, position in self._reader.blocks(variable)]

    def _dtype(self, variable, dtype, call):
        if variable not in self._variables:
            # Raises Error(UNDEFINED_VARIABLE) naming the stored variables.
            self._reader.require(variable, call)
        dtype = self._variables[variable][0] if dtype is None else np.dtype(dtype)
        if dtype not in _READ_TYPES:
            raise DtypeError(_errors.ARGUMENT_ERROR,
                             f"cannot read as {dtype}; valid: int8, int16, int32, int64, "
                             f"float32, float64")
        return dtype

    def read_block(self, variable, source, block=0, dtype=None):
        """Block `block` of client `source` as a new array of its shape, converted to dtype
        (the stored type by default). Raises Error (BLOCK_NOT_FOUND, UNDEFINED_VARIABLE)."""
        dtype = self._dtype(variable, dtype, "Output.read_block")
        shapes = self._shapes.get(variable)
        if shapes is None:
            shapes = {(s, b): tuple(shape) for _, s, b, shape, _ in self._reader.blocks(variable)}
            self._shapes[variable] = shapes
        # An unknown block reads into an empty array: the C API raises BLOCK_NOT_FOUND.
        out = np.empty(shapes.get((source, block), (0,)), dtype=dtype)
        self._reader.read_block(variable, source, block, _READ_TYPES[dtype], out)
        return out

    def read_region(self, variable, start, shape, dtype=None):
        """The region [start, start + shape) of a variable's global array (C order) as a new
        array, assembled from the blocks that cover it; elements no block covers are 0."""
        dtype = self._dtype(variable, dtype, "Output.read_region")
        out = np.empty(tuple(int(n) for n in shape), dtype=dtype)
        self._reader.read_region(variable, [int(s) for s in start], [int(n) for n in shape],
                                 _READ_TYPES[dtype], out)
        return out

    def read(self, variable, dtype=None):
        """The whole global array of a variable. Raises Error (UNDEFINED_VARIABLE; ARGUMENT_ERROR
        when its layout has no global extents: read its blocks with read_block)."""
        dtype = self._dtype(variable, dtype, "Output.read")
        shape = self._variables[variable][1]
        if not shape:
            raise Error(_errors.ARGUMENT_ERROR,
                        f"sidecore.Output.read: variable '{variable}' has no global shape (its "
                        f"layout gives no global extents), so there is no whole array to read; "
                        f"read its {self._variables[variable][2]} block(s) with "
                        f"read_block('{variable}', source, block), listed by "
                        f"blocks('{variable}')")
        return self.read_region(variable, [0] * len(shape), shape, dtype)
