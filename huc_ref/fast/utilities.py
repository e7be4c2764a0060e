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
from .numbers import ExactRows, first_max, ratio, rounding_bound, row_sums, weighted_row_sums
from .tree import FastTree, on_paths

__all__ = ["FloatRows", "utility_values", "magnitude", "score_error", "LabelFreeMeans", "path_plan", "term_columns",
           "exact_scores"]


class FloatRows:
    """What a family's vectorised form reads (A.1's ``u(p, .)`` on many rows, App. F.4): the
    predictions ``P`` (rows in label order), their subtree masses ``pi``, the tree as arrays
    ``ft``, the exact rows behind ``P`` and the relative error bound ``rel`` of sums over them,
    plus the fast path's helpers."""

    first_max = staticmethod(first_max)
    ratio = staticmethod(ratio)

    def __init__(self, ft: FastTree, P: np.ndarray, rows, pi, exact: ExactRows):
        self.ft, self.P, self.rows, self.exact = ft, P, rows, exact
        self.n, self.K = P.shape
        self.rel = rounding_bound(self.K, exact.p_error)
        self._pi = pi  # subtree masses, shared by every utility: an array, or a function making it

    @property
    def pi(self) -> np.ndarray:
        """The subtree masses of the rows (C.1's ``pi_a``), made when a family first reads them.

        >>> from huc_ref import LabelTree
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> P = np.array([[0.25, 0.25, 0.5]])
        >>> FloatRows(FastTree(t), P, None, None, ExactRows(P)).pi.tolist()  # r, a, y1, y2, y3 (pre-order)
        [[1.0, 0.5, 0.25, 0.25, 0.5]]
        """
        if self._pi is None:
            self._pi = self.ft.subtree_sums(self.P)
        elif callable(self._pi):
            self._pi = self._pi()
        return self._pi

    def atom(self, i: int):
        """The atom index of row ``i`` (for per-atom values, A.1's ``u(p_i, .)`` given per atom), or
        None for an array of predictions.

        >>> from huc_ref import LabelTree
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> P = np.array([[0.25, 0.25, 0.5]])
        >>> FloatRows(FastTree(t), P, np.array([7]), None, ExactRows(P)).atom(0)
        7
        """
        return None if self.rows is None else int(self.rows[i])

    def values_of(self, u: Utility) -> np.ndarray:
        """Another utility's values on the same rows (an aggregated utility's base, App. G).

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> P = np.array([[0.25, 0.25, 0.5]])
        >>> FloatRows(FastTree(t), P, None, None, ExactRows(P)).values_of(Table(t, [0, 1, -1])).tolist()
        [[0.0, 1.0, -1.0]]
        """
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
        U[i] = [float(x) for x in rows.exact.values(u, int(i), rows.atom(int(i)))]
    return U


def magnitude(P: np.ndarray, U: np.ndarray, score: np.ndarray, pi_root: np.ndarray) -> np.ndarray:
    """``sum_y p_y |u(p, y)| / pi_root`` per row, the scale of a score's rounding error (App. F.3's
    scores ``mu_u``); the score itself when no value is negative (no second pass over the rows; one
    row read when ``U`` is one row broadcast to every row, as a table utility's values are).

    >>> P, U = np.array([[0.25, 0.25, 0.5]]), np.array([[0.0, 1.0, -1.0]])
    >>> magnitude(P, U, (P * U).sum(axis=1), np.ones(1)).tolist()  # 1/4 + 1/2, where the score is -1/4
    [0.75]
    """
    if (U[:1] if U.strides[0] == 0 else U).min(initial=0.0) >= 0:
        return score
    return ratio(row_sums(np.abs(P) * np.abs(U)), pi_root)


def score_error(u: Utility, rel: float, score: np.ndarray, magnitude: np.ndarray,
                out: np.ndarray | None = None) -> np.ndarray:
    """A bound on the float error of the scores ``mu_u(p_i)`` (Sec. 2.1): ``magnitude`` is
    ``sum_y p_y |u(p_i, y)| / pi_root``; an aggregated utility's values are themselves means
    ``N / pi`` of its base, each off by at most ``2 rel`` (App. G).  ``out``: where to write it
    (one buffer for the steps: the same numbers).

    >>> from huc_ref import LabelTree, Table
    >>> u = Table(LabelTree.from_children("r", {"r": ["a", "b"]}), [1, -1])
    >>> score_error(u, 2.0**-50, np.array([-0.25]), np.array([0.75])).tolist() == [2.0**-50]  # rel (3/4 + 1/4)
    True
    >>> e = np.zeros(1)
    >>> score_error(u, 0.5, np.array([-0.25]), np.array([0.75]), out=e) is e, e.tolist()  # (3/4 + 1/4 + 0) / 2
    (True, [0.5])
    """
    e = np.abs(score, out=out)
    e += magnitude  # (magnitude + |score| + 2 nesting) rel, in that order
    e += 2.0 * u.nesting
    e *= rel
    return e


class LabelFreeMeans:
    """What the path form (F.4) needs of one utility before any label is read: ``U = u(p_i, .)``,
    the level sums ``N`` of ``p_i U`` (:meth:`FastTree.level_sums`), the score ``mu_u(p_i)`` and
    ``sum_y p_y |u_y| / pi_root`` (:func:`magnitude`).  Labels redrawn under the null
    (:mod:`huc_ref.fast.significance`) reuse all of it; :meth:`on_labels` reads the labels.

    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> ft, P = FastTree(t), np.array([[0.25, 0.75]])
    >>> m = LabelFreeMeans(ft, P, Table(t, [0, 1]), ft.level_sums(P, dfs=True), None, ExactRows(P))
    >>> m.score.tolist(), [x.tolist() for x in m.on_labels(ft, np.array([1]), np.array([[1.0], [0.75]]))]
    ([0.75], [[1.0], [[0.75], [1.0]]])
    """

    def __init__(self, ft: FastTree, X: np.ndarray, u: Utility, S: np.ndarray, rows, exact: ExactRows):
        self.U = utility_values(u, ft, X, rows, lambda: ft.node_table(S), exact)
        self._ft, self._X, self._N = ft, X, None
        # a flat tree: the root's sum is all the path form needs; N is made if something reads it
        root = weighted_row_sums(X, self.U) if ft.H == 1 else self.N[0]
        self.score = ratio(root, S[0])  # the root's mean, on every label's path
        self.magnitude = magnitude(X, self.U, self.score, S[0])

    @property
    def N(self) -> np.ndarray:
        """The level sums of ``p_i U`` (:meth:`FastTree.level_sums`): ``N_{u,a}(p_i)`` (A.3) by level.

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> P = np.array([[0.25, 0.25, 0.5]])
        >>> m = LabelFreeMeans(FastTree(t), P, Table(t, [0, 1, -1]), FastTree(t).level_sums(P, dfs=True), None,
        ...                    ExactRows(P))
        >>> m.N[0].tolist()  # the root: 1/4 - 1/2
        [-0.25]
        """
        if self._N is None:
            self._N = self._ft.level_sums(self._X * self.U)
        return self._N

    def at_labels(self, y: np.ndarray) -> np.ndarray:
        """``u(p_i, y_i)`` (A.1; one take when ``U`` is one row broadcast to every atom).

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> P = np.array([[0.25, 0.25, 0.5]])
        >>> m = LabelFreeMeans(FastTree(t), P, Table(t, [0, 1, -1]), FastTree(t).level_sums(P, dfs=True), None,
        ...                    ExactRows(P))
        >>> m.at_labels(np.array([2])).tolist()  # the label y3
        [-1.0]
        """
        return self.U[0].take(y) if self.U.strides[0] == 0 else self.U[np.arange(len(y)), y]

    def on_labels(self, ft: FastTree, y: np.ndarray, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``u(p_i, y_i)`` and ``mu_{u,a}`` (A.3) on the paths of the labels ``y`` (``pi``: the masses
        there).

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> ft, P = FastTree(t), np.array([[0.25, 0.25, 0.5]])
        >>> m = LabelFreeMeans(ft, P, Table(t, [0, 1, -1]), ft.level_sums(P, dfs=True), None, ExactRows(P))
        >>> u_y, mu = m.on_labels(ft, np.array([1]), np.array([[1.0], [0.5], [0.25]]))  # y2: path r, a, y2
        >>> u_y.tolist(), mu.tolist()  # mu_r = -1/4, mu_a = 1/4 / 1/2, mu_y2 = 1
        ([1.0], [[-0.25], [0.5], [1.0]])
        """
        return self.at_labels(y), ratio(on_paths(ft, y, ft.H + 1, self.N), pi)


def path_plan(ft: FastTree, u: Utility) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where a utility's path terms go (F.4): its relevant node ids ``V_T(u)`` (Def. 3.2), their
    columns (``colmap[a]``: 1.. for a relevant node, -1 otherwise) and the depths ``ks`` that hold one.

    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
    >>> [x.tolist() for x in path_plan(FastTree(t), Table(t, [1, 1, 0]))]  # u is constant below a
    [[0], [1, -1, -1, -1, -1], [0]]
    """
    nodes = np.array([ft.tree.id(v) for v in u.relevant_nodes], dtype=int)
    colmap = np.full(ft.n_nodes, -1, dtype=np.int32)
    colmap[nodes] = np.arange(1, len(nodes) + 1)
    ks = np.unique(ft.depth[nodes]).astype(int)  # a relevant node is internal: above depth H
    return nodes, colmap, ks


def term_columns(ft: FastTree, colmap: np.ndarray, ks: np.ndarray, labels: np.ndarray):
    """``(col_table, kind)`` for :class:`huc_ref.fast.intervals.Rows`: the column of each path
    term (``colmap`` of the path node at each depth in ``ks``, F.4), one column per label where
    the tree keeps its path table, else one per atom (``n x |ks|``, as many as the terms), so
    that nothing is ``depth x labels``.

    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
    >>> ft = FastTree(t)
    >>> nodes, colmap, ks = path_plan(ft, Table(t, [1, 0, 0]))  # relevant: r (column 1), a (column 2)
    >>> [x.tolist() for x in term_columns(ft, colmap, ks, np.array([2, 0]))]  # per label y1, y2, y3
    [[[1, 1, 1], [2, 2, -1]], [2, 0]]
    """
    if ft.path_rows is not None:
        return colmap[ft.path_nodes(np.arange(ft.K), ks)], labels
    return colmap[ft.path_nodes(labels, ks)], np.arange(len(labels))


def exact_scores(u: Utility, exact: ExactRows, rows):
    """``i -> mu_u(p_i)`` exactly (Sec. 2.1's score), for the tie blocks float64 cannot settle
    (:func:`huc_ref.fast.intervals.tie_blocks`); None for a float array (no exact values behind it).

    >>> from fractions import Fraction
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> rows = ExactRows(None, [(Fraction(1, 3), Fraction(2, 3))])
    >>> exact_scores(Table(t, [0, 1]), rows, None)(0), exact_scores(Table(t, [0, 1]), ExactRows(np.ones((1, 2))), None)
    (Fraction(2, 3), None)
    """
    if not exact.settle_scores:
        return None
    return lambda i: exact.score(u, i, i if rows is None else int(rows[i]))
