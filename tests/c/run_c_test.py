#!/usr/bin/env python3
"""Runs one C API test program under mpirun and checks what it left behind.

The program itself checks return codes and messages on every rank (and exits non-zero if any
rank saw something unexpected); this driver adds what only the outside can see: that mpirun
finished in time, that every value the program wrote was stored (read back with h5py), that
actions ran where and as often as they should, that warnings reached stderr, and that no
shared memory was left in /dev/shm.

    run_c_test.py --np 3 --xml api.xml.in --define CORES=1 --check api_errors -- \
        ./api_errors @XML@ 1 @OUT@
"""
import argparse
import glob
import os
import re
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpi_job import expect_array, expect_no_leaked_segments, fail, job_segments, mpi_env, run_job  # noqa: E402

NX, NY, N = 4, 3, 5  # tests/c/values.h
DATA_N = 8192


class Topology:
    """Who is client and who is server, computed like src/topology does it."""

    def __init__(self, np_, cores, ranks_per_node, nodes=0):
        per_node = ranks_per_node or np_
        self.roles = {}           # world rank -> "client" | "server"
        self.client_index = {}    # world rank -> client index
        self.server_of = {}       # client index -> world rank of its server
        self.servers = []         # world ranks of servers, in server index order
        clients = []
        node_count = (np_ + per_node - 1) // per_node
        for rank in range(np_):
            node, node_rank = divmod(rank, per_node)
            node_size = min(per_node, np_ - node * per_node)
            on_node = node_size - cores
            if nodes and node >= node_count - nodes:
                # Dedicated nodes: the last `nodes` nodes hold only servers.
                self.roles[rank] = "server"
                self.servers.append(rank)
            elif cores and node_rank >= on_node:
                self.roles[rank] = "server"
                self.servers.append(rank)
            else:
                self.roles[rank] = "client"
                clients.append(rank)
        for index, rank in enumerate(clients):
            self.client_index[rank] = index
            node, node_rank = divmod(rank, per_node)
            node_size = min(per_node, np_ - node * per_node)
            on_node = node_size - cores
            if cores:
                group = node_rank * cores // on_node
                self.server_of[index] = node * per_node + on_node + group
        self.clients = len(clients)
        self.cores = cores


def stored_blocks(out, simulation, iteration):
    """Maps dataset path -> file over the FilePerCore files of one iteration."""
    found = {}
    for name in sorted(glob.glob(os.path.join(out, f"{simulation}_It{iteration}_Pr*.h5"))):
        with h5py.File(name, "r") as h5:
            def visit(path, obj, filename=name):
                if isinstance(obj, h5py.Dataset):
                    if path in found:
                        fail(f"iteration {iteration}: {path} stored twice ({found[path]}, {filename})")
                    found[path] = filename
            h5.visititems(visit)
    return found


def read(filename, path):
    with h5py.File(filename, "r") as h5:
        return h5[path][...]


def field_values(iteration, source, block):
    y, x = np.mgrid[0:NY, 0:NX]
    return (iteration * 10000.0 + source * 1000.0 + block * 100.0 + y * NX + x).astype(np.float64)


def counts_values(iteration, source):
    return (iteration * 1000 + source * 100 + np.arange(N)).astype(np.int32)


def data_values(iteration, source):
    return iteration * 1e6 + source * 1e5 + np.arange(DATA_N, dtype=np.float64)


def check_api(out, topo, iterations, with_counts, with_ticks):
    for it in range(iterations):
        found = stored_blocks(out, "api", it)
        for src in range(topo.clients):
            for b in range(2):
                path = f"field/P{src}/B{b}"
                if path not in found:
                    fail(f"iteration {it}: {path} was not stored; have {sorted(found)}")
                expect_array(f"It{it} {path}", read(found[path], path), field_values(it, src, b))
            if with_counts:
                path = f"counts/P{src}/B0"
                if path not in found:
                    fail(f"iteration {it}: {path} was not stored; have {sorted(found)}")
                expect_array(f"It{it} {path}", read(found[path], path), counts_values(it, src))
                if f"counts/P{src}/B1" in found:
                    fail(f"iteration {it}: counts/P{src}/B1 was refused by the API, yet stored")
                for refused in ("huge", "tile"):
                    if any(p.startswith(refused + "/") for p in found):
                        fail(f"iteration {it}: '{refused}' was refused by the API, yet stored")
            if with_ticks:
                marker = os.path.join(out, f"tick_it{it}_src{src}")
                if not os.path.exists(marker):
                    fail(f"the action of 'tick' did not run for client {src} at iteration {it}")
                runs = open(marker).read().count("ran")
                if runs != 1:
                    fail(f"the action of 'tick' ran {runs} times for client {src} at iteration {it}")
    print(f"stored values checked: {iterations} iteration(s), {topo.clients} client(s)")


def data_iterations(out, iterations, clients):
    """Iteration -> set of sources whose 'data' block was stored (values checked)."""
    stored = {}
    for it in range(iterations):
        found = stored_blocks(out, "full", it)
        for path, filename in found.items():
            m = re.fullmatch(r"data/P(\d+)", path)
            if not m:
                fail(f"iteration {it}: unexpected dataset {path}")
            src = int(m.group(1))
            if src >= clients:
                fail(f"iteration {it}: dataset {path} from an unknown client")
            expect_array(f"It{it} {path}", read(filename, path), data_values(it, src))
            stored.setdefault(it, set()).add(src)
    return stored


def check_full(out, topo, mode, iterations, output):
    clients = set(range(topo.clients))
    if mode in ("oversize", "wait"):
        stored = data_iterations(out, iterations, topo.clients)
        for it in range(iterations):
            if stored.get(it) != clients:
                fail(f"iteration {it}: stored blocks of clients {sorted(stored.get(it, []))}, "
                     f"expected {sorted(clients)}")
        print(f"all {iterations} iterations stored intact")
    elif mode == "timeout":
        stored = data_iterations(out, 5, topo.clients)
        for it in (0, 1, 3, 4):
            if stored.get(it) != clients:
                fail(f"iteration {it} was written successfully but not stored")
        if stored.get(2):
            fail("iteration 2 was refused (timeout) but a block of it was stored")
        print("iterations 0, 1, 3, 4 stored; iteration 2 (timed out) absent")
    elif mode == "skip":
        if topo.clients != 1:
            fail("the skip check expects one client")
        stored = data_iterations(out, iterations, 1)
        kept = sorted(stored)
        dropped = [it for it in range(iterations) if it not in stored]
        print(f"stored iterations {kept}, dropped {dropped}")
        if 0 not in stored:
            fail("iteration 0 found an empty buffer and must be stored")
        if not dropped:
            fail("no iteration was dropped: the scenario did not fill the buffer")
        # The first drop is reported when it happens, naming the iteration...
        first = re.search(r"buffer full at iteration (\d+)", output)
        if not first:
            fail("no warning when the first iteration was dropped")
        if int(first.group(1)) != dropped[0]:
            fail(f"the first drop was reported at iteration {first.group(1)}, "
                 f"but iteration {dropped[0]} is the first one missing")
        # ...and the total at finalize, after the client called it.
        marker = output.find("full_buffer: rank 0 calls damaris_finalize")
        if marker < 0:
            fail("the client never reached damaris_finalize")
        report = re.search(r"buffer full: (\d+) iteration\(s\) skipped under policy=\"skip\"",
                           output[marker:])
        if not report:
            fail("damaris_finalize did not report the skipped iterations on stderr")
        if int(report.group(1)) != len(dropped):
            fail(f"finalize reports {report.group(1)} skipped iteration(s), "
                 f"but {len(dropped)} are missing from the output")
    else:
        fail(f"unknown full-buffer mode {mode}")


def check_events(out, topo, iterations):
    lines = []
    for name in glob.glob(os.path.join(out, "events_rank*.log")):
        for line in open(name):
            lines.append(dict(kv.split("=", 1) for kv in line.split()))
    pid_of = {}
    for e in lines:
        if e["event"] == "hello":
            rank = int(e["rank"])
            if e["role"] != topo.roles[rank]:
                fail(f"rank {rank} is a {e['role']}, expected a {topo.roles[rank]}")
            pid_of[rank] = e["pid"]
    if len(pid_of) != len(topo.roles):
        fail(f"{len(pid_of)} processes said hello, expected {len(topo.roles)}")
    client_rank = {index: rank for rank, index in topo.client_index.items()}

    def runs(event, **match):
        return [e for e in lines if e["event"] == event and
                all(e[k] == str(v) for k, v in match.items())]

    def expect_count(event, found, want, what):
        if len(found) != want:
            fail(f"{event}: ran {len(found)} time(s) {what}, expected {want}: {found}")

    for e in lines:
        if e["event"] != "hello" and e["pid"] != pid_of[int(e["rank"])]:
            fail(f"action logged by rank {e['rank']} from a foreign process: {e}")
        if e["event"] in ("bound_ev", "local_bound_ev") and e["via"] != "bound":
            fail(f"{e['event']}: the executable's symbol ran although a function was bound: {e}")

    for it in range(iterations):
        for src in range(topo.clients):
            me = client_rank[src]
            # Remote events run on the client's own server (in the client without servers).
            runner = topo.server_of[src] if topo.cores else me
            where = f"for client {src} at iteration {it}"
            expect_count("core_ev", runs("core_ev", source=src, iteration=it), 2, where)
            expect_count("core_ev", runs("core_ev", source=src, iteration=it, rank=runner), 2,
                         where + f" on rank {runner}")
            expect_count("bound_ev", runs("bound_ev", source=src, iteration=it, rank=runner), 1,
                         where + f" on rank {runner}")
            # execution="local": in the signalling client, whatever the deployment.
            for event in ("local_ev", "local_bound_ev"):
                found = runs(event, source=src, iteration=it)
                expect_count(event, found, 1, where)
                if found[0]["rank"] != str(me) or found[0]["role"] != "client":
                    fail(f"{event}: ran on rank {found[0]['rank']} ({found[0]['role']}), "
                         f"expected in client rank {me}")
        # scope="group": once per server and iteration, when all of its clients signalled.
        group = runs("group_ev", iteration=it)
        if topo.cores:
            expect_count("group_ev", group, len(topo.servers), f"at iteration {it}")
            for server in topo.servers:
                expect_count("group_ev", runs("group_ev", iteration=it, rank=server), 1,
                             f"on server rank {server} at iteration {it}")
        else:
            expect_count("group_ev", group, topo.clients, f"at iteration {it} (no server)")
        # scope="bcast": client (it % clients) signals; every server runs it once.
        sender = it % topo.clients
        bcast = runs("bcast_ev", iteration=it)
        targets = topo.servers if topo.cores else [client_rank[sender]]
        expect_count("bcast_ev", bcast, len(targets), f"at iteration {it}")
        for rank in targets:
            expect_count("bcast_ev", runs("bcast_ev", iteration=it, rank=rank, source=sender), 1,
                         f"on rank {rank} at iteration {it}")
    known = {"hello", "core_ev", "group_ev", "local_ev", "bcast_ev", "bound_ev", "local_bound_ev"}
    for e in lines:
        if e["event"] not in known:
            fail(f"unexpected action: {e}")
        if e["event"] != "hello" and not 0 <= int(e["iteration"]) < iterations:
            fail(f"action for an iteration that never was: {e}")
    print(f"{len(lines) - len(pid_of)} action runs checked over {len(pid_of)} processes")


def check_out_of_step(out, topo, iterations, filemode, stop_at=0, stopper=0):
    """Client `stopper` wrote its first stop_at iterations, then stopped; every client's blocks
    of every iteration it wrote are stored, and the files say the iterations that client left
    out are incomplete (and those every client wrote, complete)."""
    for it in range(iterations):
        writers = [c for c in range(topo.clients) if it < stop_at or c != stopper]
        if filemode == "Collective":
            name = os.path.join(out, f"steps_It{it}.h5")
            if not os.path.exists(name):
                fail(f"missing {name}; have {sorted(os.listdir(out))}")
            with h5py.File(name, "r") as h5:
                got = h5["field"][...]
                complete = int(h5.attrs["complete"])
            for src in writers:
                part = got[:, src * NX:(src + 1) * NX]
                expect_array(f"It{it} field of client {src}", part, field_values(it, src, 0))
            if it >= stop_at:
                expect_array(f"It{it} field of client {stopper} (never written)",
                             got[:, stopper * NX:(stopper + 1) * NX], np.zeros((NY, NX)))
        else:
            found = stored_blocks(out, "steps", it)
            for src in writers:
                path = f"field/P{src}"
                if path not in found:
                    fail(f"iteration {it}: {path} missing; have {sorted(found)}")
                expect_array(f"It{it} {path}", read(found[path], path), field_values(it, src, 0))
            if it >= stop_at and f"field/P{stopper}" in found:
                fail(f"iteration {it}: client {stopper} wrote nothing, yet field/P{stopper} is "
                     "stored")
            master = os.path.join(out, f"steps_It{it}.h5")
            if not os.path.exists(master):
                continue  # no master file in this mode
            with h5py.File(master, "r") as h5:
                complete = int(h5.attrs["complete"])
        # The files name the client that left the iteration out (sidecore inspect says it).
        files = glob.glob(os.path.join(out, f"steps_It{it}.h5")) + \
            glob.glob(os.path.join(out, f"steps_It{it}_Pr*.h5"))
        left, said_incomplete = set(), False
        for name in files:
            with h5py.File(name, "r") as h5:
                left |= set(int(c) for c in h5.attrs.get("clients_left_out", []))
                said_incomplete |= int(h5.attrs.get("complete", 1)) == 0
        if it < stop_at and left:
            fail(f"iteration {it}: every client ended it, yet the files name {sorted(left)}")
        if it >= stop_at and said_incomplete and left != {stopper}:
            fail(f"iteration {it}: the files name clients {sorted(left)} as having left it out, "
                 f"not [{stopper}]")
        want = 1 if it < stop_at else 0
        if complete != want:
            fail(f"iteration {it}: complete={complete}, expected {want} (client {stopper} "
                 f"wrote iterations 0 to {stop_at - 1})")
    print(f"{iterations} iterations of {topo.clients - 1} clients stored beside a client that "
          f"stopped after {stop_at}")


def check_one_error(output, np_, needle):
    """A failed damaris_initialize is reported once per rank: rank 0 prints the configuration
    error in full (naming needle), the other ranks point to rank 0, and none of the calls the
    program makes afterwards adds an error line."""
    errors = {}
    for line in output.splitlines():
        m = re.search(r"sidecore rank (\d+)[^\]]*\] error: (.*)", line)
        if m:
            errors.setdefault(int(m.group(1)), []).append(m.group(2))
    for rank in range(np_):
        lines = errors.get(rank, [])
        if len(lines) != 1:
            fail(f"rank {rank} printed {len(lines)} error lines, expected one: {lines}")
        if rank == 0 and needle not in lines[0]:
            fail(f"rank 0's error does not name {needle!r}: {lines[0]}")
        if rank != 0 and "rank 0 prints what is wrong" not in lines[0]:
            fail(f"rank {rank}'s error does not point to rank 0: {lines[0]}")
        if "DAMARIS_NOT_INITIALIZED" not in lines[0]:
            fail(f"rank {rank}'s error does not say what later calls return: {lines[0]}")
    print(f"one error line per rank ({np_} ranks)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--ranks-per-node", type=int, default=0)
    ap.add_argument("--cores", type=int, default=0, help="dedicated cores per node")
    ap.add_argument("--nodes", type=int, default=0, help="dedicated nodes")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--xml", help="template; @KEY@ replaced by --define values and @OUT@")
    ap.add_argument("--define", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--check", default="none")
    ap.add_argument("--iterations", type=int, default=1)
    ap.add_argument("--mode", default="")
    ap.add_argument("--expect-once", action="append", default=[], metavar="TEXT",
                    help="the job's output holds TEXT exactly once")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        fail("no program given")

    topo = Topology(args.np, args.cores, args.ranks_per_node, args.nodes)
    shm_before = job_segments()
    with tempfile.TemporaryDirectory(prefix="sidecore-ctest-") as out:
        values = {"OUT": out, "CORES": str(args.cores), "NODES": str(args.nodes)}
        for d in args.define:
            key, _, value = d.partition("=")
            values[key] = value
        if args.xml:
            text = open(args.xml).read()
            for key, value in values.items():
                text = text.replace(f"@{key}@", value)
            if re.search(r"@[A-Z_]+@", text):
                fail(f"{args.xml}: unreplaced {re.search(r'@[A-Z_]+@', text).group(0)}")
            name = os.path.basename(args.xml)
            values["XML"] = os.path.join(out, name[:-3] if name.endswith(".in") else name)
            with open(values["XML"], "w") as f:
                f.write(text)
        argv = []
        for word in command:
            for key, value in values.items():
                word = word.replace(f"@{key}@", value)
            argv.append(word)

        env = mpi_env(args.ranks_per_node)
        returncode, output = run_job(args.np, argv, env, args.timeout, cwd=out)
        if returncode != 0:
            # The job ended: check its output anyway, so one run reports every problem.
            print(f"mpirun exited with {returncode}; checking what the job left anyway")

        if args.check == "api_errors":
            check_api(out, topo, args.iterations, with_counts=True, with_ticks=True)
            # A failure's log line names its code, not the code's generic description, which
            # can contradict the message ("already written or allocated" is not "no room").
            if "[DAMARIS_ALLOCATION_ERROR; later failures" not in output:
                fail("no logged DAMARIS_ALLOCATION_ERROR failure in the job's output")
            if "the buffer cannot hold the request" in output:
                fail("a logged failure carries the generic text of its code")
        elif args.check == "lifecycle":
            check_api(out, topo, args.iterations, with_counts=False, with_ticks=False)
        elif args.check == "full":
            check_full(out, topo, args.mode, args.iterations, output)
        elif args.check == "events":
            check_events(out, topo, args.iterations)
        elif args.check.startswith("out_of_step:"):
            # out_of_step:<file mode>[:<iterations the stopper wrote>[:<stopper, 0 if not>]]
            fields = args.check.split(":")
            check_out_of_step(out, topo, args.iterations, fields[1],
                              int(fields[2]) if len(fields) > 2 else 0,
                              int(fields[3]) if len(fields) > 3 else 0)
        elif args.check.startswith("one_error:"):
            check_one_error(output, args.np, args.check.split(":", 1)[1])
        elif args.check != "none":
            fail(f"unknown check {args.check}")
        for text in args.expect_once:
            if output.count(text) != 1:
                fail(f"the job's output holds {text!r} {output.count(text)} times, not once")
        if returncode != 0:
            fail(f"mpirun exited with {returncode}")

    expect_no_leaked_segments(shm_before)
    print("OK")


if __name__ == "__main__":
    main()
