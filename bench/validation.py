"""Benchmark: input validation is linear in the number of names.  Not a test: prints the time
for n and 2n names, and the ratio (about 2 when linear, 4 when quadratic), measured in one run.

* subgroup names of a FiniteDistribution (duplicates checked with a set);
* the nodes of an aggregated utility's ``S`` (membership checked by the tree's dictionary).

Run: ``python bench/validation.py`` (``--n N`` for the smaller size, default 20,000).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from huc_ref import Aggregated, FiniteDistribution, LabelTree, Table  # noqa: E402


def subgroups(n: int) -> float:
    tree = LabelTree.from_children("r", {"r": ["a", "b"]})
    start = time.perf_counter()
    FiniteDistribution(tree, [{"p": ["1/2", "1/2"], "label": "a", "c": [1] * n}], [f"g{i}" for i in range(n)])
    return time.perf_counter() - start


def aggregated_s(n: int) -> float:
    kids = {"r": [f"n{i}" for i in range(n)], **{f"n{i}": [f"l{i}a", f"l{i}b"] for i in range(n)}}
    tree = LabelTree.from_children("r", kids)
    base = Table(tree, [0] * tree.K)
    start = time.perf_counter()
    Aggregated(base, ["r"] + [f"n{i}" for i in range(n)])
    return time.perf_counter() - start


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    n = ap.parse_args(argv).n
    for name, fn in (("subgroup names", subgroups), ("names in S", aggregated_s)):
        small, large = fn(n), fn(2 * n)
        print(f"{name}: n = {n}: {small:.3f} s; 2n: {large:.3f} s; ratio {large / small:.2f} (linear: about 2)")


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
