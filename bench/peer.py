"""Binary UC against the public peer on its own metric: MCGrad's ``ecce``.  Not a
test: prints times and ratios measured in one run, the two alternating.

Binary UC with ``c = 1`` (a two-leaf tree, the utility ``1{y = pos}``) is MCGrad's ECCE: the
range of the cumulative differences ``sum (y_i - p_i) / n`` in score order.  For each n and
for scores with and without ties (three decimals), the best of ``--repeat`` runs of:

* ``huc numpy`` / ``huc numba``: ``huc_ref.fast.audit`` (tie blocks and the witness included);
* ``ecce``: ``mcgrad.metrics.ecce`` on the same arrays;
* ``argsort``: one ``np.argsort`` of the scores, for scale;

then each huc time over ecce's (the target: at most 1.0 at n = 10^6) and over the argsort,
and each size's time over the previous size's against ``n log n``'s ratio.

MCGrad brings heavy dependencies, so it is not an extra of this project; run this in an
environment of its own::

    python -m venv /tmp/peer && /tmp/peer/bin/pip install mcgrad -e '.[numba]'
    /tmp/peer/bin/python bench/peer.py            # n = 10^5 and 10^6 (--large adds 10^7)

Without mcgrad installed it says so and times huc and the argsort only.  ``--fresh`` measures
each size and kind of scores in a process of its own: after the 10^5 audits glibc hands a 10^6
audit's arrays out as fresh pages, whose first touch costs a page fault (docs/engines.md,
"Memory"; ``python bench/phases.py`` counts them), and the same arrays are then measured as
a process auditing only that size finds them.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.machine import describe  # noqa: E402
from bench.workloads import best_of  # noqa: E402
from huc_ref import LabelTree, class_indicator, fast  # noqa: E402


def data(n: int, ties: bool, seed: int = 0):
    """Scores (three decimals when ``ties``) and labels drawn from them."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.001, 0.999, n)
    if ties:
        p = np.round(p, 3).clip(0.001, 0.999)
    return p, (rng.random(n) < p).astype(np.int64)


def measure(n: int, ties: bool, repeat: int) -> dict:
    """The best of ``repeat`` times (seconds) of each contender on one size's arrays, alternating:
    ``sort`` (one argsort), each accelerator's audit, and ``ecce`` (None without mcgrad)."""
    try:
        from mcgrad.metrics import ecce
    except ImportError:
        ecce = None
    tree = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    us = {"pos": class_indicator(tree, "pos")}
    accelerators = ["numpy"] + (["numba"] if fast.numba_available() else [])
    p, y = data(n, ties)
    P = np.stack([1 - p, p], axis=1)
    for a in accelerators:  # compile and warm up outside the timing
        fast.audit(y[:100], P[:100], tree, us, accelerator=a)
    if ecce is not None and not ties:  # the same number (with ties ecce splits tie blocks: docs/guides/oracle.md)
        assert abs(ecce(y, p) - fast.audit(y, P, tree, us).uc.sup) < 1e-9
    times = {k: [] for k in ["sort"] + accelerators + (["ecce"] if ecce is not None else [])}
    for _ in range(repeat):  # alternating, so drift hits every contender alike
        times["sort"].append(best_of(1, partial(np.argsort, p)))
        for a in accelerators:
            times[a].append(best_of(1, partial(fast.audit, y, P, tree, us, accelerator=a)))
        if ecce is not None:
            times["ecce"].append(best_of(1, partial(ecce, y, p)))
    return {k: min(t) for k, t in times.items()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--large", action="store_true", help="also n = 10^7")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="n = 10^4 only, two runs (a smoke run)")
    ap.add_argument("--fresh", action="store_true",
                    help="each size and kind of scores in a process of its own (no size's memory left to the next)")
    ap.add_argument("--child", nargs=2, type=int, metavar=("N", "TIES"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    repeat = 2 if args.quick else args.repeat
    if args.child:
        print(json.dumps(measure(args.child[0], bool(args.child[1]), repeat)))
        return
    print(describe())
    accelerators = ["numpy"] + (["numba"] if fast.numba_available() else [])
    if importlib.util.find_spec("mcgrad") is None:
        print("mcgrad is not installed here: huc and the argsort only (see the module docstring)")
    if args.fresh:
        print("each size and kind of scores in a process of its own")
    sizes = [10**4] if args.quick else [10**5, 10**6] + ([10**7] if args.large else [])
    head = f"{'n':>9} {'ties':>5} {'argsort s':>10}" + "".join(f" {'huc ' + a + ' s':>13}" for a in accelerators)
    head += f" {'ecce s':>9}" + "".join(f" {a + '/ecce':>11} {a + '/sort':>11}" for a in accelerators)
    print(head)
    grown = {}
    for n in sizes:
        for ties in (False, True):
            if args.fresh:
                child = [sys.executable, __file__, "--child", str(n), str(int(ties)), "--repeat", str(repeat)]
                best = json.loads(subprocess.run(child, check=True, capture_output=True, text=True).stdout)
            else:
                best = measure(n, ties, repeat)
            sort, peer = best["sort"], best.get("ecce", float("nan"))
            line = f"{n:>9} {'yes' if ties else 'no':>5} {sort:>10.3f}"
            line += "".join(f" {best[a]:>13.3f}" for a in accelerators) + f" {peer:>9.3f}"
            line += "".join(f" {best[a] / peer:>11.2f} {best[a] / sort:>11.1f}" for a in accelerators)
            print(line, flush=True)
            grown.setdefault(ties, []).append((n, best))
    growth(grown, accelerators)


def growth(grown: dict, accelerators) -> None:
    """Each size's time over the previous size's, against ``n log n``'s ratio (the target: no
    faster growth than that) and the measured argsort's own (beyond the caches a sort itself
    grows faster than ``n log n`` on this machine)."""
    for ties, runs in grown.items():
        for (n0, t0), (n1, t1) in zip(runs, runs[1:]):
            bound = n1 * np.log(n1) / (n0 * np.log(n0))
            shown = ", ".join(f"{a} x{t1[a] / t0[a]:.1f}" for a in accelerators)
            verdict = "within" if all(t1[a] / t0[a] <= bound for a in accelerators) else "beyond"
            print(f"growth {n0:>9} -> {n1:>9} ({'ties' if ties else 'no ties'}): {shown}; "
                  f"n log n x{bound:.1f} ({verdict}); argsort x{t1['sort'] / t0['sort']:.1f}")


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
