"""Benchmark of ``FastTree.level_sums`` (C.1's subtree masses, numpy's sample pass).
Not a test: prints times and ratios measured in one run.

The subtree sums begin by turning a chunk of predictions (rows of ``K`` numbers) into one row of
``S`` per leaf: a transpose.  numpy copies a transposed chunk leaf by leaf, reading every row of
the chunk once per leaf, from memory when the chunk is larger than the caches; in pieces of
``huc_ref.fast.tree._TRANSPOSE_ROWS`` rows each piece is read from the cache.  For the depth-7
trees of ``bench/fast_audit.py`` (K = 30 and K = 1,000) on one chunk of the sample pass
(``fast.audit.chunk_rows`` rows), this times the whole ``level_sums`` with pieces of 64, 256
(the default) and 1,024 rows and with the whole chunk at once, alternating, the best of
``--repeat``; each ratio is to the whole chunk's time.

Run: ``python bench/level_sums.py`` (``--quick``: fewer repeats).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import huc_ref.fast.tree as fast_tree  # noqa: E402
from bench.fast_audit import depth_tree, sample  # noqa: E402
from bench.machine import describe  # noqa: E402
from huc_ref.fast.audit import chunk_rows  # noqa: E402

PIECES = (64, 256, 1024, None)  # None: the whole chunk at once


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--repeat", type=int, default=7, help="runs of each figure, alternating (the best)")
    args = ap.parse_args(argv)
    repeat = 2 if args.quick else args.repeat
    print(describe())
    print(f"{'K':>5} {'rows':>7}" + "".join(f" {('whole' if p is None else p):>9} {'ratio':>6}" for p in PIECES))
    default = fast_tree._TRANSPOSE_ROWS
    try:
        for K in (30, 1000):
            tree = depth_tree(K, 7)
            ft = fast_tree.FastTree(tree)
            rows = chunk_rows(10**6, K)
            P = sample(tree, rows)[0]
            X = P if ft.label_order is None else np.ascontiguousarray(P[:, ft.label_order])
            out = np.empty((ft.n_nodes, rows))
            best = dict.fromkeys(PIECES, float("inf"))
            for _ in range(repeat):
                for p in PIECES:
                    fast_tree._TRANSPOSE_ROWS = rows if p is None else p
                    t = time.perf_counter()
                    ft.level_sums(X, dfs=True, out=out)
                    best[p] = min(best[p], time.perf_counter() - t)
            whole = best[None]
            print(f"{K:>5} {rows:>7}" + "".join(f" {1e3 * best[p]:>7.2f}ms {best[p] / whole:>6.2f}" for p in PIECES))
    finally:
        fast_tree._TRANSPOSE_ROWS = default
    print(f"(default: {default} rows a piece)")


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
