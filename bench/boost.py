"""Benchmark of HUC-Boost.  Not a test: prints updates per second measured in one
run, at 30 and 50 significant digits (certified) against binary floats, for the J.1 toy
(one atom, eight leaves, three utilities) and a 1,000-atom population with K = 30.

Run: ``python bench/boost.py``.
"""

from __future__ import annotations

import random
import sys
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.j1_toy import ETA, TREE, UTILITIES  # noqa: E402
from huc_ref import BinaryDecision, FiniteDistribution, Table, Top1AtDepth  # noqa: E402
from huc_ref.boost import boost  # noqa: E402
from huc_ref.fast import boost as fast_boost  # noqa: E402
from tests.shapes import random_tree  # noqa: E402


def j1_case():
    p0 = [Fraction(1, 8)] * 8
    return FiniteDistribution(TREE, [{"p": p0, "eta": ETA}]), UTILITIES


def population_case(n=1000, K=30, seed=0):
    rng = random.Random(seed)
    tree = random_tree(K, rng)
    labels = tree.labels
    atoms = []
    for _ in range(n):
        raw = [rng.randint(1, 9) for _ in labels]
        eta = [rng.randint(0, 9) for _ in labels]
        atoms.append({"weight": Fraction(1, n), "p": [Fraction(x, sum(raw)) for x in raw],
                      "eta": [Fraction(x, sum(eta)) for x in eta]})
    us = {"table": Table(tree, [Fraction(rng.randint(-4, 4), 4) for _ in labels]),
          "top1": Top1AtDepth(tree, 1),
          "decision": BinaryDecision(tree, labels[: K // 4], labels[: K // 2], Fraction(1, 3))}
    return FiniteDistribution(tree, atoms), us


def rate(dist, us, updates, **kw):
    t = time.perf_counter()
    r = boost(dist, us, epsilon=Fraction(1, 10**6), max_updates=updates, **kw)
    return len(r.updates) / (time.perf_counter() - t), len(r.updates)


def main():
    print(f"{'workload':<28} {'arithmetic':<16} {'updates':>8} {'updates/s':>10} {'x slower than float':>20}")
    for label, (dist, us), updates in (("J.1 toy (1 atom, K=8)", j1_case(), 60),
                                       ("population (1000 atoms, K=30)", population_case(), 3)):
        base, _ = rate(dist, us, updates, arithmetic="float")
        print(f"{label:<28} {'float':<16} {updates:>8} {base:>10.2f} {1.0:>20.1f}", flush=True)
        t = time.perf_counter()
        r = fast_boost(dist, us, epsilon="1e-6", max_updates=updates * 10)
        fast = len(r.updates) / (time.perf_counter() - t)
        print(f"{label:<28} {'numpy fast path':<16} {len(r.updates):>8} {fast:>10.2f} {base / fast:>20.3f}",
              flush=True)
        for digits in (30, 50):
            r, done = rate(dist, us, updates, arithmetic="certified", digits=digits)
            print(f"{label:<28} {f'certified {digits} d':<16} {done:>8} {r:>10.2f} {base / r:>20.1f}", flush=True)


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
