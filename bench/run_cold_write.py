#!/usr/bin/env python3
"""Where a small write after a compute phase spends its time (bench/cold_write.c): the pages
damaris_write + damaris_end_iteration touch (or the zero-copy calls: damaris_alloc, commit,
clear, end_iteration), their time after a compute phase beside pointer chases through as many
pages and as many lines of plain memory after the same compute phase, and the same hand-over
back to back.

Usage: bench/run_cold_write.py [options] NAME=BUILD[,VAR=VALUE...] ...
  NAME=BUILD   a configuration: a build with bench/sidecore_cold_write, and the environment of
               its processes (e.g. before=build,LD_LIBRARY_PATH=/tmp/old-library); a bare
               BUILD is the configuration "this build"
  --runs N     separate runs (processes) per configuration and pause (5); the configurations
               and the pauses take turns, the order rotating run by run
  --iterations rounds per run (10)
  --pauses     compute phases in microseconds ("1000 100000")
  --setups     the modes, among dedicated (a dedicated core, np 2), thread (a background
               thread, np 1), nodes (a dedicated node, np 2) and sync (synchronous, np 1), each
               with its bench/micro_<mode>.xml and an 8-byte field ("dedicated")
  --apis       the hand-overs, among write (damaris_write + damaris_end_iteration) and alloc
               (damaris_alloc, the 8 bytes copied in, damaris_commit, damaris_clear,
               damaris_end_iteration) ("write")
  --quick      1 run, 3 rounds, pauses of 1 and 20 ms, dedicated and thread, both apis: checks
               the harness
  --lines      also trace one hand-over with a dedicated core under valgrind's lackey (every
               instruction fetch, load and store) and count the distinct cache lines and pages
               it accesses, by mapping (about a minute per configuration and api; --quick
               traces the write); needs valgrind
  --out DIR    where cold_write.md and cold_write.json go (bench/results)
Environment: MPIRUN (mpirun), MPIRUN_FLAGS (--oversubscribe).
"""
import argparse
import bisect
import datetime
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# setup -> (configuration of bench/, ranks, environment of the job)
SETUPS = {"dedicated": ("micro_dedicated.xml", 2, {}), "thread": ("micro_thread.xml", 1, {}),
          "nodes": ("micro_nodes.xml", 2, {"SIDECORE_RANKS_PER_NODE": "1"}),
          "sync": ("micro_sync.xml", 1, {})}
MEASURES = [("write", "hand-over after the phase"), ("chase_pages", "chase, 1 line per page"),
            ("chase_lines", "chase, 64 lines per page"), ("write_hot", "hand-over, back to back")]


def parse_config(spec):
    """NAME=BUILD[,VAR=VALUE...] (or BUILD) -> (name, binary, {VAR: VALUE})."""
    head, *assignments = spec.split(",")
    name, equals, build = head.partition("=")
    if not equals:
        name, build = "this build", head
    env = {}
    for a in assignments:
        var, equals, value = a.partition("=")
        if not equals:
            sys.exit(f"run_cold_write.py: '{a}' in '{spec}' is not VAR=VALUE")
        env[var] = value
    binary = os.path.join(os.path.abspath(build), "bench", "sidecore_cold_write")
    if not os.access(binary, os.X_OK):
        sys.exit(f"run_cold_write.py: {binary} not found (build the target sidecore_cold_write)")
    return name, binary, env


def job(config, setup):
    """How a configuration's job starts in a setup: mpirun and its flags, the -x exports of the
    configuration's and the setup's variables, the job's environment, and its ranks."""
    _, ranks, setup_env = SETUPS[setup]
    extra = dict(setup_env, **config[2])
    exports = [flag for var in extra for flag in ("-x", var)]
    mpirun = [os.environ.get("MPIRUN", "mpirun"),
              *shlex.split(os.environ.get("MPIRUN_FLAGS", "--oversubscribe"))]
    env = dict(os.environ, SIDECORE_REPORT=os.environ.get("SIDECORE_REPORT", "off"), **extra)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return mpirun, exports, env, ranks


def run_once(config, setup, api, xml, pause, iterations, label):
    name, binary, _ = config
    mpirun, exports, env, ranks = job(config, setup)
    command = [*mpirun, *exports, "-np", str(ranks), binary, xml, "--api", api, "--pause-us",
               str(pause), "--iterations", str(iterations), "--label", label]
    # The first touches are named with a dedicated core only: with a background thread in the
    # process, that thread would fault on the pages made inaccessible as well.
    if setup == "dedicated":
        command.append("--name-pages")
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    lines = [line[5:] for line in done.stdout.splitlines() if line.startswith("COLD ")]
    if done.returncode != 0 or len(lines) != 1:
        sys.exit(f"run_cold_write.py: {' '.join(command)} failed (status {done.returncode}):\n"
                 f"{done.stdout}{done.stderr}")
    result = json.loads(lines[0])
    result["config"] = name
    result["setup"] = setup
    result.setdefault("api", api)  # a benchmark older than --api prints none
    return result


# cold_write.c --trace-lines stores to this address just before and just after the traced
# hand-over, as lackey prints it.
TRACE_MARKER = " S 3c0000000,8"
LINE, PAGE = 64, 4096


def mapping_names(maps_file):
    """/proc/<pid>/maps -> sorted [(low, high, name)]; name: the file's, " code" if executable."""
    regions = []
    for line in open(maps_file):
        fields = line.split()
        low, high = (int(x, 16) for x in fields[0].split("-"))
        path = fields[5] if len(fields) > 5 else ""
        if not path:
            # Valgrind maps the program's heap and anonymous memory executable: no " code".
            regions.append((low, high, "anonymous (heap, stack)"))
            continue
        name = re.sub(r"\.so[.\d]*$", ".so", os.path.basename(path)) if path[0] == "/" else path
        if name.startswith("sidecore-"):
            name = "shared segment (ring, buffer)"
        regions.append((low, high, name + (" code" if "x" in fields[1] else "")))
    return sorted(regions)


def count_lines(trace_file, regions):
    """Distinct lines and pages of a lackey trace, by mapping; the markers left out."""
    starts = [r[0] for r in regions]
    lines, pages = {}, {}
    accesses = instructions = 0
    for row in open(trace_file):
        fields = row.split()
        if len(fields) != 2 or row.rstrip("\n") == TRACE_MARKER:
            continue
        address, _, size = fields[1].partition(",")
        address, size = int(address, 16), int(size or 1)
        accesses += 1
        instructions += fields[0] == "I"
        k = bisect.bisect_right(starts, address) - 1
        name = regions[k][2] if k >= 0 and address < regions[k][1] else "unmapped"
        for line in range(address // LINE, (address + max(size, 1) - 1) // LINE + 1):
            lines.setdefault(line, name)
        pages.setdefault(address // PAGE, name)
    by = {}
    for table, key in ((lines, "lines"), (pages, "pages")):
        for name in table.values():
            by.setdefault(name, {"lines": 0, "pages": 0})[key] += 1
    return {"accesses": accesses, "instructions": instructions, "lines": len(lines),
            "pages": len(pages), "by_mapping": by}


def trace_lines(config, api, xml):
    """One hand-over with a dedicated core, every access traced by lackey (rank 0, the
    client; its dedicated core runs untraced): distinct lines and pages by mapping."""
    name, binary, _ = config
    mpirun, exports, env, ranks = job(config, "dedicated")
    with tempfile.TemporaryDirectory(prefix="sidecore-lines-") as work:
        maps, trace = os.path.join(work, "maps"), os.path.join(work, "trace")
        arguments = [binary, xml, "--api", api, "--trace-lines", maps]
        # sed keeps what lies between the two marker stores (the whole run is ~10^8 accesses).
        traced = (f"valgrind --tool=lackey --trace-mem=yes --log-fd=9 "
                  f"{' '.join(shlex.quote(a) for a in arguments)} 9>&1 >/dev/null | "
                  f"sed -n '/^{TRACE_MARKER}$/,/^{TRACE_MARKER}$/p' > {shlex.quote(trace)}")
        command = [*mpirun, *exports, "-np", "1", "sh", "-c", traced, ":", *exports,
                   "-np", str(ranks - 1), *arguments]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
        markers = sum(1 for row in open(trace) if row.rstrip("\n") == TRACE_MARKER) \
            if os.path.exists(trace) else 0
        if done.returncode != 0 or markers != 2:
            sys.exit(f"run_cold_write.py: the traced hand-over failed (status {done.returncode}, "
                     f"{markers} of 2 markers): {' '.join(command)}\n{done.stdout}{done.stderr}")
        result = count_lines(trace, mapping_names(maps))
    result.update(config=name, api=api)
    return result


def lines_table(traces, configs, apis):
    """Mappings down, (api, configuration) across: lines / pages."""
    columns = [(api, c["name"]) for api in apis for c in configs]
    names = sorted({n for t in traces for n in t["by_mapping"]},
                   key=lambda n: -max(t["by_mapping"].get(n, {"lines": 0})["lines"]
                                      for t in traces))
    found = {(t["api"], t["config"]): t for t in traces}
    rows = ["| mapping | " + " | ".join(f"{api}, {name}" for api, name in columns) + " |",
            "|---|" + "---|" * len(columns)]
    for n in names:
        cells = []
        for key in columns:
            c = found[key]["by_mapping"].get(n, {"lines": 0, "pages": 0})
            cells.append(f"{c['lines']} / {c['pages']}")
        rows.append(f"| {n} | " + " | ".join(cells) + " |")
    rows.append("| **all** | " + " | ".join(
        f"**{found[k]['lines']} / {found[k]['pages']}**" for k in columns) + " |")
    rows.append("| instructions executed | " + " | ".join(
        str(found[k]["instructions"]) for k in columns) + " |")
    return rows


def spread(values, scale=1e-3, digits=2):
    values = [v * scale for v in values]
    return (f"{statistics.median(values):.{digits}f} "
            f"({min(values):.{digits}f}-{max(values):.{digits}f})")


def mappings_table(runs):
    """Pages by mapping, median over runs, written and baseline."""
    names = sorted({n for r in runs for part in ("counted", "baseline")
                    for n in r[part]["by_mapping"]})
    rows = ["| mapping | pages touched by the hand-over | by reading smaps alone (baseline) |",
            "|---|---|---|"]
    for n in names:
        got = [r["counted"]["by_mapping"].get(n, 0) for r in runs]
        base = [r["baseline"]["by_mapping"].get(n, 0) for r in runs]
        rows.append(f"| {n} | {statistics.median(got):g} | {statistics.median(base):g} |")
    got = [r["counted"]["total"] for r in runs]
    base = [r["baseline"]["total"] for r in runs]
    rows.append(f"| **all** | **{statistics.median(got):g}** | {statistics.median(base):g} |")
    return rows


def symbolize(library, offsets):
    """Function names of code offsets in library (addr2line, binutils); "?" without it."""
    if not offsets or not shutil.which("addr2line"):
        return {o: "?" for o in offsets}
    done = subprocess.run(["addr2line", "-f", "-C", "-e", library, *offsets],
                          capture_output=True, text=True, check=False)
    lines = done.stdout.splitlines()
    return {o: (lines[2 * i] if 2 * i < len(lines) else "?") for i, o in enumerate(offsets)}


def touches_table(run):
    """Each page of the heap and of libsidecore one hand-over touched first, and from where."""
    touches = run.get("first_touches", [])
    where = symbolize(run.get("library", ""),
                      sorted({t["ip"].split("+", 1)[1] for t in touches if "+" in t["ip"]}))
    rows = ["| # | mapping | page | access | by (function) |", "|---|---|---|---|---|"]
    for i, t in enumerate(touches, 1):
        name = where.get(t["ip"].split("+", 1)[1], "?") if "+" in t["ip"] else t["ip"]
        if len(name) > 90:
            name = name[:87] + "..."
        thread = " (another thread)" if t.get("other_thread") else ""
        rows.append(f"| {i} | {t['mapping']} | {t['page']} | "
                    f"{'write' if t['write'] else 'read'} | `{name}`{thread} |")
    heap = sum(1 for t in touches if t["mapping"] == "[heap]")
    code = sum(1 for t in touches if t["mapping"].endswith(" code"))
    rows += ["", f"{len(touches)} pages: {heap} of the heap, {code} of libsidecore's code, "
             f"{len(touches) - heap - code} of its data."]
    return rows


def report(meta, runs, traces):
    out = ["# Sidecore: a small write after a compute phase, against pointer chases", "",
           f"- Command: `{meta['command']}` ({meta['seconds']:.0f} s), {meta['date']}",
           f"- Machine: {meta['machine']}; 1-min load average: start {meta['load_before']}, "
           f"end {meta['load_after']}",
           "- Configurations: " + "; ".join(
               f"`{c['name']}` = {c['binary']}" + (f" with {c['env']}" if c["env"] else "")
               for c in meta["configs"]),
           f"- {meta['runs']} runs per configuration and pause, {meta['iterations']} rounds per "
           "run; one client and a store that discards the data (bench/micro_<setup>.xml, "
           "8-byte field), with a dedicated core (dedicated), a background thread (thread), a "
           "dedicated node (nodes) or none (sync). The hand-over (api): write = damaris_write + "
           "damaris_end_iteration; alloc = damaris_alloc, the 8 bytes copied into the block, "
           "damaris_commit, damaris_clear, damaris_end_iteration (the zero-copy path: its calls "
           "do the same work whatever the block's size).", "",
           "Microseconds: median over runs of each run's median over its rounds, (range over "
           "runs). Each measurement follows its own compute phase (a busy loop), except "
           "*hand-over, back to back*, the second after the measured one (the first "
           "may do cold work the library leaves to it, a system call made only now and "
           "then). The chases "
           "go through as many pages of plain memory as the hand-over touched (one line each), or "
           "as many lines 64 to a page; their nodes were last followed one round earlier, as "
           "the library's tables were last used one round earlier.", "",
           "| pause | setup | api | config | pages | " +
           " | ".join(label for _, label in MEASURES) + " | hand-over / chase of pages |",
           "|---|---|---|---|---|" + "---|" * len(MEASURES) + "---|"]
    apis = meta.get("apis", ["write"])
    for pause in meta["pauses"]:
        for setup in meta["setups"]:
            for api in apis:
                for config in meta["configs"]:
                    mine = [r for r in runs if r["pause_us"] == pause and r["setup"] == setup
                            and r.get("api", "write") == api and r["config"] == config["name"]]
                    cells = [spread([r["ns"][key] for r in mine]) for key, _ in MEASURES]
                    ratio = spread([r["ns"]["write"] / max(1, r["ns"]["chase_pages"])
                                    for r in mine], 1)
                    pages = spread([r["pages"] for r in mine], 1, 0)
                    out.append(f"| {pause / 1000:g} ms | {setup} | {api} | {config['name']} | "
                               f"{pages} | " + " | ".join(cells) + f" | {ratio} |")
    if traces:
        traced_apis = [a for a in apis if any(t["api"] == a for t in traces)]
        out += ["", "## Lines and pages of one hand-over, traced: dedicated", "",
                "Every instruction fetch, load and store of one hand-over (after four others), "
                "traced by valgrind's lackey on the client and counted as distinct 64-byte lines "
                "and 4 KiB pages, by mapping: lines / pages. Nothing is timed; the count does "
                "not depend on the machine's load. Under valgrind the heap is an anonymous "
                "mapping, like the stack; the benchmark's two clock reads are counted too.", ""]
        out += lines_table(traces, meta["configs"], traced_apis)
    longest = max(meta["pauses"])
    for setup in meta["setups"]:
        for api in apis:
            for config in meta["configs"]:
                out += ["", f"## Pages accessed by one hand-over: {setup}, {api}, "
                        f"{config['name']}", "",
                    f"After a compute phase of {longest / 1000:g} ms, accessed bits cleared "
                    "through /proc/self/clear_refs just before, read from /proc/self/smaps just "
                    "after; median over runs. The baseline is what clearing and reading touch "
                    "with nothing between them: part of it is touched by the hand-over as well.",
                    ""]
                mine = [r for r in runs if r["pause_us"] == longest and r["setup"] == setup and
                        r.get("api", "write") == api and r["config"] == config["name"]]
                out += mappings_table(mine)
                named = [r for r in mine if "first_touches" in r]
                if named:
                    out += ["", f"### Named: the heap's and libsidecore's pages, in the order "
                            "first touched (first run)", "",
                            "One more hand-over after the same compute phase, with the heap and "
                            "libsidecore's mappings made inaccessible: each page's first access "
                            "faulted and was recorded with the function that made it, then "
                            "allowed. Pages are counted from the start of the heap, or of the "
                            "library's first mapping.", ""]
                    out += touches_table(named[0])
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("configs", nargs="+", metavar="NAME=BUILD[,VAR=VALUE...]")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--pauses", default="1000 100000")
    ap.add_argument("--setups", default="dedicated")
    ap.add_argument("--apis", default="write")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--lines", action="store_true")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    if args.quick:
        args.runs, args.iterations, args.pauses = 1, 3, "1000 20000"
        args.setups, args.apis = "dedicated thread", "write alloc"
    if args.lines and not shutil.which("valgrind"):
        sys.exit("run_cold_write.py: --lines needs valgrind (Debian: apt-get install valgrind)")
    pauses = [int(p) for p in args.pauses.split()]
    setups = args.setups.split()
    apis = args.apis.split()
    if not apis or any(a not in ("write", "alloc") for a in apis):
        sys.exit(f"run_cold_write.py: --apis '{args.apis}': give write and/or alloc")
    unknown = [s for s in setups if s not in SETUPS]
    if unknown:
        sys.exit(f"run_cold_write.py: no setup {', '.join(unknown)} (setups: {', '.join(SETUPS)})")
    configs = [parse_config(spec) for spec in args.configs]
    if len({name for name, _, _ in configs}) != len(configs):
        sys.exit("run_cold_write.py: two configurations have the same name")
    load_before = " ".join(open("/proc/loadavg").read().split()[:3])
    started = datetime.datetime.now()
    runs = []
    with tempfile.TemporaryDirectory(prefix="sidecore-cold-") as work:
        xmls = {}
        for setup in setups:
            with open(os.path.join(HERE, SETUPS[setup][0])) as f:
                text = f.read().replace("@BYTES@", "8").replace("@OUTPUT@", work)
            xmls[setup] = os.path.join(work, f"cold_{setup}.xml")
            with open(xmls[setup], "w") as f:
                f.write(text)
        for run in range(args.runs):
            order = pauses if run % 2 == 0 else pauses[::-1]
            for k, pause in enumerate(order):
                for setup in setups:
                    for api in apis:
                        shift = (run + k) % len(configs)
                        for config in configs[shift:] + configs[:shift]:
                            print(f"run_cold_write.py: run {run + 1}/{args.runs}, {setup}, "
                                  f"{api}, {config[0]}, pause {pause} us", file=sys.stderr)
                            runs.append(run_once(config, setup, api, xmls[setup], pause,
                                                 args.iterations, f"run{run + 1}"))
        traces = []
        if args.lines:
            if "dedicated" not in xmls:
                with open(os.path.join(HERE, SETUPS["dedicated"][0])) as f:
                    text = f.read().replace("@BYTES@", "8").replace("@OUTPUT@", work)
                xmls["dedicated"] = os.path.join(work, "cold_dedicated.xml")
                with open(xmls["dedicated"], "w") as f:
                    f.write(text)
            for api in (["write"] if args.quick else apis):
                for config in configs:
                    print(f"run_cold_write.py: tracing one hand-over, {api}, {config[0]}",
                          file=sys.stderr)
                    traces.append(trace_lines(config, api, xmls["dedicated"]))
    meta = {"command": "bench/run_cold_write.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
            "date": started.isoformat(timespec="seconds"),
            "seconds": (datetime.datetime.now() - started).total_seconds(),
            "machine": f"nproc={os.cpu_count()}, CPU \"" + next(
                (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                 if line.startswith("model name")), "unknown") + "\"",
            "load_before": load_before,
            "load_after": " ".join(open("/proc/loadavg").read().split()[:3]),
            "runs": args.runs, "iterations": args.iterations, "pauses": pauses,
            "setups": setups, "apis": apis,
            "configs": [{"name": name, "binary": binary,
                         "env": ",".join(f"{k}={v}" for k, v in env.items())}
                        for name, binary, env in configs],
            "quick": args.quick}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "cold_write.json"), "w") as f:
        json.dump({"meta": meta, "runs": runs, "lines": traces}, f, indent=1)
    with open(os.path.join(args.out, "cold_write.md"), "w") as f:
        f.write(report(meta, runs, traces))
    print(f"run_cold_write.py: {args.out}/cold_write.md", file=sys.stderr)


if __name__ == "__main__":
    main()
