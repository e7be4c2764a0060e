"""The paper's bounds: Prop. 3.3, Thm 3.4, Thm 3.5's update count, App. H.1 (docs/specification.md §3).

``sqrt`` and ``log`` make these bounds irrational.  Each is returned as a
:class:`CertifiedReal`: the exact sympy expression and a rational enclosure
``lo <= value <= hi`` computed in interval arithmetic (mpmath ``iv``, outward rounding),
so a comparison is decided only when the enclosure decides it.

sympy and mpmath are imported by the functions that use them, when first called: ``import
huc_ref`` (and the float64 path, which calls none of these) loads neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import ceil
from numbers import Integral
from typing import TYPE_CHECKING

from .errors import HUCError, given
from .rational import exact, shown

if TYPE_CHECKING:  # (the annotations only)
    import sympy

__all__ = ["CertifiedReal", "prop_3_3_bound", "theorem_3_4_deviation", "theorem_3_5_update_bound",
           "update_decrease_floor", "h1_gap_bound", "h1_sample_size_holds"]

_PRECISION = 113  # bits of the interval enclosures; raised when a decision needs it


@dataclass(frozen=True)
class CertifiedReal:
    """An exact real with a certified rational enclosure ``[lo, hi]`` (docs/specification.md §4).

    ``sqrt`` and ``log`` force irrational values, as in Thm 3.4 and H.1: the value is kept as
    its exact expression, and comparisons are decided on the enclosure.

    Parameters
    ----------
    expr : sympy.Expr
        The exact value.
    lo, hi : Fraction
        Rationals with ``lo <= value <= hi``, computed in interval arithmetic (mpmath's ``iv``,
        outward rounding).

    Examples
    --------
    >>> import sympy
    >>> r = CertifiedReal(sympy.sqrt(2), Fraction(141, 100), Fraction(142, 100))
    >>> r.certainly_le(Fraction(3, 2)), r.certainly_le(1), str(r)
    (True, False, '1.41421356237 (in [1.41, 1.42])')
    """

    expr: sympy.Expr
    lo: Fraction
    hi: Fraction

    def __str__(self) -> str:
        import sympy
        return f"{sympy.N(self.expr, 12)} (in [{float(self.lo):.12g}, {float(self.hi):.12g}])"

    def certainly_le(self, x) -> bool:
        """Whether ``value <= x``, decided on the enclosure (the certified comparisons of docs/specification.md §4).

        Parameters
        ----------
        x : int or Fraction
            The exact number compared with.

        Returns
        -------
        bool
            True if ``value <= x`` is certain (``hi <= x``); False if ``value > x`` is certain
            (``lo > x``).

        Raises
        ------
        HUCError
            Of kind ``undecided`` where the enclosure cannot decide (``lo <= x < hi``), which the
            callers avoid by recomputing at a higher precision.

        Examples
        --------
        >>> b = theorem_3_4_deviation(100, 1, Fraction(1, 2))  # 16/10 + 4 sqrt(log 2 / 200)
        >>> b.certainly_le(Fraction(184, 100)), b.certainly_le(Fraction(183, 100))
        (True, False)
        """
        x = Fraction(x)
        if self.hi <= x:
            return True
        if self.lo > x:
            return False
        raise HUCError(f"cannot decide {self.expr} <= {shown(x)} at this precision", kind="undecided")


def _enclose(build, expr, precision=_PRECISION) -> CertifiedReal:
    from mpmath.ctx_iv import MPIntervalContext
    from mpmath.libmp import to_rational
    ctx = MPIntervalContext()  # a private context: no global precision is touched
    ctx.prec = precision
    lo, hi = build(ctx)._mpi_
    return CertifiedReal(expr, Fraction(*to_rational(lo)), Fraction(*to_rational(hi)))


def _positive_int(x, name):
    # (numpy's integers too: Integral)
    if isinstance(x, bool) or not isinstance(x, Integral) or x < 1:
        raise HUCError(f"{name}: must be a positive integer, got {given(x)}", kind="option")
    return int(x)


def _count(x, name):
    if isinstance(x, bool) or not isinstance(x, Integral) or x < 0:
        raise HUCError(f"{name}: must be a non-negative integer, got {given(x)}", kind="option")
    return int(x)


def _probability(delta):
    delta = exact(delta, "delta")
    if not 0 < delta < 1:
        raise HUCError(f"delta: must be in (0, 1), got {shown(delta)}", kind="option")
    return delta


def prop_3_3_bound(huc, n_relevant: int) -> Fraction:
    """The right side of Prop. 3.3, ``UC(f; C, {u}) <= |V_T(u)| HUC(f; C, {u})``.

    Parameters
    ----------
    huc : int, Fraction or str
        ``HUC(f; C, {u})``, exactly.
    n_relevant : int
        ``|V_T(u)|``, a non-negative integer.

    Returns
    -------
    Fraction
        ``|V_T(u)| HUC``.  A utility with no relevant node has the bound 0 (App. F.2: "if the
        relevant-node set is empty, the utility residual is identically zero", so its UC is 0;
        the proof's sum over ``V_T(u)`` is empty).

    Raises
    ------
    HUCError
        Of kind ``option`` where ``n_relevant`` is not a non-negative integer; as
        :func:`~huc_ref.rational.exact` where ``huc`` is not exact.

    Examples
    --------
    >>> prop_3_3_bound(Fraction(1, 4), 2)
    Fraction(1, 2)
    >>> prop_3_3_bound(0, 0)  # a utility constant on the leaves: V_T(u) is empty
    Fraction(0, 1)
    """
    return _count(n_relevant, "n_relevant") * exact(huc, "huc")


def theorem_3_4_deviation(n: int, n_cand: int, delta) -> CertifiedReal:
    """Thm 3.4's deviation bound of the empirical HUC, with probability at least ``1 - delta``.

    Thm 3.4 (radicals restored, docs/specification.md §3):
    ``|HUC_hat - HUC| <= 16/sqrt(n) + 4 sqrt(log(max(1, N_cand)/delta) / (2n))``.

    Parameters
    ----------
    n : int
        The sample size, a positive integer.
    n_cand : int
        ``N_cand``, the number of candidates (a non-negative integer; below 1 it counts as 1).
    delta : int, Fraction or str
        The failure probability, exactly, in (0, 1).

    Returns
    -------
    CertifiedReal
        The bound: its sympy expression and an enclosure computed at 113 bits of interval precision.

    Raises
    ------
    HUCError
        Of kind ``option`` for an ``n`` or ``n_cand`` that is not such an integer or a ``delta``
        outside (0, 1).

    Examples
    --------
    >>> b = theorem_3_4_deviation(10000, 3, Fraction(1, 20))
    >>> b.expr
    sqrt(2)*sqrt(log(60))/50 + 4/25
    >>> b.lo < Fraction(21723177, 10**8) < b.hi, b.hi - b.lo < Fraction(1, 10**30)
    (False, True)
    >>> b.lo < Fraction(2172317713318195363704555843060313, 10**34) < b.hi
    True
    """
    import sympy
    n = _positive_int(n, "n")
    delta = _probability(delta)
    big_n = max(1, _count(n_cand, "n_cand"))
    expr = 16 / sympy.sqrt(n) + 4 * sympy.sqrt(sympy.log(sympy.Rational(big_n) / _sym(delta)) / (2 * n))
    return _enclose(lambda ctx: 16 / ctx.sqrt(n)
                    + 4 * ctx.sqrt(ctx.log(ctx.mpf(big_n) * delta.denominator / delta.numerator) / (2 * n)),
                    expr)


def update_decrease_floor(epsilon, alpha=None):
    """The decrease of ``L_log`` every update is certain to exceed (Thm 3.5, eq. (101), H.1).

    Parameters
    ----------
    epsilon : int, Fraction or str
        The tolerance ``eps > 0``: an update has ``|Gamma| > eps``.
    alpha : int, Fraction or str, optional
        The magnitude ``a > 0`` of a fixed step; by default the adaptive step.

    Returns
    -------
    Fraction or None
        ``eps^2/2`` for the adaptive step (Thm 3.5); ``a eps - a^2/2`` for a fixed step of
        magnitude ``a < 2 eps``; None for ``a >= 2 eps`` (no guarantee).

    Raises
    ------
    HUCError
        Of kind ``nonpositive`` for an ``epsilon`` or ``alpha`` that is not positive.

    Notes
    -----
    Eq. (101) bounds the decrease below by ``alpha Gamma - alpha^2 Lambda / 2``; an update has
    ``|Gamma| > eps`` and ``Lambda <= 1`` (E.2), and the fixed step has
    ``alpha Gamma = a |Gamma|``.  H.1 (tolerance ``tau = 3 eps_H / 4``, step ``a = eps_H / 2``)
    gets ``eps_H^2 / 4``, its ``ceil(4 L / eps_H^2)`` updates; a step of half the tolerance gets
    ``3 eps^2 / 8``.

    Examples
    --------
    >>> update_decrease_floor(Fraction(3, 40)), update_decrease_floor(Fraction(3, 40), Fraction(1, 20))
    (Fraction(9, 3200), Fraction(1, 400))
    >>> update_decrease_floor(Fraction(1, 10), Fraction(1, 20)), update_decrease_floor(Fraction(1, 10), Fraction(1, 5))
    (Fraction(3, 800), None)
    """
    eps = exact(epsilon, "epsilon")
    if eps <= 0:
        raise HUCError(f"epsilon: must be positive, got {shown(eps)}", kind="nonpositive")
    if alpha is None:
        return eps ** 2 / 2
    a = exact(alpha, "alpha")
    if a <= 0:
        raise HUCError(f"alpha: a fixed step magnitude must be positive, got {shown(a)}", kind="nonpositive")
    return a * eps - a ** 2 / 2 if a < 2 * eps else None


def theorem_3_5_update_bound(log_loss_upper, epsilon, *, alpha=None) -> int | None:
    """Thm 3.5's bound on the number of updates of a boosting run.

    Parameters
    ----------
    log_loss_upper : int, Fraction or str
        A rational upper bound of ``L_log(f_0)`` (e.g. a certified enclosure's ``hi``), so
        that the returned count is a valid bound.
    epsilon : int, Fraction or str
        The tolerance ``eps > 0``.
    alpha : int, Fraction or str, optional
        The magnitude of a fixed step; by default the adaptive step.

    Returns
    -------
    int or None
        ``ceil(2 L_log(f_0) / eps^2)`` with the adaptive step; with a fixed step of magnitude
        ``alpha``, ``ceil(L_log(f_0) / (alpha eps - alpha^2/2))`` (H.1's ``ceil(4 L / eps_H^2)``
        at its tolerance ``3 eps_H / 4`` and step ``eps_H / 2``); None when ``alpha >= 2 eps``
        (:func:`update_decrease_floor`).

    Raises
    ------
    HUCError
        As :func:`update_decrease_floor`, or where ``log_loss_upper`` is not exact.

    Examples
    --------
    >>> theorem_3_5_update_bound(Fraction(1), Fraction(1, 10))
    200
    >>> theorem_3_5_update_bound(Fraction(1), Fraction(3, 40), alpha=Fraction(1, 20))  # H.1: 4 L / (1/10)^2
    400
    """
    floor = update_decrease_floor(epsilon, alpha)
    return None if floor is None else ceil(exact(log_loss_upper, "log_loss") / floor)


def _h1_bracket(n, T, big_n, delta):
    """``(T+1) log(2 N (2n+1)^2) + log(1/delta)`` as (sympy expr, interval builder)."""
    import sympy
    expr = (T + 1) * sympy.log(2 * big_n * (2 * n + 1) ** 2) + sympy.log(1 / _sym(delta))
    return expr, (lambda ctx: (T + 1) * ctx.log(ctx.mpf(2 * big_n * (2 * n + 1) ** 2))
                  + ctx.log(ctx.mpf(delta.denominator) / delta.numerator))


def h1_gap_bound(n: int, T: int, n_cand: int, delta) -> CertifiedReal:
    """App. H.1-H.3's bound on ``Gap_T``, the deviation of T boosting rounds' audits.

    ``Gap_T <= 4 sqrt((2/n) [(T+1) log(2 N_cand (2n+1)^2) + log(1/delta)])``.

    Parameters
    ----------
    n : int
        The sample size, a positive integer.
    T : int
        The number of rounds, a non-negative integer.
    n_cand : int
        ``N_cand`` (below 1 it counts as 1).
    delta : int, Fraction or str
        The failure probability, exactly, in (0, 1).

    Returns
    -------
    CertifiedReal
        The bound with its enclosure.

    Raises
    ------
    HUCError
        Of kind ``option`` for an integer that is not one or out of range, or a ``delta``
        outside (0, 1).

    Examples
    --------
    >>> g = h1_gap_bound(10**6, 10, 3, Fraction(1, 20))
    >>> g.expr
    4*sqrt(log(20)/500000 + 11*log(24000024000006)/500000)
    >>> g.certainly_le(Fraction(105, 1000)), g.certainly_le(Fraction(104, 1000))
    (True, False)
    """
    import sympy
    n, T = _positive_int(n, "n"), _count(T, "T")
    delta = _probability(delta)
    expr, build = _h1_bracket(n, T, max(1, _count(n_cand, "n_cand")), delta)
    return _enclose(lambda ctx: 4 * ctx.sqrt(2 * build(ctx) / n), 4 * sympy.sqrt(2 * expr / n))


def h1_sample_size_holds(n: int, epsilon, T: int, n_cand: int, delta) -> bool:
    """Whether App. H.1's sample-size condition holds, decided exactly.

    The condition is ``n >= 512/eps^2 [(T+1) log(2 N_cand (2n+1)^2) + log(1/delta)]``, that is
    ``Gap_T <= eps/4`` (square both sides: ``32 X / n <= eps^2/16``).

    Parameters
    ----------
    n : int
        The sample size, a positive integer.
    epsilon : int, Fraction or str
        The tolerance ``eps``, exactly.
    T : int
        The number of rounds, a non-negative integer.
    n_cand : int
        ``N_cand`` (below 1 it counts as 1).
    delta : int, Fraction or str
        The failure probability, exactly, in (0, 1).

    Returns
    -------
    bool
        Whether the condition holds: the enclosure's precision is doubled until it decides,
        never guessed.

    Raises
    ------
    HUCError
        As :func:`h1_gap_bound`, or where ``epsilon`` is not exact.

    Examples
    --------
    >>> h1_sample_size_holds(10**8, Fraction(1, 10), 10, 3, Fraction(1, 20))
    True
    >>> h1_sample_size_holds(10**5, Fraction(1, 10), 10, 3, Fraction(1, 20))
    False
    """
    n, T = _positive_int(n, "n"), _count(T, "T")
    eps = exact(epsilon, "epsilon")
    delta = _probability(delta)
    expr, build = _h1_bracket(n, T, max(1, _count(n_cand, "n_cand")), delta)
    precision = _PRECISION
    while True:
        rhs = _enclose(lambda ctx: 512 * build(ctx) / (ctx.mpf(eps.numerator) / eps.denominator) ** 2,
                       512 * expr / _sym(eps) ** 2, precision)
        if rhs.hi <= n:
            return True
        if rhs.lo > n:
            return False
        precision *= 2  # undecided at this precision: raise it, never guess


def _sym(x: Fraction) -> sympy.Rational:
    import sympy
    return sympy.Rational(x.numerator, x.denominator)
