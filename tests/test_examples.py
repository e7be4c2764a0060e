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


def test_cancellation_index_on_appendix_d1():
    """D.1 as a sample (p = 1/4 each; labels y1 x2, y3 x3, y4 x3, the law (1/4, 0, 3/8, 3/8)):
    at the HUC witness (the root, [1/2, 1/2]) M = 0 while Gamma_v0 = 1/4 and Gamma_vL = -1/4, so
    the index is 1 - 0 / (1/4 + 1/4) = 1; UC = 0 has no witness (index 0)."""
    import numpy as np

    from examples.reproduce.protocol import Experiment
    from huc_ref import LabelTree, Table
    t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    y = np.array([0, 0, 2, 2, 2, 3, 3, 3])
    P = np.full((8, 4), 0.25)
    index = Experiment(t, {"u": Table(t, [-1, 1, 1, 1])}).cancellation(P, y, {"all": np.ones(8, dtype=int)})
    assert index == {"huc": 1.0, "uc": 0.0}
