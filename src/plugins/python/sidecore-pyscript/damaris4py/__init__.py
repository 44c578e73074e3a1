"""damaris4py as Sidecore provides it to <pyscript> files, so that scripts written for Damaris
run unchanged: damaris4py.server (communicators and the job's layout), damaris4py.client
(damaris_initialize and the same questions, for Python simulations) and
damaris4py.dask.damaris_dask (reading DamarisData, assembling Dask arrays) and
damaris4py.dask.damaris_stats (running statistics on a Dask cluster). Any process may import
it; damaris4py.server answers only inside scripts run by Sidecore. See
docs/python_scripts.md."""
