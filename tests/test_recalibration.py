"""Two-stage methods (H.2, H.6, K.1): fitting lowers calibration log loss; replaying a run's
updates reproduces it; validation picks a prefix."""

import random
from fractions import Fraction

import numpy as np
import pytest

from huc_ref import FiniteDistribution, Table, Top1AtDepth, audit
from huc_ref.errors import HUCError
from huc_ref.recalibration import (
    GAP,
    KAPPA_INIT,
    L2_GRID,
    RecalibrationWarning,
    _data,
    _features,
    _objective,
    fit_recalibrator,
    fit_scaling,
    log_loss,
    recalibrate,
    select_prefix,
    two_stage,
)
from tests.shapes import random_tree, wide_softmax
from tests.strategies import digits_split

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


# --- against independent optima, on the data where Newton without safeguards diverged (#13) ---

@pytest.fixture(scope="module")
def digits_predictions():
    """Split 0 of examples/real_data.py: calibration and test predictions of LR and GNB."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    X, y, parts = digits_split(0)
    train, cal, rest = parts["train"], parts["cal"], np.concatenate([parts["val"], parts["test"]])
    out = {}
    for name, model in (("LR", LogisticRegression(max_iter=3000)), ("GNB", GaussianNB())):
        model.fit(X[train], y[train])
        out[name] = (model.predict_proba(X[cal]), np.eye(10)[y[cal]], model.predict_proba(X[rest]))
    return out


def objective(X, Y, w, W, b, l2, theta):
    return log_loss(X, Y, w, W, b) + l2 / 2 * float(np.sum(np.square(theta)))


@pytest.mark.parametrize("name", ["LR", "GNB"])
def test_temperature_reaches_its_optimum_on_digits(digits_predictions, name):
    """Against a brute-force search over beta = 1/T (a log grid, then a fine grid around its best):
    the objective agrees to 1e-6 relative, and no recalibrated probability is zero."""
    P, Y, new = digits_predictions[name]
    rec = fit_scaling(P, Y, kind="temperature", l2=1e-4)
    X, w = np.log((1 - KAPPA_INIT) * P + KAPPA_INIT / 10), np.full(len(P), 1 / len(P))

    def f(beta):
        return objective(X, Y, w, beta * np.eye(10), np.zeros(10), 1e-4, [beta])
    coarse = np.geomspace(1e-3, 20, 4001)
    b0 = coarse[np.argmin([f(b) for b in coarse])]
    fine = np.linspace(b0 * 0.995, b0 * 1.005, 4001)
    brute = min(f(b) for b in fine)
    assert rec.report.converged and not rec.report.at_bound
    assert rec.report.objective == pytest.approx(brute, rel=1e-6)
    assert rec.report.objective <= brute * (1 + 1e-9)
    assert (rec(new) > 0).all() and (rec(P) > 0).all()
    assert 0.05 < rec.temperature < 20


@pytest.mark.parametrize("name", ["LR", "GNB"])
def test_dirichlet_matches_scikit_learn_multinomial_regression(digits_predictions, name):
    """Dirichlet scaling is L2-regularised multinomial logistic regression on the features
    log f_base(p) (Table 3, H.6): scikit-learn's lbfgs fit of the same objective (the bias as a
    penalised constant feature; C = 1 / (n lambda)) reaches the same objective to 1e-6."""
    from sklearn.linear_model import LogisticRegression
    P, Y, new = digits_predictions[name]
    lam = 1e-2
    rec = fit_scaling(P, Y, kind="dirichlet", l2=lam)
    X, w = np.log((1 - KAPPA_INIT) * P + KAPPA_INIT / 10), np.full(len(P), 1 / len(P))
    ref = LogisticRegression(C=1 / (len(P) * lam), fit_intercept=False, tol=1e-12, max_iter=100000)
    ref.fit(np.hstack([X, np.ones((len(X), 1))]), Y.argmax(axis=1))
    W, b = ref.coef_[:, :10], ref.coef_[:, 10]
    theirs = objective(X, Y, w, W, b, lam, ref.coef_)
    ours = objective(X, Y, w, rec.W, rec.b, lam, np.concatenate([rec.W.ravel(), rec.b]))
    assert rec.report.converged and ours == pytest.approx(rec.report.objective, rel=1e-12)
    assert ours == pytest.approx(theirs, rel=1e-6) and ours <= theirs * (1 + 1e-7)
    assert (rec(new) > 0).all()


@pytest.mark.parametrize("name", ["LR", "GNB"])
def test_vector_scaling_matches_a_derivative_free_optimiser(digits_predictions, name):
    """Against scipy's Powell method on the same objective (no gradient used: independent of the
    analytic gradient L-BFGS-B is given), started from the identity."""
    from scipy.optimize import minimize
    P, Y, new = digits_predictions[name]
    lam = 1e-3
    rec = fit_scaling(P, Y, kind="vector", l2=lam)
    X, w = np.log((1 - KAPPA_INIT) * P + KAPPA_INIT / 10), np.full(len(P), 1 / len(P))

    def f(theta):
        return objective(X, Y, w, np.diag(theta[:10]), theta[10:], lam, theta)
    ref = minimize(f, np.concatenate([np.ones(10), np.zeros(10)]), method="Powell",
                   options={"xtol": 1e-10, "ftol": 1e-14, "maxiter": 200000, "maxfev": 2000000})
    assert rec.report.converged
    assert rec.report.objective == pytest.approx(ref.fun, rel=1e-6) and rec.report.objective <= ref.fun * (1 + 1e-7)
    assert (rec(new) > 0).all()


def test_validation_chooses_lambda_from_the_grid(digits_predictions):
    """K.1: "Validation data select regularization": the chosen lambda is the grid's best by
    validation log loss among those tried (a brute-force pass over the same grid)."""
    P, Y, new = digits_predictions["LR"]
    Pv, Yv = P[:180], Y[:180]
    rec = fit_scaling(P[180:], Y[180:], kind="vector", validation=(Pv, Yv))
    Xv = np.log((1 - KAPPA_INIT) * Pv + KAPPA_INIT / 10)
    losses = {}
    for lam in L2_GRID:
        r = fit_scaling(P[180:], Y[180:], kind="vector", l2=lam)
        losses[lam] = log_loss(Xv, Yv, np.full(180, 1 / 180), r.W, r.b)
    assert rec.report.l2 in L2_GRID
    tried = [lam for lam in sorted(L2_GRID, reverse=True) if lam >= rec.report.l2]
    assert losses[rec.report.l2] == pytest.approx(min(losses[lam] for lam in tried), rel=1e-5)
    assert rec.report.validation_log_loss == pytest.approx(losses[rec.report.l2], rel=1e-5)


def gradient(diagonal, X, Y, w, l2, W, b):
    """The objective's gradient written from its definition with scipy's softmax (a second
    implementation: d/dS of sum_i w_i (logsumexp S_i - <Y_i, S_i>) is w_i (|Y_i| q_i - Y_i))."""
    from scipy.special import softmax
    G = w[:, None] * (softmax(X @ W.T + b, axis=1) * Y.sum(axis=1, keepdims=True) - Y)
    gW = G.T @ X + l2 * W
    return np.concatenate([np.diag(gW) if diagonal else gW.ravel(), G.sum(axis=0) + l2 * b])


@pytest.mark.parametrize("diagonal", [True, False])
def test_the_objective_its_gradient_and_hessian_products_against_differences(diagonal):
    """``_objective``'s value and ``log_loss`` are K.1's ``L_cal`` (from scipy's log_softmax)
    plus the ridge; its gradient matches central
    differences of the value, and its Hessian products central differences of the gradient,
    at a random point, on rows with entries near 1e-296 and soft targets whose sums are not 1
    (``|Y_i|`` scales row i's terms)."""
    P, Y = wide_softmax(40, 6, 0)
    Y = Y * np.linspace(0.5, 2.0, 40)[:, None] + 0.01
    X, w, l2 = _features(P, KAPPA_INIT), np.random.default_rng(1).random(40), 1e-3
    fg, hessp = _objective(diagonal, X, Y, w, l2)
    rng = np.random.default_rng(2)
    theta = rng.normal(size=12 if diagonal else 42) * 0.1
    W, b = (np.diag(theta[:6]), theta[6:]) if diagonal else (theta[:36].reshape(6, 6), theta[36:])
    value, grad = fg(theta)
    from scipy.special import log_softmax
    definition = -float(w @ (Y * log_softmax(X @ W.T + b, axis=1)).sum(axis=1))  # K.1's L_cal
    assert log_loss(X, Y, w, W, b) == pytest.approx(definition, rel=1e-13)
    assert value == pytest.approx(definition + l2 / 2 * float(theta @ theta), rel=1e-13)
    h = 1e-6
    for _ in range(3):
        v = rng.normal(size=theta.size)
        slope = (fg(theta + h * v)[0] - fg(theta - h * v)[0]) / (2 * h)
        assert float(grad @ v) == pytest.approx(slope, rel=1e-6, abs=1e-9)
        curve = (fg(theta + h * v)[1] - fg(theta - h * v)[1]) / (2 * h)
        np.testing.assert_allclose(hessp(theta, v), curve, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("kind, K, n", [("dirichlet", 100, 300), ("vector", 100, 300), ("dirichlet", 30, 200)])
def test_a_wide_softmax_near_1e_300_fits_to_a_certified_optimum(kind, K, n):
    """A 100-class (and 30-class) softmax whose tails lie near 1e-296: the fit converges
    (L-BFGS-B took 5,230 iterations and 263 s on 1,000 such rows), its objective is within GAP of
    the minimum by strong convexity (``||g||^2 / (2 lambda)``, with the gradient computed
    independently), and it beats the identity map it starts from."""
    P, Y = wide_softmax(n, K, K)
    rec = fit_scaling(P, Y, kind=kind, l2=1e-4)
    X, w = _features(P, KAPPA_INIT), np.full(n, 1 / n)
    g = gradient(kind == "vector", X, Y, w, 1e-4, rec.W, rec.b)
    assert rec.report.converged and float(g @ g) / (2e-4) <= GAP
    assert rec.report.gap == pytest.approx(float(g @ g) / 2e-4, rel=1e-3, abs=1e-15)
    identity = log_loss(X, Y, w, np.eye(K), np.zeros(K)) + 1e-4 / 2 * K
    assert rec.report.objective < identity
    out = rec(P)
    assert np.isfinite(out).all() and (out > 0).all() and np.allclose(out.sum(axis=1), 1, rtol=0, atol=1e-12)


def test_non_convergence_warns():
    with pytest.warns(RecalibrationWarning, match="^dirichlet scaling: the optimiser stopped without converging"):
        fit_recalibrator(CAL, "dirichlet", max_iterations=2)


@pytest.mark.parametrize("args, message", [
    (([[0.5, 0.5]], [[1, 0, 0]]), r"^Y: shape \(1, 3\) does not match the predictions' \(1, 2\)$"),
    (([0.5, 0.5], [1, 0]), r"^P: expected an n x K array of predictions with n >= 1 and K >= 2, got shape \(2,\)$"),
    (([[np.nan, 1]], [[1, 0]]), r"^P, Y: entries must be finite and nonnegative$"),
    (([[0.5, 0.5]], [[1, 0]], [0]), r"^w: expected 1 finite nonnegative weights, not all zero$"),
])
def test_bad_arrays(args, message):
    with pytest.raises(HUCError, match=message):
        fit_scaling(*args)


def test_temperature_of_a_vector_recalibrator_is_refused():
    with pytest.raises(HUCError, match="^temperature: a vector recalibrator has no single temperature$"):
        _ = fit_recalibrator(CAL, "vector").temperature
