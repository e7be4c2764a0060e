"""The fast path: the same audit as :mod:`huc_ref.audit`, vectorised in numpy float64.

It mirrors the exact engine's vocabulary: a tree as arrays (:class:`FastTree`: subtree
sums cut by cut, nonnegative additions only), every utility family vectorised, per-atom
scores and terms (for sample atoms only on the label's path, App. F.4), one sort per
utility shared by all subgroups and nodes, and Algorithm 2 on every column at once as the
range of the prefix sums at block ends.  Predictions are streamed in row chunks
(:data:`CHUNK`); the optional compiled kernels live in :mod:`huc_ref.kernels`.

Floating point enters in the predictions, the utilities' decisions and the sums.  Every
comparison whose outcome decides the answer (a rank, an argmax of payoffs or of top-1
masses, the sign of a decision margin, whether two scores are one tie block) is made with
a rigorous, relative bound on the float64 error of the quantities compared
(:func:`rounding_bound`).  Where the bound cannot decide a decision, it is taken exactly by
the exact utility itself, on the rationals a distribution was given in or on a float
array's binary values.  Where it cannot decide whether two scores are one tie block, an
audit of rationals decides exactly; an audit of float arrays takes them as one block
(scores depend on each row's normalisation, which float64 rounds).  So exact ties in
rational inputs are ties here too, and probabilities far below 1e-12 are compared as what
they are.  Numbers float64 cannot hold (a positive probability below the smallest normal
double, 2.2e-308) are refused with a :class:`HUCError`, never rounded silently.
Agreement with the exact engine is property-tested (tests/test_fast.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

from .audit import _check_utilities
from .distribution import FiniteDistribution
from .errors import HUCError
from .tree import LabelTree
from .utilities import Aggregated, BinaryDecision, Decision, PerAtom, Rank, Table, Top1AtDepth, Utility

__all__ = ["TOLERANCES", "ROW_SUM_TOLERANCE", "UNIT_ROUNDOFF", "SMALLEST_NORMAL", "rounding_bound", "ExactRows",
           "CHUNK", "FastTree", "utility_values", "audit", "audit_distribution", "boost", "replay", "numba_available"]

#: Tolerances of the fast path, each with its reason (STYLE: kept in one place).
TOLERANCES = {
    # the smallest probability kept: p_y > 0 always holds exactly (A.2), but a long boosting
    # run can push a leaf below what float64 holds; it is floored here instead of reaching 0/0
    "floor": float(np.finfo(float).tiny),
}

#: The unit roundoff of float64: every operation is exact up to a relative error of this.
UNIT_ROUNDOFF = 2.0 ** -53

#: The smallest positive normal float64: a positive probability below it loses its digits.
SMALLEST_NORMAL = float(np.finfo(float).tiny)


def rounding_bound(K: int, p_error: float = 0.0) -> float:
    """A relative bound on the float64 error of a sum of ``K`` products ``p_y a_y`` (App. F.3's
    scores, payoffs and subtree masses), relative to ``sum_y |p_y a_y|``.

    Higham's ``gamma_K = K u / (1 - K u)`` bounds the rounding of the sum; one more ``u`` each
    covers the rounding of a constant ``a_y`` (e.g. 1/3) and of a final division; ``p_error``
    is the relative error of the entries ``p_y`` themselves (0 for a float array taken as
    given, ``u`` for rationals rounded to floats).  The result is doubled for margin.

    >>> f"{rounding_bound(1):.4e}", f"{rounding_bound(1, 2.0 ** -53):.4e}"  # 2 gamma_5; plus 4u
    ('1.1102e-15', '1.5543e-15')
    >>> rounding_bound(100) < 1e-13 < rounding_bound(10**4)
    True
    """
    return 2.0 * ((K + 4) * UNIT_ROUNDOFF / (1.0 - (K + 4) * UNIT_ROUNDOFF) + 2.0 * p_error)


class ExactRows:
    """The exact predictions behind a float array, for the comparisons floats cannot decide
    (App. F.3's scores and the decisions of the utility families, docs/specification.md §5).

    Given the rationals a float array was rounded from (``p_error`` = :data:`UNIT_ROUNDOFF`),
    :attr:`exact` is True and :meth:`row` returns them: undecided decisions and tie blocks
    are settled exactly.  Given only the float array (``p_error`` 0), :meth:`row` gives its
    binary values, which settle decisions (a rank or an argmax does not depend on a row's
    scale); scores within their error bounds of each other are one tie block (a score
    depends on the row's normalisation, which float64 rounds).

    >>> ExactRows(None, [(Fraction(1, 3), Fraction(2, 3))]).row(0)
    (Fraction(1, 3), Fraction(2, 3))
    >>> ExactRows(np.array([[0.25, 0.75]])).exact, ExactRows(np.array([[0.25, 0.75]])).p_error
    (False, 0.0)
    """

    def __init__(self, P, fractions=None, offset: int = 0):
        self.P, self.fractions, self.offset = P, fractions, offset
        self.exact = fractions is not None
        self.p_error = UNIT_ROUNDOFF if self.exact else 0.0

    def view(self, start: int) -> ExactRows:
        """The same rows from ``start`` on (a chunk of the sample pass), indexed from 0."""
        return ExactRows(None if self.P is None else self.P[start:], self.fractions, self.offset + start)

    def row(self, i: int) -> tuple:
        """Row ``i`` as the exact rationals it was rounded from, or as its floats' binary values
        (not normalised: a decision does not depend on a row's scale)."""
        if self.fractions is None:
            return tuple(Fraction(float(x)) for x in self.P[i])
        return tuple(self.fractions[self.offset + i])


#: The fast path keeps, per depth, a cut of the tree and each label's path: ``(H + 1) K``
#: entries.  A deep and wide tree (a caterpillar of depth 20,000) would need gigabytes; it is
#: refused with a HUCError instead (the exact engine handles it in seconds).
MAX_TREE_CELLS = 20_000_000

#: Runs of at most this many children are summed row by row in :meth:`FastTree.cut_sums`.
_SHORT_RUN = 8


class FastTree:
    """A label tree as arrays: depth cuts of the leaves in depth-first order (App. F.4).

    The cut at depth ``d`` is the set of nodes at depth ``d`` together with the leaves
    shallower than ``d``, in depth-first order; it partitions the leaves, and each of its
    nodes is a contiguous run of the next deeper cut.  Subtree sums are therefore one
    ``np.add.reduceat`` per depth, from the leaves up: nonnegative sums only, so a subtree
    of mass 1e-20 beside mass 1 keeps its digits (differences of one cumulative sum per
    row would cancel it to 0).

    >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
    >>> ft = FastTree(t)
    >>> ft.subtree_sums(np.array([[0.25, 0.25, 0.5]]))[0].tolist()  # nodes r, a, y1, y2, y3
    [1.0, 0.5, 0.25, 0.25, 0.5]
    >>> [c.tolist() for c in ft.cut_nodes]  # node ids of the cuts at depths 0, 1, 2
    [[0], [1, 4], [2, 3, 4]]
    """

    def __init__(self, tree: LabelTree):
        self.tree = tree
        self.K = tree.K
        self.n_nodes = n = len(tree.nodes)
        self.depth = np.array(tree._depth)
        self.H = H = int(self.depth.max())
        if (H + 1) * self.K > MAX_TREE_CELLS:  # the cuts and the path table hold (depth + 1) x K entries
            raise HUCError(f"tree: depth {H} x {self.K} labels needs {(H + 1) * self.K} table entries, more than "
                           f"the fast path's limit of {MAX_TREE_CELLS} (huc_ref.fast.MAX_TREE_CELLS); a tree this "
                           "deep and wide is for the exact engine", kind="too_large")
        lo = np.array(tree._lo)
        self.lo = lo
        is_leaf = np.array([not k for k in tree.child_ids])
        dfs = np.array(tree._dfs_labels)  # depth-first position -> label id
        self.label_order = None if np.array_equal(dfs, np.arange(self.K)) else dfs
        self.leaf_nodes = np.array(tree.leaf_node_ids, dtype=int)  # node id of each label
        ids = np.arange(n)
        self.cut_nodes = []
        for d in range(H + 1):
            nodes = ids[(self.depth == d) | (is_leaf & (self.depth < d))]
            self.cut_nodes.append(nodes[np.argsort(lo[nodes], kind="stable")])
        # each cut node is the run of the next deeper cut starting at its first leaf; runs of
        # equal short length are summed as whole rows (a gather and k - 1 adds), long runs by
        # reduceat (which costs about one call per run and column, so only where runs are long)
        self.levels, runs = [], []
        for d in range(H):
            starts = np.searchsorted(lo[self.cut_nodes[d + 1]], lo[self.cut_nodes[d]])
            counts = np.diff(np.append(starts, len(self.cut_nodes[d + 1])))
            short = [(sel, starts[sel], k) for k in range(1, _SHORT_RUN + 1)
                     if len(sel := np.flatnonzero(counts == k))]
            long = np.flatnonzero(counts > _SHORT_RUN)
            bounds = np.stack([starts[long], starts[long] + counts[long]], axis=1).ravel()
            if len(bounds) and bounds[-1] == len(self.cut_nodes[d + 1]):
                # reduceat takes start indices only, so a run ending at the last node sums to the end
                # by itself; its end index (one past the last row) would be out of bounds
                bounds = bounds[:-1]
            self.levels.append((len(starts), short, long, bounds))
            runs.append((starts, counts))
        # the same runs in one buffer of every cut (depth 0 first), for the compiled kernels
        sizes = [len(c) for c in self.cut_nodes]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)])
        self.run_start = np.concatenate([s + self.offsets[d + 1] for d, (s, _) in enumerate(runs)] + [[]])
        self.run_start = self.run_start.astype(np.int64)
        self.run_len = np.concatenate([c for _, c in runs] + [[]]).astype(np.int64)
        # path_pos[k, y]: position in the cut at depth k of the node on label y's path (path_nodes: its id)
        position = np.empty(self.K, dtype=int)
        position[dfs] = np.arange(self.K)
        self.path_pos = np.stack([np.searchsorted(lo[c], position, side="right") - 1 for c in self.cut_nodes])
        self.path_nodes = np.stack([self.cut_nodes[k][self.path_pos[k]] for k in range(H + 1)])
        self.cut_first_label = [dfs[lo[c]] for c in self.cut_nodes]  # a label below each cut node
        self.first_label = np.concatenate(self.cut_first_label)
        self.path_pos_by_label = np.ascontiguousarray(self.path_pos.T)  # the same, one row per label

    def cut_sums(self, X: np.ndarray, dfs: bool = False) -> list[np.ndarray]:
        """Subtree sums of the rows of ``X`` at every cut, transposed: ``S[d][j, i]``.

        ``S[d][j, i] = sum_{y in Y_a} X[i, y]`` for the ``j``-th node ``a`` of the cut at depth d.
        ``X``'s columns are labels, or with ``dfs=True`` leaves in depth-first order.

        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> [s.tolist() for s in FastTree(t).cut_sums(np.array([[1e-20, 1e-20, 1.0]]))]
        [[[1.0]], [[2e-20], [1.0]], [[1e-20], [1e-20], [1.0]]]
        """
        X = np.asarray(X, dtype=float)
        if self.label_order is not None and not dfs:
            X = X[:, self.label_order]
        S = [np.ascontiguousarray(X.T)]
        for m, short, long, bounds in reversed(self.levels):
            deeper = S[-1]
            out = np.empty((m, deeper.shape[1]))
            for sel, first, k in short:
                acc = deeper[first]
                for j in range(1, k):
                    acc += deeper[first + j]
                out[sel] = acc
            if len(long):
                out[long] = np.add.reduceat(deeper, bounds, axis=0)[::2]
            S.append(out)
        return S[::-1]

    def subtree_sums(self, X: np.ndarray, nodes: np.ndarray | None = None) -> np.ndarray:
        """``sum_{y in Y_a} X[:, y]`` for every node (columns in pre-order), or for ``nodes`` (C.1).

        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> FastTree(t).subtree_sums(np.array([[1e-20, 1e-20, 1.0]]), np.array([1])).tolist()
        [[2e-20]]
        """
        table = self.node_table(self.cut_sums(X))
        return table if nodes is None else table[:, nodes]

    def node_table(self, S: list) -> np.ndarray:
        """Cut sums ``S`` (:meth:`cut_sums`) as one ``(atoms, nodes)`` array, nodes in pre-order.

        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> ft = FastTree(t)
        >>> ft.node_table(ft.cut_sums(np.array([[0.25, 0.25, 0.5]]))).tolist()
        [[1.0, 0.5, 0.25, 0.25, 0.5]]
        """
        out = np.empty((self.n_nodes, S[0].shape[1]))
        for d, block in enumerate(S):
            out[self.cut_nodes[d]] = block
        return out.T

    def needed(self, nodes: np.ndarray) -> np.ndarray:
        """The root, ``nodes`` and their children: every node whose mean a node term uses (C.1).

        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> FastTree(t).needed(np.array([1])).tolist()  # node 'a': root, a, y1, y2
        [0, 1, 2, 3]
        """
        out = {0}
        for a in nodes:
            out.add(int(a))
            out.update(self.tree.child_ids[int(a)])
        return np.array(sorted(out), dtype=int)


def _logsumexp(x: np.ndarray) -> np.ndarray:
    """``log sum_j e^{x_j}`` per row, kept as a column."""
    top = x.max(axis=1, keepdims=True)
    return top + np.log(np.exp(x - top).sum(axis=1, keepdims=True))


def _softmax_rows(x: np.ndarray) -> np.ndarray:
    """``softmax`` per row, computed stably."""
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _first_max(values: np.ndarray, error: np.ndarray | None = None, rel: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the first column of largest value, and the rows where that choice is uncertain.

    ``error[i, j]`` bounds the float error of ``values[i, j]`` (or, for nonnegative values, the
    relative bound ``rel``: ``error = rel * values``): the choice is certain when every other
    column is below the maximum by more than the two errors together; the uncertain rows
    are left to an exact decision.

    >>> j, unsure = _first_max(np.array([[0.3, 0.1 + 0.2], [0.5, 0.2]]), np.full((2, 2), 1e-15))
    >>> j.tolist(), unsure.tolist()  # 0.1 + 0.2 rounds above 0.3: float64 cannot order them
    ([1, 0], [True, False])
    >>> _first_max(np.array([[0.3, 0.1 + 0.2], [0.5, 0.2]]), rel=1e-15)[1].tolist()
    [True, False]
    """
    j = np.argmax(values, axis=1)
    rows = np.arange(len(values))
    top = values[rows, j]
    if error is None:  # x >= top - rel (top + x)  <=>  x >= top (1 - rel) / (1 + rel): one comparison per entry
        close = values >= (top * ((1.0 - rel) / (1.0 + rel)))[:, None]
    else:
        close = values >= (top - error[rows, j])[:, None] - error
    return j, np.count_nonzero(close, axis=1) > 1  # the maximum itself is one of them


def _ratio(N: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """``mu = N / pi`` (A.3), and 0 where ``pi = 0``: exactly ``p > 0`` (A.2), but the fast path
    takes zeros in its input, and a subtree of mass 0 has no mean to speak of."""
    return np.where(pi > 0, N / np.where(pi > 0, pi, 1.0), 0.0)


def utility_values(u: Utility, ft: FastTree, P: np.ndarray, rows: np.ndarray | None = None,
                   pi: np.ndarray | None = None, exact: ExactRows | None = None) -> np.ndarray:
    """``u(p_i, .)`` for every row of ``P`` (label order), vectorised per family (docs/specification.md §5).

    A decision (a rank, an argmax of payoffs or of top-1 masses, a margin's sign) is taken in
    float64 where :func:`rounding_bound` certifies it; where it does not, by the exact utility
    on the rationals behind the row (``exact``; default: the float row's binary values).

    >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    >>> from huc_ref.utilities import TopK
    >>> utility_values(TopK(t, 1), FastTree(t), np.array([[0.2, 0.5, 0.3], [0.4, 0.4, 0.2]])).tolist()
    [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    >>> utility_values(TopK(t, 1), FastTree(t), np.array([[1e-300, 2e-300, 1.0]]) * [[1e299, 1e299, 1e-9]]).tolist()
    [[0.0, 1.0, 0.0]]
    """
    n, K = P.shape
    exact = ExactRows(P) if exact is None else exact
    rel = rounding_bound(K, exact.p_error)
    pi = ft.subtree_sums(P) if pi is None else pi  # subtree masses, shared by every utility
    if isinstance(u, Aggregated):
        base = utility_values(u.base, ft, P, rows, pi, exact)
        N = ft.subtree_sums(P * base)
        b = np.array(u.boundary_ids)
        return _ratio(N[:, b], pi[:, b])
    if isinstance(u, PerAtom):
        table = np.array([[float(x) for x in r] for r in u.rows])
        return table[rows] if rows is not None else table
    if isinstance(u, Table):  # also Subtree and class indicators: no decision
        return np.broadcast_to(np.array([float(x) for x in u.b]), (n, K))
    if isinstance(u, Rank):  # also TopK: rank by decreasing p, ties by label order
        order = np.argsort(-P, axis=1, kind="stable")  # float comparisons of the entries are exact
        ranks = np.empty_like(order)
        np.put_along_axis(ranks, order, np.broadcast_to(np.arange(K), (n, K)), axis=1)
        U = np.array([float(x) for x in u.theta])[ranks]
        # rounded rationals keep their order, but two distinct ones may round to one float
        unsure = (np.diff(np.take_along_axis(P, order, axis=1), axis=1) == 0).any(axis=1) if exact.exact \
            else np.zeros(n, dtype=bool)
    elif isinstance(u, Decision):
        A = np.array([[float(x) for x in u.payoffs[a]] for a in u.order])
        j, unsure = _first_max(P @ A.T, rel * (np.abs(P) @ np.abs(A).T))
        U = A[j]
    elif isinstance(u, BinaryDecision):
        d = np.array([float(x) for x in u.d])
        margin = P @ d
        close = np.abs(margin) <= rel * (np.abs(P) @ np.abs(d))  # a margin float64 cannot tell from 0
        U = np.where((margin >= 0)[:, None], d, -d)
        unsure = close
    elif isinstance(u, Top1AtDepth):
        cands = np.array(u.candidate_ids)
        masses = pi[:, cands]
        j, unsure = _first_max(masses, rel=rel)
        masks = np.zeros((len(cands), K))
        for k, a in enumerate(cands):
            masks[k, list(ft.tree.label_ids_below(int(a)))] = 1.0
        U = masks[j]
    else:
        raise HUCError(f"fast path: no vectorised form for {type(u).__name__}")
    for i in np.flatnonzero(unsure):  # decided exactly, by the utility itself
        U[i] = [float(x) for x in u.values(exact.row(int(i)))]
    return U


def _magnitude(P: np.ndarray, U: np.ndarray, score: np.ndarray, pi_root: np.ndarray) -> np.ndarray:
    """``sum_y p_y |u(p, y)| / pi_root`` per row, the scale of a score's rounding error; the score
    itself when no value is negative (no second pass over the rows)."""
    if U.min(initial=0.0) >= 0:
        return score
    return _ratio((np.abs(P) * np.abs(U)).sum(axis=1), pi_root)


def _score_error(u: Utility, rel: float, score: np.ndarray, magnitude: np.ndarray) -> np.ndarray:
    """A bound on the float error of the scores ``mu_u(p_i)`` (Sec. 2.1): ``magnitude`` is
    ``sum_y p_y |u(p_i, y)| / pi_root``; an aggregated utility's values are themselves means
    ``N / pi`` of its base, each off by at most ``2 rel`` (App. G)."""
    nested = 0
    while isinstance(u, Aggregated):
        nested, u = nested + 1, u.base
    return rel * (magnitude + np.abs(score) + 2.0 * nested)


def _dense_terms(ft: FastTree, P: np.ndarray, U: np.ndarray, E: np.ndarray, nodes: np.ndarray, masses, star):
    """Scores, UC residuals and the terms of every node in ``nodes``, for atoms with label laws ``E``,
    and ``sum_y p_y |u_y| / pi_root`` (for :func:`_score_error`).

    C.2: ``E_eta[g_{u,v}] = sum_j pi*_{v_j} mu_{u,v_j} - pi*_v mu_{u,v}``, where ``masses``
    and ``star`` are the subtree masses of ``P`` and ``E`` (every node, shared by every utility).
    """
    cols = ft.needed(nodes)
    pi = masses[:, cols]
    N = ft.subtree_sums(P * U, cols)
    mu = _ratio(N, pi)
    column = {int(a): k for k, a in enumerate(cols)}
    score = mu[:, column[0]]
    residual = (E * U).sum(axis=1) - score
    weighted = star[:, cols] * mu
    terms = np.empty((P.shape[0], len(nodes)))
    for k, a in enumerate(nodes):
        kids = [column[c] for c in ft.tree.child_ids[int(a)]]
        terms[:, k] = weighted[:, kids].sum(axis=1) - weighted[:, column[int(a)]]
    return score, residual, terms, _magnitude(P, U, score, pi[:, column[0]])


def _exact_path_means(ft: FastTree, X: np.ndarray, y: np.ndarray, u: Utility, pi: np.ndarray, idx: np.ndarray,
                      exact: ExactRows):
    """``mu`` on the paths (F.4) and ``u(p, y)`` of the rows ``idx``, with ``u``'s decisions taken
    exactly (rows whose float64 decision :func:`rounding_bound` could not certify)."""
    U = np.array([[float(x) for x in u.values(exact.row(int(i)))] for i in idx])
    mu = _ratio(_on_paths(ft, y[idx], ft.H + 1, ft.cut_sums(X[idx] * U)), pi[:, idx])
    return mu, U[np.arange(len(idx)), y[idx]]


def _path_terms(ft: FastTree, X: np.ndarray, Xd: np.ndarray, y: np.ndarray, u: Utility, S: list, pi: np.ndarray,
                rows, exact: ExactRows):
    """Scores, UC residuals, node terms and score error bounds of sample atoms along their
    labels' paths (F.4).

    For a one-hot label law the C.2 term of node ``v`` is ``mu_{u,v_{k+1}} - mu_{u,v_k}`` when
    ``v = v_k`` is on the path of ``y`` and 0 elsewhere, so only ``mu`` on the path is needed:
    row ``k`` of the terms belongs to the path node at depth ``k``.  ``Xd`` is ``X`` with its
    leaves in depth-first order, ``S`` its cut sums (:meth:`FastTree.cut_sums`) and ``pi``
    their values on the paths (:func:`_on_paths`).
    Top-1 correctness at depth ``l`` needs no second pass: with ``a`` the chosen node,
    ``mu_{u,v} = pi_a / pi_v`` on the path above ``a`` and 0 off it; only rows above ``l``
    are meaningful, as no deeper node is relevant (K.2).  Rows whose choice of ``a`` float64
    cannot certify take the general form, with ``a`` chosen exactly.
    """
    c, H = X.shape[0], ft.H
    rel = rounding_bound(ft.K, exact.p_error)
    if isinstance(u, Top1AtDepth):
        d = min(u.depth, H)
        M = Xd if d == H else np.ascontiguousarray(S[d].T)  # the candidates: exactly the cut at depth d
        j, unsure = _first_max(M, rel=rel)  # in pre-order
        lead = ft.path_pos[:, ft.cut_first_label[d][j]]  # the path of a leaf below the chosen node
        above = _on_paths(ft, y, d + 1) == lead[: d + 1]  # v_k contains the chosen node
        inside = above[d]  # y lies below the chosen node
        mu = np.zeros((H + 1, c))  # below depth d no node is relevant (K.2): those rows are never read
        mu[: d + 1] = np.where(above, _ratio(M.ravel().take(np.arange(c) * M.shape[1] + j), pi[: d + 1]), 0.0)
        at_label = inside.astype(float)
        magnitude = mu[0].copy()  # u is 0 or 1, so sum_y p_y |u_y| / pi_root is the score
        idx = np.flatnonzero(unsure)
        if len(idx):
            mu[:, idx], at_label[idx] = _exact_path_means(ft, X, y, u, pi, idx, exact)
            magnitude[idx] = mu[0, idx]
    else:
        U = utility_values(u, ft, X, rows, ft.node_table(S), exact)
        mu = _ratio(_on_paths(ft, y, H + 1, ft.cut_sums(X * U)), pi)
        at_label = U[np.arange(c), y]
        magnitude = _magnitude(X, U, mu[0], pi[0])
    score = mu[0]
    return score, at_label - score, mu[1:] - mu[:-1], _score_error(u, rel, score, magnitude)


def _on_paths(ft: FastTree, y: np.ndarray, depths: int, S: list | None = None) -> np.ndarray:
    """Positions (or, given cut sums ``S``, values) of the nodes on each label's path: ``(depths, n)``."""
    pos = ft.path_pos[:depths, y]
    if S is None:
        return pos
    c = len(y)
    return np.stack([S[k].ravel().take(pos[k] * c + np.arange(c)) for k in range(depths)])


def _tie_blocks(score: np.ndarray, error: np.ndarray | None, exact_score) -> tuple[np.ndarray, np.ndarray]:
    """The atoms in increasing order of score, and where a new tie block starts (Algorithm 2).

    ``error[i]`` bounds the float error of ``score[i]``.  Sorted, the float order is certainly
    the exact order across a gap where every score before it, raised by its error, stays
    below every score after it, lowered by its error.  Runs of atoms with no such gap between
    them (exact ties in rational inputs, whose float scores differ by a few ulps, or distinct
    scores closer than float64 resolves) are put in order and grouped by their exact scores,
    ``exact_score(i)``, or, when there is none (a float array), are one block; elsewhere,
    distinct floats are distinct blocks.

    >>> order, new = _tie_blocks(np.array([0.3, 0.1, 0.1 + 2e-17]), np.full(3, 1e-16), lambda i: Fraction(1, 10))
    >>> order.tolist(), new.tolist()  # atoms 1 and 2 are one block: their exact scores are equal
    ([1, 2, 0], [False, True])
    >>> _tie_blocks(np.array([1e-20, 2e-20]), np.array([1e-35, 2e-35]), None)[1].tolist()  # far apart, relatively
    [True]
    """
    order = np.argsort(score)  # the order within a tie block changes no sum
    s = score[order]
    new = np.diff(s) > 0
    if error is None or len(s) < 2 or not np.any(error):
        return order, new
    e = error[order]
    high = np.maximum.accumulate(s + e)  # the largest exact score possible so far
    low = np.minimum.accumulate((s - e)[::-1])[::-1]  # the smallest possible from here on
    unsure = ~(high[:-1] < low[1:])
    if not unsure.any():
        return order, new
    # maximal runs of ranks joined by unsure gaps: [first, last]
    edges = np.diff(np.concatenate([[0], unsure.astype(np.int8), [0]]))
    for first, last in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)):
        if exact_score is None:
            new[first:last] = False
            continue
        members = order[first:last + 1]
        values = [exact_score(int(i)) for i in members]
        by_value = sorted(range(len(members)), key=values.__getitem__)
        order[first:last + 1] = members[by_value]
        ranked = [values[k] for k in by_value]
        new[first:last] = [a != b for a, b in zip(ranked, ranked[1:])]
    return order, new


class _Rows:
    """Every sup of one utility: UC (column 0) and each relevant node, for every subgroup.

    The fast twin of ``audit.UtilityRows``.  Input: per atom its score and UC residual, and
    node terms ``terms[k, i]`` belonging to column ``col_table[k, kind[i]]`` (1.. for relevant
    nodes, anything below 1 for none; for samples ``kind`` is the label); a column occurs on
    one row of the table only, as a node lies at one depth.  One sort of the
    scores gives the tie blocks; the nonzero terms become entries (column, rank, value),
    grouped by column with one stable integer sort (zero terms change no sum, as in
    :func:`huc_ref.intervals.max_interval_sum`).
    Algorithm 2 then runs on all columns at once: within a column the supremum over
    intervals of ``|C_b - C_r|`` is the range ``max C - min C`` of the prefix sums at block
    ends (with ``C_0 = 0``), so it is two ``reduceat``s per subgroup; the witness is the pair
    of first extreme positions, mapped back to the blocks of all atoms (App. F.3's tie rule).
    """

    def __init__(self, score, residual, terms, col_table, kind, W, n_cols, engine="numpy", score_error=None,
                 exact_score=None):
        n = len(score)
        self.order, new = _tie_blocks(score, score_error, exact_score)
        order = self.order
        s = self.sorted_scores = score[order]
        self.starts = np.concatenate([[0], np.flatnonzero(new) + 1])
        self.block_last = np.concatenate([self.starts[1:] - 1, [n - 1]])
        self.block_scores = s[self.starts]
        block = np.concatenate([[0], np.cumsum(new)])  # block of each rank
        scan = self._compiled if engine == "numba" else self._numpy
        #: per subgroup: ``(sup, r, b, moment)`` arrays over the columns [UC, relevant nodes...]
        self.best = scan(block, residual[order], terms, col_table, np.asarray(kind)[order], W, n_cols)

    def _compiled(self, block, residual, terms, col_table, kind, W, n_cols) -> list:
        """Algorithm 2 by :func:`huc_ref.kernels.group_and_scan`, on arrays numpy gathers into
        rank order one at a time (then every pass of the kernel is sequential)."""
        from .kernels import group_and_scan
        order = self.order
        found = group_and_scan(block, residual, kind.astype(np.int64),
                               np.asarray(terms, dtype=float).take(order, axis=1),
                               np.ascontiguousarray(col_table, dtype=np.int64),
                               np.ascontiguousarray(W).take(order, axis=0), n_cols)
        return [tuple(x[g] for x in found) for g in range(W.shape[1])]

    def _numpy(self, block, residual, terms, col_table, kind, W, n_cols) -> list:
        """Algorithm 2 on every column at once, one subgroup at a time (see the class)."""
        n, order = len(residual), self.order
        best = [tuple(np.zeros(n_cols, dtype=t) for t in (float, int, int, float)) for _ in range(W.shape[1])]
        keep = np.flatnonzero(residual)
        col, rank, val = [np.zeros(len(keep), dtype=np.int64)], [keep], [residual[keep]]
        if len(terms):
            c = col_table[:, kind].ravel()  # row k, then rank: within a column ranks increase
            v = terms.take(order, axis=1).ravel()
            keep = np.flatnonzero((c > 0) & (v != 0))
            c = c[keep].astype(np.int16 if n_cols < 2**15 else np.int64)
            p = np.argsort(c, kind="stable")  # a radix sort on int16
            keep = keep[p]
            col.append(c[p])
            rank.append(keep % n)
            val.append(v[keep])
        col, rank, val = (np.concatenate(x) for x in (col, rank, val))
        if not len(val):
            return best
        blk = block[rank]
        change = col[1:] != col[:-1]
        seg = np.flatnonzero(np.concatenate([[True], change]))  # first entry of each column's run
        last = np.flatnonzero(np.concatenate([change | (blk[1:] != blk[:-1]), [True]]))  # block ends
        be_first = np.searchsorted(last, seg)  # first block end of each column
        counts = np.diff(np.append(be_first, len(last)))
        WT = W.T if W.T.flags.c_contiguous else np.ascontiguousarray(W.T)  # one row per subgroup
        seg_col, Wr = col[seg], WT.take(order, axis=1)  # weights by rank

        def full(j):  # prefix j of a column -> prefix of the blocks of all atoms
            return np.where(j > 0, blk[last[np.maximum(be_first + j - 1, 0)]] + 1, 0)
        for k in range(W.shape[1]):
            x = val * Wr[k].take(rank)
            x[seg[1:]] -= np.add.reduceat(x, seg)[:-1]  # restart the prefix sums in every column
            C = np.cumsum(x)
            if len(last) < len(C):  # prefix sums at block ends only
                C = C[last]
            mx, mn = np.maximum.reduceat(C, be_first), np.minimum.reduceat(C, be_first)
            i_mx = np.where(mx > 0, self._first(C, mx, counts, be_first), 0)
            i_mn = np.where(mn < 0, self._first(C, mn, counts, be_first), 0)
            sup = np.maximum(mx, 0) - np.minimum(mn, 0)
            r, b = np.minimum(i_mx, i_mn), np.maximum(i_mx, i_mn)
            live = sup > 0
            for arr, values in zip(best[k], (sup, full(r), full(b), np.where(i_mx > i_mn, sup, -sup))):
                arr[seg_col[live]] = values[live]
        return best

    @staticmethod
    def _first(C, extreme, counts, be_first):
        """Per column, the prefix index (1-based) of the first block end attaining ``extreme``."""
        hits = np.flatnonzero(C == np.repeat(extreme, counts))
        return hits[np.searchsorted(hits, be_first)] - be_first + 1

    def interval(self, r, b):
        """The witness ``[s_(r+1), s_(b)]`` (None when empty)."""
        return None if b == r else [float(self.block_scores[r]), float(self.sorted_scores[self.block_last[b - 1]])]

    def members(self, r, b) -> np.ndarray:
        """The atoms (original indices) whose scores lie in blocks ``r .. b-1``."""
        if b == r:
            return np.zeros(0, dtype=int)
        return self.order[self.starts[r]:self.block_last[b - 1] + 1]


def _dense_rows(ft, P, E, W, u, masses, star, rows=None, with_nodes=True, exact: ExactRows | None = None) -> _Rows:
    """The :class:`_Rows` of atoms with any label laws: every relevant node's C.2 term."""
    exact = ExactRows(P) if exact is None else exact
    nodes = np.array([ft.tree.id(v) for v in u.relevant_nodes] if with_nodes else [], dtype=int)
    U = utility_values(u, ft, P, rows, masses, exact)
    score, residual, terms, magnitude = _dense_terms(ft, P, U, E, nodes, masses, star)
    error = _score_error(u, rounding_bound(ft.K, exact.p_error), score, magnitude)
    table = _Rows(score, residual, terms.T, np.arange(1, len(nodes) + 1)[:, None], np.zeros(len(score), dtype=int),
                  W, len(nodes) + 1, score_error=error, exact_score=_exact_scores(u, exact, rows))
    table.nodes, table.U = nodes, U
    return table


def _exact_scores(u: Utility, exact: ExactRows, rows):
    """``i -> mu_u(p_i)`` exactly, for the tie blocks float64 cannot settle (:func:`_tie_blocks`);
    None for a float array (no exact values behind it)."""
    if not exact.exact:
        return None
    return lambda i: u.score(exact.row(i), i if rows is None else int(rows[i]))


#: Rows of predictions per chunk of the sample pass: about 2**18 numbers (2 MiB), so that
#: a chunk and its cut sums stay in cache; memory is O(chunk + n (|U| + sum_u D_u)).
CHUNK = 2**18

#: Threads for the chunks of the sample pass and for the utilities after it (numpy and the
#: kernels release the GIL; this machine has 2 cores).
THREADS = min(4, os.cpu_count() or 1)


#: How far a row of ``y_prob`` may sum from 1 (``fast.audit`` without ``renormalize``): float32
#: softmax output over a thousand classes sums to 1 within about 1e-6.
ROW_SUM_TOLERANCE = 1e-5


def _sample_rows(ft: FastTree, P, labels: np.ndarray, W: np.ndarray, utilities: Mapping[str, Utility],
                 rows=None, engine: str = "numpy", exact: ExactRows | None = None,
                 row_sum_tolerance: float | None = None) -> dict:
    """The :class:`_Rows` of every utility for sample atoms, streaming ``P`` in row chunks (F.4).

    Chunks are independent, and so are utilities afterwards: both run on :data:`THREADS`
    threads (numpy and the compiled kernels release the GIL).  ``exact`` holds the exact
    predictions behind ``P`` (default: ``P``'s own binary values).
    """
    n, H = len(labels), ft.H
    exact = ExactRows(P) if exact is None else exact
    rel = rounding_bound(ft.K, exact.p_error)
    names = list(utilities)
    plans = []
    for u in utilities.values():
        nodes = np.array([ft.tree.id(v) for v in u.relevant_nodes], dtype=int)
        colmap = np.full(ft.n_nodes, -1, dtype=np.int32)
        colmap[nodes] = np.arange(1, len(nodes) + 1)
        ks = np.array([k for k in range(H) if np.any(colmap[ft.cut_nodes[k]] > 0)], dtype=int)
        plans.append((nodes, colmap, ks))
    term_row = np.cumsum([0] + [len(ks) for _, _, ks in plans])
    score, residual = np.empty((len(names), n)), np.empty((len(names), n))
    error = np.empty((len(names), n))
    T = np.empty((term_row[-1], n))  # the terms of every utility, one row per relevant depth
    top1 = [k for k, u in enumerate(utilities.values()) if engine == "numba" and isinstance(u, Top1AtDepth)]
    rest = [k for k in range(len(names)) if k not in top1]
    if top1:
        from .kernels import top1_path_terms
        cut_depth = np.array([min(utilities[names[k]].depth, H) for k in top1], dtype=np.int64)
        ks_all = np.zeros((len(top1), max(H, 1)), dtype=np.int64)
        for j, k in enumerate(top1):
            ks_all[j, :len(plans[k][2])] = plans[k][2]
        ks_len = np.array([len(plans[k][2]) for k in top1], dtype=np.int64)
        rows_top1 = term_row[top1].astype(np.int64)
    step = max(1, CHUNK // ft.K)

    def chunk(s: int) -> tuple[int, str] | None:
        """Fill the outputs of rows ``s .. s + step``; the first bad row and its rule, if any."""
        X = np.asarray(P[s:s + step], dtype=float)
        Xd = X if ft.label_order is None else X[:, ft.label_order]
        y, part, ex = labels[s:s + step], slice(s, s + step), exact.view(s)
        ok = True
        S = pi = None
        if top1:
            sc, res = np.empty((len(top1), len(y))), np.empty((len(top1), len(y)))
            terms = np.empty((term_row[-1], len(y)))
            unsure = np.zeros((len(top1), len(y)), dtype=np.int8)
            ok = top1_path_terms(np.ascontiguousarray(Xd), y, ft.offsets, ft.run_start, ft.run_len,
                                 ft.path_pos_by_label, ft.first_label, cut_depth, ks_all, ks_len,
                                 rel, sc, res, terms, rows_top1, unsure) < 0
            if ok and unsure.any():  # choices float64 could not certify: taken exactly (numpy's general form)
                S = ft.cut_sums(Xd, dfs=True)
                pi = _on_paths(ft, y, H + 1, S)
                for j, k in enumerate(top1):
                    idx = np.flatnonzero(unsure[j])
                    if len(idx):
                        mu, at_label = _exact_path_means(ft, X, y, utilities[names[k]], pi, idx, ex)
                        sc[j, idx], res[j, idx] = mu[0], at_label - mu[0]
                        terms[term_row[k]:term_row[k + 1], idx] = (mu[1:] - mu[:-1])[plans[k][2]]
            score[top1, part], residual[top1, part] = sc, res
            error[top1, part] = 2.0 * rel * sc  # u is 0 or 1: sum_y p_y |u_y| / pi_root is the score
            for k in top1:
                T[term_row[k]:term_row[k + 1], part] = terms[term_row[k]:term_row[k + 1]]
        if rest:
            if S is None:
                with np.errstate(over="ignore", invalid="ignore"):  # bad rows are found and reported below
                    S = ft.cut_sums(Xd, dfs=True)
            ok = ok and Xd.min() >= 0 and np.all(S[0] > 0) and np.all(np.isfinite(S[0]))  # S[0]: the row sums
            if ok:
                pi = _on_paths(ft, y, H + 1, S) if pi is None else pi
                for k in rest:
                    some = None if rows is None else rows[part]
                    score[k, part], residual[k, part], terms, error[k, part] = _path_terms(
                        ft, X, Xd, y, utilities[names[k]], S, pi, some, ex)
                    T[term_row[k]:term_row[k + 1], part] = terms[plans[k][2]]
        low = X < SMALLEST_NORMAL  # zeros, subnormals (and negatives, reported below): one pass
        if ok and row_sum_tolerance is not None:
            with np.errstate(over="ignore", invalid="ignore"):
                sums = S[0][0] if S is not None else X.sum(axis=1)
            off = np.abs(sums - 1.0) > row_sum_tolerance
            if off.any():
                i = int(np.argmax(off))
                return s + i, (f"sums to {sums[i].item()!r}, not 1 (within {row_sum_tolerance:g}); pass "
                               "renormalize=True to take each row divided by its sum")
        if ok and not (low.any() and np.any(X[low] != 0)):
            return None
        tiny = low & (X != 0)
        with np.errstate(over="ignore"):
            total = X.sum(axis=1)
        bad = ~np.isfinite(X).all(axis=1) | (X < 0).any(axis=1) | ~(total > 0) | ~np.isfinite(total)
        if bad.any():
            return s + int(np.argmax(bad)), "entries must be finite and nonnegative, with a positive finite sum"
        i, j = np.argwhere(tiny)[0]
        return s + int(i), (f"entry {int(j)} is {X[i, j].item()!r}, a subnormal float64 (below "
                            f"{SMALLEST_NORMAL:.4g}): its digits are lost in sums and ratios; rescale the row "
                            "or use the exact engine")

    def table(k: int) -> _Rows:
        nodes, colmap, ks = plans[k]
        out = _Rows(score[k], residual[k], T[term_row[k]:term_row[k + 1]], colmap[ft.path_nodes[ks]], labels, W,
                    len(nodes) + 1, engine, score_error=error[k],
                    exact_score=_exact_scores(utilities[names[k]], exact, rows))
        out.nodes = nodes
        return out

    if engine == "numba":
        W = np.ascontiguousarray(W)  # rows gathered in rank order by the kernels' caller
    with ThreadPoolExecutor(THREADS) if n > step else nullcontext() as pool:  # one chunk: no threads
        run = pool.map if pool else map
        bad = [b for b in run(chunk, range(0, n, step)) if b is not None]
        if bad:
            raise HUCError(f"y_prob[{bad[0][0]}]: {bad[0][1]}")
        return dict(zip(names, run(table, range(len(names)))))


def numba_available() -> bool:
    """Whether the compiled kernels of the fast path (App. F.4, :mod:`huc_ref.kernels`) are
    compiled, that is, whether the optional numba extra is installed.

    >>> import importlib.util
    >>> numba_available() == (importlib.util.find_spec("numba") is not None)
    True
    """
    from .kernels import COMPILED
    return COMPILED


def _run(tree: LabelTree, tables: dict, subgroups: list) -> dict:
    """The ``huc-result/1`` rows from every utility's :class:`_Rows`, in the exact engine's order."""
    candidates = []
    for k, c_name in enumerate(subgroups):
        for name, table in tables.items():
            sup, r, b, moment = table.best[k]
            for col, node in enumerate([None] + [tree.nodes[a] for a in table.nodes]):
                candidates.append({"subgroup": c_name, "utility": name, "node": node, "sup": float(sup[col]),
                                   "interval": table.interval(r[col], b[col]), "moment": float(moment[col])})

    def first_max(rows):
        best = None
        for row in rows:
            if best is None or row["sup"] > best["sup"]:
                best = row
        return best
    uc = dict(first_max([c for c in candidates if c["node"] is None]))
    uc["value"] = uc.pop("sup")
    uc.pop("node")
    huc_row = first_max([c for c in candidates if c["node"] is not None])
    huc = {"value": 0.0, "subgroup": None, "utility": None, "node": None, "interval": None, "moment": 0.0}
    if huc_row:
        huc = dict(huc_row)
        huc["value"] = huc.pop("sup")
    relevant = {name: [tree.nodes[a] for a in table.nodes] for name, table in tables.items()}
    return {"format": "huc-result/1", "engine": "fast", "uc": {"value": uc.pop("value"), **uc},
            "huc": {"value": huc.pop("value"), **huc}, "relevant_nodes": relevant, "candidates": candidates}


def audit_distribution(dist: FiniteDistribution, utilities: Mapping[str, Utility], case_id=None, *,
                       engine: str = "numpy") -> dict:
    """The ``huc-result/1`` document of a finite distribution, computed in float64.

    Sample atoms take the path form (F.4), on the ``engine`` given (``"numba"``: the compiled
    kernels); population atoms with a law ``eta`` the C.2 form.

    >>> from huc_ref import Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> r = audit_distribution(d, {"u": Table(t, [-1, 1, 1, 1])})
    >>> r["uc"]["value"], r["huc"]["value"], r["huc"]["node"], r["huc"]["interval"]
    (0.0, 0.25, 'v0', [0.5, 0.5])
    """
    _check_utilities(dist.tree, dist.n, utilities)
    ft = FastTree(dist.tree)
    P = _floats([a.p for a in dist.atoms], "atoms[{}].p[{}]")
    exact = ExactRows(P, [a.p for a in dist.atoms])
    weights = _floats([[a.weight * c for c in a.c] for a in dist.atoms], "atoms[{}]: weight times c[{}]")
    rows = np.arange(dist.n)
    if dist.is_sample:
        tables = _sample_rows(ft, P, np.array([a.label for a in dist.atoms]), weights, utilities, rows,
                              _engine(engine), exact)
    else:
        E = _floats([a.label_law(ft.K) for a in dist.atoms], "atoms[{}].eta[{}]")
        masses, star = ft.subtree_sums(P), ft.subtree_sums(E)  # pi_a(p) and pi*_a, shared by every utility
        tables = {name: _dense_rows(ft, P, E, weights, u, masses, star, rows, exact=exact)
                  for name, u in utilities.items()}
    result = _run(dist.tree, tables, list(dist.subgroups))
    return {"format": result.pop("format"), "case": case_id, **result}


def _engine(engine: str) -> str:
    """The fast backend's accelerator, checked: ``"numpy"`` or ``"numba"`` (installed)."""
    if engine not in ("numpy", "numba"):
        raise HUCError(f"engine: expected 'numpy' or 'numba', got {engine!r}")
    if engine == "numba" and not numba_available():
        raise HUCError("engine: 'numba' needs the numba package (pip install 'huc-ref[numba]')")
    return engine


def _floats(rows, where: str) -> np.ndarray:
    """Exact rationals as a float64 array, or one HUCError naming the first that float64 cannot
    hold: a nonzero number below the smallest normal double (or beyond the largest) would be
    rounded to 0 or lose its digits, and the fast path's answer would be silently wrong.

    >>> _floats([[Fraction(1, 4), Fraction(3, 4)]], "p[{}][{}]").tolist()
    [[0.25, 0.75]]
    >>> _floats([[Fraction(1, 10**400), 1 - Fraction(1, 10**400)]], "atoms[{}].p[{}]")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: atoms[0].p[0]: 1e-400 is outside float64's normal range (2.2e-308 to 1.8e+308); ...
    """
    out = np.empty((len(rows), len(rows[0]) if len(rows) else 0))
    for i, row in enumerate(rows):
        for j, x in enumerate(row):
            v = float(x) if abs(x) < 2**1024 else float("inf")
            if x and not SMALLEST_NORMAL <= abs(v) < float("inf"):
                with localcontext() as ctx:
                    ctx.prec = 3
                    shown = Decimal(x.numerator) / Decimal(x.denominator)
                raise HUCError(f"{where.format(i, j)}: {format(shown, '.3g')} is outside float64's normal range "
                               "(2.2e-308 to "
                               "1.8e+308); the fast engine cannot represent it (use the exact engine)")
            out[i, j] = v
    return out


def _numbers(values, where: str) -> np.ndarray:
    """``values`` as a float64 array, or one HUCError naming ``where``."""
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError) as err:
        raise HUCError(f"{where}: expected numbers ({err})") from None


def _entries(values, n: int, where: str, rule: str, ok) -> np.ndarray:
    """``n`` finite numbers satisfying ``ok``, or one HUCError naming the first that is not."""
    v = _numbers(values, where)
    if v.shape != (n,):
        raise HUCError(f"{where}: expected one value per row of y_prob ({n}), got shape {v.shape}")
    bad = ~(np.isfinite(v) & ok(v))
    if bad.any():
        i = int(np.argmax(bad))
        raise HUCError(f"{where}[{i}]: {v[i].item()!r} is not {rule}")
    return v


def _label_ids(y_true, tree: LabelTree, n: int) -> np.ndarray:
    """Labels given as names or label ids, as label ids (vectorised for integer and string arrays)."""
    if isinstance(y_true, (str, bytes)) or not hasattr(y_true, "__iter__"):
        raise HUCError(f"y_true: expected one label (a name or an id) per row of y_prob, got {type(y_true).__name__}")
    y = y_true if isinstance(y_true, np.ndarray) else np.asarray(list(y_true), dtype=object)
    if y.ndim != 1 or len(y) != n:
        raise HUCError(f"y_true: has {len(y) if y.ndim == 1 else y.shape} labels, y_prob has {n} rows")
    if y.dtype.kind in "iu":
        ids = y.astype(int)
    elif y.dtype.kind == "U":
        names, inverse = np.unique(y, return_inverse=True)
        ids = np.array([tree._label_index.get(str(v), -1) for v in names], dtype=int)[inverse]
    else:
        ids = np.array([tree._label_index.get(v, -1) if isinstance(v, str) else
                        int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) else -1
                        for v in y], dtype=int)
    bad = (ids < 0) | (ids >= tree.K)
    if bad.any():
        i = int(np.argmax(bad))
        value = y[i].item() if isinstance(y[i], np.generic) else y[i]
        raise HUCError(f"y_true[{i}]: {value!r} is not a label name or id")
    return ids


def audit(y_true, y_prob, tree: LabelTree, utilities: Mapping[str, Utility], *, subgroups=None,
          sample_weight=None, engine: str = "numpy", renormalize: bool = False) -> dict:
    """UC and HUC of a labelled sample, from array-likes (scikit-learn's argument names).

    ``y_true``: labels as names or label ids; ``y_prob``: ``(n, K)`` probabilities in label
    order (any array-like; a numpy array or memory map is read in row chunks of about
    :data:`CHUNK` numbers, so the working memory beyond the input is O(n (|U| + sum_u D_u)));
    ``subgroups``: a mapping name -> ``n`` values in [-1, 1] (default: everyone);
    ``sample_weight``: nonnegative weights (normalised to sum 1); ``engine``: ``"numpy"``
    (the default and the reference) or ``"numba"`` (the compiled kernels of
    :mod:`huc_ref.kernels`, an optional extra).  Sec. 3.3 and App. F.4: only the nodes on
    each sample's path carry a term.  Each row must sum to 1 within :data:`ROW_SUM_TOLERANCE`
    (a float32 softmax does), unless ``renormalize=True``: then each row stands for itself
    divided by its sum (the means ``N / pi`` do not depend on a row's scale), as the exact
    path's ``renormalize`` does.

    >>> t = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    >>> from huc_ref import class_indicator
    >>> r = audit(["pos", "neg"], [[0.5, 0.5], [0.5, 0.5]], t, {"u": class_indicator(t, "pos")})
    >>> r["uc"]["value"]  # the tie case of App. F.3: one block, residuals +1/2 and -1/2
    0.0
    """
    _engine(engine)
    if not isinstance(tree, LabelTree):
        raise HUCError(f"tree: expected a LabelTree (LabelTree.from_children, .from_paths or .from_nested), "
                       f"got {type(tree).__name__}")
    P = y_prob if isinstance(y_prob, np.ndarray) else _numbers(y_prob, "y_prob")
    if P.dtype.kind not in "biuf":
        raise HUCError(f"y_prob: expected numbers, got an array of dtype {P.dtype}")
    if P.ndim != 2 or P.shape[1] != tree.K:
        raise HUCError(f"y_prob: expected {tree.K} columns (one per label), got shape {P.shape}")
    n = P.shape[0]
    if n == 0:
        raise HUCError("y_prob: no rows (an audit needs at least one atom)")
    _check_utilities(tree, n, utilities)
    ids = _label_ids(y_true, tree, n)
    w = np.full(n, 1.0 / n) if sample_weight is None else _entries(sample_weight, n, "sample_weight",
                                                                  "a finite nonnegative number", lambda v: v >= 0)
    if not w.max() > 0:
        raise HUCError("sample_weight: sums to 0; the weights need a positive sum")
    w = w / w.max()  # so that the sum cannot overflow (1e308 + 1e308)
    groups = {"all": np.ones(n)} if subgroups is None else subgroups
    if not isinstance(groups, Mapping) or not groups:
        raise HUCError("subgroups: expected a non-empty mapping from name to n values in [-1, 1]")
    WT = np.empty((len(groups), n))  # w_i c(x_i), one row per subgroup (W = WT.T)
    for k, (name, values) in enumerate(groups.items()):
        c = _entries(values, n, f"subgroups[{name!r}]", "a number in [-1, 1]", lambda v: np.abs(v) <= 1)
        np.multiply(w / w.sum(), c, out=WT[k])
    tables = _sample_rows(FastTree(tree), P, ids, WT.T, utilities, engine=engine,
                          row_sum_tolerance=None if renormalize else ROW_SUM_TOLERANCE)
    return _run(tree, tables, list(groups))


def boost(dist: FiniteDistribution, utilities: Mapping[str, Utility], *, method: str = "huc", epsilon=0.01,
          max_updates: int = 1000, step="adaptive", select: str = "greedy", max_passes: int = 100) -> dict:
    """HUC-Boost or UC-Boost in float64 (the fast twin of :func:`huc_ref.boost.boost`).

    The same selection (:class:`huc_ref.boost.Schedule`: greedy, K.1's passes or drain), steps
    (adaptive or a fixed magnitude), stopping rule and outputs, vectorised over atoms;
    uncertified.  The state is kept as logit
    increments on top of the initial prediction (node-wise for HUC-Boost, leaf-wise for
    UC-Boost), with a fresh softmax at every step.

    App. D.1: HUC-Boost removes the violations UC cannot see.

    >>> from huc_ref import Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> r = boost(d, {"u": Table(t, [-1, 1, 1, 1])}, epsilon=0.01)
    >>> r["stopped"], len(r["updates"]), r["updates"][0]["node"], r["final"]["huc"] <= 0.01
    ('tolerance', 13, 'v0', True)
    """
    from .boost import Schedule, boost_options

    def rational(x):  # the fast path takes floats: read them as their exact binary values
        if isinstance(x, float):
            if not np.isfinite(x):
                raise HUCError(f"{x!r} is not a finite number")
            return Fraction(x)
        return x
    eps, fixed = boost_options(dist, dict(utilities), method=method, select=select, epsilon=rational(epsilon),
                               max_updates=max_updates, step=step if step == "adaptive" else rational(step),
                               max_passes=max_passes)
    eps, fixed = float(eps), None if fixed is None else float(fixed)
    ft = FastTree(dist.tree)
    tree = dist.tree
    P0 = _floats([a.p for a in dist.atoms], "atoms[{}].p[{}]")
    E = _floats([a.label_law(ft.K) for a in dist.atoms], "atoms[{}].eta[{}]")
    w = _floats([[a.weight] for a in dist.atoms], "atoms[{}].weight{}")[:, 0]
    C = _floats([a.c for a in dist.atoms], "atoms[{}].c[{}]")
    W = w[:, None] * C
    n = len(w)
    branching = [tree.id(v) for v in tree.branching_nodes]
    child_labels = {a: [np.array(tree.label_ids_below(c)) for c in tree.child_ids[a]] for a in branching}
    masses0 = ft.subtree_sums(P0)
    q0 = {a: masses0[:, list(tree.child_ids[a])] / masses0[:, [a]] for a in branching}
    Z = {a: np.zeros((n, len(tree.child_ids[a]))) for a in branching} if method == "huc" else np.zeros((n, ft.K))

    logP0, logq0 = np.log(P0), {a: np.log(q0[a]) for a in branching}

    def predictions():  # softmaxes in the log domain: tiny probabilities never underflow to 0/0
        if method == "uc":
            return np.maximum(_softmax_rows(logP0 + Z), TOLERANCES["floor"])
        P = P0.copy()
        for a in branching:
            z = Z[a]
            if not z.any():
                continue
            ratio = np.exp(z - _logsumexp(logq0[a] + z))  # q'_j / q0_j
            for j, labels in enumerate(child_labels[a]):
                P[:, labels] *= ratio[:, [j]]
        return np.maximum(P, TOLERANCES["floor"])

    def log_loss(P):
        with np.errstate(divide="ignore"):
            return float(-(w * (E * np.where(E > 0, np.log(P), 0.0)).sum(axis=1)).sum())

    star = ft.subtree_sums(E)  # pi*_a: the label laws never change

    def choose(P, node=None):
        masses = ft.subtree_sums(P)
        best = None
        tables = {name: _dense_rows(ft, P, E, W, u, masses, star, with_nodes=method == "huc")
                  for name, u in utilities.items()}
        for k in range(W.shape[1]):
            for name, table in tables.items():
                sup, r, b, moment = table.best[k]
                columns = [0] if method == "uc" else range(1, 1 + len(table.nodes))
                for col in columns:
                    a = None if col == 0 else int(table.nodes[col - 1])
                    if node is not None and a != node:
                        continue
                    if best is None or sup[col] > best[0]:
                        best = (float(sup[col]), k, name, a, int(r[col]), int(b[col]), float(moment[col]), table)
        return best, masses, star

    P = predictions()
    loss = log_loss(P)
    result = {"format": "huc-boost/1", "method": method, "epsilon": eps, "arithmetic": "float (fast path)",
              "updates": [], "initial": {"log_loss": loss}}
    steps = []  # each update as a rule, for replay()
    schedule = Schedule(select if method == "huc" else "greedy", branching, max_passes=max_passes)
    while True:
        best, masses, star = choose(P, schedule.node())
        violated = best is not None and best[0] > eps
        if violated and len(result["updates"]) >= max_updates:
            result["stopped"] = "cap"
            break
        if not violated:
            stop = schedule.after(False)
            if stop:
                result["stopped"] = stop
                break
            continue
        sup, k, name, a, r, b, moment, table = best
        members = table.members(r, b)
        members = members[C[members, k] != 0]
        c = C[members, k][:, None]
        if method == "huc":
            kids = list(tree.child_ids[a])
            N = ft.subtree_sums(P[members] * table.U[members], np.array([a] + kids))
            pi = masses[members][:, [a] + kids]
            mu = _ratio(N, pi)
            h = c * (mu[:, 1:] - mu[:, [0]])  # h = c Delta_{u,v}
            inside = star[members, a]
            q = pi[:, 1:] / pi[:, [0]]
            gamma = float((w[members] * (h * (star[members][:, kids] - inside[:, None] * q)).sum(axis=1)).sum())
        else:
            s = (P[members] * table.U[members]).sum(axis=1, keepdims=True)
            h = c * (table.U[members] - s)
            inside = np.ones(len(members))
            mean = (P[members] * h).sum(axis=1, keepdims=True)
            gamma = float((w[members] * (E[members] * (h - mean)).sum(axis=1)).sum())
        lam = float((w[members] * inside * (h.max(axis=1) - h.min(axis=1)) ** 2).sum() / 4)
        if lam <= 0:
            raise HUCError("boost: Lambda = 0 for a violated candidate (Lemma E.4 says impossible)")
        alpha = gamma / lam if fixed is None else float(np.sign(gamma)) * fixed
        if method == "huc":
            Z[a][members] += alpha * h
        else:
            Z[members] += alpha * h
        steps.append((k, name, a, table.interval(r, b), alpha))
        P = predictions()
        after = log_loss(P)
        interval = table.interval(r, b)
        result["updates"].append({"subgroup": list(dist.subgroups)[k], "utility": name,
                                  "node": None if a is None else tree.nodes[a], "interval": interval,
                                  "gamma": moment, "lambda": lam, "alpha": alpha, "log_loss_before": loss,
                                  "log_loss_after": after, "guaranteed_decrease": alpha * gamma - alpha ** 2 * lam / 2})
        loss = after
        stop = schedule.after(True)
        if stop:
            result["stopped"] = stop
            break
    result["audits"] = [[None if a is None else tree.nodes[a], updated] for a, updated in schedule.log]
    masses = ft.subtree_sums(P)
    final = _run(tree, {name: _dense_rows(ft, P, E, W, u, masses, star) for name, u in utilities.items()},
                 list(dist.subgroups))
    result["final"] = {"uc": final["uc"]["value"], "huc": final["huc"]["value"], "log_loss": loss}
    factor = 2 if fixed is None else 4
    result["bound_updates"] = int(np.ceil(factor * result["initial"]["log_loss"] / eps ** 2))
    result["predictions"] = P.tolist()
    result["steps"] = steps
    return result


def replay(result: dict, dist: FiniteDistribution, utilities: Mapping[str, Utility]):
    """The predictions of ``dist``'s atoms after 0, 1, ... of a fast boosting run's updates.

    Each update is a rule: atoms of subgroup ``c`` whose score lies in the update's
    interval move by ``alpha h(x)``, with ``h`` computed at their own prediction (K.1:
    validation replays the run to choose the returned prefix; test atoms get it applied).
    Yields ``(t, P)`` arrays; on the run's own atoms the last equals the run's predictions.

    >>> from huc_ref import Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> u = {"u": Table(t, [-1, 1, 1, 1])}
    >>> r = boost(d, u, epsilon=0.01)
    >>> last = list(replay(r, d, u))[-1]
    >>> last[0], bool(np.allclose(last[1], r["predictions"]))
    (13, True)
    """
    tree, method = dist.tree, result["method"]
    ft = FastTree(tree)
    P = _floats([a.p for a in dist.atoms], "atoms[{}].p[{}]")
    C = _floats([a.c for a in dist.atoms], "atoms[{}].c[{}]")
    yield 0, P
    rel = rounding_bound(ft.K)
    for t, (k, name, a, interval, alpha) in enumerate(result["steps"], start=1):
        u = utilities[name]
        masses = ft.subtree_sums(P)
        U = utility_values(u, ft, P, None, masses)
        score = _ratio(ft.subtree_sums(P * U, np.array([0]))[:, 0], masses[:, 0])  # as the run computed it
        slack = _score_error(u, rel, score, _ratio((P * np.abs(U)).sum(axis=1), masses[:, 0]))
        lo, hi = interval
        members = np.flatnonzero((score >= lo - slack) & (score <= hi + slack) & (C[:, k] != 0))
        c = C[members, k][:, None]
        P = P.copy()
        if method == "huc":
            kids = list(tree.child_ids[a])
            cols = np.array([a] + kids)
            N = ft.subtree_sums(P[members] * U[members], cols)
            mu = _ratio(N, masses[members][:, cols])
            h = c * (mu[:, 1:] - mu[:, [0]])
            q = masses[members][:, kids] / masses[members][:, [a]]
            ratio = np.exp(alpha * h - _logsumexp(np.log(q) + alpha * h))  # q'_j / q_j, in the log domain
            for j, child in enumerate(kids):
                labels = list(tree.label_ids_below(child))
                P[np.ix_(members, labels)] *= ratio[:, [j]]
        else:
            s = score[members][:, None]
            h = c * (U[members] - s)
            P[members] = _softmax_rows(np.log(P[members]) + alpha * h)
        P = np.maximum(P, TOLERANCES["floor"])
        yield t, P
