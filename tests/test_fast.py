"""The fast path against the exact engine (hypothesis): values within tolerance, witnesses valid."""

import importlib
import os
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from huc_ref import FiniteDistribution, Interval, LabelTree, audit, exact, interval_moment
from huc_ref.fast import audit as fast_audit
from huc_ref.fast import audit_distribution, numba_available
from tests.strategies import thirty_children, wide_trees
from tests.test_audit import audit_cases

TOL = 1e-9  # float64 sums of at most a few dozen terms in [-2, 2]: rounding far below 1e-12


def assert_matches_exact(d, us, fast, exact):
    """Every fast row names the exact row's candidate, its sup is within TOL, and its witness
    is valid: the moment recomputed exactly over the interval is the reported one."""
    assert fast["relevant_nodes"] == {k: list(v) for k, v in exact.relevant_nodes.items()}
    assert len(fast["candidates"]) == len(exact.candidates)
    for row, ref in zip(fast["candidates"], exact.candidates):
        assert (row["subgroup"], row["utility"], row["node"]) == (ref.subgroup, ref.utility, ref.node)
        assert abs(row["sup"] - float(ref.sup)) < TOL
        if row["interval"] is None:
            assert row["sup"] < TOL
            continue
        lo, hi = (Fraction(x) for x in row["interval"])
        widened = Interval(lo - Fraction(1, 10**9), hi + Fraction(1, 10**9))
        recomputed = interval_moment(d, us[row["utility"]], row["subgroup"], widened, row["node"])
        assert abs(float(recomputed) - row["moment"]) < TOL and abs(abs(row["moment"]) - row["sup"]) < TOL
    assert abs(fast["uc"]["value"] - float(exact.uc.sup)) < TOL
    assert abs(fast["huc"]["value"] - float(exact.huc.sup)) < TOL


@settings(max_examples=150)
@given(audit_cases())
def test_fast_equals_exact_and_its_witnesses_are_valid(case):
    d, us = case
    assert_matches_exact(d, us, audit_distribution(d, us).to_json(), audit(d, us))


@settings(max_examples=150)
@given(st.data())
def test_fast_equals_exact_on_near_ties_and_the_checker_takes_its_witnesses(data):
    """Entries near 1e-300 and predictions 1e-300 apart (``finite_distributions(tiny=True)``):
    scores float64 cannot tell apart, which the fast engine orders exactly (its fallback).  Every
    sup within TOL of the exact one, and every witness accepted by the golden-vector checker's own
    rule for float answers (``conformance._witness_moment``: some exact scores within 1e-9 of the
    ends give the moment).  The interval widened by 1e-9 (``assert_matches_exact``) is not a test
    here: it takes in atoms 1e-301 beyond an end that the exact witness leaves out."""
    from huc_ref.conformance import _witness_moment
    from huc_ref.errors import HUCError
    from tests.strategies import finite_distributions, label_trees, utilities
    t = data.draw(label_trees(max_leaves=6))
    d = data.draw(finite_distributions(t, max_atoms=6, tiny=True))
    us = {f"u{i}": data.draw(utilities(t, n_atoms=d.n)) for i in range(data.draw(st.integers(1, 2)))}
    case, exact_rows = type("Case", (), {"distribution": d, "utilities": us, "tree": t}), None
    for accelerator in ["numpy"] + (["numba"] if numba_available() else []):
        try:
            fast = audit_distribution(d, us, accelerator=accelerator).to_json()
        except HUCError as err:  # entries below 2.2e-308: float64 cannot hold them, and says so
            assert err.kind == "float_range"
            return
        exact_rows = exact_rows or audit(d, us).candidates
        for row, ref in zip(fast["candidates"], exact_rows):
            assert (row["subgroup"], row["utility"], row["node"]) == (ref.subgroup, ref.utility, ref.node)
            assert abs(row["sup"] - float(ref.sup)) < TOL
            if row["interval"] is not None:
                assert abs(abs(row["moment"]) - row["sup"]) < TOL
                lo, hi = (Fraction(x) for x in row["interval"])
                moment = Fraction(row["moment"])
                assert _witness_moment(case, row, lo, hi, moment, False, Fraction(TOL)) is None, (accelerator, row)


def test_sample_api_matches_the_exact_engine_on_the_same_floats():
    """The array API against the exact engine on the same floats read exactly
    (``FiniteDistribution.from_floats``).  The rows are small rationals rounded to float64: as
    rationals, rows with different entries tie exactly in top-1 scores (8/37 twice), while the
    floats' own values differ in their last bits, below what float64's error bounds resolve.  The
    fast engine orders those by the floats' exact values, as the exact engine does (HUC 0.0887);
    kept as one block, as the rationals' ties would be, they gave 0.0827 and four rows off."""
    from huc_ref import LabelTree, Table, TopK
    rng = np.random.default_rng(0)
    paths = ["inf/upper/viral", "inf/upper/bacterial", "inf/lower/viral", "noninf/mild", "noninf/severe"]
    t = LabelTree.from_paths(paths, labels=paths)  # (the rows below are in the paths' order)
    n = 60
    raw = rng.integers(1, 9, size=(n, t.K))
    P = np.array([[float(Fraction(int(x), int(r.sum()))) for x in r] for r in raw])
    y = [t.labels[i] for i in rng.integers(0, t.K, size=n)]
    group = rng.integers(0, 2, size=n)
    us = {"top1": TopK(t, 1), "table": Table(t, [1, "1/2", 0, "-1/2", -1])}
    exact = audit(FiniteDistribution.from_floats(t, y, P, subgroups={"all": [1] * n, "g": group.tolist()}), us)
    fast = fast_audit(y, P, t, us, subgroups={"all": np.ones(n), "g": group})
    doc = fast.to_json()
    assert abs(doc["huc"]["value"] - float(exact.huc.sup)) < TOL
    assert [round(r["sup"], 12) for r in doc["candidates"]] == [round(float(r.sup), 12) for r in exact.candidates]
    assert fast.near_ties.decided_groups > 0 and fast.near_ties.undecided_groups == 0


def test_cli_engine_fast_matches_exact(capsys):
    import json
    from pathlib import Path

    from huc_ref.cli import main
    from huc_ref.vectors import load_vectors
    case = str(Path(__file__).resolve().parents[1] / "examples" / "cases" / "four_leaf_cancellation.json")
    assert main(["audit", case, "--json", "--arithmetic", "float64"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["arithmetic"] == "float64" and doc["huc"]["value"] == 0.25 and doc["huc"]["interval"] == [0.5, 0.5]
    assert main(["audit", case, "--arithmetic", "float64"]) == 0  # the report, with the fast engine's decimals
    assert "HUC = 0.25  at subgroup=all, utility=u, node=v0 on [0.5, 0.5]" in capsys.readouterr().out
    for v in load_vectors():  # every golden vector, to 1e-9
        if "case" in v:
            from huc_ref.formats import read_case
            c = read_case(v["case"])
            fast = audit_distribution(c.distribution, c.utilities).to_json()
            assert all(abs(a["sup"] - float(exact(b["sup"], digits=10**6))) < TOL  # (past 4,300 digits)
                       for a, b in zip(fast["candidates"], v["expected"]["candidates"])), v["id"]


def _slow_case():
    """Five equal atoms labelled with their least likely label (1/22) under a rank utility: UC-Boost
    needs 344 updates at epsilon 1/20 (Theorem 3.5 allows 2,473), more than a round cap of 300."""
    from huc_ref.utilities import Rank
    t = LabelTree.from_children("v0", {"v0": ["v1"], "v1": ["v2", "v3"], "v2": ["v7", "v8", "v9"], "v7": ["v10"],
                                       "v3": ["v4", "v5", "v6"]}, labels=["v6", "v9", "v4", "v8", "v10", "v5"])
    atom = {"weight": "1/5", "c": [1, 0], "p": ["1/11", "2/11", "1/22", "3/22", "3/11", "3/11"], "label": "v4"}
    return (FiniteDistribution(t, [atom] * 5, ["all", "g1"]),
            {"u0": Rank(t, ["0", "3/4", "-1", "-1/2", "-1/4", "-1/4"])})


def _uc_at_epsilon():
    """UC exactly 1/20 (= epsilon) with two witnesses of equal exact moment (the first block alone,
    and the first two blocks, whose second block sums to 0): both float64 engines see UC a rounding
    above epsilon and update, the fast one on ``[-0.8, -0.8]`` (the tie rule's first maximiser) and
    the reference in float mode on ``[-0.8, -0.65]``, so their runs differ from the first update
    (hypothesis found it; the certified engine makes no update)."""
    from huc_ref import Table
    t = LabelTree.from_children("v0", {"v0": ["v1", "v2"], "v2": ["v3", "v4"], "v4": ["v5", "v6"], "v6": ["v7", "v8"]},
                                labels=["v8", "v7", "v1", "v3", "v5"])
    p, q = ["1/10", "2/5", "1/10", "3/10", "1/10"], ["1/10", "1/10", "1/10", "3/5", "1/10"]
    atoms = [{"weight": "1/4", "c": [1, 0, 0], "p": p, "label": "v7"},
             {"weight": "1/4", "c": [1, 0, 0], "p": q, "label": "v8"},
             {"weight": "1/8", "c": [1, 0, 0], "p": p, "eta": [0, 0, "1/5", "2/5", "2/5"]},
             {"weight": "3/8", "c": [1, 0, 0], "p": p, "label": "v5"}]
    return (FiniteDistribution(t, atoms, ["all", "g1", "g2"]),
            {"u0": Table(t, ["-1", "-1/2", "1/4", "-1", "-3/4"])})


def _same_decisions(a, b) -> bool:
    """Two boosting runs' updates chose the same candidates: subgroup, utility, node and witness
    interval (its ends to 1e-9)."""
    return len(a) == len(b) and all(
        (x["subgroup"], x["utility"], x["node"]) == (y["subgroup"], y["utility"], y["node"])
        and all(abs(float(e) - float(f)) < 1e-9 for e, f in zip(x["interval"], y["interval"]))
        for x, y in zip(a, b))


@settings(max_examples=40)
@given(audit_cases(max_leaves=6))
@example(_slow_case())
@example(_uc_at_epsilon())
def test_fast_boost_reaches_epsilon_and_agrees_with_the_reference_engine(case):
    """The float64 boost stops by tolerance within Theorem 3.5's ``ceil(2 L_log(f_0) / eps^2)``
    updates (no rounder cap: some cases need hundreds), its final predictions re-audited exactly
    are within epsilon, its log loss falls at every update, and it matches huc_ref.boost (float
    mode) wherever the two chose the same candidates (an exact tie of two witnesses may round
    apart differently in the two engines: ``_uc_at_epsilon``)."""
    from huc_ref.boost import boost
    from huc_ref.fast import boost as fast_boost
    from huc_ref.utilities import PerAtom
    d, us = case
    us = {k: u for k, u in us.items() if u.defined_everywhere and not isinstance(getattr(u, "base", None), PerAtom)}
    if not us:
        return
    for method in ("huc", "uc"):
        run = fast_boost(d, us, method=method, epsilon="1/20", max_updates=10**4)
        fast = run.to_json()
        ref = boost(d, us, method=method, epsilon="1/20", max_updates=10**4, arithmetic="float")
        assert fast["stopped"] == ref.stopped == "tolerance"
        assert len(fast["updates"]) <= run.bound_updates and len(ref.updates) <= ref.bound_updates
        losses = [fast["initial"]["log_loss"]] + [u["log_loss_after"] for u in fast["updates"]]
        assert all(b < a + 1e-12 for a, b in zip(losses, losses[1:]))
        rows = [[Fraction(x) for x in row] for row in fast["predictions"]]
        atoms = []
        for atom, row in zip(d.atoms, rows):
            entry = {"weight": atom.weight, "c": atom.c, "p": [x / sum(row) for x in row]}
            entry.update({"eta": atom.eta} if atom.eta is not None else {"label": d.tree.labels[atom.label]})
            atoms.append(entry)
        final_dist = FiniteDistribution(d.tree, atoms, d.subgroups)
        final = audit(final_dist, us)
        worst = final.huc if method == "huc" else final.uc
        if splits_a_float_tie(final_dist, us, worst):
            continue  # float64 cannot see this violation: the documented case for the exact engine
        assert float(worst.sup) <= 0.05 + 1e-9
        if _same_decisions(fast["updates"], ref.updates):  # the same updates: the same final error
            key = "huc" if method == "huc" else "uc"
            assert abs(fast["final"][key] - float(ref.final[key])) < 1e-9


def splits_a_float_tie(dist, us, row) -> bool:
    """Whether an exact witness separates atoms whose scores float64 cannot tell apart.

    Two float scores within their rounding bounds of each other are one tie block for the fast
    path (each bound is at most ``2 rounding_bound(K)``: utilities lie in [-1, 1]), so an
    interval ending between them is invisible to it (docs/engines.md: when to prefer the exact engine).
    """
    from huc_ref.audit import atom_terms
    from huc_ref.fast import rounding_bound
    if row.interval is None:
        return False
    lo, hi = row.interval
    tol = 4 * rounding_bound(dist.tree.K)
    return any(min(abs(float(t.score - lo)), abs(float(t.score - hi))) <= tol
               for t in atom_terms(dist, us[row.utility], ()) if not lo <= t.score <= hi)


def test_fast_boost_and_replay_survive_probabilities_below_float64():
    """A long run can push a leaf below 2.2e-308; float64 must floor it, not reach 0/0 and NaN
    (found on load_digits: a subtree mass underflowed to 0 and the next mean was 0/0)."""
    from huc_ref import LabelTree, Table
    from huc_ref.fast import TOLERANCES, replay
    t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "label": "y1"}, {"p": ["1/10", "2/10", "3/10", "4/10"],
                                                                   "label": "y4"}])
    us = {"u": Table(t, [-1, 1, -1, 1])}
    from huc_ref import BoostResult
    huge = (0, "u", 0, -10.0, 10.0, 2000.0)  # a rule at the root with a step far beyond exp's range
    run = BoostResult("huc", Fraction(1, 10), None, "float (fast path)", steps=[huge, huge, huge])
    for t_, P in replay(run, d, us):
        assert np.all(np.isfinite(P)) and np.all(P >= TOLERANCES["floor"]), t_


#: ``numbers.entries``' rules as its callers give them (subgroup values, sample weights, a sample's
#: weights): each an interval of the reals, which its check by the smallest and largest entry needs
ENTRY_RULES = [("a number in [-1, 1]", lambda v: np.abs(v) <= 1), ("a finite nonnegative number", lambda v: v >= 0),
               ("a finite positive number", lambda v: v > 0)]


@settings(max_examples=200)
@given(st.lists(st.sampled_from([0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1e-300, 1 + 2**-52, -1 - 2**-52, 2.0, np.inf,
                                 -np.inf, np.nan]), min_size=1, max_size=12),
       st.sampled_from(range(len(ENTRY_RULES))))
@example([0.5, 2.0, 0.5], 0)  # the bad entry between good ends
@example([1.0, -0.0, np.nan, 0.25], 1)  # a NaN inside: min and max both NaN
def test_entries_accept_exactly_the_values_each_rule_allows(values, which):
    """``numbers.entries`` checks the smallest and largest entry first and reads every entry only
    when they fail: on arrays with the bad entry anywhere (NaN, infinities, a value one ulp out of
    range, -0.0), it returns the values exactly when every entry is finite and allowed, and
    otherwise names the first that is not, as the entry-by-entry check would."""
    from huc_ref.errors import HUCError
    from huc_ref.fast.numbers import entries
    rule, ok = ENTRY_RULES[which]
    v = np.array(values)
    bad = [i for i, x in enumerate(values) if not (np.isfinite(x) and ok(np.array([x]))[0])]
    if not bad:
        assert entries(v, len(v), "w", rule, ok, "range").tolist() == v.tolist()
        return
    with pytest.raises(HUCError) as err:
        entries(v, len(v), "w", rule, ok, "range")
    assert str(err.value) == f"w[{bad[0]}]: {values[bad[0]]!r} is not {rule}"


@pytest.mark.parametrize("kwargs, message", [
    ({"y_prob": [[0.5, 0.5, 0.0]]}, "y_prob: expected 2 columns (one per label), got shape (1, 3)"),
    ({"y_prob": [["a", "b"]]}, "y_prob: expected numbers, got text"),
    ({"y_prob": np.array([["a", "b"]])}, "y_prob: expected numbers, got an array of dtype <U1"),
    ({"y_prob": [[float("nan"), 1.0]]},
     "y_prob[0]: entries must be finite and nonnegative, with a positive finite sum"),
    ({"y_true": ["a", "b"], "y_prob": [[0.5, 0.5], [-0.5, 1.5]]},
     "y_prob[1]: entries must be finite and nonnegative, with a positive finite sum"),
    ({"y_prob": [[0.0, 0.0]]}, "y_prob[0]: entries must be finite and nonnegative, with a positive finite sum"),
    ({"y_true": ["a", "b"], "y_prob": [[0.5, 0.5], [1e308, 1e308]]},
     "y_prob[1]: entries must be finite and nonnegative, with a positive finite sum"),
    ({"y_prob": np.zeros((0, 2)), "y_true": []}, "y_prob: no rows (an audit needs at least one atom)"),
    ({"y_true": ["a", "b"]}, "y_true: has 2 labels, y_prob has 1 rows"),
    ({"y_true": ["zz"]}, "y_true[0]: 'zz' is not a label name or id"),
    ({"y_true": np.array(["a", "a", "zz"]), "y_prob": [[0.5, 0.5]] * 3}, "y_true[2]: 'zz' is not a label name or id"),
    ({"y_true": [7]}, "y_true[0]: 7 is not a label name or id"),
    ({"y_true": np.array([0, -1]), "y_prob": [[0.5, 0.5]] * 2}, "y_true[1]: -1 is not a label name or id"),
    ({"y_true": [True]}, "y_true[0]: True is not a label name or id"),
    ({"subgroups": {"g": [2]}}, "subgroups['g'][0]: 2.0 is not a number in [-1, 1]"),
    ({"subgroups": {"g": [float("nan")]}}, "subgroups['g'][0]: nan is not a number in [-1, 1]"),
    ({"subgroups": {"g": [0.5, 0.5]}}, "subgroups['g']: expected one value per row of y_prob (1), got shape (2,)"),
    ({"subgroups": {"g": ["x"]}}, "subgroups['g']: expected numbers, got text"),
    ({"subgroups": {}}, "subgroups: expected a non-empty mapping from name to n values in [-1, 1]"),
    ({"sample_weight": [-1.0]}, "sample_weight[0]: -1.0 is not a finite nonnegative number"),
    ({"sample_weight": [float("inf")]}, "sample_weight[0]: inf is not a finite nonnegative number"),
    ({"sample_weight": [0.0]}, "sample_weight: sums to 0; the weights need a positive sum"),
    ({"accelerator": "cuda"}, "accelerator: expected 'numpy' or 'numba', got 'cuda'"),
])
@pytest.mark.parametrize("engine", ["numpy", "numba"])
def test_fast_audit_bad_input(kwargs, message, engine):
    """One HUCError naming the place, and nothing else (no RuntimeWarning on the way)."""
    import warnings

    from huc_ref import LabelTree, Table
    from huc_ref.errors import HUCError
    if engine == "numba" and not numba_available():
        pytest.skip("the optional numba extra is not installed")
    t = LabelTree.from_children("r", {"r": ["a", "b"]})
    args = {"y_true": ["a"], "y_prob": [[0.5, 0.5]], "accelerator": engine} | kwargs
    with warnings.catch_warnings(), pytest.raises(HUCError) as err:
        warnings.simplefilter("error")
        fast_audit(args.pop("y_true"), args.pop("y_prob"), t, {"u": Table(t, [0, 1])}, **args).to_json()
    assert str(err.value) == message


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "x"}, "method: expected 'huc' or 'uc', got 'x'"),
    ({"epsilon": "0"}, "epsilon: must be in (0, 1], got 0"),
    ({"epsilon": float("inf")}, "epsilon: inf is not a finite number"),
    ({"epsilon": 0.05}, "epsilon: float 0.05 is not exact; pass the string '0.05' for the decimal you meant, or "
                        "Fraction(0.05) for the binary value 3602879701896397/72057594037927936"),
    ({"step": "-0.5"}, "step: a fixed step magnitude must be positive, got -1/2"),
    ({"max_updates": 1.5}, "max_updates: must be a non-negative integer, got 1.5"),
])
def test_fast_boost_rejects_what_the_certified_engine_rejects(kwargs, message):
    from huc_ref import LabelTree, Table
    from huc_ref.errors import HUCError
    from huc_ref.fast import boost as fast_boost
    t = LabelTree.from_children("r", {"r": ["a", "b"]})
    d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "a"}])
    with pytest.raises(HUCError) as err:
        fast_boost(d, {"u": Table(t, [0, 1])}, **kwargs).to_json()
    assert str(err.value) == message


def _as_population(d):
    """The same sample with each label written as a one-hot law: the C.2 form instead of F.4's path form."""
    K = d.tree.K
    atoms = [{"weight": a.weight, "c": a.c, "p": a.p, "eta": [int(y == a.label) for y in range(K)]} for a in d.atoms]
    return FiniteDistribution(d.tree, atoms, d.subgroups)


@settings(max_examples=120)
@given(audit_cases(max_leaves=12, kind="sample"))
def test_path_form_equals_the_c2_form_and_the_exact_engine_on_samples(case):
    """F.4: on sample atoms only path nodes carry terms; the path form must equal the C.2 form."""
    d, us = case
    path, dense = audit_distribution(d, us).to_json(), audit_distribution(_as_population(d), us).to_json()
    exact = audit(d, us)
    assert_matches_exact(d, us, path, exact)
    assert max(abs(a["sup"] - b["sup"]) for a, b in zip(path["candidates"], dense["candidates"])) < 1e-12


def _chunked(monkeypatch, rows: int):
    """Stream every sample pass in chunks of ``rows`` rows from here on, on the threads (the module:
    ``huc_ref.fast.audit`` the attribute is the function)."""
    passes = importlib.import_module("huc_ref.fast.audit")
    monkeypatch.setattr(passes, "CHUNK", 1)
    monkeypatch.setattr(passes, "SERIAL_CELLS", 0)
    monkeypatch.setattr(passes, "chunk_rows", lambda n, K, threads=None: rows)
    return passes


#: The shapes users have (tests/strategies.py): a plain 12-class classifier, a node with 30 children
#: last at its depth, and a 100-class softmax (10 groups of 10) with entries near 1e-300.
_CHUNK_SHAPES = [("flat", 12, 0, 0), ("wide_last", 2, 30, 0), ("two_level", 10, 10, -300)]


@pytest.mark.parametrize("shape, size, width, floor", [("paths", 0, 0, 0)] + _CHUNK_SHAPES)
def test_chunks_do_not_change_the_result(monkeypatch, shape, size, width, floor):
    """Streaming the predictions in row chunks (one row at a time, then three rows: threads
    finishing in any order) gives the same document, on the shapes users have."""
    import huc_ref.fast as fast
    from huc_ref import LabelTree, Table, Top1AtDepth, TopK
    from tests.strategies import shape_tree, softmax_rows
    from tests.test_fast_shapes import utilities_for
    rng = np.random.default_rng(3)
    n = 40
    if shape == "paths":
        t = LabelTree.from_paths(["a/b/c", "a/b/d", "a/e", "f/g/h", "f/g/i", "f/j", "k"])
        P = rng.dirichlet(np.ones(t.K), size=n)
        us = {"top1@1": Top1AtDepth(t, 1), "top1@2": Top1AtDepth(t, 2), "top2": TopK(t, 2),
              "table": Table(t, [1, 0, "1/2", -1, 0, 1, "-1/2"])}
    else:
        t = shape_tree(shape, size, width, 0)
        P, us = softmax_rows(3, t.K, n, 2.0, floor), utilities_for(t)
        assert not floor or P.min() < 1e-290  # (the entries near 1e-300 are there)
    y = rng.integers(0, t.K, size=n)
    groups = {"all": np.ones(n), "g": rng.integers(0, 2, size=n), "s": rng.choice([-1.0, 0.5], size=n)}
    whole = fast.audit(y, P, t, us, subgroups=groups).to_json()
    compiled = fast.audit(y, P, t, us, subgroups=groups, accelerator="numba").to_json() \
        if fast.numba_available() else None
    for rows in (1, 3):
        passes = _chunked(monkeypatch, rows)
        assert passes.chunk_rows(n, t.K) == rows
        assert fast.audit(y, P, t, us, subgroups=groups).to_json() == whole
        if compiled is not None:  # the compiled kernels, a few rows per call: the same as in one chunk
            assert fast.audit(y, P, t, us, subgroups=groups, accelerator="numba").to_json() == compiled


@pytest.mark.parametrize("engine", ["numpy"] + (["numba"] if numba_available() else []))
def test_a_bad_row_in_a_later_chunk_is_named_by_its_row_in_the_sample(monkeypatch, engine):
    """A chunk's bad row is named by its index in the whole sample, and of bad rows in several
    chunks the first: a 100-class softmax with entries near 1e-300, a subnormal planted at
    row 23 (the sixth chunk of four rows) and a negative entry at row 31."""
    import huc_ref.fast as fast
    from huc_ref import TopK
    from huc_ref.errors import HUCError
    from tests.strategies import shape_tree, softmax_rows
    t = shape_tree("two_level", 10, 10, 0)
    n = 40
    P = softmax_rows(5, t.K, n, 2.0, -300)
    y = np.arange(n) % t.K
    us = {"top1": TopK(t, 1)}
    fast.audit(y, P, t, us, accelerator=engine)  # (the rows as drawn are good)
    j, k = int(np.argmin(P[23])), int(np.argmin(P[31]))
    assert P[23, j] < 1e-290 and P[31, k] < 1e-290  # (replacing them keeps the row sums)
    P[23, j], P[31, k] = 1e-310, -P[31, k]
    _chunked(monkeypatch, 4)
    with pytest.raises(HUCError) as err:
        fast.audit(y, P, t, us, accelerator=engine)
    assert str(err.value).startswith(f"y_prob[23]: entry {j} is 1e-310, a subnormal float64"), str(err.value)


@pytest.mark.parametrize("engine", ["numpy"] + (["numba"] if numba_available() else []))
@pytest.mark.parametrize("shape, size, width, floor", _CHUNK_SHAPES)
@pytest.mark.parametrize("family", ["top-k", "top-1 at a depth"])
def test_a_label_of_probability_0_is_found_chunk_by_chunk_after_every_bad_row(monkeypatch, engine, shape, size,
                                                                              width, floor, family):
    """Each chunk looks for a label of probability 0 while the caches hold it (it was one more pass
    over all of ``y_prob`` after the chunks): the first such
    row is named by its index in the whole sample, and a bad row in any chunk, earlier or later, is
    named before it, as when the check came last.  On the shapes users have, in chunks of four rows;
    with top-1 at a depth alone, numba's sample pass is the only reader of the rows (it says whether
    a chunk holds an entry 0 at all), and a chunk with an entry 0 away from its labels is audited."""
    import huc_ref.fast as fast
    from huc_ref import Top1AtDepth, TopK
    from huc_ref.errors import HUCError
    from tests.strategies import shape_tree, softmax_rows
    t = shape_tree(shape, size, width, 0)
    n = 40
    P = softmax_rows(7, t.K, n, 2.0, floor)
    y = np.arange(n) % t.K
    us = {"top1": TopK(t, 1)} if family == "top-k" else {"top1@1": Top1AtDepth(t, 1)}
    _chunked(monkeypatch, 4)
    away = P.copy()  # an entry 0 in row 5, not at its label: audited
    away[5] /= 1 - away[5, (y[5] + 1) % t.K]
    away[5, (y[5] + 1) % t.K] = 0.0
    fast.audit(y, away, t, us, accelerator=engine)
    for row in (33, 14):  # the later one first: the first in the sample is named, not the first found
        P[row] /= 1 - P[row, y[row]]
        P[row, y[row]] = 0.0
    with pytest.raises(HUCError, match=r"^y_prob\[14\]: the label .* has probability 0"):
        fast.audit(y, P, t, us, accelerator=engine)
    for bad in (38, 2):  # a bad row after the zeros, then one before them: named first either way
        Q = P.copy()
        Q[bad, int(np.argmax(Q[bad]))] = -1.0
        with pytest.raises(HUCError, match=rf"^y_prob\[{bad}\]: entries must be finite and nonnegative"):
            fast.audit(y, Q, t, us, accelerator=engine)


def test_the_subnormal_message_gives_advice_that_works():
    """A softmax of logits hundreds apart has subnormal entries (here: logits up to 690 apart, entries
    down to about 1e-300, and one subnormal planted), which the fast path refuses; the message's
    advice (scale the row by a power of two, renormalize=True) gives the audit the exact engine
    gives for the rows as they were (their binary values, exactly)."""
    from fractions import Fraction

    from huc_ref import FiniteDistribution, Top1AtDepth, audit
    from huc_ref.errors import HUCError
    from tests.strategies import shape_tree
    t = shape_tree("two_level", 3, 4, 0)
    rng = np.random.default_rng(3)
    logits = rng.uniform(-690.0, 0.0, size=(12, t.K))
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    P[0, np.argmin(P[0])] = 1e-310  # (one subnormal for certain)
    y = rng.integers(0, t.K, len(P))
    us = {"top1": Top1AtDepth(t, 1), "top1@2": Top1AtDepth(t, 2)}
    with pytest.raises(HUCError, match=r"multiply the row by a power of two such as 2\.0\*\*600 and pass "
                                       r"renormalize=True"):
        fast_audit(y, P, t, us)
    with pytest.raises(HUCError, match=r"multiply the row by a power of two such as 2\.0\*\*600 \(renormalize=True, "
                                       r"as given, divides each row by its sum\), or audit its exact value "
                                       r"\(arithmetic='exact'\)$"):
        fast_audit(y, P, t, us, renormalize=True)  # (not told to pass what it passed)
    got = fast_audit(y, P * 2.0**600, t, us, renormalize=True)
    exact = [[Fraction(x) for x in row] for row in P]
    dist = FiniteDistribution.from_sample(t, [int(v) for v in y], [[x / sum(row) for x in row] for row in exact])
    want = audit(dist, us)
    assert got.huc.sup == pytest.approx(float(want.huc.sup), rel=1e-9, abs=1e-12)
    assert got.uc.sup == pytest.approx(float(want.uc.sup), rel=1e-9, abs=1e-12)
    assert (got.huc.utility, got.huc.node) == (want.huc.utility, want.huc.node)


def test_tiny_masses_keep_their_digits_in_the_audit():
    """A label of predicted mass 1e-20 beside mass 1: its path means are exact ratios, not 0/0."""
    from huc_ref import LabelTree, Table
    t = LabelTree.from_children("r", {"r": ["a", "z"], "a": ["x", "y"]})
    P = np.array([[1e-20, 3e-20, 1.0], [0.25, 0.25, 0.5]])
    r = fast_audit(["x", "z"], P, t, {"u": Table(t, [1, 0, 0])}, subgroups={"all": np.ones(2)}).to_json()
    # node a, atom 0: mu_a = 1e-20 / 4e-20 = 1/4, mu_x = 1: term 3/4 at weight 1/2
    row = next(c for c in r["candidates"] if c["node"] == "a")
    assert abs(row["sup"] - 0.375) < 1e-15


numba_only = pytest.mark.skipif(not numba_available(),
                                reason="the optional numba extra is not installed")


@numba_only
@settings(max_examples=100)
@given(audit_cases(max_leaves=12, kind="sample"))
def test_numba_kernels_equal_the_numpy_engine(case):
    """The compiled kernels (huc_ref.fast.kernels) against pure numpy, the reference, on the same float
    arrays (every sup within 1e-12), and on the rationals themselves against the exact engine
    (witnesses valid).  The exact comparison is made on the rationals: the binary values of
    rounded rationals need not keep their exact ties (0.1 + 0.2 against 0.3; docs/engines.md)."""
    d, us = case
    y = np.array([a.label for a in d.atoms])
    P = np.array([[float(x) for x in a.p] for a in d.atoms])
    groups = {name: np.array([float(a.c[k]) for a in d.atoms]) for k, name in enumerate(d.subgroups)}
    w = np.array([float(a.weight) for a in d.atoms])
    got = fast_audit(y, P, d.tree, us, subgroups=groups, sample_weight=w, accelerator="numba").to_json()
    ref = fast_audit(y, P, d.tree, us, subgroups=groups, sample_weight=w).to_json()
    assert max(abs(a["sup"] - b["sup"]) for a, b in zip(got["candidates"], ref["candidates"])) < 1e-12
    assert_matches_exact(d, us, audit_distribution(d, us, accelerator="numba").to_json(), audit(d, us))


@numba_only
@pytest.mark.parametrize("groups", ["indicators", "signed"])
def test_numba_equals_numpy_for_a_utility_with_no_relevant_node(groups):
    """On a tree with inner nodes, a utility with no relevant node (Def. 3.2: only a constant one, so
    its UC column alone, D = 0, every sup 0) beside one with a node column: the compiled engine
    takes the UC-only route for the first with the weights as the node scan leaves them, and its
    rows are the numpy engine's, bit for bit for the first and within 1e-12 for the second, for
    indicator subgroups (the node scan's table of distinct rows of weights) and a signed one
    (each atom's own row)."""
    from huc_ref import LabelTree, Table, Top1AtDepth
    t = LabelTree.from_children("r", {"r": ["a", "b"], "a": [f"a{k}" for k in range(30)], "b": ["b0", "b1"]})
    t = t.with_labels(t.labels)  # (the arrays' columns are in its order)
    rng = np.random.default_rng(3)
    n = 2000
    P = rng.dirichlet(np.full(t.K, 0.3), n)
    y = rng.integers(0, t.K, n)
    subgroups = {"all": np.ones(n), "half": (rng.random(n) < 0.5).astype(float)}
    if groups == "signed":
        subgroups["signed"] = rng.choice([-0.5, 0.0, 1.0], n)
    us = {"const": Table(t, [1] * t.K), "top": Top1AtDepth(t, 1)}
    assert us["const"].relevant_nodes == ()
    got, ref = (fast_audit(y, P, t, us, subgroups=subgroups, accelerator=e).to_json() for e in ("numba", "numpy"))
    const = [(a, b) for a, b in zip(got["candidates"], ref["candidates"]) if b["utility"] == "const"]
    assert const and all(a == b and a["sup"] == 0 for a, b in const)
    assert max(b["sup"] for b in ref["candidates"]) > 0.01  # (the other utility's rows are not all 0)
    assert max(abs(a["sup"] - b["sup"]) for a, b in zip(got["candidates"], ref["candidates"])) < 1e-12


def separated_witness(d, u, subgroup, node, tol=1e-9):
    """The exact witness of a row when it is separated: no two scores and no two interval
    values within ``tol`` of the top (so float64 must find the same interval), else None."""
    from tests.oracle import literal_terms
    k = d.subgroups.index(subgroup)
    terms = literal_terms(d, u, node)
    scores = sorted({s for s, _ in terms})
    if any(b - a <= tol for a, b in zip(scores, scores[1:])):
        return None
    values = sorted(((abs(sum((a.weight * a.c[k] * x for a, (s, x) in zip(d.atoms, terms)
                                if scores[lo] <= s <= scores[hi]), Fraction(0))), (scores[lo], scores[hi]))
                     for hi in range(len(scores)) for lo in range(hi + 1)), reverse=True)
    if values[0][0] <= tol or (len(values) > 1 and values[0][0] - values[1][0] <= tol):
        return None
    return values[0][1]


@settings(max_examples=80)
@given(audit_cases())
def test_witnesses_agree_with_the_exact_engine_where_the_maximum_is_separated(case):
    """Wherever the maximum is separated from the runner-up by more than the
    tolerance, the fast witness is the exact one (numpy, and the kernels for samples)."""
    d, us = case
    documents = [audit_distribution(d, us).to_json()]
    if d.is_sample and numba_available():  # the kernels, on the same rationals (their ties decided exactly)
        documents.append(audit_distribution(d, us, accelerator="numba").to_json())
    for rows in zip(*(doc["candidates"] for doc in documents)):
        exact = separated_witness(d, us[rows[0]["utility"]], rows[0]["subgroup"], rows[0]["node"])
        if exact is None:
            continue
        for row in rows:
            assert row["interval"] is not None
            assert all(abs(a - float(b)) < 1e-12 for a, b in zip(row["interval"], exact))


def test_without_numba_the_kernels_stay_plain_python_and_the_engine_says_so():
    """The numba extra is optional: without it huc_ref.fast.kernels still imports (its doctests pass
    in plain Python) and engine="numba" is refused with a message saying what to install."""
    import subprocess
    import sys
    code = """
import doctest, sys
sys.modules["numba"] = None  # as if the extra were not installed
import numpy as np
import huc_ref.fast.kernels as kernels, huc_ref.fast as fast
from huc_ref import LabelTree, Top1AtDepth
from huc_ref.errors import HUCError
assert not kernels.COMPILED and not fast.numba_available()
failed, tried = doctest.testmod(kernels)
assert tried >= 4 and failed == 0, (failed, tried)
t = LabelTree.from_paths(["a/b", "a/c", "d"])
try:
    fast.audit([0], np.array([[0.2, 0.3, 0.5]]), t, {"u": Top1AtDepth(t, 1)}, accelerator="numba")
except HUCError as e:
    print(e)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "accelerator: 'numba' needs the numba package (pip install 'huc-ref[numba]')"


@pytest.mark.skipif(not numba_available(), reason="the numba extra is not installed")
def test_the_scans_choose_without_masked_stores(tmp_path):
    """rank_scan's lanes, top1_path_terms' choice of the first candidate and null_scan's extremes
    never write a choice back where they read it (lanes._lane_update says why): on an AVX2
    machine LLVM would make that a masked store (``vmaskmovpd``, ``vpmaskmovq``), slow on AMD
    Zen 3, and the next update of the same place waits for it.  Compiled afresh (numba shows no
    code it read from its cache) from their doctests.  Where the machine has AVX-512 or no AVX at
    all these instruction names cannot appear, so there the test passes whatever the code does
    (weak by nature: it guards the machines where the slow instructions exist)."""
    import subprocess
    import sys
    code = """
import doctest
import huc_ref.fast.kernels as kernels
for fn in (kernels.rank_scan, kernels.top1_path_terms, kernels.null_scan):
    for test in doctest.DocTestFinder().find(fn, globs=vars(kernels).copy()):
        assert doctest.DocTestRunner().run(test).failed == 0
    for sig in fn.signatures:
        asm = fn.inspect_asm(sig)
        assert "ret" in asm, "no code to inspect"
        print(fn.__name__, len([line for line in asm.splitlines() if "maskmov" in line]))
"""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    counts = [line.split() for line in out.stdout.split("\n") if line]
    assert {name for name, _ in counts} == {"rank_scan", "top1_path_terms", "null_scan"}, counts
    assert all(count == "0" for _, count in counts), counts


@st.composite
def dyadic_columns(draw):
    """Inputs of the fast Algorithm 2 (``_Rows``) in which float64 arithmetic is exact: dyadic
    scores (with ties), terms, residuals and weights, zero terms and zero-sum blocks, each
    column on one row of the column table (as a node lies at one depth)."""
    n = draw(st.integers(1, 12))
    dyadic = st.integers(-8, 8).map(lambda k: k / 8)
    score = np.array(draw(st.lists(st.integers(0, 6).map(lambda k: k / 8), min_size=n, max_size=n)))
    residual = np.array(draw(st.lists(dyadic, min_size=n, max_size=n)))
    D, kinds = draw(st.integers(0, 3)), draw(st.integers(1, 3))
    n_cols = 1 + D * 2  # row k may use columns 1 + 2k and 2 + 2k
    col_table = np.array([[draw(st.sampled_from([-1, 1 + 2 * k, 2 + 2 * k])) for _ in range(kinds)]
                          for k in range(D)], dtype=np.int64).reshape(D, kinds)
    kind = np.array(draw(st.lists(st.integers(0, kinds - 1), min_size=n, max_size=n)), dtype=np.int64)
    terms = np.array(draw(st.lists(dyadic, min_size=n * D, max_size=n * D))).reshape(D, n)
    G = draw(st.integers(1, 3))
    W = np.array(draw(st.lists(st.sampled_from([0.0, 1 / 16, -1 / 32, 1 / 8]), min_size=n * G,
                               max_size=n * G))).reshape(n, G)
    return score, residual, terms, col_table, kind, W, n_cols


#: A term row with no column for any kind (row 1) between two that have columns, with ties and a
#: zero weight: the numpy scan collects entries row by row and skips such a row.
_ROW_WITHOUT_COLUMNS = (np.array([0.25, 0.5, 0.25, 0.75]), np.array([0.5, -0.25, 0.125, 0.0]),
                        np.array([[0.5, -0.5, 0.25, 1.0], [1.0, 1.0, 1.0, 1.0], [0.0, 0.75, -0.125, -1.0]]),
                        np.array([[1, 2], [-1, -1], [5, 6]]), np.array([0, 1, 1, 0]),
                        np.array([[1 / 16, 0.0], [1 / 8, 1 / 16], [-1 / 32, 1 / 8], [1 / 16, 1 / 16]]), 7)


@settings(max_examples=300)
@given(dyadic_columns())
@example(_ROW_WITHOUT_COLUMNS)
def test_fast_algorithm_2_equals_the_exact_one_with_its_tie_rule(case):
    """Where float64 is exact, ``_Rows`` (numpy, and the numba scan) returns exactly what the
    exact Algorithm 2 returns on the same block sums: sup, witness blocks ``r, b`` (App. F.3's
    tie rule: first right end, then first left end) and signed moment, for every column."""
    from huc_ref.fast.intervals import Rows as _Rows
    from huc_ref.intervals import max_interval_sum
    score, residual, terms, col_table, kind, W, n_cols = case
    keys = sorted(set(score.tolist()))
    block = [keys.index(s) for s in score]
    engines = ["numpy"] + (["numba"] if numba_available() else [])
    for engine in engines:
        rows = _Rows(score, residual, terms, col_table, kind, W, n_cols, engine)
        for g in range(W.shape[1]):
            for col in range(n_cols):
                sums = [Fraction(0)] * len(keys)
                for i in range(len(score)):
                    values = [residual[i]] if col == 0 else [terms[k, i] for k in range(len(terms))
                                                             if col_table[k, kind[i]] == col]
                    sums[block[i]] += sum(Fraction(v) for v in values) * Fraction(W[i, g])
                exact = max_interval_sum(sums)
                sup, r, b, moment = (x[col] for x in rows.best[g])
                assert (Fraction(sup), int(r), int(b), Fraction(moment)) == \
                    (exact.sup, exact.r, exact.b, exact.moment), (engine, g, col)


@pytest.mark.parametrize("ties", [False, True])
def test_column_ids_past_int16_give_the_same_sups(ties):
    """The numpy scan keeps column ids in int16 below 2**15 columns (a radix sort) and in int64
    from there: ids shifted past 2**15 give the same sup, witness and moment per column."""
    from huc_ref.fast.intervals import Rows as _Rows
    rng = np.random.default_rng(7)
    n, D, kinds = 400, 3, 5
    score = rng.integers(0, 40, n) / 40 if ties else rng.random(n)
    residual, terms = rng.normal(size=n), rng.normal(size=(D, n)) * (rng.random((D, n)) < 0.7)
    col_table = np.array([[1 + 3 * k + (j % 3) if j < 4 else -1 for j in range(kinds)] for k in range(D)])
    kind, W = rng.integers(0, kinds, n), rng.random((n, 2)) / n
    shift = 2**15
    narrow = _Rows(score, residual, terms, col_table, kind, W, 1 + 3 * D)
    wide = _Rows(score, residual, terms, np.where(col_table > 0, col_table + shift, col_table), kind, W,
                 1 + 3 * D + shift)
    for g in range(2):
        for a, b in zip(narrow.best[g], wide.best[g]):
            assert a[0] == b[0] and a[1:].tolist() == b[1 + shift:].tolist()
            assert not np.any(b[1:1 + shift])


@settings(max_examples=300)
@given(st.integers(2, 200), st.integers(0, 10**6), st.sampled_from([0.0, 1e-17, 1e-12]))
@example(n=50, seed=1, spread=1e-17)
def test_tie_blocks_shortcut_equals_the_full_certainty_check(n, seed, spread):
    """``tie_blocks`` skips its running-maximum check when every gap between distinct floats
    exceeds twice the largest error; the blocks must be those of the full check (written here
    from its definition: a gap is certain when every score before it, raised by its error,
    stays below every score after it, lowered by its error), for scores with exact ties and
    clusters closer than their errors."""
    from huc_ref.fast.intervals import tie_blocks
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 20, n) / 20
    score = base + spread * rng.integers(0, 3, n)
    error = np.full(n, 1e-16) * rng.integers(1, 4, n)
    order, new = tie_blocks(score, error, None)
    s, e = score[order], error[order]
    assert np.all(np.diff(s) >= 0)
    certain = [s[: i + 1].__add__(e[: i + 1]).max() < (s[i + 1:] - e[i + 1:]).min() for i in range(n - 1)]
    assert new.tolist() == [bool(c and s[i + 1] > s[i]) for i, c in enumerate(certain)]


@settings(max_examples=200)
@given(st.integers(2, 400), st.integers(0, 2**32 - 1), st.sampled_from([1, 3, 50]), st.booleans())
@example(400, 0, 1, False)  # most scores in one cluster: the windows hold every rank (the running extremes)
@example(2, 1, 50, True)
def test_the_close_gaps_windows_give_the_running_extremes_answer(n, seed, clusters, running):
    """``_unsure_gaps`` reads only the ranks about each close gap (a score more than the largest
    error below or above cannot reach the extremes); its answer must be the running extremes' over
    every rank (written here from their definition), gap by gap, on clusters of scores a few ulps
    apart with errors of up to 2^-50 of them, exact ties, and scores of every sign; and the same with
    the windows' limit at 0 (the running extremes themselves)."""
    from unittest import mock

    import huc_ref.fast.intervals as intervals
    rng = np.random.default_rng(seed)
    centre = rng.normal(size=clusters) * 10.0 ** rng.integers(-3, 4, clusters)
    s = np.sort(centre[rng.integers(0, clusters, n)] * (1 + rng.integers(0, 5, n) * 2.0**-52))
    error = np.abs(s) * 2.0**-50 * rng.random(n)
    order = rng.permutation(n)
    error_of = np.empty(n)
    error_of[order] = error  # the error of the atom of rank j is error_of[order[j]]
    largest = float(error.max())
    close = np.diff(s) <= 2.0 * largest
    with mock.patch.object(intervals, "_WINDOWS_PER_ATOM", 0 if running else intervals._WINDOWS_PER_ATOM):
        got = intervals._unsure_gaps(s, error_of, order, close, largest)
    want = [bool(c) and not max(s[:i + 1] + error[:i + 1]) < min(s[i + 1:] - error[i + 1:])
            for i, c in enumerate(close)]
    assert got.tolist() == want


@st.composite
def blocked_values(draw):
    """Values cut into blocks as tie blocks cut an audit's entries: cancelling pairs, magnitudes
    from 1e-300 to 1e300 in one block, exact ties of one value, blocks of one."""
    n = draw(st.integers(1, 300))
    rng = np.random.default_rng(draw(st.integers(0, 2**32)))
    kind = draw(st.sampled_from(["normal", "magnitudes", "tiny", "cancel", "repeat"]))
    if kind == "normal":
        x = rng.normal(size=n)
    elif kind == "magnitudes":
        x = rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, n)
    elif kind == "tiny":
        x = np.round(rng.normal(size=n), 3) * 1e-300
    elif kind == "cancel":
        half = rng.normal(size=n) * 10.0 ** rng.integers(-20, 20, n)
        x = rng.permutation(np.concatenate([half, -half, rng.normal(size=3) * 1e-30]))
    else:
        x = rng.choice([0.1, -0.3, 1 / 3], n)
    cuts = rng.choice(np.arange(1, len(x)), size=draw(st.integers(0, min(len(x) - 1, 12))), replace=False)
    return x, np.concatenate([[0], np.sort(cuts)]).astype(np.intp)


@settings(max_examples=300)
@given(blocked_values())
@example((np.array([0.1, 0.2, 0.3, 1.0, 2.0**-60, -1.0]), np.array([0, 3])))
@example((np.full(10**5, 0.1), np.array([0, 1, 40_000])))
@example((np.array([2.0**1000, 1e-300, -(2.0**1000), 3e-300]), np.array([0])))
@example((np.array([5e-324, 5e-324, -1e-323, 2.5e-308]), np.array([0, 3])))
def test_block_sums_are_within_their_bound_of_the_exact_sums_in_any_order(case):
    """Each block's total (Algorithm 2's prefix sums at tie-block ends, App. F.3) is within
    ``gamma_(L-1)`` of the block's ``sum |x|`` plus ``2^-DROPPED`` of its largest ``|x|`` (and half
    the smallest subnormal) of the exact sum of its floats, computed in Fractions; a block of
    one value is that value; reordering every block's values gives the same bits (a float
    cumsum does not: the cancelling blocks)."""
    from huc_ref.fast.numbers import DROPPED, UNIT_ROUNDOFF, block_sums, sum_levels
    x, starts = case
    got = block_sums(x, starts)
    ends = np.append(starts[1:], len(x))
    L = len(sum_levels(int((ends - starts).max())))
    for b, (lo, hi) in enumerate(zip(starts.tolist(), ends.tolist())):
        part = [Fraction(v) for v in x[lo:hi].tolist()]
        if hi - lo == 1:
            assert got[b] == x[lo]
            continue
        bound = ((L - 1) * 1.01 * UNIT_ROUNDOFF * sum(map(abs, part)) + max(map(abs, part)) / 2**DROPPED
                 + Fraction(2.0**-1075))
        assert abs(Fraction(float(got[b])) - sum(part)) <= bound
    rng = np.random.default_rng(len(x))
    shuffled = x.copy()
    for lo, hi in zip(starts.tolist(), ends.tolist()):
        shuffled[lo:hi] = rng.permutation(shuffled[lo:hi])
    assert block_sums(shuffled, starts).tobytes() == got.tobytes()


@settings(max_examples=300)
@given(st.floats(allow_nan=False, allow_infinity=False), st.integers(-999, 999))
@example(3e-310, 1)
@example(-2.0**-1074, -999)
@example(1.5 * 2.0**-1060, 10)  # a tie to even among the subnormals
@example(1.7e308, -999)  # overflows either way
def test_block_sums_scaling_by_a_power_of_two_is_ldexp(x, e):
    """``block_sums`` (and the compiled tie scan) scale a block by multiplying with ``2^-e`` for
    ``|e| < 1000`` instead of ``ldexp(x, -e)``: the same bits, as both round once to nearest, also
    where the result lands among the subnormals."""
    with np.errstate(over="ignore"):
        assert (np.float64(x) * np.ldexp(1.0, -e)).tobytes() == np.ldexp(np.float64(x), -e).tobytes()


def test_block_sums_refuse_blocks_beyond_their_exact_levels():
    """Blocks of more than 2^40 values would leave float64's level sums too few bits: one clear
    error (an internal guard: no audit holds that many atoms)."""
    from huc_ref.errors import HUCError
    from huc_ref.fast.numbers import sum_levels
    with pytest.raises(HUCError, match=r"^block_sums: blocks of 2199023255553 values are beyond float64's exact "
                                       r"level sums$"):
        sum_levels(2**41 + 1)


@pytest.mark.parametrize("size", [2, 3, 4, 5, 1000, 8192, 8193, 10**6, 2**30 + 1])
def test_the_compiled_levels_are_sum_levels(size):
    """The compiled tie scan splits each block with the levels of its own size: those of
    ``sum_levels`` (the same extractors, bit for bit), at the sizes where their number changes."""
    from huc_ref.fast.kernels import _fill_levels
    from huc_ref.fast.numbers import sum_levels
    M = np.empty(64)
    L = _fill_levels(size, M)
    assert M[:L].tobytes() == sum_levels(size).tobytes()


@settings(max_examples=200)
@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0, 1e-300, 5e-324, -0.25, -0.0, np.inf, np.nan, 0.5 + 1e-6]),
                min_size=2, max_size=6), st.sampled_from([-1.0, 0.0, 1e-5]))
@example([0.5, 0.5], 1e-5)
@example([np.nan, 1.0], -1.0)
@example([5e-324, 1.0], -1.0)
def test_the_compiled_row_check_is_the_rule(row, tol):
    """``flat_rows_ok`` (branch-free) passes a row exactly when every entry is 0 or a finite
    normal positive float and the sum is positive, finite and (``tol >= 0``) within ``tol`` of 1,
    the rule the numpy pass reports on; the row is also tried after many good rows."""
    from huc_ref.fast.kernels import flat_rows_ok
    from huc_ref.fast.numbers import SMALLEST_NORMAL
    x = np.array(row)
    with np.errstate(invalid="ignore"):
        total = x.sum()
        rule = bool(np.all((x == 0) | ((x >= SMALLEST_NORMAL) & (x < np.inf))) and 0 < total < np.inf
                    and (tol < 0 or abs(total - 1) <= tol))
    good = np.tile(np.full(len(row), 1.0 / len(row)), (50, 1))
    assert bool(flat_rows_ok(x[None], tol, SMALLEST_NORMAL)) == rule
    among_good = bool(flat_rows_ok(np.vstack([good, x, good]), tol, SMALLEST_NORMAL))
    assert among_good == (rule and bool(flat_rows_ok(good, tol, SMALLEST_NORMAL)))


@st.composite
def score_arrays(draw):
    """Scores as audits make them: ties, negatives, -0.0 and 0.0, 1e-300, and runs of distinct
    floats a few ulps apart (below the bits ``sort_scores`` cuts off), in any proportion."""
    n = draw(st.integers(1, 400))
    rng = np.random.default_rng(draw(st.integers(0, 2**32)))
    kind = draw(st.sampled_from(["uniform", "ties", "ulps", "mixed", "signed"]))
    if kind == "uniform":
        return rng.random(n)
    if kind == "ties":
        return np.round(rng.random(n), 1)
    if kind == "ulps":
        return 0.75 + rng.integers(-50, 50, n) * 2.0**-52
    if kind == "signed":
        return rng.choice([-0.0, 0.0, -1e-300, 1e-300, -0.5, 0.5, -1.0], n)
    return np.concatenate([rng.random(n), 0.5 + rng.integers(0, 9, n) * 2.0**-53, np.round(rng.random(n), 2)])


@settings(max_examples=300)
@given(score_arrays())
@example(np.array([1.0, np.nextafter(1.0, 0.0), 1.0 - 2**-40, 1.0, 0.5]))
@example(np.concatenate([np.linspace(0, 1, 5000), 1 + np.arange(5000) * 2.0**-52]))
@example(np.tile(np.round(np.linspace(-1, 1, 997), 3), 7))  # ties only, past 4,096: the packed keys, ranked
@example(np.tile([-0.0, 0.0, 5e-324, -5e-324, 1.0], 1000))
@example(np.concatenate([np.linspace(0.1, 0.9, 5001)[::-1], [0.5 + 2.0**-51, 0.5 + 2.0**-52]]))  # one run to settle
def test_sort_scores_sorts_like_numpy(score):
    """``sort_scores`` (a value sort of packed keys, then the runs the cut-off bits leave open)
    gives a permutation whose scores are ``np.sort``'s, whatever share of them lies within the
    cut-off bits of each other (past an eighth it hands over to ``np.argsort``); so does the
    packed-key sort called directly, below the size where ``sort_scores`` starts using it."""
    from huc_ref.fast.intervals import argsort_keys, score_keys, sort_scores
    order, s = sort_scores(score)
    assert sorted(order.tolist()) == list(range(len(score)))
    assert score[order].tobytes() == s.tobytes()
    assert np.array_equal(s, np.sort(score))
    packed = argsort_keys(score_keys(score))  # the packed-key sort itself, at every size (sort_scores uses
    assert sorted(packed.tolist()) == list(range(len(score)))  # it from 4,096 scores on)
    assert np.array_equal(score[packed], np.sort(score))
    order, ranked = argsort_keys(score_keys(score), score)  # with the scores in rank order
    assert np.array_equal(score[order], np.sort(score)) and ranked.tobytes() == score[order].tobytes()
    if numba_available():  # numba's packed sort, keys made and read back in one compiled pass each, at every size
        from huc_ref.fast.intervals import _sort_compiled
        from huc_ref.fast.kernels import pack_scores
        b = max(1, (len(score) - 1).bit_length())  # the keys (computed again in Python's integers), index below
        want = [k >> b << b | i for i, k in enumerate(python_keys(score))]
        assert pack_scores(score, b, np.empty(len(score), dtype=np.uint64)).tolist() == want
        order, ranked = _sort_compiled(score)
        assert sorted(order.tolist()) == list(range(len(score)))
        assert np.array_equal(score[order], np.sort(score)) and ranked.tobytes() == score[order].tobytes()


def distinct_scores(d: int, seed: int) -> np.ndarray:
    """``d`` scores with distinct order-preserving keys: -0.0 and 0.0, the smallest subnormals, 1e-300
    and their negatives, then rounded and unrounded normals."""
    from huc_ref.fast.intervals import score_keys
    rng = np.random.default_rng(seed)
    pool = np.concatenate([[-0.0, 0.0, 5e-324, -5e-324, 1e-300, -1e-300, 1.0],
                           np.round(rng.normal(size=d), 3), rng.normal(size=d)])
    _, first = np.unique(score_keys(pool), return_index=True)
    return pool[np.sort(first)][:d]


@pytest.mark.skipif(not numba_available(), reason="the numba extra is not installed")
@settings(max_examples=40)
@given(st.integers(1, 6000), st.integers(4096, 12000), st.integers(0, 2**32 - 1))
@example(1, 4096, 0)  # one score for all
@example(4096, 4096, 1)  # every score distinct, as many as the table takes
@example(4097, 9000, 2)  # one more: group_sort gives up, the radix sort sorts
@example(4097, 4096, 0)  # more values than scores: 4,096 of them, every score distinct (found by hypothesis)
@example(999, 10**5, 3)  # three decimals (scores with many ties)
def test_few_scores_are_grouped_into_the_packed_sorts_order(d, n, seed):
    """``group_sort`` (numba, App. F.3's sort by grouping) orders the keys ascending and equal keys
    by index, as the packed keys sort them (``np.lexsort`` here), with the scores' bits in that
    order; past ``GROUPED_KEYS`` distinct keys it returns -1, and ``sort_scores`` sorts by the
    packed keys instead: a permutation whose keys never fall."""
    from huc_ref.fast.intervals import _few_scores, score_keys, sort_scores
    from huc_ref.fast.kernels import GROUPED_KEYS, group_sort
    rng = np.random.default_rng(seed)
    values = distinct_scores(d, seed)
    score = values[rng.permutation(np.resize(np.arange(len(values)), n))]  # every value at least once
    key = score_keys(score)
    want = np.lexsort((np.arange(n), key))
    order, ranked = np.empty(n, dtype=np.intp), np.empty(n)
    found = group_sort(key, score, order, ranked, np.empty(n, dtype=np.uint16))
    present = len(np.unique(key))  # (fewer than d where n < d)
    assert found == (present if present <= GROUPED_KEYS else -1)
    if found > 0:
        assert np.array_equal(order, want) and ranked.tobytes() == score[want].tobytes()
    order, ranked = sort_scores(score, "numba")
    assert sorted(order.tolist()) == list(range(n)) and np.all(key[order][1:] >= key[order][:-1])
    assert ranked.tobytes() == score[order].tobytes()
    if found > 0 and _few_scores(score):
        assert np.array_equal(order, want)  # (sort_scores tried group_sort: its order)


def python_keys(score) -> list:
    """Each float's order-preserving key, from its bits in Python's integers (negative floats flip
    every bit, others the sign bit): a second computation of ``score_keys``."""
    import struct
    bits = [struct.unpack("<Q", struct.pack("<d", float(x)))[0] for x in score]
    return [b ^ (2**64 - 1) if b >> 63 else b ^ 2**63 for b in bits]


@settings(max_examples=60)
@given(st.integers(1, 3000), st.integers(1, 9000), st.integers(0, 2**32 - 1), st.booleans(), st.booleans())
@example(1, 4096, 0, False, False)  # one score for all
@example(999, 10**4, 3, True, False)  # three decimals (scores with many ties)
@example(2, 100, 0, False, False)  # -0.0 and 0.0: two distinct keys, two buckets
@example(3000, 3000, 5, False, False)  # every score distinct, near neighbours among them
@example(40, 500, 1, False, True)  # no sign bit: 0.0, subnormals, 1e-300 and normals, their bits as keys
def test_few_scores_are_grouped_without_a_sort(d, n, seed, rounded, nonnegative):
    """``group_scores`` (App. F.3's tie blocks without a sort) is None exactly where two distinct
    keys share a bucket, computed here again in Python's integers; otherwise each score's group
    is its key's rank among the distinct keys and the distinct scores are those keys' floats, bit
    for bit.  The scores: -0.0 and 0.0, subnormals, 1e-300 and their negatives, normals (or,
    ``rounded``, probabilities to three decimals; ``nonnegative``: their absolute values, whose own
    bits are the keys, read from the caller's array, which must come back unchanged)."""
    from huc_ref.fast.intervals import GROUP_BUCKETS, group_scores
    rng = np.random.default_rng(seed)
    values = np.round(rng.uniform(0.001, 0.999, d), 3) if rounded else distinct_scores(d, seed)
    if nonnegative:
        values = np.unique(np.abs(values))
    score = values[rng.permutation(np.resize(np.arange(len(values)), n))]
    given_scores = score.copy()
    keys = python_keys(score)
    least, span = min(keys), max(keys) - min(keys)
    shift = max(0, span.bit_length() - (GROUP_BUCKETS.bit_length() - 1))
    held = {}
    for k in keys:
        held.setdefault((k - least) >> shift, set()).add(k)
    found = group_scores(score)
    assert np.array_equal(score, given_scores, equal_nan=True) and np.array_equal(np.signbit(score),
                                                                                 np.signbit(given_scores))
    assert (found is None) == any(len(v) > 1 for v in held.values())
    if found is not None:
        group, distinct = found
        ranks = {k: j for j, k in enumerate(sorted(set(keys)))}
        assert group.tolist() == [ranks[k] for k in keys]
        assert python_keys(distinct) == sorted(set(keys))


@settings(max_examples=60)
@given(st.lists(st.tuples(st.integers(0, 6), st.sampled_from([0.1, -0.3, 1e-300, -5e-324, 2.0**-60, 1e300, -1e300,
                                                                 3.0, np.inf, -np.inf, np.nan, 0.0, -0.0])),
                min_size=1, max_size=60),
       st.integers(0, 2**32 - 1))
@example([(0, 1e300), (0, 1e300), (1, 0.1)], 0)  # a block beyond 2^1000: the ldexp route
@example([(0, np.inf), (0, -np.inf), (1, 0.1)], 0)  # infinities passed on
@example([(0, 0.1), (1, 0.2)], 0)  # one value per block
@example([(0, 0.1)] * 5000 + [(0, -1 / 3)] * 3000 + [(1, 2.0**-60)] * 1500 + [(1, 3.0)] * 7, 1)  # thousands alike
def test_group_sums_are_block_sums_of_the_values_sorted_by_block(pairs, seed):
    """``group_sums`` gives, bit for bit, ``block_sums`` of the values sorted by block (each
    block's values shuffled), and so it does given each block's equal values once with their
    count (``label_cells``' form): the same level sums, found by block number instead of position; a
    block holding an infinity or NaN is summed plainly (inf or NaN in any order), the others as
    usual (before, any such block sent every block to the plain, order-dependent sum)."""
    from huc_ref.fast.numbers import block_sums, group_sums
    rng = np.random.default_rng(seed)
    used = sorted({g for g, _ in pairs})  # block numbers 0 .. d - 1, every one used
    group = np.array([used.index(g) for g, _ in pairs])
    x = np.array([v for _, v in pairs]) * rng.choice([1.0, 0.5, 3.0])
    order = rng.permutation(len(x))
    order = order[np.argsort(group[order], kind="stable")]  # by block, in a random order within blocks
    starts = np.flatnonzero(np.diff(np.concatenate([[-1], group[order]])))
    want = block_sums(x[order], starts)
    got = group_sums(x, group, len(used))
    assert np.array_equal(got, want, equal_nan=True)
    number = ~np.isnan(want)  # (a NaN's sign bit depends on which operand x86 meets first: no meaning)
    assert np.signbit(got[number]).tolist() == np.signbit(want[number]).tolist()
    # each block's equal values (equal bits) given once with their count: the same sums
    cell = {}
    for g, bits in zip(group.tolist(), x.view(np.uint64).tolist()):
        cell[g, bits] = cell.get((g, bits), 0) + 1
    g, bits = (np.array(v, dtype=t) for v, t in zip(zip(*cell), (np.intp, np.uint64)))
    counted = group_sums(bits.view(np.float64), g, len(used), count=np.array(list(cell.values())))
    assert np.array_equal(counted, want, equal_nan=True)
    assert np.signbit(counted[number]).tolist() == np.signbit(want[number]).tolist()


@settings(max_examples=25)
@given(st.integers(4096, 9000), st.integers(2, 100), st.integers(1, 60), st.sampled_from(["equal", "mixed", "unequal"]),
       st.booleans(), st.integers(0, 2**32 - 1))
@example(5000, 2, 999, "equal", False, 0)  # binary UC on scores of three decimals: thousands of cells
@example(4096, 30, 200, "mixed", False, 1)  # more cells than atoms: the blocks alone
@example(6000, 3, 5, "equal", True, 2)  # one residual off its cell's: atom by atom
@example(9000, 100, 60, "mixed", False, 4)  # 100 labels, 6,000 cells
def test_tie_blocks_summed_by_label_are_the_atoms_sums(n, K, distinct, weights, planted, seed):
    """numpy's UC on scores with few distinct values (blocks found without a sort): each block's
    residuals summed by label (``label_cells``, given the labels) or atom by atom (not given)
    give the same sups, witnesses and moments, bit for bit.  The residuals are a table
    utility's ``u(y) - mu`` (values 1, 0, -1/2, 1/3 by label), subgroups of equal weights, one of
    each, or none equal; a residual off its cell's (planted) sends those subgroups atom by atom."""
    from huc_ref.fast.intervals import Rows
    rng = np.random.default_rng(seed)
    score = rng.choice(np.round(rng.uniform(0.001, 0.999, distinct), 3), n)
    y = rng.integers(0, K, n)
    U = rng.choice([1.0, 0.0, -0.5, 1 / 3], K)
    residual = U[y] - score
    if planted:
        residual[n // 2] += 0.5
    W = {"equal": np.full((n, 1), 1 / n), "mixed": np.stack([np.full(n, 1 / n), rng.uniform(-1, 1, n) / n], axis=1),
         "unequal": rng.uniform(0, 1, (n, 2)) / n}[weights]
    by_label = Rows(score, residual, np.zeros((0, n)), None, None, W, 1, "numpy", labels=(y, K))
    by_atom = Rows(score, residual, np.zeros((0, n)), None, None, W, 1, "numpy")
    assert "_groups" in vars(by_label) and "_groups" in vars(by_atom)  # (found without a sort, both)
    assert (by_label._cells is not None) == (len(np.unique(score)) * K <= n)
    for mine, theirs in zip(by_label.best, by_atom.best):
        for a, b in zip(mine, theirs):
            assert np.array_equal(a, b) and np.array_equal(np.signbit(a), np.signbit(b))


@settings(max_examples=60)
@given(st.lists(st.sampled_from([0.5, 0.25, 0.001, 0.999, 1e-300, -1.0, -0.0, 0.0, 3.0, 0.5 + 2**-40, 1e300]),
                min_size=1, max_size=40),
       st.integers(1, 5), st.integers(1, 400), st.booleans(), st.integers(0, 2**32 - 1))
@example([0.5, 0.5 + 2**-40], 2, 50, False, 0)  # two distinct scores in one bucket: no blocks
@example([0.5, 0.5 + 2**-53, 0.5 + 65535 * 2**-53], 1, 60, False, 3)  # keys 0, 1 and 2^16 - 1 apart: 2^16 buckets
@example([0.25, 0.5], 2, 1, False, 1)  # four cells for two atoms: the blocks alone
@example([-1.0, -0.0, 0.0, 1e-300, 3.0], 3, 200, True, 2)  # signs, zeros; a cell holding two values
def test_compiled_blocks_are_group_scores_and_label_cells(values, K, n, planted, seed):
    """``kernels.group_blocks`` (numba's blocks without a sort, run compiled or as Python) gives
    ``group_scores``' blocks and distinct scores and, where it takes them, ``label_cells``' cells,
    bit for bit: scores drawn from a few values (of both signs, -0.0 and 0.0, 1e-300 and 1e300,
    two a bucket apart), labels, and residuals one per block and label (planted: one more)."""
    from huc_ref.fast.intervals import _group_compiled, group_scores
    from huc_ref.fast.numbers import label_cells
    rng = np.random.default_rng(seed)
    score = rng.choice(np.array(values), n)
    y = rng.integers(0, K, n)
    per_cell = rng.normal(size=(len(values) + 1, K))
    residual = per_cell[np.searchsorted(np.unique(score), score), y]
    if planted:
        residual[n // 2] += 1.0
    grouped, cells = _group_compiled(score, (y, K), residual)
    want = group_scores(score)
    assert (grouped is None) == (want is None)
    if want is None:
        return
    assert np.array_equal(grouped[0], want[0])
    assert grouped[1].view(np.uint64).tolist() == want[1].view(np.uint64).tolist()
    d = len(want[1])
    expected = label_cells(residual, want[0] * K + y, d, K) if d * K <= n else None
    assert (cells is None) == (expected is None)
    if cells is not None:
        for a, b in zip(cells, expected):
            assert np.array_equal(a.view(np.uint64) if a.dtype == float else a,
                                  b.view(np.uint64) if b.dtype == float else b)


@pytest.mark.parametrize("accelerator", ["numpy", "numba"])
def test_a_100_class_softmax_with_entries_near_1e_300_is_summed_by_label(monkeypatch, accelerator):
    """6,000 rows of a 100-class prediction, each 1/2, 1/4 and 1/4 on three classes and 2^-1000
    (about 9e-302) on the other 97, so that every row sums to exactly 1 and a class's score takes
    three values: the class indicators' audits find the tie blocks without a sort and sum each
    block by label (numba only where every subgroup's weights are equal), and are the same document
    as by the sort (the blocks refused), also with a subgroup of unequal weights beside everyone."""
    from huc_ref import class_indicator
    if accelerator == "numba" and not numba_available():
        pytest.skip("the numba extra is not installed")
    intervals = importlib.import_module("huc_ref.fast.intervals")
    rng = np.random.default_rng(21)
    n, K = 6000, 100
    tree = LabelTree.from_children("r", {"r": [f"c{i}" for i in range(K)]})
    tree = tree.with_labels(tree.labels)  # (the arrays' columns are in its order)
    P = np.full((n, K), 2.0**-1000)
    big = np.stack([rng.permutation(K)[:3] for _ in range(n)])
    P[np.arange(n)[:, None], big] = [0.5, 0.25, 0.25]
    assert np.all(P.sum(axis=1) == 1.0)
    y = np.where(rng.random(n) < 0.9, big[np.arange(n), rng.integers(0, 3, n)], rng.integers(0, K, n))
    us = {f"c{c}": class_indicator(tree, f"c{c}") for c in (0, 1, 99)}
    groups = {"all": np.ones(n), "some": rng.uniform(-1, 1, n)}
    cells = []
    for name in ("label_cells", "_group_compiled"):
        found = getattr(intervals, name)
        monkeypatch.setattr(intervals, name, lambda *a, _f=found: cells.append(_f(*a)) or cells[-1])
    docs = [fast_audit(y, P, tree, us, subgroups=g, accelerator=accelerator).to_json() for g in (None, groups)]
    # numpy sums by label in both audits (everyone's weights are equal), numba where every subgroup's are
    assert len(cells) == (6 if accelerator == "numpy" else 3) and all(c is not None and c[1] is not None for c in cells)
    assert docs[0]["uc"]["value"] > 0
    monkeypatch.setattr(intervals, "group_scores", lambda *a: None)
    monkeypatch.setattr(intervals, "_group_compiled", lambda *a: (None, None))
    assert docs == [fast_audit(y, P, tree, us, subgroups=g, accelerator=accelerator).to_json() for g in (None, groups)]


def test_numpy_groups_tied_scores_and_the_audit_is_the_same_document(monkeypatch):
    """Binary UC on 20,000 scores of three decimals, with sample weights and two subgroups (one of
    equal weights, one not), a flat 10-class tree's top-1 and class utilities on rounded
    softmax rows, and binary UC on five scores from 1e-300 to 1 - 1e-16: numpy finds the tie
    blocks without a sort (``group_scores``, found: counted; the flat tree's renormalised scores
    fall back to the sort), and the audit is the same document as with the packed sort; so are the sort it makes when
    asked (``order``, ``starts``, ``block_last``) and the atoms of a witness."""
    from huc_ref import TopK, class_indicator
    intervals = importlib.import_module("huc_ref.fast.intervals")
    audit_module = importlib.import_module("huc_ref.fast.audit")
    rng = np.random.default_rng(12)
    tree = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    p = np.round(rng.uniform(0.001, 0.999, 20000), 3)
    y, P = (rng.random(20000) < p).astype(np.int64), np.stack([1 - p, p], axis=1)
    flat = LabelTree.from_children("r", {"r": [f"c{i}" for i in range(10)]})
    logits = rng.normal(size=(6000, 10)) * 2
    Q = np.round(np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True), 2) + 0.01
    Q /= Q.sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(10, p=q) for q in Q])
    cases = [(y, P, tree, {"pos": class_indicator(tree, "pos")},
              dict(sample_weight=rng.uniform(0.5, 2, 20000),
                   subgroups={"all": np.ones(20000), "some": rng.uniform(-1, 1, 20000)})),
             (y, P, tree, {"pos": class_indicator(tree, "pos")}, {}),
             (labels, Q, flat, {"top1": TopK(flat, 1), "c3": class_indicator(flat, "c3")}, {})]
    far = rng.choice([1e-300, 1e-5, 0.3, 0.7, 1 - 1e-16], 6000)  # scores from near 1e-300 to near 1
    cases.append(((rng.random(6000) < far).astype(np.int64), np.stack([1 - far, far], axis=1), tree,
                  {"pos": class_indicator(tree, "pos")}, {}))
    cases.append((y, P, tree, {"pos": class_indicator(tree, "pos")},  # one subgroup of equal weights, one not
                  dict(subgroups={"all": np.ones(20000), "some": rng.uniform(-1, 1, 20000)})))
    calls, grouped, cells = [], intervals.group_scores, []
    label_cells = intervals.label_cells

    def counted(score, labels=None):
        found = grouped(score, labels)
        calls.append(found is not None)
        return found

    def cells_counted(*args):
        found = label_cells(*args)
        cells.append(found is not None)
        return found
    monkeypatch.setattr(intervals, "group_scores", counted)
    monkeypatch.setattr(intervals, "label_cells", cells_counted)
    docs = [fast_audit(*case[:4], **case[4]).to_json() for case in cases]
    # grouped, but for the flat tree's two utilities: its renormalised rows put distinct scores a few ulps
    # apart into one bucket, and the sort takes them (the fallback, compared below like the rest)
    assert calls == [True, True, False, False, True, True]
    # each block's residuals summed by label where a subgroup's weights are equal (the first case's are not;
    # the last case's subgroup "some" atom by atom)
    assert cells == [True, True, True]
    assert docs[0]["uc"]["value"] > 0 and docs[3]["uc"]["value"] > 0
    ft = audit_module.FastTree(tree)
    terms = audit_module.sample_terms(ft, P, y, cases[0][3])
    W = np.full((20000, 1), 1 / 20000)
    rows = audit_module.sample_tables(ft, terms, y, W, cases[0][3])["pos"]
    assert "_groups" in vars(rows)  # (found without a sort)
    monkeypatch.setattr(intervals, "group_scores", lambda score, labels=None: None)
    assert docs == [fast_audit(*case[:4], **case[4]).to_json() for case in cases]
    packed = audit_module.sample_tables(ft, terms, y, W, cases[0][3])["pos"]
    for name in ("order", "starts", "block_last"):
        assert np.array_equal(getattr(rows, name), getattr(packed, name)), name
    r, b = int(rows.best[0][1][0]), int(rows.best[0][2][0])
    assert b > r and np.array_equal(rows.members(r, b), packed.members(r, b))


@pytest.mark.parametrize("accelerator", ["numpy", "numba"])
def test_minus_zero_and_zero_are_one_tie_block(accelerator):
    """Scores -0.0, 0.0 and 0.5 on 6,000 atoms (few distinct scores: numpy tries its blocks
    without a sort, which finds -0.0 and 0.0 two scores with no gap between them and leaves them
    to the sort): two tie blocks, and the UC sup is the largest of ``|B1|``, ``|B2|`` and
    ``|B1 + B2|``, the block sums computed here with ``math.fsum``."""
    import math

    from huc_ref.fast.intervals import Rows
    if accelerator == "numba" and not numba_available():
        pytest.skip("the numba extra is not installed")
    rng = np.random.default_rng(4)
    score = rng.choice([-0.0, 0.0, 0.5], 6000)
    residual = rng.normal(size=6000) + 0.01
    rows = Rows(score, residual, np.zeros((0, 6000)), None, None, np.full((6000, 1), 1 / 6000), 1, accelerator)
    b1, b2 = (math.fsum(residual[m].tolist()) / 6000 for m in (score == 0, score == 0.5))
    assert rows.best[0][0][0] == pytest.approx(max(abs(b1), abs(b2), abs(b1 + b2)), rel=1e-12)
    assert len(rows.starts) == 2


@pytest.mark.skipif(not numba_available(), reason="the numba extra is not installed")
def test_binary_uc_on_tied_scores_is_the_same_document_grouped_or_packed(monkeypatch):
    """Binary UC (MCGrad's ECCE) on 20,000 scores of three decimals: numba, like numpy, finds the
    blocks without a sort (``group_blocks``, compiled: counted; equal weights, each block's
    residuals summed by label), and where that is not taken sorts them by grouping (``group_sort``,
    used: counted) and runs its tied scan: the audits are the same document; numpy's with the packed
    keys too; a flat 10-class tree's top-1 and class utilities on rounded softmax rows: numba's
    audit is the same document with its scores grouped or sorted by the packed keys (numba's and
    numpy's flat-tree scores may differ in the last bits, as before: tests/test_fast_shapes.py)."""
    from huc_ref import TopK, class_indicator
    from huc_ref.fast import kernels
    intervals = importlib.import_module("huc_ref.fast.intervals")
    tree = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    rng = np.random.default_rng(11)
    p = np.round(rng.uniform(0.001, 0.999, 20000), 3)
    y, P = (rng.random(20000) < p).astype(np.int64), np.stack([1 - p, p], axis=1)
    us = {"pos": class_indicator(tree, "pos")}
    calls, grouped = [], kernels.group_sort
    monkeypatch.setattr(kernels, "group_sort", lambda *a: calls.append(1) or grouped(*a))
    blocks, group_blocks = [], kernels.group_blocks
    monkeypatch.setattr(kernels, "group_blocks", lambda *a: blocks.append(1) or group_blocks(*a))
    numba_doc = fast_audit(y, P, tree, us, accelerator="numba").to_json()
    assert blocks and not calls, "the blocks were not found without a sort"
    assert numba_doc == fast_audit(y, P, tree, us, accelerator="numpy").to_json()
    assert numba_doc["uc"]["value"] > 0
    group_scores = intervals.group_scores
    monkeypatch.setattr(intervals, "_group_compiled", lambda *a: (None, None))
    assert numba_doc == fast_audit(y, P, tree, us, accelerator="numba").to_json()
    assert calls, "group_sort was not used"
    monkeypatch.setattr(intervals, "group_scores", lambda *a: None)
    monkeypatch.setattr(intervals, "argsort_keys", numpy_argsort_keys)  # numpy: the packed keys' stand-in
    assert numba_doc == fast_audit(y, P, tree, us, accelerator="numpy").to_json()
    monkeypatch.setattr(intervals, "group_scores", group_scores)
    # a flat 10-class tree, softmax rows rounded to two decimals (then renormalised): top-1 and one class's
    # indicator, each utility's few distinct scores grouped
    flat = LabelTree.from_children("r", {"r": [f"c{i}" for i in range(10)]})
    logits = rng.normal(size=(6000, 10)) * 2
    Q = np.round(np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True), 2) + 0.01
    Q /= Q.sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(10, p=q) for q in Q])
    us = {"top1": TopK(flat, 1), "c3": class_indicator(flat, "c3")}
    del calls[:]
    numba_doc = fast_audit(labels, Q, flat, us, accelerator="numba").to_json()
    assert len(calls) == 2, calls
    monkeypatch.setattr(intervals, "_few_scores", lambda score: False)  # the packed keys' radix sort instead
    assert numba_doc == fast_audit(labels, Q, flat, us, accelerator="numba").to_json()
    assert len(calls) == 2, calls


def numpy_argsort_keys(key, values=None, engine="numpy"):
    """``argsort_keys`` by ``np.argsort``: the sort the packed keys stand in for (either engine's)."""
    order = np.argsort(key)
    return order if values is None else (order, values.take(order))


def test_the_packed_sort_changes_no_audit_of_a_100_class_softmax_near_1e_300(monkeypatch):
    """A flat 100-class tree, 6,000 softmax rows with entries down to 1e-300 (a size where the
    packed-key sort is used): the audit is the same document, bit for bit, with numpy's argsort
    in its place (equal scores are summed in the canonical order either way)."""
    import sys

    from huc_ref import LabelTree, TopK, class_indicator
    intervals = sys.modules["huc_ref.fast.intervals"]
    t = LabelTree.from_children("r", {"r": [f"y{i}" for i in range(100)]})
    t = t.with_labels(t.labels)  # (the arrays' columns are in its order)
    rng = np.random.default_rng(5)
    logits = rng.normal(size=(6000, 100))
    logits[:, 0] = rng.uniform(-690, 5, 6000)  # p_0 from about 1e-300 to 0.5: distinct scores, few ties
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    assert P.min() < 1e-295
    y = rng.integers(0, 100, 6000)
    us = {"top1": TopK(t, 1), "y0": class_indicator(t, "y0")}
    packed_sort, compiled_sort = intervals.argsort_keys, intervals._sort_compiled
    for engine in ["numpy"] + (["numba"] if numba_available() else []):
        calls = []
        with monkeypatch.context() as m:
            m.setattr(intervals, "argsort_keys", lambda key, values=None, how="numpy", calls=calls:
                      calls.append(len(key)) or packed_sort(key, values, how))
            m.setattr(intervals, "_sort_compiled", lambda score, calls=calls:
                      calls.append(len(score)) or compiled_sort(score))
            packed = fast_audit(y, P, t, us, accelerator=engine).to_json()
            m.setattr(intervals, "argsort_keys", numpy_argsort_keys)
            m.setattr(intervals, "_sort_compiled", lambda score: numpy_argsort_keys(score, score))
            plain = fast_audit(y, P, t, us, accelerator=engine).to_json()
        assert calls, f"the packed sort was not used ({engine})"
        assert packed == plain
        assert packed["huc"]["value"] > 0


def exact_mean(tree, p, u, node):
    """``mu_{u,v}(p)`` (C.1) of float rows read as the rationals they are."""
    labels = tree.label_ids_below(node)
    return sum(Fraction(p[y]) * Fraction(u[y]) for y in labels) / sum(Fraction(p[y]) for y in labels)


@settings(max_examples=60)
@given(wide_trees(max_leaves=60), st.integers(0, 2**32 - 1), st.sampled_from([0, -300]))
def test_huc_direction_matches_its_exact_value(tree, seed, floor_exponent):
    """HUC-Boost's direction ``h_j = c (mu_{u,v_j} - mu_{u,v})`` (Algorithm 1, Sec. 3.2), from the
    sums of ``p u`` over each child's labels, against the same formula in exact rationals of the
    same floats, at every internal node, on wide trees and softmax rows near 1e-300: within a
    few ulps of the largest term (it is a difference of means, so relative to ``max |u|``)."""
    from huc_ref.fast.boost import direction
    from huc_ref.fast.tree import FastTree
    from tests.strategies import softmax_rows
    ft, rng = FastTree(tree), np.random.default_rng(seed)
    P = softmax_rows(seed, tree.K, 5, 3.0, floor_exponent)
    U = rng.integers(-2, 3, size=P.shape).astype(float)
    c = rng.choice([-1.0, 0.5, 1.0], size=(5, 1))
    S = ft.subtree_sums(P)
    for a in [tree.id(v) for v in tree.branching_nodes]:
        kids = list(tree.child_ids[a])
        h, q = direction("huc", ft, P, U, c, S[:, [a] + kids], a)
        for i in range(5):
            for j, child in enumerate(kids):
                exact = Fraction(c[i, 0]) * (exact_mean(tree, P[i], U[i], child) - exact_mean(tree, P[i], U[i], a))
                assert abs(Fraction(h[i, j]) - exact) <= Fraction(1, 10**12)
                assert q[i, j] == pytest.approx(float(Fraction(S[i, child]) / Fraction(S[i, a])), rel=1e-12)


@settings(max_examples=25)
@given(wide_trees(max_leaves=40), st.integers(0, 2**32 - 1), st.sampled_from([0, -300]))
def test_an_update_reads_top1_values_from_the_sample_pass_choices(tree, seed, floor_exponent):
    """A HUC-Boost update on sample atoms takes its members' top-1 values ``u(p_i, .)`` (K.2) from
    the choices the audit's sample pass made at the same rows; they are the values the utility
    itself decides there (float64 where it certifies, exactly where not: the rows repeat, and
    one has its two largest entries equal), at every update of a run."""
    from huc_ref import Top1AtDepth
    from huc_ref.fast.boost import FloatState, boost_sample
    from tests.strategies import softmax_rows
    if tree.K < 2:
        return
    from huc_ref.fast.tree import FastTree
    P = softmax_rows(seed, tree.K, 60, 2.0, floor_exponent)
    y = np.random.default_rng(seed).integers(0, tree.K, 60)
    us = {f"top1@{d}": Top1AtDepth(tree, d) for d in sorted({1, max(tree.depth_ids)})}
    ft = FastTree(tree)
    for u in us.values():  # the sample pass's positions in the cut are the utility's candidates'
        assert ft.level_nodes[ft.cut(min(u.depth, ft.H))[0]].tolist() == list(u.candidate_ids)
    seen, chosen = [], FloatState._chosen_values

    def checked(self, name, rows):
        U = chosen(self, name, rows)
        if U is not None:
            assert np.array_equal(U, self._values(name, rows, self._masses(rows)))
            seen.append(len(rows))
        return U
    with pytest.MonkeyPatch.context() as m:
        m.setattr(FloatState, "_chosen_values", checked)
        run = boost_sample(tree, P, y, us, epsilon="0.0001", max_updates=6)
    assert len(seen) == len(run.updates)  # every update read the choices


def test_update_values_of_rows_whose_top1_choice_float64_cannot_take():
    """The rows ``(1/2, 3 2^-55, 1/2 + 2^-53)`` under ``r -> {A: [y1, y2], y3}``: float64 adds
    ``pi_A`` up to ``pi_y3`` exactly (a tie, so the first candidate, A), while exactly
    ``pi_A = 1/2 + 3 2^-55 < pi_y3``: top-1 at depth 1 is y3 (K.2).  An update's members take
    the exact choice the sample pass made, not float64's."""
    from huc_ref import LabelTree, Top1AtDepth
    from huc_ref.fast.boost import FloatState, boost_sample
    tree = LabelTree.from_children("r", {"r": ["A", "y3"], "A": ["y1", "y2"]})
    rng = np.random.default_rng(0)
    tricky = np.array([0.5, 3 * 2.0**-55, 0.5 + 2.0**-53])
    P = np.vstack([np.tile(tricky, (30, 1)), rng.dirichlet([1, 1, 1], 30)])
    y = np.concatenate([np.zeros(30, dtype=int), rng.integers(0, 3, 30)])  # y1: not below y3
    us = {"top1": Top1AtDepth(tree, 1)}
    seen, chosen = [], FloatState._chosen_values

    def checked(self, name, rows):
        U = chosen(self, name, rows)
        assert np.array_equal(U, self._values(name, rows, self._masses(rows)))
        if not self.moved.any():  # the first update: the rows as given
            seen.extend(U[rows < 30].tolist())
        return U
    with pytest.MonkeyPatch.context() as m:
        m.setattr(FloatState, "_chosen_values", checked)
        boost_sample(tree, P, y, us, epsilon="0.0001", max_updates=3)
    assert seen and all(row == [0.0, 0.0, 1.0] for row in seen)  # y3's labels: the exact choice


@st.composite
def ranked_columns(draw, exact: bool = False):
    """Inputs of :func:`huc_ref.fast.kernels.rank_scan` as an audit gives them, in rank order: tie
    blocks (none, some, one block of everyone), zero entries, columns missing for some kinds
    (negative or 0 in the column table), subgroups on both sides of whole vectors of
    ``GROUP_LANES`` (1, 7, 8, 9, 17), indicator subgroups (each a column of zeros, of either sign,
    and one number) and values from 1e-300 to 1e300; ``exact``: small multiples
    of powers of two instead, whose every product and sum float64 holds exactly."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n, D, kinds = draw(st.integers(1, 60)), draw(st.integers(0, 4)), draw(st.integers(1, 5))
    G = draw(st.sampled_from([1, 2, 3, 7, 8, 9, 17]))
    ties = draw(st.sampled_from(["none", "some", "one block"]))
    new = {"none": np.ones(n - 1, bool), "some": rng.random(n - 1) < 0.4, "one block": np.zeros(n - 1, bool)}[ties]
    scale = draw(st.sampled_from(["normal", "magnitudes", "tiny"]))

    def values(shape):
        v = rng.integers(-8, 9, size=shape) * 2.0 ** -10 if exact else rng.normal(size=shape)
        if scale == "magnitudes" and not exact:
            v *= 10.0 ** rng.integers(-300, 300, size=shape)
        elif scale == "tiny" and not exact:
            v *= 1e-300
        v[rng.random(shape) < 0.3] = 0.0
        return v
    n_cols = 1 + 2 * D  # row k may use columns 1 + 2k and 2 + 2k
    col_table = np.array([[rng.choice([-1, 0, 1 + 2 * k, 2 + 2 * k]) for _ in range(kinds)] for k in range(D)],
                         dtype=np.int64).reshape(D, kinds)
    W = rng.integers(-4, 5, size=(n, G)) * 2.0 ** -6 if exact else rng.normal(size=(n, G)) / n
    W[rng.random((n, G)) < 0.3] = 0.0
    if draw(st.booleans()):  # indicator subgroups on equal masses (a sample's): each column 0 or one number
        W = np.where(rng.random((n, G)) < 0.5, W[0], -0.0 if draw(st.booleans()) else 0.0)
    if exact and draw(st.booleans()):
        W[:, 0] = 2.0 ** -6  # everyone: equal weights, one number instead of a gather
    return (np.concatenate([[0], np.cumsum(new)]).astype(np.int64), values(n), rng.integers(0, kinds, n),
            values((D, n)), col_table, W, n_cols)


def plain_rank_scan(block, residual, kind, terms, col_table, W, n_cols):
    """Algorithm 2 (App. F.3) written out, one column and subgroup at a time: prefix sums from 0
    over the blocks in rank order, a block's entries added as one total (``block_sums`` with the
    levels of the largest block, as the kernel's; one entry: itself), the first largest and the
    first smallest, the witness between them."""
    from huc_ref.fast.numbers import block_sums
    n, G = len(residual), W.shape[1]
    starts = np.flatnonzero(np.concatenate([[True], block[1:] != block[:-1]]))
    ends = np.append(starts[1:], n)
    largest = int((ends - starts).max())
    out = [np.zeros((G, n_cols)), np.zeros((G, n_cols), dtype=np.int64), np.zeros((G, n_cols), dtype=np.int64),
           np.zeros((G, n_cols))]
    for col in range(n_cols):
        for g in range(G):
            C = mx = mn = 0.0
            f_mx = f_mn = 0
            for prefix, (lo, hi) in enumerate(zip(starts, ends), start=1):
                vals = [residual[r] * W[r, g] for r in range(lo, hi) if col == 0 and residual[r] != 0]
                vals += [terms[k, r] * W[r, g] for r in range(lo, hi) for k in range(len(terms))
                         if col > 0 and col_table[k, kind[r]] == col and terms[k, r] != 0]
                if not vals:
                    continue
                C = C + (vals[0] if len(vals) == 1 else block_sums(vals + [0.0] * (largest - len(vals)), [0])[0])
                if C > mx:
                    mx, f_mx = C, prefix
                elif C < mn:
                    mn, f_mn = C, prefix
            if mx - mn > 0:
                r, b = min(f_mx, f_mn), max(f_mx, f_mn)
                for arr, value in zip(out, (mx - mn, r, b, mx - mn if f_mx > f_mn else mn - mx)):
                    arr[g, col] = value
    return out


@settings(max_examples=150)
@given(ranked_columns())
@example((np.arange(3), np.array([0.25, -0.5, 0.25]), np.zeros(3, dtype=np.int64), np.zeros((0, 3)),
          np.zeros((0, 1), dtype=np.int64), np.ones((3, 9)) / 3, 1))  # nine subgroups: a vector and one more
@example((np.zeros(40, dtype=np.int64), np.full(40, 0.1), np.zeros(40, dtype=np.int64), np.full((1, 40), 1e-300),
          np.array([[1]]), np.full((40, 8), 1 / 40), 2))  # one tie block of 40, entries near 1e-300
def test_rank_scan_is_algorithm_2_written_out(case):
    """The compiled scan (vector lanes of ``GROUP_LANES`` subgroups, an LLVM intrinsic) returns
    bit for bit what the plain loops of :func:`plain_rank_scan` return: the same IEEE operations
    in the same order, so no tolerance; whether it reads each atom's row of weights or, for
    indicator subgroups, each atom's row of a table of the distinct rows (:func:`weight_lanes`),
    and whether each depth's terms or each atom's lie side by side.  The kernel reads the atoms
    where they lie, in the rank order it is given: here a random permutation of the ranked case."""
    from huc_ref.fast.kernels import lane_keys, pad_lanes, rank_scan, weight_lanes
    from huc_ref.fast.numbers import sum_levels
    block, residual, kind, terms, col_table, W, n_cols = case
    sizes = np.bincount(block)
    ties = sizes.max() > 1
    levels = sum_levels(int(sizes.max())) if ties else np.zeros(0)
    want = plain_rank_scan(block, residual, kind, terms, col_table, W, n_cols)
    n = len(residual)
    order = np.random.default_rng(n + 7 * len(terms)).permutation(n)  # atom order[r] has rank r
    at = np.empty(n, dtype=np.intp)
    at[order] = np.arange(n)  # the rank of each atom
    residual_a, kind_a, terms_a, W_a = residual[at], kind[at], terms[:, at], W[at]
    table, w_row = weight_lanes(W_a)
    for T, ahead in ((terms_a, 64), (np.ascontiguousarray(terms_a.T).T, 1)):  # (asked for 64 ranks ahead, or 1)
        for Wl, rows in [(pad_lanes(W_a), None), (table, w_row)]:  # the rows themselves, or a table's and keys
            key, shift = lane_keys(kind_a, rows)
            got = rank_scan(block if ties else np.zeros(0, dtype=np.int64), order, residual_a, key, T, col_table,
                            Wl, shift, W.shape[1], n_cols, levels, ahead)
            for a, b in zip(got, want):
                assert np.array_equal(a, b)



@settings(max_examples=30)
@given(ranked_columns())
@example((np.zeros(40, dtype=np.int64), np.full(40, 0.1), np.zeros(40, dtype=np.int64), np.full((1, 40), 1e-300),
          np.array([[1]]), np.full((40, 8), 1 / 40), 2))  # one tie block of 40, entries near 1e-300
def test_rank_scan_run_as_python_is_algorithm_2_written_out(case):
    """``rank_scan`` (each column's state read from one copy and written to the other) gives
    :func:`plain_rank_scan`'s bits, run as Python with the vector intrinsic's plain-Python twin
    (:mod:`huc_ref.fast.lanes`), as an install without numba runs it."""
    import importlib

    kernels = importlib.import_module("huc_ref.fast.kernels")
    lanes = importlib.import_module("huc_ref.fast.lanes")
    from huc_ref.fast.numbers import sum_levels
    block, residual, kind, terms, col_table, W, n_cols = case
    sizes = np.bincount(block)
    ties = sizes.max() > 1
    want = plain_rank_scan(block, residual, kind, terms, col_table, W, n_cols)
    twins = {"_lane_update": lanes._lane_update_python, "_prefetch": lanes._prefetch_python}
    for name in ("_column_update", "_lane_at", "_block_total"):
        twins[name] = getattr(getattr(kernels, name), "py_func", getattr(kernels, name))
    scan = getattr(kernels.rank_scan, "py_func", kernels.rank_scan)
    with pytest.MonkeyPatch.context() as mp:
        for name, twin in twins.items():
            mp.setattr(kernels, name, twin)
        table, rows = kernels.weight_lanes(W)  # (a table of rows and keys where the subgroups are indicators)
        key, shift = kernels.lane_keys(kind, rows)
        levels = sum_levels(int(sizes.max())) if ties else np.zeros(0)
        got = scan(block if ties else np.zeros(0, dtype=np.int64), np.arange(len(residual)), residual, key, terms,
                   col_table, table, shift, W.shape[1], n_cols, levels)
    for a, b in zip(got, want):
        assert np.array_equal(a, b)

WEIGHT_SHAPES = {  # name: (W, coded?)
    "indicators of 1/n": (np.where(np.arange(12)[:, None] % np.array([1, 2, 3]) == 0, 1 / 12, 0.0), True),
    "negative zeros": (np.array([[0.25, -0.0], [0.0, 0.5], [0.25, 0.5]]), True),
    "a column of zeros": (np.array([[0.0, 0.5], [0.0, 0.0]]), True),
    "signed, one number": (np.array([[-0.125], [0.0], [-0.125]]), True),
    "two numbers in a column": (np.array([[0.25, 0.5], [0.25, 0.25]]), True),
    "a grid in [-1, 1] of 1/n": (np.array([[1, 0.5, 0, -0.5, -1, 0.5]]).T / 6 * [1.0, -1.0], True),
    "16 numbers in a column": (np.arange(1.0, 17.0)[:, None] * [1.0, 0.0], True),
    "17 numbers in a column": (np.arange(1.0, 18.0)[:, None], False),
    "too many patterns": (np.arange(1.0, 5001.0)[:, None] % [16, 15, 14, 13, 12], False),
    "NaN": (np.array([[np.nan], [np.nan]]), False),
    "infinity": (np.array([[np.inf], [0.0]]), False),
    "17 subgroups": (np.ones((2, 17)), False),
    "no subgroups": (np.ones((2, 0)), False),
    "more rows than the table holds": ((np.arange(5000)[:, None] >> np.arange(13) & 1) * 1.0, False),
}


@pytest.mark.parametrize("name", list(WEIGHT_SHAPES))
def test_weight_lanes_hold_every_atoms_weights(name):
    """:func:`weight_lanes` gives every atom its own weights (zeros up to whole vectors), as a
    table of the distinct rows where each subgroup is 0 or one number (indicator subgroups) and
    the rows take at most ``CODED_ROWS`` patterns, else the rows themselves.  Pins that a subgroup of
    up to ``CODED_VALUES`` numbers (values on a grid) is coded too, its rows held once, not copied."""
    from huc_ref.fast.kernels import CODED_ROWS, GROUP_LANES, weight_lanes
    W, coded = WEIGHT_SHAPES[name]
    table, w_row = weight_lanes(W)
    assert (w_row is not None) == coded
    rows = table if w_row is None else table[w_row]
    assert rows.shape == (len(W), -(-W.shape[1] // GROUP_LANES) * GROUP_LANES)
    assert np.array_equal(rows[:, :W.shape[1]], W, equal_nan=True) and not rows[:, W.shape[1]:].any()
    if coded:  # each distinct row once, numbered in order of first appearance
        assert len(table) == len(np.unique(W + 0.0, axis=0)) <= CODED_ROWS  # (+ 0.0: -0.0 is 0)
        assert np.all(np.diff(np.unique(w_row, return_index=True)[1]) > 0)


@settings(max_examples=200)
@given(ranked_columns(exact=True), st.sampled_from([1, 2, 3, 5, 2**18]), st.sampled_from([1, 2, 3]))
@example((np.array([0, 0, 1, 1, 2]), np.array([0.25, 0.5, -1.0, 0.5, 0.25]), np.array([0, 1, 0, 1, 0]),
          np.array([[0.5, -0.25, 0.25, 0.0, -0.5]]), np.array([[1, 2]]), np.full((5, 2), 2.0 ** -3), 3), 2, 2)
def test_numpy_scan_in_stretches_is_algorithm_2_written_out(case, size, threads):
    """numpy's column scan takes ``CACHE_BLOCK`` positions at a time (a column running on from one
    stretch to the next carries its prefix sum; its extremes' first positions counted from the
    column's start): on values whose every sum float64 holds exactly, every sup, witness and
    sign is bit for bit Algorithm 2 written out (:func:`plain_rank_scan`), for stretches of one
    position up to one stretch for everything, with ties, zero entries and missing columns, and
    with the subgroups scanned on one, two or three threads."""
    from huc_ref.fast import intervals
    block, residual, kind, terms, col_table, W, n_cols = case
    score = block.astype(float)  # in rank order already, tie blocks as the blocks
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(intervals, "CACHE_BLOCK", size)
        rows = intervals.Rows(score, residual, terms, col_table, kind, W, n_cols, threads=threads)
    want = plain_rank_scan(block, residual, kind, terms, col_table, W, n_cols)
    for g, got in enumerate(rows.best):
        for a, b in zip(got, want):
            assert np.array_equal(a, b[g]), (g, a, b[g])


@pytest.mark.skipif(not numba_available(), reason="the numba extra is not installed")
def test_lane_keys_are_made_once_for_every_utility(monkeypatch):
    """Under numba the sample's labels and coded weight rows become one key an atom
    (``kernels.lane_keys``) once for all utilities (``sample_tables``), not once per utility; the
    audit is numpy's (its witnesses, and its sups within float64's rounding of the prefix sums)."""
    from huc_ref import Top1AtDepth
    kernels = importlib.import_module("huc_ref.fast.kernels")
    t = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["a0", "a1", "a2"], "b": ["b0", "b1"]})
    rng = np.random.default_rng(5)
    n = 300
    P, y = rng.dirichlet(np.ones(t.K), n), rng.integers(0, t.K, n)
    groups = {"all": np.ones(n), "half": (rng.random(n) < 0.5).astype(float)}
    us = {"top1": Top1AtDepth(t, 1), "top2": Top1AtDepth(t, 2), "top2b": Top1AtDepth(t, 2)}
    made = []
    real = kernels.lane_keys
    monkeypatch.setattr(kernels, "lane_keys", lambda kind, rows: made.append(len(kind)) or real(kind, rows))
    got = fast_audit(y, P, t, us, subgroups=groups, accelerator="numba").to_json()
    assert made == [n]
    want = fast_audit(y, P, t, us, subgroups=groups).to_json()["candidates"]
    assert [c["interval"] for c in got["candidates"]] == [c["interval"] for c in want]
    assert max(abs(a["sup"] - b["sup"]) for a, b in zip(got["candidates"], want)) < 1e-12


@pytest.mark.parametrize("n_utilities", [1, 3])
def test_threads_leave_every_bit_of_the_audit(n_utilities):
    """The tables on threads (utilities in rounds, the last ones' subgroups on every thread under
    numpy) give the audit of the tables built one after another, bit for bit, for both engines."""
    from huc_ref import Table, Top1AtDepth
    passes = importlib.import_module("huc_ref.fast.audit")
    t = LabelTree.from_children("r", {"r": ["a", "b"], "a": [f"a{k}" for k in range(30)], "b": ["b0", "b1"]})
    t = t.with_labels(t.labels)  # (the arrays' columns are in its order)
    rng = np.random.default_rng(4)
    n = 600
    P = rng.dirichlet(np.full(t.K, 0.3), n)
    P[:50] = P[0]  # tied scores
    y = rng.integers(0, t.K, n)
    groups = {"all": np.ones(n), "half": (rng.random(n) < 0.5).astype(float), "signed": rng.choice([-0.5, 0.0, 1.0], n)}
    us = dict(list({"top1": Top1AtDepth(t, 1), "top2": Top1AtDepth(t, 2),
                    "tab": Table(t, [k % 2 for k in range(t.K)])}.items())[:n_utilities])
    engines = ["numpy"] + (["numba"] if numba_available() else [])
    found = {}
    for cells in (2**40, 0):  # no threads, threads
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(passes, "SERIAL_CELLS", cells)
            mp.setattr(passes, "THREADS", 2)
            found[cells] = [fast_audit(y, P, t, us, subgroups=groups, accelerator=e).to_json() for e in engines]
    assert found[0] == found[2**40]


BAD_TOP1_ROWS = {  # y_prob rows for a top-1 audit, and the message both accelerators must give
    "NaN": ([[0.2, 0.3, 0.5], [0.2, np.nan, 0.8]], r"y_prob\[1\]: entries must be finite and nonnegative"),
    "negative": ([[0.2, 0.3, 0.5], [1.2, -0.2, 0.0]], r"y_prob\[1\]: entries must be finite and nonnegative"),
    "subnormal": ([[0.2, 0.3, 0.5], [5e-324, 0.5, 0.5]], r"y_prob\[1\]: entry 0 is 5e-324, a subnormal float64"),
    "sum off": ([[0.2, 0.3, 0.5], [0.2, 0.3, 0.49]], r"y_prob\[1\]: sums to 0.99, not 1 \(within 1e-05\)"),
    "just beyond": ([[0.2, 0.3, 0.5], [0.2, 0.3, 0.5 + 1.001e-5]], r"y_prob\[1\]: sums to 1.00001001"),
    "just within": ([[0.2, 0.3, 0.5], [0.2, 0.3, 0.5 - 0.999e-5]], None),
    # two problems in one chunk: the row sum is checked before the subnormal entry (numpy's order)
    "subnormal, then sum off": ([[5e-324, 0.5, 0.5], [0.2, 0.3, 0.4]], r"y_prob\[1\]: sums to 0.9"),
    "negative, then sum off": ([[0.6, -0.1, 0.5], [0.2, 0.3, 0.4]], r"y_prob\[0\]: entries must be finite"),
}


@numba_only
@pytest.mark.parametrize("name", list(BAD_TOP1_ROWS))
def test_numba_engine_reports_bad_rows_like_numpy(name):
    """The top-1 kernel checks every entry (negative, subnormal) and the row sums' range in its own read;
    where it finds a problem, numpy's checks, in numpy's order, name the row: one message, both
    accelerators (and where the sums are certainly within the tolerance, no numpy pass at all)."""
    from huc_ref import LabelTree, Top1AtDepth
    from huc_ref.errors import HUCError
    t = LabelTree.from_paths(["a/b", "a/c", "d"])
    rows, message = BAD_TOP1_ROWS[name]
    P = np.array(rows)
    said = []
    for engine in ("numpy", "numba"):
        try:
            said.append(fast_audit([0, 1], P, t, {"u": Top1AtDepth(t, 1), "v": Top1AtDepth(t, 2)},
                                   accelerator=engine).to_json())
        except HUCError as e:
            said.append(str(e))
    assert said[0] == said[1]
    if message is None:
        assert isinstance(said[0], dict)
    else:
        assert re.match(message, said[0]), said[0]


@settings(max_examples=200)
@given(st.integers(1, 40), st.integers(1, 30), st.integers(0, 2**32 - 1), st.sampled_from([0.0, 1e-15, 1e-9]))
@example(1, 1, 0, 0.0)
@example(30, 30, 7, 1e-15)  # a node with 30 children: 30 candidates
@example(5, 300, 3, 1e-15)  # 300 candidates: more than a byte counts
def test_first_max_rows_is_first_max_read_by_candidate(n, m, seed, rel):
    """The top-1 choice read candidate by candidate (rows of subtree sums, no transposed copy), or
    from one block of rows (a cut that is one level of the level sums), is np.argmax's first largest
    and :func:`first_max`'s uncertain rows, on values with exact ties, neighbours one ulp apart, zeros
    and entries near 1e-300."""
    from huc_ref.fast import numbers
    from huc_ref.fast.numbers import first_max, first_max_rows
    rng = np.random.default_rng(seed)
    M = rng.choice([0.0, 1e-300, 0.25, 0.5, np.nextafter(0.5, 1), 0.75], size=(n, m))
    M *= rng.choice([1, 1, 1e-200], n)[:, None]
    M[:, rng.random(m) < 0.3] = rng.random((n, 1))
    want_j, want_unsure = first_max(M, rel=rel)
    for passes_from in (0, numbers._CANDIDATE_PASS_ROWS):  # a block read candidate by candidate, and whole
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(numbers, "_CANDIDATE_PASS_ROWS", passes_from)
            for rows in (list(M.T.copy()), M.T.copy()):  # candidate by candidate, and one block of rows
                j, unsure, top = first_max_rows(rows, rel)
                assert j.tolist() == want_j.tolist() == np.argmax(M, axis=1).tolist()
                assert unsure.tolist() == want_unsure.tolist() and top.tolist() == M.max(axis=1).tolist()


@pytest.mark.parametrize("m", [255, 256, 257, 513])
def test_first_max_rows_counts_past_a_byte(m):
    """``m`` equal candidates (a node with hundreds of children, all of one mass) are ``m`` near
    the largest, however many: unsure, the first one chosen (a count kept in a byte would wrap
    to 0 at 256 and call the choice certain)."""
    from huc_ref.fast import numbers
    for passes_from in (0, numbers._CANDIDATE_PASS_ROWS):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(numbers, "_CANDIDATE_PASS_ROWS", passes_from)
            for rows in (np.full((m, 3), 0.125), list(np.full((m, 3), 0.125))):
                j, unsure, top = numbers.first_max_rows(rows, 1e-15)
                assert j.tolist() == [0, 0, 0] and unsure.all() and top.tolist() == [0.125] * 3


@settings(max_examples=150)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.sampled_from(["normal", "ties", "flat"]))
@example(0, 1, "flat")
def test_both_ways_of_reading_column_extremes_agree(seed, n_cols, kind):
    """Algorithm 2's extremes per column (App. F.3: the first block end attaining each) read with
    argmax/argmin per column and with reduceat plus comparisons: the same numbers and positions,
    on prefix sums with repeated extremes (ties) and constant columns."""
    import huc_ref.fast.intervals as iv
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 60, n_cols)
    C = {"normal": rng.normal(size=counts.sum()), "ties": rng.integers(-3, 4, counts.sum()) / 4,
         "flat": np.zeros(counts.sum())}[kind]
    be_first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    saved = iv._LONG_COLUMN
    try:
        iv._LONG_COLUMN = 1  # every column long: argmax per column
        by_column = iv.Rows._extremes(C, be_first, counts)
        iv._LONG_COLUMN = 10**9  # every column short: reduceat
        by_reduceat = iv.Rows._extremes(C, be_first, counts)
    finally:
        iv._LONG_COLUMN = saved
    assert all(np.array_equal(a, b) for a, b in zip(by_column, by_reduceat))
    for c, (a, n) in enumerate(zip(be_first, counts)):  # written out: the first of the largest
        seg = C[a:a + n].tolist()
        assert (by_column[0][c], by_column[1][c]) == (max(seg), seg.index(max(seg)) + 1)
        assert (by_column[2][c], by_column[3][c]) == (min(seg), seg.index(min(seg)) + 1)


@settings(max_examples=100)
@given(st.integers(1, 40), st.integers(1, 24), st.integers(0, 2**32 - 1))
@example(3, 17, 0)  # past 16 columns: numpy's own reductions
def test_row_extremes_and_sums_are_numpys_reductions(n, m, seed):
    """The boosting update's per-row extremes and sums (E.2's max_j h_j - min_j h_j, logsumexp),
    one pass per column for short rows, against numpy's reductions along the rows."""
    from huc_ref.fast.numbers import logsumexp, row_extremes
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m)) * rng.choice([1e-300, 1.0, 1e300], size=(n, 1))
    X[:, rng.random(m) < 0.2] = X[:, :1]  # repeated extremes
    hi, lo = row_extremes(X)
    assert hi.tolist() == X.max(axis=1).tolist() and lo.tolist() == X.min(axis=1).tolist()
    Y = np.log(rng.random((n, m)) + 1e-12)
    want = Y.max(axis=1) + np.log(np.exp(Y - Y.max(axis=1, keepdims=True)).sum(axis=1))
    assert np.allclose(logsumexp(Y).ravel(), want, rtol=1e-14, atol=0)


@settings(max_examples=60)
@given(st.integers(1, 5000), st.integers(0, 2**32 - 1), st.sampled_from(["random", "ties", "near", "one"]))
@example(1, 0, "random")
@example(4096, 1, "one")  # every digit shared: every pass skipped
def test_the_compiled_radix_sort_is_numpys_sort_of_the_packed_keys(n, seed, kind):
    """Algorithm 2's sort on the compiled accelerator (App. F.3): the packed keys sorted by their
    leading bits keep the indices below them in increasing order, so the order is ``np.sort``'s;
    on scores with ties, near neighbours sharing their leading bits, and one value for all."""
    from huc_ref.fast.intervals import argsort_keys, score_keys
    from huc_ref.fast.kernels import radix_sort_high
    rng = np.random.default_rng(seed)
    score = {"random": rng.random(n) ** 3, "ties": rng.integers(0, 7, n) / 7,
             "near": 1 - rng.integers(0, 50, n) * 2.0**-52, "one": np.full(n, 0.25)}[kind]
    key = score_keys(score)
    b = max(1, (n - 1).bit_length())
    packed = (key & ~np.uint64((1 << b) - 1)) | np.arange(n, dtype=np.uint64)
    assert radix_sort_high(packed.copy(), b).tolist() == np.sort(packed).tolist()
    for values in (None, score):
        ours, theirs = argsort_keys(key.copy(), values, "numba"), argsort_keys(key.copy(), values, "numpy")
        assert all(np.array_equal(a, b) for a, b in zip(ours, theirs)) if values is not None else \
            np.array_equal(ours, theirs)


@pytest.mark.skipif(not numba_available(), reason="the numba extra is not installed")
def test_the_packed_keys_sort_is_measured_once_per_size_and_checked(monkeypatch):
    """``sort_packed`` under numba: below ``MEASURED_SORT`` keys the radix sort; from there the
    first sort of each size class is made both ways, the choice kept for the class (either
    choice gives ``np.sort``'s array), and a radix sort that disagrees with numpy's is an
    internal error, not a silently wrong order."""
    from huc_ref.errors import HUCError
    from huc_ref.fast import kernels
    intervals = importlib.import_module("huc_ref.fast.intervals")
    monkeypatch.setattr(intervals, "_radix_faster", {})
    rng = np.random.default_rng(2)
    n = intervals.MEASURED_SORT + 5
    b = max(1, (n - 1).bit_length())
    packed = (rng.integers(0, 2**40, n).astype(np.uint64) << np.uint64(b)) | np.arange(n, dtype=np.uint64)
    want = np.sort(packed)
    calls, radix = [], kernels.radix_sort_high
    monkeypatch.setattr(kernels, "radix_sort_high", lambda *a: calls.append(len(a[0])) or radix(*a))
    small = packed[:100].copy()
    intervals.sort_packed(small, b, "numba")
    assert calls == [100] and np.array_equal(small, np.sort(packed[:100])) and intervals._radix_faster == {}
    x = packed.copy()
    intervals.sort_packed(x, b, "numba")
    assert np.array_equal(x, want) and list(intervals._radix_faster) == [n.bit_length()] and calls == [100, n]
    for faster in (True, False):
        intervals._radix_faster[n.bit_length()] = faster
        x = packed.copy()
        intervals.sort_packed(x, b, "numba")
        assert np.array_equal(x, want) and calls[-1] == (n if faster else 100)
        calls.append(100)
    monkeypatch.setattr(intervals, "_radix_faster", {})
    monkeypatch.setattr(kernels, "radix_sort_high", lambda a, bits: None)  # a planted bug: sorts nothing
    with pytest.raises(HUCError, match="sort_packed: the radix sort and numpy's sort disagree"):
        intervals.sort_packed(packed.copy(), b, "numba")


@pytest.mark.parametrize("ties", [False, True])
def test_every_subgroup_at_once_is_each_subgroup_alone_bit_for_bit(ties, monkeypatch):
    """numpy's scan of one stretch takes every subgroup at once (``Rows._every_subgroup``) below
    ``_ALL_SUBGROUPS`` numbers: the audit document is, bit for bit, the one of the subgroups one
    at a time (a 30-child node, entries near 1e-300, indicator, signed and everyone subgroups,
    sample weights; scores with and without ties)."""
    import huc_ref.fast.intervals as fi
    from huc_ref import Table, Top1AtDepth, class_indicator
    n = 600
    t, P, rng = thirty_children(4, n, ties)
    y = rng.integers(0, t.K, n)
    groups = {"all": np.ones(n), "half": rng.integers(0, 2, n).astype(float), "signed": rng.choice([-0.5, 0, 1], n)}
    us = {"top": Top1AtDepth(t, 1), "tab": Table(t, [Fraction(k % 5 - 2, 2) for k in range(t.K)]),
          "a0": class_indicator(t, "a0")}
    w = rng.random(n)
    calls = []
    every = fi.Rows._every_subgroup
    monkeypatch.setattr(fi.Rows, "_every_subgroup", lambda self, *a: calls.append(1) or every(self, *a))
    at_once = fast_audit(y, P, t, us, subgroups=groups, sample_weight=w).to_json()
    assert calls  # (the route was taken)
    monkeypatch.setattr(fi, "_ALL_SUBGROUPS", 0)
    assert fast_audit(y, P, t, us, subgroups=groups, sample_weight=w).to_json() == at_once


@pytest.mark.parametrize("accelerator", ["numpy"] + (["numba"] if numba_available() else []))
@pytest.mark.parametrize("shape, seed", [("two sides", 0), ("30 children, last", 0), ("30 children, last", 2)])
def test_a_column_whose_first_entries_weigh_nothing_keeps_the_tie_rule(accelerator, shape, seed):
    """numpy scans every column of a utility in one ``cumsum``, each column's first entry less the
    total of the columns before it (``Rows._restart``); the cumsum's running total and ``reduceat``'s
    differ by their roundings, so a column's prefix sums all carried 5e-18 where its empty prefix
    ``C_0 = 0`` was meant.  Where a column's first entries weigh 0 in a subgroup (atoms outside a
    mask), its prefix sums there are exactly that 5e-18, which beat ``C_0 = 0`` as the first
    maximum, and the witness started one block late: in the first case (subgroup m, node B) at
    0.4706 where the exact engine's, by App. F.3's tie rule (the smallest ``r`` of equal prefix
    sums), starts at 0.4375 (found comparing numpy with numba on random softmax rows).
    Every row's witness must be the exact engine's, on rationals read from the floats (its ties
    settled exactly); each case here fails a scan whose prefix sums carry that rounding (on the
    tree with 30 children last at their depth, 5 of its first 7 seeds do)."""
    from huc_ref import Top1AtDepth, TopK
    if shape == "two sides":
        tree = LabelTree.from_nested({"r": {"A": ["a1", "a2"], "B": ["b1", "b2", "b3"]}})
        tree = tree.with_labels(tree.labels)  # (the arrays' columns are in its order)
        us = {"u": TopK(tree, 2)}
    else:
        tree = LabelTree.from_children("r", {"r": ["b", "a"], "b": ["b0", "b1"], "a": [f"a{k}" for k in range(30)]})
        tree = tree.with_labels(tree.labels)  # (the arrays' columns are in its order)
        us = {"u": TopK(tree, 2), "t": Top1AtDepth(tree, 1)}
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 40))
    P = rng.integers(1, 6, size=(n, tree.K)).astype(float)
    P /= P.sum(1, keepdims=True)
    y = rng.integers(0, tree.K, n)
    d = FiniteDistribution.from_floats(tree, y, P, subgroups={"all": np.ones(n), "m": rng.random(n) < 0.5})
    fast, reference = audit(d, us, arithmetic="float64", accelerator=accelerator), audit(d, us)
    for f, e in zip(fast.candidates, reference.candidates):
        assert (f.interval is None) == (e.interval is None), (f, e)
        if e.interval is not None:
            assert all(abs(x - float(z)) < 1e-12 for x, z in zip(f.interval, e.interval)), (f, e)
    if shape == "two sides":
        row = next(c for c in fast.candidates if (c.subgroup, c.node) == ("m", "B"))
        assert row.interval[0] == 0.4375


@pytest.mark.parametrize("accelerator", ["numpy"] + (["numba"] if numba_available() else []))
def test_a_per_atom_utility_is_read_chunk_by_chunk_at_its_own_rows(monkeypatch, accelerator):
    """The sample pass reads a sample above SERIAL_CELLS numbers in chunks; a per-atom utility's
    table must be read at each chunk's own atoms (it was given whole to every chunk: a numpy
    broadcasting ValueError).  With the threshold lowered so that 300 rows run in chunks of 50,
    the audit is the exact engine's on the same floats (A.1's ``u(p_i, .)`` given per atom)."""
    from huc_ref import FiniteDistribution, LabelTree, PerAtom, audit
    passes = importlib.import_module("huc_ref.fast.audit")  # (the module: huc_ref.fast.audit is also a function)
    t = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["a0", "a1"], "b": ["b0", "b1", "b2"]})
    rng = np.random.default_rng(3)
    n = 300
    P, y = rng.dirichlet(np.ones(t.K), n), rng.integers(0, t.K, n)
    values = [[Fraction(int(v), 2) for v in row] for row in rng.integers(-2, 3, (n, t.K))]
    monkeypatch.setattr(passes, "SERIAL_CELLS", 10)
    monkeypatch.setattr(passes, "CHUNK", 50 * t.K)
    assert passes.chunk_rows(n, t.K) < n  # (the chunked route is taken)
    got = fast_audit(y, P, t, {"u": PerAtom(t, values)}, accelerator=accelerator)
    want = audit(FiniteDistribution.from_floats(t, y.tolist(), P), {"u": PerAtom(t, values)})
    assert got.uc.sup == pytest.approx(float(want.uc.sup), abs=1e-12)
    assert got.huc.sup == pytest.approx(float(want.huc.sup), abs=1e-12)


def test_numpy_scan_holds_each_entry_once():
    """numpy's scan of Algorithm 2 (``Rows._numpy``, App. F.3) holds its entries (a column, a rank
    and a value each, about ``3 n`` for a two-level tree's table utility) once, counted before they
    are made, not also as the pieces they were copied from, and drops its rows in rank order before
    it scans: pins the traced peak of one utility's rows (the sort and the scan) at most 160 bytes a
    row, where the entries held twice took about 183."""
    import tracemalloc

    from huc_ref import Table
    from huc_ref.fast import FastTree
    from huc_ref.fast.audit import sample_tables, sample_terms
    tree = LabelTree.from_children("r", {"r": [f"g{a}" for a in range(10)]}
                                   | {f"g{a}": [f"y{a}_{b}" for b in range(10)] for a in range(10)})
    n, rng = 40_000, np.random.default_rng(7)
    P = np.exp(rng.normal(0.0, 1.5, (n, 100)))
    P /= P.sum(axis=1, keepdims=True)
    y = rng.integers(0, 100, n)
    us = {"table": Table(tree, [f"{(7 * k) % 9 - 4}/4" for k in range(100)])}
    ft = FastTree(tree)
    terms = sample_terms(ft, P, y, us)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        sample_tables(ft, terms, y, np.full((n, 1), 1.0 / n), us)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak / n <= 160
