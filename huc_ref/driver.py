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
    """What a backend's ``choose`` returns: the largest candidate (its sup, subgroup index,
    utility name, node id or None for UC, signed moment ``Gamma`` of its witness) and whether the
    sup exceeds epsilon (Sec. 3.2's stopping rule); each backend adds what its update needs.

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
    """One applied step, as a backend reports it: the ``huc-boost/1`` record, the rule
    ``(subgroup index, utility, node id, lo, hi, alpha)`` and Theorem 3.5's checks for it
    (eq. (101) for the applied step, a strict decrease, and the decrease floor or None)."""

    record: dict
    rule: tuple
    bound_ok: bool
    decreased: bool
    floor_ok: bool | None


def rational_gamma(dist, method: str, node: int | None, h: dict) -> Fraction:
    """``Gamma_t = E[<h(X), R_v(f_t(X), Y)>]`` (E.2; UC-Boost: ``R`` over every leaf,
    ``e_Y - f_t``) for a direction ``h`` (atom index -> its exact values, ints or Fractions, one per child of node
    id ``node``, or per leaf) on atoms that no update has moved: at ``p0`` every term is rational.
    The certified backends round the adaptive step ``alpha = Gamma / Lambda`` from this exact
    value, so steps of equal exact value are equal steps (docs/specification.md §4: "Rational
    inputs stay exact until the first exp"); rounded from a value computed at the working
    precision, two steps of exactly ``-2/5`` differed by ``1e-35`` and split an exact tie of two
    atoms' scores, which changed the next update's interval and ``Gamma`` by 2%.

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
    """What :func:`drive` asks of a backend: the numbers of Algorithm 1 (HUC-Boost) or UC-Boost
    for one state of the predictions.  The certified engine
    (:class:`huc_ref.boost.CertifiedBackend`) and the fast backend
    (:class:`huc_ref.fast.boost.FloatBackend`, its numbers plain float64 or certified float64,
    :mod:`huc_ref.fast.context`) implement it; the examples below run the float64 one on App.
    D.1's population.
    """

    #: whether the backend's decisions and Theorem 3.5 checks are certified
    certified = False

    def initial(self) -> tuple:
        """The initial log loss ``L_log(f_0)`` of Theorem 3.5 as recorded, and a rational upper
        bound of it (for the theorem's update budget ``2 L_log(f_0) / eps^2``).

        >>> from huc_ref import demo
        >>> from huc_ref.fast.boost import FloatBackend
        >>> backend = FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 1 / 100)  # App. D.1
        >>> import math
        >>> round(backend.initial()[0], 12), backend.initial()[1] >= math.log(4)  # -sum_y eta_y log(1/4) = log 4
        (1.38629436112, True)
        """
        raise NotImplementedError

    def choose(self, node) -> Choice:
        """The largest candidate (first maximiser: subgroups, utilities, nodes; at node id
        ``node`` only, or anywhere for ``None``), with whether it exceeds epsilon (Sec. 3.2's
        selection rule, the audit of Algorithm 2).

        >>> from huc_ref import demo
        >>> from huc_ref.fast.boost import FloatBackend
        >>> backend = FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 1 / 100)  # App. D.1
        >>> backend.choose(None).sup, backend.choose(None).node  # D.1's HUC: 1/4 at the root (node id 0)
        (0.25, 0)
        """
        raise NotImplementedError

    def update(self, choice: Choice, fixed, floor) -> Update:
        """Apply one step at ``choice`` (Sec. 3.2's branch tilt with Algorithm 1's adaptive step
        ``Gamma / Lambda``, or the fixed step ``fixed``; ``floor``: the least decrease Theorem
        3.5 promises, or None) and report it.

        >>> from huc_ref import demo
        >>> from huc_ref.fast.boost import FloatBackend
        >>> backend = FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 1 / 100)  # App. D.1
        >>> backend.update(backend.choose(None), None, None).rule  # (subgroup, utility, node, lo, hi, step)
        (0, 'u', 0, 0.5, 0.5, 1.0)
        """
        raise NotImplementedError

    def final(self) -> dict:
        """UC, HUC (Def. 2.1, 3.2) and the log loss of the current predictions.

        >>> from huc_ref import demo
        >>> from huc_ref.fast.boost import FloatBackend
        >>> backend = FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 1 / 100)  # App. D.1
        >>> backend.final()["uc"], backend.final()["huc"]  # D.1's cancellation: UC 0, HUC 1/4
        (0.0, 0.25)
        """
        raise NotImplementedError

    def predictions(self) -> list:
        """The current predictions ``f_t(x_i)`` of the atoms (Algorithm 1's state), a row per atom:
        lists (the certified engines), or the float64 backend's ``(n, K)`` array.

        >>> from huc_ref import demo
        >>> from huc_ref.fast.boost import FloatBackend
        >>> backend = FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 1 / 100)  # App. D.1
        >>> backend.predictions().tolist()
        [[0.25, 0.25, 0.25, 0.25]]
        """
        raise NotImplementedError


class Schedule:
    """Which node each audit of a boosting run looks at, and when the run stops (one rule for
    every backend).

    * ``greedy``: every audit looks at all candidates and updates the largest violation; the
      run stops when none exceeds epsilon.
    * ``passes`` (K.1, literally): "Each HUC-Boost procedure ... uses at most 100 passes over
      the nodes with at least two children, for a node-audit budget of 100 times the number of
      such nodes.  A node is updated only when its audited violation exceeds [epsilon] ...
      HUC-Boost stops when a complete pass finds no violation, or when the respective budget is
      exhausted."  A pass visits the branching nodes in pre-order and audits each **once**,
      updating it at most once; ``max_passes`` (100 in K.1) sets the budget.
    * ``drain`` (this project's earlier rule, kept by name): stay on a node and update it
      until it is clean, then move on; stop after a full cycle of clean nodes.

    UC-Boost, and a tree without branching nodes, use ``greedy``.  :attr:`log` records every
    audit as ``(node id or None, updated)``.

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
        """The node to audit next (``None``: every candidate; K.1's passes visit the branching
        nodes in pre-order).

        >>> Schedule("passes", [0, 2]).node(), Schedule("greedy", [0, 2]).node()
        (0, None)
        """
        return None if self.select == "greedy" else self.nodes[self.position]

    def after(self, updated: bool) -> str | None:
        """Record the audit just made; the stopping reason, if the run stops here (Sec. 3.2: no
        violation above epsilon; K.1: a complete pass without one, or the budget spent).

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
    """Run the boosting loop on ``backend`` and fill ``result`` (both backends call this).

    Sec. 3.2: update the selected candidate while its violation exceeds epsilon; K.1's
    passes, greedy selection or drain by :class:`Schedule`; ``max_updates`` caps the updates
    (``stopped == "cap"``).  Theorem 3.5 (adaptive step, decrease > eps^2/2 per update) and a
    fixed step ``a < 2 eps`` (decrease > ``a eps - a^2/2``; H.1's tolerance ``3 eps_H/4`` with
    step ``eps_H/2`` gives its ``eps_H^2/4``) are checked on every update; a fixed step
    ``a >= 2 eps`` has no such guarantee and is run with only eq. (101) checked, bounded by the
    cap.  The update bound is :func:`huc_ref.bounds.theorem_3_5_update_bound` of the initial
    log loss's upper bound.
    ``progress(t, record)``, if given, is called after every update (``huc boost`` reports on
    stderr with it).

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
