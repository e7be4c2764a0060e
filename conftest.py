"""pytest configuration: the optional compiled kernels are collected only where numba is installed."""

import importlib.util

collect_ignore = [] if importlib.util.find_spec("numba") else ["huc_ref/kernels.py"]
