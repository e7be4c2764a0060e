"""Claims about the four-leaf tree, the worked examples, Prop. 3.3 and App. G."""

from __future__ import annotations

import random
from fractions import Fraction

import sympy

from huc_ref import (
    Aggregated,
    FiniteDistribution,
    Interval,
    Subtree,
    Table,
    TreeDecomposition,
    atom_terms,
    audit,
    class_indicator,
    interval_moment,
)

from .core import (
    EXACT_EXAMPLE,
    EXHAUSTIVE,
    FOUR,
    PROVED,
    SAMPLED,
    CheckFailed,
    Evidence,
    claim,
    expect,
    random_rational_case,
    rational_field,
    shape_tree,
    shuffled_labels,
    tree_shapes,
)
from .paper import Paper

F = Fraction
EVERYTHING = Interval()


def _population(rows):
    return FiniteDistribution(FOUR, [{"weight": w, "p": p, "eta": e} for w, p, e in rows])


@claim("Sec. 2.2 eq. (5), App. B.4", "Four-leaf decomposition: D_full = D_top + D_L + D_R with "
       "D_top = (q*_{0,R} - q_{0,R})(ubar_{0,R} - ubar_{0,L}), "
       "D_t = q*_{0,t}(q*_{t,R} - q_{t,R})(ubar_{t,R} - ubar_{t,L})")
def check_section_2_2_four_leaf_decomposition():
    fld, (p, u, e) = rational_field(("p", 4), ("u", 4), ("e", 4))
    total = sum(e, fld.zero)
    eta = [x / total for x in e]  # a law: eta sums to 1
    ref, star = Paper(FOUR, p, u), Paper(FOUR, eta)
    ubar = {a: ref.mu(a) for a in ("vL", "vR", "y1", "y2", "y3", "y4")}
    q0R, qLR, qRR = ref.q("v0")[1], ref.q("vL")[1], ref.q("vR")[1]
    s0R, sLR, sRR = star.q("v0")[1], star.q("vL")[1], star.q("vR")[1]
    d_top = (s0R - q0R) * (ubar["vR"] - ubar["vL"])
    d_left = (1 - s0R) * (sLR - qLR) * (ubar["y2"] - ubar["y1"])
    d_right = s0R * (sRR - qRR) * (ubar["y4"] - ubar["y3"])
    d_full = sum((eta[y] * u[y] for y in range(4)), fld.zero) - ref.mu("v0")
    expect(d_full == d_top + d_left + d_right, "D_full != D_top + D_L + D_R")
    dec = TreeDecomposition(FOUR, p, u)
    masses = [star.pi(a) for a in FOUR.nodes]
    for node, d_t in (("v0", d_top), ("vL", d_left), ("vR", d_right)):
        expect(dec.expected_contribution(node, masses) == d_t, f"huc_ref's node term at {node} differs from D_t")
    # B.1-B.2: at a binary node, g = q_{v,L}(mu_R - mu_L) below the right child, -q_{v,R}(mu_R - mu_L) on the left.
    shapes = [s for s in tree_shapes(5) if all(len(c) in (0, 2) for c in _subshapes(s))]
    for shape in shapes:
        tree = shape_tree(shape)
        K = tree.K
        fl, (pp, uu) = rational_field(("p", K), ("u", K))
        d, r = TreeDecomposition(tree, pp, uu), Paper(tree, pp, uu)
        for v in tree.internal_nodes:
            left, right = tree.children(v)
            gap = r.mu(right) - r.mu(left)
            for y in range(K):
                want = (r.q(v)[0] * gap if r.J(right, y) else -r.q(v)[1] * gap if r.J(left, y) else fl.zero)
                expect(d.g(v, y) == want, f"B.2 fails at {v}")
    return Evidence(f"{PROVED}; B.1-B.3 {EXHAUSTIVE}", "p, u, eta free symbols on the four-leaf tree; binary-node "
                    f"form on all {len(shapes)} binary shapes up to 5 leaves",
                    scope=dict(symbolic=["eq. (5)"], trees="four-leaf; binary shapes up to 5 leaves",
                               shapes=len(shapes), max_leaves=5))


def _subshapes(shape):
    out, stack = [], [shape]
    while stack:
        s = stack.pop()
        out.append(s)
        stack.extend(s)
    return out


@claim("App. D.1", "Cancellation: p uniform, u = (-1,1,1,1), eta = (1/4,0,3/8,3/8) gives D_top = 1/4, D_L = -1/4, "
       "D_R = 0, UC = 0 and HUC = 1/4")
def check_appendix_d1_cancellation():
    d = _population([(1, ["1/4"] * 4, ["1/4", 0, "3/8", "3/8"])])
    u = Table(FOUR, [-1, 1, 1, 1])
    moments = [interval_moment(d, u, "all", EVERYTHING, v) for v in ("v0", "vL", "vR")]
    expect(moments == [F(1, 4), F(-1, 4), 0], f"node moments {moments}")
    res = audit(d, {"u": u})
    expect((res.uc.sup, res.huc.sup) == (0, F(1, 4)), f"UC, HUC = {res.uc.sup}, {res.huc.sup}")
    return Evidence(EXACT_EXAMPLE, "UC = 0, HUC = 1/4, (D_top, D_L, D_R) = (1/4, -1/4, 0)",
                    scope=dict(example="App. D.1"))


@claim("App. D.2", "Marginal calibration: zero class-wise and subtree-indicator UC, yet conditional branch "
       "probabilities 3/4 and 1/4 against 1/2, and residuals +1/8, -1/8 of u_E")
def check_appendix_d2_marginal_calibration():
    d = _population([("1/2", ["1/4", "1/4", "2/5", "1/10"], ["3/8", "1/8", "2/5", "1/10"]),
                     ("1/2", ["1/4", "1/4", "1/10", "2/5"], ["1/8", "3/8", "1/10", "2/5"])])
    us = {f"e_{y}": class_indicator(FOUR, y) for y in FOUR.labels}
    us |= {"J_D": Subtree(FOUR, "vL"), "J_E": Subtree(FOUR, "y1")}
    expect(audit(d, us).uc.sup == 0, "class-wise or subtree UC is not 0")
    branch = [a.eta[0] / (a.eta[0] + a.eta[1]) for a in d.atoms]
    expect(branch == [F(3, 4), F(1, 4)], f"conditional branch probabilities {branch}")
    expect(all(TreeDecomposition(FOUR, a.p, [0] * 4).q("vL")[0] == F(1, 2) for a in d.atoms), "predicted branch")
    residuals = [t.residual for t in atom_terms(d, us["J_E"])]
    expect(residuals == [F(1, 8), F(-1, 8)], f"residuals {residuals}")
    return Evidence(EXACT_EXAMPLE, "UC = 0 for e_y1..e_y4, J_D, J_E; q* = 3/4, 1/4 vs q = 1/2; residuals +-1/8",
                    scope=dict(example="App. D.2"))


@claim("App. D.3", "Branch error without utility impact: eta = (1/20,9/20,1/5,3/10), u = 1{y = y4} gives "
       "q*_{L,R} = 9/10 but D_top = 0, D_L = 0, D_R = 1/20")
def check_appendix_d3_branch_error_without_impact():
    d = _population([(1, ["1/4"] * 4, ["1/20", "9/20", "1/5", "3/10"])])
    u = Table(FOUR, [0, 0, 0, 1])
    eta = d.atoms[0].eta
    expect(eta[1] / (eta[0] + eta[1]) == F(9, 10), "q*_{L,R} != 9/10")
    moments = [interval_moment(d, u, "all", EVERYTHING, v) for v in ("v0", "vL", "vR")]
    expect(moments == [0, 0, F(1, 20)], f"node moments {moments}")
    expect("vL" not in u.relevant_nodes, "vL should not be relevant to u = 1{y = y4}")
    return Evidence(EXACT_EXAMPLE, "(D_top, D_L, D_R) = (0, 0, 1/20); vL not in V_T(u)",
                    scope=dict(example="App. D.3"))


@claim("App. D.4", "Branch-score cells: both groups share the cell mu_u = 1/4 with moments 1/32, 0, -1/40, "
       "while the root and right-node branch-score cells select disjoint groups")
def check_appendix_d4_branch_score_cells():
    d = _population([("1/2", ["1/2", "1/10", "3/20", "1/4"], ["5/12", "1/12", "3/16", "5/16"]),
                     ("1/2", ["1/5", "3/10", "1/4", "1/4"], ["1/5", "3/10", "3/10", "1/5"])])
    u = Table(FOUR, [0, 0, 0, 1])
    cell = Interval.closed(F(1, 4), F(1, 4))
    expect([t.score for t in atom_terms(d, u)] == [F(1, 4), F(1, 4)], "the two groups are not in one cell")
    moments = [interval_moment(d, u, "all", cell, v) for v in ("v0", "vL", "vR")]
    expect(moments == [F(1, 32), 0, F(-1, 40)], f"cell moments {moments}")
    qa, qb = (TreeDecomposition(FOUR, a.p, [0] * 4) for a in d.atoms)
    expect((qa.q("v0")[1], qb.q("v0")[1], qa.q("vR")[1], qb.q("vR")[1]) == (F(2, 5), F(1, 2), F(5, 8), F(1, 2)),
           "branch scores differ from the paper's")
    root_cell, right_cell = Interval.closed(F(3, 8), F(7, 16)), Interval.closed(F(7, 16), F(9, 16))
    expect((qa.q("v0")[1] in root_cell, qb.q("v0")[1] in root_cell) == (True, False), "root cell")
    expect((qa.q("vR")[1] in right_cell, qb.q("vR")[1] in right_cell) == (False, True), "right-node cell")
    return Evidence(EXACT_EXAMPLE, "cell moments (1/32, 0, -1/40); I_0 selects group a only, I_R group b only",
                    scope=dict(example="App. D.4"))


@claim("Prop. 3.3, App. D.1", "M_{c,u,I} = sum_v Gamma_{c,u,I,v}, hence UC(f; C, {u}) <= |V_T(u)| HUC(f; C, {u}); "
       "the bound is attained, and UC = 0 < HUC is possible")
def check_proposition_3_3():
    rng = random.Random(33)
    points = 0
    for shape in tree_shapes(5):
        tree = shuffled_labels(shape_tree(shape), rng)
        for _ in range(2):
            dist, us = random_rational_case(rng, tree, n_atoms=4)
            res = audit(dist, us)
            for name, u in us.items():
                scores = sorted({t.score for t in atom_terms(dist, u, ())})
                for i, lo in enumerate(scores):
                    for hi in scores[i:]:
                        interval = Interval.closed(lo, hi)
                        for c in dist.subgroups:
                            total = sum((interval_moment(dist, u, c, interval, v) for v in tree.internal_nodes), F(0))
                            expect(interval_moment(dist, u, c, interval) == total, "M != sum_v Gamma")
                            points += 1
                uc = max(r.sup for r in res.candidates if r.utility == name and r.node is None)
                huc = max((r.sup for r in res.candidates if r.utility == name and r.node), default=F(0))
                expect(uc <= len(u.relevant_nodes) * huc, "UC > |V_T(u)| HUC")
    tight = audit(_population([(1, ["1/4"] * 4, [0, "1/4", "3/8", "3/8"])]), {"u": Table(FOUR, [-1, 1, 1, 1])})
    expect(tight.uc.sup == 2 * tight.huc.sup == F(1, 2), "the tight instance is not tight")
    d1 = audit(_population([(1, ["1/4"] * 4, ["1/4", 0, "3/8", "3/8"])]), {"u": Table(FOUR, [-1, 1, 1, 1])})
    expect(d1.uc.sup == 0 < d1.huc.sup, "no cancellation instance")
    return Evidence(SAMPLED, f"M = sum_v Gamma at {points} exact (c, u, I) on random populations over all shapes "
                    "up to 5 leaves (labels shuffled); tight at eta = (0,1/4,3/8,3/8): UC = 1/2 = 2 HUC; "
                    "D.1: UC = 0 < HUC",
                    scope=dict(points=points, shapes=len(tree_shapes(5)), max_leaves=5, labels_shuffled=True))


def _g_populations(rng, max_leaves, n_atoms):
    """Per tree shape up to ``max_leaves`` (labels shuffled): the tree, a random exact population with
    one table utility ``u0``, and its exact audit (App. G's sampled checks)."""
    for shape in tree_shapes(max_leaves):
        tree = shuffled_labels(shape_tree(shape), rng)
        dist, us = random_rational_case(rng, tree, n_atoms=n_atoms, n_utilities=1)
        yield tree, dist, us, audit(dist, us)


def _ancestor_closed_sets(tree):
    sets = [[]]
    for v in tree.internal_nodes:  # pre-order: parents first
        parent = tree.parent(v)
        sets += [s + [v] for s in sets if parent is None or parent in s]
    return sets


@claim("App. G (Lemma G.1, eq. 142-154)", "Aggregated utilities: u_S(p,y) - mu_u(p) = sum_{v in S} g_{u,v}(p,y), "
       "mu_{u_S} = mu_u, refining S by one node adds exactly its term, UC(u_S) <= |S ∩ V_T(u)| HUC(u)")
def check_appendix_g_aggregated_utilities():
    shapes = tree_shapes(5, unary_up_to=3)
    n_sets = 0
    for shape in shapes:
        tree = shape_tree(shape)
        K = tree.K
        fld, (p, u) = rational_field(("p", K), ("u", K))
        dec = TreeDecomposition(tree, p, u)
        probe = Table(tree, [0] * K)
        for S in _ancestor_closed_sets(tree):
            n_sets += 1
            agg = Aggregated(probe, S)
            values = []
            for y in range(K):
                path = tree.path(tree.labels[y])
                k = 0
                while k < len(path) - 1 and path[k] in S:  # b_S(y): first node on the path not in S
                    k += 1
                expect(agg.boundary(tree.labels[y]) == path[k], "huc_ref's b_S(y) differs from the definition")
                values.append(dec.mu(path[k]))
                partial = sum((dec.g(v, y) for v in S), fld.zero)
                expect(values[y] - dec.mu() == partial, f"partial-sum identity fails for S = {S}")
            expect(sum((p[y] * values[y] for y in range(K)), fld.zero) / sum(p, fld.zero) == dec.mu(),
                   "mu_(u_S) != mu_u")
            for v in tree.internal_nodes:
                if v not in S and (tree.parent(v) is None or tree.parent(v) in S):
                    refined = Aggregated(probe, S + [v])
                    for y in range(K):
                        gained = dec.mu(refined.boundary(tree.labels[y])) - values[y]
                        expect(gained == dec.g(v, y), "refinement does not add exactly g_v")
    points = 0
    for tree, dist, us, res_base in _g_populations(random.Random(7), 5, 5):
        base = us["u0"]
        for S in _ancestor_closed_sets(tree):
            agg = Aggregated(base, S)
            # huc_ref's u_S against its definition, u_S(p, y) = mu_{u, b_S(y)}(p) (eq. 142), at each atom's p,
            # and V_T(u_S) = S ∩ V_T(u) (Lemma G.1: g_{u_S, v} = g_{u, v} on S, 0 elsewhere)
            for atom in dist.atoms:
                dec = TreeDecomposition(tree, atom.p, base.values(atom.p))
                expect(list(agg.values(atom.p)) == [dec.mu(agg.boundary(y)) for y in tree.labels],
                       f"huc_ref's u_S differs from mu_(u, b_S(y)) for S = {S}")
            expect(set(agg.relevant_nodes) == set(S) & set(base.relevant_nodes),
                   f"huc_ref's V_T(u_S) is not S ∩ V_T(u) for S = {S}")
            uc_s = audit(dist, {"uS": agg}).uc.sup
            bound = len(set(S) & set(base.relevant_nodes)) * res_base.huc.sup
            expect(uc_s <= bound, f"UC(u_S) > |S ∩ V_T(u)| HUC(u) for S = {S}")
            points += 1
    return Evidence(f"{EXHAUSTIVE}: {PROVED}; bound {SAMPLED}", f"identities for every ancestor-closed S ({n_sets}) "
                    f"on all {len(shapes)} shapes up to 5 leaves; the UC bound on {points} random populations",
                    scope=dict(symbolic=["Lemma G.1"], sets=n_sets, shapes=len(shapes), max_leaves=5, unary_up_to=3,
                               points=points, labels_shuffled="the sampled part"))


def _literal_values(kind, tree, params, p):
    """Each family's ``u(p, .)`` from its definition, written out here (A.1, J.1/K.3, K.2), not
    taken from huc_ref: ranks by decreasing ``p`` with ties to the earlier label, decisions
    as the first maximiser in the stated order, top-1 at depth ``l`` over the depth-``l`` cut."""
    K = len(p)
    below = {v: {tree.label_index(y) for y in tree.leaves_below(v)} for v in tree.nodes}
    if kind == "table":
        return list(params)
    if kind == "subtree":
        return [F(1) if y in below[params] else F(0) for y in range(K)]
    if kind in ("rank", "top_k"):
        order = sorted(range(K), key=lambda y: (-p[y], y))
        rank = {y: r for r, y in enumerate(order)}
        theta = params if kind == "rank" else [F(1) if r < params else F(0) for r in range(K)]
        return [theta[rank[y]] for y in range(K)]
    if kind == "decision":
        payoffs, order = params
        best = max(order, key=lambda a: (sum(pz * x for pz, x in zip(p, payoffs[a])), -order.index(a)))
        return list(payoffs[best])
    if kind == "binary_decision":
        S, D, tau = params
        d = [(F(1) if y in S else F(0)) - (tau if y in D else F(0)) for y in range(K)]
        act = 1 if sum(py * dy for py, dy in zip(p, d)) >= 0 else 0
        return [(2 * act - 1) * dy for dy in d]
    depth = params  # top1_at_depth: the nodes at that depth and the shallower leaves, in pre-order
    cut = [v for v in tree.nodes if tree.depth(v) == depth or (tree.is_leaf(v) and tree.depth(v) < depth)]
    mass = {v: sum((p[y] for y in below[v]), F(0)) for v in cut}
    chosen = max(cut, key=lambda v: (mass[v], -tree.nodes.index(v)))
    return [F(1) if y in below[chosen] else F(0) for y in range(K)]


@claim("A.1, J.1 / K.3, K.2 (the utility families); Prop. 3.3", "Every utility family's values are its definition "
       "(linear, subtree, rank, top-k, decision-induced, binary decision, top-1 at depth), and for each the UC "
       "moment is the sum of the node moments with UC <= |V_T(u)| HUC")
def check_utility_families():
    """Each family of huc_ref.utilities against its literal definition at exact points with ties, on trees
    of every shape up to 4 leaves with shuffled label orders; then each family through the audit (M = sum_v
    Gamma_v on every interval, Prop. 3.3's bound)."""
    from huc_ref import BinaryDecision, Decision, Rank, Top1AtDepth, TopK
    rng = random.Random(21)
    values = points = 0
    families = set()
    for shape in tree_shapes(4):
        tree = shuffled_labels(shape_tree(shape), rng)
        K = tree.K
        vec = [F(rng.randint(-4, 4), 4) for _ in range(K)]
        pay = {"a": [F(rng.randint(-2, 2), 2) for _ in range(K)], "b": [F(rng.randint(-2, 2), 2) for _ in range(K)]}
        S = {rng.randrange(K)}
        D = S | {rng.randrange(K)}
        cases = [("table", vec, Table(tree, vec)), ("subtree", tree.nodes[-1], Subtree(tree, tree.nodes[-1])),
                 ("rank", vec, Rank(tree, vec)), ("top_k", 1 + rng.randrange(K), None),
                 ("decision", (pay, ["b", "a"]), Decision(tree, pay, ["b", "a"])),
                 ("binary_decision", (S, D, F(1, 2)),
                  BinaryDecision(tree, [tree.labels[y] for y in S], [tree.labels[y] for y in D], F(1, 2))),
                 ("top1_at_depth", 1, Top1AtDepth(tree, 1)), ("top1_at_depth", 2, Top1AtDepth(tree, 2))]
        cases[3] = ("top_k", cases[3][1], TopK(tree, cases[3][1]))
        for _ in range(3):
            raw = [rng.choice([1, 1, 2, 3]) for _ in range(K)]  # repeated entries: ties in every decision
            p = [F(x, sum(raw)) for x in raw]
            for kind, params, u in cases:
                want = _literal_values(kind, tree, params, p)
                expect(list(u.values(p)) == want, f"{kind} on {tree.to_json()} at p = {p}: {u.values(p)} != {want}")
                values += 1
                families.add(kind)
        dist, _ = random_rational_case(rng, tree, 4)
        us = {f"{k}{j}": u for j, (k, _, u) in enumerate(cases)}
        res = audit(dist, us)
        for name, u in us.items():
            scores = sorted({t.score for t in atom_terms(dist, u, ())})
            for i, lo in enumerate(scores):
                for hi in scores[i:]:
                    for c in dist.subgroups:
                        total = sum((interval_moment(dist, u, c, Interval.closed(lo, hi), v)
                                     for v in tree.internal_nodes), F(0))
                        expect(interval_moment(dist, u, c, Interval.closed(lo, hi)) == total,
                               f"{name}: M != sum_v Gamma_v")
                        points += 1
            uc = max(r.sup for r in res.candidates if r.utility == name and r.node is None)
            huc = max((r.sup for r in res.candidates if r.utility == name and r.node), default=F(0))
            expect(uc <= len(u.relevant_nodes) * huc, f"{name}: UC > |V_T(u)| HUC")
    return Evidence(SAMPLED, f"{len(families)} families: {values} value vectors against their definitions (ties in "
                             f"every decision), M = sum_v Gamma_v at {points} exact (c, u, I); every shape of 1-4 "
                             "leaves, labels shuffled",
                    scope=dict(families=sorted(families), points=values + points, max_leaves=4, labels_shuffled=True))


class _Graph:
    """A directed graph with the two methods :meth:`LabelTree.from_networkx` reads (networkx is
    optional, so the check carries its own)."""

    def __init__(self, edges):
        self.edges = edges

    def successors(self, n):
        return iter(self.edges[n])

    def in_degree(self):
        return [(n, sum(n in kids for kids in self.edges.values())) for n in self.edges]


def _refusals():
    """Objects that are not the paper's, each with the rule it breaks (Sec. 2.1, 3.1; spec §1)."""
    from huc_ref import LabelTree, Top1AtDepth
    kids = {"r": ["a", "b"]}
    law = {"weight": 1, "p": [F(1, 2)] * 2, "eta": [F(1, 2)] * 2}
    two = LabelTree.from_children("r", kids)
    yield "a root named by a non-empty string", lambda: LabelTree.from_children("", kids)
    yield "a root named by a string", lambda: LabelTree.from_children(5, {5: ["a", "b"]})
    yield "children named by non-empty strings", lambda: LabelTree.from_children("r", {"r": ["a", ""]})
    yield "children named by strings", lambda: LabelTree.from_children("r", {"r": ["a", 7]})
    yield "a node named by a string", lambda: LabelTree.from_children("r", {"r": ["a", "b"], 3: ["c", "d"]})
    yield "no node below itself (a cycle)", lambda: LabelTree.from_children("r", {"r": ["a", "r"]})
    yield "one parent per node", lambda: LabelTree.from_children("r", {"r": ["a", "b"], "a": ["b", "c"]})
    yield "the labels are the leaves (a label is no parent)", lambda: LabelTree.from_paths(["a", "a/x", "b"])
    yield "one root", lambda: LabelTree.from_networkx(_Graph({"r": ["a"], "s": ["b"], "a": [], "b": []}))
    yield "the labels are the leaves, each once", lambda: LabelTree.from_paths(["a", "b"], labels=["a", "a"])
    yield "the labels' order is a list of them", lambda: LabelTree.from_paths(["a", "b"], labels="ab")
    yield "a sample's label path is a list of names", lambda: LabelTree.from_label_paths([["a", "x"], "b"])
    yield "a depth is a non-negative integer", lambda: Top1AtDepth(two, -1)
    yield "a depth is an integer", lambda: Top1AtDepth(two, True)
    yield "p in the simplex (sums to 1)", lambda: FiniteDistribution(two, [dict(law, p=[F(1, 2), F(1, 3)])])
    yield "p in the simplex (p_y >= 0)", lambda: FiniteDistribution(two, [dict(law, p=[F(3, 2), F(-1, 2)])])
    yield "the label law in the simplex", lambda: FiniteDistribution(two, [dict(law, eta=[F(1), F(1)])])
    yield "the atoms' weights sum to 1", lambda: FiniteDistribution(two, [dict(law, weight=F(1, 2))])
    from huc_ref import Aggregated, Table
    four = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    yield "App. G: S is ancestor-closed", lambda: Aggregated(Table(four, [1, 0, 0, 1]), ["vL"])
    yield "App. G: S holds internal nodes", lambda: Aggregated(Table(four, [1, 0, 0, 1]), ["v0", "y1"])
    from huc_ref.bounds import theorem_3_4_deviation
    yield "Thm 3.4: a sample size n >= 1", lambda: theorem_3_4_deviation(0, 3, F(1, 20))
    yield "Thm 3.4: a sample size is an integer", lambda: theorem_3_4_deviation(True, 3, F(1, 20))
    yield "Thm 3.4: delta in (0, 1)", lambda: theorem_3_4_deviation(10, 3, F(1))
    from huc_ref.bounds import theorem_3_5_update_bound
    yield "Thm 3.5: eps > 0", lambda: theorem_3_5_update_bound(F(1), F(0))


@claim("Sec. 2.1, 3.1 (the objects)", "huc_ref takes exactly the paper's objects: a finite rooted tree (one root, "
       "one parent per node, no cycle) whose leaves are the labels, each label once; predictions and label laws in "
       "the simplex Delta^{K-1}; a population's weights summing to 1; a depth a non-negative integer; App. G's S "
       "ancestor-closed; Thm 3.4's n a positive integer and delta in (0, 1); Thm 3.5's eps > 0; anything else is "
       "refused with HUCError naming the rule")
def check_section_2_objects():
    """Each object of :func:`_refusals` must be refused by huc_ref with its one error (a HUCError,
    never another exception or a silent acceptance); the valid objects beside them are accepted."""
    from huc_ref import HUCError, LabelTree
    refused = 0
    for rule, build in _refusals():
        try:
            build()
        except HUCError:
            refused += 1
            continue
        except Exception as exc:  # noqa: BLE001 - the point: any other exception is a failure
            raise CheckFailed(f"{rule}: refused by {type(exc).__name__}: {exc}, not by HUCError") from None
        raise CheckFailed(f"accepted an object that breaks the rule: {rule}")
    from huc_ref import Top1AtDepth
    good = LabelTree.from_networkx(_Graph({"r": ["a", "y3"], "a": ["y1", "y2"], "y1": [], "y2": [], "y3": []}))
    paths = LabelTree.from_paths(["a/x", "a/y", "b"], labels=["b", "a/x", "a/y"])
    rows = LabelTree.from_label_paths([["a", "x"], ["b"], ["a", "y"]])
    expect(good.labels == ("y1", "y2", "y3") and paths.labels == ("b", "a/x", "a/y") and rows.K == 3,
           "a valid tree was not read as given")
    expect(Top1AtDepth(good, 0).values([F(1, 3)] * 3) == (1, 1, 1), "the depth 0 (the root) was not accepted")
    from huc_ref import Aggregated, Table
    expect(Aggregated(Table(good, [1, 0, 1]), ["r", "a"]).S == ("r", "a"), "an ancestor-closed S was refused")
    from huc_ref.bounds import theorem_3_4_deviation
    expect(theorem_3_4_deviation(1, 1, F(1, 2)).hi > 0, "the smallest valid sample (n = N = 1) was refused")
    return Evidence(EXACT_EXAMPLE, f"{refused} objects, each breaking one rule, refused with HUCError; valid ones "
                                   "accepted", scope=dict(example="Sec. 2.1", points=refused))


def _risk(dist, values, decide, t):
    """``R_{u,S}(phi; t) = E[|U - t| 1{phi(X) != 1{U >= t}}]`` with ``U = u_S(P, Y)``: ``values[i][y]``
    is ``u_S(p_i, y)``, ``decide[i]`` the decision at atom ``i``, ``Y`` from the atom's label law."""
    total = F(0)
    for atom, vals, a in zip(dist.atoms, values, decide):
        for e, U in zip(atom.label_law(dist.tree.K), vals):
            if e and a != (U >= t):
                total += atom.weight * e * abs(U - t)
    return total


@claim("App. G (monotone post-processing)", "Gap^mono_{t,S}(f, u) <= 2 UC(f; {1}, {u_S}) <= 2 |S ∩ V_T(u)| "
       "HUC(f; {1}, {u}): the risk of thresholding the common score mu_u(P) at t, against the best monotone "
       "post-processing h of it, evaluated with the aggregated utility; and |U - t| 1{a != 1{U >= t}} = "
       "|U - t|/2 + (1 - 2a)(U - t)/2")
def check_appendix_g_post_processing_bound():
    """Gap^mono = R(phi^0) - inf_h R(phi^h) over nondecreasing h: the decisions 1{h(mu_u(P)) >= t} are
    exactly the upper sets of the score order (thresholds), enumerated; UC and HUC by huc_ref's audit."""
    U, t_ = sympy.symbols("U t", real=True)
    for a in (0, 1):  # the pointwise identity, case by case on the sign of U - t
        for above, cond in ((1, U - t_ >= 0), (0, U - t_ < 0)):
            lhs = sympy.Abs(U - t_) * (1 if a != above else 0)
            rhs = sympy.Abs(U - t_) / 2 + (1 - 2 * a) * (U - t_) / 2
            diff = (lhs - rhs).subs(sympy.Abs(U - t_), (U - t_) if above else (t_ - U))
            expect(sympy.simplify(diff) == 0, f"the identity fails for a = {a}, {cond}")
    points = 0
    for tree, dist, us, res in _g_populations(random.Random(47), 4, 6):
        base = us["u0"]
        huc = max((r.sup for r in res.candidates if r.subgroup == "all" and r.node), default=F(0))
        scores = [TreeDecomposition(tree, a.p, base.values(a.p)).mu() for a in dist.atoms]
        levels = sorted(set(scores))
        uppers = [[s >= level for s in scores] for level in levels] + [[False] * len(scores)]
        for S in _ancestor_closed_sets(tree):
            agg = Aggregated(base, S)
            values = [agg.values(a.p) for a in dist.atoms]
            uc = next(r.sup for r in audit(dist, {"uS": agg}).candidates if r.subgroup == "all" and r.node is None)
            for t in (F(-1, 2), F(0), F(1, 4), F(1, 2)):
                gap = _risk(dist, values, [s >= t for s in scores], t) - min(_risk(dist, values, d, t) for d in uppers)
                expect(gap <= 2 * uc, f"Gap^mono = {gap} > 2 UC(u_S) = {2 * uc} for S = {S}, t = {t}")
                expect(2 * uc <= 2 * len(set(S) & set(base.relevant_nodes)) * huc, "2 UC(u_S) > 2 |S ∩ V_T(u)| HUC")
                points += 1
    return Evidence(f"{PROVED}; bound {SAMPLED}", f"the pointwise identity proved in its four cases; the two "
                    f"inequalities at {points} exact (population, S, t) on every shape up to 4 leaves (labels "
                    "shuffled), every monotone post-processing enumerated",
                    scope=dict(symbolic=["|U - t| 1{a != 1{U >= t}} identity"], points=points, max_leaves=4,
                               labels_shuffled=True))
