"""A script that uses no communicator and raises on writer 0 at iteration 3: a failed analysis,
which the run outlives."""


def on_iteration(it):
    if it.server == 0 and it.number == 3:
        raise ValueError(f"writer {it.server} cannot analyse iteration {it.number}")
