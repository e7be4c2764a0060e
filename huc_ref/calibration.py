"""Recalibration estimators in scikit-learn's shape: fit on calibration data, apply to new
predictions, save and load (Sec. 5.2, H.2, H.6, K.1).

* :class:`TemperatureScaling`, :class:`VectorScaling`, :class:`DirichletScaling`: Table 3's
  whole-distribution maps, fitted by :func:`huc_ref.recalibration.fit_scaling`.
* :class:`HUCBoost`: HUC-Boost (or UC-Boost, ``method="uc"``) on calibration data, the update
  prefix chosen on validation data as K.1 does ("Validation selects the returned update
  prefix"): rows of their own (``validation=``), or by default a stratified part of the
  calibration data held out for it; stored as rules (subgroup, utility, node, interval, step)
  that apply to any predictions, labelled or not; ``initial=`` a scaling estimator gives the
  two-stage methods (``Temp. -> HUC`` etc., H.2).

Each follows scikit-learn's conventions: a ``BaseEstimator`` and ``ClassifierMixin`` (when
scikit-learn is installed; else a base of the same contract, written here, so that ``huc fit``
needs no scikit-learn), ``fit(y_prob, y_true, ...)`` returning ``self``, ``predict_proba``,
``predict`` (the class of largest probability), ``score`` (accuracy), ``classes_``,
``n_features_in_``, fitted attributes ending in ``_``, and float hyperparameters.  The input
``y_prob`` holds rows of class probabilities (a classifier's ``predict_proba``; a row whose sum
is further than :data:`huc_ref.fast.ROW_SUM_TOLERANCE` from 1 is an error), and labels
``y_true`` are strings, integers or any array-like of them.  Predictions enter with K.1's
``kappa_init`` smoothing, so exact zeros (a decision tree's) are fine.  :class:`HUCBoost`'s
columns are the tree's labels: ``labels=`` (e.g. ``clf.classes_``) or a DataFrame's column
names state their order and are checked (a misaligned order is an error naming both orders,
never a silent permutation).  :meth:`HUCBoost.to_json` writes the ``huc-model/1`` document;
loading it and predicting gives the same floats bit for bit.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import math
import sys
import time
import warnings
from collections import deque
from contextlib import contextmanager
from numbers import Real
from pathlib import Path

import numpy as np

from .distribution import FiniteDistribution, check_whole_population, subgroup_mapping
from .engines import boost, boost_arithmetic, check_engine
from .errors import HUCError, check_names, deprecated, given, is_integer, one_of, printable
from .fast.audit import ROW_SUM_TOLERANCE, _lazy, label_ids
from .fast.boost import apply_rules, boost_sample
from .fast.numbers import SMALLEST_NORMAL, UNIT_ROUNDOFF, as_floats, entries, subgroup_column
from .fast.sample import Sample
from .formats import MODEL_FORMAT, load_json, read_document, read_model_spec
from .rational import exact
from .recalibration import KAPPA_INIT, L2_GRID, Recalibrator, check_kappa, fit_scaling, prediction_rows
from .replay import held_out_rows, log_loss_guard, select_prefix
from .tree import LabelTree
from .validation import METHODS, boost_settings

__all__ = ["TemperatureScaling", "VectorScaling", "DirichletScaling", "HUCBoost", "MODEL_FORMAT", "load_model",
           "NoValidationWarning", "NoUpdateKeptWarning", "ScalingNotKeptWarning", "MAX_RULES", "MAX_ALPHA",
           "row_sum_tolerance"]


class _Params:
    """scikit-learn's estimator contract where scikit-learn is not installed: ``get_params`` /
    ``set_params`` from the constructor's signature (every constructor argument stored under its
    own name, fitted state ending in ``_``) and a ``repr`` of the arguments."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        return sorted(name for name in inspect.signature(cls.__init__).parameters if name != "self")

    def get_params(self, deep: bool = True) -> dict:
        out = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update({f"{name}__{k}": v for k, v in value.get_params().items()})
            out[name] = value
        return out

    def set_params(self, **params):
        for name, value in params.items():
            head, _, rest = name.partition("__")
            if rest:
                getattr(self, head).set_params(**{rest: value})
            else:
                setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.get_params(deep=False).items())
        return f"{type(self).__name__}({shown})"


class _Accuracy:
    """scikit-learn's ``ClassifierMixin.score`` where scikit-learn is not installed."""

    def score(self, X, y, sample_weight=None) -> float:
        """The (weighted) fraction of rows whose :meth:`predict` is ``y``."""
        hits = np.asarray(self.predict(X)) == np.asarray(y)
        return float(np.average(hits, weights=sample_weight))


try:  # scikit-learn's base where it is installed: clone, pipelines, check_estimator, its HTML repr
    from sklearn.base import BaseEstimator as _Base
    from sklearn.base import ClassifierMixin as _Classifier
    from sklearn.exceptions import NotFittedError

    class _NotFitted(HUCError, NotFittedError):
        """A call before ``fit``: one HUCError, and scikit-learn's ``NotFittedError`` too."""
    _SKLEARN = True
except ImportError:  # scikit-learn is optional (the examples extra): the same contract, written above
    _Base, _Classifier, _NotFitted, _SKLEARN = _Params, _Accuracy, HUCError, False


class NoValidationWarning(UserWarning):
    """:meth:`HUCBoost.fit` with ``validation=False``: every update of the run is kept, none chosen
    on held-out data (K.1: "Validation selects the returned update prefix").

    Examples
    --------
    >>> import warnings
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = HUCBoost(t, {"u": Table(t, [0, 1])}).fit([[0.5, 0.5]] * 4, [0, 1, 1, 1], validation=False)
    >>> [w.category.__name__ for w in caught]
    ['NoValidationWarning']
    """


class ScalingNotKeptWarning(UserWarning):
    """:meth:`HUCBoost.fit` with ``initial=`` a scaling (H.2's two-stage methods) that raises the
    validation log loss (:func:`huc_ref.replay.log_loss_guard`): the scaling is not used
    (``initial_kept_`` is False) and the rules are fitted on the predictions as given.

    Examples
    --------
    >>> import warnings
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> P = [[0.25, 0.75]] * 8  # every calibration label "b": the scaling sharpens; validation disagrees
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     m = HUCBoost(t, {"u": Table(t, [0, 1])}, initial=TemperatureScaling()).fit(
    ...         P, [1] * 8, validation=(P, [0, 1] * 4))
    >>> [w.category.__name__ for w in caught], m.initial_kept_
    (['ScalingNotKeptWarning'], False)
    """


class NoUpdateKeptWarning(UserWarning):
    """:meth:`HUCBoost.fit` kept none of its run's updates because no prefix cleared
    ``prefix_guard`` on the validation rows, where K.1's rule alone ("Validation selects the
    returned update prefix": the smallest validation error) would keep some; the message says how
    many, and the options that keep them.

    Examples
    --------
    >>> issubclass(NoUpdateKeptWarning, UserWarning)
    True
    """


#: Seconds between two progress lines of a fit with ``verbose`` where tqdm is not installed.
PROGRESS_SECONDS = 2.0


class _Progress:
    """Progress of a long part of a fit on stderr (``verbose=``): tqdm's bar where tqdm is
    installed, else a line every :data:`PROGRESS_SECONDS`; nothing when ``on`` is false."""

    def __init__(self, on, what: str, total: int):
        self.on, self.what, self.total, self.bar = bool(on), what, total, None
        if self.on and importlib.util.find_spec("tqdm") is not None:
            from tqdm import tqdm
            self.bar = tqdm(total=total, desc=what, file=sys.stderr, leave=False)
        self.last = time.monotonic()

    def __call__(self, t: int, note: str = "") -> None:
        if not self.on:
            return
        if self.bar is not None:
            self.bar.update(t - self.bar.n)
            return
        now = time.monotonic()
        if now - self.last >= PROGRESS_SECONDS:
            self.last = now
            print(f"{self.what}: {t} of at most {self.total}{note}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@contextmanager
def _progress(on, what: str, total: int):
    bar = _Progress(on, what, total)
    try:
        yield bar
    finally:
        bar.close()


@contextmanager
def _within(where: str):
    """A HUCError raised inside, its message prefixed by ``where`` (a model file's ``options.``)."""
    try:
        yield
    except HUCError as err:
        if not where:
            raise
        raise HUCError(f"{where}{err}", kind=err.kind) from None


def _decimal(value, where: str):
    """A hyperparameter as the exact number the engines compare: a float (Python's or numpy's) is
    the decimal it prints as, ``Fraction(repr(x))`` (``0.01`` is exactly 1/100, not the binary
    float nearest it); anything else as :func:`huc_ref.rational.exact` reads it (``"0.01"``,
    ``"1/100"``, ``Fraction(1, 100)``, an integer).

    >>> _decimal(0.01, "epsilon"), _decimal(np.float32(0.01), "epsilon"), _decimal("1/100", "epsilon")
    (Fraction(1, 100), Fraction(1, 100), Fraction(1, 100))
    """
    if isinstance(value, (float, np.floating)) and math.isfinite(value):
        value = str(value) if isinstance(value, np.floating) else repr(float(value))  # (numpy: its own digits)
    return exact(value, where)


class _Estimator(_Classifier, _Base):
    """The contract of the estimators here: scikit-learn's (``get_params``, ``set_params``,
    ``clone``, ``predict``, ``score``, tags), an unknown parameter refused by one HUCError."""

    def set_params(self, **params):
        """Set constructor arguments (scikit-learn's ``set_params``; ``initial__l2`` a nested one);
        returns ``self``.

        >>> TemperatureScaling().set_params(l2=0.25).l2
        0.25
        """
        valid = self.get_params(deep=False)
        for name in params:
            if name.partition("__")[0] not in valid:
                raise HUCError(f"set_params: {type(self).__name__} has no parameter {name!r} "
                               f"(it has {', '.join(sorted(valid))})", kind="unknown_field")
        return super().set_params(**params)

    def _fitted(self, attribute):
        if not hasattr(self, attribute):
            raise _NotFitted(f"{type(self).__name__}: not fitted yet; call fit(y_prob, y_true) first", kind="state")
        return getattr(self, attribute)

    def predict(self, y_prob, **kwargs) -> np.ndarray:
        """The class of largest recalibrated probability for each row (``classes_[argmax]``; the
        first of tied ones), as a classifier's ``predict``.

        >>> m = TemperatureScaling(l2=0.0).fit([[0.9, 0.1]] * 4, ["a", "a", "b", "a"])
        >>> m.predict([[0.9, 0.1], [0.2, 0.8]]).tolist()
        ['a', 'b']
        """
        return self._fitted("classes_")[np.argmax(self.predict_proba(y_prob, **kwargs), axis=1)]

    if _SKLEARN:
        def __sklearn_tags__(self):
            tags = super().__sklearn_tags__()
            tags.input_tags.positive_only = True  # rows of probabilities: nonnegative entries
            tags.classifier_tags.poor_score = True  # a recalibrator's accuracy is its input probabilities'
            return tags


def _probabilities(y_prob, K: int | None, kappa: float, where: str = "y_prob") -> np.ndarray:
    """``y_prob`` as finite nonnegative rows (``K`` columns), with K.1's ``kappa_init``
    smoothing ``(1 - kappa) p + kappa / K`` after dividing each row by its sum."""
    P = prediction_rows(y_prob, K, where, ROW_SUM_TOLERANCE)
    kappa = check_kappa(kappa, P.shape[1])
    return (1 - kappa) * P + kappa / P.shape[1]


def _validation(validation, size: int = 3):
    """``validation`` as a tuple ``(y_prob, y_true[, subgroups])`` (K.1's held-out split), None or
    (``size == 3``, :class:`HUCBoost`) False."""
    if validation is None or validation is False and size == 3:
        return validation
    if not isinstance(validation, (tuple, list)) or not 2 <= len(validation) <= size:
        shown = ("(y_prob, y_true[, subgroups]), None (a held-out part of the calibration data) or False (none)"
                 if size == 3 else "(y_prob, y_true)")
        got = (f"a {type(validation).__name__} of {len(validation)}" if isinstance(validation, (tuple, list))
               else given(validation, 40) if isinstance(validation, bool) else type(validation).__name__)
        raise HUCError(f"validation: expected {shown}, got {got}", kind="type")
    return tuple(validation)


def _subgroup_values(subgroups, n: int, names=None, where: str = "subgroups",
                     rows: str = "y_prob") -> tuple[list, np.ndarray]:
    """Subgroup names and an ``n x |C|`` array of values in [-1, 1]; the whole population
    ("all") is always included (K.3: "The whole-population indicator is always included");
    ``where`` and ``rows`` name the subgroups and the predictions in a message."""
    groups = {} if subgroups is None else dict(subgroup_mapping(subgroups, where))
    if "all" not in groups:
        groups = {"all": np.ones(n), **groups}
    if names is not None:
        missing = [g for g in names if g not in groups]
        if missing:
            raise HUCError(f"{where}: the model was fitted with subgroup {printable(missing[0], 80)!r}; give its "
                           f"values under that name in {where} (one per row of {rows})", kind="missing_field")
        groups = {g: groups[g] for g in names}
    C = np.empty((n, len(groups)))
    for k, (name, values) in enumerate(groups.items()):
        C[:, k] = subgroup_column(values, n, f"{where}[{name!r}]", rows)
        check_whole_population(name, C[:, k], f"{where}['all'][{{i}}]")  # (the user's "all" is everyone)
    return list(groups), C


def _weights(sample_weight, n: int) -> np.ndarray | None:
    """``sample_weight`` checked: finite, positive (as a distribution's atom weights), or None."""
    if sample_weight is None:
        return None
    w = entries(sample_weight, n, "sample_weight", "a finite positive number", lambda v: v > 0, "float_range")
    return w / w.max()  # so that their sum cannot overflow


def _sample(tree, P, y, names, C, sample_weight) -> FiniteDistribution:
    """Sample atoms with the floats' exact binary values, each row renormalised exactly."""
    if sample_weight is not None:
        sample_weight = entries(sample_weight, len(P), "sample_weight", "a finite nonnegative number", lambda v: v >= 0,
                                "float_range")
    return FiniteDistribution.from_floats(tree, y, P, sample_weight=sample_weight,
                                          subgroups={g: C[:, k] for k, g in enumerate(names)})


def _class_ids(y_true, classes: np.ndarray, n: int, where: str = "y_true", rows: str = "y_prob") -> np.ndarray:
    """The column of each label of ``y_true`` (strings, integers, any array-like) among ``classes``
    (the columns' classes); one HUCError naming the first label that is not one of them.

    >>> _class_ids(["b", "a", "b"], np.array(["a", "b"]), 3).tolist()
    [1, 0, 1]
    """
    y = _labels(y_true, n, where, rows)
    values, inverse = np.unique(y, return_inverse=True)
    index = {v: k for k, v in enumerate(classes.tolist())}
    ids = np.array([index.get(v, -1) for v in values.tolist()], dtype=int)
    if (ids < 0).any():
        i = int(np.argmax(ids[inverse] < 0))
        raise HUCError(f"{where}[{i}]: {given(y[i], 60)} is not one of the classes "
                       f"{printable(repr(classes.tolist()), 100)} (the columns of {rows}: labels=)", kind="reference")
    return ids[inverse.ravel()]


def _labels(y_true, n: int, where: str = "y_true", rows: str = "y_prob") -> np.ndarray:
    """``y_true`` as a 1-d array of ``n`` labels that sort (all strings or all numbers, a float one
    an integer: a continuous target is not a class label)."""
    if isinstance(y_true, (str, bytes)) or not (hasattr(y_true, "__iter__") or hasattr(y_true, "__array__")):
        raise HUCError(f"{where}: expected one label per row of {rows}, got {type(y_true).__name__}", kind="length")
    y = np.asarray(y_true if hasattr(y_true, "__len__") or hasattr(y_true, "__array__") else list(y_true))
    if y.ndim != 1 or len(y) != n:
        raise HUCError(f"{where}: has {len(y) if y.ndim == 1 else y.shape} labels, {rows} has {n} rows", kind="length")
    if y.dtype.kind == "f" and not (np.isfinite(y) & (y == np.round(y))).all():
        i = int(np.argmin(np.isfinite(y) & (y == np.round(y))))
        raise HUCError(f"{where}[{i}]: {given(y[i])} is not a class label (a continuous target; the labels are "
                       "classes: strings or integers)", kind="reference")
    try:
        np.unique(y)
    except TypeError:
        raise HUCError(f"{where}: labels must be all strings or all numbers (they are sorted into classes_)",
                       kind="type") from None
    return y


class _Scaling(_Estimator):
    """Temperature, vector or Dirichlet scaling as an estimator (Table 3, H.6).

    Parameters
    ----------
    l2 : float, default 1e-4
        H.6's ``lambda`` (eq. 188), used where ``fit`` is given no ``validation``.
    kappa : float, default 1e-10
        K.1's ``kappa_init`` smoothing ``(1 - kappa) p + kappa / K``.
    l2_grid : iterable of float, default (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)
        The lambdas tried where ``fit`` is given ``validation`` (K.1: "Validation data select
        regularization"; :func:`huc_ref.recalibration.fit_scaling`).
    labels : array-like, optional
        The classes of ``y_prob``'s columns, in order (any array-like, e.g. a classifier's
        ``classes_``); without it the classes are the sorted distinct labels of ``y_true``
        (scikit-learn's ``classes_``), which must then be as many as the columns.
    """

    kind = ""

    def __init__(self, *, l2: float = 1e-4, kappa: float = KAPPA_INIT, l2_grid=L2_GRID, labels=None):
        self.l2, self.kappa, self.l2_grid, self.labels = l2, kappa, l2_grid, labels

    def _classes(self, y_true, n: int, K: int) -> np.ndarray:
        """``classes_``: ``labels`` as given, or the sorted distinct labels of ``y_true``."""
        if self.labels is not None:
            if isinstance(self.labels, (str, bytes)) or not hasattr(self.labels, "__iter__"):
                raise HUCError(f"labels: expected the {K} classes of y_prob's columns (e.g. a classifier's classes_), "
                               f"got {type(self.labels).__name__}", kind="labels")
            classes = _labels(self.labels, len(np.asarray(self.labels)), "labels", "its classes")
            if len(classes) != K or len(np.unique(classes)) != K:
                raise HUCError(f"labels: expected {K} distinct classes, one for each column of y_prob, got "
                               f"{printable(repr(classes.tolist()), 100)}", kind="labels")
            return classes
        classes = np.unique(_labels(y_true, n))
        if len(classes) != K:
            raise HUCError(f"y_true: has {len(classes)} distinct labels {printable(repr(classes.tolist()), 100)} for "
                           f"the {K} columns of y_prob; pass labels= with the columns' classes (e.g. "
                           "labels=clf.classes_)", kind="labels")
        return classes

    def fit(self, y_prob, y_true, *, sample_weight=None, validation=None):
        """Fit on calibration predictions ``y_prob`` (``n x K``) and labels ``y_true`` (strings,
        integers or any array-like of them, each one of :attr:`classes_`); with
        ``validation=(y_prob_val, y_true_val)`` the regularisation is chosen there (K.1:
        "Validation data select regularization").  Returns ``self``.

        >>> m = TemperatureScaling(l2=0.0, labels=np.array(["cat", "dog"]))
        >>> m.fit([[0.9, 0.1]] * 4, ["cat"] * 3 + ["dog"]).classes_.tolist(), m.n_features_in_
        (['cat', 'dog'], 2)
        >>> round(m.temperature_, 4)  # 9 ** (1 / T) = 3 : 1, the frequencies
        2.0
        """
        n, K = prediction_rows(y_prob, tolerance=ROW_SUM_TOLERANCE).shape  # (checked; divided by their sums later)
        classes = self._classes(y_true, n, K)
        Y = np.eye(K)[_class_ids(y_true, classes, n)]
        val = None
        validation = _validation(validation, 2)
        if validation is not None:
            Pv, yv = validation[0], validation[1]
            nv = len(prediction_rows(Pv, K, "validation[0]", ROW_SUM_TOLERANCE))
            val = (Pv, np.eye(K)[_class_ids(yv, classes, nv, "validation[1]", "validation[0]")])
        recalibrator = fit_scaling(y_prob, Y, sample_weight, self.kind, kappa=self.kappa, l2=self.l2,
                                   validation=val, l2_grid=self.l2_grid)
        self.recalibrator_, self.classes_, self.n_features_in_ = recalibrator, classes, K
        self._parameters(recalibrator)
        return self

    def _parameters(self, recalibrator: Recalibrator) -> None:
        """The fitted map's parameters as attributes (Table 3's names, ending in ``_``)."""

    def predict_proba(self, y_prob) -> np.ndarray:
        """The recalibrated predictions, every entry positive, rows summing to 1, columns in the
        order of :attr:`classes_` (``y_prob``: rows of the fitted ``K`` probabilities, each summing
        to 1 within :data:`huc_ref.fast.ROW_SUM_TOLERANCE`, and divided by its sum first; a Dask
        Array or DataFrame gives a Dask collection, row block by row block:
        :func:`huc_ref.fast.scale.lazy_predictions`)."""
        if _lazy(y_prob):
            from .fast.scale import lazy_predictions
            return lazy_predictions(self, y_prob)
        recalibrator = self._fitted("recalibrator_")
        rows = as_floats(y_prob, "y_prob")
        prediction_rows(rows, self.n_features_in_, tolerance=ROW_SUM_TOLERANCE)  # (the map divides by the sums)
        return recalibrator(rows)


class TemperatureScaling(_Scaling):
    """``softmax(log p / T)`` (Table 3), ``T`` from a bounded scalar search (H.6, K.1); fitted
    ``T`` in :attr:`temperature_`.

    Parameters
    ----------
    l2 : float, default 1e-4
        H.6's ``lambda`` (eq. 188), used where ``fit`` is given no ``validation``.
    kappa : float, default 1e-10
        K.1's ``kappa_init`` smoothing ``(1 - kappa) p + kappa / K``.
    l2_grid : iterable of float, default (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)
        The lambdas tried where ``fit`` is given ``validation`` (K.1).
    labels : array-like, optional
        The classes of ``y_prob``'s columns, in order (e.g. a classifier's ``classes_``); None:
        the sorted distinct labels of ``y_true``.

    Attributes
    ----------
    temperature_ : float
        The fitted ``T``.
    classes_ : ndarray
        The columns' classes.
    n_features_in_ : int
        ``K``, the number of columns.
    recalibrator_ : Recalibrator
        The fitted map (:class:`huc_ref.recalibration.Recalibrator`).

    Examples
    --------
    >>> P = np.array([[0.9, 0.1]] * 4)
    >>> m = TemperatureScaling(l2=0.0).fit(P, [0, 0, 1, 0])
    >>> round(float(m.predict_proba(P)[0, 0]), 6)  # the empirical frequency 3/4
    0.75
    """

    kind = "temperature"

    def _parameters(self, recalibrator):
        self.temperature_ = recalibrator.temperature


class VectorScaling(_Scaling):
    """``softmax(a * log p + b)`` (Table 3), fitted by trust-region Newton-CG (H.6, K.1); fitted
    ``a`` and ``b`` in :attr:`a_` and :attr:`b_`.

    Parameters
    ----------
    l2 : float, default 1e-4
        H.6's ``lambda`` (eq. 188), used where ``fit`` is given no ``validation``.
    kappa : float, default 1e-10
        K.1's ``kappa_init`` smoothing ``(1 - kappa) p + kappa / K``.
    l2_grid : iterable of float, default (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)
        The lambdas tried where ``fit`` is given ``validation`` (K.1).
    labels : array-like, optional
        The classes of ``y_prob``'s columns, in order (e.g. a classifier's ``classes_``); None:
        the sorted distinct labels of ``y_true``.

    Attributes
    ----------
    a_, b_ : ndarray of shape (K,)
        The fitted scales and offsets.
    classes_ : ndarray
        The columns' classes.
    n_features_in_ : int
        ``K``, the number of columns.
    recalibrator_ : Recalibrator
        The fitted map (:class:`huc_ref.recalibration.Recalibrator`).

    Examples
    --------
    >>> P = np.array([[0.9, 0.1]] * 4)
    >>> m = VectorScaling(l2=0.0).fit(P, [0, 0, 1, 0])
    >>> round(float(m.predict_proba(P)[0, 0]), 4), m.a_.shape
    (0.75, (2,))
    """

    kind = "vector"

    def _parameters(self, recalibrator):
        self.a_, self.b_ = np.diag(recalibrator.W).copy(), recalibrator.b


class DirichletScaling(_Scaling):
    """``softmax(W log p + b)`` (Table 3; Kull et al., 2019), fitted by trust-region Newton-CG (H.6,
    K.1); fitted ``W`` and ``b`` in :attr:`W_` and :attr:`b_`.

    Parameters
    ----------
    l2 : float, default 1e-4
        H.6's ``lambda`` (eq. 188), used where ``fit`` is given no ``validation``.
    kappa : float, default 1e-10
        K.1's ``kappa_init`` smoothing ``(1 - kappa) p + kappa / K``.
    l2_grid : iterable of float, default (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)
        The lambdas tried where ``fit`` is given ``validation`` (K.1).
    labels : array-like, optional
        The classes of ``y_prob``'s columns, in order (e.g. a classifier's ``classes_``); None:
        the sorted distinct labels of ``y_true``.

    Attributes
    ----------
    W_ : ndarray of shape (K, K)
        The fitted matrix.
    b_ : ndarray of shape (K,)
        The fitted offsets.
    classes_ : ndarray
        The columns' classes.
    n_features_in_ : int
        ``K``, the number of columns.
    recalibrator_ : Recalibrator
        The fitted map (:class:`huc_ref.recalibration.Recalibrator`).

    Examples
    --------
    >>> P = np.array([[0.9, 0.1]] * 4)
    >>> m = DirichletScaling(l2=0.0).fit(P, [0, 0, 1, 0])
    >>> round(float(m.predict_proba(P)[0, 0]), 4), m.W_.shape
    (0.75, (2, 2))
    """

    kind = "dirichlet"

    def _parameters(self, recalibrator):
        self.W_, self.b_ = recalibrator.W, recalibrator.b


SCALINGS = {cls.kind: cls for cls in (TemperatureScaling, VectorScaling, DirichletScaling)}


#: The most rules (kept updates) a model holds, and so the most updates a fit runs (K.1's budget of
#: 100 passes over up to 1,000 branching nodes).  Applying a model costs time linear in its rules
#: (each is an audit-sized pass over the rows: about 0.4 s per 1,000 rules on 200 rows), so the
#: reader refuses a file of more rather than run unboundedly.
MAX_RULES = 100_000


def _loss_note(record) -> str:
    """A boosting update's log loss, as a progress line shows it (a float, or the certified engine's decimal text)."""
    value = record.get("log_loss_after")
    try:
        return f", log loss {float(value):.6g}"
    except (TypeError, ValueError):
        return ""


class HUCBoost(_Estimator):
    """HUC-Boost (Algorithm 1/3; ``method="uc"``: UC-Boost) as a recalibrator (Sec. 5.2, K.1).

    ``fit`` boosts on the calibration predictions with K.1's settings by default (violations
    above ``epsilon = 0.001`` corrected; ``select="passes"``, at most ``max_passes = 100`` passes
    over the branching nodes; UC-Boost at most 100 updates), keeps the update prefix chosen on
    validation data (K.1: "Validation selects the returned update prefix") and stores the kept
    updates as rules in :attr:`rules_`; ``predict_proba`` applies them to new predictions (the
    subgroups by name, as at fit).

    Parameters
    ----------
    tree : LabelTree
        The label tree ``T``; the columns of ``y_prob`` are its labels.
    utilities : dict
        The utility family ``U``, by name.
    method : {"huc", "uc"}
        HUC-Boost (Algorithm 1) or UC-Boost.
    epsilon : float, str or Fraction
        Violations above it are corrected (K.1: 0.001).  A float is the decimal it prints as:
        ``0.01`` is exactly 1/100 (``Fraction(repr(x))``), for both engines, as is ``"0.01"``.
    select : {"passes", "greedy", "drain"}
        K.1's passes over the branching nodes, or the largest violation each time.
    step : "adaptive", or a float, str or Fraction
        Theorem 3.5's step ``Gamma / Lambda``, or a fixed step magnitude (a float read as ``epsilon``).
    max_updates : int or None
        At most this many updates (at most :data:`MAX_RULES`); None: K.1's budget, 100 passes
        over the branching nodes (UC-Boost: 100 updates), capped at :data:`MAX_RULES`.
    max_passes : int
        K.1's budget of passes (100).
    arithmetic : {"float64", "certified", "exact"} or None
        The numbers of the boosting (:func:`huc_ref.engines.boost_arithmetic`): ``"float64"``
        (None, the default), ``"certified"`` (every decision certified: float64 with rigorous
        error bounds, python-flint's Arb, and the certified engine for what they cannot decide; the
        ``certified`` extra) or ``"exact"`` (the certified engine alone, slower).
    initial : TemperatureScaling, VectorScaling, DirichletScaling or None
        A scaling fitted first on the same calibration rows (the two-stage methods of H.2).  With
        validation rows and ``prefix_guard`` set (not None), it is used only where it does not
        raise their log loss (:func:`huc_ref.replay.log_loss_guard`; a condition the paper does
        not state), else not used, with a :class:`ScalingNotKeptWarning`.
    kappa : float
        K.1's ``kappa_init`` smoothing.
    labels : array-like or None
        The columns' labels in order (e.g. ``clf.classes_``); None: the tree's label order.
    validation_fraction : float
        Without ``validation=`` at ``fit``, this fraction of the calibration rows, stratified by
        label, is held out as K.1's validation data (:func:`huc_ref.replay.held_out_rows`;
        default 0.3).  K.1 fits on calibration data and selects on validation data, so the
        held-out rows choose the prefix and are audited in :attr:`report_`, and the rules are
        fitted on the rest.
    prefix_guard : float or None
        A prefix is kept only where it lowers the validation log loss of the initial
        predictions by at least this many standard errors (default 2;
        :func:`huc_ref.replay.select_prefix`); None: K.1's smallest validation HUC alone.
    null_draws : int or None
        :attr:`report_`'s p-values under the null of calibration, from this many redraws; their
        cost is checked before the boosting (:func:`huc_ref.significance.check_null_work`).
    seed : int
        Seeds the held-out split and the null redraws.
    verbose : bool or int
        Progress of the boosting and of the prefix selection on stderr (tqdm's bars where tqdm
        is installed, else a line every 2 seconds).
    max_null_work : int or None
        The budget of ``null_draws``' audits (None: the default budget of
        :func:`huc_ref.significance.check_null_work`).
    engine : {"fast", "exact"} or None
        The deprecated spelling of ``arithmetic`` (a DeprecationWarning): ``"fast"`` is float64,
        ``"exact"`` certified where python-flint is installed, else exact.

    Attributes
    ----------
    rules_ : list
        The kept updates ``(subgroup index, utility, node id, lo, hi, alpha)``, in order.
    n_updates_, n_updates_run_, stopped_ :
        The updates kept, the updates run, and why the run stopped.
    classes_ : ndarray
        The columns' labels (``labels``, a DataFrame's column names, or the tree's labels).
    n_features_in_ : int
        ``K``, the number of labels.
    validation_ : {"held-out", "given", "none"}
        Where the prefix was chosen; ``held_out_``: the calibration rows held out (or None).
    validation_errors_ : list or None
        The validation HUC (UC) after 0, 1, ... updates.
    report_ : dict
        The audits (fast engine) of the predictions before and after, on the validation rows
        (held out or given), else on the calibration rows.
    run_ : BoostResult
        The run (absent from a loaded model).
    initial_, initial_kept_ :
        The fitted first-stage scaling where it is used (else None), and whether ``initial`` was
        kept (None: no ``initial``).

    Warns
    -----
    NoValidationWarning
        ``fit(..., validation=False)``: every update run is kept, named with their number.
    ScalingNotKeptWarning
        ``initial`` raises the validation log loss, and is not used.

    Examples
    --------
    App. D.1 as a sample (p = 1/4 each; labels y1 x2, y3 x3, y4 x3): boosting removes HUC; the
    same rows (the sample is the population) choose the prefix.

    >>> from huc_ref import LabelTree, Table, fast
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> us = {"u": Table(t, [-1, 1, 1, 1])}
    >>> P, y = np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3]
    >>> fast.audit(y, P, t, us).huc.sup  # D.1's HUC
    0.25
    >>> model = HUCBoost(t, us, epsilon=0.01, prefix_guard=None).fit(P, y, validation=(P, y))
    >>> model.stopped_, fast.audit(y, model.predict_proba(P), t, us).huc.sup <= 0.01
    ('tolerance', True)
    >>> bool(np.allclose(model.predict_proba(P), model.run_.predictions))  # the rules replay the run
    True
    >>> model.classes_.tolist(), model.predict(P[:1]).tolist()
    (['y1', 'y2', 'y3', 'y4'], ['y3'])
    >>> P80, y80 = np.tile(P, (10, 1)), y * 10
    >>> report = HUCBoost(t, us, epsilon="1/100", null_draws=99).fit(P80, y80, validation=(P80, y80)).report_
    >>> report["before"].significance.huc, report["after"].significance.huc  # 80 rows: D.1's HUC is real, the rest not
    (Fraction(1, 50), Fraction(63, 100))
    """

    def __init__(self, tree: LabelTree, utilities: dict, *, method: str = "huc", epsilon="0.001",
                 select: str = "passes", step="adaptive", max_updates: int | None = None, max_passes: int = 100,
                 arithmetic: str | None = None, initial=None, kappa: float = KAPPA_INIT, labels=None,
                 validation_fraction: float = 0.3, prefix_guard: float | None = 2.0, null_draws: int | None = None,
                 seed: int = 0, verbose: int = 0, max_null_work: int | None = None, engine: str | None = None):
        # (scikit-learn's estimator: every hyper-parameter a keyword of the constructor, hence more than 12)
        self.tree, self.utilities, self.method, self.epsilon = tree, utilities, method, epsilon
        self.select, self.step, self.max_updates, self.max_passes = select, step, max_updates, max_passes
        self.arithmetic, self.engine, self.initial, self.kappa, self.labels = arithmetic, engine, initial, kappa, labels
        self.validation_fraction, self.prefix_guard = validation_fraction, prefix_guard
        self.null_draws, self.seed, self.verbose, self.max_null_work = null_draws, seed, verbose, max_null_work

    def _arithmetic(self) -> str:
        """The numbers of the fit (:func:`huc_ref.engines.boost_arithmetic`; default ``"float64"``),
        the deprecated ``engine`` read as it was: ``"fast"`` float64, ``"exact"`` certified float64
        where python-flint is installed, else the certified engine (docs/specification.md §4).

        >>> HUCBoost(LabelTree.from_children("r", {"r": ["a", "b"]}), {}, arithmetic="certified")._arithmetic()
        'certified'
        """
        if self.engine is None:
            return boost_arithmetic("float64" if self.arithmetic is None else self.arithmetic)
        check_engine(self.engine)
        if self.arithmetic is not None:
            raise HUCError(f"engine: not taken with arithmetic={given(self.arithmetic)} (engine= is deprecated); "
                           "give arithmetic alone", kind="option")
        new = "float64" if self.engine == "fast" else "certified" if importlib.util.find_spec("flint") else "exact"
        deprecated(f"engine={self.engine!r}", f"arithmetic={new!r}", stacklevel=5)
        return new

    def _check_params(self, n: int = 1, where: str = "") -> dict:
        """The constructor's arguments, checked (scikit-learn's convention: ``__init__`` stores,
        ``fit`` checks), as the boosting options (``epsilon`` and a fixed ``step`` exact; the
        update cap); ``n`` rows; ``where`` prefixes a message (a model file's ``options.``)."""
        from .significance import check_null
        if not isinstance(self.tree, LabelTree):
            raise HUCError(f"tree: expected a LabelTree, got {type(self.tree).__name__}", kind="tree")
        with _within(where):
            if not one_of(self.method, METHODS):
                raise HUCError(f"method: expected 'huc' or 'uc', got {given(self.method)}", kind="option")
            self.arithmetic_ = self._arithmetic()
            if not is_integer(self.max_passes) or self.max_passes < 1:
                raise HUCError(f"max_passes: must be a positive integer, got {given(self.max_passes)}", kind="option")
            if self.max_updates is not None and not (is_integer(self.max_updates)
                                                     and 0 <= self.max_updates <= MAX_RULES):
                raise HUCError(f"max_updates: expected None or an integer from 0 to {MAX_RULES} (MAX_RULES, the most "
                               f"rules a model holds), got {given(self.max_updates)}", kind="option")
            epsilon = _decimal(self.epsilon, "epsilon")
            step = self.step if isinstance(self.step, str) else _decimal(self.step, "step")
            budget = 100 if self.method == "uc" else int(self.max_passes) * max(1, len(self.tree.branching_nodes))
            cap = int(self.max_updates) if self.max_updates is not None else min(budget, MAX_RULES)
            options = dict(method=self.method, epsilon=epsilon, step=step, max_updates=cap,
                           select=self.select if self.method == "huc" else "greedy", max_passes=int(self.max_passes))
            boost_settings(self.tree, n, self.utilities, **{**options, "select": self.select})
            if self.null_draws is not None:  # (before the boosting: the report draws them after it)
                check_null(self.null_draws, self.seed)
                if one_of(self.null_draws, ("exact",)):
                    raise HUCError("null_draws: 'exact' enumerates the label assignments of an exact distribution "
                                   "(huc_ref.audit); the fit's report draws labels: give a number of draws",
                                   kind="option")
            elif not is_integer(self.seed) or self.seed < 0:
                raise HUCError(f"seed: expected a non-negative integer, got {given(self.seed)}", kind="option")
            if self.initial is not None and not isinstance(self.initial, _Scaling):
                raise HUCError("initial: expected None, TemperatureScaling(), VectorScaling() or DirichletScaling() "
                               f"(H.2's first stage), got {given(self.initial, 60)}", kind="option")
            fraction = self.validation_fraction
            if isinstance(fraction, bool) or not isinstance(fraction, Real) or not 0 < fraction < 1:
                raise HUCError(f"validation_fraction: expected a number in (0, 1), the share of the calibration rows "
                               f"held out to choose the prefix (K.1), got {given(fraction, 40)}", kind="option")
            guard = self.prefix_guard
            if guard is not None and (isinstance(guard, bool) or not isinstance(guard, Real)
                                      or not 0 <= guard < math.inf):
                raise HUCError(f"prefix_guard: expected None or a finite number >= 0 of standard errors, got "
                               f"{given(guard, 40)}", kind="option")
            if not (isinstance(self.verbose, bool) or is_integer(self.verbose) and self.verbose >= 0):
                raise HUCError(f"verbose: expected True, False or an integer >= 0, got {given(self.verbose, 40)}",
                               kind="option")
        return options

    def _columns(self, y_prob, where="y_prob", learned: bool = False):
        """``(y_prob, labels, order)``: a table's array, its columns' labels (``labels=`` or a
        DataFrame's column names; None: unnamed), and where the tree's labels are among them
        (None: in the tree's order).  ``learned`` (after fit): unnamed columns are in the order
        of :attr:`classes_`, which the fit declared (scikit-learn's convention)."""
        if not isinstance(self.tree, LabelTree):
            raise HUCError(f"tree: expected a LabelTree, got {type(self.tree).__name__}", kind="tree")
        y_prob, labels = self.tree.frame_columns(y_prob, self.labels)  # (a DataFrame's column names)
        if labels is None and learned:
            labels = self._fitted("classes_")
        return y_prob, labels, self.tree.column_order(labels, what=where)

    def _inputs(self, y_prob, where="y_prob", learned: bool = False):
        """The predictions in the tree's label order, with K.1's smoothing."""
        y_prob, _, order = self._columns(y_prob, where, learned)
        P = _probabilities(y_prob, self.tree.K, self.kappa, where)
        return P if order is None else P[:, order]

    def fit(self, y_prob, y_true, *, subgroups=None, sample_weight=None, validation=None):
        """Boost on calibration data (Algorithm 1, or UC-Boost, with K.1's settings) and keep the
        update prefix validation data choose (K.1).

        Parameters
        ----------
        y_prob : array-like or DataFrame, n x K
            Calibration predictions (a classifier's ``predict_proba``), columns as ``labels``.
        y_true : array-like of n labels
            Label names, or integers: positions among the columns (``classes_[y]`` is the label,
            scikit-learn's convention), which are in the tree's label order unless ``labels`` or
            a DataFrame's column names say otherwise.
        subgroups : mapping or None
            Subgroup indicators by name (values in [-1, 1]); "all" is always included.
        sample_weight : array-like or None
            Positive weights of the rows.
        validation : None, tuple or False
            None (the default): hold out ``validation_fraction`` of the rows, stratified by label
            (seeded by ``seed``), to choose the prefix.  ``(y_prob, y_true[, subgroups])``: rows
            of their own.  False: no validation; every update is kept, with a
            :class:`NoValidationWarning` naming their number.

        Returns
        -------
        HUCBoost
            ``self``, fitted.

        Raises
        ------
        HUCError
            A bad argument (one error naming it), or calibration rows too few to hold any out
            (no label with two rows: pass ``validation=`` or ``validation=False``).

        Examples
        --------
        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
        >>> P, y = np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3]  # App. D.1 as a sample
        >>> model = HUCBoost(t, {"u": Table(t, [-1, 1, 1, 1])}, epsilon="1/100", prefix_guard=None)
        >>> model.fit(P, y, validation=(P, y)).n_updates_, model.stopped_
        (13, 'tolerance')
        >>> model.rules_[0]  # (subgroup, utility, node id, interval, step): v0 on the score 1/2, Gamma/Lambda = 1
        (0, 'u', 0, 0.5, 0.5, 1.0)
        >>> model.fit(np.tile(P, (5, 1)), y * 5).validation_, len(model.held_out_)  # 12 of 40 rows held out
        ('held-out', 12)
        """
        return self._fit(self._fit_inputs(y_prob, y_true, subgroups=subgroups, sample_weight=sample_weight,
                                          validation=validation))

    def _fit_inputs(self, y_prob, y_true, *, subgroups=None, sample_weight=None, validation=None) -> dict:
        """:meth:`fit`'s arguments, every one checked before any boosting (K.1's calibration and
        validation rows, held out where ``validation`` is None, and Algorithm 1's options), as the
        keywords of :meth:`_fit` (the command line says its banner between the two)."""
        P = self._inputs(y_prob)
        options = self._check_params(len(P))
        _, labels, _ = self._columns(y_prob)
        K, n = self.tree.K, len(P)
        y = label_ids(y_true, self.tree, n, columns=labels)  # (integers: positions among the columns, classes_[y])
        w = _weights(sample_weight, n)  # one check, one message, whichever engine
        weights = None if w is None else np.asarray(sample_weight, dtype=float)  # (as given: the audits' weights)
        names, C = _subgroup_values(subgroups, n)
        validation = _validation(validation)
        held = Pv = yv = Cv = wv = None
        if validation is None:  # K.1's validation rows, held out of the calibration rows
            # (stratified by the labels' names: the same rows whatever order the tree lists its labels in)
            held = held_out_rows(np.asarray(self.tree.labels)[y], self.validation_fraction, self.seed)
            rest = np.setdiff1d(np.arange(n), held)
            Pv, yv, Cv, wv = P[held], y[held], C[held], None if w is None else weights[held]
            P, y, C = P[rest], y[rest], C[rest]
            w, weights = (None, None) if w is None else (w[rest], weights[rest])
        elif validation is not False:  # checked before the boosting
            Pv = self._inputs(validation[0], "validation[0]")
            _, labels_v, _ = self._columns(validation[0], "validation[0]")
            yv = label_ids(validation[1], self.tree, len(Pv), "validation[1]", "validation[0]", columns=labels_v)
            _, Cv = _subgroup_values(validation[2] if len(validation) > 2 else None, len(Pv), names, "validation[2]",
                                     "validation[0]")
        if self.null_draws is not None:  # (the report's two audits, each checked before the boosting)
            from .significance import candidate_rows, check_null_work
            check_null_work(self.null_draws, len(P) if validation is False else len(Pv), K, len(self.utilities),
                            candidate_rows(self.utilities, len(names)), engine="fast", max_work=self.max_null_work)
        return dict(options=options, labels=labels, P=P, y=y, w=w, weights=weights, names=names, C=C,
                    validation=validation, held=held, Pv=Pv, yv=yv, Cv=Cv, wv=wv)

    def _fit(self, inputs: dict) -> HUCBoost:
        """The boosting and the choice of its prefix (K.1) on the inputs :meth:`_fit_inputs` checked."""
        options, labels, P, y, w, weights, names, C, validation, held, Pv, yv, Cv, wv = (inputs[k] for k in (
            "options", "labels", "P", "y", "w", "weights", "names", "C", "validation", "held", "Pv", "yv", "Cv", "wv"))
        K = self.tree.K
        P0 = P
        self.initial_, self.initial_kept_ = None, None
        if self.initial is not None:  # H.2's first stage, on the columns in the tree's order
            first = type(self.initial)(**{**self.initial.get_params(deep=False), "labels": np.arange(K)})
            first.fit(P, y, sample_weight=weights, validation=None if validation is False else (Pv, yv))
            self.initial_kept_ = self._keep_initial(first, Pv, yv, names, Cv, wv) if validation is not False else True
            if self.initial_kept_:
                self.initial_ = first
                P = first.predict_proba(P)
        name = type(self).__name__
        with _progress(self.verbose, f"{name}: updates", options["max_updates"]) as bar:
            def progress(t, record):
                bar(t, _loss_note(record))
            if self.arithmetic_ == "float64":  # from the arrays themselves: no exact number is built
                run = boost_sample(self.tree, P, y, self.utilities, subgroups=names, C=C, w=w, progress=progress,
                                   **options)
            else:  # certified float64, or the certified engine alone: the same decisions and certificates
                run = boost(_sample(self.tree, P, y, names, C, w), self.utilities, arithmetic=self.arithmetic_,
                            progress=progress, **options)
        keep, errors = len(run.steps), None
        if validation is not False:
            Qv = Pv if self.initial_ is None else self.initial_.predict_proba(Pv)
            with _progress(self.verbose, f"{name}: prefixes audited", keep + 1) as bar:
                keep, errors = select_prefix(run, Sample(self.tree, Qv, yv, names, Cv, wv), self.utilities,
                                             guard=self.prefix_guard, progress=bar)
        if errors is not None and keep == 0 and len(errors) > 1:
            k1 = min(range(len(errors)), key=errors.__getitem__)  # (K.1's rule alone: the first smallest error)
            if k1 > 0:
                warnings.warn(f"{name}.fit: none of the run's {len(errors) - 1} updates is kept: no prefix lowered "
                              f"the validation log loss by prefix_guard={self.prefix_guard} standard errors; the "
                              f"smallest validation {self.method.upper()} alone (K.1) keeps {k1} (validation "
                              f"{self.method.upper()} {errors[0]:.4g} -> {errors[k1]:.4g}): pass prefix_guard=None "
                              "for K.1's rule, a smaller prefix_guard, or more validation rows",
                              NoUpdateKeptWarning, stacklevel=3)
        self.subgroups_, self.run_, self.validation_errors_ = names, run, errors
        self.rules_ = [(k, u, a, float(lo), float(hi), float(alpha)) for k, u, a, lo, hi, alpha in run.steps[:keep]]
        self.n_updates_, self.n_updates_run_, self.stopped_ = keep, len(run.steps), run.stopped
        self.validation_ = "none" if validation is False else "given" if held is None else "held-out"
        self.held_out_ = held
        self.classes_ = np.asarray(self.tree.labels if labels is None else labels)
        self.n_features_in_ = K
        if validation is False:
            warnings.warn(f"{name}.fit(validation=False): all {keep} updates of the run are kept, none chosen on "
                          "held-out rows (K.1: \"Validation selects the returned update prefix\"), so they may fit "
                          "the calibration rows' noise; leave validation unset to hold out validation_fraction = "
                          f"{self.validation_fraction} of the rows, or pass validation=(y_prob, y_true)",
                          NoValidationWarning, stacklevel=3)
        if validation is False:
            self.report_ = self._report("calibration", P0, y, C, weights)
        else:
            self.report_ = self._report("validation" if held is None else "held-out", Pv, yv, Cv, wv)
        return self

    def _keep_initial(self, scaling, Pv, yv, names, Cv, wv) -> bool:
        """Whether H.2's first stage ``scaling`` (fitted) is used: where ``prefix_guard`` is set,
        only if it does not raise the validation log loss of the predictions ``Pv``
        (:func:`huc_ref.replay.log_loss_guard` at 0 standard errors), so that a scaling fitted to a
        few rows' noise (Dirichlet's ``K^2 + K`` parameters on tens of rows) does not worsen the
        predictions; else a :class:`ScalingNotKeptWarning`.  A prefix must clear ``prefix_guard``
        standard errors because it is the best of many replayed on the same rows; the scaling is
        one candidate, its regularisation already chosen on them, so the bar is no loss."""
        if self.prefix_guard is None:
            return True
        # A deviation: H.2 "learns a finite-dimensional softmax recalibrator from the same sample and then
        # runs Algorithm 3 from its output", always; here the recalibrator is skipped where the held-out
        # rows show it raising the log loss (tens of rows cannot fit K^2 + K parameters).
        held = Sample(self.tree, Pv, yv, names, Cv, wv)
        kept, change, error = log_loss_guard(held, Pv, scaling.predict_proba(Pv), 0.0)
        if not kept:
            warnings.warn(f"{type(self).__name__}.fit: the initial {type(self.initial).__name__} raises the "
                          f"validation log loss by {change:.4g} per row (standard error {error:.3g}, {held.n} rows), "
                          "so it is not used (initial_kept_ = False) and the rules are fitted on the predictions as "
                          "given; pass prefix_guard=None to keep it, or give more calibration rows",
                          ScalingNotKeptWarning, stacklevel=3)
        return kept

    def _report(self, data: str, P, y, C, sample_weight) -> dict:
        """The fit report: the audits (fast engine) of the predictions ``P`` (smoothed, in the
        tree's order) and of the recalibrated ones, on the validation rows (given or held out),
        else on the calibration rows (``data`` says which); with ``null_draws`` each carries
        p-values under the null of calibration (:mod:`huc_ref.significance`), so a remaining
        violation can be told from noise.  On the calibration rows the "after" p-values are
        optimistic: the rules were fitted to their labels.  Rows are weighed by ``sample_weight``."""
        from .fast import audit
        groups = {g: C[:, k] for k, g in enumerate(self.subgroups_)}
        options = dict(subgroups=groups, null_draws=self.null_draws, seed=self.seed, sample_weight=sample_weight,
                       max_null_work=self.max_null_work)
        tree_order = self.tree.labels  # (both arrays below are in it)
        before = audit(y, P, self.tree, self.utilities, labels=tree_order, **options)
        after = audit(y, self._recalibrated(P, C), self.tree, self.utilities, labels=tree_order, **options)
        return {"data": data, "before": before, "after": after}

    def predict_proba(self, y_prob, *, subgroups=None) -> np.ndarray:
        """The recalibrated predictions of new data (labels not needed): the kept rules, Algorithm
        1's updates (Sec. 3.2's branch tilts), applied in order (:func:`huc_ref.fast.boost.apply_rules`),
        the columns in the order of :attr:`classes_` (the columns' order at fit, as :meth:`predict`
        reads them).  A DataFrame's columns are read by name; a bare array's are taken in the order
        of :attr:`classes_` (the order the fit declared: ``labels=``, a DataFrame's column names,
        or the tree's labels).

        Each output row is checked to be a probability row: finite, nonnegative entries summing
        to 1 within :func:`row_sum_tolerance`; a row that is not is a HUCError naming the first
        rule after which it was not (float64's guard: :func:`huc_ref.fast.boost.tilt` keeps
        every step's rows normalised).
        Predictions (or subgroups) held as a Dask Array or DataFrame give a Dask collection of the
        same kind, computed row block by row block (:func:`huc_ref.fast.scale.lazy_predictions`).

        Parameters
        ----------
        y_prob : array-like or DataFrame, n x K
            New predictions, columns as at :meth:`fit` (``labels``, or a DataFrame's names).
        subgroups : mapping, optional
            Subgroup indicators by name, the names the model was fitted with.

        Returns
        -------
        ndarray of shape (n, K)
            The recalibrated predictions, in the columns' order.

        Raises
        ------
        HUCError
            Before :meth:`fit` (also scikit-learn's ``NotFittedError``), for a bad argument, or
            where an output row is not a probability row.

        Examples
        --------
        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
        >>> P, y = np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3]  # App. D.1 as a sample
        >>> from huc_ref import fast
        >>> us = {"u": Table(t, [-1, 1, 1, 1])}
        >>> model = HUCBoost(t, us, epsilon="1/100", prefix_guard=None).fit(P, y, validation=(P, y))
        >>> fast.audit(y, P, t, us).huc.sup, fast.audit(y, model.predict_proba(P), t, us).huc.sup <= 1 / 100
        (0.25, True)
        """
        self._fitted("rules_")
        if _lazy(y_prob, subgroups):  # Dask collections: the same rules, row block by row block
            from .fast.scale import lazy_predictions
            return lazy_predictions(self, y_prob, subgroups)
        P = self._inputs(y_prob, learned=True)
        _, C = _subgroup_values(subgroups, len(P), self.subgroups_)
        out = self._recalibrated(P, C)
        order = self.tree.column_order(self.classes_)
        if order is not None:  # (in the order of classes_, as predict reads it)
            out[:, order] = out.copy()
        return out

    def score(self, y_prob, y_true, sample_weight=None, *, subgroups=None) -> float:
        """Accuracy (scikit-learn's ``score``; K.1: "We evaluate UC and HUC, as well as accuracy"): the
        weighted fraction of rows whose label (a name or a label id, as :meth:`fit` reads ``y_true``)
        is the class :meth:`predict` gives.

        Parameters
        ----------
        y_prob : array-like or DataFrame, n x K
            Predictions, as :meth:`predict_proba` reads them.
        y_true : array-like of n labels
            Label names or label ids.
        sample_weight : array-like of shape (n,), optional
            Weights of the rows; uniform when omitted.
        subgroups : mapping, optional
            Subgroup indicators by name, as :meth:`predict_proba` reads them.

        Returns
        -------
        float
            The weighted accuracy, in [0, 1].

        Examples
        --------
        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> P = [[0.75, 0.25], [0.25, 0.75]] * 8
        >>> m = HUCBoost(t, {"u": Table(t, [0, 1])}).fit(P, ["a", "b"] * 8)
        >>> m.score([[0.75, 0.25], [0.25, 0.75]], ["a", "a"]), m.score([[0.75, 0.25]], [0])
        (0.5, 1.0)
        """
        out = self.predict_proba(y_prob, subgroups=subgroups)  # (in the order of classes_)
        _, labels, _ = self._columns(y_prob, learned=True)
        order = self.tree.column_order(self.classes_)
        column_ids = np.arange(self.tree.K) if order is None else np.argsort(order)  # each column's label id
        hits = column_ids[np.argmax(out, axis=1)] == label_ids(y_true, self.tree, len(out), columns=labels)
        return float(np.average(hits, weights=sample_weight))

    def _recalibrated(self, P, C) -> np.ndarray:
        """The kept rules applied to ``P`` (smoothed, in the tree's label order; subgroup values
        ``C``), every output row checked to be a probability row."""
        if getattr(self, "initial_", None) is not None:  # (H.2's first stage, where fit kept it)
            P = self.initial_.predict_proba(P)
        # (the last step's rows only: each step's are a fresh array, and a list of them all grows with the rules)
        ((_, out),) = deque(apply_rules(self.method, self.rules_, self.tree, self.utilities, P, C), maxlen=1)
        tolerance = row_sum_tolerance(self.tree.K, len(self.rules_))
        if _bad_row(out, tolerance) is not None:
            for t, Q in apply_rules(self.method, self.rules_, self.tree, self.utilities, P, C):
                i = _bad_row(Q, row_sum_tolerance(self.tree.K, t))
                if i is not None:
                    where = "the initial scaling" if t == 0 else f"rule {t - 1} ({self._rule_text(t - 1)})"
                    raise HUCError(f"predict_proba: row {i} is not a probability row after {where}: entries "
                                   f"{printable(repr(Q[i].tolist()), 120)} (finite, nonnegative, summing to 1 within "
                                   f"{row_sum_tolerance(self.tree.K, t):.3g} expected); float64 lost the "
                                   "normalisation, a guard that should never be reached: please report it with the "
                                   "model (to_json())", kind="internal")
        return out

    def _rule_text(self, t: int) -> str:
        k, u, a, lo, hi, alpha = self.rules_[t]
        node = "the leaves" if a is None else f"node {self.tree.nodes[a]!r}"
        return f"subgroup {self.subgroups_[k]!r}, utility {u!r}, {node}, interval [{lo!r}, {hi!r}], alpha {alpha!r}"

    # ------------------------------------------------------------------ huc-model/1
    def to_json(self) -> dict:
        """The ``huc-model/1`` document: the tree, the utilities, the options, the initial map's
        parameters, the rules (Algorithm 1's kept updates; floats written exactly: JSON numbers
        round-trip float64) and the provenance; :func:`load_model` reads it back.

        Returns
        -------
        dict
            The document, JSON-serialisable.

        Raises
        ------
        HUCError
            Before :meth:`fit`.

        Examples
        --------
        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
        >>> P, y = np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3]  # App. D.1 as a sample
        >>> model = HUCBoost(t, {"u": Table(t, [-1, 1, 1, 1])}, epsilon="1/100", prefix_guard=None)
        >>> doc = model.fit(P, y, validation=(P, y)).to_json()
        >>> doc["format"], doc["subgroups"], len(doc["rules"]), doc["provenance"]["validation"]
        ('huc-model/1', ['all'], 13, 'given')
        >>> doc["rules"][0]
        {'subgroup': 'all', 'utility': 'u', 'node': 'v0', 'interval': [0.5, 0.5], 'alpha': 1.0}
        """
        from . import __version__
        rules = self._fitted("rules_")
        initial = None
        if getattr(self, "initial_", None) is not None:
            r = self.initial_.recalibrator_
            initial = {"kind": r.kind, "W": r.W.tolist(), "b": r.b.tolist(), "kappa": r.kappa}
        guard = None if self.prefix_guard is None else float(self.prefix_guard)
        classes = [c.item() if hasattr(c, "item") else c for c in np.asarray(self._fitted("classes_")).tolist()]
        return {"format": MODEL_FORMAT, "tree": self.tree.to_json(), "labels": list(self.tree.labels),
                "classes": classes,  # (the columns' order at fit: a bare array's at predict time)
                "utilities": {name: u.to_json() for name, u in self.utilities.items()},
                "subgroups": list(self.subgroups_), "method": self.method, "kappa": check_kappa(self.kappa),
                "options": {"epsilon": str(self.epsilon), "select": self.select, "step": str(self.step),
                            "max_updates": None if self.max_updates is None else int(self.max_updates),
                            "max_passes": int(self.max_passes), "arithmetic": self.arithmetic_,
                            "validation_fraction": float(self.validation_fraction), "prefix_guard": guard,
                            "seed": int(self.seed)},
                "initial": initial,
                "rules": [{"subgroup": self.subgroups_[k], "utility": u,
                           "node": None if a is None else self.tree.nodes[a], "interval": [lo, hi], "alpha": alpha}
                          for k, u, a, lo, hi, alpha in rules],
                "provenance": {"huc_ref": __version__, "updates_run": int(self.n_updates_run_),
                               "updates_kept": self.n_updates_, "stopped": self.stopped_,
                               "validation": self.validation_}}

    def save(self, path) -> Path:
        """Write :meth:`to_json` (the fitted Algorithm 1 updates, ``huc-model/1``) to ``path``.

        Parameters
        ----------
        path : str or Path
            The file written (replaced where it exists).

        Returns
        -------
        Path
            ``path``.

        Raises
        ------
        HUCError
            Before :meth:`fit`.

        Examples
        --------
        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
        >>> P, y = np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3]  # App. D.1 as a sample
        >>> import tempfile
        >>> model = HUCBoost(t, {"u": Table(t, [-1, 1, 1, 1])}, epsilon="1/100").fit(P, y, validation=(P, y))
        >>> path = model.save(Path(tempfile.mkdtemp()) / "model.json")
        >>> bool((load_model(path).predict_proba(P) == model.predict_proba(P)).all())  # bit for bit
        True
        """
        path = Path(path)
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        return path


def row_sum_tolerance(K: int, rules: int) -> float:
    """How far from 1 the sum of a row recalibrated by ``rules`` rules may be in float64:
    ``(rules + 2)(2K + 8) u + K tiny`` (``u = 2^-53``, ``tiny`` the smallest normal).

    The input row is divided by its sum and smoothed (K.1's ``kappa_init``), and an initial
    scaling is a softmax: each sums to 1 within ``(K + 2) u``.  A rule moves the sum by at most
    ``(2K + 8) u`` relatively (:func:`huc_ref.fast.boost.move`: the tilt sums to 1 within
    ``(d + 1) u``, and each label's scaling and the children's sums round), and the floor at
    ``tiny`` adds at most ``K tiny``.  At :data:`MAX_RULES` rules of a 100-label tree this is
    ``2.3e-9``.

    Parameters
    ----------
    K : int
        The number of labels.
    rules : int
        The number of rules applied.

    Returns
    -------
    float
        The tolerance.

    Examples
    --------
    >>> row_sum_tolerance(4, 0) == 2 * 16 * 2.0**-53 + 4 * 2.0**-1022
    True
    """
    return (rules + 2) * (2 * K + 8) * UNIT_ROUNDOFF + K * SMALLEST_NORMAL


def _bad_row(P: np.ndarray, tolerance: float) -> int | None:
    """The first row of ``P`` that is not a probability row (finite nonnegative entries summing to 1
    within ``tolerance``), or None."""
    with np.errstate(invalid="ignore", over="ignore"):
        ok = np.isfinite(P).all(axis=1) & (P >= 0).all(axis=1) & (np.abs(P.sum(axis=1) - 1.0) <= tolerance)
    return None if ok.all() else int(np.argmin(ok))


#: The largest step a model file may hold.  Every finite step gives probability rows
#: (:func:`huc_ref.fast.boost.tilt`); this bound keeps ``alpha h`` (``|h| <= 4``) finite as well.
MAX_ALPHA = 1e300

#: The largest float below 1: K.1's kappa_0 lies in the open interval (0, 1).
_BELOW_ONE = float(np.nextafter(1.0, 0.0))

#: Scores are means of utilities in [-1, 1]; float64 may put one a few ulps outside.
_SCORE_BOUND = 1.0 + 2.0**-20

_MODEL_FIELDS = ("format", "tree", "labels", "utilities", "subgroups", "method", "kappa", "options", "initial",
                 "rules", "provenance")
_OPTIONAL_MODEL_FIELDS = ("classes",)  # (absent: the tree's labels, the order of a file written without it)
_RULE_FIELDS = ("subgroup", "utility", "node", "interval", "alpha")
_OPTION_FIELDS = ("epsilon", "select", "step", "max_updates", "max_passes", "arithmetic", "engine",
                  "validation_fraction", "prefix_guard", "seed")  # (engine: the deprecated spelling, still read)
_STOPS = ("tolerance", "budget", "cap")  # (huc_ref.driver.drive's)
_VALIDATIONS = ("held-out", "given", "none")


def _field(obj, key: str, where: str, types, kind: str = "type"):
    """``obj[key]``, of one of ``types``, or one HUCError naming ``where.key``."""
    if key not in obj:
        raise HUCError(f"{where}{key}: missing", kind="missing_field")
    value = obj[key]
    if not isinstance(value, types) or isinstance(value, bool) and bool not in types:
        what = {str: "a string", list: "a list", dict: "an object"}.get(types[0], "a number")
        raise HUCError(f"{where}{key}: expected {what}, got {printable(repr(value), 60)}", kind=kind)
    return value


def _number(value, where: str, low: float, high: float, what: str) -> float:
    """A finite JSON number in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise HUCError(f"{where}: expected {what}, got {printable(repr(value), 60)}",
                       kind="type" if not isinstance(value, (int, float)) or isinstance(value, bool) else "range")
    return float(value)


def _only(obj, fields, where: str):
    for key in obj:
        if key not in fields:
            raise HUCError(f"{where}{printable(str(key), 80)}: unknown field of a {MODEL_FORMAT} document",
                           kind="unknown_field")


def _read_initial(spec, K: int):
    """The initial scaling of a model document (Table 3's maps), its parameters checked."""
    if not isinstance(spec, dict):
        raise HUCError(f"initial: expected null or an object, got {printable(repr(spec), 60)}", kind="type")
    _only(spec, ("kind", "W", "b", "kappa"), "initial.")
    kind = _field(spec, "kind", "initial.", (str,))
    if kind not in SCALINGS:
        raise HUCError(f"initial.kind: expected one of {sorted(SCALINGS)}, got {printable(repr(kind), 60)}",
                       kind="unknown_kind")
    kappa = _number(_field(spec, "kappa", "initial.", (int, float)), "initial.kappa", 5e-324, _BELOW_ONE,
                    "a number in (0, 1)")
    arrays = {}
    for key, shape in (("W", (K, K)), ("b", (K,))):
        value = _field(spec, key, "initial.", (list,))
        arr = np.array(value, dtype=object)
        if arr.shape != shape or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in arr.ravel()):
            raise HUCError(f"initial.{key}: expected {' x '.join(map(str, shape))} numbers", kind="length")
        if not all(abs(x) <= MAX_ALPHA for x in arr.ravel()):  # (before float(): JSON's 10**400 overflows it)
            raise HUCError(f"initial.{key}: entries must be at most {MAX_ALPHA:g} in magnitude", kind="range")
        arrays[key] = arr.astype(float)
    initial = SCALINGS[kind](kappa=kappa, labels=np.arange(K))
    initial.recalibrator_ = Recalibrator(kind, arrays["W"], arrays["b"], kappa)
    initial.classes_, initial.n_features_in_ = np.arange(K), K
    initial._parameters(initial.recalibrator_)
    return initial


def _read_rules(rules, tree: LabelTree, utilities, names, method: str) -> list:
    """The rules of a model document: each ``(subgroup, utility, node, interval, alpha)`` named
    in the model, at a branching node for HUC-Boost (none for UC-Boost), a finite interval
    ``lo <= hi`` and a finite step."""
    out = []
    branching, index = set(tree.branching_nodes), {name: k for k, name in enumerate(names)}
    for i, r in enumerate(rules):
        where = f"rules[{i}]."
        if not isinstance(r, dict):
            raise HUCError(f"rules[{i}]: expected an object", kind="type")
        _only(r, _RULE_FIELDS, where)
        group, name = _field(r, "subgroup", where, (str,)), _field(r, "utility", where, (str,))
        if group not in index:
            raise HUCError(f"{where}subgroup: {printable(repr(group), 80)} is not one of the model's subgroups",
                           kind="reference")
        if name not in utilities:
            raise HUCError(f"{where}utility: {printable(repr(name), 80)} is not one of the model's utilities",
                           kind="reference")
        if "node" not in r:
            raise HUCError(f"{where}node: missing", kind="missing_field")
        node = r["node"]
        if method == "uc" and node is not None:
            raise HUCError(f"{where}node: a UC-Boost rule moves the leaves (node null), got "
                           f"{printable(repr(node), 80)}", kind="structure")
        if method == "huc" and not (isinstance(node, str) and node in branching):  # (a list or object: no name)
            raise HUCError(f"{where}node: {printable(repr(node), 80)} is not a branching node of the tree "
                           "(HUC-Boost updates one, Algorithm 1)", kind="reference")
        interval = _field(r, "interval", where, (list,))
        if len(interval) != 2:
            raise HUCError(f"{where}interval: expected [lo, hi], got {len(interval)} numbers", kind="length")
        lo, hi = (_number(x, f"{where}interval[{j}]", -_SCORE_BOUND, _SCORE_BOUND, "a score in [-1, 1]")
                  for j, x in enumerate(interval))
        if lo > hi:
            raise HUCError(f"{where}interval: lo = {lo!r} is above hi = {hi!r}", kind="structure")
        alpha = _number(_field(r, "alpha", where, (int, float)), f"{where}alpha", -MAX_ALPHA, MAX_ALPHA,
                        f"a finite step of magnitude at most {MAX_ALPHA:g}")
        out.append((index[group], name, None if node is None else tree.id(node), lo, hi, alpha))
    return out


def _read_provenance(prov, rules: int) -> dict:
    """The provenance of a model document: the version that wrote it, the updates run (at least
    the rules kept, at most :data:`MAX_RULES`), the updates kept (the rules), why the run
    stopped, and where the prefix was chosen (optional)."""
    if not isinstance(prov, dict):
        raise HUCError("provenance: expected an object", kind="type")
    _only(prov, ("huc_ref", "updates_run", "updates_kept", "stopped", "validation"), "provenance.")
    _field(prov, "huc_ref", "provenance.", (str,))
    run = _field(prov, "updates_run", "provenance.", (int,))
    if not rules <= run <= MAX_RULES:
        raise HUCError(f"provenance.updates_run: expected an integer from {rules} (the rules kept) to {MAX_RULES}, "
                       f"got {run}", kind="range")
    if _field(prov, "updates_kept", "provenance.", (int,)) != rules:
        raise HUCError(f"provenance.updates_kept: {prov['updates_kept']} updates kept, but the model has {rules} "
                       "rules", kind="structure")
    for key, known in (("stopped", _STOPS), ("validation", _VALIDATIONS)):
        if (key in prov or key == "stopped") and _field(prov, key, "provenance.", (str,)) not in known:
            raise HUCError(f"provenance.{key}: expected one of {', '.join(map(repr, known))}, got "
                           f"{printable(repr(prov[key]), 60)}", kind="option")
    return prov


def load_model(source) -> HUCBoost:
    """A fitted :class:`HUCBoost` from a ``huc-model/1`` document (a dict, or a path to one): a
    full model, which predicts, saves, writes :meth:`HUCBoost.to_json` and clones as the fitted
    one does (its run, :attr:`HUCBoost.run_`, is not in the file).

    Every field is checked before anything is applied (a model file is input like any other):
    the tree, labels and utilities as in ``huc-case/1``, the subgroups, ``method``, ``kappa``,
    the options as :class:`HUCBoost`'s arguments, the initial scaling's shapes, each rule's
    names, node, interval and step, at most :data:`MAX_RULES` rules, and the provenance; a bad
    one gets one HUCError naming the place.

    Parameters
    ----------
    source : dict, str or Path
        A ``huc-model/1`` document, or the path of a file holding one.

    Returns
    -------
    HUCBoost
        The fitted model.

    Raises
    ------
    HUCError
        Naming the first field of the document that is missing, unknown or out of its rule.

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> P, y = [[0.5, 0.5]] * 4, [0, 1, 1, 1]
    >>> m = HUCBoost(t, {"u": Table(t, [0, 1])}, epsilon="1/100", prefix_guard=None).fit(P, y, validation=(P, y))
    >>> again = load_model(m.to_json())
    >>> bool(np.array_equal(again.predict_proba([[0.3, 0.7]]), m.predict_proba([[0.3, 0.7]])))
    True
    >>> again.to_json() == m.to_json()
    True
    >>> load_model({**m.to_json(), "rules": [{**m.to_json()["rules"][0], "node": "a"}]})
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: rules[0].node: 'a' is not a branching node of the tree (HUC-Boost updates one, Algorithm 1)
    """
    if not isinstance(source, (dict, str, Path)):
        raise HUCError(f"model: expected a huc-model/1 document (a dict) or a path to one, got {type(source).__name__}",
                       kind="type")
    doc = source if isinstance(source, dict) else load_json(read_document(Path(source), "model"), floats=True)
    if not isinstance(doc, dict) or doc.get("format") != MODEL_FORMAT:
        raise HUCError(f"format: expected {MODEL_FORMAT!r}", kind="format")
    _only(doc, _MODEL_FIELDS + _OPTIONAL_MODEL_FIELDS, "")
    for key in _MODEL_FIELDS:
        if key not in doc:
            raise HUCError(f"{key}: missing", kind="missing_field")
    tree, utilities = read_model_spec(doc)
    method = doc["method"]
    if method not in ("huc", "uc"):
        raise HUCError(f"method: expected 'huc' or 'uc', got {printable(repr(method), 60)}", kind="option")
    kappa = _number(doc["kappa"], "kappa", 5e-324, _BELOW_ONE, "a number in (0, 1)")
    names = doc["subgroups"]
    if not isinstance(names, list) or not names:
        raise HUCError("subgroups: expected a non-empty list of names", kind="type")
    check_names(names, "subgroups")
    options = doc["options"]
    if not isinstance(options, dict):
        raise HUCError("options: expected an object", kind="type")
    _only(options, _OPTION_FIELDS, "options.")
    initial = None if doc["initial"] is None else _read_initial(doc["initial"], tree.K)
    model = HUCBoost(tree, utilities, method=method, initial=initial, kappa=kappa, **options)
    model._check_params(where="options.")
    if not isinstance(doc["rules"], list):
        raise HUCError("rules: expected a list", kind="type")
    if len(doc["rules"]) > MAX_RULES:
        raise HUCError(f"rules: {len(doc['rules'])} rules, more than MAX_RULES = {MAX_RULES} (applying a model "
                       "costs time linear in its rules)", kind="too_large")
    rules = _read_rules(doc["rules"], tree, utilities, names, method)
    prov = _read_provenance(doc["provenance"], len(rules))
    model.initial_, model.initial_kept_ = initial, None if initial is None else True
    model.subgroups_ = list(names)
    model.rules_ = rules
    model.n_updates_, model.n_updates_run_, model.stopped_ = len(rules), prov["updates_run"], prov["stopped"]
    model.validation_ = prov.get("validation", "given")
    model.held_out_, model.validation_errors_ = None, None
    model.classes_, model.n_features_in_ = _read_classes(doc.get("classes"), tree), tree.K
    return model


def _read_classes(classes, tree: LabelTree) -> np.ndarray:
    """A model document's ``classes``: the columns' order at fit (:attr:`HUCBoost.classes_`, names
    or integer classes), each of the tree's labels once; absent (None), the tree's labels."""
    if classes is None:
        return np.asarray(tree.labels)
    if not isinstance(classes, list) or not all(isinstance(c, str) or is_integer(c) for c in classes):
        raise HUCError(f"classes: expected a list of the tree's labels (strings or integers), got "
                       f"{printable(repr(classes), 60)}", kind="type")
    tree.column_order(classes, where="classes", what="the model's predictions")  # (each label once)
    return np.asarray(classes)
