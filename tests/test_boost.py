"""HUC-Boost and UC-Boost (Sec. 3.2, App. E): locality, derivative, Theorem 3.5, re-audit."""

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from huc_ref import FiniteDistribution, LabelTree, PerAtom, Subtree, Table, TreeDecomposition, audit
from huc_ref.boost import _context, _Engine, boost
from huc_ref.errors import HUCError
from tests.oracle import brute_force_audit
from tests.strategies import finite_distributions, label_trees, thirty_children, utilities

F = Fraction
FOUR = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
D1 = FiniteDistribution(FOUR, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
U = {"u": Table(FOUR, [-1, 1, 1, 1])}


PRINTED_TIE = Fraction(1, 10 ** 25)


def reaudit(dist, utilities, predictions, tie=PRINTED_TIE):
    """An independent audit of the final predictions (decimal strings, renormalised): the
    brute force of ``tests/oracle.py``, with scores within ``tie`` taken as one value.

    The engine prints 30 digits, so two scores equal in its arithmetic can come out a rounding
    apart, and an audit of the printed rows then splits their tie block.  Hypothesis found it
    twice: 2/7 of (5/14, 5/14, 2/7) and of (3/7, 2/7, 2/7), unmoved rows 10^-31 apart (sup 1/14
    where the exact one is 1/70); and two moved rows whose u-scores agree because u is equal on
    the leaves where they differ (``test_a_tie_split_by_printing_is_one_block_in_the_reaudit``).
    Returns ``(uc, huc)``: the largest UC row and the largest ``V_T(u)`` row."""
    atoms = []
    for atom, row in zip(dist.atoms, predictions):
        p = [Fraction(x) for x in row]
        total = sum(p)
        entry = {"weight": atom.weight, "c": atom.c, "p": [x / total for x in p]}
        entry.update({"eta": atom.eta} if atom.eta is not None else {"label": dist.tree.labels[atom.label]})
        atoms.append(entry)
    rows = brute_force_audit(FiniteDistribution(dist.tree, atoms, dist.subgroups), utilities, tie)
    uc = max(r[3] for r in rows if r[2] is None)
    huc = max((r[3] for r in rows if r[2] is not None), default=Fraction(0))
    return uc, huc


def test_d1_huc_boost_reaches_epsilon_and_uc_boost_cannot_see_the_error():
    """App. D.1: UC = 0, so UC-Boost makes no update and HUC stays 1/4; HUC-Boost fixes it."""
    uc = boost(D1, U, method="uc", epsilon="1/100")
    assert uc.updates == [] and Fraction(uc.final["huc"]) == F(1, 4)
    huc = boost(D1, U, method="huc", epsilon="1/100")
    assert huc.stopped == "tolerance" and huc.theorem_3_5["holds"] and huc.theorem_3_5["certified"]
    assert reaudit(D1, U, huc.predictions)[1] <= F(1, 100)
    losses = [Fraction(u["log_loss_after"]) for u in huc.updates]
    assert all(b < a for a, b in zip(losses, losses[1:]))


def _one_update(engine, dist):
    choice, preds, tables, ctx = engine.certified_choice()
    h = engine.direction(choice, preds, tables, ctx)
    return choice, h, ctx


def test_update_is_branch_local():
    """E.2 Step 1: leaves outside Y_v and every other node's branch probabilities are unchanged."""
    t = LabelTree.from_children("r", {"r": ["a", "b", "y5"], "a": ["y1", "y2"], "b": ["y3", "y4"]})
    d = FiniteDistribution(t, [{"p": ["1/10", "2/10", "3/10", "1/10", "3/10"], "eta": ["1/2", 0, "1/4", "1/4", 0]}])
    us = {"u": Table(t, [1, -1, 0, 1, "1/2"])}
    engine = _Engine(d, us, "huc", F(1, 100), "certified", 40)
    ctx = _context(200)
    before = engine.predictions(ctx)[0]
    choice, h, _ = _one_update(engine, d)
    engine.apply(choice, h, F(1, 3))
    after = engine.predictions(ctx)[0]
    node = t.nodes[choice.node]
    inside = {t.label_index(y) for y in t.leaves_below(node)}
    for y in range(t.K):
        if y not in inside:
            assert abs(after[y] - before[y]) < mpmath.mpf(10) ** -50
    dec_b, dec_a = TreeDecomposition(t, before, [0] * 5), TreeDecomposition(t, after, [0] * 5)
    for v in t.internal_nodes:
        if v != node:
            assert all(abs(x - y) < mpmath.mpf(10) ** -50 for x, y in zip(dec_b.q(v), dec_a.q(v)))
        else:
            assert any(abs(x - y) > mpmath.mpf(10) ** -3 for x, y in zip(dec_b.q(v), dec_a.q(v)))


@pytest.mark.parametrize("method", ["huc", "uc"])
def test_log_loss_derivative_at_zero_is_minus_gamma(method):
    """E.2 eq. (96): phi'(0) = -Gamma, against a central difference at 200 bits."""
    t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
    d = FiniteDistribution(t, [{"weight": "1/2", "p": ["1/5", "3/10", "1/2"], "eta": ["1/2", "1/4", "1/4"]},
                               {"weight": "1/2", "p": ["1/3", "1/3", "1/3"], "label": "y2"}])
    us = {"u": Table(t, [1, -1, "1/2"])}
    engine = _Engine(d, us, method, F(1, 100), "certified", 50)
    choice, h, _ = _one_update(engine, d)
    ctx = _context(400)
    gamma = engine.gamma_of(choice, h, ctx)
    delta = F(1, 10 ** 30)
    engine.apply(choice, h, delta)
    up = engine.log_loss(ctx)
    engine.apply(choice, h, -2 * delta)
    down = engine.log_loss(ctx)
    derivative = (up - down) / (2 * ctx.mpf(delta.numerator) / delta.denominator)
    assert abs(derivative + gamma) < ctx.mpf(10) ** -40


@settings(max_examples=12)
@given(st.data())
def test_theorem_3_5_on_random_populations(data):
    """Adaptive HUC-Boost and UC-Boost: certified decrease each update, count within the bound,
    and the final predictions, re-audited independently, within epsilon."""
    t = data.draw(label_trees(max_leaves=5))
    d = data.draw(finite_distributions(t, max_atoms=4))
    us = {f"u{i}": data.draw(utilities(t, families=["table", "rank", "binary_decision", "subtree"]))
          for i in range(data.draw(st.integers(1, 2)))}
    eps = F(1, 20)
    for method in ("huc", "uc"):
        r = boost(d, us, method=method, epsilon=eps, max_updates=400, digits=30)
        assert r.stopped == "tolerance"
        assert r.theorem_3_5["holds"] and r.theorem_3_5["certified"]
        assert len(r.updates) <= r.bound_updates
        uc, huc = reaudit(d, us, r.predictions)
        assert (huc if method == "huc" else uc) <= eps + F(1, 10 ** 20)


def test_a_tie_split_by_printing_is_one_block_in_the_reaudit():
    """Hypothesis drew it: the two atoms differ only on y4, y5, where u1 is 1/2 on both, and
    each update scales y4 and y5 alike, so their u1 scores stay equal.  Printed to 30 digits they
    come out 4.1e-32 apart; an audit that splits them finds 0.42 at v0 (one atom's half of a
    cancelling block).  Taken as one block, the re-audit agrees with the run (Theorem 3.5)."""
    t = LabelTree.from_children("v0", {"v0": ["v1", "v2", "v3"], "v3": ["v4", "v5", "v6"]})
    d = FiniteDistribution(t, [
        {"weight": "1/2", "p": ["1/8", "3/16", "1/16", "3/8", "1/4"], "label": "v4"},
        {"weight": "1/2", "p": ["1/8", "3/16", "1/16", "5/16", "5/16"], "eta": [1, 0, 0, 0, 0]}])
    us = {"u0": Table(t, [-1] * 5), "u1": Table(t, ["3/4", -1, -1, "1/2", "1/2"])}
    eps = F(1, 20)
    r = boost(d, us, method="huc", epsilon=eps, max_updates=400, digits=30)
    assert r.stopped == "tolerance" and r.theorem_3_5["holds"] and r.theorem_3_5["certified"]
    assert reaudit(d, us, r.predictions)[1] <= eps
    assert reaudit(d, us, r.predictions, tie=0)[1] > F(2, 5)  # the split block


def test_an_exact_tie_of_prefix_sums_keeps_the_first_witness_at_every_precision():
    """Hypothesis drew it (the certified engine raised 'could not be certified at 16384 bits'): a tie
    block of two untouched atoms whose terms cancel exactly (3/35 - 3/35), so the prefix sums before
    and after it are equal; rounded, the two precisions split that tie apart.  The terms of
    untouched atoms are now summed exactly (``_Split``): the first update's witness is the exact
    engine's (F.3: the first of equal prefix sums), atom 0 alone."""
    t = LabelTree.from_children("v0", {"v0": ["v1", "v2", "v3"]})
    d = FiniteDistribution(t, [{"p": ["1/3"] * 3, "eta": [1, 0, 0], "weight": "2/7", "c": [1, 0]},
                               {"p": ["2/5", "1/5", "2/5"], "eta": [1, 0, 0], "weight": "2/7", "c": [1, 0]},
                               {"p": ["2/5", "1/5", "2/5"], "eta": [0, 0, 1], "weight": "3/7", "c": [1, 0]}],
                           subgroups=["all", "none"])
    us = {"u": Table(t, ["-1/2", -1, -1])}
    exact = audit(d, us)
    assert exact.huc.sup == F(2, 21) and exact.huc.interval == (F(-5, 6), F(-5, 6))
    for method in ("huc", "uc"):
        r = boost(d, us, method=method, epsilon=F(1, 20), max_updates=400, digits=30)
        assert r.stopped == "tolerance" and r.theorem_3_5["certified"]
        assert all(abs(F(x) + F(5, 6)) < F(1, 10**19) for x in r.updates[0]["interval"])  # -5/6, as printed


def test_fixed_step_and_passes_variants():
    """H.1's fixed step eps/2 and K.1's passes reach epsilon with Theorem 3.5's checks."""
    eps = F(1, 10)
    fixed = boost(D1, U, epsilon=eps, step=eps / 2, max_updates=2000)
    assert fixed.stopped == "tolerance" and fixed.theorem_3_5["holds"] and fixed.theorem_3_5["step"] == "fixed 1/20"
    assert all(Fraction(u["alpha"]).__abs__() == eps / 2 for u in fixed.updates)
    passes = boost(D1, U, epsilon=eps, select="passes")
    assert passes.stopped == "tolerance" and passes.theorem_3_5["holds"]
    other = boost(D1, U, epsilon=eps, step="1/4", max_updates=50)
    assert not other.theorem_3_5["applies"] and other.theorem_3_5["quadratic_bound_every_update"]
    assert other.bound_updates == 50 and other.theorem_3_5["decrease_at_least"] is None  # no guarantee: the cap
    # H.1 literally (tolerance 3e/4, step e/2): the floor e^2/4 and ceil(4 L / e^2) updates, certified
    h1 = boost(D1, U, epsilon=F(3, 40), step=F(1, 20), max_updates=2000)
    assert h1.theorem_3_5["holds"] and h1.theorem_3_5["decrease_at_least"] == "1/400"


@pytest.mark.parametrize("args, message", [
    ((0,), "epsilon: must be positive, got 0"),
    (("1/10", "-1/20"), "alpha: a fixed step magnitude must be positive, got -1/20"),
    (("1/10", 0.05), "alpha: float 0.05 is not exact; pass the string '0.05'"),
])
def test_the_decrease_floor_refuses_bad_numbers(args, message):
    from huc_ref.bounds import theorem_3_5_update_bound, update_decrease_floor
    with pytest.raises(HUCError, match=message):
        update_decrease_floor(*args)
    with pytest.raises(HUCError, match=message):
        theorem_3_5_update_bound(1, args[0], alpha=args[1] if len(args) > 1 else None)


def test_float_arithmetic_matches_and_says_it_is_uncertified():
    exact = boost(D1, U, epsilon="1/100")
    fast = boost(D1, U, epsilon="1/100", arithmetic="float")
    assert not fast.theorem_3_5["certified"] and len(fast.updates) == len(exact.updates)
    assert abs(float(fast.final["huc"]) - float(exact.final["huc"])) < 1e-12


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "x"}, "method: expected 'huc' or 'uc', got 'x'"),
    ({"epsilon": 0}, "epsilon: must be in (0, 1], got 0"),
    ({"epsilon": 0.1}, "epsilon: float 0.1 is not exact"),
    ({"step": "-1"}, "step: a fixed step magnitude must be positive, got -1"),
    ({"select": "best"}, "select: expected one of 'greedy', 'passes', 'drain', got 'best'"),
    ({"digits": 5}, "digits: must be an integer from 15 to 2000, got 5"),
    ({"max_updates": -1}, "max_updates: must be a non-negative integer, got -1"),
    ({"arithmetic": "double"}, "arithmetic: expected 'certified' or 'float', got 'double'"),
])
def test_bad_options(kwargs, message):
    with pytest.raises(HUCError) as err:
        boost(D1, U, **kwargs)
    assert str(err.value).startswith(message)


def test_per_atom_utilities_are_rejected():
    with pytest.raises(HUCError, match="per_atom values describe the utility only at the audited predictions"):
        boost(D1, {"u": PerAtom(FOUR, [[0, 1, 0, 1]])})


def test_exactly_equal_sups_of_two_subgroups_are_a_tie_not_an_undecidable_choice():
    """Two subgroups whose sups are both exactly 1/70 (rational: no update yet): rounding at the
    working precision made either look larger, differently at the two precisions, and the engine
    raised 'could not be certified at 16384 bits'; now sups within the precision's rounding of each
    other are a tie (the first maximiser), and a choice that exceeds nothing needs no agreement
    on which candidate is largest (hypothesis found the case)."""
    t = LabelTree.from_children("v0", {"v0": ["v1", "v2"], "v2": ["v3", "v4"]}, labels=["v3", "v4", "v1"])
    rows = [("3/10", [1, 0], ["3/7", "2/7", "2/7"], "v1"), ("1/5", [1, "-1/2"], ["5/14", "5/14", "2/7"], "v4"),
            ("1/5", [1, 1], ["3/7", "2/7", "2/7"], "v4"), ("3/10", [1, "-1/2"], ["3/7", "2/7", "2/7"], "v3")]
    d = FiniteDistribution(t, [{"weight": w, "c": c, "p": p, "label": y} for w, c, p, y in rows], ["all", "g1"])
    us = {"u0": Subtree(t, "v1")}
    assert {c.sup for c in audit(d, us).candidates} == {F(1, 70)}
    for method, eps in (("huc", "1/20"), ("uc", "1/20"), ("huc", "1/100")):
        r = boost(d, us, method=method, epsilon=eps, max_updates=50)
        assert r.stopped == "tolerance" and r.theorem_3_5["certified"]
        assert (len(r.updates) == 0) == (eps == "1/20")
        if r.updates:
            assert r.updates[0]["subgroup"] == "all"  # the first of the tied maximisers


def test_exact_ties_after_updates_are_decided_exactly():
    """A decision margin that is exactly 0 stays 0 when a root update scales S and D alike:
    intervals alone could never certify it; the exact zero test of _Form does."""
    from huc_ref import BinaryDecision
    us = {"u": Table(FOUR, [1, 1, -1, "-1/2"]), "margin": BinaryDecision(FOUR, ["y1"], ["y1", "y2"], "1/2")}
    d = FiniteDistribution(FOUR, [{"weight": "1/2", "p": ["1/4"] * 4, "eta": ["1/2", "1/4", "1/8", "1/8"]},
                                  {"weight": "1/2", "p": ["1/8", "1/8", "1/4", "1/2"], "eta": ["1/4"] * 4}])
    r = boost(d, us, epsilon="1/50", digits=30)
    assert r.stopped == "tolerance" and r.theorem_3_5["holds"] and r.theorem_3_5["certified"]
    assert r.updates[0]["node"] == "v0"


def test_form_zero_test_and_ordering():
    from huc_ref.boost import _context, _Form
    ctx = _context(100)
    x, y = ctx.mpf(1) / 3, ctx.mpf(2) / 3
    N = ((F(0), F(1, 3)), (F(1), F(2, 3)))  # a split's normaliser: logits 0 and 1, q0 = 1/3, 2/3
    k, j = ((F(0), N),), ((F(1), N),)  # the factors e^0 / N and e^1 / N
    a = _Form({k: Fraction(1, 4)}, x)
    b = _Form({k: Fraction(1, 4)}, x * (1 + ctx.mpf(2) ** -90))  # numerically off, exactly equal
    c = _Form({j: Fraction(1, 2)}, y)
    assert a == b and not a < b and a <= b and (a - b).sign() == 0
    assert a < c and c > a and (a * Fraction(2) - a).sign() == 1
    assert sum([a, c], 0).value == x + y
    # (1/3) e^0 / N + (2/3) e^1 / N is exactly 1 (A.3: an update at v keeps v's mass): equal to a constant
    whole = _Form({k: F(1, 3) * 5, j: F(2, 3) * 5}, ctx.mpf(5) * (1 + ctx.mpf(2) ** -95))
    assert whole == 5 and (whole - 5).sign() == 0 and whole > F(49999, 10000)
    from huc_ref.boost import _collapse
    assert _collapse((whole - 5).coef) == {}
    assert _collapse({k: F(5, 3), j: F(5, 3), (): F(-5)}) == {k: F(5, 3), j: F(5, 3), (): F(-5)}  # not in proportion


def test_cli_boost_json_and_errors(capsys):
    import json
    from pathlib import Path

    from huc_ref.cli import main
    case = str(Path(__file__).resolve().parents[1] / "examples" / "cases" / "four_leaf_cancellation.json")
    assert main(["boost", case, "--json", "--epsilon", "1/20", "--digits", "30"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "huc-boost/1" and doc["stopped"] == "tolerance" and doc["theorem_3_5"]["holds"]
    assert all(len(x.replace("0.", "").lstrip("0")) >= 30 for x in doc["predictions"][0])
    assert reaudit(D1, U, doc["predictions"])[1] <= F(1, 20)
    assert main(["boost", case, "--step", "fixed"]) == 2
    assert capsys.readouterr().err == ("huc: error: --step: expected 'adaptive' or a fixed step magnitude (a number, "
                                       "or 'fixed:A'), got 'fixed'\n")
    assert main(["boost", case, "--method", "uc", "--select", "passes", "--step", "fixed:1/40"]) == 0
    assert "UC-Boost on four-leaf-cancellation: 0 updates" in capsys.readouterr().out


def test_single_leaf_tree_with_passes_stops_at_once():
    """Found by stress testing: no branching node to cycle over (and nothing to correct)."""
    t = LabelTree.from_children("v0", {})
    d = FiniteDistribution(t, [{"p": [1], "label": "v0"}])
    r = boost(d, {"u": Table(t, [1])}, select="passes")
    assert r.stopped == "tolerance" and r.updates == [] and r.final["huc"] == "0"


def test_undecidable_decisions_raise_instead_of_guessing(monkeypatch):
    """docs/specification.md §4: when the precisions keep disagreeing, raise; never pick one."""
    import importlib
    boost_module = importlib.import_module("huc_ref.boost")
    original = boost_module._Engine.choose
    calls = []

    def flip_flop(self, ctx, node=None):  # a planted disagreement: low and high precision differ in sign
        choice, preds, tables = original(self, ctx, node)
        calls.append(ctx.prec)
        if choice is not None and len(calls) % 2:
            choice.sign = -choice.sign
        return choice, preds, tables
    monkeypatch.setattr(boost_module._Engine, "choose", flip_flop)
    monkeypatch.setattr(boost_module, "_MAX_PRECISION", 512)
    with pytest.raises(HUCError, match="could not be certified at 512 bits"):
        boost(D1, U, epsilon="1/100")
    # spec §4, "repeating the decision at a higher precision": each attempt pairs the working
    # precision with one _GUARD_BITS higher, and a failed attempt doubles the working precision
    low, high = calls[0::2], calls[1::2]
    assert all(h == lo + boost_module._GUARD_BITS for lo, h in zip(low, high)), calls
    assert all(b == 2 * a for a, b in zip(low, low[1:])) and low[-1] <= 512 < 2 * low[-1], calls


def _passes_case():
    """The J.1 tree (four branching levels) and two miscalibrated groups of patients."""
    from examples.boost_trajectories import population
    from examples.j1_toy import UTILITIES
    return population(), UTILITIES


def _engines():
    from huc_ref import boost as engines_boost
    from huc_ref import fast
    yield "reference", lambda d, us, **kw: boost(d, us, arithmetic="float", **kw).audits
    yield "fast", lambda d, us, **kw: [tuple(a) for a in fast.boost(d, us, **kw).to_json()["audits"]]
    yield "certified float64", lambda d, us, **kw: engines_boost(d, us, arithmetic="certified", **kw).audits


@pytest.mark.parametrize("engine", ["reference", "fast", "certified float64"])
def test_passes_audit_each_branching_node_once_per_pass_as_k1_states(engine):
    """K.1: "at most 100 passes over the nodes with at least two children ... A node is updated
    only when its audited violation exceeds [epsilon] ... HUC-Boost stops when a complete pass
    finds no violation, or when the respective budget is exhausted."  The log of audits is the
    pre-order list of branching nodes, pass after pass, each audited once and updated at most once."""
    run = dict(_engines())[engine]
    d, us = _passes_case()
    order = list(d.tree.branching_nodes)
    for eps, passes in (("1/1000", 3), ("1/20", 100)):
        audits = run(d, us, method="huc", select="passes", epsilon=eps, max_passes=passes)
        assert len(audits) % len(order) == 0
        rounds = [audits[k:k + len(order)] for k in range(0, len(audits), len(order))]
        assert all([node for node, _ in r] == order for r in rounds)  # each node once per pass, in pre-order
        assert all(any(updated for _, updated in r) for r in rounds[:-1])  # only the last pass may be clean
        if eps == "1/1000":  # below every atom's weight: never clean, so the budget of 3 passes ends it
            assert len(rounds) == 3 and sum(updated for _, updated in audits) > 3
        else:
            assert not any(updated for _, updated in rounds[-1]) and len(rounds) < passes


@pytest.mark.parametrize("engine", ["reference", "fast", "certified float64"])
def test_drain_stays_on_a_node_until_it_is_clean(engine):
    run = dict(_engines())[engine]
    d, us = _passes_case()
    audits = run(d, us, method="huc", select="drain", epsilon="1/50")
    nodes = [node for node, _ in audits]
    for (node, updated), nxt in zip(audits, nodes[1:]):
        assert (nxt == node) == updated or (not updated and len(set(nodes)) == 1)
    assert [u for _, u in audits[-len(d.tree.branching_nodes):]] == [False] * len(d.tree.branching_nodes)


def test_passes_stop_reasons_and_the_cli_option(capsys):
    d, us = _passes_case()
    result = boost(d, us, arithmetic="float", select="passes", epsilon="1/1000", max_passes=2)
    assert result.stopped == "budget" and len(result.audits) == 2 * len(d.tree.branching_nodes)
    assert result.to_json()["audits"][0] == [d.tree.branching_nodes[0], result.audits[0][1]]
    with pytest.raises(HUCError, match="^max_passes: must be a positive integer, got 0$"):
        boost(d, us, select="passes", max_passes=0)


def test_the_fast_backend_audits_as_the_certified_engine_does():
    """The same K.1 passes on both backends: the same nodes audited and updated, in order, until an
    update whose candidate has two witness intervals of exactly equal moment (terms between them
    that cancel exactly).  The certified engine keeps those terms exact (the means an update left
    as they were) and takes F.3's first one; float64 sums them with rounding and may take the other
    (at epsilon 1/100 it does, at the fourth update: the same node and Gamma, another interval)."""
    from huc_ref import fast
    d, us = _passes_case()
    for eps in ("1/20", "1/100"):
        run = boost(d, us, select="passes", epsilon=eps, max_passes=2)
        fast_run = fast.boost(d, us, select="passes", epsilon=eps, max_passes=2).to_json()
        split = next((k for k, (a, b) in enumerate(zip(run.updates, fast_run["updates"]))
                      if [float(x) for x in a["interval"]] != pytest.approx(b["interval"], abs=1e-12)), None)
        if split is None:
            assert [tuple(a) for a in fast_run["audits"]] == run.audits
            continue
        a, b = run.updates[split], fast_run["updates"][split]
        assert (eps, split) == ("1/100", 3)
        assert a["node"] == b["node"] and float(a["gamma"]) == pytest.approx(b["gamma"], abs=1e-12)  # a tie
        assert [float(x) for x in a["interval"]] < b["interval"]  # F.3: the first left end
        at = [k for k, x in enumerate(run.audits) if x[1]][split]  # the audit that made that update
        assert [tuple(x) for x in fast_run["audits"][:at + 1]] == run.audits[:at + 1]


def test_progress_is_reported_once_per_update_on_both_backends():
    """huc boost reports long runs on stderr through the driver's progress callback."""
    from huc_ref import FiniteDistribution, LabelTree, Table, boost
    t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    for engine in ("exact", "fast"):
        seen = []

        def note(k, record, seen=seen):
            seen.append((k, record["node"]))
        run = boost(d, {"u": Table(t, [-1, 1, 1, 1])}, engine=engine, epsilon="1/10", progress=note)
        assert seen == [(k, u["node"]) for k, u in enumerate(run.updates, start=1)]


@pytest.mark.parametrize("method", ["huc", "uc"])
def test_boosting_from_arrays_is_boosting_their_distribution(method):
    """``fast.boost.boost_sample`` (arrays in, no exact number built) makes the run that
    ``fast.boost.boost`` makes on the same sample as a FiniteDistribution: on rows of
    sixty-fourths (float64 holds them and their sums exactly, so both read the same numbers),
    the same rules, the same stop and the same predictions, bit for bit; with weights and a
    subgroup of values 0 and 1/2."""
    import numpy as np

    from huc_ref import Top1AtDepth
    from huc_ref.fast.boost import boost as fast_boost
    from huc_ref.fast.boost import boost_sample
    t = LabelTree.from_children("r", {"r": ["a", "b", "c"], "a": ["y1", "y2"], "b": ["y3", "y4", "y5"]})
    t = t.with_labels(t.labels)  # (the arrays' columns are in its order)
    rng = np.random.default_rng(7)
    n = 60
    P = (rng.multinomial(64 - t.K, np.ones(t.K) / t.K, n) + 1) / 64
    y = rng.integers(0, t.K, n)
    w = rng.integers(1, 4, n).astype(float)
    C = np.column_stack([np.ones(n), rng.integers(0, 2, n) / 2])
    us = {"top1": Top1AtDepth(t, 1), "u": Table(t, [1, "1/2", 0, -1, "-1/2", "1/4"])}
    options = dict(method=method, epsilon="1/200", max_updates=30)
    arrays = boost_sample(t, P, y, us, subgroups=["all", "half"], C=C, w=w, **options)
    dist = FiniteDistribution.from_floats(t, y, P, sample_weight=w, subgroups={"all": C[:, 0], "half": C[:, 1]})
    ref = fast_boost(dist, us, **options)
    assert len(ref.steps) > 3
    assert arrays.steps == ref.steps and arrays.stopped == ref.stopped
    assert np.array_equal(np.array(arrays.predictions), np.array(ref.predictions))


@pytest.mark.parametrize("method", ["huc", "uc"])
def test_validation_and_test_arrays_are_their_distributions(method):
    """K.1's validation and test steps from arrays (``fast.sample.Sample``: no exact number
    built) give what they give on the same atoms as a FiniteDistribution: on rows of
    sixty-fourths (float64 holds them and their sums exactly) the trajectory (UC, HUC and log
    loss after each update), the prefix chosen, the test predictions and the scalings' fits
    are the same bits; the audit of a Sample is ``fast.audit``'s of its arrays."""
    from huc_ref import Top1AtDepth, fast
    from huc_ref.fast.boost import boost_sample
    from huc_ref.fast.sample import Sample, audit_sample
    from huc_ref.recalibration import fit_recalibrator
    from huc_ref.replay import prefix_predictions, select_prefix, trajectory
    t = LabelTree.from_children("r", {"r": ["a", "b", "c"], "a": ["y1", "y2"], "b": ["y3", "y4", "y5"]})
    t = t.with_labels(t.labels)  # (the arrays' columns are in its order)
    rng = np.random.default_rng(11)
    us = {"top1": Top1AtDepth(t, 1), "u": Table(t, [1, "1/2", 0, -1, "-1/2", "1/4"])}

    def data(n):
        P = (rng.multinomial(64 - t.K, np.ones(t.K) / t.K, n) + 1) / 64
        y, w = rng.integers(0, t.K, n), rng.integers(1, 4, n).astype(float)
        C = np.column_stack([np.ones(n), rng.integers(0, 2, n) / 2])
        return (Sample(t, P, y, ["all", "half"], C, w),
                FiniteDistribution.from_floats(t, y, P, sample_weight=w, subgroups={"all": C[:, 0], "half": C[:, 1]}))
    (cal, _), (val, val_d), (test, test_d) = data(60), data(50), data(40)
    run = boost_sample(t, cal.P, cal.y, us, subgroups=cal.subgroups, C=cal.C, w=cal.w, method=method,
                       epsilon="1/200", max_updates=30)
    assert len(run.steps) > 3
    assert trajectory(run, val, us) == trajectory(run, val_d, us)
    keep, errors = select_prefix(run, val, us)
    assert (keep, errors) == select_prefix(run, val_d, us)
    assert prefix_predictions(run, test, us, keep).tobytes() == prefix_predictions(run, test_d, us, keep).tobytes()
    for kind in ("temperature", "vector"):
        a, b = fit_recalibrator(val, kind, validation=test), fit_recalibrator(val_d, kind, validation=test_d)
        assert a(test.P).tobytes() == b(test.P).tobytes()
    mine = audit_sample(test, us)
    theirs = fast.audit(test.y, test.P, t, us, subgroups={"all": test.C[:, 0], "half": test.C[:, 1]},
                        sample_weight=test.w)
    assert mine.to_json() == theirs.to_json()


def test_a_replay_finds_each_rules_subgroup_by_name():
    """The rules name their subgroups by the run's order; validation atoms may list theirs in
    another order (the same prefix and errors), and a subgroup or a utility they lack is one
    HUCError naming the update, not an IndexError or a rule applied to the wrong column."""
    from huc_ref.fast.boost import boost_sample
    from huc_ref.fast.sample import Sample
    from huc_ref.replay import select_prefix
    t, us = FOUR, U
    P, y = np.tile([3 / 8, 1 / 8, 3 / 8, 1 / 8], (8, 1)), [0, 0, 0, 1, 2, 2, 2, 3]  # calibrated overall, not in half
    C = np.column_stack([[1, 1, 1, 1, 0, 0, 0, 0], np.ones(8)])
    run = boost_sample(t, P, y, us, subgroups=["half", "all"], C=C, epsilon="1/100")
    assert run.updates[0]["subgroup"] == "half" and {u["subgroup"] for u in run.updates} == {"half", "all"}
    assert select_prefix(run, Sample(t, P, y, ["all", "half"], C[:, ::-1]), us) == \
        select_prefix(run, Sample(t, P, y, ["half", "all"], C), us)
    with pytest.raises(HUCError) as err:
        select_prefix(run, Sample(t, P, y), us)
    first = next(k for k, u in enumerate(run.updates, start=1) if u["subgroup"] == "half")
    assert str(err.value) == (f"subgroups: the run's update {first} is for subgroup 'half', which these atoms do "
                              "not have (theirs: ['all'])")
    with pytest.raises(HUCError) as err:
        select_prefix(run, Sample(t, P, y, ["half", "all"], C), {"v": us["u"]})
    assert str(err.value) == "utilities: the run's update 1 is for utility 'u', which is not given (given: ['v'])"


@pytest.mark.parametrize("errors, keep", [
    ([0.3, 0.2, 0.2 - 2.0**-55, 0.25], 1),  # a rounding below the first minimum: the shorter prefix (K.1's first)
    ([0.3, 0.2, 0.2 - 1e-9, 0.25], 2),  # a real decrease: the longer one
    ([0.3, 0.3, 0.3], 0),
])
def test_the_first_minimum_of_the_validation_errors_allows_for_rounding(errors, keep):
    """K.1's prefix: the first minimum of the validation errors, which a float64 replay computes;
    errors within :func:`huc_ref.significance.tie_tolerance` of the minimum count as equal (else a
    step 1e-16 apart on two engines keeps prefix 4 on one and 5 on the other, with the same
    validation HUC to six digits)."""
    from huc_ref.replay import first_minimum
    from huc_ref.significance import tie_tolerance
    tolerance = tie_tolerance(8, FOUR.K)  # (select_prefix's, for 8 validation rows of FOUR)
    assert 2.0**-55 < tolerance < 1e-9
    assert first_minimum(errors, [True] * len(errors), tolerance) == keep


def test_a_sample_boosts_in_float64_only():
    """The certified engines read exact atoms: a Sample sent there is one HUCError saying how to
    make a FiniteDistribution from the same floats."""
    from huc_ref import boost as any_boost
    from huc_ref.fast.sample import Sample
    t = LabelTree.from_children("r", {"r": ["a", "b"]})
    s = Sample(t, [[0.25, 0.75]], ["a"])
    for options in ({"arithmetic": "exact"}, {"arithmetic": "certified"}, {}):
        with pytest.raises(HUCError, match=r"^dist: a Sample \(float64 arrays\) boosts in float64 only "
                                           r"\(arithmetic='float64'\); the certified arithmetics need a "
                                           r"FiniteDistribution \(FiniteDistribution.from_floats reads the floats "
                                           r"exactly\)$"):
            any_boost(s, {"u": Table(t, [0, 1])}, **options)
    assert any_boost(s, {"u": Table(t, [0, 1])}, arithmetic="float64", epsilon="1/10").stopped == "tolerance"


@pytest.mark.parametrize("method", ["huc", "uc"])
def test_a_runs_predictions_are_its_rules_replayed_bit_for_bit(method):
    """Each update moves its members as Algorithm 1 states it (``fast.boost.move``), the arithmetic
    ``apply_rules`` replays: replaying the run's rules on its initial predictions gives its final
    predictions bit for bit, and its log loss is the full sum's over them."""
    import numpy as np

    from huc_ref.driver import drive
    from huc_ref.fast.boost import FloatBackend, apply_rules
    from huc_ref.results import BoostResult
    t = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["y1", "y2"], "b": ["y3", "y4", "y5"]})
    rng = np.random.default_rng(3)
    n = 80
    P = rng.dirichlet(np.ones(t.K), n)
    E = np.eye(t.K)[rng.integers(0, t.K, n)]
    us = {"u": Table(t, [1, "1/2", 0, -1, "-1/2"])}
    b = FloatBackend(t, ["all"], P, E, np.full(n, 1 / n), np.ones((n, 1)), us, method, 1e-3)
    run = drive(b, BoostResult(method, Fraction(1, 1000), None, "float"), method=method, epsilon=Fraction(1, 1000),
                fixed=None, select="greedy", max_updates=15, max_passes=100)
    assert len(run.updates) >= 5
    *_, (_, replayed) = apply_rules(method, run.steps, t, us, P, np.ones((n, 1)))
    assert replayed.tobytes() == b.P.tobytes()
    assert b.state._total(b.state._row_loss()) == b.loss


def test_a_samples_subgroups_are_names():
    """A Sample's subgroup names are checked as every subgroup name is: one HUCError each."""
    from huc_ref.fast.sample import Sample
    t = LabelTree.from_children("r", {"r": ["a", "b"]})
    P, y = [[0.5, 0.5]] * 2, [0, 1]
    for subgroups, message in ((["g", "g"], "subgroups[1]: 'g' is listed twice"),
                               (["g", ""], "subgroups[1]: must be a non-empty string, got ''"),
                               ("gg", "subgroups: expected a list of names, got str"),
                               ([3, 4], "subgroups[0]: must be a non-empty string, got 3")):
        with pytest.raises(HUCError) as err:
            Sample(t, P, y, subgroups, np.ones((2, 2)))
        assert str(err.value) == message


@pytest.mark.parametrize("change, message", [
    (lambda a: {**a, "P": a["P"][:, :2]},
     "y_prob: expected n >= 1 rows of 3 probabilities (one per label), got shape (4, 2)"),
    (lambda a: {**a, "P": a["P"] * [[1, 1, 0]] + [[0, 0.2, 0]]},
     "y_prob[0]: entries must be finite and positive (boosting takes their logs), summing to 1 within 1e-05"),
    (lambda a: {**a, "P": a["P"] * 0.9}, "y_prob[0]: entries must be finite and positive"),
    (lambda a: {**a, "y": [0, 1, 2, 7]}, "y_true[3]: 7 is not a label name or id"),
    (lambda a: {**a, "C": np.full((4, 1), 2.0)}, "C: expected 4 x 1 subgroup values in [-1, 1] (one column per "
     "subgroup), got shape (4, 1) with a value outside"),
    (lambda a: {**a, "C": np.ones((4, 2))}, "C: expected 4 x 1 subgroup values in [-1, 1]"),
    (lambda a: {**a, "w": [1, 0, 1, 1]}, "w[1]: 0.0 is not a finite positive number"),
    (lambda a: {**a, "tree": "r"}, "tree: expected a LabelTree, got str"),
    (lambda a: {**a, "P": np.array([[0.5, 1e-310, 0.5]] * 4)}, "y_prob[0]: entry 1 is 1e-310, a subnormal float64 "
     "(below 2.225e-308): its digits are lost in sums and ratios; floor the entries at a normal number such as 1e-300 "
     "and divide each row by its sum, or use the exact engine"),
])
def test_boosting_from_arrays_names_the_bad_input(change, message):
    """``boost_sample`` checks its arrays itself: one HUCError naming the place and the rule."""
    from huc_ref.fast.boost import boost_sample
    t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    args = dict(tree=t, P=np.full((4, 3), 1 / 3), y=[0, 1, 2, 0], C=None, w=None)
    args = change(args)
    with pytest.raises(HUCError) as err:
        boost_sample(args["tree"], args["P"], args["y"], {"u": Table(t, [0, 1, 1])}, C=args["C"], w=args["w"])
    assert str(err.value).startswith(message), str(err.value)


def test_weights_near_the_largest_float_are_scaled_not_an_overflow():
    """Weights whose sum passes the largest float (fsum raises OverflowError there) are scaled
    first: four weights of 1e308 are four weights of 1/4, and the run is the unweighted one."""
    from huc_ref.fast.boost import boost_sample
    from huc_ref.fast.sample import Sample
    t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    P, y, us = np.array([[0.5, 0.25, 0.25]] * 4), [0, 1, 2, 0], {"u": Table(t, [0, 1, 1])}
    assert Sample(t, P, y, w=[1e308] * 4).w.tolist() == [0.25] * 4
    assert boost_sample(t, P, y, us, w=[1e308] * 4).steps == boost_sample(t, P, y, us).steps


@pytest.mark.parametrize("method", ["huc", "uc"])
def test_rules_replayed_together_are_rules_replayed_one_at_a_time(method):
    """``apply_rules`` takes each rule on the rows as the rules before left them: the predictions
    after every rule are, bit for bit, those of rules applied one at a time, each call on its own
    (on a tree with a 30-child node and entries near 1e-300, three utility families taking turns,
    a signed subgroup), and the last are the run's own predictions."""
    from huc_ref import BinaryDecision, Top1AtDepth
    from huc_ref.fast.boost import apply_rules, boost_sample
    n = 300
    t, P, rng = thirty_children(9, n)
    y = rng.integers(0, t.K, n)
    C = np.stack([np.ones(n), rng.choice([-0.5, 0.0, 1.0], n)], axis=1)
    us = {"t": Table(t, [F(k % 5 - 2, 2) for k in range(t.K)]), "top": Top1AtDepth(t, 1),
          "d": BinaryDecision(t, t.labels[:10], t.labels[:20], "1/3")}
    run = boost_sample(t, P, y, us, subgroups=["all", "signed"], C=C, method=method, epsilon="1/1000",
                       max_updates=15)
    assert len(run.steps) >= 8 and len({name for _, name, *_ in run.steps}) >= 2
    kept = [Q for _, Q in apply_rules(method, run.steps, t, us, P, C)]
    one_at_a_time = [P]
    for step in run.steps:
        *_, (_, Q) = apply_rules(method, [step], t, us, one_at_a_time[-1], C)
        one_at_a_time.append(Q)
    assert [Q.tobytes() for Q in kept] == [Q.tobytes() for Q in one_at_a_time]
    assert kept[-1].tobytes() == np.array(run.predictions).tobytes()


def test_kept_sample_terms_are_the_terms_of_the_current_rows():
    """Between audits a boosting run on sample atoms computes the F.4 terms again only for the
    rows the update moved: after every update they are, bit for bit, the terms of a fresh
    computation on the current predictions, and the run makes the same choices as one that
    recomputes everything (on a tree with a 30-child node and entries near 1e-300, three
    utility families, a signed subgroup)."""
    import numpy as np

    from huc_ref import BinaryDecision, Top1AtDepth
    from huc_ref.driver import drive
    from huc_ref.fast.audit import sample_terms
    from huc_ref.fast.boost import FloatBackend
    from huc_ref.fast.numbers import ExactRows
    from huc_ref.results import BoostResult
    n = 300
    t, P, rng = thirty_children(5, n)
    E = np.eye(t.K)[rng.integers(0, t.K, n)]
    C = np.stack([np.ones(n), rng.choice([-0.5, 0.0, 1.0], n)], axis=1)
    us = {"t": Table(t, [F(k % 5 - 2, 2) for k in range(t.K)]), "top": Top1AtDepth(t, 1),
          "d": BinaryDecision(t, t.labels[:10], t.labels[:20], "1/3")}

    def run(fresh):
        b = FloatBackend(t, ["all", "signed"], P.copy(), E, np.full(n, 1 / n), C, us, "huc", 1e-3)
        choose = b.choose

        def checked(node):
            state = b.state
            if state._terms is not None:
                rows = ExactRows(b.P, settle_scores=False)
                state._sample_terms(rows)
                again = sample_terms(b.ft, b.P, state.labels, us, np.arange(n), exact=rows)
                for name in ("score", "residual", "error"):
                    assert getattr(state._terms, name).tobytes() == getattr(again, name).tobytes()
                assert [x.tobytes() for x in state._terms.T] == [x.tobytes() for x in again.T]
            if fresh:
                state._terms = None
            return choose(node)
        b.choose = checked
        return drive(b, BoostResult("huc", Fraction(1, 1000), None, "float"), method="huc",
                     epsilon=Fraction(1, 1000), fixed=None, select="greedy", max_updates=12, max_passes=100)
    kept, fresh = run(False), run(True)
    assert len(kept.updates) >= 5 and kept.steps == fresh.steps


def test_long_exact_parts_are_summed_by_gmp_with_the_same_run(monkeypatch):
    """Certified HUC-Boost on 10 atoms of 1,990-digit predictions (``tests.shapes.long_binary_case``):
    the exact parts of Algorithm 2's prefix sums go past ``GMP_BITS`` and are added as gmpy2's
    ``mpq`` (``_gmp_exact_parts``); with that path turned off (mpmath on its own integers) the run
    is the same, update for update, number for number."""
    pytest.importorskip("gmpy2")
    import importlib

    from huc_ref import read_case
    from tests.shapes import long_binary_case
    engine = importlib.import_module("huc_ref.boost")
    if mpmath.libmp.BACKEND != "gmpy":
        pytest.skip("mpmath does not compute with gmpy2 here")
    case = read_case(long_binary_case(10, 1990))
    converted = []
    spied = engine._gmp_exact_parts

    def spy(blocks):
        out = spied(blocks)
        converted.append(any(type(x) is engine._Split and type(x.exact).__name__ == "mpq" for x in out))
        return out
    monkeypatch.setattr(engine, "_gmp_exact_parts", spy)
    with_gmp = boost(case.distribution, case.utilities, epsilon="1/100")
    assert any(converted), "the mpq path never ran: the test would compare a run with itself"
    converted.clear()
    monkeypatch.setattr(mpmath.libmp, "BACKEND", "python")
    without = boost(case.distribution, case.utilities, epsilon="1/100")
    assert not any(converted)
    assert with_gmp.updates and with_gmp.to_json() == without.to_json()


@settings(max_examples=60)
@given(data=st.data())
def test_rational_gamma_is_the_literal_inner_product_with_r(data):
    """``driver.rational_gamma`` (the exact ``Gamma_t`` the certified backends round the adaptive
    step from) against E.2's definition read literally: ``sum_i w_i sum_y eta_{i,y} <h_i, R_v(p_i, y)>``
    with :meth:`TreeDecomposition.R` (UC-Boost: ``h_y - <p_i, h_i>``), on trees with unary,
    wide and non-binary nodes, 30 children last at their depth and a flat 12-class tree, on
    population, sample and mixed atoms, some with entries near 1e-300."""
    from huc_ref.driver import rational_gamma
    wide = LabelTree.from_children("r", {"r": ["b", "a"], "a": [f"a{k}" for k in range(30)], "b": ["b0", "b1"]})
    flat = LabelTree.from_children("r", {"r": [f"c{k}" for k in range(12)]})
    tree = data.draw(st.one_of(label_trees(max_leaves=8, min_leaves=2), st.just(wide), st.just(flat)))  # 30: last
    dist = data.draw(finite_distributions(tree, tiny=data.draw(st.booleans())))  # (tiny: entries near 1e-300)
    value = st.fractions(-1, 1, max_denominator=64)
    method = data.draw(st.sampled_from(["huc", "uc"]))
    if method == "huc":
        nodes = [v for v in tree.internal_nodes if tree.d(v) >= 2]
        if not nodes:
            return
        node = tree.id(data.draw(st.sampled_from(nodes)))
        width = len(tree.child_ids[node])
    else:
        node, width = None, tree.K
    h = {i: data.draw(st.lists(value, min_size=width, max_size=width))
         for i in data.draw(st.sets(st.integers(0, len(dist.atoms) - 1), min_size=1))}
    literal = Fraction(0)
    for i, hi in h.items():
        atom = dist.atoms[i]
        for y, e in enumerate(atom.label_law(tree.K)):
            if not e:
                continue
            if method == "huc":
                r = TreeDecomposition(tree, atom.p, [0] * tree.K).R(tree.nodes[node], y)
                literal += atom.weight * e * sum(x * rj for x, rj in zip(hi, r))
            else:
                literal += atom.weight * e * (hi[y] - sum(p * x for p, x in zip(atom.p, hi)))
    assert rational_gamma(dist, method, node, h) == literal


def test_float64_takes_the_first_of_candidates_equal_in_exact_arithmetic():
    """App. F.3's tie rule on the float64 backend (found by an independent mpmath re-implementation of
    Algorithm 1): the subgroup g holds atom 0 with c = 1 as "all" does, and atom 1 with
    c = 1/2, so the two subgroups' sups at n1 are both exactly 1/6 (the exact audit's rows), but
    float64 summed them to 0.16666666666666663 and 0.16666666666666666 and took g.  A later
    candidate now has to pass the first by more than the rounding of a sum of n terms
    (``significance.tie_tolerance``); in 300 random small runs the float64 backend's choices then
    differed from the exact ones 2 times instead of 14 (both: witnesses of equal moment)."""
    t = LabelTree.from_children("r", {"r": ["n1", "y2"], "n1": ["n3", "y4"], "n3": ["y5", "y6"]},
                                labels=["y5", "y2", "y6", "y4"])
    d = FiniteDistribution(t, [{"weight": "2/3", "c": [1, 1], "p": ["2/7", "2/7", "2/7", "1/7"],
                                "eta": ["4/11", "2/11", "1/11", "4/11"]},
                               {"weight": "1/3", "c": [1, "1/2"], "p": ["2/7", "1/7", "2/7", "2/7"],
                                "eta": ["3/13", "3/13", "4/13", "3/13"]}], subgroups=["all", "g"])
    from huc_ref import Decision
    from huc_ref.engines import boost as engines_boost
    us = {"dec": Decision(t, {"a0": ["-1/2", "1/2", 0, 1]})}
    rows = {(c.subgroup, c.node): c.sup for c in audit(d, us).candidates}
    assert rows[("all", "n1")] == rows[("g", "n1")] == F(1, 6)  # equal in exact arithmetic
    for engine in ("exact", "fast"):
        first = engines_boost(d, us, epsilon="1/100", max_updates=1, engine=engine).updates[0]
        assert (first["subgroup"], first["node"]) == ("all", "n1"), engine


def test_the_float64_backends_predictions_are_an_array_and_the_document_writes_them_as_lists():
    """The float64 backend hands its final predictions back as its ``(n, K)`` array (lists of Python
    floats cost four times the memory); the ``huc-boost/1`` document writes them as JSON lists, the
    same numbers, as before, and replaying the rules on the atoms gives them (App. D.1's case)."""
    import json

    import huc_ref
    from huc_ref import demo
    from huc_ref.replay import replay
    r = huc_ref.boost(demo.DIST, {"u": demo.U}, epsilon="1/100", engine="fast")
    assert r.updates and isinstance(r.predictions, np.ndarray) and r.predictions.shape == (1, 4)
    doc = json.loads(json.dumps(r.to_json()))
    assert doc["predictions"] == r.predictions.tolist() and isinstance(doc["predictions"][0][0], float)
    assert np.array_equal(list(replay(r, demo.DIST, {"u": demo.U}))[-1][1], r.predictions)
