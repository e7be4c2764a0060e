"""iNaturalist 2019 (K.2): Table 1's iNaturalist half and Tables 4-6.

    "We use 3,344 images from 30 species, with at most 120 images per species. Each of five data
    splits contains 1,505 training, 669 calibration, 503 validation, and 667 test images. The
    species are the leaves of the supplied biological taxonomy ... depths 3, 4, 5, 6, 7
    correspond to class, order, family, genus, and species."  (K.2)

    "Each image is represented by the 512-dimensional feature vector before the final
    classification layer of an ImageNet-pretrained ResNet-18, which is not fine-tuned on
    iNaturalist."  (K.2)

Data (``--data``, one folder):

* ``train2019.json`` (and ``val2019.json`` when present) of the iNaturalist 2019 competition: the
  COCO-style ``images`` (``id``, ``file_name``, ``width``, ``height``), ``annotations``
  (``image_id``, ``category_id``) and ``categories`` (``id``, ``name`` and the taxonomy ``kingdom``
  ... ``genus``); ``categories.json``, the un-obfuscated names, replaces them when present;
* ``features.npz``: the precomputed ResNet-18 features, arrays ``image_id`` (n) and ``features``
  (n x 512), and optionally ``brightness`` and ``contrast`` (n); without them both are computed
  from the images (``file_name`` under the folder) as the mean and the standard deviation of the
  grey levels in [0, 1];
* ``species.txt`` (optional): the category ids to use, one a line.  The paper's 30 species are
  drawn in its Figure 4, which the text extraction lost; without the file the kit draws 30 of the
  species with features at random (seed 0).

Each species keeps at most 120 of its images (drawn at random, seed 0).  Label tree: root ->
kingdom -> phylum -> class -> order -> family -> genus -> species (depth 7, K.2).  Utilities
(K.2): top-1 correctness at depths 3-7.  Subgroups (K.2, ``|C| = 7``): everyone; brightness below
and at least its training median; contrast likewise; aspect ratio (width / height) below one and
at least one.  Splits: 1505/669/503/667 of 3,344 (in proportion for another total), stratified,
seed = the split's number.  The features are standardised with the training rows' statistics
(K.2 leaves their scale open).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from huc_ref import LabelTree, Top1AtDepth
from huc_ref.errors import HUCError

from . import kit
from .protocol import METHODS, PREDICTORS, Experiment

NAME = "inaturalist"
TITLE = "iNaturalist 2019 (K.2)"
SOURCE = ("the iNaturalist 2019 competition (`train2019.json`, `val2019.json`, `categories.json`, and the images "
          "`train_val2019/`), with ResNet-18 features computed by the user")
RANKS = ["kingdom", "phylum", "class", "order", "family", "genus"]
DEPTHS = {"class": 3, "order": 4, "family": 5, "genus": 6, "species": 7}  # K.2
SPECIES, PER_SPECIES, DIMENSION = 30, 120, 512  # K.2
SIZES = {"train": 1505, "cal": 669, "val": 503, "test": 667}  # K.2, of 3,344 images
PREDICTOR_NAMES = ["LR", "GNB", "DT", "RF", "XGB", "MLP"]
QUICK_PREDICTORS = ["LR", "GNB"]
SPLITS = 5
METHODS_5 = ["Baseline", "UC-B", "Temp.", "Vec.", "Dir."]
METHODS_6 = ["HUC-B", "HUC-B (0.05)", "Temp. -> HUC", "Vec. -> HUC", "Dir. -> HUC"]

# Transcribed from the paper's text: Table 1's iNaturalist half, Table 4 (pooled), Tables 5-6 (by predictor).
TABLE1 = kit.paper_table("""
Baseline | .489 ± .090 | .900 ± .108 | .272 ± .161 | .125 ± .059 | 0.0 ± 0.0
UC-B | .462 ± .088 | .914 ± .066 | .045 ± .018 | .036 ± .011 | 25.4 ± 24.1
HUC-B | .463 ± .090 | .922 ± .060 | .075 ± .032 | .034 ± .009 | 145.9 ± 180.5
Temp. | .489 ± .090 | .890 ± .110 | .130 ± .114 | .092 ± .076 | 0.0 ± 0.0
Temp. -> HUC | .470 ± .088 | .930 ± .050 | .047 ± .014 | .029 ± .008 | 43.1 ± 25.9
Vec. | .489 ± .095 | .899 ± .100 | .114 ± .092 | .083 ± .073 | 0.0 ± 0.0
Vec. -> HUC | .478 ± .095 | .929 ± .053 | .050 ± .018 | .031 ± .008 | 28.2 ± 22.4
Dir. | .436 ± .112 | .912 ± .063 | .105 ± .053 | .055 ± .023 | 0.0 ± 0.0
Dir. -> HUC | .435 ± .112 | .912 ± .062 | .109 ± .052 | .056 ± .023 | 4.3 ± 10.5
""")
TABLE4 = kit.paper_table("""
Baseline | .4886 ± .0895 | .9001 ± .1082 | .2721 ± .1615 | .1251 ± .0595 | 0.00 ± 0.00
UC-B | .4618 ± .0877 | .9138 ± .0664 | .0452 ± .0177 | .0361 ± .0108 | 25.43 ± 24.07
HUC-B | .4633 ± .0896 | .9223 ± .0599 | .0748 ± .0317 | .0345 ± .0090 | 145.93 ± 180.47
HUC-B (0.05) | .4853 ± .0888 | .8971 ± .1106 | .1837 ± .1767 | .0815 ± .0725 | 329.23 ± 270.41
Temp. | .4886 ± .0895 | .8902 ± .1097 | .1303 ± .1143 | .0920 ± .0756 | 0.00 ± 0.00
Temp. -> HUC | .4702 ± .0878 | .9301 ± .0501 | .0473 ± .0135 | .0289 ± .0081 | 43.07 ± 25.92
Vec. | .4888 ± .0952 | .8986 ± .0999 | .1144 ± .0922 | .0827 ± .0726 | 0.00 ± 0.00
Vec. -> HUC | .4781 ± .0950 | .9291 ± .0528 | .0496 ± .0176 | .0313 ± .0079 | 28.23 ± 22.38
Dir. | .4365 ± .1125 | .9119 ± .0626 | .1047 ± .0532 | .0551 ± .0230 | 0.00 ± 0.00
Dir. -> HUC | .4349 ± .1116 | .9120 ± .0623 | .1093 ± .0523 | .0556 ± .0227 | 4.27 ± 10.53
""")
TABLE5 = kit.paper_table("""
LR | Baseline | .5436 ± .0222 | .9522 ± .0028 | .2439 ± .0136 | .1225 ± .0066 | 0.00 ± 0.00
LR | UC-B | .4786 ± .0206 | .9531 ± .0031 | .0721 ± .0135 | .0536 ± .0043 | 9.80 ± 3.42
LR | Temp. | .5436 ± .0222 | .9537 ± .0030 | .0704 ± .0072 | .0574 ± .0073 | 0.00 ± 0.00
LR | Vec. | .5460 ± .0192 | .9556 ± .0028 | .0639 ± .0082 | .0379 ± .0060 | 0.00 ± 0.00
LR | Dir. | .5055 ± .0115 | .9521 ± .0028 | .1810 ± .0101 | .0891 ± .0098 | 0.00 ± 0.00
GNB | Baseline | .5244 ± .0213 | .9245 ± .0107 | .4512 ± .0212 | .1977 ± .0164 | 0.00 ± 0.00
GNB | UC-B | .4774 ± .0181 | .8791 ± .0114 | .0533 ± .0098 | .0400 ± .0119 | 34.60 ± 2.07
GNB | Temp. | .5244 ± .0213 | .8582 ± .0161 | .2089 ± .0098 | .1426 ± .0087 | 0.00 ± 0.00
GNB | Vec. | .5253 ± .0161 | .8807 ± .0132 | .1787 ± .0120 | .1355 ± .0090 | 0.00 ± 0.00
GNB | Dir. | .5277 ± .0184 | .9298 ± .0080 | .0754 ± .0144 | .0444 ± .0097 | 0.00 ± 0.00
DT | Baseline | .2960 ± .0181 | .6637 ± .0096 | .4778 ± .0188 | .1948 ± .0110 | 0.00 ± 0.00
DT | UC-B | .2750 ± .0167 | .7825 ± .0115 | .0437 ± .0152 | .0337 ± .0049 | 70.60 ± 20.31
DT | Temp. | .2960 ± .0181 | .6629 ± .0096 | .3446 ± .0140 | .2348 ± .0075 | 0.00 ± 0.00
DT | Vec. | .2828 ± .0107 | .6883 ± .0089 | .2865 ± .0163 | .2175 ± .0166 | 0.00 ± 0.00
DT | Dir. | .2666 ± .0280 | .7840 ± .0082 | .0971 ± .0119 | .0481 ± .0109 | 0.00 ± 0.00
RF | Baseline | .5187 ± .0081 | .9509 ± .0027 | .2957 ± .0089 | .1246 ± .0089 | 0.00 ± 0.00
RF | UC-B | .5178 ± .0069 | .9550 ± .0027 | .0299 ± .0037 | .0328 ± .0067 | 18.80 ± 7.46
RF | Temp. | .5187 ± .0081 | .9572 ± .0022 | .0285 ± .0043 | .0249 ± .0049 | 0.00 ± 0.00
RF | Vec. | .5220 ± .0155 | .9573 ± .0021 | .0390 ± .0184 | .0215 ± .0053 | 0.00 ± 0.00
RF | Dir. | .2984 ± .0157 | .8933 ± .0067 | .1638 ± .0076 | .0769 ± .0067 | 0.00 ± 0.00
XGB | Baseline | .5145 ± .0148 | .9526 ± .0031 | .0778 ± .0105 | .0525 ± .0061 | 0.00 ± 0.00
XGB | UC-B | .5040 ± .0090 | .9559 ± .0022 | .0420 ± .0125 | .0298 ± .0050 | 11.20 ± 4.76
XGB | Temp. | .5145 ± .0148 | .9525 ± .0031 | .0814 ± .0125 | .0526 ± .0078 | 0.00 ± 0.00
XGB | Vec. | .5178 ± .0118 | .9526 ± .0034 | .0732 ± .0073 | .0494 ± .0078 | 0.00 ± 0.00
XGB | Dir. | .5127 ± .0090 | .9573 ± .0032 | .0417 ± .0051 | .0269 ± .0053 | 0.00 ± 0.00
MLP | Baseline | .5343 ± .0142 | .9565 ± .0026 | .0860 ± .0513 | .0587 ± .0176 | 0.00 ± 0.00
MLP | UC-B | .5178 ± .0143 | .9571 ± .0033 | .0304 ± .0051 | .0267 ± .0022 | 7.60 ± 5.22
MLP | Temp. | .5343 ± .0142 | .9567 ± .0027 | .0478 ± .0077 | .0397 ± .0044 | 0.00 ± 0.00
MLP | Vec. | .5388 ± .0114 | .9572 ± .0026 | .0451 ± .0093 | .0342 ± .0070 | 0.00 ± 0.00
MLP | Dir. | .5079 ± .0140 | .9549 ± .0022 | .0695 ± .0267 | .0455 ± .0090 | 0.00 ± 0.00
""")
TABLE6 = kit.paper_table("""
LR | HUC-B | .5094 ± .0049 | .9550 ± .0027 | .0876 ± .0050 | .0354 ± .0048 | 41.80 ± 7.09
LR | HUC-B (0.05) | .5286 ± .0144 | .9559 ± .0031 | .1124 ± .0198 | .0446 ± .0081 | 400.20 ± 62.97
LR | Temp. -> HUC | .5181 ± .0093 | .9560 ± .0025 | .0584 ± .0114 | .0336 ± .0090 | 46.00 ± 31.02
LR | Vec. -> HUC | .5406 ± .0104 | .9566 ± .0028 | .0551 ± .0109 | .0349 ± .0055 | 17.80 ± 14.86
LR | Dir. -> HUC | .5055 ± .0115 | .9521 ± .0028 | .1810 ± .0101 | .0891 ± .0098 | 0.00 ± 0.00
GNB | HUC-B | .4894 ± .0244 | .9225 ± .0092 | .1108 ± .0140 | .0426 ± .0074 | 190.00 ± 23.82
GNB | HUC-B (0.05) | .5280 ± .0228 | .8986 ± .0262 | .3707 ± .0226 | .1644 ± .0181 | 751.00 ± 57.04
GNB | Temp. -> HUC | .5013 ± .0223 | .9349 ± .0069 | .0598 ± .0080 | .0345 ± .0086 | 58.80 ± 18.36
GNB | Vec. -> HUC | .5124 ± .0309 | .9345 ± .0071 | .0660 ± .0241 | .0362 ± .0071 | 43.40 ± 13.03
GNB | Dir. -> HUC | .5190 ± .0232 | .9298 ± .0082 | .0928 ± .0185 | .0439 ± .0051 | 14.80 ± 11.86
DT | HUC-B | .2699 ± .0158 | .7936 ± .0047 | .1006 ± .0236 | .0392 ± .0060 | 507.00 ± 126.11
DT | HUC-B (0.05) | .2939 ± .0210 | .6599 ± .0163 | .4741 ± .0119 | .1955 ± .0123 | 172.80 ± 386.39
DT | Temp. -> HUC | .2810 ± .0198 | .8216 ± .0067 | .0386 ± .0069 | .0261 ± .0022 | 68.20 ± 29.15
DT | Vec. -> HUC | .2747 ± .0180 | .8149 ± .0071 | .0493 ± .0109 | .0316 ± .0042 | 52.40 ± 33.13
DT | Dir. -> HUC | .2660 ± .0290 | .7847 ± .0085 | .1068 ± .0193 | .0515 ± .0114 | 10.80 ± 19.51
RF | HUC-B | .5034 ± .0094 | .9513 ± .0030 | .0429 ± .0116 | .0286 ± .0034 | 79.20 ± 21.49
RF | HUC-B (0.05) | .5196 ± .0063 | .9544 ± .0021 | .0410 ± .0081 | .0206 ± .0033 | 385.20 ± 70.12
RF | Temp. -> HUC | .5070 ± .0116 | .9564 ± .0028 | .0315 ± .0072 | .0204 ± .0007 | 29.60 ± 22.13
RF | Vec. -> HUC | .5226 ± .0122 | .9571 ± .0022 | .0298 ± .0024 | .0232 ± .0073 | 12.00 ± 12.90
RF | Dir. -> HUC | .2984 ± .0157 | .8933 ± .0067 | .1638 ± .0076 | .0769 ± .0067 | 0.00 ± 0.00
XGB | HUC-B | .4948 ± .0133 | .9545 ± .0026 | .0586 ± .0089 | .0360 ± .0038 | 30.80 ± 13.88
XGB | HUC-B (0.05) | .5106 ± .0210 | .9557 ± .0025 | .0528 ± .0138 | .0319 ± .0067 | 152.20 ± 72.97
XGB | Temp. -> HUC | .4978 ± .0124 | .9545 ± .0027 | .0563 ± .0045 | .0338 ± .0076 | 34.60 ± 11.74
XGB | Vec. -> HUC | .4939 ± .0109 | .9544 ± .0022 | .0577 ± .0163 | .0378 ± .0057 | 31.80 ± 8.76
XGB | Dir. -> HUC | .5127 ± .0090 | .9573 ± .0032 | .0417 ± .0051 | .0269 ± .0053 | 0.00 ± 0.00
MLP | HUC-B | .5127 ± .0225 | .9567 ± .0022 | .0484 ± .0339 | .0252 ± .0136 | 26.80 ± 11.90
MLP | HUC-B (0.05) | .5310 ± .0130 | .9581 ± .0024 | .0514 ± .0268 | .0319 ± .0112 | 114.00 ± 56.09
MLP | Temp. -> HUC | .5160 ± .0230 | .9570 ± .0027 | .0389 ± .0081 | .0247 ± .0067 | 21.20 ± 8.32
MLP | Vec. -> HUC | .5241 ± .0156 | .9574 ± .0027 | .0400 ± .0094 | .0245 ± .0052 | 12.00 ± 8.40
MLP | Dir. -> HUC | .5079 ± .0140 | .9549 ± .0022 | .0695 ± .0267 | .0455 ± .0090 | 0.00 ± 0.00
""")
EXPLANATIONS: dict = {}
NOTES = """\
Not reproducible offline: the images, annotations and features are downloads.  Where the kit
departs from K.2 or fills a gap it leaves:

- the 30 species are drawn at random (seed 0) unless `species.txt` lists them: the paper's are in
  its Figure 4, which the text extraction lost;
- the ResNet-18 features are the user's (`features.npz`); the kit reads them and does not compute
  them (no network, no torch);
- brightness and contrast are the mean and standard deviation of the grey levels in [0, 1] (K.2
  does not define them), from `features.npz` when it has them, else from the images;
- the 512 features are standardised with the training rows' statistics; the base predictors are
  K.1's, chosen on validation as for SUPPORT2."""


def _json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise HUCError(f"{NAME}: cannot read {path}: {e}", kind="option") from None


def grey_levels(path: Path) -> tuple[float, float]:
    """An image's brightness and contrast: the mean and the standard deviation of its grey levels
    in [0, 1] (Pillow's ``L`` conversion)."""
    from PIL import Image
    with Image.open(path) as image:
        grey = np.asarray(image.convert("L"), dtype=float) / 255.0
    return float(grey.mean()), float(grey.std())


def load(path):
    """The images of the chosen species that have features: (features, species ids, the label
    tree, brightness, contrast, aspect ratio, category ids)."""
    root = kit.check_data(path, NAME, "a folder with train2019.json and features.npz", SOURCE)
    annotations = [root / f for f in ("train2019.json", "val2019.json") if (root / f).is_file()]
    if not annotations:
        raise HUCError(f"{NAME}: no train2019.json in --data {root}", kind="option")
    images, labels, categories = {}, {}, {}
    for f in annotations:
        doc = _json(f)
        images.update({im["id"]: im for im in doc["images"]})
        labels.update({a["image_id"]: a["category_id"] for a in doc["annotations"]})
        categories.update({c["id"]: c for c in doc["categories"]})
    if (root / "categories.json").is_file():
        categories.update({c["id"]: c for c in _json(root / "categories.json")})
    if not (root / "features.npz").is_file():
        raise HUCError(f"{NAME}: no features.npz in --data {root} (the ResNet-18 features: arrays image_id and "
                       "features, n x 512)", kind="option")
    npz = np.load(root / "features.npz")
    ids, F = npz["image_id"].astype(int), np.asarray(npz["features"], dtype=float)
    if F.ndim != 2 or F.shape != (len(ids), DIMENSION):
        raise HUCError(f"{NAME}: features.npz's features have shape {F.shape}, expected ({len(ids)}, {DIMENSION})",
                       kind="option")
    row = {int(i): k for k, i in enumerate(ids)}
    rng = np.random.default_rng(0)
    have = sorted({labels[i] for i in row if i in labels})
    if (root / "species.txt").is_file():
        chosen = [int(x) for x in (root / "species.txt").read_text().split()]
        unknown = [c for c in chosen if c not in have]
        if unknown:
            raise HUCError(f"{NAME}: species.txt lists categories without featured images: {unknown}", kind="option")
    else:
        if len(have) < SPECIES:
            raise HUCError(f"{NAME}: {len(have)} species have features, fewer than K.2's {SPECIES}; list the ones to "
                           "use in species.txt", kind="option")
        chosen = sorted(rng.choice(have, size=SPECIES, replace=False).tolist())
    picked = []
    for c in chosen:
        mine = sorted(i for i in row if labels.get(i) == c)
        if len(mine) > PER_SPECIES:
            mine = sorted(rng.choice(mine, size=PER_SPECIES, replace=False).tolist())
        picked += mine
    paths = [f"{'/'.join(categories[c][r] for r in RANKS)}/{categories[c]['name']}" for c in chosen]
    tree = LabelTree.from_paths(paths, root="life", labels=paths)
    y = np.array([chosen.index(labels[i]) for i in picked])
    X = F[[row[i] for i in picked]]
    if "brightness" in npz and "contrast" in npz:
        light = np.asarray(npz["brightness"], dtype=float)[[row[i] for i in picked]]
        contrast = np.asarray(npz["contrast"], dtype=float)[[row[i] for i in picked]]
    else:
        pairs = [grey_levels(root / images[i]["file_name"]) for i in picked]
        light, contrast = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    aspect = np.array([images[i]["width"] / images[i]["height"] for i in picked])
    return X, y, tree, light, contrast, aspect


def subgroups(light, contrast, aspect, train, ids) -> dict:
    """K.2's seven indicators (everyone; brightness and contrast below / at least their training
    medians; aspect ratio below one / at least one), on the rows ``ids``.

    >>> g = subgroups(np.array([0.1, 0.5, 0.9]), np.array([0.3, 0.2, 0.1]), np.array([0.5, 1.0, 2.0]),
    ...               np.arange(3), np.arange(3))
    >>> {k: v.tolist() for k, v in g.items()}  # doctest: +NORMALIZE_WHITESPACE
    {'all': [1, 1, 1], 'brightness<median': [1, 0, 0], 'brightness>=median': [0, 1, 1],
     'contrast<median': [0, 0, 1], 'contrast>=median': [1, 1, 0], 'aspect<1': [1, 0, 0], 'aspect>=1': [0, 1, 1]}
    """
    groups = {"all": np.ones(len(light), dtype=int), **kit.median_split(light, train, "brightness<"),
              **kit.median_split(contrast, train, "contrast<"),
              "aspect<1": (aspect < 1).astype(int), "aspect>=1": (aspect >= 1).astype(int)}
    return {k: v[ids] for k, v in groups.items()}


def utilities(tree) -> dict:
    """K.2's five top-1 correctness utilities, at the depths of class ... species."""
    return {rank: Top1AtDepth(tree, depth) for rank, depth in DEPTHS.items()}


def units(quick: bool) -> list[dict]:
    names = QUICK_PREDICTORS if quick else PREDICTOR_NAMES
    return [{"split": s, "predictor": p} for s in range(1 if quick else SPLITS) for p in names]


def unit_name(unit: dict) -> str:
    return f"split{unit['split']}-{unit['predictor']}"


def config(quick: bool) -> dict:
    return {"species": SPECIES, "per_species": PER_SPECIES, "sizes": SIZES, "depths": DEPTHS,
            "predictors": [repr(p) for p in PREDICTORS.values()], "caps": [20, 5] if quick else [100, 100],
            "version": 1}


def run(loaded, unit: dict, quick: bool) -> dict:
    """K.1's protocol on one stratified split for one base predictor."""
    F, y, tree, light, contrast, aspect = loaded
    sizes = dict(zip(SIZES, kit.allocate(len(y), SIZES.values())))
    parts = kit.stratified_parts(y, np.arange(len(y)), sizes, unit["split"])
    train = parts.pop("train")
    X = kit.standardise(F, train)
    groups = {part: subgroups(light, contrast, aspect, train, ids) for part, ids in parts.items()}
    e = Experiment(tree, utilities(tree), uc_cap=20 if quick else 100, passes=5 if quick else 100,
                   cancellation_index=False)
    out, _ = kit.run_predictor(e, unit["predictor"], X, y, train, parts, groups)
    return out


def table1(runs):
    """Table 1's iNaturalist half (Table 4 without HUC-B (0.05), at three decimals)."""
    methods = [m for m in METHODS if m != "HUC-B (0.05)"]
    return kit.pooled_table(runs, TABLE1, methods, "Table 1, iNaturalist half (pooled over predictors and splits)",
                            "table1", EXPLANATIONS, digits=3)


def table4(runs):
    return kit.pooled_table(runs, TABLE4, METHODS, "Table 4 (iNaturalist; pooled over predictors and splits)",
                            "table4", EXPLANATIONS)


def table5(runs):
    return kit.predictor_table(runs, TABLE5, METHODS_5, PREDICTOR_NAMES, "Table 5 (iNaturalist; by base predictor)",
                               "table5", EXPLANATIONS)


def table6(runs):
    return kit.predictor_table(runs, TABLE6, METHODS_6, PREDICTOR_NAMES, "Table 6 (iNaturalist; by base predictor)",
                               "table6", EXPLANATIONS)


TABLES = {"table1": table1, "table4": table4, "table5": table5, "table6": table6}


def settings(runs) -> str:
    return kit.chosen_settings(runs)
