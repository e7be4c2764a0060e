"""A boosting run's updates as rules, replayed on other atoms (K.1), for runs of either backend.

K.1: "Validation selects the returned update prefix."  Each update is the rule "atoms of
subgroup c whose score for u lies in [lo, hi] move by ``alpha h(x)``", with ``h`` computed
at each atom's own current prediction; on the run's own atoms this reproduces the run.
Replay is float64 (:func:`huc_ref.fast.boost.replay`): a diagnostic, not a certificate.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from .distribution import FiniteDistribution
from .errors import HUCError, given
from .fast.audit import audit_distribution, subgroup_weights
from .fast.boost import check_replay, replay
from .fast.numbers import floats
from .fast.sample import Sample, audit_sample
from .results import BoostResult
from .significance import tie_tolerance

__all__ = ["replay", "trajectory", "select_prefix", "prefix_predictions", "held_out_rows",
           "first_minimum"]


def _atoms(dist: FiniteDistribution | Sample):
    """``(w, W, audit, expected)`` of the atoms a run is replayed on: their weights, their
    subgroup weights ``w_i c(x_i)``, the audit that takes them, and ``X -> sum_y eta_y X_y`` per
    atom for an ``n x K`` array ``X`` (a sample atom's ``X_{y_i}``; ``0 X_y = 0`` where
    ``eta_y = 0``, so that ``expected(log P)`` is each atom's log-likelihood)."""
    if isinstance(dist, Sample):  # float64 arrays: no exact number built
        at_label = (np.arange(dist.n), dist.y)

        def expected(X):  # each atom's label law is a point mass: one entry an atom
            return X[at_label]
        return dist.w, dist.weights, audit_sample, expected
    E = floats([a.label_law(dist.tree.K) for a in dist.atoms], "atoms[{}].eta[{}]")
    w = floats([[a.weight] for a in dist.atoms], "atoms[{}].weight{}")[:, 0]

    def expected(X):  # sum_y eta_y X_y, 0 X_y = 0
        return (E * np.where(E > 0, X, 0.0)).sum(axis=1)
    return w, subgroup_weights(dist), audit_distribution, expected  # (once: products of Fractions)


def trajectory(result: BoostResult, dist: FiniteDistribution | Sample, utilities: dict) -> list[dict]:
    """UC, HUC and log loss after 0, 1, ... of a run's updates, replayed as rules on other atoms (K.1).

    Parameters
    ----------
    result : BoostResult
        The boosting run, of either backend.
    dist : FiniteDistribution or huc_ref.fast.sample.Sample
        The atoms the run is replayed on: a distribution's, or a ``Sample``'s (float64 arrays,
        no exact number built).
    utilities : dict of str to Utility
        The run's utilities.

    Returns
    -------
    list of dict
        One ``{"uc", "huc", "log_loss"}`` (floats) per prefix, from 0 updates to all of them.

    Raises
    ------
    HUCError
        Where the run, the atoms or the utilities do not go together
        (:func:`huc_ref.fast.boost.check_replay`).

    Examples
    --------
    >>> from huc_ref import LabelTree, Table, boost
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> u = {"u": Table(t, [-1, 1, 1, 1])}
    >>> path = trajectory(boost(d, u, epsilon="1/10"), d, u)
    >>> path[0]["uc"], path[0]["huc"], path[-1]["huc"] <= 0.1
    (0.0, 0.25, True)
    """
    check_replay(result, dist, utilities)
    w, W, audit, expected = _atoms(dist)
    out = []
    for _, P in replay(result, dist, utilities):
        res = audit(dist, utilities, predictions=P, weights=W)
        with np.errstate(divide="ignore"):
            loss = float(-(w * expected(np.log(P))).sum())
        out.append({"uc": res.uc.sup, "huc": res.huc.sup, "log_loss": loss})
    return out


def select_prefix(result: BoostResult, validation: FiniteDistribution | Sample, utilities: dict, *,
                  guard: float | None = None, progress=None) -> tuple[int, list]:
    """K.1's choice of the update prefix: the one with the smallest validation error, replayed on validation atoms.

    K.1: "Validation selects the returned update prefix."  The error is HUC for HUC-Boost and
    UC for UC-Boost; the first minimum is taken, errors within float64's rounding of it counted
    as equal (:func:`first_minimum`, :func:`huc_ref.significance.tie_tolerance`).

    Parameters
    ----------
    result : BoostResult
        The boosting run, of either backend.
    validation : FiniteDistribution or huc_ref.fast.sample.Sample
        The validation atoms: a distribution's, or a ``Sample``'s (float64 arrays).
    utilities : dict of str to Utility
        The run's utilities.
    guard : float, optional
        A number ``z >= 0`` of standard errors: a prefix of ``t >= 1`` updates is then a
        candidate only where it lowers the validation log loss of the initial predictions by
        ``z`` standard errors (Notes).  This is a condition the paper does not state; None
        (the default) is K.1's rule alone.
    progress : callable, optional
        ``progress(t, total)`` is called after each prefix is audited.

    Returns
    -------
    best : int
        The prefix length chosen (0 keeps no update).
    errors : list of float
        The validation errors after 0, 1, ... updates.

    Raises
    ------
    HUCError
        As :func:`huc_ref.fast.boost.check_replay`, or of kind ``option`` for a ``guard`` that
        is not None or a finite number at least 0.

    Notes
    -----
    The guard's condition is

        ``mean(d) + z sqrt(s_sample^2 + s_null^2) <= 0``,

    for each atom's log-loss change ``d_i = sum_y eta_y (log p_y - log p'_y)`` (``p'``: after
    the prefix), ``mean(d) = sum_i w_i d_i``,
    ``s_sample^2 = n / (n - 1) sum_i w_i^2 (d_i - mean d)^2`` (the sample's standard error;
    infinite for one atom) and ``s_null^2 = sum_i w_i^2 Var_{y ~ p_i}(log p_{i,y} - log p'_{i,y})``,
    the variance the change would have were each atom's label drawn from its initial
    prediction (the null of calibration, as :mod:`huc_ref.significance` draws it).  A small
    validation set rarely holds the labels on which a prefix has driven a prediction far below
    the initial one, and then shows a gain the test data do not: the null term charges each
    atom for those labels as its initial prediction weighs them.  The log loss is the proper
    score every update lowers on the calibration data (Thm 3.5); a prefix whose gain in it is
    not visible on the validation data is not kept (``bench/holdout.py``: 53 calibration rows of
    6 classes, where the smallest validation HUC alone picks prefixes that raise the test log
    loss).

    Examples
    --------
    >>> from huc_ref import LabelTree, Table, boost
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> u = {"u": Table(t, [-1, 1, 1, 1])}
    >>> best, errors = select_prefix(boost(d, u, epsilon="1/10"), d, u)
    >>> best == len(errors) - 1, errors[0]
    (True, 0.25)
    >>> select_prefix(boost(d, u, epsilon="1/10"), d, u, guard=2.0)[0]  # one atom: no standard error
    0
    """
    dist = validation
    check_replay(result, dist, utilities)
    if guard is not None and (isinstance(guard, bool) or not isinstance(guard, Real) or not 0 <= guard < math.inf):
        raise HUCError(f"guard: expected None or a finite number >= 0 of standard errors, got {given(guard, 40)}",
                       kind="option")
    metric = "uc" if result.method == "uc" else "huc"
    w, W, audit, expected = _atoms(dist)
    errors, admissible, first = [], [], None
    total = len(result.steps) + 1
    for t, P in replay(result, dist, utilities):
        errors.append(getattr(audit(dist, utilities, predictions=P, weights=W), metric).sup)
        if guard is None or t == 0:
            admissible.append(True)
            first = None if guard is None else (P, np.log(P))
        else:
            P0, log_p0 = first
            L = log_p0 - np.log(P)  # each atom's log-loss change, were its label y
            d = expected(L)
            mean = float(w @ d)
            sample = dist.n / (dist.n - 1) * float((w * w) @ ((d - mean) ** 2)) if dist.n > 1 else math.inf
            null = float((w * w) @ np.maximum((P0 * L * L).sum(axis=1) - (P0 * L).sum(axis=1) ** 2, 0.0))
            admissible.append(mean + guard * math.sqrt(sample + null) <= 0)
        if progress is not None:
            progress(t + 1, total)
    return first_minimum(errors, admissible, tie_tolerance(dist.n, dist.tree.K)), errors


def first_minimum(errors, admissible, tolerance: float) -> int:
    """The first prefix of smallest error among the admissible ones (K.1's selection, :func:`select_prefix`).

    Parameters
    ----------
    errors : sequence of float
        The errors after 0, 1, ... updates.
    admissible : sequence of bool
        Which prefixes are candidates (at least one).
    tolerance : float
        Errors within this of the smallest count as equal to it.

    Returns
    -------
    int
        The first admissible prefix whose error is at most the smallest plus ``tolerance``.

    Notes
    -----
    The replay and its audits are float64, so two prefixes whose errors are equal in exact
    arithmetic (an update that moves no validation witness) may round either way; within the
    rounding of a sum of n terms (:func:`huc_ref.significance.tie_tolerance`) the shorter
    prefix is kept.

    Examples
    --------
    >>> first_minimum([0.3, 0.2, 0.2 - 2.0**-55, 0.25], [True] * 4, 1e-12)  # a rounding: the first
    1
    >>> first_minimum([0.3, 0.2, 0.1, 0.25], [True, False, False, True], 1e-12)  # the admissible only
    3
    """
    floor = min(e for e, ok in zip(errors, admissible) if ok) + tolerance
    return next(t for t, (e, ok) in enumerate(zip(errors, admissible)) if ok and e <= floor)


def held_out_rows(y, fraction: float, seed: int = 0) -> np.ndarray:
    """The rows of a calibration sample held out as K.1's validation data, stratified by label.

    K.1: "recalibration uses separate calibration data. Validation data select regularization
    and the returned corrected predictor."

    Parameters
    ----------
    y : array-like of shape (n,)
        The rows' labels.
    fraction : float
        The share held out, in (0, 1).  About ``fraction`` of each label's rows are held out
        (``n_c * fraction`` rounded so that the total is ``round(n * fraction)``, at least 1,
        largest remainders first, ties to the label listed first), but never a label's last
        row: a label with one row stays in the fitting part.
    seed : int, default 0
        The seed of ``numpy.random.default_rng`` drawing the rows within a label, so the split
        is a function of ``(y, fraction, seed)``.

    Returns
    -------
    numpy.ndarray of int
        The held-out rows' indices, sorted.

    Raises
    ------
    HUCError
        Of kind ``option`` for a ``fraction`` outside (0, 1); of kind ``length`` where no label
        has two rows, naming the remedies (validation rows of their own, or no validation).

    Examples
    --------
    >>> held_out_rows([0, 0, 0, 1, 1, 1, 1, 2], 0.5).tolist()  # two of label 0, two of 1, none of 2
    [0, 2, 5, 6]
    >>> held_out_rows([0, 1, 2], 0.3)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: validation: no label has two rows among the 3, so no validation part can be ...
    """
    y = np.asarray(y)
    if isinstance(fraction, bool) or not isinstance(fraction, Real) or not 0 < fraction < 1:
        raise HUCError(f"validation_fraction: expected a number in (0, 1), got {given(fraction, 40)}", kind="option")
    _, inverse, counts = np.unique(y, return_inverse=True, return_counts=True)
    room = counts - 1  # (a label's last row stays in the fitting part)
    if not room.sum():
        raise HUCError(f"validation: no label has two rows among the {len(y)}, so no validation part can be held "
                       "out to choose the update prefix (K.1); give labelled validation rows of their own "
                       "(validation=(y_prob, y_true); huc fit --val-predictions, --val-labels), or keep every "
                       "update (validation=False; huc fit --no-validation)", kind="length")
    want = min(max(1, round(len(y) * float(fraction))), int(room.sum()))
    quota = counts * float(fraction)
    take = np.minimum(np.floor(quota).astype(int), room)
    # floor(n_c f) <= n_c - 1 and sum_c floor(n_c f) <= floor(n f) <= want: the floors never take too many;
    # the rows still wanted go one a label a round, largest remainder first, to labels with rows to spare
    order = sorted(range(len(counts)), key=lambda k: (-(quota[k] - np.floor(quota[k])), k))
    while take.sum() < want:
        for k in order:
            if take.sum() < want and take[k] < room[k]:
                take[k] += 1
    rng = np.random.default_rng(seed)
    rows = [rng.permutation(np.flatnonzero(inverse == k))[:m] for k, m in enumerate(take)]
    return np.sort(np.concatenate(rows))


def prefix_predictions(result: BoostResult, dist: FiniteDistribution | Sample, utilities: dict,
                       updates: int) -> np.ndarray:
    """The predictions of atoms after a run's first updates (K.1: the validation-chosen prefix applied to test atoms).

    Parameters
    ----------
    result : BoostResult
        The boosting run, of either backend.
    dist : FiniteDistribution or huc_ref.fast.sample.Sample
        The atoms the run is replayed on: a distribution's, or a ``Sample``'s (float64 arrays,
        no exact number built).
    utilities : dict of str to Utility
        The run's utilities.
    updates : int
        How many of the run's updates to apply, 0 to all of them.

    Returns
    -------
    numpy.ndarray of shape (n, K)
        The atoms' predictions after ``updates`` updates, in float64.

    Raises
    ------
    HUCError
        As :func:`huc_ref.fast.boost.check_replay`, or of kind ``length`` for an ``updates``
        that is not an integer from 0 to the run's length.

    Examples
    --------
    >>> from huc_ref import LabelTree, Table, boost
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> u = {"u": Table(t, [-1, 1, 1, 1])}
    >>> prefix_predictions(boost(d, u, epsilon="1/10"), d, u, 0).tolist()
    [[0.25, 0.25, 0.25, 0.25]]
    """
    check_replay(result, dist, utilities)
    if isinstance(updates, bool) or not isinstance(updates, Integral) or not 0 <= updates <= len(result.steps):
        raise HUCError(f"updates: the run has {len(result.steps)} updates, not {given(updates)}", kind="length")
    for t, P in replay(result, dist, utilities):
        if t == updates:
            return P
