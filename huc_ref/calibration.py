"""Recalibration estimators in scikit-learn's shape: fit on calibration data, apply to new
predictions, save and load (Sec. 5.2, H.2, H.6, K.1).

* :class:`TemperatureScaling`, :class:`VectorScaling`, :class:`DirichletScaling`: Table 3's
  whole-distribution maps, fitted by :func:`huc_ref.recalibration.fit_scaling`.
* :class:`HUCBoost`: HUC-Boost (or UC-Boost, ``method="uc"``) on calibration data, the update
  prefix chosen on validation data as K.1 does ("Validation selects the returned update
  prefix"), stored as rules (subgroup, utility, node, interval, step) that apply to any
  predictions, labelled or not; ``initial=`` a scaling estimator gives the two-stage methods
  (``Temp. -> HUC`` etc., H.2).

Each has ``fit(y_prob, y_true, ...)`` returning ``self``, ``predict_proba(y_prob, ...)``, and
``get_params`` / ``set_params`` (so scikit-learn's ``clone`` works).  Predictions enter with
K.1's ``kappa_init`` smoothing, so exact zeros (a decision tree's) are fine.  The columns of
``y_prob`` are the tree's labels in the tree's label order; ``labels=`` states the columns'
order and is checked (a misaligned order is an error naming both orders, never a silent
permutation).  :meth:`HUCBoost.to_json` writes the ``huc-model/1`` document; loading it and
predicting gives the same floats bit for bit.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
from pathlib import Path

import numpy as np

from .distribution import FiniteDistribution, subgroup_mapping
from .engines import boost, check_engine
from .errors import HUCError, check_names, given, is_integer, one_of, printable
from .fast.audit import _lazy, label_ids
from .fast.boost import apply_rules, boost_sample
from .fast.numbers import entries, subgroup_column
from .fast.sample import Sample
from .formats import MODEL_FORMAT, load_json, read_document, read_model_spec
from .recalibration import KAPPA_INIT, L2_GRID, Recalibrator, check_kappa, fit_scaling, prediction_rows
from .replay import select_prefix
from .tree import LabelTree
from .validation import METHODS

__all__ = ["TemperatureScaling", "VectorScaling", "DirichletScaling", "HUCBoost", "MODEL_FORMAT", "load_model"]



class _Estimator:
    """``get_params`` / ``set_params`` from the constructor's signature (scikit-learn's convention:
    every constructor argument is stored under its own name, and fitted state ends in ``_``)."""

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's arguments (scikit-learn's ``get_params``; the estimators of Table 3).

        >>> TemperatureScaling(l2=0.5).get_params()["l2"]
        0.5
        """
        return {name: getattr(self, name) for name in inspect.signature(type(self).__init__).parameters
                if name != "self"}

    def set_params(self, **params):
        """Set constructor arguments (scikit-learn's ``set_params``); returns ``self``.

        >>> TemperatureScaling().set_params(l2=0.25).l2
        0.25
        """
        valid = self.get_params()
        for name, value in params.items():
            if name not in valid:
                raise HUCError(f"set_params: {type(self).__name__} has no parameter {name!r} "
                               f"(it has {', '.join(valid)})", kind="unknown_field")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.get_params().items())})"

    def _fitted(self, attribute):
        if not hasattr(self, attribute):
            raise HUCError(f"{type(self).__name__}: not fitted yet; call fit(y_prob, y_true) first", kind="state")
        return getattr(self, attribute)


def _probabilities(y_prob, K: int | None, kappa: float, where: str = "y_prob") -> np.ndarray:
    """``y_prob`` as finite nonnegative rows (``K`` columns), with K.1's ``kappa_init``
    smoothing ``(1 - kappa) p + kappa / K`` after dividing each row by its sum."""
    P = prediction_rows(y_prob, K, where)
    kappa = check_kappa(kappa, P.shape[1])
    return (1 - kappa) * P + kappa / P.shape[1]


def _validation(validation, size: int = 3):
    """``validation`` as a tuple ``(y_prob, y_true[, subgroups])`` (K.1's held-out split), or None."""
    if validation is None:
        return None
    if not isinstance(validation, (tuple, list)) or not 2 <= len(validation) <= size:
        shown = "(y_prob, y_true[, subgroups])" if size == 3 else "(y_prob, y_true)"
        got = (f"a {type(validation).__name__} of {len(validation)}" if isinstance(validation, (tuple, list))
               else type(validation).__name__)
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
            wanted = f"{{{missing[0]!r}: ...}}"
            hint = f"subgroups={wanted}" if where == "subgroups" else f"{wanted} in {where}"
            raise HUCError(f"{where}: the model was fitted with subgroup {missing[0]!r}; give its values ({hint})",
                           kind="missing_field")
        groups = {g: groups[g] for g in names}
    C = np.empty((n, len(groups)))
    for k, (name, values) in enumerate(groups.items()):
        C[:, k] = subgroup_column(values, n, f"{where}[{name!r}]", rows)
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


class _Scaling(_Estimator):
    """Temperature, vector or Dirichlet scaling as an estimator (Table 3, H.6)."""

    kind = ""

    def __init__(self, *, l2: float = 1e-4, kappa: float = KAPPA_INIT, l2_grid=L2_GRID):
        self.l2, self.kappa, self.l2_grid = l2, kappa, l2_grid

    def fit(self, y_prob, y_true, *, sample_weight=None, validation=None):
        """Fit on calibration predictions and labels (column indices ``0 .. K-1``); with
        ``validation=(y_prob_val, y_true_val)`` the regularisation is chosen there (K.1)."""
        n, K = prediction_rows(y_prob).shape  # (checked here, divided by their sums in fit_scaling)
        Y = self._one_hot(y_true, n, K)
        val = None
        validation = _validation(validation, 2)
        if validation is not None:
            Pv, yv = validation[0], validation[1]
            val = (Pv, self._one_hot(yv, len(prediction_rows(Pv, K, "validation[0]")), K, "validation[1]"))
        self.recalibrator_ = fit_scaling(y_prob, Y, sample_weight, self.kind, kappa=self.kappa, l2=self.l2,
                                         validation=val, l2_grid=self.l2_grid)
        return self

    @staticmethod
    def _one_hot(y, n, K, where="y_true"):
        ids = np.asarray(y)
        if ids.shape != (n,) or ids.dtype.kind not in "iu" or K is None or (ids < 0).any() or (ids >= K).any():
            raise HUCError(f"{where}: expected {n} class indices from 0 to {'K - 1' if K is None else K - 1}",
                           kind="reference")
        return np.eye(K)[ids]

    def predict_proba(self, y_prob) -> np.ndarray:
        """The recalibrated predictions, every entry positive, rows summing to 1 (``y_prob``: rows
        of the fitted ``K`` probabilities, each divided by its sum first; a Dask Array or DataFrame
        gives a Dask collection, row block by row block: :func:`huc_ref.fast.scale.lazy_predictions`)."""
        if _lazy(y_prob):
            from .fast.scale import lazy_predictions
            return lazy_predictions(self, y_prob)
        return self._fitted("recalibrator_")(y_prob)


class TemperatureScaling(_Scaling):
    """``softmax(log p / T)`` (Table 3), ``T`` from a bounded scalar search (H.6, K.1).

    >>> P = np.array([[0.9, 0.1]] * 4)
    >>> m = TemperatureScaling(l2=0.0).fit(P, [0, 0, 1, 0])
    >>> round(float(m.predict_proba(P)[0, 0]), 6)  # the empirical frequency 3/4
    0.75
    """

    kind = "temperature"


class VectorScaling(_Scaling):
    """``softmax(a * log p + b)`` (Table 3), fitted by trust-region Newton-CG (H.6, K.1).

    >>> P = np.array([[0.9, 0.1]] * 4)
    >>> m = VectorScaling(l2=0.0).fit(P, [0, 0, 1, 0])
    >>> round(float(m.predict_proba(P)[0, 0]), 4)
    0.75
    """

    kind = "vector"


class DirichletScaling(_Scaling):
    """``softmax(W log p + b)`` (Table 3; Kull et al., 2019), fitted by trust-region Newton-CG (H.6, K.1).

    >>> P = np.array([[0.9, 0.1]] * 4)
    >>> m = DirichletScaling(l2=0.0).fit(P, [0, 0, 1, 0])
    >>> round(float(m.predict_proba(P)[0, 0]), 4)
    0.75
    """

    kind = "dirichlet"


SCALINGS = {cls.kind: cls for cls in (TemperatureScaling, VectorScaling, DirichletScaling)}


class HUCBoost(_Estimator):
    """HUC-Boost (Algorithm 1/3; ``method="uc"``: UC-Boost) as a recalibrator (Sec. 5.2, K.1).

    ``fit`` boosts on the calibration predictions with K.1's settings by default (violations
    above ``epsilon = 0.001`` corrected; ``select="passes"``, at most ``max_passes = 100`` passes
    over the branching nodes; UC-Boost at most 100 updates), keeps the update prefix with the
    smallest validation HUC (UC for UC-Boost) when ``validation=(y_prob, y_true[, subgroups])``
    is given, and stores the kept updates as rules in :attr:`rules_`.  ``predict_proba`` applies
    them to new predictions (the subgroups by name, as at fit).  ``initial``: a scaling estimator
    fitted first on the same calibration data (the two-stage methods of H.2).  ``epsilon`` and a
    fixed ``step`` are exact numbers (``"0.01"``, ``Fraction(1, 100)``): a float such as ``0.01``
    is refused at ``fit`` with the string to write instead, since boosting compares them exactly.
    :attr:`report_` audits the predictions before and after (on the validation data when given),
    with p-values under the null of calibration when ``null_draws`` is set (``seed`` seeds the
    redraws).
    ``engine``: ``"fast"`` (float64, the default) or ``"exact"`` (every decision certified:
    float64 with rigorous error bounds where python-flint is installed, the ``certified``
    extra, and the certified engine for what they cannot decide; else the certified engine).

    App. D.1 as a sample (p = 1/4 each; labels y1 x2, y3 x3, y4 x3): boosting removes HUC.

    >>> from huc_ref import LabelTree, Table, fast
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> us = {"u": Table(t, [-1, 1, 1, 1])}
    >>> P, y = np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3]
    >>> fast.audit(y, P, t, us).huc.sup  # D.1's HUC
    0.25
    >>> model = HUCBoost(t, us, epsilon="1/100").fit(P, y)
    >>> model.stopped_, fast.audit(y, model.predict_proba(P), t, us).huc.sup <= 0.01
    ('tolerance', True)
    >>> bool(np.allclose(model.predict_proba(P), model.run_.predictions))  # the rules replay the run
    True
    >>> report = HUCBoost(t, us, epsilon="1/100", null_draws=99).fit(np.tile(P, (10, 1)), y * 10).report_
    >>> report["before"].significance.huc, report["after"].significance.huc  # 80 rows: D.1's HUC is real
    (Fraction(1, 50), Fraction(1, 1))
    """

    def __init__(self, tree: LabelTree, utilities: dict, *, method: str = "huc", epsilon="0.001",
                 select: str = "passes", step="adaptive", max_updates: int | None = None, max_passes: int = 100,
                 engine: str = "fast", initial=None, kappa: float = KAPPA_INIT, labels=None,
                 null_draws: int | None = None, seed: int = 0):
        self.tree, self.utilities, self.method, self.epsilon = tree, utilities, method, epsilon
        self.select, self.step, self.max_updates, self.max_passes = select, step, max_updates, max_passes
        self.engine, self.initial, self.kappa, self.labels = engine, initial, kappa, labels
        self.null_draws, self.seed = null_draws, seed

    def _check_params(self) -> None:
        """The constructor's arguments that ``fit`` reads before the boosting options are checked
        (scikit-learn's convention: ``__init__`` stores, ``fit`` checks)."""
        if not one_of(self.method, METHODS):
            raise HUCError(f"method: expected 'huc' or 'uc', got {given(self.method)}", kind="option")
        check_engine(self.engine)
        if not is_integer(self.max_passes) or self.max_passes < 1:
            raise HUCError(f"max_passes: must be a positive integer, got {given(self.max_passes)}", kind="option")
        if self.null_draws is not None:  # (before the boosting: the report draws them after it)
            from .significance import check_null
            check_null(self.null_draws, self.seed)
        if self.initial is not None and not isinstance(self.initial, _Scaling):
            raise HUCError("initial: expected None, TemperatureScaling(), VectorScaling() or DirichletScaling() "
                           f"(H.2's first stage), got {given(self.initial, 60)}", kind="option")

    def _columns(self, y_prob, where="y_prob"):
        """``(y_prob, order)``: a table's array, and where the tree's labels are among its columns
        (named by ``labels=`` or a DataFrame's column names; None: in the tree's order)."""
        if not isinstance(self.tree, LabelTree):
            raise HUCError(f"tree: expected a LabelTree, got {type(self.tree).__name__}", kind="tree")
        y_prob, labels = self.tree.frame_columns(y_prob, self.labels)  # (a DataFrame's column names)
        return y_prob, self.tree.column_order(labels, what=where)

    def _inputs(self, y_prob, where="y_prob"):
        """The predictions in the tree's label order, with K.1's smoothing."""
        y_prob, order = self._columns(y_prob, where)
        P = _probabilities(y_prob, self.tree.K, self.kappa, where)
        return P if order is None else P[:, order]

    def fit(self, y_prob, y_true, *, subgroups=None, sample_weight=None, validation=None):
        """Boost on calibration data (Algorithm 1, or UC-Boost, with K.1's settings);
        ``validation=(y_prob, y_true[, subgroups])`` picks the prefix (K.1).

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
        >>> P, y = np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3]  # App. D.1 as a sample
        >>> model = HUCBoost(t, {"u": Table(t, [-1, 1, 1, 1])}, epsilon="1/100").fit(P, y)
        >>> model.n_updates_, model.stopped_
        (13, 'tolerance')
        >>> model.rules_[0]  # (subgroup, utility, node id, interval, step): v0 on the score 1/2, Gamma/Lambda = 1
        (0, 'u', 0, 0.5, 0.5, 1.0)
        """
        self._check_params()
        P = self._inputs(y_prob)
        y = label_ids(y_true, self.tree, len(P))
        validation = _validation(validation)
        if self.initial is not None:
            val = None if validation is None else (self._inputs(validation[0], "validation[0]"),
                                                    label_ids(validation[1], self.tree, len(validation[0]),
                                                              "validation[1]", "validation[0]"))
            self.initial_ = type(self.initial)(**self.initial.get_params()).fit(P, y, sample_weight=sample_weight,
                                                                               validation=val)
            P = self.initial_.predict_proba(P)
        names, C = _subgroup_values(subgroups, len(P))
        cap = self.max_updates if self.max_updates is not None else (
            100 if self.method == "uc" else int(self.max_passes) * max(1, len(self.tree.branching_nodes)))
        options = dict(method=self.method, epsilon=self.epsilon, step=self.step, max_updates=cap,
                       select=self.select if self.method == "huc" else "greedy", max_passes=self.max_passes)
        w = _weights(sample_weight, len(P))  # one check, one message, whichever engine
        held_out = None  # K.1's validation atoms, checked before the boosting (before session 26: after it)
        if validation is not None:
            Pv = self._inputs(validation[0], "validation[0]")
            if self.initial is not None:
                Pv = self.initial_.predict_proba(Pv)
            yv = label_ids(validation[1], self.tree, len(Pv), "validation[1]", "validation[0]")
            _, Cv = _subgroup_values(validation[2] if len(validation) > 2 else None, len(Pv), names, "validation[2]",
                                     "validation[0]")
            held_out = Sample(self.tree, Pv, yv, names, Cv)
        if self.engine == "fast":  # from the arrays themselves: no exact number is built (issue 17)
            run = boost_sample(self.tree, P, y, self.utilities, subgroups=names, C=C, w=w, **options)
        elif importlib.util.find_spec("flint") is not None:  # certified float64: the certified engine's
            # decisions and Theorem 3.5's certificates, at float64's speed where its bounds decide (the certified extra)
            run = boost(_sample(self.tree, P, y, names, C, w), self.utilities, engine="fast", arithmetic="certified",
                        **options)
        else:  # the certified engine alone: the same decisions, slower
            run = boost(_sample(self.tree, P, y, names, C, w), self.utilities, engine="exact", **options)
        keep, errors = len(run.steps), None
        if held_out is not None:
            keep, errors = select_prefix(run, held_out, self.utilities)  # (arrays)
        self.subgroups_, self.run_, self.validation_errors_ = names, run, errors
        self.rules_ = [(k, u, a, float(lo), float(hi), float(alpha)) for k, u, a, lo, hi, alpha in run.steps[:keep]]
        self.n_updates_, self.stopped_ = keep, run.stopped
        self.report_ = self._report(y_prob, y, subgroups, validation, sample_weight)
        return self

    def _report(self, y_prob, y, subgroups, validation, sample_weight=None) -> dict:
        """The fit report: the audits (fast engine) of the input predictions and of the
        recalibrated ones, on the validation data when given (held out), else on the calibration
        data; with ``null_draws`` each carries p-values under the null of calibration
        (:mod:`huc_ref.significance`), so a remaining violation can be told from noise.  On the
        calibration data the "after" p-values are optimistic: the rules were fitted to its labels.
        The calibration data's audits weigh its rows by ``sample_weight``, as the fit did."""
        from .fast import audit
        data = "calibration" if validation is None else "validation"
        if validation is not None:
            y_prob, y = validation[0], label_ids(validation[1], self.tree, len(validation[0]))
            subgroups, sample_weight = (validation[2] if len(validation) > 2 else None), None
        names, C = _subgroup_values(subgroups, len(y), self.subgroups_)
        groups = {g: C[:, k] for k, g in enumerate(names)}
        options = dict(subgroups=groups, null_draws=self.null_draws, seed=self.seed, sample_weight=sample_weight)
        tree_order = self.tree.labels  # (both arrays below are in it)
        before = audit(y, self._inputs(y_prob), self.tree, self.utilities, labels=tree_order, **options)
        after = audit(y, self._recalibrated(self._inputs(y_prob), groups), self.tree, self.utilities,
                      labels=tree_order, **options)
        return {"data": data, "before": before, "after": after}

    def predict_proba(self, y_prob, *, subgroups=None) -> np.ndarray:
        """The recalibrated predictions of new data (labels not needed): the kept rules, Algorithm
        1's updates (Sec. 3.2's branch tilts), applied in order (:func:`huc_ref.fast.boost.apply_rules`).
        Predictions (or subgroups) held as a Dask Array or DataFrame give a Dask collection of the
        same kind, computed row block by row block (:func:`huc_ref.fast.scale.lazy_predictions`).

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
        >>> P, y = np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3]  # App. D.1 as a sample
        >>> from huc_ref import fast
        >>> us = {"u": Table(t, [-1, 1, 1, 1])}
        >>> model = HUCBoost(t, us, epsilon="1/100").fit(P, y)
        >>> fast.audit(y, P, t, us).huc.sup, fast.audit(y, model.predict_proba(P), t, us).huc.sup <= 1 / 100
        (0.25, True)
        """
        self._fitted("rules_")
        if _lazy(y_prob, subgroups):  # Dask collections: the same rules, row block by row block
            from .fast.scale import lazy_predictions
            return lazy_predictions(self, y_prob, subgroups)
        _, order = self._columns(y_prob)
        out = self._recalibrated(self._inputs(y_prob), subgroups)
        if order is not None:  # (back in the columns' order)
            out[:, order] = out.copy()
        return out

    def _recalibrated(self, P, subgroups) -> np.ndarray:
        """The kept rules applied to ``P`` (smoothed, in the tree's label order)."""
        if self.initial is not None:
            P = self.initial_.predict_proba(P)
        _, C = _subgroup_values(subgroups, len(P), self.subgroups_)
        *_, (_, out) = apply_rules(self.method, self.rules_, self.tree, self.utilities, P, C)
        return out

    # ------------------------------------------------------------------ huc-model/1
    def to_json(self) -> dict:
        """The ``huc-model/1`` document: the tree, the utilities, the options, the initial map's
        parameters, the rules (Algorithm 1's kept updates; floats written exactly: JSON numbers
        round-trip float64) and the provenance; :func:`load_model` reads it back.

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
        >>> P, y = np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3]  # App. D.1 as a sample
        >>> doc = HUCBoost(t, {"u": Table(t, [-1, 1, 1, 1])}, epsilon="1/100").fit(P, y).to_json()
        >>> doc["format"], doc["subgroups"], len(doc["rules"])
        ('huc-model/1', ['all'], 13)
        >>> doc["rules"][0]
        {'subgroup': 'all', 'utility': 'u', 'node': 'v0', 'interval': [0.5, 0.5], 'alpha': 1.0}
        """
        from . import __version__
        rules = self._fitted("rules_")
        initial = None
        if self.initial is not None:
            r = self.initial_.recalibrator_
            initial = {"kind": r.kind, "W": r.W.tolist(), "b": r.b.tolist(), "kappa": r.kappa}
        return {"format": MODEL_FORMAT, "tree": self.tree.to_json(), "labels": list(self.tree.labels),
                "utilities": {name: u.to_json() for name, u in self.utilities.items()},
                "subgroups": list(self.subgroups_), "method": self.method, "kappa": check_kappa(self.kappa),
                "options": {"epsilon": str(self.epsilon), "select": self.select, "step": str(self.step),
                            "max_updates": None if self.max_updates is None else int(self.max_updates),
                            "max_passes": int(self.max_passes), "engine": self.engine},
                "initial": initial,
                "rules": [{"subgroup": self.subgroups_[k], "utility": u,
                           "node": None if a is None else self.tree.nodes[a], "interval": [lo, hi], "alpha": alpha}
                          for k, u, a, lo, hi, alpha in rules],
                "provenance": {"huc_ref": __version__, "updates_run": len(self.run_.steps),
                               "updates_kept": self.n_updates_, "stopped": self.stopped_}}

    def save(self, path) -> Path:
        """Write :meth:`to_json` (the fitted Algorithm 1 updates, ``huc-model/1``) to ``path``.

        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
        >>> P, y = np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3]  # App. D.1 as a sample
        >>> import tempfile
        >>> model = HUCBoost(t, {"u": Table(t, [-1, 1, 1, 1])}, epsilon="1/100").fit(P, y)
        >>> path = model.save(Path(tempfile.mkdtemp()) / "model.json")
        >>> bool((load_model(path).predict_proba(P) == model.predict_proba(P)).all())  # bit for bit
        True
        """
        path = Path(path)
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        return path


#: The largest step a model file may hold: beyond it ``alpha h`` (``|h| <= 2``) overflows float64.
MAX_ALPHA = 1e300

#: The largest float below 1: K.1's kappa_0 lies in the open interval (0, 1).
_BELOW_ONE = float(np.nextafter(1.0, 0.0))

#: Scores are means of utilities in [-1, 1]; float64 may put one a few ulps outside.
_SCORE_BOUND = 1.0 + 2.0**-20

_MODEL_FIELDS = ("format", "tree", "labels", "utilities", "subgroups", "method", "kappa", "options", "initial",
                 "rules", "provenance")
_RULE_FIELDS = ("subgroup", "utility", "node", "interval", "alpha")


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
        arrays[key] = arr.astype(float)
        if not np.all(np.abs(arrays[key]) <= MAX_ALPHA):
            raise HUCError(f"initial.{key}: entries must be at most {MAX_ALPHA:g} in magnitude", kind="range")
    initial = SCALINGS[kind](kappa=kappa)
    initial.recalibrator_ = Recalibrator(kind, arrays["W"], arrays["b"], kappa)
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


def load_model(source) -> HUCBoost:
    """A fitted :class:`HUCBoost` from a ``huc-model/1`` document (a dict, or a path to one).

    Every field is checked before anything is applied (a model file is input like any other):
    the tree, labels and utilities as in ``huc-case/1``, the subgroups, ``method``, ``kappa``,
    the initial scaling's shapes, and each rule's names, node, interval and step; a bad one
    gets one HUCError naming the place.

    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> m = HUCBoost(t, {"u": Table(t, [0, 1])}, epsilon="1/100").fit([[0.5, 0.5]] * 4, [0, 1, 1, 1])
    >>> again = load_model(m.to_json())
    >>> bool(np.array_equal(again.predict_proba([[0.3, 0.7]]), m.predict_proba([[0.3, 0.7]])))
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
    _only(doc, _MODEL_FIELDS, "")
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
    _only(options, ("epsilon", "select", "step", "max_updates", "max_passes", "engine"), "options.")
    initial = None if doc["initial"] is None else _read_initial(doc["initial"], tree.K)
    if not isinstance(doc["rules"], list):
        raise HUCError("rules: expected a list", kind="type")
    rules = _read_rules(doc["rules"], tree, utilities, names, method)
    prov = doc["provenance"]
    if not isinstance(prov, dict):
        raise HUCError("provenance: expected an object", kind="type")
    model = HUCBoost(tree, utilities, method=method, initial=initial, kappa=kappa, **options)
    model.initial_ = initial
    model.subgroups_ = list(names)
    model.rules_ = rules
    model.n_updates_, model.stopped_ = len(rules), prov.get("stopped")
    return model
