"""The reproduction kit (examples/reproduce): K.3's SUPPORT2 reconstruction, the paper's numbers as
transcribed, the cached runs, the tables with their verdicts, J.1's grid, the kit's decision
utilities, and the four download-only datasets' pipelines on synthetic files in their published
layouts."""

import doctest
import importlib
import json
import math
from fractions import Fraction

import numpy as np
import pytest

from huc_ref.errors import HUCError

pytest.importorskip("sklearn")

from examples.reproduce import __main__ as cli  # noqa: E402
from examples.reproduce import j1, kit, support2  # noqa: E402

MODULES = ["kit", "protocol", "support2", "decisions", "j1", "inaturalist", "massive", "nslkdd", "nbaiot", "page"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    """The kit's docstring examples (examples/ is outside the suite's doctest paths)."""
    module = importlib.import_module(f"examples.reproduce.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


# --- SUPPORT2 (K.3) --------------------------------------------------------------------------

def test_support2_reconstruction_matches_k3():
    """K.3: 9,105 patients, 7,705 with an observed two-month outcome (the CSV's own count);
    splits of 2250/1001/750/999 on a 5,000-row subset; U^(1), U^(2), U^(3) have 1, 3 and 4
    relevant nodes (Table 10's column); 24 numerical and 6 categorical variables, every CSV
    column classified, the post-baseline avtisst excluded and the baseline ADL index adlsc kept."""
    records, y = support2.load()
    assert len(records) == 7705 and sorted(set(y.tolist())) == [0, 1, 2, 3, 4]
    assert list(records[0]) == [c for c, _, _, _ in support2.COLUMNS]
    (_, train, parts), = support2.splits(y, 1)
    assert {"train": len(train), **{k: len(v) for k, v in parts.items()}} == support2.SIZES
    assert len(set(np.concatenate([train, *parts.values()]).tolist())) == 5000
    relevant = {c: {v for k in names for v in support2.UTILITIES[k].relevant_nodes}
                for c, names in support2.CLASSES.items()}
    assert {c: len(v) for c, v in relevant.items()} == {"U(1)": 1, "U(2)": 3, "U(3)": 4}
    assert len(support2.NUMERICAL) == 24 and len(support2.CATEGORICAL) == 6
    assert support2.CATEGORICAL == ["sex", "dzgroup", "dzclass", "income", "race", "ca"]  # K.3's six, in file order
    reasons = {c: (kind, reason) for c, kind, reason, _ in support2.COLUMNS}
    assert reasons["avtisst"] == (None, "post-outcome") and reasons["adlsc"] == ("numerical", "baseline measurement")
    kept = {reason for kind, reason in reasons.values() if kind}
    assert kept == {"background", "baseline measurement"}  # K.3: background and baseline measurements only
    X = support2.features(records, train)
    standardised = (np.abs(X[train].mean(axis=0)) < 1e-9) & (np.abs(X[train].std(axis=0) - 1) < 1e-9)
    assert standardised.sum() == 24 and np.isfinite(X).all()  # the numerical variables; the rest are indicators
    assert set(np.unique(X[:, ~standardised]).tolist()) == {0.0, 1.0}
    assert X.shape[1] - 24 == 24 + sum(len({r[c].strip() for r in records}) for c in support2.CATEGORICAL)


def test_support2_subgroup_retention_rule():
    """K.3: "Each other indicator is retained when its group contains at least five observations
    in both calibration and validation"; missing ages belong to no age group."""
    records = [{"age": a, "sex": "female" if i < 5 else "male", "dzclass": "Coma"}
               for i, a in enumerate(["50"] * 6 + ["70"] * 4 + [""] * 2)]
    groups = support2.subgroups(records, np.arange(12), np.arange(12), np.arange(12))
    assert set(groups) == {"all", "age<65", "female", "male", "dz=Coma"}  # 65-80 has 4 members: dropped
    assert groups["age<65"].tolist() == [1] * 6 + [0] * 6 and groups["all"].sum() == 12


def test_support2_refuses_a_changed_csv():
    with pytest.raises(HUCError, match="^support2: here has SHA-256 [0-9a-f]{64}, expected " + support2.SHA256 + "$"):
        support2._checked(b"sno,age\n", "here")


def test_support2_feature_table_lists_every_column():
    table = support2.feature_table()
    assert table.count("\n| `") == len(support2.COLUMNS) and "24 numerical and 6 categorical" in table


# --- the paper's numbers -----------------------------------------------------------------------

def pooled(per_predictor):
    """Mean and sample sd over 6 x 5 runs from the six predictors' means and sds over 5 splits."""
    means = [m for m, _ in per_predictor]
    grand = sum(means) / len(means)
    ss = sum(4 * s * s + 5 * (m - grand) ** 2 for m, s in per_predictor)
    return grand, math.sqrt(ss / 29)


def test_transcribed_tables_7_8_9_agree_with_each_other():
    """Table 7's pooled mean and sd follow from Tables 8-9's per-predictor means and sds (K.1:
    "pooled results give equal weight to the six classifiers and five splits"): an independent
    check of the three transcriptions, within the printed rounding."""
    per = {**support2.TABLE8, **support2.TABLE9}
    for (method,), cells in support2.TABLE7.items():
        for k, paper in enumerate(cells):
            mean, sd = pooled([(per[(p, method)][k].mean, per[(p, method)][k].sd) for p in support2.PREDICTOR_NAMES])
            unit = 10.0 ** -paper.digits
            assert abs(mean - paper.mean) <= unit, (method, k)
            assert abs(sd - paper.sd) <= 3 * unit + 0.002 * paper.sd, (method, k)


def test_transcribed_table_1_and_10_agree_with_table_7():
    """Table 1's SUPPORT2 half is Table 7 at three decimals (one for updates); Table 10's U(3)
    row repeats Table 7's UC-B, HUC-B and HUC-B (0.05) HUC and updates."""
    for (method,), cells in support2.TABLE1.items():
        for a, b in zip(cells, support2.TABLE7[(method,)]):  # (Table 7's digits are rounded too: .6985 -> .698)
            half = 0.5 * 10.0 ** -a.digits + 0.5 * 10.0 ** -b.digits + 1e-12
            assert abs(a.mean - b.mean) <= half and abs(a.sd - b.sd) <= half, (method, a, b)
    row = support2.TABLE10[("U(3)",)]
    assert [c.text for c in row] == [support2.TABLE7[(m,)][k].text for k in (3, 4)
                                     for m in ("UC-B", "HUC-B", "HUC-B (0.05)")]


def test_comparison_scores_and_verdicts():
    """z is the difference in the paper's sds; a row's verdict is its largest |z|; a zero paper sd
    counts as agreement only when ours rounds to it; rows beyond 2 sds carry their explanation."""
    paper = [kit.Number.parse(".5000 ± .0100"), kit.Number.parse("0.00 ± 0.00")]
    rows = [("A", {"acc": [0.50, 0.51], "updates": [0, 0]}, paper),
            ("B", {"acc": [0.48, 0.48], "updates": [1, 1]}, paper)]
    text, beyond = kit.comparison("T", rows, ["acc", "updates"], "t", {"t:B": "why B differs"})
    assert "| A | 0.5050 / .5000 (+0.5) | 0.00 / 0.00 (+0.0) | 0.5 | within 1 sd |" in text
    assert "| B | 0.4800 / .5000 (-2.0) | 1.00 / 0.00 (+inf) | inf | beyond 2 sd |" in text
    assert beyond == [("B", math.inf, "Updates", "why B differs")]
    assert "- **B** (max abs z inf, on Updates): why B differs" in text


def test_quick_support2_tables_cached_and_resumed(tmp_path, capsys):
    """`python -m examples.reproduce table7 --quick`: the runs (LR, GNB on split 0) are cached one
    by one and read back by the next command (no recomputation); every table of the dataset is
    written with the paper's numbers and verdicts; where the paper pins the predictor (Table 8's
    GNB: accuracy .0701, HUC .3978), ours is close; the exact engine agrees with the fast path."""
    assert cli.main(["table7", "--quick", "--results", str(tmp_path)]) == 0
    out = tmp_path / "support2-quick"
    runs = {p.name: json.loads(p.read_text()) for p in (out / "runs").glob("*.json")}
    assert set(runs) == {"split0-LR.json", "split0-GNB.json"}
    assert set(runs["split0-LR.json"]["methods"]) == set(support2.METHODS)
    gnb = runs["split0-GNB.json"]["methods"]["Baseline"]
    assert abs(gnb["acc"] - 0.0701) < 0.02 and abs(gnb["huc"] - 0.3978) < 0.02
    assert max(runs["split0-LR.json"]["reaudit"]) < 1e-9
    assert "C" in runs["split0-LR.json"]["fit"]["params"]
    for name in ("table1", "table7", "table8", "table9", "table10", "settings"):
        assert (out / f"{name}.md").stat().st_size > 150
    table7 = (out / "table7.md").read_text()
    assert "| HUC-B (0.05) |" in table7 and "Verdict" in table7 and "configuration " in table7
    assert "| GNB · Baseline |" in (out / "table8.md").read_text()
    assert "| U(1) |" in (out / "table10.md").read_text()
    first = capsys.readouterr()
    assert "2 to compute" in first.err and "Against the paper" in first.out
    assert cli.main(["table8", "--quick", "--results", str(tmp_path)]) == 0
    assert "2 runs, 2 cached, 0 to compute" in capsys.readouterr().err


def test_a_changed_configuration_is_not_read_from_the_cache(tmp_path):
    """A cached run is reused only under the configuration's fingerprint."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"fingerprint": "old", "methods": {}}))
    assert kit.cached(path, "old") is not None and kit.cached(path, "new") is None
    path.write_text("{truncated")
    assert kit.cached(path, "old") is None


def test_the_command_line_names_wrong_options():
    with pytest.raises(HUCError, match=r"^--splits: K.1 has five splits; give 1 to 5, got 7$"):
        cli.main(["table7", "--splits", "7"])
    with pytest.raises(HUCError, match=r"^--predictors: SVM not among LR, GNB, DT, RF, XGB, MLP$"):
        cli.main(["table7", "--predictors", "SVM"])


# --- J.1 -----------------------------------------------------------------------------------------

def test_j1_grid_matches_the_example_and_resumes(tmp_path):
    """The kit's J.1 grid gives examples/j1_toy.py's numbers, and the same numbers again when an
    interrupted run resumes from its cache (the generator's state is cached with each size)."""
    from examples import j1_toy
    whole = j1.reproduce(quick=True, results=tmp_path)["j1"][0]
    expected = j1_toy.main(["--quick", "--out", str(tmp_path / "toy")])
    assert j1_toy.table(expected) in whole and "| after HUC-Boost it decreases with sample size | holds |" in whole
    (tmp_path / "j1-quick" / "runs" / "n1000000.json").unlink()  # interrupted before the last size
    assert j1.reproduce(quick=True, results=tmp_path)["j1"][0] == whole


# --- the kit's decision utilities (K.4-K.6) -------------------------------------------------------

def test_decision_utilities_fast_and_exact_agree():
    """TopDown and ScenarioIntent: the fast audit (float64 choices, uncertain rows decided
    exactly) equals the exact audit, on random predictions with exact ties and threshold hits."""
    from examples.reproduce.decisions import ScenarioIntent, TopDown
    from huc_ref import FiniteDistribution, LabelTree, audit
    from huc_ref.fast import audit as fast_audit
    t = LabelTree.from_children("r", {"r": ["s1", "s2", "y6"], "s1": ["y1", "y2", "y3"], "s2": ["y4", "y5"]},
                                labels=[f"y{i}" for i in range(1, 7)])
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(6), size=40)
    P[0] = [0.25, 0.25, 0, 0.25, 0.25, 0]  # ties at the root and inside s1
    P[1] = [0.5, 0.25, 0.25, 0, 0, 0]  # t = 1/2 exactly
    P = (P + 1e-3) / (P + 1e-3).sum(axis=1, keepdims=True)
    y = rng.integers(0, 6, size=40)
    us = {"down1": TopDown(t, 1), "down2": TopDown(t, 2), "si": ScenarioIntent(t, "1/2", "1/2"),
          "si3": ScenarioIntent(t, "3/4", "1/4")}
    exact = audit(FiniteDistribution.from_floats(t, y, P), us)
    fast = fast_audit(y, P, t, us)
    assert abs(float(exact.uc.sup) - fast.uc.sup) < 1e-12 and abs(float(exact.huc.sup) - fast.huc.sup) < 1e-12
    for name, u in us.items():
        from huc_ref.fast.tree import FastTree
        from huc_ref.fast.utilities import utility_values
        U = utility_values(u, FastTree(t), P)
        assert np.array_equal(U, [[float(v) for v in u.values([Fraction(x) for x in row])] for row in P]), name
