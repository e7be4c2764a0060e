"""Float64 numbers for the fast path: the twin of :mod:`huc_ref.rational`.

Floating point enters in the predictions, the utilities' decisions and the sums.  Every
comparison whose outcome decides the answer is made with a rigorous, relative bound on the
float64 error of the quantities compared (:func:`rounding_bound`); where the bound cannot
decide, the comparison is made exactly on the rationals behind the floats (:class:`ExactRows`).
Numbers float64 cannot hold are refused with a :class:`HUCError`, never rounded silently
(:func:`floats`).
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

from ..errors import HUCError

__all__ = ["TOLERANCES", "ORDER_BUDGET", "UNIT_ROUNDOFF", "SMALLEST_NORMAL", "rounding_bound", "ExactRows", "logsumexp",
           "softmax_rows", "first_max", "first_max_rows", "row_sums", "row_extremes", "weighted_row_sums", "sum_levels",
           "block_sums", "group_sums", "label_cells", "gathered_equal", "ratio", "floats", "as_floats", "entries",
           "prediction_shape", "probability_rows", "subgroup_column", "linear_score"]


#: Tolerances of the fast path, each with its reason (STYLE: kept in one place).
TOLERANCES = {
    # the smallest probability kept: p_y > 0 always holds exactly (A.2), but a long boosting
    # run can push a leaf below what float64 holds; it is floored here instead of reaching 0/0
    "floor": float(np.finfo(float).tiny),
}

#: How many entries of prediction rows the exact scores of one sort may read (App. F.3's order of
#: scores float64 cannot tell apart, :func:`huc_ref.fast.intervals.tie_blocks`), a row of ``K``
#: entries counting ``K`` for a table utility (integer sums, a few us a row) and ``16 K`` for the
#: others (their decisions taken on Fractions, up to 25 us an entry at ``K`` = 1,000): about a
#: second a sort at most (100,000 rows of five classes rounded to three decimals, 5,000 groups
#: of near-equal scores over three utilities: 3 s where keeping the groups whole took 0.3 s).
#: Groups beyond it stay whole, and the result reports them with a bound on their effect
#: (:class:`huc_ref.results.NearTies`).
ORDER_BUDGET = 2**18

#: The unit roundoff of float64: every operation is exact up to a relative error of this.
UNIT_ROUNDOFF = 2.0 ** -53

#: The smallest positive normal float64: a positive probability below it loses its digits.
SMALLEST_NORMAL = float(np.finfo(float).tiny)


def rounding_bound(K: int, p_error: float = 0.0) -> float:
    """A relative bound on the float64 error of a sum of ``K`` products ``p_y a_y`` (App. F.3's
    scores, payoffs and subtree masses), relative to ``sum_y |p_y a_y|``.

    Higham's ``gamma_K = K u / (1 - K u)`` bounds the rounding of the sum; one more ``u`` each
    covers the rounding of a constant ``a_y`` (e.g. 1/3) and of a final division; ``p_error``
    is the relative error of the entries ``p_y`` themselves (0 for a float array taken as
    given, ``u`` for rationals rounded to floats).  The result is doubled for margin.

    Parameters
    ----------
    K : int
        The products summed.
    p_error : float, default 0.0
        The relative error of the entries ``p_y``.

    Returns
    -------
    float
        The bound.

    Examples
    --------
    >>> f"{rounding_bound(1):.4e}", f"{rounding_bound(1, 2.0 ** -53):.4e}"  # 2 gamma_5; plus 4u
    ('1.1102e-15', '1.5543e-15')
    >>> rounding_bound(100) < 1e-13 < rounding_bound(10**4)
    True
    """
    return 2.0 * ((K + 4) * UNIT_ROUNDOFF / (1.0 - (K + 4) * UNIT_ROUNDOFF) + 2.0 * p_error)


class ExactRows:
    """The exact predictions behind a float array, for the comparisons floats cannot decide
    (App. F.3's scores and the decisions of the utility families, docs/specification.md §5).

    Given the rationals a float array was rounded from (``p_error`` = :data:`UNIT_ROUNDOFF`),
    :attr:`exact` is True and :meth:`row` returns them.  Given only the float array (``p_error``
    0), :meth:`row` gives its binary values, the exact numbers the array holds (as
    :meth:`huc_ref.distribution.FiniteDistribution.from_floats` reads them for the exact
    engine).  Either way, undecided decisions are taken on these rows, and scores float64
    cannot order are put in order by their exact values (:meth:`score`, each row divided by
    its exact sum, as the fast path divides by the float sum), unless ``settle_scores`` is
    False.

    Parameters
    ----------
    P : array-like of shape (n, K) or None
        The float rows.
    fractions : sequence of tuple of Fraction, optional
        The rationals the rows were rounded from.
    offset : int, default 0
        The index in ``fractions`` of row 0.
    settle_scores : bool, default True
        Split tie blocks float64 cannot settle by exact scores (False: keep them whole).

    Examples
    --------
    >>> ExactRows(None, [(Fraction(1, 3), Fraction(2, 3))]).row(0)
    (Fraction(1, 3), Fraction(2, 3))
    >>> ExactRows(np.array([[0.25, 0.75]])).exact, ExactRows(np.array([[0.25, 0.75]])).p_error
    (False, 0.0)
    """

    def __init__(self, P, fractions=None, offset: int = 0, settle_scores: bool = True):
        self.P, self.fractions, self.offset = P, fractions, offset
        self.exact = fractions is not None
        self.p_error = UNIT_ROUNDOFF if self.exact else 0.0
        #: whether tie blocks float64 cannot settle are split by exact scores; False keeps them
        #: whole, as a replay on float rows does (a boosting run's rows, :mod:`huc_ref.fast.boost`)
        self.settle_scores = settle_scores and (P is not None or self.exact)

    def view(self, start: int) -> ExactRows:
        """The same rows from ``start`` on (a chunk of App. F.4's sample pass), indexed from 0.

        Parameters
        ----------
        start : int
            The first row kept.

        Returns
        -------
        ExactRows
            The rows.

        Examples
        --------
        >>> ExactRows(None, [(Fraction(1, 3), Fraction(2, 3)), (Fraction(1, 4), Fraction(3, 4))]).view(1).row(0)
        (Fraction(1, 4), Fraction(3, 4))
        """
        return ExactRows(None if self.P is None else self.P[start:], self.fractions, self.offset + start,
                         self.settle_scores)

    def row(self, i: int) -> tuple:
        """Row ``i`` as the exact rationals it was rounded from, or as its floats' binary values
        (not normalised: a decision of A.1's families does not depend on a row's scale).

        Parameters
        ----------
        i : int
            The row.

        Returns
        -------
        tuple of Fraction
            Its exact entries.

        Examples
        --------
        >>> ExactRows(np.array([[0.1, 0.9]])).row(0)[0] == Fraction(3602879701896397, 36028797018963968)
        True
        """
        if self.fractions is None:
            return tuple(Fraction(float(x)) for x in self.P[i])
        return tuple(self.fractions[self.offset + i])

    def values(self, u, i: int, atom: int | None = None) -> tuple:
        """``u(p_i, .)`` decided exactly on row ``i`` (A.1): the family's values on the rationals
        behind it (a boosting state's rows, :class:`huc_ref.fast.boosted.AuditRows`, answer by the
        family's :meth:`~huc_ref.utilities.Utility.decide` on their exact state).

        Parameters
        ----------
        u : Utility
            The utility.
        i : int
            The row.
        atom : int, optional
            The atom index (per-atom values).

        Returns
        -------
        tuple of Fraction
            The values.

        Examples
        --------
        >>> from huc_ref import LabelTree, TopK
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> ExactRows(None, [(Fraction(1, 2), Fraction(1, 2))]).values(TopK(t, 1), 0)  # the tie: label order
        (Fraction(1, 1), Fraction(0, 1))
        """
        return u.values(self.row(i), atom)

    def score(self, u, i: int, atom: int):
        """``mu_u`` of row ``i`` exactly (Sec. 2.1's ``sum_y p_y u(p, y)``, the row divided by its
        exact sum: the float rows of an audit sum to 1 only within their tolerance), for the tie
        blocks float64 cannot settle; an object that compares as the exact score does (a boosting
        state's rows, :class:`huc_ref.fast.boosted.AuditRows`, answer with keys of their exact state).

        Parameters
        ----------
        u : Utility
            The utility.
        i : int
            The row.
        atom : int
            The atom index (per-atom values).

        Returns
        -------
        Fraction
            The score.

        Examples
        --------
        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> ExactRows(None, [(Fraction(1, 4), Fraction(3, 4))]).score(Table(t, [0, 1]), 0, 0)
        Fraction(3, 4)
        >>> ExactRows(np.array([[0.5, 1.0]])).score(Table(t, [0, 1]), 0, 0)  # 1 / (1/2 + 1)
        Fraction(2, 3)
        """
        if self.fractions is not None:
            row = self.row(i)
            total = sum(row, Fraction(0))
            score = u.score(row, atom)
            return score if total == 1 else score / total
        # a float row: its values over their common denominator D are integers b_y, so with the row as
        # integers a_y (scaled) the score is sum_y a_y b_y / (D sum_y a_y): one Fraction, not a Fraction
        # sum of K products
        values = u.values(self.row(i), atom)
        D = math.lcm(*(v.denominator for v in values))
        return linear_score(self.scaled(i), [v.numerator * (D // v.denominator) for v in values], D)

    def scaled(self, i: int) -> list:
        """Float row ``i`` as integers over one power of two (each entry ``m / 2^e`` times the
        largest ``2^e``): the same ratios, so the same scores (Sec. 2.1's ``mu_u`` divides by the
        row's sum), in integer arithmetic.

        Parameters
        ----------
        i : int
            The row.

        Returns
        -------
        list of int
            The integers.

        Examples
        --------
        >>> ExactRows(np.array([[0.25, 0.5, 0.0]])).scaled(0)
        [1, 2, 0]
        """
        pairs = [float(x).as_integer_ratio() for x in self.P[i]]
        top = max(d for _, d in pairs).bit_length()
        return [m << (top - d.bit_length()) for m, d in pairs]

    def same_rows(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether rows ``a[k]`` and ``b[k]`` hold the same exact numbers, for every ``k``: then every
        utility defined at every prediction gives them one score (an exact tie of App. F.3, no
        exact score needed).  Float rows are compared as floats (``-0.0 == 0.0``, one value), a few
        thousand pairs at a time.

        Parameters
        ----------
        a, b : ndarray of int
            The rows compared, pair by pair.

        Returns
        -------
        ndarray of bool
            Per pair, whether they hold the same numbers.

        Examples
        --------
        >>> rows = ExactRows(np.array([[0.25, 0.75], [0.25, 0.75], [0.5, 0.5]]))
        >>> rows.same_rows(np.array([0, 0]), np.array([1, 2])).tolist()
        [True, False]
        """
        if self.fractions is not None:
            return np.array([tuple(self.fractions[self.offset + int(i)]) == tuple(self.fractions[self.offset + int(j)])
                             for i, j in zip(a, b)], dtype=bool)
        out = np.empty(len(a), dtype=bool)
        step = max(1, _SAME_ROWS_CELLS // max(1, self.P.shape[1]))
        for lo in range(0, len(a), step):
            ia, ib = a[lo:lo + step], b[lo:lo + step]
            np.all(np.asarray(self.P[ia]) == np.asarray(self.P[ib]), axis=1, out=out[lo:lo + step])
        return out


def linear_score(a: list, b: list, D: int = 1) -> Fraction:
    """``sum_y a_y b_y / (D sum_y a_y)`` for integers: Sec. 2.1's score ``mu_u(p) = sum_y p_y u(p, y)``
    of a row ``a`` (:meth:`ExactRows.scaled`, divided by its sum) with values ``b_y / D``.

    Parameters
    ----------
    a : list of int
        The row, as integers.
    b : list of int
        The values' numerators over ``D``.
    D : int, default 1
        The values' common denominator.

    Returns
    -------
    Fraction
        The score.

    Examples
    --------
    >>> linear_score([1, 2, 0], [0, 1, 1], 2)  # (1/3, 2/3, 0) with values (0, 1/2, 1/2)
    Fraction(1, 3)
    """
    return Fraction(sum(x * v for x, v in zip(a, b) if x and v), D * sum(a))


#: Numbers per side that :meth:`ExactRows.same_rows` compares at a time (4 MiB).
_SAME_ROWS_CELLS = 2**19


def logsumexp(x: np.ndarray) -> np.ndarray:
    """``log sum_j e^{x_j}`` per row, kept as a column (App. E.1's update in the log domain).

    Parameters
    ----------
    x : ndarray of shape (n, m)
        The rows.

    Returns
    -------
    ndarray of shape (n, 1)
        The values.

    Examples
    --------
    >>> logsumexp(np.log(np.array([[0.25, 0.75], [1.0, 3.0]]))).round(12).ravel().tolist()
    [0.0, 1.38629436112]
    """
    top = row_extremes(x)[0][:, None]
    return top + np.log(row_sums(np.exp(x - top)))[:, None]


def softmax_rows(x: np.ndarray) -> np.ndarray:
    """``softmax`` per row, computed stably (UC-Boost's update, Sec. 3.2 and App. E).

    Parameters
    ----------
    x : ndarray of shape (n, m)
        The rows.

    Returns
    -------
    ndarray of shape (n, m)
        The probability rows.

    Examples
    --------
    >>> softmax_rows(np.log(np.array([[1.0, 3.0]]))).tolist()
    [[0.25, 0.75]]
    """
    e = np.exp(x - row_extremes(x)[0][:, None])
    return e / row_sums(e)[:, None]


def row_extremes(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(max_j X[i, j], min_j X[i, j])`` per row (E.2's ``max_j h_j - min_j h_j`` in ``Lambda``): for up to
    16 columns one pass per column (as
    :func:`row_sums`: numpy's reduction along a short last axis is many times slower), else numpy's.

    Parameters
    ----------
    X : ndarray of shape (n, m)
        The rows.

    Returns
    -------
    hi, lo : ndarray of shape (n,)
        The rows' largest and smallest entries.

    Examples
    --------
    >>> [x.tolist() for x in row_extremes(np.array([[0.5, -1.0, 2.0], [3.0, 3.0, 0.0]]))]
    [[2.0, 3.0], [-1.0, 0.0]]
    """
    if X.shape[1] > 16 or X.shape[1] == 0:
        return X.max(axis=1), X.min(axis=1)
    hi, lo = X[:, 0].copy(), X[:, 0].copy()
    for j in range(1, X.shape[1]):
        np.maximum(hi, X[:, j], out=hi)
        np.minimum(lo, X[:, j], out=lo)
    return hi, lo


def first_max(values: np.ndarray, error: np.ndarray | None = None, rel: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the first column of largest value, and the rows where that choice is uncertain (K.2's top-1 decisions).

    ``error[i, j]`` bounds the float error of ``values[i, j]`` (or, for nonnegative values, the
    relative bound ``rel``: ``error = rel * values``): the choice is certain when every other
    column is below the maximum by more than the two errors together; the uncertain rows
    are left to an exact decision.

    Parameters
    ----------
    values : ndarray of shape (n, m)
        The values.
    error : ndarray of shape (n, m), optional
        Bounds on their float errors.
    rel : float, default 0.0
        The relative bound, where ``error`` is not given (nonnegative values).

    Returns
    -------
    j : ndarray of int
        Per row, the first column of largest value.
    unsure : ndarray of bool
        Per row, whether that choice is uncertain.

    Examples
    --------
    >>> j, unsure = first_max(np.array([[0.3, 0.1 + 0.2], [0.5, 0.2]]), np.full((2, 2), 1e-15))
    >>> j.tolist(), unsure.tolist()  # 0.1 + 0.2 rounds above 0.3: float64 cannot order them
    ([1, 0], [True, False])
    >>> first_max(np.array([[0.3, 0.1 + 0.2], [0.5, 0.2]]), rel=1e-15)[1].tolist()
    [True, False]
    """
    j = np.argmax(values, axis=1)
    rows = np.arange(len(values))
    top = values[rows, j]
    if error is None:  # x >= top - rel (top + x)  <=>  x >= top (1 - rel) / (1 + rel): one comparison per entry
        close = values >= (top * ((1.0 - rel) / (1.0 + rel)))[:, None]
    else:
        close = values >= (top - error[rows, j])[:, None] - error
    return j, np.count_nonzero(close, axis=1) > 1  # the maximum itself is one of them


#: From this many atoms :func:`first_max_rows` reads a block of candidates one candidate at a time
#: (a few numpy calls per candidate); below it, whole.  ``python bench/fast_audit.py``: a pass per
#: candidate at every size made numpy's K = 1,000 audit 2.1-2.5x as long (chunks of 2,097 rows,
#: hundreds of candidates).
_CANDIDATE_PASS_ROWS = 8192


def first_max_rows(rows, rel: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`first_max` of nonnegative values given candidate by candidate (K.2's top-1 choice among
    the cut's subtree masses, the first of equal largest): ``rows[k][i]`` is
    candidate ``k``'s value for atom ``i`` (rows of subtree sums, or one block of rows of the
    level sums, :meth:`huc_ref.fast.tree.FastTree.level_sums`, read in place: no transposed
    copy).  Returns per atom the first candidate of largest value, whether another is within the
    relative bound ``rel`` of it (then an exact decision is needed), and the largest value.

    One pass per candidate, each over contiguous numbers: the largest value, then, from the last
    candidate to the first, which values lie within ``rel`` of it (``x >= top - rel (top + x)``, as
    :func:`first_max` compares): their count, and the first of them, which is the largest where it
    is the only one; the few atoms with two or more take ``argmax`` of their own values (numpy's
    ``argmax(axis=0)`` of a whole block would copy it first).  A block of fewer than
    :data:`_CANDIDATE_PASS_ROWS` atoms is reduced whole along the candidates instead: the same
    three arrays in a few calls, however many candidates.

    Parameters
    ----------
    rows : sequence of ndarray, or ndarray of shape (candidates, n)
        Candidate ``k``'s values for every atom, candidate by candidate; nonnegative.
    rel : float
        The relative bound of the values' errors.

    Returns
    -------
    j : ndarray of int
        Per atom, the first candidate of largest value.
    unsure : ndarray of bool
        Per atom, whether another candidate is within ``rel`` of it.
    top : ndarray
        Per atom, the largest value.

    Examples
    --------
    >>> j, unsure, top = first_max_rows([np.array([0.3, 0.5]), np.array([0.1 + 0.2, 0.2])], rel=1e-15)
    >>> j.tolist(), unsure.tolist(), top.tolist()
    ([1, 0], [True, False], [0.30000000000000004, 0.5])
    >>> [x.tolist() for x in first_max_rows(np.array([[0.3, 0.5, 0.25], [0.1 + 0.2, 0.2, 0.25]]), rel=1e-15)]
    [[1, 0, 0], [True, False, True], [0.30000000000000004, 0.5, 0.25]]
    """
    whole = isinstance(rows, np.ndarray) and rows.ndim == 2 and len(rows) and rows.shape[1] < _CANDIDATE_PASS_ROWS
    if whole:  # a block of few atoms (a wide cut, K = 1,000: chunks of 2,097 rows): a pass per candidate would
        top = rows.max(axis=0)  # be one numpy call per few numbers
    else:
        top = rows[0].copy()
        for row in rows[1:]:
            np.maximum(top, row, out=top)
    low = top * ((1.0 - rel) / (1.0 + rel))  # x >= top - rel (top + x)  <=>  x >= top (1 - rel) / (1 + rel)
    if whole:
        near = rows >= low
        unsure = np.count_nonzero(near, axis=0) > 1
        j = near.argmax(axis=0)  # where one value is near the largest, it is the largest
    else:
        j = np.zeros(len(top), dtype=np.intp)
        close = np.zeros(len(top), dtype=np.uint8 if len(rows) < 255 else np.intp)
        near = np.empty(len(top), dtype=bool)
        for k in range(len(rows) - 1, -1, -1):  # the first candidate near the largest is written last
            np.greater_equal(rows[k], low, out=near)
            np.copyto(j, k, where=near)
            close += near
        unsure = close > 1  # (the largest is near itself)
    idx = np.flatnonzero(unsure)
    if len(idx):  # the first of equal largest values (np.argmax's rule)
        j[idx] = np.array([row[idx] for row in rows]).argmax(axis=0)
    return j, unsure, top


def row_sums(X: np.ndarray) -> np.ndarray:
    """``sum_j X[i, j]`` per row (C.1's subtree sums, Sec. 2.1's scores): for up to 16 columns
    added left to right, one strided pass per column (numpy's reduction along a short last axis
    is about 15 times slower), else numpy's sum.

    Parameters
    ----------
    X : ndarray of shape (n, m)
        The rows.

    Returns
    -------
    ndarray of shape (n,)
        The sums.

    Examples
    --------
    >>> row_sums(np.array([[0.25, 0.5], [1.0, 2.0]])).tolist()
    [0.75, 3.0]
    """
    if X.shape[1] > 16 or X.shape[1] == 0:
        return X.sum(axis=1)
    out = X[:, 0].copy()
    for j in range(1, X.shape[1]):
        out += X[:, j]
    return out


def weighted_row_sums(X: np.ndarray, U: np.ndarray) -> np.ndarray:
    """``sum_j X[i, j] U[i, j]`` per row, Sec. 2.1's ``N_u(p) = sum_y p_y u(p, y)`` (:func:`row_sums`
    of ``X * U``).  When ``U`` is one row for every row of ``X`` (a broadcast, as a table utility's
    values are), column by column, skipping the columns where it is 0 and not multiplying where
    it is 1: the same numbers, as ``0 x`` adds nothing and ``1 x`` is ``x``.

    Parameters
    ----------
    X : ndarray of shape (n, m)
        The rows.
    U : ndarray of shape (n, m)
        The weights (perhaps one row broadcast to every row).

    Returns
    -------
    ndarray of shape (n,)
        The sums.

    Examples
    --------
    >>> X = np.array([[0.25, 0.75], [0.5, 0.5]])
    >>> weighted_row_sums(X, np.broadcast_to([0.0, 1.0], X.shape)).tolist(), weighted_row_sums(X, X).tolist()
    ([0.75, 0.5], [0.625, 0.5])
    >>> weighted_row_sums(np.array([[-0.0, 0.5]]), np.broadcast_to([1.0, 0.0], (1, 2))).tolist()  # 0 + (-0.0)
    [0.0]
    """
    if U.strides[0] != 0 or U.shape[1] > 16:
        return row_sums(X * U)
    out = None
    for j, u in enumerate(U[0].tolist()):
        if u == 0.0:
            continue
        term = X[:, j] if u == 1.0 else X[:, j] * u
        if out is None:  # 0 + x in the first column's pass: x, but -0.0 becomes 0.0, as added to zeros
            out = np.add(term, 0.0, out=None if u == 1.0 else term)
        else:
            out += term
    return np.zeros(X.shape[0]) if out is None else out


#: :func:`block_sums` drops, per block, at most ``2^-DROPPED`` of its largest ``|x|``.
DROPPED = 64


def sum_levels(size: int) -> np.ndarray:
    """The extractors ``M_j = 1.5 * 2^q_j`` of :func:`block_sums` for blocks of at most ``size``
    values, scaled by a power of two to magnitudes below 1 (the tie blocks of Algorithm 2's
    prefix sums, App. F.3).

    With ``size <= 2^k``, ``fl(fl(x + M_j) - M_j)`` is ``x`` rounded to a multiple of ``2^(q_j - 52)``
    and the remainder ``x`` minus it is exact, at most ``2^(q_j - 53)``; level ``j + 1`` takes the
    remainders, so ``q_(j+1) = q_j - (52 - k)``, starting at ``q_1 = k + 1`` (then a block's sum of
    the rounded values, multiples of ``2^(q_j - 52)`` below ``2^(q_j + 1)``, is exact in any order).
    Levels are added until the remainder is at most ``2^-(DROPPED + k)``.

    Parameters
    ----------
    size : int
        The most values a block holds, at most ``2^40``.

    Returns
    -------
    ndarray
        The extractors, largest first.

    Raises
    ------
    HUCError
        Of kind ``internal``, for blocks of more than ``2^40`` values.

    Examples
    --------
    >>> sum_levels(2).tolist()  # k = 1: q = 2, -49 (remainders 2^-51, then 2^-102 <= 2^-65)
    [6.0, 2.6645352591003757e-15]
    >>> len(sum_levels(8192)), len(sum_levels(10**6))  # k = 13: 39 bits per level; k = 20: 32
    (2, 3)
    """
    k = max(1, (int(size) - 1).bit_length())
    if k > 40:
        raise HUCError(f"block_sums: blocks of {size} values are beyond float64's exact level sums", kind="internal")
    q, levels = k + 1, []
    while True:
        levels.append(1.5 * 2.0 ** q)
        if q - 53 <= -(DROPPED + k):
            return np.array(levels)
        q -= 52 - k


def block_sums(x: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The sum of each block ``x[starts[b]:starts[b + 1]]`` (the last runs to the end), the same
    bits in whatever order the block's values come: Algorithm 2's prefix sums at tie-block ends
    (App. F.3) then do not depend on the order of the atoms inside a block, in float64 too.

    Each block's values are scaled by a power of two to below 1 (by its largest) and split level
    by level (:func:`sum_levels`; Rump, Ogita and Oishi's extraction, as in Demmel and Nguyen's
    reproducible summation) into parts whose block sums are exact, hence order-free; the
    block's total is the sum of its level sums, smallest level first, scaled back.  Error: the
    level sums' ``L - 1`` roundings (at most ``gamma_(L-1)`` of the block's ``sum |x|``; ``L = 2``
    up to 8,192 values per block, 3 up to a million), at most ``2^-DROPPED`` of the block's largest ``|x|``
    dropped below the last level, and the final scaling's rounding where the total is
    subnormal.  A block of one value is that value.  (A float ``cumsum`` is order-dependent and
    off by up to ``gamma_(size - 1)`` of the block's ``sum |x|``.)

    Parameters
    ----------
    x : array-like of float64
        The values.
    starts : array-like of int
        Each block's first index, ascending.

    Returns
    -------
    ndarray
        Each block's sum.

    Examples
    --------
    >>> x = np.array([0.1, 0.2, 0.3, 3.0, 1.0, 2.0 ** -60, -1.0])
    >>> block_sums(x, np.array([0, 3, 4])).tolist()  # 0.1 + 0.2 + 0.3 rounded once (cumsum: 0.6000000000000001)
    [0.6, 3.0, 8.673617379884035e-19]
    >>> block_sums(x[[2, 0, 1, 3, 6, 5, 4]], np.array([0, 3, 4])).tolist()  # each block's values reordered
    [0.6, 3.0, 8.673617379884035e-19]
    """
    x = np.asarray(x, dtype=float)
    starts = np.asarray(starts, dtype=np.intp)
    if not len(x):
        return np.zeros(len(starts))
    sizes = np.diff(np.append(starts, len(x)))
    if sizes.max() <= 1:  # one value per block
        return x[starts]
    part = np.abs(x)  # (then the buffer of each level's part)
    with np.errstate(invalid="ignore"):  # (a NaN is passed on)
        largest = np.maximum.reduceat(part, starts)
    return _level_sums(x, part, largest, int(sizes.max()),
                       lambda v: np.repeat(v, sizes), lambda v: np.add.reduceat(v, starts))


def group_sums(x: np.ndarray, group: np.ndarray, d: int, count: np.ndarray | None = None) -> np.ndarray:
    """:func:`block_sums` with each value's block given by ``group`` (``d`` blocks, each value's
    number in ``0 .. d - 1``, every number used) rather than by position: the same level sums,
    so the same bits as :func:`block_sums` of the values sorted by block, in any order within
    blocks (Algorithm 2's prefix sums at tie-block ends, App. F.3, without the sort).  With
    ``count``, ``x[i]`` stands for ``count[i]`` equal values (:func:`label_cells`): a level's part
    of them, ``count[i]`` times the part of one, is exactly their sum, as every partial sum of a
    block's parts is exact (:func:`sum_levels`), so the bits are those of the values one by one.

    Parameters
    ----------
    x : array-like of float64
        The values.
    group : ndarray of int
        Each value's block, ``0 .. d - 1``.
    d : int
        The blocks.
    count : ndarray of int, optional
        How many equal values each of ``x`` stands for.

    Returns
    -------
    ndarray of shape (d,)
        Each block's sum.

    Examples
    --------
    >>> x = np.array([0.1, 3.0, 0.2, 2.0 ** -60, 0.3, -1.0, 1.0])
    >>> group_sums(x, np.array([0, 1, 0, 2, 0, 2, 2]), 3).tolist()  # block_sums' example, shuffled
    [0.6, 3.0, 8.673617379884035e-19]
    >>> group_sums(np.array([0.1, 0.1, 0.1]), np.array([0, 0, 1]), 2).tolist()  # 0.1 + 0.1 rounded once
    [0.2, 0.1]
    >>> group_sums(np.array([0.1, 0.1]), np.array([0, 1]), 2, count=np.array([2, 1])).tolist()  # the same values
    [0.2, 0.1]
    """
    x = np.asarray(x, dtype=float)
    sizes = np.bincount(group, count, minlength=d)
    if sizes.max() <= 1:  # one value per block
        out = np.empty(d)
        out[group] = x
        return out
    part = np.abs(x)
    largest = np.zeros(d)
    with np.errstate(invalid="ignore"):  # (a NaN is passed on: maximum, not fmax)
        np.maximum.at(largest, group, part)
    total = (lambda v: np.bincount(group, v, minlength=d)) if count is None else \
        (lambda v: np.bincount(group, v * count, minlength=d))
    return _level_sums(x, part, largest, int(sizes.max()), lambda v: v.take(group), total)


def label_cells(x: np.ndarray, cell: np.ndarray, d: int, K: int):
    """The values of ``x`` (float64) by block and label, where each block's atoms of one label hold
    one value (the UC residuals ``u(y) - mu_u`` of a table utility, whose atoms in one tie block
    share their score: Algorithm 2's blocks, App. F.3): ``(block, value, count)`` per cell that holds
    atoms, for :func:`group_sums`' ``count``; or None where a cell holds two values (bits
    compared: 0.0 and -0.0 differ).  ``cell[i]`` is atom ``i``'s block times ``K`` plus its label
    (:func:`huc_ref.fast.intervals.group_scores`' ``labels``), ``d`` the blocks.  One table of the
    cells, written by every atom and read back by every atom (:func:`gathered_equal`), and one count.

    Parameters
    ----------
    x : array-like of float64
        The values.
    cell : ndarray of int
        Each atom's cell: its block times ``K`` plus its label.
    d : int
        The blocks.
    K : int
        The labels.

    Returns
    -------
    tuple of (ndarray, ndarray, ndarray) or None
        ``(block, value, count)`` per cell that holds atoms, or None.

    Examples
    --------
    >>> block, value, count = label_cells(np.array([0.5, -0.5, 0.5, 0.25]), np.array([1, 0, 1, 3]), 2, 2)
    >>> block.tolist(), value.tolist(), count.tolist()
    ([0, 0, 1], [-0.5, 0.5, 0.25], [1, 2, 1])
    >>> label_cells(np.array([0.5, 0.0, -0.0]), np.array([1, 0, 0]), 1, 2) is None
    True
    """
    bits = np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)
    table = np.zeros(d * K, dtype=np.uint64)
    table[cell] = bits
    if not gathered_equal(table, cell, bits):
        return None
    count = np.bincount(cell, minlength=d * K)
    held = np.flatnonzero(count)
    return held // K, table.take(held).view(np.float64), count.take(held)


#: :func:`gathered_equal` gathers this many entries at a time (512 KiB: in the caches).
GATHER_PIECE = 2**16


def gathered_equal(table: np.ndarray, index: np.ndarray, values: np.ndarray) -> bool:
    """Whether ``table[index]`` equals ``values`` everywhere (the check of a table that every atom
    wrote and reads back, as Algorithm 2's blocks found without a sort are, App. F.3), gathered
    :data:`GATHER_PIECE` entries at a time into one small buffer: no array of ``len(index)``
    entries is made (fresh memory costs a page fault a page: docs/engines.md, "Memory").

    Parameters
    ----------
    table : ndarray
        The table.
    index : ndarray of int
        Where each value was written.
    values : ndarray
        The values, one an index.

    Returns
    -------
    bool
        Whether each reads back its own.

    Examples
    --------
    >>> gathered_equal(np.array([5, 7]), np.array([1, 0, 1]), np.array([7, 5, 7]))
    True
    >>> gathered_equal(np.array([5, 7]), np.array([1, 0, 1]), np.array([7, 5, 5]))
    False
    """
    n = len(index)
    buf = np.empty(min(n, GATHER_PIECE), dtype=table.dtype)
    for lo in range(0, n, GATHER_PIECE):
        part = buf[:min(GATHER_PIECE, n - lo)]
        np.take(table, index[lo:lo + GATHER_PIECE], out=part, mode="clip")  # (clip: no copy of part first)
        if not np.array_equal(part, values[lo:lo + GATHER_PIECE]):
            return False
    return True


def _level_sums(x, part, largest, size, spread, block_total):
    """:func:`block_sums`' sums: ``largest[b]`` the largest ``|x|`` of block ``b`` (``part``, a
    buffer of ``len(x)`` numbers to use up), ``size`` the most values a block holds, ``spread(v)``
    each value's entry of ``v`` (one per block), ``block_total(v)`` each block's sum of ``v``."""
    bad = ~(largest < np.inf)  # blocks holding an infinity or NaN: their plain sums, inf or NaN in any order
    if bad.any():
        with np.errstate(invalid="ignore"):
            plain = block_total(x)
        x, largest = np.where(spread(bad), 0.0, x), np.where(bad, 0.0, largest)  # (the others as usual)
    e = np.frexp(largest)[1]  # largest < 2^e (e = 0 for a block of zeros)
    if -1000 < e.min() and e.max() < 1000:  # 2^-e a normal double: one multiplication (correctly rounded, as ldexp)
        rest = spread(np.ldexp(1.0, -e))  # exact, but where a value far below its block's largest
        rest *= x  # lands among the subnormals, rounded there (ldexp too)
    else:
        rest = np.ldexp(x, spread(-e))  # magnitudes below 1
    sums = []
    levels = sum_levels(size).tolist()
    for j, M in enumerate(levels):
        np.add(rest, M, out=part)
        part -= M  # rest rounded to the level's grid
        sums.append(block_total(part))  # exact
        if j + 1 < len(levels):
            rest -= part  # exact
    total = sums.pop()
    while sums:
        total = sums.pop() + total
    total = np.ldexp(total, e)
    if bad.any():
        total[bad] = plain[bad]
    return total


def ratio(N: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """``mu = N / pi`` (A.3), and 0 where ``pi = 0``: exactly ``p > 0`` (A.2), but the fast path
    takes zeros in its input, and a subtree of mass 0 has no mean to speak of.

    Parameters
    ----------
    N, pi : array-like
        The numerators and the masses (broadcast together).

    Returns
    -------
    ndarray
        The means.

    Examples
    --------
    >>> ratio(np.array([1.0, 2.0, 3.0]), np.array([4.0, 0.0, np.nan])).tolist()
    [0.25, 0.0, 0.0]
    """
    N, pi = np.asarray(N, dtype=float), np.asarray(pi, dtype=float)
    if pi.size and pi.min() > 0:  # (as usual: one division, no mask)
        return N / pi
    return np.divide(N, pi, out=np.zeros(np.broadcast_shapes(N.shape, pi.shape)), where=pi > 0)


def floats(rows, where: str) -> np.ndarray:
    """Exact rationals as a float64 array, or one HUCError naming the first that float64 cannot
    hold: a nonzero number below the smallest normal double (or beyond the largest) would be
    rounded to 0 or lose its digits, and the fast path's answer would be silently wrong (App. F.4's float64 path).

    Parameters
    ----------
    rows : sequence of sequence of Fraction or int
        The numbers, row by row.
    where : str
        The message's place, formatted with the row and column (``"p[{}][{}]"``).

    Returns
    -------
    ndarray of shape (len(rows), len(rows[0]))
        The floats.

    Raises
    ------
    HUCError
        Of kind ``float_range``, naming the first nonzero number outside float64's normal range.

    Examples
    --------
    >>> floats([[Fraction(1, 4), Fraction(3, 4)]], "p[{}][{}]").tolist()
    [[0.25, 0.75]]
    >>> floats([[Fraction(1, 10**400), 1 - Fraction(1, 10**400)]], "atoms[{}].p[{}]")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: atoms[0].p[0]: 1e-400 is outside float64's normal range (2.2e-308 to 1.8e+308); ...
    """
    out = np.empty((len(rows), len(rows[0]) if len(rows) else 0))
    for i, row in enumerate(rows):
        for j, x in enumerate(row):
            try:
                v = float(x)  # (a Fraction's is its numerator over its denominator, correctly rounded)
            except OverflowError:  # beyond the largest double
                v = math.inf
            if not SMALLEST_NORMAL <= abs(v) < math.inf and x:  # (the float's test first: it is cheap)
                with localcontext() as ctx:
                    ctx.prec = 3
                    shown = Decimal(x.numerator) / Decimal(x.denominator)
                raise HUCError(f"{where.format(i, j)}: {format(shown, '.3g')} is outside float64's normal range "
                               "(2.2e-308 to "
                               "1.8e+308); the fast engine cannot represent it (use the exact engine)",
                               kind="float_range")
            out[i, j] = v
    return out


def as_floats(values, where: str) -> np.ndarray:
    """``values`` as a float64 array, or one HUCError naming ``where``: numbers only (text and
    booleans are refused, as the exact path refuses them, rather than read as numbers; App. F.4's float64 path).

    Parameters
    ----------
    values : array-like
        The numbers.
    where : str
        The message's place.

    Returns
    -------
    ndarray of float64
        The array.

    Raises
    ------
    HUCError
        Of kind ``type``, for text, booleans, complex numbers or anything else that is not real
        numbers.

    Examples
    --------
    >>> as_floats([1, 0.5], "w").tolist()
    [1.0, 0.5]
    >>> as_floats(["0.5"], "w")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: w: expected numbers, got text
    >>> as_floats([0.5 + 0j], "w")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: w: expected real numbers, got an array of dtype complex128
    """
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError) as err:
        raise HUCError(f"{where}: expected numbers ({err})", kind="type") from None
    kind = arr.dtype.kind
    if kind == "O":  # a list mixing numbers with text or booleans: the first odd entry decides
        odd = next((x for x in arr.ravel() if isinstance(x, (str, bytes, bool, np.bool_))), None)
        kind = "O" if odd is None else "b" if isinstance(odd, (bool, np.bool_)) else "U"
    if kind in "USb":
        raise HUCError(f"{where}: expected numbers, got {'booleans' if kind == 'b' else 'text'}", kind="type")
    if kind in "cmMV":  # (complex: numpy's cast drops the imaginary parts with a warning; times, records)
        raise HUCError(f"{where}: expected real numbers, got an array of dtype {arr.dtype}", kind="type")
    try:
        return arr.astype(float, copy=False)
    except (TypeError, ValueError, OverflowError) as err:
        raise HUCError(f"{where}: expected numbers ({err})", kind="type") from None


def prediction_shape(y_prob, K: int | None = None, where: str = "y_prob") -> np.ndarray:
    """``y_prob`` as a float64 array of ``n >= 1`` rows of ``K`` predictions (Sec. 2.1's ``p(x_i)``),
    its shape checked and its entries not read (:func:`probability_rows` reads them).

    Parameters
    ----------
    y_prob : array-like
        The predictions.
    K : int, optional
        The number of columns required (None: any).
    where : str, default "y_prob"
        The argument named in a message.

    Returns
    -------
    numpy.ndarray
        ``y_prob`` as float64.

    Raises
    ------
    HUCError
        Of kind ``type`` for entries that are not real numbers, ``length`` for another shape.

    Examples
    --------
    >>> prediction_shape([[0.5, 0.5]], 3)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: y_prob: expected an n x 3 array of probabilities, got shape (1, 2)
    """
    P = as_floats(y_prob, where)
    if P.ndim != 2 or P.shape[0] == 0 or (K is not None and P.shape[1] != K):
        raise HUCError(f"{where}: expected an n x {K or 'K'} array of probabilities, got shape {P.shape}",
                       kind="length")
    return P


def probability_rows(y_prob, K: int | None = None, where: str = "y_prob",
                     tolerance: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``y_prob`` as an ``n x K`` float64 array of predictions (Sec. 2.1's ``p(x_i)``, A.2's
    coordinates) and its row sums, computed once; one HUCError naming the argument or its first
    bad row otherwise: entries finite and nonnegative with a positive finite sum and, with
    ``tolerance``, each sum within it of 1 (the remedy named: ``renormalize=True``).

    Parameters
    ----------
    y_prob : array-like
        The predictions.
    K : int, optional
        The number of columns required (None: any).
    where : str, default "y_prob"
        The argument named in a message.
    tolerance : float, optional
        The largest distance of a row's sum from 1 (None: any positive sum).

    Returns
    -------
    tuple of numpy.ndarray
        The ``n x K`` float64 array and its ``n`` row sums.

    Raises
    ------
    HUCError
        Naming the first bad row: of kind ``float_range`` for an entry that is not finite and
        nonnegative or a sum that is not positive and finite, ``probability_sum`` for a sum
        beyond ``tolerance``.

    Examples
    --------
    >>> P, sums = probability_rows([[1, 3], [0.5, 0.5]])
    >>> P.tolist(), sums.tolist()
    ([[1.0, 3.0], [0.5, 0.5]], [4.0, 1.0])
    >>> probability_rows([[0.5, 0.5], [1, 3]], tolerance=1e-5)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: y_prob[1]: sums to 4.0, not 1 (within 1e-05); pass renormalize=True to take each row ...
    """
    P = prediction_shape(y_prob, K, where)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflowing row is reported below
        sums = P.sum(axis=1)  # (a NaN or an infinity makes its own row's sum so, no other's)
    bad = ~(np.isfinite(P).all(axis=1) & (P >= 0).all(axis=1) & (sums > 0) & np.isfinite(sums))
    if bad.any():
        raise HUCError(f"{where}[{int(np.argmax(bad))}]: entries must be finite and nonnegative, with a positive sum",
                       kind="float_range")
    if tolerance is not None:
        far = np.abs(sums - 1.0) > tolerance
        if far.any():
            i = int(np.argmax(far))
            raise HUCError(f"{where}[{i}]: sums to {sums[i].item()!r}, not 1 (within {tolerance:g}); pass "
                           "renormalize=True to take each row divided by its sum", kind="probability_sum")
    return P, sums


def subgroup_column(values, n: int, where: str, rows: str = "y_prob") -> np.ndarray:
    """One subgroup's values ``c(x_i)`` (Sec. 2.1: ``c: X -> [-1, 1]``) for ``n`` samples (the rows
    of the array named ``rows``): numbers in [-1, 1], or a boolean mask (``df["sex"] == "F"``) read
    as the indicator, True = 1.

    Parameters
    ----------
    values : array-like or Series
        The values, or a boolean mask.
    n : int
        The samples.
    where : str
        The message's place.
    rows : str, default "y_prob"
        The name of the array whose rows the values are for.

    Returns
    -------
    ndarray of shape (n,)
        The values as floats.

    Raises
    ------
    HUCError
        Naming the first value outside [-1, 1], or values not one per row.

    Examples
    --------
    >>> subgroup_column([True, False], 2, "subgroups['g']").tolist(), subgroup_column([1, -0.5], 2, "g").tolist()
    ([1.0, 0.0], [1.0, -0.5])
    >>> subgroup_column([2, 0], 2, "subgroups['g']")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: subgroups['g'][0]: 2.0 is not a number in [-1, 1]
    """
    if hasattr(values, "to_numpy") and not isinstance(values, np.ndarray):  # a pandas Series: its array
        values = values.to_numpy()
    if isinstance(values, (list, tuple)) and values and all(isinstance(v, (bool, np.bool_)) for v in values):
        values = np.asarray(values, dtype=bool)
    if isinstance(values, np.ndarray) and values.dtype.kind == "b":
        values = values.astype(float)
    return entries(values, n, where, "a number in [-1, 1]", lambda v: np.abs(v) <= 1, "range", rows)


def entries(values, n: int, where: str, rule: str, ok, kind: str, rows: str = "y_prob") -> np.ndarray:
    """``n`` finite numbers satisfying ``ok`` (one per row of the array named ``rows``), or one
    HUCError naming the first that is not (of ``kind``, :data:`huc_ref.errors.ERROR_KINDS`)
    (App. F.3's weights and subgroup values).  ``ok`` holds on an interval of the reals (``v >= 0``,
    ``|v| <= 1``): where it holds for the smallest and the largest entry, it holds for all.

    Parameters
    ----------
    values : array-like
        The numbers.
    n : int
        How many.
    where : str
        The message's place.
    rule : str
        What each must be, for the message.
    ok : callable
        ``ok(array)``: elementwise, whether each satisfies the rule (an interval of the reals).
    kind : str
        The error's kind.
    rows : str, default "y_prob"
        The name of the array whose rows the values are for.

    Returns
    -------
    ndarray of shape (n,)
        The numbers as floats.

    Raises
    ------
    HUCError
        Of kind ``length`` for another number of values, of ``kind`` naming the first that breaks
        the rule, or of kind ``type`` for values that are not numbers.

    Examples
    --------
    >>> entries([1, -1], 2, "w", "a finite nonnegative number", lambda v: v >= 0, "float_range")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: w[1]: -1.0 is not a finite nonnegative number
    """
    v = as_floats(values, where)
    if v.shape != (n,):
        raise HUCError(f"{where}: expected one value per row of {rows} ({n}), got shape {v.shape}", kind="length")
    if n:  # every ``ok`` is an interval of the reals: the smallest and the largest entry in it, all are
        ends = np.array([v.min(), v.max()])  # (two reductions; a NaN makes both NaN: looked for below)
        if np.isfinite(ends).all() and ok(ends).all():
            return v
    bad = ~(np.isfinite(v) & ok(v))
    if bad.any():
        i = int(np.argmax(bad))
        raise HUCError(f"{where}[{i}]: {v[i].item()!r} is not {rule}", kind=kind)
    return v

