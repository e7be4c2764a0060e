"""HUC-Boost against UC-Boost on one population (Sec. 3.2, Theorem 3.5, App. E).

    "UC-Boost adjusts all leaf logits globally, whereas HUC-Boost changes branch logits at
    one internal node per update." (Sec. 5.2)  "Algorithm 1 decreases population log loss
    monotonically.  It terminates within T <= ceil(2 L_log(f_0) / eps^2) updates and
    returns f_T satisfying HUC(f_T; C, U) <= eps." (Theorem 3.5)

A population on the eight-leaf tree of App. J.1: four groups of patients with different
(miscalibrated) predictions, the true law of docs/specification.md §7, the three decision utilities and two
subgroups.  Both boosts run with certified arithmetic; the trajectories (UC, HUC and log
loss after every update) are replayed from the recorded rules.  The log-loss panel shows
each update's decrease against Theorem 3.5's guarantee, at least eps^2 / 2 per update.

    python examples/boost_trajectories.py [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.j1_toy import ETA, TREE, UTILITIES  # noqa: E402
from huc_ref import FiniteDistribution, HUCError  # noqa: E402
from huc_ref.boost import boost  # noqa: E402
from huc_ref.replay import trajectory  # noqa: E402

GROUPS = [  # (weight, c = (all, "older"), prediction): four miscalibrated constant predictors
    ("1/4", [1, 1], ["1/10", "1/10", "1/10", "1/10", "1/10", "3/10", "1/10", "1/10"]),
    ("1/4", [1, 1], ["1/5", "1/20", "1/5", "1/20", "1/10", "1/10", "1/10", "1/5"]),
    ("1/4", [1, 0], ["1/8", "1/8", "1/16", "3/16", "1/16", "3/16", "1/8", "1/8"]),
    ("1/4", [1, 0], ["3/40", "1/40", "1/5", "1/10", "1/10", "1/10", "1/5", "1/5"]),
]


def population():
    return FiniteDistribution(TREE, [{"weight": w, "c": c, "p": p, "eta": ETA} for w, c, p in GROUPS],
                              ["all", "older"])


def run(epsilon):
    dist = population()
    out = {}
    for method in ("uc", "huc"):
        result = boost(dist, UTILITIES, method=method, epsilon=epsilon, max_updates=400, digits=30)
        out[method] = (result, trajectory(result, dist, UTILITIES))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="epsilon 1/20 instead of 1/200")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "figures"))
    args = ap.parse_args(argv)
    epsilon = Fraction(1, 20) if args.quick else Fraction(1, 200)
    runs = run(epsilon)
    for method, (result, path) in runs.items():
        print(f"{method.upper()}-Boost: {len(result.updates)} updates (bound {result.bound_updates}), "
              f"stopped by {result.stopped}; UC {path[0]['uc']:.4f} -> {path[-1]['uc']:.4f}, "
              f"HUC {path[0]['huc']:.4f} -> {path[-1]['huc']:.4f}, log loss {path[0]['log_loss']:.4f} -> "
              f"{path[-1]['log_loss']:.4f}; Theorem 3.5 holds: {result.theorem_3_5['holds']}")
    try:
        from huc_ref.plot import plot_trajectories
        fig = plot_trajectories({f"{m.upper()}-Boost": runs[m][1] for m in ("uc", "huc")}, epsilon=epsilon)
    except HUCError:  # matplotlib is not installed
        print("(matplotlib not installed: pip install huc-ref[plot] for the figure)")
        return runs
    fig.suptitle(f"HUC-Boost vs UC-Boost on the J.1 tree, eps = {epsilon} (certified runs, replayed)", y=1.03)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    png = out / ("boost_trajectories_quick.png" if args.quick else "boost_trajectories.png")
    fig.savefig(png, dpi=110, bbox_inches="tight")
    from matplotlib import pyplot
    pyplot.close(fig)  # (saved: pyplot would keep it open in a process that runs this again)
    print(f"figure: {png}")
    return runs


if __name__ == "__main__":
    main()
