"""Benchmark of consistency resampling (huc_ref.significance).  Not a test: prints ratios
measured in one run.

The issue's workload: n sample rows, K = 30 (a random tree), |U| = 3 (a payoff table, top-1
at depth 1, a binary decision), |C| = 3 (everyone, a random half, signed weights), labels
drawn from the predictions.  For each (n, B):

* ``audit s``: one fast audit (best of three);
* ``setup s``: the label-free part computed once (``NullAudit``: utility values, every node's
  mean, the sort and tie blocks);
* ``null s``: ``fast.audit(..., null_draws=B)`` minus one audit: the setup and the B draws;
* ``x audit``: that time over one audit (the issue's target: at most about 10 at
  n = 10^5, B = 1,000);
* ``per draw``: one draw beyond the setup, in audits;
* ``floor x audit``: a read-once floor, ``B`` times one numpy pass over as many float64 as one
  draw's prefix sums must add at least (its ``n |C| sum_u (1 + D_u)`` terms, ``D_u`` the
  relevant nodes on a label's path), over one audit: an exact resampling of this audit that
  adds each term once costs at least this.

Each size runs with numpy and, when numba is installed, with the compiled kernels (each
against its own audit).

Run: ``python bench/significance.py`` (``--quick``: n = 10^4 and B = 100 only).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from fractions import Fraction
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.workloads import best_of  # noqa: E402
from huc_ref import BinaryDecision, Table, Top1AtDepth, fast  # noqa: E402
from huc_ref.fast.significance import NullAudit  # noqa: E402
from huc_ref.fast.tree import FastTree  # noqa: E402
from tests.shapes import random_tree  # noqa: E402


def arrays(n: int, K: int = 30, seed: int = 0):
    """The workload as arrays: tree, utilities, predictions, labels drawn from them, subgroups."""
    rng = random.Random(seed)
    tree = random_tree(K, rng)
    tree = tree.with_labels(tree.labels)  # the predictions' columns: the leaves in depth-first order
    labels = tree.labels
    us = {"table": Table(tree, [Fraction(rng.randint(-4, 4), 4) for _ in labels]),
          "top1": Top1AtDepth(tree, 1),
          "decision": BinaryDecision(tree, labels[: K // 4], labels[: K // 2], Fraction(1, 3))}
    g = np.random.default_rng(seed)
    P = g.dirichlet(np.full(K, 0.5), size=n)
    y = (P.cumsum(axis=1) < g.random(n)[:, None]).sum(axis=1).clip(max=K - 1)
    groups = {"all": np.ones(n), "half": g.integers(0, 2, n).astype(float), "signed": g.choice([-0.5, 0.5], n)}
    return tree, us, P, y, groups


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    grid = [(10**4, 100)] if args.quick else [(10**4, 100), (10**4, 1000), (10**5, 100), (10**5, 1000)]
    accelerators = ["numpy"] + (["numba"] if fast.numba_available() else [])
    print(f"{'accelerator':>11} {'n':>8} {'B':>6} {'audit s':>9} {'setup s':>9} {'null s':>9} {'x audit':>9} "
          f"{'per draw':>9} {'floor x audit':>14}")
    for n, B in grid:
        tree, us, P, y, groups = arrays(n)
        W = np.stack([v / n for v in groups.values()], axis=1)
        for acc in accelerators:
            if acc == "numba":  # compile outside the timing
                fast.audit(y[:50], P[:50], tree, us, subgroups={k: v[:50] for k, v in groups.items()},
                           null_draws=2, accelerator=acc)
            one = best_of(3, partial(fast.audit, y, P, tree, us, subgroups=groups, accelerator=acc))
            null_audit = NullAudit(FastTree(tree), P, W, us, accelerator=acc)
            setup = best_of(1, partial(NullAudit, FastTree(tree), P, W, us, accelerator=acc))
            entries = n * W.shape[1] * sum(1 + len(cols) for _, (cols, _, _), _, _, _ in null_audit.plans)
            read = np.ones(entries)
            floor = best_of(5, read.sum) * B
            t = time.perf_counter()
            fast.audit(y, P, tree, us, subgroups=groups, null_draws=B, seed=0, accelerator=acc,
                       max_null_work=10**12)  # (runs of minutes, beyond the default budget: what is measured)
            null = time.perf_counter() - t - one
            print(f"{acc:>11} {n:>8} {B:>6} {one:>9.3f} {setup:>9.3f} {null:>9.2f} {null / one:>9.1f} "
                  f"{(null - setup) / one / B:>9.3f} {floor / one:>14.1f}", flush=True)

if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
