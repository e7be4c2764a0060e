"""p-values under the null of calibration (huc_ref.significance): exact enumeration against an
independent brute force, resampling against exact enumeration, both engines' draws, the
test's own calibration (uniform p-values under the null), the flagged node under a planted
miscalibration, and every refusal's message."""

from __future__ import annotations

import itertools
import json
import math
import time
from dataclasses import replace
from fractions import Fraction
from math import prod

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from huc_ref import FiniteDistribution, HUCError, LabelTree, Table, Top1AtDepth, TopK, audit
from huc_ref.fast import numba_available
from huc_ref.fast.audit import distribution_arrays
from huc_ref.fast.significance import NullAudit, draw_labels
from huc_ref.fast.tree import FastTree
from huc_ref.formats import result_schema
from huc_ref.significance import MAX_NULL_WORK, draw_label, null_work, uniforms
from tests.oracle import brute_force_audit
from tests.strategies import finite_distributions, label_trees, shape_tree, softmax_rows, utilities, wide_trees

F = Fraction


def brute_force_p_values(dist, us):
    """``P(T* >= T)`` for every row, UC and HUC, by enumerating the label assignments and
    auditing each with the brute-force oracle (every interval, literal inner products)."""
    def stats(d):
        rows = brute_force_audit(d, us)
        sups = [r[3] for r in rows]
        uc = max(r[3] for r in rows if r[2] is None)
        huc = max((r[3] for r in rows if r[2] is not None), default=F(0))
        return sups + [uc, huc]
    observed = stats(dist)
    tail = [F(0)] * len(observed)
    for labels in itertools.product(range(dist.tree.K), repeat=dist.n):
        d = FiniteDistribution(dist.tree, [replace(a, label=y) for a, y in zip(dist.atoms, labels)], dist.subgroups)
        weight = prod((a.p[y] for a, y in zip(dist.atoms, labels)), start=F(1))
        for j, (t, s) in enumerate(zip(stats(d), observed)):
            if t >= s:
                tail[j] += weight
    return tail


@st.composite
def small_samples(draw):
    t = draw(label_trees(max_leaves=3, min_leaves=2))
    d = draw(finite_distributions(t, max_atoms=3, kind="sample"))
    return d, {"u": draw(utilities(t, families=["table", "rank", "top1_at_depth", "binary_decision"]))}


CHERRY = LabelTree.from_children("v0", {"v0": ["vL", "y3"], "vL": ["y1", "y2"]})


@settings(max_examples=25)
@given(small_samples())
@example((FiniteDistribution(CHERRY, [{"p": ["1/2", "1/4", "1/4"], "label": "y3"},
                                      {"p": ["1/6", "1/6", "2/3"], "label": "y1"}]),
          {"u": Top1AtDepth(CHERRY, 1)}))
def test_exact_enumeration_equals_an_independent_brute_force(case):
    d, us = case
    r = audit(d, us, null_draws="exact")
    s = r.significance
    assert s.method == "exact" and s.draws == d.tree.K ** d.n
    assert list(s.rows) + [s.uc, s.huc] == brute_force_p_values(d, us)
    assert all(isinstance(p, Fraction) and 0 < p <= 1 for p in s.rows)


def test_the_fast_engine_enumerates_the_same_exact_p_values():
    d = FiniteDistribution(CHERRY, [{"p": ["1/2", "1/4", "1/4"], "label": "y3"},
                                    {"p": ["1/6", "1/6", "2/3"], "label": "y1"},
                                    {"p": ["1/3", "1/3", "1/3"], "label": "y2"}])
    us = {"u": Table(CHERRY, [1, 0, 1]), "top1": Top1AtDepth(CHERRY, 1)}
    exact, fast = (audit(d, us, arithmetic=a, null_draws="exact").significance for a in ("exact", "float64"))
    assert exact.rows == fast.rows and (exact.uc, exact.huc) == (fast.uc, fast.huc)


def test_resampling_falls_within_its_monte_carlo_error_of_the_exact_p_value():
    """B = 4000 seeded draws on the fast engine: every resampling p-value within 4 standard
    errors (plus the 1/(B+1) of its +1) of the exact P(T* >= T)."""
    d = FiniteDistribution(CHERRY, [{"p": p, "label": y, "c": c} for p, y, c in [
        (["1/2", "1/4", "1/4"], "y3", [1, 1]), (["1/6", "1/6", "2/3"], "y1", [1, 0]),
        (["1/3", "1/3", "1/3"], "y2", [1, 1]), (["1/10", "3/5", "3/10"], "y2", [1, "-1/2"])]], ["all", "g"])
    us = {"u": Table(CHERRY, [1, 0, 1]), "top1": Top1AtDepth(CHERRY, 1)}
    exact = audit(d, us, null_draws="exact").significance
    B = 4000
    sampled = audit(d, us, arithmetic="float64", null_draws=B, seed=11).significance
    assert sampled.method == "resampling" and (sampled.draws, sampled.seed) == (B, 11)
    for p, q in zip(list(sampled.rows) + [sampled.uc, sampled.huc], list(exact.rows) + [exact.uc, exact.huc]):
        se = math.sqrt(float(q) * (1 - float(q)) / B)
        assert abs(float(p) - float(q)) <= 4 * se + 1 / (B + 1), (p, q)
    # the exact engine's resampling draws the same labels from the same seed
    small = audit(d, us, null_draws=60, seed=5).significance
    assert small.rows == audit(d, us, arithmetic="float64", null_draws=60, seed=5).significance.rows


def test_resampling_is_reproducible_and_the_seed_matters():
    d = FiniteDistribution(CHERRY, [{"p": ["1/2", "1/4", "1/4"], "label": "y3"},
                                    {"p": ["1/6", "1/6", "2/3"], "label": "y1"}] * 3)
    us = {"u": Table(CHERRY, [1, 0, 1])}
    a, b = (audit(d, us, arithmetic="float64", null_draws=99, seed=3).significance for _ in range(2))
    assert a == b
    others = {audit(d, us, arithmetic="float64", null_draws=99, seed=s).significance.rows for s in range(6)}
    assert len(others) > 1


@settings(max_examples=60)
@given(st.integers(2, 30), st.integers(0, 2**32 - 1))
@example(3, 0)
def test_both_engines_draw_the_same_label_from_the_same_uniform(K, seed):
    """The exact inverse CDF (Fractions) and the float64 one agree on random rational rows,
    and neither draws a label of probability 0 (A.2 excludes them from atoms; the draw does too)."""
    rng = np.random.default_rng(seed)
    weights = rng.integers(0, 4, size=K)
    weights[rng.integers(K)] += 1
    p = [F(int(w), int(weights.sum())) for w in weights]
    cdf = np.cumsum(np.array([float(x) for x in p]))[None, :]
    cdf /= cdf[:, -1:]
    ks = uniforms(rng, 200)
    fast = [int(draw_labels(cdf, np.array([k]))[0]) for k in ks]
    exact = [draw_label(p, int(k)) for k in ks]
    assert all(p[y] > 0 for y in exact) and all(p[y] > 0 for y in fast)
    disagree = [i for i, (a, b) in enumerate(zip(fast, exact)) if a != b]
    for i in disagree:  # only where the uniform sits within rounding of a cumulative sum
        k = int(ks[i])
        assert min(abs(sum(p[:j + 1]) - F(k, 2**53)) for j in range(K)) < F(1, 2**48)


def calibrated_dataset(seed: int, n: int = 30):
    """Predictions from a seeded Dirichlet, labels drawn from them: calibrated by construction."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(3), size=n)
    y = np.array([rng.choice(3, p=row) for row in P])
    return P, y


def test_p_values_are_uniform_under_the_null():
    """The test of the test: over 200 seeded calibrated datasets (labels drawn from the
    predictions), the fraction of HUC p-values at most 0.05 is within 3 binomial standard
    errors of 0.05 (B = 19, so P(p <= 0.05) = P(no redraw reaches T) = 1/20 exactly under exchangeable
    continuous statistics)."""
    from huc_ref.fast import audit as fast_audit
    us = {"u": Table(CHERRY, [1, 0, 1]), "top1": Top1AtDepth(CHERRY, 1)}
    ps = {"uc": [], "huc": []}
    for seed in range(200):
        P, y = calibrated_dataset(seed)
        s = fast_audit(y, P, CHERRY, us, null_draws=19, seed=10_000 + seed).significance  # not the data's stream
        ps["uc"].append(float(s.uc))
        ps["huc"].append(float(s.huc))
    se = math.sqrt(0.05 * 0.95 / 200)
    for name, values in ps.items():
        rate = np.mean(np.array(values) <= 0.05)
        assert abs(rate - 0.05) <= 3 * se, (name, rate)
        assert 0.35 < np.mean(values) < 0.65  # the mean of a uniform p-value is about 1/2


def test_a_miscalibrated_node_gets_a_small_p_value_and_is_the_one_flagged():
    """Labels drawn from predictions, except that inside vL the two children swap their
    probabilities: the split at vL is miscalibrated while vL's mass (the root's split) is not."""
    from huc_ref.fast import audit as fast_audit
    rng = np.random.default_rng(7)
    n = 400
    P = rng.dirichlet(np.ones(3), size=n)
    swapped = P[:, [1, 0, 2]]
    y = np.array([rng.choice(3, p=row) for row in swapped])
    us = {"u": Table(CHERRY, [1, 0, 0])}
    r = fast_audit(y, P, CHERRY, us, null_draws=199, seed=1)
    assert r.huc.node == "vL"
    assert r.significance.huc == Fraction(1, 200)  # no redraw reaches the observed HUC
    assert r.p_value("all", "u", "vL") == Fraction(1, 200) and r.p_value("all", "u", "v0") > Fraction(1, 20)


def test_p_values_in_the_result_document_and_its_schema():
    jsonschema = pytest.importorskip("jsonschema")
    d = FiniteDistribution(CHERRY, [{"p": ["1/2", "1/4", "1/4"], "label": "y3"},
                                    {"p": ["1/6", "1/6", "2/3"], "label": "y1"}])
    us = {"u": Table(CHERRY, [1, 0, 1])}
    for arithmetic in ("exact", "float64"):
        doc = json.loads(json.dumps(audit(d, us, arithmetic=arithmetic, null_draws=19, seed=2).to_json("c")))
        jsonschema.validate(doc, result_schema(arithmetic))
        assert doc["significance"]["method"] == "resampling" and doc["significance"]["draws"] == 19
        assert all(F(row["p_value"]).denominator in (1, 2, 4, 5, 10, 20) for row in doc["candidates"])
        assert doc["huc"]["p_value"] == doc["significance"]["huc"]
        assert doc["significance"]["theorem_3_4"]["delta"] == "1/20"
    plain = audit(d, us).to_json("c")
    assert "significance" not in plain and "p_value" not in plain["uc"]


@pytest.mark.parametrize("kw, message", [
    (dict(null_draws=0), "null_draws: expected a positive integer (at most 1000000) or 'exact', got 0"),
    (dict(null_draws=True), "null_draws: expected a positive integer (at most 1000000) or 'exact', got True"),
    (dict(null_draws=2.5), "null_draws: expected a positive integer (at most 1000000) or 'exact', got 2.5"),
    (dict(null_draws="all"), "null_draws: expected a positive integer (at most 1000000) or 'exact', got 'all'"),
    (dict(null_draws=9, seed=-1), "seed: expected a non-negative integer, got -1"),
    (dict(null_draws=9, seed="1"), "seed: expected a non-negative integer, got '1'"),
])
def test_bad_null_options_get_one_clear_error(kw, message):
    d = FiniteDistribution(CHERRY, [{"p": ["1/2", "1/4", "1/4"], "label": "y3"}])
    with pytest.raises(HUCError) as e:
        audit(d, {"u": Table(CHERRY, [1, 0, 1])}, **kw)
    assert str(e.value) == message


def test_population_atoms_and_huge_enumerations_are_refused():
    pop = FiniteDistribution(CHERRY, [{"p": ["1/2", "1/4", "1/4"], "eta": ["1/2", "1/4", "1/4"]}])
    with pytest.raises(HUCError) as e:
        audit(pop, {"u": Table(CHERRY, [1, 0, 1])}, null_draws=9)
    assert str(e.value) == ("atoms[0]: a population atom (a label law eta); significance redraws one label "
                            "per atom from its prediction, so it needs a labelled sample")
    big = FiniteDistribution(CHERRY, [{"p": ["1/3"] * 3, "label": "y1"}] * 13)  # 3**13 exact audits
    with pytest.raises(HUCError) as e:
        audit(big, {"u": Table(CHERRY, [1, 0, 1])}, null_draws="exact")
    work = 3**13 * (13 + 64) * (3 + 3)  # (V_T(u) = {v0, vL}: a UC row and two node rows)
    assert str(e.value) == (f"null_draws='exact': enumerates 3**13 = 1594323 label assignments, each an audit: about "
                            f"{work:.2g} units of work (draws x (n + 64) (K |U| + rows), n = 13, K = 3, |U| = 1, "
                            f"rows = 3), more than the exact engine's budget of 5000000; give max_null_work={work} "
                            "to run it anyway, or null_draws=B (B resampled draws)")
    wide = FiniteDistribution(CHERRY, [{"p": ["1/3"] * 3, "label": "y1"}] * 200)
    with pytest.raises(HUCError, match=r"enumerates 3\*\*200 label assignments, each an audit: 3\*\*200 x "):
        audit(wide, {"u": Table(CHERRY, [1, 0, 1])}, null_draws="exact")


def _classes(K: int) -> LabelTree:
    return LabelTree.from_children("r", {"r": [f"c{k:04d}" for k in range(K)]}, labels=[f"c{k:04d}" for k in
                                                                                        range(K)])


@pytest.mark.parametrize("arithmetic, engine", [("exact", "exact"), ("float64", "fast")])
def test_the_cost_of_the_null_is_bounded_by_work_and_max_null_work_lifts_it(arithmetic, engine):
    """The null's cost is estimated as work, not counted (``null_work``): ``null_draws='exact'``
    on two rows of 1,000 classes is a million assignments, within the old cap of 10**6
    assignments, yet hours of audits (about 4 CPU-hours measured on the exact engine); it is
    refused before any audit, in well under a second, naming max_null_work with the value that
    runs it.  Resampling is bounded the same way (draws x one audit), and max_null_work lifts
    the budget: a budget one unit short refuses the run it names, that value runs it (checked
    first: without the work budget the million assignments would start)."""
    small = FiniteDistribution(CHERRY, [{"p": ["1/2", "1/4", "1/4"], "label": "y3"},
                                        {"p": ["1/6", "1/6", "2/3"], "label": "y1"}])
    cherry = {"u": Table(CHERRY, [1, 0, 1])}
    needed = 40 * (2 + {"exact": 64, "fast": 8192}[engine]) * (3 * 1 + 3)  # (V_T(u) = {v0, vL}: 3 rows)
    with pytest.raises(HUCError) as e:
        audit(small, cherry, arithmetic=arithmetic, null_draws=40, max_null_work=needed - 1)
    assert str(e.value).startswith(f"null_draws=40: 40 draws, each an audit: about {needed:.2g} units of work")
    assert f"give max_null_work={needed} to run it anyway, or fewer draws" in str(e.value)
    lifted = audit(small, cherry, arithmetic=arithmetic, null_draws=40, max_null_work=needed)
    assert lifted.significance.draws == 40
    with pytest.raises(HUCError, match=r"^max_null_work: expected a positive integer, got 0$"):
        audit(small, cherry, arithmetic=arithmetic, null_draws=40, max_null_work=0)
    t = _classes(1000)
    rows = [[0.5 / 999] * 999 + [0.5], [1 / 1000] * 1000]
    d = FiniteDistribution.from_floats(t, [0, 999], np.array(rows))
    us = {"u": Table(t, [k % 2 for k in range(1000)])}
    started = time.monotonic()
    with pytest.raises(HUCError) as e:
        audit(d, us, arithmetic=arithmetic, null_draws="exact")
    assert time.monotonic() - started < 1.0
    work = null_work(1000**2, 2, 1000, 1, 2, engine)  # (a flat tree: V_T(u) = {r})
    assert work > MAX_NULL_WORK[engine] and f"give max_null_work={work} to run it anyway" in str(e.value)
    assert e.value.kind == "too_large"


@st.composite
def null_cases(draw):
    t = draw(label_trees(max_leaves=9))
    d = draw(finite_distributions(t, max_atoms=6, kind="sample"))
    us = {f"u{j}": draw(utilities(t, n_atoms=d.n)) for j in range(draw(st.integers(1, 2)))}
    return d, us, draw(st.lists(st.integers(0, t.K - 1), min_size=d.n, max_size=d.n))


FLAT10 = shape_tree("flat", 10, 0, 1)
WIDE30 = shape_tree("wide_inner", 0, 30, 2)
WIDE30_LAST = shape_tree("wide_last", 0, 30, 3)  # a node of 30 children, last at its depth
CLASSES100 = shape_tree("two_level", 10, 10, 1)  # 100 classes


def null_sups_both(null_kw, y):
    """A draw's sups by the numpy scan and, when numba is installed, by the compiled kernel."""
    numpy = NullAudit(**null_kw).sups(y)
    if numba_available():
        compiled = NullAudit(**null_kw, accelerator="numba").sups_compiled(y[None, :])[0]
        assert np.allclose(compiled, numpy, rtol=1e-12, atol=1e-12)
    return numpy


@settings(max_examples=60)
@given(null_cases())
@example((FiniteDistribution(FLAT10, [{"p": ["1/10"] * 10, "label": FLAT10.labels[j % 10]} for j in range(6)]),
          {"top": TopK(FLAT10, 3)}, [0, 9, 3, 3, 5, 0]))
def test_a_null_draw_audits_what_the_exact_engine_audits_on_those_labels(case):
    """The label-free precomputation (NullAudit) reused for new labels gives every row's sup
    of the exact audit of the relabelled sample, on both scans."""
    d, us, labels = case
    P, exact, W = distribution_arrays(d)
    got = null_sups_both(dict(ft=FastTree(d.tree), P=P, W=W, utilities=us, rows=np.arange(d.n), exact=exact),
                         np.array(labels))
    relabelled = FiniteDistribution(d.tree, [replace(a, label=y) for a, y in zip(d.atoms, labels)], d.subgroups)
    want = [float(c.sup) for c in audit(relabelled, us).candidates]
    assert np.allclose(got, want, rtol=1e-9, atol=1e-12), (got, want)


@settings(max_examples=25)
@given(wide_trees(), st.integers(0, 2**16), st.sampled_from([0, -300]))
@example(FLAT10, 0, 0)
@example(WIDE30, 1, -300)
@example(WIDE30_LAST, 2, -300)
@example(CLASSES100, 3, -300)
def test_a_null_draw_equals_the_array_audit_of_the_same_labels_on_the_shapes_users_have(tree, seed, floor):
    """Softmax rows with ties and entries near 1e-300 on flat, wide and deep trees: the null
    draw's sups equal those of fast.audit on the drawn labels (the audit's own code path)."""
    from huc_ref import fast
    n = 40
    P = softmax_rows(seed, tree.K, n, 3.0, floor)
    rng = np.random.default_rng(seed)
    us = {"top1": Top1AtDepth(tree, 1), "table": Table(tree, [F(int(v), 4) for v in rng.integers(-4, 5, tree.K)])}
    groups = {"all": np.ones(n), "half": (rng.random(n) < 0.5).astype(float)}
    W = np.stack([groups["all"] / n, groups["half"] / n], axis=1)
    y = rng.integers(0, tree.K, n)
    got = null_sups_both(dict(ft=FastTree(tree), P=P, W=W, utilities=us), y)
    want = [c.sup for c in fast.audit(y, P, tree, us, subgroups=groups).candidates]
    assert np.allclose(got, want, rtol=1e-9, atol=1e-15), (got, want)


def test_binary_uc_p_values_against_mcgrads_ecce_pvalue():
    """The public peer's test of the same statistic: binary UC with c = 1 is MCGrad's ECCE, and
    its ``ecce_pvalue`` is the asymptotic Kuiper tail of ``ecce_sigma`` (ECCE over its standard
    deviation under the null).  On tie-free data of n = 2000 the two p-values agree within 0.05
    (ours: resampling, B = 999, finite-sample); both are tiny under a miscalibration.  Runs
    where ``mcgrad`` is installed (pip install mcgrad: heavy dependencies, so not a test extra)."""
    mcgrad = pytest.importorskip("mcgrad.metrics")
    from huc_ref import class_indicator, fast
    t = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    u = {"pos": class_indicator(t, "pos")}
    for seed, shift in ((0, 0.0), (1, 0.0), (2, 0.0), (3, 0.08)):
        rng = np.random.default_rng(seed)
        p = rng.uniform(0.05, 0.95, 2000)
        y = (rng.random(2000) < np.clip(p + shift, 0, 1)).astype(int)
        r = fast.audit(y, np.stack([1 - p, p], axis=1), t, u, null_draws=999, seed=100 + seed)  # not the data's stream
        assert abs(r.uc.sup - mcgrad.ecce(y, p)) < 1e-12
        ours, theirs = float(r.significance.uc), mcgrad.ecce_pvalue(y, p)
        if shift:
            assert ours == 1 / 1000 and theirs < 0.001
        else:
            assert abs(ours - theirs) <= 0.05, (seed, ours, theirs)


@pytest.mark.skipif(not numba_available(), reason="the compiled kernels need the numba extra")
@settings(max_examples=20)
@given(wide_trees(), st.integers(0, 2**16))
@example(WIDE30, 3)
def test_the_compiled_draws_are_numpys_draws(tree, seed):
    """The compiled inverse-CDF draw (binary search) gives numpy's labels for the same uniforms,
    and the two accelerators give the same p-values."""
    from huc_ref import fast
    from huc_ref.fast.kernels import draw_labels as draw_compiled
    n = 60
    P = softmax_rows(seed, tree.K, n, 2.0, -300 if seed % 2 else 0)
    cdf = np.cumsum(P, axis=1)
    cdf /= cdf[:, -1:]
    k = np.stack([uniforms(np.random.default_rng(seed), n) for _ in range(5)])
    compiled = np.empty((n, 5), dtype=np.int16)
    draw_compiled(cdf, np.ascontiguousarray(k.T), compiled)
    assert np.array_equal(compiled.T, np.stack([draw_labels(cdf, row) for row in k]))
    y = np.random.default_rng(seed + 1).integers(0, tree.K, n)
    us = {"top1": Top1AtDepth(tree, 1)}
    a, b = (fast.audit(y, P, tree, us, null_draws=40, seed=seed, accelerator=acc).significance
            for acc in ("numpy", "numba"))
    assert a == b


def test_the_null_tables_are_bounded_with_one_clear_error():
    """A 1,000-class flat tree and a million rows: the label-free tables would take about 22 GiB;
    refused before anything is allocated."""
    from huc_ref.fast.significance import check_memory
    tree = shape_tree("flat", 1000, 0, 0)
    with pytest.raises(HUCError) as e:
        check_memory(FastTree(tree), 10**6, {"top1": Top1AtDepth(tree, 1)}, "numpy")
    assert str(e.value) == ("null_draws: the label-free tables of 1000000 atoms would take 22.4 GiB (more than "
                            "4 GiB: n x (K + needed nodes) per utility); audit a subsample or fewer utilities")


def test_the_pinned_shapes_are_the_ones_users_have():
    assert (FLAT10.K, CLASSES100.K) == (10, 100)
    widest = max(WIDE30_LAST.internal_nodes, key=WIDE30_LAST.d)
    depth = WIDE30_LAST.depth(widest)
    assert WIDE30_LAST.d(widest) == 30 and [v for v in WIDE30_LAST.nodes if WIDE30_LAST.depth(v) == depth][-1] == widest


def test_an_exact_p_value_with_over_ten_thousand_digits():
    """Predictions with 10,000-digit denominators: the exact tail probabilities are rationals of
    over 10,000 digits, equal to the independent brute force, and the result document writes them."""
    t = LabelTree.from_children("r", {"r": ["a", "b"]})
    d1, d2 = 3**20_960, 7**11_840  # about 10,000 digits each
    d = FiniteDistribution(t, [{"p": [F(1, d1), 1 - F(1, d1)], "label": "a"},
                               {"p": [1 - F(2, d2), F(2, d2)], "label": "b"}])
    us = {"u": Table(t, [0, 1])}
    s = audit(d, us, null_draws="exact").significance
    assert list(s.rows) + [s.uc, s.huc] == brute_force_p_values(d, us)
    assert max(p.denominator.bit_length() for p in s.rows) * math.log10(2) > 10_000  # decimal digits
    doc = audit(d, us, null_draws="exact").to_json()
    from huc_ref.rational import fraction_text
    assert doc["significance"]["huc"] == fraction_text(s.huc) and len(doc["significance"]["huc"]) > 10_000


def test_the_remaining_null_refusals_name_the_place():
    from huc_ref import fast
    t = LabelTree.from_children("r", {"r": ["a", "b"]})
    with pytest.raises(HUCError) as e:
        fast.audit([0, 1], [[0.5, 0.5], [0.5, 0.5]], t, {"u": Table(t, [0, 1])}, null_draws="exact")
    assert str(e.value) == ("null_draws: 'exact' enumerates label assignments of a FiniteDistribution "
                            "(huc_ref.audit); for arrays give a number of draws")
    r = audit(FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "a"}]), {"u": Table(t, [0, 1])})
    with pytest.raises(HUCError) as e:
        r.p_value("all", "u", "r")
    assert str(e.value) == "p_value: this audit has no p-values; audit with null_draws=B (or 'exact')"
