"""The estimators of huc_ref.calibration as a scikit-learn user meets them: the estimator contract
(check_estimator, each check that cannot apply to a recalibrator of probability rows listed with
its reason), float hyperparameters, labels of any kind, K.1's validation held out by default,
progress on long fits, and probability rows out of any model a file can hold."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import huc_ref.calibration as calibration
from huc_ref import HUCError, LabelTree, Table, TopK
from huc_ref.calibration import (
    MAX_RULES,
    DirichletScaling,
    HUCBoost,
    NoValidationWarning,
    TemperatureScaling,
    VectorScaling,
    load_model,
    row_sum_tolerance,
)
from huc_ref.replay import held_out_rows
from tests.shapes import recalibration_case, wide_softmax
from tests.strategies import shape_tree

ROOT = Path(__file__).resolve().parents[1]
D1 = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
D1_U = {"u": Table(D1, [-1, 1, 1, 1])}
D1_P, D1_Y = np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3]  # App. D.1 as a sample


def _log_loss(P, y, labels) -> float:
    """The mean of ``-log p_{y_i}`` (K.1's ``L_cal``), from the rows and the label names."""
    return float(-np.mean(np.log(P[np.arange(len(y)), [list(labels).index(v) for v in y]])))


# ---------------------------------------------------------------- K.1's validation, held out by default
@pytest.mark.parametrize("seed", [0, 7])
def test_the_default_fit_on_50_rows_does_not_worsen_the_test_log_loss(seed):
    """The user study's glass case: HUC-Boost fitted on 50 calibration rows of six classes.  With
    every update kept (``validation=False``, what ``fit`` did without ``validation=``) the test log
    loss rises (glass: 1.05 -> 2.17 in the study); by default a stratified 30% is held out to
    choose the prefix, and the test log loss is no worse than the raw predictions'.  Seed 7 is
    the split where a guard by the held-out rows' own standard error kept 295 of 296 updates and
    raised the test log loss from 1.10 to 2.00 (the null term of ``select_prefix`` refuses them)."""
    case = recalibration_case("glass", seed)
    (P, y), (Pt, yt) = case["cal"], case["test"]
    P, y = P[:50], y[:50]
    model = HUCBoost(case["tree"], case["utilities"]).fit(P, y)
    assert model.validation_ == "held-out" and len(model.held_out_) == 15 and model.n_updates_run_ > 100
    raw = _log_loss(model._inputs(Pt), yt, case["labels"])  # (K.1's kappa_init smoothing only)
    assert _log_loss(model.predict_proba(Pt), yt, case["labels"]) <= raw
    with pytest.warns(NoValidationWarning, match=r"all \d+ updates of the run are kept"):
        every = HUCBoost(case["tree"], case["utilities"]).fit(P, y, validation=False)
    assert _log_loss(every.predict_proba(Pt), yt, case["labels"]) > raw + 0.2  # what the default prevents


def test_the_held_out_rows_choose_the_prefix_and_the_rest_are_boosted():
    """K.1 fits on calibration data and selects on validation data: the default fit is the fit
    on the rows not held out with the held-out rows as ``validation=`` (the same rules and the
    same report), and ``seed`` changes the split."""
    case = recalibration_case("glass", 3)
    P, y = case["cal"]
    model = HUCBoost(case["tree"], case["utilities"], prefix_guard=None, max_passes=5).fit(P, y)
    held = model.held_out_
    rest = np.setdiff1d(np.arange(len(y)), held)
    again = HUCBoost(case["tree"], case["utilities"], prefix_guard=None, max_passes=5).fit(
        P[rest], y[rest], validation=(P[held], y[held]))
    assert model.rules_ == again.rules_ and model.validation_errors_ == again.validation_errors_
    assert model.report_["before"] == again.report_["before"] and model.report_["data"] == "held-out"
    other = HUCBoost(case["tree"], case["utilities"], seed=1, max_passes=1).fit(P, y)
    assert not np.array_equal(other.held_out_, held)


@given(st.lists(st.integers(0, 5), min_size=2, max_size=60), st.sampled_from([0.1, 0.3, 0.5, 0.9]),
       st.integers(0, 3))
@example([0, 1, 2, 3, 4, 4], 0.3, 0)  # one label with two rows, the others one each
@example([0] * 49 + [1], 0.3, 0)  # 50 rows, a class with one row
def test_the_held_out_rows_are_stratified_deterministic_and_never_a_labels_last_row(y, fraction, seed):
    """``held_out_rows``: ``round(n * fraction)`` rows (at least 1, at most what the labels can
    spare), each label's share within one row of ``n_c * fraction`` where no label is short of
    rows, never a label's last row, the same rows for the same seed and labels (in their sorted
    order: ties of remainders go to the label sorted first)."""
    y = np.array(y)
    counts = np.bincount(y)
    room = int(np.sum(np.maximum(counts - 1, 0)))
    if room == 0:
        with pytest.raises(HUCError, match="^validation: no label has two rows among the"):
            held_out_rows(y, fraction, seed)
        return
    held = held_out_rows(y, fraction, seed)
    assert len(held) == min(max(1, round(len(y) * fraction)), room) == len(set(held.tolist()))
    taken = np.bincount(y[held], minlength=len(counts))
    assert (taken <= np.maximum(counts - 1, 0)).all()
    if all(int(c * fraction) + 1 <= c - 1 for c in counts if c):  # no label runs out of rows to spare
        assert (np.abs(taken - counts * fraction) < 1 + 1e-9).all()
    assert np.array_equal(held_out_rows(y, fraction, seed), held)
    names = np.array(["a", "b", "c", "d", "e", "f"])[y]  # names in the ids' order: the same rows
    assert np.array_equal(held_out_rows(names, fraction, seed), held)


def test_calibration_rows_too_few_to_hold_any_out_name_both_remedies():
    """Three rows of three labels: no row can be held out (each label's only row is fitted on); the
    error names ``validation=(...)`` and ``validation=False``, and both work."""
    t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    P = [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]
    with pytest.raises(HUCError, match=r"^validation: no label has two rows among the 3, so no validation part can be "
                                       r"held out .*\(validation=\(y_prob, y_true\); huc fit --val-predictions, "
                                       r"--val-labels\), or keep every update \(validation=False; huc fit "
                                       r"--no-validation\)") as err:
        HUCBoost(t, {"u": TopK(t, 1)}).fit(P, ["a", "b", "c"])
    assert err.value.kind == "length"
    assert HUCBoost(t, {"u": TopK(t, 1)}).fit(P, ["a", "b", "c"], validation=(P, ["a", "b", "c"])).validation_ == \
        "given"
    with pytest.warns(NoValidationWarning) as caught:
        model = HUCBoost(t, {"u": TopK(t, 1)}).fit(P, ["a", "b", "c"], validation=False)
    assert len(caught) == 1 and f"all {model.n_updates_} updates" in str(caught[0].message)


def test_the_guard_keeps_a_prefix_only_where_its_log_loss_gain_clears_two_standard_errors():
    """``select_prefix(guard=2)`` returns the first prefix of smallest validation HUC among those
    whose log-loss change, recomputed here from the replayed rows, is at most ``-2 sqrt(s_sample^2
    + s_null^2)`` (and the initial predictions); without the guard, K.1's smallest HUC alone.  On
    D.1's population (80 rows, the validation rows the fitted ones) the first updates' gain is
    real and kept; on glass' 53 rows the run's prefixes, picked by K.1's rule alone, are not."""
    from huc_ref.fast.boost import replay
    from huc_ref.fast.sample import Sample
    from huc_ref.replay import select_prefix
    P, y = np.tile(D1_P, (10, 1)), np.array(D1_Y * 10)
    model = HUCBoost(D1, D1_U, epsilon="0.01", prefix_guard=None).fit(P, y, validation=(P, y))
    sample = Sample(D1, model._inputs(P), y)
    best, errors = select_prefix(model.run_, sample, D1_U, guard=2.0)
    rows = [Q for _, Q in replay(model.run_, sample, D1_U)]
    n = len(y)

    def admissible(t):
        L = np.log(rows[0]) - np.log(rows[t])
        d = L[np.arange(n), y]
        null = np.sum(((rows[0] * L * L).sum(axis=1) - (rows[0] * L).sum(axis=1) ** 2) / n**2)
        return t == 0 or d.mean() + 2 * np.sqrt(d.var(ddof=1) / n + null) <= 0
    ok = [t for t in range(len(rows)) if admissible(t)]
    assert best == min(ok, key=lambda t: (errors[t], t)) and 0 < best < model.n_updates_ == len(rows) - 1
    assert errors[best] < errors[0] and model.n_updates_ == int(np.argmin(errors))
    case = recalibration_case("glass", 7)  # (the seed of the 50-row test)
    P, y = case["cal"]
    k1 = HUCBoost(case["tree"], case["utilities"], prefix_guard=None).fit(P, y)
    guarded = HUCBoost(case["tree"], case["utilities"]).fit(P, y)
    errors = k1.validation_errors_
    assert k1.n_updates_ > 0 and errors[k1.n_updates_] <= min(errors) + 1e-12 < errors[0] and guarded.n_updates_ == 0


# ---------------------------------------------------------------- scikit-learn's conventions
def test_float_hyperparameters_are_the_decimals_they_print_as():
    """``epsilon=0.01`` is the decimal 1/100 (``Fraction(repr(x))``), as ``"0.01"`` and
    ``Fraction(1, 100)`` are, on both engines; a fixed ``step=0.05`` likewise; numpy's floats
    too (``np.float32(0.01)`` prints as 0.01).  The fits are identical, and the model file
    writes the decimal."""
    for engine in ("fast", "exact"):  # (the certified engine: the float and its string)
        epsilons = (0.01, "0.01", Fraction(1, 100), np.float32(0.01))[:4 if engine == "fast" else 2]
        steps = {"adaptive": ["adaptive"], "fixed": [0.05, "0.05", Fraction(1, 20), np.float32(0.05)][:len(epsilons)]}
        for kind, values in steps.items():
            fits = [HUCBoost(D1, D1_U, epsilon=eps, step=step, engine=engine, prefix_guard=None).fit(
                        D1_P, D1_Y, validation=(D1_P, D1_Y))
                    for eps in epsilons for step in values]
            assert all(m.rules_ == fits[0].rules_ for m in fits) and fits[0].rules_, (engine, kind)
            assert fits[0].run_.epsilon == Fraction(1, 100)
            assert fits[0].to_json()["options"]["epsilon"] == "0.01"


def test_the_scaling_estimators_take_labels_of_any_kind():
    """Strings, integers, numpy arrays and ``labels=clf.classes_``: ``classes_`` is ``labels`` or the
    sorted distinct labels (scikit-learn's), the columns of ``predict_proba`` are in its order,
    ``predict`` answers in its labels, the fitted parameters end in ``_``; a class absent from
    ``y_true`` needs ``labels=`` (the error says so, and the remedy fits)."""
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=60)
    ids = np.array([rng.choice(3, p=p) for p in P])
    names = np.array(["cat", "dog", "eel"])[ids]
    by_id = TemperatureScaling().fit(P, ids)
    by_name = TemperatureScaling().fit(P, names.tolist())
    assert by_name.classes_.tolist() == ["cat", "dog", "eel"] and by_id.classes_.tolist() == [0, 1, 2]
    assert np.array_equal(by_name.predict_proba(P), by_id.predict_proba(P))
    assert by_name.temperature_ == by_name.recalibrator_.temperature and by_name.n_features_in_ == 3
    assert set(by_name.predict(P)) <= {"cat", "dog", "eel"} and 0 <= by_name.score(P, names) <= 1
    labelled = TemperatureScaling(labels=np.array(["cat", "dog", "eel"])).fit(P, names)  # labels=clf.classes_
    assert np.array_equal(labelled.predict_proba(P), by_id.predict_proba(P))
    no_eel = ids != 2
    with pytest.raises(HUCError, match=r"^y_true: has 2 distinct labels \['cat', 'dog'\] for the 3 columns of y_prob; "
                                       r"pass labels= with the columns' classes \(e\.g\. labels=clf\.classes_\)"):
        VectorScaling().fit(P[no_eel], names[no_eel])
    vec = VectorScaling(labels=["cat", "dog", "eel"]).fit(P[no_eel], names[no_eel])
    assert vec.a_.shape == vec.b_.shape == (3,) and vec.classes_.tolist() == ["cat", "dog", "eel"]
    dirichlet = DirichletScaling(labels=[10, 20, 30]).fit(P, ids * 10 + 10, validation=(P, ids * 10 + 10))
    assert dirichlet.W_.shape == (3, 3) and dirichlet.predict(P[:2]).tolist()[0] in (10, 20, 30)
    with pytest.raises(HUCError, match=r"^y_true\[0\]: 0\.5 is not a class label \(a continuous target"):
        TemperatureScaling().fit(P, np.full(60, 0.5))


def test_hucboost_classes_are_the_columns_labels():
    """``classes_``: the labels as given (``labels=clf.classes_``, integers kept), a DataFrame's
    column names, or the tree's labels; ``predict`` answers in them and ``score`` reads labels
    as ``fit`` does (names or label ids)."""
    pd = pytest.importorskip("pandas")
    t = LabelTree.from_children("r", {"r": ["0", "1", "2"]})
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(3), size=40)
    y = np.array([rng.choice(3, p=p) for p in P])
    us = {"u": TopK(t, 1)}
    plain = HUCBoost(t, us).fit(P, y)
    assert plain.classes_.tolist() == ["0", "1", "2"] and plain.n_features_in_ == 3
    ints = HUCBoost(t, us, labels=np.array([0, 1, 2])).fit(P, y)
    assert ints.classes_.tolist() == [0, 1, 2] and ints.predict(P).dtype.kind == "i"
    frame = pd.DataFrame(P[:, [2, 0, 1]], columns=["2", "0", "1"])
    with pytest.raises(HUCError, match=r"integer labels are ambiguous .* \(positions in the columns' order\)"):
        HUCBoost(t, us).fit(frame, y)  # (0 is column 0, named "2", or the label "0": the names say which)
    named = HUCBoost(t, us).fit(frame, y.astype(str))
    assert named.classes_.tolist() == ["2", "0", "1"]
    assert np.array_equal(named.predict(frame), plain.predict(P))
    assert ints.score(P, y) == plain.score(P, y.astype(str)) == float(np.mean(plain.predict(P) == y.astype(str)))


# Why each of scikit-learn's checks that does not pass cannot apply to a recalibrator of probability
# rows (expected_failed_checks).  The input of every estimator here is rows of class probabilities
# and ``y_true`` their classes, so the number of columns is the number of classes:
COLUMNS = ("the check's data have another number of classes than columns; a recalibrator's columns are its "
           "classes' probabilities", r"distinct labels .* for the \d+ columns|expected an n x 2 array|is not a label "
                                     r"name or id|is not one of the classes|has \(\d+, 1\) labels")
ZEROS = ("the check's features shifted to be nonnegative (positive_only) start with a row of zeros, which is no "
         "probability row", r"entries must be finite and nonnegative, with a positive sum|raises error if "
                            r"'sample_weight' parameter is of type pandas.Series")
NAMES = ("fit's arguments are (y_prob, y_true), the names scikit-learn's metrics give probabilities and labels, not "
         "(X, y)", r"Expected y or Y as second argument|unexpected keyword argument 'y'")
WORDING = ("the bad input is refused with one HUCError naming the argument and the rule, not in scikit-learn's words",
           r"should contain one of the following patterns|doesn't check for NaN and inf|fail gracefully on sparse data|"
           r"failed when fitted on sparse data|incorrect or incomplete error message|When a classifier is passed a "
           r"continuous target|Error message is not explicit|can't train when only one class|failed when fitted on one "
           r"label")
SUMS = ("the check's features are not rows of probabilities, and a row whose sum is not 1 is refused (divided by its "
        "sum it would hide scores or cut columns taken for probabilities)",
        r"not 1 \(within 1e-05\); expected rows of probabilities")
FAILING = {  # check -> its reason, common to the four estimators
    "check_fit_score_takes_y": NAMES, "check_sample_weight_equivalence_on_dense_data": NAMES,
    "check_estimators_overwrite_params": COLUMNS, "check_estimators_fit_returns_self": COLUMNS,
    "check_readonly_memmap_input": COLUMNS, "check_n_features_in_after_fitting": COLUMNS,
    "check_estimators_dtypes": COLUMNS, "check_dtype_object": COLUMNS, "check_pipeline_consistency": COLUMNS,
    "check_estimators_pickle": COLUMNS, "check_classifiers_classes": COLUMNS, "check_classifiers_train": COLUMNS,
    "check_supervised_y_2d": COLUMNS, "check_sample_weights_pandas_series": ZEROS,
    "check_sample_weights_not_an_array": ZEROS, "check_all_zero_sample_weights_error": WORDING,
    "check_positive_only_tag_during_fit": WORDING, "check_complex_data": WORDING,
    "check_estimators_empty_data_messages": WORDING, "check_estimators_nan_inf": WORDING,
    "check_estimator_sparse_tag": WORDING, "check_estimator_sparse_array": WORDING,
    "check_estimator_sparse_matrix": WORDING, "check_fit2d_1sample": WORDING, "check_fit2d_1feature": WORDING,
    "check_fit2d_predict1d": WORDING, "check_requires_y_none": WORDING,
    "check_fit_idempotent": SUMS, "check_fit_check_is_fitted": SUMS, "check_n_features_in": SUMS,
}
SCALING_FAILING = {  # and for the scalings, which take any number of columns:
    **FAILING, "check_dont_overwrite_parameters": SUMS, "check_sample_weights_list": SUMS,
    "check_sample_weights_shape": SUMS, "check_sample_weights_not_overwritten": SUMS,
    "check_f_contiguous_array_estimator": SUMS, "check_classifier_data_not_an_array": SUMS,
    "check_classifiers_one_label_sample_weights": WORDING, "check_classifiers_regression_target": WORDING,
    "check_methods_sample_order_invariance": SUMS, "check_methods_subset_invariance": SUMS,
    "check_dict_unchanged": SUMS,
    **dict.fromkeys(("check_fit_score_takes_y", "check_estimators_overwrite_params",
                     "check_estimators_fit_returns_self", "check_readonly_memmap_input",
                     "check_n_features_in_after_fitting", "check_estimators_dtypes",
                     "check_dtype_object", "check_pipeline_consistency", "check_estimators_pickle",
                     "check_classifiers_classes", "check_classifiers_train", "check_supervised_y_2d",
                     "check_fit2d_predict1d"), SUMS),  # (the sums are refused before the columns or the names)
}
HUCBOOST_FAILING = {  # and for HUCBoost, whose tree fixes the columns at its 2 labels:
    **FAILING, "check_dont_overwrite_parameters": COLUMNS, "check_sample_weights_list": COLUMNS,
    "check_sample_weights_shape": COLUMNS, "check_sample_weights_not_overwritten": COLUMNS,
    "check_f_contiguous_array_estimator": COLUMNS, "check_classifier_data_not_an_array": COLUMNS,
    "check_classifiers_one_label": WORDING, "check_classifiers_one_label_sample_weights": WORDING,
    "check_classifiers_regression_target": WORDING, "check_methods_sample_order_invariance": COLUMNS,
    "check_methods_subset_invariance": COLUMNS, "check_dict_unchanged": COLUMNS,
    "check_fit_score_takes_y": COLUMNS, "check_fit2d_predict1d": COLUMNS,  # (the columns are refused first)
    **dict.fromkeys(("check_estimators_overwrite_params", "check_estimators_fit_returns_self",
                     "check_readonly_memmap_input", "check_sample_weights_shape",
                     "check_sample_weights_not_overwritten", "check_classifier_data_not_an_array",
                     "check_classifiers_classes", "check_classifiers_train"),
                    SUMS),  # (2 columns whose rows do not sum to 1: the sums are refused first)
}


def _estimators():
    t = LabelTree.from_children("r", {"r": ["0", "1"]})
    return [(TemperatureScaling(), SCALING_FAILING), (VectorScaling(), SCALING_FAILING),
            (DirichletScaling(), SCALING_FAILING),
            (HUCBoost(t, {"top1": TopK(t, 1)}, epsilon=0.01, max_passes=2, labels=np.array([0, 1])),
             HUCBOOST_FAILING)]


@pytest.mark.parametrize("estimator, failing", _estimators(),
                         ids=["TemperatureScaling", "VectorScaling", "DirichletScaling", "HUCBoost"])
def test_scikit_learns_check_estimator(estimator, failing):
    """``sklearn.utils.estimator_checks.check_estimator``: every check passes except those in the
    lists above, each with its reason; each of those fails for that reason (its error matches),
    and none of them passes (the lists are exact)."""
    checks = pytest.importorskip("sklearn.utils.estimator_checks")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = checks.check_estimator(estimator, expected_failed_checks={k: v[0] for k, v in failing.items()},
                                         on_fail="raise", on_skip=None)
    by_name = {}
    for r in results:
        by_name.setdefault(r["check_name"], []).append(r)
    for name, (_, pattern) in failing.items():
        assert name in by_name, f"{name} no longer runs"
        if all(r["status"] == "skipped" for r in by_name[name]):
            continue  # (a check whose optional package is absent: pandas for the Series checks)
        assert any(r["status"] == "xfail" for r in by_name[name]), f"{name} passes: remove it from the list"
        for r in by_name[name]:
            if r["status"] == "xfail":
                assert re.search(pattern, repr(r["exception"])), (name, repr(r["exception"]))
    assert all(r["status"] in ("passed", "skipped", "xfail") for r in results)
    assert sum(r["status"] == "passed" for r in results) >= 17


def test_the_estimators_are_scikit_learn_estimators():
    """A ``BaseEstimator`` and ``ClassifierMixin`` with tags: ``clone``, nested ``get_params``
    (``initial__l2``), ``set_params`` refusing an unknown name with one HUCError, and a call
    before ``fit`` that is both a HUCError and scikit-learn's ``NotFittedError``."""
    base = pytest.importorskip("sklearn.base")
    from sklearn.exceptions import NotFittedError
    from sklearn.utils import get_tags
    model = HUCBoost(D1, D1_U, initial=TemperatureScaling(l2=0.5))
    assert isinstance(model, base.BaseEstimator) and base.is_classifier(model)
    assert get_tags(model).input_tags.positive_only and model.get_params()["initial__l2"] == 0.5
    assert base.clone(model).set_params(initial__l2=0.25).initial.l2 == 0.25
    with pytest.raises(HUCError,
                       match=r"^set_params: HUCBoost has no parameter 'epsilonn' \(it has arithmetic, engine, epsilon"):
        model.set_params(epsilonn=0.01)
    for estimator in (model, TemperatureScaling()):
        with pytest.raises(HUCError, match=r"not fitted yet; call fit\(y_prob, y_true\) first") as err:
            estimator.predict_proba(D1_P)
        assert isinstance(err.value, NotFittedError)


def _python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_huc_ref_does_not_import_scikit_learn():
    """scikit-learn is optional: ``import huc_ref`` (and the command line's module) never loads it."""
    assert _python("import sys, huc_ref, huc_ref.fast, huc_ref.cli; print('sklearn' in sys.modules)").strip() == \
        "False"


def test_the_estimators_work_without_scikit_learn():
    """Without scikit-learn (``huc fit`` needs none) the estimators keep the contract on a base of
    their own: fit, predict_proba, predict, score, get_params (nested), set_params, repr, and
    one HUCError for an unknown parameter or a call before ``fit``."""
    code = """
import sys
sys.modules["sklearn"] = None  # (an import of it raises ImportError)
import numpy as np
from huc_ref import HUCError, LabelTree, Table
import huc_ref.calibration as c
assert not c._SKLEARN
t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
P, y = np.tile(np.full((8, 4), 0.25), (10, 1)), ["y1", "y1", "y3", "y3", "y3", "y4", "y4", "y4"] * 10
m = c.HUCBoost(t, {"u": Table(t, [-1, 1, 1, 1])}, epsilon=0.01, initial=c.TemperatureScaling(l2=0.5))
m.fit(P, y, validation=(P, y))
s = c.TemperatureScaling(labels=list(t.labels)).fit(P, y, validation=(P, y))
print(m.n_updates_ > 0, m.predict(P[:1]).tolist(), m.score(P, y) == np.mean(m.predict(P) == np.array(y)))
print(s.classes_.tolist(), m.get_params()["initial__l2"], m.set_params(initial__l2=0.25).initial.l2)
print(repr(c.TemperatureScaling(l2=0.5)))
for call in (lambda: m.set_params(zz=1), lambda: c.VectorScaling().predict_proba(P)):
    try:
        call()
    except HUCError as err:
        print(str(err).split(" (")[0].split(";")[0])
"""
    assert _python(code).splitlines() == [
        "True ['y3'] True", "['y1', 'y2', 'y3', 'y4'] 0.5 0.25",
        "TemperatureScaling(kappa=1e-10, l2=0.5, l2_grid=(0.1, 0.01, 0.001, 0.0001, 1e-05, 1e-06), labels=None)",
        "set_params: HUCBoost has no parameter 'zz'", "VectorScaling: not fitted yet"]


# ---------------------------------------------------------------- progress of long fits
def _fake_tqdm(monkeypatch):
    """A stand-in for tqdm, recording each bar's total and progress."""
    import importlib.util
    import types
    bars = []

    class Bar:
        def __init__(self, total, desc, file, leave):
            self.total, self.desc, self.n, self.closed = total, desc, 0, False
            bars.append(self)

        def update(self, k):
            self.n += k

        def close(self):
            self.closed = True
    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=Bar))
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name == "tqdm" else real(name, *a))
    return bars


def test_a_verbose_fit_shows_its_progress(monkeypatch, capsys):
    """``verbose=True``: where tqdm is installed, a bar for the updates (to the update cap) and one
    for the prefixes audited, each closed; without tqdm, lines on stderr (here every time:
    ``PROGRESS_SECONDS = 0``); ``verbose=False``: nothing."""
    P, y = np.tile(D1_P, (10, 1)), D1_Y * 10
    bars = _fake_tqdm(monkeypatch)
    model = HUCBoost(D1, D1_U, epsilon="0.01", verbose=True, prefix_guard=None).fit(P, y, validation=(P, y))
    assert [(b.desc, b.total, b.n, b.closed) for b in bars] == [
        ("HUCBoost: updates", 100 * len(D1.branching_nodes), model.n_updates_run_, True),
        ("HUCBoost: prefixes audited", model.n_updates_run_ + 1, model.n_updates_run_ + 1, True)]
    monkeypatch.undo()
    monkeypatch.setattr(calibration, "PROGRESS_SECONDS", 0.0)
    capsys.readouterr()
    HUCBoost(D1, D1_U, epsilon="0.01", verbose=1).fit(P, y)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("HUCBoost: updates: 1 of at most 300, log loss ") and \
        any(line.startswith("HUCBoost: prefixes audited: 1 of at most ") for line in err)
    HUCBoost(D1, D1_U, epsilon="0.01").fit(P, y)
    assert capsys.readouterr().err == ""


def _cli_files(tmp_path):
    case = recalibration_case("glass", 0)
    spec = {"tree": case["tree"].to_json(), "labels": case["labels"], "columns": case["labels"],
            "utilities": {name: u.to_json() for name, u in case["utilities"].items()}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    np.save(tmp_path / "P.npy", case["cal"][0])
    (tmp_path / "y.csv").write_text("label\n" + "\n".join(case["cal"][1]) + "\n")
    return ["fit", "--tree", str(tmp_path / "spec.json"), "--predictions", str(tmp_path / "P.npy"), "--labels",
            str(tmp_path / "y.csv"), "--max-passes", "2", "-o", str(tmp_path / "m.json")]


@pytest.mark.parametrize("terminal", [True, False])
def test_huc_fit_shows_progress_on_a_terminal_only(tmp_path, monkeypatch, capsys, terminal):
    """``huc fit`` passes ``verbose=`` as stderr is a terminal: progress lines there, none in a
    log file or a pipe; the summary names the held-out rows that chose the prefix."""
    from huc_ref.cli import main
    args = _cli_files(tmp_path)
    monkeypatch.setattr(calibration, "PROGRESS_SECONDS", 0.0)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal)
    assert main(args) == 0
    err = capsys.readouterr().err
    assert ("HUCBoost: updates: 1 of at most 8" in err) == terminal
    assert re.search(r"huc fit: \d+ updates run \((budget|tolerance)\), \d+ kept on 16 held-out rows; wrote ", err)
    assert "huc fit: held-out data before: UC = " in err


@pytest.mark.parametrize("terminal", [True, False])
def test_huc_boost_shows_progress_on_a_terminal_only(tmp_path, monkeypatch, capsys, terminal):
    """``huc boost`` reports every 2 seconds of a long run on stderr where it is a terminal, never
    in a log file (here a clock that moves 3 seconds a reading)."""
    import time

    from huc_ref.cli import main
    clock = iter(range(0, 10**6, 3))
    monkeypatch.setattr(time, "monotonic", lambda: float(next(clock)))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal)
    case = {"format": "huc-case/1", "tree": D1.to_json(), "labels": list(D1.labels),
            "utilities": {"u": D1_U["u"].to_json()},
            "atoms": [{"p": ["1/4"] * 4, "eta": ["1/4", "0", "3/8", "3/8"]}]}
    (tmp_path / "case.json").write_text(json.dumps(case))
    assert main(["boost", str(tmp_path / "case.json"), "--epsilon", "1/100"]) == 0
    assert ("huc boost: 1 updates, log loss" in capsys.readouterr().err) == terminal


# ---------------------------------------------------------------- probability rows from any model
def _one_rule(tree, method="huc", alpha=1.0):
    """A model document of ``tree`` with one rule: every row, top-1 correctness, step ``alpha``, at
    the root (HUC-Boost) or on the leaves (UC-Boost)."""
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(tree.K), size=30)
    y = rng.integers(0, tree.K, 30)
    with pytest.warns(NoValidationWarning):
        doc = HUCBoost(tree, {"top1": TopK(tree, 1)}, method=method, max_updates=1).fit(P, y,
                                                                                         validation=False).to_json()
    doc["rules"] = [{"subgroup": "all", "utility": "top1", "node": tree.root if method == "huc" else None,
                     "interval": [-1.0, 1.0], "alpha": alpha}]
    doc["provenance"].update(updates_run=1, updates_kept=1)
    return doc


@pytest.mark.parametrize("shape, size, width", [("flat", 12, 1), ("wide_last", 1, 30), ("two_level", 3, 4)])
@pytest.mark.parametrize("alpha", [1e300, -1e300, 1e10, -1e10, 1.0])
def test_a_model_files_largest_steps_give_probability_rows(shape, size, width, alpha):
    """A rule's step may be anything up to 1e300 in a model file; every output row is a probability
    row (finite, nonnegative, summing to 1 within ``row_sum_tolerance``) on a flat 12-class tree,
    a 30-child node last at its depth and a two-level tree, from softmax rows with entries near
    1e-300.  (In float64, ``log q + alpha h`` rounds to ``alpha h`` at such steps: rows summed
    to 0.0067-0.91 at 1e300 and were 1e-6 off at 1e10.)  At +-1e300 the row is the limit of the
    tilt, computed here: the root's mass all on the children of largest ``alpha mu_{u,child}``
    (for top-1 correctness, the child holding the top label, or, for ``alpha < 0``, the others),
    each child's labels in their proportions."""
    tree = shape_tree(shape, size, width, 1)
    P = wide_softmax(40, tree.K, seed=2)[0]
    for method in ("huc", "uc"):
        out = load_model(_one_rule(tree, method, alpha)).predict_proba(P)
        sums = out.sum(axis=1)
        assert np.isfinite(out).all() and (out >= 0).all()
        assert np.abs(sums - 1).max() <= row_sum_tolerance(tree.K, 1)
        if abs(alpha) == 1e300:
            Q = (1 - 1e-10) * P / P.sum(axis=1, keepdims=True) + 1e-10 / tree.K  # K.1's smoothing
            top = Q.argmax(axis=1)
            if method == "huc":  # child[k, j]: label k lies below the root's child j
                child = np.array([[k in tree.label_ids_below(tree.id(c)) for c in tree.children(tree.root)]
                                  for k in range(tree.K)])
                same = (child[top] @ child.T).astype(bool)  # labels below the top label's child
                keep = same if alpha > 0 else ~same
            else:  # UC-Boost: h = u - mu_u, largest at the top label (alpha > 0), else at every other
                keep = np.eye(tree.K, dtype=bool)[top] if alpha > 0 else ~np.eye(tree.K, dtype=bool)[top]
            want = np.where(keep, Q, 0.0)
            want /= want.sum(axis=1, keepdims=True)
            assert np.allclose(out, np.maximum(want, np.finfo(float).tiny), rtol=1e-12, atol=0)


def test_huc_apply_writes_probability_rows_from_a_hostile_step(tmp_path, capsys):
    """``huc apply`` of a model whose step is 1e300: exit 0 and rows that are probability rows."""
    from huc_ref.cli import main
    tree = shape_tree("flat", 3, 1, 0)
    (tmp_path / "m.json").write_text(json.dumps(_one_rule(tree, "huc", 1e300)))
    np.save(tmp_path / "P.npy", np.random.default_rng(1).dirichlet(np.ones(3), size=20))
    assert main(["apply", str(tmp_path / "m.json"), str(tmp_path / "P.npy"), "-o", str(tmp_path / "o.npy")]) == 0
    out = np.load(tmp_path / "o.npy")
    assert (out >= 0).all() and np.abs(out.sum(axis=1) - 1).max() <= row_sum_tolerance(3, 1)


def test_predict_proba_checks_its_rows_and_names_the_rule(monkeypatch):
    """With the one-stage tilt planted (``q e^(alpha h) / e^(logsumexp(log q + alpha h))``, which
    loses ``log q`` at a step of 1e300), the rows no longer sum to 1 and ``predict_proba`` stops
    with one HUCError naming the rule, rather than writing them."""
    import importlib

    from huc_ref.fast.numbers import logsumexp
    fast_boost = importlib.import_module("huc_ref.fast.boost")  # (huc_ref.fast.boost is also a function's name)

    def one_stage(q, h, alpha):
        return q * np.exp(alpha * h - logsumexp(np.log(q) + alpha * h))
    tree = shape_tree("flat", 3, 1, 0)
    model = load_model(_one_rule(tree, "huc", 1e300))
    monkeypatch.setattr(fast_boost, "tilt", one_stage)
    with pytest.raises(HUCError, match=r"^predict_proba: row \d+ is not a probability row after rule 0 \(subgroup "
                                       r"'all', utility 'top1', node 'r', interval \[-1\.0, 1\.0\], alpha 1e\+300\): "
                                       r"entries .* summing to 1 within \d\.\d+e-15 expected\); float64 lost") as err:
        model.predict_proba(np.random.default_rng(1).dirichlet(np.ones(3), size=20))
    assert err.value.kind == "internal"


# ---------------------------------------------------------------- a loaded model is a full model
def test_a_loaded_model_saves_writes_and_clones_as_the_fitted_one(tmp_path):
    """``load_model`` gives a full model: ``to_json`` and ``save`` write the same document, ``repr``
    and ``clone`` work, and its predictions, classes and counts are the fitted model's."""
    P, y = np.tile(D1_P, (10, 1)), D1_Y * 10
    model = HUCBoost(D1, D1_U, epsilon=0.01, initial=TemperatureScaling()).fit(P, y)
    loaded = load_model(model.save(tmp_path / "m.json"))
    assert loaded.to_json() == model.to_json() == json.loads((tmp_path / "m.json").read_text())
    assert json.loads(loaded.save(tmp_path / "again.json").read_text()) == model.to_json()
    assert repr(loaded).startswith("HUCBoost(") and loaded.classes_.tolist() == model.classes_.tolist()
    assert (loaded.n_updates_, loaded.n_updates_run_, loaded.stopped_, loaded.validation_) == \
        (model.n_updates_, model.n_updates_run_, model.stopped_, "held-out")
    assert np.array_equal(loaded.predict_proba(P), model.predict_proba(P)) and loaded.score(P, y) == model.score(P, y)
    base = pytest.importorskip("sklearn.base")
    clone = base.clone(loaded)
    assert clone.get_params()["epsilon"] == "0.01" and not hasattr(clone, "rules_")
    assert clone.fit(P, y).rules_ == model.rules_  # the options written are the fit's


def test_the_model_reader_bounds_the_rules_and_the_fit_budget():
    """At most ``MAX_RULES`` rules in a file (applying costs time linear in them) and at most that
    many updates in a fit: K.1's budget of 100 passes over a tree of 1,001 branching nodes is
    capped there."""
    doc = _one_rule(shape_tree("flat", 3, 1, 0))
    doc["rules"] = doc["rules"] * (MAX_RULES + 1)
    with pytest.raises(HUCError, match=rf"^rules: {MAX_RULES + 1} rules, more than MAX_RULES = {MAX_RULES} "
                                       r"\(applying a model costs time linear in its rules\)") as err:
        load_model(doc)
    assert err.value.kind == "too_large"
    kids = {"r": ["n0", "n1"], **{f"n{i}": [f"n{2 * i + 2}", f"n{2 * i + 3}"] for i in range(1000)}}
    big = LabelTree.from_children("r", kids)
    assert len(big.branching_nodes) == 1001
    assert HUCBoost(big, {"u": TopK(big, 1)})._check_params()["max_updates"] == MAX_RULES
    assert HUCBoost(big, {"u": TopK(big, 1)}, max_passes=2)._check_params()["max_updates"] == 2002


def test_row_sum_tolerance_bounds_a_long_runs_drift():
    """The stated tolerance holds for the rows of a real run's every prefix (D.1, 40 rows, its
    rules replayed one by one) and is what its doctest says at MAX_RULES."""
    from huc_ref.fast.boost import apply_rules
    P, y = np.tile(D1_P, (5, 1)), D1_Y * 5
    model = HUCBoost(D1, D1_U, epsilon="0.0001", prefix_guard=None).fit(P, y, validation=(P, y))
    assert model.n_updates_ > 10
    for t, Q in apply_rules("huc", model.rules_, D1, D1_U, model._inputs(P), np.ones((len(y), 1))):
        assert np.abs(Q.sum(axis=1) - 1).max() <= row_sum_tolerance(4, t)
    assert row_sum_tolerance(100, MAX_RULES) == pytest.approx(2.3e-9, rel=0.02)
