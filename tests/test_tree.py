"""Label trees: constructors, queries, malformed trees and deep trees (tree.py)."""

import numpy as np
import pytest
from hypothesis import example, given

from huc_ref.errors import HUCError
from huc_ref.tree import LabelTree
from tests.strategies import shape_tree, shaped_trees

FOUR = {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]}


def test_queries_on_the_four_leaf_tree():
    t = LabelTree.from_children("v0", FOUR, ["y4", "y3", "y2", "y1"])
    assert t.labels == ("y4", "y3", "y2", "y1")
    assert t.nodes == ("v0", "vL", "y1", "y2", "vR", "y3", "y4")
    assert t.leaves_below("vL") == ("y2", "y1")  # label order
    assert t.children("v0") == ("vL", "vR") and t.parent("y3") == "vR" and t.parent("v0") is None
    assert [t.depth(v) for v in t.nodes] == [0, 1, 2, 2, 1, 2, 2]
    assert t.path("y3") == ("v0", "vR", "y3")
    assert t.branching_nodes == t.internal_nodes == ("v0", "vL", "vR")


def test_three_constructors_agree():
    a = LabelTree.from_children("root", {"root": ["inf", "noninf"], "inf": ["inf/v", "inf/b"]},
                                ["inf/v", "inf/b", "noninf"])
    b = LabelTree.from_nested({"root": {"inf": {"inf/v": None, "inf/b": {}}, "noninf": None}})
    c = LabelTree.from_paths(["inf/v", "inf/b", "noninf"])
    assert a == b == c


def test_unary_nodes_are_legal():
    t = LabelTree.from_children("r", {"r": ["u", "y2"], "u": ["y1"]})
    assert t.d("u") == 1 and t.internal_nodes == ("r", "u") and t.branching_nodes == ("r",)


@pytest.mark.parametrize("root, children, labels, message", [
    ("v0", {"v0": ["a", "b"], "a": ["b"]}, None, "tree.children['a']: node 'b' has two parents ('v0' and 'a')"),
    ("v0", {"v0": ["a", "a"]}, None, "tree.children['v0']: lists node 'a' twice"),
    ("v0", {"v0": ["a"], "a": ["v0"]}, None, "tree.children['a']: lists the root 'v0' as a child (a cycle)"),
    ("v0", {"v0": ["a"], "x": ["y"], "y": ["x"]}, None, "is not below the root 'v0'"),
    ("", {}, None, "tree.root: must be a non-empty string, got ''"),
    ("v0", {"v0": "ab"}, None, "tree.children['v0']: expected a list of node names"),
    ("v0", {"v0": ["a", 3]}, None, "tree.children['v0']: must be a non-empty string, got 3"),
    ("v0", FOUR, ["y1", "y2", "y3"], "labels: leaf 'y4' of the tree is missing"),
    ("v0", FOUR, ["y1", "y2", "y3", "y4", "z"], "labels[4]: 'z' is not a node of the tree"),
    ("v0", FOUR, ["y1", "y2", "y3", "vL"], "labels[3]: 'vL' is an internal node, not a leaf"),
    ("v0", FOUR, ["y1", "y1", "y3", "y4"], "labels[1]: 'y1' is listed twice"),
])
def test_malformed_trees_are_rejected_by_name(root, children, labels, message):
    with pytest.raises(HUCError) as err:
        LabelTree(root, children, labels)
    assert message in str(err.value)


def test_path_and_nested_errors():
    with pytest.raises(HUCError, match=r"paths\[1\]: 'a' is a label and also the parent"):
        LabelTree.from_paths(["a/b", "a"])
    with pytest.raises(HUCError, match=r"paths\[0\]: 'a//b' is not a path"):
        LabelTree.from_paths(["a//b"])
    with pytest.raises(HUCError, match="exactly one root"):
        LabelTree.from_nested({})
    with pytest.raises(HUCError, match="node 'x' is not in the tree"):
        LabelTree.from_children("r", {"r": ["a", "b"]}).id("x")


@pytest.mark.slow
def test_deep_trees_have_no_recursion_limit():
    depth = 100_000
    path = LabelTree.from_children("n0", {f"n{i}": [f"n{i + 1}"] for i in range(depth)})
    assert path.K == 1 and path.depth(f"n{depth}") == depth and len(path.path(f"n{depth}")) == depth + 1
    caterpillar = LabelTree.from_children("c0", {f"c{i}": [f"c{i + 1}", f"l{i}"] for i in range(depth)})
    assert caterpillar.K == depth + 1 and caterpillar.leaves_below(f"c{depth - 1}") == (f"c{depth}", f"l{depth - 1}")
    long_label = "/".join(f"s{i}" for i in range(20_000))
    assert LabelTree.from_paths([long_label, "other"]).depth(long_label) == 20_000


@given(shaped_trees())
@example(shape_tree("flat", 10, 0, 1))
@example(shape_tree("wide_last", 0, 30, 1))  # a node of 30 children, the last at its depth
@example(shape_tree("two_level", 10, 10, 1))
def test_leaf_sets_partition_and_paths_agree(t):
    for v in t.internal_nodes:
        below = [y for c in t.children(v) for y in t.leaves_below(c)]
        assert sorted(below) == sorted(t.leaves_below(v))
    for y in t.labels:
        path = t.path(y)
        assert path[0] == t.root and path[-1] == y
        assert all(y in t.leaves_below(a) for a in path)
        assert all(t.parent(b) == a for a, b in zip(path, path[1:]))
    assert sum(t.d(v) for v in t.internal_nodes) == len(t.nodes) - 1


def test_frame_columns_refuses_labels_that_contradict_a_dataframes_names():
    """A DataFrame whose column names are labels is read by name, whatever order ``labels=`` gives
    the same classes in (a model fitted with ``labels=classes_`` reads a shuffled DataFrame);
    ``labels=`` naming other classes is an error naming both, never one silently preferred."""
    class Frame:  # what frame_columns reads of a DataFrame
        columns = ["b", "a"]

        def to_numpy(self):
            return np.array([[0.25, 0.75]])
    t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    for stated in (["b", "a"], ["a", "b"]):
        P, names = t.frame_columns(Frame(), stated)
        assert names == ["b", "a"] and P.tolist() == [[0.25, 0.75]]
    with pytest.raises(HUCError, match=r"labels: \['a', 'c'\] name other classes than the columns of y_prob "
                                       r"\['b', 'a'\], which name the labels; give the DataFrame"):
        t.frame_columns(Frame(), ["a", "c"])
