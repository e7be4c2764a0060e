"""Finite joint distributions of (subgroup values, prediction, label) (docs/specification.md §3).

An atom ``i`` has a weight ``w_i > 0`` (the weights sum to 1), subgroup values
``c(x_i) in [-1, 1]`` for each ``c`` in ``C``, a prediction ``p_i`` in the open simplex
(``p_y > 0``, A.2) and either a conditional label law ``eta_i`` (a population atom) or
one observed label (a sample point, ``eta_i = e_{y_i}``).  An empirical sample is the
special case ``w_i = 1/n``: one engine serves population and empirical audits.

Predictions must sum to exactly 1.  Explicit options, never silent: ``renormalize``
divides by the sum exactly; ``smooth=kappa`` mixes with the uniform law,
``p <- (1 - kappa) p + kappa / K`` (the paper's ``kappa_init``, K.1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Real

from .errors import HUCError, check_name, given, sized
from .rational import dataclass_repr, exact, exact_sum, exact_vector, shown
from .tree import LabelTree

__all__ = ["Atom", "FiniteDistribution", "WHOLE_POPULATION", "check_smoothing", "check_whole_population",
           "prepare_prediction", "read_law", "subgroup_mapping"]

_ONE = Fraction(1)

#: The remedies :func:`prepare_prediction`'s messages name: its own arguments, which
#: :class:`FiniteDistribution`, :func:`huc_ref.formats.read_case` and the ``from_*`` builders pass on
#: (the command line says them as its options, ``--renormalize`` and ``--smooth``).
RENORMALIZE_REMEDY = "pass renormalize=True to divide it by its sum"
SMOOTH_REMEDY = "pass smooth=kappa to mix it with the uniform law, (1 - kappa) p + kappa / K (K.1's kappa_init)"

#: The name of the whole population's subgroup, ``c(x) = 1`` (K.1: the families include ``c = 1``;
#: K.3: "The whole-population indicator is always included"), which ``HUCBoost`` and ``huc audit``
#: add under this name.  A subgroup given under this name must be that indicator
#: (:func:`check_whole_population`), so no report labels another column as the whole population.
WHOLE_POPULATION = "all"


def check_whole_population(name, values, place: str) -> None:
    """Refuse a subgroup named ``"all"`` whose values ``c(x_i)`` are not all 1 (K.1's ``c = 1``).

    Parameters
    ----------
    name : str
        The subgroup's name; any other name than :data:`WHOLE_POPULATION` (``"all"``) passes.
    values : sequence or array
        Its values ``c(x_i)``, one per row; ``"all"`` with every value 1 (the whole population
        given explicitly) passes.
    place : str
        The place the message names, with ``{i}`` for the row (``"subgroups['all'][{i}]"``).

    Raises
    ------
    HUCError
        Of kind ``structure``, naming the first row whose value is not 1 and saying to give the
        subgroup another name.

    Examples
    --------
    >>> check_whole_population("all", [1, 1.0, True], "subgroups['all'][{i}]")
    >>> check_whole_population("all", [1, 0], "subgroups['all'][{i}]")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: subgroups['all'][1]: is 0, but 'all' names the whole population (c = 1 on every ...
    """
    if name != WHOLE_POPULATION:
        return
    if hasattr(values, "dtype"):  # (numpy's arrays: compared at once)
        bad = (values != 1).nonzero()[0]
        i = int(bad[0]) if len(bad) else None
    else:
        i = next((i for i, v in enumerate(values) if v != 1), None)
    if i is not None:
        value = values[i]
        raise HUCError(f"{place.format(i=i)}: is {shown(value) if isinstance(value, Fraction) else given(value)}, but "
                       f"{WHOLE_POPULATION!r} names the whole population (c = 1 on every row, K.1's c = 1; audits "
                       "and fits report it under this name); give this subgroup another name", kind="structure")


@dataclass(frozen=True)
class Atom:
    """One atom of a finite distribution (docs/specification.md §3).

    Parameters
    ----------
    weight : Fraction
        The weight ``w_i > 0``.
    c : tuple of Fraction
        The subgroup values ``c(x_i)`` in [-1, 1], one per subgroup.
    p : tuple of Fraction
        The prediction ``p_i``, in the tree's label order.
    eta : tuple of Fraction, optional
        The conditional label law ``eta_i`` of a population atom.
    label : int, optional
        The observed label id of a sample point (``eta_i = e_{y_i}``); an atom has ``eta`` or
        ``label``.

    Examples
    --------
    >>> a = Atom(Fraction(1), (Fraction(1),), (Fraction(1, 4), Fraction(3, 4)), (Fraction(1, 2), Fraction(1, 2)))
    >>> a.label is None, a.label_law(2)
    (True, (Fraction(1, 2), Fraction(1, 2)))
    """

    weight: Fraction
    c: tuple[Fraction, ...]
    p: tuple[Fraction, ...]
    eta: tuple[Fraction, ...] | None = None
    label: int | None = None

    def __repr__(self) -> str:  # (an exact number past Python's 4,300-digit guard would raise in repr)
        return dataclass_repr(self)

    def label_law(self, K: int) -> tuple[Fraction, ...]:
        """The atom's conditional label law ``eta_i`` (docs/specification.md §3).

        Parameters
        ----------
        K : int
            The number of labels.

        Returns
        -------
        tuple of Fraction
            ``eta_i``; for a sample point, the unit vector ``e_{y_i}`` of length ``K``.

        Examples
        --------
        >>> Atom(Fraction(1), (Fraction(1),), (Fraction(1, 2), Fraction(1, 2)), None, 1).label_law(2)
        (Fraction(0, 1), Fraction(1, 1))
        """
        if self.eta is not None:
            return self.eta
        return tuple(_ONE if y == self.label else Fraction(0) for y in range(K))


def read_law(values, where: str, K: int) -> tuple[Fraction, ...]:
    """Read a conditional label law ``eta`` exactly (docs/specification.md §3: an atom's ``eta_i``).

    Parameters
    ----------
    values : sequence of exact numbers
        ``K`` nonnegative numbers that sum to 1 (entries may be 0).
    where : str
        The place the messages name.
    K : int
        The number of labels.

    Returns
    -------
    tuple of Fraction
        The law.

    Raises
    ------
    HUCError
        Naming ``where``: not ``K`` exact numbers, a negative entry, or a sum other than 1.

    Examples
    --------
    >>> read_law(["1/4", 0, "3/8", "3/8"], "eta", 4)[0]  # App. D.1's true law
    Fraction(1, 4)
    >>> read_law(["1/2", "1/2", 0, "1/2"], "--eta", 4)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: --eta: sums to 3/2, not 1
    """
    eta = exact_vector(values, where, K)
    for j, v in enumerate(eta):
        if v < 0:
            raise HUCError(f"{where}[{j}]: is negative ({shown(v)})", kind="nonpositive")
    total = exact_sum(eta)
    if total != 1:
        raise HUCError(f"{where}: sums to {shown(total, around=1)}, not 1", kind="probability_sum")
    return eta


def check_smoothing(kappa, where: str = "smooth") -> Fraction:
    """Read K.1's smoothing weight ``kappa`` exactly, checking it lies in (0, 1).

    K.1: "for a predetermined kappa_0 in (0, 1), q^kappa_0 := (1 - kappa_0) q + kappa_0 / K".
    The interval is open: kappa = 1 would discard the prediction, kappa = 0 would not smooth.

    Parameters
    ----------
    kappa : int, Fraction or str
        The weight, an exact number.
    where : str, default "smooth"
        The place the messages name (``"--smooth"`` on the command line).

    Returns
    -------
    Fraction
        ``kappa``.

    Raises
    ------
    HUCError
        Of kind ``option`` for a weight outside (0, 1), and as :func:`~huc_ref.rational.exact`
        for one that is not exact.

    Examples
    --------
    >>> check_smoothing("1e-10")
    Fraction(1, 10000000000)
    >>> check_smoothing(2, "--smooth")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: --smooth: kappa must be in (0, 1) (K.1's kappa_0), got 2
    """
    k = exact(kappa, where)
    if not 0 < k < 1:
        raise HUCError(f"{where}: kappa must be in (0, 1) (K.1's kappa_0), got {shown(k)}", kind="option")
    return k


def prepare_prediction(p, where: str = "p", *, K: int | None = None,
                       renormalize: bool = False, smooth=None, remedies: bool = True) -> tuple[Fraction, ...]:
    """Read a prediction exactly and check that it lies in the open simplex (A.2).

    Parameters
    ----------
    p : sequence of exact numbers
        The prediction, in the tree's label order.
    where : str, default "p"
        The place the messages name.
    K : int, optional
        The number of entries required; by default any (but at least one).
    renormalize : bool, default False
        Divide ``p`` by its sum, exactly, before the checks (a sum other than 1 is otherwise an
        error).
    smooth : int, Fraction or str, optional
        A weight ``kappa`` in (0, 1) (K.1's ``kappa_init``): mix the prediction with the uniform
        law, ``p <- (1 - kappa) p + kappa / K``, so that no entry is 0.
    remedies : bool, default True
        Whether the messages name the arguments that mend them (:data:`RENORMALIZE_REMEDY`,
        :data:`SMOOTH_REMEDY`); False for a caller that does not offer those arguments.

    Returns
    -------
    tuple of Fraction
        The prediction, every entry positive and the sum exactly 1.

    Raises
    ------
    HUCError
        Naming ``where`` (or the entry): entries that are not exact numbers or not ``K`` of
        them, an empty or negative prediction, a sum other than 1 (naming ``renormalize``), a
        zero sum to renormalise, a zero entry (naming ``smooth``; A.2 assumes ``p_y > 0``), a
        ``renormalize`` that is not a boolean, or a ``smooth`` outside (0, 1).

    Examples
    --------
    >>> prepare_prediction(["1/4", "1/4", "1/2"])
    (Fraction(1, 4), Fraction(1, 4), Fraction(1, 2))
    >>> prepare_prediction([1, 2, 1], renormalize=True)
    (Fraction(1, 4), Fraction(1, 2), Fraction(1, 4))
    >>> prepare_prediction([1, 0], smooth="1/10")
    (Fraction(19, 20), Fraction(1, 20))
    >>> prepare_prediction(["0.5", "0.499"], "atoms[3].p")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: atoms[3].p: sums to 999/1000, not 1; pass renormalize=True to divide it by its sum
    >>> prepare_prediction([1, 0], "p", remedies=False)
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: p[1]: is 0; the paper assumes p_y > 0 (A.2)
    """
    p = exact_vector(p, where, K)
    if not p:
        raise HUCError(f"{where}: is empty", kind="length")
    for j, v in enumerate(p):
        if v.numerator < 0:
            raise HUCError(f"{where}[{j}]: is negative ({shown(v)})", kind="nonpositive")
    total = exact_sum(p)
    if not isinstance(renormalize, bool):
        raise HUCError(f"renormalize: expected True or False, got {given(renormalize, 40)}", kind="option")
    if renormalize:
        if total == 0:
            raise HUCError(f"{where}: sums to 0 and cannot be renormalised", kind="probability_sum")
        p = tuple(v / total for v in p)
        total = _ONE
    if total != 1:
        raise HUCError(f"{where}: sums to {shown(total, around=1)}, not 1"
                       + (f"; {RENORMALIZE_REMEDY}" if remedies else ""), kind="probability_sum")
    if smooth is not None:
        kappa = check_smoothing(smooth)
        p = tuple((1 - kappa) * v + kappa / len(p) for v in p)
    for j, v in enumerate(p):
        if v == 0:
            raise HUCError(f"{where}[{j}]: is 0; the paper assumes p_y > 0 (A.2)" + (f": {SMOOTH_REMEDY}" if remedies
                                                                                     else ""), kind="nonpositive")
    return p


class FiniteDistribution:
    """A finite joint distribution of atoms on a label tree (Sec. 2.1): a population or a sample.

    An atom ``i`` has a weight ``w_i > 0`` (the weights sum to 1), subgroup values
    ``c(x_i) in [-1, 1]``, a prediction ``p_i`` in the open simplex (A.2) and either a
    conditional label law ``eta_i`` (a population atom) or one observed label (a sample point,
    ``eta_i = e_{y_i}``).  An empirical sample is the special case ``w_i = 1/n``: one engine
    serves population and empirical audits.

    Parameters
    ----------
    tree : LabelTree
        The label tree.
    atoms : sequence of mapping or Atom
        The atoms: mappings in the ``huc-case/1`` form (``weight``, ``c``, ``p`` and ``eta`` or
        ``label``, optionally ``id``) or :class:`Atom` s.  Give every weight or none (each is
        then ``1/n``); ``c`` is aligned with ``subgroups`` and may be omitted when ``C = {1}``.
    subgroups : sequence of str, default ("all",)
        The names of the subgroup family ``C``, each once; a subgroup named ``"all"`` must be
        the whole population (:func:`check_whole_population`).
    renormalize : bool, default False
        Divide each prediction by its sum, exactly (:func:`prepare_prediction`).
    smooth : int, Fraction or str, optional
        Mix each prediction with the uniform law, ``p <- (1 - kappa) p + kappa / K`` (K.1's
        ``kappa_init``).

    Attributes
    ----------
    tree : LabelTree
        The label tree.
    atoms : tuple of Atom
        The atoms, exactly.
    subgroups : tuple of str
        The subgroups' names.

    Raises
    ------
    HUCError
        Naming the atom and field: a missing or unknown field, a weight that is not positive or
        given for some atoms only, weights that do not sum to 1, a subgroup value outside
        [-1, 1], a prediction :func:`prepare_prediction` refuses, a law :func:`read_law` refuses,
        both or neither of ``eta`` and ``label``, a label that is not a leaf; or a subgroup name
        that is not one or is listed twice.

    Examples
    --------
    >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
    >>> dist = FiniteDistribution(t, [{"p": ["1/2", "1/2"], "label": "a"},
    ...                               {"p": ["1/4", "3/4"], "label": "b"}])
    >>> dist.n, dist.atoms[1].weight, dist.is_sample
    (2, Fraction(1, 2), True)
    """

    def __init__(self, tree: LabelTree, atoms: Sequence, subgroups: Sequence[str] = ("all",), *,
                 renormalize: bool = False, smooth=None):
        if not isinstance(tree, LabelTree):
            raise HUCError(f"tree: expected a LabelTree, got {type(tree).__name__}", kind="tree")
        self.tree = tree
        if isinstance(subgroups, (str, bytes)) or not isinstance(subgroups, Sequence) or not subgroups:
            raise HUCError("subgroups: expected a non-empty list of names", kind="type")
        seen = set()
        for i, name in enumerate(subgroups):
            if not isinstance(name, str) or not name:
                raise HUCError(f"subgroups[{i}]: must be a non-empty string, got {name!r}", kind="type")
            check_name(name, f"subgroups[{i}]")
            if name in seen:  # a set: validation stays linear in the number of names
                raise HUCError(f"subgroups[{i}]: {name!r} is listed twice", kind="structure")
            seen.add(name)
        self.subgroups = tuple(subgroups)
        if isinstance(atoms, (str, bytes)) or not isinstance(atoms, Sequence) or not atoms:
            raise HUCError("atoms: expected a non-empty list of atoms", kind="type")
        given = [self._has_weight(a) for a in atoms]
        if any(given) and not all(given):
            i = given.index(False)
            raise HUCError(f"atoms[{i}].weight: missing, while other atoms give weights "
                           f"(give every weight, or none for 1/n each)", kind="missing_field")
        default_w = None if any(given) else Fraction(1, len(atoms))
        self.atoms = tuple(self._read_atom(a, i, default_w, renormalize, smooth) for i, a in enumerate(atoms))
        total = exact_sum([a.weight for a in self.atoms])
        if total != 1:
            raise HUCError(f"atoms: weights sum to {shown(total, around=1)}, not 1", kind="probability_sum")
        if WHOLE_POPULATION in self.subgroups:
            k = self.subgroups.index(WHOLE_POPULATION)
            check_whole_population(WHOLE_POPULATION, [a.c[k] for a in self.atoms], f"atoms[{{i}}].c[{k}]")

    @staticmethod
    def _has_weight(a) -> bool:
        if isinstance(a, Atom):
            return True
        return isinstance(a, Mapping) and "weight" in a

    def _read_atom(self, a, i, default_w, renormalize, smooth) -> Atom:
        where = f"atoms[{i}]"
        K = self.tree.K
        if isinstance(a, Atom):
            a = {"weight": a.weight, "c": a.c, "p": a.p,
                 **({"eta": a.eta} if a.eta is not None else {"label": self.tree.labels[a.label]})}
        if not isinstance(a, Mapping):
            raise HUCError(f"{where}: expected an object with p and eta or label", kind="type")
        unknown = set(a) - {"weight", "c", "p", "eta", "label", "id"}
        if unknown:
            raise HUCError(f"{where}: unknown field {sorted(unknown)[0]!r}", kind="unknown_field")
        w = default_w if default_w is not None else exact(a["weight"], f"{where}.weight")
        if w <= 0:
            raise HUCError(f"{where}.weight: must be positive, got {shown(w)}", kind="nonpositive")
        if "c" in a:
            c = exact_vector(a["c"], f"{where}.c", len(self.subgroups))
        elif len(self.subgroups) == 1:
            c = (_ONE,)
        else:
            raise HUCError(f"{where}.c: missing (one value per subgroup: {list(self.subgroups)})", kind="missing_field")
        for k, v in enumerate(c):
            if not -1 <= v <= 1:
                raise HUCError(f"{where}.c[{k}]: subgroup value {shown(v)} is outside [-1, 1]", kind="range")
        if "p" not in a:
            raise HUCError(f"{where}.p: missing", kind="missing_field")
        p = prepare_prediction(a["p"], f"{where}.p", K=K, renormalize=renormalize, smooth=smooth)
        if ("eta" in a) == ("label" in a):
            raise HUCError(f"{where}: give exactly one of eta (a label law) or label (a sample point)",
                           kind="structure")
        if "label" in a:
            lab = a["label"]
            if not isinstance(lab, str) or not self.tree.has_label(lab):
                raise HUCError(f"{where}.label: {given(lab)} is not a label", kind="reference")
            return Atom(w, c, p, None, self.tree.label_index(lab))
        return Atom(w, c, p, read_law(a["eta"], f"{where}.eta", K), None)

    @classmethod
    def from_sample(cls, tree: LabelTree, y_true: Sequence, y_prob: Sequence[Sequence], *,
                    subgroups: Mapping[str, Sequence] | None = None, sample_weight=None,
                    renormalize: bool = False, smooth=None, labels=None) -> FiniteDistribution:
        """An empirical distribution (Sec. 2.1, App. F.3) from labels and exact predictions.

        Parameters
        ----------
        tree : LabelTree
            The label tree.
        y_true : sequence of str or int
            One label per row: a name, or an integer label id (a position in ``tree.labels``;
            :meth:`LabelTree.check_integer_labels` refuses ids that could also be names).
        y_prob : sequence of sequence of exact numbers
            One prediction per row, exactly (:func:`prepare_prediction`).
        subgroups : mapping of str to sequence, optional
            The subgroup family: a name to one value in [-1, 1] per row (booleans are read as 1 and
            0); by default ``C = {1}``, named ``"all"``.
        sample_weight : sequence of exact numbers, optional
            Nonnegative weights, normalised to sum 1 (``[1, 3]`` gives the atoms weights 1/4 and
            3/4).  A weight of 0 is refused, naming the row: an atom of weight 0 is not in the
            distribution's support, so leave the row out (:func:`huc_ref.fast.audit`, which has no
            atoms, skips such rows).  By default every row weighs ``1/n``.
        renormalize : bool, default False
            Divide each prediction by its sum, exactly.
        smooth : int, Fraction or str, optional
            Mix each prediction with the uniform law (K.1's ``kappa_init``).
        labels : array-like, optional
            The names of the columns of ``y_prob`` in order, which then puts them in the tree's label
            order (:meth:`LabelTree.label_columns`); without it the rows are in the tree's label
            order.

        Returns
        -------
        FiniteDistribution
            The sample, one atom per row.

        Raises
        ------
        HUCError
            For arguments of different lengths, a label that is not a name or an id in range,
            weights that are negative, zero or sum to 0, and as :class:`FiniteDistribution`.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> d = FiniteDistribution.from_sample(t, ["a", 1], [["1/2", "1/2"], ["1/3", "2/3"]],
        ...                                    subgroups={"all": [1, 1], "first": [1, 0]})
        >>> d.subgroups, d.atoms[1].label, d.atoms[1].c
        (('all', 'first'), 1, (Fraction(1, 1), Fraction(0, 1)))
        >>> FiniteDistribution.from_sample(t, ["a", "b"], [["1/2", "1/2"]] * 2, sample_weight=[1, 3]).atoms[1].weight
        Fraction(3, 4)
        """
        if labels is not None or hasattr(y_prob, "columns"):  # (exact rows are written in the tree's order;
            y_prob = tree.label_columns(y_prob, labels)      # named columns are put in it)
        n = len(sized(y_true, "y_true", "one label (a name or an id) per row of y_prob"))
        if getattr(y_true, "ndim", 1) != 1:
            raise HUCError(f"y_true: expected one label (a name or an id) per row of y_prob, got an array of shape "
                           f"{y_true.shape}", kind="length")
        if len(sized(y_prob, "y_prob", f"one row of {tree.K} probabilities per label of y_true")) != n:
            raise HUCError(f"y_prob: has {len(y_prob)} rows, y_true has {n}", kind="length")
        groups = dict(subgroup_mapping(subgroups)) if subgroups is not None else {"all": [1] * n}
        for name, vals in groups.items():
            if len(sized(vals, f"subgroups[{name!r}]", _PER_LABEL.format(n))) != n:
                raise HUCError(f"subgroups[{name!r}]: has {len(vals)} values, expected {n}", kind="length")
        if sample_weight is not None:  # positive (a distribution's atoms have positive weight), normalised to sum 1
            if len(sized(sample_weight, "sample_weight", _PER_LABEL.format(n))) != n:
                raise HUCError(f"sample_weight: has {len(sample_weight)} values, expected {n}", kind="length")
            sample_weight = [exact(w, f"sample_weight[{i}]") for i, w in enumerate(sample_weight)]
            for i, w in enumerate(sample_weight):
                if w < 0:
                    raise HUCError(f"sample_weight[{i}]: {shown(w)} is negative; weights are nonnegative",
                                   kind="nonpositive")
            total = sum(sample_weight)
            if not total > 0:
                raise HUCError("sample_weight: sums to 0; the weights need a positive sum", kind="probability_sum")
            if 0 in sample_weight:  # (named as the argument, not as the atoms' rule: atoms[i].weight)
                raise HUCError(f"sample_weight[{sample_weight.index(0)}]: is 0; an atom of weight 0 is not in the "
                               "distribution's support: leave the row out", kind="nonpositive")
            sample_weight = [w / total for w in sample_weight]
        atoms, ids_checked = [], False
        for i in range(n):
            y = y_true[i]
            if isinstance(y, Integral) and not isinstance(y, bool):  # an id (numpy's integers too)
                if not ids_checked:  # (once: the check reads every label name)
                    tree.check_integer_labels()
                    ids_checked = True
                if not 0 <= y < tree.K:
                    raise HUCError(f"y_true[{i}]: label id {y} is out of range 0..{tree.K - 1}", kind="reference")
                y = tree.labels[int(y)]
            elif not isinstance(y, str):
                raise HUCError(f"y_true[{i}]: {given(y)} is not a label name or id", kind="reference")
            atom = {"p": y_prob[i], "label": y, "c": [_membership(vals[i]) for vals in groups.values()]}
            if sample_weight is not None:
                atom["weight"] = sample_weight[i]
            atoms.append(atom)
        return cls(tree, atoms, list(groups), renormalize=renormalize, smooth=smooth)

    @classmethod
    def from_floats(cls, tree: LabelTree, y_true: Sequence, y_prob, *, subgroups: Mapping[str, Sequence] | None = None,
                    sample_weight=None, labels=None, smooth=None) -> FiniteDistribution:
        """An empirical distribution (Sec. 2.1) from float arrays such as ``predict_proba``, for the exact engine.

        This is the one documented conversion of floats into the exact path (the exact readers
        otherwise refuse floats, as an exact decimal was probably meant).

        Parameters
        ----------
        tree : LabelTree
            The label tree.
        y_true : sequence of str or int
            One label per row: names or integer ids (as :meth:`from_sample`: a float or boolean
            label is an error, not an id).
        y_prob : array-like of shape (n, K)
            The predictions, finite nonnegative floats with a positive sum per row.  Each float is
            read as its exact binary value (``Fraction(x)``) and each row is then divided by its
            exact sum.
        subgroups : mapping of str to array-like, optional
            The subgroup family, a name to one value per row; read as floats are (booleans as 1
            and 0).
        sample_weight : array-like, optional
            The rows' weights, read as floats are and normalised (:meth:`from_sample`).
        labels : array-like, optional
            The columns' names in order (a classifier's ``classes_``), as :func:`huc_ref.fast.audit`
            takes them (:meth:`LabelTree.label_columns`: unnamed columns only in a declared or
            sorted label order).
        smooth : int, Fraction or str, optional
            An exact ``kappa`` (K.1's ``kappa_init``) that mixes each renormalised row with the
            uniform law, for predictions with exact zeros (A.2 assumes ``p_y > 0``).

        Returns
        -------
        FiniteDistribution
            The sample, exactly.

        Raises
        ------
        HUCError
            Naming the entry: a value that is not a number or not finite, a row of the wrong length,
            with a negative entry or no positive sum; columns in an undeclared order; and as
            :meth:`from_sample`.

        Examples
        --------
        >>> t = LabelTree.from_children("r", {"r": ["a", "b"]})
        >>> d = FiniteDistribution.from_floats(t, [0, 1], [[0.25, 0.75], [0.1, 0.9]])
        >>> d.atoms[0].p, sum(d.atoms[1].p), d.atoms[1].p[0] == Fraction(0.1) / (Fraction(0.1) + Fraction(0.9))
        ((Fraction(1, 4), Fraction(3, 4)), Fraction(1, 1), True)
        >>> FiniteDistribution.from_floats(t, ["b"], [[0.0, 1.0]], smooth="1/10").atoms[0].p  # a zero, smoothed
        (Fraction(1, 20), Fraction(19, 20))
        """
        y_prob = tree.label_columns(y_prob, labels)  # (a bare array: only in a declared or classes_-sorted order)

        def finite(x, where) -> float:
            if type(x) is not float and (isinstance(x, bool) or not isinstance(x, Real)):  # (as the fast path)
                raise HUCError(f"{where}: {given(x)} is not a number (from_floats reads arrays of floats)", kind="type")
            x = float(x)
            if x != x or x in (float("inf"), float("-inf")):
                raise HUCError(f"{where}: {x!r} is not a finite number", kind="not_exact")
            return x

        def exact_float(x, where) -> Fraction:
            return Fraction(finite(x, where))
        rows = []
        for i, row in enumerate(sized(y_prob, "y_prob", f"one row of {tree.K} probabilities per label")):
            row = sized(row, f"y_prob[{i}]", f"{tree.K} probabilities, one per label")
            if len(row) != tree.K:
                raise HUCError(f"y_prob[{i}]: has {len(row)} entries, expected {tree.K} (one per label)",
                               kind="length")
            # each float is m / 2^e: the row over one power of two is integers, and its entries over their
            # sum are the exact renormalised row (one gcd an entry, not a Fraction addition and division)
            pairs = [finite(x, f"y_prob[{i}][{j}]").as_integer_ratio() for j, x in enumerate(row)]
            top = max((d for _, d in pairs), default=1).bit_length()
            a = [m << (top - d.bit_length()) for m, d in pairs]
            total = sum(a)
            if not total > 0 or any(v < 0 for v in a):
                raise HUCError(f"y_prob[{i}]: entries must be nonnegative with a positive sum", kind="nonpositive")
            rows.append([Fraction(v, total) for v in a])
        def read(values, where) -> list:
            return [exact_float(_membership(v), f"{where}[{i}]")
                    for i, v in enumerate(sized(values, where, _PER_LABEL.format(len(rows))))]
        groups = None if subgroups is None else {name: read(values, f"subgroups[{name!r}]")
                                                 for name, values in subgroup_mapping(subgroups).items()}
        weights = None if sample_weight is None else read(sample_weight, "sample_weight")
        # labels as given: from_sample takes names and integer ids and refuses the rest (a float label such as
        # 2.5 was read as id 2, and True as id 1)
        return cls.from_sample(tree, y_true, rows, subgroups=groups, sample_weight=weights, smooth=smooth)

    @property
    def n(self) -> int:
        """The number of atoms ``n`` (Sec. 2.1's sample size, or a population's support).

        Examples
        --------
        >>> from huc_ref import LabelTree
        >>> FiniteDistribution.from_sample(LabelTree.from_children("r", {"r": ["a", "b"]}), ["a", "b", "b"],
        ...                                [["1/2", "1/2"]] * 3).n
        3
        """
        return len(self.atoms)

    @property
    def is_sample(self) -> bool:
        """Whether every atom is a sample point (one observed label, Sec. 2.1's empirical distribution).

        It is False where some atom is a population atom with a law ``eta`` over the labels.

        Examples
        --------
        >>> from huc_ref import LabelTree
        >>> FiniteDistribution.from_sample(LabelTree.from_children("r", {"r": ["a", "b"]}), ["a"],
        ...                                [["1/2", "1/2"]]).is_sample
        True
        """
        return all(a.label is not None for a in self.atoms)

    def __repr__(self) -> str:
        kind = "sample" if self.is_sample else "population"
        return f"FiniteDistribution({kind}, n={self.n}, K={self.tree.K}, subgroups={list(self.subgroups)})"


_PER_LABEL = "one value per label of y_true ({})"


def subgroup_mapping(subgroups, where: str = "subgroups") -> Mapping:
    """Check a sample's subgroup family ``C`` (Sec. 2.1) as the array entry points take it.

    Every entry point checks it here, so the error is the same from each; its values are
    checked where they are read.

    Parameters
    ----------
    subgroups : object
        A non-empty mapping from name to one value ``c(x_i)`` per sample.
    where : str, default "subgroups"
        The place the message names.

    Returns
    -------
    mapping
        ``subgroups`` itself.

    Raises
    ------
    HUCError
        Of kind ``type`` where ``subgroups`` is not a non-empty mapping.

    Examples
    --------
    >>> subgroup_mapping([[1, 0]])
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: subgroups: expected a non-empty mapping from name to n values in [-1, 1]
    """
    if not (isinstance(subgroups, Mapping) and subgroups):
        raise HUCError(f"{where}: expected a non-empty mapping from name to n values in [-1, 1]", kind="type")
    return subgroups


def _membership(value):
    """A subgroup value ``c(x_i)`` as given to the array entry points: a boolean (a mask's entry,
    Python's or numpy's) as the indicator 1 or 0, anything else as it is."""
    if isinstance(value, bool) or type(value).__name__ in ("bool", "bool_"):  # (numpy's bool: np.bool / np.bool_)
        return int(bool(value))
    return value

