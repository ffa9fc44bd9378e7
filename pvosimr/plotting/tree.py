"""The kinematic tree with its constraint structure: :func:`tree_layout` (pure Python) and
:func:`draw_kinematic_tree` (links, end effectors, the branching links ``N`` and, by colour,
the set ``ES(i)`` of EEs each link supports)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..topology import Topology
from .style import COLORS, Position, drawing, new_axes

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.axes import Axes

__all__ = [
    "BRANCHING_LABEL",
    "CONSTRAINED_LABEL",
    "EE_LABEL",
    "TreeDrawing",
    "draw_kinematic_tree",
    "set_label",
    "tree_layout",
]


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


def _palette(count: int) -> list[tuple[float, ...]]:
    """``count`` colours from tab20, tab20b and tab20c without the greyish shades and the hues
    of :data:`RESERVED_HUES`, most different first (:func:`_spread`); they repeat past the 18
    that remain.  Grey is reserved for "no constraint"."""
    import colorsys

    from matplotlib import colormaps
    from matplotlib.colors import to_rgb

    shades = [list(colormaps[n].colors) for n in ("tab20", "tab20b", "tab20c")]
    ordered = [c for table in shades for c in table[0::2]] + [
        c for table in shades for c in table[1::2]
    ]
    reserved = [_hue(to_rgb(COLORS[a])) for a in RESERVED_HUES]

    def kept(c) -> bool:  # saturated (no grey, no white), 45° of hue from every reserved one
        gaps = [abs(_hue(c) - h) for h in reserved]
        return colorsys.rgb_to_hsv(*c[:3])[1] >= 0.2 and all(min(g, 360 - g) >= 45 for g in gaps)

    colours = _spread([c for c in ordered if kept(c)])
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


@drawing
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
    size = (min(4.0 + 0.95 * width, 18.0), min(1.5 + 0.42 * height, 14.0))
    ax = new_axes(ax, size, title)
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
        Patch(color=c, label=f"supports {set_label([ees.index(e) for e in s])}")
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
    return TreeDrawing(ax, pos, branching, ees, es_colour, node_colour)


def _legend_marker(marker: str, size: float, label: str, **style: Any) -> Any:
    """A legend entry that is one marker, no line (``style``: colours and edge width)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], marker=marker, ls="", markersize=size, label=label, **style)
