"""Dask helpers of damaris4py, as Sidecore provides them (see damaris_dask)."""
