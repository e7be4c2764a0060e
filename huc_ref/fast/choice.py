"""The certified choice of a boosting run in float64 (Sec. 3.2's selection, App. F.3's witness;
docs/specification.md §4): the fast audit of the current rows with its decisions certified
(:func:`huc_ref.fast.audit.dense_rows` on :class:`~huc_ref.fast.boosted.AuditRows`), the largest
candidate, whether it exceeds epsilon and its witness, each taken by the certified context
(:class:`huc_ref.fast.context.Certified`) from float64's bounds
(:func:`~huc_ref.fast.enclosures.prefix_error`), else from Arb's enclosures of the exact state,
else by the judge (:class:`huc_ref.boost.Judge`) on the same exact state.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..driver import Choice
from ..errors import HUCError
from .audit import dense_rows
from .boosted import AuditRows
from .context import Undecided, flint
from .enclosures import ball_witness, certified_witness, prefix_error

__all__: list = []  # (the certified state's internals: reached through huc_ref.fast.context.Certified)


@dataclass
class _Choice(Choice):
    members: np.ndarray = None  # the atoms the witness selects
    interval: list | None = None
    values: np.ndarray | None = None  # the utility's values of every atom, decided


class CertifiedChoice:
    """The choices of a certified state (``state``: :class:`huc_ref.fast.certified.CertifiedState`).
    Candidates are ``(sup, error, subgroup k, utility, column, node)``: column 0 the UC residual,
    column ``c`` the node ``table.nodes[c - 1]``'s terms (C.2); ``error`` twice the bound on the
    sup's float error."""

    def __init__(self, state):
        self.state, self.numbers, self.rows = state, state.numbers, state.rows
        self.tree, self.utilities, self.atoms = state.tree, state.utilities, state.dist.atoms
        self._judge = None

    def choose(self, node):
        """The largest candidate (at node id ``node``, or anywhere), certified, with whether it exceeds
        epsilon; the judge's choice on the same exact state where the context cannot decide."""
        try:
            return self._choose(node)
        except Undecided as undecided:
            self.numbers.fallbacks[undecided.args[0]] += 1
            return self.judged(node)

    def tables(self) -> dict:
        """Per utility, the fast audit's table of the current rows (:func:`huc_ref.fast.audit.dense_rows`,
        its decisions certified) and the bound on its prefix sums (:func:`prefix_error`)."""
        state, rows = self.state, self.rows
        huc, P = state.method == "huc", state.P
        masses = state.ft.subtree_sums(P)
        tables = {}
        for name, u in self.utilities.items():
            exact = AuditRows(P, rows, name, state.changed[name], state.rho, rows.top1_key(u))
            try:
                table = dense_rows(state.ft, P, state.E, state.W, u, masses, state.star, with_nodes=huc, exact=exact)
            except Undecided as undecided:
                raise Undecided(f"utility {name!r}: " + (undecided.args[0] if isinstance(undecided.args[0], str)
                                                         else "a decision on a boosted row")) from None
            tables[name] = (table, prefix_error(table, u, state.W, state.rho))
        return tables

    def _candidates(self, tables: dict, node) -> list:
        huc, cands = self.state.method == "huc", []
        for k in range(self.state.W.shape[1]):
            for name, (table, err) in tables.items():
                sup = table.best[k][0]
                for col in ([0] if not huc else range(1, 1 + len(table.nodes))):
                    a = None if col == 0 else int(table.nodes[col - 1])
                    if node is None or a == node:
                        cands.append((float(sup[col]), 2.0 * float(err[k, col]), k, name, col, a))
        return cands

    def _choose(self, node):
        numbers, eps = self.numbers, self.state.epsilon
        tables = self.tables()
        cands = self._candidates(tables, node)
        if not cands:
            return None
        sups = np.array([c[0] for c in cands])
        errs = np.array([c[1] for c in cands])
        quiet = _Choice(float(sups.max()), 0, "", None, 0.0, False, np.zeros(0, int))
        if all(Fraction(s) + Fraction(e) <= eps for s, e in zip(sups.tolist(), errs.tolist())):
            return quiet
        refined = {}  # candidate -> (bits, (entries, zero, sup)) in Arb, where float64's bounds could not tell

        def balls(bits, among):
            return {c: self._refined(cands, c, tables, refined, bits)[2] for c in among}

        def same(c, d):
            return self.same_column(cands, tables, c, d) or self.same_witness(cands, tables, refined, c, d)
        j = numbers.decided(numbers.argmax(sups, errs, balls, same, "the largest candidate"), "the largest candidate")
        sup, err, k, name, col, a = cands[j]

        def above(bits):  # the sup minus epsilon, in Arb
            arb = flint()
            return self._refined(cands, j, tables, refined, bits)[2] - arb.arb(arb.fmpq(eps.numerator, eps.denominator))
        exceeds = numbers.decided(numbers.sign(Fraction(sup) - eps, Fraction(err), above, "whether it exceeds epsilon"),
                                  "whether it exceeds epsilon")
        if exceeds <= 0:  # the largest candidate, certainly not above epsilon
            return quiet
        table = tables[name][0]
        r, b, sup_w, moment = self._witness(cands, j, tables, refined)
        return _Choice(sup_w, k, name, a, moment, True, table.members(r, b), table.interval(r, b), table.U)

    def _witness(self, cands: list, j: int, tables: dict, refined: dict) -> tuple:
        """Algorithm 2's witness of candidate ``j`` (App. F.3's first largest and smallest prefix
        sums at the tie blocks' ends): certified from float64's bound, where atoms whose entry is 0
        exactly repeat a prefix sum exactly; else in Arb (:func:`ball_witness`); else undecided."""
        _, _, k, name, col, a = cands[j]
        table, perr = tables[name]
        values = (table.residual if col == 0 else table.terms[:, col - 1]) * self.state.W[:, k]
        zero = self.zero_entries(name, k, col, a, table, flat=False)
        found = certified_witness(values, zero, table, float(perr[k, col]))
        if found is None and col:  # prefix sums that may repeat exactly: the atoms whose term is 0 exactly
            found = certified_witness(values, self.zero_entries(name, k, col, a, table), table, float(perr[k, col]))
        if found is not None:
            return found
        exact = self.exact_entry(table, name, k, col, a)

        def attempt(bits):  # the prefix sums in Arb
            entries, zero, _ = self._refined(cands, j, tables, refined, bits)
            return ball_witness(entries, zero, table, bits, exact)
        found = self.numbers.decided(self.numbers.refine(attempt), "the witness interval")
        self.numbers.tally("the witness interval")
        return found[:2] + (float(found[2].mid()), float(found[3].mid()))

    def zero_entries(self, name: str, k: int, col: int, a, table, flat: bool = True) -> np.ndarray:
        """The atoms whose entry of column ``col`` (node ``a``) in subgroup ``k`` of ``table`` is 0
        exactly: weight 0, no label mass below ``a``, or (``flat``) a utility constant below ``a``
        (:meth:`flat_below`)."""
        zero = self.state.W[:, k] == 0
        if col:
            zero = zero | (self.state.star[:, a] == 0)
            if flat:
                zero = zero | self.flat_below(name, a, table)
        return zero

    def _refined(self, cands: list, j: int, tables: dict, refined: dict, bits: int | None = None) -> tuple:
        """Candidate ``j``'s column in Arb (:meth:`column_balls`) at ``bits`` (default: the last
        precision it was refined at, else the context's first): ``(entries, zero, sup)``, ``sup``
        enclosing Algorithm 2's ``max_j C_j - min_j C_j`` over the tie blocks' ends."""
        arb = flint()
        if j in refined and (bits is None or refined[j][0] == bits):
            return refined[j][1]
        bits = bits or self.numbers.refine_bits[0]
        _, _, k, name, col, a = cands[j]
        table = tables[name][0]
        zero = self.zero_entries(name, k, col, a, table)
        entries = self.column_balls(table, name, k, col, a, zero, bits)
        with arb.ctx.workprec(bits):
            run, top, bottom = arb.arb(0), arb.arb(0), arb.arb(0)
            ends = set(table.block_last.tolist())
            for r, i in enumerate(table.order.tolist()):
                run = run + entries[i]
                if r in ends:
                    top, bottom = top.max(run), bottom.min(run)
            refined[j] = (bits, (entries, zero, top - bottom))
        return refined[j][1]

    def same_column(self, cands: list, tables: dict, c: int, d: int) -> bool:
        """Whether candidates ``c`` and ``d`` have one column up to its sign, entry by entry,
        exactly: both the UC residual or both one node's terms, with equal weights ``w c(x)`` and,
        where these are not 0, values on the labels the column reads that agree as
        :meth:`_entries_agree` says; their sups are then equal, and App. F.3's tie rule takes the first."""
        return cands[c][5] == cands[d][5] and self._entries_agree(cands, tables, c, d, range(len(self.atoms)))


    def _entries_agree(self, cands: list, tables: dict, c: int, d: int, atoms) -> bool:
        """Whether candidates ``c`` and ``d``, columns of one node (or both the UC residual), have
        entries at ``atoms`` equal up to one sign ``s`` for all of them: equal weights ``w c(x)``
        and, where these are not 0, values ``u'(f, y) = s u(f, y) + b`` on the labels the column
        reads (all, or those below the node), ``b`` one number per atom.  A.3's means on those
        labels are then ``s mu + b``, so the node's C.2 term ``sum_j pi*_j mu_j - pi*_v mu_v`` (and
        the UC residual ``E[u(Y)] - mu_u``) is ``s`` times the other's: the prefix sums are too, and
        ``max C - min C`` and the witness are the same (top-1 correctness at depth 2 on a node of
        leaves is the table ``-1`` on the label chosen there, on rows where it chooses the same)."""
        (_, _, k, name, _, a), (_, _, k2, name2, _, _) = cands[c], cands[d]
        labels = range(self.tree.K) if a is None else self.tree.label_ids_below(a)
        signs = {1, -1}
        for i in atoms:
            atom = self.atoms[i]
            w = atom.weight * atom.c[k]
            if w != atom.weight * atom.c[k2]:
                return False
            if w and name != name2:
                v, v2 = self.decided(name, i, tables[name][0]), self.decided(name2, i, tables[name2][0])
                signs = {s for s in signs if len({v2[y] - s * v[y] for y in labels}) == 1}
                if not signs:
                    return False
        return True

    def same_witness(self, cands: list, tables: dict, refined: dict, c: int, d: int) -> bool:
        """Whether candidates ``c`` and ``d`` (both the UC residual or both one node's terms) have
        one sup as one sum: each column's witness certified in Arb (:func:`ball_witness`), the
        atoms whose entries are not 0 exactly the same in both witnesses, and there the weights
        and the values the column reads equal, so that ``sup_c = |sum_S W t| = sup_d``.  App. F.3's
        tie rule then takes the first: one column in two subgroups that differ only outside the
        witnesses (or on atoms whose term is 0), or two utilities that agree on them."""
        if cands[c][5] != cands[d][5]:  # (the node; None for the UC residual)
            return False
        support = []
        for j in (c, d):
            entries, zero, _ = self._refined(cands, j, tables, refined)
            _, _, k, name, col, a = cands[j]
            table = tables[name][0]
            found = ball_witness(entries, zero, table, refined[j][0], self.exact_entry(table, name, k, col, a))
            if found is None:
                return False
            support.append({i for i in table.members(found[0], found[1]).tolist() if not zero[i]})
        return support[0] == support[1] and self._entries_agree(cands, tables, c, d, sorted(support[0]))


    def decided(self, name: str, i: int, table) -> tuple:
        """``u(f_i, .)`` as the fast audit decided it for ``table``, exactly: the utility's own values
        on ``p0`` (rows it has not changed), the certified choice of top-1 correctness (0 or 1),
        else the family's decision on the exact state (:meth:`huc_ref.fast.boosted.BoostedRows.values`)."""
        u = self.utilities[name]
        if not self.state.changed[name][i]:
            return u.values(self.state.p0[i], i)
        if u.top1_depth is not None:
            return tuple(Fraction(float(x)) for x in table.U[i])
        return self.rows.values(u, i)

    def column_balls(self, table, name: str, k: int, col: int, a, zero: np.ndarray, bits: int) -> list:
        """Every atom's entry ``W t`` of one column of ``table`` (subgroup ``k``; the UC residual,
        ``col`` 0, or node ``a``'s C.2 term ``sum_j pi*_{a_j} mu_{a_j} - pi*_a mu_a``) as Arb balls
        at ``bits``, from the exact state (:meth:`~huc_ref.fast.boosted.BoostedRows.prediction_ball`),
        the exact label laws and weights, and the utility's values decided exactly; exact zeros
        where ``zero``, and where the values are constant below ``a`` (Sec. 3.1), which are marked
        in ``zero``.

        >>> from huc_ref import FiniteDistribution, LabelTree, Table
        >>> from huc_ref.fast.boost import FloatBackend
        >>> from huc_ref.fast.context import Certified
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/4", "3/4"], "label": "a"}])
        >>> state = FloatBackend.from_distribution(d, {"u": Table(t, [0, 1])}, "huc", Fraction(1, 100),
        ...                                        numbers=Certified()).state
        >>> table = state.choice.tables()["u"][0]
        >>> state.choice.column_balls(table, "u", 0, 0, None, np.zeros(1, bool), 128)[0].contains(flint().arb(-3) / 4)
        True
        """
        arb, tree = flint(), self.tree
        out = []

        def lift(x):
            return arb.arb(arb.fmpq(x.numerator, x.denominator))
        with arb.ctx.workprec(bits):
            for i, atom in enumerate(self.atoms):
                v = None if zero[i] else self.decided(name, i, table)
                if v is not None and col and len({v[y] for y in tree.label_ids_below(a)}) == 1:
                    zero[i] = True  # every mean is a's: 0 exactly
                if zero[i]:
                    out.append(arb.arb(0))
                    continue
                f = self.rows.prediction_ball(i, bits)
                out.append(self.term(f, v, atom, col, a, lift) * lift(atom.weight * atom.c[k]))
        return out

    def term(self, f, v, atom, col: int, a, lift):
        """One atom's entry of a column before its weight: the UC residual ``E_eta[u(Y)] - mu_u``
        (``col`` 0) or node ``a``'s C.2 term ``sum_j pi*_{a_j} mu_{a_j} - pi*_a mu_a``, from its
        prediction ``f`` (Arb balls, or exact rationals), values ``v`` and label law, with
        ``lift`` turning a rational into ``f``'s kind of number.

        >>> from huc_ref import FiniteDistribution, LabelTree, Table
        >>> from huc_ref.fast.boost import FloatBackend
        >>> from huc_ref.fast.context import Certified
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/4", "3/4"], "label": "a"}])
        >>> choice = FloatBackend.from_distribution(d, {"u": Table(t, [0, 1])}, "huc", Fraction(1, 100),
        ...                                         numbers=Certified()).state.choice
        >>> p, v, atom = d.atoms[0].p, (Fraction(0), Fraction(1)), d.atoms[0]
        >>> choice.term(p, v, atom, 0, None, Fraction), choice.term(p, v, atom, 1, 0, Fraction)  # u(a) - 3/4; mu_a - mu
        (Fraction(-3, 4), Fraction(-3, 4))
        """
        tree, eta = self.tree, atom.label_law(self.tree.K)

        def mean(ys):  # mu_{u,b} over the labels ys below b
            mass = sum((f[y] for y in ys[1:]), f[ys[0]])
            return sum((f[y] * lift(v[y]) for y in ys if v[y]), lift(Fraction(0))) / mass
        if col == 0:
            return lift(sum((e * x for e, x in zip(eta, v)), Fraction(0))) - mean(range(tree.K))
        t = -lift(sum((eta[y] for y in tree.label_ids_below(a)), Fraction(0))) * mean(tree.label_ids_below(a))
        for b in tree.child_ids[a]:
            star = sum((eta[y] for y in tree.label_ids_below(b)), Fraction(0))
            if star:
                t = t + lift(star) * mean(tree.label_ids_below(b))
        return t

    def exact_entry(self, table, name: str, k: int, col: int, a):
        """``i -> `` atom ``i``'s entry of the column, exactly, where its row is still ``p0`` (the
        entries of :meth:`column_balls` that are rationals); None for a boosted row."""
        def entry(i):
            if self.state.moved[i]:
                return None
            atom = self.atoms[i]
            v = self.decided(name, i, table)
            return self.term(self.state.p0[i], v, atom, col, a, lambda x: x) * atom.weight * atom.c[k]
        return entry


    def flat_below(self, name: str, a: int, table=None) -> np.ndarray:
        """The atoms whose utility ``name`` is constant on the leaves below node ``a``, exactly: there
        every child's mean is ``a``'s, so the node's term ``mu_{u,a_j} - mu_{u,a}`` is exactly 0
        (Sec. 3.1), whatever the row's probabilities.  Values are the utility's own on ``p0`` (rows
        it has not changed), else as ``table``'s audit decided them (:meth:`decided`), or, without
        a table, the family's decision on the exact state (a row it cannot decide is left out).

        >>> from huc_ref import FiniteDistribution, LabelTree, Table
        >>> from huc_ref.fast.boost import FloatBackend
        >>> from huc_ref.fast.context import Certified
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["y1", "y2"], "b": ["y3", "y4"]})
        >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "label": "y1"}])
        >>> choice = FloatBackend.from_distribution(d, {"u": Table(t, [1, 1, 0, 1])}, "huc", Fraction(1, 100),
        ...                                         numbers=Certified()).state.choice
        >>> choice.flat_below("u", t.id("a")).tolist(), choice.flat_below("u", t.id("b")).tolist()
        ([True], [False])
        """
        u, below, changed = self.utilities[name], self.tree.label_ids_below(a), self.state.changed[name]
        p0 = self.state.p0
        flat = np.zeros(len(p0), dtype=bool)
        for i in range(len(p0)):
            try:
                v = (u.values(p0[i], i) if not changed[i] else self.rows.values(u, i) if table is None
                     else self.decided(name, i, table))
            except Undecided:
                continue
            flat[i] = len({v[y] for y in below}) == 1
        return flat

    def judged(self, node):
        """The judge's choice (:meth:`huc_ref.boost.Judge.choose`, the certified engine) on the same
        exact state; one HUCError where the context has no judge."""
        state = self.state
        if self._judge is None:
            if self.numbers.judge is None:
                raise HUCError("boost: a decision certified float64 cannot take (an exact tie of irrational "
                               "numbers?), and no judge to take it; use arithmetic='exact'", kind="undecided")
            numbers = self.numbers
            self._judge = numbers.judge(state.dist, self.utilities, state.method, state.epsilon, numbers.digits)
        choice = self._judge.choose(state.logits(), node)
        if choice is None:
            return None
        return _Choice(choice.sup, choice.subgroup, choice.utility, choice.node, choice.moment, choice.exceeds,
                       np.array(choice.members, dtype=int), list(choice.interval) or None, np.array(choice.values))

