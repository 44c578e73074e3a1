#!/usr/bin/env python3
"""The scaling model of docs/scaling.md: what Sidecore costs the simulation and the dedicated
cores at 10^2-10^4 nodes x 16-128 cores, from the per-item costs measured by run_scale.py and
the complexity of the MPI collectives the library calls. Prints the tables of docs/scaling.md.

  bench/scale/model.py [--results bench/results/scale/scale.json]

With --results, the measured constants are taken from that file (medians at the largest size
of each sweep, where fixed costs no longer dominate); without, the defaults below (the ones
docs/scaling.md quotes). Every assumption that is not a measurement is a named constant here.
"""
import argparse
import json
import math

# Measured on the 2-core machine (bench/results/scale/scale.md; medians).
MEASURED = {
    "client_block_s": 0.3e-6,    # write calls per block, out of cache (0.11 in cache, 1.7 loaded)
    "writer_block_s": 1.0e-6,    # a writer's store time per block (0.8-2.8 us at >= 1,000 blocks)
    "writer_file_s": 2.5e-3,     # a writer's fixed time per iteration (its file), 10 blocks
    "master_block_s": 0.3e-6,    # writer 0: master file + XDMF per block (1e5 blocks, 1 variable)
    "master_variable_s": 0.25e-3,  # ... per variable (256 variables of 100 blocks)
    "master_file_block_bytes": 28,  # master file bytes per block
    "open_block_s": 0.57e-6,     # read API: opening an iteration, per block
    "report_writer_bytes": 1100,  # run report: a writer's entry, fixed part
    "report_writer_iteration_bytes": 88,  # ... per stored iteration
    "report_client_bytes": 220,  # a client's entry without SIDECORE_WRITE_TIMES
    "report_client_iteration_bytes": 40,  # ... per iteration with SIDECORE_WRITE_TIMES=1
}
# Assumptions (not measured here): a Cray-class network and node.
ALPHA = 2e-6           # s, latency of one MPI message
LINK = 5e9             # B/s, one process's share of a link for large messages
INJECTION = 10e9       # B/s, what one node's network interface takes in
COPY = 5e9             # B/s, memcpy of one core (damaris_write is 1.1x memcpy, bench/results/micro.md)
SORT_ELEMENT_S = 5e-9  # s per element per log2(element) of a local sort (MPI_Comm_split)
# The workload: CM1 on Kraken as the seed report runs it (000: 28.4 MB per core per output, a
# compute phase of 230 s between outputs), with 20 variables of one 3-D block each.
OUTPUT_BYTES = 28.4e6
VARIABLES = 20
BLOCKS_PER_VARIABLE = 1
PERIOD_S = 230.0
DIMENSIONS = 3
GATHER_BLOCK_BYTES = 8 * (7 + 3 * DIMENSIONS)  # int64 fields of a block's record (virtual_view.cpp)


def from_results(path):
    with open(path) as f:
        table = json.load(f)["table"]

    def at(dim, size, key):
        for r in table:
            if r["dimension"] == dim and r["size"] == size and key in r["metrics"]:
                return r["metrics"][key]["median"]
        return None

    m = dict(MEASURED)
    largest = max(r["size"] for r in table if r["dimension"] == "blocks")
    pairs = {
        "client_block_s": (at("blocks", largest, "client_block_us"), 1e-6),
        "writer_block_s": (at("blocks", largest, "writer_block_us"), 1e-6),
        "master_block_s": (at("blocks", largest, "views_ms"), 1e-3 / largest),
        "open_block_s": (at("blocks", largest, "api_open_ms"), 1e-3 / largest),
    }
    for key, (value, scale) in pairs.items():
        if value is not None and value > 0:
            m[key] = value * scale
    return m


def allgather_s(ranks, bytes_each, per_node):
    """Ring-like all-gather of `bytes_each` from every rank: P steps of latency, and every rank
    receives P x bytes_each, the node's interface all of its ranks' shares."""
    total = ranks * bytes_each
    return ranks * ALPHA + max(total / LINK, per_node * total / INJECTION)


def model(nodes, cores, m, dedicated=1, iterations=1000):
    ranks = nodes * cores
    clients = nodes * (cores - dedicated)
    writers = nodes * dedicated
    per_writer = (cores - dedicated) // dedicated
    blocks = VARIABLES * BLOCKS_PER_VARIABLE
    total_blocks = clients * blocks
    log_w = max(1, math.ceil(math.log2(max(writers, 2))))
    out = {"nodes": nodes, "cores": cores, "ranks": ranks, "writers": writers,
           "blocks_per_iteration": total_blocks}
    # The simulation: a copy and a notification per block, no collective at all.
    out["client_s"] = 1.1 * OUTPUT_BYTES / COPY + blocks * m["client_block_s"]
    # Each dedicated core, per output, beyond the file system's time: its blocks, its file, two
    # all-reduces, and its part of the gather into writer 0.
    collectives = 2 * log_w * ALPHA + ALPHA * log_w
    out["writer_own_s"] = per_writer * blocks * m["writer_block_s"] + m["writer_file_s"] + \
        collectives
    # Writer 0: receives every block's record (linear gather at the root), writes the master
    # file and the XDMF.
    gather_bytes = total_blocks * GATHER_BLOCK_BYTES
    out["writer0_gather_bytes"] = gather_bytes
    out["writer0_extra_s"] = writers * ALPHA + gather_bytes / LINK + \
        total_blocks * m["master_block_s"] + VARIABLES * m["master_variable_s"]
    out["master_file_bytes"] = total_blocks * m["master_file_block_bytes"]
    out["open_iteration_s"] = total_blocks * m["open_block_s"]
    # Start-up: five world-wide splits (an all-gather of (colour, key) and a sort of the
    # group, as Open MPI does them; the peer watch's split by shared memory among them), the peer
    # watch's all-gather of 32 bytes per rank of the node and its broadcast of rank 0's.
    split = allgather_s(ranks, 8, cores) + SORT_ELEMENT_S * ranks * math.log2(ranks)
    out["startup_s"] = 5 * split + allgather_s(cores, 32, cores) + 21 * math.log2(ranks) * ALPHA
    out["peer_table_node_bytes"] = cores * cores * 32
    # Finalize: every process's part of the run report gathered on rank 0 (in rounds of at most
    # 2 GiB), which holds the parts and the report's text at once.
    fixed = writers * m["report_writer_bytes"] + clients * m["report_client_bytes"]
    per_iteration = writers * m["report_writer_iteration_bytes"]
    out["report_bytes"] = fixed + per_iteration * iterations
    out["report_rank0_bytes"] = 2 * out["report_bytes"]
    return out


def human(x, unit=""):
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {prefix}{unit}".strip()
    return f"{x:.3g} {unit}".strip()


def seconds(x):
    if x >= 1:
        return f"{x:.3g} s"
    if x >= 1e-3:
        return f"{x * 1e3:.3g} ms"
    return f"{x * 1e6:.3g} µs"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results")
    args = ap.parse_args()
    m = from_results(args.results) if args.results else MEASURED
    print("Constants: " + ", ".join(f"{k} {v:.3g}" for k, v in m.items()))
    print()
    print("| nodes × cores | ranks | blocks per output | client per output | dedicated core, "
          "Sidecore's own per output | writer 0 extra per output | gathered into writer 0 | "
          "master file | open one iteration (read API) | start-up | peer table per node | "
          "run report after 1,000 outputs | rank 0's memory for it |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for nodes in (100, 1000, 10000):
        for cores in (16, 128):
            o = model(nodes, cores, m)
            print(f"| 10^{int(math.log10(nodes))} × {cores} | {human(o['ranks'])} | "
                  f"{human(o['blocks_per_iteration'])} | {seconds(o['client_s'])} | "
                  f"{seconds(o['writer_own_s'])} | {seconds(o['writer0_extra_s'])} | "
                  f"{human(o['writer0_gather_bytes'], 'B')} | "
                  f"{human(o['master_file_bytes'], 'B')} | {seconds(o['open_iteration_s'])} | "
                  f"{seconds(o['startup_s'])} | {human(o['peer_table_node_bytes'], 'B')} | "
                  f"{human(o['report_bytes'], 'B')} | {human(o['report_rank0_bytes'], 'B')} |")


if __name__ == "__main__":
    main()
