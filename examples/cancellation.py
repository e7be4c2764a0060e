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

from huc_ref import HUCError  # noqa: E402
from huc_ref.demo import ETA, TREE, P, U, walkthrough  # noqa: E402


def draw(moments, path: Path):
    """The tree with each internal node coloured and labelled by its contribution (huc_ref.plot),
    and each leaf's utility, prediction and true probability beneath it."""
    from huc_ref.plot import plot_tree, tree_layout
    fig = plot_tree(TREE, moments, title="App. D.1: contributions +1/4 and -1/4 cancel: UC = 0, HUC = 1/4",
                    value_label="contribution D_t (exact)")
    ax = fig.axes[0]
    for y, (x, _) in tree_layout(TREE).items():
        if TREE.is_leaf(y):
            k = TREE.label_index(y)
            ax.text(float(x), -0.42, f"u={U.b[k]}\np={P[k]}\neta={ETA[k]}", ha="center", va="top", fontsize=8)
    ax.set_ylim(-1.2, 2.5)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    from matplotlib import pyplot
    pyplot.close(fig)  # (saved: pyplot would keep it open in a process that runs this again)


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
    except HUCError:  # matplotlib is not installed
        print("(matplotlib not installed: pip install huc-ref[plot] for the figure)")
    return moments


if __name__ == "__main__":
    main()
