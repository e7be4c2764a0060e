"""Exact numbers: what is accepted, what is rejected, and the messages (rational.py)."""

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from huc_ref.errors import HUCError
from huc_ref.rational import exact, exact_sum, exact_vector, fraction_text, scaled_integers


@pytest.mark.parametrize("value, expected", [
    (3, Fraction(3)), ("3/8", Fraction(3, 8)), ("-3/8", Fraction(-3, 8)), ("0.125", Fraction(1, 8)),
    ("1e-3", Fraction(1, 1000)), (" 7 ", Fraction(7)), (".5", Fraction(1, 2)), (Decimal("0.1"), Fraction(1, 10)),
    (Fraction(2, 6), Fraction(1, 3)), (np.int64(4), Fraction(4)), ("2.5E+2", Fraction(250)),
])
def test_accepted_forms(value, expected):
    assert exact(value) == expected
    assert type(exact(value)) is Fraction


@pytest.mark.parametrize("value, message", [
    (0.1, "x: float 0.1 is not exact; pass the string '0.1' for the decimal you meant, "
          "or Fraction(0.1) for the binary value 3602879701896397/36028797018963968"),
    (np.float64(0.5), "x: float 0.5 is not exact"),
    (float("nan"), "x: nan is not a finite number"),
    ("NaN", "x: NaN is not a finite number"),
    ("-Infinity", "x: -Infinity is not a finite number"),
    (True, "x: True is a boolean, not a number"),
    ("1/0", "x: '1/0' has a zero denominator"),
    ("abc", "x: 'abc' is not an exact number (use an integer, 'a/b' or a decimal like '0.125')"),
    ("1e999999999", "x: exponent of '1e999999999' exceeds 400 in magnitude"),
    ("9" * 5000, "x: '99999999999999999999'... has more than 4000 digits"),
    ([1], "x: expected a number, got list"),
    (Decimal("NaN"), "x: NaN is not a finite number"),
], ids=lambda v: str(v)[:24])
def test_rejected_with_message(value, message):  # one parametrized case per rejected kind
    with pytest.raises(HUCError) as err:
        exact(value, "x")
    assert str(err.value).startswith(message)


def test_vector_and_text():
    assert exact_vector(["1/2", 0], "p") == (Fraction(1, 2), Fraction(0))
    with pytest.raises(HUCError, match=r"^p\[1\]: float"):
        exact_vector(["1/2", 0.5], "p")
    with pytest.raises(HUCError, match="expected a list of numbers"):
        exact_vector("0.5", "p")
    assert [fraction_text(x) for x in (Fraction(-2, 8), Fraction(0), Fraction(6, 2))] == ["-1/4", "0", "3"]


def test_scaled_integers_round_trip():
    vals = [Fraction(1, 6), Fraction(-3, 4), Fraction(5)]
    ints, den = scaled_integers(vals)
    assert [Fraction(i, den) for i in ints] == vals and den == 12


@pytest.mark.parametrize("text", ["١/٤", "𝟏/𝟒", "１/４", "\u20031/4", "1/٤"])
def test_only_ascii_digits_are_numbers(text):
    """int() reads the digits of every script; an exact input is ASCII (hostile-input rule)."""
    with pytest.raises(HUCError, match=r"is not an exact number \(use an integer"):
        exact(text, "p[0]")


fractions = st.fractions(max_denominator=10**30) | st.integers(-10**40, 10**40).map(Fraction)


@settings(max_examples=200, deadline=None)
@given(st.lists(fractions, max_size=40))
@example([Fraction(1, 2**1074), Fraction(-1, 2**1074)])
@example([Fraction(1, 10**400), Fraction(3, 7), Fraction(-5, 10**400 + 1)])
def test_exact_sum_is_the_sum(values):
    """``exact_sum`` (integers over one common denominator) is ``sum`` of the Fractions, exactly."""
    got = exact_sum(values)
    assert type(got) is Fraction and got == sum(values, Fraction(0))


def test_exact_sum_of_ten_thousand_digit_denominators():
    """Denominators of 10,000 digits and more (hypothesis's report cannot print such integers)."""
    values = [Fraction(1, 3**21000), Fraction(2, 7**12000), -Fraction(1, 3**21000), Fraction(5, 3**21001)]
    assert exact_sum(values) == sum(values, Fraction(0)) == Fraction(2, 7**12000) + Fraction(5, 3**21001)
    assert exact_sum(values).denominator.bit_length() > 33000  # (10,000 digits: about 33,220 bits)


float_entries = st.floats(min_value=0.0, max_value=1e308, allow_subnormal=True) | st.sampled_from(
    [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1e-300, 1.0, 1e308])


@settings(max_examples=200, deadline=None)
@given(st.lists(float_entries, min_size=2, max_size=100))
@example([1e-300] * 99 + [1.0])
@example([1e308, 1e308, 1e308])
@example([5e-324, 1.0])
def test_from_floats_rows_are_each_floats_exact_value_over_their_exact_sum(row):
    """``FiniteDistribution.from_floats`` (integers over one power of two) gives each row as
    ``Fraction(x) / sum(Fraction(x))``, the definition; a row with a 0 entry (after the exact
    renormalisation) or a 0 sum is the error naming it."""
    from huc_ref import FiniteDistribution, LabelTree
    t = LabelTree.from_children("r", {"r": [f"y{k}" for k in range(len(row))]})
    exact_row = [Fraction(x) for x in row]
    total = sum(exact_row, Fraction(0))
    if not total:
        with pytest.raises(HUCError, match=r"^y_prob\[0\]: entries must be nonnegative with a positive sum$"):
            FiniteDistribution.from_floats(t, [0], [row])
    elif not all(exact_row):
        with pytest.raises(HUCError, match=r"^atoms\[0\]\.p\[\d+\]: is 0; the paper assumes p_y > 0"):
            FiniteDistribution.from_floats(t, [0], [row])
    else:
        assert FiniteDistribution.from_floats(t, [0], [row]).atoms[0].p == tuple(x / total for x in exact_row)
