"""Checks, value by value, the HDF5 files that hosts_writer wrote across emulated hosts.

Ranks are placed by slot: world rank r runs on host (r // ranks_per_host) + 1. With K dedicated
cores the last K ranks of every host are its servers; client l of a host's C clients (by rank
on the host) is served by that host's server l * K // C, so a server stores clients of its own
host only. With dedicated nodes every rank of the last `nodes` hosts is a server and client c of
C goes to server c * S // C. Writers (servers) and clients are numbered in world rank order.

FilePerCore: every writer's file <simulation>_It<i>_Pr<w>.h5 holds exactly the clients it
serves; the master file <simulation>_It<i>.h5 maps every block. Collective: the one file
<simulation>_It<i>.h5 per iteration holds the global dataset `field` and one dataset per client
of `host` and `wrank` (layouts without global dimensions). In both, the global dataset's
block_origins name the writer of every block. With --job-output, the placement that
hosts_writer printed (host of every client and server) is checked as well.
Prints one line per problem and exits 1 when there is any.
Usage: check_hosts_output.py --out DIR --mode cores|nodes --hosts H --ranks-per-host R
                             --iterations N [--cores K] [--nodes K]
                             [--file-mode FilePerCore|Collective] [--job-output FILE]
                             [--prefix sc-host]
"""
import argparse
import os
import re
import sys

import h5py
import numpy as np

NX, NY = 6, 4


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", choices=["cores", "nodes"], required=True)
    ap.add_argument("--hosts", type=int, required=True)
    ap.add_argument("--ranks-per-host", type=int, required=True)
    ap.add_argument("--iterations", type=int, required=True)
    ap.add_argument("--cores", type=int, default=1)
    ap.add_argument("--nodes", type=int, default=1)
    ap.add_argument("--file-mode", choices=["FilePerCore", "Collective"], default="FilePerCore")
    ap.add_argument("--job-output")
    ap.add_argument("--prefix", default="sc-host")
    args = ap.parse_args()
    rph = args.ranks_per_host
    world = args.hosts * rph
    collective = args.file_mode == "Collective"

    def host_of(rank):
        return f"{args.prefix}{rank // rph + 1}"

    if args.mode == "cores":
        servers = [h * rph + s for h in range(args.hosts) for s in range(rph - args.cores, rph)]
    else:
        servers = list(range((args.hosts - args.nodes) * rph, world))
    clients = [r for r in range(world) if r not in servers]
    n_clients, n_servers = len(clients), len(servers)
    if args.mode == "cores":
        # Client l of host h goes to the host's server l * K // C: writer h * K + that.
        per_host = rph - args.cores
        writer_of = [(r // rph) * args.cores + (r % rph) * args.cores // per_host for r in clients]
    else:
        writer_of = [c * n_servers // n_clients for c in range(n_clients)]
    stored_by = {w: [c for c in range(n_clients) if writer_of[c] == w] for w in range(n_servers)}

    errors = []
    if collective:
        expected_files = {f"hosts_It{it}.h5" for it in range(args.iterations)}
    else:
        expected_files = {f"hosts_It{it}_Pr{w}.h5" for it in range(args.iterations)
                          for w in range(n_servers)}
        expected_files |= {f"hosts_It{it}.h5" for it in range(args.iterations)}
    listing = os.listdir(args.out)
    present = {f for f in listing if f.endswith(".h5")}
    for name in sorted(expected_files - present):
        errors.append(f"missing file {name}")
    for name in sorted(present - expected_files):
        errors.append(f"unexpected file {name}")
    for name in sorted(f for f in listing if f.endswith(".part")):
        errors.append(f"unfinished file {name}")

    def expected_block(it, c):
        y, x = np.mgrid[0:NY, 0:NX]
        return it * 100000.0 + c * 1000.0 + y * NX + x + 0.5

    checked = 0

    def check_host_and_wrank(name, group, c):
        # host/P<c> and wrank/P<c> of client c in `group` (a file or its root).
        nonlocal checked
        rank = clients[c]
        key = f"P{c}"
        host = None
        if key in group.get("host", {}):
            raw = group["host"][key][...].astype(np.uint8).tobytes()
            host = raw.split(b"\0", 1)[0].decode()
            checked += 1
            if host != host_of(rank):
                errors.append(f"{name}: host/{key} = {host!r}, expected {host_of(rank)!r}")
        if key in group.get("wrank", {}):
            value = group["wrank"][key][...].tolist()
            checked += 1
            if value != [rank]:
                errors.append(f"{name}: wrank/{key} = {value}, expected [{rank}]")
        return host

    def check_keys(name, group, want_clients):
        for var in ("field", "host", "wrank"):
            got = sorted(group[var].keys()) if var in group else []
            want = sorted(f"P{c}" for c in want_clients)
            if got != want:
                errors.append(f"{name}: {var} holds {got}, expected {want}")

    def check_global(name, f, it):
        # The global dataset `field`: values, and the writer, source and position of each block.
        nonlocal checked
        if "field" not in f or not isinstance(f["field"], h5py.Dataset):
            errors.append(f"{name}: no global dataset field")
            return
        dset = f["field"]
        data = dset[...]
        want = np.hstack([expected_block(it, c) for c in range(n_clients)])
        if data.shape != want.shape:
            errors.append(f"{name}: field shape {data.shape}, expected {want.shape}")
        else:
            bad = np.argwhere(data != want)
            for (y, x) in bad[:20]:
                errors.append(f"{name}: field[{y},{x}] = {data[y, x]}, expected {want[y, x]}")
            checked += data.size
        origins = sorted(tuple(int(v) for v in row) for row in dset.attrs.get("block_origins", []))
        want_origins = sorted((writer_of[c], c, 0) for c in range(n_clients))
        if origins != want_origins:
            errors.append(f"{name}: field block_origins (writer, source, block) {origins}, "
                          f"expected {want_origins}")
        positions = dset.attrs.get("block_positions", [])
        rows = dset.attrs.get("block_origins", [])
        for row, pos in zip(rows, positions):
            c = int(row[1])
            if [int(v) for v in pos] != [0, c * NX]:
                errors.append(f"{name}: field block of source {c} at {list(pos)}, "
                              f"expected [0, {c * NX}]")

    for it in range(args.iterations):
        if not collective:
            for w in range(n_servers):
                name = f"hosts_It{it}_Pr{w}.h5"
                if name not in present:
                    continue
                with h5py.File(os.path.join(args.out, name), "r") as f:
                    if int(f.attrs["iteration"]) != it:
                        errors.append(f"{name}: iteration attribute {f.attrs['iteration']}")
                    check_keys(name, f, stored_by[w])
                    hosts_in_file = set()
                    for c in stored_by[w]:
                        key = f"P{c}"
                        if key in f.get("field", {}):
                            data = f["field"][key][...]
                            want = expected_block(it, c)
                            if data.shape != want.shape:
                                errors.append(f"{name}: field/{key} shape {data.shape}")
                            else:
                                for (y, x) in zip(*np.nonzero(data != want)):
                                    errors.append(f"{name}: field/{key}[{y},{x}] = {data[y, x]}, "
                                                  f"expected {want[y, x]}")
                                checked += data.size
                        host = check_host_and_wrank(name, f, c)
                        if host is not None:
                            hosts_in_file.add(host)
                    # A dedicated core only reaches the clients of its own host (shared memory).
                    if args.mode == "cores" and len(hosts_in_file) > 1:
                        errors.append(f"{name}: clients of several hosts {sorted(hosts_in_file)}")
        name = f"hosts_It{it}.h5"
        if name not in present:
            continue
        with h5py.File(os.path.join(args.out, name), "r") as f:
            if int(f.attrs["iteration"]) != it:
                errors.append(f"{name}: iteration attribute {f.attrs['iteration']}")
            if int(f.attrs.get("complete", -1)) != 1:
                errors.append(f"{name}: complete attribute {f.attrs.get('complete')}")
            check_global(name, f, it)
            if collective:
                # Per-client datasets of the layouts without global dimensions.
                for var in ("host", "wrank"):
                    got = sorted(f[var].keys()) if var in f else []
                    want = sorted(f"P{c}" for c in range(n_clients))
                    if got != want:
                        errors.append(f"{name}: {var} holds {got}, expected {want}")
                for c in range(n_clients):
                    check_host_and_wrank(name, f, c)

    # Placement printed by the job: "client C of N is world rank R on H", "server is world
    # rank R on H".
    if args.job_output:
        client_lines, server_lines = {}, {}
        with open(args.job_output, errors="replace") as job:
            for line in job:
                m = re.search(r"hosts_writer: client (\d+) of (\d+) is world rank (\d+) on (\S+)",
                              line)
                if m:
                    c, n, rank, host = int(m[1]), int(m[2]), int(m[3]), m[4]
                    client_lines[c] = (n, rank, host)
                m = re.search(r"hosts_writer: server is world rank (\d+) on (\S+)", line)
                if m:
                    server_lines[int(m[1])] = m[2]
        for c, rank in enumerate(clients):
            want = (n_clients, rank, host_of(rank))
            if client_lines.get(c) != want:
                errors.append(f"{args.job_output}: client {c}: (clients, world rank, host) "
                              f"{client_lines.get(c)}, expected {want}")
        for c in sorted(set(client_lines) - set(range(n_clients))):
            errors.append(f"{args.job_output}: unexpected client {c}")
        want_servers = {r: host_of(r) for r in servers}
        if server_lines != want_servers:
            errors.append(f"{args.job_output}: servers (world rank: host) {server_lines}, "
                          f"expected {want_servers}")
        checked += len(client_lines) + len(server_lines)

    for e in errors[:100]:
        print(f"check_hosts_output: {e}")
    if errors:
        print(f"check_hosts_output: {len(errors)} problem(s) in {args.out}")
        return 1
    writer_hosts = sorted({host_of(r) for r in servers})
    servers_by = (f"{args.cores} dedicated core(s) per host" if args.mode == "cores"
                  else f"{args.nodes} dedicated node(s)")
    print(f"check_hosts_output: {servers_by}, {args.file_mode}: {args.iterations} iterations, "
          f"{n_clients} clients, {n_servers} writers on {', '.join(writer_hosts)}, "
          f"{checked} values as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
