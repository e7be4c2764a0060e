"""Case and result files: ``huc-case/1`` in, ``huc-result/1`` out (SPEC §6).

Everything an audit needs travels in one JSON document, so any implementation in any
language can be checked against this one.  Numbers are exact: integers, ``"a/b"`` or
decimal strings; JSON numbers with a fraction part are read as exact decimals (the
parser hands their text over, never a binary float).  A bad document raises one
:class:`HUCError` naming the path inside it, e.g. ``atoms[3].p: sums to 999/1000, not 1``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .audit import AuditResult, audit
from .distribution import FiniteDistribution
from .errors import HUCError
from .rational import MAX_DIGITS, fraction_text
from .tree import LabelTree
from .utilities import Aggregated, BinaryDecision, Decision, PerAtom, Rank, Subtree, Table, Top1AtDepth, TopK, Utility

__all__ = ["Case", "read_case", "load_json", "dumps", "utility_from_json"]

CASE_FORMAT = "huc-case/1"
RESULT_FORMAT = "huc-result/1"


def _no_duplicates(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise HUCError(f"the key {key!r} appears twice in one JSON object")
        out[key] = value
    return out


def _parse_int(text: str):
    # Over MAX_DIGITS the text is kept, and rejected with its JSON path by exact().
    return int(text) if len(text) <= MAX_DIGITS else text


def load_json(text: str | bytes):
    """Parse JSON exactly: fractional numbers stay decimal text, NaN/Infinity stay text.

    >>> load_json('{"p": [0.1, 2, NaN]}')
    {'p': ['0.1', 2, 'NaN']}
    """
    try:
        return json.loads(text, parse_float=str, parse_int=_parse_int, parse_constant=str,
                          object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as err:
        raise HUCError(f"not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})") from None
    except (UnicodeDecodeError, RecursionError) as err:
        raise HUCError(f"not valid JSON: {type(err).__name__}") from None


def dumps(doc) -> str:
    """The project's one JSON layout: two-space indent, keys in insertion order, final newline.

    >>> dumps({"value": "1/4", "interval": None})
    '{\\n  "value": "1/4",\\n  "interval": null\\n}\\n'
    """
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _require(obj, key, where, kind=None):
    if not isinstance(obj, Mapping):
        raise HUCError(f"{where}: expected an object")
    if key not in obj:
        raise HUCError(f"{where + '.' if where else ''}{key}: missing")
    value = obj[key]
    if kind is not None and not isinstance(value, kind):
        names = {str: "a string", list: "a list", dict: "an object", int: "an integer"}
        raise HUCError(f"{where + '.' if where else ''}{key}: expected {names.get(kind, kind)}")
    return value


_UTILITY_FIELDS = {
    "table": {"values"}, "subtree": {"node"}, "rank": {"theta"}, "top_k": {"k"},
    "decision": {"actions", "order"}, "binary_decision": {"S", "D", "tau"},
    "top1_at_depth": {"depth"}, "aggregated": {"base", "S"}, "per_atom": {"values"},
}


def utility_from_json(tree: LabelTree, spec, where: str = "utility") -> Utility:
    """Build a utility from its ``huc-case/1`` description (SPEC §6).

    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> utility_from_json(t, {"kind": "table", "values": [0, "1/2"]}).b
    (Fraction(0, 1), Fraction(1, 2))
    >>> utility_from_json(t, {"kind": "tabel"}, "utilities.u")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: utilities.u.kind: unknown utility kind 'tabel' (known: aggregated, ...)
    """
    kind = _require(spec, "kind", where, str)
    if kind not in _UTILITY_FIELDS:
        raise HUCError(f"{where}.kind: unknown utility kind {kind!r} (known: {', '.join(sorted(_UTILITY_FIELDS))})")
    extra = set(spec) - _UTILITY_FIELDS[kind] - {"kind"}
    if extra:
        raise HUCError(f"{where}: unknown field {sorted(extra)[0]!r} for kind {kind!r}")
    required = _UTILITY_FIELDS[kind] - ({"order"} if kind == "decision" else set())
    for key in sorted(required):
        _require(spec, key, where)
    try:
        if kind == "table":
            return Table(tree, spec["values"])
        if kind == "subtree":
            node = spec["node"]
            if not isinstance(node, str) or node not in tree.nodes:
                raise HUCError(f"node: {node!r} is not a node of the tree")
            return Subtree(tree, node)
        if kind == "rank":
            return Rank(tree, spec["theta"])
        if kind == "top_k":
            return TopK(tree, spec["k"])
        if kind == "decision":
            return Decision(tree, spec["actions"], spec.get("order"))
        if kind == "binary_decision":
            return BinaryDecision(tree, spec["S"], spec["D"], spec["tau"])
        if kind == "top1_at_depth":
            return Top1AtDepth(tree, spec["depth"])
        if kind == "aggregated":
            return Aggregated(utility_from_json(tree, spec["base"], f"{where}.base"), spec["S"])
        return PerAtom(tree, spec["values"])
    except HUCError as err:
        msg = str(err)
        raise HUCError(msg if msg.startswith(where) else f"{where}.{msg}") from None


@dataclass(frozen=True)
class Case:
    """A parsed ``huc-case/1`` document: a distribution and named utilities on one tree."""

    id: str
    description: str
    tree: LabelTree
    distribution: FiniteDistribution
    utilities: dict

    def audit(self) -> AuditResult:
        """Run the exact audit (:func:`huc_ref.audit.audit`).

        >>> case = read_case({"format": "huc-case/1", "tree": {"root": "r", "children": {"r": ["a", "b"]}},
        ...                   "labels": ["a", "b"], "utilities": {"u": {"kind": "table", "values": [0, 1]}},
        ...                   "atoms": [{"p": ["1/2", "1/2"], "eta": ["1/4", "3/4"]}]})
        >>> case.audit().uc.sup, case.result_json()["huc"]["value"], case.to_json()["atoms"][0]["eta"]
        (Fraction(1, 4), '1/4', ['1/4', '3/4'])
        """
        return audit(self.distribution, self.utilities)

    def result_json(self) -> dict:
        """The ``huc-result/1`` document of this case."""
        return self.audit().to_json(self.id)

    def to_json(self) -> dict:
        """The case as a ``huc-case/1`` document (numbers as exact strings)."""
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


def read_case(source, *, renormalize: bool = False, smooth=None) -> Case:
    """Read a ``huc-case/1`` document from a path, JSON text or an already parsed object.

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
    huc_ref.errors.HUCError: atoms[0].p: sums to 999/1000, not 1
    """
    # A str is JSON text when it is blank or opens an array or object; otherwise a path.
    if isinstance(source, Path) or (isinstance(source, str) and source.strip()
                                    and not source.lstrip().startswith(("{", "["))):
        try:
            text = Path(source).read_bytes()
        except OSError as err:
            raise HUCError(f"cannot read case file {str(source)!r}: {err.strerror}") from None
        doc = load_json(text)
    elif isinstance(source, (str, bytes)):
        doc = load_json(source)
    else:
        doc = source
    if not isinstance(doc, Mapping):
        raise HUCError("case: expected a JSON object")
    fmt = doc.get("format")
    if fmt != CASE_FORMAT:
        raise HUCError(f"format: expected {CASE_FORMAT!r}, got {fmt!r}")
    known = {"format", "id", "description", "tree", "labels", "subgroups", "utilities", "atoms", "comment"}
    extra = set(doc) - known
    if extra:
        raise HUCError(f"{sorted(extra)[0]}: unknown field of a {CASE_FORMAT} document")
    case_id = doc.get("id", "case")
    if not isinstance(case_id, str):
        raise HUCError("id: expected a string")
    description = doc.get("description", "")
    if not isinstance(description, str):
        raise HUCError("description: expected a string")
    tree_doc = _require(doc, "tree", "", dict)
    extra = set(tree_doc) - {"root", "children"}
    if extra:
        raise HUCError(f"tree.{sorted(extra)[0]}: unknown field (a tree has root and children)")
    root = _require(tree_doc, "root", "tree")
    children = tree_doc.get("children", {})
    labels = _require(doc, "labels", "", list)
    tree = LabelTree(root, children, labels)
    subgroups = doc.get("subgroups", ["all"])
    if not isinstance(subgroups, list):
        raise HUCError("subgroups: expected a list of names")
    atoms = _require(doc, "atoms", "", list)
    dist = FiniteDistribution(tree, atoms, subgroups, renormalize=renormalize, smooth=smooth)
    specs = _require(doc, "utilities", "", dict)
    if not specs:
        raise HUCError("utilities: expected at least one utility")
    utilities = {name: utility_from_json(tree, spec, f"utilities.{name}") for name, spec in specs.items()}
    for name, u in utilities.items():
        if isinstance(u, PerAtom) and len(u.rows) != dist.n:
            raise HUCError(f"utilities.{name}.values: has {len(u.rows)} rows, but there are {dist.n} atoms")
    return Case(case_id, description, tree, dist, utilities)
