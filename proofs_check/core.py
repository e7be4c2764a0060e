"""The machinery of ``proofs_check``: the registry of claims, the honest method labels,
exact rational-function fields, and the exhaustive list of tree shapes.

Methods, strongest first (a check says which one it used, and never a stronger one):

* **proved symbolically**: both sides are built as exact rational functions of symbols
  (sympy's field ``QQ(p, u, ...)``, where every element is kept in lowest terms, so
  ``lhs - rhs == 0`` is a decision, not a heuristic), or ``sympy.simplify(lhs - rhs) == 0``
  with symbols carrying their assumptions where radicals, ``exp`` or ``log`` appear;
* **exhaustive**: proved symbolically for every tree shape up to a stated size;
* **checked at N exact rational points**: sampled, never called proved.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import sympy
from sympy import QQ

from huc_ref.tree import LabelTree

__all__ = ["FOUR", "Check", "CheckFailed", "Evidence", "CHECKS", "claim", "expect", "rational_field", "tree_shapes",
           "shape_tree", "shuffled_labels", "random_rational_case", "PROVED", "EXHAUSTIVE", "SAMPLED", "EXACT_EXAMPLE"]

#: The four-leaf tree of Sec. 2.2 (root v0; v0 -> vL, vR; vL -> y1, y2; vR -> y3, y4).
FOUR = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})

#: Both sides exact rational functions of symbols, equal (see above).
PROVED = "proved symbolically"
#: Proved symbolically on every tree shape up to a stated size.
EXHAUSTIVE = "exhaustive"
#: Evaluated exactly at a stated number of points: evidence, never called proved.
SAMPLED = "checked at exact rational points"
#: One of the paper's worked examples computed exactly.
EXACT_EXAMPLE = "exact worked example"
SIMULATED = "simulated"  # a probability statement: seeded draws, the count of draws stated


class CheckFailed(Exception):
    """A claim did not hold (or ``huc_ref`` disagreed with the paper's formula); see :func:`expect`."""


def expect(condition, message: str):
    """Fail the check with ``message`` unless ``condition`` (never stripped by ``python -O``).

    >>> expect(1 + 1 == 2, "arithmetic")
    >>> expect(False, "D_top != 1/4")
    Traceback (most recent call last):
    ...
    proofs_check.core.CheckFailed: D_top != 1/4
    """
    if not condition:
        raise CheckFailed(message)


@dataclass(frozen=True)
class Evidence:
    """What a check established: its method, a one-line account of what was done, and its scope
    in fields (``huc verify --json``): ``shapes`` and ``max_leaves`` (``unary_up_to``) for
    tree shapes enumerated, ``arities`` for node sizes, ``points`` (``cases``, ``runs``,
    ``updates``) for exact points sampled, ``symbolic`` for what was proved with symbols,
    ``trees`` for named trees, ``example`` for a worked example, ``labels_shuffled``.

    >>> Evidence(EXACT_EXAMPLE, "D_top = 1/4 as in App. D.1", scope={"example": "App. D.1"}).scope
    {'example': 'App. D.1'}
    """

    method: str
    detail: str
    scope: dict = field(default_factory=dict)


@dataclass
class Check:
    """One claim of the paper and the function that checks it (see :meth:`run`)."""

    name: str
    claim: str
    location: str
    func: Callable[[], Evidence]
    result: dict = field(default_factory=dict)

    def run(self) -> dict:
        """Run the check; record status (``ok`` / ``FAILED`` / ``ERROR``), method, detail, time.

        >>> ok = Check("demo", "1/4 + 1/4 = 1/2", "App. D.1", lambda: Evidence(PROVED, "exact"))
        >>> bad = Check("demo", "D_top = 1/4", "App. D.1", lambda: expect(False, "D_top != 1/4"))
        >>> [(r["status"], r["method"], r["detail"]) for r in (ok.run(), bad.run())]
        [('ok', 'proved symbolically', 'exact'), ('FAILED', '-', 'D_top != 1/4')]
        """
        t = time.perf_counter()
        try:
            ev = self.func()
            status, method, detail, scope = "ok", ev.method, ev.detail, ev.scope
        except CheckFailed as err:
            status, method, detail, scope = "FAILED", "-", str(err), {}
        except Exception as err:  # a crash in huc_ref is a failed claim, reported, not hidden
            status, method, detail, scope = "ERROR", "-", f"{type(err).__name__}: {err}", {}
        self.result = {"check": self.name, "claim": self.claim, "location": self.location,
                       "method": method, "status": status, "detail": detail, "scope": scope,
                       "seconds": round(time.perf_counter() - t, 3)}
        return self.result


#: The registry: every check :func:`claim` registered, in the order the modules registered them.
CHECKS: list[Check] = []


def claim(location: str, text: str):
    """Register a check function for a claim of the paper at ``location``.

    >>> @claim("App. D.1", "a demonstration claim")
    ... def check_demo():
    ...     return Evidence(SAMPLED, "one point")
    >>> registered = CHECKS.pop()  # keep the registry to the paper's claims
    >>> registered.name, registered.location, registered.run()["status"]
    ('check_demo', 'App. D.1', 'ok')
    """
    def register(func):
        func.__doc__ = func.__doc__ or f"{location}: {text}"
        CHECKS.append(Check(func.__name__, text, location, func))
        return func
    return register


def rational_field(*groups: tuple[str, int]):
    """The field ``QQ(x_1..x_n, ...)``; returns ``(field, [generators per group])``.

    >>> F, (p, u) = rational_field(("p", 2), ("u", 2))
    >>> (p[0] * u[0] + p[1] * u[1]) / (p[0] + p[1]) - u[0] == p[1] * (u[1] - u[0]) / (p[0] + p[1])
    True
    """
    names = [f"{g}{i + 1}" for g, n in groups for i in range(n)]
    fld, *gens = sympy.polys.fields.field(names, QQ)
    out, k = [], 0
    for _, n in groups:
        out.append(list(gens[k:k + n]))
        k += n
    return fld, out


def _series_reduced(n: int, memo={}) -> list:  # noqa: B006 - a deliberate cache
    """Unordered rooted trees with n leaves and no unary node, as canonical nested tuples."""
    if n in memo:
        return memo[n]
    if n == 1:
        memo[n] = [()]
        return memo[n]
    shapes = set()

    def partitions(total, max_part):  # integer partitions with parts <= max_part
        if total == 0:
            yield []
            return
        for part in range(min(total, max_part), 0, -1):
            for rest in partitions(total - part, part):
                yield [part] + rest

    for parts in partitions(n, n - 1):
        if len(parts) < 2:
            continue
        pools = [_series_reduced(k) for k in parts]
        combos = [[]]
        for pool in pools:
            combos = [c + [s] for c in combos for s in pool]
        for combo in combos:
            shapes.add(tuple(sorted(combo)))
    memo[n] = sorted(shapes)
    return memo[n]


def _with_one_unary(shape) -> list:
    """The shape with one unary node inserted above each of its nodes, in turn."""
    out = [((shape),)]  # above the root
    if shape:
        for i, child in enumerate(shape):
            for variant in _with_one_unary(child):
                out.append(tuple(sorted(shape[:i] + (variant,) + shape[i + 1:])))
    return out


def tree_shapes(max_leaves: int, unary_up_to: int = 0) -> list:
    """Every rooted tree shape with 1..max_leaves leaves and no unary node, plus every
    shape with exactly one unary node for up to ``unary_up_to`` leaves.

    >>> [len(_series_reduced(n)) for n in range(1, 7)]  # OEIS A000669
    [1, 1, 2, 5, 12, 33]
    """
    shapes = [s for n in range(1, max_leaves + 1) for s in _series_reduced(n)]
    for n in range(1, unary_up_to + 1):
        for s in _series_reduced(n):
            shapes.extend(sorted(set(_with_one_unary(s))))
    return shapes


def shape_tree(shape) -> LabelTree:
    """A :class:`LabelTree` for a nested-tuple shape: internal nodes ``v0, v1, ...`` in
    pre-order, leaves ``y1..yK`` in depth-first order.

    >>> shape_tree(((), ((), ()))).to_json()
    {'root': 'v0', 'children': {'v0': ['y1', 'v1'], 'v1': ['y2', 'y3']}}
    """
    counters = {"v": 0, "y": 0}

    def name(s):
        if s == ():
            counters["y"] += 1
            return f"y{counters['y']}"
        counters["v"] += 1
        return f"v{counters['v'] - 1}"

    children: dict[str, list[str]] = {}
    root = name(shape)
    work = [(root, shape)]
    while work:
        node, s = work.pop(0)
        if s == ():
            continue
        kids = [name(sub) for sub in s]
        children[node] = kids
        work = list(zip(kids, s)) + work  # pre-order walk without recursion
    return LabelTree.from_children(root, children)


def shuffled_labels(tree: LabelTree, rng: random.Random) -> LabelTree:
    """The same tree with its labels in a shuffled order, so that a label id is not a depth-first
    position (a bug that confuses the two then fails the check).

    >>> t = shuffled_labels(FOUR, random.Random(1))
    >>> t.to_json() == FOUR.to_json(), sorted(t.labels) == sorted(FOUR.labels), t.labels != FOUR.labels
    (True, True, True)
    """
    labels = list(tree.labels)
    rng.shuffle(labels)
    return LabelTree(tree.root, {v: list(tree.children(v)) for v in tree.internal_nodes}, labels)


def random_rational_case(rng: random.Random, tree: LabelTree, n_atoms: int, n_utilities: int = 2):
    """A random finite population (small denominators, shared predictions so scores tie)
    with table utilities; used where a claim is checked at exact rational points (Prop. 3.3,
    App. F.2, F.3).

    >>> d, us = random_rational_case(random.Random(0), FOUR, 4)
    >>> d.n, d.subgroups, sorted(us), sum(a.weight for a in d.atoms)
    (4, ('all', 'g'), ['u0', 'u1'], Fraction(1, 1))
    """
    from huc_ref import FiniteDistribution, Table

    def law(positive):
        raw = [rng.randint(1 if positive else 0, 5) for _ in tree.labels]
        if not any(raw):
            raw[0] = 1
        return [Fraction(x, sum(raw)) for x in raw]

    pool = [law(True) for _ in range(max(1, n_atoms // 2))]
    atoms = [{"weight": Fraction(1, n_atoms), "c": [1, rng.choice([0, 1, Fraction(-1, 2)])],
              "p": rng.choice(pool), "eta": law(False)} for _ in range(n_atoms)]
    dist = FiniteDistribution(tree, atoms, ["all", "g"])
    us = {f"u{i}": Table(tree, [Fraction(rng.randint(-4, 4), 4) for _ in tree.labels]) for i in range(n_utilities)}
    return dist, us
