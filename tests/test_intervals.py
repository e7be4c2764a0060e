"""Algorithm 2 (App. F.3) against brute-force enumeration, including the certified path."""

import random
from fractions import Fraction

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
