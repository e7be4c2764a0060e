"""The examples run in the suite (quick modes), so they never rot."""

import importlib.util
from pathlib import Path

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
