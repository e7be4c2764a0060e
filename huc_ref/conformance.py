"""The conformance checker: another implementation's answers against the golden vectors
(:mod:`huc_ref.vectors`), one verdict per vector with the reason it fails.

Exact answers must equal the expected numbers (in lowest terms); float answers must lie
within the vector's tolerance; every witness interval is recomputed exactly from the case
(its moment must be the reported one), and errors must name the expected kind.  An invalid
vector's path and message are this implementation's, given for reference and not compared:
where a document is wrong in two places at once (a node listed under two parents) either place
is right, and a JSON parser's failure has no place in the document.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

from .audit import atom_terms, interval_moment
from .errors import HUCError, deprecated, one_of, printable
from .formats import RESULT_ENGINES, as_path, load_json, read_document, result_schema
from .intervals import Interval
from .rational import MAX_DIGITS, fraction_text, shown
from .rational import exact as read_exact
from .vectors import load_vectors, vector_case

__all__ = ["SCORE_TOLERANCE", "answer_digits", "check_answers"]


# ----------------------------------------------------------------------------- the checker
#: How far a float answer's witness ends may lie from the exact scores they stand for.
SCORE_TOLERANCE = Fraction(1, 10**9)

#: A JSON number as the parser hands it over (its text): float answers write their numbers so.
_FLOAT_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")


class _Wrong(Exception):
    """A reason the answer is wrong (caught once per vector)."""


def answer_digits(vector) -> int:
    """The most digits a number of a right answer to ``vector`` can have (``huc-result/1``, whose
    exact numbers are written whole: docs/specification.md §6): twice the digits of the
    vector's case and expected result together, and at least the inputs' :data:`MAX_DIGITS`.

    A right answer's numbers are sups and moments (the expected ones, up to sign) and witness
    ends, which are atoms' scores: sums of the case's numbers' products and ratios, whose
    numerators and denominators have at most twice the case's digits.  So an exact answer
    longer than Python's 4,300-digit conversion limit is read (a sum over a few dozen atoms
    with 200-digit denominators has over ten thousand digits), and a huge number in a wrong
    answer is refused before it is read.

    Parameters
    ----------
    vector : dict
        One ``huc-vectors/1`` vector.

    Returns
    -------
    int
        The bound on the digits.

    Raises
    ------
    HUCError
        Of kind ``type``, where ``vector`` is not a dict.

    Examples
    --------
    >>> answer_digits({"case": {"atoms": [{"p": ["1/" + "3" * 5000, "1"]}]}, "expected": {}})
    10004
    """
    if not isinstance(vector, dict):
        raise HUCError(f"vector: expected a huc-vectors/1 vector (a dict), got {type(vector).__name__}", kind="type")
    return max(MAX_DIGITS, 2 * sum(ch.isdigit() for ch in json.dumps(vector)))


def _number(x, exact: bool, where: str, digits: int = MAX_DIGITS) -> Fraction:
    """A number of an answer: exact answers write lowest-terms strings (at most ``digits``
    digits), float answers JSON numbers."""
    if exact:
        if not isinstance(x, str):
            raise _Wrong(f"{where}: an exact answer writes numbers as strings in lowest terms, got {x!r}")
        try:
            value = read_exact(x, where, digits=digits)
        except HUCError as err:
            raise _Wrong(str(err)) from None
        if fraction_text(value) != x:
            raise _Wrong(f"{where}: {printable(x, 60)!r} is not written as an integer or a/b in lowest terms (write "
                         f"{printable(fraction_text(value), 60)!r})")
        return value
    if isinstance(x, bool) or not isinstance(x, (int, str)):
        raise _Wrong(f"{where}: expected a number, got {x!r}")
    if isinstance(x, str):
        if x.lstrip("+-").lower() in ("nan", "infinity", "inf"):
            raise _Wrong(f"{where}: {x} is not a finite number")
        if len(x) > 40 or not _FLOAT_TEXT.fullmatch(x):
            raise _Wrong(f"{where}: {x[:40]!r} is not a JSON number of at most 40 characters")
        mantissa, _, exponent = x.lower().partition("e")
        if exponent and abs(int(exponent)) > 400:
            raise _Wrong(f"{where}: {x!r} is outside float64's range")
    return Fraction(x)


def _check_one(vector, answer, case=None) -> str | None:
    """None if the answer is right, else the reason (``case``: the vector's, read already)."""
    try:
        return _check(vector, answer, vector_case(vector) if case is None and "case" in vector else case)
    except _Wrong as wrong:
        return str(wrong)


def _arithmetic(answer: dict) -> str:
    """The numbers an answer states (docs/specification.md §6): its ``arithmetic``, ``"exact"`` or
    ``"float64"``, or ``engine``, the field's name before it (read for one release, with a
    :class:`~huc_ref.errors.HUCDeprecationWarning`: ``"exact"``, or anything else for float64)."""
    if "arithmetic" in answer:
        if "engine" in answer:
            raise _Wrong("engine: the deprecated name of arithmetic, given beside it; give arithmetic alone")
        if not one_of(answer["arithmetic"], tuple(RESULT_ENGINES)):
            raise _Wrong(f"arithmetic: expected 'exact' or 'float64', got {printable(repr(answer['arithmetic']), 60)}")
        return answer["arithmetic"]
    if "engine" not in answer:
        raise _Wrong("arithmetic: missing (a huc-result/1 document requires it)")
    deprecated("a huc-result/1 answer's \"engine\" field", "\"arithmetic\": \"exact\" or \"float64\"", stacklevel=2)
    return "exact" if answer["engine"] == "exact" else "float64"


def _known_fields(answer: dict) -> str:
    """Refuse a field the published schema does not define (``additionalProperties: false``) or
    requires and is absent, at the top, in ``uc``, ``huc`` and each candidate row, so that an
    answer the checker passes fits the schema (a row with no ``node`` was read as the UC row, one
    with no ``interval`` as a zero sup's); the fields' values are checked where they are read.  A
    float answer's fields are the float64 schema's (``near_ties`` among them).  Returns the
    answer's arithmetic (:func:`_arithmetic`)."""
    arithmetic = _arithmetic(answer)
    schema = result_schema(arithmetic)
    fields = schema["properties"]
    places = [("", answer, schema)]
    places += [(f"{f}.", answer[f], fields[f]) for f in ("uc", "huc") if isinstance(answer.get(f), dict)]
    rows = answer.get("candidates")
    places += [(f"candidates[{k}].", r, fields["candidates"]["items"])
               for k, r in enumerate(rows if isinstance(rows, list) else []) if isinstance(r, dict)]
    for where, doc, part in places:
        extra = next((k for k in doc if k not in part["properties"]), None)
        if extra is not None:
            raise _Wrong(f"{where}{printable(extra, 80)}: unknown field of a huc-result/1 document")
        missing = next((k for k in part["required"] if k not in doc), None)
        if missing is not None:
            raise _Wrong(f"{where}{missing}: missing (a huc-result/1 document requires it)")
    return arithmetic


def _check(vector, answer, case) -> None:
    if "error" in vector:
        if not isinstance(answer, dict) or answer.get("format") != "huc-error/1":
            raise _Wrong("an invalid input needs a huc-error/1 answer")
        if answer.get("kind") != vector["error"]["kind"]:
            raise _Wrong(f"error kind {answer.get('kind')!r}, expected {vector['error']['kind']!r}")
        return None
    expected = vector["expected"]
    if not isinstance(answer, dict) or answer.get("format") != "huc-result/1":
        raise _Wrong("not a huc-result/1 document")
    arithmetic = _known_fields(answer)
    if answer["case"] != case.id:  # (a case of one's own may have no id: read_case names it "case")
        raise _Wrong(f"case: {answer['case']!r}, expected {case.id!r}")
    exact = arithmetic == "exact"  # (else a float answer, compared within the tolerance)
    tol = Fraction(0) if exact else Fraction(vector["tolerance"]["absolute"])
    if answer.get("relevant_nodes") != expected["relevant_nodes"]:
        raise _Wrong(f"relevant_nodes {answer.get('relevant_nodes')} != {expected['relevant_nodes']}")
    rows = answer.get("candidates")
    keys = [(w["subgroup"], w["utility"], w["node"]) for w in expected["candidates"]]
    if not isinstance(rows, list) or len(rows) != len(keys):
        raise _Wrong(f"expected {len(keys)} candidate rows")
    got_keys = [(r.get("subgroup"), r.get("utility"), r.get("node")) if isinstance(r, dict) else None for r in rows]
    if got_keys != keys:
        k = next(i for i, (g, w) in enumerate(zip(got_keys, keys)) if g != w)
        order = " (rows go by subgroup, then utility, then null before the nodes in tree pre-order)" \
            if sorted(map(str, got_keys)) == sorted(map(str, keys)) else ""
        raise _Wrong(f"candidates[{k}]: is the row {got_keys[k]}, expected {keys[k]}{order}")
    digits = answer_digits(vector)
    for k, (got, want) in enumerate(zip(rows, expected["candidates"])):
        _check_row(case, got, want["sup"], "sup", exact, tol, f"candidates[{k}] {keys[k]}", digits)
    for field in ("uc", "huc"):
        got = answer.get(field)
        if not isinstance(got, dict):
            raise _Wrong(f"{field}: missing")
        if field == "uc" and got.get("node") is not None:
            raise _Wrong(f"uc: names node {got.get('node')!r}; the UC witness has no node")
        key = (got.get("subgroup"), got.get("utility"), got.get("node") if field == "huc" else None)
        # a witness names a row of its own kind (UC: node null; HUC: a relevant node, Def. 3.2), or no
        # row at all where the sup is 0 (then every row attains it, and there may be no HUC row)
        if key != (None, None, None) or expected[field]["value"] != "0":  # (lowest terms)
            if field == "huc" and key[2] is None and key[1] is not None:
                raise _Wrong(f"huc: names no node; the HUC witness is a node's row (Def. 3.2), not {key}, "
                             f"the UC row")
            if key not in keys:
                raise _Wrong(f"{field}: {key} is not a candidate row of this case")
        _check_row(case, got, expected[field]["value"], "value", exact, tol, field, digits)


def _close(got: Fraction, want: Fraction, tol: Fraction, what: str):
    if abs(got - want) > tol:
        raise _Wrong(f"{what} {shown(got) if tol == 0 else repr(float(got))} differs from "
                     f"{shown(want)} by {float(abs(got - want)):.3g}"
                     + (f" (tolerance {float(tol):g})" if tol else ""))


def _check_row(case, row, want, field, exact, tol, where, digits) -> None:
    """A row's sup (or value) against the expected one, and its own witness recomputed."""
    sup = _number(row.get(field), exact, f"{where}.{field}", digits)
    _close(sup, read_exact(want, digits=digits), tol, f"{where}: {field}")
    moment = _number(row.get("moment"), exact, f"{where}.moment", digits)
    _close(abs(moment), sup, tol, f"{where}: |moment|")
    interval = row.get("interval")
    if interval is None:
        if sup > tol:
            raise _Wrong(f"{where}: a positive sup needs a witness interval")
        return
    if not isinstance(interval, list) or len(interval) != 2:
        raise _Wrong(f"{where}: interval must be [lo, hi] or null")
    if sup == 0:
        raise _Wrong(f"{where}: a zero sup has the empty interval (null), not {interval}")
    # a float answer's witness end may be an exact score, "a/b" (where no float lies between it and a neighbour)
    lo, hi = (_number(x, exact or (isinstance(x, str) and "/" in x), f"{where}.interval", digits) for x in interval)
    ends = ", ".join(printable(str(x), 60) for x in interval)
    if lo > hi:
        raise _Wrong(f"{where}: interval [{ends}] is reversed")
    if row.get("utility") not in case.utilities:
        raise _Wrong(f"{where}: unknown utility {row.get('utility')!r}")
    if row.get("subgroup") not in case.distribution.subgroups:
        raise _Wrong(f"{where}: unknown subgroup {row.get('subgroup')!r}")
    recomputed = _witness_moment(case, row, lo, hi, moment, exact, tol)
    if recomputed is not None:
        raise _Wrong(f"{where}: the witness [{ends}] has moment {recomputed}, the answer says "
                     f"{printable(str(row.get('moment')), 60)}")


def _witness_moment(case, row, lo, hi, moment, exact, tol) -> str | None:
    """None if the witness's moment is its recomputed one, else the recomputed one (as text).

    Exact answers: the moment over the closed interval ``[lo, hi]``.  Float answers: their
    ends are float scores (or exact ones, written ``"a/b"``, where no float separates a score
    from its neighbour), which may differ from the exact scores they stand for by rounding,
    so the interval is taken as the engine saw it: the witness is accepted when for some
    exact scores ``l`` within :data:`SCORE_TOLERANCE` of ``lo`` and ``r`` within it of ``hi``,
    the moment over ``[l, r]`` is within the tolerance of the answer's.  This accepts every
    correct float answer (its atoms are exactly those of some such ``[l, r]``) and no moment
    that no interval near the stated ends has.
    """
    utility, node = case.utilities[row["utility"]], row.get("node")
    if node is not None and node not in case.tree.nodes:
        return f"(none: {node!r} is not a node)"
    if exact:
        got = interval_moment(case.distribution, utility, row["subgroup"], Interval(lo, hi), node)
        return None if got == moment else shown(got)
    scores = sorted({t.score for t in atom_terms(case.distribution, utility, ())})
    ends = [[s for s in scores if abs(s - x) <= SCORE_TOLERANCE] for x in (lo, hi)]
    tried = None
    for left in ends[0]:
        for right in ends[1]:
            if left <= right:
                tried = interval_moment(case.distribution, utility, row["subgroup"], Interval(left, right), node)
                if abs(tried - moment) <= tol:
                    return None
    if tried is None:
        return f"(none: no atom's score lies within {float(SCORE_TOLERANCE):g} of both ends)"
    return repr(float(tried))


def check_answers(answers: Path, directory: Path | None = None) -> tuple[list[tuple[str, str | None]], int]:
    """Check ``answers/<id>.json`` for every vector: ``([(id, reason or None)], failures)`` (docs/specification.md §6).

    Parameters
    ----------
    answers : str or path-like
        The folder of answers, one ``<id>.json`` (a ``huc-result/1`` or ``huc-error/1``
        document) per vector.
    directory : str or path-like, optional
        The folder of vectors; by default this tree's (:func:`huc_ref.vectors.load_vectors`).

    Returns
    -------
    report : list of (str, str or None)
        Each vector's id and the reason its answer fails (a missing or unreadable file too), or
        None where it passes.
    failures : int
        The number of answers that fail.

    Raises
    ------
    HUCError
        Of kind ``file``, where ``answers`` is not a directory; and where the vectors cannot be
        read.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     report, failures = check_answers(Path(out))  # an empty directory: every answer missing
    >>> failures == len(report), report[0][1]
    (True, 'no answer file')
    """
    answers = as_path(answers, "answers")
    directory = None if directory is None else as_path(directory, "vectors")
    if not answers.is_dir():
        raise HUCError(f"answers: {str(answers)!r} is not a directory", kind="file")
    report = []
    for v in load_vectors(directory):
        path = answers / f"{v['id']}.json"
        if not path.exists():
            report.append((v["id"], "no answer file"))
            continue
        if path.is_symlink() or not path.is_file():
            report.append((v["id"], "the answer is not a regular file (a directory, link, device or pipe)"))
            continue
        case = vector_case(v) if "case" in v else None  # (outside the answer's try: the vector's own)
        try:
            reason = _check_one(v, load_json(read_document(path, "answer")), case)
        except HUCError as err:
            reason = f"unreadable answer: {err}"
        except OSError as err:
            reason = f"unreadable answer: {err.strerror}"
        report.append((v["id"], reason))
    return report, sum(1 for _, r in report if r)
