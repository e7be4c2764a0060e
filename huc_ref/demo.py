"""The four-leaf cancellation of Sec. 2.2 and App. D.1, exactly: what ``huc demo`` prints.

    "Consider the constant predictor P = p = (1/4, 1/4, 1/4, 1/4).  Let u = (-1, 1, 1, 1)
    and let the true conditional leaf distribution be eta(p) = (1/4, 0, 3/8, 3/8). ...
    Consequently, D_top(p) = 1/4, D_L(p) = -1/4, D_R(p) = 0." (App. D.1)

``examples/cancellation.py`` draws the same numbers on the tree.
"""

from __future__ import annotations

from fractions import Fraction

from .audit import audit, interval_moment
from .decomposition import TreeDecomposition
from .distribution import FiniteDistribution
from .intervals import Interval
from .tree import LabelTree
from .utilities import Table

__all__ = ["TREE", "P", "ETA", "U", "walkthrough"]

TREE = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
P = [Fraction(1, 4)] * 4
ETA = [Fraction(1, 4), Fraction(0), Fraction(3, 8), Fraction(3, 8)]
U = Table(TREE, [-1, 1, 1, 1])


def walkthrough() -> tuple[str, dict]:
    """The exact quantities of App. D.1, as text, and the node moments ``D_top, D_L, D_R`` (eq. 5).

    >>> text, moments = walkthrough()
    >>> [str(moments[v]) for v in ("v0", "vL", "vR")]  # App. D.1: D_top = 1/4, D_L = -1/4, D_R = 0
    ['1/4', '-1/4', '0']
    """
    dec = TreeDecomposition(TREE, P, U.b)
    star = TreeDecomposition(TREE, ETA, U.b)  # branch probabilities of the true law
    dist = FiniteDistribution(TREE, [{"p": P, "eta": ETA}])
    moments = {v: interval_moment(dist, U, "all", Interval(), v) for v in TREE.internal_nodes}
    res = audit(dist, {"u": U})
    f = str
    lines = [
        "Four-leaf cancellation (App. D.1), all numbers exact",
        f"  prediction p = {', '.join(map(f, P))};  true law eta = {', '.join(map(f, ETA))};  u = -1, 1, 1, 1",
        f"  predicted branch probabilities q_(t,R):  root {f(dec.q('v0')[1])}, left {f(dec.q('vL')[1])}, "
        f"right {f(dec.q('vR')[1])}",
        f"  true branch probabilities q*_(t,R):      root {f(star.q('v0')[1])}, left {f(star.q('vL')[1])}, "
        f"right {f(star.q('vR')[1])}",
        f"  subtree mean utilities ubar:  left {f(dec.mu('vL'))}, right {f(dec.mu('vR'))}, root (score) {f(dec.mu())}",
        f"  D_top = {f(moments['v0'])},  D_L = {f(moments['vL'])},  D_R = {f(moments['vR'])};  "
        f"sum = {f(sum(moments.values()))}",
        f"  UC  = {f(res.uc.sup)}    (the residual cancels: predicted and realised mean utility are both 1/2)",
        f"  HUC = {f(res.huc.sup)}  at node {res.huc.node} (and {f(abs(moments['vL']))} at vL, opposite sign)",
    ]
    return "\n".join(lines), moments
