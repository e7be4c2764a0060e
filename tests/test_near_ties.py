"""Scores the fast engine's error bounds cannot order (Algorithm 2's sort in float64, App. F.3):
put in order by the exact values of the inputs (a case's rationals, a float array's own binary
values), reported in ``AuditResult.near_ties``, and every witness, read exactly, giving its moment.

The witness rule (``proofs_check.checks_audit.fast_witness_moment``): each end stands for the
atoms' exact score nearest to it, and the moment over the closed interval between the two must be
the row's within ``TOL`` = 1e-9, the tolerance of every fast result in the suite (float64 sums of a
few dozen terms in [-2, 2] err far below it).
"""

import json
import math
from fractions import Fraction
from types import SimpleNamespace

import jsonschema
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from huc_ref import FiniteDistribution, Interval, LabelTree, Rank, Table, TopK, audit, interval_moment
from huc_ref.cli import main
from huc_ref.errors import HUCError
from huc_ref.fast import audit as fast_audit
from huc_ref.fast import audit_distribution, numba_available
from huc_ref.formats import read_case, result_schema
from huc_ref.results import NearTies
from proofs_check.checks_audit import fast_witness_moment
from tests.strategies import label_trees, utilities
from tests.test_audit import audit_cases

TOL = 1e-9
ACCELERATORS = ["numpy"] + (["numba"] if numba_available() else [])
FAST = jsonschema.Draft202012Validator(result_schema("float64"))


def twelve_rows():
    """One prediction, (0.3, 0.7), evaluated twelve times with its second entry 0 to 11 units in
    the last place higher (as one input evaluated in different batches comes out): twelve distinct
    exact scores within 3.7e-16 of each other, below what float64's error bounds resolve; the first
    six rows labelled ``b``, the others ``a``."""
    t = LabelTree.from_children("r", {"r": ["a", "b"]})
    P = np.empty((12, 2))
    P[:, 0] = 1 - 0.7
    b = 0.7
    for k in range(12):
        P[k, 1], b = b, math.nextafter(b, 1.0)
    return t, P, ["b"] * 6 + ["a"] * 6


def assert_witnesses(dist, us, result):
    """Every row with a witness: read exactly it gives the row's moment, whose size is the sup."""
    for row in result.candidates:
        if row.interval is None:
            assert row.sup < TOL
            continue
        got = fast_witness_moment(dist, us[row.utility], row)
        assert got is not None and abs(float(got) - row.moment) < TOL, (row, got)
        assert abs(abs(row.moment) - row.sup) < TOL


def assert_rows_equal(fast, exact, tol=1e-12):
    assert [(r.subgroup, r.utility, r.node) for r in fast.candidates] == \
        [(r.subgroup, r.utility, r.node) for r in exact.candidates]
    assert all(abs(a.sup - float(b.sup)) < tol for a, b in zip(fast.candidates, exact.candidates))
    assert abs(fast.uc.sup - float(exact.uc.sup)) < tol and abs(fast.huc.sup - float(exact.huc.sup)) < tol


@pytest.mark.parametrize("accelerator", ACCELERATORS)
def test_twelve_rows_a_few_ulps_apart_are_ordered_by_their_exact_values(accelerator):
    """Pins the twelve rows: float64 cannot order their scores, which were one block (UC 0.2);
    the exact engine on the same floats has twelve (UC 0.35).  The fast engine orders them by the
    floats' exact values, equals the exact engine to 1e-12 on every row (a signed subgroup too),
    reports the group it decided, and each witness, read exactly, gives its moment."""
    t, P, y = twelve_rows()
    us = {"u": Table(t, [0, 1])}
    groups = {"all": np.ones(12), "signed": np.array([1, -0.5, 0, 1, 1, -1] * 2)}
    fast = fast_audit(y, P, t, us, subgroups=groups, accelerator=accelerator)
    dist = FiniteDistribution.from_floats(t, y, P, subgroups=groups)
    exact = audit(dist, us)
    assert abs(float(exact.uc.sup) - 0.35) < 1e-12
    assert_rows_equal(fast, exact)
    assert fast.near_ties == NearTies(decided_groups=1, decided_rows=12)
    assert_witnesses(dist, us, fast)
    doc = fast.to_json()
    FAST.validate(doc)
    assert doc["near_ties"] == {"decided": {"groups": 1, "rows": 12},
                                "undecided": {"groups": 0, "rows": 0, "uc_bound": 0.0, "huc_bound": 0.0}}


@pytest.mark.parametrize("accelerator", ACCELERATORS)
def test_rows_that_repeat_exactly_or_permuted_need_no_exact_score(monkeypatch, accelerator):
    """Equal floats of rows that hold the same numbers are exact ties (for a table utility, also
    rows whose entries at the labels of one value are permuted: its score does not see their
    order), so no exact score is computed and nothing is reported: a decision tree's repeated
    rows and permuted softmax rows cost no exact work (a planted exact score fails this)."""
    import huc_ref.fast.numbers as numbers
    calls = []
    for name in ("score", "scaled"):
        found = getattr(numbers.ExactRows, name)
        monkeypatch.setattr(numbers.ExactRows, name, lambda self, *a, _f=found: calls.append(1) or _f(self, *a))
    t = LabelTree.from_children("r", {"r": ["a", "b", "c", "d"]})
    rng = np.random.default_rng(3)
    pool = rng.dirichlet(np.ones(4), size=5)
    repeated = pool[rng.integers(0, 5, 400)]
    permuted = np.concatenate([rng.permuted(np.tile([[0.5, 0.25, 0.0625]], (80, 1)), axis=1),
                               np.full((80, 1), 0.1875)], axis=1)  # a, b, c's entries in any order, d's alike
    for P, us in ((repeated, {"top1": TopK(t, 1), "t": Table(t, [1, "-1/2", 0, "1/4"]), "rank": Rank(t, [1, 0, 0, 0])}),
                  (permuted, {"d": Table(t, [0, 0, 0, 1]), "t": Table(t, [1, 1, 1, "-1/2"])})):
        y = rng.integers(0, 4, len(P))
        fast = fast_audit(y, P, t, us, accelerator=accelerator)
        assert fast.near_ties is None and "near_ties" not in fast.to_json() and not calls
        assert_rows_equal(fast, audit(FiniteDistribution.from_floats(t, y, P), us))


def near_case(k: int = 6) -> dict:
    """A ``huc-case/1`` document whose predictions differ by 10^-20, far below float64's
    resolution: rows (1/3 + j 10^-20, 2/3 - j 10^-20) for j < k, labels alternating, weights 1/k,
    one subgroup of signed values beside everyone."""
    e = Fraction(1, 10**20)
    atoms = [{"weight": f"1/{k}", "c": [1, ["1", "-1/2"][j % 2]], "label": "ab"[(j // 2) % 2],
              "p": [str(Fraction(1, 3) + j * e), str(Fraction(2, 3) - j * e)]} for j in range(k)]
    return {"format": "huc-case/1", "id": "near", "tree": {"root": "r", "children": {"r": ["a", "b"]}},
            "labels": ["a", "b"], "subgroups": ["all", "signed"],
            "utilities": {"u": {"kind": "table", "values": [0, 1]}, "r": {"kind": "rank", "theta": [1, "1/2"]}},
            "atoms": atoms}


@pytest.mark.parametrize("accelerator", ACCELERATORS)
def test_a_case_file_with_scores_closer_than_float64_resolves(tmp_path, capsys, accelerator):
    """Pins a case whose exact scores differ by 1e-20: ``huc audit CASE --engine fast`` and the
    Python API give the exact engine's sups to 1e-12, the document (valid against its schema)
    and the report say which groups were decided exactly, and every witness, read exactly, gives
    its moment (its ends the exact scores themselves where no float lies between them)."""
    path = tmp_path / "near.json"
    path.write_text(json.dumps(near_case()))
    case = read_case(path)
    exact = audit(case.distribution, case.utilities)
    fast = audit(case.distribution, case.utilities, arithmetic="float64", accelerator=accelerator)
    assert_rows_equal(fast, exact)
    assert fast.near_ties == NearTies(decided_groups=2, decided_rows=12)  # one group of six rows per utility
    assert_witnesses(case.distribution, case.utilities, fast)
    assert any(isinstance(x, Fraction) for r in fast.candidates if r.interval for x in r.interval)
    if accelerator == "numpy":  # (the command line's fast engine is numpy's)
        assert main(["audit", str(path), "--engine", "fast", "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        FAST.validate(doc)
        assert doc["near_ties"]["decided"] == {"groups": 2, "rows": 12}
        for row, ref in zip(doc["candidates"], exact.candidates):
            assert abs(row["sup"] - float(ref.sup)) < 1e-12
            if row["interval"] is not None:
                got = fast_witness_moment(case.distribution, case.utilities[row["utility"]], SimpleNamespace(**row))
                assert abs(float(got) - row["moment"]) < TOL
        assert main(["audit", str(path), "--engine", "fast"]) == 0
        assert "near-equal scores float64 cannot order: 2 groups (12 rows) decided exactly" in capsys.readouterr().out
        assert main(["audit", str(path), "--json"]) == 0
        assert "near_ties" not in json.loads(capsys.readouterr().out)  # (the exact engine's document as it was)


@pytest.mark.parametrize("accelerator", ACCELERATORS)
def test_groups_beyond_the_budget_stay_whole_and_say_so(monkeypatch, capsys, tmp_path, accelerator):
    """With no budget for exact scores the twelve rows stay one block: the result says so (one
    group, twelve rows), and its bound holds (the exact UC lies in [UC, UC + uc_bound]); the
    witness ends then hold the group whole (read exactly, the interval gives the moment); the
    report names the budget, and raising it (the remedy) decides the group."""
    import huc_ref.fast.numbers as numbers
    t, P, y = twelve_rows()
    us = {"u": Table(t, [0, 1])}
    dist = FiniteDistribution.from_floats(t, y, P)
    exact = audit(dist, us)
    monkeypatch.setattr(numbers, "ORDER_BUDGET", 0)
    fast = fast_audit(y, P, t, us, accelerator=accelerator)
    ties = fast.near_ties
    assert (ties.decided_groups, ties.undecided_groups, ties.undecided_rows) == (0, 1, 12)
    assert abs(fast.uc.sup - 0.2) < 1e-12 < float(exact.uc.sup) - fast.uc.sup <= ties.uc_bound + 1e-12
    assert float(exact.huc.sup) - fast.huc.sup <= ties.huc_bound + 1e-12
    for row in fast.candidates:  # the group whole: the ends outside its scores, inside its neighbours'
        if row.interval is not None:
            lo, hi = (Fraction(x) for x in row.interval)
            got = interval_moment(dist, us[row.utility], row.subgroup, Interval(lo, hi), row.node)
            assert abs(float(got) - row.moment) < TOL
    FAST.validate(fast.to_json())
    assert "1 group (12 rows) left whole: UC may be up to" in ties.text()
    assert "costs more than huc_ref.fast.numbers.ORDER_BUDGET: raise it, or audit with the exact engine" in ties.text()
    path = tmp_path / "twelve.json"
    path.write_text(json.dumps({
        "format": "huc-case/1", "id": "twelve", "tree": {"root": "r", "children": {"r": ["a", "b"]}},
        "labels": ["a", "b"], "subgroups": ["all"], "utilities": {"u": {"kind": "table", "values": [0, 1]}},
        "atoms": [{"weight": "1/12", "c": [1], "label": label, "p": [str(x) for x in a.p]}
                  for label, a in zip(y, dist.atoms)]}))
    if accelerator == "numpy":
        assert main(["audit", str(path), "--engine", "fast"]) == 0
        assert "left whole" in capsys.readouterr().out
    monkeypatch.setattr(numbers, "ORDER_BUDGET", 2**20)  # the remedy the report names
    fast = fast_audit(y, P, t, us, accelerator=accelerator)
    assert fast.near_ties == NearTies(1, 12) and abs(fast.uc.sup - float(exact.uc.sup)) < 1e-12


def _near_pin():
    """Predictions 5e-303 apart, three subgroups (one signed), top-2 correctness: the witness
    ends, as the floats of the scores, stood for the wrong exact scores (a row said 0.11875 on
    [0.75, 0.75], which read exactly gives -0.01875)."""
    t = LabelTree.from_children("v0", {"v0": ["v1", "v2"], "v2": ["v3", "v4"]}).with_labels(["v4", "v1", "v3"])
    e, q = Fraction(1, 2 * 10**302), Fraction(3, 8)
    p, r = (Fraction(1, 4) - e, q + e, q), (Fraction(1, 4), q, q)
    atoms = [{"p": p, "label": "v1", "weight": Fraction(3, 8), "c": [1, 1, Fraction(-1, 2)]},
             {"p": p, "label": "v1", "weight": Fraction(1, 4), "c": [1, 0, 0]},
             {"p": p, "label": "v4", "weight": Fraction(1, 4), "c": [1, 0, 1]},
             {"p": r, "label": "v3", "weight": Fraction(1, 8), "c": [1, 0, 0]}]
    return FiniteDistribution(t, atoms, ["all", "g1", "g2"]), {"u0": TopK(t, 2)}


def _twelve_pin():
    t, P, y = twelve_rows()
    return FiniteDistribution.from_floats(t, y, P, subgroups={"all": [1] * 12, "g": [1, -0.5, 0] * 4}), \
        {"u": Table(t, [0, 1]), "top": TopK(t, 1)}


@settings(max_examples=120)
@given(audit_cases(shapes=True), st.sampled_from(ACCELERATORS))
@example(_near_pin(), ACCELERATORS[-1])
@example(_twelve_pin(), ACCELERATORS[-1])
def test_every_witness_read_exactly_gives_its_moment(case, accelerator):
    """On the shapes users have (flat ten-class trees, a node of 30 children last at its depth,
    entries near 1e-300, predictions 1e-300 apart, subgroups of signed values, unequal weights,
    population and sample atoms) each fast row's witness, its ends read as the exact scores they
    stand for, gives the row's moment, and the sups are the exact engine's."""
    d, us = case
    try:
        fast = audit_distribution(d, us, accelerator=accelerator)
    except HUCError as err:  # entries below 2.2e-308: float64 cannot hold them, and says so
        assert err.kind == "float_range"
        return
    assert_witnesses(d, us, fast)
    assert_rows_equal(fast, audit(d, us), TOL)
    assert fast.near_ties is None or fast.near_ties.undecided_groups == 0


@st.composite
def repeated_float_rows(draw):
    """Float rows as a model's ``predict_proba`` gives them: a few rows, each repeated with some
    entry a few units in the last place off (one input evaluated in different batches), labels,
    a subgroup of signed values and unequal weights."""
    t = draw(label_trees(max_leaves=6))
    K = t.K
    base = draw(st.lists(st.lists(st.integers(1, 50), min_size=K, max_size=K), min_size=1, max_size=3))
    rows = []
    for raw in base:
        row = [x / sum(raw) for x in raw]
        for _ in range(draw(st.integers(1, 4))):
            moved = list(row)
            j = draw(st.integers(0, K - 1))
            for _ in range(draw(st.integers(0, 3))):
                moved[j] = math.nextafter(moved[j], 2.0)
            rows.append(moved)
    n = len(rows)
    y = draw(st.lists(st.integers(0, K - 1), min_size=n, max_size=n))
    signed = draw(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]), min_size=n, max_size=n))
    weights = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    us = {f"u{i}": draw(utilities(t)) for i in range(draw(st.integers(1, 2)))}
    return t, np.array(rows), y, {"all": [1.0] * n, "signed": signed}, [float(w) for w in weights], us


def _twelve_arrays():
    t, P, y = twelve_rows()
    return t, P, [t.labels.index(v) for v in y], {"all": [1.0] * 12, "signed": [1.0, -1.0, 0.5] * 4}, \
        [1.0, 2.0] * 6, {"u": Table(t, [0, 1])}


@settings(max_examples=80)
@given(repeated_float_rows(), st.sampled_from(ACCELERATORS))
@example(_twelve_arrays(), "numpy")
def test_float_arrays_equal_the_exact_engine_on_the_same_floats(case, accelerator):
    """The array API (``huc_ref.fast.audit``) against the exact engine on the same floats read
    exactly (``FiniteDistribution.from_floats``), rows repeated with their last bits changed:
    every sup within 1e-12 and every witness, read exactly, giving its moment."""
    t, P, y, groups, weights, us = case
    labels = list(t.labels)
    fast = fast_audit(y, P, t, us, subgroups=groups, sample_weight=weights, accelerator=accelerator, labels=labels)
    dist = FiniteDistribution.from_floats(t, y, P, subgroups=groups, sample_weight=weights, labels=labels)
    assert_rows_equal(fast, audit(dist, us))
    assert_witnesses(dist, us, fast)
