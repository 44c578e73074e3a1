"""Raises at odd iterations (a ZeroDivisionError, then a ValueError), after leaving a marker
that it was called."""
import os

OUT = os.environ["PYSCRIPT_OUT"]
os.makedirs(f"{OUT}/fails", exist_ok=True)


def on_iteration(it):
    open(f"{OUT}/fails/it{it.number}", "w").close()
    if it.number == 1:
        return 1 / 0
    if it.number % 2:
        raise ValueError(f"odd iteration {it.number}")
