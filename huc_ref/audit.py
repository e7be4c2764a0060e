"""The audit engine: exact UC and HUC with witnesses (Sec. 2.1, Def. 3.2, App. F.3-F.4).

For a finite distribution of atoms (docs/specification.md §3) and a utility ``u``, atom ``i`` has the score
``s_i = mu_u(p_i)``, the UC term ``a_i = sum_y eta_{i,y} u(p_i, y) - mu_u(p_i)`` and, at
each internal node ``v``, the HUC term ``gamma_{i,v} = sum_y eta_{i,y} g_{u,v}(p_i, y)``.

* ``M_{c,u,I} = sum_i w_i c_i 1{s_i in I} a_i``                (UC moment)
* ``Gamma_{c,u,I,v} = sum_i w_i c_i 1{s_i in I} gamma_{i,v}``   (node moment)
* ``UC = max_{c,u,I} |M|``,  ``HUC = max_{c,u,v in V_T(u),I} |Gamma|``

One engine serves population atoms (a law ``eta_i``) and sample atoms (``eta_i = e_y``).
Per utility the atoms are sorted once by score; every subgroup and node reuses that
order (F.4).  A sample atom touches only the nodes on its label's path (Lemma C.2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from .decomposition import Prediction, TreeDecomposition, subtree_sums
from .distribution import FiniteDistribution
from .errors import HUCError, given, is_integer, one_of
from .intervals import Interval, max_interval_sum
from .rational import rational_type, scaled_integers, to_fraction
from .results import AuditResult, Candidate
from .utilities import Utility
from .validation import check_distribution, check_utilities

__all__ = ["AtomTerms", "Candidate", "AuditResult", "MAX_EXACT_DIGITS", "atom_terms", "audit", "interval_moment"]

_ZERO = Fraction(0)


@dataclass(frozen=True)
class AtomTerms:
    """The score, UC term and node terms of one atom for one utility (F.4, step 1).

    Parameters
    ----------
    score : Fraction
        The score ``s_i = mu_u(p_i)``.
    residual : Fraction
        The UC term ``a_i = sum_y eta_{i,y} u(p_i, y) - mu_u(p_i)``.
    node_terms : dict of int to Fraction
        The node terms ``gamma_{i,v} = sum_y eta_{i,y} g_{u,v}(p_i, y)`` by node id; absent
        nodes give 0.

    See Also
    --------
    atom_terms : the terms of every atom of a distribution.

    Examples
    --------
    >>> from huc_ref.tree import LabelTree
    >>> from huc_ref.utilities import Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4", "3/4"], "label": "a"}])
    >>> terms = atom_terms(d, Table(t, [0, 1]))[0]  # label a: u = 0 less the score 3/4
    >>> terms.score, terms.residual, terms.node_terms
    (Fraction(3, 4), Fraction(-3, 4), {0: Fraction(-3, 4)})
    """

    score: Fraction
    residual: Fraction
    node_terms: dict


def atom_terms(dist: FiniteDistribution, utility: Utility, nodes=None, *, rational=Fraction) -> list[AtomTerms]:
    """The score, UC term and node terms of every atom for one utility (F.4, step 1; C.2).

    Parameters
    ----------
    dist : FiniteDistribution
        The atoms.
    utility : Utility
        The utility, built on ``dist``'s tree.
    nodes : iterable of str or int, optional
        The nodes whose terms are computed; by default ``V_T(u)``
        (:attr:`~huc_ref.utilities.Utility.relevant_nodes`).
    rational : type, default Fraction
        The exact type of the results: ``Fraction``, or gmpy2's ``mpq`` to accelerate.

    Returns
    -------
    list of AtomTerms
        One per atom, in order.  For a sample atom with label ``y`` the node term is
        ``g_{u,v}(p, y)``, nonzero only on the path of ``y``; for a law ``eta`` it is
        ``E_{Y~eta} g_{u,v}(p, Y)`` (C.2).

    Raises
    ------
    HUCError
        Where ``dist`` is not a :class:`~huc_ref.distribution.FiniteDistribution`, ``utility``
        is not a :class:`~huc_ref.utilities.Utility` of its tree, or ``nodes`` is not a list of
        its nodes.

    Examples
    --------
    >>> from huc_ref.tree import LabelTree
    >>> from huc_ref.utilities import Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4", "3/4"], "eta": ["1/2", "1/2"]}])
    >>> atom_terms(d, Table(t, [0, 1]))
    [AtomTerms(score=Fraction(3, 4), residual=Fraction(-1, 4), node_terms={0: Fraction(-1, 4)})]
    """
    check_distribution(dist)
    if not isinstance(utility, Utility):
        raise HUCError("utility: expected a Utility (Table(tree, ...), TopK(tree, k), ...), got "
                       f"{type(utility).__name__}", kind="type")
    if utility.tree != dist.tree:
        raise HUCError("utility: is bound to a different label tree", kind="reference")
    if nodes is None:
        nodes = utility.relevant_nodes
    elif isinstance(nodes, (str, bytes)) or not isinstance(nodes, Iterable):
        raise HUCError(f"nodes: expected a list of nodes, got {type(nodes).__name__}", kind="type")
    node_ids = [dist.tree.id(v) for v in nodes]
    def lift(x):
        return x if rational is Fraction or type(x) is not Fraction else rational(x.numerator, x.denominator)
    return [terms_at(dist.tree, Prediction(dist.tree, atom.p), utility.values(atom.p, i), atom, node_ids, lift,
                     rational) for i, atom in enumerate(dist.atoms)]


def terms_at(tree, prediction, vals, atom, node_ids, lift, rational=Fraction, means=None) -> AtomTerms:
    """One atom's terms at a prediction in any number type: shared by the exact audit and
    by boosting, which audits irrational predictions at a working precision.

    ``lift`` maps an exact ``Fraction`` into the working type and leaves other values alone;
    ``means`` (node id -> ``mu_{u,a}``) gives means known exactly, used instead of the
    prediction's (boosting: the means an update left as they were).

    >>> from huc_ref.tree import LabelTree
    >>> from huc_ref.distribution import Atom
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> terms_at(t, Prediction(t, [Fraction(1, 4), Fraction(3, 4)]), [Fraction(0), Fraction(1)],
    ...          Atom(Fraction(1), (Fraction(1),), (), None, 0), [0], lambda x: x)
    AtomTerms(score=Fraction(3, 4), residual=Fraction(-3, 4), node_terms={0: Fraction(-3, 4)})
    """
    dec = TreeDecomposition(tree, prediction, vals, rational=rational)
    known = means or {}
    for a, m in known.items():
        dec.known_mean(a, lift(m))
    score = dec.mu(0)
    if atom.label is not None:
        y = atom.label
        path = tree.path_ids(y)
        wanted = set(node_ids)
        terms = {a: known[b] - known[a] if a in known and b in known else dec.mu(b) - dec.mu(a)
                 for a, b in zip(path, path[1:]) if a in wanted}
        return AtomTerms(score, vals[y] - known[0] if 0 in known else lift(vals[y]) - score, terms)
    H, den = scaled_integers(atom.eta)  # eta_y = H[y] / den
    masses = subtree_sums(tree, H)
    terms = {}
    for a in node_ids:  # exact where every mean it reads is known exactly
        if a in known and all(k in known for k in tree.child_ids[a]):
            terms[a] = Fraction(sum(masses[k] * known[k] for k in tree.child_ids[a]) - masses[a] * known[a], den)
        else:
            terms[a] = dec.expected_contribution(a, masses, den)
    expected = _ZERO if 0 in known else lift(_ZERO)
    for e, v in zip(atom.eta, vals):
        if e:
            expected = expected + (e * v if 0 in known else lift(e) * lift(v))  # E_eta[u(p, Y)]
    return AtomTerms(score, expected - (known[0] if 0 in known else score), terms)


def interval_moment(dist: FiniteDistribution, utility: Utility, subgroup: str,
                    interval: Interval | None, node: str | None = None) -> Fraction:
    """The moment ``M_{c,u,I}`` (Def. 2.1) or ``Gamma_{c,u,I,v}`` (Def. 3.2), summed directly over the atoms.

    This is how a witness is checked: its moment recomputed from the definition.

    Parameters
    ----------
    dist : FiniteDistribution
        The atoms.
    utility : Utility
        The utility ``u``.
    subgroup : str
        The subgroup ``c``, one of ``dist.subgroups``.
    interval : Interval or None
        The interval ``I`` of scores; None is the empty interval.
    node : str, optional
        The node ``v``; by default None, the UC moment.

    Returns
    -------
    Fraction
        ``sum_i w_i c_i 1{s_i in I} a_i`` (UC) or ``sum_i w_i c_i 1{s_i in I} gamma_{i,v}``.

    Raises
    ------
    HUCError
        For a subgroup that is not one of ``dist``'s, an ``interval`` that is not an
        :class:`~huc_ref.intervals.Interval`, or as :func:`atom_terms`.

    Examples
    --------
    >>> from huc_ref.tree import LabelTree
    >>> from huc_ref.utilities import Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4", "3/4"], "eta": ["1/2", "1/2"]}])
    >>> interval_moment(d, Table(t, [0, 1]), "all", Interval.closed(0, 1))
    Fraction(-1, 4)
    """
    if not one_of(subgroup, check_distribution(dist).subgroups):
        raise HUCError(f"subgroup {given(subgroup)} is not one of {list(dist.subgroups)}", kind="reference")
    k = dist.subgroups.index(subgroup)
    if interval is None:
        return _ZERO
    if not isinstance(interval, Interval):
        raise HUCError(f"interval: expected an Interval (Interval.closed(lo, hi)) or None, got "
                       f"{type(interval).__name__}", kind="type")
    nid = None if node is None else dist.tree.id(node)
    terms = atom_terms(dist, utility, () if node is None else (node,))
    total = _ZERO
    for atom, t in zip(dist.atoms, terms):
        if t.score in interval:
            x = t.residual if nid is None else t.node_terms.get(nid, _ZERO)
            total += atom.weight * atom.c[k] * x
    return total


class UtilityRows:
    """Every sup of one utility: one sort by score shared by all subgroups and nodes (F.4).

    ``terms`` are the atoms' :class:`AtomTerms`, ``weights[k][i] = w_i c_k(x_i)``,
    ``interval_max`` is Algorithm 2 for the number type (exact, or at a working precision
    when boosting).  ``best[k, v]`` is the sup of subgroup ``k`` at node id ``v`` (``None``:
    the UC moment); its blocks ``r .. b-1`` hold the atoms of :meth:`members`.
    """

    def __init__(self, terms, weights, node_ids, zero, interval_max):
        order = sorted(range(len(terms)), key=lambda i: terms[i].score)
        self.scores, self.block_of = [], [0] * len(terms)
        for i in order:  # tied scores form one block
            if not self.scores or terms[i].score != self.scores[-1]:
                self.scores.append(terms[i].score)
            self.block_of[i] = len(self.scores) - 1
        m = len(self.scores)
        self.best = {}
        for k, w in enumerate(weights):
            blocks = {a: [zero] * m for a in [None] + list(node_ids)}
            for i, t in enumerate(terms):
                if not w[i]:
                    continue
                r = self.block_of[i]
                blocks[None][r] += w[i] * t.residual
                for a, x in t.node_terms.items():
                    blocks[a][r] += w[i] * x
            for a, bl in blocks.items():
                self.best[k, a] = interval_max(bl)

    def interval(self, best):
        """The closed witness interval ``[s_(r+1), s_(b)]`` of a sup."""
        return self.scores[best.r], self.scores[best.b - 1]

    def members(self, best) -> list[int]:
        """The atoms whose scores lie in the witness interval."""
        return [i for i, r in enumerate(self.block_of) if best.r <= r < best.b]


#: The exact engine's cost limit: the digits of every prediction and label law entry together
#: (about ten million: 2,500 atoms of 6-decimal predictions over 100 classes hold 3 million).
#: The engine's work grows with this, so a hostile or mistaken input is refused at once.
MAX_EXACT_DIGITS = 10_000_000


def _input_digits(dist: FiniteDistribution) -> int:
    """The decimal digits of the exact inputs (numerators and denominators of ``p`` and ``eta``)."""
    bits = 0
    for a in dist.atoms:
        for x in a.p + (a.eta or ()):
            bits += x.numerator.bit_length() + x.denominator.bit_length()
    return int(bits * 0.30103) + 1


def audit(dist: FiniteDistribution, utilities: Mapping[str, Utility], *, rational: str = "fraction",
          max_digits: int = MAX_EXACT_DIGITS) -> AuditResult:
    """Exact UC and HUC of a finite distribution, every sup with its witness (Sec. 2.1, Def. 3.2, App. F.3).

    Parameters
    ----------
    dist : FiniteDistribution
        The atoms: a population (laws ``eta_i``) or a sample (labels).
    utilities : dict of str to Utility
        The utilities by name, each built on ``dist``'s tree.
    rational : {"fraction", "gmpy2"}, default "fraction"
        The exact type computed in: ``"gmpy2"`` computes the same exact values with GMP (an
        optional accelerator); every reported number is a ``Fraction`` either way.
    max_digits : int, default MAX_EXACT_DIGITS
        The bound on the cost: the digits of all exact inputs (predictions and laws) together
        (:data:`MAX_EXACT_DIGITS`).  Raise it to audit larger exact inputs, or audit in float64
        (:mod:`huc_ref.fast`).

    Returns
    -------
    AuditResult
        Every candidate row with its sup and witness; rows come in the order subgroups,
        utilities, then the UC row (``node`` None) before the nodes of ``V_T(u)`` in pre-order
        (docs/specification.md §6).

    Raises
    ------
    HUCError
        For a ``dist`` or utilities the audit cannot take (:func:`~huc_ref.validation.check_utilities`), a
        ``max_digits`` that is not a positive integer, inputs of more digits than
        ``max_digits`` (kind ``too_large``, naming the remedies), or an unknown ``rational``.

    Examples
    --------
    Appendix D.1 (cancellation): ``UC = 0`` while ``HUC = 1/4``.

    >>> from huc_ref.tree import LabelTree
    >>> from huc_ref.utilities import Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"],
    ...                                    "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> res = audit(d, {"u": Table(t, [-1, 1, 1, 1])})
    >>> res.uc.sup, res.huc.sup, res.huc.node, res.huc.interval
    (Fraction(0, 1), Fraction(1, 4), 'v0', (Fraction(1, 2), Fraction(1, 2)))
    """
    check_utilities(check_distribution(dist).tree, dist.n, utilities)
    if not is_integer(max_digits) or max_digits < 1:
        raise HUCError(f"max_digits: expected a positive integer, got {given(max_digits)}", kind="option")
    digits = _input_digits(dist)
    if digits > max_digits:
        raise HUCError(f"atoms: the exact inputs hold about {digits} digits, more than max_digits = {max_digits} "
                       "(the exact audit's cost grows with them); pass max_digits=N for a larger limit, or "
                       "arithmetic='float64'", kind="too_large")
    field = rational_type(rational)
    tree = dist.tree
    n_sub = len(dist.subgroups)
    weights = []
    for k in range(n_sub):
        wc = (a.weight * a.c[k] for a in dist.atoms)
        weights.append([field(x.numerator, x.denominator) for x in wc])
    rows: dict[tuple[int, str], list[Candidate]] = {}
    relevant = {}
    for uname, u in utilities.items():
        rel = [tree.id(v) for v in u.relevant_nodes]
        relevant[uname] = tuple(u.relevant_nodes)
        table = UtilityRows(atom_terms(dist, u, rational=field), weights, rel, field(0), max_interval_sum)
        for k in range(n_sub):
            out = rows.setdefault((k, uname), [])
            for a in [None] + rel:
                best = table.best[k, a]
                interval = None if best.empty else tuple(to_fraction(x) for x in table.interval(best))
                out.append(Candidate(dist.subgroups[k], uname, None if a is None else tree.nodes[a],
                                     best.sup, interval, best.moment))
    candidates = tuple(r for k in range(n_sub) for uname in utilities for r in rows[(k, uname)])
    return AuditResult(candidates, relevant, dist.subgroups, dist.n, dist.is_sample)
