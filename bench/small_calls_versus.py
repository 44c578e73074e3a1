#!/usr/bin/env python3
"""The small calls of two builds side by side: write of one int, end of iteration after 100
such writes, and an empty end of iteration, in synchronous mode (1 rank) and with a dedicated
core (2 ranks). Each round runs base, new and base again, in an order that rotates, so that a
quiet or busy minute of the machine falls on all three; each cell is the median over rounds of
each run's median, with the range over rounds. "base again / base" is the noise floor: the
same build against itself. With --instructions, callgrind also counts the instructions per
call of the synchronous calls (one process), which no neighbour on the machine can move.

    bench/small_calls_versus.py BASE_BUILD NEW_BUILD [--rounds 9] [--instructions] [--out F]

Both builds need bench/sidecore_micro_write (SIDECORE_BUILD_BENCH=ON, Release)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SETUPS = (("sync", 1, "micro_sync.xml"), ("dedicated", 2, "micro_dedicated.xml"))
FIGURES = (("small", "write", "write of one int (median per call)"),
           ("small", "end_iteration", "end_iteration after 100 writes"),
           ("empty", "end_iteration", "empty end_iteration"))


ENV = dict(os.environ, SIDECORE_REPORT="off", OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")


def make_config(setup, template, work):
    config = os.path.join(work, f"{setup}.xml")
    text = open(os.path.join(HERE, template)).read()
    open(config, "w").write(text.replace("@BYTES@", "4096").replace("@OUTPUT@", work))
    return config


def run(build, setup, np, template, work):
    config = make_config(setup, template, work)
    command = [os.environ.get("MPIRUN", "mpirun"), "-np", str(np),
               os.path.join(build, "bench", "sidecore_micro_write"), config, "--label", setup,
               "--phases", "small,empty", "--small-writes", "100000",
               "--small-per-iteration", "100", "--empty", "10000"]
    out = subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {' '.join(command)}\n{out.stderr}{out.stdout}")
    values = {}
    for line in out.stdout.splitlines():
        if line.startswith("MICRO "):
            record = json.loads(line[6:])
            for call, stats in record["steady"].items():
                values[(record["phase"], call)] = stats["median"]
    return values


def instructions(build, work):
    """Instructions per damaris_write of one int and per damaris_end_iteration (after 100
    writes; empty), synchronous mode, counted by callgrind (inclusive of everything called)."""
    config = make_config("sync", "micro_sync.xml", work)
    counts = {}
    for phase, calls in (("small", {"damaris_write_block": 20000, "damaris_end_iteration": 200}),
                         ("empty", {"damaris_end_iteration": 20000})):
        out_file = os.path.join(work, "callgrind.out")
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}",
                   os.path.join(build, "bench", "sidecore_micro_write"), config, "--label",
                   "sync", "--phases", phase, "--small-writes", "20000",
                   "--small-per-iteration", "100", "--empty", "20000"]
        subprocess.run(command, env=ENV, capture_output=True, check=True, timeout=1200)
        text = subprocess.run(["callgrind_annotate", "--inclusive=yes", out_file],
                              capture_output=True, text=True, check=True).stdout
        for function, n in calls.items():
            for line in text.splitlines():
                fields = line.split()
                if len(fields) >= 3 and fields[-2].endswith(f":{function}"):
                    counts[(phase, function)] = int(fields[0].replace(",", "")) / n
                    break
    return counts


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("base")
    p.add_argument("new")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--instructions", action="store_true",
                   help="also count instructions per call with callgrind (synchronous mode)")
    p.add_argument("--out")
    a = p.parse_args()
    samples = {}  # (build, setup, phase, call) -> [ns per round]
    names = ("base", "new", "base again")
    builds = {"base": a.base, "new": a.new, "base again": a.base}
    with tempfile.TemporaryDirectory() as work:
        for r in range(a.rounds):
            for name in names[r % 3:] + names[:r % 3]:
                for setup, np, template in SETUPS:
                    for key, value in run(builds[name], setup, np, template, work).items():
                        samples.setdefault((name, setup) + key, []).append(value)
            print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
        counted = {}
        if a.instructions:
            # Instruction counts do not vary from run to run: one build given twice (as the
            # test suite does) is counted once.
            by_build = {}
            for name in ("base", "new"):
                build = os.path.realpath(builds[name])
                if build not in by_build:
                    by_build[build] = instructions(builds[name], work)
                counted[name] = by_build[build]
    load = os.getloadavg()[0]
    lines = [f"{a.rounds} rounds, order rotating; 1-minute load average at the end {load:.2f}.",
             "Cells: median over rounds of each run's median (min - max over rounds).", "",
             "| setup | figure | base | new | base again | new/base | base again/base (noise) |",
             "|---|---|---|---|---|---|---|"]
    for setup, _, _ in SETUPS:
        for phase, call, label in FIGURES:
            cells = []
            for name in names:
                v = samples[(name, setup, phase, call)]
                cells.append((statistics.median(v), min(v), max(v)))
            lines.append(f"| {setup} | {label} | " +
                         " | ".join(f"{m:.0f} ns ({lo:.0f} - {hi:.0f})" for m, lo, hi in cells) +
                         f" | {cells[1][0] / cells[0][0]:.2f} | {cells[2][0] / cells[0][0]:.2f} |")
    if counted:
        lines += ["", "Instructions per call, synchronous mode (callgrind, inclusive):", "",
                  "| call | base | new | new/base |", "|---|---|---|---|"]
        for key, label in ((("small", "damaris_write_block"), "damaris_write of one int"),
                           (("small", "damaris_end_iteration"), "end_iteration after 100 writes"),
                           (("empty", "damaris_end_iteration"), "empty end_iteration")):
            b, n = counted["base"].get(key), counted["new"].get(key)
            if b and n:
                lines.append(f"| {label} | {b:.0f} | {n:.0f} | {n / b:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        open(a.out, "w").write(text)


if __name__ == "__main__":
    main()
