"""The estimators (huc_ref.calibration): fit on calibration data, choose the prefix on validation
(K.1), apply to new unlabelled predictions, save and load bit for bit, labels never misaligned."""

from fractions import Fraction

import numpy as np
import pytest

from huc_ref import BinaryDecision, HUCError, LabelTree, Top1AtDepth, fast
from huc_ref.calibration import (
    DirichletScaling,
    HUCBoost,
    NoValidationWarning,
    TemperatureScaling,
    VectorScaling,
    load_model,
)
from huc_ref.recalibration import fit_scaling
from tests.strategies import digits_split

TREE = LabelTree.from_nested({"digit": {
    "round": {"closed_loops": ["d0", "d8"], "one_loop": ["d6", "d9"], "open_curves": ["d2", "d3", "d5"]},
    "straight": {"strokes": ["d1", "d7"], "d4": None}}}, labels=[f"d{k}" for k in range(10)])
UTILITIES = {"top1@1": Top1AtDepth(TREE, 1), "top1@2": Top1AtDepth(TREE, 2),
             "review": BinaryDecision(TREE, ["d1", "d7"], list(TREE.labels), "1/4")}


@pytest.fixture(scope="module")
def digits():
    """Gaussian naive Bayes on load_digits (the overconfident predictor), split as real_data.py's split 0."""
    from sklearn.naive_bayes import GaussianNB
    X, y, parts = digits_split(0)
    train, cal, val, test = (parts[k] for k in ("train", "cal", "val", "test"))
    model = GaussianNB().fit(X[train], y[train])
    ink = X.mean(axis=1) > np.median(X[train].mean(axis=1))
    return {part: (model.predict_proba(X[ids]), y[ids], {"dark": ink[ids].astype(int)})
            for part, ids in (("cal", cal), ("val", val), ("test", test))}


@pytest.fixture(scope="module")
def fitted(digits):
    P, y, g = digits["cal"]
    model = HUCBoost(TREE, UTILITIES, max_passes=10, labels=[f"d{k}" for k in range(10)], prefix_guard=None)
    return model.fit(P, y, subgroups=g, validation=digits["val"])  # (K.1's selection alone)


def test_fit_then_predict_on_new_unlabelled_data(digits, fitted):
    P, y, g = digits["test"]
    Q = fitted.predict_proba(P, subgroups=g)
    assert Q.shape == P.shape and (Q > 0).all() and np.allclose(Q.sum(axis=1), 1)
    # K.1: the kept prefix is the first minimum of the validation HUC over the run's prefixes
    errors = fitted.validation_errors_
    assert len(errors) == len(fitted.run_.steps) + 1 and fitted.n_updates_ == int(np.argmin(errors))
    assert len(fitted.rules_) == fitted.n_updates_ <= len(fitted.run_.steps)
    # the chosen prefix's validation HUC, recomputed from the model's own predictions
    Pv, yv, gv = digits["val"]
    again = fast.audit(yv, fitted.predict_proba(Pv, subgroups=gv), TREE, UTILITIES,
                       subgroups={"all": np.ones(len(yv)), **gv}).huc.sup
    assert again == pytest.approx(errors[fitted.n_updates_], abs=1e-9)


def test_all_rules_on_the_calibration_data_reproduce_the_run(digits):
    """With ``validation=False`` every update is kept, and one NoValidationWarning says how many."""
    P, y, g = digits["cal"]
    with pytest.warns(NoValidationWarning) as caught:
        model = HUCBoost(TREE, UTILITIES, max_passes=3).fit(P, y, subgroups=g, validation=False)
    assert model.n_updates_ == len(model.run_.steps) > 0 and model.validation_ == "none"
    assert len(caught) == 1 and str(caught[0].message).startswith(
        f"HUCBoost.fit(validation=False): all {model.n_updates_} updates of the run are kept, none chosen on held-out")
    assert np.allclose(model.predict_proba(P, subgroups=g), np.array(model.run_.predictions), atol=1e-12)


@pytest.mark.parametrize("initial", [None, TemperatureScaling(), DirichletScaling(l2=1e-2)])
def test_a_saved_model_predicts_bit_for_bit(digits, tmp_path, initial):
    P, y, g = digits["cal"]
    model = HUCBoost(TREE, UTILITIES, max_passes=3, initial=initial).fit(P, y, subgroups=g,
                                                                          validation=digits["val"])
    loaded = load_model(model.save(tmp_path / "model.json"))
    Pt, _, gt = digits["test"]
    assert np.array_equal(loaded.predict_proba(Pt, subgroups=gt), model.predict_proba(Pt, subgroups=gt))
    doc = model.to_json()
    assert doc["format"] == "huc-model/1" and len(doc["rules"]) == model.n_updates_
    assert (doc["initial"] is None) == (initial is None)


def test_a_declared_column_order_is_read_by_name(digits):
    """``labels=`` names the columns (here d1 and d0 swapped): HUCBoost fits on the columns put in the
    tree's order and predicts in the columns' order, so the swapped array gives the swapped
    predictions of the unswapped array; names that are not the tree's labels are one error."""
    P, y, _ = digits["cal"]
    shuffled = [f"d{k}" for k in (1, 0, 2, 3, 4, 5, 6, 7, 8, 9)]
    swap = [1, 0, 2, 3, 4, 5, 6, 7, 8, 9]
    plain = HUCBoost(TREE, UTILITIES, max_passes=2).fit(P, y)
    named = HUCBoost(TREE, UTILITIES, max_passes=2, labels=shuffled).fit(P[:, swap], np.array(TREE.labels)[y])
    assert named.rules_ == plain.rules_
    by_position = HUCBoost(TREE, UTILITIES, max_passes=2, labels=shuffled).fit(P[:, swap], np.array(swap)[y])
    assert by_position.rules_ == plain.rules_  # (an integer label is a column: shuffled[k], classes_[y])
    assert np.array_equal(named.predict_proba(P[:, swap]), plain.predict_proba(P)[:, swap])
    wrong = r"^labels: names the columns of y_prob \['d1', 'd0', .*\('d10' is not a label\)"
    with pytest.raises(HUCError, match=wrong):
        HUCBoost(TREE, UTILITIES, labels=shuffled[:9] + ["d10"]).fit(P, y)
    with pytest.raises(HUCError, match="expected an n x 10 array of probabilities, got shape"):
        HUCBoost(TREE, UTILITIES).fit(P[:, :9], y)


def test_subgroups_are_given_by_name_at_predict_time(fitted, digits):
    P, _, _ = digits["test"]
    with pytest.raises(HUCError, match="^subgroups: the model was fitted with subgroup 'dark'; give its values"):
        fitted.predict_proba(P)


def test_not_fitted_and_bad_parameters():
    with pytest.raises(HUCError, match="^HUCBoost: not fitted yet; call fit"):
        HUCBoost(TREE, UTILITIES).predict_proba(np.full((1, 10), 0.1))
    with pytest.raises(HUCError, match="^set_params: HUCBoost has no parameter 'epsilonn'"):
        HUCBoost(TREE, UTILITIES).set_params(epsilonn="0.01")


def test_scikit_learn_clone_and_params():
    sklearn_base = pytest.importorskip("sklearn.base")
    model = HUCBoost(TREE, UTILITIES, epsilon="0.01", initial=VectorScaling())
    copy = sklearn_base.clone(model)
    assert copy is not model and copy.get_params()["epsilon"] == "0.01"
    assert copy.set_params(method="uc").method == "uc"
    assert sklearn_base.clone(TemperatureScaling(l2=0.5)).l2 == 0.5


@pytest.mark.parametrize("cls, kind", [(TemperatureScaling, "temperature"), (VectorScaling, "vector"),
                                       (DirichletScaling, "dirichlet")])
def test_the_scaling_estimators_are_fit_scaling(digits, cls, kind):
    P, y, _ = digits["cal"]
    Pv, yv, _ = digits["val"]
    model = cls().fit(P, y, validation=(Pv, yv))
    ref = fit_scaling(P, np.eye(10)[y], None, kind, validation=(Pv, np.eye(10)[yv]))
    assert np.array_equal(model.predict_proba(digits["test"][0]), ref(digits["test"][0]))


def test_fast_audit_checks_the_columns_order_too(digits):
    P, y, _ = digits["test"]
    P = (1 - 1e-10) * P + 1e-11  # GNB's subnormal entries smoothed (K.1's kappa_init)
    ok = fast.audit(y, P, TREE, UTILITIES, labels=[f"d{k}" for k in range(10)])
    assert ok == fast.audit(y, P, TREE, UTILITIES)
    with pytest.raises(HUCError, match=r"^labels: names the columns of y_prob \['0', '1', .*\('0' is not a label\)"):
        fast.audit(y, P, TREE, UTILITIES, labels=list(range(10)))  # scikit-learn's integer classes_, as text
    swap = [1, 0, 2, 3, 4, 5, 6, 7, 8, 9]
    assert fast.audit(y, P[:, swap], TREE, UTILITIES, labels=[f"d{k}" for k in swap]) != ok  # (y: columns)
    assert fast.audit(np.array(swap)[y], P[:, swap], TREE, UTILITIES, labels=[f"d{k}" for k in swap]) == ok
    assert fast.audit(np.array(TREE.labels)[y], P[:, swap], TREE, UTILITIES, labels=[f"d{k}" for k in swap]) == ok


def test_trees_from_label_path_arrays_and_from_paths_in_the_columns_order():
    """hiclass-style n x depth label arrays; from_paths(labels=) in a classifier's column order."""
    rows = np.array([["animal", "dog"], ["plant", ""], ["animal", "cat"], ["animal", "dog"]])
    t = LabelTree.from_label_paths(rows)
    assert t.labels == ("animal/dog", "plant", "animal/cat") and t.internal_nodes == ("root", "animal")
    assert [t.label_index(LabelTree.path_label(r)) for r in rows] == [0, 1, 2, 0]
    ordered = LabelTree.from_label_paths(rows, labels=["animal/cat", "animal/dog", "plant"])
    assert ordered.labels == ("animal/cat", "animal/dog", "plant")
    with pytest.raises(HUCError, match=r"^labels: must list each of the 3 paths once \(the columns' order\)"):
        LabelTree.from_paths(["a/x", "a/y", "b"], labels=["a/x", "b"])


def test_a_tree_from_networkx_when_it_is_installed():
    nx = pytest.importorskip("networkx")
    g = nx.DiGraph([("r", "a"), ("r", "b"), ("a", "y1"), ("a", "y2")])
    t = LabelTree.from_networkx(g)
    assert t.labels == ("y1", "y2", "b") and t.children("r") == ("a", "b")
    with pytest.raises(HUCError, match="^graph: a tree has exactly one node without a parent, this graph has 2$"):
        LabelTree.from_networkx(nx.DiGraph([("r", "a"), ("s", "b")]))


def test_the_exact_path_checks_the_columns_order_too():
    from huc_ref import FiniteDistribution
    t = LabelTree.from_children("r", {"r": ["a", "b"]})
    d = FiniteDistribution.from_floats(t, [0], [[0.25, 0.75]], labels=["a", "b"])
    assert d.atoms[0].p[1] == 0.75
    assert FiniteDistribution.from_sample(t, ["a"], [["1/4", "3/4"]], labels=["b", "a"]).atoms[0].p == \
        (Fraction(3, 4), Fraction(1, 4))  # (the columns named b, a: put in the tree's order)
    with pytest.raises(HUCError, match=r"^labels: names the columns of y_prob \['b', 'c'\]"):
        FiniteDistribution.from_sample(t, ["a"], [["1/4", "3/4"]], labels=["b", "c"])


def test_the_fit_report_audits_held_out_data_with_p_values(digits):
    """#15: report_ audits the validation data before and after, each with p-values under the
    null of calibration, equal to fast.audit's with the same seed."""
    from huc_ref import fast
    P, y, g = digits["cal"]
    Pv, yv, gv = digits["val"]
    model = HUCBoost(TREE, UTILITIES, max_passes=2, null_draws=39, seed=5).fit(P, y, subgroups=g,
                                                                               validation=digits["val"])
    report = model.report_
    assert report["data"] == "validation"
    groups = {"all": np.ones(len(yv)), **gv}
    want = fast.audit(yv, model.predict_proba(Pv, subgroups=gv), TREE, UTILITIES, subgroups=groups, null_draws=39,
                      seed=5)
    assert report["after"].significance == want.significance and report["after"].huc.sup == want.huc.sup
    assert report["before"].significance.draws == 39
    assert HUCBoost(TREE, UTILITIES, max_passes=1).fit(P, y, subgroups=g).report_["after"].significance is None


def _small_model():
    t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    from huc_ref import TopK
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=200)
    y = rng.integers(0, 3, 200)
    return HUCBoost(t, {"u": TopK(t, 1)}, epsilon="0.05").fit(P, y).to_json(), P


def _set(path, value):
    def change(doc):
        *keys, last = path
        node = doc
        for k in keys:
            node = node[k]
        if value is KeyError:
            del node[last]
        else:
            node[last] = value
    return change


TAMPERED = [  # (change, kind, message start): a model file is input like any other (#18)
    (_set(["rules", 0, "alpha"], 1e308), "range", "rules[0].alpha: expected a finite step of magnitude at most"),
    (_set(["rules", 0, "alpha"], "x"), "type", "rules[0].alpha: expected a number, got 'x'"),
    (_set(["rules", 0, "alpha"], KeyError), "missing_field", "rules[0].alpha: missing"),
    (_set(["rules", 0, "node"], "a"), "reference", "rules[0].node: 'a' is not a branching node of the tree"),
    (_set(["rules", 0, "node"], "zz"), "reference", "rules[0].node: 'zz' is not a branching node of the tree"),
    # an object or a list as the node: the rule's error, not Python's TypeError "unhashable type"
    (_set(["rules", 0, "node"], {"r": 1}), "reference", "rules[0].node: {'r': 1} is not a branching node of the tree"),
    (_set(["rules", 0, "node"], ["r"]), "reference", "rules[0].node: ['r'] is not a branching node of the tree"),
    (_set(["rules", 0, "interval"], [0.9, 0.1]), "structure", "rules[0].interval: lo = 0.9 is above hi = 0.1"),
    (_set(["rules", 0, "interval"], [0.1, 0.2, 0.3]), "length", "rules[0].interval: expected [lo, hi], got 3"),
    (_set(["rules", 0, "interval"], [0.1, 7]), "range", "rules[0].interval[1]: expected a score in [-1, 1], got 7"),
    (_set(["rules", 0, "subgroup"], "nope"), "reference", "rules[0].subgroup: 'nope' is not one of the model's"),
    (_set(["rules", 0, "utility"], "nope"), "reference", "rules[0].utility: 'nope' is not one of the model's"),
    (_set(["rules", 0, "extra"], 1), "unknown_field", "rules[0].extra: unknown field of a huc-model/1 document"),
    (_set(["rules"], {"a": 1}), "type", "rules: expected a list"),
    (_set(["kappa"], -1), "range", "kappa: expected a number in (0, 1), got -1"),
    (_set(["kappa"], "abc"), "type", "kappa: expected a number in (0, 1), got 'abc'"),
    (_set(["kappa"], 1), "range", "kappa: expected a number in (0, 1), got 1"),  # K.1's kappa_0 in (0, 1)
    (_set(["method"], "uc"), "structure", "rules[0].node: a UC-Boost rule moves the leaves (node null)"),
    (_set(["method"], "xx"), "option", "method: expected 'huc' or 'uc', got 'xx'"),
    (_set(["initial"], "temperature"), "type", "initial: expected null or an object, got 'temperature'"),
    (_set(["initial"], {"kind": "zzz", "W": [], "b": [], "kappa": 0.1}), "unknown_kind", "initial.kind: expected"),
    (_set(["initial"], {"kind": "vector", "W": [[1.0]], "b": [0.0, 0.0, 0.0], "kappa": 1e-10}), "length",
     "initial.W: expected 3 x 3 numbers"),
    (_set(["subgroups"], ["all", "all"]), "structure", "subgroups[1]: 'all' is listed twice"),
    (_set(["subgroups"], ["x\x1b[2J"]), "type", "subgroups[0]: 'x\\x1b[2J' is not a name"),
    (_set(["options", "zz"], 1), "unknown_field", "options.zz: unknown field of a huc-model/1 document"),
    (_set(["zzz"], 1), "unknown_field", "zzz: unknown field of a huc-model/1 document"),
    (_set(["provenance"], KeyError), "missing_field", "provenance: missing"),
    (_set(["labels"], ["a", "b"]), "labels", "labels: leaf 'c' of the tree is missing"),
    # the options are HUCBoost's arguments, checked as its constructor's are at fit
    (_set(["options", "engine"], "bogus"), "option", "options.engine: expected 'exact' or 'fast', got 'bogus'"),
    (_set(["options", "max_passes"], "x"), "option", "options.max_passes: must be a positive integer, got 'x'"),
    (_set(["options", "epsilon"], "abc"), "not_exact", "options.epsilon: "),
    (_set(["options", "epsilon"], 2), "option", "options.epsilon: must be in (0, 1], got 2"),
    (_set(["options", "select"], "zz"), "option", "options.select: expected one of 'greedy', 'passes', 'drain'"),
    (_set(["options", "max_updates"], -1), "option", "options.max_updates: expected None or an integer from 0 to"),
    (_set(["options", "validation_fraction"], 2), "option", "options.validation_fraction: expected a number in (0, 1)"),
    (_set(["options", "prefix_guard"], "x"), "option", "options.prefix_guard: expected None or a finite number"),
    (_set(["options", "seed"], -1), "option", "options.seed: expected a non-negative integer, got -1"),
    (_set(["provenance", "updates_run"], 0), "range", "provenance.updates_run: expected an integer from"),
    (_set(["provenance", "updates_kept"], 10**6), "structure", "provenance.updates_kept: 1000000 updates kept, but"),
    (_set(["provenance", "stopped"], "sometimes"), "option", "provenance.stopped: expected one of 'tolerance', "
     "'budget', 'cap', got 'sometimes'"),
    (_set(["provenance", "validation"], 3), "type", "provenance.validation: expected a string, got 3"),
    (_set(["provenance", "x"], 3), "unknown_field", "provenance.x: unknown field of a huc-model/1 document"),
    (_set(["provenance", "huc_ref"], KeyError), "missing_field", "provenance.huc_ref: missing"),
]


@pytest.mark.parametrize("change, kind, message", TAMPERED)
def test_a_tampered_model_gets_one_error_before_anything_is_applied(change, kind, message):
    import copy
    doc, _ = _small_model()
    bad = copy.deepcopy(doc)
    change(bad)
    with pytest.raises(HUCError) as err:
        load_model(bad)
    assert str(err.value).startswith(message) and err.value.kind == kind, (str(err.value), err.value.kind)


def test_a_model_file_with_nan_or_a_repeated_key_is_refused_by_the_cli(tmp_path, capsys):
    import json

    from huc_ref.cli import main
    doc, P = _small_model()
    np.save(tmp_path / "P.npy", P)
    good = tmp_path / "m.json"
    good.write_text(json.dumps(doc))
    assert main(["apply", str(good), str(tmp_path / "P.npy"), "-o", str(tmp_path / "o.npy")]) == 0
    capsys.readouterr()
    for text, error in ((json.dumps(doc).replace('"alpha": ', '"alpha": NaN, "x": ', 1),
                         "not valid JSON: NaN is not a number"),
                        ('{"format": "huc-model/1", "format": 1}', "the key 'format' appears twice")):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        assert main(["apply", str(bad), str(tmp_path / "P.npy"), "-o", str(tmp_path / "o.npy")]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"huc: error: {error}") and err.count("\n") == 1


@pytest.mark.parametrize("call, kind, message", [
    (lambda m, P, y: m.predict_proba([[1e308, 1e308, 1e308]]), "float_range",
     "y_prob[0]: entries must be finite and nonnegative, with a positive sum"),
    (lambda m, P, y: m.predict_proba([["a", "b", "c"]]), "type", "y_prob: expected numbers, got text"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities).fit(P, y, validation=(P,)), "type",
     "validation: expected (y_prob, y_true[, subgroups]), None (a held-out part of the calibration data) or False "
     "(none), got a tuple of 1"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities).fit(P, y, validation=True), "type",
     "validation: expected (y_prob, y_true[, subgroups]), None (a held-out part of the calibration data) or False "
     "(none), got True"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities, validation_fraction=1).fit(P, y), "option",
     "validation_fraction: expected a number in (0, 1), the share of the calibration rows held out"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities, prefix_guard=-1.0).fit(P, y), "option",
     "prefix_guard: expected None or a finite number >= 0 of standard errors, got -1.0"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities, verbose="yes").fit(P, y), "option",
     "verbose: expected True, False or an integer >= 0, got 'yes'"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities, max_updates=10**6).fit(P, y), "option",
     "max_updates: expected None or an integer from 0 to 100000 (MAX_RULES, the most rules a model holds)"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities, seed=-2).fit(P, y), "option",
     "seed: expected a non-negative integer, got -2"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities, epsilon=float("nan")).fit(P, y), "not_exact",
     "epsilon: nan is not a finite number"),
    (lambda m, P, y: TemperatureScaling(labels=["a", "b"]).fit(P, y), "labels",
     "labels: expected 3 distinct classes, one for each column of y_prob, got ['a', 'b']"),
    (lambda m, P, y: TemperatureScaling(labels=3).fit(P, y), "labels",
     "labels: expected the 3 classes of y_prob's columns (e.g. a classifier's classes_), got int"),
    (lambda m, P, y: TemperatureScaling().fit(P, y % 2), "labels",
     "y_true: has 2 distinct labels [0, 1] for the 3 columns of y_prob; pass labels= with the columns' classes"),
    (lambda m, P, y: TemperatureScaling(labels=["a", "b", "c"]).fit(P, y), "reference",
     "y_true[0]: 2 is not one of the classes ['a', 'b', 'c'] (the columns of y_prob: labels=)"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities, kappa=-1).fit(P, y), "option",
     "kappa: expected a number in (0, 1) (K.1's kappa_init), got -1"),
    (lambda m, P, y: TemperatureScaling().fit(P, y, validation=P), "type",
     "validation: expected (y_prob, y_true), got ndarray"),
    (lambda m, P, y: TemperatureScaling().fit([["x", "y", "z"]], [0]), "type", "y_prob: expected numbers, got text"),
    # found by calling every parameter with wrong values: never NaN predictions, a silent uniform law
    # for a row of zeros, or TypeErrors, AttributeErrors and ValueErrors from inside numpy and scipy
    (lambda m, P, y: TemperatureScaling().fit(P, y).predict_proba([[0.5, -0.1, 0.6]]), "float_range",
     "y_prob[0]: entries must be finite and nonnegative, with a positive sum"),
    (lambda m, P, y: VectorScaling().fit(P, y).predict_proba([[0.0, 0.0, 0.0]]), "float_range",
     "y_prob[0]: entries must be finite and nonnegative, with a positive sum"),
    (lambda m, P, y: TemperatureScaling().fit(P, y).predict_proba([[0.5, 0.5]]), "length",
     "y_prob: expected an n x 3 array of probabilities, got shape (1, 2)"),
    (lambda m, P, y: VectorScaling().fit(0.5, y), "length", "y_prob: expected an n x K array of probabilities, got "
     "shape ()"),
    (lambda m, P, y: TemperatureScaling(l2=None).fit(P, y), "option",
     "l2: expected a finite number >= 0 (H.6's lambda), got None"),
    # kappa / K below float64's normal range: named as kappa's fault, not the predictions' zeros
    (lambda m, P, y: HUCBoost(m.tree, m.utilities, kappa=5e-324).fit(P, y), "option",
     "kappa: 5e-324 / K is below float64's normal range (2.225e-308), so the smoothed entries are not all "
     "positive normal numbers; use kappa >= 6.682e-308"),
    (lambda m, P, y: DirichletScaling(kappa=5e-324).fit(P, y), "option",  # (a NaN error from scipy before)
     "kappa: 5e-324 / K is below float64's normal range"),
    (lambda m, P, y: TemperatureScaling(kappa="1e-10").fit(P, y), "option",
     "kappa: expected a number in (0, 1) (K.1's kappa_init), got '1e-10'"),
    (lambda m, P, y: DirichletScaling(l2_grid=0.1).fit(P, y, validation=(P, y)), "option",
     "l2_grid: expected a non-empty list of lambdas, got 0.1"),
    (lambda m, P, y: DirichletScaling(l2_grid=[0.1, -1]).fit(P, y, validation=(P, y)), "option",
     "l2_grid[1]: expected a finite number >= 0 (H.6's lambda), got -1"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities, initial="temperature").fit(P, y), "option",
     "initial: expected None, TemperatureScaling(), VectorScaling() or DirichletScaling() (H.2's first stage), got "
     "'temperature'"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities, max_passes=None).fit(P, y), "option",
     "max_passes: must be a positive integer, got None"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities, method=np.array(["huc"])).fit(P, y), "option",
     "method: expected 'huc' or 'uc', got an array of shape (1,)"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities, engine="gpu").fit(P, y), "option",
     "engine: expected 'exact' or 'fast', got 'gpu'"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities, labels=3).fit(P, y), "labels",
     "labels: expected a list of leaf names (e.g. a classifier's classes_), got int"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities).fit(P, y, subgroups=[np.ones(len(P))]), "type",
     "subgroups: expected a non-empty mapping from name to n values in [-1, 1]"),
    (lambda m, P, y: load_model(None), "type",
     "model: expected a huc-model/1 document (a dict) or a path to one, got NoneType"),
    # a bad validation split is named as the part it is ("validation[1]"), not as the calibration
    # data's ("y_true: has 199 labels, y_prob has 200 rows")
    (lambda m, P, y: HUCBoost(m.tree, m.utilities).fit(P, y, validation=(P, y[:-1])), "length",
     "validation[1]: has 199 labels, validation[0] has 200 rows"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities).fit(P, y, validation=(P, y * 0 + 3)), "reference",
     "validation[1][0]: 3 is not a label name or id"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities, initial=TemperatureScaling()).fit(P, y, validation=(P, y * 0 + 3)),
     "reference", "validation[1][0]: 3 is not a label name or id"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities).fit(P, y, subgroups={"g": y == 0}, validation=(P, y, {"h": y})),
     "missing_field", "validation[2]: the model was fitted with subgroup 'g'; give its values under that name in "
     "validation[2] (one per row of validation[0])"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities).fit(P, y, subgroups={"g": y == 0}, validation=(P, y, {"g": y[:3]})),
     "length", "validation[2]['g']: expected one value per row of validation[0] (200), got shape (3,)"),
    (lambda m, P, y: HUCBoost(m.tree, m.utilities).fit(P, y, validation=(P, y, [y])), "type",
     "validation[2]: expected a non-empty mapping from name to n values in [-1, 1]"),
    (lambda m, P, y: TemperatureScaling().fit(P, y, validation=(P, y * 0 + 3)), "reference",
     "validation[1][0]: 3 is not one of the classes [0, 1, 2] (the columns of validation[0]: labels=)"),
])
def test_the_estimators_refuse_bad_arguments_with_one_error(call, kind, message):
    """#18 on the practitioner's API: an overflowing row, text, a malformed validation split and a bad
    kappa each get one HUCError with its kind (an overflow warning, an IndexError and a misleading
    y_prob message before); a negative or NaN entry (NaN out before), a row of zeros (the uniform
    law out before), and each constructor argument of the wrong type or range."""
    import warnings
    doc, P = _small_model()
    model = load_model(doc)
    y = np.random.default_rng(0).integers(0, 3, len(P))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(HUCError) as err:
            call(model, P, y)
    assert str(err.value).startswith(message) and err.value.kind == kind, (str(err.value), err.value.kind)


@pytest.mark.parametrize("engine", ["fast", "exact"])
@pytest.mark.filterwarnings("ignore::huc_ref.calibration.NoValidationWarning")
def test_sample_weights_are_used_and_a_zero_weight_is_refused(engine):
    """HUCBoost.fit takes sample weights on both engines (the fast one from the arrays, the exact
    one through a FiniteDistribution): doubling every weight changes nothing, a weight of 0 is
    refused with one HUCError naming it."""
    t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    us = {"u": Top1AtDepth(t, 1)}
    P = np.tile([[0.4, 0.1, 0.3, 0.2], [0.1, 0.2, 0.3, 0.4]], (6, 1))
    y = [0, 3, 2, 3, 0, 1, 2, 3, 0, 3, 1, 2]
    w = np.arange(1, 13, dtype=float)
    one = HUCBoost(t, us, epsilon="1/50", engine=engine, max_updates=5).fit(P, y, sample_weight=w, validation=False)
    two = HUCBoost(t, us, epsilon="1/50", engine=engine, max_updates=5).fit(P, y, sample_weight=2 * w,
                                                                            validation=False)
    plain = HUCBoost(t, us, epsilon="1/50", engine=engine, max_updates=5).fit(P, y, validation=False)
    assert one.rules_ == two.rules_ and one.rules_ != plain.rules_
    # the first stage of a two-stage fit (H.2) weighs the rows as the boosting does
    two_stage = HUCBoost(t, us, epsilon="1/50", engine=engine, max_updates=5, initial=TemperatureScaling())
    first = two_stage.fit(P, y, sample_weight=w, validation=False).initial_.predict_proba(P)
    weighted = TemperatureScaling().fit(two_stage._inputs(P), y, sample_weight=w).predict_proba(P)
    unweighted = TemperatureScaling().fit(two_stage._inputs(P), y).predict_proba(P)
    assert np.array_equal(first, weighted) and not np.allclose(weighted, unweighted)
    # the report audits the calibration data as the fit weighed it
    P_in = one._inputs(P)
    for when, preds in (("before", P_in), ("after", one.predict_proba(P))):
        want = fast.audit(y, preds, t, us, subgroups={"all": np.ones(len(y))}, sample_weight=w)
        assert one.report_[when].to_json() == want.to_json()
        assert plain.report_[when].to_json() != one.report_[when].to_json()
    with pytest.raises(HUCError, match=r"sample_weight\[1\]: 0.0 is not a finite positive number"):
        HUCBoost(t, us, epsilon="1/50", engine=engine).fit(P, y, sample_weight=[1, 0] + [1] * 10)


@pytest.mark.parametrize("flint", [True, False])
@pytest.mark.filterwarnings("ignore::huc_ref.calibration.NoValidationWarning")
def test_a_certified_fit_makes_the_certified_engines_run(monkeypatch, flint):
    """HUCBoost(engine="exact") boosts in certified float64 where python-flint is installed (the
    certified engine where its bounds cannot decide), else in the certified engine alone: either
    way the rules are an independent certified-engine run's (the same nodes, utilities and
    subgroups in order, intervals and steps within 1e-9), on tied rows with zeros smoothed by
    K.1's kappa_init, and Theorem 3.5 is certified."""
    import importlib.util

    from huc_ref import TopK
    from huc_ref.boost import boost as engine_boost
    from huc_ref.calibration import _probabilities, _sample, _subgroup_values
    from huc_ref.fast.context import Certified
    if not flint:
        real = importlib.util.find_spec
        monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "flint" else real(name, *a))
    t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    us = {"side": Top1AtDepth(t, 1), "top1": TopK(t, 1)}
    P = np.tile([[0.5, 0.0, 0.5, 0.0], [0.1, 0.2, 0.3, 0.4], [0.0, 0.25, 0.0, 0.75]], (5, 1))
    y = [0, 3, 3, 2, 0, 1, 2, 3, 3, 0, 1, 1, 2, 3, 3]
    model = HUCBoost(t, us, epsilon="1/100", engine="exact", select="greedy", max_updates=12).fit(P, y,
                                                                                                 validation=False)
    assert (model.run_.arithmetic == Certified.arithmetic) == flint  # (the certified engine's: "certified")
    names, C = _subgroup_values(None, len(P))
    dist = _sample(t, _probabilities(P, t.K, model.kappa), np.array(y), names, C, None)
    ref = engine_boost(dist, us, epsilon="1/100", max_updates=12)
    assert len(model.rules_) == len(ref.updates) > 3 and ref.theorem_3_5["certified"]
    assert model.run_.theorem_3_5["certified"] and model.run_.theorem_3_5["holds"]
    for (k, u, a, lo, hi, alpha), want in zip(model.rules_, ref.updates):
        assert (names[k], u, t.nodes[a]) == (want["subgroup"], want["utility"], want["node"])
        assert all(abs(Fraction(x) - Fraction(w)) <= Fraction(1, 10**9)
                   for x, w in zip((lo, hi, alpha), (*want["interval"], want["alpha"])))


@pytest.mark.parametrize("engine", ["fast", "exact"])
def test_the_null_draws_are_checked_before_the_boosting(monkeypatch, engine):
    """A bad ``seed`` or ``null_draws``, or bad validation atoms, are refused before any update
    (not after the whole fit has run, by the report or K.1's prefix selection)."""
    import huc_ref.calibration as calibration
    t = LabelTree.from_children("r", {"r": ["a", "b"]})

    def never(*args, **kwargs):
        raise AssertionError("boosted before the options were checked")
    monkeypatch.setattr(calibration, "boost", never)
    monkeypatch.setattr(calibration, "boost_sample", never)
    for options, message in ((dict(null_draws=9, seed=-1), "seed: expected a non-negative integer, got -1"),
                             (dict(null_draws=0), "null_draws: expected a positive integer")):
        with pytest.raises(HUCError, match=f"^{message}"):
            HUCBoost(t, {"u": Top1AtDepth(t, 1)}, engine=engine, **options).fit([[0.5, 0.5]] * 2, [0, 1])
    for validation, message in ((([[0.5, float("nan")]], [0]), r"validation\[0\]\[0\]: entries must be finite"),
                                (([[0.5, 0.5]], [0, 1]), r"validation\[1\]: has 2 labels, validation\[0\] has 1 rows"),
                                (([[0.5, 0.5]], [0], {"h": [1]}), r"validation\[2\]: the model was fitted with")):
        with pytest.raises(HUCError, match=f"^{message}"):  # the validation atoms too
            HUCBoost(t, {"u": Top1AtDepth(t, 1)}, engine=engine).fit([[0.5, 0.5]] * 2, [0, 1], subgroups={"g": [1, 0]},
                                                                     validation=validation)


class _Frame:
    """What the column check reads of a pandas DataFrame (``columns``, ``to_numpy``); iterating over
    it gives its column names, as a DataFrame's iteration does (so its rows must come from ``to_numpy``)."""

    def __init__(self, array, columns):
        self.array, self.columns = np.asarray(array), list(columns)

    def to_numpy(self):
        return self.array

    def __iter__(self):
        return iter(self.columns)

    def __len__(self):
        return len(self.array)


def _frames():
    """The stand-in, and pandas' DataFrame where pandas is installed."""
    out = [_Frame]
    try:
        import pandas as pd
        out.append(lambda array, columns: pd.DataFrame(array, columns=columns))
    except ImportError:
        pass
    return out


@pytest.mark.parametrize("frame", _frames())
def test_a_dataframes_column_names_are_checked_as_labels(digits, frame):
    """``pd.DataFrame(predict_proba, columns=classes_)`` in the tree's order audits, fits and predicts
    as its array does; in another order (columns d1, d0, ...) each column is read as the label it
    names, by ``fast.audit``, ``HUCBoost.fit`` / ``predict_proba`` (which answers in the order of
    ``classes_``, learned at fit) and ``FiniteDistribution.from_floats``; columns named otherwise (0 .. 9) are read
    as the array."""
    from huc_ref import FiniteDistribution
    P, y, _ = digits["test"]
    P = (1 - 1e-10) * P + 1e-11
    names = [f"d{k}" for k in range(10)]
    swapped = [f"d{k}" for k in (1, 0, 2, 3, 4, 5, 6, 7, 8, 9)]
    good, bad, plain = frame(P, names), frame(P, swapped), frame(P, range(10))
    assert fast.audit(y, good, TREE, UTILITIES) == fast.audit(y, P, TREE, UTILITIES) == \
        fast.audit(y, plain, TREE, UTILITIES)
    by_name = P[:, [swapped.index(lab) for lab in TREE.labels]]  # the columns named d1, d0, ... in the tree's order
    assert fast.audit(np.array(TREE.labels)[y], bad, TREE, UTILITIES) == fast.audit(y, by_name, TREE, UTILITIES)
    y_bad = np.array([swapped.index(f"d{k}") for k in range(10)])[y]  # integers: positions among bad's columns
    assert fast.audit(y_bad, bad, TREE, UTILITIES) == fast.audit(y, by_name, TREE, UTILITIES)
    model = HUCBoost(TREE, UTILITIES, max_passes=1).fit(good, y)
    assert np.array_equal(model.predict_proba(good), HUCBoost(TREE, UTILITIES, max_passes=1).fit(P, y).predict_proba(P))
    assert np.array_equal(model.predict_proba(bad), model.predict_proba(by_name))  # (in classes_' order, d0 .. d9)
    assert FiniteDistribution.from_floats(TREE, y_bad[:3].tolist(), frame(P[:3], swapped)).atoms == \
        FiniteDistribution.from_floats(TREE, y[:3].tolist(), by_name[:3]).atoms
    assert FiniteDistribution.from_floats(TREE, y[:3].tolist(), frame(P[:3], names)).atoms == \
        FiniteDistribution.from_floats(TREE, y[:3].tolist(), P[:3]).atoms


def test_integer_labels_are_refused_where_label_names_are_other_positions(tmp_path, capsys):
    """Labels named "0".."3" listed in another order (a hierarchy grouping the classes): an integer
    label could be a name or a position, so the fast audit, the exact path, HUCBoost and the
    CLI's ``.npy`` labels refuse integers with the error naming such a label; names as strings
    work (a CSV's cells that are label names are names); a tree listing "0".."3" in order takes
    integers as before."""
    import json

    from huc_ref import FiniteDistribution, TopK
    from huc_ref.cli import main
    grouped = LabelTree.from_children("r", {"r": ["even", "odd"], "even": ["0", "2"], "odd": ["1", "3"]},
                                      labels=["0", "2", "1", "3"])  # (the columns' order, declared)
    rng = np.random.default_rng(4)
    P, y = rng.dirichlet(np.ones(4), size=30), rng.integers(0, 4, size=30)
    us = {"top2": TopK(grouped, 2)}
    message = (r"^y_true: integer labels are ambiguous for this tree: they are read as label ids \(positions in the "
               r"tree's label order\), but the label named '2' is at position 1; give the labels as their names")
    for call in (lambda: fast.audit(y, P, grouped, us), lambda: fast.audit(y.tolist(), P, grouped, us),
                 lambda: FiniteDistribution.from_floats(grouped, y.tolist(), P),
                 lambda: HUCBoost(grouped, us, max_passes=1).fit(P, y)):
        with pytest.raises(HUCError, match=message):
            call()
    names = np.array(grouped.labels)[y]  # the names of the positions y: the same audit as the positions
    assert fast.audit(names, P, grouped, us) == fast.audit(names.tolist(), P, grouped, us)
    ordered = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["0", "1"], "b": ["2", "3"]})
    assert fast.audit(y, P, ordered, {"top2": TopK(ordered, 2)}) == \
        fast.audit(y.astype(str), P, ordered, {"top2": TopK(ordered, 2)})
    spec = {"tree": grouped.to_json(), "labels": list(grouped.labels), "utilities": {"top2": {"kind": "top_k", "k": 2}},
            "columns": list(grouped.labels)}  # (p.npy's columns: in the tree's order, stated)
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", y)  # integers: positions or names?
    (tmp_path / "y.csv").write_text("label\n" + "\n".join(names) + "\n")  # text: the names "0".."3"
    args = ["audit", "--tree", str(tmp_path / "spec.json"), "--predictions", str(tmp_path / "p.npy"), "--engine",
            "fast", "--json", "--labels"]
    assert main(args + [str(tmp_path / "y.npy")]) == 2
    assert "integer labels are ambiguous for this tree" in capsys.readouterr().err
    assert main(args + [str(tmp_path / "y.csv")]) == 0  # a text file's cells that name labels are names
    assert json.loads(capsys.readouterr().out)["huc"]["value"] == fast.audit(names, P, grouped, us).huc.sup


@pytest.mark.parametrize("bad, message", [([True, 0], "y_true[0]: True is not a label name or id"),
                                          ([0, 1.0], "y_true[1]: 1.0 is not a label name or id"),
                                          ([0.5, 1.5], "y_true[0]: 0.5 is not a label name or id"),
                                          (np.array([1.0, 0.0]), "y_true[0]: 1.0 is not a label name or id")])
def test_the_exact_path_reads_labels_as_the_fast_path_does(bad, message):
    """``FiniteDistribution.from_sample`` takes numpy's integers as label ids (``y_test`` of
    scikit-learn is an int64 array; they were refused as 'not a label'), as Python's integers
    and the names; booleans and floats get the fast path's own message, from ``from_floats``
    too (which read labels 0.5 and 1.5 as ids 0 and 1, and True as 1, without a word)."""
    from huc_ref import FiniteDistribution, TopK
    t = LabelTree.from_children("r", {"r": ["a", "b"]})
    rows = [["1/4", "3/4"], ["1/2", "1/2"]]
    atoms = FiniteDistribution.from_sample(t, [1, 0], rows).atoms
    assert FiniteDistribution.from_sample(t, np.array([1, 0]), rows).atoms == atoms
    assert FiniteDistribution.from_sample(t, np.array(["b", "a"]), rows).atoms == atoms
    with pytest.raises(HUCError) as exact_err:
        FiniteDistribution.from_sample(t, bad, rows)
    with pytest.raises(HUCError) as fast_err:
        fast.audit(bad, [[0.25, 0.75], [0.5, 0.5]], t, {"u": TopK(t, 1)})
    with pytest.raises(HUCError) as floats_err:
        FiniteDistribution.from_floats(t, bad, [[0.25, 0.75], [0.5, 0.5]])
    assert str(exact_err.value) == str(fast_err.value) == str(floats_err.value) == message


@pytest.mark.parametrize("y_true, y_prob, message", [
    ([0, 1], [0.25, 0.75], "y_prob[0]: expected 2 probabilities, one per label, got float"),
    ([0, 1], [[0.25, 0.75], [0.5]], "y_prob[1]: has 1 entries, expected 2 (one per label)"),
    ([0, 1], [[0.25, "0.75"], [0.5, 0.5]], "y_prob[0][1]: '0.75' is not a number (from_floats reads arrays of floats)"),
    ([0, 1], [[0.25, None], [0.5, 0.5]], "y_prob[0][1]: None is not a number (from_floats reads arrays of floats)"),
    ([0, 1], np.array([[True, False], [False, True]]),
     "y_prob[0][0]: True is not a number (from_floats reads arrays of floats)"),
    ([0, 1], 7, "y_prob: expected one row of 2 probabilities per label, got int"),
    ("ab", [[0.25, 0.75], [0.5, 0.5]], "y_true: expected one label (a name or an id) per row of y_prob, got str"),
    ([0, 1], [0, 1], "y_prob[0]: expected 2 probabilities, one per label, got int"),  # (the arguments swapped)
    (np.array([[0.25, 0.75], [0.5, 0.5]]), [[0.25, 0.75], [0.5, 0.5]],
     "y_true: expected one label (a name or an id) per row of y_prob, got an array of shape (2, 2)"),
    ([0, 1], [[0.0, 1.0], [0.5, 0.5]],
     "atoms[0].p[0]: is 0; the paper assumes p_y > 0 (A.2): pass smooth=kappa to mix it with the uniform law"),
])
def test_from_floats_refuses_what_is_not_a_float_table_in_one_message(y_true, y_prob, message):
    """Each was a TypeError or ValueError from deep inside (``'int' object is not iterable`` for the
    arguments swapped, ``could not convert string to float``), or, for text, a silent binary reading
    of a decimal string; a zero names ``smooth``, which ``from_floats`` now takes."""
    from huc_ref import FiniteDistribution
    t = LabelTree.from_children("r", {"r": ["a", "b"]})
    with pytest.raises(HUCError) as err:
        FiniteDistribution.from_floats(t, y_true, y_prob)
    assert str(err.value).startswith(message)
    if "is 0" in message:
        smoothed = FiniteDistribution.from_floats(t, y_true, y_prob, smooth="1/10")
        assert smoothed.atoms[0].p == (Fraction(1, 20), Fraction(19, 20))


@pytest.mark.parametrize("shape, size, width", [("two_level", 2, 2), ("flat", 10, 1), ("wide_last", 1, 30),
                                                  ("two_level", 10, 10)])
def test_a_boolean_mask_is_a_subgroup_indicator_on_every_path(shape, size, width):
    """``subgroups={"g": df.col == v}``, the way a practitioner writes a subgroup, was refused on every
    path ("expected numbers, got booleans"); a mask is now the indicator ``c(x) = 1`` where True and
    0 elsewhere (Sec. 2.1): the same audit, model and atoms as the 0/1 floats. On four labels, a flat
    ten, a node of thirty children last at its depth, and a 100-class softmax whose rows hold entries
    near 1e-300."""
    from huc_ref import FiniteDistribution, TopK, audit
    from tests.strategies import shape_tree
    t = shape_tree(shape, size, width, 1)
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(40, t.K)) - 690 * (rng.random((40, t.K)) < 0.9) * (t.K == 100)
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    assert t.K != 100 or 1e-305 < P.min() < 1e-295  # (the softmax's tails)
    y = rng.integers(0, t.K, 40)
    mask = rng.random(40) < 0.5
    us = {"top1": TopK(t, 1), "top2": TopK(t, 2)}

    class Series:  # what is read of a pandas Series of booleans
        def to_numpy(self):
            return mask.copy()
    for given in (mask, list(mask), [bool(v) for v in mask], Series()):
        assert fast.audit(y, P, t, us, subgroups={"all": np.ones(40), "g": given}) == \
            fast.audit(y, P, t, us, subgroups={"all": np.ones(40), "g": mask.astype(float)})
    model = HUCBoost(t, us, max_updates=4).fit(P, y, subgroups={"g": mask})
    assert model.rules_ == HUCBoost(t, us, max_updates=4).fit(P, y, subgroups={"g": mask.astype(float)}).rules_
    assert np.array_equal(model.predict_proba(P, subgroups={"g": mask}),
                          model.predict_proba(P, subgroups={"g": mask.astype(float)}))
    exact = FiniteDistribution.from_floats(t, y, P, subgroups={"all": np.ones(40), "g": mask})
    assert exact.atoms == FiniteDistribution.from_floats(t, y, P, subgroups={"all": np.ones(40),
                                                                             "g": mask.astype(float)}).atoms
    rows = [[Fraction(x) for x in r] for r in P]
    assert FiniteDistribution.from_sample(t, y, rows, subgroups={"g": list(mask)}, renormalize=True).atoms == \
        FiniteDistribution.from_sample(t, y, rows, subgroups={"g": mask.astype(int).tolist()}, renormalize=True).atoms
    assert audit(exact, us).huc.sup > 0


def test_kappa_and_l2_are_any_real_numbers_and_the_model_still_saves():
    """``kappa`` and ``l2`` were refused unless Python's int or float (``np.float32(1e-6)`` too);
    they are any real number in range, and the model document writes ``kappa`` as a float (a
    Fraction is not JSON)."""
    import json
    t = LabelTree.from_children("r", {"r": ["a", "b", "c", "d"]})
    P = np.tile([[0.7, 0.1, 0.1, 0.1], [0.25] * 4], (10, 1))
    y = np.arange(20) % 4
    for kappa in (np.float32(1e-6), Fraction(1, 10**6), 1e-6):
        model = HUCBoost(t, {"u": Top1AtDepth(t, 1)}, kappa=kappa, max_updates=3).fit(P, y)
        again = load_model(json.loads(json.dumps(model.to_json())))
        assert np.array_equal(again.predict_proba(P), model.predict_proba(P))
        assert TemperatureScaling(kappa=kappa, l2=np.float32(1e-3)).fit(P, y).predict_proba(P).shape == (20, 4)


def test_a_bare_predict_proba_is_refused_where_the_trees_label_order_was_never_declared():
    """A classifier's ``predict_proba`` has its columns in the sorted order of ``classes_``; a tree
    built in the hierarchy's order (GIA's clarity grades: ``FL`` ... ``I1``, best to worst, eight
    classes) lists its leaves otherwise.  A bare array with such a tree is one HUCError saying how
    to declare the order, for the fast audit, the exact path's float reader and HUCBoost; with
    the order declared (``labels=clf.classes_`` as a numpy array at the call, or the tree built
    or re-declared with it) the audit is the one of the columns permuted into the tree's order,
    not of the permuted columns (which differ); a tree whose leaves are already sorted needs
    nothing."""
    from sklearn.linear_model import LogisticRegression

    from huc_ref import FiniteDistribution, TopK
    grades = {"flawless": ["FL", "IF"], "very_very_slight": ["VVS1", "VVS2"], "very_slight": ["VS1", "VS2"],
              "included": ["SI1", "I1"]}
    tree = LabelTree.from_nested({"clarity": grades})  # hierarchy order: FL, IF, VVS1, ..., I1
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = np.array(tree.labels)[np.clip((X[:, 0] * 2 + 4 + rng.normal(size=400)).astype(int), 0, 7)]
    clf = LogisticRegression(max_iter=500).fit(X, y)
    P = clf.predict_proba(X)
    assert list(clf.classes_) != list(tree.labels)  # sorted: FL, I1, IF, SI1, VS1, VS2, VVS1, VVS2
    us = {"top2": TopK(tree, 2), "side": Top1AtDepth(tree, 1)}
    message = (r"^y_prob: its columns carry no names, and the tree's label order \['FL', 'IF', 'VVS1', .* was never "
               r"declared and is not the sorted order a classifier's classes_ has; pass labels=clf\.classes_")
    for call in (lambda: fast.audit(y, P, tree, us), lambda: FiniteDistribution.from_floats(tree, y, P),
                 lambda: HUCBoost(tree, us, max_passes=1).fit(P, y)):
        with pytest.raises(HUCError, match=message):
            call()
    order = [list(clf.classes_).index(lab) for lab in tree.labels]  # the columns in the tree's order
    want = fast.audit(y, P[:, order], tree, us, labels=tree.labels).to_json()
    assert fast.audit(y, P, tree, us, labels=clf.classes_).to_json() == want  # (a numpy array of names)
    declared = tree.with_labels(clf.classes_)
    with pytest.raises(HUCError, match=r"^utilities\['top2'\]: is bound to a different label tree .* build it on"):
        fast.audit(y, P, declared, us)  # (a utility's values follow its own tree's label order)
    us_declared = {"top2": TopK(declared, 2), "side": Top1AtDepth(declared, 1)}
    assert fast.audit(y, P, declared, us_declared).huc.sup == pytest.approx(want["huc"]["value"], rel=1e-12)
    assert fast.audit(y, P, tree, us, labels=tree.labels).huc.sup != want["huc"]["value"]  # the silent misreading
    model = HUCBoost(tree, us, max_passes=2, labels=clf.classes_).fit(P, y)
    out = model.predict_proba(P)  # in the columns' order, as given
    assert np.allclose(out.sum(axis=1), 1) and np.corrcoef(out.ravel(), P.ravel())[0, 1] > 0.9
    again = HUCBoost(declared, us_declared, max_passes=2).fit(P, y).predict_proba(P)
    assert np.allclose(out, again, atol=1e-12)
    flat = LabelTree.from_children("r", {"r": sorted(tree.labels)})
    assert fast.audit(y, P, flat, {"top2": TopK(flat, 2)}).n == len(y)  # sorted leaves: classes_' order
    numbered = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["0", "2", "10"], "b": ["1"]})
    with pytest.raises(HUCError, match="its columns carry no names"):  # 0, 2, 10, 1: not numeric order
        fast.audit([0, 1], np.full((2, 4), 0.25), numbered, {"top1": TopK(numbered, 1)})
    numeric = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["0", "1"], "b": ["2", "10"]})
    assert fast.audit([0, 3], np.full((2, 4), 0.25), numeric, {"top1": TopK(numeric, 1)}).n == 2  # 0, 1, 2, 10


def test_a_fit_on_labels_named_by_digits_out_of_position_reads_its_own_ids():
    """A tree whose labels are named "1" and "0", in that order: labels given as names are read once;
    HUCBoost's own ids, passed on to its held-out rows, its run and its report, were asked again
    whether they meant names (the integer-labels error, though the user gave names).  The fit's
    report is the fast audit of the same names."""
    from huc_ref import TopK
    t = LabelTree.from_children("r", {"r": ["1", "0"]}, labels=["1", "0"])
    rng = np.random.default_rng(0)
    P = rng.dirichlet([1, 1], 60)
    y = np.array(["1", "0"])[rng.integers(0, 2, 60)]
    us = {"u": TopK(t, 1)}
    model = HUCBoost(t, us, max_passes=2, validation_fraction=0.5).fit(P, y)
    held = model.held_out_
    # (the report's predictions carry K.1's kappa_init smoothing: equal to 1e-9)
    assert model.report_["before"].huc.sup == pytest.approx(fast.audit(y[held], P[held], t, us).huc.sup, rel=1e-9)
    with pytest.raises(HUCError, match="integer labels are ambiguous for this tree"):
        HUCBoost(t, us, max_passes=2).fit(P, (y == "0").astype(int))  # (the user's integers still are)


@pytest.mark.parametrize("engine, new", [("fast", "float64"), ("exact", "certified")])
def test_hucboosts_engine_is_read_as_its_arithmetic_with_a_deprecation_warning(engine, new):
    """``HUCBoost(engine=...)``, the spelling before ``arithmetic=``, fits for one release as the
    arithmetic the DeprecationWarning names (``"exact"``: certified float64, python-flint being
    installed here), the same rules; the model file records the arithmetic.  ``engine`` with
    ``arithmetic`` is one HUCError, and its remedy (``arithmetic`` alone) fits."""
    t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    us = {"side": Top1AtDepth(t, 1)}
    P = np.tile([[0.5, 0.1, 0.3, 0.1], [0.1, 0.2, 0.3, 0.4], [0.2, 0.25, 0.05, 0.5]], (5, 1))
    y = [0, 3, 3, 2, 0, 1, 2, 3, 3, 0, 1, 1, 2, 3, 3]
    with pytest.warns(DeprecationWarning, match=f"^engine='{engine}' is deprecated; use arithmetic='{new}'$"):
        old = HUCBoost(t, us, epsilon="1/100", engine=engine, select="greedy", max_updates=4,
                       prefix_guard=None).fit(P, y, validation=(P, y))
    model = HUCBoost(t, us, epsilon="1/100", arithmetic=new, select="greedy", max_updates=4,
                     prefix_guard=None).fit(P, y, validation=(P, y))
    assert old.rules_ == model.rules_ and len(model.rules_) == 2  # (then within epsilon)
    assert model.to_json()["options"]["arithmetic"] == new and model.run_.arithmetic == new
    with pytest.raises(HUCError, match=r"^engine: not taken with arithmetic='float64' \(engine= is deprecated\); "
                                       r"give arithmetic alone$"):
        HUCBoost(t, us, engine=engine, arithmetic="float64").fit(P, y)
    assert HUCBoost(t, us, arithmetic="float64", max_updates=2).fit(P, y).arithmetic_ == "float64"
