"""Exact maximisation of a moment over all intervals of scores (App. F.3, Algorithm 2).

The atoms are sorted by score; tied scores form blocks ``G_1..G_m`` (in increasing score)
with block sums ``B_1..B_m``.  Every interval of the real line selects either nothing or a
run of consecutive blocks (H.3, Step 1), so with prefixes ``C_0 = 0, C_b = B_1 + ... + B_b``::

    sup_I |moment(I)| = max(0, max_{0 <= r < b <= m} |C_b - C_r|),

witnessed by the closed interval ``[s_(r+1), s_(b)]``.  Algorithm 2 keeps the running
minimum and maximum of the earlier prefixes, so one pass costs ``O(m)``.

Tie rule (docs/specification.md §3, convention): among maximisers, the smallest right end ``b``, then the
smallest ``r``; a sup of 0 is witnessed by the empty interval.

Exactness at scale.  With float-derived rationals each block sum brings new prime
factors, so exact prefix sums grow by ~100 bits per block and a plain exact scan is
quadratic.  :func:`max_interval_sum` then switches to a certified search: prefix sums
of fixed-point floors ``floor(B_r 2^k)`` are exact integers within ``m`` units of
``C_b 2^k`` (each floor loses less than one unit), which locates every pair that can
attain the maximum; those few pairs are summed exactly (binary splitting) and compared
exactly.  No float is trusted; if too many pairs survive, ``k`` doubles.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import gcd
from numbers import Rational

from .errors import HUCError
from .rational import dataclass_repr, exact, reduced

__all__ = ["Interval", "IntervalMax", "max_interval_sum", "max_interval_sum_brute_force"]

_ZERO = Fraction(0)
# Above this many bits in the common denominator, the certified search takes over.
_EXACT_SCAN_BITS = 4096
_MAX_CANDIDATES = 64


@dataclass(frozen=True)
class IntervalMax:
    """The sup of ``|C_b - C_r|`` over the runs of blocks, with its witness (Algorithm 2, App. F.3).

    Parameters
    ----------
    sup : Fraction
        ``max(0, max_{r<b} |C_b - C_r|)``.
    r, b : int
        The witness: blocks ``r .. b-1`` (0-based; the paper's ``s_(r+1) .. s_(b)``).  When
        ``sup == 0`` the witness is the empty interval and ``r == b == 0``.
    moment : Fraction
        The signed sum ``C_b - C_r`` of the witness's blocks.

    Examples
    --------
    >>> best = max_interval_sum([Fraction(-1, 2), Fraction(1, 3)])
    >>> best.sup, (best.r, best.b), best.empty
    (Fraction(1, 2), (0, 1), False)
    """

    sup: Fraction
    r: int
    b: int
    moment: Fraction

    def __repr__(self) -> str:  # (an exact number past Python's 4,300-digit guard would raise in repr)
        return dataclass_repr(self)

    @property
    def empty(self) -> bool:
        """Whether the witness is the empty interval (sup 0, Algorithm 2's ``r == b``).

        Examples
        --------
        >>> max_interval_sum([Fraction(0)]).empty, max_interval_sum([Fraction(1, 3)]).empty
        (True, False)
        """
        return self.b == self.r


_EMPTY = IntervalMax(_ZERO, 0, 0, _ZERO)


def max_interval_sum(blocks) -> IntervalMax:
    """Algorithm 2 (App. F.3): ``max(0, max_{r<b} |C_b - C_r|)`` over runs of blocks, with its witness, exactly.

    Parameters
    ----------
    blocks : sequence of exact numbers
        The block sums ``B_1..B_m`` in increasing score order: ints, ``Fraction`` s, gmpy2's
        ``mpq`` or anything :func:`~huc_ref.rational.exact` reads (``"1/3"``), never a float.

    Returns
    -------
    IntervalMax
        The sup and its witness; among maximisers the smallest right end ``b``, then the
        smallest ``r`` (docs/specification.md §3); a sup of 0 is witnessed by the empty
        interval.

    Raises
    ------
    HUCError
        Where ``blocks`` is not a sequence, or (naming the entry) a block sum is not exact.

    Notes
    -----
    With prefixes ``C_0 = 0, C_b = B_1 + ... + B_b``, the pass keeps the running minimum and
    maximum of the earlier prefixes, so it costs ``O(m)``.  Zero blocks change no sum and are
    dropped first (the witness is mapped back to the blocks given).  With float-derived
    rationals each block sum brings new prime factors and exact prefix sums grow by about 100
    bits per block; past a common denominator of 4,096 bits the search is certified instead:
    prefix sums of fixed-point floors ``floor(B_r 2^k)`` are exact integers within ``m`` units
    of ``C_b 2^k``, which locates every pair that can attain the maximum; those few pairs are
    summed exactly and compared exactly (``k`` doubles while too many survive).

    Examples
    --------
    >>> F = Fraction
    >>> max_interval_sum([F(1, 4), F(-1, 2), F(1, 3), F(1, 3)])
    IntervalMax(sup=Fraction(2, 3), r=2, b=4, moment=Fraction(2, 3))
    >>> max_interval_sum([F(0), F(0)]).empty
    True
    >>> max_interval_sum(["1/4", 0.5])
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: blocks[1]: float 0.5 is not exact; pass the string '0.5' for the decimal ...
    """
    blocks = _exact_blocks(blocks)
    # Zero blocks change no sum; dropping them removes the exact ties they create.  The
    # maps back are increasing, so the smallest (b, r) stays the smallest: a right end
    # moves to just after its last nonzero block, a left end to just after the previous one.
    where = [i for i, f in enumerate(blocks) if f]
    if not where:
        return _EMPTY
    fracs = [blocks[i] for i in where]  # any exact rationals: Fraction, int, gmpy2.mpq
    found = _scan_common_denominator(fracs)
    if found is None:  # the common denominator outgrew the limit: certified search
        found = _certified(fracs)
    if found is None:
        return _EMPTY
    r, b, moment = found
    return IntervalMax(abs(moment), where[r - 1] + 1 if r else 0, where[b - 1] + 1, moment)


def _exact_blocks(blocks):
    """``blocks`` if it is a sequence of exact rationals (int, Fraction, gmpy2's mpq), else the
    same read by :func:`huc_ref.rational.exact` (strings such as "1/3"), or one HUCError naming
    the entry (a float, a boolean) or the argument (not a sequence)."""
    if isinstance(blocks, (str, bytes, Mapping)) or not isinstance(blocks, Iterable):
        raise HUCError(f"blocks: expected a sequence of exact block sums, got {type(blocks).__name__}", kind="type")
    blocks = blocks if isinstance(blocks, Sequence) else list(blocks)
    if all(type(f) is Fraction or type(f) is int for f in blocks):  # (the audit's own calls: one look each)
        return blocks
    return [_exact_block(f, i) for i, f in enumerate(blocks)]


def _exact_block(f, i: int):
    """One block sum as exact Python arithmetic: gmpy2's ``mpq`` kept, any other rational (numpy's
    integers, whose sums would wrap at 2^63) as an int or a Fraction, the rest read by ``exact``."""
    if type(f) is int or type(f) is Fraction or type(f).__name__ == "mpq":
        return f
    if isinstance(f, Rational) and not isinstance(f, bool):
        return Fraction(int(f.numerator), int(f.denominator))
    return exact(f, f"blocks[{i}]")


def _algorithm_2(values):
    """Algorithm 2 on integers: ``(|S_b - S_r|, r, b)`` maximal, smallest ``b`` then ``r`` (on
    :class:`_Within` numbers, a prefix or a sup beats an earlier one only beyond a tolerance)."""
    best = (0, 0, 0)
    s = s_min = s_max = 0
    r_min = r_max = 0
    for b, v in enumerate(values, start=1):
        s += v
        # For this b the best r is the first index of the smallest or of the largest
        # earlier prefix.  (A tie up == down > 0 is never the overall maximum: max - min,
        # reached at an earlier b, is twice as large; so either choice is right there.)
        up, down = s - s_min, s_max - s
        value, r = (up, r_min) if up >= down else (down, r_max)
        if value > best[0]:
            best = (value, r, b)
        if s < s_min:
            s_min, r_min = s, b
        if s > s_max:
            s_max, r_max = s, b
    return best


class _Within:
    """A number whose comparisons count a difference within ``tol`` as a tie (:func:`_beyond`):
    :func:`max_interval_sum_approx`'s prefix sums, so that :func:`_algorithm_2` keeps the earlier.

    >>> a, b = _Within(0.5, 1e-12), _Within(0.5 + 1e-13, 1e-12)
    >>> b > a, b >= a, (b - a).x > 0
    (False, True, True)
    """

    __slots__ = ("x", "tol")

    def __init__(self, x, tol):
        self.x, self.tol = x, tol

    def __add__(self, other):
        return _Within(self.x + (other.x if type(other) is _Within else other), self.tol)

    __radd__ = __add__

    def __sub__(self, other):
        return _Within(self.x - (other.x if type(other) is _Within else other), self.tol)

    def __rsub__(self, other):
        return _Within(other - self.x, self.tol)

    def _sign(self, other) -> int:
        return _beyond((self - other).x, self.tol)

    def __gt__(self, other):
        return self._sign(other) > 0

    def __ge__(self, other):
        return self._sign(other) >= 0

    def __lt__(self, other):
        return self._sign(other) < 0

    def __le__(self, other):
        return self._sign(other) <= 0

    def __bool__(self):
        return bool(self.x)


def _beyond(d, tol) -> int:
    """1 where ``d > tol``, -1 where ``d < -tol``, else 0 (a tie); but exactly the sign of ``d``
    where ``d`` has an exact sign (``d.exact_sign()``, not None: a difference of
    :class:`huc_ref.boost._Split` sums whose inexact parts are equal, so that only exact terms lie
    between them): a tolerance is for rounding, and an exact difference has none.

    >>> _beyond(1e-13, 1e-12), _beyond(-1e-11, 1e-12)
    (0, -1)
    """
    exact = getattr(d, "exact_sign", None)
    sign = exact() if exact is not None else None
    return sign if sign is not None else (d > tol) - (d < -tol)


def _scan_common_denominator(fracs, bit_limit=None):
    """Exact Algorithm 2 on integer numerators over ``L = lcm`` of the denominators.

    ``C_b = S_b / L`` with integer ``S_b``: one gcd per block instead of one per
    addition.  Returns ``(r, b, moment)``, or None when ``L`` exceeds ``bit_limit`` bits.
    """
    bit_limit = _EXACT_SCAN_BITS if bit_limit is None else bit_limit
    den = 1
    for f in fracs:
        d = f.denominator
        if den % d:
            den = den // gcd(den, d) * d
            if den.bit_length() > bit_limit:
                return None
    ints = [f.numerator * (den // f.denominator) for f in fracs]
    value, r, b = _algorithm_2(ints)
    if not value:
        return None
    return r, b, reduced(sum(ints[r:b]), den)


def _exact_sum(fracs):
    """``sum(fracs)`` as an unreduced pair ``(num, den)``, by binary splitting.

    Pairwise combination keeps the operands balanced, so the cost is that of a few
    multiplications of the final size instead of ``m`` additions of growing size.  Two large
    denominators that share a factor nearly as large as the smaller (equal ones, or a power of 3
    times 6 and times 8) are added over their lcm (:func:`_add`): their product would double the
    digits that every later step multiplies and the final reduction divides.

    >>> _exact_sum([Fraction(1, 6), Fraction(1, 3), Fraction(1, 4)])
    (54, 72)
    >>> X = 3**4000
    >>> _exact_sum([Fraction(1, 6 * X), Fraction(1, 8 * X)]) == (7, 24 * X)
    True
    """
    pairs = [(f.numerator, f.denominator) for f in fracs]
    if not pairs:
        return 0, 1
    while len(pairs) > 1:
        nxt = [_add(a, b, c, d) for (a, b), (c, d) in zip(pairs[::2], pairs[1::2])]
        if len(pairs) % 2:
            nxt.append(pairs[-1])
        pairs = nxt
    return pairs[0]


def _add(a: int, b: int, c: int, d: int) -> tuple[int, int]:
    """``a/b + c/d`` as an unreduced pair: over ``lcm(b, d)`` where the denominators share a factor
    nearly as large as the smaller (equal ones, or ``6 X`` and ``8 X``), else over ``b d``.

    >>> _add(1, 6 * 3**4000, 1, 8 * 3**4000) == (7, 24 * 3**4000)
    True
    """
    g = _large_common_factor(b, d)
    if g is None:
        return a * d + c * b, b * d
    return a * (d // g) + c * (b // g), b // g * d


def _large_common_factor(b: int, d: int, steps: int = 16):
    """``gcd(b, d)`` if Euclid reaches it within ``steps`` divisions of small quotient and it has
    all but 64 bits of the smaller number, else None.  Each step then costs one linear pass, where
    CPython's ``gcd`` of two unrelated n-digit numbers, and a division by a factor of half their
    size, cost time proportional to n^2 (and the product is then the cheaper denominator)."""
    lb, ld = b.bit_length(), d.bit_length()
    small = min(lb, ld)
    if small < 2048:  # the product costs less than the steps' interpretation
        return None
    if b < d:
        b, d = d, b
    for _ in range(steps):
        if not d:
            return b if b.bit_length() >= small - 64 else None
        if b.bit_length() - d.bit_length() > 64 and d.bit_length() > 64:
            return None
        b, d = d, b % d
    return None


def _certified(fracs, k=None):
    """The certified search described in the module docstring: ``(r, b, moment)`` or None."""
    m = len(fracs)
    k = k or 64 + 2 * m.bit_length()
    while True:
        floors = [(f.numerator << k) // f.denominator for f in fracs]
        # True prefixes T_b = C_b 2^k satisfy S_b <= T_b < S_b + b <= S_b + m, so every
        # exact maximiser has |S_b - S_r| > a - 2m where a is the largest |S_b - S_r|.
        threshold = _algorithm_2(floors)[0] - 2 * m
        pairs = _candidate_pairs(floors, threshold) if threshold > 0 else None
        if pairs is not None:
            return _best_exact(fracs, pairs)
        if k > 1 << 20:  # only exact near-ties remain at any resolution: scan exactly
            return _scan_common_denominator(fracs, bit_limit=float("inf"))
        k *= 2


def _candidate_pairs(floors, threshold):
    """All ``(r, b)`` with ``|S_b - S_r| > threshold``; None if more than a few."""
    prefix = [0]
    for v in floors:
        prefix.append(prefix[-1] + v)
    ends = []
    s_min = s_max = 0
    for b in range(1, len(prefix)):
        if prefix[b] - s_min > threshold or s_max - prefix[b] > threshold:
            ends.append(b)
            if len(ends) > _MAX_CANDIDATES:
                return None
        s_min = min(s_min, prefix[b])
        s_max = max(s_max, prefix[b])
    pairs = []
    for b in ends:
        hi, lo = prefix[b] - threshold, prefix[b] + threshold
        pairs += [(r, b) for r in range(b) if prefix[r] < hi or prefix[r] > lo]
        if len(pairs) > _MAX_CANDIDATES:
            return None
    return pairs


def _best_exact(fracs, pairs):
    """Exact values of the candidate pairs; the maximiser by the tie rule (b, then r)."""
    best = None
    for r, b in sorted(pairs, key=lambda rb: (rb[1], rb[0])):
        num, den = _exact_sum(fracs[r:b])
        if best is None or abs(num) * best[1] > abs(best[0]) * den:
            best = (num, den, r, b)
    num, den, r, b = best
    return (r, b, reduced(num, den)) if num else None


def max_interval_sum_brute_force(blocks) -> IntervalMax:
    """Algorithm 2's definition (App. F.3) by enumeration: every ``(r, b)`` with its exact sum.

    It takes ``O(m^2)`` sums: the reference :func:`max_interval_sum` is tested against.

    Parameters
    ----------
    blocks : sequence of exact numbers
        The block sums ``B_1..B_m`` (each converted by ``Fraction``).

    Returns
    -------
    IntervalMax
        The sup and its witness, by the same tie rule (smallest ``b``, then ``r``).

    Examples
    --------
    >>> max_interval_sum_brute_force([Fraction(1, 4), Fraction(-1, 2), Fraction(1, 3)])
    IntervalMax(sup=Fraction(1, 2), r=1, b=2, moment=Fraction(-1, 2))
    """
    best = _EMPTY
    blocks = [Fraction(b) for b in blocks]
    for b in range(1, len(blocks) + 1):
        for r in range(b):
            moment = sum(blocks[r:b], _ZERO)
            if abs(moment) > best.sup:
                best = IntervalMax(abs(moment), r, b, moment)
    return best


@dataclass(frozen=True)
class Interval:
    """An interval ``I`` of the real line (Def. 2.1's intervals), each end open or closed.

    Parameters
    ----------
    lo, hi : Fraction or None, default None
        The ends; None for an unbounded end.
    lo_closed, hi_closed : bool, default True
        Whether each end belongs to the interval.

    Examples
    --------
    >>> I = Interval(Fraction(1, 4), Fraction(1, 2), hi_closed=False)
    >>> Fraction(1, 4) in I, Fraction(1, 2) in I, Interval.closed(0, 0)
    (True, False, Interval(lo=Fraction(0, 1), hi=Fraction(0, 1), lo_closed=True, hi_closed=True))
    """

    lo: Fraction | None = None
    hi: Fraction | None = None
    lo_closed: bool = True
    hi_closed: bool = True

    def __repr__(self) -> str:  # (an exact number past Python's 4,300-digit guard would raise in repr)
        return dataclass_repr(self)

    @classmethod
    def closed(cls, lo, hi) -> Interval:
        """The closed interval ``[lo, hi]``, the form Algorithm 2's witnesses take (App. F.3).

        Parameters
        ----------
        lo, hi : int, Fraction or str
            The ends, read by :func:`~huc_ref.rational.exact` (named ``lo`` and ``hi`` in its
            messages).

        Returns
        -------
        Interval
            ``[lo, hi]``.

        Raises
        ------
        HUCError
            Where an end is not an exact number.

        Examples
        --------
        >>> Interval.closed("1/4", 1).hi, Fraction(1, 4) in Interval.closed("1/4", 1)
        (Fraction(1, 1), True)
        """
        return cls(exact(lo, "lo"), exact(hi, "hi"))

    def __contains__(self, x) -> bool:
        if self.lo is not None and (x < self.lo or (x == self.lo and not self.lo_closed)):
            return False
        if self.hi is not None and (x > self.hi or (x == self.hi and not self.hi_closed)):
            return False
        return True


def max_interval_sum_approx(blocks, tol=0) -> IntervalMax:
    """Algorithm 2 on inexact numbers (a working precision): the same pass and tie rule.

    Used by boosting, whose decisions are certified by agreement at two precisions.  ``tol``:
    prefix sums, and sups, within ``tol`` of an earlier one count as equal to it (the earlier
    kept, App. F.3's tie rule), so that an exact tie of inexact numbers, which rounding orders
    either way, goes to the same witness at both precisions; but two that differ by exact terms
    only compare exactly (:func:`_beyond`).

    >>> max_interval_sum_approx([0.25, -0.5, 0.0, 0.5])
    IntervalMax(sup=0.5, r=1, b=2, moment=-0.5)
    >>> max_interval_sum_approx([-0.25, 0.25 + 2.0**-54]).b, max_interval_sum_approx([-0.25, 0.25 + 2.0**-54], 1e-12).b
    (2, 1)
    >>> max_interval_sum_approx([-1e-17, 0.3]).r, max_interval_sum_approx([-1e-17, 0.3], 1e-12).r  # C_1 ~ C_0: r = 0
    (1, 0)
    """
    where = [i for i, f in enumerate(blocks) if f]
    if not where:
        return _EMPTY
    values = [blocks[i] for i in where]
    value, r, b = _algorithm_2([_Within(v, tol) for v in values] if tol else values)
    if not value:
        return _EMPTY
    moment = values[r]
    for x in values[r + 1:b]:
        moment = moment + x
    return IntervalMax(abs(moment), where[r - 1] + 1 if r else 0, where[b - 1] + 1, moment)
