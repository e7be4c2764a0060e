"""Benchmark of the compiled scan's reads in rank order (the K = 30 audit's tables).  Not a
test: prints times and ratios measured in one run, the contenders alternating.

After each utility's sort, the compiled scan (``rank_scan``) reads every atom in rank order: its
residual, key (its label and its row of the table of distinct rows of weights in one integer,
``kernels.lane_keys``) and terms (a row of ``D`` = 3..7 float64 on the depth-7 tree of
``bench/fast_audit.py``), at random positions
of arrays that beyond the caches wait on memory.  On the arrays of the K = 30 audit (each
utility's as the audit passes them to the scan), for each ``n`` the best of ``--repeat`` runs of
the five utilities' scans:

* ``gathered``: every array copied into rank order by ``np.take`` first, then the scan reads them
  in order (the alternative to reading the atoms where they lie);
* ``ahead N``: the scan reads each atom where it lies, asking for its lines ``N`` ranks before
  (``none``: never asked for; the audit uses ``AHEAD``);

then each time over ``gathered``'s.  Needs numba (without it the kernel is plain Python).

Run: ``python bench/gather.py`` (``--large``: n = 10^7 too; ``--quick``: n = 10^5 only).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.kernels_against import record  # noqa: E402
from bench.machine import describe  # noqa: E402
from bench.workloads import best_of  # noqa: E402

kernels = importlib.import_module("huc_ref.fast.kernels")
DISTANCES = (None, 16, 32, 64, 128, 256)


def scan_inputs(n: int) -> list:
    """The arguments of every ``rank_scan`` call of one K = 30 audit of ``n`` atoms (numba)."""
    return record(n)["rank_scan"]


def gathered(call) -> tuple:
    """``call``'s arrays copied into rank order (the scan then reads ranks ``0 .. n - 1``)."""
    block, order, residual, key, terms, col_table, Wl, shift, *rest = call
    Wl = Wl if shift else Wl.take(order, axis=0)  # (shift 0: each atom's own row of weights)
    return (block, np.arange(len(order)), residual.take(order), key.take(order), terms.take(order, axis=1),
            col_table, Wl, shift, *rest)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--large", action="store_true", help="also n = 10^7")
    ap.add_argument("--quick", action="store_true", help="n = 10^5 only")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    print(describe())
    if not kernels.COMPILED:
        print("numba is not installed: rank_scan is plain Python here, nothing to measure")
        return
    print(f"AHEAD = {kernels.AHEAD}; K = 30, |U| = 5, |C| = 7: the five utilities' scans")
    sizes = [10**5] if args.quick else [10**5, 10**6] + ([10**7] if args.large else [])
    names = ["gathered"] + [f"ahead {'none' if d is None else d}" for d in DISTANCES]
    print(f"{'n':>9} " + " ".join(f"{name + ' ms':>13}" for name in names))
    for n in sizes:
        calls = scan_inputs(n)

        def gather_then_scan(calls=calls, n=n):
            for call in calls:
                kernels.rank_scan(*gathered(call), n)  # (in order: nothing to ask for ahead)

        def in_place(d, calls=calls, n=n):
            return lambda: [kernels.rank_scan(*call[:11], n if d is None else d) for call in calls]
        runs = [gather_then_scan] + [in_place(d) for d in DISTANCES]
        for run in runs:  # (compiles, warms the pages)
            run()
        times = [[] for _ in runs]
        for _ in range(args.repeat):  # alternating, so drift hits every contender alike
            for k, run in enumerate(runs):
                times[k].append(best_of(1, run))
        best = [min(t) for t in times]
        line = f"{n:>9} " + " ".join(f"{1e3 * t:>13.2f}" for t in best)
        print(line + "   x gathered: " + ", ".join(f"{t / best[0]:.2f}" for t in best[1:]), flush=True)


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
