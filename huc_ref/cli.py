"""The ``huc`` command (also ``python -m huc_ref``).

``huc audit CASE.json`` prints a readable report; ``--json`` prints the ``huc-result/1``
document (on bad input, a ``huc-error/1`` document with the error's ``kind`` and ``path``).
``huc verify`` checks the paper's claims (:mod:`proofs_check`).  ``huc vectors``
exports the golden vectors and checks another implementation's answers.  Exit status
0 on success, 1 when a verified claim or a checked answer fails, 2 on bad input (one
line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from pathlib import Path

from .audit import MAX_EXACT_DIGITS
from .bounds import prop_3_3_bound
from .errors import HUCError, check_names, printable
from .formats import dumps, read_case
from .rational import decimal_text, fraction_text

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit status 2
        raise HUCError(message, kind="option")


#: Exact numbers longer than this are shown as decimals in the report (``--json`` keeps them exact).
SHOWN_DIGITS = 24


def _show(x) -> str:
    """An exact number for a person: ``1/4``, or ``0.0191234...`` when its exact text is long;
    a float (the fast engine's) as six significant digits."""
    if isinstance(x, float):
        return decimal_text(x)
    if max(x.numerator.bit_length(), x.denominator.bit_length()) > 3.33 * SHOWN_DIGITS:
        return f"~{decimal_text(x)}"
    return fraction_text(x)


def _interval_text(interval):
    if interval is None:
        return "(empty)"
    lo, hi = (_show(x) for x in interval)
    return f"[{lo}, {hi}]"


def _n(name, width: int = 0) -> str:
    """A name from the input, safe to print (:func:`huc_ref.errors.printable`), padded to ``width``."""
    return printable(name, 60).ljust(width)


def _report(case, result, top: int) -> str:
    lines = [f"case {_n(case.id)}: {printable(case.description)}".rstrip(": "),
             f"  {printable(case.distribution if isinstance(case.distribution, str) else repr(case.distribution))}",
             f"  utilities: {', '.join(f'{_n(n)} ({u.kind})' for n, u in case.utilities.items())}",
             ""]
    for label, row in (("UC ", result.uc), ("HUC", result.huc)):
        where = ", ".join(f"{k}={_n(v)}" for k, v in (("subgroup", row.subgroup), ("utility", row.utility),
                                                      ("node", row.node)) if v is not None)
        shown = _show(row.sup)
        approx = "" if shown.startswith("~") or isinstance(row.sup, float) else f"  (~{decimal_text(row.sup)})"
        lines.append(f"{label} = {shown}{approx}  at {where or '-'} "
                     f"on {_interval_text(row.interval)}, moment {_show(row.moment)}")
    if result.near_ties is not None:  # (the fast engine: scores float64 could not order, and what became of them)
        lines.append(result.near_ties.text())
    sig = result.significance
    if sig is not None:
        how = (f"{sig.draws} redraws of every label from its prediction, seed {sig.seed}" if sig.method == "resampling"
               else f"all {sig.draws} label assignments, exactly")
        lines += ["", f"p-values under the null of calibration (Y ~ p; {how}):",
                  f"  UC: p = {_p_text(sig.uc)}   HUC: p = {_p_text(sig.huc)} (family-wise: the largest row "
                  "over all subgroups, utilities, nodes and intervals)",
                  f"  Theorem 3.4 at delta = 1/20: |HUC_hat - HUC| <= {sig.theorem_3_4} (n = {result.n}, "
                  f"N_cand = {result.n_cand}); " + ("HUC is below it: the bound cannot tell it from 0"
                                                     if float(result.huc.sup) <= float(sig.theorem_3_4)
                                                     else "HUC exceeds it")]
    lines.append("")
    lines.append("relevant nodes V_T(u): " + "; ".join(f"{_n(u)}: {', '.join(map(_n, v)) or '(none)'}"
                                                      for u, v in result.relevant_nodes.items()))
    for u, nodes in result.relevant_nodes.items():
        uc_u = max(r.sup for r in result.candidates if r.utility == u and r.node is None)
        huc_u = max((r.sup for r in result.candidates if r.utility == u and r.node is not None), default=0)
        if isinstance(uc_u, float):  # the fast engine: float64 sums agree with the exact ones to 1e-9
            holds = uc_u <= float(prop_3_3_bound(Fraction(huc_u), len(nodes))) + 1e-9
        else:
            holds = uc_u <= prop_3_3_bound(huc_u, len(nodes))
        lines.append(f"  Prop. 3.3 for {_n(u)}: UC = {_show(uc_u)} <= |V_T(u)| HUC = "
                     f"{len(nodes)} * {_show(huc_u)}: {'holds' if holds else 'FAILS'}")
    order = sorted((k for k, r in enumerate(result.candidates) if r.sup > 0), key=lambda k: -result.candidates[k].sup)
    rows = order[:top]
    if rows:
        p_head = f" {'p-value':>9}" if sig is not None else ""
        lines += ["", f"largest violations (top {len(rows)}):",
                  f"  {'subgroup':<12} {'utility':<12} {'node':<12} {'sup':>12}{p_head}  interval"]
        for k in rows:
            r = result.candidates[k]
            p = f" {_p_text(sig.rows[k]):>9}" if sig is not None else ""
            lines.append(f"  {_n(r.subgroup, 12)} {_n(r.utility, 12)} {_n(r.node or '(UC)', 12)} "
                         f"{decimal_text(r.sup):>12}{p}  {_interval_text(r.interval)}")
    if any(_show(x).startswith("~") for r in result.candidates for x in (r.sup, r.moment)):
        lines += ["", "~: decimals of exact numbers too long to print; --json writes them exactly"]
    return "\n".join(lines) + "\n"


def _p_text(p: Fraction) -> str:
    """A p-value as a short decimal (exact in --json)."""
    return decimal_text(p, 4)


class _ArrayCase:
    """What the report prints of a sample given as array files."""

    def __init__(self, name, n, K, utilities):
        self.id, self.description, self.utilities = name, "", utilities
        self.distribution = f"sample from array files, n={n}, K={K}"


def _subgroup_file(path, n: int, option: str = "--subgroups"):
    """Subgroups from a CSV file with a header row of names (one column per subgroup): numbers in
    [-1, 1], or True/False cells (a boolean column as pandas writes it), read as a mask; ``option``
    names the file in a message."""
    if path is None:
        return None
    from .formats import read_columns
    values, names = read_columns(Path(path), option)
    if Path(path).suffix.lower() != ".csv" or names is None or len(values) != n:
        raise HUCError(f"{option}: expected a .csv file with a header row of subgroup names and {n} rows", kind="file")
    check_names(names, option)
    values = values.reshape(len(values), -1)
    groups = {name: _subgroup_cells(values[:, k], f"{option}[{printable(name, 80)!r}]") for k, name in enumerate(names)}
    if "all" in groups:  # (the whole population's name: its column must be it)
        from .distribution import check_whole_population
        check_whole_population("all", groups["all"], f"{option}['all'][{{i}}]")
    return groups


def _subgroup_cells(cells, where: str):
    """One column of a subgroups file: numbers in [-1, 1] (Sec. 2.1's ``c(x_i)``), or True/False
    cells (a boolean column as pandas writes it) read as a mask, True = 1; a cell that is neither
    is an error naming its row (0-based, as the library's messages count rows).

    >>> import numpy as np
    >>> _subgroup_cells(np.array(["True", "false"]), "g").tolist(), _subgroup_cells(np.array([0.5, -1.0]), "g").tolist()
    ([True, False], [0.5, -1.0])
    >>> _subgroup_cells(np.array(["1", "", "0"]), "--subgroups['g']")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: --subgroups['g'][1]: '' is not a number in [-1, 1] (nor True or False, for a mask)
    """
    import numpy as np

    from .fast.numbers import subgroup_column
    if cells.dtype.kind == "U":
        lower = np.char.lower(cells)
        if set(lower.tolist()) <= {"true", "false"}:
            return lower == "true"  # a mask
        out = np.empty(len(cells))
        for i, cell in enumerate(cells.tolist()):
            try:
                out[i] = float(cell)
            except ValueError:
                rule = ("in a column of numbers (a mask's column holds only True and False)" if lower[i] in
                        ("true", "false") else "not a number in [-1, 1] (nor True or False, for a mask)")
                raise HUCError(f"{where}[{i}]: {printable(cell, 40)!r} is {rule}", kind="type") from None
        cells = out
    return subgroup_column(cells, len(cells), where)  # finite, in [-1, 1]


def _need_subgroups(names, groups, option: str) -> None:
    """Every subgroup the model is fitted with (``names``; "all", the whole population, is always
    there, K.3) has a column in the file of ``option`` (read as ``groups``)."""
    missing = [g for g in names if g != "all" and g not in (groups or ())]
    if missing:
        raise HUCError(f"{option}: the model is fitted with subgroup {printable(missing[0], 80)!r}; give its values "
                       f"in a {option} file (a .csv column of that name)", kind="missing_field")


#: How a headerless predictions file's column order is stated (``huc audit`` and ``huc fit`` read a spec;
#: ``huc apply`` reads a model, so only the option and a header serve there).
_STATE_COLUMNS = ("state the file's column order with --columns NAME,NAME,... or \"columns\" in the spec (e.g. "
                  "clf.classes_.tolist()), or give the file a header row naming its columns")
_STATE_COLUMNS_APPLY = ("state the file's column order with --columns NAME,NAME,... (e.g. the classifier's classes_), "
                        "or give the file a header row naming its columns")


def _predictions(path, what: str, tree, columns=None, fix: str = _STATE_COLUMNS) -> tuple:
    """A predictions file's array with its columns in the tree's label order (Sec. 2.1's
    coordinates of ``p``), and the names of the file's columns in the file's order.

    A header that names the tree's labels (a CSV's first row, a Parquet file's column names, as
    pandas and ``huc apply`` write them; pandas' index column is dropped by
    :func:`huc_ref.formats.read_columns`) is read by name (:meth:`LabelTree.column_order`).
    Columns without names (a ``.npy`` file, a CSV whose first row is numbers) are the labels in the
    order ``columns`` states (the spec's ``"columns"`` or ``--columns``, checked where they are
    read); unstated, they are taken in the tree's order only where it is the sorted order of a
    classifier's ``classes_`` (:attr:`LabelTree.in_classes_order`), and are otherwise one error
    naming ``fix``, the ways to state it: the spec's ``labels`` is required in every spec, so it
    cannot tell that the file's columns were meant in its order."""
    from .fast.numbers import prediction_shape
    from .formats import read_columns
    P, names = read_columns(Path(path), what, numbers=True, header_names=set(tree.labels))
    file = repr(printable(Path(path).name, 100))
    if names is None or not set(names) & set(tree.labels):  # columns without names (or not the labels' names)
        prediction_shape(P, tree.K, what)  # (K columns before they are put in order; the rows are the library's)
        if columns is None and not tree.in_classes_order:
            raise HUCError(f"{what}: {file} has no header naming its columns, and the labels "
                           f"{printable(repr(list(tree.labels)), 100)} are not in the sorted order of a classifier's "
                           f"classes_; {fix}", kind="labels")
        names = list(tree.labels) if columns is None else columns
    order = tree.column_order(names, where=what, what=file)
    if order is not None:  # (row-major, as the file in the tree's order reads: numpy sums a row in its layout's order)
        import numpy as np
        P = np.ascontiguousarray(P[:, order])
    return P, names


def _stated_columns(option, tree, spec=None):
    """The columns of headerless predictions files, in order: ``--columns NAME,NAME,...`` (checked to
    name each of the tree's labels once), else the spec's ``"columns"`` (``spec``, checked by
    :func:`huc_ref.formats.read_spec`), else None.

    >>> from huc_ref import LabelTree
    >>> _stated_columns("b, a", LabelTree.from_children("r", {"r": ["a", "b"]}))
    ['b', 'a']
    """
    if option is None:
        return spec
    names = [name.strip() for name in option.split(",")]
    tree.column_order(names, where="--columns", what="the predictions files")  # each label once
    return names


def _spec(args) -> tuple:
    """The tree, the utilities and the stated columns of headerless predictions files
    (:func:`_stated_columns`) of ``--tree SPEC.json`` and ``--columns``."""
    from .formats import read_spec
    tree, utilities, columns = read_spec(Path(args.tree))
    return tree, utilities, _stated_columns(args.columns, tree, columns)


def _arrays(args, tree, prefix="", columns=None):
    """Predictions (their columns in the tree's label order: :func:`_predictions`, ``columns`` the
    stated order of a headerless file), labels, subgroups and the file's columns in its order, from
    the array files the options name (``prefix`` "val_": the validation files); a labels file of the
    wrong length or with a name that is not a label is the library's error, named as the options
    (:func:`_command_words`)."""
    from .formats import class_indices, read_columns
    option = f"--{prefix.replace('_', '-')}"
    P, names = _predictions(getattr(args, f"{prefix}predictions"), f"{option}predictions", tree, columns)
    path = Path(getattr(args, f"{prefix}labels"))
    text = path.suffix.lower() == ".csv"
    y = read_columns(path, f"{option}labels", labels=set(tree.labels) if text else None)[0]
    if text and not set(y.tolist()) <= set(tree.labels):  # not all names: whole numbers are label ids
        ids = class_indices(y)
        y = y if ids is None else ids  # (names that are not labels: the library names the first)
    return P, y, _subgroup_file(getattr(args, f"{prefix}subgroups"), len(P), f"{option}subgroups"), names


#: The most digits an integer option is read with: more than any count, seed (numpy's 128-bit
#: entropy has 39) or budget is meant, and ``int`` of a longer text can pass CPython's limit of
#: 4,300 digits on integer text (a ValueError, not an answer).
MAX_OPTION_DIGITS = 64


def _integer(text: str) -> int:
    """An integer option (argparse's type): ASCII digits, a minus sign allowed (the library then
    names the range: ``seed: expected a non-negative integer, got -1``), at most
    :data:`MAX_OPTION_DIGITS` digits.

    >>> _integer("12"), _integer("-1")
    (12, -1)
    >>> _integer("9" * 5000)
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected an integer of at most 64 digits, got one of 5000 digits
    """
    digits = text[1:] if text.startswith("-") else text
    if not digits.isascii() or not digits.isdigit():
        raise argparse.ArgumentTypeError(f"expected an integer, got {printable(text, 40)!r}")
    if len(digits) > MAX_OPTION_DIGITS:
        raise argparse.ArgumentTypeError(f"expected an integer of at most {MAX_OPTION_DIGITS} digits, got one of "
                                         f"{len(digits)} digits")
    return int(text)


def _rows(text: str) -> int:
    """``--top N``: how many rows a report lists, 0 or more (argparse's type; -1 listed all but the last)."""
    if not text.isascii() or not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a number of rows, 0 or more, got {printable(text, 40)!r}")
    return _integer(text)


def _null_draws(text):
    """``--null B`` as a number of draws (or ``"exact"``), checked by the library; a number of more
    digits than :data:`~huc_ref.significance.MAX_NULL_DRAWS` is refused as the library refuses it,
    before ``int`` reads it."""
    from .significance import MAX_NULL_DRAWS
    if text is None or text == "exact":
        return text
    if not text.isascii() or not text.isdigit():
        raise HUCError(f"--null: expected a positive integer number of draws or 'exact', got {printable(text, 40)!r}",
                       kind="option")
    digits = text.lstrip("0") or "0"  # (int() counts leading zeros against CPython's digit limit)
    if len(digits) > len(str(MAX_NULL_DRAWS)):
        raise HUCError(f"--null: expected at most {MAX_NULL_DRAWS} draws, got a number of {len(digits)} digits",
                       kind="option")
    return int(digits)


#: The figures ``--plot`` writes.
_FIGURES = (".png", ".pdf", ".svg")


def _cmd_audit(args) -> int:
    """Audit a ``huc-case/1`` document (:func:`huc_ref.engines.audit`, exactly by default), a
    sample from array files (:func:`huc_ref.engines.audit_arrays`, in float64 by default) or a
    Parquet dataset (:func:`_audit_dataset`, in float64)."""
    from .engines import audit, audit_arithmetic, audit_arrays
    from .formats import is_dataset
    arrays = args.predictions is not None
    arithmetic = _noting_deprecations(args, lambda: audit_arithmetic(args.arithmetic, args.engine,
                                                                        "float64" if arrays else "exact"))
    _writable(args.plot, "--plot", _FIGURES)  # (checked before the work)
    options = dict(arithmetic=arithmetic, accelerator=args.accelerator, max_digits=args.max_digits,
                   null_draws=_null_draws(args.null), seed=args.seed, max_null_work=args.max_null_work)
    if arrays:  # a sample from array files
        if args.tree is None or (args.labels is None and not is_dataset(args.predictions)):
            raise HUCError("--predictions: also give --labels and --tree (a JSON file with tree, labels and utilities)",
                           kind="option")
        if args.case is not None:
            raise HUCError(f"audit: give a case file ({printable(args.case, 100)!r}) or array files (--predictions), "
                           "not both", kind="option")
        tree, utilities, columns = _spec(args)
        if is_dataset(args.predictions):  # a Parquet dataset: audited partition by partition, out of core
            return _audit_dataset(args, tree, utilities, options)
        P, y, groups, _ = _arrays(args, tree, columns=columns)
        if groups is not None and "all" not in groups:  # K.1: "including c = 1", as huc fit has it (K.3)
            import numpy as np
            groups = {"all": np.ones(len(P)), **groups}
        result = audit_arrays(y, P, tree, utilities, subgroups=groups, labels=tree.labels,
                              renormalize=args.renormalize, smooth=args.smooth, **options)
        if args.plot:  # (array files are drawn too: --plot is never ignored)
            _save(lambda plot: plot.plot_audit(y, P, tree, utilities, result=result, subgroups=groups), args.plot)
        name = Path(args.predictions).name
        sys.stdout.write(dumps(result.to_json(name)) if args.json else
                         _report(_ArrayCase(name, len(P), tree.K, utilities), result, args.top))
        return 0
    if args.case is None:
        raise HUCError("audit: give a case file (huc audit CASE.json) or array files (--predictions, --labels, --tree)",
                       kind="option")
    if args.columns is not None:
        raise HUCError("--columns: applies to array files (--predictions); a huc-case/1 document names its labels",
                       kind="option")
    case = _read_case(args)
    result = audit(case.distribution, case.utilities, **options)
    if args.plot:  # (in either arithmetic)
        _save(lambda plot: plot.plot_audit(case.distribution, case.utilities, result), args.plot)
    sys.stdout.write(dumps(result.to_json(case.id)) if args.json else _report(case, result, args.top))
    return 0


def _dataset(args, tree, labels: bool = True):
    """The Parquet dataset ``--predictions`` names (a folder or a glob) and its subgroup columns
    (:func:`huc_ref.fast.scale.dataset_columns`); a dataset holds its labels and subgroups in its own
    columns, so ``--labels`` and ``--subgroups`` files are refused, naming the options that say so."""
    from .fast.scale import dataset_columns
    from .formats import parquet_dataset
    if labels and getattr(args, "labels", None) is not None:
        raise HUCError("--labels: a Parquet dataset holds its labels in a column; name it with --label-column "
                       "(default 'label')", kind="option")
    if getattr(args, "subgroups", None) is not None:
        raise HUCError("--subgroups: a Parquet dataset's subgroups are its own columns (every column that is not a "
                       "label's, the label column or the weight column)", kind="option")
    if getattr(args, "columns", None) is not None:
        raise HUCError("--columns: states the order of a headerless predictions file; a Parquet dataset's columns are "
                       "named by the labels and read by name", kind="option")
    dataset = parquet_dataset(args.predictions, "--predictions")
    subgroups = dataset_columns(dataset, tree, args.label_column if labels else None,
                                getattr(args, "weight_column", None))
    return dataset, subgroups


def _dataset_options(args) -> dict:
    """:data:`_OPTIONS` for ``huc audit`` of a Parquet dataset: the columns that hold the library's
    arguments named by their options (``y_true[650]`` is ``--label-column 'label'[650]``)."""
    return {**_OPTIONS["audit --predictions"], "y_true": f"--label-column {args.label_column!r}",
            "sample_weight": f"--weight-column {getattr(args, 'weight_column', None)!r}",
            "subgroups": "--predictions column"}


def _progress(command: str):
    """A line of progress on stderr (never on stdout, which holds the report)."""
    return lambda line: print(line.replace("huc audit", f"huc {command}", 1), file=sys.stderr, flush=True)


def _audit_dataset(args, tree, utilities, options: dict) -> int:
    """``huc audit --predictions DIR``: a Parquet dataset audited in float64 partition by partition
    (:func:`huc_ref.fast.scale.audit_partitions`), one row group at a time in memory; ``options``
    are :func:`_cmd_audit`'s, the arithmetic among them."""
    from .engines import audit_accelerator, check_limits
    from .fast.scale import audit_partitions, dataset_blocks
    if options["arithmetic"] != "float64":
        raise HUCError("--predictions: a Parquet dataset (a folder or a glob) is audited in float64, partition by "
                       "partition, out of core; give --arithmetic float64", kind="option")
    if args.plot:
        raise HUCError("--plot: draws the whole sample, held in memory; a Parquet dataset is audited partition by "
                       "partition (audit a sample of it as an array file to draw it)", kind="option")
    null = options["null_draws"]
    check_limits("float64", args.max_digits, null, args.max_null_work)
    if null == "exact":
        raise HUCError("--null exact: enumerates the label assignments of a sample held in memory; give --null B "
                       "(B resampled draws)", kind="option")
    dataset, subgroups = _dataset(args, tree)
    kappa = None
    if args.smooth is not None:
        from .distribution import check_smoothing
        kappa = float(check_smoothing(args.smooth, "--smooth"))
    groups = (["all"] if "all" not in subgroups else []) + subgroups if subgroups else []  # (the blocks' columns)
    blocks = dataset_blocks(dataset, tree, args.label_column, args.weight_column, subgroups, kappa)
    try:
        result = audit_partitions(tree, utilities, blocks, [g[2] for g in dataset.groups], groups,
                                  args.weight_column is not None,
                                  accelerator=audit_accelerator("float64", args.accelerator),
                                  renormalize=args.renormalize, null_draws=null, seed=args.seed,
                                  max_null_work=args.max_null_work, progress=_progress("audit"), spill=args.spill)
    except HUCError as err:
        raise _command_words(err, "audit --predictions", _dataset_options(args)) from None
    name = Path(args.predictions).name
    case = _ArrayCase(name, result.n, tree.K, utilities)
    case.distribution = f"Parquet dataset, n={result.n}, K={tree.K}, {len(dataset.groups)} row groups"
    sys.stdout.write(dumps(result.to_json(name)) if args.json else _report(case, result, args.top))
    return 0


#: Rows ``huc fit`` reads whole from a Parquet dataset; beyond them it asks for ``--sample N``.
FIT_ROWS = 10**6


def _dataset_sample(args, tree):
    """``huc fit``'s calibration rows from a Parquet dataset: all of them up to :data:`FIT_ROWS`,
    else ``--sample N`` rows drawn uniformly without replacement (seeded by ``--seed``), read row
    group by row group; ``(P, y, groups, w)``."""
    import numpy as np

    from .fast.scale import _read_group
    dataset, subgroups = _dataset(args, tree)
    n = dataset.rows
    size = args.sample
    if size is None:
        if n > FIT_ROWS:
            raise HUCError(f"--predictions: the dataset has {n} rows; huc fit boosts on a calibration sample held in "
                           "memory (each boosting update is a full audit of it): give --sample N, e.g. --sample "
                           f"{FIT_ROWS}", kind="too_large")
        size = n
    if not 1 <= size <= n:
        raise HUCError(f"--sample: expected 1 to {n} rows (the dataset's), got {size}", kind="option")
    chosen = np.sort(np.random.default_rng(args.seed).choice(n, size=size, replace=False))
    parts, start = [], 0
    for file, group, rows in dataset.groups:
        lo, hi = np.searchsorted(chosen, [start, start + rows])
        if hi > lo:
            P, y, w, *C = _read_group(file, group, tuple(tree.labels), args.label_column, args.weight_column,
                                      subgroups, None, False)
            take = chosen[lo:hi] - start
            y = y.names.take(y.codes) if hasattr(y, "codes") else y  # (text stored by its distinct names)
            parts.append((P[take], y[take], None if w is None else w[take], [c[take] for c in C]))
        start += rows
    P = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    w = None if args.weight_column is None else np.concatenate([p[2] for p in parts])
    groups = {name: np.concatenate([p[3][k] for p in parts]) for k, name in enumerate(subgroups)} or None
    print(f"huc fit: a sample of {size} of the dataset's {n} rows (--sample, seed {args.seed})", file=sys.stderr)
    return P, y, groups, w


def _apply_dataset(args, model) -> int:
    """``huc apply MODEL DIR -o OUT``: each row group of a Parquet dataset recalibrated on its own
    (a recalibration maps each row by itself) and written to ``OUT/part-NNNNN.parquet`` with every
    column of the input, the labels' columns replaced; in Dask tasks, one row group in memory each."""
    import dask

    from .fast.scale import _Progress
    out = Path(args.output)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise HUCError(f"-o: {printable(str(out), 200)!r} exists; a dataset's recalibrated rows go to a new (or empty) "
                       "folder", kind="file")
    dataset, subgroups = _dataset(args, model.tree, labels=False)
    missing = [g for g in model.subgroups_ if g != "all" and g not in subgroups]
    if missing:
        raise HUCError(f"--predictions: the model is fitted with subgroup {printable(missing[0], 80)!r}; the dataset "
                       "needs a column of that name", kind="missing_field")
    out.mkdir(exist_ok=True)
    tasks = [dask.delayed(_apply_group)(model, file, group, str(out / f"part-{k:05d}.parquet"))
             for k, (file, group, _) in enumerate(dataset.groups)]
    with _Progress(_progress("apply"))(f"huc apply: {len(tasks)} row groups"):
        dask.compute(*tasks)
    print(f"huc apply: {dataset.rows} rows recalibrated by {model.n_updates_} rules; wrote {len(tasks)} files to "
          f"{printable(str(out), 200)}", file=sys.stderr)
    return 0


def _apply_group(model, file: str, group: int, target: str) -> None:
    """One row group recalibrated and written (:func:`_apply_dataset`)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .fast.scale import _Named
    from .tree import label_names
    table = pq.ParquetFile(file).read_row_group(group)
    labels = list(model.tree.labels)
    P = np.column_stack([table.column(name).to_numpy() for name in labels]) if table.num_rows else \
        np.zeros((0, len(labels)))
    groups = {g: table.column(g).to_numpy(zero_copy_only=False) for g in model.subgroups_ if g != "all"} or None
    if table.num_rows:  # (the columns named, so read by name; the answer's columns are classes_')
        named = _Named(P, labels)
        out = model.predict_proba(named, subgroups=groups) if groups else model.predict_proba(named)
        classes = label_names(model.classes_)
        for name in labels:
            table = table.set_column(table.schema.get_field_index(name), name, pa.array(out[:, classes.index(name)]))
    pq.write_table(table, target)


#: The remedies the library's messages name (Python arguments: :data:`huc_ref.distribution.RENORMALIZE_REMEDY`,
#: :data:`~huc_ref.distribution.SMOOTH_REMEDY`) in the words of the options that are the command line's.
_RENORMALIZE = "give --renormalize to divide it by its sum"
_SMOOTH = "give --smooth KAPPA (K.1's kappa_init, each prediction mixed with the uniform law: (1-k) p + k/K)"


#: The library's arguments each command's options stand for, the one table of the command line's
#: words: an error naming one of them (its place ``y_prob[4]``, a value ``null_draws='exact'``, a
#: remedy ``pass renormalize=True``) names the option instead (``--predictions[4]``, ``--null
#: exact``, ``give --renormalize``).  ``huc audit`` of array files has the array arguments beside
#: those of a case (whose document's own places, ``subgroups[0]``, are its fields').
_OPTIONS = {
    "audit": {"null_draws": "--null", "seed": "--seed", "max_digits": "--max-digits",
              "max_null_work": "--max-null-work", "arithmetic": "--arithmetic", "engine": "--engine",
              "accelerator": "--accelerator", "renormalize": "--renormalize", "smooth": "--smooth"},
    "fit": {"y_prob": "--predictions", "y_true": "--labels", "subgroups": "--subgroups",
            "validation[0]": "--val-predictions", "validation[1]": "--val-labels", "validation[2]": "--val-subgroups",
            "null_draws": "--null", "seed": "--seed", "max_null_work": "--max-null-work", "epsilon": "--epsilon",
            "max_passes": "--max-passes", "arithmetic": "--arithmetic", "engine": "--engine", "method": "--method",
            "select": "--select", "initial": "--initial", "validation_fraction": "--validation-fraction",
            "prefix_guard": "--prefix-guard"},
    "boost": {"epsilon": "--epsilon", "max_updates": "--max-updates", "max_passes": "--max-passes",
              "digits": "--digits", "step": "--step", "arithmetic": "--arithmetic", "engine": "--engine",
              "method": "--method", "select": "--select", "renormalize": "--renormalize", "smooth": "--smooth"},
    "apply": {"y_prob": "predictions", "subgroups": "--subgroups"},
}
_OPTIONS["audit --predictions"] = {"y_prob": "--predictions", "y_true": "--labels", "subgroups": "--subgroups",
                                   **_OPTIONS["audit"]}


def _words(args) -> str | None:
    """The key of :data:`_OPTIONS` whose words ``args``' command speaks."""
    command = getattr(args, "command", None)
    return "audit --predictions" if command == "audit" and args.predictions is not None else command


def _translate(words: str, command, options: dict | None = None) -> str:
    """``words`` (a library message) in the words of ``huc COMMAND`` (:data:`_OPTIONS`): each
    ``argument=value`` as ``--option value`` (``=True``: the flag alone; ``pass`` as ``give``), and
    each argument named as a place (``argument[``, ``argument:``) or, for a name no prose uses
    (``y_prob``, ``null_draws``), anywhere, as its option; ``options``, where given, is the table
    in place of the command's (a dataset's columns: :func:`_dataset_options`).

    >>> _translate("y_prob[4]: sums to 1.5; pass renormalize=True, or null_draws='exact'", "audit --predictions")
    '--predictions[4]: sums to 1.5; give --renormalize, or --null exact'
    """
    import re
    options = _OPTIONS.get(command, {}) if options is None else options
    if not options:
        return words
    names = "|".join(re.escape(name) for name in sorted(options, key=len, reverse=True))

    def value(m):
        option, given = options[m.group(2)], m.group(3).strip("'")
        return ("give " if m.group(1) else "") + (option if given == "True" else f"{option} {given}")
    words = re.sub(rf"(\bpass )?(?<![\w-])({names})=('[^']*'|[^\s,;:)]+)", value, words)

    def place(m):
        name = m.group(1)
        return options[name] if "_" in name or "[" in name or m.group(2) else name
    return re.sub(rf"(?<![\w'-])({names})(?![\w=])(?=(\[|: )?)", place, words)


def _command_words(err: HUCError, command, options: dict | None = None) -> HUCError:
    """``err`` in the words of ``huc COMMAND`` (:func:`_translate`), and the remedies the library
    names as its arguments (``renormalize=True``, ``smooth=kappa``:
    :func:`huc_ref.distribution.prepare_prediction`) as ``huc audit``'s and ``huc boost``'s
    options, or left out where the command has none (a vector's case is mended in its file).

    >>> from huc_ref.distribution import prepare_prediction
    >>> try:
    ...     prepare_prediction(["1/2", "1/4"], "atoms[0].p")
    ... except HUCError as err:
    ...     print(_command_words(err, "audit"), "|", _command_words(err, "vectors"))
    atoms[0].p: sums to 3/4, not 1; give --renormalize to divide it by its sum | atoms[0].p: sums to 3/4, not 1
    >>> print(_command_words(HUCError("null_draws: expected a positive integer, got 0"), "fit"))
    --null: expected a positive integer, got 0
    """
    from .distribution import RENORMALIZE_REMEDY, SMOOTH_REMEDY
    from .fast.audit import SMOOTH_ROWS
    words = str(err)
    mends = command in ("audit", "audit --predictions", "boost")  # (the commands with --renormalize and --smooth)
    for remedy, option in ((RENORMALIZE_REMEDY, _RENORMALIZE), (SMOOTH_REMEDY, _SMOOTH), (SMOOTH_ROWS, _SMOOTH)):
        words = words.replace(remedy, option) if mends else words.replace(f"; {remedy}", "").replace(f": {remedy}", "")
    words = _translate(words, command, options)
    path = err.path if err.path is None else _translate(err.path + ": ", command, options)[:-2]
    return err if words == str(err) else HUCError(words, kind=err.kind, path=path)


def _read_case(args):
    """The ``huc-case/1`` document of ``huc audit CASE`` and ``huc boost CASE`` (with ``--renormalize``
    and ``--smooth``); an array file given in its place, and a prediction that ``--renormalize`` or
    ``--smooth`` mends, are errors naming the options (:func:`_command_words`)."""
    from .formats import ARRAY_SUFFIXES
    path = Path(args.case)
    if path.suffix.lower() in ARRAY_SUFFIXES:
        fix = ("give it as --predictions, with --labels FILE and --tree SPEC.json (the tree, labels and utilities)"
               if args.command == "audit" else "huc fit boosts on array files (--tree, --predictions, --labels)")
        raise HUCError(f"{args.command}: {printable(path.name, 100)!r} is an array file, not a huc-case/1 document; "
                       f"{fix}", kind="file")
    return read_case(path, renormalize=args.renormalize, smooth=args.smooth)


def _writable(path, option: str, suffixes: tuple = ()) -> None:
    """A file the command will write, checked before the work (a fit of minutes then failed on
    ``-o missing/model.json``): its suffix one of ``suffixes`` (when given), its folder an existing
    folder, the path not a folder, and a file there (or a new one) open for writing; None:
    nothing to write.

    >>> _writable("model.json", "-o")
    >>> _writable("no/such/folder/model.json", "-o")
    Traceback (most recent call last):
    ...
    huc_ref.errors.HUCError: -o: cannot write 'no/such/folder/model.json': the folder 'no/such/folder' does not exist
    """
    import os
    if path is None:
        return
    target, shown = Path(path), printable(str(path), 200)
    if suffixes and target.suffix.lower() not in suffixes:
        raise HUCError(f"{option}: {shown!r} must end in {', '.join(suffixes[:-1])} or {suffixes[-1]}", kind="file")
    folder = target.parent
    if not folder.is_dir():
        raise HUCError(f"{option}: cannot write {shown!r}: the folder {printable(str(folder), 200)!r} does not exist",
                       kind="file")
    if target.is_dir():
        raise HUCError(f"{option}: cannot write {shown!r}: it is a folder; give the path of a file in it", kind="file")
    if target.exists() and not target.is_file():  # (a device or a pipe: written as it is, at the end)
        return
    existed = target.exists()
    try:  # opened for appending, which changes nothing in a file there, to learn that it can be written
        with open(target, "ab"):
            pass
    except OSError as err:
        raise HUCError(f"{option}: cannot write {shown!r}: {err.strerror}", kind="file") from None
    if not existed:
        os.unlink(target)  # (nothing is left behind if the work fails)


def _save(draw, path: str) -> None:
    """Draw a figure with :mod:`huc_ref.plot` and write it to ``path`` (its suffix: png, pdf, svg)."""
    from . import plot
    target = Path(path)  # (its folder and suffix checked before the work: _writable)
    fig = draw(plot)
    try:
        fig.savefig(target, dpi=110, bbox_inches="tight")
    except OSError as err:
        raise HUCError(f"--plot: cannot write {printable(path, 200)!r}: {err.strerror}", kind="file") from None
    finally:  # (pyplot keeps every figure it made open: main() called again and again in one process
        from matplotlib import pyplot  # grew by a figure a call, warning from the 21st)
        pyplot.close(fig)


def _cmd_fit(args) -> int:
    """Fit HUC-Boost (optionally after a scaling) on calibration arrays; write huc-model/1."""
    import warnings

    import numpy as np

    from .calibration import SCALINGS, HUCBoost, NoUpdateKeptWarning, NoValidationWarning
    tree, utilities, columns = _spec(args)
    _writable(args.output, "-o")
    null = _null_draws(args.null)
    from .formats import is_dataset
    weights = names = None
    if is_dataset(args.predictions):  # a sample of a Parquet dataset, held in memory (each update is a full audit)
        P, y, groups, weights = _dataset_sample(args, tree)
        if groups is not None and "all" not in groups:
            groups = {"all": np.ones(len(P)), **groups}
    elif args.sample is not None:
        raise HUCError("--sample: draws calibration rows from a Parquet dataset (--predictions DIR or a glob)",
                       kind="option")
    else:
        P, y, groups, names = _arrays(args, tree, columns=columns)
    validation = None
    if args.val_predictions is not None:
        if args.val_labels is None:
            raise HUCError("--val-predictions: also give --val-labels", kind="option")
        if args.no_validation:
            raise HUCError("--no-validation: the validation rows given (--val-predictions) choose the prefix; give "
                           "one or the other", kind="option")
        Pv, yv, gv, _ = _arrays(args, tree, "val_", columns)
        validation = (Pv, yv, gv) if gv is not None else (Pv, yv)
    elif args.no_validation:
        validation = False
    initial = None if args.initial == "none" else SCALINGS[args.initial]()
    model = HUCBoost(tree, utilities, method=args.method, epsilon=args.epsilon, select=args.select,
                     max_passes=args.max_passes, arithmetic=args.arithmetic, engine=args.engine, initial=initial,
                     null_draws=null, seed=args.seed, max_null_work=args.max_null_work,
                     validation_fraction=args.validation_fraction, prefix_guard=args.prefix_guard,
                     verbose=sys.stderr.isatty())  # (bars: a terminal's)
    # the inputs and options the fit checks, checked before its banner (one line on stderr for a bad one)
    inputs = _noting_deprecations(args, lambda: model._fit_inputs(P, y, subgroups=groups, validation=validation,
                                                                  sample_weight=weights))
    held = inputs["held"]  # (the rows held out to choose the prefix: not boosted on)
    more = "" if held is None else f"; {len(held)} more held out to choose the prefix"
    print(f"huc fit: boosting on {len(inputs['P'])} rows ({args.method}, {model.arithmetic_}{more})...",
          file=sys.stderr, flush=True)
    with warnings.catch_warnings(record=True) as caught:  # (--no-validation's note: one line, not Python's)
        warnings.simplefilter("always", NoValidationWarning)
        warnings.simplefilter("always", NoUpdateKeptWarning)
        model._fit(inputs)
    if names is not None:  # (P was put in the tree's order; the file's columns, in order, are classes_)
        model.classes_ = np.asarray(names)
    for note in caught:
        if issubclass(note.category, (NoValidationWarning, NoUpdateKeptWarning)):
            print(f"huc fit: warning: {_translate(str(note.message), 'fit')}", file=sys.stderr)
        elif not issubclass(note.category, DeprecationWarning):  # (said once above, in the options' words)
            warnings.warn_explicit(note.message, note.category, note.filename, note.lineno)
    model.save(Path(args.output))
    chosen = "" if model.held_out_ is None else f" on {len(model.held_out_)} held-out rows"
    print(f"huc fit: {model.n_updates_run_} updates run ({model.stopped_}), {model.n_updates_} kept{chosen}; "
          f"wrote {printable(args.output, 200)}", file=sys.stderr)
    report = model.report_
    for when in ("before", "after"):
        r = report[when]
        p = "" if r.significance is None else (f" (p = {_p_text(r.significance.uc)}), HUC = {r.huc.sup:.6g} "
                                                f"(p = {_p_text(r.significance.huc)})")
        line = f"UC = {r.uc.sup:.6g}{p}" if p else f"UC = {r.uc.sup:.6g}, HUC = {r.huc.sup:.6g}"
        print(f"huc fit: {report['data']} data {when}: {line}", file=sys.stderr)
    if null is not None and report["data"] == "calibration":
        print("huc fit: (the 'after' p-values are on the rows boosted on, so optimistic; --val-predictions and "
              "--val-labels give held-out ones)", file=sys.stderr)
    return 0


def _cmd_apply(args) -> int:
    """Apply a saved huc-model/1 to new predictions; write them as .npy or .csv, the columns in the
    input's order (a CSV with a header naming them)."""
    from .calibration import load_model
    from .formats import is_dataset, load_json, read_document
    from .tree import label_names
    dataset = is_dataset(args.predictions)
    if not dataset:  # (a dataset's -o is a new folder: _apply_dataset checks it)
        _writable(args.output, "-o", (".npy", ".csv"))
    doc = load_json(read_document(Path(args.model), "model"), floats=True)
    model = load_model(doc)
    if dataset:  # a Parquet dataset: row group by row group, to a folder of Parquet files
        return _apply_dataset(args, model)
    columns = _stated_columns(args.columns, model.tree)
    classes = label_names(model.classes_)  # (the columns' order at fit: a headerless file's, unless --columns)
    P, names = _predictions(args.predictions, "predictions", model.tree,
                            classes if columns is None and "classes" in doc else columns, _STATE_COLUMNS_APPLY)
    groups = _subgroup_file(args.subgroups, len(P))
    _need_subgroups(model.subgroups_, groups, "--subgroups")
    tree_to_classes = [model.tree.label_index(name) for name in classes]  # (P is in the tree's order)
    out = model.predict_proba(P[:, tree_to_classes], subgroups=groups)[:, [classes.index(name) for name in names]]
    target = Path(args.output)
    _write_rows(target, out, names)
    print(f"huc apply: {len(out)} rows recalibrated by {model.n_updates_} rules; wrote {printable(str(target), 200)}",
          file=sys.stderr)
    return 0


def _write_rows(target: Path, rows, labels) -> None:
    """Recalibrated predictions written exactly to ``target`` (``numpy.save`` given a path adds
    ``.npy`` to one ending in ``.NPY``): a ``.npy`` file, or a ``.csv`` file written by the csv
    module with a header row of the labels (:func:`huc_ref.formats.csv_cell`: a label a
    spreadsheet would run as a formula is written after an apostrophe, and read back as the label)
    and each float as its shortest exact text, so :func:`huc_ref.formats.read_columns` reads back
    the same labels and the same floats."""
    import csv

    import numpy as np

    from .formats import csv_cell
    if target.suffix.lower() == ".npy":
        with open(target, "wb") as f:
            np.save(f, rows)
        return
    with open(target, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow([csv_cell(label) for label in labels])
        writer.writerows(rows.tolist())  # (a float's str is the shortest text that reads back as it)


#: Notes on deprecated options, said on stderr once the command has run (a refused command says
#: its one error line alone).
_NOTES: list = []


def _noting_deprecations(args, resolve):
    """``resolve()`` (the numbers of a run: :func:`huc_ref.engines.audit_arithmetic`,
    :func:`~huc_ref.engines.boost_arithmetic`), each deprecated spelling it was given noted in the
    command line's words (``--engine fast`` for ``engine='fast'``, :func:`_translate`), for
    :func:`main` to say once the command has run."""
    import warnings
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", DeprecationWarning)
        found = resolve()
    for w in seen:
        if issubclass(w.category, DeprecationWarning):
            note = f"huc {args.command}: " + _translate(str(w.message), _words(args))
            if note not in _NOTES:
                _NOTES.append(note)
    return found


def _cmd_boost(args) -> int:
    from .engines import boost, boost_arithmetic
    case = _read_case(args)
    arithmetic = _noting_deprecations(args, lambda: boost_arithmetic(args.arithmetic, args.engine))
    if arithmetic == "float64" and args.digits is not None:
        raise HUCError("--digits: applies to --arithmetic exact or certified (float64 has no working precision)",
                       kind="option")
    if args.max_passes is not None and args.select != "passes":
        raise HUCError("--max-passes: applies to --select passes (K.1's budget of passes); greedy and drain stop at "
                       "--max-updates", kind="option")
    import time
    started, last = time.monotonic(), [time.monotonic()]

    def progress(t, record):  # on a terminal's stderr, every 2 seconds once a run has taken 2 seconds
        if not sys.stderr.isatty():
            return
        now = time.monotonic()
        if now - started >= 2 and now - last[0] >= 2:
            last[0] = now
            print(f"huc boost: {t} updates, log loss {record['log_loss_after']}", file=sys.stderr, flush=True)
    result = boost(case.distribution, case.utilities, arithmetic=arithmetic, method=args.method,
                   epsilon=args.epsilon, max_updates=args.max_updates, step=args.step, select=args.select,
                   max_passes=100 if args.max_passes is None else args.max_passes, digits=args.digits,
                   progress=progress)
    if args.json:
        sys.stdout.write(dumps(result.to_json()))
        return 0
    thm = result.theorem_3_5
    lines = [f"{args.method.upper()}-Boost on {_n(case.id)}: {len(result.updates)} updates, "
             f"stopped by {result.stopped}",
             f"  log loss {result.initial['log_loss']} -> {result.final['log_loss']}",
             f"  final UC = {result.final['uc']}, HUC = {result.final['huc']} "
             f"(epsilon {fraction_text(result.epsilon)})",
             f"  Theorem 3.5 ({thm['step']} step, {'certified' if thm['certified'] else 'float, uncertified'}): "
             + ("holds" if thm["holds"] else "does not apply" if not thm["applies"] else "FAILS")
             + f"; update bound {result.bound_updates}"]
    for k, u in enumerate(result.updates[: args.top]):
        lines.append(f"  {k + 1:>4}  {_n(u['subgroup'], 10)} {_n(u['utility'], 10)} {_n(u['node'] or '(all)', 10)} "
                     f"Gamma {float(u['gamma']):+.6f}  Lambda {float(u['lambda']):.6f}  "
                     f"loss {float(u['log_loss_after']):.10f}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _cmd_vectors(args) -> int:
    from . import conformance, vectors
    source = Path(args.vectors) if args.vectors else None
    if args.action == "generate":
        for path in vectors.write_vector_files(Path(args.dir)):
            print(printable(str(path), 200))
        return 0
    if args.action == "export":
        print(f"wrote {vectors.export_cases(Path(args.dir), source)} case files to {printable(args.dir, 200)}")
        return 0
    if args.action == "answer":
        print(f"wrote {vectors.answer_cases(Path(args.dir), source)} answers to {printable(args.dir, 200)}")
        return 0
    report, failures = conformance.check_answers(Path(args.dir), source)
    for vid, reason in report:
        print(f"PASS {_n(vid)}" if reason is None else f"FAIL {_n(vid)}: {printable(reason, 500)}")
    print(f"{len(report) - failures} passed, {failures} failed")
    return 1 if failures else 0


def _cmd_demo(args) -> int:
    from .demo import TREE, walkthrough
    _writable(args.plot, "--plot", _FIGURES)
    vectors = [None if v is None else [x.strip() for x in v.split(",")] for v in (args.p, args.eta, args.utility)]
    text, moments = walkthrough(*vectors, names=("--p", "--eta", "--utility"))
    print(text)
    if args.plot:
        _save(lambda plot: plot.plot_tree(TREE, moments, title="eq. (5): D_top, D_L, D_R on the four-leaf tree",
                                          value_label="contribution D_t (exact)"), args.plot)
        print(f"figure: {printable(args.plot, 200)}")
    return 0


def _cmd_verify(args) -> int:
    from proofs_check.runner import main as verify

    return verify((["--json"] if args.json else []) + (["--only", args.only] if args.only else []) +
                  (["--jobs", str(args.jobs)] if args.jobs is not None else []))


def _case_arguments(parser, json_help, optional: bool = False):
    """The arguments every command that reads a case file shares."""
    parser.add_argument("case", help="path of a huc-case/1 JSON document", nargs="?" if optional else None)
    parser.add_argument("--json", action="store_true", help=json_help)
    parser.add_argument("--renormalize", action="store_true", help="divide each prediction by its sum, exactly")
    parser.add_argument("--smooth", metavar="KAPPA", help="mix predictions with the uniform law: (1-k) p + k/K")


def _array_arguments(parser, validation: bool = False):
    """A sample given as array files: predictions and labels (.npy, .csv or .parquet), the tree
    and utilities (JSON), subgroups (.csv with a header row of names)."""
    parser.add_argument("--tree", metavar="SPEC.json",
                        help="JSON with tree, labels (the label order) and utilities, and optionally columns: the "
                             "columns of headerless predictions files in order (huc_ref/data/schemas/"
                             "huc-spec.schema.json)")
    parser.add_argument("--predictions", metavar="FILE",
                        help="n x K probabilities (.npy, .csv or .parquet). A header (or Parquet column names) naming "
                             "the labels is read by name, in any order; a file without one (.npy, a CSV whose first "
                             "row is numbers) needs its column order stated (--columns, or columns in the spec) "
                             "unless the labels are in the sorted order of a classifier's classes_")
    _columns_argument(parser)
    parser.add_argument("--labels", metavar="FILE", help="n labels: names or column indices (.npy, .csv, .parquet)")
    parser.add_argument("--subgroups", metavar="FILE.csv",
                        help="subgroup values, one named column each (the whole population, 'all', is added: K.1)")
    _dataset_arguments(parser)
    if validation:
        parser.add_argument("--val-predictions", metavar="FILE", help="validation predictions (K.1's prefix)")
        parser.add_argument("--val-labels", metavar="FILE", help="validation labels")
        parser.add_argument("--val-subgroups", metavar="FILE.csv", help="validation subgroup values")


def _dataset_arguments(parser):
    """A Parquet dataset's columns (``--predictions DIR`` or a glob): one per tree label, the label
    column, a weight column; every other column is a subgroup."""
    parser.add_argument("--label-column", default="label", metavar="NAME",
                        help="a Parquet dataset (--predictions DIR or 'GLOB'): its column of labels (default 'label'); "
                             "one column per tree label holds the predictions, every other column is a subgroup")
    parser.add_argument("--weight-column", metavar="NAME", help="a Parquet dataset: its column of sample weights")


def _columns_argument(parser) -> None:
    """``--columns``: the column order of headerless predictions files (:func:`_predictions`)."""
    parser.add_argument("--columns", metavar="NAME,NAME,...",
                        help="the columns of a predictions file without a header, in the file's order (a "
                             "classifier's classes_, e.g. --columns 0,1,2 or --columns cat,dog); replaces the spec's "
                             "columns; a file with a header is read by its header")


def _max_null_work_help() -> str:
    from .significance import AUDIT_ATOMS, MAX_NULL_WORK
    return (f"the budget of --null's audits: draws x (n + N) (K |U| + rows), N = {AUDIT_ATOMS['exact']} in "
            f"exact arithmetic, {AUDIT_ATOMS['fast']} in float64 (default {MAX_NULL_WORK['exact']:.0e} and "
            f"{MAX_NULL_WORK['fast']:.0e}: about a minute)")


def _guard(text: str):
    """``--prefix-guard Z``: a number of standard errors, or ``none`` (argparse's type; the library
    checks the number's range)."""
    if text.lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of standard errors or 'none'; got "
                                         f"{printable(text, 40)!r}") from None


def _positive(text: str) -> int:
    """``--jobs N``: a whole number at least 1 (argparse's type)."""
    if not text.isascii() or not text.isdigit() or not text.strip("0"):
        raise argparse.ArgumentTypeError("expected a whole number of processes, at least 1; "
                                         f"got {printable(text, 40)!r}")
    return _integer(text)


def _examples(*lines: str) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def _command(sub, name: str, summary: str, description: str, *examples: str):
    """One subcommand: its one-line summary, its description and its examples."""
    return sub.add_parser(name, help=summary, description=description, epilog=_examples(*examples),
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``huc`` (every subcommand with its help and an example).

    >>> sorted(build_parser()._subparsers._group_actions[0].choices)
    ['apply', 'audit', 'boost', 'demo', 'fit', 'vectors', 'verify']
    """
    from . import __version__
    from .engines import ACCELERATORS, ARITHMETICS, AUDIT_ARITHMETICS, ENGINES
    from .recalibration import KINDS as SCALINGS
    from .validation import METHODS, SELECTIONS
    parser = _Parser(prog="huc", formatter_class=argparse.RawDescriptionHelpFormatter,
                     description="Exact Utility Calibration (UC) and Hierarchical Utility Calibration (HUC): the "
                                 "reference implementation of Futami, Huang and Takeuchi.",
                     epilog=_examples("huc verify                     # check the paper's claims",
                                      "huc audit case.json            # UC, HUC and witnesses of a huc-case/1 file",
                                      "huc demo                       # App. D.1's cancellation",
                                      "huc COMMAND --help             # the options of a command"))
    parser.add_argument("--version", action="version", version=f"huc-ref {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    p = _command(sub, "audit", "UC and HUC with witnesses: of a huc-case/1 file (exactly) or array files (float64)",
                 "Audit a huc-case/1 document exactly (or in float64 with --arithmetic float64), or a sample "
                 "from array files in float64 (or exactly with --arithmetic exact): UC, HUC, every candidate row "
                 "with its witness interval.",
                 "huc audit examples/cases/four_leaf_cancellation.json",
                                        "huc audit case.json --json > result.json",
                                        "huc audit case.json --arithmetic float64 --json",
                                        "huc audit case.json --plot audit.png",
                                        "huc audit --tree spec.json --predictions p.npy --labels y.npy",
                                        "huc audit --tree spec.json --predictions p.npy --labels y.npy --columns "
                                        "0,1,2",
                                        "huc audit --tree spec.json --predictions logs/   # a folder of Parquet files")
    _case_arguments(p, "print the huc-result/1 document (on bad input: a huc-error/1 document)", optional=True)
    _array_arguments(p)
    p.add_argument("--top", type=_rows, default=10, metavar="N", help="violations listed in the report (default 10)")
    p.add_argument("--arithmetic", choices=AUDIT_ARITHMETICS, default=None,
                   help="exact: Fractions, the reference (the default for a huc-case/1 document; on array files it "
                        "reads each float's exact value, much slower); float64: numpy, each decision certified or "
                        "taken exactly (the default for array files; reports print decimals)")
    p.add_argument("--engine", choices=ENGINES, default=None,
                   help="deprecated: --arithmetic exact (exact) or float64 (fast)")
    p.add_argument("--max-digits", type=_integer, default=None, metavar="N",
                   help=f"the exact audit's cost limit: the digits of all inputs together "
                        f"(default {MAX_EXACT_DIGITS})")
    p.add_argument("--plot", metavar="FILE", help="also draw the audit (tree coloured by node moments, witness "
                                                  "intervals over the scores) to FILE (.png, .pdf or .svg)")
    p.add_argument("--null", metavar="B", help="p-values under the null of calibration (labels redrawn from the "
                                               "predictions): B seeded redraws, or 'exact' (every label assignment, "
                                               "on the predictions' exact values: every entry positive; audited "
                                               "in the chosen arithmetic)")
    p.add_argument("--seed", type=_integer, default=0, metavar="S", help="the seed of --null's redraws (default 0)")
    p.add_argument("--max-null-work", type=_integer, default=None, metavar="W", help=_max_null_work_help())
    p.add_argument("--accelerator", choices=[a for names in ACCELERATORS.values() for a in names], default=None,
                   help="the library computing the numbers: for float64 numpy (default, the reference) or numba "
                        "(the compiled kernels of the numba extra; much faster null draws); for exact fraction "
                        "(default) or gmpy2 (GMP's rationals)")
    p.add_argument("--spill", metavar="DIR", help="a Parquet dataset: the folder for its sorted rows while it is "
                                                  "audited (default: the system's temporary folder; about 40 bytes "
                                                  "a row per utility)")
    p.set_defaults(run=_cmd_audit)
    b = _command(sub, "boost", "HUC-Boost or UC-Boost, certified by default (huc-boost/1)",
                 "Run HUC-Boost (Algorithm 1/3) or UC-Boost on a huc-case/1 document; Theorem 3.5 "
                                   "is checked on the run.",
                 "huc boost examples/cases/four_leaf_cancellation.json",
                                        "huc boost case.json --method uc --epsilon 1/50 --json",
                                        "huc boost case.json --step fixed:1/20 --select passes")
    _case_arguments(b, "print the huc-boost/1 document")
    b.add_argument("--method", choices=METHODS, default="huc",
                   help="huc: one internal node per update (default); uc: all leaf logits at once")
    b.add_argument("--epsilon", default="1/100", help="stopping tolerance (exact number, default 1/100)")
    b.add_argument("--max-updates", type=_integer, default=1000, metavar="N", help="update cap (default 1000)")
    b.add_argument("--step", default="adaptive",
                   help="'adaptive' (alpha = Gamma / Lambda, default) or 'fixed:A' (alpha = sign(Gamma) A)")
    b.add_argument("--select", choices=SELECTIONS, default="greedy",
                   help="greedy: the largest violation (default); passes: K.1's passes over the branching nodes, "
                        "each audited once and updated at most once per pass; drain: update a node until it is "
                        "clean, then the next")
    b.add_argument("--max-passes", type=_integer, default=None, metavar="N",
                   help="with --select passes: the budget, N passes of node audits (default 100, as in K.1)")
    b.add_argument("--digits", type=_integer, default=None, metavar="D",
                   help="working precision of --arithmetic exact (and of certified's last resort) in significant "
                        "digits (default 30)")
    b.add_argument("--arithmetic", choices=(*ARITHMETICS, "float"), default=None,
                   help="exact: the certified engine (default); certified: float64 with error bounds, the same "
                        "decisions and certificates, faster (python-flint); float64: uncertified; float: the "
                        "deprecated name of float64")
    b.add_argument("--engine", choices=ENGINES, default=None,
                   help="deprecated: --arithmetic exact, or float64 (fast), or certified (fast with "
                        "--arithmetic certified)")
    b.add_argument("--top", type=_rows, default=20, metavar="N", help="updates listed in the report (default 20)")
    b.set_defaults(run=_cmd_boost)
    f = _command(sub, "fit", "fit HUC-Boost on calibration arrays and save the model (huc-model/1)",
                 "Fit HUC-Boost (K.1's passes, epsilon 0.001) on a classifier's calibration predictions, "
                 "optionally after temperature, vector or Dirichlet scaling; validation arrays (or, without "
                 "them, a held-out part of the calibration rows) choose the update prefix (K.1).",
                 "huc fit --tree spec.json --predictions cal.npy --labels cal_y.npy "
                 "--val-predictions val.npy --val-labels val_y.npy --initial temperature -o model.json",
                 "huc fit --tree spec.json --predictions logs/ --sample 1000000 -o model.json")
    _array_arguments(f, validation=True)
    f.add_argument("-o", "--output", required=True, metavar="MODEL.json", help="where to write the model")
    f.add_argument("--method", choices=METHODS, default="huc", help="HUC-Boost (default) or UC-Boost")
    f.add_argument("--epsilon", default="0.001", help="violations above this are corrected (default 0.001, K.1)")
    f.add_argument("--select", choices=SELECTIONS, default="passes",
                   help="passes: K.1's passes over the branching nodes (default)")
    f.add_argument("--max-passes", type=_integer, default=100, metavar="N", help="K.1's budget (default 100 passes)")
    f.add_argument("--initial", choices=("none", *SCALINGS), default="none",
                   help="a scaling fitted first (the two-stage methods, H.2)")
    f.add_argument("--arithmetic", choices=ARITHMETICS, default=None,
                   help="float64 (default), certified (every decision certified; python-flint) or exact (the "
                        "certified engine)")
    f.add_argument("--engine", choices=ENGINES, default=None,
                   help="deprecated: --arithmetic float64 (fast), or certified (exact)")
    f.add_argument("--null", metavar="B", help="report p-values of UC and HUC before and after, from B redraws of "
                                               "the labels under the null of calibration")
    f.add_argument("--seed", type=_integer, default=0, metavar="S",
                   help="the seed of the held-out split, of --null's redraws and of --sample's rows (default 0)")
    f.add_argument("--sample", type=_integer, metavar="N",
                   help=f"a Parquet dataset: boost on N of its rows drawn at random (a dataset of more than "
                        f"{FIT_ROWS} rows needs it: every boosting update is a full audit of the rows held in memory)")
    f.add_argument("--max-null-work", type=_integer, default=None, metavar="W", help=_max_null_work_help())
    f.add_argument("--validation-fraction", type=float, default=0.3, metavar="F",
                   help="without --val-predictions, the share of the rows held out (stratified) to choose the update "
                        "prefix (K.1; default 0.3)")
    f.add_argument("--prefix-guard", type=_guard, default=2.0, metavar="Z",
                   help="a prefix of updates is kept only where it lowers the held-out log loss by Z standard "
                        "errors (default 2); 'none': K.1's smallest validation error alone")
    f.add_argument("--no-validation", action="store_true",
                   help="hold nothing out: every update run is kept (with a warning; small samples overfit)")
    f.set_defaults(run=_cmd_fit)
    a = _command(sub, "apply", "apply a saved model to new predictions",
                 "Recalibrate new predictions (no labels needed) with a huc-model/1 file.",
                 "huc apply model.json test.npy -o calibrated.npy",
                 "huc apply model.json logs/ -o calibrated/")
    a.add_argument("model", help="a huc-model/1 file (huc fit -o)")
    a.add_argument("predictions", help="n x K probabilities (.npy, .csv or .parquet): a header naming the labels is "
                                       "read by name; without one, --columns states the order unless the labels are "
                                       "in the sorted order of a classifier's classes_; or a Parquet dataset (a folder "
                                       "or 'GLOB': one column per label, named by it; subgroups by name)")
    a.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="where to write them (.npy or .csv), the columns in the input's order (a CSV with a header "
                        "naming them); for a dataset, a new folder of Parquet files")
    _columns_argument(a)
    a.add_argument("--subgroups", metavar="FILE.csv", help="subgroup values, the names the model was fitted with")
    a.set_defaults(run=_cmd_apply)
    g = _command(sub, "vectors", "golden vectors: export cases, check another implementation's answers",
                 "The golden vectors (huc-vectors/1) for other implementations.",
                 "huc vectors export cases/       # one huc-case/1 file per vector",
                                        "huc vectors check answers/      # compare answers/<id>.json",
                                        "huc vectors answer mine/        # this implementation's answers")
    g.add_argument("action", choices=["export", "check", "answer", "generate"],
                   help="export: write each vector's input to DIR; check: compare the answers in DIR; "
                        "answer: write this implementation's answers to DIR; generate: rebuild the vector files")
    g.add_argument("dir", help="the directory to write to or read answers from")
    g.add_argument("--vectors", metavar="SRC",
                   help="the folder of huc-vectors/1 files (default: the ones shipped in huc_ref/data/vectors)")
    g.set_defaults(run=_cmd_vectors)
    d = _command(sub, "demo", "the four-leaf cancellation walk-through (App. D.1), for a classroom",
                 "App. D.1 exactly, or the four-leaf case you choose: branch probabilities, subtree "
                                   "means, eq. (5)'s D_top, D_L, D_R, UC and HUC.",
                 "huc demo",
                                        "huc demo --eta 1/20,9/20,1/5,3/10 --utility 0,0,0,1     # App. D.3",
                                        "huc demo --p 1/2,1/6,1/6,1/6 --plot d1.png")
    d.add_argument("--p", metavar="P1,P2,P3,P4", help="the prediction (exact numbers; default 1/4 each)")
    d.add_argument("--eta", metavar="E1,E2,E3,E4", help="the true law (default 1/4, 0, 3/8, 3/8)")
    d.add_argument("--utility", metavar="U1,U2,U3,U4",
                   help="leaf utilities in [-1, 1] (default -1, 1, 1, 1; a list that starts with a minus sign "
                        "is written --utility=-1,1,1,1)")
    d.add_argument("--plot", metavar="FILE", help="also draw the tree coloured by D_t to FILE (.png, .pdf, .svg)")
    d.set_defaults(run=_cmd_demo)
    v = _command(sub, "verify", "check every identity, worked example and bound of the paper",
                 "Run one check per claim of the paper, in the paper's order, printing each as it "
                                   "ends with how it was checked.",
                 "huc verify", "huc verify --only appendix_d",
                                        "huc verify --json > claims.json", "huc verify --jobs 1")
    v.add_argument("--json", action="store_true", help="print a JSON list of results (at the end)")
    v.add_argument("--only", metavar="SUBSTRING", help="run only the checks whose name contains SUBSTRING")
    v.add_argument("--jobs", type=_positive, metavar="N",
                   help="run the checks on N processes (default: the usable CPUs, at most 6)")
    v.set_defaults(run=_cmd_verify)
    return parser


def main(argv=None) -> int:
    """Run ``huc``; return the exit status (0 success, 1 a failed check, 2 bad input)
    (the commands of docs/specification.md §6 and ``huc verify``'s paper checks).

    A HUCError is one line on stderr (``huc: error: ...``; with ``--json``, ``audit`` and
    ``boost`` also write its ``huc-error/1`` document to stdout), never a traceback.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``huc``; None: ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status: 0 success (also ``--help``, ``--version`` and a closed pipe), 1 a
        failed check, 2 bad input or an output that cannot be written, 130 interrupted.

    Examples
    --------
    >>> main(["verify", "--only", "appendix_d3"]) == 0
    [  ok  ] 1/1 check_appendix_d3_branch_error_without_impact ...
    True
    """
    args = None
    if sys.stdout is None:  # started with stdout closed (huc ... >&-)
        print("huc: error: standard output is closed", file=sys.stderr)
        return 2
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:  # a bare `huc`: what it can do
            parser.print_help()
            return 0
        _NOTES.clear()
        status = args.run(args)
        sys.stdout.flush()  # a full disk shows here, not at exit
        for note in _NOTES:
            print(note, file=sys.stderr)
        return status
    except SystemExit as done:  # --help and --version
        return int(done.code or 0)
    except HUCError as err:
        err = _command_words(err, _words(args))  # (the library's arguments named as options)
        if getattr(args, "json", False) and getattr(args, "command", None) in ("audit", "boost"):
            sys.stdout.write(dumps(err.to_json()))  # huc-error/1: the kind and the place, for programs
        print(f"huc: error: {printable(str(err), 500)}", file=sys.stderr)  # one line, whatever the input
        return 2
    except BrokenPipeError:  # the reader closed stdout (e.g. piped into head): not an error
        sys.stdout = None
        return 0
    except KeyboardInterrupt:
        print("huc: interrupted", file=sys.stderr)
        return 130
    except OSError as err:  # writing the output failed (a full disk, /dev/full)
        sys.stdout = None  # nothing more can be written there, not even at exit
        print(f"huc: error: cannot write the output: {err.strerror}", file=sys.stderr)
        return 2
