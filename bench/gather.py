"""Benchmark of the gather into rank order (issue 17: the K = 30 audit's tables).  Not a test:
prints times and ratios measured in one run, the contenders alternating.

After each utility's sort, the compiled scan (``rank_scan``) reads every atom's terms in rank
order, so they are gathered first: rows of ``D`` float64 at random positions of an ``n x D``
array (the depth-7 tree of ``bench/fast_audit.py`` has ``D`` = 3..7), which beyond the caches
wait on memory.  For each ``n`` and ``D``, the best of ``--repeat`` runs of:

* ``np.take``: ``src.take(order, axis=0)``, what the audit did before;
* ``ahead N``: :func:`huc_ref.fast.kernels.gather_rows` asking for each row's first and last
  cache lines ``N`` ranks before reading it (``none``: never asked for; the audit uses
  ``AHEAD``);

then each time over ``np.take``'s.  Needs numba (without it the kernel is plain Python).

Run: ``python bench/gather.py`` (``--large``: n = 10^7 too; ``--quick``: n = 10^5 only).
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.machine import describe  # noqa: E402
from bench.workloads import best_of  # noqa: E402
from huc_ref.fast.kernels import AHEAD, COMPILED, gather_rows  # noqa: E402

DISTANCES = (None, 16, 32, 64, 128, 256)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--large", action="store_true", help="also n = 10^7")
    ap.add_argument("--quick", action="store_true", help="n = 10^5 only")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    print(describe())
    if not COMPILED:
        print("numba is not installed: gather_rows is plain Python here, nothing to measure")
        return
    print(f"AHEAD = {AHEAD}")
    sizes = [10**5] if args.quick else [10**5, 10**6] + ([10**7] if args.large else [])
    names = ["np.take"] + [f"ahead {'none' if d is None else d}" for d in DISTANCES]
    print(f"{'n':>9} {'D':>2} " + " ".join(f"{name + ' ms':>13}" for name in names))
    rng = np.random.default_rng(0)
    for n in sizes:
        order = rng.permutation(n)
        for D in (3, 6, 7):
            src = rng.normal(size=(n, D))
            out = np.empty((n, D))
            runs = [partial(src.take, order, axis=0)]
            runs += [partial(gather_rows, src, order, out, n if d is None else d) for d in DISTANCES]
            for run in runs:  # (compiles, warms the pages)
                run()
            times = [[] for _ in runs]
            for _ in range(args.repeat):  # alternating, so drift hits every contender alike
                for k, run in enumerate(runs):
                    times[k].append(best_of(1, run))
            best = [min(t) for t in times]
            line = f"{n:>9} {D:>2} " + " ".join(f"{1e3 * t:>13.2f}" for t in best)
            print(line + "   x np.take: " + ", ".join(f"{t / best[0]:.2f}" for t in best[1:]), flush=True)


if __name__ == "__main__":
    main()
