"""Claims about the tree decomposition: C.1, Thm 3.1 / C.2, C.3, C.2 eq. (69)-(70), D.1."""

from __future__ import annotations

import random
from fractions import Fraction

import sympy

from huc_ref import FiniteDistribution, Table, TreeDecomposition, audit
from huc_ref.tree import LabelTree

from .core import (
    EXHAUSTIVE,
    PROVED,
    SAMPLED,
    Evidence,
    claim,
    expect,
    rational_field,
    shape_tree,
    shuffled_labels,
    tree_shapes,
)
from .paper import Paper

TELESCOPING_LEAVES, TELESCOPING_UNARY = 6, 4
INNER_PRODUCT_LEAVES = 5  # <Delta, R> in full; C.1 proves it for any node in general
ORTHOGONALITY_LEAVES = 5
SHUFFLED_LEAVES = 5  # the shapes checked a second time with their labels out of depth-first order


def _with_shuffled_labels(shapes, up_to: int) -> list:
    """The trees of ``shapes`` (labels in depth-first order), then those of at most ``up_to``
    leaves (and at least 3) again with shuffled labels: a label id is then not a depth-first
    position, so code that confuses the two fails."""
    rng = random.Random(75)
    trees = [shape_tree(s) for s in shapes]
    return trees + [shuffled_labels(t, rng) for t in trees if 3 <= t.K <= up_to]


def _sum_over(expr, var, d, bound):
    """``sum_{var=1}^{d} expr`` for a symbolic ``d``, by the rules of finite sums only: linearity
    (factors free of ``var`` come out), ``sum_var 1 = d`` and ``sum_var delta(var, k) f(var) = f(k)``
    for ``1 <= k <= d``; every remaining sum is renamed to the one bound variable ``bound``, so
    equal sums are equal expressions."""
    out = sympy.Integer(0)
    for term in sympy.Add.make_args(sympy.expand(expr)):
        const, dep = term.as_independent(var, as_Add=False)
        deltas = [f for f in sympy.Mul.make_args(dep) if isinstance(f, sympy.KroneckerDelta)]
        if dep == 1:
            out += const * d
        elif deltas:
            other = deltas[0].args[1] if deltas[0].args[0] == var else deltas[0].args[0]
            out += const * (dep / deltas[0]).xreplace({var: other})
        else:
            out += const * sympy.Sum(dep, (var, 1, d))
    return out.replace(lambda e: isinstance(e, sympy.Sum),
                       lambda e: sympy.Sum(e.function.xreplace({e.variables[0]: bound}), (bound, 1, d)))


def _local_algebra_for_symbolic_arity():
    """C.1 at a node with a symbolic number of children ``d``: child masses ``pi_j > 0`` and
    means ``mu_j`` as indexed symbols, ``y`` below child ``k``."""
    d = sympy.Symbol("d", integer=True, positive=True)
    j, k, i = sympy.symbols("j k i", integer=True, positive=True)
    pi, mu = sympy.IndexedBase("pi", positive=True), sympy.IndexedBase("mu", real=True)
    pi_v = sympy.Sum(pi[i], (i, 1, d))
    mu_v = sympy.Sum(pi[i] * mu[i], (i, 1, d)) / pi_v  # N_{u,v} / pi_v with N additive over the children
    q = pi[j] / pi_v
    R = sympy.KroneckerDelta(j, k) - q
    claims = {"sum_j q_j = 1": _sum_over(q, j, d, i) - 1,
              "mu_v = sum_j q_j mu_j": _sum_over(q * mu[j], j, d, i) - mu_v,
              "sum_j R_j = 0": _sum_over(R, j, d, i),
              "<Delta_v, R_v> = mu_k - mu_v": _sum_over((mu[j] - mu_v) * R, j, d, i) - (mu[k] - mu_v)}
    for name, diff in claims.items():
        expect(sympy.simplify(diff) == 0, f"C.1 for symbolic d: {name} fails ({diff})")


@claim("App. C.1", "Local algebra of a node: sum_j R_{v,j} = 0, sum_j q_{v,j} = 1, "
       "mu_{u,v} = sum_j q_{v,j} mu_{u,v_j}, pi_v = sum_j pi_{v_j}, N_{u,v} = sum_j N_{u,v_j}")
def check_c1_local_algebra():
    # A node's algebra depends only on its child masses and child means, which a node
    # whose children are leaves carries as free symbols p_j > 0 and u_j.
    for d in range(2, 7):
        tree = LabelTree.from_children("v", {"v": [f"y{j}" for j in range(1, d + 1)]})
        F, (p, u) = rational_field(("p", d), ("u", d))
        dec, ref = TreeDecomposition(tree, p, u), Paper(tree, p, u)
        qs = dec.q("v")
        expect(list(qs) == ref.q("v"), f"d={d}: huc_ref q differs from pi_{{v_j}}/pi_v")
        expect(sum(qs, F.zero) == 1, f"d={d}: sum_j q_j != 1")
        expect(dec.mu("v") == sum((qj * dec.mu(c) for qj, c in zip(qs, tree.children("v"))), F.zero),
               f"d={d}: mu_v != sum_j q_j mu_(v_j)")
        expect(dec.pi("v") == sum(p, F.zero) and dec.N("v") == sum((a * b for a, b in zip(p, u)), F.zero),
               f"d={d}: pi or N is not additive")
        for y in range(d):
            r = dec.R("v", y)
            expect(list(r) == ref.R("v", y), f"d={d}: huc_ref R_v(y{y + 1}) differs from the definition")
            expect(sum(r, F.zero) == 0, f"d={d}: sum_j R_j(y{y + 1}) != 0")
    _local_algebra_for_symbolic_arity()
    return Evidence(PROVED, "huc_ref at nodes with d = 2..6 children (child masses and means free symbols); the "
                    "identities and <Delta, R> = mu_k - mu_v proved for a symbolic number of children d",
                    scope=dict(symbolic=["local algebra", "symbolic arity d"], arities=[2, 3, 4, 5, 6, "d"]))


def _shapes():
    return tree_shapes(TELESCOPING_LEAVES, unary_up_to=TELESCOPING_UNARY)


@claim("Thm 3.1, App. C.2 (Theorem C.3)", "Telescoping: u(p,y) - mu_u(p) = sum_v <Delta_{u,v}(p), R_v(p,y)>, "
       "and each term equals mu_{u,v_k}(p) - mu_{u,v}(p) below child v_k, 0 outside Y_v")
def check_theorem_3_1_telescoping():
    shapes = _shapes()
    trees = _with_shuffled_labels(shapes, SHUFFLED_LEAVES)
    for tree in trees:
        K = tree.K
        F, (p, u) = rational_field(("p", K), ("u", K))
        dec, ref = TreeDecomposition(tree, p, u), Paper(tree, p, u)
        mu_root = ref.mu(tree.root)
        for y in range(K):
            total = F.zero
            for v in tree.internal_nodes:
                below = [c for c in tree.children(v) if ref.J(c, y)]
                piecewise = (ref.mu(below[0]) - ref.mu(v)) if below else F.zero
                expect(dec.g(v, y) == piecewise, f"{tree.to_json()}: huc_ref g_(u,{v})(y{y + 1}) differs from "
                       "mu_(u,v_k) - mu_(u,v)")
                if K <= INNER_PRODUCT_LEAVES:
                    expect(ref.g(v, y) == piecewise, f"{tree.to_json()}: <Delta, R> differs from the piecewise "
                           f"form at {v}, y{y + 1}")
                total += piecewise
            expect(total == u[y] - mu_root, f"{tree.to_json()}: contributions do not sum to u(p,y) - mu_u(p)")
            expect(dec.residual(y) == u[y] - mu_root, "huc_ref residual differs")
    return Evidence(f"{EXHAUSTIVE}: {PROVED}", f"all {len(shapes)} tree shapes with 1..{TELESCOPING_LEAVES} "
                    f"leaves and no unary node, plus those with one unary node up to {TELESCOPING_UNARY} leaves, "
                    f"and again with shuffled labels up to {SHUFFLED_LEAVES} leaves; "
                    f"p and u free symbols; <Delta, R> = piecewise form up to {INNER_PRODUCT_LEAVES} leaves",
                    scope=dict(symbolic=["telescoping"], shapes=len(shapes), max_leaves=TELESCOPING_LEAVES,
                               unary_up_to=TELESCOPING_UNARY, labels_shuffled=len(trees) - len(shapes)))


@claim("App. C.3", "Under Y ~ p each node contribution has zero mean; contributions of distinct nodes are "
       "orthogonal for any two utilities; Parseval: Var_p u = sum_v pi_v sum_j q_{v,j} Delta_{u,v,j}^2; "
       "sum_v (d_v - 1) = K - 1")
def check_c3_orthogonality_and_parseval():
    shapes = tree_shapes(ORTHOGONALITY_LEAVES, unary_up_to=3)
    for tree in _with_shuffled_labels(shapes, 4):  # and again with labels out of depth-first order
        K = tree.K
        F, (p, u, w) = rational_field(("p", K), ("u", K), ("w", K))
        # p sums to 1: write p_y = x_y / sum x with free x.
        total = sum(p, F.zero)
        p = [x / total for x in p]
        du, dw = TreeDecomposition(tree, p, u), TreeDecomposition(tree, p, w)
        nodes = tree.internal_nodes
        expect(sum(tree.d(v) - 1 for v in nodes) == K - 1, f"{tree.to_json()}: sum (d_v - 1) != K - 1")
        for i, v in enumerate(nodes):
            expect(sum((p[y] * du.g(v, y) for y in range(K)), F.zero) == 0, f"{tree.to_json()}: E_p g_{v} != 0")
            for x in nodes[i + 1:]:
                cross = sum((p[y] * du.g(v, y) * dw.g(x, y) for y in range(K)), F.zero)
                expect(cross == 0, f"{tree.to_json()}: g_(u,{v}) and g_(w,{x}) are not orthogonal")
        mean = du.mu()
        variance = sum((p[y] * (u[y] - mean) ** 2 for y in range(K)), F.zero)
        parseval = F.zero
        for v in nodes:
            parseval += du.pi(v) * sum((qj * dj ** 2 for qj, dj in zip(du.q(v), du.Delta(v))), F.zero)
        expect(variance == parseval, f"{tree.to_json()}: Parseval fails")
    return Evidence(f"{EXHAUSTIVE}: {PROVED}", f"all {len(shapes)} shapes with up to {ORTHOGONALITY_LEAVES} "
                    "leaves (one unary node up to 3); p, u and a second utility w free",
                    scope=dict(labels_shuffled_up_to=4, symbolic=["orthogonality", "Parseval"], shapes=len(shapes),
                               max_leaves=ORTHOGONALITY_LEAVES, unary_up_to=3))


@claim("App. C.3 (eq. 75-80)", "Orthonormal basis: phi_v = R_{v,2} / sqrt(pi_v q_{v,1} q_{v,2}) at binary nodes "
       "has zero p-mean and unit p-norm, and distinct nodes are orthogonal; the node decomposition is unique")
def check_c3_orthonormal_basis_and_uniqueness():
    # (1) radicals: the binary-node basis on two binary trees, with simplify.
    for children in ({"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]},
                     {"v0": ["y1", "v1"], "v1": ["y2", "y3"]}):
        tree = LabelTree.from_children("v0", children)
        K = tree.K
        x = sympy.symbols(f"x1:{K + 1}", positive=True)
        p = [xi / sum(x) for xi in x]
        ref = Paper(tree, p)
        basis = {}
        for v in tree.internal_nodes:
            qv = ref.q(v)
            scale = sympy.sqrt(ref.pi(v) * qv[0] * qv[1])
            basis[v] = [ref.R(v, y)[1] / scale for y in range(K)]
        for v, phi in basis.items():
            expect(sympy.simplify(sum(p[y] * phi[y] for y in range(K))) == 0, f"phi_{v} has nonzero mean")
            expect(sympy.simplify(sum(p[y] * phi[y] ** 2 for y in range(K)) - 1) == 0, f"phi_{v} is not unit")
        nodes = list(basis)
        for i, v in enumerate(nodes):
            for w in nodes[i + 1:]:
                expect(sympy.simplify(sum(p[y] * basis[v][y] * basis[w][y] for y in range(K))) == 0,
                       f"phi_{v}, phi_{w} not orthogonal")
    # (1b) general d_v (eq. 75-76): at a node with d children, d - 1 vectors e_l (the first l
    # children against child l + 1, with radicals) are q-orthonormal with zero q-mean, proved
    # for d = 2..6; lifting e to phi(y) = e_{j(y)} / sqrt(pi_v) on Y_v keeps the mean zero and
    # the inner product (<phi_a, phi_b>_p = <e_a, e_b>_q), proved for a symbolic d.
    for d in range(2, 7):
        x = sympy.symbols(f"x1:{d + 1}", positive=True)
        q = [xi / sum(x) for xi in x]
        vectors = _node_basis(q)
        for m, e in enumerate(vectors):
            expect(sympy.simplify(sum(qj * ej for qj, ej in zip(q, e))) == 0, f"d={d}: e_{m + 1} has nonzero q-mean")
            for n in range(m, d - 1):
                inner = sum(qj * a_ * b_ for qj, a_, b_ in zip(q, e, vectors[n]))
                expect(sympy.simplify(inner - (1 if m == n else 0)) == 0, f"d={d}: <e_{m + 1}, e_{n + 1}>_q wrong")
    _lifting_for_symbolic_arity()
    # (2) uniqueness: W_v = {constant on child subtrees, 0 outside Y_v, zero p-mean} has
    # dimension d_v - 1; the W_v are mutually orthogonal (symbolically) and their
    # dimensions add to K - 1 = dim of zero-mean functions, so the sum is direct and
    # every zero-mean function splits uniquely; g_{u,v} lies in W_v, so sum_v g_{u,v}
    # is that unique split of u - mu_u.
    shapes = tree_shapes(ORTHOGONALITY_LEAVES, unary_up_to=3)
    for shape in shapes:
        tree = shape_tree(shape)
        K = tree.K
        F, (p, u) = rational_field(("p", K), ("u", K))
        dec, ref = TreeDecomposition(tree, p, u), Paper(tree, p, u)
        spanning = {}
        for v in tree.internal_nodes:
            kids = tree.children(v)
            last = ref.leaves[kids[-1]]
            vecs = []
            for c in kids[:-1]:
                ids = ref.leaves[c]
                vecs.append([(1 / ref.pi(c) if y in ids else F.zero)
                             - (1 / ref.pi(kids[-1]) if y in last else F.zero) for y in range(K)])
            spanning[v] = vecs
            for y in range(K):  # g_{u,v} lies in W_v
                if not ref.J(v, y):
                    expect(dec.g(v, y) == 0, "g nonzero outside Y_v")
                for c in kids:
                    ids = ref.leaves[c]
                    expect(all(dec.g(v, z) == dec.g(v, ids[0]) for z in ids), "g not constant on a child subtree")
            for vec in vecs:
                expect(sum((p[y] * vec[y] for y in range(K)), F.zero) == 0, "a W_v vector has nonzero mean")
        nodes = list(spanning)
        for i, v in enumerate(nodes):
            for w in nodes[i + 1:]:
                for a in spanning[v]:
                    for b in spanning[w]:
                        expect(sum((p[y] * a[y] * b[y] for y in range(K)), F.zero) == 0, "W_v, W_w not orthogonal")
        expect(sum(len(vs) for vs in spanning.values()) == K - 1, "dimensions do not add to K - 1")
    return Evidence(f"{EXHAUSTIVE}: {PROVED}", "radical basis on two binary trees (simplify, positive symbols); "
                    "a q-orthonormal radical basis at nodes of d = 2..6 children, its lifting proved for a "
                    f"symbolic d; uniqueness by orthogonal node spaces for all {len(shapes)} shapes up to "
                    f"{ORTHOGONALITY_LEAVES} leaves",
                    scope=dict(symbolic=["radical basis", "node basis", "lifting for symbolic d"],
                               trees="two binary trees", arities=[2, 3, 4, 5, 6, "d"], shapes=len(shapes),
                               max_leaves=ORTHOGONALITY_LEAVES, unary_up_to=3))


def _node_basis(q):
    """``d - 1`` vectors on a node's children (eq. 75 for ``d_v = d``): ``e_l`` weighs the first
    ``l`` children against child ``l + 1`` (``Q_l = q_1 + ... + q_l``), 0 beyond."""
    d = len(q)
    Q = [sum(q[:m + 1]) for m in range(d)]
    return [[sympy.sqrt(q[l] / (Q[l - 1] * Q[l])) if j < l else -sympy.sqrt(Q[l - 1] / (q[l] * Q[l])) if j == l
             else sympy.Integer(0) for j in range(d)] for l in range(1, d)]


def _lifting_for_symbolic_arity():
    """Eq. (76) for a symbolic number of children: with ``phi(y) = e_{j(y)} / sqrt(pi_v)`` on ``Y_v``
    (constant on each child subtree, whose mass is ``pi_j``), ``sum_y p_y phi_a(y) = sqrt(pi_v)
    <1, e_a>_q`` and ``<phi_a, phi_b>_p = <e_a, e_b>_q``."""
    d = sympy.Symbol("d", integer=True, positive=True)
    j, i = sympy.symbols("j i", integer=True, positive=True)
    pi = sympy.IndexedBase("pi", positive=True)
    ea, eb = sympy.IndexedBase("ea", real=True), sympy.IndexedBase("eb", real=True)
    pi_v = sympy.Sum(pi[i], (i, 1, d))
    root = sympy.sqrt(pi_v)
    mean = _sum_over(pi[j] * ea[j] / root, j, d, i) - root * _sum_over(pi[j] / pi_v * ea[j], j, d, i)
    inner = _sum_over(pi[j] * (ea[j] / root) * (eb[j] / root), j, d, i) - _sum_over(pi[j] / pi_v * ea[j] * eb[j], j,
                                                                                      d, i)
    expect(sympy.simplify(mean) == 0, "lifting changes the mean")
    expect(sympy.simplify(inner) == 0, "lifting changes the inner product")


@claim("App. C.2 (eq. 69-70)", "Conditional means: E[R_{v,j}(p,Y)] = pi*_{v_j} - pi*_v q_{v,j}, and "
       "E[g_{u,v}(p,Y)] = pi*_v sum_j (q*_{v,j} - q_{v,j}) mu_{u,v_j} under the true law eta")
def check_c2_conditional_means():
    shapes = tree_shapes(ORTHOGONALITY_LEAVES, unary_up_to=3)
    for tree in _with_shuffled_labels(shapes, 4):  # and again with labels out of depth-first order
        K = tree.K
        F, (p, u, e) = rational_field(("p", K), ("u", K), ("e", K))
        dec, ref, star = TreeDecomposition(tree, p, u), Paper(tree, p, u), Paper(tree, e)
        masses = [star.pi(a) for a in tree.nodes]
        for v in tree.internal_nodes:
            kids = tree.children(v)
            qv = ref.q(v)
            star_v = star.pi(v)
            for j, c in enumerate(kids):
                lhs = sum((e[y] * ref.R(v, y)[j] for y in range(K)), F.zero)
                expect(lhs == star.pi(c) - star_v * qv[j], f"eq. 69 fails at {v}, child {c}")
            eq70 = star_v * sum(((star.pi(c) / star_v - qj) * ref.mu(c) for c, qj in zip(kids, qv)), F.zero)
            direct = sum((e[y] * ref.g(v, y) for y in range(K)), F.zero)
            expect(direct == eq70, f"eq. 70 fails at {v}")
            expect(dec.expected_contribution(v, masses) == direct, f"huc_ref expected_contribution differs at {v}")
    return Evidence(f"{EXHAUSTIVE}: {PROVED}", f"all {len(shapes)} shapes up to {ORTHOGONALITY_LEAVES} leaves; "
                    "p, u and the true law eta free symbols",
                    scope=dict(labels_shuffled_up_to=4, symbolic=["conditional means"], shapes=len(shapes),
                               max_leaves=ORTHOGONALITY_LEAVES, unary_up_to=3))


@claim("Prop. 3.3, App. D.1 (Prop. D.2)", "Canonical calibration (eta = p) holds iff E[R_v(P,Y) | P] = 0 at every "
       "internal node; then every node moment vanishes and HUC = 0")
def check_d1_canonical_calibration_iff_branch_residuals_vanish():
    shapes = tree_shapes(5)
    for tree in _with_shuffled_labels(shapes, 4):  # and again with labels out of depth-first order
        K = tree.K
        p = sympy.symbols(f"p1:{K + 1}", positive=True)
        eta = sympy.symbols(f"e1:{K + 1}")
        ref = Paper(tree, p)
        equations = [sum(eta) - 1]
        for v in tree.internal_nodes:
            for j in range(tree.d(v)):
                equations.append(sum(eta[y] * ref.R(v, y)[j] for y in range(K)))
        # (=>) eta = p makes every branch residual mean vanish (p sums to 1 on the simplex).
        on_simplex = {p[-1]: 1 - sum(p[:-1])}
        for eq in equations[1:]:
            expect(sympy.simplify(eq.subs(dict(zip(eta, p))).subs(on_simplex)) == 0, "eta = p leaves E[R] != 0")
        # (<=) the linear system in eta has the unique solution eta = p.
        solution = sympy.linsolve([sympy.together(eq).as_numer_denom()[0] for eq in equations], eta)
        expect(len(solution) == 1, f"{tree.to_json()}: E[R] = 0 does not determine eta")
        (values,) = solution
        expect(all(sympy.simplify((val - pv).subs(on_simplex)) == 0 for val, pv in zip(values, p)),
               f"{tree.to_json()}: E[R] = 0 forces eta != p")
    rng = random.Random(3)
    points = 0
    for shape in tree_shapes(5):
        tree = shape_tree(shape)
        for _ in range(3):
            raws = [[rng.randint(1, 5) for _ in tree.labels] for _ in range(3)]
            laws = [[Fraction(x, sum(r)) for x in r] for r in raws]
            dist = FiniteDistribution(tree, [{"weight": Fraction(1, 3), "p": law, "eta": law} for law in laws])
            us = {"u": Table(tree, [Fraction(rng.randint(-4, 4), 4) for _ in tree.labels])}
            expect(audit(dist, us).huc.sup == 0, "an audit of a canonically calibrated population has HUC > 0")
            points += 1
    return Evidence(f"{EXHAUSTIVE}: {PROVED}", f"iff proved for all {len(shapes)} shapes up to 5 leaves "
                    f"(linear system solved in eta); HUC = 0 {SAMPLED} ({points} audits)",
                    scope=dict(labels_shuffled_up_to=4, symbolic=["iff"], shapes=len(shapes), max_leaves=5,
                               points=points))
