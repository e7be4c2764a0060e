"""Utility families (App. A.1, J.1, K.2-K.6; docs/specification.md §5), each with its relevant nodes ``V_T(u)``.

A utility ``u(p, y) in [-1, 1]`` is bound to a label tree.  :meth:`Utility.values` gives
the leaf values ``u(p, .)`` for one prediction, in label order; ``mu_u(p) =
sum_y p_y u(p, y)`` is its score.  :attr:`Utility.relevant_nodes` is ``V_T(u)``: the
internal nodes with ``d_v >= 2`` at which ``u(p, .)`` is not constant on ``Y_v`` for some
prediction ``p``, read structurally off each family's payoff table (docs/specification.md §3).  Outside
``V_T(u)`` every node contribution is identically zero, so HUC is unchanged by them.

Conventions (docs/specification.md §5): ranks break ties by label order; decisions take the first
maximiser in the given action order; ``decision`` utilities count every action of the
table as possible (a never-chosen action can only enlarge ``V_T(u)``); ``top1_at_depth``
candidates are the depth-``l`` cut; ``per_atom`` values count only at the audited atoms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from .decomposition import TreeDecomposition, subtree_sums
from .errors import HUCError
from .rational import exact, exact_vector, fraction_text
from .tree import LabelTree

__all__ = ["Utility", "Table", "Subtree", "Rank", "TopK", "Decision", "BinaryDecision",
           "Top1AtDepth", "Aggregated", "PerAtom", "class_indicator"]

_ONE = Fraction(1)


def _check_range(values, where):
    for i, v in enumerate(values):
        if not -1 <= v <= 1:
            raise HUCError(f"{where}[{i}]: utility value {fraction_text(v)} is outside [-1, 1]")
    return values


def _nonconstant_nodes(tree: LabelTree, rows) -> tuple[str, ...]:
    """Branching nodes at which some row of leaf values is not constant on ``Y_v``.

    Subtree minima and maxima come from one post-order pass per row, like sums.
    """
    kids = tree.child_ids
    found = [False] * len(kids)
    for row in rows:
        lo = subtree_sums_by(tree, row, min)
        hi = subtree_sums_by(tree, row, max)
        for a, ks in enumerate(kids):
            if len(ks) >= 2 and lo[a] != hi[a]:
                found[a] = True
    return tuple(tree.nodes[a] for a in range(len(kids)) if found[a])


def subtree_sums_by(tree: LabelTree, row, combine):
    """Like :func:`~huc_ref.decomposition.subtree_sums` with ``min`` or ``max`` for ``+``.

    >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
    >>> subtree_sums_by(t, [Fraction(1), Fraction(-1), Fraction(0)], max)
    [Fraction(1, 1), Fraction(1, 1), Fraction(1, 1), Fraction(-1, 1), Fraction(0, 1)]
    """
    kids = tree.child_ids
    label_of = tree.label_ids
    out: list = [None] * len(kids)
    for a in reversed(range(len(kids))):
        out[a] = combine(out[k] for k in kids[a]) if kids[a] else row[label_of[a]]
    return out


class Utility:
    """Base class: a utility ``u(p, y)`` bound to a label tree (Sec. 2.1, docs/specification.md §5).

    Subclasses define :meth:`values` and :attr:`relevant_nodes`, and ``kind`` /
    :meth:`to_json` for the case file.

    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> u = Table(t, [0, 1])
    >>> isinstance(u, Utility), u.tree is t, u.defined_everywhere, u.kind
    (True, True, True, 'table')
    """

    kind = "utility"
    #: Whether the utility is defined at every prediction (False for ``per_atom``).
    defined_everywhere = True

    def __init__(self, tree: LabelTree):
        if not isinstance(tree, LabelTree):
            raise HUCError(f"{type(self).__name__}: expected a LabelTree, got {type(tree).__name__}")
        self.tree = tree

    def values(self, p: Sequence[Fraction], atom: int | None = None) -> tuple[Fraction, ...]:
        """``u(p, .)``: the leaf values at prediction ``p`` (label order) (A.1).

        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> TopK(t, 1).values([Fraction(1, 3), Fraction(2, 3)])
        (Fraction(0, 1), Fraction(1, 1))
        """
        raise NotImplementedError

    def score(self, p: Sequence[Fraction], atom: int | None = None) -> Fraction:
        """``mu_u(p) = sum_y p_y u(p, y)``, the predicted mean utility (Sec. 2.1).

        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> Table(t, [0, 1]).score([Fraction(1, 3), Fraction(2, 3)])
        Fraction(2, 3)
        """
        return sum((pi * ui for pi, ui in zip(p, self.values(p, atom))), Fraction(0))

    @property
    def relevant_nodes(self) -> tuple[str, ...]:
        """``V_T(u)`` in pre-order (Def. 3.2, docs/specification.md §3).

        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> Table(t, [1, 1, 0]).relevant_nodes, Table(t, [1, 0, 0]).relevant_nodes
        (('r',), ('r', 'a'))
        """
        raise NotImplementedError

    def to_json(self) -> dict:
        """The ``huc-case/1`` description of this utility (docs/specification.md §6).

        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> BinaryDecision(t, ["b"], ["a", "b"], "1/2").to_json()
        {'kind': 'binary_decision', 'S': ['b'], 'D': ['a', 'b'], 'tau': '1/2'}
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_json()})"


class Table(Utility):
    """Fixed leaf values ``u_b(p, y) = b_y`` (A.1, linear utilities): ``mu = <p, b>``.

    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"],
    ...                                    "vR": ["y3", "y4"]})
    >>> u = Table(t, [-1, 1, 1, 1])
    >>> u.values(None), u.relevant_nodes
    ((Fraction(-1, 1), Fraction(1, 1), Fraction(1, 1), Fraction(1, 1)), ('v0', 'vL'))
    """

    kind = "table"

    def __init__(self, tree, values, *, where: str = "values"):
        super().__init__(tree)
        self.b = _check_range(exact_vector(values, where, tree.K), where)
        self._relevant = _nonconstant_nodes(tree, [self.b])

    def values(self, p, atom=None):
        return self.b

    @property
    def relevant_nodes(self):
        return self._relevant

    def to_json(self):
        return {"kind": "table", "values": [fraction_text(v) for v in self.b]}


def class_indicator(tree: LabelTree, label: str) -> Table:
    """The class indicator ``e_j`` (A.1): the table with 1 at ``label`` and 0 elsewhere.

    >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    >>> class_indicator(t, "b").b
    (Fraction(0, 1), Fraction(1, 1), Fraction(0, 1))
    """
    j = tree.label_index(label)
    return Table(tree, [1 if y == j else 0 for y in range(tree.K)])


class Subtree(Table):
    """The subtree indicator ``J_a(y) = 1{y in Y_a}`` (A.1): ``mu = pi_a(p)``.

    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"],
    ...                                    "vR": ["y3", "y4"]})
    >>> Subtree(t, "vR").relevant_nodes
    ('v0',)
    """

    kind = "subtree"

    def __init__(self, tree, node):
        a = tree.id(node)
        below = set(tree.label_ids_below(a))
        super().__init__(tree, [1 if y in below else 0 for y in range(tree.K)])
        self.node = tree.nodes[a]

    def to_json(self):
        return {"kind": "subtree", "node": self.node}


class Rank(Utility):
    """Rank utility ``u_theta(p, y) = theta_{r_p(y)}`` (A.1).

    ``r_p(y)`` ranks labels by decreasing ``p_y``; ties go to the earlier label
    (convention).  ``V_T(u)``: every branching node, unless ``theta`` is constant.

    >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    >>> F = Fraction
    >>> Rank(t, [1, "1/2", 0]).values([F(1, 4), F(1, 2), F(1, 4)])
    (Fraction(1, 2), Fraction(1, 1), Fraction(0, 1))
    """

    kind = "rank"

    def __init__(self, tree, theta, *, where: str = "theta"):
        super().__init__(tree)
        self.theta = _check_range(exact_vector(theta, where, tree.K), where)
        constant = len(set(self.theta)) <= 1
        self._relevant = () if constant else tree.branching_nodes

    def values(self, p, atom=None):
        order = sorted(range(len(p)), key=lambda y: (-p[y], y))
        out = [None] * len(p)
        for r, y in enumerate(order):
            out[y] = self.theta[r]
        return tuple(out)

    @property
    def relevant_nodes(self):
        return self._relevant

    def to_json(self):
        return {"kind": "rank", "theta": [fraction_text(v) for v in self.theta]}


class TopK(Rank):
    """Top-``k`` correctness ``theta_r = 1{r <= k}`` (A.1); ``k = 1`` is top-1 correctness.

    >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    >>> TopK(t, 1).values([Fraction(1, 5), Fraction(3, 5), Fraction(1, 5)])
    (Fraction(0, 1), Fraction(1, 1), Fraction(0, 1))
    """

    kind = "top_k"

    def __init__(self, tree, k):
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= tree.K:
            raise HUCError(f"k: must be an integer from 1 to K = {tree.K}, got {k!r}")
        super().__init__(tree, [1 if r < k else 0 for r in range(tree.K)])
        self.k = k

    def to_json(self):
        return {"kind": "top_k", "k": self.k}


class Decision(Utility):
    """Decision-induced utility ``u(p, y) = U(psi(p), y)`` (A.1).

    ``psi(p)`` is the first maximiser, in ``order``, of ``sum_z p_z U(a, z)``.

    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> u = Decision(t, {"treat": [-1, 1], "wait": [0, 0]}, ["wait", "treat"])
    >>> u.values([Fraction(1, 2), Fraction(1, 2)]), u.values([Fraction(1, 3), Fraction(2, 3)])
    ((Fraction(0, 1), Fraction(0, 1)), (Fraction(-1, 1), Fraction(1, 1)))
    """

    kind = "decision"

    def __init__(self, tree, actions: Mapping[str, Sequence], order: Sequence[str] | None = None):
        super().__init__(tree)
        if not isinstance(actions, Mapping) or not actions:
            raise HUCError("actions: expected a non-empty mapping from action name to leaf payoffs")
        if order is not None and (isinstance(order, (str, bytes, Mapping)) or not isinstance(order, Sequence)
                                  or not all(isinstance(a, str) for a in order)):
            raise HUCError(f"order: expected a list of action names, got {order!r}")
        order = list(actions) if order is None else list(order)
        if sorted(order) != sorted(actions) or len(set(order)) != len(order):
            raise HUCError(f"order: must list each action exactly once, got {order!r}")
        self.order = tuple(order)
        self.payoffs = {a: _check_range(exact_vector(actions[a], f"actions[{a!r}]", tree.K),
                                        f"actions[{a!r}]") for a in self.order}
        self._relevant = _nonconstant_nodes(tree, self.payoffs.values())

    def action(self, p) -> str:
        """``psi(p)``: the first maximiser of the expected payoff (A.1).

        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> Decision(t, {"x": [1, 0], "y": [0, 1]}).action([Fraction(1, 2), Fraction(1, 2)])
        'x'
        """
        best, best_value = None, None
        for a in self.order:
            value = sum(pz * uz for pz, uz in zip(p, self.payoffs[a]))
            if best is None or value > best_value:
                best, best_value = a, value
        return best

    def values(self, p, atom=None):
        return self.payoffs[self.action(p)]

    @property
    def relevant_nodes(self):
        return self._relevant

    def to_json(self):
        return {"kind": "decision", "actions": {a: [fraction_text(v) for v in self.payoffs[a]]
                                                for a in self.order}, "order": list(self.order)}


class BinaryDecision(Utility):
    """Binary decision utility of J.1 / K.3: ``d(y) = 1{y in S} - tau 1{y in D}``.

    ``a(p) = 1{sum_y p_y d(y) >= 0}`` and ``u(p, y) = (2 a(p) - 1) d(y)``, so
    ``mu_u(p) = |p(S) - tau p(D)|``.

    >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    >>> u = BinaryDecision(t, S=["c"], D=["b", "c"], tau="1/2")
    >>> u.values([Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)]), u.relevant_nodes
    ((Fraction(0, 1), Fraction(-1, 2), Fraction(1, 2)), ('r',))
    """

    kind = "binary_decision"

    def __init__(self, tree, S: Sequence[str], D: Sequence[str], tau):
        super().__init__(tree)
        self.S = tuple(self._labels(tree, S, "S"))
        self.D = tuple(self._labels(tree, D, "D"))
        self.tau = exact(tau, "tau")
        s_ids = {tree.label_index(y) for y in self.S}
        d_ids = {tree.label_index(y) for y in self.D}
        self.d = _check_range(tuple((_ONE if y in s_ids else 0) - (self.tau if y in d_ids else 0)
                                    for y in range(tree.K)), "d")
        self.d = tuple(Fraction(v) for v in self.d)
        self._relevant = _nonconstant_nodes(tree, [self.d])

    @staticmethod
    def _labels(tree, names, where):
        if isinstance(names, (str, bytes)) or not isinstance(names, Sequence):
            raise HUCError(f"{where}: expected a list of labels")
        for i, y in enumerate(names):
            if not isinstance(y, str) or not tree.has_label(y):
                raise HUCError(f"{where}[{i}]: {y!r} is not a label")
        if len(set(names)) != len(names):
            raise HUCError(f"{where}: lists a label twice")
        return names

    def values(self, p, atom=None):
        act = sum(pz * dz for pz, dz in zip(p, self.d)) >= 0
        return self.d if act else tuple(-v for v in self.d)

    @property
    def relevant_nodes(self):
        return self._relevant

    def to_json(self):
        return {"kind": "binary_decision", "S": list(self.S), "D": list(self.D), "tau": fraction_text(self.tau)}


class Top1AtDepth(Utility):
    """Top-1 correctness at tree depth ``l`` (K.2): ``u(p, y) = 1{y in Y_{v_l(p)}}``.

    The candidates are the nodes at depth ``l`` and the leaves shallower than ``l`` (the
    depth-``l`` cut, convention); ``v_l(p)`` is the first maximiser of ``pi_v(p)`` in
    pre-order.  ``V_T(u)``: the branching nodes above depth ``l``.

    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "y3"], "vL": ["y1", "y2"]})
    >>> F = Fraction
    >>> u = Top1AtDepth(t, 1)
    >>> u.values([F(1, 3), F(1, 3), F(1, 3)]), u.relevant_nodes
    ((Fraction(1, 1), Fraction(1, 1), Fraction(0, 1)), ('v0',))
    """

    kind = "top1_at_depth"

    def __init__(self, tree, depth):
        super().__init__(tree)
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
            raise HUCError(f"depth: must be a non-negative integer, got {depth!r}")
        self.depth = depth
        kids = tree.child_ids
        self._candidates = tuple(a for a in range(len(kids)) if tree.depth(a) == depth
                                 or (not kids[a] and tree.depth(a) < depth))
        self._relevant = tuple(tree.nodes[a] for a in range(len(kids))
                               if len(kids[a]) >= 2 and tree.depth(a) < depth)

    def node(self, p) -> str:
        """``v_l(p)``: the first candidate of largest predicted mass (K.2).

        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> Top1AtDepth(t, 1).node([Fraction(1, 4), Fraction(1, 4), Fraction(1, 2)])
        'a'
        """
        masses = subtree_sums(self.tree, p)
        best = max(self._candidates, key=lambda a: (masses[a], -a))
        return self.tree.nodes[best]

    @property
    def candidate_ids(self) -> tuple[int, ...]:
        """The pre-order ids of the depth-``l`` cut: the nodes at depth ``l`` and the shallower
        leaves, among which ``v_l(p)`` is chosen (K.2, docs/specification.md §5 convention).

        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> Top1AtDepth(t, 2).candidate_ids  # y1, y2 at depth 2 and the leaf y3 at depth 1
        (2, 3, 4)
        """
        return self._candidates

    def values(self, p, atom=None):
        below = set(self.tree.label_ids_below(self.tree.id(self.node(p))))
        return tuple(_ONE if y in below else Fraction(0) for y in range(len(p)))

    @property
    def relevant_nodes(self):
        return self._relevant

    def to_json(self):
        return {"kind": "top1_at_depth", "depth": self.depth}


#: The deepest nesting of aggregated utilities accepted (App. G builds ``u_S`` from a base
#: utility; nesting is legal but bounded, so that no input reaches Python's recursion limit).
MAX_NESTING = 32


class Aggregated(Utility):
    """The aggregated utility ``u_S(p, y) = mu_{u, b_S(y)}(p)`` of App. G.

    ``S`` is an ancestor-closed set of internal nodes; ``b_S(y)`` is the first node on the
    root-to-``y`` path that is not in ``S``.  ``V_T(u_S) = S ∩ V_T(u)``.

    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"],
    ...                                    "vR": ["y3", "y4"]})
    >>> u = Aggregated(Table(t, [-1, 1, 1, 1]), ["v0"])
    >>> u.values([Fraction(1, 4)] * 4), u.relevant_nodes
    ((Fraction(0, 1), Fraction(0, 1), Fraction(1, 1), Fraction(1, 1)), ('v0',))
    """

    kind = "aggregated"

    def __init__(self, base: Utility, S: Sequence[str]):
        if not isinstance(base, Utility):
            raise HUCError("base: expected a utility")
        tree = base.tree
        super().__init__(tree)
        self.base = base
        if isinstance(S, (str, bytes)) or not isinstance(S, Sequence):
            raise HUCError("S: expected a list of internal nodes")
        ids = set()
        depth, inner = 1, base
        while isinstance(inner, Aggregated):
            depth, inner = depth + 1, inner.base
        if depth > MAX_NESTING:
            raise HUCError(f"base: aggregated utilities nested {depth} deep; at most {MAX_NESTING}")
        for i, v in enumerate(S):
            if not isinstance(v, str) or v not in tree:
                raise HUCError(f"S[{i}]: {v!r} is not a node of the tree")
            if tree.id(v) in ids:
                raise HUCError(f"S[{i}]: {v!r} is listed twice")
            if tree.is_leaf(v):
                raise HUCError(f"S[{i}]: {v!r} is a leaf; S holds internal nodes")
            ids.add(tree.id(v))
        for i, v in enumerate(S):
            par = tree.parent_ids[tree.id(v)]
            if par >= 0 and par not in ids:
                raise HUCError(f"S[{i}]: {v!r} is in S but its parent {tree.nodes[par]!r} is not "
                               f"(S must be ancestor-closed)")
        self.S = tuple(tree.nodes[a] for a in sorted(ids))
        self._ids = frozenset(ids)
        # b_S(y) for every label: walk down the path while the node is in S.
        self._boundary = []
        for y in range(tree.K):
            path = tree.path_ids(y)
            k = 0
            while k < len(path) - 1 and path[k] in self._ids:
                k += 1
            self._boundary.append(path[k])
        self.defined_everywhere = base.defined_everywhere
        base_rel = set(base.relevant_nodes)
        self._relevant = tuple(v for v in self.S if v in base_rel)

    def boundary(self, y: str) -> str:
        """``b_S(y)``: where the root-to-``y`` path leaves ``S`` (App. G).

        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> agg = Aggregated(Table(t, [1, 0, 0]), ["r"])
        >>> agg.boundary("y1"), agg.boundary("y3")
        ('a', 'y3')
        """
        return self.tree.nodes[self._boundary[self.tree.label_index(y)]]

    @property
    def boundary_ids(self) -> tuple[int, ...]:
        """``b_S(y)`` for every label, as pre-order node ids in label order (App. G).

        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> Aggregated(Table(t, [1, 0, 0]), ["r"]).boundary_ids  # a, a, y3
        (1, 1, 4)
        """
        return tuple(self._boundary)

    def values(self, p, atom=None):
        dec = TreeDecomposition(self.tree, p, self.base.values(p, atom))
        return tuple(dec.mu(b) for b in self._boundary)

    @property
    def relevant_nodes(self):
        return self._relevant

    def to_json(self):
        return {"kind": "aggregated", "base": self.base.to_json(), "S": list(self.S)}


class PerAtom(Utility):
    """Explicit values ``u(p_i, .)`` for every atom ``i`` (golden vectors).

    They describe the utility only at the audited predictions: ``V_T(u)`` is read off
    the given rows (convention), and boosting, which moves predictions, rejects them.

    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> u = PerAtom(t, [[0, 0], ["1/2", -1]])
    >>> u.values(None, atom=1), u.relevant_nodes
    ((Fraction(1, 2), Fraction(-1, 1)), ('r',))
    """

    kind = "per_atom"
    defined_everywhere = False

    def __init__(self, tree, rows: Sequence[Sequence], *, where: str = "values"):
        super().__init__(tree)
        if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence):
            raise HUCError(f"{where}: expected one list of leaf values per atom")
        self.rows = tuple(_check_range(exact_vector(r, f"{where}[{i}]", tree.K), f"{where}[{i}]")
                          for i, r in enumerate(rows))
        self._relevant = _nonconstant_nodes(tree, self.rows)

    def values(self, p, atom=None):
        if atom is None or not 0 <= atom < len(self.rows):
            raise HUCError(f"per_atom utility: no values for atom {atom!r} ({len(self.rows)} rows given)")
        return self.rows[atom]

    @property
    def relevant_nodes(self):
        return self._relevant

    def to_json(self):
        return {"kind": "per_atom", "values": [[fraction_text(v) for v in r] for r in self.rows]}
