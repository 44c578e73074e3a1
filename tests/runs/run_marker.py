#!/usr/bin/env python3
"""Runs that share a directory, writers that die, files that are torn: what the read API
(sidecore/read.h, called through ctypes) and `sidecore inspect` say about them.

    run_marker.py runs   <libsidecore> <runs_writer> <sidecore cli> <runs.xml.in>
    run_marker.py killed <libsidecore> <runs_writer> <sidecore cli> <runs.xml.in>
    run_marker.py collective_failure:<mode> <libsidecore> <runs_writer> <fail_writes.so>
        <runs.xml.in>      (mode: synchronous, dedicated_cores, dedicated_nodes, thread)

runs: three runs into one directory (3 FilePerCore writers, then 2, then 2 Collective ones): each
iteration reads back the values of the run that wrote it last, never the leftovers of another;
a torn master file leaves its iteration readable; a deleted writer file makes its iteration
incomplete and a region read over its data an error naming it; a torn collective file fails
only its own iteration.
killed: kill -9 of one of two dedicated cores: every iteration the read API calls complete
reads back exact; every other one refuses to read what the dead core did not store.
collective_failure: Collective output with two writers, whose writes to iteration 3's file fail
on one writer only (fail_writes.so, preloaded): the job does not hang, every client is told,
iteration 3 leaves no file, the others read back exact; once with each writer failing (under
MPICH, also with every writer an aggregator of ROMIO's collective writes).
"""
import ctypes
import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpi_job import exported, fail, job_processes, mpi_env, mpiexec, run_job  # noqa: E402

N = 16
DOUBLE = 5  # DAMARIS_TYPE_DOUBLE


def expected(base, iteration, clients):
    """runs_writer's field: block c at columns [16c, 16c + 16)."""
    blocks = [base + iteration * 1e4 + c * 1e3 + np.arange(N * N, dtype=np.float64).reshape(N, N)
              for c in range(clients)]
    return np.concatenate(blocks, axis=1)


class reader_api:
    """The C read API of libsidecore, as a test calls it."""

    def __init__(self, library):
        self.lib = ctypes.CDLL(library)
        self.lib.sidecore_read_last_error.restype = ctypes.c_char_p

    def error(self):
        return self.lib.sidecore_read_last_error().decode()

    def iterations(self, prefix):
        count = ctypes.c_int32(0)
        buffer = (ctypes.c_int32 * 1000)()
        rc = self.lib.sidecore_read_iterations(prefix.encode(), buffer, 1000, ctypes.byref(count))
        if rc != 0:
            fail(f"sidecore_read_iterations({prefix}) returned {rc}: {self.error()}")
        return list(buffer[:count.value])

    def open(self, prefix, iteration):
        """(reader, None) or (None, error message)."""
        handle = ctypes.c_void_p()
        rc = self.lib.sidecore_read_open(prefix.encode(), iteration, ctypes.byref(handle))
        return (handle, None) if rc == 0 else (None, self.error())

    def close(self, handle):
        self.lib.sidecore_read_close(handle)

    def complete(self, handle):
        value = ctypes.c_int32(-1)
        rc = self.lib.sidecore_read_complete(handle, ctypes.byref(value))
        if rc != 0:
            fail(f"sidecore_read_complete returned {rc}: {self.error()}")
        return value.value

    def region(self, handle, start, shape):
        """(array, None) or (None, (code, message))."""
        out = np.full(shape, -1.0)
        s = (ctypes.c_int64 * 2)(*start)
        c = (ctypes.c_int64 * 2)(*shape)
        rc = self.lib.sidecore_read_region(handle, b"field", s, c, DOUBLE,
                                           out.ctypes.data_as(ctypes.c_void_p),
                                           ctypes.c_uint64(out.nbytes))
        return (out, None) if rc == 0 else (None, (rc, self.error()))


def write_xml(template, out, cores, filemode, nodes=0, threads=0):
    text = open(template).read()
    text = text.replace("@CORES@", str(cores)).replace("@OUT@", out).replace("@FILEMODE@", filemode)
    text = text.replace("@NODES@", str(nodes)).replace("@THREADS@", str(threads))
    path = os.path.join(out, f"runs-{filemode}-{cores}-{nodes}-{threads}.xml")
    with open(path, "w") as f:
        f.write(text)
    return path


def run(writer, xml, ranks, iterations, base):
    status, _ = run_job(ranks, [writer, xml, str(iterations), str(base)], mpi_env(), 120)
    if status != 0:
        fail(f"runs_writer ended with status {status}")


def inspect(cli, out):
    proc = subprocess.run([cli, "inspect", "--json", out], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0:
        fail(f"sidecore inspect {out} ended with {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(proc.stdout)["runs"][0]


def per_iteration(report):
    return {entry["iteration"]: entry for entry in report["per_iteration"]}


def expect_read(api, prefix, iteration, base, clients, what):
    handle, error = api.open(prefix, iteration)
    if handle is None:
        fail(f"{what}: iteration {iteration} cannot be opened: {error}")
    try:
        if api.complete(handle) != 1:
            fail(f"{what}: iteration {iteration} is called incomplete")
        got, error = api.region(handle, (0, 0), (N, N * clients))
        if got is None:
            fail(f"{what}: iteration {iteration}: read_region failed: {error}")
        if not np.array_equal(got, expected(base, iteration, clients)):
            fail(f"{what}: iteration {iteration} does not read back the values of its run")
        # Nothing beyond this run's array: the global extents are this run's.
        _, error = api.region(handle, (0, 0), (N, N * clients + N))
        if error is None:
            fail(f"{what}: iteration {iteration} has columns beyond {N * clients} (another run's)")
    finally:
        api.close(handle)


def truncate(path, size=200):
    with open(path, "r+b") as f:
        f.truncate(size)


def runs(library, writer, cli, template):
    api = reader_api(library)
    with tempfile.TemporaryDirectory(prefix="sidecore-runs-") as out:
        prefix = os.path.join(out, "runs")
        # Run A: three writers (synchronous: each client writes its own file).
        run(writer, write_xml(template, out, 0, "FilePerCore"), 3, 3, 0)
        # Run B, into the same directory: two writers. run A's _Pr2 files stay behind.
        run(writer, write_xml(template, out, 0, "FilePerCore"), 2, 3, 5e5)
        if not glob.glob(prefix + "_It0_Pr2.h5"):
            fail("run A's third writer file is not there: the test would prove nothing")
        for it in range(3):
            expect_read(api, prefix, it, 5e5, 2, "second run, fewer writers")
        report = per_iteration(inspect(cli, out))
        for it in range(3):
            entry = report[it]
            if not entry["complete"] or not any(f.endswith(f"_It{it}_Pr2.h5")
                                                for f in entry["other_run_files"]):
                fail(f"inspect, iteration {it}: {entry} (want complete, _Pr2 from another run)")
        print("second run with fewer writers: its values only; inspect names run A's files")

        # A torn master file: the iteration still reads from its writers' files.
        truncate(prefix + "_It1.h5")
        expect_read(api, prefix, 1, 5e5, 2, "torn master file")
        entry = per_iteration(inspect(cli, out))[1]
        if not any(f.endswith("_It1.h5") for f in entry["unreadable_files"]):
            fail(f"inspect does not name the torn master file: {entry}")
        print("torn master file: iteration 1 read from its writer files, inspect names it")

        # FIFOs under a master file's and a writer file's names: never opened (opening one
        # would block the reader for good), said unreadable.
        os.remove(prefix + "_It1.h5")
        os.mkfifo(prefix + "_It1.h5")
        expect_read(api, prefix, 1, 5e5, 2, "FIFO under the master file's name")
        entry = per_iteration(inspect(cli, out))[1]
        if not any(f.endswith("_It1.h5") for f in entry["unreadable_files"]):
            fail(f"inspect does not name the FIFO under the master file's name: {entry}")
        os.remove(prefix + "_It1.h5")
        writer_file = prefix + "_It0_Pr1.h5"
        os.rename(writer_file, writer_file + ".kept")
        os.mkfifo(writer_file)
        handle, error = api.open(prefix, 0)
        if handle is not None:
            try:
                if api.complete(handle) != 0:
                    fail("a FIFO under writer 1's file name, and the read API calls iteration 0 "
                         "complete")
                got, error = api.region(handle, (0, 0), (N, 2 * N))
                if got is not None or "runs_It0_Pr1.h5" not in error[1]:
                    fail(f"read_region over a FIFO's blocks: {error}")
            finally:
                api.close(handle)
        entry = per_iteration(inspect(cli, out))[0]
        if entry["complete"]:
            fail(f"inspect calls iteration 0 complete with a FIFO for writer 1's file: {entry}")
        os.remove(writer_file)
        os.rename(writer_file + ".kept", writer_file)
        expect_read(api, prefix, 0, 5e5, 2, "writer file put back")
        print("FIFOs under data file names: never opened, their iterations not complete")

        # A writer file lost: incomplete, and no zeros passed off as its data. The remaining
        # file also says a client left the iteration out (as the stores write it): the error
        # names that client too.
        os.remove(prefix + "_It2_Pr1.h5")
        import h5py
        with h5py.File(prefix + "_It2_Pr0.h5", "r+") as f:
            f.attrs.modify("complete", 0)
            f.attrs.create("clients_left_out", np.array([1], dtype=np.int32))
        handle, error = api.open(prefix, 2)
        if handle is None:
            fail(f"iteration 2 with a lost writer file cannot be opened at all: {error}")
        try:
            if api.complete(handle) != 0:
                fail("iteration 2 lost writer 1's file but the read API calls it complete")
            got, error = api.region(handle, (0, 0), (N, 2 * N))
            if got is not None:
                fail("read_region over a lost writer file's data returned DAMARIS_OK")
            if "runs_It2_Pr1.h5" not in error[1]:
                fail(f"the error does not name the lost file: {error}")
            if "client 1 left it out" not in error[1]:
                fail(f"the error does not name the client that left the iteration out: {error}")
            print(f"lost writer file: read_region refused ({error[0]}): {error[1]}")
            got, error = api.region(handle, (0, 0), (N, N))
            if got is None or not np.array_equal(got, expected(5e5, 2, 2)[:, :N]):
                fail(f"writer 0's block of iteration 2 does not read back: {error}")
        finally:
            api.close(handle)
        entry = per_iteration(inspect(cli, out))[2]
        if entry["complete"] or entry["missing_writer_files"] != [1]:
            fail(f"inspect, iteration 2: {entry} (want incomplete, writer 1 missing)")

        # Run C: Collective, two writers, over run B's FilePerCore files, an hour later.
        hour_ago = time.time() - 3600
        for name in glob.glob(prefix + "_It*.h5"):
            os.utime(name, (hour_ago, hour_ago))
        run(writer, write_xml(template, out, 0, "Collective"), 2, 2, 9e5)
        for it in range(2):
            expect_read(api, prefix, it, 9e5, 2, "Collective run after a FilePerCore one")
        report = inspect(cli, out)
        if report["complete_iterations"][:2] != [0, 1]:
            fail(f"inspect after the Collective run: complete {report['complete_iterations']}")
        print("Collective run after FilePerCore ones: its values only")

        # A torn collective file: that iteration fails, alone, naming the file.
        truncate(prefix + "_It1.h5")
        handle, error = api.open(prefix, 1)
        if handle is not None:
            api.close(handle)
            fail("a torn collective file opened as if whole")
        if "runs_It1.h5" not in error:
            fail(f"the error does not name the torn file: {error}")
        expect_read(api, prefix, 0, 9e5, 2, "iteration beside a torn one")
        entry = per_iteration(inspect(cli, out))[1]
        if entry["complete"]:
            fail(f"inspect calls the torn collective iteration complete: {entry}")
        print("torn collective file: only its iteration fails:", error)


def killed(library, writer, cli, template):
    api = reader_api(library)
    with tempfile.TemporaryDirectory(prefix="sidecore-killed-core-") as out:
        prefix = os.path.join(out, "runs")
        xml = write_xml(template, out, 1, "FilePerCore")
        # Two virtual nodes of two ranks: a client and a dedicated core each, writers 0 and 1.
        env = mpi_env(ranks_per_node=2)
        proc = subprocess.Popen(mpiexec(4) + [writer, xml, "400", "0", "20"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        deadline = time.time() + 60
        while time.time() < deadline and not glob.glob(prefix + "_It5_Pr1.h5"):
            time.sleep(0.02)
        victim = None
        for pid in job_processes(proc.pid, writer):
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    environ = f.read().split(b"\0")
            except OSError:
                continue
            # Open MPI's rank variable, or MPICH's.
            if b"OMPI_COMM_WORLD_RANK=3" in environ or b"PMI_RANK=3" in environ:
                victim = pid
        if victim is None or not glob.glob(prefix + "_It5_Pr1.h5"):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            fail("the job stored nothing within 60 s, or its rank 3 was not found")
        os.kill(victim, signal.SIGKILL)  # rank 3: the dedicated core of the second node
        try:
            output, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
        print(output[-2000:])
        complete = incomplete = 0
        for it in api.iterations(prefix):
            handle, error = api.open(prefix, it)
            if handle is None:
                fail(f"iteration {it} cannot be opened: {error}")
            try:
                whole, error = api.region(handle, (0, 0), (N, 2 * N))
                if api.complete(handle) == 1:
                    complete += 1
                    if whole is None or not np.array_equal(whole, expected(0, it, 2)):
                        fail(f"iteration {it} is called complete but does not read back: {error}")
                    continue
                incomplete += 1
                if whole is not None:
                    fail(f"iteration {it} is incomplete, yet read_region returned DAMARIS_OK")
                if "_Pr" not in error[1]:
                    fail(f"iteration {it}: the error does not name the missing file: {error}")
                if glob.glob(prefix + f"_It{it}_Pr0.h5"):
                    part, error = api.region(handle, (0, 0), (N, N))
                    if part is None or not np.array_equal(part, expected(0, it, 2)[:, :N]):
                        fail(f"iteration {it}: the surviving writer's block is wrong: {error}")
            finally:
                api.close(handle)
        if complete == 0:
            fail("no complete iteration before the kill")
        print(f"{complete} complete iterations read back exact; {incomplete} incomplete ones "
              "refused the data of the dead dedicated core")


# mode: (dedicated cores, dedicated nodes, I/O threads, ranks, ranks per virtual node, the
# writers' ranks)
COLLECTIVE_MODES = {
    "synchronous": (0, 0, 0, 2, 0, (0, 1)),
    "dedicated_cores": (1, 0, 0, 4, 2, (1, 3)),
    "dedicated_nodes": (0, 2, 0, 4, 1, (2, 3)),
    "thread": (0, 0, 1, 2, 0, (0, 1)),
}


def collective_failure(mode, library, writer, preload, template):
    """Collective output with two writers, whose writes to one iteration's file fail on one of
    them (each in turn): no hang, every client told, the iteration abandoned by every writer,
    the others exact.

    Under MPICH (ROMIO), one host's collective writes are made by one aggregator: with the
    default hints the other writer writes nothing, and its failing writes are never reached
    (once, its metadata writes in H5Fclose did fail alone and the job hung). Both are run: the
    default hints, where the iteration is either abandoned by all or stored whole, and hints
    that make every writer an aggregator (ROMIO_HINTS), where the failure must be seen."""
    api = reader_api(library)
    cores, nodes, threads, ranks, per_node, writer_ranks = COLLECTIVE_MODES[mode]
    iterations, failing = 6, 3
    romio = os.environ.get("SIDECORE_TEST_MPI", "openmpi") == "mpich"
    variants = [("default hints", None, not romio)]
    if romio:
        variants.append(("every writer an aggregator", "cb_config_list *:*\n", True))
    for failing_rank in writer_ranks:
        for variant, hints, must_fail in variants:
            with tempfile.TemporaryDirectory(prefix="sidecore-collective-failure-") as out:
                prefix = os.path.join(out, "runs")
                xml = write_xml(template, out, cores, "Collective", nodes, threads)
                # The launcher gets the library too (MPICH's passes its whole environment on),
                # but the library fails writes only in the rank it is told (the launcher has
                # none).
                extra = dict(SIDECORE_FAIL_WRITES_RANK=failing_rank,
                             SIDECORE_FAIL_WRITES_MATCH=f"_It{failing}.h5.part",
                             LD_PRELOAD=preload)
                if hints:
                    extra["ROMIO_HINTS"] = os.path.join(out, "romio_hints")
                    with open(extra["ROMIO_HINTS"], "w") as f:
                        f.write(hints)
                env = mpi_env(per_node, **extra)
                argv = exported(*extra) + [writer, xml, str(iterations), "0", "0", "tolerate"]
                what = f"writer rank {failing_rank} failing, {variant}"
                status, output = run_job(ranks, argv, env, 90)
                if status != 0:
                    fail(f"{what}: the job ended with status {status}")
                told = [int(n) for n in
                        re.findall(r"runs_writer: client \d+: (\d+) store failures", output)]
                if len(told) != 2:
                    fail(f"{what}: not every client reported its store failures: {told}")
                stored = api.iterations(prefix)
                if max(told) == 0 and not must_fail:
                    # The failing writer wrote nothing: the iteration is whole, as every other.
                    if stored != list(range(iterations)):
                        fail(f"{what}: nothing failed, yet stored iterations are {stored}")
                    for it in stored:
                        expect_read(api, prefix, it, 0, 2, what)
                    print(f"{what}: its writes were made by the other writer, nothing failed, "
                          f"{len(stored)} iterations exact")
                    continue
                if min(told) < 1:
                    fail(f"{what}: not every client was told: {told}")
                # The other writer says it abandoned the file with the failing one; under
                # ROMIO the collective write fails on every writer, which then each say so.
                failed_itself = set(re.findall(
                    r"sidecore rank (\d+) \w+\] error: iteration \d+, store", output))
                if "abandoned by every writer" not in output and len(failed_itself) < 2:
                    fail(f"{what}: the other writer does not say that it abandoned the file")
                left = sorted(os.path.basename(p) for p in glob.glob(prefix + f"_It{failing}.h5*"))
                if left:
                    fail(f"{what}: iteration {failing} left {left}")
                if stored != [it for it in range(iterations) if it != failing]:
                    fail(f"{what}: stored iterations {stored}")
                for it in stored:
                    expect_read(api, prefix, it, 0, 2, what)
                print(f"{what} at iteration {failing}: every writer abandoned it, both clients "
                      f"told, {len(stored)} other iterations exact")


def stale_semaphore(library, writer, preload, template):
    """A Collective job killed while its file was open leaves Open MPI's semaphore for that file
    name ("OMPIO_<name>", locked) in /dev/shm: the next run into the same directory must not
    wait on it for ever when it opens a file of that name."""
    api = reader_api(library)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.sem_open.restype = ctypes.c_void_p
    name = b"/OMPIO_runs_It2.h5.part"
    with tempfile.TemporaryDirectory(prefix="sidecore-stale-semaphore-") as out:
        semaphore = libc.sem_open(name, os.O_CREAT, 0o600, 0)  # left locked, as by a kill
        if not semaphore:
            print("SKIP: cannot create a named semaphore")
            sys.exit(77)
        libc.sem_close(ctypes.c_void_p(semaphore))
        try:
            prefix = os.path.join(out, "runs")
            run(writer, write_xml(template, out, 0, "Collective"), 2, 4, 0)
            for it in range(4):
                expect_read(api, prefix, it, 0, 2, "after a killed run's semaphore")
        finally:
            libc.sem_unlink(name)
        print("a killed run's MPI-IO semaphore did not stop the next run")


def main():
    mode, library, writer, third, template = sys.argv[1:6]
    if mode.startswith("collective_failure:"):
        collective_failure(mode.split(":", 1)[1], library, writer, third, template)
        return
    {"runs": runs, "killed": killed, "stale_semaphore": stale_semaphore}[mode](
        library, writer, third, template)


if __name__ == "__main__":
    main()
