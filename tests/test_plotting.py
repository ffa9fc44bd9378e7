"""pvosimr.plotting: the tree layout's geometry and what each figure actually draws."""

import itertools
import subprocess
import sys

import numpy as np
import pytest
from _trees import FIG1_PARENTS, fig1_tree, random_trees
from hypothesis import given, settings

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from pvosimr import Topology, plotting, zoo  # noqa: E402
from pvosimr.reference.truth import dense_delassus  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _check_layout(parents, pos):
    assert set(pos) == set(range(len(parents)))
    for i, p in enumerate(parents):
        if p >= 0:
            assert pos[i][1] == pos[p][1] - 1, f"node {i} is not one level below its parent {p}"
    for a, b in itertools.combinations(pos, 2):
        gap = np.hypot(pos[a][0] - pos[b][0], pos[a][1] - pos[b][1])
        assert gap >= 1 - 1e-12, f"nodes {a} and {b} overlap (distance {gap})"


def test_layout_of_the_fig1_tree():
    parents = [-1, *FIG1_PARENTS, 6, 3, 5]  # world, links 1-6, EEs 7-9 on links 6, 3, 5
    assert list(Topology(*fig1_tree()).parent) == parents
    pos = plotting.tree_layout(parents)
    _check_layout(parents, pos)
    assert pos[0][1] == 0.0
    # Link 2 branches into 3 (-> 4 -> 5, EEs 8, 9) and 6 (EE 7): 6's subtree is right of 3's.
    assert pos[6][0] > max(pos[i][0] for i in (3, 4, 5, 8, 9))


@settings(max_examples=40, deadline=None)
@given(random_trees())
def test_layout_children_below_parents_and_no_overlap(tree):
    model, constraints = tree
    topo = Topology(model, constraints)
    _check_layout(topo.parent, plotting.tree_layout(topo.parent))


def test_layout_keeps_subtrees_apart():
    # Two deep chains under one root: every level holds one node of each, left chain first.
    parents = [-1, 0, 1, 2, 3, 0, 5, 6, 7]
    pos = plotting.tree_layout(parents)
    for left, right in zip(range(1, 5), range(5, 9), strict=True):
        assert pos[left][1] == pos[right][1]
        assert pos[right][0] - pos[left][0] >= 1
    assert pos[0][0] == pytest.approx(0.5 * (pos[1][0] + pos[5][0]))


def test_layout_rejects_a_cycle():
    with pytest.raises(ValueError, match="cycle"):
        plotting.tree_layout([-1, 2, 1])


def test_set_label():
    assert plotting.set_label([6, 0, 1, 2, 3]) == "{0–3, 6}"
    assert plotting.set_label([4]) == "{4}"


def _offsets(ax, label):
    (collection,) = [c for c in ax.collections if c.get_label() == label]
    return {tuple(xy) for xy in np.asarray(collection.get_offsets())}


def test_tree_drawing_highlights_exactly_the_branching_links():
    model, constraints = fig1_tree()
    topo = Topology(model, constraints)
    drawing = plotting.draw_kinematic_tree(topo, labels="all")
    assert drawing.branching == topo.N == (0, 2, 3, 7, 8, 9)
    assert _offsets(drawing.ax, plotting.BRANCHING_LABEL) == {drawing.positions[i] for i in topo.N}
    assert _offsets(drawing.ax, plotting.EE_LABEL) == {drawing.positions[e] for e in topo.ees}
    constrained = {topo.link_of[e] for e in topo.ees}
    assert _offsets(drawing.ax, plotting.CONSTRAINED_LABEL) == {
        drawing.positions[i] for i in constrained
    }


def test_tree_drawing_colours_links_by_supported_set():
    robot = zoo.stem_with_branches(4, 2)
    topo = Topology(robot.model, robot.constraints)
    drawing = plotting.draw_kinematic_tree(topo, labels="key")
    sets = {topo.ES[i] for i in topo.links if topo.ES[i]}
    assert set(drawing.es_colour) == sets
    assert len(set(drawing.es_colour.values())) == len(sets)
    for i in topo.links:
        expected = drawing.es_colour.get(topo.ES[i])
        assert (drawing.node_colour[i] == expected) if expected else i not in sets
    # Every ES set is in the legend, by constraint index.
    legend = [t.get_text() for t in drawing.ax.get_legend().get_texts()]
    for s in sets:
        label = plotting.set_label([topo.ees.index(e) for e in s])
        assert f"supports {label}" in legend


def test_delassus_heatmap_shows_G_with_block_boundaries():
    robot = zoo.stem_with_branches(3, 2)
    topo = Topology(robot.model, robot.constraints)
    q = robot.q_random(np.random.default_rng(0))
    G = dense_delassus(robot.model, q, robot.constraints)
    ax = plotting.draw_delassus(G, topo)
    np.testing.assert_array_equal(ax.images[0].get_array(), G)
    lines = sorted({float(line.get_xdata()[0]) for line in ax.lines if line.get_xdata()[0] > 0})
    assert lines == [o - 0.5 for o in topo.offsets[1:]]
    with pytest.raises(ValueError, match="shape"):
        plotting.draw_delassus(G[:-1, :-1], topo)


def test_eigenvalue_plot_sorts_magnitudes_and_counts_rank():
    values = np.array([1e-17, 2.0, -3e-16, 0.5])
    ax = plotting.draw_eigenvalues({"G": values})
    assert ax.get_yscale() == "log"
    y = np.concatenate([np.asarray(c.get_offsets())[:, 1] for c in ax.collections])
    assert sorted(y, reverse=True) == [2.0, 0.5, 3e-16, 1e-17]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "G (rank 2/4)" in labels


def test_bars_heights_gaps_and_log_axis():
    values = {"case a": {"x": 10.0, "y": 1000.0}, "case b": {"y": 5.0}}
    ax = plotting.draw_bars(values, ylabel="time", log=True)
    assert ax.get_yscale() == "log"
    heights = {c.get_label(): [p.get_height() for p in c.patches] for c in ax.containers}
    assert heights == {"x": [10.0], "y": [1000.0, 5.0]}
    assert [t.get_text() for t in ax.get_xticklabels()] == ["case a", "case b"]


def test_hbars_one_bar_per_key_coloured_by_group():
    values = {"numpy a": 800.0, "C++ b": 12.0, "numpy c": 1200.0}
    category = {"numpy a": "numpy", "numpy c": "numpy", "C++ b": "C++"}
    ax = plotting.draw_hbars(values, xlabel="µs", category=category, log=True)
    assert ax.get_xscale() == "log"
    widths = {c.get_label(): [p.get_width() for p in c.patches] for c in ax.containers}
    assert widths == {"numpy": [800.0, 1200.0], "C++": [12.0]}
    assert [t.get_text() for t in ax.get_yticklabels()] == list(values)
    colours = {c.get_label(): {p.get_facecolor() for p in c.patches} for c in ax.containers}
    assert len(colours["numpy"]) == 1 and colours["numpy"] != colours["C++"]


def test_hbars_take_the_palette_colour_of_each_key():
    values = {"pvosimr pv-osimr": 800.0, "pvosimr efpa": 900.0, "reference pin-efpa": 12.0}
    colors = {
        "pvosimr pv-osimr": plotting.color("pv-osimr"),
        "pvosimr efpa": plotting.color("EFPA"),
        "reference pin-efpa": plotting.color("ref:pin-efpa"),
    }
    ax = plotting.draw_hbars(values, xlabel="µs", colors=colors)
    drawn = [matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches]
    assert drawn == ["#1b9e77", "#7570b3", "#6b8cc7"]  # bars in key order, top to bottom
    assert ax.get_legend() is None  # the keys name the bars


def test_delassus_colour_scale_reaches_the_weakest_coupling():
    """Entries spanning decades (1e4 on a weld, 1e-2 between a hand and a foot) all get a
    logarithmic colour: the linear band stops at the smallest nonzero magnitude."""
    robot = zoo.stem_with_branches(3, 2)
    topo = Topology(robot.model, robot.constraints)
    G = np.diag(np.full(topo.m, 2e4))
    G[0, -1] = G[-1, 0] = 1e-2
    norm = plotting.draw_delassus(G, topo).images[0].norm
    assert norm.linthresh <= 1e-2
    assert 0.5 + 0.05 < norm(1e-2) < norm(2e4)  # visibly off white (0.5)


def test_es_colours_avoid_the_algorithm_hues():
    """ES sets are not drawn in PV-OSIM's, PV-OSIMr's or PV-OSIMh's hue (those mean algorithms)."""
    hues = [
        plotting.tree._hue(matplotlib.colors.to_rgb(plotting.COLORS[a]))
        for a in plotting.tree.RESERVED_HUES
    ]
    palette = plotting.tree._palette(40)
    assert len(set(palette[:18])) == 18
    for colour in palette:
        h = plotting.tree._hue(colour)
        assert all(min(abs(h - r), 360 - abs(h - r)) >= 45 for r in hues), colour


@pytest.mark.slow  # seconds (measured)
def test_timings_figure_from_its_json(tmp_path, monkeypatch):
    """timings.png redrawn from the committed timings.json: a numpy panel and a compiled panel,
    no empty axes, numpy PV-OSIMh drawn, no look-alike colours within a panel, and no title
    promising a right axis that is not there."""
    from pathlib import Path

    from benchmarks import figure

    drawn = []  # the figure plot() closes once it is saved, kept open to be read here
    monkeypatch.setattr(plt, "close", lambda fig=None: drawn.append(fig))
    run = figure.load(Path(__file__).resolve().parents[1] / "figures" / "timings.json")
    written = figure.plot(run, tmp_path / "timings")
    assert [p.name for p in written if p.is_file()] == ["timings.png", "timings.pdf"]
    (fig,) = drawn
    numpy_ax, compiled_ax = fig.axes[:2]
    assert "numpy" in numpy_ax.get_title() and "C++" in compiled_ax.get_title()
    assert all(ax.has_data() for ax in fig.axes), "an empty panel"
    for ax in (numpy_ax, compiled_ax):
        bars = [c for c in ax.containers if isinstance(c, matplotlib.container.BarContainer)]
        colours = [np.array(c.patches[0].get_facecolor()[:3]) for c in bars]
        assert len(colours) >= 6
        gaps = [np.linalg.norm(a - b) for a, b in itertools.combinations(colours, 2)]
        assert min(gaps) >= 0.2, f"two look-alike colours in {ax.get_title()!r}"
    labels = [t.get_text() for t in numpy_ax.get_legend().get_texts()]
    assert "pvosimr numpy PV-OSIMh" in labels
    for ax in fig.axes:
        twins = [a for a in fig.axes if a is not ax and a.bbox.bounds == ax.bbox.bounds]
        assert "right axis" not in ax.get_title() or twins, ax.get_title()


@pytest.mark.slow  # seconds of numpy or CasADi work
def test_accuracy_figure_from_its_json(tmp_path, monkeypatch):
    """accuracy.png redrawn from the committed accuracy.json: the legend outside the panels,
    Pinocchio's two routines in different markers, the truth's change of precision marked."""
    from pathlib import Path

    from benchmarks.accuracy import report

    monkeypatch.setattr(plt, "close", lambda fig=None: None)
    root = Path(__file__).resolve().parents[1]
    report.redraw(root / "validation" / "accuracy.json", tmp_path / "accuracy.png")
    fig = plt.gcf()
    assert all(ax.get_legend() is None for ax in fig.axes) and len(fig.legends) == 1
    assert report.TRUTH_SWITCH in [t.get_text() for t in fig.legends[0].get_texts()]
    for ax in fig.axes[:3]:  # the depth panels: their truth turns wide once nv > 300
        lines = {line.get_label(): line for line in ax.lines}
        efpa, pv = lines["pin-efpa"], lines["pin-pv-osimr"]
        assert (efpa.get_marker(), efpa.get_markerfacecolor()) != (
            pv.get_marker(),
            pv.get_markerfacecolor(),
        )
        assert [line for line in ax.lines if line.get_linestyle() == "-."], ax.get_title()


def test_bars_hatch_the_named_series_and_separate_thousands():
    values = {"case a": {"pv-osimr": 12000.0, "pv-osimh": 11000.0}}
    ax = plotting.draw_bars(values, ylabel="ops", fmt="{:,.0f}", hatched=("pv-osimh",))
    hatches = {c.get_label(): {p.get_hatch() for p in c.patches} for c in ax.containers}
    assert hatches == {"pv-osimr": {None}, "pv-osimh": {"///"}}
    ax.figure.canvas.draw()
    assert "10,000" in [t.get_text() for t in ax.get_yticklabels()]


@pytest.mark.parametrize(
    "call",
    [
        "plotting.pyplot()",
        "plotting.draw_bars({'case': {'pv-osimr': 1}})",
        "plotting.draw_delassus(np.eye(2))",
    ],
)
def test_without_matplotlib_a_drawing_names_the_extra(call):
    """The module imports without matplotlib (its palette serves the commands); each drawing
    function then says in one line which extra to install."""
    head = "import sys; sys.modules['matplotlib'] = None\nimport numpy as np\n"
    code = f"{head}from pvosimr import plotting\n{call}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: pvosimr.plotting.")
    assert last.endswith('needs matplotlib: pip install "pvosimr[plots]"')
    assert "During handling" not in done.stderr
