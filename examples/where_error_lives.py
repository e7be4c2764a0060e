"""Where the error lives: per-node HUC moments on the eight-leaf tree of App. J.1.

    "HUC evaluates this mean consistency node by node under the same (c, u, I)."  (Sec. 3.1)
    Gamma_{c,u,I,v}(f) = E[c(X) 1{mu_u(P) in I} <Delta_{u,v}(P), R_v(P, Y)>]   (Def. 3.2)

A miscalibrated predictor (the four patient groups of examples/boost_trajectories.py)
against the true law of docs/specification.md §7, two subgroups (everyone, "older") and the three decision
utilities.  For each utility the figure colours every internal node by its largest
|Gamma| over subgroups and intervals, and marks on the score axis the interval that the
node's witness selects.  Exact numbers throughout.

    python examples/where_error_lives.py [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.boost_trajectories import population  # noqa: E402
from examples.j1_toy import TREE, UTILITIES  # noqa: E402
from huc_ref import atom_terms, audit  # noqa: E402


def node_table():
    """For each utility and internal node: the largest |Gamma| with its subgroup and interval."""
    dist = population()
    res = audit(dist, UTILITIES)
    table = {}
    for name in UTILITIES:
        for v in TREE.internal_nodes:
            rows = [r for r in res.candidates if r.utility == name and r.node == v]
            best = max(rows, key=lambda r: r.sup) if rows else None
            table[name, v] = best
    return dist, res, table


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the same (exact and instant)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "figures"))
    args = ap.parse_args(argv)
    dist, res, table = node_table()
    print(f"UC = {res.uc.sup} (~{float(res.uc.sup):.4f}) at {res.uc.utility}; "
          f"HUC = {res.huc.sup} (~{float(res.huc.sup):.4f}) at {res.huc.utility}, node {res.huc.node}")
    print(f"{'utility':<18} {'node':<8} {'max |Gamma|':>12}  subgroup  interval")
    for (name, v), row in table.items():
        if row is None:
            print(f"{name:<18} {v:<8} {'(not in V_T)':>12}")
        else:
            lo, hi = (float(x) for x in row.interval) if row.interval else (None, None)
            interval = "empty" if row.interval is None else f"[{lo:.4f}, {hi:.4f}]"
            print(f"{name:<18} {v:<8} {float(row.sup):>12.5f}  {row.subgroup:<8}  {interval}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: pip install huc-ref[plot] for the figure)")
        return table
    # layout: leaves evenly spaced in depth-first order, parents above the middle of their children
    pos, leaves = {}, [n for n in TREE.nodes if TREE.is_leaf(n)]
    for k, y in enumerate(leaves):
        pos[y] = (k / (len(leaves) - 1), 0.0)
    for v in reversed(TREE.nodes):
        if not TREE.is_leaf(v):
            xs = [pos[c][0] for c in TREE.children(v)]
            pos[v] = (sum(xs) / len(xs), max(pos[c][1] for c in TREE.children(v)) + 1.0)
    top = max(float(r.sup) for r in table.values() if r is not None)
    fig, axes = plt.subplots(2, len(UTILITIES), figsize=(5 * len(UTILITIES), 7),
                             gridspec_kw={"height_ratios": [4, 1]})
    cmap = plt.get_cmap("Reds")
    for col, name in enumerate(UTILITIES):
        ax = axes[0, col]
        for v in TREE.internal_nodes:
            for c in TREE.children(v):
                ax.plot(*zip(pos[v], pos[c]), color="grey", lw=1, zorder=1)
        for node, (x, y) in pos.items():
            row = table.get((name, node))
            if TREE.is_leaf(node):
                ax.text(x, y - 0.25, node, ha="center", va="top", fontsize=8)
                ax.scatter([x], [y], s=60, color="white", edgecolor="black", zorder=2)
            elif row is None:
                ax.scatter([x], [y], s=500, color="white", edgecolor="lightgrey", zorder=2)
                ax.text(x, y, "-", ha="center", va="center", fontsize=8, zorder=3)
            else:
                ax.scatter([x], [y], s=900, color=cmap(0.15 + 0.85 * float(row.sup) / top), edgecolor="black",
                           zorder=2)
                ax.text(x, y, f"{node}\n{float(row.sup):.3f}", ha="center", va="center", fontsize=7, zorder=3)
        ax.set_title(f"{name}: max |Gamma| per node")
        ax.axis("off")
        axis = axes[1, col]
        scores = sorted({float(t.score) for t in atom_terms(dist, UTILITIES[name], ())})
        axis.scatter(scores, [0] * len(scores), color="black", zorder=3, label="atom scores mu_u")
        rows = [(v, r) for (n, v), r in table.items() if n == name and r is not None and r.interval]
        for k, (v, r) in enumerate(rows):
            lo, hi = (float(x) for x in r.interval)
            axis.plot([lo, hi], [0.2 + 0.15 * k] * 2, lw=4, label=f"witness at {v}")
        axis.set_yticks([])
        axis.set_xlabel("score mu_u(p)")
        axis.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle("Where the error lives: per-node HUC on the J.1 tree (exact)")
    fig.tight_layout()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    png = out / "where_error_lives.png"
    fig.savefig(png, dpi=110)
    print(f"figure: {png}")
    return table


if __name__ == "__main__":
    main()
