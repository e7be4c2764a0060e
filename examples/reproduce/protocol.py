"""K.1's experimental protocol, written once for every real-data experiment of the kit.

    "Base predictors are fitted on training data, and recalibration uses separate calibration
    data. Validation data select regularization and the returned corrected predictor; test
    data are reserved for final evaluation. We evaluate UC and HUC, as well as accuracy and
    AUC. AUC is the unweighted average of one-vs-rest ROC AUC values over classes with both
    positive and negative examples in the evaluation set."  (K.1)

    "UC-Boost uses at most 100 updates. Each HUC-Boost procedure, including the fixed-step and
    two-stage variants, uses at most 100 passes over the nodes with at least two children, for
    a node-audit budget of 100 times the number of such nodes. A node is updated only when its
    audited violation exceeds 0.001 ... Validation selects the returned update prefix."  (K.1)

Base predictors (:data:`PREDICTORS`): K.1 names the six families but not their settings; each
is fitted on the training rows once per setting of a stated grid, and the setting whose
smoothed predictions have the smallest log loss on the validation rows is kept ("Validation
data select regularization", K.1).  Seeds are fixed (``random_state=0``).  The grid, the
estimator and the fixed settings of each predictor are written in :data:`PREDICTORS` and shown
by :func:`settings_table` (the docs' table).

One :class:`Experiment` holds a tree, its utilities and caps; :meth:`Experiment.run` gives every
method of Table 1 on one base predictor's predictions.  The fast path does the work
(``huc_ref.fast``: the data are :class:`huc_ref.fast.Sample` arrays); the caller re-audits a
sample exactly (:meth:`Experiment.reaudit`).
"""

from __future__ import annotations

import itertools
import statistics
import warnings
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from huc_ref import FiniteDistribution, Interval, LabelTree, audit, boost, fast, interval_moment
from huc_ref.fast.sample import Sample
from huc_ref.recalibration import KAPPA_INIT, fit_recalibrator
from huc_ref.replay import prefix_predictions, select_prefix

METHODS = ["Baseline", "UC-B", "HUC-B", "HUC-B (0.05)", "Temp.", "Temp. -> HUC", "Vec.", "Vec. -> HUC",
           "Dir.", "Dir. -> HUC"]
BOOSTED = {"UC-B": ("uc", "adaptive"), "HUC-B": ("huc", "adaptive"), "HUC-B (0.05)": ("huc", "0.05")}
SCALINGS = {"Temp.": "temperature", "Vec.": "vector", "Dir.": "dirichlet"}
TOLERANCE = "0.001"  # K.1: "A node is updated only when its audited violation exceeds 0.001"
METRICS = ("acc", "auc", "uc", "huc", "updates")


@dataclass(frozen=True)
class Predictor:
    """One of K.1's base predictors: a scikit-learn estimator, its fixed settings, and the grid
    from which validation log loss selects the rest (K.1: "Validation data select
    regularization").  ``staged``: the grid parameter that is a number of boosting iterations,
    read off the staged predictions of one fit of the largest number for each setting of the
    others (every prefix of that fit is the fit of that size: no subsampling, no early stopping).

    >>> PREDICTORS["LR"].candidates()[:2]
    [{'C': 0.001}, {'C': 0.003}]
    >>> len(PREDICTORS["MLP"].candidates()), PREDICTORS["GNB"].candidates()
    (10, [{}])
    """

    name: str
    estimator: str
    fixed: dict
    grid: dict = field(default_factory=dict)
    staged: str | None = None
    note: str = ""

    def candidates(self) -> list[dict]:
        """Every setting of the grid, in the grid's order (the first of equal losses is kept)."""
        keys = list(self.grid)
        return [dict(zip(keys, values)) for values in itertools.product(*(self.grid[k] for k in keys))]

    def build(self, params: dict):
        """The unfitted estimator with the fixed settings and ``params``."""
        module, _, cls = self.estimator.rpartition(".")
        import importlib
        return getattr(importlib.import_module(module), cls)(**self.fixed, **params)


#: K.1's six base predictors with the settings of this kit: fixed settings, and the grid that
#: validation log loss selects from.  XGBoost is scikit-learn's HistGradientBoostingClassifier
#: (the same gradient-boosted trees without the xgboost dependency).
PREDICTORS = {
    "LR": Predictor("LR", "sklearn.linear_model.LogisticRegression", {"max_iter": 10000},
                    {"C": [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 10.0, 100.0]},
                    note="L2 penalty; lbfgs to its tolerance"),
    "GNB": Predictor("GNB", "sklearn.naive_bayes.GaussianNB", {},
                     note="no regularization to select (var_smoothing at scikit-learn's 1e-9, a variance floor "
                          "for numerical stability)"),
    "DT": Predictor("DT", "sklearn.tree.DecisionTreeClassifier", {"random_state": 0},
                    {"max_depth": [2, 3, 4, 6, 8, None], "min_samples_leaf": [1, 10, 30, 100]},
                    note="the tree's size is its regularization"),
    "RF": Predictor("RF", "sklearn.ensemble.RandomForestClassifier",
                    {"n_estimators": 200, "random_state": 0, "n_jobs": 1},
                    {"min_samples_leaf": [1, 2, 5, 10, 20]}),
    "XGB": Predictor("XGB", "sklearn.ensemble.HistGradientBoostingClassifier",
                     {"learning_rate": 0.1, "early_stopping": False, "random_state": 0},
                     {"max_leaf_nodes": [4, 8, 31], "max_iter": [10, 25, 50, 100, 200]}, staged="max_iter",
                     note="gradient-boosted trees; the number of iterations read off one fit's staged predictions"),
    "MLP": Predictor("MLP", "sklearn.neural_network.MLPClassifier",
                     {"max_iter": 3000, "random_state": 0},
                     {"hidden_layer_sizes": [(32,), (64,)], "alpha": [0.01, 0.1, 1.0, 10.0, 100.0]},
                     note="adam until the training loss improves by less than 1e-4 for 10 epochs (scikit-learn's "
                          "convergence rule), which every fit reaches before max_iter (checked)"),
}


def settings_table(names=None) -> str:
    """The docs' table of base-predictor settings: estimator, fixed settings, the grid validation
    log loss selects from, and notes (K.1).

    >>> settings_table(["GNB"]).splitlines()[2].split(" | ")[:2]
    ['| GNB', '`GaussianNB`']
    """
    lines = ["| Predictor | Estimator (scikit-learn) | Fixed | Grid (selected by validation log loss) | Notes |",
             "|---|---|---|---|---|"]
    for name in names or PREDICTORS:
        p = PREDICTORS[name]
        fixed = ", ".join(f"{k}={v}" for k, v in p.fixed.items()) or "-"
        grid = "; ".join(f"{k} in {list(v)}" for k, v in p.grid.items()) or "-"
        lines.append(f"| {name} | `{p.estimator.rpartition('.')[2]}` | {fixed} | {grid} | {p.note} |")
    return "\n".join(lines)


def smooth(P):
    """K.1's ``f_base = (1 - kappa_init) f_raw + kappa_init / K``: every probability positive.

    >>> smooth(np.array([[1.0, 0.0]])).tolist()
    [[0.99999999995, 5e-11]]
    """
    return (1 - KAPPA_INIT) * P + KAPPA_INIT / P.shape[1]


def probabilities(model, X, K: int) -> np.ndarray:
    """``model.predict_proba(X)`` as ``K`` columns in label-id order (a class absent from the
    training rows gets probability 0 before smoothing), smoothed (K.1).

    >>> from sklearn.dummy import DummyClassifier
    >>> m = DummyClassifier(strategy="prior").fit(np.zeros((4, 1)), [0, 0, 2, 2])
    >>> probabilities(m, np.zeros((1, 1)), 3).round(6).tolist()
    [[0.5, 0.0, 0.5]]
    """
    P = np.zeros((X.shape[0], K))  # (X may be a sparse matrix: TF-IDF, K.4)
    P[:, np.asarray(model.classes_, dtype=int)] = model.predict_proba(X)
    return smooth(P)


def log_loss(P, y) -> float:
    """The mean negative log probability of the labels (the validation criterion).

    >>> log_loss(np.array([[0.5, 0.5], [0.25, 0.75]]), np.array([0, 1])) == float(-(np.log(0.5) + np.log(0.75)) / 2)
    True
    """
    return float(-np.mean(np.log(P[np.arange(len(y)), y])))


def fit_predictor(name: str, X, y, train, val, K: int, predictor: Predictor | None = None):
    """Fit predictor ``name`` on the training rows for every setting of its grid and keep the one
    of smallest validation log loss, the first of equal ones (K.1); returns ``(model, report)``
    where ``report`` has the chosen ``params``, each candidate's validation ``losses`` (grid
    order) and, for an iterative fit, its ``iterations``.  A fit that stops at its iteration cap
    before converging is an error (scikit-learn's ConvergenceWarning, raised).

    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2)); y = (X[:, 0] > 0).astype(int)
    >>> model, report = fit_predictor("LR", X, y, np.arange(40), np.arange(40, 60), 2)
    >>> report["params"], len(report["losses"])
    ({'C': 100.0}, 9)
    """
    from sklearn.exceptions import ConvergenceWarning
    p = predictor or PREDICTORS[name]
    candidates = p.candidates()
    losses = [None] * len(candidates)
    kept = {}  # the fitted model of the smallest loss so far (non-staged grids)
    for i, params in enumerate(candidates):
        if losses[i] is not None:
            continue
        largest = {**params, p.staged: max(p.grid[p.staged])} if p.staged else params
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)  # a fit stopped at its cap is not a fit
            model = p.build(largest).fit(X[train], y[train])
        if not p.staged:
            losses[i] = log_loss(probabilities(model, X[val], K), y[val])
            if not kept or losses[i] < losses[next(iter(kept))]:
                kept = {i: model}
            continue
        staged = list(model.staged_predict_proba(X[val]))
        for j, other in enumerate(candidates):  # every size of this setting, from the one fit
            if {k: v for k, v in other.items() if k != p.staged} == {k: v for k, v in params.items() if k != p.staged}:
                P = np.zeros((len(val), K))
                P[:, np.asarray(model.classes_, dtype=int)] = staged[other[p.staged] - 1]
                losses[j] = log_loss(smooth(P), y[val])
    best = int(np.argmin(losses))
    params = candidates[best]
    model = kept[best] if best in kept else p.build(params).fit(X[train], y[train])
    report = {"params": {k: (list(v) if isinstance(v, tuple) else v) for k, v in params.items()},
              "losses": [round(x, 6) for x in losses]}
    if hasattr(model, "n_iter_"):
        report["iterations"] = int(np.max(model.n_iter_))
    return model, report


def macro_auc(P, y) -> float:
    """K.1's AUC: the unweighted mean of one-vs-rest ROC AUCs over the classes with both
    positive and negative examples in the evaluation set.

    >>> macro_auc(np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]]), np.array([0, 1, 0]))
    1.0
    """
    from sklearn.metrics import roc_auc_score
    scores = [roc_auc_score(y == k, P[:, k]) for k in range(P.shape[1]) if 0 < np.sum(y == k) < len(y)]
    return float(np.mean(scores))


@dataclass
class Experiment:
    """A tree, its utilities and caps; ``run`` applies K.1's protocol to one predictor.

    The parts of a dataset are named: ``cal`` (boosting), ``val`` (the returned prefix), ``test``
    (evaluation); where a dataset fits the parametric recalibrators on data of their own
    (MASSIVE, K.4), ``recal`` holds them and ``select`` selects their ``lambda``; otherwise the
    recalibrators use ``cal`` and ``val`` too ("using the same calibration data for both
    stages", Sec. 5.2).
    """

    tree: LabelTree
    utilities: dict
    uc_cap: int = 100  # K.1: "UC-Boost uses at most 100 updates"
    passes: int = 100  # K.1: "at most 100 passes over the nodes with at least two children"
    cancellation_index: bool = True  # the cancellation index of docs/reproducing.md (an exact audit of test data)

    def sample(self, P, y, groups) -> Sample:
        """Sample atoms as float64 arrays (the fast path's :class:`huc_ref.fast.Sample`)."""
        names = list(groups)
        return Sample(self.tree, P, y, names, np.column_stack([np.asarray(groups[g], float) for g in names]))

    def distribution(self, P, y, groups) -> FiniteDistribution:
        """Sample atoms with exact predictions (floats read exactly, renormalised exactly)."""
        return FiniteDistribution.from_floats(self.tree, y, P, subgroups=groups)

    def evaluate(self, P, y, groups, utilities=None) -> dict:
        """Test accuracy, K.1's AUC, UC and HUC (fast path), and the predictions ``P``."""
        res = fast.audit(y, P, self.tree, utilities or self.utilities, subgroups=groups)
        return {"acc": float(np.mean(P.argmax(axis=1) == y)), "auc": macro_auc(P, y),
                "uc": res.uc.sup, "huc": res.huc.sup, "P": P}

    def boosted(self, D, method, step, utilities=None):
        """Boost on calibration atoms (the fast engine), choose the prefix on validation (its
        first minimum of UC for UC-Boost, HUC otherwise: :func:`huc_ref.replay.select_prefix`),
        apply it to test; returns (test predictions, kept, run)."""
        utilities = utilities or self.utilities
        caps = self.uc_cap if method == "uc" else self.passes * len(self.tree.branching_nodes)
        run = boost(D["cal"], utilities, arithmetic="float64", method=method, epsilon=TOLERANCE, step=step,
                    select="passes" if method == "huc" else "greedy", max_updates=caps, max_passes=self.passes)
        keep, _ = select_prefix(run, D["val"], utilities)
        return prefix_predictions(run, D["test"], utilities, keep), keep, run

    def fit_and_run(self, name, X, y, train, parts, groups, rows=None, by_predictor=None):
        """Fit base predictor ``name`` on the training rows (its setting chosen on the ``val``
        rows, :func:`fit_predictor`), smooth its predictions on every part, run every method
        and add the results to ``rows[method]`` and ``by_predictor[method]`` when given;
        returns (P, labels, results, the fit's report)."""
        model, report = fit_predictor(name, X, y, train, parts["val"], self.tree.K)
        P = {part: probabilities(model, X[ids], self.tree.K) for part, ids in parts.items()}
        labels = {part: y[ids] for part, ids in parts.items()}
        results = self.run(P, labels, groups)
        for m, r in results.items():
            for into in (rows, by_predictor):
                if into is not None:
                    into[m].append(r)
        return P, labels, results, report

    def reaudit(self, r, y, groups) -> tuple[float, float]:
        """The exact engine's UC and HUC of a method's test predictions minus the fast path's."""
        exact = audit(self.distribution(r["P"], y, groups), self.utilities)
        return float(exact.uc.sup) - r["uc"], float(exact.huc.sup) - r["huc"]

    def cancellation(self, P, y, groups) -> dict:
        """How much of the node-level error UC sees, at the HUC witness ``(c, u, I, v)``: on that
        interval the UC moment is the sum of the node moments (Thm 3.1: ``M = sum_v Gamma_v``,
        exactly), so ``1 - |M| / sum_v |Gamma_v|`` is 0 when every node's error there has the
        sign of the total (UC-Boost's leaf-wide step then moves every level the right way at
        once) and 1 when the node errors cancel (D.1: UC = 0 while HUC > 0; what HUC-Boost
        corrects and UC-Boost cannot see).  Also at the UC witness.  Moments are computed
        exactly (``interval_moment``) on the fast witnesses' intervals, widened by 1e-12."""
        dist = self.distribution(P, y, groups)
        res = audit(dist, self.utilities, engine="fast")
        pad = Fraction(1, 10**12)
        out = {}
        for which, w in (("huc", res.huc), ("uc", res.uc)):
            if w.interval is None:  # no violation at all: nothing to locate
                out[which] = 0.0
                continue
            u = self.utilities[w.utility]
            interval = Interval.closed(Fraction(w.interval[0]) - pad, Fraction(w.interval[1]) + pad)
            M = interval_moment(dist, u, w.subgroup, interval)
            total = sum(abs(interval_moment(dist, u, w.subgroup, interval, v)) for v in u.relevant_nodes)
            out[which] = float(1 - abs(M) / total) if total else 0.0
        return out

    def run(self, P, y, groups, methods=METHODS, utilities=None) -> dict:
        """Every method in ``methods`` on one predictor's smoothed predictions ``P[part]`` (parts
        ``cal``, ``val``, ``test``, and ``recal`` and ``select`` where the recalibrators have data
        of their own): test metrics and the updates kept."""
        utilities = self.utilities if utilities is None else utilities
        D = {part: self.sample(P[part], y[part], groups[part]) for part in P}
        recal, select = ("recal", "select") if "recal" in D else ("cal", "val")
        report = self.cancellation_index and utilities is self.utilities
        out = {}
        for m in methods:
            if m == "Baseline":
                out[m] = {**self.evaluate(P["test"], y["test"], groups["test"], utilities), "updates": 0}
                if report:  # where the base predictor's UC error sits on the tree (docs/reproducing.md)
                    out[m]["cancellation"] = self.cancellation(P["test"], y["test"], groups["test"])["uc"]
            elif m in BOOSTED:
                Pt, kept, _ = self.boosted(D, *BOOSTED[m], utilities)
                out[m] = {**self.evaluate(Pt, y["test"], groups["test"], utilities), "updates": kept}
                if report and m in ("UC-B", "HUC-B"):  # what each leaves behind (docs/reproducing.md)
                    out[m]["cancellation"] = self.cancellation(Pt, y["test"], groups["test"])["huc"]
        for label, kind in SCALINGS.items():
            if label not in methods and f"{label} -> HUC" not in methods:
                continue
            rec = fit_recalibrator(D[recal], kind, validation=D[select])  # K.1: validation picks lambda
            R = {part: smooth(rec(P[part])) for part in P}
            if label in methods:
                out[label] = {**self.evaluate(R["test"], y["test"], groups["test"], utilities), "updates": 0}
            if f"{label} -> HUC" in methods:
                RD = {part: self.sample(R[part], y[part], groups[part]) for part in P}
                Pt, kept, _ = self.boosted(RD, "huc", "adaptive", utilities)
                out[f"{label} -> HUC"] = {**self.evaluate(Pt, y["test"], groups["test"], utilities),
                                          "updates": kept}
        return {m: out[m] for m in methods}


def cell(values, digits=4) -> str:
    """``mean ± sd`` (the sample standard deviation, as K.1 reports).

    >>> cell([1.0, 2.0, 3.0], 2)
    '2.00 ± 1.00'
    """
    values = list(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.{digits}f} ± {sd:.{digits}f}"


def table(rows: dict, methods=METHODS, digits=3) -> str:
    """A markdown table of ``rows[method] = [result, ...]`` as mean ± sd."""
    lines = ["| Method | Acc. | AUC | UC | HUC | Updates |", "|---|---|---|---|---|---|"]
    for m in methods:
        r = rows[m]
        lines.append(f"| {m} | " + " | ".join(cell((x[k] for x in r), 1 if k == "updates" else digits)
                                              for k in METRICS) + " |")
    return "\n".join(lines)


def cancellation_line(rows: dict) -> str:
    """The cancellation index (:meth:`Experiment.cancellation`) of the base predictor at its test
    UC witness, and at the test HUC witness that UC-Boost and HUC-Boost leave, mean ± sd."""
    where = {"Baseline": "Baseline at the UC witness", "UC-B": "UC-B at the HUC witness",
             "HUC-B": "HUC-B at the HUC witness"}
    parts = [f"{where[m]} {cell((r['cancellation'] for r in rows[m]), 3)}" for m in where
             if rows.get(m) and "cancellation" in rows[m][0]]
    return "cancellation index (0: the node errors share a sign; 1: they cancel in UC): " + "; ".join(parts)


def figure(by_predictor: dict, path, title: str, paper: dict | None = None, paper_label: str = "paper"):
    """Test HUC by method and base predictor: ours as dots with their split-to-split spread,
    the paper's means (``paper[predictor]``, in :data:`METHODS` order) as open diamonds; one
    panel per predictor, log scale.  Needs matplotlib (the ``plot`` extra); returns the path."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    names = list(by_predictor)
    fig, axes = plt.subplots(1, len(names), figsize=(2.3 * len(names) + 1, 4.2), sharey=True, squeeze=False)
    ypos = np.arange(len(METHODS))[::-1]
    for ax, name in zip(axes[0], names):
        values = [[x["huc"] for x in by_predictor[name][m]] for m in METHODS]
        ax.errorbar([np.mean(v) for v in values], ypos, xerr=[np.std(v) for v in values], fmt="o", color="C0",
                    ms=4, capsize=2, label="ours")
        if paper is not None and name in paper:
            ax.plot(paper[name], ypos, "D", mfc="none", color="C3", ms=5, label=paper_label)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # no crowded minor labels
        ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%.3g"))
        ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1, 2, 5), numticks=4))
        ax.set_title(name)
        ax.set_xlabel("test HUC")
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(ypos, METHODS)
    axes[0][0].legend(loc="lower right", fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
