"""Figures for the notebooks: the kinematic tree with its constraint structure, G, bar charts.

matplotlib (the ``plots`` extra) is imported inside the drawing functions, so ``import pvosimr``
never needs it; :func:`tree_layout` is pure Python.

* :func:`tree_layout` — a tidy layered layout of any rooted tree given by its parent array;
* :func:`draw_kinematic_tree` — links, end effectors (EEs), the branching links ``N`` and, by
  colour, the set ``ES(i)`` of EEs each link supports (:class:`pvosimr.Topology`);
* :func:`draw_delassus` — a heatmap of ``G`` with its constraint blocks marked;
* :func:`draw_eigenvalues` — sorted ``|eigenvalues|`` on a log axis, with the rank threshold;
* :func:`draw_bars` — grouped bar charts (operation counts per case and algorithm);
* :func:`draw_hbars` — one horizontal bar per method, coloured by group (timings).

It is also the one home of the palette (:data:`COLORS`, :data:`LABELS`, :data:`MARKERS`,
:func:`color`) and of the matplotlib import (:func:`pyplot`) that the notebooks, ``pvosimr
figures`` and ``pvosimr bench`` share, so an algorithm has one colour wherever it is drawn.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .extras import require
from .topology import Topology

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.axes import Axes

__all__ = [
    "COLORS",
    "LABELS",
    "MARKERS",
    "TreeDrawing",
    "color",
    "draw_bars",
    "draw_delassus",
    "draw_eigenvalues",
    "draw_hbars",
    "draw_kinematic_tree",
    "pyplot",
    "set_label",
    "tree_layout",
]

Position = tuple[float, float]

LABELS = {
    "pv-osimr": "PV-OSIMr",
    "pv-osim": "PV-OSIM",
    "pv-osimh": "PV-OSIMh",
    "efpa": "EFPA",
    "ltl-osim": "LTL-OSIM",
    "naive": "naive",
}
"""The paper's name of each algorithm (PV-OSIMh is pvosimr's hybrid)."""

COLORS = {
    "pv-osimr": "#1b9e77",
    "pv-osim": "#d95f02",
    "pv-osimh": "#a50f15",
    "efpa": "#7570b3",
    "ltl-osim": "#757575",
    "naive": "#bdbdbd",
    # the other ways to the same matrix (``pvosimr bench``'s methods)
    "batch:pv-osimr": "#66a61e",
    "codegen:pv-osimr": "#e7298a",
    "codegen-external:pv-osimr": "#f4a6cf",
    "pin-efpa": "#1f3b73",
    "pin-pv-osimr": "#a6761d",
    "ref:pin-efpa": "#6b8cc7",
    "ref:pin-pv-osimr": "#e6ab02",
    "ref:pin-cholesky": "#000000",
}
"""One colour per algorithm (Dark2, grey for the baselines) and per timed path."""

MARKERS = {
    "pv-osimr": "o",
    "pv-osim": "s",
    "pv-osimh": "D",
    "efpa": "^",
    "ltl-osim": "v",
    "naive": "x",
}
"""One marker per algorithm, for curves."""


def _drawing(draw: Callable) -> Callable:
    """A drawing function: without matplotlib, one line naming the extra, not a traceback."""

    @functools.wraps(draw)
    def checked(*args: Any, **kwargs: Any) -> Any:
        require(f"pvosimr.plotting.{draw.__name__}", "matplotlib")
        return draw(*args, **kwargs)

    return checked


def color(key: str, fallback: int = 0) -> str:
    """The palette colour of an algorithm (``"efpa"``), its label (``"EFPA"``) or a timed path
    (``"numpy:efpa"``, ``"pin-efpa"``); matplotlib's cycle colour ``C<fallback>`` otherwise."""
    by_label = {label: name for name, label in LABELS.items()}
    name = by_label.get(key, key.removeprefix("numpy:"))
    return COLORS.get(name, f"C{fallback}")


def pyplot():
    """``matplotlib.pyplot`` (the ``plots`` extra) for commands that only write files: the Agg
    backend (works headless, in CI) and the house font sizes of the written figures."""
    require("pvosimr.plotting.pyplot", "matplotlib")  # one line naming the extra
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "axes.titlesize": 9, "legend.fontsize": 8})
    return plt


#: Label of the scatter drawn around the branching links (tests and legends look it up).
BRANCHING_LABEL = "branching link (in N)"
EE_LABEL = "end effector (EE, one per constraint)"
CONSTRAINED_LABEL = "constrained link (carries an EE)"


def tree_layout(parents: Sequence[int]) -> dict[int, Position]:
    """A tidy layered layout: node ``i`` at ``(x, -depth(i))``.

    ``parents[i]`` is the parent of node ``i`` (negative for a root).  Leaves get the x
    positions 0, 1, 2, … in depth-first order (children visited by increasing id), and every
    other node sits at the midpoint of its first and last child.  Each subtree therefore owns an
    interval of x that no other subtree at the same depth enters, so two nodes on the same level
    are at least 1 apart and every child is exactly one level below its parent.
    """
    n = len(parents)
    children: list[list[int]] = [[] for _ in range(n)]
    roots = []
    for i, p in enumerate(parents):
        if p < 0:
            roots.append(i)
        elif not 0 <= p < n or p == i:
            raise ValueError(f"node {i} has parent {p}, which is not a node of this tree")
        else:
            children[p].append(i)
    depth: dict[int, int] = {}
    x: dict[int, float] = {}
    next_leaf = 0.0
    for root in roots:
        # Iterative post-order: (node, expanded?) so deep chains need no recursion.
        stack: list[tuple[int, bool]] = [(root, False)]
        depth[root] = 0
        while stack:
            node, expanded = stack.pop()
            if expanded:
                kids = children[node]
                if kids:
                    x[node] = 0.5 * (x[kids[0]] + x[kids[-1]])
                else:
                    x[node], next_leaf = next_leaf, next_leaf + 1.0
                continue
            stack.append((node, True))
            for c in reversed(children[node]):
                depth[c] = depth[node] + 1
                stack.append((c, False))
    if len(x) != n:
        raise ValueError("the parent array has a cycle: some nodes are not below any root")
    return {i: (x[i], -float(depth[i])) for i in range(n)}


def set_label(ids: Sequence[int]) -> str:
    """``{0–3, 6}``: a set of integers with consecutive runs shortened."""
    ids = sorted(ids)
    runs: list[str] = []
    start = prev = None
    for i in [*ids, None]:
        if start is not None and (i is None or i != prev + 1):
            runs.append(str(start) if start == prev else f"{start}–{prev}")
            start = None
        if i is not None and start is None:
            start = i
        prev = i
    return "{" + ", ".join(runs) + "}"


RESERVED_HUES = ("pv-osim", "pv-osimr", "pv-osimh")
"""Algorithms whose hues the ES colours of the tree avoid (they mean an algorithm elsewhere)."""


def _hue(rgb: Sequence[float]) -> float:
    import colorsys

    return 360.0 * colorsys.rgb_to_hsv(*rgb[:3])[0]


def _far_from_algorithms(rgb: Sequence[float], margin: float = 45.0) -> bool:
    """Whether ``rgb``'s hue is at least ``margin`` degrees from every reserved algorithm's."""
    from matplotlib.colors import to_rgb

    hues = [_hue(to_rgb(COLORS[a])) for a in RESERVED_HUES]
    return all(min(abs(_hue(rgb) - h), 360 - abs(_hue(rgb) - h)) >= margin for h in hues)


def _saturated(rgb: Sequence[float]) -> bool:
    """Not a grey nor a near-white (those read as "supports no constraint")."""
    import colorsys

    return colorsys.rgb_to_hsv(*rgb[:3])[1] >= 0.2


def _palette(count: int) -> list[tuple[float, ...]]:
    """``count`` colours from tab20, tab20b and tab20c without the greyish shades and the hues
    of :data:`RESERVED_HUES`, most different first (:func:`_spread`); they repeat past the 18
    that remain.  Grey is reserved for "no constraint"."""
    from matplotlib import colormaps

    shades = [list(colormaps[n].colors) for n in ("tab20", "tab20b", "tab20c")]
    ordered = [c for table in shades for c in table[0::2]] + [
        c for table in shades for c in table[1::2]
    ]
    colours = _spread([c for c in ordered if _saturated(c) and _far_from_algorithms(c)])
    return [tuple(colours[k % len(colours)]) for k in range(count)]


def _spread(colours: list) -> list:
    """``colours`` reordered so that each is as far (RGB) as can be from all before it: the
    few sets of a small tree get the most different colours."""
    rest, picked = [np.asarray(c, float) for c in colours[1:]], [np.asarray(colours[0], float)]
    while rest:
        gaps = [min(np.linalg.norm(c - p) for p in picked) for c in rest]
        picked.append(rest.pop(int(np.argmax(gaps))))
    return [tuple(c) for c in picked]


@dataclass
class TreeDrawing:
    """What :func:`draw_kinematic_tree` drew, for inspection.

    Attributes:
        ax: the matplotlib Axes.
        positions: node id → (x, y), as returned by :func:`tree_layout` on ``topology.parent``.
        branching: node ids marked as branching links (``topology.N``).
        ees: node ids drawn as end effectors.
        es_colour: ``ES`` set (tuple of EE node ids) → RGB colour of the links supporting it.
        node_colour: link id → its fill colour (grey for links that support no constraint).
    """

    ax: Axes
    positions: dict[int, Position]
    branching: tuple[int, ...]
    ees: tuple[int, ...]
    es_colour: dict[tuple[int, ...], tuple[float, ...]]
    node_colour: dict[int, tuple[float, ...]]


def _new_axes(ax: Axes | None, size: tuple[float, float]) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=size, layout="constrained")
    return ax


@_drawing
def draw_kinematic_tree(
    topology: Topology,
    *,
    constraint_names: Sequence[str] | None = None,
    name_of: Callable[[str], str] | None = None,
    labels: str = "all",
    ax: Axes | None = None,
    title: str | None = None,
) -> TreeDrawing:
    """Draw the tree of ``topology``: world, links, EEs, branching links and supports.

    Links are filled with one colour per distinct set ``ES(i)`` of supported EEs (grey when
    ``ES(i)`` is empty) and the legend names each set by constraint index.  EEs are stars
    labelled with their constraint index (and ``constraint_names[k]`` if given), constrained
    links are diamonds, and every node of ``topology.N`` gets a black ring.

    Args:
        topology: the tree and constraint structure.
        constraint_names: one name per constraint, in list order (EE labels).
        name_of: shortens a link (joint) name for its label, e.g. dropping a common prefix.
        labels: ``"all"`` links labelled, ``"key"`` only the branching and constrained links
            and the root link, ``"none"``.
        ax: draw into this Axes (default: a new figure sized for the tree).
        title: Axes title.
    """
    if labels not in ("all", "key", "none"):
        raise ValueError(f"labels must be 'all', 'key' or 'none', got {labels!r}")
    from matplotlib.patches import Patch

    parents = list(topology.parent)
    pos = tree_layout(parents)
    width = max(x for x, _ in pos.values()) + 1
    height = -min(y for _, y in pos.values()) + 1
    ax = _new_axes(ax, (min(4.0 + 0.95 * width, 18.0), min(1.5 + 0.42 * height, 14.0)))
    ees = tuple(topology.ees)
    constrained = sorted(set(topology.link_of.values()))
    links = list(topology.links)
    names = [str(n) for n in topology.model.names]
    short = name_of or (lambda s: s)

    for i, p in enumerate(parents):
        if p >= 0:
            (x0, y0), (x1, y1) = pos[p], pos[i]
            ax.plot(
                [x0, x1], [y0, y1], color="0.55", lw=1.0, ls="--" if i in ees else "-", zorder=1
            )

    sets = []
    for i in links:
        if topology.ES[i] and topology.ES[i] not in sets:
            sets.append(topology.ES[i])
    es_colour = dict(zip(sets, _palette(len(sets)), strict=True))
    grey = (0.82, 0.82, 0.82)
    node_colour = {i: es_colour.get(topology.ES[i], grey) for i in links}

    def xy(nodes: Sequence[int]) -> tuple[list[float], list[float]]:
        return [pos[i][0] for i in nodes], [pos[i][1] for i in nodes]

    plain = [i for i in links if i not in constrained]
    ax.scatter(*xy(plain), s=90, c=[node_colour[i] for i in plain], edgecolors="0.3", zorder=3)
    ax.scatter(
        *xy(constrained),
        s=150,
        marker="D",
        c=[node_colour[i] for i in constrained],
        edgecolors="black",
        linewidths=1.5,
        zorder=3,
        label=CONSTRAINED_LABEL,
    )
    ax.scatter(*xy([0]), s=160, marker="s", c="black", zorder=3)
    ax.scatter(*xy(ees), s=260, marker="*", c="gold", edgecolors="black", zorder=4, label=EE_LABEL)
    branching = tuple(topology.N)
    ax.scatter(
        *xy(branching),
        s=520,
        facecolors="none",
        edgecolors="black",
        linewidths=2.0,
        zorder=5,
        label=BRANCHING_LABEL,
    )

    backing = {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8}
    ax.annotate("world", pos[0], xytext=(15, 0), textcoords="offset points", va="center")
    key = set(branching) | set(constrained) | {1}
    for i in links:
        if labels == "all" or (labels == "key" and i in key):
            ax.annotate(
                short(names[i]),
                pos[i],
                xytext=(15 if i in topology.N else 9, 0),
                textcoords="offset points",
                fontsize=7,
                va="center",
                bbox=backing,
                zorder=6,
            )
    for k, e in enumerate(ees):
        text = str(k) if constraint_names is None else f"{k}: {constraint_names[k]}"
        ax.annotate(
            text,
            pos[e],
            xytext=(0, -15),
            textcoords="offset points",
            fontsize=7,
            rotation=90,
            ha="center",
            va="top",
        )

    handles: list[Any] = [
        _legend_marker("s", 8, "world (node 0)", color="black"),
        _legend_marker("o", 9, "link", color=grey, mec="0.3"),
        _legend_marker("D", 9, CONSTRAINED_LABEL, mfc="white", mec="black", mew=1.5),
        _legend_marker("*", 14, EE_LABEL, mfc="gold", mec="black"),
        _legend_marker("o", 16, BRANCHING_LABEL, mfc="none", mec="black", mew=2),
        Patch(color=grey, label="supports no constraint"),
    ]
    handles += [
        Patch(color=c, label=f"supports {set_label(_indices(topology, s))}")
        for s, c in es_colour.items()
    ]
    ax.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize=8,
        title="ES(i): constraints supported\n(by constraint index)",
        title_fontsize=8,
        labelspacing=0.9,
        borderpad=0.8,
    )
    ax.set_xlim(-0.8, width - 0.2)
    ax.set_ylim(-height - 0.9, 0.6)
    ax.set_xticks([])
    ax.set_yticks(range(0, -int(height), -1 if height < 12 else -2))
    ax.set_yticklabels([str(-t) for t in ax.get_yticks()])
    ax.set_ylabel("depth in the tree (joints from the world)")
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    if title:
        ax.set_title(title)
    return TreeDrawing(ax, pos, branching, ees, es_colour, node_colour)


def _legend_marker(marker: str, size: float, label: str, **style: Any) -> Any:
    """A legend entry that is one marker, no line (``style``: colours and edge width)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], marker=marker, ls="", markersize=size, label=label, **style)


def _indices(topology: Topology, ees: Sequence[int]) -> list[int]:
    return [topology.ees.index(e) for e in ees]


def _symlog(G: np.ndarray, decades: float = 10.0):
    """Symmetric-log colour scale of ``G``: linear only under its smallest nonzero magnitude."""
    from matplotlib.colors import SymLogNorm

    magnitudes = np.abs(G[G != 0])
    vmax = float(magnitudes.max()) if magnitudes.size else 1.0
    floor = vmax * 10.0**-decades
    linthresh = max(float(magnitudes[magnitudes > floor].min(initial=vmax)), floor)
    return SymLogNorm(linthresh=linthresh, vmin=-vmax, vmax=vmax)


def _symlog_ticks(norm, per_side: int = 4) -> list[float]:
    """0 and at most ``per_side`` powers of ten on each side, from a decade above the linear
    band (whose label would sit on 0's) to the top."""
    low, high = np.ceil(np.log10(norm.linthresh)) + 1, np.floor(np.log10(norm.vmax))
    step = max(1, int(np.ceil((high - low + 1) / per_side)))
    powers = [10.0**k for k in np.arange(high, low - 1, -step)]
    return sorted([-p for p in powers] + [0.0] + powers)


@_drawing
def draw_delassus(
    G: np.ndarray,
    topology: Topology,
    *,
    constraint_names: Sequence[str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Heatmap of ``G`` with its constraint blocks outlined and named on both axes.

    The colour scale is symmetric-logarithmic around 0 (``G`` mixes 1/kg linear entries with
    larger angular ones, and weak couplings between far contacts with strong ones): logarithmic
    down to the smallest nonzero entry (at most ten decades below the largest), linear under it.
    """
    G = np.asarray(G, dtype=float)
    if G.shape != (topology.m, topology.m):
        raise ValueError(f"G has shape {G.shape}, the topology has m = {topology.m}")
    ax = _new_axes(ax, (7.5, 6.2))
    image = ax.imshow(G, cmap="RdBu_r", norm=_symlog(G), interpolation="nearest")
    colourbar = ax.figure.colorbar(image, ax=ax, shrink=0.85, ticks=_symlog_ticks(image.norm))
    colourbar.set_label("entry of G (SI units; symmetric-log colour scale)")
    # one block per constraint of the list: G's rows (a two-body constraint sweeps two EEs)
    dims = [s.dim for s in topology.signature]
    offsets = np.cumsum([0, *dims[:-1]])
    for start in offsets[1:]:
        ax.axhline(start - 0.5, color="black", lw=0.9)
        ax.axvline(start - 0.5, color="black", lw=0.9)
    centres = [o + d / 2 - 0.5 for o, d in zip(offsets, dims, strict=True)]
    names = constraint_names or [f"constraint {k}" for k in range(len(dims))]
    tick = [f"{k}: {n} ({d}D)" for k, (n, d) in enumerate(zip(names, dims, strict=True))]
    ax.set_xticks(centres, tick, rotation=90, fontsize=7)
    ax.set_yticks(centres, tick, fontsize=7)
    ax.set_xlabel("constraint block (column: force applied)")
    ax.set_ylabel("constraint block (row: acceleration produced)")
    if title:
        ax.set_title(title)
    return ax


@_drawing
def draw_eigenvalues(
    eigenvalues: Mapping[str, np.ndarray],
    *,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Sorted ``|λ|`` of each symmetric matrix's eigenvalues on a log axis, largest first.

    Negative eigenvalues (round-off of a singular matrix) are hollow markers.  Each series gets
    a dotted line at its numerical rank threshold ``max|λ| · m · eps`` (numpy's ``matrix_rank``
    rule): eigenvalues below it are zeros in floating point.
    """
    ax = _new_axes(ax, (7.5, 4.5))
    for k, (name, values) in enumerate(eigenvalues.items()):
        values = np.asarray(values, dtype=float)
        values = values[np.argsort(-np.abs(values), kind="stable")]
        index = np.arange(1, values.size + 1)
        colour = f"C{k}"
        mags = np.maximum(np.abs(values), np.finfo(float).tiny)
        tol = float(np.max(mags)) * values.size * np.finfo(float).eps
        rank = int(np.sum(mags > tol))
        ax.plot(index, mags, color=colour, lw=0.8, alpha=0.6)
        pos = values >= 0
        ax.scatter(index[pos], mags[pos], color=colour, label=f"{name} (rank {rank}/{values.size})")
        if (~pos).any():
            ax.scatter(
                index[~pos],
                mags[~pos],
                facecolors="none",
                edgecolors=colour,
                label=f"{name}: negative (round-off)",
            )
        ax.axhline(tol, color=colour, ls=":", lw=1.2, label=f"{name}: rank threshold")
    ax.set_yscale("log")
    ax.set_xlabel("eigenvalue index (sorted by magnitude)")
    ax.set_ylabel("|eigenvalue of G|")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return ax


@_drawing
def draw_bars(
    values: Mapping[str, Mapping[str, float]],
    *,
    ylabel: str,
    log: bool = False,
    ax: Axes | None = None,
    title: str | None = None,
    annotate: bool = True,
    fmt: str = "{:.3g}",
    hatched: Sequence[str] = (),
) -> Axes:
    """Grouped bar chart: one group per key of ``values``, one bar per inner key (series).

    Series keep one colour across groups, in order of first appearance; a series missing from
    a group (e.g. a method that refused the case) leaves a gap.  ``annotate`` writes each value
    above its bar with the format string ``fmt`` (e.g. ``"{:,.0f}"`` for counts; a linear axis
    then has thousands separators too).  The series in ``hatched`` (e.g. PV-OSIMh, not one of
    the paper's algorithms) are hatched.
    """
    groups = list(values)
    series: list[str] = []
    for g in groups:
        series += [s for s in values[g] if s not in series]
    ax = _new_axes(ax, (max(6.0, 1.2 + 0.5 * len(groups) * len(series)), 4.8))
    width = 0.8 / max(len(series), 1)
    for k, s in enumerate(series):
        xs = [
            j + (k - (len(series) - 1) / 2) * width for j, g in enumerate(groups) if s in values[g]
        ]
        ys = [float(values[g][s]) for g in groups if s in values[g]]
        bars = ax.bar(xs, ys, width=width * 0.95, color=color(s, k), label=s)
        if s in hatched:
            for patch in bars:
                patch.set(hatch="///", edgecolor="white")
        if annotate:
            ax.bar_label(
                bars, labels=[fmt.format(y) for y in ys], fontsize=7, rotation=90, padding=2
            )
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    elif "," in fmt:
        from matplotlib.ticker import StrMethodFormatter

        ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    ax.margins(y=0.25 if not log else 0.1)
    if log:
        low, high = ax.get_ylim()
        ax.set_ylim(low, high * 4)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8, ncols=min(len(series), 4))
    if title:
        ax.set_title(title)
    return ax


@_drawing
def draw_hbars(
    values: Mapping[str, float],
    *,
    xlabel: str,
    category: Mapping[str, str] | None = None,
    colors: Mapping[str, str] | None = None,
    log: bool = False,
    ax: Axes | None = None,
    title: str | None = None,
    fmt: str = "{:.3g}",
) -> Axes:
    """Horizontal bar chart, one bar per key of ``values`` (first key on top).

    ``category`` maps a key to a group name (e.g. "numpy" or "C++"): bars of one group share a
    colour and the legend lists the groups.  ``colors`` gives each key its own colour instead
    (e.g. :func:`color` of the algorithm it times, so that it matches every other figure); the
    keys then name the bars and no legend is drawn.  Each bar is labelled with ``fmt``.
    """
    keys = list(values)
    groups = list(dict.fromkeys((category or {}).get(k, "") for k in keys))
    colour = {g: f"C{j}" for j, g in enumerate(groups)}
    ax = _new_axes(ax, (8.0, 1.2 + 0.42 * len(keys)))
    for g in groups:
        idx = [j for j, k in enumerate(keys) if (category or {}).get(k, "") == g]
        fill = [(colors or {}).get(keys[j], colour[g]) for j in idx]
        bars = ax.barh(idx, [float(values[keys[j]]) for j in idx], color=fill, label=g or None)
        ax.bar_label(bars, labels=[fmt.format(values[keys[j]]) for j in idx], fontsize=8, padding=3)
    ax.set_yticks(range(len(keys)), keys)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    if log:
        ax.set_xscale("log")
        low, high = ax.get_xlim()
        ax.set_xlim(low, high * 3)
    else:
        ax.margins(x=0.15)
    ax.grid(True, axis="x", which="major", alpha=0.3)
    if any(groups) and colors is None:
        ax.legend(fontsize=8, loc="lower right")
    if title:
        ax.set_title(title)
    return ax
