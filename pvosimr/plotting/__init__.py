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

from .charts import draw_bars, draw_delassus, draw_eigenvalues, draw_hbars
from .style import COLORS, LABELS, MARKERS, color, pyplot
from .tree import (
    BRANCHING_LABEL,
    CONSTRAINED_LABEL,
    EE_LABEL,
    TreeDrawing,
    draw_kinematic_tree,
    set_label,
    tree_layout,
)

__all__ = [
    "BRANCHING_LABEL",
    "COLORS",
    "CONSTRAINED_LABEL",
    "EE_LABEL",
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
