"""A real-data pipeline in the shape of Sec. 5.2 and Table 1, on data shipped with scikit-learn.

    "Both datasets use six base predictors - logistic regression, Gaussian naive Bayes,
    decision tree, random forest, XGBoost, and multilayer perceptron - using five splits
    into training, calibration, validation, and test sets. ... Validation data select
    regularization and the checkpoint returned along each boosting path, and test data are
    used only for final evaluation."  (Sec. 5.2, K.1)

Data: scikit-learn's ``load_digits`` (1,797 8x8 images, ten digits; no download).  The
label tree is hand-made from the digits' shapes (documented below, a convention of this
example): round digits split into closed loops {0, 8}, one loop {6, 9} and open curves
{2, 3, 5}; straight digits into strokes {1, 7} and the crossed 4.  Utilities: top-1
correctness at depths 1, 2 and 3 (K.2) and a binary decision "send to manual review"
(S = {1, 7}, D = all digits, tau = 1/4; J.1's form).  Subgroups: everyone, and images with
mean ink above / not above the training median.  The protocol (K.1) is
``examples/reproduce/protocol.py``, shared with the reproduction kit (``examples/reproduce``),
which also chooses each base predictor's setting on the validation rows.

Methods (K.1): Baseline; UC-Boost; HUC-Boost (adaptive, passes); HUC-Boost (0.05);
temperature, vector and Dirichlet scaling; each of the three followed by HUC-Boost.
Violations above 0.001 are corrected; caps 100 updates (UC-Boost) and 100 passes
(HUC-Boost); validation selects the returned update prefix by its UC (UC-Boost) or HUC
(the others).  Reported on test data: accuracy, macro one-vs-rest AUC, UC, HUC and the
number of updates kept, as mean ± sd over predictors and splits.  The fast path does the
work; the exact engine re-audits a sample of the test results.

    python examples/real_data.py            # 6 predictors x 5 splits
    python examples/real_data.py --quick    # 2 predictors x 1 split, smaller caps
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.reproduce.protocol import METHODS, PREDICTORS, Experiment, cancellation_line, figure, table  # noqa: E402
from huc_ref import BinaryDecision, LabelTree, Top1AtDepth  # noqa: E402

TREE = LabelTree.from_nested({"digit": {
    "round": {"closed_loops": ["d0", "d8"], "one_loop": ["d6", "d9"], "open_curves": ["d2", "d3", "d5"]},
    "straight": {"strokes": ["d1", "d7"], "d4": None}}},
    labels=[f"d{k}" for k in range(10)])
UTILITIES = {"top1@1": Top1AtDepth(TREE, 1), "top1@2": Top1AtDepth(TREE, 2), "top1@3": Top1AtDepth(TREE, 3),
             "review": BinaryDecision(TREE, ["d1", "d7"], list(TREE.labels), "1/4")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 predictors x 1 split, caps 20 / 5 passes")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "figures"))
    args = ap.parse_args(argv)
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    X, y = load_digits(return_X_y=True)
    n_splits = 1 if args.quick else 5
    experiment = Experiment(TREE, UTILITIES, uc_cap=20 if args.quick else 100, passes=5 if args.quick else 100)
    names = ["LR", "GNB"] if args.quick else list(PREDICTORS)
    rows = {m: [] for m in METHODS}
    by_predictor = {name: {m: [] for m in METHODS} for name in names}
    reaudited = []
    for split in range(n_splits):
        idx = np.arange(len(y))
        train, rest = train_test_split(idx, test_size=0.6, stratify=y, random_state=split)
        cal, rest = train_test_split(rest, test_size=2 / 3, stratify=y[rest], random_state=split)
        val, test = train_test_split(rest, test_size=0.5, stratify=y[rest], random_state=split)
        median = float(np.median(X[train].mean(axis=1)))
        parts = {"cal": cal, "val": val, "test": test}
        groups = {}
        for part, ids in parts.items():
            dark = (X[ids].mean(axis=1) > median).astype(int)
            groups[part] = {"all": np.ones(len(ids), dtype=int), "dark": dark, "light": 1 - dark}
        for name in names:
            _, labels, results, _ = experiment.fit_and_run(name, X, y, train, parts, groups, rows, by_predictor[name])
            if not reaudited:  # the exact engine re-audits a sample of the fast path's results
                reaudited.append(experiment.reaudit(results["Temp. -> HUC"], labels["test"], groups["test"]))
    pooled = table(rows) + "\n\n" + cancellation_line(rows)
    print(f"load_digits, {len(by_predictor)} predictors x {n_splits} splits; test data, mean ± sd")
    print(pooled)
    per_predictor = "\n\n".join(f"**{name}**\n\n{table(r)}\n\n{cancellation_line(r)}"
                                  for name, r in by_predictor.items())
    print(per_predictor)
    print(f"exact re-audit of a sample (Temp. -> HUC, first split): UC and HUC differ from the fast path by "
          f"{max(abs(a) for pair in reaudited for a in pair):.1e}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / ("real_data_quick.md" if args.quick else "real_data.md")).write_text(pooled + "\n")
    (out / ("real_data_by_predictor_quick.md" if args.quick else "real_data_by_predictor.md")).write_text(
        per_predictor + "\n")
    figure(by_predictor, out / ("real_data_quick.png" if args.quick else "real_data.png"),
           "load_digits: test HUC by method and base predictor")
    return rows, reaudited


if __name__ == "__main__":
    main()
