"""The examples run in the suite (quick modes), so they never rot."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_j1_toy_quick_reproduces_the_shape_of_figure_2b(tmp_path):
    """Sec. 5.1: both UCs fall with n; HUC after UC-Boost levels off, after HUC-Boost it falls."""
    results = load("j1_toy").main(["--quick", "--out", str(tmp_path)])
    mean = {n: {m: [sum(float(e[k]) for e in r[m]) / len(r[m]) for k in (0, 1)] for m in r}
            for n, r in results.items()}
    small, large = min(mean), max(mean)
    for method in ("uc", "huc"):
        assert mean[large][method][0] < mean[small][method][0] / 10  # UC falls with n
    assert mean[large]["huc"][1] < mean[small]["huc"][1] / 10  # HUC after HUC-Boost falls
    assert mean[large]["uc"][1] > 10 * mean[large]["huc"][1]  # HUC after UC-Boost stays
    assert (tmp_path / "j1_toy_quick.md").exists()


def test_cancellation_prints_the_exact_quantities_of_d1(tmp_path, capsys):
    """App. D.1: D_top = 1/4, D_L = -1/4, D_R = 0, UC = 0, HUC = 1/4."""
    from fractions import Fraction
    moments = load("cancellation").main(["--quick", "--out", str(tmp_path)])
    assert moments == {"v0": Fraction(1, 4), "vL": Fraction(-1, 4), "vR": 0}
    out = capsys.readouterr().out
    assert "UC  = 0,  HUC = 1/4 at node v0:  the node contributions cancel" in out
    assert "true branch probabilities" in out


def test_branch_audits_prints_d2_d3_d4():
    text = load("branch_audits").main(["--quick"])
    assert "subtree indicators: 0" in text and "true: 3/4 and 1/4" in text  # D.2
    assert "q*_(L,R) = 9/10 against q_(L,R) = 1/2, yet D_L = 0" in text  # D.3
    assert "(1/32, 0, -1/40)" in text and "selects group a only" in text  # D.4


def test_boost_trajectories_quick(tmp_path):
    """Both runs satisfy Theorem 3.5; HUC-Boost ends with HUC <= eps, UC-Boost with UC <= eps."""
    runs = load("boost_trajectories").main(["--quick", "--out", str(tmp_path)])
    for method, key in (("uc", "uc"), ("huc", "huc")):
        result, path = runs[method]
        assert result.theorem_3_5["holds"] and path[-1][key] <= 1 / 20 + 1e-12
        losses = [p["log_loss"] for p in path]
        assert all(b < a for a, b in zip(losses, losses[1:]))


def test_huc_demo(capsys):
    from huc_ref.cli import main
    assert main(["demo"]) == 0
    assert "D_top = 1/4,  D_L = -1/4,  D_R = 0" in capsys.readouterr().out


def test_where_error_lives(tmp_path):
    """Per-node table: HUC is its maximum; u2 (S = {y2, y5, y6, y8}, D = all, tau = 1/2) has
    d = -1/2 on y3, y4 and +1/2 on y5, y6, so 'upper' and 'lower' are not relevant (by hand)."""
    table = load("where_error_lives").main(["--quick", "--out", str(tmp_path)])
    from huc_ref import audit
    module = load("where_error_lives")
    dist, res, _ = module.node_table()
    assert max(r.sup for r in table.values() if r is not None) == res.huc.sup
    assert table["u2 admission", "upper"] is None and table["u2 admission", "lower"] is None
    assert table["u3 intensive care", "site"] is None
    assert audit(dist, module.UTILITIES).uc.sup == res.uc.sup


@pytest.mark.slow
def test_real_data_pipeline_quick(tmp_path):
    """Sec. 5.2 / Table 1 in shape: ten methods, test metrics, and an exact re-audit of a sample."""
    import pytest
    pytest.importorskip("sklearn")
    module = load("real_data")
    rows, reaudited = module.main(["--quick", "--out", str(tmp_path)])
    assert list(rows) == module.METHODS and all(len(r) == 2 for r in rows.values())
    assert all(abs(x) < 1e-9 for pair in reaudited for x in pair)  # fast path == exact engine
    for method, results in rows.items():
        for r in results:
            assert 0.5 < r["acc"] <= 1 and 0.5 < r["auc"] <= 1 and 0 <= r["huc"] <= 2 and 0 <= r["uc"] <= 2
            if method in ("Baseline", "Temp.", "Vec.", "Dir."):
                assert r["updates"] == 0
            else:  # the kept prefix never exceeds the quick caps (20 updates; 5 passes over the branching nodes)
                assert 0 <= r["updates"] <= (20 if method == "UC-B" else 5 * len(module.TREE.branching_nodes))
    report = (tmp_path / "real_data_quick.md").read_text()
    assert report.count("\n") == 14 and "cancellation index" in report  # the table, then the index
    assert (tmp_path / "real_data_by_predictor_quick.md").read_text().count("**") == 4  # LR and GNB
    assert (tmp_path / "real_data_quick.png").stat().st_size > 10_000


def test_support2_reconstruction_matches_k3():
    """K.3: 9,105 patients, 7,705 with an observed two-month outcome (the CSV's own count);
    the splits are 2250/1001/750/999 on a 5,000-row subset; U^(1), U^(2), U^(3) have 1, 3 and
    4 relevant nodes (Table 10's column); the features are K.3's 30 variables expanded."""
    import numpy as np
    import pytest
    pytest.importorskip("sklearn")
    module = load("support2")
    records, y = module.load()
    assert len(records) == 7705 and sorted(set(y.tolist())) == [0, 1, 2, 3, 4]
    (_, train, parts), = module.splits(y, 1)
    sizes = {"train": len(train), **{k: len(v) for k, v in parts.items()}}
    assert sizes == module.SIZES
    every = np.concatenate([train, *parts.values()])
    assert len(set(every.tolist())) == 5000
    relevant = {c: {v for k in names for v in module.UTILITIES[k].relevant_nodes}
                for c, names in module.CLASSES.items()}
    assert {c: len(v) for c, v in relevant.items()} == {"U(1)": 1, "U(2)": 3, "U(3)": 4}
    assert relevant["U(3)"] == {"v0", "v1", "v2", "v3"} == set(module.TREE.branching_nodes)
    assert len(module.CATEGORICAL) == 6 and len(module.NUMERICAL) == 24
    X = module.features(records, train)
    assert X.shape[0] == len(records) and np.isfinite(X).all()
    standardised = (np.abs(X[train].mean(axis=0)) < 1e-9) & (np.abs(X[train].std(axis=0) - 1) < 1e-9)
    assert standardised.sum() == 24  # the numerical variables; the rest are 0/1 indicators
    assert set(np.unique(X[:, ~standardised]).tolist()) == {0.0, 1.0}


def test_support2_subgroup_retention_rule():
    """K.3: "Each other indicator is retained when its group contains at least five observations
    in both calibration and validation"; missing ages belong to no age group."""
    import numpy as np
    module = load("support2")
    records = [{"age": a, "sex": "female" if i < 5 else "male", "dzclass": "Coma"}
               for i, a in enumerate(["50"] * 6 + ["70"] * 4 + [""] * 2)]
    cal, val = np.arange(0, 12), np.arange(0, 12)
    groups = module.subgroups(records, np.arange(12), cal, val)
    assert set(groups) == {"all", "age<65", "female", "male", "dz=Coma"}  # 65-80 has 4 members: dropped
    assert groups["age<65"].tolist() == [1] * 6 + [0] * 6 and groups["all"].sum() == 12


def test_support2_refuses_a_changed_csv():
    import pytest

    from huc_ref.errors import HUCError
    module = load("support2")
    with pytest.raises(HUCError, match="^support2: here has SHA-256 [0-9a-f]{64}, expected " + module.SHA256 + "$"):
        module._checked(b"sno,age\n", "here")


@pytest.mark.slow
def test_support2_quick(tmp_path):
    """Sec. 5.2 / Table 1's SUPPORT2 half in shape (2 predictors x 1 split, small caps): the ten
    methods, the paper's numbers beside ours, the figure, and an exact re-audit of a sample.
    Where the paper pins the predictor (Table 8's Baseline accuracy of GNB .0701 and LR .6088,
    GNB's Baseline HUC .3978) ours is close."""
    import pytest
    pytest.importorskip("sklearn")
    module = load("support2")
    rows, by_predictor, by_class, reaudited = module.main(["--quick", "--out", str(tmp_path)])
    assert list(rows) == module.METHODS and all(len(r) == 2 for r in rows.values())
    assert all(abs(x) < 1e-9 for pair in reaudited for x in pair)  # fast path == exact engine
    base = {name: r["Baseline"][0] for name, r in by_predictor.items()}
    assert abs(base["GNB"]["acc"] - 0.0701) < 0.03 and abs(base["LR"]["acc"] - 0.6088) < 0.05
    assert abs(base["GNB"]["huc"] - 0.3978) < 0.05
    for results in rows.values():
        for r in results:
            assert 0 <= r["acc"] <= 1 and 0.5 < r["auc"] <= 1 and 0 <= r["huc"] <= 2 and 0 <= r["uc"] <= 2
    # the two-stage methods reduce GNB's HUC well below its baseline (Table 9's direction)
    assert by_predictor["GNB"]["Temp. -> HUC"][0]["huc"] < base["GNB"]["huc"] / 3
    assert set(by_class) == {"U(1)", "U(2)", "U(3)"}
    report = (tmp_path / "support2_quick.md").read_text()
    assert "Against Table 7" in report and "Tables 8 and 9" in report and "Table 10" in report
    assert (tmp_path / "support2_quick.png").stat().st_size > 10_000


def test_cancellation_index_on_appendix_d1():
    """D.1 as a sample (p = 1/4 each; labels y1 x2, y3 x3, y4 x3, the law (1/4, 0, 3/8, 3/8)):
    at the HUC witness (the root, [1/2, 1/2]) M = 0 while Gamma_v0 = 1/4 and Gamma_vL = -1/4, so
    the index is 1 - 0 / (1/4 + 1/4) = 1; UC = 0 has no witness (index 0)."""
    import numpy as np

    from examples.protocol import Experiment
    from huc_ref import LabelTree, Table
    t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    y = np.array([0, 0, 2, 2, 2, 3, 3, 3])
    P = np.full((8, 4), 0.25)
    index = Experiment(t, {"u": Table(t, [-1, 1, 1, 1])}).cancellation(P, y, {"all": np.ones(8, dtype=int)})
    assert index == {"huc": 1.0, "uc": 0.0}
