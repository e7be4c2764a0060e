"""Boosting from arrays, in units of one fast audit.  Not a test: prints
ratios measured in one run.

The workload of the issue: n = 10^4 sample atoms, K = 27 leaves (a depth-3 tree), three
top-1 utilities (depths 1, 2, 3), softmax predictions of random logits with labels drawn from a
shifted law (so that boosting has something to remove).  Printed, each over one
``huc_ref.fast.audit`` of the same arrays:

* the set-up from arrays: ``FiniteDistribution.from_floats`` (the exact route from
  arrays; one run) and ``fast.boost.boost_sample`` with no update (its backend, the first audit and the
  final one);
* the time per update of ``boost_sample`` over a 40-update greedy run (the target: 1.2): the
  best run's time less the best set-up's, over its updates;
* K.1's validation step (``replay.select_prefix``: the run's rules replayed on n validation
  rows, an audit after each) per prefix, the rows as a ``fast.sample.Sample`` (what
  ``HUCBoost.fit`` reads) and as a ``FiniteDistribution.from_floats`` (the exact route),
  the construction included.

Every figure is the best of ``--repeat`` runs, the audit, the set-up and the run alternating.

Run: ``python bench/boost_arrays.py`` (``--quick``: n = 10^3).
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fast_audit import depth_tree  # noqa: E402
from bench.machine import options  # noqa: E402
from bench.workloads import best_of  # noqa: E402
from huc_ref import FiniteDistribution, Top1AtDepth, fast  # noqa: E402
from huc_ref.fast.boost import boost_sample  # noqa: E402
from huc_ref.fast.sample import Sample  # noqa: E402
from huc_ref.replay import select_prefix  # noqa: E402


def workload(n: int, seed: int = 0):
    tree = depth_tree(27, 3, seed=3)
    rng = np.random.default_rng(seed)
    P = np.exp(2 * rng.normal(size=(n, tree.K)))
    P /= P.sum(axis=1, keepdims=True)
    law = 0.6 * P + 0.4 * np.roll(P, 1, axis=1)
    y = (rng.random(n)[:, None] > np.cumsum(law, axis=1)).sum(axis=1).clip(0, tree.K - 1)
    return tree, P, y, {f"top1@{d}": Top1AtDepth(tree, d) for d in (1, 2, 3)}


def main(argv=None) -> None:
    args = options(__doc__, argv, repeat=5)
    n = 10**3 if args.quick else 10**4
    tree, P, y, us = workload(n)
    fast.audit(y, P, tree, us)
    t = time.perf_counter()
    FiniteDistribution.from_floats(tree, y, P)
    exact_setup = time.perf_counter() - t
    audit = setup = whole = math.inf
    for _ in range(args.repeat):  # alternating, each figure the best of its runs (drift hits all alike)
        audit = min(audit, best_of(1, lambda: fast.audit(y, P, tree, us)))
        setup = min(setup, best_of(1, lambda: boost_sample(tree, P, y, us, epsilon="0.001", max_updates=0)))
        t = time.perf_counter()
        run = boost_sample(tree, P, y, us, epsilon="0.001", max_updates=40, select="greedy")
        whole = min(whole, time.perf_counter() - t)
    per_update = (whole - setup) / max(1, len(run.updates))
    _, Pv, yv, _ = workload(n, seed=1)
    arrays = exact = math.inf
    for _ in range(max(1, args.repeat // 2)):
        arrays = min(arrays, best_of(1, lambda: select_prefix(run, Sample(tree, Pv, yv), us)))
        exact = min(exact, best_of(1, lambda: select_prefix(run, FiniteDistribution.from_floats(tree, yv, Pv), us)))
    prefixes = len(run.updates) + 1
    print(f"n = {n}, K = {tree.K}, |U| = 3: one fast audit {audit * 1e3:.1f} ms")
    print(f"set-up, FiniteDistribution.from_floats: {exact_setup:.2f} s = {exact_setup / audit:.0f} audits")
    print(f"set-up, boost_sample with no update (backend, first and final audits): {setup / audit:.1f} audits")
    print(f"per update ({len(run.updates)} updates, greedy): {per_update * 1e3:.1f} ms = {per_update / audit:.2f} "
          "audits (target 1.2)")
    print(f"validation, select_prefix over {prefixes} prefixes: from a Sample {arrays / prefixes / audit:.2f} audits a "
          f"prefix, from FiniteDistribution.from_floats {exact / prefixes / audit:.2f} ({exact / arrays:.1f}x)")


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
