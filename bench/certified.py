"""Benchmark of certified boosting in float64.  Not a test: prints times
measured in one run.

The issue's workload: a 1,000-atom population with K = 30 and three utilities
(``bench.boost.population_case``), HUC-Boost (and UC-Boost) with ``epsilon = 10^-6`` for a
fixed number of updates, on

* ``float64``: :func:`huc_ref.fast.boost.boost` (uncertified);
* ``certified float64``: :func:`huc_ref.fast.boost.boost` with the certified context
  (:class:`huc_ref.fast.context.Certified`: decisions and Theorem 3.5's inequalities certified by
  error bounds, Arb, and the certified engine where they cannot decide);
* ``certified 30 d``: the certified engine, :func:`huc_ref.boost.boost` (``--engine-updates``
  updates only, as one takes about a minute here).

Each line: updates made, seconds for the whole run (set-up included) and per update, the
ratio to float64 (the issue's target: at most 50 for the certified run) and how many choices
went to the certified engine; below it, what float64's bounds left undecided and Arb decided
(the order of the largest candidates, whether the largest exceeds epsilon, the witness
interval; ``huc_ref.fast.context.REFINE_BITS``), and why the certified engine chose.

Run: ``python bench/certified.py`` (``--quick``: 100 atoms, K = 10; ``--million``: instead, App.
D.1's three atoms moved by ``3^-2100000``, ``tests.shapes.million_digits``, whose scores differ
by about 10^-1000000: every comparison of two moved atoms is decided by
:func:`huc_ref.boost._exp_sign`, e.g. ``--million --updates 8 --engine-updates 8``; ``--ties``:
instead, ``tests.shapes.tied_sample``, 40 softmax rows on 100 classes of which a third repeat,
with top-3 correctness: the exact ties of scores and of entries a decision tree's predictions
have, e.g. ``--ties --updates 27 --engine-updates 27``; ``--decision-tree``: a depth-6 decision
tree's predictions on scikit-learn's digits, ``tests.shapes.decision_tree_sample``).

``--enclosures``: instead, Arb's ``e^z`` of 20,000 adaptive-run logits read as 2,300-bit ``fmpq``
and as exact dyadics (``huc_ref.fast.enclosures.exact_ball``): microseconds an ``exp`` and their ratio.

``--samples N``: instead, ``N`` drawn decision-tree runs (``tests.shapes.smoothed_run``, seeds
``--seed`` on: a smoothed sample on one of six trees, top-1 at random depths with a table, a rank
and a binary decision drawn in, HUC-Boost or UC-Boost), 6 greedy updates each; before each, the
choice is compared with the certified engine's on the same exact state: the choices, how many
differ (0 expected), and how many certified float64 left to that engine, by reason.  Minutes:
``--samples 1000 --seed 50000``.

``--fit PASSES``: instead, HUC-Boost's recalibration of a decision tree's predictions on digits
(``tests.shapes.decision_tree_fit``: 449 calibration rows, 17 distinct), ``HUCBoost`` with
``engine="fast"`` and ``engine="exact"`` (certified float64 with python-flint) at ``max_passes =
PASSES`` (K.1's budget; 100 is K.1's own): each fit's seconds, its updates, the ratio, and the
test HUC of both, e.g. ``--fit 2`` (seconds) or ``--fit 100`` (minutes).
"""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.boost import population_case  # noqa: E402
from bench.machine import describe  # noqa: E402
from huc_ref.boost import Judge  # noqa: E402
from huc_ref.boost import boost as engine_boost  # noqa: E402
from huc_ref.fast.boost import FloatBackend  # noqa: E402
from huc_ref.fast.boost import boost as float_boost  # noqa: E402
from huc_ref.fast.context import Certified  # noqa: E402
from huc_ref.fast.enclosures import SCALE_BITS, exact_ball  # noqa: E402
from tests.shapes import (  # noqa: E402
    decision_tree_fit,
    decision_tree_sample,
    million_digits,
    smoothed_run,
    tied_sample,
)


def bounded(dist, us, method, updates):
    """The certified float64 run, keeping its context (for the count of fallbacks)."""
    numbers = Certified(Judge, 30)
    result = float_boost(dist, us, method=method, epsilon="1e-6", max_updates=updates, numbers=numbers)
    return result, numbers.fallbacks, numbers.refined


def timed(f, *args, **kw):
    t = time.perf_counter()
    out = f(*args, **kw)
    return out, time.perf_counter() - t


def fits(passes: int) -> None:
    """``HUCBoost`` on ``tests.shapes.decision_tree_fit``, float64 and certified, one fit each."""
    from huc_ref import fast
    from huc_ref.calibration import HUCBoost
    tree, us, labels, P, y, P_test, y_test = decision_tree_fit()
    print(f"a decision tree's predictions (tests.shapes.decision_tree_fit): n = {len(y)} "
          f"({len({tuple(r) for r in P.tolist()})} distinct rows), K = {tree.K}, |U| = {len(us)}, "
          f"max_passes = {passes}")
    print(f"{'engine':<8} {'fit s':>8} {'updates':>8} {'x fast':>8} {'test HUC':>20}")
    base = None
    for engine in ("fast", "exact"):
        model, t = timed(HUCBoost(tree, us, labels=labels, engine=engine, max_passes=passes).fit, P, y)
        base = base or t
        huc = fast.audit(y_test, model.predict_proba(P_test), tree, us).huc.sup
        print(f"{engine:<8} {t:>8.2f} {model.n_updates_:>8} {t / base:>8.1f} {huc:>20.17f}", flush=True)


def samples(count: int, seed: int, updates: int = 6) -> None:
    """``count`` runs of ``tests.shapes.smoothed_run`` from ``seed`` on: every choice of certified
    float64 against the certified engine's on the same exact state (``CertifiedChoice.judged``),
    and the choices left to that engine (``fallbacks``), by reason."""
    from collections import Counter
    choices, differ, falls, refined = 0, 0, Counter(), Counter()
    t = time.perf_counter()
    for s in range(seed, seed + count):
        dist, us, method = smoothed_run(s)
        backend = FloatBackend.from_distribution(dist, us, method, Fraction(1, 10 ** 6), Certified(Judge, 30))
        for _ in range(updates):
            mine, theirs = backend.choose(None), backend.state.choice.judged(None)
            choices += 1
            if mine is None or theirs is None:
                differ += (mine is None) != (theirs is None)
                break
            same = mine.exceeds == theirs.exceeds and (not mine.exceeds or (  # (a run that ends: nothing chosen)
                (mine.subgroup, mine.utility, mine.node, sorted(mine.members.tolist()))
                == (theirs.subgroup, theirs.utility, theirs.node, sorted(theirs.members.tolist()))))
            differ += not same
            if not (same and mine.exceeds):
                break
            backend.update(mine, None, None)
        falls.update(backend.numbers.fallbacks)
        refined.update(backend.numbers.refined)
    print(f"{count} runs (seeds {seed}..{seed + count - 1}), {choices} choices in {time.perf_counter() - t:.0f} s: "
          f"{differ} differ from the certified engine's, {sum(falls.values())} left to it")
    for reason, n in falls.most_common():
        print(f"  fallback: {reason} ({n}x)")
    for reason, n in refined.most_common():
        print(f"  decided in Arb: {reason} ({n}x)")


def enclosures(count: int = 20000, seed: int = 0) -> None:
    """Arb's ``e^z`` of ``count`` adaptive-run logits (integers times ``2^-SCALE_BITS``, below 1 in
    size), the logit read as a 2,300-bit ``fmpq`` and as an exact dyadic
    (:func:`huc_ref.fast.enclosures.exact_ball`), alternating, best of three: microseconds an ``exp`` and the ratio."""
    import random

    import flint
    rng, S = random.Random(seed), SCALE_BITS
    logits = [rng.randrange(-(1 << S) // 3, (1 << S) // 3) for _ in range(count)]
    ways = {"fmpq": lambda n: flint.arb(flint.fmpq(n, 1 << S)),
            "dyadic": lambda n: exact_ball(flint, n, 1 << S)}
    best = {name: float("inf") for name in ways}
    for _ in range(3):
        for name, ball in ways.items():
            with flint.ctx.workprec(80):
                t = time.perf_counter()
                for n in logits:
                    ball(n).exp()
                best[name] = min(best[name], (time.perf_counter() - t) / count * 1e6)
    print(f"e^z of {count} logits of {S} bits at 80 bits: fmpq {best['fmpq']:.2f} us, dyadic "
          f"{best['dyadic']:.2f} us, ratio {best['fmpq'] / best['dyadic']:.2f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--updates", type=int, default=30)
    ap.add_argument("--engine-updates", type=int, default=1, help="updates of the certified engine (0: skip)")
    ap.add_argument("--million", action="store_true", help="the million-digit case instead (bench.workloads)")
    ap.add_argument("--ties", action="store_true", help="a tied calibration sample instead (bench.workloads)")
    ap.add_argument("--decision-tree", action="store_true",
                    help="a decision tree's predictions on scikit-learn's digits instead (bench.workloads)")
    ap.add_argument("--fit", type=int, metavar="PASSES",
                    help="HUCBoost's fits on a decision tree's predictions instead (bench.workloads)")
    ap.add_argument("--samples", type=int, metavar="N", help="instead, N drawn decision-tree runs against the engine")
    ap.add_argument("--seed", type=int, default=50000, help="the first seed of --samples (default 50000)")
    ap.add_argument("--enclosures", action="store_true",
                    help="instead, Arb's e^z of logits read as fmpq against as exact dyadics")
    args = ap.parse_args(argv)
    print(describe())
    if args.enclosures:
        return enclosures()
    if args.fit:
        return fits(args.fit)
    if args.samples:
        return samples(args.samples, args.seed)
    if args.million:
        dist, us = million_digits()
        print(f"App. D.1's atoms moved by 3^-2100000: n = {dist.n}, K = {dist.tree.K}, |U| = {len(us)}")
    elif args.ties:
        dist, us = tied_sample()
        print(f"a tied sample (tests.shapes.tied_sample): n = {dist.n}, K = {dist.tree.K}, |U| = {len(us)}")
    elif args.decision_tree:
        dist, us = decision_tree_sample()
        print(f"a decision tree's predictions (tests.shapes.decision_tree_sample): n = {dist.n}, K = {dist.tree.K}, "
              f"|U| = {len(us)}")
    else:
        n, K = (100, 10) if args.quick else (1000, 30)
        dist, us = population_case(n, K)
        print(f"n = {n}, K = {K}, |U| = {len(us)}")
    print(f"{'method':<6} {'arithmetic':<20} {'updates':>8} {'run s':>8} {'s/update':>9} {'x float64':>10} "
          f"{'fallbacks':>10}")
    for method in ("huc", "uc"):
        r, t_float = timed(float_boost, dist, us, method=method, epsilon="1e-6", max_updates=args.updates)
        base = t_float / max(1, len(r.updates))
        print(f"{method:<6} {'float64':<20} {len(r.updates):>8} {t_float:>8.2f} {base:>9.4f} {1.0:>10.1f} {'':>10}",
              flush=True)
        (r, falls, refined), t = timed(bounded, dist, us, method, args.updates)
        per = t / max(1, len(r.updates))
        print(f"{method:<6} {'certified float64':<20} {len(r.updates):>8} {t:>8.2f} {per:>9.4f} {per / base:>10.1f} "
              f"{sum(falls.values()):>10}", flush=True)
        for reason, count in falls.items():
            print(f"{'':<6} fallback: {reason} ({count}x)")
        for reason, count in refined.items():
            print(f"{'':<6} decided in Arb: {reason} ({count}x)")
        if args.engine_updates:
            r, t = timed(engine_boost, dist, us, method=method, epsilon="1e-6", max_updates=args.engine_updates)
            per = t / max(1, len(r.updates))
            print(f"{method:<6} {'certified 30 d':<20} {len(r.updates):>8} {t:>8.2f} {per:>9.4f} {per / base:>10.1f} "
                  f"{'':>10}", flush=True)


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
