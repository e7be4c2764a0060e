"""Hypothesis strategies named after the paper's objects: label trees, predictions,
finite distributions and utilities.  Small sizes, with unary and non-binary nodes and
deliberately few distinct predictions so that scores tie."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from huc_ref.distribution import FiniteDistribution
from huc_ref.tree import LabelTree
from huc_ref.utilities import Aggregated, BinaryDecision, Decision, PerAtom, Rank, Subtree, Table, Top1AtDepth, TopK

SMALL = [Fraction(x, 4) for x in range(-4, 5)]  # utility and subgroup values in [-1, 1]


@st.composite
def label_trees(draw, max_leaves: int = 9, min_leaves: int = 1):
    """Random rooted trees: unary nodes, non-binary nodes, shuffled label order."""
    k = draw(st.integers(min_leaves, max_leaves))
    counter = iter(range(10_000))
    root = f"v{next(counter)}"
    children: dict[str, list[str]] = {}
    leaves = []
    stack = [(root, k)]
    while stack:
        node, size = stack.pop()
        unary = draw(st.integers(0, 5)) == 5  # occasional unary node; the minimal draw is none
        if size == 1 and not unary:
            leaves.append(node)
            continue
        d = 1 if unary else draw(st.integers(2, min(size, 4)))
        cuts = sorted(draw(st.lists(st.integers(1, size - 1), min_size=d - 1, max_size=d - 1,
                                    unique=True))) if d > 1 else []
        parts = [b - a for a, b in zip([0] + cuts, cuts + [size])]
        kids = [f"v{next(counter)}" for _ in parts]
        children[node] = kids
        stack.extend(zip(kids, parts))
    labels = draw(st.permutations(leaves))
    return LabelTree(root, children, labels)


@st.composite
def predictions(draw, K: int, max_weight: int = 6):
    """A point of the open simplex with small denominators."""
    raw = draw(st.lists(st.integers(1, max_weight), min_size=K, max_size=K))
    total = sum(raw)
    return tuple(Fraction(x, total) for x in raw)


@st.composite
def label_laws(draw, K: int):
    """A label law ``eta``; zeros allowed."""
    raw = draw(st.lists(st.integers(0, 4), min_size=K, max_size=K).filter(lambda r: sum(r) > 0))
    total = sum(raw)
    return tuple(Fraction(x, total) for x in raw)


@st.composite
def finite_distributions(draw, tree: LabelTree, max_atoms: int = 6, kind: str | None = None):
    """Population atoms, sample atoms or a mixture, with 1-3 subgroups and tied predictions."""
    n = draw(st.integers(1, max_atoms))
    pool = draw(st.lists(predictions(tree.K), min_size=1, max_size=3))
    n_sub = draw(st.integers(1, 3))
    subgroups = ["all", "g1", "g2"][:n_sub]
    kind = kind or draw(st.sampled_from(["population", "sample", "mixed"]))
    raw_w = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    atoms = []
    for i in range(n):
        atom = {"weight": Fraction(raw_w[i], sum(raw_w)),
                "c": [Fraction(1)] + [draw(st.sampled_from([Fraction(0), Fraction(1), Fraction(-1, 2)]))
                                      for _ in range(n_sub - 1)],
                "p": draw(st.sampled_from(pool))}
        sample = kind == "sample" or (kind == "mixed" and draw(st.booleans()))
        if sample:
            atom["label"] = draw(st.sampled_from(tree.labels))
        else:
            atom["eta"] = draw(label_laws(tree.K))
        atoms.append(atom)
    return FiniteDistribution(tree, atoms, subgroups)


@st.composite
def ancestor_closed_sets(draw, tree: LabelTree):
    """An ancestor-closed set ``S`` of internal nodes (App. G)."""
    chosen = []
    for v in tree.internal_nodes:  # pre-order: a parent is decided before its children
        parent = tree.parent(v)
        if (parent is None or parent in chosen) and draw(st.booleans()):
            chosen.append(v)
    return chosen


@st.composite
def utilities(draw, tree: LabelTree, n_atoms: int = 0, families=None):
    """One utility from any family of SPEC §5 (per_atom only when ``n_atoms`` > 0)."""
    K = tree.K
    kinds = families or ["table", "subtree", "rank", "top_k", "decision", "binary_decision",
                         "top1_at_depth", "aggregated"] + (["per_atom"] if n_atoms else [])
    kind = draw(st.sampled_from(kinds))
    vec = st.lists(st.sampled_from(SMALL), min_size=K, max_size=K)
    if kind == "table":
        return Table(tree, draw(vec))
    if kind == "subtree":
        return Subtree(tree, draw(st.sampled_from(tree.nodes)))
    if kind == "rank":
        return Rank(tree, draw(vec))
    if kind == "top_k":
        return TopK(tree, draw(st.integers(1, K)))
    if kind == "decision":
        names = ["a", "b", "c"][:draw(st.integers(1, 3))]
        return Decision(tree, {a: draw(vec) for a in names}, draw(st.permutations(names)))
    if kind == "binary_decision":
        S = draw(st.lists(st.sampled_from(tree.labels), unique=True))
        D = draw(st.lists(st.sampled_from(tree.labels), unique=True))
        return BinaryDecision(tree, S, D, draw(st.sampled_from([Fraction(0), Fraction(1, 3), Fraction(1, 2), 1])))
    if kind == "top1_at_depth":
        return Top1AtDepth(tree, draw(st.integers(0, 4)))
    if kind == "aggregated":
        return Aggregated(draw(utilities(tree, families=["table", "rank", "binary_decision"])),
                          draw(ancestor_closed_sets(tree)))
    return PerAtom(tree, [draw(vec) for _ in range(n_atoms)])
