"""A label tree as arrays (App. F.4): the twin of :mod:`huc_ref.tree` and of the subtree sums
of :mod:`huc_ref.decomposition`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..tree import LabelTree

__all__ = ["PATH_TABLE_CELLS", "FastTree", "on_paths"]


#: A tree keeps its labels' paths as one ``(H + 1) x K`` table when that has at most this many
#: entries (32 MiB); beyond it (a caterpillar of depth 20,000 would need 400 million) paths are
#: walked up the parent pointers when asked for, so that the tree's arrays stay linear in its size.
PATH_TABLE_CELLS = 2**22

#: Runs of at most this many children are summed row by row in :meth:`FastTree.level_sums`.
_SHORT_RUN = 8


#: Rows of predictions :meth:`FastTree.level_sums` turns into columns at a time: a whole chunk's
#: transpose read its rows once per leaf, from memory.  ``python bench/level_sums.py``: on a chunk of
#: the sample pass (69,905 rows, K = 30) level_sums in 0.65x the time of the whole chunk at once
#: (pieces of 64 rows: 0.73x, 1,024: 0.66x); K = 1,000 (2,097 rows, in the caches either way) 0.94x.
_TRANSPOSE_ROWS = 256


class FastTree:
    """A label tree as arrays: its nodes by level, each level in pre-order (App. F.4).

    Row ``r`` of the level order holds node ``level_nodes[r]``; the nodes at depth ``d`` are
    rows ``offsets[d] .. offsets[d + 1] - 1``, and the children of a node are one contiguous
    run of the next level.  Subtree sums are therefore one pass per level from the leaves up
    (:meth:`level_sums`): nonnegative sums only, so a subtree of mass 1e-20 beside mass 1
    keeps its digits (differences of one cumulative sum per row would cancel it to 0).  Every
    array is linear in the number of nodes; the labels' paths are a table only where it is
    small (:data:`PATH_TABLE_CELLS`).

    Parameters
    ----------
    tree : LabelTree
        The label tree.

    Examples
    --------
    >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
    >>> ft = FastTree(t)
    >>> ft.subtree_sums(np.array([[0.25, 0.25, 0.5]]))[0].tolist()  # nodes r, a, y1, y2, y3
    [1.0, 0.5, 0.25, 0.25, 0.5]
    >>> ft.level_nodes.tolist(), ft.offsets.tolist()  # levels: [r], [a, y3], [y1, y2]
    ([0, 1, 4, 2, 3], [0, 1, 3, 5])
    >>> ft.cut(2)[0].tolist()  # the cut at depth 2 (F.4's candidates of top-1 at depth 2): y1, y2, y3
    [3, 4, 2]
    """

    def __init__(self, tree: LabelTree):
        self.tree = tree
        self.K = K = tree.K
        self.n_nodes = n = len(tree.nodes)
        self.depth = depth = np.array(tree.depth_ids)
        self.H = H = int(depth.max())
        self.lo = np.array(tree.dfs_ranges[0])
        dfs = np.array(tree.dfs_label_ids)  # depth-first position -> label id
        self.dfs = dfs
        self.label_order = None if np.array_equal(dfs, np.arange(K)) else dfs
        self.leaf_nodes = np.array(tree.leaf_node_ids, dtype=int)  # node id of each label
        # node ids are pre-order, so a stable sort by depth puts every level in pre-order
        self.level_nodes = order = np.argsort(depth, kind="stable")
        self.row = row = np.empty(n, dtype=np.int64)
        row[order] = np.arange(n)
        self.offsets = np.searchsorted(depth[order], np.arange(H + 2)).astype(np.int64)
        self.depth_row = depth[order].astype(np.int64)
        parent = np.array(tree.parent_ids)
        self.parent_row = np.where(parent[order] >= 0, row[np.maximum(parent[order], 0)], -1).astype(np.int64)
        self.leaf_row = row[self.leaf_nodes]  # row of each label's leaf
        self.dfs_leaf_row = np.ascontiguousarray(self.leaf_row[dfs])  # row of each depth-first leaf
        # each internal node: the run of its children in the next level (run_len 0 for leaves)
        kids = tree.child_ids
        self.run_start = np.array([row[kids[a][0]] if kids[a] else -1 for a in order], dtype=np.int64)
        self.run_len = np.array([len(kids[a]) for a in order], dtype=np.int64)
        # per level, internal nodes with equal short runs are summed as whole rows (a gather and
        # k - 1 adds), longer runs together by their j-th children (a gather and an add per j)
        none = np.zeros(0, dtype=np.int64)
        #: per depth: runs of at most _SHORT_RUN children (rows, first children, count) grouped by
        #: count, and the longer runs' rows, first children and counts, longest first
        self.levels = [([], none, none, none) for _ in range(H)]
        inner = np.flatnonzero(self.run_len > 0)  # internal rows, level by level
        k = self.run_len[inner]
        short = inner[k <= _SHORT_RUN]
        key = self.depth_row[short] * (_SHORT_RUN + 1) + self.run_len[short]
        short = short[np.argsort(key, kind="stable")]
        key = np.sort(key, kind="stable")
        cuts = np.flatnonzero(np.diff(key)) + 1
        for group in np.split(short, cuts) if len(short) else []:
            r = group[0]
            self.levels[self.depth_row[r]][0].append((group, self.run_start[group], int(self.run_len[r])))
        long = inner[k > _SHORT_RUN]
        for rows in np.split(long, np.flatnonzero(np.diff(self.depth_row[long])) + 1) if len(long) else []:
            # the longer runs of a level, longest first: the j-th children of the first runs in turn
            rows = rows[np.argsort(-self.run_len[rows], kind="stable")]
            self.levels[self.depth_row[rows[0]]] = (self.levels[self.depth_row[rows[0]]][0], rows,
                                                    self.run_start[rows], self.run_len[rows])
        self._cuts, self._agreement, self._agreements = {}, {}, {}
        cells = (H + 1) * K
        #: ``path_rows[k, y]``: the row of label ``y``'s path node at depth ``k`` (its leaf below
        #: the leaf's depth), or None for a tree whose table would exceed :data:`PATH_TABLE_CELLS`
        self.path_rows = self._walk(self.leaf_row, range(H + 1)) if cells <= PATH_TABLE_CELLS else None

    def _walk(self, start: np.ndarray, depths: Sequence[int]) -> np.ndarray:
        """Rows of the path nodes at ``depths`` above the rows ``start``, walked up the parent
        pointers: at depth ``k`` the ancestor at depth ``k``, or ``start`` itself when it lies
        shallower (a leaf repeated below its depth, as the cuts repeat it)."""
        wanted, where = np.unique(np.asarray(list(depths), dtype=int), return_inverse=True)
        out = np.empty((len(wanted), len(start)), dtype=np.int64)
        cur = np.asarray(start, dtype=np.int64)
        j = len(wanted) - 1  # the deepest wanted depth not yet recorded
        for k in range(self.H, wanted[0] - 1 if len(wanted) else self.H, -1):
            if wanted[j] == k:
                out[j] = cur
                j -= 1
            cur = np.where(self.depth_row[cur] == k, self.parent_row[cur], cur)
        return out[where.ravel()]

    def paths(self, y: np.ndarray, depths: Sequence[int] | None = None) -> np.ndarray:
        """Rows (of :meth:`level_sums`) of the nodes at ``depths`` on the paths of labels ``y``:
        ``(len(depths), len(y))``, a label's leaf repeated below its depth (A.2's ``v_k``).

        Parameters
        ----------
        y : ndarray of int
            The label ids.
        depths : sequence of int, optional
            The depths; None: ``0 .. H``.

        Returns
        -------
        ndarray of shape (len(depths), len(y))
            The rows.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> ft = FastTree(t)
        >>> ft.level_nodes[ft.paths(np.array([0, 2]))].tolist()  # y1: r, a, y1; y3: r, y3, y3
        [[0, 0], [1, 4], [2, 4]]
        """
        depths = range(self.H + 1) if depths is None else depths
        if self.path_rows is not None:
            if isinstance(depths, range) and depths.start == 0 and depths.step == 1:  # (a view, then one gather)
                return self.path_rows[:depths.stop].take(y, axis=1)
            return self.path_rows[np.asarray(depths, dtype=int)][:, y]
        return self._walk(self.leaf_row[y], depths)

    def path_nodes(self, y: np.ndarray, depths: Sequence[int] | None = None) -> np.ndarray:
        """Node ids of :meth:`paths` (the path nodes of App. F.4).

        Parameters
        ----------
        y : ndarray of int
            The label ids.
        depths : sequence of int, optional
            The depths; None: ``0 .. H``.

        Returns
        -------
        ndarray of shape (len(depths), len(y))
            The node ids.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> FastTree(t).path_nodes(np.array([1]), [1, 2]).tolist()  # y2's path below the root: a, y2
        [[1], [3]]
        """
        return self.level_nodes[self.paths(y, depths)]

    def cut(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        """The cut at depth ``d``: the nodes at depth ``d`` and the leaves shallower, in pre-order
        (a partition of the leaves; K.2's candidates of top-1 at depth ``d``), as rows of
        :meth:`level_sums`, and a label below each.

        Parameters
        ----------
        d : int
            The depth.

        Returns
        -------
        rows : ndarray of int
            The cut's rows of :meth:`level_sums`, in pre-order.
        labels : ndarray of int
            A label id below each.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> [x.tolist() for x in FastTree(t).cut(1)]  # a (label y1 below it), y3
        [[1, 2], [0, 2]]
        """
        if d not in self._cuts:
            nodes = np.flatnonzero((self.depth == d) | ((self.run_len[self.row] == 0) & (self.depth < d)))
            nodes = nodes[np.argsort(self.lo[nodes], kind="stable")]
            self._cuts[d] = (self.row[nodes], self.dfs[self.lo[nodes]])
        return self._cuts[d]

    def cut_block(self, d: int) -> slice | None:
        """The rows of :meth:`cut` ``(d)`` (K.2's candidates of top-1 at depth ``d``) as one slice of
        :meth:`level_sums` where they are one run of rows in order (the cut is the level ``d``
        itself: no leaf lies above depth ``d``), else None.

        Parameters
        ----------
        d : int
            The depth.

        Returns
        -------
        slice or None
            The rows, or None.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> ft = FastTree(t)
        >>> ft.cut_block(1), ft.cut_block(2)  # level 1: a, y3; the cut at depth 2 holds y3, a leaf above it
        (slice(1, 3, None), None)
        """
        rows = self.cut(d)[0]
        if len(rows) and np.array_equal(rows, np.arange(rows[0], rows[0] + len(rows))):
            return slice(int(rows[0]), int(rows[0]) + len(rows))
        return None

    def agreement(self, d: int) -> np.ndarray | None:
        """``A[y, j]``: the deepest depth ``k <= d`` at which label ``y``'s path and the path of
        :meth:`cut` ``(d)``'s candidate ``j`` (of the label below it) pass through the same node,
        so that the path node ``v_k`` of ``y`` contains candidate ``j`` exactly for ``k <= A[y, j]``
        (paths that part never meet again; K.2's top-1 terms).  One ``K x |cut|`` table of
        small integers, where the tree keeps its path table and the table has at most
        :data:`PATH_TABLE_CELLS` entries; else None.

        Parameters
        ----------
        d : int
            The depth.

        Returns
        -------
        ndarray of shape (K, len(cut)) or None
            The table, or None.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> FastTree(t).agreement(1).tolist()  # candidates a, y3; labels y1, y2, y3
        [[1, 0], [1, 0], [0, 1]]
        """
        cut, below = self.cut(d)
        if self.path_rows is None or self.K * len(cut) > PATH_TABLE_CELLS:
            return None
        if d not in self._agreement:
            same = np.zeros((self.K, len(cut)), dtype=np.int16 if d < 2**15 else np.int64)
            for k in range(1, d + 1):  # the root (depth 0) is on every path; from a parting on, no depth agrees
                row = self.path_rows[k]
                same += row[:, None] == row[below][None, :]
            self._agreement[d] = same
        return self._agreement[d]

    def agreements(self, depths: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray] | None:
        """:meth:`agreement` of each depth in ``depths``, one table after another in one flat array, and
        where each starts (K.2's top-1 terms of several utilities, as the compiled sample pass reads
        them); None where one of the tables is not kept.

        Parameters
        ----------
        depths : tuple of int
            The depths.

        Returns
        -------
        tuple of (ndarray, ndarray) or None
            The tables, flat, and where each starts; or None.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> [x.tolist() for x in FastTree(t).agreements((1, 2))]  # the cut at depth 2: y1, y2, y3
        [[1, 0, 1, 0, 0, 1, 2, 1, 0, 1, 2, 0, 0, 0, 2], [0, 6]]
        """
        if depths not in self._agreements:
            tables = [self.agreement(d) for d in depths]
            self._agreements[depths] = None if any(a is None for a in tables) else (
                np.concatenate([a.ravel() for a in tables]), np.cumsum([0] + [a.size for a in tables[:-1]]))
        return self._agreements[depths]

    def level_sums(self, X: np.ndarray, dfs: bool = False, out: np.ndarray | None = None,
                   times: np.ndarray | None = None) -> np.ndarray:
        """Subtree sums of the rows of ``X`` for every node, by level: ``S[r, i]`` is
        ``sum_{y in Y_a} X[i, y]`` for the node ``a`` of row ``r`` (C.1's ``pi_a``).
        ``X``'s columns are labels, or with ``dfs=True`` leaves in depth-first order; ``out``:
        a C-contiguous ``(nodes, rows of X)`` array to fill (a buffer the caller reuses: memory
        above glibc's mmap threshold is fresh pages at every allocation, whose first touch costs).

        Parameters
        ----------
        X : array-like of shape (m, K)
            The rows.
        dfs : bool, default False
            ``X``'s columns are leaves in depth-first order (else labels).
        out : ndarray of shape (nodes, m), optional
            A C-contiguous array to fill.
        times : array-like of shape (m, K), optional
            The sums are those of ``X * times`` (A.3's ``N_{u,a}`` of ``p_i u(p_i, .)``), the
            products made a few rows at a time: no array of ``X``'s size besides the sums.

        Returns
        -------
        ndarray of shape (nodes, m)
            The sums, a row per node in level order (``out`` where given).

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> FastTree(t).level_sums(np.array([[1e-20, 1e-20, 1.0]])).tolist()  # rows r, a, y3, y1, y2
        [[1.0], [2e-20], [1.0], [1e-20], [1e-20]]
        >>> buffer = np.full((5, 1), np.nan)
        >>> FastTree(t).level_sums(np.array([[0.25, 0.25, 0.5]]), out=buffer) is buffer, buffer.ravel().tolist()
        (True, [1.0, 0.5, 0.5, 0.25, 0.25])
        >>> FastTree(t).level_sums(np.array([[0.25, 0.25, 0.5]]), times=np.array([[1.0, -1.0, 2.0]])).ravel().tolist()
        [1.0, 0.0, 1.0, 0.25, -0.25]
        """
        X = np.asarray(X, dtype=float)
        if times is not None:
            times = np.broadcast_to(times, X.shape)
        if self.label_order is not None and not dfs:
            X = X[:, self.label_order]
            times = None if times is None else times[:, self.label_order]
        S = np.empty((self.n_nodes, X.shape[0])) if out is None else out
        for a in range(0, X.shape[0], _TRANSPOSE_ROWS):  # X's rows a few hundred at a time: each piece read from the
            piece = X[a:a + _TRANSPOSE_ROWS]  # cache, not once per leaf (and multiplied there: no array of X's size)
            if times is not None:
                piece = piece * times[a:a + _TRANSPOSE_ROWS]
            S[self.dfs_leaf_row, a:a + _TRANSPOSE_ROWS] = piece.T
        for d in range(self.H - 1, -1, -1):
            for sel, first, k in self.levels[d][0]:
                acc = S[first]
                for j in range(1, k):
                    acc += S[first + j]
                S[sel] = acc
            _, long, first, counts = self.levels[d]
            if len(long):  # children left to right, as the short runs (np.add.reduceat sums in another order,
                acc = S[first]  # and slowly: python bench/shapes.py's wide shapes)
                for j in range(1, int(counts[0])):
                    m = int(np.count_nonzero(counts > j))  # the runs with a j-th child: the first m
                    acc[:m] += S[first[:m] + j]
                S[long] = acc
        return S

    def subtree_sums(self, X: np.ndarray, nodes: np.ndarray | None = None) -> np.ndarray:
        """``sum_{y in Y_a} X[:, y]`` for every node (columns in pre-order), or for ``nodes`` (C.1).

        Parameters
        ----------
        X : array-like of shape (m, K)
            The rows, columns in the tree's label order.
        nodes : ndarray of int, optional
            The nodes; None: every node.

        Returns
        -------
        ndarray of shape (m, nodes)
            The sums, a column per node (in pre-order, or as ``nodes`` lists them).

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> FastTree(t).subtree_sums(np.array([[1e-20, 1e-20, 1.0]]), np.array([1])).tolist()
        [[2e-20]]
        """
        S = self.level_sums(X)
        return self.node_table(S) if nodes is None else S[self.row[np.asarray(nodes)]].T

    def node_table(self, S: np.ndarray) -> np.ndarray:
        """Level sums ``S`` (:meth:`level_sums`) as one ``(atoms, nodes)`` array, nodes in pre-order: ``pi_a(p)`` (A.3).

        Parameters
        ----------
        S : ndarray of shape (nodes, m)
            Level sums.

        Returns
        -------
        ndarray of shape (m, nodes)
            The sums, a column per node in pre-order (a view).

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> ft = FastTree(t)
        >>> ft.node_table(ft.level_sums(np.array([[0.25, 0.25, 0.5]]))).tolist()
        [[1.0, 0.5, 0.25, 0.25, 0.5]]
        """
        return S[self.row].T

    def needed(self, nodes: np.ndarray) -> np.ndarray:
        """The root, ``nodes`` and their children: every node whose mean a node term uses (C.1).

        Parameters
        ----------
        nodes : iterable of int
            Node ids.

        Returns
        -------
        ndarray of int
            The node ids, sorted.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> FastTree(t).needed(np.array([1])).tolist()  # node 'a': root, a, y1, y2
        [0, 1, 2, 3]
        """
        out = {0}
        for a in nodes:
            out.add(int(a))
            out.update(self.tree.child_ids[int(a)])
        return np.array(sorted(out), dtype=int)


class NodeColumns:
    """C.1's subtree masses: the node table of level sums ``S`` (:meth:`FastTree.node_table`) read a few columns at a
    time: ``table[:, nodes]`` transposes only those rows of ``S`` (a boosting update reads its
    node, its children and a utility's candidates, not every node).

    >>> from huc_ref import LabelTree
    >>> ft = FastTree(LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]}))
    >>> S = ft.level_sums(np.array([[0.25, 0.25, 0.5]]))
    >>> NodeColumns(ft, S)[:, [1, 4]].tolist(), ft.node_table(S)[:, [1, 4]].tolist()
    ([[0.5, 0.5]], [[0.5, 0.5]])
    """

    def __init__(self, ft: FastTree, S: np.ndarray):
        self.ft, self.S = ft, S

    def __getitem__(self, key):
        rows, nodes = key
        return self.S[self.ft.row[np.asarray(nodes)]].T[rows]


class RootFirst:
    """C.1's subtree masses of a flat tree's rows (:meth:`FastTree.level_sums`), made only if something
    reads more than the root's row: ``S[0]``, the row sums, is the children added left to right,
    the numbers ``level_sums`` gives for a run of at most ``_SHORT_RUN`` children.

    >>> from huc_ref import LabelTree
    >>> ft = FastTree(LabelTree.from_children("r", {"r": ["a", "b"]}))
    >>> S = RootFirst(ft, np.array([[0.25, 0.5]]))
    >>> S[0].tolist(), S._S is None, ft.node_table(S).tolist()
    ([0.75], True, [[0.75, 0.25, 0.5]])
    """

    def __init__(self, ft: FastTree, Xd: np.ndarray):
        self.ft, self.Xd, self._S = ft, Xd, None
        self.root = Xd[:, 0].copy()
        for j in range(1, Xd.shape[1]):
            self.root += Xd[:, j]

    def __getitem__(self, key):
        if isinstance(key, int) and key == 0:
            return self.root
        if self._S is None:
            self._S = self.ft.level_sums(self.Xd, dfs=True)
        return self._S[key]


def on_paths(ft: FastTree, y: np.ndarray, depths: int, S: np.ndarray | None = None) -> np.ndarray:
    """Rows (or, given level sums ``S``, values) of the nodes on each label's path at depths
    ``0 .. depths - 1``: ``(depths, n)`` (F.4).

    Parameters
    ----------
    ft : FastTree
        The tree.
    y : ndarray of int
        The label ids.
    depths : int
        The number of depths, from the root.
    S : ndarray of shape (nodes, n), optional
        Level sums of ``n`` rows, label ``y[i]`` on row ``i``.

    Returns
    -------
    ndarray of shape (depths, n)
        The rows of the path nodes, or their values in ``S``.

    Examples
    --------
    >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
    >>> ft = FastTree(t)
    >>> on_paths(ft, np.array([1]), 3, ft.level_sums(np.array([[0.25, 0.25, 0.5]]))).tolist()  # r, a, y2
    [[1.0], [0.5], [0.25]]
    """
    rows = ft.paths(y, range(depths))
    if S is None:
        return rows
    c = len(y)
    return S.ravel().take(rows * c + np.arange(c))
