"""The four-leaf cancellation of Sec. 2.2 and App. D.1, exactly: what ``huc demo`` prints.

    "Consider the constant predictor P = p = (1/4, 1/4, 1/4, 1/4).  Let u = (-1, 1, 1, 1)
    and let the true conditional leaf distribution be eta(p) = (1/4, 0, 3/8, 3/8). ...
    Consequently, D_top(p) = 1/4, D_L(p) = -1/4, D_R(p) = 0." (App. D.1)

``examples/cancellation.py`` draws the same numbers on the tree.
"""

from __future__ import annotations

from fractions import Fraction

from .audit import interval_moment
from .decomposition import TreeDecomposition
from .distribution import FiniteDistribution
from .engines import audit
from .intervals import Interval
from .tree import LabelTree
from .utilities import Table

__all__ = ["TREE", "P", "ETA", "U", "DIST", "walkthrough"]

TREE = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
P = [Fraction(1, 4)] * 4
ETA = [Fraction(1, 4), Fraction(0), Fraction(3, 8), Fraction(3, 8)]
U = Table(TREE, [-1, 1, 1, 1])
#: App. D.1's population: the one atom ``(p, eta)``
DIST = FiniteDistribution(TREE, [{"p": P, "eta": ETA}])


def _right(star: TreeDecomposition, v: str) -> str:
    """The true law's branch probability ``q*_(v,R)``, or why there is none: a node the true law
    gives no mass has no branch probabilities (0/0; ``eta`` may vanish on a subtree, as D.1's
    ``eta_y2 = 0`` vanishes on a leaf; ``p`` may not, A.2)."""
    return str(star.q(v)[1]) if star.pi(v) > 0 else "none (eta gives the node no mass)"


def walkthrough(p=None, eta=None, u=None, names=("p", "eta", "u")) -> tuple[str, dict]:
    """The exact quantities of App. D.1's four-leaf cancellation, as text, and the node moments of eq. (5).

    Parameters
    ----------
    p : sequence of 4 exact numbers, optional
        The prediction on the leaves ``y1..y4`` of the tree of Sec. 2.2, every entry positive
        (A.2); by default App. D.1's ``(1/4, 1/4, 1/4, 1/4)``.
    eta : sequence of 4 exact numbers, optional
        The true law on the leaves (entries may be 0); by default App. D.1's
        ``(1/4, 0, 3/8, 3/8)``.
    u : sequence of 4 exact numbers, optional
        The leaf utilities in [-1, 1]; by default App. D.1's ``(-1, 1, 1, 1)``.
    names : tuple of 3 str, default ("p", "eta", "u")
        How the messages name ``p``, ``eta`` and ``u`` (``huc demo`` passes its options'
        names).

    Returns
    -------
    text : str
        What ``huc demo`` prints: the branch probabilities, the subtree means, the moments,
        UC and HUC, and whether the node contributions cancel.
    moments : dict of str to Fraction
        The node moments ``D_top, D_L, D_R`` of eq. (5) by node (``"v0"``, ``"vL"``, ``"vR"``).

    Raises
    ------
    HUCError
        Naming the argument (as ``names`` calls it): a prediction or law that is not 4 exact
        numbers summing to 1, a zero entry of ``p`` (A.2), a utility outside [-1, 1].

    Examples
    --------
    >>> text, moments = walkthrough()
    >>> [str(moments[v]) for v in ("v0", "vL", "vR")]  # App. D.1: D_top = 1/4, D_L = -1/4, D_R = 0
    ['1/4', '-1/4', '0']
    >>> text, moments = walkthrough(eta=["1/20", "9/20", "1/5", "3/10"], u=[0, 0, 0, 1])  # App. D.3
    >>> [str(moments[v]) for v in ("v0", "vL", "vR")]
    ['0', '0', '1/20']
    >>> print(walkthrough(eta=[1, 0, 0, 0])[0].splitlines()[3])  # no true mass on the right: q* is 0/0 there
      true branch probabilities q*_(t,R):      root 0, left 0, right none (eta gives the node no mass)
    >>> walkthrough(p=["1/2", "1/2", 0, 0], names=("--p", "--eta", "--utility"))  # ``names``: in the messages
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: --p[2]: is 0; the paper assumes p_y > 0 (A.2)
    """
    from .distribution import prepare_prediction, read_law
    # (an atom's rules, named as given; the demo offers no renormalize or smooth to name as remedies)
    p = P if p is None else prepare_prediction(p, names[0], K=4, remedies=False)
    eta = ETA if eta is None else read_law(eta, names[1], 4)
    utility = U if u is None else Table(TREE, u, where=names[2])
    dist = FiniteDistribution(TREE, [{"p": p, "eta": eta}])  # checks that p and eta are laws
    dec = TreeDecomposition(TREE, p, utility.b)
    star = TreeDecomposition(TREE, eta, utility.b)  # branch probabilities of the true law
    moments = {v: interval_moment(dist, utility, "all", Interval(), v) for v in TREE.internal_nodes}
    res = audit(dist, {"u": utility})
    f = str
    if res.uc.sup == 0 and res.huc.sup > 0:
        verdict = "the node contributions cancel: UC sees nothing, HUC does"
    elif res.uc.sup < res.huc.sup:
        verdict = "the node contributions partly cancel: UC < HUC"
    else:
        verdict = "no cancellation here: UC >= HUC"
    lines = [
        "Four-leaf cancellation (App. D.1), all numbers exact"
        if (tuple(p), tuple(eta), utility.b) == (tuple(P), tuple(ETA), U.b)
        else "A four-leaf case (the tree of Sec. 2.2), all numbers exact",
        f"  prediction p = {', '.join(map(f, p))};  true law eta = {', '.join(map(f, eta))};  "
        f"u = {', '.join(map(f, utility.b))}",
        f"  predicted branch probabilities q_(t,R):  root {f(dec.q('v0')[1])}, left {f(dec.q('vL')[1])}, "
        f"right {f(dec.q('vR')[1])}",
        f"  true branch probabilities q*_(t,R):      root {_right(star, 'v0')}, left {_right(star, 'vL')}, "
        f"right {_right(star, 'vR')}",
        f"  subtree mean utilities ubar:  left {f(dec.mu('vL'))}, right {f(dec.mu('vR'))}, root (score) {f(dec.mu())}",
        f"  D_top = {f(moments['v0'])},  D_L = {f(moments['vL'])},  D_R = {f(moments['vR'])};  "
        f"sum = {f(sum(moments.values()))} (eq. 5: the whole residual)",
        f"  UC  = {f(res.uc.sup)},  HUC = {f(res.huc.sup)}"
        + (f" at node {res.huc.node}" if res.huc.node else "") + f":  {verdict}",
    ]
    return "\n".join(lines), moments
