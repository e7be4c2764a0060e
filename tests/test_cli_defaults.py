"""The command line's defaults on array files and case documents: a predictions file's column
order is read from its header or stated, never assumed; the fast engine for float64 inputs and
the exact one for ``huc-case/1`` documents, with decimals in float reports; every refusal names
the option (or, in the library, the argument) that mends it, and each test runs that remedy."""

import json
import re
import tempfile
from fractions import Fraction
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from huc_ref import HUCError, fast, read_case
from huc_ref.calibration import load_model
from huc_ref.cli import main
from huc_ref.formats import read_spec, spec_schema
from tests.strategies import TREE_SHAPES, shape_tree

ROOT = Path(__file__).resolve().parents[1]
D1 = ROOT / "examples" / "cases" / "four_leaf_cancellation.json"
SMOOTH = "give --smooth KAPPA (K.1's kappa_init, each prediction mixed with the uniform law: (1-k) p + k/K)"


def _run(*args):
    """``huc ARGS``: the exit status, standard output and standard error."""
    import contextlib
    import io
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def _doc(*args):
    """The ``huc-result/1`` document of ``huc audit ARGS --json``, less the case's name (a file's name)."""
    code, out, err = _run("audit", *args, "--json")
    assert code == 0, err
    return {k: v for k, v in json.loads(out).items() if k != "case"}


def _classifier_files(d: Path, K: int = 12, n: int = 60, seed: int = 2):
    """A spec of ``K`` labels c0, c1, ... in two groups, listed in the tree's order (not the sorted
    order a classifier's ``classes_`` has: "c10" sorts before "c2"); ``n`` Dirichlet rows ``P`` in the
    tree's order and labels; ``clf.npy``: ``P``'s columns in ``classes_``' order, as
    ``clf.predict_proba`` writes them, without a header."""
    rng = np.random.default_rng(seed)
    labels = [f"c{k}" for k in range(K)]
    spec = {"tree": {"root": "r", "children": {"r": ["lo", "hi"], "lo": labels[:K // 2], "hi": labels[K // 2:]}},
            "labels": labels, "utilities": {"top1": {"kind": "top1_at_depth", "depth": 2},
                                            "top3": {"kind": "top_k", "k": 3}}}
    (d / "spec.json").write_text(json.dumps(spec))
    P = rng.dirichlet(np.ones(K), size=n)
    y = np.array([rng.choice(K, p=row) for row in P])
    classes = sorted(labels)
    np.save(d / "clf.npy", P[:, [labels.index(c) for c in classes]])
    np.save(d / "y.npy", y)
    return spec, labels, classes, P, y


def test_a_headerless_npy_in_another_order_is_refused_then_read_in_the_stated_order(tmp_path):
    """A ``.npy`` of ``predict_proba`` (columns in ``classes_``' sorted order) with a spec listing
    its labels in the hierarchy's order was audited with every column read as another label: a
    silently wrong audit.  Without a stated order it is refused, naming the ways to state it; each
    of them (``--columns``, the spec's ``columns``, a header) gives the audit of the predictions in
    the tree's order, computed by the library on the array put in order by hand, on both engines."""
    spec, labels, classes, P, y = _classifier_files(tmp_path)
    d = tmp_path
    base = ["--tree", d / "spec.json", "--predictions", d / "clf.npy", "--labels", d / "y.npy"]
    code, out, err = _run("audit", *base)
    assert code == 2 and out == ""
    assert err == ("huc: error: --predictions: 'clf.npy' has no header naming its columns, and the labels ['c0', 'c1', "
                   "'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9', 'c10', 'c11'] are not in the sorted order of a "
                   "classifier's classes_; state the file's column order with --columns NAME,NAME,... or \"columns\" "
                   "in the spec (e.g. clf.classes_.tolist()), or give the file a header row naming its columns\n")
    tree, utilities, _ = read_spec(d / "spec.json")
    reference = fast.audit(y, P, tree, utilities).to_json()  # (P in the tree's order: the library reads it as is)
    del reference["case"]
    stated = _doc(*base, "--columns", ",".join(classes))
    assert stated == reference
    (d / "spec_columns.json").write_text(json.dumps({**spec, "columns": classes}))
    assert _doc("--tree", d / "spec_columns.json", *base[2:]) == reference
    np.savetxt(d / "clf.csv", np.load(d / "clf.npy"), delimiter=",", fmt="%.17g", header=",".join(classes),
               comments="")  # (pd.DataFrame(clf.predict_proba(X), columns=clf.classes_).to_csv(index=False))
    assert _doc(*base[:3], d / "clf.csv", *base[4:]) == reference
    assert _doc(*base, "--columns", ",".join(labels)) != reference  # (the misreading the refusal prevents)
    exact = _doc(*base, "--columns", ",".join(classes), "--arithmetic", "exact")
    assert exact["arithmetic"] == "exact"
    from huc_ref import FiniteDistribution, audit
    truth = audit(FiniteDistribution.from_floats(tree, y.tolist(), P), utilities).to_json()
    assert exact["huc"] == truth["huc"] and exact["uc"] == truth["uc"]


def test_fit_and_apply_read_the_stated_order_and_apply_writes_the_inputs_order(tmp_path):
    """``huc fit`` on the headerless file with its order stated fits the model ``huc fit`` fits on the
    file in the tree's order; the model records the columns' order (``classes``), so ``huc apply``
    reads the headerless file in it without ``--columns`` (a model file without ``classes`` is
    refused, naming ``--columns``), reads it with ``--columns``, and writes the recalibrated columns
    in the input's order (a CSV with a header naming them), equal to the library's recalibration of
    the rows in order."""
    spec, labels, classes, P, y = _classifier_files(tmp_path)
    d = tmp_path
    np.savetxt(d / "tree.csv", P, delimiter=",", fmt="%.17g", header=",".join(labels), comments="")
    common = ["--labels", d / "y.npy", "--max-passes", "3", "--no-validation"]  # (every update: rules to compare)
    assert _run("fit", "--tree", d / "spec.json", "--predictions", d / "clf.npy", *common, "-o", d / "m.json")[0] == 2
    assert _run("fit", "--tree", d / "spec.json", "--predictions", d / "clf.npy", "--columns", ",".join(classes),
                *common, "-o", d / "m.json")[0] == 0
    assert _run("fit", "--tree", d / "spec.json", "--predictions", d / "tree.csv", *common, "-o",
                d / "m_tree.json")[0] == 0
    rules = [json.loads((d / name).read_text())["rules"] for name in ("m.json", "m_tree.json")]
    assert rules[0] == rules[1] and rules[0]
    doc = json.loads((d / "m.json").read_text())
    assert doc["classes"] == classes  # (the columns' order at fit, recorded: a headerless file's at apply)
    (d / "m_old.json").write_text(json.dumps({k: v for k, v in doc.items() if k != "classes"}))
    code, _, err = _run("apply", d / "m_old.json", d / "clf.npy", "-o", d / "out.csv")  # (a file without classes)
    assert code == 2 and err.endswith("are not in the sorted order of a classifier's classes_; state the file's "
                                      "column order with --columns NAME,NAME,... (e.g. the classifier's classes_), or "
                                      "give the file a header row naming its columns\n")
    assert _run("apply", d / "m.json", d / "clf.npy", "-o", d / "recorded.npy")[0] == 0
    assert _run("apply", d / "m.json", d / "clf.npy", "--columns", ",".join(classes), "-o", d / "out.csv")[0] == 0
    assert _run("apply", d / "m.json", d / "clf.npy", "--columns", ",".join(classes), "-o", d / "out.npy")[0] == 0
    header, body = (d / "out.csv").read_text().split("\n", 1)
    expected = load_model(d / "m.json").predict_proba(np.load(d / "clf.npy"))  # (bare: the recorded classes' order)
    by_tree = load_model(d / "m_tree.json").predict_proba(P)[:, [labels.index(c) for c in classes]]
    assert np.allclose(expected, by_tree, rtol=1e-12, atol=0)  # (the same rules; sums in another order)
    assert header == ",".join(classes)
    assert np.array_equal(np.loadtxt(d / "out.csv", delimiter=",", skiprows=1), expected)
    assert np.array_equal(np.load(d / "out.npy"), expected)
    assert np.array_equal(np.load(d / "recorded.npy"), expected)  # (no --columns: the recorded classes)


@settings(max_examples=12)
@given(st.sampled_from(TREE_SHAPES), st.integers(2, 30), st.integers(0, 3), st.integers(0, 2**16))
@example("flat", 12, 0, 0)  # y0 .. y11 in order: "y10" sorts before "y2"
@example("wide_last", 0, 1, 1)  # a 30-child node last at its depth, labels shuffled
@example("flat", 9, 0, 5)  # y0 .. y8: the sorted order; a headerless file reads as it is
def test_every_way_of_naming_the_columns_gives_the_audit_of_the_tree_order(shape, size, order_seed, seed):
    """On the shapes users have (flat 10+ classes, a 30-child node last at its depth, shuffled label
    orders): the columns permuted and named by a header, or stated by ``--columns``, audit as the
    tree's order does; a headerless file without a stated order is read exactly where the labels
    are in ``classes_``' sorted order (:attr:`LabelTree.in_classes_order`), and refused otherwise."""
    tree = shape_tree(shape, size, 30 if shape == "wide_last" else 3, order_seed)
    rng = np.random.default_rng(seed)
    n, K = 25, tree.K
    P = rng.dirichlet(np.ones(K), size=n)
    y = rng.integers(0, K, size=n)
    perm = rng.permutation(K)
    names = [tree.labels[k] for k in perm]
    with tempfile.TemporaryDirectory() as folder:
        d = Path(folder)
        (d / "spec.json").write_text(json.dumps({"tree": tree.to_json(), "labels": list(tree.labels),
                                                 "utilities": {"top1": {"kind": "top_k", "k": 1}}}))
        np.save(d / "y.npy", y)
        np.savetxt(d / "named.csv", P[:, perm], delimiter=",", fmt="%.17g", header=",".join(names), comments="")
        np.save(d / "bare.npy", P[:, perm])
        np.save(d / "tree.npy", P)
        base = ["--tree", d / "spec.json", "--labels", d / "y.npy", "--predictions"]
        reference = _doc(*base, d / "tree.npy", "--columns", ",".join(tree.labels))
        assert _doc(*base, d / "named.csv") == reference
        assert _doc(*base, d / "bare.npy", "--columns", ",".join(names)) == reference
        code, _, err = _run("audit", *base, d / "tree.npy")
        assert (code == 0) == tree.in_classes_order, err


def test_the_fast_engine_audits_array_files_and_the_exact_engine_case_documents(tmp_path):
    """``huc audit`` on array files ran the exact engine by default (tens of times slower, reporting
    the floats' exact values as long fractions); it now runs the fast one there, and the exact one on
    a ``huc-case/1`` document; ``--arithmetic`` chooses either for both (the result's ``arithmetic``),
    and ``--engine``, its spelling before, still does."""
    _classifier_files(tmp_path)
    arrays = ["--tree", tmp_path / "spec.json", "--predictions", tmp_path / "clf.npy", "--labels", tmp_path / "y.npy",
              "--columns", ",".join(sorted(f"c{k}" for k in range(12)))]
    assert _doc(*arrays)["arithmetic"] == "float64"
    assert _doc(*arrays, "--arithmetic", "exact")["arithmetic"] == "exact"
    assert _doc(*arrays, "--engine", "exact")["arithmetic"] == "exact"
    assert _doc(D1)["arithmetic"] == "exact" and _doc(D1)["huc"]["value"] == "1/4"  # App. D.1: HUC = 1/4
    assert _doc(D1, "--arithmetic", "float64")["arithmetic"] == "float64"
    assert _doc(D1, "--engine", "fast")["arithmetic"] == "float64"
    small = ["--tree", tmp_path / "spec.json", "--predictions", tmp_path / "few.npy", "--labels",
             tmp_path / "few_y.npy"]
    np.save(tmp_path / "few.npy", np.load(tmp_path / "clf.npy")[:2])
    np.save(tmp_path / "few_y.npy", np.load(tmp_path / "y.npy")[:2])
    columns = arrays[-2:]
    for arithmetic in ("float64", "exact"):  # --null exact enumerates labels on the exact predictions, either auditing
        doc = _doc(*small, *columns, "--null", "exact", *(["--arithmetic", "exact"] if arithmetic == "exact" else []))
        assert doc["arithmetic"] == arithmetic and doc["significance"]["method"] == "exact"


def test_a_float_report_prints_decimals_and_an_exact_one_fractions(tmp_path):
    """The report of the fast engine's audit prints six significant digits (the array default printed
    the floats' exact values, 18-digit fractions and ``~`` decimals); the exact engine's report of a
    case keeps its exact fractions (App. D.1: HUC = 1/4 on [1/2, 1/2])."""
    _, _, classes, _, _ = _classifier_files(tmp_path)
    code, report, _ = _run("audit", "--tree", tmp_path / "spec.json", "--predictions", tmp_path / "clf.npy",
                           "--labels", tmp_path / "y.npy", "--columns", ",".join(classes))
    assert code == 0
    numbers = re.findall(r"-?\d[\d./e+-]*", report.split("\n", 3)[3])  # (after the case's name and size)
    assert numbers and not [x for x in numbers if "/" in x or len(x.strip(".-")) > 12], numbers
    assert re.search(r"^UC  = 0\.\d{1,6}  at subgroup=all", report, re.M) and "~" not in report
    code, exact, _ = _run("audit", D1)
    assert code == 0 and "HUC = 1/4" in exact and "[1/2, 1/2]" in exact


def _case(tmp_path, p0, p1) -> Path:
    doc = {"format": "huc-case/1", "tree": {"root": "r", "children": {"r": ["a", "b", "c"]}}, "labels": ["a", "b", "c"],
           "utilities": {"u": {"kind": "top_k", "k": 1}},
           "atoms": [{"p": p0, "label": "a"}, {"p": p1, "label": "b"}]}
    path = tmp_path / "case.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_case_whose_prediction_sums_to_1_plus_4e_17_names_renormalize(tmp_path):
    """A case's prediction written from float64 (0.1, 0.2, 0.7000000000000001) sums to 1 + 1e-16
    exactly: the message names ``--renormalize`` on the command line and ``renormalize=True`` in
    the library (it named neither), and each runs."""
    path = _case(tmp_path, ["0.1", "0.2", "0.7000000000000001"], ["1/4", "1/2", "1/4"])
    code, out, err = _run("audit", path)
    assert code == 2 and err == ("huc: error: atoms[0].p: sums to 10000000000000001/10000000000000000, not 1; give "
                                 "--renormalize to divide it by its sum\n")
    with pytest.raises(HUCError, match=r"not 1; pass renormalize=True to divide it by its sum$"):
        read_case(path)
    doc = _doc(path, "--renormalize")
    assert doc["uc"]["value"] == read_case(path, renormalize=True).result_json()["uc"]["value"]
    assert _run("boost", path)[2] == err and _run("boost", path, "--renormalize")[0] == 0


def test_a_zero_in_a_case_names_smooth(tmp_path):
    """A zero entry in a case named ``kappa_init`` ("smooth it explicitly (kappa_init, K.1)"): the
    command line names ``--smooth``, the library ``smooth=kappa``, and each runs."""
    path = _case(tmp_path, ["1/2", "1/2", "0"], ["1/4", "1/2", "1/4"])
    code, _, err = _run("audit", path)
    assert code == 2 and err == f"huc: error: atoms[0].p[2]: is 0; the paper assumes p_y > 0 (A.2): {SMOOTH}\n"
    with pytest.raises(HUCError, match=r"^atoms\[0\]\.p\[2\]: is 0; the paper assumes p_y > 0 \(A\.2\): pass "
                                       r"smooth=kappa to mix it with the uniform law, \(1 - kappa\) p \+ kappa / K "
                                       r"\(K\.1's kappa_init\)$"):
        read_case(path)
    doc = _doc(path, "--smooth", "1/1000")
    assert doc["huc"]["value"] == read_case(path, smooth="1/1000").result_json()["huc"]["value"]
    code, out, err = _run("audit", path, "--json")  # (the huc-error/1 document speaks the command's words too)
    assert json.loads(out)["message"] == err[len("huc: error: "):-1] and json.loads(out)["path"] == "atoms[0].p[2]"


def test_a_label_of_probability_0_names_how_each_caller_smooths(tmp_path):
    """``fast.audit`` suggested smoothing "huc audit --smooth" (an option, in the library; it takes
    no ``smooth``): it names the mixing its caller does, and that mixing audits; on the command line
    the message names ``--smooth``, which audits."""
    from huc_ref import LabelTree, TopK
    t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    P, y = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]), np.array([2, 1])
    with pytest.raises(HUCError) as err:
        fast.audit(y, P, t, {"u": TopK(t, 1)})
    assert str(err.value) == ("y_prob[0]: the label 'c' has probability 0, where the audit's means are 0/0 (the paper "
                              "assumes p_y > 0, A.2); mix each row with the uniform law before the audit, y_prob = "
                              "(1 - kappa) * y_prob + kappa / K (K.1's kappa_init, e.g. kappa = 1e-10)")
    kappa, K = 1e-10, 3
    assert fast.audit(y, (1 - kappa) * P + kappa / K, t, {"u": TopK(t, 1)}).uc.sup >= 0
    (tmp_path / "spec.json").write_text(json.dumps({"tree": t.to_json(), "labels": list(t.labels),
                                                    "utilities": {"u": {"kind": "top_k", "k": 1}}}))
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", y)
    args = ["--tree", tmp_path / "spec.json", "--predictions", tmp_path / "p.npy", "--labels", tmp_path / "y.npy"]
    code, _, err = _run("audit", *args)
    assert code == 2 and err == ("huc: error: --predictions[0]: the label 'c' has probability 0, where the audit's "
                                 f"means are 0/0 (the paper assumes p_y > 0, A.2); {SMOOTH}\n")
    assert _doc(*args, "--smooth", "1e-10")["arithmetic"] == "float64"


@pytest.mark.parametrize("command", ["audit", "boost"])
def test_an_array_file_in_place_of_a_case_names_the_options_that_read_it(tmp_path, command):
    """``huc audit P.csv`` said "not valid JSON: Extra data" (``P.npy``: "UnicodeDecodeError"); the
    message names the options that read array files, and they do."""
    _, _, classes, _, _ = _classifier_files(tmp_path)
    code, _, err = _run(command, tmp_path / "clf.npy")
    fix = ("give it as --predictions, with --labels FILE and --tree SPEC.json (the tree, labels and utilities)"
           if command == "audit" else "huc fit boosts on array files (--tree, --predictions, --labels)")
    assert code == 2 and err == f"huc: error: {command}: 'clf.npy' is an array file, not a huc-case/1 document; {fix}\n"
    arrays = ["--tree", tmp_path / "spec.json", "--predictions", tmp_path / "clf.npy", "--labels", tmp_path / "y.npy",
              "--columns", ",".join(classes)]
    if command == "audit":
        assert _doc(*arrays)["huc"]["value"] > 0
    else:
        assert _run("fit", *arrays, "--max-passes", "1", "-o", tmp_path / "m.json")[0] == 0


@pytest.mark.parametrize("bad, message, mended", [
    (["--null", "0"], "--null: expected a positive integer (at most 1000000) or 'exact', got 0", ["--null", "19"]),
    (["--null", "19", "--seed", "-1"], "--seed: expected a non-negative integer, got -1", ["--null", "19"]),
    (["--arithmetic", "exact", "--max-digits", "0"], "--max-digits: expected a positive integer, got 0",
     ["--arithmetic", "exact", "--max-digits", "100000"]),
    (["{case}"], "audit: give a case file ('{case}') or array files (--predictions), not both", []),
    (["--columns", "c0,c1"], "--columns: names the columns of the predictions files ['c0', 'c1'], but the tree's "
                             "labels are ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9', 'c10', 'c11'] "
                             "(label 'c2' has no column); name each column by its label, once",
     ["--columns", "{sorted}"]),
])
def test_an_audit_option_is_named_as_the_option_and_its_remedy_runs(tmp_path, bad, message, mended):
    """The library's argument names (``null_draws``, ``seed``, ``max_digits``) were the places of
    these messages on the command line; each names the option, and the option mended audits."""
    _, _, classes, _, _ = _classifier_files(tmp_path)
    fill = {"{case}": str(D1), "{sorted}": ",".join(classes)}
    arrays = ["--tree", tmp_path / "spec.json", "--predictions", tmp_path / "clf.npy", "--labels", tmp_path / "y.npy"]
    columns = [] if "--columns" in bad else ["--columns", ",".join(classes)]
    code, _, err = _run("audit", *arrays, *columns, *[fill.get(a, a) for a in bad])
    assert code == 2 and err == f"huc: error: {message.replace('{case}', str(D1))}\n"
    assert Fraction(str(_doc(*arrays, *columns, *[fill.get(a, a) for a in mended])["huc"]["value"])) > 0


def test_fit_names_its_options_and_the_options_mend(tmp_path):
    """``huc fit --epsilon 2`` said "epsilon: must be in (0, 1]" and ``--null 0`` "null_draws: ...":
    the options are named, and mended they fit."""
    _, _, classes, _, _ = _classifier_files(tmp_path)
    fit = ["fit", "--tree", tmp_path / "spec.json", "--predictions", tmp_path / "clf.npy", "--labels",
           tmp_path / "y.npy", "--columns", ",".join(classes), "--max-passes", "1", "-o", tmp_path / "m.json"]
    for bad, message, mended in ((["--epsilon", "2"], "--epsilon: must be in (0, 1], got 2", ["--epsilon", "0.01"]),
                                 (["--null", "0"], "--null: expected a positive integer (at most 1000000) or 'exact', "
                                                   "got 0", ["--null", "9"])):
        code, _, err = _run(*fit, *bad)
        assert code == 2 and err.endswith(f"huc: error: {message}\n"), err
        assert _run(*fit, *mended)[0] == 0


def test_columns_apply_to_array_files_and_a_misspelt_spec_field_is_refused(tmp_path):
    """``--columns`` with a case document, and a spec field the spec does not define (``colums``,
    which was ignored: the file then read in the labels' order), are refused naming the fix."""
    spec, _, classes, _, _ = _classifier_files(tmp_path)
    code, _, err = _run("audit", D1, "--columns", "a,b")
    assert code == 2 and err == ("huc: error: --columns: applies to array files (--predictions); a huc-case/1 "
                                 "document names its labels\n")
    assert _doc(D1)["huc"]["value"] == "1/4"
    arrays = ["--predictions", tmp_path / "clf.npy", "--labels", tmp_path / "y.npy"]
    (tmp_path / "typo.json").write_text(json.dumps({**spec, "colums": classes}))
    code, _, err = _run("audit", "--tree", tmp_path / "typo.json", *arrays)
    assert code == 2 and err == ("huc: error: colums: unknown field of a spec (it has tree, labels, utilities and "
                                 "columns)\n")
    (tmp_path / "fixed.json").write_text(json.dumps({**spec, "columns": classes}))
    assert _doc("--tree", tmp_path / "fixed.json", *arrays)["arithmetic"] == "float64"


def test_the_demo_names_no_option_it_lacks(capsys):
    """``huc demo`` takes exact entries as given (no ``--renormalize`` or ``--smooth``): its
    messages state the rule without naming the library's ``renormalize=True`` or ``smooth=``."""
    for p, message in (("1/2,1/2,1/2,0", "--p: sums to 3/2, not 1"),
                       ("1/2,1/2,0,0", "--p[2]: is 0; the paper assumes p_y > 0 (A.2)")):
        assert main(["demo", "--p", p]) == 2
        assert capsys.readouterr().err == f"huc: error: {message}\n"
    assert main(["demo", "--p", "1/2,1/4,1/8,1/8"]) == 0


def test_the_spec_schema_states_what_read_spec_reads():
    """The published spec schema accepts the specs :func:`read_spec` reads (with ``columns``, and a
    case document serving as a spec) and rejects the misspelt field and a columns list of objects the
    reader refuses."""
    schema = jsonschema.Draft202012Validator(spec_schema())
    case = json.loads(D1.read_text())
    spec = {k: case[k] for k in ("tree", "labels", "utilities")}
    for good in (spec, {**spec, "columns": list(reversed(spec["labels"]))}, case):
        read_spec(good)
        assert not list(schema.iter_errors(good))
    for bad in ({**spec, "colums": spec["labels"]}, {**spec, "columns": [{"name": "y1"}]}):
        with pytest.raises(HUCError):
            read_spec(bad)
        assert list(schema.iter_errors(bad))
    with pytest.raises(HUCError, match=r"^columns: names the columns of a predictions file \['y1'\], but"):
        read_spec({**spec, "columns": ["y1"]})
