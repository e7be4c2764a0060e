"""A brute-force audit from the definitions, independent of Algorithm 2 and of the
engine's shortcuts: every closed interval of score values is enumerated, and each node
term is the literal inner product ``<Delta_{u,v}(p), R_v(p, y)>`` summed over labels."""

from __future__ import annotations

from fractions import Fraction

from huc_ref.decomposition import TreeDecomposition

ZERO = Fraction(0)


def literal_terms(dist, utility, node):
    """Per atom: ``(score, sum_y eta_y X(y))`` with ``X = u - mu`` or ``<Delta_v, R_v(y)>``."""
    tree = dist.tree
    out = []
    for i, atom in enumerate(dist.atoms):
        vals = utility.values(atom.p, i)
        dec = TreeDecomposition(tree, atom.p, vals)
        score = sum(p * u for p, u in zip(atom.p, vals))
        eta = atom.label_law(tree.K)
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


def brute_force_row(dist, utility, subgroup, node):
    """``(sup, interval, moment)`` over all intervals; ties: smallest right end, then left."""
    k = dist.subgroups.index(subgroup)
    terms = literal_terms(dist, utility, node)
    scores = sorted({s for s, _ in terms})
    best = (ZERO, None, ZERO)
    for hi in range(len(scores)):
        for lo in range(hi + 1):
            moment = sum((a.weight * a.c[k] * x for a, (s, x) in zip(dist.atoms, terms)
                          if scores[lo] <= s <= scores[hi]), ZERO)
            if abs(moment) > best[0]:
                best = (abs(moment), (scores[lo], scores[hi]), moment)
    return best


def brute_force_audit(dist, utilities):
    """All rows in the engine's order: subgroups, utilities, UC row then ``V_T(u)``."""
    rows = []
    for c in dist.subgroups:
        for name, u in utilities.items():
            for node in (None,) + tuple(u.relevant_nodes):
                rows.append((c, name, node) + brute_force_row(dist, u, c, node))
    return rows
