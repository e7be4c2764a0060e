"""The paper's formulas written out directly from their definitions, independently of
``huc_ref``: leaf sets by walking the tree, sums over them by brute force.  Each check
compares these with what ``huc_ref`` computes on the same symbols."""

from __future__ import annotations

from functools import cached_property

from huc_ref.tree import LabelTree


def _sum(terms):
    terms = list(terms)
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


class Paper:
    """Sec. 3.1 / A.3 quantities of one tree, prediction ``p`` and leaf values ``u``.

    >>> from fractions import Fraction as F
    >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
    >>> ref = Paper(t, [F(1, 4), F(1, 4), F(1, 2)], [F(-1), F(1), F(0)])
    >>> ref.leaves["a"], ref.pi("a"), ref.mu("a"), ref.g("a", 0)
    ([0, 1], Fraction(1, 2), Fraction(0, 1), Fraction(-1, 1))
    >>> [str(x) for x in ref.q("r") + ref.R("a", 0)]
    ['1/2', '1/2', '1/2', '-1/2']
    """

    def __init__(self, tree: LabelTree, p, u=None):
        self.tree, self.p, self.u = tree, list(p), None if u is None else list(u)
        self._pi, self._mu = {}, {}

    @cached_property
    def leaves(self) -> dict:
        """``Y_a`` (label indices) for every node, by walking down from it."""
        out = {}
        for a in self.tree.nodes:
            ids, stack = [], [a]
            while stack:
                node = stack.pop()
                kids = self.tree.children(node)
                if kids:
                    stack.extend(kids)
                else:
                    ids.append(self.tree.labels.index(node))
            out[a] = sorted(ids)
        return out

    def J(self, a, y: int) -> int:
        """``J_a(y) = 1{y in Y_a}``."""
        return 1 if y in self.leaves[a] else 0

    def pi(self, a):
        """``pi_a(p) = sum_{y in Y_a} p_y`` (A.3)."""
        if a not in self._pi:
            self._pi[a] = _sum(self.p[y] for y in self.leaves[a])
        return self._pi[a]

    def mu(self, a):
        """``mu_{u,a}(p) = sum_{y in Y_a} p_y u_y / pi_a(p)`` (A.3)."""
        if a not in self._mu:
            self._mu[a] = _sum(self.p[y] * self.u[y] for y in self.leaves[a]) / self.pi(a)
        return self._mu[a]

    def q(self, v) -> list:
        """``q_{v,j}(p) = pi_{v_j}(p) / pi_v(p)`` (Sec. 3.1)."""
        return [self.pi(c) / self.pi(v) for c in self.tree.children(v)]

    def R(self, v, y: int) -> list:
        """``R_{v,j}(p, y) = J_{v_j}(y) - J_v(y) q_{v,j}(p)`` (Sec. 3.1)."""
        return [self.J(c, y) - self.J(v, y) * qj for c, qj in zip(self.tree.children(v), self.q(v))]

    def Delta(self, v) -> list:
        """``Delta_{u,v,j}(p) = mu_{u,v_j}(p) - mu_{u,v}(p)`` (Sec. 3.1)."""
        return [self.mu(c) - self.mu(v) for c in self.tree.children(v)]

    def g(self, v, y: int):
        """The node contribution ``<Delta_{u,v}(p), R_v(p, y)>`` (Thm 3.1), by its definition."""
        return _sum(d * r for d, r in zip(self.Delta(v), self.R(v, y)))
