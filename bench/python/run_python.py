#!/usr/bin/env python3
"""Python costs side by side, in one run (bench/python/README.md):

1. the Python client's steady write (1, 16, 64 MiB) against micro_write.c's damaris_write of
   the same bytes on the same configuration, C and Python runs alternating, and its alloc +
   commit + release against damaris_alloc + damaris_commit + damaris_clear called in the same
   process (c_alloc_cycle.c), iterations alternating;
2. what a script costs the dedicated core per iteration (empty Sidecore- and Damaris-style
   scripts), from the core's own timing of each call;
3. a NumPy sum over 64 MiB of blocks in a script (zero-copy views of the shared buffer) against
   the same sum in a plain Python process.

Usage: run_python.py BUILD [--reps N] [--quick] [--out DIR] [--python PYTHON]
Environment: MPIRUN (mpirun), MPIRUN_FLAGS (--oversubscribe).
BUILD is a build with SIDECORE_BUILD_PYTHON=ON and its venv (scripts/python_env.sh); --python
names another Python with NumPy for the clients (BUILD/venv/bin/python by default)."""
import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MIB = 1 << 20


# A command prefix that runs what follows with a /dev/shm of its own, a tmpfs mounted with
# huge=within_size (2 MiB pages for the shared buffer; docs/design.md), in a private mount
# namespace: as root only, where unshare exists.
HUGE_SHM = ["unshare", "-m", "sh", "-c",
            'mount -t tmpfs -o size=50%,huge=within_size tmpfs /dev/shm && exec "$@"', "sh"]


def can_mount_huge_shm():
    return os.geteuid() == 0 and subprocess.run(
        HUGE_SHM + ["true"], capture_output=True).returncode == 0


def job(build, np_, argv, env=None, prefix=()):
    # Benchmarks leave no run report behind (docs/observability.md).
    environment = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                       SIDECORE_REPORT="off", PYTHONPATH=os.path.join(build, "python"),
                       **(env or {}))
    cmd = list(prefix) + [os.environ.get("MPIRUN", "mpirun")] + shlex.split(
        os.environ.get("MPIRUN_FLAGS", "--oversubscribe")) + ["-np", str(np_)] + argv
    result = subprocess.run(cmd, env=environment, capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{result.stdout}\n{result.stderr}")
    return result.stdout + result.stderr


def micro_lines(output):
    return {d["phase"]: d for d in (json.loads(line[6:]) for line in output.splitlines()
                                    if line.startswith("MICRO "))}


def load():
    return os.getloadavg()[0]


def client_comparison(build, python, sizes, reps, work):
    rows = []
    for size in sizes:
        with open(os.path.join(ROOT, "bench", "micro_dedicated.xml")) as f:
            text = f.read().replace("@BYTES@", str(size)).replace("@OUTPUT@", work + "/")
        config = os.path.join(work, f"micro_{size}.xml")
        with open(config, "w") as f:
            f.write(text)
        iterations = max(20, min(100, (256 * MIB) // size))
        pause = str(int(size * 0.12 / 1000) + 200)
        c_cmd = [os.path.join(build, "bench", "sidecore_micro_write"), config, "--phases",
                 "write", "--iterations", str(iterations), "--pause-us", pause]
        # alloc: the C calls alternate with the Python ones in the Python process (paired).
        py_cmd = [python, os.path.join(HERE, "client_bench.py"), config, "--iterations",
                  str(iterations), "--pause-us", pause, "--c-cycle",
                  os.path.join(build, "bench", "libsidecore_bench_alloc_cycle.so")]
        samples = []
        for rep in range(reps):
            runs = [("c", c_cmd), ("python", py_cmd)]
            if rep % 2:
                runs.reverse()
            got = {"load": load()}
            for name, cmd in runs:
                got[name] = micro_lines(job(build, 2, cmd))
            samples.append(got)
        def medians(who, phase, key):
            return [s[who][phase]["steady"][key]["median"] for s in samples]
        c_write, py_write = medians("c", "write", "write"), medians("python", "write", "write")
        def alloc_medians(key):
            return [s["python"]["alloc"][key]["alloc_commit_clear"]["median"] for s in samples]
        c_alloc, py_alloc = alloc_medians("paired_c_steady"), alloc_medians("steady")
        c_calls, py_calls = alloc_medians("paired_c_calls"), alloc_medians("calls")
        rows.append({
            "bytes": size, "iterations": iterations, "reps": reps,
            "loads": [s["load"] for s in samples],
            "c_write_ns": c_write, "python_write_ns": py_write,
            "write_ratio": statistics.median(p / c for p, c in zip(py_write, c_write)),
            "memcpy_ns": medians("c", "write", "memcpy_warm"),
            "c_alloc_commit_clear_ns": c_alloc, "python_alloc_commit_release_ns": py_alloc,
            "alloc_extra_us": statistics.median((p - c) / 1000 for p, c in zip(py_alloc, c_alloc)),
            "c_calls_ns": c_calls, "python_calls_ns": py_calls,
            "calls_extra_us": statistics.median((p - c) / 1000 for p, c in zip(py_calls, c_calls)),
        })
        print(f"{size // MIB} MiB: write Python/C {rows[-1]['write_ratio']:.3f}, "
              f"alloc+commit+release Python - C {rows[-1]['alloc_extra_us']:+.2f} us "
              f"(after a compute phase), {rows[-1]['calls_extra_us']:+.2f} us (calls)",
              flush=True)
    return rows


SCRIPT_TIMING = re.compile(r"script '(\w+)': (\d+) call\(s\), ([0-9.e+-]+) s in them "
                           r"\(the first ([0-9.e+-]+) us, the others ([0-9.e+-]+) us each\)")


def script_costs(build, python, reps, work, block_bytes, blocks, iterations):
    empty = f'<pyscript name="empty" file="{HERE}/empty_script.py" language="python"/>'
    # (case, script name, element, bytes per block, the client's compute phase in us, whether
    # /dev/shm gives 2 MiB pages)
    sum_element = f'<pyscript name="sum" file="{HERE}/sum_script.py" language="python"/>'
    cases = [
        ("empty, 4 x 4 KiB blocks, 200 us compute phases", "empty", empty, 4096, 200),
        ("empty, 4 x 4 KiB blocks", "empty", empty, 4096, 20000),
        ("every block's view made, 4 x 4 KiB blocks", "touch",
         f'<pyscript name="touch" file="{HERE}/touch_script.py" language="python"/>', 4096,
         20000),
        (f"empty, 4 x {block_bytes // MIB} MiB blocks", "empty", empty, block_bytes, 20000),
        (f"empty Damaris-style, 4 x {block_bytes // MIB} MiB blocks", "empty_damaris",
         f'<pyscript name="empty_damaris" file="{HERE}/empty_damaris_script.py" '
         'language="python"/>', block_bytes, 20000),
        (f"NumPy sum, 4 x {block_bytes // MIB} MiB blocks", "sum", sum_element, block_bytes,
         20000),
    ]
    cases = [case + (False,) for case in cases]
    if can_mount_huge_shm():
        cases.append((f"NumPy sum, 4 x {block_bytes // MIB} MiB blocks, /dev/shm with 2 MiB "
                      "pages", "sum", sum_element, block_bytes, 20000, True))
    with open(os.path.join(HERE, "script_bench.xml")) as f:
        template = f.read()
    per_call = {case[0]: [] for case in cases}
    script_sum_ns, plain_sum_ns, huge_sum_ns = [], [], []
    paired = {False: [], True: []}  # per iteration: the views' sum / the own arrays' sum
    for rep in range(reps):
        for case, name, element, size, pause, huge in cases:
            text = (template.replace("@BLOCKS@", str(blocks))
                    .replace("@BUFFER@", str(size * blocks * 3 + 16 * MIB))
                    .replace("@COUNT@", str(size // 8))
                    .replace("@SCRIPT_NAME@", name).replace("@SCRIPT@", element))
            config = os.path.join(work, f"script_{name}.xml")
            with open(config, "w") as f:
                f.write(text)
            out = os.path.join(work, f"sum_{rep}.jsonl")
            output = job(build, 2, [python, os.path.join(HERE, "client_bench.py"), config,
                                    "--phases", "write", "--iterations", str(iterations),
                                    "--blocks", str(blocks), "--pause-us", str(pause)],
                         {"SIDECORE_LOG_LEVEL": "info", "SIDECORE_BENCH_OUT": out},
                         HUGE_SHM if huge else ())
            timing = SCRIPT_TIMING.search(output)
            if not timing or timing.group(1) != name:
                sys.exit(f"no timing of script '{name}' in the output:\n{output}")
            per_call[case].append(float(timing.group(5)))
            if name == "sum":
                with open(out) as f:
                    # The first calls also fault in the core the pages of heap ranges used
                    # for the first time (the buffer holds 3 iterations): steady ones only.
                    steady = [json.loads(line) for line in f][3:]
                (huge_sum_ns if huge else script_sum_ns).extend(d["ns"] for d in steady)
                paired[huge].extend(d["ns"] / d["own_ns"] for d in steady)
                os.remove(out)
        plain = subprocess.run([python, os.path.join(HERE, "plain_sum.py"), str(block_bytes),
                                str(blocks), str(iterations)], capture_output=True, text=True,
                               check=True).stdout
        plain_sum_ns += [json.loads(line)["ns"] for line in plain.splitlines()][3:]
    return {
        "block_bytes": block_bytes, "blocks": blocks, "iterations": iterations, "reps": reps,
        "per_call_us": per_call,
        "script_sum_ns": script_sum_ns, "plain_sum_ns": plain_sum_ns,
        "sum_ratio": statistics.median(script_sum_ns) / statistics.median(plain_sum_ns),
        "huge_pages_sum_ns": huge_sum_ns,
        "paired_ratio": statistics.median(paired[False]),
        "huge_pages_paired_ratio": statistics.median(paired[True]) if paired[True] else None,
        "huge_pages_sum_ratio": (statistics.median(huge_sum_ns) /
                                 statistics.median(plain_sum_ns) if huge_sum_ns else None),
    }


def report(out, client, scripts, quick):
    us = lambda ns: f"{ns / 1000:.1f}"  # noqa: E731
    lines = ["# Python costs, side by side", "",
             f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} by "
             "`bench/python/run_python.py` on this project's 2-core test machine"
             + (" (--quick: numbers meaningless)" if quick else "") + ". One client and one "
             "dedicated core (`null` store), C and Python runs alternating; medians of each "
             "run's steady iterations, then the median over runs.", "",
             "## Client: `sidecore.Session.write` / `alloc` against the C calls", "",
             "| bytes | C damaris_write (us) | Python write (us) | Python / C | memcpy (us) | "
             "C alloc+commit+clear (us) | Python alloc+commit+release (us) | Python - C (us) | "
             "calls: C (us) | calls: Python (us) | calls: Python - C (us) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in client:
        lines.append(
            f"| {r['bytes'] // MIB} MiB | {us(statistics.median(r['c_write_ns']))} | "
            f"{us(statistics.median(r['python_write_ns']))} | {r['write_ratio']:.3f} | "
            f"{us(statistics.median(r['memcpy_ns']))} | "
            f"{us(statistics.median(r['c_alloc_commit_clear_ns']))} | "
            f"{us(statistics.median(r['python_alloc_commit_release_ns']))} | "
            f"{r['alloc_extra_us']:+.2f} | {us(statistics.median(r['c_calls_ns']))} | "
            f"{us(statistics.median(r['python_calls_ns']))} | {r['calls_extra_us']:+.2f} |")
    lines += ["", "alloc+commit+release: each iteration fills the whole block (not counted) "
              "and computes before the next, as micro_write.c does; calls: one cache line "
              "filled, 200 us between iterations, what the calls themselves cost. The C calls "
              "of these columns run in the Python client's own process (`c_alloc_cycle.c` "
              "through ctypes, timed in C), alternating with the Python calls iteration by "
              "iteration: both see the same caches and the same moment of the machine.", "",
              "Targets: write of >= 1 MiB at most 1.2x the C client's; alloc/commit at most "
              "5 us above the C calls.", "",
              "## Scripts on the dedicated core", "",
              "One client writes 4 blocks per iteration and computes 20 ms between iterations "
              "(unless said otherwise); "
              "the core's own timing of its calls, from taking the GIL to giving it back, the "
              "mean of every call but the first (`SIDECORE_LOG_LEVEL=info`: `script 'x': N "
              "call(s), T s in them (the first F us, the others U us each)`).", "",
              "| script | us per call (median over runs) | each run |", "|---|---|---|"]
    for name, values in scripts["per_call_us"].items():
        if name.startswith("NumPy sum"):  # these calls also time their paired reference
            continue
        lines.append(f"| {name} | {statistics.median(values):.1f} | "
                     f"{', '.join(f'{v:.1f}' for v in values)} |")
    ms = lambda ns: f"{statistics.median(ns) / 1e6:.2f}"  # noqa: E731
    lines += ["", "Target: an empty script at most 50 us per iteration.", "",
              "The NumPy sum over 64 MiB of blocks (4 x 16 MiB), steady iterations (the first "
              "three also fault in heap pages used for the first time). Paired: each call also "
              "copies its blocks into NumPy arrays of its own and sums those, in the same "
              "process at the same moment; the column is the median of the per-call ratios.",
              "",
              "| where | median (ms) | samples | / plain process | / own arrays (paired) |",
              "|---|---|---|---|---|",
              f"| script, zero-copy views, /dev/shm with 4 KiB pages (this machine's default) | "
              f"{ms(scripts['script_sum_ns'])} | {len(scripts['script_sum_ns'])} | "
              f"{scripts['sum_ratio']:.3f} | {scripts['paired_ratio']:.3f} |"]
    if scripts.get("huge_pages_sum_ns"):
        lines.append(f"| script, zero-copy views, /dev/shm mounted huge=within_size (2 MiB "
                     f"pages) | {ms(scripts['huge_pages_sum_ns'])} | "
                     f"{len(scripts['huge_pages_sum_ns'])} | "
                     f"{scripts['huge_pages_sum_ratio']:.3f} | "
                     f"{scripts['huge_pages_paired_ratio']:.3f} |")
    lines += [f"| a plain Python process (`plain_sum.py`) | {ms(scripts['plain_sum_ns'])} | "
              f"{len(scripts['plain_sum_ns'])} | 1 | |", "",
              "Target: within 1.3x of the plain process. NumPy's own arrays are on transparent "
              "huge pages (NumPy asks for them); the shared buffer's pages are those /dev/shm "
              "gives: 4 KiB unless it is mounted with huge=within_size, as for the second row "
              "(a tmpfs of its own in a private mount namespace; run as root)."]
    with open(os.path.join(out, "python.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "python.json"), "w") as f:
        json.dump({"client": client, "scripts": scripts, "quick": quick}, f, indent=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    parser.add_argument("--python", help="the clients' Python, with NumPy "
                        "(default: BUILD/venv/bin/python)")
    parser.add_argument("--scripts-only", action="store_true",
                        help="only the scripts on the dedicated core; prints, writes nothing")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    python = args.python or os.path.join(build, "venv", "bin", "python")
    sizes = [MIB] if args.quick else [MIB, 16 * MIB, 64 * MIB]
    reps = 1 if args.quick else args.reps
    if args.scripts_only:
        with tempfile.TemporaryDirectory() as work:
            scripts = script_costs(build, python, reps, work, 16 * MIB, 4, 30)
        for name, values in scripts["per_call_us"].items():
            print(f"{name}: {statistics.median(values):.1f} us ({values})")
        print(f"NumPy sum, script / plain process: {scripts['sum_ratio']:.3f} "
              f"({statistics.median(scripts['script_sum_ns']) / 1e6:.2f} ms / "
              f"{statistics.median(scripts['plain_sum_ns']) / 1e6:.2f} ms)")
        print(f"paired with own arrays: {scripts['paired_ratio']:.3f}")
        if scripts["huge_pages_sum_ratio"]:
            print(f"with 2 MiB pages: {scripts['huge_pages_sum_ratio']:.3f}, paired "
                  f"{scripts['huge_pages_paired_ratio']:.3f}")
        return
    with tempfile.TemporaryDirectory() as work:
        client = client_comparison(build, python, sizes, reps, work)
        scripts = script_costs(build, python, reps, work, 16 * MIB, 4, 5 if args.quick else 30)
    os.makedirs(args.out, exist_ok=True)
    report(args.out, client, scripts, args.quick)
    print(open(os.path.join(args.out, "python.md")).read())


if __name__ == "__main__":
    main()
