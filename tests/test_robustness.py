"""Robustness catalogue: fuzzed case documents either give an answer or one HUCError;
results are deterministic; input is never evaluated; deep trees work end to end.
(The catalogue of specific bad inputs is ``huc_ref/data/vectors/invalid.json``, run in test_vectors.py.)"""

import json
import random
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from huc_ref.errors import HUCError
from huc_ref.formats import dumps, read_case
from huc_ref.vectors import load_vectors

ROOT = Path(__file__).resolve().parents[1]
BASES = [v["case"] for v in load_vectors() if "case" in v and v["id"] in
         ("paper-d1-cancellation", "edge-family-per-atom", "edge-family-aggregated", "gen-007", "gen-042")]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12) | st.sampled_from(["1/2", "0.5", "-1", "1/0", "NaN", "y1", "v0", "vL", "table"]),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12)


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


def _answer_or_huc_error(source):
    try:
        case = read_case(source)
        case.result_json()
    except HUCError:
        pass  # the one allowed failure


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(BASES))), st.data())
def test_mutated_documents_answer_or_raise_huc_error(k, data):
    doc = json.loads(json.dumps(BASES[k]))
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        path = data.draw(st.sampled_from(paths))
        target = doc
        for key in path[:-1]:
            target = target[key]
        if data.draw(st.booleans()) and isinstance(target, dict):
            del target[path[-1]]
        else:
            target[path[-1]] = data.draw(json_values)
        if not paths:
            break
    _answer_or_huc_error(doc)


@settings(max_examples=200)
@given(st.sampled_from(range(len(BASES))), st.lists(st.tuples(st.integers(0, 10**6), st.binary(max_size=3)),
                                                    min_size=1, max_size=4))
def test_corrupted_text_answers_or_raises_huc_error(k, edits):
    text = json.dumps(BASES[k]).encode()
    for pos, junk in edits:
        pos %= len(text)
        text = text[:pos] + junk + text[pos + 1:]
    _answer_or_huc_error(text)


def test_same_case_gives_byte_identical_json_and_is_invariant_to_atom_order():
    rng = random.Random(1)
    for v in load_vectors():
        if "case" not in v:
            continue
        first = dumps(read_case(v["case"]).result_json())
        assert first == dumps(read_case(json.loads(json.dumps(v["case"]))).result_json())
        doc = json.loads(json.dumps(v["case"]))
        order = list(range(len(doc["atoms"])))
        rng.shuffle(order)
        doc["atoms"] = [doc["atoms"][i] for i in order]
        for spec in doc["utilities"].values():
            while spec is not None:
                if spec["kind"] == "per_atom":
                    spec["values"] = [spec["values"][i] for i in order]
                spec = spec.get("base")
        assert dumps(read_case(doc).result_json()) == first, v["id"]


def test_input_is_never_evaluated():
    """No eval/exec/sympify/parse_expr anywhere in the library; a code string is just bad input."""
    pattern = re.compile(r"\b(eval|exec|sympify|parse_expr|S)\(")
    for path in (ROOT / "huc_ref").glob("*.py"):
        assert not pattern.search(path.read_text()), path.name
    doc = json.loads(json.dumps(BASES[0]))
    doc["atoms"][0]["p"][0] = "__import__('os').system('echo pwned')"
    try:
        read_case(doc)
    except HUCError as err:
        assert "is not an exact number" in str(err)
    else:
        raise AssertionError("a code string was accepted as a number")


def test_deep_trees_and_long_label_paths_end_to_end():
    depth = 20_000
    children = {f"n{i}": [f"n{i + 1}"] for i in range(depth)}
    children[f"n{depth}"] = ["a", "b"]
    children["root"] = ["n0", "c"]
    doc = {"format": "huc-case/1", "tree": {"root": "root", "children": children}, "labels": ["a", "b", "c"],
           "utilities": {"u": {"kind": "table", "values": [1, -1, 0]}},
           "atoms": [{"p": ["1/4", "1/4", "1/2"], "label": "a"}, {"p": ["1/3", "1/3", "1/3"], "label": "c"}]}
    result = read_case(doc).result_json()
    assert result["relevant_nodes"]["u"] == ["root", f"n{depth}"]
    # By hand: both atoms score mu_u = 0 (one block).  Atom a: u(a) - 0 = 1, and its only
    # nonzero node term is at n{depth}: mu_a - mu_{n{depth}} = 1 - 0.  Atom c: every term 0.
    # Weights 1/2: UC = HUC = 1/2, the HUC witness at n{depth}.
    assert (result["uc"]["value"], result["huc"]["value"], result["huc"]["node"]) == ("1/2", "1/2", f"n{depth}")


def _four_leaf():
    from huc_ref import LabelTree
    return LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})


@pytest.mark.parametrize("utilities, message", [
    ({}, "utilities: expected a non-empty mapping from name to utility"),
    ([], "utilities: expected a non-empty mapping from name to utility"),
    ({"": "table"}, "utilities: names must be non-empty strings, got ''"),
    ({"u": 3}, "utilities['u']: expected a Utility, got int"),
    ({"u": "other tree"}, "utilities['u']: is bound to a different label tree (its values follow that tree's nodes "
                          "and label order); build it on the tree given here, e.g. after LabelTree.with_labels"),
    ({"u": "per_atom"}, "utilities['u'].values: has 2 rows, but there are 1 atoms"),
])
def test_every_engine_rejects_bad_utilities_with_the_same_message(utilities, message):
    """One checker (audit.check_utilities) serves the exact audit, both boosts and the fast path."""
    import numpy as np

    from huc_ref import FiniteDistribution, LabelTree, PerAtom, Table, audit
    from huc_ref.boost import boost
    from huc_ref.errors import HUCError
    from huc_ref.fast import audit as fast_audit
    from huc_ref.fast import audit_distribution
    from huc_ref.fast import boost as fast_boost
    t = _four_leaf()
    other = LabelTree.from_children("v0", {"v0": ["y1", "y2", "y3"]})
    made = {"table": Table(t, [0, 1, 0, 1]), "other tree": Table(other, [0, 1, 0]),
            "per_atom": PerAtom(t, [[0, 1, 0, 1], [1, 0, 1, 0]])}
    if isinstance(utilities, dict):
        utilities = {k: made.get(v, v) for k, v in utilities.items()}
    d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "label": "y1"}])
    runs = [lambda: audit(d, utilities), lambda: audit_distribution(d, utilities).to_json(),
            lambda: fast_audit(["y1"], np.full((1, 4), 0.25), t, utilities).to_json(),
            lambda: boost(d, utilities), lambda: fast_boost(d, utilities).to_json()]
    for run in runs:
        with pytest.raises(HUCError) as err:
            run()
        assert str(err.value) == message


def _hostile_api_calls():
    from huc_ref import Aggregated, FiniteDistribution, LabelTree, Table, TopK, audit, fast
    from huc_ref.boost import boost
    from huc_ref.formats import utility_from_json
    t = LabelTree.from_children("r", {"r": ["a", "b"]})
    d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "a"}])
    nested = {"kind": "table", "values": [0, 1]}
    for _ in range(5000):
        nested = {"kind": "aggregated", "base": nested, "S": ["r"]}
    P = np.array([[0.5, 0.5]])
    return [
        (lambda: fast.audit(None, P, t, {"u": TopK(t, 1)}).to_json(),
         "y_true: expected one label (a name or an id) per row of y_prob, got NoneType"),
        (lambda: fast.audit([0], P, {"r": ["a", "b"]}, {"u": TopK(t, 1)}).to_json(),
         "tree: expected a LabelTree (LabelTree.from_children, .from_paths or .from_nested), got dict"),
        (lambda: audit({"r": 1}, {"u": TopK(t, 1)}),
         "dist: expected a FiniteDistribution (FiniteDistribution(tree, atoms) or .from_sample), got dict"),
        (lambda: boost(d, {"u": Table(t, [0, 1])}, step="1e400"),
         "step: a fixed step magnitude must be at most 100 (exp(alpha h) with |h| <= 2 overflows beyond), got 1000"),
        (lambda: Aggregated(Table(t, [0, 1]), ["r", "r"]), "S[1]: 'r' is listed twice"),
        (lambda: utility_from_json(t, nested, "utilities.u"), "utilities.u.base"),
    ]


@pytest.mark.parametrize("k", range(6))
def test_hostile_api_calls_get_one_huc_error(k):
    call, message = _hostile_api_calls()[k]
    with pytest.raises(HUCError) as err:
        call()
    assert str(err.value).startswith(message), str(err.value)[:200]


@pytest.mark.parametrize("engine", ["numpy", "numba"])
def test_fast_rows_must_sum_to_one_unless_renormalised(engine):
    from huc_ref import LabelTree, TopK, fast
    if engine == "numba" and not fast.numba_available():
        pytest.skip("numba is not installed")
    t = LabelTree.from_children("r", {"r": ["a", "b", "c", "d"]})
    us = {"u": TopK(t, 1)}
    for row, total in (([0.9] * 4, "3.6"), ([0.5] * 4, "2.0")):
        with pytest.raises(HUCError, match=rf"^y_prob\[1\]: sums to {total}, not 1 \(within 1e-05\); pass "
                                           r"renormalize=True to take each row divided by its sum$"):
            fast.audit([0, 1], np.array([[0.25] * 4, row]), t, us, accelerator=engine).to_json()
    scaled = fast.audit([0, 1], np.array([[0.25] * 4, [0.9] * 4]), t, us, accelerator=engine, renormalize=True)
    same = fast.audit([0, 1], np.array([[0.25] * 4] * 2), t, us, accelerator=engine)
    assert scaled.candidates == same.candidates  # 0.9 each is 1/4 each
    # (the two rows' equal float scores, of different rows, were found one exact tie; the same rows need no look)
    assert (scaled.near_ties.decided_groups, scaled.near_ties.decided_rows, same.near_ties) == (1, 2, None)


def test_the_exact_engine_states_its_cost_limit(tmp_path, capsys):
    """1,000 atoms with 1,999-digit denominators: refused at once (it would take minutes), unless asked."""
    from fractions import Fraction

    from huc_ref import FiniteDistribution, LabelTree, TopK, audit
    from huc_ref.cli import main
    t = LabelTree.from_children("r", {"r": ["a", "b", "c", "d"]})
    rng = random.Random(0)
    atoms = []
    for _ in range(1000):
        den = rng.randrange(10**1998, 10**1999)
        p = [Fraction(rng.randrange(1, den // 4), den) for _ in range(3)]
        atoms.append({"p": p + [1 - sum(p)], "label": "a"})
    d = FiniteDistribution(t, atoms)
    with pytest.raises(HUCError, match=r"^atoms: the exact inputs hold about \d+ digits, more than max_digits = "
                                       r"10000000 \(the exact audit's cost grows with them\); pass max_digits=N for "
                                       r"a larger limit, or arithmetic='float64'$") as err:
        audit(d, {"u": TopK(t, 1)})
    assert err.value.kind == "too_large"
    small = FiniteDistribution(t, atoms[:3])
    assert audit(small, {"u": TopK(t, 1)}, max_digits=10**5) == audit(small, {"u": TopK(t, 1)})
    with pytest.raises(HUCError, match="more than max_digits = 100 "):
        audit(small, {"u": TopK(t, 1)}, max_digits=100)
    path = tmp_path / "case.json"
    path.write_text(json.dumps({"format": "huc-case/1", "tree": {"root": "r", "children": {"r": ["a", "b"]}},
                                "labels": ["a", "b"], "utilities": {"u": {"kind": "table", "values": [0, 1]}},
                                "atoms": [{"p": ["1/3", "2/3"], "label": "a"}]}))
    assert main(["audit", str(path), "--max-digits", "2"]) == 2
    err = capsys.readouterr().err
    assert "more than --max-digits = 2 " in err and err.endswith("; give --max-digits N for a larger limit, or "
                                                                  "--arithmetic float64\n")
    assert main(["audit", str(path), "--max-digits", "100"]) == 0
    assert main(["audit", str(path), "--arithmetic", "float64"]) == 0


@pytest.mark.parametrize("accelerator", ["numpy"] + (["numba"] if __import__("huc_ref").fast.numba_available() else []))
def test_a_caterpillar_of_depth_20000_audits_on_the_fast_path_in_memory_linear_in_the_tree(accelerator):
    """Hostile input (the issue's caterpillar): a depth-by-labels table would hold 400 million
    entries (3.2 GB); the fast path keeps only arrays of the tree's size, walks the paths up the
    parent pointers, and agrees with the exact engine."""
    import tracemalloc
    from fractions import Fraction

    from huc_ref import FiniteDistribution, LabelTree, TopK, audit, fast
    n = 20000
    kids = {f"c{i}": [f"c{i + 1}", f"l{i}"] for i in range(n)}
    kids[f"c{n}"] = ["x", "y"]
    t = LabelTree.from_children("c0", kids)
    t = t.with_labels(t.labels)  # (the arrays' columns are in its order)
    ft = fast.FastTree(t)
    assert ft.path_rows is None
    assert max(a.size for a in vars(ft).values() if isinstance(a, np.ndarray)) <= ft.n_nodes
    K = t.K
    rows = [[Fraction(1, K)] * K, [Fraction(2, 3 * (K - 1))] * (K - 1) + [Fraction(1, 3)]]
    labels = [t.labels[5], t.labels[-1]]
    exact = audit(FiniteDistribution.from_sample(t, labels, rows), {"u": TopK(t, 1)})
    P = np.array([[float(x) for x in row] for row in rows])
    tracemalloc.start()
    try:
        got = fast.audit(labels, P, t, {"u": TopK(t, 1)}, accelerator=accelerator)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2**20, peak  # about 25 MiB measured; the table alone would be 3.2 GB
    assert got.huc.node == exact.huc.node == "c0"
    assert abs(got.huc.sup - float(exact.huc.sup)) < 1e-12 and abs(got.uc.sup - float(exact.uc.sup)) < 1e-12


def test_every_raise_site_names_its_kind():
    """#18 item 5: every HUCError raised in huc_ref passes ``kind=`` (one of ERROR_KINDS), rather
    than leaving the kind to be read from the message's wording."""
    import ast
    from pathlib import Path

    from huc_ref.errors import ERROR_KINDS
    root = Path(__file__).resolve().parents[1] / "huc_ref"
    missing, unknown, sites = [], [], 0
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "HUCError":
                sites += 1
                kind = next((k.value for k in node.keywords if k.arg == "kind"), None)
                where = f"{path.relative_to(root)}:{node.lineno}"
                if kind is None:
                    missing.append(where)
                elif isinstance(kind, ast.Constant) and kind.value not in ERROR_KINDS:
                    unknown.append((where, kind.value))
    assert sites > 200 and not missing and not unknown, (missing, unknown)


@pytest.mark.parametrize("change, kind, message", [
    (dict(y_prob=[["0.2", "0.3", "0.5"]] * 2), "type", "y_prob: expected numbers, got text"),
    (dict(y_prob=np.array([[True, False, False], [False, False, True]])), "type",
     "y_prob: expected numbers, got an array of dtype bool"),
    (dict(sample_weight=["1", "2"]), "type", "sample_weight: expected numbers, got text"),
    (dict(sample_weight=[np.nan, 1]), "float_range", "sample_weight[0]: nan is not a finite nonnegative number"),
    (dict(subgroups={"g\x1b[2J": [1, 1]}), "type", "subgroups: 'g\\x1b[2J' is not a name"),
    (dict(subgroups={3: [1, 1]}), "type", "subgroups: must be a non-empty string, got 3"),
    (dict(subgroups={"g": [2, 1]}), "range", "subgroups['g'][0]: 2.0 is not a number in [-1, 1]"),
    (dict(y_prob=[[np.nan, 0.5, 0.5], [0.6, 0.3, 0.1]]), "float_range", "y_prob[0]: entries must be finite"),
    (dict(accelerator="gpu"), "option", "accelerator: expected 'numpy' or 'numba', got 'gpu'"),
])
def test_the_fast_audit_reads_numbers_and_names_strictly(change, kind, message):
    """#18 items 1 and 6 on the fast path: text, booleans and bad names are refused, each with its kind."""
    from huc_ref import LabelTree, TopK, fast
    t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    args = dict(y_true=[0, 2], y_prob=np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]))
    args.update(change)
    with pytest.raises(HUCError) as err:
        fast.audit(args.pop("y_true"), args.pop("y_prob"), t, {"u": TopK(t, 1)}, **args)
    assert str(err.value).startswith(message) and err.value.kind == kind


def test_a_certified_boost_on_a_caterpillar_of_depth_1000_is_linear_in_the_tree():
    """The issue's resource bomb: 41 s for 3 certified updates on a depth-1,000 caterpillar (every
    prediction multiplied each label's whole path: depth x labels).  The factors are now carried
    down the tree once per node; the run agrees with the fast backend's."""
    from fractions import Fraction

    from huc_ref import FiniteDistribution, LabelTree, TopK, boost
    n = 1000
    kids = {f"c{i}": [f"c{i + 1}", f"l{i}"] for i in range(n)}
    kids[f"c{n}"] = ["x", "y"]
    t = LabelTree.from_children("c0", kids)
    K = t.K
    rows = [[Fraction(1, K)] * K, [Fraction(2, 3 * (K - 1))] * (K - 1) + [Fraction(1, 3)]]
    d = FiniteDistribution.from_sample(t, [t.labels[5], t.labels[-1]], rows)
    runs = [boost(d, {"u": TopK(t, 1)}, engine=engine, max_updates=3, epsilon="1/100") for engine in ("exact", "fast")]
    assert [len(r.updates) for r in runs] == [3, 3] and runs[0].theorem_3_5["holds"] is True
    assert [u["node"] for u in runs[0].updates] == [u["node"] for u in runs[1].updates]
    assert abs(float(runs[0].final["huc"]) - float(runs[1].final["huc"])) < 1e-9


def test_long_exact_numbers_in_messages_stay_short(tmp_path, capsys):
    """A number of thousands of digits in a bad input (a sum of two 1,900-digit fractions, or
    1 - 3^-9000 given through the API) is shown by its distance from 1 or its value to six
    digits and its length: one short line, from the API and from ``huc audit``."""
    from fractions import Fraction

    from huc_ref import FiniteDistribution, LabelTree, Table
    from huc_ref.cli import main
    t = LabelTree.from_children("r", {"r": ["a", "b"]})
    # 1 - 3^-9000 = (3^9000 - 1) / 3^9000: both parts have floor(9000 log10 3) + 1 = 4,295 digits
    with pytest.raises(HUCError) as err:
        FiniteDistribution(t, [{"p": [Fraction(1, 2), Fraction(1, 2) - Fraction(1, 3**9000)], "label": "a"}])
    assert re.fullmatch(r"atoms\[0\]\.p: sums to 1 - 8\.\d{1,5}e-4295 \(an exact number of 8591 characters\), not 1; "
                        r"pass renormalize=True to divide it by its sum", str(err.value)), str(err.value)
    with pytest.raises(HUCError, match=r"^atoms\[0\]\.eta: sums to 1 \+ 8\.\d+e-4295 \(an exact number of 8591 "):
        FiniteDistribution(t, [{"p": ["1/2", "1/2"], "eta": [Fraction(1, 2), Fraction(1, 2) + Fraction(1, 3**9000)]}])
    with pytest.raises(HUCError, match=r"^values\[1\]: utility value ~1 \(an exact number of 8591 characters\) is "):
        Table(t, [0, 1 + Fraction(1, 3**9000)])
    q1, q2 = 10**1900 + 7, 10**1900 + 9
    case = {"format": "huc-case/1", "tree": {"root": "r", "children": {"r": ["a", "b"]}}, "labels": ["a", "b"],
            "utilities": {"u": {"kind": "table", "values": [0, 1]}},
            "atoms": [{"p": [f"{q1 // 2}/{q1}", f"{q2 // 2 - 5}/{q2}"], "label": "a"}]}
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case))
    assert main(["audit", str(path)]) == 2
    out, errors = capsys.readouterr()
    assert out == "" and re.fullmatch(r"huc: error: atoms\[0\]\.p: sums to 1 - \d(\.\d+)?e-19\d\d "
                                      r"\(an exact number of \d+ characters\), not 1; give --renormalize to "
                                      r"divide it by its sum\n", errors), errors


def _core_calls():
    """(call, message) for arguments of the wrong type, shape or size given to the core API: each is one
    HUCError, not a TypeError, AttributeError, IndexError or ValueError from inside (an array asked for
    its truth, an integer past Python's 4,300-digit limit on integer text)."""
    from fractions import Fraction

    from huc_ref import (
        FiniteDistribution,
        Interval,
        LabelTree,
        Prediction,
        Subtree,
        TopK,
        TreeDecomposition,
        atom_terms,
        audit,
        boost,
        fast,
        interval_moment,
        max_interval_sum,
        subtree_sums,
    )
    from huc_ref.bounds import h1_gap_bound, prop_3_3_bound
    from huc_ref.conformance import answer_digits, check_answers
    from huc_ref.formats import read_columns
    from huc_ref.replay import prefix_predictions, select_prefix, trajectory
    from huc_ref.vectors import export_cases, load_vectors
    t = _four_leaf()
    d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "label": "y1"}, {"p": ["1/2", "1/6", "1/6", "1/6"], "label": "y3"}])
    us = {"u": TopK(t, 1)}
    rows = [[0.25] * 4] * 2
    run = boost(d, us, max_updates=1)
    return [
        (lambda: audit(d, us, engine=np.array(["fast", "exact"])), "engine: expected 'exact' or 'fast', got an array "
         "of shape (2,)"),
        (lambda: audit(d, us, null_draws=np.array([3, 4])), "null_draws: expected a positive integer (at most "
         "1000000) or 'exact', got an array of shape (2,)"),
        (lambda: boost(d, us, step=np.array([0.1, 0.2])), "step: expected a number, got ndarray"),
        (lambda: boost(d, us, select=10**5000), "select: expected one of 'greedy', 'passes', 'drain', got an integer "
         "of 16610 bits"),
        (lambda: TopK(t, 10**5000), "k: must be an integer from 1 to K = 4, got an integer of 16610 bits"),
        (lambda: Subtree(t, 10**5000), "node index an integer of 16610 bits is out of range"),
        (lambda: fast.audit([0, 1], rows, t, us, accelerator=np.array(["numpy"])), "accelerator: expected 'numpy' or "
         "'numba', got an array of shape (1,)"),
        (lambda: fast.audit([0, 1], [[10**400, 0, 0, 0]] * 2, t, us), "y_prob: expected numbers (int too large to "
         "convert to float)"),
        (lambda: FiniteDistribution.from_sample(t, ["y1"], [["1/4"] * 4], subgroups=[[1]]),
         "subgroups: expected a non-empty mapping from name to n values in [-1, 1]"),
        (lambda: FiniteDistribution.from_sample(t, ["y1"], [["1/4"] * 4], subgroups={"g": 1}),
         "subgroups['g']: expected one value per label of y_true (1), got int"),
        (lambda: FiniteDistribution.from_sample(t, ["y1"], [["1/4"] * 4], sample_weight=2),
         "sample_weight: expected one value per label of y_true (1), got int"),
        (lambda: max_interval_sum(None), "blocks: expected a sequence of exact block sums, got NoneType"),
        (lambda: max_interval_sum({0: Fraction(1)}), "blocks: expected a sequence of exact block sums, got dict"),
        (lambda: max_interval_sum([Fraction(1, 4), 0.5]), "blocks[1]: float 0.5 is not exact"),
        (lambda: max_interval_sum(["1/4", True]), "blocks[1]: True is a boolean, not a number"),
        (lambda: subtree_sums(t, [1, 2, 3]), "leaf_values: expected 4 values, one per label in the tree's label "
         "order, got list of length 3"),
        (lambda: subtree_sums(t, 5), "leaf_values: expected 4 values, one per label in the tree's label order, got "
         "int"),
        (lambda: prop_3_3_bound(Fraction(1, 4), None), "n_relevant: must be a non-negative integer, got None"),
        (lambda: h1_gap_bound(100, 2.5, 3, "1/20"), "T: must be a non-negative integer, got 2.5"),
        (lambda: h1_gap_bound(100, 2, 3.7, "1/20"), "n_cand: must be a non-negative integer, got 3.7"),
        (lambda: LabelTree("r", {"r": ["a", "b"]}).check_columns(7), "labels: expected a list of leaf names (e.g. a "
         "classifier's classes_), got int"),
        (lambda: fast.audit_sample(fast.Sample(t, rows, [0, 1]), us, predictions=0.5),
         "predictions: expected an array of shape (2, 4) (the sample's), got ()"),
        (lambda: select_prefix(run, None, us), "dist: expected a FiniteDistribution or a fast.Sample (the atoms to "
         "replay the run on), got NoneType"),
        (lambda: trajectory(run, d, None), "utilities: expected a non-empty mapping from name to utility"),
        (lambda: prefix_predictions(run, d, us, np.array([0, 1])), "updates: the run has 1 updates, not an array of "
         "shape (2,)"),
        (lambda: read_columns(None, "predictions"), "predictions: expected a path (a str or pathlib.Path), got "
         "NoneType"),
        (lambda: check_answers(None), "answers: expected a path (a str or pathlib.Path), got NoneType"),
        (lambda: export_cases(3), "out: expected a path (a str or pathlib.Path), got int"),
        (lambda: load_vectors([]), "vectors: expected a path (a str or pathlib.Path), got list"),
        (lambda: answer_digits([]), "vector: expected a huc-vectors/1 vector (a dict), got list"),
        # a third pass: the exact core's building blocks (130 of 540 calls were TypeErrors and the like)
        (lambda: Prediction(t, None), "p: expected 4 values, one per label in the tree's label order, got NoneType"),
        (lambda: Prediction(None, ["1/4"] * 4), "tree: expected a LabelTree, got NoneType"),
        (lambda: TreeDecomposition(t, ["1/4"] * 4, [0, 1]), "u: expected 4 values, one per label in the tree's label "
         "order, got list of length 2"),
        (lambda: atom_terms(d, None), "utility: expected a Utility (Table(tree, ...), TopK(tree, k), ...), got "
         "NoneType"),
        (lambda: atom_terms(None, us["u"]), "dist: expected a FiniteDistribution"),
        (lambda: atom_terms(d, us["u"], 1.5), "nodes: expected a list of nodes, got float"),
        (lambda: interval_moment(d, us["u"], "all", 0.5), "interval: expected an Interval (Interval.closed(lo, hi)) or "
         "None, got float"),
        (lambda: interval_moment(d, us["u"], np.array(["all", "x"]), None), "subgroup an array of shape (2,) is not "
         "one of ['all']"),
        (lambda: Interval.closed(None, 1), "lo: expected a number, got NoneType"),
        (lambda: audit(d, us, max_digits="many"), "max_digits: expected a positive integer, got 'many'"),
        (lambda: audit(d, us, rational=np.array(["fraction"])), "rational: expected 'fraction' or 'gmpy2', got an "
         "array of shape (1,)"),
        (lambda: FiniteDistribution(t, [{"p": ["1/4"] * 4, "label": "y1"}], renormalize=np.array([1, 0])),
         "renormalize: expected True or False, got an array of shape (2,)"),
        (lambda: LabelTree.from_paths(["a/b", "a/c"], sep=None), "sep: expected a non-empty string, got None"),
        (lambda: LabelTree(10**5000, {"r": ["a", "b"]}),
         "tree.root: must be a non-empty string, got an integer of 16610 bits"),
    ]


@pytest.mark.parametrize("k", range(len(_core_calls())))
def test_core_arguments_of_the_wrong_type_get_one_huc_error(k):
    call, message = _core_calls()[k]
    with pytest.raises(HUCError) as err:
        call()
    assert str(err.value).startswith(message), str(err.value)


def test_max_interval_sum_reads_strings_and_mpq_as_it_reads_fractions():
    """The blocks' check converts only what is not Python's or gmpy2's exact arithmetic: strings
    through ``exact``, numpy's integers to ``int`` (their sums wrapped at 2^63: a sup of 2^62 for
    two blocks of 2^62, with a RuntimeWarning only), ``mpq`` (where installed) left as it is."""
    from fractions import Fraction

    from huc_ref import max_interval_sum
    blocks = [Fraction(1, 4), Fraction(-1, 2), Fraction(1, 3), Fraction(1, 3)]
    assert max_interval_sum(["1/4", "-1/2", "1/3", "1/3"]) == max_interval_sum(blocks) == \
        max_interval_sum(iter(blocks))
    wide = max_interval_sum(np.array([2**62, 2**62], dtype=np.int64))  # numpy's integers: no wrap at 2^63
    assert wide.sup == 2**63 and (wide.r, wide.b) == (0, 2)
    gmpy2 = pytest.importorskip("gmpy2")
    assert max_interval_sum([gmpy2.mpq(b.numerator, b.denominator) for b in blocks]).sup == Fraction(2, 3)


def test_numpy_integers_are_integers_everywhere_an_integer_is_asked():
    """``np.int64`` (``for k in np.arange(1, 4)``, a grid of settings) was refused as "must be an integer
    ..., got np.int64(2)" by every integer argument; now it is taken as the integer it is, and what is
    written is JSON (a numpy integer is not). The certified float64 engine's ``digits`` follows the
    certified engine's rule (15 to 2000; 5 was taken)."""
    from huc_ref import FiniteDistribution, Subtree, Top1AtDepth, TopK, audit, boost, fast
    from huc_ref.calibration import HUCBoost
    from huc_ref.formats import dumps
    t = _four_leaf()
    d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "label": "y1"}, {"p": ["1/2", "1/6", "1/6", "1/6"], "label": "y3"}])
    P, y = np.array([[0.25] * 4, [0.5, 1 / 6, 1 / 6, 1 / 6]] * 5), np.array([0, 2] * 5)
    i = np.int64
    assert TopK(t, i(2)).to_json() == TopK(t, 2).to_json() and type(TopK(t, i(2)).k) is int
    assert Top1AtDepth(t, i(1)).to_json() == {"kind": "top1_at_depth", "depth": 1}
    assert Subtree(t, i(1)).to_json() == Subtree(t, 1).to_json() and type(t.id(i(1))) is int
    us = {"u": TopK(t, 1)}

    def same(call, **kw):  # numpy's integers and Python's give the same JSON
        assert dumps(call(**{k: i(v) for k, v in kw.items()}).to_json()) == dumps(call(**kw).to_json())
    same(lambda **kw: audit(d, us, **kw), null_draws=5, seed=1)
    same(lambda **kw: fast.audit(y, P, t, us, **kw), null_draws=5, seed=2)
    for run in (lambda **kw: boost(d, us, select="passes", **kw), lambda **kw: fast.boost(d, us, **kw),
                lambda **kw: boost(d, us, arithmetic="certified", **kw)):
        same(run, max_updates=2, max_passes=3)
    same(lambda **kw: boost(d, us, max_updates=2, **kw), digits=30)
    same(lambda **kw: HUCBoost(t, us, **kw).fit(P, y), max_updates=3, max_passes=2, null_draws=5, seed=1)
    with pytest.raises(HUCError, match=r"^digits: must be an integer from 15 to 2000, got 5$"):
        boost(d, us, arithmetic="certified", digits=5)
