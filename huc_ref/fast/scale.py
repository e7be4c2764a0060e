"""UC and HUC of samples held as Dask collections: App. F.3-F.4's audit partition by partition.

The in-memory fast path (:mod:`huc_ref.fast.audit`) computes every row's score and path terms,
sorts each utility's scores once and runs Algorithm 2 on the prefix sums of every column.  Here
the same steps run on the Dask scheduler in effect (local threads, or a ``dask.distributed``
cluster when a ``Client`` is active), a partition of rows at a time, with no array of ``n``
numbers anywhere:

1. *map*: each partition's rows are checked (the in-memory rules and messages, rows numbered in
   the whole sample) and their scores, UC residuals and path terms computed by
   :func:`huc_ref.fast.audit.sample_terms`; for each utility the rows are sorted by score
   (:func:`huc_ref.fast.intervals.sort_scores`) and a sketch of the sorted scores kept;
2. *the sort*: score ranges of about a partition's rows each, whose boundaries are scores, so
   that every row of one float score falls in one range and a tie block of equal floats is
   never split; each range gathers its slice of every partition's sorted rows and merges them;
3. *Algorithm 2 by ranges*: each range's tie blocks (:func:`huc_ref.fast.intervals.tie_blocks`)
   and, per subgroup and column, its total, its largest and smallest prefix sum and the first
   block attaining each (:func:`range_extremes`);
4. *the fold*: App. F.3's supremum over intervals of a column's prefix sums is an associative
   reduction: a range's prefix sums are the ranges' totals before it plus its own, so the
   largest and smallest of all are the ranges' own shifted by those totals, the first attaining
   each kept (strictly larger replaces), and the witness is read from the two extreme blocks
   (:func:`fold`).  A boundary float64 cannot certify (two scores within their error bounds on
   either side of it, :func:`huc_ref.fast.intervals.tie_blocks`' rule) joins its two ranges,
   which are gathered and scanned again as one.

The answer is the in-memory path's: the same tie blocks, the same block sums
(:func:`huc_ref.fast.numbers.block_sums`, order-free), the same candidate rows and witnesses;
only the order of the float additions of the prefix sums differs (each range's own sums, then
the totals before it), so sups agree to rounding (``n`` times the unit roundoff of the sup at
most, ``sqrt(n)`` typically) and a witness can differ only where two prefix sums are that close.
Scores float64 cannot order (near-equal scores of different predictions) are the exception: the
in-memory path orders such a group by the exact values of its rows' floats, within
:data:`huc_ref.fast.numbers.ORDER_BUDGET`; a range holds scores and terms, not the rows' ``K``
floats, so here every such group stays one tie block, as the in-memory path leaves a group beyond
its budget, and is reported in the result's ``near_ties`` with the bounds within which the exact
order's UC and HUC lie (:func:`near_ties`).

Rows travel between the map and the ranges either in memory (``shuffle="tasks"``: slices are
Dask tasks, which a cluster's workers hold and spill; the default under a distributed ``Client``,
and on local threads where the sorted rows take a quarter of the memory left at most) or through
files in a spill folder (``shuffle="disk"``: each map writes its sorted rows once, each range
reads its slices; the default otherwise), so that one machine audits more rows than its memory
holds: a task holds one partition's rows (or one range's), whatever ``n``.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping
from fractions import Fraction

import numpy as np

from ..distribution import WHOLE_POPULATION, check_whole_population, subgroup_mapping
from ..errors import HUCError, check_name, one_of, printable
from ..results import AuditResult
from ..significance import candidate_rows, check_null, check_null_work, resampling_p_values
from ..tree import LabelTree
from ..utilities import Utility
from ..validation import _per_atom_rows, check_utilities
from .audit import CHUNK, ROW_SUM_TOLERANCE, check_accelerator, label_ids, result_rows, sample_terms
from .intervals import sort_scores, tie_blocks
from .numbers import as_floats, block_sums, entries, subgroup_column
from .tree import FastTree
from .utilities import path_plan, term_columns

__all__ = ["SHUFFLES", "is_lazy", "audit", "audit_partitions", "exact_float_sum", "fold", "boundaries",
           "near_ties", "row_keys", "lazy_predictions", "dataset_columns", "dataset_blocks"]

#: How sorted rows travel from the partitions to the score ranges: through files in a spill
#: folder (one machine, or a folder every worker shares) or as Dask tasks (a cluster's workers
#: hold them, spilling to their own disks).
SHUFFLES = ("disk", "tasks")

#: Sketch points per partition and utility (:func:`boundaries`): with ``s`` of them the rank of a
#: boundary is known within ``n / s`` rows; 4 per score range, within this range.
SKETCH = (64, 4096)


def is_lazy(*values) -> bool:
    """Whether any of ``values`` (a sample's arrays, Sec. 2.1, or a mapping's values) is a Dask
    collection: what sends :func:`huc_ref.fast.audit.audit` to :func:`audit` and an estimator's
    ``predict_proba`` to :func:`lazy_predictions`.  Dask is never imported for this: a collection
    exists only where dask is imported already.

    Parameters
    ----------
    *values : object
        Arrays, DataFrames, Series, mappings (their values are looked at) or None.

    Returns
    -------
    bool
        True where one of them, or of a mapping's values, is a Dask collection.

    Examples
    --------
    >>> is_lazy(np.zeros(3), {"g": [1, 0]}, None)
    False
    >>> import dask.array as da
    >>> is_lazy(np.zeros(3), {"g": da.from_array(np.array([1, 0]))})
    True
    """
    dask = sys.modules.get("dask")
    if dask is None:
        return False
    for value in values:
        for v in (value.values() if isinstance(value, Mapping) else (value,)):
            if dask.is_dask_collection(v):
                return True
    return False


def _frame(x) -> bool:
    """A Dask DataFrame (named columns), as opposed to a Series or an Array."""
    return type(x).__module__.startswith("dask.dataframe") and hasattr(x, "columns")


def _series(x) -> bool:
    return type(x).__module__.startswith("dask.dataframe") and not hasattr(x, "columns")


def _client() -> bool:
    """Whether a ``dask.distributed`` Client is in effect (none can be where distributed was never
    imported: it is not imported for this)."""
    if "distributed" not in sys.modules:
        return False
    try:
        sys.modules["distributed"].default_client()
        return True
    except ValueError:
        return False


def _memory() -> float:
    """The memory this process may still take: the machine's available memory, or less where the
    address space is capped (``ulimit -v``)."""
    import resource
    try:
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        free = math.inf
    cap = resource.getrlimit(resource.RLIMIT_AS)[0]
    return free if cap == resource.RLIM_INFINITY else min(free, cap / 2)


#: ``shuffle=None`` keeps the sorted rows in memory (``"tasks"``) on local threads where they take
#: at most this share of :func:`_memory`, else writes them to spill files (``"disk"``).
IN_MEMORY_SHARE = 0.25


def _shuffle(shuffle, rows_bytes: float | None = None) -> str:
    """``shuffle`` checked; None: ``"tasks"`` under a distributed Client (Dask's own default for its
    shuffles there: the workers hold the rows and spill them), and on local threads ``"tasks"``
    where the sorted rows (``rows_bytes``, where known) take at most :data:`IN_MEMORY_SHARE` of
    the memory left, else ``"disk"`` (Dask's default without a Client: a spill folder, so that the
    rows may exceed memory)."""
    if shuffle is None:
        if _client():
            return "tasks"
        return "tasks" if rows_bytes is not None and rows_bytes <= IN_MEMORY_SHARE * _memory() else "disk"
    if not one_of(shuffle, SHUFFLES):
        raise HUCError(f"shuffle: expected 'disk' or 'tasks', got {printable(repr(shuffle), 60)}", kind="option")
    return shuffle


# ------------------------------------------------------------------ exact sums of float weights
def exact_float_sum(x: np.ndarray) -> Fraction:
    """The exact sum of finite float64 values, as a rational: each value ``m 2^e`` split into two
    integers of 27 and 26 bits, summed per exponent in float64 (exactly: fewer than ``2^26`` values
    per call) and added as integers.  Partitions' sums add exactly, so ``float(sum of them)`` is
    ``math.fsum`` of all the values, correctly rounded, whatever the partitions (the weights'
    normalisation of :func:`huc_ref.fast.audit.audit`, Sec. 2.1's ``sum_i w_i = 1``).

    Parameters
    ----------
    x : array_like of float
        Finite float64 values (a partition's weights, each divided by the largest).

    Returns
    -------
    fractions.Fraction
        Their exact sum.

    Examples
    --------
    >>> exact_float_sum(np.array([0.5, 0.25, 2.0**-60])) == Fraction(3, 4) + Fraction(1, 2**60)  # (float64: 0.75)
    True
    >>> x = np.array([0.1, 0.2, 0.3, 1e-20, 3.0])
    >>> float(exact_float_sum(x[:2]) + exact_float_sum(x[2:])) == math.fsum(x.tolist())
    True
    """
    x = np.asarray(x, dtype=np.float64)
    total = Fraction(0)
    for lo in range(0, len(x), 1 << 25):
        part = x[lo:lo + (1 << 25)]
        mant, exp = np.frexp(part)  # part = mant 2^exp, 1/2 <= |mant| < 1
        whole = (mant * 2.0**53).astype(np.int64)  # exact: 53-bit integers
        high = whole >> 26
        low = whole - (high << 26)
        keys, where = np.unique(exp, return_inverse=True)
        highs = np.bincount(where, weights=high.astype(np.float64), minlength=len(keys))
        lows = np.bincount(where, weights=low.astype(np.float64), minlength=len(keys))
        for e, h, lw in zip(keys.tolist(), highs.tolist(), lows.tolist()):
            value = (int(h) << 26) + int(lw)
            total += Fraction(value * 2 ** max(e - 53, 0), 2 ** max(53 - e, 0))
    return total


# ------------------------------------------------------------------ the map: one partition's rows
class _Spec:
    """What every task of one audit shares: the tree as arrays, the utilities, the accelerator, the
    row-sum rule, the subgroups' names and whether weights are given (one Dask key, not one copy a
    task)."""

    def __init__(self, ft: FastTree, utilities: Mapping[str, Utility], engine: str, tolerance, groups: list,
                 weighted: bool, spill: str | None, sketch: int):
        self.ft, self.utilities, self.engine, self.tolerance = ft, dict(utilities), engine, tolerance
        self.groups, self.weighted, self.spill, self.sketch = groups, weighted, spill, sketch
        self.plans = [path_plan(ft, u) for u in self.utilities.values()]
        self.flat = ft.H == 1
        # (a flat tree stores no terms: the root's term is the UC residual, copied to its column, as sample_terms
        # has it)
        self.depths = [np.zeros(0, dtype=int) if self.flat else ks for _, _, ks in self.plans]
        self.scalar_weight = not weighted and not groups  # (every row's weight 1 / n: one number)
        self.null = None  # (the null draws' shared tables, :func:`_null_plan`)

    def row_bytes(self) -> int:
        """Bytes of one sample row's sorted rows (:class:`_Sorted`), over every utility: its score,
        error bound, UC residual, node terms, raw weight, subgroup values, row key (:func:`row_keys`)
        and label."""
        return sum(8 * (5 + len(d) + self.weighted + len(self.groups)) for d in self.depths)


class _Stored:
    """An array of rows (1-D, or 2-D by rows), held in memory or written to a file of the spill
    folder; :meth:`rows` reads rows ``a .. b`` (from a file: only those)."""

    def __init__(self, x: np.ndarray, spill: str | None, name: str):
        self.shape, self.dtype = x.shape, x.dtype
        self.path = None if spill is None else f"{spill}/{name}"
        if self.path is None:
            self.x = x
        else:
            np.ascontiguousarray(x).tofile(self.path)
            self.x = None

    def rows(self, a: int, b: int) -> np.ndarray:
        if self.path is None:
            return self.x[a:b]
        width = int(np.prod(self.shape[1:], dtype=np.int64))
        out = np.fromfile(self.path, dtype=self.dtype, count=(b - a) * width, offset=a * width * self.dtype.itemsize)
        return out.reshape((b - a,) + self.shape[1:])

    def search(self, values) -> list:
        """Where ``values`` go among the rows of a sorted 1-D array (``searchsorted``, left; from a
        file by binary search on a memory map)."""
        if self.path is None or not self.shape[0]:
            return [int(v) for v in np.searchsorted(self.x if self.path is None else np.zeros(0), values, "left")]
        mapped = np.memmap(self.path, dtype=self.dtype, mode="r", shape=self.shape)
        out = [int(v) for v in np.searchsorted(mapped, values, "left")]
        del mapped
        return out


class _Sorted:
    """One partition's rows for one utility, sorted by score: the scores; per row a table of
    numbers (for the audit its score's error bound, UC residual, node terms, one per stored depth,
    raw weight if weights are given, and subgroup values); and per row an integer (the audit: its
    label id; the null: its row in the partition), each :class:`_Stored`."""

    def __init__(self, score, rows, ints, spill: str | None, name: str):
        self.score = _Stored(score, spill, name + ".score")
        self.rows = _Stored(rows, spill, name + ".rows")
        self.ints = _Stored(ints.astype(np.int64), spill, name + ".ints")

    def span(self, lo: float, hi: float) -> tuple[int, int]:
        """The rows with ``lo <= score < hi`` (every row of one score on one side): ``(a, b)``."""
        a, b = self.score.search([lo, hi])
        return a, b

    def piece(self, lo: float, hi: float, drawn: _Stored | None = None):
        """``(score, rows, ints)`` of the rows with ``lo <= score < hi``, and of ``drawn`` (labels
        drawn for them in that order) the same rows."""
        a, b = self.span(lo, hi)
        out = (self.score.rows(a, b), self.rows.rows(a, b), self.ints.rows(a, b))
        return out if drawn is None else out + (drawn.rows(a, b),)


#: The order in which the in-memory audit checks its arguments (the first error it meets is the
#: one it raises): labels, weights, each subgroup in turn, null draws, then the rows of y_prob
#: (a row breaking a rule before one whose label has probability 0, sample_terms' rule).
_LABELS, _WEIGHTS, _SUBGROUP, _NULL, _ROWS, _ZERO = 0, 1, 2, 10**6, 10**6 + 1, 10**6 + 2


def _at_row(err: HUCError, where: str):
    """``(row, rest)`` of a message ``where[row]: rest`` (a row of one partition), or None."""
    text = str(err)
    head = where + "["
    if text.startswith(head):
        digits, sep, rest = text[len(head):].partition("]")
        if sep and digits.isdigit():
            return int(digits), rest
    return None


class _Problem:
    """The first bad input a partition found: its place in the in-memory audit's order of checks,
    its row in the partition (None: not a row's), and the error, whose row is renumbered in the
    whole sample once the partitions' offsets are known."""

    def __init__(self, rank: int, where: str | None, err: HUCError):
        found = _at_row(err, where) if where is not None else None
        self.rank, self.where, self.err = rank, where, err
        self.row = None if found is None else found[0]
        self.rest = None if found is None else found[1]

    def error(self, offset: int) -> HUCError:
        if self.row is None:
            return self.err
        return HUCError(f"{self.where}[{offset + self.row}]{self.rest}", kind=self.err.kind)


def _numbers(x):
    """A partition's block as a numpy array (a pandas object's own array)."""
    if x is None or isinstance(x, _Coded):
        return x
    if hasattr(x, "to_numpy") and not isinstance(x, np.ndarray):
        return x.to_numpy()
    return np.asarray(x)


class _Part:
    """What the map of one partition returns: its row count, its first bad input (or None), its
    largest raw weight, and per utility its sorted rows (:class:`_Sorted`), a sketch of its sorted
    scores (values and the rows each stands for) and its largest score error bound; and its raw
    weights (for their exact sum)."""

    def __init__(self, m, problem=None, wmax=0.0, sorted_=(), sketches=(), largest=(), weights=None):
        self.m, self.problem, self.wmax = m, problem, wmax
        self.sorted, self.sketches, self.largest, self.weights = list(sorted_), list(sketches), list(largest), weights


def _prepare(spec: _Spec, index: int, offset, P, y, w, *C) -> _Part:
    """The map of partition ``index`` (rows ``offset ..``, where known): its rows checked as
    :func:`huc_ref.fast.audit.audit` checks them (the first bad input returned, not raised, so that
    the whole sample's first is reported), their scores and path terms (F.4), and per utility the
    rows sorted by score with a sketch of the scores."""
    P, y, w, C = _numbers(P), _numbers(y), _numbers(w), [_numbers(c) for c in C]
    m = len(P)
    if len(y) != m or (w is not None and len(w) != m) or any(c is not None and len(c) != m for c in C):
        sizes = [len(y)] + ([len(w)] if w is not None else []) + [len(c) for c in C if c is not None]
        return _Part(m, _Problem(-1, None, HUCError(
            f"y_prob: partition {index} has {m} rows, but its labels, weights or subgroups have {sizes}: the "
            "collections' partitions do not line up; pass columns of one Dask DataFrame, or Dask arrays with the "
            "same chunks", kind="length")))
    try:
        ids = y.ids(spec.ft.tree) if isinstance(y, _Coded) else label_ids(y, spec.ft.tree, m)
    except HUCError as err:
        return _Part(m, _Problem(_LABELS, "y_true", err))
    wmax = 0.0
    if w is not None:
        try:
            w = entries(w, m, "sample_weight", "a finite nonnegative number", lambda v: v >= 0, "float_range")
        except HUCError as err:
            return _Part(m, _Problem(_WEIGHTS, "sample_weight", err))
        wmax = float(w.max()) if m else 0.0
    cols = []
    for g, (name, c) in enumerate(zip(spec.groups, C)):
        where = f"subgroups[{printable(name, 80)!r}]"
        if c is None:  # (the whole population, added by audit: K.3)
            cols.append(np.ones(m))
            continue
        try:
            cols.append(subgroup_column(c, m, where))
            check_whole_population(name, cols[-1], where + "[{i}]")  # ("all" is the whole population, or refused)
        except HUCError as err:
            return _Part(m, _Problem(_SUBGROUP + g, where, err))
    if not m:
        return _Part(0, None, wmax, [_Sorted(np.zeros(0), np.zeros((0, 3 + len(d) + spec.weighted + len(C))),
                                             np.zeros(0, dtype=np.int64), spec.spill, f"p{index}-u{k}")
                                     for k, d in enumerate(spec.depths)],
                     [(np.zeros(0), np.zeros(0, dtype=np.int64))] * len(spec.depths), [0.0] * len(spec.depths),
                     np.zeros(0) if w is not None else None)
    X = P if isinstance(P, np.ndarray) and P.dtype == np.float64 else as_floats(P, "y_prob")
    keys = row_keys(X).view(np.float64)  # (stored among the rows' floats: their bits, copied, never computed on)
    rows = None if offset is None else np.arange(offset, offset + m)
    try:
        t = sample_terms(spec.ft, X, ids, spec.utilities, rows, spec.engine, row_sum_tolerance=spec.tolerance)
    except HUCError as err:
        return _Part(m, _Problem(_ZERO if err.kind == "nonpositive" else _ROWS, "y_prob", err))
    del X, P
    extra = ([w] if w is not None else []) + cols + [keys]
    step = max(1, -(-m // spec.sketch))
    sorted_, sketches, largest = [], [], []
    table = np.empty((m, 2 + max(len(d) for d in spec.depths) + len(extra)))  # (one buffer, utility after utility)
    for k in range(len(spec.depths)):
        order, ranked = sort_scores(t.score[k], spec.engine)
        D = len(spec.depths[k])
        rows = table[:, :2 + D + len(extra)]
        rows[:, 0], rows[:, 1] = t.error[k], t.residual[k]  # the rows in their own order, then gathered whole
        for j in range(D):
            rows[:, 2 + j] = t.T[k][j]
        for j, x in enumerate(extra):
            rows[:, 2 + D + j] = x
        points = np.arange(0, m, step)
        sketches.append((ranked[points], np.diff(np.append(points, m))))
        largest.append(float(t.error[k].max()))
        sorted_.append(_Sorted(ranked, rows.take(order, axis=0), ids.take(order), spec.spill, f"p{index}-u{k}"))
        del order
    if w is not None and spec.spill is not None:  # (the raw weights' exact sum is taken once w_max is known)
        w.tofile(f"{spec.spill}/p{index}.weights")
        w = f"{spec.spill}/p{index}.weights"
    return _Part(m, None, wmax, sorted_, sketches, largest, w)


def _summary(part: _Part):
    """The small part of a map's result, fetched by the driver (not its rows)."""
    return _Part(part.m, part.problem, part.wmax, (), part.sketches, part.largest)


def _weight_sum(part: _Part, wmax: float) -> Fraction:
    """The exact sum of a partition's ``w_i / w_max`` (:func:`exact_float_sum`)."""
    if not part.m:
        return Fraction(0)
    w = np.fromfile(part.weights, dtype=np.float64) if isinstance(part.weights, str) else part.weights
    return exact_float_sum(w / wmax)


# ------------------------------------------------------------------ the sort: score ranges
def boundaries(sketches: list, n: int, ranges: int) -> np.ndarray:
    """At most ``ranges - 1`` scores splitting the sample into ranges of about ``n / ranges`` rows,
    from the partitions' sketches ``(values, rows each stands for)`` of their sorted scores: the
    range ``[b_r, b_(r+1))`` holds every row of a score ``b_r <= s < b_(r+1)``, so all rows of one
    float score, a tie block of equal floats (Algorithm 2, App. F.3), lie in one range.

    Parameters
    ----------
    sketches : list of (numpy.ndarray, numpy.ndarray)
        Per partition, points of its sorted scores and the number of rows each stands for.
    n : int
        The sample's rows.
    ranges : int
        The number of score ranges wanted.

    Returns
    -------
    numpy.ndarray
        The boundaries, rising, each above the smallest sketched score (none where ``ranges <= 1``).

    Examples
    --------
    >>> boundaries([(np.array([0.1, 0.3, 0.5]), np.array([2, 2, 2])), (np.array([0.2, 0.4]), np.array([3, 3]))],
    ...            12, 3).tolist()  # about 5 rows below 0.3 and 10 below 0.5, for targets 4 and 8
    [0.3, 0.5]
    """
    if ranges <= 1 or not sketches:
        return np.zeros(0)
    values = np.concatenate([v for v, _ in sketches])
    counts = np.concatenate([c for _, c in sketches])
    order = np.argsort(values, kind="stable")
    values, cum = values[order], np.cumsum(counts[order])
    targets = np.arange(1, ranges) * (n / ranges)
    cut = np.unique(values[np.minimum(np.searchsorted(cum, targets, "left") + 1, len(values) - 1)])
    return cut[cut > values[0]]


def _piece(part: _Part, k: int, lo: float, hi: float, drawn=None):
    """Partition ``part``'s rows of utility ``k`` with scores in ``[lo, hi)`` (and of ``drawn``, the
    labels a batch of null draws gave them, per utility)."""
    return part.sorted[k].piece(lo, hi, None if drawn is None else drawn[k])


def _gather(pieces, lo: float, hi: float):
    """The pieces of one range (``(score, rows, ints[, drawn])`` each, or the handles ``(sorted,
    drawn)`` to read them from), merged into score order (each piece is sorted): the same tuple."""
    pieces = [p[0].piece(lo, hi, p[1]) if isinstance(p[0], _Sorted) else p for p in pieces]
    pieces = [p for p in pieces if len(p[0])]
    if not pieces:
        return None
    if len(pieces) == 1:
        return pieces[0]
    score = np.concatenate([p[0] for p in pieces])
    order = np.argsort(score, kind="stable")  # (sorted runs: a merge)
    return tuple(np.concatenate([p[j] for p in pieces])[order] for j in range(len(pieces[0])))


def _range_task(spec: _Spec, k: int, scale, lo: float, hi: float, *pieces):
    """One score range of utility ``k``: its pieces (``shuffle="tasks"``) or the handles to read them
    from the spill folder, merged and scanned (:func:`range_extremes`)."""
    found = _gather(pieces, lo, hi)
    if found is None:
        return range_extremes(spec, k, scale, np.zeros(0), None, None)
    return range_extremes(spec, k, scale, *found)


# ------------------------------------------------------------------ Algorithm 2 on one range
class Extremes:
    """Algorithm 2 on one score range of one utility (App. F.3), per subgroup and column (``G x
    columns`` arrays): whether the column has an entry in the range (``has``), the sum of its
    entries (``total``), its largest and smallest prefix sum from the range's start (``mx``,
    ``mn``) with the score of the block that first attains each (``mx_hi``, ``mn_hi``: the block's
    largest score) and of the block after it (``mx_next``, ``mn_next``: its smallest score; NaN
    where the block is the range's last); and the range's rows: ``m``, its smallest and largest
    score, the largest ``s + e`` and smallest ``s - e`` (scores and their error bounds: a boundary
    is certain where every score below it, raised by its error, is below every score above it,
    lowered by its error, :func:`huc_ref.fast.intervals.tie_blocks`), and its largest error;
    ``first_end``, the witness end of its first block (:class:`_Blocks`' ``low_end``); ``near``,
    its groups of near-equal scores left whole: ``(groups, rows, uc, node)``, the largest
    ``sum_i |w_i c(x_i) v_i|`` over a group's rows of the UC residuals and of the node terms
    (:meth:`huc_ref.fast.intervals.Rows._tally`'s)."""

    FIELDS = ("total", "mx", "mx_blk", "mx_hi", "mx_next", "mn", "mn_blk", "mn_hi", "mn_next")

    def __init__(self, G: int, n_cols: int, m: int = 0):
        self.has = np.zeros((G, n_cols), dtype=bool)
        for name in self.FIELDS:
            setattr(self, name, np.zeros((G, n_cols), dtype=np.int64 if name.endswith("blk") else float))
        self.m, self.lo, self.hi, self.up, self.down, self.largest = m, np.inf, -np.inf, -np.inf, np.inf, 0.0
        self.first_end, self.near = np.inf, (0, 0, 0.0, 0.0)

    @classmethod
    def of_rows(cls, blocks: _Blocks | None) -> Extremes:
        """A range's statistics alone (no columns): what certifies its boundaries (:func:`_unsure`)."""
        out = cls(0, 0)
        if blocks is not None:
            out.m, out.lo, out.hi, out.up, out.down, out.largest = blocks.stats
        return out


def _weights(spec: _Spec, scale, w, C) -> list:
    """Each subgroup's weights ``w_i c(x_i)`` of some rows (one number where they are all equal),
    as :func:`huc_ref.fast.audit.audit` makes them: ``w / w_max / sum`` (``scale = (w_max, sum)``),
    or ``1 / n`` (``scale``) without weights, times ``c``; ``w`` and ``C`` the rows' raw weights and
    subgroup values (columns of some array)."""
    if spec.weighted:
        wmax, total = scale
        w = w / wmax
        w /= total
    else:
        w = scale  # 1 / n
    if not spec.groups:
        return [w]
    return [w * c for c in C]


def _rows_weights(spec: _Spec, scale, rows: np.ndarray, at: int) -> list:
    """:func:`_weights` of rows holding the raw weight (if given) and the subgroup values from column ``at`` on."""
    w = rows[:, at] if spec.weighted else None
    at += spec.weighted
    return _weights(spec, scale, w, [rows[:, at + g] for g in range(len(spec.groups))])


class _WholeRuns:
    """The ``exact_score`` of :func:`huc_ref.fast.intervals.tie_blocks` for rows whose predictions
    are not at hand (a range holds scores and terms, not the rows' ``K`` floats): no exact score is
    computed (``budget`` 0), so every group of near-equal scores of different rows stays one block
    and is listed in the runs, as the in-memory path leaves a group beyond
    :data:`huc_ref.fast.numbers.ORDER_BUDGET`; rows with equal keys (:func:`row_keys`: the same
    prediction) are the same numbers, which tie without exact work (``same``)."""

    budget, width, key = 0, 1, None

    def __init__(self, keys: np.ndarray | None):
        self.keys = keys

    def same(self, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
        return None if self.keys is None else self.keys.take(a) == self.keys.take(b)

    def __call__(self, i: int):
        raise AssertionError("no exact score is computed with a budget of 0")


def row_keys(X: np.ndarray) -> np.ndarray:
    """A 64-bit key of each row's bits: which rows of a group of near-equal scores (App. F.3's
    sort) are the same prediction, and so tie without exact work (:class:`_WholeRuns`).

    Parameters
    ----------
    X : numpy.ndarray
        ``(m, K)`` predictions (float64).

    Returns
    -------
    numpy.ndarray
        ``m`` unsigned 64-bit keys: equal rows have equal keys; two different rows have equal keys
        with probability about ``2**-64``.

    Examples
    --------
    >>> k = row_keys(np.array([[0.25, 0.75], [0.75, 0.25], [0.25, 0.75]]))
    >>> bool(k[0] == k[2]), bool(k[0] == k[1])
    (True, False)
    """
    bits = np.ascontiguousarray(X, dtype=np.float64).view(np.uint64)
    h = np.full(len(bits), 0x9E3779B97F4A7C15, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(bits.shape[1]):  # (FNV-style: each column's bits mixed in by xor, then a multiply)
            h ^= bits[:, j]
            h *= np.uint64(0x100000001B3)
            h ^= h >> np.uint64(29)
    return h


class _Blocks:
    """The tie blocks of rows in score order (:func:`huc_ref.fast.intervals.tie_blocks`): each
    block's first and last row and each row's block, the rows' :class:`Extremes` statistics, and
    with ``keys`` (:func:`row_keys`) the groups of near-equal scores of different rows, each one
    block (:class:`_WholeRuns`; ``runs``), and each block's witness ends (``low_end``,
    ``high_end``: its smallest and largest score, or a run's ``low`` and ``high``, as the
    in-memory :class:`huc_ref.fast.intervals.Rows` takes them)."""

    def __init__(self, score: np.ndarray, error: np.ndarray, keys: np.ndarray | None = None, with_runs=False):
        m = len(score)
        blocks = tie_blocks(score, error, _WholeRuns(keys) if with_runs else None, order=np.arange(m), ranked=score)
        new = blocks[1]
        self.runs = blocks.runs
        self.score = score
        self.start = np.flatnonzero(np.concatenate([[True], new]))
        self.last = np.append(self.start[1:] - 1, m - 1)
        self.of = np.concatenate([[0], np.cumsum(new)])
        self.low_end, self.high_end = score[self.start].copy(), score[self.last].copy()
        for run in self.runs:  # (a run is one block: its first rank starts it)
            self.low_end[self.of[run.first]], self.high_end[self.of[run.first]] = run.low, run.high
        with np.errstate(over="ignore", invalid="ignore"):
            self.stats = (m, float(score[0]), float(score[-1]), float((score + error).max()),
                          float((score - error).min()), float(error.max()))


def _scan(out: Extremes, blocks: _Blocks, residual, T, col_table, kind, weights) -> Extremes:
    """Algorithm 2 on one score range (App. F.3): the entries of every column (the UC residuals,
    column 0, and each term ``T[j]`` in column ``col_table[j, kind]``, F.4; zeros dropped, as
    :class:`huc_ref.fast.intervals.Rows` drops them), each (column, block)'s sum of weighted
    entries by :func:`huc_ref.fast.numbers.block_sums` (the same bits in any order of the block's
    rows), and per subgroup (``weights``) and column the prefix sums' total and extremes with the
    first blocks attaining them, into ``out``."""
    m, start = len(residual), blocks.start
    out.m, out.lo, out.hi, out.up, out.down, out.largest = blocks.stats
    out.first_end = float(blocks.low_end[0])
    first = np.flatnonzero(residual)
    col, rank, val = [np.zeros(len(first), dtype=np.int64)], [first], [residual[first]]
    for j in range(len(T)):
        c = np.take(col_table[j], kind)
        v = T[j]
        nz = np.flatnonzero((c > 0) & (v != 0))
        col.append(c[nz].astype(np.int64))
        rank.append(nz)
        val.append(v[nz])
    col, rank, val = np.concatenate(col), np.concatenate(rank), np.concatenate(val)
    if not len(col):
        return out
    by_col = np.argsort(col, kind="stable")  # each column's entries, ranks rising (a column lies on one row of terms)
    col, rank, val = col[by_col], rank[by_col], val[by_col]
    blk = blocks.of[rank]
    run = np.flatnonzero(np.concatenate([[True], (col[1:] != col[:-1]) | (blk[1:] != blk[:-1])]))  # (column, block)
    run_col, run_blk = col[run], blk[run]
    col_first = np.flatnonzero(np.concatenate([[True], run_col[1:] != run_col[:-1]]))
    col_end = np.append(col_first[1:], len(run))
    columns, nb = run_col[col_first], len(start)
    for g, weight in enumerate(weights):
        x = val * (weight if np.ndim(weight) == 0 else np.take(weight, rank))
        sums = block_sums(x, run)
        for c, a, b in zip(columns.tolist(), col_first.tolist(), col_end.tolist()):
            C = np.cumsum(sums[a:b])
            i, j = int(np.argmax(C)), int(np.argmin(C))  # (the first of equal extremes: App. F.3's tie rule)
            out.has[g, c] = True
            out.total[g, c] = C[-1]
            for name, at in (("mx", i), ("mn", j)):
                b_ = int(run_blk[a + at])
                getattr(out, name)[g, c] = C[at]
                getattr(out, name + "_blk")[g, c] = b_
                getattr(out, name + "_hi")[g, c] = blocks.high_end[b_]
                getattr(out, name + "_next")[g, c] = blocks.low_end[b_ + 1] if b_ + 1 < nb else np.nan
    del m
    return out


def range_extremes(spec: _Spec, k: int, scale, score: np.ndarray, rows, labels) -> Extremes:
    """:class:`Extremes` of the rows of one score range of utility ``k`` (in score order; ``rows``
    as :class:`_Sorted` holds them): :class:`_Blocks` and :func:`_scan` of the UC residuals and
    path terms (F.4's columns: :func:`huc_ref.fast.utilities.term_columns` of the labels)."""
    nodes, colmap, _ = spec.plans[k]
    D = len(spec.depths[k])
    out = Extremes(max(1, len(spec.groups)), len(nodes) + 1)
    if not len(score):
        return out
    by_row = list(spec.utilities.values())[k].defined_everywhere  # (equal rows, equal values: ExactScores.same)
    keys = np.ascontiguousarray(rows[:, 2 + D + spec.weighted + len(spec.groups)]).view(np.uint64)
    blocks = _Blocks(score, np.ascontiguousarray(rows[:, 0]), keys if by_row else None, with_runs=True)
    table, kind = term_columns(spec.ft, colmap, spec.depths[k], labels) if D else (np.zeros((0, 1)), labels)
    weights = _rows_weights(spec, scale, rows, 2 + D)
    _scan(out, blocks, rows[:, 1], rows[:, 2:2 + D].T, table, kind, weights)
    if blocks.runs:
        out.near = _near(blocks.runs, rows[:, 1], rows[:, 2:2 + D], weights)
    if spec.flat:  # (the root's term is the UC residual: its column copies the UC column, as Rows' uc_copies)
        for name in ("has",) + Extremes.FIELDS:
            arr = getattr(out, name)
            arr[:, 1:] = arr[:, :1]
    return out


def _near(runs, residual, T, weights) -> tuple:
    """``(groups, rows, uc, node)`` of a range's groups of near-equal scores left whole
    (:attr:`Extremes.near`): :meth:`huc_ref.fast.intervals.Rows._tally`'s sums of one range."""
    uc = node = 0.0
    for run in runs:
        a, b = run.first, run.last + 1
        for w in weights:
            w = np.abs(w[a:b]) if np.ndim(w) else abs(w)
            uc = max(uc, float((w * np.abs(residual[a:b])).sum()))
            if T.shape[1]:
                node = max(node, float((w * np.abs(T[a:b]).max(axis=1)).sum()))
    return len(runs), sum(run.last - run.first + 1 for run in runs), uc, node


def near_ties(found: list[Extremes], flat: bool):
    """The :class:`huc_ref.results.NearTies` of one utility's ranges: the groups of near-equal
    scores left whole in Algorithm 2's sort (App. F.3), as :meth:`huc_ref.fast.intervals.Rows._tally`
    counts and bounds them.

    Parameters
    ----------
    found : list of Extremes
        The utility's ranges, each with its groups (``Extremes.near``).
    flat : bool
        Whether the tree is flat (its node terms are the UC residuals, Def. 3.2).

    Returns
    -------
    NearTies or None
        The groups and rows added up, each bound twice the largest group's sum (UC and HUC may be
        that much larger than reported, never smaller); None without groups left whole.

    Examples
    --------
    >>> e = Extremes(1, 1); e.near = (1, 3, 0.25, 0.5)
    >>> near_ties([e, Extremes(1, 1)], False)
    NearTies(decided_groups=0, decided_rows=0, undecided_groups=1, undecided_rows=3, uc_bound=0.5, huc_bound=1.0)
    """
    from ..results import NearTies
    groups = sum(e.near[0] for e in found)
    if not groups:
        return None
    uc, node = max(e.near[2] for e in found), max(e.near[3] for e in found)
    return NearTies(0, 0, groups, sum(e.near[1] for e in found), 2.0 * uc, 2.0 * (uc if flat else node))


# ------------------------------------------------------------------ the fold
def _unsure(found: list[Extremes]) -> list[tuple[int, int]]:
    """The boundaries between consecutive non-empty ranges that float64 cannot certify, as pairs of
    indices into ``found`` (the non-empty ranges on either side, empty ones perhaps between): the
    two scores around it closer than twice the largest error bound, and some score below it raised
    by its error not below some score above it lowered by its error
    (:func:`huc_ref.fast.intervals.tie_blocks`' gaps)."""
    live = [k for k, e in enumerate(found) if e.m]
    if len(live) < 2:
        return []
    largest = max(found[k].largest for k in live)
    up = np.maximum.accumulate([found[k].up for k in live])
    down = np.minimum.accumulate([found[k].down for k in live][::-1])[::-1]
    bad = []
    for j in range(1, len(live)):
        a, b = found[live[j - 1]], found[live[j]]
        if b.lo - a.hi <= 2.0 * largest and not up[j - 1] < down[j]:
            bad.append((live[j - 1], live[j]))
    return bad


def fold(found: list[Extremes]):
    """Algorithm 2's result (App. F.3) from the ranges' :class:`Extremes`, in score order: ``(sup,
    moment, intervals)``, ``G x columns`` arrays and a list of witnesses (``(low, high)`` or None,
    row-major), the in-memory :class:`huc_ref.fast.intervals.Rows`' answer.

    A column's prefix sum at a block of range ``r`` is the totals of the ranges before ``r`` plus
    the range's own prefix sum there, so its largest prefix sum over the sample is the largest of
    ``carry_r + mx_r``, the first attaining it kept (a later range replaces it only where strictly
    larger: App. F.3's first maximiser), and likewise the smallest.  With the empty prefix
    ``C_0 = 0``: ``sup = max(C_max, 0) - min(C_min, 0)``; the witness runs from the block after the
    earlier of the two extreme blocks (the sample's first block where that is the empty prefix)
    to the later one, and the moment's sign is that of ``C_b - C_r``.

    Parameters
    ----------
    found : list of Extremes
        One utility's score ranges, in score order (empty ones included), each with ``G`` subgroups
        and the same columns.

    Returns
    -------
    sup : numpy.ndarray
        ``G x columns``: each column's supremum over intervals (0 where no interval has an entry).
    moment : numpy.ndarray
        ``G x columns``: the witness's signed sum, ``+sup`` or ``-sup``.
    intervals : list of (float, float) or None
        Row-major, each cell's witness ``(low, high)`` of scores, None where ``sup`` is 0.

    Examples
    --------
    >>> e = Extremes(1, 1, 2); e.lo = e.first_end = 0.25
    >>> e.has[:], e.total[:], e.mx[:], e.mx_hi[:], e.mn[:], e.mn_blk[:], e.mn_hi[:] = True, 0.5, 0.5, 0.25, 0.0, 1, .5
    >>> e.mx_next[:], e.mn_next[:] = 0.5, np.nan
    >>> sup, moment, intervals = fold([e])
    >>> sup.tolist(), moment.tolist(), intervals  # the first block alone: C_1 = 1/2
    ([[0.5]], [[0.5]], [(0.25, 0.25)])
    """
    live = [e for e in found if e.m]
    G, n_cols = found[0].has.shape
    first_low = live[0].first_end if live else np.nan
    carry = np.zeros((G, n_cols))
    best = {}
    for side in ("mx", "mn"):
        value = np.full((G, n_cols), -np.inf if side == "mx" else np.inf)
        where = np.full((G, n_cols), -1, dtype=np.int64)  # the range (in live order) of the extreme, -1: none
        blk = np.zeros((G, n_cols), dtype=np.int64)
        hi, nxt = np.full((G, n_cols), np.nan), np.full((G, n_cols), np.nan)
        best[side] = (value, where, blk, hi, nxt)
    next_low = [live[j + 1].first_end if j + 1 < len(live) else np.nan for j in range(len(live))]
    for j, e in enumerate(live):
        for side, better in (("mx", np.greater), ("mn", np.less)):
            value, where, blk, hi, nxt = best[side]
            cand = carry + getattr(e, side)
            upd = e.has & better(cand, value)
            value[upd], where[upd], blk[upd] = cand[upd], j, getattr(e, side + "_blk")[upd]
            hi[upd] = getattr(e, side + "_hi")[upd]
            following = getattr(e, side + "_next")
            nxt[upd] = np.where(np.isnan(following), next_low[j], following)[upd]
        carry = np.where(e.has, carry + e.total, carry)
    mx, mx_at, mx_blk, mx_hi, mx_next = best["mx"]
    mn, mn_at, mn_blk, mn_hi, mn_next = best["mn"]
    has_mx, has_mn = mx > 0, mn < 0  # (beyond the empty prefix C_0 = 0)
    sup = np.maximum(mx, 0.0) - np.minimum(mn, 0.0)
    # positions in the sample's block order: (range, block), the empty prefix before every block
    p_mx = np.where(has_mx, mx_at, -1), np.where(has_mx, mx_blk, -1)
    p_mn = np.where(has_mn, mn_at, -1), np.where(has_mn, mn_blk, -1)
    mx_later = (p_mx[0] > p_mn[0]) | ((p_mx[0] == p_mn[0]) & (p_mx[1] > p_mn[1]))
    moment = np.where(mx_later, sup, -sup)
    live_cell = sup > 0
    low = np.where(mx_later, np.where(has_mn, mn_next, first_low), np.where(has_mx, mx_next, first_low))
    high = np.where(mx_later, mx_hi, mn_hi)
    intervals = [(float(a), float(b)) if ok else None for a, b, ok in zip(low.ravel().tolist(), high.ravel().tolist(),
                                                                        live_cell.ravel().tolist())]
    return np.where(live_cell, sup, 0.0), np.where(live_cell, moment, 0.0), intervals


class _Found:
    """One utility's answer in the shape :func:`huc_ref.fast.audit.result_rows` reads a
    :class:`huc_ref.fast.intervals.Rows` in: ``best`` per subgroup ``(sup, r, b, moment)``, ``nodes``,
    and ``intervals(r, b)`` (here ``r`` indexes the witnesses, ``b = r + 1`` where there is one)."""

    def __init__(self, nodes, sup, moment, intervals, near=None):
        self.near_ties = near  # (the groups of near-equal scores left whole: :func:`near_ties`)
        G, n_cols = sup.shape
        index = np.arange(G * n_cols).reshape(G, n_cols)
        live = np.array([w is not None for w in intervals]).reshape(G, n_cols)
        r, b = np.where(live, index, 0), np.where(live, index + 1, 0)
        self.best = [(sup[g], r[g], b[g], moment[g]) for g in range(G)]
        self.nodes, self._intervals = nodes, intervals

    def intervals(self, r, b) -> list:
        return [self._intervals[i] if j != i else None for i, j in zip(r.tolist(), b.tolist())]


# ------------------------------------------------------------------ the inputs as partitions
def _label_order(tree: LabelTree, y_prob, labels):
    """``y_prob`` (a Dask DataFrame or Array) with its columns in the tree's label order, by the
    rules of :meth:`huc_ref.tree.LabelTree.label_columns`: named columns (``labels=``, or a
    DataFrame's column names where any is a label) are reordered by name; unnamed ones are taken
    as they are only where the tree's order was declared or is ``classes_``' sorted order."""
    if _frame(y_prob):
        names = [str(c) for c in y_prob.columns]
        if labels is None and set(names) & set(tree.labels):
            labels = names
        order = tree.column_order(labels)
        return y_prob if order is None else y_prob[[y_prob.columns[j] for j in order]]
    order = tree.column_order(labels)
    if order is None:
        return y_prob
    if getattr(y_prob, "ndim", None) == 2:
        return y_prob[:, order]
    return y_prob  # (the shape check names it)


def _check_rows(tree: LabelTree, y_prob):
    """The in-memory audit's checks of ``y_prob``'s type and shape (numbers, ``K`` columns)."""
    if _frame(y_prob):
        kinds = [d if isinstance(d, np.dtype) else np.dtype(object) for d in y_prob.dtypes]
        dtype = np.result_type(*kinds) if kinds else np.dtype(float)
        shape = (None, len(y_prob.columns))
    else:
        dtype, shape = np.dtype(y_prob.dtype), tuple(y_prob.shape)
    if dtype.kind not in "iuf":
        raise HUCError(f"y_prob: expected numbers, got an array of dtype {dtype}", kind="type")
    if len(shape) != 2 or shape[1] != tree.K:
        shown = tuple(int(s) if s is not None and not (isinstance(s, float) and math.isnan(s)) else "?"
                      for s in shape)
        raise HUCError(f"y_prob: expected {tree.K} columns (one per label), got shape {shown}", kind="length")


def _subgroup(name, values, n: int, where: str) -> np.ndarray:
    """A subgroup's ``n`` values given whole, checked as the in-memory audit checks them."""
    c = subgroup_column(values, n, where)
    check_whole_population(name, c, where + "[{i}]")
    return c


def _partitions(tree, y_true, y_prob, subgroups, weights, per_atom: bool):
    """The sample as partitions of rows: ``(blocks, sizes, problems)``: per partition the Dask
    objects of its predictions, labels, weights (or None) and subgroup values; the partitions' row
    counts where known; and the problems found in arguments that are not Dask collections (checked
    here, whole, as the in-memory audit checks them).  Columns of one DataFrame are taken
    partition by partition; otherwise every argument is made a Dask array with ``y_prob``'s row
    chunks (a DataFrame's row counts are computed for that)."""
    import dask.array as da
    names = list(subgroups) if subgroups is not None else []
    values = [subgroups[g] for g in names]
    others = [y_true, weights] + values
    lazy = [x for x in others if x is not None and is_lazy(x)]
    if _frame(y_prob) and not per_atom and all((_frame(x) or _series(x)) and x.npartitions == y_prob.npartitions
                                               for x in lazy) and len(lazy) == len([x for x in others
                                                                                     if x is not None]):
        parts = [x.to_delayed() if x is not None else None for x in [y_prob] + others]
        # (Dask's optimiser may fuse small partitions where few columns are read, so columns of one
        # DataFrame with equal npartitions can still give pieces that do not line up: then by rows)
        if len({len(p) for p in parts if p is not None}) == 1:
            blocks = [tuple(p[i] if p is not None else None for p in parts) for i in range(len(parts[0]))]
            return blocks, None, []
    if _frame(y_prob):
        P = y_prob.to_dask_array()  # (sizes below: lengths=True checks them against npartitions, which fusing breaks)
    elif is_lazy(y_prob):
        P = y_prob
    else:
        rows = next((x for x in lazy if hasattr(x, "chunks")), None)
        X = y_prob if isinstance(y_prob, np.ndarray) else as_floats(y_prob, "y_prob")
        chunks = rows.chunks[0] if rows is not None and not any(map(math.isnan, rows.chunks[0])) else \
            max(1, CHUNK // max(1, tree.K))
        P = da.from_array(X, chunks=(chunks, -1))
    if any(math.isnan(c) for c in P.chunks[0]):
        P = P.compute_chunk_sizes()
    P = P.rechunk({1: -1})
    sizes = tuple(int(c) for c in P.chunks[0])
    n = sum(sizes)
    problems = []

    def aligned(x, rank, check, where):
        """``x`` as a Dask array in ``P``'s row chunks; an argument given whole is checked whole."""
        if x is None:
            return None
        if is_lazy(x):
            if _series(x) or _frame(x):
                x = x.to_dask_array()
            if any(math.isnan(c) for c in x.chunks[0]):
                x = x.compute_chunk_sizes()
            if x.ndim != 1 or x.shape[0] != n:  # (the in-memory message, from an array of that shape)
                try:
                    check(np.zeros(x.shape, dtype=x.dtype if x.dtype.kind in "iuf" else float))
                except HUCError as err:
                    problems.append(_Problem(rank, None, err))
                return None
            return x.rechunk((sizes,))
        try:
            x = check(x)
        except HUCError as err:
            problems.append(_Problem(rank, None, err))
            return None
        return da.from_array(np.asarray(x), chunks=(sizes,))

    y = aligned(y_true, _LABELS, lambda v: label_ids(v, tree, n), "y_true")
    w = aligned(weights, _WEIGHTS, lambda v: entries(v, n, "sample_weight", "a finite nonnegative number",
                                                     lambda a: a >= 0, "float_range"), "sample_weight")
    C = []
    for g, (name, v) in enumerate(zip(names, values)):
        where = f"subgroups[{printable(name, 80)!r}]"
        C.append(aligned(v, _SUBGROUP + g, lambda v, where=where, name=name: _subgroup(name, v, n, where), where))
    if problems:
        return None, sizes, problems
    arrays = [P.to_delayed().ravel()] + [x.to_delayed().ravel() if x is not None else None for x in [y, w] + C]
    blocks = [tuple(a[i] if a is not None else None for a in arrays) for i in range(len(sizes))]
    return blocks, sizes, problems


# ------------------------------------------------------------------ progress on a terminal
class _Progress:
    """Tasks done of a phase, on ``report`` (e.g. stderr) every 2 seconds once a phase has run 2
    seconds (the local schedulers; under a distributed Client each phase is reported as it starts)."""

    def __init__(self, report):
        self.report = report

    def __call__(self, phase: str):
        from contextlib import nullcontext
        if self.report is None:
            return nullcontext()
        if _client():
            self.report(f"{phase}...")
            return nullcontext()
        from dask.callbacks import Callback
        report = self.report

        class Ticks(Callback):
            def _start_state(self, dsk, state):
                self.total, self.done, self.t0, self.last = len(state["ready"]) + len(state["waiting"]), 0, \
                    time.monotonic(), time.monotonic()

            def _posttask(self, key, result, dsk, state, worker_id):
                self.done += 1
                now = time.monotonic()
                if now - self.t0 >= 2 and now - self.last >= 2:
                    self.last = now
                    report(f"{phase}: {self.done} of {self.total} tasks, {now - self.t0:.0f} s")
        return Ticks()


# ------------------------------------------------------------------ the audit
def audit(y_true, y_prob, tree: LabelTree, utilities: Mapping[str, Utility], *, subgroups=None, sample_weight=None,
          accelerator: str = "numpy", renormalize: bool = False, labels=None, null_draws=None, seed: int = 0,
          max_null_work: int | None = None, shuffle: str | None = None, range_rows: int | None = None,
          progress=None) -> AuditResult:
    """:func:`huc_ref.fast.audit.audit` of a sample held as Dask collections (its checks of
    ``accelerator`` and ``tree`` made first; it calls this when any of ``y_true``, ``y_prob``,
    ``subgroups``' values or ``sample_weight`` is one): the same arguments, rules, messages and
    :class:`~huc_ref.results.AuditResult` (UC, HUC, every candidate row and its witness, Def. 2.1,
    3.2 by Algorithm 2, App. F.3-F.4), computed partition by partition on the Dask scheduler in
    effect (see the module).

    Parameters
    ----------
    y_true : array-like, Dask Array or Series of n labels
        Labels as names or label ids.
    y_prob : array-like, Dask Array or DataFrame of shape (n, K)
        Probabilities, in the tree's label order or by name (``labels``, a DataFrame's columns).
    tree : LabelTree
        The label tree.
    utilities : dict of str to Utility
        The utilities by name, each built on ``tree``.
    subgroups : mapping, optional
        Name -> ``n`` values in [-1, 1] (numpy, or Dask collections of the rows); default: everyone.
    sample_weight : array-like, Dask Array or Series of shape (n,), optional
        Nonnegative weights with a positive sum; uniform when omitted.
    accelerator : {"numpy", "numba"}, default "numpy"
        The kernels of each partition's scores and sort.
    renormalize : bool, default False
        Each row stands for itself divided by its sum.
    labels : array-like of str, optional
        The columns' names in order (:meth:`huc_ref.tree.LabelTree.column_order`).
    null_draws : int, optional
        p-values from this many redraws of the labels under the null ``Y_i ~ P_i``, the in-memory
        draws themselves (``result.significance``).
    seed : int, default 0
        Seeds the redraws.
    max_null_work : int, optional
        The redraws' budget (:func:`huc_ref.significance.check_null_work`, as in memory).
    shuffle : {"disk", "tasks"}, optional
        How sorted rows reach the score ranges: a spill folder, or Dask tasks; default: see the module.
    range_rows : int, optional
        Rows per score range (default: about a partition's memory in sorted rows).
    progress : callable, optional
        Given a line of progress now and then (``huc audit`` prints them on stderr).

    Returns
    -------
    AuditResult
        The in-memory fast path's answer (:func:`huc_ref.fast.audit.audit`), ``arithmetic == "float64"``;
        groups of near-equal scores left whole are reported in its ``near_ties``.

    Raises
    ------
    HUCError
        The in-memory audit's, with its message: a bad row is named by its row in the whole
        sample; and for ``shuffle`` other than ``"disk"`` or ``"tasks"``, or partitions of the
        arguments that do not line up.

    Examples
    --------
    >>> import dask.array as da
    >>> from huc_ref import LabelTree, class_indicator
    >>> t = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    >>> P = da.from_array(np.array([[0.75, 0.25], [0.5, 0.5], [0.5, 0.5], [0.25, 0.75]]), chunks=2)
    >>> r = audit(da.from_array(np.array([0, 1, 0, 1]), chunks=2), P, t, {"u": class_indicator(t, "pos")})
    >>> r.uc.sup, r.uc.interval  # the first row alone: |0 - 1/4| / 4
    (0.0625, (0.25, 0.25))
    """
    groups = None if subgroups is None else dict(subgroup_mapping(subgroups))
    if groups is not None and WHOLE_POPULATION not in groups:  # K.3: "The whole-population indicator is always
        groups = {WHOLE_POPULATION: None, **groups}            # included" (None: 1 on every row, in each block)
    if is_lazy(y_prob):
        y_prob = _label_order(tree, y_prob, labels)
        _check_rows(tree, y_prob)
    else:
        y_prob = tree.label_columns(y_prob, labels)
        P = y_prob if isinstance(y_prob, np.ndarray) else as_floats(y_prob, "y_prob")
        _check_rows(tree, P)
        y_prob = P
    per_atom = any(_per_atom_rows(u) is not None for u in utilities.values()) if isinstance(utilities, Mapping) \
        else False
    names = list(groups) if groups is not None else []
    for name in names:  # (names are checked before any value, as the in-memory audit checks them first)
        check_name(name, "subgroups")
    blocks, sizes, problems = _partitions(tree, y_true, y_prob, groups, sample_weight, per_atom)
    if sizes is not None and sum(sizes) == 0:
        raise HUCError("y_prob: no rows (an audit needs at least one atom)", kind="length")
    check_utilities(tree, sum(sizes) if sizes is not None else 0, utilities)
    if null_draws is not None:
        null_draws, seed = check_null(null_draws, seed)
        if null_draws == "exact":
            problems.append(_Problem(_NULL, None, HUCError(
                "null_draws: 'exact' enumerates label assignments of a FiniteDistribution (huc_ref.audit); for "
                "arrays give a number of draws", kind="option")))
    if problems:
        raise min(problems, key=lambda p: p.rank).error(0)
    return audit_partitions(tree, utilities, blocks, sizes, names, sample_weight is not None, accelerator=accelerator,
                            renormalize=renormalize, null_draws=null_draws, seed=seed, max_null_work=max_null_work,
                            shuffle=shuffle, range_rows=range_rows, progress=progress)


def audit_partitions(tree: LabelTree, utilities: Mapping[str, Utility], blocks: list, sizes, groups: list,
                     weighted: bool, *, accelerator: str = "numpy", renormalize: bool = False, null_draws=None,
                     seed: int = 0, max_null_work: int | None = None, shuffle: str | None = None,
                     range_rows: int | None = None, progress=None, spill: str | None = None) -> AuditResult:
    """The audit of a sample given as partitions (UC, HUC and witnesses, Def. 2.1, 3.2 by Algorithm 2,
    App. F.3-F.4; the module's steps): ``blocks``, per partition Dask objects (or plain values) of
    its predictions (in the tree's label order), labels, raw weights (None without) and the values
    of the subgroups ``groups`` (none: everyone); ``sizes`` its row counts where known (else None);
    ``spill``: the folder in which ``shuffle="disk"`` makes its own (default: the system's
    temporary folder).  Arguments checked as :func:`audit` checks them (null draws and their budget
    ``max_null_work``, accelerator), the budget before any partition is read where ``sizes`` are known.

    Parameters
    ----------
    tree : LabelTree
        The label tree.
    utilities : dict of str to Utility
        The utilities by name, each built on ``tree``.
    blocks : list of tuple
        Per partition ``(P, y, w, *C)``: its predictions in the tree's label order, labels, raw
        weights (None without) and the subgroups' values, Dask objects (``dask.delayed``) or values.
    sizes : sequence of int or None
        The partitions' row counts where known (rows are then numbered before any is read).
    groups : list of str
        The subgroups' names, one per ``C`` of a block (empty: everyone).
    weighted : bool
        Whether the blocks carry weights.
    accelerator : {"numpy", "numba"}, default "numpy"
        The kernels of each partition's scores and sort.
    renormalize : bool, default False
        Each row stands for itself divided by its sum.
    null_draws : int, optional
        p-values from this many redraws of the labels under the null ``Y_i ~ P_i``.
    seed : int, default 0
        Seeds the redraws.
    max_null_work : int, optional
        The redraws' budget (:func:`huc_ref.significance.check_null_work`).
    shuffle : {"disk", "tasks"}, optional
        How sorted rows reach the score ranges; default: see the module.
    range_rows : int, optional
        Rows per score range.
    progress : callable, optional
        Given a line of progress now and then.
    spill : str, optional
        The folder in which ``shuffle="disk"`` makes its spill folder (removed at the end).

    Returns
    -------
    AuditResult
        UC, HUC and every candidate row with its witness, ``arithmetic == "float64"``.

    Raises
    ------
    HUCError
        The first bad input the in-memory audit would name (rows numbered in the whole sample), no
        rows, weights summing to 0, an unknown ``accelerator`` or ``shuffle``, or redraws beyond
        ``max_null_work``.

    Examples
    --------
    >>> from huc_ref import LabelTree, class_indicator
    >>> t = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    >>> blocks = [(np.array([[0.75, 0.25], [0.5, 0.5]]), np.array([0, 1]), None),
    ...           (np.array([[0.5, 0.5], [0.25, 0.75]]), np.array([0, 1]), None)]
    >>> r = audit_partitions(t, {"u": class_indicator(t, "pos")}, blocks, [2, 2], [], False)
    >>> r.uc.sup, r.uc.interval  # fast.audit's answer on the four rows
    (0.0625, (0.25, 0.25))
    """
    import dask
    check_accelerator(accelerator)
    names = list(groups)
    if null_draws is not None:
        null_draws, seed = check_null(null_draws, seed)

    def budget(n: int) -> None:  # (the in-memory audit's refusal of --null's work beyond max_null_work)
        if null_draws is not None:
            check_null_work(null_draws, n, tree.K, len(utilities), candidate_rows(utilities, len(names) or 1),
                            engine="fast", max_work=max_null_work)
    if sizes is not None:
        budget(sum(sizes))
    ft = FastTree(tree)
    spec = _Spec(ft, utilities, accelerator, None if renormalize else ROW_SUM_TOLERANCE, names, weighted, None, 0)
    ranges = len(blocks) if sizes is None or not sum(sizes) else \
        -(-sum(sizes) // (range_rows or _range_rows(spec, max(sizes))))
    spec.sketch = int(np.clip(4 * ranges, *SKETCH))  # (4 points a range: a boundary's rank within a quarter range)
    shuffle = _shuffle(shuffle, None if sizes is None else sum(sizes) * spec.row_bytes())
    spill = spec.spill = tempfile.mkdtemp(prefix="huc-scale-", dir=spill) if shuffle == "disk" else None
    if null_draws is not None:
        spec.null = _null_plan(ft, utilities)
    phase = _Progress(progress)
    try:
        spec_key = dask.delayed(spec, pure=True)
        offsets = np.concatenate([[0], np.cumsum(sizes)]).tolist() if sizes is not None else [None] * len(blocks)
        parts, found = _map(spec_key, _prepare, blocks, offsets, shuffle, phase, "scores and terms")
        counts = [f.m for f in found]
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(int).tolist()
        problem = _first_problem(found, offsets)
        if problem is not None:
            raise problem
        n = int(offsets[-1])
        if n == 0:
            raise HUCError("y_prob: no rows (an audit needs at least one atom)", kind="length")
        if sizes is None:
            check_utilities(tree, n, utilities)
            budget(n)
        scale = 1.0 / n
        if weighted:
            wmax = max(f.wmax for f in found)
            if not wmax > 0:
                raise HUCError("sample_weight: sums to 0; the weights need a positive sum", kind="probability_sum")
            sums = dask.compute(*[dask.delayed(_weight_sum)(p, wmax) for p in parts])
            scale = (wmax, float(sum(sums, Fraction(0))))
        jobs = _jobs(spec, found, n, range_rows)

        def run(more):
            return _run_ranges(spec_key, parts, more, _range_task, scale, shuffle, phase)
        results = run(jobs)
        tables = {}
        for k, name in enumerate(utilities):
            found = _certified(run, k, jobs[k], results[k])[1]
            tables[name] = _Found(spec.plans[k][0], *fold(found), near_ties(found, spec.flat))
        result = result_rows(tree, tables, names or ["all"], n, True)
        if null_draws is not None:
            draws = _null_draws(spec, spec_key, blocks, offsets, scale, n, null_draws, seed, shuffle, range_rows,
                                phase)
            result = resampling_p_values(n, tree.K, result, draws, null_draws, seed)
    finally:
        if spill is not None:
            shutil.rmtree(spill, ignore_errors=True)
    return result


def _null_plan(ft: FastTree, utilities) -> list:
    """Per utility what every partition's null tables share: its columns, its path table, its
    utility values where they are one row for every prediction (a table's), and the needed nodes'
    count (:func:`huc_ref.fast.significance.label_free_tables` of one uniform row)."""
    from .significance import label_free_tables
    one = np.full((1, ft.K), 1.0 / ft.K)
    return [(n_cols, paths, means.U[0] if means.U.strides[0] == 0 else None, mu.shape[0])
            for n_cols, paths, means, mu, _ in label_free_tables(ft, one, utilities)]


def _certified(run, k: int, ranges: list, found: list):
    """The ranges of utility ``k`` and their :class:`Extremes`, where every boundary between two
    non-empty ranges is one float64 certifies (:func:`_unsure`): the ranges on either side of one
    it cannot are joined and scanned again as one range (its tie blocks then found as the
    in-memory sort finds them), until none is left; ``run(jobs)`` scans ranges (:func:`_run_ranges`)."""
    while True:
        bad = _unsure(found)
        if not bad:
            return ranges, found
        joined = np.zeros(len(ranges), dtype=bool)  # joined[j]: range j is scanned with the one before it
        for i, j in bad:
            joined[i + 1:j + 1] = True
        groups, start = [], 0
        for j in range(1, len(ranges) + 1):
            if j == len(ranges) or not joined[j]:
                groups.append((start, j))
                start = j
        again = [(ranges[a][0], ranges[b - 1][1]) for a, b in groups if b - a > 1]
        done = iter(run({k: again})[k])
        ranges = [(ranges[a][0], ranges[b - 1][1]) for a, b in groups]
        found = [next(done) if b - a > 1 else found[a] for a, b in groups]


def _run_ranges(spec_key, parts, jobs: dict, task, arg, shuffle: str, phase, drawn=None) -> dict:
    """``task(spec, k, arg, lo, hi, *pieces)`` of every range of ``jobs`` (utility index -> ``[(lo,
    hi), ...]``), in one Dask computation: with ``shuffle="tasks"`` a slice task per partition and
    range, else each range reads its slices from the partitions' files; ``drawn``: per partition the
    labels a batch of null draws gave its rows (per utility, in its sorted order)."""
    import dask
    drawn = drawn if drawn is not None else [None] * len(parts)
    tasks, where = [], []
    for k, ranges in jobs.items():
        for lo, hi in ranges:
            if shuffle == "tasks":
                pieces = [dask.delayed(_piece)(p, k, lo, hi, d) for p, d in zip(parts, drawn)]
            else:
                pieces = [(p.sorted[k], None if d is None else d[k]) for p, d in zip(parts, drawn)]
            tasks.append(dask.delayed(task)(spec_key, k, arg, lo, hi, *pieces))
            where.append(k)
    with phase(f"huc audit: Algorithm 2 on {len(tasks)} score ranges"):
        done = dask.compute(*tasks)
    out = {k: [] for k in jobs}
    for k, e in zip(where, done):
        out[k].append(e)
    return out


def _map(spec_key, function, blocks, offsets, shuffle: str, phase, what: str, *args):
    """``function(spec, i, offset, *args, *block)`` of every partition: persisted (``"tasks"``: the
    workers keep the sorted rows) and their summaries fetched, or computed (``"disk"``: the rows are
    in the spill folder).  Returns ``(parts, summaries)``."""
    import dask
    parts = [dask.delayed(function, pure=True)(spec_key, i, offsets[i], *args, *b) for i, b in enumerate(blocks)]
    with phase(f"huc audit: {what} of {len(parts)} partitions"):
        if shuffle == "tasks":
            parts = list(dask.persist(*parts))
            return parts, dask.compute(*[dask.delayed(_summary)(p) for p in parts])
        found = dask.compute(*parts)
        return found, found


def _first_problem(found: list, offsets: list):
    """The bad input the in-memory audit would name first, among the partitions' (or None)."""
    ranked = [(f.problem.rank, i) for i, f in enumerate(found) if f.problem is not None]
    if not ranked:
        return None
    i = min(ranked)[1]
    return found[i].problem.error(int(offsets[i]))


def _range_rows(spec: _Spec, partition: int) -> int:
    """Rows of a score range by default: as many as take the memory of a partition's input (its
    predictions, label, weight and subgroup values) in one utility's sorted rows, so that a range
    task holds about what a map task holds (a sorted row is much smaller than a prediction of many
    classes: then fewer, larger ranges, and fewer slices to gather)."""
    given = 8 * (spec.ft.K + 1 + spec.weighted + len(spec.groups))
    sorted_ = max(8 * (4 + len(d) + spec.weighted + len(spec.groups)) for d in spec.depths)
    return max(1, partition) * max(1, given // sorted_)


def _jobs(spec: _Spec, found: list, n: int, range_rows) -> dict:
    """Per utility, its score ranges ``[(lo, hi), ...]`` from the partitions' sketches (:func:`boundaries`),
    of ``range_rows`` rows each (default :func:`_range_rows` of the largest partition)."""
    count = len(spec.depths)
    n_ranges = max(1, -(-n // (range_rows or _range_rows(spec, max(f.m for f in found)))))
    jobs = {}
    for k in range(count):
        cuts = boundaries([f.sketches[k] for f in found if f.m], n, n_ranges).tolist()
        edges = [-np.inf] + cuts + [np.inf]
        jobs[k] = [(edges[r], edges[r + 1]) for r in range(len(edges) - 1)]
    return jobs


# ------------------------------------------------------------------ the null of calibration by partitions
def _null_prepare(spec: _Spec, index: int, offset: int, scale, P, y, w, *C) -> _Part:
    """The map of the null draws (Sec. 2.1's null ``Y_i ~ p_i``; :mod:`huc_ref.fast.significance`)
    for partition ``index``: the label-free tables of its rows
    (:func:`huc_ref.fast.significance.label_free_tables`), per utility sorted by score with each
    row's error bound, utility values (where they differ by row), means of the needed nodes and
    subgroup weights, and the rows' cumulative predictions (for drawing labels)."""
    from .numbers import ExactRows
    from .significance import label_free_tables
    X, w, C = as_floats(_numbers(P), "y_prob"), _numbers(w), [
        np.ones(len(P)) if c is None else subgroup_column(_numbers(c), len(P), "subgroups") for c in C]
    m = len(X)
    if spec.tolerance is None:  # renormalize=True: each row divided by its sum, as the in-memory null takes it
        X = X / X.sum(axis=1, keepdims=True)
    weights = [] if spec.scalar_weight else _weights(spec, scale, w, C)
    rows = np.arange(offset, offset + m)
    sorted_, sketches, largest = [], [], []
    if not m:  # (no rows: empty tables of the widths the ranges read)
        for k, (_, _, shared, needed) in enumerate(spec.null):
            width = 1 + (0 if shared is not None else spec.ft.K) + needed + len(weights)
            sorted_.append(_Sorted(np.zeros(0), np.zeros((0, width)), np.zeros(0), spec.spill, f"null-p{index}-u{k}"))
        part = _Part(0, None, 0.0, sorted_, [(np.zeros(0), np.zeros(0, dtype=np.int64))] * len(spec.null),
                     [0.0] * len(spec.null))
        part.cdf, part.index = _Stored(np.zeros((0, spec.ft.K)), spec.spill, f"null-p{index}.cdf"), index
        return part
    step = max(1, -(-m // spec.sketch))
    for k, (_, _, means, mu, error) in enumerate(label_free_tables(spec.ft, X, spec.utilities, rows, ExactRows(X))):
        order, ranked = sort_scores(means.score, spec.engine)
        shared = spec.null[k][2] is not None  # (one row of values for every prediction: kept once, not per row)
        parts = [error[:, None]] + ([] if shared else [means.U]) + [mu.T] + [x[:, None] for x in weights]
        table = np.concatenate(parts, axis=1).take(order, axis=0)
        points = np.arange(0, m, step)
        sketches.append((ranked[points], np.diff(np.append(points, m))))
        largest.append(float(error.max()) if m else 0.0)
        sorted_.append(_Sorted(ranked, table, order, spec.spill, f"null-p{index}-u{k}"))
    cdf = np.cumsum(X, axis=1)
    cdf /= cdf[:, -1:]
    part = _Part(m, None, 0.0, sorted_, sketches, largest)
    part.cdf, part.index = _Stored(cdf, spec.spill, f"null-p{index}.cdf"), index
    return part


def _draw(spec: _Spec, part: _Part, first: int, last: int, offset: int, n: int, seed: int) -> list:
    """The labels of null draws ``first .. last - 1`` for one partition's rows (rows ``offset ..``
    of ``n``), per utility in its sorted order (``m x draws``): the in-memory draws themselves
    (:func:`huc_ref.fast.significance.null_sups`: draw ``b``'s uniforms are numbers ``b n .. b n +
    n - 1`` of the seeded generator, one 64-bit number each, so a partition's are reached by
    advancing it; :func:`huc_ref.fast.significance.draw_labels`)."""
    from .significance import draw_labels
    m = part.m
    cdf = part.cdf.rows(0, m)
    Y = np.empty((last - first, m), dtype=np.int16 if spec.ft.K < 2**15 else np.int64)
    for b in range(first, last):
        bits = np.random.PCG64(seed)
        bits.advance(b * n + offset)
        k = np.random.Generator(bits).integers(1, 2**53, size=m, endpoint=True, dtype=np.int64)  # (uniforms())
        Y[b - first] = draw_labels(cdf, k)
    out = []
    for j, s in enumerate(part.sorted):
        order = s.ints.rows(0, m)
        out.append(_Stored(np.ascontiguousarray(Y[:, order].T), spec.spill, f"drawn{first}-p{part.index}-u{j}"))
    return out


def _null_stats(spec: _Spec, k: int, arg, lo: float, hi: float, *pieces) -> Extremes:
    """A null range's rows' statistics (their boundaries' certificates, :func:`_unsure`)."""
    found = _gather(pieces, lo, hi)
    return Extremes.of_rows(None if found is None else _Blocks(found[0], np.ascontiguousarray(found[1][:, 0])))


def _null_range(spec: _Spec, k: int, scale, lo: float, hi: float, *pieces) -> list:
    """One score range of utility ``k`` under each draw of a batch: :class:`Extremes` per draw
    (:meth:`huc_ref.fast.significance.NullAudit.sups`' terms: ``u(p_i, y_i) - mu_u(p_i)`` and the
    means one depth apart on each drawn label's path)."""
    n_cols, (cols, up, down), shared_U, needed = spec.null[k]
    G = max(1, len(spec.groups))
    found = _gather(pieces, lo, hi)
    if found is None:
        width = pieces[0][1].rows(0, 0).shape[1] if isinstance(pieces[0][0], _Sorted) else pieces[0][3].shape[1]
        return [Extremes(G, n_cols) for _ in range(width)]
    score, rows, _, drawn = found
    blocks = _Blocks(score, np.ascontiguousarray(rows[:, 0]))
    at = 1 if shared_U is not None else 1 + spec.ft.K
    U = shared_U if shared_U is not None else rows[:, 1:at]
    mu = rows[:, at:at + needed]
    weights = [scale] if spec.scalar_weight else [rows[:, at + needed + g] for g in range(G)]
    i = np.arange(len(score))
    out = []
    for j in range(drawn.shape[1]):
        y = drawn[:, j].astype(np.intp)
        at_label = U.take(y) if shared_U is not None else U[i, y]
        T = mu[i[None, :], down[:, y]] - mu[i[None, :], up[:, y]]
        out.append(_scan(Extremes(G, n_cols), blocks, at_label - score, T, cols, y, weights))
    return out


def _null_draws(spec: _Spec, spec_key, blocks, offsets: list, scale, n: int, draws: int, seed: int, shuffle: str,
                range_rows, phase):
    """``rng -> iterator`` of the ``draws`` null draws' row sups, for
    :func:`huc_ref.significance.resampling_p_values`: the draws of the in-memory audit (the seeded
    generator's numbers, :func:`_draw`; ``rng`` is that generator, whose numbers are taken where
    they fall), each audited by ranges and the fold as the sample is (:func:`fold`)."""
    import dask
    parts, found = _map(spec_key, _null_prepare, blocks, offsets, shuffle, phase, "the null's label-free tables",
                        scale)
    count = len(spec.utilities)
    jobs = _jobs(spec, found, n, range_rows)
    stats = _run_ranges(spec_key, parts, jobs, _null_stats, None, shuffle, phase)
    for k in range(count):  # (the boundaries' certificates need no labels: settled once for every draw)
        jobs[k] = _certified(lambda more: _run_ranges(spec_key, parts, more, _null_stats, None, shuffle, phase), k,
                             jobs[k], stats[k])[0]
    batch = max(1, min(draws, 2**22 // max(1, max(f.m for f in found))))
    G = max(1, len(spec.groups))

    def sups(rng):
        for first in range(0, draws, batch):
            last = min(draws, first + batch)
            drawn = [dask.delayed(_draw)(spec_key, p, first, last, offsets[i], n, seed) for i, p in enumerate(parts)]
            if shuffle == "disk":
                drawn = dask.compute(*drawn)
            found = _run_ranges(spec_key, parts, jobs, _null_range, scale, shuffle, phase, drawn)
            for j in range(last - first):
                folded = [fold([e[j] for e in found[k]])[0] for k in range(count)]
                yield np.concatenate([folded[k][g] for g in range(G) for k in range(count)])
            if shuffle == "disk":
                for handles in drawn:
                    for h in handles:
                        os.remove(h.path)
    return sups


class _Named:
    """A block of predictions with its columns' names, as an estimator reads a DataFrame's
    (:meth:`huc_ref.tree.LabelTree.frame_columns`: ``columns`` and ``to_numpy``)."""

    def __init__(self, x: np.ndarray, columns):
        self.x, self.columns = x, columns

    def to_numpy(self) -> np.ndarray:
        return self.x


def _predict_block(model, names, groups, x, *C, block_info=None):
    """``model.predict_proba`` of one block of rows (rows ``offset ..`` of the whole, from
    ``block_info``), a bad row named by its row in the whole (an empty block: no rows)."""
    if not len(x):
        return np.zeros(x.shape)
    offset = block_info[None]["array-location"][0][0] if block_info else 0
    try:
        return model.predict_proba(x if names is None else _Named(x, names),
                                   **({} if groups is None else {"subgroups": {g: c[:, 0] for g, c in zip(groups, C)}}))
    except HUCError as err:
        for where in ["y_prob"] + [f"subgroups[{g!r}]" for g in groups or ()]:
            found = _at_row(err, where)
            if found is not None:
                raise HUCError(f"{where}[{offset + found[0]}]{found[1]}", kind=err.kind) from None
        raise


def lazy_predictions(model, y_prob, subgroups=None):
    """``model.predict_proba`` (an estimator of :mod:`huc_ref.calibration`) of a Dask Array or
    DataFrame, row block by row block: a recalibration maps each row on its own (Table 3's scalings,
    Sec. 3.2's branch tilts), so the result is a Dask collection of the same kind, rows and columns,
    computed when the caller computes (or writes) it.  The columns are read as the estimator reads
    them (a DataFrame's names, or ``labels=``); subgroups given by name, each a Dask or numpy array
    (or Series) of the rows.  The model's structure (fitted, the columns' names, the subgroups it was
    fitted with) is checked at once; a bad row, when its block is computed, is named by its row in
    the whole.  A DataFrame's partitions are counted first (one pass), for those row numbers.

    Parameters
    ----------
    model : estimator
        A fitted estimator of :mod:`huc_ref.calibration` (its ``predict_proba`` on numpy rows).
    y_prob : Dask Array or DataFrame of shape (n, K), or array-like
        The predictions to recalibrate (an array-like is made a Dask Array).
    subgroups : mapping, optional
        Name -> the rows' values (Dask or numpy), as the model was fitted with.

    Returns
    -------
    dask.array.Array or dask.dataframe.DataFrame
        The recalibrated predictions, lazily: a DataFrame (its columns and index) for a DataFrame,
        else an Array in ``y_prob``'s row chunks.

    Raises
    ------
    HUCError
        At once: ``y_prob`` not ``n x K``, a model not fitted, columns or subgroups it was not fitted
        with; when a block is computed: a bad row, named by its row in the whole.

    Examples
    --------
    >>> import dask.array as da
    >>> from huc_ref import LabelTree, Table
    >>> from huc_ref.calibration import HUCBoost
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> P, y = np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3]
    >>> model = HUCBoost(t, {"u": Table(t, [-1, 1, 1, 1])}, epsilon="1/100").fit(P, y)
    >>> lazy = model.predict_proba(da.from_array(P, chunks=(3, 4)))
    >>> bool((lazy.compute() == model.predict_proba(P)).all())
    True
    """
    import dask.array as da
    names, index = None, None
    if _frame(y_prob):
        names, index = [str(c) for c in y_prob.columns], y_prob.index
        P = y_prob.to_dask_array()
    elif is_lazy(y_prob):
        P = y_prob
    else:
        P = da.from_array(np.asarray(y_prob), chunks=(max(1, CHUNK // max(1, np.shape(y_prob)[-1])), -1))
    if any(math.isnan(c) for c in P.chunks[0]):
        P = P.compute_chunk_sizes()
    if P.ndim != 2:
        raise HUCError(f"y_prob: expected an n x K array of probabilities, got shape {P.shape}", kind="length")
    P = P.rechunk({1: -1})
    groups = None if subgroups is None else list(subgroup_mapping(subgroups))
    C = []
    for g in groups or ():
        c = subgroups[g]
        if _series(c) or _frame(c):
            c = c.to_dask_array()
            if any(math.isnan(k) for k in c.chunks[0]):
                c = c.compute_chunk_sizes()
        elif not is_lazy(c):
            c = np.asarray(c)
            if c.shape != (P.shape[0],):  # (the estimator's own message, from a block of the whole's length)
                model.predict_proba(np.full((1, P.shape[1]), 1.0 / P.shape[1]), subgroups={g: c})
            c = da.from_array(c, chunks=(P.chunks[0],))
        C.append(c.rechunk((P.chunks[0],))[:, None])  # (a column: blocks line up with P's rows, not its columns)
    one = np.full((1, P.shape[1]), 1.0 / P.shape[1])  # the structure checked now, on one row
    model.predict_proba(one if names is None else _Named(one, names),
                        **({} if groups is None else {"subgroups": {g: np.zeros(1) for g in groups}}))
    out = da.map_blocks(_predict_block, model, names, groups, P, *C, dtype=float, chunks=P.chunks,
                        meta=np.zeros((0, 0)))
    if names is None:
        return out
    import dask.dataframe as dd  # (the answer's columns are the model's classes_, in their order, as in memory)
    return dd.from_dask_array(out, columns=[str(c) for c in model.classes_], index=index)


# ------------------------------------------------------------------ Parquet datasets (huc audit, fit, apply)
def dataset_columns(dataset, tree: LabelTree, label_column: str | None, weight_column: str | None,
                    what: str = "--predictions") -> list:
    """The roles of a Parquet dataset's columns (Sec. 2.1's sample as a table): one column per
    tree label, named by the label (the names declare the label order), the label column
    (``label_column``; None: no labels, as for ``huc apply``), the weight column (if named) and
    every other column a subgroup, in the files' order; returns the subgroups' columns.

    Parameters
    ----------
    dataset : huc_ref.formats.ParquetDataset
        The dataset (its columns).
    tree : LabelTree
        The label tree.
    label_column : str or None
        The labels' column (None: the dataset has none).
    weight_column : str or None
        The weights' column (None: uniform weights).
    what : str, default "--predictions"
        The option named in a message.

    Returns
    -------
    list of str
        The subgroups' columns, in the files' order.

    Raises
    ------
    HUCError
        A label of the tree without its column, or a named label or weight column missing.

    Examples
    --------
    >>> from huc_ref.formats import ParquetDataset
    >>> t = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    >>> dataset_columns(ParquetDataset((), ("pos", "label", "neg", "female")), t, "label", None)
    ['female']
    >>> dataset_columns(ParquetDataset((), ("pos", "label")), t, "label", None)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: --predictions: the dataset has no column 'neg': one column per label of the tree, ...
    """
    columns = list(dataset.columns)
    for name in tree.labels:
        if name not in columns:
            raise HUCError(f"{what}: the dataset has no column {printable(name, 80)!r}: one column per label of the "
                           f"tree, named by the label, holds its predictions (the dataset's columns: "
                           f"{printable(repr(columns), 200)})", kind="labels")
    for option, name in (("--label-column", label_column), ("--weight-column", weight_column)):
        if name is not None and name not in columns:
            raise HUCError(f"{option}: the dataset has no column {printable(name, 80)!r} (its columns: "
                           f"{printable(repr(columns), 200)})", kind="missing_field")
    taken = set(tree.labels) | {label_column, weight_column}
    return [c for c in columns if c not in taken]


class _Coded:
    """Labels as text stored by their distinct names (a Parquet dictionary column): ``codes``, each
    row's position in ``names`` (read once per name, not once per row)."""

    def __init__(self, codes: np.ndarray, names: np.ndarray):
        self.codes, self.names = codes, names

    def __len__(self) -> int:
        return len(self.codes)

    def ids(self, tree: LabelTree) -> np.ndarray:
        """Label ids, as :func:`huc_ref.fast.audit.label_ids` reads the rows' names (on a bad name,
        its message, naming the first row that has it)."""
        try:
            return label_ids(self.names, tree, len(self.names)).take(self.codes)
        except HUCError:
            return label_ids(self.names.take(self.codes), tree, len(self.codes))


def _read_group(file: str, group: int, labels: tuple, label_column, weight_column, subgroups: list, kappa,
                everyone: bool):
    """One row group of a dataset: ``(P, y, w, *C)``, the predictions in the tree's label order (mixed
    with the uniform law by K.1's ``kappa``, as ``--smooth`` asks), the labels (None without a label
    column), the raw weights (or None) and the subgroups' values (``everyone``: the whole population
    first, K.1's ``c = 1``)."""
    import pyarrow.parquet as pq
    names = list(labels) + [c for c in (label_column, weight_column) if c is not None] + list(subgroups)
    table = pq.ParquetFile(file).read_row_group(group, columns=names)
    m = table.num_rows
    P = np.empty((m, len(labels)))
    for j, name in enumerate(labels):
        P[:, j] = table.column(name).to_numpy()
    if kappa is not None:
        P = (1 - kappa) * P / P.sum(axis=1, keepdims=True) + kappa / P.shape[1]
    y = None
    if label_column is not None:
        column = table.column(label_column)
        import pyarrow as pa
        if pa.types.is_dictionary(column.type) or pa.types.is_string(column.type) or \
                pa.types.is_large_string(column.type):  # text: its distinct names and each row's among them
            coded = column.combine_chunks() if pa.types.is_dictionary(column.type) else \
                column.combine_chunks().dictionary_encode()
            names = coded.dictionary.to_numpy(zero_copy_only=False)
            y = _Coded(coded.indices.to_numpy(zero_copy_only=False), np.asarray(names.astype(str)))
        else:
            y = column.to_numpy()
    w = table.column(weight_column).to_numpy() if weight_column is not None else None
    C = ([np.ones(m)] if everyone else []) + [table.column(name).to_numpy(zero_copy_only=False) for name in subgroups]
    return (P, y, w, *C)


def dataset_blocks(dataset, tree: LabelTree, label_column, weight_column, subgroups: list, kappa=None) -> list:
    """Per row group of ``dataset``, the Dask objects of its ``(P, y, w, *C)`` (:func:`_read_group`;
    the subgroups after the whole population, K.1's ``c = 1``, when there are any), for
    :func:`audit_partitions`.

    Parameters
    ----------
    dataset : huc_ref.formats.ParquetDataset
        The dataset's row groups (:func:`huc_ref.formats.parquet_dataset`).
    tree : LabelTree
        The label tree: its labels name the prediction columns, read in its label order.
    label_column : str or None
        The labels' column (None: no labels, ``y`` is None).
    weight_column : str or None
        The weights' column (None: ``w`` is None).
    subgroups : list of str
        The subgroups' columns (:func:`dataset_columns`).
    kappa : float, optional
        Each row mixed with the uniform law as ``(1 - kappa) p / sum(p) + kappa / K`` (K.1's
        smoothing, ``--smooth``); None: the rows as stored.

    Returns
    -------
    list of tuple
        Per row group, ``dask.delayed`` objects of ``(P, y, w, *C)``, read only when computed.

    Examples
    --------
    >>> import dask, tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> from huc_ref.formats import parquet_dataset
    >>> t = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    >>> folder = tempfile.mkdtemp()
    >>> rows = pa.table({"pos": [0.25, 0.5], "neg": [0.75, 0.5], "label": ["neg", "pos"]})
    >>> pq.write_table(rows, folder + "/a.parquet")
    >>> (P, y, w), = dask.compute(*dataset_blocks(parquet_dataset(folder, "--predictions"), t, "label", None, []))
    >>> P.tolist(), y.ids(t).tolist(), w  # the columns in the tree's label order, by name; the labels' ids
    ([[0.75, 0.25], [0.5, 0.5]], [0, 1], None)
    """
    import dask
    everyone = bool(subgroups) and WHOLE_POPULATION not in subgroups  # (a column named "all" is the population)
    read = dask.delayed(_read_group, pure=True, nout=3 + everyone + len(subgroups))
    return [tuple(read(file, group, tuple(tree.labels), label_column, weight_column, list(subgroups), kappa,
                       everyone))
            for file, group, _ in dataset.groups]
