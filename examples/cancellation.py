"""Cancellation on four leaves (Sec. 2.2, App. D.1): UC = 0, yet the tree is miscalibrated.

    "Consider the constant predictor P = p = (1/4, 1/4, 1/4, 1/4).  Let u = (-1, 1, 1, 1)
    and let the true conditional leaf distribution be eta(p) = (1/4, 0, 3/8, 3/8). ...
    Consequently, D_top(p) = 1/4, D_L(p) = -1/4, D_R(p) = 0.  The predicted and actual
    mean utilities are both 1/2, so the total residual vanishes." (App. D.1)

Eq. (5):  D_full = D_top + D_L + D_R, with
    D_top = (q*_{0,R} - q_{0,R}) (ubar_{0,R} - ubar_{0,L})
    D_t   = q*_{0,t} (q*_{t,R} - q_{t,R}) (ubar_{t,R} - ubar_{t,L}).

Every number below is exact (:mod:`huc_ref.demo`, which ``huc demo`` prints).

    python examples/cancellation.py [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from huc_ref.demo import ETA, TREE, P, U, walkthrough  # noqa: E402


def draw(moments, path: Path):
    """The tree with each internal node coloured and labelled by its contribution."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    pos = {"v0": (0.5, 1.0), "vL": (0.25, 0.5), "vR": (0.75, 0.5),
           "y1": (0.125, 0.0), "y2": (0.375, 0.0), "y3": (0.625, 0.0), "y4": (0.875, 0.0)}
    fig, ax = plt.subplots(figsize=(6, 4))
    for v in TREE.internal_nodes:
        for c in TREE.children(v):
            ax.plot(*zip(pos[v], pos[c]), color="grey", zorder=1)
    cmap = plt.get_cmap("coolwarm")
    for node, (x, y) in pos.items():
        if node in moments:
            m = float(moments[node])
            ax.scatter([x], [y], s=1800, color=cmap(0.5 + 2 * m), edgecolor="black", zorder=2)
            ax.text(x, y, f"{node}\n{moments[node]}", ha="center", va="center", fontsize=10, zorder=3)
        else:
            k = TREE.label_index(node)
            ax.scatter([x], [y], s=900, color="white", edgecolor="black", zorder=2)
            ax.text(x, y - 0.17, f"{node}\nu={U.b[k]}\np={P[k]}, eta={ETA[k]}", ha="center", va="top", fontsize=8)
            ax.text(x, y, node, ha="center", va="center", fontsize=9, zorder=3)
    ax.set_title("App. D.1: node contributions +1/4 and -1/4 cancel: UC = 0, HUC = 1/4")
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.45, 1.2)
    ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the same (this example is instant)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "figures"))
    args = ap.parse_args(argv)
    text, moments = walkthrough()
    print(text)
    try:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        draw(moments, out / "cancellation.png")
        print(f"figure: {out / 'cancellation.png'}")
    except ImportError:
        print("(matplotlib not installed: pip install huc-ref[plot] for the figure)")
    return moments


if __name__ == "__main__":
    main()
