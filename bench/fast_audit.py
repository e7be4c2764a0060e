"""Benchmark of the fast path (issue 5).  Not a test: prints ratios measured in one run.

Depth-7 trees with K = 30 and K = 1000 leaves, |U| = 5 (top-1 correctness at depths
3..7) and |C| = 7 subgroups, n sample atoms.  For each size: the fast audit's wall time;
its ratio to (a) the read-once floor (numpy summing the n x K matrix once) and (b) |U|
argsorts of n floats; the time per (sample x subgroup x path node) update; and (c) the
exact engine's time per atom at n = 10^4 over the fast path's.

Run: ``python bench/fast_audit.py`` (``--quick`` for small sizes).
"""

from __future__ import annotations

import argparse
import random
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.workloads import timed  # noqa: E402
from huc_ref import FiniteDistribution, LabelTree, Top1AtDepth, audit  # noqa: E402
from huc_ref.fast import audit as fast_audit  # noqa: E402


def depth_tree(K: int, depth: int, seed: int = 0) -> LabelTree:
    """A random tree with K leaves, all at the given depth (unary chains where a branch runs out)."""
    rng = random.Random(seed)
    counter = iter(range(10**9))
    root = f"n{next(counter)}"
    children, stack = {}, [(root, K, 0)]
    while stack:
        node, size, level = stack.pop()
        if level == depth:
            continue
        levels_left = depth - level
        d = 1 if size == 1 else min(size, max(2, round(size ** (1 / levels_left) + rng.random())))
        cuts = sorted(rng.sample(range(1, size), d - 1)) if d > 1 else []
        parts = [b - a for a, b in zip([0] + cuts, cuts + [size])]
        kids = [f"n{next(counter)}" for _ in parts]
        children[node] = kids
        stack.extend((k, p, level + 1) for k, p in zip(kids, parts))
    return LabelTree.from_children(root, children)


def sample(tree, n, seed=1):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, tree.K))
    P = np.exp(logits)
    P /= P.sum(axis=1, keepdims=True)
    y = rng.integers(0, tree.K, size=n)
    groups = {"all": np.ones(n), **{f"g{k}": rng.integers(0, 2, size=n) for k in range(6)}}
    return P, y, groups


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    grid = [(30, 10**4), (30, 10**5)] + ([] if args.quick else [(30, 10**6), (1000, 10**4), (1000, 10**5)])
    print(f"{'K':>5} {'n':>8} {'fast s':>8} {'x read-once':>12} {'x argsorts':>11} {'ns/update':>10}")
    for K, n in grid:
        tree = depth_tree(K, 7)
        us = {f"top1@{d}": Top1AtDepth(tree, d) for d in range(3, 8)}
        P, y, groups = sample(tree, n)
        t_fast, res = timed(fast_audit, y, P, tree, us, subgroups=groups)
        t_read, _ = timed(np.sum, P)
        t_sort = sum(timed(np.argsort, P[:, k])[0] for k in range(len(us)))
        updates = n * len(groups) * sum(len(set(tree.path_ids(int(yi))[:-1]) & {tree.id(v) for v in u.relevant_nodes})
                                        for u in us.values() for yi in y[:200]) / 200
        print(f"{K:>5} {n:>8} {t_fast:>8.2f} {t_fast / t_read:>12.0f} {t_fast / t_sort:>11.1f} "
              f"{t_fast / updates * 1e9:>10.0f}", flush=True)
    # (c) the exact engine per atom at n = 10^4 (K = 30), against the fast path
    tree = depth_tree(30, 7)
    us = {f"top1@{d}": Top1AtDepth(tree, d) for d in range(3, 8)}
    P, y, groups = sample(tree, 10**4)
    exact_p = [[Fraction(x) for x in row] for row in P]
    for row in exact_p:
        row[-1] = 1 - sum(row[:-1])
    dist = FiniteDistribution.from_sample(tree, [int(v) for v in y], exact_p,
                                          subgroups={k: [int(x) for x in v] for k, v in groups.items()})
    t_exact, _ = timed(audit, dist, us)
    t_fast, _ = timed(fast_audit, y, P, tree, us, subgroups=groups)
    print(f"exact engine at n = 10^4, K = 30 (float-derived inputs): {t_exact:.1f} s, "
          f"{t_exact / t_fast:.0f}x the fast path per atom")


if __name__ == "__main__":
    main()
