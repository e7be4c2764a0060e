"""Utility values in float64, asked of each family (:meth:`huc_ref.utilities.Utility.vectorised`):
the twin of :mod:`huc_ref.utilities`.

A family's vectorised form takes its decisions (a rank, an argmax of payoffs or of top-1
masses, a margin's sign) in float64 and reports the rows where :func:`rounding_bound` cannot
certify them; those rows are decided here exactly, by the family's own :meth:`values`, on
the rationals behind the row (docs/specification.md §5).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..utilities import Table, Utility
from .numbers import ExactRows, first_max, linear_score, ratio, rounding_bound, row_sums, weighted_row_sums
from .tree import FastTree, on_paths

__all__ = ["FloatRows", "utility_values", "magnitude", "score_error", "LabelFreeMeans", "path_plan", "term_columns",
           "ExactScores", "exact_scores"]


class FloatRows:
    """What a family's vectorised form reads (A.1's ``u(p, .)`` on many rows, App. F.4): the
    predictions ``P`` (rows in label order), their subtree masses ``pi``, the tree as arrays
    ``ft``, the exact rows behind ``P`` and the relative error bound ``rel`` of sums over them,
    plus the fast path's helpers.

    Parameters
    ----------
    ft : FastTree
        The tree.
    P : ndarray of shape (n, K)
        The predictions, in the tree's label order.
    rows : ndarray of int or None
        The atom index of each row (per-atom values), or None for an array of predictions.
    pi : ndarray, callable or None
        The subtree masses, a function making them, or None (made from ``P`` when read).
    exact : ExactRows
        The exact rows behind ``P``.

    Examples
    --------
    >>> from huc_ref import LabelTree
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> P = np.array([[0.25, 0.75]])
    >>> rows = FloatRows(FastTree(t), P, None, None, ExactRows(P))
    >>> rows.n, rows.K, rows.rel == rounding_bound(2, ExactRows(P).p_error)
    (1, 2, True)
    """

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

        Examples
        --------
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

        Parameters
        ----------
        i : int
            The row.

        Returns
        -------
        int or None
            The atom index, or None.

        Examples
        --------
        >>> from huc_ref import LabelTree
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> P = np.array([[0.25, 0.25, 0.5]])
        >>> FloatRows(FastTree(t), P, np.array([7]), None, ExactRows(P)).atom(0)
        7
        """
        return None if self.rows is None else int(self.rows[i])

    def values_of(self, u: Utility) -> np.ndarray:
        """Another utility's values on the same rows (an aggregated utility's base, App. G).

        Parameters
        ----------
        u : Utility
            The utility.

        Returns
        -------
        ndarray of shape (n, K)
            Its values.

        Examples
        --------
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

    Parameters
    ----------
    u : Utility
        The utility.
    ft : FastTree
        The tree.
    P : ndarray of shape (n, K)
        The predictions, in the tree's label order.
    rows : ndarray of int, optional
        The atom index of each row (per-atom values).
    pi : ndarray or callable, optional
        The subtree masses, or a function making them.
    exact : ExactRows, optional
        The exact rows behind ``P``; default: ``P``'s own binary values.

    Returns
    -------
    ndarray of shape (n, K)
        The values (perhaps one row broadcast to every row, as a table's are).

    Examples
    --------
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

    Parameters
    ----------
    P : ndarray of shape (n, K)
        The predictions.
    U : ndarray of shape (n, K)
        Their utility values.
    score : ndarray of shape (n,)
        The scores.
    pi_root : ndarray of shape (n,)
        The rows' sums.

    Returns
    -------
    ndarray of shape (n,)
        The magnitudes.

    Examples
    --------
    >>> P, U = np.array([[0.25, 0.25, 0.5]]), np.array([[0.0, 1.0, -1.0]])
    >>> magnitude(P, U, (P * U).sum(axis=1), np.ones(1)).tolist()  # 1/4 + 1/2, where the score is -1/4
    [0.75]
    """
    if (U[:1] if U.strides[0] == 0 else U).min(initial=0.0) >= 0:
        return score
    products = np.multiply(P, U)  # |p_y u_y| = |p_y| |u_y| (a float product's rounding is sign-symmetric), in
    return ratio(row_sums(np.abs(products, out=products)), pi_root)  # one array of the rows' size


def score_error(u: Utility, rel: float, score: np.ndarray, magnitude: np.ndarray,
                out: np.ndarray | None = None) -> np.ndarray:
    """A bound on the float error of the scores ``mu_u(p_i)`` (Sec. 2.1): ``magnitude`` is
    ``sum_y p_y |u(p_i, y)| / pi_root``; an aggregated utility's values are themselves means
    ``N / pi`` of its base, each off by at most ``2 rel`` (App. G).  ``out``: where to write it
    (one buffer for the steps: the same numbers).

    Parameters
    ----------
    u : Utility
        The utility (its ``nesting``).
    rel : float
        The relative error bound of sums over the rows.
    score : ndarray of shape (n,)
        The scores.
    magnitude : ndarray of shape (n,)
        :func:`magnitude` of the rows.
    out : ndarray of shape (n,), optional
        Where to write the bound.

    Returns
    -------
    ndarray of shape (n,)
        ``(|score| + magnitude + 2 nesting) rel`` (``out`` where given).

    Examples
    --------
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

    Parameters
    ----------
    ft : FastTree
        The tree.
    X : ndarray of shape (n, K)
        The predictions, in the tree's label order.
    u : Utility
        The utility.
    S : ndarray of shape (nodes, n)
        The level sums of ``X`` (:meth:`FastTree.level_sums`, ``dfs=True``).
    rows : ndarray of int or None
        The atom index of each row (per-atom values).
    exact : ExactRows
        The exact rows behind ``X``.

    Examples
    --------
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

        Examples
        --------
        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> P = np.array([[0.25, 0.25, 0.5]])
        >>> m = LabelFreeMeans(FastTree(t), P, Table(t, [0, 1, -1]), FastTree(t).level_sums(P, dfs=True), None,
        ...                    ExactRows(P))
        >>> m.N[0].tolist()  # the root: 1/4 - 1/2
        [-0.25]
        """
        if self._N is None:
            self._N = self._ft.level_sums(self._X, times=self.U)
        return self._N

    def at_labels(self, y: np.ndarray) -> np.ndarray:
        """``u(p_i, y_i)`` (A.1; one take when ``U`` is one row broadcast to every atom).

        Parameters
        ----------
        y : ndarray of int
            The label ids, one a row.

        Returns
        -------
        ndarray
            The values.

        Examples
        --------
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

        Parameters
        ----------
        ft : FastTree
            The tree.
        y : ndarray of int
            The label ids, one a row.
        pi : ndarray of shape (H + 1, n)
            The masses of the path nodes (:func:`huc_ref.fast.tree.on_paths`).

        Returns
        -------
        u_y : ndarray of shape (n,)
            ``u(p_i, y_i)``.
        mu : ndarray of shape (H + 1, n)
            The means on the paths, from the root down.

        Examples
        --------
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

    Parameters
    ----------
    ft : FastTree
        The tree.
    u : Utility
        The utility.

    Returns
    -------
    nodes : ndarray of int
        The relevant node ids.
    colmap : ndarray of int32
        Each node's column, 1.. or -1.
    ks : ndarray of int
        The depths holding a relevant node.

    Examples
    --------
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

    Parameters
    ----------
    ft : FastTree
        The tree.
    colmap : ndarray of int
        Each node's column (:func:`path_plan`).
    ks : ndarray of int
        The depths of the terms.
    labels : ndarray of int
        The atoms' label ids.

    Returns
    -------
    col_table : ndarray
        The column of each path term, ``|ks|`` rows.
    kind : ndarray of int
        What indexes ``col_table``'s columns for each atom: its label, or the atom.

    Examples
    --------
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


class ExactScores:
    """``i -> mu_u(p_i)`` exactly (Sec. 2.1's score, :meth:`ExactRows.score`), for the tie blocks
    float64 cannot settle (:func:`huc_ref.fast.intervals.tie_blocks`), with what that function
    asks of it besides: :meth:`same` (atoms whose scores are certainly equal without an exact
    score), :meth:`keys` (equal keys, equal scores: one exact score serves them), :meth:`scores`
    (many at once), ``width`` (a
    score's cost, in entries of :data:`huc_ref.fast.numbers.ORDER_BUDGET`) and ``budget``
    (how many entries its exact scores may take in all before a group of near-equal scores is
    left whole and reported; None: no limit, for rows whose scores are keys of an exact state,
    :class:`huc_ref.fast.boosted.AuditRows`, which must decide every order).

    Rows that hold the same numbers have the same score (a utility defined at every prediction).
    For a table utility (A.1's linear utilities, ``u(p, y) = b_y``: the class and subtree
    indicators among them) so do rows whose entries at the labels of each value ``b_y`` are the
    same numbers in any order: ``mu_u = sum_y p_y b_y / sum_y p_y`` does not see the order, so
    permuted softmax rows tie without an exact score; and the score of a float row is a sum of
    integer products (:func:`huc_ref.fast.numbers.linear_score`; many rows at once,
    :meth:`scores`), a few us a row, against up to 25 us an entry for the decisions of the other
    families (``width``: 16 entries an entry).

    Parameters
    ----------
    u : Utility
        The utility.
    exact : ExactRows
        The exact rows behind the floats.
    rows : ndarray of int or None
        The atom index of each row (per-atom values).

    Examples
    --------
    >>> from fractions import Fraction
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    >>> P = np.array([[0.25, 0.25, 0.5], [0.25, 0.5, 0.25], [0.5, 0.25, 0.25]])
    >>> s = ExactScores(Table(t, [0, 0, 1]), ExactRows(P), None)  # b = (0, 0, 1): labels a, b may swap
    >>> s(0), s.same(np.array([0, 0]), np.array([1, 2])).tolist(), s.width
    (Fraction(1, 2), [False, False], 3)
    >>> ExactScores(Table(t, [1, 0, 0]), ExactRows(P), None).same(np.array([1]), np.array([2])).tolist()
    [False]
    >>> ExactScores(Table(t, [1, 0, 0]), ExactRows(P), None).same(np.array([0]), np.array([1])).tolist()
    [True]
    """

    def __init__(self, u: Utility, exact: ExactRows, rows):
        from .numbers import ORDER_BUDGET  # (read at each call: the module's current value)
        self.u, self.exact, self.rows = u, exact, rows
        plain = type(exact).score is ExactRows.score and type(exact).row is ExactRows.row
        #: whether equal rows give equal scores (a per-atom utility's rows say nothing of its values)
        self.by_row = plain and u.defined_everywhere
        self.budget = ORDER_BUDGET if plain else None
        table = plain and exact.fractions is None and type(u).values is Table.values
        self.width = u.tree.K * (1 if table else 16)
        self._table = self._columns = None
        if table:  # the values over one denominator, and the labels of each value
            D = math.lcm(*(v.denominator for v in u.b))
            self._table = ([v.numerator * (D // v.denominator) for v in u.b], D)
            self._columns = [np.flatnonzero(np.array([v == w for v in u.b])) for w in sorted(set(u.b))]

    def __call__(self, i: int):
        if self._table is not None:  # (integers alone: no Fraction per entry)
            return linear_score(self.exact.scaled(i), *self._table)
        return self.exact.score(self.u, i, i if self.rows is None else int(self.rows[i]))

    def _canonical(self, X: np.ndarray) -> np.ndarray:
        """Rows ``X`` of a float array in a form whose equality is that of the table's score: the
        entries of each value's labels sorted."""
        if len(self._columns) == 1 or all(len(c) == 1 for c in self._columns):
            return np.sort(X, axis=1) if len(self._columns) == 1 else X
        return np.concatenate([np.sort(X[:, c], axis=1) if len(c) > 1 else X[:, c] for c in self._columns], axis=1)

    def same(self, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
        """Whether atoms ``a[k]`` and ``b[k]`` certainly have equal exact scores ``mu_u`` (Sec. 2.1):
        their rows hold the same numbers, for a table utility in any order among labels of one
        value; None where rows say nothing (a per-atom utility, a boosting state's keys).

        Parameters
        ----------
        a, b : ndarray of int
            The atoms compared, pair by pair.

        Returns
        -------
        ndarray of bool or None
            Per pair, whether the scores are certainly equal; or None.

        Examples
        --------
        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> P = np.array([[0.25, 0.75], [0.75, 0.25], [0.25, 0.75]])
        >>> ExactScores(Table(t, [1, 1]), ExactRows(P), None).same(np.array([0, 0]), np.array([1, 2])).tolist()
        [True, True]
        """
        if not self.by_row:
            return None
        if self._columns is None:
            return self.exact.same_rows(a, b)
        out = np.empty(len(a), dtype=bool)
        P = self.exact.P
        step = max(1, 2**19 // max(1, P.shape[1]))
        for lo in range(0, len(a), step):
            A, B = (self._canonical(np.asarray(P[x[lo:lo + step]], dtype=float)) for x in (a, b))
            np.all(A == B, axis=1, out=out[lo:lo + step])
        return out

    def keys(self, idx: np.ndarray) -> list | None:
        """Hashable keys of atoms ``idx`` such that equal keys give equal scores ``mu_u`` (Sec. 2.1):
        their rows' numbers, as :meth:`same` compares them; None where rows say nothing.

        Parameters
        ----------
        idx : ndarray of int
            The atoms.

        Returns
        -------
        list or None
            The keys, or None.

        Examples
        --------
        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> P = np.array([[0.25, 0.75], [0.75, 0.25], [0.25, 0.75]])
        >>> k = ExactScores(Table(t, [1, 0]), ExactRows(P), None).keys(np.array([0, 1, 2]))
        >>> k[0] == k[2], k[0] == k[1]
        (True, False)
        """
        if not self.by_row:
            return None
        if self.exact.fractions is not None:
            return [tuple(self.exact.fractions[self.exact.offset + int(i)]) for i in idx]
        X = np.asarray(self.exact.P[idx], dtype=float)
        return [row.tobytes() for row in np.ascontiguousarray(self._canonical(X) if self._columns is not None else X)]

    def scores(self, idx: np.ndarray) -> list:
        """The exact scores ``mu_u`` (Sec. 2.1) of atoms ``idx``, each as :meth:`__call__` gives it.  A table utility's
        float rows all at once: each entry ``m 2^e`` (numpy's ``frexp``, ``m`` a 53-bit integer) as
        the integer ``m 2^(e - e_min)`` of its row, then :func:`huc_ref.fast.numbers.linear_score`'s
        two sums in Python integers (object arrays), some ten times faster than row by row.

        Parameters
        ----------
        idx : ndarray of int
            The atoms.

        Returns
        -------
        list of Fraction
            The scores.

        Examples
        --------
        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> s = ExactScores(Table(t, [0, "1/2"]), ExactRows(np.array([[0.25, 0.75], [1e-300, 3.0]])), None)
        >>> s.scores(np.array([0, 1])) == [s(0), s(1)], s.scores(np.array([0]))
        (True, [Fraction(3, 8)])
        """
        if self._table is None or not len(idx):
            return [self(int(i)) for i in idx]
        mantissa, exponent = np.frexp(np.asarray(self.exact.P[idx], dtype=float))
        m = (mantissa * 2.0**53).astype(np.int64).astype(object)  # (exact: 53-bit integers)
        shift = (exponent - exponent.min(axis=1, keepdims=True)).astype(object)
        a = m << shift
        values, D = self._table
        N = (a * np.array(values, dtype=object)).sum(axis=1)
        return [Fraction(int(n), D * int(total)) for n, total in zip(N, a.sum(axis=1))]


def exact_scores(u: Utility, exact: ExactRows, rows) -> ExactScores | None:
    """``i -> mu_u(p_i)`` exactly (Sec. 2.1's score; :class:`ExactScores`), for the tie blocks
    float64 cannot settle (:func:`huc_ref.fast.intervals.tie_blocks`): from the rationals behind
    the floats, or, for a float array, from the floats' own binary values; None where the
    caller keeps such blocks whole (``exact.settle_scores`` False: a boosting run's float rows).

    Parameters
    ----------
    u : Utility
        The utility.
    exact : ExactRows
        The exact rows behind the floats.
    rows : ndarray of int or None
        The atom index of each row (per-atom values).

    Returns
    -------
    ExactScores or None
        The scores, or None.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> rows = ExactRows(None, [(Fraction(1, 3), Fraction(2, 3))])
    >>> u = Table(t, [0, 1])
    >>> exact_scores(u, rows, None)(0), exact_scores(u, ExactRows(np.ones((1, 2))), None)(0)  # (1, 1): 1/2 each
    (Fraction(2, 3), Fraction(1, 2))
    >>> exact_scores(u, ExactRows(np.ones((1, 2)), settle_scores=False), None) is None
    True
    """
    if not exact.settle_scores:
        return None
    return ExactScores(u, exact, rows)
