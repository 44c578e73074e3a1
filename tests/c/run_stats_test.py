#!/usr/bin/env python3
"""Runs tests/c/stats.c under mpirun and checks the run report it leaves.

The program checks sidecore_stats on every client; this driver checks the JSON run report
written at damaris_finalize against the same known numbers (every client writes one block of
8192 doubles per iteration), and, when asked, the periodic log line.

    run_stats_test.py --np 3 --cores 1 --mode exact --iterations 6 --clients-per-writer 2 \
        --xml stats.xml.in -- ./c_stats
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpi_job import expect_no_leaked_segments, fail, job_segments, mpi_env, run_job  # noqa: E402

BLOCK = 8192 * 8


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--np", type=int, required=True)
    p.add_argument("--cores", type=int, required=True)
    p.add_argument("--xml", required=True)
    p.add_argument("--mode", choices=["exact", "skip"], required=True)
    p.add_argument("--iterations", type=int, required=True)
    p.add_argument("--clients-per-writer", type=int, required=True)
    p.add_argument("--nodes", type=int, default=0, help="dedicated nodes (virtual nodes of "
                   "--ranks-per-node ranks)")
    p.add_argument("--ranks-per-node", type=int, default=0)
    p.add_argument("--threads", type=int, default=0, help="a background I/O thread (1)")
    p.add_argument("--buffer", default="16777216")
    p.add_argument("--policy", default="wait")
    p.add_argument("--write-times", action="store_true")
    p.add_argument("--interval", help="SIDECORE_STATS_INTERVAL; the log line is then expected")
    p.add_argument("--timeout", type=float, default=90)
    p.add_argument("program", nargs=argparse.REMAINDER)
    args = p.parse_args()
    program = [a for a in args.program if a != "--"]

    with tempfile.TemporaryDirectory(prefix="sidecore-stats-") as tmp:
        out = os.path.join(tmp, "out")
        reports = os.path.join(tmp, "reports")
        os.makedirs(out)
        os.makedirs(reports)
        with open(args.xml) as f:
            text = f.read()
        for key, value in {"CORES": args.cores, "NODES": args.nodes, "THREADS": args.threads,
                           "BUFFER": args.buffer, "POLICY": args.policy, "OUT": out}.items():
            text = text.replace("@%s@" % key, str(value))
        xml = os.path.join(tmp, "stats.xml")
        with open(xml, "w") as f:
            f.write(text)
        extra = {"SIDECORE_REPORT": reports + "/"}
        if args.write_times:
            extra["SIDECORE_WRITE_TIMES"] = "1"
        if args.interval:
            extra["SIDECORE_STATS_INTERVAL"] = args.interval
            extra["SIDECORE_LOG_LEVEL"] = "info"  # the lines are info, the default is warning
        before = job_segments()
        status, output = run_job(args.np, program + [xml, args.mode, str(args.iterations),
                                                     str(args.clients_per_writer)],
                                 mpi_env(args.ranks_per_node, **extra), args.timeout, cwd=tmp)
        if status != 0:
            fail("the program exited with status %d" % status)
        expect_no_leaked_segments(before)
        if args.interval and "stats: received" not in output:
            fail("no periodic 'stats:' log line although SIDECORE_STATS_INTERVAL=" + args.interval)

        path = os.path.join(reports, "stats_report.json")
        if not os.path.exists(path):
            fail("no run report at " + path)
        with open(path) as f:
            report = json.load(f)
        check_report(report, args)
    print("PASS")


def expect(condition, what):
    if not condition:
        fail(what)


def check_report(r, args):
    servers = args.cores or args.nodes * args.ranks_per_node
    clients = args.np - servers
    writers = servers or clients
    its = args.iterations
    everything = clients * its * BLOCK
    expect(r["format"] == "sidecore-run-report" and r["version"] == 1, "format/version")
    mode = ("dedicated cores" if args.cores else "dedicated nodes" if args.nodes
            else "background thread" if args.threads else "synchronous")
    expect(r["mode"] == mode, "mode " + r["mode"])
    expect(r["client_count"] == clients and r["writer_count"] == writers, "clients/writers")
    expect(len(r["clients"]) == clients, "one entry per client")
    expect(len(r["writers"]) == writers, "one entry per writer")
    expect(r["write_times"] == args.write_times, "write_times flag")
    t = r["totals"]
    print("totals: " + json.dumps(t))
    expect(t["iterations"] == its, "totals.iterations")
    expect(t["iterations_stored"] == writers * its, "totals.iterations_stored")
    expect(t["store_failures"] == 0 and t["bytes_failed"] == 0, "no store failure")
    expect(t["bytes_handed_over"] + t["bytes_dropped_by_clients"] == everything,
           "handed over + dropped = what the clients wrote")
    expect(t["bytes_received"] == t["bytes_handed_over"], "received = handed over")
    expect(t["bytes_written"] == t["bytes_handed_over"], "written = handed over")
    expect(t["bytes_pending"] == 0, "nothing pending at the end")
    if args.mode == "exact":
        expect(t["bytes_handed_over"] == everything, "totals.bytes_handed_over")
        expect(t["bytes_dropped"] == 0 and t["bytes_dropped_by_clients"] == 0, "nothing dropped")
    else:
        expect(t["bytes_dropped_by_clients"] > 0, "some bytes dropped under policy=skip")
        expect(t["bytes_skipped"] == t["bytes_dropped_by_clients"], "writers' skipped = clients'")
        expect(t["bytes_dropped"] == t["bytes_skipped"], "dropped = skipped")
    for w in r["writers"]:
        rows = w["iterations"]
        expect(rows is not None and len(rows["iteration"]) == its, "a record per iteration")
        expect(rows["iteration"] == list(range(its)), "records in order")
        expect(sum(rows["bytes"]) == w["bytes_received"], "records' bytes = received")
        for c, b, s in zip(rows["completed"], rows["store_begin"], rows["stored"]):
            # One process's clock: ordered. (Against rank 0's duration only up to the skew of
            # the processes' origins.)
            expect(c <= b <= s, "completed <= store_begin <= stored: %r" % ((c, b, s),))
            expect(s <= r["duration"] + 1.0, "stored before the report")
        expect(w["latency"]["count"] == its, "latency count")
        expect(w["buffer"]["peak"] <= w["buffer"]["capacity"], "peak within capacity")
        expect(len(w["clients"]) == args.clients_per_writer, "clients of a writer")
    for c in r["clients"]:
        expect(c["iterations"] == its, "client iterations")
        expect(c["bytes_written"] + c["bytes_dropped"] == its * BLOCK, "client bytes")
        times = c["iteration_times"]
        if args.write_times:
            expect(times is not None and len(times["write_seconds"]) == its, "write times")
            expect(all(x >= 0 for x in times["write_seconds"]), "write times >= 0")
            expect(abs(sum(times["write_seconds"]) - c["write_seconds"]) < 1e-3,
                   "write times add up")
        else:
            expect(times is None and c["write_seconds"] is None, "no write times")


if __name__ == "__main__":
    main()
