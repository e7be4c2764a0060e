"""A practitioner's first call (issue "safe by default"): integer labels read among the columns
the call names, the whole population always audited, a first-stage scaling kept only where it
helps on held-out rows, rows that do not sum to 1 refused, a bare array after a DataFrame fit,
and a model file that knows its columns."""

import numpy as np
import pytest

from huc_ref import FiniteDistribution, HUCError, LabelTree, TopK, fast
from huc_ref.calibration import HUCBoost

#: Leaves listed "c", "a", "b" (a hierarchy's order); a classifier's classes_ are sorted: "a", "b", "c".
CAB = LabelTree.from_children("r", {"r": ["c", "g"], "g": ["a", "b"]})
CLASSES = np.array(["a", "b", "c"])


class _Frame:
    """What the library reads of a pandas DataFrame: ``columns`` and ``to_numpy``."""

    def __init__(self, array, columns):
        self.array, self.columns = np.asarray(array), list(columns)

    def to_numpy(self):
        return self.array


def _sample(n=60, seed=0):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet([2, 1, 1], size=n)  # columns in CLASSES' order
    y = np.array([rng.choice(3, p=p) for p in P])  # positions among CLASSES: classes_[y] is the label
    return P, y


def test_integer_labels_are_positions_among_the_declared_columns():
    """With ``labels=classes_`` in another order than the tree's, an integer label ``k`` is the
    label ``classes_[k]`` (scikit-learn's convention), not the tree's label ``k``: the fast audit,
    the exact path's float reader, HUCBoost's fit and score, and a DataFrame's column names give
    the same result for the integers as for the names."""
    P, y = _sample()
    names = CLASSES[y]
    us = {"top1": TopK(CAB, 1)}
    want = fast.audit(names, P, CAB, us, labels=CLASSES)
    assert fast.audit(y, P, CAB, us, labels=CLASSES) == want
    assert fast.audit(y.tolist(), P, CAB, us, labels=list(CLASSES)) == want  # (Python ints: the object path)
    assert fast.audit(y, _Frame(P, CLASSES), CAB, us) == want  # (the frame's names declare the columns)
    assert fast.audit(np.array(CAB.labels)[y], P, CAB, us, labels=CLASSES) != want  # (the tree's positions differ)
    assert FiniteDistribution.from_floats(CAB, y, P, labels=CLASSES).atoms == \
        FiniteDistribution.from_floats(CAB, names.tolist(), P, labels=CLASSES).atoms
    assert FiniteDistribution.from_floats(CAB, y, _Frame(P, CLASSES)).atoms == \
        FiniteDistribution.from_floats(CAB, names.tolist(), P, labels=CLASSES).atoms
    by_ids = HUCBoost(CAB, us, max_passes=2, labels=CLASSES, prefix_guard=None).fit(P, y)
    by_names = HUCBoost(CAB, us, max_passes=2, labels=CLASSES, prefix_guard=None).fit(P, names)
    assert by_ids.rules_ == by_names.rules_ and by_ids.n_updates_run_ > 0
    assert by_ids.score(P, y) == by_names.score(P, names)
    assert by_ids.classes_.tolist() == CLASSES.tolist()


def test_digit_named_columns_out_of_position_still_make_integers_ambiguous():
    """Columns named "1", "0", "2" (in that order): an integer 0 could be column 0 (the label "1")
    or the label named "0"; one HUCError names the label, in the columns' order, and the
    remedy (names as strings) works."""
    t = LabelTree.from_children("r", {"r": ["2", "g"], "g": ["0", "1"]})
    P, y = _sample(30)
    columns = ["1", "0", "2"]
    us = {"top1": TopK(t, 1)}
    message = (r"^y_true: integer labels are ambiguous for this tree: they are read as label ids \(positions in the "
               r"columns' order\), but the label named '1' is at position 0; give the labels as their names")
    for call in (lambda: fast.audit(y, P, t, us, labels=columns),
                 lambda: FiniteDistribution.from_floats(t, y.tolist(), P, labels=columns),
                 lambda: HUCBoost(t, us, max_passes=1, labels=columns).fit(P, y)):
        with pytest.raises(HUCError, match=message):
            call()
    named = np.array(columns)[y]  # the remedy: the names
    assert fast.audit(named, P, t, us, labels=columns).n == len(y)
    sorted_columns = ["0", "1", "2"]  # classes_' order: integers and names agree, no ambiguity
    assert fast.audit(y, P, t, us, labels=sorted_columns) == \
        fast.audit(np.array(sorted_columns)[y], P, t, us, labels=sorted_columns)


def test_subgroups_without_all_are_audited_with_the_whole_population():
    """``subgroups={"dark": mask}`` audited the mask alone (K.3: "The whole-population indicator is
    always included", and the README promised it): here the whole population's UC is the larger,
    so the audit without it understated UC.  ``fast.audit`` and the exact path
    (``FiniteDistribution.from_floats`` / ``from_sample``) add ``"all"`` first, agree row for row,
    and equal the audit given ``"all"`` explicitly."""
    from fractions import Fraction

    from huc_ref import Table, audit
    t = LabelTree.from_children("r", {"r": ["a", "b"]})
    P = np.array([[0.5, 0.5]] * 8)
    y = np.array(["b"] * 6 + ["a"] * 2)  # the score 1/2 everywhere: UC of everyone is |6/8 - 1/2| = 1/4
    dark = np.array([1, 1, 0, 0, 0, 0, 1, 1])  # two "b", two "a": calibrated, UC 0
    us = {"u": Table(t, [0, 1])}
    fast_result = fast.audit(y, P, t, us, subgroups={"dark": dark})
    assert list(dict.fromkeys(r.subgroup for r in fast_result.candidates)) == ["all", "dark"]
    assert fast_result.uc.sup == 0.25 and fast_result.uc.subgroup == "all"
    assert fast_result == fast.audit(y, P, t, us, subgroups={"all": np.ones(8), "dark": dark})
    exact = audit(FiniteDistribution.from_floats(t, y.tolist(), P, subgroups={"dark": dark}), us)
    assert exact.uc.sup == Fraction(1, 4) and exact.uc.subgroup == "all"
    assert [(r.subgroup, r.utility, r.node) for r in exact.candidates] == \
        [(r.subgroup, r.utility, r.node) for r in fast_result.candidates]
    assert all(float(e.sup) == f.sup for e, f in zip(exact.candidates, fast_result.candidates))
    sample = FiniteDistribution.from_sample(t, y.tolist(), [["1/2", "1/2"]] * 8, subgroups={"dark": dark.tolist()})
    assert sample.subgroups == ("all", "dark")
    weighted = fast.audit(y, P, t, us, subgroups={"dark": dark}, sample_weight=np.arange(1, 9))  # (weights kept)
    assert weighted == fast.audit(y, P, t, us, subgroups={"all": np.ones(8), "dark": dark},
                                  sample_weight=np.arange(1, 9))


SIX = LabelTree.from_children("r", {"r": ["g1", "g2"], "g1": ["a", "b", "c"], "g2": ["d", "e", "f"]})


def _softmax_sample(n, rng, sharpness=1.0):
    """``n`` rows of a softmax over SIX's labels with labels drawn from the softmax at sharpness 1:
    calibrated predictions at ``sharpness=1``, overconfident above it."""
    logits = rng.normal(size=(n, SIX.K))
    truth = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = (truth.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    P = np.exp(sharpness * logits) / np.exp(sharpness * logits).sum(axis=1, keepdims=True)
    return P, y


def test_a_first_stage_scaling_that_worsens_the_held_out_log_loss_is_not_used():
    """35 calibration rows of calibrated 6-class predictions: Dirichlet scaling's 42 parameters fit
    the noise (test log loss far above the raw predictions'), and HUCBoost(initial=Dirichlet...)
    used it whatever it did on the held-out rows.  The held-out log-loss guard that chooses the
    prefix (prefix_guard) now decides the first stage too, at no loss (0 standard errors): not
    used, a ScalingNotKeptWarning
    saying so and naming the remedy, the fit equal to the one without ``initial``, the test log
    loss no worse than the raw predictions'.  The remedy (prefix_guard=None) keeps the scaling;
    a temperature that mends overconfident predictions is kept, on 300 rows and on 120."""
    from huc_ref import Top1AtDepth
    from huc_ref.calibration import DirichletScaling, ScalingNotKeptWarning, TemperatureScaling
    rng = np.random.default_rng(0)
    P, y = _softmax_sample(35, rng)
    P_test, y_test = _softmax_sample(20000, rng)

    def log_loss(Q):
        return float(-np.mean(np.log(Q[np.arange(len(y_test)), y_test])))
    us = {"top1": TopK(SIX, 1), "side": Top1AtDepth(SIX, 1)}
    assert log_loss(DirichletScaling().fit(P, y).predict_proba(P_test)) > log_loss(P_test) + 0.5  # (overfits)
    message = (r"^HUCBoost\.fit: the initial DirichletScaling raises the validation log loss by 0\.\d+ per row "
               r"\(standard error 0\.\d+, 10 rows\), so it is not used \(initial_kept_ = False\) and the rules "
               r"are fitted on the predictions as given; pass prefix_guard=None to keep it, or give more "
               r"calibration rows$")
    with pytest.warns(ScalingNotKeptWarning, match=message):
        model = HUCBoost(SIX, us, initial=DirichletScaling(), max_passes=2).fit(P, y)
    assert model.initial_kept_ is False and model.initial_ is None and model.to_json()["initial"] is None
    plain = HUCBoost(SIX, us, max_passes=2).fit(P, y)
    assert model.rules_ == plain.rules_
    assert np.array_equal(model.predict_proba(P_test), plain.predict_proba(P_test))
    assert log_loss(model.predict_proba(P_test)) <= log_loss(P_test) + 1e-3
    kept = HUCBoost(SIX, us, initial=DirichletScaling(), max_passes=2, prefix_guard=None).fit(P, y)  # the remedy
    assert kept.initial_kept_ is True and kept.initial_ is not None
    assert log_loss(kept.predict_proba(P_test)) > log_loss(P_test) + 0.2  # (what the guard prevents)
    P_sharp, y_sharp = _softmax_sample(300, np.random.default_rng(1), sharpness=3.0)
    sharp = HUCBoost(SIX, us, initial=TemperatureScaling(), max_passes=1).fit(P_sharp, y_sharp)
    assert sharp.initial_kept_ is True and sharp.initial_.temperature_ > 2
    fewer = HUCBoost(SIX, us, initial=TemperatureScaling(), max_passes=1).fit(P_sharp[:120], y_sharp[:120])
    assert fewer.initial_kept_ is True and fewer.initial_.temperature_ > 1.5


def test_rows_that_do_not_sum_to_one_are_refused_by_the_estimators():
    """HUCBoost and the scaling estimators divided a row summing to 1.1 by its sum, silently (scores,
    or columns cut, taken for probabilities).  A row whose sum is further than ROW_SUM_TOLERANCE
    from 1 is one HUCError naming the row and the remedy, at fit and at predict_proba; the
    remedy (P / P.sum(axis=1, keepdims=True)) fits; a float32 softmax's rounding passes."""
    from huc_ref.calibration import DirichletScaling, TemperatureScaling, VectorScaling
    from huc_ref.fast import ROW_SUM_TOLERANCE
    rng = np.random.default_rng(3)
    P, y = _softmax_sample(60, rng)
    bad = P.copy()
    bad[7] *= 1.1
    message = (r"^y_prob\[7\]: sums to 1\.1\d*, not 1 \(within 1e-05\); expected rows of probabilities \(a "
               r"classifier's predict_proba\): check that these are probabilities, and normalise the rows first, "
               r"e.g\. P / P\.sum\(axis=1, keepdims=True\)$")
    us = {"top1": TopK(SIX, 1)}
    for make in (lambda: HUCBoost(SIX, us, max_passes=1), TemperatureScaling, VectorScaling, DirichletScaling):
        with pytest.raises(HUCError, match=message):
            make().fit(bad, y)
        model = make().fit(bad / bad.sum(axis=1, keepdims=True), y)  # the remedy
        with pytest.raises(HUCError, match=message):
            model.predict_proba(bad)
        assert np.allclose(model.predict_proba(bad / bad.sum(axis=1, keepdims=True))[7].sum(), 1)
        assert model.predict_proba(P.astype(np.float32)).shape == P.shape  # (float32 rounding: within tolerance)
    assert abs(float(P.astype(np.float32).sum(axis=1, dtype=np.float64).max()) - 1) <= ROW_SUM_TOLERANCE
    with pytest.raises(HUCError, match=r"^validation\[0\]\[7\]: sums to 1\.1"):
        HUCBoost(SIX, us, max_passes=1).fit(P, y, validation=(bad, y))


def test_after_a_dataframe_fit_a_bare_array_is_read_in_the_learned_classes_order():
    """A fit on a DataFrame (columns named by classes_, another order than the tree's) declares
    the columns' order, learned as ``classes_``; ``predict_proba(ndarray)`` was then refused
    (the tree's order was never declared).  A bare array is now read in the order of
    ``classes_``, and the output is always in that order: a DataFrame at predict time in another
    column order gives the same rows (so ``predict``, ``classes_[argmax]``, stays right)."""
    P, y = _sample(80, seed=2)
    us = {"top1": TopK(CAB, 1)}
    model = HUCBoost(CAB, us, max_passes=2, prefix_guard=None).fit(_Frame(P, CLASSES), CLASSES[y])
    assert model.classes_.tolist() == ["a", "b", "c"]
    out = model.predict_proba(P)
    assert np.array_equal(out, model.predict_proba(_Frame(P, CLASSES)))
    perm = [2, 0, 1]
    assert np.allclose(model.predict_proba(_Frame(P[:, perm], CLASSES[perm])), out, rtol=1e-12, atol=0)  # (classes_')
    assert np.array_equal(model.predict(_Frame(P[:, perm], CLASSES[perm])), model.predict(P))
    assert model.predict(P).tolist() == CLASSES[np.argmax(out, axis=1)].tolist()
    by_labels = HUCBoost(CAB, us, max_passes=2, prefix_guard=None, labels=CLASSES).fit(P, CLASSES[y])
    assert np.array_equal(by_labels.predict_proba(P), out)  # (the same as declaring labels=classes_)
    assert model.score(P, y) == model.score(P, CLASSES[y]) == by_labels.score(P, y)  # (integers: classes_[y])
    with pytest.raises(HUCError, match=r"^y_prob: its columns carry no names"):  # (fit itself still needs the order)
        HUCBoost(CAB, us, max_passes=1).fit(P, CLASSES[y])


def test_a_saved_model_records_the_columns_order_of_its_fit():
    """``to_json`` wrote the tree's labels only, so a model fitted on columns in classes_' order
    (a DataFrame's names) could not read a bare array once loaded (``huc apply`` needed
    ``--columns``).  The document records ``classes`` (the columns' order at fit); the loaded
    model reads a bare array in it as the fitted one does; a document without it keeps the
    tree's order; a ``classes`` that is not each label once is one HUCError naming the field."""
    from huc_ref.calibration import load_model
    P, y = _sample(60, seed=5)
    us = {"top1": TopK(CAB, 1)}
    model = HUCBoost(CAB, us, max_passes=2, prefix_guard=None).fit(_Frame(P, CLASSES), CLASSES[y])
    doc = model.to_json()
    assert doc["classes"] == ["a", "b", "c"] and doc["labels"] == ["c", "a", "b"]
    again = load_model(doc)
    assert again.classes_.tolist() == ["a", "b", "c"] and again.to_json() == doc
    assert np.array_equal(again.predict_proba(P), model.predict_proba(P))
    assert np.array_equal(again.predict(P), model.predict(P))
    older = load_model({k: v for k, v in doc.items() if k != "classes"})
    assert older.classes_.tolist() == ["c", "a", "b"]
    with pytest.raises(HUCError, match=r"^classes: names the columns of the model's predictions \['a', 'a', 'c'\], "
                                       r"but the tree's labels are \['c', 'a', 'b'\] \('a' is listed twice\)"):
        load_model({**doc, "classes": ["a", "a", "c"]})
    with pytest.raises(HUCError, match=r"^classes: expected a list of the tree's labels \(strings or integers\)"):
        load_model({**doc, "classes": "abc"})
    ints = LabelTree.from_children("r", {"r": ["2", "g"], "g": ["0", "1"]})
    numbered = HUCBoost(ints, {"top1": TopK(ints, 1)}, max_passes=1, labels=np.array([0, 1, 2])).fit(P, y)
    assert numbered.to_json()["classes"] == [0, 1, 2]  # (integer classes_ kept as integers)
    assert load_model(numbered.to_json()).classes_.tolist() == [0, 1, 2]


def _overconfident():
    """600 overconfident rows of a two-level tree of six labels: labels drawn from a flatter law
    than the predictions (the second sample of the seed's draws)."""
    rng = np.random.default_rng(0)
    t = LabelTree.from_children("r", {"r": ["A", "B"], "A": ["a0", "a1", "a2"], "B": ["b0", "b1", "b2"]})
    for n in (300, 600):
        logits = rng.normal(size=(n, 6))
        P = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
        Q = np.exp(0.3 * logits) / np.exp(0.3 * logits).sum(1, keepdims=True)
        y = np.array([rng.choice(6, p=q) for q in Q])
    return t, P, y


def test_a_fit_that_keeps_no_update_says_so_and_the_remedy_keeps_them():
    """No prefix clears the default prefix_guard on the held-out rows, so none of the run's updates
    is kept, though K.1's smallest validation HUC would keep some; the fit says so in one warning
    naming prefix_guard=None, and that remedy keeps K.1's prefix (a silent fit that kept nothing
    looked like a calibrated model)."""
    import warnings

    from huc_ref.calibration import NoUpdateKeptWarning
    t, P, y = _overconfident()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = HUCBoost(t, {"top1": TopK(t, 1)}).fit(P, y)
    kept = [w for w in caught if w.category is NoUpdateKeptWarning]
    assert model.n_updates_ == 0 and len(kept) == 1
    errors = model.validation_errors_
    k1 = min(range(len(errors)), key=errors.__getitem__)
    assert k1 > 0 and f"the smallest validation HUC alone (K.1) keeps {k1} " in str(kept[0].message)
    assert "pass prefix_guard=None for K.1's rule" in str(kept[0].message)
    assert HUCBoost(t, {"top1": TopK(t, 1)}, prefix_guard=None).fit(P, y).n_updates_ == k1


def test_huc_fit_says_it_kept_no_update_and_prefix_guard_none_keeps_them(tmp_path, capsys):
    """The same on the command line: one ``huc fit: warning:`` line naming ``--prefix-guard None``
    (read as none), which then keeps K.1's prefix."""
    import json

    from huc_ref.cli import main
    t, P, y = _overconfident()
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", np.array(t.labels)[y])
    (tmp_path / "spec.json").write_text(json.dumps({"tree": t.to_json(), "labels": list(t.labels),
                                                    "columns": list(t.labels),
                                                    "utilities": {"top1": TopK(t, 1).to_json()}}))
    argv = ["fit", "--tree", str(tmp_path / "spec.json"), "--predictions", str(tmp_path / "p.npy"),
            "--labels", str(tmp_path / "y.npy"), "-o", str(tmp_path / "m.json")]
    assert main(argv) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if line.startswith("huc fit: warning:")]
    assert len(warned) == 1 and "give --prefix-guard None for K.1's rule" in warned[0], warned
    assert main(argv + ["--prefix-guard", "None"]) == 0
    assert json.loads((tmp_path / "m.json").read_text())["rules"], "K.1's prefix is kept"
