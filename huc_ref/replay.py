"""A boosting run's updates as rules, replayed on other atoms (K.1), for runs of either backend.

K.1: "Validation selects the returned update prefix."  Each update is the rule "atoms of
subgroup c whose score for u lies in [lo, hi] move by ``alpha h(x)``", with ``h`` computed
at each atom's own current prediction; on the run's own atoms this reproduces the run.
Replay is float64 (:func:`huc_ref.fast.boost.replay`): a diagnostic, not a certificate.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .distribution import FiniteDistribution
from .errors import HUCError, given
from .fast.audit import audit_distribution, subgroup_weights
from .fast.boost import check_replay, replay
from .fast.numbers import floats
from .fast.sample import Sample, audit_sample
from .results import BoostResult
from .significance import tie_tolerance

__all__ = ["replay", "trajectory", "select_prefix", "prefix_predictions"]


def trajectory(result: BoostResult, dist: FiniteDistribution | Sample, utilities: dict) -> list[dict]:
    """UC, HUC and log loss after 0, 1, ... of a run's updates, replayed as rules on ``dist``'s
    atoms: a distribution's, or a :class:`huc_ref.fast.sample.Sample`'s (float64 arrays, no
    exact number built; K.1's prefix selection).

    >>> from huc_ref import LabelTree, Table, boost
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> u = {"u": Table(t, [-1, 1, 1, 1])}
    >>> path = trajectory(boost(d, u, epsilon="1/10"), d, u)
    >>> path[0]["uc"], path[0]["huc"], path[-1]["huc"] <= 0.1
    (0.0, 0.25, True)
    """
    check_replay(result, dist, utilities)
    if isinstance(dist, Sample):  # float64 arrays: no exact number built
        w, W, audit = dist.w, dist.weights, audit_sample
        at_label = (np.arange(dist.n), dist.y)

        def log_likelihoods(P):  # each atom's label law is a point mass: one log an atom
            return np.log(P[at_label])
    else:
        E = floats([a.label_law(dist.tree.K) for a in dist.atoms], "atoms[{}].eta[{}]")
        w = floats([[a.weight] for a in dist.atoms], "atoms[{}].weight{}")[:, 0]
        W, audit = subgroup_weights(dist), audit_distribution  # (once: products of Fractions)

        def log_likelihoods(P):  # sum_y eta_y log p_y, 0 log 0 = 0
            return (E * np.where(E > 0, np.log(P), 0.0)).sum(axis=1)
    out = []
    for _, P in replay(result, dist, utilities):
        res = audit(dist, utilities, predictions=P, weights=W)
        with np.errstate(divide="ignore"):
            loss = float(-(w * log_likelihoods(P)).sum())
        out.append({"uc": res.uc.sup, "huc": res.huc.sup, "log_loss": loss})
    return out


def select_prefix(result: BoostResult, validation: FiniteDistribution | Sample, utilities: dict) -> tuple[int, list]:
    """K.1: replay the run's updates on validation atoms (a distribution's or a
    :class:`huc_ref.fast.sample.Sample`'s) and return the prefix length with the smallest
    validation error (HUC for HUC-Boost, UC for UC-Boost; the first minimum, errors within
    float64's rounding of it counted as equal: :func:`huc_ref.significance.tie_tolerance`), with
    the errors after 0, 1, ... updates.

    >>> from huc_ref import LabelTree, Table, boost
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> u = {"u": Table(t, [-1, 1, 1, 1])}
    >>> best, errors = select_prefix(boost(d, u, epsilon="1/10"), d, u)
    >>> best == len(errors) - 1, errors[0]
    (True, 0.25)
    """
    metric = "uc" if result.method == "uc" else "huc"
    errors = [point[metric] for point in trajectory(result, validation, utilities)]
    # the first minimum: the replay and its audits are float64, so two prefixes whose errors are equal in
    # exact arithmetic (an update that moves no validation witness) may round either way; within the rounding
    # of a sum of n terms (significance.tie_tolerance) they are taken as equal and the shorter prefix is kept
    # (before: float noise of 1e-16 in a step chose between prefixes 4 and 5 of a decision tree's run)
    floor = min(errors) + tie_tolerance(validation.n, validation.tree.K)
    best = next(t for t, e in enumerate(errors) if e <= floor)
    return best, errors


def prefix_predictions(result: BoostResult, dist: FiniteDistribution | Sample, utilities: dict,
                       updates: int) -> np.ndarray:
    """The predictions of ``dist``'s atoms (a distribution's or a :class:`huc_ref.fast.sample.Sample`'s)
    after the run's first ``updates`` updates (K.1: the validation-chosen prefix applied to test atoms).

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
