"""Algorithm 2 on every column at once, in float64: the twin of :mod:`huc_ref.intervals` and of
``huc_ref.audit.UtilityRows`` (one sort per utility shared by all subgroups and nodes, F.4)."""

from __future__ import annotations

import math
import time
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from ..errors import HUCError
from .numbers import block_sums, gathered_equal, group_sums, label_cells, sum_levels
from .workers import run_all

__all__ = ["argsort_keys", "sort_scores", "argsort_scores", "score_keys", "group_scores", "GROUP_BUCKETS",
           "sort_packed", "MEASURED_SORT", "tie_blocks", "TieBlocks", "Run", "CACHE_BLOCK", "Rows"]


def argsort_keys(key: np.ndarray, values: np.ndarray | None = None, engine: str = "numpy"):
    """An order that sorts the unsigned 64-bit ``key``, equal keys in any order (Algorithm 2's sort,
    App. F.3).  With ``values`` (numbers in the order of the keys, equal where they are, as the
    scores behind :func:`score_keys`): ``(order, values.take(order))``, and ``key``'s buffer is
    used up (it becomes the packed keys: no copy).

    numpy's value sort is faster than its argsort (at 10^6 floats about a quarter of its time on
    an AMD Zen 4, a third on a Zen 3: ``python bench/fast_audit.py``): so each key keeps its
    leading bits above its index, and one value sort of these gives the order
    (:func:`sort_packed`; under numba perhaps a compiled radix sort of the leading bits, the
    same order).  Distinct keys whose leading
    bits agree are then put in order within their runs; where such runs hold more than an eighth
    of the keys, ``np.argsort`` does the work instead.  Equal keys (ties) need no second look: any order
    of them is right.

    Parameters
    ----------
    key : ndarray of uint64
        The keys (used up where ``values`` is given).
    values : ndarray, optional
        Numbers in the order of the keys, equal where they are.
    engine : {"numpy", "numba"}, default "numpy"
        The sort of the packed keys (:func:`sort_packed`).

    Returns
    -------
    ndarray of int or tuple of ndarray
        The order, or ``(order, values.take(order))``.

    Examples
    --------
    >>> argsort_keys(np.array([5, 2**63 + 1, 5, 2**63, 0], dtype=np.uint64)).tolist()
    [4, 0, 2, 3, 1]
    >>> [x.tolist() for x in argsort_keys(np.array([3, 1, 2], dtype=np.uint64), np.array([0.75, 0.25, 0.5]))]
    [[1, 2, 0], [0.25, 0.5, 0.75]]
    """
    n = len(key)
    b = max(1, (n - 1).bit_length())
    low = np.uint64((1 << b) - 1)
    if values is None:
        packed = key & ~low
    else:  # the values stand in for the keys from here on
        packed = np.bitwise_and(key, ~low, out=key)
    order = np.arange(n, dtype=np.intp)  # (its buffer then takes the order: one array fewer, fresh memory costs)
    packed |= order.view(np.uint64)
    sort_packed(packed, b, engine)
    np.bitwise_and(packed, low, out=order.view(np.uint64))  # below 2**63: the same bits as a signed index
    packed >>= np.uint64(b)  # the leading bits, in order
    same = packed[1:] == packed[:-1]  # neighbours whose leading bits agree
    ranked = None
    full = key if values is None else values
    many = 8 * np.count_nonzero(same) > n
    if values is not None:  # the values in rank order are asked for
        ranked = full.take(order)
    if many:  # many: contiguous compares of all in rank order
        ranked = full.take(order) if ranked is None else ranked
        differ = np.flatnonzero(same & (ranked[1:] != ranked[:-1]))
    else:  # a few: only theirs
        close = np.flatnonzero(same)
        at = (lambda i: ranked.take(i)) if ranked is not None else (lambda i: full.take(order.take(i)))
        differ = close[at(close) != at(close + 1)]
    if len(differ):
        order, ranked = _settle(order, ranked, same, differ, full)
    return order if values is None else (order, ranked)


def _settle(order, ranked, same, differ, full):
    """:func:`argsort_keys`' order (and ``ranked``, ``full`` in it, or None) with the runs of distinct
    keys that share their leading bits (``same``; ``differ``: where two such neighbours differ) put in
    order by :func:`_settle_runs`, or, where they are more than an eighth of the keys, ``np.argsort``'s."""
    ranks = _settle_runs(order, same, differ, full) if 8 * len(differ) <= len(order) else None
    if ranks is None:  # many distinct keys within the cut-off bits of each other
        order = np.argsort(full)
        return order, (full.take(order) if ranked is not None else None)
    if ranked is not None:
        ranked[ranks] = full.take(order[ranks])
    return order, ranked


#: From this many packed keys, the first sort of each size class (``n.bit_length()``) under numba is
#: made both ways and timed (:func:`sort_packed`).
MEASURED_SORT = 1 << 16

#: Per size class, whether the compiled radix sort was the faster one in this process.
_radix_faster: dict[int, bool] = {}


def sort_packed(packed: np.ndarray, low_bits: int, engine: str = "numpy") -> None:
    """Sort :func:`argsort_keys`' packed keys in place (Algorithm 2's sort, App. F.3): numpy's
    ``sort``, or under numba whichever of it and the compiled radix sort
    (:func:`huc_ref.fast.kernels.radix_sort_high`) measured faster on this machine.  The two give
    the same array (the keys are distinct: the indices below their bits rise), but their speeds
    do not travel: the radix sort takes a quarter of numpy's time at 10^6 keys on an AMD Zen 4
    and twice it on a Zen 3, where it wins only in the caches.  So
    the first sort of at least :data:`MEASURED_SORT` keys of each size class (``n.bit_length()``)
    is made both ways, the two results compared, and the faster way kept for the class.

    Parameters
    ----------
    packed : ndarray of uint64
        The keys, distinct, sorted in place.
    low_bits : int
        The bits of the index below each key's leading bits.
    engine : {"numpy", "numba"}, default "numpy"
        numpy's sort, or the faster of it and the compiled radix sort.

    Raises
    ------
    HUCError
        Of kind ``internal``, where the two sorts measured disagree (a guard that should never be
        reached).

    Examples
    --------
    >>> x = np.array([3 << 4 | 1, 1 << 4 | 0, 3 << 4 | 2], dtype=np.uint64)
    >>> sort_packed(x, 4)
    >>> [int(v) >> 4 for v in x]
    [1, 3, 3]
    """
    if engine != "numba":
        packed.sort()
        return
    from .kernels import radix_sort_high
    size = len(packed).bit_length()
    if len(packed) < MEASURED_SORT or size in _radix_faster:  # (in the caches: the radix sort)
        if len(packed) < MEASURED_SORT or _radix_faster[size]:
            radix_sort_high(packed, low_bits)
        else:
            packed.sort()
        return
    other = packed.copy()
    start = time.perf_counter()
    radix_sort_high(other, low_bits)
    middle = time.perf_counter()
    packed.sort()
    _radix_faster[size] = middle - start < time.perf_counter() - middle
    if not np.array_equal(other, packed):
        raise HUCError("sort_packed: the radix sort and numpy's sort disagree", kind="internal")


def _settle_runs(order, same, differ, full):
    """Put in order, in place, the runs of ranks whose keys share their leading bits (``same``)
    and hold distinct keys (``differ``: positions in ``same``), by ``full`` (the keys, or values
    in their order); the ranks reordered, or None where they are more than an eighth of all."""
    close = np.flatnonzero(same)
    label = np.cumsum(np.concatenate([[True], np.diff(close) != 1])) - 1  # runs of such neighbours
    inside = np.isin(label, label[np.searchsorted(close, differ)])
    ranks, first = np.unique(np.concatenate([close[inside], close[inside] + 1]), return_index=True)
    if 8 * len(ranks) > len(order):
        return None
    members = order[ranks]
    runs = np.concatenate([label[inside], label[inside]])[first]
    order[ranks] = members[np.lexsort((full.take(members), runs))]
    return ranks


def sort_scores(score: np.ndarray, engine: str = "numpy") -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 2's sort (App. F.3): an order of ``score`` (float64, no NaN) that sorts it, and the sorted scores
    (``np.sort(score)``); equal scores in any order (the caller groups them, :func:`tie_blocks`).
    Each score's bits, made order-preserving as an unsigned integer (:func:`score_keys`), sorted
    by :func:`argsort_keys`, which gathers the scores into rank order for its own checks;
    below 4,096 scores, or where a sample of about a thousand shows many distinct scores
    sharing their leading bits (near neighbours, which the packed keys leave to a second
    sort), ``np.argsort``.  ``engine="numba"``: the packed keys sorted by the faster of
    the compiled radix sort (:func:`huc_ref.fast.kernels.radix_sort_high`) and numpy's, as
    measured (:func:`sort_packed`; the same order), and where the sample shows few distinct
    scores, first :func:`huc_ref.fast.kernels.group_sort` (the same order again: keys ascending,
    equal keys by index), which gives up beyond 4,096 distinct scores.

    Parameters
    ----------
    score : ndarray of float64
        The scores, no NaN.
    engine : {"numpy", "numba"}, default "numpy"
        The sort.

    Returns
    -------
    order : ndarray of int
        An order that sorts ``score``.
    ranked : ndarray
        The sorted scores.

    Examples
    --------
    >>> order, s = sort_scores(np.array([0.5, -1.0, 0.25, 0.5, -0.0]))
    >>> order.tolist(), s.tolist()
    ([1, 4, 2, 0, 3], [-1.0, -0.0, 0.25, 0.5, 0.5])
    >>> x = np.array([1.0, np.nextafter(1.0, 0), 1.0 - 2**-40, 1.0, 0.5])  # below the cut-off bits
    >>> sort_scores(x)[1].tolist() == sorted(x.tolist())
    True
    """
    key = None
    if engine == "numba" and _few_scores(score):  # grouped (two passes), unless there are more than a few
        from .kernels import group_sort
        n, key = len(score), score_keys(score)
        order, ranked = np.empty(n, dtype=np.intp), np.empty(n)
        if group_sort(key, score, order, ranked, np.empty(n, dtype=np.uint16)) >= 0:
            return order, ranked
    if _packed_pays(score, ties_too=True):  # (group_sort leaves the keys as they were)
        if engine == "numba":
            return _sort_compiled(np.ascontiguousarray(score, dtype=np.float64))
        return argsort_keys(score_keys(score) if key is None else key, score, engine)
    order = np.argsort(score)
    return order, score.take(order)


def _sort_compiled(score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`argsort_keys` of the scores' keys under numba: the packed keys made in one pass
    (:func:`huc_ref.fast.kernels.pack_scores`), sorted (:func:`sort_packed`), and the order and the
    scores in it read back in one more (:func:`huc_ref.fast.kernels.unpack_sorted`), where numpy takes
    about a dozen passes; the same order and scores (tested)."""
    from .kernels import pack_scores, unpack_sorted
    n = len(score)
    b = max(1, (n - 1).bit_length())
    packed = pack_scores(score, b, np.empty(n, dtype=np.uint64))
    sort_packed(packed, b, "numba")
    order, ranked = np.empty(n, dtype=np.intp), np.empty(n)
    if unpack_sorted(packed, b, score, order, ranked):  # distinct scores that share their leading bits
        packed >>= np.uint64(b)
        same = packed[1:] == packed[:-1]
        order, ranked = _settle(order, ranked, same, np.flatnonzero(same & (ranked[1:] != ranked[:-1])), score)
    return order, ranked


def _few_scores(score: np.ndarray) -> bool:
    """Whether :func:`huc_ref.fast.kernels.group_sort` is worth trying on ``score``: from 4,096
    scores, where at least one in sixteen of a sample of about a thousand repeats another (scores
    rounded to a few decimals, or a model with few leaves: drawn from 4,096 equally likely
    values, about 906 of 1,024 are distinct; from 10,000, about 973)."""
    n = len(score)
    if n < 4096:
        return False
    sample = score[:: n // 1024]
    return 16 * len(np.unique(sample)) <= 15 * len(sample)


def _packed_pays(score: np.ndarray, ties_too: bool) -> bool:
    """Whether :func:`argsort_keys` is the faster sort of ``score``: from 4,096 scores, where a
    sample of about a thousand has few neighbours sharing their leading bits (or, ``ties_too``,
    few such distinct neighbours: equal scores cost the packed sort nothing once every key is
    gathered in rank order, as :func:`sort_scores` gathers them)."""
    n = len(score)
    if n < 4096:
        return False
    keys = np.sort(score_keys(score[:: n // 1024]))
    lead = keys >> np.uint64((n - 1).bit_length())  # the bits argsort_keys keeps above the index
    same = lead[1:] == lead[:-1]
    if ties_too:
        same &= keys[1:] != keys[:-1]
    return np.count_nonzero(same) < len(keys) // 16


def score_keys(score: np.ndarray) -> np.ndarray:
    """Each float64 score's bits as an unsigned integer in the scores' order (negative scores flip
    all their bits, others the sign bit; -0.0 just below 0.0), for :func:`argsort_keys`
    (the sort of Algorithm 2, App. F.3).

    Parameters
    ----------
    score : ndarray of float64
        The scores.

    Returns
    -------
    ndarray of uint64
        The keys.

    Examples
    --------
    >>> k = score_keys(np.array([-1.0, -0.0, 0.0, 1e-300, 0.5]))
    >>> bool(np.all(k[1:] > k[:-1]))
    True
    """
    bits = np.ascontiguousarray(score, dtype=np.float64).view(np.int64)
    if not len(bits) or bits.min() >= 0:  # no sign bit set (probabilities): one pass sets it
        return np.bitwise_or(bits, np.int64(-(2**63))).view(np.uint64)
    key = bits >> 63  # 0, or -1 for a negative score
    key |= np.int64(-(2**63))
    key ^= bits
    return key.view(np.uint64)


#: The buckets :func:`group_scores` spreads the scores' keys over (a table of 2^16 keys: 512 KiB).
GROUP_BUCKETS = 1 << 16


def group_scores(score: np.ndarray,
                 labels: tuple[np.ndarray, int] | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Algorithm 2's tie blocks without a sort (App. F.3), where few distinct scores lie far
    enough apart: ``(group, distinct)``, each score's block (its rank among the distinct scores)
    and the distinct scores ascending; None where two distinct scores fall in one bucket.  Given
    the atoms' ``labels``, ``(y, K)``, each atom's block times ``K`` plus its label instead of its
    block (a cell of :func:`huc_ref.fast.numbers.label_cells`), in the same array, where the
    cells, ``len(distinct) * K``, number at most the atoms (else the blocks, as without labels).

    Each score's key (:func:`score_keys`) less the smallest key, shifted right until the largest
    fits below :data:`GROUP_BUCKETS`, is a bucket that never decreases as the score rises.  Every
    key is written to its bucket and read back: when each reads its own, no bucket holds two
    distinct scores, and the occupied buckets, in order, are the distinct scores in order.  Three
    passes over the keys and two gathers, against a sort's ``log n`` passes; where no score has its
    sign bit set (probabilities), the keys are the scores' own bits, no pass to make them.  -0.0 and 0.0 are
    two distinct scores here (one block to Algorithm 2: the caller's check of the gaps between
    distinct scores sends them to the sort).

    Parameters
    ----------
    score : ndarray of float64
        The scores.
    labels : tuple of (ndarray, int), optional
        The atoms' labels and how many there are.

    Returns
    -------
    tuple of (ndarray, ndarray) or None
        ``(group, distinct)``, or None.

    Examples
    --------
    >>> group, distinct = group_scores(np.array([0.5, 0.25, 0.5, -1.0]))
    >>> group.tolist(), distinct.tolist()
    ([2, 1, 2, 0], [-1.0, 0.25, 0.5])
    >>> score, y = np.array([0.5, 0.25, 0.5, -1.0, 0.25, 0.5]), np.array([1, 0, 0, 1, 1, 0])
    >>> group_scores(score, (y, 2))[0].tolist()  # 2 * block + label: six cells for six atoms
    [5, 2, 4, 1, 3, 4]
    >>> group_scores(score[:4], (y[:4], 2))[0].tolist()  # six cells for four atoms: the blocks
    [2, 1, 2, 0]
    >>> group_scores(np.array([0.5, 0.5 + 2**-40, 1e300])) is None  # the two near scores share a bucket
    True
    >>> [x.tolist() for x in group_scores(np.zeros(0))]  # no scores: no blocks
    [[], []]
    """
    if not len(score):
        return np.zeros(0, dtype=np.intp), np.zeros(0)
    bits = np.ascontiguousarray(score, dtype=np.float64).view(np.int64)
    least = bits.min()
    plain = least >= 0  # no sign bit set (probabilities): the bits themselves order as the scores
    key = bits.view(np.uint64) if plain else score_keys(score)  # (plain: the caller's array, read only)
    least = np.uint64(least) if plain else key.min()
    bucket = np.subtract(key, least)
    bucket >>= np.uint64(max(0, int(key.max() - least).bit_length() - GROUP_BUCKETS.bit_length() + 1))
    bucket = bucket.view(np.intp)  # below 2^16: the same bits as a signed index
    table = np.full(GROUP_BUCKETS, ~np.uint64(0))  # no score's key (a NaN's)
    table[bucket] = key
    if not gathered_equal(table, bucket, key):
        return None
    held = np.flatnonzero(table != ~np.uint64(0))
    rank = np.zeros(GROUP_BUCKETS, dtype=np.intp)
    if labels is not None and len(held) * labels[1] > len(score):
        labels = None  # more cells than atoms: the blocks
    rank[held] = np.arange(len(held)) * (1 if labels is None else labels[1])
    keys = table.take(held)  # each distinct score's key, ascending: the score's bits back (score_keys undone)
    if not plain:
        keys = np.where(keys >> np.uint64(63) == 1, keys ^ np.uint64(2**63), ~keys)
    group = np.take(rank, bucket, out=bucket)
    if labels is not None:
        group += labels[0]
    return group, keys.view(np.float64)


def _group_compiled(score: np.ndarray, labels: tuple[np.ndarray, int], residual: np.ndarray):
    """:func:`group_scores`' blocks (each atom's block, not its cell) and, where they are taken,
    :func:`huc_ref.fast.numbers.label_cells`' cells of the ``residual``, from
    :func:`huc_ref.fast.kernels.group_blocks` (App. F.3's blocks without a sort): ``(grouped,
    cells)``, ``(None, None)`` where two distinct scores share a bucket, ``cells`` None where none
    are taken (more cells than atoms, or a cell holding two values)."""
    from .kernels import group_blocks
    y, K = labels
    group = np.empty(len(score), dtype=np.int64)
    status, distinct, bits, count = group_blocks(np.ascontiguousarray(score, dtype=np.float64),
                                                 np.ascontiguousarray(y, dtype=np.int64), K,
                                                 np.ascontiguousarray(residual, dtype=np.float64), group)
    if status < 0:
        return None, None
    if status == 0:
        return (group, distinct), None
    held = np.flatnonzero(count)
    return (group, distinct), (held // K, bits.take(held).view(np.float64), count.take(held))


def argsort_scores(score: np.ndarray) -> np.ndarray:
    """The order of :func:`sort_scores` alone (Algorithm 2's sort, App. F.3), where the caller
    needs no sorted scores: the packed keys unless a sample shows ties or near neighbours
    (numpy's argsort gains from ties; the packed keys would gather every key to see them).

    Parameters
    ----------
    score : ndarray of float64
        The scores, no NaN.

    Returns
    -------
    ndarray of int
        The order.

    Examples
    --------
    >>> argsort_scores(np.array([0.5, -1.0, 0.25])).tolist()
    [1, 2, 0]
    """
    if _packed_pays(score, ties_too=False):
        return argsort_keys(score_keys(score))
    return np.argsort(score)


class TieBlocks(tuple):
    """:func:`tie_blocks`' ``(order, new)``, with its ``runs``: the groups of near-equal scores
    float64 could not order (App. F.3), each a :class:`Run`; :attr:`exact`: whether exact scores
    stood behind the floats (else every run stays one block, and its witness ends are its floats).

    Parameters
    ----------
    order : ndarray of int
        The atoms in increasing order of score.
    new : ndarray of bool
        Per gap between neighbours in ``order``, whether a new tie block starts.
    runs : tuple of Run, default ()
        The groups float64 could not order.
    exact : bool, default True
        Whether exact scores stood behind the floats.

    Examples
    --------
    >>> order, new = TieBlocks(np.array([1, 0]), np.array([True]))
    >>> order.tolist(), new.tolist()
    ([1, 0], [True])
    """

    def __new__(cls, order: np.ndarray, new: np.ndarray, runs: tuple = (), exact: bool = True):
        blocks = super().__new__(cls, (order, new))
        blocks.runs, blocks.exact = runs, exact
        return blocks


class Run(NamedTuple):
    """A group of near-equal scores in Algorithm 2's sort (App. F.3; :func:`tie_blocks`): ranks
    ``first .. last`` of the sort, ``values`` (the exact score of each of its tie blocks,
    ascending; None where it stays one block: no exact scores, or
    :data:`huc_ref.fast.numbers.ORDER_BUDGET` spent), and ``low``, ``high``: floats below and
    above every exact score in it and none outside it (its scores less and plus their errors,
    which certify the gaps on either side).

    Parameters
    ----------
    first, last : int
        The run's first and last ranks.
    values : list of Fraction or None
        The exact score of each of its tie blocks, ascending; None: one block.
    low, high : float
        Floats below and above every exact score in it and none outside it.

    Examples
    --------
    >>> Run(3, 5, None, 0.25, 0.5).values is None
    True
    """

    first: int
    last: int
    values: list | None
    low: float
    high: float


def tie_blocks(score: np.ndarray, error: np.ndarray | None, exact_score, order: np.ndarray | None = None,
               ranked: np.ndarray | None = None, engine: str = "numpy") -> TieBlocks:
    """The atoms in increasing order of score, and where a new tie block starts (Algorithm 2),
    as a :class:`TieBlocks` whose ``runs`` are the groups float64 could not order.

    ``error[i]`` bounds the float error of ``score[i]``.  Sorted, the float order is certainly
    the exact order across a gap where every score before it, raised by its error, stays
    below every score after it, lowered by its error.  Runs of atoms with no such gap between
    them (exact ties in rational inputs, whose float scores differ by a few ulps, or distinct
    scores closer than float64 resolves) are put in order and grouped by their exact scores,
    ``exact_score(i)`` (:class:`huc_ref.fast.utilities.ExactScores`: the rationals behind the
    floats, or a float array's own binary values), where they hold two different rows: equal
    neighbours whose rows are the same numbers (``exact_score.same``) are one block without
    an exact score, and one exact score serves each stretch of such neighbours and each key
    (``exact_score.key``) seen before.  The runs are
    taken smallest first while their exact scores fit ``exact_score.budget`` (entries read,
    ``exact_score.width`` a score); a run beyond it, or every run when there are no exact
    scores (a boosting run's float rows), is one block (equal floats alone are a tie), listed
    in ``runs`` with ``values`` None.  Inside a block the atoms stay in any order: its sum does
    not depend on it (:func:`huc_ref.fast.numbers.block_sums`).

    Parameters
    ----------
    score : ndarray of float64
        The scores.
    error : ndarray or None
        Bounds on their float errors; None: none (equal floats alone are a tie).
    exact_score : callable or None
        ``exact_score(i)``: atom ``i``'s exact score (:class:`huc_ref.fast.utilities.ExactScores`).
    order : ndarray of int, optional
        The caller's sort of ``score``.
    ranked : ndarray, optional
        The scores in ``order``.
    engine : {"numpy", "numba"}, default "numpy"
        The sort, where ``order`` is not given.

    Returns
    -------
    TieBlocks
        ``(order, new)`` with the runs.

    Examples
    --------
    >>> order, new = tie_blocks(np.array([0.3, 0.1, 0.1 + 2e-17]), np.full(3, 1e-16), lambda i: Fraction(1, 10))
    >>> order.tolist(), new.tolist()  # atoms 1 and 2 are one block: their exact scores are equal
    ([1, 2, 0], [False, True])
    >>> tie_blocks(np.array([1e-20, 2e-20]), np.array([1e-35, 2e-35]), None)[1].tolist()  # far apart, relatively
    [True]
    >>> blocks = tie_blocks(np.array([0.5, 0.5 + 2**-52]), np.full(2, 1e-15), lambda i: Fraction(1 + i, 3))
    >>> blocks[1].tolist(), blocks.runs[0].values  # two exact scores: two blocks, decided exactly
    ([True], [Fraction(1, 3), Fraction(2, 3)])
    """
    if order is None:
        order, s = sort_scores(score, engine)
    else:  # the caller's sort, and perhaps the scores in its order
        s = score.take(order) if ranked is None else ranked
    d = np.diff(s)
    new = d > 0
    largest = error.max() if error is not None and len(s) > 1 else 0.0
    if not largest > 0:
        return TieBlocks(order, new)
    close = d <= 2.0 * largest  # distinct floats further apart than any two errors are certainly in order
    if not close.any() or (exact_score is None and not np.any(close & new)):
        return TieBlocks(order, new)  # (equal floats are one block without exact scores to split them)
    unsure = _unsure_gaps(s, error, order, close, largest)
    if not unsure.any():
        return TieBlocks(order, new)
    # maximal runs of ranks joined by unsure gaps: [first, last]
    edges = np.diff(np.concatenate([[0], unsure.astype(np.int8), [0]]))
    firsts, lasts = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    # the gaps whose two sides may differ exactly: between different floats, or (with exact scores) between
    # equal floats of rows that are not the same numbers
    plural = unsure & new
    if exact_score is not None:
        eq = np.flatnonzero(unsure & ~new)
        same = getattr(exact_score, "same", None)
        same = None if same is None or not len(eq) else same(order.take(eq), order.take(eq + 1))
        plural[eq] = True if same is None else ~same
    new[unsure] = False  # each run one block, until its exact scores split it
    count = np.add.reduceat(plural, firsts) if len(firsts) else np.zeros(0, dtype=int)
    several = np.flatnonzero(count)  # runs holding two different rows
    if not len(several):
        return TieBlocks(order, new)
    budget = getattr(exact_score, "budget", None)
    width = getattr(exact_score, "width", 1)
    runs, spent = [], 0
    e = error.take(order)
    for k in several[np.argsort(count[several], kind="stable")]:  # the smallest runs first
        first, last = int(firsts[k]), int(lasts[k])
        low, high = float((s[first:last + 1] - e[first:last + 1]).min()), float((s[first:last + 1] +
                                                                                 e[first:last + 1]).max())
        cost = (int(count[k]) + 1) * width  # at most one exact score per stretch of the same rows
        if exact_score is None or (budget is not None and spent + cost > budget):
            runs.append(Run(first, last, None, low, high))
            continue
        spent += cost
        values = _settle_run(order, new, plural, first, last, exact_score)
        runs.append(Run(first, last, values, low, high))
    runs.sort()
    return TieBlocks(order, new, tuple(runs), exact_score is not None)


def _settle_run(order, new, plural, first, last, exact_score) -> list:
    """Put ranks ``first .. last`` of :func:`tie_blocks` in order of their exact scores, in place,
    and mark where a new block starts among them (``new``); each stretch of neighbours joined by a
    gap that is not ``plural`` (the same rows) takes one exact score, as do all stretches of one
    key (``exact_score.keys``; ``exact_score.scores`` computes many at once).  Returns each
    block's exact score, ascending."""
    members = order[first:last + 1].copy()
    starts = np.concatenate([[0], np.flatnonzero(plural[first:last]) + 1])  # stretches of the same rows
    heads = members[starts]
    keys = exact_score.keys(heads) if hasattr(exact_score, "keys") else None  # (equal keys, equal scores)
    if keys is None:
        keys = list(range(len(heads)))
    index = {}
    for key in keys:
        index.setdefault(key, len(index))
    which = [index[key] for key in keys]
    one = np.empty(len(index), dtype=np.intp)
    one[np.array(which)] = np.arange(len(heads))  # one stretch of each key (whichever write lands)
    firsts = heads[one]
    found = exact_score.scores(firsts) if hasattr(exact_score, "scores") else [exact_score(int(i)) for i in firsts]
    if all(isinstance(v, Fraction) for v in found):  # compared by 2^-256 floors first: integers, not Fractions
        found = [((v.numerator << 256) // v.denominator, v) for v in found]
    values = [found[k] for k in which]
    by_value = sorted(range(len(starts)), key=values.__getitem__)
    sizes = np.diff(np.append(starts, len(members)))
    pieces = [members[starts[k]:starts[k] + sizes[k]] for k in by_value]
    order[first:last + 1] = np.concatenate(pieces)
    ranked = [values[k] for k in by_value]
    # a new block where the exact score changes: between stretches only, never inside one
    split = np.zeros(len(members) - 1, dtype=bool)
    ends = np.cumsum([sizes[k] for k in by_value])[:-1] - 1
    split[ends] = [a != b for a, b in zip(ranked, ranked[1:])]
    new[first:last] = split
    distinct = [ranked[0]] + [b for a, b in zip(ranked, ranked[1:]) if a != b]
    return [v[1] for v in distinct] if isinstance(distinct[0], tuple) else distinct


#: :func:`_unsure_gaps` reads the windows of the close gaps while they hold at most this many
#: ranks per atom, else every rank (runs of many near-equal scores).
_WINDOWS_PER_ATOM = 4


def _unsure_gaps(s: np.ndarray, error: np.ndarray, order: np.ndarray, close: np.ndarray, largest: float) -> np.ndarray:
    """Which gaps between neighbouring sorted scores ``s`` (``order``'s) float64 cannot certify
    (:func:`tie_blocks`): of the ``close`` ones (within twice the ``largest`` error), those where
    the largest exact score possible up to the gap, ``max_{j <= i} (s_j + e_j)``, is not below the
    smallest possible after it, ``min_{j > i} (s_j - e_j)`` (each sum rounded to float64, as the
    comparison of floats has them).  A rank ``j`` whose score is below ``s_i - largest`` cannot
    reach that maximum (``s_j + e_j < s_i <= s_i + e_i``, and rounding keeps the order), nor one
    above ``s_{i+1} + largest`` that minimum, so each is taken over a window of ranks about the
    gap: the gaps' own neighbourhoods, not two running extremes over every rank (at 10^7 uniform
    scores one close gap set those off in every audit; ``python bench/peer.py --large``).  Where the windows hold more
    than :data:`_WINDOWS_PER_ATOM` ranks an atom (many near-equal scores), the running extremes
    over every rank, the same numbers.  Gaps that are not close are certain: ``s_{i+1} - s_i``
    exceeds both errors.

    >>> s, e = np.array([0.0, 1.0, 1.0 + 2**-52, 3.0]), np.full(4, 2**-52)
    >>> _unsure_gaps(s, e, np.arange(4), np.diff(s) <= 2 * 2**-52, 2**-52).tolist()
    [False, True, False]
    """
    gaps = np.flatnonzero(close)
    lo = np.searchsorted(s, np.nextafter(s[gaps] - largest, -np.inf), "left")  # (at or below s_i - largest)
    hi = np.searchsorted(s, np.nextafter(s[gaps + 1] + largest, np.inf), "right")
    below, above = gaps + 1 - lo, hi - gaps - 1  # ranks lo .. i, and i + 1 .. hi - 1 (each at least one)
    unsure = np.zeros(len(s) - 1, dtype=bool)
    if below.sum() + above.sum() > _WINDOWS_PER_ATOM * len(s):
        e = error.take(order)
        high = np.maximum.accumulate(s + e)  # the largest exact score possible so far
        low = np.minimum.accumulate((s - e)[::-1])[::-1]  # the smallest possible from here on
        unsure[gaps] = ~(high[gaps] < low[gaps + 1])
        return unsure
    high = _window_extreme(np.maximum, s, error, order, lo, below, 1.0)
    low = _window_extreme(np.minimum, s, error, order, gaps + 1, above, -1.0)
    unsure[gaps] = ~(high < low)
    return unsure


def _window_extreme(extreme, s, error, order, starts, lengths, sign):
    """``extreme`` of ``s_j + sign e_j`` over each window of ranks ``starts[k] .. starts[k] +
    lengths[k] - 1`` (every window non-empty), ``e_j`` the error of the atom of rank ``j``."""
    first = np.cumsum(lengths) - lengths  # each window's place in the concatenation
    ranks = np.arange(lengths.sum()) - np.repeat(first - starts, lengths)
    return extreme.reduceat(s[ranks] + sign * error.take(order.take(ranks)), first)


def _low_end(run: Run, k: int, given: float):
    """The left end of a witness that starts at block ``k`` of ``run`` (:meth:`Rows.intervals`):
    the block's exact score rounded down to a float where that float lies nearer to it than to
    the score before (the block before in the run, else the run's ``low``, which is above every
    score before the run), else the exact score itself (a Fraction: float64 cannot separate the
    two); a run left whole, its ``low``; a score that is no Fraction (a boosting state's key,
    :class:`huc_ref.fast.boosted.AuditRows`), the float ``given``.  Read exactly, the end then takes in the
    block and nothing before it (App. F.3's witness ``[s_(r+1), s_(b)]``).

    >>> run = Run(0, 2, [Fraction(1, 3), Fraction(1, 3) + Fraction(1, 10**30)], 0.3, 0.4)
    >>> _low_end(run, 0, 0.5), _low_end(run, 1, 0.5) == run.values[1], _low_end(run._replace(values=None), 0, 0.5)
    (0.3333333333333333, True, 0.3)
    """
    if run.values is None:
        return run.low
    x = run.values[k]
    if not isinstance(x, Fraction):
        return given
    f = float(x)
    if Fraction(f) > x:
        f = math.nextafter(f, -math.inf)
    below = run.values[k - 1] if k else Fraction(run.low)
    return f if 2 * Fraction(f) > below + x else x


def _high_end(run: Run, k: int, given: float):
    """The right end of a witness that ends at block ``k`` of ``run``: :func:`_low_end` mirrored
    (rounded up, nearer than the score after: the next block, else the run's ``high``).

    >>> run = Run(0, 2, [Fraction(1, 3), Fraction(1, 3) + Fraction(1, 10**30)], 0.3, 0.4)
    >>> _high_end(run, 0, 0.5) == run.values[0], _high_end(run, 1, 0.5)
    (True, 0.33333333333333337)
    """
    if run.values is None:
        return run.high
    x = run.values[k]
    if not isinstance(x, Fraction):
        return given
    f = float(x)
    if Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    above = run.values[k + 1] if k + 1 < len(run.values) else Fraction(run.high)
    return f if 2 * Fraction(f) < above + x else x


def _equal_pairs(ranked: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The atoms of each two neighbouring equal floats in the sorted scores ``ranked`` (``order``'s).

    >>> [x.tolist() for x in _equal_pairs(np.array([0.25, 0.5, 0.5, 0.5]), np.array([3, 0, 2, 1]))]
    [[0, 2], [2, 1]]
    """
    eq = np.flatnonzero(ranked[1:] == ranked[:-1])
    return order.take(eq), order.take(eq + 1)


def _group_pairs(block: np.ndarray, blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """Each atom and one atom of its block (``block``: each atom's, of ``blocks``; :func:`group_scores`'
    blocks), except that one itself: the pairs whose rows make equal floats one block.

    >>> [x.tolist() for x in _group_pairs(np.array([1, 0, 1, 1]), 2)]
    [[0, 2], [3, 3]]
    """
    one = np.empty(blocks, dtype=np.intp)
    one[block] = np.arange(len(block))  # some atom of each block (whichever write lands)
    other = one.take(block)
    pick = np.flatnonzero(other != np.arange(len(block)))
    return pick, other.take(pick)


def _equal_columns(W: np.ndarray) -> np.ndarray:
    """For each subgroup (column of ``W``), whether its weights are all equal: then one number
    multiplies, not a gather.  A broadcast ``W`` (stride 0 along the atoms, the audit's equal
    weights) is not read.  A column whose first rows differ is not (an indicator subgroup shows it
    at once); only the others are read whole, each on its own (numpy's ``min(axis=0)`` of a
    C-contiguous ``n x |C|`` array reduces along its rows slowly; ``python bench/shapes.py``'s
    binary audit with seven subgroups).

    >>> _equal_columns(np.array([[0.5, 1.0], [0.5, 0.0]])).tolist()
    [True, False]
    >>> _equal_columns(np.array([[0.5, 1.0]] * 5000 + [[0.25, 1.0]])).tolist()  # (past the first rows)
    [False, True]
    """
    if W.strides[0] == 0 or not len(W):
        return np.ones(W.shape[1], dtype=bool)
    equal = (W[:1024] == W[0]).all(axis=0)
    for g in np.flatnonzero(equal):
        equal[g] = W[:, g].min() == W[:, g].max()
    return equal


#: The mean column length (block ends) from which :meth:`Rows._extremes` reads each column with
#: ``argmax``/``argmin`` (one call per column) rather than with ``reduceat`` and comparisons.
_LONG_COLUMN = 4096

#: Positions (prefix sums) numpy's column scan takes at a time, per subgroup: its products, prefix
#: sums and extremes then stay in the caches (2**18 numbers, 2 MiB a buffer) instead of making five
#: passes over memory.  Fewer positions mean more calls per position: ``python bench/phases.py
#: --engine numpy --cache-block 65536,262144,1048576`` measured the tables phase at
#: K = 30, n = 10^6 in 1.35, 1.14 and 1.15 s, and with ``--K 1000 --n 400000`` in 0.76, 0.73 and 0.71 s.
CACHE_BLOCK = 2**18

#: Up to this many numbers (subgroups times positions, 1 MiB) numpy's scan takes every subgroup at
#: once (:meth:`Rows._every_subgroup`).  Measured at K = 30, |U| = 5, |C| = 7 (audits of n atoms,
#: best of five, the two ways alternating): 0.73x the time of one subgroup at a time at n = 300,
#: 0.79x at 1,000, 0.84-0.87x at 3,000, 0.96x at 5,000, 1.00x at 7,000 and 1.20x at 10,000 (the
#: rows no longer in the caches, and the subgroups no longer on two threads).
_ALL_SUBGROUPS = 2**17


def _cache_blocks(col_first: np.ndarray, units: int, size: int) -> list:
    """The stretches of ``size`` positions of :meth:`Rows._numpy`'s scan, each with the columns
    in it (columns start at ``col_first``, ``units`` positions in all): ``(lo, hi, cont, piece,
    cols, sizes, before)``: positions ``lo .. hi``, whether the first column runs on from the
    stretch before (``cont``), where each column's part starts in the stretch, their columns,
    their lengths, and how many positions of each column came before the stretch.

    >>> [(lo, hi, cont, p.tolist(), c.tolist(), s.tolist(), b.tolist())
    ...  for lo, hi, cont, p, c, s, b in _cache_blocks(np.array([0, 3]), 7, 4)]
    [(0, 4, False, [0, 3], [0, 1], [3, 1], [0, 0]), (4, 7, True, [0], [1], [3], [1])]
    """
    plan = []
    for lo in range(0, units, size):
        hi = min(lo + size, units)
        first, end = np.searchsorted(col_first, [lo, hi])  # the columns starting in lo .. hi
        starts = col_first[first:end] - lo
        cont = not len(starts) or starts[0] != 0
        piece = np.concatenate([[0], starts]).astype(np.intp) if cont else starts
        cols = np.arange(first - cont, first - cont + len(piece))
        before = np.zeros(len(piece), dtype=np.intp)
        if cont:
            before[0] = lo - col_first[first - 1]
        plan.append((lo, hi, bool(cont), piece, cols, np.diff(np.append(piece, hi - lo)), before))
    return plan


class Rows:
    """Every sup of one utility (Def. 2.1, 3.2 by Algorithm 2): UC (column 0) and each relevant
    node, for every subgroup.

    The fast twin of ``audit.UtilityRows``.  Input: per atom its score and UC residual, and
    node terms ``terms[k, i]`` belonging to column ``col_table[k, kind[i]]`` (1.. for relevant
    nodes, anything below 1 for none; for samples ``kind`` is the label, or the atom where the
    columns are per atom); a column occurs on one row of the table only, as a node lies at one
    depth.  One sort of the
    scores gives the tie blocks; the nonzero terms become entries (column, rank, value),
    row by row of the terms, each row's grouped by column with a stable integer sort (zero terms
    change no sum, as in :func:`huc_ref.intervals.max_interval_sum`).
    Algorithm 2 then runs on all columns at once: within a column the supremum over
    intervals of ``|C_b - C_r|`` is the range ``max C - min C`` of the prefix sums at block
    ends (with ``C_0 = 0``), the largest and smallest with the first positions attaining them;
    the witness is the pair of first extreme positions, mapped back to the blocks of all atoms
    (App. F.3's tie rule).  numpy reads the positions :data:`CACHE_BLOCK` at a time per subgroup
    (a column running on into the next stretch carries its prefix sum there, and its extremes
    so far), so that each stretch's products, prefix sums and extremes stay in the cache.
    With ties, the prefix sums add each block's total (:func:`huc_ref.fast.numbers.block_sums`,
    the same bits whatever order the block's atoms are in), so the audit is the same bits
    after permuting atoms.  ``threads``: numpy scans the subgroups on that many threads (each
    subgroup's columns are its own: the same bits); ``lanes``: the weights as the compiled scan
    reads them (:func:`huc_ref.fast.kernels.weight_lanes`), when the caller made them once for
    several utilities (and, as a third item, ``(kind, lane_keys(kind, rows))`` for the array of
    kinds it passes every utility: :func:`huc_ref.fast.kernels.lane_keys`).  ``labels``: sample
    atoms' labels and how many there are, ``(y, K)``: where the scores' blocks are found without a
    sort and each block's atoms of one label share their residual, each block is summed by label
    (:func:`huc_ref.fast.numbers.label_cells`; under numba :func:`huc_ref.fast.kernels.group_blocks`).

    Parameters
    ----------
    score : ndarray of shape (n,)
        The atoms' scores ``mu_u(p_i)``.
    residual : ndarray of shape (n,)
        Their UC residuals.
    terms : ndarray of shape (rows, n)
        Their node terms (no rows: the UC column alone).
    col_table : ndarray or None
        ``col_table[k, kind[i]]``: the column of ``terms[k, i]``.
    kind : ndarray or None
        Each atom's kind (a sample atom's label, or the atom).
    W : ndarray of shape (n, |C|)
        ``w_i c(x_i)`` per atom and subgroup.
    n_cols : int
        The columns: UC and the relevant nodes.
    engine : {"numpy", "numba"}, default "numpy"
        The scan.
    score_error : ndarray of shape (n,), optional
        Bounds on the scores' float errors.
    exact_score : callable, optional
        The exact scores behind the floats (:class:`huc_ref.fast.utilities.ExactScores`).
    blocks : TieBlocks, optional
        The tie blocks, where the caller has them.
    uc_copies : sequence of int, default ()
        Columns whose every entry is the UC residual: they take its sums and witness.
    lanes : tuple, optional
        The weights as the compiled scan reads them.
    threads : int, default 1
        numpy's scan: subgroups on this many threads.
    labels : tuple of (ndarray, int), optional
        Sample atoms' labels and how many there are, ``(y, K)``.

    Examples
    --------
    Two atoms of weight 1/2, residuals 1/2 (score 1/2) and -1/4 (score 1/4): the prefix sums
    in score order are 0, -1/8, 1/8, and the witness is the block of score 1/2.

    >>> t = Rows(np.array([0.5, 0.25]), np.array([0.5, -0.25]), np.zeros((0, 2)), None, None, np.full((2, 1), 0.5), 1)
    >>> [x.tolist() for x in t.best[0]], t.interval(1, 2)  # (sup, r, b, moment) of column 0, UC
    ([[0.25], [1], [2], [0.25]], [0.5, 0.5])
    """

    def __init__(self, score, residual, terms, col_table, kind, W, n_cols, engine="numpy", score_error=None,
                 exact_score=None, blocks=None, uc_copies=(), lanes=None, threads=1, labels=None):
        self._labels = labels
        self._cells = None  # the labels' number, where group_scores gave each atom's cell
        self._lanes = lanes  # W as the compiled scan reads it (huc_ref.fast.kernels.weight_lanes), if the caller has it
        self._threads = threads  # numpy's scan: subgroups on this many threads
        #: the groups of near-equal scores float64 could not order (:class:`Run`), and what became of
        #: them (:class:`huc_ref.results.NearTies`, None where there were none)
        self._runs, self._outward, self.near_ties = (), False, None
        ranked = None  # the scores in the order of a sort made here (read once, by tie_blocks)
        if blocks is None and not len(terms):
            blocks = self._sorted_scan(score, residual, W, n_cols, score_error, exact_score, engine)
            ranked = self.__dict__.pop("_ranked", None)
            if blocks is True:
                self._copy_uc(uc_copies)
                return
        # blocks: the (order, new) of tie_blocks, when the caller has them (the scores are unchanged)
        if blocks is None:
            blocks = tie_blocks(score, score_error, exact_score, getattr(self, "order", None), ranked, engine)
        self.order, new = blocks
        self._runs, self._outward = getattr(blocks, "runs", ()), getattr(blocks, "exact", False)
        order, self._score = self.order, score
        self._blocks(new, len(score))
        #: per subgroup: ``(sup, r, b, moment)`` arrays over the columns [UC, relevant nodes...]
        if not len(terms):  # the UC column alone
            self.best = self._uc_only(residual.take(order), W, n_cols, engine)
        else:
            ties = self._ties(len(score))  # (without ties every rank is its own block: neither scan reads it)
            block = np.concatenate([[0], np.cumsum(new)]) if ties else np.zeros(0, dtype=np.int64)  # each rank's
            scan = self._compiled if engine == "numba" else self._numpy
            self.best = scan(block, residual, terms, col_table, np.asarray(kind), W, n_cols)
        self._copy_uc(uc_copies)
        if self._runs:
            self.near_ties = self._tally(residual, terms, W, bool(len(uc_copies)))

    def __getattr__(self, name):
        """The sort behind blocks found without one (:func:`group_scores`), made when first read:
        ``order`` (equal scores by index, the packed sort's order; numpy's stable argsort of
        16-bit blocks is a radix sort), ``starts`` and ``block_last``; without ties (every atom its
        own block) ``starts`` and ``block_last``, the ranks (an array of ``n`` numbers made only if read)."""
        if name in ("starts", "block_last") and "_every" in self.__dict__:
            self.starts = self.block_last = np.arange(self._every)
            return getattr(self, name)
        if self.__dict__.get("_groups") is None or name not in ("order", "starts", "block_last"):
            raise AttributeError(name)
        group, distinct = self._block_of(), self._groups[1]
        self.order = np.argsort(group.astype(np.uint16), kind="stable")
        sizes = np.bincount(group, minlength=len(distinct))
        self.block_last = np.cumsum(sizes) - 1
        self.starts = self.block_last - sizes + 1
        return getattr(self, name)

    def _block_of(self) -> np.ndarray:
        """Each atom's block, after :func:`group_scores` (its cells divided by the labels' number,
        where it gave cells; made once)."""
        if self._cells is None:
            return self._groups[0]
        if "_block" not in self.__dict__:
            self._block = self._groups[0] // self._cells
        return self._block

    def _copy_uc(self, columns):
        """Columns whose every entry is the UC residual's take its sums and witness."""
        for col in columns:
            for arrays in self.best:
                for arr in arrays:
                    arr[col] = arr[0]

    def _sorted_scan(self, score, residual, W, n_cols, score_error, exact_score, engine):
        """The UC column alone straight after the sort, when float64 certifies every gap between
        neighbouring distinct scores and equal floats are one block (no exact scores behind the
        floats, ``exact_score`` None, or equal floats of rows that are the same numbers,
        ``exact_score.same``): True when done; else the blocks ``(order, new)`` for the general
        route, or None (the sort kept in ``self.order``) where an uncertain gap or an equal pair
        of floats of different rows needs :func:`tie_blocks`.  The sort gives the
        scores in rank order (:func:`sort_scores`) and the residuals are gathered into it; then
        numba: one pass of :func:`huc_ref.fast.kernels.sorted_uc_scan` (with ties, of
        ``tied_uc_scan``); numpy: the gaps checked, then :meth:`_uc_only`.  Few distinct scores far
        apart: their blocks without a sort (:func:`group_scores`), under numba too where every
        subgroup's weights are equal and the labels are given (each block's residuals then summed
        by label, the blocks and cells from :func:`huc_ref.fast.kernels.group_blocks`; ``python
        bench/peer.py`` at 10^6 scores of three decimals: numba 0.32-0.44x ``ecce`` this way, 0.72-0.85x
        by its sort and tied scan; docs/performance.md)."""
        n = len(score)
        gap = 2.0 * score_error.max() if score_error is not None and n else 0.0

        def ties(a, b) -> bool:
            """Whether equal floats ``a[k]``, ``b[k]`` are each one exact tie (no exact scores, or the same rows)."""
            if exact_score is None:
                return True
            same = getattr(exact_score, "same", None)
            same = None if same is None else same(a, b)
            return same is not None and bool(same.all())
        by_label = engine == "numba" and self._labels is not None and _equal_columns(W).all()
        if (engine == "numpy" or by_label) and _few_scores(score):  # few distinct scores: blocks without a sort
            if engine == "numba":  # blocks and cells in one compiled pass each
                grouped, sums = _group_compiled(score, self._labels, residual)
            else:
                grouped, sums = group_scores(score, self._labels), None
            cells = engine == "numpy" and self._labels is not None and grouped is not None and \
                len(grouped[1]) * self._labels[1] <= n  # (group_scores gave cells, not blocks)
            if grouped is not None and np.all(np.diff(grouped[1]) > gap) and (len(grouped[1]) == n or ties(
                    *_group_pairs(grouped[0] // self._labels[1] if cells else grouped[0], len(grouped[1])))):
                self._score, self._groups = score, grouped
                if sums is not None:
                    self._label_sums = sums
                elif cells:
                    self._cells = self._labels[1]
                self.best = self._uc_only(residual, W, n_cols, engine)
                return True
        order, ranked = sort_scores(score, engine)
        self.order, self._score, self._ranked = order, score, ranked
        if engine == "numba":
            from .kernels import sorted_uc_scan, tied_uc_scan
            out = np.empty((W.shape[1], 4))
            equal = _equal_columns(W)
            new = np.ones(max(n - 1, 0), dtype=bool)
            res = residual.take(order)
            found = sorted_uc_scan(ranked, res, order, W, equal, gap, out)
            if found == 2 and ties(*_equal_pairs(ranked, order)):
                found = tied_uc_scan(ranked, res, order, W, equal, gap, new, out)
            if found:
                return None
            self._blocks(new, n)
            self.best = [self._record(n_cols, mx, int(i_mx), mn, int(i_mn)) for mx, i_mx, mn, i_mn in out.tolist()]
            return True
        buf = np.empty(n)  # the gaps between neighbours, then (all far apart) the residuals in rank order
        d = np.subtract(ranked[1:], ranked[:-1], out=buf[:-1])
        if n < 2 or d.min() > gap:  # (the smallest gap: no array of comparisons)
            self._every = n
            self.best = self._uc_only(np.take(residual, order, out=buf, mode="clip"), W, n_cols, engine)
            return True
        if not np.any((d > 0) & (d <= gap)) and ties(*_equal_pairs(ranked, order)):  # equal floats alone: ties
            return order, d > 0
        return None

    def _ties(self, n: int) -> bool:
        """Whether the ``n`` atoms' blocks are fewer than the atoms (some atoms tied)."""
        return "_every" not in self.__dict__ and len(self.starts) < n

    def _blocks(self, new, n):
        """``starts`` and ``block_last`` of the ``n`` atoms' tie blocks, from where a new block starts."""
        if new.all():  # no ties: every atom its own block (the ranks, made when read: __getattr__)
            self._every = n
        else:
            self.starts = np.concatenate([[0], np.flatnonzero(new) + 1])
            self.block_last = np.concatenate([self.starts[1:] - 1, [n - 1]])

    @staticmethod
    def _record(n_cols, mx, i_mx, mn, i_mn) -> tuple:
        """One subgroup's ``(sup, r, b, moment)`` arrays with the UC column filled from the largest
        and smallest prefix sums at block ends and the first blocks (0-based) attaining them
        (App. F.3's tie rule; ``C_0 = 0``, so a maximum below 0 is the empty prefix)."""
        best = tuple(np.zeros(n_cols, dtype=t) for t in (float, int, int, float))
        i_mx, i_mn = (i_mx + 1 if mx > 0 else 0), (i_mn + 1 if mn < 0 else 0)
        sup = max(mx, 0.0) - min(mn, 0.0)
        if sup > 0:
            for arr, value in zip(best, (sup, min(i_mx, i_mn), max(i_mx, i_mn), sup if i_mx > i_mn else -sup)):
                arr[0] = value
        return best

    def _compiled(self, block, residual, terms, col_table, kind, W, n_cols) -> list:
        """Algorithm 2 by :func:`huc_ref.fast.kernels.rank_scan`: one pass over the atoms in rank
        order, reading each where it lies (its terms, residual, label and weights asked for ahead)."""
        from .kernels import lane_keys, rank_scan, weight_lanes
        ties = self._ties(len(residual))
        table, w_row, *made = weight_lanes(W) if self._lanes is None else self._lanes  # (sample_tables: once for all)
        # each atom's kind and row of weights in one number (lane_keys), made once where the caller made them for
        # this very array of kinds (sample_tables: the labels, every utility's kinds where the tree keeps its paths)
        for_kind, keys = made[0] if made else (None, None)
        key, shift = keys if for_kind is kind else lane_keys(kind, w_row)
        found = rank_scan(block, self.order, residual, key, np.asarray(terms, dtype=float),
                          np.ascontiguousarray(col_table, dtype=np.int64), table, shift, W.shape[1],
                          n_cols, sum_levels(int((self.block_last - self.starts).max()) + 1) if ties else np.zeros(0))
        return [tuple(x[g] for x in found) for g in range(W.shape[1])]

    def _numpy(self, block, residual, terms, col_table, kind, W, n_cols) -> list:
        """Algorithm 2 on every column at once, one subgroup at a time (see the class)."""
        n, order = len(residual), self.order
        best = [tuple(np.zeros(n_cols, dtype=t) for t in (float, int, int, float)) for _ in range(W.shape[1])]
        small = np.int16 if n_cols < 2**15 else np.int64  # (numpy's stable argsort of int16 is a radix sort)
        table = np.asarray(col_table, dtype=small)
        rows = np.flatnonzero(np.any(table > 0, axis=1)) if len(terms) else []  # rows of terms with a column
        # the entries, column 0 first (the UC residuals, ranks in order), then row by row of the terms (each
        # row's columns, ranks increasing within each), in arrays of their exact length, counted first in the
        # atoms' order (a count needs no sort): each row's entries then go straight to their place, no second
        # copy of them is held (the longest possible length, (1 + D) n, would pass glibc's 32 MiB mmap
        # threshold sooner, and memory above it is fresh pages at every call, whose first touch costs here)
        counts = [np.count_nonzero(residual)]
        counts += [np.count_nonzero((table[k].take(kind) > 0) & (terms[k] != 0)) for k in rows]
        m = sum(counts)
        col, rank, val = np.empty(m, dtype=small), np.empty(m, dtype=np.intp), np.empty(m)
        v = np.take(residual, order)  # one row in rank order (the residuals first), reused
        a, b = 0, counts[0]
        col[a:b], rank[a:b] = 0, np.flatnonzero(v)
        np.take(v, rank[a:b], out=val[a:b], mode="clip")
        if len(rows):
            kind, c = kind.take(order), np.empty(n, dtype=small)  # in rank order
        for k, count in zip(rows, counts[1:]):  # grouped by column, ranks in order within each
            a, b = b, b + count
            np.take(table[k], kind, out=c, mode="clip")  # (clip: numpy copies a take into out= that may raise)
            np.take(terms[k], order, out=v, mode="clip")
            nz = np.flatnonzero((c > 0) & (v != 0))
            ck = c.take(nz)
            if not len(nz) or ck.min() == ck.max():  # one column (the root's row): in rank order already
                rank[a:b], col[a:b] = nz, ck
            else:
                p = np.argsort(ck, kind="stable")
                np.take(nz, p, out=rank[a:b], mode="clip")
                np.take(ck, p, out=col[a:b], mode="clip")
            np.take(v, rank[a:b], out=val[a:b], mode="clip")
        v = kind = c = None  # (the rows in rank order: the scan reads the entries alone)
        if not m:
            return best
        change = col[1:] != col[:-1]
        seg = np.flatnonzero(np.concatenate([[True], change]))  # first entry of each column's run
        if not self._ties(n):  # no ties: every entry ends its own block, and its block is its rank
            blk, last, be_first = rank, None, seg
        else:
            blk = block[rank]
            last = np.flatnonzero(np.concatenate([change | (blk[1:] != blk[:-1]), [True]]))  # block ends
            be_first = np.searchsorted(last, seg)  # first block end of each column
        WT = W.T if W.T.flags.c_contiguous or W.strides[0] == 0 else np.ascontiguousarray(W.T)  # a row per subgroup
        seg_col = col[seg]

        def full(j):  # prefix j of a column -> prefix of the blocks of all atoms
            end = np.maximum(be_first + j - 1, 0)
            return np.where(j > 0, blk[end if last is None else last[end]] + 1, 0)
        ties = last is not None and len(last) < len(val)
        if ties:  # each column's blocks: their first entries, and the first block of each column
            block_first = np.concatenate([[0], last[:-1] + 1])
        equal = _equal_columns(W)  # equal weights (everyone): one number, not a gather
        units = len(last) if ties else m  # the prefix sums' positions: block ends (entries without ties)
        plan = _cache_blocks(be_first, units, CACHE_BLOCK)
        G = W.shape[1]
        if len(plan) == 1 and 1 < G and G * units <= _ALL_SUBGROUPS:  # few positions: every subgroup at once
            return self._every_subgroup(best, WT, order, equal, ties, val, rank, block_first if ties else None,
                                        units, be_first, plan[0][5], seg_col, full)

        def subgroups(ks):
            """The subgroups ``ks`` one after another, in buffers of their own (reused by each of them:
            fresh memory costs here)."""
            buf = np.empty(m if ties else min(m, CACHE_BLOCK))
            # the prefix sums in a buffer of their own: numpy's cumsum into its own input keeps the GIL (two
            # threads summing in place take as long as one: python bench/threads.py), into another array it lets
            # the other run
            sums = np.empty(min(units, CACHE_BLOCK))
            ranked = np.empty(n)  # a subgroup's weights in rank order
            for k in ks:
                scan(k, buf, sums, ranked)

        def scan(k, buf, sums, ranked):
            weight = WT[k, 0] if equal[k] else None
            if weight is None:
                np.take(WT[k], order, out=ranked, mode="clip")  # (clip: no bounds buffer)
            if ties:  # the prefix sums at block ends only, of the blocks' order-free totals
                y = block_sums(self._weighted(val, rank, ranked, weight, buf), block_first)
            mx, i_mx = np.full(len(seg), -np.inf), np.zeros(len(seg), dtype=np.intp)
            mn, i_mn = np.full(len(seg), np.inf), np.zeros(len(seg), dtype=np.intp)
            empty = np.zeros(len(seg))  # each column's empty prefix C_0 as its prefix sums carry it (_restart)
            carry = 0.0
            for lo, hi, cont, piece, cols, sizes, before in plan:  # a cache's worth of positions at a time
                if ties:
                    x = y[lo:hi]
                else:
                    x = self._weighted(val[lo:hi], rank[lo:hi], ranked, weight, buf[:hi - lo])
                if cont:  # the column running on from the last stretch: its prefix sum so far
                    x[0] += carry
                C, offset = self._restart(x, piece, sums[:hi - lo])
                empty[cols[1:]] = offset
                carry = C[-1]
                b_mx, bi_mx, b_mn, bi_mn = self._extremes(C, piece, sizes)
                up, down = b_mx > mx[cols], b_mn < mn[cols]  # (strictly: the first position attaining it is kept)
                mx[cols[up]], i_mx[cols[up]] = b_mx[up], (bi_mx + before)[up]
                mn[cols[down]], i_mn[cols[down]] = b_mn[down], (bi_mn + before)[down]
            self._store(best[k], mx, i_mx, mn, i_mn, empty, seg_col, full)

        G = W.shape[1]
        parts = [range(G)[j::self._threads] for j in range(min(self._threads, G))]  # (subgroups independent)
        run_all(subgroups, parts, len(parts))
        return best

    def _every_subgroup(self, best, WT, order, equal, ties, val, rank, block_first, units, piece, sizes, seg_col,
                        full) -> list:
        """Algorithm 2 (App. F.3) as :meth:`_numpy` scans one stretch, for every subgroup at once,
        a row each: the same operations on each row as the scan of one subgroup, so the same bits;
        one call where the subgroups took one each, which is most of the time of an audit of a
        few thousand atoms."""
        G, n = WT.shape
        X = np.empty((G, units))
        ranked = np.empty(n)
        for k in range(G):  # each subgroup's values: its weights times the entries (blocks' totals with ties)
            weight = WT[k, 0] if equal[k] else None
            if weight is None:
                np.take(WT[k], order, out=ranked, mode="clip")
            if ties:
                X[k] = block_sums(self._weighted(val, rank, ranked, weight, np.empty(len(val))), block_first)
            else:
                self._weighted(val, rank, ranked, weight, X[k])
        C, offset = self._restart(X, piece, X)
        at = np.arange(units)
        found = []
        for reduce in (np.maximum, np.minimum):  # each column's extreme and the first position attaining it
            extreme = reduce.reduceat(C, piece, axis=1)
            first = np.minimum.reduceat(np.where(C == np.repeat(extreme, sizes, axis=1), at, units), piece, axis=1)
            found += [extreme, first - piece + 1]
        mx, i_mx, mn, i_mn = found
        empty = np.concatenate([np.zeros((G, 1)), offset], axis=1)
        for k in range(G):
            self._store(best[k], mx[k], i_mx[k], mn[k], i_mn[k], empty[k], seg_col, full)
        return best

    @staticmethod
    def _restart(x, piece, out):
        """Prefix sums of the columns laid end to end in ``x`` (along its last axis; columns start at
        ``piece``), in one ``cumsum``: each column's first entry has the total of the columns before it
        taken off (``reduceat``), so its sums restart from about 0.  About: the ``cumsum``'s running total
        and ``reduceat``'s differ by their roundings, and every prefix sum of a column carries that
        difference, the column's empty prefix ``C_0``.  Returned beside the sums (one per column after
        the first), it stands for ``C_0 = 0`` in :meth:`_store`, which is how a column whose first
        entries are exact zeros (weight 0 in the subgroup) keeps App. F.3's tie rule: its prefix sums
        there are exactly that ``C_0``, 5e-18 where 0 was meant, and the witness started one block late.

        >>> x = np.array([0.1, 0.2, 0.3, 0.0, -1.0])  # column 1: 0.1, 0.2, 0.3; column 2: 0, then -1
        >>> C, offset = Rows._restart(x.copy(), np.array([0, 3]), np.empty(5))
        >>> float(offset[0]), bool(C[3] == offset[0]), bool(abs(C[4] - offset[0] + 1.0) < 1e-15)
        (1.1102230246251565e-16, True, True)
        """
        if x.shape[-1] and len(piece) > 1:
            first = x[..., piece[1:]].copy()
            x[..., piece[1:]] -= np.add.reduceat(x, piece, axis=-1)[..., :-1]  # restart the prefix sums in every column
            C = np.cumsum(x, axis=-1, out=out)
            return C, C[..., piece[1:]] - first  # each column's C_0: its first prefix sum less its first entry
        return np.cumsum(x, axis=-1, out=out), np.zeros(x.shape[:-1] + (max(len(piece) - 1, 0),))

    @staticmethod
    def _store(best, mx, i_mx, mn, i_mn, empty, seg_col, full):
        """One subgroup's ``(sup, r, b, moment)`` for the columns ``seg_col`` from their largest and
        smallest prefix sums and the first positions attaining them, measured from each column's empty
        prefix ``C_0`` (``empty``, :meth:`_restart`): Algorithm 2's ``sup_I |C_b - C_r|`` with ``C_0``
        among the ``C_r``, the first of equal extremes kept (App. F.3's tie rule)."""
        i_mx, i_mn = np.where(mx > empty, i_mx, 0), np.where(mn < empty, i_mn, 0)
        sup = np.maximum(mx, empty) - np.minimum(mn, empty)
        r, b = np.minimum(i_mx, i_mn), np.maximum(i_mx, i_mn)
        live = sup > 0
        for arr, values in zip(best, (sup, full(r), full(b), np.where(i_mx > i_mn, sup, -sup))):
            arr[seg_col[live]] = values[live]

    @staticmethod
    def _weighted(val, rank, ranked, weight, out):
        """The entries' values times their subgroup's weight: ``weight`` (everyone's, one number),
        else the weights in rank order ``ranked`` at the entries' ranks (rising within a column)."""
        if weight is not None:
            return np.multiply(val, weight, out=out)
        return np.multiply(np.take(ranked, rank, out=out, mode="clip"), val, out=out)

    def _uc_only(self, residual, W, n_cols, engine) -> list:
        """Algorithm 2 on the UC column alone (no node terms; ``residual`` in rank order, a gathered
        copy this uses up, or, after :func:`group_scores`, in the atoms' order, kept): the prefix
        sums of the blocks' totals, whose first extreme positions are block prefixes.  A subgroup
        whose weights are all equal multiplies by one number instead of gathering its weights,
        and after :func:`group_scores`, given the labels, multiplies each block's residual of each
        label once (:func:`huc_ref.fast.numbers.label_cells`: the same bits as atom by atom);
        ``engine="numba"`` without ties: one compiled pass per subgroup
        (:func:`huc_ref.fast.kernels.uc_scan`)."""
        if engine == "numba":
            from .kernels import uc_scan
        grouped = self.__dict__.get("_groups")
        equal = _equal_columns(W)
        cells = self.__dict__.get("_label_sums")  # (numba's, made with the blocks)
        if cells is None and self._cells is not None and equal.any():
            cells = label_cells(residual, grouped[0], len(grouped[1]), self._cells)
        best = []
        for k in range(W.shape[1]):
            w = W[:, k]
            if grouped is None and engine == "numba" and not self._ties(len(residual)):
                mx, i_mx, mn, i_mn = uc_scan(residual, w[:1] if equal[k] else w, self.order)
            else:
                last = grouped is None and k == W.shape[1] - 1  # (the residuals needed no more: their buffer serves)
                weight = w[0] if equal[k] else w if grouped is not None else w.take(self.order)
                if cells is not None and equal[k]:  # each block's values by label, and how many of each
                    block, value, count = cells
                    C = group_sums(value * weight, block, len(grouped[1]), count)
                else:
                    C = np.multiply(residual, weight, out=residual if last else None)
                    if grouped is not None:  # the blocks' order-free totals, block by block
                        C = group_sums(C, self._block_of(), len(grouped[1]))
                    elif self._ties(len(C)):  # ties: the blocks' order-free totals
                        C = block_sums(C, self.starts)
                np.cumsum(C, out=C)
                i_mx, i_mn = int(np.argmax(C)), int(np.argmin(C))
                mx, mn = C[i_mx], C[i_mn]
            best.append(self._record(n_cols, float(mx), int(i_mx), float(mn), int(i_mn)))
        return best

    @staticmethod
    def _extremes(C, be_first, counts):
        """Per column (block ends ``be_first[c] ..``, ``counts[c]`` of them), the largest and smallest
        prefix sum of ``C`` and the prefix index (1-based) of the first block end attaining each
        (App. F.3's tie rule).  Few long columns: ``argmax``/``argmin`` of each (one read, the first
        of equal values); many: ``reduceat`` and one comparison with each column's extreme.

        >>> [x.tolist() for x in Rows._extremes(np.array([1.0, 3.0, 3.0, -2.0, 0.5]), np.array([0, 3]),
        ...                                      np.array([3, 2]))]
        [[3.0, 0.5], [2, 2], [1.0, -2.0], [1, 1]]
        """
        if _LONG_COLUMN * len(be_first) <= len(C):
            ends = be_first + counts
            i_mx = np.array([np.argmax(C[a:b]) for a, b in zip(be_first, ends)], dtype=np.intp)
            i_mn = np.array([np.argmin(C[a:b]) for a, b in zip(be_first, ends)], dtype=np.intp)
            return C[be_first + i_mx], i_mx + 1, C[be_first + i_mn], i_mn + 1
        out = []
        for extreme in (np.maximum.reduceat(C, be_first), np.minimum.reduceat(C, be_first)):
            hits = np.flatnonzero(C == np.repeat(extreme, counts))
            out += [extreme, hits[np.searchsorted(hits, be_first)] - be_first + 1]
        return tuple(out)

    def interval(self, r, b):
        """The witness ``[s_(r+1), s_(b)]`` of Algorithm 2 (App. F.3; None when empty).

        Parameters
        ----------
        r, b : int
            The witness's blocks ``r .. b-1``.

        Returns
        -------
        list of float or None
            ``[lo, hi]``, or None.

        Examples
        --------
        >>> t = Rows(np.array([0.5, 0.25]), np.array([0.5, -0.25]), np.zeros((0, 2)), None, None, np.ones((2, 1)), 1)
        >>> t.interval(0, 2), t.interval(0, 0)
        ([0.25, 0.5], None)
        """
        found = self.intervals(np.array([r]), np.array([b]))[0]
        return None if found is None else list(found)

    def intervals(self, r: np.ndarray, b: np.ndarray) -> list:
        """The witness ``[s_(r+1), s_(b)]`` of Algorithm 2 (App. F.3) for each column's ``r[col], b[col]``, as
        tuples (None when empty): :meth:`interval` of every column in one gather.

        Parameters
        ----------
        r, b : ndarray of int
            Each column's witness blocks ``r .. b-1``.

        Returns
        -------
        list of tuple or None
            ``(lo, hi)`` of each column, or None.

        Examples
        --------
        >>> t = Rows(np.array([0.5, 0.25]), np.array([0.5, -0.25]), np.zeros((0, 2)), None, None, np.ones((2, 1)), 1)
        >>> t.intervals(np.array([0, 1, 0]), np.array([2, 1, 1]))
        [(0.25, 0.5), None, (0.25, 0.25)]
        """
        out = [None] * len(r)
        some = np.flatnonzero(b != r)
        if not len(some):
            return out
        grouped = self.__dict__.get("_groups")
        if grouped is not None:  # (one float per block)
            low, high = grouped[1].take(r[some]), grouped[1].take(b[some] - 1)
        elif "_every" in self.__dict__ and "starts" not in self.__dict__:  # every atom its own block: ranks
            low, high = self._score.take(self.order.take(r[some])), self._score.take(self.order.take(b[some] - 1))
        else:
            low = self._score.take(self.order.take(self.starts.take(r[some])))
            high = self._score.take(self.order.take(self.block_last.take(b[some] - 1)))
        low, high = low.tolist(), high.tolist()
        if self._runs and self._outward:  # ends in groups float64 could not order: from their exact scores
            low, high = self._run_ends(r[some], low, _low_end), self._run_ends(b[some] - 1, high, _high_end)
        for col, lo, hi in zip(some.tolist(), low, high):
            out[col] = (lo, hi)
        return out

    def _run_ends(self, blocks: np.ndarray, given: list, end) -> list:
        """``given`` (witness ends, floats) with those at ``blocks`` that lie in a :class:`Run` made
        by ``end`` (:func:`_low_end` or :func:`_high_end`) from the run and the block's place in it."""
        if "_run_blocks" not in self.__dict__:  # each run's first block (its index among all) and its blocks
            every = "_every" in self.__dict__ and "starts" not in self.__dict__
            first = np.array([run.first for run in self._runs])
            self._run_blocks = (first if every else np.searchsorted(self.starts, first, "right") - 1,
                                np.array([1 if run.values is None else len(run.values) for run in self._runs]))
        first, count = self._run_blocks
        j = np.maximum(np.searchsorted(first, blocks, "right") - 1, 0)
        for k in np.flatnonzero((blocks >= first[j]) & (blocks < first[j] + count[j])).tolist():
            given[k] = end(self._runs[j[k]], int(blocks[k] - first[j[k]]), given[k])
        return given

    def _tally(self, residual, terms, W, flat: bool):
        """What became of the groups float64 could not order (:attr:`_runs`): the
        :class:`huc_ref.results.NearTies` of this utility.  A group left whole (``values`` None)
        can make any sup larger, never smaller, than the one reported: an interval of the exact
        order is whole blocks (whose moments Algorithm 2 took) and at most two parts of such
        groups, so each sup is within twice the largest ``sum_i |w_i c(x_i) v_i|`` over a group's
        atoms of its reported value (``v_i`` the UC residual; for HUC the largest of the atom's
        node terms; in each subgroup)."""
        from ..results import NearTies
        decided = [run for run in self._runs if run.values is not None]
        whole = [run for run in self._runs if run.values is None]
        uc = node = 0.0
        W = np.asarray(W)
        if len(W) != len(residual):  # (one row for every atom: the compiled flat scans' equal weights)
            W = np.broadcast_to(W[:1], (len(residual), W.shape[1]))
        for run in whole:
            members = self.order[run.first:run.last + 1]
            w = np.abs(W[members])  # (atoms, subgroups)
            uc = max(uc, float((w * np.abs(residual.take(members))[:, None]).sum(axis=0).max()))
            if len(terms):
                largest = np.abs(np.asarray(terms)[:, members]).max(axis=0)
                node = max(node, float((w * largest[:, None]).sum(axis=0).max()))
        return NearTies(len(decided), sum(run.last - run.first + 1 for run in decided), len(whole),
                        sum(run.last - run.first + 1 for run in whole), 2.0 * uc, 2.0 * (uc if flat else node))

    def members(self, r, b) -> np.ndarray:
        """The atoms (original indices) whose scores lie in blocks ``r .. b-1`` (Algorithm 2's
        witness; the members a boosting update moves, Sec. 3.2).

        Parameters
        ----------
        r, b : int
            The blocks ``r .. b-1``.

        Returns
        -------
        ndarray of int
            The atoms, in score order.

        Examples
        --------
        >>> t = Rows(np.array([0.5, 0.25]), np.array([0.5, -0.25]), np.zeros((0, 2)), None, None, np.ones((2, 1)), 1)
        >>> t.members(0, 2).tolist(), t.members(1, 2).tolist()  # in score order: atom 1 (1/4), atom 0 (1/2)
        ([1, 0], [0])
        """
        if b == r:
            return np.zeros(0, dtype=int)
        return self.order[self.starts[r]:self.block_last[b - 1] + 1]
