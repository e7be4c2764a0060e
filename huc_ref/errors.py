"""The one exception of huc-ref.

Every rejected input raises :class:`HUCError` (a :class:`ValueError`) whose message
names the place and the rule, e.g. ``atoms[3].p: sums to 999/1000, not 1``.  It also
carries the place as :attr:`HUCError.path` and the rule broken as :attr:`HUCError.kind`
(one of :data:`ERROR_KINDS`), which ``huc audit --json`` writes as a ``huc-error/1``
document and the golden vectors' invalid cases expect.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from numbers import Integral

__all__ = ["HUCError", "ERROR_KINDS", "ARGUMENT_KINDS", "classify", "printable", "given", "sized", "is_integer",
           "one_of", "check_name", "check_names", "MAX_NAME_LENGTH", "HUCDeprecationWarning", "deprecated"]

#: The kinds of bad input (the catalogue of the invalid golden vectors).
ERROR_KINDS = {
    "json": "not a JSON document, or an object with a repeated key",
    "format": "the format field is not huc-case/1",
    "missing_field": "a required field is absent",
    "unknown_field": "a field the format does not define",
    "type": "a field has the wrong JSON type",
    "not_exact": "a number that is not an exact integer, a/b or decimal (floats in the API, NaN, Infinity, text)",
    "too_large": "a number with too many digits or too large an exponent",
    "length": "a vector of the wrong length",
    "probability_sum": "a prediction, label law or the weights do not sum to exactly 1",
    "nonpositive": "a prediction entry or weight that is zero or negative, or a negative law entry",
    "range": "a utility or subgroup value outside [-1, 1]",
    "tree": "a malformed tree: cycle, two parents, repeated child, detached part",
    "labels": "labels are not exactly the leaves (missing, extra, repeated, internal)",
    "unknown_kind": "an unknown utility kind",
    "reference": "a name that does not exist (node, label)",
    "structure": "a structural rule of a utility (ancestor-closed S, k in 1..K, per-atom row count)",
    "invalid": "any other rule (the message says which)",
}

#: The kinds of bad arguments, files and calls outside a case document (the API and the command line).
ARGUMENT_KINDS = {
    "option": "an argument or command-line option outside its allowed values, or options that do not go together",
    "float_range": "a float64 input that is NaN, infinite, negative, subnormal or beyond float64 (the fast path)",
    "file": "a path that is not a readable regular file, a folder that is not one, an unknown file type",
    "dependency": "an optional package that is not installed (numba, gmpy2, pyarrow, matplotlib)",
    "state": "a call out of order (a model used before it is fitted, a p-value of an audit without null draws)",
    "undecided": "a comparison certified arithmetic cannot decide at the precision allowed (it refuses to guess)",
    "internal": "a guard the paper proves unreachable (e.g. Lemma E.4's Lambda > 0) was reached: please report it",
}
ERROR_KINDS.update(ARGUMENT_KINDS)

# The rule of a message, read from its wording (first match wins); the place is the text
# before the first ': '.  Every raise site in huc_ref passes kind= explicitly (tests/test_robustness.py
# checks it); the wording is the fallback for errors built elsewhere (a caller's own HUCError).
_RULES = [
    ("json", r"^not valid JSON|appears twice in one JSON object"),
    ("format", r"^format: expected"),
    ("unknown_kind", r"unknown utility kind"),
    ("unknown_field", r"unknown field"),
    ("missing_field", r": missing"),
    ("too_large", r"exceeds \d+ in magnitude|has more than \d+ digits|more than max_digits"),
    ("not_exact", r"is not a finite number|is not an exact number|is a boolean, not a number|is not exact"),
    ("probability_sum", r"sums? to .*, not 1"),
    ("nonpositive", r": is 0;|: is negative|must be positive"),
    ("range", r"outside \[-1, 1\]"),
    ("length", r"has \d+ entries, expected \d+"),
    ("labels", r"^labels(\[\d+\])?: "),
    ("tree", r"^tree[.:\[]"),
    ("reference", r"is not a label|is not a node of the tree"),
    ("type", r": expected (a JSON object|an object|a list|a string|an integer)"),
    ("structure", r"has \d+ rows, but there are|ancestor-closed|must be an integer from|listed twice|"
                  r"at least one utility|exactly one of|nested"),
]


def classify(message: str) -> tuple[str, str]:
    """The rule and the place an error message names (docs/specification.md §6).

    A bad case file gets one error naming the path inside the document; this reads both back
    from the message's wording.

    Parameters
    ----------
    message : str
        An error message, ``"<place>: <what is wrong>"``.

    Returns
    -------
    kind : str
        The rule broken, one of :data:`ERROR_KINDS` (the first whose wording matches;
        ``"invalid"`` where none does).
    path : str
        The place: the text before the first ``": "``, or ``""`` where there is none.

    Examples
    --------
    >>> classify("atoms[3].p: sums to 999/1000, not 1")
    ('probability_sum', 'atoms[3].p')
    >>> classify("not valid JSON: Expecting value (line 1, column 1)")
    ('json', 'not valid JSON')
    """
    path = message.split(": ", 1)[0] if ": " in message else ""
    for kind, pattern in _RULES:
        if re.search(pattern, message):
            return kind, path
    return "invalid", path


def printable(text: str, limit: int = 200) -> str:
    r"""Text made safe to print on a terminal (docs/specification.md §6's messages).

    Names from input pass through this before they are printed, so a case cannot forge report
    lines or clear a screen.

    Parameters
    ----------
    text : str
        The text (anything else is shown as its ``str``).
    limit : int, default 200
        The most characters kept; longer text is cut, saying how long it was.

    Returns
    -------
    str
        ``text`` with every character that is not printable (a newline, an escape sequence's
        ``\x1b``, a lone surrogate, a Unicode space) written as its Python escape, and cut
        after ``limit`` characters with ``"... (N characters)"``.

    Examples
    --------
    >>> printable("u\nhuc: ok\x1b[2J"), printable("a" * 30, limit=10)
    ('u\\nhuc: ok\\x1b[2J', 'aaaaaaaaaa... (30 characters)')
    >>> printable("\ud800")
    '\\ud800'
    """
    out = "".join(ch if ch.isprintable() else ch.encode("unicode_escape", "backslashreplace").decode("ascii")
                  for ch in str(text)[: limit + 1])
    return out[:limit] + f"... ({len(text)} characters)" if len(text) > limit else out


def given(value, limit: int = 200) -> str:
    """A caller's value as an error message shows it (docs/specification.md §6).

    The specification asks for "one clear error naming the path"; this is how the value in it
    is written, whatever it is.

    Parameters
    ----------
    value : object
        The value to show: anything a caller may pass.
    limit : int, default 200
        The most characters of its ``repr`` kept (:func:`printable`).

    Returns
    -------
    str
        Its ``repr`` made :func:`printable`, except where ``repr`` itself fails or floods: an
        integer past Python's 4,300-digit limit on integer text is shown by its bits, an array
        by its shape, and a numpy scalar as the Python number it holds.

    Examples
    --------
    >>> import numpy as np
    >>> given("gpu"), given(10**5000), given(2.5), given(np.float64(0.5)), given(np.zeros(3))
    ("'gpu'", 'an integer of 16610 bits', '2.5', '0.5', 'an array of shape (3,)')
    """
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):  # numpy's scalars: 0.5, not np.float64(0.5)
        value = value.item()
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 192:
        return f"an integer of {value.bit_length()} bits"
    if getattr(value, "ndim", 0):  # (numpy's arrays: repr prints them whole)
        return f"an array of shape {tuple(value.shape)}"
    return printable(repr(value), limit)


def sized(values, where: str, expected: str):
    """Check that a value is a sequence with a length, as the array entry points take (Sec. 2.1, A.2).

    The array entry points take one value per sample or label; this refuses anything else in
    one message.

    Parameters
    ----------
    values : object
        The value to check: a list, tuple or array is accepted; text or a mapping is not.
    where : str
        The place the message names (an argument's name).
    expected : str
        What the message says was expected (``"two numbers"``).

    Returns
    -------
    sequence
        ``values`` itself.

    Raises
    ------
    HUCError
        Of kind ``length``, ``{where}: expected {expected}, got <type>``, where ``values`` is not
        a sequence with a length (or is text or a mapping).

    Examples
    --------
    >>> sized([1, 2], "w", "two numbers")
    [1, 2]
    >>> sized(3, "w", "two numbers")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: w: expected two numbers, got int
    """
    if isinstance(values, (str, bytes, Mapping)) or not (hasattr(values, "__len__") and hasattr(values, "__getitem__")):
        raise HUCError(f"{where}: expected {expected}, got {type(values).__name__}", kind="length")
    return values


def is_integer(value) -> bool:
    """Whether a value is an integer count, such as Theorem 3.5's update cap or Sec. 2.2's ``k``.

    Parameters
    ----------
    value : object
        The value to test.

    Returns
    -------
    bool
        True for Python's and numpy's integers (``numbers.Integral``), False for a boolean and
        anything else.

    Notes
    -----
    Where an argument must be an integer, it is then used as ``int(value)``: a numpy integer
    wraps at 2^63 and JSON does not write it.

    Examples
    --------
    >>> is_integer(3), is_integer(True), is_integer(3.0)
    (True, False, False)
    """
    return isinstance(value, Integral) and not isinstance(value, bool)


def one_of(value, choices) -> bool:
    """Whether a value is one of some option names, e.g. Algorithm 1's ``huc``/``uc`` or App. F.3's engines.

    Parameters
    ----------
    value : object
        The value a caller passed.
    choices : collection of str
        The option names allowed.

    Returns
    -------
    bool
        ``value in choices`` for a string ``value``; False for anything else, which is never
        compared elementwise (``np.array([1]) in ("a",)`` asks the truth of an array).

    Examples
    --------
    >>> one_of("fast", ("exact", "fast")), one_of(["fast"], ("exact", "fast"))
    (True, False)
    """
    return isinstance(value, str) and value in choices


#: The longest name accepted (a node, label, utility, subgroup or case id): long enough for the
#: nodes of ``LabelTree.from_paths``, which are path prefixes (20,000 parts are tested); names
#: are cut when printed (:func:`printable`), so a long one never floods a terminal.
MAX_NAME_LENGTH = 1_000_000


def check_name(name, where: str, kind: str = "type") -> str:
    r"""Check that a value is a usable name of a node, label, utility, subgroup or case (docs/specification.md §6).

    Parameters
    ----------
    name : object
        The name to check: a non-empty string of at most :data:`MAX_NAME_LENGTH` printable
        characters (no control characters, no lone surrogates, which no UTF-8 output can hold,
        no Unicode spaces but the ASCII one).
    where : str
        The place the message names.
    kind : str, default "type"
        The error's kind (:data:`ERROR_KINDS`) where ``name`` is not a non-empty string at all.

    Returns
    -------
    str
        ``name`` itself.

    Raises
    ------
    HUCError
        One error naming the place: of ``kind`` where ``name`` is not a non-empty string, of
        kind ``too_large`` where it is longer than :data:`MAX_NAME_LENGTH`, of kind ``type``
        where it holds a character that is not printable.

    Examples
    --------
    >>> check_name("Maine Coon", "labels[0]")
    'Maine Coon'
    >>> check_name("y\ud800", "labels[0]")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: labels[0]: 'y\ud800' is not a name: names are printable text (no control ...
    """
    if not isinstance(name, str) or not name:
        raise HUCError(f"{where}: must be a non-empty string, got {given(name, 80)}", kind=kind)
    if len(name) > MAX_NAME_LENGTH:
        raise HUCError(f"{where}: a name of {len(name)} characters; at most {MAX_NAME_LENGTH}", kind="too_large")
    if not name.isprintable():
        raise HUCError(f"{where}: {printable(repr(name), 80)} is not a name: names are printable text (no control "
                       "characters, lone surrogates or special spaces)", kind="type")
    return name


def check_names(names, where: str) -> list:
    """Check a set of names, such as subgroups or columns: each a name, none twice (docs/specification.md §6).

    Parameters
    ----------
    names : iterable of str
        The names, each checked by :func:`check_name`; read once, in linear time.
    where : str
        The place the message names; the ``i``-th name is ``{where}[i]``.

    Returns
    -------
    list of str
        ``names`` as a list.

    Raises
    ------
    HUCError
        Naming the first name that is not one (:func:`check_name`), or (kind ``structure``) the
        first that is listed twice.

    Examples
    --------
    >>> check_names(["all", "dark"], "subgroups")
    ['all', 'dark']
    >>> check_names(["all", "all"], "subgroups")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: subgroups[1]: 'all' is listed twice
    """
    seen = set()
    for i, name in enumerate(names):
        check_name(name, f"{where}[{i}]")
        if name in seen:
            raise HUCError(f"{where}[{i}]: {printable(repr(name), 80)} is listed twice", kind="structure")
        seen.add(name)
    return list(names)


class HUCError(ValueError):
    """Bad input to huc-ref: one error whose message names the place and the rule broken (docs/specification.md §6).

    Parameters
    ----------
    message : str
        ``"<place>: <what is wrong>"``, e.g. ``"atoms[3].p: sums to 999/1000, not 1"``.
    kind : str, optional
        The rule broken, one of :data:`ERROR_KINDS`; by default read from the message's
        wording (:func:`classify`).
    path : str, optional
        The place; by default the message's text before the first ``": "``.

    Examples
    --------
    >>> try:
    ...     raise HUCError("atoms[0].p: sums to 999/1000, not 1")
    ... except ValueError as err:
    ...     print(err, "|", err.kind, "|", err.path)
    atoms[0].p: sums to 999/1000, not 1 | probability_sum | atoms[0].p
    """

    def __init__(self, message: str, *, kind: str | None = None, path: str | None = None):
        super().__init__(message)
        derived_kind, derived_path = classify(str(message))
        #: the rule broken, one of :data:`ERROR_KINDS`
        self.kind = kind or derived_kind
        #: the place: a JSON path inside the document, or an argument's name
        self.path = derived_path if path is None else path

    def to_json(self) -> dict:
        """The ``huc-error/1`` document of this error (docs/specification.md §6).

        Returns
        -------
        dict
            ``{"format": "huc-error/1", "kind", "path", "message"}``: what ``huc audit --json``
            prints on bad input.

        Examples
        --------
        >>> HUCError("atoms: expected a list").to_json()
        {'format': 'huc-error/1', 'kind': 'type', 'path': 'atoms', 'message': 'atoms: expected a list'}
        """
        return {"format": "huc-error/1", "kind": self.kind, "path": self.path, "message": str(self)}


class HUCDeprecationWarning(DeprecationWarning):
    """A spelling of an argument, option or document field that is read for one release more,
    then refused; the message names the spelling that replaces it (docs/specification.md §6's
    documents, §3-§4's choices of numbers).  ``huc`` says these once the command has run, in its
    options' words.

    Examples
    --------
    >>> issubclass(HUCDeprecationWarning, DeprecationWarning)
    True
    """


def deprecated(old: str, new: str, stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated and ``new`` replaces it (a :class:`HUCDeprecationWarning`,
    pointing ``stacklevel`` frames up; docs/specification.md §3-§4's choices of numbers).

    Parameters
    ----------
    old : str
        The deprecated spelling, as the caller wrote it (``"engine='fast'"``).
    new : str
        The spelling that replaces it.
    stacklevel : int, default 3
        The frame the warning points at (the caller of the public function).

    Examples
    --------
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     deprecated("engine='fast'", "arithmetic='float64'")
    >>> str(seen[0].message), seen[0].category.__name__
    ("engine='fast' is deprecated; use arithmetic='float64'", 'HUCDeprecationWarning')
    """
    warnings.warn(f"{old} is deprecated; use {new}", HUCDeprecationWarning, stacklevel=stacklevel)
