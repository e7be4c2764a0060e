"""Parametric recalibration and the two-stage methods (Sec. 5.2, App. H.2, H.6, K.1, Table 3).

* temperature scaling ``softmax(log p / T)`` (one parameter),
* vector scaling ``softmax(a * log p + b)`` (``2K``),
* Dirichlet calibration ``softmax(W log p + b)`` (``K^2 + K``),

each fitted by minimising the log loss on calibration atoms plus ``lambda/2 ||theta||^2`` (H.6
eq. 188; ``lambda = 1e-4``),
after the ``kappa_init`` smoothing ``p <- (1 - kappa) p + kappa / K`` (K.1, ``kappa = 1e-10``).
Fitting is numerical (float64 Newton / gradient steps on a convex objective); its output is
then read as exact rationals and renormalised exactly, and HUC-Boost starts from it: the
two-stage methods "Temp. -> HUC", "Vec. -> HUC", "Dir. -> HUC".  ``select_prefix`` picks the
boosting checkpoint with the smallest validation error (K.1: "Validation selects the
returned update prefix").
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .boost import BoostResult, boost, trajectory
from .distribution import FiniteDistribution
from .errors import HUCError

__all__ = ["Recalibrator", "fit_recalibrator", "recalibrate", "two_stage", "select_prefix"]

KAPPA_INIT = 1e-10


def _softmax(s):
    s = s - s.max(axis=1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=1, keepdims=True)


def _features(p, kappa):
    p = (1 - kappa) * np.asarray(p, dtype=float) + kappa / p.shape[1]
    return np.log(p)


@dataclass(frozen=True)
class Recalibrator:
    """A fitted map ``p -> softmax(W log p + b)`` (temperature: ``W = I/T, b = 0``; vector:
    ``W = diag(a)``) (Table 3, H.6).

    >>> r = Recalibrator("temperature", np.eye(2) / 2, np.zeros(2), 0.0)  # T = 2
    >>> r(np.array([[0.9, 0.1]])).round(4).tolist()  # softmax(log p / 2) = (3, 1) / 4
    [[0.75, 0.25]]
    """

    kind: str
    W: np.ndarray
    b: np.ndarray
    kappa: float

    def __call__(self, p) -> np.ndarray:
        """Recalibrated predictions (float64), rows summing to 1."""
        return _softmax(_features(np.atleast_2d(np.asarray(p, dtype=float)), self.kappa) @ self.W.T + self.b)


def _data(dist: FiniteDistribution):
    """Predictions, soft targets (the label laws) and weights of the atoms, as arrays."""
    K = dist.tree.K
    P = np.array([[float(x) for x in a.p] for a in dist.atoms])
    Y = np.array([[float(x) for x in a.label_law(K)] for a in dist.atoms])
    w = np.array([float(a.weight) for a in dist.atoms])
    return P, Y, w


def fit_recalibrator(dist: FiniteDistribution, kind: str = "temperature", *, kappa: float = KAPPA_INIT,
                     l2: float = 1e-4, iterations: int = 500) -> Recalibrator:
    """Fit temperature, vector or Dirichlet scaling by weighted log loss on ``dist`` (H.6).

    >>> from huc_ref import LabelTree
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> d = FiniteDistribution.from_sample(t, ["a", "a", "b", "a"], [["9/10", "1/10"]] * 4)
    >>> r = fit_recalibrator(d, "temperature")
    >>> round(float(r(np.array([[0.9, 0.1]]))[0, 0]), 2)  # the empirical frequency 3/4
    0.75
    """
    if kind not in ("temperature", "vector", "dirichlet"):
        raise HUCError(f"kind: expected 'temperature', 'vector' or 'dirichlet', got {kind!r}")
    P, Y, w = _data(dist)
    X = _features(P, kappa)
    n, K = X.shape
    w = w / w.sum()
    # parameters: temperature -> beta (W = beta I); vector -> (a, b); dirichlet -> (W, b)
    if kind == "temperature":
        beta = 1.0
        for _ in range(100):  # Newton on a convex one-dimensional objective
            Q = _softmax(beta * X)
            m = (Q * X).sum(axis=1)
            grad = -(w * ((Y * X).sum(axis=1) - m)).sum() + l2 * beta
            hess = (w * ((Q * X * X).sum(axis=1) - m ** 2)).sum() + l2
            step = grad / hess
            beta -= step
            if abs(step) < 1e-12:
                break
        return Recalibrator(kind, beta * np.eye(K), np.zeros(K), kappa)
    W = np.eye(K)
    b = np.zeros(K)

    def loss_and_grad(W, b):
        S = X @ W.T + b
        Q = _softmax(S)
        # H.6 eq. (188): lambda/2 ||theta||^2 with theta = (W, b), which pulls towards the uniform prediction
        loss = -(w[:, None] * Y * np.log(np.maximum(Q, 1e-300))).sum() + l2 / 2 * ((W ** 2).sum() + (b ** 2).sum())
        G = w[:, None] * (Q * Y.sum(axis=1, keepdims=True) - Y)  # d loss / d S
        gW = G.T @ X + l2 * W
        if kind == "vector":
            gW = np.diag(np.diag(gW))
        return loss, gW, G.sum(axis=0) + l2 * b

    loss, gW, gb = loss_and_grad(W, b)
    step = 1.0
    for _ in range(iterations):  # gradient descent with backtracking (convex objective)
        while step > 1e-12:
            W2, b2 = W - step * gW, b - step * gb
            loss2, gW2, gb2 = loss_and_grad(W2, b2)
            if loss2 <= loss - 0.5 * step * ((gW ** 2).sum() + (gb ** 2).sum()):
                break
            step /= 2
        if loss - loss2 < 1e-14:
            W, b = W2, b2
            break
        W, b, loss, gW, gb = W2, b2, loss2, gW2, gb2
        step *= 2
    return Recalibrator(kind, W, b, kappa)


def recalibrate(dist: FiniteDistribution, recalibrator: Recalibrator) -> FiniteDistribution:
    """The same atoms with recalibrated predictions, read back as exact rationals (renormalised
    exactly; zero entries are impossible after the ``kappa`` smoothing and softmax) (H.6).

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
    """Fit ``kind`` scaling on the calibration atoms, then boost from its output (H.2, K.1).

    Returns ``(recalibrator, recalibrated calibration atoms, BoostResult)``.

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


def select_prefix(result: BoostResult, validation: FiniteDistribution, utilities: dict) -> tuple[int, list]:
    """K.1: replay the run's updates on validation atoms (:func:`huc_ref.boost.trajectory`) and
    return the prefix length with the smallest validation error (HUC for HUC-Boost, UC for
    UC-Boost; the first minimum), with the errors after 0, 1, ... updates.

    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> u = {"u": Table(t, [-1, 1, 1, 1])}
    >>> best, errors = select_prefix(boost(d, u, epsilon="1/10"), d, u)
    >>> best == len(errors) - 1, errors[0]
    (True, 0.25)
    """
    metric = "uc" if result.method == "uc" else "huc"
    errors = [point[metric] for point in trajectory(result, validation, utilities)]
    best = min(range(len(errors)), key=lambda t: (errors[t], t))
    return best, errors
