"""The public entry points: one call per concept, the dispatcher of the backends.

The audit's backend is chosen by ``engine``: ``"exact"`` (the reference: exact rationals,
:mod:`huc_ref.audit`) or ``"fast"`` (numpy float64, :mod:`huc_ref.fast`, with
``accelerator="numba"`` for its compiled kernels).  A boosting run's numbers are chosen by
``arithmetic`` (:func:`boost_arithmetic`): ``"exact"`` (the certified engine,
:mod:`huc_ref.boost`), ``"certified"`` or ``"float64"`` (the fast backend with the certified or
the plain float64 context, :mod:`huc_ref.fast.context`); the certified context gets its judge,
the certified engine, from here: nothing else stands above both backends.  All return the same
result types (:class:`~huc_ref.results.AuditResult`, :class:`~huc_ref.results.BoostResult`),
written by one writer, and validate their options with the same rules and messages
(:mod:`huc_ref.validation`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from .audit import MAX_EXACT_DIGITS
from .audit import audit as exact_audit
from .boost import Judge, check_digits
from .boost import boost as certified_boost
from .distribution import FiniteDistribution
from .errors import HUCError, given, one_of
from .fast.audit import audit_distribution as fast_audit
from .fast.audit import distribution_arrays
from .fast.boost import boost as float_boost
from .fast.context import Certified
from .fast.sample import Sample
from .fast.significance import NullAudit, null_sups
from .fast.tree import FastTree
from .results import AuditResult, BoostResult
from .significance import (
    candidate_rows,
    check_null,
    check_null_work,
    check_sample,
    draw_label,
    exact_p_values,
    resampling_p_values,
    uniforms,
)
from .utilities import Utility
from .validation import check_distribution, check_utilities

__all__ = ["ENGINES", "ARITHMETICS", "audit", "boost", "boost_arithmetic", "check_engine"]

#: The backends of the audit: exact rationals (the reference) and numpy float64.
ENGINES = ("exact", "fast")

#: The numbers of a boosting run (:func:`boost_arithmetic`).
ARITHMETICS = ("exact", "certified", "float64")


def check_engine(engine) -> str:
    """``engine``, checked (docs/specification.md §3's one audit engine, exact or float64).

    Parameters
    ----------
    engine : {"exact", "fast"}
        The audit's backend.

    Returns
    -------
    str
        ``engine``.

    Raises
    ------
    HUCError
        Of kind ``option``, for anything else.

    Examples
    --------
    >>> check_engine("fast")
    'fast'
    >>> check_engine("gpu")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: engine: expected 'exact' or 'fast', got 'gpu'
    """
    if not one_of(engine, ENGINES):
        raise HUCError(f"engine: expected 'exact' or 'fast', got {given(engine)}", kind="option")
    return engine


def audit(dist: FiniteDistribution, utilities: Mapping[str, Utility], *, engine: str = "exact",
          accelerator: str = "numpy", rational: str = "fraction", max_digits: int = MAX_EXACT_DIGITS,
          null_draws: int | str | None = None, seed: int = 0, max_null_work: int | None = None) -> AuditResult:
    """UC and HUC of a finite distribution with every sup and its witness (Sec. 2.1, Def. 3.2,
    App. F.3-F.4), on the backend ``engine``.

    ``engine="exact"``: every number a ``Fraction`` (``rational="gmpy2"`` computes them with
    GMP; ``max_digits`` bounds the cost, :data:`huc_ref.audit.MAX_EXACT_DIGITS`).
    ``engine="fast"``: float64 (``accelerator="numba"``: the compiled kernels), the same rows
    in the same order, each decision certified or taken exactly (:mod:`huc_ref.fast`).

    ``null_draws=B`` adds p-values under the null of calibration, ``Y_i ~ P_i``, from ``B``
    redraws of every label seeded by ``seed`` (``"exact"``: every label assignment, exact
    rationals), to UC, HUC and each row (``result.significance``, :mod:`huc_ref.significance`);
    the distribution must be a labelled sample.  Their cost is estimated before any audit
    (:func:`huc_ref.significance.null_work`) and refused beyond ``max_null_work`` (default
    :data:`huc_ref.significance.MAX_NULL_WORK` of the engine), naming the value that runs it.

    Parameters
    ----------
    dist : FiniteDistribution
        The atoms: a population (laws ``eta_i``) or a sample (labels).
    utilities : dict of str to Utility
        The utilities by name, each built on ``dist``'s tree.
    engine : {"exact", "fast"}, default "exact"
        Exact rationals (:func:`huc_ref.audit.audit`) or float64
        (:func:`huc_ref.fast.audit.audit_distribution`).
    accelerator : {"numpy", "numba"}, default "numpy"
        The fast engine's kernels (and those of its null redraws).
    rational : {"fraction", "gmpy2"}, default "fraction"
        The exact engine's number type.
    max_digits : int, default MAX_EXACT_DIGITS
        The exact engine's bound on the digits of its inputs.
    null_draws : int or "exact", optional
        The redraws of the labels for p-values under the null of calibration; ``"exact"``:
        every label assignment.  None: no p-values.
    seed : int, default 0
        Seeds the redraws.
    max_null_work : int, optional
        The budget of the redraws' audits (None: the engine's
        :data:`huc_ref.significance.MAX_NULL_WORK`).

    Returns
    -------
    AuditResult
        Every candidate row with its sup and witness, UC and HUC, and ``significance`` where
        ``null_draws`` is given.

    Raises
    ------
    HUCError
        For an unknown ``engine``, a ``dist`` or utilities the audit cannot take, ``null_draws``
        on a distribution that is not a labelled sample, or redraws costing more than
        ``max_null_work``; and what the chosen engine refuses (:func:`huc_ref.audit.audit`).

    Examples
    --------
    Appendix D.1 (cancellation): ``UC = 0`` while ``HUC = 1/4``, on either backend.

    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> exact, fast = (audit(d, {"u": Table(t, [-1, 1, 1, 1])}, engine=e) for e in ("exact", "fast"))
    >>> exact.uc.sup, exact.huc.sup, exact.huc.node, fast.huc.sup, fast.huc.node
    (Fraction(0, 1), Fraction(1, 4), 'v0', 0.25, 'v0')
    """
    if null_draws is not None:
        null_draws, seed = check_null(null_draws, seed)
        check_sample(check_distribution(dist))
        check_utilities(dist.tree, dist.n, utilities)
        check_null_work(null_draws, dist.n, dist.tree.K, len(utilities), candidate_rows(utilities, len(dist.subgroups)),
                        engine=check_engine(engine), max_work=max_null_work)
    if check_engine(engine) == "fast":
        result = fast_audit(check_distribution(dist), utilities, accelerator=accelerator)
    else:
        result = exact_audit(dist, utilities, rational=rational, max_digits=max_digits)
    if null_draws is None:
        return result
    return _with_p_values(dist, utilities, result, null_draws, seed, accelerator, rational, max_digits, max_null_work)


def _with_p_values(dist, utilities, result: AuditResult, null_draws, seed, accelerator, rational,
                   max_digits, max_null_work) -> AuditResult:
    """``result`` with its p-values under the null (:mod:`huc_ref.significance`), each draw
    audited by the backend that audited ``result``: the fast one reuses the label-free part
    (:class:`huc_ref.fast.significance.NullAudit`), the exact one audits the relabelled atoms."""
    if result.engine == "fast":
        P, exact, weights = distribution_arrays(dist)
        ft, rows = FastTree(dist.tree), np.arange(dist.n)
        if null_draws == "exact":
            null = NullAudit(ft, P, weights, utilities, rows=rows, exact=exact)
            return exact_p_values(dist, result, lambda labels: null.sups(np.array(labels)), max_null_work)
        draws = null_sups(ft, P, weights, utilities, null_draws, rows=rows, accelerator=accelerator, exact=exact)
        return resampling_p_values(dist.n, dist.tree.K, result, draws, null_draws, seed)

    def sups(labels):  # the exact audit of the same atoms with these labels
        atoms = [replace(a, label=y) for a, y in zip(dist.atoms, labels)]
        relabelled = FiniteDistribution(dist.tree, atoms, dist.subgroups)
        return [c.sup for c in exact_audit(relabelled, utilities, rational=rational, max_digits=max_digits).candidates]
    if null_draws == "exact":
        return exact_p_values(dist, result, sups, max_null_work)

    def draws(rng):
        for _ in range(null_draws):
            yield sups([draw_label(a.p, int(k)) for a, k in zip(dist.atoms, uniforms(rng, dist.n))])
    return resampling_p_values(dist.n, dist.tree.K, result, draws, null_draws, seed)


def boost_arithmetic(arithmetic=None, engine=None) -> str:
    """The numbers of a boosting run (docs/specification.md §4), checked: ``"exact"`` (the
    certified engine: mpmath at a working precision, every decision proved at two precisions),
    ``"certified"`` (the fast backend in float64 with rigorous error bounds, Arb where they cannot
    decide, the certified engine where Arb cannot: the same decisions and certificates) or
    ``"float64"`` (the fast backend, uncertified); default ``"exact"``.  The spellings before it,
    ``engine="exact"`` or ``"fast"`` with ``arithmetic="certified"`` or ``"float"``, are accepted
    for one release with a DeprecationWarning naming the new one.

    Parameters
    ----------
    arithmetic : {"exact", "certified", "float64"}, optional
        The numbers; None: ``"exact"``.  ``"float"`` is the deprecated spelling of
        ``"float64"``.
    engine : {"exact", "fast"}, optional
        The deprecated spelling, alone or with ``arithmetic="certified"`` or ``"float"``.

    Returns
    -------
    str
        One of :data:`ARITHMETICS`.

    Raises
    ------
    HUCError
        Of kind ``option``, for an unknown ``arithmetic`` or ``engine``, or an ``engine`` given
        with an ``arithmetic`` it does not combine with.

    Warns
    -----
    DeprecationWarning
        For the spellings ``engine=`` and ``arithmetic="float"``, naming the new one.

    Examples
    --------
    >>> boost_arithmetic(), boost_arithmetic("float64")
    ('exact', 'float64')
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     boost_arithmetic("certified", engine="fast")
    'certified'
    >>> str(seen[0].message)
    "engine='fast', arithmetic='certified' is deprecated; use arithmetic='certified'"
    >>> boost_arithmetic("interval")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: arithmetic: expected 'exact', 'certified' or 'float64', got 'interval'
    """
    if engine is None:
        if arithmetic is None:
            return "exact"
        if one_of(arithmetic, ARITHMETICS):
            return arithmetic
        if one_of(arithmetic, ("float",)):  # the certified engine on binary floats: float64 does that now
            return _deprecated("arithmetic='float'", "float64")
        raise HUCError(f"arithmetic: expected 'exact', 'certified' or 'float64', got {given(arithmetic)}",
                       kind="option")
    check_engine(engine)
    if arithmetic is not None and not one_of(arithmetic, ("certified", "float")):
        raise HUCError(f"engine: not taken with arithmetic={given(arithmetic)} (engine= is deprecated); give "
                       "arithmetic='exact', 'certified' or 'float64' alone", kind="option")
    new = {("exact", None): "exact", ("exact", "certified"): "exact", ("exact", "float"): "float64",
           ("fast", None): "float64", ("fast", "float"): "float64", ("fast", "certified"): "certified"}
    old = f"engine={engine!r}" + ("" if arithmetic is None else f", arithmetic={arithmetic!r}")
    return _deprecated(old, new[engine, arithmetic])


def _deprecated(old: str, new: str) -> str:
    warnings.warn(f"{old} is deprecated; use arithmetic={new!r}", DeprecationWarning, stacklevel=4)
    return new


def boost(dist: FiniteDistribution | Sample, utilities: Mapping[str, Utility], *, arithmetic: str | None = None,
          method: str = "huc", epsilon="1/100", max_updates: int = 1000, step="adaptive", select: str = "greedy",
          max_passes: int = 100, digits: int | None = None, engine: str | None = None,
          progress=None) -> BoostResult:
    """HUC-Boost (Algorithm 1/3) or UC-Boost (Sec. 3.2, App. E, H) until no candidate exceeds
    ``epsilon``, in the numbers ``arithmetic`` (:func:`boost_arithmetic`); one driver
    (:func:`huc_ref.driver.drive`) for all.

    ``arithmetic="exact"`` (the default): the certified engine (:func:`huc_ref.boost.boost`;
    ``digits`` of working precision, default 30).  ``"certified"``: the fast backend with the
    certified context (:class:`huc_ref.fast.context.Certified`: float64 with rigorous error
    bounds, Arb, and the certified engine, :class:`huc_ref.boost.Judge`, where they cannot decide;
    the same certificates, decisions and Theorem 3.5's inequalities; ``digits``: the judge's
    working precision).  ``"float64"``: the fast backend (:func:`huc_ref.fast.boost.boost`,
    uncertified; also on a :class:`huc_ref.fast.sample.Sample`).  ``engine=`` is the deprecated
    spelling.  ``epsilon`` and a fixed ``step`` are exact numbers in all three (``"1/100"``,
    ``"0.05"``, ``Fraction``), as the command line takes them.

    Parameters
    ----------
    dist : FiniteDistribution or Sample
        The atoms boosted (a :class:`huc_ref.fast.sample.Sample` with ``arithmetic="float64"``
        only).
    utilities : dict of str to Utility
        The utilities by name, each built on ``dist``'s tree.
    arithmetic : {"exact", "certified", "float64"}, optional
        The numbers (:func:`boost_arithmetic`); None: ``"exact"``.
    method : {"huc", "uc"}, default "huc"
        HUC-Boost or UC-Boost.
    epsilon : int, Fraction or str, default "1/100"
        The tolerance, exactly, in (0, 1].
    max_updates : int, default 1000
        The cap on the updates (``stopped == "cap"``).
    step : "adaptive" or exact number, default "adaptive"
        ``"adaptive"`` (``alpha = Gamma/Lambda``, Theorem 3.5) or a fixed step magnitude.
    select : {"greedy", "passes", "drain"}, default "greedy"
        The schedule of the audits (:class:`huc_ref.driver.Schedule`).
    max_passes : int, default 100
        The budget of ``select="passes"`` (``stopped == "budget"``).
    digits : int, optional
        The working precision of ``"exact"`` and of ``"certified"``'s judge (default 30); not
        taken with ``"float64"``.
    engine : {"exact", "fast"}, optional
        The deprecated spelling of ``arithmetic``.
    progress : callable, optional
        ``progress(t, record)`` is called after every update.

    Returns
    -------
    BoostResult
        The run: its updates, ``stopped``, the final state and Theorem 3.5's checks.

    Raises
    ------
    HUCError
        For an unknown ``arithmetic``, a Sample with another arithmetic than ``"float64"``,
        ``digits`` with ``"float64"`` or out of range, and the options and utilities the
        backend refuses (:func:`huc_ref.validation.boost_options`).

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> runs = [boost(d, {"u": Table(t, [-1, 1, 1, 1])}, epsilon="1/10", arithmetic=a) for a in ARITHMETICS]
    >>> [(r.arithmetic, len(r.updates), r.updates[0]["node"], r.theorem_3_5["certified"]) for r in runs]
    [('exact', 2, 'v0', True), ('certified', 2, 'v0', True), ('float64', 2, 'v0', False)]
    """
    arithmetic = boost_arithmetic(arithmetic, engine)
    options = dict(method=method, epsilon=epsilon, max_updates=max_updates, step=step, select=select,
                   max_passes=max_passes, progress=progress)
    if isinstance(dist, Sample) and arithmetic != "float64":
        raise HUCError("dist: a Sample (float64 arrays) boosts in float64 only (arithmetic='float64'); the certified "
                       "arithmetics need a FiniteDistribution (FiniteDistribution.from_floats reads the floats "
                       "exactly)", kind="type")
    if arithmetic == "float64":
        if digits is not None:
            raise HUCError("digits: applies to arithmetic='exact' or 'certified' (float64 has no working "
                           "precision)", kind="option")
        return float_boost(dist, utilities, **options)
    digits = 30 if digits is None else check_digits(digits)
    if arithmetic == "certified":  # the judge: the certified engine, where the context cannot decide
        return float_boost(dist, utilities, numbers=Certified(Judge, digits), **options)
    return certified_boost(dist, utilities, digits=digits, **options)
