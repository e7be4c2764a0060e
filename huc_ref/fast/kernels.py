"""Optional compiled kernels for the fast path (numba; ``pip install huc-ref[numba]``).

The loops that numpy can only express as several passes over memory:

* :func:`top1_path_terms` reads each row of predictions once: subtree sums of every node
  (children summed left to right, as :meth:`huc_ref.fast.FastTree.level_sums` does), the
  top-1 decision at each utility's depth, and the path terms of F.4, sixteen rows at a time;
  its arrays come as three named structures (:class:`TreeRows`, :class:`Top1Plan`,
  :class:`Top1Out`);
* :func:`rank_scan` runs Algorithm 2 on every column and subgroup in one pass over the atoms in
  rank order, reading each where it lies (asked for ahead): prefix sums at block ends, the first
  maximum and minimum (App. F.3's tie rule), as ``huc_ref.fast.intervals.Rows`` does with
  reduceats, eight subgroups at a time;
* :func:`uc_scan` runs Algorithm 2 on the UC column alone (a flat tree, or UC-Boost) without ties
  in one pass, gathering each atom's weight as it goes (asked for ahead, as :func:`rank_scan`
  reads its atoms); :func:`sorted_uc_scan` does so straight
  after the sort when float64 certifies every gap (no ties), :func:`tied_uc_scan` with exact
  ties of floats; :func:`flat_rows_ok` and :func:`flat_terms` check and score the rows of a
  flat tree in one read each;
* :func:`null_scan` runs Algorithm 2's sups for many null draws of the labels at once, in one
  pass per draw over atoms already in rank order (:mod:`huc_ref.fast.significance`).

The steps numba does not turn into vector instructions by itself (the sample pass's sixteen rows,
the scan's eight subgroups, the requests ahead) are LLVM IR in :mod:`huc_ref.fast.lanes`, with
what each pays.  pure numpy (:mod:`huc_ref.fast`) stays the default and the reference; the
kernels are property-tested against it (tests/test_fast.py).  Importing this module compiles
nothing until first use; compiled code is cached next to the module.  Without numba the kernels
stay plain Python (:data:`COMPILED` is False): importable and doctested, far too slow to use.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .lanes import (
    COMPILED,
    GROUP_LANES,
    LANES,
    _choose,
    _emit_rows,
    _emit_terms,
    _lane_update,
    _meet,
    _path_masses,
    _path_means,
    _prefetch,
    _sum_run,
)
from .numbers import DROPPED

if COMPILED:
    import numba

__all__ = ["COMPILED", "TreeRows", "Top1Plan", "Top1Out", "top1_path_terms", "flat_rows_ok", "flat_terms",
           "rank_scan", "pad_lanes", "weight_lanes", "GROUP_LANES", "CODED_ROWS", "CODED_VALUES", "LANE_SHIFT",
           "lane_keys", "sorted_uc_scan", "tied_uc_scan", "uc_scan", "radix_sort_high", "group_sort", "GROUPED_KEYS",
           "group_blocks", "BLOCK_BUCKETS", "null_scan", "draw_labels", "AHEAD", "pack_scores", "unpack_sorted"]

_jit = numba.njit(cache=True, nogil=True) if COMPILED else (lambda fn: fn)
_inline = numba.njit(cache=True, nogil=True, inline="always") if COMPILED else (lambda fn: fn)  # (in its callers)


class TreeRows(NamedTuple):
    """A :class:`huc_ref.fast.FastTree`'s arrays that :func:`top1_path_terms` reads for App. F.4's
    sample pass (its rows: the
    tree's nodes, deeper levels at larger rows): ``dfs_leaf_row[t]``, the row of the ``t``-th leaf
    in depth-first order; ``run_start[a]`` and ``run_len[a]``, the rows of node ``a``'s children;
    ``parent_row``, ``depth_row``; ``leaf_row[y]``, label ``y``'s leaf; ``path_rows[k, y]``, the
    row of label ``y``'s path node at depth ``k`` (empty where the tree is too large for the table).

    Parameters
    ----------
    dfs_leaf_row, run_start, run_len, parent_row, depth_row, leaf_row : ndarray of int64
        The :class:`huc_ref.fast.FastTree` attributes of these names.
    path_rows : ndarray of int64 of shape (H + 1, K), or (0, 0)
        The path table, or an empty one.

    Examples
    --------
    >>> from huc_ref import LabelTree
    >>> from huc_ref.fast import FastTree
    >>> TreeRows.of(FastTree(LabelTree.from_children("r", {"r": ["a", "b"]}))).depth_row.tolist()
    [0, 1, 1]
    """

    dfs_leaf_row: np.ndarray
    run_start: np.ndarray
    run_len: np.ndarray
    parent_row: np.ndarray
    depth_row: np.ndarray
    leaf_row: np.ndarray
    path_rows: np.ndarray

    @classmethod
    def of(cls, ft) -> TreeRows:
        """The arrays of the :class:`huc_ref.fast.FastTree` ``ft`` (int64; its path table, or an empty
        one where the tree is too large for it: App. F.4's pass then walks the parents).

        Parameters
        ----------
        ft : huc_ref.fast.FastTree
            The tree as arrays.

        Returns
        -------
        TreeRows
            Its arrays, contiguous int64.

        Examples
        --------
        >>> from huc_ref import LabelTree
        >>> from huc_ref.fast import FastTree
        >>> TreeRows.of(FastTree(LabelTree.from_children("r", {"r": ["a", "b"]}))).path_rows.tolist()
        [[0, 0], [1, 2]]
        """
        table = np.zeros((0, 0), dtype=np.int64) if ft.path_rows is None else ft.path_rows
        return cls(*(np.ascontiguousarray(a, dtype=np.int64) for a in (
            ft.dfs_leaf_row, ft.run_start, ft.run_len, ft.parent_row, ft.depth_row, ft.leaf_row, table)))


class Top1Plan(NamedTuple):
    """The top-1 utilities :func:`top1_path_terms` scores (K.2), utility ``u`` by utility: its
    candidates, the cut at depth ``cut_depth[u]`` (rows ``cut_rows[cut_off[u]:cut_off[u + 1]]`` of
    :meth:`huc_ref.fast.FastTree.level_sums`, ``cut_label`` a label below each); ``agree``, the
    tables of :meth:`huc_ref.fast.FastTree.agreement` flattened one after another (utility ``u``'s
    from ``agree_at[u]``), or empty; the depths ``ks[u, :ks_len[u]]`` whose terms are stored; the
    row ``u_row[u]`` of the outputs' score, residual and error, and the offset ``term_at[u]`` of its
    terms.  :func:`huc_ref.fast.audit.top1_plan` makes one.

    Parameters
    ----------
    cut_rows, cut_label, cut_off : ndarray of int64
        The utilities' candidates, one cut after another: their rows of the level sums, a label
        below each, and where each utility's start (``|U| + 1`` entries).
    cut_depth : ndarray of int64
        Each utility's depth of its cut.
    agree, agree_at : ndarray
        The agreement tables and where each starts (``agree`` empty: the paths are compared).
    ks : ndarray of int64 of shape (|U|, H)
        Each utility's depths of stored terms, the first ``ks_len[u]`` of its row used.
    ks_len : ndarray of int64
        How many depths each utility stores.
    u_row : ndarray of int64
        Each utility's row of the outputs' score, residual and error.
    term_at : ndarray of int64
        Where each utility's terms start in the outputs' terms.

    Examples
    --------
    >>> from huc_ref import LabelTree, Top1AtDepth
    >>> from huc_ref.fast import FastTree
    >>> from huc_ref.fast.audit import top1_plan
    >>> ft = FastTree(LabelTree.from_children("r", {"r": ["a", "b"]}))
    >>> top1_plan(ft, [Top1AtDepth(ft.tree, 1)], [np.array([0])], [0], [6]).cut_rows.tolist()  # candidates a, b
    [1, 2]
    """

    cut_rows: np.ndarray
    cut_label: np.ndarray
    cut_off: np.ndarray
    cut_depth: np.ndarray
    agree: np.ndarray
    agree_at: np.ndarray
    ks: np.ndarray
    ks_len: np.ndarray
    u_row: np.ndarray
    term_at: np.ndarray


class Top1Out(NamedTuple):
    """Where :func:`top1_path_terms` writes App. F.4's outputs (the caller's arrays, rows ``start ..`` of each):
    ``score``, ``residual`` and ``error`` (utilities x atoms), ``terms`` (flat: each atom's terms
    side by side from :attr:`Top1Plan.term_at`), ``unsure`` (int8, utilities x the call's rows: 1
    where float64 cannot order the candidates) and ``sums`` (3 numbers: the smallest and largest
    row sum, and 1 where some entry is 0).

    Parameters
    ----------
    score, residual, error : ndarray of shape (|U|, n)
        The scores, UC residuals and the scores' error bounds.
    terms : ndarray
        Every utility's terms, flat.
    unsure : ndarray of int8 of shape (|U|, rows)
        1 where a row's choice is left to the exact decision.
    sums : ndarray of shape (3,)
        The smallest and largest row sum, and whether some entry is 0.

    Examples
    --------
    >>> out = Top1Out(*(np.zeros((1, 2)) for _ in range(3)), np.zeros(2), np.zeros((1, 2), dtype=np.int8),
    ...               np.zeros(3))
    >>> out.unsure.dtype.name, len(out.sums)
    ('int8', 3)
    """

    score: np.ndarray
    residual: np.ndarray
    error: np.ndarray
    terms: np.ndarray
    unsure: np.ndarray
    sums: np.ndarray


@_jit
def _up_to(start, d, parent_row, depth_row, path):  # pragma: no cover - compiled
    """``path[0 .. d]``: the rows of the path nodes above row ``start`` at depths ``0 .. d``,
    walked up the parent pointers (``start`` itself below its own depth, as a cut repeats a leaf)."""
    cur = start
    while depth_row[cur] > d:
        cur = parent_row[cur]
    for k in range(d, -1, -1):
        path[k] = cur
        if depth_row[cur] == k:
            cur = parent_row[cur]


@_jit
def top1_path_terms(Xd, y, start, tree, plan, rel, smallest, out):  # pragma: no cover - compiled
    """For each row ``i`` of ``Xd`` (leaves in depth-first order) with label ``y[i]`` and each
    top-1 utility ``u`` of ``plan`` (:class:`Top1Plan`; ``tree``: :class:`TreeRows`): the score
    ``out.score[plan.u_row[u], start + i]``, the UC residual (``out.residual``, the same place), the
    score's error bound ``2 rel score`` (``out.error``; u is 0 or 1, so ``sum_y p_y |u_y| / pi_root``
    is the score) and the terms of the path nodes at depths ``plan.ks[u, :plan.ks_len[u]]``, written
    to ``out.terms[plan.term_at[u] + (start + i) ks_len[u] + t]`` (each atom's terms side by side:
    one cache line to gather them into rank order): straight into the caller's arrays
    (:class:`Top1Out`), so that threads filling other rows need no memory of their own.  Paths are
    read from ``tree.path_rows[k, y]``, or, where that table is empty (too large a tree), walked up
    the parents from the label's leaf, so nothing per label and depth is stored; a label's path and
    its nodes' masses are read once a block of rows, for every utility (:func:`_path_masses`).  How
    many of the label's path nodes contain the chosen candidate ``j`` is read from
    ``plan.agree[plan.agree_at[u] + y |cut| + j] + 1`` (:meth:`huc_ref.fast.FastTree.agreement`)
    where ``plan.agree`` is not empty, else found by comparing the two paths node by node.  The
    chosen node is the first candidate of largest mass; where another candidate's mass is within
    the relative error bound ``rel`` of it (:func:`huc_ref.fast.rounding_bound`), float64 cannot
    order them and ``out.unsure[u, i]`` is set to 1 for the caller to decide that row exactly.  The
    subtree sums, the choice, the path means and a whole block's outputs are computed for
    ``LANES`` rows at once in vector instructions (:mod:`huc_ref.fast.lanes`: the IEEE operations
    of the scalar loops, in their order).

    Returns -1, or the first row of a block of ``LANES`` rows that has a row that is not a
    vector of finite nonnegative numbers with a positive finite sum, or has an entry that is
    neither 0 nor at least ``smallest`` (a subnormal); ``out.sums`` receives the smallest and the
    largest row sum (children added as the subtree sums add them), and 1 where some entry is 0
    (else 0).  App. F.4 and K.2 (see ``huc_ref.fast.audit.path_terms``, its numpy twin).

    Parameters
    ----------
    Xd : ndarray of shape (n, K)
        The rows, leaves in depth-first order.
    y : ndarray of int
        The rows' label ids.
    start : int
        The rows' first index in the output arrays.
    tree : TreeRows
        The tree as arrays (:meth:`TreeRows.of` a :class:`huc_ref.fast.tree.FastTree`).
    plan : Top1Plan
        The top-1 utilities: their cuts, agreement tables, stored depths and places in ``out``
        (:func:`huc_ref.fast.audit.top1_plan`).
    rel : float
        The relative error bound of the subtree sums.
    smallest : float
        The smallest normal float64.
    out : Top1Out
        The caller's arrays, filled at rows ``plan.u_row``, columns ``start ..``.

    Returns
    -------
    int
        -1, or the first row of a block holding a row that is not a valid prediction.

    Examples
    --------
    >>> from huc_ref import LabelTree, Top1AtDepth
    >>> from huc_ref.fast import FastTree
    >>> from huc_ref.fast.audit import top1_plan
    >>> ft = FastTree(LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]}))
    >>> plan = top1_plan(ft, [Top1AtDepth(ft.tree, 1)], [np.array([0])], [0], np.array([0]))
    >>> out = Top1Out(*(np.empty((1, 1)) for _ in range(3)), np.empty(1), np.zeros((1, 1), dtype=np.int8),
    ...               np.empty(3))
    >>> top1_path_terms(np.array([[0.25, 0.25, 0.5]]), np.array([0]), 0, TreeRows.of(ft), plan, 2.0**-50,
    ...                 2.0**-1022, out)
    -1
    >>> out.score.tolist(), out.residual.tolist(), out.terms.tolist()  # 'a' (first of a tie): mu_r = 1/2, mu_a = 1
    ([[0.5]], [[0.5]], [0.5])
    >>> out.error.tolist(), out.sums.tolist()  # 2 rel score; the row sums' range; no entry 0
    ([[8.881784197001252e-16]], [1.0, 1.0, 0.0])
    >>> out.unsure.tolist()  # a (1/2) and y3 (1/2) tie: float64 cannot tell an exact tie from a near one
    [[1]]
    """
    c, K = Xd.shape
    R = tree.run_len.shape[0]
    H = 0
    for r in range(R):
        H = max(H, tree.depth_row[r])
    buf = np.empty((R, LANES))
    pick = np.empty(LANES, dtype=np.int64)
    close = np.empty(LANES, dtype=np.int64)
    pia = np.empty(LANES)  # the chosen node's mass, lane by lane
    labels = np.empty(LANES, dtype=np.int64)
    flat = Xd.ravel()
    meet = np.empty(LANES, dtype=np.int64)  # how many of the label's path nodes contain the chosen node
    prow = np.empty((H + 1, LANES), dtype=np.int64)  # the label's path nodes (rows of buf), depth by depth
    pis = np.empty((H + 1, LANES))  # their masses (1 where 0)
    mu = np.empty((H + 1, LANES))
    table, agreed = tree.path_rows.shape[0] > 0, plan.agree.shape[0] > 0
    path = np.empty(H + 1, dtype=np.int64)
    lead = np.empty(H + 1, dtype=np.int64)
    lowest, highest = np.inf, -np.inf
    zero = False  # an entry 0 (a label of probability 0 is one: the caller looks for those only then)
    for i0 in range(0, c, LANES):
        m = min(LANES, c - i0)
        if m == LANES:  # the block of rows, transposed (a fixed number of lanes: vectorised)
            for t in range(K):
                r = tree.dfs_leaf_row[t]
                for lane in range(LANES):
                    buf[r, lane] = Xd[i0 + lane, t]
        else:  # the last block: unused lanes hold ones
            for t in range(K):
                r = tree.dfs_leaf_row[t]
                for lane in range(m):
                    buf[r, lane] = Xd[i0 + lane, t]
                for lane in range(m, LANES):
                    buf[r, lane] = 1.0
        low = False  # a negative or subnormal entry (a pass of its own, over the rows as they lie)
        for t in range(i0 * K, (i0 + m) * K):
            x = flat[t]
            low |= (x < smallest) & (x != 0.0)
            zero |= x == 0.0
        for a in range(R - 1, -1, -1):  # deeper levels have larger rows: children first
            if tree.run_len[a] > 0:
                _sum_run(buf, a, tree.run_start[a], tree.run_len[a])
        for lane in range(LANES):  # a NaN or an infinity reaches the root's sum
            if low or not (buf[0, lane] > 0.0) or buf[0, lane] == np.inf:
                return i0
        for lane in range(m):
            lowest, highest = min(lowest, buf[0, lane]), max(highest, buf[0, lane])
        for lane in range(LANES):  # the label's path, the same for every utility (unused lanes: any label)
            label = labels[lane] = y[i0 + lane] if lane < m else y[i0]
            if table:
                for k in range(H + 1):
                    prow[k, lane] = tree.path_rows[k, label]
            else:
                _up_to(tree.leaf_row[label], H, tree.parent_row, tree.depth_row, path)
                for k in range(H + 1):
                    prow[k, lane] = path[k]
        _path_masses(buf, prow, H, pis)
        for u in range(plan.cut_depth.shape[0]):
            d = plan.cut_depth[u]
            lo, hi = plan.cut_off[u], plan.cut_off[u + 1]
            _choose(buf, plan.cut_rows, lo, hi, rel, pick, close, pia)
            if agreed:  # where the label's path parts from the chosen node's
                _meet(plan.agree, plan.agree_at[u] - lo, hi - lo, labels, pick, meet)
            for lane in range(0 if agreed else LANES):
                won = pick[lane]
                if table:
                    for k in range(d + 1):
                        lead[k] = tree.path_rows[k, plan.cut_label[won]]
                else:
                    _up_to(plan.cut_rows[won], d, tree.parent_row, tree.depth_row, lead)
                above = 0
                while above <= d and prow[above, lane] == lead[above]:
                    above += 1
                meet[lane] = above
            _path_means(pis, pia, meet, d, mu)
            row, D = plan.u_row[u], plan.ks_len[u]
            for lane in range(m):
                if close[lane] > 1:  # another candidate within the error bound: decided exactly
                    out.unsure[u, i0 + lane] = 1
            if m == LANES:  # a whole block: vector stores
                _emit_rows(mu, meet, d, 2.0 * rel, out.score, out.residual, out.error, row, start + i0)
                _emit_terms(mu, out.terms, plan.term_at[u] + (start + i0) * D, plan.ks[u], D)
                continue
            for lane in range(m):
                i = i0 + lane
                out.score[row, start + i] = mu[0, lane]
                out.residual[row, start + i] = (1.0 if meet[lane] > d else 0.0) - mu[0, lane]  # inside: y below a
                out.error[row, start + i] = 2.0 * rel * mu[0, lane]
                at = plan.term_at[u] + (start + i) * D
                for t in range(D):
                    k = plan.ks[u, t]
                    out.terms[at + t] = mu[k + 1, lane] - mu[k, lane]
    out.sums[0], out.sums[1], out.sums[2] = lowest, highest, 1.0 if zero else 0.0
    return -1


@_jit
def flat_rows_ok(X, tol, smallest):  # pragma: no cover - compiled
    """F.4's sample pass, its checks: whether every row of ``X`` is finite, nonnegative, free of
    subnormal entries (nonzero entries below ``smallest``) and of positive finite sum, within
    ``tol`` of 1 when ``tol >= 0``, in one read (on False the caller's numpy pass finds the row
    and says what is wrong with it).

    Parameters
    ----------
    X : ndarray of shape (n, K)
        The rows.
    tol : float
        How far a row may sum from 1; negative: any positive finite sum.
    smallest : float
        The smallest normal float64.

    Returns
    -------
    bool
        Whether every row passes.

    Examples
    --------
    >>> [bool(flat_rows_ok(np.array([row]), 1e-5, 2.2e-308)) for row in ([0.25, 0.75], [0.5, 0.4], [1e-320, 1.0])]
    [True, False, False]
    """
    good, check = True, tol >= 0.0
    for i in range(X.shape[0]):  # (no branch per entry: bitwise ands, NaN failing every comparison)
        total = 0.0
        for j in range(X.shape[1]):
            x = X[i, j]
            total += x
            good &= ((x >= smallest) | (x == 0.0)) & (x < np.inf)
        good &= (total > 0.0) & (total < np.inf) & (~check | (abs(total - 1.0) <= tol))
    return good


@_jit
def flat_terms(X, U, y, rel, nesting, score, residual, error):  # pragma: no cover - compiled
    """For a flat tree (every child of the root a leaf), per row of ``X`` (checked by
    :func:`flat_rows_ok`) with utility values ``U`` and label ``y``: Sec. 2.1's score ``sum_j x_j u_j /
    sum_j x_j``, the UC residual ``u_y - score`` (also the root's term) and the score's error
    bound ``rel (sum_j x_j |u_j| / sum_j x_j + |score| + 2 nesting)``, with the sums taken
    left to right, skipping zero values, as the numpy pass takes them (the same bits).

    Parameters
    ----------
    X : ndarray of shape (n, K)
        The rows.
    U : ndarray of shape (n, K) or (1, K)
        Their utility values (one row: the same for every row).
    y : ndarray of int
        The rows' label ids.
    rel : float
        The relative error bound of the sums.
    nesting : float
        The utility's ``nesting``.
    score, residual, error : ndarray of shape (n,)
        Filled with each row's score, UC residual and the score's error bound.

    Examples
    --------
    >>> score, residual, error = np.empty(1), np.empty(1), np.empty(1)
    >>> flat_terms(np.array([[0.25, 0.75]]), np.array([[0.0, 1.0]]), np.array([0]), 1e-15, 0.0, score, residual, error)
    >>> score.tolist(), residual.tolist()
    ([0.75], [-0.75])
    """
    for i in range(X.shape[0]):
        total, N, M = 0.0, 0.0, 0.0
        for j in range(X.shape[1]):
            x, u = X[i, j], U[i, j]
            total += x
            if u != 0.0:
                N += x * u
                M += x * abs(u)
        s = N / total
        score[i] = s
        residual[i] = U[i, y[i]] - s
        error[i] = rel * (M / total + abs(s) + 2.0 * nesting)


#: How many ranks ahead :func:`rank_scan` and the UC scans ask for an atom's row (``llvm.prefetch``):
#: reading atoms in rank order reads their rows at random, and without the request few of those reads
#: are in flight at once (``python bench/gather.py`` times the distances).
AHEAD = 64


@_inline
def _prefetch_row(W, i, equal):  # pragma: no cover - compiled
    """Ask for the weights of atom ``i`` that a scan reads (``W[i, g]`` where not ``equal[g]``): its
    row's first and last entries where ``W`` is C-contiguous (one or two lines), else each one."""
    G = W.shape[1]
    if W.strides[1] == W.itemsize:
        _prefetch(W, i, 0)
        _prefetch(W, i, G - 1)
    else:
        for g in range(G):
            if not equal[g]:
                _prefetch(W, i, g)


@_jit
def sorted_uc_scan(score, residual, order, W, equal, gap, out):  # pragma: no cover - compiled
    """Algorithm 2 (App. F.3) on the UC column alone when float64 certifies every gap: ``score`` and
    ``residual`` in rank order (``order``: the atoms, an argsort of the scores), each subgroup's
    weights ``W[order[r], g]`` (``equal[g]``: all equal to ``W[0, g]``, not gathered).  Returns 2
    at the first two equal neighbouring scores (a tie: :func:`tied_uc_scan`), 1 at the first two
    that differ by at most ``gap`` (a gap within the errors: the caller's general route settles
    them); else 0, with every atom its own block and ``out[g] = (max, first block of it, min,
    first block of it)`` of the prefix sums, as :func:`uc_scan` gives them.  Every array but
    ``W`` is read in order (the caller gathers them: a tight gather keeps many loads in flight,
    a gather inside this loop few); the rows of ``W`` it reads are asked for :data:`AHEAD` ranks
    before (:func:`_prefetch_row`).

    Parameters
    ----------
    score, residual : ndarray of shape (n,)
        In rank order.
    order : ndarray of int
        The atoms in rank order.
    W : ndarray of shape (n, G)
        The weights ``w_i c(x_i)`` per atom and subgroup.
    equal : ndarray of bool
        Per subgroup, whether its weights are all ``W[0, g]``.
    gap : float
        Neighbouring scores this close are a gap within the errors.
    out : ndarray of shape (G, 4)
        Filled with the extremes of the prefix sums and their first blocks.

    Returns
    -------
    int
        0, 1 (a gap within the errors) or 2 (a tie).

    Examples
    --------
    >>> out = np.empty((1, 4))
    >>> sorted_uc_scan(np.array([0.25, 0.5, 0.75]), np.array([0.25, -0.5, 0.25]), np.array([1, 0, 2]),
    ...                np.ones((3, 1)), np.array([True]), 1e-15, out)
    0
    >>> out.tolist()  # prefix sums 0.25, -0.25, 0
    [[0.25, 0.0, -0.25, 1.0]]
    """
    n, G = order.shape[0], W.shape[1]
    c = np.zeros(G)
    for g in range(G):
        out[g, 1], out[g, 3] = -1.0, -1.0
    previous = -np.inf
    gathered = not equal.all()
    for r in range(n):
        s = score[r]
        if r > 0 and not (s - previous > gap):
            return 2 if s == previous else 1
        previous = s
        if gathered and r + AHEAD < n:
            _prefetch_row(W, order[r + AHEAD], equal)
        for g in range(G):
            c[g] += residual[r] * (W[0, g] if equal[g] else W[order[r], g])
            if out[g, 1] < 0 or c[g] > out[g, 0]:
                out[g, 0], out[g, 1] = c[g], r
            if out[g, 3] < 0 or c[g] < out[g, 2]:
                out[g, 2], out[g, 3] = c[g], r
    return 0


@_jit
def _fill_levels(size, M):  # pragma: no cover - compiled
    """``huc_ref.fast.numbers.sum_levels(size)`` into ``M``; returns how many."""
    k = 1
    while (1 << k) < size:
        k += 1
    q, L = k + 1, 0
    while True:
        M[L] = 1.5 * 2.0 ** q
        L += 1
        if q - 53 <= -(DROPPED + k):
            return L
        q -= 52 - k


@_jit
def tied_uc_scan(score, residual, order, W, equal, gap, new, out):  # pragma: no cover - compiled
    """Algorithm 2 (App. F.3) on the UC column alone, as :func:`sorted_uc_scan`, where equal floats
    are one tie block (a float array: no exact scores behind them).  Returns 1 at the first two
    neighbouring scores that differ by more than 0 and at most ``gap``; else 0, with ``new[r]``
    whether rank ``r + 1`` starts a block and ``out`` as :func:`sorted_uc_scan` gives it for the
    prefix sums at block ends; a block of several atoms adds its total split as
    ``huc_ref.fast.numbers.block_sums`` splits it (scaled by its largest, the levels of
    ``sum_levels`` of its size), the same bits in any order of its atoms.

    Parameters
    ----------
    score, residual : ndarray of shape (n,)
        In rank order.
    order : ndarray of int
        The atoms in rank order.
    W : ndarray of shape (n, G)
        The weights ``w_i c(x_i)`` per atom and subgroup.
    equal : ndarray of bool
        Per subgroup, whether its weights are all ``W[0, g]``.
    gap : float
        Neighbouring scores this close (and not equal) are a gap within the errors.
    new : ndarray of bool of shape (n - 1,)
        Filled: whether rank ``r + 1`` starts a block.
    out : ndarray of shape (G, 4)
        Filled with the extremes of the prefix sums and their first blocks.

    Returns
    -------
    int
        0, or 1 (a gap within the errors).

    Examples
    --------
    >>> out, new = np.empty((1, 4)), np.zeros(2, dtype=np.bool_)
    >>> tied_uc_scan(np.array([0.5, 0.5, 0.75]), np.array([-0.5, 0.25, 0.25]), np.array([0, 1, 2]),
    ...              np.ones((3, 1)), np.array([True]), 1e-15, new, out)
    0
    >>> out.tolist(), new.tolist()  # blocks {0, 1} and {2}: prefix sums -0.25, 0
    ([[0.0, 1.0, -0.25, 0.0]], [False, True])
    """
    n, G = order.shape[0], W.shape[1]
    c = np.zeros(G)
    M, acc = np.empty(64), np.zeros(64)
    buf = np.empty(64)  # a block's values, gathered once
    for g in range(G):
        out[g, 1], out[g, 3] = -1.0, -1.0
    first, b = 0, 0
    gathered = not equal.all()
    while first < n:  # the block of ranks first .. end - 1
        s = score[first]
        end = first + 1
        while end < n and score[end] == s:
            new[end - 1] = False
            end += 1
        if end < n:
            if not score[end] - s > gap:
                return 1
            new[end - 1] = True
        size = end - first
        if gathered:  # (the weights of the atoms AHEAD ranks on)
            for t in range(first + AHEAD, min(end + AHEAD, n)):
                _prefetch_row(W, order[t], equal)
        L = _fill_levels(size, M) if size > 1 else 0
        if buf.shape[0] < size:
            buf = np.empty(2 * size)
        for g in range(G):
            if size == 1:
                c[g] += residual[first] * (W[0, g] if equal[g] else W[order[first], g])
            else:
                for t in range(size):
                    buf[t] = residual[first + t] * (W[0, g] if equal[g] else W[order[first + t], g])
                c[g] += _block_total(buf, size, M, L, acc)
            if out[g, 1] < 0 or c[g] > out[g, 0]:
                out[g, 0], out[g, 1] = c[g], b
            if out[g, 3] < 0 or c[g] < out[g, 2]:
                out[g, 2], out[g, 3] = c[g], b
        b += 1
        first = end
    return 0


@_jit
def uc_scan(residual, w, order):  # pragma: no cover - compiled
    """Algorithm 2 (App. F.3) on the UC column alone, in one pass, every atom its own block (no
    ties): the prefix sums of ``residual[r] * w[order[r]]`` (``residual`` in rank order; ``w`` of
    length 1: one weight for every atom; else each weight asked for :data:`AHEAD` ranks before
    it is read).  Returns the largest and the smallest of them with
    the first atom (0-based rank) attaining each, the numbers numpy's ``cumsum`` and first
    ``argmax``/``argmin`` give (``huc_ref.fast.intervals.Rows._uc_only``, its numpy twin).

    Parameters
    ----------
    residual : ndarray of shape (n,)
        In rank order.
    w : ndarray
        The weights per atom, or one weight for every atom.
    order : ndarray of int
        The atoms in rank order.

    Returns
    -------
    tuple of (float, int, float, int)
        The largest prefix sum and its first rank, the smallest and its first rank.

    Examples
    --------
    >>> [float(x) for x in uc_scan(np.array([0.25, -0.5, 0.25]), np.ones(1), np.arange(3))]
    [0.25, 0.0, -0.25, 1.0]
    """
    one = w.shape[0] == 1
    c = 0.0
    mx, i_mx, mn, i_mn = 0.0, -1, 0.0, -1
    n = residual.shape[0]
    for r in range(n):
        if not one and r + AHEAD < n:
            _prefetch(w, order[r + AHEAD], 0)
        c += residual[r] * (w[0] if one else w[order[r]])
        if i_mx < 0 or c > mx:
            mx, i_mx = c, r
        if i_mn < 0 or c < mn:
            mn, i_mn = c, r
    return mx, i_mx, mn, i_mn


@_inline
def _block_total(buf, size, levels, L, acc):  # pragma: no cover - compiled
    """The total of one block's values ``buf[:size]`` as ``huc_ref.fast.numbers.block_sums``
    forms it: scaled by a power of two below 1 (by the largest), split into exact level sums
    (extractors ``levels[:L]``), added smallest level first, scaled back."""
    largest = 0.0
    for t in range(size):
        largest = max(largest, abs(buf[t]))
    scale = math.frexp(largest)[1]
    down, up = 2.0 ** (-scale), 2.0 ** scale
    held = -1000 < scale < 1000  # (both powers are floats: multiplying by one is ldexp)
    acc[:L] = 0.0
    for t in range(size):
        x = buf[t] * down if held else math.ldexp(buf[t], -scale)
        for k in range(L):
            part = (x + levels[k]) - levels[k]
            acc[k] += part
            x -= part
    total = acc[L - 1]
    for k in range(L - 2, -1, -1):
        total = acc[k] + total
    return total * up if held else math.ldexp(total, scale)


#: Subgroups :func:`rank_scan` updates together: one vector of float64 (one AVX-512 register, two
#: AVX2 ones; LLVM lowers it to what the machine has).  The weights come padded to whole vectors
#: (:func:`pad_lanes`); a column's state is, per vector of subgroups, five vectors: the prefix
#: sums, their largest and smallest so far, and the block prefixes where each was first reached.
#: Each column has two copies of its state, read from one and written to the other in turn (see
#: :func:`huc_ref.fast.lanes._lane_update`).
_STATE = 5 * GROUP_LANES


def pad_lanes(W: np.ndarray) -> np.ndarray:
    """``W`` (atoms x subgroups: ``w_i c(x_i)``, App. F.3's weights) with zero columns up to a whole
    number of :data:`GROUP_LANES`, C-contiguous: the weights :func:`rank_scan` reads a vector at a time.

    Parameters
    ----------
    W : ndarray of shape (n, G)
        The weights.

    Returns
    -------
    ndarray of shape (n, G padded)
        The weights with zero columns.

    Examples
    --------
    >>> pad_lanes(np.ones((2, 3))).shape
    (2, 8)
    """
    n, G = W.shape
    out = np.zeros((n, -(-G // GROUP_LANES) * GROUP_LANES))
    out[:, :G] = W
    return out


#: At most this many distinct rows of weights become a table (:func:`weight_lanes`): 4,096 rows of
#: up to 16 padded subgroups are 512 KiB, within the L2 cache the scan reads them from at random.
CODED_ROWS = 2**12
#: At most this many subgroups are coded (the lookup from patterns to table rows has 2**16 entries).
CODED_GROUPS = 16
#: At most this many distinct nonzero numbers in one subgroup's weights are coded (indicators on
#: equal masses have one; a subgroup's values in [-1, 1] on a grid, a few).
CODED_VALUES = 16


@_jit
def _code_rows(W, values, counts, seen, patterns, rows):  # pragma: no cover - compiled
    """Each row of ``W`` as a pattern numbered in order of first appearance (``rows``), where
    every column ``g`` takes at most ``values.shape[1]`` distinct nonzero finite numbers
    (``values[g, :counts[g]]``, in order of first appearance) and the patterns, the product of
    the columns' ``counts[g] + 1``, fit ``seen``; the number of patterns, or -1 (a column with
    too many numbers or a non-finite one, too many patterns possible or more than
    ``len(patterns)`` seen).  A pattern holds, column by column, each entry's digit: 0 for 0
    (of either sign), ``j + 1`` for ``values[g, j]`` (one number a column: the bits of the
    entries that are not 0).  Column by column (``W`` as an audit builds it: one subgroup's
    weights contiguous)."""
    n, G = W.shape
    rows[:] = 0  # the patterns first
    stride = 1
    for g in range(G):
        k = 0
        for i in range(n):
            x = W[i, g]
            digit = 0
            if x != 0.0:
                for j in range(k):
                    if values[g, j] == x:
                        digit = j + 1
                        break
                if digit == 0:
                    if k == values.shape[1] or not abs(x) < np.inf:
                        return -1
                    values[g, k] = x
                    k += 1
                    digit = k
                    if stride * (k + 1) > seen.shape[0]:  # (so every code below fits rows' type, and seen)
                        return -1
            rows[i] = rows[i] + digit * stride  # (below len(seen): checked as each number is met)
        counts[g] = k
        stride *= k + 1
        if stride > seen.shape[0]:
            return -1
    count = 0
    for i in range(n):  # each pattern's number
        p = seen[rows[i]]
        if p < 0:
            if count == patterns.shape[0]:
                return -1
            p = count
            seen[rows[i]], patterns[count] = p, rows[i]
            count += 1
        rows[i] = p
    return count


def weight_lanes(W: np.ndarray) -> tuple:
    """The weights :func:`rank_scan` reads (App. F.3's ``w_i c(x_i)``, atoms x subgroups), as
    ``(table, rows)``: atom ``i``'s weights are row ``rows[i]`` of ``table`` (:func:`pad_lanes`'
    zeros up to whole vectors).  Where every
    subgroup's weights are 0 or one of at most :data:`CODED_VALUES` numbers (indicator subgroups on
    equal masses, as a sample's ``1/n`` gives them, or a subgroup's values on a grid) and the rows take
    at most :data:`CODED_ROWS` patterns, ``table`` holds each pattern once and ``rows`` numbers them
    (uint16): a sort gathers two bytes an atom into rank order instead of a padded row of weights, and
    no copy of the weights is made (:func:`_code_rows`).  Otherwise ``(pad_lanes(W), None)``: the rows
    themselves.  Either way the scan multiplies by the same numbers (a zero weight, whatever its
    sign, changes no prefix sum: they start at +0, and ``c + (-c)`` is +0).

    Parameters
    ----------
    W : ndarray of shape (n, G)
        The weights.

    Returns
    -------
    table : ndarray
        The rows of weights, padded.
    rows : ndarray of uint16 or None
        Each atom's row of ``table``, or None (``table`` is every atom's own).

    Examples
    --------
    >>> table, rows = weight_lanes(np.array([[0.5, 0.0], [0.5, 0.5], [0.5, 0.0]]))
    >>> table.tolist(), rows.tolist()
    ([[0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]], [0, 1, 0])
    >>> weight_lanes(np.array([[0.5], [-0.25], [0.5]]))[1].tolist()  # two numbers in one subgroup: coded too
    [0, 1, 0]
    >>> weight_lanes(np.arange(1.0, 18.0)[:, None])[1] is None  # 17 numbers in one subgroup: the rows themselves
    True
    """
    n, G = W.shape
    if 0 < G <= CODED_GROUPS:
        values, counts = np.zeros((G, 1 + CODED_VALUES)), np.zeros(G, dtype=np.int64)  # (column 0: the digit 0)
        patterns, rows = np.empty(min(n, CODED_ROWS), dtype=np.int64), np.empty(n, np.uint16)
        count = _code_rows(W, values[:, 1:], counts, np.full(1 << 16, -1, dtype=np.int64), patterns, rows)
        if count >= 0:
            radix = counts + 1
            stride = np.cumprod(np.concatenate([[1], radix[:-1]]))
            digits = patterns[:count, None] // stride % radix  # each pattern's digit of each column
            return pad_lanes(values[np.arange(G), digits]), rows
    return pad_lanes(W), None



#: :func:`lane_keys`' bits for an atom's row of coded weights (:data:`CODED_ROWS` rows fit).
LANE_SHIFT = 16


def lane_keys(kind: np.ndarray, rows: np.ndarray | None) -> tuple[np.ndarray, int]:
    """``(key, shift)``: what :func:`rank_scan` reads of each atom besides its entries (App. F.3's
    columns and weights): its kind (for samples its label: which columns its terms belong to) in
    the bits of ``key[i]`` from ``shift`` up, and below them its row of :func:`weight_lanes`' table
    (``rows``), so that one number an atom is gathered in rank order, not two; ``rows`` None (each
    atom its own row of weights): ``kind`` itself, shift 0.

    Parameters
    ----------
    kind : ndarray of int
        Each atom's kind.
    rows : ndarray of uint16 or None
        Each atom's row of weights (:func:`weight_lanes`).

    Returns
    -------
    key : ndarray of int64
        The keys.
    shift : int
        The bits below the kind.

    Examples
    --------
    >>> key, shift = lane_keys(np.array([2, 0]), np.array([1, 0], dtype=np.uint16))
    >>> key.tolist(), shift, (key >> shift).tolist(), (key & ((1 << shift) - 1)).tolist()
    ([131073, 0], 16, [2, 0], [1, 0])
    >>> lane_keys(np.array([2, 0]), None)[1]
    0
    """
    kind = np.asarray(kind, dtype=np.int64)
    if rows is None:
        return kind, 0
    key = np.left_shift(kind, LANE_SHIFT)
    return np.bitwise_or(key, rows, out=key), LANE_SHIFT

@_inline
def _lane_at(held, col, stride, g):  # pragma: no cover - compiled
    """Where subgroup ``g``'s prefix sum of column ``col`` lies in :func:`rank_scan`'s state: in the
    copy ``held[col]``, the vector of ``g``, its lane (the largest, smallest and first prefixes
    follow, :data:`GROUP_LANES` apart)."""
    return (2 * col + held[col]) * stride + (g // GROUP_LANES) * _STATE + g % GROUP_LANES


@_inline
def _column_update(S, held, col, stride, vectors, v, Wf, w, b):  # pragma: no cover - compiled
    """One entry ``v`` of an atom whose weights start at ``Wf[w]`` in column ``col``'s state
    (:func:`rank_scan`'s layout), read from the copy ``held[col]`` and written to the other."""
    src = _lane_at(held, col, stride, 0)
    dst = src + (1 - 2 * held[col]) * stride
    for q in range(vectors):
        _lane_update(S, src + q * _STATE, dst + q * _STATE, v, Wf, w + q * GROUP_LANES, b)
    held[col] = 1 - held[col]


@_jit
def rank_scan(block, order, residual, key, terms, col_table, Wl, shift, G, n_cols, levels,
              ahead=AHEAD):  # pragma: no cover - compiled
    """Algorithm 2 for every column and subgroup of one utility, in one pass over the atoms in
    rank order (App. F.3; ``huc_ref.fast.intervals.Rows._numpy`` is its numpy twin).

    For the atom ``i = order[r]`` of rank ``r`` (atoms sorted by score): ``block[r]``, its tie
    block (with ties; without, every rank is its own block and ``block`` may be empty);
    ``residual[i]``, its UC residual (column 0); ``terms[k, i]``, its term belonging to column
    ``col_table[k, key[i] >> shift]`` (its kind: for samples the label; a column lies on one row of
    the table); ``Wl[key[i] & (2**shift - 1), g]``, its weight in subgroup ``g < G``
    (:func:`weight_lanes`: zeros up to whole vectors; :func:`lane_keys`; ``shift`` 0:
    ``Wl[i, g]``); ``levels``: with ties, the extractors of
    ``huc_ref.fast.numbers.sum_levels`` for the largest block, else empty.  The atoms are read in
    rank order where they lie, each one's terms, residual and key (and row of weights, if its own) asked for ``ahead``
    ranks before they are read (``llvm.prefetch``): no copy of them into rank order, whose rows at
    random positions would wait on memory one at a time (``python bench/gather.py`` times both).
    Zero entries change no sum and are skipped.  Every column's prefix sums, largest and smallest
    (with the first block prefix reaching each) stay in a table of ``n_cols x 2 x 5 x`` (subgroups
    padded) numbers (two copies, :func:`_lane_update`), updated :data:`GROUP_LANES` subgroups at a
    time, so every array is read once, in order (and a coded table of weights from the cache).  A
    block of several atoms adds, per column, its entries' total split as
    ``huc_ref.fast.numbers.block_sums`` splits it (the same bits in any order of its atoms).
    Returns ``sup, r, b, moment`` arrays of shape ``(G, n_cols)``, with ``r, b`` prefixes of the
    blocks of all atoms.

    Parameters
    ----------
    block : ndarray of int
        Each rank's tie block (empty: no ties).
    order : ndarray of int
        The atoms in rank order.
    residual : ndarray of shape (n,)
        The UC residuals, by atom.
    key : ndarray of int64
        :func:`lane_keys`' keys, by atom.
    terms : ndarray of shape (rows, n)
        The node terms, by atom.
    col_table : ndarray of int
        The column of each term, by row of ``terms`` and kind.
    Wl : ndarray
        The weights (:func:`weight_lanes`' table).
    shift : int
        :func:`lane_keys`' shift.
    G : int
        The subgroups.
    n_cols : int
        The columns.
    levels : ndarray
        With ties, the extractors of the largest block (:func:`huc_ref.fast.numbers.sum_levels`);
        else empty.
    ahead : int, default AHEAD
        How many ranks before its use an atom's data is asked for.

    Returns
    -------
    sup, r, b, moment : ndarray of shape (G, n_cols)
        Algorithm 2's sup and witness of every subgroup and column.

    Examples
    --------
    >>> sup, r, b, moment = rank_scan(np.zeros(0, dtype=np.int64), np.array([2, 0, 1]), np.array([-0.5, 0.25, 0.25]),
    ...                               np.zeros(3, dtype=np.int64), np.zeros((0, 3)), np.zeros((0, 1), dtype=np.int64),
    ...                               pad_lanes(np.ones((3, 1))), 0, 1, 1, np.zeros(0))
    >>> sup.tolist(), r.tolist(), b.tolist(), moment.tolist()  # ranked 0.25, -0.5, 0.25: the middle alone, -1/2
    ([[0.5]], [[1]], [[2]], [[-0.5]])
    >>> from huc_ref.fast.numbers import sum_levels
    >>> table, w_row = weight_lanes(np.ones((3, 1)))  # one row of weights for all three atoms
    >>> key, shift = lane_keys(np.zeros(3), w_row)  # (kind 0, row 0: each key 0, shift 16)
    >>> sup, r, b, moment = rank_scan(np.array([0, 0, 1]), np.arange(3), np.array([0.25, 0.5, -1.0]), key,
    ...                               np.zeros((0, 3)), np.zeros((0, 1), dtype=np.int64), table, shift, 1, 1,
    ...                               sum_levels(2))
    >>> sup.tolist(), r.tolist(), b.tolist(), moment.tolist()  # blocks {0, 1} (3/4) and {2}
    ([[1.0]], [[1]], [[2]], [[-1.0]])
    """
    n, D, width = residual.shape[0], terms.shape[0], Wl.shape[1]
    vectors = width // GROUP_LANES
    stride = vectors * _STATE  # one copy of a column's state
    S = np.zeros(2 * n_cols * stride)  # column col: copies at 2 col stride and (2 col + 1) stride
    held = np.zeros(n_cols, dtype=np.int64)  # the copy holding each column's state (_lane_update)
    Wf = Wl.ravel()
    coded = shift > 0
    low = (1 << shift) - 1  # a key's bits of the atom's row of weights
    L = levels.shape[0]
    first = 0
    acc = np.zeros(max(L, 1))  # a block's level sums (exact)
    count = np.zeros(n_cols + 1, dtype=np.int64)  # a block's entries per column, then where each column ends
    e_col, e_atom = np.empty(64, dtype=np.int64), np.empty(64, dtype=np.int64)
    e_val, s_row, s_val = np.empty(64), np.empty(64, dtype=np.int64), np.empty(64)
    buf = np.empty(64)  # one column's values of a block in one subgroup
    while first < n:  # the block of ranks first .. end - 1 (without ties, every atom its own)
        end = first + 1
        if L > 0:
            while end < n and block[end] == block[first]:
                end += 1
        for r in range(first + ahead, min(end + ahead, n)):  # the atoms ahead ranks on: asked for now
            j = order[r]
            if D > 0:
                _prefetch(terms, 0, j)
                _prefetch(terms, D - 1, j)  # (an atom's terms side by side: one or two lines)
            _prefetch(residual, j, 0)
            _prefetch(key, j, 0)
            if not coded:
                _prefetch(Wl, j, 0)
                _prefetch(Wl, j, width - 1)
        if end - first == 1:
            i, b = order[first], float((block[first] if L > 0 else first) + 1)
            q = key[i]
            w = ((q & low) if coded else i) * width  # the atom's weights
            kind = q >> shift  # (read once: the stores below could, for all numba knows, change key)
            v = residual[i]
            if v != 0.0:
                _column_update(S, held, 0, stride, vectors, v, Wf, w, b)
            for k in range(D):
                col, v = col_table[k, kind], terms[k, i]
                if col > 0 and v != 0.0:
                    _column_update(S, held, col, stride, vectors, v, Wf, w, b)
            first = end
            continue
        b = float(block[first] + 1)
        if e_col.shape[0] < (D + 1) * (end - first):  # the block's entries (their atoms), in rank order
            size = 2 * (D + 1) * (end - first)
            e_col, e_atom = np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64)
            e_val, s_row, s_val = np.empty(size), np.empty(size, dtype=np.int64), np.empty(size)
        m = 0
        for r in range(first, end):
            i = order[r]
            if residual[i] != 0.0:
                e_col[m], e_atom[m], e_val[m] = 0, i, residual[i]
                m += 1
            kind = key[i] >> shift
            for k in range(D):
                col, v = col_table[k, kind], terms[k, i]
                if col > 0 and v != 0.0:
                    e_col[m], e_atom[m], e_val[m] = col, i, v
                    m += 1
        for t in range(m):  # grouped by column (a counting sort, ranks in order within a column)
            count[e_col[t] + 1] += 1
        for col in range(n_cols):
            count[col + 1] += count[col]
        for t in range(m):
            to = count[e_col[t]]
            s_row[to], s_val[to] = (key[e_atom[t]] & low) if coded else e_atom[t], e_val[t]
            count[e_col[t]] += 1
        lo = 0  # count[col] is now where column col ends
        for col in range(n_cols):
            hi = count[col]
            if hi > lo and buf.shape[0] < hi - lo:
                buf = np.empty(2 * (hi - lo))
            for g in range(G if hi > lo else 0):
                if hi - lo == 1:
                    total = s_val[lo] * Wl[s_row[lo], g]
                else:
                    for t in range(lo, hi):
                        buf[t - lo] = s_val[t] * Wl[s_row[t], g]
                    total = _block_total(buf, hi - lo, levels, L, acc)
                at = _lane_at(held, col, stride, g)
                c = S[at] + total
                S[at] = c
                if c > S[at + GROUP_LANES]:
                    S[at + GROUP_LANES], S[at + 3 * GROUP_LANES] = c, b
                elif c < S[at + 2 * GROUP_LANES]:
                    S[at + 2 * GROUP_LANES], S[at + 4 * GROUP_LANES] = c, b
            lo = hi
        count[:] = 0
        first = end
    sup = np.zeros((G, n_cols))
    rr, bb = np.zeros((G, n_cols), dtype=np.int64), np.zeros((G, n_cols), dtype=np.int64)
    moment = np.zeros((G, n_cols))
    for col in range(n_cols):
        for g in range(G):
            at = _lane_at(held, col, stride, g)
            s = S[at + GROUP_LANES] - S[at + 2 * GROUP_LANES]
            if s > 0:
                f_mx, f_mn = int(S[at + 3 * GROUP_LANES]), int(S[at + 4 * GROUP_LANES])
                sup[g, col] = s
                if f_mx > f_mn:
                    rr[g, col], bb[g, col], moment[g, col] = f_mn, f_mx, s
                else:
                    rr[g, col], bb[g, col], moment[g, col] = f_mx, f_mn, -s
    return sup, rr, bb, moment


@_jit
def radix_sort_high(packed, low_bits):  # pragma: no cover - compiled
    """Sort the unsigned 64-bit ``packed`` in place by their bits above the lowest ``low_bits``, keeping
    the order of values equal there (an LSD radix sort of 11-bit digits, digits every value shares
    skipped): Algorithm 2's sort (App. F.3) of the packed keys of
    ``huc_ref.fast.intervals.argsort_keys``, whose low bits hold the atoms' indices in increasing
    order, so the result is ``np.sort``'s (at 10^6 keys in a quarter of its time on the project's Zen 4
    machine, in twice it on the Zen 3 one, where it wins in the caches only:
    ``huc_ref.fast.intervals.sort_packed`` measures which is faster).

    Parameters
    ----------
    packed : ndarray of uint64
        The keys, sorted in place.
    low_bits : int
        The low bits not sorted by.

    Returns
    -------
    ndarray of uint64
        ``packed``.

    Examples
    --------
    >>> packed = np.array([5 << 20 | 1, 3 << 20 | 2, 5 << 20 | 0, 3 << 20 | 3], dtype=np.uint64)
    >>> [(int(v) >> 20, int(v) & 0xFFFFF) for v in radix_sort_high(packed, 20)]  # (high bits, low bits)
    [(3, 2), (3, 3), (5, 1), (5, 0)]
    """
    n = packed.shape[0]
    src, dst = packed, np.empty_like(packed)
    count = np.zeros(2049, dtype=np.int64)
    shift = low_bits
    while shift < 64:
        count[:] = 0
        for i in range(n):
            count[((src[i] >> np.uint64(shift)) & np.uint64(2047)) + 1] += 1
        shared = False  # one digit for every value: nothing to move
        for d in range(2048):
            shared |= count[d + 1] == n
        if not shared:
            for d in range(2048):
                count[d + 1] += count[d]
            for i in range(n):
                v = src[i]
                digit = (v >> np.uint64(shift)) & np.uint64(2047)
                dst[count[digit]] = v
                count[digit] += 1
            src, dst = dst, src
        shift += 11
    if src is not packed:
        packed[:] = src
    return packed


@_jit
def pack_scores(score, low_bits, packed):  # pragma: no cover - compiled
    """``packed[i]``: score ``i``'s order-preserving key (``huc_ref.fast.intervals.score_keys``: negative
    scores flip every bit, others the sign bit) with its lowest ``low_bits`` bits replaced by ``i``, in
    one pass: the packed keys of ``huc_ref.fast.intervals.argsort_keys`` (Algorithm 2's sort, App. F.3),
    which numpy makes in six.

    Parameters
    ----------
    score : ndarray of float64
        The scores.
    low_bits : int
        The bits that hold the index.
    packed : ndarray of uint64
        Filled with the keys.

    Returns
    -------
    ndarray of uint64
        ``packed``.

    Examples
    --------
    >>> [int(v) & 3 for v in pack_scores(np.array([0.5, -1.0, 0.25]), 2, np.empty(3, dtype=np.uint64))]
    [0, 1, 2]
    """
    low = np.uint64((1 << low_bits) - 1)
    sign = np.uint64(1 << 63)
    bits = score.view(np.uint64)
    for i in range(score.shape[0]):
        x = bits[i]
        key = ~x if x >> np.uint64(63) else x | sign
        packed[i] = (key & ~low) | np.uint64(i)
    return packed


@_jit
def unpack_sorted(packed, low_bits, score, order, ranked, ahead=AHEAD):  # pragma: no cover - compiled
    """From the sorted packed keys of :func:`pack_scores`: ``order[r]``, the index in rank ``r``'s low
    bits, and ``ranked[r] = score[order[r]]`` (asked for ``ahead`` ranks before), in one pass; returns how
    many neighbouring ranks share their leading bits but not their score (distinct scores the packed
    sort left in index order: ``huc_ref.fast.intervals.argsort_keys`` puts them in order).  Algorithm 2's
    sort (App. F.3).

    Parameters
    ----------
    packed : ndarray of uint64
        The sorted packed keys.
    low_bits : int
        The bits that hold the index.
    score : ndarray of float64
        The scores.
    order : ndarray of int
        Filled with the order.
    ranked : ndarray of float64
        Filled with the scores in that order.
    ahead : int, default AHEAD
        How many ranks before its use a score is asked for.

    Returns
    -------
    int
        The neighbouring ranks whose leading bits agree and scores differ.

    Examples
    --------
    >>> order, ranked = np.empty(3, dtype=np.intp), np.empty(3)
    >>> packed = np.sort(pack_scores(np.array([0.5, -1.0, 0.25]), 2, np.empty(3, dtype=np.uint64)))
    >>> unpack_sorted(packed, 2, np.array([0.5, -1.0, 0.25]), order, ranked), order.tolist(), ranked.tolist()
    (0, [1, 2, 0], [-1.0, 0.25, 0.5])
    """
    n = packed.shape[0]
    low = np.uint64((1 << low_bits) - 1)
    shift = np.uint64(low_bits)
    differ = 0
    for r in range(n):
        if r + ahead < n:
            _prefetch(score, np.intp(packed[r + ahead] & low), 0)
        i = np.intp(packed[r] & low)
        order[r] = i
        ranked[r] = score[i]
        if r > 0 and packed[r] >> shift == packed[r - 1] >> shift and ranked[r] != ranked[r - 1]:
            differ += 1
    return differ


#: :func:`group_sort`'s most distinct keys: its table of them (twice as many slots) stays in the L1/L2 cache.
GROUPED_KEYS = 2**12
_GROUP_SHIFT = 65 - (2 * GROUPED_KEYS).bit_length()  # a product's top bits: a slot of the table
_FIBONACCI = 0x9E3779B97F4A7C15  # 2**64 divided by the golden ratio, odd


if COMPILED:
    @_inline
    def _first_slot(k):  # pragma: no cover - compiled
        """Key ``k``'s first slot in :func:`group_sort`'s table: Fibonacci hashing (the top bits of
        ``k`` times :data:`_FIBONACCI`, modulo 2**64)."""
        return (k * np.uint64(_FIBONACCI)) >> np.uint64(_GROUP_SHIFT)
else:  # pragma: no cover - the numba extra is not installed
    def _first_slot(k):  # (the same product in Python's integers: numpy warns of the wrap-around)
        return np.uint64(((int(k) * _FIBONACCI) % 2**64) >> _GROUP_SHIFT)


@_jit
def group_sort(key, score, order, ranked, slot):  # pragma: no cover - compiled
    """Algorithm 2's sort (App. F.3) of scores with few distinct values, by grouping: ``order``
    receives the order of the unsigned 64-bit ``key`` (:func:`huc_ref.fast.intervals.score_keys`
    of ``score``) with equal keys in increasing index (the order :func:`radix_sort_high` gives the
    packed keys), ``ranked`` the scores in that order; returns the number of distinct keys, or
    -1 (``order`` and ``ranked`` unspecified) as soon as there are more than
    :data:`GROUPED_KEYS`.  Two passes over the keys (each key's place in a hash table of the
    distinct ones, kept in ``slot``; then each index written to its key's next place), where a
    sort moves every key about log n times.

    Parameters
    ----------
    key : ndarray of uint64
        The scores' keys.
    score : ndarray of float64
        The scores.
    order : ndarray of int
        Filled with the order.
    ranked : ndarray of float64
        Filled with the scores in that order.
    slot : ndarray of uint16
        A buffer of one number a key.

    Returns
    -------
    int
        The distinct keys, or -1.

    Examples
    --------
    >>> key = np.array([7, 3, 7, 5, 3], dtype=np.uint64)
    >>> order, ranked, slot = np.empty(5, dtype=np.int64), np.empty(5), np.empty(5, dtype=np.uint16)
    >>> group_sort(key, key.astype(float), order, ranked, slot), order.tolist(), ranked.tolist()
    (3, [1, 4, 3, 0, 2], [3.0, 3.0, 5.0, 7.0, 7.0])
    """
    n = key.shape[0]
    size = 2 * GROUPED_KEYS
    table = np.zeros(size, dtype=np.uint64)
    owner = np.full(size, -1, dtype=np.int64)  # the distinct key's number, or -1: an empty slot
    distinct = np.empty(GROUPED_KEYS, dtype=np.uint64)
    d = 0
    for i in range(n):
        k = key[i]
        h = _first_slot(k)
        while owner[h] >= 0 and table[h] != k:
            h = (h + np.uint64(1)) & np.uint64(size - 1)
        if owner[h] < 0:
            if d == GROUPED_KEYS:
                return -1
            table[h], owner[h], distinct[d] = k, d, k
            d += 1
        slot[i] = owner[h]
    rank = np.empty(d, dtype=np.int64)  # each distinct key's place in order
    start = np.zeros(d + 1, dtype=np.int64)
    first = np.empty(d, dtype=np.int64)  # an index holding it
    by_key = np.argsort(distinct[:d])
    for r in range(d):
        rank[by_key[r]] = r
    for i in range(n):
        start[rank[slot[i]] + 1] += 1
    for r in range(d):
        start[r + 1] += start[r]
    for i in range(n - 1, -1, -1):
        first[slot[i]] = i
    for r in range(d):
        x = score[first[by_key[r]]]
        for t in range(start[r], start[r + 1]):
            ranked[t] = x
    for i in range(n):
        r = rank[slot[i]]
        order[start[r]] = i
        start[r] += 1
    return d


#: The buckets of :func:`group_blocks` (:data:`huc_ref.fast.intervals.GROUP_BUCKETS`'s number: the
#: same blocks).
BLOCK_BUCKETS = 1 << 16
_EMPTY = np.uint64(2**64 - 1)  # no score's key (a NaN's): an empty bucket or cell


@_jit
def group_blocks(score, labels, K, residual, group):  # pragma: no cover - compiled
    """Algorithm 2's tie blocks without a sort (App. F.3) and each block's residuals by label, in
    three passes: the blocks of :func:`huc_ref.fast.intervals.group_scores` (each score's key, as
    :func:`huc_ref.fast.intervals.score_keys` makes it, less the smallest, shifted until the
    largest fits below :data:`BLOCK_BUCKETS`: a bucket; two distinct keys in one bucket, and the
    scores go to the sort), each atom's block written to ``group``, and where the ``d x K`` cells
    of block and label number at most the atoms, each cell's residual and count, as
    :func:`huc_ref.fast.numbers.label_cells` finds them (bits compared).  Returns ``(status,
    distinct, bits, count)``: status -1 (two distinct scores in a bucket: the rest unspecified), 0
    (the blocks, no cells), 1 (the cells too); ``distinct`` the distinct scores ascending, ``bits``
    and ``count`` each cell's residual (as unsigned bits) and atoms, cell ``block * K + label``.

    Parameters
    ----------
    score : ndarray of float64
        The scores.
    labels : ndarray of int
        The atoms' labels.
    K : int
        The labels' number.
    residual : ndarray of float64
        The UC residuals.
    group : ndarray of int
        Filled with each atom's block, or (status 1) cell.

    Returns
    -------
    status : int
        -1, 0 or 1.
    distinct : ndarray
        The distinct scores ascending.
    bits : ndarray of uint64
        Each cell's residual, as bits.
    count : ndarray of int
        Each cell's atoms.

    Examples
    --------
    >>> group = np.empty(6, dtype=np.int64)
    >>> status, distinct, bits, count = group_blocks(np.array([0.5, 0.25, 0.5, -1.0, 0.25, 0.5]),
    ...     np.array([1, 0, 0, 1, 1, 0]), 2, np.array([0.5, -0.25, -0.5, 2.0, 0.75, -0.5]), group)
    >>> status, distinct.tolist(), group.tolist(), count.tolist()
    (1, [-1.0, 0.25, 0.5], [2, 1, 2, 0, 1, 2], [0, 1, 1, 1, 2, 1])
    >>> bits.view(np.float64)[count > 0].tolist()
    [2.0, -0.25, 0.75, -0.5, 0.5]
    """
    n = score.shape[0]
    sign = np.uint64(2**63)
    bits = score.view(np.uint64)
    least, most = _EMPTY, np.uint64(0)
    for i in range(n):  # the keys' range
        b = bits[i]
        key = b ^ sign if b < sign else ~b  # (score_keys: a negative score's bits all flipped)
        least, most = min(least, key), max(most, key)
    span, shift = most - least, 0
    while span >> np.uint64(shift) >= np.uint64(BLOCK_BUCKETS):
        shift += 1
    table = np.full(BLOCK_BUCKETS, _EMPTY, dtype=np.uint64)
    for i in range(n):  # each key to its bucket; a second distinct key there: no blocks this way
        b = bits[i]
        key = b ^ sign if b < sign else ~b
        at = (key - least) >> np.uint64(shift)
        if table[at] != key:
            if table[at] != _EMPTY:
                return -1, np.zeros(0), np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
            table[at] = key
        group[i] = at
    rank = np.empty(BLOCK_BUCKETS, dtype=np.int64)
    keys = np.empty(BLOCK_BUCKETS, dtype=np.uint64)
    d = 0
    for at in range(BLOCK_BUCKETS):  # the occupied buckets in order: the distinct scores in order
        if table[at] != _EMPTY:
            rank[at], keys[d] = d, table[at]
            d += 1
    distinct = np.empty(d)
    as_bits = distinct.view(np.uint64)
    for r in range(d):
        key = keys[r]
        as_bits[r] = key ^ sign if key >= sign else ~key  # (the key undone)
    cells = d * K <= n
    size = d * K if cells else 0
    cell_bits = np.full(size, _EMPTY, dtype=np.uint64)
    count = np.zeros(size, dtype=np.int64)
    res = residual.view(np.uint64)
    for i in range(n):  # each atom's block; its residual to its cell
        r = rank[group[i]]
        group[i] = r
        if cells:
            c = r * K + labels[i]
            if count[c] and cell_bits[c] != res[i]:
                cells = False
            cell_bits[c] = res[i]
            count[c] += 1
    return (1 if cells else 0), distinct, cell_bits, count


@_jit
def null_scan(Y, order, last, U, score, mu, cols, up, down, W, n_cols, out):  # pragma: no cover - compiled
    """The sup of every column and subgroup of one utility, for a batch of null draws of labels.

    Everything is in rank order (atoms sorted by score, :class:`huc_ref.fast.intervals.Rows`'s
    order, except the labels): ``Y[order[r], b]`` the label of rank ``r`` in draw ``b``; ``last[r]`` whether rank ``r``
    ends a tie block; ``U[r]`` its utility values; ``score[r]``; ``mu[r, s]`` the mean of the
    node in slot ``s`` at its prediction; ``W[r, g]`` its weight in subgroup ``g``.  For the
    ``j``-th depth holding a relevant node and label ``y``: ``cols[j, y]`` the column of the
    path node there (1..; below 1 for none; column 0 is UC), ``up[j, y]`` and ``down[j, y]``
    the slots of that node and of the next one on the path.  Fills ``out[b, g, c]`` with
    Algorithm 2's sup: the range ``max C - min C`` of the column's prefix sums at block ends,
    ``C_0 = 0`` (App. F.3).  One pass over the atoms serves every draw of the batch (each
    atom's row is read once, then each draw's label looked up); only the columns a block
    touched are compared at its end.

    Parameters
    ----------
    Y : ndarray of shape (n, draws)
        The labels, by atom (not rank) and draw.
    order : ndarray of int
        The atoms in rank order.
    last : ndarray of bool
        Per rank, whether it ends a tie block.
    U : ndarray of shape (n, K)
        The utility values, in rank order.
    score : ndarray of shape (n,)
        The scores, in rank order.
    mu : ndarray of shape (n, slots)
        The means of the needed nodes, in rank order.
    cols, up, down : ndarray of shape (depths, K)
        Per depth holding a relevant node and label: the path node's column, its slot and the
        next path node's slot.
    W : ndarray of shape (n, G)
        The weights, in rank order.
    n_cols : int
        The columns.
    out : ndarray of shape (draws, G, n_cols)
        Filled with the sups.

    Examples
    --------
    >>> out = np.zeros((1, 1, 1))
    >>> none = np.zeros((0, 1), dtype=np.int64)
    >>> null_scan(np.zeros((3, 1), dtype=np.int64), np.arange(3), np.array([True, True, True]),
    ...           np.array([[0.25], [-0.5], [0.25]]), np.zeros(3), np.zeros((3, 1)), none, none, none, np.ones((3, 1)),
    ...           1, out)
    >>> out.tolist()  # prefix sums 0, 1/4, -1/4, 0: the range is 1/2 (the middle block alone)
    [[[0.5]]]
    """
    n, draws = Y.shape
    G, J = W.shape[1], cols.shape[0]
    acc = np.zeros((draws, n_cols, G))  # per draw: the running prefix sums, their max and min
    hi = np.zeros((draws, n_cols, G))
    lo = np.zeros((draws, n_cols, G))
    mark = np.zeros((draws, n_cols), dtype=np.int8)
    touched = np.empty((draws, n_cols), dtype=np.int64)
    nt = np.zeros(draws, dtype=np.int64)
    for r in range(n):
        i = order[r]
        single = last[r] and (r == 0 or last[r - 1])  # a block of one atom: compare at once
        for b in range(draws):
            y = Y[i, b]
            for j in range(-1, J):  # j = -1: the UC residual (column 0), then the path terms
                if j < 0:
                    c = 0
                    t = U[r, y] - score[r]
                else:
                    c = cols[j, y]
                    if c < 1:
                        continue
                    t = mu[r, down[j, y]] - mu[r, up[j, y]]
                if t == 0.0:
                    continue
                if single:
                    for g in range(G):
                        v = acc[b, c, g] + W[r, g] * t
                        acc[b, c, g] = v
                        # (the largest and smallest so far, plus 0.0: the same numbers, as they are never -0.0:
                        # +0.0 at first, then only a v > 0 or a v < 0; but no longer "keep what was read here",
                        # which on AVX2 LLVM would make a masked store, slow on Zen 3: see _lane_update)
                        h, m = hi[b, c, g] + 0.0, lo[b, c, g] + 0.0
                        hi[b, c, g] = v if v > h else h
                        lo[b, c, g] = v if v < m else m
                    continue
                for g in range(G):
                    acc[b, c, g] += W[r, g] * t
                if mark[b, c] == 0:
                    mark[b, c] = 1
                    touched[b, nt[b]] = c
                    nt[b] += 1
        if last[r] and not single:
            for b in range(draws):
                for m in range(nt[b]):
                    c = touched[b, m]
                    mark[b, c] = 0
                    for g in range(G):
                        v = acc[b, c, g]
                        h, m = hi[b, c, g] + 0.0, lo[b, c, g] + 0.0  # (as above)
                        hi[b, c, g] = v if v > h else h
                        lo[b, c, g] = v if v < m else m
                nt[b] = 0
    for b in range(draws):
        for g in range(G):
            for c in range(n_cols):
                out[b, g, c] = hi[b, c, g] - lo[b, c, g]


@_jit
def draw_labels(cdf, k, out):  # pragma: no cover - compiled
    """Per row ``i`` and draw ``b``, the first label ``y`` with ``cdf[i, y] >= k[i, b] / 2**53``
    (a binary search of the row's cumulative probabilities, whose last is exactly 1): the
    inverse-CDF draw of :func:`huc_ref.fast.significance.draw_labels`, for a batch of draws (the
    null of calibration of docs/specification.md §6's extension).

    Parameters
    ----------
    cdf : ndarray of shape (n, K)
        The rows' cumulative probabilities, each row's last exactly 1.
    k : ndarray of shape (n, draws)
        Integers in ``[0, 2**53]``.
    out : ndarray of shape (n, draws)
        Filled with the labels drawn.

    Examples
    --------
    >>> out = np.zeros((1, 2), dtype=np.int16)
    >>> draw_labels(np.array([[0.25, 0.25, 1.0]]), np.array([[2**51, 2**51 + 1]]), out)
    >>> out.tolist()  # 2**51 / 2**53 = 1/4: the first label's cdf; just above it, label 2 (label 1 has p = 0)
    [[0, 2]]
    """
    n, K = cdf.shape
    for i in range(n):
        for b in range(k.shape[1]):
            u = k[i, b] / 9007199254740992.0  # 2**53: exact, as k <= 2**53
            lo, hi = 0, K - 1
            while lo < hi:
                mid = (lo + hi) // 2
                if cdf[i, mid] < u:
                    lo = mid + 1
                else:
                    hi = mid
            out[i, b] = lo
