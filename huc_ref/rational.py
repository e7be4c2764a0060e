"""Exact numbers: what the exact path accepts, and how it writes them back.

The exact path never touches a binary float.  It accepts ``int``, ``Fraction``,
``decimal.Decimal``, strings ``"a/b"`` and decimal strings (``"0.125"``, ``"1e-3"``);
a ``float`` is rejected with a message saying how to convert it.  Results are
``Fraction`` s, written back as strings in lowest terms (``"-1/4"``, ``"0"``).
"""

from __future__ import annotations

import numbers as _abc
import re
from collections.abc import Mapping
from dataclasses import fields
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, Context, Decimal
from fractions import Fraction
from math import lcm

from .errors import HUCError, given, one_of

__all__ = ["MAX_DIGITS", "exact", "exact_vector", "exact_sum", "fraction_text", "integer_text", "integer_value",
           "decimal_text", "shown", "ratio", "RATIONAL_TYPES", "rational_type", "scaled_integers", "reduced",
           "to_fraction", "dataclass_repr", "shared_sign"]

#: The most digits one exact number's text may have (numerator, denominator or exponent): a
#: hostile string such as "1e999999999" cannot make Fraction() build a gigantic integer.
MAX_DIGITS = 4000
MAX_EXPONENT = 400

_INTEGER = r"[+-]?\d+"
_DECIMAL = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE](?P<exp>[+-]?\d+))?"
# re.ASCII: \d is [0-9] only, so "١/٤" or "𝟏/𝟒" (digits of other scripts, which int() would
# read) are not numbers here: an exact input is written in ASCII
_NUMBER = re.compile(rf"(?:{_INTEGER}/\d+|{_DECIMAL})", re.ASCII)


def _parse_text(text: str, where: str, digits: int) -> Fraction:
    s = text.strip(" \t\n\r")
    if s.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        raise HUCError(f"{where}: {text} is not a finite number", kind="not_exact")
    match = _NUMBER.fullmatch(s)
    if not match:
        raise HUCError(f"{where}: {text!r} is not an exact number (use an integer, 'a/b' or a decimal like '0.125')",
                       kind="not_exact")
    _check_size(where, text, int(match.group("exp") or 0), MAX_EXPONENT, sum(map(s.count, "0123456789")), digits)
    if "/" in s:
        num, den = s.split("/")
        if not den.strip("0"):
            raise HUCError(f"{where}: {text!r} has a zero denominator", kind="not_exact")
        return Fraction(integer_value(num), integer_value(den))
    mantissa, _, exponent = s.lower().partition("e")
    whole, _, part = mantissa.partition(".")
    sign = -1 if whole.startswith("-") else 1
    value = integer_value((whole.lstrip("+-") + part) or "0")  # "5." and ".5" have one side
    scale = (int(exponent) if exponent else 0) - len(part)
    return Fraction(sign * value * 10**scale) if scale >= 0 else Fraction(sign * value, 10**-scale)


def _check_size(where: str, text: str, exponent: int, exponent_limit: int, count: int, digits: int) -> None:
    """The hostile-input bounds of an exact number (its exponent, its digits), before it is built."""
    if abs(exponent) > exponent_limit:
        raise HUCError(f"{where}: exponent of {text!r} exceeds {exponent_limit} in magnitude", kind="too_large")
    if count > digits:
        raise HUCError(f"{where}: {text[:20]!r}... has more than {digits} digits", kind="too_large")


#: Integers of fewer bits than this are under Python's 4,300-digit guard on ``str`` and ``repr``
#: (14,000 bits are 4,215 digits).
_STR_GUARD_BITS = 14_000


def integer_value(digits: str) -> int:
    """Read a string of decimal digits of any length as an integer (docs/specification.md §6).

    It is the reverse of :func:`integer_text`: exact numbers are written whole.

    Parameters
    ----------
    digits : str
        Decimal digits, an optional sign first.  The callers bound the length first
        (:data:`MAX_DIGITS` for inputs).

    Returns
    -------
    int
        The integer the digits write.

    Notes
    -----
    Python's ``int`` refuses more than 4,300 digits (a guard against its quadratic conversion,
    3.4 s for a million digits in ``bench/long_numbers.py``); gmpy2, where installed, reads a
    million digits in milliseconds, otherwise ``_digits_value`` does in 0.4 s.

    Examples
    --------
    >>> integer_value("-12"), integer_value("9" * 5000) == 10**5000 - 1
    (-12, True)
    """
    if len(digits) <= 4000:  # below the guard
        return int(digits)
    try:
        import gmpy2
    except ImportError:
        text = digits.strip()
        sign = -1 if text.startswith("-") else 1
        return sign * _digits_value(text.lstrip("+-"))
    return int(gmpy2.mpz(digits.lstrip("+")))


def _digits_value(text: str) -> int:
    """The integer a string of decimal digits (no sign) writes: the two halves read apart and
    joined as ``high 10^len(low) + low``, so the work is multiplications (Karatsuba in CPython),
    where ``int`` of the whole string takes time proportional to the square of its length.

    >>> _digits_value("1" + "0" * 8999 + "7") == 10**9000 + 7
    True
    """
    powers: dict[int, int] = {}

    def read(lo: int, hi: int) -> int:
        if hi - lo <= 3000:  # (under Python's 4,300-digit guard)
            return int(text[lo:hi])
        mid = (lo + hi) // 2
        if hi - mid not in powers:
            powers[hi - mid] = 10 ** (hi - mid)
        return read(lo, mid) * powers[hi - mid] + read(mid, hi)

    return read(0, len(text))


def exact(value, where: str = "value", *, digits: int = MAX_DIGITS) -> Fraction:
    """Read one exact rational number (docs/specification.md §6), rejecting floats and anything inexact.

    Parameters
    ----------
    value : int, Fraction, Decimal, str or numbers.Rational
        The number: an integer, a ``Fraction``, a finite ``decimal.Decimal``, a string
        ``"a/b"`` or a decimal string (``"0.125"``, ``"1e-3"``; ASCII digits, an exponent of at
        most 400 in magnitude), or another exact rational (numpy's integers).
    where : str, default "value"
        The place the error message names (a JSON path or an argument).
    digits : int, default MAX_DIGITS
        The most digits of a string or ``Decimal`` (the inputs' :data:`MAX_DIGITS`; the
        conformance checker reads longer answers).

    Returns
    -------
    Fraction
        The number, exactly.

    Raises
    ------
    HUCError
        Of kind ``not_exact`` for a float (saying how to pass the decimal or the binary value
        meant), a boolean, NaN, an infinity, a zero denominator or text that is not a number; of
        kind ``too_large`` for too many digits or too large an exponent; of kind ``type`` for
        anything that is not a number.

    Examples
    --------
    >>> exact("3/8"), exact("0.125"), exact(2), exact(Fraction(1, 3))
    (Fraction(3, 8), Fraction(1, 8), Fraction(2, 1), Fraction(1, 3))
    >>> exact(0.1, "p[0]")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: p[0]: float 0.1 is not exact; pass the string '0.1' for the decimal ...
    """
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool):
        raise HUCError(f"{where}: {value!r} is a boolean, not a number", kind="not_exact")
    if isinstance(value, float):
        value = float(value)  # numpy floats print as plain floats
        if value != value or value in (float("inf"), float("-inf")):
            raise HUCError(f"{where}: {value!r} is not a finite number", kind="not_exact")
        raise HUCError(
            f"{where}: float {value!r} is not exact; pass the string '{value!r}' for the decimal "
            f"you meant, or Fraction({value!r}) for the binary value {Fraction(value)}"
        , kind="not_exact")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, str):
        return _parse_text(value, where, digits)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise HUCError(f"{where}: {value} is not a finite number", kind="not_exact")
        # a string's bounds (Decimal("1e-99999999") is 10^8 digits): a written exponent of at most 400 in
        # magnitude, after at most 4,000 fraction digits (".000e-398" is Decimal's exponent -401)
        sign, figures, exponent = value.as_tuple()
        _check_size(where, str(value), exponent, MAX_EXPONENT if exponent > 0 else MAX_EXPONENT + MAX_DIGITS,
                    len(figures), digits)
        return Fraction(value)
    if isinstance(value, _abc.Rational):  # numpy integers, other exact rationals
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, _abc.Real):  # numpy floats and other binary reals
        raise HUCError(f"{where}: {type(value).__name__} {value!r} is not exact; pass a string or a Fraction",
                       kind="not_exact")
    raise HUCError(f"{where}: expected a number, got {type(value).__name__}", kind="type")


def exact_vector(values, where: str = "value", length: int | None = None) -> tuple[Fraction, ...]:
    """Read a sequence of exact numbers, checking its length (docs/specification.md §6).

    Parameters
    ----------
    values : iterable
        The numbers, each read by :func:`exact` (text and mappings are not sequences of numbers).
    where : str, default "value"
        The place the messages name; entry ``i`` is ``{where}[i]``.
    length : int, optional
        The number of entries required; by default any.

    Returns
    -------
    tuple of Fraction
        The numbers, exactly.

    Raises
    ------
    HUCError
        Of kind ``type`` where ``values`` is not a list of numbers, of kind ``length`` for
        another length than ``length``, and as :func:`exact` for an entry.

    Examples
    --------
    >>> exact_vector(["1/4", "0.75"], "p")
    (Fraction(1, 4), Fraction(3, 4))
    >>> exact_vector([1, 2], "p", length=3)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: p: has 2 entries, expected 3
    """
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__iter__"):  # an object is not its keys
        raise HUCError(f"{where}: expected a list of numbers, got {type(values).__name__}", kind="type")
    out = tuple(exact(v, f"{where}[{i}]") for i, v in enumerate(values))
    if length is not None and len(out) != length:
        raise HUCError(f"{where}: has {len(out)} entries, expected {length}", kind="length")
    return out


def integer_text(n: int) -> str:
    """Write an integer of any size in decimal (docs/specification.md §6: exact results are written whole).

    Parameters
    ----------
    n : int
        The integer.

    Returns
    -------
    str
        Its decimal digits, a minus sign first where it is negative.

    Notes
    -----
    Python refuses to write integers of more than 4,300 digits with ``str`` (a guard against
    its quadratic conversion, 11 s for a million digits in ``bench/long_numbers.py``); an exact
    result can be far larger (a sum over 2,500 atoms with 6-decimal predictions has tens of
    thousands of digits).  gmpy2, where installed, writes a million digits in 0.06 s;
    otherwise ``_decimal_digits`` does, in 0.24 s.

    Examples
    --------
    >>> integer_text(-12), len(integer_text(10**5000)), integer_text(10**5000 + 7)[-4:]
    ('-12', 5001, '0007')
    """
    if n.bit_length() < _STR_GUARD_BITS:
        return str(n)
    try:
        import gmpy2
    except ImportError:
        return ("-" if n < 0 else "") + _decimal_digits(abs(n))
    return gmpy2.mpz(n).digits()


#: Below this many bits :func:`_decimal_digits` lets ``decimal.Decimal`` read the integer itself
#: (at most 1,205 digits: under Python's 4,300-digit guard).
_SPLIT_BITS = 4000


def _decimal_digits(n: int) -> str:
    """The decimal digits of ``n >= 0``, split in halves by powers of two, rebuilt in the
    ``decimal`` module's exact arithmetic (``hi 2^w + lo``), whose multiplication of long numbers
    is subquadratic (libmpdec's number-theoretic transform); its text is then one linear pass.
    CPython 3.11's ``str`` takes time proportional to the square of the length instead (a
    million digits: 0.24 s against 11.4 s in ``bench/long_numbers.py``).  Exact at every size:
    the context's precision is the largest there is, so no operation rounds.

    >>> _decimal_digits(10**9000 - 1) == "9" * 9000
    True
    >>> _decimal_digits(10**9000 + 10**4500) == "1" + "0" * 4499 + "1" + "0" * 4500
    True
    """
    ctx = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)
    powers: dict[int, Decimal] = {}

    def build(m: int, bits: int) -> Decimal:  # m < 2^bits
        if bits <= _SPLIT_BITS:
            return Decimal(m)
        half = bits >> 1
        hi = m >> half
        if half not in powers:
            powers[half] = ctx.power(Decimal(2), half)
        return ctx.add(ctx.multiply(build(hi, bits - half), powers[half]), build(m - (hi << half), half))

    return format(build(n, n.bit_length()), "f")


def fraction_text(x: Fraction) -> str:
    """Write an exact number as the string the JSON files use: lowest terms, any size (docs/specification.md §6).

    Parameters
    ----------
    x : Fraction or int
        The number.

    Returns
    -------
    str
        ``"num/den"`` in lowest terms, or ``"num"`` for an integer (:func:`integer_text`: no
        limit on the digits).

    Examples
    --------
    >>> fraction_text(Fraction(-2, 8)), fraction_text(Fraction(0)), fraction_text(Fraction(3))
    ('-1/4', '0', '3')
    >>> len(fraction_text(Fraction(1, 3**9000)))  # '1/' and 3^9000's floor(9000 log10 3) + 1 = 4,295 digits
    4297
    """
    x = Fraction(x)
    num = integer_text(x.numerator)
    return num if x.denominator == 1 else f"{num}/{integer_text(x.denominator)}"


def decimal_text(x, digits: int = 6) -> str:
    """A number rounded to some significant digits, for people (docs/specification.md §6).

    The exact value stays in JSON; the report of ``huc audit`` uses this.

    Parameters
    ----------
    x : Fraction or int
        The number.
    digits : int, default 6
        The significant digits shown.

    Returns
    -------
    str
        ``x`` rounded to ``digits`` significant digits, positional as Python's ``g`` format
        writes it between 1e-5 and ``10**digits``, otherwise with an exponent; ``"0"`` for 0.

    Notes
    -----
    Computed from the integers, so a number far below float64's range is still shown as it is
    (``-2 / 7^2000`` below agrees with mpmath's ``nstr(-2 / mpf(7)**2000, 6)``).

    Examples
    --------
    >>> decimal_text(Fraction(1, 3)), decimal_text(Fraction(-2, 7**2000)), decimal_text(0), decimal_text(123456789)
    ('0.333333', '-1.27336e-1690', '0', '1.23457e+08')
    >>> decimal_text(Fraction(1, 20000)), decimal_text(Fraction(999999999, 10**9))  # rounds up to 1
    ('0.00005', '1')
    """
    x = Fraction(x)
    if x == 0:
        return "0"
    n, d = abs(x.numerator), x.denominator
    e = int((n.bit_length() - d.bit_length()) * 0.30102999566398120)  # about log10(n / d)
    while True:  # the mantissa m = round(x 10^(digits - 1 - e)) has exactly `digits` digits
        k = digits - 1 - e
        m = (2 * n * 10**k + d) // (2 * d) if k >= 0 else (2 * n + d * 10**-k) // (2 * d * 10**-k)
        if m >= 10**digits:
            e += 1
        elif m < 10 ** (digits - 1):
            e -= 1
        else:
            break
    text = str(m)
    sign = "-" if x < 0 else ""
    if -5 <= e < digits:  # positional, as Python's 'g' format writes it
        if e >= 0:
            whole, frac = text[:e + 1], text[e + 1:]
        else:
            whole, frac = "0", "0" * (-e - 1) + text
        frac = frac.rstrip("0")
        return sign + whole + ("." + frac if frac else "")
    frac = text[1:].rstrip("0")
    return f"{sign}{text[0]}{'.' + frac if frac else ''}e{e:+03d}"


def shown(x, around=None, limit: int = 60) -> str:
    """An exact number as an error message shows it, in one short line (docs/specification.md §6).

    The specification asks for one clear error naming the place and the rule; a sum of a few
    2,000-digit fractions has thousands of digits, which this keeps out of the message.

    Parameters
    ----------
    x : Fraction or int
        The number.
    around : Fraction or int, optional
        A reference value (the 1 a sum should be): a long ``x`` is shown as ``around`` plus or
        minus its distance from it.
    limit : int, default 60
        The longest exact text shown as it is.

    Returns
    -------
    str
        The exact text (:func:`fraction_text`) up to ``limit`` characters; a longer one as
        ``around`` plus or minus the distance, or as ``~`` and its value, to six significant
        digits (:func:`decimal_text`), with the exact text's length.

    Examples
    --------
    >>> shown(Fraction(999, 1000), around=1), shown(1 - Fraction(1, 7**100), around=1)
    ('999/1000', '1 - 3.09169e-85 (an exact number of 171 characters)')
    >>> shown(Fraction(3, 2) + Fraction(1, 3**100))
    '~1.5 (an exact number of 99 characters)'
    """
    x = Fraction(x)
    text = fraction_text(x)
    if len(text) <= limit:
        return text
    if around is not None and x != around:
        d = x - around
        return f"{fraction_text(Fraction(around))} {'+' if d > 0 else '-'} {decimal_text(abs(d))} " \
               f"(an exact number of {len(text)} characters)"
    return f"~{decimal_text(x)} (an exact number of {len(text)} characters)"


def _repr_of(value) -> str:
    """``repr(value)``, with an exact number past Python's 4,300-digit guard (whose ``repr``
    raises ValueError) shown as ``<~value, an exact Fraction of about N digits>``, inside
    tuples, lists and dicts too.

    >>> _repr_of({"p": (Fraction(1, 3),), "n": [3**9000, 2]})
    "{'p': (Fraction(1, 3),), 'n': [<~1.23394e+4294, an exact int of about 4,295 digits>, 2]}"
    """
    if isinstance(value, Fraction) or (type(value) is int):
        bits = max(value.numerator.bit_length(), value.denominator.bit_length())
        if bits >= _STR_GUARD_BITS:
            kind = "Fraction" if isinstance(value, Fraction) else "int"
            return f"<~{decimal_text(value)}, an exact {kind} of about {int(bits * 0.30103) + 1:,} digits>"
        return repr(value)
    if isinstance(value, tuple):
        inner = ", ".join(_repr_of(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_repr_of(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_repr_of(k)}: {_repr_of(v)}" for k, v in value.items()) + "}"
    return repr(value)


def dataclass_repr(obj) -> str:
    """The ``repr`` of a result or atom dataclass (docs/specification.md §3 and §6), safe for numbers of any length.

    Parameters
    ----------
    obj : dataclass instance
        The object (its fields with ``repr=True`` are shown).

    Returns
    -------
    str
        The ``repr`` a dataclass writes, except that an exact number too long for Python's
        ``repr`` (more than 4,300 digits: an audit's witness moment can have a million) is
        shown by its value and its length, so that printing a result, or a notebook showing
        it, does not raise ValueError.

    Examples
    --------
    >>> from huc_ref.intervals import IntervalMax
    >>> dataclass_repr(IntervalMax(Fraction(1, 4), 0, 1, Fraction(-1, 4)))
    'IntervalMax(sup=Fraction(1, 4), r=0, b=1, moment=Fraction(-1, 4))'
    >>> dataclass_repr(IntervalMax(Fraction(1, 3**20000), 0, 1, Fraction(-1, 3**20000)))
    'IntervalMax(sup=<~3.75756e-9543, an exact Fraction of about 9,543 digits>, r=0, b=1, moment=<~-3.75756e-9543...>)'
    """
    parts = ", ".join(f"{f.name}={_repr_of(getattr(obj, f.name))}" for f in fields(obj) if f.repr)
    return f"{type(obj).__name__}({parts})"


def ratio(num, den, rational=Fraction):
    """``num / den`` in the type of the operands, exactly for integers (docs/specification.md §4).

    The decomposition is written once for every number type; integer subtree sums (over a
    common denominator) must divide exactly, not into a float.

    Parameters
    ----------
    num, den : int or number
        The numerator and denominator.
    rational : type, default Fraction
        The type of the quotient of two ints (``Fraction`` or gmpy2's ``mpq``).

    Returns
    -------
    number
        ``rational(num, den)`` for two ints, else ``num / den``.

    Examples
    --------
    >>> ratio(3, 6), ratio(Fraction(1, 2), 2)
    (Fraction(1, 2), Fraction(1, 4))
    """
    if isinstance(num, int) and isinstance(den, int):
        return rational(num, den)
    return num / den


#: The exact rational types the exact audit computes in, the reference first: Python's ``Fraction``
#: and gmpy2's ``mpq`` (GMP: the same numbers, faster on long ones).
RATIONAL_TYPES = ("fraction", "gmpy2")


def rational_type(name: str = "fraction", where: str = "rational"):
    """The exact rational type the engine computes in (docs/specification.md §4).

    gmpy2's ``mpq`` is an optional accelerator (``pip install gmpy2``): the same exact values,
    computed by GMP.  Results are always handed back as ``Fraction`` s.

    Parameters
    ----------
    name : {"fraction", "gmpy2"}, default "fraction"
        ``"fraction"`` (the reference) or ``"gmpy2"`` (:data:`RATIONAL_TYPES`).
    where : str, default "rational"
        The argument named in a message (``"accelerator"`` for the audit's).

    Returns
    -------
    type
        ``fractions.Fraction`` or ``gmpy2.mpq``.

    Raises
    ------
    HUCError
        Of kind ``option`` for another name, of kind ``dependency`` for ``"gmpy2"`` where it is
        not installed.

    Examples
    --------
    >>> rational_type("fraction")
    <class 'fractions.Fraction'>
    """
    if not one_of(name, RATIONAL_TYPES):
        raise HUCError(f"{where}: expected 'fraction' or 'gmpy2', got {given(name)}", kind="option")
    if name == "fraction":
        return Fraction
    try:
        from gmpy2 import mpq
    except ImportError:
        raise HUCError(f"{where}: 'gmpy2' is not installed (pip install gmpy2)", kind="dependency") from None
    return mpq


def to_fraction(x) -> Fraction:
    """Any exact rational as a ``Fraction``, the type every exact result is handed back in (docs/specification.md §4).

    Parameters
    ----------
    x : Fraction, int or gmpy2.mpq
        The number.  An ``mpq`` is already in lowest terms: it is taken as it is, without a
        second gcd.

    Returns
    -------
    Fraction
        The same number.

    Examples
    --------
    >>> to_fraction(3)
    Fraction(3, 1)
    """
    if type(x) is Fraction:
        return x
    if type(x).__name__ == "mpq":
        return _coprime(int(x.numerator), int(x.denominator))
    return Fraction(int(x.numerator), int(x.denominator))


#: Past this many bits :func:`reduced` leaves the gcd and the divisions to GMP where gmpy2 is
#: installed: CPython's (3.11) divide two n-digit numbers in time proportional to n^2, so
#: reducing a million-digit fraction took most of a minute (the audit of three atoms, 60 s).
GMP_BITS = 1 << 15


def _coprime(num: int, den: int) -> Fraction:
    """The ``Fraction`` of coprime ``num`` and ``den > 0``, without Fraction's own gcd (CPython's
    private constructors: ``_from_coprime_ints`` from 3.12, ``_normalize=False`` before)."""
    make = getattr(Fraction, "_from_coprime_ints", None)
    return make(num, den) if make else Fraction(num, den, _normalize=False)


def reduced(num, den) -> Fraction:
    """``num / den`` in lowest terms: the one division of an exact sum over a common denominator (App. F.3).

    This is Algorithm 2's witness moment, summed as integers and divided once.

    Parameters
    ----------
    num, den : int
        The numerator and the denominator (``den != 0``).

    Returns
    -------
    Fraction
        The same ``Fraction`` as ``Fraction(num, den)``.  Past :data:`GMP_BITS` bits, where
        gmpy2 is installed, GMP finds the gcd and divides (in milliseconds for a million
        digits).

    Examples
    --------
    >>> reduced(6, -4), reduced(3 * 10**5000, 4 * 10**5000)
    (Fraction(-3, 2), Fraction(3, 4))
    """
    num, den = int(num), int(den)
    if max(num.bit_length(), den.bit_length()) <= GMP_BITS:
        return Fraction(num, den)
    try:
        from gmpy2 import mpq
    except ImportError:
        return Fraction(num, den)
    return to_fraction(mpq(num, den))


def scaled_integers(values) -> tuple[list[int], int]:
    """Write rationals as integers over one common denominator ``D`` (Algorithm 2's prefix sums, App. F.3).

    Subtree sums of integers are much cheaper than sums of ``Fraction`` s (no gcd per
    addition); the audit engine sums ``values[y] * D`` and divides once per node.

    Parameters
    ----------
    values : sequence of Fraction
        The rationals.

    Returns
    -------
    numerators : list of int
        ``values[k] * D`` for each ``k``.
    D : int
        The least common denominator (1 for no values).

    Examples
    --------
    >>> scaled_integers([Fraction(1, 4), Fraction(1, 6), Fraction(7, 12)])
    ([3, 2, 7], 12)
    """
    den = lcm(*(v.denominator for v in values)) if values else 1
    return [v.numerator * (den // v.denominator) for v in values], den


def exact_sum(values) -> Fraction:
    """``sum(values)`` of exact rationals, added as integers over one common denominator (A.2).

    These are the row sums a prediction is checked by (A.2's simplex) and a distribution's
    total weight.

    Parameters
    ----------
    values : sequence of Fraction
        The rationals.

    Returns
    -------
    Fraction
        Their sum, computed by :func:`scaled_integers` rather than one ``Fraction`` addition
        (and its gcds) at a time.

    Examples
    --------
    >>> exact_sum([Fraction(1, 4), Fraction(1, 6), Fraction(7, 12)]), exact_sum([])
    (Fraction(1, 1), Fraction(0, 1))
    """
    nums, den = scaled_integers(values)
    return Fraction(sum(nums), den)


def exact_dot(xs, ys) -> Fraction:
    """``sum_k xs[k] ys[k]`` of exact rationals, as :func:`exact_sum` adds them (E.2's ``Gamma``).

    The products' numerators are added over one common denominator: an update's ``Gamma`` on
    atoms at ``p0`` (:func:`huc_ref.driver.rational_gamma`).

    Parameters
    ----------
    xs, ys : sequence of int or Fraction
        The two vectors.

    Returns
    -------
    Fraction
        The inner product (0 for empty vectors).

    Examples
    --------
    >>> exact_dot([Fraction(1, 2), Fraction(1, 3)], [Fraction(1, 4), 3]), exact_dot([], [])
    (Fraction(9, 8), Fraction(0, 1))
    """
    xs, ys = list(xs), list(ys)  # (ints and Fractions both have numerator and denominator)
    den = lcm(*(x.denominator * y.denominator for x, y in zip(xs, ys))) if xs else 1
    return Fraction(sum(x.numerator * y.numerator * (den // (x.denominator * y.denominator)) for x, y in zip(xs, ys)),
                    den)


def shared_sign(coefficients):
    """The sign of ``sum_k c_k F_k`` for every choice of positive ``F_k``, or None (docs/specification.md §4).

    Both certified arithmetics decide exactly so where a boosted prediction's linear form has
    coefficients ``c_k`` (rationals) on positive factors ``F_k`` (products of ``e^z / N``).

    Parameters
    ----------
    coefficients : iterable of Fraction
        The coefficients ``c_k``.

    Returns
    -------
    int or None
        0 where every ``c_k`` is 0, else the sign (1 or -1) of the nonzero ones where they
        share it; None where they do not (the sign depends on the ``F_k``).

    Examples
    --------
    >>> shared_sign([Fraction(0), Fraction(1, 10**301)]), shared_sign([]), shared_sign([1, -1])
    (1, 0, None)
    """
    signs = {(c > 0) - (c < 0) for c in coefficients} - {0}
    return None if len(signs) > 1 else signs.pop() if signs else 0


#: The JSON Schema of an exact number as the file formats read it (docs/specification.md §6):
#: a JSON number (read as its decimal text) or a string ``"a/b"`` or decimal; :func:`exact`
#: is the reader (it also bounds the size).
NUMBER_SCHEMA = {"oneOf": [{"type": "number"}, {"type": "string", "pattern":
                 r"^[ \t\n\r]*[+-]?([0-9]+/[0-9]+|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)[ \t\n\r]*$"}]}
