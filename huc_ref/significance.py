"""Is a violation real?  p-values for UC, HUC and every candidate row under the null
hypothesis of calibration.

Under calibration the law of the labels given the predictions is known: ``Y_i ~ P_i``
(Sec. 2.1: ``E[Y | f(X)] = f(X)``).  So the null distribution of any audited statistic is
that of the same audit with every label redrawn from its own prediction; the scores
``mu_u(P_i)`` and the subgroups do not change, only the terms do.  Two ways to use it:

* **consistency resampling** (``null_draws=B``): ``B`` redraws seeded by ``seed`` (numpy's
  ``default_rng``; a seed of its own, not the one that generated the data: one stream used
  for both makes the redraws depend on the predictions); the p-value of a
  statistic ``T`` is ``(1 + #{b: T*_b >= T}) / (B + 1)`` (the resampling p-value, valid at
  every ``B``: ``P(p <= a) <= a`` under the null);
* **exact enumeration** (``null_draws="exact"``): every label assignment with its exact
  probability ``prod_i p_i(y_i)``; the p-value ``P(T* >= T)`` is then a rational.

Both cost one audit per draw (per assignment), so their cost is estimated before any audit
runs (:func:`null_work`: draws times the work of one audit) and refused beyond a budget
(:data:`MAX_NULL_WORK`, raised by ``max_null_work=``, ``--max-null-work``): a count of draws
or assignments alone does not bound it (a million assignments of two rows of 1,000 classes
are hours of exact audits).

The statistics are each candidate row's sup (``(c, u)`` for UC, ``(c, u, v)`` for HUC) and
UC and HUC themselves as maxima over their rows, so the HUC p-value is family-wise over all
nodes, utilities, subgroups and intervals.  Population atoms (a label law ``eta``) are
refused: their null law is not a finite sample's, and the null here is about labels drawn
one per atom.  Beside each p-value the result keeps what Theorem 3.4's deviation bound
would have said at ``delta = 1/20``.

Both engines give p-values as exact rationals (counts, or sums of exact probabilities); on
the fast engine an exceedance ``T* >= T`` is counted within :func:`tie_tolerance` of ``T``
(a null statistic equal to the observed one in exact arithmetic may round below it), which
can only raise the p-value.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from fractions import Fraction
from math import prod

import numpy as np

from .distribution import FiniteDistribution
from .errors import HUCError, given, is_integer, one_of
from .rational import decimal_text, fraction_text
from .results import AuditResult

__all__ = ["MAX_NULL_DRAWS", "MAX_NULL_WORK", "AUDIT_ATOMS", "Significance", "check_null", "null_work",
           "candidate_rows", "check_null_work", "resampling_p_values", "exact_p_values", "uniforms", "draw_label",
           "tie_tolerance"]

#: The most resampling draws accepted.
MAX_NULL_DRAWS = 10**6

#: The most work (:func:`null_work`) the null draws or the exact enumeration of one audit may take
#: unless ``max_null_work`` (``--max-null-work``) raises it, per engine: about a minute of one
#: core on the 2-core reference machine (docs/performance.md), where an exact audit takes
#: 3-20 microseconds and the fast engine's null draw 5-30 nanoseconds per unit of work.
MAX_NULL_WORK = {"exact": 5 * 10**6, "fast": 4 * 10**9}

#: An audit's fixed cost, as a number of atoms, per engine (:func:`null_work`): the exact engine's
#: setup of a distribution, the fast engine's numpy calls on small arrays (its null draw of one
#: atom takes about a millisecond, as long as one of several thousand atoms).
AUDIT_ATOMS = {"exact": 64, "fast": 8192}

#: Uniforms are ``k / 2**53`` with ``k`` uniform on ``1 .. 2**53``: exact in float64 and as a
#: rational, so both engines read the same draw.
_UNIT = 2**53

#: The confidence of the Theorem 3.4 bound shown beside the p-values.
DELTA = Fraction(1, 20)


@dataclass(frozen=True)
class Significance:
    """The p-values of an audit under the null of calibration, ``Y_i ~ P_i`` (Sec. 2.1, Thm 3.4).

    Parameters
    ----------
    method : {"resampling", "exact"}
        ``"resampling"`` (``draws`` redraws seeded by ``seed``) or ``"exact"`` (every label
        assignment).
    draws : int
        The number of redraws, or of assignments enumerated.
    seed : int or None
        The resampling seed; None for ``"exact"``.
    rows : tuple of Fraction
        One p-value per candidate row, in :attr:`AuditResult.candidates` order.
    uc, huc : Fraction
        The p-values of UC and HUC as maxima over their rows (family-wise).
    theorem_3_4 : str
        Thm 3.4's deviation ``16/sqrt(n) + 4 sqrt(log(N/delta)/(2n))`` at ``delta = 1/20``, a
        decimal upper bound: an observed HUC below it is, by that bound, indistinguishable
        from 0.

    Examples
    --------
    >>> Significance("exact", 4, None, (Fraction(1, 2),), Fraction(1, 2), Fraction(1), "9.9").to_json()["uc"]
    '1/2'
    """

    method: str
    draws: int
    seed: int | None
    rows: tuple[Fraction, ...]
    uc: Fraction
    huc: Fraction
    theorem_3_4: str

    def to_json(self) -> dict:
        """The optional ``significance`` object of ``huc-result/1`` (docs/specification.md §6).

        Returns
        -------
        dict
            ``method``, ``draws``, ``seed``, ``uc``, ``huc`` and ``theorem_3_4`` (its ``delta`` and
            ``deviation``): p-values as exact rationals ``"a/b"`` on both engines (they are counts).

        Examples
        --------
        >>> from huc_ref import FiniteDistribution, LabelTree, Table, audit
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> d = FiniteDistribution.from_sample(t, ["b", "b", "a", "b"], [["1/2", "1/2"]] * 4)
        >>> doc = audit(d, {"u": Table(t, [0, 1])}, null_draws=19, seed=1).significance.to_json()
        >>> doc["method"], doc["draws"], doc["theorem_3_4"]["delta"]
        ('resampling', 19, '1/20')
        """
        return {"method": self.method, "draws": self.draws, "seed": self.seed, "uc": fraction_text(self.uc),
                "huc": fraction_text(self.huc),
                "theorem_3_4": {"delta": fraction_text(DELTA), "deviation": self.theorem_3_4}}


def check_null(null_draws, seed):
    """Check the options of the null draws (docs/specification.md §6's extension).

    Parameters
    ----------
    null_draws : int or "exact"
        A number of resampled draws, 1 to :data:`MAX_NULL_DRAWS`, or ``"exact"``.
    seed : int
        The resampling seed, a non-negative integer.

    Returns
    -------
    null_draws : int or "exact"
        As given (an integer as ``int``).
    seed : int
        As given.

    Raises
    ------
    HUCError
        Of kind ``option`` for a value outside those ranges.

    Examples
    --------
    >>> check_null(999, 7), check_null("exact", 0)
    ((999, 7), ('exact', 0))
    >>> check_null(0, 0)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: null_draws: expected a positive integer (at most 1000000) or 'exact', got 0
    """
    if not one_of(null_draws, ("exact",)) and (not is_integer(null_draws) or not 1 <= null_draws <= MAX_NULL_DRAWS):
        raise HUCError(f"null_draws: expected a positive integer (at most {MAX_NULL_DRAWS}) or 'exact', "
                       f"got {given(null_draws)}", kind="option")
    if not is_integer(seed) or seed < 0:
        raise HUCError(f"seed: expected a non-negative integer, got {given(seed)}", kind="option")
    return null_draws if null_draws == "exact" else int(null_draws), int(seed)


def check_sample(dist: FiniteDistribution) -> FiniteDistribution:
    """``dist``, refused unless every atom is a sample point (the null redraws labels; Sec. 2.1's
    calibration ``E[Y | f(X)] = f(X)`` is then the law ``Y_i ~ p_i``).

    >>> from huc_ref import LabelTree
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> check_sample(FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "a"}])).n
    1
    """
    for i, a in enumerate(dist.atoms):
        if a.label is None:
            raise HUCError(f"atoms[{i}]: a population atom (a label law eta); significance redraws one "
                           "label per atom from its prediction, so it needs a labelled sample", kind="structure")
    return dist


def uniforms(rng: np.random.Generator, n: int) -> np.ndarray:
    """The uniforms of one null draw: integers ``k`` uniform on ``1 .. 2**53`` (docs/specification.md §6's extension).

    The uniform is ``k / 2**53``, exact in float64 and as a rational, so both engines read the
    same draw.

    Parameters
    ----------
    rng : numpy.random.Generator
        The draws' generator.
    n : int
        How many.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        The integers ``k``.

    Examples
    --------
    >>> k = uniforms(np.random.default_rng(0), 3)
    >>> k.dtype.kind, bool(((1 <= k) & (k <= 2**53)).all())
    ('i', True)
    """
    return rng.integers(1, _UNIT, size=n, endpoint=True, dtype=np.int64)


def draw_label(p, k: int) -> int:
    """The label of the exact inverse-CDF draw at ``k / 2**53`` (docs/specification.md §6's extension).

    Parameters
    ----------
    p : sequence of Fraction
        The prediction, in label order.
    k : int
        The draw's integer, ``1 <= k <= 2**53`` (:func:`uniforms`).

    Returns
    -------
    int
        The first label id ``y`` with ``p_0 + ... + p_y >= k / 2**53``; never a label of
        probability 0.

    Examples
    --------
    >>> p = [Fraction(1, 4), Fraction(0), Fraction(3, 4)]
    >>> draw_label(p, 2**51), draw_label(p, 2**51 + 1)  # 2**51 / 2**53 = 1/4: the first label's cdf
    (0, 2)
    """
    u, total = Fraction(k, _UNIT), Fraction(0)
    for y, py in enumerate(p):
        total += py
        if py and total >= u:
            return y
    return max(y for y, py in enumerate(p) if py)


def tie_tolerance(n: int, K: int) -> float:
    """How far below an observed float64 statistic a null one counts as reaching it (docs/specification.md §6).

    On the fast engine a null statistic equal to the observed one in exact arithmetic may
    round below it; counting it anyway can only raise the p-value.

    Parameters
    ----------
    n : int
        The number of atoms.
    K : int
        The number of labels.

    Returns
    -------
    float
        ``8 (n + K) 2**-52``, above the rounding of sums of ``n`` terms in [-2, 2] (relative
        to the statistic above 1).

    Examples
    --------
    >>> tie_tolerance(10, 2) == 96 * 2.0**-52
    True
    """
    return 8.0 * (n + K) * 2.0**-52


def _theorem_3_4(result: AuditResult) -> str:
    from .bounds import theorem_3_4_deviation
    return decimal_text(theorem_3_4_deviation(result.n, result.n_cand, DELTA).hi, 6)


def _significance(result: AuditResult, method, draws, seed, row_p) -> AuditResult:
    return replace(result, significance=Significance(method, draws, seed, tuple(row_p[:-2]), row_p[-2], row_p[-1],
                                                     _theorem_3_4(result)))


def _statistics(result: AuditResult) -> tuple[list, list[bool]]:
    """The observed statistics: every row's sup, then UC and HUC (maxima over their rows)."""
    is_uc = [c.node is None for c in result.candidates]
    return [c.sup for c in result.candidates] + [result.uc.sup, result.huc.sup], is_uc


def _with_maxima(sups, is_uc):
    """A draw's row sups, then its UC and HUC (0 when no node is relevant, as for the observed)."""
    uc = max(s for s, u in zip(sups, is_uc) if u)
    huc = max((s for s, u in zip(sups, is_uc) if not u), default=0)
    return list(sups) + [uc, huc]


def _exceeds(n: int, K: int, result: AuditResult):
    """``(null, observed) -> bool array`` of ``T* >= T``: exact comparisons for exact numbers,
    within :func:`tie_tolerance` (relative above 1) for the fast engine's floats."""
    if result.arithmetic == "exact":
        return lambda null, observed: np.array([t >= s for t, s in zip(null, observed)])
    tol = tie_tolerance(n, K)
    return lambda null, observed: (np.array(null, dtype=float) >=
                                   np.array(observed, dtype=float) - tol * np.maximum(1.0, np.abs(observed)))


def resampling_p_values(n: int, K: int, result: AuditResult, null_sups, draws: int, seed: int) -> AuditResult:
    """An audit result with its consistency-resampling p-values (docs/specification.md §6's extension).

    Parameters
    ----------
    n : int
        The number of atoms.
    K : int
        The number of labels.
    result : AuditResult
        The observed audit.
    null_sups : callable
        ``null_sups(rng)`` gives each draw's row sups: an iterator of ``draws`` rows, each in
        candidate order (see :func:`huc_ref.engines.audit`).
    draws : int
        ``B``, the number of redraws.
    seed : int
        The seed of numpy's ``default_rng`` the redraws use: a seed of its own, not the one
        that generated the data (one stream used for both makes the redraws depend on the
        predictions).

    Returns
    -------
    AuditResult
        ``result`` with :class:`Significance` (``method="resampling"``): per statistic ``T``,
        ``(1 + #{b: T*_b >= T}) / (B + 1)``, valid at every ``B`` (``P(p <= a) <= a`` under the
        null).

    Examples
    --------
    >>> from huc_ref import LabelTree, Table, audit
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "b"}] * 2)
    >>> r = audit(d, {"u": Table(t, [0, 1])}, null_draws=9, seed=1)
    >>> r.uc.sup, r.significance.uc  # 5 of the 9 redraws reach 1/2: (1 + 5) / (9 + 1); exactly, 1/2
    (Fraction(1, 2), Fraction(3, 5))
    """
    observed, is_uc = _statistics(result)
    exceeds = _exceeds(n, K, result)
    counts = np.zeros(len(observed), dtype=np.int64)
    for row in null_sups(np.random.default_rng(seed)):
        counts += exceeds(_with_maxima(row, is_uc), observed)
    row_p = [Fraction(1 + int(c), draws + 1) for c in counts]
    return _significance(result, "resampling", draws, seed, row_p)


def candidate_rows(utilities, n_subgroups: int) -> int:
    """The number of candidate rows an audit has (Def. 2.1 and 3.2).

    Parameters
    ----------
    utilities : dict of str to Utility
        The utilities.
    n_subgroups : int
        ``|C|``.

    Returns
    -------
    int
        ``|C| sum_u (1 + |V_T(u)|)``: one UC row and one row per relevant node for each
        subgroup and utility.

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
    >>> candidate_rows({"u": Table(t, [1, 0, 0])}, 2)  # V_T(u) = {r, a}
    6
    """
    return n_subgroups * sum(1 + len(u.relevant_nodes) for u in utilities.values())


def null_work(draws: int, n: int, K: int, n_utilities: int, rows: int, engine: str = "exact") -> int:
    """The work of a number of null audits (App. F.3's scans), the unit :data:`MAX_NULL_WORK` budgets.

    Parameters
    ----------
    draws : int
        The number of null audits: resampled draws, or enumerated label assignments.
    n : int
        The number of atoms.
    K : int
        The number of labels.
    n_utilities : int
        ``|U|``.
    rows : int
        The number of candidate rows (:func:`candidate_rows`).
    engine : {"exact", "fast"}, default "exact"
        The engine, whose fixed cost per audit is :data:`AUDIT_ATOMS` atoms.

    Returns
    -------
    int
        ``draws x (n + AUDIT_ATOMS[engine]) x (K |U| + rows)``.

    Notes
    -----
    Each audit reads every atom's ``K`` probabilities once per utility (its values and scores;
    the fast engine's inverse-CDF draw reads them too) and scans every atom once per candidate
    row (Algorithm 2, App. F.3); its fixed cost is counted as :data:`AUDIT_ATOMS` more atoms.
    Measured: an exact audit takes 3-20 microseconds per unit, a fast null draw 5-30
    nanoseconds.

    Examples
    --------
    >>> null_work(2**19, 19, 2, 1, 2)  # --null exact on 19 binary rows (one table: V_T = {root}): minutes
    174063616
    >>> null_work(1000**2, 2, 1000, 1, 2)  # --null exact on 2 rows of 1,000 classes: hours
    66132000000
    """
    return draws * (n + AUDIT_ATOMS[engine]) * (K * n_utilities + rows)


def check_null_work(null_draws, n: int, K: int, n_utilities: int, rows: int, *, engine: str = "exact",
                    max_work=None) -> int:
    """The work of the null draws, refused beyond a budget before any audit starts (docs/specification.md §6).

    Parameters
    ----------
    null_draws : int or "exact"
        A number of draws, or ``"exact"``: all ``K**n`` label assignments.
    n : int
        The number of atoms.
    K : int
        The number of labels.
    n_utilities : int
        ``|U|``.
    rows : int
        The number of candidate rows (:func:`candidate_rows`).
    engine : {"exact", "fast"}, default "exact"
        The backend auditing each draw: the exact audit's or float64's.
    max_work : int, optional
        The budget, a positive integer; by default :data:`MAX_NULL_WORK` of the engine.

    Returns
    -------
    int
        The work (:func:`null_work`).

    Raises
    ------
    HUCError
        Of kind ``too_large`` beyond the budget, in one message that names the argument raising
        it with the value that runs it (or, for an enumeration beyond any budget, resampling);
        of kind ``option`` for a ``max_work`` that is not a positive integer.

    Examples
    --------
    >>> check_null_work(99, 120, 4, 2, 5)  # 99 exact audits of 120 rows: a few seconds
    236808
    >>> check_null_work("exact", 2, 1000, 1, 2)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: null_draws='exact': enumerates 1000**2 = 1000000 label assignments, each an audit: ...
    """
    if max_work is None:
        max_work = MAX_NULL_WORK[engine]
    elif not is_integer(max_work) or max_work < 1:
        raise HUCError(f"max_null_work: expected a positive integer, got {given(max_work)}", kind="option")
    resample = "null_draws=B (B resampled draws)"
    per_draw = null_work(1, n, K, n_utilities, rows, engine)
    if null_draws == "exact":
        huge = n * math.log10(K) > 60  # (K**n is not formed: beyond any budget, and its digits take time)
        draws = None if huge else K ** n
        count = f"enumerates {K}**{n}{'' if huge else f' = {draws}'} label assignments"
        other = f"or {resample}"
    else:
        huge, draws, count = False, int(null_draws), f"{int(null_draws)} draws"
        other = "or fewer draws" + ("" if engine == "fast" else ", or arithmetic='float64'")
    work = None if huge else draws * per_draw
    if huge or work > max_work:
        amount = f"{K}**{n} x {per_draw}" if huge else f"about {work:.2g}"
        remedy = f"give {resample}" if huge else f"give max_null_work={work} to run it anyway, {other}"
        raise HUCError(f"null_draws={null_draws!r}: {count}, each an audit: {amount} units of work (draws x "
                       f"(n + {AUDIT_ATOMS[engine]}) (K |U| + rows), n = {n}, K = {K}, |U| = {n_utilities}, "
                       f"rows = {rows}), more than the {engine} engine's budget of {max_work}; {remedy}",
                       kind="too_large")
    return work


def assignments(dist: FiniteDistribution) -> int:
    """``K**n``: the number of label assignments exact enumeration visits (every ``p_y > 0``, A.2).

    >>> from huc_ref import LabelTree
    >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    >>> atoms = [{"p": ["1/2", "1/4", "1/4"], "label": "a"}, {"p": ["1/3"] * 3, "label": "c"}]
    >>> assignments(FiniteDistribution(t, atoms))
    9
    """
    return dist.tree.K ** dist.n


def exact_p_values(dist: FiniteDistribution, result: AuditResult, audit_labels, max_work=None) -> AuditResult:
    """An audit result with its exact p-values ``P(T* >= T)`` (docs/specification.md §6's extension).

    Parameters
    ----------
    dist : FiniteDistribution
        The sample audited.
    result : AuditResult
        The observed audit.
    audit_labels : callable
        ``audit_labels(y)`` gives the row sups of the audit with the label ids ``y`` (one per
        atom), in candidate order.
    max_work : int, optional
        The budget (:func:`check_null_work`); by default :data:`MAX_NULL_WORK` of the engine.

    Returns
    -------
    AuditResult
        ``result`` with :class:`Significance` (``method="exact"``): every label assignment
        ``y`` weighs ``prod_i p_i(y_i)``, and each p-value is the exact weight of the
        assignments whose statistic reaches the observed one.

    Raises
    ------
    HUCError
        As :func:`check_null_work`, before any audit runs.

    Examples
    --------
    >>> from huc_ref import LabelTree, Table, audit
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "b"}] * 2)
    >>> audit(d, {"u": Table(t, [0, 1])}, null_draws="exact").significance.uc  # UC = 1/2 iff both labels agree
    Fraction(1, 2)
    """
    check_null_work("exact", dist.n, dist.tree.K, len(result.relevant_nodes), len(result.candidates),
                    engine="exact" if result.arithmetic == "exact" else "fast", max_work=max_work)
    total = assignments(dist)
    observed, is_uc = _statistics(result)
    exceeds = _exceeds(dist.n, dist.tree.K, result)
    tail = [Fraction(0)] * len(observed)
    supports = [list(enumerate(a.p)) for a in dist.atoms]
    for choice in itertools.product(*supports):
        weight = prod((py for _, py in choice), start=Fraction(1))
        hits = exceeds(_with_maxima(audit_labels([y for y, _ in choice]), is_uc), observed)
        for j in np.flatnonzero(hits):
            tail[j] += weight
    return _significance(result, "exact", total, None, tail)
