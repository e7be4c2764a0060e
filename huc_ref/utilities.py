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
from functools import cached_property

import numpy as np

from .decomposition import TreeDecomposition, subtree_sums
from .errors import HUCError, given, is_integer
from .rational import NUMBER_SCHEMA, exact, exact_vector, fraction_text, shown
from .tree import LabelTree

__all__ = ["Utility", "Table", "Subtree", "Rank", "TopK", "Decision", "BinaryDecision",
           "Top1AtDepth", "Aggregated", "PerAtom", "class_indicator", "KINDS", "utility_from_json",
           "utility_schema", "RationalRow"]

#: Every utility family by its ``huc-case/1`` kind (filled as the classes are defined).
KINDS: dict[str, type] = {}

_NUMBERS = {"type": "array", "items": NUMBER_SCHEMA}
_NAMES = {"type": "array", "items": {"type": "string"}}

_ONE = Fraction(1)


def _check_range(values, where):
    for i, v in enumerate(values):
        if not -1 <= v <= 1:
            raise HUCError(f"{where}[{i}]: utility value {shown(v)} is outside [-1, 1]", kind="range")
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
    """Subtree minima or maxima of leaf values for every node, combined as subtree sums are (C.1).

    :func:`~huc_ref.decomposition.subtree_sums` with ``min`` or ``max`` for ``+``.

    Parameters
    ----------
    tree : LabelTree
        The tree.
    row : sequence
        One value per label, in label order.
    combine : callable
        ``min`` or ``max``, in place of ``+``.

    Returns
    -------
    list
        The combined values by pre-order node id.

    Examples
    --------
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
    """Base class: a utility ``u(p, y) in [-1, 1]`` bound to a label tree (Sec. 2.1, docs/specification.md §5).

    A family subclasses it with ``kind``, ``fields`` (its ``huc-case/1`` fields with their JSON
    Schemas), :meth:`values`, :attr:`relevant_nodes`, :meth:`to_json` and :meth:`from_json`,
    and for the fast path and certified float64 :meth:`vectorised`, :meth:`decide` and
    :meth:`unmoved_by`.  A subclass is registered in :data:`KINDS` by its ``kind``; one that
    redefines :meth:`values` without the fast forms and the decision hooks gets the generic
    ones, never its parent's.

    Parameters
    ----------
    tree : LabelTree
        The label tree the utility is bound to.

    Raises
    ------
    HUCError
        Of kind ``type`` where ``tree`` is not a :class:`~huc_ref.tree.LabelTree`.

    Notes
    -----
    ``mu_u(p) = sum_y p_y u(p, y)`` is the score (:meth:`score`); :attr:`relevant_nodes` is
    ``V_T(u)``: the internal nodes with ``d_v >= 2`` at which ``u(p, .)`` is not constant on
    ``Y_v`` for some prediction ``p``, read structurally off each family's payoff table
    (docs/specification.md §3).  Outside ``V_T(u)`` every node contribution is identically zero.

    Examples
    --------
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> u = Table(t, [0, 1])
    >>> isinstance(u, Utility), u.tree is t, u.defined_everywhere, u.kind
    (True, True, True, 'table')
    """

    kind = "utility"
    #: Whether the utility is defined at every prediction (False for ``per_atom``).
    defined_everywhere = True
    #: The family's ``huc-case/1`` fields, each with its JSON Schema; ``optional`` may be absent.
    fields: dict = {}
    optional: frozenset = frozenset()
    #: How many aggregations (App. G) wrap a base family: 0 for a base family.
    nesting = 0
    #: For top-1 correctness at a depth (K.2): that depth, which the fast path's path form uses.
    top1_depth = None

    def __init_subclass__(cls, **kwargs):
        """Register a family by its ``kind``; a subclass that redefines :meth:`values` but not
        the fast forms and the decision hooks gets the generic ones (exact values row by row,
        :meth:`decide` on the row's rationals, :meth:`unmoved_by` False), never its parent's."""
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:
            KINDS[cls.kind] = cls
        if "values" in cls.__dict__:
            for name in ("vectorised", "top1_depth", "decide", "unmoved_by"):
                if name not in cls.__dict__:
                    setattr(cls, name, Utility.__dict__[name])

    def __init__(self, tree: LabelTree):
        if not isinstance(tree, LabelTree):
            raise HUCError(f"{type(self).__name__}: expected a LabelTree, got {type(tree).__name__}", kind="type")
        self.tree = tree

    def values(self, p: Sequence[Fraction], atom: int | None = None) -> tuple[Fraction, ...]:
        """``u(p, .)``: the leaf values at a prediction, in label order (A.1).

        Parameters
        ----------
        p : sequence of Fraction
            The prediction, in the tree's label order.
        atom : int, optional
            The atom's index (a :class:`PerAtom` utility reads its row by it; the others ignore
            it).

        Returns
        -------
        tuple of Fraction
            One value in [-1, 1] per label.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> TopK(t, 1).values([Fraction(1, 3), Fraction(2, 3)])
        (Fraction(0, 1), Fraction(1, 1))
        """
        raise NotImplementedError

    def score(self, p: Sequence[Fraction], atom: int | None = None) -> Fraction:
        """``mu_u(p) = sum_y p_y u(p, y)``, the predicted mean utility (Sec. 2.1).

        Parameters
        ----------
        p : sequence of Fraction
            The prediction, in the tree's label order.
        atom : int, optional
            The atom's index (a :class:`PerAtom` utility reads its row by it; the others ignore
            it).

        Returns
        -------
        Fraction
            The score.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> Table(t, [0, 1]).score([Fraction(1, 3), Fraction(2, 3)])
        Fraction(2, 3)
        """
        return sum((pi * ui for pi, ui in zip(p, self.values(p, atom))), Fraction(0))

    @property
    def relevant_nodes(self) -> tuple[str, ...]:
        """``V_T(u)``, the relevant nodes, in pre-order (Def. 3.2, docs/specification.md §3).

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> Table(t, [1, 1, 0]).relevant_nodes, Table(t, [1, 0, 0]).relevant_nodes
        (('r',), ('r', 'a'))
        """
        raise NotImplementedError

    def to_json(self) -> dict:
        """The ``huc-case/1`` description of this utility (docs/specification.md §6).

        Returns
        -------
        dict
            ``{"kind": ..., <its fields>}``, numbers as exact text.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> BinaryDecision(t, ["b"], ["a", "b"], "1/2").to_json()
        {'kind': 'binary_decision', 'S': ['b'], 'D': ['a', 'b'], 'tau': '1/2'}
        """
        raise NotImplementedError

    @classmethod
    def from_json(cls, tree: LabelTree, spec: Mapping, where: str):
        """The utility a checked ``huc-case/1`` description of this kind describes (A.1, K.2-K.6).

        The families are those of docs/specification.md §5.

        Parameters
        ----------
        tree : LabelTree
            The tree.
        spec : mapping
            The description, its fields checked present (:func:`utility_from_json`).
        where : str
            The place the messages name (``"utilities.u"``).

        Returns
        -------
        Utility
            The utility.

        Raises
        ------
        HUCError
            For a field the family refuses.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> TopK.from_json(t, {"kind": "top_k", "k": 1}, "utilities.u").to_json()
        {'kind': 'top_k', 'k': 1}
        """
        raise NotImplementedError

    def vectorised(self, rows) -> tuple[np.ndarray, np.ndarray | None]:
        """``u(p_i, .)`` (A.1) for many rows in float64 (App. F.4's fast path), with the rows float64 cannot decide.

        This generic form takes every row's values exactly from :meth:`values` (for families
        without a vectorised form).

        Parameters
        ----------
        rows : huc_ref.fast.utilities.FloatRows
            The fast path's rows: the predictions ``rows.P`` (``n x K``, label order), their subtree
            masses, the exact rows behind them and the relative error bound ``rows.rel`` of sums
            over them.

        Returns
        -------
        values : numpy.ndarray of shape (n, K)
            ``u(p_i, .)`` for every row, in float64.
        unsure : numpy.ndarray of bool of shape (n,) or None
            The rows whose decision float64 could not certify (they are then decided exactly by
            :meth:`values`); None where there is no decision.

        Examples
        --------
        >>> from huc_ref.fast.utilities import utility_values
        >>> from huc_ref.fast.tree import FastTree
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> class Halves(Table):
        ...     def values(self, p, atom=None):
        ...         return tuple(Fraction(1, 2) for _ in p)
        >>> utility_values(Halves(t, [1, 0]), FastTree(t), np.array([[0.5, 0.5]])).tolist()  # not Table's form
        [[0.5, 0.5]]
        """
        U = np.array([[float(x) for x in rows.exact.values(self, i, rows.atom(i))] for i in range(rows.n)])
        return U.reshape(rows.n, rows.K), None

    def decide(self, row) -> tuple[Fraction, ...]:
        """``u(f, .)`` (A.1) at a prediction ``f`` known through a row: the family's exact decision.

        ``row`` answers what a decision asks of ``f`` exactly (docs/specification.md §4 and §5):
        :meth:`RationalRow.rationals` (``f`` itself, where it is rational),
        :meth:`~RationalRow.sign` of a linear form ``sum_y f_y d_y``, :meth:`~RationalRow.ranked`
        (a rational row ordered as ``f``) and :meth:`~RationalRow.first_largest` (the first node of
        largest mass ``pi_a(f)``).  A boosted row of certified float64
        (``huc_ref.fast.boosted.BoostedRow``) holds an exact state whose ``f`` is irrational, and
        answers these from exact forms and Arb's enclosures.  This generic form is :meth:`values`
        on the rationals: on a boosted row, undecided.

        Parameters
        ----------
        row : RationalRow or huc_ref.fast.boosted.BoostedRow
            What a decision may ask of the prediction ``f`` (:class:`RationalRow`: ``f`` itself,
            rational).

        Returns
        -------
        tuple of Fraction
            ``u(f, .)``, in label order.

        Raises
        ------
        huc_ref.fast.context.Undecided
            Where the row cannot answer (then the certified engine decides).

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> Decision(t, {"x": [1, 0], "y": [0, 1]}).decide(RationalRow(t, [Fraction(1, 3), Fraction(2, 3)]))
        (Fraction(0, 1), Fraction(1, 1))
        """
        return self.values(row.rationals(), row.atom)

    def unmoved_by(self, a: int) -> bool:
        """Whether an update at a node leaves the values and score exactly as they were on every row (Algorithm 1).

        Algorithm 1 moves mass only among ``a``'s children, each child's subtree scaled as a whole;
        UC-Boost's update is the root's.  The certified backend then keeps a row's exact decisions
        through such updates.  This generic form says False (not known).

        Parameters
        ----------
        a : int
            The updated node's id.

        Returns
        -------
        bool
            True where the values and the score are certainly unmoved.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> Decision(t, {"x": [1, 0], "y": [0, 1]}).unmoved_by(0)
        False
        """
        return False

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_json()})"


class RationalRow:
    """A prediction ``p`` known exactly, as :meth:`Utility.decide` reads it (A.1, docs/specification.md §5).

    Every question a family's decision asks is answered on ``p`` itself.  The certified
    backend's boosted rows (``huc_ref.fast.boosted.BoostedRow``) answer the same questions on
    an irrational ``f``.

    Parameters
    ----------
    tree : LabelTree
        The tree.
    p : sequence of Fraction
        The prediction, in label order.
    atom : int, optional
        The atom's index (passed on to :meth:`Utility.values`).

    Examples
    --------
    >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
    >>> row = RationalRow(t, [Fraction(1, 4), Fraction(1, 4), Fraction(1, 2)])
    >>> row.sign([1, 1, -1]), row.ranked() == row.rationals(), t.nodes[row.first_largest([1, 4])]  # a ties y3: a
    (0, True, 'a')
    """

    def __init__(self, tree: LabelTree, p: Sequence[Fraction], atom: int | None = None):
        self.tree, self.p, self.atom = tree, tuple(p), atom

    def rationals(self) -> tuple[Fraction, ...]:
        """The prediction ``p`` itself (A.2: a point of the simplex).

        Returns
        -------
        tuple of Fraction
            ``p``.

        Examples
        --------
        >>> RationalRow(LabelTree.from_children("r", {"r": ["a", "b"]}), [Fraction(1, 3), Fraction(2, 3)]).rationals()
        (Fraction(1, 3), Fraction(2, 3))
        """
        return self.p

    def sign(self, d: Sequence) -> int:
        """The sign of ``sum_y p_y d_y`` (J.1's margin of a binary decision), exactly.

        Parameters
        ----------
        d : sequence of Fraction
            The linear form's coefficients, in label order.

        Returns
        -------
        int
            -1, 0 or 1.

        Examples
        --------
        >>> RationalRow(LabelTree.from_children("r", {"r": ["a", "b"]}), [Fraction(1, 3), Fraction(2, 3)]).sign([2, -1])
        0
        """
        margin = sum((x * v for x, v in zip(self.p, d)), Fraction(0))
        return (margin > 0) - (margin < 0)

    def ranked(self) -> tuple[Fraction, ...]:
        """A rational row ordered as ``p``, ties kept: ``p`` itself (A.1's ``r_p`` reads the order alone).

        Returns
        -------
        tuple of Fraction
            ``p``.

        Examples
        --------
        >>> RationalRow(LabelTree.from_children("r", {"r": ["a", "b"]}), [Fraction(1, 3), Fraction(2, 3)]).ranked()
        (Fraction(1, 3), Fraction(2, 3))
        """
        return self.p

    def first_largest(self, nodes: Sequence[int]) -> int:
        """The first node of largest mass ``pi_a(p)`` among some nodes (C.1; K.2's ``v_l``).

        Parameters
        ----------
        nodes : sequence of int
            Node ids, in pre-order.

        Returns
        -------
        int
            The first of them (in pre-order) whose subtree mass is largest.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> RationalRow(t, [Fraction(1, 2), Fraction(1, 2)]).first_largest([1, 2])  # a tie: the first
        1
        """
        masses = subtree_sums(self.tree, self.p)
        return max(nodes, key=lambda a: (masses[a], -a))


class Table(Utility):
    """Fixed leaf values ``u_b(p, y) = b_y`` (A.1, linear utilities): ``mu = <p, b>``.

    Parameters
    ----------
    tree : LabelTree
        The tree.
    values : sequence of exact numbers
        ``b``: one value in [-1, 1] per label, in label order.
    where : str, default "values"
        The place the messages name.

    Attributes
    ----------
    b : tuple of Fraction
        The values.

    Raises
    ------
    HUCError
        For values that are not ``K`` exact numbers in [-1, 1].

    Examples
    --------
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

    fields = {"values": _NUMBERS}

    @classmethod
    def from_json(cls, tree, spec, where):
        return cls(tree, spec["values"])

    def vectorised(self, rows):
        return np.broadcast_to(np.array([float(x) for x in self.b]), (rows.n, rows.K)), None

    def decide(self, row):
        """The fixed values, whatever the row (A.1).

        Parameters
        ----------
        row : RationalRow or huc_ref.fast.boosted.BoostedRow
            What a decision may ask of the prediction ``f`` (:class:`RationalRow`: ``f`` itself,
            rational).

        Returns
        -------
        tuple of Fraction
            ``b``.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> Table(t, [0, 1]).decide(None)
        (Fraction(0, 1), Fraction(1, 1))
        """
        return self.b

    def unmoved_by(self, a):
        """Whether ``b`` is constant on the labels below a node, so that its split moves nothing (Algorithm 1).

        A row's values, and its score (the mean of ``a``'s labels is ``b`` there, A.3), then do not
        move with ``a``'s split.

        Parameters
        ----------
        a : int
            The updated node's id.

        Returns
        -------
        bool
            Whether ``b`` takes one value on the labels below ``a``.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> Table(t, [1, 1, 0]).unmoved_by(1), Table(t, [1, 0, 0]).unmoved_by(1)
        (True, False)
        """
        return len({self.b[y] for y in self.tree.label_ids_below(a)}) == 1


def class_indicator(tree: LabelTree, label: str) -> Table:
    """The class indicator ``e_j`` (A.1): the table with 1 at one label and 0 elsewhere.

    Parameters
    ----------
    tree : LabelTree
        The tree.
    label : str
        The label ``j``.

    Returns
    -------
    Table
        The indicator.

    Raises
    ------
    HUCError
        Of kind ``reference`` where ``label`` is not a leaf.

    Examples
    --------
    >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    >>> class_indicator(t, "b").b
    (Fraction(0, 1), Fraction(1, 1), Fraction(0, 1))
    """
    j = tree.label_index(label)
    return Table(tree, [1 if y == j else 0 for y in range(tree.K)])


class Subtree(Table):
    """The subtree indicator ``J_a(y) = 1{y in Y_a}`` (A.1): ``mu = pi_a(p)``.

    Parameters
    ----------
    tree : LabelTree
        The tree.
    node : str or int
        The node ``a``, by name or id.

    Attributes
    ----------
    node : str
        The node's name.

    Raises
    ------
    HUCError
        Of kind ``reference`` where ``node`` is not a node.

    Examples
    --------
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

    fields = {"node": {"type": "string"}}

    @classmethod
    def from_json(cls, tree, spec, where):
        node = spec["node"]
        if not isinstance(node, str) or node not in tree:
            raise HUCError(f"node: {given(node)} is not a node of the tree", kind="reference")
        return cls(tree, node)


class Rank(Utility):
    """The rank utility ``u_theta(p, y) = theta_{r_p(y)}`` (A.1).

    ``r_p(y)`` ranks labels by decreasing ``p_y``; ties go to the earlier label (convention).
    ``V_T(u)``: every branching node, unless ``theta`` is constant.

    Parameters
    ----------
    tree : LabelTree
        The tree.
    theta : sequence of exact numbers
        One value in [-1, 1] per rank, the first for the most probable label.
    where : str, default "theta"
        The place the messages name.

    Attributes
    ----------
    theta : tuple of Fraction
        The values by rank.

    Raises
    ------
    HUCError
        For ``theta`` that is not ``K`` exact numbers in [-1, 1].

    Examples
    --------
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

    fields = {"theta": _NUMBERS}

    @classmethod
    def from_json(cls, tree, spec, where):
        return cls(tree, spec["theta"])

    def vectorised(self, rows):
        """``theta`` at each label's rank (A.1) in float64, for many rows.

        Parameters
        ----------
        rows : huc_ref.fast.utilities.FloatRows
            The fast path's rows: the predictions ``rows.P`` (``n x K``, label order), their subtree
            masses, the exact rows behind them and the relative error bound ``rows.rel`` of sums
            over them.

        Returns
        -------
        values : numpy.ndarray of shape (n, K)
            ``u(p_i, .)`` for every row, in float64.
        unsure : numpy.ndarray of bool of shape (n,) or None
            The rows whose decision float64 could not certify (they are then decided exactly by
            :meth:`values`); None where there is no decision.

        Notes
        -----
        Each row is sorted by decreasing entry (float comparisons of the entries are exact), ties
        by label order: numpy's unstable sort (faster than its stable one: ``python
        bench/shapes.py``'s ``10 x 10 others``), then the rows with equal entries sorted again
        stably.  Rounded rationals keep their strict order, but two distinct ones may round to one
        float: with rationals behind the floats, those rows are the uncertain ones.

        Examples
        --------
        >>> from huc_ref.fast.utilities import FloatRows
        >>> from huc_ref.fast.tree import FastTree
        >>> from huc_ref.fast.numbers import ExactRows
        >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
        >>> P = np.array([[0.25, 0.5, 0.25], [0.5, 0.25, 0.25]])
        >>> Rank(t, [1, "1/2", 0]).vectorised(FloatRows(FastTree(t), P, None, None, ExactRows(P)))[0].tolist()
        [[0.5, 1.0, 0.0], [1.0, 0.5, 0.0]]
        """
        P, (n, K) = rows.P, rows.P.shape  # rank by decreasing p, ties by label order
        order = np.argsort(-P, axis=1)
        tied = np.flatnonzero((np.diff(np.take_along_axis(P, order, axis=1), axis=1) == 0).any(axis=1))
        if len(tied):
            order[tied] = np.argsort(-P[tied], axis=1, kind="stable")
        ranks = np.empty_like(order)
        np.put_along_axis(ranks, order, np.broadcast_to(np.arange(K), (n, K)), axis=1)
        U = np.array([float(x) for x in self.theta])[ranks]
        unsure = np.zeros(n, dtype=bool)
        if rows.exact.exact:
            unsure[tied] = True
        return U, unsure

    def decide(self, row):
        """``theta`` at the ranks of a row ordered as ``f`` (A.1's ``r_p`` depends on the order alone).

        Parameters
        ----------
        row : RationalRow or huc_ref.fast.boosted.BoostedRow
            What a decision may ask of the prediction ``f`` (:class:`RationalRow`: ``f`` itself,
            rational).

        Returns
        -------
        tuple of Fraction
            ``u(f, .)``, in label order.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
        >>> Rank(t, [1, "1/2", 0]).decide(RationalRow(t, [Fraction(1, 4), Fraction(1, 2), Fraction(1, 4)]))
        (Fraction(1, 2), Fraction(1, 1), Fraction(0, 1))
        """
        return self.values(row.ranked(), row.atom)


class TopK(Rank):
    """Top-``k`` correctness ``theta_r = 1{r <= k}`` (A.1); ``k = 1`` is top-1 correctness.

    Parameters
    ----------
    tree : LabelTree
        The tree.
    k : int
        An integer from 1 to ``K``.

    Attributes
    ----------
    k : int
        ``k``.

    Raises
    ------
    HUCError
        Of kind ``structure`` for a ``k`` that is not such an integer.

    Examples
    --------
    >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    >>> TopK(t, 1).values([Fraction(1, 5), Fraction(3, 5), Fraction(1, 5)])
    (Fraction(0, 1), Fraction(1, 1), Fraction(0, 1))
    """

    kind = "top_k"

    def __init__(self, tree, k):
        if not is_integer(k) or not 1 <= k <= tree.K:
            raise HUCError(f"k: must be an integer from 1 to K = {tree.K}, got {given(k)}", kind="structure")
        k = int(k)
        super().__init__(tree, [1 if r < k else 0 for r in range(tree.K)])
        self.k = k

    def to_json(self):
        return {"kind": "top_k", "k": self.k}

    fields = {"k": {"type": "integer"}}

    @classmethod
    def from_json(cls, tree, spec, where):
        return cls(tree, spec["k"])

    def vectorised(self, rows):
        """:meth:`Rank.vectorised` for ``theta_r = 1{r <= k}`` (A.1) without sorting each row.

        Parameters
        ----------
        rows : huc_ref.fast.utilities.FloatRows
            The fast path's rows: the predictions ``rows.P`` (``n x K``, label order), their subtree
            masses, the exact rows behind them and the relative error bound ``rows.rel`` of sums
            over them.

        Returns
        -------
        values : numpy.ndarray of shape (n, K)
            ``u(p_i, .)`` for every row, in float64.
        unsure : numpy.ndarray of bool of shape (n,) or None
            The rows whose decision float64 could not certify (they are then decided exactly by
            :meth:`values`); None where there is no decision.

        Notes
        -----
        A label is among the first ``k`` when its entry exceeds the row's ``k``-th largest
        (``np.partition``, linear in ``K``), or equals it and is among the first of those equal to
        it, in label order, that the ``k`` places leave room for (the convention of ``r_p``).  Only
        such a tie, more entries equal to it than places, can hide the answer from float64
        (rounding keeps every strict order of the rationals): those rows are the uncertain ones
        (``python bench/shapes.py``'s ``flat 100``: sorting every row was most of that audit).

        Examples
        --------
        >>> from huc_ref.fast.utilities import FloatRows
        >>> from huc_ref.fast.tree import FastTree
        >>> from huc_ref.fast.numbers import ExactRows
        >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c", "d"]})
        >>> P = np.array([[0.1, 0.4, 0.4, 0.1], [0.25, 0.25, 0.25, 0.25]])
        >>> U, unsure = TopK(t, 2).vectorised(FloatRows(FastTree(t), P, None, None, ExactRows(P)))
        >>> U.tolist(), unsure.tolist()  # the two 0.4s; the first two of four equal entries
        ([[0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]], [False, False])
        """
        P, k = rows.P, self.k
        n, K = P.shape
        kth = np.partition(P, K - k, axis=1)[:, K - k, None]  # each row's k-th largest entry
        above, at = P > kth, P == kth
        ties = np.count_nonzero(at, axis=1)
        room = k - np.count_nonzero(above, axis=1)  # places left for the entries equal to it
        U = above | at
        split = np.flatnonzero(ties > room)  # more of them than places: the first, in label order
        if len(split):
            U[split] = above[split] | (at[split] & (np.cumsum(at[split], axis=1) <= room[split, None]))
        unsure = ties > room if rows.exact.exact else np.zeros(n, dtype=bool)
        return U.astype(float), unsure


class Decision(Utility):
    """The decision-induced utility ``u(p, y) = U(psi(p), y)`` (A.1).

    ``psi(p)`` is the first maximiser, in ``order``, of ``sum_z p_z U(a, z)``.  Every action
    of the table counts as possible (a never-chosen action can only enlarge ``V_T(u)``).

    Parameters
    ----------
    tree : LabelTree
        The tree.
    actions : mapping of str to sequence of exact numbers
        Each action's payoffs ``U(a, .)``: one value in [-1, 1] per label (a non-empty mapping).
    order : sequence of str, optional
        The actions' order, which breaks ties (each action once); by default the mapping's.

    Attributes
    ----------
    order : tuple of str
        The actions, in order.
    payoffs : dict of str to tuple of Fraction
        Each action's payoffs.

    Raises
    ------
    HUCError
        For an empty ``actions``, an ``order`` that does not list each action once, or
        payoffs that are not ``K`` exact numbers in [-1, 1].

    Examples
    --------
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> u = Decision(t, {"treat": [-1, 1], "wait": [0, 0]}, ["wait", "treat"])
    >>> u.values([Fraction(1, 2), Fraction(1, 2)]), u.values([Fraction(1, 3), Fraction(2, 3)])
    ((Fraction(0, 1), Fraction(0, 1)), (Fraction(-1, 1), Fraction(1, 1)))
    """

    kind = "decision"

    def __init__(self, tree, actions: Mapping[str, Sequence], order: Sequence[str] | None = None):
        super().__init__(tree)
        if not isinstance(actions, Mapping) or not actions:
            raise HUCError("actions: expected a non-empty mapping from action name to leaf payoffs", kind="type")
        if order is not None and (isinstance(order, (str, bytes, Mapping)) or not isinstance(order, Sequence)
                                  or not all(isinstance(a, str) for a in order)):
            raise HUCError(f"order: expected a list of action names, got {given(order)}", kind="type")
        order = list(actions) if order is None else list(order)
        if sorted(order) != sorted(actions) or len(set(order)) != len(order):
            raise HUCError(f"order: must list each action exactly once, got {given(order)}", kind="structure")
        self.order = tuple(order)
        self.payoffs = {a: _check_range(exact_vector(actions[a], f"actions[{a!r}]", tree.K),
                                        f"actions[{a!r}]") for a in self.order}
        self._relevant = _nonconstant_nodes(tree, self.payoffs.values())

    def action(self, p) -> str:
        """``psi(p)``: the first maximiser of the expected payoff (A.1).

        Parameters
        ----------
        p : sequence of Fraction
            The prediction, in label order.

        Returns
        -------
        str
            The first action, in ``order``, of largest ``sum_z p_z U(a, z)``.

        Examples
        --------
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

    fields = {"actions": {"type": "object", "additionalProperties": _NUMBERS},
              "order": {"oneOf": [{"type": "null"}, _NAMES]}}
    optional = frozenset({"order"})

    @classmethod
    def from_json(cls, tree, spec, where):
        return cls(tree, spec["actions"], spec.get("order"))

    def vectorised(self, rows):
        A = np.array([[float(x) for x in self.payoffs[a]] for a in self.order])
        j, unsure = rows.first_max(rows.P @ A.T, rows.rel * (np.abs(rows.P) @ np.abs(A).T))
        return A[j], unsure


class BinaryDecision(Utility):
    """The binary decision utility of J.1 / K.3: ``d(y) = 1{y in S} - tau 1{y in D}``.

    ``a(p) = 1{sum_y p_y d(y) >= 0}`` and ``u(p, y) = (2 a(p) - 1) d(y)``, so
    ``mu_u(p) = |p(S) - tau p(D)|``.

    Parameters
    ----------
    tree : LabelTree
        The tree.
    S : sequence of str
        The labels of the event acted on, each once.
    D : sequence of str
        The labels the threshold weighs, each once.
    tau : int, Fraction or str
        The threshold, exactly; every ``d(y)`` must lie in [-1, 1].

    Attributes
    ----------
    S, D : tuple of str
        The label sets.
    tau : Fraction
        The threshold.
    d : tuple of Fraction
        ``d(y)`` by label.

    Raises
    ------
    HUCError
        For names that are not labels or are listed twice, a ``tau`` that is not exact, or a
        ``d(y)`` outside [-1, 1].

    Examples
    --------
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
            raise HUCError(f"{where}: expected a list of labels", kind="type")
        for i, y in enumerate(names):
            if not isinstance(y, str) or not tree.has_label(y):
                raise HUCError(f"{where}[{i}]: {y!r} is not a label", kind="reference")
        if len(set(names)) != len(names):
            raise HUCError(f"{where}: lists a label twice", kind="structure")
        return names

    def values(self, p, atom=None):
        act = sum(pz * dz for pz, dz in zip(p, self.d)) >= 0
        return self.d if act else tuple(-v for v in self.d)

    @property
    def relevant_nodes(self):
        return self._relevant

    def to_json(self):
        return {"kind": "binary_decision", "S": list(self.S), "D": list(self.D), "tau": fraction_text(self.tau)}

    fields = {"S": _NAMES, "D": _NAMES, "tau": NUMBER_SCHEMA}

    @classmethod
    def from_json(cls, tree, spec, where):
        return cls(tree, spec["S"], spec["D"], spec["tau"])

    def vectorised(self, rows):
        d = np.array([float(x) for x in self.d])
        margin = rows.P @ d
        unsure = np.abs(margin) <= rows.rel * (np.abs(rows.P) @ np.abs(d))  # a margin float64 cannot tell from 0
        return np.where((margin >= 0)[:, None], d, -d), unsure

    def decide(self, row):
        """``d`` or ``-d`` by the sign of the margin ``sum_y f_y d_y`` (J.1: act where it is >= 0).

        Parameters
        ----------
        row : RationalRow or huc_ref.fast.boosted.BoostedRow
            What a decision may ask of the prediction ``f`` (:class:`RationalRow`: ``f`` itself,
            rational).

        Returns
        -------
        tuple of Fraction
            ``d`` where the margin is >= 0, else ``-d``.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
        >>> BinaryDecision(t, S=["c"], D=["b", "c"], tau="1/2").decide(RationalRow(t, [Fraction(1, 3)] * 3))
        (Fraction(0, 1), Fraction(-1, 2), Fraction(1, 2))
        """
        return self.d if row.sign(self.d) >= 0 else tuple(-v for v in self.d)

    def unmoved_by(self, a):
        """Whether ``d`` is constant on the labels below a node, so that its split moves nothing (J.1).

        The margin ``sum_y f_y d_y``, so the action and the score ``|margin|``, then do not move
        with ``a``'s split.

        Parameters
        ----------
        a : int
            The updated node's id.

        Returns
        -------
        bool
            Whether ``d`` takes one value on the labels below ``a``.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> BinaryDecision(t, ["y1", "y2"], [], 0).unmoved_by(1), BinaryDecision(t, ["y1"], [], 0).unmoved_by(1)
        (True, False)
        """
        return len({self.d[y] for y in self.tree.label_ids_below(a)}) == 1


class Top1AtDepth(Utility):
    """Top-1 correctness at tree depth ``l`` (K.2): ``u(p, y) = 1{y in Y_{v_l(p)}}``.

    The candidates are the nodes at depth ``l`` and the leaves shallower than ``l`` (the
    depth-``l`` cut, convention); ``v_l(p)`` is the first maximiser of ``pi_v(p)`` in
    pre-order.  ``V_T(u)``: the branching nodes above depth ``l``.

    Parameters
    ----------
    tree : LabelTree
        The tree.
    depth : int
        ``l``, a non-negative integer (the root has depth 0).

    Attributes
    ----------
    depth : int
        ``l``.

    Raises
    ------
    HUCError
        Of kind ``structure`` for a ``depth`` that is not a non-negative integer.

    Examples
    --------
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "y3"], "vL": ["y1", "y2"]})
    >>> F = Fraction
    >>> u = Top1AtDepth(t, 1)
    >>> u.values([F(1, 3), F(1, 3), F(1, 3)]), u.relevant_nodes
    ((Fraction(1, 1), Fraction(1, 1), Fraction(0, 1)), ('v0',))
    """

    kind = "top1_at_depth"

    def __init__(self, tree, depth):
        super().__init__(tree)
        if not is_integer(depth) or depth < 0:
            raise HUCError(f"depth: must be a non-negative integer, got {given(depth)}", kind="structure")
        self.depth = depth = int(depth)
        kids = tree.child_ids
        self._candidates = tuple(a for a in range(len(kids)) if tree.depth(a) == depth
                                 or (not kids[a] and tree.depth(a) < depth))
        self._relevant = tuple(tree.nodes[a] for a in range(len(kids))
                               if len(kids[a]) >= 2 and tree.depth(a) < depth)

    def node(self, p) -> str:
        """``v_l(p)``: the first candidate of largest predicted mass (K.2).

        Parameters
        ----------
        p : sequence of Fraction
            The prediction, in label order.

        Returns
        -------
        str
            The candidate's name.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> Top1AtDepth(t, 1).node([Fraction(1, 4), Fraction(1, 4), Fraction(1, 2)])
        'a'
        """
        masses = subtree_sums(self.tree, p)
        best = max(self._candidates, key=lambda a: (masses[a], -a))
        return self.tree.nodes[best]

    @property
    def candidate_ids(self) -> tuple[int, ...]:
        """The pre-order ids of the depth-``l`` cut, among which ``v_l(p)`` is chosen (K.2, docs/specification.md §5).

        The cut is the nodes at depth ``l`` and the shallower leaves (the specification's
        convention).

        Examples
        --------
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

    fields = {"depth": {"type": "integer", "minimum": 0}}

    @classmethod
    def from_json(cls, tree, spec, where):
        return cls(tree, spec["depth"])

    @property
    def top1_depth(self):
        """The depth of the top-1 decision (K.2), which the fast path's path form reads.

        Examples
        --------
        >>> Top1AtDepth(LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]}), 1).top1_depth
        1
        """
        return self.depth

    @cached_property
    def candidate_values(self):
        """``u(p, .)`` when the ``j``-th candidate is chosen, as row ``j`` of a float array (K.2: 1
        on the labels below it, 0 elsewhere): what a float pass takes by its choices.

        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> Top1AtDepth(t, 1).candidate_values.tolist()  # a (over y1, y2), then y3
        [[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
        """
        values = np.zeros((len(self._candidates), self.tree.K))
        for k, a in enumerate(self._candidates):
            values[k, list(self.tree.label_ids_below(a))] = 1.0
        values.flags.writeable = False  # (shared by every caller)
        return values

    def vectorised(self, rows):
        j, unsure = rows.first_max(rows.pi[:, np.array(self.candidate_ids)], rel=rows.rel)
        return self.candidate_values[j], unsure

    def decide(self, row):
        """1 on the labels below ``v_l(f)``, the first candidate of largest mass (K.2).

        Parameters
        ----------
        row : RationalRow or huc_ref.fast.boosted.BoostedRow
            What a decision may ask of the prediction ``f`` (:class:`RationalRow`: ``f`` itself,
            rational).

        Returns
        -------
        tuple of Fraction
            ``u(f, .)``, in label order.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> Top1AtDepth(t, 1).decide(RationalRow(t, [Fraction(1, 4), Fraction(1, 4), Fraction(1, 2)]))
        (Fraction(1, 1), Fraction(1, 1), Fraction(0, 1))
        """
        below = set(self.tree.label_ids_below(row.first_largest(self.candidate_ids)))
        return tuple(_ONE if y in below else Fraction(0) for y in range(self.tree.K))

    def unmoved_by(self, a):
        """Whether a node is at depth ``l`` or deeper, so that its split moves nothing (K.2).

        The masses of the depth-``l`` cut, so the choice and the score, then do not move with
        ``a``'s split.

        Parameters
        ----------
        a : int
            The updated node's id.

        Returns
        -------
        bool
            Whether ``a``'s depth is at least ``l``.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> Top1AtDepth(t, 1).unmoved_by(1), Top1AtDepth(t, 1).unmoved_by(0)
        (True, False)
        """
        return self.tree.depth_ids[a] >= self.depth


#: The deepest nesting of aggregated utilities accepted (App. G builds ``u_S`` from a base
#: utility; nesting is legal but bounded, so that no input reaches Python's recursion limit).
MAX_NESTING = 32


class Aggregated(Utility):
    """The aggregated utility ``u_S(p, y) = mu_{u, b_S(y)}(p)`` of App. G.

    ``S`` is an ancestor-closed set of internal nodes; ``b_S(y)`` is the first node on the
    root-to-``y`` path that is not in ``S``.  ``V_T(u_S) = S ∩ V_T(u)``.

    Parameters
    ----------
    base : Utility
        The base utility ``u`` (itself possibly aggregated, at most :data:`MAX_NESTING` deep);
        the aggregated utility is defined everywhere where it is.
    S : sequence of str
        The internal nodes of ``S``, each once, ancestor-closed.

    Attributes
    ----------
    base : Utility
        ``u``.
    S : tuple of str
        ``S``, in pre-order.

    Raises
    ------
    HUCError
        For a ``base`` that is not a utility or nested too deep, or an ``S`` that lists a name
        that is not a node, a leaf, a node twice, or a node whose parent it lacks.

    Examples
    --------
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"],
    ...                                    "vR": ["y3", "y4"]})
    >>> u = Aggregated(Table(t, [-1, 1, 1, 1]), ["v0"])
    >>> u.values([Fraction(1, 4)] * 4), u.relevant_nodes
    ((Fraction(0, 1), Fraction(0, 1), Fraction(1, 1), Fraction(1, 1)), ('v0',))
    """

    kind = "aggregated"

    def __init__(self, base: Utility, S: Sequence[str]):
        if not isinstance(base, Utility):
            raise HUCError("base: expected a utility", kind="type")
        tree = base.tree
        super().__init__(tree)
        self.base = base
        if isinstance(S, (str, bytes)) or not isinstance(S, Sequence):
            raise HUCError("S: expected a list of internal nodes", kind="type")
        ids = set()
        depth, inner = 1, base
        while isinstance(inner, Aggregated):
            depth, inner = depth + 1, inner.base
        if depth > MAX_NESTING:
            raise HUCError(f"base: aggregated utilities nested {depth} deep; at most {MAX_NESTING}", kind="structure")
        for i, v in enumerate(S):
            if not isinstance(v, str) or v not in tree:
                raise HUCError(f"S[{i}]: {v!r} is not a node of the tree", kind="reference")
            if tree.id(v) in ids:
                raise HUCError(f"S[{i}]: {v!r} is listed twice", kind="structure")
            if tree.is_leaf(v):
                raise HUCError(f"S[{i}]: {v!r} is a leaf; S holds internal nodes", kind="structure")
            ids.add(tree.id(v))
        for i, v in enumerate(S):
            par = tree.parent_ids[tree.id(v)]
            if par >= 0 and par not in ids:
                raise HUCError(f"S[{i}]: {v!r} is in S but its parent {tree.nodes[par]!r} is not "
                               f"(S must be ancestor-closed)", kind="structure")
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

        Parameters
        ----------
        y : str
            The label.

        Returns
        -------
        str
            The first node on the path not in ``S`` (the label itself where the whole path above it
            is in ``S``).

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> agg = Aggregated(Table(t, [1, 0, 0]), ["r"])
        >>> agg.boundary("y1"), agg.boundary("y3")
        ('a', 'y3')
        """
        return self.tree.nodes[self._boundary[self.tree.label_index(y)]]

    @property
    def boundary_ids(self) -> tuple[int, ...]:
        """``b_S(y)`` for every label, as pre-order node ids in label order (App. G).

        Examples
        --------
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

    fields = {"base": {"$ref": "#/$defs/utility"}, "S": _NAMES}

    @classmethod
    def from_json(cls, tree, spec, where):
        if where.count(".base") >= MAX_NESTING:  # read no deeper than Aggregated accepts
            raise HUCError(f"{where}.base: aggregated utilities nested more than {MAX_NESTING} deep", kind="structure")
        return cls(utility_from_json(tree, spec["base"], f"{where}.base"), spec["S"])

    @property
    def nesting(self):
        """How many aggregations (App. G) wrap the base family: one more than the base's.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> Aggregated(Aggregated(Table(t, [0, 1, 1]), ["r", "a"]), ["r"]).nesting
        2
        """
        return self.base.nesting + 1

    def vectorised(self, rows):
        N = rows.ft.subtree_sums(rows.P * rows.values_of(self.base))
        b = np.array(self.boundary_ids)
        return rows.ratio(N[:, b], rows.pi[:, b]), None


class PerAtom(Utility):
    """Explicit values ``u(p_i, .)`` for every atom ``i`` (A.1's ``u(p, y)`` given outright; golden vectors).

    They describe the utility only at the audited predictions: ``V_T(u)`` is read off the
    given rows (convention), and boosting, which moves predictions, rejects them.

    Parameters
    ----------
    tree : LabelTree
        The tree.
    rows : sequence of sequence of exact numbers
        One row of ``K`` values in [-1, 1] per atom, in the atoms' order.
    where : str, default "values"
        The place the messages name.

    Attributes
    ----------
    rows : tuple of tuple of Fraction
        The values.

    Raises
    ------
    HUCError
        For rows that are not lists of ``K`` exact numbers in [-1, 1]; :meth:`values` for an
        atom without a row.

    Examples
    --------
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
            raise HUCError(f"{where}: expected one list of leaf values per atom", kind="type")
        self.rows = tuple(_check_range(exact_vector(r, f"{where}[{i}]", tree.K), f"{where}[{i}]")
                          for i, r in enumerate(rows))
        self._relevant = _nonconstant_nodes(tree, self.rows)

    def values(self, p, atom=None):
        if atom is None or not 0 <= atom < len(self.rows):
            raise HUCError(f"per_atom utility: no values for atom {atom!r} ({len(self.rows)} rows given)",
                           kind="structure")
        return self.rows[atom]

    @property
    def relevant_nodes(self):
        return self._relevant

    def to_json(self):
        return {"kind": "per_atom", "values": [[fraction_text(v) for v in r] for r in self.rows]}

    fields = {"values": {"type": "array", "items": _NUMBERS}}

    @classmethod
    def from_json(cls, tree, spec, where):
        return cls(tree, spec["values"])

    def vectorised(self, rows):
        table = np.array([[float(x) for x in r] for r in self.rows])
        return (table[rows.rows] if rows.rows is not None else table), None


def utility_from_json(tree: LabelTree, spec, where: str = "utility") -> Utility:
    """Build a utility from its ``huc-case/1`` description, by the family its ``kind`` names (docs/specification.md §6).

    Parameters
    ----------
    tree : LabelTree
        The tree.
    spec : mapping
        The description: ``kind`` (one of :data:`KINDS`) and the family's fields.
    where : str, default "utility"
        The place the messages name.

    Returns
    -------
    Utility
        The utility.

    Raises
    ------
    HUCError
        Naming the place: not an object, a missing or unknown ``kind``, an unknown or missing
        field, or a field the family refuses.

    Examples
    --------
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> utility_from_json(t, {"kind": "table", "values": [0, "1/2"]}).b
    (Fraction(0, 1), Fraction(1, 2))
    >>> utility_from_json(t, {"kind": "tabel"}, "utilities.u")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: utilities.u.kind: unknown utility kind 'tabel' (known: aggregated, ...)
    """
    if not isinstance(spec, Mapping):
        raise HUCError(f"{where}: expected an object", kind="type")
    if "kind" not in spec:
        raise HUCError(f"{where}.kind: missing", kind="missing_field")
    kind = spec["kind"]
    if not isinstance(kind, str):
        raise HUCError(f"{where}.kind: expected a string", kind="type")
    if kind not in KINDS:
        raise HUCError(f"{where}.kind: unknown utility kind {kind!r} (known: {', '.join(sorted(KINDS))})",
                       kind="unknown_kind")
    family = KINDS[kind]
    extra = set(spec) - set(family.fields) - {"kind"}
    if extra:
        raise HUCError(f"{where}: unknown field {sorted(extra)[0]!r} for kind {kind!r}", kind="unknown_field")
    for key in sorted(set(family.fields) - family.optional):
        if key not in spec:
            raise HUCError(f"{where}.{key}: missing", kind="missing_field")
    try:
        return family.from_json(tree, spec, where)
    except HUCError as err:
        msg = str(err)
        raise HUCError(msg if msg.startswith(where) else f"{where}.{msg}", kind=err.kind) from None


def utility_schema(kind: str) -> dict:
    """The JSON Schema of one utility kind (docs/specification.md §5 and §6).

    Parameters
    ----------
    kind : str
        A kind of :data:`KINDS`.

    Returns
    -------
    dict
        An object schema with ``kind`` and the family's fields, each required unless optional.

    Examples
    --------
    >>> utility_schema("top_k")["required"], utility_schema("decision")["required"]
    (['kind', 'k'], ['kind', 'actions'])
    """
    family = KINDS[kind]
    own = sorted(family.fields)
    return {"type": "object", "additionalProperties": False,
            "required": ["kind"] + [f for f in own if f not in family.optional],
            "properties": {"kind": {"const": kind}, **{f: family.fields[f] for f in own}}}
