"""Figures of the library's own objects (matplotlib, the ``plot`` extra: ``pip install huc-ref[plot]``).

* :func:`plot_tree`: a label tree with each internal node coloured by a signed number (a
  node moment ``Gamma_{c,u,I,v}``, Def. 3.2, or an eq. (5) contribution ``D_t``), on a
  diverging colour scale centred at 0 with a colour bar; the nodes in ``V_T(u)`` named
  with their value (text colour chosen from the fill for contrast), the others greyed, a
  legend saying which is which;
* :func:`plot_audit`: an :class:`~huc_ref.audit.AuditResult` per utility: the tree coloured
  by each relevant node's witness moment, and below it the score distribution
  ``mu_u(p_i)`` (weighted) with the witness intervals of UC and of every node (Algorithm 2);
* :func:`plot_trajectories`: boosting runs (Theorem 3.5): UC, HUC and the log-loss decrease
  of every update against the guaranteed ``eps^2 / 2``.

Each returns the matplotlib ``Figure``; nothing is shown or saved unless asked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from numbers import Real

from .audit import atom_terms
from .distribution import FiniteDistribution
from .engines import audit
from .errors import HUCError, given, one_of
from .rational import exact
from .results import AuditResult
from .tree import LabelTree

__all__ = ["tree_layout", "text_colour", "plot_tree", "plot_audit", "plot_trajectories"]


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise HUCError("plot: matplotlib is not installed (pip install 'huc-ref[plot]')", kind="dependency") from None
    if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "module://matplotlib_inline.backend_inline"):
        matplotlib.use("Agg")  # files, not windows: this machine and CI have no screen
    import matplotlib.pyplot as plt
    return plt


#: The widest a tree's panel grows (inches): past about 30 leaves the leaves share this width
#: instead of widening the figure (a 1,000-leaf tree at 0.5 inch a leaf would pass matplotlib's
#: 2^16 pixels a side when saved).
PANEL_WIDTH = 18.0
#: The widest :func:`plot_audit` puts panels side by side (inches); more utilities go on new rows.
FIGURE_WIDTH = 36.0
#: :func:`plot_audit` draws the witness intervals of UC and of at most this many nodes a utility
#: (those of the largest sups), so that the legend fits beside the strip.
WITNESSES = 12
#: Up to this many leaves each is named under its circle; past it the leaves are unnamed dots (the
#: legend says how many), as 18 inches hold about 120 names rotated upright.
NAMED_LEAVES = 120


def panel_width(tree: LabelTree, least: float, per_leaf: float, margin: float) -> float:
    """The width (inches) of a panel drawing ``tree``: ``per_leaf`` a leaf plus ``margin``, at
    least ``least``, at most :data:`PANEL_WIDTH` (the leaves of Sec. 3.1's tree evenly spaced).

    >>> t = LabelTree.from_children("r", {"r": [f"y{k}" for k in range(1000)]})
    >>> panel_width(t, 5.5, 0.5, 3), panel_width(LabelTree.from_children("r", {"r": ["a", "b"]}), 5.5, 0.5, 3)
    (18.0, 5.5)
    """
    return min(PANEL_WIDTH, max(least, per_leaf * tree.K + margin))


def tree_layout(tree: LabelTree) -> dict:
    """``node -> (x, y)``: leaves evenly spaced in depth-first order on ``y = 0``, each internal
    node above the middle of its children, one unit above its highest child (Sec. 3.1's tree).

    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> tree_layout(t)["v0"], tree_layout(t)["y3"]  # exact positions
    ((Fraction(1, 2), 2), (Fraction(2, 3), 0))
    """
    leaves = [v for v in tree.nodes if tree.is_leaf(v)]  # pre-order: depth-first
    pos = {y: (Fraction(k, max(1, len(leaves) - 1)), 0) for k, y in enumerate(leaves)}
    for v in reversed(tree.nodes):  # children before parents
        if not tree.is_leaf(v):
            kids = tree.children(v)
            pos[v] = (sum(pos[c][0] for c in kids) / len(kids), max(pos[c][1] for c in kids) + 1)
    return pos


def text_colour(rgb) -> str:
    """Black or white, whichever reads better on the fill ``rgb`` (WCAG relative luminance)
    (the node labels of the tree figures of App. D.1 and Sec. 3.1).

    >>> text_colour((0.7, 0.0, 0.1)), text_colour((1.0, 0.9, 0.9)), text_colour((0.1, 0.2, 0.6))
    ('white', 'black', 'white')
    """
    def linear(c):
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(float(c)) for c in tuple(rgb)[:3])
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    # contrast against white (1.05 / (L + 0.05)) beats contrast against black ((L + 0.05) / 0.05) below L = 0.179
    return "white" if luminance < 0.179 else "black"


def plot_tree(tree: LabelTree, values: Mapping | None = None, *, relevant=None, ax=None, title: str | None = None,
              value_label: str = "signed node moment", scale: float | None = None):
    """Draw ``tree`` with the internal nodes in ``relevant`` (default: those in ``values``)
    coloured by ``values[node]`` on a diverging scale centred at 0 (colour bar shown); other
    internal nodes grey; leaves as small white circles.  Returns the figure.

    A figure of App. D.1's contributions (D_top = 1/4, D_L = -1/4, D_R = 0):

    >>> from fractions import Fraction
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> fig = plot_tree(t, {"v0": Fraction(1, 4), "vL": Fraction(-1, 4)}, title="App. D.1")
    >>> sorted(x.get_text() for x in fig.axes[0].texts if "\\n" in x.get_text())
    ['v0\\n+0.25', 'vL\\n-0.25']
    >>> len(fig.axes)  # the tree and its colour bar
    2
    """
    plt = _pyplot()
    from matplotlib.collections import LineCollection
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.lines import Line2D
    if values is not None and not isinstance(values, Mapping):
        raise HUCError(f"plot_tree: values must map nodes to numbers, got {type(values).__name__}", kind="type")
    if relevant is not None and (isinstance(relevant, (str, bytes)) or not isinstance(relevant, Iterable)):
        raise HUCError(f"plot_tree: relevant must list nodes, got {type(relevant).__name__}", kind="type")
    values = dict(values or {})
    relevant = set(values) if relevant is None else set(relevant)
    unknown = (relevant | set(values)) - set(tree.nodes)
    if unknown:
        raise HUCError(f"plot_tree: {sorted(unknown)[0]!r} is not a node of the tree", kind="reference")
    own = ax is None
    if own:
        height = 1.2 * (1 + max(tree.depth(v) for v in tree.nodes)) + 1
        fig, ax = plt.subplots(figsize=(panel_width(tree, 4.0, 0.55, 2), height))
    fig = ax.figure
    pos = {v: (float(x), float(y)) for v, (x, y) in tree_layout(tree).items()}
    ax.add_collection(LineCollection([(pos[v], pos[c]) for v in tree.internal_nodes for c in tree.children(v)],
                                     colors="0.6", linewidths=1, zorder=1))  # (one artist: 1,000 leaves draw fast)
    top = scale or max([abs(float(x)) for x in values.values()] + [1e-12])
    norm = TwoSlopeNorm(vcenter=0.0, vmin=-top, vmax=top)
    cmap = plt.get_cmap("RdBu_r")
    size = 1300 if tree.K <= 12 else 700
    named = tree.K <= NAMED_LEAVES
    leaf_size = 60 if tree.K <= 60 else max(4.0, 3600 / tree.K)  # (points^2: dots that stay apart)
    leaves = [v for v in tree.nodes if tree.is_leaf(v)]
    ax.scatter([pos[v][0] for v in leaves], [pos[v][1] for v in leaves], s=leaf_size, color="white",
               edgecolor="black", zorder=2)
    for v in tree.nodes:
        x, y = pos[v]
        if tree.is_leaf(v):
            if named:
                ax.text(x, y - 0.18, v, ha="center", va="top", fontsize=8, rotation=90 if tree.K > 12 else 0)
        elif v in relevant:
            value = float(values.get(v, 0))
            fill = cmap(norm(value))
            ax.scatter([x], [y], s=size, color=fill, edgecolor="black", zorder=2)
            ax.text(x, y, f"{v}\n{value:+.3g}", ha="center", va="center", fontsize=8, color=text_colour(fill),
                    zorder=3)
        else:
            ax.scatter([x], [y], s=size * 0.6, color="0.9", edgecolor="0.6", zorder=2)
            ax.text(x, y, v, ha="center", va="center", fontsize=7, color="0.35", zorder=3)
    mappable = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
    fig.colorbar(mappable, ax=ax, shrink=0.7, label=value_label)
    handles = [Line2D([], [], marker="o", ls="", markersize=11, markerfacecolor=cmap(0.8), markeredgecolor="black",
                      label="node of V_T(u): its value"),
               Line2D([], [], marker="o", ls="", markersize=9, markerfacecolor="0.9", markeredgecolor="0.6",
                      label="internal node outside V_T(u)"),
               Line2D([], [], marker="o", ls="", markersize=5, markerfacecolor="white", markeredgecolor="black",
                      label="leaf (label)" if named else f"leaf ({tree.K} labels, unnamed)")]
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(0.0, -0.02), ncol=3, frameon=False)
    ax.set_xlim(-0.08, 1.08)
    ax.set_ylim(-0.9, max(p[1] for p in pos.values()) + 0.5)
    ax.axis("off")
    if title:
        ax.set_title(title)
    if own:
        fig.tight_layout()
    return fig


def plot_audit(dist: FiniteDistribution, utilities: Mapping, result: AuditResult | None = None, *,
               subgroup: str | None = None):
    """An audit, one panel per utility (Def. 3.2, App. F.3): the tree coloured by the signed
    witness moment of each relevant node (the subgroup with the largest ``|Gamma|``, or
    ``subgroup``), and the weighted distribution of the scores ``mu_u(p_i)`` with the witness
    intervals of UC and of each node (of the :data:`WITNESSES` nodes with the largest sups where
    there are more).  ``result`` defaults to ``audit(dist, utilities)``.  Panels sit side by side
    up to :data:`FIGURE_WIDTH`, then on further lines; wide trees share :data:`PANEL_WIDTH`.

    >>> from huc_ref import Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> fig = plot_audit(d, {"u": Table(t, [-1, 1, 1, 1])})
    >>> fig.axes[0].get_title(), [x.get_text() for x in fig.axes[1].get_legend().get_texts()][:2]
    ('u: UC = 0, HUC = 0.25 (node v0)', ['UC: empty', 'v0: [0.5, 0.5]'])
    """
    plt = _pyplot()
    if result is not None and not isinstance(result, AuditResult):
        raise HUCError(f"plot_audit: result must be an AuditResult (audit(dist, utilities)), got "
                       f"{type(result).__name__}", kind="type")
    result = audit(dist, utilities) if result is None else result
    if subgroup is not None and not one_of(subgroup, dist.subgroups):
        raise HUCError(f"plot_audit: subgroup {given(subgroup)} is not one of {list(dist.subgroups)}", kind="reference")
    names = list(utilities)
    width = panel_width(dist.tree, 5.5, 0.5, 3)
    cols = max(1, min(len(names), int(FIGURE_WIDTH // width)))  # side by side up to FIGURE_WIDTH, then rows
    lines = -(-len(names) // cols)
    fig, grid = plt.subplots(2 * lines, cols, figsize=(width * cols, 6.5 * lines),
                             gridspec_kw={"height_ratios": [3, 1.2] * lines}, squeeze=False)
    for k in range(len(names), lines * cols):  # the last line's empty places
        grid[-2, k % cols].remove()
        grid[-1, k % cols].remove()
    for k, name in enumerate(names):
        tree_ax, strip = grid[2 * (k // cols), k % cols], grid[2 * (k // cols) + 1, k % cols]
        rows = [r for r in result.candidates if r.utility == name and (subgroup is None or r.subgroup == subgroup)]
        best = {}
        for r in rows:
            if r.node is not None and (r.node not in best or r.sup > best[r.node].sup):
                best[r.node] = r
        uc_row = max((r for r in rows if r.node is None), key=lambda r: r.sup)
        moments = {v: r.moment for v, r in best.items()}
        huc = max(best.values(), key=lambda r: r.sup, default=None)
        title = f"{name}: UC = {float(uc_row.sup):.3g}, HUC = {float(huc.sup):.3g}" + \
            (f" (node {huc.node})" if huc is not None and huc.sup > 0 else "") if huc else f"{name}: UC = {uc_row.sup}"
        plot_tree(dist.tree, moments, relevant=result.relevant_nodes[name], ax=tree_ax, title=title,
                  value_label="signed witness moment Gamma")
        mass = {}
        for atom, t in zip(dist.atoms, atom_terms(dist, utilities[name], ())):
            mass[float(t.score)] = mass.get(float(t.score), 0.0) + float(atom.weight)
        strip.vlines(list(mass), 0, list(mass.values()), color="black", lw=2, label="_weight of atoms")
        height = max(mass.values())
        shown = list(best.items())  # pre-order
        if len(shown) > WITNESSES:  # the largest sups only (pre-order among equal ones), the rest counted
            kept = set(sorted(best, key=lambda v: -best[v].sup)[:WITNESSES])
            shown = [(v, r) for v, r in shown if v in kept]
        witnesses = [("UC", uc_row)] + shown
        for k, (label, r) in enumerate(witnesses):
            y = height * (1.1 + 0.12 * k)
            if r.interval is None:
                strip.plot([], [], lw=5, label=f"{label}: empty")
                continue
            lo, hi = (float(x) for x in r.interval)
            width = max(hi - lo, 0.004 * (max(mass) - min(mass) or 1))
            strip.plot([lo - width / 2 if hi == lo else lo, hi + width / 2 if hi == lo else hi], [y, y], lw=5,
                       solid_capstyle="butt", label=f"{label}: [{lo:.3g}, {hi:.3g}]")
        if len(shown) < len(best):
            strip.plot([], [], lw=0, label=f"(and {len(best) - len(shown)} nodes with smaller sups)")
        strip.set_ylim(0, height * (1.3 + 0.12 * len(witnesses)))
        if len(mass) == 1:  # one score: show it in a window of its own size
            (s,) = mass
            strip.set_xlim(s - 0.05 * max(1.0, abs(s)), s + 0.05 * max(1.0, abs(s)))
        strip.set_yticks([])
        strip.set_xlabel("score mu_u(p) (bars: weight of the atoms; lines: witness intervals)")
        strip.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


def plot_trajectories(paths: Mapping, *, epsilon=None):
    """Boosting runs (Theorem 3.5), one line each: UC and HUC after every update, and the
    log-loss decrease of each update on a log scale against the guaranteed ``eps^2 / 2``.

    ``paths`` maps a label (e.g. ``"HUC-Boost"``) to :func:`huc_ref.replay.trajectory` output.

    >>> path = [{"uc": 0.0, "huc": 0.25, "log_loss": 1.39}, {"uc": 0.01, "huc": 0.02, "log_loss": 1.30}]
    >>> fig = plot_trajectories({"HUC-Boost": path}, epsilon=0.05)
    >>> [ax.get_title() for ax in fig.axes]
    ['UC', 'HUC', 'log-loss decrease per update']
    """
    _check_trajectories(paths)
    eps = None if epsilon is None else _epsilon(epsilon)
    plt = _pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    styles = ["s-", "o--", "^-.", "d:"]
    for k, (label, path) in enumerate(paths.items()):
        style = styles[k % len(styles)]
        steps = range(len(path))
        axes[0].plot(steps, [p["uc"] for p in path], style, markersize=3, label=label, alpha=0.85)
        axes[1].plot(steps, [p["huc"] for p in path], style, markersize=3, label=label, alpha=0.85)
        drops = [a["log_loss"] - b["log_loss"] for a, b in zip(path, path[1:])]
        axes[2].plot(range(1, len(path)), [max(d, 1e-300) for d in drops], style, markersize=3, label=label,
                     alpha=0.85)
    if eps is not None:
        for ax in axes[:2]:
            ax.axhline(eps, color="grey", lw=0.8, ls=":", label="epsilon")
        axes[2].axhline(eps ** 2 / 2, color="grey", lw=1, ls=":", label="Thm 3.5: at least eps^2/2")
    axes[2].set_yscale("log")
    for ax, title in zip(axes, ("UC", "HUC", "log-loss decrease per update")):
        ax.set_title(title)
        ax.set_xlabel("update")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _check_trajectories(paths) -> None:
    """``paths``: a mapping from label to :func:`huc_ref.replay.trajectory` points, or one HUCError."""
    if not isinstance(paths, Mapping) or not paths:
        raise HUCError("plot_trajectories: paths must map a label to a run's trajectory (replay.trajectory), got "
                       f"{type(paths).__name__}", kind="type")
    for label, path in paths.items():
        if isinstance(path, (str, bytes, Mapping)) or not isinstance(path, Iterable):
            raise HUCError(f"plot_trajectories: paths[{given(label, 60)}] must be a list of points, got "
                           f"{type(path).__name__}", kind="type")
        for t, point in enumerate(path):
            if not (isinstance(point, Mapping) and all(isinstance(point.get(key), Real) for key in _POINT)):
                raise HUCError(f"plot_trajectories: paths[{given(label, 60)}][{t}] must hold the numbers uc, huc and "
                               "log_loss (a replay.trajectory point)", kind="type")


_POINT = ("uc", "huc", "log_loss")


def _epsilon(epsilon) -> float:
    """The tolerance to draw (Theorem 3.5's ``epsilon``): a number in (0, 1], exact text read exactly."""
    eps = exact(epsilon, "epsilon") if isinstance(epsilon, str) else epsilon
    if isinstance(eps, bool) or not isinstance(eps, Real) or not 0 < eps <= 1:
        raise HUCError(f"plot_trajectories: epsilon must be a number in (0, 1], got {given(epsilon)}", kind="option")
    return float(eps)
