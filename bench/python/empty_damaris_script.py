# An empty Damaris-style script (the whole file runs at every iteration with DamarisData).
pass
