"""The fast audit of samples held as Dask collections (huc_ref.fast.scale) against the in-memory
fast path: the same candidate rows, sups to 1e-12 relative (or at the rounding of the sums),
the same witnesses (or, where two
prefix sums lie within rounding of each other, a witness whose moment is the sup too), the same
errors naming the same rows; on local threads and on a LocalCluster of worker processes,
one of which is killed mid-audit."""

from __future__ import annotations

import math
import subprocess
import sys
import threading
import time
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from huc_ref import HUCError, LabelTree, Rank, Subtree, Table, Top1AtDepth, TopK, class_indicator, fast
from tests.strategies import shape_tree, softmax_rows, wide_trees

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

from huc_ref.fast import numbers, scale  # noqa: E402 (after the importorskip: it is imported only where dask is)
from huc_ref.fast.audit import sample_terms  # noqa: E402
from huc_ref.fast.tree import FastTree  # noqa: E402
from huc_ref.fast.utilities import path_plan, term_columns  # noqa: E402

#: Sups agree to this, relatively: each prefix sum is the same block sums added in another order,
#: off by at most n unit roundoffs of the sup (n <= 120 here) ...
REL = 1e-12

#: ... or absolutely, where a sup is at the rounding of the sample's sums (2^-52 of the total weight
#: of its entries, each at most 2): the in-memory scan carries every column's prefix sums on from
#: the columns before it, so a column of entries near 1e-300 reads 0 there (its sup is below the
#: rounding of the others' totals) and about 1e-301 here.
ABS = 2.0**-52 * 2 * 8


#: The package's budget for ordering near-equal scores exactly (read before :func:`whole_runs` sets it to 0).
DEFAULT_BUDGET = numbers.ORDER_BUDGET


@pytest.fixture(autouse=True, scope="module")
def whole_runs():
    """The in-memory audit with :data:`huc_ref.fast.numbers.ORDER_BUDGET` 0, the reference of this
    file: a range holds scores and terms, not the rows' ``K`` floats, so the partitioned audit
    leaves every group of near-equal scores of different rows whole (and reports it), as the
    in-memory path does beyond its budget (:func:`test_near_ties_left_whole_bound_the_exact_order`
    checks the bound against the in-memory path that orders them)."""
    kept = numbers.ORDER_BUDGET
    numbers.ORDER_BUDGET = 0
    yield
    numbers.ORDER_BUDGET = kept


def close(a: float, b: float) -> bool:
    """Two sums of the same block sums in different orders (:data:`REL`, :data:`ABS`)."""
    return abs(a - b) <= REL * max(abs(a), abs(b)) + ABS


def _moment(tree, y, P, us, name, groups, w, g, node, interval, renormalize):
    """An interval's moment (Def. 2.1's M, Def. 3.2's Gamma) from the in-memory path's per-row terms,
    summed exactly (math.fsum): the independent check of a witness the two paths chose differently."""
    ft = FastTree(tree)
    t = sample_terms(ft, P, y, us, row_sum_tolerance=None if renormalize else 1e-5)
    k = list(us).index(name)
    nodes, colmap, ks = path_plan(ft, us[name])
    n = len(y)
    weight = np.full(n, 1.0 / n) if w is None else (w / w.max()) / math.fsum((w / w.max()).tolist())
    if groups is not None:
        weight = weight * np.asarray(list(groups.values())[g], dtype=float)
    lo, hi = interval
    inside = (t.score[k] >= lo) & (t.score[k] <= hi)
    if node is None:
        entry = t.residual[k]
    elif ft.H == 1:  # (a flat tree: the root's term is the UC residual)
        entry = t.residual[k]
    else:
        column = 1 + [tree.nodes[a] for a in nodes].index(node)
        table, kind = term_columns(ft, colmap, ks, y)
        entry = np.zeros(n)
        for j in range(len(ks)):
            hit = np.take(table[j], kind) == column
            entry[hit] = t.T[k][j][hit]
    return math.fsum((weight * entry)[inside].tolist())


def assert_agrees(ref, got, tree, y, P, us, groups=None, w=None, renormalize=False):
    """``got`` is the in-memory ``ref``: the same rows; sups to :data:`REL`; the same witnesses, or a
    witness whose moment (summed independently) is the sup within the tolerance."""
    assert [(c.subgroup, c.utility, c.node) for c in got.candidates] == \
        [(c.subgroup, c.utility, c.node) for c in ref.candidates]
    assert got.n == ref.n and got.engine == "fast" and got.subgroups == ref.subgroups
    names = list(groups) if groups is not None else ["all"]
    for a, b in zip(ref.candidates, got.candidates):
        assert close(a.sup, b.sup), (a, b)
        if max(a.sup, b.sup) <= ABS:  # (both at the rounding of the sums: no witness to compare)
            continue
        if a.interval != b.interval:
            assert a.interval is not None and b.interval is not None, (a, b)
            moment = _moment(tree, y, P, us, b.utility, groups, w, names.index(b.subgroup), b.node, b.interval,
                             renormalize)
            assert abs(abs(moment) - b.sup) <= 1e-9 * b.sup + ABS, (a, b, moment)
        else:
            assert close(a.moment, b.moment), (a, b)
    assert close(ref.uc.sup, got.uc.sup) and close(ref.huc.sup, got.huc.sup)


def lazy(x, chunks):
    """``x`` as a Dask array of these row chunks."""
    x = np.asarray(x)
    return da.from_array(x, chunks=(tuple(chunks),) + tuple((s,) for s in x.shape[1:]))


def run(y, P, tree, us, chunks, groups=None, w=None, **options):
    """The Dask audit of the arrays, split into row chunks ``chunks``."""
    return scale.audit(lazy(y, chunks), lazy(P, chunks), tree, us,
                       subgroups=None if groups is None else {k: lazy(v, chunks) for k, v in groups.items()},
                       sample_weight=None if w is None else lazy(w, chunks), **options)


def _chunks(draw, n):
    """Row chunks summing to ``n``: cuts drawn anywhere, so empty chunks (a repeated cut) and
    one-row ones among them; or every row its own chunk."""
    if draw(st.integers(0, 7)) == 7:
        return [1] * n
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=8)))
    return np.diff([0] + cuts + [n]).tolist()


def _utilities(tree, seed):
    rng = np.random.default_rng(seed)
    us = {"top3": TopK(tree, min(3, tree.K)), "first": class_indicator(tree, tree.labels[0]),
          "rank": Rank(tree, [Fraction(int(v), 2) for v in rng.integers(-2, 3, tree.K)])}
    if len(tree.internal_nodes) > 1:
        us["top1"] = Top1AtDepth(tree, 1)
        us["wide"] = Subtree(tree, tree.internal_nodes[-1])
    return us


@st.composite
def samples(draw):
    """A tree of the shapes users have (flat up to 60 classes, two-level up to 100, a node of 30
    children first or last at its depth, deep chains), softmax rows with ties and entries near
    1e-300 (or a few distinct rows: heavy ties), labels, perhaps subgroups and weights, and the
    Dask partitions and ranges: ``(tree, y, P, us, groups, w, chunks, options)``."""
    tree = draw(wide_trees(max_leaves=100))
    n = draw(st.integers(1, 120))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    P = softmax_rows(seed, tree.K, n, draw(st.sampled_from([1.0, 3.0, 15.0])),
                     draw(st.sampled_from([0, -300])))
    if draw(st.booleans()):  # a few distinct rows only: heavy ties, all-equal scores at worst
        P = P[rng.integers(0, min(n, draw(st.integers(1, 3))), n)]
    y = rng.integers(0, tree.K, n)
    groups = None
    if draw(st.booleans()):
        groups = {"all": np.ones(n), "half": rng.random(n) < 0.5, "signed": rng.integers(-2, 3, n) / 2}
    w = rng.random(n) * draw(st.sampled_from([1.0, 1e-200])) if draw(st.booleans()) else None
    options = {"shuffle": draw(st.sampled_from(["disk", "tasks"])),
               "range_rows": draw(st.sampled_from([None, 3, 11, n]))}
    return tree, y, P, _utilities(tree, seed), groups, w, _chunks(draw, n), options


def _pinned(name: str):
    """The fast-path tests' pinned shapes as samples: a flat ten, thirty children last at their
    depth, a hundred classes near 1e-300 (weights and subgroups), all rows one prediction."""
    shape, size, width, sigma, floor, n = {"flat ten": ("flat", 10, 0, 3.0, 0, 40),
                                           "thirty children": ("wide_last", 0, 30, 3.0, 0, 60),
                                           "hundred": ("two_level", 10, 10, 15.0, -300, 90),
                                           "all equal": ("two_level", 3, 4, 3.0, 0, 30)}[name]
    tree = shape_tree(shape, size, width, 1)
    rng = np.random.default_rng(len(name))
    P = softmax_rows(len(name), tree.K, n, sigma, floor)
    if name == "all equal":
        P = np.repeat(P[:1], n, axis=0)
    y = rng.integers(0, tree.K, n)
    groups = {"all": np.ones(n), "half": rng.random(n) < 0.5} if name != "flat ten" else None
    w = rng.random(n) if name == "hundred" else None
    chunks = {"flat ten": [1] * 40, "thirty children": [0, 17, 0, 43], "hundred": [30, 0, 30, 30],
              "all equal": [7, 23]}[name]
    return tree, y, P, _utilities(tree, len(name)), groups, w, chunks, {"shuffle": "disk", "range_rows": 3}


@settings(max_examples=25)
@given(samples())
@example(_pinned("flat ten"))
@example(_pinned("thirty children"))
@example(_pinned("hundred"))
@example(_pinned("all equal"))
def test_the_dask_audit_is_the_in_memory_audit(case):
    """Every candidate row, sup and witness of the partitioned audit equals the in-memory one, for
    partitions drawn by hypothesis (empty ones, one-row ones) and score ranges down to one row each
    (every close gap a boundary, so boundaries float64 cannot certify are joined)."""
    tree, y, P, us, groups, w, chunks, options = case
    ref = fast.audit(y, P, tree, us, subgroups=groups, sample_weight=w, labels=tree.labels)
    got = run(y, P, tree, us, chunks, groups, w, labels=tree.labels, **options)
    assert_agrees(ref, got, tree, y, P, us, groups, w)


@settings(max_examples=15)
@given(samples())
@example(_pinned("hundred"))
def test_near_ties_left_whole_bound_the_exact_order(case):
    """Where the in-memory path orders near-equal scores by their exact values (its default budget),
    the partitioned audit, which leaves them whole, reports them (``near_ties``) with bounds that
    hold the in-memory UC and HUC: ``reported <= exact <= reported + bound`` (rounding aside);
    without them, the two agree to :data:`REL`.  An audit that dropped the report, or whose
    groups were not whole, fails this."""
    tree, y, P, us, groups, w, chunks, options = case
    kept = numbers.ORDER_BUDGET
    numbers.ORDER_BUDGET = DEFAULT_BUDGET
    try:
        exact = fast.audit(y, P, tree, us, subgroups=groups, sample_weight=w, labels=tree.labels)
    finally:
        numbers.ORDER_BUDGET = kept
    got = run(y, P, tree, us, chunks, groups, w, labels=tree.labels, **options)
    ties = got.near_ties
    for mine, theirs, bound in ((got.uc.sup, exact.uc.sup, ties.uc_bound if ties else 0.0),
                                (got.huc.sup, exact.huc.sup, ties.huc_bound if ties else 0.0)):
        slack = REL * max(abs(mine), abs(theirs)) + ABS
        assert mine <= theirs + slack and theirs <= mine + bound + slack, (mine, theirs, ties)
    if exact.near_ties is not None and exact.near_ties.decided_groups and not close(got.uc.sup, exact.uc.sup):
        assert ties is not None and ties.undecided_groups


def test_scores_float64_cannot_order_are_one_block_across_ranges(monkeypatch):
    """Rows whose scores differ by a few ulps (one prediction scaled, renormalize=True) lie on both
    sides of score boundaries when every range holds one row: the boundaries are not certain, their
    ranges are joined and scanned again, and the answer is the in-memory one (which makes such rows
    one tie block); a boundary between ranges left as it was would split the block."""
    rng = np.random.default_rng(2)
    tree = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    us = {"u": class_indicator(tree, "pos"), "t": Table(tree, [-1, "1/2"])}
    n = 60
    P = np.array([0.7, 0.3])[None, :] * rng.uniform(0.5, 3, n)[:, None]
    P[::3] = rng.dirichlet([1, 1], len(P[::3]))
    y = rng.integers(0, 2, n)
    scores = sample_terms(FastTree(tree), P, y, us, row_sum_tolerance=None).score[0]
    near = np.diff(np.sort(scores))
    assert np.any((near > 0) & (near < 1e-15))  # (the case has distinct floats closer than their error bounds)
    joined = []
    certified = scale._certified

    def spy(*args):
        out = certified(*args)
        joined.append(len(args[3]) - len(out[0]))
        return out
    monkeypatch.setattr(scale, "_certified", spy)
    ref = fast.audit(y, P, tree, us, renormalize=True)
    got = run(y, P, tree, us, [7] * 8 + [4], renormalize=True, range_rows=1, shuffle="tasks")
    assert sum(joined) > 0
    assert_agrees(ref, got, tree, y, P, us, renormalize=True)


def test_dataframes_take_their_columns_by_name():
    """A Dask DataFrame of predictions whose columns are the labels in another order (as
    ``pd.DataFrame(clf.predict_proba(X), columns=clf.classes_)``), with the labels, weights and a
    subgroup as columns of one frame: the in-memory audit of the reordered array."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    tree = shape_tree("two_level", 3, 4, 2)
    n = 200
    rng = np.random.default_rng(5)
    P = softmax_rows(5, tree.K, n, 3.0)
    y = rng.integers(0, tree.K, n)
    shuffled = list(rng.permutation(tree.K))
    frame = pd.DataFrame(P[:, shuffled], columns=[tree.labels[j] for j in shuffled])
    frame["label"] = [tree.labels[k] for k in y]
    frame["w"] = rng.random(n)
    frame["g"] = rng.random(n) < 0.3
    ddf = dd.from_pandas(frame, npartitions=4)
    us = _utilities(tree, 5)
    ref = fast.audit(y, P, tree, us, subgroups={"g": frame["g"].to_numpy()}, sample_weight=frame["w"].to_numpy(),
                     labels=tree.labels)
    got = fast.audit(ddf["label"], ddf[[tree.labels[j] for j in shuffled]], tree, us, subgroups={"g": ddf["g"]},
                     sample_weight=ddf["w"])
    assert_agrees(ref, got, tree, y, P, us, {"g": frame["g"].to_numpy()}, frame["w"].to_numpy())


def _bad_sample():
    tree = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    rng = np.random.default_rng(0)
    n = 50
    return tree, rng.integers(0, 3, n), rng.dirichlet([1, 1, 1], n), {"u": TopK(tree, 1)}


def test_columns_of_a_parquet_read_whose_pieces_do_not_line_up(tmp_path):
    """``dd.read_parquet`` of small files, a label column and the probability columns taken apart:
    Dask fuses the label column's small partitions (fewer pieces than ``npartitions`` says) but
    not the wider table's; the audit reads them by rows and gives the in-memory answer (the
    pieces' mismatch was an IndexError)."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    tree, y, P, us, groups, _, _, _ = _pinned("thirty children")
    frame = pd.DataFrame(P, columns=list(tree.labels))
    frame["label"] = [tree.labels[k] for k in y]
    frame["all"] = 1.0
    for k in range(4):
        frame.iloc[k * 15:(k + 1) * 15].to_parquet(tmp_path / f"day-{k}.parquet", index=False)
    logs = dd.read_parquet(str(tmp_path / "day-*.parquet"))
    got = fast.audit(logs["label"], logs[list(tree.labels)], tree, us, subgroups={"all": logs["all"]})
    assert_agrees(fast.audit(y, P, tree, us, labels=tree.labels), got, tree, y, P, us)


@pytest.mark.parametrize("spoil, message", [
    (lambda y, P, g, w: P.__setitem__((37, 1), -0.5), "y_prob[37]: entries must be finite and nonnegative"),
    (lambda y, P, g, w: P.__setitem__(41, [0.5, 0.5, 1e-310]), "y_prob[41]: entry 2 is 1e-310, a subnormal float64"),
    (lambda y, P, g, w: P.__setitem__(33, P[33] * 2), "y_prob[33]: sums to 1.9999999999999998"),
    (lambda y, P, g, w: y.__setitem__(44, 7), "y_true[44]: 7 is not a label name or id"),
    (lambda y, P, g, w: w.__setitem__(45, -1.0), "sample_weight[45]: -1.0 is not a finite nonnegative number"),
    (lambda y, P, g, w: g.__setitem__(46, 3.0), "subgroups['g'][46]: 3.0 is not a number in [-1, 1]"),
    # the in-memory order of checks: labels before weights before subgroups before rows, whichever partition
    (lambda y, P, g, w: (P.__setitem__((3, 1), -0.5), y.__setitem__(44, 7)), "y_true[44]: 7 is not a label"),
    (lambda y, P, g, w: (g.__setitem__(2, 3.0), w.__setitem__(48, np.nan)), "sample_weight[48]: nan is not"),
])
@pytest.mark.parametrize("shuffle", ["disk", "tasks"])
def test_a_bad_input_is_named_by_its_row_in_the_sample(spoil, message, shuffle):
    """A bad row in a later partition is named by its row in the whole sample, with the in-memory
    message; where several arguments are bad, the one the in-memory audit checks first is named."""
    tree, y, P, us = _bad_sample()
    g, w = np.ones(len(y)), np.ones(len(y))
    spoil(y, P, g, w)
    with pytest.raises(HUCError) as ref:
        fast.audit(y, P, tree, us, subgroups={"g": g}, sample_weight=w)
    with pytest.raises(HUCError) as got:
        run(y, P, tree, us, [10, 15, 0, 25], {"g": g}, w, shuffle=shuffle)
    assert str(got.value).startswith(message) and str(got.value) == str(ref.value)
    assert got.value.kind == ref.value.kind


@pytest.mark.parametrize("shuffle", ["disk", "tasks"])
def test_a_subgroup_named_all_is_the_whole_population(shuffle):
    """A subgroup named "all" whose values are not all 1 is refused by its row in the whole sample,
    with the in-memory message, given as a Dask array or whole beside Dask ones; named otherwise
    (the remedy), the same values are audited as the in-memory audit audits them."""
    tree, y, P, us = _bad_sample()
    g = np.ones(len(y))
    g[46] = 0.5
    with pytest.raises(HUCError) as ref:
        fast.audit(y, P, tree, us, subgroups={"all": g})
    assert str(ref.value).startswith("subgroups['all'][46]: is 0.5, but 'all' names the whole population")
    with pytest.raises(HUCError) as got:
        run(y, P, tree, us, [10, 15, 0, 25], {"all": g}, shuffle=shuffle)
    assert str(got.value) == str(ref.value)
    with pytest.raises(HUCError) as whole:
        scale.audit(lazy(y, [25, 25]), lazy(P, [25, 25]), tree, us, subgroups={"all": g}, shuffle=shuffle)
    assert str(whole.value) == str(ref.value)
    assert_agrees(fast.audit(y, P, tree, us, subgroups={"half": g}), run(y, P, tree, us, [10, 40], {"half": g}),
                  tree, y, P, us, {"half": g})


def test_the_argument_rules_are_the_in_memory_rules():
    """A bare Dask array of predictions needs a declared label order, as a bare numpy array does;
    its remedy, ``labels=``, works; lengths that differ are the in-memory messages; no rows is
    refused; a numpy argument beside Dask ones is read as the in-memory audit reads it."""
    tree = LabelTree.from_children("r", {"r": ["b", "a"]})
    us = {"u": class_indicator(tree, "a")}
    P = np.array([[0.25, 0.75], [0.5, 0.5], [0.75, 0.25]])
    y = np.array([0, 1, 1])
    with pytest.raises(HUCError) as ref:
        fast.audit(y, P, tree, us)
    with pytest.raises(HUCError) as got:
        fast.audit(lazy(y, [2, 1]), lazy(P, [2, 1]), tree, us)
    assert str(got.value) == str(ref.value) and "pass labels=clf.classes_" in str(got.value)
    assert fast.audit(lazy(y, [2, 1]), lazy(P, [2, 1]), tree, us, labels=["b", "a"]).candidates == \
        fast.audit(y, P, tree, us, labels=["b", "a"]).candidates
    with pytest.raises(HUCError, match=r"^y_true: has 2 labels, y_prob has 3 rows$"):
        fast.audit(lazy(y[:2], [2]), lazy(P, [2, 1]), tree, us, labels=["b", "a"])
    with pytest.raises(HUCError, match=r"^y_prob: no rows \(an audit needs at least one atom\)$"):
        fast.audit(lazy(y[:0], [0]), lazy(P[:0], [0]), tree, us, labels=["b", "a"])
    mixed = fast.audit(["b", "a", "a"], lazy(P, [1, 2]), tree, us, labels=["b", "a"], subgroups={"g": [1, 0, 1]})
    assert mixed.candidates == fast.audit(["b", "a", "a"], P, tree, us, labels=["b", "a"],
                                          subgroups={"g": [1, 0, 1]}).candidates


def test_audit_partitions_refuses_an_unknown_accelerator():
    """Pins that :func:`huc_ref.fast.scale.audit_partitions` (``huc audit`` of a Parquet dataset
    calls it directly) checks ``accelerator`` as the in-memory audit does: one HUCError with the
    in-memory message, not an audit run silently with numpy; its remedy, ``"numpy"``, runs."""
    tree = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    us = {"u": class_indicator(tree, "pos")}
    blocks = [(np.array([[0.75, 0.25], [0.5, 0.5]]), np.array([0, 1]), None)]
    with pytest.raises(HUCError) as ref:
        fast.audit([0, 1], blocks[0][0], tree, us, accelerator="gpu")
    with pytest.raises(HUCError) as got:
        scale.audit_partitions(tree, us, blocks, [2], [], False, accelerator="gpu")
    assert str(got.value) == str(ref.value) == "accelerator: expected 'numpy' or 'numba', got 'gpu'"
    assert scale.audit_partitions(tree, us, blocks, [2], [], False, accelerator="numpy").candidates == \
        fast.audit([0, 1], blocks[0][0], tree, us).candidates


def test_weights_are_normalised_to_the_same_bits():
    """The weights' sum is taken exactly across partitions (math.fsum's correctly rounded sum of
    ``w / w_max``), so every weight, and a sample of one partition, is the in-memory audit's to the bit."""
    rng = np.random.default_rng(3)
    x = rng.random(1000) * 10.0 ** rng.integers(-30, 30, 1000)
    cuts = [0, 1, 250, 251, 1000]
    parts = sum((scale.exact_float_sum(x[a:b]) for a, b in zip(cuts, cuts[1:])), Fraction(0))
    assert float(parts) == math.fsum(x.tolist())
    tree = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    us = {"u": class_indicator(tree, "pos")}
    P, y = rng.dirichlet([1, 1], 1000), rng.integers(0, 2, 1000)
    ref = fast.audit(y, P, tree, us, sample_weight=x)
    got = run(y, P, tree, us, [1000], w=x)
    assert [c.sup for c in got.candidates] == [c.sup for c in ref.candidates]


def test_the_in_memory_path_does_not_import_dask():
    """The in-memory audit, and huc_ref itself, never import dask (the optional scale extra)."""
    code = ("import sys, numpy as np; from huc_ref import LabelTree, class_indicator, fast; "
            "t = LabelTree.from_children('r', {'r': ['a', 'b']}); "
            "fast.audit([0, 1], np.array([[.5, .5], [.25, .75]]), t, {'u': class_indicator(t, 'b')}); "
            "print('dask' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("shuffle", ["disk", "tasks"])
@pytest.mark.parametrize("shape", ["two_level", "flat", "wide_last"])
def test_the_null_draws_are_the_in_memory_draws(shuffle, shape):
    """``null_draws=B`` on Dask collections draws the in-memory labels (the seeded generator's
    numbers, reached partition by partition) and audits each draw by ranges: every p-value, of each
    row, UC and HUC, is the in-memory one (labels drawn from the predictions: calibrated, so the
    p-values spread), with weights, subgroups and renormalised rows."""
    tree = shape_tree(shape, 4, 5, 1)
    rng = np.random.default_rng(11)
    n = 160
    P = softmax_rows(11, tree.K, n, 2.0) * rng.uniform(0.5, 2.0, (n, 1))
    Q = P / P.sum(axis=1, keepdims=True)
    y = np.array([rng.choice(tree.K, p=p) for p in Q])
    groups, w = {"all": np.ones(n), "half": rng.random(n) < 0.5}, rng.random(n)
    us = _utilities(tree, 11)
    options = dict(labels=tree.labels, null_draws=39, seed=5, renormalize=True)
    ref = fast.audit(y, P, tree, us, subgroups=groups, sample_weight=w, **options)
    got = run(y, P, tree, us, [50, 0, 37, 73], groups, w, shuffle=shuffle, range_rows=40, **options)
    assert got.significance.rows == ref.significance.rows
    assert (got.significance.uc, got.significance.huc) == (ref.significance.uc, ref.significance.huc)
    assert len(set(got.significance.rows)) > 3  # (p-values that differ: the comparison can fail)
    with pytest.raises(HUCError, match="^null_draws: 'exact' enumerates label assignments"):
        run(y, P, tree, us, [80, 80], labels=tree.labels, null_draws="exact")


def _fitted(tree, n=300, seed=4):
    from huc_ref.calibration import HUCBoost
    rng = np.random.default_rng(seed)
    P = softmax_rows(seed, tree.K, n, 2.0)
    y = rng.integers(0, tree.K, n)
    groups = {"half": rng.random(n) < 0.5}
    return HUCBoost(tree, _utilities(tree, seed), epsilon="0.05").fit(P, y, subgroups=groups), P, groups


def test_predict_proba_maps_row_blocks_of_dask_collections():
    """HUCBoost's and a scaling's predict_proba of a Dask Array (and subgroups) are Dask Arrays whose
    blocks are the in-memory recalibration's rows, bit for bit; a DataFrame with its columns in
    another order is read by name and gives a DataFrame whose columns are named as they are, in
    classes_' order (a column named for one class holding another's was a silent error); a bad
    row is named by its row in the whole;
    a subgroup the model was fitted with is asked for at once."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    from huc_ref.calibration import TemperatureScaling
    tree = shape_tree("two_level", 3, 3, 0)
    model, P, groups = _fitted(tree)
    assert model.n_updates_ > 0
    lazy_P = lazy(P, [100, 0, 150, 50])
    got = model.predict_proba(lazy_P, subgroups={"half": lazy(groups["half"], [100, 0, 150, 50])})
    assert isinstance(got, da.Array)
    assert np.array_equal(got.compute(), model.predict_proba(P, subgroups=groups))
    scaling = TemperatureScaling().fit(P, np.random.default_rng(0).integers(0, tree.K, len(P)))
    assert np.array_equal(scaling.predict_proba(lazy_P).compute(), scaling.predict_proba(P))
    order = list(np.random.default_rng(1).permutation(tree.K))
    table = pd.DataFrame(P[:, order], columns=[tree.labels[j] for j in order])
    out = model.predict_proba(dd.from_pandas(table, npartitions=3), subgroups={"half": groups["half"]})
    assert list(out.columns) == [str(c) for c in model.classes_] != [tree.labels[j] for j in order]
    assert np.array_equal(out.compute().to_numpy(), model.predict_proba(table, subgroups=groups))
    first = tree.labels[order[0]]  # (its column holds its own class: the row sums' order aside)
    assert np.allclose(out.compute()[first].to_numpy(),
                       model.predict_proba(P, subgroups=groups)[:, list(model.classes_).index(first)],
                       rtol=1e-12, atol=0)
    bad = P.copy()
    bad[260, 1] = -1.0
    with pytest.raises(HUCError, match=r"^y_prob\[260\]: entries must be finite and nonnegative"):
        model.predict_proba(lazy(bad, [100, 150, 50]), subgroups={"half": groups["half"]}).compute()
    with pytest.raises(HUCError, match="the model was fitted with subgroup 'half'"):
        model.predict_proba(lazy_P)


# ------------------------------------------------------------------ the command line on Parquet datasets
def _dataset(tmp_path, n=700, seed=8, spoil=None, names=None, everyone=False):
    """A Parquet dataset of two files (row groups of 250 rows, and one of one row): one column per
    label (in another order than the tree's), the labels as text, weights and two subgroup columns;
    the spec file; and the same sample as arrays in the tree's order."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    import json
    tree = shape_tree("two_level", 3, 3, 0)
    rng = np.random.default_rng(seed)
    P = softmax_rows(seed, tree.K, n, 2.0)
    if spoil is not None:
        spoil(P)
    y = rng.integers(0, tree.K, n)
    w, female, region = rng.random(n), rng.random(n) < 0.5, rng.integers(-2, 3, n) / 2
    order = list(rng.permutation(tree.K))
    folder = tmp_path / "rows"
    folder.mkdir()
    for name, (a, b), size in (("a.parquet", (0, 500), 250), ("b.parquet", (500, n - 1), 250),
                               ("c.parquet", (n - 1, n), 1)):
        columns = {tree.labels[j]: P[a:b, j] for j in order}
        text = [tree.labels[k] for k in y] if names is None else names([tree.labels[k] for k in y])
        columns |= {"label": text[a:b], "w": w[a:b], "female": female[a:b],
                    "region": region[a:b]} | ({"all": np.ones(b - a)} if everyone else {})
        pq.write_table(pa.table(columns), folder / name, row_group_size=size)
    us = _utilities(tree, seed)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"tree": tree.to_json(), "labels": list(tree.labels),
                                "utilities": {k: u.to_json() for k, u in us.items()}}))
    groups = {"all": np.ones(n), "female": female, "region": region}
    return tree, us, folder, spec, (y, P, groups, w)


def test_huc_audit_of_a_parquet_dataset_is_the_in_memory_audit(tmp_path, capsys):
    """``huc audit --predictions DIR --engine fast`` reads the columns by name (the labels', the
    label column, the weight column; the rest subgroups, with the whole population added) and
    prints the in-memory audit of the same rows; a glob of the files is the same dataset."""
    import json

    from huc_ref.cli import main
    tree, us, folder, spec, (y, P, groups, w) = _dataset(tmp_path)
    ref = fast.audit(y, P, tree, us, subgroups=groups, sample_weight=w, labels=tree.labels)
    for where in (str(folder), str(folder / "*.parquet")):
        assert main(["audit", "--tree", str(spec), "--predictions", where, "--engine", "fast",
                     "--weight-column", "w", "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert [(r["subgroup"], r["utility"], r["node"]) for r in doc["candidates"]] == \
            [(c.subgroup, c.utility, c.node) for c in ref.candidates]
        for row, c in zip(doc["candidates"], ref.candidates):
            assert close(row["sup"], c.sup)
            assert (tuple(row["interval"]) if row["interval"] else None) == c.interval
    assert main(["audit", "--tree", str(spec), "--predictions", str(folder), "--engine", "fast"]) == 0
    assert "Parquet dataset, n=700, K=9, 4 row groups" in capsys.readouterr().out


def test_a_dataset_column_named_all_is_the_whole_population_once(tmp_path, capsys):
    """A dataset with a column named "all" (of ones, as docs/scale.md's example has) audits the
    whole population once: the in-memory rows, not every "all" row twice (which also doubled
    Thm 3.4's count of candidates)."""
    import json

    from huc_ref.cli import main
    tree, us, folder, spec, (y, P, groups, w) = _dataset(tmp_path, everyone=True)
    ref = fast.audit(y, P, tree, us, subgroups=groups, sample_weight=w, labels=tree.labels)
    assert main(["audit", "--tree", str(spec), "--predictions", str(folder), "--engine", "fast",
                 "--weight-column", "w", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(repr((r["subgroup"], r["utility"], r["node"])) for r in doc["candidates"]) == \
        sorted(repr((c.subgroup, c.utility, c.node)) for c in ref.candidates)


@pytest.mark.parametrize("argv, message, remedy", [
    (["--arithmetic", "exact"], "--predictions: a Parquet dataset (a folder or a glob) is audited in float64, "
                                "partition by partition, out of core; give --arithmetic float64",
     ["--arithmetic", "float64"]),
    (["--engine", "fast", "--label-column", "y"], "--label-column: the dataset has no column 'y' (its columns: ",
     ["--engine", "fast", "--label-column", "label"]),
    (["--engine", "fast", "--labels", "y.npy"], "--labels: a Parquet dataset holds its labels in a column; name it "
                                                "with --label-column (default 'label')", ["--engine", "fast"]),
    (["--engine", "fast", "--null", "exact"], "--null exact: enumerates the label assignments of a sample held in "
                                              "memory; give --null B (B resampled draws)",
     ["--engine", "fast", "--null", "9"]),
    (["--columns", ",".join(f"y{a}_{b}" for a in range(3) for b in range(3))],
     "--columns: states the order of a headerless predictions file; a Parquet dataset's columns are named by the "
     "labels and read by name", []),
    (["--max-digits", "10"], "--max-digits: applies to --arithmetic exact (the cost limit of its digits)", []),
    (["--max-null-work", "10"], "--max-null-work: applies to --null (the budget of its draws)", ["--null", "9"]),
    (["--null", "9", "--max-null-work", "1"], "--null 9: 9 draws, each an audit: about 8.4e+06 units of work",
     ["--null", "9", "--max-null-work", "8393301"]),
])
def test_huc_audit_of_a_dataset_names_the_option_that_mends_it(tmp_path, capsys, argv, message, remedy):
    """Each refusal of a dataset audit is one line naming the option; the remedy it names works."""
    from huc_ref.cli import main
    _, _, folder, spec, _ = _dataset(tmp_path, n=60)
    base = ["audit", "--tree", str(spec), "--predictions", str(folder)]
    assert main(base + argv) == 2
    assert capsys.readouterr().err.startswith(f"huc: error: {message}")
    assert main(base + remedy) == 0


def test_a_bad_row_of_a_dataset_is_named_by_its_row_and_option(tmp_path, capsys):
    """A row of a dataset that does not sum to 1 is named by its row in the dataset and the
    option that mends it (--renormalize), which then audits it as the in-memory audit of the rows
    divided by their sums; a label that is not the tree's, by its row (labels stored as text by
    their distinct names are read by them)."""
    from huc_ref.cli import main

    def spoil(P):
        P[612] *= 1.5
    tree, us, folder, spec, (y, P, groups, w) = _dataset(tmp_path, spoil=spoil)
    base = ["audit", "--tree", str(spec), "--predictions", str(folder), "--engine", "fast"]
    assert main(base) == 2
    err = capsys.readouterr().err
    assert err.startswith("huc: error: --predictions[612]: sums to 1.5") and "give --renormalize" in err
    assert main(base + ["--renormalize", "--top", "1"]) == 0
    ref = fast.audit(y, P, tree, us, subgroups=groups, labels=tree.labels, renormalize=True)
    assert f"{ref.uc.sup:.6g}" in capsys.readouterr().out
    (tmp_path / "names").mkdir()
    _, _, folder, spec, _ = _dataset(tmp_path / "names", names=lambda text: text[:650] + ["cat"] + text[651:])
    assert main(["audit", "--tree", str(spec), "--predictions", str(folder), "--engine", "fast"]) == 2
    assert capsys.readouterr().err.startswith("huc: error: --label-column 'label'[650]: 'cat' is not a label name")


def test_huc_fit_samples_a_dataset_and_huc_apply_maps_it(tmp_path, capsys, monkeypatch):
    """``huc fit`` on a dataset larger than it reads whole asks for --sample; with it, it boosts on
    that many rows drawn by --seed; ``huc apply`` writes each row group recalibrated (the model's
    predict_proba of the rows, bit for bit), every other column kept, to a new folder."""
    pq = pytest.importorskip("pyarrow.parquet")
    from huc_ref import cli
    from huc_ref.calibration import load_model
    tree, us, folder, spec, (y, P, groups, w) = _dataset(tmp_path)
    monkeypatch.setattr(cli, "FIT_ROWS", 500)
    fit = ["fit", "--tree", str(spec), "--predictions", str(folder), "-o", str(tmp_path / "model.json"),
           "--epsilon", "0.05", "--weight-column", "w"]
    assert cli.main(fit) == 2
    assert "the dataset has 700 rows; huc fit boosts on a calibration sample held in memory (each boosting " \
           "update is a full audit of it): give --sample N, e.g. --sample 500" in capsys.readouterr().err
    assert cli.main(fit + ["--sample", "400", "--seed", "3"]) == 0
    assert "a sample of 400 of the dataset's 700 rows" in capsys.readouterr().err
    model = load_model(tmp_path / "model.json")
    assert model.subgroups_ == ["all", "female", "region"]
    out = tmp_path / "calibrated"
    assert cli.main(["apply", str(tmp_path / "model.json"), str(folder), "-o", str(out)]) == 0
    table = pq.read_table(sorted(out.glob("*.parquet")))
    got = np.column_stack([table.column(name).to_numpy() for name in tree.labels])
    assert np.array_equal(got, model.predict_proba(P, subgroups={"female": groups["female"],
                                                                 "region": groups["region"]}))
    assert table.column("label").to_pylist() == [tree.labels[k] for k in y]
    assert cli.main(["apply", str(tmp_path / "model.json"), str(folder), "-o", str(out)]) == 2
    assert "exists; a dataset's recalibrated rows go to a new (or empty) folder" in capsys.readouterr().err


# ------------------------------------------------------------------ a real cluster: worker processes
@pytest.fixture(scope="module")
def client():
    """A LocalCluster of two worker processes of one thread each (each task's arguments and result
    cross a process boundary, pickled, as on a cluster of machines), and a Client on it, current
    only where a test makes it so (``client.as_current()``: the audit then runs there, with rows as
    Dask tasks, which the workers hold), so that the other tests keep the local threads."""
    distributed = pytest.importorskip("distributed")
    import logging
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, \
            distributed.Client(cluster, set_as_default=False) as c:
        yield c


@pytest.mark.slow
def test_the_audit_on_a_cluster_of_processes_is_the_in_memory_audit(client):
    """Under a Client the same call runs on the cluster's worker processes (rows as Dask tasks, the
    default there; spill files too, which a machine's workers share): the in-memory answer, and the
    in-memory p-values."""
    tree, y, P, us, groups, w, chunks, _ = _pinned("hundred")
    ref = fast.audit(y, P, tree, us, subgroups=groups, sample_weight=w, labels=tree.labels, null_draws=9, seed=2)
    with client.as_current():
        assert scale._shuffle(None) == "tasks"
        got = run(y, P, tree, us, chunks, groups, w, labels=tree.labels, null_draws=9, seed=2, range_rows=30)
    assert_agrees(ref, got, tree, y, P, us, groups, w)
    assert got.significance.rows == ref.significance.rows
    tree, y, P, us, groups, w, chunks, _ = _pinned("thirty children")
    ref = fast.audit(y, P, tree, us, subgroups=groups, sample_weight=w, labels=tree.labels)
    with client.as_current():
        got = run(y, P, tree, us, chunks, groups, w, labels=tree.labels, range_rows=20, shuffle="disk")
    assert_agrees(ref, got, tree, y, P, us, groups, w)
    assert scale._shuffle(None) == "disk"  # (the Client is current only where a test makes it so)


@pytest.mark.slow
@settings(max_examples=6)
@given(samples())
def test_the_agreement_property_holds_on_a_cluster_of_processes(client, case):
    """The agreement property of :func:`test_the_dask_audit_is_the_in_memory_audit`, its samples
    and partitions drawn by hypothesis, on the cluster's worker processes (each partition and
    score range pickled across a process boundary) instead of local threads."""
    tree, y, P, us, groups, w, chunks, options = case
    ref = fast.audit(y, P, tree, us, subgroups=groups, sample_weight=w, labels=tree.labels)
    with client.as_current():
        got = run(y, P, tree, us, chunks, groups, w, labels=tree.labels, range_rows=options["range_rows"])
    assert_agrees(ref, got, tree, y, P, us, groups, w)


@pytest.mark.slow
def test_a_worker_killed_mid_audit_leaves_the_answer_unchanged(client):
    """One of the two worker processes is killed while the audit's score ranges run (its sorted
    partitions, held in its memory, are lost with it; a range task may be running on it): Dask
    computes the lost partitions again and retries the lost tasks on the worker that is left and the
    one its nanny starts, and the answer is the in-memory one."""
    import os
    import signal
    tree = shape_tree("two_level", 4, 5, 0)
    rng = np.random.default_rng(21)
    n = 24000
    P = softmax_rows(21, tree.K, n, 2.0)
    y = rng.integers(0, tree.K, n)
    us = {"top3": TopK(tree, 3), "top1": Top1AtDepth(tree, 1)}
    ref = fast.audit(y, P, tree, us, labels=tree.labels)
    pids = client.run(os.getpid)
    done, killed = [], []

    def audit():
        with client.as_current():
            done.append(run(y, P, tree, us, [3000] * 8, labels=tree.labels, range_rows=2000))
    worker = threading.Thread(target=audit)
    worker.start()
    deadline = time.monotonic() + 60
    while worker.is_alive() and time.monotonic() < deadline and not killed:
        running = client.processing()
        busy = [w for w, keys in running.items() if any(str(k).startswith(("_range_task", "_piece")) for k in keys)]
        if busy:
            held = client.has_what()
            victim = max(busy, key=lambda w: sum(str(k).startswith("_prepare") for k in held.get(w, ())))
            os.kill(pids[victim], signal.SIGKILL)
            killed.append(victim)
        time.sleep(0.005)
    worker.join(120)
    assert killed, "the audit ended before any of its score ranges was seen running"
    assert done and not worker.is_alive()
    assert_agrees(ref, done[0], tree, y, P, us)
    client.wait_for_workers(2, timeout=60)


def test_the_rows_stay_in_memory_on_local_threads_where_they_fit(monkeypatch):
    """Without a Client the sorted rows are Dask tasks where they take a quarter of the memory left
    at most, else spill files; under a cap on the address space (ulimit -v) the cap counts."""
    import resource
    assert scale._shuffle(None, 1e6) == "tasks"
    assert scale._shuffle(None, 1e18) == "disk"
    assert scale._shuffle(None) == "disk"  # (rows of unknown number: a spill folder)
    assert scale._shuffle("tasks", 1e18) == "tasks"
    monkeypatch.setattr(resource, "getrlimit", lambda what: (2**30, 2**30))
    assert scale._memory() <= 2**29
    assert scale._shuffle(None, 2**28) == "disk"
    with pytest.raises(HUCError, match="^shuffle: expected 'disk' or 'tasks', got 'p2p'$"):
        scale._shuffle("p2p")
