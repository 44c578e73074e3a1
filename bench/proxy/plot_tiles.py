#!/usr/bin/env python3
"""Draws jitter tiles (one tile per write phase, processes sorted by their write time, coloured
by the phase's throughput) and a time breakdown from results/matrix.json, for each write target."""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def pick_run(runs, config):
    """The repetition whose total time is the median one: a representative run, not the best."""
    mine = sorted((r for r in runs if r["config"] == config), key=lambda r: max(r["total_time"]))
    return mine[len(mine) // 2] if mine else None


def phase_throughput(run, phase):
    times = [row[phase] for row in run["write_time"]]
    data = run["bytes_per_rank_per_phase"] * run["ranks"]
    return data / max(times) if max(times) > 0 else float("inf")


def draw_row(axes, run, norm, cmap, label):
    times = np.array(run["write_time"])  # ranks x phases
    xmax = times.max() * 1e3 * 1.05
    for phase, ax in enumerate(axes):
        column = np.sort(times[:, phase])[::-1] * 1e3
        tput = phase_throughput(run, phase)
        ax.barh(np.arange(len(column)), column, height=0.9, color=cmap(norm(tput)))
        ax.set_xlim(0, xmax)
        ax.set_ylim(-0.5, len(column) - 0.5)
        ax.set_yticks([])
        ax.set_xticks([])
        ax.set_xlabel("%.0f MB/s" % (tput / 1e6), fontsize=6, labelpad=1)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    axes[0].set_ylabel(label, fontsize=8, rotation=0, ha="right", va="center")
    axes[-1].text(1.08, 0.5, "0..%.3g ms" % xmax, transform=axes[-1].transAxes, fontsize=7,
                  va="center")


def plot_target(runs, summary, results, suffix):
    from run_matrix import CONFIGS
    configs = [c[0] for c in CONFIGS if c[0] in summary and c[0] != "none"]
    chosen = {c: pick_run(runs, c) for c in configs}
    tputs = [phase_throughput(r, ph) for r in chosen.values() for ph in range(r["phases"])]
    finite = [t for t in tputs if np.isfinite(t) and t > 0]
    norm = LogNorm(vmin=min(finite), vmax=max(finite))
    cmap = plt.get_cmap("viridis")
    phases = max(r["phases"] for r in chosen.values())

    height = 0.75 * len(configs) + 1.0
    fig, axes = plt.subplots(len(configs), phases, figsize=(0.9 * phases + 3.6, height),
                             squeeze=False)
    fig.subplots_adjust(left=0.17, right=0.74, top=1 - 0.75 / height, bottom=0.35 / height,
                        hspace=1.0, wspace=0.15)
    for row, config in enumerate(configs):
        draw_row(axes[row], chosen[config], norm, cmap, config)
    fig.suptitle("Write time per process and phase%s (sorted; each row has its own time scale, "
                 "printed right)\ncolour and label: phase throughput = data / slowest process" %
                 (" on the %s target" % suffix.strip("_") if suffix else ""), fontsize=8)
    bar = fig.add_axes([0.92, 0.25, 0.02, 0.5])
    fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), cax=bar, label="B/s")
    fig.savefig(os.path.join(results, "tiles%s.png" % suffix), dpi=130)
    plt.close(fig)

    for config in configs:
        run = chosen[config]
        fig, axes = plt.subplots(1, run["phases"], figsize=(1.1 * run["phases"] + 2.5, 1.6),
                                 squeeze=False)
        draw_row(axes[0], run, norm, cmap, config)
        fig.subplots_adjust(left=0.18, right=0.88, bottom=0.25)
        fig.savefig(os.path.join(results, "tiles%s_%s.png" % (suffix, config)), dpi=110)
        plt.close(fig)

    # Where the slowest rank's time went: compute, visible writes, the rest of the loop
    # (halo waits, derived fields, the memcpy reference), and the final flush.
    names = ["none"] + configs
    parts = {"compute": [], "visible write": [], "other loop": [], "final flush": []}
    for config in names:
        run = pick_run(runs, config)
        slowest = int(np.argmax(run["total_time"]))
        write = float(np.sum(run["write_time"][slowest])) if run["phases"] else 0.0
        compute = run["compute_time"][slowest]
        loop = run["loop_time"][slowest]
        parts["compute"].append(compute)
        parts["visible write"].append(write)
        parts["other loop"].append(max(loop - compute - write, 0.0))
        parts["final flush"].append(run["flush_time"][slowest])
    fig, ax = plt.subplots(figsize=(8, 3.8))
    bottom = np.zeros(len(names))
    for label, values in parts.items():
        ax.bar(names, values, bottom=bottom, label=label)
        bottom += np.array(values)
    ax.set_ylabel("seconds (slowest rank)")
    ax.set_title("Run time breakdown (median repetition)%s" % (
        ", %s target" % suffix.strip("_") if suffix else ""), fontsize=9)
    ax.tick_params(axis="x", rotation=35, labelsize=8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(results, "breakdown%s.png" % suffix), dpi=120)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--results", default=os.path.join(HERE, "results"))
    args = p.parse_args()
    with open(os.path.join(args.results, "matrix.json")) as f:
        doc = json.load(f)
    # The first write target (the plain disk) keeps the plain file names; the others get
    # their name as a suffix: tiles_throttled.png, breakdown_throttled.png.
    for index, (target, entry) in enumerate(doc["write_targets"].items()):
        runs = [r for r in doc["runs"] if r.get("target", target) == target]
        plot_target(runs, entry["summary"], args.results, "" if index == 0 else "_" + target)


if __name__ == "__main__":
    main()
