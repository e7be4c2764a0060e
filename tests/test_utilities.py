"""Utility families (docs/specification.md §5) and their relevant nodes V_T(u)."""

from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from huc_ref.decomposition import TreeDecomposition
from huc_ref.errors import HUCError
from huc_ref.tree import LabelTree
from huc_ref.utilities import (
    Aggregated,
    BinaryDecision,
    Decision,
    PerAtom,
    Rank,
    Subtree,
    Table,
    Top1AtDepth,
    TopK,
    class_indicator,
)
from tests.strategies import ancestor_closed_sets, predictions, shaped_trees, tiny_predictions, utilities

F = Fraction
FOUR = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
# App. K.3: SUPPORT2's tree (v0: survival vs death; v1: milder vs major limitations).
SUPPORT2 = LabelTree.from_children("v0", {"v0": ["v1", "y5"], "v1": ["v2", "v3"], "v2": ["y1", "y2"],
                                          "v3": ["y3", "y4"]}, ["y1", "y2", "y3", "y4", "y5"])


def test_table_10_relevant_node_counts_support2():
    """App. K.3.2, Table 10: U^(1), U^(2), U^(3) have 1, 3 and 4 relevant nodes."""
    decisions = {1: (["y5"], ["y1", "y2", "y3", "y4", "y5"]), 2: (["y2"], ["y1", "y2"]), 3: (["y4"], ["y3", "y4"])}
    union = set()
    counts = []
    for j in (1, 2, 3):
        S, D = decisions[j]
        for tau in ("0.25", "0.50", "0.75"):
            union |= set(BinaryDecision(SUPPORT2, S, D, tau).relevant_nodes)
        counts.append(len(union))
    assert counts == [1, 3, 4]


def test_binary_decision_score_is_the_absolute_margin():
    """K.3: mu_u(p) = |p(S) - tau p(D)|."""
    u = BinaryDecision(SUPPORT2, ["y2"], ["y1", "y2"], "1/2")
    for p in ([F(1, 10), F(1, 10), F(3, 10), F(3, 10), F(1, 5)], [F(1, 2), F(1, 8), F(1, 8), F(1, 8), F(1, 8)]):
        assert u.score(p) == abs(p[1] - F(1, 2) * (p[0] + p[1]))


def test_family_values():
    p = [F(1, 8), F(3, 8), F(3, 8), F(1, 8)]
    assert Rank(FOUR, [1, "1/2", 0, -1]).values(p) == (F(0), F(1), F(1, 2), F(-1))  # ties by label order
    assert TopK(FOUR, 2).values(p) == (0, 1, 1, 0)
    assert Subtree(FOUR, "vR").score(p) == F(1, 2)
    assert class_indicator(FOUR, "y3").score(p) == F(3, 8)
    dec = Decision(FOUR, {"a": [1, 1, 0, 0], "b": [0, 0, 1, 1]}, ["b", "a"])
    assert dec.action(p) == "b" and dec.values(p) == (0, 0, 1, 1)  # tie: first in order
    assert Top1AtDepth(FOUR, 1).node(p) == "vL"  # tie 1/2 vs 1/2: first in pre-order
    assert Top1AtDepth(FOUR, 2).node(p) == "y2"
    assert Top1AtDepth(FOUR, 0).values(p) == (1, 1, 1, 1) and Top1AtDepth(FOUR, 0).relevant_nodes == ()


def test_top1_at_depth_uses_the_depth_cut():
    t = LabelTree.from_children("r", {"r": ["a", "y4"], "a": ["b", "y3"], "b": ["y1", "y2"]})
    u = Top1AtDepth(t, 2)
    assert u._candidates == tuple(t.id(v) for v in ("b", "y3", "y4"))  # y4 is a shallower leaf
    assert u.node([F(1, 10), F(1, 10), F(1, 10), F(7, 10)]) == "y4"
    assert u.relevant_nodes == ("r", "a")



@given(shaped_trees(), st.data())
def test_nodes_outside_v_t_contribute_nothing(t, data):
    """Outside V_T(u), g_{u,v}(p, .) = 0 at every prediction (docs/specification.md §3)."""
    u = data.draw(utilities(t))
    for _ in range(3):
        p = data.draw(st.one_of(predictions(t.K), tiny_predictions(t.K)))
        dec = TreeDecomposition(t, p, u.values(p))
        for v in t.internal_nodes:
            if v not in u.relevant_nodes:
                assert all(dec.g(v, y) == 0 for y in t.labels), (v, u)



@given(shaped_trees(), st.data())
def test_appendix_g_aggregated_utility_partial_sums(t, data):
    """u_S - mu_u = sum_{v in S} g_{u,v}; mu_{u_S} = mu_u (Lemma G.1)."""
    base = data.draw(utilities(t, families=["table", "rank", "binary_decision"]))
    S = data.draw(ancestor_closed_sets(t))
    agg = Aggregated(base, S)
    p = data.draw(st.one_of(predictions(t.K), tiny_predictions(t.K)))
    dec = TreeDecomposition(t, p, base.values(p))
    vals = agg.values(p)
    assert agg.score(p) == dec.mu()
    for y in t.labels:
        assert vals[t.label_index(y)] - dec.mu() == sum((dec.g(v, y) for v in S), F(0))
    assert set(agg.relevant_nodes) == set(S) & set(base.relevant_nodes)


@pytest.mark.parametrize("build, message", [
    (lambda: Table(FOUR, [0, 0, 2, 0]), "values[2]: utility value 2 is outside [-1, 1]"),
    (lambda: Table(FOUR, [0, 0, 0]), "values: has 3 entries, expected 4"),
    (lambda: Table(FOUR, [0, 0, 0.5, 0]), "values[2]: float 0.5 is not exact"),
    (lambda: Rank(FOUR, [1, 1, 1, "-3/2"]), "theta[3]: utility value -3/2 is outside [-1, 1]"),
    (lambda: TopK(FOUR, 5), "k: must be an integer from 1 to K = 4, got 5"),
    (lambda: Subtree(FOUR, "nope"), "node 'nope' is not in the tree"),
    (lambda: Decision(FOUR, {"a": [0] * 4}, ["a", "b"]), "order: must list each action exactly once"),
    (lambda: Decision(FOUR, {}, []), "actions: expected a non-empty mapping"),
    (lambda: BinaryDecision(FOUR, ["y9"], [], "1/2"), "S[0]: 'y9' is not a label"),
    (lambda: BinaryDecision(FOUR, ["y1"], ["y2"], 2), "d[1]: utility value -2 is outside [-1, 1]"),
    (lambda: Top1AtDepth(FOUR, -1), "depth: must be a non-negative integer, got -1"),
    (lambda: Aggregated(Table(FOUR, [0, 1, 0, 1]), ["vL"]), "S[0]: 'vL' is in S but its parent 'v0' is not"),
    (lambda: Aggregated(Table(FOUR, [0, 1, 0, 1]), ["y1"]), "S[0]: 'y1' is a leaf"),
    (lambda: PerAtom(FOUR, [[0, 0, 0, 1], [0, 0, 7, 0]]), "values[1][2]: utility value 7 is outside [-1, 1]"),
    (lambda: PerAtom(FOUR, [[0, 0, 0, 1]]).values(None, 3), "per_atom utility: no values for atom 3"),
])
def test_bad_utilities_get_one_clear_error(build, message):
    with pytest.raises(HUCError) as err:
        build()
    assert str(err.value).startswith(message)


@settings(max_examples=60)
@given(st.sampled_from([("flat", 10, 0), ("wide_last", 2, 30), ("two_level", 10, 10), ("flat", 1, 0)]),
       st.integers(0, 2**32 - 1), st.integers(1, 100), st.sampled_from([0, -300]))
@example(("two_level", 10, 10), 0, 1, -300)  # top-1 of a 100-class softmax near 1e-300
@example(("flat", 10, 0), 1, 10, 0)  # k = K: every label
@example(("wide_last", 2, 30), 2, 3, 0)
def test_top_k_and_rank_in_float64_are_the_sorted_ranks_and_the_exact_values(shape, seed, k, floor):
    """TopK's float64 form (``np.partition``, no sort) and Rank's (an unstable sort, rows with equal
    entries sorted again) give the ranks of a stable sort of every row (Python's, of the floats)
    and, with the rationals behind the floats, the exact values (A.1) through ``utility_values``:
    rows with ties of every size at the k-th entry (entries drawn from a few values), and
    rationals 10^-40 apart that round to one float (only a tie at the k-th entry is left to
    TopK's exact decision; float64 keeps strict orders)."""
    import numpy as np

    from huc_ref.fast.numbers import ExactRows
    from huc_ref.fast.tree import FastTree
    from huc_ref.fast.utilities import FloatRows, utility_values
    from tests.strategies import shape_tree
    t = shape_tree(*shape, seed % 7)
    u = TopK(t, min(k, t.K))
    rng = np.random.default_rng(seed)
    levels = [F(1, 10 ** -floor) if floor else F(1, 2), F(1, 8), F(1, 4), F(1, 3)]
    rows = []
    for _ in range(12):
        raw = [levels[j] * (1 + F(int(rng.integers(0, 2)), 10**40)) for j in rng.integers(0, len(levels), t.K)]
        rows.append(tuple(x / sum(raw) for x in raw))
    P = np.array([[float(x) for x in row] for row in rows])
    U, _ = u.vectorised(FloatRows(FastTree(t), P, None, None, ExactRows(P)))
    ranked = [sorted(range(t.K), key=lambda y: (-row[y], y)) for row in P.tolist()]  # a stable sort of the floats
    assert U.tolist() == [[1.0 if r.index(y) < u.k else 0.0 for y in range(t.K)] for r in ranked]
    got = utility_values(u, FastTree(t), P, exact=ExactRows(P, rows))
    assert got.tolist() == [[float(v) for v in u.values(row)] for row in rows]
    # Rank's own form (any theta: numpy's unstable sort, rows with equal entries sorted again stably)
    theta = [F(int(v), 4) for v in rng.integers(-4, 5, t.K)]
    rank = Rank(t, theta)
    U = rank.vectorised(FloatRows(FastTree(t), P, None, None, ExactRows(P)))[0]
    assert U.tolist() == [[float(theta[r.index(y)]) for y in range(t.K)] for r in ranked]
    got = utility_values(rank, FastTree(t), P, exact=ExactRows(P, rows))
    assert got.tolist() == [[float(v) for v in rank.values(row)] for row in rows]


@settings(max_examples=150)
@given(st.data())
def test_each_familys_decision_on_a_rational_row_is_its_values(data):
    """``Utility.decide`` (the one exact decision of a family, for every arithmetic) on a prediction
    known exactly (``RationalRow``) is ``values`` on the same rationals, for every family, ties
    included (the strategies draw equal entries and equal masses): a hook that answered otherwise
    would make certified float64 decide differently from the exact engine."""
    from huc_ref.utilities import RationalRow
    from tests.strategies import label_trees
    t = data.draw(label_trees(max_leaves=8))
    p = data.draw(predictions(t.K))
    u = data.draw(utilities(t, n_atoms=1))
    assert u.decide(RationalRow(t, p, atom=0)) == u.values(p, 0)


def test_a_family_that_redefines_values_decides_by_them():
    """A subclass that redefines ``values`` but not the decision hooks gets the generic ones, never
    its parent's: a table whose values depend on the prediction is not decided as a fixed table
    (``Table.decide`` returns ``b`` whatever the row) nor kept through updates (``unmoved_by``)."""
    from huc_ref.fast.context import Undecided
    from huc_ref.utilities import RationalRow

    class Leaning(Table):  # 1 on the likelier of two labels
        def values(self, p, atom=None):
            return (F(1), F(0)) if p[0] >= p[1] else (F(0), F(1))
    t = LabelTree.from_children("r", {"r": ["a", "b"]})
    u = Leaning(t, [0, 1])
    assert u.decide(RationalRow(t, [F(3, 4), F(1, 4)])) == (1, 0) and not u.unmoved_by(0)

    class Moved:  # a boosted row: its prediction is not rational
        atom = None

        def rationals(self):
            raise Undecided("a decision on a boosted row")
    with pytest.raises(Undecided):
        u.decide(Moved())
    assert Table(t, [1, 1]).unmoved_by(0) and Table(t, [0, 1]).decide(Moved()) == (0, 1)
