"""The exact forms of a certified run's boosted rows (docs/specification.md §4).

A boosted row's prediction is a fresh softmax of exact logits (:mod:`huc_ref.fast.certified`),

    HUC: f_y = p0_y prod_{v on path(y)} e^{z_{v,j}} / N_v,   UC: f_y = p0_y e^{z_y} / N,

irrational after the first ``exp``.  What a decision asks of it is answered here exactly
where the factors ``e^z / N`` cancel or share a sign (a linear form ``sum_y f_y v_y`` grouped by
factor, :meth:`BoostedRows.coefficients`), else on Arb's enclosures at the certified context's
precisions (:meth:`BoostedRows.prediction_ball`, :meth:`~huc_ref.fast.context.Certified.refine`),
else :class:`~huc_ref.fast.context.Undecided`.  A family's decision on such a row is its own
:meth:`~huc_ref.utilities.Utility.decide` hook, reading the row through :class:`BoostedRow`; the
fast audit reads the rows through :class:`AuditRows`.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np

from ..rational import shared_sign
from ..utilities import Utility, subtree_sums_by
from .context import UNDECIDED, Undecided, flint
from .enclosures import exact_ball
from .numbers import ExactRows, rounding_bound

__all__: list = []  # (the certified state's internals: reached through huc_ref.fast.context.Certified)


class BoostedRows:
    """The exact forms of the rows of a certified state (``state``: :class:`huc_ref.fast.certified.CertifiedState`,
    read live: its logits ``z``, their ``scale``, the float rows ``P`` and their bound ``rho``, each
    row's ``version``), with what they cost kept until the row moves again: the values the
    families decide, the scores of the tie blocks and the Arb enclosures of the predictions."""

    def __init__(self, state):
        self.state, self.tree, self.method, self.p0 = state, state.tree, state.method, state.p0
        self.numbers = state.numbers
        self._edges = state.edges
        self._balls: dict = {}  # (atom, bits) -> (version, its prediction in Arb), :meth:`prediction_ball`
        self._values: dict = {}  # (utility, atom) -> (version, its values), :meth:`values`
        self._pi0_exact: dict = {}  # atom -> the exact subtree masses of p0, :meth:`pi0`
        self._uc_masses: dict = {}  # atom -> (version, p0's mass per logit), :meth:`masses`
        self._scores: dict = {}  # (utility name, atom) -> (version, its exact score), :meth:`score`

    # ------------------------------------------------------------------ the factors of a row
    def pi0(self, i: int) -> list:
        """Atom ``i``'s exact initial masses ``pi0_a`` of every node (A.3), computed once."""
        if i not in self._pi0_exact:
            self._pi0_exact[i] = subtree_sums_by(self.tree, self.p0[i], sum)  # (C.1, exactly)
        return self._pi0_exact[i]

    def path_to(self, a: int) -> list:
        """The nodes from below the root down to node ``a`` (pre-order ids; the edges into them)."""
        return [b for _, b in self._edges[a]]

    def moved_splits(self, z) -> set:
        """The nodes whose split some update has moved: the parents of the edges of nonzero logit ``z``."""
        return {self.tree.parent_ids[b] for b in np.flatnonzero(z != 0).tolist()}

    def factor_key(self, a: int, z, moved: set) -> tuple:
        """The factors ``e^{z_b} / N_p`` on the path down to node ``a`` (HUC-Boost: the moved splits
        ``p`` with the logit of the child ``b`` taken, :meth:`moved_splits`), as a key: nodes with one
        key have one factor, exactly; ``()``: none, ``a``'s mass is ``pi0_a``."""
        return tuple((p, z[b]) for p, b in self._edges[a] if p in moved)

    def signature(self, i: int):
        """``y -> `` the factors of leaf ``y``'s boosted probability over ``p0_y``, as a key: the
        updated nodes on its path with the logit of the child taken (UC-Boost: ``z_y``).  Leaves
        with one key have one factor ``prod e^{z} / N``, exactly; a leaf below no updated node has
        the key ``()`` and its probability is ``p0_y``."""
        z, tree = self.state.z[i], self.tree
        if self.method == "uc":
            leaves = tree.leaf_node_ids
            return lambda y: ("uc", z[leaves[y]])
        moved, leaves = self.moved_splits(z), tree.leaf_node_ids
        return lambda y: self.factor_key(leaves[y], z, moved)

    def coefficients(self, i: int, v) -> dict:
        """A linear form ``sum_y f_y v_y`` of atom ``i``'s boosted prediction grouped by factor
        (:meth:`signature`): the nonzero rational coefficients ``sum_{y in s} p0_y v_y``.  Under
        HUC-Boost the labels below a node ``a`` on which ``v`` is constant (the highest such) are
        one term: their predictions sum to ``pi0_a`` times the factors above ``a`` (below it every
        split is a distribution), so the logits below ``a`` do not enter.

        >>> from huc_ref import FiniteDistribution, LabelTree, Table
        >>> from huc_ref.fast.boost import FloatBackend
        >>> from huc_ref.fast.context import Certified
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["y1", "y2"], "b": ["y3", "y4"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "label": "y1"}])
        >>> state = FloatBackend.from_distribution(d, {"u": Table(t, [1, 1, 0, 0])}, "huc", Fraction(1, 100),
        ...                                        numbers=Certified()).state
        >>> state.z[0, t.id("y1")], state.z[0, t.id("a")] = 5, 3  # a's split and the root's moved
        >>> state.rows.coefficients(0, [1, 1, 0, 0])  # y1 + y2 = pi0_a e^{z_a} / N_r: a's split cancels
        {((0, 3),): Fraction(1, 2)}
        """
        out: dict = {}
        for s, mass, x in self.regions(i, v):
            if x:
                out[s] = out.get(s, 0) + mass * x
        return {s: c for s, c in out.items() if c}

    def regions(self, i: int, v):
        """The parts of the labels :meth:`coefficients` sums over, as ``(factor key, p0 mass, value)``:
        under HUC-Boost the highest nodes below which ``v`` is constant (``pi0_a``), else the labels."""
        if self.method == "huc":
            z = self.state.z[i]
            moved, pi = self.moved_splits(z), self.pi0(i)
            for a, _, x in self.constant_below(v):
                if pi[a]:
                    yield self.factor_key(a, z, moved), pi[a], x
            return
        sig, p = self.signature(i), self.p0[i]
        for y, x in enumerate(v):
            if p[y]:
                yield sig(y), p[y], x

    def masses(self, i: int, v) -> dict:
        """Each factor's ``p0`` mass in :meth:`regions` (under UC-Boost the labels of one logit, the
        same for every ``v``: kept until the row moves again)."""
        version = self.state.version[i]
        if self.method != "huc" and self._uc_masses.get(i, (None,))[0] == version:
            return self._uc_masses[i][1]
        out: dict = {}
        for s, mass, _ in self.regions(i, v):
            out[s] = out.get(s, 0) + mass
        if self.method != "huc":
            self._uc_masses[i] = (version, out)
        return out

    def rational_form(self, i: int, v, c: dict | None = None):
        """``sum_y f_y v_y`` on atom ``i``'s boosted row where it is rational: every factor's
        coefficient (:meth:`coefficients`, or ``c``) is ``m`` times the mass it multiplies
        (:meth:`masses`), one ``m`` for all of them (none moved: ``m = 0``), so that, as ``f``
        sums to 1, ``sum_y f_y v_y = m + sum_y f_y (v_y - m)`` leaves only the unmoved labels'
        rational part; else None.

        >>> from huc_ref import FiniteDistribution, LabelTree, Table
        >>> from huc_ref.fast.boost import FloatBackend
        >>> from huc_ref.fast.context import Certified
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["y1", "y2"], "b": ["y3", "y4"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "label": "y1"}])
        >>> state = FloatBackend.from_distribution(d, {"u": Table(t, [1, 1, 0, 0])}, "huc", Fraction(1, 100),
        ...                                        numbers=Certified()).state
        >>> state.z[0, t.id("a")] = 3  # the root's split moved: a and b hold irrational masses
        >>> state.rows.rational_form(0, [1, 1, 0, 0]) is None, state.rows.rational_form(0, [0, 1, 0, 1])  # y2 + y4
        (True, Fraction(1, 2))
        """
        c = self.coefficients(i, v) if c is None else c
        c0 = c.get((), Fraction(0))
        if all(s == () for s in c):
            return c0
        masses = self.masses(i, v)
        means = {c.get(s, Fraction(0)) / mass for s, mass in masses.items() if s != ()}  # per factor, v's mean
        if len(means) > 1:
            return None
        m = means.pop()  # every factor's coefficient is m times its mass
        return m + c0 - m * masses.get((), Fraction(0))

    def constant_below(self, v) -> list:
        """The highest nodes below which ``v`` is constant, as ``(node, its labels, the value)``:
        a partition of the labels."""
        tree, out = self.tree, []
        stack = [tree.id(tree.root)]
        while stack:
            a = stack.pop()
            ys = tree.label_ids_below(a)
            if len({v[y] for y in ys}) == 1:
                out.append((a, ys, v[ys[0]]))
            else:
                stack.extend(tree.child_ids[a])
        return out

    # ------------------------------------------------------------------ Arb's enclosures
    def prediction_ball(self, i: int, bits: int) -> list:
        """Atom ``i``'s boosted prediction ``f_i`` (the module docstring's fresh softmax of its exact
        logits) as Arb balls at ``bits`` of precision (python-flint: rigorous enclosures).

        >>> from huc_ref import FiniteDistribution, LabelTree, Table
        >>> from huc_ref.fast.boost import FloatBackend
        >>> from huc_ref.fast.context import Certified
        >>> from huc_ref.boost import Judge
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "a"}])
        >>> b = FloatBackend.from_distribution(d, {"u": Table(t, [0, 1])}, "huc", Fraction(1, 100),
        ...                                    numbers=Certified(Judge))
        >>> _ = b.update(b.choose(None), None, None)  # z = (1, -1): f = (e, 1/e) / (e + 1/e)
        >>> f = b.state.rows.prediction_ball(0, 128)
        >>> e2 = flint().arb(2).exp()
        >>> bool((f[0] - e2 / (e2 + 1)).abs_upper() < 1e-15), (f[0] + f[1]).contains(1), bool(f[0].rad() < 2.0 ** -120)
        (True, True, True)
        """
        version, found = self._balls.get((i, bits), (None, None))
        if version == self.state.version[i]:
            return found
        found = self._balls[i, bits] = (self.state.version[i], self._fresh_ball(i, bits))
        return found[1]

    def _fresh_ball(self, i: int, bits: int) -> list:
        arb, tree, p, z, scale = flint(), self.tree, self.p0[i], self.state.z[i], self.state.scale
        num, den = (scale.numerator, scale.denominator) if scale is not None else (0, 1)

        def q(x):
            return arb.fmpq(x.numerator, x.denominator)

        with arb.ctx.workprec(bits):
            def e(b):
                return exact_ball(arb, int(z[b]) * num, den).exp() if z[b] else arb.arb(1)
            if self.method == "uc":
                w = [q(p[y]) * e(b) for y, b in enumerate(tree.leaf_node_ids)]
                total = sum(w[1:], w[0])
                return [x / total for x in w]
            norms = {}
            pi = self.pi0(i)
            for a in self.moved_splits(z):
                parts = [q(pi[b] / pi[a]) * e(b) for b in tree.child_ids[a]]
                norms[a] = sum(parts[1:], parts[0])
            out = []
            for y in range(tree.K):
                f = arb.arb(q(p[y]))
                for a, b in self._edges[tree.leaf_node_ids[y]]:
                    if a in norms:
                        f = f * e(b) / norms[a]
                out.append(f)
            return out

    def mass_ball(self, i: int, bits: int, a: int):
        """``pi_a(f_i)`` (C.1) as an Arb ball at ``bits``: the sum of the enclosures of ``a``'s labels."""
        f, ys = self.prediction_ball(i, bits), self.tree.label_ids_below(a)
        with flint().ctx.workprec(bits):
            return sum((f[y] for y in ys[1:]), f[ys[0]])

    def score_ball(self, u: Utility, i: int, bits: int):
        """``mu_u(f_i)`` of atom ``i``'s boosted row as an Arb ball at ``bits`` (Sec. 2.1): top-1
        correctness at depth ``l`` the largest mass of the depth-``l`` cut (K.2), whichever
        candidate is chosen; otherwise ``sum_y f_y u_y`` with the values decided exactly
        (:meth:`values`).

        >>> from huc_ref import FiniteDistribution, LabelTree, Top1AtDepth
        >>> from huc_ref.fast.boost import FloatBackend
        >>> from huc_ref.fast.context import Certified
        >>> from huc_ref.boost import Judge
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "a"}])
        >>> b = FloatBackend.from_distribution(d, {"u": Top1AtDepth(t, 1)}, "huc", Fraction(1, 100),
        ...                                    numbers=Certified(Judge))
        >>> _ = b.update(b.choose(None), None, None)
        >>> s = b.state.rows.score_ball(b.utilities["u"], 0, 128)
        >>> bool(s.contains(b.state.rows.prediction_ball(0, 256)[0])), bool(s.rad() < 2.0 ** -120)
        (True, True)
        """
        f = self.prediction_ball(i, bits)
        arb = flint()
        with arb.ctx.workprec(bits):
            if u.top1_depth is not None:
                masses = [self.mass_ball(i, bits, a) for a in u.candidate_ids]
                best = masses[0]
                for m in masses[1:]:
                    best = best.max(m)
                return best
            v = self.values(u, i)
            return sum((f[y] * arb.fmpq(x.numerator, x.denominator) for y, x in enumerate(v) if x), arb.arb(0))

    # ------------------------------------------------------------------ what the families' decisions ask
    def values(self, u: Utility, i: int):
        """``u(f_i, .)`` of a boosted row, exactly: the family's own decision
        (:meth:`~huc_ref.utilities.Utility.decide`) on :class:`BoostedRow`, or :class:`Undecided`.
        Kept until the row moves again."""
        version, found = self._values.get((id(u), i), (None, None))
        if version != self.state.version[i]:
            found = u.decide(BoostedRow(self, i))
            self._values[id(u), i] = (self.state.version[i], found)
        return found

    def sign(self, i: int, d) -> int:
        """The sign of ``sum_y f_y d_y`` on atom ``i``'s boosted row (a binary decision's margin, J.1):
        exact where it is rational (:meth:`rational_form`), else float64's where the bound tells it,
        else Arb's at the context's precisions, else :class:`Undecided` (a margin of 0 whose
        factors do not cancel)."""
        margin = self.rational_form(i, d)
        if margin is not None:
            return (margin > 0) - (margin < 0)
        P, dd = self.state.P[i], np.array([float(x) for x in d])
        bound = rounding_bound(self.tree.K, self.state.rho) * float(np.abs(P) @ np.abs(dd))

        def margin_ball(bits):
            arb, f = flint(), self.prediction_ball(i, bits)
            return sum((f[y] * arb.fmpq(x.numerator, x.denominator) for y, x in enumerate(d) if x), arb.arb(0))
        return self.numbers.decided(self.numbers.sign(float(P @ dd), bound, margin_ball), "a binary decision's margin")

    def ranked(self, i: int) -> tuple:
        """A rational row ranked as atom ``i``'s boosted row is (A.1's ``r_p``: by decreasing
        ``p_y``, ties to the earlier label), for rank and top-``k`` utilities: two leaves with one
        factor key (:meth:`signature`) compare exactly by ``p0`` (``p_y = p0_y F``, one ``F``),
        as the certified engine would; two with different keys by the context's ``compare``: the
        float64 row where it tells them apart beyond its error (relatively ``max(10^-9, 4 rho)``),
        else Arb's enclosures, else :class:`Undecided` (a tie of different factors is left to the
        certified engine).  The row is ``K - g`` over its sum for the ``g``-th group of equal
        entries, so only its order is the boosted row's.

        >>> from huc_ref import FiniteDistribution, LabelTree, Table
        >>> from huc_ref.fast.boost import FloatBackend
        >>> from huc_ref.fast.context import Certified
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["y1", "y2"], "b": ["y3", "y4"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/8", "1/8", "1/4", "1/2"], "label": "y1"}])
        >>> b = FloatBackend.from_distribution(d, {"u": Table(t, [1, 0, 0, 0])}, "huc", Fraction(1, 100),
        ...                                    numbers=Certified())
        >>> b.state.rows.ranked(0)  # unboosted: p0's order, the tie y1 = y2 kept
        (Fraction(2, 11), Fraction(2, 11), Fraction(3, 11), Fraction(4, 11))
        """
        sig, p, P = self.signature(i), self.p0[i], self.state.P[i]
        tol = max(1e-9, 4.0 * self.state.rho)

        def first(a, b):  # < 0 where leaf a ranks before leaf b
            if sig(a) == sig(b):
                return (p[b] > p[a]) - (p[b] < p[a]) or a - b

            def entries(bits):  # Arb's enclosures of f_b - f_a
                f = self.prediction_ball(i, bits)
                return f[b] - f[a]
            error = tol * max(P[a], P[b])
            return self.numbers.decided(self.numbers.compare(P[b], error, P[a], 0.0, entries),
                                        "a rank on a boosted row")
        order = sorted(range(self.tree.K), key=functools.cmp_to_key(first))
        group, out = 0, [0] * len(order)
        for r, y in enumerate(order):
            if r and (sig(y) != sig(order[r - 1]) or p[y] != p[order[r - 1]]):
                group += 1
            out[y] = len(order) - group
        total = sum(out)
        return tuple(Fraction(v, total) for v in out)

    def first_largest(self, i: int, nodes) -> int:
        """The first node id of ``nodes`` (a cut, pre-order) whose mass on atom ``i``'s boosted row is
        largest (K.2's ``v_l``).  Each mass is a form ``sum_k c_k F_k`` with exact rational ``c_k``
        and positive factors ``F_k`` (HUC-Boost: one, ``pi0_c`` times the moved splits' ``e^{z_b} /
        N_a`` on its path, keyed by them; UC-Boost: ``p0_y`` summed by leaf logit ``z``, ``F = e^z /
        N``).  Among the nodes float64 cannot tell from the largest (within 10^-9), two compare
        exactly where their forms' differences share a sign (equal forms: equal masses), else by
        the context's ``sign`` on Arb's enclosures; :class:`Undecided` where those overlap too.

        >>> from huc_ref import FiniteDistribution, LabelTree, Top1AtDepth
        >>> from huc_ref.fast.boost import FloatBackend
        >>> from huc_ref.fast.context import Certified
        >>> from huc_ref.fast.enclosures import SCALE_BITS
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["y1", "y2"], "b": ["y3", "y4"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/4", "1/4", "1/4", "1/4"], "label": "y1"}])
        >>> state = FloatBackend.from_distribution(d, {"u": Top1AtDepth(t, 2)}, "huc", Fraction(1, 100),
        ...                                        numbers=Certified()).state
        >>> state.scale = Fraction(1, 2 ** SCALE_BITS)
        >>> state.z[0, t.id("a")], state.z[0, t.id("b")] = 2 ** SCALE_BITS, -(2 ** SCALE_BITS)  # a's leaves rise
        >>> t.nodes[state.rows.first_largest(0, [2, 3, 5, 6])]  # y1 and y2 tie exactly under one factor: the first
        'y1'
        """
        tree, p, z = self.tree, self.p0[i], self.state.z[i]
        cands = list(nodes)
        below = [tree.label_ids_below(c) for c in cands]
        forms = []  # each candidate's mass as {factor key: exact coefficient}
        if self.method == "uc":
            leaves = tree.leaf_node_ids
            for ys in below:
                form: dict = {}
                for y in ys:
                    form[z[leaves[y]]] = form.get(z[leaves[y]], 0) + p[y]
                forms.append(form)
        else:
            moved, pi = self.moved_splits(z), self.pi0(i)
            forms = [{self.factor_key(c, z, moved): pi[c]} for c in cands]
        sizes = [float(self.state.P[i, list(ys)].sum()) for ys in below]
        top = max(sizes)
        group = [k for k, size in enumerate(sizes) if size >= top * (1 - 1e-9)]

        def order(j, k) -> int:  # the sign of mass_j - mass_k
            sign = shared_sign([forms[j].get(x, 0) - forms[k].get(x, 0) for x in forms[j].keys() | forms[k].keys()])
            if sign is not None:
                return sign

            def difference(bits):
                return self.mass_ball(i, bits, cands[j]) - self.mass_ball(i, bits, cands[k])
            return self.numbers.decided(self.numbers.sign(0.0, np.inf, difference),
                                        "the largest mass at the utility's depth")

        largest = group[0]  # the first of the largest: a later one only where it is certainly larger
        for k in group[1:]:
            if order(k, largest) > 0:
                largest = k
        return cands[largest]

    # ------------------------------------------------------------------ scores, for the tie blocks
    def top_edges(self, u: Utility) -> list:
        """The edges down to depth ``l`` of top-1 correctness at depth ``l`` (their logits fix the
        masses at depth ``l``)."""
        depth = self.tree.depth_ids
        return [b for b in range(len(depth)) if 0 < depth[b] <= u.top1_depth]

    def top1_key(self, u: Utility):
        """``i -> `` the part of atom ``i``'s exact state that determines ``mu_u`` (HUC-Boost and
        top-1 correctness at depth ``l``; otherwise None, :meth:`linear_key`).  The score is the
        mass of the chosen node ``c``, the product over the edges ``a -> b`` down to it of
        ``pi0_b e^{z_b} / sum_k pi0_k e^{z_k}`` (``k`` the children of ``a``): where float64 tells
        which candidate is chosen, the key is ``"path"``, the product of the rational factors (the
        edges whose siblings share one logit: ``pi0_b / pi0_a``) and the multiset of the others,
        each as ``z_b`` and the distinct logits of ``a``'s children with their summed ``pi0_k /
        pi0_b`` (rows whose masses differ by a common scale below a node have one key; with no
        other factor the score is that rational); otherwise ``"edges"`` and the masses and logits
        of every edge down to depth ``l``.

        >>> from huc_ref import FiniteDistribution, LabelTree, Top1AtDepth
        >>> from huc_ref.fast.boost import FloatBackend
        >>> from huc_ref.fast.context import Certified
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["y1", "y2"], "b": ["y3", "y4"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/2", "1/4", "1/8", "1/8"], "label": "y1"},
        ...                            {"p": ["1/2", "1/4", "1/16", "3/16"], "label": "y1"}])
        >>> b = FloatBackend.from_distribution(d, {"u": Top1AtDepth(t, 2)}, "huc", Fraction(1, 100),
        ...                                    numbers=Certified())
        >>> key = b.state.rows.top1_key(b.utilities["u"])
        >>> key(0) == key(1), key(0)  # y1 in both (1/2 = 1/(4/3) x 1/(3/2)): b's split does not matter
        (True, ('path', Fraction(1, 2), ()))
        """
        tree = self.tree
        if self.method != "huc" or u.top1_depth is None:
            return None
        edges = self.top_edges(u)
        candidates = np.array(u.candidate_ids)
        cut_below = [tree.label_ids_below(a) for a in u.candidate_ids]

        def mass(chosen, pi, z):  # the rational factors' product and the other factors, down to a candidate
            factors, rational = [], Fraction(1)
            for b in self.path_to(chosen):
                grouped: dict = {}
                for k in tree.child_ids[tree.parent_ids[b]]:
                    grouped[z[k]] = grouped.get(z[k], 0) + pi[k] / pi[b]
                if len(grouped) == 1:  # every child's logit z_b: the factor is 1 / (sum_k pi0_k / pi0_b)
                    rational /= grouped[z[b]]
                else:
                    factors.append((z[b], tuple(sorted(grouped.items()))))
            return "path", rational, tuple(sorted(factors))

        def key(i):
            pi, z = self.pi0(i), self.state.z[i]
            sizes = [float(self.state.P[i, list(ys)].sum()) for ys in cut_below]
            top = max(sizes)
            close = [int(c) for c, m in zip(candidates, sizes) if m >= top * (1 - 1e-9)]
            if len(close) == 1:
                return mass(close[0], pi, z)
            # float64 cannot tell the chosen node: where the close candidates' masses share their factors (as
            # rationals do: no moved split on their paths; or two leaves of one row tied below a moved split),
            # the first largest rational part (K.2); else the one Arb's enclosures put certainly above the
            # others (the context's argmax, its bounds left open); else every edge's mass and logit
            found = [mass(c, pi, z) for c in close]
            if len({f[2] for f in found}) == 1:
                return max(found, key=lambda f: f[1])
            j = self.numbers.argmax([0.0] * len(close), [np.inf] * len(close),
                                    lambda bits, among: [self.mass_ball(i, bits, c) for c in close])
            if j is UNDECIDED:
                pairs = tuple(zip((pi[b] for b in edges), z[edges]))
                return "edges", tuple(sorted(pairs)) if u.top1_depth == 1 else pairs
            return found[j]
        return key

    def linear_key(self, i: int, c: dict) -> tuple:
        """A key of the linear form with coefficients ``c`` (:meth:`coefficients`) of atom ``i``
        that determines its value: the coefficients by factor, and the normaliser of every
        updated node, as its distinct logits with their summed exact ``q0`` (the factors
        ``e^{z} / N`` are then equal factor by factor)."""
        tree, z, p = self.tree, self.state.z[i], self.p0[i]
        nodes = sorted({a for sig in c for a, _ in sig} if self.method == "huc" else {-1})
        norms = []
        for a in nodes:
            kids = tree.leaf_node_ids if a == -1 else tree.child_ids[a]
            below = [[y] for y in range(tree.K)] if a == -1 else [tree.label_ids_below(b) for b in kids]
            grouped: dict = {}
            for b, ys in zip(kids, below):
                grouped[z[b]] = grouped.get(z[b], 0) + sum((p[y] for y in ys), Fraction(0))
            total = sum(grouped.values())
            norms.append((a, tuple(sorted((zb, m / total) for zb, m in grouped.items()))))
        return tuple(sorted(c.items())), tuple(norms)

    def score(self, name: str, i: int, key):
        """``mu_u(f_i)`` of a boosted row for the tie blocks: the rational it is where the linear
        form's factors cancel (:meth:`rational_form`: a rank whose weights are 0 and 1 on two
        labels of equal mass below one split, 1/2 elsewhere, scores 1/2 whatever the logits),
        else :class:`Same` of its state (``key``, :meth:`top1_key`); kept until the row moves again."""
        version, found = self._scores.get((name, i), (None, None))
        if version == self.state.version[i]:
            return found
        u = self.state.utilities[name]
        if key is not None:  # top-1 at depth l: rational exactly while no split above depth l has moved,
            state = key(i) if any(self.state.z[i, self.top_edges(u)]) else None  # or none on the chosen path
            if state is None:
                found = u.score(self.p0[i])
            elif state[0] == "path" and not state[2]:
                found = state[1]
            else:
                found = Same(state, functools.partial(self.score_ball, u, i), self.numbers)
            self._scores[name, i] = (self.state.version[i], found)
            return found
        v = self.values(u, i)
        c = self.coefficients(i, v)
        found = self.rational_form(i, v, c)
        if found is None:
            found = Same(self.linear_key(i, c), functools.partial(self.score_ball, u, i), self.numbers)
        self._scores[name, i] = (self.state.version[i], found)
        return found

    def forget_scores(self) -> None:
        """Drop the kept scores (they are computed afresh when next asked)."""
        self._scores = {}


class BoostedRow:
    """Atom ``i``'s boosted prediction ``f`` as a family's :meth:`~huc_ref.utilities.Utility.decide`
    reads it: the questions of :class:`~huc_ref.utilities.RationalRow`, answered on the exact state
    (:class:`BoostedRows`).  ``f`` is irrational: :meth:`rationals` is undecided.

    >>> from huc_ref import FiniteDistribution, LabelTree, BinaryDecision
    >>> from huc_ref.fast.boost import FloatBackend
    >>> from huc_ref.fast.context import Certified
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "a"}])
    >>> b = FloatBackend.from_distribution(d, {"u": BinaryDecision(t, ["b"], ["a", "b"], "1/3")}, "huc",
    ...                                    Fraction(1, 100), numbers=Certified())
    >>> row = BoostedRow(b.state.rows, 0)
    >>> row.sign([-1, 1]), row.ranked(), t.nodes[row.first_largest([1, 2])]  # p0 = (1/2, 1/2): a tie, the first
    (0, (Fraction(1, 2), Fraction(1, 2)), 'a')
    """

    def __init__(self, rows: BoostedRows, i: int):
        self.rows, self.i, self.atom = rows, i, i

    def rationals(self):
        """``p0`` while no update has moved the row; else undecided (the prediction is irrational)."""
        if not self.rows.state.z[self.i].any():
            return self.rows.p0[self.i]
        raise Undecided("a decision on a boosted row")

    def sign(self, d) -> int:
        """The sign of ``sum_y f_y d_y`` (:meth:`BoostedRows.sign`)."""
        return self.rows.sign(self.i, d)

    def ranked(self) -> tuple:
        """A rational row ordered as ``f`` (:meth:`BoostedRows.ranked`)."""
        return self.rows.ranked(self.i)

    def first_largest(self, nodes) -> int:
        """The first node of ``nodes`` of largest mass (:meth:`BoostedRows.first_largest`)."""
        return self.rows.first_largest(self.i, nodes)


class Same:
    """An irrational score known by the exact state that determines it (``key``) and, where
    given, by Arb enclosures of it at any precision (``ball(bits)``, python-flint).  Two are
    equal when their states are; otherwise, and against a rational, they are ordered by the
    context's refinement (``numbers``: :class:`~huc_ref.fast.context.Certified`) where it
    separates them, else :class:`Undecided` (distinct states can give equal scores: the
    certified engine decides those).

    >>> from flint import arb, ctx
    >>> from huc_ref.fast.context import Certified
    >>> def third(bits, plus=0):  # 1/3 + plus, enclosed at ``bits``
    ...     with ctx.workprec(bits):
    ...         return arb(1) / 3 + plus
    >>> c = Certified()
    >>> a, b = Same("x", third, c), Same("y", lambda bits: third(bits, arb(10) ** -30), c)  # 1e-30 apart
    >>> a < b, a == b, a == Same("x"), b > Fraction(1, 3), b < Fraction(1, 2)
    (True, False, True, True, True)
    >>> a == Fraction(1, 3)  # enclosures never decide an equality of different states
    Traceback (most recent call last):
    huc_ref.fast.context.Undecided: a tie of irrational scores
    """

    __slots__ = ("key", "ball", "numbers", "_balls")
    __hash__ = None

    def __init__(self, key, ball=None, numbers=None):
        self.key, self.ball, self.numbers, self._balls = key, ball, numbers, {}

    def _at(self, bits: int):
        if bits not in self._balls:
            self._balls[bits] = self.ball(bits)
        return self._balls[bits]

    def _order(self, other) -> int:
        """-1, 0 or 1 as this score is below, equal to or above ``other`` (a :class:`Same` or a
        rational), decided, or :class:`Undecided`."""
        if isinstance(other, Same) and other.key == self.key:
            return 0
        same = isinstance(other, Same)
        if self.ball is None or not ((same and other.ball is not None) or isinstance(other, (int, Fraction))):
            raise Undecided("a tie of irrational scores")

        def difference(bits):
            if same:
                return self._at(bits) - other._at(bits)
            arb = flint()
            return self._at(bits) - arb.arb(arb.fmpq(other.numerator, other.denominator))
        return self.numbers.decided(self.numbers.sign(0.0, np.inf, difference), "a tie of irrational scores")

    def __eq__(self, other):
        return self._order(other) == 0

    def __ne__(self, other):
        return self._order(other) != 0

    def __lt__(self, other):
        return self._order(other) < 0

    def __gt__(self, other):
        return self._order(other) > 0

    def __le__(self, other):
        return self._order(other) <= 0

    def __ge__(self, other):
        return self._order(other) >= 0


class _Behind:
    """Row ``i``'s rationals for :class:`ExactRows`: ``p0`` while ``changed[i]`` is False, else
    undecided (the row is irrational)."""

    def __init__(self, p0, changed):
        self.p0, self.changed = p0, changed

    def __getitem__(self, i):
        if self.changed[i]:
            raise Undecided("a decision on a boosted row")
        return self.p0[i]


class AuditRows(ExactRows):
    """The rows of a certified state as the fast audit of utility ``name`` reads them for its exact
    decisions: a row's ``p0`` while no update has changed the utility's values or score on it
    (``changed``: :meth:`~huc_ref.utilities.Utility.unmoved_by`), else its exact state
    (``rows``, :class:`BoostedRows`): values by the family's own decision, scores as
    :meth:`BoostedRows.score` with ``key``.  ``p_error`` is the rows' certified relative error
    ``rho``."""

    def __init__(self, P, rows: BoostedRows, name: str, changed, rho: float, key=None, offset: int = 0):
        super().__init__(P, _Behind(rows.p0, changed), offset)
        self.p_error, self.rows, self.name, self.changed, self.key = rho, rows, name, changed, key

    def view(self, start):
        return AuditRows(None if self.P is None else self.P[start:], self.rows, self.name, self.changed, self.p_error,
                         self.key, self.offset + start)

    def values(self, u, i, atom=None):
        if self.changed[self.offset + i]:
            return self.rows.values(u, self.offset + i)
        return super().values(u, i, atom)

    def score(self, u, i, atom):
        """A changed row's score exactly where it is rational, else as :class:`Same` of the exact
        state that determines it (:meth:`BoostedRows.score`)."""
        if self.changed[self.offset + i]:
            return self.rows.score(self.name, self.offset + i, self.key)
        return super().score(u, i, atom)
