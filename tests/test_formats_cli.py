"""Case and result files (docs/specification.md §6) and the ``huc`` command: values, errors, exit codes."""

import copy
import json
import subprocess
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from huc_ref import formats
from huc_ref.cli import main
from huc_ref.errors import HUCError
from huc_ref.formats import dumps, load_json, read_case
from huc_ref.vectors import DELETE, mutate

ROOT = Path(__file__).resolve().parents[1]
D1 = ROOT / "examples" / "cases" / "four_leaf_cancellation.json"
BASE = json.loads(D1.read_text())


def test_d1_result_matches_spec_example():
    """docs/specification.md §6's example result, which restates App. D.1."""
    doc = read_case(D1).result_json()
    assert doc["uc"] == {"value": "0", "subgroup": "all", "utility": "u", "interval": None, "moment": "0"}
    assert doc["huc"] == {"value": "1/4", "subgroup": "all", "utility": "u", "node": "v0",
                          "interval": ["1/2", "1/2"], "moment": "1/4"}
    assert doc["relevant_nodes"] == {"u": ["v0", "vL"]}
    assert [(r["node"], r["sup"], r["moment"]) for r in doc["candidates"]] == [
        (None, "0", "0"), ("v0", "1/4", "1/4"), ("vL", "1/4", "-1/4")]


def test_json_numbers_are_read_as_exact_decimals():
    doc = copy.deepcopy(BASE)
    text = json.dumps(doc).replace('"1/4", "1/4", "1/4", "1/4"', "0.25, 0.25, 0.25, 0.25")
    assert "0.25, 0.25" in text
    assert read_case(text).result_json() == read_case(D1).result_json()
    assert load_json("[0.1]") == ["0.1"]  # the text, not the binary float


def test_case_round_trip_and_determinism():
    case = read_case(D1)
    again = read_case(case.to_json())
    assert dumps(again.result_json()) == dumps(case.result_json())
    assert dumps(case.result_json()) == dumps(read_case(D1).result_json())


def test_a_case_too_long_to_read_back_is_not_written():
    """``Case.to_json`` refuses a number ``read_case`` would refuse (more than 4,000 digits), naming
    it, where it used to write a document that could not be read back: renormalising two 2,400-digit
    reciprocals gives 4,795-digit predictions; 2,000- and 1,909-digit ones (3,998 digits after) write and read back."""
    from huc_ref.rational import MAX_DIGITS
    doc = {"format": "huc-case/1", "tree": {"root": "r", "children": {"r": ["a", "b"]}}, "labels": ["a", "b"],
           "utilities": {"u": {"kind": "table", "values": [0, 1]}},
           "atoms": [{"p": ["1/2", "1/2"], "label": "a"}, {"p": [f"1/{2**8000}", f"1/{3**5000}"], "label": "b"}]}
    case = read_case(doc, renormalize=True)
    with pytest.raises(HUCError) as err:
        case.to_json()
    assert str(err.value) == (f"atoms[1].p[0]: 4795 digits; a huc-case/1 number has at most {MAX_DIGITS} "
                              "(docs/specification.md §6), so read_case could not read this document back")
    assert err.value.kind == "too_large"
    with pytest.raises(HUCError, match=r"^atoms\[1\]\.p\[0\]: .* has more than 4000 digits$"):
        read_case(dumps(case._document()))  # the document written whole
    doc["atoms"][1]["p"] = [f"1/{2**6640}", f"1/{3**4000}"]  # 1,999 and 1,909 digits
    case = read_case(doc, renormalize=True)
    assert max(len(x.replace("/", "")) for x in case.to_json()["atoms"][1]["p"]) <= MAX_DIGITS
    assert dumps(read_case(dumps(case.to_json())).result_json()) == dumps(case.result_json())


def mutated(path, value):
    return mutate(BASE, path, value)


@pytest.mark.parametrize("path, value, message", [
    (["atoms", 0, "p"], ["0.25", "0.25", "0.25", "0.249"], "atoms[0].p: sums to 999/1000, not 1"),
    (["atoms", 0, "p"], ["1/2", "1/2", 0, 0], "atoms[0].p[2]: is 0; the paper assumes p_y > 0 (A.2)"),
    (["atoms", 0, "p"], ["1/2", "1/2", "1/2", "-1/2"], "atoms[0].p[3]: is negative (-1/2)"),
    (["atoms", 0, "p"], ["1/4", "1/4", "1/2"], "atoms[0].p: has 3 entries, expected 4"),
    (["atoms", 0, "eta"], ["1/2", "1/2", "1/2", 0], "atoms[0].eta: sums to 3/2, not 1"),
    (["atoms", 0, "weight"], "1/2", "atoms: weights sum to 1/2, not 1"),
    (["atoms", 0, "weight"], 0, "atoms[0].weight: must be positive, got 0"),
    (["atoms", 0, "c"], [2], "atoms[0].c[0]: subgroup value 2 is outside [-1, 1]"),
    (["atoms", 0, "c"], [1, 1], "atoms[0].c: has 2 entries, expected 1"),
    (["atoms", 0, "label"], "y1", "atoms[0]: give exactly one of eta (a label law) or label"),
    (["atoms", 0, "p"], DELETE, "atoms[0].p: missing"),
    (["atoms", 0, "pp"], 1, "atoms[0]: unknown field 'pp'"),
    (["atoms"], [], "atoms: expected a non-empty list of atoms"),
    (["labels"], ["y1", "y2", "y3", "y5"], "labels[3]: 'y5' is not a node of the tree"),
    (["labels"], ["y1", "y2", "y3"], "labels: leaf 'y4' of the tree is missing"),
    (["tree", "children", "vR"], ["y3", "y1"], "tree.children['vR']: node 'y1' has two parents ('vL' and 'vR')"),
    (["tree", "children", "vR"], ["y3", "y4", "v0"], "tree.children['vR']: lists the root 'v0' as a child"),
    (["tree", "root"], DELETE, "tree.root: missing"),
    (["utilities", "u", "kind"], "tabel", "utilities.u.kind: unknown utility kind 'tabel'"),
    (["utilities", "u", "values"], [-1, 1, 1, 2], "utilities.u.values[3]: utility value 2 is outside [-1, 1]"),
    (["utilities", "u", "valuez"], [0], "utilities.u: unknown field 'valuez' for kind 'table'"),
    (["utilities", "u"], {"kind": "per_atom", "values": [[0, 0, 0, 0], [0, 0, 0, 0]]},
     "utilities.u.values: has 2 rows, but there are 1 atoms"),
    (["utilities", "u"], {"kind": "subtree", "node": "zz"}, "utilities.u.node: 'zz' is not a node of the tree"),
    (["utilities"], {}, "utilities: expected at least one utility"),
    (["format"], "huc-case/2", "format: expected 'huc-case/1', got 'huc-case/2'"),
    (["subgroups"], ["all", "all"], "subgroups[1]: 'all' is listed twice"),
    (["extra"], 1, "extra: unknown field of a huc-case/1 document"),
])
def test_bad_case_documents_get_one_clear_error(path, value, message):
    with pytest.raises(HUCError) as err:
        read_case(mutated(path, value))
    assert str(err.value).startswith(message)


@pytest.mark.parametrize("text, message", [
    ('{"format": "huc-case/1",', "not valid JSON: Expecting property name"),
    ('[1, 2]', "case: expected a JSON object"),
    ('{"a": 1, "a": 2}', "the key 'a' appears twice in one JSON object"),
])
def test_bad_json_text(text, message):
    with pytest.raises(HUCError) as err:
        read_case(text)
    assert str(err.value).startswith(message)


def test_nan_and_huge_numbers_in_json_name_their_path():
    text = json.dumps(BASE).replace('"3/8", "3/8"]', '"3/8", NaN]')
    with pytest.raises(HUCError, match=r"^atoms\[0\]\.eta\[3\]: NaN is not a finite number"):
        read_case(text)
    text = json.dumps(BASE).replace('"weight": 1', '"weight": ' + "1" * 5000)
    with pytest.raises(HUCError, match=r"^atoms\[0\]\.weight: '11111111111111111111'\.\.\. has more than"):
        read_case(text)


def test_renormalize_and_smooth_are_explicit():
    doc = mutated(["atoms", 0, "p"], [1, 1, 1, 1])
    with pytest.raises(HUCError, match="sums to 4, not 1"):
        read_case(doc)
    assert read_case(doc, renormalize=True).distribution.atoms[0].p == read_case(D1).distribution.atoms[0].p
    doc = mutated(["atoms", 0, "p"], ["1/2", "1/2", 0, 0])
    p = read_case(doc, smooth="1/10").distribution.atoms[0].p
    assert [str(x) for x in p] == ["19/40", "19/40", "1/40", "1/40"]  # (9/10)(1/2) + 1/40
    for kappa in (0, 1, "-1/10"):  # K.1: "for a predetermined kappa_0 in (0, 1)"
        with pytest.raises(HUCError, match=rf"^smooth: kappa must be in \(0, 1\) \(K\.1's kappa_0\), got {kappa}$"):
            read_case(doc, smooth=kappa)


def test_cli_audit_json_and_report(capsys):
    assert main(["audit", str(D1), "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == read_case(D1).result_json()
    assert main(["audit", str(D1)]) == 0
    report = capsys.readouterr().out
    assert "HUC = 1/4" in report and "UC  = 0" in report and "Prop. 3.3 for u" in report


@pytest.mark.parametrize("command", ["audit", "boost"])
def test_top_takes_a_number_of_rows(command, capsys):
    """``--top -1`` listed all rows but the last (a slice), saying "top 1"; now refused, as text is.
    ``--top 0`` lists none."""
    for bad in ("-1", "x"):
        assert main([command, str(D1), "--top", bad]) == 2
        assert capsys.readouterr().err.endswith(f"error: argument --top: expected a number of rows, 0 or more, got "
                                                f"{bad!r}\n")
    assert main([command, str(D1), "--top", "0"]) == 0
    assert ("largest violations" if command == "audit" else "  all  ") not in capsys.readouterr().out


def test_cli_bad_input_exits_2_with_one_line_and_no_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(mutated(["atoms", 0, "p"], ["0.25", "0.25", "0.25", "0.249"])))
    proc = subprocess.run([sys.executable, "-m", "huc_ref", "audit", str(bad), "--json"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and json.loads(proc.stdout) == {
        "format": "huc-error/1", "kind": "probability_sum", "path": "atoms[0].p",
        "message": "atoms[0].p: sums to 999/1000, not 1; give --renormalize to divide it by its sum"}
    assert proc.stderr == ("huc: error: atoms[0].p: sums to 999/1000, not 1; give --renormalize to divide it by its "
                           "sum\n")
    for args in (["audit", str(tmp_path / "missing.json")], ["bogus"], ["audit"]):
        proc = subprocess.run([sys.executable, "-m", "huc_ref", *args], capture_output=True, text=True, cwd=ROOT)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_exact_results_of_any_size_are_written(tmp_path, capsys):
    """2,500 sample atoms with 6-decimal predictions and --renormalize: the exact HUC has over
    10,000 digits (past Python's 4,300-digit str guard); --json writes it whole, and the report
    shows decimals instead of the digits."""
    import json
    import random

    from huc_ref import read_case
    rng = random.Random(1)
    atoms = [{"p": [f"{rng.randint(1, 10**6) / 10**6:.6f}" for _ in range(3)], "label": f"y{rng.randrange(3)}"}
             for _ in range(2500)]
    doc = {"format": "huc-case/1", "id": "big", "labels": ["y0", "y1", "y2"],
           "tree": {"root": "r", "children": {"r": ["a", "y2"], "a": ["y0", "y1"]}},
           "utilities": {"u": {"kind": "table", "values": [1, "1/3", -1]}}, "atoms": atoms}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc))
    assert main(["audit", str(path), "--renormalize", "--json"]) == 0
    written = json.loads(capsys.readouterr().out)["huc"]["value"]
    assert len(written) > 10_000
    num, den = written.split("/")
    exact = read_case(path, renormalize=True).audit().huc.sup
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # read back by int(), not by the writer (gmpy2 or str, whichever is installed)
    try:
        assert (int(num), int(den)) == (exact.numerator, exact.denominator)
    finally:
        sys.set_int_max_str_digits(limit)
    assert main(["audit", str(path), "--renormalize"]) == 0
    report = capsys.readouterr().out
    assert max(len(line) for line in report.splitlines()) < 200
    assert f"HUC = ~{float(exact):.6g}" in report


def test_names_from_the_input_cannot_forge_report_lines_or_reach_the_terminal_raw(tmp_path, capsys):
    """Names with newlines or escape sequences (a case id, a utility, subgroup or node name) are
    refused with one escaped line; a description, which may be any text, is printed escaped."""
    import json
    evil = "x\nUC  = 0\x1b[2J"
    path = tmp_path / "evil.json"

    def audit_with(**changes):
        doc = json.loads(D1.read_text())
        doc.update(changes)
        path.write_text(json.dumps(doc))
        return main(["audit", str(path)])
    assert audit_with(description=evil) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and sum(line.startswith("UC ") for line in out.splitlines()) == 1
    assert "x\\nUC  = 0\\x1b[2J" in out
    four = {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]}
    for changes, place in (({"id": evil}, "id"), ({"subgroups": [evil]}, "subgroups[0]"),
                           ({"utilities": {evil: {"kind": "table", "values": [0, 1, 1, 1]}}}, "utilities"),
                           ({"tree": {"root": evil, "children": {evil: ["vL", "vR"], **{k: v for k, v in four.items()
                                                                                      if k != "v0"}}}}, "tree.root")):
        assert audit_with(**changes) == 2
        err = capsys.readouterr().err
        assert err == (f"huc: error: {place}: 'x\\nUC  = 0\\x1b[2J' is not a name: names are printable text (no "
                       "control characters, lone surrogates or special spaces)\n"), err
    assert audit_with(id="\ud800") == 2 and "is not a name" in capsys.readouterr().err
    assert audit_with(id="a" * 1_000_001) == 2
    assert capsys.readouterr().err == "huc: error: id: a name of 1000001 characters; at most 1000000\n"


def test_inputs_that_are_not_regular_files_are_refused_before_any_read(tmp_path):
    import os
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link.json"
    link.symlink_to(D1)
    big = tmp_path / "big.json"
    with open(big, "wb") as f:  # sparse: one byte past the limit, no real disk used
        f.truncate(formats.MAX_DOCUMENT_BYTES + 1)
    for path, what in ((fifo, "a pipe"), (Path("/dev/zero"), "a device"), (tmp_path, "a directory"),
                       (link, "a symbolic link")):
        proc = subprocess.run([sys.executable, "-m", "huc_ref", "audit", str(path)], capture_output=True, text=True,
                              cwd=ROOT, timeout=30)
        assert proc.returncode == 2 and proc.stderr == (f"huc: error: cannot read case file {str(path)!r}: not a "
                                                        f"regular file ({what}); give the path of a JSON document\n")
    proc = subprocess.run([sys.executable, "-m", "huc_ref", "audit", str(big)], capture_output=True, text=True,
                          cwd=ROOT, timeout=30)
    assert proc.returncode == 2 and "larger than 268435456 bytes" in proc.stderr


def test_a_closed_or_full_stdout_and_an_interrupt_end_with_one_line(monkeypatch, capsys):
    for redirect in (">&-", "> /dev/full"):
        proc = subprocess.run(f"{sys.executable} -m huc_ref audit {D1} {redirect}", shell=True, capture_output=True,
                              text=True, cwd=ROOT, timeout=60)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    import huc_ref.cli as cli

    def interrupted(args):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli, "_cmd_audit", interrupted)
    assert main(["audit", str(D1)]) == 130
    assert capsys.readouterr().err == "huc: interrupted\n"


def test_boost_engine_fast_runs_the_same_driver(capsys):
    """#12: `huc boost --engine fast` is the float64 backend under the certified engine's driver:
    the same huc-boost/1 document (valid against its schema), the same decisions here."""
    import jsonschema

    from huc_ref.formats import boost_schema
    case = str(ROOT / "examples" / "cases" / "four_leaf_cancellation.json")
    docs = {}
    for engine in ("exact", "fast"):
        assert main(["boost", case, "--json", "--engine", engine, "--epsilon", "1/10"]) == 0
        docs[engine] = json.loads(capsys.readouterr().out)
        assert not list(jsonschema.Draft202012Validator(boost_schema()).iter_errors(docs[engine]))
    assert [u["node"] for u in docs["exact"]["updates"]] == [u["node"] for u in docs["fast"]["updates"]]
    assert docs["fast"]["arithmetic"] == "float64" and docs["fast"]["digits"] is None


def _array_files(tmp_path):
    """A small sample as array files: calibration (.npy), validation (.csv), test (.npy), a spec."""
    import numpy as np
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(260, 4))
    P = np.exp(2 * logits) / np.exp(2 * logits).sum(axis=1, keepdims=True)  # overconfident
    truth = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(4, p=row) for row in truth])
    np.save(tmp_path / "cal.npy", P[:120])
    np.save(tmp_path / "cal_y.npy", y[:120])
    np.savetxt(tmp_path / "val.csv", P[120:200], delimiter=",", header="y1,y2,y3,y4", comments="")
    np.savetxt(tmp_path / "val_y.csv", y[120:200], fmt="%d")
    np.save(tmp_path / "test.npy", P[200:])
    (tmp_path / "groups.csv").write_text("high\n" + "\n".join(str(int(v)) for v in P[:120, 0] > 0.3) + "\n")
    spec = {"tree": {"root": "v0", "children": {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]}},
            "labels": ["y1", "y2", "y3", "y4"], "utilities": {"top1": {"kind": "top1_at_depth", "depth": 1},
                                                            "t": {"kind": "table", "values": [-1, 1, 1, 1]}}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    return P, y


def test_fit_apply_and_audit_from_array_files(tmp_path, capsys):
    """#13: huc fit / huc apply / huc audit on .npy and .csv files; the saved model reproduces the
    Python API's predictions bit for bit, and the array audit equals the Python API's."""
    import numpy as np

    from huc_ref import fast
    from huc_ref.calibration import load_model
    from huc_ref.formats import read_model_spec
    P, y = _array_files(tmp_path)
    d = str(tmp_path)
    assert main(["fit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/cal.npy", "--labels", f"{d}/cal_y.npy",
                 "--val-predictions", f"{d}/val.csv", "--val-labels", f"{d}/val_y.csv", "--initial", "temperature",
                 "--max-passes", "5", "-o", f"{d}/model.json"]) == 0
    assert "updates run" in capsys.readouterr().err
    assert main(["apply", f"{d}/model.json", f"{d}/test.npy", "-o", f"{d}/out.npy"]) == 0
    model = load_model(tmp_path / "model.json")
    assert np.array_equal(np.load(tmp_path / "out.npy"), model.predict_proba(P[200:]))
    tree, us = read_model_spec(tmp_path / "spec.json")
    assert main(["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/cal.npy", "--labels",
                 f"{d}/cal_y.npy", "--subgroups", f"{d}/groups.csv", "--arithmetic", "float64", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    high = (P[:120, 0] > 0.3).astype(int)
    ref = fast.audit(y[:120], P[:120], tree, us, subgroups={"all": np.ones(120), "high": high})
    assert doc["huc"]["value"] == ref.huc.sup and doc["arithmetic"] == "float64"
    # the whole population is added, as huc fit adds it (K.1: "including c = 1")
    assert {row["subgroup"] for row in doc["candidates"]} == {"all", "high"}
    assert main(["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/cal.npy", "--labels",
                 f"{d}/cal_y.npy"]) == 0  # the exact engine on the floats' exact values: a readable report
    report = capsys.readouterr().out
    assert report.startswith("case cal.npy\n  sample from array files, n=120, K=4") and "HUC = " in report


@pytest.mark.parametrize("args, message", [
    (["audit", "--tree", "{d}/spec.json", "--predictions", "{d}/preds.txt", "--labels", "{d}/cal_y.npy"],
     "huc: error: --predictions: '{d}/preds.txt' is not a .npy, .csv or .parquet file; save it with "
     "numpy.save('preds.npy', array), as comma-separated values, or as Parquet"),
    (["audit", "--predictions", "{d}/cal.npy"],
     "huc: error: --predictions: also give --labels and --tree (a JSON file with tree, labels and utilities)"),
    (["audit"], "huc: error: audit: give a case file (huc audit CASE.json) or array files (--predictions, --labels, "
                "--tree)"),
    (["apply", "{d}/model.json", "{d}/test.npy", "-o", "{d}/out.npy"],
     "huc: error: cannot read model '{d}/model.json': No such file or directory"),
    # the output is checked before anything is read (it was refused after the model had been applied)
    (["apply", "{d}/model.json", "{d}/test.npy", "-o", "{d}/out.txt"],
     "huc: error: -o: '{d}/out.txt' must end in .npy or .csv"),
    # K.1's kappa_0 in (0, 1) on the array path too: --smooth 2 is named, not reported as an unsmoothed
    # zero entry, nor --smooth -1 as a negative prediction
    (["audit", "--tree", "{d}/spec.json", "--predictions", "{d}/cal.npy", "--labels", "{d}/cal_y.npy",
      "--smooth", "2"], "huc: error: --smooth: kappa must be in (0, 1) (K.1's kappa_0), got 2"),
    (["audit", "--tree", "{d}/spec.json", "--predictions", "{d}/cal.npy", "--labels", "{d}/cal_y.npy",
      "--smooth", "-1", "--engine", "fast"], "huc: error: --smooth: kappa must be in (0, 1) (K.1's kappa_0), got -1"),
    (["audit", "--tree", "{d}/spec.json", "--predictions", "{d}/cal.npy", "--labels", "{d}/cal_y.npy",
      "--smooth", "1"], "huc: error: --smooth: kappa must be in (0, 1) (K.1's kappa_0), got 1"),
])
def test_array_file_errors(tmp_path, capsys, args, message):
    _array_files(tmp_path)
    (tmp_path / "preds.txt").write_text("0.5 0.5\n")
    d = str(tmp_path)
    assert main([a.replace("{d}", d) for a in args]) == 2
    assert capsys.readouterr().err.startswith(message.replace("{d}", d))


@pytest.mark.parametrize("args, message", [
    # each of these options has no effect in this combination: refused, not ignored silently
    (["audit", "{case}", "--arithmetic", "float64", "--max-digits", "10"],
     "--max-digits: applies to --arithmetic exact (the cost limit of its digits); float64's numbers have a fixed size"),
    (["boost", "{case}", "--max-passes", "5"],
     "--max-passes: applies to --select passes (K.1's budget of passes); greedy and drain stop at --max-updates"),
    (["boost", "{case}", "--arithmetic", "float64", "--digits", "40"],
     "--digits: applies to --arithmetic exact or certified (float64 has no working precision)"),
])
def test_an_option_that_does_not_apply_is_refused(capsys, args, message):
    assert main([a.replace("{case}", str(D1)) for a in args]) == 2
    assert capsys.readouterr().err == f"huc: error: {message}\n"


@pytest.mark.parametrize("args, message", [
    (["--p", "1/2,1/2,0,0"], "--p[2]: is 0; the paper assumes p_y > 0 (A.2)"),  # (the option, not atoms[0].p[2])
    (["--p", "1/2,1/2,1/2,0"], "--p: sums to 3/2, not 1"),
    (["--utility", "2,0,0,0"], "--utility[0]: utility value 2 is outside [-1, 1]"),  # (not u[0])
    (["--eta", "1/2,1/2,0,1/2"], "--eta: sums to 3/2, not 1"),  # (not atoms[0].eta)
    (["--eta", "1/2,1/2,-1/2,1/2"], "--eta[2]: is negative (-1/2)"),
])
def test_the_demo_names_its_options(capsys, args, message):
    assert main(["demo", *args]) == 2
    assert capsys.readouterr().err.startswith(f"huc: error: {message}")


@pytest.mark.parametrize("engine", ["fast", "exact"])
@pytest.mark.parametrize("change, extra, message", [
    # both engines refuse a row summing to 1.01 (the exact engine is not to divide it by its sum), name a
    # NaN's own row, and name the option, not y_prob
    (lambda P: P.__setitem__(7, P[7] * 1.01), [], "--predictions[7]: sums to "),
    (lambda P: P.__setitem__((5, 1), float("nan")), [], "--predictions[5]: entries must be finite and nonnegative"),
    (lambda P: P.__setitem__((5, 1), float("nan")), ["--renormalize"],
     "--predictions[5]: entries must be finite and nonnegative"),
    (lambda P: P.__setitem__((9, 0), -0.25), ["--smooth", "1/2"],
     "--predictions[9]: entries must be finite and nonnegative"),
])
def test_array_rows_are_checked_alike_by_both_engines(tmp_path, capsys, engine, change, extra, message):
    import numpy as np
    P, _ = _array_files(tmp_path)
    P = P[:120].copy()
    change(P)
    np.save(tmp_path / "bad.npy", P)
    d = str(tmp_path)
    assert main(["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/bad.npy", "--labels", f"{d}/cal_y.npy",
                 "--engine", engine, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"huc: error: {message}") and err.count("\n") == 1, err
    if message.endswith("sums to "):
        assert err.endswith("not 1 (within 1e-05); give --renormalize to take each row divided by its sum\n")
        assert main(["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/bad.npy", "--labels",
                     f"{d}/cal_y.npy", "--engine", engine, "--renormalize", "--json"]) == 0
        P[7] /= P[7].sum()
        np.save(tmp_path / "fixed.npy", P)
        assert main(["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/fixed.npy", "--labels",
                     f"{d}/cal_y.npy", "--engine", engine, "--json"]) == 0
        fixed, renormalised = capsys.readouterr().out.split("\n}\n")[:2]
        a, b = (Fraction(json.loads(doc + "}")["huc"]["value"]) for doc in (fixed, renormalised))
        assert abs(a - b) <= Fraction(1, 10**12)  # (the row divided in float64, or exactly: a rounding apart)


def test_huc_fit_takes_the_arithmetic_and_reads_engine_with_a_note(tmp_path, capsys):
    """``huc fit --arithmetic certified`` fits in certified float64 and the model says so;
    ``--engine fast`` (the option before it) fits as ``--arithmetic float64`` and says so on stderr,
    last (a refused command says its one error line alone)."""
    _array_files(tmp_path)
    d = str(tmp_path)
    common = ["fit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/cal.npy", "--labels", f"{d}/cal_y.npy",
              "--max-passes", "2"]
    assert main(common + ["--arithmetic", "certified", "-o", f"{d}/certified.json"]) == 0
    assert "(huc, certified; " in capsys.readouterr().err  # (and the held-out rows)
    assert json.loads((tmp_path / "certified.json").read_text())["options"]["arithmetic"] == "certified"
    assert main(common + ["--engine", "fast", "-o", f"{d}/fast.json"]) == 0
    err = capsys.readouterr().err
    assert err.endswith("\nhuc fit: --engine fast is deprecated; use --arithmetic float64\n")
    assert main(common + ["--arithmetic", "float64", "-o", f"{d}/float64.json"]) == 0
    fast, plain = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("fast", "float64"))
    assert fast["rules"] == plain["rules"] and plain["options"]["arithmetic"] == "float64"


@pytest.mark.parametrize("engine", ["fast", "exact"])
@pytest.mark.parametrize("command", ["audit", "fit", "apply"])
def test_complex_predictions_are_refused_naming_the_option(tmp_path, capsys, engine, command):
    """A .npy of complex numbers is refused naming the option on every path: never cast to real by
    numpy (a ComplexWarning, the imaginary parts dropped), nor refused naming ``y_prob``."""
    import numpy as np
    P, _ = _array_files(tmp_path)
    np.save(tmp_path / "complex.npy", P[:120].astype(complex))
    d = str(tmp_path)
    if command == "apply":
        assert main(["fit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/cal.npy", "--labels", f"{d}/cal_y.npy",
                     "-o", f"{d}/m.json", "--engine", engine]) == 0
        args = ["apply", f"{d}/m.json", f"{d}/complex.npy", "-o", f"{d}/out.npy"]
    else:
        args = [command, "--tree", f"{d}/spec.json", "--predictions", f"{d}/complex.npy", "--labels",
                f"{d}/cal_y.npy", "--engine", engine] + (["-o", f"{d}/m.json"] if command == "fit" else [])
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(args) == 2
    option = "predictions" if command == "apply" else "--predictions"
    assert capsys.readouterr().err == f"huc: error: {option}: expected real numbers, got an array of dtype complex128\n"


@pytest.mark.parametrize("renormalize", [False, True])
def test_a_subnormal_entry_names_the_option_on_the_fast_engine_and_the_exact_engine_reads_it(tmp_path, capsys,
                                                                                              renormalize):
    """The fast engine refuses an entry below 2.2e-308 (not naming ``y_prob``, nor telling a user who
    gave ``--renormalize`` to pass ``renormalize=True``); the message names the option and the
    options that mend it, and each does: the exact engine takes the row as it is, and the row
    scaled by 2**600 with ``--renormalize`` gives the fast engine the audit the exact engine gives
    (a rounding apart)."""
    import numpy as np
    P, y = _array_files(tmp_path)
    P = P[:120].copy()
    other, tiny = [k for k in range(4) if k != y[4]][:2]
    P[4] = 0.25
    P[4, other], P[4, tiny] = 0.5, 1e-310  # (the label's own entry positive; no zero: the exact engine's A.2)
    np.save(tmp_path / "tiny.npy", P)
    d = str(tmp_path)
    args = ["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/tiny.npy", "--labels", f"{d}/cal_y.npy",
            "--json"]
    extra = ["--renormalize"] if renormalize else []
    assert main(args + ["--arithmetic", "float64"] + extra) == 2
    scale = ("(--renormalize, as given, divides each row by its sum)" if renormalize else
             "and give --renormalize (each row then stands for itself divided by its sum)")
    assert capsys.readouterr().err == (
        f"huc: error: --predictions[4]: entry {tiny} is 1e-310, a subnormal float64 (below 2.225e-308): its digits "
        f"are lost in sums and ratios; multiply the row by a power of two such as 2.0**600 {scale}, or audit its "
        "exact value (--arithmetic exact)\n")
    assert main(args + ["--arithmetic", "exact"] + extra) == 0
    exact = Fraction(json.loads(capsys.readouterr().out)["huc"]["value"])
    np.save(tmp_path / "scaled.npy", P * 2.0**600)
    assert main(args[:4] + [f"{d}/scaled.npy"] + args[5:] + ["--arithmetic", "float64", "--renormalize"]) == 0
    scaled = Fraction(json.loads(capsys.readouterr().out)["huc"]["value"])
    assert abs(scaled - exact) <= Fraction(1, 10**12)


@pytest.mark.parametrize("options, why, fast_mends", [
    (["--arithmetic", "exact"], "exact arithmetic", True),
    (["--arithmetic", "float64", "--null", "exact"], "--null exact (an exact enumeration)", False),
])
def test_a_zero_off_the_label_names_the_option_where_the_exact_engine_runs(tmp_path, capsys, options, why,
                                                                         fast_mends):
    """A decision tree's row with a zero that is not its label's: the fast engine audits it (its means
    are read on the label's path only); where the exact engine runs, the zero is refused (A.2's open
    simplex) naming the option and what mends it, and each remedy named does (not ``atoms[4].p[j]``,
    a place in no file the user gave)."""
    import numpy as np
    P, y = _array_files(tmp_path)
    P, y = P[:6].copy(), y[:6]  # (4**6 label assignments for --null exact)
    zero = (y[4] + 1) % 4
    P[4, y[4]] += P[4, zero]
    P[4, zero] = 0.0
    np.save(tmp_path / "dt.npy", P)
    np.save(tmp_path / "dt_y.npy", y)
    d = str(tmp_path)
    args = ["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/dt.npy", "--labels", f"{d}/dt_y.npy"]
    assert main(args + options) == 2
    remedy = ", or --arithmetic float64 (it reads a row's means only on its label's path)" if fast_mends else ""
    assert capsys.readouterr().err == (
        f"huc: error: --predictions[4]: entry {zero} is 0, and {why} takes predictions in the open "
        "simplex (p_y > 0, A.2); give --smooth KAPPA (K.1's kappa_init, each prediction mixed with the uniform law: "
        f"(1-k) p + k/K){remedy}\n")
    assert main(args + options + ["--smooth", "1/1000", "--json"]) == 0
    if fast_mends:
        assert main(args + ["--arithmetic", "float64", "--json"]) == 0


@pytest.mark.parametrize("engine", ["fast", "exact"])
@pytest.mark.parametrize("source", ["arrays", "case"])
def test_null_exact_beyond_the_limit_names_the_option(tmp_path, capsys, engine, source):
    """``--null exact`` on 120 rows of 4 labels (4**120 assignments) is refused in the command
    line's words, from array files and from a case, with the work of one audit on the engine
    (:func:`huc_ref.significance.null_work`: (120 + 64) x (4 x 2 + 5) exact, (120 + 8192) x 13 fast)."""
    P, y = _array_files(tmp_path)
    d = str(tmp_path)
    if source == "arrays":
        args = ["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/cal.npy", "--labels", f"{d}/cal_y.npy"]
    else:
        spec = json.loads((tmp_path / "spec.json").read_text())
        atoms = [{"p": ["1/4"] * 4, "label": spec["labels"][int(k)]} for k in y[:120]]
        case = {"format": "huc-case/1", "id": "big", "tree": spec["tree"], "labels": spec["labels"],
                "utilities": spec["utilities"], "subgroups": ["all"], "atoms": atoms}
        (tmp_path / "big.json").write_text(json.dumps(case))
        args = ["audit", f"{d}/big.json"]
    assert main(args + ["--engine", engine, "--null", "exact"]) == 2
    atoms, per_audit, budget = {"exact": (64, 2392, 5000000), "fast": (8192, 108056, 4000000000)}[engine]
    assert capsys.readouterr().err == (f"huc: error: --null exact: enumerates 4**120 label assignments, each an audit: "
                                       f"4**120 x {per_audit} units of work (draws x (n + {atoms}) (K |U| + rows), "
                                       f"n = 120, K = 4, |U| = 2, rows = 5), more than the {engine} engine's budget of "
                                       f"{budget}; give --null B (B resampled draws)\n")


@pytest.mark.parametrize("engine", ["fast", "exact"])
def test_a_label_of_probability_0_names_the_option_and_smooth_mends_it(tmp_path, capsys, engine):
    """A decision tree's predictions: a row whose label has probability 0 is one error naming the
    file's option and the remedy, on either engine; ``--smooth`` (K.1's kappa_init) audits it."""
    import numpy as np
    P, y = _array_files(tmp_path)
    P, y = P[:120].copy(), y[:120]
    P[11] = 0.0
    P[11, (y[11] + 1) % 4] = 1.0  # all of row 11's mass on a label that is not its own
    np.save(tmp_path / "dt.npy", P)
    d = str(tmp_path)
    args = ["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/dt.npy", "--labels", f"{d}/cal_y.npy",
            "--engine", engine]
    assert main(args) == 2
    label = ["y1", "y2", "y3", "y4"][y[11]]
    err = capsys.readouterr().err
    assert err.startswith(f"huc: error: --predictions[11]: the label {label!r} has probability 0, where the audit's "
                          "means are 0/0 (the paper assumes p_y > 0, A.2); give --smooth KAPPA (K.1's kappa_init")
    assert main(args + ["--smooth", "1/1000", "--json"]) == 0


@pytest.mark.parametrize("text, message", [
    ("0.2,0.3,0.5\n0.1,0.9\n", "line 2 has 2 cells, line 1 has 3"),
    ("0.2,0.3,0.5\n0.1,,0.9\n", "line 2, column 2: '' is not a number"),
    ("0.2,0.3,0.5\n0.1,nan,0.9\n", "line 2, column 2: 'nan' is not a finite number"),
    ("0.2,0.3,0.5,\n0.1,0.1,0.8,\n", "line 1, column 4: '' is not a number"),
    ("a,b,c\n0.2;0.3;0.5\n", "line 2 has 1 cell, line 1 (the header) has 3 (cells are separated by commas)"),
    ("0.2;0.3;0.5\n0.1;0.1;0.8\n", "line 2, column 1: '0.1;0.1;0.8' is not a number; cells are separated by commas"),
    ("0,2;0,3;0,5\n", "line 1, column 2: '2;0' is not a number; cells are separated by commas"),
    ("a,b\n0.2,0.3,0.5\n", "line 2 has 3 cells, line 1 (the header) has 2"),
    # pandas' index column is dropped, but a cell is named by its column in the file (the column after
    # the index is column 3, not 2)
    (",a,b,c\n0,0.2,0.3,0.5\n1,0.1,,0.9\n", "line 3, column 3: '' is not a number"),
    # a header and no rows (or one row of booleans, read as a header): one line, not numpy's warning
    # 'loadtxt: input contained no data' and then 'expected an n x 3 array of probabilities, got shape (0,)'
    ("a,b,c\n", "has no rows of numbers (line 1, its only line, is read as a header: not every cell is a number)"),
    ("True,False,True\n\n", "has no rows of numbers (line 1, its only line, is read as a header: not every cell is "
                            "a number)"),
    ("\n\n", "has no rows of numbers"),
])
def test_a_malformed_csv_of_predictions_is_one_error_naming_its_line(tmp_path, capsys, text, message):
    """A spreadsheet's CSV with an empty cell or a trailing comma, a ragged one, and one with
    semicolons or decimal commas: each is refused naming the line and column and the rule (not
    'y_prob: expected numbers, got an array of dtype <U4', numpy's 'inhomogeneous shape', or a row
    count that does not match the labels)."""
    (tmp_path / "spec.json").write_text(json.dumps({"tree": {"root": "r", "children": {"r": ["a", "b", "c"]}},
                                                    "labels": ["a", "b", "c"],
                                                    "utilities": {"u": {"kind": "top_k", "k": 1}}}))
    (tmp_path / "p.csv").write_text(text)
    (tmp_path / "y.csv").write_text("0\n1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (one line on stderr, no warning before it)
        assert main(["audit", "--tree", str(tmp_path / "spec.json"), "--predictions", str(tmp_path / "p.csv"),
                     "--labels", str(tmp_path / "y.csv"), "--engine", "fast"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"huc: error: --predictions: 'p.csv' {message}") and err.count("\n") == 1, err


@pytest.mark.parametrize("text, message", [
    ("g\n1\nnan\n", "--subgroups['g'][1]: nan is not a number in [-1, 1]"),
    ("g\n2\n0\n", "--subgroups['g'][0]: 2.0 is not a number in [-1, 1]"),
    ("g,h\n1,0\n,1\n", "--subgroups['g'][1]: '' is not a number in [-1, 1] (nor True or False, for a mask)"),
    ("g\nyes\nno\n", "--subgroups['g'][0]: 'yes' is not a number in [-1, 1] (nor True or False, for a mask)"),
    ("g\nTrue\n0\n", "--subgroups['g'][0]: 'True' is in a column of numbers (a mask's column holds only True and "
                      "False)"),
])
def test_a_bad_cell_of_a_subgroups_file_is_named_by_the_option(tmp_path, capsys, text, message):
    """Each is named by the option and its row, not by the library's name (`subgroups['g'][1]: ...`)
    nor as `subgroups['g']: expected numbers, got text`, with no row."""
    (tmp_path / "spec.json").write_text(json.dumps({"tree": {"root": "r", "children": {"r": ["a", "b"]}},
                                                    "labels": ["a", "b"],
                                                    "utilities": {"u": {"kind": "top_k", "k": 1}}}))
    (tmp_path / "p.csv").write_text("0.25,0.75\n0.5,0.5\n")
    (tmp_path / "y.csv").write_text("0\n1\n")
    (tmp_path / "g.csv").write_text(text)
    assert main(["audit", "--tree", str(tmp_path / "spec.json"), "--predictions", str(tmp_path / "p.csv"), "--labels",
                 str(tmp_path / "y.csv"), "--subgroups", str(tmp_path / "g.csv"), "--engine", "fast"]) == 2
    assert capsys.readouterr().err == f"huc: error: {message}\n"
    (tmp_path / "g.csv").write_text("g,h\nTrue,0.5\nFalse,-1\n")  # a mask beside a column of numbers
    assert main(["audit", "--tree", str(tmp_path / "spec.json"), "--predictions", str(tmp_path / "p.csv"), "--labels",
                 str(tmp_path / "y.csv"), "--subgroups", str(tmp_path / "g.csv"), "--engine", "fast", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["candidates"]
    assert [r["subgroup"] for r in rows if r["node"] is None] == ["all", "g", "h"]  # (the whole population added)


@pytest.mark.parametrize("labels_file", ["002\n002\n003\n", "label\n002\n002\n003\n", '"002"\n"002"\n"003"\n'])
def test_label_names_with_leading_zeros_are_names_in_a_csv(tmp_path, capsys, labels_file):
    """A labels CSV naming labels "002", "002", "003" (codes with leading zeros) is read as those
    names, not as the numbers 2, 2, 3 audited as the label ids 2, 2 and 3 (the labels "003", "003"
    and "004"): a silently wrong audit whenever the numbers are in range.
    Cells that are label names are names; only a file of whole numbers that are not all names
    is read as ids."""
    import numpy as np

    from huc_ref import LabelTree, TopK, fast
    t = LabelTree.from_children("r", {"r": ["001", "002", "003", "004"]})  # "002" is label id 1, the number 2 id 2
    (tmp_path / "spec.json").write_text(json.dumps({"tree": {"root": "r", "children": {"r": list(t.labels)}},
                                                    "labels": list(t.labels),
                                                    "utilities": {"u": {"kind": "top_k", "k": 1}}}))
    P = np.array([[0.1, 0.6, 0.2, 0.1], [0.1, 0.1, 0.7, 0.1], [0.4, 0.3, 0.2, 0.1]])
    np.savetxt(tmp_path / "p.csv", P, delimiter=",")
    (tmp_path / "y.csv").write_text(labels_file)
    assert main(["audit", "--tree", str(tmp_path / "spec.json"), "--predictions", str(tmp_path / "p.csv"), "--labels",
                 str(tmp_path / "y.csv"), "--engine", "fast", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["uc"]["value"]
    assert got == fast.audit(["002", "002", "003"], P, t, {"u": TopK(t, 1)}).uc.sup
    assert got != fast.audit([2, 2, 3], P, t, {"u": TopK(t, 1)}).uc.sup  # (the ids the numbers would name)


def test_the_csv_huc_apply_writes_is_read_back_where_labels_are_digits(tmp_path, capsys):
    """``huc apply -o out.csv`` writes a header of the tree's labels; where those are "0", "1", "2"
    (a classifier's integer classes) the header was read back as a row of probabilities and the
    file refused ('--labels: has 40 labels, --predictions has 41 rows'), or, with the labels in
    another order in the header, not recognised as one.  A first row listing exactly
    the labels is a header, so a header in another order is read by name too."""
    import numpy as np

    from huc_ref import LabelTree, TopK, fast
    digits = [str(k) for k in range(10)]  # a flat tree of ten classes named 0 .. 9 (load_digits' classes_)
    t = LabelTree.from_children("r", {"r": digits})
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(10), 40)
    y = rng.integers(0, 10, 40)
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", y)
    (tmp_path / "spec.json").write_text(json.dumps({"tree": {"root": "r", "children": {"r": digits}},
                                                    "labels": digits, "utilities": {"u": {"kind": "top_k", "k": 1}}}))
    d = str(tmp_path)
    assert main(["fit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/p.npy", "--labels", f"{d}/y.npy",
                 "--max-passes", "2", "-o", f"{d}/model.json"]) == 0
    assert main(["apply", f"{d}/model.json", f"{d}/p.npy", "-o", f"{d}/out.csv"]) == 0
    assert (tmp_path / "out.csv").read_text().startswith("0,1,2,3,4,5,6,7,8,9\n")
    capsys.readouterr()
    assert main(["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/out.csv", "--labels", f"{d}/y.npy",
                 "--engine", "fast", "--json"]) == 0
    recalibrated = np.loadtxt(tmp_path / "out.csv", delimiter=",", skiprows=1)
    expected = fast.audit(y, recalibrated, t, {"u": TopK(t, 1)}).uc.sup
    assert json.loads(capsys.readouterr().out)["uc"]["value"] == expected
    (tmp_path / "out.csv").write_text("1,0,2,3,4,5,6,7,8,9\n" + (tmp_path / "out.csv").read_text().split("\n", 1)[1])
    assert main(["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/out.csv", "--labels", f"{d}/y.npy",
                 "--engine", "fast", "--json"]) == 0  # the first two columns now named '1' and '0': read by name
    swapped = fast.audit(y, recalibrated[:, [1, 0, 2, 3, 4, 5, 6, 7, 8, 9]], t, {"u": TopK(t, 1)}).uc.sup
    assert json.loads(capsys.readouterr().out)["uc"]["value"] == swapped != expected


def test_a_csv_of_100_classes_near_1e_300_audits_as_its_npy(tmp_path, capsys):
    """The shape the fast path was hardest on, through the CSV reader: 100
    softmax classes a third of them near 1e-300 (normal doubles), written with %.17g (round trip)
    and a header of the labels, audit to the same document as the .npy they were written from."""
    import numpy as np
    labels = [f"c{k}" for k in range(100)]
    rng = np.random.default_rng(5)
    logits = rng.normal(size=(60, 100))
    logits[:, ::3] -= 690.0  # entries near 1e-300
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    assert 1e-305 < P.min() < 1e-295
    np.save(tmp_path / "p.npy", P)
    np.savetxt(tmp_path / "p.csv", P, delimiter=",", fmt="%.17g", header=",".join(labels), comments="")
    np.save(tmp_path / "y.npy", rng.integers(0, 100, 60))
    (tmp_path / "spec.json").write_text(json.dumps({"tree": {"root": "r", "children": {"r": labels}}, "labels": labels,
                                                    "utilities": {"u": {"kind": "top_k", "k": 5}},
                                                    "columns": labels}))  # (the .npy's order: c10 is not sorted)
    docs = []
    for name in ("p.npy", "p.csv"):
        assert main(["audit", "--tree", str(tmp_path / "spec.json"), "--predictions", str(tmp_path / name),
                     "--labels", str(tmp_path / "y.npy"), "--engine", "fast", "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        docs.append({k: v for k, v in doc.items() if k != "case"})
    assert docs[0] == docs[1] and docs[0]["uc"]["value"] > 0


def test_quoted_cells_are_read_as_a_spreadsheet_writes_them(tmp_path):
    """A CSV whose cells are quoted (as spreadsheets and csv.writer with QUOTE_ALL write them) is
    read as the numbers and names inside the quotes (the quoted first row is no header, and the
    row count stays right)."""
    from huc_ref.formats import read_columns
    (tmp_path / "p.csv").write_text('"a","b"\n"0.25","0.75"\n0.5,0.5\n')
    array, names = read_columns(tmp_path / "p.csv", "predictions", numbers=True)
    assert array.tolist() == [[0.25, 0.75], [0.5, 0.5]] and names == ["a", "b"]
    (tmp_path / "q.csv").write_text('"0.25","0.75"\n0.5,0.5\n')  # no header
    array, names = read_columns(tmp_path / "q.csv", "predictions", numbers=True)
    assert array.tolist() == [[0.25, 0.75], [0.5, 0.5]] and names is None


@st.composite
def _csv_texts(draw):
    """A CSV of numbers as programs write them: repr'd or fixed-point floats (subnormal to huge),
    integers, an optional header (with pandas' index column), quoted cells, spaces, CRLF or LF,
    blank lines, and the cells as Python's ``float`` reads them."""
    width = draw(st.integers(1, 5))
    number = st.one_of(st.floats(allow_nan=False, allow_infinity=False).map(repr),
                       st.floats(0, 1).map(lambda x: f"{x:.25f}"), st.integers(-10**6, 10**6).map(str),
                       st.sampled_from(["5e-324", "2.2250738585072011e-308", "1.7976931348623157e308", "-0.0"]))
    rows = draw(st.lists(st.lists(number, min_size=width, max_size=width), min_size=1, max_size=6))
    index = draw(st.booleans())
    header = draw(st.sampled_from([None, [f"c{k}" for k in range(width)]]))
    quote, spaces = draw(st.booleans()), draw(st.booleans())
    cell = (lambda x: f'"{x}"') if quote else (lambda x: f" {x} " if spaces else x)
    lines = [",".join(([""] if index else []) + header)] if header else []
    lines += [",".join(([str(i)] if index and header else []) + [cell(x) for x in row]) for i, row in enumerate(rows)]
    if draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), "")  # a blank line
    text = draw(st.sampled_from(["\n", "\r\n"])).join(lines) + draw(st.sampled_from(["", "\n"]))
    return text, [[float(x) for x in row] for row in rows], header


@pytest.mark.filterwarnings("error")
@settings(max_examples=150)
@given(_csv_texts())
@example(('a,b\x0b0.2,0.8\n0.1,0.9\n', [[0.2, 0.8], [0.1, 0.9]], ["a", "b"]))  # a vertical tab: splitlines's line end
@example(("9.223372036854776e+18\n1e300\n", [[9.223372036854776e+18], [1e300]], None))  # whole, past int64
def test_the_fast_csv_reader_reads_what_python_reads(case):
    """numpy's ``loadtxt`` path of the CSV reader against the csv module cell by cell and against
    Python's ``float`` of each cell: the same numbers to the bit, the same header.  (Found by this
    test, in the reader before it too: a column of whole numbers past 2^63 became int64's wrapped
    values, -9223372036854775808 for 9.2e18, with only a RuntimeWarning.)"""
    from unittest import mock

    import numpy as np

    from huc_ref import formats
    from huc_ref.formats import _csv_columns
    text, rows, header = case
    with mock.patch.object(formats.csv, "reader", wraps=formats.csv.reader) as reader, \
            mock.patch.object(np, "loadtxt", wraps=np.loadtxt) as loadtxt:
        fast, names = _csv_columns(text, "p", True)
    if "\x0b" not in text:  # (a vertical tab: loadtxt and splitlines disagree on the lines; cell by cell)
        # loadtxt read the numbers and the csv module only the first line: the cell-by-cell path did not run
        assert loadtxt.call_count == 1 and reader.call_count == 1, (loadtxt.call_count, reader.call_count)
    slow, slow_names = _csv_columns(text, "p", True, fast=False)
    want = np.array(rows)
    want = want[:, 0] if want.shape[1] == 1 else want
    for got in (fast, slow):
        assert got.shape == want.shape and np.array_equal(np.asarray(got, dtype=float).view(np.int64),
                                                          want.view(np.int64)) or \
            (got.dtype.kind == "i" and np.array_equal(got, want))
    assert names == slow_names == header


def test_bad_label_and_subgroup_files_are_named_by_their_options(tmp_path, capsys):
    """A labels file of the wrong length or with a number that is no label, and a validation or new
    predictions' subgroups file that lacks a subgroup the model is fitted with, are named by the
    option that gave them, not by the library's names ('y_true: has 119 labels, y_prob has 120
    rows' for --labels or --val-labels, 'subgroups' for --val-subgroups, or a Python hint
    'subgroups={...}' from huc apply)."""
    import numpy as np
    _, y = _array_files(tmp_path)
    d = str(tmp_path)
    np.save(tmp_path / "short_y.npy", y[:119])
    np.savetxt(tmp_path / "bad_val_y.csv", np.full(80, 7), fmt="%d")
    (tmp_path / "val_groups.csv").write_text("low\n" + "0\n" * 80)
    fit = ["fit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/cal.npy", "-o", f"{d}/model.json",
           "--max-passes", "1"]
    val = ["--val-predictions", f"{d}/val.csv"]
    for args, message in [
            (fit + ["--labels", f"{d}/short_y.npy"], "--labels: has 119 labels, --predictions has 120 rows"),
            (fit + ["--labels", f"{d}/cal_y.npy"] + val + ["--val-labels", f"{d}/short_y.npy"],
             "--val-labels: has 119 labels, --val-predictions has 80 rows"),
            (fit + ["--labels", f"{d}/cal_y.npy"] + val + ["--val-labels", f"{d}/bad_val_y.csv"],
             "--val-labels[0]: 7 is not a label name or id"),
            (fit + ["--labels", f"{d}/cal_y.npy", "--subgroups", f"{d}/groups.csv"] + val +
             ["--val-labels", f"{d}/val_y.csv", "--val-subgroups", f"{d}/groups.csv"],
             "--val-subgroups: expected a .csv file with a header row of subgroup names and 80 rows"),
            (fit + ["--labels", f"{d}/cal_y.npy", "--subgroups", f"{d}/groups.csv"] + val +
             ["--val-labels", f"{d}/val_y.csv", "--val-subgroups", f"{d}/val_groups.csv"],
             "--val-subgroups: the model was fitted with subgroup 'high'; give its values under that name in "
             "--val-subgroups (one per row of --val-predictions)"),
            (["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/cal.npy", "--labels", f"{d}/short_y.npy"],
             "--labels: has 119 labels, --predictions has 120 rows")]:
        assert main(args) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"huc: error: {message}") and err.count("\n") == 1, err
    assert main(fit + ["--labels", f"{d}/cal_y.npy", "--subgroups", f"{d}/groups.csv"]) == 0
    capsys.readouterr()
    assert main(["apply", f"{d}/model.json", f"{d}/test.npy", "-o", f"{d}/out.npy"]) == 2
    assert capsys.readouterr().err == ("huc: error: --subgroups: the model is fitted with subgroup 'high'; give its "
                                       "values in a --subgroups file (a .csv column of that name)\n")


def test_parquet_predictions_when_pyarrow_is_installed(tmp_path):
    """The parquet extra: the columns in order; the same array as the .npy it was written from."""
    import numpy as np
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from huc_ref.formats import read_array
    P = np.array([[0.25, 0.75], [0.5, 0.5]])
    pq.write_table(pa.table({"a": P[:, 0], "b": P[:, 1]}), tmp_path / "p.parquet")
    assert np.array_equal(read_array(tmp_path / "p.parquet", "predictions"), P)


def test_audit_with_p_values_from_array_files(tmp_path, capsys):
    """#15: huc audit --null B --seed S prints a p-value for UC, HUC and each listed violation,
    writes them in huc-result/1, and equals the Python API's; --null exact on a case file."""
    from huc_ref import fast
    from huc_ref.formats import read_model_spec
    P, y = _array_files(tmp_path)
    d = str(tmp_path)
    args = ["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/cal.npy", "--labels", f"{d}/cal_y.npy",
            "--engine", "fast", "--null", "199", "--seed", "4"]
    assert main(args) == 0
    report = capsys.readouterr().out
    assert "p-values under the null of calibration (Y ~ p; 199 redraws of every label from its prediction, seed 4)" \
        in report
    assert "  UC: p = " in report and "HUC: p = " in report and "Theorem 3.4 at delta = 1/20" in report
    assert "p-value  interval" in report
    assert main(args + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    tree, us = read_model_spec(tmp_path / "spec.json")
    ref = fast.audit(y[:120], P[:120], tree, us, null_draws=199, seed=4).significance
    assert doc["significance"]["huc"] == str(ref.huc) and doc["significance"]["uc"] == str(ref.uc)
    assert [row["p_value"] for row in doc["candidates"]] == [str(p) for p in ref.rows]
    for bad, message in (("0", "--null: expected a positive integer (at most 1000000) or 'exact', got 0"),
                         ("1e3", "--null: expected a positive integer number of draws or 'exact', got '1e3'")):
        assert main(args[:-4] + ["--null", bad]) == 2
        assert capsys.readouterr().err.strip() == f"huc: error: {message}"


def test_audit_with_exact_p_values_of_a_small_case(tmp_path, capsys):
    case = {"format": "huc-case/1", "id": "tiny", "tree": {"root": "r", "children": {"r": ["a", "b"]}},
            "labels": ["a", "b"], "utilities": {"u": {"kind": "table", "values": [0, 1]}},
            "atoms": [{"p": ["1/2", "1/2"], "label": "b"}, {"p": ["1/2", "1/2"], "label": "b"}]}
    (tmp_path / "c.json").write_text(json.dumps(case))
    assert main(["audit", str(tmp_path / "c.json"), "--null", "exact", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # UC = 1/2 iff both labels agree: P = 1/2 (the docstring of huc_ref.significance.exact_p_values)
    assert doc["significance"] == {"method": "exact", "draws": 4, "seed": None, "uc": "1/2", "huc": "1/2",
                                   "theorem_3_4": {"delta": "1/20", "deviation": doc["significance"]["theorem_3_4"]
                                                   ["deviation"]}}


def test_fit_reports_p_values_before_and_after(tmp_path, capsys):
    """#15: the estimator's fit report on the command line: UC and HUC with p-values, held out."""
    _array_files(tmp_path)
    d = str(tmp_path)
    assert main(["fit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/cal.npy", "--labels", f"{d}/cal_y.npy",
                 "--val-predictions", f"{d}/val.csv", "--val-labels", f"{d}/val_y.csv", "--max-passes", "3",
                 "--null", "49", "-o", f"{d}/model.json"]) == 0
    err = capsys.readouterr().err
    assert "huc fit: validation data before: UC = " in err and "huc fit: validation data after: UC = " in err
    assert err.count("(p = ") == 4 and "optimistic" not in err
    assert main(["fit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/cal.npy", "--labels", f"{d}/cal_y.npy",
                 "--null", "exact", "-o", f"{d}/model.json"]) == 2
    assert capsys.readouterr().err.strip() == ("huc: error: --null: 'exact' enumerates the label assignments of an "
                                               "exact distribution (huc_ref.audit); the fit's report draws labels: "
                                               "give a number of draws")


def test_audit_accelerator_option(tmp_path, capsys):
    """--accelerator numba gives the numpy accelerator's p-values (or says numba is missing);
    in exact arithmetic it is one clear error, naming the arithmetic numba computes and the
    accelerators exact arithmetic takes."""
    from huc_ref.fast import numba_available
    _array_files(tmp_path)
    d = str(tmp_path)
    base = ["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/cal.npy", "--labels", f"{d}/cal_y.npy",
            "--null", "49", "--json"]
    assert main(base + ["--arithmetic", "exact", "--accelerator", "numba"]) == 2
    assert capsys.readouterr().err.strip() == ("huc: error: --accelerator: 'numba' computes float64 (--arithmetic "
                                               "float64); --arithmetic exact takes 'fraction' or 'gmpy2'")
    assert main(base + ["--arithmetic", "float64"]) == 0
    plain = json.loads(capsys.readouterr().out)["significance"]
    code = main(base + ["--arithmetic", "float64", "--accelerator", "numba"])
    if numba_available():
        assert code == 0 and json.loads(capsys.readouterr().out)["significance"] == plain
    else:
        assert code == 2 and "numba" in capsys.readouterr().err


def test_array_files_with_a_bom_or_repeated_subgroup_names(tmp_path, capsys):
    """A spreadsheet's CSV starts with a byte-order mark: it is not part of the first cell; a
    subgroup file naming one column twice is refused (duplicates in sets are errors, #18)."""
    spec = {"tree": {"root": "r", "children": {"r": ["a", "b"]}}, "labels": ["a", "b"],
            "utilities": {"u": {"kind": "top_k", "k": 1}}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    (tmp_path / "p.csv").write_bytes("\ufeff0.25,0.75\n0.5,0.5\n".encode())
    (tmp_path / "y.csv").write_text("1\n0\n")
    assert formats.read_array(tmp_path / "p.csv", "predictions").tolist() == [[0.25, 0.75], [0.5, 0.5]]
    (tmp_path / "g.csv").write_text("g,g\n1,0\n0,1\n")
    args = ["audit", "--predictions", str(tmp_path / "p.csv"), "--labels", str(tmp_path / "y.csv"),
            "--tree", str(tmp_path / "spec.json"), "--engine", "fast"]
    assert main(args) == 0
    capsys.readouterr()
    assert main(args + ["--subgroups", str(tmp_path / "g.csv")]) == 2
    assert capsys.readouterr().err == "huc: error: --subgroups[1]: 'g' is listed twice\n"  # (column 1 of the file)


def _two_groups(tmp_path, K: int, n: int, seed: int):
    """A spec of ``K`` labels c0.. in two groups (top-1 at depth 2) in ``tmp_path/spec.json``, ``n``
    Dirichlet rows and labels (``y.npy``): ``(labels, P, y)``."""
    import numpy as np
    rng = np.random.default_rng(seed)
    labels = [f"c{k}" for k in range(K)]
    spec = {"tree": {"root": "r", "children": {"r": ["lo", "hi"], "lo": labels[:K // 2], "hi": labels[K // 2:]}},
            "labels": labels, "utilities": {"top1": {"kind": "top1_at_depth", "depth": 2}}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    P = rng.dirichlet(np.ones(K), size=n)
    y = rng.integers(0, K, size=n)
    np.save(tmp_path / "y.npy", y)
    return labels, P, y


def test_a_predictions_header_in_another_order_is_read_by_name(tmp_path, capsys):
    """A predictions CSV whose header names the labels in another order than the tree's (scikit-learn's
    sorted ``classes_``: c0, c1, c10, c11, c2, ...) is read by name, for ``huc audit``, ``huc fit`` and
    ``huc apply``: the same audit, model and recalibration as the file in the tree's order (such a
    header was refused, though it says which column is which).  A header of other names (p0, p1,
    ...) names no label: the file's order is stated as a headerless file's is.  ``huc apply`` writes
    the columns in the input's order under a header naming them, and reads its own output back."""
    import numpy as np
    labels, P, y = _two_groups(tmp_path, 12, 40, seed=2)
    order = [labels.index(name) for name in sorted(labels)]  # the sorted file's column k is label order[k]
    np.savetxt(tmp_path / "tree.csv", P, delimiter=",", header=",".join(labels), comments="")
    np.savetxt(tmp_path / "sorted.csv", P[:, order], delimiter=",", header=",".join(sorted(labels)), comments="")
    np.savetxt(tmp_path / "generic.csv", P[:, order], delimiter=",", header=",".join(f"p{k}" for k in range(12)),
               comments="")
    d = str(tmp_path)

    def audit(name, *extra):
        code = main(["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/{name}.csv", "--labels", f"{d}/y.npy",
                     "--json", *extra])
        out = capsys.readouterr().out
        return code, {k: v for k, v in json.loads(out).items() if k not in ("case", "message")}
    _, first = audit("tree")
    assert first["arithmetic"] == "float64" and audit("sorted") == (0, first)
    code, refused = audit("generic")
    assert code == 2 and refused["kind"] == "labels"
    assert audit("generic", "--columns", ",".join(sorted(labels))) == (0, first)
    models = []
    for name in ("tree", "sorted"):
        assert main(["fit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/{name}.csv", "--labels", f"{d}/y.npy",
                     "--val-predictions", f"{d}/{name}.csv", "--val-labels", f"{d}/y.npy", "--max-passes", "2",
                     "-o", f"{d}/{name}.json"]) == 0
        models.append(json.loads((tmp_path / f"{name}.json").read_text())["rules"])
    assert models[0] == models[1] and models[0]
    for name in ("tree", "sorted"):
        assert main(["apply", f"{d}/tree.json", f"{d}/{name}.csv", "-o", f"{d}/{name}_out.csv"]) == 0
    out = {name: (tmp_path / f"{name}_out.csv").read_text().split("\n", 1) for name in ("tree", "sorted")}
    assert out["tree"][0] == ",".join(labels) and out["sorted"][0] == ",".join(sorted(labels))
    recalibrated = np.loadtxt(tmp_path / "tree_out.csv", delimiter=",", skiprows=1)
    assert np.array_equal(np.loadtxt(tmp_path / "sorted_out.csv", delimiter=",", skiprows=1), recalibrated[:, order])
    assert main(["apply", f"{d}/tree.json", f"{d}/sorted_out.csv", "-o", f"{d}/again.npy"]) == 0  # its own header
    assert main(["apply", f"{d}/tree.json", f"{d}/tree_out.csv", "-o", f"{d}/again_tree.npy"]) == 0
    assert np.array_equal(np.load(tmp_path / "again.npy"), np.load(tmp_path / "again_tree.npy")[:, order])
    capsys.readouterr()


def test_pandas_index_column_is_dropped(tmp_path, capsys):
    """``pd.DataFrame(P, columns=labels).to_csv(path)`` writes its index first, under an empty
    name: that column was read as a label's ("column 0 is '', the tree's label 0 'c0'"), and a
    labels file so written had two columns ("y_true: has (30, 2) labels"). A CSV's first column with
    no name (or pandas' "Unnamed: 0") is dropped, in predictions, labels and subgroups files: the
    same audit and the same recalibration as the files without it. A first column named otherwise is
    a column."""
    import numpy as np
    labels, P, _ = _two_groups(tmp_path, 6, 30, seed=4)
    indexed = np.column_stack([np.arange(30), P])
    np.savetxt(tmp_path / "plain.csv", P, delimiter=",", header=",".join(labels), comments="")
    for name, first in (("index", ""), ("unnamed", "Unnamed: 0"), ("other", "id")):
        np.savetxt(tmp_path / f"{name}.csv", indexed, delimiter=",", header=",".join([first] + labels), comments="")
    d = str(tmp_path)

    def audit(name):
        code = main(["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/{name}.csv", "--labels",
                     f"{d}/y.npy", "--engine", "fast", "--json"])
        return code, capsys.readouterr()

    def result(name):  # (the document less the case's name, the file's)
        return {k: v for k, v in json.loads(audit(name)[1].out).items() if k != "case"}
    assert result("index") == result("unnamed") == result("plain")
    code, (out, err) = audit("other")
    assert code == 2 and "('id' is not a label)" in err
    y = np.load(f"{d}/y.npy")  # the labels and subgroups as pandas writes them too: index first
    (tmp_path / "y.csv").write_text(",label\n" + "".join(f"{i},{labels[k]}\n" for i, k in enumerate(y)))
    (tmp_path / "g.csv").write_text(",all,odd\n" + "".join(f"{i},1,{i % 2}\n" for i in range(30)))
    (tmp_path / "g_plain.csv").write_text("all,odd\n" + "".join(f"1,{i % 2}\n" for i in range(30)))
    (tmp_path / "g_bool.csv").write_text(",all,odd\n" + "".join(f"{i},True,{bool(i % 2)}\n" for i in range(30)))

    def fit_audit(predictions, labels_file, groups):
        code = main(["audit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/{predictions}", "--labels",
                     f"{d}/{labels_file}", "--subgroups", f"{d}/{groups}", "--engine", "fast", "--json"])
        assert code == 0
        return {k: v for k, v in json.loads(capsys.readouterr().out).items() if k != "case"}
    assert fit_audit("index.csv", "y.csv", "g.csv") == fit_audit("plain.csv", "y.npy", "g_plain.csv") == \
        fit_audit("plain.csv", "y.npy", "g_bool.csv")  # (pandas writes a boolean column as True/False)
    assert main(["fit", "--tree", f"{d}/spec.json", "--predictions", f"{d}/plain.csv", "--labels", f"{d}/y.npy",
                 "--max-passes", "2", "-o", f"{d}/m.json"]) == 0
    for name in ("plain", "index"):
        assert main(["apply", f"{d}/m.json", f"{d}/{name}.csv", "-o", f"{d}/{name}_out.npy"]) == 0
    assert np.array_equal(np.load(f"{d}/plain_out.npy"), np.load(f"{d}/index_out.npy"))
    capsys.readouterr()


def test_a_parquet_files_column_names_are_read_like_a_header(tmp_path, capsys):
    """Parquet columns named by labels (pandas writes a DataFrame's columns) are read by name as a
    CSV header is: the tree's order and another give the same audit (the other was refused)."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    P, y = _array_files(tmp_path)
    for name, order in (("good", ["y1", "y2", "y3", "y4"]), ("other", ["y2", "y1", "y4", "y3"])):
        pq.write_table(pa.table({label: P[:120, int(label[1]) - 1] for label in order}), tmp_path / f"{name}.parquet")
    d = str(tmp_path)
    args = ["audit", "--tree", f"{d}/spec.json", "--labels", f"{d}/cal_y.npy", "--json", "--predictions"]
    results = []
    for name in ("good", "other"):
        assert main(args + [f"{d}/{name}.parquet"]) == 0
        results.append({k: v for k, v in json.loads(capsys.readouterr().out).items() if k != "case"})
    assert results[0] == results[1] and results[0]["huc"]["value"] > 0


@settings(max_examples=100)
@given(st.lists(st.tuples(st.sampled_from([None, "v0", "a b"]), st.floats(0, 1), st.sampled_from([None, (0.25, 0.5)]),
                          st.one_of(st.floats(-1, 1), st.fractions())), max_size=6),
       st.sampled_from([None, "all"]), st.sampled_from([None, "u"]))
def test_rows_of_a_table_are_the_rows_the_constructor_makes(rows, subgroup, utility):
    """``Candidate.of_table`` (the fast audit's rows, fields written at once) gives exactly the
    frozen dataclass's own rows: equal, the same hash, repr and JSON, and frozen."""
    import dataclasses

    from huc_ref.results import Candidate
    made = Candidate.of_table(subgroup, utility, *(zip(*rows) if rows else ([],) * 4))
    want = [Candidate(subgroup, utility, *row) for row in rows]
    assert made == want and [type(c) for c in made] == [Candidate] * len(rows)
    for a, b in zip(made, want):
        assert hash(a) == hash(b) and repr(a) == repr(b) and a.to_json() == b.to_json()
        assert dataclasses.astuple(a) == dataclasses.astuple(b)
        with pytest.raises(dataclasses.FrozenInstanceError):
            a.sup = 0.0
