"""The kit's shared machinery: the paper's numbers as transcribed, runs cached one by one, and
the tables that set ours beside the paper's with a verdict per row.

A dataset module (``support2``, ``inaturalist``, ``massive``, ``nslkdd``, ``nbaiot``) describes
its experiment; :func:`execute` runs its units (one split and one base predictor each, K.1's
five splits times six predictors), each cached as one JSON file under
``results/<dataset>/runs/`` the moment it finishes, so that an interrupted command resumes
where it stopped.  A cached unit is reused only when its configuration's fingerprint (the
features, the predictor grids, the caps, the utilities) is the one the code has now.

:func:`comparison` writes a table twice: ours (mean ± sample sd over the runs, K.1's
summary) and against the paper, each cell ``ours / paper (z)`` with ``z`` the difference in
units of the paper's standard deviation, and a verdict per row: ``within 1 sd``, ``within 2 sd``
or ``beyond 2 sd`` by the largest ``|z|`` of the row.  Rows beyond two standard deviations are
listed with the dataset's explanation of the difference.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from huc_ref.errors import HUCError

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[2]
LABELS = {"acc": "Acc.", "auc": "AUC", "uc": "UC", "huc": "HUC", "updates": "Updates"}


@dataclass(frozen=True)
class Number:
    """One of the paper's cells: mean ± sample sd, with the text as printed.

    >>> Number.parse(".4990 ± .1994")
    Number(mean=0.499, sd=0.1994, text='.4990 ± .1994')
    """

    mean: float
    sd: float
    text: str

    @classmethod
    def parse(cls, text: str) -> Number:
        mean, sd = (x.strip() for x in text.split("±"))
        return cls(float(mean), float(sd), text.strip())

    @property
    def digits(self) -> int:
        """Decimals printed (the paper's precision).

        >>> Number.parse("45.20 ± 46.89").digits, Number.parse(".035 ± .009").digits
        (2, 3)
        """
        return len(self.text.split("±")[0].strip().partition(".")[2])


def paper_table(text: str) -> dict:
    """The paper's table as transcribed: one row a line, fields separated by ``|``; the fields
    before the first ``mean ± sd`` cell name the row (``("HUC-B",)``, ``("DT", "HUC-B")``).

    >>> t = paper_table('''
    ...     DT | HUC-B | .5241 ± .0160 | 124.80 ± 27.33
    ... ''')
    >>> t[("DT", "HUC-B")][1].mean
    124.8
    """
    rows = {}
    for line in text.strip().splitlines():
        fields = [f.strip() for f in line.split("|")]
        first = next(i for i, f in enumerate(fields) if "±" in f)
        rows[tuple(fields[:first])] = [Number.parse(f) for f in fields[first:]]
    return rows


def z_score(ours: float, paper: Number) -> float:
    """``(ours - paper mean) / paper sd``; where the paper's sd is 0, 0 when ours rounds to the
    paper's mean at its precision, else infinite.

    >>> z_score(0.0404, Number.parse(".0351 ± .0089")) == (0.0404 - 0.0351) / 0.0089
    True
    >>> z_score(0.0, Number.parse("0.00 ± 0.00")), z_score(1.0, Number.parse("0.00 ± 0.00"))
    (0.0, inf)
    """
    if paper.sd > 0:
        return (ours - paper.mean) / paper.sd
    return 0.0 if round(ours, paper.digits) == paper.mean else math.inf


def verdict(z: float) -> str:
    """The row's verdict by its largest ``|z|``.

    >>> verdict(0.4), verdict(-1.5), verdict(2.01)
    ('within 1 sd', 'within 2 sd', 'beyond 2 sd')
    """
    z = abs(z)
    return "within 1 sd" if z <= 1 else "within 2 sd" if z <= 2 else "beyond 2 sd"


def mean_sd(values) -> tuple[float, float]:
    """Mean and sample standard deviation (K.1), sd 0 for one value.

    >>> mean_sd([1.0, 3.0])
    (2.0, 1.4142135623730951)
    """
    values = [float(v) for v in values]
    return statistics.mean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def comparison(title: str, rows: list, metrics, table_id: str, explanations: dict, digits=4,
               label="Method") -> tuple[str, list]:
    """Ours beside the paper's: ``rows`` is ``[(label, {metric: [our values]}, [paper Number per
    metric]), ...]``; returns the markdown (ours as mean ± sd; then ours / paper (z) and a
    verdict per row; then the rows beyond two paper sds with their explanations) and those rows.

    ``explanations`` maps ``"table:row"`` patterns (``fnmatch``: ``"table8:DT · *"``) to text.

    >>> text, beyond = comparison("T", [("HUC-B", {"huc": [0.04, 0.05]}, [Number.parse(".0351 ± .0089")])],
    ...                           ["huc"], "t7", {})
    >>> text.splitlines()[12]
    '| HUC-B | 0.0450 / .0351 (+1.1) | 1.1 | within 2 sd |'
    >>> beyond
    []
    """
    head = [LABELS.get(m, m) for m in metrics]
    n = max((len(v) for _, ours, _ in rows for v in ours.values()), default=0)
    out = [f"**{title}**", "", f"Ours (mean ± sd over {n} runs):", "",
           f"| {label} | " + " | ".join(head) + " |", "|---|" + "---|" * len(head)]
    for name, ours, _ in rows:
        cells = []
        for m in metrics:
            mu, sd = mean_sd(ours[m])
            d = 2 if m.endswith("updates") else digits
            cells.append(f"{mu:.{d}f} ± {sd:.{d}f}")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    out += ["", "Against the paper (ours / paper's mean (z = difference in paper sds)):", "",
            f"| {label} | " + " | ".join(head) + " | max abs z | Verdict |", "|---|" + "---|" * (len(head) + 2)]
    beyond = []
    for name, ours, paper in rows:
        cells, zs = [], []
        for m, p in zip(metrics, paper):
            mu = mean_sd(ours[m])[0]
            z = z_score(mu, p)
            zs.append(abs(z))
            d = 2 if m.endswith("updates") else digits
            cells.append(f"{mu:.{d}f} / {p.text.split('±')[0].strip()} ({z:+.1f})")
        worst = max(zs)
        out.append(f"| {name} | " + " | ".join(cells) + f" | {worst:.1f} | {verdict(worst)} |")
        if worst > 2:
            where = head[zs.index(worst)]
            why = explain(explanations, table_id, name, where)
            if why == "not explained" and worst <= 3 and max(len(v) for v in ours.values()) == 1:
                why = ONE_DRAW
            beyond.append((name, worst, where, why))
    if beyond:
        out += ["", "Rows beyond two paper standard deviations:", ""]
        out += [f"- **{name}** (max abs z {worst:.1f}, on {where}): {text}" for name, worst, where, text in beyond]
    return "\n".join(out), beyond


#: Why a row of one run lies between two and three of the paper's sds when nothing else explains it.
ONE_DRAW = ("one run: its value is one draw from the spread the paper's sd measures (z has variance 1.2 or more if "
            "the two agree in distribution: one draw less a five-run mean), and a row is flagged by the largest of its "
            "five z's, so one such row in four or more lies beyond two sds by chance alone; this one lies within three")


def explain(explanations: dict, table_id: str, row: str, metric: str = "") -> str:
    """The first explanation whose pattern matches ``table:row:metric`` (the metric of the row's
    largest ``|z|``) or ``table:row`` (``"not explained"`` if none).

    >>> why = {"table8:GNB · *:AUC": "ties", "table8:DT · *": "the tree"}
    >>> explain(why, "table8", "DT · HUC-B", "HUC"), explain(why, "table8", "GNB · UC-B", "AUC")
    ('the tree', 'ties')
    >>> explain(why, "table8", "GNB · UC-B", "Acc.")
    'not explained'
    """
    keys = [f"{table_id}:{row}:{metric}", f"{table_id}:{row}"]
    return next((text for pattern, text in explanations.items() for key in keys if fnmatch.fnmatchcase(key, pattern)),
                "not explained")


# --- runs ------------------------------------------------------------------------------------

def fingerprint(config: dict) -> str:
    """A short hash of a run's configuration (JSON, keys sorted): a cached run is reused only
    under the same one.

    >>> fingerprint({"a": 1}) == fingerprint({"a": 1}) != fingerprint({"a": 2})
    True
    """
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]


def folder(results: Path, name: str, quick: bool) -> Path:
    """Where a dataset's results go: ``results/<name>`` (``<name>-quick`` for ``--quick``)."""
    return Path(results) / (f"{name}-quick" if quick else name)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (a temporary file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def cached(path: Path, stamp: str):
    """The run cached at ``path`` when its fingerprint is ``stamp``, else None."""
    try:
        run = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    return run if run.get("fingerprint") == stamp else None


def read_runs(module, results: Path = RESULTS, quick: bool = False) -> list:
    """The runs cached for ``module`` under ``results`` with the configuration's fingerprint, in
    the order of its units (those not computed yet are left out)."""
    stamp = fingerprint(module.config(quick))
    runs_dir = folder(results, module.NAME, quick) / "runs"
    found = [cached(runs_dir / (module.unit_name(u) + ".json"), stamp) for u in module.units(quick)]
    return [r for r in found if r is not None]


_LOADED = {}


def _load(module, data):
    key = (module.NAME, str(data))
    if key not in _LOADED:
        _LOADED[key] = module.load(data)
    return _LOADED[key]


def _unit(args):
    module_name, data, unit, quick = args
    import importlib

    from threadpoolctl import threadpool_limits
    module = importlib.import_module(module_name)
    start = time.process_time()
    with threadpool_limits(limits=1):  # one thread a unit: OpenMP's threads fight on a shared machine
        result = module.run(_load(module, data), unit, quick)
    return unit, result, time.process_time() - start


def execute(module, *, data=None, quick=False, units=None, jobs=1, results=RESULTS, fresh=False, log=None):
    """Run every unit of a dataset's experiment (``module.units(quick)`` unless ``units`` are
    given: dicts such as ``{"split": 0, "predictor": "LR"}``), each cached in
    ``results/<dataset>/runs/`` when it finishes; cached runs of the same configuration are read
    back instead (``fresh``: recompute them).  Progress lines go to ``log``.  Returns the runs,
    in the units' order.
    """
    log = log or sys.stderr
    units = list(module.units(quick) if units is None else units)
    stamp = fingerprint(module.config(quick))
    runs_dir = folder(results, module.NAME, quick) / "runs"
    done, todo = {}, []
    for unit in units:
        path = runs_dir / (module.unit_name(unit) + ".json")
        run = None if fresh else cached(path, stamp)
        if run is None:
            todo.append(unit)
        else:
            done[module.unit_name(unit)] = run
    if todo:
        _load(module, data)  # read (and check) the data once, before any job
    print(f"{module.NAME}: {len(units)} runs, {len(done)} cached, {len(todo)} to compute", file=log, flush=True)
    started = time.monotonic()
    args = [(module.__name__, data, unit, quick) for unit in todo]
    if jobs > 1 and len(todo) > 1:
        from concurrent.futures import ProcessPoolExecutor
        pool = ProcessPoolExecutor(jobs)
        stream = pool.map(_unit, args)
    else:
        pool, stream = None, map(_unit, args)
    try:
        for k, (unit, result, seconds) in enumerate(stream, start=1):
            name = module.unit_name(unit)
            run = {"dataset": module.NAME, "unit": unit, "fingerprint": stamp, "quick": quick,
                   "cpu_seconds": round(seconds, 1), **result}
            write_atomic(runs_dir / f"{name}.json", json.dumps(run, indent=1, sort_keys=True) + "\n")
            done[name] = run
            elapsed = time.monotonic() - started
            eta = elapsed / k * (len(todo) - k)
            print(f"[{k}/{len(todo)}] {module.NAME} {name}: {seconds:.0f} s CPU; {elapsed / 60:.1f} min so far, "
                  f"about {eta / 60:.0f} min to go", file=log, flush=True)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return [done[module.unit_name(u)] for u in units]


def check_data(path, name: str, what: str, where: str):
    """The user's data path for dataset ``name`` (``--data``), or one HUCError naming what is
    needed and where it is obtained."""
    if path is None:
        raise HUCError(f"{name}: needs {what}; give its path with --data (obtained from {where})", kind="option")
    path = Path(path)
    if not path.exists():
        raise HUCError(f"{name}: --data {path} does not exist (expected {what})", kind="option")
    return path


def chosen_settings(runs) -> str:
    """The base predictors' settings as validation chose them, run by run (K.1), with the
    validation log loss of the choice and the fit's iterations.

    >>> print(chosen_settings([{"unit": {"split": 0, "predictor": "LR"},
    ...                         "fit": {"params": {"C": 0.01}, "losses": [1.1, 1.0], "iterations": 31}}]))
    | Predictor | Split | Setting chosen | Validation log loss | Iterations |
    |---|---|---|---|---|
    | LR | 0 | C=0.01 | 1.0000 | 31 |
    """
    lines = ["| Predictor | Split | Setting chosen | Validation log loss | Iterations |", "|---|---|---|---|---|"]
    for r in sorted(runs, key=lambda r: (r["unit"]["predictor"], r["unit"]["split"])):
        fit = r["fit"]
        params = ", ".join(f"{k}={v}" for k, v in fit["params"].items()) or "(none)"
        lines.append(f"| {r['unit']['predictor']} | {r['unit']['split']} | {params} | {min(fit['losses']):.4f} | "
                     f"{fit.get('iterations', '-')} |")
    return "\n".join(lines)


# --- the pieces every dataset shares -----------------------------------------------------------

def metrics(result: dict) -> dict:
    """A method's test metrics as stored in a run (floats; updates an integer).

    >>> metrics({"acc": 0.5, "auc": 0.75, "uc": 0.125, "huc": 0.0625, "updates": 3, "P": None})
    {'acc': 0.5, 'auc': 0.75, 'uc': 0.125, 'huc': 0.0625, 'updates': 3}
    """
    return {k: float(result[k]) for k in ("acc", "auc", "uc", "huc")} | {"updates": int(result["updates"])}


def run_predictor(experiment, name, X, y, train, parts, groups):
    """K.1's protocol for base predictor ``name`` on one split: the run's stored part (the fit's
    report, every method's test metrics, the subgroups audited) and the raw (P, labels, results)."""
    P, labels, results, report = experiment.fit_and_run(name, X, y, train, parts, groups)
    run = {"fit": report, "methods": {m: metrics(r) for m, r in results.items()}, "subgroups": list(groups["test"])}
    return run, (P, labels, results)


def rows(runs, paper: dict, methods, predictor=None):
    """Comparison rows (:func:`comparison`) of ``methods`` pooled over ``runs``, or over the runs
    of one ``predictor`` (rows labelled ``"DT · HUC-B"``), for the rows the paper has."""
    out = []
    mine = [r for r in runs if predictor is None or r["unit"]["predictor"] == predictor]
    for m in methods:
        key = (m,) if predictor is None else (predictor, m)
        if mine and key in paper:
            label = m if predictor is None else f"{predictor} · {m}"
            out.append((label, {k: [r["methods"][m][k] for r in mine] for k in LABELS}, paper[key]))
    return out


def pooled_table(runs, paper, methods, title, table_id, explanations, digits=4):
    """A pooled table (Tables 1, 4, 7, 11-13): every method over every run."""
    return comparison(title, rows(runs, paper, methods), list(LABELS), table_id, explanations, digits=digits)


def predictor_table(runs, paper, methods, predictors, title, table_id, explanations):
    """A by-predictor table (Tables 5-6, 8-9): each predictor's methods over its splits."""
    found = [row for p in predictors for row in rows(runs, paper, methods, predictor=p)]
    return comparison(title, found, list(LABELS), table_id, explanations, label="Predictor · method")


def allocate(n: int, weights) -> list[int]:
    """``n`` items in proportion to ``weights``, rounded by largest remainder (ties: the earlier
    part); exact where the proportions are (K.2's 1505/669/503/667 of 3,344 images).

    >>> allocate(3344, [1505, 669, 503, 667]), allocate(25192, [45, 20, 15, 20])
    ([1505, 669, 503, 667], [11337, 5038, 3779, 5038])
    """
    total = sum(weights)
    exact_parts = [Fraction(n * w, total) for w in weights]
    sizes = [int(x) for x in exact_parts]
    order = sorted(range(len(weights)), key=lambda i: (-(exact_parts[i] - sizes[i]), i))
    for i in order[:n - sum(sizes)]:
        sizes[i] += 1
    return sizes


def stratified_parts(y, ids, sizes: dict, seed: int):
    """``ids`` cut into parts of the given sizes (in order; the last takes the rest), each
    stratified by ``y`` (scikit-learn's ``train_test_split``, ``random_state=seed``); returns
    ``{part: ids}``.

    >>> y = np.array([0, 1] * 10)
    >>> parts = stratified_parts(y, np.arange(20), {"train": 10, "cal": 4, "val": 2, "test": 4}, 0)
    >>> {k: (len(v), int(y[v].sum())) for k, v in parts.items()}
    {'train': (10, 5), 'cal': (4, 2), 'val': (2, 1), 'test': (4, 2)}
    """
    from sklearn.model_selection import train_test_split
    out, rest = {}, np.asarray(ids)
    names = list(sizes)
    for name in names[:-1]:
        out[name], rest = train_test_split(rest, train_size=sizes[name], stratify=y[rest], random_state=seed)
    out[names[-1]] = rest
    return out


def standardise(X, train):
    """Columns centred and scaled by the training rows' mean and sd (sd 0: left unscaled).

    >>> standardise(np.array([[1.0], [3.0], [5.0]]), np.array([0, 1])).ravel().tolist()
    [-1.0, 1.0, 3.0]
    """
    mean, sd = X[train].mean(axis=0), X[train].std(axis=0)
    return (X - mean) / np.where(sd > 0, sd, 1.0)


def median_split(values, train, name: str) -> dict:
    """K.2/K.4-K.6's two groups of a variable: at most / greater than its training median (or,
    with ``name`` ending in ``<``, below / at least).

    >>> {k: v.tolist() for k, v in median_split(np.array([1, 2, 3, 4]), np.array([0, 1, 2]), "x").items()}
    {'x<=median': [1, 1, 0, 0], 'x>median': [0, 0, 1, 1]}
    """
    m = np.median(values[train])
    if name.endswith("<"):
        name = name[:-1]
        return {f"{name}<median": (values < m).astype(int), f"{name}>=median": (values >= m).astype(int)}
    return {f"{name}<=median": (values <= m).astype(int), f"{name}>median": (values > m).astype(int)}
