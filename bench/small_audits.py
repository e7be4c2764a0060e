"""Small audits and exact conversions.  Not a test: prints
ratios measured in one run.

* numpy's scan of every subgroup at once (``Rows._every_subgroup``, below
  ``intervals._ALL_SUBGROUPS`` numbers) against one subgroup at a time: whole fast audits of the
  K = 30 benchmark workload (``bench/fast_audit.py``: depth 7, |U| = 5, |C| = 7) at n atoms, the
  two ways alternating, each the best of ``--repeat`` runs.  Above the cap the first way is not
  taken; it is forced here (the cap raised) to show why the cap is where it is.
* ``fast.numbers.floats`` (exact rationals into float64) per entry, on 60,000 Fractions.

Run: ``python bench/small_audits.py`` (``--quick``: n = 300 and 1,000 only).
"""

from __future__ import annotations

import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import huc_ref.fast.intervals as intervals  # noqa: E402
from bench.fast_audit import depth_tree, sample, utilities  # noqa: E402
from bench.machine import options  # noqa: E402
from huc_ref import fast  # noqa: E402
from huc_ref.fast.numbers import floats  # noqa: E402


def main(argv=None) -> None:
    args = options(__doc__, argv, repeat=5)
    tree = depth_tree(30, 7)
    us = utilities(tree)
    cap = intervals._ALL_SUBGROUPS
    print(f"K = 30, |U| = 5, |C| = 7; every subgroup at once up to {cap} numbers (forced above it here)")
    print(f"{'n':>7} {'at once ms':>11} {'one at a time ms':>17} {'ratio':>6}")
    for n in ((300, 1000) if args.quick else (300, 1000, 3000, 5000, 10000)):
        P, y, groups = sample(tree, n)
        best = {}
        try:
            for _ in range(args.repeat):
                for limit in (2**30, 0):
                    intervals._ALL_SUBGROUPS = limit
                    t = time.perf_counter()
                    fast.audit(y, P, tree, us, subgroups=groups)
                    best[limit] = min(best.get(limit, np.inf), time.perf_counter() - t)
        finally:
            intervals._ALL_SUBGROUPS = cap
        print(f"{n:>7} {best[2**30] * 1e3:>11.2f} {best[0] * 1e3:>17.2f} {best[2**30] / best[0]:>6.2f}")
    rows = [[Fraction(x) for x in r] for r in np.random.default_rng(0).dirichlet(np.ones(30), 2000)]
    t = min(_timed(lambda: floats(rows, "p[{}][{}]")) for _ in range(args.repeat))
    print(f"fast.numbers.floats: {t / 60000 * 1e9:.0f} ns an entry (60,000 Fractions)")


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
