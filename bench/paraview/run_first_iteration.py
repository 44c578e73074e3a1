#!/usr/bin/env python3
"""How long a dedicated core's first ParaView iteration takes when the simulation computes
before handing it over: the job of tests/paraview (image_writer, 3 clients and 1 dedicated core,
a legacy and a Catalyst 2 script at every iteration), its clients waiting --compute-ms before
their first iteration, for one or more builds side by side, alternated run by run. Per run:
the core's time in the pipelines over the run (the run report's <paraview> entry: the first
iteration sets ParaView up) and the job's wall time.

    bench/paraview/run_first_iteration.py NAME=BUILD[,VAR=VALUE...] ... [--runs N]
        [--compute-ms MS] [--out DIR]

Each BUILD is a build configured with ParaView found (scripts/test_paraview.sh makes one);
VAR=VALUE are given to the job's processes (SIDECORE_PYSCRIPT_RUNNER=<a copy of the runner
with another sidecore-pyscript/ beside it> compares two versions of the pipelines' code).
Needs Xvfb; writes DIR/paraview_first_iteration.md (default bench/results) and prints it.
Environment: MPIRUN_FLAGS as for the tests (tests/mpi_job.py).
"""
import argparse
import datetime
import glob
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "paraview"))
import test_paraview as job  # noqa: E402  (its configuration, launcher and X server)

ITERATIONS = job.ITERATIONS


def run_once(build, variables, compute_ms, display, work):
    """(seconds in the pipelines on the core, job wall seconds)."""
    run_dir = tempfile.mkdtemp(prefix="run-", dir=work)
    from pathlib import Path
    xml, out = job.configure(Path(run_dir), 3, 1)
    env = job.mpi_env(0, DISPLAY=display, SIDECORE_REPORT="", **variables)
    program = os.path.join(build, "tests", "paraview", "image_writer")
    argv = job.exported("DISPLAY", *variables) + [program, xml, str(ITERATIONS),
                                       "--first-compute-ms", str(compute_ms)]
    started = time.perf_counter()
    status, output = job.run_job(4, argv, env, 300, cwd=out)
    wall = time.perf_counter() - started
    if status != 0:
        raise RuntimeError(f"{program} exited with {status}:\n{output}")
    reports = glob.glob(os.path.join(out, "image_*_report.json"))
    if len(reports) != 1:
        raise RuntimeError(f"expected one run report in {out}, found {reports}")
    with open(reports[0]) as f:
        report = json.load(f)
    entries = [a for w in report["writers"] for a in w["actions"] if a["kind"] == "paraview"]
    if len(entries) != 1 or entries[0]["calls"] != ITERATIONS or entries[0]["failures"]:
        raise RuntimeError(f"the pipelines did not run at every iteration: {entries}")
    # What the pipelines wrote, read back: the extracts of iteration 0 hold every client's piece.
    job.check_extract(os.path.join(out, "legacy_input_0.vtm"), 0, 3)
    shutil.rmtree(run_dir, ignore_errors=True)
    return entries[0]["seconds"], wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("builds", nargs="+", metavar="NAME=BUILD[,VAR=VALUE...]")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--compute-ms", type=int, default=2000)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args()
    builds = []
    for b in args.builds:
        name, _, rest = b.partition("=")
        build, *assignments = rest.split(",")
        if not name or not build or any("=" not in a for a in assignments):
            ap.error(f"{b}: each build is NAME=BUILD_DIR[,VAR=VALUE...]")
        builds.append((name, (build, dict(a.split("=", 1) for a in assignments))))
    xvfb = shutil.which("Xvfb")
    if not xvfb:
        sys.exit("run_first_iteration.py: Xvfb is not installed (Debian: xvfb)")
    server, display = job.start_xvfb(xvfb)
    work = tempfile.mkdtemp(prefix="sidecore-first-iteration-")
    load_before = " ".join(open("/proc/loadavg").read().split()[:3])
    results = {name: [] for name, _ in builds}
    try:
        for run in range(args.runs):
            order = builds if run % 2 == 0 else builds[::-1]
            for name, (build, variables) in order:
                results[name].append(run_once(os.path.abspath(build), variables,
                                              args.compute_ms, display, work))
                print(f"run {run + 1}/{args.runs} {name}: pipelines {results[name][-1][0]:.2f} s,"
                      f" job {results[name][-1][1]:.2f} s", flush=True)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait()
        shutil.rmtree(work, ignore_errors=True)
    load_after = " ".join(open("/proc/loadavg").read().split()[:3])

    def cell(values):
        return f"{statistics.median(values):.2f} ({min(values):.2f} - {max(values):.2f})"

    lines = [
        "# The dedicated core's first ParaView iteration after a compute phase",
        "",
        f"`bench/paraview/run_first_iteration.py {' '.join(args.builds)} --runs {args.runs} "
        f"--compute-ms {args.compute_ms}`, {datetime.date.today().isoformat()}, "
        f"{os.cpu_count()} cores, load {load_before} before, {load_after} after. The job of "
        f"tests/paraview (3 clients, 1 dedicated core, a legacy and a Catalyst 2 script at "
        f"each of {ITERATIONS} iterations), the clients waiting {args.compute_ms} ms before "
        "their first iteration; builds alternated run by run. Median (range) over the runs.",
        "",
        "| build | core's time in the pipelines (s) | job wall time (s) |",
        "|---|---|---|",
    ]
    for name, _ in builds:
        lines.append(f"| {name} | {cell([r[0] for r in results[name]])} | "
                     f"{cell([r[1] for r in results[name]])} |")
    text = "\n".join(lines) + "\n"
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "paraview_first_iteration.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
