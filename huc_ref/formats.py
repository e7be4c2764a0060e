"""The file formats, reader, writer and JSON Schema side by side: ``huc-case/1`` in,
``huc-result/1`` and ``huc-boost/1`` out (docs/specification.md §6).  The writers are the
results' own ``to_json`` (:mod:`huc_ref.results`); the schemas are published as package data.

Everything an audit needs travels in one JSON document, so any implementation in any
language can be checked against this one.  Numbers are exact: integers, ``"a/b"`` or
decimal strings; JSON numbers with a fraction part are read as exact decimals (the
parser hands their text over, never a binary float).  A bad document raises one
:class:`HUCError` naming the path inside it, e.g. ``atoms[3].p: sums to 999/1000, not 1``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .distribution import FiniteDistribution
from .errors import HUCError, check_name, deprecated, given, printable
from .rational import MAX_DIGITS, NUMBER_SCHEMA, fraction_text
from .results import AuditResult
from .tree import LabelTree, label_names
from .utilities import KINDS, PerAtom, utility_from_json, utility_schema

__all__ = ["Case", "read_case", "load_json", "dumps", "utility_from_json", "case_schema", "result_schema",
           "boost_schema", "model_schema", "schema_dir", "read_array", "read_columns", "class_indices",
           "read_model_spec", "read_spec", "spec_schema", "csv_cell", "header_name",
           "ARRAY_SUFFIXES", "as_path", "is_dataset", "ParquetDataset", "parquet_dataset"]

CASE_FORMAT = "huc-case/1"
RESULT_FORMAT = "huc-result/1"
BOOST_FORMAT = "huc-boost/1"
MODEL_FORMAT = "huc-model/1"


def _no_duplicates(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise HUCError(f"the key {key!r} appears twice in one JSON object", kind="json")
        out[key] = value
    return out


def _parse_int(text: str):
    # Over MAX_DIGITS the text is kept, and rejected with its JSON path by exact().
    return int(text) if len(text) <= MAX_DIGITS else text


#: The largest document read (bytes): a case of a million atoms is far smaller; ``/dev/zero``
#: or a mistaken file is refused at once instead of filling memory.
MAX_DOCUMENT_BYTES = 256 * 2**20


def as_path(path, what: str) -> Path:
    """``path`` (a ``str`` or ``os.PathLike``) as a :class:`~pathlib.Path`, or one HUCError naming
    ``what`` (specification §6's files are named by paths).

    Parameters
    ----------
    path : str or os.PathLike
        The path.
    what : str
        What the path names, for the message.

    Returns
    -------
    Path
        ``Path(path)``.

    Raises
    ------
    HUCError
        Of kind ``file``, for anything else.

    Examples
    --------
    >>> as_path("cases/d1.json", "case file").name
    'd1.json'
    >>> as_path(None, "answers")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: answers: expected a path (a str or pathlib.Path), got NoneType
    """
    if not isinstance(path, (str, os.PathLike)):
        raise HUCError(f"{what}: expected a path (a str or pathlib.Path), got {type(path).__name__}", kind="file")
    return Path(path)


def read_document(path: Path, what: str = "file") -> bytes:
    """The bytes of a regular file, at most :data:`MAX_DOCUMENT_BYTES`, read in one bounded pass;
    a directory, symbolic link, device or pipe is refused before anything is read.

    >>> read_document(Path("/dev/zero"))
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: cannot read file '/dev/zero': not a regular file (a device); give the path ...
    """
    import stat
    try:
        info = path.lstat()
    except OSError as err:
        raise HUCError(f"cannot read {what} {printable(str(path), 200)!r}: {err.strerror}", kind="file") from None
    if not stat.S_ISREG(info.st_mode):
        kind = ("a directory" if stat.S_ISDIR(info.st_mode) else "a symbolic link" if stat.S_ISLNK(info.st_mode)
                else "a pipe" if stat.S_ISFIFO(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode)
                else "a device")
        raise HUCError(f"cannot read {what} {printable(str(path), 200)!r}: not a regular file ({kind}); "
                       "give the path of a JSON document", kind="file")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as err:
        raise HUCError(f"cannot read {what} {printable(str(path), 200)!r}: {err.strerror}", kind="file") from None
    if len(data) > MAX_DOCUMENT_BYTES:
        raise HUCError(f"cannot read {what} {printable(str(path), 200)!r}: larger than {MAX_DOCUMENT_BYTES} bytes "
                       "(huc_ref.formats.MAX_DOCUMENT_BYTES)", kind="too_large")
    return data


def load_json(text: str | bytes, floats: bool = False):
    """Parse JSON exactly: fractional numbers stay decimal text, NaN/Infinity stay text; with
    ``floats=True`` (documents of float64 numbers, ``huc-model/1``) fractional numbers are floats
    and NaN or Infinity is refused (docs/specification.md §6).

    Parameters
    ----------
    text : str or bytes
        The JSON text.
    floats : bool, default False
        Read fractional numbers as floats and refuse NaN and Infinity.

    Returns
    -------
    object
        The parsed document: integers as ``int`` (over ``MAX_DIGITS`` digits as their text),
        fractional numbers as their text (or floats).

    Raises
    ------
    HUCError
        Of kind ``json``, for text that is not JSON, a key twice in one object, or (``floats``)
        NaN or Infinity.

    Examples
    --------
    >>> load_json('{"p": [0.1, 2, NaN]}')
    {'p': ['0.1', 2, 'NaN']}
    >>> load_json('{"alpha": NaN}', floats=True)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: not valid JSON: NaN is not a number (a float64 document holds finite numbers)
    """
    def constant(name):
        raise HUCError(f"not valid JSON: {name} is not a number (a float64 document holds finite numbers)",
                       kind="json")
    try:
        return json.loads(text, parse_float=float if floats else str, parse_int=_parse_int,
                          parse_constant=constant if floats else str, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as err:
        raise HUCError(f"not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})", kind="json") from None
    except (UnicodeDecodeError, RecursionError) as err:
        raise HUCError(f"not valid JSON: {type(err).__name__}", kind="json") from None


def dumps(doc) -> str:
    """The project's one JSON layout: two-space indent, keys in insertion order, final newline
    (docs/specification.md §6).

    Parameters
    ----------
    doc : object
        A JSON-serialisable document.

    Returns
    -------
    str
        Its text.

    Examples
    --------
    >>> dumps({"value": "1/4", "interval": None})
    '{\\n  "value": "1/4",\\n  "interval": null\\n}\\n'
    """
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _require(obj, key, where, kind=None):
    if not isinstance(obj, Mapping):
        raise HUCError(f"{where}: expected an object", kind="type")
    if key not in obj:
        raise HUCError(f"{where + '.' if where else ''}{key}: missing", kind="missing_field")
    value = obj[key]
    if kind is not None and not isinstance(value, kind):
        names = {str: "a string", list: "a list", dict: "an object", int: "an integer"}
        raise HUCError(f"{where + '.' if where else ''}{key}: expected {names.get(kind, kind)}", kind="type")
    return value


@dataclass(frozen=True)
class Case:
    """A parsed ``huc-case/1`` document (docs/specification.md §6): a distribution and named
    utilities on one tree.

    Parameters
    ----------
    id : str
        The case's name.
    description : str
        What it is, for a person.
    tree : LabelTree
        The label tree.
    distribution : FiniteDistribution
        The atoms, on ``tree``.
    utilities : dict of str to Utility
        The utilities by name, on ``tree``.

    Examples
    --------
    >>> case = read_case({"format": "huc-case/1", "id": "d1", "tree": {"root": "r", "children": {"r": ["a", "b"]}},
    ...                   "labels": ["a", "b"], "utilities": {"u": {"kind": "table", "values": [0, 1]}},
    ...                   "atoms": [{"p": ["1/2", "1/2"], "label": "b"}]})
    >>> case.id, case.tree.labels, list(case.utilities), case.distribution.n
    ('d1', ('a', 'b'), ['u'], 1)
    """

    id: str
    description: str
    tree: LabelTree
    distribution: FiniteDistribution
    utilities: dict

    def audit(self, **options) -> AuditResult:
        """Audit the case (:func:`huc_ref.audit`, with its ``options``: ``arithmetic="float64"`` for float64;
        docs/specification.md §6).

        Parameters
        ----------
        **options
            :func:`huc_ref.audit`'s keyword arguments.

        Returns
        -------
        AuditResult
            The audit.

        Examples
        --------
        >>> case = read_case({"format": "huc-case/1", "tree": {"root": "r", "children": {"r": ["a", "b"]}},
        ...                   "labels": ["a", "b"], "utilities": {"u": {"kind": "table", "values": [0, 1]}},
        ...                   "atoms": [{"p": ["1/2", "1/2"], "eta": ["1/4", "3/4"]}]})
        >>> case.audit().uc.sup, case.result_json()["huc"]["value"], case.to_json()["atoms"][0]["eta"]
        (Fraction(1, 4), '1/4', ['1/4', '3/4'])
        """
        from .engines import audit  # (reading and writing documents does not need the engines)
        return audit(self.distribution, self.utilities, **options)

    def result_json(self) -> dict:
        """The ``huc-result/1`` document of this case (docs/specification.md §6), from the exact engine.

        Returns
        -------
        dict
            The document, ``case`` this case's id.

        Examples
        --------
        >>> case = read_case({"format": "huc-case/1", "tree": {"root": "r", "children": {"r": ["a", "b"]}},
        ...                   "labels": ["a", "b"], "utilities": {"u": {"kind": "table", "values": [0, 1]}},
        ...                   "atoms": [{"p": ["1/2", "1/2"], "label": "b"}]})
        >>> doc = case.result_json()
        >>> doc["format"], doc["uc"]["value"], doc["uc"]["interval"]  # |1 - 1/2| at the score 1/2
        ('huc-result/1', '1/2', ['1/2', '1/2'])
        """
        return self.audit().to_json(self.id)

    def to_json(self) -> dict:
        """The case as a ``huc-case/1`` document (numbers as exact strings; docs/specification.md §6).

        A number with more digits than :func:`read_case` reads (``rational.MAX_DIGITS``), as a
        prediction renormalised exactly (``renormalize=True``) or built in Python can have, is an
        error naming it: the document could not be read back.

        Returns
        -------
        dict
            The document: the tree, labels, subgroups, utilities and atoms.

        Raises
        ------
        HUCError
            Of kind ``too_large``, naming a number with more digits than :func:`read_case` reads.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> p = [f"1/{2**8000}", f"1/{3**5000}"]  # 2,410 and 2,386 digits
        >>> case = Case("c", "", t, FiniteDistribution(t, [{"p": p, "label": "a"}], renormalize=True), {})
        >>> case.to_json()
        Traceback (most recent call last):
        ...
        huc_ref.errors.HUCError: atoms[0].p[0]: 4795 digits; a huc-case/1 number has at most 4000 ...
        """
        doc = self._document()
        _check_readable(doc, "")
        return doc

    def _document(self) -> dict:
        dist = self.distribution
        atoms = []
        for a in dist.atoms:
            atom = {"weight": fraction_text(a.weight), "c": [fraction_text(x) for x in a.c],
                    "p": [fraction_text(x) for x in a.p]}
            if a.eta is not None:
                atom["eta"] = [fraction_text(x) for x in a.eta]
            else:
                atom["label"] = self.tree.labels[a.label]
            atoms.append(atom)
        return {"format": CASE_FORMAT, "id": self.id, "description": self.description,
                "tree": self.tree.to_json(), "labels": list(self.tree.labels),
                "subgroups": list(dist.subgroups),
                "utilities": {name: u.to_json() for name, u in self.utilities.items()},
                "atoms": atoms}


def _check_readable(value, where: str) -> None:
    """Refuse a number of a document being written that :func:`read_case` would refuse as too long."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            _check_readable(item, f"{where}.{key}" if where else key)
    elif isinstance(value, list):
        for k, item in enumerate(value):
            _check_readable(item, f"{where}[{k}]")
    elif isinstance(value, str) and _WRITTEN_NUMBER.fullmatch(value):
        count = len(value) - value.startswith("-") - ("/" in value)
        if count > MAX_DIGITS:
            raise HUCError(f"{where}: {count} digits; a {CASE_FORMAT} number has at most {MAX_DIGITS} "
                           "(docs/specification.md §6), so read_case could not read this document back",
                           kind="too_large")


_WRITTEN_NUMBER = re.compile(r"-?\d+(?:/\d+)?", re.ASCII)  # (fraction_text's output)


def read_case(source, *, renormalize: bool = False, smooth=None) -> Case:
    """Read a ``huc-case/1`` document (docs/specification.md §6) from a path, JSON text or an
    already parsed object.

    Parameters
    ----------
    source : str, Path or mapping
        A path (a ``str`` that does not open with ``{`` or ``[``), JSON text, or the parsed
        document.
    renormalize : bool, default False
        Divide each prediction by its sum (else a sum other than 1 is an error).
    smooth : number, optional
        K.1's ``kappa``: each prediction is mixed with the uniform law,
        ``(1 - kappa) p + kappa / K`` (:class:`~huc_ref.distribution.FiniteDistribution`).

    Returns
    -------
    Case
        The case.

    Raises
    ------
    HUCError
        Naming the first place in the document that breaks a rule: its format, an unknown or
        missing field, the tree, a number, a utility.

    Examples
    --------
    >>> doc = {"format": "huc-case/1", "id": "d1",
    ...        "tree": {"root": "v0", "children": {"v0": ["vL", "vR"], "vL": ["y1", "y2"],
    ...                                            "vR": ["y3", "y4"]}},
    ...        "labels": ["y1", "y2", "y3", "y4"],
    ...        "utilities": {"u": {"kind": "table", "values": [-1, 1, 1, 1]}},
    ...        "atoms": [{"p": ["1/4", "1/4", "1/4", "1/4"], "eta": ["1/4", 0, "3/8", "3/8"]}]}
    >>> read_case(doc).result_json()["huc"]
    {'value': '1/4', 'subgroup': 'all', 'utility': 'u', 'node': 'v0', 'interval': ['1/2', '1/2'], 'moment': '1/4'}
    >>> doc["atoms"][0]["p"] = ["0.25", "0.25", "0.25", "0.249"]
    >>> read_case(doc)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: atoms[0].p: sums to 999/1000, not 1; pass renormalize=True to divide it by its sum
    """
    # A str is JSON text when it is blank or opens an array or object; otherwise a path.
    if isinstance(source, Path) or (isinstance(source, str) and source.strip()
                                    and not source.lstrip().startswith(("{", "["))):
        doc = load_json(read_document(Path(source), "case file"))
    elif isinstance(source, (str, bytes)):
        doc = load_json(source)
    else:
        doc = source
    if not isinstance(doc, Mapping):
        raise HUCError("case: expected a JSON object", kind="type")
    fmt = doc.get("format")
    if fmt != CASE_FORMAT:
        raise HUCError(f"format: expected {CASE_FORMAT!r}, got {fmt!r}", kind="format")
    known = {"format", "id", "description", "tree", "labels", "subgroups", "utilities", "atoms", "comment"}
    extra = set(doc) - known
    if extra:
        raise HUCError(f"{sorted(extra)[0]}: unknown field of a {CASE_FORMAT} document", kind="unknown_field")
    case_id = doc.get("id", "case")
    if not isinstance(case_id, str):
        raise HUCError("id: expected a string", kind="type")
    check_name(case_id, "id")
    description = doc.get("description", "")
    if not isinstance(description, str):
        raise HUCError("description: expected a string", kind="type")
    if any("\ud800" <= ch <= "\udfff" for ch in description):
        raise HUCError("description: holds a lone surrogate, which no UTF-8 text can hold", kind="type")
    tree_doc = _require(doc, "tree", "", dict)
    extra = set(tree_doc) - {"root", "children"}
    if extra:
        raise HUCError(f"tree.{sorted(extra)[0]}: unknown field (a tree has root and children)", kind="unknown_field")
    root = _require(tree_doc, "root", "tree")
    children = tree_doc.get("children", {})
    labels = _require(doc, "labels", "", list)
    tree = LabelTree(root, children, labels)
    subgroups = doc.get("subgroups", ["all"])
    if not isinstance(subgroups, list):
        raise HUCError("subgroups: expected a list of names", kind="type")
    atoms = _require(doc, "atoms", "", list)
    dist = FiniteDistribution(tree, atoms, subgroups, renormalize=renormalize, smooth=smooth)
    specs = _require(doc, "utilities", "", dict)
    if not specs:
        raise HUCError("utilities: expected at least one utility", kind="structure")
    utilities = {check_name(name, "utilities"): utility_from_json(tree, spec, f"utilities.{name}")
                 for name, spec in specs.items()}
    for name, u in utilities.items():
        if isinstance(u, PerAtom) and len(u.rows) != dist.n:
            raise HUCError(f"utilities.{name}.values: has {len(u.rows)} rows, but there are {dist.n} atoms",
                           kind="structure")
    return Case(case_id, description, tree, dist, utilities)


# ----------------------------------------------------------------------------- the JSON Schemas
_NAMES = {"type": "array", "items": {"type": "string"}}


def case_schema() -> dict:
    """The JSON Schema (draft 2020-12) of ``huc-case/1`` (docs/specification.md §6), published as
    ``huc_ref/data/schemas/huc-case-1.schema.json``.

    It states the document's shape; :func:`read_case` also checks what a schema cannot
    (sums to 1, the tree's structure, names that refer to each other, sizes).  Every
    document the reader accepts, the schema accepts (tested).

    Returns
    -------
    dict
        The schema.

    Examples
    --------
    >>> sorted(case_schema()["required"])
    ['atoms', 'format', 'labels', 'tree', 'utilities']
    """
    atom = {"type": "object", "additionalProperties": False, "required": ["p"],
            "properties": {"weight": NUMBER_SCHEMA, "c": {"type": "array", "items": NUMBER_SCHEMA},
                           "p": {"type": "array", "items": NUMBER_SCHEMA},
                           "eta": {"type": "array", "items": NUMBER_SCHEMA}, "label": {"type": "string"},
                           "id": {}},
            "oneOf": [{"required": ["eta"]}, {"required": ["label"]}]}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "huc-case-1.schema.json",
            "title": "huc-case/1: one finite audit of Utility Calibration and HUC", "type": "object",
            "additionalProperties": False, "required": ["format", "tree", "labels", "utilities", "atoms"],
            "properties": {"format": {"const": CASE_FORMAT}, "id": {"type": "string"},
                           "description": {"type": "string"}, "comment": {},
                           "tree": {"type": "object", "additionalProperties": False, "required": ["root"],
                                    "properties": {"root": {"type": "string"}, "children": {
                                        "type": "object", "additionalProperties": _NAMES}}},
                           "labels": _NAMES, "subgroups": _NAMES,
                           "utilities": {"type": "object", "minProperties": 1,
                                         "additionalProperties": {"$ref": "#/$defs/utility"}},
                           "atoms": {"type": "array", "items": atom, "minItems": 1}},
            "$defs": {"utility": {"oneOf": [utility_schema(k) for k in sorted(KINDS)]}}}


#: The ``arithmetic`` of a ``huc-result/1`` document (:data:`huc_ref.engines.AUDIT_ARITHMETICS`) and
#: the value of ``engine``, the field documents wrote before it (read for one release).
RESULT_ENGINES = {"exact": "exact", "float64": "fast"}


def result_schema(arithmetic: str = "exact") -> dict:
    """The JSON Schema of ``huc-result/1`` (docs/specification.md §6) in the numbers ``arithmetic``:
    exact answers write numbers as strings in lowest terms; float64 answers (``"float64"``) as JSON
    numbers, except a witness end that is an exact score (scores closer than float64 resolves), and
    with an optional ``near_ties`` (:meth:`huc_ref.results.NearTies.to_json`: the scores float64
    could not order and what became of them).  A document names its numbers in ``arithmetic``, or,
    as documents did before it, in ``engine`` (``"exact"`` or ``"fast"``: read for one release).

    Parameters
    ----------
    arithmetic : {"exact", "float64"}, default "exact"
        Whose answers: exact numbers as strings, or float64's JSON numbers (``"fast"``, the
        deprecated spelling, is read as ``"float64"`` with a warning).

    Returns
    -------
    dict
        The schema.

    Raises
    ------
    HUCError
        Of kind ``option`` for another ``arithmetic``.

    Examples
    --------
    >>> result_schema()["properties"]["arithmetic"], result_schema("float64")["properties"]["engine"]
    ({'const': 'exact'}, {'const': 'fast'})
    """
    if arithmetic == "fast":
        deprecated("result_schema('fast')", "result_schema('float64')")
        arithmetic = "float64"
    if arithmetic not in RESULT_ENGINES:
        raise HUCError(f"arithmetic: expected 'exact' or 'float64', got {given(arithmetic)}", kind="option")
    engine = RESULT_ENGINES[arithmetic]
    rational = {"type": "string", "pattern": r"^-?[0-9]+(/[0-9]+)?$"}
    number = rational if engine == "exact" else {"type": "number"}
    p_value = {"type": "string", "pattern": r"^[0-9]+(/[0-9]+)?$"}  # exact on both engines (counts)
    significance = {"type": "object", "additionalProperties": False,
                    "required": ["method", "draws", "seed", "uc", "huc", "theorem_3_4"],
                    "properties": {"method": {"enum": ["resampling", "exact"]},
                                   "draws": {"type": "integer", "minimum": 1},
                                   "seed": {"type": ["integer", "null"], "minimum": 0},
                                   "uc": p_value, "huc": p_value,
                                   "theorem_3_4": {"type": "object", "additionalProperties": False,
                                                   "required": ["delta", "deviation"],
                                                   "properties": {"delta": rational, "deviation": {"type": "string"}}}}}
    # a fast witness's end is the float of an exact score, or that score itself (a string) where no float lies
    # between it and a neighbouring one (scores closer than float64 resolves, put in order exactly)
    end = number if engine == "exact" else {"oneOf": [number, rational]}
    witness = {"oneOf": [{"type": "null"}, {"type": "array", "items": end, "minItems": 2, "maxItems": 2}]}
    count = {"type": "integer", "minimum": 0}
    bound = {"type": "number", "minimum": 0}
    near_ties = {"type": "object", "additionalProperties": False, "required": ["decided", "undecided"],
                 "properties": {"decided": {"type": "object", "additionalProperties": False,
                                            "required": ["groups", "rows"],
                                            "properties": {"groups": count, "rows": count}},
                                "undecided": {"type": "object", "additionalProperties": False,
                                              "required": ["groups", "rows", "uc_bound", "huc_bound"],
                                              "properties": {"groups": count, "rows": count, "uc_bound": bound,
                                                             "huc_bound": bound}}}}
    name = {"type": ["string", "null"]}
    row = {"type": "object", "required": ["subgroup", "utility", "node", "sup", "interval", "moment"],
           "additionalProperties": False,
           "properties": {"subgroup": {"type": "string"}, "utility": {"type": "string"}, "node": name,
                          "sup": number, "interval": witness, "moment": number, "p_value": p_value}}
    best = {"type": "object", "required": ["value", "subgroup", "utility", "interval", "moment"],
            "additionalProperties": False,
            "properties": {"value": number, "subgroup": name, "utility": name, "node": name,
                           "interval": witness, "moment": number, "p_value": p_value}}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"huc-result-1{'' if engine == 'exact' else '-fast'}.schema.json",
            "title": f"huc-result/1 ({arithmetic} arithmetic): UC and HUC with witnesses", "type": "object",
            "required": ["format", "case", "uc", "huc", "relevant_nodes", "candidates"],
            "oneOf": [{"required": ["arithmetic"]}, {"required": ["engine"]}],
            "additionalProperties": False,
            "properties": {"format": {"const": RESULT_FORMAT}, "case": {"type": ["string", "null"]},
                           "arithmetic": {"const": arithmetic}, "engine": {"const": engine}, "uc": best, "huc": best,
                           "relevant_nodes": {"type": "object", "additionalProperties": _NAMES},
                           "candidates": {"type": "array", "items": row}, "significance": significance,
                           **({} if engine == "exact" else {"near_ties": near_ties})}}


#: The ``arithmetic`` of a ``huc-boost/1`` document: ``"exact"`` (the certified engine),
#: ``"certified"`` (certified float64), ``"float64"``, or ``"float"`` (the certified engine on binary
#: floats, uncertified); documents written before these names say ``"certified"`` for the certified
#: engine, ``"float (fast path)"`` and ``"certified (float64 with error bounds)"``, read alike.
BOOST_ARITHMETICS = ("exact", "certified", "float64", "float", "float (fast path)",
                     "certified (float64 with error bounds)")


def boost_schema() -> dict:
    """The JSON Schema of ``huc-boost/1``, the document :meth:`huc_ref.results.BoostResult.to_json`
    writes (``huc boost --json``): the updates with Gamma, Lambda and alpha, the stopping reason,
    Theorem 3.5's checks, the final predictions and the audit log.  The certified engine writes
    numbers as decimal strings (``digits`` significant digits), the fast backend as JSON numbers.

    Returns
    -------
    dict
        The schema.

    Examples
    --------
    >>> sorted(boost_schema()["required"])[:4]
    ['arithmetic', 'audits', 'bound_updates', 'digits']
    """
    number = {"type": ["string", "number"]}
    update = {"type": "object", "additionalProperties": False,
              "required": ["subgroup", "utility", "node", "interval", "gamma", "lambda", "alpha", "log_loss_before",
                           "log_loss_after", "guaranteed_decrease", "quadratic_bound_holds", "log_loss_decreased"],
              "properties": {"subgroup": {"type": "string"}, "utility": {"type": "string"},
                             "node": {"type": ["string", "null"]}, "interval": {"type": "array", "items": number},
                             **{k: number for k in ("gamma", "lambda", "alpha", "log_loss_before", "log_loss_after",
                                                    "guaranteed_decrease")},
                             "quadratic_bound_holds": {"type": "boolean"}, "log_loss_decreased": {"type": "boolean"}}}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "huc-boost-1.schema.json",
            "title": "huc-boost/1: a HUC-Boost or UC-Boost run", "type": "object", "additionalProperties": False,
            "required": ["format", "method", "epsilon", "digits", "arithmetic", "updates", "bound_updates", "stopped",
                         "initial", "final", "theorem_3_5", "predictions", "audits"],
            "properties": {"format": {"const": BOOST_FORMAT}, "method": {"enum": ["huc", "uc"]},
                           "epsilon": {"type": "string"}, "digits": {"type": ["integer", "null"]},
                           "arithmetic": {"enum": list(BOOST_ARITHMETICS)},
                           "updates": {"type": "array", "items": update},
                           "bound_updates": {"type": "integer"},
                           "stopped": {"enum": ["tolerance", "cap", "budget"]},
                           "initial": {"type": "object", "required": ["log_loss"]},
                           "final": {"type": "object", "required": ["uc", "huc", "log_loss"]},
                           "theorem_3_5": {"type": "object", "required": ["applies", "holds", "certified"]},
                           "predictions": {"type": "array", "items": {"type": "array", "items": number}},
                           "audits": {"type": "array", "items": {
                               "type": "array", "prefixItems": [{"type": ["string", "null"]}, {"type": "boolean"}],
                               "minItems": 2, "maxItems": 2}}}}


def model_schema() -> dict:
    """The JSON Schema of ``huc-model/1``, a fitted recalibration (:meth:`huc_ref.calibration.HUCBoost.to_json`):
    the tree, labels and utilities as in ``huc-case/1``, the columns' order at fit (``classes``,
    optional: :attr:`huc_ref.calibration.HUCBoost.classes_`), the subgroups, the options, the initial
    scaling's parameters and the rules, each ``(subgroup, utility, node, interval, alpha)`` with
    float64 numbers (JSON numbers round-trip them exactly; Algorithm 1's kept updates, K.1).

    Returns
    -------
    dict
        The schema.

    Examples
    --------
    >>> sorted(model_schema()["properties"]["rules"]["items"]["required"])
    ['alpha', 'interval', 'node', 'subgroup', 'utility']
    """
    from .recalibration import KINDS as SCALING_KINDS  # (the recalibrators' own registry, read when asked)
    case = case_schema()
    matrix = {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}
    rule = {"type": "object", "additionalProperties": False,
            "required": ["subgroup", "utility", "node", "interval", "alpha"],
            "properties": {"subgroup": {"type": "string"}, "utility": {"type": "string"},
                           "node": {"type": ["string", "null"]}, "alpha": {"type": "number"},
                           "interval": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}}}
    kappa = {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}  # K.1: "kappa_0 in (0, 1)"
    initial = {"oneOf": [{"type": "null"}, {
        "type": "object", "additionalProperties": False, "required": ["kind", "W", "b", "kappa"],
        "properties": {"kind": {"enum": list(SCALING_KINDS)}, "W": matrix,
                       "b": {"type": "array", "items": {"type": "number"}}, "kappa": kappa}}]}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "huc-model-1.schema.json",
            "title": "huc-model/1: a fitted HUC-Boost recalibration", "type": "object", "additionalProperties": False,
            "required": ["format", "tree", "labels", "utilities", "subgroups", "method", "kappa", "options",
                         "initial", "rules", "provenance"],
            "properties": {"format": {"const": MODEL_FORMAT}, "tree": case["properties"]["tree"],
                           "labels": _NAMES, "classes": {"type": "array", "items": {"type": ["string", "integer"]}},
                           "utilities": case["properties"]["utilities"], "subgroups": _NAMES,
                           "method": {"enum": ["huc", "uc"]}, "kappa": kappa,
                           "options": {"type": "object"}, "initial": initial,
                           "rules": {"type": "array", "items": rule}, "provenance": {"type": "object"}},
            "$defs": case["$defs"]}


def schema_dir() -> Path:
    """Where the published schemas of docs/specification.md §6 live (package data): ``huc_ref/data/schemas``.

    Returns
    -------
    Path
        The folder.

    Examples
    --------
    >>> [p.name.split(".")[0] for p in sorted(schema_dir().glob("*.json"))]
    ['huc-boost-1', 'huc-case-1', 'huc-model-1', 'huc-result-1-fast', 'huc-result-1', 'huc-spec']
    """
    return Path(__file__).resolve().parent / "data" / "schemas"


def write_schemas(out: Path | None = None) -> list[Path]:
    """Write the schemas of the file formats (:func:`case_schema`, :func:`result_schema`,
    :func:`boost_schema`, :func:`model_schema`, :func:`spec_schema`) into ``out``
    (default: :func:`schema_dir`, the published copies, which a test holds to the builders).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     [json.loads(p.read_text())["$id"].split(".")[0] for p in write_schemas(Path(out))]
    ['huc-case-1', 'huc-result-1', 'huc-result-1-fast', 'huc-boost-1', 'huc-model-1', 'huc-spec']
    """
    out = Path(out or schema_dir())
    out.mkdir(parents=True, exist_ok=True)
    docs = {"huc-case-1.schema.json": case_schema(), "huc-result-1.schema.json": result_schema(),
            "huc-result-1-fast.schema.json": result_schema("float64"), "huc-boost-1.schema.json": boost_schema(),
            "huc-model-1.schema.json": model_schema(), "huc-spec.schema.json": spec_schema()}
    for name, doc in docs.items():
        (out / name).write_text(json.dumps(doc, indent=1) + "\n")
    return [out / name for name in docs]


#: The array files the command line reads: numpy's own format, comma-separated values and
#: Parquet (the ``parquet`` extra, pyarrow).
ARRAY_SUFFIXES = (".npy", ".csv", ".parquet")


def read_array(path, what: str):
    """A numeric (or, for labels, string) array from a ``.npy``, ``.csv`` or ``.parquet`` file,
    or one HUCError saying what is expected and how to convert.  A CSV may have one header row;
    a Parquet file's columns are taken in order (:func:`read_columns` also gives their names; Sec. 2.1's sample).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    what : str
        What the file holds, for messages (``"predictions"``, ``"labels"``).

    Returns
    -------
    ndarray
        The array: one column as a vector, whole numbers as integers.

    Raises
    ------
    HUCError
        Naming the file, for another suffix, a file that cannot be read or is not an array.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = Path(d, "p.csv").write_text(chr(10).join(["a,b", "0.25,0.75", "0.5,0.5"]))
    ...     read_array(Path(d, "p.csv"), "predictions").tolist()
    [[0.25, 0.75], [0.5, 0.5]]
    >>> read_array("preds.txt", "predictions")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: predictions: 'preds.txt' is not a .npy, .csv or .parquet file; save it with ...
    """
    return read_columns(path, what)[0]


#: The name pandas gives its index column in a CSV it writes (``to_csv()`` without
#: ``index=False``: an empty first header cell), and the name it reads such a column back as.
_PANDAS_INDEX = ("", "Unnamed: 0")


def read_columns(path, what: str, numbers: bool = False, labels=None, header_names=None) -> tuple:
    """:func:`read_array`'s array and the names the file gives its columns: a CSV's header row,
    a Parquet file's column names, or None (a ``.npy`` file, a CSV without a header); for
    predictions ``p(x_i)`` (Sec. 2.1) the names are checked against the tree's label order.  A
    CSV's first column with no name (or "Unnamed: 0") is pandas' index and is dropped.

    A CSV is read as comma-separated cells (quoted as the csv module and spreadsheets quote
    them); a row with another number of cells than the first, and, with ``numbers``, a cell that
    is not a finite number, is an error naming its line and column (docs/specification.md §6: one
    error naming the place).  With ``labels`` (the tree's label names) a CSV of labels keeps its
    cells' text (``"002"`` stays a name), and its first row is a header only if its first cell
    is neither a label name nor a number.  With ``header_names`` (the tree's labels, for a file
    of predictions) a first row that lists exactly those names is a header even where they are
    numbers (labels "0", "1", ...: the header ``huc apply`` writes).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    what : str
        What the file holds, for messages.
    numbers : bool, default False
        Every cell must be a finite number.
    labels : collection of str, optional
        The tree's label names, for a file of labels.
    header_names : collection of str, optional
        The tree's labels, for a file of predictions.

    Returns
    -------
    array : ndarray
        As :func:`read_array` gives it.
    names : list of str or None
        The columns' names, or None.

    Raises
    ------
    HUCError
        Naming the file (and, in a CSV, the line and column), for another suffix, a file that
        cannot be read, a ragged CSV or a cell that is not a number.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = Path(d, "p.csv").write_text(chr(10).join(["b,a", "0.25,0.75"]))
    ...     array, names = read_columns(Path(d, "p.csv"), "predictions")
    >>> array.tolist(), names
    ([[0.25, 0.75]], ['b', 'a'])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = Path(d, "p.csv").write_text(chr(10).join(["a,b", "0.25,0.75", "0.5;0.5"]))
    ...     read_columns(Path(d, "p.csv"), "predictions", numbers=True)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: predictions: 'p.csv' line 3 has 1 cell, line 1 (the header) has 2 (cells are ...)
    """
    path = as_path(path, what)
    suffix = path.suffix.lower()
    if suffix not in ARRAY_SUFFIXES:
        raise HUCError(f"{what}: {printable(str(path), 200)!r} is not a .npy, .csv or .parquet file; save it with "
                       f"numpy.save('{path.stem}.npy', array), as comma-separated values, or as Parquet", kind="file")
    data = read_document(path, what)  # a regular file of bounded size
    where = f"{what}: {printable(path.name, 100)!r}"
    try:
        if suffix == ".npy":
            return _npy_array(data, where), None
        if suffix == ".parquet":
            return _parquet_columns(data, where)
        text = data.decode("utf-8-sig")  # a byte-order mark is not part of the first cell
        return _csv_columns(text, where, numbers, labels=labels, header_names=header_names)
    except HUCError:
        raise
    except (ValueError, OSError, UnicodeDecodeError, csv.Error) as err:
        raise HUCError(f"{what}: {printable(str(path), 200)!r} could not be read as {suffix} "
                       f"({printable(str(err), 200)})", kind="file") from None
    except MemoryError:
        raise HUCError(f"{what}: {printable(str(path), 200)!r}: not enough memory to read it", kind="too_large") \
            from None


def _npy_array(data: bytes, where: str):
    """The array of a ``.npy`` file's bytes, its header checked before anything is allocated: the
    format version (1.0 or 2.0: what ``numpy.save`` writes for arrays of numbers and text), the
    dtype (no Python objects, which would be unpickled), and the data the shape and dtype declare
    against the bytes the file holds, so a small file claiming a huge shape is one error, not an
    allocation of its claim.  An array of shape ``()`` is read as one entry.

    >>> import numpy as np
    >>> f = io.BytesIO(); np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False,
    ...                                                               "shape": (10**9, 400)})
    >>> _npy_array(f.getvalue(), "predictions")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: predictions: its header declares an array of shape (1000000000, 400) of float64, ...
    """
    import numpy as np
    import numpy.lib.format as npf
    f = io.BytesIO(data)
    version = npf.read_magic(f)
    readers = {(1, 0): npf.read_array_header_1_0, (2, 0): npf.read_array_header_2_0}
    if version not in readers:
        raise HUCError(f"{where}: a .npy file of format version {version[0]}.{version[1]}; save a plain array of "
                       "numbers or text with numpy.save (versions 1.0 and 2.0)", kind="file")
    try:
        shape, fortran_order, dtype = readers[version](f)
    except Exception as err:  # noqa: BLE001 (numpy parses the header as a Python literal: any error of tokenize or ast)
        raise HUCError(f"{where}: its header is not a .npy header ({printable(str(err), 120)}); save the array with "
                       "numpy.save", kind="file") from None
    if dtype.hasobject:
        raise HUCError(f"{where}: holds Python objects (dtype {printable(str(dtype), 80)}), which are not read; save "
                       "numbers, or labels as text (numpy.save('y.npy', np.asarray(y, dtype=str)))", kind="type")
    declared = math.prod(shape) * dtype.itemsize
    if declared != len(data) - f.tell():
        raise HUCError(f"{where}: its header declares an array of shape {shape} of {printable(str(dtype), 80)}, "
                       f"{declared} bytes, but the file holds {len(data) - f.tell()} bytes after the header; the file "
                       "is truncated or not written by numpy.save", kind="file")
    return np.atleast_1d(np.load(io.BytesIO(data), allow_pickle=False))


def _parquet_columns(data: bytes, where: str) -> tuple:
    """A Parquet file's array and column names (:func:`read_columns`): every column of numbers
    (integers, floats) or of text (strings, and a dictionary-encoded, pandas "category", column of
    them), none with a missing value; a decimal, timestamp or other column is one error naming it
    and the conversion.  One column is read as a vector, any number of rows (one too).

    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> f = io.BytesIO(); pq.write_table(pa.table({"a": [0.25], "b": [0.75]}), f)
    >>> array, names = _parquet_columns(f.getvalue(), "predictions")
    >>> array.tolist(), names
    ([[0.25, 0.75]], ['a', 'b'])
    """
    import numpy as np
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
    except ImportError:
        raise HUCError(f"{where}: reading Parquet needs pyarrow (pip install 'huc-ref[parquet]')",
                       kind="dependency") from None
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, ValueError, OSError, TypeError) as err:
        raise HUCError(f"{where}: could not be read as .parquet ({printable(str(err), 200)})", kind="file") from None
    names = [str(name) for name in table.column_names]
    if not names:
        raise HUCError(f"{where}: has no columns", kind="length")
    columns, kinds = [], {}
    for name, column in zip(names, table.columns):
        kind = column.type
        if pa.types.is_dictionary(kind):  # (pandas' category: its values)
            column, kind = column.cast(kind.value_type), kind.value_type
        text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
        if not (text or pa.types.is_integer(kind) or pa.types.is_floating(kind)):
            raise HUCError(f"{where}: column {printable(name, 80)!r} is of type {printable(str(kind), 80)}, not "
                           "numbers or text; write it as float64 (predictions), or as integers or strings (labels)",
                           kind="type")
        if column.null_count:
            row = int(pc.index(pc.is_null(column), True).as_py())
            raise HUCError(f"{where}: column {printable(name, 80)!r} has a missing value at row {row}", kind="type")
        kinds.setdefault("text" if text else "numbers", name)
        columns.append(np.array(column.to_pylist(), dtype=str) if text else column.to_numpy())
    if len(kinds) > 1:
        raise HUCError(f"{where}: column {printable(kinds['text'], 80)!r} holds text and column "
                       f"{printable(kinds['numbers'], 80)!r} numbers; a file holds one or the other", kind="type")
    return (columns[0] if len(columns) == 1 else np.column_stack(columns)), names


def _csv_columns(text: str, where: str, numbers: bool, fast: bool = True, labels=None, header_names=None) -> tuple:
    """:func:`read_columns` of a CSV file's text (``where`` names the file in a message): numpy's
    ``loadtxt`` (its C parser, correctly rounded as Python's ``float``) where the cells are
    numbers, else (or with ``fast=False``) the csv module cell by cell, which finds the line and
    column of an error; with ``labels``, the cells' text.

    >>> _csv_columns('a,b\\n"0.25",0.75\\n', "p", True)[0].tolist(), _csv_columns("0,1\\n2,3", "p", True, False)
    ([[0.25, 0.75]], (array([[0., 1.],
           [2., 3.]]), None))
    >>> _csv_columns("002\\n001\\n", "y", False, labels={"001", "002"})  # names, not the numbers 2 and 1
    (array(['002', '001'], dtype='<U3'), None)
    >>> _csv_columns("0,1\\n0.25,0.75\\n", "p", True, header_names={"0", "1"})  # labels named "0" and "1"
    (array([[0.25, 0.75]]), ['0', '1'])
    """
    import numpy as np
    physical = text.split("\n")  # lines as loadtxt counts them (skiprows)
    first = next((k for k, line in enumerate(physical) if line.strip()), None)
    if first is not None and fast and labels is None:
        names = _header(next(csv.reader([physical[first]])), labels, header_names)
        skip = 0 if names is None else first + 1
        try:
            with warnings.catch_warnings():  # (a header and no rows: loadtxt warns; the reading below says so)
                warnings.simplefilter("ignore", UserWarning)
                out = np.loadtxt(io.StringIO(text), delimiter=",", quotechar='"', skiprows=skip, ndmin=2,
                                 dtype=float, comments=None)
        except ValueError:  # not all numbers, or ragged: read cell by cell below
            out = None
        if out is not None and out.size and (not numbers or np.isfinite(out).all()) \
                and (names is None or len(names) == out.shape[1]):
            index = _pandas_index(names)
            return _shaped(out[:, index:]), names[index:] if names else names
    rows = [(number, row) for number, row in enumerate(csv.reader(text.splitlines()), 1)
            if any(cell.strip() for cell in row)]  # (blank lines skipped)
    names = _header(rows[0][1], labels, header_names) if rows else None
    header_line = rows[0][0] if names is not None else 0
    lines = [(number, [cell.strip() for cell in row]) for number, row in rows[names is not None:]]
    first = (header_line, names) if names is not None else (lines[0] if lines else (0, []))
    for number, row in lines:  # every row as wide as the header (or the first row)
        if len(row) != len(first[1]):
            sep = " (cells are separated by commas)" if any(";" in cell or "\t" in cell for cell in row) else ""
            raise HUCError(f"{where} line {number} has {len(row)} cell{'s' * (len(row) != 1)}, line {first[0]}"
                           f"{' (the header)' if names is not None else ''} has {len(first[1])}{sep}", kind="length")
    index = _pandas_index(names)
    names, rows = names[index:] if names else names, [row[index:] for _, row in lines]
    if labels is not None:
        return _shaped(np.array(rows, dtype=str) if rows else np.array([], dtype=str)), names
    if numbers and not rows:
        header = (f" (line {header_line}, its only line, is read as a header: not every cell is a number)"
                  if names is not None else "")
        raise HUCError(f"{where} has no rows of numbers{header}", kind="length")
    try:
        out = np.array([[float(x) for x in row] for row in rows])
    except ValueError:
        if numbers:
            _not_a_number(lines, where, index)
        out = np.array(rows, dtype=str)
    if numbers and out.size and not np.isfinite(out).all():
        _not_a_number(lines, where, index)
    return _shaped(out), names


def _pandas_index(names) -> int:
    """1 where a header's first name is pandas' index column (``to_csv()`` without
    ``index=False``: an empty first header cell, or "Unnamed: 0"), which is dropped; else 0."""
    return int(bool(names) and len(names) > 1 and names[0] in _PANDAS_INDEX)


def _header(cells, labels, header_names):
    """The names of a CSV's first row (its ``cells`` as the csv module reads them) if it is a
    header, else None: it is one where its names (:func:`header_name` of each cell, without the
    spaces around it, or as written) are exactly ``header_names``, or where its first cell is
    not a number (nor, in a labels file, a label name).

    >>> _header(["'=a", " b "], None, {"=a", " b "}), _header(["0.5", "x"], None, None)
    (['=a', ' b '], None)
    """
    stripped = [header_name(cell.strip()) for cell in cells]
    if header_names is not None and len(cells) == len(header_names):
        for names in (stripped, [header_name(cell) for cell in cells]):
            if set(names) == set(header_names):
                return names
    if labels is not None and cells[0].strip() in labels:
        return None
    try:
        float(cells[0])
    except ValueError:
        return stripped
    return None


#: What a cell may begin with that a spreadsheet reads as a formula (or a formula's sign), and the
#: apostrophe that marks a cell as text: :func:`csv_cell` writes such a cell after an apostrophe.
_FORMULA_LEADS = ("=", "+", "-", "@", "'")


def csv_cell(text: str) -> str:
    """A name as the cell ``huc apply`` writes in a CSV header: an apostrophe before a name that
    begins with ``=``, ``+``, ``-`` or ``@`` (a spreadsheet would run it as a formula: CSV
    injection) or with an apostrophe (so that each cell is read back as exactly one name,
    :func:`header_name`); any other name as it is.  The csv module then quotes a cell with a
    comma or a quote (docs/specification.md §6: a file ``huc`` writes, it reads back).

    Parameters
    ----------
    text : str
        The name.

    Returns
    -------
    str
        The cell.

    Examples
    --------
    >>> [csv_cell(x) for x in ("=HYPERLINK(1)", "-1", "'x", "cat")], header_name(csv_cell("'x"))
    (["'=HYPERLINK(1)", "'-1", "''x", 'cat'], "'x")
    """
    return "'" + text if text.startswith(_FORMULA_LEADS) else text


def header_name(cell: str) -> str:
    """The name a CSV header cell holds: the inverse of :func:`csv_cell` (an apostrophe before one
    of ``= + - @ '`` is dropped, as a spreadsheet drops the apostrophe that marks a cell as text);
    any other cell as it is (docs/specification.md §6).

    Parameters
    ----------
    cell : str
        The cell.

    Returns
    -------
    str
        The name.

    Examples
    --------
    >>> header_name("'=x"), header_name("'x"), header_name("x")
    ('=x', "'x", 'x')
    """
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(_FORMULA_LEADS) else cell


def _shaped(out):
    """A CSV's array: one column as a vector, a vector of whole numbers as integers (class indices)."""
    if out.ndim == 2 and out.shape[1] == 1:
        out = out[:, 0]
    ids = class_indices(out) if out.dtype.kind == "f" else None
    return out if ids is None else ids


def class_indices(values):
    """``values`` (floats, or their text) as integers where every one is a whole number below 2^53
    (class indices written as numbers, Sec. 2.1's labels ``y_i``), else None: beyond 2^53 a float
    need not be the integer it reads as, and int64 would wrap past 2^63.

    Parameters
    ----------
    values : array-like
        Floats, or their text.

    Returns
    -------
    ndarray of int or None
        The integers, or None.

    Examples
    --------
    >>> class_indices(["2", "0.0"]).tolist(), class_indices([2.5]), class_indices([9.3e18]), class_indices(["dog"])
    ([2, 0], None, None, None)
    """
    import numpy as np
    try:
        f = np.asarray(values, dtype=float)
    except ValueError:
        return None
    if f.ndim == 1 and np.all(f == np.round(f)) and np.all(np.abs(f) < 2.0**53):
        return f.astype(int)
    return None


def _not_a_number(lines, where: str, index: int = 0):
    """The HUCError naming the first cell of ``lines`` that is not a finite number (after the
    first ``index`` cells of each row, pandas' index; columns counted as in the file)."""
    for number, row in lines:
        for column, cell in enumerate(row[index:], 1 + index):
            try:
                if math.isfinite(float(cell)):
                    continue
                rule, kind = "not a finite number", "float_range"
            except ValueError:
                rule = "not a number" + ("; cells are separated by commas" if any(c in cell for c in ";\t") else "")
                kind = "type"
            raise HUCError(f"{where} line {number}, column {column}: {printable(cell, 40)!r} is {rule}", kind=kind)


def read_model_spec(source) -> tuple:
    """The tree and utilities of a JSON document ``{"tree", "labels", "utilities"}`` (a
    ``huc-case/1`` document without atoms; a whole case file is accepted too), for the
    commands that take predictions from array files (docs/specification.md §6).

    Parameters
    ----------
    source : mapping, str or Path
        The document, or the path of a file holding it.

    Returns
    -------
    tree : LabelTree
        The tree, its labels in the order ``labels`` gives.
    utilities : dict of str to Utility
        The utilities by name.

    Raises
    ------
    HUCError
        Naming the first field that is missing or breaks its rule.

    Examples
    --------
    >>> tree, us = read_model_spec({"tree": {"root": "r", "children": {"r": ["a", "b"]}}, "labels": ["a", "b"],
    ...                             "utilities": {"u": {"kind": "top_k", "k": 1}}})
    >>> tree.labels, list(us)
    (('a', 'b'), ['u'])
    """
    doc = _spec_document(source)
    tree_doc = _require(doc, "tree", "", dict)
    labels = _require(doc, "labels", "", list)
    tree = LabelTree(_require(tree_doc, "root", "tree"), tree_doc.get("children", {}), labels)
    specs = _require(doc, "utilities", "", dict)
    if not specs:
        raise HUCError("utilities: expected at least one utility", kind="structure")
    return tree, {check_name(name, "utilities"): utility_from_json(tree, spec, f"utilities.{name}")
                  for name, spec in specs.items()}


def _spec_document(source) -> Mapping:
    """The JSON object of a spec (:func:`read_model_spec`, :func:`read_spec`): a mapping, or a path to one."""
    doc = source if isinstance(source, Mapping) else load_json(read_document(Path(source), "tree and utilities"))
    if not isinstance(doc, Mapping):
        raise HUCError("tree and utilities: expected a JSON object with tree, labels and utilities", kind="type")
    return doc


#: The fields of the spec ``huc audit`` and ``huc fit`` read (``--tree SPEC.json``), then those of a
#: ``huc-case/1`` document, which is accepted as a spec too (its atoms unread).
SPEC_FIELDS = ("tree", "labels", "utilities", "columns", "format", "id", "description", "subgroups", "atoms",
               "comment")


def read_spec(source) -> tuple:
    """The spec of the commands that read predictions from array files (``huc audit --tree
    SPEC.json``, ``huc fit``; docs/specification.md §6): ``(tree, utilities, columns)``.
    ``labels`` are the tree's label order (Sec. 2.1's coordinates of ``p``); ``columns``, optional,
    lists the columns of a predictions file without a header row, in the file's order (a
    classifier's ``clf.classes_.tolist()``), and must name each label once; None when absent.  A
    field the spec does not define is an error (a misspelt ``columns`` would otherwise be
    ignored).

    Parameters
    ----------
    source : mapping, str or Path
        The spec, or the path of a file holding it.

    Returns
    -------
    tree : LabelTree
        The tree.
    utilities : dict of str to Utility
        The utilities by name.
    columns : list of str or None
        The columns of a headerless predictions file, in its order.

    Raises
    ------
    HUCError
        For an unknown field, ``columns`` that is not a list naming each label once, and what
        :func:`read_model_spec` refuses.

    Examples
    --------
    >>> tree, us, columns = read_spec({"tree": {"root": "r", "children": {"r": ["b", "a"]}}, "labels": ["b", "a"],
    ...                                "utilities": {"u": {"kind": "top_k", "k": 1}}, "columns": ["a", "b"]})
    >>> tree.labels, columns, tree.column_order(columns)
    (('b', 'a'), ['a', 'b'], [1, 0])
    >>> read_spec({"tree": {"root": "r", "children": {"r": ["a", "b"]}}, "labels": ["a", "b"],
    ...            "utilities": {"u": {"kind": "top_k", "k": 1}}, "colums": ["b", "a"]})
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: colums: unknown field of a spec (it has tree, labels, utilities and columns)
    """
    doc = _spec_document(source)
    extra = sorted(set(doc) - set(SPEC_FIELDS))
    if extra:
        raise HUCError(f"{printable(extra[0], 60)}: unknown field of a spec (it has tree, labels, utilities and "
                       "columns)", kind="unknown_field")
    tree, utilities = read_model_spec(doc)
    columns = doc.get("columns")
    if columns is not None:
        if not isinstance(columns, list):
            raise HUCError("columns: expected a list of label names (the file's columns in order)", kind="type")
        tree.column_order(columns, where="columns", what="a predictions file")  # each label once
        columns = label_names(columns, "columns")  # (integer classes as their decimal text)
    return tree, utilities, columns


def spec_schema() -> dict:
    """The JSON Schema of the spec :func:`read_spec` reads (``huc audit --tree SPEC.json``,
    ``huc fit``; docs/specification.md §6): the tree, the labels and the utilities as in
    ``huc-case/1``, and the optional ``columns``, the order of the columns of a predictions file
    without a header row.

    Returns
    -------
    dict
        The schema.

    Examples
    --------
    >>> schema = spec_schema()
    >>> schema["required"], schema["properties"]["columns"]["description"][:50]
    (['tree', 'labels', 'utilities'], 'The columns of a predictions file without a header')
    """
    case = case_schema()
    columns = {"type": "array", "items": {"type": ["string", "integer"]},
               "description": "The columns of a predictions file without a header row (.npy, or a CSV whose first "
                              "row is numbers), in the file's order, each label once: a classifier's "
                              "clf.classes_.tolist(). Without it such a file is read only where labels is in the "
                              "sorted order classes_ has. A file whose header (or Parquet column names) names the "
                              "labels is read by name."}
    labels = {**_NAMES, "description": "The tree's label order: the coordinates of p (Sec. 2.1), the order of the "
                                       "utilities' values and of huc apply's output"}
    optional = {key: {} for key in SPEC_FIELDS[4:]}  # (a huc-case/1 document serves as a spec)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "huc-spec.schema.json",
            "title": "the spec of huc audit --tree and huc fit --tree: tree, labels, utilities and the columns of "
                     "headerless predictions files", "type": "object", "additionalProperties": False,
            "required": ["tree", "labels", "utilities"],
            "properties": {"tree": case["properties"]["tree"], "labels": labels,
                           "utilities": case["properties"]["utilities"], "columns": columns, **optional},
            "$defs": case["$defs"]}


def is_dataset(path) -> bool:
    """Whether a ``--predictions`` path names a Parquet dataset (a folder, or a glob pattern of
    files) rather than one array file (Sec. 2.1's sample, larger than memory).

    Parameters
    ----------
    path : str or os.PathLike
        The path given.

    Returns
    -------
    bool
        True for a glob pattern (``*``, ``?`` or ``[``) or an existing folder.

    Examples
    --------
    >>> is_dataset("preds/part-*.parquet"), is_dataset("preds.npy")
    (True, False)
    """
    text = str(path)
    return any(ch in text for ch in "*?[") or Path(text).is_dir()


@dataclass(frozen=True)
class ParquetDataset:
    """A Parquet dataset's row groups (Sec. 2.1's sample, in files), in order (files sorted by name,
    each file's groups in turn), as :func:`parquet_dataset` reads them from the files' footers.

    Parameters
    ----------
    groups : tuple of (str, int, int)
        Per row group ``(file, group, rows)``: its file, its index in the file, its row count.
    columns : tuple of str
        The column names every file has, in one order.

    Examples
    --------
    >>> d = ParquetDataset((("a.parquet", 0, 5), ("b.parquet", 0, 2)), ("neg", "pos", "label"))
    >>> d.rows, [file for file, _, _ in d.groups]
    (7, ['a.parquet', 'b.parquet'])
    """

    groups: tuple
    columns: tuple

    @property
    def rows(self) -> int:
        """The sample's size ``n`` (Sec. 2.1): the rows of every group.

        Examples
        --------
        >>> ParquetDataset((("a.parquet", 0, 5), ("a.parquet", 1, 2)), ("neg", "pos")).rows
        7
        """
        return sum(g[2] for g in self.groups)


def parquet_dataset(path, what: str) -> ParquetDataset:
    """The :class:`ParquetDataset` of a folder of ``.parquet`` files or a glob pattern of files,
    read from the files' footers alone (no rows are read); one HUCError when pyarrow is missing,
    nothing matches, a file is not Parquet, or the files' columns differ (a sample's rows,
    Sec. 2.1, one set of columns).

    Parameters
    ----------
    path : str or os.PathLike
        A folder (its ``*.parquet`` files) or a glob pattern of files.
    what : str
        The option named in a message (``"--predictions"``).

    Returns
    -------
    ParquetDataset
        Its row groups, files sorted by name, and its columns.

    Raises
    ------
    HUCError
        No file found, pyarrow missing, a file that is not Parquet, or files whose columns differ.

    Examples
    --------
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> pq.write_table(pa.table({"neg": [0.75, 0.5, 0.25], "pos": [0.25, 0.5, 0.75]}), folder + "/a.parquet",
    ...                row_group_size=2)
    >>> d = parquet_dataset(folder, "--predictions")
    >>> [(Path(f).name, g, rows) for f, g, rows in d.groups], d.columns, d.rows
    ([('a.parquet', 0, 2), ('a.parquet', 1, 1)], ('neg', 'pos'), 3)
    >>> parquet_dataset(tempfile.mkdtemp(), "--predictions")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: --predictions: no .parquet files in the folder ...
    """
    import glob
    text = str(as_path(path, what))
    if Path(text).is_dir():
        files = sorted(str(p) for p in Path(text).glob("*.parquet") if p.is_file())
        where = f"in the folder {printable(text, 200)!r}"
    else:
        files = sorted(p for p in glob.glob(text) if Path(p).is_file())
        where = f"match {printable(text, 200)!r}"
    if not files:
        raise HUCError(f"{what}: no .parquet files {where}", kind="file")
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise HUCError(f"{what}: reading Parquet needs pyarrow (pip install 'huc-ref[parquet]')",
                       kind="dependency") from None
    groups, columns = [], None
    for name in files:
        try:
            meta = pq.ParquetFile(name).metadata
        except (OSError, ValueError) as err:
            raise HUCError(f"{what}: {printable(name, 200)!r} could not be read as Parquet ({err})",
                           kind="file") from None
        names = tuple(meta.schema.to_arrow_schema().names)
        if columns is None:
            columns = names
        elif names != columns:
            raise HUCError(f"{what}: {printable(name, 200)!r} has the columns {printable(repr(list(names)), 200)}, "
                           f"but {printable(files[0], 200)!r} has {printable(repr(list(columns)), 200)}; every "
                           "file of a dataset has the same columns in the same order", kind="file")
        groups += [(name, g, meta.row_group(g).num_rows) for g in range(meta.num_row_groups)]
    return ParquetDataset(tuple(groups), columns)
