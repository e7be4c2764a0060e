"""UC and HUC in float64: the twin of :mod:`huc_ref.audit` (App. F.4).

Per-atom scores and terms (for sample atoms only on the label's path), one sort per utility
shared by all subgroups and nodes (:class:`huc_ref.fast.intervals.Rows`), Algorithm 2 on every
column at once.  Predictions are streamed in row chunks (:data:`CHUNK`); the optional compiled
kernels live in :mod:`huc_ref.fast.kernels`.  The results are the exact engine's own types:
:class:`huc_ref.audit.AuditResult` with float numbers (``arithmetic="float64"``).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping

import numpy as np

from ..distribution import WHOLE_POPULATION, FiniteDistribution, check_whole_population, subgroup_mapping
from ..errors import HUCError, check_name, given, one_of, printable
from ..results import AuditResult, Candidate
from ..significance import candidate_rows, check_null, check_null_work, resampling_p_values
from ..tree import LabelTree, label_names
from ..utilities import Utility
from ..validation import check_tree, check_utilities
from .intervals import Rows, tie_blocks  # noqa: F401 (tie_blocks: re-exported for the twins' tests)
from .memory import level_sums_in_place, sample_block
from .numbers import (
    SMALLEST_NORMAL,
    ExactRows,
    as_floats,
    entries,
    first_max,
    first_max_rows,
    floats,
    ratio,
    rounding_bound,
    row_sums,
    subgroup_column,
)
from .tree import _SHORT_RUN, FastTree, RootFirst, on_paths
from .utilities import LabelFreeMeans, exact_scores, magnitude, path_plan, score_error, term_columns, utility_values
from .workers import THREADS, run_all, run_staged

__all__ = ["CHUNK", "SERIAL_CELLS", "chunk_rows", "THREADS", "ROW_SUM_TOLERANCE", "audit", "audit_distribution",
           "numba_available", "sample_arrays", "subgroup_columns", "sample_rows", "check_label_mass", "zero_label",
           "sample_terms", "sample_tables", "SampleTerms"]


def dense_terms(ft: FastTree, P: np.ndarray, U: np.ndarray, E: np.ndarray, nodes: np.ndarray, masses, star):
    """Scores, UC residuals and the terms of every node in ``nodes``, for atoms with label laws ``E``,
    and ``sum_y p_y |u_y| / pi_root`` (for :func:`score_error`).

    C.2: ``E_eta[g_{u,v}] = sum_j pi*_{v_j} mu_{u,v_j} - pi*_v mu_{u,v}``, where ``masses``
    and ``star`` are the subtree masses of ``P`` and ``E`` (every node, shared by every utility).
    """
    cols = ft.needed(nodes)
    pi = masses[:, cols]
    N = ft.subtree_sums(P * U, cols)
    mu = ratio(N, pi)
    column = {int(a): k for k, a in enumerate(cols)}
    score = mu[:, column[0]]
    residual = row_sums(E * U) - score
    weighted = star[:, cols] * mu
    terms = np.empty((P.shape[0], len(nodes)))
    for k, a in enumerate(nodes):
        kids = [column[c] for c in ft.tree.child_ids[int(a)]]
        terms[:, k] = row_sums(weighted[:, kids]) - weighted[:, column[int(a)]]
    return score, residual, terms, magnitude(P, U, score, pi[:, column[0]])


def exact_path_means(ft: FastTree, X: np.ndarray, y: np.ndarray, u: Utility, pi: np.ndarray, idx: np.ndarray,
                      exact: ExactRows):
    """``mu`` on the paths (F.4) and ``u(p, y)`` of the rows ``idx``, with ``u``'s decisions taken
    exactly (rows whose float64 decision :func:`rounding_bound` could not certify), and their values ``U``."""
    U = np.array([[float(x) for x in u.values(exact.row(int(i)))] for i in idx])
    mu = ratio(on_paths(ft, y[idx], ft.H + 1, ft.level_sums(X[idx] * U)), pi[:, idx])
    return mu, U[np.arange(len(idx)), y[idx]], U


def path_terms(ft: FastTree, X: np.ndarray, Xd: np.ndarray, y: np.ndarray, u: Utility, S: list, pi: np.ndarray,
               rows, exact: ExactRows, depths: np.ndarray, out: np.ndarray, into: tuple):
    """Scores, UC residuals, node terms and score error bounds of sample atoms along their
    labels' paths (F.4).

    For a one-hot label law the C.2 term of node ``v`` is ``mu_{u,v_{k+1}} - mu_{u,v_k}`` when
    ``v = v_k`` is on the path of ``y`` and 0 elsewhere, so only ``mu`` on the path is needed:
    the term at depth ``k`` belongs to the path node at depth ``k``; ``out[i]`` receives the
    terms at depth ``depths[i]``.  ``Xd`` is ``X`` with its
    leaves in depth-first order, ``S`` its level sums (:meth:`FastTree.level_sums`) and ``pi``
    their values on the paths (:func:`on_paths`); ``into``, three rows of ``len(y)`` numbers, receives
    the scores, the UC residuals and the scores' error bounds.
    Top-1 correctness at depth ``l`` needs no second pass: with ``a`` the chosen node,
    ``mu_{u,v} = pi_a / pi_v`` on the path above ``a`` and 0 off it (the path of ``y`` holds
    ``a`` down to the depth where it parts from ``a``'s path, :meth:`FastTree.agreement`); only
    rows above ``l`` are meaningful, as no deeper node is relevant (K.2).  Rows whose choice of ``a`` float64
    cannot certify take the general form, with ``a`` chosen exactly.  Returns, for top-1
    utilities, the choices (positions in :meth:`FastTree.cut`), else None.
    """
    c, H = X.shape[0], ft.H
    rel = rounding_bound(ft.K, exact.p_error)
    if u.top1_depth is not None:
        d = min(u.top1_depth, H)
        cut, below = ft.cut(d)
        block = ft.cut_block(d)
        if block is not None:  # the candidates: one level of S (rows of the level sums, read in place)
            j, unsure, top = first_max_rows(S[block], rel)
        elif d == H:  # the candidates: exactly the cut at depth d, in pre-order (the leaves: Xd's columns)
            j, unsure = first_max(Xd, rel=rel)
            top = Xd[np.arange(c), j]
        else:
            j, unsure, top = first_max_rows([S[a] for a in cut], rel)
        agree = ft.agreement(d)
        if agree is not None:  # v_k contains the chosen node for k up to where the two paths part
            above = np.arange(d + 1)[:, None] <= agree.take(y * len(cut) + j)
        else:
            above = on_paths(ft, y, d + 1) == on_paths(ft, below[j], d + 1)  # (the path of a leaf below it)
        inside = above[d]  # y lies below the chosen node
        # below depth d no node is relevant (K.2): no row of mu is needed there; off the path of the chosen
        # node top / pi may overflow (pi tiny, the row's scale large): those quotients are dropped, not multiplied
        with np.errstate(over="ignore"):
            mu = np.where(above, ratio(top, pi[: d + 1]), 0.0)
        at_label = inside.astype(float)
        idx = np.flatnonzero(unsure)
        if len(idx):
            exact_mu, at_label[idx], U = exact_path_means(ft, X, y, u, pi, idx, exact)
            mu[:, idx] = exact_mu[: d + 1]
            j[idx] = np.argmax(U[:, below], axis=1)  # the candidate whose labels the exact choice holds
        mag = mu[0]  # u is 0 or 1, so sum_y p_y |u_y| / pi_root is the score
        choice = j
    else:
        means = LabelFreeMeans(ft, X, u, S, rows, exact)
        if H == 1:  # a flat tree: the root's term is the UC residual (sample_rows), nothing on the paths
            at_label, mu = means.at_labels(y), means.score[None]
        else:
            at_label, mu = means.on_labels(ft, y, pi)
        mag = means.magnitude
        choice = None
    for i, k in enumerate(depths):
        np.subtract(mu[k + 1], mu[k], out=out[i])
    score, residual, error = into
    score[...] = mu[0]
    np.subtract(at_label, score, out=residual)
    score_error(u, rel, score, mag, out=error)
    return choice


def dense_rows(ft, P, E, W, u, masses, star, rows=None, with_nodes=True, exact: ExactRows | None = None) -> Rows:
    """The :class:`Rows` of atoms with any label laws: every relevant node's C.2 term."""
    exact = ExactRows(P) if exact is None else exact
    nodes = np.array([ft.tree.id(v) for v in u.relevant_nodes] if with_nodes else [], dtype=int)
    U = utility_values(u, ft, P, rows, masses, exact)
    score, residual, terms, magnitude = dense_terms(ft, P, U, E, nodes, masses, star)
    error = score_error(u, rounding_bound(ft.K, exact.p_error), score, magnitude)
    table = Rows(score, residual, terms.T, np.arange(1, len(nodes) + 1)[:, None], np.zeros(len(score), dtype=int),
                  W, len(nodes) + 1, score_error=error, exact_score=exact_scores(u, exact, rows))
    table.nodes, table.U = nodes, U
    table.residual, table.terms = residual, terms  # (read by certified float64's error bounds)
    return table


#: Rows of predictions per chunk of the sample pass: at most about 2**21 numbers (16 MiB) and,
#: on several threads, an even share of the rows (:func:`chunk_rows`); memory is
#: O(chunk + n (|U| + sum_u D_u)).  numpy's pass is a few dozen calls per chunk, whose fixed cost
#: counts below a few thousand rows; ``python bench/chunks.py`` times the audit at 2**18 .. 2**22
#: (2**18 took 1.18x and 2.70x this chunk's time with numpy).
CHUNK = 2**21

#: Below this many numbers (rows x K) the sample pass and the sorts run on the calling thread:
#: a thread pool costs more than it saves.
SERIAL_CELLS = 2**18


def chunk_rows(n: int, K: int, threads: int | None = None) -> int:
    """The rows per chunk of the sample pass over ``n`` rows of ``K`` numbers (App. F.4's one
    pass over the sample) on ``threads`` threads (default :data:`THREADS`): all of them below
    :data:`SERIAL_CELLS` numbers, else about :data:`CHUNK` numbers' worth, fewer where that
    spreads the rows evenly over the threads.

    Parameters
    ----------
    n : int
        The rows.
    K : int
        The numbers a row.
    threads : int, optional
        The threads; default :data:`THREADS`.

    Returns
    -------
    int
        The rows per chunk, at least 1.

    Examples
    --------
    >>> chunk_rows(100, 30, 2), chunk_rows(10**5, 30, 2), chunk_rows(10**5, 30, 4), chunk_rows(10**6, 30, 2)
    (100, 50000, 25000, 69905)
    >>> chunk_rows(10**6, 10**7, 2)  # a row of more than CHUNK numbers: one row at a time
    1
    """
    if n * K <= SERIAL_CELLS:
        return max(1, n)
    return max(1, min(CHUNK // K, -(-n // (THREADS if threads is None else threads))))

#: How far a row of ``y_prob`` may sum from 1 (``fast.audit`` without ``renormalize``): float32
#: softmax output over a thousand classes sums to 1 within about 1e-6.
ROW_SUM_TOLERANCE = 1e-5


def sample_rows(ft: FastTree, P, labels: np.ndarray, W: np.ndarray, utilities: Mapping[str, Utility],
                 rows=None, engine: str = "numpy", exact: ExactRows | None = None,
                 row_sum_tolerance: float | None = None) -> dict:
    """The :class:`Rows` of every utility for sample atoms, streaming ``P`` in row chunks (F.4):
    :func:`sample_tables` of :func:`sample_terms`.

    Chunks are independent, and so are utilities afterwards: both run on :data:`THREADS`
    threads (numpy and the compiled kernels release the GIL).  ``exact`` holds the exact
    predictions behind ``P`` (default: ``P``'s own binary values).

    Parameters
    ----------
    ft : FastTree
        The tree.
    P : array-like of shape (n, K)
        The predictions, in the tree's label order.
    labels : ndarray of shape (n,)
        The label ids.
    W : ndarray of shape (n, |C|)
        ``w_i c(x_i)`` per atom and subgroup.
    utilities : dict of str to Utility
        The utilities by name.
    rows : ndarray, optional
        The atoms' indices (a per-atom utility's rows); None: ``0 .. n-1``.
    engine : {"numpy", "numba"}, default "numpy"
        The kernels.
    exact : ExactRows, optional
        The exact predictions behind ``P``.
    row_sum_tolerance : float, optional
        How far a row may sum from 1; None: rows are divided by their sums.

    Returns
    -------
    dict of str to Rows
        Each utility's rows.

    Raises
    ------
    HUCError
        Naming the first bad row of ``P``.

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> ft = FastTree(LabelTree.from_children("r", {"r": ["a", "b"]}))
    >>> rows = sample_rows(ft, np.array([[0.25, 0.75]]), np.array([0]), np.ones((1, 1)), {"u": Table(ft.tree, [0, 1])})
    >>> rows["u"].best[0][0].tolist()  # UC and the root's HUC: |0 - 3/4|
    [0.75, 0.75]
    """
    exact = ExactRows(P) if exact is None else exact
    labels = np.asarray(labels)  # (one plain array throughout: the tables know it again by identity)
    terms = sample_terms(ft, P, labels, utilities, rows, engine, exact, row_sum_tolerance)
    return sample_tables(ft, terms, labels, W, utilities, rows, engine, exact)


class SampleTerms:
    """Per utility and sample atom, what Algorithm 2 reads (F.4): ``score``, the UC ``residual``,
    the score's ``error`` bound (``|U| x n``) and the node terms ``T[k]`` of utility ``k``
    (``D_k x n``: one row per relevant depth, ``term_row[k + 1] - term_row[k]`` of them; under
    numba each atom's ``D_k`` terms side by side, the transpose of a C array, so that a sort
    gathers one cache line an atom; under numpy each depth's terms side by side).  Each atom's
    entries depend on its own prediction and label only, so the entries of some atoms can be
    computed again and put in place (:meth:`replace`; a boosting update moves only its
    members).  ``choice[k]``: for a top-1 utility ``k`` whose terms numpy's pass computed, each
    atom's chosen candidate (its position in :meth:`FastTree.cut` at the utility's depth), the
    decision its terms were made with (a boosting update reads its members' values from it).

    Parameters
    ----------
    score, residual, error : ndarray of shape (|U|, n)
        The scores, the UC residuals and the scores' error bounds.
    T : list of ndarray
        Each utility's node terms, ``D_k x n``.
    plans : list
        Each utility's path plan (:func:`huc_ref.fast.utilities.path_plan`).
    depths : list of ndarray
        Each utility's depths whose terms are stored.
    term_row : array-like of int
        Where each utility's rows of terms start, cumulatively (``|U| + 1`` entries).
    flat : bool
        Whether the tree is flat (then no node term is stored: the root's is the residual).
    choice : dict, optional
        Each top-1 utility's chosen candidates, by the utility's index.

    Examples
    --------
    App. D.1's tree: an atom's node terms on its label's path sum to its UC residual (Thm 3.1).

    >>> from huc_ref import LabelTree, Table
    >>> ft = FastTree(LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]}))
    >>> t = sample_terms(ft, np.full((2, 4), 0.25), np.array([0, 2]), {"u": Table(ft.tree, [-1, 1, 1, 1])})
    >>> t.residual.tolist(), t.T[0].tolist(), t.term_row.tolist()  # y1: -1 - 1/2 = (0 - 1/2) + (-1 - 0)
    ([[-1.5, 0.5]], [[-0.5, 0.5], [-1.0, 0.0]], [0, 2])
    """

    def __init__(self, score, residual, error, T, plans, depths, term_row, flat, choice=None):
        self.score, self.residual, self.error, self.T = score, residual, error, T
        self.plans, self.depths, self.term_row, self.flat = plans, depths, term_row, flat
        self.choice = {} if choice is None else choice

    def replace(self, idx: np.ndarray, other: SampleTerms) -> None:
        """The entries of atoms ``idx`` from ``other`` (the same utilities, computed for those atoms):
        F.4's terms of an atom depend on its own prediction and label alone.

        Parameters
        ----------
        idx : ndarray of int
            The atoms replaced.
        other : SampleTerms
            Their terms, the same utilities, one column per atom of ``idx``.

        Examples
        --------
        >>> a = SampleTerms(*(np.zeros((1, 3)) for _ in range(3)), [np.zeros((1, 3))], [], [], [0, 1], False)
        >>> a.replace(np.array([2]), SampleTerms(*(np.ones((1, 1)) for _ in range(3)), [np.ones((1, 1))], [], [],
        ...                                      [0, 1], False))
        >>> a.score.tolist(), a.T[0].tolist()
        ([[0.0, 0.0, 1.0]], [[0.0, 0.0, 1.0]])
        """
        for name in ("score", "residual", "error"):
            getattr(self, name)[:, idx] = getattr(other, name)
        for mine, theirs in zip(self.T, other.T):
            mine[:, idx] = theirs
        for k in list(self.choice):
            if k in other.choice:
                self.choice[k][idx] = other.choice[k]
            else:  # (not made for those atoms: none for any)
                del self.choice[k]


def _atoms(rows, part: slice) -> np.ndarray:
    """The atom indices of one chunk ``part`` of the sample: ``rows[part]``, or the chunk's own positions
    where the sample is every atom (a per-atom utility's table is read at these rows, not whole)."""
    return np.arange(part.start, part.stop) if rows is None else rows[part]


def top1_plan(ft: FastTree, top1: list, depths: list, u_row, term_at):
    """The :class:`huc_ref.fast.kernels.Top1Plan` of the top-1 utilities ``top1`` (K.2; each a
    :class:`huc_ref.Top1AtDepth` or a utility with a ``top1_depth``): their cuts of ``ft`` (the
    candidates, rows of :meth:`FastTree.level_sums`, and a label below each), the tables of
    :meth:`FastTree.agreements` (none where one of them is not kept: the kernel then compares the
    paths), the stored depths ``depths[j]`` of utility ``j``'s terms, its row ``u_row[j]`` of the
    outputs and the offset ``term_at[j]`` of its terms.

    Parameters
    ----------
    ft : FastTree
        The tree as arrays.
    top1 : list of Utility
        The top-1 utilities, each with a ``top1_depth``.
    depths : list of ndarray
        Each one's depths whose terms are stored.
    u_row, term_at : array-like of int
        Each one's row of the outputs and where its terms start.

    Returns
    -------
    huc_ref.fast.kernels.Top1Plan
        What :func:`huc_ref.fast.kernels.top1_path_terms` reads of the utilities.

    Examples
    --------
    >>> from huc_ref import LabelTree, Top1AtDepth
    >>> ft = FastTree(LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]}))
    >>> plan = top1_plan(ft, [Top1AtDepth(ft.tree, 1)], [np.array([0])], [0], [0])
    >>> plan.cut_depth.tolist(), plan.cut_off.tolist(), plan.ks.tolist()
    ([1], [0, 2], [[0, 0]])
    """
    from .kernels import Top1Plan
    def as_int(a):
        return np.ascontiguousarray(a, dtype=np.int64)
    cut_depth = as_int([min(u.top1_depth, ft.H) for u in top1])
    ks = np.zeros((len(top1), max(ft.H, 1)), dtype=np.int64)
    for j, ks_j in enumerate(depths):
        ks[j, :len(ks_j)] = ks_j
    cuts = [ft.cut(int(d)) for d in cut_depth]
    agree, agree_at = ft.agreements(tuple(int(d) for d in cut_depth)) or (np.zeros(0, dtype=np.int16),
                                                                         np.zeros(len(top1), dtype=np.int64))
    return Top1Plan(cut_rows=as_int(np.concatenate([c for c, _ in cuts])),
                    cut_label=as_int(np.concatenate([b for _, b in cuts])),
                    cut_off=as_int(np.concatenate([[0], np.cumsum([len(c) for c, _ in cuts])])),
                    cut_depth=cut_depth, agree=agree, agree_at=as_int(agree_at), ks=ks,
                    ks_len=as_int([len(ks_j) for ks_j in depths]), u_row=as_int(u_row), term_at=as_int(term_at))


def sample_terms(ft: FastTree, P, labels: np.ndarray, utilities: Mapping[str, Utility], rows=None,
                 engine: str = "numpy", exact: ExactRows | None = None,
                 row_sum_tolerance: float | None = None) -> SampleTerms:
    """The :class:`SampleTerms` of sample atoms (F.4's path form), streaming ``P`` in row chunks
    on :data:`THREADS` threads; a bad row of ``P`` is one HUCError naming it.

    Parameters
    ----------
    ft : FastTree
        The tree.
    P : array-like of shape (n, K)
        The predictions, in the tree's label order.
    labels : ndarray of shape (n,)
        The label ids.
    utilities : dict of str to Utility
        The utilities by name.
    rows : ndarray, optional
        The atoms' indices; None: ``0 .. n-1``.
    engine : {"numpy", "numba"}, default "numpy"
        The kernels.
    exact : ExactRows, optional
        The exact predictions behind ``P``.
    row_sum_tolerance : float, optional
        How far a row may sum from 1; None: rows are divided by their sums.

    Returns
    -------
    SampleTerms
        The terms.

    Raises
    ------
    HUCError
        Naming the first bad row of ``P``.

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> ft = FastTree(LabelTree.from_children("r", {"r": ["a", "b"]}))
    >>> t = sample_terms(ft, np.array([[0.25, 0.75]]), np.array([0]), {"u": Table(ft.tree, [0, 1])})
    >>> t.score.tolist(), t.residual.tolist()  # mu_u = 3/4; u(p, a) - mu_u = -3/4
    ([[0.75]], [[-0.75]])
    """
    n, H = len(labels), ft.H
    exact = ExactRows(P) if exact is None else exact
    rel = rounding_bound(ft.K, exact.p_error)
    names = list(utilities)
    plans = [path_plan(ft, u) for u in utilities.values()]
    # A flat tree (every child of the root a leaf): the root's term u(p, y) - mu_{u, root}(p) is the
    # UC residual itself (Sec. 3.1 with the path root -> y), so no term is stored; Rows copies its UC column.
    flat = H == 1
    depths = [np.zeros(0, dtype=int) if flat else ks for _, _, ks in plans]  # the depths whose terms are stored
    term_row = np.cumsum([0] + [len(ks) for ks in depths])
    block, score, residual, error, T, term_at = sample_block(n, term_row, atoms_side_by_side=engine == "numba")
    top1 = [k for k, u in enumerate(utilities.values()) if engine == "numba" and u.top1_depth is not None]
    rest = [k for k in range(len(names)) if k not in top1]
    choice = {k: np.empty(n, dtype=np.intp) for k in rest if utilities[names[k]].top1_depth is not None}
    need_pi = not flat or any(utilities[names[k]].top1_depth is not None for k in rest)  # masses on the paths
    compiled_flat = engine == "numba" and flat and ft.label_order is None  # flat_terms sums in label order
    root_first = flat and not need_pi and ft.K <= _SHORT_RUN  # the row sums alone, unless a utility reads more
    if compiled_flat:
        from .kernels import flat_rows_ok, flat_terms
    if top1:
        from .kernels import Top1Out, TreeRows, top1_path_terms
        plan = top1_plan(ft, [utilities[names[k]] for k in top1], [depths[k] for k in top1], top1, term_at[top1])
        tree_rows = TreeRows.of(ft)
    step = chunk_rows(n, ft.K)
    level_sums = level_sums_in_place(ft)
    positive = {}  # by a chunk's first row: whether numpy found its every entry positive

    def chunk(s: int) -> tuple[int, str, str] | None:
        """Fill the outputs of rows ``s .. s + step``; the first bad row, its rule and the rule's kind, if
        any (a row that breaks a rule of :func:`fill`'s before a label of probability 0: the chunk is
        read once more for that, while the caches hold it)."""
        X = np.asarray(P[s:s + step], dtype=float)
        bad = fill(s, X)
        if bad is None and not positive.pop(s, False) and (zero := zero_label(ft.tree, X, labels[s:s + step])):
            return s + zero[0], zero[1], "nonpositive"
        return bad

    def fill(s: int, X: np.ndarray) -> tuple[int, str, str] | None:
        """The outputs of rows ``s .. s + step`` (``X``); the first bad row, its rule and the rule's kind, if any."""
        Xd = X if ft.label_order is None else X[:, ft.label_order]
        y, part, ex = labels[s:s + step], slice(s, s + step), exact.view(s)
        S = pi = None
        if top1:  # the kernel writes its rows' entries in place (no memory of its own: fresh pages cost)
            unsure = np.zeros((len(top1), len(y)), dtype=np.int8)
            sums = np.empty(3)
            out = Top1Out(score, residual, error, block, unsure, sums)
            ok = top1_path_terms(np.ascontiguousarray(Xd), y, s, tree_rows, plan, rel, SMALLEST_NORMAL, out) < 0
            if not ok:  # a bad row or an entry below the normal range: numpy's checks, in their order, name it
                return chunk_numpy(s, X, Xd, ok=None)
            positive[s] = sums[2] == 0.0  # (no entry 0: no label of probability 0, zero_label need not look)
            if unsure.any():  # choices float64 could not certify: taken exactly (numpy's general form)
                S = ft.level_sums(Xd, dfs=True)
                pi = on_paths(ft, y, H + 1, S)
                for j, k in enumerate(top1):
                    idx = np.flatnonzero(unsure[j])
                    if len(idx):
                        mu, at_label, _ = exact_path_means(ft, X, y, utilities[names[k]], pi, idx, ex)
                        score[k, s + idx], residual[k, s + idx] = mu[0], at_label - mu[0]
                        error[k, s + idx] = 2.0 * rel * mu[0]  # u is 0 or 1: the score bounds sum_y p_y |u_y| / pi
                        T[k][:, s + idx] = (mu[1:] - mu[:-1])[depths[k]]
            # every entry 0 or a normal float (the kernel checked), the row sums certainly within the tolerance
            # (their float error, in any order of addition, is below the margin): nothing more to look at
            margin = 4.0 * rel * sums[1]
            within = row_sum_tolerance is None or max(sums[1] - 1.0, 1.0 - sums[0]) <= row_sum_tolerance - margin
            if within and not rest:
                return None
        if rest and compiled_flat and flat_rows_ok(X, -1.0 if row_sum_tolerance is None else row_sum_tolerance,
                                                   SMALLEST_NORMAL):
            for k in rest:  # rows checked in one read; each utility's terms in one more
                u = utilities[names[k]]
                U = utility_values(u, ft, X, _atoms(rows, part),
                                   lambda: ft.node_table(ft.level_sums(Xd, dfs=True)), ex)
                flat_terms(X, U, y, rel, float(u.nesting), score[k, part], residual[k, part], error[k, part])
            return None
        return chunk_numpy(s, X, Xd, S, pi)

    def chunk_numpy(s, X, Xd, S=None, pi=None, ok=True):
        """The rest of :func:`fill` in numpy (and the search for a bad row's message; ``ok=None``:
        a kernel found a problem, and numpy's checks, in their order, say which)."""
        if ok is None:
            with np.errstate(over="ignore", invalid="ignore"):
                sums = row_sums(X)
            ok = bool(X.min() >= 0 and sums.min() > 0 and sums.max() < np.inf)
        y, part, ex = labels[s:s + step], slice(s, s + step), exact.view(s)
        if rest:
            if S is None:
                with np.errstate(over="ignore", invalid="ignore"):  # bad rows are found and reported below
                    S = RootFirst(ft, Xd) if root_first else level_sums(Xd)
            smallest = Xd.min()
            positive[s] = smallest > 0  # (then no label has probability 0: zero_label need not look)
            low_sum, high_sum = S[0].min(), S[0].max()  # S[0]: the row sums
            ok = ok and smallest >= 0 and low_sum > 0 and high_sum < np.inf
            if ok:
                if pi is None and need_pi:
                    pi = on_paths(ft, y, H + 1, S)
                for k in rest:
                    some = _atoms(rows, part)
                    chosen = path_terms(ft, X, Xd, y, utilities[names[k]], S, pi, some, ex, depths[k], T[k][:, part],
                                        (score[k, part], residual[k, part], error[k, part]))
                    if k in choice:
                        choice[k][part] = chosen
        if ok and row_sum_tolerance is not None:
            if rest:  # (the row sums' range, read above)
                sums = S[0]
            else:
                with np.errstate(over="ignore", invalid="ignore"):
                    sums = S[0] if S is not None else row_sums(X)
                low_sum, high_sum = sums.min(), sums.max()
            if high_sum - 1.0 > row_sum_tolerance or 1.0 - low_sum > row_sum_tolerance:
                i = int(np.argmax(np.abs(sums - 1.0) > row_sum_tolerance))
                return s + i, (f"sums to {sums[i].item()!r}, not 1 (within {row_sum_tolerance:g}); pass "
                               "renormalize=True to take each row divided by its sum"), "probability_sum"
        if ok and rest and smallest >= SMALLEST_NORMAL:  # no zeros, no subnormals: nothing more to look at
            return None
        low = X < SMALLEST_NORMAL  # zeros, subnormals (and negatives, reported below): one pass
        if ok and not (low.any() and np.any(X[low] != 0)):
            return None
        tiny = low & (X != 0)
        with np.errstate(over="ignore"):
            total = X.sum(axis=1)
        bad = ~np.isfinite(X).all(axis=1) | (X < 0).any(axis=1) | ~(total > 0) | ~np.isfinite(total)
        if bad.any():
            return (s + int(np.argmax(bad)), "entries must be finite and nonnegative, with a positive finite sum",
                    "float_range")
        i, j = np.argwhere(tiny)[0]
        scale = ("and pass renormalize=True (each row then stands for itself divided by its sum)"
                 if row_sum_tolerance is not None else "(renormalize=True, as given, divides each row by its sum)")
        return s + int(i), (f"entry {int(j)} is {X[i, j].item()!r}, a subnormal float64 (below "
                            f"{SMALLEST_NORMAL:.4g}): its digits are lost in sums and ratios; multiply the row "
                            f"by a power of two such as 2.0**600 {scale}, or audit its exact value "
                            "(arithmetic='exact')"), "float_range"

    # one chunk: no threads; Ctrl-C: the queued chunks are dropped, not run to the end
    bad = [b for b in run_all(chunk, range(0, n, step), THREADS) if b is not None]
    if bad:  # a bad row anywhere before a label of probability 0 (check_label_mass's rule)
        first = next((b for b in bad if b[2] != "nonpositive"), bad[0])
        raise HUCError(f"y_prob[{first[0]}]: {first[1]}", kind=first[2])
    return SampleTerms(score, residual, error, T, plans, depths, term_row, flat, choice)


#: The remedy of a label of probability 0 (:func:`zero_label`) for :func:`audit`'s caller, who smooths the
#: rows (``audit`` takes them as they are; ``huc audit --smooth`` and :class:`huc_ref.calibration.HUCBoost`
#: smooth them themselves).
SMOOTH_ROWS = ("mix each row with the uniform law before the audit, y_prob = (1 - kappa) * y_prob + kappa / K "
               "(K.1's kappa_init, e.g. kappa = 1e-10)")


def check_label_mass(tree: LabelTree, P, labels: np.ndarray, where: str = "y_prob", fix: str = SMOOTH_ROWS) -> None:
    """A zero entry is taken (a decision tree's ``predict_proba`` has them): the audit reads a
    row's means only on its label's path (F.4), and every node there holds the label.  At the
    label itself it is refused: the path's means are ``0 / 0`` there (the paper assumes ``p_y > 0``,
    A.2), and taking them as 0 broke Theorem 3.1's telescoping (the UC residual ``u(y) - mu`` and
    the node terms' sum differed by ``u(y)``).  ``where`` names the predictions in the message, ``fix``
    the remedy (:data:`SMOOTH_ROWS`; the command line's is its ``--smooth``).

    Parameters
    ----------
    tree : LabelTree
        The tree.
    P : array-like of shape (n, K)
        The predictions.
    labels : ndarray of shape (n,)
        The label ids.
    where : str, default "y_prob"
        The predictions' name in the message.
    fix : str, default SMOOTH_ROWS
        The remedy in the message.

    Raises
    ------
    HUCError
        Of kind ``nonpositive``, naming the first row zero at its label.

    Examples
    --------
    >>> from huc_ref import LabelTree
    >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    >>> check_label_mass(t, np.array([[0.5, 0.5, 0.0]]), np.array([1]))  # the zero is not the label's
    >>> check_label_mass(t, np.array([[0.5, 0.5, 0.0]]), np.array([2]))
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: y_prob[0]: the label 'c' has probability 0, where the audit's means are 0/0 ...
    """
    zero = zero_label(tree, P, labels, fix)
    if zero is not None:
        raise HUCError(f"{where}[{zero[0]}]: {zero[1]}", kind="nonpositive")


def zero_label(tree: LabelTree, P, labels: np.ndarray, fix: str = SMOOTH_ROWS) -> tuple[int, str] | None:
    """The first row of ``P`` whose own label has probability 0 (A.2 assumes ``p_y > 0``; see
    :func:`check_label_mass`) and the rule it breaks with its remedy ``fix``, or None.  Each row's entry at its label is
    read with one ``take`` from a C-contiguous array (numpy's indexing by two index arrays is
    slower).

    Parameters
    ----------
    tree : LabelTree
        The tree.
    P : array-like of shape (n, K)
        The predictions.
    labels : ndarray of shape (n,)
        The label ids.
    fix : str, default SMOOTH_ROWS
        The remedy.

    Returns
    -------
    tuple of (int, str) or None
        The row and the message, or None.

    Examples
    --------
    >>> from huc_ref import LabelTree
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> zero_label(t, np.array([[0.5, 0.5], [1.0, 0.0]]), np.array([1, 1]))[0]
    1
    """
    P = np.asarray(P)
    rows = np.arange(len(labels))
    if P.ndim == 2 and P.flags.c_contiguous:
        at_label = P.reshape(-1).take(rows * P.shape[1] + labels)
    else:
        at_label = P[rows, labels]
    zero = np.flatnonzero(at_label == 0)
    if not len(zero):
        return None
    i = int(zero[0])
    return i, (f"the label {tree.labels[int(labels[i])]!r} has probability 0, where the audit's means are 0/0 (the "
               f"paper assumes p_y > 0, A.2); {fix}")


def sample_tables(ft: FastTree, terms: SampleTerms, labels: np.ndarray, W: np.ndarray,
                  utilities: Mapping[str, Utility], rows=None, engine: str = "numpy",
                  exact: ExactRows | None = None) -> dict:
    """The :class:`Rows` of every utility from its :class:`SampleTerms` (one sort per utility,
    Algorithm 2 on every column at once, App. F.3-F.4), the utilities on :data:`THREADS` threads
    (under numba each utility's sort and its scan as two calls, :func:`huc_ref.fast.workers.run_staged`).

    Parameters
    ----------
    ft : FastTree
        The tree.
    terms : SampleTerms
        The atoms' terms (:func:`sample_terms`).
    labels : ndarray of shape (n,)
        The label ids.
    W : ndarray of shape (n, |C|)
        ``w_i c(x_i)`` per atom and subgroup.
    utilities : dict of str to Utility
        The utilities by name.
    rows : ndarray, optional
        The atoms' indices; None: ``0 .. n-1``.
    engine : {"numpy", "numba"}, default "numpy"
        The kernels.
    exact : ExactRows, optional
        The exact predictions behind the scores (None: none).

    Returns
    -------
    dict of str to Rows
        Each utility's rows.

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> ft = FastTree(LabelTree.from_children("r", {"r": ["a", "b"]}))
    >>> P, y, us = np.array([[0.25, 0.75], [0.5, 0.5]]), np.array([0, 1]), {"u": Table(ft.tree, [0, 1])}
    >>> rows = sample_tables(ft, sample_terms(ft, P, y, us), y, np.full((2, 1), 0.5), us)["u"]
    >>> float(rows.best[0][0][0])  # UC: the interval holding only the first atom, |(0 - 3/4) / 2|
    0.375
    """
    exact = ExactRows(None) if exact is None else exact  # (None: no exact scores behind the floats)
    names, t = list(utilities), terms
    lanes = None
    if engine == "numpy" and W.strides[0] != 0:  # (each subgroup's weights a contiguous row, for the column
        W = np.asfortranarray(W)                  # scan's gathers; equal weights broadcast stay one number)
    if engine == "numba" and t.flat:  # the UC scans read each atom's row of weights, or where every row is the
        W = np.ascontiguousarray(W[:1] if W.strides[0] == 0 else W)  # same (a broadcast), the first alone
    elif engine == "numba":  # the node scan's weights, padded to whole vectors once for every utility (one copy,
        from .kernels import lane_keys, weight_lanes  # or each distinct row once: indicator subgroups of a sample),
        lanes = weight_lanes(W)  # and each atom's label and row of weights in one number (the kinds of term_columns)
        lanes += ((labels, lane_keys(labels, lanes[1])),)

    def table(k: int, threads: int = 1, blocks=None) -> Rows:
        nodes, colmap, _ = t.plans[k]
        out = Rows(t.score[k], t.residual[k], t.T[k], *term_columns(ft, colmap, t.depths[k], labels),
                   W, len(nodes) + 1, engine, score_error=t.error[k],
                   exact_score=exact_scores(utilities[names[k]], exact, rows),
                   uc_copies=range(1, len(nodes) + 1) if t.flat else (), lanes=lanes, threads=threads,
                   labels=(labels, ft.K), blocks=blocks)
        out.nodes = nodes
        return out

    def blocks(k: int):
        """Utility ``k``'s sort and tie blocks (what :class:`Rows` makes first), where it has node terms (without,
        Rows takes its UC column straight from the sort)."""
        if not len(t.T[k]):
            return None
        return tie_blocks(t.score[k], t.error[k], exact_scores(utilities[names[k]], exact, rows), engine=engine)

    if len(labels) * ft.K <= SERIAL_CELLS:  # few numbers: no threads
        return {name: table(k) for k, name in enumerate(names)}
    # the utilities with the most term rows first, so that the last one to start is a short one; under numba
    # every sort before any scan, each taken by the next free thread (run_staged: five whole utilities on two
    # threads would put three on one); under numpy those left over when the others fill whole rounds of the
    # threads come after them, each scanning its subgroups on all the threads (with five on two threads the
    # fifth alone would leave a thread idle for a third of the phase; one utility alone uses every thread)
    order = sorted(range(len(names)), key=lambda k: t.term_row[k] - t.term_row[k + 1])
    if engine == "numba":
        done = dict(zip(order, run_staged(blocks, lambda k, made: table(k, blocks=made), order, THREADS)))
        return {name: done[k] for k, name in enumerate(names)}
    last = len(order) % THREADS
    head, tail = order[:len(order) - last], order[len(order) - last:]
    done = dict(zip(head, run_all(table, head, THREADS)))
    done.update((k, table(k, THREADS)) for k in tail)
    return {name: done[k] for k, name in enumerate(names)}


def numba_available() -> bool:
    """Whether the compiled kernels of the fast path (App. F.4, :mod:`huc_ref.fast.kernels`) are
    compiled, that is, whether the optional numba extra is installed.

    Returns
    -------
    bool
        Whether the kernels are compiled.

    Examples
    --------
    >>> import importlib.util
    >>> numba_available() == (importlib.util.find_spec("numba") is not None)
    True
    """
    from .kernels import COMPILED
    return COMPILED


def result_rows(tree: LabelTree, tables: dict, subgroups: list, n: int, is_sample: bool) -> AuditResult:
    """The :class:`AuditResult` of every utility's :class:`Rows`, in the exact engine's row order
    (subgroups, utilities, the UC row, then the relevant nodes in pre-order), with float numbers;
    each utility's witnesses (App. F.3) read for all its subgroups at once, and the groups of
    scores float64 could not order, where there were any (:class:`huc_ref.results.NearTies`)."""
    found = {}
    for name, table in tables.items():
        nodes = [None] + [tree.nodes[a] for a in table.nodes]
        sup, r, b, moment = (np.stack(x) for x in zip(*table.best))  # (subgroups, columns) each
        witness = table.intervals(r.ravel(), b.ravel())
        cut = len(nodes)
        found[name] = (nodes, sup.tolist(), [witness[k * cut:(k + 1) * cut] for k in range(len(subgroups))],
                       moment.tolist())
    candidates = []
    for k, c_name in enumerate(subgroups):
        for name, (nodes, sup, witness, moment) in found.items():
            candidates += Candidate.of_table(c_name, name, nodes, sup[k], witness[k], moment[k])
    relevant = {name: tuple(nodes[1:]) for name, (nodes, *_) in found.items()}
    near = [table.near_ties for table in tables.values() if getattr(table, "near_ties", None) is not None]
    return AuditResult(tuple(candidates), relevant, tuple(subgroups), n, is_sample, arithmetic="float64",
                       near_ties=sum(near[1:], near[0]) if near else None)


def audit_distribution(dist: FiniteDistribution, utilities: Mapping[str, Utility], *,
                       accelerator: str = "numpy", predictions: np.ndarray | None = None,
                       weights: np.ndarray | None = None) -> AuditResult:
    """UC and HUC of a finite distribution in float64, as the exact engine's :class:`AuditResult`
    (``arithmetic="float64"``; :func:`huc_ref.audit` with ``arithmetic="float64"`` calls this).

    Sample atoms take the path form (F.4), with the ``accelerator`` given (``"numba"``: the
    compiled kernels); population atoms with a law ``eta`` the C.2 form.  ``predictions``
    (float64, one row per atom) replaces the atoms' own, e.g. a boosting run's replayed
    predictions (:func:`huc_ref.replay.trajectory`); ``weights``, the third array of
    :func:`distribution_arrays`, when the caller audits one distribution many times (made
    once: each is a product of Fractions).

    Parameters
    ----------
    dist : FiniteDistribution
        The atoms: a population or a sample.
    utilities : dict of str to Utility
        The utilities by name.
    accelerator : {"numpy", "numba"}, default "numpy"
        The kernels of the sample path.
    predictions : ndarray of shape (n, K), optional
        Float64 predictions replacing the atoms' own.
    weights : ndarray, optional
        :func:`distribution_arrays`' weights, made before.

    Returns
    -------
    AuditResult
        Every candidate row, float numbers, ``arithmetic == "float64"``.

    Raises
    ------
    HUCError
        For utilities the audit cannot take, or (a sample) an unknown ``accelerator``.

    Examples
    --------
    >>> from huc_ref import Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> r = audit_distribution(d, {"u": Table(t, [-1, 1, 1, 1])})
    >>> r.uc.sup, r.huc.sup, r.huc.node, r.huc.interval, r.arithmetic
    (0.0, 0.25, 'v0', (0.5, 0.5), 'float64')
    """
    check_utilities(dist.tree, dist.n, utilities)
    ft = FastTree(dist.tree)
    P, exact, weights = distribution_arrays(dist, predictions, weights)
    rows = np.arange(dist.n)
    if dist.is_sample:
        tables = sample_rows(ft, P, np.array([a.label for a in dist.atoms]), weights, utilities, rows,
                             check_accelerator(accelerator), exact)
    else:
        E = floats([a.label_law(ft.K) for a in dist.atoms], "atoms[{}].eta[{}]")
        masses, star = ft.subtree_sums(P), ft.subtree_sums(E)  # pi_a(p) and pi*_a, shared by every utility
        tables = {name: dense_rows(ft, P, E, weights, u, masses, star, rows, exact=exact)
                  for name, u in utilities.items()}
    return result_rows(dist.tree, tables, list(dist.subgroups), dist.n, dist.is_sample)


def distribution_arrays(dist: FiniteDistribution, predictions: np.ndarray | None = None,
                        weights: np.ndarray | None = None):
    """The atoms as float64 arrays (docs/specification.md §3): predictions ``P`` (or ``predictions``),
    the exact rows behind them, and ``w_i c(x_i)`` per subgroup (``n x |C|``; or ``weights``, as
    made before).

    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> P, exact, W = distribution_arrays(FiniteDistribution(t, [{"p": ["1/4", "3/4"], "label": "a"}]))
    >>> P.tolist(), exact.row(0), W.tolist()
    ([[0.25, 0.75]], (Fraction(1, 4), Fraction(3, 4)), [[1.0]])
    """
    if predictions is None:
        P = floats([a.p for a in dist.atoms], "atoms[{}].p[{}]")
        exact = ExactRows(P, [a.p for a in dist.atoms])
    else:
        P = np.asarray(predictions, dtype=float)
        exact = ExactRows(P)
    return P, exact, subgroup_weights(dist) if weights is None else weights


def subgroup_weights(dist: FiniteDistribution) -> np.ndarray:
    """``w_i c(x_i)`` per atom and subgroup (``n x |C|``) in float64, each the float of an exact
    product: the weights of UC's and HUC's sums over atoms (Sec. 2.1's ``E[c(X) ...]`` of a
    finite distribution, docs/specification.md §3).

    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> atoms = [{"p": ["1/4", "3/4"], "label": "a", "weight": "1/4", "c": ["-1/2"]},
    ...          {"p": ["1/4", "3/4"], "label": "b", "weight": "3/4", "c": [1]}]
    >>> subgroup_weights(FiniteDistribution(t, atoms, ["signed"])).tolist()
    [[-0.125], [0.75]]
    """
    return floats([[a.weight * c for c in a.c] for a in dist.atoms], "atoms[{}]: weight times c[{}]")


#: The fast backend's accelerators: pure numpy (the reference) and the compiled kernels.
ACCELERATORS = ("numpy", "numba")


def check_accelerator(accelerator: str) -> str:
    """The fast backend's accelerator, checked: ``"numpy"`` or ``"numba"`` (installed).

    >>> check_accelerator("numpy")
    'numpy'
    """
    if not one_of(accelerator, ACCELERATORS):
        raise HUCError(f"accelerator: expected 'numpy' or 'numba', got {given(accelerator)}", kind="option")
    if accelerator == "numba" and not numba_available():
        raise HUCError("accelerator: 'numba' needs the numba package (pip install 'huc-ref[numba]')", kind="dependency")
    return accelerator


class LabelIds(np.ndarray):
    """Label ids (positions in a tree's label order) that :func:`label_ids` has read: passed on to
    another call (a fit's held-out rows, its report's audits), they are taken as ids as they are,
    never again asked whether an integer meant a label named by digits.  Indexing keeps the type;
    arithmetic and comparisons give plain arrays.

    >>> t = LabelTree.from_children("r", {"r": ["1", "0"]}, labels=["1", "0"])
    >>> ids = label_ids(["0", "1"], t, 2)
    >>> label_ids(ids[::-1], t, 2).tolist(), type(ids == 0).__name__
    ([0, 1], 'ndarray')
    """

    def __array_wrap__(self, array, context=None, return_scalar=False):
        out = array.view(np.ndarray)
        return out[()] if return_scalar else out


def label_ids(y_true, tree: LabelTree, n: int, where: str = "y_true", rows: str = "y_prob",
              columns=None) -> np.ndarray:
    """The labels ``y_i`` of a sample (Sec. 2.1) given as names or integers, as label ids
    (positions in the tree's label order; vectorised for integer and string arrays).  An integer
    is a position among ``columns``, the names of the prediction array's columns in their order
    where the call declared them (``labels=``, a classifier's ``classes_``, or a DataFrame's column
    names: scikit-learn's convention, ``classes_[y]`` is the label), else in the tree's label
    order; an integer that could also be a label named by digits is an error
    (:meth:`huc_ref.tree.LabelTree.check_integer_labels`).  ``where`` and ``rows`` name the
    labels and the predictions in a message.

    Parameters
    ----------
    y_true : array-like
        One label per row: names (strings), integers, or a mix.
    tree : LabelTree
        The tree whose label ids are returned.
    n : int
        The number of rows of the predictions.
    where, rows : str
        The names of the labels and of the predictions in a message.
    columns : array-like or None
        The columns' names in order (names or integer classes); None: the tree's label order.

    Returns
    -------
    LabelIds
        The label ids, ``n`` of them.

    Raises
    ------
    HUCError
        A label that is neither a name nor a position, a count that is not ``n``, or integers
        that are ambiguous.

    Examples
    --------
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> label_ids(["b", 0], t, 2).tolist()
    [1, 0]
    >>> label_ids([0, 1], t, 2, columns=["b", "a"]).tolist()  # positions among the columns: "b", "a"
    [1, 0]
    >>> label_ids([0], t, 2, "validation[1]", "validation[0]")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: validation[1]: has 1 labels, validation[0] has 2 rows
    """
    if isinstance(y_true, LabelIds) and y_true.ndim == 1 and len(y_true) == n:
        return y_true
    if hasattr(y_true, "__array__") and not hasattr(y_true, "__iter__"):  # (an array-like that only converts)
        y_true = np.asarray(y_true)
    if isinstance(y_true, (str, bytes)) or not hasattr(y_true, "__iter__"):
        raise HUCError(f"{where}: expected one label (a name or an id) per row of {rows}, "
                       f"got {type(y_true).__name__}", kind="length")
    y = y_true if isinstance(y_true, np.ndarray) else np.asarray(list(y_true), dtype=object)
    if y.ndim != 1 or len(y) != n:
        raise HUCError(f"{where}: has {len(y) if y.ndim == 1 else y.shape} labels, {rows} has {n} rows", kind="length")
    names = None if columns is None else label_names(columns, "labels")
    if names is not None and names == list(tree.labels):
        names = None  # (the columns are in the tree's order: a position is a label id)
    # each column's label id: an integer label k is the label of column k
    to_id = None if names is None else np.array([tree.label_index(name) for name in names], dtype=np.intp)

    def positions(ints: np.ndarray) -> np.ndarray:  # integers read among the columns, as label ids
        if to_id is None:
            return ints
        inside = (ints >= 0) & (ints < len(to_id))
        return np.where(inside, to_id[np.where(inside, ints, 0)], -1)
    if y.dtype.kind in "iu":
        tree.check_integer_labels(where, names)
        ids = positions(y.astype(np.intp, copy=False))  # (read only: no copy of an intp array)
    elif y.dtype.kind == "U":
        values, inverse = np.unique(y, return_inverse=True)
        ids = np.array([tree.find_label(str(v)) for v in values], dtype=int)[inverse]
    else:
        integer = np.array([isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in y], dtype=bool)
        if integer.any():
            tree.check_integer_labels(where, names)
        ids = np.array([tree.find_label(v) if isinstance(v, str) else int(v) if k else -1
                        for v, k in zip(y, integer)], dtype=int)
        if integer.any() and to_id is not None:
            ids[integer] = positions(ids[integer])
    if len(ids) and (ids.min() < 0 or ids.max() >= tree.K):
        i = int(np.argmax((ids < 0) | (ids >= tree.K)))
        raise HUCError(f"{where}[{i}]: {given(y[i])} is not a label name or id", kind="reference")
    return np.asarray(ids, dtype=np.intp).view(LabelIds)


def _lazy(*values) -> bool:
    """Whether any argument (or a subgroup's values) is a Dask collection (:mod:`huc_ref.fast.scale`
    audits those); dask is not imported here: a collection exists only where it was imported."""
    if "dask" not in sys.modules:
        return False
    from .scale import is_lazy
    return is_lazy(*values)


def sample_arrays(y_true, y_prob, tree: LabelTree, utilities: Mapping[str, Utility], *, subgroups=None,
                  sample_weight=None, labels=None) -> tuple:
    """:func:`audit`'s arrays, checked (one HUCError naming the argument otherwise):
    ``(P, ids, w, names, WT)``: the predictions in the tree's label order (a numpy array or
    memory map as given, its rows read later), the label ids, the samples' weights ``w`` (summing
    to 1), the subgroups' names and ``w_i c(x_i)`` per subgroup and sample (``|C| x n``: the
    weights of Sec. 2.1's ``E[c(X) ...]`` over the sample; the whole population ``"all"`` first
    where ``subgroups`` has no such entry, K.3).

    Parameters
    ----------
    y_true, y_prob, tree, utilities, subgroups, sample_weight, labels
        As :func:`audit` takes them.

    Returns
    -------
    P : ndarray of shape (n, K)
        The predictions in the tree's label order.
    ids : ndarray of shape (n,)
        The label ids.
    w : ndarray of shape (n,)
        The weights, summing to 1.
    names : list of str
        The subgroups' names.
    WT : ndarray of shape (|C|, n)
        ``w_i c(x_i)`` per subgroup and sample.

    Raises
    ------
    HUCError
        As :func:`audit`, naming the argument.

    Examples
    --------
    >>> from huc_ref import Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> P, ids, w, names, WT = sample_arrays(["b", "a"], [[0.5, 0.5], [0.25, 0.75]], t, {"u": Table(t, [0, 1])},
    ...                                      sample_weight=[1, 3], subgroups={"x": [1, -1]})
    >>> P.tolist(), ids.tolist(), w.tolist(), names, WT.tolist()
    ([[0.5, 0.5], [0.25, 0.75]], [1, 0], [0.25, 0.75], ['all', 'x'], [[0.25, 0.75], [0.25, -0.75]])
    """
    check_tree(tree)
    y_prob, names = tree.frame_columns(y_prob, labels)  # (a DataFrame's column names)
    y_prob = tree.label_columns(y_prob, names)  # (in the tree's label order, or one error saying how to declare it)
    P = y_prob if isinstance(y_prob, np.ndarray) else as_floats(y_prob, "y_prob")
    if P.dtype.kind not in "iuf":  # booleans are refused as the exact path refuses them
        raise HUCError(f"y_prob: expected numbers, got an array of dtype {P.dtype}", kind="type")
    if P.ndim != 2 or P.shape[1] != tree.K:
        raise HUCError(f"y_prob: expected {tree.K} columns (one per label), got shape {P.shape}", kind="length")
    n = P.shape[0]
    if n == 0:
        raise HUCError("y_prob: no rows (an audit needs at least one atom)", kind="length")
    check_utilities(tree, n, utilities)
    ids = label_ids(y_true, tree, n, columns=names)  # (integers: positions among the named columns)
    if sample_weight is None:
        w = np.broadcast_to(1.0 / n, n)  # what the exactly rounded sum below gives for equal weights (one number)
    else:
        w = entries(sample_weight, n, "sample_weight", "a finite nonnegative number", lambda v: v >= 0, "float_range")
        if not w.max() > 0:
            raise HUCError("sample_weight: sums to 0; the weights need a positive sum", kind="probability_sum")
        w = w / w.max()  # so that the sum cannot overflow (1e308 + 1e308)
        w = w / math.fsum(w.tolist())  # exactly rounded: the same bits whatever the rows' order
    if subgroups is None:  # everyone: the weights alone
        return P, ids, w, ["all"], w[None, :]
    groups = subgroup_columns(subgroups, n)
    if WHOLE_POPULATION not in groups:  # K.3: "The whole-population indicator is always included"
        groups = {WHOLE_POPULATION: None, **groups}
    WT = np.empty((len(groups), n))  # w_i c(x_i), one row per subgroup
    for k, c in enumerate(groups.values()):
        if c is None:  # (the whole population, added: the weights alone)
            WT[k] = w
        else:
            np.multiply(w, c, out=WT[k])
    return P, ids, w, list(groups), WT


def subgroup_columns(subgroups, n: int) -> dict:
    """A sample's subgroup family ``C`` (Sec. 2.1: ``c: X -> [-1, 1]``) as given to the array entry
    points, checked: a mapping from a name to ``n`` values in [-1, 1] (a boolean mask read as the
    indicator), the name ``"all"`` the whole population's (K.1's ``c = 1``: its values 1, or
    refused); float64 columns by name, or one HUCError naming the subgroup and its row.

    Parameters
    ----------
    subgroups : mapping of str to n values, or a DataFrame
        The subgroups by name (:func:`huc_ref.distribution.subgroup_mapping`).
    n : int
        The number of rows.

    Returns
    -------
    dict of str to numpy.ndarray
        Each subgroup's ``n`` values, float64.

    Raises
    ------
    HUCError
        Naming the subgroup and row of a value that is not in [-1, 1], a bad name, or an
        ``"all"`` that is not 1 everywhere.

    Examples
    --------
    >>> subgroup_columns({"all": [1, 1], "odd": [False, True]}, 2)
    {'all': array([1., 1.]), 'odd': array([0., 1.])}
    >>> subgroup_columns({"all": [1, 0]}, 2)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: subgroups['all'][1]: is 0.0, but 'all' names the whole population (c = 1 on every ...
    """
    columns = {}
    for name, values in subgroup_mapping(subgroups).items():
        check_name(name, "subgroups")
        c = subgroup_column(values, n, f"subgroups[{printable(name, 80)!r}]")
        check_whole_population(name, c, "subgroups['all'][{i}]")  # ("all" is the whole population, or refused)
        columns[name] = c
    return columns


def audit(y_true, y_prob, tree: LabelTree, utilities: Mapping[str, Utility], *, subgroups=None,
          sample_weight=None, accelerator: str = "numpy", renormalize: bool = False, labels=None,
          null_draws: int | None = None, seed: int = 0, max_null_work: int | None = None) -> AuditResult:
    """UC and HUC of a labelled sample, from array-likes (scikit-learn's argument names), as the
    exact engine's :class:`AuditResult` with float numbers (``arithmetic="float64"``).

    Sec. 3.3 and App. F.4: only the nodes on each sample's path carry a term.  A numpy array or
    memory map ``y_prob`` is read in row chunks of about :data:`CHUNK` numbers, so the working
    memory beyond the input is O(n (|U| + sum_u D_u)).  An entry may be 0 (a decision tree's),
    except at its row's own label, whose path's means are then 0/0 (A.2 assumes ``p_y > 0``):
    that is one HUCError (smooth the predictions first).  Any argument given as a Dask
    collection (Array, Series, DataFrame; the ``scale`` extra) runs the same audit partition by
    partition on the Dask scheduler in effect, with the same answer
    (:func:`huc_ref.fast.scale.audit`, docs/scale.md).

    Parameters
    ----------
    y_true : array-like of n labels
        Labels as names or integers: an integer is a position among the columns named by
        ``labels`` (``labels[y]``, scikit-learn's convention for ``classes_``), else a label id.
    y_prob : array-like or DataFrame of shape (n, K)
        Probabilities in the tree's label order, or in the order ``labels`` names.  Each row
        must sum to 1 within :data:`ROW_SUM_TOLERANCE` (a float32 softmax does), unless
        ``renormalize``.
    tree : LabelTree
        The label tree.
    utilities : dict of str to Utility
        The utilities by name, each built on ``tree``.
    subgroups : mapping, optional
        Name -> ``n`` values in [-1, 1], audited with the whole population (K.3: "The
        whole-population indicator is always included"), which is added first under the name
        ``"all"`` where the mapping has no such entry (default: the whole population alone; a
        subgroup named ``"all"`` must be 1 on every row).
    sample_weight : array-like of shape (n,), optional
        Nonnegative weights with a positive sum (normalised to sum 1); uniform when omitted.
    accelerator : {"numpy", "numba"}, default "numpy"
        numpy (the reference) or the compiled kernels of :mod:`huc_ref.fast.kernels` (an
        optional extra).
    renormalize : bool, default False
        Each row stands for itself divided by its sum (the means ``N / pi`` do not depend on a
        row's scale), as the exact path's ``renormalize`` does.
    labels : array-like of str, optional
        The columns' names in order (e.g. a classifier's ``classes_``; a DataFrame's column
        names serve too): the columns are taken in the tree's label order by them.  Without
        names the columns must be in the tree's order, which is then required to have been
        declared or to be ``classes_``' sorted order
        (:meth:`huc_ref.tree.LabelTree.column_order`): a bare ``predict_proba`` array with a
        tree built in a hierarchy's leaf order is an error, never a silent misreading.
    null_draws : int, optional
        p-values from this many redraws of the labels under the null of calibration
        ``Y_i ~ P_i`` (:mod:`huc_ref.significance`; ``result.significance``).
    seed : int, default 0
        Seeds the redraws.
    max_null_work : int, optional
        The redraws are refused before any audit beyond this budget
        (:func:`huc_ref.significance.check_null_work`).

    Returns
    -------
    AuditResult
        Every candidate row with float sups and witnesses, ``arithmetic == "float64"``.

    Raises
    ------
    HUCError
        One naming the argument: an unknown ``accelerator``, a ``tree`` that is not a
        LabelTree, ``y_prob`` of the wrong shape or not numbers, a row not summing to 1 or
        zero at its label, unknown labels, bad weights or subgroups, ``null_draws="exact"``
        (arrays take a number of draws), or redraws beyond ``max_null_work``.

    Examples
    --------
    >>> t = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    >>> from huc_ref import class_indicator
    >>> r = audit(["pos", "neg"], [[0.5, 0.5], [0.5, 0.5]], t, {"u": class_indicator(t, "pos")})
    >>> r.uc.sup, r.uc.interval  # the tie case of App. F.3: one block, residuals +1/2 and -1/2
    (0.0, None)
    """
    check_accelerator(accelerator)
    if _lazy(y_true, y_prob, subgroups, sample_weight):  # Dask collections: the same audit, partition by partition
        if not isinstance(tree, LabelTree):
            raise HUCError(f"tree: expected a LabelTree (LabelTree.from_children, .from_paths or .from_nested), "
                           f"got {type(tree).__name__}", kind="tree")
        from .scale import audit as audit_partitions
        return audit_partitions(y_true, y_prob, tree, utilities, subgroups=subgroups, sample_weight=sample_weight,
                                accelerator=accelerator, renormalize=renormalize, labels=labels,
                                null_draws=null_draws, seed=seed, max_null_work=max_null_work)
    P, ids, _, names, WT = sample_arrays(y_true, y_prob, tree, utilities, subgroups=subgroups,
                                         sample_weight=sample_weight, labels=labels)
    n = len(ids)
    if null_draws is not None:
        null_draws, seed = check_null(null_draws, seed)
        if null_draws == "exact":
            raise HUCError("null_draws: 'exact' enumerates label assignments of a FiniteDistribution "
                           "(huc_ref.audit); for arrays give a number of draws", kind="option")
        check_null_work(null_draws, n, tree.K, len(utilities), candidate_rows(utilities, len(names)), engine="fast",
                        max_work=max_null_work)
    ft = FastTree(tree)
    tables = sample_rows(ft, P, ids, WT.T, utilities, engine=accelerator,
                         row_sum_tolerance=None if renormalize else ROW_SUM_TOLERANCE)
    result = result_rows(tree, tables, names, n, True)
    if null_draws is None:
        return result
    if renormalize:
        P = np.asarray(P, dtype=float)
        P = P / P.sum(axis=1, keepdims=True)
    from .significance import null_sups
    draws = null_sups(ft, np.asarray(P, dtype=float), np.ascontiguousarray(WT.T), utilities, null_draws,
                      accelerator=accelerator)
    return resampling_p_values(n, tree.K, result, draws, null_draws, seed)
