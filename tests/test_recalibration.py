"""Two-stage methods (H.2, H.6, K.1): fitting lowers calibration log loss; replaying a run's
updates reproduces it; validation picks a prefix."""

import random
from fractions import Fraction

import numpy as np
import pytest

from bench.workloads import random_tree
from huc_ref import FiniteDistribution, Table, Top1AtDepth, audit
from huc_ref.errors import HUCError
from huc_ref.recalibration import _data, fit_recalibrator, recalibrate, select_prefix, two_stage

TREE = random_tree(6, random.Random(3))
US = {"top1": Top1AtDepth(TREE, 1), "table": Table(TREE, [-1, "-1/2", 0, "1/4", "3/4", 1])}


def sample(n, seed, sharpness=2.0):
    """Overconfident predictions: the truth is softmax(logits), the model softmax(2 logits)."""
    rng = np.random.default_rng(seed)
    ys, ps = [], []
    for _ in range(n):
        logits = rng.normal(size=TREE.K)
        model = np.exp(sharpness * logits) / np.exp(sharpness * logits).sum()
        truth = np.exp(logits) / np.exp(logits).sum()
        ys.append(TREE.labels[rng.choice(TREE.K, p=truth)])
        q = [Fraction(float(x)) for x in model]
        q[-1] = 1 - sum(q[:-1])
        ps.append(q)
    return FiniteDistribution.from_sample(TREE, ys, ps)


CAL, VAL = sample(150, 1), sample(150, 2)


def weighted_log_loss(dist, predict=lambda P: P):
    P, Y, w = _data(dist)
    return float(-(w * np.log((Y * predict(P)).sum(axis=1))).sum())


@pytest.mark.parametrize("kind", ["temperature", "vector", "dirichlet"])
def test_fitting_lowers_calibration_log_loss(kind):
    rec = fit_recalibrator(CAL, kind)
    assert weighted_log_loss(CAL, rec) < weighted_log_loss(CAL) - 0.05
    assert weighted_log_loss(recalibrate(CAL, rec)) == pytest.approx(weighted_log_loss(CAL, rec), abs=1e-9)


def test_temperature_is_the_one_dimensional_minimiser():
    """Against a direct grid search over beta = 1/T (an independent second method)."""
    rec = fit_recalibrator(CAL, "temperature", l2=0.0)
    P, Y, w = _data(CAL)
    X = np.log(P)

    def loss(beta):
        S = beta * X
        S -= S.max(axis=1, keepdims=True)
        Q = np.exp(S) / np.exp(S).sum(axis=1, keepdims=True)
        return -(w * np.log((Y * Q).sum(axis=1))).sum()
    grid = np.linspace(0.05, 2.0, 3901)
    best = grid[np.argmin([loss(b) for b in grid])]
    assert rec.W[0, 0] == pytest.approx(best, abs=1e-3)
    assert 0.3 < best < 0.8  # the model is twice as sharp as the truth: beta near 1/2


def test_two_stage_reaches_epsilon_and_replay_reproduces_the_run():
    rec, start, result = two_stage(CAL, US, "vector", epsilon="1/25", max_updates=300, digits=20)
    assert result.stopped == "tolerance" and result.theorem_3_5["holds"]
    # replaying the recorded rules on the run's own atoms gives back its final HUC
    best, errors = select_prefix(result, start, US)
    assert errors[0] == pytest.approx(float(audit(start, US).huc.sup), abs=1e-12)
    assert errors[-1] == pytest.approx(float(result.final["huc"]), abs=1e-9)
    assert len(errors) == len(result.updates) + 1
    best_val, val_errors = select_prefix(result, recalibrate(VAL, rec), US)
    assert val_errors[best_val] == min(val_errors)


def test_bad_kind():
    with pytest.raises(HUCError, match="^kind: expected 'temperature', 'vector' or 'dirichlet', got 'platt'$"):
        fit_recalibrator(CAL, "platt")
