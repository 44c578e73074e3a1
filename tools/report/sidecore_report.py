#!/usr/bin/env python3
"""Pictures and a one-page HTML summary of a Sidecore run report (docs/observability.md, schema
version 1): the jitter tiles (visible write time per client per iteration, as in the Damaris
jitter study), buffer occupancy per writer, the server timeline, and the data behind each as CSV.

Standard library only; matplotlib, when importable, adds PNG files. Without it (or with
--no-png) the HTML carries every picture as inline SVG drawn here.

usage: sidecore_report.py <report.json | directory> [--out DIR] [--no-png]
Run by `sidecore report` (docs/cli.md), or directly with python3.
"""
import argparse
import csv
import datetime
import glob
import html
import json
import math
import os
import sys

FORMAT = "sidecore-run-report"
VERSION = 1  # the newest schema version this script reads

# Files written into the output directory (docs/cli.md lists them).
HTML_NAME = "report.html"
JITTER = "jitter"      # clients x iterations, visible write time (SIDECORE_WRITE_TIMES=1)
LATENCY = "latency"    # writers x iterations, from an iteration's end to its stores' return
BUFFER = "buffer"      # buffer in use per writer when each iteration's stores began
TIMELINE = "timeline"  # per writer and stored iteration: completed, store_begin, stored


class ReportError(Exception):
    """A file or directory that cannot be drawn: the message says what was expected."""


# Reading and checking


def load_report(path):
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except OSError as e:
        raise ReportError(f"{path}: cannot read: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ReportError(f"{path}: not JSON ({e}); expected a Sidecore run report "
                          f"(\"format\": \"{FORMAT}\")") from None
    if not isinstance(report, dict) or report.get("format") != FORMAT:
        raise ReportError(f"{path}: not a Sidecore run report: expected \"format\": \"{FORMAT}\" "
                          "(written by damaris_finalize, see SIDECORE_REPORT)")
    version = report.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ReportError(f"{path}: \"version\" is {json.dumps(version)}, expected a positive integer")
    if version > VERSION:
        raise ReportError(f"{path}: run report version {version} is newer than this tool reads "
                          f"(version {VERSION}); use the sidecore of the library that wrote it")
    for key, kind in (("totals", dict), ("writers", list), ("clients", list)):
        if not isinstance(report.get(key), kind):
            wanted = "an object" if kind is dict else "a list"
            raise ReportError(f"{path}: \"{key}\" is missing or not {wanted}")
    for i, w in enumerate(report["writers"]):
        it = w.get("iterations") if isinstance(w, dict) else None
        if not isinstance(w, dict) or (it is not None and not isinstance(it, dict)):
            raise ReportError(f"{path}: writers[{i}] is not a writer record")
        if it is not None:
            n = len(it.get("iteration", []))
            for column in ("completed", "store_begin", "stored", "buffer_in_use"):
                if len(it.get(column, [])) != n:
                    raise ReportError(f"{path}: writers[{i}].iterations.{column} has "
                                      f"{len(it.get(column, []))} entries, expected {n}")
    for i, c in enumerate(report["clients"]):
        if not isinstance(c, dict):
            raise ReportError(f"{path}: clients[{i}] is not a client record")
    return report


def find_reports(target):
    """The report files named by target: the file itself, or every *_report.json of a directory."""
    if os.path.isdir(target):
        found = sorted(glob.glob(os.path.join(glob.escape(target), "*_report.json")))
        if not found:
            raise ReportError(f"{target}: no run report in this directory (expected a file "
                              "<simulation>_report.json, as damaris_finalize writes)")
        return found
    if not os.path.exists(target):
        raise ReportError(f"{target}: no such file or directory (expected a run report "
                          "<simulation>_report.json or a directory holding one)")
    return [target]


# Numbers


def fmt_bytes(n):
    if n is None:
        return "n/a"
    n = int(n)
    if abs(n) < 1024:
        return f"{n} bytes"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        value /= 1024.0
        if abs(value) < 1024 or unit == "PiB":
            return f"{n} bytes ({value:.2f} {unit})"


def short_bytes(n):
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.3g} {unit}"
        value /= 1024.0


def fmt_seconds(s):
    if s is None:
        return "n/a"
    s = float(s)
    if s == 0:
        return "0 s"
    if abs(s) < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if abs(s) < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.3f} s"


def fmt_rate(bytes_per_second):
    if bytes_per_second is None:
        return "n/a"
    return f"{bytes_per_second / 2**20:.2f} MiB/s"


def csv_value(v):
    """Values as the JSON report has them: repr() of a float reads back as the same float."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "1" if v else "0"
    return repr(v) if isinstance(v, float) else str(v)


def write_csv(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(header)
        for row in rows:
            out.writerow([csv_value(v) for v in row])


# The data behind each picture


def jitter_data(report):
    """(row labels, column count, matrix) of visible write seconds, clients x iterations; None
    when the run did not record them."""
    clients = [c for c in report["clients"] if isinstance(c.get("iteration_times"), dict)]
    if not clients:
        return None
    rows = [list(c["iteration_times"].get("write_seconds", [])) for c in clients]
    columns = max((len(r) for r in rows), default=0)
    labels = [f"client {c.get('index')} (rank {c.get('rank')})" for c in clients]
    return clients, labels, columns, [r + [None] * (columns - len(r)) for r in rows]


def stored_iterations(w):
    it = w.get("iterations")
    if not it:
        return []
    keys = ("iteration", "blocks", "bytes", "completed", "store_begin", "stored", "buffer_in_use",
            "incomplete", "failed")
    n = len(it.get("iteration", []))
    cols = {k: (it.get(k) or [None] * n) for k in keys}
    return [{k: cols[k][i] for k in keys} for i in range(n)]


def latency_data(report):
    """(writers, iteration numbers, matrix) of stored - completed, writers x iterations."""
    writers = [w for w in report["writers"] if w.get("iterations")]
    numbers = sorted({r["iteration"] for w in writers for r in stored_iterations(w)})
    position = {n: i for i, n in enumerate(numbers)}
    matrix = []
    for w in writers:
        row = [None] * len(numbers)
        for r in stored_iterations(w):
            row[position[r["iteration"]]] = r["stored"] - r["completed"]
        matrix.append(row)
    return writers, numbers, matrix


def write_csvs(report, out):
    written = []
    jitter = jitter_data(report)
    if jitter is not None:
        clients, _, columns, matrix = jitter
        write_csv(os.path.join(out, JITTER + ".csv"),
                  ["client", "rank", "writer"] + [str(i) for i in range(columns)],
                  ([c.get("index"), c.get("rank"), c.get("writer")] + row
                   for c, row in zip(clients, matrix)))
        written.append(JITTER + ".csv")
    writers, numbers, matrix = latency_data(report)
    write_csv(os.path.join(out, LATENCY + ".csv"),
              ["writer", "rank"] + [str(n) for n in numbers],
              ([w.get("index"), w.get("rank")] + row for w, row in zip(writers, matrix)))
    written.append(LATENCY + ".csv")
    rows = []
    for w in report["writers"]:
        b = w.get("buffer") or {}
        for r in stored_iterations(w):
            rows.append([w.get("index"), w.get("rank"), r["iteration"], r["store_begin"],
                         r["buffer_in_use"], b.get("capacity"), b.get("peak")])
    write_csv(os.path.join(out, BUFFER + ".csv"),
              ["writer", "rank", "iteration", "store_begin", "buffer_in_use", "capacity", "peak"], rows)
    written.append(BUFFER + ".csv")
    rows = []
    for w in report["writers"]:
        for r in stored_iterations(w):
            rows.append([w.get("index"), w.get("rank"), r["iteration"], r["bytes"], r["completed"],
                         r["store_begin"], r["stored"], r["store_begin"] - r["completed"],
                         r["stored"] - r["store_begin"], r["incomplete"], r["failed"]])
    write_csv(os.path.join(out, TIMELINE + ".csv"),
              ["writer", "rank", "iteration", "bytes", "completed", "store_begin", "stored",
               "wait_seconds", "store_seconds", "incomplete", "failed"], rows)
    written.append(TIMELINE + ".csv")
    return written


# Colors: viridis at nine stops, interpolated (the same scale matplotlib draws the PNGs with).

VIRIDIS = [(68, 1, 84), (71, 44, 122), (59, 81, 139), (44, 113, 142), (33, 144, 141),
           (39, 173, 129), (92, 200, 99), (170, 220, 50), (253, 231, 37)]


def color(fraction):
    f = min(max(fraction, 0.0), 1.0) * (len(VIRIDIS) - 1)
    i = min(int(f), len(VIRIDIS) - 2)
    t = f - i
    a, b = VIRIDIS[i], VIRIDIS[i + 1]
    return "#%02x%02x%02x" % tuple(round(a[k] + (b[k] - a[k]) * t) for k in range(3))


LINE_COLOR = "#1f77b4"


# SVG, drawn here without any dependency

FONT = 'font-family="sans-serif" font-size="11"'


def esc(text):
    return html.escape(str(text), quote=True)


def ticks(lo, hi, count=5):
    """Round tick values covering [lo, hi]."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = math.ceil(lo / step) * step
    return [first + k * step for k in range(int((hi - first) / step + 1e-9) + 1)]


def label_every(count, room):
    return max(1, math.ceil(count / max(room, 1)))


def svg_heatmap(title, row_labels, column_labels, matrix, value_text):
    values = [v for row in matrix for v in row if v is not None]
    lo, hi = (min(values), max(values)) if values else (0.0, 0.0)
    rows, cols = len(matrix), len(column_labels)
    cell_w = min(40.0, max(2.0, 640.0 / max(cols, 1)))
    cell_h = min(22.0, max(1.0, 400.0 / max(rows, 1)))
    left, top = 150, 30
    width = max(left + cols * cell_w + 110, left + 7.5 * len(title) + 20)
    height = top + rows * cell_h + 50
    tooltips = rows * cols <= 5000
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
             f'{FONT} role="img" aria-label="{esc(title)}">',
             f'<text x="{left}" y="18" font-size="13" font-weight="bold">{esc(title)}</text>']
    for i, row in enumerate(matrix):
        y = top + i * cell_h
        for j, v in enumerate(row):
            x = left + j * cell_w
            fill = "#eeeeee" if v is None else color((v - lo) / (hi - lo) if hi > lo else 0.5)
            tip = (f"<title>{esc(row_labels[i])}, iteration {esc(column_labels[j])}: "
                   f"{esc(value_text(v) if v is not None else 'none')}</title>") if tooltips else ""
            parts.append(f'<rect x="{x:.2f}" y="{y:.2f}" width="{cell_w:.2f}" height="{cell_h:.2f}" '
                         f'fill="{fill}">{tip}</rect>')
    every = label_every(rows, 400 / 12)
    for i in range(0, rows, every):
        y = top + (i + 0.5) * cell_h + 4
        parts.append(f'<text x="{left - 6}" y="{y:.2f}" text-anchor="end">{esc(row_labels[i])}</text>')
    every = label_every(cols, (cols * cell_w) / 30)
    for j in range(0, cols, every):
        x = left + (j + 0.5) * cell_w
        parts.append(f'<text x="{x:.2f}" y="{top + rows * cell_h + 14:.2f}" '
                     f'text-anchor="middle">{esc(column_labels[j])}</text>')
    parts.append(f'<text x="{left + cols * cell_w / 2:.2f}" y="{top + rows * cell_h + 32:.2f}" '
                 'text-anchor="middle">iteration</text>')
    # Color bar: the scale from the smallest value (bottom) to the largest (top).
    bar_x, bar_h = left + cols * cell_w + 20, max(60.0, min(rows * cell_h, 200.0))
    steps = 32
    for k in range(steps):
        y = top + bar_h * (1 - (k + 1) / steps)
        parts.append(f'<rect x="{bar_x:.2f}" y="{y:.2f}" width="12" height="{bar_h / steps + 0.5:.2f}" '
                     f'fill="{color((k + 0.5) / steps)}"/>')
    parts.append(f'<text x="{bar_x + 16:.2f}" y="{top + 8:.2f}">{esc(value_text(hi))}</text>')
    parts.append(f'<text x="{bar_x + 16:.2f}" y="{top + bar_h:.2f}">{esc(value_text(lo))}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def svg_axes(parts, x0, y0, w, h, xlo, xhi, ylo, yhi, xfmt, yfmt, xlabel=None):
    """Frame, ticks and labels of one plot area; returns the data -> pixel functions."""
    def px(x):
        return x0 + (x - xlo) / (xhi - xlo) * w if xhi > xlo else x0 + w / 2

    def py(y):
        return y0 + h - (y - ylo) / (yhi - ylo) * h if yhi > ylo else y0 + h / 2

    parts.append(f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#999"/>')
    for t in ticks(xlo, xhi):
        parts.append(f'<line x1="{px(t):.2f}" y1="{y0 + h}" x2="{px(t):.2f}" y2="{y0 + h + 4}" stroke="#999"/>'
                     f'<text x="{px(t):.2f}" y="{y0 + h + 15}" text-anchor="middle">{esc(xfmt(t))}</text>')
    if yfmt is not None:
        # Byte axes tick at round numbers of the largest binary unit below the top.
        scale = 1
        if yfmt is short_bytes:
            while scale < 1024 ** 4 and yhi >= scale * 1024:
                scale *= 1024
        for t in (v * scale for v in ticks(ylo / scale, yhi / scale, 3)):
            parts.append(f'<line x1="{x0 - 4}" y1="{py(t):.2f}" x2="{x0}" y2="{py(t):.2f}" stroke="#999"/>'
                         f'<text x="{x0 - 6}" y="{py(t) + 4:.2f}" text-anchor="end">{esc(yfmt(t))}</text>')
    if xlabel:
        parts.append(f'<text x="{x0 + w / 2:.2f}" y="{y0 + h + 30}" text-anchor="middle">{esc(xlabel)}</text>')
    return px, py


def time_range(report):
    times = [t for w in report["writers"] for r in stored_iterations(w)
             for t in (r["completed"], r["store_begin"], r["stored"]) if t is not None]
    if not times:
        return 0.0, max(float(report.get("duration") or 1.0), 1e-6)
    lo, hi = min(0.0, min(times)), max(times)
    return lo, hi if hi > lo else lo + 1e-6


MAX_PANELS = 16


def svg_buffer(report):
    writers = report["writers"][:MAX_PANELS]
    xlo, xhi = time_range(report)
    panel_h, gap, left, width = 90, 50, 110, 640
    height = 30 + len(writers) * (panel_h + gap)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 190}" height="{height}" '
             f'{FONT} role="img" aria-label="buffer occupancy">',
             f'<text x="{left}" y="18" font-size="13" font-weight="bold">Buffer in use when each '
             'iteration\'s stores began</text>']
    for k, w in enumerate(writers):
        b = w.get("buffer") or {}
        capacity, peak = b.get("capacity") or 0, b.get("peak") or 0
        records = stored_iterations(w)
        top = 30 + k * (panel_h + gap) + 12
        yhi = max([capacity, peak, 1] + [r["buffer_in_use"] or 0 for r in records])
        px, py = svg_axes(parts, left, top, width, panel_h, xlo, xhi, 0, yhi, lambda t: f"{t:g} s",
                          short_bytes, "seconds since damaris_initialize" if k == len(writers) - 1 else None)
        parts.append(f'<text x="{left}" y="{top - 4}">writer {esc(w.get("index"))} '
                     f'(rank {esc(w.get("rank"))}, {esc(w.get("kind", ""))})</text>')
        for value, dash, name in ((capacity, "6,3", "capacity"), (peak, "2,2", "peak")):
            if value:
                parts.append(f'<line x1="{left}" y1="{py(value):.2f}" x2="{left + width}" '
                             f'y2="{py(value):.2f}" stroke="#c00" stroke-dasharray="{dash}"/>'
                             f'<text x="{left + width + 6}" y="{py(value) + 4:.2f}" fill="#c00">'
                             f'{name} {esc(short_bytes(value))}</text>')
        if records:
            points = " ".join(f"{px(r['store_begin']):.2f},{py(r['buffer_in_use']):.2f}" for r in records)
            parts.append(f'<polyline points="{points}" fill="none" stroke="{LINE_COLOR}" stroke-width="1.5"/>')
            if len(records) <= 500:
                for r in records:
                    parts.append(f'<circle cx="{px(r["store_begin"]):.2f}" cy="{py(r["buffer_in_use"]):.2f}" '
                                 f'r="2.5" fill="{LINE_COLOR}"><title>iteration {r["iteration"]}: '
                                 f'{esc(fmt_bytes(r["buffer_in_use"]))}</title></circle>')
        else:
            parts.append(f'<text x="{left + 10}" y="{top + panel_h / 2}">no stored iteration recorded</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def svg_timeline(report):
    writers = report["writers"][:64]
    xlo, xhi = time_range(report)
    row_h, left, width, top = 22, 150, 640, 30
    plot_h = max(row_h * len(writers), row_h)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 30}" '
             f'height="{top + plot_h + 70}" {FONT} role="img" aria-label="server timeline">',
             f'<text x="{left}" y="18" font-size="13" font-weight="bold">Server timeline: wait '
             '(iteration complete to stores begin) and stores</text>']
    px, _ = svg_axes(parts, left, top, width, plot_h, xlo, xhi, 0, 1, lambda t: f"{t:g} s", None,
                     "seconds since damaris_initialize")
    for k, w in enumerate(writers):
        y = top + k * row_h + 3
        parts.append(f'<text x="{left - 6}" y="{y + 12}" text-anchor="end">writer {esc(w.get("index"))} '
                     f'(rank {esc(w.get("rank"))})</text>')
        for r in stored_iterations(w):
            x0, x1, x2 = px(r["completed"]), px(r["store_begin"]), px(r["stored"])
            tip = (f'<title>writer {esc(w.get("index"))}, iteration {r["iteration"]}: wait '
                   f'{esc(fmt_seconds(r["store_begin"] - r["completed"]))}, stores '
                   f'{esc(fmt_seconds(r["stored"] - r["store_begin"]))}, {esc(fmt_bytes(r["bytes"]))}</title>')
            fill = "#d62728" if r["failed"] else ("#ff7f0e" if r["incomplete"] else "#1f77b4")
            parts.append(f'<rect x="{x0:.2f}" y="{y}" width="{max(x1 - x0, 0.5):.2f}" height="{row_h - 6}" '
                         f'fill="#aec7e8">{tip}</rect>')
            parts.append(f'<rect x="{x1:.2f}" y="{y}" width="{max(x2 - x1, 0.5):.2f}" height="{row_h - 6}" '
                         f'fill="{fill}" stroke="#fff" stroke-width="0.5">{tip}</rect>')
    legend_y = top + plot_h + 50
    for i, (fill, name) in enumerate((("#aec7e8", "wait"), ("#1f77b4", "stores"),
                                      ("#ff7f0e", "stores, incomplete"), ("#d62728", "stores, failed"))):
        x = left + i * 150
        parts.append(f'<rect x="{x}" y="{legend_y - 9}" width="12" height="10" fill="{fill}"/>'
                     f'<text x="{x + 16}" y="{legend_y}">{name}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


# PNG, with matplotlib when it is importable


def import_pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except Exception:  # any failure to import means: no PNG, the SVGs remain
        return None


def png_heatmap(plt, path, title, row_labels, column_labels, matrix, unit_scale, unit):
    rows, cols = len(matrix), len(column_labels)
    data = [[float("nan") if v is None else v * unit_scale for v in row] for row in matrix]
    fig, ax = plt.subplots(figsize=(min(4 + cols * 0.35, 16), min(1.5 + rows * 0.3, 12)))
    image = ax.imshow(data, aspect="auto", interpolation="nearest", cmap="viridis")
    ax.set_title(title)
    ax.set_xlabel("iteration")
    step = label_every(cols, 30)
    ax.set_xticks(range(0, cols, step))
    ax.set_xticklabels([column_labels[j] for j in range(0, cols, step)])
    step = label_every(rows, 40)
    ax.set_yticks(range(0, rows, step))
    ax.set_yticklabels([row_labels[i] for i in range(0, rows, step)])
    fig.colorbar(image, ax=ax, label=unit)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def png_buffer(plt, path, report):
    writers = report["writers"][:MAX_PANELS]
    fig, axes = plt.subplots(len(writers), 1, sharex=True, squeeze=False,
                             figsize=(9, 1.2 + 1.8 * len(writers)))
    for ax, w in zip(axes[:, 0], writers):
        b = w.get("buffer") or {}
        records = stored_iterations(w)
        ax.plot([r["store_begin"] for r in records], [r["buffer_in_use"] / 2**20 for r in records],
                marker="o", markersize=3, label="in use when stores began")
        if b.get("capacity"):
            ax.axhline(b["capacity"] / 2**20, color="#c00", linestyle="--", label="capacity")
        if b.get("peak"):
            ax.axhline(b["peak"] / 2**20, color="#c00", linestyle=":", label="peak")
        ax.set_ylabel("MiB")
        ax.set_ylim(bottom=0)
        ax.set_title(f"writer {w.get('index')} (rank {w.get('rank')}, {w.get('kind', '')})", fontsize=10)
        ax.legend(fontsize=8, loc="upper right")
    axes[-1, 0].set_xlabel("seconds since damaris_initialize")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def png_timeline(plt, path, report):
    writers = report["writers"][:64]
    fig, ax = plt.subplots(figsize=(10, 1.5 + 0.4 * len(writers)))
    for k, w in enumerate(writers):
        records = stored_iterations(w)
        ax.broken_barh([(r["completed"], r["store_begin"] - r["completed"]) for r in records],
                       (k - 0.35, 0.7), facecolors="#aec7e8")
        ax.broken_barh([(r["store_begin"], r["stored"] - r["store_begin"]) for r in records],
                       (k - 0.35, 0.7),
                       facecolors=["#d62728" if r["failed"] else "#ff7f0e" if r["incomplete"]
                                   else "#1f77b4" for r in records],
                       edgecolor="white", linewidth=0.5)
    ax.set_yticks(range(len(writers)))
    ax.set_yticklabels([f"writer {w.get('index')} (rank {w.get('rank')})" for w in writers])
    ax.invert_yaxis()
    ax.set_xlabel("seconds since damaris_initialize")
    ax.set_title("Server timeline: wait (light) and stores (dark)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# The HTML page


def latency_overall(writers):
    stats = [w.get("latency") or {} for w in writers]
    stats = [s for s in stats if s.get("count")]
    if not stats:
        return None, None, None
    count = sum(s["count"] for s in stats)
    return (min(s["min"] for s in stats), sum(s["mean"] * s["count"] for s in stats) / count,
            max(s["max"] for s in stats))


def idle_share(matrix):
    """Of the time the clients spent in iterations' write phases, the share spent waiting for
    the slowest client of the iteration to finish (the white part of a jitter tile)."""
    columns = len(matrix[0]) if matrix else 0
    idle = total = 0.0
    for j in range(columns):
        column = [row[j] for row in matrix if row[j] is not None]
        if column:
            slowest = max(column)
            idle += sum(slowest - v for v in column)
            total += slowest * len(column)
    return idle / total if total > 0 else None


def warnings_of(report):
    t, out = report["totals"], []
    if t.get("bytes_dropped"):
        out.append(f"{fmt_bytes(t['bytes_dropped'])} dropped by the writers ({fmt_bytes(t.get('bytes_skipped', 0))} "
                   f"skipped by clients under policy=\"skip\", {fmt_bytes(t.get('bytes_failed', 0))} in "
                   "iterations a store failed on)")
    elif t.get("bytes_dropped_by_clients"):
        out.append(f"{fmt_bytes(t['bytes_dropped_by_clients'])} dropped by clients under policy=\"skip\"")
    if t.get("store_failures"):
        out.append(f"{t['store_failures']} store call(s) failed")
    if t.get("notifications_rejected"):
        out.append(f"{t['notifications_rejected']} notification(s) rejected by the writers")
    for w in report["writers"]:
        for a in w.get("actions") or []:
            if a.get("failures"):
                out.append(f"writer {w.get('index')} (rank {w.get('rank')}): {a['kind']} "
                           f"'{a['name']}' failed in {a['failures']} of {a['calls']} call(s)")
    if t.get("bytes_pending"):
        out.append(f"{fmt_bytes(t['bytes_pending'])} still pending (not stored) when the report was written")
    if t.get("bytes_spilled"):
        out.append(f"{fmt_bytes(t['bytes_spilled'])} spilled to files: the shared buffer was full")
    if t.get("iterations_skipped"):
        out.append(f"{t['iterations_skipped']} client iteration(s) dropped data (policy=\"skip\")")
    if t.get("bytes_handed_over") != t.get("bytes_received") and not t.get("notifications_rejected"):
        out.append(f"bytes handed over by the clients ({t.get('bytes_handed_over')}) differ from the "
                   f"bytes the writers received ({t.get('bytes_received')})")
    for w in report["writers"]:
        name = f"writer {w.get('index')} (rank {w.get('rank')})"
        b = w.get("buffer") or {}
        if w.get("iterations") is None:
            out.append(f"{name}: no iteration records (a background thread that was not stopped)")
        if w.get("iterations_incomplete"):
            out.append(f"{name}: {w['iterations_incomplete']} iteration(s) stored with data missing")
        if b.get("capacity") and b.get("peak", 0) >= b["capacity"]:
            out.append(f"{name}: the buffer was full at its peak ({fmt_bytes(b['peak'])}): "
                       "clients waited or dropped data")
    if not report.get("write_times"):
        out.append("SIDECORE_WRITE_TIMES was off: the clients' visible write times were not recorded")
    return out


def key_cell(key, text):
    return f'<td data-key="{esc(key)}">{esc(text)}</td>'


def html_page(report, source, figures, png):
    t = report["totals"]
    writers = report["writers"]
    duration = report.get("duration") or 0
    store_seconds = sum(w.get("store_seconds") or 0 for w in writers)
    store_rate = sum((w.get("bytes_written") or 0) / w["store_seconds"] for w in writers
                     if w.get("store_seconds"))
    lat_min, lat_mean, lat_max = latency_overall(writers)
    debt = max((w.get("io_debt_seconds") or 0 for w in writers), default=0)
    origin = report.get("origin_unix_time")
    started = (datetime.datetime.fromtimestamp(origin, datetime.timezone.utc)
               .strftime("%Y-%m-%d %H:%M:%S UTC") if isinstance(origin, (int, float)) else "n/a")
    run = [
        ("simulation", "simulation", report.get("simulation")),
        ("configuration", "configuration", report.get("configuration")),
        ("mode", "mode", report.get("mode")),
        ("processes", "processes", report.get("processes")),
        ("client_count", "clients", report.get("client_count")),
        ("writer_count", "writers", report.get("writer_count")),
        ("started", "started", started),
        ("duration", "duration", fmt_seconds(duration)),
        ("write_times", "visible write times", "recorded" if report.get("write_times") else
         "not recorded (SIDECORE_WRITE_TIMES off)"),
    ]
    totals = [
        ("iterations", "iterations", t.get("iterations")),
        ("iterations_stored", "iterations stored (sum over writers)", t.get("iterations_stored")),
        ("bytes_handed_over", "bytes handed over by the clients", fmt_bytes(t.get("bytes_handed_over"))),
        ("bytes_received", "bytes received by the writers", fmt_bytes(t.get("bytes_received"))),
        ("bytes_written", "bytes written", fmt_bytes(t.get("bytes_written"))),
        ("bytes_dropped", "bytes dropped", fmt_bytes(t.get("bytes_dropped"))),
        ("bytes_skipped", "of which skipped by clients", fmt_bytes(t.get("bytes_skipped"))),
        ("bytes_failed", "of which in failed stores", fmt_bytes(t.get("bytes_failed"))),
        ("bytes_spilled", "bytes spilled", fmt_bytes(t.get("bytes_spilled"))),
        ("bytes_pending", "bytes pending at the end", fmt_bytes(t.get("bytes_pending"))),
        ("store_failures", "store failures", t.get("store_failures")),
        ("notifications_rejected", "notifications rejected", t.get("notifications_rejected")),
        ("action_failures", "failed calls of actions, scripts and pipelines",
         t.get("action_failures", 0)),
        ("run_throughput", "throughput over the run (bytes written / duration)",
         fmt_rate(t.get("bytes_written", 0) / duration) if duration else "n/a"),
        ("store_throughput", "throughput of the stores (per writer: bytes written / seconds in "
         "stores; summed over writers)", fmt_rate(store_rate) if store_seconds else "n/a"),
        ("latency", "latency min / mean / max (iteration end to stored)",
         " / ".join(fmt_seconds(v) for v in (lat_min, lat_mean, lat_max))),
        ("io_debt", "I/O debt at the end (largest writer)", fmt_seconds(debt)),
    ]
    jitter = jitter_data(report)
    if jitter is not None and jitter[2]:
        means = [v for row in jitter[3] for v in row if v is not None]
        share = idle_share(jitter[3])
        totals.append(("visible_write", "visible write time per client iteration, mean / max",
                       f"{fmt_seconds(sum(means) / len(means))} / {fmt_seconds(max(means))}" if means else "n/a"))
        totals.append(("idle_share", "time waiting for the slowest client of an iteration",
                       f"{share * 100:.1f} % of the write phases" if share is not None else "n/a"))

    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>Sidecore run report: {esc(report.get('simulation'))}</title>",
           "<style>body{font-family:sans-serif;max-width:1000px;margin:1em auto;color:#222}"
           "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;"
           "text-align:left}td.n{text-align:right}.warn{color:#a00}figure{margin:1em 0}"
           "figcaption{font-size:90%;color:#555}</style></head><body>",
           f"<h1>Run report: {esc(report.get('simulation'))}</h1>",
           f"<p>From <code>{esc(source)}</code> (run report version {esc(report.get('version'))}).</p>",
           "<h2>Run</h2><table>"]
    out += [f"<tr><th>{esc(label)}</th>{key_cell(key, value)}</tr>" for key, label, value in run]
    out.append("</table><h2>Totals</h2><table>")
    out += [f"<tr><th>{esc(label)}</th>{key_cell(key, value)}</tr>" for key, label, value in totals]
    out.append("</table>")
    warnings = warnings_of(report)
    out.append("<h2>Warnings</h2>")
    out.append("<ul>" + "".join(f'<li class="warn">{esc(w)}</li>' for w in warnings) + "</ul>"
               if warnings else "<p>None.</p>")
    out.append("<h2>Writers</h2><table><tr><th>writer</th><th>rank</th><th>kind</th><th>clients</th>"
               "<th>received</th><th>written</th><th>dropped</th><th>spilled</th><th>stored</th>"
               "<th>incomplete</th><th>failures</th><th>buffer peak / capacity</th>"
               "<th>latency min / mean / max</th><th>store throughput</th><th>I/O debt</th></tr>")
    for w in writers:
        b, lat = w.get("buffer") or {}, w.get("latency") or {}
        cells = [w.get("index"), w.get("rank"), w.get("kind"), ", ".join(str(c) for c in w.get("clients", [])),
                 w.get("bytes_received"), w.get("bytes_written"), w.get("bytes_dropped"), w.get("bytes_spilled"),
                 w.get("iterations_stored"), w.get("iterations_incomplete"), w.get("store_failures"),
                 f"{short_bytes(b.get('peak') or 0)} / {short_bytes(b.get('capacity') or 0)}",
                 " / ".join(fmt_seconds(lat.get(k)) for k in ("min", "mean", "max")),
                 fmt_rate(w.get("throughput_bytes_per_second")), fmt_seconds(w.get("io_debt_seconds"))]
        out.append('<tr data-writer="%s">' % esc(w.get("index")) +
                   "".join(f'<td class="n">{esc(c)}</td>' if isinstance(c, int) else f"<td>{esc(c)}</td>"
                           for c in cells) + "</tr>")
    out.append("</table>")
    for fig in figures:
        out.append(f'<h2 id="{fig["name"]}">{esc(fig["title"])}</h2>')
        if fig.get("note"):
            out.append(f'<p class="warn">{esc(fig["note"])}</p>')
        out.append("<figure>")
        if png and fig.get("png"):
            out.append(f'<img src="{esc(fig["png"])}" alt="{esc(fig["title"])}">')
        else:
            out.append(fig["svg"])
        out.append(f'<figcaption>{esc(fig["caption"])} Data: <a href="{esc(fig["csv"])}">'
                   f'{esc(fig["csv"])}</a>.</figcaption></figure>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"


# One report


def draw(path, report, out, plt):
    os.makedirs(out, exist_ok=True)
    files = write_csvs(report, out)
    figures = []
    jitter = jitter_data(report)
    if jitter is not None and jitter[2]:
        clients, labels, columns, matrix = jitter
        figures.append({
            "name": JITTER, "title": "Jitter tiles: visible write time per client and iteration",
            "csv": JITTER + ".csv",
            "caption": "Rows: client processes; columns: iterations; color: seconds spent in write calls "
                       "(damaris_write, alloc, commit, clear, end_iteration) during the iteration.",
            "matrix": (labels, [str(i) for i in range(columns)], matrix, "visible write time")})
    writers, numbers, matrix = latency_data(report)
    note = None
    if jitter is None or not jitter[2]:
        note = ("SIDECORE_WRITE_TIMES was off in this run, so the visible write time of each client "
                "was not recorded and the jitter tiles cannot be drawn (run with SIDECORE_WRITE_TIMES=1). "
                "Shown instead: the latency of each writer per iteration.")
    figures.append({
        "name": LATENCY, "title": "Latency per writer and iteration", "csv": LATENCY + ".csv", "note": note,
        "caption": "Rows: writers; columns: stored iterations; color: seconds from the end of the "
                   "iteration by its last client to the return of its stores.",
        "matrix": ([f"writer {w.get('index')} (rank {w.get('rank')})" for w in writers],
                   [str(n) for n in numbers], matrix, "latency")})
    for fig in figures:
        labels, columns, data, unit = fig.pop("matrix")
        fig["svg"] = svg_heatmap(fig["title"], labels, columns, data, fmt_seconds)
        if plt is not None:
            fig["png"] = fig["name"] + ".png"
            png_heatmap(plt, os.path.join(out, fig["png"]), fig["title"], labels, columns, data, 1e3,
                        unit + " (ms)")
    more = len(report["writers"]) > MAX_PANELS
    figures.append({"name": BUFFER, "title": "Buffer occupancy per writer", "csv": BUFFER + ".csv",
                    "svg": svg_buffer(report),
                    "caption": "The writer's buffer in use when each iteration's stores began, against "
                               "that time, with the buffer's capacity and peak." +
                               (f" The first {MAX_PANELS} writers are drawn; the CSV has all." if more else "")})
    figures.append({"name": TIMELINE, "title": "Server timeline", "csv": TIMELINE + ".csv",
                    "svg": svg_timeline(report),
                    "caption": "Per writer, a bar per stored iteration: light from the iteration's end by "
                               "every client of the writer to the start of its stores (waiting for a turn "
                               "or for older iterations), dark while its stores ran." +
                               (" The first 64 writers are drawn; the CSV has all." if len(report["writers"]) > 64 else "")})
    if plt is not None:
        figures[-2]["png"] = BUFFER + ".png"
        png_buffer(plt, os.path.join(out, BUFFER + ".png"), report)
        figures[-1]["png"] = TIMELINE + ".png"
        png_timeline(plt, os.path.join(out, TIMELINE + ".png"), report)
    files += [f["png"] for f in figures if f.get("png")]
    with open(os.path.join(out, HTML_NAME), "w", encoding="utf-8") as f:
        f.write(html_page(report, path, figures, plt is not None))
    files.append(HTML_NAME)
    return files


def default_out(path):
    """run/sim_report.json -> run/sim_report/"""
    base = os.path.basename(path)
    stem = base[:-5] if base.endswith(".json") else base + ".d"
    return os.path.join(os.path.dirname(path), stem)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog=os.environ.get("SIDECORE_REPORT_PROG") or os.path.basename(sys.argv[0]),
        description="Draw a Sidecore run report: jitter tiles, buffer occupancy, server timeline "
                    "(PNG with matplotlib, inline SVG otherwise), a one-page HTML summary and the "
                    "data of each picture as CSV.")
    parser.add_argument("report", help="a run report (<simulation>_report.json) or a directory holding "
                        "*_report.json files")
    parser.add_argument("--out", metavar="DIR", help="where to write (default: next to each report, a "
                        "directory named after it without .json; with several reports, one "
                        "subdirectory of DIR per report)")
    parser.add_argument("--no-png", action="store_true", help="no PNG files: the HTML carries the "
                        "pictures as inline SVG")
    args = parser.parse_args(argv)
    prog = parser.prog
    try:
        paths = find_reports(args.report)
        reports = [(p, load_report(p)) for p in paths]  # every file is checked before any is drawn
    except ReportError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    plt = None
    if not args.no_png:
        plt = import_pyplot()
        if plt is None:
            print(f"{prog}: matplotlib is not importable: no PNG files; the HTML has the pictures "
                  "as SVG", file=sys.stderr)
    for path, report in reports:
        if args.out is None:
            out = default_out(path)
        elif len(reports) == 1:
            out = args.out
        else:
            out = os.path.join(args.out, os.path.basename(default_out(path)))
        try:
            files = draw(path, report, out, plt)
        except ReportError as e:
            print(f"{prog}: {e}", file=sys.stderr)
            return 1
        except OSError as e:
            print(f"{prog}: {out}: cannot write: {e}", file=sys.stderr)
            return 1
        print(f"{path}: {os.path.join(out, HTML_NAME)}")
        print("  " + " ".join(files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
