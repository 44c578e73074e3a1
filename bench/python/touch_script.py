"""A Sidecore-style script that makes every block's NumPy view and does nothing with it: what
calling a script that uses its blocks costs the dedicated core before any computation."""


def on_iteration(it):
    for blocks in it.blocks.values():
        for block in blocks:
            block.data
