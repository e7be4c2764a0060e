"""The tree decomposition (Sec. 3.1, Thm 3.1, App. C.1-C.3) on random trees, exactly."""

from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from huc_ref.decomposition import Prediction, TreeDecomposition, subtree_sums
from huc_ref.tree import LabelTree
from tests.strategies import PINNED, SMALL, label_laws, pinned_case, predictions, shaped_trees, tiny_predictions

ZERO = Fraction(0)


def _decomposition(t, p, u):
    return t, p, u, TreeDecomposition(t, p, u)


@st.composite
def decompositions(draw):
    """Small random trees and the shapes users have (tests/strategies.py), predictions with small
    denominators or entries near 1e-300, utility values in [-1, 1]."""
    t = draw(shaped_trees())
    p = draw(st.one_of(predictions(t.K), tiny_predictions(t.K)))
    u = draw(st.lists(st.sampled_from(SMALL), min_size=t.K, max_size=t.K))
    return _decomposition(t, p, u)


def _pinned(name):
    """A pinned shape's first atom's prediction and a utility of values in {-1, -1/2, 0, 1/2, 1}."""
    d, _ = pinned_case(name)
    return _decomposition(d.tree, d.atoms[0].p, [Fraction(k % 5 - 2, 2) for k in range(d.tree.K)])


#: The pinned shapes (tests/strategies.py) but the million-digit one, which hypothesis cannot
#: print (its own test is below).
SHAPES = [name for name in PINNED if name != "a million digits"]


def _pins(test):
    """``@example`` of each pinned shape: a flat ten-class tree, a node of 30 children last at its
    depth, 100 classes near 1e-300."""
    for name in SHAPES:
        test = example(_pinned(name))(test)
    return test



@given(decompositions())
@_pins
def test_theorem_3_1_telescoping(case):
    """u(p,y) - mu_u(p) = sum_v g_{u,v}(p,y) for every label (Thm 3.1)."""
    t, p, u, dec = case
    for y in t.labels:
        total = sum((dec.g(v, y) for v in t.internal_nodes), ZERO)
        assert total == dec.residual(y) == u[t.label_index(y)] - dec.mu()
        assert sum(dec.contributions(y).values(), ZERO) == dec.residual(y)



@given(decompositions())
@_pins
def test_c1_local_algebra_and_piecewise_form(case):
    """sum_j R_{v,j} = 0, sum_j q_{v,j} = 1, mu_v = sum_j q_{v,j} mu_{v_j}; g = <Delta, R> (C.1)."""
    t, p, u, dec = case
    for v in t.internal_nodes:
        q = dec.q(v)
        assert sum(q) == 1
        assert dec.mu(v) == sum(qj * dec.mu(c) for qj, c in zip(q, t.children(v)))
        assert dec.pi(v) == sum(dec.pi(c) for c in t.children(v))
        assert dec.N(v) == sum(dec.N(c) for c in t.children(v))
        for y in t.labels:
            r = dec.R(v, y)
            assert sum(r) == 0
            assert dec.g(v, y) == sum(d * rj for d, rj in zip(dec.Delta(v), r))



@given(decompositions(), st.data())
def test_c2_conditional_means_and_c3_orthogonality(case, data):
    t, p, u, dec = case
    _check_c2_c3(t, p, dec, data.draw(label_laws(t.K)),
                 TreeDecomposition(t, p, data.draw(st.lists(st.sampled_from(SMALL), min_size=t.K, max_size=t.K))))


def test_theorem_3_1_and_c1_with_a_million_digits():
    """Four leaves moved by ``3^-2100000`` (a million digits): Theorem 3.1 exactly; C.1's algebra in
    GMP's rationals where gmpy2 is installed (the decomposition is written once for any exact
    number type; its products of million-digit Fractions would take CPython minutes)."""
    t, p, u, dec = case = _pinned("a million digits")
    assert max(x.denominator.bit_length() for x in p) > 3.3 * 10**6
    test_theorem_3_1_telescoping.hypothesis.inner_test(case)
    mpq = pytest.importorskip("gmpy2").mpq
    test_c1_local_algebra_and_piecewise_form.hypothesis.inner_test(
        _decomposition(t, [mpq(x) for x in p], [mpq(x) for x in u]))


@pytest.mark.parametrize("name", SHAPES)
def test_c2_and_c3_on_the_pinned_shapes(name):
    """C.2 and C.3 on each pinned shape: its first atom's prediction, its second atom's label law
    (or label), two utilities."""
    d, _ = pinned_case(name)
    t, p = d.tree, d.atoms[0].p
    first, second = ([Fraction((k * s) % 5 - 2, 2) for k in range(t.K)] for s in (1, 3))
    _check_c2_c3(t, p, TreeDecomposition(t, p, first), d.atoms[1].label_law(t.K), TreeDecomposition(t, p, second))


def _check_c2_c3(t, p, dec, eta, other):
    masses = subtree_sums(t, eta)
    for v in t.internal_nodes:
        direct = sum((eta[t.label_index(y)] * dec.g(v, y) for y in t.labels), ZERO)
        assert dec.expected_contribution(v, masses) == direct
        # under Y ~ p each contribution has zero mean (C.3)
        assert sum(p[t.label_index(y)] * dec.g(v, y) for y in t.labels) == 0
    # distinct nodes are orthogonal under p, for this and a second utility (C.3)
    nodes = t.internal_nodes
    for i, v in enumerate(nodes):
        for w in nodes[i + 1:]:
            assert sum(p[t.label_index(y)] * dec.g(v, y) * other.g(w, y) for y in t.labels) == 0


def test_prediction_masses_are_shared():
    t = LabelTree.from_children("r", {"r": ["a", "b"], "a": ["y1", "y2"]})
    pred = Prediction(t, [Fraction(1, 6), Fraction(1, 3), Fraction(1, 2)])
    d1 = TreeDecomposition(t, pred, [1, 0, 0])
    d2 = TreeDecomposition(t, pred, [Fraction(1, 2), 0, 1])
    assert d1.pi("a") == d2.pi("a") == Fraction(1, 2)
    assert (d1.mu("a"), d2.mu("r")) == (Fraction(1, 3), Fraction(7, 12))


def test_generic_over_sympy_symbols():
    import sympy
    t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
    p = sympy.symbols("p1:4", positive=True)
    u = sympy.symbols("u1:4", real=True)
    dec = TreeDecomposition(t, p, u)
    total = sum(dec.g(v, "y1") for v in t.internal_nodes)
    assert sympy.simplify(total - dec.residual("y1")) == 0
    assert sympy.simplify(dec.mu("a") - (p[0] * u[0] + p[1] * u[1]) / (p[0] + p[1])) == 0


@pytest.mark.parametrize("call, message", [
    (lambda d: d.mu("vR"), "mu('vR'): the subtree of 'vR' has mass 0 here: its mean is 0/0 (A.3)"),
    (lambda d: d.Delta("vR"), "mu('vR'): the subtree of 'vR' has mass 0 here: its mean is 0/0 (A.3)"),
    (lambda d: d.g("v0", "y3"), "mu('vR'): the subtree of 'vR' has mass 0 here: its mean is 0/0 (A.3)"),
    (lambda d: d.q("vR"), "q('vR'): the subtree of 'vR' has mass 0 here: its branch probabilities are 0/0 (A.3)"),
])
def test_a_subtree_of_mass_0_is_one_error_naming_the_node(call, message):
    """A true law may vanish on a subtree (App. D.1's vanishes on a leaf); its means and branch
    probabilities are 0/0 there (A.3): one HUCError naming the node, not a ZeroDivisionError
    from Fraction; the rest of the decomposition still answers (the root's mean, the leaf y1's residual)."""
    from huc_ref.errors import HUCError
    t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    d = TreeDecomposition(t, [1, 0, 0, 0], [-1, 1, 1, 1])
    with pytest.raises(HUCError) as err:
        call(d)
    assert str(err.value) == message and err.value.kind == "nonpositive"
    assert d.mu() == -1 and d.residual("y1") == 0 and d.q("vL") == (1, 0)
