"""N-BaIoT (K.6): Table 13.

    "The N-BaIoT experiment uses 1,000 records, approximately balanced across 11 leaf labels:
    benign traffic and five attack types for each of Gafgyt and Mirai. The root separates benign
    traffic from attacks; the attack node separates the two families, whose children are their
    respective attack types. Classifiers use the first ten numerical features. The six base
    predictors and training/calibration/validation/test proportions match those for NSL-KDD."  (K.6)

Data: the UCI Machine Learning Repository's "detection_of_IoT_botnet_attacks_N_BaIoT", with its
``.rar`` archives extracted in place: ``--data`` is the folder holding one folder per device,
each with ``benign_traffic.csv``, ``gafgyt_attacks/{combo,junk,scan,tcp,udp}.csv`` and (for
the seven devices Mirai infected) ``mirai_attacks/{ack,scan,syn,udp,udpplain}.csv``; every CSV
has a header and 115 numerical features, the first ten of which are the classifier's input.

The 1,000 records: 91 per leaf for the first ten leaves and 90 for the last (1,000 over 11 as
evenly as it goes), each leaf's drawn uniformly without replacement (seed 0) from all of its
rows over every device, once for all five splits.  The ten features are standardised with the
training rows' statistics (K.6 leaves their scale open).  Utilities (K.6, ``|U| = 3``): top-1
correctness of the root decision ``v_0(p)`` (benign on a tie), of the family decision ``v_1(p)``
(benign, or the family of larger mass after the root chose attack, Gafgyt on a tie:
:class:`decisions.TopDown` at depth 2) and of the global-leaf decision (ties in the order
benign, Gafgyt combo ... udp, Mirai ack ... udpplain).  Subgroups (K.6): everyone; each device
present in training; the first feature at most and greater than its training median.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from huc_ref import LabelTree, Top1AtDepth, TopK
from huc_ref.errors import HUCError

from . import kit
from .decisions import TopDown
from .protocol import METHODS, PREDICTORS, Experiment

NAME = "nbaiot"
TITLE = "N-BaIoT (K.6)"
SOURCE = ("the UCI Machine Learning Repository's `detection_of_IoT_botnet_attacks_N_BaIoT` (extract each device's "
          "`gafgyt_attacks.rar` and `mirai_attacks.rar` in place)")
GAFGYT = ["combo", "junk", "scan", "tcp", "udp"]
MIRAI = ["ack", "scan", "syn", "udp", "udpplain"]
LEAVES = ["benign"] + [f"gafgyt.{a}" for a in GAFGYT] + [f"mirai.{a}" for a in MIRAI]
TREE = LabelTree.from_nested({"root": {"benign": None, "attack": {"gafgyt": LEAVES[1:6], "mirai": LEAVES[6:]}}},
                             labels=LEAVES)
UTILITIES = {"root": Top1AtDepth(TREE, 1), "family": TopDown(TREE, 2), "leaf": TopK(TREE, 1)}
RECORDS, FEATURES = 1000, 10  # K.6
PROPORTIONS = {"train": 45, "cal": 20, "val": 15, "test": 20}  # K.6: "match those for NSL-KDD"
PREDICTOR_NAMES = ["LR", "GNB", "DT", "RF", "XGB", "MLP"]
QUICK_PREDICTORS = ["LR", "GNB"]
SPLITS = 5

# Table 13 (six predictors x five splits), transcribed from the paper's text.
TABLE13 = kit.paper_table("""
Baseline | .7852 ± .1560 | .9703 ± .0382 | .1021 ± .0998 | .0672 ± .0633 | 0.00 ± 0.00
UC-B | .7960 ± .1262 | .9720 ± .0300 | .0338 ± .0221 | .0324 ± .0197 | 31.50 ± 30.98
HUC-B | .7987 ± .1254 | .9736 ± .0307 | .0357 ± .0212 | .0278 ± .0186 | 35.27 ± 28.58
HUC-B (0.05) | .7960 ± .1281 | .9749 ± .0283 | .0415 ± .0332 | .0325 ± .0316 | 137.33 ± 80.47
Temp. | .7852 ± .1560 | .9711 ± .0396 | .0415 ± .0354 | .0391 ± .0364 | 0.00 ± 0.00
Temp. -> HUC | .8010 ± .1264 | .9764 ± .0265 | .0326 ± .0239 | .0265 ± .0189 | 24.80 ± 33.13
Vec. | .8077 ± .1243 | .9770 ± .0229 | .0361 ± .0293 | .0290 ± .0242 | 0.00 ± 0.00
Vec. -> HUC | .8104 ± .1133 | .9787 ± .0171 | .0363 ± .0272 | .0271 ± .0160 | 13.57 ± 22.93
Dir. | .8380 ± .0439 | .9843 ± .0043 | .0413 ± .0412 | .0269 ± .0200 | 0.00 ± 0.00
Dir. -> HUC | .8357 ± .0418 | .9841 ± .0044 | .0311 ± .0116 | .0243 ± .0104 | 16.77 ± 23.76
""")
EXPLANATIONS: dict = {}
NOTES = """\
Not reproducible offline: N-BaIoT is a download.  Where the kit fills a gap K.6 leaves: the
1,000 records are 91 a leaf (90 for the last), drawn at random (seed 0) over every device's rows
of that leaf, once for all splits (K.6: "approximately balanced"); the ten features are
standardised with the training rows' statistics; the base predictors are K.1's, chosen on
validation as for SUPPORT2."""


def files(root: Path) -> dict:
    """Each leaf's CSV files in the published layout, device by device (devices in name order)."""
    out = {leaf: [] for leaf in LEAVES}
    for device in sorted(p for p in root.iterdir() if p.is_dir()):
        benign = device / "benign_traffic.csv"
        if not benign.is_file():
            continue
        out["benign"].append((device.name, benign))
        for family, attacks in (("gafgyt", GAFGYT), ("mirai", MIRAI)):
            for attack in attacks:
                path = device / f"{family}_attacks" / f"{attack}.csv"
                if path.is_file():
                    out[f"{family}.{attack}"].append((device.name, path))
    return out


def _rows(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b"")) - 1


def load(path):
    """The 1,000-record sample: (first ten features, leaf ids, devices), drawn once (seed 0)."""
    root = kit.check_data(path, NAME, "the folder of the N-BaIoT device folders", SOURCE)
    found = files(root)
    empty = [leaf for leaf, f in found.items() if not f]
    if empty:
        raise HUCError(f"{NAME}: no CSV for {', '.join(empty)} under --data {root} (expected <device>/"
                       "benign_traffic.csv, <device>/gafgyt_attacks/<attack>.csv and <device>/mirai_attacks/"
                       "<attack>.csv, the .rar archives extracted)", kind="option")
    rng = np.random.default_rng(0)
    X, y, devices = [], [], []
    for k, (leaf, want) in enumerate(zip(LEAVES, [len(a) for a in np.array_split(np.arange(RECORDS), len(LEAVES))])):
        counts = [_rows(p) for _, p in found[leaf]]
        if sum(counts) < want:
            raise HUCError(f"{NAME}: {leaf} has {sum(counts)} rows in all, fewer than the {want} to draw",
                           kind="option")
        chosen = np.sort(rng.choice(sum(counts), size=want, replace=False))
        start = 0
        for (device, p), count in zip(found[leaf], counts):
            mine = set((chosen[(chosen >= start) & (chosen < start + count)] - start).tolist())
            start += count
            if not mine:
                continue
            with open(p, newline="") as f:
                reader = csv.reader(f)
                head = next(reader)
                if len(head) < FEATURES:
                    raise HUCError(f"{NAME}: {p} has {len(head)} columns, fewer than {FEATURES}", kind="option")
                for i, row in enumerate(reader):
                    if i in mine:
                        if len(row) != len(head):
                            raise HUCError(f"{NAME}: {p} line {i + 2} has {len(row)} fields, the header {len(head)}",
                                           kind="option")
                        X.append([float(v) for v in row[:FEATURES]])
                        y.append(k)
                        devices.append(device)
    return np.array(X), np.array(y), np.array(devices)


def subgroups(X, devices, train, ids) -> dict:
    """K.6's indicators: everyone; each device present in training; the first feature at most and
    greater than its training median (on the rows ``ids``).

    >>> X, d = np.array([[1.0], [2.0], [3.0]]), np.array(["a", "b", "a"])
    >>> {k: v.tolist() for k, v in subgroups(X, d, np.array([0, 2]), np.arange(3)).items()}
    {'all': [1, 1, 1], 'device=a': [1, 0, 1], 'feature1<=median': [1, 1, 0], 'feature1>median': [0, 0, 1]}
    """
    groups = {"all": np.ones(len(X), dtype=int)}
    groups.update({f"device={d}": (devices == d).astype(int) for d in sorted(set(devices[train].tolist()))})
    groups.update(kit.median_split(X[:, 0], train, "feature1"))
    return {k: v[ids] for k, v in groups.items()}


def units(quick: bool) -> list[dict]:
    names = QUICK_PREDICTORS if quick else PREDICTOR_NAMES
    return [{"split": s, "predictor": p} for s in range(1 if quick else SPLITS) for p in names]


def unit_name(unit: dict) -> str:
    return f"split{unit['split']}-{unit['predictor']}"


def experiment(quick: bool) -> Experiment:
    return Experiment(TREE, UTILITIES, uc_cap=20 if quick else 100, passes=5 if quick else 100,
                      cancellation_index=False)


def config(quick: bool) -> dict:
    e = experiment(quick)
    return {"records": RECORDS, "features": FEATURES, "proportions": PROPORTIONS,
            "predictors": [repr(p) for p in PREDICTORS.values()],
            "utilities": {k: u.to_json() for k, u in UTILITIES.items()}, "caps": [e.uc_cap, e.passes], "version": 1}


def run(loaded, unit: dict, quick: bool) -> dict:
    """K.1's protocol on one stratified split of the sample for one base predictor."""
    raw, y, devices = loaded
    sizes = dict(zip(PROPORTIONS, kit.allocate(len(y), PROPORTIONS.values())))
    parts = kit.stratified_parts(y, np.arange(len(y)), sizes, unit["split"])
    train = parts.pop("train")
    X = kit.standardise(raw, train)
    groups = {part: subgroups(raw, devices, train, ids) for part, ids in parts.items()}
    out, _ = kit.run_predictor(experiment(quick), unit["predictor"], X, y, train, parts, groups)
    return out


def table13(runs):
    """Table 13: every method pooled over the predictors and splits."""
    return kit.pooled_table(runs, TABLE13, METHODS, "Table 13 (N-BaIoT; pooled over predictors and splits)",
                            "table13", EXPLANATIONS)


TABLES = {"table13": table13}


def settings(runs) -> str:
    return kit.chosen_settings(runs)
