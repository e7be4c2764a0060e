"""Figures of the library's own objects (matplotlib, the ``plot`` extra: ``pip install huc-ref[plot]``).

* :func:`plot_tree`: a label tree with each internal node coloured by a signed number (a
  node moment ``Gamma_{c,u,I,v}``, Def. 3.2, or an eq. (5) contribution ``D_t``), on a
  diverging colour scale centred at 0 with a colour bar; the nodes in ``V_T(u)`` named
  with their value (text colour chosen from the fill for contrast), the others greyed, a
  legend saying which is which;
* :func:`plot_audit`: an audit per utility, of a :class:`~huc_ref.distribution.FiniteDistribution`
  or of a sample's arrays (``y_true, y_prob, tree, utilities``), or an
  :class:`~huc_ref.results.AuditResult` of either engine beside them: the tree coloured by
  each relevant node's witness moment, and below it a histogram of the scores ``mu_u(p_i)``
  (weighted; at most :data:`BINS` bins at any ``n``) with the witness intervals of UC and of
  every node (Algorithm 2);
* :func:`plot_trajectories`: boosting runs (Theorem 3.5), trajectories or fitted
  :class:`~huc_ref.calibration.HUCBoost` models: UC, HUC and the log-loss decrease of every
  update against the guaranteed ``eps^2 / 2``.

Each returns the matplotlib ``Figure``; nothing is shown or saved unless asked.  Names (nodes,
labels, utilities, subgroups, runs) are drawn as plain text, never read as matplotlib's
mathtext: ``$x$``, ``\\frac`` or a lone ``$`` in a name is shown as written.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from fractions import Fraction
from numbers import Real

import numpy as np

from .distribution import FiniteDistribution
from .engines import audit
from .errors import HUCError, given, one_of
from .rational import exact
from .results import AuditResult
from .tree import LabelTree
from .validation import check_utilities

__all__ = ["tree_layout", "text_colour", "plot_tree", "plot_audit", "score_histogram", "sample_scores",
           "plot_trajectories"]


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
    """The positions at which the figures draw a tree's nodes (Sec. 3.1's tree).

    Parameters
    ----------
    tree : LabelTree
        The tree.

    Returns
    -------
    dict of str to tuple
        ``node -> (x, y)``, exactly: leaves evenly spaced in depth-first order on ``y = 0``
        with ``x`` from 0 to 1, each internal node above the middle of its children, one unit
        above its highest child.

    Examples
    --------
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
    """Black or white, whichever reads better on a fill (the node labels of App. D.1's and Sec. 3.1's tree figures).

    Parameters
    ----------
    rgb : sequence of float
        The fill, red, green and blue in [0, 1] (an alpha after them is ignored).

    Returns
    -------
    {"black", "white"}
        White where the fill's WCAG relative luminance is below 0.179 (where contrast against
        white beats contrast against black), else black.

    Examples
    --------
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
    """Draw a label tree with its internal nodes coloured by signed numbers, such as Def. 3.2's node moments.

    The numbers may be node moments ``Gamma_{c,u,I,v}`` (Def. 3.2) or eq. (5)'s contributions
    ``D_t``; the scale is diverging, centred at 0, with a colour bar.

    Parameters
    ----------
    tree : LabelTree
        The tree.
    values : mapping of str to number, optional
        A number per internal node; by default none.
    relevant : iterable of str, optional
        The nodes coloured and named with their value (``V_T(u)``); by default those in
        ``values``.  Other internal nodes are grey; leaves are small white circles, named up to
        :data:`NAMED_LEAVES` leaves.
    ax : matplotlib.axes.Axes, optional
        Where to draw; by default a new figure, :data:`PANEL_WIDTH` inches wide at most.
    title : str, optional
        The panel's title.
    value_label : str, default "signed node moment"
        The colour bar's label.
    scale : float, optional
        The colour scale's half-range; by default the largest ``|value|``.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on.  Names, ``title`` and ``value_label`` are drawn as plain text,
        never as mathtext.

    Raises
    ------
    HUCError
        Where ``values`` is not a mapping, ``relevant`` not a list of nodes, a name not a node
        of the tree, or matplotlib is not installed.

    Examples
    --------
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
                ax.text(x, y - 0.18, v, ha="center", va="top", fontsize=8, rotation=90 if tree.K > 12 else 0,
                        parse_math=False)
        elif v in relevant:
            value = float(values.get(v, 0))
            fill = cmap(norm(value))
            ax.scatter([x], [y], s=size, color=fill, edgecolor="black", zorder=2)
            ax.text(x, y, f"{v}\n{value:+.3g}", ha="center", va="center", fontsize=8, color=text_colour(fill),
                    zorder=3, parse_math=False)
        else:
            ax.scatter([x], [y], s=size * 0.6, color="0.9", edgecolor="0.6", zorder=2)
            ax.text(x, y, v, ha="center", va="center", fontsize=7, color="0.35", zorder=3, parse_math=False)
    mappable = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
    fig.colorbar(mappable, ax=ax, shrink=0.7).set_label(value_label, parse_math=False)
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
        ax.set_title(title, parse_math=False)
    if own:
        fig.tight_layout()
    return fig


def plot_audit(*data, result: AuditResult | None = None, subgroup: str | None = None, labels=None, subgroups=None,
               sample_weight=None, renormalize: bool = False, accelerator: str = "numpy"):
    """An audit, one panel per utility (Def. 3.2, App. F.3): the tree coloured by the signed
    witness moment of each relevant node, and below it a histogram of the scores ``mu_u(p_i)``
    (Sec. 2.1) weighted by the atoms' weights, with the witness intervals of UC and of each node
    (Algorithm 2) drawn over it and the interval of the utility's HUC witness shaded.

    Parameters
    ----------
    *data
        What was audited, in one of two forms:

        * ``dist, utilities``: a :class:`~huc_ref.distribution.FiniteDistribution` and its
          utilities (``result`` defaults to ``huc_ref.audit(dist, utilities)``; it may also be
          given third, ``plot_audit(dist, utilities, result)``);
        * ``y_true, y_prob, tree, utilities``: a sample's arrays, as
          :func:`huc_ref.fast.audit` takes them (``result`` defaults to that audit, run with
          ``labels``, ``subgroups``, ``sample_weight``, ``renormalize`` and ``accelerator``).
    result : AuditResult, optional
        The audit to draw, in either arithmetic (``"exact"`` or ``"float64"``), of the same atoms
        and utilities; the scores of the histogram are computed from ``data``.
    subgroup : str, optional
        Draw the witnesses of this subgroup only; by default each node's row is the subgroup
        with its largest sup.
    labels, subgroups, sample_weight, renormalize, accelerator
        For the arrays only: as :func:`huc_ref.fast.audit` reads them.  The histogram weighs the
        rows by ``sample_weight`` (normalised to sum 1), or equally.

    Returns
    -------
    matplotlib.figure.Figure
        Panels side by side up to :data:`FIGURE_WIDTH`, then on further lines; wide trees share
        :data:`PANEL_WIDTH`.  The histogram has at most :data:`BINS` bins at any ``n``, and
        every name (nodes, labels, utilities, subgroups) is drawn as plain text, never as
        matplotlib's mathtext (``$``, ``\\``, ``^`` and ``_`` are shown as they are).

    Raises
    ------
    HUCError
        For data in neither form, a ``result`` that is not an :class:`AuditResult` of these
        atoms and utilities, an unknown ``subgroup``, an array option beside a distribution,
        and whatever :func:`huc_ref.fast.audit` refuses in the arrays.

    Examples
    --------
    App. D.1, exactly, and the same predictions as a sample of 8 rows (labels y1 x2, y3 x3, y4 x3):

    >>> from huc_ref import Table
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    >>> fig = plot_audit(d, {"u": Table(t, [-1, 1, 1, 1])})
    >>> fig.axes[0].get_title(), [x.get_text() for x in fig.axes[1].get_legend().get_texts()][:2]
    ('u: UC = 0, HUC = 0.25 (node v0)', ['UC: empty', 'v0: [0.5, 0.5]'])
    >>> fig = plot_audit([0, 0, 2, 2, 2, 3, 3, 3], [[0.25] * 4] * 8, t, {"u": Table(t, [-1, 1, 1, 1])})
    >>> fig.axes[0].get_title()
    'u: UC = 0, HUC = 0.25 (node v0)'
    """
    plt = _pyplot()
    is_dist = bool(data) and isinstance(data[0], FiniteDistribution) and len(data) in (2, 3)
    if is_dist and len(data) == 3:  # plot_audit(dist, utilities, result)
        if result is not None:
            raise HUCError("plot_audit: result given twice (third and as result=)", kind="option")
        *data, result = data
    if result is not None and not isinstance(result, AuditResult):
        raise HUCError(f"plot_audit: result must be an AuditResult (audit(dist, utilities)), got "
                       f"{type(result).__name__}", kind="type")
    arrays = dict(labels=labels, subgroups=subgroups, sample_weight=sample_weight)
    if is_dist:
        dist, utilities = data
        options = [k for k, v in arrays.items() if v is not None] + (["renormalize"] if renormalize else [])
        if options:
            raise HUCError(f"plot_audit: {options[0]}= applies to arrays (y_true, y_prob, tree, utilities); "
                           "a FiniteDistribution carries its own", kind="option")
        check_utilities(dist.tree, dist.n, utilities)
        _check_subgroup(subgroup, result.subgroups if result is not None else dist.subgroups)
        result = audit(dist, utilities) if result is None else result
        tree, n = dist.tree, dist.n
        weights = np.array([float(a.weight) for a in dist.atoms])
        scores = {name: np.array([float(u.score(a.p, i)) for i, a in enumerate(dist.atoms)])
                  for name, u in utilities.items()}
    elif len(data) == 4 and not isinstance(data[0], (FiniteDistribution, AuditResult)):
        from .fast.audit import audit as fast_audit
        from .fast.audit import sample_arrays
        y_true, y_prob, tree, utilities = data
        P, _, weights, groups, _ = sample_arrays(y_true, y_prob, tree, utilities, **arrays)
        _check_subgroup(subgroup, result.subgroups if result is not None else groups)
        if result is None:
            result = fast_audit(y_true, y_prob, tree, utilities, renormalize=renormalize, accelerator=accelerator,
                                **arrays)
        n = len(P)
        scores = sample_scores(tree, P, utilities)
    else:
        shapes = ", ".join(type(x).__name__ for x in data)
        raise HUCError(f"plot_audit: give (dist, utilities) or (y_true, y_prob, tree, utilities), with result= "
                       f"for an audit already made; got ({shapes})", kind="type")
    _check_result(result, utilities, n)
    names = list(utilities)
    width = panel_width(tree, 5.5, 0.5, 3)
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
        plot_tree(tree, moments, relevant=result.relevant_nodes[name], ax=tree_ax, title=title,
                  value_label="signed witness moment Gamma")
        _score_panel(strip, scores[name], weights, uc_row, best, huc)
    fig.tight_layout()
    return fig


#: The score panel's histogram has ``2 n^(1/3)`` bins (the Rice rule), at least :data:`MIN_BINS`
#: and at most this many: one filled outline whatever ``n`` (a bar an atom fills the panel at n = 10^4).
BINS = 60
#: The fewest bins of the score panel's histogram.
MIN_BINS = 10


def score_histogram(scores, weights) -> tuple:
    """The weight of the atoms whose score ``mu_u(p_i)`` (Sec. 2.1) falls in each bin of a histogram.

    Parameters
    ----------
    scores : numpy.ndarray of shape (n,)
        The scores.
    weights : numpy.ndarray of shape (n,) or float
        The atoms' weights (broadcast to the scores' shape).

    Returns
    -------
    heights : numpy.ndarray
        The weight in each bin.
    edges : numpy.ndarray
        The bins' edges: ``2 n^(1/3)`` equal bins over the range of the scores (the Rice rule),
        at least :data:`MIN_BINS` and at most :data:`BINS`; one score alone is the middle of a
        window of its own size.

    Examples
    --------
    >>> heights, edges = score_histogram(np.array([0.0, 0.5, 1.0, 1.0]), np.full(4, 0.25))
    >>> heights.tolist()[:2], heights.tolist()[-1], edges.tolist()[:2], len(edges)
    ([0.25, 0.0], 0.5, [0.0, 0.1], 11)
    >>> heights, edges = score_histogram(np.array([0.5]), np.ones(1))
    >>> float(heights.max()), float(edges[0]), float(edges[-1])
    (1.0, 0.45, 0.55)
    """
    bins = int(min(BINS, max(MIN_BINS, np.ceil(2 * len(scores) ** (1 / 3)))))
    lo, hi = float(scores.min()), float(scores.max())
    if lo == hi:
        lo, hi, bins = lo - 0.05 * max(1.0, abs(lo)), hi + 0.05 * max(1.0, abs(hi)), MIN_BINS + 1
    return np.histogram(scores, bins=bins, range=(lo, hi), weights=np.broadcast_to(weights, scores.shape))


def _score_panel(strip, scores, weights, uc_row, best: dict, huc) -> None:
    """The histogram of the scores (one filled outline), the witness intervals of UC and of the
    :data:`WITNESSES` nodes with the largest sups as lines above it, the HUC witness shaded."""
    heights, edges = score_histogram(scores, weights)
    strip.stairs(heights, edges, fill=True, color="0.7", label="_weight of the atoms")
    top = float(heights.max()) or 1.0
    shown = list(best.items())  # pre-order
    if len(shown) > WITNESSES:  # the largest sups only (pre-order among equal ones), the rest counted
        kept = set(sorted(best, key=lambda v: -best[v].sup)[:WITNESSES])
        shown = [(v, r) for v, r in shown if v in kept]
    witnesses = [("UC", uc_row)] + shown
    span = float(edges[-1] - edges[0])
    for k, (label, r) in enumerate(witnesses):
        colour = f"C{k % 10}"
        if r.interval is None:
            strip.plot([], [], lw=5, color=colour, label=f"{label}: empty")
            continue
        lo, hi = (float(x) for x in r.interval)
        if hi == lo:  # one score: a short bar centred on it
            lo, hi = lo - 0.002 * span, hi + 0.002 * span
        y = top * (1.1 + 0.12 * k)
        strip.plot([lo, hi], [y, y], lw=5, solid_capstyle="butt", color=colour,
                   label=f"{label}: [{float(r.interval[0]):.3g}, {float(r.interval[1]):.3g}]")
        if huc is not None and r is huc and huc.sup > 0:
            strip.axvspan(lo, hi, color=colour, alpha=0.2, lw=0, label="_HUC's witness")
    if len(shown) < len(best):
        strip.plot([], [], lw=0, label=f"(and {len(best) - len(shown)} nodes with smaller sups)")
    strip.set_xlim(edges[0] - 0.02 * span, edges[-1] + 0.02 * span)
    strip.set_ylim(0, top * (1.3 + 0.12 * len(witnesses)))
    strip.set_ylabel("weight", fontsize=8)
    strip.tick_params(labelsize=7)
    strip.set_xlabel(f"score mu_u(p) (grey: weight of the atoms in {len(heights)} bins; lines: witness intervals; "
                     "shaded: HUC's)", fontsize=8)
    _plain(strip.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0)))


def sample_scores(tree: LabelTree, P, utilities: Mapping) -> dict:
    """The score ``mu_u(p_i)`` of every row of a prediction array, per utility, in float64 (Sec. 2.1).

    The score is ``sum_y p_y u(p_i, y) / sum_y p_y``, computed in row chunks (App. F.4's
    :func:`huc_ref.fast.audit.chunk_rows`).

    Parameters
    ----------
    tree : LabelTree
        The tree.
    P : array-like of shape (n, K)
        The predictions, in the tree's label order.
    utilities : dict of str to Utility
        The utilities.

    Returns
    -------
    dict of str to numpy.ndarray
        ``name -> mu_u(p_i)`` for every row.

    Raises
    ------
    HUCError
        Of kind ``float_range``, naming the first row that is not finite and nonnegative with a
        positive finite sum.

    Examples
    --------
    >>> from huc_ref import TopK
    >>> t = LabelTree.from_children("r", {"r": ["a", "b", "c"]})
    >>> sample_scores(t, np.array([[0.2, 0.5, 0.3], [2.0, 1.0, 1.0]]), {"top1": TopK(t, 1)})["top1"].tolist()
    [0.5, 0.5]
    """
    from .fast.audit import chunk_rows
    from .fast.numbers import ratio, row_sums, weighted_row_sums
    from .fast.tree import FastTree
    from .fast.utilities import utility_values
    ft = FastTree(tree)
    n = len(P)
    out = {name: np.empty(n) for name in utilities}
    step = chunk_rows(n, tree.K)
    for s in range(0, n, step):
        X = np.asarray(P[s:s + step], dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            total = row_sums(X)
            bad = ~np.isfinite(X).all(axis=1) | (X < 0).any(axis=1) | ~(total > 0) | ~np.isfinite(total)
        if bad.any():
            raise HUCError(f"y_prob[{s + int(np.argmax(bad))}]: entries must be finite and nonnegative, with a "
                           "positive finite sum", kind="float_range")
        rows = np.arange(s, s + len(X))  # (atom indices: a per-atom utility's rows)
        for name, u in utilities.items():
            out[name][s:s + len(X)] = ratio(weighted_row_sums(X, utility_values(u, ft, X, rows)), total)
    return out


def _check_subgroup(subgroup, known) -> None:
    """``subgroup`` is None or one of ``known`` (checked before the audit runs), or one HUCError."""
    if subgroup is not None and not one_of(subgroup, known):
        raise HUCError(f"plot_audit: subgroup {given(subgroup)} is not one of {list(known)}", kind="reference")


def _check_result(result: AuditResult, utilities: Mapping, n: int) -> None:
    """``result`` audits ``n`` atoms and every utility of ``utilities`` (a UC row each), or one HUCError."""
    if result.n != n:
        raise HUCError(f"plot_audit: result audits {result.n} atoms, the data has {n}: give the audit of these "
                       "atoms (or no result)", kind="length")
    audited = {r.utility for r in result.candidates if r.node is None}
    missing = [name for name in utilities if name not in audited or name not in result.relevant_nodes]
    if missing:
        raise HUCError(f"plot_audit: result has no rows of utility {given(missing[0], 60)}: give the audit of these "
                       "utilities (or no result)", kind="reference")


def _plain(legend):
    """``legend`` with its texts drawn as they are (no mathtext: a name such as ``$x$`` or ``\\frac``
    is a name)."""
    for text in legend.get_texts():
        text.set_parse_math(False)
    return legend


def plot_trajectories(paths, *, epsilon=None):
    """Boosting runs (Theorem 3.5), one line each: UC and HUC after every update, and the
    log-loss decrease of each update on a log scale against the guaranteed ``eps^2 / 2``.

    Parameters
    ----------
    paths : Mapping or HUCBoost
        A mapping from a label (e.g. ``"HUC-Boost"``) to a run: :func:`huc_ref.replay.trajectory`
        output (``uc``, ``huc`` and ``log_loss`` after 0, 1, ... updates), or a fitted
        :class:`~huc_ref.calibration.HUCBoost`; or one fitted ``HUCBoost`` (labelled by its
        method).  A model's log loss after every update is its run's (``run_``, the calibration
        data); its UC and HUC are what it measured: with ``validation``, K.1's validation error
        after every prefix (``validation_errors_``: HUC, UC for UC-Boost) and the other at the
        start and the kept prefix (``report_``); without, both at the start and the end
        (``report_``, the calibration data).  Points not measured are left out; a dotted line
        marks a kept prefix shorter than the run.
    epsilon : number or exact text, optional
        Theorem 3.5's tolerance, drawn on the UC and HUC panels and as ``eps^2 / 2`` on the third;
        by default the models' own where they all agree.

    Returns
    -------
    matplotlib.figure.Figure
        Three panels; the labels are drawn as plain text (no mathtext).

    Raises
    ------
    HUCError
        For paths that are neither, an unfitted model, or an ``epsilon`` outside ``(0, 1]``.

    Examples
    --------
    >>> path = [{"uc": 0.0, "huc": 0.25, "log_loss": 1.39}, {"uc": 0.01, "huc": 0.02, "log_loss": 1.30}]
    >>> fig = plot_trajectories({"HUC-Boost": path}, epsilon=0.05)
    >>> [ax.get_title() for ax in fig.axes]
    ['UC', 'HUC', 'log-loss decrease per update']

    A fitted model (App. D.1 as a sample; Sec. 5.2's recalibrator), validated on its own data:

    >>> from huc_ref import Table
    >>> from huc_ref.calibration import HUCBoost
    >>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    >>> P, y = np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3]
    >>> model = HUCBoost(t, {"u": Table(t, [-1, 1, 1, 1])}, epsilon="1/100").fit(P, y, validation=(P, y))
    >>> fig = plot_trajectories(model)
    >>> huc = fig.axes[1].get_lines()[0]
    >>> huc.get_label(), len(huc.get_ydata()), float(huc.get_ydata()[0])  # 13 updates; D.1's HUC first
    ('HUC-Boost (validation data)', 14, 0.25)
    """
    paths, models = _runs(paths)
    if epsilon is None:
        tolerances = {_epsilon(m.epsilon) for m in models.values()}
        eps = tolerances.pop() if len(tolerances) == 1 else None
    else:
        eps = _epsilon(epsilon)
    plt = _pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    styles = ["s-", "o--", "^-.", "d:"]
    for k, (label, path) in enumerate(paths.items()):
        style = styles[k % len(styles)]
        steps = range(len(path))
        model = models.get(label)
        data = "" if model is None else " (validation data)" if model.validation_errors_ is not None else \
            f" ({model.report_['data']} data)"
        axes[0].plot(steps, [p["uc"] for p in path], style, markersize=3, label=label + data, alpha=0.85)
        axes[1].plot(steps, [p["huc"] for p in path], style, markersize=3, label=label + data, alpha=0.85)
        drops = [a["log_loss"] - b["log_loss"] for a, b in zip(path, path[1:])]
        axes[2].plot(range(1, len(path)), [max(d, 1e-300) for d in drops], style, markersize=3,
                     label=label + ("" if model is None else " (calibration data)"), alpha=0.85)
        if model is not None and model.n_updates_ < len(path) - 1:
            for ax in axes:
                ax.axvline(model.n_updates_, color=f"C{k % 10}", lw=0.8, ls=":",
                           label=f"{label}: kept prefix, {model.n_updates_} update"
                                 f"{'' if model.n_updates_ == 1 else 's'} (K.1)")
    if eps is not None:
        for ax in axes[:2]:
            ax.axhline(eps, color="grey", lw=0.8, ls=":", label="epsilon")
        axes[2].axhline(eps ** 2 / 2, color="grey", lw=1, ls=":", label="Thm 3.5: at least eps^2/2")
    axes[2].set_yscale("log")
    for ax, title in zip(axes, ("UC", "HUC", "log-loss decrease per update")):
        ax.set_title(title)
        ax.set_xlabel("update")
        _plain(ax.legend(fontsize=8))
    fig.tight_layout()
    return fig


def _runs(paths) -> tuple[dict, dict]:
    """``(label -> trajectory points, label -> fitted model)``: :func:`plot_trajectories`'s
    ``paths`` with each fitted :class:`~huc_ref.calibration.HUCBoost` read as points
    (:func:`_model_path`), checked, or one HUCError."""
    from .calibration import HUCBoost
    if isinstance(paths, HUCBoost):
        paths = {"UC-Boost" if paths.method == "uc" else "HUC-Boost": paths}
    if not isinstance(paths, Mapping) or not paths:
        raise HUCError("plot_trajectories: paths must map a label to a run's trajectory (replay.trajectory) or "
                       f"a fitted HUCBoost, got {type(paths).__name__}", kind="type")
    models = {label: run for label, run in paths.items() if isinstance(run, HUCBoost)}
    for label, model in models.items():
        if getattr(model, "run_", None) is None:
            raise HUCError(f"plot_trajectories: paths[{given(label, 60)}] is an HUCBoost not fitted yet; call "
                           "fit(y_prob, y_true) first", kind="state")
    points = {label: _model_path(models[label]) if label in models else path for label, path in paths.items()}
    _check_trajectories(points)
    return points, models


def _model_path(model) -> list:
    """A fitted HUCBoost's trajectory as points: the run's log loss after 0, 1, ... updates
    (``run_``: the calibration data), and the UC and HUC it measured (K.1's validation errors
    after every prefix, ``validation_errors_``; the audits before and after, ``report_``), NaN
    where it measured none."""
    run, report = model.run_, model.report_
    losses = [run.initial["log_loss"]] + [u["log_loss_after"] for u in run.updates]
    path = [{"uc": math.nan, "huc": math.nan, "log_loss": float(loss)} for loss in losses]
    for key in ("uc", "huc"):
        if getattr(model, "initial_", None) is None:  # (else report_'s "before" precedes the first stage)
            path[0][key] = float(getattr(report["before"], key).sup)
        path[model.n_updates_][key] = float(getattr(report["after"], key).sup)
    if model.validation_errors_ is not None:
        metric = "uc" if model.method == "uc" else "huc"
        for point, error in zip(path, model.validation_errors_):
            point[metric] = float(error)
    return path


def _check_trajectories(paths) -> None:
    """``paths``: a mapping from label to :func:`huc_ref.replay.trajectory` points, or one HUCError."""
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
