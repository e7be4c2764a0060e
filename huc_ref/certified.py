"""Certified boosting at float64 speed: HUC-Boost and UC-Boost decided in float64 with rigorous
error bounds, multiprecision only where a bound cannot decide (Sec. 3.2, App. E; docs/specification.md §4).

The state is exact, as docs/specification.md §4 asks: every atom's accumulated logits ``z_{v,j}`` (UC-Boost:
``z_y``), exact rationals, and the predictions are a fresh softmax of them,

    HUC: f(x)_y = p0_y prod_{v on path(y)} e^{z_{v,j}} / N_v,   N_v = sum_k q0_{v,k} e^{z_{v,k}}
    UC:  f(x)_y = p0_y e^{z_y} / N,                              N = sum_k p0_k e^{z_k},

evaluated in float64 with a bound ``rho`` on every entry's relative error that does not grow
with the number of updates: ``e^z`` (and every ``log``) is enclosed by Arb's ball arithmetic
(python-flint), every other operation is an IEEE-754 operation bounded by Higham's
``gamma_n = n u / (1 - n u)``.  Given ``rho``:

* **decisions**: the fast audit (:func:`huc_ref.fast.audit.dense_rows`) takes every decision
  (utilities' choices, the order of scores, tie blocks) where its bound certifies it; an
  undecided one on a boosted row (no rationals behind it) raises :class:`Undecided`.  The
  largest candidate, whether it exceeds ``epsilon`` and its witness interval are certified
  from a bound on every prefix sum (:func:`prefix_error`, :func:`certified_witness`).  Anything
  undecided goes to the certified engine (:class:`huc_ref.boost._Engine`, decisions at two
  precisions) on the same exact state, for that choice only;
* **the step is exact**: the direction ``h`` is float64 on a dyadic grid (:func:`on_grid`), ``Lambda`` exact
  for it, ``alpha`` float64 (adaptive) or the exact fixed step, and ``z += alpha h`` exactly;
* **Theorem 3.5's inequalities** for the applied step are checked on rigorous enclosures:
  ``Gamma`` from its float value and error bound, the change of log loss from
  ``log f'_y - log f_y = alpha h_j - (log N' - log N)`` (exact in the state) with ``log N``
  enclosed by Arb, summed in exact rationals.

Reported numbers (sups, moments, log losses) are float64 values within their bounds; the
certified engine's 20-digit texts are what ``engine="exact"`` gives.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .decomposition import subtree_sums
from .distribution import FiniteDistribution
from .driver import Backend, Choice, Update, drive, rational_gamma
from .errors import HUCError
from .fast.audit import dense_rows, result_rows
from .fast.boost import direction
from .fast.numbers import DROPPED, SMALLEST_NORMAL, UNIT_ROUNDOFF, ExactRows, floats, rounding_bound, sum_levels
from .fast.tree import FastTree
from .rational import exact_dot, fraction_text
from .results import BoostResult
from .utilities import Utility
from .validation import boost_options

__all__ = ["ARITHMETIC", "BoundedBackend", "Undecided", "boost", "gamma", "exp_bounds", "log_bounds",
           "prefix_error", "certified_witness", "ball_witness", "on_grid", "unmoved_by"]

#: The ``arithmetic`` of this backend's results.
ARITHMETIC = "certified (float64 with error bounds)"

#: Relative bounds are doubled, and products of small errors covered by this factor (every
#: first-order bound here is below 1e-8; :class:`BoundedBackend` refuses to go on past that).
_MARGIN = 2.0 * (1.0 + 1e-6)


class Undecided(Exception):
    """A decision float64 cannot take on a boosted row (its exact value is irrational; the
    certified engine takes it, docs/specification.md §4)."""


def gamma(n: int) -> float:
    """Higham's ``gamma_n = n u / (1 - n u)``: the relative error of ``n`` IEEE-754 roundings
    (Higham, Accuracy and Stability of Numerical Algorithms, Lemma 3.1), rounded up; the unit of
    every bound here on App. F.3's sums and E.2's ``Gamma``.

    >>> gamma(1) > 2.0 ** -53, gamma(10) < 1.2e-15
    (True, True)
    """
    x = n * UNIT_ROUNDOFF
    return float(np.nextafter(x / (1.0 - x), np.inf))


def _flint():
    """python-flint (Arb), or one HUCError saying how to install it."""
    try:
        import flint
    except ImportError:
        raise HUCError("arithmetic: 'certified' on the fast engine needs python-flint (pip install "
                       "'huc-ref[certified]')", kind="dependency") from None
    return flint


def _point(x) -> Fraction:
    """An exact point of Arb (a ball's end) as a Fraction."""
    m, e = x.man_exp()
    return Fraction(int(m) << int(e)) if e >= 0 else Fraction(int(m), 1 << -int(e))


def _exact_ball(flint, n: int, d: int):
    """The rational ``n / d`` (``d > 0``) as an Arb ball: exact where ``d`` is a power of two (the
    logits of an adaptive run, integers times ``2^-SCALE_BITS``), read straight from its mantissa
    and exponent (no 2,300-bit ``fmpq`` to reduce; ``python bench/certified.py --enclosures``:
    1.49-2.34 us an ``exp`` against 2.05-3.30 us, 1.37-1.41x);
    else rounded at the working precision.

    >>> import flint
    >>> _exact_ball(flint, 3, 2 ** 2300).is_exact(), _exact_ball(flint, 1, 3).is_exact()
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

    >>> lo, hi = exp_bounds([Fraction(0), Fraction(1, 3)])
    >>> lo.tolist()[0], hi.tolist()[0], float(lo[1]) <= 1.3956124250860895 <= float(hi[1]), bool(hi[1] > lo[1])
    (1.0, 1.0, True, True)
    """
    flint = _flint()
    num, den = scale.numerator, scale.denominator
    distinct = list(dict.fromkeys(z))  # (logits repeat: leaves and atoms with equal histories)
    lo, hi = np.empty(len(distinct)), np.empty(len(distinct))
    with flint.ctx.workprec(80):
        for k, x in enumerate(distinct):
            if not x:
                lo[k] = hi[k] = 1.0
                continue
            ball = _exact_ball(flint, x.numerator * num, x.denominator * den).exp()
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

    >>> a, b = log_bounds(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    >>> a[0], b[0], float(a[1]) <= 0.6931471805599453 <= float(b[1])
    (Fraction(0, 1), Fraction(0, 1), True)
    """
    flint = _flint()
    out_lo, out_hi = [], []
    with flint.ctx.workprec(80):
        for x, y in zip(lo.tolist(), hi.tolist()):
            out_lo.append(_point(flint.arb(x).log().lower()))
            out_hi.append(_point(flint.arb(y).log().upper()))
    return out_lo, out_hi


def _log_ball(p: Fraction) -> tuple[Fraction, Fraction]:
    """Exact rationals around ``log p`` of a positive rational ``p`` (Arb at 80 bits)."""
    flint = _flint()
    with flint.ctx.workprec(80):
        ball = flint.arb(flint.fmpq(p.numerator, p.denominator)).log()
        return _point(ball.lower()), _point(ball.upper())


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
    them (``L`` levels).  Everything is then doubled (:data:`_MARGIN`).

    >>> from huc_ref import LabelTree, Table
    >>> from huc_ref.fast.numbers import ExactRows
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
    return _MARGIN * (per_column + sums * everything[:, None])


def _moving_ends(zero: np.ndarray, table) -> np.ndarray:
    """The prefix sums Algorithm 2's witness compares (indices into ``C_0 .. C_B`` at ``table``'s
    tie blocks' ends): ``C_0`` and every block end after a block with an entry not 0 exactly
    (``zero``), as the others repeat the one before exactly.

    >>> from types import SimpleNamespace
    >>> _moving_ends(np.array([False, True, False]), SimpleNamespace(order=np.arange(3), block_last=np.arange(3)))
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

    >>> from types import SimpleNamespace
    >>> table = SimpleNamespace(order=np.arange(3), block_last=np.arange(3))
    >>> certified_witness(np.array([0.5, -0.25, 0.5]), np.zeros(3, bool), table, 1e-12)
    (0, 3, 0.75, 0.75)
    >>> certified_witness(np.array([0.5, -0.5, 0.5]), np.zeros(3, bool), table, 1e-12) is None  # C_1 = C_3
    True
    """
    order, last = table.order, table.block_last
    C = np.concatenate([[0.0], np.cumsum(values[order])[last]])
    kept = _moving_ends(zero, table)
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
    entries ``W t`` per atom enclosed at ``bits`` (:meth:`BoundedBackend._column_balls`), ``zero``
    marking the entries that are 0 exactly.  The prefix sums at the ends of ``table``'s tie blocks
    are enclosed; their first largest and first smallest are certified when every other prefix,
    except those repeating one after a block of zeros, lies certainly below (above) it, or is
    known exactly not to exceed it: with ``exact`` (``i -> `` atom ``i``'s entry as a rational, or
    None), two prefix sums whose balls overlap differ by the exact sum of the entries between,
    where all are known, and an equal later one does not displace the first.  Returns
    ``(r, b, sup, moment)`` (``sup`` and ``moment`` Arb balls) or None.

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
    flint = _flint()
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
    kept = _moving_ends(zero, table).tolist()
    i_mx, i_mn = (_certain_extreme(C, kept, above, exactly if exact else None) for above in (True, False))
    if i_mx is None or i_mn is None:
        return None
    if i_mx == i_mn:
        return 0, 0, flint.arb(0), flint.arb(0)
    with flint.ctx.workprec(bits):
        sup = C[i_mx] - C[i_mn]
    return min(i_mx, i_mn), max(i_mx, i_mn), sup, sup if i_mx > i_mn else -sup


def _certain_extreme(balls: list, among: list, above: bool, exactly=None):
    """The index of ``among`` whose ball lies certainly above (``above``; else below) every other's,
    or None.  Only those whose midpoints round to the largest (smallest) float can be it: a ball
    certainly above another has the larger midpoint, and rounding keeps that order or makes a tie;
    among such ties each is tried, as a float64 tie of balls that Arb separates (two sups a
    rounding of the smoothing apart, 1e-22 here) need not put the largest first; so is every ball
    not certainly inside that of the largest (smallest) midpoint.  With ``exactly`` (``(m, j) ->``
    the sign of ``x_m - x_j`` or None), balls that overlap are compared by it, and of equal
    extremes the first in ``among`` is taken (App. F.3's tie rule): an exact 0 and a ball about 0
    from sums that cancel have different midpoints, the second's perhaps the larger.

    >>> from flint import arb, ctx
    >>> with ctx.workprec(128):  # one float64 midpoint for the first two
    ...     balls = [arb(1) / 2, arb(1) / 2 + arb(2) ** -80, arb(0)]
    >>> _certain_extreme(balls, [0, 1, 2], True), _certain_extreme(balls, [0, 1, 2], False)
    (1, 2)
    >>> _certain_extreme([arb(1), arb(1)], [0, 1], True) is None  # equal: no ball is certainly above
    True
    >>> C = [arb(0), -arb(1) / 10, arb(2.0 ** -200, 2.0 ** -190)]  # C_2 holds 0 and has the larger midpoint
    >>> _certain_extreme(C, [0, 1, 2], True) is None  # Arb cannot tell C_0 from C_2
    True
    >>> _certain_extreme(C, [0, 1, 2], True, lambda m, j: [0, -1, 0][m] - [0, -1, 0][j])  # equal exactly: the first
    0
    >>> wide = [arb(0, 1e-10), arb(0), arb(-1e-11)]  # 0 and 1 equal exactly; 2 overlaps 0 and no exact sign is known
    >>> _certain_extreme(wide, [0, 1, 2], True, lambda m, j: 0 if {m, j} == {0, 1} else None) is None  # not 1
    True
    """
    mids = [float(balls[j].mid()) for j in among]
    t = among[int(np.argmax(mids) if above else np.argmin(mids))]
    side = -1 if above else 1  # the sign of x_o - x_j that leaves j the extreme

    def inner(o, j):  # x_o certainly on j's inner side
        return balls[o] < balls[j] if above else balls[o] > balls[j]

    def below(o, j):  # x_o on j's inner side, or equal to it and later
        if inner(o, j):
            return True
        sign = exactly(o, j) if exactly is not None else None
        return sign == side or (sign == 0 and o > j)
    for j in among:  # the extreme is t or a ball not certainly inside t's (0 and a ball about 0 are two floats)
        if (j == t or not inner(j, t)) and all(below(o, j) for o in among if o != j):
            return j
    return None


def unmoved_by(u: Utility, tree, a: int, probe) -> bool:
    """Whether an update at node id ``a`` leaves ``u``'s values and score exactly as they were
    (Algorithm 1 moves mass only among ``a``'s children, each child's subtree scaled as a whole):
    for fixed leaf values (a table) when they are constant on the leaves below ``a``, and for App.
    J.1's binary decision when its ``d`` is (its margin ``sum_y p_y d_y`` is then unchanged); for
    top-1 correctness at depth ``l`` (K.2) when ``a`` lies at depth ``l`` or deeper, as the masses
    at depth ``l`` do not change.  ``probe``: any prediction
    (fixed values do not depend on it).  False where this is not known.

    >>> from huc_ref import LabelTree, Table, Top1AtDepth
    >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
    >>> p = [Fraction(1, 3)] * 3
    >>> unmoved_by(Table(t, [1, 1, 0]), t, 1, p), unmoved_by(Table(t, [1, 0, 0]), t, 1, p)
    (True, False)
    >>> unmoved_by(Top1AtDepth(t, 1), t, 1, p), unmoved_by(Top1AtDepth(t, 1), t, 0, p)
    (True, False)
    """
    from .utilities import BinaryDecision, Table
    if u.top1_depth is not None:
        return tree.depth_ids[a] >= u.top1_depth
    if isinstance(u, (Table, BinaryDecision)):
        values = u.values(probe)
        return len({values[y] for y in tree.label_ids_below(a)}) == 1
    return False


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
    (:class:`_Same`).

    >>> on_grid(np.array([[0.1, -0.25]])).tolist() == [[round(0.1 * 2**41) / 2**41, -0.25]]
    True
    """
    return _on_grid(h)[0]


def _on_grid(h: np.ndarray) -> tuple[np.ndarray, int]:
    """:func:`on_grid`'s ``h`` and the grid's exponent ``E`` (``h`` is a multiple of ``2^E``)."""
    top = float(np.abs(h).max()) if h.size else 0.0
    if not top:
        return h, 0
    E = math.frexp(top)[1] - GRID_BITS
    return np.round(np.ldexp(h, -E)) * 2.0 ** E, E


class _Rows(ExactRows):
    """The rationals behind the current rows for the fast audit's exact decisions: a row's
    ``p0`` while no update has changed the utility's values or score on it (:func:`unmoved_by`),
    else none (irrational), so a decision needing it raises :class:`Undecided`; ``p_error`` is
    the rows' certified relative error."""

    def __init__(self, P, p0, moved, rho, key=None, surrogate=None, offset=0):
        super().__init__(P, _Behind(p0, moved, surrogate), offset)
        self.p_error, self._args, self.moved, self.key = rho, (p0, moved, rho, key, surrogate), moved, key

    def view(self, start):
        return _Rows(None if self.P is None else self.P[start:], *self._args, self.offset + start)

    def score(self, u, i, atom):
        """A changed row's score exactly where it is rational (:meth:`BoundedBackend._exact_score`),
        else as :class:`_Same` of the exact state that determines it."""
        if self.moved[self.offset + i]:
            return self.key(self.offset + i)
        return super().score(u, i, atom)


#: The precisions (bits) at which two irrational scores of different exact states are enclosed
#: (:class:`_Same`) before the certified engine is asked: a decision tree's rows, smoothed (K.1),
#: give scores 2e-27 apart (``bench/certified.py --fit``), which 128 bits separate.
REFINE_BITS = (128, 512, 2048)


def _refined_sign(difference, undecided) -> int:
    """The sign of a real number known by Arb enclosures, ``difference(bits)`` (formed at ``bits``),
    from the first precision of :data:`REFINE_BITS` whose ball leaves out 0; else
    :class:`Undecided` with ``undecided`` (the number is 0, or closer to it than 2,048 bits tell).

    >>> from flint import arb
    >>> _refined_sign(lambda bits: arb(10) ** -100, "?"), _refined_sign(lambda bits: -arb(1) / 3, "?")
    (1, -1)
    >>> _refined_sign(lambda bits: arb(1) / 3 - arb(2) / 6, "a tie")
    Traceback (most recent call last):
    huc_ref.certified.Undecided: a tie
    """
    flint = _flint()
    for bits in REFINE_BITS:
        with flint.ctx.workprec(bits):
            x = difference(bits)
        if x > 0 or x < 0:
            return 1 if x > 0 else -1
    raise Undecided(undecided)


class _Same:
    """An irrational score known by the exact state that determines it (``key``) and, where
    given, by Arb enclosures of it at any precision (``ball(bits)``, python-flint).  Two are
    equal when their states are; otherwise, and against a rational, they are ordered by
    enclosures at :data:`REFINE_BITS` where these separate them, else :class:`Undecided`
    (distinct states can give equal scores: the certified engine decides those).

    >>> from flint import arb, ctx
    >>> def third(bits, plus=0):  # 1/3 + plus, enclosed at ``bits``
    ...     with ctx.workprec(bits):
    ...         return arb(1) / 3 + plus
    >>> a, b = _Same("x", third), _Same("y", lambda bits: third(bits, arb(10) ** -30))  # 1e-30 apart
    >>> a < b, a == b, a == _Same("x"), b > Fraction(1, 3), b < Fraction(1, 2)
    (True, False, True, True, True)
    >>> a == Fraction(1, 3)  # enclosures never decide an equality of different states
    Traceback (most recent call last):
    huc_ref.certified.Undecided: a tie of irrational scores
    """

    __slots__ = ("key", "ball", "_balls")
    __hash__ = None

    def __init__(self, key, ball=None):
        self.key, self.ball, self._balls = key, ball, {}

    def _at(self, bits: int):
        if self.ball is None:
            return None
        if bits not in self._balls:
            self._balls[bits] = self.ball(bits)
        return self._balls[bits]

    def _order(self, other) -> int:
        """-1, 0 or 1 as this score is below, equal to or above ``other`` (a :class:`_Same` or a
        rational), decided, or :class:`Undecided`."""
        if isinstance(other, _Same) and other.key == self.key:
            return 0
        same = isinstance(other, _Same)
        if self.ball is None or not ((same and other.ball is not None) or isinstance(other, (int, Fraction))):
            raise Undecided("a tie of irrational scores")
        flint = _flint()
        return _refined_sign(lambda bits: self._at(bits) - (other._at(bits) if same else
                                                             flint.arb(flint.fmpq(other.numerator, other.denominator))),
                             "a tie of irrational scores")

    def __eq__(self, other):
        return self._order(other) == 0

    def __ne__(self, other):
        return self._order(other) != 0

    def __lt__(self, other):
        return self._order(other) < 0

    def __gt__(self, other):
        return self._order(other) > 0

    def __le__(self, other):
        return self._order(other) <= 0

    def __ge__(self, other):
        return self._order(other) >= 0


class _Behind:
    def __init__(self, p0, moved, surrogate=None):
        self.p0, self.moved, self.surrogate = p0, moved, surrogate

    def __getitem__(self, i):
        if self.moved[i]:
            if self.surrogate is None:
                raise Undecided(i)
            return self.surrogate(i)
        return self.p0[i]


@dataclass
class _Choice(Choice):
    members: np.ndarray = None  # the atoms the witness selects
    interval: list | None = None
    values: np.ndarray | None = None  # the utility's values of every atom, decided


class BoundedBackend(Backend):
    """The side of :func:`huc_ref.driver.drive` described in the module docstring
    (Algorithm 1 in certified float64, docs/specification.md §4).

    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> b = BoundedBackend(d, {"u": Table(t, [-1, 1, 1, 1])}, "huc", Fraction(1, 10), 30)
    >>> c = b.choose(None)
    >>> c.node, c.sup, c.exceeds, b.rho == 2.0 ** -53
    (0, 0.25, True, True)
    """

    certified = True

    def __init__(self, dist: FiniteDistribution, utilities: Mapping[str, Utility], method: str, epsilon: Fraction,
                 digits: int):
        self.dist, self.utilities, self.method, self.epsilon, self.digits = dist, utilities, method, epsilon, digits
        self.tree = tree = dist.tree
        self.ft = ft = FastTree(tree)
        K, atoms = tree.K, dist.atoms
        self.branching = [tree.id(v) for v in tree.branching_nodes]
        self.P0 = floats([a.p for a in atoms], "atoms[{}].p[{}]")
        self.E = floats([a.label_law(K) for a in atoms], "atoms[{}].eta[{}]")
        self.w = floats([[a.weight] for a in atoms], "atoms[{}].weight{}")[:, 0]
        self.C = floats([a.c for a in atoms], "atoms[{}].c[{}]")
        self.W = self.w[:, None] * self.C
        self.star = ft.subtree_sums(self.E)
        self.p0 = [a.p for a in atoms]
        n, nodes = len(atoms), len(tree.nodes)
        self.P, self.moved = self.P0.copy(), np.zeros(n, dtype=bool)
        # the exact state: per atom the logit of every edge (HUC: the edge into node b; UC: leaf b), as
        # integers z = Z s (logit) with one exact scale s for the run: 2^-SCALE_BITS, times the fixed step
        self.z = np.full((n, nodes), 0, dtype=object)
        self.scale: Fraction | None = None
        self.F = np.ones((n, nodes + 1))  # e^{z} / N per edge (float64); the last column is 1 (padding)
        self.log_norm: dict = {}  # (atom, node) -> exact bounds of log N_v (absent: N_v = 1, z = 0)
        self.r_F = 0.0  # the largest relative error of a factor F so far
        leaves = tree.leaf_node_ids
        if method == "huc":
            depth = max(len(tree.path_ids(y)) for y in range(K)) - 1
            self.paths = np.full((K, max(depth, 1)), nodes, dtype=np.int64)
            for y in range(K):
                edges = tree.path_ids(y)[1:]
                self.paths[y, :len(edges)] = edges
            self.pi0 = ft.subtree_sums(self.P0)  # pi0_a; q0_{v,k} = pi0_{v_k} / pi0_v (floats of p0)
        else:
            self.paths = np.array([[leaves[y]] for y in range(K)], dtype=np.int64)
            self.pi0 = None
        self.H = self.paths.shape[1]
        self._edges = []  # per node: the edges (parent, child) from the root down to it
        for a in range(nodes):
            edges = self._edges[tree.parent_ids[a]] + ((tree.parent_ids[a], a),) if tree.parent_ids[a] >= 0 else ()
            self._edges.append(edges)
        self.rho = UNIT_ROUNDOFF  # untouched rows: p0 rounded once
        self._exact_star: dict = {}
        self._engine = None
        self.version, self._scores = np.zeros(n, dtype=np.int64), {}  # (exact scores of boosted rows, kept)
        self._balls: dict = {}  # (atom, bits) -> (version, its prediction in Arb), :meth:`_prediction_ball`
        self._values: dict = {}  # (utility, atom) -> (version, its values), :meth:`_exact_values`
        self._pi0_exact: dict = {}  # atom -> the exact subtree masses of p0, :meth:`_pi0`
        self._uc_masses: dict = {}  # atom -> (version, p0's mass per logit), :meth:`_masses`
        self.fallbacks: dict = {}  # why the certified engine chose, and how often
        self.refined: dict = {}  # what float64's bounds left to Arb (REFINE_BITS), and how often
        # per utility: the atoms some update has changed it on, and the nodes whose updates never do
        self.changed = {name: np.zeros(n, dtype=bool) for name in utilities}
        self.unmoved = {name: {a: unmoved_by(u, tree, a, self.p0[0]) for a in range(nodes)}
                        for name, u in utilities.items()}
        self.loss = self._initial_loss()

    # ------------------------------------------------------------------ the log loss
    def _initial_loss(self) -> tuple[Fraction, Fraction]:
        """``L_log(f_0) = -sum_i w_i sum_y eta_iy log p0_iy`` enclosed in exact rationals."""
        lo = hi = Fraction(0)
        cache: dict = {}
        for atom in self.dist.atoms:
            for p, e in zip(atom.p, atom.label_law(self.tree.K)):
                if not e:
                    continue
                if p not in cache:
                    cache[p] = _log_ball(p)
                a, b = cache[p]
                we = atom.weight * e
                lo, hi = lo - we * b, hi - we * a
        return lo, hi

    def initial(self):
        lo, hi = self.loss
        return float((lo + hi) / 2), hi

    # ------------------------------------------------------------------ choosing
    def choose(self, node):  # (certified; the certified engine decides what float64 cannot)
        try:
            return self._choose(node)
        except Undecided as undecided:
            reason = undecided.args[0]
            self.fallbacks[reason] = self.fallbacks.get(reason, 0) + 1
            return self._fallback(node)

    def _tables(self) -> dict:
        """Per utility, the fast audit's table of the current rows (:func:`huc_ref.fast.audit.dense_rows`,
        its decisions certified) and the bound on its prefix sums (:func:`prefix_error`)."""
        huc, P = self.method == "huc", self.P
        masses = self.ft.subtree_sums(P)
        tables = {}
        for name, u in self.utilities.items():
            key = self._key(u)
            exact = _Rows(P, self.p0, self.changed[name], self.rho,
                          lambda i, name=name, key=key: self._exact_score(name, i, key), self._surrogate(u))
            try:
                table = dense_rows(self.ft, P, self.E, self.W, u, masses, self.star, with_nodes=huc, exact=exact)
            except Undecided as undecided:
                raise Undecided(f"utility {name!r}: " + (undecided.args[0] if isinstance(undecided.args[0], str)
                                                         else "a decision on a boosted row")) from None
            tables[name] = (table, prefix_error(table, u, self.W, self.rho))
        return tables

    def _choose(self, node):
        huc = self.method == "huc"
        tables = self._tables()
        cands = []  # (sup, error, subgroup k, utility, column, node)
        for k in range(self.W.shape[1]):
            for name, (table, err) in tables.items():
                sup = table.best[k][0]
                for col in ([0] if not huc else range(1, 1 + len(table.nodes))):
                    a = None if col == 0 else int(table.nodes[col - 1])
                    if node is None or a == node:
                        cands.append((float(sup[col]), 2.0 * float(err[k, col]), k, name, col, a))
        if not cands:
            return None
        sups = np.array([c[0] for c in cands])
        errs = np.array([c[1] for c in cands])
        if all(Fraction(s) + Fraction(e) <= self.epsilon for s, e in zip(sups.tolist(), errs.tolist())):
            return _Choice(float(sups.max()), 0, "", None, 0.0, False, np.zeros(0, int))
        j = int(np.argmax(sups))
        close = np.flatnonzero(sups + errs >= sups[j] - errs[j])  # (j among them)
        refined = {}  # candidate -> (entries, zero, sup) in Arb, where float64's bounds could not tell
        if len(close) > 1:
            j = self._refine_largest(cands, close.tolist(), tables, refined)
            self._count("the largest candidate")
        sup, err, k, name, col, a = cands[j]
        if not Fraction(sup) - Fraction(err) > self.epsilon:
            ball = self._refined(cands, j, tables, refined)[2]
            self._count("whether it exceeds epsilon")
            eps = _flint().arb(_flint().fmpq(self.epsilon.numerator, self.epsilon.denominator))
            if ball <= eps:  # the largest candidate, certainly not above epsilon
                return _Choice(float(sups.max()), 0, "", None, 0.0, False, np.zeros(0, int))
            if not ball > eps:
                raise Undecided("whether it exceeds epsilon")
        table, perr = tables[name]
        values = (table.residual if col == 0 else table.terms[:, col - 1]) * self.W[:, k]
        zero = self._zero(name, k, col, a, table, flat=False)
        found = certified_witness(values, zero, table, float(perr[k, col]))
        if found is None and col:  # prefix sums that may repeat exactly: the atoms whose term is 0 exactly
            found = certified_witness(values, self._zero(name, k, col, a, table), table, float(perr[k, col]))
        if found is None:  # the prefix sums in Arb
            for bits in REFINE_BITS:
                entries, zero, _ = self._refined(cands, j, tables, refined, bits)
                found = ball_witness(entries, zero, table, bits, self._exact_entry(table, name, k, col, a))
                if found is not None:
                    break
            else:
                raise Undecided("the witness interval")
            self._count("the witness interval")
            found = found[:2] + (float(found[2].mid()), float(found[3].mid()))
        r, b, sup_w, moment = found
        members = table.members(r, b)
        return _Choice(sup_w, k, name, a, moment, True, members, table.interval(r, b), table.U)

    def _count(self, what: str) -> None:
        self.refined[what] = self.refined.get(what, 0) + 1

    def _zero(self, name: str, k: int, col: int, a, table, flat: bool = True) -> np.ndarray:
        """The atoms whose entry of column ``col`` (node ``a``) in subgroup ``k`` of ``table`` is 0
        exactly: weight 0, no label mass below ``a``, or (``flat``) a utility constant below ``a``
        (:meth:`_flat_below`)."""
        zero = self.W[:, k] == 0
        if col:
            zero = zero | (self.star[:, a] == 0)
            if flat:
                zero = zero | self._flat_below(name, a, table)
        return zero

    def _refined(self, cands: list, j: int, tables: dict, refined: dict, bits: int | None = None) -> tuple:
        """Candidate ``j``'s column in Arb (:meth:`_column_balls`) at ``bits`` (default: the last
        precision it was refined at, else the first of :data:`REFINE_BITS`): ``(entries, zero, sup)``,
        ``sup`` enclosing Algorithm 2's ``max_j C_j - min_j C_j`` over the tie blocks' ends."""
        flint = _flint()
        if j in refined and (bits is None or refined[j][0] == bits):
            return refined[j][1]
        bits = bits or REFINE_BITS[0]
        _, _, k, name, col, a = cands[j]
        table = tables[name][0]
        zero = self._zero(name, k, col, a, table)
        entries = self._column_balls(table, name, k, col, a, zero, bits)
        with flint.ctx.workprec(bits):
            run, top, bottom = flint.arb(0), flint.arb(0), flint.arb(0)
            ends = set(table.block_last.tolist())
            for r, i in enumerate(table.order.tolist()):
                run = run + entries[i]
                if r in ends:
                    top, bottom = top.max(run), bottom.min(run)
            refined[j] = (bits, (entries, zero, top - bottom))
        return refined[j][1]

    def _refine_largest(self, cands: list, close: list, tables: dict, refined: dict) -> int:
        """The candidate of largest sup among ``close`` (those float64's bounds could not order),
        certified by enclosing their sups in Arb at :data:`REFINE_BITS`; :class:`Undecided` where
        the enclosures still overlap (equal sups, which App. F.3's tie rule orders: the certified
        engine decides)."""
        firsts = []  # one candidate per sup: the first (the tie rule's) of those equal to it exactly
        for c in close:
            if not any(self._same_column(cands, tables, f, c) or self._same_witness(cands, tables, refined, f, c)
                       for f in firsts):
                firsts.append(c)
        if len(firsts) == 1:
            return firsts[0]
        for bits in REFINE_BITS:
            sups = {c: self._refined(cands, c, tables, refined, bits)[2] for c in firsts}
            best = _certain_extreme(sups, firsts, True)
            if best is not None:
                return best
        raise Undecided("the largest candidate")

    def _same_column(self, cands: list, tables: dict, c: int, d: int) -> bool:
        """Whether candidates ``c`` and ``d`` have one column up to its sign, entry by entry,
        exactly: both the UC residual or both one node's terms, with equal weights ``w c(x)`` and,
        where these are not 0, values on the labels the column reads that agree as
        :meth:`_entries_agree` says; their sups are then equal, and App. F.3's tie rule takes the first."""
        return cands[c][5] == cands[d][5] and self._entries_agree(cands, tables, c, d, range(len(self.p0)))

    def _entries_agree(self, cands: list, tables: dict, c: int, d: int, atoms) -> bool:
        """Whether candidates ``c`` and ``d``, columns of one node (or both the UC residual), have
        entries at ``atoms`` equal up to one sign ``s`` for all of them: equal weights ``w c(x)``
        and, where these are not 0, values ``u'(f, y) = s u(f, y) + b`` on the labels the column
        reads (all, or those below the node), ``b`` one number per atom.  A.3's means on those
        labels are then ``s mu + b``, so the node's C.2 term ``sum_j pi*_j mu_j - pi*_v mu_v`` (and
        the UC residual ``E[u(Y)] - mu_u``) is ``s`` times the other's: the prefix sums are too, and
        ``max C - min C`` and the witness are the same (top-1 correctness at depth 2 on a node of
        leaves is the table ``-1`` on the label chosen there, on rows where it chooses the same)."""
        (_, _, k, name, _, a), (_, _, k2, name2, _, _) = cands[c], cands[d]
        labels = range(self.tree.K) if a is None else self.tree.label_ids_below(a)
        signs = {1, -1}
        for i in atoms:
            atom = self.dist.atoms[i]
            w = atom.weight * atom.c[k]
            if w != atom.weight * atom.c[k2]:
                return False
            if w and name != name2:
                v, v2 = self._decided(name, i, tables[name][0]), self._decided(name2, i, tables[name2][0])
                signs = {s for s in signs if len({v2[y] - s * v[y] for y in labels}) == 1}
                if not signs:
                    return False
        return True

    def _same_witness(self, cands: list, tables: dict, refined: dict, c: int, d: int) -> bool:
        """Whether candidates ``c`` and ``d`` (both the UC residual or both one node's terms) have
        one sup as one sum: each column's witness certified in Arb (:func:`ball_witness`), the
        atoms whose entries are not 0 exactly the same in both witnesses, and there the weights
        and the values the column reads equal, so that ``sup_c = |sum_S W t| = sup_d``.  App. F.3's
        tie rule then takes the first: one column in two subgroups that differ only outside the
        witnesses (or on atoms whose term is 0), or two utilities that agree on them."""
        if cands[c][5] != cands[d][5]:  # (the node; None for the UC residual)
            return False
        support = []
        for j in (c, d):
            entries, zero, _ = self._refined(cands, j, tables, refined)
            _, _, k, name, col, a = cands[j]
            table = tables[name][0]
            found = ball_witness(entries, zero, table, refined[j][0], self._exact_entry(table, name, k, col, a))
            if found is None:
                return False
            support.append({i for i in table.members(found[0], found[1]).tolist() if not zero[i]})
        return support[0] == support[1] and self._entries_agree(cands, tables, c, d, sorted(support[0]))

    def _decided(self, name: str, i: int, table) -> tuple:
        """``u(f_i, .)`` as the fast audit decided it for ``table``, exactly: the utility's own values
        on ``p0`` (rows it has not changed), the certified choice of top-1 correctness (0 or 1),
        else :meth:`_exact_values`."""
        u = self.utilities[name]
        if not self.changed[name][i]:
            return u.values(self.p0[i], i)
        if u.top1_depth is not None:
            return tuple(Fraction(float(x)) for x in table.U[i])
        return self._exact_values(u, i)

    def _column_balls(self, table, name: str, k: int, col: int, a, zero: np.ndarray, bits: int) -> list:
        """Every atom's entry ``W t`` of one column of ``table`` (subgroup ``k``; the UC residual,
        ``col`` 0, or node ``a``'s C.2 term ``sum_j pi*_{a_j} mu_{a_j} - pi*_a mu_a``) as Arb balls
        at ``bits``, from the exact state (:meth:`_prediction_ball`), the exact label laws and
        weights, and the utility's values decided exactly; exact zeros where ``zero``, and where
        the values are constant below ``a`` (Sec. 3.1), which are marked in ``zero``.

        >>> from huc_ref import LabelTree, Table
        >>> from huc_ref.fast.audit import dense_rows
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> b = BoundedBackend(FiniteDistribution(t, [{"p": ["1/4", "3/4"], "label": "a"}]),
        ...                    {"u": Table(t, [0, 1])}, "huc", Fraction(1, 100), 30)
        >>> table = dense_rows(b.ft, b.P, b.E, b.W, b.utilities["u"], b.ft.subtree_sums(b.P), b.star)
        >>> b._column_balls(table, "u", 0, 0, None, np.zeros(1, bool), 128)[0].contains(_flint().arb(-3) / 4)
        True
        """
        flint, tree = _flint(), self.tree
        out = []

        def lift(x):
            return flint.arb(flint.fmpq(x.numerator, x.denominator))
        with flint.ctx.workprec(bits):
            for i, atom in enumerate(self.dist.atoms):
                v = None if zero[i] else self._decided(name, i, table)
                if v is not None and col and len({v[y] for y in tree.label_ids_below(a)}) == 1:
                    zero[i] = True  # every mean is a's: 0 exactly
                if zero[i]:
                    out.append(flint.arb(0))
                    continue
                f = self._prediction_ball(i, bits)
                out.append(self._term(f, v, atom, col, a, lift) * lift(atom.weight * atom.c[k]))
        return out

    def _term(self, f, v, atom, col: int, a, lift):
        """One atom's entry of a column before its weight: the UC residual ``E_eta[u(Y)] - mu_u``
        (``col`` 0) or node ``a``'s C.2 term ``sum_j pi*_{a_j} mu_{a_j} - pi*_a mu_a``, from its
        prediction ``f`` (Arb balls, or exact rationals), values ``v`` and label law, with
        ``lift`` turning a rational into ``f``'s kind of number.

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> b = BoundedBackend(FiniteDistribution(t, [{"p": ["1/4", "3/4"], "label": "a"}]),
        ...                    {"u": Table(t, [0, 1])}, "huc", Fraction(1, 100), 30)
        >>> p, v, atom = b.p0[0], (Fraction(0), Fraction(1)), b.dist.atoms[0]
        >>> b._term(p, v, atom, 0, None, Fraction), b._term(p, v, atom, 1, 0, Fraction)  # u(a) - 3/4; mu_a - mu_r
        (Fraction(-3, 4), Fraction(-3, 4))
        """
        tree, eta = self.tree, atom.label_law(self.tree.K)

        def mean(ys):  # mu_{u,b} over the labels ys below b
            mass = sum((f[y] for y in ys[1:]), f[ys[0]])
            return sum((f[y] * lift(v[y]) for y in ys if v[y]), lift(Fraction(0))) / mass
        if col == 0:
            return lift(sum((e * x for e, x in zip(eta, v)), Fraction(0))) - mean(range(tree.K))
        t = -lift(sum((eta[y] for y in tree.label_ids_below(a)), Fraction(0))) * mean(tree.label_ids_below(a))
        for b in tree.child_ids[a]:
            star = sum((eta[y] for y in tree.label_ids_below(b)), Fraction(0))
            if star:
                t = t + lift(star) * mean(tree.label_ids_below(b))
        return t

    def _exact_entry(self, table, name: str, k: int, col: int, a):
        """``i -> `` atom ``i``'s entry of the column, exactly, where its row is still ``p0`` (the
        entries of :meth:`_column_balls` that are rationals); None for a boosted row."""
        def entry(i):
            if self.moved[i]:
                return None
            atom = self.dist.atoms[i]
            v = self._decided(name, i, table)
            return self._term(self.p0[i], v, atom, col, a, lambda x: x) * atom.weight * atom.c[k]
        return entry

    def _top_edges(self, u: Utility) -> list:
        """The edges down to depth ``l`` of top-1 correctness at depth ``l`` (their logits fix the
        masses at depth ``l``)."""
        depth = self.tree.depth_ids
        return [b for b in range(len(depth)) if 0 < depth[b] <= u.top1_depth]

    def _flat_below(self, name: str, a: int, table=None) -> np.ndarray:
        """The atoms whose utility ``name`` is constant on the leaves below node ``a``, exactly: there
        every child's mean is ``a``'s, so the node's term ``mu_{u,a_j} - mu_{u,a}`` is exactly 0
        (Sec. 3.1), whatever the row's probabilities.  Values are the utility's own on ``p0`` (rows
        it has not changed), else as ``table``'s audit decided them (:meth:`_decided`), or, without
        a table, :meth:`_exact_values` (a row it cannot decide is left out).

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["y1", "y2"], "b": ["y3", "y4"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "label": "y1"}])
        >>> b = BoundedBackend(d, {"u": Table(t, [1, 1, 0, 1])}, "huc", Fraction(1, 100), 30)
        >>> b._flat_below("u", t.id("a")).tolist(), b._flat_below("u", t.id("b")).tolist()
        ([True], [False])
        """
        u, below, changed = self.utilities[name], self.tree.label_ids_below(a), self.changed[name]
        flat = np.zeros(len(self.p0), dtype=bool)
        for i in range(len(self.p0)):
            try:
                v = (u.values(self.p0[i], i) if not changed[i] else self._exact_values(u, i) if table is None
                     else self._decided(name, i, table))
            except Undecided:
                continue
            flat[i] = len({v[y] for y in below}) == 1
        return flat

    def _key(self, u: Utility):
        """``i -> `` the part of atom ``i``'s exact state that determines ``mu_u`` (HUC-Boost and
        top-1 correctness at depth ``l``; otherwise None, :meth:`_linear_key`).  The score is the
        mass of the chosen node ``c``, the product over the edges ``a -> b`` down to it of
        ``pi0_b e^{z_b} / sum_k pi0_k e^{z_k}`` (``k`` the children of ``a``): where float64 tells
        which candidate is chosen, the key is ``"path"``, the product of the rational factors (the
        edges whose siblings share one logit: ``pi0_b / pi0_a``) and the multiset of the others,
        each as ``z_b`` and the distinct logits of ``a``'s children with their summed ``pi0_k /
        pi0_b`` (rows whose masses differ by a common scale below a node have one key; with no
        other factor the score is that rational); otherwise ``"edges"`` and the masses and logits
        of every edge down to depth ``l``.

        >>> from huc_ref import LabelTree, Top1AtDepth
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["y1", "y2"], "b": ["y3", "y4"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/2", "1/4", "1/8", "1/8"], "label": "y1"},
        ...                            {"p": ["1/2", "1/4", "1/16", "3/16"], "label": "y1"}])
        >>> b = BoundedBackend(d, {"u": Top1AtDepth(t, 2)}, "huc", Fraction(1, 100), 30)
        >>> key = b._key(b.utilities["u"])
        >>> key(0) == key(1), key(0)  # y1 in both (1/2 = 1/(4/3) x 1/(3/2)): b's split does not matter
        (True, ('path', Fraction(1, 2), ()))
        """
        tree = self.tree
        if self.method != "huc" or u.top1_depth is None:
            return None
        edges = self._top_edges(u)
        candidates = np.array(u.candidate_ids)
        cut_below = [tree.label_ids_below(a) for a in u.candidate_ids]

        def mass(chosen, pi, z):  # the rational factors' product and the other factors, down to a candidate
            factors, rational = [], Fraction(1)
            for b in self._path_to(chosen):
                grouped: dict = {}
                for k in tree.child_ids[tree.parent_ids[b]]:
                    grouped[z[k]] = grouped.get(z[k], 0) + pi[k] / pi[b]
                if len(grouped) == 1:  # every child's logit z_b: the factor is 1 / (sum_k pi0_k / pi0_b)
                    rational /= grouped[z[b]]
                else:
                    factors.append((z[b], tuple(sorted(grouped.items()))))
            return "path", rational, tuple(sorted(factors))

        def key(i):
            pi, z = self._pi0(i), self.z[i]
            sizes = [float(self.P[i, list(ys)].sum()) for ys in cut_below]
            top = max(sizes)
            close = [int(c) for c, m in zip(candidates, sizes) if m >= top * (1 - 1e-9)]
            if len(close) == 1:
                return mass(close[0], pi, z)
            # float64 cannot tell the chosen node: where the close candidates' masses share their factors (as
            # rationals do: no moved split on their paths; or two leaves of one row tied below a moved split),
            # the first largest rational part (K.2); else the one Arb's enclosures put certainly above the
            # others; else every edge's mass and logit
            found = [mass(c, pi, z) for c in close]
            if len({f[2] for f in found}) == 1:
                return max(found, key=lambda f: f[1])
            flint = _flint()
            for bits in REFINE_BITS:
                f = self._prediction_ball(i, bits)
                with flint.ctx.workprec(bits):
                    balls = [sum((f[y] for y in tree.label_ids_below(c)), flint.arb(0)) for c in close]
                j = _certain_extreme(balls, list(range(len(close))), True)
                if j is not None:
                    return found[j]
            pairs = tuple(zip((pi[b] for b in edges), z[edges]))
            return "edges", tuple(sorted(pairs)) if u.top1_depth == 1 else pairs
        return key

    def _pi0(self, i: int) -> list:
        """Atom ``i``'s exact initial masses ``pi0_a`` of every node (A.3), computed once."""
        if i not in self._pi0_exact:
            self._pi0_exact[i] = subtree_sums(self.tree, self.p0[i])
        return self._pi0_exact[i]

    def _path_to(self, a: int) -> list:
        """The nodes from below the root down to node ``a`` (pre-order ids; the edges into them)."""
        return [b for _, b in self._edges[a]]

    def _moved_splits(self, z) -> set:
        """The nodes whose split some update has moved: the parents of the edges of nonzero logit ``z``."""
        return {self.tree.parent_ids[b] for b in np.flatnonzero(z != 0).tolist()}

    def _factor_key(self, a: int, z, moved: set) -> tuple:
        """The factors ``e^{z_b} / N_p`` on the path down to node ``a`` (HUC-Boost: the moved splits
        ``p`` with the logit of the child ``b`` taken, :meth:`_moved_splits`), as a key: nodes with one
        key have one factor, exactly; ``()``: none, ``a``'s mass is ``pi0_a``."""
        return tuple((p, z[b]) for p, b in self._edges[a] if p in moved)

    def _signature(self, i: int):
        """``y -> `` the factors of leaf ``y``'s boosted probability over ``p0_y``, as a key: the
        updated nodes on its path with the logit of the child taken (UC-Boost: ``z_y``).  Leaves
        with one key have one factor ``prod e^{z} / N``, exactly; a leaf below no updated node has
        the key ``()`` and its probability is ``p0_y``."""
        z, tree = self.z[i], self.tree
        if self.method == "uc":
            leaves = tree.leaf_node_ids
            return lambda y: ("uc", z[leaves[y]])
        moved, leaves = self._moved_splits(z), tree.leaf_node_ids
        return lambda y: self._factor_key(leaves[y], z, moved)

    def _coefficients(self, i: int, v) -> dict:
        """A linear form ``sum_y f_y v_y`` of atom ``i``'s boosted prediction grouped by factor
        (:meth:`_signature`): the nonzero rational coefficients ``sum_{y in s} p0_y v_y``.  Under
        HUC-Boost the labels below a node ``a`` on which ``v`` is constant (the highest such) are
        one term: their predictions sum to ``pi0_a`` times the factors above ``a`` (below it every
        split is a distribution), so the logits below ``a`` do not enter.

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["y1", "y2"], "b": ["y3", "y4"]})
        >>> b = BoundedBackend(FiniteDistribution(t, [{"p": ["1/4"] * 4, "label": "y1"}]),
        ...                    {"u": Table(t, [1, 1, 0, 0])}, "huc", Fraction(1, 100), 30)
        >>> b.z[0, t.id("y1")], b.z[0, t.id("a")] = 5, 3  # a's split and the root's moved
        >>> b._coefficients(0, [1, 1, 0, 0])  # y1 + y2 = pi0_a e^{z_a} / N_r: a's split cancels
        {((0, 3),): Fraction(1, 2)}
        """
        out: dict = {}
        for s, mass, x in self._regions(i, v):
            if x:
                out[s] = out.get(s, 0) + mass * x
        return {s: c for s, c in out.items() if c}

    def _regions(self, i: int, v):
        """The parts of the labels :meth:`_coefficients` sums over, as ``(factor key, p0 mass, value)``:
        under HUC-Boost the highest nodes below which ``v`` is constant (``pi0_a``), else the labels."""
        if self.method == "huc":
            z = self.z[i]
            moved, pi = self._moved_splits(z), self._pi0(i)
            for a, _, x in self._constant_below(v):
                if pi[a]:
                    yield self._factor_key(a, z, moved), pi[a], x
            return
        sig, p = self._signature(i), self.p0[i]
        for y, x in enumerate(v):
            if p[y]:
                yield sig(y), p[y], x

    def _masses(self, i: int, v) -> dict:
        """Each factor's ``p0`` mass in :meth:`_regions` (under UC-Boost the labels of one logit, the
        same for every ``v``: kept until the row moves again)."""
        if self.method != "huc" and self._uc_masses.get(i, (None,))[0] == self.version[i]:
            return self._uc_masses[i][1]
        out: dict = {}
        for s, mass, _ in self._regions(i, v):
            out[s] = out.get(s, 0) + mass
        if self.method != "huc":
            self._uc_masses[i] = (self.version[i], out)
        return out

    def _rational_form(self, i: int, v, c: dict | None = None):
        """``sum_y f_y v_y`` on atom ``i``'s boosted row where it is rational: every factor's
        coefficient (:meth:`_coefficients`, or ``c``) is ``m`` times the mass it multiplies
        (:meth:`_masses`), one ``m`` for all of them (none moved: ``m = 0``), so that, as ``f``
        sums to 1, ``sum_y f_y v_y = m + sum_y f_y (v_y - m)`` leaves only the unmoved labels'
        rational part; else None.

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["y1", "y2"], "b": ["y3", "y4"]})
        >>> b = BoundedBackend(FiniteDistribution(t, [{"p": ["1/4"] * 4, "label": "y1"}]),
        ...                    {"u": Table(t, [1, 1, 0, 0])}, "huc", Fraction(1, 100), 30)
        >>> b.z[0, t.id("a")] = 3  # the root's split moved: a and b hold irrational masses
        >>> b._rational_form(0, [1, 1, 0, 0]) is None, b._rational_form(0, [0, 1, 0, 1])  # y2 + y4: 1/2 e + 1/2 e'
        (True, Fraction(1, 2))
        """
        c = self._coefficients(i, v) if c is None else c
        c0 = c.get((), Fraction(0))
        if all(s == () for s in c):
            return c0
        masses = self._masses(i, v)
        means = {c.get(s, Fraction(0)) / mass for s, mass in masses.items() if s != ()}  # per factor, v's mean
        if len(means) > 1:
            return None
        m = means.pop()  # every factor's coefficient is m times its mass
        return m + c0 - m * masses.get((), Fraction(0))

    def _constant_below(self, v) -> list:
        """The highest nodes below which ``v`` is constant, as ``(node, its labels, the value)``:
        a partition of the labels."""
        tree, out = self.tree, []
        stack = [tree.id(tree.root)]
        while stack:
            a = stack.pop()
            ys = tree.label_ids_below(a)
            if len({v[y] for y in ys}) == 1:
                out.append((a, ys, v[ys[0]]))
            else:
                stack.extend(tree.child_ids[a])
        return out

    def _exact_values(self, u: Utility, i: int):
        """``u(f_i, .)`` of a boosted row, exactly: a table's fixed values; a binary decision by
        the sign of its margin (exact where it is rational, :meth:`_rational_form`, else float64's where
        the bound tells it, else Arb's enclosure of ``sum_y f_y d_y`` at :data:`REFINE_BITS`); ranks
        and top-1 correctness from :meth:`_surrogate`'s row; else Undecided.  Kept until the row
        moves again."""
        version, found = self._values.get((id(u), i), (None, None))
        if version != self.version[i]:
            found = self._fresh_values(u, i)
            self._values[id(u), i] = (self.version[i], found)
        return found

    def _fresh_values(self, u: Utility, i: int):
        from .utilities import BinaryDecision, Table
        if isinstance(u, Table):
            return u.values(self.p0[i])
        if isinstance(u, BinaryDecision):
            margin = self._rational_form(i, u.d)  # exactly, where rational
            if margin is None:
                d = np.array([float(x) for x in u.d])
                margin = float(self.P[i] @ d)
                if abs(margin) <= rounding_bound(self.tree.K, self.rho) * float(np.abs(self.P[i]) @ np.abs(d)):
                    margin = self._margin_sign(i, u.d)
            return u.d if margin >= 0 else tuple(-x for x in u.d)
        surrogate = self._surrogate(u)
        if surrogate is None:
            raise Undecided("a decision on a boosted row")
        return u.values(surrogate(i))

    def _margin_sign(self, i: int, d) -> int:
        """The sign of ``sum_y f_y d_y`` on atom ``i``'s boosted row from Arb's enclosures at
        :data:`REFINE_BITS`, or :class:`Undecided` (a margin of 0 whose factors do not cancel)."""
        flint = _flint()

        def margin(bits):
            f = self._prediction_ball(i, bits)
            return sum((f[y] * flint.fmpq(x.numerator, x.denominator) for y, x in enumerate(d) if x), flint.arb(0))
        return _refined_sign(margin, "a binary decision's margin")

    def _exact_score(self, name: str, i: int, key):
        """``mu_u(f_i)`` of a boosted row for the tie blocks: the rational it is where the linear
        form's factors cancel (:meth:`_rational_form`: a rank whose weights are 0 and 1 on two
        labels of equal mass below one split, 1/2 elsewhere, scores 1/2 whatever the logits),
        else :class:`_Same` of its state (``key``); kept until the row moves again."""
        version, found = self._scores.get((name, i), (None, None))
        if version == self.version[i]:
            return found
        u = self.utilities[name]
        if key is not None:  # top-1 at depth l: rational exactly while no split above depth l has moved,
            state = key(i) if any(self.z[i, self._top_edges(u)]) else None  # or none on the chosen path
            if state is None:
                found = u.score(self.p0[i])
            elif state[0] == "path" and not state[2]:
                found = state[1]
            else:
                found = _Same(state, functools.partial(self._score_ball, u, i))
            self._scores[name, i] = (self.version[i], found)
            return found
        v = self._exact_values(u, i)
        c = self._coefficients(i, v)
        found = self._rational_form(i, v, c)
        if found is None:
            found = _Same(key(i) if key is not None else self._linear_key(i, c),
                          functools.partial(self._score_ball, u, i))
        self._scores[name, i] = (self.version[i], found)
        return found

    def _prediction_ball(self, i: int, bits: int) -> list:
        """Atom ``i``'s boosted prediction ``f_i`` (the module docstring's fresh softmax of its exact
        logits) as Arb balls at ``bits`` of precision (python-flint: rigorous enclosures).

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> b = BoundedBackend(FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "a"}]),
        ...                    {"u": Table(t, [0, 1])}, "huc", Fraction(1, 100), 30)
        >>> _ = b.update(b.choose(None), None, None)  # z = (1, -1): f = (e, 1/e) / (e + 1/e)
        >>> f = b._prediction_ball(0, 128)
        >>> e2 = _flint().arb(2).exp()
        >>> bool((f[0] - e2 / (e2 + 1)).abs_upper() < 1e-15), (f[0] + f[1]).contains(1), bool(f[0].rad() < 2.0 ** -120)
        (True, True, True)
        """
        version, found = self._balls.get((i, bits), (None, None))
        if version == self.version[i]:
            return found
        found = self._balls[i, bits] = (self.version[i], self._fresh_ball(i, bits))
        return found[1]

    def _fresh_ball(self, i: int, bits: int) -> list:
        flint, tree, p, z = _flint(), self.tree, self.p0[i], self.z[i]
        num, den = (self.scale.numerator, self.scale.denominator) if self.scale is not None else (0, 1)

        def q(x):
            return flint.fmpq(x.numerator, x.denominator)

        with flint.ctx.workprec(bits):
            def e(b):
                return _exact_ball(flint, int(z[b]) * num, den).exp() if z[b] else flint.arb(1)
            if self.method == "uc":
                w = [q(p[y]) * e(b) for y, b in enumerate(tree.leaf_node_ids)]
                total = sum(w[1:], w[0])
                return [x / total for x in w]
            norms = {}
            pi = self._pi0(i)
            for a in self._moved_splits(z):
                parts = [q(pi[b] / pi[a]) * e(b) for b in tree.child_ids[a]]
                norms[a] = sum(parts[1:], parts[0])
            out = []
            for y in range(tree.K):
                f = flint.arb(q(p[y]))
                for a, b in self._edges[tree.leaf_node_ids[y]]:
                    if a in norms:
                        f = f * e(b) / norms[a]
                out.append(f)
            return out

    def _score_ball(self, u: Utility, i: int, bits: int):
        """``mu_u(f_i)`` of atom ``i``'s boosted row as an Arb ball at ``bits`` (Sec. 2.1): top-1
        correctness at depth ``l`` the largest mass of the depth-``l`` cut (K.2), whichever
        candidate is chosen; otherwise ``sum_y f_y u_y`` with the values decided exactly
        (:meth:`_exact_values`).

        >>> from huc_ref import LabelTree, Top1AtDepth
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> b = BoundedBackend(FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "a"}]),
        ...                    {"u": Top1AtDepth(t, 1)}, "huc", Fraction(1, 100), 30)
        >>> _ = b.update(b.choose(None), None, None)
        >>> s = b._score_ball(b.utilities["u"], 0, 128)
        >>> bool(s.contains(b._prediction_ball(0, 256)[0])), bool(s.rad() < 2.0 ** -120)
        (True, True)
        """
        f = self._prediction_ball(i, bits)
        flint = _flint()
        with flint.ctx.workprec(bits):
            if u.top1_depth is not None:
                masses = []
                for a in u.candidate_ids:
                    ys = self.tree.label_ids_below(a)
                    masses.append(sum((f[y] for y in ys[1:]), f[ys[0]]))
                best = masses[0]
                for m in masses[1:]:
                    best = best.max(m)
                return best
            v = self._exact_values(u, i)
            return sum((f[y] * flint.fmpq(x.numerator, x.denominator) for y, x in enumerate(v) if x),
                       flint.arb(0))

    def _linear_key(self, i: int, c: dict) -> tuple:
        """A key of the linear form with coefficients ``c`` (:meth:`_coefficients`) of atom ``i``
        that determines its value: the coefficients by factor, and the normaliser of every
        updated node, as its distinct logits with their summed exact ``q0`` (the factors
        ``e^{z} / N`` are then equal factor by factor)."""
        tree, z, p = self.tree, self.z[i], self.p0[i]
        nodes = sorted({a for sig in c for a, _ in sig} if self.method == "huc" else {-1})
        norms = []
        for a in nodes:
            kids = tree.leaf_node_ids if a == -1 else tree.child_ids[a]
            below = [[y] for y in range(tree.K)] if a == -1 else [tree.label_ids_below(b) for b in kids]
            grouped: dict = {}
            for b, ys in zip(kids, below):
                grouped[z[b]] = grouped.get(z[b], 0) + sum((p[y] for y in ys), Fraction(0))
            total = sum(grouped.values())
            norms.append((a, tuple(sorted((zb, m / total) for zb, m in grouped.items()))))
        return tuple(sorted(c.items())), tuple(norms)

    def _ranked(self, i: int) -> tuple:
        """A rational row ranked as atom ``i``'s boosted row is (A.1's ``r_p``: by decreasing
        ``p_y``, ties to the earlier label), for rank and top-``k`` utilities: two leaves with one
        factor key (:meth:`_signature`) compare exactly by ``p0`` (``p_y = p0_y F``, one ``F``),
        as the certified engine would; two with different keys by the float64 row where it tells
        them apart beyond its error (relatively ``max(10^-9, 4 rho)``), else by Arb's enclosures at
        :data:`REFINE_BITS`, else :class:`Undecided` (a tie of different factors is left to the
        certified engine).  The row is ``K - g`` over
        its sum for the ``g``-th group of equal entries, so only its order is the boosted row's.

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["y1", "y2"], "b": ["y3", "y4"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/8", "1/8", "1/4", "1/2"], "label": "y1"}])
        >>> b = BoundedBackend(d, {"u": Table(t, [1, 0, 0, 0])}, "huc", Fraction(1, 100), 30)
        >>> b._ranked(0)  # unboosted: p0's order, the tie y1 = y2 kept
        (Fraction(2, 11), Fraction(2, 11), Fraction(3, 11), Fraction(4, 11))
        """
        sig, p, P = self._signature(i), self.p0[i], self.P[i]
        tol = max(1e-9, 4.0 * self.rho)

        def first(a, b):  # < 0 where leaf a ranks before leaf b
            if sig(a) == sig(b):
                return (p[b] > p[a]) - (p[b] < p[a]) or a - b
            if abs(P[a] - P[b]) <= tol * max(P[a], P[b]):
                def entries(bits):  # Arb's enclosures of the two entries
                    f = self._prediction_ball(i, bits)
                    return f[a] - f[b]
                return -_refined_sign(entries, "a rank on a boosted row")
            return -1 if P[a] > P[b] else 1
        order = sorted(range(self.tree.K), key=functools.cmp_to_key(first))
        group, out = 0, [0] * len(order)
        for r, y in enumerate(order):
            if r and (sig(y) != sig(order[r - 1]) or p[y] != p[order[r - 1]]):
                group += 1
            out[y] = len(order) - group
        total = sum(out)
        return tuple(Fraction(v, total) for v in out)

    def _surrogate(self, u: Utility):
        """``i -> `` a rational row on which ``u`` decides as on atom ``i``'s boosted row, where
        float64 could not tell: a binary decision's row on one label whose ``d_y`` has the margin's
        sign (:meth:`_exact_values`: exact where rational, else Arb's; the same action); a rank
        (:meth:`_ranked`); top-1 correctness at any depth, either method (:meth:`_top1_row`: exact
        where the candidates' masses are forms whose differences share a sign, else Arb's
        enclosures).  Other utilities: None."""
        from .utilities import BinaryDecision, Rank
        if isinstance(u, BinaryDecision):  # asked only where float64 cannot tell the margin's sign
            def decided(i):
                act = self._exact_values(u, i) == u.d  # the margin's sign: exact, float64 or Arb (or Undecided)
                y = next(y for y, x in enumerate(u.d) if (x >= 0) == act)  # (a margin of that sign has one)
                return tuple(Fraction(int(k == y)) for k in range(self.tree.K))  # all mass on y: the same action
            return decided
        if isinstance(u, Rank):
            return self._ranked
        if u.top1_depth is None:
            return None
        return functools.partial(self._top1_row, u)

    def _top1_row(self, u: Utility, i: int) -> tuple:
        """A rational row on which top-1 correctness at depth ``l`` (K.2) chooses as on atom ``i``'s
        boosted row: 2 on the candidates of largest mass, 1 on the others, spread over their leaves.
        Each candidate's mass is a form ``sum_k c_k F_k`` with exact rational ``c_k`` and positive
        factors ``F_k`` (HUC-Boost: one, ``pi0_c`` times the moved splits' ``e^{z_b} / N_a`` on its
        path, keyed by them; UC-Boost: ``p0_y`` summed by leaf logit ``z``, ``F = e^z / N``).  Among
        the candidates float64 cannot tell from the largest (within 10^-9), two compare exactly
        where their forms' differences share a sign (equal forms: equal masses), else on Arb's
        enclosures at :data:`REFINE_BITS`; :class:`Undecided` where those overlap too.

        >>> from huc_ref import LabelTree, Top1AtDepth
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["y1", "y2"], "b": ["y3", "y4"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/4", "1/4", "1/4", "1/4"], "label": "y1"}])
        >>> b = BoundedBackend(d, {"u": Top1AtDepth(t, 2)}, "huc", Fraction(1, 100), 30)
        >>> b.scale = Fraction(1, 2 ** SCALE_BITS)
        >>> b.z[0, t.id("a")], b.z[0, t.id("b")] = 2 ** SCALE_BITS, -(2 ** SCALE_BITS)  # a's leaves rise
        >>> b._top1_row(b.utilities["u"], 0)  # y1 and y2 tie exactly under one factor: both largest
        (Fraction(1, 3), Fraction(1, 3), Fraction(1, 6), Fraction(1, 6))
        """
        from .boost import _shared_sign  # (the certified engine's module, imported where it is used)
        tree, p, z = self.tree, self.p0[i], self.z[i]
        cands = list(u.candidate_ids)
        below = [tree.label_ids_below(c) for c in cands]
        forms = []  # each candidate's mass as {factor key: exact coefficient}
        if self.method == "uc":
            leaves = tree.leaf_node_ids
            for ys in below:
                form: dict = {}
                for y in ys:
                    form[z[leaves[y]]] = form.get(z[leaves[y]], 0) + p[y]
                forms.append(form)
        else:
            moved, pi = self._moved_splits(z), self._pi0(i)
            forms = [{self._factor_key(c, z, moved): pi[c]} for c in cands]
        sizes = [float(self.P[i, list(ys)].sum()) for ys in below]
        top = max(sizes)
        group = [k for k, size in enumerate(sizes) if size >= top * (1 - 1e-9)]

        def order(j, k) -> int:  # the sign of mass_j - mass_k
            sign = _shared_sign([forms[j].get(x, 0) - forms[k].get(x, 0) for x in forms[j].keys() | forms[k].keys()])
            if sign is not None:
                return sign
            def difference(bits):
                f = self._prediction_ball(i, bits)
                a, b = (sum((f[y] for y in below[m][1:]), f[below[m][0]]) for m in (j, k))
                return a - b
            return _refined_sign(difference, "the largest mass at the utility's depth")

        largest = [group[0]]
        for k in group[1:]:
            sign = order(k, largest[0])
            if sign > 0:
                largest = [k]
            elif sign == 0:
                largest.append(k)
        row = [Fraction(0)] * tree.K
        for m, ys in enumerate(below):
            for y in ys:
                row[y] = Fraction(2 if m in largest else 1, len(ys))
        total = sum(row)
        return tuple(x / total for x in row)

    def logit(self, i: int, b: int) -> Fraction:
        """Atom ``i``'s accumulated logit ``z`` of the edge into node ``b`` (UC-Boost: of leaf ``b``),
        exactly (App. E.1: ``z_{t+1} = z_t + alpha h``).

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> b = BoundedBackend(FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "a"}]),
        ...                    {"u": Table(t, [0, 1])}, "huc", Fraction(1, 100), 30)
        >>> b.update(b.choose(None), None, None).rule[-1], b.logit(0, 1), b.logit(0, 2)
        (Fraction(-2, 1), Fraction(1, 1), Fraction(-1, 1))
        """
        return Fraction(0) if not self.z[i, b] else self.z[i, b] * self.scale

    def _fallback(self, node):
        """The certified engine's choice (:meth:`huc_ref.boost._Engine.certified_choice`) on the
        same exact state."""
        from .boost import _Engine, _table_interval
        if self._engine is None:
            self._engine = _Engine(self.dist, self.utilities, self.method, self.epsilon, "certified", self.digits)
        engine, tree = self._engine, self.tree
        for i in np.flatnonzero(self.moved).tolist():
            if self.method == "huc":
                engine.z[i] = {a: [self.logit(i, b) for b in tree.child_ids[a]] for a in self.branching}
            else:
                engine.z[i] = [self.logit(i, leaf) for leaf in tree.leaf_node_ids]
        choice, _, tables, _ = engine.certified_choice(node)
        if choice is None:
            return None
        lo_hi = _table_interval(tables, choice) if choice.members else ()
        U = np.array([[float(x) for x in row] for row in tables[choice.utility][1]])
        return _Choice(float(choice.sup), choice.subgroup, choice.utility, choice.node, float(choice.moment),
                       choice.exceeds, np.array(choice.members, dtype=int), [float(x) for x in lo_hi] or None, U)

    # ------------------------------------------------------------------ one update
    def _star(self, a: int) -> list:
        """The exact label mass ``pi*_a`` of every atom (E.2's ``J_v``)."""
        if a not in self._exact_star:
            below = self.tree.label_ids_below(a)
            self._exact_star[a] = [sum((law[y] for y in below), Fraction(0))
                                   for law in (atom.label_law(self.tree.K) for atom in self.dist.atoms)]
        return self._exact_star[a]

    def update(self, choice, fixed, floor):
        tree, ft, w, k, a = self.tree, self.ft, self.w, choice.subgroup, choice.node
        huc = self.method == "huc"
        members = choice.members[self.C[choice.members, k] != 0]
        P, E = self.P[members], self.E[members]
        c = self.C[members, k][:, None]
        U = choice.values[members]
        K = tree.K
        if huc:
            kids = list(tree.child_ids[a])
            pi = ft.subtree_sums(P, np.array([a] + kids))
            h, q = direction("huc", ft, P, U, c, pi, a)
            h, grid = _on_grid(h)
            star_v, star_kids = self.star[members, a], self.star[members][:, kids]
            gamma_f = float((w[members] * (h * (star_kids - star_v[:, None] * q)).sum(axis=1)).sum())
            # q = pi_{v_j} / pi_v: relative error 2 (rho + gamma_K) + u (sums of positive entries, one division)
            scale = (w[members] * (np.abs(h) * (star_kids + star_v[:, None] * q)).sum(axis=1)).sum()
            err_q = 2.0 * (self.rho + gamma(K)) + UNIT_ROUNDOFF
            inside = self._star(a)
        else:
            kids = list(tree.leaf_node_ids)
            h, grid = _on_grid(direction("uc", ft, P, U, c)[0])
            mean = (P * h).sum(axis=1, keepdims=True)
            gamma_f = float((w[members] * (E * (h - mean)).sum(axis=1)).sum())
            scale = (w[members] * ((E + P) * np.abs(h)).sum(axis=1)).sum()
            err_q = self.rho
            inside = None
        # Gamma = E[<h, R>] for the applied h (E.2): its float value, off by at most err_gamma (relative to
        # sum_i w_i sum_j |h_ij| (pi*_ij + pi*_iv q_ij): the weights' and label masses' roundings u and
        # u + gamma_K, q's err_q, each atom's products and sums gamma_{2K + 3}, the sum over atoms gamma_m)
        err_gamma = Fraction(_MARGIN * (err_q + gamma(3 * K + len(members) + 8)) * float(scale))
        g_lo, g_hi = Fraction(gamma_f) - err_gamma, Fraction(gamma_f) + err_gamma
        self.last_step = (members, h, g_lo, g_hi)  # (what tests/test_certified.py checks against 300 bits)
        # Lambda = (1/4) E[J_v(Y) (max_j h_j - min_j h_j)^2], exact for the float h (E.2)
        hmax, hmin = h.max(axis=1).tolist(), h.min(axis=1).tolist()
        lam = Fraction(0)
        atoms = self.dist.atoms
        for i, top, bottom in zip(members.tolist(), hmax, hmin):
            mass = atoms[i].weight if inside is None else atoms[i].weight * inside[i]
            if mass and top != bottom:
                lam += mass * (Fraction(top) - Fraction(bottom)) ** 2
        lam /= 4
        if not lam:
            raise HUCError("boost: Lambda = 0 for a violated candidate (Lemma E.4 says impossible)", kind="internal")
        if fixed is None and not self.moved[members].any():  # rounded from the exact Gamma / Lambda (rational_gamma)
            exact = {i: [Fraction(x) for x in row] for i, row in zip(members.tolist(), h.tolist())}
            alpha = Fraction(float(rational_gamma(self.dist, self.method, a, exact) / lam))
        elif fixed is None:
            alpha = Fraction(gamma_f / float(lam))
        else:
            if not (g_lo > 0 or g_hi < 0):
                raise HUCError("boost: the sign of Gamma could not be certified in float64", kind="undecided")
            alpha = fixed if g_lo > 0 else -fixed
        # alpha Gamma - alpha^2 Lambda / 2, enclosed (alpha and Lambda exact)
        ends = sorted([alpha * g_lo, alpha * g_hi])
        p_lo, p_hi = ends[0] - alpha ** 2 * lam / 2, ends[1] - alpha ** 2 * lam / 2
        change = self._move(members, kids, h, grid, alpha, fixed, a if huc else None)
        loss = self.loss
        after = (loss[0] + change[0], loss[1] + change[1])
        self.loss = after
        bound_ok = change[1] + p_hi <= 0  # eq. (101) for the applied step: after <= before - promised
        decreased = change[1] < 0
        floor_ok = None if floor is None else p_lo > floor
        record = {"subgroup": self.dist.subgroups[k], "utility": choice.utility,
                  "node": None if a is None else tree.nodes[a], "interval": choice.interval or [],
                  "gamma": choice.moment, "lambda": float(lam), "alpha": fraction_text(alpha),
                  "log_loss_before": float(sum(loss) / 2), "log_loss_after": float(sum(after) / 2),
                  "guaranteed_decrease": float((p_lo + p_hi) / 2), "quadratic_bound_holds": bool(bound_ok),
                  "log_loss_decreased": bool(decreased)}
        lo, hi = (choice.interval or [0.0, 0.0])
        rule = (k, choice.utility, a, Fraction(lo), Fraction(hi), alpha)
        return Update(record, rule, bool(bound_ok), bool(decreased), None if floor_ok is None else bool(floor_ok))

    def _move(self, members, kids, h, E, alpha, fixed, a):
        """``z += alpha h`` on the members' edges ``kids`` (exactly: ``h`` is a multiple of ``2^E``,
        ``alpha`` a float64 or the fixed step, so the increment is an integer multiple of the run's
        scale), their factors and rows again (a fresh softmax of the exact logits), and the exact
        bounds of the log loss's change:
        ``-sum_i w_i (alpha sum_j pi*_{v_j} h_j - pi*_v (log N' - log N))`` (UC: ``pi* = eta``)."""
        if self.scale is None:
            self.scale = (Fraction(1) if fixed is None else Fraction(fixed)) / (1 << SCALE_BITS)
        if fixed is None:  # alpha = p / 2^t, h = k 2^E: alpha h = k p 2^(E - t)
            p, q = float(alpha).as_integer_ratio()
            shift = SCALE_BITS + E - (q.bit_length() - 1)
            unit = p << shift if shift >= 0 else None
        else:  # alpha = +-fixed: alpha h = +-fixed k 2^E
            shift = SCALE_BITS + E
            unit = (1 if alpha > 0 else -1) << shift if shift >= 0 else None
        if unit is None or Fraction(fixed if fixed is not None else 1) / (1 << SCALE_BITS) != self.scale:
            raise HUCError("boost: the step left the exact scale of the logits (internal)", kind="internal")
        k = np.rint(np.ldexp(h, -E)).astype(np.int64).astype(object)  # exact: |k| <= 2^41
        z = self.z
        block = z[np.ix_(members, kids)] + k * unit
        z[np.ix_(members, kids)] = block
        lo, hi = exp_bounds(block.ravel().tolist(), self.scale)
        lo, hi = lo.reshape(block.shape), hi.reshape(block.shape)
        if not (np.all(lo > 0) and np.all(np.isfinite(hi))):
            raise HUCError("boost: a logit left float64's range (e^z below 2.2e-308 or beyond 1.8e+308); "
                           "certified float64 cannot hold the prediction: use engine='exact'", kind="undecided")
        r_E = float(((hi - lo) / lo).max()) + UNIT_ROUNDOFF  # (hi is used: off by at most (hi - lo) / lo)
        q0 = self.P0[members] if a is None else self.pi0[np.ix_(members, kids)] / self.pi0[members, a][:, None]
        err_q0 = UNIT_ROUNDOFF if a is None else 2.0 * (UNIT_ROUNDOFF + gamma(self.tree.K)) + UNIT_ROUNDOFF
        N = (q0 * hi).sum(axis=1)
        r_N = _MARGIN * (err_q0 + r_E + gamma(len(kids) + 1))
        F = hi / N[:, None]
        self.r_F = max(self.r_F, _MARGIN * (r_E + r_N + UNIT_ROUNDOFF))
        if self.r_F > 1e-9:
            raise HUCError("boost: the float64 error bound of the predictions grew past 1e-9 (a logit beyond "
                           "float64's reach?); use engine='exact'", kind="undecided")
        self.F[np.ix_(members, kids)] = F
        self.P[members] = self.P0[members] * self.F[members][:, self.paths].prod(axis=2)
        self.moved[members] = True
        self.version[members] += 1
        for name, changed in self.changed.items():
            if not self.unmoved[name][self.tree.id(self.tree.root) if a is None else a]:
                changed[members] = True
        self.rho = _MARGIN * (UNIT_ROUNDOFF + self.H * self.r_F + gamma(self.H + 1))
        # log N' - log N per member, from enclosures of N' and the stored bounds of log N
        node = -1 if a is None else a
        new_lo, new_hi = log_bounds(np.nextafter(N * (1 - r_N), 0), np.nextafter(N * (1 + r_N), np.inf))
        star = None if a is None else self._star(a)
        E = self.E[members]
        if a is not None:
            S = (self.star[members][:, kids] * h).sum(axis=1)
            absS = (self.star[members][:, kids] * np.abs(h)).sum(axis=1)
        else:
            S, absS = (E * h).sum(axis=1), (E * np.abs(h)).sum(axis=1)
        err_S = _MARGIN * (2 * UNIT_ROUNDOFF + gamma(self.tree.K + len(kids) + 2)) * absS
        # sum_i w_i (alpha (s_i +- e_i) - mass_i (log N'_i - log N_i)) at its ends, in exact sums over
        # one common denominator (rational.exact_dot): the same rationals as member by member
        members, atoms = members.tolist(), self.dist.atoms
        zero = (Fraction(0), Fraction(0))
        old_lo, old_hi = zip(*(self.log_norm.get((i, node), zero) for i in members))
        for t, i in enumerate(members):
            self.log_norm[i, node] = (new_lo[t], new_hi[t])
        w = [atoms[i].weight for i in members]
        wm = w if star is None else [x * star[i] for x, i in zip(w, members)]
        ws, we = (exact_dot(w, (Fraction(x) for x in v.tolist())) for v in (S, err_S))
        a_lo, a_hi = sorted([alpha * (ws - we), alpha * (ws + we)])  # (e_i >= 0: the ends of every member's)
        d_lo = exact_dot(wm, new_lo) - exact_dot(wm, old_hi)
        d_hi = exact_dot(wm, new_hi) - exact_dot(wm, old_lo)
        return d_lo - a_hi, d_hi - a_lo

    # ------------------------------------------------------------------ the end
    def final(self):
        masses = self.ft.subtree_sums(self.P)
        exact = ExactRows(self.P)
        final = result_rows(self.tree, {name: dense_rows(self.ft, self.P, self.E, self.W, u, masses, self.star,
                                                         exact=exact)
                                        for name, u in self.utilities.items()}, self.dist.subgroups,
                            len(self.w), False)
        return {"uc": final.uc.sup, "huc": final.huc.sup, "log_loss": float(sum(self.loss) / 2),
                "log_loss_bounds": [float(self.loss[0]), float(self.loss[1])], "relative_error": self.rho}

    def predictions(self):
        return self.P.tolist()


def boost(dist: FiniteDistribution, utilities: Mapping[str, Utility], *, method: str = "huc", epsilon="1/100",
          max_updates: int = 1000, step="adaptive", select: str = "greedy", max_passes: int = 100, digits: int = 30,
          progress=None) -> BoostResult:
    """HUC-Boost (Algorithm 1/3) or UC-Boost (Sec. 3.2, App. E) on :class:`BoundedBackend`: the
    driver, options and messages of :func:`huc_ref.boost.boost`; ``digits``: the working
    precision of the certified engine where float64 cannot decide.  The result says
    ``arithmetic`` = :data:`ARITHMETIC` and ``theorem_3_5["certified"] = True``.

    App. D.1: HUC-Boost removes the violation UC cannot see; the same two updates as the
    certified engine's.

    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> r = boost(d, {"u": Table(t, [-1, 1, 1, 1])}, epsilon="1/10")
    >>> r.stopped, len(r.updates), r.updates[0]["node"], r.updates[0]["alpha"], r.theorem_3_5["holds"]
    ('tolerance', 2, 'v0', '1', True)
    """
    from .boost import check_digits  # (the certified engine's module, imported where it is used)
    digits = check_digits(digits)  # the fallback engine's precision: the certified engine's rule
    eps, fixed = boost_options(dist, utilities, method=method, select=select, epsilon=epsilon,
                               max_updates=max_updates, step=step, max_passes=max_passes)
    backend = BoundedBackend(dist, utilities, method, eps, digits)
    return drive(backend, BoostResult(method, eps, None, ARITHMETIC), method=method, epsilon=eps, fixed=fixed,
                 select=select, max_updates=max_updates, max_passes=max_passes, progress=progress)
