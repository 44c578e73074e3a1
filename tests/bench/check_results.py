#!/usr/bin/env python3
"""Checks what one benchmark script wrote in its quick mode (tests/bench/run_bench.sh): that
every part of the harness ran and that what it read back is right. No timing is judged: quick
runs are too short and the test machine too busy for the numbers to mean anything.

usage: check_results.py NAME WORK_DIR
"""
import json
import os
import re
import sys


class Failed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Failed(message)


def load(path):
    expect(os.path.isfile(path), f"{path} was not written")
    with open(path) as f:
        return json.load(f)


def text(path):
    expect(os.path.isfile(path), f"{path} was not written")
    with open(path) as f:
        content = f.read()
    expect(content.strip(), f"{path} is empty")
    return content


def table_rows(content, first_cell):
    """Rows of the markdown tables whose first cell starts with first_cell."""
    return [line for line in content.splitlines()
            if line.startswith("| ") and line[2:].startswith(first_cell)]


def micro(work):
    d = load(os.path.join(work, "micro", "micro.json"))
    expect(d["meta"]["quick"], "micro.json does not say quick mode")
    r = d["results"]
    setups = {row["setup"] for row in r["write"]}
    for setup in ("dedicated", "sync", "thread", "nodes", "hdf5", "thread-heap", "sync-heap",
                  "nodes-heap"):
        expect(setup in setups, f"no write results for the setup {setup}")
    for phase in ("alloc", "small", "empty"):
        expect({row["setup"] for row in r[phase]} == {"dedicated", "sync"},
               f"{phase} results: {[row['setup'] for row in r[phase]]}")
    stream = {row["setup"]: row for row in r["stream"]}
    expect(set(stream) == {"stream-wait-write", "stream-wait-alloc", "stream-skip-write",
                           "stream-wait-active-write", "stream-wait-active-alloc",
                           "stream-skip-active-write", "stream-wait-write-buffer9",
                           "stream-wait-active-write-buffer9"},
           f"stream runs: {sorted(stream)}")
    for name, row in stream.items():
        written = row["iterations_written"]
        # count_stored.py read every file back with h5py: size and iteration stamp.
        expect(not any(row["wrong_per_run"]), f"{name}: blocks with a wrong size or stamp")
        if "-wait-" in name:
            expect(min(row["stored_per_run"]) == written,
                   f"{name}: policy wait stored {row['stored_per_run']} of {written}")
        else:
            for stored, skipped in zip(row["stored_per_run"], row["skipped_per_run"]):
                expect(stored + skipped == written,
                       f"{name}: {stored} stored + {skipped} skipped != {written} written")
        # The server's summary at finalize was found in its log.
        expect(row["server_seconds_in_stores"] is not None and row["server_high_water"],
               f"{name}: the server's closing summary was not parsed (count_stored.py)")
    expect(stream["stream-wait-active-write"]["bytes_to_server_memory"] is not None,
           "active buffering counters missing")
    md = text(os.path.join(work, "micro", "micro.md"))
    expect("Quick mode" in md and "## Targets" in md, "micro.md lacks its sections")


def compare_micro(work):
    for side in ("base", "new"):
        load(os.path.join(work, side, "micro.json"))
    for name in ("new/versus.md", "two_pairs.md"):
        md = text(os.path.join(work, name))
        expect("## Phase write" in md, f"{name}: no write table")
        expect(table_rows(md, "dedicated | 4 KiB | write, steady"),
               f"{name}: no row for the dedicated setup's steady write")


def startup(work):
    rows = [json.loads(line) for line in open(os.path.join(work, "startup", "runs.jsonl"))]
    roles = sorted((r["label"], r["role"]) for r in rows)
    expect(roles == [("now", "client"), ("now", "server"), ("without Sidecore", "alone")],
           f"runs.jsonl rows: {roles}")
    for r in rows:
        expect(r["peak_rss_kib"] > 0 and r["wall_s"] > 0, f"row without measurements: {r}")
    md = text(os.path.join(work, "startup", "startup.md"))
    expect(table_rows(md, "now |") and table_rows(md, "without Sidecore |"),
           "startup.md lacks a row")
    expect("3 more variables declared" in md, "startup.md does not mention --declared")


def fresh_pages(work):
    d = load(os.path.join(work, "fresh", "fresh_pages.json"))
    names = [m["method"] for m in d["methods"]]
    expect(d["mib"] == 8 and len(names) == 10 and names[0] == "copy into prepared pages",
           f"fresh_pages.json methods: {names}")
    for m in d["methods"]:
        expect(len(m["ms"]) == 1 and m["ms"][0] > 0, f"method without a time: {m}")
    md = text(os.path.join(work, "fresh", "fresh_pages.md"))
    expect(table_rows(md, "copy into prepared pages |") and table_rows(md, "pwrite zeros |"),
           "fresh_pages.md lacks a row")


def compute_phase(work):
    d = load(os.path.join(work, "phase", "compute_phase.json"))
    rows = sorted((r["row"], r["pause_us"]) for r in d["phase"])
    expect(rows == [("alloc", 20000), ("alloc", 50000), ("write", 20000), ("write", 50000)],
           f"compute-phase rows: {rows}")
    for r in d["phase"]:
        expect(r["config"] == "now" and r["runs"] == 1, f"row {r}")
    expect(len(d["idle"]) == 1 and d["idle"][0]["runs"] == 1, "no idle-CPU row")
    expect(d["meta"]["configs"][0]["env"] == "SIDECORE_IDLE_POLL_US=1000",
           "the configuration's environment was lost")
    md = text(os.path.join(work, "phase", "compute_phase.md"))
    expect("## Idle dedicated core" in md, "compute_phase.md lacks the idle section")


def cold_write(work):
    d = load(os.path.join(work, "cold", "cold_write.json"))
    expect(d["meta"]["quick"], "cold_write.json does not say quick mode")
    rows = sorted((r["setup"], r["api"], r["pause_us"], r["config"]) for r in d["runs"])
    expect(rows == sorted((s, a, p, "now") for s in ("dedicated", "thread")
                          for a in ("write", "alloc") for p in (1000, 20000)),
           f"cold_write runs: {rows}")
    for r in d["runs"]:
        # The write runs the library's code: some of its pages must be counted.
        by = r["counted"]["by_mapping"]
        expect(r["pages"] > 0 and sum(by.values()) == r["counted"]["total"],
               f"pages counted: {r['pages']}, by mapping {by}")
        expect(any(n.startswith("libsidecore.so") and n.endswith(" code") and by[n] > 0
                   for n in by), f"no page of libsidecore's code counted: {by}")
        for key in ("write", "write_hot", "chase_pages", "chase_lines"):
            expect(r["ns"][key] > 0, f"{key} not measured: {r['ns']}")
        # With a dedicated core the first touches are named: the call reads the client's
        # tables on the heap and runs libsidecore's code, so both must appear.
        touches = r.get("first_touches")
        expect((touches is not None) == (r["setup"] == "dedicated"),
               f"first touches named for {r['setup']}: {touches is not None}")
        if touches is not None:
            kinds = {t["mapping"] for t in touches if not t["other_thread"]}
            expect("[heap]" in kinds and "libsidecore.so code" in kinds,
                   f"first touches without the heap or libsidecore's code: {touches}")
    # One write traced (--lines): its lines and pages counted, by mapping. It runs the
    # library's code and puts its notification in the shared segment's ring.
    traces = d.get("lines") or []
    expect([(t["api"], t["config"]) for t in traces] == [("write", "now")],
           f"traced hand-overs: {[(t['api'], t['config']) for t in traces]}")
    for t in traces:
        by = t["by_mapping"]
        expect(t["lines"] == sum(c["lines"] for c in by.values()) and t["pages"] > 0,
               f"lines counted: {t['lines']}, by mapping {by}")
        for needed in ("libsidecore.so code", "shared segment (ring, buffer)"):
            expect(by.get(needed, {"lines": 0})["lines"] > 0,
                   f"the traced write accessed no line of {needed}: {by}")
        expect(t["instructions"] > 100, f"{t['instructions']} instructions traced")
    md = text(os.path.join(work, "cold", "cold_write.md"))
    expect("## Lines and pages of one hand-over, traced" in md,
           "cold_write.md lacks the traced lines")
    expect(len(table_rows(md, "1 ms")) == 4 and len(table_rows(md, "20 ms")) == 4,
           "cold_write.md lacks a row per pause, setup and api")
    expect(len(table_rows(md, "**all**")) == 4 + len(traces),
           "cold_write.md lacks the pages by mapping, or the traced lines' totals")
    named_heap = re.findall(r"^\| \d+ \| \[heap\] \| \d+ \| (?:read|write) \|", md, re.M)
    expect(md.count("### Named:") == 2 and len(named_heap) >= 2,
           "cold_write.md lacks the named first touches of the dedicated runs")


def blocks(work):
    md = text(os.path.join(work, "blocks.md"))
    # The benchmark's reader checked every value (blocks_bench.c read_run); the table exists.
    for measure in ("client write time per iteration", "store throughput",
                    "read back whole", "paired read / dd"):
        row = table_rows(md, measure)
        expect(row, f"blocks.md: no row '{measure}'")
        cells = [c.strip() for c in row[0].strip("|").split("|")][1:4]
        expect(all(re.fullmatch(r"[0-9.]+", c) for c in cells), f"blocks.md: {row[0]}")


def blocks_scale(work):
    md = text(os.path.join(work, "blocks_scale.md"))
    # run_many_blocks.sh stopped at the first run whose values did not read back; the table
    # has a number for every mode.
    row = table_rows(md, "3000")
    expect(len(row) == 2, "blocks_scale.md: no row for 3000 blocks in each table")
    cells = [c.strip() for c in row[0].strip("|").split("|")][1:]
    expect(len(cells) == 4 and all(re.fullmatch(r"-?[0-9.]+", c) for c in cells),
           f"blocks_scale.md: {row[0]}")


def output(work):
    d = load(os.path.join(work, "output", "output.json"))
    expect(d["meta"]["quick"], "output.json does not say quick mode")
    a = d["compression"]
    expect(set(a) == {"null", "none", "deflate", "single", "half"}, f"variants {sorted(a)}")
    # Every variant's files read back with h5py against the uncompressed run.
    bounds = {"deflate": ("float64", 0.0), "single": ("float32", 2.0 ** -23),
              "half": ("float16", 2.0 ** -10)}
    for variant, (dtype, bound) in bounds.items():
        errors = a[variant]["errors"]
        expect(set(errors) == {"temperature", "pressure", "velocity"}, f"{variant}: {errors}")
        for variable, e in errors.items():
            expect(e["stored_type"] == dtype, f"{variant} {variable} stored as {e['stored_type']}")
            worst = e["max_rel_normal"] if variant == "half" else e["max_rel"]
            expect(worst <= bound, f"{variant} {variable}: relative error {worst} > {bound}")
        expect(a[variant]["ratio_attributes"] and a[variant]["ratio_attributes"] > 1,
               f"{variant}: compression ratio {a[variant]['ratio_attributes']}")
        expect(a[variant]["ratio_log"], f"{variant}: the store's log lines were not parsed")
    b = d["throughput"]
    expect(set(b) == {"hdf5-stream", "hdf5-paced", "dd", "dd-fdatasync", "dd-paced"},
           f"throughput rows {sorted(b)}")
    for kind in ("hdf5-stream", "hdf5-paced"):
        expect(b[kind]["bytes"] > 0 and b[kind]["bytes_per_second_median"] > 0,
               f"{kind}: nothing stored")
    breakdown = d.get("time_breakdown")
    if breakdown is not None:  # strace present
        expect("per-core files" in breakdown["by_file_kind"],
               f"strace breakdown without the per-core files: {breakdown['by_file_kind']}")
    md = text(os.path.join(work, "output", "output.md"))
    expect("## A. Compression" in md and "## B. Server HDF5 throughput" in md,
           "output.md lacks its sections")


def python(work):
    d = load(os.path.join(work, "python", "python.json"))
    expect(d["quick"], "python.json does not say quick mode")
    expect([r["bytes"] for r in d["client"]] == [1 << 20], f"client rows {d['client']}")
    r = d["client"][0]
    for key in ("c_write_ns", "python_write_ns", "c_alloc_commit_clear_ns",
                "python_alloc_commit_release_ns"):
        expect(len(r[key]) == 1 and r[key][0] > 0, f"client {key}: {r[key]}")
    s = d["scripts"]
    expect(len(s["per_call_us"]) >= 6, f"script cases {list(s['per_call_us'])}")
    for case, values in s["per_call_us"].items():
        expect(values and all(v > 0 for v in values), f"{case}: {values}")
    expect(s["script_sum_ns"] and s["plain_sum_ns"], "no NumPy sums")
    text(os.path.join(work, "python", "python.md"))


def perturbation(work):
    d = load(os.path.join(work, "perturbation", "perturbation_quick.json"))
    # Both write targets: the local disk and throttlefs (mounted for the run).
    expect(list(d["targets"]) == ["disk", "throttled"], f"targets {list(d['targets'])}")
    policies = ["idle", "idle-again", "drain", "rate", "phase", "phase+rate", "self"]
    reps = d["setup"]["reps"]
    for target in d["targets"]:
        perturbation_target(d, target, policies, reps)
    md = text(os.path.join(work, "perturbation", "perturbation_quick.md"))
    for name in policies[1:]:
        expect(len(table_rows(md, f"{name} | {reps} |")) == 2 * len(d["targets"]),
               f"perturbation_quick.md: no paired rows for {name} on each target")
    expect("repetitions for +-2%" in md, "perturbation_quick.md lacks the repetitions needed")


def perturbation_target(d, target, policies, reps):
    summary = d["targets"][target]["summary"]
    expect(sorted(summary) == sorted(policies), f"{target}: policies {sorted(summary)}")
    runs = d["targets"][target]["runs"]
    expect(len(runs) == reps * len(policies),
           f"{target}: {len(runs)} runs for {reps} repetitions")
    by_rep = {}
    for r in runs:  # every iteration of every writer in the trace (the script checked which)
        expect(r["bytes"] > 0, f"{target}, {r['policy']}: nothing in the schedule trace")
        by_rep.setdefault(r["rep"], []).append(r["policy"])
    # Every repetition ran every policy once, and no two repetitions in the same order.
    for rep, order in by_rep.items():
        expect(sorted(order) == sorted(policies), f"{target}: repetition {rep} ran {order}")
    orders = [tuple(o) for o in by_rep.values()]
    expect(len(set(orders)) == len(orders), f"{target}: repetitions in the same order: {orders}")
    # The paired differences, recomputed from the runs: each policy over the idle run of its
    # own repetition.
    idle = {r["rep"]: r for r in runs if r["policy"] == "idle"}
    for name in policies[1:]:
        mine = sorted((r["rep"], r["comm_time"] / idle[r["rep"]]["comm_time"] - 1.0)
                      for r in runs if r["policy"] == name)
        diffs = [v for _, v in mine]
        stats = summary[name]["comm"]
        expect(stats["n"] == reps, f"{target}, {name}: {stats['n']} pairs")
        ordered = sorted(diffs)
        median = (ordered[(reps - 1) // 2] + ordered[reps // 2]) / 2
        expect(abs(stats["median"] - median) < 1e-12,
               f"{target}, {name}: median {stats['median']} != {median}")
        expect(stats["min"] == ordered[0] and stats["max"] == ordered[-1],
               f"{target}, {name}: min/max")
        expect(stats["t_low"] <= stats["mean"] <= stats["t_high"], f"{target}, {name}: t interval")
        expect(stats["reps_for_2pct"] >= 2, f"{target}, {name}: repetitions for +-2%")
    # drain's stored temperature was read back, every iteration, and equal to the formula.
    checked = [r for r in runs if "values_checked" in r]
    expect(len(checked) == 1 and checked[0]["policy"] == "drain",
           f"{target}: no read-back of drain's data")
    phases = d["setup"]["iterations"] // d["setup"]["period"]
    expect(checked[0]["values_checked"] == list(range(phases)),
           f"{target}: iterations read back: {checked[0]['values_checked']}")
    expect(checked[0]["values_max_diff"] == 0.0, f"{target}: stored values differ from the formula")


def paraview_cost(work):
    md = text(os.path.join(work, "paraview", "paraview_cost.md"))
    for setup in ("HDF5 store only", "+ ParaView every 10 iterations",
                  "+ ParaView every iteration"):
        # The quick run's one compute phase (--steps 100) is the first cell.
        expect(table_rows(md, f"100 | {setup} |"), f"paraview_cost.md: no row '100 | {setup}'")


def paraview_first_iteration(work):
    md = text(os.path.join(work, "paraview", "paraview_first_iteration.md"))
    expect(len(table_rows(md, "this build |")) == 1, "paraview_first_iteration.md: no row")


def small_calls_versus(work):
    md = text(os.path.join(work, "small_calls.md"))
    for setup in ("sync", "dedicated"):
        rows = table_rows(md, f"{setup} |")
        expect(len(rows) == 3, f"{setup}: {len(rows)} rows")
    if "Instructions per call" in md:
        for call in ("damaris_write of one int", "end_iteration after 100 writes",
                     "empty end_iteration"):
            expect(table_rows(md, f"{call} | "), f"instructions: no row '{call}'")


def proxy_matrix(work):
    d = load(os.path.join(work, "matrix-results", "matrix.json"))
    names = {"none", "hdf5-fpp", "phdf5", "adios2", "adios2-async", "sc-core-fpc",
             "sc-core-alloc", "sc-core-coll", "sc-node-fpc", "sc-thread-fpc", "sc-sync-fpc",
             "sc-sync-coll"}
    # Both write targets: the local disk and throttlefs (mounted for the run).
    expect(set(d["write_targets"]) == {"disk", "throttled"},
           f"write targets {sorted(d['write_targets'])}")
    for target in ("disk", "throttled"):
        runs = {r["config"]: r for r in d["runs"] if r["target"] == target}
        expect(set(runs) == names, f"{target}: configurations {sorted(runs)}")
        for name, r in runs.items():
            if name == "none":
                continue
            check = r["check"]
            expect(check and check["temperature_equal"] and check["pressure_equal"]
                   and check["density_equal"] and check.get("master_view_equal", True),
                   f"{target}, {name}: read back {check}")
        for name in ("sc-core-fpc", "sc-core-alloc", "sc-core-coll", "sc-node-fpc"):
            expect(runs[name]["servers"],
                   f"{target}, {name}: the server's closing summary was not parsed")
        # The zero-copy run did hand its derived variables over through damaris_alloc (and
        # the read-back above found them exact).
        expect(runs["sc-core-alloc"].get("alloc_derived") is True and
               runs["sc-core-fpc"].get("alloc_derived") is False,
               f"{target}: sc-core-alloc did not run with --alloc-derived, or sc-core-fpc did")
    text(os.path.join(work, "matrix-results", "matrix.md"))
    for picture in ("tiles.png", "breakdown.png"):
        expect(os.path.getsize(os.path.join(work, "matrix-results", picture)) > 0,
               f"plot_tiles.py drew no {picture}")
    # The scaling curve: both back-ends at both sizes, each read back exact.
    scaling = load(os.path.join(work, "scaling", "scaling.json"))
    points = {(p["kind"], p["mib"]): p for p in scaling["points"]}
    expect(set(points) == {(k, m) for k in ("sidecore", "hdf5-fpp") for m in (0.25, 1.0)},
           f"scaling points {sorted(points)}")
    for key, p in points.items():
        check = p["check"]
        expect(check and check["temperature_equal"] and check["pressure_equal"] and
               check["density_equal"], f"scaling {key}: read back {check}")
    text(os.path.join(work, "scaling", "scaling.md"))
    expect(os.path.getsize(os.path.join(work, "scaling", "scaling.png")) > 0, "no scaling.png")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    name, work = sys.argv[1:]
    checks = {f.__name__: f for f in (micro, compare_micro, startup, fresh_pages, compute_phase,
                                      cold_write,
                                      blocks,
                                      blocks_scale,
                                      output, python, perturbation, paraview_cost,
                                      paraview_first_iteration, small_calls_versus,
                                      proxy_matrix)}
    if name not in checks:
        sys.exit(f"check_results.py: no check for '{name}'")
    try:
        checks[name](work)
    except Failed as e:
        sys.exit(f"check_results.py: bench.{name}: {e}")
    print(f"check_results.py: bench.{name}: the harness ran through")


if __name__ == "__main__":
    main()
