"""Counts the iterations a stream run stored, and adds the count to the run's result line.

usage: count_stored.py OUTPUT_DIR SIMULATION BYTES ITERATIONS RESULT_LINE [STDERR_FILE]

An iteration counts as stored when the file <SIMULATION>_It<i>_Pr0.h5 holds the dataset
field/P0 (one domain per client, Damaris's name) of BYTES bytes whose first 8 bytes hold i (the client stamps every block with its
iteration). STDERR_FILE, if given, is searched for the finalize summaries of the server and the
client. Prints RESULT_LINE (JSON) with a "stored" object added.
"""
import glob
import json
import os
import re
import sys

import h5py
import numpy


def check_files(directory, simulation, size, iterations):
    stored, wrong, empty = [], [], []
    for i in range(iterations):
        path = os.path.join(directory, f"{simulation}_It{i}_Pr0.h5")
        if not os.path.exists(path):
            continue
        with h5py.File(path, "r") as f:
            dataset = f.get("field/P0")
            if dataset is None:
                empty.append(i)  # the file of an iteration whose block was dropped
                continue
            stamp = int(numpy.asarray(dataset[:8], dtype=numpy.uint8).view("<i8")[0])
            if dataset.size == size and stamp == i:
                stored.append(i)
            else:
                wrong.append(i)
    files = len(glob.glob(os.path.join(directory, f"{simulation}_It*_Pr*.h5")))
    return {
        "files": files,
        "iterations": len(stored),
        "missing": [i for i in range(iterations) if i not in stored and i not in wrong],
        "wrong": wrong,
        "files_without_block": len(empty),
    }


# The summaries printed at damaris_finalize (log level info); the numbers are what we keep.
PATTERNS = {
    # "X bytes processed, T s in stores" (before 5747e4b: "X bytes stored in T s").
    "server": re.compile(r"(\d+) iterations, (\d+) blocks, (\d+) bytes "
                         r"(?:processed, ([0-9.eE+-]+) s in stores|stored in ([0-9.eE+-]+) s); "
                         r"buffer high water (\d+) bytes"),
    "buffered": re.compile(r"moved (\d+) bytes into server memory \(at most \d+ bytes at once\) "
                           r"and (\d+) bytes into (\d+) spill file"),
    "skipped": re.compile(r"(\d+) iteration\(s\) skipped under policy=\"skip\"; (\d+) blocks"),
    "incomplete": re.compile(r"(\d+) iteration\(s\) stored incomplete"),
}


def read_reports(path):
    found = {}
    if not path or not os.path.exists(path):
        return found
    with open(path, errors="replace") as f:
        text = f.read()
    m = PATTERNS["server"].search(text)
    if m:
        found["server_iterations"] = int(m.group(1))
        found["server_bytes"] = int(m.group(3))
        found["server_seconds_in_stores"] = float(m.group(4) or m.group(5))
        found["server_high_water"] = int(m.group(6))
    m = PATTERNS["buffered"].search(text)
    found["bytes_to_server_memory"] = int(m.group(1)) if m else 0
    found["bytes_spilled"] = int(m.group(2)) if m else 0
    m = PATTERNS["skipped"].search(text)
    found["client_iterations_skipped"] = int(m.group(1)) if m else 0
    m = PATTERNS["incomplete"].search(text)
    found["server_iterations_incomplete"] = int(m.group(1)) if m else 0
    return found


def main(argv):
    if len(argv) not in (6, 7):
        sys.stderr.write(__doc__)
        return 2
    directory, simulation, size, iterations, line = argv[1:6]
    result = json.loads(line)
    stored = check_files(directory, simulation, int(size), int(iterations))
    stored.update(read_reports(argv[6] if len(argv) == 7 else None))
    result["stored"] = stored
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
