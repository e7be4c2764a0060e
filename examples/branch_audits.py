"""Why leaf-wise or branch-wise audits are not enough (Sec. 2.2, App. D.2-D.4).

    "Class-wise calibration of individual leaves does not directly guarantee the tree's
    conditional structure. ... what matters is not the branch-probability discrepancy
    itself, but its effect on the target utility. ... branch-specific predicted values
    define different audit populations." (Sec. 2.2)

Three exact examples on the four-leaf tree:
  D.2  marginal and class-wise calibration hold, but conditional branches err;
  D.3  a large branch error (q*_{L,R} = 9/10 vs 1/2) with no utility impact;
  D.4  branch-score cells select disjoint populations, while mu_u keeps one common cell.

    python examples/branch_audits.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from huc_ref import (  # noqa: E402
    FiniteDistribution,
    Interval,
    LabelTree,
    Subtree,
    Table,
    TreeDecomposition,
    atom_terms,
    audit,
    class_indicator,
    interval_moment,
)

TREE = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
ALL = Interval()


def population(rows):
    return FiniteDistribution(TREE, [{"weight": w, "p": p, "eta": e} for w, p, e in rows])


def d2():
    d = population([("1/2", ["1/4", "1/4", "2/5", "1/10"], ["3/8", "1/8", "2/5", "1/10"]),
                    ("1/2", ["1/4", "1/4", "1/10", "2/5"], ["1/8", "3/8", "1/10", "2/5"])])
    us = {f"e_{y}": class_indicator(TREE, y) for y in TREE.labels} | {"J_vL": Subtree(TREE, "vL"),
                                                                       "J_y1": Subtree(TREE, "y1")}
    res = audit(d, us)
    q_star = [a.eta[0] / (a.eta[0] + a.eta[1]) for a in d.atoms]
    residuals = [t.residual for t in atom_terms(d, us["J_y1"])]
    return [
        "D.2  marginal calibration does not fix conditional branches",
        f"     UC over the class indicators and subtree indicators: {res.uc.sup}",
        f"     predicted P(y1 | vL) = 1/2 for both groups; true: {q_star[0]} and {q_star[1]}",
        f"     residuals of u = J_y1 in the two groups: {residuals[0]} and {residuals[1]} (they cancel in UC)",
    ]


def d3():
    d = population([(1, ["1/4"] * 4, ["1/20", "9/20", "1/5", "3/10"])])
    u = Table(TREE, [0, 0, 0, 1])
    eta = d.atoms[0].eta
    moments = [interval_moment(d, u, "all", ALL, v) for v in ("v0", "vL", "vR")]
    return [
        "D.3  a branch error with no utility impact (u = 1{y = y4})",
        f"     q*_(L,R) = {eta[1] / (eta[0] + eta[1])} against q_(L,R) = 1/2, yet D_L = {moments[1]}",
        f"     (D_top, D_L, D_R) = ({moments[0]}, {moments[1]}, {moments[2]});  V_T(u) = {u.relevant_nodes}",
    ]


def d4():
    d = population([("1/2", ["1/2", "1/10", "3/20", "1/4"], ["5/12", "1/12", "3/16", "5/16"]),
                    ("1/2", ["1/5", "3/10", "1/4", "1/4"], ["1/5", "3/10", "3/10", "1/5"])])
    u = Table(TREE, [0, 0, 0, 1])
    cell = Interval.closed(Fraction(1, 4), Fraction(1, 4))
    qa, qb = (TreeDecomposition(TREE, a.p, u.b) for a in d.atoms)
    moments = [interval_moment(d, u, "all", cell, v) for v in ("v0", "vL", "vR")]
    return [
        "D.4  branch-score cells audit different populations",
        f"     mu_u = {', '.join(str(t.score) for t in atom_terms(d, u))}: both groups in the cell mu_u = 1/4",
        f"     root scores q_(0,R) = {qa.q('v0')[1]}, {qb.q('v0')[1]}: [3/8, 7/16] selects group a only",
        f"     right scores q_(R,R) = {qa.q('vR')[1]}, {qb.q('vR')[1]}: [7/16, 9/16] selects group b only",
        f"     in the common cell: (D_top, D_L, D_R) moments = ({moments[0]}, {moments[1]}, {moments[2]})",
    ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the same (this example is instant)")
    ap.parse_args(argv)
    text = "\n".join(d2() + [""] + d3() + [""] + d4())
    print(text)
    return text


if __name__ == "__main__":
    main()
