"""The project's own fuzzer of the command line: seeded and bounded, over the files a
practitioner hands ``huc`` (model files, array files of predictions, labels and subgroups) and
over combinations of its options.

Each case runs ``huc`` in this process (:func:`huc_ref.cli.main`) and holds it to the contract
of docs/specification.md §6: exit status 2 with exactly one ``huc: error:`` line on stderr (no
traceback, nothing on stdout but a ``huc-error/1`` document where ``--json`` asks for one, no
output file), or exit status 0 with a valid result: a ``huc-result/1`` or ``huc-boost/1``
document, a report of printable lines, a model ``load_model`` reads, or recalibrated rows that
are probabilities (finite, nonnegative, summing to 1).  An exception escaping ``main`` fails the
case.

Each test runs :data:`CASES` cases (``HUC_FUZZ_CASES`` raises it; ``HUC_FUZZ_SEED`` changes the
seed); case ``k`` draws from ``random.Random(f"{SEED}-{test}-{k}")``, so a failing case is named by
its number and replays alone (``HUC_FUZZ_ONLY=k``).  The inputs are small (at most 6 rows, 5 labels) and the options
drawn from bounded sets, so every case ends in well under a second.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from huc_ref.cli import main

#: The array files' formats: Parquet where pyarrow (the ``parquet`` extra) is installed.
try:
    import pyarrow  # noqa: F401
    ARRAY_SUFFIXES = [".npy", ".csv", ".parquet"]
except ImportError:
    ARRAY_SUFFIXES = [".npy", ".csv"]

CASES = int(os.environ.get("HUC_FUZZ_CASES", "100"))
SEED = int(os.environ.get("HUC_FUZZ_SEED", "2026"))
ONLY = os.environ.get("HUC_FUZZ_ONLY")  # one case's number: that case alone, to replay it


def _cases(block: int, blocks: int):
    """The case numbers of one block of a fuzzer (or :data:`ONLY`)."""
    if ONLY is not None:
        return [int(ONLY)] if block == 0 else []
    return range(block * CASES // blocks, (block + 1) * CASES // blocks)

#: Names a practitioner's data can carry: formulas, separators, quotes, spaces, digits, escapes.
NAMES = ["=cmd|' /C calc'!A0", "a,b", 'say "hi"', " padded ", "-1", "+1", "@x", "'q", "0", "1", "all",
         "Maine Coon", "ü", "x\x1b[2J", "\u2028", "", "$x$", "a" * 300]

#: Integer option values: valid, out of range, past CPython's 4,300-digit limit, not integers.
INTEGERS = ["0", "1", "2", "3", "-1", "9" * 5000, "9" * 70, "1e3", "", "٣", "0x10", "007", " 2"]

#: Exact-number option values (epsilon, smoothing, steps).
NUMBERS = ["1/100", "0.05", "0", "1", "2", "-1/2", "nan", "inf", "1e-400", "1e400", "1/0", "9" * 5000, "x", "",
           "1/3", "0.001"]


def _contract(status: int, out: str, err: str, argv) -> None:
    """The common part of the contract: a status of 0 or 2; on 2, one ``huc: error:`` line."""
    shown = [a if len(a) < 200 else a[:40] + "..." for a in map(str, argv)]
    assert status in (0, 2), (status, shown, err[-500:])
    assert "Traceback" not in err, (shown, err[-2000:])
    if status == 2:
        assert err.startswith("huc: error: ") and err.count("\n") == 1, (shown, err[:500])
        assert all(ch.isprintable() for ch in err[:-1]), (shown, err[:300])
        if out:  # only the huc-error/1 document of --json
            assert "--json" in argv and json.loads(out)["format"] == "huc-error/1", (shown, out[:300])


def _run(capsys, argv):
    """``huc argv`` in this process: status, stdout, stderr; an exception escaping main fails."""
    argv = [str(a) for a in argv]
    try:
        status = main(argv)
    except BaseException as exc:  # noqa: BLE001 (any escape breaks the contract, SystemExit included)
        pytest.fail(f"{type(exc).__name__} escaped huc {argv[:12]}: {str(exc)[:300]}")
    out, err = capsys.readouterr()
    _contract(status, out, err, argv)
    return status, out, err


def _rows_are_probabilities(path: Path, n: int, K: int) -> None:
    """``huc apply``'s output: ``n`` rows of ``K`` finite nonnegative entries summing to 1."""
    if path.suffix.lower() == ".npy":
        Q = np.load(path)
    else:
        from huc_ref.formats import read_columns
        Q = read_columns(path, "output", numbers=True)[0].reshape(-1, K)
    assert Q.shape == (n, K) and np.isfinite(Q).all() and (Q >= 0).all(), Q
    assert np.allclose(Q.sum(axis=1), 1.0, atol=1e-9), Q.sum(axis=1)


def _valid_result(out: str, argv) -> None:
    """``huc audit``'s output: a huc-result/1 document with finite sups in [0, 2], or a report."""
    if "--json" in argv:
        doc = json.loads(out)
        assert doc["format"] == "huc-result/1"
        for row in doc["candidates"]:  # (exact: "a/b" text; fast: JSON numbers)
            sup = float(Fraction(row["sup"])) if isinstance(row["sup"], str) else row["sup"]
            assert math.isfinite(sup) and 0 <= sup <= 2, row
    else:
        assert out.startswith("case ") and all(line.isprintable() for line in out.splitlines()), out[:300]


# ---------------------------------------------------------------- inputs


def _tree_spec(rng: random.Random, digits: bool = True) -> dict:
    """A flat or two-level tree of 2-5 labels (hostile names now and then; without labels named
    "0" and "1" unless ``digits``) and one or two utilities."""
    K = rng.randint(2, 5)
    pool = NAMES if digits else [name for name in NAMES if name not in ("0", "1")]
    names = rng.sample(pool, K) if rng.random() < 0.3 else [f"y{k}" for k in range(K)]
    if len(set(names)) < K:
        names = [f"y{k}" for k in range(K)]
    if K >= 4 and rng.random() < 0.5:
        children = {"root": ["left", "right"], "left": names[:2], "right": names[2:]}
    else:
        children = {"root": names}
    utilities = {"u": {"kind": "table", "values": [rng.choice(["-1", "0", "1/2", "1"]) for _ in names]}}
    if rng.random() < 0.5:
        utilities["top"] = {"kind": "top_k", "k": rng.randint(1, K)}
    return {"tree": {"root": "root", "children": children}, "labels": names, "utilities": utilities}


def _predictions(rng: random.Random, n: int, K: int) -> np.ndarray:
    """``n`` rows of ``K`` probabilities, mutated now and then (a zero, a subnormal, NaN, a wrong sum...)."""
    P = np.random.default_rng(rng.randrange(2**32)).dirichlet(np.ones(K), n)
    if rng.random() < 0.4:
        i, j = rng.randrange(n), rng.randrange(K)
        P[i, j] = rng.choice([0.0, -0.1, math.nan, math.inf, 1e-310, 1e308, 2.0, 0.5])
    if rng.random() < 0.1:
        P = P * 1.1
    return P


def _labels(rng: random.Random, n: int, names) -> np.ndarray:
    """``n`` labels as ids or names, mutated now and then (out of range, unknown, a float)."""
    y = np.array([rng.randrange(len(names)) for _ in range(n)])
    if rng.random() < 0.4:
        y = np.array([names[k] for k in y])
    if rng.random() < 0.2:
        y = y.astype(object)
        y[rng.randrange(n)] = rng.choice([len(names), -1, "nope", 0.5, True])
        y = np.array(y.tolist())
    return y


def _table(array: np.ndarray) -> np.ndarray:
    """``array`` as rows and columns (a vector is one column, one entry a 1 x 1 table)."""
    if array.ndim == 0:
        return array.reshape(1, 1)
    return array.reshape(array.shape[0], math.prod(array.shape[1:]))


def _write_array(rng: random.Random, array: np.ndarray, path: Path, names=None) -> Path:
    """``array`` as a .npy, .csv or .parquet file (``path`` without its suffix), its dtype, shape
    and bytes mutated now and then (a header that lies, a truncation, flipped bytes, a header row
    of other names, ragged or quoted cells)."""
    suffix = rng.choice(ARRAY_SUFFIXES)
    target = path.with_suffix(suffix)
    if rng.random() < 0.15:  # dtype and shape
        change = rng.choice([lambda a: a.astype(np.float32), lambda a: a.astype(str), lambda a: a[..., None],
                             lambda a: a[:0], lambda a: a.ravel()[:1].reshape(()), lambda a: a.T,
                             lambda a: a.astype(np.float16), lambda a: np.asarray(a, dtype=complex)])
        try:
            with np.errstate(over="ignore"):  # (float16 of 1e308: inf, as the file then holds)
                array = change(array)
        except ValueError:  # (text that is not a number: kept as text)
            pass
    if suffix == ".npy":
        np.save(target, array)
    elif suffix == ".csv":
        lines = []
        if names is not None and rng.random() < 0.7:
            header = list(names)
            if rng.random() < 0.2:
                rng.shuffle(header)
            if rng.random() < 0.1:
                header = [rng.choice(NAMES) for _ in header]
            import csv
            import io
            buffer = io.StringIO()
            csv.writer(buffer, lineterminator="").writerow(header)
            lines.append(buffer.getvalue())
        rows = _table(array)
        lines += [",".join(repr(x.item()) if hasattr(x, "item") and not isinstance(x, str) else str(x) for x in row)
                  for row in rows]
        text = "\n".join(lines) + "\n"
        if rng.random() < 0.1:
            text = rng.choice(["\ufeff" + text, text.replace(",", ";"), text + "1,2\n", '"' + text, text * 2, ""])
        target.write_text(text, encoding="utf-8", errors="surrogatepass")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq
        columns = _table(array)
        heads = list(names) if names is not None and len(names) == columns.shape[1] else \
            [f"c{k}" for k in range(columns.shape[1])]
        if len(set(heads)) < len(heads) or "" in heads:
            heads = [f"c{k}" for k in range(columns.shape[1])]
        try:
            table = pa.table({h: columns[:, k].tolist() for k, h in enumerate(heads)})
        except (pa.ArrowException, ValueError, TypeError):
            table = pa.table({"c0": [str(x) for x in columns[:, 0].tolist()]})
        if rng.random() < 0.2 and table.num_rows:  # a column of another type: decimals, times, a missing value...
            import datetime
            import decimal
            k = rng.randrange(table.num_columns)
            other = rng.choice([
                pa.array([decimal.Decimal("0.25")] * table.num_rows, pa.decimal128(5, 2)),
                pa.array([datetime.datetime(2020, 1, 1)] * table.num_rows),
                pa.array([None] + [0.25] * (table.num_rows - 1), pa.float64()),
                pa.array([[0.25]] * table.num_rows), pa.array([True] * table.num_rows),
                pa.array(["y0"] * table.num_rows).dictionary_encode(), pa.array([b"x"] * table.num_rows)])
            table = table.set_column(k, table.column_names[k], other)
        pq.write_table(table, target)
    if rng.random() < 0.08:  # the bytes themselves
        data = bytearray(target.read_bytes())
        if data and rng.random() < 0.5:
            del data[rng.randrange(len(data)):]
        for _ in range(rng.randint(1, 4)):
            if data:
                data[rng.randrange(len(data))] = rng.randrange(256)
        target.write_bytes(bytes(data))
    if suffix == ".npy" and rng.random() < 0.15:  # a header that claims a huge array
        with open(target, "wb") as f:
            np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False,
                                                     "shape": (10**9, rng.choice([1, 400]))})
    return target


def _subgroups(rng: random.Random, n: int, path: Path) -> Path:
    """A subgroups CSV: one or two columns of 0/1, True/False or numbers, named now and then hostilely."""
    columns = rng.randint(1, 2)
    names = [rng.choice(["g", "all", "dark"] + NAMES) for _ in range(columns)]
    values = [[rng.choice(["0", "1", "True", "False", "0.5", "-1", "2", "nan", ""]) if rng.random() < 0.1
               else rng.choice(["0", "1"]) for _ in range(columns)] for _ in range(n + (rng.random() < 0.1))]
    import csv
    with open(path, "w", newline="", encoding="utf-8", errors="surrogatepass") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(names)
        writer.writerows(values)
    return path


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """One model fitted on D.1's tree with two subgroups and a temperature scaling (its file and
    the arrays it applies to), for the model-file cases."""
    folder = tmp_path_factory.mktemp("fitted")
    spec = {"tree": {"root": "v0", "children": {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]}},
            "labels": ["y1", "y2", "y3", "y4"], "utilities": {"t": {"kind": "table", "values": [-1, 1, 1, 1]},
                                                            "top1": {"kind": "top1_at_depth", "depth": 1}}}
    (folder / "spec.json").write_text(json.dumps(spec))
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(80, 4))
    P = np.exp(2 * logits) / np.exp(2 * logits).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(4, p=np.exp(r) / np.exp(r).sum()) for r in logits])
    np.save(folder / "p.npy", P)
    np.save(folder / "y.npy", y)
    (folder / "g.csv").write_text("dark\n" + "\n".join(str(int(v)) for v in P[:, 0] > 0.3) + "\n")
    assert main(["fit", "--tree", str(folder / "spec.json"), "--predictions", str(folder / "p.npy"), "--labels",
                 str(folder / "y.npy"), "--subgroups", str(folder / "g.csv"), "--initial", "temperature",
                 "--max-passes", "3", "-o", str(folder / "model.json")]) == 0
    return folder


# ---------------------------------------------------------------- the three fuzzers


def _json_values(rng: random.Random):
    return rng.choice([None, True, False, 0, -1, 1, 2.5, 1e308, -1e308, 10**400, "", "x", "all", "v0", "y1",
                       [], {}, [0], [[1, 2]], {"kind": "table"}, "NaN", 5e-324, "huc", [None] * 3])


def _mutate(rng: random.Random, doc):
    """``doc`` with one to three random edits: a value replaced, a key deleted, an item duplicated."""
    for _ in range(rng.randint(1, 3)):
        paths, stack = [], [((), doc)]
        while stack:
            path, node = stack.pop()
            paths.append(path)
            items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
            stack.extend((path + (k,), v) for k, v in items)
        path = rng.choice([p for p in paths if p] or [()])
        if not path:
            return doc
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        roll = rng.random()
        if roll < 0.2 and isinstance(parent, dict):
            del parent[path[-1]]
        elif roll < 0.3 and isinstance(parent, list):
            parent.append(json.loads(json.dumps(parent[path[-1]])))
        else:
            parent[path[-1]] = _json_values(rng)
    return doc


@pytest.mark.parametrize("block", range(2))
def test_huc_apply_on_fuzzed_model_files(fitted, tmp_path, capsys, block):
    """Model files (huc-model/1) mutated by value, key and item, or as bytes: ``huc apply`` refuses
    each bad one in one line, or writes rows of probabilities."""
    base = json.loads((fitted / "model.json").read_text())
    P = np.load(fitted / "p.npy")[:6]
    np.save(tmp_path / "p.npy", P)
    (tmp_path / "g.csv").write_text("dark\n" + "\n".join(str(int(v)) for v in P[:, 0] > 0.3) + "\n")
    for case in _cases(block, 2):
        rng = random.Random(f"{SEED}-model-{case}")
        path = tmp_path / f"model{case}.json"
        if rng.random() < 0.8:
            path.write_text(json.dumps(_mutate(rng, json.loads(json.dumps(base)))))
        else:
            data = bytearray(json.dumps(base).encode())
            for _ in range(rng.randint(1, 3)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            path.write_bytes(bytes(data))
        target = tmp_path / f"out{case}{rng.choice(['.npy', '.csv'])}"
        argv = ["apply", path, tmp_path / "p.npy", "-o", target]
        if rng.random() < 0.7:
            argv += ["--subgroups", tmp_path / "g.csv"]
        status, _, _ = _run(capsys, argv)
        if status == 0:
            _rows_are_probabilities(target, len(P), 4)
        else:
            assert not target.exists(), (case, "an output was written by a refused command")


@pytest.mark.parametrize("block", range(2))
def test_audit_fit_and_apply_on_fuzzed_array_files(fitted, tmp_path, capsys, block):
    """Predictions, labels and subgroups files in the three formats, mutated in their values,
    dtypes, shapes, headers and bytes, on trees with hostile label names: ``huc audit`` (either
    engine), ``huc fit`` and ``huc apply`` refuse in one line or give a valid result."""
    for case in _cases(block, 2):
        rng = random.Random(f"{SEED}-arrays-{case}")
        folder = tmp_path / f"c{case}"
        folder.mkdir()
        command = rng.choice(["audit", "audit", "fit", "apply"])
        if command == "apply":
            spec = json.loads((fitted / "spec.json").read_text())
        else:
            spec = _tree_spec(rng)
        (folder / "spec.json").write_text(json.dumps(spec))
        names, K, n = spec["labels"], len(spec["labels"]), rng.randint(1, 6)
        P = _predictions(rng, n, K)
        predictions = _write_array(rng, P, folder / "p", names)
        if command == "apply":
            target = folder / f"q{rng.choice(['.npy', '.csv'])}"
            argv = ["apply", fitted / "model.json", predictions, "-o", target]
            if rng.random() < 0.8:
                argv += ["--subgroups", _subgroups(rng, n, folder / "g.csv")]
            status, _, _ = _run(capsys, argv)
            if status == 0:
                _rows_are_probabilities(target, n, K)
            continue
        labels = _write_array(rng, _labels(rng, n, names), folder / "y")
        argv = [command, "--tree", folder / "spec.json", "--predictions", predictions, "--labels", labels]
        if rng.random() < 0.3:
            argv += ["--subgroups", _subgroups(rng, n, folder / "g.csv")]
        if command == "audit":
            argv += rng.choice([[], ["--engine", "fast"], ["--json"], ["--engine", "fast", "--json"]])
            if rng.random() < 0.2:
                argv += ["--null", rng.choice(["5", "exact"]) if n <= 4 else "5"]
            if rng.random() < 0.1:
                argv += ["--renormalize"]
            status, out, _ = _run(capsys, argv)
            if status == 0:
                _valid_result(out, argv)
        else:
            model = folder / "m.json"
            status, _, err = _run(capsys, argv + ["--max-passes", "2", "-o", model])
            if status == 0:
                from huc_ref.calibration import load_model
                assert load_model(model).tree.labels == tuple(names) and err.startswith("huc fit: ")
            else:
                assert not model.exists()


def _option_values(rng: random.Random, option: str):
    if option in ("--seed", "--top", "--max-digits", "--max-updates", "--max-passes", "--digits", "--max-null-work"):
        return rng.choice(INTEGERS)
    if option in ("--epsilon", "--smooth"):
        return rng.choice(NUMBERS)
    if option == "--step":
        return rng.choice(["adaptive", "fixed:1/20", "fixed:0", "fixed:1e400", "fixed:", "x", "fixed:-1"])
    if option == "--null":
        return rng.choice(["1", "5", "exact", "0", "-3", "9" * 5000, "0" * 5000 + "3", "abc", "1000000", "1000001",
                           ""])
    if option == "--engine":
        return rng.choice(["exact", "fast", "gpu"])
    if option == "--select":
        return rng.choice(["greedy", "passes", "drain", "x"])
    if option == "--method":
        return rng.choice(["huc", "uc", "x"])
    if option == "--initial":
        return rng.choice(["none", "temperature", "vector", "dirichlet", "x"])
    if option == "--arithmetic":
        return rng.choice(["certified", "float", "x"])
    return None  # a flag


OPTIONS = {
    "audit": ["--seed", "--top", "--max-digits", "--smooth", "--null", "--engine", "--json", "--renormalize",
              "--max-null-work"],
    "boost": ["--epsilon", "--step", "--select", "--max-passes", "--digits", "--arithmetic", "--engine", "--method",
              "--json", "--top"],  # (--max-updates: at most 20, so that a fuzzed epsilon ends soon)
    "fit": ["--epsilon", "--select", "--max-passes", "--initial", "--engine", "--method", "--null", "--seed",
            "--max-null-work"],
    "demo": [],
}


def test_option_combinations_keep_the_contract(fitted, tmp_path, capsys):
    """Each command with up to four of its options, each valid, out of range, of the wrong form or
    past CPython's digit limit, on a small case, array files or the demo; hostile output paths."""
    case_file = Path(__file__).resolve().parents[1] / "examples" / "cases" / "four_leaf_cancellation.json"
    arrays = ["--tree", fitted / "spec.json", "--predictions", tmp_path / "p.npy", "--labels", tmp_path / "y.npy"]
    np.save(tmp_path / "p.npy", np.load(fitted / "p.npy")[:4])
    np.save(tmp_path / "y.npy", np.load(fitted / "y.npy")[:4])
    for case in _cases(0, 1):
        rng = random.Random(f"{SEED}-options-{case}")
        command = rng.choice(["audit", "audit", "boost", "fit", "demo"])
        argv = [command]
        if command == "audit":
            argv += [case_file] if rng.random() < 0.5 else arrays
        elif command == "boost":
            argv += [case_file, "--max-updates", str(rng.randint(0, 20))]
        elif command == "fit":
            argv += [*arrays, "-o", rng.choice([tmp_path / f"m{case}.json", tmp_path, tmp_path / "no" / "m.json",
                                                tmp_path / "m\x1b[2J.json"])]
        else:
            argv += rng.choice([[], ["--p", "1/2,1/6,1/6,1/6"], ["--eta", rng.choice(NUMBERS)],
                                ["--utility=" + ",".join(rng.choice(["-1", "1", "0", "2", "x"]) for _ in range(4))],
                                ["--plot", tmp_path / rng.choice(["d.png", "d.txt", "no/d.png", "d\x1b[2J.svg"])]])
        for option in rng.sample(OPTIONS[command], min(len(OPTIONS[command]), rng.randint(0, 4))):
            value = _option_values(rng, option)
            argv += [option] if value is None else [option, value]
        if command == "boost" and "--engine" not in argv:
            argv += ["--engine", "fast"]  # (the certified engine on a fuzzed epsilon can take seconds)
        status, out, err = _run(capsys, argv)
        if status == 0 and command == "audit":
            _valid_result(out, argv)
        elif status == 0 and command == "boost" and "--json" in argv:
            assert json.loads(out)["format"] == "huc-boost/1"
        elif status == 0 and command == "fit":
            banner = re.match(r"huc fit: boosting on (\d+) rows \(\w+, \w+(?:; (\d+) more held out to choose the "
                              r"prefix)?\)\.\.\.", err)  # (held-out rows are said apart: they are not boosted on)
            assert banner and int(banner.group(1)) + int(banner.group(2) or 0) == 4, err[:200]
        elif status == 0:
            assert out and all(line.isprintable() for line in out.splitlines())
