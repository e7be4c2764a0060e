"""Fitting vector and Dirichlet scaling (Table 3, H.6 eq. 188), by the optimiser ``fit_scaling``
uses (trust-region Newton-CG with exact Hessian-vector products), against L-BFGS-B on the same
objective and gradient with tight settings (``ftol = 1e-14``, ``gtol = 1e-9``, at
most 15,000 iterations), and against scikit-learn's ``LogisticRegression`` (lbfgs, ``tol =
1e-10``) on the same objective for Dirichlet scaling (the bias as a penalised constant feature,
``C = 1 / (n lambda)``).  Not a test: prints times, iterations and objectives measured in one run.

The rows: ``tests.shapes.wide_softmax`` (softmax rows of normal logits, and the same with half
of each row's entries near 1e-296; labels drawn from the rows; scikit-learn only where every
class has a label, as it drops the others), ``lambda = 1e-4`` (K.1's default), uniform weights.  Per case: seconds and
iterations of each optimiser, the objective each reaches less the smallest of them, the strong
convexity bound ``||g||^2 / (2 lambda)`` on how far ``fit_scaling``'s objective is from the
minimum, and the time ratios.

Run: ``python bench/recalibration.py`` (``--quick``: no K = 100 case; L-BFGS-B takes minutes there).
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.machine import options  # noqa: E402
from huc_ref.recalibration import KAPPA_INIT, _features, _objective, fit_scaling, log_loss  # noqa: E402
from tests.shapes import wide_softmax  # noqa: E402

L2 = 1e-4


def lbfgs(kind, X, Y, w):
    """The objective's minimum by L-BFGS-B, with tight settings (the alternative to Newton-CG)."""
    from scipy.optimize import minimize
    K = X.shape[1]
    fg, _ = _objective(kind == "vector", X, Y, w, L2)
    theta0 = np.concatenate([np.ones(K) if kind == "vector" else np.eye(K).ravel(), np.zeros(K)])
    res = minimize(fg, theta0, jac=True, method="L-BFGS-B", options={"maxiter": 15000, "ftol": 1e-14, "gtol": 1e-9})
    return float(res.fun), int(res.nit)


def sklearn(X, Y, w):
    """scikit-learn's multinomial logistic regression on ``(X, 1)``, read as Dirichlet scaling."""
    try:
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        return None
    n, K = X.shape
    ref = LogisticRegression(C=1 / (n * L2), fit_intercept=False, tol=1e-10, max_iter=100000)
    ref.fit(np.hstack([X, np.ones((n, 1))]), Y.argmax(axis=1))
    W, b = ref.coef_[:, :K], ref.coef_[:, K]
    return log_loss(X, Y, w, W, b) + L2 / 2 * float(np.sum(ref.coef_ ** 2)), int(np.max(ref.n_iter_))


def main(argv=None) -> None:
    args = options(__doc__, argv)
    cases = [(10, 1000), (30, 3000)] + ([] if args.quick else [(100, 1000)])
    fit_scaling(*wide_softmax(50, 3, seed=0), kind="vector")  # scipy's imports, outside the timings
    print(f"{'case':>34} {'ours s':>8} {'it':>5} {'L-BFGS-B s':>11} {'it':>6} {'sklearn s':>10} {'it':>6} "
          f"{'ours - min':>11} {'L-BFGS-B - min':>15} {'sklearn - min':>14} {'gap bound':>10} "
          f"{'x L-BFGS-B':>11} {'x sklearn':>10}")
    for (K, n), shift in ((case, shift) for case in cases for shift in (0.0, 680.0)):
        P, Y = wide_softmax(n, K, seed=K, shift=shift)
        X, w = _features(P, KAPPA_INIT), np.full(n, 1 / n)
        for kind in ("vector", "dirichlet"):
            t = time.perf_counter()
            rec = fit_scaling(P, Y, kind=kind, l2=L2)
            ours_s = time.perf_counter() - t
            t = time.perf_counter()
            theirs, theirs_it = lbfgs(kind, X, Y, w)
            lbfgs_s = time.perf_counter() - t
            peer = None
            if kind == "dirichlet" and Y.sum(axis=0).all():  # scikit-learn drops a class no label has
                t = time.perf_counter()
                peer = sklearn(X, Y, w)
                peer_s = time.perf_counter() - t
            values = [rec.report.objective, theirs] + ([peer[0]] if peer else [])
            low = min(values)
            peer_cols = (f"{peer_s:10.2f} {peer[1]:6d}" if peer else f"{'-':>10} {'-':>6}")
            peer_diff = f"{peer[0] - low:14.1e}" if peer else f"{'-':>14}"
            peer_ratio = f"{ours_s / peer_s:10.3f}" if peer else f"{'-':>10}"
            case = f"{kind} K={K} n={n} tails {math.exp(-shift):.0e}"
            print(f"{case:>34} {ours_s:8.2f} {rec.report.iterations:5d} {lbfgs_s:11.2f} {theirs_it:6d} "
                  f"{peer_cols} {rec.report.objective - low:11.1e} {theirs - low:15.1e} {peer_diff} "
                  f"{rec.report.gap:10.1e} {ours_s / lbfgs_s:11.3f} {peer_ratio}", flush=True)


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
