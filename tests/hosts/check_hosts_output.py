"""Checks, value by value, the HDF5 files that hosts_writer wrote across emulated hosts.

Ranks are placed by slot: world rank r runs on host (r // ranks_per_host) + 1. With dedicated
cores the last rank of every host is its server and stores the clients of its host; with
dedicated nodes every rank of the last `nodes` hosts is a server and client c of C goes to
server c * S // C. Prints one line per problem and exits 1 when there is any.
Usage: check_hosts_output.py --out DIR --mode cores|nodes --hosts H --ranks-per-host R
                             --iterations N [--nodes K] [--prefix sc-host]
"""
import argparse
import os
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
    ap.add_argument("--nodes", type=int, default=1)
    ap.add_argument("--prefix", default="sc-host")
    args = ap.parse_args()
    rph = args.ranks_per_host
    world = args.hosts * rph

    def host_of(rank):
        return f"{args.prefix}{rank // rph + 1}"

    if args.mode == "cores":
        servers = [h * rph + rph - 1 for h in range(args.hosts)]
    else:
        servers = list(range((args.hosts - args.nodes) * rph, world))
    clients = [r for r in range(world) if r not in servers]
    n_clients, n_servers = len(clients), len(servers)
    if args.mode == "cores":
        # Writer w is the server of host w + 1: it stores that host's clients.
        stored_by = {w: [c for c, r in enumerate(clients) if r // rph == w]
                     for w in range(n_servers)}
    else:
        stored_by = {w: [c for c in range(n_clients) if c * n_servers // n_clients == w]
                     for w in range(n_servers)}

    errors = []
    expected_files = {f"hosts_It{it}_Pr{w}.h5" for it in range(args.iterations)
                      for w in range(n_servers)}
    expected_files |= {f"hosts_It{it}.h5" for it in range(args.iterations)}
    present = {f for f in os.listdir(args.out) if f.endswith(".h5")}
    for name in sorted(expected_files - present):
        errors.append(f"missing file {name}")
    for name in sorted(present - expected_files):
        errors.append(f"unexpected file {name}")

    def expected_block(it, c):
        y, x = np.mgrid[0:NY, 0:NX]
        return it * 100000.0 + c * 1000.0 + y * NX + x + 0.5

    checked = 0
    for it in range(args.iterations):
        for w in range(n_servers):
            name = f"hosts_It{it}_Pr{w}.h5"
            if name not in present:
                continue
            with h5py.File(os.path.join(args.out, name), "r") as f:
                if int(f.attrs["iteration"]) != it:
                    errors.append(f"{name}: iteration attribute {f.attrs['iteration']}")
                for var in ("field", "host", "wrank"):
                    got = sorted(f[var].keys()) if var in f else []
                    want = sorted(f"P{c}" for c in stored_by[w])
                    if got != want:
                        errors.append(f"{name}: {var} holds {got}, expected {want}")
                hosts_in_file = set()
                for c in stored_by[w]:
                    rank = clients[c]
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
                    if key in f.get("host", {}):
                        raw = f["host"][key][...].astype(np.uint8).tobytes()
                        host = raw.split(b"\0", 1)[0].decode()
                        hosts_in_file.add(host)
                        checked += 1
                        if host != host_of(rank):
                            errors.append(f"{name}: host/{key} = {host!r}, expected "
                                          f"{host_of(rank)!r}")
                    if key in f.get("wrank", {}):
                        value = f["wrank"][key][...].tolist()
                        checked += 1
                        if value != [rank]:
                            errors.append(f"{name}: wrank/{key} = {value}, expected [{rank}]")
                # A dedicated core only reaches the clients of its own host (shared memory).
                if args.mode == "cores" and len(hosts_in_file) > 1:
                    errors.append(f"{name}: clients of several hosts {sorted(hosts_in_file)}")
        master = f"hosts_It{it}.h5"
        if master in present:
            with h5py.File(os.path.join(args.out, master), "r") as f:
                data = f["field"][...]
                want = np.hstack([expected_block(it, c) for c in range(n_clients)])
                if data.shape != want.shape:
                    errors.append(f"{master}: field shape {data.shape}, expected {want.shape}")
                else:
                    bad = np.argwhere(data != want)
                    for (y, x) in bad[:20]:
                        errors.append(f"{master}: field[{y},{x}] = {data[y, x]}, "
                                      f"expected {want[y, x]}")
                    checked += data.size

    for e in errors[:100]:
        print(f"check_hosts_output: {e}")
    if errors:
        print(f"check_hosts_output: {len(errors)} problem(s) in {args.out}")
        return 1
    print(f"check_hosts_output: {args.mode}: {args.iterations} iterations, {n_clients} clients, "
          f"{n_servers} writers, {checked} values as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
