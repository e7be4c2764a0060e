"""The fast path on the shapes and numbers real data has: flat and wide trees, peaked softmax
output with entries down to 1e-300, exact ties, and numbers float64 cannot hold.

Each engine pairing here compares with the exact engine (the reference) on the same
predictions: a float array ``P`` is audited exactly as the rationals ``Fraction(P[i, y])``
renormalised exactly (the fast path's means ``N / pi`` do not depend on a row's scale).
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from huc_ref import (
    FiniteDistribution,
    HUCError,
    LabelTree,
    Rank,
    Table,
    Top1AtDepth,
    TopK,
    audit,
    class_indicator,
    fast,
)
from tests.strategies import TREE_SHAPES, shape_tree, softmax_rows, wide_trees

ENGINES = ["numpy"] + (["numba"] if fast.numba_available() else [])
TOL = 1e-9


def exact_audit_of_floats(tree, y, P, groups, us):
    """The exact engine on the float rows' binary values, renormalised exactly."""
    rows = [[Fraction(float(x)) for x in r] for r in P]
    names = [tree.labels[int(i)] for i in y]
    subgroups = {k: [Fraction(float(x)) for x in v] for k, v in groups.items()}
    return audit(FiniteDistribution.from_sample(tree, names, rows, subgroups=subgroups, renormalize=True), us)


def distinct_scores_float64_merges(tree, y, P, us) -> bool:
    """Whether two atoms have distinct exact scores closer than float64's rounding of them
    (relative 1e-13): a group float64's error bounds cannot order, which the fast path orders by
    the floats' exact values."""
    from huc_ref.audit import atom_terms
    rows = [[Fraction(float(x)) for x in r] for r in P]
    d = FiniteDistribution.from_sample(tree, [tree.labels[int(i)] for i in y], rows, renormalize=True)
    for u in us.values():
        exact = sorted({t.score for t in atom_terms(d, u)})
        if any(b - a <= Fraction(1, 10**13) * max(abs(a), abs(b)) for a, b in zip(exact, exact[1:])):
            return True
    return False


def assert_close(fast_doc, exact):
    assert [(r["subgroup"], r["utility"], r["node"]) for r in fast_doc["candidates"]] == \
        [(r.subgroup, r.utility, r.node) for r in exact.candidates]
    for row, ref in zip(fast_doc["candidates"], exact.candidates):
        assert abs(row["sup"] - float(ref.sup)) < TOL, (row, ref)
    assert abs(fast_doc["uc"]["value"] - float(exact.uc.sup)) < TOL
    assert abs(fast_doc["huc"]["value"] - float(exact.huc.sup)) < TOL


def utilities_for(tree):
    us = {"top1": TopK(tree, 1), "top1_d1": Top1AtDepth(tree, 1), "e0": class_indicator(tree, tree.labels[0])}
    if tree.K >= 3:
        us["rank"] = Rank(tree, [1, "1/2"] + [-1] * (tree.K - 2))
    return us


@pytest.mark.parametrize("engine", ENGINES)
def test_a_flat_ten_class_tree_audits(engine):
    """The issue's reproduction: a flat 10-leaf tree crashed ``cut_sums`` (IndexError in reduceat)."""
    t = LabelTree.from_children("r", {"r": [f"y{i}" for i in range(10)]})
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(10), 1000)
    y = rng.integers(0, 10, 1000)
    us = {"top1": TopK(t, 1)}
    got = fast.audit(y, P, t, us, accelerator=engine).to_json()
    assert_close(got, exact_audit_of_floats(t, y, P, {"all": np.ones(1000)}, us))


@pytest.mark.parametrize("shape", TREE_SHAPES)
def test_subtree_sums_on_every_shape(shape):
    """Every node's mass from the depth cuts equals the exact sum, for wide nodes last at their depth too."""
    t = shape_tree(shape, 7, 30, 1)
    P = softmax_rows(3, t.K, 5, 15.0, -300)
    got = fast.FastTree(t).subtree_sums(P)
    for i, row in enumerate(P):
        for a in range(len(t.nodes)):
            want = sum(Fraction(float(row[y])) for y in t.label_ids_below(a))
            assert abs(Fraction(float(got[i, a])) - want) <= want * Fraction(1, 10**13)


@settings(max_examples=25)
@given(tree_args=st.tuples(st.sampled_from(TREE_SHAPES), st.integers(2, 12), st.integers(2, 30), st.integers(0, 3)),
       sample_args=st.tuples(st.integers(1, 20), st.sampled_from([0.5, 3.0, 15.0]), st.sampled_from([0, -30, -300]),
                             st.integers(0, 2**32 - 1)))
@example(tree_args=("flat", 10, 0, 0), sample_args=(20, 3.0, 0, 1))
@example(tree_args=("flat", 60, 0, 2), sample_args=(12, 15.0, -300, 2))
@example(tree_args=("wide_last", 0, 30, 1), sample_args=(15, 15.0, -300, 3))
@example(tree_args=("two_level", 10, 10, 3), sample_args=(10, 15.0, -300, 4))
@example(tree_args=("chain", 12, 30, 1), sample_args=(8, 3.0, -30, 5))
@example(tree_args=("two_level", 2, 2, 0), sample_args=(20, 0.5, -30, 3944107))  # distinct scores 1e-30 apart
def test_fast_audit_equals_exact_on_the_shapes_users_have(tree_args, sample_args):
    """Peaked softmax output (logit sd up to 15, entries down to 1e-300, repeated rows and a tied
    top pair) on flat, two-level, wide and deep trees: both fast backends agree with the exact engine,
    also where distinct exact scores lie closer than float64 resolves."""
    shape, size, width, order = tree_args
    if shape == "two_level":
        size = min(size, 10)
        width = min(width, 100 // size)
    tree = shape_tree(shape, size, width, order)
    n, sigma, floor, seed = sample_args
    P = softmax_rows(seed, tree.K, n, sigma, floor)
    rng = np.random.default_rng(seed)
    y = rng.integers(0, tree.K, size=n)
    groups = {"all": np.ones(n), "g": rng.integers(0, 2, size=n).astype(float)}
    us = utilities_for(tree)
    exact = exact_audit_of_floats(tree, y, P, groups, us)
    for engine in ENGINES:
        assert_close(fast.audit(y, P, tree, us, subgroups=groups, accelerator=engine).to_json(), exact)


def test_probabilities_below_1e_12_are_ranked_as_they_are():
    """A relative, not absolute, tolerance: ranks among entries of 1e-13..3e-13 decide the
    utility at the label (the old absolute 1e-12 tolerance tied them and ranked by label order)."""
    t = LabelTree.from_children("r", {"r": ["a", "b", "c", "d"]})
    P = np.array([[1 - 6e-13, 1e-13, 2e-13, 3e-13], [1 - 6e-13, 3e-13, 2e-13, 1e-13]] * 3)
    y = np.array([1, 3] * 3)  # the least probable label each time: rank 4, theta -1
    us = {"rank": Rank(t, [1, 1, -1, -1])}
    exact = exact_audit_of_floats(t, y, P, {"all": np.ones(6)}, us)
    assert exact.uc.sup > Fraction(1, 2)  # about 1 - (-1) ... weighted: a real violation
    for engine in ENGINES:
        assert_close(fast.audit(y, P, t, us, accelerator=engine).to_json(), exact)


def test_exact_ties_in_rationals_are_ties_and_tiny_rationals_are_exact():
    """audit_distribution decides exactly what float64 cannot: masses 1/10 + 2/10 against 3/10 tie
    (the first in pre-order wins), scores equal as rationals are one block, and a mass of 1e-200
    is not rounded into a tie with 2e-200."""
    t = LabelTree.from_children("r", {"r": ["a", "z"], "a": ["x", "y"], "z": ["w", "v"]})
    tiny = Fraction(1, 10**200)
    atoms = [{"p": ["1/10", "2/10", "3/10", "4/10"], "label": "x"},
             {"p": ["3/10", "1/10", "2/10", "4/10"], "label": "w"},
             {"p": ["1/4", "1/4", "1/4", "1/4"], "label": "v"},
             {"p": [tiny, 2 * tiny, Fraction(1, 2) - tiny, Fraction(1, 2) - 2 * tiny], "label": "y"},
             {"p": [2 * tiny, tiny, Fraction(1, 2) - 2 * tiny, Fraction(1, 2) - tiny], "label": "y"}]
    d = FiniteDistribution(t, atoms)
    us = {"top1_d1": Top1AtDepth(t, 1), "top1": TopK(t, 1), "rank": Rank(t, [1, 0, 0, -1]),
          "table": Table(t, ["1/3", "2/3", 0, 1])}
    exact = audit(d, us)
    for engine in ENGINES:
        got = fast.audit_distribution(d, us, accelerator=engine).to_json()
        assert_close(got, exact)
        for row, ref in zip(got["candidates"], exact.candidates):  # the same witnesses, signs included
            assert abs(row["moment"] - float(ref.moment)) < TOL, (row, ref)


@pytest.mark.parametrize("value, text", [(Fraction(1, 10**400), "1e-400"), (Fraction(1, 10**320), "1e-320")])
def test_rationals_below_float64_are_refused(value, text):
    t = LabelTree.from_children("r", {"r": ["a", "b"]})
    d = FiniteDistribution(t, [{"p": [value, 1 - value], "label": "a"}, {"p": ["1/2", "1/2"], "label": "b"}])
    with pytest.raises(HUCError, match=rf"^atoms\[0\]\.p\[0\]: {text} is outside float64's normal range"):
        fast.audit_distribution(d, {"u": TopK(t, 1)}).to_json()
    with pytest.raises(HUCError, match=r"^atoms\[0\]\.p\[0\]: "):
        fast.boost(d, {"u": Table(t, [0, 1])}).to_json()


@pytest.mark.parametrize("value", [Fraction(2**1024 - 2**970), -Fraction(2**1024 - 2**970), Fraction(3**700),
                                   2**1024])
def test_rationals_beyond_float64_are_one_error(value):
    """``numbers.floats`` names a rational that rounds past the largest double, also one just below
    2^1024 that rounds up to it (``float`` raises OverflowError there; it used to escape)."""
    from huc_ref.fast.numbers import floats
    with pytest.raises(HUCError, match=r"^w\[0\]\[1\]: -?1\.80e\+308 is outside float64's normal range|"
                                       r"^w\[0\]\[1\]: -?[0-9.]+e\+[0-9]+ is outside float64's normal range"):
        floats([[1, value]], "w[{}][{}]")
    assert floats([[1, Fraction(2**1024 - 2**971)]], "w[{}][{}]")[0, 1] == np.finfo(float).max


@pytest.mark.parametrize("engine", ENGINES)
def test_subnormal_float_input_is_refused(engine):
    t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    P = np.array([[0.5, 0.5, 0.0], [0.5, 0.5 - 1e-320, 1e-320]])
    with pytest.raises(HUCError, match=r"^y_prob\[1\]: entry 2 is 1e-320, a subnormal float64"):
        fast.audit([0, 1], P, t, {"u": TopK(t, 1)}, accelerator=engine).to_json()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("shape", ["four leaves", "flat"])
def test_a_zero_entry_is_taken_except_at_the_label(engine, shape):
    """A decision tree's zeros: where no label lies, every mean the audit reads is defined (F.4: only
    the label's path), and the answer is the exact engine's on predictions smoothed by kappa =
    10^-40, within 10^-9 (an independent computation, and the limit a smoothing takes); at a label
    the path's means are 0/0 (A.2 assumes p_y > 0), and taking them as 0 would make the UC residual
    and the sum of the node terms differ by u(y)."""
    if shape == "flat":
        t = LabelTree.from_children("r", {"r": ["y1", "y2", "y3", "y4"]})
    else:
        t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    us = {"u": Table(t, [-1, 1, 1, 1]), "top": TopK(t, 1)}
    P = np.array([[0.5, 0.5, 0.0, 0.0], [0.25] * 4, [0.0, 0.25, 0.25, 0.5], [0.5, 0.5, 0.0, 0.0]])
    with pytest.raises(HUCError, match=r"^y_prob\[3\]: the label 'y3' has probability 0, where the audit's means "
                                       r"are 0/0 \(the paper assumes p_y > 0, A\.2\); mix each row with"):
        fast.audit([0, 2, 3, 2], P, t, us, accelerator=engine)
    y = [1, 2, 3, 0]
    got = fast.audit(y, P, t, us, accelerator=engine)
    kappa = Fraction(1, 10**40)
    rows = [[(1 - kappa) * Fraction(x) + kappa / 4 for x in row] for row in P.tolist()]
    want = audit(FiniteDistribution.from_sample(t, y, rows), us)
    assert len(got.candidates) == len(want.candidates)
    for g, w in zip(got.candidates, want.candidates):
        assert (g.subgroup, g.utility, g.node) == (w.subgroup, w.utility, w.node)
        assert abs(g.sup - w.sup) <= 1e-9


@settings(max_examples=60)
@given(wide_trees(max_leaves=40), st.integers(0, 2**32 - 1), st.sampled_from(ENGINES))
@example(shape_tree("flat", 10, 0, 1), 0, "numpy")
@example(shape_tree("wide_last", 0, 30, 2), 1, ENGINES[-1])
@example(shape_tree("two_level", 10, 10, 3), 2, ENGINES[-1])
def test_prop_3_3_holds_on_decision_tree_predictions(tree, seed, engine):
    """Prop. 3.3, ``UC <= |V_T(u)| HUC`` for each utility, on every fast audit of predictions with
    exact zeros (a decision tree's leaf frequencies: counts over 7, most entries 0): Theorem 3.1's
    telescoping, which the bound rests on, holds on the float path too.  A label drawn at a zero
    entry is refused (its path's means are 0/0): audited with those means taken as 0, the bound
    fails (UC 0.05 against 2 x 0.023 for a class indicator).
    Such labels are then moved to the row's most probable label."""
    rng = np.random.default_rng(seed)
    n, K = 40, tree.K
    counts = np.zeros((n, K))
    for i in range(n):
        np.add.at(counts[i], rng.integers(0, min(K, 5), 7) if i % 2 else rng.integers(0, K, 7), 1)
    P = counts / 7
    y = rng.integers(0, K, n)  # some at a zero entry: refused, then moved to a label the row holds
    us = {"top1": TopK(tree, 1), "rank": Rank(tree, [Fraction(1 - (k % 3)) for k in range(K)]),
          "first": class_indicator(tree, tree.labels[0]), "depth1": Top1AtDepth(tree, 1)}
    at_zero = P[np.arange(n), y] == 0
    if at_zero.any():
        with pytest.raises(HUCError, match=rf"^y_prob\[{int(np.argmax(at_zero))}\]: the label .* has probability 0"):
            fast.audit(y, P, tree, us, accelerator=engine)
        y[at_zero] = P[at_zero].argmax(axis=1)
    r = fast.audit(y, P, tree, us, subgroups={"odd": np.arange(n) % 2}, accelerator=engine)
    for name, u in us.items():
        relevant = len(u.relevant_nodes)
        uc = max(c.sup for c in r.candidates if c.utility == name and c.node is None)
        huc = max((c.sup for c in r.candidates if c.utility == name and c.node is not None), default=0.0)
        assert uc <= relevant * huc + 1e-12, (name, uc, huc, relevant)


def test_huge_weights_do_not_overflow_to_zero():
    """Weights are scaled by their largest before they are summed: [1e308, 1e308] is [1/2, 1/2]."""
    t = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    P = np.array([[0.5, 0.5], [0.2, 0.8]])
    us = {"u": class_indicator(t, "pos")}
    assert fast.audit([1, 1], P, t, us, sample_weight=[1e308, 1e308]) == fast.audit([1, 1], P, t, us)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_top1_mass_float64_rounds_into_a_tie_is_decided_exactly(engine):
    """Mass of z = 0.5 + 1e-30 rounds to 0.5, the mass of a: float64 would pick a (first in
    pre-order); the binary values say z, and so must the fast path (the label x lies below z)."""
    t = LabelTree.from_children("r", {"r": ["a", "z"], "z": ["x", "w"]})
    t = t.with_labels(t.labels)  # (the arrays' columns are in its order)
    P = np.array([[0.5, 0.5, 1e-30], [0.25, 0.5, 0.25]])
    y = np.array([1, 0])
    us = {"top1_d1": Top1AtDepth(t, 1)}
    exact = exact_audit_of_floats(t, y, P, {"all": np.ones(2)}, us)
    got = fast.audit(y, P, t, us, accelerator=engine).to_json()
    assert_close(got, exact)
    # by hand: z chosen in both rows, scores 1/2 and 3/4 with residuals +1/2 (x below z) and -3/4
    # (a is not), weights 1/2: blocks +1/4 and -3/8, so UC = 3/8 (choosing a would give 5/8)
    assert got["uc"]["value"] == pytest.approx(0.375, abs=1e-15)
    d = FiniteDistribution(t, [{"p": ["1/2", "1/2", Fraction(1, 10**30)], "label": "x"},
                               {"p": ["1/4", "1/2", "1/4"], "label": "a"}], renormalize=True)
    assert_close(fast.audit_distribution(d, us, accelerator=engine).to_json(), audit(d, us))


@pytest.mark.parametrize("engine", ENGINES)
def test_scores_float64_cannot_separate_are_separated_exactly(engine):
    """Scores 1/2 and 1/2 + 1e-200 are one float; exactly they are two blocks with residuals
    +1/2 and -1/2, so UC = 1/4 (one block would cancel them to about 0)."""
    t = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "pos"},
                               {"p": [Fraction(1, 2) - Fraction(1, 10**200), Fraction(1, 2) + Fraction(1, 10**200)],
                                "label": "neg"}])
    us = {"u": class_indicator(t, "pos")}
    exact = audit(d, us)
    assert exact.uc.sup > Fraction(1, 4)  # 1/4 + 1e-200 / 2: the second atom's block alone
    got = fast.audit_distribution(d, us, accelerator=engine).to_json()
    assert_close(got, exact)


@settings(max_examples=30)
@given(st.data())
def test_rational_cases_on_wide_trees_equal_the_exact_engine(data):
    """Small-denominator predictions (many exact ties in masses, ranks and scores), every utility
    family and population, sample or mixed atoms, on the wide shapes: audit_distribution decides
    what float64 cannot exactly, on both backends, and agrees with the exact engine."""
    from tests.strategies import finite_distributions, utilities, wide_trees
    tree = data.draw(wide_trees(max_leaves=40))
    d = data.draw(finite_distributions(tree))
    us = {f"u{i}": data.draw(utilities(tree, n_atoms=d.n)) for i in range(data.draw(st.integers(1, 2)))}
    exact = audit(d, us)
    for engine in ENGINES:
        got = fast.audit_distribution(d, us, accelerator=engine).to_json()
        assert got["relevant_nodes"] == {k: list(v) for k, v in exact.relevant_nodes.items()}
        assert_close(got, exact)


@settings(max_examples=30)
@given(wide_trees(max_leaves=40), st.integers(0, 2**16), st.booleans(), st.sampled_from(ENGINES))
@example(shape_tree("flat", 10, 0, 1), 0, True, "numpy")
@example(shape_tree("flat", 10, 0, 1), 0, True, ENGINES[-1])
@example(shape_tree("wide_last", 0, 30, 2), 5, False, ENGINES[-1])
@example(shape_tree("flat", 100, 0, 1), 3, True, ENGINES[-1])  # 100 classes, entries near 1e-300 (seed % 3 == 0)
def test_the_fast_audit_is_the_same_bits_after_permuting_rows(tree, seed, weighted, engine):
    """Determinism (docs/engines.md, "Determinism"): permuting the rows (with exact ties, tiny entries,
    subgroups and weights) gives the same huc-result/1 document, bit for bit, on both
    backends: each tie block's sum does not depend on the order of its atoms
    (``block_sums``) and the weights are normalised by an exactly rounded sum."""
    import json

    from huc_ref import Table, Top1AtDepth, fast
    n = 50
    P = softmax_rows(seed, tree.K, n, 3.0, -300 if seed % 3 == 0 else 0)
    rng = np.random.default_rng(seed)
    y = rng.integers(0, tree.K, n)
    us = {"top1": Top1AtDepth(tree, 1), "t": Table(tree, [Fraction(int(v), 4) for v in rng.integers(-4, 5, tree.K)])}
    groups = {"half": (rng.random(n) < 0.5).astype(float), "signed": rng.choice([-0.5, 0.5], n)}
    w = rng.random(n) * 1e3 if weighted else None
    base = json.dumps(fast.audit(y, P, tree, us, subgroups=groups, sample_weight=w, accelerator=engine).to_json())
    for _ in range(3):
        perm = rng.permutation(n)
        again = fast.audit(y[perm], P[perm], tree, us, subgroups={k: v[perm] for k, v in groups.items()},
                           sample_weight=None if w is None else w[perm], accelerator=engine)
        assert json.dumps(again.to_json()) == base


@settings(max_examples=60)
@given(wide_trees())
@example(shape_tree("flat", 10, 0, 0))
@example(shape_tree("wide_last", 0, 30, 2))
@example(shape_tree("chain", 12, 30, 1))
@example(shape_tree("two_level", 10, 10, 3))
def test_cut_blocks_and_path_agreement_are_the_trees_own(tree):
    """The top-1 terms' shortcuts (K.2) against the exact tree: ``cut_block(d)`` is a slice exactly
    where the cut's rows are one run in order, and the same rows; ``agreement(d)[y, j]`` is the
    deepest ``k <= d`` whose node on ``y``'s path (A.2's ``v_k``, the leaf repeated below its depth)
    is the candidate ``j`` or an ancestor of it, and ``v_k`` contains the candidate for every
    shallower ``k``: the rows the terms keep."""
    ft = fast.FastTree(tree)
    for d in range(ft.H + 1):
        cut, below = ft.cut(d)
        block = ft.cut_block(d)
        contiguous = cut.tolist() == list(range(cut[0], cut[0] + len(cut)))
        assert (block is not None) == contiguous
        if block is not None:
            assert np.arange(ft.n_nodes)[block].tolist() == cut.tolist()
        A = ft.agreement(d)
        for j, row in enumerate(cut):
            a = int(ft.level_nodes[row])
            ancestors = {a}
            while tree.parent_ids[min(ancestors)] >= 0:  # node ids are pre-order: the smallest is the highest
                ancestors.add(tree.parent_ids[min(ancestors)])
            for y in range(tree.K):
                path = list(tree.path_ids(y))
                path += path[-1:] * (d + 1 - len(path))
                holds = [path[k] in ancestors for k in range(d + 1)]
                assert holds == [k <= A[y, j] for k in range(d + 1)], (d, j, y)


@settings(max_examples=40)
@given(wide_trees(), st.integers(0, 2**16))
@example(shape_tree("flat", 12, 0, 0), 1)
@example(shape_tree("wide_last", 0, 30, 2), 3)
@example(shape_tree("two_level", 10, 10, 3), 5)  # 100 classes, entries near 1e-300
def test_the_top1_shortcuts_give_the_same_bits_as_the_long_way(tree, seed):
    """numpy's sample pass reads a cut that is one level of the level sums as one block
    (``FastTree.cut_block``) and where the label's path holds the chosen node from one table
    (``FastTree.agreement``): the huc-result/1 document is bit for bit the one of the long way
    (the cut candidate by candidate, the two paths gathered and compared), for top-1 at every depth."""
    import json

    from huc_ref.fast import tree as fast_tree
    n = 60
    P = softmax_rows(seed, tree.K, n, 3.0, -300 if seed % 2 else 0)
    rng = np.random.default_rng(seed)
    y = rng.integers(0, tree.K, n)
    ft = fast.FastTree(tree)
    us = {**utilities_for(tree), **{f"top1@{d}": Top1AtDepth(tree, d) for d in range(1, ft.H + 1)}}
    groups = {"half": (rng.random(n) < 0.5).astype(float), "all": np.ones(n)}
    assert ft.cut_block(1) is not None and ft.agreement(1) is not None  # (the shortcuts are there to be taken)
    base = json.dumps(fast.audit(y, P, tree, us, subgroups=groups).to_json())
    for name in ("cut_block", "agreement"):
        saved = getattr(fast_tree.FastTree, name)
        setattr(fast_tree.FastTree, name, lambda self, d: None)
        try:
            assert json.dumps(fast.audit(y, P, tree, us, subgroups=groups).to_json()) == base, name
        finally:
            setattr(fast_tree.FastTree, name, saved)


@settings(max_examples=30)
@given(wide_trees(), st.integers(0, 2**16), st.sampled_from([1, 3, 7]))
@example(shape_tree("flat", 12, 0, 0), 1, 3)
@example(shape_tree("wide_last", 0, 30, 2), 3, 7)
@example(shape_tree("two_level", 10, 10, 3), 5, 1)  # 100 classes, entries near 1e-300
def test_audits_read_in_stretches_agree_with_one_stretch(tree, seed, size):
    """numpy's column scan reads ``CACHE_BLOCK`` positions at a time; on the users' shapes, with
    ties and subgroups, an audit read a few positions at a time has every candidate's sup of the
    audit read in one stretch (to the rounding of a sum: the prefix sums restart per stretch), on
    UC, top-1 at every depth and the shapes' own utilities.  Witnesses are not compared here: where
    two prefix sums are equal in exact arithmetic, rounding picks the first among them (seen: the
    root's column of top-1 at depth 1, equal to the UC column, read in one stretch took a later
    left end than UC's, read one position at a time the same as UC's); the witness positions are
    checked bit for bit on exact data (tests/test_fast.py, the scan in stretches)."""
    from huc_ref.fast import intervals
    n = 60
    P = softmax_rows(seed, tree.K, n, 3.0, -300 if seed % 2 else 0)
    if seed % 3 == 0:
        P = np.repeat(P[: n // 3], 3, axis=0)  # tie blocks of three atoms
    rng = np.random.default_rng(seed)
    y = rng.integers(0, tree.K, n)
    us = {**utilities_for(tree), **{f"top1@{d}": Top1AtDepth(tree, d) for d in range(1, fast.FastTree(tree).H + 1)}}
    groups = {"half": (rng.random(n) < 0.5).astype(float), "all": np.ones(n), "signed": rng.uniform(-1, 1, n)}
    whole = fast.audit(y, P, tree, us, subgroups=groups)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(intervals, "CACHE_BLOCK", size)
        parts = fast.audit(y, P, tree, us, subgroups=groups)
    assert len(parts.candidates) == len(whole.candidates)
    for a, b in zip(parts.candidates, whole.candidates):
        assert (a.subgroup, a.utility, a.node) == (b.subgroup, b.utility, b.node)
        assert a.sup == pytest.approx(b.sup, rel=1e-12, abs=1e-15), (a, b)


@settings(max_examples=30)
@given(wide_trees(max_leaves=60), st.integers(0, 2**16))
@example(shape_tree("chain", 12, 30, 1), 3)
@example(shape_tree("wide_last", 0, 30, 2), 4)
def test_paths_walked_up_the_parents_are_the_path_table_bit_for_bit(tree, seed):
    """A tree whose path table would be too large (``PATH_TABLE_CELLS``) walks its labels' paths
    up the parent pointers instead, and one without the tables of where paths part
    (``FastTree.agreements``) compares them: the same huc-result/1 document, bit for bit, on both
    backends."""
    import json

    from huc_ref.fast import tree as fast_tree
    n = 40
    P = softmax_rows(seed, tree.K, n, 3.0, -300 if seed % 2 else 0)
    rng = np.random.default_rng(seed)
    y = rng.integers(0, tree.K, n)
    us = utilities_for(tree)
    groups = {"half": (rng.random(n) < 0.5).astype(float)}
    for engine in ENGINES:
        kept = fast.FastTree(tree)
        base = json.dumps(fast.audit(y, P, tree, us, subgroups=groups, accelerator=engine).to_json())
        saved, fast_tree.PATH_TABLE_CELLS = fast_tree.PATH_TABLE_CELLS, 0
        try:
            walked = fast.FastTree(tree)
            assert walked.path_rows is None and kept.path_rows is not None
            assert np.array_equal(walked.paths(y), kept.paths(y))
            for label in range(tree.K):  # against the exact tree's own paths (A.2), the leaf repeated below it
                path = list(tree.path_ids(label))
                below = path[-1:] * (walked.H + 1 - len(path))
                assert walked.path_nodes(np.array([label]))[:, 0].tolist() == path + below
            assert json.dumps(fast.audit(y, P, tree, us, subgroups=groups, accelerator=engine).to_json()) == base
        finally:
            fast_tree.PATH_TABLE_CELLS = saved
        # the path table kept, the agreement tables not (too many labels x candidates): the compiled
        # pass compares the two paths node by node instead of reading where they part
        agreements, fast_tree.FastTree.agreements = fast_tree.FastTree.agreements, lambda self, depths: None
        try:
            assert json.dumps(fast.audit(y, P, tree, us, subgroups=groups, accelerator=engine).to_json()) == base
        finally:
            fast_tree.FastTree.agreements = agreements


@pytest.mark.parametrize("K", [2, 10, 30])
@pytest.mark.parametrize("engine", ENGINES)
def test_on_a_flat_tree_the_root_row_is_the_uc_row_and_both_are_exact(K, engine):
    """A flat tree's root term is the UC residual (Sec. 3.1 on the path root -> y), so the fast
    path scans the UC column once and copies it to the root's row: sup, witness and moment are
    the UC row's, and both equal the exact engine's root row (exact ties: rows of sixty-fourths;
    a subgroup with weights 0 and 1/2)."""
    t = LabelTree.from_children("r", {"r": [f"y{i}" for i in range(K)]})
    t = t.with_labels(t.labels)  # (the arrays' columns are in its order)
    rng = np.random.default_rng(K)
    n = 300
    P = (rng.multinomial(64 - K, np.ones(K) / K, n) + 1) / 64  # dyadic rows: float64 holds them and their sums
    y = rng.integers(0, K, n)
    groups = {"all": np.ones(n), "half": rng.integers(0, 2, n) / 2}
    us = {"e0": class_indicator(t, "y0"), "top1": TopK(t, 1)}
    got = fast.audit(y, P, t, us, subgroups=groups, accelerator=engine)
    exact = exact_audit_of_floats(t, y, P, groups, us)
    rows = {(c.subgroup, c.utility, c.node): c for c in got.candidates}
    want = {(c.subgroup, c.utility, c.node): c for c in exact.candidates}
    for (g, u, node), row in rows.items():
        if node == "r":
            uc = rows[(g, u, None)]
            assert (row.sup, row.interval, row.moment) == (uc.sup, uc.interval, uc.moment)
        assert abs(row.sup - float(want[(g, u, node)].sup)) < TOL
    assert any(c.node == "r" and c.sup > 0 for c in got.candidates)


def test_weighted_row_sums_are_the_row_sums_of_the_products_bit_for_bit():
    """The column-by-column form (skipping 0, not multiplying by 1) gives the same bits as
    summing the products left to right, on peaked rows with entries down to 1e-300."""
    from huc_ref.fast.numbers import row_sums, weighted_row_sums
    for seed in range(20):
        K = 2 + seed % 15
        P = softmax_rows(seed, K, 50, 15.0, -300)
        u = np.random.default_rng(seed).choice([0.0, 1.0, -1.0, 0.5, 1 / 3], size=K)
        U = np.broadcast_to(u, P.shape)
        assert weighted_row_sums(P, U).tobytes() == row_sums(P * U).tobytes()


@pytest.mark.parametrize("threaded", [False, True])
def test_a_float_arrays_near_tie_is_ordered_by_the_floats_exact_values(monkeypatch, threaded):
    """Found by the shapes test: two rows (0.5, 0.5 and entries near 1e-30) whose exact scores
    differ by about 1e-30 round to one float score.  The fast path orders them by the floats'
    exact values, from the float array as from the rationals (``audit_distribution``), and
    agrees with the exact engine (as one block, a sup was more than 1e-3 off); the result says
    which groups it decided so.  ``threaded``: the chunks and tables on two threads, where numba
    sorts apart from its scans (``fast.workers.run_staged``): those sorts settle the block by
    the exact scores too."""
    if threaded:
        import importlib
        passes = importlib.import_module("huc_ref.fast.audit")
        monkeypatch.setattr(passes, "SERIAL_CELLS", 0)
        monkeypatch.setattr(passes, "THREADS", 2)
    tree = shape_tree("two_level", 2, 2, 0)
    n, seed = 20, 3944107
    P = softmax_rows(seed, tree.K, n, 0.5, -30)
    rng = np.random.default_rng(seed)
    y = rng.integers(0, tree.K, size=n)
    groups = {"all": np.ones(n), "g": rng.integers(0, 2, size=n).astype(float)}
    us = utilities_for(tree)
    assert distinct_scores_float64_merges(tree, y, P, us)
    exact = exact_audit_of_floats(tree, y, P, groups, us)
    rows = [[Fraction(float(x)) for x in r] for r in P]
    d = FiniteDistribution.from_sample(tree, [tree.labels[int(i)] for i in y], rows, renormalize=True,
                                       subgroups={k: [Fraction(float(x)) for x in v] for k, v in groups.items()})
    for engine in ENGINES:
        for result in (fast.audit(y, P, tree, us, subgroups=groups, accelerator=engine),
                       fast.audit_distribution(d, us, accelerator=engine)):
            assert_close(result.to_json(), exact)
            assert result.near_ties.decided_groups > 0 and result.near_ties.undecided_groups == 0


@pytest.mark.parametrize("row, message", [
    ([0.5, 0.4], "y_prob[1]: sums to 0.9, not 1 (within 1e-05)"),
    ([np.nan, 1.0], "y_prob[1]: entries must be finite and nonnegative, with a positive finite sum"),
    ([1e-320, 1.0], "y_prob[1]: entry 0 is 1e-320, a subnormal float64"),
    ([-0.1, 1.1], "y_prob[1]: entries must be finite and nonnegative, with a positive finite sum"),
])
def test_a_flat_trees_bad_row_gets_one_message_on_both_accelerators(row, message):
    """The compiled flat-tree pass checks the rows in one read and hands a bad chunk to numpy's
    pass, which names the row and the rule: the same message on both accelerators."""
    t = LabelTree.from_children("r", {"r": ["a", "b"]})
    for engine in ENGINES:
        with pytest.raises(HUCError) as err:
            fast.audit([0, 1], np.array([[0.5, 0.5], row]), t, {"u": class_indicator(t, "b")}, accelerator=engine)
        assert str(err.value).startswith(message), (engine, str(err.value))


@pytest.mark.parametrize("shape, size, width", [("flat", 100, 0), ("wide_last", 2, 30), ("two_level", 10, 10)])
@pytest.mark.parametrize("rows, piece", [(64, None), (700, None), (50, 7)])
def test_level_sums_add_every_nodes_children_left_to_right(monkeypatch, shape, size, width, rows, piece):
    """C.1's subtree masses of a node with more than eight children are its children added left to
    right, as for the shorter runs and as the compiled kernel adds them (``top1_path_terms``): the
    same bits, checked against Python's own left-to-right sums of each node's children, on 100
    classes near 1e-300, 30 children last at their depth and ten groups of ten (``np.add.reduceat``
    would sum the longer runs in another order).  The predictions become the
    leaves' rows ``_TRANSPOSE_ROWS`` rows at a time: one piece, several with a partial last one
    (700 rows in pieces of 256), and many (50 rows in pieces of 7)."""
    from huc_ref.fast import tree as fast_tree
    from huc_ref.fast.tree import FastTree
    if piece is not None:
        monkeypatch.setattr(fast_tree, "_TRANSPOSE_ROWS", piece)
    t = shape_tree(shape, size, width, 3)
    ft = FastTree(t)
    P = softmax_rows(11, t.K, rows, 3.0, -300)
    S = ft.level_sums(P)
    for a in range(len(t.nodes)):  # every node, from its children's own rows (leaves: the entries)
        kids = t.child_ids[a]
        if not kids:
            continue
        want = S[ft.row[kids[0]]].copy()
        for c in kids[1:]:
            want = want + S[ft.row[c]]
        assert S[ft.row[a]].tobytes() == want.tobytes(), t.nodes[a]
    leaves = S[ft.row[np.array(t.leaf_node_ids)]]
    assert np.array_equal(leaves, P.T)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_subgroup_whose_weights_change_after_its_first_rows_is_audited_as_its_members(engine):
    """A subgroup is taken as one weight for everyone (no gather) only when every row agrees: here
    its indicator is 1 on the first 1,100 rows of 1,500 and 0 after, past the rows that are looked
    at first.  Its UC and node sups must be those of an audit of its members alone, scaled by their
    share (Sec. 2.1's moments are sums over the subgroup; the members' audit has equal weights).
    A 10-class flat classifier's softmax with entries near 1e-300."""
    t = shape_tree("flat", 10, 0, 0)
    n, m = 1500, 1100
    P = softmax_rows(13, t.K, n, 2.0, -300)
    y = np.arange(n) * 7 % t.K
    us = {"top": TopK(t, 1), "first": class_indicator(t, t.labels[0])}
    head = np.r_[np.ones(m), np.zeros(n - m)]
    got = fast.audit(y, P, t, us, subgroups={"head": head}, accelerator=engine)
    members = fast.audit(y[:m], P[:m], t, us, accelerator=engine)
    for g, w in zip(got.candidates, members.candidates):
        assert (g.utility, g.node) == (w.utility, w.node)
        assert abs(g.sup - w.sup * m / n) <= 1e-12
    assert got.uc.sup > 0


@settings(max_examples=20)
@given(wide_trees(max_leaves=40), st.integers(0, 2**16))
@example(shape_tree("flat", 12, 0, 0), 1)
@example(shape_tree("wide_last", 0, 30, 2), 3)  # a node of 30 children last at its depth
@example(shape_tree("two_level", 10, 10, 3), 5)  # 100 classes, entries near 1e-300
def test_the_compiled_sample_pass_its_python_twins_and_numpy_give_the_same_terms(tree, seed):
    """F.4's scores, residuals, error bounds and path terms of top-1 at every depth, for rows in two
    whole blocks of ``kernels.LANES`` and a part: numba's sample pass (``top1_path_terms`` with its
    vector intrinsics ``_sum_run``, ``_choose``, ``_meet``, ``_path_masses``, ``_path_means``,
    ``_emit_rows``, ``_emit_terms`` of :mod:`huc_ref.fast.lanes`), the same kernel run as Python
    with the intrinsics' plain-Python twins (what an install without numba runs), and numpy's
    sample pass give the same bits, unsure rows (decided exactly) included."""
    import importlib

    passes = importlib.import_module("huc_ref.fast.audit")
    kernels = importlib.import_module("huc_ref.fast.kernels")
    lanes = importlib.import_module("huc_ref.fast.lanes")
    n = 2 * kernels.LANES + 5
    P = softmax_rows(seed, tree.K, n, 3.0, -300 if seed % 2 else 0)
    P[3] = P[2]  # a repeated row, and a uniform one: candidates of equal mass, decided exactly
    P[4] = 1.0 / tree.K
    y = np.random.default_rng(seed).integers(0, tree.K, n)
    ft = fast.FastTree(tree)
    us = {f"top1@{d}": Top1AtDepth(tree, d) for d in range(1, ft.H + 1)}

    def terms(engine):
        t = passes.sample_terms(ft, P, y, us, engine=engine, row_sum_tolerance=passes.ROW_SUM_TOLERANCE)
        return [np.asarray(a, dtype=float).tobytes() for k in range(len(us))
                for a in (t.score[k], t.residual[k], t.error[k], t.T[k])]
    want = terms("numpy")
    twins = {name: getattr(lanes, name + "_python") for name in ("_sum_run", "_choose", "_meet", "_path_masses",
                                                                 "_path_means", "_emit_rows", "_emit_terms")}
    if kernels.COMPILED:
        assert terms("numba") == want
        twins["top1_path_terms"] = kernels.top1_path_terms.py_func  # (its globals: the twins below)
    with pytest.MonkeyPatch.context() as mp:
        for name, twin in twins.items():
            mp.setattr(kernels, name, twin)
        assert terms("numba") == want


@settings(max_examples=200)
@given(st.integers(1, 40), st.integers(0, 2**32 - 1), st.sampled_from([0.0, 2.0**-52, 1e-15, 1e-12, 1e-9]))
@example(1, 0, 0.0)  # one candidate: never unsure
@example(30, 3, 0.0)  # 30 candidates, some of them equal
def test_the_one_pass_choice_is_the_count_of_candidates_within_the_bound(count, seed, spread):
    """``lanes._choose`` (its plain-Python twin, which the compiled pass equals bit for bit:
    ``test_the_compiled_sample_pass_its_python_twins_and_numpy_give_the_same_terms``) keeps the
    largest mass and the largest of the others in one pass; K.2's rule counts every candidate
    ``x >= top - rel (top + x)``.  On candidates planted within a few ulps to 1e-9 of the largest,
    ``close`` is 2 exactly where that count exceeds one, and ``pick`` is the first largest."""
    import importlib

    lanes = importlib.import_module("huc_ref.fast.lanes")
    rng = np.random.default_rng(seed)
    L = lanes.LANES
    buf = rng.random((count, L))
    near = rng.integers(0, count, (count, L)) if count > 1 else np.zeros((count, L), dtype=int)
    top = buf.max(axis=0)
    planted = rng.random((count, L)) < 0.3
    buf = np.where(planted, top * (1 - spread * rng.random((count, L))), buf)  # near the largest
    buf = np.where(near == 0, top, buf) if spread == 0.0 else buf
    rel = 2.0**-50
    rows = np.arange(count)
    pick, close, largest = np.empty(L, dtype=np.int64), np.empty(L, dtype=np.int64), np.empty(L)
    lanes._choose_python(buf, rows, 0, count, rel, pick, close, largest)
    for lane in range(L):
        x = buf[:, lane].tolist()
        t = max(x)
        within = sum(v >= t - rel * (t + v) for v in x)
        assert largest[lane] == t and pick[lane] == x.index(t)
        assert (close[lane] > 1) == (within > 1), (x, t)
