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
  probability ``prod_i p_i(y_i)``; the p-value ``P(T* >= T)`` is then a rational, for cases
  with at most :data:`MAX_ASSIGNMENTS` assignments.

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

__all__ = ["MAX_ASSIGNMENTS", "MAX_NULL_DRAWS", "Significance", "check_null", "check_enumerable",
           "resampling_p_values", "exact_p_values", "uniforms", "draw_label", "tie_tolerance"]

#: The most label assignments ``prod_i |supp p_i|`` exact enumeration takes (about a million,
#: each an exact audit).
MAX_ASSIGNMENTS = 10**6

#: The most resampling draws accepted.
MAX_NULL_DRAWS = 10**6

#: Uniforms are ``k / 2**53`` with ``k`` uniform on ``1 .. 2**53``: exact in float64 and as a
#: rational, so both engines read the same draw.
_UNIT = 2**53

#: The confidence of the Theorem 3.4 bound shown beside the p-values.
DELTA = Fraction(1, 20)


@dataclass(frozen=True)
class Significance:
    """The p-values of an audit under the null of calibration (``Y_i ~ P_i``).

    ``rows``: one p-value per candidate row, in :attr:`AuditResult.candidates` order;
    ``uc``/``huc``: of UC and HUC as maxima (family-wise).  ``method`` is ``"resampling"``
    (``draws`` seeded redraws, ``seed``) or ``"exact"`` (every assignment; ``draws`` is
    their number).  ``theorem_3_4``: Thm 3.4's deviation ``16/sqrt(n) + 4 sqrt(log(N/delta)/(2n))``
    at ``delta = 1/20`` (a decimal upper bound): an observed HUC below it is, by that bound,
    indistinguishable from 0.

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
        """The optional ``significance`` object of ``huc-result/1`` (docs/specification.md §6):
        p-values as exact rationals ``"a/b"`` on both engines (they are counts).

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
    """``null_draws`` (a positive int, or ``"exact"``) and ``seed`` (a non-negative int), checked
    (docs/specification.md §6's extension).

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
    """``n`` integers ``k`` uniform on ``1 .. 2**53``: the uniforms ``k / 2**53`` of one draw
    (docs/specification.md §6's extension).

    >>> k = uniforms(np.random.default_rng(0), 3)
    >>> k.dtype.kind, bool(((1 <= k) & (k <= 2**53)).all())
    ('i', True)
    """
    return rng.integers(1, _UNIT, size=n, endpoint=True, dtype=np.int64)


def draw_label(p, k: int) -> int:
    """The label of the exact inverse-CDF draw: the first ``y`` with ``p_0 + ... + p_y >= k / 2**53``
    (never a label of probability 0; docs/specification.md §6's extension).

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
    """How far below the observed float64 statistic a null one still counts as an exceedance
    on the fast engine: ``8 (n + K) 2**-52``, above the rounding of sums of ``n`` terms in [-2, 2]
    (docs/specification.md §6's extension).

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
    if result.engine == "exact":
        return lambda null, observed: np.array([t >= s for t, s in zip(null, observed)])
    tol = tie_tolerance(n, K)
    return lambda null, observed: (np.array(null, dtype=float) >=
                                   np.array(observed, dtype=float) - tol * np.maximum(1.0, np.abs(observed)))


def resampling_p_values(n: int, K: int, result: AuditResult, null_sups, draws: int, seed: int) -> AuditResult:
    """``result`` with the consistency-resampling p-values (:class:`Significance`):
    ``(1 + #{b: T*_b >= T}) / (B + 1)`` per statistic, ``null_sups(rng)`` giving each draw's
    row sups (an iterator of ``B`` rows, in candidate order; see :func:`huc_ref.engines.audit`),
    for ``n`` atoms on ``K`` labels (docs/specification.md §6's extension).

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


def check_enumerable(K: int, n: int, option: str = "null_draws: 'exact'",
                     remedy: str = "use resampling (null_draws=B)") -> None:
    """Refuse exact enumeration of ``K**n`` label assignments above :data:`MAX_ASSIGNMENTS`, in one
    message naming ``option`` and ``remedy`` (the command line names its own: ``--null exact``,
    ``--null B``); docs/specification.md §6's extension.

    >>> check_enumerable(3, 12)  # 531441 assignments
    >>> check_enumerable(4, 120, "--null exact", "give --null B")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: --null exact enumerates 4**120 label assignments here, more than 1000000; give --null B
    """
    huge = n * math.log10(K) > math.log10(MAX_ASSIGNMENTS) + 1  # (then K**n is not formed)
    if huge or K ** n > MAX_ASSIGNMENTS:
        count = f"{K}**{n}" if huge else K ** n
        raise HUCError(f"{option} enumerates {count} label assignments here, more than {MAX_ASSIGNMENTS}; {remedy}",
                       kind="too_large")


def assignments(dist: FiniteDistribution) -> int:
    """``K**n``: the number of label assignments exact enumeration visits (every ``p_y > 0``, A.2).

    >>> from huc_ref import LabelTree
    >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    >>> atoms = [{"p": ["1/2", "1/4", "1/4"], "label": "a"}, {"p": ["1/3"] * 3, "label": "c"}]
    >>> assignments(FiniteDistribution(t, atoms))
    9
    """
    return dist.tree.K ** dist.n


def exact_p_values(dist: FiniteDistribution, result: AuditResult, audit_labels) -> AuditResult:
    """``result`` with exact p-values ``P(T* >= T)`` (:class:`Significance`, ``method="exact"``):
    every label assignment ``y`` with probability ``prod_i p_i(y_i)``, ``audit_labels(y)``
    giving its row sups.  At most :data:`MAX_ASSIGNMENTS` assignments (docs/specification.md §6's extension).

    >>> from huc_ref import LabelTree, Table, audit
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "b"}] * 2)
    >>> audit(d, {"u": Table(t, [0, 1])}, null_draws="exact").significance.uc  # UC = 1/2 iff both labels agree
    Fraction(1, 2)
    """
    check_enumerable(dist.tree.K, dist.n)
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
