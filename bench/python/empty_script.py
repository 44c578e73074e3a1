"""An empty Sidecore-style script: what calling a script costs the dedicated core."""


def on_iteration(it):
    pass
