"""Label trees (paper Sec. 3.1, App. A.2): the rooted tree whose leaves are the labels.

A :class:`LabelTree` stores its nodes in pre-order (node id 0 is the root ``rho``), each
internal node's children in their given order, and the labels (leaves) in the order of
the entries of a probability vector.  Leaves are also numbered in depth-first order, so
the leaf set ``Y_a`` of every node is one contiguous range of that order (App. F.4).
Nothing here recurses: a path of depth 100,000 is fine.

Unary nodes (``d_v = 1``) are legal; their node contributions are identically zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .errors import HUCError, check_name, given, is_integer, printable

__all__ = ["LabelTree"]


class LabelTree:
    """A finite rooted label tree ``T`` with ordered children and ordered labels (A.2; docs/specification.md §1).

    Build it with :meth:`from_children` (the ``huc-case/1`` form), :meth:`from_nested`,
    :meth:`from_paths`, :meth:`from_label_paths` or :meth:`from_networkx`.  Nodes are referred
    to by name in the public methods; the index-level properties and methods (``child_ids``,
    ``path_ids``, ...) use integer ids, node ids in pre-order and label ids in label order.

    Parameters
    ----------
    root : str
        The root's name ``rho``.
    children : mapping of str to sequence of str
        Each internal node's children, in order.  Nodes absent from the mapping (or mapped to
        ``[]``) are leaves; every node must be below the root, with one parent, listed once.
    labels : sequence of str, optional
        The labels (all the leaves, each once) in the order of a probability vector's entries:
        the columns of a classifier's ``predict_proba``.  By default the depth-first leaf order;
        given, the order counts as declared (:attr:`order_declared`).
    where : str, default "tree"
        The place the messages name.

    Raises
    ------
    HUCError
        Of kind ``tree`` for a malformed tree (a cycle, a node with two parents, a child listed
        twice, a part not below the root, a name that is not a non-empty printable string), of
        kind ``labels`` for labels that are not exactly the leaves.

    Notes
    -----
    Nodes are stored in pre-order (node id 0 is the root), each internal node's children in
    their given order.  Leaves are also numbered in depth-first order, so the leaf set ``Y_a``
    of every node is one contiguous range of that order (App. F.4).  Unary nodes
    (``d_v = 1``) are legal.  Nothing recurses: a path of depth 100,000 is fine.

    Examples
    --------
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"],
    ...                                    "vR": ["y3", "y4"]})
    >>> t.labels, t.K, t.internal_nodes
    (('y1', 'y2', 'y3', 'y4'), 4, ('v0', 'vL', 'vR'))
    >>> t.leaves_below("vR"), t.path("y2"), t.d("v0"), t.depth("y3")
    (('y3', 'y4'), ('v0', 'vL', 'y2'), 2, 2)
    """

    def __init__(self, root: str, children: Mapping[str, Sequence[str]],
                 labels: Sequence[str] | None = None, *, where: str = "tree"):
        self._build(root, children, where)
        self._set_labels(labels, where)
        self._declared = labels is not None  # (the columns' order was stated: see check_columns)

    # ------------------------------------------------------------------ building
    def _build(self, root, children, where):
        check_name(root, f"{where}.root", kind="tree")
        if not isinstance(children, Mapping):
            raise HUCError(f"{where}.children: expected a mapping from node to its list of children", kind="tree")
        parent_of: dict[str, str] = {}
        for node, kids in children.items():
            check_name(node, f"{where}.children", kind="tree")
            if isinstance(kids, (str, bytes)) or not isinstance(kids, Sequence):
                raise HUCError(f"{where}.children[{node!r}]: expected a list of node names", kind="tree")
            for kid in kids:
                check_name(kid, f"{where}.children[{node!r}]", kind="tree")
                if kid == root:
                    raise HUCError(f"{where}.children[{node!r}]: lists the root {root!r} as a child (a cycle)",
                                   kind="tree")
                if kid in parent_of:
                    other = parent_of[kid]
                    if other == node:
                        raise HUCError(f"{where}.children[{node!r}]: lists node {kid!r} twice", kind="tree")
                    raise HUCError(f"{where}.children[{node!r}]: node {kid!r} has two parents ({other!r} and {node!r})",
                                   kind="tree")
                parent_of[kid] = node
        names: list[str] = []
        parent: list[int] = []
        depth: list[int] = []
        kid_ids: list[list[int]] = []
        stack = [(root, -1)]
        while stack:  # iterative pre-order; children pushed in reverse keep their order
            name, par = stack.pop()
            nid = len(names)
            names.append(name)
            parent.append(par)
            depth.append(0 if par < 0 else depth[par] + 1)
            kid_ids.append([])
            if par >= 0:
                kid_ids[par].append(nid)
            for kid in reversed(children.get(name, ())):
                stack.append((kid, nid))
        index = {name: i for i, name in enumerate(names)}
        for node in list(children) + list(parent_of):
            if node not in index:
                raise HUCError(f"{where}.children[{node!r}]: node {node!r} is not below the root {root!r} "
                               f"(a cycle or a detached part)" if node in children else
                               f"{where}.children: node {node!r} is not below the root {root!r}", kind="tree")
        self._names = tuple(names)
        self._index = index
        self._parent = tuple(parent)
        self._depth = tuple(depth)
        self._children = tuple(tuple(k) for k in kid_ids)
        # Depth-first leaf order: node a covers dfs positions [lo[a], hi[a]).
        n = len(names)
        lo = [0] * n
        hi = [0] * n
        dfs_leaves: list[int] = []
        for nid in range(n):  # pre-order visits leaves in depth-first order
            if not kid_ids[nid]:
                dfs_leaves.append(nid)
        position = {nid: i for i, nid in enumerate(dfs_leaves)}
        for nid in reversed(range(n)):  # post-order: children before parents
            if kid_ids[nid]:
                lo[nid] = lo[kid_ids[nid][0]]
                hi[nid] = hi[kid_ids[nid][-1]]
            else:
                lo[nid] = position[nid]
                hi[nid] = position[nid] + 1
        self._lo, self._hi = tuple(lo), tuple(hi)
        self._dfs_leaf_nodes = tuple(dfs_leaves)

    def _set_labels(self, labels, where):
        leaf_names = [self._names[nid] for nid in self._dfs_leaf_nodes]
        labels = leaf_names if labels is None else label_names(labels)
        lab_where = "labels"
        seen: dict[str, int] = {}
        for i, lab in enumerate(labels):
            if not isinstance(lab, str):
                raise HUCError(f"{lab_where}[{i}]: expected a label name (a string), got {type(lab).__name__}",
                               kind="labels")
            if lab in seen:
                raise HUCError(f"{lab_where}[{i}]: {lab!r} is listed twice", kind="labels")
            if lab not in self._index:
                raise HUCError(f"{lab_where}[{i}]: {lab!r} is not a node of the tree", kind="labels")
            if self._children[self._index[lab]]:
                raise HUCError(f"{lab_where}[{i}]: {lab!r} is an internal node, not a leaf", kind="labels")
            seen[lab] = i
        for name in leaf_names:
            if name not in seen:
                raise HUCError(f"{lab_where}: leaf {name!r} of the tree is missing", kind="labels")
        self._labels = tuple(labels)
        self._label_index = seen
        self._node_of_label = tuple(self._index[lab] for lab in labels)
        label_of = [-1] * len(self._names)
        for y, nid in enumerate(self._node_of_label):
            label_of[nid] = y
        self._label_of = tuple(label_of)
        # dfs position -> label index
        self._dfs_labels = tuple(label_of[nid] for nid in self._dfs_leaf_nodes)

    @classmethod
    def from_children(cls, root: str, children: Mapping[str, Sequence[str]],
                      labels: Sequence[str] | None = None) -> LabelTree:
        """Build ``T`` from a root name and each node's ordered children (A.2; docs/specification.md §6).

        This is the ``huc-case/1`` form of a tree.

        Parameters
        ----------
        root : str
            The root's name.
        children : mapping of str to sequence of str
            Each internal node's children, in order; nodes absent from the mapping (or mapped to
            ``[]``) are leaves.
        labels : sequence of str, optional
            The order of probability vectors' entries (each leaf once); by default the depth-first
            leaf order.

        Returns
        -------
        LabelTree
            The tree.

        Raises
        ------
        HUCError
            For a malformed tree or labels that are not exactly the leaves (as :class:`LabelTree`).

        Examples
        --------
        >>> LabelTree.from_children("r", {"r": ["a", "b", "c"]}, ["c", "a", "b"]).labels
        ('c', 'a', 'b')
        >>> LabelTree.from_children("r", {"r": ["a", "b"], "b": ["a"]})
        Traceback (most recent call last):
        ...
        huc_ref.errors.HUCError: tree.children['b']: node 'a' has two parents ('r' and 'b')
        """
        return cls(root, children, labels)

    @classmethod
    def from_nested(cls, nested: Mapping, labels: Sequence[str] | None = None) -> LabelTree:
        """Build the label tree ``T`` (A.2) from a nested mapping ``{root: {child: {...}, leaf: None}}``.

        Parameters
        ----------
        nested : mapping
            One entry, the root, whose value is its subtree: a mapping from each child to its own
            subtree, with a leaf written as ``None``, ``{}`` or a name inside a list of leaves.
        labels : sequence of str, optional
            The order of probability vectors' entries; by default the depth-first leaf order.

        Returns
        -------
        LabelTree
            The tree, children in the mapping's order.

        Raises
        ------
        HUCError
            Of kind ``tree`` where ``nested`` does not have exactly one root entry, a subtree is not a
            mapping, a list or None, or a node appears twice; as :class:`LabelTree` for the rest.

        Examples
        --------
        >>> LabelTree.from_nested({"root": {"L": ["y1", "y2"], "y3": None}}).labels
        ('y1', 'y2', 'y3')
        """
        if not isinstance(nested, Mapping) or len(nested) != 1:
            raise HUCError("tree: a nested tree is a mapping with exactly one root entry", kind="tree")
        (root, body), = nested.items()
        children: dict[str, list[str]] = {}
        stack = [(root, body)]
        while stack:
            name, sub = stack.pop()
            if sub is None:
                continue
            if isinstance(sub, Mapping):
                items = list(sub.items())
            elif isinstance(sub, Sequence) and not isinstance(sub, (str, bytes)):
                items = [(leaf, None) for leaf in sub]
            else:
                raise HUCError(f"tree[{name!r}]: expected a mapping, a list of leaves or null", kind="tree")
            if not items:
                continue
            if name in children:
                raise HUCError(f"tree[{name!r}]: node {name!r} appears twice", kind="tree")
            children[name] = [k for k, _ in items]
            stack.extend(items)
        return cls(root, children, labels)

    @classmethod
    def from_paths(cls, paths: Sequence[str], *, sep: str = "/", root: str = "root",
                   labels: Sequence[str] | None = None) -> LabelTree:
        """Build ``T`` (A.2) from label paths such as ``"infectious/localized/upper/viral"``.

        Parameters
        ----------
        paths : sequence of str
            One path per label, non-empty names separated by ``sep``.  A node is named by its path
            prefix (so ``viral`` under two parents stays two nodes); children are ordered by first
            appearance.  A label may not also be the parent of other labels.
        sep : str, default "/"
            The separator of the names in a path (non-empty).
        root : str, default "root"
            The root's name, reserved: no path prefix may equal it.
        labels : sequence of str, optional
            The labels' order (the columns of a classifier's ``predict_proba``): each of ``paths``
            once.  By default the order of ``paths``, which does not count as declared
            (:attr:`order_declared`): paths in hierarchy order are rarely a classifier's column order.

        Returns
        -------
        LabelTree
            The tree.

        Raises
        ------
        HUCError
            Where ``paths`` is not a non-empty list of paths, a path has an empty name, a prefix is
            the root's name, a label is also a parent, ``sep`` is not a non-empty string, or ``labels``
            does not list each path once.

        Examples
        --------
        >>> t = LabelTree.from_paths(["inf/upper/viral", "inf/upper/bact", "noninf"])
        >>> t.labels, t.internal_nodes
        (('inf/upper/viral', 'inf/upper/bact', 'noninf'), ('root', 'inf', 'inf/upper'))
        >>> LabelTree.from_paths(["a/x", "b"], labels=["b", "a/x"]).labels
        ('b', 'a/x')
        """
        if isinstance(paths, (str, bytes)) or not isinstance(paths, Sequence) or not paths:
            raise HUCError("paths: expected a non-empty list of label paths", kind="tree")
        if not isinstance(sep, str) or not sep:
            raise HUCError(f"sep: expected a non-empty string, got {given(sep)}", kind="type")
        children: dict[str, list[str]] = {}
        seen_kids: dict[str, set[str]] = {}
        for i, row in enumerate(paths):
            if not isinstance(row, str) or not row or any(not part for part in row.split(sep)):
                raise HUCError(f"paths[{i}]: {row!r} is not a path of non-empty names separated by {sep!r}",
                               kind="tree")
            parts = row.split(sep)
            parent = root
            for k in range(len(parts)):
                node = sep.join(parts[: k + 1])
                if node == root:
                    raise HUCError(f"paths[{i}]: the name {root!r} is reserved for the root", kind="tree")
                if node not in seen_kids.setdefault(parent, set()):
                    seen_kids[parent].add(node)
                    children.setdefault(parent, []).append(node)
                parent = node
        for i, lab in enumerate(paths):
            if lab in children:
                raise HUCError(f"paths[{i}]: {lab!r} is a label and also the parent of other labels", kind="tree")
        if labels is not None and sorted(label_names(labels)) != sorted(paths):
            raise HUCError(f"labels: must list each of the {len(paths)} paths once (the columns' order), "
                           f"got {printable(repr(label_names(labels)), 100)}", kind="labels")
        tree = cls(root, children, list(paths) if labels is None else label_names(labels))
        tree._declared = labels is not None  # (paths in hierarchy order are not a classifier's column order)
        return tree

    @classmethod
    def from_label_paths(cls, rows, *, sep: str = "/", root: str = "root",
                         labels: Sequence[str] | None = None) -> LabelTree:
        """Build ``T`` (A.2) from per-sample label paths, one row per sample from the top level down.

        These are the ``n x depth`` arrays of hierarchical classifiers such as hiclass.

        Parameters
        ----------
        rows : iterable of sequence of str
            One path per sample, from the top level down; a shorter path is padded with ``""`` or
            None.  A row's label is its non-empty names joined by ``sep`` (:meth:`path_label`).
        sep : str, default "/"
            The separator joining a row's names into its label.
        root : str, default "root"
            The root's name (as :meth:`from_paths`).
        labels : sequence of str, optional
            The labels' order; by default the order in which the labels first appear.

        Returns
        -------
        LabelTree
            The tree of the distinct labels (:meth:`from_paths`).

        Raises
        ------
        HUCError
            Where ``rows`` or a row is not a list of names, and as :meth:`from_paths`.

        Examples
        --------
        >>> rows = [["animal", "dog"], ["plant", ""], ["animal", "cat"], ["animal", "dog"]]
        >>> t = LabelTree.from_label_paths(rows)
        >>> t.labels, [LabelTree.path_label(r) for r in rows][:2]
        (('animal/dog', 'plant', 'animal/cat'), ['animal/dog', 'plant'])
        """
        if isinstance(rows, (str, bytes)) or not hasattr(rows, "__iter__"):
            raise HUCError("rows: expected one label path (a list of names) per sample", kind="tree")
        seen: dict[str, None] = {}
        for i, row in enumerate(rows):
            if isinstance(row, (str, bytes)) or not hasattr(row, "__iter__"):
                raise HUCError(f"rows[{i}]: expected a list of names from the top level down, got {row!r}", kind="type")
            seen.setdefault(cls.path_label(row, sep), None)
        return cls.from_paths(list(seen), sep=sep, root=root, labels=labels)

    @staticmethod
    def path_label(row, sep: str = "/") -> str:
        """The label (a leaf of ``T``, A.2) of one per-sample path.

        Parameters
        ----------
        row : sequence
            A path from the top level down; empty names and None are padding.
        sep : str, default "/"
            The separator.

        Returns
        -------
        str
            The path's non-empty names (as ``str``) joined by ``sep``.

        Examples
        --------
        >>> LabelTree.path_label(["animal", "dog", None])
        'animal/dog'
        """
        return sep.join(str(x) for x in row if x is not None and str(x) != "")

    @classmethod
    def from_networkx(cls, graph, *, labels: Sequence[str] | None = None) -> LabelTree:
        """Build ``T`` (A.2) from a directed ``networkx`` tree with edges parent -> child.

        networkx is not a dependency: only its graph's interface is used (``in_degree`` and
        ``successors``).

        Parameters
        ----------
        graph : networkx.DiGraph
            A directed tree.  Node names are ``str(node)``; children follow the graph's successor
            order.
        labels : sequence, optional
            The labels' order (each read as ``str``); by default the depth-first leaf order.

        Returns
        -------
        LabelTree
            The tree.

        Raises
        ------
        HUCError
            Where ``graph`` is not a directed graph or does not have exactly one node without a
            parent, and as :class:`LabelTree`.

        Examples
        --------
        >>> class G:  # the two methods used, as networkx.DiGraph provides them
        ...     edges = {"r": ["a", "b"], "a": ["y1", "y2"], "b": [], "y1": [], "y2": []}
        ...     def successors(self, n): return iter(self.edges[n])
        ...     def in_degree(self): return [(n, sum(n in k for k in self.edges.values())) for n in self.edges]
        >>> LabelTree.from_networkx(G()).labels
        ('y1', 'y2', 'b')
        """
        try:
            roots = [n for n, d in graph.in_degree() if d == 0]
        except (AttributeError, TypeError):
            raise HUCError(f"graph: expected a directed networkx graph, got {type(graph).__name__}",
                           kind="type") from None
        if len(roots) != 1:
            raise HUCError(f"graph: a tree has exactly one node without a parent, this graph has {len(roots)}",
                           kind="tree")
        children, leaves, stack = {}, [], [roots[0]]
        while stack:
            node = stack.pop()
            kids = list(graph.successors(node))
            if kids:
                children[str(node)] = [str(k) for k in kids]
                stack.extend(reversed(kids))
            else:
                leaves.append(str(node))
        return cls(str(roots[0]), children, leaves if labels is None else [str(x) for x in labels])

    # ------------------------------------------------------------------ queries
    @property
    def root(self) -> str:
        """The root ``rho`` (Sec. 3.1).

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.root
        'r'
        """
        return self._names[0]

    @property
    def labels(self) -> tuple[str, ...]:
        """The leaves ``Y``, in the order of probability-vector entries (Sec. 2.1).

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.labels
        ('y1', 'y2', 'y3')
        """
        return self._labels

    @property
    def K(self) -> int:
        """The number of labels ``K = |Y|`` (Sec. 2.1).

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.K
        3
        """
        return len(self._labels)

    @property
    def nodes(self) -> tuple[str, ...]:
        """All nodes ``V`` of ``T`` (A.2), in pre-order.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.nodes
        ('r', 'a', 'y1', 'y2', 'y3')
        """
        return self._names

    @property
    def internal_nodes(self) -> tuple[str, ...]:
        """``V°``: the internal nodes (``d_v >= 1``), in pre-order (Sec. 3.1).

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.internal_nodes
        ('r', 'a')
        """
        return tuple(n for i, n in enumerate(self._names) if self._children[i])

    @property
    def branching_nodes(self) -> tuple[str, ...]:
        """The internal nodes with ``d_v >= 2``, in pre-order: the only ones that can be relevant (F.4).

        Examples
        --------
        >>> LabelTree.from_children("r", {"r": ["u", "y2"], "u": ["y1"]}).branching_nodes
        ('r',)
        """
        return tuple(n for i, n in enumerate(self._names) if len(self._children[i]) >= 2)

    def __contains__(self, node) -> bool:
        """Whether a name is a node of the tree (A.2), by a dictionary look-up: validating many names stays linear.

        Parameters
        ----------
        node : object
            The name (anything but a string is not a node).

        Returns
        -------
        bool
            Whether ``node`` names a node.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> "y2" in t, "zz" in t, 3 in t
        (True, False, False)
        """
        return isinstance(node, str) and node in self._index

    def has_label(self, label) -> bool:
        """Whether a name is one of the labels ``Y`` (the leaves of ``T``, A.2), by a dictionary look-up.

        Parameters
        ----------
        label : object
            The name (anything but a string is not a label).

        Returns
        -------
        bool
            Whether ``label`` is a label.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.has_label("y1"), t.has_label("a")
        (True, False)
        """
        return isinstance(label, str) and label in self._label_index

    def id(self, node) -> int:
        """The pre-order id of a node of ``T`` (A.2) given by name, or already by id.

        Parameters
        ----------
        node : str or int
            A node's name, or its id (Python's or numpy's integer).

        Returns
        -------
        int
            Its pre-order id (the root is 0).

        Raises
        ------
        HUCError
            Of kind ``reference`` for a name that is not a node or an id out of range.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.id("y2"), t.id(4)
        (3, 4)
        """
        if is_integer(node):
            if 0 <= node < len(self._names):
                return int(node)
            raise HUCError(f"node index {given(node)} is out of range", kind="reference")
        try:
            return self._index[node]
        except (KeyError, TypeError):
            raise HUCError(f"node {given(node)} is not in the tree", kind="reference") from None

    def frame_columns(self, y_prob, labels=None) -> tuple:
        """A sample's predictions ``p(x_i)`` (Sec. 2.1) as an array, with the names a table gives its columns.

        Parameters
        ----------
        y_prob : array-like of shape (n, K) or DataFrame
            The predictions.  A table that names its columns (a pandas DataFrame: ``columns`` and
            ``to_numpy``) is taken as its array: iterating over a DataFrame gives its column names,
            not its rows.
        labels : array-like of str, optional
            The columns' names, as given by the caller.

        Returns
        -------
        y_prob : array-like of shape (n, K)
            ``y_prob``, or a table's array.
        labels : list of str or None
            ``labels``; for a table where any column name is one of this tree's labels, its column
            names, by which :meth:`label_columns` reads the columns in the tree's label order
            (A.2).  Anything but a table is returned unchanged.

        Raises
        ------
        HUCError
            Of kind ``labels``, where a table's column names name the labels and ``labels`` names
            other classes (the same classes in another order are the table's, read by name: a
            model fitted with ``labels=classes_`` reads a DataFrame in any column order).

        Examples
        --------
        >>> class Frame:  # what the check reads of a DataFrame
        ...     columns = ["b", "a"]
        ...     def to_numpy(self): return [[0.25, 0.75]]
        >>> LabelTree.from_children("r", {"r": ["a", "b"]}).frame_columns(Frame())
        ([[0.25, 0.75]], ['b', 'a'])
        """
        if not (hasattr(y_prob, "columns") and hasattr(y_prob, "to_numpy")):
            return y_prob, labels
        names = [str(c) for c in y_prob.columns]
        if set(names) & set(self.labels):
            if labels is not None and sorted(label_names(labels)) != sorted(names):
                raise HUCError(f"labels: {printable(repr(label_names(labels)), 100)} name other classes than the "
                               f"columns of y_prob {printable(repr(names), 100)}, which name the labels; give the "
                               "DataFrame with its columns named by the classes (they are read by name, in any "
                               "order) or leave out labels", kind="labels")
            labels = names
        return y_prob.to_numpy(), labels

    def with_labels(self, labels) -> LabelTree:
        """The same tree with its label order (Sec. 2.1's coordinates of ``p``) declared.

        Parameters
        ----------
        labels : array-like
            The leaf names, each once, in the order of a prediction's columns: e.g. a classifier's
            ``classes_``, the order of its ``predict_proba`` columns (integers are read as their
            decimal text).

        Returns
        -------
        LabelTree
            A new tree with the same nodes and children, ``labels`` as its label order, and
            :attr:`order_declared` True.

        Raises
        ------
        HUCError
            Of kind ``labels`` where ``labels`` are not exactly the leaves.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["b", "a"]})
        >>> t.labels, t.with_labels(["a", "b"]).labels, t.with_labels(t.labels).order_declared
        (('b', 'a'), ('a', 'b'), True)
        """
        return LabelTree(self.root, self.to_json()["children"], label_names(labels))

    @property
    def order_declared(self) -> bool:
        """Whether the label order (Sec. 2.1's coordinates of ``p``) was stated with ``labels=`` at build.

        It is False where the order was taken from the leaves' depth-first order or, for
        :meth:`from_paths`, from the order the paths were listed in (a hierarchy's order).

        Examples
        --------
        >>> LabelTree.from_children("r", {"r": ["b", "a"]}).order_declared
        False
        >>> LabelTree.from_children("r", {"r": ["b", "a"]}, labels=["a", "b"]).order_declared
        True
        """
        return self._declared

    @property
    def in_classes_order(self) -> bool:
        """Whether the label order (Sec. 2.1's coordinates of ``p``) is the sorted order of a scikit-learn ``classes_``.

        A classifier's ``classes_`` always has ``np.unique``'s order: sorted, numerically where
        every label is an integer's decimal text.  Where the tree's order is that one, a bare
        ``predict_proba`` array's columns are the labels in this order (:meth:`column_order`).

        Examples
        --------
        >>> LabelTree.from_children("r", {"r": ["2", "10"]}).in_classes_order
        True
        >>> LabelTree.from_children("r", {"r": ["b", "a"]}).in_classes_order
        False
        """
        return _in_classes_order(self.labels)

    def label_columns(self, y_prob, labels=None, where: str = "labels", what: str = "y_prob"):
        """A sample's predictions ``p(x_i)`` (Sec. 2.1) with their columns in this tree's label order.

        Parameters
        ----------
        y_prob : array-like of shape (n, K) or DataFrame
            The predictions, one column per label.  A DataFrame's column names name its columns
            (:meth:`frame_columns`).
        labels : array-like, optional
            The columns' names (e.g. a classifier's ``classes_``).  Named columns are put in the
            tree's order (:meth:`column_order`); unnamed columns are taken as they are where the
            tree's order was declared or is ``classes_``' sorted order, and are otherwise an error.
        where : str, default "labels"
            How the messages name ``labels``.
        what : str, default "y_prob"
            How the messages name ``y_prob``.

        Returns
        -------
        array-like of shape (n, K)
            ``y_prob`` itself where its columns are in the tree's order, else a reordered copy (a
            numpy array's rows stay contiguous; a list of rows stays a list).

        Raises
        ------
        HUCError
            Of kind ``labels`` as :meth:`column_order`: names that are not exactly the tree's labels,
            or unnamed columns in an order that was never declared.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> t.label_columns([[0.25, 0.75]], labels=["b", "a"]), t.label_columns([[0.25, 0.75]])
        ([[0.75, 0.25]], [[0.25, 0.75]])
        """
        y_prob, labels = self.frame_columns(y_prob, labels)
        order = self.column_order(labels, where, what)
        if order is None:
            return y_prob
        if hasattr(y_prob, "flags"):  # numpy: take keeps the rows contiguous (y_prob[:, order] need not), so
            return y_prob.take(order, axis=1)  # each row is summed in the same order as the array given in order
        if getattr(y_prob, "ndim", None) == 2:  # (other arrays that index as numpy's do)
            return y_prob[:, order]
        return [[row[j] for j in order] if hasattr(row, "__len__") and len(row) == len(order) else row
                for row in y_prob]  # (a row of another length is left for the caller's message)

    def column_order(self, labels, where: str = "labels", what: str = "y_prob") -> list[int] | None:
        """Where each of this tree's labels (Sec. 2.1's coordinates of ``p``) is among named columns.

        Parameters
        ----------
        labels : array-like or None
            The columns' names: names, or a classifier's integer ``classes_`` read as text.  None
            means the columns carry no names (a bare ``predict_proba`` array): they are taken in the
            tree's label order only where that order was declared (:attr:`order_declared`) or is the
            sorted order a scikit-learn classifier's ``classes_`` always has (numeric where every
            label is an integer's text), since a hierarchy's leaf order is rarely the classifier's.
        where : str, default "labels"
            How the messages name ``labels``.
        what : str, default "y_prob"
            How the messages name the prediction array.

        Returns
        -------
        list of int or None
            The column indices that put the columns in the tree's label order, or None when they
            already are in it.

        Raises
        ------
        HUCError
            Of kind ``labels``: names that are not exactly the tree's labels (naming the first
            missing or extra one), or unnamed columns where the order was never declared (saying how
            to declare it).

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
        >>> t.column_order(["c", "a", "b"]), t.column_order(["a", "b", "c"]), t.column_order(None)
        ([1, 2, 0], None, None)
        >>> t.column_order(["a", "b", "x"])
        Traceback (most recent call last):
        ...
        huc_ref.errors.HUCError: labels: names the columns of y_prob ['a', 'b', 'x'], but the tree's labels ...
        >>> LabelTree.from_children("r", {"r": ["b", "a"]}).column_order(None)
        Traceback (most recent call last):
        ...
        huc_ref.errors.HUCError: y_prob: its columns carry no names, and the tree's label order ['b', 'a'] ...
        """
        if labels is None:
            if not (self._declared or self.in_classes_order):
                raise HUCError(f"{what}: its columns carry no names, and the tree's label order "
                               f"{printable(repr(list(self.labels)), 100)} was never declared and is not the "
                               "sorted order a classifier's classes_ has; pass labels=clf.classes_ (the columns' "
                               "order), or build the tree with labels= in the columns' order "
                               "(LabelTree.from_children(..., labels=clf.classes_))", kind="labels")
            return None
        names = label_names(labels, where)
        if names == list(self.labels):
            return None
        index = {name: k for k, name in enumerate(names)}
        if len(index) != len(names) or set(index) != set(self.labels):
            extra = next((n for k, n in enumerate(names) if n not in self._label_index or index[n] != k), None)
            missing = next((lab for lab in self.labels if lab not in index), None)
            differ = (f"{printable(extra, 40)!r} is {'listed twice' if extra in self._label_index else 'not a label'}"
                      if extra is not None else f"label {printable(missing, 40)!r} has no column"
                      if missing is not None else f"{len(names)} names for {self.K} labels")
            raise HUCError(f"{where}: names the columns of {what} {printable(repr(names), 100)}, but the tree's "
                           f"labels are {printable(repr(list(self.labels)), 100)} ({differ}); name each column by "
                           "its label, once", kind="labels")
        return [index[lab] for lab in self.labels]

    def check_columns(self, labels, where: str = "labels", what: str = "y_prob",
                      fix: str = "build the tree with labels= in the columns' order "
                                 "(LabelTree.from_paths(..., labels=...)) or reorder the columns") -> None:
        """Check that a prediction array's columns are this tree's labels in its label order (Sec. 2.1).

        This is for a reader that cannot reorder columns; a different order is an error naming
        both orders, never a silent permutation.

        Parameters
        ----------
        labels : array-like or None
            The columns' names; None (unnamed columns) is checked as :meth:`column_order` checks it.
        where : str, default "labels"
            How the message names ``labels``.
        what : str, default "y_prob"
            How the message names the prediction array.
        fix : str, optional
            The remedy the message ends with; by default "build the tree with labels= in the
            columns' order (LabelTree.from_paths(..., labels=...)) or reorder the columns".

        Raises
        ------
        HUCError
            Of kind ``labels``, naming both orders (cut to 100 characters each) and the first column
            where they differ; or as :meth:`column_order`.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> t.check_columns(["a", "b"]), t.check_columns(None)  # named in order; unnamed, sorted
        (None, None)
        >>> t.check_columns(["b", "a"])
        Traceback (most recent call last):
        ...
        huc_ref.errors.HUCError: labels: the columns of y_prob are labelled ['b', 'a'], but the tree's label ...
        """
        if self.column_order(labels, where, what) is None:
            return
        names = label_names(labels, where)
        k = next((k for k, (a, b) in enumerate(zip(names, self.labels)) if a != b), min(len(names), self.K))
        raise HUCError(f"{where}: the columns of {what} are labelled {printable(repr(names), 100)}, but the "
                       f"tree's label order is {printable(repr(list(self.labels)), 100)} (column {k} is "
                       f"{printable(names[k], 40)!r}, the tree's label {k} {printable(self.labels[k], 40)!r}); {fix}",
                       kind="labels")

    def check_integer_labels(self, where: str = "y_true", columns=None) -> None:
        """Check that a sample's labels ``y_i`` (Sec. 2.1) given as integers mean one thing on this tree.

        Integer labels are positions: in :attr:`labels`, or among ``columns`` where the prediction
        array's columns were named.  Where a name is the decimal text of another position (labels
        named "0", "1", ... listed in another order, as a hierarchy grouping digits lists them) an
        integer could mean either, so it is an error, never a silent choice.  Names given as
        strings are never ambiguous.

        Parameters
        ----------
        where : str, default "y_true"
            How the message names the labels.
        columns : list of str, optional
            The names of the prediction array's columns, in their order (a classifier's
            ``classes_``); integer labels are then positions among them.  None: positions in
            :attr:`labels`.

        Raises
        ------
        HUCError
            Of kind ``reference``, naming such a label and saying to give the labels as names or to
            list the tree's labels in numeric order.

        Examples
        --------
        >>> LabelTree.from_children("r", {"r": ["0", "1"]}).check_integer_labels()  # "k" at position k
        >>> LabelTree.from_children("r", {"r": ["1", "0"]}).check_integer_labels()
        Traceback (most recent call last):
        ...
        huc_ref.errors.HUCError: y_true: integer labels are ambiguous for this tree: they are read as label ids ...
        """
        order = self.labels if columns is None else columns
        clash = next(((k, name) for k, name in enumerate(order)  # names that are a position's text
                      if len(name) <= 18 and name.isascii() and name.isdigit() and str(int(name)) == name
                      and int(name) < self.K and int(name) != k), None)
        if clash is not None:
            k, name = clash
            among = "the tree's label order" if columns is None else "the columns' order"
            raise HUCError(f"{where}: integer labels are ambiguous for this tree: they are read as label ids "
                           f"(positions in {among}), but the label named {printable(name, 40)!r} "
                           f"is at position {k}; give the labels as their names (strings, e.g. y.astype(str)) "
                           "or list the tree's labels in numeric order", kind="reference")

    def label_index(self, label: str) -> int:
        """The position of a label in :attr:`labels`: its entry of a prediction ``p`` (Sec. 2.1).

        Parameters
        ----------
        label : str
            A label's name.

        Returns
        -------
        int
            Its label id.

        Raises
        ------
        HUCError
            Of kind ``reference`` where ``label`` is not a leaf.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.label_index("y3")
        2
        """
        try:
            return self._label_index[label]
        except (KeyError, TypeError):
            raise HUCError(f"label {given(label)} is not a leaf of the tree", kind="reference") from None

    def children(self, node) -> tuple[str, ...]:
        """``ch(v) = (v_1, ..., v_{d_v})``: a node's children in order (A.2).

        Parameters
        ----------
        node : str or int
            A node's name (or id).

        Returns
        -------
        tuple of str
            Its children's names; empty for a leaf.

        Raises
        ------
        HUCError
            Of kind ``reference`` where ``node`` is not a node of the tree.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.children("r"), t.children("y1")
        (('a', 'y3'), ())
        """
        return tuple(self._names[k] for k in self._children[self.id(node)])

    def parent(self, node) -> str | None:
        """The parent of a node of ``T`` (A.2).

        Parameters
        ----------
        node : str or int
            A node's name (or id).

        Returns
        -------
        str or None
            The parent's name; None for the root.

        Raises
        ------
        HUCError
            Of kind ``reference`` where ``node`` is not a node of the tree.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.parent("y1"), t.parent("r")
        ('a', None)
        """
        p = self._parent[self.id(node)]
        return None if p < 0 else self._names[p]

    def d(self, node) -> int:
        """``d_v``: a node's number of children (A.2).

        Parameters
        ----------
        node : str or int
            A node's name (or id).

        Returns
        -------
        int
            0 for a leaf.

        Raises
        ------
        HUCError
            Of kind ``reference`` where ``node`` is not a node of the tree.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.d("r"), t.d("y1")
        (2, 0)
        """
        return len(self._children[self.id(node)])

    def depth(self, node) -> int:
        """The depth of a node (K.2).

        Parameters
        ----------
        node : str or int
            A node's name (or id).

        Returns
        -------
        int
            The root has depth 0.

        Raises
        ------
        HUCError
            Of kind ``reference`` where ``node`` is not a node of the tree.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.depth("y1"), t.depth("y3")
        (2, 1)
        """
        return self._depth[self.id(node)]

    def is_leaf(self, node) -> bool:
        """Whether a node is a label, a leaf of ``T`` (A.2).

        Parameters
        ----------
        node : str or int
            A node's name (or id).

        Returns
        -------
        bool
            True for a leaf.

        Raises
        ------
        HUCError
            Of kind ``reference`` where ``node`` is not a node of the tree.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.is_leaf("y1"), t.is_leaf("a")
        (True, False)
        """
        return not self._children[self.id(node)]

    def leaves_below(self, node) -> tuple[str, ...]:
        """``Y_a``: the labels below node ``a``, in label order (Sec. 3.1).

        Parameters
        ----------
        node : str or int
            A node's name (or id).

        Returns
        -------
        tuple of str
            The labels below it (a leaf's is itself).

        Raises
        ------
        HUCError
            Of kind ``reference`` where ``node`` is not a node of the tree.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.leaves_below("a"), t.leaves_below("y3")
        (('y1', 'y2'), ('y3',))
        """
        return tuple(self._labels[y] for y in self.label_ids_below(self.id(node)))

    def path(self, label) -> tuple[str, ...]:
        """The root-to-leaf path ``(w_0(y), ..., w_{L_y}(y))`` of a label (A.2).

        Parameters
        ----------
        label : str
            A label's name.

        Returns
        -------
        tuple of str
            The nodes' names from the root down to the label.

        Raises
        ------
        HUCError
            Of kind ``reference`` where ``label`` is not a leaf.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.path("y2")
        ('r', 'a', 'y2')
        """
        return tuple(self._names[k] for k in self.path_ids(self.label_index(label)))

    def to_json(self) -> dict:
        """The ``huc-case/1`` form of the tree (docs/specification.md §6).

        Returns
        -------
        dict
            ``{"root": ..., "children": {...}}``, every internal node with its ordered children
            (:meth:`from_children` reads it back; the label order is the case's ``labels``).

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.to_json()
        {'root': 'r', 'children': {'r': ['a', 'y3'], 'a': ['y1', 'y2']}}
        """
        return {"root": self.root,
                "children": {self._names[i]: [self._names[k] for k in kids]
                             for i, kids in enumerate(self._children) if kids}}

    def __repr__(self) -> str:
        return f"LabelTree(root={self.root!r}, K={self.K}, nodes={len(self._names)})"

    def __eq__(self, other) -> bool:
        if self is other:  # (each utility holds its tree: an audit compares them all)
            return True
        return isinstance(other, LabelTree) and self.to_json() == other.to_json() and self.labels == other.labels

    def __hash__(self) -> int:
        return hash((self._names, self._children, self._labels))

    # ------------------------------------------------------ index-level access
    # The engine works with integer ids: node ids in pre-order, label ids in label order.
    @property
    def child_ids(self) -> tuple[tuple[int, ...], ...]:
        """The children of every node by id (pre-order ids; Sec. 3.1's ``v_1 .. v_{d_v}``).

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})  # ids: r0 a1 y1 y2 y3
        >>> t.child_ids
        ((1, 4), (2, 3), (), (), ())
        """
        return self._children

    @property
    def parent_ids(self) -> tuple[int, ...]:
        """The parent of every node of ``T`` (A.2) by id, -1 for the root.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})  # ids: r0 a1 y1 y2 y3
        >>> t.parent_ids
        (-1, 0, 1, 1, 0)
        """
        return self._parent

    @property
    def leaf_node_ids(self) -> tuple[int, ...]:
        """The node id of every label, in label order (A.2: the leaves are the labels).

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})  # ids: r0 a1 y1 y2 y3
        >>> t.leaf_node_ids
        (2, 3, 4)
        """
        return self._node_of_label

    @property
    def label_ids(self) -> tuple[int, ...]:
        """The label id of every node of ``T`` (A.2) by id, -1 for an internal node.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})  # ids: r0 a1 y1 y2 y3
        >>> t.label_ids
        (-1, -1, 0, 1, 2)
        """
        return self._label_of

    @property
    def depth_ids(self) -> tuple[int, ...]:
        """The depth of every node of ``T`` (A.2) by id; the root has depth 0.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})  # ids: r0 a1 y1 y2 y3
        >>> t.depth_ids
        (0, 1, 2, 2, 1)
        """
        return self._depth

    @property
    def dfs_ranges(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The depth-first leaf positions every node covers, ``(lo, hi)`` (App. F.4).

        Node id ``a`` covers the depth-first leaf positions ``lo[a] .. hi[a] - 1``: the leaves
        below a node are one contiguous run in depth-first order.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})  # ids: r0 a1 y1 y2 y3
        >>> t.dfs_ranges
        ((0, 0, 0, 1, 2), (3, 2, 1, 2, 3))
        """
        return self._lo, self._hi

    @property
    def dfs_label_ids(self) -> tuple[int, ...]:
        """The label id at every depth-first leaf position (App. F.4; the label order need not be depth-first).

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]}, labels=["y3", "y1", "y2"])
        >>> t.dfs_label_ids
        (1, 2, 0)
        """
        return self._dfs_labels

    def find_label(self, label) -> int:
        """The label id of a name (a leaf of ``T``, A.2), or -1 where it is not a label.

        It raises no error: vectorised look-ups report the first bad entry themselves.

        Parameters
        ----------
        label : object
            The name.

        Returns
        -------
        int
            Its label id, or -1 for anything that is not a label's name.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> t.find_label("b"), t.find_label("c"), t.find_label(3)
        (1, -1, -1)
        """
        return self._label_index.get(label, -1) if isinstance(label, str) else -1

    def label_ids_below(self, nid: int) -> tuple[int, ...]:
        """The label ids of ``Y_a`` (A.3) for node id ``a``, in label order.

        Parameters
        ----------
        nid : int
            A node id.

        Returns
        -------
        tuple of int
            The label ids below it, sorted.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.label_ids_below(1)
        (0, 1)
        """
        return tuple(sorted(self._dfs_labels[self._lo[nid]:self._hi[nid]]))

    def path_ids(self, y: int) -> tuple[int, ...]:
        """The node ids on the root-to-leaf path of a label id (the path of Sec. 3.1's decomposition).

        Parameters
        ----------
        y : int
            A label id.

        Returns
        -------
        tuple of int
            The node ids from the root (0) down to the label's node.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.path_ids(1)
        (0, 1, 3)
        """
        out = []
        nid = self._node_of_label[y]
        while nid >= 0:
            out.append(nid)
            nid = self._parent[nid]
        return tuple(reversed(out))

    def contains(self, a: int, y: int) -> bool:
        """``J_a(y) = 1{y in Y_a}`` (A.1): whether a label id is below a node id.

        Parameters
        ----------
        a : int
            A node id.
        y : int
            A label id.

        Returns
        -------
        bool
            Whether label ``y`` is a leaf below node ``a``.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "y3"], "a": ["y1", "y2"]})
        >>> t.contains(1, 0), t.contains(1, 2)
        (True, False)
        """
        nid = self._node_of_label[y]
        return self._lo[a] <= self._lo[nid] < self._hi[a]


def label_names(labels, where: str = "labels") -> list[str]:
    """The label names of ``labels``: any array-like of names or integer classes (a classifier's
    ``classes_``), each integer read as its decimal text (the leaves are named by strings, A.2).

    >>> import numpy as np
    >>> label_names(np.array([0, 1, 10])), label_names(("b", "a"))
    (['0', '1', '10'], ['b', 'a'])
    """
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__iter__"):
        raise HUCError(f"{where}: expected a list of leaf names (e.g. a classifier's classes_), got "
                       f"{type(labels).__name__}", kind="labels")
    names = []
    for i, lab in enumerate(labels.tolist() if hasattr(labels, "tolist") else labels):
        if is_integer(lab):
            lab = str(int(lab))
        if not isinstance(lab, str):
            raise HUCError(f"{where}[{i}]: expected a label name (a string) or an integer class, got "
                           f"{type(lab).__name__}", kind="labels")
        names.append(lab)
    return names


def _in_classes_order(labels) -> bool:
    """Whether ``labels`` are in the order of scikit-learn's ``classes_`` (``np.unique``: sorted,
    numerically where every label is an integer's decimal text).

    >>> _in_classes_order(["a", "b"]), _in_classes_order(["2", "10"]), _in_classes_order(["b", "a"])
    (True, True, False)
    """
    numeric = all(lab.lstrip("-").isdigit() and lab.isascii() and len(lab) <= 18 for lab in labels)
    return list(labels) == sorted(labels, key=int if numeric else None)
