"""The sample pass's chunk size (``huc_ref.fast.audit.CHUNK``).  Not a test: prints times
measured in one run.

For K = 30 (n = 10^6) and K = 1,000 (n = 2 x 10^5), depth-7 trees, |U| = 5, |C| = 7 (the
workload of ``bench/fast_audit.py``): the whole fast audit with chunks of 2^18 .. 2^22 numbers,
each engine, every figure the best of ``--repeat`` runs with the chunk sizes alternating, and
its ratio to the audit at the default chunk.

Run: ``python bench/chunks.py`` (``--quick``: n / 10).
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fast_audit import depth_tree, engines, sample, utilities  # noqa: E402
from bench.workloads import timed  # noqa: E402

passes = importlib.import_module("huc_ref.fast.audit")  # (the module: huc_ref.fast.audit is the function)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=4, help="runs of each figure, alternating (the best is printed)")
    args = ap.parse_args(argv)
    default, powers = passes.CHUNK, (18, 19, 20, 21, 22)
    found = engines()
    print(f"default CHUNK = 2**{default.bit_length() - 1}, THREADS = {passes.THREADS}")
    print(f"{'K':>5} {'n':>8} {'engine':>6} " + " ".join(f"{'2^' + str(p) + ' s':>9}" for p in powers) + "  ratios")
    for K, n in ((30, 10**6), (1000, 2 * 10**5)):
        n //= 10 if args.quick else 1
        tree = depth_tree(K, 7)
        us = utilities(tree)
        P, y, groups = sample(tree, n)
        for run in found.values():  # (compiles the kernels before timing)
            run(y[:100], P[:100], tree, us)
        best = {}
        try:
            for _ in range(args.repeat):
                for p in powers:
                    passes.CHUNK = 2**p
                    for name, run in found.items():
                        t, _ = timed(run, y, P, tree, us, subgroups=groups)
                        best[name, p] = min(best.get((name, p), math.inf), t)
        finally:
            passes.CHUNK = default
        for name in found:
            base = best[name, default.bit_length() - 1]
            print(f"{K:>5} {n:>8} {name:>6} " + " ".join(f"{best[name, p]:>9.3f}" for p in powers) + "  "
                  + " ".join(f"{best[name, p] / base:.2f}" for p in powers))
        del P


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
