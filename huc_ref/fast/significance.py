"""Consistency resampling in float64: the twin of :mod:`huc_ref.significance`'s draws.

Each draw redraws every label from its own prediction, ``Y_i ~ P_i``, by the inverse CDF at
the uniform ``k_i / 2**53`` (:func:`huc_ref.significance.uniforms`, the exact engine's own
draw), and audits the sample again with the predictions, weights and subgroups unchanged;
what does not depend on the labels is computed once (:class:`NullAudit`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

import numpy as np

from ..errors import HUCError
from ..significance import uniforms
from ..utilities import Utility
from .intervals import Rows, tie_blocks
from .numbers import ExactRows, ratio, rounding_bound
from .tree import FastTree
from .utilities import LabelFreeMeans, exact_scores, path_plan, score_error
from .workers import THREADS, run_all

__all__ = ["MAX_NULL_BYTES", "check_memory", "draw_labels", "label_free_tables", "NullAudit", "null_sups"]


def draw_labels(cdf: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Per row the first label whose cumulative probability reaches ``k / 2**53`` (``cdf``: the
    rows' cumulative sums, each divided by its last, so the last is exactly 1)
    (the null of calibration of docs/specification.md §6's extension).

    Parameters
    ----------
    cdf : ndarray of shape (n, K)
        The rows' cumulative probabilities, each row's last exactly 1.
    k : ndarray of shape (n,)
        Integers in ``[0, 2**53]``: the uniforms ``k / 2**53``.

    Returns
    -------
    ndarray of shape (n,)
        The label ids drawn.

    Examples
    --------
    >>> cdf = np.cumsum([[0.25, 0.0, 0.75]], axis=1)
    >>> draw_labels(cdf, np.array([2**51])).tolist(), draw_labels(cdf, np.array([2**51 + 1])).tolist()
    ([0], [2])
    """
    u = k.astype(float) / 2.0**53  # exact: k <= 2**53
    return (cdf < u[:, None]).sum(axis=1)


#: The most memory the label-free tables of the null draws may take (:func:`check_memory`).
MAX_NULL_BYTES = 2**32


def check_memory(ft: FastTree, n: int, utilities: Mapping[str, Utility], accelerator: str) -> int:
    """The bytes :class:`NullAudit` keeps for ``n`` atoms (the level sums, and per utility its
    values ``n x K`` and the means of its needed nodes, twice with the compiled kernel's copies
    in rank order, and three ``|ks| x K`` tables of its labels' path nodes), refused beyond
    :data:`MAX_NULL_BYTES` with one clear error (the null of calibration of docs/specification.md §6's extension).

    Parameters
    ----------
    ft : FastTree
        The tree.
    n : int
        The atoms.
    utilities : dict of str to Utility
        The utilities by name.
    accelerator : {"numpy", "numba"}
        The kernels (numba's keep a second copy in rank order).

    Returns
    -------
    int
        The bytes.

    Raises
    ------
    HUCError
        Of kind ``too_large``, beyond :data:`MAX_NULL_BYTES`, saying to audit a subsample or
        fewer utilities.

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> check_memory(FastTree(t), 10, {"u": Table(t, [0, 1])}, "numpy")  # 10 x 8 x (3 nodes + 2 + 3) + 3 x 8 x 2
    688
    """
    copies = 2 if accelerator == "numba" else 1
    plans = [path_plan(ft, u) for u in utilities.values()]
    per_row = ft.n_nodes + sum(copies * (ft.K + len(ft.needed(nodes))) for nodes, _, _ in plans)
    total = 8 * n * per_row + sum(24 * len(ks) * ft.K for _, _, ks in plans)
    if total > MAX_NULL_BYTES:
        raise HUCError(f"null_draws: the label-free tables of {n} atoms would take {total / 2**30:.1f} GiB "
                       f"(more than {MAX_NULL_BYTES / 2**30:.0f} GiB: n x (K + needed nodes) per utility); "
                       "audit a subsample or fewer utilities", kind="too_large")
    return total


def label_free_tables(ft: FastTree, P: np.ndarray, utilities: Mapping[str, Utility], rows=None,
                      exact: ExactRows | None = None) -> list:
    """Per utility, what a draw of the null does not change (Sec. 2.1's null ``Y_i ~ p_i`` redraws
    labels only): ``(n_cols, paths, means, mu, error)``: the columns (UC and ``V_T(u)``), the path
    table ``(cols, up, down)`` (per depth that holds a relevant node and per label: the node's
    column, and the rows of ``mu`` of the path nodes at that depth and the next), the
    :class:`huc_ref.fast.utilities.LabelFreeMeans`, ``mu_{u,a}(p_i)`` of the needed nodes (C.1:
    the root, the relevant nodes and their children; ``needed x n``) and the scores' error bounds.

    Parameters
    ----------
    ft : FastTree
        The tree.
    P : ndarray of shape (n, K)
        The predictions, in the tree's label order.
    utilities : dict of str to Utility
        The utilities by name.
    rows : ndarray, optional
        The atoms' indices (a per-atom utility's rows); None: ``0 .. n-1``.
    exact : ExactRows, optional
        The exact predictions behind ``P`` (default: ``P``'s own binary values).

    Returns
    -------
    list of tuple
        Per utility ``(n_cols, paths, means, mu, error)`` as above.

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> [(n_cols, mu.tolist()) for n_cols, _, _, mu, _ in label_free_tables(FastTree(t), np.array([[0.5, 0.5]]),
    ...                                                                     {"u": Table(t, [0, 1])})]  # mu at r, a, b
    [(2, [[0.5], [0.0], [1.0]])]
    """
    exact = ExactRows(P) if exact is None else exact
    Xd = P if ft.label_order is None else P[:, ft.label_order]
    S = ft.level_sums(Xd, dfs=True)
    pi = ft.node_table(S).T  # pi_a(p_i), every node: (nodes, n), C-contiguous
    rel = rounding_bound(ft.K, exact.p_error)
    out = []
    for u in utilities.values():
        nodes, colmap, ks = path_plan(ft, u)
        means = LabelFreeMeans(ft, P, u, S, rows, exact)
        needed = ft.needed(nodes)  # the root, the relevant nodes and their children (C.1)
        slot = np.zeros(ft.n_nodes, dtype=np.int64)
        slot[needed] = np.arange(len(needed))
        # mu_{u,a}(p_i) of the needed nodes: (needed, n), C-contiguous
        mu = np.ascontiguousarray(ratio(ft.node_table(means.N).T[needed], pi[needed]))
        on_path = ft.path_nodes(np.arange(ft.K), np.concatenate([ks, ks + 1]))  # per label, depths ks and ks + 1
        paths = (colmap[on_path[:len(ks)]].astype(np.int64), slot[on_path[:len(ks)]], slot[on_path[len(ks):]])
        out.append((len(nodes) + 1, paths, means, mu, score_error(u, rel, means.score, means.magnitude)))
    return out


class NullAudit:
    """The label-free part of a sample audit, computed once, and the audit of any labels.

    Under the null only the labels change, so the utilities' values, the cut sums, every
    node's mean ``mu_{u,v}(p_i)`` (one ``n x nodes`` table per utility), the scores, their error
    bounds and the tie blocks of Algorithm 2's sort are shared by all draws; a draw gathers
    the means on its labels' paths and runs Algorithm 2's scan (:class:`Rows` with the
    blocks given).  Memory: ``n x (1 + |V_T(u)| + their children)`` floats per utility.

    Parameters
    ----------
    ft : FastTree
        The tree.
    P : ndarray of shape (n, K)
        The predictions, in the tree's label order.
    W : ndarray of shape (n, |C|)
        ``w_i c(x_i)`` per atom and subgroup.
    utilities : dict of str to Utility
        The utilities by name.
    rows : ndarray, optional
        The atoms' indices (a per-atom utility's rows); None: ``0 .. n-1``.
    accelerator : {"numpy", "numba"}, default "numpy"
        The kernels of the draws' scans.
    exact : ExactRows, optional
        The exact predictions behind ``P`` (default: ``P``'s own binary values).

    Raises
    ------
    HUCError
        Where the tables would take more than :data:`MAX_NULL_BYTES` (:func:`check_memory`).

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> null = NullAudit(FastTree(t), np.array([[0.5, 0.5]] * 2), np.full((2, 1), 0.5), {"u": Table(t, [0, 1])})
    >>> null.sups(np.array([1, 1])).tolist(), null.sups(np.array([0, 1])).tolist()  # UC row, then node r
    ([0.5, 0.5], [0.0, 0.0])
    """

    def __init__(self, ft: FastTree, P: np.ndarray, W: np.ndarray, utilities: Mapping[str, Utility], *,
                 rows=None, accelerator: str = "numpy", exact: ExactRows | None = None):
        self.ft, self.W, self.accelerator = ft, W, accelerator
        check_memory(ft, len(P), utilities, accelerator)
        exact = ExactRows(P) if exact is None else exact
        self.plans = []
        for u, (n_cols, paths, means, mu, error) in zip(utilities.values(),
                                                        label_free_tables(ft, P, utilities, rows, exact)):
            blocks = tie_blocks(means.score, error, exact_scores(u, exact, rows))
            self.plans.append((n_cols, paths, means, mu, blocks))
        if accelerator == "numba":  # the kernel reads every array in rank order, once per draw
            self.ranked = [(order, np.append(new, True), np.ascontiguousarray(means.U[order]), means.score[order],
                            np.ascontiguousarray(mu[:, order].T), paths, np.ascontiguousarray(W[order]), n_cols)
                           for n_cols, paths, means, mu, (order, new) in self.plans]

    def sups(self, y: np.ndarray) -> np.ndarray:
        """Every row's sup (Def. 2.1 and 3.2, Algorithm 2) for labels ``y``, in the audit's candidate
        order (subgroups, then utilities, the UC row before the relevant nodes).

        Parameters
        ----------
        y : ndarray of shape (n,)
            The label ids.

        Returns
        -------
        ndarray
            Every candidate row's sup.

        Examples
        --------
        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> null = NullAudit(FastTree(t), np.array([[0.5, 0.5], [0.25, 0.75]]), np.full((2, 1), 0.5),
        ...                  {"u": Table(t, [0, 1])})
        >>> null.sups(np.array([0, 0])).tolist()  # residuals -1/2 and -3/4, each of weight 1/2
        [0.625, 0.625]
        """
        n, best = len(y), []
        for n_cols, (cols, up, down), means, mu, blocks in self.plans:
            i = np.arange(n)  # the terms: the means one depth apart on each label's path
            terms = mu.take(down[:, y] * n + i) - mu.take(up[:, y] * n + i)
            table = Rows(means.score, means.U[i, y] - means.score, terms, cols, y, self.W, n_cols,
                         self.accelerator, blocks=blocks)
            best.append(table.best)
        return np.concatenate([b[k][0] for k in range(self.W.shape[1]) for b in best])


    def sups_compiled(self, Y: np.ndarray) -> np.ndarray:
        """:meth:`sups` for each row of labels ``Y`` (one draw per row), by the compiled kernel
        :func:`huc_ref.fast.kernels.null_scan` (Algorithm 2 per draw), the draws split over
        :data:`THREADS` threads.

        Parameters
        ----------
        Y : ndarray of shape (draws, n)
            The label ids, a draw a row.

        Returns
        -------
        ndarray of shape (draws, rows)
            Every candidate row's sup, a draw a row.

        Examples
        --------
        >>> from huc_ref import LabelTree, Table
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> null = NullAudit(FastTree(t), np.array([[0.5, 0.5], [0.25, 0.75]]), np.full((2, 1), 0.5),
        ...                  {"u": Table(t, [0, 1])}, accelerator="numba")
        >>> Y = np.array([[0, 0], [1, 0], [1, 1]])
        >>> null.sups_compiled(Y).tolist() == [null.sups(y).tolist() for y in Y]
        True
        """
        from .kernels import null_scan
        G = self.W.shape[1]
        cuts = np.linspace(0, len(Y), min(THREADS, len(Y)) + 1).astype(int)

        def part(ranked, out, bounds):  # the draws lo .. hi of one utility
            order, last, U, score, mu, (cols, up, down), W, n_cols = ranked
            lo, hi = bounds
            Yt = np.ascontiguousarray(Y[lo:hi].T)
            null_scan(Yt, order, last, U, score, mu, cols, up, down, W, n_cols, out[lo:hi])

        parts = []
        for ranked in self.ranked:
            parts.append(np.zeros((len(Y), G, ranked[-1])))
            run_all(partial(part, ranked, parts[-1]), zip(cuts[:-1], cuts[1:]), len(cuts) - 1)
        # candidate order: subgroups, then utilities, then columns
        return np.concatenate([p[:, g, :] for g in range(G) for p in parts], axis=1)


#: Null draws computed together: at most 32, and at most about 2**21 atom-draws per batch, so
#: that a compiled batch ends within a fraction of a second (Ctrl-C acts between batches).
BATCH = 32
BATCH_CELLS = 2**21


def null_sups(ft: FastTree, P: np.ndarray, W: np.ndarray, utilities: Mapping[str, Utility], draws: int, *,
              rows=None, accelerator: str = "numpy", exact: ExactRows | None = None):
    """``rng -> iterator`` of ``draws`` null draws' row sups (:meth:`NullAudit.sups`), for
    :func:`huc_ref.significance.resampling_p_values` (Sec. 2.1's null ``Y_i ~ p_i``).

    ``P``: the predictions (label order), ``W``: ``w_i c(x_i)`` per subgroup (``n x |C|``).

    Parameters
    ----------
    ft : FastTree
        The tree.
    P : array-like of shape (n, K)
        The predictions, in the tree's label order.
    W : ndarray of shape (n, |C|)
        ``w_i c(x_i)`` per atom and subgroup.
    utilities : dict of str to Utility
        The utilities by name.
    draws : int
        The draws.
    rows : ndarray, optional
        The atoms' indices; None: ``0 .. n-1``.
    accelerator : {"numpy", "numba"}, default "numpy"
        The kernels.
    exact : ExactRows, optional
        The exact predictions behind ``P``.

    Returns
    -------
    callable
        ``sups(rng)``: an iterator of ``draws`` arrays, each draw's row sups, the labels drawn
        from the numpy Generator ``rng``.

    Raises
    ------
    HUCError
        Where the label-free tables would take more than :data:`MAX_NULL_BYTES`.

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> sups = null_sups(FastTree(t), np.array([[1.0, 0.0]]), np.ones((1, 1)), {"u": Table(t, [0, 1])}, 3)
    >>> [row.tolist() for row in sups(np.random.default_rng(0))]  # p = (1, 0): every draw is label a
    [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]
    """
    P = np.asarray(P, dtype=float)
    null = NullAudit(ft, P, np.ascontiguousarray(W), utilities, rows=rows, accelerator=accelerator, exact=exact)
    cdf = np.cumsum(P, axis=1)
    cdf /= cdf[:, -1:]

    batch = max(1, min(BATCH, BATCH_CELLS // max(1, len(P))))

    def sups(rng: np.random.Generator):
        for start in range(0, draws, batch):
            k = np.stack([uniforms(rng, len(P)) for _ in range(min(batch, draws - start))])
            if accelerator == "numba":
                from .kernels import draw_labels as draw_compiled
                Yt = np.empty((len(P), len(k)), dtype=np.int16 if cdf.shape[1] < 2**15 else np.int64)
                draw_compiled(cdf, np.ascontiguousarray(k.T), Yt)
                Y = Yt.T
            else:
                Y = np.stack([draw_labels(cdf, row) for row in k])
            if accelerator == "numba":
                yield from null.sups_compiled(Y)
            else:
                yield from (null.sups(y) for y in Y)
    return sups
