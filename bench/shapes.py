"""The fast audit on the shapes users have.  Not a test: prints times and ratios
measured in one run.

Four workloads, each audited by ``huc_ref.fast.audit`` with numpy and, where installed, numba:

* ``binary 7 groups``: 10^6 rows of a binary classifier (scores uniform in (0.001, 0.999),
  labels drawn from them), a class indicator, everyone and six random halves as subgroups;
* ``flat 100``: 2 x 10^5 rows of a 100-class softmax whose first half of entries lie near
  ``1e-296`` (``tests.shapes.wide_softmax``'s rows, labels drawn from them), top-1 and top-5
  correctness and a class indicator, everyone and four random halves;
* ``10 x 10``: the same rows on ten groups of ten classes, with top-1 correctness at depth 1;
* ``30 children``: 3 x 10^5 rows of 32 classes, 30 of them children of one node (the others its
  sibling's), the same utilities as ``10 x 10``;
* ``10 x 10 others``: the rows of ``10 x 10`` with the other families: a rank utility (``theta``
  falling from 1 to 0.01), a decision among 20 actions (payoffs -1, 0, 1 drawn), a binary decision
  and a subtree indicator.

Each figure is the best of ``--repeat`` audits in one process (the engines alternating), ``x
read`` its ratio to numpy summing the predictions once.  With ``--against REV`` the code of git
revision ``REV`` (a temporary worktree) is measured too, in processes alternating with this
checkout's (``--rounds`` each, the best), and each of this code's times over that revision's.

Run: ``python bench/shapes.py`` (``--quick``: a tenth of the rows; ``--against 6a51c50``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from contextlib import nullcontext
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
SHAPES = ("binary 7 groups", "flat 100", "10 x 10", "30 children", "10 x 10 others")


def workload(shape: str, scale: float):
    """``(y, P, tree, utilities, subgroups)`` of one shape, ``scale`` times its rows."""
    import numpy as np

    from huc_ref import BinaryDecision, Decision, LabelTree, Rank, Subtree, Top1AtDepth, TopK, class_indicator
    from tests.shapes import wide_softmax
    rng = np.random.default_rng(0)
    if shape == "binary 7 groups":
        n = int(10**6 * scale)
        p = rng.uniform(0.001, 0.999, n)
        tree = LabelTree.from_children("r", {"r": ["neg", "pos"]})
        y, P = (rng.random(n) < p).astype(np.int64), np.stack([1 - p, p], axis=1)
        groups = {"all": np.ones(n), **{f"g{k}": rng.integers(0, 2, n).astype(float) for k in range(6)}}
        return y, P, tree, {"pos": class_indicator(tree, "pos")}, groups
    K, n = (32, int(3 * 10**5 * scale)) if shape == "30 children" else (100, int(2 * 10**5 * scale))
    P, onehot = wide_softmax(n, K, seed=1)
    labels = [f"c{j}" for j in range(K)]
    if shape == "flat 100":
        tree = LabelTree.from_children("r", {"r": labels})
    elif shape.startswith("10 x 10"):
        tree = LabelTree.from_children("r", {"r": [f"g{j}" for j in range(10)],
                                             **{f"g{j}": labels[10 * j:10 * j + 10] for j in range(10)}})
    else:
        tree = LabelTree.from_children("r", {"r": ["wide", "pair"], "wide": labels[:30], "pair": labels[30:]})
    us = {"top1": TopK(tree, 1), "top5": TopK(tree, 5), "first": class_indicator(tree, labels[0])}
    if shape != "flat 100":
        us["depth1"] = Top1AtDepth(tree, 1)
    if shape == "10 x 10 others":
        us = {"rank": Rank(tree, [Fraction(100 - r, 100) for r in range(K)]),
              "decision": Decision(tree, {f"a{j}": rng.integers(-1, 2, K).tolist() for j in range(20)},
                                   [f"a{j}" for j in range(20)]),
              "binary": BinaryDecision(tree, labels[:30], labels[:60], "1/3"), "subtree": Subtree(tree, "g3")}
    groups = {"all": np.ones(n), **{f"g{k}": rng.integers(0, 2, n).astype(float) for k in range(4)}}
    return onehot.argmax(axis=1), P, tree, us, groups


def measure(root: Path, scale: float, repeat: int) -> dict:
    """Per shape and engine, the best audit time (seconds) of the code under ``root``, and the read."""
    sys.path.insert(0, str(root))
    sys.path.insert(1, str(HERE))  # (this checkout's workloads, whatever the code measured)
    from huc_ref import fast
    engines = ["numpy"] + (["numba"] if fast.numba_available() else [])
    out = {}
    for shape in SHAPES:
        y, P, tree, us, groups = workload(shape, scale)
        for e in engines:  # (compiles the kernels, warms the allocator)
            fast.audit(y, P, tree, us, subgroups=groups, accelerator=e)
        best = dict.fromkeys(engines + ["read"], float("inf"))
        for _ in range(repeat):
            for e in engines:
                t = time.perf_counter()
                fast.audit(y, P, tree, us, subgroups=groups, accelerator=e)
                best[e] = min(best[e], time.perf_counter() - t)
            t = time.perf_counter()
            P.sum()
            best["read"] = min(best["read"], time.perf_counter() - t)
        out[shape] = best
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a tenth of the rows")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--against", metavar="REV", help="a git revision measured in processes alternating with this code")
    ap.add_argument("--rounds", type=int, default=2, help="with --against: processes of each, alternating")
    ap.add_argument("--child", metavar="ROOT", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    scale = 0.1 if args.quick else 1.0
    if args.child:
        print(json.dumps(measure(Path(args.child), scale, args.repeat)))
        return
    sys.path.insert(0, str(HERE))
    from bench.machine import describe
    from bench.workloads import checkout
    print(describe())
    with checkout(HERE, args.against) if args.against else nullcontext() as old:
        roots = [("this", HERE)] + ([(args.against, old)] if args.against else [])
        found = {label: [] for label, _ in roots}
        for _ in range(args.rounds if args.against else 1):
            for label, root in roots:
                child = [sys.executable, __file__, "--child", str(root), "--repeat", str(args.repeat)]
                child += ["--quick"] if args.quick else []
                found[label].append(json.loads(subprocess.run(child, check=True, capture_output=True, text=True,
                                                              cwd=root).stdout))
    best = {label: {s: {k: min(r[s][k] for r in runs) for k in runs[0][s]} for s in SHAPES}
            for label, runs in found.items()}
    engines = [k for k in best["this"][SHAPES[0]] if k != "read"]
    print(f"{'shape':>16} {'code':>9}" + "".join(f" {e + ' s':>9} {'x read':>7}" for e in engines))
    for shape in SHAPES:
        for label, _ in roots:
            b = best[label][shape]
            print(f"{shape:>16} {label:>9}" + "".join(f" {b[e]:>9.3f} {b[e] / b['read']:>7.1f}" for e in engines))
        if args.against:
            this, base = best["this"][shape], best[args.against][shape]
            print(f"{'':>16} {'ratio':>9}" + "".join(f" {this[e] / base[e]:>9.2f} {'':>7}" for e in engines))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
