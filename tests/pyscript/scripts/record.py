"""Sidecore-style script: saves every block it receives (interior and whole block, with what
the Block says of it) and the sum of field over every writer, computed with the writers'
communicator."""
import json
import os

import numpy as np
import sidecore_script

OUT = os.environ["PYSCRIPT_OUT"]
calls = []


def on_iteration(it):
    calls.append(it.number)
    local = 0.0
    for variable in it.variables:
        for b in it[variable]:
            stem = f"{OUT}/sc_{variable}_P{b.source}_B{b.id}_it{it.number}"
            np.save(stem + "_data.npy", b.data)
            np.save(stem + "_full.npy", b.full)
            with open(stem + ".json", "w") as f:
                json.dump({"position": list(b.position), "global_shape": b.global_shape,
                           "ghosts": b.ghosts, "writeable": bool(b.data.flags.writeable),
                           "server": it.server, "servers": it.servers,
                           "incomplete": it.incomplete}, f)
            if variable == "field":
                local += float(b.data.sum())
    total = it.comm.allreduce(local)
    if it.server == 0:
        with open(f"{OUT}/sc_sum_it{it.number}.txt", "w") as f:
            f.write(repr(total))


def on_finish():
    env = sidecore_script.environment
    with open(f"{OUT}/sc_finish_S{env.server}.json", "w") as f:
        json.dump({"calls": calls, "mode": env.mode, "known_clients": env.known_clients}, f)
