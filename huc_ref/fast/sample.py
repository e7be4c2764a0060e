"""A labelled sample as float64 arrays: the fast path's twin of a :class:`FiniteDistribution`
of sample atoms (Sec. 2.1; docs/specification.md §3), built with no exact number.

Boosting from arrays (:func:`huc_ref.fast.boost.boost_sample`), the replay of a run's rules on
validation and test data (:mod:`huc_ref.replay`, K.1) and the recalibrators' fits
(:func:`huc_ref.recalibration.fit_recalibrator`) read it as they read a distribution's atoms.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ..distribution import WHOLE_POPULATION, check_whole_population
from ..errors import HUCError, check_names
from ..results import AuditResult
from ..tree import LabelTree
from ..utilities import Utility
from ..validation import check_utilities
from .audit import ROW_SUM_TOLERANCE, check_accelerator, label_ids, result_rows, sample_rows
from .numbers import SMALLEST_NORMAL, as_floats, entries, row_sums
from .tree import FastTree

__all__ = ["Sample", "audit_sample"]


class Sample:
    """``n`` sample atoms ``(x_i, y_i)`` of weights ``w_i`` (Sec. 2.1's empirical distribution):
    predictions ``P`` (``n x K``, label order, positive entries, rows summing to 1 within
    :data:`huc_ref.fast.audit.ROW_SUM_TOLERANCE`), labels ``y`` (names or ids), subgroup values
    ``C`` (``n x |C|`` in [-1, 1], columns named by ``subgroups``; default: everyone) and
    positive weights ``w`` (default ``1/n``; divided by their exactly rounded sum).  Bad input
    gets one HUCError naming it (an entry must be positive: boosting takes its log).

    Parameters
    ----------
    tree : LabelTree
        The label tree.
    P : array-like of shape (n, K)
        The predictions, in the tree's label order: finite entries of at least the smallest
        normal float64, rows summing to 1 within :data:`huc_ref.fast.audit.ROW_SUM_TOLERANCE`.
    y : array-like of n labels
        Label names or label ids.
    subgroups : sequence of str, default ("all",)
        The subgroups' names, one column of ``C`` each.
    C : array-like of shape (n, |C|), optional
        The subgroup values in [-1, 1]; default: everyone (ones).  A subgroup named ``"all"``
        must be 1 on every row.
    w : array-like of shape (n,), optional
        Positive weights; default ``1/n``.

    Attributes
    ----------
    tree, P, y, subgroups, C, w, n
        The arguments as read: label ids ``y``, weights ``w`` summing to 1, ``n`` the rows.

    Raises
    ------
    HUCError
        Naming the argument: a ``tree`` that is not a LabelTree, ``P`` of the wrong shape, a row
        with a nonpositive, non-finite or subnormal entry or not summing to 1, unknown labels,
        bad subgroup names or values, or weights that are not finite and positive.

    Examples
    --------
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> s = Sample(t, [[0.25, 0.75], [0.5, 0.5]], ["a", "b"], w=[1, 3])
    >>> s.y.tolist(), s.w.tolist(), s.weights.tolist()  # w_i c(x_i), one column per subgroup
    ([0, 1], [0.25, 0.75], [[0.25], [0.75]])
    >>> Sample(t, [[0.25, 0.75], [0.0, 1.0]], ["a", "b"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: y_prob[1]: entries must be finite and positive (boosting takes their logs), ...
    """

    def __init__(self, tree: LabelTree, P, y, subgroups=("all",), C=None, w=None):
        if not isinstance(tree, LabelTree):
            raise HUCError(f"tree: expected a LabelTree, got {type(tree).__name__}", kind="tree")
        P = as_floats(P, "y_prob")
        if P.ndim != 2 or P.shape[1] != tree.K or not len(P):
            raise HUCError(f"y_prob: expected n >= 1 rows of {tree.K} probabilities (one per label), got shape "
                           f"{P.shape}", kind="length")
        n = len(P)
        bad = ~(np.isfinite(P) & (P > 0)).all(axis=1)
        bad |= ~(np.abs(row_sums(np.where(np.isfinite(P), P, 0.0)) - 1.0) <= ROW_SUM_TOLERANCE)
        if bad.any():
            i = int(np.argmax(bad))
            raise HUCError(f"y_prob[{i}]: entries must be finite and positive (boosting takes their logs), summing "
                           f"to 1 within {ROW_SUM_TOLERANCE:g}", kind="float_range")
        if P.min() < SMALLEST_NORMAL:  # (the audit's message would suggest renormalize=True, which a Sample lacks)
            i, j = np.argwhere(P < SMALLEST_NORMAL)[0]
            raise HUCError(f"y_prob[{i}]: entry {j} is {P[i, j].item()!r}, a subnormal float64 (below "
                           f"{SMALLEST_NORMAL:.4g}): its digits are lost in sums and ratios; floor the entries at a "
                           "normal number such as 1e-300 and divide each row by its sum, or use the exact engine",
                           kind="float_range")
        y = label_ids(y, tree, n)
        if isinstance(subgroups, str) or not hasattr(subgroups, "__iter__"):
            raise HUCError(f"subgroups: expected a list of names, got {type(subgroups).__name__}", kind="type")
        names = tuple(check_names(subgroups, "subgroups"))
        C = np.ones((n, 1)) if C is None else as_floats(C, "C")
        if C.shape != (n, len(names)) or not (np.isfinite(C) & (np.abs(C) <= 1)).all():
            raise HUCError(f"C: expected {n} x {len(names)} subgroup values in [-1, 1] (one column per subgroup), "
                           f"got shape {C.shape}" + ("" if C.shape != (n, len(names)) else " with a value outside"),
                           kind="range")
        if WHOLE_POPULATION in names:
            k = names.index(WHOLE_POPULATION)
            check_whole_population(WHOLE_POPULATION, C[:, k], f"C[{{i}}, {k}]")
        w = np.full(n, 1.0 / n) if w is None else entries(w, n, "w", "a finite positive number", lambda v: v > 0,
                                                           "float_range")
        try:  # exactly rounded: a weight over it is the rational w_i / sum, rounded once
            total = math.fsum(w.tolist())
        except OverflowError:  # (fsum raises where a partial sum passes the largest float)
            total = math.inf
        if total == math.inf:  # weights near the largest float: scaled first
            w = w / w.max()
            total = math.fsum(w.tolist())
        self.tree, self.P, self.y, self.subgroups, self.C, self.w = tree, P, y, names, C, w / total
        self.n = n

    @property
    def weights(self) -> np.ndarray:
        """``w_i c(x_i)`` per atom and subgroup (``n x |C|``): the weights of UC's and HUC's sums
        (Sec. 2.1's ``E[c(X) ...]`` over the sample).

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> Sample(t, [[0.5, 0.5]] * 2, [0, 1], ["all", "signed"], [[1, 1], [1, -0.5]]).weights.tolist()
        [[0.5, 0.5], [0.5, -0.25]]
        """
        return self.w[:, None] * self.C

    def label_laws(self) -> np.ndarray:
        """Each atom's label as a point mass (``n x K``, one-hot): the ``eta`` of a sample atom
        (docs/specification.md §3).

        Returns
        -------
        ndarray of shape (n, K)
            The one-hot rows.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
        >>> Sample(t, [[0.25, 0.25, 0.5]] * 2, ["c", "a"]).label_laws().tolist()
        [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
        """
        E = np.zeros((self.n, self.tree.K))
        E[np.arange(self.n), self.y] = 1.0
        return E


def audit_sample(sample: Sample, utilities: Mapping[str, Utility], *, predictions: np.ndarray | None = None,
                 weights: np.ndarray | None = None, accelerator: str = "numpy") -> AuditResult:
    """UC and HUC (Sec. 2.2-2.3, Algorithm 2 per App. F.4) of a :class:`Sample`, or of the same
    atoms with ``predictions`` in place of their own (a boosting run's replay,
    :func:`huc_ref.replay.trajectory`); ``weights``: :attr:`Sample.weights`, when the caller
    audits the sample many times.

    App. D.1 as a sample (p = 1/4 each; labels y1 x2, y3 x3, y4 x3):

    Parameters
    ----------
    sample : Sample
        The atoms.
    utilities : dict of str to Utility
        The utilities by name, each built on the sample's tree.
    predictions : array-like of shape (n, K), optional
        Predictions in place of the sample's own.
    weights : ndarray of shape (n, |C|), optional
        :attr:`Sample.weights`, made before.
    accelerator : {"numpy", "numba"}, default "numpy"
        The kernels.

    Returns
    -------
    AuditResult
        Every candidate row, float numbers, ``arithmetic == "float64"``.

    Raises
    ------
    HUCError
        For a ``sample`` that is not a Sample, utilities the audit cannot take, ``predictions``
        of another shape than the sample's, or an unknown ``accelerator``.

    Examples
    --------
    >>> from huc_ref import Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> s = Sample(t, np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3])
    >>> r = audit_sample(s, {"u": Table(t, [-1, 1, 1, 1])})
    >>> r.uc.sup, r.huc.sup, r.huc.node
    (0.0, 0.25, 'v0')
    """
    if not isinstance(sample, Sample):
        raise HUCError(f"sample: expected a fast.Sample, got {type(sample).__name__}", kind="type")
    check_utilities(sample.tree, sample.n, utilities)
    P = sample.P if predictions is None else as_floats(predictions, "predictions")
    if P.shape != sample.P.shape:
        raise HUCError(f"predictions: expected an array of shape {sample.P.shape} (the sample's), got {P.shape}",
                       kind="length")
    tables = sample_rows(FastTree(sample.tree), P, sample.y, sample.weights if weights is None else weights,
                         utilities, engine=check_accelerator(accelerator))
    return result_rows(sample.tree, tables, list(sample.subgroups), sample.n, True)
