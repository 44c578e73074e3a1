"""Dask workers on the dedicated cores and nodes, started and stopped as Damaris's PyAction does
for a <pyscript> naming a scheduler file (docs/python_scripts.md).

Damaris checks the scheduler once (writer 0 connects a Client within `timeout` seconds and tells
the others), then every server runs
    dask-worker --scheduler-file <file> --name <simulation>_<magic>_<server> --nthreads <n> &
and, at the end, unless keep-workers="yes", retires the workers of that name through the
scheduler. Here the worker is started from this interpreter's executable (so it runs in the
same environment), with the directories of damaris4py and of the scripts on its module path
(they are also appended to the scheduler's, which unpickles the task graphs, and to those of
the workers already serving it): none needs PYTHONPATH. Every wait is bounded and a worker is
always stopped, by the scheduler or by a signal, unless it is asked to outlive the run. One
worker per writer process and scheduler, shared by the scripts that name it.

Imported only when a script names a scheduler file: a run without Dask never imports dask."""
import atexit
import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time

# Bounds of the waits, in seconds. A worker imports dask and distributed before registering,
# which on a loaded node takes tens of seconds; retiring moves its data to the other workers.
START_SECONDS = 180
PATHS_SECONDS = 30
RETIRE_SECONDS = 60
EXIT_SECONDS = 20

# Set in a started worker before it runs: the worker receives SIGTERM when the thread of the
# writer that started it dies (a writer killed by its job), so that it never outlives it.
_LAUNCHER = """
import ctypes, os, runpy, signal, sys
parent = int(sys.argv.pop(1))
if parent:
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        sys.exit(0)
sys.argv[0] = "dask-worker"
runpy.run_module("distributed.cli.dask_worker", run_name="__main__", alter_sys=True)
"""

# Run on the scheduler and its workers (through exec, so that nothing of this module must be
# importable there): appends the directories the task graphs' functions are imported from.
_SCHEDULER_PATHS = """
import importlib, sys
for path in paths:
    if path not in sys.path:
        sys.path.append(path)
importlib.invalidate_caches()
"""

_workers = {}  # scheduler file: Worker of this process


def say(message):
    print(f"sidecore: {message}", file=sys.stderr, flush=True)


def module_paths(script_paths):
    """Where the scripts' workers and scheduler find damaris4py and the scripts' modules."""
    paths = []
    spec = importlib.util.find_spec("damaris4py")
    if spec is not None and spec.submodule_search_locations:
        paths.append(os.path.dirname(list(spec.submodule_search_locations)[0]))
    paths.append(os.path.dirname(os.path.abspath(__file__)))
    paths += [os.path.dirname(p) for p in script_paths]
    return list(dict.fromkeys(p for p in paths if p))


def python_executable():
    """This interpreter's program: sys.executable in a Python simulation and in the embedded
    interpreter (started with its path); its base installation's otherwise."""
    for candidate in (sys.executable, getattr(sys, "_base_executable", "")):
        if candidate and os.path.basename(candidate).startswith("python") and \
                os.access(candidate, os.X_OK):
            return candidate
    raise RuntimeError(f"no Python executable to start Dask workers with (sys.executable is "
                       f"'{sys.executable}'); set SIDECORE_PYTHON to the interpreter's path")


def check_scheduler(scheduler_file, timeout, paths):
    """'' when a client reaches the scheduler of `scheduler_file` within `timeout` seconds (then
    `paths` are on its module path), else why not."""
    if not os.path.exists(scheduler_file):
        return "the file does not exist"
    try:
        from distributed import Client
    except ImportError as e:
        return f"Dask's distributed cannot be imported by {sys.executable} ({e})"
    try:
        client = Client(scheduler_file=scheduler_file, timeout=f"{timeout}s",
                        set_as_default=False)
    except Exception as e:  # noqa: BLE001 (anything that stops a connection is the answer)
        return f"no scheduler answered within {timeout:g} s ({type(e).__name__}: {e})"
    try:
        # The workers already there too (a job script's own, which keep what the run's
        # workers hand over when they retire).
        _bounded(lambda: (client.run_on_scheduler(exec, _SCHEDULER_PATHS, {"paths": paths}),
                          client.run(exec, _SCHEDULER_PATHS, {"paths": paths})),
                 max(PATHS_SECONDS, timeout))
    except Exception as e:  # noqa: BLE001 (a cluster refusing code still runs graphs)
        say(f"warning: could not add {os.pathsep.join(paths)} to the module path of the Dask "
            f"scheduler and its workers ({type(e).__name__}: {e}): start them where "
            "damaris4py is importable")
    finally:
        client.close()
    return ""


def _bounded(call, seconds):
    """call() on a thread of its own, waited for at most `seconds` (a Client call has no
    deadline of its own): returns its result, raises its exception, or TimeoutError when it is
    late (the thread is left to finish or not)."""
    outcome = []

    def target():
        try:
            outcome.append((call(), None))
        except BaseException as e:  # noqa: BLE001 (handed to the caller)
            outcome.append((None, e))

    thread = threading.Thread(target=target, name="sidecore-dask-call", daemon=True)
    thread.start()
    thread.join(seconds)
    if not outcome:
        raise TimeoutError(f"no answer within {seconds:g} s")
    result, error = outcome[0]
    if error is not None:
        raise error
    return result


def _worker_environment(paths):
    env = dict(os.environ)
    # A worker is no MPI process: nothing of the writer's launcher reaches it.
    for key in [k for k in env if k.startswith(("OMPI_", "PMIX_", "PMI_", "HYDRA_", "MPIR_"))]:
        del env[key]
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p and p not in paths])
    # Its informational lines would fill the job's output; warnings and errors still show.
    env.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")
    return env


def _scheduler_info(client):
    try:
        return client.scheduler_info(n_workers=-1)  # every worker, not the first few
    except TypeError:  # distributed before 2025: every worker is listed
        return client.scheduler_info()


class Worker:
    """One dask worker process started by this writer."""

    def __init__(self, scheduler_file, name, threads, timeout, keep, paths):
        self.scheduler_file = scheduler_file
        self.name = name
        self.timeout = timeout
        self.keep = keep
        self.users = 0
        self.address = None
        options = ["--scheduler-file", scheduler_file, "--name", name, "--nthreads",
                   str(threads), "--no-nanny", "--no-dashboard"]
        # A worker that outlives the run has a session of its own (the job's end does not
        # signal it) and no link to the writer's output; the others die with their writer.
        tied = not keep and threading.current_thread() is threading.main_thread()
        command = [python_executable(), "-c", _LAUNCHER, str(os.getpid() if tied else 0)]
        say(f"starting Dask worker '{name}': {command[0]} -m distributed.cli.dask_worker "
            + " ".join(options))
        output = subprocess.DEVNULL if keep else None
        self.process = subprocess.Popen(command + options, env=_worker_environment(paths),
                                        stdin=subprocess.DEVNULL, stdout=output, stderr=output,
                                        start_new_session=keep)

    def wait_registered(self):
        """'' once the scheduler lists this worker, else why it does not (bounded)."""
        from distributed import Client
        deadline = time.monotonic() + max(START_SECONDS, self.timeout)
        pause = 0.05
        try:
            client = Client(scheduler_file=self.scheduler_file, timeout=f"{self.timeout}s",
                            set_as_default=False)
        except Exception as e:  # noqa: BLE001
            return f"the scheduler went away ({type(e).__name__}: {e})"
        try:
            while True:
                status = self.process.poll()
                if status is not None:
                    return f"the worker process ended with status {status}"
                workers = _bounded(lambda: _scheduler_info(client),
                                   max(1.0, deadline - time.monotonic())).get("workers", {})
                for address, worker in workers.items():
                    if worker.get("name", worker.get("id")) == self.name:
                        self.address = address
                        return ""
                if time.monotonic() > deadline:
                    return (f"it did not register with the scheduler within "
                            f"{max(START_SECONDS, self.timeout):g} s")
                time.sleep(pause)
                pause = min(pause * 2, 1.0)
        except Exception as e:  # noqa: BLE001
            return f"{type(e).__name__}: {e}"
        finally:
            client.close()

    def stop(self):
        """Retires the worker through the scheduler, as Damaris does (its data move to the
        other workers), then makes sure the process has ended: SIGTERM (a worker closes
        cleanly on it) when the scheduler did not close it (its data had nowhere to go), then
        SIGKILL, each after a bounded wait."""
        retired = False
        if self.process.poll() is None:
            try:
                from distributed import Client
                with Client(scheduler_file=self.scheduler_file, timeout=f"{self.timeout}s",
                            set_as_default=False) as client:
                    closed = client.retire_workers(names=[self.name], close_workers=True,
                                                   remove=True, callback_timeout=RETIRE_SECONDS)
                retired = any(info.get("name", info.get("id")) == self.name
                              for info in (closed or {}).values())
            except Exception as e:  # noqa: BLE001 (the signals below end it anyway)
                say(f"warning: Dask worker '{self.name}' could not be retired through the "
                    f"scheduler ({type(e).__name__}: {e}): it is terminated")
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None and self.process.poll() is None:
                self.process.send_signal(sig)
            try:
                self.process.wait(timeout=EXIT_SECONDS if retired or sig else 0)
                return
            except subprocess.TimeoutExpired:
                continue


def acquire(scheduler_file, name, threads, timeout, keep, paths):
    """This writer's worker for `scheduler_file`, started at its first request; a later
    request asking to keep it keeps it. Returns (worker, problem): problem is '' or why the
    worker is not serving."""
    worker = _workers.get(scheduler_file)
    problem = ""
    if worker is None:
        try:
            worker = Worker(scheduler_file, name, threads, timeout, keep, paths)
        except (OSError, RuntimeError) as e:  # no interpreter to run it: the run goes on
            problem = f"it could not be started ({e})"
            say(f"warning: Dask worker '{name}' is not serving: {problem}")
            return None, problem
        _workers[scheduler_file] = worker
        problem = worker.wait_registered()
        if problem:
            say(f"warning: Dask worker '{name}' is not serving: {problem}")
    worker.keep = worker.keep or keep
    worker.users += 1
    return worker, problem


def release(worker):
    """A script is done with `worker`: the last one stops it, unless it is kept."""
    worker.users -= 1
    if worker.users > 0:
        return
    _workers.pop(worker.scheduler_file, None)
    if worker.keep:
        say(f"Dask worker '{worker.name}' (pid {worker.process.pid}) is kept "
            "(keep-workers=\"yes\")")
        return
    worker.stop()


def stop_all():
    """At the interpreter's exit: no worker started here outlives it, unless it is kept."""
    for worker in list(_workers.values()):
        worker.users = 1
        release(worker)


atexit.register(stop_all)
