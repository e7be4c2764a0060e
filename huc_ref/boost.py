"""HUC-Boost (Algorithm 1; Algorithm 3 on sample atoms) and UC-Boost (Sec. 3.2, App. E, H).

One engine for population and empirical atoms.  The state is kept exactly: each atom's
initial prediction ``p0`` (rational) and its accumulated logit increments, node-wise for
HUC-Boost (``z_{v,j}``) or leaf-wise for UC-Boost; predictions are a fresh softmax,

    HUC: f(x)_y = p0_y prod_{v on path(y)} e^{z_{v,j}} / sum_k q0_{v,k} e^{z_{v,k}}
    UC:  f(x)_y = p0_y e^{z_y} / sum_k p0_k e^{z_k},

so rounding never accumulates across updates (an iterated normalised update in interval
arithmetic loses about a bit per update; a fresh softmax of exact logits loses nothing).

Arithmetic and certification (docs/specification.md §4).  ``exp`` makes boosted predictions irrational, so
they are evaluated at a working precision (mpmath, ``digits`` significant digits):

* every decision (which candidate is largest, which atoms its interval selects, whether
  ``|Gamma| > eps``, the utilities' own choices) is computed at the working precision and
  again 32 bits higher, and must come out identical; otherwise the precision doubles.  A
  comparison within the working precision's rounding, which both precisions round alike, is
  decided without the rounded values: exactly where it is rational or its coefficients share a
  sign, else by its exponential polynomial (:meth:`_Form.sign`, :func:`_exp_sign`), else at a
  higher precision; exact sums and sups compare exactly;
* every inequality reported for Theorem 3.5 is certified with outward-rounded intervals;
* the applied step is exact: the direction ``h`` and the step ``alpha`` are rounded to
  dyadic rationals of the working precision, and the theorem's inequalities are checked
  for the step actually applied (its own ``Gamma`` and ``Lambda``).

``arithmetic="float"`` runs the same engine on binary floats, uncertified, for large
experiments (J.1's 4,800 runs); its results say so.

mpmath is imported where a run first needs it (:func:`_context`, :func:`_interval_context`,
:func:`_rational`): ``import huc_ref`` and the float64 path do not load it.
"""

from __future__ import annotations

import decimal
import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

from .audit import AtomTerms, UtilityRows, terms_at
from .decomposition import Prediction, TreeDecomposition, subtree_sums
from .distribution import FiniteDistribution
from .driver import Backend, Schedule, Update, drive, rational_gamma  # noqa: F401 (Schedule: documented here too)
from .errors import HUCError, given, is_integer, one_of
from .intervals import IntervalMax, max_interval_sum_approx
from .rational import GMP_BITS, fraction_text, shared_sign
from .results import BoostResult
from .validation import MAX_FIXED_STEP, SELECTIONS, boost_options  # noqa: F401 (re-exported)

__all__ = ["BoostResult", "CertifiedBackend", "Judge", "Judgement", "boost", "boost_options", "check_digits"]

_GUARD_BITS = 32
_MAX_PRECISION = 1 << 14


class _FloatContext:
    """Binary floats with the mpmath-context interface the engine uses (uncertified)."""

    prec = 53

    @staticmethod
    def mpf(x):
        return float(x)

    exp = staticmethod(math.exp)
    log = staticmethod(math.log)


def _context(bits):
    import mpmath
    ctx = mpmath.MPContext()
    ctx.prec = bits
    return ctx


def _interval_context(bits):
    from mpmath.ctx_iv import MPIntervalContext
    ctx = MPIntervalContext()
    ctx.prec = bits
    return ctx


def _lift(ctx):
    def lift(x):
        return ctx.mpf(x.numerator) / x.denominator if type(x) is Fraction else x
    return lift


def _same(x):
    return x


def _to_fraction(x) -> Fraction:
    """An mpf (or a float, or a rational) as the exact rational it is."""
    if isinstance(x, (float, Fraction, int)):
        return Fraction(x)
    return _rational(x._mpf_)


def _rational(raw) -> Fraction:
    """An mpmath raw number as a Fraction (mpmath may hand back gmpy2 integers)."""
    from mpmath.libmp import to_rational
    num, den = to_rational(raw)
    return Fraction(int(num), int(den))


def _upper(x) -> Fraction:
    """The upper end of an interval as an exact rational."""
    return _rational(x._mpi_[1])


def _dyadic(x, bits) -> Fraction:
    """``x`` rounded to the nearest multiple of ``2^-bits`` (an exact step of the state)."""
    return Fraction(round(_to_fraction(x) * (1 << bits)), 1 << bits)


class _Form:
    """A linear functional ``sum_y c_y f_y`` of one atom's boosted prediction, with an exact
    zero test.  ``f_y = p0_y F_y`` where ``F_y`` is the product of the transcendental path
    factors ``e^{z_{v,j}} / sum_k q0_{v,k} e^{z_{v,k}}``; leaves whose factors coincide
    (the same updated nodes with the same logits) share ``F`` exactly.  So the form is
    exactly 0 when, for every such group ``s``, the rational ``sum_{y in s} c_y p0_y`` is 0
    (an exact decision the two precisions could never make).  Otherwise its sign is read
    from its value, which the engine certifies by agreement at two precisions.

    Utilities compare predictions only through such functionals (ranks, argmax of expected
    payoffs, decision margins, subtree masses); anything else falls back to the value.
    """

    __slots__ = ("coef", "value")

    def __init__(self, coef, value):
        self.coef, self.value = coef, value

    def _combine(self, other, sign):
        if isinstance(other, _Form):
            coef = dict(self.coef)
            for key, c in other.coef.items():
                coef[key] = coef.get(key, 0) + sign * c
            return _Form(coef, self.value + sign * other.value)
        if isinstance(other, (int, Fraction)):
            if not other:
                return self
            coef = dict(self.coef)
            coef[()] = coef.get((), 0) + sign * other  # a constant: the empty factor product
            return _Form(coef, self.value + sign * _lift_like(self.value)(other))
        return self.value + sign * other

    def __add__(self, other):
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other):
        return self._combine(other, -1)

    def __rsub__(self, other):
        return (-self)._combine(other, 1)

    def __neg__(self):
        return _Form({k: -c for k, c in self.coef.items()}, -self.value)

    def __mul__(self, other):
        if isinstance(other, (int, Fraction)):
            return _Form({k: c * other for k, c in self.coef.items()}, self.value * _lift_like(self.value)(other))
        return self.value * (other.value if isinstance(other, _Form) else other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self.value / (other.value if isinstance(other, _Form) else other)

    def __rtruediv__(self, other):
        return other / self.value

    def sign(self, other=0) -> int:
        """-1, 0 or 1: from the value where it is far above the working precision's rounding (half
        its bits); else exactly, where the form collapses (:func:`_collapse`) to 0 or to
        coefficients of one sign (every product of factors is positive): two unmoved atoms' scores
        1 - 2e-301 and 1 - 4e-301, or two atoms moved alike whose ``p0`` differ by ``3^-2100000``,
        round to the same number at every working precision the engine reaches; else
        :class:`_Undecided`, and the engine raises its precision (binary floats, uncertified: the
        value's sign).

        >>> from mpmath import mp
        >>> one, tiny = _Form({(): Fraction(1)}, mp.mpf(1)), Fraction(1, 10**301)
        >>> one.sign(one - tiny), (one - tiny).sign(one), one.sign(Fraction(1))  # exact: the values tie
        (1, -1, 0)
        >>> f = mp.e / (1 + mp.e) * 2  # e^1 / N, N = (1 + e) / 2: irrational
        >>> moved = _Form({((Fraction(1), ((0, Fraction(1, 2)), (Fraction(1), Fraction(1, 2)))),): Fraction(1)}, f)
        >>> moved.sign(moved + tiny)  # the factors cancel: the difference is the rational -1e-301
        -1
        >>> (moved * (1 + tiny)).sign(moved)  # one key, coefficient 1e-301 > 0
        1
        >>> near = _to_fraction(f) + tiny  # a rational within 1e-301 of f: e^1 / N - near, by _exp_sign
        >>> moved.sign(_Form({(): near}, mp.mpf(near.numerator) / near.denominator))
        -1
        """
        if isinstance(other, (_Form, int, Fraction)):  # the value first: far from 0 it decides, and the
            # difference's coefficients (a merge of two dicts, most of a sort's time) are not needed
            value = self.value - (other.value if isinstance(other, _Form) else _lift_like(self.value)(other))
            if abs(value) > _near_zero(value):
                return (value > 0) - (value < 0)
        diff = self - other
        if isinstance(diff, _Form):
            value = diff.value
            if not any(diff.coef.values()):  # every factor's coefficient exactly 0
                return 0
            if not abs(value) > _near_zero(value):  # the value could be an exact 0, or of either sign
                # every product of factors e^z / N is positive: coefficients of one sign (a rational, or one
                # key: two atoms moved alike whose p0 differ) give the form's sign exactly
                coef = _collapse(diff.coef)
                shared = shared_sign(coef.values())
                if shared is not None:
                    return shared
                if not isinstance(value, float):
                    decided = _exp_sign(coef)
                    if decided is None:
                        raise _Undecided("a sign below the working precision")
                    return decided
            diff = value
        return (diff > 0) - (diff < 0)

    def __lt__(self, other):
        return self.sign(other) < 0

    def __le__(self, other):
        return self.sign(other) <= 0

    def __gt__(self, other):
        return self.sign(other) > 0

    def __ge__(self, other):
        return self.sign(other) >= 0

    def __eq__(self, other):
        return self.sign(other) == 0

    def __ne__(self, other):
        return self.sign(other) != 0

    __hash__ = None


class _Undecided(Exception):
    """A comparison the working precision cannot decide (:meth:`_Form.sign`): the engine
    computes again at twice the bits (:func:`_decided`)."""


def _decided(compute, bits: int):
    """``compute(bits)`` at ``bits``, doubled while a comparison is :class:`_Undecided`, up to
    ``_MAX_PRECISION`` bits (then one HUCError: an exact tie of irrational numbers, or a
    difference below ``2^-16384``).

    >>> seen = []
    >>> def undecided(bits):
    ...     seen.append(bits)
    ...     raise _Undecided("a sign below the working precision")
    >>> try:
    ...     _decided(undecided, 4096)
    ... except HUCError as err:
    ...     print(err.kind, str(err).split(" (")[0])
    undecided boost: a decision could not be certified at 16384 bits
    >>> seen, _decided(lambda bits: bits, 116)
    ([4096, 8192, 16384], 116)
    """
    while bits <= _MAX_PRECISION:
        try:
            return compute(bits)
        except _Undecided:
            bits *= 2
    raise HUCError(f"boost: a decision could not be certified at {_MAX_PRECISION} bits (an exact tie between "
                   "irrational quantities?); refusing to guess", kind="undecided")


#: The most terms :func:`_exp_sign` expands a form into (then the engine raises its precision).
_EXP_TERMS = 4096


def _exp_sign(coef: dict, limit: int = _EXP_TERMS):
    """The sign of a collapsed :class:`_Form` (coefficients ``coef``) whose value the working
    precision cannot tell from 0, or None (then :class:`_Undecided`).

    Every factor is ``e^z / N`` with ``N = sum_k q_k e^{z_k} > 0`` (:func:`_normaliser`), so the
    form times the product of its normalisers (each to its largest multiplicity in a key) has its
    sign, and is an exponential polynomial ``sum_w c_w e^w`` whose rational ``c_w`` are collected
    exactly by exponent ``w``: the near cancellation of terms of size 1 (two atoms whose ``p0``
    differ by ``3^-2100000``, moved by the same steps) happens there, exactly.  Its sign is that of
    the ``c_w`` where they agree; else the sum is evaluated term by term, each with a relative
    error below ``4 * 2^-prec``, at 64 bits and twice as many until it exceeds its rounding bound
    ``(n + 8) 2^-prec sum |terms|`` (up to ``_MAX_PRECISION``; by Lindemann-Weierstrass a sum of
    distinct rational exponentials with nonzero rational coefficients is never 0).  None where
    the expansion passes ``limit`` terms.

    >>> N = _Hashed([(Fraction(0), Fraction(1, 2)), (Fraction(1), Fraction(1, 2))])  # (1 + e) / 2
    >>> e = Fraction(1, 3**2000)
    >>> _exp_sign({((Fraction(1), N),): Fraction(1, 2) + e, ((Fraction(0), N),): Fraction(-1, 2) - e})
    1
    >>> _exp_sign({((Fraction(1), N),): Fraction(1, 2) + e, ((Fraction(0), N),): -e, (): Fraction(-1, 2)})
    1
    >>> _exp_sign({((Fraction(0), N),): Fraction(1, 2), ((Fraction(1), N),): Fraction(1, 2), (): -1})  # 0
    0
    >>> _exp_sign({((Fraction(1), N),): Fraction(1, 2), (): Fraction(-1, 2)}, limit=1) is None  # 2 terms > 1
    True
    """
    mult: dict = {}
    for key in coef:
        for N, m in Counter(N for _, N in key).items():
            mult[N] = max(mult.get(N, 0), m)
    big = _gmp_rational(coef, mult)  # (gmpy2's mpq for long numbers: Fraction's gcds are quadratic)
    poly: dict = {}
    for key, c in coef.items():
        term = {sum((z for z, _ in key), Fraction(0)): big(c)}
        have = Counter(N for _, N in key)
        for N, m in mult.items():
            for _ in range(m - have.get(N, 0)):
                grown: dict = {}
                for w, x in term.items():
                    for z, q in N:
                        grown[w + z] = grown.get(w + z, 0) + x * big(q)
                term = grown
                if len(term) > limit:
                    return None
        for w, x in term.items():
            poly[w] = poly.get(w, 0) + x
    shared = shared_sign(poly.values())
    if shared is not None:
        return shared
    poly = {w: x for w, x in poly.items() if x}
    bits = 64
    while bits <= _MAX_PRECISION:
        ctx = _context(bits)
        lift = _lift(ctx)
        terms = [ctx.mpf(int(x.numerator)) / int(x.denominator) * ctx.exp(lift(w)) for w, x in poly.items()]
        total = sum(terms, ctx.mpf(0))
        if abs(total) > sum((abs(t) for t in terms), ctx.mpf(0)) * ctx.ldexp(len(terms) + 8, -bits):
            return 1 if total > 0 else -1
        bits *= 2
    return None


def _gmp_rational(coef: dict, normalisers: dict):
    """The rational type :func:`_exp_sign` computes in (a function of a ``Fraction``): where the
    numbers' denominators pass :data:`huc_ref.rational.GMP_BITS` bits, gmpy2's ``mpq`` or else
    python-flint's ``fmpq`` if either is installed (one product of two million-digit
    ``Fraction`` s reduces by gcds that CPython computes in quadratic time: 89 s for one sign
    of ``tests.strategies.pinned_case("a million digits")``, 0.3 s with ``mpq``); else ``Fraction``.

    >>> _gmp_rational({(): Fraction(1, 3)}, {})(Fraction(1, 3))  # short: Fraction itself
    Fraction(1, 3)
    """
    bits = sum(Fraction(c).denominator.bit_length() for c in coef.values()) + sum(
        Fraction(q).denominator.bit_length() for N in normalisers for _, q in N)
    if bits > GMP_BITS:
        try:
            from gmpy2 import mpq
            return lambda x: mpq(x.numerator, x.denominator)
        except ImportError:
            pass
        try:
            from flint import fmpq
            return lambda x: fmpq(int(x.numerator), int(x.denominator))
        except ImportError:
            pass
    return Fraction


def _near_zero(value):
    """``2^(-prec / 2)`` at ``value``'s working precision (53 bits for a float): a form whose value is
    larger is certainly not exactly 0 (its rounding error is near ``2^-prec``).

    >>> from mpmath import mp
    >>> _near_zero(0.5) == 2.0 ** -26, _near_zero(mp.mpf(1)) == mp.mpf(2) ** -26  # mp: 53 bits
    (True, True)
    """
    return 2.0 ** -26 if isinstance(value, float) else value.context.ldexp(1, -(value.context.prec // 2))


def _collapse(coef: dict) -> dict:
    """The nonzero coefficients of a :class:`_Form` after the one identity its factors obey: a
    split's factors ``e^{z_j} / N`` with ``N = sum_k q0_k e^{z_k}`` (:func:`_normaliser`) sum, weighted
    by ``q0``, to exactly 1 (A.3: an update at ``v`` moves mass among ``v``'s children, never out
    of ``v``).  Coefficients of the keys ``rest + (z, N)`` that are, over all of ``N``'s logits,
    ``lambda q0`` become ``lambda`` on ``rest``, innermost splits first, until none are; so a
    subtree's mass compares exactly equal to its unchanged value (hypothesis drew two Subtree
    utilities whose scores tied exactly after an update inside the subtree).

    >>> N = ((Fraction(0), Fraction(1, 3)), (Fraction(1), Fraction(2, 3)))  # q0 = (1/3, 2/3), z = (0, 1)
    >>> _collapse({((Fraction(0), N),): Fraction(1, 6), ((Fraction(1), N),): Fraction(1, 3), (): Fraction(-1, 2)})
    {}
    >>> sorted(_collapse({((Fraction(0), N),): Fraction(1, 6), (): Fraction(-1, 2)}).values())  # not all of N
    [Fraction(-1, 2), Fraction(1, 6)]
    """
    coef = {k: c for k, c in coef.items() if c}
    while True:
        groups: dict = {}  # (rest, N) -> {z: coefficient}
        for key, c in coef.items():
            for t, (z, N) in enumerate(key):
                if t and key[t - 1] == key[t]:
                    continue  # a repeated factor: one of them
                groups.setdefault((key[:t] + key[t + 1:], N), {})[z] = c
        for (rest, N), by_z in groups.items():
            if len(by_z) != len(N):
                continue
            lam = by_z[N[0][0]] / N[0][1]
            if all(by_z.get(z) == lam * q for z, q in N):
                for z, _ in N:
                    del coef[tuple(sorted(rest + ((z, N),)))]
                coef[rest] = coef.get(rest, 0) + lam
                if not coef[rest]:
                    del coef[rest]
                break
        else:
            return coef


def _common_out(N: dict, pi: dict) -> tuple[dict, dict]:
    """Two :class:`_Form` coefficient dicts with the factors every key of both holds divided out: their
    ratio (a mean ``N_a / pi_a``) is unchanged.

    >>> k = (Fraction(1), ((Fraction(0), Fraction(1, 2)), (Fraction(1), Fraction(1, 2))))
    >>> _common_out({(k,): Fraction(1, 4)}, {(k,): Fraction(1, 2)})
    ({(): Fraction(1, 4)}, {(): Fraction(1, 2)})
    """
    common = None
    for key in [*N, *pi]:
        common = Counter(key) if common is None else common & Counter(key)
        if not common:
            return N, pi

    def strip(coef):
        return {tuple(sorted((Counter(key) - common).elements())): c for key, c in coef.items()}
    return strip(N), strip(pi)


def _evaluate(coef: dict, ctx, factors: dict):
    """The value of collapsed :class:`_Form` coefficients at ``ctx``'s precision, computed in one
    fixed order (keys sorted; each factor ``e^z / N`` once per ``(z, N)``, kept in ``factors``), so
    equal coefficients give the same number bit for bit.

    >>> from mpmath import mp
    >>> N = ((Fraction(0), Fraction(1, 2)), (Fraction(1), Fraction(1, 2)))
    >>> x = _evaluate({((Fraction(1), N),): Fraction(1, 2), (): Fraction(1, 4)}, mp, {})
    >>> abs(x - (mp.e / (1 + mp.e) + mp.mpf(1) / 4)) < mp.mpf(2) ** -50  # e^1 / (1/2 + e / 2) times 1/2, plus 1/4
    True
    """
    lift = _lift(ctx)
    total = ctx.mpf(0)
    for key in sorted(coef):
        term = lift(coef[key])
        for z, N in key:
            if (z, N) not in factors:
                factors[z, N] = ctx.exp(lift(z)) / sum((lift(q) * ctx.exp(lift(zk)) for zk, q in N), ctx.mpf(0))
            term = term * factors[z, N]
        total = total + term
    return total


def _normaliser(q0, z) -> tuple:
    """``sum_k q0_k e^{z_k}`` in canonical form: the distinct logits with their summed ``q0``
    (a :class:`_Hashed` tuple: it is a part of every :class:`_Form` key of the split).

    >>> _normaliser([Fraction(1, 6), Fraction(1, 3), Fraction(1, 2)], [Fraction(1), 0, Fraction(1)])
    ((0, Fraction(1, 3)), (Fraction(1, 1), Fraction(2, 3)))
    """
    grouped: dict = {}
    for q, zk in zip(q0, z):
        grouped[zk] = grouped.get(zk, 0) + q
    return _Hashed(sorted(grouped.items()))


class _Hashed(tuple):
    """A tuple that computes its hash once.  A normaliser's ``q0`` sums are rationals with the
    predictions' denominators, and a ``Fraction`` computes its hash anew each time, with a modular
    inverse of its denominator (4.6 us for 2,000 digits, against 0.3 us for small ones); the
    :class:`_Form` dictionaries hash their keys at every addition.

    >>> key = _Hashed([(0, Fraction(1, 3**4000))])
    >>> hash(key) == hash(tuple(key)) and key == tuple(key) and {key: 1}[tuple(key)] == 1
    True
    """

    def __hash__(self):
        try:
            return self.__dict__["hash"]
        except KeyError:
            self.__dict__["hash"] = value = tuple.__hash__(self)
            return value


def _lift_like(value):
    """Lift exact rationals into the number type of ``value`` (an mpf or a float)."""
    if isinstance(value, float):
        return float
    return lambda x: value.context.mpf(x.numerator) / x.denominator if type(x) is Fraction else x


class _Split:
    """A sum kept in two parts: exact rationals (the terms of atoms no update has touched) and a
    working-precision number (the rest).  docs/specification.md §4: rational inputs stay exact until the first
    ``exp``.  Algorithm 2's prefix sums (App. F.3) are of this type in a certified audit: two
    prefix sums with no inexact term between them have the same inexact part, so their
    difference is an exact rational and their comparison exact, and an exact tie (a block of
    untouched atoms whose terms cancel) is a tie at every precision, the first maximiser
    (otherwise the two precisions may round it apart and never agree).

    >>> from mpmath import mp
    >>> a = _Split(Fraction(3, 35), mp.mpf(1) / 3)
    >>> b = a + Fraction(3, 10) * Fraction(2, 7) - Fraction(3, 35)  # +3/35 - 3/35: the same inexact part
    >>> a > b, a < b, a == b, bool(b - a)
    (False, False, True, False)
    >>> a + mp.mpf(2) ** -40 > b, abs(-a).exact  # an inexact part apart: compared at the working precision
    (True, Fraction(3, 35))
    """

    __slots__ = ("exact", "approx")

    def __init__(self, exact, approx):
        self.exact, self.approx = exact, approx

    def __add__(self, x):
        if type(x) is _Split:
            return _Split(self.exact + x.exact, self.approx + x.approx)
        if type(x) in (Fraction, int):
            return _Split(self.exact + x, self.approx)
        return _Split(self.exact, self.approx + x)

    __radd__ = __add__

    def __neg__(self):
        return _Split(-self.exact, -self.approx)

    def __sub__(self, x):
        return self + (-x)

    def __rsub__(self, x):
        return (-self) + x

    def sign(self) -> int:
        """-1, 0 or 1: exact where the inexact part is exactly 0, else at the working precision."""
        if not self.approx:
            return (self.exact > 0) - (self.exact < 0)
        v = self.value()
        return (v > 0) - (v < 0)

    def exact_sign(self):
        """-1, 0 or 1 where the inexact part is exactly 0 (the sign is the exact part's), else None
        (:func:`huc_ref.intervals._beyond`: no tolerance for an exact difference).

        >>> from mpmath import mp
        >>> _Split(Fraction(-1, 10**301), mp.mpf(0)).exact_sign(), _Split(Fraction(0), mp.mpf(1) / 3).exact_sign()
        (-1, None)
        """
        return None if self.approx else (self.exact > 0) - (self.exact < 0)

    def value(self):
        """The sum at the working precision (the exact part rounded once)."""
        if not self.exact:
            return self.approx
        return self.approx + self.approx.context.mpf(self.exact.numerator) / self.exact.denominator

    def __gt__(self, x):
        return (self - x).sign() > 0

    def __lt__(self, x):
        return (self - x).sign() < 0

    def __ge__(self, x):
        return (self - x).sign() >= 0

    def __le__(self, x):
        return (self - x).sign() <= 0

    def __eq__(self, x):
        return (self - x).sign() == 0

    __hash__ = None

    def __bool__(self):
        return bool(self.exact) or bool(self.approx)

    def __abs__(self):
        return -self if self.sign() < 0 else self


def _split_interval_max(blocks) -> IntervalMax:
    """:func:`huc_ref.intervals.max_interval_sum_approx` on :class:`_Split` block sums, its numbers
    returned at the working precision.  The exact parts' prefix sums (App. F.3) are exact
    rationals whose denominators can grow to the sum of the blocks' own: past
    :data:`huc_ref.rational.GMP_BITS` bits, where gmpy2 is installed, they are added as gmpy2's
    ``mpq`` (:func:`_gmp_exact_parts`): the same rationals, so the same witness.

    >>> from mpmath import mp
    >>> third, tiny = _Split(Fraction(0), mp.mpf(1) / 3), _Split(Fraction(1, 10**301), mp.mpf(0))
    >>> best = _split_interval_max([third, tiny])  # C_2 - C_1 = 1e-301 exactly: [0, 2] is the first maximiser
    >>> best.r, best.b
    (0, 2)
    >>> X = 3**25000  # a 39,625-bit denominator: past GMP_BITS
    >>> best = _split_interval_max([_Split(Fraction(1, X), mp.mpf(0)), _Split(Fraction(-2, X), mp.mpf(0))])
    >>> (best.r, best.b), best.sup == mp.mpf(2) / X
    ((1, 2), True)
    """
    best = max_interval_sum_approx(_gmp_exact_parts(blocks), _tie_tolerance(blocks))
    if type(best.moment) is not _Split:
        return best
    m = best.moment
    return _SplitMax(best.sup.value(), best.r, best.b, m.value(), None if m.approx else abs(m.exact))


@dataclass(frozen=True, repr=False)
class _SplitMax(IntervalMax):
    """:class:`huc_ref.intervals.IntervalMax` at the working precision, with ``exact``: the sup
    itself where the witness's terms are all exact (untouched atoms), else None; so that two
    candidates' exact sups are compared exactly (:meth:`_Engine.choose`), not within the tolerance
    for rounding that ties them (two sups 1e-301 apart did)."""

    exact: object = None


def _tie_tolerance(blocks):
    """How far apart two of Algorithm 2's prefix sums of :class:`_Split` blocks may be and still
    count as equal: ``2^(16 - prec)`` times the blocks' inexact parts' total magnitude, above their
    rounding, as :meth:`_Engine.choose` treats sups.  Two sums over moved atoms whose terms cancel
    exactly (hypothesis drew two atoms moved by opposite steps at one node, so that ``1 - q`` of one
    equals ``q`` of the other) differ by a rounding that two precisions can give the same sign:
    the tie is then the first prefix's at both (App. F.3), where it went either way before.  0
    without inexact parts (float arithmetic, or untouched atoms alone: exact comparisons).

    >>> from mpmath import mp
    >>> blocks = [_Split(Fraction(1, 2), mp.mpf(0.25)), _Split(Fraction(0), mp.mpf(-0.5))]
    >>> _tie_tolerance(blocks) == mp.mpf(0.75) * 2 ** (16 - mp.prec), _tie_tolerance([_Split(Fraction(1), mp.mpf(0))])
    (True, 0)
    """
    approx = [x.approx for x in blocks if type(x) is _Split and x.approx]
    if not approx:
        return 0
    ctx = approx[0].context
    return sum((abs(x) for x in approx), ctx.mpf(0)) * ctx.ldexp(1, 16 - ctx.prec)


def _gmp_exact_parts(blocks) -> list:
    """``blocks`` with the exact parts of its :class:`_Split` s as gmpy2's ``mpq`` where their
    denominators' bits sum past :data:`huc_ref.rational.GMP_BITS` (a bound on every prefix sum's
    denominator), gmpy2 is installed and mpmath computes with it (so an ``mpf`` takes GMP's
    integers); else ``blocks`` as they are.  Each addition of two ``Fraction`` s divides by a
    gcd, which CPython 3.11 computes in time proportional to the square of the length: with
    1,990-digit predictions, certified HUC-Boost on 80 atoms takes 99 s with ``Fraction`` sums and
    12.5 s with these (``bench/long_numbers.py``)."""
    if sum(x.exact.denominator.bit_length() for x in blocks if type(x) is _Split) <= GMP_BITS:
        return blocks
    from mpmath.libmp import BACKEND
    if BACKEND != "gmpy":
        return blocks
    try:
        from gmpy2 import mpq
    except ImportError:  # (mpmath on the older gmpy)
        return blocks
    return [_Split(mpq(x.exact), x.approx) if type(x) is _Split else x for x in blocks]


@dataclass
class _Choice:
    """One selected candidate at one precision: what must agree across precisions."""

    subgroup: int
    utility: str
    node: int | None
    members: tuple
    sign: int
    exceeds: bool
    sup: object
    moment: object

    def key(self):
        return (self.subgroup, self.utility, self.node, self.members, self.sign, self.exceeds)


class _Engine:
    def __init__(self, dist, utilities, method, epsilon, arithmetic, digits):
        self.dist, self.utilities, self.method = dist, utilities, method
        self.tree = dist.tree
        self.epsilon = epsilon
        self.float = arithmetic == "float"
        self.bits = 53 if self.float else math.ceil(digits * math.log2(10)) + 16
        self._p0_means: dict = {}  # (atom, its utility values) -> every node's mean at p0 (_kept_means)
        tree = self.tree
        self.branching = [tree.id(v) for v in tree.branching_nodes]
        self.q0 = []
        for atom in dist.atoms:
            dec = TreeDecomposition(tree, atom.p, [0] * tree.K)
            self.q0.append({a: dec.q(a) for a in self.branching})
        zero = 0.0 if self.float else Fraction(0)
        if method == "huc":
            self.z = [{a: [zero] * len(tree.child_ids[a]) for a in self.branching} for _ in dist.atoms]
        else:
            self.z = [[zero] * tree.K for _ in dist.atoms]

    def down(self, start, moved: dict, step):
        """Per label, ``start`` carried down its path through the moved splits (A.3's ``q_{v_j}``
        factors): at a node ``a`` in ``moved``, the value for child ``j`` is ``step(value, moved[a], j)``;
        other nodes pass it on.  One visit per node (a path table would be depth x labels)."""
        tree = self.tree
        value = [start] * len(tree.nodes)
        for a, kids in enumerate(tree.child_ids):  # pre-order: a parent before its children
            here, m = value[a], moved.get(a)
            for j, b in enumerate(kids):
                value[b] = here if m is None else step(here, m, j)
        return [value[leaf] for leaf in tree.leaf_node_ids]

    def forms(self, i, p):
        """The leaf probabilities of a touched atom as :class:`_Form` s (for the utilities)."""
        atom = self.dist.atoms[i]
        if self.method == "huc":
            # the factor e^{z_j} / sum_k q0_k e^{z_k} is determined by z_j and the normaliser
            # in canonical form (each distinct logit with its summed q0): equal keys, equal
            # factors, across leaves and across atoms
            moved = {a: (zs, _normaliser(self.q0[i][a], zs)) for a, zs in self.z[i].items() if any(zs)}
            keys = [tuple(sorted(k)) for k in self.down((), moved, lambda key, m, j: key + ((m[0][j], m[1]),))]
        else:
            norm = _normaliser(atom.p, self.z[i])
            keys = [((self.z[i][y], norm),) for y in range(len(p))]  # one factor e^{z_y} / N
        return [_Form({key: atom.p[y]}, value) for y, (key, value) in enumerate(zip(keys, p))]

    def _leaves(self, i, p) -> list:
        """Atom ``i``'s leaf probabilities: exactly ``p0`` if untouched, else as :class:`_Form` s."""
        return list(self.dist.atoms[i].p) if self.untouched(i) else self.forms(i, p)

    def _state(self, i) -> tuple:
        """Atom ``i``'s exact state: its ``p0`` and the logits of its moved splits (UC-Boost: of its
        leaves).  Atoms of one state have the same prediction, so the same utility values (boosting
        refuses per-atom utilities): a decision tree's 449 calibration rows are 17 states.

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "a"}, {"p": ["1/2", "1/2"], "label": "b"}])
        >>> e = _Engine(d, {"u": Table(t, [0, 1])}, "huc", Fraction(1, 100), "certified", 30)
        >>> e._state(0) == e._state(1), e._state(0)
        (True, ((Fraction(1, 2), Fraction(1, 2)), ()))
        """
        z = self.z[i]
        if isinstance(z, dict):  # HUC-Boost: the logits of each moved split
            return self.dist.atoms[i].p, tuple((a, tuple(zs)) for a, zs in z.items() if any(zs))
        return self.dist.atoms[i].p, tuple(z) if any(z) else ()

    def untouched(self, i) -> bool:
        """Whether atom ``i`` has not been updated (its prediction is still exactly ``p0``)."""
        z = self.z[i]
        return not any(any(zs) for zs in z.values()) if isinstance(z, dict) else not any(z)

    # ------------------------------------------------------------------ predictions
    def predictions(self, ctx):
        lift = _lift(ctx)
        out = []
        for i, atom in enumerate(self.dist.atoms):
            if self.method == "huc":
                factor = {}
                for a, zs in self.z[i].items():
                    if not any(zs):  # no rule has moved this node's split: its factors are exactly 1
                        continue
                    es = [ctx.exp(lift(z)) if z else ctx.mpf(1) for z in zs]
                    denom = sum((lift(q) * e for q, e in zip(self.q0[i][a], es)), ctx.mpf(0))
                    factor[a] = [e / denom for e in es]
                # p0_y times the factors of the moved splits on y's path, from the root down
                scale = self.down(None, factor, lambda v, f, j: f[j] if v is None else v * f[j])
                row = [lift(p0) if f is None else lift(p0) * f for p0, f in zip(atom.p, scale)]
            elif not any(self.z[i]):  # an atom no rule has touched keeps p0 exactly
                row = [lift(p0) for p0 in atom.p]
            else:
                es = [ctx.exp(lift(z)) if z else ctx.mpf(1) for z in self.z[i]]
                denom = sum((lift(p0) * e for p0, e in zip(atom.p, es)), ctx.mpf(0))
                row = [lift(p0) * e / denom for p0, e in zip(atom.p, es)]
            out.append(row)
        return out

    def log_loss(self, ctx, preds=None):
        """``L_log(f) = E[-log f(X)_Y]`` over the atoms' weights and label laws (E.1)."""
        preds = preds or self.predictions(ctx)
        lift = _lift(ctx)
        total = ctx.mpf(0)
        for atom, p in zip(self.dist.atoms, preds):
            law = atom.label_law(self.tree.K)
            for y, e in enumerate(law):
                if e:
                    total = total - lift(atom.weight * e) * ctx.log(p[y])
        return total

    # ------------------------------------------------------------------ audit
    def audit(self, ctx, with_nodes=None):
        """Per utility, the :class:`UtilityRows`, values and relevant node ids at ``ctx``."""
        with_nodes = self.method == "huc" if with_nodes is None else with_nodes
        lift = _lift(ctx)
        preds = self.predictions(ctx)
        # certified: the terms of untouched atoms and the weights stay exact (docs/specification.md §4), summed apart
        keep = _same if not self.float else lift
        weights = [[keep(a.weight * a.c[k]) for a in self.dist.atoms] for k in range(len(self.dist.subgroups))]
        zero = ctx.mpf(0) if self.float else _Split(Fraction(0), ctx.mpf(0))
        tables = {}
        states = [self._state(i) for i in range(len(self.dist.atoms))]
        for name, u in self.utilities.items():
            rel = [self.tree.id(v) for v in u.relevant_nodes] if with_nodes else []
            needed = sorted({0, *rel, *(k for a in rel for k in self.tree.child_ids[a])})
            vals, terms = [], []
            # per exact state (repeated rows are one), the utility's values, decided once; boosted: and the score
            # (a per-atom utility's values are the atom's own: its states are the atoms)
            seen: dict = {}
            moved: dict = {}
            state = states if u.defined_everywhere else list(range(len(states)))
            for i, (atom, p) in enumerate(zip(self.dist.atoms, preds)):
                if self.untouched(i):  # still exactly p0: decide and compute exactly (round once for float)
                    if state[i] not in seen:
                        seen[state[i]] = u.values(atom.p, i)
                    vals.append(seen[state[i]])
                    t = terms_at(self.tree, Prediction(self.tree, atom.p), vals[-1], atom, rel, _same)
                    score = _Form({(): t.score}, lift(t.score))
                    terms.append(AtomTerms(score, keep(t.residual), {a: keep(x) for a, x in t.node_terms.items()}))
                else:
                    if state[i] not in moved:
                        forms = self.forms(i, p)
                        values = tuple(v.value if isinstance(v, _Form) else v for v in u.values(forms, i))
                        # mu_u(p) = sum_y p_y u_y as a form, exactly comparable, where the values are exact
                        score = sum((f * v for f, v in zip(forms, values) if v), _Form({}, ctx.mpf(0))) \
                            if all(type(v) is Fraction for v in values) else None
                        moved[state[i]] = (values, score)
                    values, score = moved[state[i]]
                    vals.append(values)
                    # the means no update has changed (all of Y_a rescaled alike), exactly
                    means = self._kept_means(i, values, needed) if not self.float and all(
                        type(v) in (Fraction, int) for v in values) else None
                    t = terms_at(self.tree, Prediction(self.tree, p), values, atom, rel, lift, None, means)
                    if score is not None:
                        t = AtomTerms(score, t.residual, t.node_terms)
                    terms.append(t)
            tables[name] = (UtilityRows(terms, weights, rel, zero, _split_interval_max), vals, rel)
        return preds, tables

    def choose(self, ctx, node=None):
        """The largest candidate (first maximiser: subgroups, utilities, nodes), optionally at one node.
        Two exact sups (witnesses of untouched atoms: :class:`_SplitMax`) compare exactly; otherwise
        sups within ``2^(16 - prec)`` of each other (relatively) count as equal at this precision,
        so that an exact tie of irrational sups goes to the first at both precisions of
        :meth:`certified_choice` (a convention: a genuine difference that small is taken as a tie)."""
        preds, tables = self.audit(ctx)
        best, zero = None, ctx.mpf(0)
        tie = ctx.mpf(2) ** (16 - ctx.prec)
        for k in range(len(self.dist.subgroups)):
            for name, (table, _, rel) in tables.items():
                for a in ([None] if self.method == "uc" else rel):
                    if node is not None and a != node:
                        continue
                    row = table.best[k, a]
                    sup, exact = (zero, 0) if row.empty else (row.sup, getattr(row, "exact", None))
                    # two exact sups compare exactly; else a later candidate wins only by more than rounding
                    # can make: an exact tie (the utilities u and -u) stays the first maximiser's at every precision
                    if best is None or (exact > best[1] if exact is not None and best[1] is not None
                                        else sup - best[0] > tie * abs(best[0])):
                        best = (sup, exact, row, k, name, a, table)
        if best is None:
            return None, preds, tables
        sup, exact, row, k, name, a, table = best
        members = tuple(table.members(row)) if not row.empty else ()
        sign = 0 if row.empty else (row.moment > 0) - (row.moment < 0)
        exceeds = exact > self.epsilon if exact is not None else sup > _lift(ctx)(self.epsilon)
        return _Choice(k, name, a, members, sign, exceeds, sup, row.moment), preds, tables

    def certified_choice(self, node=None):
        """:meth:`choose` at two precisions; identical decisions or a higher precision."""
        if self.float:
            return self.choose(_FloatContext, node) + (_FloatContext,)

        def at(bits):
            low = self.choose(_context(bits), node)
            high = self.choose(_context(bits + _GUARD_BITS), node)
            if (low[0] is None and high[0] is None) or (low[0] and high[0] and low[0].key() == high[0].key()
                                                         and self._values_agree(low[2], high[2])):
                return low + (_context(bits),)
            if low[0] and high[0] and not low[0].exceeds and not high[0].exceeds:
                return low + (_context(bits),)  # no candidate exceeds epsilon: which is largest decides nothing
            raise _Undecided("the two precisions disagree")
        return _decided(at, self.bits)

    @staticmethod
    def _values_agree(a, b):
        """The utilities' own choices (ranks, actions) agree when their exact values do."""
        for name in a:
            for va, vb in zip(a[name][1], b[name][1]):
                if all(type(x) is Fraction for x in va) and tuple(va) != tuple(vb):
                    return False
        return True

    # ------------------------------------------------------------------ one update
    def direction(self, choice, preds, tables, ctx):
        """``h(x_i)`` rounded to the working precision's dyadic grid, for the chosen candidate."""
        lift = _lift(ctx)

        def minus(x, y):  # exact where both means are (an atom no update has moved: docs/specification.md §4)
            return x - y if isinstance(x, (Fraction, int)) and isinstance(y, (Fraction, int)) else lift(x) - lift(y)
        table, vals, _ = tables[choice.utility]
        h = {}
        factors: dict = {}
        for i in choice.members:
            c = self.dist.atoms[i].c[choice.subgroup]
            if not c:
                continue
            exact = not self.float and all(type(v) in (Fraction, int) for v in vals[i])
            if self.method == "huc":
                if exact:
                    a, kids = choice.node, self.tree.child_ids[choice.node]
                    mu = self._means(self._leaves(i, preds[i]), vals[i], (a, *kids), ctx, factors)
                    raw = [minus(mu[k], mu[a]) for k in kids]
                else:
                    dec = TreeDecomposition(self.tree, Prediction(self.tree, preds[i]), vals[i])
                    raw = dec.Delta(choice.node)
            else:
                mu = self._means(self._leaves(i, preds[i]), vals[i], (0,), ctx, factors)[0] if exact else \
                    sum((p * lift(v) for p, v in zip(preds[i], vals[i])), ctx.mpf(0))
                raw = [minus(v, mu) for v in vals[i]]
            h[i] = [c * (x if self.float else _dyadic(x, self.bits)) for x in raw]
        return h

    def _kept_means(self, i, vals, nodes) -> dict:
        """``mu_{u,a}(f(x_i))`` exactly, for the nodes ``a`` of ``nodes`` whose labels no update has
        moved against each other: no moved split at or below ``a`` (HUC-Boost: updates above ``a``
        rescale all of ``Y_a`` alike), or one logit for all of ``Y_a`` (UC-Boost).  There the
        mean is ``sum_{y in Y_a} p0_y u_y / pi0_a`` for the current exact values ``u`` (A.3), a
        rational an audit at a working precision would round differently for each atom.

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/8", "3/8", "1/4", "1/4"], "eta": [1, 0, 0, 0]}])
        >>> e = _Engine(d, {"u": Table(t, [-1, 1, 1, 1])}, "huc", Fraction(1, 10), "certified", 30)
        >>> e.z[0][0] = [Fraction(1), Fraction(0)]  # the root's split moved: vL and vR keep their means
        >>> e._kept_means(0, (Fraction(-1), Fraction(1), Fraction(1), Fraction(1)), [0, 1, 4])
        {1: Fraction(1, 2), 4: Fraction(1, 1)}
        """
        key = (i, tuple(vals))
        if key not in self._p0_means:
            p0 = self.dist.atoms[i].p
            N = subtree_sums(self.tree, [p * v for p, v in zip(p0, vals)])
            self._p0_means[key] = [Fraction(x) / m for x, m in zip(N, subtree_sums(self.tree, p0))]
        means, (lo, hi) = self._p0_means[key], self.tree.dfs_ranges
        if self.method == "huc":
            moved = [b for b, zs in self.z[i].items() if any(zs)]
            return {a: means[a] for a in nodes if not any(lo[a] <= lo[b] and hi[b] <= hi[a] for b in moved)}
        z = self.z[i]
        return {a: means[a] for a in nodes if len({z[y] for y in self.tree.label_ids_below(a)}) == 1}

    def _means(self, f, vals, nodes, ctx, factors=None) -> dict:
        """``mu_{u,a}(f(x_i))`` for each node ``a`` of ``nodes`` from the atom's leaf probabilities ``f``
        (exact rationals, or :class:`_Form` s) and exact utility values: ``N_a = sum_{y in Y_a} f_y u_y``
        and ``pi_a``, collapsed (:func:`_collapse`) with the factors common to both divided out
        (:func:`_common_out`).  Where both are then constants the mean is that exact rational (an
        update above ``a`` rescales all of ``Y_a`` alike: the mean inside is unchanged); else, with
        ``factors`` (a cache), their values in one fixed order (:func:`_evaluate`), so that atoms
        whose exact means are equal get the same numbers bit for bit (equal exact directions take
        the same step; two computations of one number could round to either side of a grid
        point); without ``factors``, only the exact means."""
        out = {}
        for a in nodes:
            below = self.tree.label_ids_below(a)
            N = _collapse(sum((f[y] * vals[y] for y in below if vals[y]), _Form({}, ctx.mpf(0))).coef)
            pi = _collapse(sum((f[y] for y in below), _Form({}, ctx.mpf(0))).coef)
            N, pi = _common_out(N, pi)
            if set(N) <= {()} and set(pi) == {()}:  # constants: the exact mean
                out[a] = Fraction(N.get((), 0)) / pi[()]
            elif factors is not None:
                out[a] = _evaluate(N, ctx, factors) / _evaluate(pi, ctx, factors)
        return out

    def curvature(self, choice, h):
        """``Lambda = (1/4) E[J_v(Y) (max_j h_j - min_j h_j)^2]`` (E.2), exact for the rounded h."""
        total = 0.0 if self.float else Fraction(0)
        for i, hi in h.items():
            atom = self.dist.atoms[i]
            inside = 1 if choice.node is None else sum(
                (e for y, e in enumerate(atom.label_law(self.tree.K)) if self.tree.contains(choice.node, y)),
                Fraction(0))
            total += (atom.weight * inside if not self.float else float(atom.weight * inside)) \
                * (max(hi) - min(hi)) ** 2 / 4
        return total

    def gamma_of(self, choice, h, ctx):
        """``Gamma = E[<h(X), R_v(f(X), Y)>]`` for the direction ``h`` (UC: R over all leaves)."""
        lift = _lift(ctx)
        preds = self.predictions(ctx)
        total = ctx.mpf(0)
        for i, hi in h.items():
            atom = self.dist.atoms[i]
            law = atom.label_law(self.tree.K)
            p = preds[i]
            if self.method == "huc":
                kids = self.tree.child_ids[choice.node]
                below = [[y for y in self.tree.label_ids_below(k)] for k in kids]
                pi_v = sum((p[y] for ys in below for y in ys), ctx.mpf(0))
                star = [sum((law[y] for y in ys), Fraction(0)) for ys in below]
                star_v = sum(star, Fraction(0))
                for j, ys in enumerate(below):
                    q = sum((p[y] for y in ys), ctx.mpf(0)) / pi_v
                    total = total + lift(atom.weight) * lift(hi[j]) * (lift(star[j]) - lift(star_v) * q)
            else:
                mean = sum((p[y] * lift(hi[y]) for y in range(len(p))), ctx.mpf(0))
                for y, e in enumerate(law):
                    if e:
                        total = total + lift(atom.weight * e) * (lift(hi[y]) - mean)
        return total

    def apply(self, choice, h, alpha):
        for i, hi in h.items():
            target = self.z[i][choice.node] if self.method == "huc" else self.z[i]
            for j, x in enumerate(hi):
                target[j] += alpha * x


def _text(x, digits) -> str:
    """A decimal string with ``digits`` significant digits, correctly rounded from the exact
    value of an mpf or the midpoint of an interval (floats: their shortest repr)."""
    if isinstance(x, float):
        return repr(x)
    if isinstance(x, Fraction):
        value = x
    elif hasattr(x, "_mpi_"):
        lo, hi = (_rational(e) for e in x._mpi_)
        value = (lo + hi) / 2
    else:
        value = _to_fraction(x)
    with decimal.localcontext() as dctx:
        dctx.prec = digits
        return str(decimal.Decimal(value.numerator) / decimal.Decimal(value.denominator))


class CertifiedBackend(Backend):
    """The certified engine's side of :func:`huc_ref.driver.drive` (Sec. 3.2, docs/specification.md §4).

    Its decisions are proved at two precisions, the step is exact on a dyadic grid, and the
    Theorem 3.5 inequalities are certified by outward-rounded intervals; with
    ``arithmetic="float"`` the same engine runs on binary floats, uncertified.

    Parameters
    ----------
    dist : FiniteDistribution
        The atoms boosted.
    utilities : dict of str to Utility
        The utilities.
    method : {"huc", "uc"}
        HUC-Boost or UC-Boost.
    epsilon : Fraction
        The tolerance.
    arithmetic : {"certified", "float"}
        Certified decisions at ``digits`` significant digits (and 32 bits more), or binary
        floats.
    digits : int
        The working precision in significant digits (:func:`check_digits`).

    Examples
    --------
    App. D.1's population: the root's violation 1/4 is chosen, and one exact step of 1 applied.

    >>> from huc_ref import demo
    >>> backend = CertifiedBackend(demo.DIST, {"u": demo.U}, "huc", Fraction(1, 100), "certified", 30)
    >>> choice = backend.choose(None)
    >>> float(choice.sup), backend.tree.nodes[choice.node], backend.update(choice, None, None).rule
    (0.25, 'v0', (0, 'u', 0, Fraction(1, 2), Fraction(1, 2), Fraction(1, 1)))
    >>> backend.final()["huc"], backend.certified
    ('0.25', True)
    """

    def __init__(self, dist, utilities, method, epsilon, arithmetic, digits):
        self.engine = _Engine(dist, utilities, method, float(epsilon) if arithmetic == "float" else epsilon,
                              arithmetic, digits)
        self.dist, self.tree, self.method, self.digits = dist, dist.tree, method, digits
        self.certified = arithmetic == "certified"
        self.branching = self.engine.branching
        self.iv = _interval_context(self.engine.bits) if self.certified else _FloatContext
        self.loss = self.engine.log_loss(self.iv)
        self._chosen = None

    def initial(self):
        return _text(self.loss, 20), _upper(self.loss) if self.certified else Fraction(self.loss)

    def choose(self, node):
        choice, preds, tables, ctx = self.engine.certified_choice(node)
        self._chosen = (preds, tables, ctx)
        return choice

    def update(self, choice, fixed, floor):
        engine, (preds, tables, ctx), iv = self.engine, self._chosen, self.iv
        h = engine.direction(choice, preds, tables, ctx)
        lam = engine.curvature(choice, h)
        if not lam:
            raise HUCError("boost: Lambda = 0 for a violated candidate (Lemma E.4 says impossible)", kind="internal")
        gamma_h = engine.gamma_of(choice, h, ctx)
        if fixed is None and engine.float:
            alpha = float(gamma_h / lam)
        elif fixed is None:  # rounded from the exact Gamma / Lambda where it is rational (rational_gamma)
            exact = all(engine.untouched(i) for i in h)
            alpha = _dyadic(rational_gamma(self.dist, self.method, choice.node, h) / lam if exact
                            else gamma_h / _lift(ctx)(lam), engine.bits)
        else:
            alpha = (1 if gamma_h > 0 else -1) * (float(fixed) if engine.float else fixed)
        gamma_iv = engine.gamma_of(choice, h, iv) if self.certified else gamma_h
        engine.apply(choice, h, alpha)
        loss, after = self.loss, engine.log_loss(iv)
        lift = _lift(iv)
        promised = lift(alpha) * gamma_iv - lift(alpha) ** 2 * lift(lam) / 2  # alpha Gamma - alpha^2 Lambda / 2
        if self.certified:  # eq. (101) for the applied step, and the strict decrease, by outward-rounded intervals
            bound_ok = (after - (loss - promised)).b <= 0
            decreased = (after - loss).b < 0
            floor_ok = (promised - lift(floor)).a > 0 if floor is not None else None
        else:
            bound_ok, decreased = after <= loss - promised + 1e-12, after < loss
            floor_ok = promised > float(floor) - 1e-12 if floor is not None else None
        self.loss = after
        lo_hi = _table_interval(tables, choice)
        rule = (choice.subgroup, choice.utility, choice.node, *(_to_fraction(x) for x in lo_hi),
                alpha if not engine.float else Fraction(alpha))
        record = {
            "subgroup": self.dist.subgroups[choice.subgroup], "utility": choice.utility,
            "node": None if choice.node is None else self.tree.nodes[choice.node],
            "interval": [_text(x, 20) for x in lo_hi], "gamma": _text(choice.moment, 20),
            "lambda": _text(_lift(ctx)(lam) if not engine.float else lam, 20),
            "alpha": fraction_text(alpha) if not engine.float else repr(alpha),
            "log_loss_before": _text(loss, 20), "log_loss_after": _text(after, 20),
            "guaranteed_decrease": _text(promised, 20), "quadratic_bound_holds": bool(bound_ok),
            "log_loss_decreased": bool(decreased)}
        return Update(record, rule, bool(bound_ok), bool(decreased), None if floor_ok is None else bool(floor_ok))

    def final(self):
        engine = self.engine
        _, tables = engine.audit(_FloatContext, with_nodes=True) if not self.certified else \
            _decided(lambda bits: engine.audit(_context(bits), with_nodes=True), engine.bits)
        n_sub = range(len(self.dist.subgroups))

        def sup(row):  # an empty witness carries an exact 0; compare everything as exact rationals
            return Fraction(0) if row.empty else _to_fraction(row.sup)
        ucs = [sup(t.best[k, None]) for t, _, _ in tables.values() for k in n_sub]
        hucs = [sup(t.best[k, a]) for t, _, rel in tables.values() for k in n_sub for a in rel]
        return {"uc": _text(max(ucs), 20), "huc": _text(max(hucs, default=Fraction(0)), 20),
                "log_loss": _text(self.loss, 20)}

    def predictions(self):
        ctx = _interval_context(self.engine.bits) if self.certified else _FloatContext
        return [[_text(x, max(self.digits, 30)) for x in row] for row in self.engine.predictions(ctx)]


def boost(dist: FiniteDistribution, utilities: dict, *, method: str = "huc", epsilon="1/100",
          max_updates: int = 1000, step="adaptive", select: str = "greedy", digits: int = 30,
          arithmetic: str = "certified", max_passes: int = 100, progress=None) -> BoostResult:
    """Run HUC-Boost (Algorithm 1/3) or UC-Boost on the certified engine until no candidate exceeds epsilon.

    Parameters
    ----------
    dist : FiniteDistribution
        The atoms boosted (population or sample).
    utilities : dict of str to Utility
        The utilities, each defined at every prediction.
    method : {"huc", "uc"}, default "huc"
        HUC-Boost or UC-Boost.
    epsilon : int, Fraction or str, default "1/100"
        The tolerance, exactly, in (0, 1].
    max_updates : int, default 1000
        The cap on the updates (``stopped == "cap"``).
    step : "adaptive" or exact number, default "adaptive"
        ``"adaptive"`` (``alpha = Gamma/Lambda``) or a magnitude ``a`` for the fixed step
        ``alpha = sign(Gamma) a`` (H.1: ``eps/2`` with the tolerance ``3 eps/4``).
    select : {"greedy", "passes", "drain"}, default "greedy"
        ``"greedy"`` (the largest violation), ``"passes"`` (K.1: passes over the branching
        nodes in pre-order, each audited once and updated at most once, at most ``max_passes``
        passes) or ``"drain"`` (update one node until it is clean, then the next); see
        :class:`~huc_ref.driver.Schedule`, whose audit log the result keeps as
        :attr:`BoostResult.audits`.
    digits : int, default 30
        The working precision in significant digits, 15 to 2000 (:func:`check_digits`).
    arithmetic : {"certified", "float"}, default "certified"
        Certified decisions, or the same engine on binary floats, uncertified, for large
        experiments (J.1's 4,800 runs); its results say so.
    max_passes : int, default 100
        The budget of ``select="passes"`` (``stopped == "budget"``).
    progress : callable, optional
        ``progress(t, record)`` is called after every update.

    Returns
    -------
    BoostResult
        The run: its updates, ``stopped`` (``"tolerance"``, ``"cap"`` or ``"budget"``), the
        final state and Theorem 3.5's checks on every update
        (:attr:`BoostResult.theorem_3_5`).

    Raises
    ------
    HUCError
        For an unknown ``arithmetic``, ``digits`` out of range, and the options and utilities
        :func:`boost_options` refuses.

    Examples
    --------
    App. D.1: one adaptive HUC-Boost update removes the root's violation.

    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> r = boost(d, {"u": Table(t, [-1, 1, 1, 1])}, epsilon="1/10", digits=30)
    >>> r.stopped, len(r.updates) <= r.bound_updates, r.theorem_3_5["holds"], r.theorem_3_5["certified"]
    ('tolerance', True, True, True)
    >>> r.updates[0]["node"], r.updates[0]["gamma"], r.updates[0]["alpha"]
    ('v0', '0.25', '1')
    """
    if not one_of(arithmetic, ("certified", "float")):
        raise HUCError(f"arithmetic: expected 'certified' or 'float', got {given(arithmetic)}", kind="option")
    digits = check_digits(digits)
    eps, fixed = boost_options(dist, utilities, method=method, select=select, epsilon=epsilon,
                               max_updates=max_updates, step=step, max_passes=max_passes)
    backend = CertifiedBackend(dist, utilities, method, eps, arithmetic, digits)
    label = "exact" if arithmetic == "certified" else "float"  # (the result's arithmetic: huc_ref.engines.ARITHMETICS)
    return drive(backend, BoostResult(method, eps, digits, label), method=method, epsilon=eps, fixed=fixed,
                 select=select, max_updates=max_updates, max_passes=max_passes, progress=progress)


@dataclass(frozen=True)
class Judgement:
    """The certified engine's choice on a given exact state (Sec. 3.2's largest candidate, App. F.3's witness).

    Parameters
    ----------
    sup : float
        The candidate's sup.
    subgroup : int
        Its subgroup's index.
    utility : str
        Its utility.
    node : int or None
        Its node id; None for UC.
    moment : float
        The signed moment of its witness.
    exceeds : bool
        Whether the sup exceeds epsilon.
    members : tuple of int
        The atoms the witness interval holds.
    interval : tuple of float
        The interval's ends (empty for an empty witness).
    values : list of list of float
        Every atom's utility values as the engine decided them (floats; the decisions are
        certified).

    See Also
    --------
    Judge.choose : where it comes from.

    Examples
    --------
    >>> from huc_ref import demo
    >>> c = Judge(demo.DIST, {"u": demo.U}, "huc", Fraction(1, 10)).choose({})  # App. D.1
    >>> c.node, c.members, c.values
    (0, (0,), [[-1.0, 1.0, 1.0, 1.0]])
    """

    sup: float
    subgroup: int
    utility: str
    node: int | None
    moment: float
    exceeds: bool
    members: tuple
    interval: tuple
    values: list


class Judge:
    """The certified engine as the judge of certified float64 (docs/specification.md §4).

    It makes the choice of a boosting run on an exact state given by its logits, its decisions
    certified at two precisions (:class:`CertifiedBackend`'s engine).  The fast backend's
    certified context (:class:`huc_ref.fast.context.Certified`) asks it where its bounds and
    Arb cannot decide.

    Parameters
    ----------
    dist : FiniteDistribution
        The atoms, at their initial predictions.
    utilities : dict of str to Utility
        The utilities.
    method : {"huc", "uc"}
        HUC-Boost or UC-Boost.
    epsilon : Fraction
        The tolerance.
    digits : int, default 30
        The working precision in significant digits (:func:`check_digits`).

    Examples
    --------
    App. D.1 after no update: the root's sup 1/4, first of the two equal ones (vL's is 1/4 too).

    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> c = Judge(d, {"u": Table(t, [-1, 1, 1, 1])}, "huc", Fraction(1, 10)).choose({})
    >>> c.sup, t.nodes[c.node], c.moment, c.exceeds, c.members, c.interval
    (0.25, 'v0', 0.25, True, (0,), (0.5, 0.5))
    """

    def __init__(self, dist: FiniteDistribution, utilities: dict, method: str, epsilon: Fraction, digits: int = 30):
        self._engine = _Engine(dist, utilities, method, epsilon, "certified", check_digits(digits))

    def choose(self, logits: dict, node: int | None = None) -> Judgement | None:
        """The largest candidate (Sec. 3.2) on an exact state given by its atoms' logits, certified at two precisions.

        Parameters
        ----------
        logits : dict of int to dict or list
            The moved atoms' exact logits: atom index to, for HUC-Boost, a dict from each branching
            node id to its children's logits; for UC-Boost, the leaves'.  An atom not given keeps
            the logits it was last given, at first 0.
        node : int, optional
            A node id: the candidates at that node only; by default every candidate.

        Returns
        -------
        Judgement or None
            The choice (docs/specification.md §4), or None where there is no candidate.

        Examples
        --------
        App. D.1 after its first update (logits -1 and 1 at the root): vL's violation is left, its
        term ``sum_j pi*_j mu_j - pi*_vL mu_vL = -1/4`` unmoved by the root's split (A.3).

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
        >>> judge = Judge(d, {"u": Table(t, [-1, 1, 1, 1])}, "huc", Fraction(1, 10))
        >>> c = judge.choose({0: {0: [Fraction(-1), Fraction(1)], 1: [0, 0]}})
        >>> t.nodes[c.node], c.exceeds, c.sup, c.moment
        ('vL', True, 0.25, -0.25)
        """
        engine = self._engine
        for i, z in logits.items():
            engine.z[i] = z
        choice, _, tables, _ = engine.certified_choice(node)
        if choice is None:
            return None
        interval = tuple(float(x) for x in _table_interval(tables, choice)) if choice.members else ()
        values = [[float(x) for x in row] for row in tables[choice.utility][1]]
        return Judgement(float(choice.sup), choice.subgroup, choice.utility, choice.node, float(choice.moment),
                         choice.exceeds, tuple(choice.members), interval, values)


def check_digits(digits) -> int:
    """Check the working precision in significant digits (docs/specification.md §4).

    Parameters
    ----------
    digits : int
        An integer from 15 to 2000.

    Returns
    -------
    int
        ``digits``.

    Raises
    ------
    HUCError
        For anything else.

    Examples
    --------
    >>> check_digits(30)
    30
    >>> check_digits(5)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: digits: must be an integer from 15 to 2000, got 5
    """
    if not is_integer(digits) or not 15 <= digits <= 2000:
        raise HUCError(f"digits: must be an integer from 15 to 2000, got {given(digits)}", kind="structure")
    return int(digits)


def _table_interval(tables, choice):
    """The chosen candidate's witness interval of scores (as numbers)."""
    table = tables[choice.utility][0]
    best = table.best[choice.subgroup, choice.node]
    return tuple(x.value if isinstance(x, _Form) else x for x in table.interval(best)) if not best.empty else ()
