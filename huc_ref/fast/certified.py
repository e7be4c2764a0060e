"""The certified state of the fast backend: HUC-Boost and UC-Boost in float64 with rigorous error
bounds (Sec. 3.2, App. E; docs/specification.md §4), the state of
:class:`huc_ref.fast.boost.FloatBackend` under the certified context
(:class:`huc_ref.fast.context.Certified`).

The state is exact, as docs/specification.md §4 asks: every atom's accumulated logits ``z_{v,j}``
(UC-Boost: ``z_y``), exact rationals, and the predictions are a fresh softmax of them,

    HUC: f(x)_y = p0_y prod_{v on path(y)} e^{z_{v,j}} / N_v,   N_v = sum_k q0_{v,k} e^{z_{v,k}}
    UC:  f(x)_y = p0_y e^{z_y} / N,                              N = sum_k p0_k e^{z_k},

evaluated in float64 with a bound ``rho`` on every entry's relative error that does not grow
with the number of updates: ``e^z`` (and every ``log``) is enclosed by Arb's ball arithmetic
(python-flint, :mod:`huc_ref.fast.enclosures`), every other operation is an IEEE-754 operation
bounded by Higham's ``gamma_n = n u / (1 - n u)``.  Given ``rho``:

* **decisions** (:class:`huc_ref.fast.choice.CertifiedChoice`): the fast audit takes every
  decision (utilities' choices, the order of scores, tie blocks) where its bound certifies it;
  the families decide the others on the exact state (:mod:`huc_ref.fast.boosted`).  The largest
  candidate, whether it exceeds ``epsilon`` and its witness interval are certified from a bound
  on every prefix sum.  What the context cannot decide goes to the judge (the certified engine,
  :class:`huc_ref.boost.Judge`) on the same exact state, for that choice only;
* **the step is exact**: the direction ``h`` is float64 on a dyadic grid
  (:func:`~huc_ref.fast.enclosures.on_grid`), ``Lambda`` exact for it, ``alpha`` float64
  (adaptive) or the exact fixed step, and ``z += alpha h`` exactly;
* **Theorem 3.5's inequalities** for the applied step are checked on rigorous enclosures:
  ``Gamma`` from its float value and error bound, the change of log loss from
  ``log f'_y - log f_y = alpha h_j - (log N' - log N)`` (exact in the state) with ``log N``
  enclosed by Arb, summed in exact rationals.

Reported numbers (sups, moments, log losses) are float64 values within their bounds; the
certified engine's 20-digit texts are what ``arithmetic="exact"`` gives.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..driver import Update, rational_gamma
from ..errors import HUCError
from ..rational import exact_dot, fraction_text
from .audit import dense_rows, result_rows
from .boost import direction
from .boosted import BoostedRows
from .choice import CertifiedChoice
from .context import UNDECIDED
from .enclosures import MARGIN, SCALE_BITS, exp_bounds, gamma, grid, log_ball, log_bounds
from .numbers import UNIT_ROUNDOFF, ExactRows

__all__: list = []  # (the certified context's state: reached through huc_ref.fast.context.Certified)


class CertifiedState:
    """The exact state of ``backend`` (:class:`huc_ref.fast.boost.FloatBackend` of a
    :class:`~huc_ref.distribution.FiniteDistribution`, its context certified) described in the
    module docstring: the backend's :meth:`choose` is :class:`~huc_ref.fast.choice.CertifiedChoice`'s,
    its :meth:`update` one exact step.

    >>> from huc_ref import FiniteDistribution, LabelTree, Table
    >>> from huc_ref.fast.boost import FloatBackend
    >>> from huc_ref.fast.context import Certified
    >>> from huc_ref.boost import Judge
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> b = FloatBackend.from_distribution(d, {"u": Table(t, [-1, 1, 1, 1])}, "huc", Fraction(1, 10),
    ...                                    numbers=Certified(Judge))
    >>> c = b.choose(None)
    >>> c.node, c.sup, c.exceeds, b.state.rho == 2.0 ** -53
    (0, 0.25, True, True)
    """

    def __init__(self, backend):
        if backend.dist is None:
            raise HUCError("dist: certified arithmetic needs a FiniteDistribution (exact atoms; "
                           "FiniteDistribution.from_floats reads float arrays exactly)", kind="type")
        b = backend
        self.dist, self.tree, self.ft, self.utilities, self.method = b.dist, b.tree, b.ft, b.utilities, b.method
        self.epsilon, self.numbers = Fraction(b.epsilon), b.numbers
        self.P0, self.E, self.w, self.C, self.W, self.star, self.p0 = b.P0, b.E, b.w, b.C, b.W, b.star, b.p0
        tree, K = self.tree, self.tree.K
        n, nodes = len(self.w), len(tree.nodes)
        self.P, self.moved = self.P0.copy(), np.zeros(n, dtype=bool)
        # the exact state: per atom the logit of every edge (HUC: the edge into node b; UC: leaf b), as
        # integers z = Z s (logit) with one exact scale s for the run: 2^-SCALE_BITS, times the fixed step
        self.z = np.full((n, nodes), 0, dtype=object)
        self.scale: Fraction | None = None
        self.F = np.ones((n, nodes + 1))  # e^{z} / N per edge (float64); the last column is 1 (padding)
        self.log_norm: dict = {}  # (atom, node) -> exact bounds of log N_v (absent: N_v = 1, z = 0)
        self.r_F = 0.0  # the largest relative error of a factor F so far
        if self.method == "huc":
            depth = max(len(tree.path_ids(y)) for y in range(K)) - 1
            self.paths = np.full((K, max(depth, 1)), nodes, dtype=np.int64)
            for y in range(K):
                edges = tree.path_ids(y)[1:]
                self.paths[y, :len(edges)] = edges
            self.pi0 = self.ft.subtree_sums(self.P0)  # pi0_a; q0_{v,k} = pi0_{v_k} / pi0_v (floats of p0)
        else:
            self.paths = np.array([[leaf] for leaf in tree.leaf_node_ids], dtype=np.int64)
            self.pi0 = None
        self.H = self.paths.shape[1]
        self.edges = []  # per node: the edges (parent, child) from the root down to it
        for a in range(nodes):
            parent = tree.parent_ids[a]
            self.edges.append(self.edges[parent] + ((parent, a),) if parent >= 0 else ())
        self.rho = UNIT_ROUNDOFF  # untouched rows: p0 rounded once
        self._exact_star: dict = {}
        self.version = np.zeros(n, dtype=np.int64)  # each row's updates so far (what the exact forms keep)
        # per utility: the atoms some update has changed it on, and the nodes whose updates never do
        self.changed = {name: np.zeros(n, dtype=bool) for name in self.utilities}
        self.unmoved = {name: {a: u.unmoved_by(a) for a in range(nodes)} for name, u in self.utilities.items()}
        self.loss = self._initial_loss()
        self.rows = BoostedRows(self)
        self.choice = CertifiedChoice(self)
        self.last_step = None

    # ------------------------------------------------------------------ the log loss
    def _initial_loss(self) -> tuple[Fraction, Fraction]:
        """``L_log(f_0) = -sum_i w_i sum_y eta_iy log p0_iy`` enclosed in exact rationals."""
        lo = hi = Fraction(0)
        cache: dict = {}
        for atom in self.dist.atoms:
            for p, e in zip(atom.p, atom.label_law(self.tree.K)):
                if not e:
                    continue
                if p not in cache:
                    cache[p] = log_ball(p)
                a, b = cache[p]
                we = atom.weight * e
                lo, hi = lo - we * b, hi - we * a
        return lo, hi

    def initial(self):
        lo, hi = self.loss
        return float((lo + hi) / 2), hi

    def choose(self, node):
        return self.choice.choose(node)

    def logit(self, i: int, b: int) -> Fraction:
        """Atom ``i``'s accumulated logit ``z`` of the edge into node ``b`` (UC-Boost: of leaf ``b``),
        exactly (App. E.1: ``z_{t+1} = z_t + alpha h``).

        >>> from huc_ref import FiniteDistribution, LabelTree, Table
        >>> from huc_ref.fast.boost import FloatBackend
        >>> from huc_ref.fast.context import Certified
        >>> from huc_ref.boost import Judge
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "a"}])
        >>> b = FloatBackend.from_distribution(d, {"u": Table(t, [0, 1])}, "huc", Fraction(1, 100),
        ...                                    numbers=Certified(Judge))
        >>> b.update(b.choose(None), None, None).rule[-1], b.state.logit(0, 1), b.state.logit(0, 2)
        (Fraction(-2, 1), Fraction(1, 1), Fraction(-1, 1))
        """
        return Fraction(0) if not self.z[i, b] else self.z[i, b] * self.scale

    def logits(self) -> dict:
        """Every moved atom's exact logits as the judge reads them (:meth:`huc_ref.boost.Judge.choose`):
        HUC-Boost: per branching node, its children's; UC-Boost: the leaves'."""
        tree, out = self.tree, {}
        branching = [tree.id(v) for v in tree.branching_nodes]
        for i in np.flatnonzero(self.moved).tolist():
            if self.method == "huc":
                out[i] = {a: [self.logit(i, b) for b in tree.child_ids[a]] for a in branching}
            else:
                out[i] = [self.logit(i, leaf) for leaf in tree.leaf_node_ids]
        return out

    # ------------------------------------------------------------------ one update
    def _star(self, a: int) -> list:
        """The exact label mass ``pi*_a`` of every atom (E.2's ``J_v``)."""
        if a not in self._exact_star:
            below = self.tree.label_ids_below(a)
            self._exact_star[a] = [sum((law[y] for y in below), Fraction(0))
                                   for law in (atom.label_law(self.tree.K) for atom in self.dist.atoms)]
        return self._exact_star[a]

    def _direction(self, members, choice):
        """The chosen candidate's direction ``h`` on the members on its dyadic grid (exponent ``E``),
        the children moved, and ``Gamma``'s float value, its error bound and the label masses inside
        (E.2: ``Gamma = E[<h, R>]`` for the applied ``h``)."""
        tree, ft, w, a = self.tree, self.ft, self.w, choice.node
        P, E = self.P[members], self.E[members]
        c = self.C[members, choice.subgroup][:, None]
        U = choice.values[members]
        K = tree.K
        if self.method == "huc":
            kids = list(tree.child_ids[a])
            pi = ft.subtree_sums(P, np.array([a] + kids))
            h, q = direction("huc", ft, P, U, c, pi, a)
            h, E_grid = grid(h)
            star_v, star_kids = self.star[members, a], self.star[members][:, kids]
            gamma_f = float((w[members] * (h * (star_kids - star_v[:, None] * q)).sum(axis=1)).sum())
            # q = pi_{v_j} / pi_v: relative error 2 (rho + gamma_K) + u (sums of positive entries, one division)
            scale = (w[members] * (np.abs(h) * (star_kids + star_v[:, None] * q)).sum(axis=1)).sum()
            err_q = 2.0 * (self.rho + gamma(K)) + UNIT_ROUNDOFF
            inside = self._star(a)
        else:
            kids = list(tree.leaf_node_ids)
            h, E_grid = grid(direction("uc", ft, P, U, c)[0])
            mean = (P * h).sum(axis=1, keepdims=True)
            gamma_f = float((w[members] * (E * (h - mean)).sum(axis=1)).sum())
            scale = (w[members] * ((E + P) * np.abs(h)).sum(axis=1)).sum()
            err_q = self.rho
            inside = None
        # Gamma = E[<h, R>] for the applied h (E.2): its float value, off by at most err_gamma (relative to
        # sum_i w_i sum_j |h_ij| (pi*_ij + pi*_iv q_ij): the weights' and label masses' roundings u and
        # u + gamma_K, q's err_q, each atom's products and sums gamma_{2K + 3}, the sum over atoms gamma_m)
        err_gamma = Fraction(MARGIN * (err_q + gamma(3 * K + len(members) + 8)) * float(scale))
        return h, E_grid, kids, gamma_f, err_gamma, inside

    def _curvature(self, members, h, inside) -> Fraction:
        """``Lambda = (1/4) E[J_v(Y) (max_j h_j - min_j h_j)^2]``, exact for the float ``h`` (E.2)."""
        hmax, hmin = h.max(axis=1).tolist(), h.min(axis=1).tolist()
        lam = Fraction(0)
        atoms = self.dist.atoms
        for i, top, bottom in zip(members.tolist(), hmax, hmin):
            mass = atoms[i].weight if inside is None else atoms[i].weight * inside[i]
            if mass and top != bottom:
                lam += mass * (Fraction(top) - Fraction(bottom)) ** 2
        lam /= 4
        if not lam:
            raise HUCError("boost: Lambda = 0 for a violated candidate (Lemma E.4 says impossible)", kind="internal")
        return lam

    def update(self, choice, fixed, floor):
        tree, k, a = self.tree, choice.subgroup, choice.node
        members = choice.members[self.C[choice.members, k] != 0]
        h, E_grid, kids, gamma_f, err_gamma, inside = self._direction(members, choice)
        g_lo, g_hi = Fraction(gamma_f) - err_gamma, Fraction(gamma_f) + err_gamma
        self.last_step = (members, h, g_lo, g_hi)  # (what tests/test_certified.py checks against 300 bits)
        lam = self._curvature(members, h, inside)
        if fixed is None and not self.moved[members].any():  # rounded from the exact Gamma / Lambda (rational_gamma)
            exact = {i: [Fraction(x) for x in row] for i, row in zip(members.tolist(), h.tolist())}
            alpha = Fraction(float(rational_gamma(self.dist, self.method, a, exact) / lam))
        elif fixed is None:
            alpha = Fraction(gamma_f / float(lam))
        else:  # alpha = sign(Gamma) a (App. H.1): the sign certified by Gamma's enclosure, or one HUCError
            sign = self.numbers.sign(Fraction(gamma_f), err_gamma)
            if sign is UNDECIDED or not sign:
                raise HUCError("boost: the sign of Gamma could not be certified in float64", kind="undecided")
            alpha = fixed if sign > 0 else -fixed
        # alpha Gamma - alpha^2 Lambda / 2, enclosed (alpha and Lambda exact)
        ends = sorted([alpha * g_lo, alpha * g_hi])
        p_lo, p_hi = ends[0] - alpha ** 2 * lam / 2, ends[1] - alpha ** 2 * lam / 2
        self._step(members, kids, h, E_grid, alpha, fixed)
        change = self._rows_again(members, kids, h, a if self.method == "huc" else None, alpha)
        loss = self.loss
        after = (loss[0] + change[0], loss[1] + change[1])
        self.loss = after
        bound_ok = change[1] + p_hi <= 0  # eq. (101) for the applied step: after <= before - promised
        decreased = change[1] < 0
        floor_ok = None if floor is None else p_lo > floor
        record = {"subgroup": self.dist.subgroups[k], "utility": choice.utility,
                  "node": None if a is None else tree.nodes[a], "interval": choice.interval or [],
                  "gamma": choice.moment, "lambda": float(lam), "alpha": fraction_text(alpha),
                  "log_loss_before": float(sum(loss) / 2), "log_loss_after": float(sum(after) / 2),
                  "guaranteed_decrease": float((p_lo + p_hi) / 2), "quadratic_bound_holds": bool(bound_ok),
                  "log_loss_decreased": bool(decreased)}
        lo, hi = (choice.interval or [0.0, 0.0])
        rule = (k, choice.utility, a, Fraction(lo), Fraction(hi), alpha)
        return Update(record, rule, bool(bound_ok), bool(decreased), None if floor_ok is None else bool(floor_ok))

    def _step(self, members, kids, h, E, alpha, fixed) -> None:
        """``z += alpha h`` on the members' edges ``kids``, exactly: ``h`` is a multiple of ``2^E``,
        ``alpha`` a float64 or the fixed step, so the increment is an integer multiple of the run's
        scale."""
        if self.scale is None:
            self.scale = (Fraction(1) if fixed is None else Fraction(fixed)) / (1 << SCALE_BITS)
        if fixed is None:  # alpha = p / 2^t, h = k 2^E: alpha h = k p 2^(E - t)
            p, q = float(alpha).as_integer_ratio()
            shift = SCALE_BITS + E - (q.bit_length() - 1)
            unit = p << shift if shift >= 0 else None
        else:  # alpha = +-fixed: alpha h = +-fixed k 2^E
            shift = SCALE_BITS + E
            unit = (1 if alpha > 0 else -1) << shift if shift >= 0 else None
        if unit is None or Fraction(fixed if fixed is not None else 1) / (1 << SCALE_BITS) != self.scale:
            raise HUCError("boost: the step left the exact scale of the logits (internal)", kind="internal")
        k = np.rint(np.ldexp(h, -E)).astype(np.int64).astype(object)  # exact: |k| <= 2^41
        self.z[np.ix_(members, kids)] = self.z[np.ix_(members, kids)] + k * unit

    def _rows_again(self, members, kids, h, a, alpha):
        """The members' factors and rows again (a fresh softmax of the exact logits) with their error
        bound, and the exact bounds of the log loss's change:
        ``-sum_i w_i (alpha sum_j pi*_{v_j} h_j - pi*_v (log N' - log N))`` (UC: ``pi* = eta``)."""
        block = self.z[np.ix_(members, kids)]
        lo, hi = exp_bounds(block.ravel().tolist(), self.scale)
        lo, hi = lo.reshape(block.shape), hi.reshape(block.shape)
        if not (np.all(lo > 0) and np.all(np.isfinite(hi))):
            raise HUCError("boost: a logit left float64's range (e^z below 2.2e-308 or beyond 1.8e+308); "
                           "certified float64 cannot hold the prediction: use engine='exact'", kind="undecided")
        r_E = float(((hi - lo) / lo).max()) + UNIT_ROUNDOFF  # (hi is used: off by at most (hi - lo) / lo)
        q0 = self.P0[members] if a is None else self.pi0[np.ix_(members, kids)] / self.pi0[members, a][:, None]
        err_q0 = UNIT_ROUNDOFF if a is None else 2.0 * (UNIT_ROUNDOFF + gamma(self.tree.K)) + UNIT_ROUNDOFF
        N = (q0 * hi).sum(axis=1)
        r_N = MARGIN * (err_q0 + r_E + gamma(len(kids) + 1))
        self.r_F = max(self.r_F, MARGIN * (r_E + r_N + UNIT_ROUNDOFF))
        if self.r_F > 1e-9:
            raise HUCError("boost: the float64 error bound of the predictions grew past 1e-9 (a logit beyond "
                           "float64's reach?); use engine='exact'", kind="undecided")
        self.F[np.ix_(members, kids)] = hi / N[:, None]
        self.P[members] = self.P0[members] * self.F[members][:, self.paths].prod(axis=2)
        self.moved[members] = True
        self.version[members] += 1
        root = self.tree.id(self.tree.root)
        for name, changed in self.changed.items():
            if not self.unmoved[name][root if a is None else a]:
                changed[members] = True
        self.rho = MARGIN * (UNIT_ROUNDOFF + self.H * self.r_F + gamma(self.H + 1))
        return self._loss_change(members, kids, h, a, alpha, N, r_N)

    def _loss_change(self, members, kids, h, a, alpha, N, r_N):
        """``log N' - log N`` per member, from enclosures of ``N'`` and the stored bounds of ``log N``,
        summed with ``alpha h``'s part in exact rationals over one common denominator
        (:func:`huc_ref.rational.exact_dot`): the exact bounds of the log loss's change."""
        node = -1 if a is None else a
        new_lo, new_hi = log_bounds(np.nextafter(N * (1 - r_N), 0), np.nextafter(N * (1 + r_N), np.inf))
        star = None if a is None else self._star(a)
        E = self.E[members]
        if a is not None:
            S = (self.star[members][:, kids] * h).sum(axis=1)
            absS = (self.star[members][:, kids] * np.abs(h)).sum(axis=1)
        else:
            S, absS = (E * h).sum(axis=1), (E * np.abs(h)).sum(axis=1)
        err_S = MARGIN * (2 * UNIT_ROUNDOFF + gamma(self.tree.K + len(kids) + 2)) * absS
        # sum_i w_i (alpha (s_i +- e_i) - mass_i (log N'_i - log N_i)) at its ends
        members, atoms = members.tolist(), self.dist.atoms
        zero = (Fraction(0), Fraction(0))
        old_lo, old_hi = zip(*(self.log_norm.get((i, node), zero) for i in members))
        for t, i in enumerate(members):
            self.log_norm[i, node] = (new_lo[t], new_hi[t])
        w = [atoms[i].weight for i in members]
        wm = w if star is None else [x * star[i] for x, i in zip(w, members)]
        ws, we = (exact_dot(w, (Fraction(x) for x in v.tolist())) for v in (S, err_S))
        a_lo, a_hi = sorted([alpha * (ws - we), alpha * (ws + we)])  # (e_i >= 0: the ends of every member's)
        d_lo = exact_dot(wm, new_lo) - exact_dot(wm, old_hi)
        d_hi = exact_dot(wm, new_hi) - exact_dot(wm, old_lo)
        return d_lo - a_hi, d_hi - a_lo

    # ------------------------------------------------------------------ the end
    def final(self):
        masses = self.ft.subtree_sums(self.P)
        exact = ExactRows(self.P)
        tables = {name: dense_rows(self.ft, self.P, self.E, self.W, u, masses, self.star, exact=exact)
                  for name, u in self.utilities.items()}
        final = result_rows(self.tree, tables, self.dist.subgroups, len(self.w), False)
        return {"uc": final.uc.sup, "huc": final.huc.sup, "log_loss": float(sum(self.loss) / 2),
                "log_loss_bounds": [float(self.loss[0]), float(self.loss[1])], "relative_error": self.rho}

    def predictions(self):
        return self.P.tolist()
