"""HUC-Boost and UC-Boost in float64: the twin of :mod:`huc_ref.boost`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..distribution import FiniteDistribution
from ..driver import Backend, Choice, Update, drive
from ..errors import HUCError, printable
from ..results import BoostResult
from ..significance import tie_tolerance
from ..tree import LabelTree
from ..utilities import Utility
from ..validation import boost_options, boost_settings, check_utilities
from .audit import dense_rows, result_rows, sample_tables, sample_terms
from .context import FLOAT64
from .numbers import (
    TOLERANCES,
    ExactRows,
    floats,
    ratio,
    rounding_bound,
    row_extremes,
    row_sums,
)
from .sample import Sample
from .tree import FastTree, NodeColumns
from .utilities import score_error, utility_values

__all__ = ["FloatBackend", "boost", "boost_sample", "replay", "check_replay", "apply_rules", "direction",
           "branch_masses", "move", "tilt", "label_columns"]


class FloatBackend(Backend):
    """The fast backend of :func:`huc_ref.driver.drive`, vectorised over atoms, its numbers a
    context (:mod:`huc_ref.fast.context`, docs/specification.md §4):

    * ``numbers=FLOAT64`` (plain float64): the state is the predictions themselves
      (:class:`FloatState`), every decision by rounding; uncertified;
    * ``numbers=Certified(...)``: the state is every atom's exact accumulated logits, evaluated in
      float64 with error bounds (:class:`huc_ref.fast.certified.CertifiedState`), every decision
      certified by the bounds, Arb, or the judge; a :class:`FiniteDistribution` only.

    The backend holds the atoms as float64 arrays; the context's state answers the driver.

    Parameters
    ----------
    tree : LabelTree
        The label tree.
    subgroups : sequence of str
        The subgroups' names, one column of ``C`` each.
    P0 : ndarray of shape (n, K)
        The initial predictions, in the tree's label order.
    E : ndarray of shape (n, K)
        The label laws (one-hot rows for sample atoms).
    w : ndarray of shape (n,)
        The weights, summing to 1.
    C : ndarray of shape (n, |C|)
        The subgroup values.
    utilities : dict of str to Utility
        The utilities by name.
    method : {"huc", "uc"}
        HUC-Boost or UC-Boost.
    epsilon : Fraction or float
        The tolerance.
    p0 : list, optional
        The exact rows behind ``P0`` (a distribution's rationals); None: the floats' own binary
        values.
    numbers : context, default FLOAT64
        The numbers (:mod:`huc_ref.fast.context`).
    dist : FiniteDistribution, optional
        The distribution the arrays are of (certified arithmetic reads its exact atoms).

    Examples
    --------
    App. D.1 as arrays: the root's violation is the first choice; its update (Theorem 3.5's
    adaptive step ``alpha = Gamma / Lambda``) moves the atom.

    >>> from huc_ref import demo
    >>> b = FloatBackend(demo.TREE, ["all"], np.full((1, 4), 0.25), np.array([[0.25, 0.0, 0.375, 0.375]]),
    ...                  np.ones(1), np.ones((1, 1)), {"u": demo.U}, "huc", 0.01)
    >>> choice = b.choose(None)
    >>> record = b.update(choice, None, None).record
    >>> b.tree.nodes[choice.node], record["gamma"], record["lambda"], record["alpha"], b.moved.tolist()
    ('v0', 0.25, 0.25, 1.0, [True])
    """

    def __init__(self, tree: LabelTree, subgroups, P0: np.ndarray, E: np.ndarray, w: np.ndarray, C: np.ndarray,
                 utilities: Mapping[str, Utility], method: str, epsilon, p0=None, numbers=FLOAT64, dist=None):
        """The atoms given as float64 arrays: predictions ``P0`` (``n x K``, label order), label laws
        ``E`` (one-hot rows for sample atoms), weights ``w`` summing to 1 and subgroup values ``C``
        (``n x |C|``, columns named by ``subgroups``); ``epsilon`` (exact, or a float); ``p0``: the
        exact rows behind ``P0`` (a distribution's rationals), or None for the floats' own binary
        values; ``numbers``: the context; ``dist``: the :class:`FiniteDistribution` the arrays
        are of (certified arithmetic reads its exact atoms).  :meth:`from_distribution` reads a
        :class:`FiniteDistribution`."""
        self.tree, self.utilities, self.method, self.epsilon = tree, utilities, method, epsilon
        self.subgroups = list(subgroups)
        self.ft = ft = FastTree(tree)
        self.P0, self.E, self.w, self.C = P0, E, w, C
        self.W = self.w[:, None] * self.C
        self.branching = [tree.id(v) for v in tree.branching_nodes]
        self.star = ft.subtree_sums(self.E)  # pi*_a: the label laws never change
        self.p0, self.dist = p0, dist  # the exact initial predictions (None: P0's binary values)
        self.numbers = numbers
        self.certified = numbers.certified
        self.state = numbers.state(self)

    @classmethod
    def from_distribution(cls, dist: FiniteDistribution, utilities: Mapping[str, Utility], method: str,
                          epsilon, numbers=FLOAT64) -> FloatBackend:
        """The backend of a :class:`FiniteDistribution`'s atoms (every number checked to fit float64)
        (Algorithm 1's atoms, Sec. 2.1).

        Parameters
        ----------
        dist : FiniteDistribution
            The atoms.
        utilities : dict of str to Utility
            The utilities by name.
        method : {"huc", "uc"}
            HUC-Boost or UC-Boost.
        epsilon : Fraction or float
            The tolerance.
        numbers : context, default FLOAT64
            The numbers (:mod:`huc_ref.fast.context`).

        Returns
        -------
        FloatBackend
            The backend.

        Raises
        ------
        HUCError
            Naming an atom's number that does not fit float64.

        Examples
        --------
        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/4", "3/4"], "label": "a"}])
        >>> b = FloatBackend.from_distribution(d, {"u": Table(t, [0, 1])}, "huc", 0.01)
        >>> b.P.tolist(), b.state.labels.tolist(), b.p0
        ([[0.25, 0.75]], [0], [(Fraction(1, 4), Fraction(3, 4))])
        """
        K = dist.tree.K
        return cls(dist.tree, dist.subgroups, floats([a.p for a in dist.atoms], "atoms[{}].p[{}]"),
                   floats([a.label_law(K) for a in dist.atoms], "atoms[{}].eta[{}]"),
                   floats([[a.weight] for a in dist.atoms], "atoms[{}].weight{}")[:, 0],
                   floats([a.c for a in dist.atoms], "atoms[{}].c[{}]"), utilities, method, epsilon,
                   [a.p for a in dist.atoms], numbers, dist)

    def initial(self):
        return self.state.initial()

    def choose(self, node):
        return self.state.choose(node)

    def update(self, choice, fixed, floor):
        return self.state.update(choice, fixed, floor)

    def final(self):
        return self.state.final()

    def predictions(self):
        return self.state.predictions()

    @property
    def P(self) -> np.ndarray:
        """The current predictions ``f_t(x_i)`` in float64 (Algorithm 1's state; ``n x K``, label order).

        Examples
        --------
        >>> from huc_ref import demo
        >>> FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 0.01).P.tolist()  # App. D.1
        [[0.25, 0.25, 0.25, 0.25]]
        """
        return self.state.P

    @property
    def moved(self) -> np.ndarray:
        """The rows some update of Algorithm 1 has moved (the others keep ``p0`` exactly).

        Examples
        --------
        >>> from huc_ref import demo
        >>> b = FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 0.01)  # App. D.1
        >>> _ = b.update(b.choose(None), None, None)
        >>> b.moved.tolist()
        [True]
        """
        return self.state.moved

    @property
    def loss(self):
        """The current log loss ``L_log(f_t)`` (E.1): a float in float64; certified, exact rational
        bounds of it.

        Examples
        --------
        >>> from huc_ref import demo
        >>> round(FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 0.01).loss, 12)  # log 4
        1.38629436112
        """
        return self.state.loss


class FloatState:
    """The float64 state of a :class:`FloatBackend`: the predictions themselves; uncertified.

    Each update moves its members as Algorithm 1 states it (:func:`move`: ``q'`` proportional to
    ``q e^(alpha h)`` at node ``v`` in the log domain, or UC-Boost's softmax, floored at the
    smallest normal so a probability never underflows to 0/0), the arithmetic :func:`apply_rules`
    replays, so a replay of the run gives its own numbers.  A row no rule has moved keeps its
    initial prediction exactly.
    """

    def __init__(self, backend: FloatBackend):
        b = backend
        self.tree, self.utilities, self.method, self.eps = b.tree, b.utilities, b.method, float(b.epsilon)
        self.subgroups, self.ft, self.numbers = b.subgroups, b.ft, b.numbers
        self.P0, self.E, self.w, self.C, self.W, self.star, self.p0 = b.P0, b.E, b.w, b.C, b.W, b.star, b.p0
        E = self.E
        one_hot = np.all((E == 0) | (E == 1), axis=1) & (E.sum(axis=1) == 1)
        self.labels = np.argmax(E, axis=1) if one_hot.all() else None  # sample atoms: their labels
        n = len(self.w)
        self.moved = np.zeros(n, dtype=bool)  # rows some rule has moved
        self.P = self.P0.copy()
        self._terms, self._stale = None, np.zeros(0, dtype=np.int64)  # (sample atoms: kept between audits)
        self._rows = [np.empty((0, b.tree.K)), np.empty((0, b.tree.K))]  # an update's members' rows and P U
        self.row_loss = self._row_loss()
        self.loss = self._total(self.row_loss)

    def _exact(self) -> ExactRows:
        """The rationals behind the current rows, for the decisions float64 cannot take: an
        untouched row's exact ``p0`` (its ties are the exact engine's ties), a moved row's
        float values (its exact value is irrational; float64 is all there is).  Tie blocks of
        scores stay whole where float64 cannot separate them, so that a replay of the run's
        rules on float rows (:func:`apply_rules`) selects the same atoms."""
        if self.p0 is None:
            return ExactRows(self.P, settle_scores=False)
        return ExactRows(self.P, _Behind(self.p0, self.P, self.moved), settle_scores=False)

    def _sample_terms(self, exact: ExactRows):
        """The :class:`~huc_ref.fast.audit.SampleTerms` of the current rows: computed once, then
        again only for the rows updates have moved since (an atom's terms depend on its own
        prediction and label alone, so they are the same numbers a full computation gives)."""
        if self._terms is None:
            self._terms = sample_terms(self.ft, self.P, self.labels, self.utilities, np.arange(len(self.P)),
                                       exact=exact)
        elif len(self._stale):
            idx = self._stale
            behind = None if self.p0 is None else _Subset(_Behind(self.p0, self.P, self.moved), idx)
            self._terms.replace(idx, sample_terms(self.ft, self.P[idx], self.labels[idx], self.utilities, idx,
                                                  exact=ExactRows(self.P[idx], behind, settle_scores=False)))
        self._stale = np.zeros(0, dtype=np.int64)
        return self._terms

    def _masses(self, rows: np.ndarray) -> np.ndarray:
        """The subtree masses of ``rows`` at their current predictions (every node, pre-order)."""
        if self.masses is None:  # only the columns read: the update's node and children, a utility's candidates
            return NodeColumns(self.ft, self.ft.level_sums(self.P[rows]))
        return self.masses[rows]

    def _buffer(self, i: int, m: int) -> np.ndarray:
        """``m`` rows of the run's buffer ``i``, grown (by half again) when an update holds more members
        than any before: memory touched once, not at every update (fresh memory is what an update
        of a few milliseconds spends most on)."""
        if len(self._rows[i]) < m:
            self._rows[i] = np.empty((min(len(self.P), max(m, len(self._rows[i]) * 3 // 2)), self.tree.K))
        return self._rows[i][:m]

    def _chosen_values(self, name: str, rows: np.ndarray) -> np.ndarray | None:
        """``u(p_i, .)`` of ``rows`` for a top-1 utility from the choices the audit's sample pass
        made at the current rows (:class:`~huc_ref.fast.audit.SampleTerms`), or None where it kept
        none: the candidates' label sets, one row each, taken by choice."""
        k = list(self.utilities).index(name)
        if self._terms is None or k not in self._terms.choice or len(self._stale):
            return None
        # (the cut's candidates in pre-order: the utility's candidate_ids, in the same order)
        return self.utilities[name].candidate_values[self._terms.choice[k][rows]]

    def _values(self, name: str, rows: np.ndarray, masses: np.ndarray) -> np.ndarray:
        """``u(p_i, .)`` of ``rows`` (subtree masses ``masses``) at their current predictions, decided
        as :meth:`choose` decided them."""
        P = self.P[rows]
        behind = None if self.p0 is None else _Subset(_Behind(self.p0, self.P, self.moved), rows)
        return utility_values(self.utilities[name], self.ft, P, rows, masses,
                              ExactRows(P, behind, settle_scores=False))

    def _row_loss(self, rows=slice(None)):
        """Each row's ``w_i sum_y eta_y log p_y`` (the log loss is minus their sum), of ``rows``;
        for sample atoms ``w_i log p_{y_i}`` (the same number: the other terms are exact zeros)."""
        if self.labels is not None:
            idx = np.arange(len(self.w))[rows]
            return self.w[idx] * np.log(self.P[idx, self.labels[idx]])
        E = self.E[rows]
        with np.errstate(divide="ignore"):
            return self.w[rows] * row_sums(E * np.where(E > 0, np.log(self.P[rows]), 0.0))

    @staticmethod
    def _total(row_loss) -> float:
        return float(-row_loss.sum())

    def initial(self):
        return self.loss, Fraction(self.loss) * (1 + Fraction(1, 10**9))  # an upper bound of the float's rounding

    def choose(self, node):
        P, huc = self.P, self.method == "huc"
        exact = self._exact()
        if self.labels is not None and huc:  # sample atoms: the path form of F.4, as an audit takes them
            self.masses = None  # (the update takes its members' own)
            tables = sample_tables(self.ft, self._sample_terms(exact), self.labels, self.W, self.utilities,
                                   np.arange(len(P)), exact=exact)
        else:
            self.masses = masses = self.ft.subtree_sums(P)
            tables = {name: dense_rows(self.ft, P, self.E, self.W, u, masses, self.star, with_nodes=huc,
                                       exact=exact) for name, u in self.utilities.items()}
        # the first maximiser (App. F.3's tie rule, as the certified engines take it): a later candidate
        # must pass the best so far by more than float64's rounding of a sum of n terms, so that sups
        # equal in exact arithmetic (subgroup "all" and one holding the same atoms) go to the first
        cands = []  # (sup, subgroup, utility, node, table, column)
        for k in range(self.W.shape[1]):
            for name, table in tables.items():
                sup = table.best[k][0]
                for col in ([0] if not huc else range(1, 1 + len(table.nodes))):
                    a = None if col == 0 else int(table.nodes[col - 1])
                    if node is None or a == node:
                        cands.append((float(sup[col]), k, name, a, table, col))
        if not cands:
            return None
        tie = tie_tolerance(len(P), self.tree.K)
        sup, k, name, a, table, col = cands[self.numbers.argmax([c[0] for c in cands], [tie] * len(cands))]
        _, r, b, moment = table.best[k]
        return _Choice(sup, k, name, a, float(moment[col]), self.numbers.sign(sup - self.eps) > 0, int(r[col]),
                       int(b[col]), table)

    def update(self, choice, fixed, floor):
        tree, ft, w, C, P, star = self.tree, self.ft, self.w, self.C, self.P, self.star
        table, k, a = choice.table, choice.subgroup, choice.node
        members = table.members(choice.r, choice.b)
        members = members[C[members, k] != 0]
        c = C[members, k][:, None]
        U = table.U[members] if hasattr(table, "U") else self._chosen_values(choice.utility, members)
        if U is None:
            U = self._values(choice.utility, members, self._masses(members))
        # the members' rows in the run's buffer: no fresh memory per update (clip: into out=, numpy's default
        # mode="raise" copies into a fresh buffer first)
        Pm = np.take(P, members, axis=0, out=self._buffer(0, len(members)), mode="clip")
        pi = branch_masses(ft, Pm, a) if self.method == "huc" else None
        h, q = direction(self.method, ft, Pm, U, c, pi, a, scratch=self._buffer(1, len(members)))
        if self.method == "huc":
            inside = star[members, a]
            kids = np.empty((len(tree.child_ids[a]), len(members))).T  # (column by column, as h and q)
            for j, child in enumerate(tree.child_ids[a]):
                kids[:, j] = star[members, child]
            gamma = float((w[members] * row_sums(h * (kids - inside[:, None] * q))).sum())
        else:
            inside = np.ones(len(members))
            mean = (Pm * h).sum(axis=1, keepdims=True)
            gamma = float((w[members] * (self.E[members] * (h - mean)).sum(axis=1)).sum())
        hi, lo = row_extremes(h)
        lam = float((w[members] * inside * (hi - lo) ** 2).sum() / 4)
        if lam <= 0:
            raise HUCError("boost: Lambda = 0 for a violated candidate (Lemma E.4 says impossible)", kind="internal")
        alpha = gamma / lam if fixed is None else float(np.sign(gamma)) * float(fixed)
        moved = move(self.method, tree, self.P, members, h, alpha, q, a, rows=Pm)
        self.moved[moved] = True
        self._stale = np.union1d(self._stale, moved) if len(self._stale) else np.sort(moved)
        self.row_loss[moved] = self._row_loss(moved)
        loss, after = self.loss, self._total(self.row_loss)
        self.loss = after
        promised = alpha * gamma - alpha ** 2 * lam / 2
        interval = table.interval(choice.r, choice.b)
        record = {"subgroup": self.subgroups[k], "utility": choice.utility,
                  "node": None if a is None else tree.nodes[a], "interval": interval, "gamma": choice.moment,
                  "lambda": lam, "alpha": alpha, "log_loss_before": loss, "log_loss_after": after,
                  "guaranteed_decrease": promised, "quadratic_bound_holds": after <= loss - promised + 1e-12,
                  "log_loss_decreased": after < loss}
        floor_ok = None if floor is None else promised > float(floor) - 1e-12
        return Update(record, (k, choice.utility, a, *interval, alpha), record["quadratic_bound_holds"],
                      record["log_loss_decreased"], floor_ok)

    def final(self):
        masses = self.ft.subtree_sums(self.P)
        exact = self._exact()
        final = result_rows(self.tree, {name: dense_rows(self.ft, self.P, self.E, self.W, u, masses, self.star,
                                                         exact=exact)
                                        for name, u in self.utilities.items()}, self.subgroups, len(self.w), False)
        return {"uc": final.uc.sup, "huc": final.huc.sup, "log_loss": self.loss}

    def predictions(self):
        return self.P.copy()


class _Behind:
    """Row ``i`` of the rationals behind a boosting state: ``p0[i]`` while no rule has moved it,
    else its float values' binary values (the indexable :class:`ExactRows` reads)."""

    def __init__(self, p0, P, moved):
        self.p0, self.P, self.moved = p0, P, moved

    def __getitem__(self, i):
        return tuple(Fraction(float(x)) for x in self.P[i]) if self.moved[i] else self.p0[i]


class _Subset:
    """Rows ``rows`` of an indexable of exact rows, indexed from 0."""

    def __init__(self, rows_of, rows):
        self.rows_of, self.rows = rows_of, rows

    def __getitem__(self, i):
        return self.rows_of[int(self.rows[i])]


@dataclass
class _Choice(Choice):
    r: int = 0  # the witness: blocks r .. b-1 of the table's order
    b: int = 0
    table: object = None


def boost(dist: FiniteDistribution | Sample, utilities: Mapping[str, Utility], *, method: str = "huc",
          epsilon="1/100", max_updates: int = 1000, step="adaptive", select: str = "greedy", max_passes: int = 100,
          progress=None, numbers=FLOAT64) -> BoostResult:
    """HUC-Boost or UC-Boost on the fast backend (the fast twin of :func:`huc_ref.boost.boost`): the
    same driver (:func:`huc_ref.driver.drive`: selection, stopping, caps, records, Theorem 3.5's
    checks) and the same options and messages (:func:`huc_ref.validation.boost_options`), on
    :class:`FloatBackend` with the context ``numbers`` (:mod:`huc_ref.fast.context`): plain
    float64 (the result says ``arithmetic="float64"``) or certified (``"certified"``,
    ``theorem_3_5["certified"] = True``).  ``dist``: a
    :class:`FiniteDistribution`, or, in float64, a :class:`huc_ref.fast.sample.Sample` of float64
    arrays (then no exact number is built: :func:`boost_sample`).

    App. D.1: HUC-Boost removes the violations UC cannot see.

    Parameters
    ----------
    dist : FiniteDistribution or Sample
        The atoms.
    utilities : dict of str to Utility
        The utilities by name.
    method : {"huc", "uc"}, default "huc"
        HUC-Boost or UC-Boost.
    epsilon : int, Fraction or str, default "1/100"
        The tolerance.
    max_updates : int, default 1000
        The cap on the updates.
    step : "adaptive" or exact number, default "adaptive"
        Theorem 3.5's step, or a fixed step magnitude.
    select : {"greedy", "passes", "drain"}, default "greedy"
        The schedule (:class:`huc_ref.driver.Schedule`).
    max_passes : int, default 100
        The budget of ``select="passes"``.
    progress : callable, optional
        ``progress(t, record)`` after every update.
    numbers : context, default FLOAT64
        :data:`huc_ref.fast.context.FLOAT64` or a :class:`huc_ref.fast.context.Certified`.

    Returns
    -------
    BoostResult
        The run.

    Raises
    ------
    HUCError
        For the options and utilities :func:`huc_ref.validation.boost_options` refuses, or an
        atom's number that does not fit float64.

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> r = boost(d, {"u": Table(t, [-1, 1, 1, 1])}, epsilon="1/100")
    >>> r.stopped, len(r.updates), r.updates[0]["node"], r.final["huc"] <= 0.01, r.theorem_3_5["holds"]
    ('tolerance', 13, 'v0', True, True)
    >>> from huc_ref.boost import Judge
    >>> from huc_ref.fast.context import Certified  # certified: the same two updates as the certified engine's
    >>> r = boost(d, {"u": Table(t, [-1, 1, 1, 1])}, epsilon="1/10", numbers=Certified(Judge))
    >>> r.stopped, len(r.updates), r.updates[0]["alpha"], r.theorem_3_5["holds"], r.theorem_3_5["certified"]
    ('tolerance', 2, '1', True, True)
    """
    options = dict(method=method, select=select, epsilon=epsilon, max_updates=max_updates, step=step,
                   max_passes=max_passes)
    if isinstance(dist, Sample):  # float64 arrays: no exact number built
        eps, fixed = boost_settings(dist.tree, dist.n, utilities, **options)
        backend = FloatBackend(dist.tree, list(dist.subgroups), dist.P, dist.label_laws(), dist.w, dist.C, utilities,
                               method, eps, numbers=numbers)
    else:
        eps, fixed = boost_options(dist, utilities, **options)
        backend = FloatBackend.from_distribution(dist, utilities, method, eps, numbers)
    return drive(backend, BoostResult(method, eps, None, numbers.arithmetic), method=method, epsilon=eps,
                 fixed=fixed, select=select, max_updates=max_updates, max_passes=max_passes, progress=progress)


def boost_sample(tree: LabelTree, P: np.ndarray, y: np.ndarray, utilities: Mapping[str, Utility], *,
                 subgroups=("all",), C: np.ndarray | None = None, w: np.ndarray | None = None, method: str = "huc",
                 epsilon="1/100", max_updates: int = 1000, step="adaptive", select: str = "greedy",
                 max_passes: int = 100, progress=None) -> BoostResult:
    """:func:`boost` on a labelled sample given as float64 arrays, with no exact number built:
    predictions ``P`` (``n x K``, label order, positive entries, rows summing to 1 within
    :data:`huc_ref.fast.audit.ROW_SUM_TOLERANCE`),
    labels ``y`` (names or ids), subgroup values ``C`` (``n x |C|`` in [-1, 1], columns named by
    ``subgroups``; default: everyone) and positive weights ``w`` (default ``1/n``; divided by
    their sum).  Bad input gets one HUCError naming it (a row's entries must be positive: boosting
    takes their logs).
    The rows behind the floats are their own binary values (as :func:`huc_ref.fast.audit`
    reads an array), so a decision float64 cannot certify is taken on those.

    App. D.1 as a sample (p = 1/4 each; labels y1 x2, y3 x3, y4 x3):

    Parameters
    ----------
    tree : LabelTree
        The label tree.
    P : array-like of shape (n, K)
        The predictions.
    y : array-like of n labels
        Label names or ids.
    utilities : dict of str to Utility
        The utilities by name.
    subgroups : sequence of str, default ("all",)
        The subgroups' names.
    C : array-like of shape (n, |C|), optional
        The subgroup values; default: everyone.
    w : array-like of shape (n,), optional
        Positive weights; default ``1/n``.
    method, epsilon, max_updates, step, select, max_passes, progress
        As :func:`boost` takes them.

    Returns
    -------
    BoostResult
        The run, ``arithmetic == "float64"``.

    Raises
    ------
    HUCError
        What :class:`huc_ref.fast.sample.Sample` and :func:`boost` refuse, naming the argument.

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> r = boost_sample(t, np.full((8, 4), 0.25), np.array([0, 0, 2, 2, 2, 3, 3, 3]), {"u": Table(t, [-1, 1, 1, 1])})
    >>> r.stopped, r.final["huc"] <= 0.01, r.theorem_3_5["holds"]
    ('tolerance', True, True)
    """
    return boost(Sample(tree, P, y, subgroups, C, w), utilities, method=method, epsilon=epsilon,
                 max_updates=max_updates, step=step, select=select, max_passes=max_passes, progress=progress)


def check_replay(result, dist, utilities) -> None:
    """The arguments of :func:`replay` (K.1's replay of a run on other atoms), checked: a
    :class:`BoostResult`, atoms (a :class:`FiniteDistribution` or a :class:`Sample`) and
    utilities that can be audited on them; one HUCError otherwise.

    Parameters
    ----------
    result : BoostResult
        The run.
    dist : FiniteDistribution or Sample
        The atoms.
    utilities : dict of str to Utility
        The utilities by name.

    Raises
    ------
    HUCError
        Naming the argument that is not what it should be.

    Examples
    --------
    >>> check_replay(None, None, {})
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: result: expected a BoostResult (a boosting run), got NoneType
    """
    if not isinstance(result, BoostResult):
        raise HUCError(f"result: expected a BoostResult (a boosting run), got {type(result).__name__}", kind="type")
    if not isinstance(dist, (FiniteDistribution, Sample)):
        raise HUCError(f"dist: expected a FiniteDistribution or a fast.Sample (the atoms to replay the run on), got "
                       f"{type(dist).__name__}", kind="type")
    check_utilities(dist.tree, dist.n, utilities)


def replay(result: BoostResult, dist: FiniteDistribution | Sample, utilities: Mapping[str, Utility]):
    """The predictions of ``dist``'s atoms (a distribution's, or a :class:`huc_ref.fast.sample.Sample`'s)
    after 0, 1, ... of a boosting run's updates (a run of either backend), in float64.

    Each update is a rule: atoms of subgroup ``c`` whose score lies in the update's
    interval move by ``alpha h(x)``, with ``h`` computed at their own prediction (K.1:
    validation replays the run to choose the returned prefix; test atoms get it applied).
    Yields ``(t, P)`` arrays; on the run's own atoms the last equals the run's predictions.
    A rule's subgroup is found by name among ``dist``'s (in any order); a subgroup or a utility
    the atoms do not have is one HUCError naming the update.

    Parameters
    ----------
    result : BoostResult
        The run.
    dist : FiniteDistribution or Sample
        The atoms to replay it on.
    utilities : dict of str to Utility
        The utilities by name, those of the run.

    Yields
    ------
    t : int
        The updates applied.
    P : ndarray of shape (n, K)
        The predictions after them.

    Raises
    ------
    HUCError
        For arguments :func:`check_replay` refuses, or an update whose subgroup or utility the
        atoms do not have.

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> u = {"u": Table(t, [-1, 1, 1, 1])}
    >>> r = boost(d, u, epsilon="1/100")
    >>> last = list(replay(r, d, u))[-1]
    >>> last[0], bool(np.allclose(last[1], r.predictions))
    (13, True)
    """
    check_replay(result, dist, utilities)
    column = {name: k for k, name in enumerate(dist.subgroups)}  # (the rules name their subgroups by the run's order)
    steps = []
    for t, ((_, name, *rule), update) in enumerate(zip(result.steps, result.updates), start=1):
        if update["subgroup"] not in column:
            raise HUCError(f"subgroups: the run's update {t} is for subgroup {printable(update['subgroup'], 80)!r}, "
                           f"which these atoms do not have (theirs: {list(dist.subgroups)})", kind="reference")
        if name not in utilities:
            raise HUCError(f"utilities: the run's update {t} is for utility {printable(name, 80)!r}, which is not "
                           f"given (given: {list(utilities)})", kind="reference")
        steps.append((column[update["subgroup"]], name, *rule))
    if isinstance(dist, Sample):  # float64 arrays already
        P, C = dist.P, dist.C
    else:
        P = floats([a.p for a in dist.atoms], "atoms[{}].p[{}]")
        C = floats([a.c for a in dist.atoms], "atoms[{}].c[{}]")
    yield from apply_rules(result.method, steps, dist.tree, utilities, P, C)


def apply_rules(method: str, steps, tree: LabelTree, utilities: Mapping[str, Utility], P: np.ndarray,
                C: np.ndarray):
    """A run's rules applied to predictions ``P`` (float64, ``n x K``, label order) with
    subgroup values ``C`` (``n x |C|``), labelled or not: yields ``(t, P)`` after 0, 1, ... rules.

    Each rule ``(subgroup index, utility, node id, lo, hi, alpha)`` moves the rows of subgroup
    ``c`` whose score ``mu_u(p)`` lies in ``[lo, hi]`` (within the scores' rounding bounds) by
    ``alpha h(x)``: HUC-Boost's ``h = c Delta_{u,v}`` at node ``v`` (Algorithm 1), UC-Boost's
    ``h = c (u - mu_u)`` on the leaves, each at the row's own current prediction.

    Parameters
    ----------
    method : {"huc", "uc"}
        HUC-Boost or UC-Boost.
    steps : iterable of tuple
        The rules ``(subgroup index, utility, node id, lo, hi, alpha)``.
    tree : LabelTree
        The label tree.
    utilities : dict of str to Utility
        The utilities by name.
    P : array-like of shape (n, K)
        The predictions, in the tree's label order.
    C : ndarray of shape (n, |C|)
        The subgroup values.

    Yields
    ------
    t : int
        The rules applied.
    P : ndarray of shape (n, K)
        The predictions after them (a new array each time).

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> [(k, P.round(6).tolist()) for k, P in apply_rules("huc", [(0, "u", 0, 0.25, 0.75, 1.0)], t,
    ...                                                   {"u": Table(t, [0, 1])}, np.array([[0.5, 0.5]]),
    ...                                                   np.ones((1, 1)))]  # h = (-1/2, 1/2): 1 / (1 + e)
    [(0, [[0.5, 0.5]]), (1, [[0.268941, 0.731059]])]
    """
    ft = FastTree(tree)
    P = np.asarray(P, dtype=float)
    yield 0, P
    rel = rounding_bound(ft.K)
    for t, (k, name, a, lo, hi, alpha) in enumerate(steps, start=1):
        lo, hi, alpha = float(lo), float(hi), float(alpha)
        u = utilities[name]
        masses = ft.subtree_sums(P)
        U = utility_values(u, ft, P, None, masses)
        score = ratio(ft.subtree_sums(P * U, np.array([0]))[:, 0], masses[:, 0])  # as the run computed it
        slack = score_error(u, rel, score, ratio(row_sums(P * np.abs(U)), masses[:, 0]))
        members = np.flatnonzero((score >= lo - slack) & (score <= hi + slack) & (C[:, k] != 0))
        P = P.copy()
        pi = branch_masses(ft, P[members], a) if method == "huc" else None
        h, q = direction(method, ft, P[members], U[members], C[members, k][:, None], pi, a)
        move(method, tree, P, members, h, alpha, q, a)
        yield t, P


def direction(method: str, ft: FastTree, P: np.ndarray, U: np.ndarray, c: np.ndarray, pi: np.ndarray | None = None,
              a: int | None = None, scratch: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """The update direction ``h`` of rows ``P`` (utility values ``U``, subgroup values ``c`` as a
    column) and, for HUC-Boost, their branch probabilities ``q`` at node ``a``: Algorithm 1's
    ``h = c Delta_{u,v}``, ``Delta_{u,v,j} = mu_{u,v_j} - mu_{u,v}`` over the children of
    ``v = a`` (``pi``: the masses of ``a`` and its children), or UC-Boost's ``h = c (u - mu_u)``
    over the leaves (Sec. 3.2, App. E).  The run (:class:`FloatBackend`) and its replay
    (:func:`apply_rules`) both take it from here, so they move rows by the same numbers.
    ``scratch``: an array of ``P``'s shape to hold ``P U`` (a run's buffer: no fresh memory per update).

    Parameters
    ----------
    method : {"huc", "uc"}
        HUC-Boost or UC-Boost.
    ft : FastTree
        The tree.
    P : ndarray of shape (m, K)
        The rows.
    U : ndarray of shape (m, K)
        Their utility values.
    c : ndarray of shape (m, 1)
        Their subgroup values.
    pi : ndarray of shape (m, 1 + children), optional
        HUC-Boost: the masses of ``a`` and its children (:func:`branch_masses`).
    a : int, optional
        HUC-Boost: the node's id.
    scratch : ndarray of shape (m, K), optional
        A buffer for ``P U``.

    Returns
    -------
    h : ndarray
        The direction, a column per child of ``a`` (HUC-Boost) or per label (UC-Boost).
    q : ndarray or None
        HUC-Boost: the branch probabilities ``pi_{v_j} / pi_v``; UC-Boost: None.

    Examples
    --------
    >>> from huc_ref import LabelTree
    >>> ft = FastTree(LabelTree.from_children("r", {"r": ["a", "b"]}))
    >>> P, U, c = np.array([[0.5, 0.5]]), np.array([[0.0, 1.0]]), np.ones((1, 1))
    >>> [x.tolist() for x in direction("huc", ft, P, U, c, np.array([[1.0, 0.5, 0.5]]), 0)]
    [[[-0.5, 0.5]], [[0.5, 0.5]]]
    >>> direction("uc", ft, P, U, c)[0].tolist()  # u - mu_u, mu_u = 1/2
    [[-0.5, 0.5]]
    """
    if method == "uc":
        return c * (U - (P * U).sum(axis=1, keepdims=True)), None
    mu = ratio(branch_masses(ft, np.multiply(P, U, out=scratch), a), pi)  # N_{u,a}, its children's (C.1), over pi
    return c * (mu[:, 1:] - mu[:, :1]), pi[:, 1:] / pi[:, :1]


def branch_masses(ft: FastTree, X: np.ndarray, a: int) -> np.ndarray:
    """The subtree sums (C.1) of the rows ``X`` at node ``a`` and its children: each child's labels
    summed, ``a``'s as their sum (only these columns: no level sums of the whole tree).  The
    masses ``pi`` of an update's members and, of ``p u``, the ``N_u`` of :func:`direction`; the
    run and its replay (:func:`apply_rules`) both take them from here.

    Parameters
    ----------
    ft : FastTree
        The tree.
    X : ndarray of shape (m, K)
        The rows, in the tree's label order.
    a : int
        The node's id.

    Returns
    -------
    ndarray of shape (m, 1 + children)
        ``a``'s sum, then each child's.

    Examples
    --------
    >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
    >>> branch_masses(FastTree(t), np.array([[0.25, 0.25, 0.5]]), 0).tolist()  # r, a, y3
    [[1.0, 0.5, 0.5]]
    """
    kids = ft.tree.child_ids[a]
    S = np.empty((1 + len(kids), len(X))).T  # (a column per node: an update's arithmetic on them runs down columns)
    for j, child in enumerate(kids):
        S[:, j + 1] = row_sums(X[:, label_columns(ft.tree, child)])
    S[:, 0] = row_sums(S[:, 1:])
    return S


def label_columns(tree: LabelTree, a: int):
    """The columns of node ``a``'s labels (``Y_a`` of Sec. 2.1, whose masses sum to ``pi_a`` in C.1, in
    label order): a slice where they are a run of label ids (a view, no gathered copy), else their ids.

    Parameters
    ----------
    tree : LabelTree
        The tree.
    a : int
        The node's id.

    Returns
    -------
    slice or list of int
        The columns.

    Examples
    --------
    >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]}, labels=["y1", "y3", "y2"])
    >>> label_columns(t, 0), label_columns(t, 1)
    (slice(0, 3, None), [0, 2])
    """
    ids = tree.label_ids_below(a)
    return slice(ids[0], ids[-1] + 1) if ids[-1] - ids[0] == len(ids) - 1 else list(ids)


def tilt(q: np.ndarray, h: np.ndarray, alpha: float) -> np.ndarray:
    """Each row of ``q`` tilted by ``e^(alpha h)`` and normalised: ``q'_j = q_j e^(alpha h_j) /
    sum_k q_k e^(alpha h_k)`` (App. E.1's update of the branch probabilities; UC-Boost's softmax of
    ``log p + alpha h``), a probability row for every finite ``alpha``.

    Log-sum-exp with the largest term subtracted, in two stages so that ``alpha h`` never
    absorbs ``log q``.  Write ``d_j = log q_j + alpha (h_j - h_top)`` with ``h_top`` the row's
    largest ``h`` (its smallest when ``alpha < 0``): ``alpha (h_j - h_top) <= 0`` exactly (a
    product keeps its factors' signs), so ``d_j <= log q_j <= 0``, and at the child ``r``
    attaining ``h_top`` the step term is exactly 0, so ``max_j d_j >= log q_r >= log(tiny)``
    (every entry is floored at the smallest normal).  The terms ``e_j = e^(d_j - max d)`` lie
    in [0, 1] with one exactly 1, their sum ``S`` in [1, d], and ``q'_j = e_j / S`` sums to 1
    within ``(d + 1) u`` whatever the rounding of each ``e_j``: the normalisation is exact
    arithmetic's up to one division a term.  Written as ``log q + alpha h`` minus the row's
    maximum (one stage), a step of ``1e300`` rounds ``log q + alpha h`` to ``alpha h``, and a
    step of ``1e10`` leaves only ``1e-6`` of ``log q``'s digits: the rows then sum to what
    ``q`` lost.  ``alpha (h_j - h_top)`` may only overflow to ``-inf`` (``e^-inf = 0``, the
    limit), never to a NaN, since ``alpha`` is finite and ``h_top - h_top = 0``.

    Parameters
    ----------
    q : ndarray of shape (m, d)
        Probability rows, every entry at least the smallest normal float64 (or 0).
    h : ndarray of shape (m, d)
        The directions.
    alpha : float
        The step, finite.

    Returns
    -------
    ndarray of shape (m, d)
        The tilted rows.

    Examples
    --------
    >>> tilt(np.array([[0.25, 0.75]]), np.array([[1.0, 0.0]]), np.log(3.0)).round(12).tolist()  # 3 : 3
    [[0.5, 0.5]]
    >>> tilt(np.array([[0.25, 0.75]]), np.array([[1.0, 0.0]]), 1e300).tolist()  # the limit: all on child 0
    [[1.0, 0.0]]
    """
    hi, lo = row_extremes(h)
    top = hi if alpha >= 0 else lo
    with np.errstate(divide="ignore", over="ignore"):  # (log 0 = -inf and an overflow to -inf: weights of 0)
        d = np.log(q) + alpha * (h - top[:, None])
    e = np.exp(d - row_extremes(d)[0][:, None])
    return e / row_sums(e)[:, None]


def move(method: str, tree: LabelTree, P: np.ndarray, members: np.ndarray, h: np.ndarray, alpha: float,
         q: np.ndarray | None = None, a: int | None = None, rows: np.ndarray | None = None) -> np.ndarray:
    """One update of Algorithm 1, as App. E.1 writes it: "q_{t+1,v,j}(x) = q_{t,v,j}(x) e^{alpha_t
    h_{t,j}(x)} / sum_k q_{t,v,k}(x) e^{alpha_t h_{t,k}(x)}, f_{t+1}(x)_y = f_t(x)_y q_{t+1,v,j}(x) /
    q_{t,v,j}(x)" (HUC-Boost at node ``a``: ``q'_j`` proportional to ``q_j e^(alpha h_j)`` over its
    children, with ``q`` the members' current conditional masses; each label below child ``j``
    scaled by ``q'_j / q_j``) or of UC-Boost (``p' = softmax(log p + alpha h)``), on the rows
    ``members`` of ``P`` in place, the tilt computed by :func:`tilt` (a probability row for any
    finite step), floored at the smallest normal; returns the rows moved.  A row whose ``h`` is
    the same everywhere is not moved (``q' = q`` exactly; the float factor ``1 / sum q`` would
    perturb it by an ulp and could flip a tie).
    ``rows``: ``P[members]`` already gathered (a run's buffer, used up), or None.

    Each label below child ``j`` is scaled by ``q'_j / q_j <= 1 / tiny`` (finite: ``q_j >= tiny``
    since every entry is floored), and node ``a``'s labels then sum to ``pi_a sum_j q'_j`` within
    ``(2 d_a + 8) u`` relatively (``q_j``, the factor, the product and the children's sums each
    round): a row's sum moves by at most ``(2K + 8) u`` a rule (:func:`huc_ref.calibration.row_sum_tolerance`).

    Parameters
    ----------
    method : {"huc", "uc"}
        HUC-Boost or UC-Boost.
    tree : LabelTree
        The tree.
    P : ndarray of shape (n, K)
        The predictions, moved in place.
    members : ndarray of int
        The rows the update applies to.
    h : ndarray
        Their directions (:func:`direction`).
    alpha : float
        The step.
    q : ndarray, optional
        HUC-Boost: the members' branch probabilities at ``a``.
    a : int, optional
        HUC-Boost: the node's id.
    rows : ndarray, optional
        ``P[members]`` already gathered, or None.

    Returns
    -------
    ndarray of int
        The rows moved: ``members`` without those whose ``h`` is the same everywhere.

    Examples
    --------
    >>> from huc_ref import LabelTree
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> P = np.array([[0.5, 0.5], [0.25, 0.75]])
    >>> move("huc", t, P, np.array([0, 1]), np.array([[-0.5, 0.5], [0.0, 0.0]]), 1.0, P.copy(), 0).tolist()
    [0]
    >>> P.round(6).tolist()  # row 0: 1 / (1 + e), e / (1 + e); row 1 unmoved
    [[0.268941, 0.731059], [0.25, 0.75]]
    """
    hi, lo = row_extremes(h)
    moving = hi != lo
    if not moving.all():
        rows = None
        members, h, q = members[moving], h[moving], None if q is None else q[moving]
    if method == "huc":
        factor = tilt(q, h, alpha) / q  # q'_j / q_j
        rows = P[members] if rows is None else rows  # (gathered once, written back once)
        for j, child in enumerate(tree.child_ids[a]):
            rows[:, label_columns(tree, child)] *= factor[:, j:j + 1]
    else:
        rows = tilt(P[members], h, alpha)
    P[members] = np.maximum(rows, TOLERANCES["floor"], out=rows)
    return members
