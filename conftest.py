"""Collection of the doctests in huc_ref: the examples of a module that needs an optional extra
are left out where that extra is not installed (the plain CI leg installs none of them)."""

import importlib.util

#: Modules whose doctests need the ``scale`` extra (dask).
collect_ignore = [] if importlib.util.find_spec("dask") else ["huc_ref/fast/scale.py"]
