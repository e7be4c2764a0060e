"""Algorithm 2 (App. F.3) against brute-force enumeration, including the certified path."""

import random
import sys
from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from huc_ref import intervals
from huc_ref.intervals import Interval, max_interval_sum, max_interval_sum_brute_force

F = Fraction
blocks = st.lists(st.fractions(min_value=-2, max_value=2, max_denominator=6), max_size=14)


@given(blocks)
@example([])
@example([F(0), F(0), F(0)])
@example([F(1), F(-1), F(1), F(-1)])  # many tied maximisers: smallest b, then smallest r
@example([F(-1, 2), F(1, 2)])
def test_algorithm_2_equals_brute_force(bl):
    assert max_interval_sum(bl) == max_interval_sum_brute_force(bl)


@given(blocks, st.integers(1, 40))
def test_certified_search_equals_brute_force_at_any_starting_resolution(bl, k):
    expected = max_interval_sum_brute_force(bl)
    nonzero = [f for f in bl if f]
    found = intervals._certified(nonzero, k=k) if nonzero else None
    assert (found[2] if found else 0) == expected.moment
    assert (abs(found[2]) if found else 0) == expected.sup


@given(blocks)
@example([F(1), F(0), F(-1), F(0), F(1), F(-1)])
def test_certified_path_through_the_public_function_keeps_the_tie_rule(bl):
    """With the exact scan disabled, zero-block compression and index maps still give
    brute force's witness exactly."""
    saved = intervals._EXACT_SCAN_BITS
    intervals._EXACT_SCAN_BITS = 0
    try:
        assert max_interval_sum(bl) == max_interval_sum_brute_force(bl)
    finally:
        intervals._EXACT_SCAN_BITS = saved


def test_tie_rule_on_alternating_blocks():
    res = max_interval_sum([F(1), F(-1), F(1), F(-1)])
    assert (res.sup, res.r, res.b, res.moment) == (F(1), 0, 1, F(1))


def test_float_derived_blocks_take_the_certified_path_and_stay_exact():
    rng = random.Random(7)
    bl = [F(rng.random() - 0.5) / rng.randint(1, 10**6) for _ in range(400)]
    assert intervals._scan_common_denominator(bl) is None  # the common denominator outgrows the scan
    res = max_interval_sum(bl)
    assert res.moment == sum(bl[res.r:res.b], F(0))
    prefix = [F(0)]
    for b in bl:
        prefix.append(prefix[-1] + b)
    lo, hi = min(prefix), max(prefix)
    assert res.sup == hi - lo  # the max over pairs is the prefix range (brute force is O(m^2) sums)


def test_interval_membership():
    half_open = Interval(F(0), F(1), lo_closed=False)
    assert F(0) not in half_open and F(1) in half_open and F(1, 2) in half_open
    assert F(-10**9) in Interval() and F(3) in Interval(lo=F(3))


# big denominators: shared large factors (powers of 3 times small ones, as the million-digit pin in
# tests/strategies.py has), equal ones, and unrelated ones (float-derived sums)
_BASES = st.sampled_from([3 ** 3000, 7 ** 2500, 2 ** 9000 + 1, 1])
big_blocks = st.lists(st.builds(lambda num, small, base: F(num, small * base), st.integers(-10**30, 10**30),
                                st.integers(1, 40), _BASES), min_size=1, max_size=9)


@given(big_blocks)
@example([F(1, 6 * 3 ** 3000), F(1, 8 * 3 ** 3000)])  # a large common factor two steps of Euclid away
@example([F(1, 8), F(1, 4 * 3 ** 3000), F(-1, 4 * 3 ** 3000), F(1, 3 * (2 ** 9000 + 1))])
def test_exact_sums_over_large_denominators_are_the_sums(bl):
    """``_exact_sum`` (binary splitting, over ``lcm(b, d)`` where the denominators share a factor
    nearly as large as the smaller, else over ``b d``) is the sum Fraction adds one at a time, and
    Algorithm 2's witness (``max_interval_sum`` through the certified search) is brute force's."""
    num, den = intervals._exact_sum(bl)
    assert F(num, den) == sum(bl, F(0))
    assert max_interval_sum(bl) == max_interval_sum_brute_force(bl)


@pytest.mark.parametrize("gmpy", [True, False])
def test_reduced_is_fraction_in_lowest_terms(gmpy, monkeypatch):
    """``rational.reduced`` (GMP's gcd past ``GMP_BITS``, where gmpy2 is installed) gives the
    Fraction Python's own reduction gives, small and past 2^15 bits, either sign."""
    from huc_ref.rational import GMP_BITS, reduced
    if not gmpy:
        monkeypatch.setitem(sys.modules, "gmpy2", None)
    rng = random.Random(5)
    for bits in (10, GMP_BITS + 1, 4 * GMP_BITS):
        g = rng.getrandbits(bits) | 1
        num, den = rng.getrandbits(bits) * g, (rng.getrandbits(bits) | 1) * g
        for n, d in ((num, den), (-num, den), (num, -den), (0, den)):
            got = reduced(n, d)
            assert type(got) is F and got == F(n, d)
            assert (got.numerator, got.denominator) == (F(n, d).numerator, F(n, d).denominator)
