"""A label tree as arrays (App. F.4): the twin of :mod:`huc_ref.tree` and of the subtree sums
of :mod:`huc_ref.decomposition`."""

from __future__ import annotations

import numpy as np

from ..errors import HUCError
from ..tree import LabelTree

__all__ = ["MAX_TREE_CELLS", "FastTree", "on_paths"]


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
        self.depth = np.array(tree.depth_ids)
        self.H = H = int(self.depth.max())
        if (H + 1) * self.K > MAX_TREE_CELLS:  # the cuts and the path table hold (depth + 1) x K entries
            raise HUCError(f"tree: depth {H} x {self.K} labels needs {(H + 1) * self.K} table entries, more than "
                           f"the fast path's limit of {MAX_TREE_CELLS} (huc_ref.fast.MAX_TREE_CELLS); a tree this "
                           "deep and wide is for the exact engine", kind="too_large")
        lo = np.array(tree.dfs_ranges[0])
        self.lo = lo
        is_leaf = np.array([not k for k in tree.child_ids])
        dfs = np.array(tree.dfs_label_ids)  # depth-first position -> label id
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


def on_paths(ft: FastTree, y: np.ndarray, depths: int, S: list | None = None) -> np.ndarray:
    """Positions (or, given cut sums ``S``, values) of the nodes on each label's path: ``(depths, n)``."""
    pos = ft.path_pos[:depths, y]
    if S is None:
        return pos
    c = len(y)
    return np.stack([S[k].ravel().take(pos[k] * c + np.arange(c)) for k in range(depths)])
