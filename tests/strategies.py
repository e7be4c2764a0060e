"""Hypothesis strategies named after the paper's objects: label trees, predictions,
finite distributions and utilities.  Small sizes, with unary and non-binary nodes and
deliberately few distinct predictions so that scores tie."""

from __future__ import annotations

import functools
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
def tiny_predictions(draw, K: int, max_weight: int = 6):
    """A point of the open simplex with some entries near ``1e-300`` (a peaked softmax's tails,
    as exact rationals): the small numbers float64 code loses and exact code must carry."""
    raw = [Fraction(x) for x in draw(st.lists(st.integers(1, max_weight), min_size=K, max_size=K))]
    for j in draw(st.lists(st.integers(0, K - 1), max_size=K - 1, unique=True)):
        raw[j] = Fraction(draw(st.integers(1, 9)), 10 ** draw(st.integers(290, 310)))
    total = sum(raw)
    return tuple(x / total for x in raw)


@st.composite
def label_laws(draw, K: int):
    """A label law ``eta``; zeros allowed."""
    raw = draw(st.lists(st.integers(0, 4), min_size=K, max_size=K).filter(lambda r: sum(r) > 0))
    total = sum(raw)
    return tuple(Fraction(x, total) for x in raw)


@st.composite
def finite_distributions(draw, tree: LabelTree, max_atoms: int = 6, kind: str | None = None, tiny: bool = False):
    """Population atoms, sample atoms or a mixture, with 1-3 subgroups and tied predictions
    (``tiny``: some predictions with entries near 1e-300)."""
    n = draw(st.integers(1, max_atoms))
    points = st.one_of(predictions(tree.K), tiny_predictions(tree.K)) if tiny else predictions(tree.K)
    pool = draw(st.lists(points, min_size=1, max_size=3))
    if tiny and tree.K > 1 and draw(st.booleans()):  # a neighbour: scores 1e-300 apart, which no working precision sees
        p, (i, j) = list(pool[0]), draw(st.lists(st.integers(0, tree.K - 1), min_size=2, max_size=2, unique=True))
        if p[j] > Fraction(1, 10**200):
            delta = Fraction(draw(st.integers(1, 9)), 10 ** draw(st.integers(290, 310)))
            p[i], p[j] = p[i] + delta, p[j] - delta
            pool.append(tuple(p))
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
    """One utility from any family of docs/specification.md §5 (per_atom only when ``n_atoms`` > 0)."""
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


# --------------------------------------------------------------------------- the shapes users have
#: The shapes that broke code which had passed hundreds of small random cases (issue: wide
#: trees, tiny probabilities): each is drawn by :func:`wide_trees`, and pinned by @example.
TREE_SHAPES = ("flat", "two_level", "wide_last", "wide_inner", "chain", "random")


def shape_tree(shape: str, size: int, width: int, order_seed: int) -> LabelTree:
    """A tree of one of :data:`TREE_SHAPES`, its labels in a shuffled order (``order_seed`` 0: depth-first).

    * ``flat``: the root and ``size`` leaves (a plain multiclass classifier);
    * ``two_level``: ``size`` groups of ``width`` leaves (up to 100 classes);
    * ``wide_last``: a node with ``width`` children that is the last node at its depth;
    * ``wide_inner``: a wide node first at its depth, with a binary sibling after it;
    * ``chain``: a unary and binary chain of depth ``size`` above a wide node;
    * ``random``: nested groups of two or three, ``size`` leaves.
    """
    import random as _random
    children: dict[str, list[str]] = {}
    leaves: list[str] = []

    def leaf(name):
        leaves.append(name)
        return name

    if shape == "flat":
        children["r"] = [leaf(f"y{i}") for i in range(size)]
    elif shape == "two_level":
        children["r"] = [f"g{g}" for g in range(size)]
        for g in range(size):
            children[f"g{g}"] = [leaf(f"y{g}_{i}") for i in range(width)]
    elif shape == "wide_last":
        children["r"] = ["a", "w"]
        children["a"] = [leaf("a0"), leaf("a1")]
        children["w"] = [leaf(f"w{i}") for i in range(width)]  # the last node at depth 1; its run ends the cut
    elif shape == "wide_inner":
        children["r"] = ["w", "b"]
        children["w"] = [leaf(f"w{i}") for i in range(width)]
        children["b"] = ["b0", leaf("b1")]
        children["b0"] = [leaf("b00"), leaf("b01"), leaf("b02")]
    elif shape == "chain":
        node = "r"
        for d in range(size):
            nxt = f"c{d}"
            children[node] = [nxt] if d % 2 else [nxt, leaf(f"side{d}")]
            node = nxt
        children[node] = [leaf(f"w{i}") for i in range(width)]
    else:
        rng = _random.Random(order_seed * 7919 + size)
        queue, count = [("r", size)], 0
        while queue:
            name, k = queue.pop()
            if k == 1:
                leaf(name)
                continue
            d = min(k, rng.choice([2, 3]))
            cuts = sorted(rng.sample(range(1, k), d - 1))
            parts = [b - a for a, b in zip([0] + cuts, cuts + [k])]
            kids = []
            for part in parts:
                count += 1
                kids.append(f"n{count}")
                queue.append((f"n{count}", part))
            children[name] = kids
    labels = list(leaves)
    if order_seed:
        _random.Random(order_seed).shuffle(labels)
    return LabelTree("r", children, labels)


@st.composite
def wide_trees(draw, max_leaves: int = 100):
    """Flat trees of 2..60 leaves, two-level trees up to 100 classes, nodes of up to 30 children
    first or last at their depth, deep chains and random nests, with shuffled label orders."""
    shape = draw(st.sampled_from(TREE_SHAPES))
    if shape == "flat":
        size, width = draw(st.integers(2, min(60, max_leaves))), 0
    elif shape == "two_level":
        size = draw(st.integers(2, 10))
        width = draw(st.integers(1, max(1, min(12, max_leaves // size))))
    elif shape == "chain":
        size, width = draw(st.integers(1, 40)), draw(st.integers(2, 30))
    elif shape == "random":
        size, width = draw(st.integers(2, 40)), 0
    else:
        size, width = 0, draw(st.integers(2, 30))
    return shape_tree(shape, size, width, draw(st.integers(0, 3)))


def softmax_rows(seed: int, K: int, n: int, sigma: float, floor_exponent: int = 0):
    """``n`` peaked softmax rows (float64) of logits with standard deviation ``sigma``, as a
    trained classifier's ``predict_proba`` gives them; with ``floor_exponent`` (e.g. -300)
    some entries are pushed down to about ``10**floor_exponent``; a third of the rows repeat
    earlier ones (exact ties), and one row has its two largest entries equal."""
    import numpy as np
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, sigma, size=(n, K))
    if floor_exponent:
        low = rng.random((n, K)) < 0.3
        logits[low] = floor_exponent * np.log(10) + rng.normal(0, 1, size=int(low.sum()))
    logits -= logits.max(axis=1, keepdims=True)
    P = np.exp(logits)
    P = np.maximum(P, 1e-300)
    if n > 1 and K > 2:
        top2 = np.argsort(-P[0])[:2]
        P[0, top2[1]] = P[0, top2[0]]  # a tie between the two most probable labels
    P /= P.sum(axis=1, keepdims=True)
    for i in range(n):
        if i and rng.random() < 1 / 3:
            P[i] = P[rng.integers(0, i)]
    return P


def thirty_children(seed: int, n: int, ties: bool = False):
    """A tree whose node ``a`` has 30 children (32 labels), ``n`` softmax rows on it with a fifth
    of their entries near 1e-300 (``ties``: rounded to a tenth first, so that scores tie), and
    the generator that drew them, for the caller's labels and subgroups: the shapes that broke
    what hundreds of random small cases had passed."""
    import numpy as np
    t = LabelTree.from_children("r", {"r": ["a", "b"], "a": [f"a{k}" for k in range(30)], "b": ["b0", "b1"]},
                                labels=[f"a{k}" for k in range(30)] + ["b0", "b1"])  # (the rows' column order)
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 3, (n, t.K))
    logits[rng.random((n, t.K)) < 0.2] = -690.0  # entries near 1e-300
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    if ties:
        P = np.round(P, 1) + 2.0**-10
    P /= P.sum(axis=1, keepdims=True)
    return t, P, rng


@st.composite
def shaped_trees(draw, max_leaves: int = 40):
    """The small random trees of :func:`label_trees` or the shapes users have (:func:`wide_trees`:
    flat, two-level, a node of up to 30 children first or last at its depth, deep chains)."""
    return draw(st.one_of(label_trees(), wide_trees(max_leaves)))


def _exact_rows(P):
    """Float rows as the exact rationals they hold, each divided by its exact sum."""
    rows = [[Fraction(float(x)) for x in r] for r in P]
    return [[x / sum(r) for x in r] for r in rows]


@functools.cache
def pinned_case(name: str):
    """``(distribution, utilities)`` of the exact pins (``@example``) on the shapes that broke code
    which had passed hundreds of small random cases, as exact rationals:

    * ``"flat ten"``: a flat 10-class tree (shuffled labels), peaked softmax rows with repeats;
    * ``"thirty children"``: a node with 30 children, the last node at its depth;
    * ``"hundred classes near 1e-300"``: a 10 x 10 tree, rows with entries near 1e-300;
    * ``"a million digits"``: App. D.1's four leaves with predictions moved by ``3^-2100000``:
      the exact HUC has over a million digits.
    """
    from huc_ref.utilities import class_indicator
    if name == "a million digits":
        from tests.shapes import million_digits
        return million_digits()
    import numpy as np
    shape, size, width, sigma, floor, n = {"flat ten": ("flat", 10, 0, 3.0, 0, 9),
                                           "thirty children": ("wide_last", 0, 30, 3.0, 0, 8),
                                           "hundred classes near 1e-300": ("two_level", 10, 10, 15.0, -300, 6)}[name]
    t = shape_tree(shape, size, width, 1)
    rows = _exact_rows(softmax_rows(len(name), t.K, n, sigma, floor))
    rng = np.random.default_rng(len(name))
    labels = [t.labels[int(k)] for k in rng.integers(0, t.K, n)]
    laws = _exact_rows(softmax_rows(len(name) + 1, t.K, n, sigma, floor))
    atoms = [{"p": p, **({"label": y} if i % 2 else {"eta": eta}), "c": [1, Fraction(int(k), 2)]}
             for i, (p, y, eta, k) in enumerate(zip(rows, labels, laws, rng.integers(-2, 3, n)))]
    us = {"top3": TopK(t, 3), "first": class_indicator(t, t.labels[0]),
          "rank": Rank(t, [Fraction((k % 5) - 2, 2) for k in range(t.K)])}
    if shape != "flat":
        wide = "w" if shape == "wide_last" else "g9"
        us |= {"top1": Top1AtDepth(t, 1), "leaf": Top1AtDepth(t, 2), "wide": Subtree(t, wide)}
    return FiniteDistribution(t, atoms, ["all", "signed"]), us


#: The names of :func:`pinned_case`.
PINNED = ("flat ten", "thirty children", "hundred classes near 1e-300", "a million digits")


# --------------------------------------------------------------------------- a real dataset
def digits_split(split: int = 0):
    """scikit-learn's load_digits split as examples/real_data.py splits it (60% of it held out,
    then calibration / validation / test): ``(X, y, {"train", "cal", "val", "test"} -> indices)``."""
    import pytest
    pytest.importorskip("sklearn")
    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    X, y = load_digits(return_X_y=True)
    idx = np.arange(len(y))
    train, rest = train_test_split(idx, test_size=0.6, stratify=y, random_state=split)
    cal, rest = train_test_split(rest, test_size=2 / 3, stratify=y[rest], random_state=split)
    val, test = train_test_split(rest, test_size=0.5, stratify=y[rest], random_state=split)
    return X, y, {"train": train, "cal": cal, "val": val, "test": test}
