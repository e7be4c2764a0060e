"""A brute-force audit from the definitions, independent of Algorithm 2 and of the
engine's shortcuts: every closed interval of score values is enumerated, and each node
term is the literal inner product ``<Delta_{u,v}(p), R_v(p, y)>`` summed over labels."""

from __future__ import annotations

from fractions import Fraction

from huc_ref.decomposition import TreeDecomposition

ZERO = Fraction(0)


def literal_terms(dist, utility, node, number=Fraction):
    """Per atom: ``(score, sum_y eta_y X(y))`` with ``X = u - mu`` or ``<Delta_v, R_v(y)>``, in the
    arithmetic of ``number`` (``Fraction``, or gmpy2's ``mpq``: GMP's rationals, another exact
    implementation, and the one that adds million-digit numbers in milliseconds)."""
    tree = dist.tree
    out = []
    for i, atom in enumerate(dist.atoms):
        vals = [number(v) for v in utility.values(atom.p, i)]
        p_row = [number(x) for x in atom.p]
        dec = TreeDecomposition(tree, p_row, vals)
        score = sum(p * u for p, u in zip(p_row, vals))
        eta = [number(x) for x in atom.label_law(tree.K)]
        total = ZERO
        for y in range(tree.K):
            if not eta[y]:
                continue
            if node is None:
                x = vals[y] - score
            else:
                x = sum((d * r for d, r in zip(dec.Delta(node), dec.R(node, y))), ZERO)
            total += eta[y] * x
        out.append((score, total))
    return out


def score_blocks(scores, tie=ZERO):
    """The distinct scores in order, as blocks ``(lowest, highest)``: a score within ``tie`` of
    the block's highest joins that block (``tie = 0``: one block per distinct score)."""
    blocks = []
    for s in sorted(set(scores)):
        if blocks and s - blocks[-1][1] <= tie:
            blocks[-1][1] = s
        else:
            blocks.append([s, s])
    return [tuple(b) for b in blocks]


def brute_force_row(dist, utility, subgroup, node, tie=ZERO, number=Fraction):
    """``(sup, interval, moment)`` over all intervals; ties: smallest right end, then left.

    With ``tie > 0`` scores within ``tie`` of each other are one value (an interval holds all of
    them or none): the audit of predictions printed to finitely many digits, where two scores
    equal in the run's arithmetic can come out a rounding apart.  This only removes intervals,
    so the sup can only fall, by no more than the moment of a split tie."""
    k = dist.subgroups.index(subgroup)
    terms = literal_terms(dist, utility, node, number)
    blocks = score_blocks([s for s, _ in terms], tie)
    best = (ZERO, None, ZERO)
    for hi in range(len(blocks)):
        for lo in range(hi + 1):
            moment = sum((number(a.weight) * number(a.c[k]) * x for a, (s, x) in zip(dist.atoms, terms)
                          if blocks[lo][0] <= s <= blocks[hi][1]), number(0))
            if abs(moment) > best[0]:
                best = (abs(moment), (blocks[lo][0], blocks[hi][1]), moment)
    sup, interval, moment = best
    return _fraction(sup), None if interval is None else (_fraction(interval[0]), _fraction(interval[1])), \
        _fraction(moment)


def _fraction(x) -> Fraction:
    return x if type(x) is Fraction else Fraction(int(x.numerator), int(x.denominator))


def brute_force_audit(dist, utilities, tie=ZERO, number=Fraction):
    """All rows in the engine's order: subgroups, utilities, UC row then ``V_T(u)``."""
    rows = []
    for c in dist.subgroups:
        for name, u in utilities.items():
            for node in (None,) + tuple(u.relevant_nodes):
                rows.append((c, name, node) + brute_force_row(dist, u, c, node, tie, number))
    return rows
