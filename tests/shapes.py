"""Inputs shaped as users have them, shared by the tests and the benchmarks (seeded,
deterministic): random trees, the benchmark grid's workloads, million-digit and long-number
cases, tied and smoothed samples, wide softmax rows with tails near 1e-300, a decision tree's
predictions on scikit-learn's digits.

``workload`` gives a random label tree with ``K`` leaves, three utilities (a payoff table,
top-1 at depth 1 and a binary decision), three subgroups (everyone, a half, signed weights)
and ``n`` sample atoms.  ``kind="small"`` gives predictions with small denominators (counts
over at most 9 * K); ``kind="float"`` gives float-derived (dyadic) predictions, as produced
by ``Fraction(x)`` of a model's float output, renormalised exactly.
"""

from __future__ import annotations

import random
from fractions import Fraction

from huc_ref import BinaryDecision, FiniteDistribution, LabelTree, Subtree, Table, Top1AtDepth, TopK


def random_tree(K: int, rng: random.Random, max_children: int = 4) -> LabelTree:
    """A random tree with K leaves: internal nodes with 2..max_children children."""
    counter = iter(range(10**9))
    root = f"n{next(counter)}"
    children, stack = {}, [(root, K)]
    while stack:
        node, size = stack.pop()
        if size == 1:
            continue
        d = rng.randint(2, min(size, max_children))
        cuts = sorted(rng.sample(range(1, size), d - 1))
        parts = [b - a for a, b in zip([0] + cuts, cuts + [size])]
        kids = [f"n{next(counter)}" for _ in parts]
        children[node] = kids
        stack.extend(zip(kids, parts))
    return LabelTree.from_children(root, children)


def workload(n: int, K: int, kind: str = "small", seed: int = 0):
    """``(distribution, utilities)`` for the benchmark grid."""
    rng = random.Random(seed)
    tree = random_tree(K, rng)
    labels = tree.labels
    utilities = {
        "table": Table(tree, [Fraction(rng.randint(-4, 4), 4) for _ in labels]),
        "top1": Top1AtDepth(tree, 1),
        "decision": BinaryDecision(tree, labels[: K // 4], labels[: K // 2], Fraction(1, 3)),
    }
    y_true, y_prob = [], []
    for _ in range(n):
        if kind == "small":
            raw = [rng.randint(1, 9) for _ in labels]
            total = sum(raw)
            p = [Fraction(x, total) for x in raw]
        else:
            raw = [rng.random() + 1e-3 for _ in labels]
            total = sum(raw)
            p = [Fraction(x / total) for x in raw[:-1]]
            p.append(1 - sum(p))
        y_true.append(rng.choice(labels))
        y_prob.append(p)
    half = [rng.randint(0, 1) for _ in range(n)]
    signed = [Fraction(rng.choice((-1, 1)), 2) for _ in range(n)]
    dist = FiniteDistribution.from_sample(tree, y_true, y_prob,
                                          subgroups={"all": [1] * n, "half": half, "signed": signed})
    return dist, utilities


def million_digits(exponent: int = 2_100_000):
    """``(distribution, utilities)``: App. D.1's four leaves, three atoms whose predictions are moved
    by ``e = 3^-exponent``; the UC witness's exact moment has about ``0.477 exponent`` digits (a
    million for the default), the tests' pinned million-digit case."""
    t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    e, q = Fraction(1, 3 ** exponent), Fraction(1, 4)
    atoms = [{"weight": Fraction(1, 2), "p": [q + e, q - e, q, q], "eta": [q, 0, Fraction(3, 8), Fraction(3, 8)]},
             {"weight": Fraction(1, 4), "p": [q - e, q + e, q, q], "label": "y3"},
             {"weight": Fraction(1, 4), "p": [Fraction(1, 3), Fraction(1, 6), q, q], "label": "y2"}]
    return FiniteDistribution(t, atoms), {"u": Table(t, [-1, 1, 1, 1]), "J": Subtree(t, "vL")}


def tied_sample(n: int = 40, groups: int = 10, width: int = 10, seed: int = 3):
    """``(distribution, utilities)``: a calibration sample as a decision tree or a forest gives it,
    read exactly (``FiniteDistribution.from_floats``): ``groups x width`` classes on a two-level
    tree, ``n`` peaked softmax rows of which a third repeat earlier ones, 30% of the entries near
    ``1e-300`` before K.1's smoothing (``kappa_init = 10^-10``) makes them nearly equal, labels
    drawn uniformly; utilities top-3 correctness and top-1 at depth 1.  Many atoms share a score
    exactly, and many leaves of one row an entry: the ties float64 cannot settle."""
    import numpy as np
    children = {"r": [f"g{a}" for a in range(groups)]}
    children |= {f"g{a}": [f"y{a}_{b}" for b in range(width)] for a in range(groups)}
    tree = LabelTree.from_children("r", children)
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, 15.0, size=(n, tree.K))
    low = rng.random((n, tree.K)) < 0.3
    logits[low] = -300 * np.log(10) + rng.normal(0, 1, size=int(low.sum()))
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    P = np.maximum(P, 1e-300)
    P /= P.sum(axis=1, keepdims=True)
    for i in range(1, n):
        if rng.random() < 1 / 3:
            P[i] = P[rng.integers(0, i)]
    kappa = 1e-10
    P = (1 - kappa) * P + kappa / tree.K
    y = rng.integers(0, tree.K, n).tolist()
    return FiniteDistribution.from_floats(tree, y, P), {"top3": TopK(tree, 3), "top1": Top1AtDepth(tree, 1)}


def decision_tree_sample(n: int = 300, seed: int = 0):
    """``(distribution, utilities)``: scikit-learn's digits, a depth-6 decision tree fitted on 700
    images, its ``predict_proba`` on the next ``n`` (23 distinct rows of 300; two thirds of the
    entries 0) smoothed by K.1's ``kappa_init = 10^-10`` and read exactly; the ten digits under
    ``small`` (0-4) and ``large`` (5-9); top-1 correctness and the top-1 side (depth 1).  Needs
    scikit-learn (the ``examples`` extra)."""
    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.tree import DecisionTreeClassifier
    X, y = load_digits(return_X_y=True)
    idx = np.random.default_rng(seed).permutation(len(y))
    train, cal = idx[:700], idx[700:700 + n]
    P = DecisionTreeClassifier(max_depth=6, random_state=seed).fit(X[train], y[train]).predict_proba(X[cal])
    P = (1 - 1e-10) * P + 1e-10 / 10
    tree = LabelTree.from_children("r", {"r": ["small", "large"], "small": [f"d{k}" for k in range(5)],
                                         "large": [f"d{k}" for k in range(5, 10)]})
    return (FiniteDistribution.from_floats(tree, y[cal].tolist(), P),
            {"top1": TopK(tree, 1), "side": Top1AtDepth(tree, 1)})


def smoothed_sample(tree: LabelTree, seed: int) -> FiniteDistribution:
    """A calibration sample as a decision tree gives it: 2-6 leaf distributions of counts on 1-4
    labels, smoothed as K.1 does (``kappa = 10^-10``) and read back from float64 (rows whose exact
    values differ by a rounding), 6-24 rows of them with labels mostly drawn from them, and a
    second subgroup holding about half the rows."""
    rng, K, kappa = random.Random(seed), tree.K, Fraction(1, 10 ** 10)
    rows = []
    for _ in range(rng.randint(2, 6)):
        counts = {y: rng.randint(1, 20) for y in rng.sample(range(K), rng.randint(1, min(K, 4)))}
        exact = [Fraction(float((1 - kappa) * Fraction(counts.get(y, 0), sum(counts.values())) + kappa / K))
                 for y in range(K)]
        rows.append(exact[:-1] + [1 - sum(exact[:-1])])
    atoms = []
    for _ in range(rng.randint(6, 24)):
        r = rows[rng.randrange(len(rows))]
        y = rng.choices(range(K), weights=[float(x) for x in r])[0] if rng.random() < 0.7 else rng.randrange(K)
        atoms.append({"p": r, "label": tree.labels[y], "c": [1, rng.randint(0, 1)]})
    return FiniteDistribution(tree, atoms, subgroups=["all", "half"])


#: The trees of :func:`smoothed_run`: four leaves, a node of 30 children last at its depth, a depth-3
#: tree, a flat ten, a node of 12 children, and the README's digits hierarchy.
SAMPLE_TREES = {
    "four": LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]}),
    "wide": LabelTree.from_children("r", {"r": ["b", "a"], "a": [f"a{k}" for k in range(30)], "b": ["b0", "b1"]}),
    "deep": LabelTree.from_children("r", {"r": ["A", "B"], "A": ["C", "y5"], "C": ["y1", "y2"], "B": ["b1", "b2"]}),
    "flat ten": LabelTree.from_children("r", {"r": [f"c{k}" for k in range(10)]}),
    "twelve": LabelTree.from_children("r", {"r": ["x", "m"], "m": [f"m{k}" for k in range(12)], "x": ["x0", "x1"]}),
    "digits": LabelTree.from_nested({"digit": {"round": {"loops": ["d0", "d6", "d8", "d9"],
                                                         "curves": ["d2", "d3", "d5"]},
                                               "straight": ["d1", "d4", "d7"]}}),
}


def smoothed_run(seed: int):
    """``(distribution, utilities, method)`` of one drawn certified run: a tree of
    :data:`SAMPLE_TREES`, :func:`smoothed_sample` on it, top-1 correctness at random depths, a table
    (2 in 5), a rank and a binary decision (3 in 10 each), HUC-Boost or UC-Boost."""
    from huc_ref import Rank
    rng = random.Random(seed)
    tree = SAMPLE_TREES[rng.choice(list(SAMPLE_TREES))]
    height = max(len(tree.path_ids(y)) for y in range(tree.K)) - 1
    us = {f"top1@{k}": Top1AtDepth(tree, k) for k in sorted(rng.sample(range(1, height + 1), rng.randint(1, height)))}
    if rng.random() < 0.4:
        us["table"] = Table(tree, [rng.choice([-1, 0, 1, Fraction(1, 2)]) for _ in range(tree.K)])
    if rng.random() < 0.3:
        us["rank"] = Rank(tree, [Fraction(rng.randint(-2, 2), 2) for _ in range(tree.K)])
    if rng.random() < 0.3:
        D = rng.sample(tree.labels, rng.randint(2, tree.K))
        us["bd"] = BinaryDecision(tree, rng.sample(D, rng.randint(1, len(D) - 1)), D, Fraction(1, rng.randint(2, 4)))
    return smoothed_sample(tree, seed), us, rng.choice(["huc", "uc"])


def long_binary_case(atoms: int = 520, digits: int = 1990, seed: int = 0) -> dict:
    """A ``huc-case/1`` document: a binary tree (``neg``, ``pos``), ``atoms`` sample atoms whose
    predictions ``num/den`` have odd ``digits``-digit denominators drawn at random (each number
    within the format's 4,000 digits), random labels and the utility table ``[0, 1]``.  Its
    exact UC's witness sums over hundreds of atoms, whose denominators multiply: with the
    defaults, ``"a/b"`` of 997,914 characters (``bench/long_numbers.py`` prints it)."""
    rng = random.Random(seed)
    rows = []
    for _ in range(atoms):
        den = rng.randrange(10 ** (digits - 1), 10 ** digits) | 1
        num = rng.randrange(1, den)
        rows.append({"p": [f"{num}/{den}", f"{den - num}/{den}"], "label": rng.choice(("neg", "pos"))})
    return {"format": "huc-case/1", "id": f"long-binary-{atoms}x{digits}",
            "tree": {"root": "r", "children": {"r": ["neg", "pos"]}}, "labels": ["neg", "pos"],
            "utilities": {"u": {"kind": "table", "values": [0, 1]}}, "atoms": rows}


def wide_softmax(n: int, K: int, seed: int, shift: float = 680.0):
    """``n`` softmax rows over ``K`` classes whose first half of entries lie near ``e^-shift``
    (``1e-296`` by default: a wide classifier's tails), as float64, and one-hot labels drawn
    from the rows."""
    import numpy as np
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, K)) * 3
    Z[:, :K // 2] -= shift
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = np.array([rng.choice(K, p=p) for p in P])
    return P, np.eye(K)[y]


def decision_tree_fit(seed: int = 0):
    """The README's fit on a decision tree's predictions: scikit-learn's digits split in halves, a
    depth-5 tree fitted on the first, its ``predict_proba`` on the second split again into 449
    calibration rows (17 distinct) and 450 test rows; the README's digit hierarchy and top-1
    correctness at depths 1, 2 and 3.  ``(tree, utilities, labels, P_cal, y_cal, P_test, y_test)``.
    Needs scikit-learn (the ``examples`` extra)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.tree import DecisionTreeClassifier
    X, y = load_digits(return_X_y=True)
    X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, test_size=0.5, random_state=seed)
    clf = DecisionTreeClassifier(max_depth=5, random_state=seed).fit(X_fit, y_fit)
    labels = [f"d{k}" for k in clf.classes_]
    tree = LabelTree.from_nested({"digit": {"round": {"loops": ["d0", "d6", "d8", "d9"], "curves": ["d2", "d3", "d5"]},
                                            "straight": ["d1", "d4", "d7"]}}, labels=labels)
    utilities = {f"top1@{d}": Top1AtDepth(tree, d) for d in (1, 2, 3)}
    P, half = clf.predict_proba(X_rest), len(y_rest) // 2
    return tree, utilities, labels, P[:half], y_rest[:half], P[half:], y_rest[half:]


#: The two recalibration cases of a user study's datasets, by their shapes: UCI glass (214 rows, 9
#: features, six classes of 70, 76, 17, 13, 9 and 29 rows; half to train, 53 calibration rows)
#: and diamonds' clarity grades (53,940 rows, 8 ordered grades in diamonds' proportions; 60% to
#: train, 10,788 calibration rows, as many test rows).
RECALIBRATION_CASES = {
    "glass": {"counts": (70, 76, 17, 13, 9, 29), "features": 9, "separation": 0.45, "train": 107, "cal": 53,
              "test": 54,
              "tree": {"glass": {"window": {"float": ["building_float", "vehicle_float"], "building_nonfloat": None},
                                 "nonwindow": ["containers", "tableware", "headlamps"]}},
              "labels": ["building_float", "building_nonfloat", "vehicle_float", "containers", "tableware",
                         "headlamps"]},
    "diamonds": {"counts": (741, 9194, 13065, 12258, 8171, 5066, 3655, 1790), "features": 6, "separation": 0.3,
                 "train": 32364, "cal": 10788, "test": 10788,
                 "tree": {"clarity": {"included": ["I1"], "slight": ["SI2", "SI1"], "very_slight": ["VS2", "VS1"],
                                      "very_very_slight": ["VVS2", "VVS1"], "flawless": ["IF"]}},
                 "labels": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"]},
}


def recalibration_case(name: str, seed: int = 0) -> dict:
    """A classifier's calibration and test predictions on data of ``RECALIBRATION_CASES[name]``'s
    shape: Gaussian classes (means ``separation`` apart per feature, drawn once per seed; diamonds'
    grades drift along every feature, as ordered grades do), split at random into train,
    calibration and test rows, and Gaussian naive Bayes (numpy only: class means, per-feature
    variances and class frequencies from the training rows) predicting every class.  Returns
    ``{"tree", "utilities", "labels", "cal": (P, y), "test": (P, y)}`` with labels as names;
    utilities: top-1 correctness at depths 1 and 2 and the top-1 label."""
    import numpy as np
    spec = RECALIBRATION_CASES[name]
    rng = np.random.default_rng(seed)
    counts, d = np.array(spec["counts"]), spec["features"]
    K = len(counts)
    if name == "diamonds":
        means = np.cumsum(rng.normal(spec["separation"], spec["separation"] / 3, size=(K, d)), axis=0)
    else:
        means = rng.normal(0.0, spec["separation"] * 2, size=(K, d))
    y = rng.permutation(np.repeat(np.arange(K), counts))
    X = means[y] + rng.normal(size=(len(y), d))
    train, cal = np.arange(spec["train"]), np.arange(spec["train"], spec["train"] + spec["cal"])
    test = np.arange(spec["train"] + spec["cal"], spec["train"] + spec["cal"] + spec["test"])
    mu = np.array([X[train][y[train] == k].mean(axis=0) for k in range(K)])
    var = np.array([X[train][y[train] == k].var(axis=0) + 1e-9 for k in range(K)])
    prior = np.array([(y[train] == k).mean() for k in range(K)])

    def predict_proba(rows):  # log N(x; mu_k, var_k) summed over the features, plus log prior_k
        logits = np.log(prior) - 0.5 * (np.log(2 * np.pi * var).sum(axis=1)
                                        + (((rows[:, None, :] - mu) ** 2) / var).sum(axis=2))
        P = np.exp(logits - logits.max(axis=1, keepdims=True))
        return P / P.sum(axis=1, keepdims=True)
    tree = LabelTree.from_nested(spec["tree"], labels=spec["labels"])
    labels = np.array(spec["labels"])
    return {"tree": tree, "labels": spec["labels"],
            "utilities": {"top1@1": Top1AtDepth(tree, 1), "top1@2": Top1AtDepth(tree, 2), "top1": TopK(tree, 1)},
            "cal": (predict_proba(X[cal]), labels[y[cal]]), "test": (predict_proba(X[test]), labels[y[test]])}
