"""Golden vectors (``huc-vectors/1``): the catalogue (the checker of another implementation's
answers against them is :mod:`huc_ref.conformance`).

Like Project Wycheproof's test vectors: each vector has an ``id``, a ``comment`` giving
its provenance (a paper section, a hand derivation, or the generator's seed and
version), ``flags`` naming the edge cases it exercises, the ``huc-case/1`` input and the
exact ``huc-result/1`` expected output, plus the tolerance a float implementation may
use.  Invalid vectors carry a malformed input and the expected error ``kind`` and
``path``.  ``python -m huc_ref vectors generate huc_ref/data/vectors`` regenerates every file byte for
byte (seeded; ``GENERATOR`` names the version).
"""

from __future__ import annotations

import copy
import json
import random
import re
from fractions import Fraction
from pathlib import Path

from .audit import atom_terms
from .errors import ARGUMENT_KINDS, HUCError, printable
from .errors import ERROR_KINDS as _ALL_ERROR_KINDS
from .formats import as_path, dumps, load_json, read_case, read_document
from .rational import exact, fraction_text

__all__ = ["DELETE", "mutate", "FLAGS", "ERROR_KINDS", "GENERATOR", "build_vector_files", "write_vector_files",
           "load_vectors", "vector_case", "export_cases", "answer_cases", "default_vector_dir", "schema"]

#: The generator that wrote the vector files: changes only when their content does, not with
#: the package version (so the published files stay byte for byte what they were).
GENERATOR = "huc-ref 0.2.0 vectors (seed 20261130)"
SEED = 20261130
N_GENERATED = 240
FORMAT = "huc-vectors/1"
TOLERANCE = {"absolute": "1e-9", "reason": "values are sums of at most n products of numbers in [-1, 1] with "
             "weights summing to 1 (n <= 24 here): a double-precision implementation's rounding error is below "
             "1e-13; 1e-9 leaves margin.  A witness interval is checked with score membership widened by 1e-9."}

#: The edge-case flags a vector may carry (Wycheproof's ``flags``), each with what it means.
FLAGS = {
    "paper": "a worked example or instance quoted from the paper",
    "generated": "produced by the seeded generator",
    "ties": "some utility gives equal scores to different atoms (tie blocks)",
    "unary_node": "the tree has a node with one child",
    "non_binary_node": "the tree has a node with three or more children",
    "flat_tree": "the root is the only internal node (F.2: HUC = UC)",
    "two_leaf_tree": "two labels: binary UC (F.2)",
    "deep_tree": "the tree has depth >= 10",
    "wide_node": "the tree has a node with 30 or more children",
    "many_labels": "ten or more labels",
    "tiny_probabilities": "some prediction entry is below 1e-250 (a softmax's tails, near float64's smallest normal "
                          "number, 2.2e-308)",
    "cancellation": "some (subgroup, utility) has UC row sup 0 but a positive node sup (App. D.1)",
    "zero_sup": "some candidate has sup 0 (empty witness interval)",
    "subgroup_weights": "some subgroup value is neither 0 nor 1 (signed or fractional weights)",
    "several_subgroups": "more than one subgroup",
    "several_utilities": "more than one utility",
    "population": "every atom has a label law eta",
    "sample": "every atom is a sample point (a label); weights default to 1/n",
    "mixed_atoms": "population and sample atoms together",
    "large_denominators": "some input number has a denominator above 2^64",
    "long_numbers": "some expected number has more than 4,300 digits (Python's default limit on converting "
                    "integers to and from text; an implementation must lift it or write integers another way)",
    "no_relevant_node": "some utility has no relevant node (constant on every branching)",
    "mcgrad_tie": "tied scores where an ungrouped cumulative sum (MCGrad's ecce) differs from the grouped definition",
    **{f"family_{k}": f"uses a {k} utility (docs/specification.md §5)" for k in
       ("table", "subtree", "rank", "top_k", "decision", "binary_decision", "top1_at_depth", "aggregated",
        "per_atom")},
    "invalid": "the input must be rejected",
}

#: The catalogue of bad-input kinds of a case document (:data:`huc_ref.errors.ERROR_KINDS`, without
#: the catch-all ``invalid`` and the kinds of arguments and files, ``ARGUMENT_KINDS``, no document has).
ERROR_KINDS = {k: v for k, v in _ALL_ERROR_KINDS.items() if k != "invalid" and k not in ARGUMENT_KINDS}


def _tree(children, root="v0"):
    return {"root": root, "children": children}


FOUR = _tree({"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
FOUR_LABELS = ["y1", "y2", "y3", "y4"]
J1_TREE = _tree({"cause": ["noninf", "spread"], "noninf": ["y1", "y2"], "spread": ["site", "shock"],
                 "site": ["upper", "lower"], "upper": ["y3", "y4"], "lower": ["y5", "y6"], "shock": ["y7", "y8"]},
                root="cause")


def _case(case_id, description, tree, labels, utilities, atoms, subgroups=None):
    """A fresh huc-case/1 document (deep-copied: mutations never reach shared pieces)."""
    tree, labels, utilities, atoms = copy.deepcopy((tree, labels, utilities, atoms))
    doc = {"format": "huc-case/1", "id": case_id, "description": description, "tree": tree, "labels": labels}
    if subgroups is not None:
        doc["subgroups"] = subgroups
    doc["utilities"] = utilities
    doc["atoms"] = atoms
    return doc


def _paper_cases():
    table = {"kind": "table", "values": [-1, 1, 1, 1]}
    y4 = {"kind": "table", "values": [0, 0, 0, 1]}
    yield ("paper-d1-cancellation",
           "App. D.1: exact cancellation, UC = 0 and HUC = 1/4 (also docs/specification.md §6's example)",
           _case("paper-d1-cancellation", "App. D.1", FOUR, FOUR_LABELS, {"u": table},
                 [{"weight": 1, "c": [1], "p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}], ["all"]))
    classwise = {f"e_{y}": {"kind": "table", "values": [1 if z == y else 0 for z in FOUR_LABELS]} for y in FOUR_LABELS}
    classwise |= {"J_D": {"kind": "subtree", "node": "vL"}, "J_E": {"kind": "subtree", "node": "y1"}}
    yield ("paper-d2-marginal-calibration", "App. D.2: zero class-wise and subtree-indicator UC; nonzero HUC",
           _case("paper-d2-marginal-calibration", "App. D.2", FOUR, FOUR_LABELS, classwise,
                 [{"weight": "1/2", "p": ["1/4", "1/4", "2/5", "1/10"], "eta": ["3/8", "1/8", "2/5", "1/10"]},
                  {"weight": "1/2", "p": ["1/4", "1/4", "1/10", "2/5"], "eta": ["1/8", "3/8", "1/10", "2/5"]}]))
    yield ("paper-d3-branch-without-impact", "App. D.3: D_top = 0, D_L = 0, D_R = 1/20",
           _case("paper-d3-branch-without-impact", "App. D.3", FOUR, FOUR_LABELS, {"u": y4},
                 [{"weight": 1, "p": ["1/4"] * 4, "eta": ["1/20", "9/20", "1/5", "3/10"]}]))
    yield ("paper-d4-common-cell", "App. D.4: cell moments 1/32, 0, -1/40 in the common cell mu_u = 1/4",
           _case("paper-d4-common-cell", "App. D.4", FOUR, FOUR_LABELS, {"u": y4},
                 [{"weight": "1/2", "p": ["1/2", "1/10", "3/20", "1/4"], "eta": ["5/12", "1/12", "3/16", "5/16"]},
                  {"weight": "1/2", "p": ["1/5", "3/10", "1/4", "1/4"], "eta": ["1/5", "3/10", "3/10", "1/5"]}]))
    yield ("paper-prop-3-3-tight", "Prop. 3.3 attained: UC = 1/2 = |V_T(u)| HUC (hand derivation from D.1's setup)",
           _case("paper-prop-3-3-tight", "Prop. 3.3 tight", FOUR, FOUR_LABELS, {"u": table},
                 [{"weight": 1, "p": ["1/4"] * 4, "eta": [0, "1/4", "3/8", "3/8"]}]))
    eta = ["13/80", "7/80", "21/125", "21/500", "189/2000", "441/2000", "9/80", "9/80"]
    labels = [f"y{i}" for i in range(1, 9)]
    us = {"u1": {"kind": "binary_decision", "S": ["y4", "y6"], "D": ["y3", "y4", "y5", "y6"], "tau": "1/2"},
          "u2": {"kind": "binary_decision", "S": ["y2", "y5", "y6", "y8"], "D": labels, "tau": "1/2"},
          "u3": {"kind": "binary_decision", "S": ["y8"], "D": ["y7", "y8"], "tau": "1/3"}}
    yield ("paper-j1-toy-population", "App. J.1 toy (docs/specification.md §7 reconstruction): true law eta, "
           "uniform initial "
           "prediction, three binary decisions",
           _case("paper-j1-toy-population", "App. J.1", J1_TREE, labels, us,
                 [{"weight": 1, "p": ["1/8"] * 8, "eta": eta}]))


def _edge_cases():
    flat = _tree({"r": ["a", "b", "c"]}, "r")
    yield ("edge-flat-tree", "flat tree: HUC = UC (F.2); sample atoms with ties",
           _case("edge-flat-tree", "", flat, ["a", "b", "c"], {"u": {"kind": "table", "values": [-1, "1/2", 1]}},
                 [{"p": ["1/2", "1/4", "1/4"], "label": "a"}, {"p": ["1/2", "1/4", "1/4"], "label": "c"},
                  {"p": ["1/3", "1/3", "1/3"], "label": "b"}]))
    two = _tree({"r": ["neg", "pos"]}, "r")
    yield ("edge-two-leaf-binary", "two-leaf tree: binary UC (F.2)",
           _case("edge-two-leaf-binary", "", two, ["neg", "pos"], {"u": {"kind": "table", "values": [0, 1]}},
                 [{"p": ["2/3", "1/3"], "label": "pos"}, {"p": ["1/3", "2/3"], "label": "pos"},
                  {"p": ["1/3", "2/3"], "label": "neg"}, {"p": ["1/6", "5/6"], "label": "pos"}]))
    yield ("edge-mcgrad-tie", "scores (1/2, 1/2), labels (1, 0): the grouped definition gives UC = 0; an ungrouped "
           "cumulative sum (MCGrad's ecce) gives 1/4",
           _case("edge-mcgrad-tie", "", two, ["neg", "pos"], {"u": {"kind": "table", "values": [0, 1]}},
                 [{"p": ["1/2", "1/2"], "label": "pos"}, {"p": ["1/2", "1/2"], "label": "neg"}]))
    chain = {f"c{i}": [f"c{i + 1}"] for i in range(12)}
    chain["c12"] = ["a", "b"]
    chain["v0"] = ["c0", "z"]
    yield ("edge-deep-unary-chain", "a unary chain of depth 13 above a branching: unary nodes contribute nothing",
           _case("edge-deep-unary-chain", "", _tree(chain), ["a", "b", "z"],
                 {"u": {"kind": "table", "values": [1, -1, 0]}},
                 [{"weight": "1/2", "p": ["1/2", "1/4", "1/4"], "eta": ["1/4", "1/4", "1/2"]},
                  {"weight": "1/2", "p": ["1/5", "3/5", "1/5"], "eta": [0, 1, 0]}]))
    big = 2 ** 80 + 1
    yield ("edge-large-denominators", "predictions with 80-bit denominators",
           _case("edge-large-denominators", "", FOUR, FOUR_LABELS, {"u": {"kind": "table", "values": [-1, 1, 1, 1]}},
                 [{"p": [f"1/{big}", f"{big - 1}/{3 * big}", f"{big - 1}/{3 * big}", f"{big - 1}/{3 * big}"],
                   "label": "y2"},
                  {"p": ["1/4"] * 4, "label": "y1"}]))
    yield ("edge-float-tails", "float64 predictions with tails near 1e-301 (each entry its binary value, a/2^53 or "
           "m/2^1052), each row divided by its sum exactly: 317-digit denominators, and over 4,300 digits in the "
           "exact result",
           _case("edge-float-tails", "", FOUR, FOUR_LABELS,
                 {"u": {"kind": "table", "values": [-1, 1, 1, 1]}, "top": {"kind": "top1_at_depth", "depth": 1}},
                 _float_tail_atoms(random.Random(SEED), 24)))
    yield from _shape_cases(random.Random(SEED))
    yield ("edge-canonically-calibrated", "eta = p: every sup is 0 (Prop. 3.3)",
           _case("edge-canonically-calibrated", "", FOUR, FOUR_LABELS,
                 {"u": {"kind": "rank", "theta": [1, "1/2", 0, -1]}},
                 [{"weight": "1/2", "p": ["1/10", "2/10", "3/10", "4/10"], "eta": ["1/10", "2/10", "3/10", "4/10"]},
                  {"weight": "1/2", "p": ["1/4"] * 4, "eta": ["1/4"] * 4}]))
    families = {
        "table": {"kind": "table", "values": [-1, 0, "1/2", 1]},
        "subtree": {"kind": "subtree", "node": "vR"},
        "rank": {"kind": "rank", "theta": [1, "1/2", "-1/2", -1]},
        "top_k": {"kind": "top_k", "k": 2},
        "decision": {"kind": "decision", "actions": {"wait": [0, 0, 0, 0], "treat": [-1, "-1/2", 1, 1]},
                     "order": ["wait", "treat"]},
        "binary_decision": {"kind": "binary_decision", "S": ["y4"], "D": ["y3", "y4"], "tau": "1/3"},
        "top1_at_depth": {"kind": "top1_at_depth", "depth": 1},
        "aggregated": {"kind": "aggregated", "base": {"kind": "table", "values": [-1, 0, "1/2", 1]}, "S": ["v0"]},
        "per_atom": {"kind": "per_atom", "values": [[1, 0, 0, -1], [0, "1/2", "1/2", 0], [-1, -1, 1, 1]]},
    }
    atoms = [{"weight": "1/3", "c": [1, -1], "p": ["1/10", "2/10", "3/10", "4/10"], "eta": ["1/4", "1/4", 0, "1/2"]},
             {"weight": "1/3", "c": [1, "1/2"], "p": ["4/10", "3/10", "2/10", "1/10"], "label": "y3"},
             {"weight": "1/3", "c": [1, 0], "p": ["1/4"] * 4, "eta": [0, "1/2", "1/2", 0]}]
    for kind, spec in families.items():
        yield (f"edge-family-{kind.replace('_', '-')}", f"the {kind} family (docs/specification.md §5) with signed "
               "subgroup weights "
               "and mixed atoms",
               _case(f"edge-family-{kind.replace('_', '-')}", "", FOUR, FOUR_LABELS, {"u": spec}, atoms,
                     ["all", "signed"]))


def _shape_cases(rng):
    """The shapes of practitioners' data that random small trees never make (a flat ten-class
    tree, a node with thirty children, a hundred-class softmax with tails near 1e-300)."""
    def law(k, low=1):
        raw = [rng.randint(low, 6) for _ in range(k)]
        return [fraction_text(Fraction(x, sum(raw))) for x in raw]
    ten = [f"c{k}" for k in range(10)]
    pool = [law(10) for _ in range(3)]  # few predictions: ties
    yield ("edge-flat-ten", "a flat ten-class tree (HUC = UC, F.2): top-3, a rank utility and a class indicator on "
           "sample atoms with ties",
           _case("edge-flat-ten", "", _tree({"r": ten}, "r"), ten,
                 {"top3": {"kind": "top_k", "k": 3},
                  "rank": {"kind": "rank", "theta": [fraction_text(Fraction(9 - 2 * k, 9)) for k in range(10)]},
                  "c0": {"kind": "table", "values": [1] + [0] * 9}},
                 [{"p": rng.choice(pool), "label": rng.choice(ten)} for _ in range(10)]))
    wide = [f"x{k:02d}" for k in range(30)]
    labels = wide + ["y", "z"]
    atoms = []
    for i in range(6):
        atom = {"weight": "1/6", "c": [1, rng.choice([0, 1, "-1/2"])], "p": law(32)}
        atom |= {"eta": law(32, 0)} if i % 2 else {"label": rng.choice(labels)}
        atoms.append(atom)
    yield ("edge-thirty-children", "a node with thirty children, the last node at depth 2 (r -> a -> g, after the "
           "leaf y): top-1 at depths 2 and 3, top-5 and a subtree indicator, mixed atoms, a signed subgroup",
           _case("edge-thirty-children", "", _tree({"r": ["a", "z"], "a": ["y", "g"], "g": wide}, "r"), labels,
                 {"top1@2": {"kind": "top1_at_depth", "depth": 2}, "top1@3": {"kind": "top1_at_depth", "depth": 3},
                  "top5": {"kind": "top_k", "k": 5}, "in_g": {"kind": "subtree", "node": "g"}},
                 atoms, ["all", "s"]))
    hundred = [f"l{k:02d}" for k in range(100)]
    groups = {f"g{j}": hundred[10 * j:10 * j + 10] for j in range(10)}
    atoms = []
    for i in range(8):
        heavy = range(10 * (g := rng.randrange(10)), 10 * g + 10)
        row = [Fraction(rng.randrange(2**52, 2**53), 2**53 if j in heavy else 2**1052) for j in range(100)]
        total = sum(row)
        label = rng.choice(heavy) if i % 4 else rng.choice([j for j in range(100) if j not in heavy])
        atoms.append({"p": [fraction_text(x / total) for x in row], "label": hundred[label]})
    yield ("edge-hundred-class-tails", "a hundred-class softmax on a 10 x 10 tree: each row ten float64 entries "
           "a/2^53 in one group and ninety tails m/2^1052 (about 1e-301), divided by its sum exactly; two labels "
           "drawn from the tails",
           _case("edge-hundred-class-tails", "", _tree({"r": list(groups), **groups}, "r"), hundred,
                 {"top1@1": {"kind": "top1_at_depth", "depth": 1}, "top1@2": {"kind": "top1_at_depth", "depth": 2},
                  "top5": {"kind": "top_k", "k": 5}}, atoms))


def _float_tail_atoms(rng, n):
    """``n`` sample atoms on four labels: each row one or two float64 entries ``a / 2^53`` and
    the others ``m / 2^1052`` (53-bit ``m``: about 1e-301, as a 100-class softmax's tails), as
    exact binary values divided by the row's sum; labels drawn from the row itself."""
    atoms = []
    for i in range(n):
        heavy = rng.sample(range(4), 1 + i % 2)
        row = [Fraction(rng.randrange(2**52, 2**53), 2**53) if j in heavy else
               Fraction(rng.randrange(2**52, 2**53), 2**1052) for j in range(4)]
        total = sum(row)
        label = FOUR_LABELS[rng.choice(heavy) if i % 5 else rng.randrange(4)]
        atoms.append({"p": [fraction_text(x / total) for x in row], "label": label})
    return atoms


def _random_tree(rng, k):
    counter = iter(range(1000))
    root = f"v{next(counter)}"
    children, leaves, stack = {}, [], [(root, k)]
    while stack:
        node, size = stack.pop()
        unary = rng.random() < 0.12
        if size == 1 and not unary:
            leaves.append(node)
            continue
        d = 1 if unary else rng.randint(2, min(size, 4))
        cuts = sorted(rng.sample(range(1, size), d - 1)) if d > 1 else []
        parts = [b - a for a, b in zip([0] + cuts, cuts + [size])]
        kids = [f"v{next(counter)}" for _ in parts]
        children[node] = kids
        stack.extend(zip(kids, parts))
    rng.shuffle(leaves)
    return _tree(children, root), leaves


def _random_law(rng, k, positive):
    raw = [rng.randint(1 if positive else 0, 4) for _ in range(k)]
    if not sum(raw):
        raw[rng.randrange(k)] = 1
    total = sum(raw)
    return [fraction_text(Fraction(x, total)) for x in raw]


def _random_utility(rng, tree, labels, n_atoms):
    k = len(labels)
    vals = [fraction_text(Fraction(rng.randint(-4, 4), 4)) for _ in range(k)]
    kind = rng.choice(["per_atom", "per_atom", "table", "rank", "top_k", "binary_decision", "decision",
                       "top1_at_depth", "subtree"])
    if kind == "per_atom":
        return {"kind": "per_atom", "values": [[fraction_text(Fraction(rng.randint(-4, 4), 4)) for _ in range(k)]
                                               for _ in range(n_atoms)]}
    if kind == "table":
        return {"kind": "table", "values": vals}
    if kind == "rank":
        return {"kind": "rank", "theta": vals}
    if kind == "top_k":
        return {"kind": "top_k", "k": rng.randint(1, k)}
    if kind == "binary_decision":
        return {"kind": "binary_decision", "S": sorted(rng.sample(labels, rng.randint(0, k))),
                "D": sorted(rng.sample(labels, rng.randint(0, k))), "tau": rng.choice(["0", "1/3", "1/2", "1"])}
    if kind == "decision":
        return {"kind": "decision", "actions": {"a": vals, "b": [fraction_text(Fraction(rng.randint(-4, 4), 4))
                                                                 for _ in range(k)]}, "order": ["a", "b"]}
    if kind == "top1_at_depth":
        return {"kind": "top1_at_depth", "depth": rng.randint(0, 3)}
    nodes = [tree["root"]] + [c for kids in tree["children"].values() for c in kids]
    return {"kind": "subtree", "node": rng.choice(nodes)}


def _generated_cases():
    rng = random.Random(SEED)
    for i in range(N_GENERATED):
        k = rng.randint(2, 8) if i % 10 else rng.randint(1, 3)
        tree, labels = _random_tree(rng, k)
        n = rng.randint(1, 7)
        kind = rng.choice(["population", "sample", "mixed"])
        n_sub = rng.randint(1, 3)
        subgroups = ["all", "g1", "g2"][:n_sub]
        pool = [_random_law(rng, k, True) for _ in range(rng.randint(1, 3))]  # few predictions: ties
        weights = [rng.randint(1, 3) for _ in range(n)]
        atoms = []
        for j in range(n):
            atom = {"weight": fraction_text(Fraction(weights[j], sum(weights))),
                    "c": ["1"] + [rng.choice(["0", "1", "-1/2", "1/3"]) for _ in range(n_sub - 1)],
                    "p": rng.choice(pool)}
            if kind == "sample" or (kind == "mixed" and rng.random() < 0.5):
                atom["label"] = rng.choice(labels)
            else:
                atom["eta"] = _random_law(rng, k, False)
            atoms.append(atom)
        us = {f"u{m}": _random_utility(rng, tree, labels, n) for m in range(rng.randint(1, 3))}
        cid = f"gen-{i:03d}"
        yield (cid, f"generated: {GENERATOR}, case {i}", _case(cid, "", tree, labels, us, atoms, subgroups))


def _flags(case_doc, result) -> list[str]:
    case = read_case(case_doc)
    tree, dist = case.tree, case.distribution
    flags = set()
    if any(tree.d(v) == 1 for v in tree.internal_nodes):
        flags.add("unary_node")
    if any(tree.d(v) >= 3 for v in tree.internal_nodes):
        flags.add("non_binary_node")
    if tree.internal_nodes == (tree.root,):
        flags.add("flat_tree")
    if tree.K == 2:
        flags.add("two_leaf_tree")
    if max(tree.depth(v) for v in tree.nodes) >= 10:
        flags.add("deep_tree")
    if any(tree.d(v) >= 30 for v in tree.internal_nodes):
        flags.add("wide_node")
    if tree.K >= 10:
        flags.add("many_labels")
    kinds = {"population" if a.eta is not None else "sample" for a in dist.atoms}
    flags.add(kinds.pop() if len(kinds) == 1 else "mixed_atoms")
    if any(c not in (0, 1) for a in dist.atoms for c in a.c):
        flags.add("subgroup_weights")
    if len(dist.subgroups) > 1:
        flags.add("several_subgroups")
    if len(case.utilities) > 1:
        flags.add("several_utilities")
    numbers = [x for a in dist.atoms for x in a.p + (a.eta or ())]
    if any(x.denominator > 2 ** 64 for x in numbers):
        flags.add("large_denominators")
    if any(0 < x < Fraction(1, 10**250) for a in dist.atoms for x in a.p):
        flags.add("tiny_probabilities")
    if any(len(r[key]) > 4300 for r in result["candidates"] for key in ("sup", "moment")):
        flags.add("long_numbers")
    for u in case.utilities.values():
        flags.add(f"family_{u.kind}")
        if isinstance(u.to_json().get("base"), dict):
            flags.add(f"family_{u.base.kind}")
        scores = [t.score for t in atom_terms(dist, u, ())]
        if len(set(scores)) < len(scores):
            flags.add("ties")
        if not u.relevant_nodes:
            flags.add("no_relevant_node")
    rows = result["candidates"]
    if any(r["sup"] == "0" for r in rows):
        flags.add("zero_sup")
    for r in rows:
        if r["node"] is None and r["sup"] == "0":
            if any(s["node"] and s["subgroup"] == r["subgroup"] and s["utility"] == r["utility"] and s["sup"] != "0"
                   for s in rows):
                flags.add("cancellation")
    return sorted(flags)


def _valid_vector(vid, comment, case_doc, extra_flags):
    result = read_case(case_doc).result_json()
    return {"id": vid, "comment": comment, "flags": sorted(set(_flags(case_doc, result)) | set(extra_flags)),
            "case": case_doc, "expected": result, "tolerance": TOLERANCE}


# ----------------------------------------------------------------------------- invalid inputs
def _base_case():
    return _case("base", "", FOUR, FOUR_LABELS, {"u": {"kind": "table", "values": [-1, 1, 1, 1]}},
                 [{"weight": "1/2", "c": [1], "p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]},
                  {"weight": "1/2", "c": [1], "p": ["1/2", "1/4", "1/8", "1/8"], "label": "y3"}], ["all"])


#: The value that makes :func:`mutate` delete the key instead of replacing its value.
DELETE = object()


def mutate(doc, path, value):
    """A deep copy of a JSON document with one value replaced or deleted (docs/specification.md §6).

    The invalid vectors are valid cases mutated so.

    Parameters
    ----------
    doc : dict or list
        The JSON document (not changed).
    path : sequence of str or int
        The keys and indices down to the value.
    value : object
        The new value, or :data:`DELETE` to delete the key.

    Returns
    -------
    dict or list
        The changed copy.

    Examples
    --------
    >>> mutate({"a": [1, 2]}, ["a", 1], 5), mutate({"a": 1, "b": 2}, ["a"], DELETE)
    ({'a': [1, 5]}, {'b': 2})
    """
    doc = copy.deepcopy(doc)
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc

# (id, kind, mutation path, value) -- a mutation of the base case -- or (id, kind, None, raw text).
INVALID = [
    ("not-json", "json", None, '{"format": "huc-case/1", "atoms": ['),
    ("empty-document", "json", None, ""),
    ("repeated-key", "json", None, '{"format": "huc-case/1", "format": "huc-case/1"}'),
    ("top-level-list", "type", None, "[1, 2, 3]"),
    ("wrong-format", "format", ["format"], "huc-case/2"),
    ("unknown-top-field", "unknown_field", ["extra"], 1),
    ("missing-atoms", "missing_field", ["atoms"], DELETE),
    ("missing-tree-root", "missing_field", ["tree", "root"], DELETE),
    ("missing-p", "missing_field", ["atoms", 0, "p"], DELETE),
    ("unknown-atom-field", "unknown_field", ["atoms", 0, "q"], 1),
    ("p-sums-to-999-1000", "probability_sum", ["atoms", 0, "p"], ["0.25", "0.25", "0.25", "0.249"]),
    ("p-has-zero", "nonpositive", ["atoms", 0, "p"], ["1/2", "1/2", 0, 0]),
    ("p-negative", "nonpositive", ["atoms", 0, "p"], ["1/2", "1/2", "1/2", "-1/2"]),
    ("p-too-short", "length", ["atoms", 0, "p"], ["1/2", "1/2"]),
    ("p-nan", "not_exact", ["atoms", 0, "p", 0], "NaN"),
    ("p-infinity", "not_exact", ["atoms", 0, "p", 0], "Infinity"),
    ("p-text", "not_exact", ["atoms", 0, "p", 0], "one quarter"),
    ("p-code-string", "not_exact", ["atoms", 0, "p", 0], "__import__('os').getcwd()"),
    ("p-boolean", "not_exact", ["atoms", 0, "p", 0], True),
    ("p-huge-exponent", "too_large", ["atoms", 0, "p", 0], "1e999999"),
    ("p-huge-numerator", "too_large", ["atoms", 0, "p", 0], "1" * 4500 + "/4"),
    ("eta-sums-to-3-2", "probability_sum", ["atoms", 0, "eta"], ["1/2", "1/2", "1/2", 0]),
    ("eta-negative", "nonpositive", ["atoms", 0, "eta"], ["1/2", "1/2", "1/2", "-1/2"]),
    ("eta-and-label", "structure", ["atoms", 0, "label"], "y1"),
    ("unknown-label", "reference", ["atoms", 1, "label"], "y9"),
    ("weights-sum-to-3-4", "probability_sum", ["atoms", 0, "weight"], "1/4"),
    ("weight-zero", "nonpositive", ["atoms", 0, "weight"], 0),
    ("weight-missing-for-one", "missing_field", ["atoms", 0, "weight"], DELETE),
    ("subgroup-value-2", "range", ["atoms", 0, "c"], [2]),
    ("subgroup-vector-long", "length", ["atoms", 0, "c"], [1, 1]),
    ("subgroup-repeated", "structure", ["subgroups"], ["all", "all"]),
    ("utility-value-2", "range", ["utilities", "u", "values"], [-1, 1, 1, 2]),
    ("utility-values-short", "length", ["utilities", "u", "values"], [-1, 1, 1]),
    ("utility-unknown-kind", "unknown_kind", ["utilities", "u", "kind"], "tabel"),
    ("utility-unknown-field", "unknown_field", ["utilities", "u", "valuez"], [0, 0, 0, 0]),
    ("utility-missing-values", "missing_field", ["utilities", "u", "values"], DELETE),
    ("no-utilities", "structure", ["utilities"], {}),
    ("top-k-zero", "structure", ["utilities", "u"], {"kind": "top_k", "k": 0}),
    ("subtree-unknown-node", "reference", ["utilities", "u"], {"kind": "subtree", "node": "zz"}),
    ("aggregated-not-ancestor-closed", "structure", ["utilities", "u"],
     {"kind": "aggregated", "base": {"kind": "table", "values": [0, 1, 0, 1]}, "S": ["vL"]}),
    ("per-atom-row-count", "structure", ["utilities", "u"], {"kind": "per_atom", "values": [[0, 0, 0, 0]]}),
    ("tree-two-parents", "tree", ["tree", "children", "vR"], ["y3", "y1"]),
    ("tree-cycle", "tree", ["tree", "children", "vR"], ["y3", "y4", "v0"]),
    ("tree-repeated-child", "tree", ["tree", "children", "vL"], ["y1", "y1", "y2"]),
    ("tree-detached-cycle", "tree", ["tree", "children", "x"], ["x2"]),
    ("labels-missing-leaf", "labels", ["labels"], ["y1", "y2", "y3"]),
    ("labels-extra", "labels", ["labels"], ["y1", "y2", "y3", "y4", "y5"]),
    ("labels-repeated", "labels", ["labels"], ["y1", "y1", "y3", "y4"]),
    ("labels-internal-node", "labels", ["labels"], ["y1", "y2", "y3", "vL"]),
    ("atoms-not-a-list", "type", ["atoms"], {"p": [1]}),
]


def _invalid_vectors():
    out = []
    for vid, kind, path, value in INVALID:
        entry = {"id": f"invalid-{vid}", "comment": f"hand-made: {ERROR_KINDS[kind]}", "flags": ["invalid", kind]}
        if path is None:
            entry["input_text"] = value
            source = value
        else:
            entry["input"] = mutate(_base_case(), path, value)
            source = entry["input"]
            if vid == "tree-detached-cycle":
                source["tree"]["children"]["x2"] = ["x"]
        try:
            read_case(source)
        except HUCError as err:
            message = str(err)
        else:
            raise AssertionError(f"invalid vector {vid} was accepted")
        entry["error"] = {"kind": kind, "path": message.split(":", 1)[0] if ": " in message else "",
                          "message": message}
        out.append(entry)
    return out


def build_vector_files() -> dict[str, dict]:
    """Every golden vector file, as ``generate`` writes them (docs/specification.md §6).

    Returns
    -------
    dict of str to dict
        ``{file name: huc-vectors/1 document}``: the paper's worked examples, the hand-made edge
        cases, the seeded generated cases and the invalid inputs.

    Examples
    --------
    >>> {name: len(doc["vectors"]) for name, doc in build_vector_files().items()}
    {'paper.json': 6, 'edge_cases.json': 19, 'generated.json': 240, 'invalid.json': 50}
    """
    def doc(title, vectors):
        return {"format": FORMAT, "title": title, "generator": GENERATOR, "schema": "huc-vectors-1.schema.json",
                "flags": FLAGS, "error_kinds": ERROR_KINDS, "vectors": vectors}
    return {
        "paper.json": doc("The paper's worked examples and instances",
                          [_valid_vector(i, c, d, ["paper"]) for i, c, d in _paper_cases()]),
        "edge_cases.json": doc("Hand-made edge cases", [_valid_vector(i, c, d, ["mcgrad_tie"] if "mcgrad" in i
                                                                      else []) for i, c, d in _edge_cases()]),
        "generated.json": doc(f"{N_GENERATED} generated cases ({GENERATOR})",
                              [_valid_vector(i, c, d, ["generated"]) for i, c, d in _generated_cases()]),
        "invalid.json": doc("Malformed inputs and the error each must raise", _invalid_vectors()),
    }


def default_vector_dir() -> Path:
    """The folder of the published golden vectors (docs/specification.md §6).

    Returns
    -------
    pathlib.Path
        ``huc_ref/data/vectors``, shipped as package data.

    Examples
    --------
    >>> sorted(p.name for p in default_vector_dir().glob("*.json"))[:3]
    ['edge_cases.json', 'generated.json', 'huc-vectors-1.schema.json']
    """
    return Path(__file__).resolve().parent / "data" / "vectors"


def write_vector_files(out: Path) -> list[Path]:
    """Regenerate every golden vector file, byte for byte, into a folder (docs/specification.md §6).

    Parameters
    ----------
    out : str or path-like
        The folder (made where it does not exist).

    Returns
    -------
    list of pathlib.Path
        The files written: the vector files of :func:`build_vector_files`, then the schema
        ``huc-vectors-1.schema.json``.

    Raises
    ------
    HUCError
        Where ``out`` is not a usable path.

    Examples
    --------
    Regenerating audits all 240 generated cases exactly (about a minute), so the example is the
    test ``tests/test_vectors.py::test_files_regenerate_byte_for_byte``, not a doctest.  From the
    command line::

        python -m huc_ref vectors generate huc_ref/data/vectors
    """
    out = as_path(out, "out")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, doc in build_vector_files().items():
        path = out / name
        path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        written.append(path)
    path = out / "huc-vectors-1.schema.json"
    path.write_text(json.dumps(schema(), indent=1) + "\n")
    return written + [path]


def load_vectors(directory: Path | None = None) -> list[dict]:
    """All the vectors of the ``huc-vectors/1`` files in a folder (docs/specification.md §6).

    Parameters
    ----------
    directory : str or path-like, optional
        The folder; by default this tree's (:func:`default_vector_dir`).  Its ``*.schema.json``
        files are skipped.

    Returns
    -------
    list of dict
        The vectors of every file, files in order of name.

    Raises
    ------
    HUCError
        Where the folder holds no vector file, a file is not a ``huc-vectors/1`` document, a
        vector's id is not one (ids name files) or is used twice, or a vector lacks a part the
        checker reads.

    Examples
    --------
    >>> d1 = next(v for v in load_vectors() if v["id"] == "paper-d1-cancellation")
    >>> d1["expected"]["huc"]["value"], "cancellation" in d1["flags"]
    ('1/4', True)
    """
    directory = default_vector_dir() if directory is None else as_path(directory, "vectors")
    files = sorted(directory.glob("*.json"))
    files = [f for f in files if not f.name.endswith(".schema.json")]
    if not files:
        raise HUCError(f"no huc-vectors/1 files in {str(directory)!r}", kind="file")
    vectors, seen = [], set()
    for f in files:
        doc = load_json(read_document(f, "vector file"))
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("vectors"), list):
            raise HUCError(f"{f.name}: not a {FORMAT} document", kind="format")
        for k, v in enumerate(doc["vectors"]):
            vid = v.get("id") if isinstance(v, dict) else None
            if not isinstance(vid, str) or not VECTOR_ID.fullmatch(vid):
                raise HUCError(f"{f.name}: vectors[{k}].id: {printable(repr(vid), 80)} is not a vector id "
                               "(1-128 letters, digits, '.', '_' or '-', not starting with '.'): ids name files",
                               kind="type")
            if vid in seen:
                raise HUCError(f"{f.name}: vectors[{k}].id: {vid!r} is used twice", kind="structure")
            _vector_shape(v, f"{f.name}: vectors[{k}]")
            seen.add(vid)
            vectors.append(v)
    return vectors


def _vector_shape(v: dict, where: str) -> None:
    """The parts of a vector that ``export``, ``answer`` and ``check`` read, checked for their JSON
    shape (a vector file of one's own is input like any other: a missing or mistyped part is one
    HUCError naming it, never a KeyError or TypeError in the checker): an invalid input's ``error.kind``
    and ``input`` (or ``input_text``); a valid case's ``case``, ``tolerance.absolute`` and
    ``expected`` (its ``uc`` and ``huc`` values, its rows' subgroup, utility, node and sup, its
    relevant nodes).  The case and the numbers are read where they are used."""
    def need(ok: bool, part: str, what: str) -> None:
        if not ok:
            raise HUCError(f"{where}.{part}: expected {what}", kind="type")
    if ("error" in v) == ("expected" in v):
        raise HUCError(f"{where}: give exactly one of expected (a valid case's result) or error (an invalid "
                       "input's)", kind="structure")
    if "error" in v:
        need(isinstance(v["error"], dict) and isinstance(v["error"].get("kind"), str), "error",
             "an object with a kind (a string)")
        need("input" in v or isinstance(v.get("input_text"), str), "input", "the invalid input (or input_text)")
        return
    need(isinstance(v.get("case"), dict), "case", "a huc-case/1 object")
    need(isinstance(v.get("tolerance"), dict) and isinstance(v["tolerance"].get("absolute"), str), "tolerance",
         "an object with absolute (an exact number as a string)")
    exact(v["tolerance"]["absolute"], f"{where}.tolerance.absolute")
    expected = v["expected"]
    need(isinstance(expected, dict), "expected", "a huc-result/1 object")
    for field in ("uc", "huc"):
        need(isinstance(expected.get(field), dict) and _RATIONAL.fullmatch(str(expected[field].get("value"))),
             f"expected.{field}", "an object with a value (an integer or a/b, as a string)")
    need(isinstance(expected.get("relevant_nodes"), dict), "expected.relevant_nodes", "an object")
    rows = expected.get("candidates")
    need(isinstance(rows, list), "expected.candidates", "a list of rows")
    for j, row in enumerate(rows):
        need(isinstance(row, dict) and isinstance(row.get("subgroup"), str) and isinstance(row.get("utility"), str)
             and "node" in row and (row["node"] is None or isinstance(row["node"], str))
             and isinstance(row.get("sup"), str) and _RATIONAL.fullmatch(row["sup"]), f"expected.candidates[{j}]",
             "a row with subgroup and utility (strings), node (a string or null) and sup (an integer or a/b, as a "
             "string)")


def vector_case(vector: dict):
    """The case of a valid vector, read (docs/specification.md §6).

    Parameters
    ----------
    vector : dict
        A valid vector: its ``case`` is a ``huc-case/1`` document.

    Returns
    -------
    Case
        The :class:`huc_ref.formats.Case`.

    Raises
    ------
    HUCError
        Naming the vector where its case cannot be read: a fault in it is the vector's, not an
        unreadable answer.

    Examples
    --------
    >>> vector_case({"id": "d1", "case": {"format": "huc-case/1", "tree": {"root": "r"}}})
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: vector 'd1': case: labels: missing
    """
    try:
        return read_case(vector["case"])
    except HUCError as err:
        raise HUCError(f"vector {vector['id']!r}: case: {err}", kind=err.kind) from None


#: An expected number's text (the published schema's pattern), checked without reading the number:
#: a vector's results may be longer than an input's digits (``conformance.answer_digits``).
_RATIONAL = re.compile(r"-?[0-9]+(/[0-9]+)?", re.ASCII)


#: What a vector id may be: it names the files ``export`` and ``answer`` write and ``check``
#: reads, so it can hold no path separator and cannot be ``..``.
VECTOR_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}", re.ASCII)


def export_cases(out: Path, directory: Path | None = None) -> int:
    """Write each vector's input as a standalone file ``OUT/<id>.json`` (docs/specification.md §6).

    Parameters
    ----------
    out : str or path-like
        The folder (made where it does not exist).
    directory : str or path-like, optional
        The vectors' folder (:func:`load_vectors`); by default this tree's.

    Returns
    -------
    int
        The number of files written: one per vector, invalid inputs as given.

    Raises
    ------
    HUCError
        As :func:`load_vectors`, or where ``out`` is not a usable path.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     count = export_cases(Path(out))
    ...     d1 = read_case(Path(out) / "paper-d1-cancellation.json")
    >>> count == len(load_vectors()), d1.audit().huc.sup
    (True, Fraction(1, 4))
    """
    out = as_path(out, "out")
    out.mkdir(parents=True, exist_ok=True)
    vectors = load_vectors(directory)
    for v in vectors:
        text = v["input_text"] if "input_text" in v else dumps(v.get("case", v.get("input")))
        (out / f"{v['id']}.json").write_text(text)
    return len(vectors)



# ----------------------------------------------------------------------------- schema and our answers
_EXACT = {"type": "string", "pattern": r"^-?[0-9]+(/[0-9]+)?$"}
_INPUT_NUMBER = {"type": ["integer", "number", "string"]}


def schema() -> dict:
    """The JSON Schema (draft 2020-12) of ``huc-vectors/1`` files (docs/specification.md §6).

    Returns
    -------
    dict
        The schema, with the case and result formats' schemas embedded.

    Examples
    --------
    >>> schema()["properties"]["format"], sorted(schema()["properties"]["vectors"]["items"])
    ({'const': 'huc-vectors/1'}, ['oneOf'])
    """
    from .formats import case_schema, result_schema  # the published schemas, embedded
    case, result = case_schema(), result_schema()
    flags = {"type": "array", "items": {"enum": sorted(FLAGS) + sorted(ERROR_KINDS)}, "uniqueItems": True}
    valid = {"type": "object", "required": ["id", "comment", "flags", "case", "expected", "tolerance"],
             "additionalProperties": False,
             "properties": {"id": {"type": "string", "pattern": "^[a-z0-9-]+$"}, "comment": {"type": "string"},
                            "flags": flags, "case": case, "expected": result,
                            "tolerance": {"type": "object", "required": ["absolute", "reason"]}}}
    invalid = {"type": "object", "required": ["id", "comment", "flags", "error"], "additionalProperties": False,
               "properties": {"id": {"type": "string", "pattern": "^invalid-[a-z0-9-]+$"},
                              "comment": {"type": "string"}, "flags": flags,
                              "input": {}, "input_text": {"type": "string"},
                              "error": {"type": "object", "required": ["kind", "path", "message"],
                                        "properties": {"kind": {"enum": sorted(ERROR_KINDS)}}}},
               "oneOf": [{"required": ["input"]}, {"required": ["input_text"]}]}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "huc-vectors-1.schema.json",
            "title": "huc-vectors/1: golden vectors for Utility Calibration and HUC", "type": "object",
            "required": ["format", "generator", "flags", "error_kinds", "vectors"],
            "properties": {"format": {"const": FORMAT}, "title": {"type": "string"},
                           "generator": {"type": "string"}, "schema": {"type": "string"},
                           "flags": {"type": "object"}, "error_kinds": {"type": "object"},
                           "vectors": {"type": "array", "items": {"oneOf": [valid, invalid]}}}}


def answer_cases(out: Path, directory: Path | None = None) -> int:
    """This implementation's own answers, one ``OUT/<id>.json`` per vector: a reference run (docs/specification.md §6).

    Parameters
    ----------
    out : str or path-like
        The folder (made where it does not exist).
    directory : str or path-like, optional
        The vectors' folder (:func:`load_vectors`); by default this tree's.

    Returns
    -------
    int
        The number of answers written: a valid case's ``huc-result/1``, and for an invalid
        input the reader's verdict (its ``huc-error/1``, or acceptance).

    Raises
    ------
    HUCError
        As :func:`load_vectors` and :func:`vector_case`, or where ``out`` is not a usable path.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     count = answer_cases(Path(out))
    ...     from huc_ref.conformance import check_answers
    ...     report, failures = check_answers(Path(out))
    >>> count == len(report), failures
    (True, 0)
    """
    out = as_path(out, "out")
    out.mkdir(parents=True, exist_ok=True)
    vectors = load_vectors(directory)
    for v in vectors:
        if "error" in v:  # the reader's own verdict: its error's kind and path, or acceptance
            try:
                read_case(v["input_text"] if "input_text" in v else v["input"])
            except HUCError as err:
                answer = err.to_json()
            else:
                answer = {"format": "huc-result/1", "case": v["id"], "accepted": True}
        else:
            answer = vector_case(v).result_json()
        (out / f"{v['id']}.json").write_text(dumps(answer))
    return len(vectors)
