"""The fast backend with the certified context (huc_ref.fast.context.Certified) against the certified
float64 backend it replaces (huc_ref.certified.BoundedBackend), side by side: the same choices,
steps, bounds and stops, decision for decision."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from huc_ref import certified
from huc_ref.boost import Judge
from huc_ref.certified import BoundedBackend
from huc_ref.fast.boost import FloatBackend
from huc_ref.fast.boost import boost as fast_boost
from huc_ref.fast.context import Certified
from tests.shapes import smoothed_run
from tests.strategies import finite_distributions, label_trees, pinned_case, utilities

F = Fraction
EPS = F(1, 10**6)


def _lockstep(d, us, method, updates=6, eps=EPS):
    """Both backends on ``d`` and ``us``, update by update: each choice (whether one exceeds epsilon,
    the candidate, its witness's atoms, interval and sup) and each update (its rule exactly, its
    record) the same, and the states after it (float rows, their bound ``rho``, the exact logits
    and log-loss bounds) the same.  The witness's moment (the record's ``gamma``) may differ in its
    last place where the old backend negated Arb's sup at 53 bits (:func:`test_a_witness_moment_is_its_sup`)."""
    old = BoundedBackend(d, us, method, eps, 30)
    new = FloatBackend.from_distribution(d, us, method, eps, Certified(Judge, 30))
    for _ in range(updates):
        a, b = old.choose(None), new.choose(None)
        assert (a is None) == (b is None)
        if a is None:
            return old, new
        assert a.exceeds == b.exceeds
        if not a.exceeds:
            return old, new
        assert (a.subgroup, a.utility, a.node, a.interval, a.sup) == (b.subgroup, b.utility, b.node, b.interval, b.sup)
        assert abs(a.moment - b.moment) <= np.spacing(abs(b.moment))
        assert sorted(a.members.tolist()) == sorted(b.members.tolist())
        ua, ub = old.update(a, None, None), new.update(b, None, None)
        assert ua.rule == ub.rule and {**ua.record, "gamma": b.moment} == {**ub.record, "gamma": b.moment}
        assert old.P.tobytes() == new.P.tobytes() and old.rho == new.state.rho and old.loss == new.state.loss
        assert (old.z == new.state.z).all()
    return old, new


def test_a_witness_moment_is_its_sup():
    """Algorithm 2's witness has ``|moment| = sup`` (App. F.3), in float64 too: a witness certified
    in Arb (a decision-tree sample, ``smoothed_run(50018)``, its sixth choice) reported the sup's
    midpoint rounded to nearest and the moment's negated at 53 bits, toward zero, an ulp apart
    (-0.09090909087380084 against 0.09090909087380085)."""
    d, us, method = smoothed_run(50018)
    backend = FloatBackend.from_distribution(d, us, method, F(1, 10**6), Certified(Judge, 30))
    for _ in range(6):
        choice = backend.choose(None)
        assert abs(choice.moment) == choice.sup
        backend.update(choice, None, None)
    assert backend.numbers.refined["the witness interval"] == 3 and not backend.numbers.fallbacks  # (in Arb)


@settings(max_examples=30)
@given(st.data())
def test_the_certified_context_makes_the_bounded_backends_decisions(data):
    """Every utility family the certified backends boost, populations and samples, both methods."""
    t = data.draw(label_trees(max_leaves=5))
    d = data.draw(finite_distributions(t, max_atoms=4))
    us = {f"u{i}": data.draw(utilities(t, families=["table", "rank", "binary_decision", "subtree",
                                                    "top1_at_depth", "top_k", "decision"]))
          for i in range(data.draw(st.integers(1, 2)))}
    _lockstep(d, us, data.draw(st.sampled_from(["huc", "uc"])), eps=F(1, 20))


@settings(max_examples=30)
@given(st.integers(0, 10 ** 6))
def test_the_certified_context_decides_decision_tree_samples_alike(seed):
    """Decision-tree samples (``tests.shapes.smoothed_run``: smoothed repeated rows a rounding apart,
    top-1 at random depths, a table, a rank and a binary decision): the decisions Arb and the judge
    take are the same on both."""
    d, us, method = smoothed_run(seed)
    _lockstep(d, us, method)


@pytest.mark.parametrize("case", ["flat ten", "thirty children", "hundred classes near 1e-300"])
def test_the_certified_context_runs_the_pinned_shapes_alike(case):
    d, us = pinned_case(case)
    for method in ("huc", "uc"):
        _lockstep(d, us, method, updates=4)


@pytest.mark.parametrize("options", [{"step": F(1, 20), "max_updates": 30}, {"select": "passes"},
                                     {"select": "drain"}, {"method": "uc"}])
def test_the_certified_context_writes_the_bounded_backends_documents(options):
    """Whole runs through the driver (fixed steps, K.1's passes, drain, UC-Boost): the same
    ``huc-boost/1`` document."""
    d, us = pinned_case("thirty children")
    kw = {"epsilon": "1/10", **options}
    old = certified.boost(d, us, **kw).to_json()
    new = fast_boost(d, us, numbers=Certified(Judge, 30), **kw).to_json()
    assert old == new
    assert np.isfinite(new["final"]["log_loss"])


def test_what_neither_decides_goes_to_the_judge_alike():
    """App. D.1 (the root's sup and vL's are 1/4 exactly) and two subgroups with one column each
    (every candidate has an exact twin): Arb cannot order equal sups, and both backends ask the
    certified engine, the same number of times, for the same choices."""
    from huc_ref import FiniteDistribution, LabelTree, Table
    t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    atoms = [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]},
             {"p": ["1/8", "1/8", "1/4", "1/2"], "eta": ["1/4"] * 4}]
    us = {"u": Table(t, [-1, 1, 1, 1])}
    for d in (FiniteDistribution(t, atoms[:1]), FiniteDistribution(t, [dict(a, c=[1, 1]) for a in atoms],
                                                                   ["all", "copy"])):
        old, new = _lockstep(d, us, "huc", updates=8, eps=F(1, 100))
        assert old.fallbacks and old.fallbacks == new.numbers.fallbacks
