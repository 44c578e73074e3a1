"""`sidecore report` on the run reports of real MPI jobs (tests/output/output_writer with
SIDECORE_REPORT), checked against the JSON itself: every CSV value by value, the totals in the
HTML page, every PNG read back by matplotlib, the inline SVGs without PNG or without
matplotlib; and the errors for what is not a run report.

usage: test_report.py <sidecore> <output_writer> <repository root> <case>
"""
import csv
import html.parser
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

TOOL, WRITER, ROOT, CASE = sys.argv[1:5]
sys.path.insert(0, os.path.join(ROOT, "tests"))
from mpi_job import fail, mpi_env, run_job  # noqa: E402

TEMPLATE = os.path.join(ROOT, "tests", "cli", "xml", "inspect.xml.in")
SCRIPT = os.path.join(ROOT, "tools", "report", "sidecore_report.py")
ITERATIONS = 4
PICTURES = ("jitter", "latency", "buffer", "timeline")


def expect(actual, wanted, what):
    if actual != wanted:
        fail(f"{what}: got {actual!r}, expected {wanted!r}")


def run_with_report(tmp, name, np_, cores, write_times):
    """Runs output_writer on np_ ranks with the report written into tmp/run/; returns the
    report's path and its contents."""
    out, run = os.path.join(tmp, "out"), os.path.join(tmp, "run")
    os.makedirs(run, exist_ok=True)
    text = open(TEMPLATE).read()
    for key, value in {"NAME": name, "CORES": cores, "FILEMODE": "FilePerCore", "OUT": out,
                       "COMPRESSION": "none"}.items():
        text = text.replace(f"@{key}@", str(value))
    xml = os.path.join(tmp, name + ".xml")
    open(xml, "w").write(text)
    env = mpi_env(SIDECORE_REPORT=run + "/")
    env.pop("SIDECORE_WRITE_TIMES", None)
    if write_times:
        env["SIDECORE_WRITE_TIMES"] = "1"
    rc, _ = run_job(np_, [WRITER, xml, str(ITERATIONS)], env, timeout=240, cwd=tmp)
    if rc != 0:
        fail(f"the job of {name} exited with {rc}")
    path = os.path.join(run, name + "_report.json")
    if not os.path.isfile(path):
        fail(f"the job wrote no report {path}: {os.listdir(run)}")
    return path, json.load(open(path))


def tool_env(**extra):
    """sidecore report runs SIDECORE_PYTHON: the interpreter of this test (with matplotlib)."""
    env = dict(os.environ, SIDECORE_PYTHON=sys.executable)
    env.update(extra)
    return env


def report_cmd(args, status=0, env=None, direct=False):
    cmd = [sys.executable, SCRIPT, *args] if direct else [TOOL, "report", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env or tool_env())
    if done.returncode != status:
        fail(f"{' '.join(cmd)}: exit {done.returncode}, expected {status}\n"
             f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}")
    return done


def read_csv(path):
    if not os.path.isfile(path):
        fail(f"{path} was not written")
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def same(cell, value, what):
    """A CSV cell against the JSON value it was written from, exactly."""
    if value is None:
        expect(cell, "", what)
    elif isinstance(value, bool):
        expect(cell, "1" if value else "0", what)
    elif isinstance(value, int):
        expect(int(cell), value, what)
    else:
        expect(float(cell), value, what)


def records(w):
    it = w["iterations"]
    return [{k: it[k][i] for k in it} for i in range(len(it["iteration"]))]


def check_csvs(out, r):
    if r["write_times"]:
        header, rows = read_csv(os.path.join(out, "jitter.csv"))
        clients = [c for c in r["clients"] if c["iteration_times"] is not None]
        expect(len(clients), r["client_count"], "clients with iteration times")
        width = max(len(c["iteration_times"]["write_seconds"]) for c in clients)
        expect(header, ["client", "rank", "writer"] + [str(i) for i in range(width)], "jitter.csv header")
        expect(len(rows), len(clients), "jitter.csv rows")
        for row, c in zip(rows, clients):
            times = c["iteration_times"]["write_seconds"]
            expect(len(times), c["iterations"], f"client {c['index']}: write times")
            for cell, value, what in zip(row, [c["index"], c["rank"], c["writer"]] + times
                                         + [None] * (width - len(times)), header):
                same(cell, value, f"jitter.csv client {c['index']} {what}")
            if not any(t > 0 for t in times):
                fail(f"client {c['index']}: no visible write time at all: {times}")
    elif os.path.exists(os.path.join(out, "jitter.csv")):
        fail("jitter.csv written for a run without SIDECORE_WRITE_TIMES")

    writers = [w for w in r["writers"] if w["iterations"]]
    numbers = sorted({n for w in writers for n in w["iterations"]["iteration"]})
    header, rows = read_csv(os.path.join(out, "latency.csv"))
    expect(header, ["writer", "rank"] + [str(n) for n in numbers], "latency.csv header")
    expect(len(rows), len(writers), "latency.csv rows")
    for row, w in zip(rows, writers):
        by_number = {x["iteration"]: x["stored"] - x["completed"] for x in records(w)}
        same(row[0], w["index"], "latency.csv writer")
        same(row[1], w["rank"], "latency.csv rank")
        for cell, n in zip(row[2:], numbers):
            same(cell, by_number.get(n), f"latency.csv writer {w['index']} iteration {n}")

    header, rows = read_csv(os.path.join(out, "buffer.csv"))
    expect(header, ["writer", "rank", "iteration", "store_begin", "buffer_in_use", "capacity", "peak"],
           "buffer.csv header")
    wanted = [[w["index"], w["rank"], x["iteration"], x["store_begin"], x["buffer_in_use"],
               w["buffer"]["capacity"], w["buffer"]["peak"]] for w in r["writers"] for x in records(w)]
    expect(len(rows), len(wanted), "buffer.csv rows")
    for row, values in zip(rows, wanted):
        for cell, value, what in zip(row, values, header):
            same(cell, value, f"buffer.csv {what}")

    header, rows = read_csv(os.path.join(out, "timeline.csv"))
    expect(header, ["writer", "rank", "iteration", "bytes", "completed", "store_begin", "stored",
                    "wait_seconds", "store_seconds", "incomplete", "failed"], "timeline.csv header")
    wanted = [[w["index"], w["rank"], x["iteration"], x["bytes"], x["completed"], x["store_begin"],
               x["stored"], x["store_begin"] - x["completed"], x["stored"] - x["store_begin"],
               x["incomplete"], x["failed"]] for w in r["writers"] for x in records(w)]
    expect(len(rows), len(wanted), "timeline.csv rows")
    expect(len(rows), r["totals"]["iterations_stored"], "timeline.csv rows = iterations stored")
    for row, values in zip(rows, wanted):
        for cell, value, what in zip(row, values, header):
            same(cell, value, f"timeline.csv {what}")
    expect(sum(int(row[3]) for row in rows), r["totals"]["bytes_received"], "timeline.csv bytes")


class Page(html.parser.HTMLParser):
    """The summary's keyed cells, writer rows, images and SVG elements."""

    def __init__(self):
        super().__init__()
        self.cells, self.writer_rows, self.images, self.svgs, self.text = {}, [], [], 0, []
        self._key = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "td" and "data-key" in a:
            self._key = a["data-key"]
            self.cells[self._key] = ""
        if tag == "tr" and "data-writer" in a:
            self.writer_rows.append(a["data-writer"])
        if tag == "img":
            self.images.append(a.get("src"))
        if tag == "svg":
            self.svgs += 1

    def handle_endtag(self, tag):
        if tag == "td":
            self._key = None

    def handle_data(self, data):
        self.text.append(data)
        if self._key:
            self.cells[self._key] += data


def check_page(out, r, png):
    path = os.path.join(out, "report.html")
    if not os.path.isfile(path):
        fail(f"{path} was not written")
    text = open(path, encoding="utf-8").read()
    page = Page()
    page.feed(text)
    page.close()
    c = page.cells
    expect(c.get("mode"), r["mode"], "page: mode")
    for key in ("processes", "client_count", "writer_count"):
        expect(c.get(key), str(r[key]), f"page: {key}")
    t = r["totals"]
    for key in ("iterations", "iterations_stored", "store_failures", "notifications_rejected"):
        expect(c.get(key), str(t[key]), f"page: {key}")
    for key in ("bytes_handed_over", "bytes_received", "bytes_written", "bytes_dropped",
                "bytes_spilled", "bytes_pending"):
        if not c.get(key, "").startswith(f"{t[key]} bytes"):
            fail(f"page: {key} is {c.get(key)!r}, expected {t[key]} bytes")
    rate = t["bytes_written"] / r["duration"] / 2**20
    expect(c.get("run_throughput"), f"{rate:.2f} MiB/s", "page: throughput over the run")
    expect(page.writer_rows, [str(w["index"]) for w in r["writers"]], "page: writer rows")
    drawn = [p for p in PICTURES if p != "jitter" or r["write_times"]]
    if png:
        expect(sorted(page.images), sorted(p + ".png" for p in drawn), "page: images")
        expect(page.svgs, 0, "page: inline SVG next to PNG")
    else:
        expect(page.images, [], "page: images without PNG")
        expect(page.svgs, len(drawn), "page: inline SVGs")
        # Each SVG is well-formed XML; the jitter tiles have one cell per client and iteration.
        start = 0
        for name in drawn:
            start = text.index("<svg", start)
            end = text.index("</svg>", start) + len("</svg>")
            svg = ET.fromstring(text[start:end])
            if name == "jitter":
                cells = [e for e in svg.iter("{http://www.w3.org/2000/svg}rect") if e.find(
                    "{http://www.w3.org/2000/svg}title") is not None]
                expect(len(cells), r["client_count"] * t["iterations"], "jitter SVG cells")
            start = end
    words = " ".join(page.text)
    if not r["write_times"] and "SIDECORE_WRITE_TIMES was off" not in words:
        fail("the page does not say that the write times were not recorded")
    return page


def check_pngs(out, r, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.image
    drawn = [p for p in PICTURES if p != "jitter" or r["write_times"]]
    for name in PICTURES:
        path = os.path.join(out, name + ".png")
        if not png or name not in drawn:
            if os.path.exists(path):
                fail(f"{path} written, expected no PNG")
            continue
        if not os.path.isfile(path) or os.path.getsize(path) < 5000:
            fail(f"{path}: missing or too small for a picture")
        image = matplotlib.image.imread(path)
        if image.ndim != 3 or image.shape[0] < 100 or image.shape[1] < 200:
            fail(f"{path}: unexpected shape {image.shape}")
        if float(image[..., :3].std()) < 0.01:
            fail(f"{path}: a blank picture")


def case_cores():
    """Dedicated cores, 2 clients and 1 core, visible write times on: PNGs (matplotlib) and CSVs."""
    with tempfile.TemporaryDirectory() as tmp:
        path, r = run_with_report(tmp, "tiles", 3, 1, write_times=True)
        expect(r["mode"], "dedicated cores", "mode")
        expect(r["write_times"], True, "write_times")
        expect((r["client_count"], r["writer_count"]), (2, 1), "clients, writers")
        expect(r["totals"]["iterations"], ITERATIONS, "iterations")
        if r["totals"]["bytes_written"] <= 0:
            fail("nothing written")
        pics = os.path.join(tmp, "pics")
        done = report_cmd([os.path.join(tmp, "run"), "--out", pics])
        if os.path.join(pics, "report.html") not in done.stdout:
            fail(f"the output does not name the page:\n{done.stdout}")
        check_csvs(pics, r)
        page = check_page(pics, r, png=True)
        expect(page.cells.get("write_times"), "recorded", "page: write times")
        check_pngs(pics, r, png=True)
        # --no-png: the same CSVs, no PNG, the pictures as inline SVG.
        svg = os.path.join(tmp, "svg")
        report_cmd([path, "--out", svg, "--no-png"])
        check_csvs(svg, r)
        check_page(svg, r, png=False)
        check_pngs(svg, r, png=False)
        # Without --out: next to the report, in a directory named after it.
        report_cmd([path, "--no-png"])
        check_page(os.path.join(tmp, "run", "tiles_report"), r, png=False)
    print("PASS")


def case_synchronous():
    """Synchronous stores, write times off: latency per writer instead of the tiles; the script
    run directly, once without matplotlib (a stand-in package that fails to import)."""
    with tempfile.TemporaryDirectory() as tmp:
        path, r = run_with_report(tmp, "plain", 2, 0, write_times=False)
        expect(r["mode"], "synchronous", "mode")
        expect(r["write_times"], False, "write_times")
        expect(r["writer_count"], 2, "writers")
        out = os.path.join(tmp, "direct")
        report_cmd([path, "--out", out], direct=True)
        check_csvs(out, r)
        check_page(out, r, png=True)
        check_pngs(out, r, png=True)
        blocker = os.path.join(tmp, "blocker", "matplotlib")
        os.makedirs(blocker)
        open(os.path.join(blocker, "__init__.py"), "w").write("raise ImportError('blocked by the test')\n")
        out = os.path.join(tmp, "nompl")
        done = report_cmd([path, "--out", out], env=tool_env(PYTHONPATH=os.path.dirname(blocker)))
        if "matplotlib is not importable" not in done.stderr:
            fail(f"no note about matplotlib:\n{done.stderr}")
        check_csvs(out, r)
        check_page(out, r, png=False)
        check_pngs(out, r, png=False)
    print("PASS")


def minimal_report(**changes):
    r = {"format": "sidecore-run-report", "version": 1, "simulation": "x", "mode": "synchronous",
         "processes": 1, "client_count": 1, "writer_count": 1, "duration": 1.0, "write_times": False,
         "totals": {}, "writers": [], "clients": []}
    r.update(changes)
    return r


def case_errors():
    """What is not a run report: exit 1 and what was expected; usage errors: exit 2."""
    with tempfile.TemporaryDirectory() as tmp:
        def write(name, content):
            p = os.path.join(tmp, name)
            with open(p, "w") as f:
                f.write(content if isinstance(content, str) else json.dumps(content))
            return p

        for name, content, wanted in (
                ("text.json", "not json at all", "not JSON"),
                ("other.json", {"format": "something-else", "version": 1}, '"format": "sidecore-run-report"'),
                ("list.json", [1, 2], '"format": "sidecore-run-report"'),
                ("newer.json", minimal_report(version=2), "version 2 is newer than this tool reads (version 1)"),
                ("badversion.json", minimal_report(version="1"), '"version" is "1"'),
                ("nowriters.json", minimal_report(writers=None), '"writers" is missing')):
            done = report_cmd([write(name, content)], status=1)
            if wanted not in done.stderr or "sidecore report:" not in done.stderr:
                fail(f"{name}: {wanted!r} not in:\n{done.stderr}")
            if os.path.exists(os.path.join(tmp, name[:-5])):
                fail(f"{name}: an output directory was made for a file that is not a report")
        empty = os.path.join(tmp, "empty")
        os.makedirs(empty)
        write("empty/notes_report.txt", "x")
        done = report_cmd([empty], status=1)
        if "no run report in this directory" not in done.stderr:
            fail(f"empty directory:\n{done.stderr}")
        done = report_cmd([os.path.join(tmp, "missing")], status=1)
        if "no such file or directory" not in done.stderr:
            fail(f"missing path:\n{done.stderr}")
        report_cmd([], status=2)
        report_cmd([empty, "--bogus"], status=2)
        done = report_cmd([empty], status=1, env=tool_env(SIDECORE_PYTHON=os.path.join(tmp, "no-python")))
        if "cannot run" not in done.stderr or "SIDECORE_PYTHON" not in done.stderr:
            fail(f"missing interpreter:\n{done.stderr}")
        # A directory with two reports: every one is drawn, each in its own subdirectory.
        both = os.path.join(tmp, "both")
        os.makedirs(both)
        write("both/a_report.json", minimal_report(simulation="a"))
        write("both/b_report.json", minimal_report(simulation="b"))
        report_cmd([both, "--out", os.path.join(tmp, "drawn"), "--no-png"])
        for name in ("a_report", "b_report"):
            if not os.path.isfile(os.path.join(tmp, "drawn", name, "report.html")):
                fail(f"{name}: not drawn")
    print("PASS")


CASES = {name[len("case_"):]: f for name, f in globals().items() if name.startswith("case_")}
if CASE not in CASES:
    fail(f"unknown case {CASE!r}; cases: {', '.join(CASES)}")
CASES[CASE]()
