"""The fast path: the same audit and boosting as the exact engine, vectorised in numpy float64.

Module for module it mirrors the exact engine:

============================  ==============================================
exact                         fast (float64)
============================  ==============================================
:mod:`huc_ref.rational`       :mod:`huc_ref.fast.numbers` (error bounds, exact fallbacks)
:mod:`huc_ref.tree`           :mod:`huc_ref.fast.tree` (the tree as arrays, F.4)
:mod:`huc_ref.utilities`      :mod:`huc_ref.fast.utilities` (each family's vectorised form)
:mod:`huc_ref.intervals`      :mod:`huc_ref.fast.intervals` (Algorithm 2 on all columns)
:mod:`huc_ref.distribution`   :mod:`huc_ref.fast.sample` (a labelled sample as arrays)
:mod:`huc_ref.audit`          :mod:`huc_ref.fast.audit`
:mod:`huc_ref.boost`          :mod:`huc_ref.fast.boost`
============================  ==============================================

and :mod:`huc_ref.fast.kernels` holds the optional compiled kernels (the numba extra).
Every comparison that decides the answer is made with a rigorous bound on its float64
error, and exactly where the bound cannot decide; agreement with the exact engine is
property-tested (tests/test_fast.py, tests/test_twins.py).
"""

from .audit import CHUNK, ROW_SUM_TOLERANCE, THREADS, audit, audit_distribution, numba_available
from .boost import boost, replay
from .numbers import SMALLEST_NORMAL, TOLERANCES, UNIT_ROUNDOFF, ExactRows, rounding_bound
from .sample import Sample, audit_sample
from .tree import PATH_TABLE_CELLS, FastTree
from .utilities import utility_values

__all__ = ["TOLERANCES", "ROW_SUM_TOLERANCE", "UNIT_ROUNDOFF", "SMALLEST_NORMAL", "rounding_bound", "ExactRows",
           "CHUNK", "THREADS", "PATH_TABLE_CELLS", "FastTree", "utility_values", "audit", "audit_distribution", "boost",
           "replay", "numba_available", "Sample", "audit_sample"]
