"""Rigorous enclosures for certified float64 (docs/specification.md §4): Higham's bounds on
float64's roundings, Arb's balls around ``e^z`` and ``log x`` (python-flint), the bound on
Algorithm 2's prefix sums and the witness certified from it, and the dyadic grid of the steps.
The certified context (:class:`huc_ref.fast.context.Certified`) and the certified state
(:mod:`huc_ref.fast.certified`) take their decisions on these numbers.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..utilities import Utility
from .context import certain_extreme
from .context import flint as _arb
from .numbers import DROPPED, SMALLEST_NORMAL, UNIT_ROUNDOFF, rounding_bound, sum_levels

__all__ = ["MARGIN", "GRID_BITS", "SCALE_BITS", "gamma", "exp_bounds", "log_bounds", "prefix_error", "moving_ends",
           "certified_witness", "ball_witness", "on_grid"]

#: Relative bounds are doubled, and products of small errors covered by this factor (every
#: first-order bound here is below 1e-8; the certified state refuses to go on past that).
MARGIN = 2.0 * (1.0 + 1e-6)


def gamma(n: int) -> float:
    """Higham's ``gamma_n = n u / (1 - n u)``: the relative error of ``n`` IEEE-754 roundings
    (Higham, Accuracy and Stability of Numerical Algorithms, Lemma 3.1), rounded up; the unit of
    every bound here on App. F.3's sums and E.2's ``Gamma``.

    Parameters
    ----------
    n : int
        The roundings, ``n u < 1``.

    Returns
    -------
    float
        ``gamma_n``, rounded up.

    Examples
    --------
    >>> gamma(1) > 2.0 ** -53, gamma(10) < 1.2e-15
    (True, True)
    """
    x = n * UNIT_ROUNDOFF
    return float(np.nextafter(x / (1.0 - x), np.inf))


def point(x) -> Fraction:
    """An exact point of Arb (a ball's end) as a Fraction."""
    m, e = x.man_exp()
    return Fraction(int(m) << int(e)) if e >= 0 else Fraction(int(m), 1 << -int(e))


def exact_ball(flint, n: int, d: int):
    """The rational ``n / d`` (``d > 0``) as an Arb ball: exact where ``d`` is a power of two (the
    logits of an adaptive run, integers times ``2^-SCALE_BITS``), read straight from its mantissa
    and exponent (no 2,300-bit ``fmpq`` to reduce; ``python bench/certified.py --enclosures``:
    1.49-2.34 us an ``exp`` against 2.05-3.30 us, 1.37-1.41x);
    else rounded at the working precision.

    >>> import flint
    >>> exact_ball(flint, 3, 2 ** 2300).is_exact(), exact_ball(flint, 1, 3).is_exact()
    (True, False)
    """
    if not d & (d - 1):
        return flint.arb(flint.arf((n, 1 - d.bit_length())))
    return flint.arb(flint.fmpq(n, d))


def exp_bounds(z, scale: Fraction = Fraction(1)) -> tuple[np.ndarray, np.ndarray]:
    """Floats ``lo <= e^(z scale) <= hi`` for each exact rational (or integer) ``z``
    (docs/specification.md §4: ``exp`` makes the predictions irrational), from Arb's ball
    arithmetic at 80 bits (python-flint: rigorous enclosures), each end rounded to the nearest
    float64 and moved one ulp outward: about three ulps apart.  Below float64's normal range the
    bounds are 0 and the smallest normal (the caller then refuses to go on).

    mpmath's directed rounding is not used here: it is not rigorous (``mpf_log`` rounded up at
    60 bits gives ``log(1 + 2^-52)`` below its true value; ``tests/test_certified.py``).

    Parameters
    ----------
    z : sequence of Fraction or int
        The exponents.
    scale : Fraction, default 1
        A factor of every exponent.

    Returns
    -------
    lo, hi : ndarray
        The bounds, one of each a ``z``.

    Raises
    ------
    HUCError
        Of kind ``dependency``, where python-flint is not installed.

    Examples
    --------
    >>> lo, hi = exp_bounds([Fraction(0), Fraction(1, 3)])
    >>> lo.tolist()[0], hi.tolist()[0], float(lo[1]) <= 1.3956124250860895 <= float(hi[1]), bool(hi[1] > lo[1])
    (1.0, 1.0, True, True)
    """
    flint = _arb()
    num, den = scale.numerator, scale.denominator
    distinct = list(dict.fromkeys(z))  # (logits repeat: leaves and atoms with equal histories)
    lo, hi = np.empty(len(distinct)), np.empty(len(distinct))
    with flint.ctx.workprec(80):
        for k, x in enumerate(distinct):
            if not x:
                lo[k] = hi[k] = 1.0
                continue
            ball = exact_ball(flint, x.numerator * num, x.denominator * den).exp()
            lo[k], hi[k] = float(ball.lower()), float(ball.upper())  # each within half an ulp of the end
    exact = np.array([not x for x in distinct], dtype=bool)  # e^0 = 1
    lo, hi = np.where(exact, lo, np.nextafter(lo, 0.0)), np.where(exact, hi, np.nextafter(hi, np.inf))
    # below the normal range: 0 and the smallest normal
    small = lo < SMALLEST_NORMAL
    lo[small], hi[small] = 0.0, np.maximum(hi[small], SMALLEST_NORMAL)
    where = {x: k for k, x in enumerate(distinct)}
    index = np.array([where[x] for x in z], dtype=np.int64)
    return lo[index], hi[index]


def log_bounds(lo: np.ndarray, hi: np.ndarray) -> tuple[list, list]:
    """Exact rationals ``a <= log x <= b`` for every ``x`` in ``[lo, hi]`` (positive floats), the
    ends of Arb's balls at 80 bits (python-flint): the normalisers' logs in E.1's log loss.

    Parameters
    ----------
    lo, hi : ndarray
        The ends of the ranges, positive floats.

    Returns
    -------
    a, b : list of Fraction
        The bounds, one of each a range.

    Raises
    ------
    HUCError
        Of kind ``dependency``, where python-flint is not installed.

    Examples
    --------
    >>> a, b = log_bounds(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    >>> a[0], b[0], float(a[1]) <= 0.6931471805599453 <= float(b[1])
    (Fraction(0, 1), Fraction(0, 1), True)
    """
    flint = _arb()
    out_lo, out_hi = [], []
    with flint.ctx.workprec(80):
        for x, y in zip(lo.tolist(), hi.tolist()):
            out_lo.append(point(flint.arb(x).log().lower()))
            out_hi.append(point(flint.arb(y).log().upper()))
    return out_lo, out_hi


def log_ball(p: Fraction) -> tuple[Fraction, Fraction]:
    """Exact rationals around ``log p`` of a positive rational ``p`` (Arb at 80 bits)."""
    flint = _arb()
    with flint.ctx.workprec(80):
        ball = flint.arb(flint.fmpq(p.numerator, p.denominator)).log()
        return point(ball.lower()), point(ball.upper())


def prefix_error(table, u: Utility, W: np.ndarray, rho: float) -> np.ndarray:
    """A bound (per subgroup and column, ``|C| x columns``) on the float64 error of every prefix
    sum Algorithm 2 forms in ``table`` (a :func:`huc_ref.fast.audit.dense_rows` table), for
    predictions whose entries are off by at most ``rho`` relatively.

    Each atom's terms (C.2: ``sum_j pi*_{v_j} mu_{v_j} - pi*_v mu_v``; the UC residual
    ``sum_y eta_y u_y - mu_u``) are built from subtree sums ``pi`` and ``N`` (relative errors at
    most ``rho + gamma_{K}`` and ``rho + eps_u + gamma_{K+1}``, with ``|N_a| <= pi_a A``, ``A =
    max_y |u_y|``, ``eps_u`` the utility values' own rounding), so a mean ``mu = N / pi`` is off by
    at most ``(2 rho + eps_u + 2 gamma_{K+1} + u) A``, and a term, a combination of at most two
    means weighted by label masses summing to at most ``2 pi*_v <= 2``, by
    ``T = 12 (rho + eps_u + gamma_{K+4}) A`` (the subtraction's and weights' roundings inside).
    An entry ``W t`` adds ``|W| (T + 4 u |t|)``; the prefix sums, which
    :class:`huc_ref.fast.intervals.Rows` forms in one pass over every column with each
    column's total subtracted at its start, add ``2 gamma_N`` of all entries' magnitudes, and
    the tie blocks' totals (:func:`huc_ref.fast.numbers.block_sums`) ``gamma_L + 2^-DROPPED`` of
    them (``L`` levels).  Everything is then doubled (:data:`MARGIN`).

    Parameters
    ----------
    table : Rows
        A :func:`huc_ref.fast.audit.dense_rows` table.
    u : Utility
        Its utility.
    W : ndarray of shape (n, |C|)
        ``w_i c(x_i)`` per atom and subgroup.
    rho : float
        The relative error of the predictions' entries.

    Returns
    -------
    ndarray of shape (|C|, columns)
        The bounds.

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> from huc_ref.fast.audit import dense_rows
    >>> from huc_ref.fast.tree import FastTree
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> ft, P, E = FastTree(t), np.array([[0.25, 0.75]]), np.array([[1.0, 0.0]])
    >>> table = dense_rows(ft, P, E, np.ones((1, 1)), Table(t, [0, 1]), ft.subtree_sums(P), ft.subtree_sums(E))
    >>> err = prefix_error(table, Table(t, [0, 1]), np.ones((1, 1)), 0.0)
    >>> err.shape, bool(0 < err.max() < 1e-13)
    ((1, 2), True)
    """
    n, K = len(table.U), table.U.shape[1]
    eps_u = UNIT_ROUNDOFF + 2.0 * u.nesting * rounding_bound(K, rho)
    A = np.abs(table.U).max(axis=1) if K else np.zeros(n)
    T = 12.0 * (rho + eps_u + gamma(K + 4)) * A
    X = np.abs(np.column_stack([table.residual, table.terms]))
    absW = np.abs(W)
    per_column = absW.T @ (T[:, None] + 4.0 * UNIT_ROUNDOFF * X)
    everything = absW.T @ X.sum(axis=1)
    sums = 2.0 * gamma(X.size + 1) + gamma(len(sum_levels(max(n, 2)))) + 2.0 ** -DROPPED
    return MARGIN * (per_column + sums * everything[:, None])


def moving_ends(zero: np.ndarray, table) -> np.ndarray:
    """The prefix sums Algorithm 2's witness compares (indices into ``C_0 .. C_B`` at ``table``'s
    tie blocks' ends): ``C_0`` and every block end after a block with an entry not 0 exactly
    (``zero``), as the others repeat the one before exactly.

    Parameters
    ----------
    zero : ndarray of bool
        Per atom, whether its entry is 0 exactly.
    table : Rows
        The table (its ``order`` and ``block_last``).

    Returns
    -------
    ndarray of int
        The indices of the prefix sums kept.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> moving_ends(np.array([False, True, False]), SimpleNamespace(order=np.arange(3), block_last=np.arange(3)))
    array([0, 1, 3])
    """
    order, last = table.order, table.block_last
    moves = np.concatenate([[True], ~np.logical_and.reduceat(zero[order], np.concatenate([[0], last[:-1] + 1]))])
    return np.flatnonzero(moves)


def certified_witness(values: np.ndarray, zero: np.ndarray, table, error: float):
    """Algorithm 2's witness of one column, certified: ``values`` are the column's entries
    ``W t`` per atom, ``zero`` marks atoms whose entry is exactly 0 in exact arithmetic too (a
    subgroup value 0, or no label mass below the node), ``error`` bounds every prefix sum's
    float error.  The prefix sums at the ends of ``table``'s tie blocks (``C_0 = 0``) are
    formed again; their first largest and first smallest (App. F.3's tie rule) are the exact
    engine's when every other prefix, except those repeating one exactly (blocks of zeros), is
    below (above) them by more than ``2 error``.  Returns ``(r, b, sup, moment)`` of the
    witness blocks ``r .. b-1`` or None when float64 cannot tell.

    Parameters
    ----------
    values : ndarray
        The column's entries ``W t``, per atom.
    zero : ndarray of bool
        Per atom, whether its entry is 0 exactly.
    table : Rows
        The table (its ``order`` and ``block_last``).
    error : float
        The bound on every prefix sum's error.

    Returns
    -------
    tuple of (int, int, float, float) or None
        ``(r, b, sup, moment)``, or None.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> table = SimpleNamespace(order=np.arange(3), block_last=np.arange(3))
    >>> certified_witness(np.array([0.5, -0.25, 0.5]), np.zeros(3, bool), table, 1e-12)
    (0, 3, 0.75, 0.75)
    >>> certified_witness(np.array([0.5, -0.5, 0.5]), np.zeros(3, bool), table, 1e-12) is None  # C_1 = C_3
    True
    """
    order, last = table.order, table.block_last
    C = np.concatenate([[0.0], np.cumsum(values[order])[last]])
    kept = moving_ends(zero, table)
    Ck = C[kept]
    found = []
    for pick in (np.argmax, np.argmin):
        j = int(pick(Ck))
        others = np.delete(Ck, j)
        if len(others) and not np.all(np.abs(others - Ck[j]) > 2.0 * error):
            return None
        found.append(int(kept[j]))
    i_mx, i_mn = found
    sup = float(C[i_mx] - C[i_mn])
    if i_mx == i_mn:  # (only when the column has no entries: then it is the empty prefix)
        return 0, 0, 0.0, 0.0
    return min(i_mx, i_mn), max(i_mx, i_mn), sup, sup if i_mx > i_mn else -sup


def ball_witness(entries: list, zero: np.ndarray, table, bits: int = 128, exact=None):
    """:func:`certified_witness` (Algorithm 2's witness, App. F.3) on Arb balls: the column's
    entries ``W t`` per atom enclosed at ``bits`` (:meth:`huc_ref.fast.choice.CertifiedChoice.column_balls`), ``zero``
    marking the entries that are 0 exactly.  The prefix sums at the ends of ``table``'s tie blocks
    are enclosed; their first largest and first smallest are certified when every other prefix,
    except those repeating one after a block of zeros, lies certainly below (above) it, or is
    known exactly not to exceed it: with ``exact`` (``i -> `` atom ``i``'s entry as a rational, or
    None), two prefix sums whose balls overlap differ by the exact sum of the entries between,
    where all are known, and an equal later one does not displace the first.  Returns
    ``(r, b, sup, moment)`` (``sup`` and ``moment`` Arb balls) or None.

    Parameters
    ----------
    entries : list of arb
        The column's entries ``W t``, per atom.
    zero : ndarray of bool
        Per atom, whether its entry is 0 exactly.
    table : Rows
        The table (its ``order`` and ``block_last``).
    bits : int, default 128
        The working precision of the sums.
    exact : callable, optional
        ``exact(i)``: atom ``i``'s entry as a rational, or None.

    Returns
    -------
    tuple of (int, int, arb, arb) or None
        ``(r, b, sup, moment)``, or None.

    Raises
    ------
    HUCError
        Of kind ``dependency``, where python-flint is not installed.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from flint import arb, ctx
    >>> table = SimpleNamespace(order=np.arange(3), block_last=np.arange(3))
    >>> r, b, sup, moment = ball_witness([arb(1) / 2, -arb(1) / 4, arb(1) / 2], np.zeros(3, bool), table)
    >>> r, b, sup.contains(arb(3) / 4), moment.contains(arb(3) / 4)
    (0, 3, True, True)
    >>> with ctx.workprec(128):  # 1/3 - 1/3 is 0 exactly, which no ball shows: C_1 = C_3 again
    ...     thirds = [arb(1) / 3, -arb(1) / 3, arb(1) / 3]
    >>> ball_witness(thirds, np.zeros(3, bool), table) is None
    True
    >>> ball_witness(thirds, np.zeros(3, bool), table, exact=lambda i: Fraction(1 - 2 * (i % 2), 3))[:2]
    (0, 1)
    """
    flint = _arb()
    order, last = table.order.tolist(), table.block_last.tolist()
    C, run, ends = [flint.arb(0)], flint.arb(0), set(last)
    with flint.ctx.workprec(bits):
        for r, i in enumerate(order):
            if not zero[i]:
                run = run + entries[i]
            if r in ends:
                C.append(run)

    def exactly(m, j):  # the sign of C_m - C_j from the entries of the blocks between, or None
        lo, hi = min(m, j), max(m, j)
        total = Fraction(0)
        for r in range(last[lo - 1] + 1 if lo else 0, last[hi - 1] + 1):
            if not zero[order[r]]:
                x = exact(order[r])
                if x is None:
                    return None
                total += x
        return ((total > 0) - (total < 0)) * (1 if m > j else -1)
    kept = moving_ends(zero, table).tolist()
    i_mx, i_mn = (certain_extreme(C, kept, above, exactly if exact else None) for above in (True, False))
    if i_mx is None or i_mn is None:
        return None
    if i_mx == i_mn:
        return 0, 0, flint.arb(0), flint.arb(0)
    with flint.ctx.workprec(bits):
        sup = C[i_mx] - C[i_mn]
    return min(i_mx, i_mn), max(i_mx, i_mn), sup, sup if i_mx > i_mn else -sup


#: Significant bits of the largest entry of an update's direction ``h`` (:func:`on_grid`).
GRID_BITS = 40

#: The logits are integers times ``2^-SCALE_BITS`` (times the fixed step, for a fixed step): a
#: float64 step times ``h`` on its grid is one exactly (exponents down to -1074 - 52 - 1062).
SCALE_BITS = 2300


def on_grid(h: np.ndarray) -> np.ndarray:
    """Algorithm 1's direction ``h`` rounded to one dyadic grid, ``2^-40`` of its largest entry's
    binade: the applied step is exact whatever it is (the certified engine rounds ``h`` to its
    working precision too), and atoms whose exact directions are equal, which float64 computes
    a few ulps apart, then take the same step, so that ties of their scores stay exact ties
    (:class:`huc_ref.fast.boosted.Same`).

    Parameters
    ----------
    h : ndarray
        The direction.

    Returns
    -------
    ndarray
        ``h`` on the grid.

    Examples
    --------
    >>> on_grid(np.array([[0.1, -0.25]])).tolist() == [[round(0.1 * 2**41) / 2**41, -0.25]]
    True
    """
    return grid(h)[0]


def grid(h: np.ndarray) -> tuple[np.ndarray, int]:
    """:func:`on_grid`'s ``h`` and the grid's exponent ``E`` (``h`` is a multiple of ``2^E``)."""
    top = float(np.abs(h).max()) if h.size else 0.0
    if not top:
        return h, 0
    E = math.frexp(top)[1] - GRID_BITS
    return np.round(np.ldexp(h, -E)) * 2.0 ** E, E
