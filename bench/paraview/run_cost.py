#!/usr/bin/env python3
"""What a ParaView Catalyst pipeline on the dedicated core costs the simulation: the heat
diffusion of examples/heat_insitu.c (1 client and its dedicated core, each on a core of its
own; a 64 MiB buffer unless --buffer says otherwise) run with the
HDF5 store only, with examples/paraview/heat_slice.py every 10 iterations (the demo), and with
it at every iteration, the setups alternated run by run. Per client, the run report
(SIDECORE_WRITE_TIMES=1) gives the time spent in Sidecore's calls at each iteration (write and
end of iteration: what the simulation waits for) and when each iteration ended.

    bench/paraview/run_cost.py <build> [--runs N] [--iterations N] [--out DIR]

<build> is a build configured with ParaView found (scripts/test_paraview.sh or
scripts/demo_paraview.sh make one: build/). Needs Xvfb; writes DIR/paraview_cost.md
(default bench/results) and prints it. Environment: MPIRUN (mpirun), MPIRUN_FLAGS
(--oversubscribe).
"""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from xvfb import start_xvfb  # noqa: E402

STEPS = 100  # diffusion steps per iteration: a few milliseconds of computation
SETUPS = [("HDF5 store only", None), ("+ ParaView every 10 iterations", 10),
          ("+ ParaView every iteration", 1)]


def xvfb():
    try:
        return start_xvfb()
    except RuntimeError as e:
        raise SystemExit(f"run_cost.py: {e}") from None


def configuration(work, every, buffer):
    text = open(os.path.join(ROOT, "examples", "heat_paraview.xml")).read()
    text = re.sub(r'(<buffer name="buffer" size=")\d+', rf"\g<1>{buffer}", text)
    text = text.replace("@SCRIPTS@", os.path.join(ROOT, "examples", "paraview") + "/")
    text = text.replace("@OUTPUT@", work + "/")
    if every is None:
        text = re.sub(r"<paraview.*?</paraview>", "", text, flags=re.S)
    else:
        text = text.replace('update-frequency="10"', f'update-frequency="{every}"')
    path = os.path.join(work, "heat.xml")
    with open(path, "w") as f:
        f.write(text)
    return path


def one_run(build, every, iterations, display, buffer):
    work = tempfile.mkdtemp(prefix="sidecore-pvcost-")
    try:
        xml = configuration(work, every, buffer)
        env = dict(os.environ, DISPLAY=display, SIDECORE_WRITE_TIMES="1",
                   OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        env.pop("SIDECORE_REPORT", None)
        command = [os.environ.get("MPIRUN", "mpirun")] + shlex.split(
            os.environ.get("MPIRUN_FLAGS", "--oversubscribe")) + [
            "-np", "2", "-x", "DISPLAY", "-x", "SIDECORE_WRITE_TIMES",
            os.path.join(build, "examples", "sidecore_heat_insitu"), xml, str(iterations),
            str(STEPS)]
        done = subprocess.run(command, env=env, cwd=work, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"run_cost.py: {' '.join(command)} failed ({done.returncode}):\n"
                             f"{done.stdout}\n{done.stderr}")
        pictures = len(glob.glob(os.path.join(work, "slice_*.png")))
        want = 0 if every is None else len(range(0, iterations, every))
        if pictures != want:
            raise SystemExit(f"run_cost.py: {pictures} pictures, expected {want}")
        with open(glob.glob(os.path.join(work, "heat_*_report.json"))[0]) as f:
            report = json.load(f)
        calls = [t for c in report["clients"] for t in c["iteration_times"]["write_seconds"]]
        ends = [c["iteration_times"]["ended"] for c in report["clients"]]
        loop = max(e[-1] for e in ends) - min(e[0] for e in ends)
        return calls, loop
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--buffer", type=int, default=64 << 20, help="shared buffer bytes")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    server, display = xvfb()
    load = os.getloadavg()[0]
    samples = {label: {"calls": [], "loop": []} for label, _ in SETUPS}
    try:
        for _ in range(args.runs):
            for label, every in SETUPS:
                calls, loop = one_run(build, every, args.iterations, display, args.buffer)
                samples[label]["calls"].append(calls)
                samples[label]["loop"].append(loop)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait()

    def per_run(label, f):
        return statistics.median(f(run) for run in samples[label]["calls"])

    base = SETUPS[0][0]
    lines = [
        "# What a ParaView pipeline on the dedicated core costs the simulation",
        "",
        f"`bench/paraview/run_cost.py`: the heat diffusion of `examples/heat_insitu.c`, "
        f"{args.iterations} iterations on 1 client and 1 dedicated core (`mpirun -np 2` on "
        f"{os.cpu_count()} cores), a shared buffer of {args.buffer >> 20} MiB, HDF5 store, with `examples/paraview/heat_slice.py` (a slice, "
        f"a 640 x 360 picture and a VTK extract) at the frequency given; {args.runs} runs per "
        "setup, alternated. Per iteration and client: the time in Sidecore's calls (write + "
        "end of iteration), from the run report (`SIDECORE_WRITE_TIMES=1`). Each figure is the "
        "median over runs of a per-run statistic over every client's iterations; the loop is "
        "from the first client's first iteration end to the last one's last.",
        "",
        f"The client computes {STEPS} diffusion steps per iteration between hand-overs (the "
        "loop time over the iterations gives the time per iteration).",
        "",
        "| setup | median call time (us) | 99th percentile (us) | slowest (ms) | loop (s) | "
        "median / store only |",
        "|---|---|---|---|---|---|",
    ]
    base_median = per_run(base, statistics.median)
    for label, _ in SETUPS:
        median = per_run(label, statistics.median)
        p99 = per_run(label, lambda v: sorted(v)[int(0.99 * (len(v) - 1))])
        worst = per_run(label, max)
        loop = statistics.median(samples[label]["loop"])
        lines.append(f"| {label} | {median * 1e6:.1f} | {p99 * 1e6:.1f} | {worst * 1e3:.2f} | "
                     f"{loop:.2f} | {median / base_median:.2f} |")
    lines += ["", f"Load average before the runs: {load:.2f}.", "",
              "Reading: the loop time is what the simulation loses. The call time grows with a "
              "pipeline although no call waits for it: while the dedicated core is busy "
              "(starting ParaView takes about a second here, a picture tens of milliseconds), "
              "the blocks it has not released yet move the allocator into parts of the buffer "
              "the client has not touched before. The client maps those pages ahead of its "
              "writes on a thread of idle priority (8 MiB beyond its furthest block); what "
              "that thread has not reached yet, a write maps itself (a 213 KB block: about "
              "70 us of page faults here), which is what is left of the difference. When the "
              "renders take longer than the iterations for long enough to fill the buffer, the "
              "client waits for room (policy=\"wait\"): `--iterations 600` shows it.", ""]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "paraview_cost.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
