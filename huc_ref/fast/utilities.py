"""Utility values in float64, asked of each family (:meth:`huc_ref.utilities.Utility.vectorised`):
the twin of :mod:`huc_ref.utilities`.

A family's vectorised form takes its decisions (a rank, an argmax of payoffs or of top-1
masses, a margin's sign) in float64 and reports the rows where :func:`rounding_bound` cannot
certify them; those rows are decided here exactly, by the family's own :meth:`values`, on
the rationals behind the row (docs/specification.md §5).
"""

from __future__ import annotations

import numpy as np

from ..utilities import Utility
from .numbers import ExactRows, first_max, ratio, rounding_bound
from .tree import FastTree

__all__ = ["FloatRows", "utility_values", "magnitude", "score_error"]


class FloatRows:
    """What a family's vectorised form reads: the predictions ``P`` (rows in label order), their
    subtree masses ``pi``, the tree as arrays ``ft``, the exact rows behind ``P`` and the
    relative error bound ``rel`` of sums over them, plus the fast path's helpers."""

    first_max = staticmethod(first_max)
    ratio = staticmethod(ratio)

    def __init__(self, ft: FastTree, P: np.ndarray, rows, pi, exact: ExactRows):
        self.ft, self.P, self.rows, self.exact = ft, P, rows, exact
        self.n, self.K = P.shape
        self.rel = rounding_bound(self.K, exact.p_error)
        self.pi = ft.subtree_sums(P) if pi is None else pi  # subtree masses, shared by every utility

    def atom(self, i: int):
        """The atom index of row ``i`` (for per-atom values), or None for an array of predictions."""
        return None if self.rows is None else int(self.rows[i])

    def values_of(self, u: Utility) -> np.ndarray:
        """Another utility's values on the same rows (an aggregated utility's base, App. G)."""
        return _values(u, self)


def utility_values(u: Utility, ft: FastTree, P: np.ndarray, rows: np.ndarray | None = None,
                   pi: np.ndarray | None = None, exact: ExactRows | None = None) -> np.ndarray:
    """``u(p_i, .)`` for every row of ``P`` (label order), vectorised by the family (docs/specification.md §5).

    A decision is taken in float64 where :func:`rounding_bound` certifies it; where it does
    not, by the exact utility on the rationals behind the row (``exact``; default: the float
    row's binary values).

    >>> from huc_ref import LabelTree
    >>> from huc_ref.utilities import TopK
    >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    >>> utility_values(TopK(t, 1), FastTree(t), np.array([[0.2, 0.5, 0.3], [0.4, 0.4, 0.2]])).tolist()
    [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    >>> utility_values(TopK(t, 1), FastTree(t), np.array([[1e-300, 2e-300, 1.0]]) * [[1e299, 1e299, 1e-9]]).tolist()
    [[0.0, 1.0, 0.0]]
    """
    return _values(u, FloatRows(ft, P, rows, pi, ExactRows(P) if exact is None else exact))


def _values(u: Utility, rows: FloatRows) -> np.ndarray:
    U, unsure = u.vectorised(rows)
    if unsure is None or not unsure.any():
        return U
    U = np.array(U)  # a writable copy (a table's values are one broadcast row)
    for i in np.flatnonzero(unsure):  # decided exactly, by the utility itself
        U[i] = [float(x) for x in u.values(rows.exact.row(int(i)), rows.atom(int(i)))]
    return U


def magnitude(P: np.ndarray, U: np.ndarray, score: np.ndarray, pi_root: np.ndarray) -> np.ndarray:
    """``sum_y p_y |u(p, y)| / pi_root`` per row, the scale of a score's rounding error; the score
    itself when no value is negative (no second pass over the rows)."""
    if U.min(initial=0.0) >= 0:
        return score
    return ratio((np.abs(P) * np.abs(U)).sum(axis=1), pi_root)


def score_error(u: Utility, rel: float, score: np.ndarray, magnitude: np.ndarray) -> np.ndarray:
    """A bound on the float error of the scores ``mu_u(p_i)`` (Sec. 2.1): ``magnitude`` is
    ``sum_y p_y |u(p_i, y)| / pi_root``; an aggregated utility's values are themselves means
    ``N / pi`` of its base, each off by at most ``2 rel`` (App. G)."""
    return rel * (magnitude + np.abs(score) + 2.0 * u.nesting)


