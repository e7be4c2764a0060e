"""Benchmark: HUC-Boost's default fit against the raw predictions, on a test split.  Not a test:
prints, per seed, the test log loss and HUC of the raw predictions and of four fits, and their
means over the seeds, measured in one run.

K.1: "Validation selects the returned update prefix."  The fits:

* ``default``: ``HUCBoost(tree, U).fit(P_cal, y_cal)``: 30% of the calibration rows held out,
  stratified, to choose the prefix (smallest validation HUC among the prefixes that lower the
  held-out log loss by two standard errors, ``select_prefix(guard=2)``);
* ``K.1 only``: the same held-out rows, the smallest validation HUC alone (``prefix_guard=None``);
* ``all``: ``validation=False``, every update of the run kept;

on the two shapes of ``tests.shapes.RECALIBRATION_CASES`` (53 calibration rows of glass' six
classes; 10,788 rows of diamonds' eight clarity grades), Gaussian naive Bayes predictions,
optionally sharpened (``--sharpen 2``: each row to the power 2, renormalised, an overconfident
model) so that there is miscalibration to remove.

Run: ``python bench/holdout.py glass --seeds 10`` (seconds a seed); ``python bench/holdout.py
diamonds --seeds 3`` (about a minute a seed).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from huc_ref import fast  # noqa: E402
from huc_ref.calibration import HUCBoost, NoValidationWarning  # noqa: E402
from tests.shapes import recalibration_case  # noqa: E402

FITS = {"default": {}, "K.1 only": {"prefix_guard": None}, "all": None}


def log_loss(P, y, labels) -> float:
    ids = np.array([labels.index(v) for v in y])
    return float(-np.mean(np.log(P[np.arange(len(y)), ids])))


def one_seed(name: str, seed: int, sharpen: float) -> dict:
    case = recalibration_case(name, seed)
    tree, us, labels = case["tree"], case["utilities"], case["labels"]
    (Pc, yc), (Pt, yt) = case["cal"], case["test"]
    Pc, Pt = (P ** sharpen / (P ** sharpen).sum(axis=1, keepdims=True) for P in (Pc, Pt))
    out = {}
    for fit, options in FITS.items():
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoValidationWarning)
            model = HUCBoost(tree, us, **(options or {})).fit(Pc, yc, **({} if options is not None else
                                                                          {"validation": False}))
        seconds = time.perf_counter() - start
        if "raw" not in out:
            raw = model._inputs(Pt)  # (K.1's kappa_init smoothing only)
            out["raw"] = (log_loss(raw, yt, labels), fast.audit(yt, raw, tree, us).huc.sup, 0, 0.0)
        Q = model.predict_proba(Pt)
        out[fit] = (log_loss(Q, yt, labels), fast.audit(yt, Q, tree, us).huc.sup, model.n_updates_, seconds)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", choices=["glass", "diamonds"])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--sharpen", type=float, default=1.0, help="raise each predicted row to this power")
    args = ap.parse_args(argv)
    rows = []
    for seed in range(args.seeds):
        r = one_seed(args.case, seed, args.sharpen)
        rows.append(r)
        parts = [f"{k} log loss {v[0]:.4f} HUC {v[1]:.4f}" + ("" if k == "raw" else f" ({v[2]} updates)")
                 for k, v in r.items()]
        print(f"seed {seed}: " + "; ".join(parts), flush=True)
    print(f"{args.case}, {args.seeds} seeds, sharpen {args.sharpen}: mean test log loss / HUC (worse than raw: seeds)")
    for k in rows[0]:
        ll = np.array([r[k][0] for r in rows])
        raw = np.array([r["raw"][0] for r in rows])
        print(f"  {k:>9}: log loss {ll.mean():.4f}, HUC {np.mean([r[k][1] for r in rows]):.4f}, updates "
              f"{np.mean([r[k][2] for r in rows]):.1f}, log loss worse than raw in {int(np.sum(ll > raw + 1e-12))}")


if __name__ == "__main__":
    main()
