"""The deep-tree numbers of docs/reference/errors.md ("Work is bounded").  Not a test: prints times and
ratios measured in one run.

A caterpillar (every internal node: one leaf and one internal child) of depth ``D``:

* the fast audit of 2 atoms (top-1 correctness, both accelerators): wall time and the peak memory
  it allocates (tracemalloc, which numpy reports to), beside the ``(D + 1) x K`` table of eight-byte
  entries a depth-by-labels layout would need;
* 3 updates of HUC-Boost, certified engine against the float64 engine, and their ratio.

Run: ``python bench/deep_trees.py`` (depth 20,000 for the audit, 1,000 for boosting; ``--quick``:
2,000 and 200).
"""

from __future__ import annotations

import argparse
import sys
import tracemalloc
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.workloads import timed  # noqa: E402
from huc_ref import FiniteDistribution, LabelTree, TopK, boost, fast  # noqa: E402


def caterpillar(depth: int) -> LabelTree:
    kids = {f"c{i}": [f"c{i + 1}", f"l{i}"] for i in range(depth)}
    kids[f"c{depth}"] = ["x", "y"]
    return LabelTree.from_children("c0", kids)


def two_atoms(tree: LabelTree) -> FiniteDistribution:
    K = tree.K
    rows = [[Fraction(1, K)] * K, [Fraction(2, 3 * (K - 1))] * (K - 1) + [Fraction(1, 3)]]
    return FiniteDistribution.from_sample(tree, [tree.labels[5], tree.labels[-1]], rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    quick = ap.parse_args(argv).quick
    depth = 2_000 if quick else 20_000
    tree = caterpillar(depth)
    d = two_atoms(tree)
    P = np.array([[float(x) for x in a.p] for a in d.atoms])
    labels = [tree.labels[5], tree.labels[-1]]
    us = {"u": TopK(tree, 1)}
    table_mib = 8 * (depth + 2) * tree.K / 2**20
    print(f"fast audit, caterpillar of depth {depth} (K = {tree.K}; a depth x labels table: {table_mib:,.0f} MiB)")
    for acc in ["numpy"] + (["numba"] if fast.numba_available() else []):
        fast.audit(labels, P, tree, us, accelerator=acc)  # compile, warm
        seconds, _ = timed(fast.audit, labels, P, tree, us, accelerator=acc)
        tracemalloc.start()
        fast.audit(labels, P, tree, us, accelerator=acc)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        print(f"  {acc:>6}: {seconds:6.2f} s, peak {peak:6.1f} MiB")
    depth = 200 if quick else 1_000
    tree = caterpillar(depth)
    d, us = two_atoms(tree), {"u": TopK(tree, 1)}
    times = {engine: timed(boost, d, us, engine=engine, max_updates=3, epsilon="1/100")[0]
             for engine in ("exact", "fast")}
    print(f"3 HUC-Boost updates, caterpillar of depth {depth}: certified {times['exact']:.2f} s, "
          f"float64 {times['fast']:.2f} s, ratio {times['exact'] / times['fast']:.1f}")


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
