"""Where the error lives: per-node HUC moments on the eight-leaf tree of App. J.1.

    "HUC evaluates this mean consistency node by node under the same (c, u, I)."  (Sec. 3.1)
    Gamma_{c,u,I,v}(f) = E[c(X) 1{mu_u(P) in I} <Delta_{u,v}(P), R_v(P, Y)>]   (Def. 3.2)

A miscalibrated predictor (the four patient groups of examples/boost_trajectories.py)
against the true law of docs/specification.md §7, two subgroups (everyone, "older") and the three decision
utilities.  For each utility the figure (huc_ref.plot.plot_audit) colours every relevant
node by the signed moment of its witness (the subgroup and interval of largest |Gamma|),
and marks on the score axis the interval that each witness selects.  Exact numbers
throughout.

    python examples/where_error_lives.py [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.boost_trajectories import population  # noqa: E402
from examples.j1_toy import TREE, UTILITIES  # noqa: E402
from huc_ref import HUCError, audit  # noqa: E402


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
        from huc_ref.plot import plot_audit
        fig = plot_audit(dist, UTILITIES, res)
    except HUCError:  # matplotlib is not installed
        print("(matplotlib not installed: pip install huc-ref[plot] for the figure)")
        return table
    fig.suptitle("Where the error lives: per-node HUC moments on the J.1 tree (exact; colour: the signed "
                 "witness moment of each node in V_T(u))", y=1.04)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    png = out / "where_error_lives.png"
    fig.savefig(png, dpi=110, bbox_inches="tight")
    from matplotlib import pyplot
    pyplot.close(fig)  # (saved: pyplot would keep it open in a process that runs this again)
    print(f"figure: {png}")
    return table


if __name__ == "__main__":
    main()
