"""Hostile inputs against the command line, each in its own process under a memory limit and a
timeout: every one ends with the correct answer or one escaped line on stderr, never a
traceback, a hang, a raw control character or a file outside the output folder."""

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

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
