"""Hostile inputs against the command line, each in its own process under a memory limit and a
timeout: every one ends with the correct answer or one escaped line on stderr, never a
traceback, a hang, a raw control character or a file outside the output folder."""

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from huc_ref.cli import main

ROOT = Path(__file__).resolve().parents[1]
D1 = json.loads((ROOT / "examples" / "cases" / "four_leaf_cancellation.json").read_text())
MEMORY = 2 * 2**30  # bytes of address space a hostile run may take


def _limits():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def huc(*args, cwd, stdin=None):
    return subprocess.run([sys.executable, "-m", "huc_ref", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=60, preexec_fn=_limits, stdin=stdin,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def case(**changes):
    doc = json.loads(json.dumps(D1))
    for key, value in changes.items():  # atoms__0__p is doc["atoms"][0]["p"]
        *path, last = [int(part) if part.isdigit() else part for part in key.split("__")]
        node = doc
        for part in path:
            node = node[part]
        node[last] = value
    return doc


ATTACKS = {  # name: (document or raw text, the start of the one error line)
    "escape sequence in the id": (case(id="x\x1b[2J\nUC = 0"),
                                  "huc: error: id: 'x\\x1b[2J\\nUC = 0' is not a name"),
    "lone surrogate in the id": ('{"format": "huc-case/1", "id": "\\ud800"}',
                                 "huc: error: id: '\\ud800' is not a name"),
    "unicode digits": (case(atoms__0__p=["١/٤", "1/4", "1/4", "1/4"]), "huc: error: atoms[0].p[0]: '١/٤' is not an "
                                                                        "exact number"),
    "a huge exponent": (case(atoms__0__p=["1e999999999", "0", "0", "0"]), "huc: error: atoms[0].p[0]: exponent of"),
    "a 10 MB label": (case(atoms__0__label="z" * 10_000_000), "huc: error: atoms[0]: give exactly one of eta"),
    "an order that is a string": (case(utilities={"u": {"kind": "decision", "actions": {"a": [0, 0, 0, 1]},
                                                        "order": "a"}}), "huc: error: utilities.u.order: expected a "
                                                                         "list of action names, got 'a'"),
    "duplicates in S": (case(utilities={"u": {"kind": "aggregated", "S": ["v0", "v0"],
                                              "base": {"kind": "table", "values": [0, 0, 0, 1]}}}),
                        "huc: error: utilities.u.S[1]: 'v0' is listed twice"),
    "not JSON": ("\x00\xff{", "huc: error: not valid JSON"),
    "an escape sequence in a utility name": (case(utilities={"u\x1b[2J": {"kind": "table", "values": [0, 0, 0, 1]}}),
                                             "huc: error: utilities: 'u\\x1b[2J' is not a name"),
    "a label law that is an object": (case(atoms__0__eta={"y1": 1}), "huc: error: atoms[0].eta: expected a list of "
                                                                     "numbers, got dict"),
    "a subgroup 'all' that is not everyone": (case(atoms__0__c=["1/2"]), "huc: error: atoms[0].c[0]: is 1/2, but "
                                                                         "'all' names the whole population"),
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_a_hostile_case_gets_one_escaped_line(name, tmp_path):
    source, error = ATTACKS[name]
    path = tmp_path / "case.json"
    path.write_text(source if isinstance(source, str) else json.dumps(source), errors="surrogatepass")
    proc = huc("audit", path, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr[:300]
    assert proc.stderr.startswith(error) and proc.stderr.count("\n") == 1 and len(proc.stderr) < 700, proc.stderr[:300]
    assert all(ch.isprintable() for ch in proc.stderr[:-1]) and "Traceback" not in proc.stderr


def test_dev_zero_a_pipe_and_a_directory_are_refused_at_once(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in ("/dev/zero", fifo, tmp_path):
        proc = huc("audit", path, cwd=tmp_path)
        assert proc.returncode == 2 and "not a regular file" in proc.stderr and proc.stderr.count("\n") == 1


def test_vectors_write_nothing_outside_their_folder_and_bad_answers_fail_alone(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    doc = json.loads((ROOT / "huc_ref" / "data" / "vectors" / "paper.json").read_text())
    doc["vectors"][0]["id"] = "../pwned"
    (src / "paper.json").write_text(json.dumps(doc))
    out = tmp_path / "out"
    proc = huc("vectors", "export", out, "--vectors", src, cwd=tmp_path)
    assert proc.returncode == 2 and not (tmp_path / "pwned.json").exists()
    answers = tmp_path / "answers"
    assert huc("vectors", "answer", answers, cwd=tmp_path).returncode == 0
    first = json.loads((answers / "paper-d4-common-cell.json").read_text())
    first["uc"]["value"] = "1e999999999"  # would stall a reader that builds the number
    (answers / "paper-d4-common-cell.json").write_text(json.dumps(first))
    (answers / "paper-d1-cancellation.json").unlink()
    (answers / "paper-d1-cancellation.json").symlink_to("/")
    proc = huc("vectors", "check", answers, cwd=tmp_path)
    from huc_ref.vectors import load_vectors
    assert proc.returncode == 1 and proc.stdout.splitlines()[-1] == f"{len(load_vectors()) - 2} passed, 2 failed"
    assert "FAIL paper-d4-common-cell: uc.value: exponent of '1e999999999' exceeds 400 in magnitude" in proc.stdout


def test_boost_options_and_closed_output(tmp_path):
    path = tmp_path / "case.json"
    path.write_text(json.dumps(D1))
    proc = huc("boost", path, "--step", "fixed:1e400", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.startswith("huc: error: --step: a fixed step magnitude must be at most")
    assert proc.stderr.count("\n") == 1 and len(proc.stderr) < 400
    proc = subprocess.run(f"{sys.executable} -m huc_ref audit {path} > /dev/full", shell=True, capture_output=True,
                          text=True, cwd=tmp_path, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2 and proc.stderr == "huc: error: cannot write the output: No space left on device\n"


# ---------------------------------------------------------------- the practitioner's surfaces, in process

SPEC = {"tree": {"root": "v0", "children": {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]}},
        "labels": ["y1", "y2", "y3", "y4"], "utilities": {"t": {"kind": "table", "values": [-1, 1, 1, 1]},
                                                        "top1": {"kind": "top1_at_depth", "depth": 1}}}


def _sample(tmp_path, n: int = 120, seed: int = 0):
    """A miscalibrated sample of ``n`` rows on App. D.1's tree as array files (p.npy, y.npy,
    spec.json) and a subgroups file whose column ``all`` is a mask (about half the rows)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, 4))
    P = np.exp(2 * logits) / np.exp(2 * logits).sum(axis=1, keepdims=True)  # overconfident
    truth = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(4, p=row) for row in truth])
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", y)
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    mask = P[:, 0] > 0.3
    (tmp_path / "all.csv").write_text("all\n" + "\n".join(str(int(v)) for v in mask) + "\n")
    return P, y, mask


def _run(capsys, *args):
    """``huc`` in this process: its exit status, stdout and stderr (stderr of a refusal is one line)."""
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if status == 2:
        assert err.startswith("huc: error: ") and err.count("\n") == 1, err
    return status, out, err


def test_a_subgroup_named_all_is_the_whole_population_or_refused(tmp_path, capsys):
    """A column named ``all`` in a subgroups file replaced the whole population: the report said
    ``all`` for the audit of a subgroup (HUC of the masked rows shown as the population's).  The
    name is the whole population's (K.1's ``c = 1``): a column of that name that is not 1 on every
    row is refused, naming its first other row, on the command line and in every library entry
    point; a column of ones is the whole population, given explicitly, and audits as without it."""
    import numpy as np

    from huc_ref import FiniteDistribution, HUCError, fast
    from huc_ref.calibration import HUCBoost
    from huc_ref.fast.sample import Sample
    from huc_ref.formats import read_model_spec
    P, y, mask = _sample(tmp_path)
    first = int(np.argmin(mask))  # the first row outside the mask
    arrays = ["--tree", tmp_path / "spec.json", "--predictions", tmp_path / "p.npy", "--labels", tmp_path / "y.npy"]
    rule = ("is 0.0, but 'all' names the whole population (c = 1 on every row, K.1's c = 1; audits and fits "
            "report it under this name); give this subgroup another name")
    for engine in ("fast", "exact"):
        status, out, err = _run(capsys, "audit", *arrays, "--engine", engine, "--subgroups", tmp_path / "all.csv")
        assert status == 2 and out == "" and err == f"huc: error: --subgroups['all'][{first}]: {rule}\n"
    status, _, err = _run(capsys, "fit", *arrays, "--subgroups", tmp_path / "all.csv", "-o", tmp_path / "m.json")
    assert status == 2 and err == f"huc: error: --subgroups['all'][{first}]: {rule}\n"
    assert not (tmp_path / "m.json").exists()
    (tmp_path / "ones.csv").write_text("all\n" + "1\n" * len(P))
    status, out, _ = _run(capsys, "audit", *arrays, "--engine", "fast", "--json", "--subgroups", tmp_path / "ones.csv")
    assert status == 0 and _run(capsys, "audit", *arrays, "--engine", "fast", "--json")[1] == out
    tree, us = read_model_spec(tmp_path / "spec.json")
    calls = {
        "fast.audit": (lambda: fast.audit(y, P, tree, us, subgroups={"all": mask}), f"subgroups['all'][{first}]"),
        "from_floats": (lambda: FiniteDistribution.from_floats(tree, y.tolist(), P, subgroups={"all": mask}),
                        f"atoms[{first}].c[0]"),
        "fit": (lambda: HUCBoost(tree, us).fit(P, y, subgroups={"all": mask}), f"subgroups['all'][{first}]"),
        "Sample": (lambda: Sample(tree, P, y, ["g", "all"], np.column_stack([mask, mask]).astype(float)),
                   f"C[{first}, 1]"),
    }
    for name, (call, place) in calls.items():
        with pytest.raises(HUCError) as e:
            call()
        assert str(e.value).startswith(f"{place}: is 0") and "give this subgroup another name" in str(e.value), name
    model = HUCBoost(tree, us, max_passes=2).fit(P, y, subgroups={"g": mask})
    with pytest.raises(HUCError, match=rf"^subgroups\['all'\]\[{first}\]: is 0\.0, but 'all' names"):
        model.predict_proba(P, subgroups={"g": mask, "all": mask})
    ones = fast.audit(y, P, tree, us, subgroups={"all": np.ones(len(P)), "g": mask})
    assert [(r.utility, r.node, r.sup) for r in ones.candidates if r.subgroup == "all"] == \
        [(r.utility, r.node, r.sup) for r in fast.audit(y, P, tree, us).candidates]
    assert _run(capsys, "fit", *arrays, "--max-passes", "2", "-o", tmp_path / "m.json")[0] == 0
    status, _, err = _run(capsys, "apply", tmp_path / "m.json", tmp_path / "p.npy", "--subgroups",
                          tmp_path / "all.csv", "-o", tmp_path / "q.npy")
    assert status == 2 and err == f"huc: error: --subgroups['all'][{first}]: {rule}\n"
    assert not (tmp_path / "q.npy").exists()


def _binary(tmp_path, n: int):
    """``n`` rows of two labels as array files (b.npy, by.npy, binary.json)."""
    import numpy as np
    tmp_path.mkdir(exist_ok=True)
    rng = np.random.default_rng(n)
    p = rng.uniform(0.1, 0.9, n)
    np.save(tmp_path / "b.npy", np.column_stack([1 - p, p]))
    np.save(tmp_path / "by.npy", (rng.uniform(size=n) < p).astype(int))
    spec = {"tree": {"root": "r", "children": {"r": ["no", "yes"]}}, "labels": ["no", "yes"],
            "utilities": {"u": {"kind": "table", "values": [0, 1]}}}
    (tmp_path / "binary.json").write_text(json.dumps(spec))
    return ["--tree", tmp_path / "binary.json", "--predictions", tmp_path / "b.npy", "--labels", tmp_path / "by.npy"]


def test_the_cost_of_null_is_bounded_by_work_and_max_null_work_lifts_it(tmp_path, capsys):
    """``--null exact`` on 19 binary rows is 2**19 assignments, under the old cap of 10**6, yet
    about 9 minutes of exact audits: it is refused at once as work (2**19 x (19 + 64) x (2 + 2):
    a flat tree's V_T(u) = {r}), naming --max-null-work with the value that runs it.  On 6 rows
    that value runs it and one less refuses it; --max-null-work without --null is refused."""
    arrays = _binary(tmp_path, 6)
    work = 2**6 * (6 + 64) * (2 * 1 + 2)
    exact = ("--engine", "exact")  # (the exact engine's audits: 64 atoms of work each beside the n rows)
    status, _, err = _run(capsys, "audit", *arrays, *exact, "--null", "exact", "--max-null-work", work - 1)
    assert status == 2 and f"give --max-null-work {work} to run it anyway" in err
    status, out, _ = _run(capsys, "audit", *arrays, *exact, "--null", "exact", "--max-null-work", work, "--json")
    assert status == 0 and json.loads(out)["significance"]["draws"] == 2**6
    status, _, err = _run(capsys, "audit", *arrays, "--max-null-work", work)
    assert status == 2 and err == "huc: error: --max-null-work: applies to --null (the budget of its draws)\n"
    # (timed after a first run: the commands import their modules when first run)
    big = _binary(tmp_path / "big", 19)
    started = time.monotonic()
    status, out, err = _run(capsys, "audit", *big, *exact, "--null", "exact")
    assert time.monotonic() - started < 1.0 and status == 2 and out == ""
    work = 2**19 * (19 + 64) * (2 * 1 + 2)
    assert err == (f"huc: error: --null exact: enumerates 2**19 = 524288 label assignments, each an audit: about "
                   f"{work:.2g} units of work (draws x (n + 64) (K |U| + rows), n = 19, K = 2, |U| = 1, rows = 2), "
                   f"more than the exact engine's budget of 5000000; give --max-null-work {work} to run it anyway, "
                   "or --null B (B resampled draws)\n")
    for command in (["audit", *arrays], ["fit", *arrays, "-o", tmp_path / "m.json"]):
        status, _, err = _run(capsys, *command, "--null", "1000000", "--engine", "fast")
        assert status == 2 and "more than the fast engine's budget of 4000000000; give --max-null-work" in err
        assert "huc fit: boosting" not in err


@pytest.mark.parametrize("option, value, message", [
    ("--null", "9" * 5000, "--null: expected at most 1000000 draws, got a number of 5000 digits"),
    ("--null", "0" * 5000, "--null: expected a positive integer (at most 1000000) or 'exact', got 0"),
    ("--seed", "9" * 5000, "argument --seed: expected an integer of at most 64 digits, got one of 5000 digits"),
    ("--top", "9" * 5000, "argument --top: expected an integer of at most 64 digits, got one of 5000 digits"),
    ("--max-digits", "9" * 4301, "argument --max-digits: expected an integer of at most 64 digits, got one of 4301 "
                                 "digits"),
    ("--max-null-work", "9" * 5000, "argument --max-null-work: expected an integer of at most 64 digits, got one of "
                                    "5000 digits"),
    ("--seed", "1e3", "argument --seed: expected an integer, got '1e3'"),
    ("--seed", "-1", "--seed: expected a non-negative integer, got -1"),
])
def test_integer_options_past_cpythons_digit_limit_are_one_error(tmp_path, capsys, option, value, message):
    """``int`` of more than 4,300 digits raises ValueError (CPython's limit on integer text):
    ``--null`` with such a number was a traceback, the other integer options a message quoting
    the whole number; each is now one line saying what is accepted (the library still names a
    negative seed)."""
    arrays = _binary(tmp_path, 6)
    extra = ["--null", "9"] if option in ("--seed", "--max-null-work") else []
    status, out, err = _run(capsys, "audit", *arrays, *extra, option, value)
    assert status == 2 and err == f"huc: error: {message}\n" and len(err) < 200


def test_verify_jobs_is_read_as_huc_reads_integers(capsys):
    """``huc verify --jobs`` was handed to the checker's own parser as text: a bad value printed its
    usage and an error (two lines), a 5,000-digit one passed CPython's digit limit."""
    for value, message in (("x", "argument --jobs: expected a whole number of processes, at least 1; got 'x'"),
                           ("0", "argument --jobs: expected a whole number of processes, at least 1; got '0'"),
                           ("9" * 5000, "argument --jobs: expected an integer of at most 64 digits, got one of "
                                        "5000 digits")):
        status, _, err = _run(capsys, "verify", "--jobs", value)
        assert status == 2 and err == f"huc: error: {message}\n"


HOSTILE_LABELS = ["=cmd|' /C calc'!A0", "a,b", 'say "hi"', " padded ", "-1", "+1", "@SUM(A1)", "'quoted",
                  "'=already", "Maine Coon", "ü"]


def test_huc_apply_writes_a_csv_it_reads_back_with_hostile_labels(tmp_path, capsys):
    """``huc apply -o X.csv`` wrote its header unquoted (``",".join(labels)``): a label with a
    comma or a quote made a file ``huc apply`` could not read back, and a label beginning with
    ``=``, ``+``, ``-`` or ``@`` a live spreadsheet formula.  The csv module writes it now, each
    such label after an apostrophe (no header cell opens a formula), and the file reads back as
    the same labels and the same floats, bit for bit; ``-o X.NPY`` writes X.NPY (numpy.save added
    ``.npy`` to it while the report named X.NPY)."""
    import csv

    import numpy as np
    K = len(HOSTILE_LABELS)
    labels = sorted(HOSTILE_LABELS)  # (classes_' order: a headerless file is read in it)
    spec = {"tree": {"root": "r", "children": {"r": labels}}, "labels": labels,
            "utilities": {"u": {"kind": "top_k", "k": 1}}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(K), 60)
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", np.array([rng.choice(K, p=p) for p in P]))
    assert _run(capsys, "fit", "--tree", tmp_path / "spec.json", "--predictions", tmp_path / "p.npy", "--labels",
                tmp_path / "y.npy", "--max-passes", "2", "-o", tmp_path / "m.json")[0] == 0
    status, _, err = _run(capsys, "apply", tmp_path / "m.json", tmp_path / "p.npy", "-o", tmp_path / "X.NPY")
    assert status == 0 and err.endswith(f"wrote {tmp_path / 'X.NPY'}\n")
    assert sorted(p.name for p in tmp_path.glob("X*")) == ["X.NPY"]
    Q = np.load(tmp_path / "X.NPY")
    assert _run(capsys, "apply", tmp_path / "m.json", tmp_path / "p.npy", "-o", tmp_path / "q.csv")[0] == 0
    with open(tmp_path / "q.csv", newline="", encoding="utf-8") as f:
        header, *rows = list(csv.reader(f))
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in header)
    cells = dict(zip(labels, header))  # (the header in the file's column order, classes_' order)
    assert cells["=cmd|' /C calc'!A0"] == "'=cmd|' /C calc'!A0" and cells["-1"] == "'-1"
    assert cells[" padded "] == " padded "
    assert np.array_equal(np.array(rows, dtype=float), Q)  # every float's text reads back as it
    from huc_ref.formats import read_columns
    again, names = read_columns(tmp_path / "q.csv", "predictions", numbers=True, header_names=set(HOSTILE_LABELS))
    assert names == labels and np.array_equal(again, Q)
    status, _, _ = _run(capsys, "apply", tmp_path / "m.json", tmp_path / "q.csv", "-o", tmp_path / "r.csv")
    assert status == 0  # huc apply reads what it writes


def test_outputs_are_checked_before_the_work_and_paths_printed_escaped(tmp_path, capsys, monkeypatch):
    """``huc fit`` printed its banner, then refused a bad option (two lines on stderr), and found
    an output it could not write (a folder, a path under /proc) only after the whole fit; ``huc
    demo --plot`` and ``huc vectors export`` printed the path they were given raw (an escape
    sequence in it reached the terminal)."""
    import huc_ref.calibration as calibration
    _sample(tmp_path)
    arrays = ["--tree", tmp_path / "spec.json", "--predictions", tmp_path / "p.npy", "--labels", tmp_path / "y.npy"]
    for options, message in ((["--epsilon", "2"], "--epsilon: must be in (0, 1], got 2"),
                             (["--max-passes", "0"], "--max-passes: must be a positive integer, got 0"),
                             (["--null", "9", "--seed", "-1"], "--seed: expected a non-negative integer, got -1")):
        status, _, err = _run(capsys, "fit", *arrays, *options, "-o", tmp_path / "m.json")
        assert status == 2 and err == f"huc: error: {message}\n"

    def never(*args, **kwargs):
        raise AssertionError("fitted before the output was checked")
    monkeypatch.setattr(calibration.HUCBoost, "fit", never)
    (tmp_path / "folder").mkdir()
    for target, reason in ((tmp_path / "folder", "it is a folder; give the path of a file in it"),
                           (Path("/proc/model.json"), "No such file or directory")):
        status, _, err = _run(capsys, "fit", *arrays, "-o", target)
        assert status == 2 and err == f"huc: error: -o: cannot write {str(target)!r}: {reason}\n"
    assert not Path("/proc/model.json").exists() and list((tmp_path / "folder").iterdir()) == []
    monkeypatch.undo()
    hostile = tmp_path / "d1\x1b[2J.png"
    status, out, _ = _run(capsys, "demo", "--plot", hostile)
    assert status == 0 and hostile.exists() and "\x1b" not in out and "figure: " in out and "d1\\x1b[2J.png" in out
    status, out, _ = _run(capsys, "vectors", "export", tmp_path / "cases\x1b[2J")
    assert status == 0 and "\x1b" not in out and "cases\\x1b[2J" in out


def test_an_npy_header_claiming_terabytes_is_one_error(tmp_path):
    """A 128-byte ``.npy`` whose header declares a (10**9, 400) float64 array (2.9 TiB): numpy
    allocated its claim (a MemoryError traceback, or the allocation itself without a memory
    limit); the header is now checked against the bytes the file holds before anything is
    allocated, and a truncated file is refused the same way, in a process with 2 GiB of memory."""
    import numpy as np
    with open(tmp_path / "huge.npy", "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": (10**9, 400)})
    np.save(tmp_path / "y.npy", np.zeros(3, dtype=int))
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    proc = huc("audit", "--tree", "spec.json", "--predictions", "huge.npy", "--labels", "y.npy", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr == (
        "huc: error: --predictions: 'huge.npy': its header declares an array of shape (1000000000, 400) of float64, "
        "3200000000000 bytes, but the file holds 0 bytes after the header; the file is truncated or not written by "
        "numpy.save\n")
    np.save(tmp_path / "p.npy", np.full((3, 4), 0.25))
    (tmp_path / "cut.npy").write_bytes((tmp_path / "p.npy").read_bytes()[:-8])
    proc = huc("audit", "--tree", "spec.json", "--predictions", "cut.npy", "--labels", "y.npy", cwd=tmp_path)
    assert proc.returncode == 2 and "declares an array of shape (3, 4) of float64, 96 bytes, but the file holds 88 " \
                                   "bytes after the header" in proc.stderr and proc.stderr.count("\n") == 1


def test_parquet_columns_of_other_types_are_one_error_naming_the_column(tmp_path, capsys):
    """Parquet columns of decimals (a TypeError from the audit's arithmetic), timestamps beside
    numbers (numpy's DTypePromotionError), text beside numbers, lists or missing values are each
    one error naming the column and what to write instead."""
    import datetime
    import decimal

    import numpy as np
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    _sample(tmp_path, n=3)
    quarter = [0.25] * 3
    files = {
        "decimal": ({"y1": pa.array([decimal.Decimal("0.25")] * 3, pa.decimal128(5, 2)), "y2": quarter, "y3": quarter,
                     "y4": quarter}, "column 'y1' is of type decimal128(5, 2), not numbers or text; write it as "
                                     "float64 (predictions), or as integers or strings (labels)"),
        "timestamp": ({"y1": quarter, "y2": quarter, "y3": quarter, "y4": [datetime.datetime(2020, 1, 1)] * 3},
                      "column 'y4' is of type timestamp[us], not numbers or text"),
        "text": ({"y1": quarter, "y2": ["a"] * 3, "y3": quarter, "y4": quarter},
                 "column 'y2' holds text and column 'y1' numbers; a file holds one or the other"),
        "missing": ({"y1": [0.25, None, 0.25], "y2": quarter, "y3": quarter, "y4": quarter},
                    "column 'y1' has a missing value at row 1"),
        "lists": ({"y1": [[0.25]] * 3, "y2": quarter, "y3": quarter, "y4": quarter},
                  "column 'y1' is of type list<element: double>, not numbers or text"),
    }
    for name, (columns, message) in files.items():
        pq.write_table(pa.table(columns), tmp_path / f"{name}.parquet")
        status, _, err = _run(capsys, "audit", "--tree", tmp_path / "spec.json", "--predictions",
                              tmp_path / f"{name}.parquet", "--labels", tmp_path / "y.npy")
        assert status == 2 and err.startswith(f"huc: error: --predictions: '{name}.parquet': {message}"), name
    pq.write_table(pa.table({"y": pa.array(["y1", "y3", "y1"]).dictionary_encode()}), tmp_path / "category.parquet")
    status, out, _ = _run(capsys, "audit", "--tree", tmp_path / "spec.json", "--predictions", tmp_path / "p.npy",
                          "--labels", tmp_path / "category.parquet", "--engine", "fast", "--json")
    np.save(tmp_path / "names.npy", np.array(["y1", "y3", "y1"]))
    assert status == 0 and out == _run(capsys, "audit", "--tree", tmp_path / "spec.json", "--predictions",
                                       tmp_path / "p.npy", "--labels", tmp_path / "names.npy", "--engine", "fast",
                                       "--json")[1]


@pytest.mark.parametrize("suffix", [".npy", ".csv", ".parquet"])
def test_one_row_inputs_audit_fit_and_apply_in_every_format(tmp_path, capsys, suffix):
    """One row of predictions and one label, in each array format: a one-row Parquet file was
    squeezed to a vector (predictions: "expected an n x 4 array, got shape (4,)"; labels: an
    array of shape ()); each now audits as its .npy does, and huc fit and apply take it."""
    import numpy as np
    if suffix == ".parquet":
        pa = pytest.importorskip("pyarrow")
        import pyarrow.parquet as pq
    P, y, _ = _sample(tmp_path, n=1)
    if suffix == ".csv":
        (tmp_path / "p1.csv").write_text("y1,y2,y3,y4\n" + ",".join(repr(float(x)) for x in P[0]) + "\n")
        (tmp_path / "y1.csv").write_text(f"y{y[0] + 1}\n")
    elif suffix == ".parquet":
        pq.write_table(pa.table({f"y{k + 1}": P[:, k] for k in range(4)}), tmp_path / "p1.parquet")
        pq.write_table(pa.table({"label": [f"y{y[0] + 1}"]}), tmp_path / "y1.parquet")
    else:
        np.save(tmp_path / "p1.npy", P)
        np.save(tmp_path / "y1.npy", y)
    arrays = ["--tree", tmp_path / "spec.json", "--predictions", tmp_path / f"p1{suffix}", "--labels",
              tmp_path / f"y1{suffix}"]
    reference = ["--tree", tmp_path / "spec.json", "--predictions", tmp_path / "p.npy", "--labels", tmp_path / "y.npy"]
    for engine in ("fast", "exact"):
        status, out, err = _run(capsys, "audit", *arrays, "--engine", engine, "--json")
        assert status == 0, err
        assert json.loads(out)["huc"] == json.loads(_run(capsys, "audit", *reference, "--engine", engine,
                                                          "--json")[1])["huc"]
    assert _run(capsys, "fit", *arrays, "--max-passes", "1", "--no-validation", "-o", tmp_path / "m.json")[0] == 0
    assert _run(capsys, "apply", tmp_path / "m.json", tmp_path / f"p1{suffix}", "-o", tmp_path / "q.npy")[0] == 0
    assert np.load(tmp_path / "q.npy").shape == (1, 4)


def test_a_model_file_with_an_integer_past_float64_is_one_error(tmp_path, capsys):
    """A huc-model/1 file whose initial scaling holds the JSON integer 10**400 (found by
    tests/test_fuzz.py): converting it to float64 raised OverflowError out of ``huc apply``; it is
    now refused with the scaling's own bound, as 1e300 is."""
    _sample(tmp_path)
    arrays = ["--tree", tmp_path / "spec.json", "--predictions", tmp_path / "p.npy", "--labels", tmp_path / "y.npy"]
    assert _run(capsys, "fit", *arrays, "--initial", "temperature", "--max-passes", "1", "-o",
                tmp_path / "m.json")[0] == 0
    doc = json.loads((tmp_path / "m.json").read_text())
    doc["initial"]["W"][0][0] = 10**400
    (tmp_path / "m.json").write_text(json.dumps(doc))
    status, _, err = _run(capsys, "apply", tmp_path / "m.json", tmp_path / "p.npy", "-o", tmp_path / "q.npy")
    assert status == 2 and err == "huc: error: initial.W: entries must be at most 1e+300 in magnitude\n"
    assert not (tmp_path / "q.npy").exists()
