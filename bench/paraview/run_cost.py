#!/usr/bin/env python3
"""What a ParaView Catalyst pipeline on the dedicated core costs the simulation: the heat
diffusion of examples/heat_insitu.c (1 client and its dedicated core, each on a core of its
own; a 64 MiB buffer unless --buffer says otherwise) run with the
HDF5 store only, with examples/paraview/heat_slice.py every 10 iterations (the demo), and with
it at every iteration, the setups alternated run by run. Per client, the run report
(SIDECORE_WRITE_TIMES=1) gives the time spent in Sidecore's calls at each iteration (write and
end of iteration: what the simulation waits for) and when each iteration ended, each
writer's report how much of the buffer was in use. Each setup runs with each compute phase
given by --steps: with a short one the core cannot keep up with ParaView's start and its
renders for the whole run; with a longer one it can, after its first second.

    bench/paraview/run_cost.py <build> [--runs N] [--iterations N] [--steps N...] [--out DIR]

<build> is a build configured with ParaView found (scripts/test_paraview.sh or
scripts/demo_paraview.sh make one: build/). Needs Xvfb; writes DIR/paraview_cost.md
(default bench/results) and prints it. Environment: MPIRUN (mpirun), MPIRUN_FLAGS
(--oversubscribe).
"""
import argparse
import ctypes
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


def one_run(build, every, iterations, display, buffer, steps):
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
            str(steps)]
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
        per_client = [c["iteration_times"]["write_seconds"] for c in report["clients"]]
        calls = [t for c in per_client for t in c]
        # The second half of each client's iterations: by then the core has started ParaView
        # and the buffer's pages under the backlog's high-water mark are mapped.
        later = [t for c in per_client for t in c[len(c) // 2:]]
        peak = max(max(w["iterations"]["buffer_in_use"] or [0]) for w in report["writers"]
                   if w["iterations"])
        ends = [c["iteration_times"]["ended"] for c in report["clients"]]
        loop = max(e[-1] for e in ends) - min(e[0] for e in ends)
        block = report["clients"][0]["bytes_written"] // max(report["clients"][0]["iterations"], 1)
        return calls, later, loop, peak, block
    finally:
        shutil.rmtree(work, ignore_errors=True)


def copy_alone(block, span, rounds=200):
    """The control for the call times: the median time of a copy of `block` bytes from a source
    just written (as the simulation's array) into destinations that move on by one block each
    round, round-robin over `span` bytes (as the client's blocks over the part of the buffer in
    use), on the client's processor, with nothing else of Sidecore's."""
    span = max(span, block)
    source = (ctypes.c_char * block)()
    target = (ctypes.c_char * (span + block))()
    ctypes.memset(target, 1, len(target))  # mapped: no page fault in the copies
    at, times = 0, []
    affinity = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(affinity)})
    try:
        for i in range(rounds):
            ctypes.memset(source, i & 0xff, block)
            start = time.perf_counter()
            ctypes.memmove(ctypes.addressof(target) + at, source, block)
            times.append(time.perf_counter() - start)
            at = at + block if at + 2 * block <= span else 0
    finally:
        os.sched_setaffinity(0, affinity)
    return statistics.median(times)


def p99(values):
    return sorted(values)[int(0.99 * (len(values) - 1))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--buffer", type=int, default=64 << 20, help="shared buffer bytes")
    ap.add_argument("--steps", type=int, nargs="+", default=[100, 300],
                    help="diffusion steps per iteration, one table row group each (100: about "
                         "3 ms of computation here, 300: about 10 ms)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    server, display = xvfb()
    load = os.getloadavg()[0]
    groups = [(steps, label, every) for steps in args.steps for label, every in SETUPS]
    samples = {(steps, label): {"calls": [], "later": [], "loop": [], "peak": []}
               for steps, label, _ in groups}
    try:
        for _ in range(args.runs):
            for steps, label, every in groups:
                calls, later, loop, peak, block = one_run(build, every, args.iterations,
                                                          display, args.buffer, steps)
                sample = samples[(steps, label)]
                sample["calls"].append(calls)
                sample["later"].append(later)
                sample["loop"].append(loop)
                sample["peak"].append(peak)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait()
    copies = {key: copy_alone(block, int(statistics.median(sample["peak"])))
              for key, sample in samples.items()}

    def per_run(key, f, which="calls"):
        return statistics.median(f(run) for run in samples[key][which])

    lines = [
        "# What a ParaView pipeline on the dedicated core costs the simulation",
        "",
        f"`bench/paraview/run_cost.py`: the heat diffusion of `examples/heat_insitu.c`, "
        f"{args.iterations} iterations on 1 client and 1 dedicated core (`mpirun -np 2` on "
        f"{os.cpu_count()} cores), a shared buffer of {args.buffer >> 20} MiB, HDF5 store, with "
        "`examples/paraview/heat_slice.py` (a slice, a 640 x 360 picture and a VTK extract) at "
        f"the frequency given; {args.runs} runs per setup, alternated. Per iteration and "
        "client: the time in Sidecore's calls (write + end of iteration), from the run report "
        "(`SIDECORE_WRITE_TIMES=1`). Each figure is the median over runs of a per-run "
        "statistic over every client's iterations (*second half*: over the second half of "
        "each client's iterations); the loop is from the first client's first iteration end "
        "to the last one's last; the buffer's peak is the most the writer found in use when "
        "it began to store an iteration. *Copy alone*: the control, a plain copy of one "
        f"block ({block} bytes) on the client's processor into destinations round-robin over "
        "that peak, as the client's blocks move over the buffer (median of 200, after the runs).",
        "",
        "Between hand-overs the client computes the number of diffusion steps given (the loop "
        "time over the iterations gives the time per iteration).",
        "",
        "| steps | setup | median call time (us) | 99th percentile (us) | slowest (ms) | "
        "loop (s) | median / store only | second half: median (us) | second half: 99th pct "
        "(us) | second half: median / store only | buffer in use, peak (MiB) | copy alone "
        "(us) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for steps, label, _ in groups:
        key, base = (steps, label), (steps, SETUPS[0][0])
        median = per_run(key, statistics.median)
        later = per_run(key, statistics.median, "later")
        loop = statistics.median(samples[key]["loop"])
        peak = statistics.median(samples[key]["peak"]) / (1 << 20)
        lines.append(
            f"| {steps} | {label} | {median * 1e6:.1f} | {per_run(key, p99) * 1e6:.1f} | "
            f"{per_run(key, max) * 1e3:.2f} | {loop:.2f} | "
            f"{median / per_run(base, statistics.median):.2f} | {later * 1e6:.1f} | "
            f"{per_run(key, p99, 'later') * 1e6:.1f} | "
            f"{later / per_run(base, statistics.median, 'later'):.2f} | {peak:.1f} | "
            f"{copies[key] * 1e6:.1f} |")
    lines += ["", f"Load average before the runs: {load:.2f}.", "",
              "What the figures say, and the runs before this one: bench/README.md, \"What a "
              "ParaView pipeline costs the simulation\".", ""]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "paraview_cost.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
