"""What the fast audit's determinism costs (docs/engines.md, "Determinism").  Not a test: prints ratios
measured in one run.

Each tie block's sum is the same bits whatever the order of its atoms
(``huc_ref.fast.numbers.block_sums``), so the audit is the same bits after permuting atoms.  For
binary UC at n = 10^6 with and without ties (three-decimal scores: nearly every atom tied), the
best of five alternating runs with order-free block sums and with numpy's order-dependent
``add.reduceat`` in their place, and their ratio.

Run: ``python bench/determinism.py`` (``--quick``: n = 10^4).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.workloads import best_of  # noqa: E402
from huc_ref import LabelTree, class_indicator, fast  # noqa: E402

intervals = importlib.import_module("huc_ref.fast.intervals")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    n = 10**4 if ap.parse_args(argv).quick else 10**6
    tree = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    us = {"pos": class_indicator(tree, "pos")}
    order_free = intervals.block_sums
    print(f"{'n':>9} {'ties':>5} {'order-free s':>12} {'reduceat s':>10} {'ratio':>7}")
    for ties in (False, True):
        rng = np.random.default_rng(0)
        p = rng.uniform(0.001, 0.999, n)
        p = np.round(p, 3).clip(0.001, 0.999) if ties else p
        y = (rng.random(n) < p).astype(np.int64)
        P = np.stack([1 - p, p], axis=1)
        run = partial(fast.audit, y, P, tree, us)
        run()
        on, off = [], []
        for _ in range(5):  # alternating
            intervals.block_sums = order_free
            on.append(best_of(1, run))
            intervals.block_sums = np.add.reduceat
            off.append(best_of(1, run))
        intervals.block_sums = order_free
        print(f"{n:>9} {'yes' if ties else 'no':>5} {min(on):>12.3f} {min(off):>10.3f} {min(on) / min(off):>7.2f}",
              flush=True)


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
