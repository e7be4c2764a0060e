"""Claims about the HUC-Boost step (App. E.1, E.2, E.4) and the leaf Brier loss (E.3)."""

from __future__ import annotations

import random
from fractions import Fraction
from functools import partial

import sympy
from mpmath.ctx_iv import MPIntervalContext

from huc_ref import TreeDecomposition

from .core import (
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


def _path_products(tree, fld, gens):
    """Leaf probabilities as products of softmax branch probabilities q_{v,j} = a_{v,j} / sum_k a_{v,k}."""
    q, k = {}, 0
    for v in tree.internal_nodes:
        a = gens[k:k + tree.d(v)]
        k += tree.d(v)
        total = sum(a, fld.zero)
        for c, x in zip(tree.children(v), a):
            q[c] = x / total
    leaves = []
    for y in tree.labels:
        f = fld.one
        for node in tree.path(y)[1:]:
            f *= q[node]
        leaves.append(f)
    return q, leaves


def _n_branches(tree):
    return sum(tree.d(v) for v in tree.internal_nodes)


@claim("App. E.1, E.4 (Lemmas E.6-E.7)", "Node-wise softmax branch probabilities give path products that form a "
       "positive leaf distribution, and pi_{v_j}(f)/pi_v(f) recovers q_{v,j}")
def check_e1_path_products_normalise():
    shapes = tree_shapes(5, unary_up_to=3)
    rng = random.Random(56)
    for shape in shapes:
        tree = shuffled_labels(shape_tree(shape), rng)
        fld, (a,) = rational_field(("a", _n_branches(tree)))
        q, f = _path_products(tree, fld, a)
        expect(sum(f, fld.zero) == 1, f"{tree.to_json()}: path products do not sum to 1")
        dec = TreeDecomposition(tree, f, [0] * tree.K)
        for v in tree.internal_nodes:
            expect(list(dec.q(v)) == [q[c] for c in tree.children(v)], f"q not recovered at {v}")
    return Evidence(f"{EXHAUSTIVE}: {PROVED}", f"all {len(shapes)} shapes up to 5 leaves, exp(z) as free "
                    "positive symbols, labels shuffled",
                    scope=dict(symbolic=["path products"], shapes=len(shapes), max_leaves=5, unary_up_to=3,
                               labels_shuffled=True))


@claim("App. E.2 Step 1 (eq. 92-95)", "A one-node update q' = q e^{alpha h}/Z keeps a leaf distribution, leaves "
       "outside Y_v unchanged, and every other node's branch probabilities unchanged (branch-local)")
def check_e2_update_is_branch_local():
    shapes = tree_shapes(4, unary_up_to=3)
    updates = 0
    rng = random.Random(57)
    for shape in shapes:
        tree = shuffled_labels(shape_tree(shape), rng)
        for v in tree.branching_nodes:
            d = tree.d(v)
            fld, (a, w) = rational_field(("a", _n_branches(tree)), ("w", d))  # w_j = e^{alpha h_j}
            q, f = _path_products(tree, fld, a)
            kids = tree.children(v)
            z = sum((q[c] * wj for c, wj in zip(kids, w)), fld.zero)
            new_q = {c: q[c] * wj / z for c, wj in zip(kids, w)}
            ref = Paper(tree, f)
            f_new = []
            for y, fy in enumerate(f):
                below = [c for c in kids if ref.J(c, y)]
                f_new.append(fy * new_q[below[0]] / q[below[0]] if below else fy)
            expect(sum(f_new, fld.zero) == 1, "the updated leaves do not sum to 1")
            before, after = TreeDecomposition(tree, f, [0] * tree.K), TreeDecomposition(tree, f_new, [0] * tree.K)
            for x in tree.internal_nodes:
                want = [new_q[c] for c in kids] if x == v else list(before.q(x))
                expect(list(after.q(x)) == want, f"update at {v} changed branch probabilities at {x}")
            updates += 1
    return Evidence(f"{EXHAUSTIVE}: {PROVED}", f"every branching node of all {len(shapes)} shapes up to 4 leaves "
                    f"({updates} updates), e^(alpha h_j) as free positive symbols, labels shuffled",
                    scope=dict(symbolic=["one-node update"], shapes=len(shapes), max_leaves=4, unary_up_to=3,
                               points=updates, labels_shuffled=True))


def _phi_on_tree(tree, node):
    """One atom on ``tree``: its prediction from free branch symbols (a path product, E.1), a free
    law eta, a direction h at ``node``, and phi(alpha) = E_eta[-log f^(alpha)] after the update."""
    alpha = sympy.Symbol("alpha", real=True)
    nodes = [v for v in tree.nodes if v != tree.root]
    b = dict(zip(nodes, sympy.symbols(f"b1:{len(nodes) + 1}", positive=True)))
    q = {c: b[c] / sum(b[s] for s in tree.children(tree.parent(c))) for c in nodes}
    f = [sympy.Mul(*[q[c] for c in tree.path(y)[1:]]) for y in tree.labels]
    eta = sympy.symbols(f"e1:{tree.K + 1}", positive=True)
    kids = tree.children(node)
    h = sympy.symbols(f"h1:{len(kids) + 1}", real=True)
    z = sum(q[c] * sympy.exp(alpha * hj) for c, hj in zip(kids, h))
    ref = Paper(tree, f)
    log_f = []
    for y in range(tree.K):
        below = [j for j, c in enumerate(kids) if ref.J(c, y)]
        log_f.append(sympy.log(f[y]) + (alpha * h[below[0]] - sympy.log(z) if below else 0))
    return alpha, eta, h, q, kids, -sum(eta[y] * log_f[y] for y in range(tree.K)), ref


def _phi_derivatives_hold(tree, node):
    """E.2 Step 3 at ``node`` of ``tree``: phi'(0) = -Gamma and phi''(alpha) = E_eta[J_v Var_{q^(alpha)} h]."""
    alpha, eta, h, q, kids, phi, ref = _phi_on_tree(tree, node)
    gamma = sum(eta[y] * sum(hj * rj for hj, rj in zip(h, ref.R(node, y))) for y in range(tree.K))
    expect(sympy.simplify(sympy.diff(phi, alpha).subs(alpha, 0) + gamma) == 0,
           f"{tree.to_json()}: phi'(0) != -Gamma at {node}")
    weights = [q[c] * sympy.exp(alpha * hj) for c, hj in zip(kids, h)]
    z = sum(weights)
    mean = sum(w * hj for w, hj in zip(weights, h)) / z
    var = sum(w * (hj - mean) ** 2 for w, hj in zip(weights, h)) / z
    want = sum(eta[y] * ref.J(node, y) * var for y in range(tree.K))
    expect(sympy.simplify(sympy.diff(phi, alpha, 2) - want) == 0, f"{tree.to_json()}: phi'' formula fails at {node}")


def _phi_setup(node):
    """One atom on the four-leaf tree: prediction from branch symbols, law eta, direction h at ``node``."""
    alpha = sympy.Symbol("alpha", real=True)
    a = sympy.symbols("a1:7", positive=True)
    eta = sympy.symbols("e1:5", positive=True)
    q = {"vL": a[0] / (a[0] + a[1]), "vR": a[1] / (a[0] + a[1]), "y1": a[2] / (a[2] + a[3]),
         "y2": a[3] / (a[2] + a[3]), "y3": a[4] / (a[4] + a[5]), "y4": a[5] / (a[4] + a[5])}
    f = [q["vL"] * q["y1"], q["vL"] * q["y2"], q["vR"] * q["y3"], q["vR"] * q["y4"]]
    kids = FOUR.children(node)
    h = sympy.symbols(f"h1:{len(kids) + 1}", real=True)
    z = sum(q[c] * sympy.exp(alpha * hj) for c, hj in zip(kids, h))
    ref = Paper(FOUR, f)
    log_f = []
    for y in range(4):
        below = [j for j, c in enumerate(kids) if ref.J(c, y)]
        log_f.append(sympy.log(f[y]) + (alpha * h[below[0]] - sympy.log(z) if below else 0))
    phi = -sum(eta[y] * log_f[y] for y in range(4))
    return alpha, eta, f, h, q, kids, phi, ref


@claim("App. E.2 Step 3 (eq. 96-99), Lemma E.4", "phi'(0) = -Gamma_t and phi''(alpha) = E[J_v(Y) Var_{J~q^(alpha)} "
       "h_J]; Lambda_t = 0 implies Gamma_t = 0; UC-Boost's global update likewise has phi'(0) = -M")
def check_e2_log_loss_derivatives():
    for node in ("v0", "vL"):
        alpha, eta, f, h, q, kids, phi, ref = _phi_setup(node)
        gamma = sum(eta[y] * sum(hj * rj for hj, rj in zip(h, ref.R(node, y))) for y in range(4))
        d1 = sympy.diff(phi, alpha).subs(alpha, 0)
        expect(sympy.simplify(d1 + gamma) == 0, f"phi'(0) != -Gamma at {node}")
        weights = [q[c] * sympy.exp(alpha * hj) for c, hj in zip(kids, h)]
        z = sum(weights)
        mean = sum(w * hj for w, hj in zip(weights, h)) / z
        var = sum(w * (hj - mean) ** 2 for w, hj in zip(weights, h)) / z
        d2 = sympy.diff(phi, alpha, 2)
        want = sum(eta[y] * ref.J(node, y) * var for y in range(4))
        expect(sympy.simplify(d2 - want) == 0, f"phi'' formula fails at {node}")
        # Lemma E.4: equal components of h (Lambda = 0) give Gamma = 0.
        c = sympy.Symbol("c", real=True)
        expect(sympy.simplify(gamma.subs({hj: c for hj in h})) == 0, "Lambda = 0 but Gamma != 0")
        # huc_ref: with h = c Delta_{u,v}, Gamma = c E_eta[g_{u,v}] (the engine's node term).
        uvals = [F(-1), F(1, 2), F(1), F(0)]
        point = {s: v for s, v in zip(sympy.symbols("a1:7", positive=True), (2, 3, 1, 4, 5, 2))}
        fx = [sympy.Rational(x) for x in (sympy.nsimplify(fy.subs(point)) for fy in f)]
        dec = TreeDecomposition(FOUR, [F(int(x.p), int(x.q)) for x in fx], uvals)
        law = [F(1, 10), F(2, 10), F(3, 10), F(4, 10)]
        masses = [sum((law[FOUR.label_index(y)] for y in FOUR.leaves_below(a)), F(0)) for a in FOUR.nodes]
        delta = dec.Delta(node)
        value = gamma.subs(point).subs(dict(zip(h, [sympy.Rational(x.numerator, x.denominator) for x in delta])))
        value = value.subs(dict(zip(eta, [sympy.Rational(x.numerator, x.denominator) for x in law])))
        term = dec.expected_contribution(node, masses) / sum(law)
        expect(sympy.nsimplify(value) == sympy.Rational(term.numerator, term.denominator),
               f"Gamma with h = Delta differs from huc_ref's node term at {node}")
    # the same two derivatives at every branching node of every shape up to 4 leaves, labels shuffled
    rng, nodes_checked = random.Random(92), 0
    for shape in tree_shapes(4):
        tree = shuffled_labels(shape_tree(shape), rng)
        for v in tree.branching_nodes:
            _phi_derivatives_hold(tree, v)
            nodes_checked += 1
    # UC-Boost: f'_y ∝ f_y e^{alpha h_y} is the one-node update of the flat tree over all leaves.
    alpha = sympy.Symbol("alpha", real=True)
    a = sympy.symbols("a1:4", positive=True)
    eta = sympy.symbols("e1:4", positive=True)
    h = sympy.symbols("h1:4", real=True)
    f = [x / sum(a) for x in a]
    z = sum(fy * sympy.exp(alpha * hy) for fy, hy in zip(f, h))
    phi = -sum(e * (sympy.log(fy) + alpha * hy - sympy.log(z)) for e, fy, hy in zip(eta, f, h))
    m = sum(e * (hy - sum(fz * hz for fz, hz in zip(f, h))) for e, hy in zip(eta, h))
    expect(sympy.simplify(sympy.diff(phi, alpha).subs(alpha, 0) + m) == 0, "UC-Boost: phi'(0) != -M")
    return Evidence(PROVED, "symbolic (simplify) on the four-leaf tree at the root and at vL, at every branching "
                    f"node of every shape up to 4 leaves with shuffled labels ({nodes_checked} nodes), and for the "
                    "global update on three leaves; Gamma = c E[g] cross-checked with huc_ref at an exact point",
                    scope=dict(symbolic=["phi'(0)", "phi''(alpha)"], shapes=len(tree_shapes(4)), max_leaves=4,
                               labels_shuffled=True, trees="four-leaf (root and vL), three-leaf global",
                               nodes=nodes_checked, points=1))


@claim("App. E.2 Step 3-4 (eq. 99, 101), Thm 3.5", "phi''(alpha) <= Lambda_t <= 1 and the quadratic bound "
       "phi(alpha) <= phi(0) - alpha Gamma_t + alpha^2 Lambda_t / 2")
def check_e2_curvature_and_quadratic_bound():
    rng = random.Random(35)
    points = 0
    for _ in range(300):
        d = rng.randint(2, 4)
        qv = [F(rng.randint(1, 9)) for _ in range(d)]
        qv = [x / sum(qv) for x in qv]
        c = F(rng.randint(-4, 4), 4)
        means = [F(rng.randint(-8, 8), 8) for _ in range(d)]
        mu_v = sum((qj * m for qj, m in zip(qv, means)), F(0))
        h = [c * (m - mu_v) for m in means]  # h = c Delta_{u,v}: max_j h_j - min_j h_j <= 2
        inside = F(rng.randint(1, 9), 10)  # P(Y in Y_v) under the true law
        child_law = [F(rng.randint(0, 9)) for _ in range(d)]
        child_law = [x / sum(child_law) for x in child_law] if sum(child_law) else [F(1, d)] * d
        qh = sum((qk * hk for qk, hk in zip(qv, h)), F(0))
        gamma = inside * sum((cl * (hj - qh) for cl, hj in zip(child_law, h)), F(0))
        lam = inside * (max(h) - min(h)) ** 2 / 4
        expect(lam <= 1, "Lambda > 1")
        if lam == 0:  # Lemma E.4, exactly
            expect(gamma == 0, "Lambda = 0 but Gamma != 0")
            continue
        alpha = F(rng.choice([r for r in range(-30, 31) if r]), 10)
        # At alpha = 0 everything is rational: phi''(0) = inside Var_q(h) <= Lambda, exactly.
        expect(inside * sum((qj * (hj - qh) ** 2 for qj, hj in zip(qv, h)), F(0)) <= lam, "phi''(0) > Lambda")
        # At rational alpha != 0 neither inequality can be an equality (e^r is irrational
        # for rational r != 0), so raising the interval precision always decides it.
        phi = partial(_phi, qv=qv, h=h, inside=inside, child_law=child_law)
        bound = partial(_quadratic, phi=phi, alpha=alpha, gamma=gamma, lam=lam)
        expect(_certified_le(partial(phi, alpha=alpha), bound), f"quadratic bound fails at alpha = {alpha}")
        expect(_certified_le(partial(_curvature, alpha=alpha, qv=qv, h=h, inside=inside),
                             partial(_iv, x=lam)), f"phi''({alpha}) > Lambda")
        points += 1
    return Evidence(f"{SAMPLED} (interval arithmetic)", f"{points} random nodes with d = 2..4, h = c Delta, "
                    "alpha in [-3, 3]; each inequality certified by outward-rounded intervals (precision raised "
                    "until decided); Lambda = 0 and alpha = 0 decided in exact rationals",
                    scope=dict(points=points, arities=[2, 3, 4], arithmetic="outward-rounded intervals"))


def _iv(ctx, x: Fraction):
    return ctx.mpf(x.numerator) / x.denominator


def _quadratic(ctx, phi, alpha, gamma, lam):
    """The right side of eq. (101): phi(0) - alpha Gamma + alpha^2 Lambda / 2."""
    return phi(ctx, alpha=F(0)) - _iv(ctx, alpha * gamma) + _iv(ctx, alpha ** 2 * lam / 2)


def _curvature(ctx, alpha, qv, h, inside):
    """phi''(alpha) of one node: inside * Var_{J ~ q^(alpha)}(h_J) (eq. 98)."""
    return _iv(ctx, inside) * _tilted_variance(ctx, alpha, qv, h)


def _phi(ctx, alpha, qv, h, inside, child_law):
    """phi(alpha) - (terms constant in alpha): inside * sum_j eta_j (log Z(alpha) - alpha h_j) (E.2 Step 2)."""
    log_z = ctx.log(sum((_iv(ctx, qj) * ctx.exp(_iv(ctx, alpha * hj)) for qj, hj in zip(qv, h)), ctx.mpf(0)))
    return _iv(ctx, inside) * sum((_iv(ctx, cl) * (log_z - _iv(ctx, alpha * hj)) for cl, hj in zip(child_law, h)),
                                  ctx.mpf(0))


def _tilted_variance(ctx, alpha, qv, h):
    """Var_{J ~ q^(alpha)}(h_J) (E.2 Step 3)."""
    weights = [_iv(ctx, qj) * ctx.exp(_iv(ctx, alpha * hj)) for qj, hj in zip(qv, h)]
    z = sum(weights, ctx.mpf(0))
    mean = sum((w * _iv(ctx, hj) for w, hj in zip(weights, h)), ctx.mpf(0)) / z
    return sum((w * (_iv(ctx, hj) - mean) ** 2 for w, hj in zip(weights, h)), ctx.mpf(0)) / z


def _certified_le(lhs, rhs, precision: int = 100, limit: int = 6400) -> bool:
    """Decide lhs <= rhs with interval enclosures, doubling the precision until they separate."""
    while precision <= limit:
        ctx = MPIntervalContext()
        ctx.prec = precision
        left, right = lhs(ctx), rhs(ctx)
        if left.b <= right.a:
            return True
        if left.a > right.b:
            return False
        precision *= 2
    raise CheckFailed(f"undecided at {limit} bits")


@claim("App. E.3", "Leaf Brier loss under a one-node update changes by 2 pi_v^2 sum_j delta_j q_j C_j + "
       "pi_v^2 sum_j delta_j^2 C_j (for y outside Y_v; plus -2(p'_y - p_y) below v): not branch-local")
def check_e3_brier_is_not_branch_local():
    fld, (a, r, w, m) = rational_field(("a", 2), ("r", 4), ("w", 2), ("m", 2))
    qv = [a[0] / (a[0] + a[1]), a[1] / (a[0] + a[1])]
    within = [r[0] / (r[0] + r[1]), r[1] / (r[0] + r[1]), r[2] / (r[2] + r[3]), r[3] / (r[2] + r[3])]
    # v = the root (pi_v = 1, the update touches every leaf), then v a child of the root beside a
    # fifth leaf of mass 1 - pi_v, pi_v free: the paper's pi_v^2 factors are exercised
    for pi_v, outside in ((fld.one, []), (m[0] / (m[0] + m[1]), [m[1] / (m[0] + m[1])])):
        f = [pi_v * qv[0] * within[0], pi_v * qv[0] * within[1], pi_v * qv[1] * within[2],
             pi_v * qv[1] * within[3]] + outside
        z = qv[0] * w[0] + qv[1] * w[1]
        new_q = [qv[0] * w[0] / z, qv[1] * w[1] / z]
        f_new = [f[0] * new_q[0] / qv[0], f[1] * new_q[0] / qv[0], f[2] * new_q[1] / qv[1],
                 f[3] * new_q[1] / qv[1]] + outside
        expect(sum(f_new, fld.zero) == 1, "the update does not keep a distribution")
        delta = [new_q[0] - qv[0], new_q[1] - qv[1]]
        C = [within[0] ** 2 + within[1] ** 2, within[2] ** 2 + within[3] ** 2]  # ||r_{v,j}||^2
        paper = 2 * pi_v ** 2 * sum((dj * qj * cj for dj, qj, cj in zip(delta, qv, C)), fld.zero) \
            + pi_v ** 2 * sum((dj ** 2 * cj for dj, cj in zip(delta, C)), fld.zero)
        sq = sum((x * x for x in f), fld.zero)
        sq_new = sum((x * x for x in f_new), fld.zero)
        expect(sq_new - sq == paper, "||p'||^2 - ||p||^2 differs from the paper's expression")
        for y in range(len(f)):  # B(p, y) = 1 - 2 p_y + ||p||^2; outside Y_v, p_y does not move
            change = (1 - 2 * f_new[y] + sq_new) - (1 - 2 * f[y] + sq)
            expect(change == paper - 2 * (f_new[y] - f[y]), "Brier change formula fails")
    # Not branch-local: same branch probabilities, different within-child laws, same update.
    def brier_change(within_left):
        p = [F(1, 2) * within_left, F(1, 2) * (1 - within_left), F(1, 4), F(1, 4)]
        p_new = [p[0] * F(3, 2), p[1] * F(3, 2), p[2] / 2, p[3] / 2]  # q_(v,L): 1/2 -> 3/4
        return sum(x * x for x in p_new) - sum(x * x for x in p)
    expect(brier_change(F(1, 2)) != brier_change(F(9, 10)), "Brier change did not depend on C_(v,j)")
    return Evidence(PROVED, "exact rational functions on the four-leaf tree, update at the root, and at a child "
                    "of the root with pi_v free beside a fifth leaf; the counterexample: Brier changes 3/16 vs "
                    "69/400 for the same branch update (log loss: identical)",
                    scope=dict(symbolic=["Brier change"], trees="four-leaf (root), five-leaf (v below the root)"))


def _log_loss(dist, predictions, ctx) -> object:
    """``E[-log f(X)_Y]`` of ``predictions`` (decimal strings or floats), at ``ctx``'s precision."""
    total = ctx.mpf(0)
    for atom, row in zip(dist.atoms, predictions):
        for y, e in enumerate(atom.label_law(dist.tree.K)):
            if e:
                total -= ctx.mpf(atom.weight.numerator) / atom.weight.denominator * ctx.mpf(e.numerator) / \
                    e.denominator * ctx.log(ctx.mpf(row[y]))
    return total


@claim("Sec. 3.2 (Thm 3.5), App. E.2", "HUC-Boost (Algorithm 1) decreases the population log loss at every update by "
       "at least alpha Gamma - alpha^2 Lambda / 2 >= eps^2 / 2, stops within ceil(2 L_log(f_0) / eps^2) updates, "
       "and returns f_T with HUC <= eps")
def check_theorem_3_5_on_boosting_runs():
    """huc_ref.boost on both backends (the certified engine and float64), on exact populations over every
    tree shape up to 4 leaves with shuffled label orders; each conclusion recomputed independently: the log
    loss at 40 digits from the predictions, the update bound from L_log(f_0), the final HUC by an exact
    audit of the final predictions."""
    import mpmath

    from huc_ref import FiniteDistribution, audit, boost
    rng = random.Random(35)
    ctx = mpmath.MPContext()  # a private context: no global precision is touched
    ctx.dps = 40
    eps = F(1, 25)
    runs = updates = 0
    for shape in tree_shapes(4):
        tree = shape_tree(shape)
        if not tree.branching_nodes:
            continue
        tree = shuffled_labels(tree, rng)
        dist, us = random_rational_case(rng, tree, 4)
        L0 = _log_loss(dist, [[ctx.mpf(x.numerator) / x.denominator for x in a.p] for a in dist.atoms], ctx)
        bound = int(ctx.ceil(2 * L0 / (ctx.mpf(eps.numerator) / eps.denominator) ** 2))
        for engine in ("exact", "fast"):
            run = boost(dist, us, engine=engine, method="huc", epsilon=eps, max_updates=bound + 5)
            runs += 1
            updates += len(run.updates)
            expect(run.bound_updates == bound,
                   f"{engine}: the update bound {run.bound_updates}, not ceil(2 L0 / eps^2) = {bound}")
            tol = ctx.mpf(10) ** -15 if engine == "exact" else ctx.mpf(10) ** -9
            for t, u in enumerate(run.updates):
                g, lam, alpha = (ctx.mpf(u[k]) for k in ("gamma", "lambda", "alpha"))
                promised = alpha * g - alpha ** 2 * lam / 2
                before, after = ctx.mpf(u["log_loss_before"]), ctx.mpf(u["log_loss_after"])
                expect(after <= before - promised + tol, f"{engine} update {t}: L fell by {before - after}, "
                                                         f"less than alpha Gamma - alpha^2 Lambda / 2 = {promised}")
                expect(promised >= ctx.mpf(eps.numerator) ** 2 / eps.denominator ** 2 / 2 - tol,
                       f"{engine} update {t}: the promised decrease {promised} is below eps^2 / 2")
            expect(len(run.updates) <= bound, f"{engine}: {len(run.updates)} updates, more than {bound}")
            expect(run.stopped == "tolerance", f"{engine}: stopped by {run.stopped!r}, not by the tolerance")
            final = _log_loss(dist, run.predictions, ctx)
            expect(abs(final - ctx.mpf(run.final["log_loss"])) <= tol * 10,
                   f"{engine}: the final log loss {run.final['log_loss']} is not the predictions' {final}")
            rows = [[F(str(x)) for x in row] for row in run.predictions]
            again = FiniteDistribution(tree, [{"weight": a.weight, "c": a.c, "p": [x / sum(r) for x in r],
                                               "eta": a.eta} for a, r in zip(dist.atoms, rows)], dist.subgroups)
            huc = audit(again, us).huc.sup
            expect(huc <= eps + F(1, 10**6), f"{engine}: HUC(f_T) = {float(huc)} > eps (exact re-audit)")
    return Evidence(SAMPLED, f"{runs} runs ({updates} updates) on {runs // 2} exact populations over every tree "
                             "shape with 2-4 leaves, labels shuffled; both backends",
                    scope=dict(runs=runs, updates=updates, shapes=len(tree_shapes(4)), max_leaves=4,
                               labels_shuffled=True, backends=["exact", "fast"]))


def _exact_rows(rows):
    """Rows of decimal strings or floats as exact rationals, each renormalised to sum to 1."""
    out = []
    for row in rows:
        r = [F(str(x)) for x in row]
        out.append([x / sum(r) for x in r])
    return out


def _largest_violations(dist, us, rows, method):
    """Per node id (``None`` for the root candidate of UC) the largest sup of an exact audit of the
    predictions ``rows`` (Algorithm 2 on the population with ``p`` replaced)."""
    from huc_ref import FiniteDistribution, audit
    again = FiniteDistribution(dist.tree, [{"weight": a.weight, "c": a.c, "p": r, "eta": a.eta}
                                           for a, r in zip(dist.atoms, rows)], dist.subgroups)
    best: dict = {}
    for row in audit(again, us).candidates:
        if (row.node is None) == (method == "uc"):
            key = None if row.node is None else dist.tree.id(row.node)
            best[key] = max(best.get(key, F(0)), row.sup)
    return best


def _boost_cases(rng):
    """Exact populations for the boosting checks, with whether their predictions are generic.

    Every tree shape with 2-4 leaves (labels shuffled; subgroups with weights 1, 0 and -1/2, so some
    atoms are never moved; every atom its own prediction) with a table utility and the families whose
    decisions read the prediction (rank, top-k, top-1 at depth 1): generic, so no two scores tie exactly
    after an update and an audit of the predictions rounded to 30 digits sees the run's intervals.  Then
    one population of equal uniform predictions, where every decision is an exact tie that only exact
    arithmetic resolves (and rounded predictions cannot be audited faithfully)."""
    from huc_ref import FiniteDistribution, Rank, Top1AtDepth, TopK
    for shape in tree_shapes(4):
        tree = shape_tree(shape)
        if not tree.branching_nodes:
            continue
        tree = shuffled_labels(tree, rng)
        dist, us = random_rational_case(rng, tree, 4, n_utilities=1)
        raws = [[rng.randint(1, 9) for _ in tree.labels] for _ in dist.atoms]
        dist = FiniteDistribution(tree, [{"weight": a.weight, "c": a.c, "p": [F(x, sum(r)) for x in r], "eta": a.eta}
                                         for a, r in zip(dist.atoms, raws)], dist.subgroups)
        vec = [F(rng.randint(-4, 4), 4) for _ in tree.labels]
        us.update(rank=Rank(tree, vec), top=TopK(tree, 1 + rng.randrange(tree.K)), depth=Top1AtDepth(tree, 1))
        yield dist, us, True
    tree = shuffled_labels(FOUR, rng)
    dist = FiniteDistribution(tree, [{"weight": F(1, 3), "p": [F(1, 4)] * 4, "eta": eta} for eta in
                                     ([F(1, 2), 0, F(1, 4), F(1, 4)], [0, F(1, 8), F(3, 8), F(1, 2)], [F(1, 4)] * 4)])
    yield dist, {"rank": Rank(tree, [1, 0, 1, 0]), "top": TopK(tree, 2), "depth": Top1AtDepth(tree, 1)}, False


def _check_run_record(run, step, tau, where, tol):
    """A run's own record against the paper: it stopped at the tolerance ``tau``; the decrease floor
    (eq. (101) with |Gamma| > tau, Lambda <= 1: Thm 3.5's tau^2/2, a fixed a's a tau - a^2/2) and the
    update bound ceil(L_log(f_0) / floor) recomputed; each step alpha = Gamma / Lambda (adaptive) or
    +-a (fixed) with its promised decrease above the floor; Theorem 3.5's record holding."""
    expect(run.stopped == "tolerance", f"{where}: stopped by {run.stopped!r}")
    floor = tau ** 2 / 2 if step == "adaptive" else step * tau - step ** 2 / 2
    expect(run.theorem_3_5["decrease_at_least"] == f"{floor}",
           f"{where}: the decrease floor {run.theorem_3_5['decrease_at_least']}, not {floor} (Thm 3.5, H.1)")
    expect(abs(run.bound_updates - float(run.initial["log_loss"]) / floor) <= 1 + 1e-6,
           f"{where}: the update bound {run.bound_updates}, not ceil(L0 / {floor}) (Thm 3.5, H.1)")
    for t, u in enumerate(run.updates):
        if step == "adaptive":  # Algorithm 1's step alpha = Gamma / Lambda
            g, lam, alpha = (float(F(str(u[key]))) for key in ("gamma", "lambda", "alpha"))
            expect(abs(alpha - g / lam) <= 1e-6 * (1 + abs(alpha)),
                   f"{where} update {t}: alpha {alpha}, not Gamma / Lambda = {g / lam}")
        else:
            expect(abs(abs(F(str(u["alpha"]))) - step) <= tol, f"{where} update {t}: alpha {u['alpha']}")
            expect(float(u["guaranteed_decrease"]) >= float(floor) - tol,
                   f"{where} update {t}: promised decrease {u['guaranteed_decrease']} < {floor}")
    expect(run.theorem_3_5["holds"] and run.theorem_3_5["quadratic_bound_every_update"],
           f"{where}: Theorem 3.5's record {run.theorem_3_5}")


def _check_audit_log(run, dist, us, method, select, tau, generic, where, tol):
    """The run's audit log rebuilt: on generic populations, at each audit the largest violation of the
    predictions then (the run's rules replayed, audited exactly) decides whether it updated, and an
    update's Gamma is that violation; the final predictions leave none above ``tau``; the order of the
    audits is the schedule's (:func:`_schedule_holds`)."""
    from huc_ref.replay import replay
    tree = dist.tree
    done, log = 0, []
    prefixes = [P for _, P in replay(run, dist, us)] if generic else []  # after 0, 1, ... updates
    for node, updated in run.audits:
        log.append((None if node is None else tree.id(node), updated))
        if generic:
            best = _largest_violations(dist, us, _exact_rows(prefixes[done]), method)
            top = max(best.values(), default=F(0)) if node is None else best.get(tree.id(node), F(0))
            if abs(top - tau) > tol:
                expect(updated == (top > tau), f"{where}: audit {len(log)} at {node} updated={updated} "
                                               f"but the largest violation there is {float(top)}")
            if updated:
                u = run.updates[done]
                expect(abs(abs(float(u["gamma"])) - float(top)) <= tol,
                       f"{where} update {done}: Gamma = {u['gamma']}, the largest violation is {float(top)}")
                expect(node is None or u["node"] == node, f"{where}: update {done} at {u['node']}, not {node}")
        done += updated
    expect(done == len(run.updates), f"{where}: {len(run.updates)} updates, {done} in the audit log")
    final = _largest_violations(dist, us, _exact_rows(run.predictions), method) if generic else {}
    expect(max(final.values(), default=F(0)) <= tau + F(1, 10**9),
           f"{where}: a violation of {float(max(final.values(), default=0))} > eps remains")
    expect(_schedule_holds(select, log, [tree.id(v) for v in tree.branching_nodes]),
           f"{where}: the audit log {log} is not {select}'s")


def _schedule_holds(select, log, branching):
    """Whether the audit log ``[(node id or None, updated), ...]`` follows the schedule ``select``:
    K.1's passes (the branching nodes in pre-order, each once per pass, ending with a pass without an
    update), drain (stay on a node while it is updated, then the next; stop after a clean cycle) or
    greedy (every candidate at each audit, until none exceeds eps).

    >>> _schedule_holds("passes", [(0, True), (1, False), (0, False), (1, False)], [0, 1])
    True
    >>> _schedule_holds("passes", [(0, True), (1, False)], [0, 1])  # a pass with an update is not the last
    False
    >>> _schedule_holds("drain", [(0, True), (0, False), (1, False)], [0, 1])
    True
    """
    flags = [x for _, x in log]
    n = len(branching)
    if select == "passes":
        return ([a for a, _ in log] == [branching[k % n] for k in range(len(log))] and len(log) % n == 0
                and not any(flags[-n:]))
    if select == "drain":
        at, quiet, want = 0, 0, []
        for updated in flags:
            want.append(branching[at])
            quiet = 0 if updated else quiet + 1
            at = at if updated else (at + 1) % n
        return ([a for a, _ in log] == want and quiet == n
                and "0" * n not in "".join("1" if x else "0" for x in flags[:-1]))
    return all(a is None for a, _ in log) and flags == [True] * (len(flags) - 1) + [False]


@claim("Sec. 3.2 (Algorithm 1), App. H (Algorithm 3, H.1), K.1", "Each HUC-Boost or UC-Boost update takes the largest "
       "violation of the current predictions (greedy) or audits the node K.1's pass is at (branching nodes in "
       "pre-order, each once per pass, updated only above eps; stop after a pass without an update); a fixed step "
       "a moves by +-a and decreases the loss by more than a eps - a^2/2 (H.1: tolerance 3 eps_H/4, step eps_H/2, "
       "eps_H^2/4 within ceil(4 L_log(f_0)/eps_H^2) updates); the run ends with every violation <= eps; the "
       "certified engine and float64 make the same decisions")
def check_boosting_runs_as_specified():
    """huc_ref.boost on both backends, HUC-Boost (greedy and K.1's passes, adaptive and fixed step) and
    UC-Boost, on exact populations (:func:`_boost_cases`).  Independently of the run, each update's
    candidate is compared with an exact audit (Algorithm 2, itself checked against brute force) of the
    predictions the run's rules give before it (replayed, huc_ref.replay); the passes' audit log is
    rebuilt from the definition; the two backends' decision sequences are compared."""
    from huc_ref import HUCError, boost
    eps = F(1, 20)
    tol = 1e-9
    runs = updates = 0
    big = F(1, 6)  # a fixed step takes up to L_log(f_0) / (a eps - a^2/2) updates: a larger eps for it
    configs = [("huc", "greedy", "adaptive", eps), ("huc", "passes", "adaptive", eps),
               ("huc", "drain", "adaptive", eps), ("huc", "greedy", big / 2, big),
               ("huc", "greedy", big / 2, 3 * big / 4),  # H.1 literally: tolerance 3 eps/4, step eps/2
               ("uc", "greedy", "adaptive", eps), ("uc", "greedy", big / 2, big)]
    expect(configs[4][2] * configs[4][3] - configs[4][2] ** 2 / 2 == big ** 2 / 4,
           "H.1's floor is eps^2/4")  # the paper's numbers, restated: tolerance 3 eps/4, step eps/2
    for case, (dist, us, generic) in enumerate(_boost_cases(random.Random(36))):
        for c, (method, select, step, tau) in enumerate(configs):
            decisions = {}
            # float64 runs every configuration; the certified engine (about 20 times slower) every other
            # one, alternating with the population, and every one on the population of exact ties
            for engine in ("exact", "fast") if not generic or (case + c) % 2 == 0 else ("fast",):
                run = boost(dist, us, engine=engine, method=method, select=select, step=step, epsilon=tau,
                            max_updates=200)
                where = f"{engine} {method} {select} step {step} on {dist.tree.to_json()}"
                _check_run_record(run, step, tau, where, tol)
                _check_audit_log(run, dist, us, method, select, tau, generic, where, tol)
                runs += 1
                updates += len(run.updates)
                decisions[engine] = [(u["subgroup"], u["utility"], u["node"], float(u["gamma"])) for u in run.updates]
            if len(decisions) == 2:
                a, b = decisions["exact"], decisions["fast"]
                expect(len(a) == len(b) and all(x[:3] == y[:3] and abs(x[3] - y[3]) <= tol for x, y in zip(a, b)),
                       f"{method} {select} step {step} on {dist.tree.to_json()}: the backends decide differently: "
                       f"{a} vs {b}")
    # the edges: a fixed step a >= 2 eps has no guarantee (Theorem 3.5 does not apply, only the cap bounds the
    # run); K.1's pass budget; a utility with no relevant node leaves nothing to do (HUC = 0); the working
    # precision is checked
    dist, us, _ = next(_boost_cases(random.Random(36)))
    wide = boost(dist, us, step=F(1, 5), epsilon=F(1, 10), max_updates=7)
    expect(not wide.theorem_3_5["applies"] and not wide.theorem_3_5["holds"] and wide.bound_updates == 7,
           f"a step of 2 eps: Theorem 3.5's record {wide.theorem_3_5}, bound {wide.bound_updates}")
    # K.1's budget, "at most 100 passes over the nodes with at least two children": with a budget of
    # two passes a run that needs more (the fifth population: ten passes over two nodes) stops after two
    dist4, us4, _ = list(_boost_cases(random.Random(36)))[4]
    n4 = len(dist4.tree.branching_nodes)
    free = boost(dist4, us4, select="passes", epsilon=eps, arithmetic="float64")
    short = boost(dist4, us4, select="passes", epsilon=eps, arithmetic="float64", max_passes=2)
    expect(len(free.audits) > 2 * n4 and short.stopped == "budget" and short.audits == free.audits[:2 * n4],
           f"a budget of 2 passes: stopped by {short.stopped!r} after {len(short.audits)} audits of {n4} nodes")
    from huc_ref import Table
    flat = boost(dist, {"flat": Table(dist.tree, [F(1, 2)] * dist.tree.K)}, epsilon=eps)
    expect(flat.updates == [] and flat.final["huc"] == "0" and flat.final["uc"] == "0",
           f"a constant utility: {len(flat.updates)} updates, final {flat.final}")
    try:
        boost(dist, us, digits=10)
    except HUCError:
        pass
    else:
        raise CheckFailed("digits = 10 accepted (the working precision is 15 to 2000 digits)")
    tails = _first_update_on_tails(boost, eps)
    return Evidence(SAMPLED, f"{runs} runs ({updates} updates): HUC-Boost greedy, K.1 passes and drain, adaptive and "
                             "fixed steps (H.1's among them), UC-Boost adaptive and fixed, float64 on every "
                             "configuration and the certified engine on every other one (and on the ties), on exact "
                             "populations over every shape of 2-4 leaves (labels shuffled) and one of exact ties; "
                             "every audit recomputed exactly; and the first update's atoms (its Lambda) on "
                             f"{len(tails)} golden vectors with entries near 1e-300, where scores differ below any "
                             "working precision",
                    scope=dict(runs=runs, updates=updates, max_leaves=4, labels_shuffled=True,
                               backends=["exact", "fast"], methods=["huc", "uc"], selects=["greedy", "passes", "drain"],
                               steps=["adaptive", "fixed eps/2"], vectors=tails))


def _first_update_on_tails(boost, eps) -> list:
    """Algorithm 1's direction (Sec. 3.2: "h_a^t(x) := c(x) 1{mu_u(f_t(x)) in I} Delta_{u,v}(f_t(x))")
    on the atoms the witness interval ``I`` holds, where scores differ by 1e-301 (golden vectors edge-float-tails and
    edge-hundred-class-tails): the first update is made on exact predictions, so its candidate is
    the exact audit's first largest node violation, and its ``Lambda = (1/4) E[J_v(Y) (max_j h_j -
    min_j h_j)^2]`` is that of the atoms whose exact scores lie in that witness (the certified
    engines once sorted such scores by rounding and moved 24 atoms for 9).  The vector ids checked."""
    from huc_ref import atom_terms, audit
    from huc_ref.formats import read_case
    from huc_ref.vectors import load_vectors
    done = []
    for v in load_vectors(None):
        if v["id"] not in ("edge-float-tails", "edge-hundred-class-tails"):
            continue
        case = read_case(v["case"])
        d, us, tree = case.distribution, case.utilities, case.tree
        best = None
        for c in audit(d, us).candidates:
            if c.node is not None and (best is None or c.sup > best.sup):
                best = c
        update = boost(d, us, engine="exact", epsilon=eps, max_updates=1).updates[0]
        expect((update["subgroup"], update["utility"], update["node"]) == (best.subgroup, best.utility, best.node),
               f"{v['id']}: the first update is at {update['node']}, the exact audit's largest violation "
               f"at {best.node}")
        u, a, k = us[best.utility], tree.id(best.node), d.subgroups.index(best.subgroup)
        lam = F(0)
        for i, (atom, t) in enumerate(zip(d.atoms, atom_terms(d, u, ()))):
            if best.interval[0] <= t.score <= best.interval[1] and atom.c[k]:
                h = [atom.c[k] * x for x in TreeDecomposition(tree, atom.p, u.values(atom.p, i)).Delta(a)]
                inside = sum((e for y, e in enumerate(atom.label_law(tree.K)) if tree.contains(a, y)), F(0))
                lam += atom.weight * inside * (max(h) - min(h)) ** 2 / 4
        expect(abs(F(update["lambda"]) - lam) < F(1, 10**15),
               f"{v['id']}: Lambda {update['lambda']} of the first update, {float(lam)} on the exact witness's atoms")
        done.append(v["id"])
    expect(len(done) == 2, f"the golden vectors with tails: {done}")
    return done
