"""Where the fast sample pass keeps its arrays (App. F.4's one pass over the sample).

Nothing here changes a number; it decides how memory is asked for.  Fresh memory costs: the
first touch of each page the allocator hands back to the operating system and takes again is a
fault.  So the sample pass takes its outputs as one block (fewer, larger allocations fault in
fewer fresh pages: numpy asks for 2 MiB pages from 4 MiB on; and glibc, given back a block of
up to 32 MiB, raises its mmap threshold to that size and keeps the memory for the next audit),
and each thread sums its chunks' subtrees in one buffer it reuses (README, "What fresh memory
costs").
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import numpy as np

__all__ = ["SampleBlock", "sample_block", "level_sums_in_place"]


class SampleBlock(NamedTuple):
    """The sample pass's outputs (App. F.4) for ``m`` utilities and ``n`` atoms, views of one ``block``:
    ``score``, ``residual`` and ``error`` (``m x n`` each), then utility ``k``'s terms ``T[k]``
    (``D_k x n``) from ``block[term_at[k]]``.

    Parameters
    ----------
    block : ndarray
        The one allocation all the others view.
    score, residual, error : ndarray of shape (m, n)
        The scores, UC residuals and the scores' error bounds.
    T : list of ndarray
        Each utility's terms, ``D_k x n``.
    term_at : ndarray of int
        Where each utility's terms start in ``block`` (``m + 1`` entries).

    Examples
    --------
    >>> out = sample_block(2, np.array([0, 1]), False)
    >>> out.score.base is out.residual.base, out.T[0].shape
    (True, (1, 2))
    """

    block: np.ndarray
    score: np.ndarray
    residual: np.ndarray
    error: np.ndarray
    T: list
    term_at: np.ndarray


def sample_block(n: int, term_rows: np.ndarray, atoms_side_by_side: bool) -> SampleBlock:
    """One block for the scores, residuals, error bounds (App. F.4) and terms of ``n`` atoms and
    ``len(term_rows) - 1`` utilities, utility ``k``'s ``D_k`` terms from row ``term_rows[k]``
    (a cumulative count from 0): each atom's ``D_k`` terms side by side where
    ``atoms_side_by_side`` (the compiled scan gathers them into rank order), else each depth's
    ``n`` terms (numpy's scan takes a depth at a time).

    Parameters
    ----------
    n : int
        The atoms.
    term_rows : ndarray of int
        Where each utility's rows of terms start, cumulatively from 0.
    atoms_side_by_side : bool
        Whether each atom's terms lie side by side (the compiled scan's layout).

    Returns
    -------
    SampleBlock
        The views of one new block (its numbers unset).

    Examples
    --------
    >>> out = sample_block(3, np.array([0, 2]), True)
    >>> out.score.shape, out.T[0].shape, out.term_at.tolist()
    ((1, 3), (2, 3), [9, 15])
    >>> out.T[0].strides, sample_block(3, np.array([0, 2]), False).T[0].strides  # (bytes to the next depth, atom)
    ((8, 16), (24, 8))
    """
    m = len(term_rows) - 1
    block = np.empty((3 * m + term_rows[-1]) * n)
    score, residual, error = (block[a * m * n:(a + 1) * m * n].reshape(m, n) for a in range(3))
    term_at = (3 * m + np.asarray(term_rows)) * n
    T = [block[a:b].reshape(n, -1).T if atoms_side_by_side else block[a:b].reshape(-1, n)
         for a, b in zip(term_at[:-1], term_at[1:])]
    return SampleBlock(block, score, residual, error, T, term_at)


def level_sums_in_place(ft):
    """:meth:`huc_ref.fast.FastTree.level_sums` of a chunk of rows (leaves in depth-first order) in
    the calling thread's own buffer, kept from chunk to chunk and grown when a chunk needs more:
    the subtree sums of F.4's pass without fresh memory per chunk.

    Parameters
    ----------
    ft : huc_ref.fast.FastTree
        The tree as arrays.

    Returns
    -------
    callable
        ``level_sums(Xd)``: the level sums of the rows ``Xd``, a view of the thread's buffer
        (valid until the thread's next call).

    Examples
    --------
    >>> from huc_ref import LabelTree
    >>> from huc_ref.fast import FastTree
    >>> sums = level_sums_in_place(FastTree(LabelTree.from_children("r", {"r": ["a", "b"]})))
    >>> sums(np.array([[0.25, 0.75]]))[:, 0].tolist()  # the root, then a and b
    [1.0, 0.25, 0.75]
    """
    local = threading.local()

    def level_sums(Xd: np.ndarray) -> np.ndarray:
        size = ft.n_nodes * len(Xd)
        if getattr(local, "S", None) is None or len(local.S) < size:
            local.S = np.empty(size)
        return ft.level_sums(Xd, dfs=True, out=local.S[:size].reshape(ft.n_nodes, len(Xd)))

    return level_sums
