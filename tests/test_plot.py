"""huc_ref.plot draws the library's own objects: colours, names, scales and witnesses as stated."""

import warnings
from fractions import Fraction

import pytest

pytest.importorskip("matplotlib")

from matplotlib.collections import PathCollection  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402

from huc_ref import FiniteDistribution, HUCError, LabelTree, TopK  # noqa: E402
from huc_ref.cli import main  # noqa: E402
from huc_ref.plot import plot_audit, plot_trajectories, plot_tree, text_colour  # noqa: E402
from tests.strategies import shape_tree  # noqa: E402

FOUR = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})


def _node_texts(fig):
    return {t.get_text().split("\n")[0]: t for t in fig.axes[0].texts}


def test_tree_colours_signs_and_names_every_node():
    fig = plot_tree(FOUR, {"v0": Fraction(1, 4), "vL": Fraction(-1, 8)}, relevant=["v0", "vL"])
    texts = _node_texts(fig)
    assert set(texts) == {"v0", "vL", "vR", "y1", "y2", "y3", "y4"}  # outside V_T(u) named too, not dashes
    markers = [col for col in fig.axes[0].collections if isinstance(col, PathCollection)]  # (not the edges)
    fills = {tuple(round(c, 3) for c in col.get_facecolor()[0][:3]): col for col in markers}
    reds = [f for f in fills if f[0] > f[2] + 0.15]
    blues = [f for f in fills if f[2] > f[0] + 0.15]
    assert len(reds) == 1 and len(blues) == 1  # +1/4 warm, -1/8 cool, on one scale centred at 0
    for name in ("v0", "vL"):  # the text reads on its fill
        node = next(c for c in markers
                    if tuple(c.get_offsets()[0]) == tuple(texts[name].get_position()))
        assert to_rgb(texts[name].get_color()) == to_rgb(text_colour(node.get_facecolor()[0]))
    assert to_rgb(texts["v0"].get_color()) == to_rgb("white")  # the darkest red of the scale: white text
    assert to_rgb(texts["vR"].get_color()) != to_rgb("black")  # greyed
    assert fig.axes[1].get_ylabel() == "signed node moment"  # the colour bar
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
        "node of V_T(u): its value", "internal node outside V_T(u)", "leaf (label)"]


def test_dark_fills_get_white_text_and_light_fills_black():
    assert text_colour((0.02, 0.19, 0.38)) == "white" and text_colour((0.99, 0.86, 0.78)) == "black"
    with pytest.raises(HUCError, match="^plot_tree: 'zz' is not a node of the tree$"):
        plot_tree(FOUR, {"zz": 1})


@pytest.mark.parametrize("shape", ["flat", "wide_last", "two_level"])
def test_audits_of_wide_trees_draw_every_relevant_node(shape):
    tree = shape_tree(shape, 10, 30, 1)
    atoms = [{"p": [Fraction(1 + (i + k) % 3, 1) for k in range(tree.K)], "label": tree.labels[i % tree.K]}
             for i in range(6)]
    d = FiniteDistribution(tree, atoms, renormalize=True)
    us = {"top1": TopK(tree, 1)}
    fig = plot_audit(d, us)
    relevant = set(TopK(tree, 1).relevant_nodes)
    assert relevant <= set(_node_texts(fig))
    with pytest.raises(HUCError, match=r"^plot_audit: subgroup 'nobody' is not one of \['all'\]$"):
        plot_audit(d, us, subgroup="nobody")


@pytest.mark.parametrize("shape, size, width", [("flat", 1000, 1), ("two_level", 40, 25), ("wide_last", 1, 300)])
def test_many_leaves_share_a_bounded_width_and_save(shape, size, width, tmp_path):
    """A 1,000-class flat tree (and 40 x 25, and a node of 300 children) drawn with four utilities:
    the figure stays within FIGURE_WIDTH, the panels go on two lines of two, the leaves are unnamed
    dots the legend counts, and the CLI's saving (110 dpi) works; before, the figure was
    4 x (0.5 K + 3) inches wide, 2,012 inches for K = 1,000, past matplotlib's 2^16 pixels a side."""
    from matplotlib import pyplot as plt

    from huc_ref import Top1AtDepth, audit
    from huc_ref.cli import _save
    from huc_ref.plot import FIGURE_WIDTH, PANEL_WIDTH, WITNESSES
    tree = shape_tree(shape, size, width, 0)
    atoms = [{"p": [Fraction(1 + (i * k) % 5, 1) for k in range(tree.K)], "label": tree.labels[(7 * i) % tree.K]}
             for i in range(4)]
    d = FiniteDistribution(tree, atoms, renormalize=True)
    us = {"top1": TopK(tree, 1), "top3": TopK(tree, 3), "depth1": Top1AtDepth(tree, 1), "top10": TopK(tree, 10)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (a legend of 41 witnesses left no room: tight_layout warned)
        fig = plot_audit(d, us)
    assert fig.get_figwidth() == 2 * PANEL_WIDTH <= FIGURE_WIDTH and fig.get_figheight() == 2 * 6.5
    trees = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title().split(":")[0] for ax in trees] == list(us)
    assert len({round(ax.get_position().y0, 3) for ax in trees}) == 2  # two lines of two
    assert not any(t.get_text() in tree.labels for t in trees[0].texts)  # leaves unnamed
    assert [t.get_text() for t in trees[0].get_legend().get_texts()][-1] == f"leaf ({tree.K} labels, unnamed)"
    strips = [ax for ax in fig.axes if ax.get_legend() and ax.get_xlabel().startswith("score")]
    relevant = us["top3"].relevant_nodes
    legend = [t.get_text() for t in strips[1].get_legend().get_texts()]
    if len(relevant) > WITNESSES:  # UC, the twelve largest node sups, and a count of the others
        assert len(legend) == WITNESSES + 2
        assert legend[-1] == f"(and {len(relevant) - WITNESSES} nodes with smaller sups)"
        rows = {r.node: r.sup for r in audit(d, us).candidates if r.utility == "top3" and r.node}
        drawn = {text.split(":")[0] for text in legend[1:-1]}
        assert min(rows[v] for v in drawn) >= max(rows[v] for v in set(rows) - drawn)
    else:
        assert len(legend) == 1 + len(relevant)
    _save(lambda plot: fig, str(tmp_path / "wide.png"))
    assert (tmp_path / "wide.png").stat().st_size > 0
    plt.close(fig)


@pytest.mark.parametrize("call, message", [
    (lambda d, us: plot_tree(FOUR, 0.5), "plot_tree: values must map nodes to numbers, got float"),
    (lambda d, us: plot_tree(FOUR, {"v0": 1}, relevant=3), "plot_tree: relevant must list nodes, got int"),
    (lambda d, us: plot_audit(d, us, 0.5), "plot_audit: result must be an AuditResult (audit(dist, utilities)), got "
     "float"),
    (lambda d, us: plot_audit(d, us, subgroup=["all"]), "plot_audit: subgroup ['all'] is not one of ['all']"),
    (lambda d, us: plot_trajectories(None), "plot_trajectories: paths must map a label to a run's trajectory"),
    (lambda d, us: plot_trajectories({"a": [{"uc": 0.1}]}), "plot_trajectories: paths['a'][0] must hold the numbers "
     "uc, huc and log_loss"),
    (lambda d, us: plot_trajectories({"a": []}, epsilon="zz"), "epsilon: 'zz' is not an exact number"),
    (lambda d, us: plot_trajectories({"a": []}, epsilon=2), "plot_trajectories: epsilon must be a number in (0, 1], "
     "got 2"),
])
def test_figures_refuse_arguments_of_the_wrong_type_with_one_error(call, message):
    """Each is one HUCError naming the argument, not a TypeError, AttributeError or ValueError from inside."""
    d = FiniteDistribution(FOUR, [{"p": ["1/4"] * 4, "label": "y1"}])
    with pytest.raises(HUCError) as err:
        call(d, {"top1": TopK(FOUR, 1)})
    assert str(err.value).startswith(message), str(err.value)


def test_trajectories_show_each_decrease_against_the_guarantee():
    path = [{"uc": 0.1, "huc": 0.3, "log_loss": 1.0}, {"uc": 0.05, "huc": 0.1, "log_loss": 0.9},
            {"uc": 0.01, "huc": 0.02, "log_loss": 0.89}]
    fig = plot_trajectories({"HUC-Boost": path}, epsilon=0.1)
    loss = fig.axes[2]
    assert loss.get_yscale() == "log"
    drops = [line for line in loss.get_lines() if line.get_label() == "HUC-Boost"][0].get_ydata()
    assert list(drops) == pytest.approx([0.1, 0.01])
    guarantee = [line for line in loss.get_lines() if line.get_label().startswith("Thm 3.5")][0]
    assert guarantee.get_ydata()[0] == pytest.approx(0.005)


def test_cli_plot_writes_a_figure_and_refuses_other_suffixes(tmp_path, capsys):
    case = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "examples" / "cases"
               / "four_leaf_cancellation.json")
    png = tmp_path / "audit.png"
    assert main(["audit", case, "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["audit", case, "--plot", str(tmp_path / "audit.txt")]) == 2
    assert capsys.readouterr().err.endswith("--plot: '" + str(tmp_path / "audit.txt") + "' must end in .png, "
                                            ".pdf or .svg\n")
    demo = tmp_path / "demo.png"
    assert main(["demo", "--p", "1/2,1/6,1/6,1/6", "--plot", str(demo)]) == 0
    assert demo.exists() and "prediction p = 1/2, 1/6, 1/6, 1/6" in capsys.readouterr().out
    assert main(["demo", "--eta", "1/2,1/2,1/2,1/2"]) == 2
    assert capsys.readouterr().err == "huc: error: --eta: sums to 2, not 1\n"
    # a true law with no mass on a subtree: the line says so (q* = 0/0), no ZeroDivisionError traceback
    assert main(["demo", "--eta", "1,0,0,0"]) == 0
    assert "right none (eta gives the node no mass)" in capsys.readouterr().out
    assert main(["demo", "--utility=-1,-1,-1,-1"]) == 0 and "UC  = 0,  HUC = 0" in capsys.readouterr().out


def test_the_command_closes_each_figure_it_saves(tmp_path, monkeypatch, capsys):
    """``main`` called again and again in one process (a notebook, a test, a script) keeps no figure
    ``--plot`` made open (open ones pile up, one a call, and matplotlib warns from the 21st): each
    is closed once saved (and when saving fails)."""
    import warnings

    from matplotlib import pyplot as plt
    case = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "examples" / "cases"
               / "four_leaf_cancellation.json")
    before = set(plt.get_fignums())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(22):
            assert main(["audit", case, "--plot", str(tmp_path / "audit.png")]) == 0
        assert main(["demo", "--plot", str(tmp_path / "demo.png")]) == 0
    assert set(plt.get_fignums()) == before

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr("matplotlib.figure.Figure.savefig", full)
    assert main(["audit", case, "--plot", str(tmp_path / "audit.png")]) == 2
    assert capsys.readouterr().err.endswith("cannot write " + repr(str(tmp_path / "audit.png")) +
                                            ": No space left on device\n")
    assert set(plt.get_fignums()) == before  # (closed when saving failed too)


def test_bare_huc_prints_usage_and_version(capsys):
    assert main([]) == 0 and capsys.readouterr().out.startswith("usage: huc [-h] [--version] COMMAND ...")
    from huc_ref import __version__
    assert main(["--version"]) == 0 and capsys.readouterr().out == f"huc-ref {__version__}\n"
    for command in ("audit", "boost", "vectors", "demo", "verify"):
        assert main([command, "--help"]) == 0
        text = capsys.readouterr().out
        assert "examples:\n  huc " + command in text
        helps = [line for line in text.splitlines() if line.strip().startswith("--")]
        assert all(len(line.split(None, 1)) == 2 or "=" in line for line in helps)  # every option explained


def test_every_paper_and_edge_vector_can_be_drawn(tmp_path):
    """`huc audit --plot` works for any case: the paper's examples and the edge cases (every utility
    family, unary chains, one- and two-leaf trees, signed subgroups); all 261 valid vectors were
    drawn once by hand (0.3 s each), too slow for every run."""
    from matplotlib import pyplot as plt

    from huc_ref import read_case
    from huc_ref.vectors import load_vectors
    for v in load_vectors():
        if "case" in v and not v["id"].startswith("gen-"):
            case = read_case(v["case"])
            fig = plot_audit(case.distribution, case.utilities)
            assert len(fig.axes) >= 2 * len(case.utilities), v["id"]
            plt.close(fig)


def test_plot_on_every_audit_path_and_the_output_checked_first(tmp_path, capsys, monkeypatch):
    """``--plot`` draws the fast engine's audit of a case and the audit of array files on either
    engine (never ignored silently); ``-o`` and ``--plot`` into a folder that does not exist are
    refused before the work (not after a fit has run to the end)."""
    import json

    import numpy as np

    import huc_ref.calibration as calibration
    case = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "examples" / "cases"
               / "four_leaf_cancellation.json")
    for engine in ("fast", "exact"):
        png = tmp_path / f"case-{engine}.png"
        assert main(["audit", case, "--engine", engine, "--plot", str(png)]) == 0 and png.stat().st_size > 10_000
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(4), 30)
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", np.array([rng.choice(4, p=p) for p in P]))
    spec = {"tree": {"root": "v0", "children": {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]}},
            "labels": ["y1", "y2", "y3", "y4"], "utilities": {"u": {"kind": "table", "values": [-1, 1, 1, 1]}}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    arrays = ["--tree", str(tmp_path / "spec.json"), "--predictions", str(tmp_path / "p.npy"), "--labels",
              str(tmp_path / "y.npy")]
    for engine in ("fast", "exact"):
        png = tmp_path / f"arrays-{engine}.png"
        assert main(["audit", *arrays, "--engine", engine, "--plot", str(png)]) == 0 and png.stat().st_size > 10_000
    capsys.readouterr()

    def never(*args, **kwargs):
        raise AssertionError("fitted before the output was checked")
    monkeypatch.setattr(calibration.HUCBoost, "fit", never)
    missing = str(tmp_path / "no" / "model.json")
    assert main(["fit", *arrays, "-o", missing]) == 2
    assert capsys.readouterr().err == (f"huc: error: -o: cannot write {missing!r}: the folder "
                                       f"{str(tmp_path / 'no')!r} does not exist\n")
    assert main(["audit", *arrays, "--plot", str(tmp_path / "no" / "a.png")]) == 2
    assert "--plot: cannot write" in capsys.readouterr().err


# ---------------------------------------------------------------- plots from what a practitioner has

def _sample(n, seed=0, tree=FOUR):
    """``n`` rows of an overconfident softmax over ``tree``'s labels, with labels drawn from the truth."""
    import numpy as np
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, tree.K))
    P = np.exp(2 * logits) / np.exp(2 * logits).sum(axis=1, keepdims=True)
    truth = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return P, (truth.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)


def _strips(fig):
    return [ax for ax in fig.axes if ax.get_xlabel().startswith("score")]


def _legend(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_arrays_are_audited_and_their_scores_drawn_as_a_weighted_histogram():
    """``plot_audit(y_true, y_prob, tree, utilities)`` with ``labels``, ``subgroups`` and
    ``sample_weight``, as ``fast.audit`` reads them (the arrays were refused: only an exact
    FiniteDistribution could be drawn).  The titles and witnesses are fast.audit's; the histogram's
    bins hold the weight of the rows whose score ``p . u`` (a table utility's, computed here
    directly) falls in them."""
    import numpy as np
    from matplotlib.patches import StepPatch

    from huc_ref import Table, fast
    P, y = _sample(50)
    order = [2, 0, 3, 1]  # the columns in another order, named by labels=
    names = [FOUR.labels[j] for j in order]
    w = np.arange(1, 51, dtype=float)
    groups = {"all": np.ones(50), "high": P[:, 0] > 0.3}
    us = {"t": Table(FOUR, [-1, 1, 1, 1]), "top1": TopK(FOUR, 1)}
    y_columns = np.array([order.index(k) for k in range(4)])[y]  # integer labels: positions among the columns
    fig = plot_audit(y_columns, P[:, order], FOUR, us, labels=names, subgroups=groups, sample_weight=w)
    r = fast.audit(y, P, FOUR, us, subgroups=groups, sample_weight=w)
    for ax, name in zip([ax for ax in fig.axes if ax.get_title()], us):
        huc = max((c for c in r.candidates if c.utility == name and c.node), key=lambda c: c.sup)
        uc = max((c for c in r.candidates if c.utility == name and c.node is None), key=lambda c: c.sup)
        assert ax.get_title() == f"{name}: UC = {uc.sup:.3g}, HUC = {huc.sup:.3g} (node {huc.node})"
    strip = _strips(fig)[0]
    (steps,) = [a for a in strip.patches if isinstance(a, StepPatch)]
    heights, edges = steps.get_data()[:2]
    score = P @ np.array([-1.0, 1, 1, 1])
    assert len(heights) == 10 and edges[0] == score.min() and edges[-1] == score.max()
    want = [w[(score >= a) & ((score < b) | (b == edges[-1]))].sum() / w.sum() for a, b in zip(edges, edges[1:])]
    assert heights.tolist() == pytest.approx(want)
    assert sum(heights) == pytest.approx(1.0)


def test_an_audit_of_either_engine_is_drawn_beside_its_data():
    """``result=`` takes an AuditResult of either engine, beside the distribution or the arrays it
    audited; its own numbers are drawn (the exact ones' UC 0 as ``0``, the float title of the fast
    engine's), and a result of other atoms or utilities is one HUCError naming the remedy."""
    import numpy as np

    from huc_ref import Table, audit, fast
    from huc_ref.plot import score_histogram
    us = {"u": Table(FOUR, [-1, 1, 1, 1])}
    d = FiniteDistribution(FOUR, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])  # App. D.1
    for arithmetic in ("exact", "float64"):
        r = audit(d, us, arithmetic=arithmetic)
        for fig in (plot_audit(d, us, r), plot_audit(d, us, result=r)):
            assert fig.axes[0].get_title() == "u: UC = 0, HUC = 0.25 (node v0)"
            assert _legend(_strips(fig)[0])[:2] == ["UC: empty", "v0: [0.5, 0.5]"]
    P, y = np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3]  # D.1 as a sample
    sample = FiniteDistribution.from_floats(FOUR, y, P)
    for r in (audit(sample, us), fast.audit(y, P, FOUR, us)):
        fig = plot_audit(y, P, FOUR, us, result=r)
        assert fig.axes[0].get_title() == "u: UC = 0, HUC = 0.25 (node v0)"
        heights, edges = score_histogram(np.full(8, 0.5), np.full(8, 1 / 8))
        assert float(heights.max()) == 1.0 and (float(edges[0]), float(edges[-1])) == (0.45, 0.55)
    other = fast.audit(y[:4], P[:4], FOUR, us)
    with pytest.raises(HUCError, match=r"^plot_audit: result audits 4 atoms, the data has 8: give the audit of these "
                                       r"atoms \(or no result\)$"):
        plot_audit(y, P, FOUR, us, result=other)
    with pytest.raises(HUCError, match=r"^plot_audit: result has no rows of utility 'top1': give the audit of these "
                                       r"utilities \(or no result\)$"):
        plot_audit(y, P, FOUR, {"top1": TopK(FOUR, 1)}, result=fast.audit(y, P, FOUR, us))
    assert plot_audit(y, P, FOUR, {"top1": TopK(FOUR, 1)}).axes[0].get_title().startswith("top1: UC = ")  # the remedy


@pytest.mark.parametrize("call, message", [
    (lambda d, us, r: plot_audit(r), "plot_audit: give (dist, utilities) or (y_true, y_prob, tree, utilities), with "
     "result= for an audit already made; got (AuditResult)"),
    (lambda d, us, r: plot_audit(d), "plot_audit: give (dist, utilities) or (y_true, y_prob, tree, utilities), with "
     "result= for an audit already made; got (FiniteDistribution)"),
    (lambda d, us, r: plot_audit(d, us, r, result=r), "plot_audit: result given twice (third and as result=)"),
    (lambda d, us, r: plot_audit(d, us, labels=["y1"]), "plot_audit: labels= applies to arrays (y_true, y_prob, "
     "tree, utilities); a FiniteDistribution carries its own"),
    (lambda d, us, r: plot_audit(d, us, renormalize=True), "plot_audit: renormalize= applies to arrays"),
    (lambda d, us, r: plot_audit(["y1"], [[0.5, 0.5]], FOUR, us), "y_prob: expected 4 columns (one per label), got "
     "shape (1, 2)"),
    (lambda d, us, r: plot_audit(["y1"], [[0.25] * 4], FOUR, us, sample_weight=[-1]), "sample_weight[0]: "),
    (lambda d, us, r: plot_audit(["y1"], [[float("nan")] + [0.25] * 3], FOUR, us, result=r),
     "y_prob[0]: entries must be finite and nonnegative, with a positive finite sum"),
])
def test_plot_audit_refuses_data_in_neither_form_with_one_error(call, message):
    """Each names the forms, the option or the row (an AuditResult alone was an AttributeError, a NaN
    row beside a result a ValueError from numpy's histogram)."""
    from huc_ref import audit
    d = FiniteDistribution(FOUR, [{"p": ["1/4"] * 4, "label": "y1"}])
    us = {"top1": TopK(FOUR, 1)}
    with pytest.raises(HUCError) as err:
        call(d, us, audit(d, us))
    assert str(err.value).startswith(message), str(err.value)


@pytest.mark.parametrize("n", [100, 100_000])
def test_the_score_panel_draws_a_bounded_number_of_artists_at_any_n(n):
    """A bar an atom (``vlines`` at every distinct score) made 10^4 rows a solid black block and
    10^6 rows a million segments; the histogram is one outline of at most BINS bins, so the panel's
    artists are as many at 10^5 rows as at 100."""
    from matplotlib import pyplot as plt
    from matplotlib.patches import StepPatch

    from huc_ref.plot import BINS
    P, y = _sample(n, seed=1)
    fig = plot_audit(y, P, FOUR, {"top1": TopK(FOUR, 1)})
    strip = _strips(fig)[0]
    steps = [a for a in strip.get_children() if isinstance(a, StepPatch)]
    assert len(steps) == 1 and len(steps[0].get_data()[0]) == (10 if n == 100 else BINS)
    assert len(strip.get_children()) <= 30
    assert sum(len(ax.get_children()) for ax in fig.axes) < 100
    plt.close(fig)


def test_a_fitted_huc_boost_draws_its_trajectory():
    """``plot_trajectories`` takes a fitted HUCBoost (it took only replay.trajectory lists): its
    run's log loss after every update (the decreases, against eps^2/2 for its own epsilon), K.1's
    validation HUC after every prefix, the report's UC before and after, the kept prefix marked;
    without validation data, the report's UC and HUC at the start and the end only."""
    import math

    import numpy as np

    from huc_ref import Table
    from huc_ref.calibration import HUCBoost
    us = {"u": Table(FOUR, [-1, 1, 1, 1])}
    P, y = np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3]  # App. D.1 as a sample
    yv = [0, 1, 2, 2, 2, 3, 3, 3]  # (one y1 read as y2: K.1 keeps the first update of 13)
    model = HUCBoost(FOUR, us, epsilon="1/100", prefix_guard=None).fit(P, y, validation=(P, yv))  # (K.1's rule)
    run = model.run_
    assert (model.n_updates_, len(run.updates)) == (1, 13)
    fig = plot_trajectories(model)
    uc, huc, loss = fig.axes
    (uc_line,), (huc_line,) = ([line for line in ax.get_lines() if line.get_label().startswith("HUC-Boost (")]
                               for ax in (uc, huc))
    assert huc_line.get_label() == "HUC-Boost (validation data)"
    assert huc_line.get_ydata().tolist() == model.validation_errors_
    ucs = uc_line.get_ydata()
    assert ucs[0] == model.report_["before"].uc.sup and ucs[model.n_updates_] == model.report_["after"].uc.sup
    assert sum(not math.isnan(v) for v in ucs) == 2
    drops = [line for line in loss.get_lines() if line.get_label() == "HUC-Boost (calibration data)"][0]
    assert drops.get_ydata().tolist() == pytest.approx([u["log_loss_before"] - u["log_loss_after"]
                                                        for u in run.updates])
    assert [line.get_ydata()[0] for line in loss.get_lines() if line.get_label().startswith("Thm 3.5")] == \
        [pytest.approx(0.01 ** 2 / 2)]
    (kept,) = [line for line in huc.get_lines() if "kept prefix" in line.get_label()]
    assert kept.get_label() == "HUC-Boost: kept prefix, 1 update (K.1)" and kept.get_xdata()[0] == 1
    from huc_ref.calibration import NoValidationWarning
    with pytest.warns(NoValidationWarning):  # (no validation data: the calibration data's report)
        alone = HUCBoost(FOUR, us, epsilon="1/100").fit(P, y, validation=False)
    fig = plot_trajectories({"mine": alone, "replayed": [{"uc": 0.1, "huc": 0.2, "log_loss": 1.0}]}, epsilon="1/10")
    line = [x for x in fig.axes[1].get_lines() if x.get_label() == "mine (calibration data)"][0]
    values = line.get_ydata()
    assert len(values) == len(alone.run_.updates) + 1
    assert values[0] == 0.25 and values[-1] == alone.report_["after"].huc.sup  # D.1's HUC, then the report's
    assert all(math.isnan(v) for v in values[1:-1])
    with pytest.raises(HUCError, match=r"^plot_trajectories: paths\['m'\] is an HUCBoost not fitted yet; call "
                                       r"fit\(y_prob, y_true\) first$"):
        plot_trajectories({"m": HUCBoost(FOUR, us)})


HOSTILE = ["$x$", "\\frac", "cost $5", "a_b^c", "$\\frac$", "$$", "50% $"]


def test_names_are_drawn_as_plain_text_never_as_mathtext(tmp_path):
    """Node, label, utility and subgroup names such as ``$x$``, ``\\frac`` and an unbalanced ``$``
    are drawn as they are: matplotlib's mathtext read ``$\\frac$`` and raised when the figure was
    drawn (after the whole audit), and showed ``$x$`` as an italic x."""
    import numpy as np
    from matplotlib import pyplot as plt

    from huc_ref import Table
    tree = LabelTree.from_children("$root", {"$root": ["$x$", "a_b^c", "\\frac"], "$x$": ["$\\frac$", "$$"],
                                             "a_b^c": ["cost $5", "50% $"], "\\frac": ["^", "_"]}, labels=None)
    P, y = _sample(30, tree=tree)
    us = {"$u_1$": Table(tree, [1, -1, 1, -1, 1, -1]), "\\frac": TopK(tree, 1)}
    fig = plot_audit(y, P, tree, us, labels=tree.labels, subgroups={"$c$": np.ones(30), "\\x_1": P[:, 0] > 0.2})
    d = FiniteDistribution(tree, [{"p": ["1/2", "1/10", "1/10", "1/10", "1/10", "1/10"], "label": "$$"},
                                  {"p": ["1/10", "1/10", "1/10", "1/10", "1/10", "1/2"], "label": "_"}])
    paths = {name: [{"uc": 0.1, "huc": 0.2, "log_loss": 1.0}, {"uc": 0.05, "huc": 0.1, "log_loss": 0.9}]
             for name in HOSTILE}
    for figure in (fig, plot_audit(d, us, subgroup="all"), plot_trajectories(paths, epsilon="1/10")):
        for suffix in ("png", "svg"):
            figure.savefig(tmp_path / f"hostile.{suffix}", dpi=40)  # (mathtext raised here)
        texts = [t for t in figure.findobj(plt.Text) if t.get_text()]
        named = [t for t in texts if any(name in t.get_text() for name in HOSTILE + ["$root", "$u_1$", "$c$"])]
        assert named and not any(t.get_parse_math() for t in named)
        plt.close(figure)
    shown = {t.get_text().split("\n")[0] for t in fig.axes[0].texts}
    assert set(tree.nodes) <= shown  # every node and label as written
    assert fig.axes[0].get_title().startswith("$u_1$: UC = ")


def test_cli_plot_of_arrays_draws_without_an_exact_distribution(tmp_path, capsys):
    """``huc audit --predictions ... --engine fast --plot`` draws from the arrays: a decision tree's
    zero off a row's label (which the fast engine audits) was refused for the figure's sake
    (the figure was drawn from an exact FiniteDistribution)."""
    import json

    import numpy as np
    P, y = _sample(40, seed=2)
    zero = (y[4] + 1) % 4
    P[4, y[4]] += P[4, zero]
    P[4, zero] = 0.0
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", y)
    spec = {"tree": {"root": "v0", "children": {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]}},
            "labels": ["y1", "y2", "y3", "y4"], "utilities": {"$u$": {"kind": "top1_at_depth", "depth": 1}}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    png = tmp_path / "a.png"
    assert main(["audit", "--tree", str(tmp_path / "spec.json"), "--predictions", str(tmp_path / "p.npy"),
                 "--labels", str(tmp_path / "y.npy"), "--engine", "fast", "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    capsys.readouterr()


def test_an_unknown_subgroup_is_refused_before_the_audit_runs(monkeypatch):
    """``subgroup=`` is checked against the data's subgroups first (it was checked after the whole
    audit, whose cost grows with n); the message lists the subgroups there are."""
    import sys

    import numpy as np

    def never(*args, **kwargs):
        raise AssertionError("audited before the subgroup was checked")
    monkeypatch.setattr(sys.modules["huc_ref.fast.audit"], "audit", never)
    monkeypatch.setattr("huc_ref.plot.audit", never)
    P, y = _sample(20)
    us = {"top1": TopK(FOUR, 1)}
    with pytest.raises(HUCError, match=r"^plot_audit: subgroup 'old' is not one of \['all', 'high'\]$"):
        plot_audit(y, P, FOUR, us, subgroups={"all": np.ones(20), "high": P[:, 0] > 0.3}, subgroup="old")
    with pytest.raises(HUCError, match=r"^plot_audit: subgroup 'old' is not one of \['all'\]$"):
        plot_audit(FiniteDistribution(FOUR, [{"p": ["1/4"] * 4, "label": "y1"}]), us, subgroup="old")
