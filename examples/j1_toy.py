"""The toy experiment of App. J.1 / Fig. 2(b): UC-Boost lowers UC but leaves HUC behind.

    "The UC errors after UC- and HUC-Boost are similar and decrease as n grows.  Their HUC
    errors differ: after UC-Boost, HUC remains, whereas after HUC-Boost it decreases with
    sample size."  (Sec. 5.1)

Setup (docs/specification.md §7, the project's reconstruction where the paper's table was lost): the
eight-leaf tree of Fig. 3; three binary decision utilities
``u_j(p, y) = (2 a_j(p) - 1) d_j(y)``, ``d_j(y) = 1{y in S_j} - tau_j 1{y in D_j}``;
a constant predictor whose branch probabilities are drawn from {0.10, ..., 0.90};
``n eta_hat ~ Multinomial(n, eta)``; both boosts run on the single atom with law
``eta_hat`` until the empirical violation is at most 1e-10 (caps 100 and 700); population
UC and HUC are then evaluated exactly under the true ``eta``.

    python examples/j1_toy.py            # the full grid: 12 sizes x 200 repetitions
    python examples/j1_toy.py --quick    # 3 sizes x 3 repetitions (run by the test suite)

The full grid uses the float engine (``arithmetic="float"``, uncertified, for speed; the
evaluation is exact); ``--certified`` runs the certified engine instead.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from huc_ref import BinaryDecision, FiniteDistribution, LabelTree, audit  # noqa: E402
from huc_ref.boost import boost  # noqa: E402

TREE = LabelTree.from_children("cause", {
    "cause": ["noninf", "spread"], "noninf": ["y1", "y2"], "spread": ["site", "shock"],
    "site": ["upper", "lower"], "upper": ["y3", "y4"], "lower": ["y5", "y6"], "shock": ["y7", "y8"]})
ETA = [Fraction(x) for x in ("13/80", "7/80", "21/125", "21/500", "189/2000", "441/2000", "9/80", "9/80")]
LABELS = [f"y{i}" for i in range(1, 9)]
UTILITIES = {
    "u1 antibiotics": BinaryDecision(TREE, ["y4", "y6"], ["y3", "y4", "y5", "y6"], "1/2"),
    "u2 admission": BinaryDecision(TREE, ["y2", "y5", "y6", "y8"], LABELS, "1/2"),
    "u3 intensive care": BinaryDecision(TREE, ["y8"], ["y7", "y8"], "1/3"),
}
SIZES = [250, 500, 1000, 2000, 5000, 10**4, 2 * 10**4, 5 * 10**4, 10**5, 2 * 10**5, 5 * 10**5, 10**6]
QUICK_SIZES, QUICK_REPETITIONS = [250, 10**4, 10**6], 3
SEED = 20261130  # one generator for the whole grid, drawn from in the order of SIZES
STOP = Fraction(1, 10**10)
CAPS = {"uc": 100, "huc": 700}


def initial_prediction(rng) -> list[Fraction]:
    """First-child branch probabilities uniform on {10/100, ..., 90/100}; leaves by path products."""
    first = {v: Fraction(int(rng.integers(10, 91)), 100) for v in TREE.internal_nodes}
    p = []
    for y in LABELS:
        path = TREE.path(y)
        prob = Fraction(1)
        for parent, child in zip(path, path[1:]):
            q = first[parent]
            prob *= q if TREE.children(parent)[0] == child else 1 - q
        p.append(prob)
    return p


def population_errors(p) -> tuple[Fraction, Fraction]:
    """Exact population UC and HUC of a constant prediction under the true law eta."""
    total = sum(p)
    dist = FiniteDistribution(TREE, [{"p": [x / total for x in p], "eta": ETA}])
    res = audit(dist, UTILITIES)
    return res.uc.sup, res.huc.sup


def one_run(n, rng, arithmetic):
    """Draw p0 and eta_hat, boost both ways, return {method: (UC, HUC)} under eta."""
    p0 = initial_prediction(rng)
    counts = rng.multinomial(n, [float(x) for x in ETA])
    eta_hat = [Fraction(int(c), n) for c in counts]
    sample = FiniteDistribution(TREE, [{"p": p0, "eta": eta_hat}])
    out = {}
    for method in ("uc", "huc"):
        r = boost(sample, UTILITIES, method=method, epsilon=STOP, max_updates=CAPS[method],
                  arithmetic=arithmetic, digits=30)
        out[method] = population_errors([Fraction(x) for x in r.predictions[0]])
    return out


def cell(values) -> str:
    """``mean ± sd`` of exact or float values, to four decimals (the sample sd, as Fig. 2(b)'s bars)."""
    xs = [float(v) for v in values]
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{statistics.mean(xs):.4f} ± {sd:.4f}"


def table(results) -> str:
    """Population UC and HUC after each boost, per calibration size ``n`` (mean ± sd)."""
    lines = ["| n | UC after UC-B | UC after HUC-B | HUC after UC-B | HUC after HUC-B |", "|---|---|---|---|---|"]
    for n, r in results.items():
        lines.append(f"| {n} | {cell(e[0] for e in r['uc'])} | {cell(e[0] for e in r['huc'])} | "
                     f"{cell(e[1] for e in r['uc'])} | {cell(e[1] for e in r['huc'])} |")
    return "\n".join(lines)


def draw(results, reps: int, png) -> Path | None:
    """Fig. 2(b): population UC (top) and HUC (bottom) against n, mean ± sd; None without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    sizes = list(results)
    fig, axes = plt.subplots(2, 1, figsize=(6.5, 7), sharex=True)
    for ax, which, title in ((axes[0], 0, "population UC"), (axes[1], 1, "population HUC")):
        for method, style, shift in (("uc", "o--", 0.93), ("huc", "s-", 1.07)):  # side by side, not on top
            means = [statistics.mean(float(e[which]) for e in results[n][method]) for n in sizes]
            sds = [statistics.stdev(float(e[which]) for e in results[n][method]) if reps > 1 else 0 for n in sizes]
            ax.errorbar([n * shift for n in sizes], means, yerr=sds, fmt=style, capsize=3, markersize=5,
                        label=f"after {method.upper()}-Boost (mean ± sd)")
        ax.set_xscale("log")
        ax.set_yscale("log")  # both fall over orders of magnitude; the levelling-off shows on a log scale
        ax.set_ylabel(title)
    axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, 1.18), ncol=2, fontsize=8, frameon=False)
    axes[1].set_xlabel("calibration sample size n")
    fig.suptitle(f"App. J.1 toy (docs/specification.md §7 reconstruction), {reps} repetitions", y=0.99)
    fig.tight_layout()
    fig.savefig(png, dpi=120, bbox_inches="tight")
    plt.close(fig)  # (saved: pyplot would keep it open in a process that runs this again)
    return png


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 sizes x 3 repetitions")
    ap.add_argument("--repetitions", type=int, default=200)
    ap.add_argument("--certified", action="store_true", help="certified arithmetic (slow)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "figures"))
    args = ap.parse_args(argv)
    sizes = QUICK_SIZES if args.quick else SIZES
    reps = QUICK_REPETITIONS if args.quick else args.repetitions
    rng = np.random.default_rng(SEED)
    arithmetic = "certified" if args.certified else "float"
    results = {n: {"uc": [], "huc": []} for n in sizes}
    for n in sizes:
        for _ in range(reps):
            for method, errs in one_run(n, rng, arithmetic).items():
                results[n][method].append(errs)
    print(f"J.1 toy: {reps} repetitions per n, {arithmetic} arithmetic; population errors under eta (mean ± sd)")
    print(table(results))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / ("j1_toy_quick.md" if args.quick else "j1_toy.md")).write_text(table(results) + "\n")
    png = draw(results, reps, out / ("j1_toy_quick.png" if args.quick else "j1_toy.png"))
    print(f"figure: {png}" if png else "(matplotlib not installed: pip install huc-ref[plot] for the figure)")
    return results


if __name__ == "__main__":
    main()
