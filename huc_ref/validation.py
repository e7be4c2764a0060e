"""One validation module at the public boundary: the rules every backend shares, with one
message each (the exact audit, the fast path and both boosting backends call these)."""

from __future__ import annotations

from collections.abc import Mapping

from .distribution import FiniteDistribution
from .errors import HUCError, check_name, given, is_integer, one_of, printable
from .rational import exact, fraction_text, shown
from .tree import LabelTree
from .utilities import PerAtom, Utility

__all__ = ["check_distribution", "check_tree", "check_utilities", "boost_options", "MAX_FIXED_STEP", "SELECTIONS",
           "METHODS"]

#: HUC-Boost (Algorithm 1/3) and UC-Boost.
METHODS = ("huc", "uc")


def check_distribution(dist) -> FiniteDistribution:
    """Check that an argument is a finite distribution of atoms (Sec. 2.1).

    Parameters
    ----------
    dist : object
        The argument a caller passed as the population or sample.

    Returns
    -------
    FiniteDistribution
        ``dist`` itself.

    Raises
    ------
    HUCError
        Of kind ``type``, where ``dist`` is not a :class:`FiniteDistribution`.

    Examples
    --------
    >>> check_distribution({"atoms": []})
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: dist: expected a FiniteDistribution (FiniteDistribution(tree, atoms) or ...), got dict
    """
    if not isinstance(dist, FiniteDistribution):
        raise HUCError(f"dist: expected a FiniteDistribution (FiniteDistribution(tree, atoms) or .from_sample), "
                       f"got {type(dist).__name__}", kind="type")
    return dist


def check_tree(tree) -> LabelTree:
    """``tree``, checked to be a :class:`LabelTree` (Sec. 2.1's tree ``T``).

    Parameters
    ----------
    tree : LabelTree
        The tree to check.

    Returns
    -------
    LabelTree
        ``tree``.

    Raises
    ------
    HUCError
        Of kind ``tree`` for anything else, naming the constructors.

    Examples
    --------
    >>> check_tree({"r": ["a", "b"]})
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: tree: expected a LabelTree (LabelTree.from_children, .from_paths or .from_nested), got dict
    """
    if not isinstance(tree, LabelTree):
        raise HUCError(f"tree: expected a LabelTree (LabelTree.from_children, .from_paths or .from_nested), "
                       f"got {type(tree).__name__}", kind="tree")
    return tree


def check_utilities(tree, n_atoms: int, utilities: Mapping[str, Utility]):
    """Check that utilities can be audited on a tree with a number of atoms (A.1's utilities on Sec. 2.1's tree).

    The exact audit, both boosting backends and the fast path share this check.

    Parameters
    ----------
    tree : LabelTree
        The label tree the audit runs on.
    n_atoms : int
        The number of atoms (a :class:`~huc_ref.utilities.PerAtom` utility has one row per atom).
    utilities : dict of str to Utility
        The utilities by name: a non-empty mapping whose names are non-empty printable strings
        (:func:`~huc_ref.errors.check_name`) and whose values are utilities built on ``tree``.

    Raises
    ------
    HUCError
        One error naming the utility: ``tree`` is not a :class:`LabelTree`, ``utilities`` is
        not a non-empty mapping, a name is not one, a value is not a :class:`Utility`, a utility
        is bound to another tree (build it on this one, e.g. after
        :meth:`LabelTree.with_labels`), or per-atom values have another number of rows than
        ``n_atoms``.

    Examples
    --------
    >>> from huc_ref import LabelTree
    >>> check_utilities(LabelTree.from_children("r", {"r": ["a", "b"]}), 1, {"u": 3})
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: utilities['u']: expected a Utility, got int
    """
    check_tree(tree)
    if not isinstance(utilities, Mapping) or not utilities:
        raise HUCError("utilities: expected a non-empty mapping from name to utility", kind="type")
    for name, u in utilities.items():
        if not isinstance(name, str) or not name:
            raise HUCError(f"utilities: names must be non-empty strings, got {name!r}", kind="type")
        check_name(name, "utilities")
        if not isinstance(u, Utility):
            raise HUCError(f"utilities[{name!r}]: expected a Utility, got {type(u).__name__}", kind="type")
        if u.tree != tree:
            raise HUCError(f"utilities[{name!r}]: is bound to a different label tree (its values follow that tree's "
                           "nodes and label order); build it on the tree given here, e.g. after "
                           "LabelTree.with_labels", kind="reference")
        rows = _per_atom_rows(u)
        if rows is not None and rows != n_atoms:
            raise HUCError(f"utilities[{name!r}].values: has {rows} rows, but there are {n_atoms} atoms",
                           kind="structure")


def _per_atom_rows(u: Utility):
    while not isinstance(u, PerAtom):
        u = getattr(u, "base", None)
        if u is None:
            return None
    return len(u.rows)


#: The largest fixed step magnitude accepted: ``exp(alpha h)`` with ``|h| <= 2`` stays within
#: float64 (``e^200 ~ 1e87``); the paper's fixed steps are ``eps / 2`` and 0.05.
MAX_FIXED_STEP = 100

#: The selection rules (docs/specification.md §4 and K.1), see :class:`Schedule`.
SELECTIONS = ("greedy", "passes", "drain")


def boost_options(dist: FiniteDistribution, utilities: dict, *, method, select, epsilon, max_updates, step,
                  max_passes: int = 100):
    """Check the options of a boosting run on a distribution's atoms (Algorithm 1, docs/specification.md §4).

    Every boosting engine shares these rules, so the certified engine and the fast path reject
    the same inputs with the same messages.

    Parameters
    ----------
    dist : FiniteDistribution
        The atoms boosted.
    utilities : dict of str to Utility
        The utilities by name, as :func:`check_utilities` checks them; each must be defined at
        every prediction (per-atom values are not: boosting moves the predictions).
    method : {"huc", "uc"}
        HUC-Boost (Algorithm 1/3) or UC-Boost (:data:`METHODS`).
    select : {"greedy", "passes", "drain"}
        The selection rule (:data:`SELECTIONS`).
    epsilon : int, Fraction or str
        The tolerance, an exact number in (0, 1].
    max_updates : int
        The cap on the number of updates, a non-negative integer.
    step : "adaptive" or int, Fraction or str
        ``"adaptive"`` (E.2's step), or a fixed step magnitude: an exact number in
        (0, :data:`MAX_FIXED_STEP`], also written ``"fixed:0.05"`` as the command line spells it.
    max_passes : int, default 100
        The cap on K.1's passes, a positive integer.

    Returns
    -------
    epsilon : Fraction
        The tolerance, exactly.
    step : Fraction or None
        The fixed step magnitude, or None for the adaptive step.

    Raises
    ------
    HUCError
        Naming the option: ``dist`` is not a :class:`FiniteDistribution`, a method or rule
        that is none of the choices, an integer option that is not one or out of range, an
        ``epsilon`` outside (0, 1], a fixed step not positive or above :data:`MAX_FIXED_STEP`,
        or a utility :func:`check_utilities` refuses or defined only at the atoms.

    Examples
    --------
    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "a"}])
    >>> boost_options(d, {"u": Table(t, [0, 1])}, method="huc", select="greedy", epsilon="1/100",
    ...               max_updates=10, step="1/200")
    (Fraction(1, 100), Fraction(1, 200))
    """
    check_distribution(dist)
    return boost_settings(dist.tree, dist.n, utilities, method=method, select=select, epsilon=epsilon,
                          max_updates=max_updates, step=step, max_passes=max_passes)


def boost_settings(tree, n_atoms: int, utilities: dict, *, method, select, epsilon, max_updates, step,
                   max_passes: int = 100):
    """Validate the options every boosting engine shares; return ``(epsilon, fixed step or None)``.

    One place for the rules, so the certified engine and the fast path reject the same
    inputs with the same messages.

    >>> from huc_ref import LabelTree, Table
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> boost_settings(t, 1, {"u": Table(t, [0, 1])}, method="huc", select="greedy", epsilon="1/100",
    ...                max_updates=10, step="fixed:0.05")  # as ``huc boost --step fixed:0.05`` spells it
    (Fraction(1, 100), Fraction(1, 20))
    """
    if not one_of(method, METHODS):
        raise HUCError(f"method: expected 'huc' or 'uc', got {given(method)}", kind="option")
    if not one_of(select, SELECTIONS):
        raise HUCError(f"select: expected one of {', '.join(map(repr, SELECTIONS))}, got {given(select)}",
                       kind="option")
    if not is_integer(max_passes) or max_passes < 1:
        raise HUCError(f"max_passes: must be a positive integer, got {given(max_passes)}", kind="option")
    eps = exact(epsilon, "epsilon")
    if not 0 < eps <= 1:
        raise HUCError(f"epsilon: must be in (0, 1], got {shown(eps)}", kind="option")
    if not is_integer(max_updates) or max_updates < 0:
        raise HUCError(f"max_updates: must be a non-negative integer, got {given(max_updates)}", kind="option")
    if isinstance(step, str) and step.startswith("fixed:"):  # the command line's spelling, accepted here too
        step = step[len("fixed:"):]
    try:
        fixed = None if one_of(step, ("adaptive",)) else exact(step, "step")
    except HUCError as err:
        if err.kind != "not_exact" or not isinstance(step, str):
            raise
        raise HUCError(f"step: expected 'adaptive' or a fixed step magnitude (a number, or 'fixed:A'), got "
                       f"{given(step, 40)}", kind="option") from None
    if fixed is not None and fixed <= 0:
        raise HUCError(f"step: a fixed step magnitude must be positive, got {shown(fixed)}",
                       kind="nonpositive")
    if fixed is not None and fixed > MAX_FIXED_STEP:
        raise HUCError(f"step: a fixed step magnitude must be at most {MAX_FIXED_STEP} (exp(alpha h) with "
                       f"|h| <= 2 overflows beyond), got {printable(fraction_text(fixed), 40)}", kind="option")
    check_utilities(tree, n_atoms, utilities)
    for name, u in utilities.items():
        if not u.defined_everywhere:
            raise HUCError(f"utilities[{name!r}]: per_atom values describe the utility only at the audited "
                           "predictions; boosting moves the predictions, so it needs a utility defined everywhere",
                           kind="structure")
    return eps, fixed
