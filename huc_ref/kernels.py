"""Optional compiled kernels for the fast path (numba; ``pip install huc-ref[numba]``).

Two loops that numpy can only express as several passes over memory:

* :func:`top1_path_terms` reads each row of predictions once: subtree sums of every cut
  (children summed left to right, as :meth:`huc_ref.fast.FastTree.cut_sums` does), the
  top-1 decision at each utility's depth, and the path terms of F.4;
* :func:`group_and_scan` groups the nonzero terms by column with a counting sort and runs
  Algorithm 2 on every column and subgroup in one pass: prefix sums at block ends, the first
  maximum and minimum (App. F.3's tie rule), as ``huc_ref.fast._Rows`` does with reduceats.

pure numpy (:mod:`huc_ref.fast`) stays the default and the reference; the kernels are
property-tested against it (tests/test_fast.py).  Importing this module compiles nothing
until first use; compiled code is cached next to the module.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["top1_path_terms", "group_and_scan"]


@numba.njit(cache=True, nogil=True)
def top1_path_terms(Xd, y, off, run_start, run_len, path_pos, first_label, cut_depth, ks, ks_len, tol,
                    score, residual, terms, term_row):  # pragma: no cover - compiled
    """For each row ``i`` of ``Xd`` (leaves in depth-first order) with label ``y[i]`` and each
    top-1 utility ``u`` (cut depth ``cut_depth[u]``): the score, the UC residual, and the terms of
    the path nodes at depths ``ks[u, :ks_len[u]]``, written to ``terms[term_row[u] + t, i]``.

    Returns the first row that is not a vector of finite nonnegative numbers with a positive
    sum, or -1.  App. F.4 and K.2 (see ``huc_ref.fast._path_terms``, its numpy twin).

    >>> from huc_ref import LabelTree
    >>> from huc_ref.fast import FastTree
    >>> ft = FastTree(LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]}))
    >>> score, residual, terms = np.empty((1, 1)), np.empty((1, 1)), np.empty((1, 1))
    >>> top1_path_terms(np.array([[0.25, 0.25, 0.5]]), np.array([0]), ft.offsets, ft.run_start, ft.run_len,
    ...                 ft.path_pos, ft.first_label, np.array([1]), np.array([[0, 0]]), np.array([1]), 1e-12,
    ...                 score, residual, terms, np.array([0]))  # top-1 at depth 1: 'a' (first of a tie)
    -1
    >>> score.tolist(), residual.tolist(), terms.tolist()  # mu_r = 1/2, mu_a = 1: the root's term is 1/2
    ([[0.5]], [[0.5]], [[0.5]])
    """
    c, K = Xd.shape
    H = path_pos.shape[0] - 1
    base = off[H]  # the leaves (cut H) are read from Xd, the shallower cuts kept in buf
    buf = np.empty(base)
    pi = np.empty(H + 1)
    mu = np.empty(H + 1)
    for i in range(c):
        row = Xd[i]
        for a in range(base - 1, -1, -1):  # deeper cuts have larger offsets: children first
            first = run_start[a]
            if first >= base:  # a run of leaves: check each entry as it is read
                s = 0.0
                for t in range(first - base, first - base + run_len[a]):
                    x = row[t]
                    if not (x >= 0.0) or x == np.inf:
                        return i
                    s += x
            else:
                s = buf[first]
                for t in range(first + 1, first + run_len[a]):
                    s += buf[t]
            buf[a] = s
        if base == 0:  # a single leaf: the root is the leaf
            if not (row[0] > 0.0) or row[0] == np.inf:
                return i
        elif not (buf[0] > 0.0) or buf[0] == np.inf:
            return i
        yi = y[i]
        for k in range(H):
            pi[k] = buf[off[k] + path_pos[k, yi]]
        pi[H] = row[path_pos[H, yi]]
        for u in range(cut_depth.shape[0]):
            d = cut_depth[u]
            lo, hi = off[d], off[d + 1]
            if d == H:  # the candidates are the leaves themselves
                top = row[0]
                for a in range(1, K):
                    top = max(top, row[a])
                j = 0
                while row[j] < top - tol:
                    j += 1
                pi_a = row[j]
                j += base
            else:
                top = buf[lo]
                for a in range(lo + 1, hi):
                    top = max(top, buf[a])
                j = lo
                while buf[j] < top - tol:
                    j += 1
                pi_a = buf[j]
            lead = first_label[j]
            inside = path_pos[d, yi] == path_pos[d, lead]
            for k in range(H + 1):
                if k <= d:
                    above = path_pos[k, yi] == path_pos[k, lead]
                    mu[k] = pi_a / (pi[k] if pi[k] > 0 else 1.0) if above else 0.0
                else:
                    mu[k] = 1.0 if inside and pi[k] > 0 else 0.0
            score[u, i] = mu[0]
            residual[u, i] = (1.0 if inside else 0.0) - mu[0]
            for t in range(ks_len[u]):
                k = ks[u, t]
                terms[term_row[u] + t, i] = mu[k + 1] - mu[k]
    return -1


@numba.njit(cache=True, nogil=True)
def group_and_scan(order, block, residual, terms, col_table, kind, Wr, n_cols):  # pragma: no cover - compiled
    """Algorithm 2 for every column and subgroup of one utility.

    ``order``: atoms by score; ``block[r]``: tie block of rank ``r``; ``terms[k, i]`` belongs
    to column ``col_table[k, kind[i]]`` (column 0: the UC residuals); ``Wr[r, g]``: weight of
    the atom of rank ``r`` in subgroup ``g``.  Returns ``sup, r, b, moment`` arrays of shape
    ``(groups, n_cols)``, with ``r, b`` prefixes of the blocks of all atoms.  Algorithm 2
    (App. F.3; see ``huc_ref.fast._Rows``, its numpy twin).

    >>> sup, r, b, moment = group_and_scan(np.arange(3), np.arange(3), np.array([0.25, -0.5, 0.25]),
    ...                                    np.zeros((0, 3)), np.zeros((0, 1), dtype=np.int64),
    ...                                    np.zeros(3, dtype=np.int64), np.ones((3, 1)), 1)
    >>> sup.tolist(), r.tolist(), b.tolist(), moment.tolist()  # the middle block alone: -1/2
    ([[0.5]], [[1]], [[2]], [[-0.5]])
    """
    n, D, G = order.shape[0], terms.shape[0], Wr.shape[1]
    count = np.zeros(n_cols + 1, dtype=np.int64)
    for r in range(n):
        if residual[order[r]] != 0.0:
            count[1] += 1
    for k in range(D):
        for r in range(n):
            i = order[r]
            col = col_table[k, kind[i]]
            if col > 0 and terms[k, i] != 0.0:
                count[col + 1] += 1
    for col in range(n_cols):
        count[col + 1] += count[col]
    E = count[n_cols]
    rank = np.empty(E, dtype=np.int64)
    val = np.empty(E)
    pos = count[:n_cols].copy()
    for r in range(n):
        v = residual[order[r]]
        if v != 0.0:
            rank[pos[0]], val[pos[0]] = r, v
            pos[0] += 1
    for k in range(D):
        for r in range(n):
            i = order[r]
            col = col_table[k, kind[i]]
            if col > 0 and terms[k, i] != 0.0:
                rank[pos[col]], val[pos[col]] = r, terms[k, i]
                pos[col] += 1
    sup = np.zeros((G, n_cols))
    rr = np.zeros((G, n_cols), dtype=np.int64)
    bb = np.zeros((G, n_cols), dtype=np.int64)
    moment = np.zeros((G, n_cols))
    C = np.zeros(G)
    mx, mn = np.zeros(G), np.zeros(G)
    i_mx, i_mn = np.zeros(G, dtype=np.int64), np.zeros(G, dtype=np.int64)
    f_mx, f_mn = np.zeros(G, dtype=np.int64), np.zeros(G, dtype=np.int64)
    for col in range(n_cols):
        start, stop = count[col], count[col + 1]
        if start == stop:
            continue
        C[:], mx[:], mn[:], i_mx[:], i_mn[:] = 0.0, 0.0, 0.0, 0, 0
        j = 0
        for e in range(start, stop):
            r = rank[e]
            for g in range(G):
                C[g] += val[e] * Wr[r, g]
            if e + 1 < stop and block[rank[e + 1]] == block[r]:
                continue  # not a block end
            j += 1
            for g in range(G):
                if C[g] > mx[g]:
                    mx[g], i_mx[g], f_mx[g] = C[g], j, block[r] + 1
                if C[g] < mn[g]:
                    mn[g], i_mn[g], f_mn[g] = C[g], j, block[r] + 1
        for g in range(G):
            s = mx[g] - mn[g]
            if s > 0:
                sup[g, col] = s
                if i_mx[g] > i_mn[g]:
                    rr[g, col], bb[g, col], moment[g, col] = f_mn[g] if i_mn[g] else 0, f_mx[g], s
                else:
                    rr[g, col], bb[g, col], moment[g, col] = f_mx[g] if i_mx[g] else 0, f_mn[g], -s
    return sup, rr, bb, moment
