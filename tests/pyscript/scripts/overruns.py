"""Overruns its time-limit at iteration 1: spins in Python (OVERRUN=spin) or sleeps in C
(OVERRUN=block), after leaving a marker that it was called."""
import os
import time

OUT = os.environ["PYSCRIPT_OUT"]
os.makedirs(f"{OUT}/overruns", exist_ok=True)


def on_iteration(it):
    open(f"{OUT}/overruns/it{it.number}", "w").close()
    if it.number != 1:
        return
    if os.environ.get("OVERRUN") == "block":
        time.sleep(3600)
    while True:
        pass
