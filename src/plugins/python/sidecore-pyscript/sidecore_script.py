"""The Python half of Sidecore's <pyscript> runner (docs/python_scripts.md).

The runner (libsidecore_pyscript.so) creates one Script per <pyscript> on every writer (a
dedicated core or node, or a simulation process with a background thread or none) and calls
it once per iteration passed, with the blocks of the variables that name the script in their
script= attribute. The blocks arrive as the runner's BlockMemory objects, read-only buffers on
Sidecore's memory whose array() the runner makes with NumPy's C API; the NumPy arrays are
views, valid during the call only.

A script is written in one of two styles, told apart by whether it defines on_iteration:

* Sidecore's: the file runs once when the writer starts; then on_iteration(it) is called for
  every iteration passed (it is an Iteration) and on_finish() after the last iteration, when
  defined.
* Damaris's: the whole file runs at every iteration passed, with __name__ == "__main__" and
  the dictionary DamarisData (damaris_env, dask_env, iteration_data) among its globals, which
  persist from one iteration to the next, as Damaris's PyAction does.
"""
import ast
import builtins
import json
import os
import sys

import numpy as np

__all__ = ["Block", "Iteration", "Script", "environment"]

# sidecore_element_type values of <sidecore/plugin.h>.
_DTYPES = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 3: np.dtype(np.int32),
           4: np.dtype(np.int64), 5: np.dtype(np.float32), 6: np.dtype(np.float64)}
# Damaris's DamarisData[...]["type_string"] of each.
_TYPE_STRINGS = {1: "_char", 2: "_short", 3: "_int", 4: "_longint", 5: "_float", 6: "_double"}


class Environment:
    """Where the scripts of this process run (one per process; damaris4py reads it)."""

    def __init__(self, options, simulation, writer_index, writer_count, comm, finish_comm):
        self.simulation = simulation
        self.mode = options.get("mode", "")
        self.is_dedicated_core = options.get("is_dedicated_core") == "1"
        self.is_dedicated_node = options.get("is_dedicated_node") == "1"
        self.servers_per_node = int(options.get("servers_per_node") or 0)
        self.clients_per_node = int(options.get("clients_per_node") or 0)
        self.cores_per_node = int(options.get("cores_per_node") or 0)
        self.number_of_nodes = int(options.get("number_of_nodes") or 1)
        self.magic = options.get("magic", "")
        # For sidecore_vtk: the meshes and the variables on them, and the Fortran layouts.
        self.visualization = json.loads(options.get("visualization") or
                                        '{"meshes": [], "variables": {}}')
        self.fortran_variables = set(v for v in options.get("fortran-variables", "").split(",")
                                     if v)
        known = options.get("known_clients", "")
        self.known_clients = [int(c) for c in known.split(",") if c]
        self.server = writer_index
        self.servers = writer_count
        self._comm_handle = comm
        self._finish_comm_handle = finish_comm
        self._comm = None
        self.comm_lent = False  # whether a script was given the writers' communicator

    @property
    def comm(self):
        """The mpi4py communicator of every writer running this script (the dedicated cores or
        nodes, or every simulation process without them). Do not free it. With background
        threads and an MPI without MPI_THREAD_MULTIPLE it is MPI.COMM_SELF, except in
        on_finish()."""
        if self._comm is None:
            from mpi4py import MPI
            self._comm = MPI.Comm.f2py(self._comm_handle)
        return self._comm

    def lend_comm(self):
        """comm, for a script: once a script holds it, an exception on one writer may leave the
        others waiting for it in a collective (Script.end_job_if_others_may_wait)."""
        self.comm_lent = True
        return self.comm

    def finish_comm(self):
        """The writers' communicator usable in on_finish() (see comm)."""
        if self._finish_comm_handle < 0:
            return self.comm
        from mpi4py import MPI
        return MPI.Comm.f2py(self._finish_comm_handle)


environment = None  # the Environment, once a script was created


def _full_view(raw):
    """The whole block of a runner tuple as a read-only NumPy view (C order), made by the
    runner with NumPy's C API."""
    return raw[9].array()


class _made_once:
    """A Block attribute made on first use and kept in the instance (a non-data descriptor:
    later reads find the instance's value without calling anything). functools.cached_property
    would take a lock on every first use, which a core with cold caches pays for."""

    def __init__(self, make):
        self._make = make
        self._name = make.__name__
        self.__doc__ = make.__doc__

    def __get__(self, block, owner=None):
        if block is None:
            return self
        value = block.__dict__[self._name] = self._make(block)
        return value


class Block(tuple):
    """One block: what one client wrote of one variable in this iteration.

    data      the interior (ghost zones excluded): what the HDF5 store writes
    full      the whole block as written, ghost zones included
    position  global index of data[0, ...0] (damaris_set_position), one per dimension
    Arrays are read-only NumPy views of Sidecore's memory, in C order (slowest-varying first,
    the order h5py shows; a Fortran layout's dimensions reversed), made when first used. They
    are valid during the call only: keep a copy (block.data.copy()) of what must outlive it."""

    # The runner's tuple itself (variable, type, dims, global_dims, position, ghosts_before,
    # ghosts_after, source, block, memory): making a Block runs no Python code, which keeps the
    # call cheap on a core whose caches the clients' copies have just swept.
    variable = property(lambda self: self[0])
    dtype = property(lambda self: _DTYPES[self[1]])
    global_shape = property(lambda self: self[3])
    position = property(lambda self: self[4])
    source = property(lambda self: self[7])
    id = property(lambda self: self[8])

    @property
    def ghosts(self):
        return None if self[5] is None else (self[5], self[6])

    @_made_once
    def full(self):
        return _full_view(self)

    @_made_once
    def data(self):
        full, before, after = self.full, self[5], self[6]
        if before is None:
            return full
        return full[tuple(slice(lo, d - hi) for lo, d, hi in zip(before, full.shape, after))]

    def __repr__(self):
        return (f"Block({self.variable!r}, source={self.source}, id={self.id}, "
                f"shape={self.data.shape}, position={self.position})")


class Iteration:
    """One iteration of the variables that name the script, as this writer holds them.

    number      the iteration
    incomplete  True when some client dropped data of it or stopped before ending it
    blocks      {variable: [Block, ...]}, every variable of the script (maybe no block),
                blocks by source then id; made when first read, during the call only
    dask        {variable: dask.array} assembled from every writer's blocks and published to
                the cluster, when the script names a scheduler file ({} otherwise); computing
                them in the call uses the cluster
    dask_client the distributed.Client connected to it (None without a scheduler file)
    comm, server, servers   the writers' mpi4py communicator, this writer's rank and count"""

    def __init__(self, number, incomplete, blocks, dask_arrays=None):
        self.number = number
        self.incomplete = bool(incomplete)
        self._blocks = blocks
        self.dask = dask_arrays if dask_arrays is not None else {}
        self.dask_client = None

    @property
    def blocks(self):
        blocks = self._blocks
        if not isinstance(blocks, dict):
            # The runner's LazyBlocks: the Blocks are made when first asked for, during the
            # call, so that a script that reads none of them does not pay for them.
            blocks = self._blocks = blocks()
        return blocks

    def __getitem__(self, variable):
        return self.blocks[variable]

    @property
    def variables(self):
        return list(self.blocks)

    @property
    def comm(self):
        return environment.lend_comm()

    @property
    def server(self):
        return environment.server

    @property
    def servers(self):
        return environment.servers

    def __repr__(self):
        counts = ", ".join(f"{v}: {len(b)}" for v, b in self.blocks.items())
        return f"Iteration({self.number}, {{{counts}}})"


def _defines(tree, name):
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
               for node in tree.body)


# How a script reaches the writers' communicator: it.comm, environment.comm, damaris4py.server.
_COMM_NAMES = {"comm", "lend_comm", "getservercomm", "getdamariscomm", "getclientcomm"}


def _mentions_comm(tree):
    """Whether the script's source names the writers' communicator (then an exception on one
    writer may leave the others in one of its collectives)."""
    return any((isinstance(node, ast.Attribute) and node.attr in _COMM_NAMES) or
               (isinstance(node, ast.Name) and node.id in _COMM_NAMES)
               for node in ast.walk(tree))


class ConfigurationError(ValueError):
    """What the configuration or the script's file can fix: reported without a traceback."""


class Script:
    """One <pyscript> on one writer. Raises ConfigurationError or SyntaxError for what the
    configuration can fix: the runner reports those at damaris_initialize, naming the XML."""

    def __init__(self, simulation, name, options, variables, frequency, writer_index,
                 writer_count, comm, finish_comm):
        global environment
        if environment is None:
            environment = Environment(options, simulation, writer_index, writer_count, comm,
                                      finish_comm)
        self.name = name
        self.variables = list(variables)
        self.fortran = environment.fortran_variables
        # Damaris hands a time-invariant variable at iteration 0 only, and every variable's
        # type string, from its layout, even when it has no block.
        self.constant = set(v for v in options.get("constant-variables", "").split(",") if v)
        self.type_strings = dict(entry.split("=", 1) for entry in
                                 options.get("type-strings", "").split(",") if "=" in entry)
        path = options.get("file", "")
        if not path:
            raise ConfigurationError("it names no file (file=\"...\")")
        self.path = os.path.abspath(path)
        try:
            with open(self.path, "rb") as f:
                source = f.read()
        except OSError as e:
            raise ConfigurationError(f"cannot read the script file '{path}' (relative paths are "
                                     f"taken from {os.getcwd()}): {e.strerror}") from None
        tree = ast.parse(source, self.path)  # SyntaxError names the file and line
        self.code = compile(tree, self.path, "exec")
        self.sidecore_style = _defines(tree, "on_iteration")
        self.mentions_comm = _mentions_comm(tree)
        # Imports next to the script work as when it runs alone.
        directory = os.path.dirname(self.path)
        if directory not in sys.path:
            sys.path.insert(1, directory)
        self.damaris_data = {
            "damaris_env": {
                "is_dedicated_node": environment.is_dedicated_node,
                "is_dedicated_core": environment.is_dedicated_core,
                "servers_per_node": environment.servers_per_node,
                "clients_per_node": environment.clients_per_node,
                "ranks_per_node": environment.cores_per_node,
                "cores_per_node": environment.cores_per_node,
                "number_of_nodes": environment.number_of_nodes,
                "simulation_name": simulation,
                "simulation_magic_number": environment.magic,
            },
        }
        self.worker = None
        self.damaris_data["dask_env"] = _dask_env(options, simulation, environment,
                                                  self._start_dask(name, options, simulation))
        # sidecore_options: the action's settings, for the runner's own scripts
        # (sidecore_paraview.py reads the <paraview> element's there).
        self.globals = {"__builtins__": builtins, "__file__": self.path,
                        "DamarisData": self.damaris_data, "sidecore_options": dict(options)}
        self._kept_warned = False
        # Sidecore-style scripts with a scheduler file publish every iteration to Dask (a
        # Damaris-style script calls damaris_dask.return_dask_array itself, as in Damaris).
        self.publisher = None
        scheduler_file = self.damaris_data["dask_env"]["dask_scheduler_file"]
        if self.sidecore_style and options.get("scheduler-file"):
            if scheduler_file:
                import sidecore_dask
                self.publisher = sidecore_dask.Publisher(
                    scheduler_file, float(options.get("timeout") or 2), simulation,
                    int(options.get("dask-keep") or 4), environment.comm, environment.server)
        # What the runner needs to call a Sidecore-style script without going through run():
        # the classes it makes Blocks and the Iteration of, the function, the variables. None
        # when the call goes through Python (Damaris-style scripts, Dask).
        self.direct = None
        if self.sidecore_style:
            self.globals["__name__"] = os.path.splitext(os.path.basename(self.path))[0]
            try:
                exec(self.code, self.globals)  # defines the functions, runs the set-up once
            except BaseException:
                self._release_worker()  # no Script: the runner will never close it
                raise
            if self.publisher is None:
                self.direct = (Block, Iteration, self.globals["on_iteration"],
                               tuple(self.variables))
        else:
            self.globals["__name__"] = "__main__"

    def _start_dask(self, name, options, simulation):
        """With scheduler-file="...": writer 0 checks that the scheduler answers (within
        timeout), and tells the others; then, as Damaris does, every dedicated core or node
        starts its Dask worker. Returns whether the scheduler answered."""
        scheduler_file = options.get("scheduler-file", "")
        if not scheduler_file:
            return False
        import sidecore_workers
        timeout = float(options.get("timeout") or 2)
        paths = sidecore_workers.module_paths([self.path])
        comm = environment.comm
        problem = None
        if comm.Get_rank() == 0:
            problem = sidecore_workers.check_scheduler(scheduler_file, timeout, paths)
            if problem:
                sidecore_workers.say(
                    f"warning: script '{name}': the Dask scheduler of '{scheduler_file}' cannot "
                    f"be used: {problem}; no Dask worker is started, iterations are not "
                    "published and DamarisData['dask_env']['dask_scheduler_file'] is ''")
        if comm.Get_size() > 1:
            problem = comm.bcast(problem, root=0)
        if problem:
            return False
        if environment.mode in ("dedicated cores", "dedicated nodes"):
            self.worker, _ = sidecore_workers.acquire(
                scheduler_file, _worker_name(simulation, environment),
                _threads_per_worker(options), timeout, options.get("keep-workers") == "yes",
                paths)
        return True

    def _release_worker(self):
        worker, self.worker = self.worker, None
        if worker is not None:
            import sidecore_workers
            sidecore_workers.release(worker)

    # The runner's calls. blocks: tuples made by script_runner.cpp.
    def run(self, iteration, incomplete, blocks):
        if self.sidecore_style:
            self._run_sidecore(iteration, incomplete, blocks)
            return
        # Damaris's view: the whole block (ghosts included), its dimensions and position in
        # the order the layout lists them (fastest first for a Fortran layout).
        # Damaris leaves a time-invariant variable out after iteration 0, blocks or not.
        left_out = self.constant if iteration > 0 else ()
        damaris = {v: _damaris_entry(self.type_strings.get(v, "")) for v in self.variables
                   if v not in left_out}
        for raw in blocks:
            variable, type_code, position, source, block_id = (raw[0], raw[1], raw[4], raw[7],
                                                               raw[8])
            if variable in left_out:
                continue
            full = _full_view(raw)
            entry = damaris.get(variable)
            if entry is None:
                entry = damaris[variable] = _damaris_entry(
                    self.type_strings.get(variable, _TYPE_STRINGS[type_code]))
            fortran = variable in self.fortran
            key = f"P{source}_B{block_id}"
            entry["numpy_data"][key] = full.T if fortran else full
            start = list(reversed(position)) if fortran else list(position)
            entry["sort_list"].append(
                [f"S{environment.server}_I{iteration}_{environment.magic}", key, start])
            entry["block_source"].append(source)
            entry["block_domains"].append(block_id)
        data = {"iteration": iteration}
        for variable, entry in damaris.items():
            entry["sort_data"] = entry["sort_list"]  # the name Damaris's comments use
            data[variable] = entry
        self.damaris_data["iteration_data"] = data
        try:
            exec(self.code, self.globals)
        finally:
            self.damaris_data.pop("iteration_data", None)

    def _run_sidecore(self, iteration, incomplete, blocks):
        # Only with Dask: without it the runner calls on_iteration itself (self.direct).
        views = {v: [] for v in self.variables}
        for raw in map(Block, blocks):
            views[raw[0]].append(raw)
        it = Iteration(iteration, incomplete, views)
        if not self.publisher.started:
            self.publisher.start()
        if not self.publisher.connected:
            self.globals["on_iteration"](it)
            return
        import dask
        it.dask = self.publisher.publish(iteration, views)
        it.dask_client = self.publisher.client
        # array.compute() and dask.compute() inside the call go to the cluster.
        with dask.config.set(scheduler=self.publisher.client):
            self.globals["on_iteration"](it)

    def end_job_if_others_may_wait(self, iteration, error):
        """After this script raised (error: its traceback): when the script uses the writers'
        communicator (its source names it, or a script was handed it, maybe through a module
        of its own) and there are other writers, they may be waiting for this one in a
        collective that it will never enter, and the job could never end; so it is ended here,
        with the traceback and this writer named, by MPI_Abort. Otherwise returns (the run goes
        on, the failure logged by the server)."""
        if not (self.mentions_comm or environment.comm_lent):
            return
        comm = environment.comm
        if comm.Get_size() < 2:
            return
        from mpi4py import MPI

        world = MPI.COMM_WORLD
        where = (f"sidecore: writer {comm.Get_rank()} of {comm.Get_size()} (rank "
                 f"{world.Get_rank()} of MPI_COMM_WORLD, pid {os.getpid()})")
        print(f"{where}: script '{self.name}' ({self.path}) raised at iteration {iteration} after "
              f"using the writers' communicator; its traceback:\n{error}\n{where}: the other "
              f"writers may be waiting for this one in a collective of the script, so the job is "
              f"ended (MPI_Abort(MPI_COMM_WORLD, 1)); stored iterations are complete in their "
              f"files", file=sys.stderr, flush=True)
        sys.stdout.flush()
        world.Abort(1)

    def kept_views(self, iteration, kept):
        """The runner found `kept` blocks of this iteration still viewed after run() returned:
        warns once per script."""
        if self._kept_warned:
            return
        self._kept_warned = True
        print(f"sidecore: warning: script '{self.name}' ({self.path}) kept NumPy views of "
              f"{kept} block(s) of iteration {iteration} after its call returned: that memory "
              "holds later iterations' data from then on; keep copies (array.copy()) instead",
              file=sys.stderr, flush=True)

    def finish(self):
        handler = self.globals.get("on_finish") if self.sidecore_style else None
        try:
            if handler is not None:
                handler()
        finally:
            try:
                if self.publisher is not None:
                    self.publisher.close()
            finally:
                self._release_worker()  # after the script's last use of the cluster
        sys.stdout.flush()
        sys.stderr.flush()

    def close(self):
        """The runner lets the script go (after finish(), or instead of it when the run
        failed): its worker is stopped if finish() did not."""
        if self.publisher is not None:
            self.publisher.close()
        self._release_worker()


def _damaris_entry(type_string):
    # block_source and block_domains: the form earlier Damaris releases gave (one entry per
    # block, in the order of sort_list), still read by some of its examples.
    return {"numpy_data": {}, "sort_list": [], "type_string": type_string, "block_source": [],
            "block_domains": []}


def _worker_name(simulation, env):
    """Damaris's name of a writer's Dask worker."""
    return f"{simulation}_{env.magic}_{env.server}"


def _threads_per_worker(options):
    """nthreads="" is 1, "openmp" as many threads as OpenMP would use (OMP_NUM_THREADS, else
    the cores this process may run on), else the number (checked by the configuration; 0, as
    Damaris passes it on, lets Dask choose: the machine's cores)."""
    threads = options.get("nthreads", "")
    if threads == "openmp":
        try:
            return max(1, int(os.environ.get("OMP_NUM_THREADS", "").split(",")[0]))
        except ValueError:
            return max(1, len(os.sched_getaffinity(0)))
    return int(threads) if threads else 1


def _dask_env(options, simulation, env, scheduler_answered):
    return {
        # Damaris leaves it empty unless its writer 0 reached the scheduler.
        "dask_scheduler_file": options.get("scheduler-file", "") if scheduler_answered else "",
        "dask_workers_name": _worker_name(simulation, env),
        "dask_nworkers": env.servers_per_node,
        "dask_threads_per_worker": _threads_per_worker(options),
        # Sidecore's own.
        "dask_timeout": float(options.get("timeout") or 2),
        "dask_keep_workers": options.get("keep-workers") == "yes",
    }
