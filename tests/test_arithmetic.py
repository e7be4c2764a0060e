"""One choice of numbers for an audit (``arithmetic="exact" | "float64"``) in the library, the
command line and the result document, the spellings before it read for one release with a
deprecation warning; and the command line as a thin layer: it calls the library once and names
the library's places as its options through one table."""

import importlib
import json
import warnings
from fractions import Fraction

import jsonschema
import numpy as np
import pytest

from huc_ref import FiniteDistribution, HUCError, LabelTree, Table
from huc_ref.cli import _OPTIONS, build_parser
from huc_ref.conformance import check_answers
from huc_ref.engines import ACCELERATORS, ARITHMETICS, AUDIT_ARITHMETICS, ENGINES, audit, audit_arrays
from huc_ref.errors import HUCDeprecationWarning
from huc_ref.formats import result_schema
from huc_ref.recalibration import KINDS
from huc_ref.validation import METHODS, SELECTIONS
from tests.test_cli_defaults import D1, SMOOTH, _classifier_files, _run

FOUR = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
D1_DIST = FiniteDistribution(FOUR, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])  # App. D.1
D1_U = {"u": Table(FOUR, [-1, 1, 1, 1])}
FAST_AUDIT = importlib.import_module("huc_ref.fast.audit")  # (the module: huc_ref.fast.audit is also a function's name)


@pytest.mark.parametrize("engine, arithmetic", [("exact", "exact"), ("fast", "float64")])
def test_an_audits_engine_is_read_as_its_arithmetic_with_a_deprecation_warning(engine, arithmetic):
    """``audit(engine=...)``, the spelling before ``arithmetic=``, audits for one release in the
    arithmetic the warning names, the same result (App. D.1: UC = 0, HUC = 1/4); ``engine`` beside
    ``arithmetic`` is one HUCError whose remedy (``arithmetic`` alone) audits."""
    with pytest.warns(HUCDeprecationWarning, match=f"^engine='{engine}' is deprecated; use arithmetic='{arithmetic}'$"):
        old = audit(D1_DIST, D1_U, engine=engine)
    new = audit(D1_DIST, D1_U, arithmetic=arithmetic)
    assert old == new and new.arithmetic == arithmetic and float(new.huc.sup) == 0.25 and new.uc.sup == 0
    with pytest.raises(HUCError, match=r"^engine: not taken with arithmetic='exact' \(engine= is deprecated\); give "
                                       r"arithmetic alone$"):
        audit(D1_DIST, D1_U, engine=engine, arithmetic="exact")


def test_certified_is_a_boosting_runs_arithmetic_not_an_audits():
    """A float64 audit certifies each decision already: ``arithmetic="certified"`` is refused saying
    so, and ``arithmetic="float64"`` (the remedy) audits."""
    with pytest.raises(HUCError, match=r"^arithmetic: an audit's numbers are 'exact' or 'float64', got 'certified' "
                                       r"\(float64 audits certify each decision or take it exactly already; "
                                       r"'certified' is a boosting run's arithmetic\)$"):
        audit(D1_DIST, D1_U, arithmetic="certified")
    assert audit(D1_DIST, D1_U, arithmetic="float64").huc.sup == 0.25


def test_rational_is_read_as_the_exact_accelerator_and_an_accelerator_of_the_other_arithmetic_is_refused():
    """``rational="fraction"`` is ``accelerator="fraction"`` (with a warning); ``accelerator="numba"``
    with exact arithmetic names the arithmetic it computes and the accelerators exact takes."""
    with pytest.warns(HUCDeprecationWarning, match="^rational='fraction' is deprecated; use accelerator='fraction'$"):
        assert audit(D1_DIST, D1_U, rational="fraction") == audit(D1_DIST, D1_U, accelerator="fraction")
    with pytest.raises(HUCError, match=r"^accelerator: 'numba' computes float64 \(arithmetic='float64'\); "
                                       r"arithmetic='exact' takes 'fraction' or 'gmpy2'$"):
        audit(D1_DIST, D1_U, accelerator="numba")
    with pytest.raises(HUCError, match=r"^max_digits: applies to arithmetic='exact'"):
        audit(D1_DIST, D1_U, arithmetic="float64", max_digits=10)


def test_the_result_document_names_its_arithmetic_and_a_document_naming_its_engine_is_still_read(tmp_path):
    """The ``huc-result/1`` document says ``"arithmetic"`` and fits the published schema; a document
    written with the field before it, ``"engine": "fast"``, still fits and passes the vectors'
    checker (with a deprecation warning); naming both is refused by the schema."""
    from huc_ref.vectors import answer_cases, load_vectors
    for arithmetic in AUDIT_ARITHMETICS:
        doc = json.loads(json.dumps(audit(D1_DIST, D1_U, arithmetic=arithmetic).to_json("d1")))
        assert doc["arithmetic"] == arithmetic and "engine" not in doc
        jsonschema.validate(doc, result_schema(arithmetic))
        old = {("engine" if k == "arithmetic" else k): v for k, v in doc.items()}
        old["engine"] = {"exact": "exact", "float64": "fast"}[arithmetic]
        jsonschema.validate(old, result_schema(arithmetic))
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**doc, "engine": old["engine"]}, result_schema(arithmetic))
    answer_cases(tmp_path)
    first = next(v["id"] for v in load_vectors() if "case" in v)
    path = tmp_path / f"{first}.json"
    doc = json.loads(path.read_text())
    doc["engine"] = doc.pop("arithmetic")
    path.write_text(json.dumps(doc))
    with pytest.warns(HUCDeprecationWarning, match="huc-result/1 answer's \"engine\" field is deprecated"):
        report, failures = check_answers(tmp_path)
    assert failures == 0 and dict(report)[first] is None


def test_audit_arrays_gives_each_arithmetic_the_same_audit_and_its_zero_remedy_runs():
    """``audit_arrays`` audits a classifier's arrays in float64 (the default) or exactly on the
    floats' exact values, the same rows; a zero off a row's label is refused in exact arithmetic,
    naming ``smooth=`` and ``arithmetic='float64'``, and each remedy audits."""
    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.ones(4), 30)
    y = rng.integers(0, 4, 30)
    fast, exact = (audit_arrays(y, P, FOUR, D1_U, arithmetic=a) for a in ("float64", "exact"))
    assert fast.arithmetic == "float64" and exact.arithmetic == "exact"
    assert [(r.subgroup, r.node) for r in fast.candidates] == [(r.subgroup, r.node) for r in exact.candidates]
    assert all(abs(f.sup - float(e.sup)) < 1e-12 for f, e in zip(fast.candidates, exact.candidates))
    assert isinstance(exact.huc.sup, Fraction)
    P[3] = [0.5, 0.5, 0.0, 0.0] if y[3] < 2 else [0.0, 0.0, 0.5, 0.5]
    with pytest.raises(HUCError, match=r"^y_prob\[3\]: entry \d is 0, and exact arithmetic takes predictions in the "
                                       r"open simplex \(p_y > 0, A\.2\); pass smooth=kappa .*, or arithmetic='float64' "
                                       r"\(it reads a row's means only on its label's path\)$"):
        audit_arrays(y, P, FOUR, D1_U, arithmetic="exact")
    assert audit_arrays(y, P, FOUR, D1_U, arithmetic="exact", smooth="1/1000").arithmetic == "exact"
    assert audit_arrays(y, P, FOUR, D1_U, arithmetic="float64").arithmetic == "float64"


def test_huc_audit_takes_the_arithmetic_and_reads_engine_with_a_note(capsys):
    """``huc audit --arithmetic float64`` audits in float64; ``--engine fast`` (the option before it)
    gives the same document and says so on stderr in the options' words, once the command ran."""
    code, out, err = _run("audit", D1, "--arithmetic", "float64", "--json")
    assert code == 0 and err == "" and json.loads(out)["arithmetic"] == "float64"
    code, old, err = _run("audit", D1, "--engine", "fast", "--json")
    assert code == 0 and old == out and err == "huc audit: --engine fast is deprecated; use --arithmetic float64\n"
    code, _, err = _run("audit", D1, "--arithmetic", "exact", "--engine", "fast")
    assert code == 2 and err == ("huc: error: --engine: not taken with --arithmetic exact (engine= is deprecated); "
                                 "give arithmetic alone\n")


def test_huc_audit_reads_each_label_once_and_names_the_librarys_places_as_its_options(tmp_path, monkeypatch):
    """``huc audit --predictions`` read the labels' ids three times (twice to name its options in
    messages the library also gives); it now calls the library once, which reads them once, and
    the library's places are named as the options: ``y_true[0]`` is ``--labels[0]``, and a row's
    sum, ``y_prob[i]``, is ``--predictions[i]`` with ``--renormalize`` as its remedy, which runs."""
    _classifier_files(tmp_path)
    calls = []
    real = FAST_AUDIT.label_ids
    monkeypatch.setattr(FAST_AUDIT, "label_ids", lambda *a, **k: calls.append(1) or real(*a, **k))
    classes = ",".join(sorted(f"c{k}" for k in range(12)))
    arrays = ["--tree", tmp_path / "spec.json", "--predictions", tmp_path / "clf.npy", "--labels", tmp_path / "y.npy",
              "--columns", classes]
    code, _, err = _run("audit", *arrays, "--json")
    assert code == 0 and len(calls) == 1, err
    np.save(tmp_path / "bad_y.npy", np.full(60, 99))
    code, _, err = _run("audit", *arrays[:5], tmp_path / "bad_y.npy", *arrays[6:])
    assert code == 2 and err.startswith("huc: error: --labels[0]: 99 is not a label name or id")
    P = np.load(tmp_path / "clf.npy")
    P[7] *= 1.5
    np.save(tmp_path / "far.npy", P)
    code, _, err = _run("audit", *arrays[:3], tmp_path / "far.npy", *arrays[4:])
    assert code == 2 and err.startswith("huc: error: --predictions[7]: sums to 1.5") and "give --renormalize" in err
    assert _run("audit", *arrays[:3], tmp_path / "far.npy", *arrays[4:], "--renormalize")[0] == 0
    code, _, err = _run("audit", *arrays, "--arithmetic", "exact", "--max-null-work", "5")
    assert code == 2 and err == "huc: error: --max-null-work: applies to --null (the budget of its draws)\n"
    P[7] /= 1.5
    P[7, 0] = 0.0
    P[7] /= P[7].sum()
    np.save(tmp_path / "zero.npy", P)
    y = np.load(tmp_path / "y.npy")
    if sorted(f"c{k}" for k in range(12))[0] == f"c{y[7]}":  # (the zero off row 7's label)
        pytest.skip("row 7's label is the first column")
    code, _, err = _run("audit", *arrays[:3], tmp_path / "zero.npy", *arrays[4:], "--arithmetic", "exact")
    assert code == 2 and err.startswith("huc: error: --predictions[7]: entry 0 is 0, and exact arithmetic takes ")
    assert f"{SMOOTH}, or --arithmetic float64 (it reads" in err
    assert _run("audit", *arrays[:3], tmp_path / "zero.npy", *arrays[4:], "--arithmetic", "float64")[0] == 0


def test_the_options_table_names_real_options_and_the_choices_are_the_registries():
    """Every option the translation table names is one of its command's options, and each
    ``choices=`` list is the library's registry (a recalibrator kind or an arithmetic added there
    is offered by ``huc`` with no second list to keep)."""
    commands = build_parser()._subparsers._group_actions[0].choices
    for key, table in _OPTIONS.items():
        parser = commands[key.split()[0]]
        strings = {s for action in parser._actions for s in action.option_strings} | \
                  {action.dest for action in parser._actions}
        assert set(table.values()) <= strings, (key, set(table.values()) - strings)

    def choices(command, option):
        return list(next(a for a in commands[command]._actions if option in a.option_strings).choices)
    assert choices("audit", "--arithmetic") == list(AUDIT_ARITHMETICS)
    assert choices("audit", "--engine") == choices("fit", "--engine") == list(ENGINES)
    assert choices("audit", "--accelerator") == [a for names in ACCELERATORS.values() for a in names]
    assert choices("fit", "--arithmetic") == list(ARITHMETICS)
    assert choices("fit", "--initial") == ["none", *KINDS]
    assert choices("fit", "--method") == choices("boost", "--method") == list(METHODS)
    assert choices("fit", "--select") == choices("boost", "--select") == list(SELECTIONS)


def test_no_deprecation_warning_escapes_a_current_spelling():
    """The current spellings warn of nothing (a warning would be noise in every user's run)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for arithmetic in AUDIT_ARITHMETICS:
            audit(D1_DIST, D1_U, arithmetic=arithmetic).to_json("d1")
