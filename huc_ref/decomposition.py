"""The tree decomposition of a utility residual (Sec. 3.1, Thm 3.1, App. A.3, C.1-C.3).

For a prediction ``p`` and the leaf values ``u(p, .)`` of a utility, every node ``a`` has

* ``pi_a(p) = sum_{y in Y_a} p_y``                       -> :meth:`TreeDecomposition.pi`
* ``N_{u,a}(p) = sum_{y in Y_a} p_y u(p,y)``             -> :meth:`TreeDecomposition.N`
* ``mu_{u,a}(p) = N_{u,a}(p) / pi_a(p)``                 -> :meth:`TreeDecomposition.mu`

and every internal node ``v`` with children ``v_1..v_d``

* ``q_{v,j}(p) = pi_{v_j}(p) / pi_v(p)``                 -> :meth:`TreeDecomposition.q`
* ``R_{v,j}(p,y) = J_{v_j}(y) - J_v(y) q_{v,j}(p)``      -> :meth:`TreeDecomposition.R`
* ``Delta_{u,v,j}(p) = mu_{u,v_j}(p) - mu_{u,v}(p)``     -> :meth:`TreeDecomposition.Delta`
* ``g_{u,v}(p,y) = <Delta_{u,v}(p), R_v(p,y)>``          -> :meth:`TreeDecomposition.g`

Theorem 3.1: ``u(p,y) - mu_u(p) = sum_{v in V°} g_{u,v}(p,y)``.

The code is written once for every number type that is a field: ``Fraction`` (the exact
path) and sympy expressions (``proofs_check`` feeds symbols through it).  For rational
inputs, subtree sums run on integers over one common denominator (no gcd per addition)
and only the quotients become ``Fraction`` s.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from .errors import HUCError, sized
from .rational import ratio, scaled_integers
from .tree import LabelTree

__all__ = ["subtree_sums", "Prediction", "TreeDecomposition"]

# The four-leaf tree of Sec. 2.2, for the doctests below.
_FOUR = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})


def subtree_sums(tree: LabelTree, leaf_values: Sequence) -> list:
    """The subtree sums ``sum_{y in Y_a} x_y`` of leaf values for every node ``a`` (C.1).

    Parameters
    ----------
    tree : LabelTree
        The label tree.
    leaf_values : sequence
        One value per label, in the tree's label order: numbers of any type that adds
        (integers, ``Fraction``, sympy expressions).

    Returns
    -------
    list
        The sums, indexed by pre-order node id (a leaf's sum is its own value).

    Raises
    ------
    HUCError
        Where ``tree`` is not a :class:`~huc_ref.tree.LabelTree` or ``leaf_values`` is not a
        sequence of ``K`` values.

    Notes
    -----
    One post-order pass: a parent's sum is the sum of its children's sums (C.1,
    ``pi_v = sum_j pi_{v_j}``), so all ``|V|`` sums cost ``K + |E_T|`` additions.

    Examples
    --------
    >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
    >>> t.nodes, subtree_sums(t, [1, 2, 4])
    (('r', 'a', 'y1', 'y2', 'y3'), [7, 3, 1, 2, 4])
    """
    _leaf_values(tree, leaf_values, "leaf_values")
    kids = tree.child_ids
    label_of = tree.label_ids
    out: list = [None] * len(kids)
    for a in reversed(range(len(kids))):  # reversed pre-order: children before parents
        ks = kids[a]
        if ks:
            s = out[ks[0]]
            for k in ks[1:]:
                s = s + out[k]
            out[a] = s
        else:
            out[a] = leaf_values[label_of[a]]
    return out


def _leaf_values(tree, values, where: str):
    """``values``, one per label of ``tree`` in its label order (A.2's coordinates), or one HUCError:
    ``tree`` must be a :class:`LabelTree` and ``values`` a sequence of ``K`` entries."""
    if not isinstance(tree, LabelTree):
        raise HUCError(f"tree: expected a LabelTree, got {type(tree).__name__}", kind="tree")
    expected = f"{tree.K} values, one per label in the tree's label order"
    if len(sized(values, where, expected)) != tree.K:
        raise HUCError(f"{where}: expected {expected}, got {type(values).__name__} of length {len(values)}",
                       kind="length")
    return values


def _scale(values):
    """Integers over a common denominator for rationals; the values themselves otherwise."""
    values = tuple(values)
    if all(type(v) is Fraction for v in values):
        return scaled_integers(values)
    return list(values), 1


class Prediction:
    """A prediction ``p`` with its subtree masses ``pi_a(p)`` (A.3), shared by every utility.

    Parameters
    ----------
    tree : LabelTree
        The label tree.
    p : sequence
        The prediction, one entry per label in the tree's label order: exact rationals (the
        masses are then summed as integers over one common denominator) or any field's numbers.

    Raises
    ------
    HUCError
        Where ``tree`` is not a :class:`~huc_ref.tree.LabelTree` or ``p`` is not a sequence of
        ``K`` entries.

    Examples
    --------
    >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
    >>> Prediction(t, [Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)]).pi("a")
    Fraction(3, 4)
    """

    __slots__ = ("tree", "p", "_P", "_D", "_pi")

    def __init__(self, tree: LabelTree, p: Sequence):
        self.tree = tree
        self.p = tuple(_leaf_values(tree, p, "p"))
        self._P, self._D = _scale(self.p)  # p_y = _P[y] / _D
        self._pi = subtree_sums(tree, self._P)  # pi_a = _pi[a] / _D

    def pi(self, node):
        """``pi_a(p)``, the predicted probability of the subtree of ``a`` (A.3).

        Parameters
        ----------
        node : str or int
            The node ``a``, by name or pre-order id.

        Returns
        -------
        Fraction
            ``sum_{y in Y_a} p_y`` (in the entries' type where they are not rationals).

        Examples
        --------
        >>> Prediction(_FOUR, [Fraction(1, 8), Fraction(3, 8), Fraction(1, 4), Fraction(1, 4)]).pi("vR")
        Fraction(1, 2)
        """
        return ratio(self._pi[self.tree.id(node)], self._D)


class TreeDecomposition:
    """All subtree quantities of one prediction ``p`` and one utility's leaf values (Sec. 3.1, A.3).

    Parameters
    ----------
    tree : LabelTree
        The label tree.
    p : sequence or Prediction
        The prediction, in the tree's label order; a :class:`Prediction` shares its masses
        between utilities.
    u : sequence
        The leaf values ``u(p, y)``, in the tree's label order.
    rational : type, default Fraction
        The type of the exact quotients of integer sums: ``Fraction``, or gmpy2's ``mpq``
        (:func:`~huc_ref.rational.rational_type`).  Entries of another type (sympy
        expressions, floats) are divided by ``/`` in their own type.

    Raises
    ------
    HUCError
        Where ``tree`` is not a :class:`~huc_ref.tree.LabelTree` or ``p`` or ``u`` is not a
        sequence of ``K`` entries.

    Notes
    -----
    Node arguments of the methods are names or pre-order ids; label arguments are names or
    label ids.  For rational inputs the subtree sums run on integers over one common
    denominator (no gcd per addition) and only the quotients are rationals; the code is
    written once for every number type that is a field (``proofs_check`` feeds sympy symbols
    through it).

    Examples
    --------
    Appendix D.1: ``p`` uniform on four leaves, ``u = (-1, 1, 1, 1)``.

    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"],
    ...                                    "vR": ["y3", "y4"]})
    >>> F = Fraction
    >>> dec = TreeDecomposition(t, [F(1, 4)] * 4, [F(-1), F(1), F(1), F(1)])
    >>> dec.mu("v0"), dec.mu("vL"), dec.mu("vR"), dec.q("v0")
    (Fraction(1, 2), Fraction(0, 1), Fraction(1, 1), (Fraction(1, 2), Fraction(1, 2)))
    >>> [dec.g(v, "y1") for v in t.internal_nodes], dec.residual("y1")
    ([Fraction(-1, 2), Fraction(-1, 1), Fraction(0, 1)], Fraction(-3, 2))
    """

    __slots__ = ("tree", "prediction", "u", "_D", "_E", "_pi", "_N", "_rational", "_mu")

    def __init__(self, tree: LabelTree, p, u: Sequence, *, rational=Fraction):
        _leaf_values(tree, u, "u")
        self.tree = tree
        self._rational = rational  # the type of exact quotients (Fraction, or gmpy2.mpq)
        self.prediction = p if isinstance(p, Prediction) else Prediction(tree, p)
        self.u = tuple(u)
        P, self._D = self.prediction._P, self.prediction._D
        U, self._E = _scale(self.u)
        self._pi = self.prediction._pi                      # pi_a  = _pi[a] / D
        self._N = subtree_sums(tree, [P[y] * U[y] for y in range(len(U))])  # N_a = _N[a] / (D E)
        self._mu: list = [None] * len(self._N)  # mu_{u,a}, computed once when first asked

    # --------------------------------------------------------- node quantities
    def pi(self, node):
        """``pi_a(p) = sum_{y in Y_a} p_y``, the predicted mass of the subtree of ``a`` (A.3).

        Parameters
        ----------
        node : str or int
            The node ``a``, by name or pre-order id.

        Returns
        -------
        Fraction
            ``pi_a(p)``.

        Examples
        --------
        >>> dec = TreeDecomposition(_FOUR, [Fraction(1, 8), Fraction(3, 8), Fraction(1, 4), Fraction(1, 4)],
        ...                         [-1, 1, 0, 1])
        >>> dec.pi("vL"), dec.pi("v0")
        (Fraction(1, 2), Fraction(1, 1))
        """
        return ratio(self._pi[self.tree.id(node)], self._D, self._rational)

    def N(self, node):
        """``N_{u,a}(p) = sum_{y in Y_a} p_y u(p, y)``, the utility mass of the subtree of ``a`` (A.3).

        Parameters
        ----------
        node : str or int
            The node ``a``, by name or pre-order id.

        Returns
        -------
        Fraction
            ``N_{u,a}(p)``.

        Examples
        --------
        >>> dec = TreeDecomposition(_FOUR, [Fraction(1, 8), Fraction(3, 8), Fraction(1, 4), Fraction(1, 4)],
        ...                         [-1, 1, 0, 1])
        >>> dec.N("vL"), dec.N("v0")
        (Fraction(1, 4), Fraction(1, 2))
        """
        return ratio(self._N[self.tree.id(node)], self._D * self._E, self._rational)

    def mu(self, node=0):
        """``mu_{u,a}(p) = N_{u,a}(p) / pi_a(p)``, the mean utility on the subtree of ``a`` (A.3).

        Parameters
        ----------
        node : str or int, default 0
            The node ``a``, by name or pre-order id; the root (the default) gives the score
            ``mu_u(p)``.

        Returns
        -------
        Fraction
            ``mu_{u,a}(p)``, computed once and kept.

        Raises
        ------
        HUCError
            Of kind ``nonpositive`` where ``pi_a(p) = 0`` (a true law ``eta`` given as ``p`` may
            vanish on a subtree): the mean is 0/0.

        Examples
        --------
        >>> dec = TreeDecomposition(_FOUR, [Fraction(1, 8), Fraction(3, 8), Fraction(1, 4), Fraction(1, 4)],
        ...                         [-1, 1, 0, 1])
        >>> dec.mu("vL"), dec.mu()
        (Fraction(1, 2), Fraction(1, 2))
        """
        a = self.tree.id(node)
        if self._mu[a] is None:
            # (_N[a] / (D E)) / (_pi[a] / D) = _N[a] / (E _pi[a])
            self._mu[a] = ratio(self._N[a], self._E * self._massive(a, "mu"), self._rational)
        return self._mu[a]

    def _massive(self, a: int, what: str):
        """``_pi[a]``, or one HUCError where it is 0: the subtree's means and branch probabilities are
        then 0/0 (A.3 divides by ``pi_a``; predictions lie in the open simplex, A.2, but a true law
        ``eta`` given here may vanish on a subtree)."""
        if self._pi[a] == 0:
            name = self.tree.nodes[a]
            raise HUCError(f"{what}({name!r}): the subtree of {name!r} has mass 0 here: its "
                           f"{'mean is' if what == 'mu' else 'branch probabilities are'} 0/0 (A.3)", kind="nonpositive")
        return self._pi[a]

    def known_mean(self, node, value) -> None:
        """Take ``mu_{u,a}(p)`` (A.3) as known by other means.

        Boosting knows the means an update left exactly as they were (A.3: rescaling all of
        ``Y_a`` alike leaves ``mu_{u,a}``), and hands them here instead of recomputing them.

        Parameters
        ----------
        node : str or int
            The node ``a``, by name or pre-order id.
        value : number
            ``mu_{u,a}(p)``; :meth:`mu` returns it from now on.

        Examples
        --------
        >>> dec = TreeDecomposition(_FOUR, [0.125, 0.375, 0.25, 0.25], [-1, 1, 0, 1], rational=None)
        >>> dec.known_mean("vL", Fraction(1, 2))
        >>> dec.mu("vL"), dec.mu("vR")
        (Fraction(1, 2), 0.5)
        """
        self._mu[self.tree.id(node)] = value

    def q(self, v) -> tuple:
        """``q_v(p) = (pi_{v_j}(p) / pi_v(p))_j``, the branch probabilities of node ``v`` (Sec. 3.1).

        Parameters
        ----------
        v : str or int
            An internal node, by name or pre-order id.

        Returns
        -------
        tuple of Fraction
            One probability per child, in order.

        Raises
        ------
        HUCError
            Of kind ``nonpositive`` where ``pi_v(p) = 0`` (a true law may vanish on a subtree): the
            branch probabilities are 0/0.

        Examples
        --------
        >>> dec = TreeDecomposition(_FOUR, [Fraction(1, 8), Fraction(3, 8), Fraction(1, 4), Fraction(1, 4)],
        ...                         [-1, 1, 0, 1])
        >>> dec.q("vL")
        (Fraction(1, 4), Fraction(3, 4))
        >>> TreeDecomposition(_FOUR, [1, 0, 0, 0], [-1, 1, 0, 1]).q("vR")  # (a true law may vanish on a subtree)
        Traceback (most recent call last):
        ...
        huc_ref.errors.HUCError: q('vR'): the subtree of 'vR' has mass 0 here: its branch probabilities are 0/0 (A.3)
        """
        a = self.tree.id(v)
        mass = self._massive(a, "q")
        return tuple(ratio(self._pi[k], mass, self._rational) for k in self.tree.child_ids[a])

    def Delta(self, v) -> tuple:
        """``Delta_{u,v}(p) = (mu_{u,v_j}(p) - mu_{u,v}(p))_j``: children's means less the node's (Sec. 3.1).

        Parameters
        ----------
        v : str or int
            An internal node, by name or pre-order id.

        Returns
        -------
        tuple of Fraction
            One difference per child, in order.

        Examples
        --------
        >>> dec = TreeDecomposition(_FOUR, [Fraction(1, 8), Fraction(3, 8), Fraction(1, 4), Fraction(1, 4)],
        ...                         [-1, 1, 0, 1])
        >>> dec.Delta("vL")
        (Fraction(-3, 2), Fraction(1, 2))
        """
        a = self.tree.id(v)
        m = self.mu(a)
        return tuple(self.mu(k) - m for k in self.tree.child_ids[a])

    def R(self, v, y) -> tuple:
        """``R_v(p, y) = (J_{v_j}(y) - J_v(y) q_{v,j}(p))_j``, the branch residual of node ``v`` at a label (Sec. 3.1).

        Parameters
        ----------
        v : str or int
            An internal node, by name or pre-order id.
        y : str or int
            The label, by name or label id.

        Returns
        -------
        tuple
            One entry per child, in order (the integers 0 where ``y`` is not below ``v``).

        Examples
        --------
        >>> dec = TreeDecomposition(_FOUR, [Fraction(1, 8), Fraction(3, 8), Fraction(1, 4), Fraction(1, 4)],
        ...                         [-1, 1, 0, 1])
        >>> dec.R("vL", "y2"), dec.R("vL", "y3")
        ((Fraction(-1, 4), Fraction(1, 4)), (0, 0))
        """
        a = self.tree.id(v)
        yi = self.tree.label_index(y) if isinstance(y, str) else y
        inside = self.tree.contains(a, yi)
        return tuple((1 if self.tree.contains(k, yi) else 0) - (qj if inside else 0)
                     for k, qj in zip(self.tree.child_ids[a], self.q(a)))

    def g(self, v, y):
        """The node contribution ``g_{u,v}(p, y) = <Delta_{u,v}(p), R_v(p, y)>`` (Thm 3.1).

        Parameters
        ----------
        v : str or int
            An internal node, by name or pre-order id.
        y : str or int
            The label, by name or label id.

        Returns
        -------
        Fraction
            ``g_{u,v}(p, y)``: ``mu_{u,v_k}(p) - mu_{u,v}(p)`` where ``y`` lies below child ``v_k``,
            and 0 (of the operands' type) outside ``Y_v``.

        Notes
        -----
        Evaluated in its piecewise form (C.1): ``R_{v,j}(p,y) = 1{j = k} - q_{v,j}(p)`` when ``y``
        lies below child ``v_k``, and ``sum_j q_{v,j} Delta_{u,v,j} = 0``, so the inner product is
        ``mu_{u,v_k}(p) - mu_{u,v}(p)``; it is 0 outside ``Y_v``.

        Examples
        --------
        >>> dec = TreeDecomposition(_FOUR, [Fraction(1, 8), Fraction(3, 8), Fraction(1, 4), Fraction(1, 4)],
        ...                         [-1, 1, 0, 1])
        >>> dec.g("vL", "y1"), dec.g("vR", "y1")
        (Fraction(-3, 2), Fraction(0, 1))
        """
        a = self.tree.id(v)
        yi = self.tree.label_index(y) if isinstance(y, str) else y
        if not self.tree.contains(a, yi):
            return self.mu(a) - self.mu(a)  # a zero of the operands' type
        for k in self.tree.child_ids[a]:
            if self.tree.contains(k, yi):
                return self.mu(k) - self.mu(a)
        raise AssertionError("a label below v lies below one of its children")

    def residual(self, y):
        """``u(p, y) - mu_u(p)``, the utility residual that Theorem 3.1 decomposes.

        Parameters
        ----------
        y : str or int
            The label, by name or label id.

        Returns
        -------
        Fraction
            The residual; it equals the sum of :meth:`g` over the internal nodes (Thm 3.1).

        Examples
        --------
        >>> dec = TreeDecomposition(_FOUR, [Fraction(1, 8), Fraction(3, 8), Fraction(1, 4), Fraction(1, 4)],
        ...                         [-1, 1, 0, 1])
        >>> dec.residual("y2"), dec.g("v0", "y2") + dec.g("vL", "y2")
        (Fraction(1, 2), Fraction(1, 2))
        """
        yi = self.tree.label_index(y) if isinstance(y, str) else y
        return self.u[yi] - self.mu(0)

    def contributions(self, y) -> dict:
        """The node contributions ``{v: g_{u,v}(p, y)}`` on the path of a label (C.2).

        Parameters
        ----------
        y : str or int
            The label, by name or label id.

        Returns
        -------
        dict of str to Fraction
            ``g_{u,v}(p, y)`` for every internal node ``v`` on the root-to-leaf path of ``y``, from
            the root down; the contributions of the other nodes are 0.

        Examples
        --------
        >>> dec = TreeDecomposition(_FOUR, [Fraction(1, 8), Fraction(3, 8), Fraction(1, 4), Fraction(1, 4)],
        ...                         [-1, 1, 0, 1])
        >>> dec.contributions("y1")
        {'v0': Fraction(0, 1), 'vL': Fraction(-3, 2)}
        """
        yi = self.tree.label_index(y) if isinstance(y, str) else y
        path = self.tree.path_ids(yi)
        return {self.tree.nodes[a]: self.mu(b) - self.mu(a) for a, b in zip(path, path[1:])}

    def expected_contribution(self, v, eta_masses: Sequence, eta_den=1):
        """``E_{Y ~ eta}[g_{u,v}(p, Y)]``, a node contribution's mean under a label law ``eta`` (C.2, eq. 69-70).

        Parameters
        ----------
        v : str or int
            An internal node, by name or pre-order id.
        eta_masses : sequence
            The subtree masses of ``eta``, :func:`subtree_sums` of ``eta`` (indexed by pre-order
            node id), optionally scaled by ``eta_den``.
        eta_den : int, default 1
            The scale of ``eta_masses``: ``pi*_a = eta_masses[a] / eta_den``.

        Returns
        -------
        Fraction
            The expected contribution.

        Notes
        -----
        C.2 (eq. 69-70) gives ``sum_j Delta_{u,v,j} (pi*_{v_j} - pi*_v q_{v,j})``, which by
        ``sum_j pi*_{v_j} = pi*_v`` and ``mu_{u,v} = sum_j q_{v,j} mu_{u,v_j}`` equals
        ``sum_j pi*_{v_j} mu_{u,v_j} - pi*_v mu_{u,v}``: the form evaluated here.

        Examples
        --------
        >>> dec = TreeDecomposition(_FOUR, [Fraction(1, 8), Fraction(3, 8), Fraction(1, 4), Fraction(1, 4)],
        ...                         [-1, 1, 0, 1])
        >>> eta = [Fraction(1, 2), Fraction(0), Fraction(1, 4), Fraction(1, 4)]
        >>> dec.expected_contribution("vL", subtree_sums(_FOUR, eta))  # (1/2)(-1) + 0(1) - (1/2)(1/2)
        Fraction(-3, 4)
        """
        a = self.tree.id(v)
        total = -(eta_masses[a] * self.mu(a))
        for k in self.tree.child_ids[a]:
            total = total + eta_masses[k] * self.mu(k)
        return ratio(total, eta_den, self._rational) if eta_den != 1 else total
