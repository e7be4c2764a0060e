"""Parametric recalibration and the two-stage methods (Sec. 5.2, App. H.2, H.6, K.1, Table 3).

* temperature scaling ``softmax(log p / T)`` (one parameter),
* vector scaling ``softmax(a * log p + b)`` (``2K``),
* Dirichlet calibration ``softmax(W log p + b)`` (``K^2 + K``),

each fitted by minimising the log loss on calibration atoms plus ``lambda/2 ||theta||^2`` (H.6
eq. 188; ``lambda = 1e-4``, or chosen on validation data: K.1), after the ``kappa_init``
smoothing ``p <- (1 - kappa) p + kappa / K`` (K.1, ``kappa = 1e-10``).  Fitting is numerical
(scipy, the ``calibration`` extra: a bounded scalar search for the temperature, trust-region
Newton-CG with exact Hessian-vector products for the others, on a convex objective, with the
convergence reported); its output is then read as
exact rationals and renormalised exactly, and HUC-Boost starts from it: the two-stage methods
"Temp. -> HUC", "Vec. -> HUC", "Dir. -> HUC".  ``select_prefix`` picks the boosting
checkpoint with the smallest validation error (K.1: "Validation selects the returned update
prefix").
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from numbers import Real

import numpy as np

from .distribution import FiniteDistribution
from .engines import boost
from .errors import HUCError, given, one_of
from .fast.numbers import SMALLEST_NORMAL, probability_rows
from .fast.sample import Sample
from .replay import select_prefix  # noqa: F401 (K.1's prefix, re-exported: the two-stage methods use it)

__all__ = ["Recalibrator", "FitReport", "RecalibrationWarning", "fit_scaling", "fit_recalibrator", "log_loss",
           "recalibrate", "two_stage", "select_prefix", "prediction_rows", "check_kappa", "check_l2"]

KAPPA_INIT = 1e-10
KINDS = ("temperature", "vector", "dirichlet")
L2_GRID = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)  # lambda > 0 (H.6 eq. 162 divides by it); chosen on validation (K.1)
GTOL = 1e-10  # vector and Dirichlet fits stop once the gradient's norm is at most this (trust-ncg's test)
GAP = 1e-10  # or once the objective is provably within this of its minimum (strong convexity):
# nats of log loss, far below the 3-4 digits K.1's tables compare
MAX_LOGIT_SPREAD = 700.0  # exp(-700) ~ 1e-304 is still a normal float64: no probability underflows


class RecalibrationWarning(UserWarning):
    """The optimiser of a recalibrator (H.6's fits with K.1's settings) stopped without meeting its convergence test.

    Examples
    --------
    One iteration of vector scaling does not converge:

    >>> import warnings
    >>> P, Y = np.array([[0.9, 0.1]] * 4), np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     r = fit_scaling(P, Y, kind="vector", max_iterations=1)
    >>> [w.category.__name__ for w in caught], r.report.converged
    (['RecalibrationWarning'], False)
    """


def _softmax(s):
    """softmax of each row, with logits more than ``MAX_LOGIT_SPREAD`` below the row's largest
    raised to that floor, so every output is a positive normal float64 (a deviation from the
    plain map only where it would underflow to 0)."""
    s = s - s.max(axis=1, keepdims=True)
    e = np.exp(np.maximum(s, -MAX_LOGIT_SPREAD))
    return e / e.sum(axis=1, keepdims=True)


def prediction_rows(y_prob, K: int | None = None, where: str = "y_prob",
                    tolerance: float | None = None) -> np.ndarray:
    """Prediction rows (Sec. 2.1's ``p(x_i)``, A.2's coordinates) as a float64 array, each divided by its sum.

    Parameters
    ----------
    y_prob : array-like of shape (n, K)
        The predictions: entries finite and nonnegative, each row with a positive finite sum
        (a row with a negative entry or a NaN would make every recalibrated entry NaN, and a
        row of zeros the uniform law).
    K : int, optional
        The number of columns required; by default any.
    where : str, default "y_prob"
        The place the messages name.
    tolerance : float, optional
        How far from 1 a row's sum may be (the estimators pass
        :data:`huc_ref.fast.ROW_SUM_TOLERANCE`); by default any positive sum.  Dividing a row
        summing to 1.1 by its sum would hide a wrong input (scores, or the wrong columns), so
        the estimators refuse it, naming the row and the remedy.

    Returns
    -------
    numpy.ndarray of shape (n, K)
        The rows over their sums.

    Raises
    ------
    HUCError
        Naming the argument for another shape (or no rows), or the first bad row (an entry, or a
        sum further than ``tolerance`` from 1).

    Examples
    --------
    >>> prediction_rows([[1, 3], [0.5, 0.5]]).tolist()
    [[0.25, 0.75], [0.5, 0.5]]
    >>> prediction_rows([[0.5, 0.5], [0.5, -0.25]])
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: y_prob[1]: entries must be finite and nonnegative, with a positive sum
    >>> prediction_rows([[0.5, 0.5], [0.5, 0.625]], tolerance=1e-5)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: y_prob[1]: sums to 1.125, not 1 (within 1e-05); expected rows of probabilities ...
    """
    P, sums = probability_rows(y_prob, K, where)
    if tolerance is not None and (np.abs(sums - 1.0) > tolerance).any():
        i = int(np.argmax(np.abs(sums - 1.0) > tolerance))
        raise HUCError(f"{where}[{i}]: sums to {sums[i].item()!r}, not 1 (within {tolerance:g}); expected rows of "
                       "probabilities (a classifier's predict_proba): check that these are probabilities, and "
                       "normalise the rows first, e.g. P / P.sum(axis=1, keepdims=True)", kind="probability_sum")
    return P / sums[:, None]


def check_kappa(kappa, K: int | None = None) -> float:
    """Check K.1's smoothing weight ``kappa_init``, a number in the paper's (0, 1).

    K.1: "for a predetermined kappa_0 in (0, 1)";
    :func:`huc_ref.distribution.check_smoothing` is the exact twin.

    Parameters
    ----------
    kappa : float
        The weight (Python's or numpy's real number, not a boolean).
    K : int, optional
        The number of labels: ``kappa / K``, the least smoothed entry, must then be a normal
        float64 (below it the smoothing leaves zeros, whose logs are -inf).

    Returns
    -------
    float
        ``kappa``.

    Raises
    ------
    HUCError
        Of kind ``option`` for a ``kappa`` outside (0, 1), or too small for ``K`` (naming the
        least that works).

    Examples
    --------
    >>> check_kappa(1e-10), check_kappa(0.5)
    (1e-10, 0.5)
    >>> check_kappa(5e-324, K=3)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: kappa: 5e-324 / K is below float64's normal range (2.225e-308), so the smoothed ...
    """
    if isinstance(kappa, bool) or not isinstance(kappa, Real) or not 0 < _real(kappa) < 1:  # (numpy's floats too)
        raise HUCError(f"kappa: expected a number in (0, 1) (K.1's kappa_init), got {given(kappa, 40)}",
                       kind="option")
    kappa = float(kappa)
    if K is not None and kappa / K < SMALLEST_NORMAL:  # (else scipy returns NaN, or the zeros are refused later)
        raise HUCError(f"kappa: {kappa!r} / K is below float64's normal range ({SMALLEST_NORMAL:.4g}), so the "
                       f"smoothed entries are not all positive normal numbers; use kappa >= "
                       f"{K * SMALLEST_NORMAL * 1.001:.4g}", kind="option")  # (rounded up)
    return kappa


def check_l2(l2, where: str = "l2") -> float:
    """Check H.6's regularisation weight ``lambda``, a finite number at least 0.

    Parameters
    ----------
    l2 : float
        The weight.
    where : str, default "l2"
        The place the message names.

    Returns
    -------
    float
        ``l2``.

    Raises
    ------
    HUCError
        Of kind ``option`` for anything but a finite real number at least 0.

    Examples
    --------
    >>> check_l2(1e-4), check_l2(0)
    (0.0001, 0.0)
    """
    if isinstance(l2, bool) or not isinstance(l2, Real) or not 0 <= _real(l2) < float("inf"):
        raise HUCError(f"{where}: expected a finite number >= 0 (H.6's lambda), got {given(l2, 40)}", kind="option")
    return float(l2)


def _real(x: Real) -> float:
    """``x`` as a float (a Python float: no comparison in numpy's float32), infinity past float64's range."""
    try:
        return float(x)
    except OverflowError:
        return float("inf")


def _features(p, kappa):
    """``log((1 - kappa) p + kappa / K)``: K.1's ``f_base`` in log space."""
    if kappa:  # (0: no smoothing, as a map built by hand may have it)
        check_kappa(kappa, p.shape[1])
    p = (1 - kappa) * np.asarray(p, dtype=float) + kappa / p.shape[1]
    return np.log(p)


@dataclass(frozen=True)
class FitReport:
    """How a recalibrator's optimiser ended (K.1's ``L_cal`` plus H.6's ``lambda/2 ||theta||^2``).

    Parameters
    ----------
    objective : float
        The regularised weighted log loss at the returned parameters.
    l2 : float
        The ``lambda`` used (chosen on validation data when they were given).
    converged : bool
        The optimiser's own convergence test (for vector and Dirichlet scaling, also met where
        ``gap`` is at most ``1e-10``).
    iterations : int
        The optimiser's iterations (the temperature search's function evaluations).
    message : str
        The optimiser's message.
    at_bound : bool, default False
        Whether the temperature search ended on the edge of its interval.
    validation_log_loss : float, optional
        The validation log loss at the chosen ``lambda``, where validation data were given.
    gap : float, optional
        Vector and Dirichlet scaling: how far ``objective`` is at most above the minimum.  The
        objective is ``l2``-strongly convex, so ``f - min f <= ||grad f||^2 / (2 l2)``,
        evaluated at the returned parameters (None where ``l2 = 0``).

    Examples
    --------
    >>> P, Y = np.array([[0.9, 0.1]] * 4), np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    >>> report = fit_scaling(P, Y, kind="temperature", l2=0.0).report
    >>> report.converged, report.l2, report.at_bound, report.gap
    (True, 0.0, False, None)
    """

    objective: float
    l2: float
    converged: bool
    iterations: int
    message: str
    at_bound: bool = False
    validation_log_loss: float | None = None
    gap: float | None = None


@dataclass(frozen=True)
class Recalibrator:
    """A fitted map ``p -> softmax(W log p + b)`` (Table 3, H.6).

    Parameters
    ----------
    kind : {"temperature", "vector", "dirichlet"}
        The family: temperature scaling (``W = I/T, b = 0``), vector scaling (``W = diag(a)``)
        or Dirichlet calibration.
    W : numpy.ndarray of shape (K, K)
        The weights.
    b : numpy.ndarray of shape (K,)
        The biases.
    kappa : float
        K.1's ``kappa_init``: the smoothing ``(1 - kappa) p + kappa / K`` applied before the log
        (0: none).
    report : FitReport, optional
        How the fit ended.

    Notes
    -----
    Called on predictions (rows of ``K`` probabilities, each divided by its sum first:
    :func:`prediction_rows`, or one row), it returns the recalibrated predictions in float64,
    rows summing to 1, every entry positive: logits more than 700 below a row's largest are
    raised to that floor, so no probability underflows to 0.

    Examples
    --------
    >>> r = Recalibrator("temperature", np.eye(2) / 2, np.zeros(2), 0.0)  # T = 2
    >>> r(np.array([[0.9, 0.1]])).round(4).tolist()  # softmax(log p / 2) = (3, 1) / 4
    [[0.75, 0.25]]
    """

    kind: str
    W: np.ndarray
    b: np.ndarray
    kappa: float
    report: FitReport | None = None

    @property
    def temperature(self) -> float:
        """``T`` of temperature scaling (Table 3), ``1 / W[0, 0]``; a HUCError (kind ``state``) for another kind.

        Examples
        --------
        >>> Recalibrator("temperature", np.eye(2) / 2, np.zeros(2), 0.0).temperature
        2.0
        """
        if self.kind != "temperature":
            raise HUCError(f"temperature: a {self.kind} recalibrator has no single temperature", kind="state")
        return 1.0 / float(self.W[0, 0])

    def __call__(self, p) -> np.ndarray:
        """Recalibrated predictions (float64), rows summing to 1, every entry positive; ``p`` rows
        of ``K`` probabilities (each divided by its sum first: :func:`prediction_rows`), or one row."""
        p = np.asarray(p) if isinstance(p, (list, tuple)) else p
        if getattr(p, "ndim", None) == 1:
            p = p[None, :]
        return _softmax(_features(prediction_rows(p, self.W.shape[1]), self.kappa) @ self.W.T + self.b)


def _data(dist):
    """Predictions, soft targets (the label laws) and weights of the atoms (of a
    :class:`FiniteDistribution` or of a :class:`huc_ref.fast.sample.Sample`), as arrays."""
    if isinstance(dist, Sample):  # float64 arrays already
        return dist.P, dist.label_laws(), dist.w
    K = dist.tree.K
    P = np.array([[float(x) for x in a.p] for a in dist.atoms])
    Y = np.array([[float(x) for x in a.label_law(K)] for a in dist.atoms])
    w = np.array([float(a.weight) for a in dist.atoms])
    return P, Y, w


def log_loss(X, Y, w, W, b) -> float:
    """The weighted log loss ``-sum_i w_i sum_y Y_iy log softmax(W x_i + b)_y`` of a map (K.1's ``L_cal``).

    Parameters
    ----------
    X : numpy.ndarray of shape (n, K)
        The features (log predictions).
    Y : numpy.ndarray of shape (n, K)
        The targets, one-hot or soft.
    w : numpy.ndarray of shape (n,)
        The weights.
    W : numpy.ndarray of shape (K, K)
        The map's weights.
    b : numpy.ndarray of shape (K,)
        The map's biases.

    Returns
    -------
    float
        The loss, from the log-sum-exp of the logits: no probability is formed, so none
        underflows.

    Examples
    --------
    >>> X = np.log(np.array([[0.5, 0.5]]))
    >>> bool(log_loss(X, np.array([[1.0, 0.0]]), np.array([1.0]), np.eye(2), np.zeros(2)) == np.log(2))
    True
    """
    from scipy.special import logsumexp
    S = X @ W.T + b
    return float((w * (logsumexp(S, axis=1) * Y.sum(axis=1) - (Y * S).sum(axis=1))).sum())


def _split(diagonal, theta, K):
    """``theta`` as ``(a, b)`` (vector scaling's diagonal) or ``(W, b)`` (Dirichlet), no copy."""
    return (theta[:K], theta[K:]) if diagonal else (theta[:K * K].reshape(K, K), theta[K * K:])


def _unpack(kind, theta, K):
    if kind == "temperature":
        return theta[0] * np.eye(K), np.zeros(K)
    W, b = _split(kind == "vector", theta, K)
    return (np.diag(W) if kind == "vector" else W), b


def _objective(diagonal: bool, X, Y, w, l2: float):
    """``(fg, hessp)`` of H.6 eq. 188's objective ``L_cal(theta) + l2/2 ||theta||^2`` for vector
    scaling (``diagonal``: ``theta = (a, b)``) or Dirichlet scaling (``theta = (W, b)``, W row
    by row): ``fg(theta)`` gives the objective and its gradient, ``hessp(theta, v)`` the Hessian
    times ``v``, both exact (the loss's Hessian in the logits ``S`` is ``w_i |Y_i| (diag(q_i) -
    q_i q_i^T)`` a row, ``q_i = softmax(S_i)``), for scipy's ``trust-ncg``.

    >>> fg, hessp = _objective(True, np.log(np.array([[0.5, 0.5]])), np.array([[1.0, 0.0]]), np.ones(1), 0.0)
    >>> value, grad = fg(np.array([1.0, 1.0, 0.0, 0.0]))  # the identity map: log 2, (q - y) log p
    >>> bool(value == np.log(2)), bool(np.allclose(grad, [0.5 * np.log(2), -0.5 * np.log(2), -0.5, 0.5]))
    (True, True)
    """
    K = X.shape[1]
    ysum = Y.sum(axis=1)

    def logits(W, b):  # S = X W^T + b (vector: W = diag(a), so X * a + b)
        return X * W + b if diagonal else X @ W.T + b

    def pull(G):  # a gradient in the logits S as one in theta: the transpose of ``logits``
        return np.concatenate([(G * X).sum(axis=0) if diagonal else (G.T @ X).ravel(), G.sum(axis=0)])

    state = {}

    def fg(theta):
        """The objective and its gradient; the softmax is kept for ``hessp`` at the same point."""
        W, b = _split(diagonal, theta, K)
        S = logits(W, b)
        top = S.max(axis=1, keepdims=True)
        E = np.exp(S - top)
        Z = E.sum(axis=1, keepdims=True)
        Q = E / Z
        state.update(theta=theta.copy(), Q=Q)
        loss = float(w @ ((top[:, 0] + np.log(Z[:, 0])) * ysum - (Y * S).sum(axis=1)))
        G = w[:, None] * (Q * ysum[:, None] - Y)  # d loss / d S
        return loss + l2 / 2 * float(theta @ theta), pull(G) + l2 * theta

    def hessp(theta, v):
        """The Hessian at ``theta`` times ``v``."""
        if "theta" not in state or not np.array_equal(state["theta"], theta):
            fg(theta)
        Q = state["Q"]
        dW, db = _split(diagonal, v, K)
        dS = logits(dW, db)
        H = (w * ysum)[:, None] * Q * (dS - (Q * dS).sum(axis=1, keepdims=True))
        return pull(H) + l2 * v
    return fg, hessp


def _fit_one(kind, X, Y, w, l2, max_iterations, start=None):
    """Minimise ``L_cal(theta) + l2/2 ||theta||^2`` (H.6 eq. 188) for one ``l2``.

    Temperature: a bounded scalar search over ``beta = 1/T`` on ``(0, beta_max]``, where
    ``beta_max`` keeps every logit spread within ``MAX_LOGIT_SPREAD`` for any input (the
    features lie in ``[log(kappa/K), 0]``), then ``W = beta I``.  Vector and Dirichlet scaling:
    scipy's trust-region Newton-CG (``trust-ncg``) with the exact gradient and exact
    Hessian-vector products (the objective is convex: multinomial logistic regression on the
    features plus a ridge), from the identity map or from ``start`` (the previous ``lambda``'s
    parameters, when a grid is searched from the strongest regularisation down), until the
    gradient's norm is at most ``GTOL``.  Before, L-BFGS-B: at K = 100 (10,100 parameters,
    ``lambda = 1e-4``) it took 5,230 iterations and 263 s where trust-ncg takes 26 and 6 s, to a
    lower objective (``bench/recalibration.py``).
    """
    from scipy.optimize import minimize, minimize_scalar
    n, K = X.shape
    if kind == "temperature":
        spread = float(-X.min()) if X.size else 0.0
        beta_max = MAX_LOGIT_SPREAD / max(spread, 1.0)

        def f(beta):
            return log_loss(X, Y, w, beta * np.eye(K), np.zeros(K)) + l2 / 2 * beta * beta
        res = minimize_scalar(f, bounds=(0.0, beta_max), method="bounded",
                              options={"xatol": 1e-12 * beta_max, "maxiter": max_iterations})
        beta = float(res.x)
        return (beta * np.eye(K), np.zeros(K),
                FitReport(float(res.fun), l2, bool(res.success), int(res.nfev), str(res.message),
                          at_bound=beta > beta_max * (1 - 1e-9) or beta < beta_max * 1e-9))

    diagonal = kind == "vector"
    fg, hessp = _objective(diagonal, X, Y, w, l2)
    theta0 = np.concatenate([np.ones(K), np.zeros(K)]) if diagonal else \
        np.concatenate([np.eye(K).ravel(), np.zeros(K)])
    if start is not None:
        W0, b0 = start
        theta0 = np.concatenate([np.diag(W0) if diagonal else W0.ravel(), b0])
    res = minimize(fg, theta0, jac=True, hessp=hessp, method="trust-ncg",
                   options={"maxiter": max_iterations, "gtol": GTOL})
    # Near the optimum the objective's rounding can stop the trust region ("A bad approximation
    # caused failure to predict improvement") before the gradient's norm reaches GTOL.  The
    # objective is l2-strongly convex, so f - min f <= ||g||^2 / (2 l2) at any point: that bound
    # is reported, and the fit counts as converged when it is at most GAP.
    gap = float(res.jac @ res.jac) / (2 * l2) if l2 > 0 else None  # lambda = 0: no such bound
    converged = bool(res.success) or (gap is not None and gap <= GAP)
    W, b = _unpack(kind, res.x, K)
    return W, b, FitReport(float(res.fun), l2, converged, int(res.nit), str(res.message), gap=gap)


def fit_scaling(P, Y, w=None, kind: str = "temperature", *, kappa: float = KAPPA_INIT, l2: float = 1e-4,
                validation=None, l2_grid=L2_GRID, max_iterations: int = 15000) -> Recalibrator:
    """Fit temperature, vector or Dirichlet scaling (Table 3) to arrays, minimising H.6's eq. 188.

    The objective is K.1's weighted log loss ``L_cal`` plus H.6's ``lambda/2 ||theta||^2``
    (eq. 188), after K.1's ``kappa_init`` smoothing; scipy fits it.

    Parameters
    ----------
    P : array-like of shape (n, K)
        The predictions (``K >= 2``; each row is divided by its sum).
    Y : array-like of shape (n, K)
        One-hot or soft targets, finite and nonnegative.
    w : array-like of shape (n,), optional
        Nonnegative weights, not all zero, normalised here; uniform when omitted.
    kind : {"temperature", "vector", "dirichlet"}, default "temperature"
        The family: one parameter, ``2K`` or ``K^2 + K``.
    kappa : float, default 1e-10
        K.1's ``kappa_init`` (:func:`check_kappa`).
    l2 : float, default 1e-4
        H.6's ``lambda`` (:func:`check_l2`), used where no ``validation`` is given.
    validation : tuple, optional
        ``(P_val, Y_val)`` or ``(P_val, Y_val, w_val)``: then ``lambda`` is chosen from
        ``l2_grid`` by the validation log loss ("Validation data select regularization", K.1).
    l2_grid : iterable of float, default (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)
        The lambdas tried with ``validation``, from the strongest down (each fit starts from the
        last one's parameters), stopping once the validation loss has risen twice in a row.
    max_iterations : int, default 15000
        The optimiser's iteration limit.

    Returns
    -------
    Recalibrator
        The fitted map, with its :class:`FitReport`.

    Raises
    ------
    HUCError
        For an unknown ``kind``, a ``kappa``, ``l2`` or ``l2_grid`` out of range, arrays of the
        wrong shapes, entries that are not finite and nonnegative, or a malformed
        ``validation``.

    Warns
    -----
    RecalibrationWarning
        When the optimiser stops without converging.

    Notes
    -----
    Temperature: a bounded scalar search over ``beta = 1/T`` on ``(0, beta_max]``, where
    ``beta_max`` keeps every logit spread within 700 for any input.  Vector and Dirichlet
    scaling: scipy's trust-region Newton-CG (``trust-ncg``) with the exact gradient and exact
    Hessian-vector products (the objective is convex: multinomial logistic regression on the
    features plus a ridge), from the identity map, until the gradient's norm is at most 1e-10.

    Examples
    --------
    >>> P = np.array([[0.9, 0.1]] * 4)
    >>> Y = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    >>> r = fit_scaling(P, Y, kind="temperature", l2=0.0)
    >>> round(float(r(P)[0, 0]), 6), r.report.converged  # the empirical frequency 3/4
    (0.75, True)
    """
    import warnings
    if not one_of(kind, KINDS):
        raise HUCError(f"kind: expected 'temperature', 'vector' or 'dirichlet', got {given(kind)}", kind="option")
    kappa, l2 = check_kappa(kappa), check_l2(l2)
    if validation is not None:
        if isinstance(l2_grid, (str, bytes)) or not hasattr(l2_grid, "__iter__") or not len(l2_grid := list(l2_grid)):
            raise HUCError(f"l2_grid: expected a non-empty list of lambdas, got {given(l2_grid, 40)}", kind="option")
        l2_grid = [check_l2(lam, f"l2_grid[{i}]") for i, lam in enumerate(l2_grid)]
    X, Y, w = _arrays(P, Y, w, kappa, "")
    if validation is None:
        W, b, report = _fit_one(kind, X, Y, w, float(l2), max_iterations)
    else:
        if not isinstance(validation, (tuple, list)) or len(validation) not in (2, 3):
            raise HUCError("validation: expected (P_val, Y_val) or (P_val, Y_val, w_val)", kind="type")
        Xv, Yv, wv = _arrays(*validation, *([None] if len(validation) == 2 else []), kappa, "validation ")
        if Xv.shape[1] != X.shape[1]:
            raise HUCError(f"validation: {Xv.shape[1]} classes, the calibration data have {X.shape[1]}", kind="length")
        best, start, rises = None, None, 0
        for lam in sorted(l2_grid, reverse=True):  # strongest first, each fit warm-started from the last
            W, b, report = _fit_one(kind, X, Y, w, float(lam), max_iterations, start)
            start = (W, b)
            score = log_loss(Xv, Yv, wv, W, b)
            if best is None or score < best[0]:
                best, rises = (score, W, b, report), 0
            else:
                rises += 1
                if rises == 2:  # the validation loss rose twice in a row: weaker lambdas overfit further
                    break
        score, W, b, report = best
        report = FitReport(**{**report.__dict__, "validation_log_loss": score})
    if not report.converged:
        warnings.warn(f"{kind} scaling: the optimiser stopped without converging ({report.message})",
                      RecalibrationWarning, stacklevel=2)
    return Recalibrator(kind, W, b, kappa, report)


def _arrays(P, Y, w, kappa, where):
    """Validated float arrays: features ``log f_base(P)``, targets, normalised weights."""
    P = np.asarray(P, dtype=float)
    Y = np.asarray(Y, dtype=float)
    if P.ndim != 2 or P.shape[0] == 0 or P.shape[1] < 2:
        raise HUCError(f"{where}P: expected an n x K array of predictions with n >= 1 and K >= 2, "
                       f"got shape {P.shape}", kind="length")
    if Y.shape != P.shape:
        raise HUCError(f"{where}Y: shape {Y.shape} does not match the predictions' {P.shape}", kind="length")
    if not (np.isfinite(P).all() and (P >= 0).all() and np.isfinite(Y).all() and (Y >= 0).all()):
        raise HUCError(f"{where}P, Y: entries must be finite and nonnegative", kind="float_range")
    P = prediction_rows(P, where=f"{where}P")  # (each row over its sum; a row of zeros named)
    w = np.ones(len(P)) if w is None else np.asarray(w, dtype=float)
    if w.shape != (len(P),) or not (np.isfinite(w).all() and (w >= 0).all()) or w.sum() <= 0:
        raise HUCError(f"{where}w: expected {len(P)} finite nonnegative weights, not all zero", kind="float_range")
    return _features(P, kappa), Y, w / w.sum()


def fit_recalibrator(dist, kind: str = "temperature", *, kappa: float = KAPPA_INIT,
                     l2: float = 1e-4, validation=None, max_iterations: int = 15000) -> Recalibrator:
    """Fit temperature, vector or Dirichlet scaling by weighted log loss on atoms (K.1, H.6).

    Parameters
    ----------
    dist : FiniteDistribution or huc_ref.fast.sample.Sample
        The calibration atoms (a ``Sample`` holds float64 arrays); their predictions, label
        laws and weights are fitted.
    kind : {"temperature", "vector", "dirichlet"}, default "temperature"
        The family.
    kappa : float, default 1e-10
        K.1's ``kappa_init``.
    l2 : float, default 1e-4
        H.6's ``lambda``, used where no ``validation`` is given.
    validation : FiniteDistribution or huc_ref.fast.sample.Sample, optional
        Validation atoms: ``lambda`` is then chosen on them (:func:`fit_scaling`).
    max_iterations : int, default 15000
        The optimiser's iteration limit.

    Returns
    -------
    Recalibrator
        The fitted map.

    Raises
    ------
    HUCError
        For an unknown ``kind``, and as :func:`fit_scaling`.

    Examples
    --------
    >>> from huc_ref import LabelTree
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> d = FiniteDistribution.from_sample(t, ["a", "a", "b", "a"], [["9/10", "1/10"]] * 4)
    >>> r = fit_recalibrator(d, "temperature")
    >>> round(float(r(np.array([[0.9, 0.1]]))[0, 0]), 2)  # the empirical frequency 3/4
    0.75
    """
    if not one_of(kind, KINDS):
        raise HUCError(f"kind: expected 'temperature', 'vector' or 'dirichlet', got {given(kind)}", kind="option")
    P, Y, w = _data(dist)
    return fit_scaling(P, Y, w, kind, kappa=kappa, l2=l2, max_iterations=max_iterations,
                       validation=None if validation is None else _data(validation))


def recalibrate(dist: FiniteDistribution, recalibrator: Recalibrator) -> FiniteDistribution:
    """The same atoms with recalibrated predictions, read back as exact rationals (H.6).

    Parameters
    ----------
    dist : FiniteDistribution
        The atoms.
    recalibrator : Recalibrator
        The map.

    Returns
    -------
    FiniteDistribution
        The atoms with each prediction the map's float64 output read exactly and renormalised
        exactly (zero entries are impossible after the ``kappa`` smoothing and softmax).

    Examples
    --------
    >>> from huc_ref import LabelTree
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> d = FiniteDistribution.from_sample(t, ["a", "b"], [["1/2", "1/2"]] * 2)
    >>> recalibrate(d, fit_recalibrator(d, "temperature")).atoms[0].p
    (Fraction(1, 2), Fraction(1, 2))
    """
    out = recalibrator(np.array([[float(x) for x in a.p] for a in dist.atoms]))
    atoms = []
    for a, row in zip(dist.atoms, out):
        p = [Fraction(float(x)) for x in row]
        total = sum(p)
        entry = {"weight": a.weight, "c": a.c, "p": [x / total for x in p]}
        entry.update({"eta": a.eta} if a.eta is not None else {"label": dist.tree.labels[a.label]})
        atoms.append(entry)
    return FiniteDistribution(dist.tree, atoms, dist.subgroups)


def two_stage(calibration: FiniteDistribution, utilities: dict, kind: str = "temperature", **boost_options):
    """Fit a scaling on calibration atoms, then boost from its output: "Temp. -> HUC" and its kin (H.2, K.1).

    Parameters
    ----------
    calibration : FiniteDistribution
        The calibration atoms.
    utilities : dict of str to Utility
        The utilities boosted.
    kind : {"temperature", "vector", "dirichlet"}, default "temperature"
        The scaling fitted first (:func:`fit_recalibrator` with its defaults).
    **boost_options
        Passed to :func:`huc_ref.engines.boost` (``epsilon``, ``method``, ...).

    Returns
    -------
    recalibrator : Recalibrator
        The fitted scaling.
    start : FiniteDistribution
        The recalibrated calibration atoms, where boosting starts.
    result : BoostResult
        The boosting run.

    Raises
    ------
    HUCError
        As :func:`fit_recalibrator` and :func:`huc_ref.engines.boost`.

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> d = FiniteDistribution.from_sample(t, ["a", "a", "b"], [["1/3", "2/3"]] * 3)
    >>> rec, start, result = two_stage(d, {"u": Table(t, [0, 1])}, "temperature", epsilon="1/100")
    >>> result.stopped, Fraction(result.final["uc"]) <= Fraction(1, 100)
    ('tolerance', True)
    """
    rec = fit_recalibrator(calibration, kind)
    start = recalibrate(calibration, rec)
    return rec, start, boost(start, utilities, **boost_options)
