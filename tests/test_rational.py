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
    (Decimal("1e-4400"), Fraction(1, 10**4400)), (Decimal("1e400"), Fraction(10**400)),  # a Decimal's bounds
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
    (Decimal("1e-99999999"), "x: exponent of '1E-99999999' exceeds 4400 in magnitude"),  # (not 10^8 digits built)
    (Decimal("1e-4401"), "x: exponent of '1E-4401' exceeds 4400 in magnitude"),  # (400 after 4,000 fraction digits)
    (Decimal("1e401"), "x: exponent of '1E+401' exceeds 400 in magnitude"),
    (Decimal("9" * 5000), "x: '99999999999999999999'... has more than 4000 digits"),
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


@settings(max_examples=200)
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


@settings(max_examples=200)
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
    t = t.with_labels(t.labels)  # (the arrays' columns are in its order)
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


def _without_gmpy2(monkeypatch):
    """Make ``import gmpy2`` fail, so the plain-Python branch runs whatever is installed."""
    import sys
    monkeypatch.setitem(sys.modules, "gmpy2", None)


def _int_unguarded(text: str) -> int:
    """The integer a digit string writes, read by ``decimal`` (exact, and not bound by Python's
    4,300-digit guard on ``int``): the independent reading."""
    return int(Decimal(text))


@settings(max_examples=60)
@given(st.sampled_from(["", "-", "+"]), st.integers(1, 20000), st.integers(0, 2**32), st.booleans())
@example("", 4300, 0, True)
@example("-", 4301, 1, False)
@example("+", 20000, 2, True)
def test_integer_value_reads_any_length(sign, length, seed, gmpy):
    """``integer_value`` (gmpy2 or ``int`` with the guard lifted) reads what ``int`` reads with
    the guard lifted, on both sides of the 4,300-digit guard, with and without gmpy2; the guard
    is Python's again afterwards, and ``integer_text`` writes the number back."""
    import random
    import sys
    from unittest import mock

    from huc_ref.rational import integer_text, integer_value
    rng = random.Random(seed)
    text = sign + "".join(rng.choice("0123456789") for _ in range(length))
    guard = sys.get_int_max_str_digits()
    with mock.patch.dict(sys.modules, {} if gmpy else {"gmpy2": None}):
        got = integer_value(text)
        back = integer_text(got)
    assert sys.get_int_max_str_digits() == guard
    want = _int_unguarded(text)
    assert got == want and _int_unguarded(back) == want and back == back.lstrip("+")


decimals = st.builds(
    lambda sign, whole, point, part, exp: sign + whole + (("." + part) if point else "") + exp,
    st.sampled_from(["", "-", "+"]), st.text("0123456789", max_size=8), st.booleans(),
    st.text("0123456789", max_size=8),
    st.sampled_from([""]) | st.builds(lambda e, s, n: e + s + str(n), st.sampled_from("eE"),
                                      st.sampled_from(["", "-", "+"]), st.integers(0, 400)))


@settings(max_examples=400)
@given(decimals)
@example("5.")
@example("-.5e-3")
@example("+0.000E+400")
@example("1e-400")
@example(".000e-398")
def test_decimal_strings_read_as_python_reads_them(text):
    """A decimal string is the number ``Fraction(text)`` reads (Python's own parser, the
    independent reading); a string Python refuses is refused with the message."""
    try:
        want = Fraction(text)
    except ValueError:
        with pytest.raises(HUCError, match="is not an exact number"):
            exact(text, "x")
        return
    assert exact(text, "x") == want
    assert exact(Decimal(text), "x") == want  # a Decimal is read as its text, with a string's bounds


@pytest.mark.parametrize("gmpy", [True, False])
def test_long_strings_read_past_pythons_guard(gmpy, monkeypatch):
    """Strings of more than 4,300 digits (Python's ``int``/``Fraction`` refuse them) read with
    a larger ``digits`` bound: a ratio, a decimal with an exponent, and the bound's message."""
    from decimal import localcontext
    if not gmpy:
        _without_gmpy2(monkeypatch)
    num, den = "7" * 6000, "3" + "1" * 6000
    assert exact(f"-{num}/{den}", "x", digits=20000) == Fraction(-_int_unguarded(num), _int_unguarded(den))
    text = "0." + "123456789" * 700 + "e-5"
    with localcontext() as ctx:
        ctx.prec = 10000
        assert exact(text, "x", digits=20000) == Fraction(Decimal(text))
    with pytest.raises(HUCError, match=r"^x: '77777777777777777777'\.\.\. has more than 4000 digits$"):
        exact(num, "x")


@settings(max_examples=40)
@given(st.integers(1, 60_000), st.integers(0, 2**32), st.sampled_from(["random", "ten to the", "ten to the, less one"]))
@example(4000, 0, "random")  # the split's edge: Decimal reads it whole
@example(4001, 1, "random")
@example(4300, 0, "ten to the")  # 10^4300: a 1 and 4,300 zeros (halves of zeros)
@example(60_000, 2, "ten to the, less one")
def test_decimal_digits_are_pythons_str(size, seed, kind):
    """``_decimal_digits`` (halves by powers of two, rebuilt in the decimal module's arithmetic: the
    writer of long integers without gmpy2) writes what CPython's own ``str`` writes with its
    4,300-digit guard lifted, and ``_digits_value`` (halves of the text joined by a power of ten:
    the reader) reads it back; ``size`` is bits for a random number, digits for the powers of ten.
    Also one number of 200,000 digits."""
    import random
    import sys

    from huc_ref.rational import _decimal_digits, _digits_value
    n = {"random": random.Random(seed).getrandbits(size) | (1 << (size - 1)), "ten to the": 10**size,
         "ten to the, less one": 10**size - 1}[kind]
    guard = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        want = str(n)
        big = random.Random(seed).getrandbits(664_386)  # 200,000 digits
        want_big = str(big) if size == 4000 else None
    finally:
        sys.set_int_max_str_digits(guard)
    assert _decimal_digits(n) == want and _digits_value(want) == n
    if want_big is not None:
        assert _decimal_digits(big) == want_big and _digits_value(want_big) == big
