"""The boosting driver, written once for both backends (Algorithm 1/3, UC-Boost; Sec. 3.2,
App. E, H, K.1): which candidate each audit looks at (:class:`Schedule`), when the run stops,
the caps, the record of every update and Theorem 3.5's checks.

A backend (the certified engine, :class:`huc_ref.boost.CertifiedBackend`, or the fast one,
:class:`huc_ref.fast.boost.FloatBackend`, in plain or certified float64) supplies the numbers:
``initial()`` (the log loss as recorded and a rational upper bound of it), ``choose(node)``
(the largest candidate, at one node or anywhere, with whether it exceeds epsilon),
``update(choice, fixed, floor)`` (one step: its record, its rule for replay and its checks),
``final()`` and ``predictions()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .bounds import theorem_3_5_update_bound, update_decrease_floor
from .rational import exact_dot, exact_sum, fraction_text
from .results import BoostResult

__all__ = ["Backend", "Choice", "Schedule", "Update", "drive", "rational_gamma"]


@dataclass
class Choice:
    """The largest candidate a backend's ``choose`` finds, and whether it exceeds epsilon (Sec. 3.2's stopping rule).

    Each backend's subclass adds what its update needs.

    Parameters
    ----------
    sup : number
        The candidate's sup (a float, or the certified engine's working-precision number).
    subgroup : int
        Its subgroup's index.
    utility : str
        Its utility's name.
    node : int or None
        Its node id, or None for the UC row.
    moment : number
        The signed moment ``Gamma`` of its witness, in the same numbers.
    exceeds : bool
        Whether ``sup`` exceeds epsilon.

    Examples
    --------
    >>> c = Choice(sup=0.25, subgroup=0, utility="u", node=None, moment=-0.25, exceeds=0.25 > 0.01)
    >>> (c.node, abs(c.moment) == c.sup, c.exceeds)  # UC's row: the witness's moment is -sup
    (None, True, True)
    """

    sup: float
    subgroup: int
    utility: str
    node: int | None
    moment: float
    exceeds: bool


@dataclass
class Update:
    """One applied step, as a backend reports it, with Theorem 3.5's checks for it (eq. (101)).

    Parameters
    ----------
    record : dict
        The update's ``huc-boost/1`` record (subgroup, utility, node, interval, ``gamma``,
        ``lambda``, ``alpha``, the log loss before and after, ...).
    rule : tuple
        ``(subgroup index, utility, node id, lo, hi, alpha)``: the update as a rule, for replay.
    bound_ok : bool
        Whether eq. (101)'s quadratic bound holds for the applied step.
    decreased : bool
        Whether the log loss strictly decreased.
    floor_ok : bool or None
        Whether the decrease reached the floor Theorem 3.5 promises
        (:func:`huc_ref.bounds.update_decrease_floor`); None where there is none.

    Examples
    --------
    The float64 backend's first step on App. D.1's population:

    >>> from huc_ref import demo
    >>> from huc_ref.fast.boost import FloatBackend
    >>> backend = FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 1 / 100)
    >>> step = backend.update(backend.choose(None), None, None)
    >>> step.rule, step.bound_ok, step.decreased, step.floor_ok
    ((0, 'u', 0, 0.5, 0.5, 1.0), True, True, None)
    """

    record: dict
    rule: tuple
    bound_ok: bool
    decreased: bool
    floor_ok: bool | None


def rational_gamma(dist, method: str, node: int | None, h: dict) -> Fraction:
    """``Gamma_t = E[<h(X), R_v(f_t(X), Y)>]`` (E.2) exactly, on atoms that no update has moved.

    Parameters
    ----------
    dist : FiniteDistribution
        The atoms, at their initial predictions ``p0``: every term is rational there.
    method : {"huc", "uc"}
        HUC-Boost (``R_v`` at node ``node``) or UC-Boost (``R`` over every leaf,
        ``e_Y - f_t``).
    node : int or None
        The node id (None for UC-Boost).
    h : dict of int to sequence
        The direction: atom index to its exact values (ints or Fractions), one per child of
        ``node``, or per leaf.  Atoms not in it contribute nothing.

    Returns
    -------
    Fraction
        ``Gamma_t``.

    Notes
    -----
    The certified backends round the adaptive step ``alpha = Gamma / Lambda`` from this exact
    value, so steps of equal exact value are equal steps (docs/specification.md §4: "Rational
    inputs stay exact until the first exp").  Rounded from a value computed at the working
    precision, two steps of exactly ``-2/5`` differed by ``1e-35`` and split an exact tie of two
    atoms' scores, which changed the next update's interval and ``Gamma`` by 2%.

    Examples
    --------
    App. D.1: the root's direction ``Delta = (-1/2, 1/2)`` has ``Gamma = D_top = 1/4``.

    >>> from huc_ref import LabelTree, FiniteDistribution
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> rational_gamma(d, "huc", t.id("v0"), {0: [Fraction(-1, 2), Fraction(1, 2)]})
    Fraction(1, 4)
    >>> rational_gamma(d, "uc", None, {0: [-1, 1, 1, 1]})  # E[u(Y)] - mu_u = 1/2 - 1/2: D.1's UC
    Fraction(0, 1)
    """
    tree = dist.tree
    groups = [tree.label_ids_below(k) for k in tree.child_ids[node]] if method == "huc" else None
    where = {y: j for j, ys in enumerate(groups) for y in ys} if method == "huc" else None
    terms = []
    for i, hi in h.items():
        atom = dist.atoms[i]
        if method == "huc":  # sum_j h_j (pi*_{v_j} - pi*_v q_{v,j}), q_{v,j} = pi_{v_j} / pi_v
            pis = [exact_sum([atom.p[y] for y in ys]) for ys in groups]
            moved = exact_dot(hi, pis) / exact_sum(pis)  # sum_j q_{v,j} h_j
            if atom.eta is None:  # a sample point: pi* is its label's indicator
                j = where.get(atom.label)
                terms.append(0 if j is None else hi[j] - moved)
            else:
                stars = [exact_sum([atom.eta[y] for y in ys]) for ys in groups]
                terms.append(exact_dot(hi, stars) - exact_sum(stars) * moved)
        else:  # sum_y eta_y h_y - sum_y p_y h_y
            terms.append((hi[atom.label] if atom.eta is None else exact_dot(atom.eta, hi)) - exact_dot(atom.p, hi))
    return exact_dot([dist.atoms[i].weight for i in h], terms)


class Backend:
    """What :func:`drive` asks of a backend: the numbers of Algorithm 1 or UC-Boost for one state.

    The certified engine (:class:`huc_ref.boost.CertifiedBackend`) and the fast backend
    (:class:`huc_ref.fast.boost.FloatBackend`, its numbers plain float64 or certified float64,
    :mod:`huc_ref.fast.context`) implement it; the examples run the float64 one on App. D.1's
    population.

    Attributes
    ----------
    certified : bool
        Whether the backend's decisions and Theorem 3.5 checks are certified.
    tree : LabelTree
        The label tree.
    branching : list of int
        The ids of the nodes K.1's passes visit (the branching nodes, in pre-order).

    Examples
    --------
    >>> from huc_ref import demo
    >>> from huc_ref.fast.boost import FloatBackend
    >>> backend = FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 1 / 100)  # App. D.1
    >>> isinstance(backend, Backend), backend.certified, backend.branching
    (True, False, [0, 1, 4])
    """

    #: whether the backend's decisions and Theorem 3.5 checks are certified
    certified = False

    def initial(self) -> tuple:
        """The initial log loss ``L_log(f_0)`` of Theorem 3.5, as recorded and as a rational upper bound.

        Returns
        -------
        recorded : float or str
            The log loss as the run's record shows it (the certified engine's as decimal text).
        upper : Fraction
            A rational upper bound of it, for the theorem's update budget
            ``2 L_log(f_0) / eps^2``.

        Examples
        --------
        >>> from huc_ref import demo
        >>> from huc_ref.fast.boost import FloatBackend
        >>> backend = FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 1 / 100)  # App. D.1
        >>> import math
        >>> round(backend.initial()[0], 12), backend.initial()[1] >= math.log(4)  # -sum_y eta_y log(1/4) = log 4
        (1.38629436112, True)
        """
        raise NotImplementedError

    def choose(self, node) -> Choice:
        """The largest candidate, with whether it exceeds epsilon (Sec. 3.2's selection rule, the audit of Algorithm 2).

        Parameters
        ----------
        node : int or None
            A node id: the candidates at that node only; None: every candidate.

        Returns
        -------
        Choice
            The first maximiser (subgroups, utilities, nodes in order).

        Examples
        --------
        >>> from huc_ref import demo
        >>> from huc_ref.fast.boost import FloatBackend
        >>> backend = FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 1 / 100)  # App. D.1
        >>> backend.choose(None).sup, backend.choose(None).node  # D.1's HUC: 1/4 at the root (node id 0)
        (0.25, 0)
        """
        raise NotImplementedError

    def update(self, choice: Choice, fixed, floor) -> Update:
        """Apply one step at a chosen candidate and report it (Sec. 3.2's branch tilt).

        Parameters
        ----------
        choice : Choice
            The candidate, as :meth:`choose` returned it.
        fixed : Fraction or None
            A fixed step magnitude, or None for Algorithm 1's adaptive step ``Gamma / Lambda``.
        floor : Fraction or None
            The least decrease Theorem 3.5 promises (:func:`huc_ref.bounds.update_decrease_floor`),
            or None.

        Returns
        -------
        Update
            The step's record, its rule and its checks.

        Examples
        --------
        >>> from huc_ref import demo
        >>> from huc_ref.fast.boost import FloatBackend
        >>> backend = FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 1 / 100)  # App. D.1
        >>> backend.update(backend.choose(None), None, None).rule  # (subgroup, utility, node, lo, hi, step)
        (0, 'u', 0, 0.5, 0.5, 1.0)
        """
        raise NotImplementedError

    def final(self) -> dict:
        """UC, HUC (Def. 2.1, 3.2) and the log loss of the current predictions.

        Returns
        -------
        dict
            ``{"uc", "huc", "log_loss"}`` of the current state (floats, or the certified engine's
            decimal text).

        Examples
        --------
        >>> from huc_ref import demo
        >>> from huc_ref.fast.boost import FloatBackend
        >>> backend = FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 1 / 100)  # App. D.1
        >>> backend.final()["uc"], backend.final()["huc"]  # D.1's cancellation: UC 0, HUC 1/4
        (0.0, 0.25)
        """
        raise NotImplementedError

    def predictions(self) -> list:
        """The current predictions ``f_t(x_i)`` of the atoms (Algorithm 1's state), a row per atom.

        Returns
        -------
        list or numpy.ndarray
            Lists (the certified engines), or the float64 backend's ``(n, K)`` array.

        Examples
        --------
        >>> from huc_ref import demo
        >>> from huc_ref.fast.boost import FloatBackend
        >>> backend = FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 1 / 100)  # App. D.1
        >>> backend.predictions().tolist()
        [[0.25, 0.25, 0.25, 0.25]]
        """
        raise NotImplementedError


class Schedule:
    """Which node each audit of a boosting run looks at, and when the run stops (K.1, Sec. 3.2).

    One rule for every backend.  UC-Boost, and a tree without branching nodes, use
    ``greedy``.

    Parameters
    ----------
    select : {"greedy", "passes", "drain"}
        The rule:

        * ``greedy``: every audit looks at all candidates and updates the largest violation;
          the run stops when none exceeds epsilon.
        * ``passes`` (K.1, literally): "Each HUC-Boost procedure ... uses at most 100 passes
          over the nodes with at least two children, for a node-audit budget of 100 times the
          number of such nodes.  A node is updated only when its audited violation exceeds
          [epsilon] ... HUC-Boost stops when a complete pass finds no violation, or when the
          respective budget is exhausted."  A pass visits the branching nodes in pre-order and
          audits each **once**, updating it at most once.
        * ``drain`` (a rule of this project, not the paper's): stay on a node and update it
          until it is clean, then move on; stop after a full cycle of clean nodes.
    branching : iterable of int
        The branching nodes' ids, in pre-order.
    max_passes : int, default 100
        The budget of ``passes`` (100 in K.1).

    Attributes
    ----------
    log : list of tuple
        Every audit as ``(node id or None, updated)``.

    Examples
    --------
    >>> s = Schedule("passes", [0, 1], max_passes=2)
    >>> for updated in (True, False, False, False):  # pass 1 updates node 0; pass 2 finds nothing
    ...     node = s.node(); stop = s.after(updated)
    >>> stop, s.log
    ('tolerance', [(0, True), (1, False), (0, False), (1, False)])
    >>> s = Schedule("passes", [0, 1], max_passes=1)
    >>> s.node(), s.after(True), s.node(), s.after(True)  # the budget of one pass is spent
    (0, None, 1, 'budget')
    >>> s = Schedule("drain", [0, 1])
    >>> [(s.node(), s.after(u)) for u in (True, True, False, False)]
    [(0, None), (0, None), (0, None), (1, 'tolerance')]
    """

    def __init__(self, select: str, branching, *, max_passes: int = 100):
        self.nodes = list(branching)
        self.select = select if self.nodes else "greedy"
        self.max_passes = max_passes
        self.position, self.passes, self.updated_in_pass, self.quiet = 0, 0, False, 0
        self.log: list[tuple] = []

    def node(self):
        """The node to audit next (K.1's passes visit the branching nodes in pre-order).

        Returns
        -------
        int or None
            A node id, or None: every candidate (``greedy``).

        Examples
        --------
        >>> Schedule("passes", [0, 2]).node(), Schedule("greedy", [0, 2]).node()
        (0, None)
        """
        return None if self.select == "greedy" else self.nodes[self.position]

    def after(self, updated: bool) -> str | None:
        """Record the audit just made, and say whether the run stops here (Sec. 3.2, K.1).

        Parameters
        ----------
        updated : bool
            Whether the audit updated its candidate.

        Returns
        -------
        {"tolerance", "budget"} or None
            The stopping reason: ``"tolerance"`` where no violation exceeds epsilon (Sec. 3.2; for
            K.1's passes, a complete pass without one), ``"budget"`` where the passes are spent;
            None where the run goes on.

        Examples
        --------
        >>> s = Schedule("greedy", [0])
        >>> s.after(True), s.after(False)
        (None, 'tolerance')
        """
        self.log.append((self.node(), updated))
        if self.select == "greedy":
            return None if updated else "tolerance"
        if self.select == "drain":
            if updated:
                self.quiet = 0
                return None
            self.quiet += 1
            self.position = (self.position + 1) % len(self.nodes)
            return "tolerance" if self.quiet >= len(self.nodes) else None
        self.updated_in_pass |= updated
        self.position += 1
        if self.position < len(self.nodes):
            return None
        self.position, self.passes = 0, self.passes + 1  # a complete pass
        if not self.updated_in_pass:
            return "tolerance"
        self.updated_in_pass = False
        return "budget" if self.passes >= self.max_passes else None


def drive(backend, result: BoostResult, *, method: str, epsilon: Fraction, fixed: Fraction | None, select: str,
          max_updates: int, max_passes: int, progress=None) -> BoostResult:
    """Run the boosting loop of Sec. 3.2 on a backend and fill in its result (both backends call this).

    Parameters
    ----------
    backend : Backend
        The backend supplying the numbers.
    result : BoostResult
        The result to fill in (its updates, steps, audits, final state and Theorem 3.5's
        checks).
    method : {"huc", "uc"}
        HUC-Boost or UC-Boost (which always selects greedily).
    epsilon : Fraction
        The tolerance.
    fixed : Fraction or None
        A fixed step magnitude, or None for the adaptive step.
    select : {"greedy", "passes", "drain"}
        The selection rule (:class:`Schedule`).
    max_updates : int
        The cap on the updates (``stopped == "cap"``).
    max_passes : int
        The budget of K.1's passes.
    progress : callable, optional
        ``progress(t, record)`` is called after every update (``huc boost`` reports on stderr
        with it).

    Returns
    -------
    BoostResult
        ``result``, filled in.

    Notes
    -----
    Sec. 3.2: update the selected candidate while its violation exceeds epsilon.  Theorem 3.5
    (adaptive step, decrease > eps^2/2 per update) and a fixed step ``a < 2 eps`` (decrease
    > ``a eps - a^2/2``; H.1's tolerance ``3 eps_H/4`` with step ``eps_H/2`` gives its
    ``eps_H^2/4``) are checked on every update; a fixed step ``a >= 2 eps`` has no such
    guarantee and is run with only eq. (101) checked, bounded by the cap.  The update bound is
    :func:`huc_ref.bounds.theorem_3_5_update_bound` of the initial log loss's upper bound.

    Examples
    --------
    >>> from huc_ref import FiniteDistribution, LabelTree, Table, boost
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "eta": ["1/4", "3/4"]}])
    >>> r = boost(d, {"u": Table(t, [0, 1])}, epsilon="1/100")  # drive() on the certified backend
    >>> r.stopped, r.theorem_3_5["holds"], r.audits[-1]
    ('tolerance', True, (None, False))
    """
    max_updates, max_passes = int(max_updates), int(max_passes)  # (checked integers; numpy's too)
    loss_record, loss_upper = backend.initial()
    result.initial = {"log_loss": loss_record}
    floor = update_decrease_floor(epsilon, fixed)
    bound = theorem_3_5_update_bound(loss_upper, epsilon, alpha=fixed)
    result.bound_updates = max_updates if bound is None else bound  # no guarantee: only the cap bounds the run
    checks = []
    schedule = Schedule(select if method == "huc" else "greedy", backend.branching, max_passes=max_passes)
    while True:
        choice = backend.choose(schedule.node())
        violated = choice is not None and choice.exceeds
        if violated and len(result.updates) >= max_updates:
            result.stopped = "cap"
            break
        if not violated:
            stop = schedule.after(False)
            if stop:
                result.stopped = stop
                break
            continue
        step = backend.update(choice, fixed, floor)
        checks.append(step)
        result.steps.append(step.rule)
        result.updates.append(step.record)
        if progress is not None:
            progress(len(result.updates), step.record)
        stop = schedule.after(True)
        if stop:
            result.stopped = stop
            break
    nodes = backend.tree.nodes
    result.audits = [(None if a is None else nodes[a], updated) for a, updated in schedule.log]
    result.final = backend.final()
    result.predictions = backend.predictions()
    applies = floor is not None
    result.theorem_3_5 = {
        "applies": applies,
        "step": "adaptive" if fixed is None else f"fixed {fraction_text(fixed)}",
        "quadratic_bound_every_update": all(c.bound_ok for c in checks),
        "log_loss_decreases_every_update": all(c.decreased for c in checks),
        "decrease_at_least": fraction_text(floor) if applies else None,
        "decrease_bound_every_update": all(c.floor_ok for c in checks) if applies else None,
        "updates_within_bound": len(result.updates) <= result.bound_updates if applies else None,
        "final_within_epsilon": result.stopped == "tolerance",
        "certified": backend.certified,
    }
    result.theorem_3_5["holds"] = bool(applies and all(c.bound_ok and c.decreased and c.floor_ok for c in checks)
                                       and result.theorem_3_5["updates_within_bound"])
    return result
