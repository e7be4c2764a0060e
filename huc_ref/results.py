"""What an audit and a boosting run return, whichever backend computed them: every candidate's
sup with its witness, UC and HUC (Def. 2.1, Def. 3.2; the ``huc-result/1`` document,
docs/specification.md §6), and a run's updates (the ``huc-boost/1`` document)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from .errors import HUCError, deprecated
from .rational import dataclass_repr, fraction_text

__all__ = ["Candidate", "NearTies", "AuditResult", "BoostResult"]

_ZERO = Fraction(0)


def _number(x):
    """A number as ``huc-result/1`` writes it: an exact rational as ``"a/b"``, a float as itself."""
    return x if isinstance(x, float) else fraction_text(x)


@dataclass(frozen=True)
class Candidate:
    """One audited sup: ``(c, u)`` for UC (``node`` None; Def. 2.1's ``sup_I |M_{c,u,I}|``) or
    ``(c, u, v)`` for HUC (Def. 3.2's ``sup_I |Gamma_{c,u,I,v}|``), with its witness interval.

    Parameters
    ----------
    subgroup : str or None
        The subgroup ``c``'s name (None: the empty witness of an audit with no HUC candidate).
    utility : str or None
        The utility ``u``'s name.
    node : str or None
        The node ``v`` of an HUC row; None for the UC row.
    sup : Fraction or float
        The sup over intervals: an exact rational (exact engine) or a float (fast engine).
    interval : tuple of two numbers, or None
        The witness interval ``I = [lo, hi]`` of scores at which the sup is attained; None where
        there is no witness.
    moment : Fraction or float
        The signed moment ``M_{c,u,I}`` (UC) or ``Gamma_{c,u,I,v}`` (HUC) on the witness, whose
        absolute value is ``sup``.

    Examples
    --------
    >>> from huc_ref import FiniteDistribution, LabelTree, Table, audit
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> r = audit(FiniteDistribution(t, [{"p": ["1/2", "1/2"], "eta": ["1/4", "3/4"]}]), {"u": Table(t, [0, 1])})
    >>> uc = r.candidates[0]  # the UC row: E[1{Y = b}] - mu = 3/4 - 1/2 on the one score
    >>> uc.node, uc.sup, uc.interval
    (None, Fraction(1, 4), (Fraction(1, 2), Fraction(1, 2)))
    """

    subgroup: str | None
    utility: str | None
    node: str | None
    sup: Fraction
    interval: tuple[Fraction, Fraction] | None
    moment: Fraction

    def __repr__(self) -> str:  # (an exact number past Python's 4,300-digit guard would raise in repr)
        return dataclass_repr(self)

    @classmethod
    def of_table(cls, subgroup: str | None, utility: str | None, nodes, sups, intervals, moments) -> list:
        """The rows of one subgroup and utility (Def. 2.1's UC row, then Def. 3.2's node rows):
        ``[Candidate(subgroup, utility, *row) for row in zip(nodes, sups, intervals, moments)]``,
        each row's fields written into it at once (the frozen dataclass's ``__init__`` sets them
        one ``object.__setattr__`` at a time).  A K = 30 fast audit with |U| = 5 and |C| = 7 has
        616 rows: with this and its witnesses read once a utility, the audit at n = 10^4 took
        0.92x (numba) and 0.96x (numpy) the time (``python bench/phases.py --against 4638669
        --n 10000 --audit-only``).

        Parameters
        ----------
        subgroup, utility : str or None
            The rows' subgroup and utility.
        nodes, sups, intervals, moments : iterable
            The rows' ``node``, ``sup``, ``interval`` and ``moment``, one of each a row.

        Returns
        -------
        list of Candidate
            The rows, in the order given.

        Examples
        --------
        >>> rows = Candidate.of_table("all", "u", [None, "v"], [0.25, 0.5], [(0.5, 0.5), None], [0.25, -0.5])
        >>> rows == [Candidate("all", "u", None, 0.25, (0.5, 0.5), 0.25), Candidate("all", "u", "v", 0.5, None, -0.5)]
        True
        """
        made, new = [], object.__new__
        for node, sup, interval, moment in zip(nodes, sups, intervals, moments):
            row = new(cls)
            fields = row.__dict__
            fields["subgroup"], fields["utility"], fields["node"] = subgroup, utility, node
            fields["sup"], fields["interval"], fields["moment"] = sup, interval, moment
            made.append(row)
        return made

    def to_json(self, *, key: str = "sup") -> dict:
        """The ``huc-result/1`` row (``key="value"`` for the ``uc``/``huc`` witnesses) (docs/specification.md §6):
        exact numbers as strings ``"a/b"``, the fast engine's floats as JSON numbers.

        Parameters
        ----------
        key : {"sup", "value"}, default "sup"
            The name of the sup's member: ``"sup"`` (written after the names) for a candidate row,
            ``"value"`` (written first) for the ``uc`` and ``huc`` witnesses.

        Returns
        -------
        dict
            The row, JSON-serialisable.

        Examples
        --------
        >>> Candidate("all", "u", "v0", Fraction(1, 4), (Fraction(1, 2), Fraction(1, 2)), Fraction(-1, 4)).to_json()
        {'subgroup': 'all', 'utility': 'u', 'node': 'v0', 'sup': '1/4', 'interval': ['1/2', '1/2'], 'moment': '-1/4'}
        >>> Candidate("all", "u", None, 0.25, (0.5, 0.5), 0.25).to_json()["interval"]
        [0.5, 0.5]
        """
        head = {key: _number(self.sup)} if key == "value" else {}
        body = {"subgroup": self.subgroup, "utility": self.utility, "node": self.node}
        tail = {} if key == "value" else {key: _number(self.sup)}
        return {**head, **body, **tail,
                "interval": None if self.interval is None else [_number(x) for x in self.interval],
                "moment": _number(self.moment)}


@dataclass(frozen=True)
class NearTies:
    """What the fast engine did with scores float64 could not order (Algorithm 2's sort, App. F.3):
    groups of atoms whose scores its error bounds cannot tell apart, counted once per utility's
    sort.  A group is ``decided`` when the exact scores of its atoms (the rationals behind the
    floats, or a float array's own binary values) put it in order, so that its tie blocks are the
    exact engine's; it is ``undecided`` when it stays one block (its exact scores would cost more
    than :data:`huc_ref.fast.numbers.ORDER_BUDGET`, or there are none: a boosting run's float
    rows).  Undecided groups can make UC and HUC larger than reported, never smaller: the exact
    values lie in ``[uc, uc + uc_bound]`` and ``[huc, huc + huc_bound]`` (up to float64's rounding
    of the sums), and each row's sup within the larger bound of its own.

    ``a + b`` is two utilities' groups together: counts add, bounds take the larger (UC and HUC
    are maxima).

    Parameters
    ----------
    decided_groups, decided_rows : int, default 0
        The groups put in order by exact scores, and their atoms (rows of the input).
    undecided_groups, undecided_rows : int, default 0
        The groups left whole, and their atoms.
    uc_bound, huc_bound : float, default 0.0
        How much larger than reported UC and HUC may be, for the undecided groups (0 without).

    Examples
    --------
    >>> t = NearTies(2, 12, 1, 3, 0.25, 0.5)
    >>> t.to_json()
    {'decided': {'groups': 2, 'rows': 12}, 'undecided': {'groups': 1, 'rows': 3, 'uc_bound': 0.25, 'huc_bound': 0.5}}
    >>> print(t.text())
    near-equal scores float64 cannot order: 2 groups (12 rows) decided exactly; 1 group (3 rows) left whole: \
UC may be up to 0.25 and HUC up to 0.5 above the values shown (their exact order costs more than \
huc_ref.fast.numbers.ORDER_BUDGET: raise it, or audit with the exact engine)
    >>> (t + NearTies(1, 2)).to_json()["decided"], NearTies(1, 2).text()
    ({'groups': 3, 'rows': 14}, 'near-equal scores float64 cannot order: 1 group (2 rows) decided exactly')
    """

    #: groups put in order by exact scores, and their atoms (rows of the input)
    decided_groups: int = 0
    decided_rows: int = 0
    #: groups left whole, and their atoms
    undecided_groups: int = 0
    undecided_rows: int = 0
    #: how much larger than reported UC and HUC may be, for the undecided groups (0 without)
    uc_bound: float = 0.0
    huc_bound: float = 0.0

    def __add__(self, other: NearTies) -> NearTies:
        """Two utilities' groups together (counts add, bounds take the larger: UC and HUC are maxima)."""
        return NearTies(self.decided_groups + other.decided_groups, self.decided_rows + other.decided_rows,
                        self.undecided_groups + other.undecided_groups, self.undecided_rows + other.undecided_rows,
                        max(self.uc_bound, other.uc_bound), max(self.huc_bound, other.huc_bound))

    def to_json(self) -> dict:
        """The ``near_ties`` member of a fast ``huc-result/1`` document (docs/specification.md §6).

        Returns
        -------
        dict
            ``{"decided": {"groups", "rows"}, "undecided": {"groups", "rows", "uc_bound",
            "huc_bound"}}``.

        Examples
        --------
        >>> NearTies(1, 2).to_json()["decided"]
        {'groups': 1, 'rows': 2}
        """
        return {"decided": {"groups": self.decided_groups, "rows": self.decided_rows},
                "undecided": {"groups": self.undecided_groups, "rows": self.undecided_rows,
                              "uc_bound": self.uc_bound, "huc_bound": self.huc_bound}}

    def text(self) -> str:
        """One line for a person (``huc audit``'s report) on Algorithm 2's sort (App. F.3).

        Returns
        -------
        str
            The groups decided and those left whole, with the bounds of the latter.

        Examples
        --------
        >>> NearTies(0, 0, 1, 2, 0.5, 0.25).text().split(":")[1]
        ' 1 group (2 rows) left whole'
        """
        def groups(k, rows):
            return f"{k} group{'s' if k != 1 else ''} ({rows} row{'s' if rows != 1 else ''})"
        parts = []
        if self.decided_groups:
            parts.append(f"{groups(self.decided_groups, self.decided_rows)} decided exactly")
        if self.undecided_groups:
            parts.append(f"{groups(self.undecided_groups, self.undecided_rows)} left whole: UC may be up to "
                         f"{self.uc_bound:.3g} and HUC up to {self.huc_bound:.3g} above the values shown (their "
                         "exact order costs more than huc_ref.fast.numbers.ORDER_BUDGET: raise it, or audit with "
                         "the exact engine)")
        return "near-equal scores float64 cannot order: " + "; ".join(parts)


def _first_max(rows):
    best = None
    for row in rows:
        if best is None or row.sup > best.sup:
            best = row
    return best


@dataclass(frozen=True)
class AuditResult:
    """Every sup of an audit, with UC, HUC and their witnesses (docs/specification.md §6 ``huc-result/1``).

    Parameters
    ----------
    candidates : tuple of Candidate
        Every audited row: for each subgroup and utility, the UC row, then a row per relevant
        node.
    relevant_nodes : dict
        Each utility's relevant nodes ``V_T(u)`` (Def. 3.2), by name: ``{utility: [node, ...]}``.
    subgroups : tuple of str
        The subgroups' names, in order.
    n : int
        The number of atoms (a sample's rows).
    is_sample : bool
        Whether the distribution is a sample (rows with labels) rather than a population.
    arithmetic : {"exact", "float64"}, default "exact"
        The audit's numbers: ``"exact"`` (Fractions) or ``"float64"`` (:mod:`huc_ref.fast`).
    significance : Significance, optional
        p-values under the null of calibration (:class:`huc_ref.significance.Significance`),
        when the audit was asked for them (``null_draws``).
    near_ties : NearTies, optional
        The fast engine's groups of scores float64 could not order, where it met any.

    Examples
    --------
    App. D.1 again: one UC row and one row per relevant node.

    >>> from huc_ref import FiniteDistribution, LabelTree, Table, audit
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> r = audit(FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}]),
    ...           {"u": Table(t, [-1, 1, 1, 1])})
    >>> [(c.node, str(c.sup), str(c.moment)) for c in r.candidates]
    [(None, '0', '0'), ('v0', '1/4', '1/4'), ('vL', '1/4', '-1/4')]
    >>> r.row("all", "u", "vL").moment, r.n_cand, r.to_json()["huc"]["value"]
    (Fraction(-1, 4), 2, '1/4')
    """

    candidates: tuple[Candidate, ...]
    relevant_nodes: dict
    subgroups: tuple[str, ...]
    n: int
    is_sample: bool
    #: The audit's numbers (:data:`huc_ref.engines.AUDIT_ARITHMETICS`): ``"exact"`` (Fractions) or
    #: ``"float64"`` (:mod:`huc_ref.fast`)
    arithmetic: str = "exact"
    #: p-values under the null of calibration (:class:`huc_ref.significance.Significance`),
    #: when the audit was asked for them (``null_draws``)
    significance: object = None
    #: the fast engine's groups of scores float64 could not order (:class:`NearTies`), where it met any
    near_ties: NearTies | None = None

    def __repr__(self) -> str:  # (an exact number past Python's 4,300-digit guard would raise in repr)
        return dataclass_repr(self)

    @property
    def engine(self) -> str:
        """The deprecated name of :attr:`arithmetic`, in its words: ``"exact"`` or ``"fast"``
        (float64; docs/specification.md §6), read for one release with a
        :class:`~huc_ref.errors.HUCDeprecationWarning`.

        Examples
        --------
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     AuditResult((), {}, ("all",), 1, True, arithmetic="float64").engine
        'fast'
        """
        deprecated("AuditResult.engine", "AuditResult.arithmetic ('exact' or 'float64')")
        return "exact" if self.arithmetic == "exact" else "fast"

    @property
    def uc(self) -> Candidate:
        """``UC(f; C, U)`` (Def. 2.1) with the first maximiser (subgroups, then utilities).

        Examples
        --------
        >>> from huc_ref import FiniteDistribution, LabelTree, Table, audit
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "eta": ["1/4", "3/4"]}])
        >>> r = audit(d, {"u": Table(t, [0, 1])})
        >>> r.uc.sup, r.uc.interval, r.uc.moment  # E[Y = b] - mu = 3/4 - 1/2 on the one score
        (Fraction(1, 4), (Fraction(1, 2), Fraction(1, 2)), Fraction(1, 4))
        """
        return _first_max(r for r in self.candidates if r.node is None)

    @property
    def huc(self) -> Candidate:
        """``HUC(f; C, U)`` (Def. 3.2) with the first maximiser; sup 0 and no witness if no
        node is relevant.

        Examples
        --------
        >>> from huc_ref import FiniteDistribution, LabelTree, Table, audit
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "eta": ["1/4", "3/4"]}])
        >>> audit(d, {"u": Table(t, [0, 1])}).huc.node, audit(d, {"c": Table(t, [1, 1])}).huc.sup
        ('r', Fraction(0, 1))
        """
        best = _first_max(r for r in self.candidates if r.node is not None)
        zero = _ZERO if self.arithmetic == "exact" else 0.0
        return best or Candidate(None, None, None, zero, None, zero)

    def row(self, subgroup: str, utility: str, node: str | None = None) -> Candidate:
        """The candidate row of ``(c, u)`` (UC, Def. 2.1) or ``(c, u, v)`` (HUC, Def. 3.2).

        Parameters
        ----------
        subgroup : str
            The subgroup's name.
        utility : str
            The utility's name.
        node : str, optional
            The node's name; None for the UC row.

        Returns
        -------
        Candidate
            The row.

        Raises
        ------
        HUCError
            Of kind ``reference``, where the audit has no such row.

        Examples
        --------
        >>> from huc_ref import FiniteDistribution, LabelTree, Table, audit
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> r = audit(FiniteDistribution(t, [{"p": ["1/2", "1/2"], "eta": ["1/4", "3/4"]}]), {"u": Table(t, [0, 1])})
        >>> r.row("all", "u", "r").sup, r.row("all", "u").moment
        (Fraction(1, 4), Fraction(1, 4))
        """
        for r in self.candidates:
            if (r.subgroup, r.utility, r.node) == (subgroup, utility, node):
                return r
        raise HUCError(f"no audited candidate ({subgroup!r}, {utility!r}, {node!r})", kind="reference")

    @property
    def n_cand(self) -> int:
        """``N_cand = |C| sum_u |V_T(u)|``, the number of HUC candidates (Thm 3.4).

        Examples
        --------
        >>> from huc_ref import FiniteDistribution, LabelTree, Table, audit
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> r = audit(FiniteDistribution(t, [{"p": ["1/2", "1/2"], "eta": ["1/4", "3/4"]}]), {"u": Table(t, [0, 1])})
        >>> r.n_cand  # one subgroup, one utility, its one relevant node r
        1
        """
        return len(self.subgroups) * sum(len(v) for v in self.relevant_nodes.values())

    def to_json(self, case_id: str | None = None) -> dict:
        """The ``huc-result/1`` document (docs/specification.md §6), exact numbers as strings
        (the fast engine's as JSON numbers).

        Parameters
        ----------
        case_id : str, optional
            The document's ``case`` member.

        Returns
        -------
        dict
            The document: ``uc``, ``huc``, ``relevant_nodes``, ``candidates``, and ``near_ties``
            and ``significance`` (with each row's ``p_value``) where the audit has them.

        Examples
        --------
        >>> from huc_ref import FiniteDistribution, LabelTree, Table, audit
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> r = audit(FiniteDistribution(t, [{"p": ["1/2", "1/2"], "eta": ["1/4", "3/4"]}]), {"u": Table(t, [0, 1])})
        >>> doc = r.to_json("c")
        >>> doc["uc"], doc["relevant_nodes"]
        ({'value': '1/4', 'subgroup': 'all', 'utility': 'u', 'interval': ['1/2', '1/2'], 'moment': '1/4'}, {'u': ['r']})
        """
        uc, huc = self.uc.to_json(key="value"), self.huc.to_json(key="value")
        del uc["node"]
        rows = [r.to_json() for r in self.candidates]
        doc = {"format": "huc-result/1", "case": case_id, "arithmetic": self.arithmetic, "uc": uc, "huc": huc,
               "relevant_nodes": {u: list(v) for u, v in self.relevant_nodes.items()}, "candidates": rows}
        if self.near_ties is not None:
            doc["near_ties"] = self.near_ties.to_json()
        if self.significance is not None:  # p-values: exact rationals on both engines
            s = self.significance
            uc["p_value"], huc["p_value"] = fraction_text(s.uc), fraction_text(s.huc)
            for row, p in zip(rows, s.rows):
                row["p_value"] = fraction_text(p)
            doc["significance"] = s.to_json()
        return doc

    def p_value(self, subgroup: str, utility: str, node: str | None = None) -> Fraction:
        """The p-value of one candidate row under the null of calibration (``audit(..., null_draws=B)``;
        docs/specification.md §6's extension).

        Parameters
        ----------
        subgroup : str
            The subgroup's name.
        utility : str
            The utility's name.
        node : str, optional
            The node's name; None for the UC row.

        Returns
        -------
        Fraction
            The p-value.

        Raises
        ------
        HUCError
            Of kind ``state`` where the audit has no p-values (audit with ``null_draws=B`` or
            ``"exact"``), of kind ``reference`` where it has no such row.

        Examples
        --------
        >>> from huc_ref import FiniteDistribution, LabelTree, Table, audit
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "b"}] * 2)
        >>> audit(d, {"u": Table(t, [0, 1])}, null_draws="exact").p_value("all", "u", "r")
        Fraction(1, 2)
        """
        if self.significance is None:
            raise HUCError("p_value: this audit has no p-values; audit with null_draws=B (or 'exact')", kind="state")
        row = self.row(subgroup, utility, node)
        return self.significance.rows[self.candidates.index(row)]


@dataclass
class BoostResult:
    """The trajectory and outcome of a boosting run (the ``huc-boost/1`` document): Algorithm
    1/3's updates, the stopping reason, and Theorem 3.5's bound checked; see :func:`boost`.

    Both backends return it: the certified engine writes its numbers as decimal strings
    (``digits`` significant digits), the fast backend as floats (``digits`` None).

    Parameters
    ----------
    method : {"huc", "uc"}
        HUC-Boost (Algorithm 1) or UC-Boost (Algorithm 3).
    epsilon : Fraction
        The tolerance: violations above it are corrected.
    digits : int or None
        The certified engine's significant digits; None for the fast backend.
    arithmetic : str
        The numbers of the run (``"exact"``, ``"certified"`` or ``"float64"``).
    updates : list of dict, optional
        Each update's record, in order.
    bound_updates : int, default 0
        Theorem 3.5's bound on the number of updates (the cap where the theorem does not apply).
    stopped : str, default ""
        Why the run stopped: ``"tolerance"`` (no violation above ``epsilon``), ``"cap"`` (at
        ``max_updates``) or ``"budget"`` (at ``max_passes``).
    initial : dict, optional
        ``{"log_loss": ...}`` before the run.
    final : dict, optional
        ``{"uc", "huc", "log_loss"}`` after the run.
    predictions : list or ndarray, optional
        The final predictions, a row per atom: lists (the certified engines: decimal strings,
        or floats), or the float64 backend's ``(n, K)`` array.
    theorem_3_5 : dict, optional
        Theorem 3.5's conditions checked on the run, and ``holds``.
    steps : list, optional
        Each update as a rule ``(subgroup index, utility, node id, lo, hi, alpha)``, for
        replaying it on other atoms (:func:`huc_ref.replay.replay`).
    audits : list, optional
        Every audit of the run, ``(node name or None for all candidates, updated)``.

    Examples
    --------
    >>> BoostResult("huc", Fraction(1, 10), 30, "certified").to_json()["method"]
    'huc'
    """

    method: str
    epsilon: Fraction
    digits: int
    arithmetic: str
    updates: list = field(default_factory=list)
    bound_updates: int = 0
    stopped: str = ""
    initial: dict = field(default_factory=dict)
    final: dict = field(default_factory=dict)
    #: The final predictions, a row per atom: lists (the certified engines: decimal strings, or floats), or
    #: the float64 backend's ``(n, K)`` array (as lists of Python floats they took four times its memory,
    #: and a pass of Python objects to make)
    predictions: list = field(default_factory=list)
    theorem_3_5: dict = field(default_factory=dict)
    #: Each update as a rule ``(subgroup index, utility, node id, lo, hi, alpha)`` (lo/hi are
    #: the interval's ends at the working precision), for replaying it on other atoms
    #: (:func:`huc_ref.replay.replay`, :func:`huc_ref.replay.select_prefix`).
    steps: list = field(default_factory=list, repr=False)
    #: Every audit of the run, ``(node name or None for all candidates, updated)`` (:class:`Schedule`).
    audits: list = field(default_factory=list, repr=False)

    def to_json(self) -> dict:
        """The ``huc-boost/1`` document (docs/specification.md §4; docs/boosting.md).

        Returns
        -------
        dict
            The document, JSON-serialisable (an array of predictions as lists).

        Examples
        --------
        >>> from huc_ref import FiniteDistribution, LabelTree, Table, boost
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "eta": ["1/4", "3/4"]}])
        >>> doc = boost(d, {"u": Table(t, [0, 1])}, epsilon="1/100").to_json()
        >>> doc["format"], doc["stopped"], doc["updates"][0]["gamma"], doc["theorem_3_5"]["holds"]
        ('huc-boost/1', 'tolerance', '0.25', True)
        """
        return {"format": "huc-boost/1", "method": self.method, "epsilon": fraction_text(self.epsilon),
                "digits": self.digits, "arithmetic": self.arithmetic, "updates": self.updates,
                "bound_updates": self.bound_updates, "stopped": self.stopped, "initial": self.initial,
                "final": self.final, "theorem_3_5": self.theorem_3_5,
                "predictions": self.predictions.tolist() if hasattr(self.predictions, "tolist") else self.predictions,
                "audits": [[node, updated] for node, updated in self.audits]}
