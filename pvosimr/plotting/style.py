"""The palette shared by every figure (:data:`COLORS`, :data:`LABELS`, :data:`MARKERS`,
:func:`color`), the one matplotlib import (:func:`pyplot`) and what every drawing function
does first (:func:`drawing`, :func:`new_axes`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..extras import require

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.axes import Axes

__all__ = ["COLORS", "LABELS", "MARKERS", "Position", "color", "drawing", "new_axes", "pyplot"]

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


def drawing(draw: Callable) -> Callable:
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


def new_axes(ax: Axes | None, size: tuple[float, float], title: str | None = None) -> Axes:
    """``ax``, or the Axes of a new figure of ``size`` inches (constrained layout), with
    ``title`` where one is given."""
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=size, layout="constrained")
    if title:
        ax.set_title(title)
    return ax
