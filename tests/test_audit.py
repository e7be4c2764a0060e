"""The audit engine: the paper's worked examples, brute force, and identities."""

import random
from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from huc_ref.audit import atom_terms, audit, interval_moment
from huc_ref.decomposition import TreeDecomposition
from huc_ref.distribution import FiniteDistribution
from huc_ref.intervals import Interval
from huc_ref.tree import LabelTree
from huc_ref.utilities import PerAtom, Subtree, Table, class_indicator
from tests.oracle import brute_force_audit
from tests.strategies import (
                              PINNED,
                              finite_distributions,
                              label_trees,
                              pinned_case,
                              predictions,
                              shaped_trees,
                              tiny_predictions,
                              utilities,
)

F = Fraction
FOUR = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
ALL = Interval()


def population(tree, rows, subgroups=("all",)):
    """Atoms ``(weight, p, eta)`` or ``(weight, p, eta, c)``."""
    atoms = [{"weight": r[0], "p": r[1], "eta": r[2], **({"c": r[3]} if len(r) > 3 else {})} for r in rows]
    return FiniteDistribution(tree, atoms, list(subgroups))


def test_appendix_d1_cancellation():
    """App. D.1: UC = 0 while HUC = 1/4; D_top = 1/4, D_L = -1/4, D_R = 0."""
    d = population(FOUR, [(1, ["1/4"] * 4, ["1/4", 0, "3/8", "3/8"])])
    u = Table(FOUR, [-1, 1, 1, 1])
    res = audit(d, {"u": u})
    assert (res.uc.sup, res.huc.sup) == (0, F(1, 4))
    assert [interval_moment(d, u, "all", ALL, v) for v in ("v0", "vL", "vR")] == [F(1, 4), F(-1, 4), 0]
    assert res.relevant_nodes == {"u": ("v0", "vL")}
    assert res.huc.interval == (F(1, 2), F(1, 2)) and res.uc.interval is None


def test_appendix_d2_leaf_calibration_does_not_fix_branches():
    """App. D.2: zero class-wise and subtree-indicator UC; branch errors 3/4, 1/4; residuals +-1/8."""
    pa, pb = ["1/4", "1/4", "2/5", "1/10"], ["1/4", "1/4", "1/10", "2/5"]
    ea, eb = ["3/8", "1/8", "2/5", "1/10"], ["1/8", "3/8", "1/10", "2/5"]
    d = population(FOUR, [("1/2", pa, ea), ("1/2", pb, eb)])
    us = {f"e_{y}": class_indicator(FOUR, y) for y in FOUR.labels}
    us |= {f"J_{v}": Subtree(FOUR, v) for v in ("vL", "vR", "y1")}
    assert audit(d, us).uc.sup == 0
    for atom, q_star in zip(d.atoms, (F(3, 4), F(1, 4))):
        assert atom.eta[0] / (atom.eta[0] + atom.eta[1]) == q_star
        assert TreeDecomposition(FOUR, atom.p, [0] * 4).q("vL")[0] == F(1, 2)
    assert [t.residual for t in atom_terms(d, us["J_y1"])] == [F(1, 8), F(-1, 8)]


def test_appendix_d3_branch_error_without_utility_impact():
    """App. D.3: D_top = 0, D_L = 0, D_R = 1/20 although q*_{L,R} = 9/10 != 1/2."""
    d = population(FOUR, [(1, ["1/4"] * 4, ["1/20", "9/20", "1/5", "3/10"])])
    u = Table(FOUR, [0, 0, 0, 1])
    assert [interval_moment(d, u, "all", ALL, v) for v in ("v0", "vL", "vR")] == [0, 0, F(1, 20)]
    res = audit(d, {"u": u})
    assert (res.uc.sup, res.huc.sup, res.huc.node) == (F(1, 20), F(1, 20), "vR")
    assert "vL" not in res.relevant_nodes["u"]


def test_appendix_d4_common_cell_and_branch_score_cells():
    """App. D.4: cell moments 1/32, 0, -1/40; branch-score cells select disjoint groups."""
    pa, pb = ["1/2", "1/10", "3/20", "1/4"], ["1/5", "3/10", "1/4", "1/4"]
    ea, eb = ["5/12", "1/12", "3/16", "5/16"], ["1/5", "3/10", "3/10", "1/5"]
    d = population(FOUR, [("1/2", pa, ea), ("1/2", pb, eb)])
    u = Table(FOUR, [0, 0, 0, 1])
    cell = Interval.closed(F(1, 4), F(1, 4))
    assert [t.score for t in atom_terms(d, u)] == [F(1, 4), F(1, 4)]
    assert [interval_moment(d, u, "all", cell, v) for v in ("v0", "vL", "vR")] == [F(1, 32), 0, F(-1, 40)]
    qa, qb = (TreeDecomposition(FOUR, a.p, u.values(a.p)) for a in d.atoms)
    root_cell, right_cell = Interval.closed(F(3, 8), F(7, 16)), Interval.closed(F(7, 16), F(9, 16))
    assert (qa.q("v0")[1] in root_cell, qb.q("v0")[1] in root_cell) == (True, False)
    assert (qa.q("vR")[1] in right_cell, qb.q("vR")[1] in right_cell) == (False, True)
    res = audit(d, {"u": u})
    assert (res.uc.sup, res.huc.sup, res.huc.node) == (F(1, 160), F(1, 32), "v0")


@st.composite
def audit_cases(draw, max_leaves=7, kind=None, shapes=False):
    """Small random trees; with ``shapes`` also the shapes users have (flat, two-level, a node of
    up to 30 children first or last at its depth, deep chains) and predictions with entries near
    1e-300 (down to 1e-310, exactly: the exact engine has no smallest number)."""
    t = draw(shaped_trees(max_leaves=24) if shapes else label_trees(max_leaves=max_leaves))
    d = draw(finite_distributions(t, kind=kind, tiny=shapes))
    us = {f"u{i}": draw(utilities(t, n_atoms=d.n)) for i in range(draw(st.integers(1, 3)))}
    return d, us


#: The exact pins on the shapes users have (tests/strategies.py: a flat ten-class tree, a node of 30
#: children last at its depth, 100 classes with entries near 1e-300); the million-digit one below.
SHAPE_PINS = [example(pinned_case(name)) for name in PINNED if name != "a million digits"]


def _pinned(test):
    for pin in SHAPE_PINS:
        test = pin(test)
    return test


@pytest.mark.slow
@settings(max_examples=150)
@given(audit_cases(shapes=True))
@_pinned
def test_engine_equals_brute_force_with_tie_rule(case):
    """Every sup, witness and signed moment equals brute-force enumeration (F.3)."""
    d, us = case
    res = audit(d, us)
    got = [(r.subgroup, r.utility, r.node, r.sup, r.interval, r.moment) for r in res.candidates]
    assert got == brute_force_audit(d, us)


@settings(max_examples=60)
@given(audit_cases(shapes=True))
@_pinned
def test_witnesses_recompute_and_prop_3_3(case):
    """Each witness's moment recomputes from the definition; UC <= |V_T(u)| HUC per utility."""
    d, us = case
    res = audit(d, us)
    for r in res.candidates:
        interval = None if r.interval is None else Interval.closed(*r.interval)
        assert interval_moment(d, us[r.utility], r.subgroup, interval, r.node) == r.moment
    for name, u in us.items():
        uc = max(r.sup for r in res.candidates if r.utility == name and r.node is None)
        huc = max((r.sup for r in res.candidates if r.utility == name and r.node), default=F(0))
        assert uc <= len(u.relevant_nodes) * huc


@settings(max_examples=60)
@given(audit_cases(shapes=True), st.data())
def test_uc_moment_is_the_sum_of_node_moments(case, data):
    """M_{c,u,I} = sum_{v in V°} Gamma_{c,u,I,v} for every (c, u, I) (C.2, Prop. 3.3)."""
    d, us = case
    u = us["u0"]
    scores = sorted({t.score for t in atom_terms(d, u, ())})
    lo = data.draw(st.sampled_from(scores))
    hi = data.draw(st.sampled_from([s for s in scores if s >= lo]))
    interval = Interval(lo, hi, data.draw(st.booleans()), data.draw(st.booleans()))
    for c in d.subgroups:
        total = sum((interval_moment(d, u, c, interval, v) for v in d.tree.internal_nodes), F(0))
        assert interval_moment(d, u, c, interval) == total


@settings(max_examples=40)
@given(audit_cases(shapes=True), st.randoms(use_true_random=False))
@example(pinned_case("flat ten"), random.Random(1))
@example(pinned_case("thirty children"), random.Random(2))
@example(pinned_case("hundred classes near 1e-300"), random.Random(3))
def test_audit_is_invariant_under_permuting_atoms(case, rng):
    d, us = case
    order = list(range(d.n))
    rng.shuffle(order)
    shuffled = FiniteDistribution(d.tree, [d.atoms[i] for i in order], d.subgroups)
    us2 = {k: (PerAtom(d.tree, [u.rows[i] for i in order]) if isinstance(u, PerAtom) else u) for k, u in us.items()}
    if any(isinstance(getattr(u, "base", None), PerAtom) for u in us.values()):
        return
    assert audit(d, us).to_json() == audit(shuffled, us2).to_json()


@settings(max_examples=40)
@given(st.data())
def test_canonical_calibration_gives_zero_uc_and_huc(data):
    """Prop. 3.3 / D.1: if eta(p) = p then every node moment vanishes, so HUC = 0."""
    t = data.draw(shaped_trees())
    pool = data.draw(st.lists(st.one_of(predictions(t.K), tiny_predictions(t.K)), min_size=1, max_size=4))
    atoms = [{"weight": F(1, len(pool)), "p": p, "eta": p} for p in pool]
    d = FiniteDistribution(t, atoms)
    us = {f"u{i}": data.draw(utilities(t)) for i in range(2)}
    res = audit(d, us)
    assert res.uc.sup == 0 and res.huc.sup == 0


@settings(max_examples=40)
@given(st.integers(2, 6), st.data())
def test_flat_tree_huc_equals_uc(k, data):
    """App. F.2: with at most one relevant node (a flat tree), HUC = UC."""
    t = LabelTree.from_children("r", {"r": [f"y{i}" for i in range(k)]})
    d = data.draw(finite_distributions(t))
    us = {"u": data.draw(utilities(t, n_atoms=d.n))}
    res = audit(d, us)
    assert res.huc.sup == (res.uc.sup if res.relevant_nodes["u"] else 0)


@settings(max_examples=40)
@given(st.lists(st.tuples(st.integers(1, 5), st.sampled_from(["neg", "pos"])), min_size=1, max_size=8))
def test_two_leaf_tree_recovers_binary_uc(rows):
    """App. F.2: on two leaves with u = 1{y = pos}, HUC = UC = sup_I |E[1{p in I}(Y - p)]|."""
    t = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    probs = [F(a, 6) for a, _ in rows]
    d = FiniteDistribution.from_sample(t, [y for _, y in rows], [[1 - q, q] for q in probs])
    res = audit(d, {"u": class_indicator(t, "pos")})
    ys = [1 if y == "pos" else 0 for _, y in rows]
    levels = sorted(set(probs))
    binary = max([abs(sum((F(y) - q) / len(rows) for q, y in zip(probs, ys) if lo <= q <= hi))
                  for i, lo in enumerate(levels) for hi in levels[i:]] + [F(0)])
    assert res.uc.sup == res.huc.sup == binary


def test_an_exact_result_of_a_million_digits():
    """App. D.1's four leaves with predictions moved by ``3^-2100000``: the UC witness's moment has
    over a million digits.  Its moment recomputes from the definition (``interval_moment``); with
    gmpy2 installed the whole audit also equals brute force computed in GMP's rationals (an
    exact arithmetic apart from Python's; in ``Fraction`` the brute force takes minutes) and the
    ``rational="gmpy2"`` audit.  The reductions of such sums once took a minute (CPython divides
    n-digit numbers in time n^2); now they take a few seconds without gmpy2.  Printing the result
    shows such numbers by value and length (Python's ``repr`` of them raises ValueError)."""
    import math
    d, us = pinned_case("a million digits")
    res = audit(d, us)
    uc = res.uc
    assert uc.sup.denominator.bit_length() * math.log10(2) > 10**6
    assert interval_moment(d, us[uc.utility], uc.subgroup, Interval.closed(*uc.interval)) == uc.moment
    # printed (a notebook shows a result by its repr): Python's repr of such a Fraction raises ValueError
    long = f"<~{float(uc.sup):.6g}, an exact Fraction of about 1,00"
    assert long in repr(res) and long in repr(uc) and "of about 1,00" in repr(Interval.closed(*uc.interval))
    assert repr(d.atoms[0]).startswith("Atom(weight=Fraction(1, 2), c=(Fraction(1, 1),), p=(<~0.25, an exact")
    gmpy2 = pytest.importorskip("gmpy2")
    got = [(r.subgroup, r.utility, r.node, r.sup, r.interval, r.moment) for r in res.candidates]
    assert got == brute_force_audit(d, us, number=gmpy2.mpq)
    assert audit(d, us, rational="gmpy2") == res


@settings(max_examples=40)
@given(audit_cases(shapes=True))
@_pinned
def test_gmpy2_accelerator_gives_the_reference_answer(case):
    """``rational="gmpy2"`` computes the same exact values as ``Fraction`` (the reference)."""
    import pytest
    pytest.importorskip("gmpy2")
    d, us = case
    assert audit(d, us, rational="gmpy2") == audit(d, us)


def test_unknown_rational_type_is_rejected():
    import pytest

    from huc_ref.errors import HUCError
    d = population(FOUR, [(1, ["1/4"] * 4, ["1/4", 0, "3/8", "3/8"])])
    with pytest.raises(HUCError, match="^rational: expected 'fraction' or 'gmpy2', got 'float'$"):
        audit(d, {"u": Table(FOUR, [-1, 1, 1, 1])}, rational="float")
