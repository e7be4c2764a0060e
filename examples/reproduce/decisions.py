"""The decision utilities of K.4-K.6 that top-1 correctness at a depth does not cover.

* :class:`TopDown`: the node reached by descending from the root, at each node to its child of
  largest predicted mass (the first in child order on ties), down to a given depth; ``u(p, y) =
  1{y in Y_{v(p)}}``.  K.5's and K.6's family decision is its depth 2: "v_1(p) = benign, or
  arg max_{v in {Gafgyt, Mirai}} pi_v(p)" after the root chose attack; the root decision
  ``v_0(p)`` is its depth 1 (the same as :class:`huc_ref.Top1AtDepth` at depth 1).  Unlike the
  depth-2 cut, the descent never compares a family's mass with benign's once the root chose
  attack (K.5: "the root can select attack while the single most probable leaf is normal").
* :class:`ScenarioIntent`: K.4's MASSIVE utility: abstain (0), report the scenario ``s(p)``
  (1/4 when the label is in it, -1 otherwise) or report the intent ``y(p)``, the most probable
  intent within ``s(p)`` (1 when right, -1/2 for another intent of the same scenario, -1
  otherwise), so that ``mu = 0``, ``s_p / 4 - (1 - s_p)`` or ``t_p - (s_p - t_p) / 2 - (1 -
  s_p)`` (K.4).  Which action ``a_{tau_s, tau_i}(p)`` takes was lost with the text extraction's
  formula; the kit's reconstruction: the intent when ``t_p >= tau_i``, else the scenario when
  ``s_p >= tau_s``, else abstain.

Both are :class:`huc_ref.utilities.Utility` families written for the kit: exact values from
Fractions, and a float64 form that leaves to the exact values every row whose choice float64
cannot certify (as the library's families do).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from huc_ref.decomposition import subtree_sums
from huc_ref.rational import exact, fraction_text
from huc_ref.utilities import Utility

_ONE, _ZERO = Fraction(1), Fraction(0)


def _descend(tree, masses, depth: int) -> int:
    """The node id reached from the root by taking, ``depth`` times (or until a leaf), the first
    child of largest mass."""
    kids = tree.child_ids
    a = tree.id(tree.root)
    for _ in range(depth):
        if not kids[a]:
            break
        a = max(kids[a], key=lambda k: (masses[k], -k))
    return a


def _mass_at(pi, node):
    """``pi[i, node[i]]`` per row, from an array or the fast path's column reader (``pi[:, nodes]``)."""
    ids, where = np.unique(node, return_inverse=True)
    return pi[:, ids][np.arange(len(node)), where.ravel()]


def _descend_rows(tree, rows, depth: int):
    """:func:`_descend` for every row of ``rows.pi`` in float64: the node ids, and the rows where
    a choice could not be certified (then decided exactly by the utility's values)."""
    kids = tree.child_ids
    node = np.full(rows.n, tree.id(tree.root), dtype=np.intp)
    unsure = np.zeros(rows.n, dtype=bool)
    for _ in range(depth):
        for a in np.unique(node):
            if not kids[a]:
                continue
            at = np.flatnonzero(node == a)
            cols = np.array(kids[a])
            j, u = rows.first_max(rows.pi[:, cols][at], rel=rows.rel)  # (pi: an array or a column reader)
            node[at] = cols[j]
            unsure[at] |= u
    return node, unsure


class TopDown(Utility):
    """Top-down top-1 correctness (K.5, K.6): ``u(p, y) = 1{y in Y_{v(p)}}``, ``v(p)`` reached
    from the root by ``depth`` choices of the child of largest mass (first in child order on
    ties; a leaf reached earlier stops the descent).  ``V_T(u)``: the branching nodes above
    ``depth``.

    >>> from huc_ref import LabelTree
    >>> t = LabelTree.from_children("r", {"r": ["normal", "attack"], "attack": ["dos", "probe"]})
    >>> F = Fraction
    >>> p = [F(2, 5), F(3, 10), F(3, 10)]  # the root picks attack (3/5), although normal is the likeliest label
    >>> TopDown(t, 2).values(p), TopDown(t, 2).relevant_nodes
    ((Fraction(0, 1), Fraction(1, 1), Fraction(0, 1)), ('r', 'attack'))
    >>> TopDown(t, 1).values(p)
    (Fraction(0, 1), Fraction(1, 1), Fraction(1, 1))
    """

    def __init__(self, tree, depth: int):
        super().__init__(tree)
        self.depth = int(depth)
        kids = tree.child_ids
        self._relevant = tuple(tree.nodes[a] for a in range(len(kids)) if len(kids[a]) >= 2 and tree.depth(a) < depth)
        below = np.zeros((len(kids), tree.K))
        for a in range(len(kids)):
            below[a, list(tree.label_ids_below(a))] = 1.0
        below.flags.writeable = False
        self._below = below

    def values(self, p, atom=None):
        a = _descend(self.tree, subtree_sums(self.tree, p), self.depth)
        below = set(self.tree.label_ids_below(a))
        return tuple(_ONE if y in below else _ZERO for y in range(len(p)))

    @property
    def relevant_nodes(self):
        return self._relevant

    def to_json(self):
        return {"kind": "top_down", "depth": self.depth}

    def vectorised(self, rows):
        node, unsure = _descend_rows(self.tree, rows, self.depth)
        return self._below[node], unsure


class ScenarioIntent(Utility):
    """K.4's MASSIVE utility ``u_{tau_s, tau_i}`` on a tree root -> scenarios -> intents (the
    kit's reconstruction of the lost action rule: intent when ``t_p >= tau_i``, else scenario
    when ``s_p >= tau_s``, else abstain).

    >>> from huc_ref import LabelTree
    >>> t = LabelTree.from_children("r", {"r": ["alarm", "music"], "alarm": ["set", "query"], "music": ["play"]})
    >>> u = ScenarioIntent(t, "1/2", "1/2")
    >>> F = Fraction
    >>> u.values([F(3, 5), F(1, 5), F(1, 5)])  # intent "set": 1, -1/2 for "query", -1 for "play"
    (Fraction(1, 1), Fraction(-1, 2), Fraction(-1, 1))
    >>> u.values([F(2, 5), F(1, 5), F(2, 5)]), u.score([F(2, 5), F(1, 5), F(2, 5)])  # scenario alarm
    ((Fraction(1, 4), Fraction(1, 4), Fraction(-1, 1)), Fraction(-1, 4))
    >>> u.values([F(1, 5), F(1, 5), F(3, 5)])[2], ScenarioIntent(t, "3/4", "3/4").values([F(1, 5), F(1, 5), F(3, 5)])
    (Fraction(1, 1), (Fraction(0, 1), Fraction(0, 1), Fraction(0, 1)))
    """

    def __init__(self, tree, tau_s, tau_i):
        super().__init__(tree)
        self.tau_s, self.tau_i = exact(tau_s, "tau_s"), exact(tau_i, "tau_i")
        kids = tree.child_ids
        self._relevant = tuple(tree.nodes[a] for a in range(len(kids)) if len(kids[a]) >= 2)

    def _rows(self, scenario: int, intent: int, action: str, one=_ONE, zero=_ZERO):
        """The leaf values of ``action`` ("abstain", "scenario", "intent")."""
        K = self.tree.K
        if action == "abstain":
            return [zero] * K
        inside = set(self.tree.label_ids_below(scenario))
        if action == "scenario":
            return [one / 4 if y in inside else -one for y in range(K)]
        return [one if y == intent else -one / 2 if y in inside else -one for y in range(K)]

    def values(self, p, atom=None):
        masses = subtree_sums(self.tree, p)
        s = _descend(self.tree, masses, 1)
        leaf = _descend(self.tree, masses, 2)
        intent = self.tree.label_ids_below(leaf)[0]
        action = "intent" if masses[leaf] >= self.tau_i else "scenario" if masses[s] >= self.tau_s else "abstain"
        return tuple(self._rows(s, intent, action))

    @property
    def relevant_nodes(self):
        return self._relevant

    def to_json(self):
        return {"kind": "scenario_intent", "tau_s": fraction_text(self.tau_s), "tau_i": fraction_text(self.tau_i)}

    def vectorised(self, rows):
        s, unsure_s = _descend_rows(self.tree, rows, 1)
        leaf, unsure_i = _descend_rows(self.tree, rows, 2)
        t, m = _mass_at(rows.pi, leaf), _mass_at(rows.pi, s)
        tau_i, tau_s = float(self.tau_i), float(self.tau_s)
        near = ((np.abs(t - tau_i) <= rows.rel * (t + tau_i) + 1e-15)  # a threshold float64 cannot decide
                | (np.abs(m - tau_s) <= rows.rel * (m + tau_s) + 1e-15))
        action = np.where(t >= tau_i, 2, np.where(m >= tau_s, 1, 0))
        U = np.zeros((rows.n, self.tree.K))
        label_of = self.tree.label_ids
        for a in np.unique(s):
            at = s == a
            inside = np.zeros(self.tree.K, dtype=bool)
            inside[list(self.tree.label_ids_below(a))] = True
            U[at & (action == 1)] = np.where(inside, 0.25, -1.0)
            intent_rows = np.flatnonzero(at & (action == 2))
            U[intent_rows] = np.where(inside, -0.5, -1.0)
            U[intent_rows, np.array([label_of[b] for b in leaf[intent_rows]], dtype=np.intp)] = 1.0
        return U, unsure_s | unsure_i | near
