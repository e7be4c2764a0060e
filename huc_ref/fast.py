"""The fast path: the same audit as :mod:`huc_ref.audit`, vectorised in numpy float64.

It mirrors the exact engine's vocabulary: a tree as arrays (subtree sums by one
post-order pass over nodes, vectorised over atoms, as in the exact engine), every utility
family vectorised, per-atom scores and terms, one stable
sort per utility shared by all subgroups and nodes, tie blocks by ``np.add.reduceat``,
prefix sums and running minima and maxima (Algorithm 2) batched over columns.

Floating point enters in the predictions, the utilities' decisions and the sums.  The
engine treats numbers closer than the tolerances in :data:`TOLERANCES` as equal, so exact
ties in the data (frequent with rational inputs) are resolved as the exact engine
resolves them; genuinely different values closer than that are where the exact engine
must be used.  Agreement with the exact engine is property-tested (tests/test_fast.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import numpy as np

from .distribution import FiniteDistribution
from .errors import HUCError
from .tree import LabelTree
from .utilities import Aggregated, BinaryDecision, Decision, PerAtom, Rank, Table, Top1AtDepth, Utility

__all__ = ["TOLERANCES", "FastTree", "utility_values", "audit", "audit_distribution", "boost", "replay"]

#: Tolerances of the fast path, each with its reason (STYLE: kept in one place).
TOLERANCES = {
    # decisions (ranks, argmax of payoffs, decision margins, top-1 masses): values this close
    # are ties, resolved by the exact engine's rule (first in order), because exact ties in
    # rational inputs come out of float arithmetic as differences of a few ulps
    "decision": 1e-12,
    # scores this close share a tie block (Algorithm 2 groups equal scores)
    "score": 1e-12,
    # the smallest probability kept: p_y > 0 always holds exactly (A.2), but a long boosting
    # run can push a leaf below what float64 holds; it is floored here instead of reaching 0/0
    "floor": float(np.finfo(float).tiny),
}


class FastTree:
    """A label tree as arrays: leaf nodes, children, a post-order for subtree sums.

    >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
    >>> ft = FastTree(t)
    >>> ft.subtree_sums(np.array([[0.25, 0.25, 0.5]]))[0].tolist()  # nodes r, a, y1, y2, y3
    [1.0, 0.5, 0.25, 0.25, 0.5]
    """

    def __init__(self, tree: LabelTree):
        self.tree = tree
        self.K = tree.K
        n = len(tree.nodes)
        self.dfs_labels = np.array(tree._dfs_labels)  # depth-first position -> label id
        self.lo = np.array(tree._lo)
        self.hi = np.array(tree._hi)
        self.n_nodes = n
        self.internal = np.array([a for a in range(n) if tree.child_ids[a]], dtype=int)
        # children of the internal nodes, flattened, with group starts for np.add.reduceat
        self.leaf_nodes = np.array(tree.leaf_node_ids, dtype=int)  # node id of each label
        self.leaf_labels = np.arange(tree.K)
        self.post_order = [int(a) for a in reversed(self.internal)]  # children before parents
        kids = [list(tree.child_ids[a]) for a in self.internal]
        self.child_flat = np.array([c for ks in kids for c in ks], dtype=int)
        self.child_starts = np.cumsum([0] + [len(ks) for ks in kids[:-1]]).astype(int)

    def subtree_sums(self, X: np.ndarray, nodes: np.ndarray | None = None) -> np.ndarray:
        """``sum_{y in Y_a} X[:, y]`` for every node (columns in pre-order), or for ``nodes``.

        One post-order pass, each parent the sum of its children (C.1), on the transpose so
        that every row operation is contiguous.  (Differences of one cumulative sum per row
        are faster, but cancel: a subtree of mass 1e-20 beside mass 1 comes out as 0.)

        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> FastTree(t).subtree_sums(np.array([[1e-20, 1e-20, 1.0]]), np.array([1])).tolist()
        [[2e-20]]
        """
        XT = np.asarray(X, dtype=float).T
        S = np.empty((self.n_nodes, XT.shape[1]))
        S[self.leaf_nodes] = XT[self.leaf_labels]
        for a in self.post_order:
            S[a] = S[self.tree.child_ids[a][0]]
            for c in self.tree.child_ids[a][1:]:
                S[a] += S[c]
        return (S if nodes is None else S[nodes]).T

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


def _first_max(values: np.ndarray) -> np.ndarray:
    """Per row, the first column within ``TOLERANCES['decision']`` of the row maximum."""
    top = values.max(axis=1, keepdims=True)
    return np.argmax(values >= top - TOLERANCES["decision"], axis=1)


def utility_values(u: Utility, ft: FastTree, P: np.ndarray, rows: np.ndarray | None = None,
                   pi: np.ndarray | None = None) -> np.ndarray:
    """``u(p_i, .)`` for every row of ``P`` (label order), vectorised per family (SPEC §5).

    >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    >>> from huc_ref.utilities import TopK
    >>> utility_values(TopK(t, 1), FastTree(t), np.array([[0.2, 0.5, 0.3], [0.4, 0.4, 0.2]])).tolist()
    [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    """
    n, K = P.shape
    pi = ft.subtree_sums(P) if pi is None else pi  # subtree masses, shared by every utility
    if isinstance(u, Aggregated):
        base = utility_values(u.base, ft, P, rows, pi)
        N = ft.subtree_sums(P * base)
        b = np.array(u._boundary)
        return N[:, b] / pi[:, b]
    if isinstance(u, PerAtom):
        table = np.array([[float(x) for x in r] for r in u.rows])
        return table[rows] if rows is not None else table
    if isinstance(u, Table):  # also Subtree and class indicators
        return np.broadcast_to(np.array([float(x) for x in u.b]), (n, K))
    if isinstance(u, Rank):  # also TopK: rank by decreasing p, ties by label order
        key = -np.round(P / TOLERANCES["decision"]) * TOLERANCES["decision"]
        order = np.argsort(key, axis=1, kind="stable")
        ranks = np.empty_like(order)
        np.put_along_axis(ranks, order, np.broadcast_to(np.arange(K), (n, K)), axis=1)
        return np.array([float(x) for x in u.theta])[ranks]
    if isinstance(u, Decision):
        A = np.array([[float(x) for x in u.payoffs[a]] for a in u.order])
        return A[_first_max(P @ A.T)]
    if isinstance(u, BinaryDecision):
        d = np.array([float(x) for x in u.d])
        act = P @ d >= -TOLERANCES["decision"]
        return np.where(act[:, None], d, -d)
    if isinstance(u, Top1AtDepth):
        cands = np.array(u._candidates)
        masses = pi[:, cands]
        masks = np.zeros((len(cands), K))
        for k, a in enumerate(cands):
            masks[k, list(ft.tree.label_ids_below(int(a)))] = 1.0
        return masks[_first_max(masses)]
    raise HUCError(f"fast path: no vectorised form for {type(u).__name__}")


def _terms(ft: FastTree, P: np.ndarray, U: np.ndarray, E: np.ndarray, nodes: np.ndarray, pi, star, cols):
    """Scores, UC terms and node terms for every atom (label laws ``E``; samples are one-hot).

    C.2: ``E_eta[g_{u,v}] = sum_j pi*_{v_j} mu_{u,v_j} - pi*_v mu_{u,v}``; with one-hot
    ``eta`` this is the path form ``mu_{u,v_k} - mu_{u,v}`` on the label's path and 0 off it.
    ``pi``, ``star`` are the subtree masses of ``P`` and ``E`` at the nodes ``cols``
    (:meth:`FastTree.needed`), shared by every utility.
    """
    N = ft.subtree_sums(P * U, cols)
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = np.where(pi > 0, N / np.where(pi > 0, pi, 1), 0.0)
    column = {int(a): k for k, a in enumerate(cols)}
    score = mu[:, column[0]]
    residual = (E * U).sum(axis=1) - score
    if not len(nodes):  # no relevant node (a constant utility, or a single-leaf tree)
        return score, residual, np.zeros((P.shape[0], 0))
    weighted = star * mu
    terms = np.empty((P.shape[0], len(nodes)))
    for k, a in enumerate(nodes):
        kids = [column[c] for c in ft.tree.child_ids[int(a)]]
        terms[:, k] = weighted[:, kids].sum(axis=1) - weighted[:, column[int(a)]]
    return score, residual, terms


def _algorithm_2(B: np.ndarray):
    """Algorithm 2 on every column of the block sums ``B`` (m x cols) at once.

    Returns ``sup, r, b, moment`` per column (``b == r`` means the empty interval).
    """
    m, cols = B.shape
    C = np.zeros((m + 1, cols))
    np.cumsum(B, axis=0, out=C[1:])
    run_min = np.minimum.accumulate(C, axis=0)[:-1]  # min_{r < b} C_r for b = 1..m
    run_max = np.maximum.accumulate(C, axis=0)[:-1]
    up, down = C[1:] - run_min, run_max - C[1:]
    value = np.maximum(up, down)
    b = np.argmax(value, axis=0) + 1  # first right end attaining the maximum
    idx = np.arange(cols)
    sup = value[b - 1, idx]
    use_min = up[b - 1, idx] >= down[b - 1, idx]
    target = np.where(use_min, run_min[b - 1, idx], run_max[b - 1, idx])
    r = np.empty(cols, dtype=int)
    for k in range(cols):  # the first earlier prefix attaining the extreme (r < b)
        r[k] = int(np.argmax(C[: b[k], k] == target[k]))
    moment = C[b, idx] - C[r, idx]
    empty = sup <= 0
    r[empty], b[empty], sup[empty], moment[empty] = 0, 0, 0.0, 0.0
    return sup, r, b, moment


class _Rows:
    """Every sup of one utility at predictions ``P`` (the fast twin of ``audit.UtilityRows``)."""

    def __init__(self, ft, P, E, weights, u, masses, star, rows=None, with_nodes=True):
        tree = ft.tree
        self.nodes = np.array([tree.id(v) for v in u.relevant_nodes] if with_nodes else [], dtype=int)
        self.U = utility_values(u, ft, P, rows, masses)
        cols = ft.needed(self.nodes)
        self.score, residual, node_terms = _terms(ft, P, self.U, E, self.nodes, masses[:, cols], star[:, cols], cols)
        self.order = np.argsort(self.score, kind="stable")
        s = self.score[self.order]
        self.starts = np.concatenate([[0], np.flatnonzero(np.diff(s) > TOLERANCES["score"]) + 1])
        self.block_scores = s[self.starts]
        self.block_last = np.concatenate([self.starts[1:] - 1, [len(s) - 1]])
        self.sorted_scores = s
        terms = np.column_stack([residual, node_terms])[self.order]
        self.best = []  # per subgroup: (sup, r, b, moment) arrays over columns [UC, nodes...]
        for k in range(weights.shape[1]):
            B = np.add.reduceat(terms * weights[self.order, k][:, None], self.starts, axis=0)
            self.best.append(_algorithm_2(B))

    def interval(self, r, b):
        """The witness ``[s_(r+1), s_(b)]`` (None when empty)."""
        return None if b == r else [float(self.block_scores[r]), float(self.sorted_scores[self.block_last[b - 1]])]

    def members(self, r, b) -> np.ndarray:
        """The atoms (original indices) whose scores lie in blocks ``r .. b-1``."""
        if b == r:
            return np.zeros(0, dtype=int)
        return self.order[self.starts[r]:self.block_last[b - 1] + 1]


def _run(ft, P, E, weights, subgroups, utilities, rows):
    """The candidate rows in the order of the exact engine (subgroups, utilities, nodes)."""
    tree = ft.tree
    masses, star = ft.subtree_sums(P), ft.subtree_sums(E)  # pi_a(p) and pi*_a, shared by every utility
    tables = {name: _Rows(ft, P, E, weights, u, masses, star, rows) for name, u in utilities.items()}
    relevant = {name: list(u.relevant_nodes) for name, u in utilities.items()}
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
    return {"format": "huc-result/1", "engine": "fast", "uc": {"value": uc.pop("value"), **uc},
            "huc": {"value": huc.pop("value"), **huc}, "relevant_nodes": relevant, "candidates": candidates}


def audit_distribution(dist: FiniteDistribution, utilities: Mapping[str, Utility], case_id=None) -> dict:
    """The ``huc-result/1`` document of a finite distribution, computed in float64.

    >>> from huc_ref import Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> r = audit_distribution(d, {"u": Table(t, [-1, 1, 1, 1])})
    >>> r["uc"]["value"], r["huc"]["value"], r["huc"]["node"], r["huc"]["interval"]
    (0.0, 0.25, 'v0', [0.5, 0.5])
    """
    ft = FastTree(dist.tree)
    P = np.array([[float(x) for x in a.p] for a in dist.atoms])
    E = np.array([[float(x) for x in a.label_law(ft.K)] for a in dist.atoms])
    weights = np.array([[float(a.weight * c) for c in a.c] for a in dist.atoms])
    result = _run(ft, P, E, weights, list(dist.subgroups), utilities, np.arange(dist.n))
    result["case"] = case_id
    return {"format": result.pop("format"), "case": result.pop("case"), **result}


def audit(y_true, y_prob, tree: LabelTree, utilities: Mapping[str, Utility], *, subgroups=None,
          sample_weight=None) -> dict:
    """UC and HUC of a labelled sample, from array-likes (scikit-learn's argument names).

    ``y_true``: labels as names or label ids; ``y_prob``: ``(n, K)`` probabilities in label
    order; ``subgroups``: a mapping name -> ``n`` values in [-1, 1] (default: everyone);
    ``sample_weight``: nonnegative weights (normalised to sum 1).

    >>> t = LabelTree.from_children("r", {"r": ["neg", "pos"]})
    >>> from huc_ref import class_indicator
    >>> r = audit(["pos", "neg"], [[0.5, 0.5], [0.5, 0.5]], t, {"u": class_indicator(t, "pos")})
    >>> r["uc"]["value"]  # the tie case of App. F.3: one block, residuals +1/2 and -1/2
    0.0
    """
    P = np.asarray(y_prob, dtype=float)
    if P.ndim != 2 or P.shape[1] != tree.K:
        raise HUCError(f"y_prob: expected {tree.K} columns (one per label), got shape {P.shape}")
    n = P.shape[0]
    if not np.all(np.isfinite(P)) or np.any(P < 0):
        raise HUCError("y_prob: entries must be finite and nonnegative")
    labels = list(y_true)
    if len(labels) != n:
        raise HUCError(f"y_true: has {len(labels)} labels, y_prob has {n} rows")
    ids = np.empty(n, dtype=int)
    for i, y in enumerate(labels):
        if isinstance(y, str):
            ids[i] = tree.label_index(y)
        elif isinstance(y, (int, np.integer)) and 0 <= int(y) < tree.K:
            ids[i] = int(y)
        else:
            raise HUCError(f"y_true[{i}]: {y!r} is not a label name or id")
    E = np.zeros((n, tree.K))
    E[np.arange(n), ids] = 1.0
    groups = dict(subgroups) if subgroups is not None else {"all": np.ones(n)}
    C = np.column_stack([np.asarray(v, dtype=float) for v in groups.values()])
    if C.shape[0] != n or np.any(np.abs(C) > 1):
        raise HUCError("subgroups: each needs n values in [-1, 1]")
    w = np.full(n, 1.0 / n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if w.shape != (n,) or np.any(w < 0) or w.sum() <= 0:
        raise HUCError("sample_weight: expected n nonnegative weights with a positive sum")
    w = w / w.sum()
    return _run(FastTree(tree), P, E, w[:, None] * C, list(groups), utilities, np.arange(n))


def boost(dist: FiniteDistribution, utilities: Mapping[str, Utility], *, method: str = "huc", epsilon=0.01,
          max_updates: int = 1000, step="adaptive", select: str = "greedy") -> dict:
    """HUC-Boost or UC-Boost in float64 (the fast twin of :func:`huc_ref.boost.boost`).

    The same selection (greedy or passes), steps (adaptive or a fixed magnitude), stopping
    rule and outputs, vectorised over atoms; uncertified.  The state is kept as logit
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
    from .boost import boost_options

    def rational(x):  # the fast path takes floats: read them as their exact binary values
        if isinstance(x, float):
            if not np.isfinite(x):
                raise HUCError(f"{x!r} is not a finite number")
            return Fraction(x)
        return x
    eps, fixed = boost_options(dist, dict(utilities), method=method, select=select, epsilon=rational(epsilon),
                               max_updates=max_updates, step=step if step == "adaptive" else rational(step))
    eps, fixed = float(eps), None if fixed is None else float(fixed)
    ft = FastTree(dist.tree)
    tree = dist.tree
    P0 = np.array([[float(x) for x in a.p] for a in dist.atoms])
    E = np.array([[float(x) for x in a.label_law(ft.K)] for a in dist.atoms])
    w = np.array([float(a.weight) for a in dist.atoms])
    C = np.array([[float(c) for c in a.c] for a in dist.atoms])
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

    def choose(P, node=None):
        masses, star = ft.subtree_sums(P), ft.subtree_sums(E)
        best = None
        tables = {name: _Rows(ft, P, E, W, u, masses, star, with_nodes=method == "huc")
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
    nodes_cycle = branching if method == "huc" and select == "passes" else [None]
    position, quiet = 0, 0
    while True:
        node = nodes_cycle[position] if method == "huc" and select == "passes" and branching else None
        best, masses, star = choose(P, node)
        if best is None or best[0] <= eps:
            if method == "huc" and select == "passes" and branching:
                quiet += 1
                position = (position + 1) % len(nodes_cycle)
                if quiet < len(nodes_cycle):
                    continue
            result["stopped"] = "tolerance"
            break
        quiet = 0
        if len(result["updates"]) >= max_updates:
            result["stopped"] = "cap"
            break
        sup, k, name, a, r, b, moment, table = best
        members = table.members(r, b)
        members = members[C[members, k] != 0]
        c = C[members, k][:, None]
        if method == "huc":
            kids = list(tree.child_ids[a])
            N = ft.subtree_sums(P[members] * table.U[members], np.array([a] + kids))
            pi = masses[members][:, [a] + kids]
            mu = N / pi
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
    final = _run(ft, P, E, W, list(dist.subgroups), utilities, np.arange(n))
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
    P = np.array([[float(x) for x in a.p] for a in dist.atoms])
    C = np.array([[float(c) for c in a.c] for a in dist.atoms])
    yield 0, P
    for t, (k, name, a, interval, alpha) in enumerate(result["steps"], start=1):
        u = utilities[name]
        masses = ft.subtree_sums(P)
        U = utility_values(u, ft, P, None, masses)
        score = (P * U).sum(axis=1)
        lo, hi = interval
        members = np.flatnonzero((score >= lo - TOLERANCES["score"]) & (score <= hi + TOLERANCES["score"])
                                 & (C[:, k] != 0))
        c = C[members, k][:, None]
        P = P.copy()
        if method == "huc":
            kids = list(tree.child_ids[a])
            cols = np.array([a] + kids)
            N = ft.subtree_sums(P[members] * U[members], cols)
            mu = N / masses[members][:, cols]
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
