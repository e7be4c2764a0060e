"""NSL-KDD (K.5): Table 12.

    "NSL-KDD uses 25,192 records with five leaf labels: normal, dos, probe, r2l, and u2r. The
    root separates normal traffic from attacks, and the attack node separates the four attack
    families. The 41 input attributes give 118 numerical features after categorical encoding.
    The six base predictors use five stratified data splits, with training/calibration/
    validation/test proportions 0.45/0.20/0.15/0.20."  (K.5)

Data: ``KDDTrain+_20Percent.txt`` of the NSL-KDD distribution (Canadian Institute for
Cybersecurity, University of New Brunswick): 25,192 comma-separated records without a header,
the 41 attributes, the attack name and the difficulty level.  ``--data`` is that file or the
folder holding it.  The attack names map to the four families by the usual NSL-KDD mapping
(:data:`FAMILIES`).  Features: ``protocol_type``, ``service`` and ``flag`` as indicators of
their values in the file (118 columns with the 38 numerical attributes on the published file),
the numerical attributes standardised with the training rows' statistics (K.5 leaves their
scale open).

Utilities (K.5, ``|U| = 3``): top-1 correctness of the root decision ``v_0(p)`` (normal when
``p_normal >= pi_attack``), of the family decision (normal, or the attack family of largest
mass after the root chose attack: :class:`decisions.TopDown` at depth 2) and of the global-leaf
decision (the most probable leaf; ties in the order normal, dos, probe, r2l, u2r).  Subgroups
(K.5, ``|C| = 9``): everyone; tcp, udp, icmp; the three most frequent training services;
``src_bytes`` at most and greater than its training median.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from huc_ref import LabelTree, Top1AtDepth, TopK
from huc_ref.errors import HUCError

from . import kit
from .decisions import TopDown
from .protocol import METHODS, PREDICTORS, Experiment

NAME = "nslkdd"
TITLE = "NSL-KDD (K.5)"
FILE = "KDDTrain+_20Percent.txt"
SOURCE = (f"the NSL-KDD distribution of the Canadian Institute for Cybersecurity (University of New Brunswick): "
          f"`{FILE}`")
ATTRIBUTES = [
    "duration", "protocol_type", "service", "flag", "src_bytes", "dst_bytes", "land", "wrong_fragment", "urgent",
    "hot", "num_failed_logins", "logged_in", "num_compromised", "root_shell", "su_attempted", "num_root",
    "num_file_creations", "num_shells", "num_access_files", "num_outbound_cmds", "is_host_login", "is_guest_login",
    "count", "srv_count", "serror_rate", "srv_serror_rate", "rerror_rate", "srv_rerror_rate", "same_srv_rate",
    "diff_srv_rate", "srv_diff_host_rate", "dst_host_count", "dst_host_srv_count", "dst_host_same_srv_rate",
    "dst_host_diff_srv_rate", "dst_host_same_src_port_rate", "dst_host_srv_diff_host_rate", "dst_host_serror_rate",
    "dst_host_srv_serror_rate", "dst_host_rerror_rate", "dst_host_srv_rerror_rate"]
CATEGORICAL = ["protocol_type", "service", "flag"]
#: Attack name -> family (the four attack families of NSL-KDD, with the test set's names too).
FAMILIES = {
    **dict.fromkeys(["back", "land", "neptune", "pod", "smurf", "teardrop", "apache2", "udpstorm", "processtable",
                     "mailbomb"], "dos"),
    **dict.fromkeys(["satan", "ipsweep", "nmap", "portsweep", "mscan", "saint"], "probe"),
    **dict.fromkeys(["guess_passwd", "ftp_write", "imap", "phf", "multihop", "warezmaster", "warezclient", "spy",
                     "xlock", "xsnoop", "snmpguess", "snmpgetattack", "httptunnel", "sendmail", "named"], "r2l"),
    **dict.fromkeys(["buffer_overflow", "loadmodule", "rootkit", "perl", "sqlattack", "xterm", "ps"], "u2r"),
    "normal": "normal"}
LEAVES = ["normal", "dos", "probe", "r2l", "u2r"]
TREE = LabelTree.from_nested({"root": {"normal": None, "attack": ["dos", "probe", "r2l", "u2r"]}}, labels=LEAVES)
UTILITIES = {"root": Top1AtDepth(TREE, 1), "family": TopDown(TREE, 2), "leaf": TopK(TREE, 1)}
PROPORTIONS = {"train": 45, "cal": 20, "val": 15, "test": 20}  # K.5
PREDICTOR_NAMES = ["LR", "GNB", "DT", "RF", "XGB", "MLP"]
QUICK_PREDICTORS = ["LR", "GNB"]
SPLITS = 5

# Table 12 (six predictors x five splits), transcribed from the paper's text.
TABLE12 = kit.paper_table("""
Baseline | .9504 ± .1004 | .9577 ± .0653 | .0471 ± .1011 | .0452 ± .0980 | 0.00 ± 0.00
UC-B | .9816 ± .0244 | .9687 ± .0444 | .0039 ± .0034 | .0035 ± .0031 | 62.07 ± 39.19
HUC-B | .9801 ± .0283 | .9672 ± .0514 | .0039 ± .0031 | .0033 ± .0026 | 92.37 ± 69.38
HUC-B (0.05) | .9505 ± .1004 | .9621 ± .0605 | .0448 ± .1014 | .0432 ± .0983 | 85.37 ± 75.29
Temp. | .9504 ± .1004 | .9619 ± .0563 | .0285 ± .0555 | .0275 ± .0552 | 0.00 ± 0.00
Temp. -> HUC | .9838 ± .0195 | .9766 ± .0363 | .0036 ± .0028 | .0032 ± .0026 | 64.43 ± 66.43
Vec. | .9735 ± .0429 | .9647 ± .0553 | .0129 ± .0195 | .0125 ± .0196 | 0.00 ± 0.00
Vec. -> HUC | .9844 ± .0181 | .9812 ± .0324 | .0033 ± .0025 | .0029 ± .0023 | 58.93 ± 58.73
Dir. | .9738 ± .0411 | .9652 ± .0465 | .0115 ± .0178 | .0112 ± .0177 | 0.00 ± 0.00
Dir. -> HUC | .9842 ± .0176 | .9690 ± .0400 | .0033 ± .0023 | .0029 ± .0020 | 44.23 ± 55.22
""")
EXPLANATIONS: dict = {}
NOTES = """\
Not reproducible offline: NSL-KDD is a download.  Where the kit fills a gap K.5 leaves: the
attack names map to the four families by the usual NSL-KDD mapping; the 38 numerical attributes
are standardised with the training rows' statistics; the three categorical attributes are
indicators of the values in the file (118 features with the numerical ones, as K.5 counts them);
the base predictors are K.1's, chosen on validation as for SUPPORT2."""


def data_file(path) -> Path:
    """``--data``: the file itself or the folder holding ``KDDTrain+_20Percent.txt``."""
    path = kit.check_data(path, NAME, f"`{FILE}`", SOURCE)
    if path.is_dir():
        path = path / FILE
        if not path.is_file():
            raise HUCError(f"{NAME}: no {FILE} in --data {path.parent}", kind="option")
    return path


def load(path):
    """The records: (attributes as a list of rows of strings, leaf ids), each line checked to
    have 43 fields (41 attributes, the attack name, the difficulty level)."""
    path = data_file(path)
    rows, y = [], []
    for i, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.strip().split(",")
        if len(fields) != 43:
            raise HUCError(f"{NAME}: {path.name} line {i} has {len(fields)} fields, expected 43 (41 attributes, the "
                           "attack name, the difficulty level)", kind="option")
        name = fields[41].strip()
        if name not in FAMILIES:
            raise HUCError(f"{NAME}: {path.name} line {i}: unknown attack name {name!r}", kind="option")
        rows.append(fields[:41])
        y.append(LEAVES.index(FAMILIES[name]))
    return rows, np.array(y)


def features(rows, train):
    """Indicators of the three categorical attributes' values in the file, then the 38 numerical
    attributes standardised with the training rows' statistics (K.5's 118 features on the published file).

    >>> rows = [["0", "tcp", "http", "SF"] + ["1"] * 37, ["2", "udp", "http", "S0"] + ["3"] * 37]
    >>> X = features(rows, np.array([0, 1]))
    >>> X.shape, X[:, :6].tolist()
    ((2, 43), [[1.0, 0.0, 1.0, 0.0, 1.0, -1.0], [0.0, 1.0, 1.0, 1.0, 0.0, 1.0]])
    """
    columns = []
    for name in CATEGORICAL:
        values = np.array([r[ATTRIBUTES.index(name)] for r in rows])
        columns += [(values == level).astype(float) for level in sorted(set(values))]
    numeric = [i for i, a in enumerate(ATTRIBUTES) if a not in CATEGORICAL]
    X = np.array([[float(r[i]) for i in numeric] for r in rows])
    return np.column_stack(columns + [kit.standardise(X, train)])


def subgroups(rows, train, ids) -> dict:
    """K.5's nine indicators (everyone; tcp, udp, icmp; the three most frequent training services;
    src_bytes at most / greater than its training median), on the rows ``ids``."""
    protocol = np.array([r[1] for r in rows])
    service = np.array([r[2] for r in rows])
    src = np.array([float(r[4]) for r in rows])
    names, counts = np.unique(service[train], return_counts=True)
    top = [names[i] for i in sorted(range(len(names)), key=lambda i: (-counts[i], names[i]))[:3]]
    groups = {"all": np.ones(len(rows), dtype=int)}
    groups.update({f"protocol={p}": (protocol == p).astype(int) for p in ("tcp", "udp", "icmp")})
    groups.update({f"service={s}": (service == s).astype(int) for s in top})
    groups.update(kit.median_split(src, train, "src_bytes"))
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
    return {"proportions": PROPORTIONS, "predictors": [repr(p) for p in PREDICTORS.values()],
            "utilities": {k: u.to_json() for k, u in UTILITIES.items()}, "caps": [e.uc_cap, e.passes], "version": 1}


def run(loaded, unit: dict, quick: bool) -> dict:
    """K.1's protocol on one stratified split for one base predictor."""
    rows, y = loaded
    sizes = dict(zip(PROPORTIONS, kit.allocate(len(y), PROPORTIONS.values())))
    parts = kit.stratified_parts(y, np.arange(len(y)), sizes, unit["split"])
    train = parts.pop("train")
    X = features(rows, train)
    groups = {part: subgroups(rows, train, ids) for part, ids in parts.items()}
    out, _ = kit.run_predictor(experiment(quick), unit["predictor"], X, y, train, parts, groups)
    return out


def table12(runs):
    """Table 12: every method pooled over the predictors and splits."""
    return kit.pooled_table(runs, TABLE12, METHODS, "Table 12 (NSL-KDD; pooled over predictors and splits)",
                            "table12", EXPLANATIONS)


TABLES = {"table12": table12}


def settings(runs) -> str:
    return kit.chosen_settings(runs)
