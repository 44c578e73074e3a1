"""A script whose writers sum the field together (allreduce over the writers' communicator),
where writer 0 raises at iteration 3 before it takes part: writer 1 waits for it in the sum."""


def on_iteration(it):
    local = float(sum(b.data.sum() for b in it["field"]))
    if it.server == 0 and it.number == 3:
        raise ValueError(f"writer {it.server} cannot sum iteration {it.number}")
    it.comm.allreduce(local)
