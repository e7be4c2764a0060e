"""K.1's experimental protocol, written once for every real-data example (digits, SUPPORT2).

    "Base predictors are fitted on training data, and recalibration uses separate calibration
    data. Validation data select regularization and the returned corrected predictor; test
    data are reserved for final evaluation. We evaluate UC and HUC, as well as accuracy and
    AUC. AUC is the unweighted average of one-vs-rest ROC AUC values over classes with both
    positive and negative examples in the evaluation set."  (K.1)

    "UC-Boost uses at most 100 updates. Each HUC-Boost procedure, including the fixed-step and
    two-stage variants, uses at most 100 passes over the nodes with at least two children, for
    a node-audit budget of 100 times the number of such nodes. A node is updated only when its
    audited violation exceeds 0.001 ... Validation selects the returned update prefix."  (K.1)

One :class:`Experiment` holds a tree, its utilities and a dataset's parts; :meth:`Experiment.run`
gives every method of Table 1 on one base predictor's predictions.  The fast path does the
work (``huc_ref.fast``); the caller re-audits a sample exactly.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from huc_ref import FiniteDistribution, Interval, LabelTree, audit, boost, fast, interval_moment
from huc_ref.recalibration import KAPPA_INIT, fit_recalibrator
from huc_ref.replay import prefix_predictions, select_prefix

METHODS = ["Baseline", "UC-B", "HUC-B", "HUC-B (0.05)", "Temp.", "Temp. -> HUC", "Vec.", "Vec. -> HUC",
           "Dir.", "Dir. -> HUC"]
BOOSTED = {"UC-B": ("uc", "adaptive"), "HUC-B": ("huc", "adaptive"), "HUC-B (0.05)": ("huc", "0.05")}
SCALINGS = {"Temp.": "temperature", "Vec.": "vector", "Dir.": "dirichlet"}
TOLERANCE = "0.001"  # K.1: "A node is updated only when its audited violation exceeds 0.001"
PARTS = ("cal", "val", "test")


def predictors(names=None) -> dict:
    """K.1's six base predictors (scikit-learn; gradient-boosted trees are its
    HistGradientBoostingClassifier, since XGBoost is not a dependency), by name."""
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neural_network import MLPClassifier
    from sklearn.tree import DecisionTreeClassifier
    models = {"LR": lambda: LogisticRegression(max_iter=3000), "GNB": lambda: GaussianNB(),
              "DT": lambda: DecisionTreeClassifier(max_depth=8, random_state=0),
              "RF": lambda: RandomForestClassifier(n_estimators=100, random_state=0),
              "XGB": lambda: HistGradientBoostingClassifier(max_iter=100, random_state=0),
              "MLP": lambda: MLPClassifier(hidden_layer_sizes=(64,), max_iter=800, random_state=0)}
    return {k: models[k] for k in (names or models)}


def smooth(P):
    """K.1's ``f_base = (1 - kappa_init) f_raw + kappa_init / K``: every probability positive."""
    return (1 - KAPPA_INIT) * P + KAPPA_INIT / P.shape[1]


def macro_auc(P, y) -> float:
    """K.1's AUC: the unweighted mean of one-vs-rest ROC AUCs over the classes with both
    positive and negative examples in the evaluation set."""
    from sklearn.metrics import roc_auc_score
    scores = [roc_auc_score(y == k, P[:, k]) for k in range(P.shape[1]) if 0 < np.sum(y == k) < len(y)]
    return float(np.mean(scores))


@dataclass
class Experiment:
    """A tree, its utilities and caps; ``run`` applies K.1's protocol to one predictor."""

    tree: LabelTree
    utilities: dict
    uc_cap: int = 100  # K.1: "UC-Boost uses at most 100 updates"
    passes: int = 100  # K.1: "at most 100 passes over the nodes with at least two children"

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

    def fit_and_run(self, make, X, y, train, parts, groups, rows, by_predictor):
        """Fit one base predictor (``make()``) on the training rows, smooth its predictions on
        the calibration, validation and test rows ``parts``, run every method and add the
        results to ``rows[method]`` and ``by_predictor[method]``; returns (P, labels, results)."""
        model = make().fit(X[train], y[train])
        P = {part: smooth(model.predict_proba(X[ids])) for part, ids in parts.items()}
        labels = {part: y[ids] for part, ids in parts.items()}
        results = self.run(P, labels, groups)
        for m, r in results.items():
            rows[m].append(r)
            by_predictor[m].append(r)
        return P, labels, results

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
        res = audit(dist, self.utilities, arithmetic="float64")
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
        """Every method in ``methods`` on one predictor's smoothed predictions ``P[part]``
        (parts ``cal``, ``val``, ``test``): test metrics and the updates kept."""
        utilities = self.utilities if utilities is None else utilities
        D = {part: self.distribution(P[part], y[part], groups[part]) for part in PARTS}
        out = {}
        for m in methods:
            if m == "Baseline":
                out[m] = {**self.evaluate(P["test"], y["test"], groups["test"], utilities), "updates": 0}
                if utilities is self.utilities:  # where the UC error sits on the tree (docs/reproducing.md)
                    out[m]["cancellation"] = self.cancellation(P["test"], y["test"], groups["test"])["uc"]
            elif m in BOOSTED:
                Pt, kept, _ = self.boosted(D, *BOOSTED[m], utilities)
                out[m] = {**self.evaluate(Pt, y["test"], groups["test"], utilities), "updates": kept}
                if utilities is self.utilities and m in ("UC-B", "HUC-B"):  # what each leaves (docs/reproducing.md)
                    out[m]["cancellation"] = self.cancellation(Pt, y["test"], groups["test"])["huc"]
        for label, kind in SCALINGS.items():
            if label not in methods and f"{label} -> HUC" not in methods:
                continue
            rec = fit_recalibrator(D["cal"], kind, validation=D["val"])  # K.1: validation picks lambda
            R = {part: smooth(rec(P[part])) for part in PARTS}
            if label in methods:
                out[label] = {**self.evaluate(R["test"], y["test"], groups["test"], utilities), "updates": 0}
            if f"{label} -> HUC" in methods:
                RD = {part: self.distribution(R[part], y[part], groups[part]) for part in PARTS}
                Pt, kept, _ = self.boosted(RD, "huc", "adaptive", utilities)
                out[f"{label} -> HUC"] = {**self.evaluate(Pt, y["test"], groups["test"], utilities),
                                          "updates": kept}
        return {m: out[m] for m in methods}


def cell(values, digits=4) -> str:
    """``mean ± sd`` (the sample standard deviation, as K.1 reports)."""
    values = list(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.{digits}f} ± {sd:.{digits}f}"


def table(rows: dict, methods=METHODS, digits=3) -> str:
    """A markdown table of ``rows[method] = [result, ...]`` as mean ± sd."""
    lines = ["| Method | Acc. | AUC | UC | HUC | Updates |", "|---|---|---|---|---|---|"]
    for m in methods:
        r = rows[m]
        lines.append(f"| {m} | {cell((x['acc'] for x in r), digits)} | {cell((x['auc'] for x in r), digits)} | "
                     f"{cell((x['uc'] for x in r), digits)} | {cell((x['huc'] for x in r), digits)} | "
                     f"{cell((x['updates'] for x in r), 1)} |")
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
        if paper is not None:
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
