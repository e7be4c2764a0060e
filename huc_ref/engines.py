"""The public entry points: one call per concept, the dispatcher of the backends.

Each call's numbers are its ``arithmetic``.  An audit's (:func:`audit_arithmetic`) are
``"exact"`` (exact rationals, the reference: :mod:`huc_ref.audit`) or ``"float64"`` (numpy, every
decision certified or taken exactly: :mod:`huc_ref.fast`); ``accelerator`` names the library that
computes them (:data:`ACCELERATORS`: gmpy2 for the exact numbers, numba for float64's).  A
boosting run's (:func:`boost_arithmetic`) are ``"exact"`` (the certified engine,
:mod:`huc_ref.boost`), ``"certified"`` or ``"float64"`` (the fast backend with the certified or the
plain float64 context, :mod:`huc_ref.fast.context`); the certified context gets its judge, the
certified engine, from here: nothing else stands above both backends.  All return the same result
types (:class:`~huc_ref.results.AuditResult`, :class:`~huc_ref.results.BoostResult`), written by
one writer, and validate their options with the same rules and messages
(:mod:`huc_ref.validation`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from .audit import MAX_EXACT_DIGITS
from .audit import audit as exact_audit
from .boost import Judge, check_digits
from .boost import boost as certified_boost
from .distribution import SMOOTH_REMEDY, FiniteDistribution, check_smoothing
from .errors import HUCError, deprecated, given, one_of
from .fast.audit import ACCELERATORS as FLOAT_ACCELERATORS
from .fast.audit import (
    ROW_SUM_TOLERANCE,
    check_accelerator,
    check_label_mass,
    distribution_arrays,
    label_ids,
    subgroup_columns,
)
from .fast.audit import audit as sample_audit
from .fast.audit import audit_distribution as fast_audit
from .fast.boost import boost as float_boost
from .fast.context import Certified
from .fast.numbers import probability_rows
from .fast.sample import Sample
from .fast.significance import NullAudit, null_sups
from .fast.tree import FastTree
from .rational import RATIONAL_TYPES, rational_type
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
from .validation import check_distribution, check_tree, check_utilities

__all__ = ["ENGINES", "ARITHMETICS", "AUDIT_ARITHMETICS", "ACCELERATORS", "audit", "audit_arrays", "boost",
           "audit_arithmetic", "audit_accelerator", "check_limits", "boost_arithmetic", "check_engine"]

#: The deprecated ``engine`` argument's values (the audit's backends, exact rationals and float64),
#: each read as the arithmetic it ran (:func:`audit_arithmetic`, :func:`boost_arithmetic`).
ENGINES = ("exact", "fast")

#: The numbers of a boosting run (:func:`boost_arithmetic`).
ARITHMETICS = ("exact", "certified", "float64")

#: The numbers of an audit (:func:`audit_arithmetic`): exact rationals, the reference, or float64,
#: each of whose decisions (a utility's choice, the order of two scores) is certified by its error
#: bound or taken exactly (App. F.4, :mod:`huc_ref.fast`): float64 audits are certified already, so
#: there is no third arithmetic as a boosting run's ``"certified"``.
AUDIT_ARITHMETICS = ("exact", "float64")

#: The libraries that compute each audit arithmetic's numbers, the reference first: the same
#: numbers, faster (GMP's rationals, :func:`huc_ref.rational.rational_type`; numba's compiled
#: kernels, :mod:`huc_ref.fast.kernels`).
ACCELERATORS = {"exact": RATIONAL_TYPES, "float64": FLOAT_ACCELERATORS}

#: Each deprecated ``engine`` of an audit and the arithmetic it ran.
_ENGINE_ARITHMETIC = {"exact": "exact", "fast": "float64"}

#: The backend that computes each audit arithmetic (:mod:`huc_ref.significance` budgets its work).
_BACKEND = {"exact": "exact", "float64": "fast"}


def check_engine(engine) -> str:
    """``engine``, the deprecated choice of numbers (docs/specification.md §3's one audit engine,
    exact or float64), checked.

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


def audit_arithmetic(arithmetic=None, engine=None, default: str = "exact") -> str:
    """The numbers of an audit (docs/specification.md §3, App. F.3-F.4), checked: ``"exact"`` or
    ``"float64"`` (:data:`AUDIT_ARITHMETICS`), ``default`` when not given.  The spelling before it,
    ``engine="exact"`` or ``"fast"``, is read for one release with a
    :class:`~huc_ref.errors.HUCDeprecationWarning` naming the new one.

    Parameters
    ----------
    arithmetic : {"exact", "float64"}, optional
        The audit's numbers; None: ``default``.
    engine : {"exact", "fast"}, optional
        Deprecated: read as ``"exact"`` or ``"float64"``; refused beside ``arithmetic``.
    default : {"exact", "float64"}, default "exact"
        The arithmetic when neither is given (``"float64"`` for a classifier's arrays).

    Returns
    -------
    str
        ``"exact"`` or ``"float64"``.

    Raises
    ------
    HUCError
        Of kind ``option`` for another value (``"certified"`` saying why), or ``engine`` beside
        ``arithmetic``.

    Examples
    --------
    >>> audit_arithmetic(), audit_arithmetic("float64")
    ('exact', 'float64')
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     audit_arithmetic(engine="fast")
    'float64'
    >>> str(seen[0].message)
    "engine='fast' is deprecated; use arithmetic='float64'"
    >>> audit_arithmetic("certified")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: arithmetic: an audit's numbers are 'exact' or 'float64', got 'certified' (float64 ...
    """
    if engine is not None:
        check_engine(engine)
        if arithmetic is not None:
            raise HUCError(f"engine: not taken with arithmetic={given(arithmetic)} (engine= is deprecated); give "
                           "arithmetic alone", kind="option")
        return _deprecated(f"engine={engine!r}", _ENGINE_ARITHMETIC[engine])
    if arithmetic is None:
        return default
    if one_of(arithmetic, AUDIT_ARITHMETICS):
        return arithmetic
    why = (" (float64 audits certify each decision or take it exactly already; 'certified' is a boosting run's "
           "arithmetic)" if one_of(arithmetic, ("certified",)) else "")
    raise HUCError(f"arithmetic: an audit's numbers are 'exact' or 'float64', got {given(arithmetic)}{why}",
                   kind="option")


def audit_accelerator(arithmetic: str, accelerator=None, rational=None) -> str:
    """The library that computes an audit's numbers in ``arithmetic`` (:data:`ACCELERATORS`: the
    exact audit's Fractions or gmpy2's GMP rationals, docs/specification.md §4; float64's numpy or
    numba kernels, App. F.4), checked to be one of that arithmetic's and installed; the reference
    when not given.  ``rational=``, the exact audit's spelling before it, is read for one release
    with a :class:`~huc_ref.errors.HUCDeprecationWarning`.

    Parameters
    ----------
    arithmetic : {"exact", "float64"}
        The audit's numbers (:func:`audit_arithmetic`).
    accelerator : str, optional
        One of ``ACCELERATORS[arithmetic]``; None: the first, the reference.
    rational : {"fraction", "gmpy2"}, optional
        Deprecated: read as ``accelerator``; refused beside it.

    Returns
    -------
    str
        The accelerator.

    Raises
    ------
    HUCError
        Of kind ``option`` for an accelerator of the other arithmetic (naming it) or of none, of
        kind ``dependency`` for one that is not installed.

    Examples
    --------
    >>> audit_accelerator("exact"), audit_accelerator("float64")
    ('fraction', 'numpy')
    >>> audit_accelerator("exact", "numba")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: accelerator: 'numba' computes float64 (arithmetic='float64'); arithmetic='exact' ...
    """
    if rational is not None:
        if accelerator is not None:
            raise HUCError(f"rational: not taken with accelerator={given(accelerator)} (rational= is deprecated); "
                           "give accelerator alone", kind="option")
        rational_type(rational)  # (its own message for a value that is no rational type)
        deprecated(f"rational={rational!r}", f"accelerator={rational!r}", stacklevel=4)
        accelerator = rational
    choices = ACCELERATORS[arithmetic]
    if accelerator is None:
        return choices[0]
    if not one_of(accelerator, choices):
        other = next((a for a, names in ACCELERATORS.items() if one_of(accelerator, names)), None)
        if other is not None:
            raise HUCError(f"accelerator: {accelerator!r} computes {other} (arithmetic={other!r}); "
                           f"arithmetic={arithmetic!r} takes {' or '.join(map(repr, choices))}", kind="option")
        every = ", ".join(f"{' or '.join(map(repr, names))} ({a})" for a, names in ACCELERATORS.items())
        raise HUCError(f"accelerator: expected {every}, got {given(accelerator)}", kind="option")
    if arithmetic == "exact":
        rational_type(accelerator, "accelerator")  # (installed)
        return accelerator
    return check_accelerator(accelerator)


def check_limits(arithmetic: str, max_digits=None, null_draws=None, max_null_work=None) -> int:
    """The exact audit's cost limit (``max_digits``, default :data:`MAX_EXACT_DIGITS`,
    docs/specification.md §4); a limit that would not apply (``max_digits`` in float64,
    ``max_null_work`` without ``null_draws``, §6's extension) is refused rather than ignored.

    Parameters
    ----------
    arithmetic : {"exact", "float64"}
        The audit's numbers (:func:`audit_arithmetic`).
    max_digits : int, optional
        The exact audit's bound on the digits of its inputs.
    null_draws : int or "exact", optional
        The null's redraws, if any.
    max_null_work : int, optional
        The budget of the redraws.

    Returns
    -------
    int
        ``max_digits``, or :data:`MAX_EXACT_DIGITS` when not given.

    Raises
    ------
    HUCError
        Of kind ``option`` for a limit that does not apply.

    Examples
    --------
    >>> check_limits("exact") == MAX_EXACT_DIGITS
    True
    >>> check_limits("float64", max_null_work=10)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: max_null_work: applies to null_draws (the budget of its draws)
    """
    if max_digits is not None and arithmetic != "exact":
        raise HUCError("max_digits: applies to arithmetic='exact' (the cost limit of its digits); float64's numbers "
                       "have a fixed size", kind="option")
    if max_null_work is not None and null_draws is None:
        raise HUCError("max_null_work: applies to null_draws (the budget of its draws)", kind="option")
    return MAX_EXACT_DIGITS if max_digits is None else max_digits


def audit(dist: FiniteDistribution, utilities: Mapping[str, Utility], *, arithmetic: str | None = None,
          accelerator: str | None = None, max_digits: int | None = None, null_draws: int | str | None = None,
          seed: int = 0, max_null_work: int | None = None, engine: str | None = None,
          rational: str | None = None) -> AuditResult:
    """UC and HUC of a finite distribution with every sup and its witness (Sec. 2.1, Def. 3.2,
    App. F.3-F.4), in the numbers ``arithmetic`` (:func:`audit_arithmetic`).

    ``arithmetic="exact"`` (the default): every number a ``Fraction`` (``accelerator="gmpy2"``
    computes them with GMP; ``max_digits`` bounds the cost, :data:`huc_ref.audit.MAX_EXACT_DIGITS`).
    ``arithmetic="float64"``: float64 (``accelerator="numba"``: the compiled kernels), the same rows
    in the same order, each decision certified or taken exactly (:mod:`huc_ref.fast`).
    ``engine="exact"`` or ``"fast"`` and ``rational=`` are the deprecated spellings.

    ``null_draws=B`` adds p-values under the null of calibration, ``Y_i ~ P_i``, from ``B``
    redraws of every label seeded by ``seed`` (``"exact"``: every label assignment, exact
    rationals), to UC, HUC and each row (``result.significance``, :mod:`huc_ref.significance`);
    the distribution must be a labelled sample.  Their cost is estimated before any audit
    (:func:`huc_ref.significance.null_work`) and refused beyond ``max_null_work`` (default
    :data:`huc_ref.significance.MAX_NULL_WORK` of the arithmetic), naming the value that runs it.

    Parameters
    ----------
    dist : FiniteDistribution
        The atoms: a population (laws ``eta_i``) or a sample (labels).
    utilities : dict of str to Utility
        The utilities by name, each built on ``dist``'s tree.
    arithmetic : {"exact", "float64"}, default "exact"
        Exact rationals (:func:`huc_ref.audit.audit`) or float64
        (:func:`huc_ref.fast.audit.audit_distribution`): :func:`audit_arithmetic`.
    accelerator : str, optional
        The library computing the numbers (:data:`ACCELERATORS`): ``"fraction"`` (default) or
        ``"gmpy2"`` in exact arithmetic, ``"numpy"`` (default) or ``"numba"`` in float64.
    max_digits : int, default MAX_EXACT_DIGITS
        Exact arithmetic's bound on the digits of its inputs (refused in float64).
    null_draws : int or "exact", optional
        The redraws of the labels for p-values under the null of calibration; ``"exact"``:
        every label assignment.  None: no p-values.
    seed : int, default 0
        Seeds the redraws.
    max_null_work : int, optional
        The budget of the redraws' audits (None: the arithmetic's
        :data:`huc_ref.significance.MAX_NULL_WORK`).
    engine : {"exact", "fast"}, optional
        Deprecated: ``arithmetic="exact"`` or ``"float64"``.
    rational : {"fraction", "gmpy2"}, optional
        Deprecated: ``accelerator``.

    Returns
    -------
    AuditResult
        Every candidate row with its sup and witness, UC and HUC, and ``significance`` where
        ``null_draws`` is given; ``result.arithmetic`` names its numbers.

    Raises
    ------
    HUCError
        For an unknown ``arithmetic`` or ``accelerator``, an option that does not apply to the
        arithmetic, a ``dist`` or utilities the audit cannot take, ``null_draws`` on a
        distribution that is not a labelled sample, or redraws costing more than
        ``max_null_work``; and what the chosen arithmetic refuses (:func:`huc_ref.audit.audit`).

    Examples
    --------
    Appendix D.1 (cancellation): ``UC = 0`` while ``HUC = 1/4``, in either arithmetic.

    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> exact, fast = (audit(d, {"u": Table(t, [-1, 1, 1, 1])}, arithmetic=a) for a in AUDIT_ARITHMETICS)
    >>> exact.uc.sup, exact.huc.sup, exact.huc.node, fast.huc.sup, fast.huc.node, fast.arithmetic
    (Fraction(0, 1), Fraction(1, 4), 'v0', 0.25, 'v0', 'float64')
    """
    arithmetic = audit_arithmetic(arithmetic, engine)
    accelerator = audit_accelerator(arithmetic, accelerator, rational)
    max_digits = check_limits(arithmetic, max_digits, null_draws, max_null_work)
    if null_draws is not None:
        null_draws, seed = check_null(null_draws, seed)
        check_sample(check_distribution(dist))
        check_utilities(dist.tree, dist.n, utilities)
        check_null_work(null_draws, dist.n, dist.tree.K, len(utilities), candidate_rows(utilities, len(dist.subgroups)),
                        engine=_BACKEND[arithmetic], max_work=max_null_work)
    if arithmetic == "float64":
        result = fast_audit(check_distribution(dist), utilities, accelerator=accelerator)
    else:
        result = exact_audit(dist, utilities, rational=accelerator, max_digits=max_digits)
    if null_draws is None:
        return result
    return _with_p_values(dist, utilities, result, null_draws, seed, accelerator, max_digits, max_null_work)


def audit_arrays(y_true, y_prob, tree, utilities: Mapping[str, Utility], *, arithmetic: str | None = None,
                 subgroups=None, sample_weight=None, labels=None, renormalize: bool = False, smooth=None,
                 accelerator: str | None = None, max_digits: int | None = None, null_draws: int | str | None = None,
                 seed: int = 0, max_null_work: int | None = None, engine: str | None = None) -> AuditResult:
    """UC and HUC of a labelled sample given as arrays (a classifier's ``predict_proba`` and the
    labels, as :func:`huc_ref.fast.audit` takes them; Sec. 2.1's empirical distribution), in the
    numbers ``arithmetic``, with the same checks and messages in both.

    ``arithmetic="float64"`` (the default): :func:`huc_ref.fast.audit`.  ``"exact"``: each float's
    exact binary value (:meth:`FiniteDistribution.from_floats`), audited exactly
    (:func:`audit`); ``null_draws="exact"`` enumerates the label assignments on those exact values
    in either arithmetic.  Each row must sum to 1 within :data:`huc_ref.fast.ROW_SUM_TOLERANCE`,
    unless ``renormalize=True``: then it stands for itself divided by its sum.  ``smooth=kappa``
    mixes each row, so divided, with the uniform law (K.1's ``kappa_init``: ``(1 - kappa) p +
    kappa / K``, in float64 or exactly); without it, a zero entry is taken in float64 except at its
    row's own label (A.2 assumes ``p_y > 0``; F.4 reads a row's means on its label's path only),
    and refused by exact arithmetic, whose predictions lie in the open simplex (A.2).  The other
    arguments are :func:`audit`'s and :func:`huc_ref.fast.audit`'s.

    Parameters
    ----------
    y_true : array-like of n labels
        Label names, or label ids in the tree's order.
    y_prob : array-like, n x K
        Predictions, one row per sample.
    tree : LabelTree
        The label tree ``T``.
    utilities : dict of str to Utility
        The utilities by name, each built on ``tree``.
    arithmetic : {"exact", "float64"}, default "float64"
        The audit's numbers (:func:`audit_arithmetic`).
    subgroups : mapping of str to n values in [-1, 1], optional
        The subgroup family (:func:`huc_ref.fast.audit.subgroup_columns`); None: the whole
        population.
    sample_weight : array-like of n weights, optional
        The rows' weights (None: equal).
    labels : sequence of str, optional
        The label of each of ``y_prob``'s columns, in order (:meth:`LabelTree.label_columns`).
    renormalize : bool, default False
        Take each row divided by its sum.
    smooth : number, optional
        K.1's ``kappa_init``, in (0, 1).
    accelerator, max_digits, null_draws, seed, max_null_work
        As :func:`audit`'s.
    engine : {"exact", "fast"}, optional
        Deprecated: ``arithmetic``.

    Returns
    -------
    AuditResult
        The audit in ``arithmetic``'s numbers.

    Raises
    ------
    HUCError
        Naming the argument and the row for input the audit cannot take, with the argument that
        mends it (``renormalize``, ``smooth``, ``arithmetic``).

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> P, y = [[0.25] * 4] * 8, [0, 0, 2, 2, 2, 3, 3, 3]  # App. D.1 as a sample
    >>> [audit_arrays(y, P, t, {"u": Table(t, [-1, 1, 1, 1])}, arithmetic=a).huc.sup for a in AUDIT_ARITHMETICS]
    [Fraction(1, 4), 0.25]
    """
    arithmetic = audit_arithmetic(arithmetic, engine, default="float64")
    accelerator = audit_accelerator(arithmetic, accelerator)
    check_limits(arithmetic, max_digits, null_draws, max_null_work)
    kappa = None if smooth is None else check_smoothing(smooth)
    options = dict(subgroups=subgroups, sample_weight=sample_weight, accelerator=accelerator, null_draws=null_draws,
                   seed=seed, max_null_work=max_null_work)
    exact_values = arithmetic == "exact" or one_of(null_draws, ("exact",))
    if not exact_values and kappa is None:  # (the rows read once, by the float64 audit)
        return sample_audit(y_true, y_prob, check_tree(tree), utilities, labels=labels, renormalize=renormalize,
                            **options)
    if not isinstance(renormalize, bool):
        raise HUCError(f"renormalize: expected True or False, got {given(renormalize, 40)}", kind="option")
    P, sums = probability_rows(check_tree(tree).label_columns(y_prob, labels), tree.K, "y_prob",
                               None if renormalize else ROW_SUM_TOLERANCE)
    if not exact_values:  # K.1's smoothing in float64, each row divided by its sum first
        k = float(kappa)
        P = (1 - k) * (P / sums[:, None]) + k / tree.K
        return sample_audit(y_true, P, tree, utilities, labels=tree.labels, renormalize=True, **options)
    if kappa is None and not P.all():
        check_label_mass(tree, P, label_ids(y_true, tree, len(P)), "y_prob", SMOOTH_REMEDY)  # (no remedy but smooth)
        i, j = (int(k) for k in np.argwhere(P == 0)[0])
        who = "exact arithmetic" if arithmetic == "exact" else "null_draws='exact' (an exact enumeration)"
        mends = ", or arithmetic='float64' (it reads a row's means only on its label's path)" \
            if arithmetic == "exact" and not one_of(null_draws, ("exact",)) else ""
        raise HUCError(f"y_prob[{i}]: entry {j} is 0, and {who} takes predictions in the open simplex (p_y > 0, "
                       f"A.2); {SMOOTH_REMEDY}{mends}", kind="nonpositive")
    groups = None if subgroups is None else subgroup_columns(subgroups, len(P))  # (as the float64 audit reads them)
    dist = FiniteDistribution.from_floats(tree, y_true, P, subgroups=groups, sample_weight=sample_weight,
                                          labels=tree.labels, smooth=kappa)
    return audit(dist, utilities, arithmetic=arithmetic, accelerator=accelerator, max_digits=max_digits,
                 null_draws=null_draws, seed=seed, max_null_work=max_null_work)


def _with_p_values(dist, utilities, result: AuditResult, null_draws, seed, accelerator, max_digits,
                   max_null_work) -> AuditResult:
    """``result`` with its p-values under the null (:mod:`huc_ref.significance`), each draw
    audited in the arithmetic of ``result`` (computed by ``accelerator``): float64 reuses the
    label-free part (:class:`huc_ref.fast.significance.NullAudit`), exact arithmetic audits the
    relabelled atoms."""
    if result.arithmetic == "float64":
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
        return [c.sup for c in exact_audit(relabelled, utilities, rational=accelerator,
                                           max_digits=max_digits).candidates]
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
    """``new``, the arithmetic ``old`` spelled, after a :class:`~huc_ref.errors.HUCDeprecationWarning`
    that names it (pointing at the caller of the public function)."""
    deprecated(old, f"arithmetic={new!r}", stacklevel=5)
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
